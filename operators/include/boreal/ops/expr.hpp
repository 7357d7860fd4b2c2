// Expr: the small infix expression language of filter predicates and map fields.
//
//   Expr e = Expr::compile("price * 1.1 > 100 and sym == \"IBM\"", schema).value();  // plan time
//   bool keep = e.eval_bool(row);                                                  // per tuple
//
// Grammar, loosest binding first (binary operators associate to the left):
//   or                    a or b
//   and                   a and b
//   not                   not a
//   comparison            == != < <= > >=,  x between lo and hi,  x not between lo and hi
//   additive              + -
//   multiplicative        * / %
//   unary minus           -a
//   operand               field name, 42, 1.5, 2e3, true, false, "text" (\" and \\ escapes),
//                         ( expression ), function call: abs(x) min(a, b) max(a, b) int(x)
//                         float(x)
//
// Words. The keywords and, or, not, between, true, false and the function names are
// case-insensitive (`AND`, `Not`, `TRUE`, `ABS(x)`); field names are case-sensitive. The
// keywords are reserved: a field named like one (in any case) cannot be referred to. A
// function name is one only before '(', so a field may be called `abs` or `min`.
//
// between. `x between lo and hi` is lo <= x and x <= hi, both ends inclusive (SQL's); the
// bounds are additive expressions (so the `and` is the between's, and `x between 1 and 5 and
// flag` is (x between 1 and 5) and flag). `x not between lo and hi` is not (x between lo and
// hi). All three are numbers; if any is a float, all are compared as floats. lo > hi is
// never true (nothing is swapped); a NaN anywhere makes between false (not between true).
//
// Functions.
//   abs(x)     integer -> integer (abs of INT64_MIN wraps to INT64_MIN), float -> float
//              (fabs: abs(-0.0) is 0.0).
//   min(a, b), max(a, b)
//              two integers -> integer; otherwise the integer side is promoted and the result
//              is a float. Equal values (-0.0 and 0.0 too) give a. On floats a NaN side is
//              ignored: min(NaN, 1.0) == min(1.0, NaN) == 1.0; both NaN gives NaN.
//   int(x)     float -> integer truncating toward zero (int(2.9) == 2, int(-2.9) == -2);
//              NaN -> 0; x >= 2^63 (and +inf) -> INT64_MAX; x < -2^63 (and -inf) -> INT64_MIN.
//              An integer is unchanged; a bool gives 0 or 1.
//   float(x)   integer -> the nearest double (exact up to 2^53); a bool gives 0.0 or 1.0; a
//              float is unchanged.
//
// Types. A field's type decides its kind: i32, i64 and timestamp are `integer` (int64), f64 is
// `floating` (double), bool is `boolean`, strN is `string`. Arithmetic needs numbers; an
// integer meeting a float is promoted to float. Comparisons need two numbers, two booleans
// or two strings; booleans and strings have only == and != (strings compare as FieldRef's
// get() reads them, trailing NULs dropped). and/or/not need booleans.
//
// Arithmetic is defined for every input, so nothing traps:
//   integers wrap on overflow (two's complement); x / 0 == 0 and x % 0 == 0;
//   INT64_MIN / -1 == INT64_MIN and INT64_MIN % -1 == 0; % keeps the sign of the dividend;
//   floats follow IEEE 754 (x / 0.0 is ±inf or NaN), % on floats is std::fmod.
// and/or evaluate both sides (no side effects exist, so only speed could tell).
//
// Errors carry where = "expression col N" (1-based byte column of the offending token) and a
// message saying what was expected: "expected a value after '+', got ')'",
// "unknown field 'pric' (fields: price, sym)", "'and' needs booleans, got i64". A word,
// number or string right after a value is reported at itself ("auction mod 7": col 9,
// "expected an operator after 'auction', got 'mod' (the remainder is '%')").
//
// Evaluation. compile() parses, type-checks and binds field names to byte offsets once, into a
// flat register program. The per-row eval_*() are const, allocate nothing, look up no names
// and may run on any number of threads at once. The batch evaluators (eval_*_batch) run each
// instruction over up to kChunkRows rows at a time in a scratch area the Expr allocated at
// compile time: they are the fast path of boxes, allocate nothing, and — since they write
// the scratch — one thread at a time per Expr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

