#include <boreal/ops/split.hpp>

#include <cassert>
#include <string>
#include <utility>

namespace boreal::ops {

std::vector<Error> SplitParams::validate(const Schema& input) const {
  std::vector<Error> errors;
  if (key_fields.empty()) {
    errors.push_back({"at least one key field is needed", "params.key_fields"});
  }
  for (std::size_t i = 0; i < key_fields.size(); ++i) {
    const std::string where = "params.key_fields[" + std::to_string(i) + "]";
    if (!input.index_of(key_fields[i])) {
      errors.push_back(
          {"no field '" + key_fields[i] + "' in schema " + input.to_string(), where});
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (key_fields[j] == key_fields[i]) {
        errors.push_back({"field '" + key_fields[i] + "' is already key_fields[" +
                              std::to_string(j) + "]",
                          where});
        break;
      }
    }
  }
  if (outputs < 1 || outputs > kMaxSplitOutputs) {
    errors.push_back({"outputs must be between 1 and " + std::to_string(kMaxSplitOutputs) +
                          ", got " + std::to_string(outputs),
                      "params.outputs"});
  }
  return errors;
}

Result<std::unique_ptr<SplitBox>> SplitBox::make(const SplitParams& params,
                                                 const Schema& input) {
  if (std::vector<Error> errors = params.validate(input); !errors.empty()) {
    return fail(describe(errors));
  }
  std::vector<KeySpan> keys;
  keys.reserve(params.key_fields.size());
  for (const std::string& name : params.key_fields) {
    const Field& field = input.field(*input.index_of(name));
    keys.push_back({field.offset, field.width});
  }
  return std::unique_ptr<SplitBox>(new SplitBox(input, std::move(keys), params.outputs));
}

SplitBox::SplitBox(const Schema& input, std::vector<KeySpan> keys, std::uint32_t outputs)
    : input_(input), keys_(std::move(keys)), outputs_count_(outputs) {
  outputs_.reserve(outputs);
  for (std::uint32_t i = 0; i < outputs; ++i) outputs_.emplace_back(input);
}

const Schema& SplitBox::input_schema(std::size_t port) const noexcept {
  assert(port == 0);
  (void)port;
  return input_;
}

std::size_t SplitBox::route(Row row) const noexcept {
  // fnv1a_64 over the concatenated key bytes, folded field by field without a copy.
  std::uint64_t hash = 14695981039346656037ull;
  for (const KeySpan& key : keys_) {
    const auto* at = reinterpret_cast<const unsigned char*>(row.data() + key.offset);
    for (std::uint32_t i = 0; i < key.width; ++i) {
      hash ^= at[i];
      hash *= 1099511628211ull;
    }
  }
  return static_cast<std::size_t>(hash % outputs_count_);
}

void SplitBox::on_batch(std::size_t port, const BatchView& batch) {
  assert(port == 0);
  (void)port;
  for (Row row : batch) outputs_[route(row)].append_copy(row);
}

}  // namespace boreal::ops
