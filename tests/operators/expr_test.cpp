#include <boreal/ops/expr.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

// Counts every allocation of this test program, to show evaluation allocates nothing.
#include "allocation_counter.hpp"

namespace boreal::ops {
namespace {

// 48-byte tuples: a@0 b@8 x@16 y@24 flag@32 small@36 sym@40 ts@48 ... see kSchema.
constexpr std::string_view kSchema =
    "a:i64,b:i64,x:f64,y:f64,flag:bool,small:i32,sym:str8,other:str4,ts:timestamp";

class ExprTest : public ::testing::Test {
 protected:
  ExprTest() : schema_(Schema::parse(kSchema).value()), batch_(schema_, 4) {
    MutRow row = batch_.append();
    FieldRef<std::int64_t>::bind(schema_, "a").value().set(row, 7);
    FieldRef<std::int64_t>::bind(schema_, "b").value().set(row, -3);
    FieldRef<double>::bind(schema_, "x").value().set(row, 2.5);
    FieldRef<double>::bind(schema_, "y").value().set(row, 0.0);
    FieldRef<bool>::bind(schema_, "flag").value().set(row, true);
    FieldRef<std::int32_t>::bind(schema_, "small").value().set(row, -40);
    FieldRef<std::string_view>::bind(schema_, "sym").value().set(row, "IBM");
    FieldRef<std::string_view>::bind(schema_, "other").value().set(row, "IBM");
    FieldRef<Timestamp>::bind(schema_, "ts").value().set(
        row, Timestamp(std::chrono::nanoseconds(1000)));
  }

  Expr compile(std::string_view text) {
    auto e = Expr::compile(text, schema_);
    EXPECT_TRUE(e) << text << ": " << e.error().describe();
    return std::move(e).value();
  }
  std::int64_t i(std::string_view text) { return compile(text).eval_int(row()); }
  double f(std::string_view text) { return compile(text).eval_float(row()); }
  bool b(std::string_view text) { return compile(text).eval_bool(row()); }
  std::string error(std::string_view text) {
    auto e = Expr::compile(text, schema_);
    EXPECT_FALSE(e) << text << " compiled";
    return e ? std::string() : e.error().describe();
  }
  Row row() const { return batch_.row(0); }

