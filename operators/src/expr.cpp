// Expr: compiler (tokenizer + recursive-descent parser that type-checks and emits register
// code as it goes, with no syntax tree) and the register-program interpreter.
//
// Register allocation is by nesting depth: an operator whose result goes to register r
// evaluates its left operand into r and its right operand into r + 1, so the program is a
// stack machine whose slots are known at compile time. String operands emit no code: they
// are only fields or literals, and ==/!= on them compiles to one instruction naming both.
#include <boreal/ops/expr.hpp>

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

namespace boreal::ops {

std::string_view kind_name(ValueKind kind) noexcept {
  switch (kind) {
    case ValueKind::integer: return "integer";
    case ValueKind::floating: return "float";
    case ValueKind::boolean: return "bool";
    case ValueKind::string: return "string";
  }
  return "?";
}

enum class Op : std::uint8_t {
  load_i32, load_i64, load_f64, load_bool, const_i, const_f, i2f,
  neg_i, add_i, sub_i, mul_i, div_i, mod_i,
  neg_f, add_f, sub_f, mul_f, div_f, mod_f,
  eq_i, ne_i, lt_i, le_i, gt_i, ge_i,
  eq_f, ne_f, lt_f, le_f, gt_f, ge_f,
  and_b, or_b, not_b, str_eq, str_ne,
  f2i, abs_i, abs_f, min_i, max_i, min_f, max_f,
  between_i, between_f,  // dst = lo <= dst <= hi, lo in dst + 1, hi in dst + 2
};

struct Expr::Instr {
  Op op;
  std::uint8_t dst = 0;  // result register; unary ops read it too
  std::uint8_t rhs = 0;  // second operand register (always dst + 1 for binary ops; between
                         // also reads dst + 2)
  std::uint32_t offset = 0;  // loads: byte offset of the field
  std::int64_t imm_i = 0;
  double imm_f = 0;
  StrOperand sa, sb;  // str_eq / str_ne
};

Expr::Expr() = default;
Expr::Expr(const Expr&) = default;
Expr& Expr::operator=(const Expr&) = default;
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;
Expr::~Expr() = default;

namespace {

// Integer arithmetic on the uint64 bit patterns: wraps instead of overflowing (no UB).
std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
std::int64_t safe_div(std::int64_t a, std::int64_t b) noexcept {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 wraps to INT64_MIN
  return a / b;
}
std::int64_t safe_mod(std::int64_t a, std::int64_t b) noexcept {
  if (b == 0 || b == -1) return 0;
  return a % b;
}

// int(x) of a float: truncates toward zero; NaN gives 0 and values outside int64 saturate
// (static_cast alone is UB there). 2^63 is exact as a double, so the bounds are exact too.
std::int64_t float_to_int(double x) noexcept {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isnan(x)) return 0;
  if (x >= kTwo63) return std::numeric_limits<std::int64_t>::max();
  if (x < -kTwo63) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(x);
}

// min/max of floats: a NaN side is ignored (the result is NaN only when both are); equal
// values, -0.0 and 0.0 included, give the first argument.
double min_float(double a, double b) noexcept {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return b < a ? b : a;
}
double max_float(double a, double b) noexcept {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a < b ? b : a;
}

}  // namespace

std::string_view Expr::str_of(const StrOperand& operand, const std::byte* row) const noexcept {
  if (!operand.is_field) return literals_[operand.offset];
  const char* at = reinterpret_cast<const char*>(row + operand.offset);
  std::size_t size = operand.width;
  while (size > 0 && at[size - 1] == '\0') --size;
  return {at, size};
}