enum class ValueKind : std::uint8_t { integer, floating, boolean, string };

// "integer", "float", "bool", "string".
[[nodiscard]] std::string_view kind_name(ValueKind kind) noexcept;

class Expr {
 public:
  // Rows per batch-evaluation step; the out arrays of eval_*_batch hold at least `count`.
  static constexpr std::size_t kChunkRows = 256;
  // Deepest nesting of operands an expression may have (each pending operand takes one
  // register of kChunkRows values).
  static constexpr std::size_t kMaxRegisters = 32;

  struct Instr;  // one step of the program (private layout, in expr.cpp)
  struct StrOperand {  // a string field (offset, width) or literal (index into literals)
    bool is_field = false;
    std::uint32_t offset = 0;  // field: byte offset; literal: index
    std::uint32_t width = 0;   // field: N of strN; literal: byte length
  };

  static Result<Expr> compile(std::string_view text, const Schema& schema);

  Expr(const Expr&);
  Expr& operator=(const Expr&);
  Expr(Expr&&) noexcept;
  Expr& operator=(Expr&&) noexcept;
  ~Expr();

  [[nodiscard]] ValueKind kind() const noexcept { return kind_; }
  // Only for kind() == string: the most bytes a result can have (the field's N, or the
  // literal's length).
  [[nodiscard]] std::uint32_t string_width() const noexcept { return root_str_.width; }
  // The source text, as compiled.
  [[nodiscard]] const std::string& text() const noexcept { return text_; }

  // Each requires the matching kind() (asserted), except eval_float, which also takes an
  // integer expression and converts it. `row` has the schema given to compile().
  [[nodiscard]] bool eval_bool(Row row) const noexcept;
  [[nodiscard]] std::int64_t eval_int(Row row) const noexcept;
  [[nodiscard]] double eval_float(Row row) const noexcept;
  // Points into the row (a string field) or into this Expr (a literal).
  [[nodiscard]] std::string_view eval_str(Row row) const noexcept;

  // Rows [first, first + count) of `rows`, count <= kChunkRows, into out[0..count).
  // Same kind rules as the per-row forms; string expressions have no batch form.
  void eval_bool_batch(const BatchView& rows, std::size_t first, std::size_t count,
                       bool* out) noexcept;
  void eval_int_batch(const BatchView& rows, std::size_t first, std::size_t count,
                      std::int64_t* out) noexcept;
  void eval_float_batch(const BatchView& rows, std::size_t first, std::size_t count,
                        double* out) noexcept;

 private:
  Expr();
  union Value {
    std::int64_t i;
    double f;
  };
  // Runs the program over `count` rows starting at `base`, `stride` bytes apart, with
  // register r of row i at regs[r * reg_stride + i]. The result is register 0.
  void run(const std::byte* base, std::size_t stride, std::size_t count, Value* regs,
           std::size_t reg_stride) const noexcept;
  [[nodiscard]] std::string_view str_of(const StrOperand& operand, const std::byte* row) const
      noexcept;
  const Value* run_chunk(const BatchView& rows, std::size_t first, std::size_t count) noexcept;

  friend class ExprCompiler;

  std::string text_;
  ValueKind kind_ = ValueKind::boolean;
  std::vector<Instr> program_;
  std::vector<std::string> literals_;
  StrOperand root_str_;         // kind_ == string: the whole expression
  std::size_t registers_ = 1;   // registers the program uses
  std::vector<Value> scratch_;  // registers_ * kChunkRows, for the batch evaluators
};

}  // namespace boreal::ops