  Schema schema_;
  OwnedBatch batch_;
};

TEST_F(ExprTest, ArithmeticOperators) {
  EXPECT_EQ(i("a + b"), 4);
  EXPECT_EQ(i("a - b"), 10);
  EXPECT_EQ(i("a * b"), -21);
  EXPECT_EQ(i("a / 2"), 3);
  EXPECT_EQ(i("a % 4"), 3);
  EXPECT_EQ(i("b % 2"), -1);  // sign of the dividend
  EXPECT_EQ(i("-a"), -7);
  EXPECT_EQ(i("- - a"), 7);
  EXPECT_EQ(i("small * 2"), -80);
  EXPECT_EQ(i("ts + 1"), 1001);
  EXPECT_DOUBLE_EQ(f("x * 2"), 5.0);
  EXPECT_DOUBLE_EQ(f("x + a"), 9.5);  // integer promoted
  EXPECT_DOUBLE_EQ(f("a / 2.0"), 3.5);
  EXPECT_DOUBLE_EQ(f("x % 1"), 0.5);
  EXPECT_DOUBLE_EQ(f("-x"), -2.5);
  EXPECT_DOUBLE_EQ(f("1.5e2"), 150.0);
  EXPECT_DOUBLE_EQ(f("a"), 7.0);  // eval_float of an integer expression
}

TEST_F(ExprTest, Precedence) {
  EXPECT_EQ(i("1 + 2 * 3"), 7);
  EXPECT_EQ(i("(1 + 2) * 3"), 9);
  EXPECT_EQ(i("10 - 3 - 2"), 5);  // left-associative
  EXPECT_EQ(i("100 / 10 / 5"), 2);
  EXPECT_EQ(i("-2 * 3"), -6);
  EXPECT_EQ(i("2 * -3"), -6);
  EXPECT_EQ(i("7 % 4 * 2"), 6);
  EXPECT_TRUE(b("1 + 1 == 2"));
  EXPECT_TRUE(b("true or false and false"));  // and binds tighter than or
  EXPECT_FALSE(b("(true or false) and false"));
  EXPECT_TRUE(b("not false and true"));  // not binds tighter than and
  EXPECT_FALSE(b("not (false or true)"));
  EXPECT_TRUE(b("not a > 10"));  // not binds looser than comparison
}

TEST_F(ExprTest, Comparisons) {
  EXPECT_TRUE(b("a == 7"));
  EXPECT_FALSE(b("a != 7"));
  EXPECT_TRUE(b("b < 0"));
  EXPECT_TRUE(b("a <= 7"));
  EXPECT_FALSE(b("a > 7"));
  EXPECT_TRUE(b("a >= 7"));
  EXPECT_TRUE(b("x > 2"));
  EXPECT_TRUE(b("a > x"));
  EXPECT_TRUE(b("x == 2.5"));
  EXPECT_TRUE(b("flag == true"));
  EXPECT_TRUE(b("flag != false"));
  EXPECT_TRUE(b("flag"));
  EXPECT_FALSE(b("not flag"));
  EXPECT_TRUE(b("flag and a > 0 or b > 0"));
}

TEST_F(ExprTest, Strings) {
  EXPECT_TRUE(b("sym == \"IBM\""));
  EXPECT_FALSE(b("sym != \"IBM\""));
  EXPECT_FALSE(b("sym == \"IB\""));
  EXPECT_FALSE(b("sym == \"IBMX\""));
  EXPECT_TRUE(b("\"IBM\" == sym"));
  EXPECT_TRUE(b("sym == other"));
  EXPECT_TRUE(b("\"a\\\"b\" != \"a\\\\b\""));
  Expr s = compile("sym");
  EXPECT_EQ(s.kind(), ValueKind::string);
  EXPECT_EQ(s.string_width(), 8u);
  EXPECT_EQ(s.eval_str(row()), "IBM");
  Expr lit = compile("(\"q\\\"x\")");
  EXPECT_EQ(lit.eval_str(row()), "q\"x");
  EXPECT_EQ(lit.string_width(), 3u);
}

TEST_F(ExprTest, KindsFollowTypes) {
  EXPECT_EQ(compile("a").kind(), ValueKind::integer);
  EXPECT_EQ(compile("small").kind(), ValueKind::integer);
  EXPECT_EQ(compile("ts").kind(), ValueKind::integer);
  EXPECT_EQ(compile("x").kind(), ValueKind::floating);
  EXPECT_EQ(compile("a + x").kind(), ValueKind::floating);
  EXPECT_EQ(compile("flag").kind(), ValueKind::boolean);
  EXPECT_EQ(compile("a < 1").kind(), ValueKind::boolean);
  EXPECT_EQ(compile("sym").kind(), ValueKind::string);
}

TEST_F(ExprTest, DivisionAndOverflowAreDefined) {
  EXPECT_EQ(i("a / 0"), 0);
  EXPECT_EQ(i("a % 0"), 0);
  EXPECT_EQ(i("(-9223372036854775807 - 1) / -1"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(i("(-9223372036854775807 - 1) % -1"), 0);
  EXPECT_EQ(i("9223372036854775807 + 1"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(f("x / y"), std::numeric_limits<double>::infinity());
}

struct ErrorCase {
  std::string_view text;
  std::string_view expected;
};

TEST_F(ExprTest, EveryErrorKindNamesColumnAndExpectation) {
  const ErrorCase cases[] = {
      {"", "expression col 1: expected a value, got end of expression"},
      {"a +", "expression col 4: expected a value after '+', got end of expression"},
      {"a + )", "expression col 5: expected a value after '+', got ')'"},
      {"a and or b", "expression col 7: expected a value after 'and', got 'or'"},
      {"pric > 1",
       "expression col 1: unknown field 'pric' (fields: a, b, x, y, flag, small, sym, other, ts)"},
      {"a and flag", "expression col 3: 'and' needs booleans, got i64"},
      {"flag or x + 1", "expression col 6: 'or' needs booleans, got float"},
      {"not a", "expression col 1: 'not' needs a boolean, got i64"},
      {"a + sym", "expression col 3: '+' needs numbers, got str8"},
      {"flag * 2", "expression col 6: '*' needs numbers, got bool"},
      {"-sym", "expression col 1: '-' needs a number, got str8"},
      {"sym == 3", "expression col 5: cannot compare string with number"},
      {"flag == 1", "expression col 6: cannot compare bool with number"},
      {"sym < \"B\"", "expression col 5: '<' cannot order strings (only == and != apply)"},
      {"flag >= true", "expression col 6: '>=' cannot order booleans (only == and != apply)"},
      {"(a + 1", "expression col 7: expected ')' to close the '(' at col 1, got end of expression"},
      {"a 1", "expression col 3: expected an operator after 'a', got '1'"},
      {"(a) )", "expression col 5: expected an operator or the end of the expression, got ')'"},
      {"a = 1", "expression col 3: '=' is not an operator; did you mean '=='?"},
      {"a # 1", "expression col 3: unexpected character '#'"},
      {"sym == \"IBM", "expression col 8: unterminated string literal"},
      {"1.2.3 > a", "expression col 1: bad number '1.2.3'"},
      {"12abc", "expression col 1: bad number '12abc'"},
      {"1e+ > x", "expression col 1: bad number '1e+'"},
      {"a > 9223372036854775808",
       "expression col 5: integer literal '9223372036854775808' is out of range (largest is "
       "9223372036854775807)"},
      {"x > 1e999", "expression col 5: float literal '1e999' is out of range"},
      {"sym == \"a\\n\"",
       "expression col 10: unknown escape '\\n' in string literal (only \\\" and \\\\)"},
  };
  for (const ErrorCase& c : cases) EXPECT_EQ(error(c.text), c.expected) << c.text;
}

TEST_F(ExprTest, DeepNestingIsAnErrorNotACrash) {
  std::string parens(300, '(');
  EXPECT_EQ(error(parens + "a" + std::string(300, ')')),
            "expression col 257: expression nests too deeply (more than 256 levels)");
  // Right-leaning operands each hold a register: 1 * (1 * (1 * ...)).
  std::string chain;
  for (int k = 0; k < 40; ++k) chain += "1 + (";
  chain += "1" + std::string(40, ')');
  EXPECT_EQ(error(chain), "expression col 161: expression nests too deeply (more than 32 pending "
                          "operands)");
}

TEST_F(ExprTest, EvaluationAllocatesNothing) {
  Expr p = compile("(a * 3 + small) % 5 < x - 1 and sym == \"IBM\" or not flag");
  Expr n = compile("a * x / 3");
  Expr s = compile("sym");
  bool sink_b = false;
  double sink_f = 0;
  std::size_t sink_s = 0;
  bool flags[4];
  double values[4];
  const std::size_t before = g_allocations.load();
  for (int k = 0; k < 1000; ++k) {
    sink_b ^= p.eval_bool(row());
    sink_f += n.eval_float(row());
    sink_s += s.eval_str(row()).size();
    p.eval_bool_batch(batch_, 0, 1, flags);
    n.eval_float_batch(batch_, 0, 1, values);
  }
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_FALSE(sink_b);  // 1000 toggles of the same value
  EXPECT_TRUE(p.eval_bool(row()));
  EXPECT_NEAR(sink_f, 1000 * (7 * 2.5 / 3), 1e-6);
  EXPECT_EQ(sink_s, 3000u);
}

TEST_F(ExprTest, BatchEvaluationMatchesPerRow) {
  OwnedBatch rows(schema_, 600);
  auto a = FieldRef<std::int64_t>::bind(schema_, "a").value();
  auto x = FieldRef<double>::bind(schema_, "x").value();
  auto sym = FieldRef<std::string_view>::bind(schema_, "sym").value();
  for (int k = 0; k < 600; ++k) {
    MutRow r = rows.append();
    a.set(r, k * 37 % 101 - 50);
    x.set(r, k * 0.25);
    sym.set(r, k % 3 == 0 ? "IBM" : "MSFT");
  }
  Expr p = compile("a % 7 > 2 and x < 100 or sym == \"MSFT\" and a < 0");
  Expr n = compile("a * 3 - 1");
  bool flags[Expr::kChunkRows];
  std::int64_t ints[Expr::kChunkRows];
  for (std::size_t first = 0; first < rows.size(); first += Expr::kChunkRows) {
    const std::size_t count = std::min(Expr::kChunkRows, rows.size() - first);
    p.eval_bool_batch(rows, first, count, flags);
    n.eval_int_batch(rows, first, count, ints);
    for (std::size_t k = 0; k < count; ++k) {
      ASSERT_EQ(flags[k], p.eval_bool(rows.row(first + k))) << first + k;
      ASSERT_EQ(ints[k], n.eval_int(rows.row(first + k))) << first + k;
    }
  }
}

TEST_F(ExprTest, KeywordsAreCaseInsensitive) {
  EXPECT_TRUE(b("a > 1 AND b < 0"));
  EXPECT_TRUE(b("a > 100 OR flag"));
  EXPECT_FALSE(b("NOT flag"));
  EXPECT_TRUE(b("Not (a > 100) aNd TRUE"));
  EXPECT_FALSE(b("FALSE"));
  EXPECT_TRUE(b("flag == True"));
  EXPECT_TRUE(b("a BETWEEN 1 AND 10"));
  EXPECT_TRUE(b("a NOT BETWEEN 8 AND 10"));
  EXPECT_EQ(i("ABS(b)"), 3);
  EXPECT_EQ(i("Max(a, b)"), 7);
  EXPECT_EQ(i("INT(x)"), 2);
  // Field names stay case-sensitive.
  EXPECT_EQ(
      error("A > 1"),
      "expression col 1: unknown field 'A' (fields: a, b, x, y, flag, small, sym, other, ts)");
}

TEST_F(ExprTest, Between) {
  EXPECT_TRUE(b("a between 7 and 7"));  // inclusive on both ends
  EXPECT_TRUE(b("a between 1 and 7"));
  EXPECT_TRUE(b("a between 7 and 9"));
  EXPECT_FALSE(b("a between 8 and 9"));
  EXPECT_FALSE(b("a between 9 and 1"));  // bounds are not swapped
  EXPECT_TRUE(b("a not between 8 and 9"));
  EXPECT_FALSE(b("a not between 1 and 7"));
  EXPECT_TRUE(b("x between 2.5 and 3"));  // integer bound promoted
  EXPECT_TRUE(b("a between x and 7.0"));
  EXPECT_FALSE(b("a between x and 6.99"));
  EXPECT_TRUE(b("small between -40 and -40"));
  EXPECT_TRUE(b("a + 1 between a * 1 and b + 11"));  // bounds are additive expressions
  EXPECT_TRUE(b("a between 1 and 7 and flag"));       // (a between 1 and 7) and flag
  EXPECT_FALSE(b("a between 1 and 7 and not flag"));
  EXPECT_TRUE(b("not a between 8 and 9"));  // not (a between 8 and 9)
  EXPECT_TRUE(b("a between 1 and 2 or a between 5 and 9"));
  EXPECT_TRUE(b("(a between 1 and 7) == true"));
  EXPECT_FALSE(b("x / y - x / y between 0 and 1"));  // NaN is never between
  EXPECT_TRUE(b("x / y - x / y not between 0 and 1"));
}

TEST_F(ExprTest, Functions) {
  EXPECT_EQ(i("abs(b)"), 3);
  EXPECT_EQ(i("abs(a)"), 7);
  EXPECT_EQ(i("abs(small)"), 40);
  EXPECT_EQ(i("abs(-9223372036854775807 - 1)"), std::numeric_limits<std::int64_t>::min());
  EXPECT_DOUBLE_EQ(f("abs(-x)"), 2.5);
  EXPECT_EQ(compile("abs(b)").kind(), ValueKind::integer);
  EXPECT_EQ(compile("abs(x)").kind(), ValueKind::floating);
  EXPECT_FALSE(std::signbit(f("abs(-0.0)")));
  EXPECT_EQ(i("min(a, b)"), -3);
  EXPECT_EQ(i("max(a, b)"), 7);
  EXPECT_EQ(i("min(small, ts)"), -40);
  EXPECT_EQ(compile("min(a, b)").kind(), ValueKind::integer);
  EXPECT_EQ(compile("max(a, x)").kind(), ValueKind::floating);  // promoted
  EXPECT_DOUBLE_EQ(f("max(a, x)"), 7.0);
  EXPECT_DOUBLE_EQ(f("min(a, x)"), 2.5);
  EXPECT_DOUBLE_EQ(f("min(x / y - x / y, 1.5)"), 1.5);  // a NaN side is ignored
  EXPECT_DOUBLE_EQ(f("max(1.5, x / y - x / y)"), 1.5);
  EXPECT_TRUE(std::isnan(f("min(x / y - x / y, y / y)")));
  EXPECT_TRUE(std::signbit(f("min(-0.0, 0.0)")));  // equal: the first argument
  EXPECT_FALSE(std::signbit(f("max(0.0, -0.0)")));
  EXPECT_EQ(i("max(min(a, 5), b) * 2 + abs(b)"), 13);  // nested, in arithmetic
  EXPECT_EQ(i("min((a), -(b))"), 3);
  EXPECT_TRUE(b("max(a, b) between 7 and 7"));
}

TEST_F(ExprTest, CastsBetweenIntegerAndFloat) {
  EXPECT_EQ(compile("int(x)").kind(), ValueKind::integer);
  EXPECT_EQ(compile("float(a)").kind(), ValueKind::floating);
  EXPECT_EQ(i("int(x)"), 2);  // truncates toward zero
  EXPECT_EQ(i("int(-x)"), -2);
  EXPECT_EQ(i("int(2.999999)"), 2);
  EXPECT_EQ(i("int(-0.5)"), 0);
  EXPECT_EQ(i("int(a)"), 7);  // integer unchanged
  EXPECT_EQ(i("int(x / y - x / y)"), 0);  // NaN
  EXPECT_EQ(i("int(x / y)"), std::numeric_limits<std::int64_t>::max());  // +inf
  EXPECT_EQ(i("int(-x / y)"), std::numeric_limits<std::int64_t>::min());  // -inf
  EXPECT_EQ(i("int(9223372036854775808.0)"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(i("int(1e300)"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(i("int(-9223372036854775808.0)"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(i("int(-1e300)"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(i("int(9223372036854774784.0)"), 9223372036854774784);  // largest double < 2^63
  EXPECT_EQ(i("int(flag)"), 1);
  EXPECT_EQ(i("int(not flag)"), 0);
  EXPECT_EQ(i("int(a > 100) + int(a > 1)"), 1);
  EXPECT_DOUBLE_EQ(f("float(a) / 2"), 3.5);  // float division, not integer
  EXPECT_EQ(i("a / 2"), 3);
  EXPECT_DOUBLE_EQ(f("float(x)"), 2.5);
  EXPECT_DOUBLE_EQ(f("float(flag)"), 1.0);
  EXPECT_EQ(i("int(float(9007199254740993))"), 9007199254740992);  // nearest double
}

TEST_F(ExprTest, NewFormsEvaluateTheSameInBatches) {
  OwnedBatch rows(schema_, 300);
  auto a = FieldRef<std::int64_t>::bind(schema_, "a").value();
  auto x = FieldRef<double>::bind(schema_, "x").value();
  for (int k = 0; k < 300; ++k) {
    MutRow r = rows.append();
    a.set(r, k % 41 - 20);
    x.set(r, k * 0.37 - 50);
  }
  Expr p = compile("a between -5 and int(x) or abs(a) not between 3 and 12");
  Expr n = compile("max(a, int(x)) - min(abs(a), 4) * 3");
  Expr m = compile("min(x, a) + float(abs(a))");
  bool flags[Expr::kChunkRows];
  std::int64_t ints[Expr::kChunkRows];
  double floats[Expr::kChunkRows];
  std::size_t true_rows = 0;
  for (std::size_t first = 0; first < rows.size(); first += Expr::kChunkRows) {
    const std::size_t count = std::min(Expr::kChunkRows, rows.size() - first);
    p.eval_bool_batch(rows, first, count, flags);
    n.eval_int_batch(rows, first, count, ints);
    m.eval_float_batch(rows, first, count, floats);
    for (std::size_t k = 0; k < count; ++k) {
      const Row r = rows.row(first + k);
      const std::int64_t av = a.get(r);
      const double xv = x.get(r);
      const auto xi = static_cast<std::int64_t>(xv);
      const std::int64_t abs_a = av < 0 ? -av : av;
      const bool want = (av >= -5 && av <= xi) || !(abs_a >= 3 && abs_a <= 12);
      ASSERT_EQ(flags[k], want) << first + k;
      ASSERT_EQ(flags[k], p.eval_bool(r)) << first + k;
      ASSERT_EQ(ints[k], std::max(av, xi) - std::min<std::int64_t>(abs_a, 4) * 3) << first + k;
      ASSERT_EQ(ints[k], n.eval_int(r)) << first + k;
      ASSERT_DOUBLE_EQ(floats[k],
                       std::min(xv, static_cast<double>(av)) + static_cast<double>(abs_a));
      true_rows += want;
    }
  }
  EXPECT_EQ(true_rows, 199u);
}

TEST_F(ExprTest, NewFormsReportErrorsWhereTheyAre) {
  const ErrorCase cases[] = {
      // An unknown word after a value is reported at the word, not at a later operator.
      {"a mod 7", "expression col 3: expected an operator after 'a', got 'mod' (the remainder is "
                  "'%')"},
      {"flag and a mod 7 == 0",
       "expression col 12: expected an operator after 'a', got 'mod' (the remainder is '%')"},
      {"not a mod 7 == 0",
       "expression col 7: expected an operator after 'a', got 'mod' (the remainder is '%')"},
      {"flag or a b", "expression col 11: expected an operator after 'a', got 'b'"},
      {"(a div 2) > 1", "expression col 4: expected an operator after 'a', got 'div' (division is "
                        "'/')"},
      {"abs(a xor b)", "expression col 7: expected an operator after 'a', got 'xor'"},
      {"a + 1 \"s\"", "expression col 7: expected an operator after '1', got '\"s\"'"},
      {"abs(b) 2", "expression col 8: expected an operator after ')', got '2'"},
      {"a > 1 && flag", "expression col 7: unexpected character '&'; did you mean 'and'?"},
      {"a > 1 || flag", "expression col 7: unexpected character '|'; did you mean 'or'?"},
      {"!flag", "expression col 1: unexpected character '!'; did you mean 'not'?"},
      // between
      {"sym between 1 and 2", "expression col 5: 'between' needs numbers, got str8"},
      {"a BETWEEN flag and 2", "expression col 3: 'BETWEEN' needs numbers, got bool"},
      {"a between 1 or 2", "expression col 13: expected 'and' after the lower bound of 'between', "
                           "got 'or'"},
      {"a between 1 > 0 and 2",
       "expression col 13: expected 'and' after the lower bound of 'between', got '>'"},
      {"a between 1 and", "expression col 16: expected a value after 'and', got end of expression"},
      {"a not 3", "expression col 7: expected 'between' after 'not', got '3'"},
      {"between > 1", "expression col 1: expected a value, got 'between'"},
      {"a + NOT flag", "expression col 5: expected a value after '+', got 'NOT'"},
      {"a AND flag", "expression col 3: 'AND' needs booleans, got i64"},
      {"NOT a", "expression col 1: 'NOT' needs a boolean, got i64"},
      // functions
      {"sqrt(x)", "expression col 1: unknown function 'sqrt' (functions: abs, min, max, int, "
                  "float)"},
      {"abs(a, b)", "expression col 6: 'abs' takes 1 argument; expected ')', got ','"},
      {"min(a)", "expression col 6: 'min' takes 2 arguments; expected ',', got ')'"},
      {"max(a, b, x)", "expression col 9: 'max' takes 2 arguments; expected ')', got ','"},
      {"abs()", "expression col 5: expected a value after '(', got ')'"},
      {"abs(a", "expression col 6: 'abs' takes 1 argument; expected ')', got end of expression"},
      {"abs(sym)", "expression col 1: 'abs' needs a number, got str8"},
      {"min(a, flag)", "expression col 1: 'min' needs numbers, got bool"},
      {"MAX(sym, 1)", "expression col 1: 'MAX' needs numbers, got str8"},
      {"int(sym)", "expression col 1: 'int' needs a number or a bool, got str8"},
      {"float(\"1\")", "expression col 1: 'float' needs a number or a bool, got string"},
      {"a + abs(b", "expression col 10: 'abs' takes 1 argument; expected ')', got end of "
                    "expression"},
  };
  for (const ErrorCase& c : cases) EXPECT_EQ(error(c.text), c.expected) << c.text;
}

TEST_F(ExprTest, FieldsMayBeNamedLikeFunctions) {
  const Schema s = Schema::parse("abs:i64,min:f64").value();
  OwnedBatch rows(s, 1);
  MutRow r = rows.append();
  FieldRef<std::int64_t>::bind(s, "abs").value().set(r, -5);
  FieldRef<double>::bind(s, "min").value().set(r, 1.5);
  auto e = Expr::compile("abs(abs) + min + min(abs, min)", s);
  ASSERT_TRUE(e) << e.error().describe();
  EXPECT_DOUBLE_EQ(e.value().eval_float(rows.row(0)), 5 + 1.5 - 5);
}

}  // namespace
}  // namespace boreal::ops