void Expr::run(const std::byte* base, std::size_t stride, std::size_t count, Value* regs,
               std::size_t reg_stride) const noexcept {
  for (const Instr& in : program_) {
    Value* d = regs + in.dst * reg_stride;
    const Value* b = regs + in.rhs * reg_stride;
    const std::byte* at = base + in.offset;
    switch (in.op) {
      case Op::load_i32:
        for (std::size_t i = 0; i < count; ++i) {
          std::int32_t v;
          std::memcpy(&v, at + i * stride, sizeof v);
          d[i].i = v;
        }
        break;
      case Op::load_i64:
        for (std::size_t i = 0; i < count; ++i) std::memcpy(&d[i].i, at + i * stride, 8);
        break;
      case Op::load_f64:
        for (std::size_t i = 0; i < count; ++i) std::memcpy(&d[i].f, at + i * stride, 8);
        break;
      case Op::load_bool:
        for (std::size_t i = 0; i < count; ++i) d[i].i = at[i * stride] != std::byte{0};
        break;
      case Op::const_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = in.imm_i;
        break;
      case Op::const_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = in.imm_f;
        break;
      case Op::i2f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = static_cast<double>(d[i].i);
        break;
      case Op::neg_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = wrap_sub(0, d[i].i);
        break;
      case Op::add_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = wrap_add(d[i].i, b[i].i);
        break;
      case Op::sub_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = wrap_sub(d[i].i, b[i].i);
        break;
      case Op::mul_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = wrap_mul(d[i].i, b[i].i);
        break;
      case Op::div_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = safe_div(d[i].i, b[i].i);
        break;
      case Op::mod_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = safe_mod(d[i].i, b[i].i);
        break;
      case Op::neg_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = -d[i].f;
        break;
      case Op::add_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = d[i].f + b[i].f;
        break;
      case Op::sub_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = d[i].f - b[i].f;
        break;
      case Op::mul_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = d[i].f * b[i].f;
        break;
      case Op::div_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = d[i].f / b[i].f;
        break;
      case Op::mod_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = std::fmod(d[i].f, b[i].f);
        break;
#define BOREAL_EXPR_CMP(name, field, op)                                     \
  case Op::name:                                                             \
    for (std::size_t i = 0; i < count; ++i) d[i].i = d[i].field op b[i].field; \
    break;
        BOREAL_EXPR_CMP(eq_i, i, ==)
        BOREAL_EXPR_CMP(ne_i, i, !=)
        BOREAL_EXPR_CMP(lt_i, i, <)
        BOREAL_EXPR_CMP(le_i, i, <=)
        BOREAL_EXPR_CMP(gt_i, i, >)
        BOREAL_EXPR_CMP(ge_i, i, >=)
        BOREAL_EXPR_CMP(eq_f, f, ==)
        BOREAL_EXPR_CMP(ne_f, f, !=)
        BOREAL_EXPR_CMP(lt_f, f, <)
        BOREAL_EXPR_CMP(le_f, f, <=)
        BOREAL_EXPR_CMP(gt_f, f, >)
        BOREAL_EXPR_CMP(ge_f, f, >=)
#undef BOREAL_EXPR_CMP
      case Op::and_b:
        for (std::size_t i = 0; i < count; ++i) d[i].i = d[i].i & b[i].i;
        break;
      case Op::or_b:
        for (std::size_t i = 0; i < count; ++i) d[i].i = d[i].i | b[i].i;
        break;
      case Op::not_b:
        for (std::size_t i = 0; i < count; ++i) d[i].i = d[i].i ^ 1;
        break;
      case Op::f2i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = float_to_int(d[i].f);
        break;
      case Op::abs_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = d[i].i < 0 ? wrap_sub(0, d[i].i) : d[i].i;
        break;
      case Op::abs_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = std::fabs(d[i].f);
        break;
      case Op::min_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = b[i].i < d[i].i ? b[i].i : d[i].i;
        break;
      case Op::max_i:
        for (std::size_t i = 0; i < count; ++i) d[i].i = d[i].i < b[i].i ? b[i].i : d[i].i;
        break;
      case Op::min_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = min_float(d[i].f, b[i].f);
        break;
      case Op::max_f:
        for (std::size_t i = 0; i < count; ++i) d[i].f = max_float(d[i].f, b[i].f);
        break;
      case Op::between_i: {
        const Value* hi = b + reg_stride;
        for (std::size_t i = 0; i < count; ++i) d[i].i = b[i].i <= d[i].i && d[i].i <= hi[i].i;
        break;
      }
      case Op::between_f: {
        const Value* hi = b + reg_stride;
        for (std::size_t i = 0; i < count; ++i) d[i].i = b[i].f <= d[i].f && d[i].f <= hi[i].f;
        break;
      }
      case Op::str_eq:
      case Op::str_ne: {
        const std::int64_t want = in.op == Op::str_eq ? 1 : 0;
        for (std::size_t i = 0; i < count; ++i) {
          const std::byte* row = base + i * stride;
          d[i].i = (str_of(in.sa, row) == str_of(in.sb, row)) ? want : 1 - want;
        }
        break;
      }
    }
  }
}

bool Expr::eval_bool(Row row) const noexcept {
  assert(kind_ == ValueKind::boolean);
  Value regs[kMaxRegisters];
  run(row.data(), 0, 1, regs, 1);
  return regs[0].i != 0;
}

std::int64_t Expr::eval_int(Row row) const noexcept {
  assert(kind_ == ValueKind::integer);
  Value regs[kMaxRegisters];
  run(row.data(), 0, 1, regs, 1);
  return regs[0].i;
}

