#include <boreal/ops/error.hpp>

namespace boreal::ops {

std::string Error::describe() const {
  if (where.empty()) return message;
  std::string out;
  out.reserve(where.size() + 2 + message.size());
  out.append(where).append(": ").append(message);
  return out;
}

Error& Error::within(std::string_view outer) {
  if (outer.empty()) return *this;
  if (where.empty()) {
    where = outer;
  } else if (where.front() == '[') {
    where.insert(0, outer);
  } else {
    where.insert(0, 1, '.');
    where.insert(0, outer);
  }
  return *this;
}

std::string describe(std::span<const Error> errors) {
  std::string out;
  for (const Error& error : errors) {
    if (!out.empty()) out.push_back('\n');
    out.append(error.describe());
  }
  return out;
}

}  // namespace boreal::ops
