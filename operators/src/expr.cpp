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
};

struct Expr::Instr {
  Op op;
  std::uint8_t dst = 0;  // result register; unary ops read it too
  std::uint8_t rhs = 0;  // second operand register (always dst + 1 for binary ops)
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
      return error(token_.col,
                   "expected an operator or the end of the expression, got " + describe_token(token_));
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
      } else if (std::string_view("+-*/%()<>").find(c) != std::string_view::npos) {
        pos_ += 1;
      } else if (c == '=') {
        return Failure{"'=' is not an operator; did you mean '=='?", start + 1};
      } else {
        return Failure{"unexpected character " + quoted(text_.substr(pos_, 1)), start + 1};
      }
      token_.kind = Tok::symbol;
    }
    token_.text = text_.substr(start, pos_ - start);
    return boost::outcome_v2::success();
  }

  bool at_symbol(std::string_view s) const { return token_.kind == Tok::symbol && token_.text == s; }
  bool at_word(std::string_view s) const { return token_.kind == Tok::ident && token_.text == s; }

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
      const std::size_t col = token_.col;
      if (auto r = advance(); !r) return r.error();
      auto right = is_or ? parse_logic(reg + 1, false) : parse_not(reg + 1);
      if (!right) return right;
      for (const Operand* side : {&left.value(), &right.value()}) {
        if (side->kind != ValueKind::boolean) {
          return error(col, quoted(word) + " needs booleans, got " + side->type);
        }
      }
      emit(is_or ? Op::or_b : Op::and_b, reg);
      left = Operand{ValueKind::boolean, "bool", {}};
    }
    return left;
  }

  Result<Operand> parse_not(std::size_t reg) {
    if (!at_word("not")) return parse_compare(reg);
    const std::size_t col = token_.col;
    if (auto r = enter(col); !r) return r.error();
    if (auto r = advance(); !r) return r.error();
    auto operand = parse_not(reg);
    if (!operand) return operand;
    if (operand.value().kind != ValueKind::boolean) {
      return error(col, "'not' needs a boolean, got " + operand.value().type);
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

  Result<Operand> parse_compare(std::size_t reg) {
    auto left = parse_additive(reg);
    if (!left) return left;
    while (auto which = compare_index(token_)) {
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

  Result<Operand> parse_primary(std::size_t reg) {
    const Token t = token_;
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
    if (t.kind == Tok::end || t.kind == Tok::symbol || at_word("and") || at_word("or") ||
        at_word("not")) {
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
    } else if (t.text == "true" || t.text == "false") {
      in.op = Op::const_i;
      in.imm_i = t.text == "true" ? 1 : 0;
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