double Expr::eval_float(Row row) const noexcept {
  assert(kind_ == ValueKind::floating || kind_ == ValueKind::integer);
  Value regs[kMaxRegisters];
  run(row.data(), 0, 1, regs, 1);
  return kind_ == ValueKind::integer ? static_cast<double>(regs[0].i) : regs[0].f;
}

std::string_view Expr::eval_str(Row row) const noexcept {
  assert(kind_ == ValueKind::string);
  return str_of(root_str_, row.data());
}

const Expr::Value* Expr::run_chunk(const BatchView& rows, std::size_t first,
                                   std::size_t count) noexcept {
  assert(count <= kChunkRows && first + count <= rows.size());
  if (count == 0) return scratch_.data();
  run(rows.row(first).data(), rows.tuple_bytes(), count, scratch_.data(), kChunkRows);
  return scratch_.data();
}

void Expr::eval_bool_batch(const BatchView& rows, std::size_t first, std::size_t count,
                           bool* out) noexcept {
  assert(kind_ == ValueKind::boolean);
  const Value* r = run_chunk(rows, first, count);
  for (std::size_t i = 0; i < count; ++i) out[i] = r[i].i != 0;
}

void Expr::eval_int_batch(const BatchView& rows, std::size_t first, std::size_t count,
                          std::int64_t* out) noexcept {
  assert(kind_ == ValueKind::integer);
  const Value* r = run_chunk(rows, first, count);
  for (std::size_t i = 0; i < count; ++i) out[i] = r[i].i;
}

void Expr::eval_float_batch(const BatchView& rows, std::size_t first, std::size_t count,
                            double* out) noexcept {
  assert(kind_ == ValueKind::floating || kind_ == ValueKind::integer);
  const Value* r = run_chunk(rows, first, count);
  if (kind_ == ValueKind::integer) {
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<double>(r[i].i);
  } else {
    for (std::size_t i = 0; i < count; ++i) out[i] = r[i].f;
  }
}

// ---- compiler -------------------------------------------------------------------------------

namespace {

enum class Tok : std::uint8_t { end, integer, floating, string, ident, symbol };

struct Token {
  Tok kind = Tok::end;
  std::string_view text;  // as written (a string literal: with its quotes)
  std::size_t col = 0;    // 1-based
};

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool ident_char(char c) { return ident_start(c) || digit(c); }

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// Keywords and function names are case-insensitive (SQL's habit: `AND`, `Between`, `ABS`);
// `word` is given in lower case.
bool same_word(std::string_view text, std::string_view word) {
  if (text.size() != word.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c =
        text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
    if (c != word[i]) return false;
  }
  return true;
}

// Words that are never field names: the operators and the boolean literals.
bool reserved(std::string_view text) {
  for (std::string_view w : {"and", "or", "not", "between", "true", "false"}) {
    if (same_word(text, w)) return true;
  }
  return false;
}

// The functions: a name followed by '(' (so a field may still be called `abs`).
enum class Fn : std::uint8_t { abs, min, max, to_int, to_float };
struct FnInfo {
  std::string_view name;
  Fn fn;
  std::size_t arity;
};
constexpr FnInfo kFunctions[] = {{"abs", Fn::abs, 1},
                                 {"min", Fn::min, 2},
                                 {"max", Fn::max, 2},
                                 {"int", Fn::to_int, 1},
                                 {"float", Fn::to_float, 1}};

// How a token is named in "got ..." messages.
std::string describe_token(const Token& token) {
  return token.kind == Tok::end ? std::string("end of expression") : quoted(token.text);
}

// What an operand is, for type checks: its kind and how to name its type in a message
// (a field's own type "i64", otherwise the kind "integer").
struct Operand {
  ValueKind kind = ValueKind::integer;
  std::string type;
  Expr::StrOperand str;  // kind == string
};

bool numeric(ValueKind kind) { return kind == ValueKind::integer || kind == ValueKind::floating; }

// Category for "cannot compare X with Y".
std::string_view compare_class(ValueKind kind) {
  return numeric(kind) ? "number" : kind == ValueKind::boolean ? "bool" : "string";
}

// Nested parentheses, unary minus and `not` recurse; this bounds the C++ stack used.
constexpr int kMaxNesting = 256;

}  // namespace

class ExprCompiler {
 public:
  ExprCompiler(std::string_view text, const Schema& schema, Expr& out)
      : text_(text), schema_(schema), out_(out) {}

