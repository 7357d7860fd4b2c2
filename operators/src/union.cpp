#include <boreal/ops/union.hpp>

#include <cassert>
#include <string>
#include <utility>

namespace boreal::ops {

std::vector<Error> UnionParams::validate(std::span<const Schema> inputs) const {
  std::vector<Error> errors;
  if (inputs.size() < 2) {
    errors.push_back({"union needs at least 2 inputs, got " + std::to_string(inputs.size()),
                      "inputs"});
  }
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    if (!(inputs[i] == inputs[0])) {
      errors.push_back({"schema " + inputs[i].to_string() + " differs from input 0's " +
                            inputs[0].to_string(),
                        "inputs[" + std::to_string(i) + "]"});
    }
  }
  return errors;
}

Result<std::unique_ptr<UnionBox>> UnionBox::make(const UnionParams& params,
                                                 std::span<const Schema> inputs) {
  if (std::vector<Error> errors = params.validate(inputs); !errors.empty()) {
    return fail(describe(errors));
  }
  return std::unique_ptr<UnionBox>(new UnionBox(inputs[0], inputs.size()));
}

UnionBox::UnionBox(const Schema& schema, std::size_t inputs) : inputs_(inputs) {
  outputs_.emplace_back(schema);
}

const Schema& UnionBox::input_schema(std::size_t port) const noexcept {
  assert(port < inputs_);
  (void)port;
  return outputs_[0].schema();  // every input has the output's schema
}

void UnionBox::on_batch(std::size_t port, const BatchView& batch) {
  assert(port < inputs_);
  (void)port;
  Output& out = outputs_[0];
  for (Row row : batch) out.append_copy(row);
}

}  // namespace boreal::ops
