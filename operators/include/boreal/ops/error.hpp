// Recoverable errors of the operator library (docs/design.md, convention 5).
//
// A recoverable failure (a bad schema text, an unknown field name, an ill-typed expression)
// is an Error carried in a Result<T>; a programmer error (a row index out of range) is an
// assertion. A programmer error that would silently write past a buffer or emit wrong rows,
// and that a check per batch rather than per tuple catches (an append to a full batch, a
// batch of another schema pushed into a box, an input finished twice), is checked in every
// build type: the process prints what is wrong and aborts. Nothing in boreal::ops throws.
//
// Validation that can find several problems at once (a box's validate()) returns
// std::vector<Error> — empty means valid — so the user sees every problem in one run.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <boost/outcome/result.hpp>
#include <boost/outcome/success_failure.hpp>

namespace boreal::ops {

struct Error {
  std::string message;  // what is wrong, quoting the offending value: "unknown type 'i33' ..."
  std::string where;    // where it is: "fields[2]", "schemas.tick.fields[2]", "expression col 7";
                        // empty when the message alone says it

  // "<where>: <message>", or just the message when `where` is empty.
  [[nodiscard]] std::string describe() const;

  // Puts an outer location in front of `where`, so each layer adds only what it knows:
  // Error{"...", "fields[2]"}.within("schemas.tick") has where "schemas.tick.fields[2]";
  // a `where` that starts with '[' is appended without a dot. Returns *this.
  Error& within(std::string_view outer);

  friend bool operator==(const Error&, const Error&) = default;
};

// Every error's describe(), one per line (no trailing newline).
[[nodiscard]] std::string describe(std::span<const Error> errors);

// tl::expected is not packaged in Debian 12, so boreal uses Boost.Outcome's result, which is.
// The `terminate` policy turns a wrong access (value() of an error) into std::terminate: a
// programmer error, never an exception.
template <class T>
using Result = boost::outcome_v2::basic_result<T, Error, boost::outcome_v2::policy::terminate>;

using boost::outcome_v2::success;

// The failure value of any Result<T>: `return fail("field name is empty", "fields[0]");`.
inline auto fail(std::string message, std::string where = {}) {
  return boost::outcome_v2::failure(Error{std::move(message), std::move(where)});
}

}  // namespace boreal::ops
