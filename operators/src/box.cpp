#include <boreal/ops/box.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace boreal::ops {

void Box::finish(std::size_t port) {
  if (port >= input_count() || finished(port)) [[unlikely]] {
    misuse("finish", port, nullptr);
  }
  if (finished_.size() < input_count()) finished_.resize(input_count(), false);
  finished_[port] = true;
  if (++finished_inputs_ == input_count()) {
    on_end();
    for (auto& out : outputs_) out.end();
  }
}

void Box::finish_restored() {
  finished_.assign(input_count(), true);
  finished_inputs_ = input_count();
  for (auto& out : outputs_) out.end();
}

void Box::misuse(const char* call, std::size_t port, const BatchView* batch) const noexcept {
  const std::string box(type());
  std::string what;
  if (port >= input_count()) {
    what = "there is no input " + std::to_string(port) + " (the box has " +
           std::to_string(input_count()) + ")";
  } else if (finished(port)) {
    what = "input " + std::to_string(port) + " has already finished";
  } else if (batch != nullptr) {
    what = "the batch was made with another schema (" + std::to_string(batch->tuple_bytes()) +
           "-byte rows) than input " + std::to_string(port) + " takes: '" +
           input_schema(port).to_string() + "' (" +
           std::to_string(input_schema(port).tuple_bytes()) + "-byte rows)";
  }
  std::fprintf(stderr, "boreal: %s box: %s(%zu): %s\n", box.c_str(), call, port, what.c_str());
  std::abort();
}

}  // namespace boreal::ops