  Result<Operand> compile() {
    if (auto err = next(); !err) return fail_at(err.error());
    auto root = parse_or(0);
    if (!root) return root;
    if (token_.kind != Tok::end) {
      return error(token_.col, "expected an operator or the end of the expression, got " +
                                   describe_token(token_));
    }
    return root;
  }

 private:
  struct Failure {
    std::string message;
    std::size_t col;
  };

  static Error fail_at(const Failure& f) {
    return Error{f.message, "expression col " + std::to_string(f.col)};
  }
  static Error error(std::size_t col, std::string message) {
    return Error{std::move(message), "expression col " + std::to_string(col)};
  }

  // Reads the next token into token_.
  boost::outcome_v2::basic_result<void, Failure, boost::outcome_v2::policy::terminate> next() {
    prev_ = token_;
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
    const std::size_t start = pos_;
    token_ = Token{Tok::end, {}, start + 1};
    if (pos_ == text_.size()) return boost::outcome_v2::success();
    const char c = text_[pos_];
    if (ident_start(c)) {
      while (pos_ < text_.size() && ident_char(text_[pos_])) ++pos_;
      token_.kind = Tok::ident;
    } else if (digit(c)) {
      bool is_float = false;
      while (pos_ < text_.size() && digit(text_[pos_])) ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '.') {
        is_float = true;
        ++pos_;
        while (pos_ < text_.size() && digit(text_[pos_])) ++pos_;
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        is_float = true;
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
        if (pos_ == text_.size() || !digit(text_[pos_])) {
          while (pos_ < text_.size() && ident_char(text_[pos_])) ++pos_;
          return Failure{"bad number " + quoted(text_.substr(start, pos_ - start)), start + 1};
        }
        while (pos_ < text_.size() && digit(text_[pos_])) ++pos_;
      }
      if (pos_ < text_.size() && (ident_char(text_[pos_]) || text_[pos_] == '.')) {
        while (pos_ < text_.size() && (ident_char(text_[pos_]) || text_[pos_] == '.')) ++pos_;
        return Failure{"bad number " + quoted(text_.substr(start, pos_ - start)), start + 1};
      }
      token_.kind = is_float ? Tok::floating : Tok::integer;
    } else if (c == '"') {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        ++pos_;
      }
      if (pos_ == text_.size()) return Failure{"unterminated string literal", start + 1};
      ++pos_;
      token_.kind = Tok::string;
    } else {
      const std::string_view two = text_.substr(pos_, 2);
      if (two == "==" || two == "!=" || two == "<=" || two == ">=") {
        pos_ += 2;
      } else if (std::string_view("+-*/%()<>,").find(c) != std::string_view::npos) {
        pos_ += 1;
      } else if (c == '=') {
        return Failure{"'=' is not an operator; did you mean '=='?", start + 1};
      } else if (c == '&' || c == '|' || c == '!') {
        const std::string_view word = c == '&' ? "and" : c == '|' ? "or" : "not";
        return Failure{"unexpected character " + quoted(text_.substr(pos_, 1)) +
                           "; did you mean " + quoted(word) + "?",
                       start + 1};
      } else {
        return Failure{"unexpected character " + quoted(text_.substr(pos_, 1)), start + 1};
      }
      token_.kind = Tok::symbol;
    }
    token_.text = text_.substr(start, pos_ - start);
    return boost::outcome_v2::success();
  }

  bool at_symbol(std::string_view s) const {
    return token_.kind == Tok::symbol && token_.text == s;
  }
  // `s` in lower case; keywords match in any case.
  bool at_word(std::string_view s) const {
    return token_.kind == Tok::ident && same_word(token_.text, s);
  }
  // The next character after the current token, spaces skipped, is '(' (a function call).
  bool before_paren() const {
    std::size_t at = pos_;
    while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t' || text_[at] == '\n' ||
                                 text_[at] == '\r'))
      ++at;
    return at < text_.size() && text_[at] == '(';
  }

  // Consumes the current token.
  Result<void> advance() {
    if (auto r = next(); !r) return fail_at(r.error());
    return success();
  }

  Result<void> use_register(std::size_t reg, std::size_t col) {
    if (reg >= Expr::kMaxRegisters) {
      return error(col, "expression nests too deeply (more than " +
                            std::to_string(Expr::kMaxRegisters) + " pending operands)");
    }
    if (reg + 1 > out_.registers_) out_.registers_ = reg + 1;
    return success();
  }

  Result<void> enter(std::size_t col) {
    if (++nesting_ > kMaxNesting) {
      return error(col, "expression nests too deeply (more than " + std::to_string(kMaxNesting) +
                            " levels)");
    }
    return success();
  }

  void emit(Op op, std::size_t reg) {
    Expr::Instr in{};
    in.op = op;
    in.dst = static_cast<std::uint8_t>(reg);
    in.rhs = static_cast<std::uint8_t>(reg + 1);
    out_.program_.push_back(in);
  }

  Result<Operand> parse_or(std::size_t reg) { return parse_logic(reg, true); }

  // or (is_or) / and: left-associative chains of booleans.
  Result<Operand> parse_logic(std::size_t reg, bool is_or) {
    auto left = is_or ? parse_logic(reg, false) : parse_not(reg);
    if (!left) return left;
    const std::string_view word = is_or ? "or" : "and";
    while (at_word(word)) {
      const Token op = token_;
      if (auto r = advance(); !r) return r.error();
      auto right = is_or ? parse_logic(reg + 1, false) : parse_not(reg + 1);
      if (!right) return right;
      for (const Operand* side : {&left.value(), &right.value()}) {
        if (side->kind != ValueKind::boolean) {
          return error(op.col, quoted(op.text) + " needs booleans, got " + side->type);
        }
      }
      emit(is_or ? Op::or_b : Op::and_b, reg);
      left = Operand{ValueKind::boolean, "bool", {}};
    }
    return left;
  }

  Result<Operand> parse_not(std::size_t reg) {
    if (!at_word("not")) return parse_compare(reg);
    const Token op = token_;
    if (auto r = enter(op.col); !r) return r.error();
    if (auto r = advance(); !r) return r.error();
    auto operand = parse_not(reg);
    if (!operand) return operand;
    if (operand.value().kind != ValueKind::boolean) {
      return error(op.col, quoted(op.text) + " needs a boolean, got " + operand.value().type);
    }
    emit(Op::not_b, reg);
    --nesting_;
    return Operand{ValueKind::boolean, "bool", {}};
  }

  static std::optional<int> compare_index(const Token& t) {
    if (t.kind != Tok::symbol) return std::nullopt;
    static constexpr std::string_view kOps[] = {"==", "!=", "<", "<=", ">", ">="};
    for (int i = 0; i < 6; ++i) {
      if (t.text == kOps[i]) return i;
    }
    return std::nullopt;
  }

  // Promotes an integer in `reg` to float when the other side is a float.
  void promote(Operand& a, const Operand& b, std::size_t reg) {
    if (a.kind == ValueKind::integer && b.kind == ValueKind::floating) {
      Expr::Instr in{};
      in.op = Op::i2f;
      in.dst = static_cast<std::uint8_t>(reg);
      out_.program_.push_back(in);
      a.kind = ValueKind::floating;
    }
  }

  // Converts the integer in `reg` to float.
  void to_float(Operand& a, std::size_t reg) {
    Expr::Instr in{};
    in.op = Op::i2f;
    in.dst = static_cast<std::uint8_t>(reg);
    out_.program_.push_back(in);
    a.kind = ValueKind::floating;
    a.type = "float";
  }

  // `x [not] between lo and hi`, x already in `reg`, token_ at `not` or `between`. The bounds
  // are additive expressions, so the `and` between them is not a logical and.
  Result<Operand> parse_between(Operand x, std::size_t reg) {
    bool negate = false;
    if (at_word("not")) {
      negate = true;
      if (auto r = advance(); !r) return r.error();
      if (!at_word("between")) {
        return error(token_.col, "expected 'between' after 'not', got " + describe_token(token_));
      }
    }
    const Token op = token_;
    if (auto r = advance(); !r) return r.error();
    auto lo = parse_additive(reg + 1);
    if (!lo) return lo;
    if (!at_word("and")) {
      return error(token_.col, "expected 'and' after the lower bound of " + quoted(op.text) +
                                   ", got " + describe_token(token_));
    }
    if (auto r = advance(); !r) return r.error();
    auto hi = parse_additive(reg + 2);
    if (!hi) return hi;
    Operand* sides[] = {&x, &lo.value(), &hi.value()};
    bool any_float = false;
    for (const Operand* side : sides) {
      if (!numeric(side->kind)) {
        return error(op.col, quoted(op.text) + " needs numbers, got " + side->type);
      }
      any_float = any_float || side->kind == ValueKind::floating;
    }
    if (any_float) {
      for (std::size_t k = 0; k < 3; ++k) {
        if (sides[k]->kind == ValueKind::integer) to_float(*sides[k], reg + k);
      }
    }
    emit(any_float ? Op::between_f : Op::between_i, reg);
    if (negate) emit(Op::not_b, reg);
    return Operand{ValueKind::boolean, "bool", {}};
  }

  Result<Operand> parse_compare(std::size_t reg) {
    auto left = parse_additive(reg);
    if (!left) return left;
    while (true) {
      if (at_word("between") || at_word("not")) {
        left = parse_between(std::move(left).value(), reg);
        if (!left) return left;
        continue;
      }
      const auto which = compare_index(token_);
      if (!which) break;
      const Token op = token_;
      if (auto r = advance(); !r) return r.error();
      auto right = parse_additive(reg + 1);
      if (!right) return right;
      Operand& a = left.value();
      Operand& b = right.value();
      const bool equality = *which <= 1;
      if (compare_class(a.kind) != compare_class(b.kind)) {
        return error(op.col, "cannot compare " + std::string(compare_class(a.kind)) + " with " +
                                 std::string(compare_class(b.kind)));
      }
      if (!equality && a.kind == ValueKind::string) {
        return error(op.col, quoted(op.text) + " cannot order strings (only == and != apply)");
      }
      if (!equality && a.kind == ValueKind::boolean) {
        return error(op.col, quoted(op.text) + " cannot order booleans (only == and != apply)");
      }
      if (auto r = use_register(reg, op.col); !r) return r.error();
      if (a.kind == ValueKind::string) {
        Expr::Instr in{};
        in.op = *which == 0 ? Op::str_eq : Op::str_ne;
        in.dst = static_cast<std::uint8_t>(reg);
        in.sa = a.str;
        in.sb = b.str;
        out_.program_.push_back(in);
      } else {
        promote(a, b, reg);
        promote(b, a, reg + 1);
        const int base = a.kind == ValueKind::floating ? static_cast<int>(Op::eq_f)
                                                       : static_cast<int>(Op::eq_i);
        emit(static_cast<Op>(base + *which), reg);
      }
      left = Operand{ValueKind::boolean, "bool", {}};
    }
    return left;
  }

  // Checks both sides of an arithmetic operator, promotes, emits `int_op` or its float twin.
  Result<Operand> arithmetic(Operand& a, Operand& b, const Token& op, Op int_op, Op float_op,
                             std::size_t reg) {
    for (const Operand* side : {&a, &b}) {
      if (!numeric(side->kind)) {
        return error(op.col, quoted(op.text) + " needs numbers, got " + side->type);
      }
    }
    promote(a, b, reg);
    promote(b, a, reg + 1);
    const bool is_float = a.kind == ValueKind::floating;
    emit(is_float ? float_op : int_op, reg);
    return is_float ? Operand{ValueKind::floating, "float", {}}
                    : Operand{ValueKind::integer, "integer", {}};
  }

  Result<Operand> parse_additive(std::size_t reg) {
    auto left = parse_multiplicative(reg);
    if (!left) return left;
    while (at_symbol("+") || at_symbol("-")) {
      const Token op = token_;
      if (auto r = advance(); !r) return r.error();
      auto right = parse_multiplicative(reg + 1);
      if (!right) return right;
      const bool plus = op.text == "+";
      left = arithmetic(left.value(), right.value(), op, plus ? Op::add_i : Op::sub_i,
                        plus ? Op::add_f : Op::sub_f, reg);
      if (!left) return left;
    }
    return left;
  }

  Result<Operand> parse_multiplicative(std::size_t reg) {
    auto left = parse_unary(reg);
    if (!left) return left;
    while (at_symbol("*") || at_symbol("/") || at_symbol("%")) {
      const Token op = token_;
      if (auto r = advance(); !r) return r.error();
      auto right = parse_unary(reg + 1);
      if (!right) return right;
      const Op int_op = op.text == "*" ? Op::mul_i : op.text == "/" ? Op::div_i : Op::mod_i;
      const Op float_op = op.text == "*" ? Op::mul_f : op.text == "/" ? Op::div_f : Op::mod_f;
      left = arithmetic(left.value(), right.value(), op, int_op, float_op, reg);
      if (!left) return left;
    }
    return left;
  }

  Result<Operand> parse_unary(std::size_t reg) {
    if (!at_symbol("-")) return parse_primary(reg);
    const std::size_t col = token_.col;
    if (auto r = enter(col); !r) return r.error();
    if (auto r = advance(); !r) return r.error();
    auto operand = parse_unary(reg);
    if (!operand) return operand;
    if (!numeric(operand.value().kind)) {
      return error(col, "'-' needs a number, got " + operand.value().type);
    }
    const bool is_float = operand.value().kind == ValueKind::floating;
    emit(is_float ? Op::neg_f : Op::neg_i, reg);
    --nesting_;
    return is_float ? Operand{ValueKind::floating, "float", {}}
                    : Operand{ValueKind::integer, "integer", {}};
  }

  Result<Operand> expected_value() const {
    std::string message = "expected a value";
    if (prev_.kind != Tok::end) message += " after " + quoted(prev_.text);
    return error(token_.col, message + ", got " + describe_token(token_));
  }

  // An operand, then a check that what follows can follow a value: a word, number or string
  // there is reported where it stands ("auction mod 7": at `mod`), not later by an operator
  // that finds the wrong type or by the closing parenthesis.
  Result<Operand> parse_primary(std::size_t reg) {
    auto operand = parse_operand(reg);
    if (!operand) return operand;
    const bool word = token_.kind == Tok::ident;
    if ((word && !at_word("and") && !at_word("or") && !at_word("not") && !at_word("between")) ||
        token_.kind == Tok::integer || token_.kind == Tok::floating ||
        token_.kind == Tok::string) {
      std::string message = "expected an operator after " + quoted(prev_.text) + ", got " +
                            describe_token(token_);
      if (at_word("mod")) message += " (the remainder is '%')";
      if (at_word("div")) message += " (division is '/')";
      return error(token_.col, std::move(message));
    }
    return operand;
  }

  // name( args ): token_ at the name, '(' next.
  Result<Operand> parse_call(std::size_t reg) {
    const Token name = token_;
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFunctions) {
      if (same_word(name.text, f.name)) info = &f;
    }
    if (info == nullptr) {
      return error(name.col, "unknown function " + quoted(name.text) +
                                 " (functions: abs, min, max, int, float)");
    }
    if (auto r = enter(name.col); !r) return r.error();
    if (auto r = advance(); !r) return r.error();  // the name
    if (auto r = advance(); !r) return r.error();  // '('
    Operand args[2];
    for (std::size_t k = 0; k < info->arity; ++k) {
      if (k > 0) {
        if (!at_symbol(",")) {
          return error(token_.col, quoted(name.text) + " takes " + std::to_string(info->arity) +
                                       " arguments; expected ',', got " + describe_token(token_));
        }
        if (auto r = advance(); !r) return r.error();
      }
      auto arg = parse_or(reg + k);
      if (!arg) return arg;
      args[k] = std::move(arg).value();
    }
    if (!at_symbol(")")) {
      const std::string takes = info->arity == 1 ? " argument" : " arguments";
      return error(token_.col, quoted(name.text) + " takes " + std::to_string(info->arity) +
                                   takes + "; expected ')', got " + describe_token(token_));
    }
    if (auto r = advance(); !r) return r.error();
    --nesting_;
    Operand& a = args[0];
    const bool is_cast = info->fn == Fn::to_int || info->fn == Fn::to_float;
    for (std::size_t k = 0; k < info->arity; ++k) {
      const ValueKind kind = args[k].kind;
      // A cast also takes a boolean (false 0, true 1): int(price > 100) counts with sum.
      if (!numeric(kind) && !(is_cast && kind == ValueKind::boolean)) {
        return error(name.col, quoted(name.text) + (is_cast ? " needs a number or a bool, got "
                                                            : info->arity == 1
                                                                  ? " needs a number, got "
                                                                  : " needs numbers, got ") +
                                   args[k].type);
      }
    }
    const Operand integer{ValueKind::integer, "integer", {}};
    const Operand floating{ValueKind::floating, "float", {}};
    switch (info->fn) {
      case Fn::to_int:
        if (a.kind == ValueKind::floating) emit(Op::f2i, reg);
        return integer;  // a boolean register already holds 0 or 1
      case Fn::to_float:
        if (a.kind != ValueKind::floating) to_float(a, reg);
        return floating;
      case Fn::abs:
        emit(a.kind == ValueKind::floating ? Op::abs_f : Op::abs_i, reg);
        return a.kind == ValueKind::floating ? floating : integer;
      case Fn::min:
      case Fn::max: {
        Operand& b = args[1];
        promote(a, b, reg);
        promote(b, a, reg + 1);
        const bool is_float = a.kind == ValueKind::floating;
        const bool is_min = info->fn == Fn::min;
        emit(is_float ? (is_min ? Op::min_f : Op::max_f) : (is_min ? Op::min_i : Op::max_i), reg);
        return is_float ? floating : integer;
      }
    }
    return integer;
  }

  Result<Operand> parse_operand(std::size_t reg) {
    const Token t = token_;
    if (t.kind == Tok::ident && !reserved(t.text) && before_paren()) return parse_call(reg);
    if (t.kind == Tok::symbol && t.text == "(") {
      if (auto r = enter(t.col); !r) return r.error();
      if (auto r = advance(); !r) return r.error();
      auto inner = parse_or(reg);
      if (!inner) return inner;
      if (!at_symbol(")")) {
        return error(token_.col, "expected ')' to close the '(' at col " + std::to_string(t.col) +
                                     ", got " + describe_token(token_));
      }
      if (auto r = advance(); !r) return r.error();
      --nesting_;
      return inner;
    }
    if (t.kind == Tok::end || t.kind == Tok::symbol ||
        (t.kind == Tok::ident && reserved(t.text) && !at_word("true") && !at_word("false"))) {
      return expected_value();
    }
    if (t.kind != Tok::string) {
      if (auto r = use_register(reg, t.col); !r) return r.error();
    }
    Operand result;
    Expr::Instr in{};
    in.dst = static_cast<std::uint8_t>(reg);
    if (t.kind == Tok::integer) {
      std::uint64_t value = 0;
      const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
      if (ec != std::errc() || value > static_cast<std::uint64_t>(
                                           std::numeric_limits<std::int64_t>::max())) {
        return error(t.col, "integer literal " + quoted(t.text) +
                                " is out of range (largest is 9223372036854775807)");
      }
      in.op = Op::const_i;
      in.imm_i = static_cast<std::int64_t>(value);
      result = Operand{ValueKind::integer, "integer", {}};
    } else if (t.kind == Tok::floating) {
      double value = 0;
      const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
      if (ec != std::errc() || !std::isfinite(value)) {
        return error(t.col, "float literal " + quoted(t.text) + " is out of range");
      }
      in.op = Op::const_f;
      in.imm_f = value;
      result = Operand{ValueKind::floating, "float", {}};
    } else if (t.kind == Tok::string) {
      std::string value;
      for (std::size_t i = 1; i + 1 < t.text.size(); ++i) {
        char c = t.text[i];
        if (c == '\\') {
          c = t.text[++i];
          if (c != '"' && c != '\\') {
            return error(t.col + i - 1, "unknown escape '\\" + std::string(1, c) +
                                            "' in string literal (only \\\" and \\\\)");
          }
        }
        value.push_back(c);
      }
      result.kind = ValueKind::string;
      result.type = "string";
      result.str = Expr::StrOperand{false, static_cast<std::uint32_t>(out_.literals_.size()),
                                    static_cast<std::uint32_t>(value.size())};
      out_.literals_.push_back(std::move(value));
      if (auto r = advance(); !r) return r.error();
      return result;
    } else if (at_word("true") || at_word("false")) {
      in.op = Op::const_i;
      in.imm_i = at_word("true") ? 1 : 0;
      result = Operand{ValueKind::boolean, "bool", {}};
    } else {
      const auto index = schema_.index_of(t.text);
      if (!index) {
        std::string names;
        for (const Field& f : schema_.fields()) names += (names.empty() ? "" : ", ") + f.name;
        return error(t.col, "unknown field " + quoted(t.text) + " (fields: " + names + ")");
      }
      const Field& field = schema_.field(*index);
      in.offset = field.offset;
      result.type = field.type_name();
      switch (field.type) {
        case FieldType::i32: in.op = Op::load_i32; result.kind = ValueKind::integer; break;
        case FieldType::i64:
        case FieldType::timestamp: in.op = Op::load_i64; result.kind = ValueKind::integer; break;
        case FieldType::f64: in.op = Op::load_f64; result.kind = ValueKind::floating; break;
        case FieldType::boolean: in.op = Op::load_bool; result.kind = ValueKind::boolean; break;
        case FieldType::str:
          result.kind = ValueKind::string;
          result.str = Expr::StrOperand{true, field.offset, field.width};
          if (auto r = advance(); !r) return r.error();
          return result;
      }
    }
    out_.program_.push_back(in);
    if (auto r = advance(); !r) return r.error();
    return result;
  }

  std::string_view text_;
  const Schema& schema_;
  Expr& out_;
  std::size_t pos_ = 0;
  Token token_;
  Token prev_;
  int nesting_ = 0;
};

Result<Expr> Expr::compile(std::string_view text, const Schema& schema) {
  Expr expr;
  expr.text_ = std::string(text);
  ExprCompiler compiler(expr.text_, schema, expr);
  auto root = compiler.compile();
  if (!root) return boost::outcome_v2::failure(std::move(root).error());
  expr.kind_ = root.value().kind;
  if (expr.kind_ == ValueKind::string) expr.root_str_ = root.value().str;
  expr.scratch_.resize(expr.registers_ * kChunkRows);
  return expr;
}

}  // namespace boreal::ops
