// Private to the aggregate box: one aggregate's partial state inside a pane record, and the
// three things done to it — add a tuple (update), combine two panes (merge), write the
// output column (finalize). Per tuple the box runs one switch per aggregate; no virtual call.
//
// Slot layout at Agg::at in a pane record: [aux: i64][value: width rounded up to 8 bytes].
// aux is the time (or index) of the value for first/last; sums are i64 (wrapping, computed
// on uint64) or f64; min/max/first/last keep the field's own bytes.
//
// An argument is read from the tuple (in_offset into the row) or, for an expression argument,
// from the box's value columns (in_offset into the current row's slot there: column j of
// Expr::kChunkRows 8-byte slots starts at j * kChunkRows * 8). Its values are typed as an i64,
// f64 or bool field would be, so the same ops apply.
#pragma once

#include <cstdint>
#include <cstring>

#include <boreal/ops/schema.hpp>

#include "aggregate_plan.hpp"

namespace boreal::ops::aggregate_detail {

enum class Op : std::uint8_t {
  count, sum_i32, sum_i64, sum_f64, avg_i32, avg_i64, avg_f64,
  min_i32, min_i64, min_f64, min_u8, min_str, max_i32, max_i64, max_f64, max_u8, max_str,
  first, last
};

struct Agg {
  Op op;
  std::uint32_t in_offset = 0;
  std::uint32_t width = 0;   // value bytes in the input (and the output, for min..last)
  std::uint32_t at = 0;      // offset of [aux][value] in a pane record
  std::uint32_t out_offset = 0;
  bool from_values = false;  // an expression argument: read from the value columns
};

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

inline Op pick_op(AggFunction fn, FieldType type) {
  const auto by_type = [type](Op i32, Op i64, Op f64, Op u8, Op str) {
    switch (type) {
      case FieldType::i32: return i32;
      case FieldType::i64:
      case FieldType::timestamp: return i64;
      case FieldType::f64: return f64;
      case FieldType::boolean: return u8;
      case FieldType::str: return str;
    }
    return i64;
  };
  switch (fn) {
    case AggFunction::count: return Op::count;
    case AggFunction::sum:
      return by_type(Op::sum_i32, Op::sum_i64, Op::sum_f64, Op::sum_i64, Op::sum_i64);
    case AggFunction::avg:
      return by_type(Op::avg_i32, Op::avg_i64, Op::avg_f64, Op::avg_i64, Op::avg_i64);
    case AggFunction::min:
      return by_type(Op::min_i32, Op::min_i64, Op::min_f64, Op::min_u8, Op::min_str);
    case AggFunction::max:
      return by_type(Op::max_i32, Op::max_i64, Op::max_f64, Op::max_u8, Op::max_str);
    case AggFunction::first: return Op::first;
    case AggFunction::last: return Op::last;
  }
  return Op::count;
}

template <class T>
void take_min(std::byte* v, T x, bool fresh) {
  if (fresh || x < load<T>(v)) store(v, x);
}
template <class T>
void take_max(std::byte* v, T x, bool fresh) {
  if (fresh || load<T>(v) < x) store(v, x);
}

// One tuple's value (at `in`, time `t`) into an aggregate of a record whose count was `fresh`
// == (n == 0) before it. kValues: some aggregate reads the value columns, whose slot for this
// tuple is `values`; without them (every argument a field) the read is exactly in + offset.
template <bool kValues>
inline void update(const Agg& a, std::byte* rec, const std::byte* in, const std::byte* values,
                   std::int64_t t, bool fresh) {
  std::byte* aux = rec + a.at;
  std::byte* v = aux + 8;
  const std::byte* x = ((kValues && a.from_values) ? values : in) + a.in_offset;
  switch (a.op) {
    case Op::count: break;
    case Op::sum_i32:
    case Op::avg_i32:
      store(v, load<std::uint64_t>(v) +
                   static_cast<std::uint64_t>(std::int64_t{load<std::int32_t>(x)}));
      break;
    case Op::sum_i64:
    case Op::avg_i64: store(v, load<std::uint64_t>(v) + load<std::uint64_t>(x)); break;
    case Op::sum_f64:
    case Op::avg_f64: store(v, load<double>(v) + load<double>(x)); break;
    case Op::min_i32: take_min(v, load<std::int32_t>(x), fresh); break;
    case Op::min_i64: take_min(v, load<std::int64_t>(x), fresh); break;
    case Op::min_f64: take_min(v, load<double>(x), fresh); break;
    case Op::min_u8: take_min(v, load<std::uint8_t>(x), fresh); break;
    case Op::max_i32: take_max(v, load<std::int32_t>(x), fresh); break;
    case Op::max_i64: take_max(v, load<std::int64_t>(x), fresh); break;
    case Op::max_f64: take_max(v, load<double>(x), fresh); break;
    case Op::max_u8: take_max(v, load<std::uint8_t>(x), fresh); break;
    case Op::min_str:
      if (fresh || std::memcmp(x, v, a.width) < 0) std::memcpy(v, x, a.width);
      break;
    case Op::max_str:
      if (fresh || std::memcmp(v, x, a.width) < 0) std::memcpy(v, x, a.width);
      break;
    case Op::first:
      if (fresh || t < load<std::int64_t>(aux)) {
        store(aux, t);
        std::memcpy(v, x, a.width);
      }
      break;
    case Op::last:
      if (fresh || t >= load<std::int64_t>(aux)) {
        store(aux, t);
        std::memcpy(v, x, a.width);
      }
      break;
  }
}

// Merges a non-empty pane record `src` into a non-empty `dst`; `src` holds later times (or
// indexes) than dst only for first/last ordering ties, which the comparisons settle.
inline void merge(const Agg& a, std::byte* dst, const std::byte* src) {
  std::byte* daux = dst + a.at;
  std::byte* d = daux + 8;
  const std::byte* saux = src + a.at;
  const std::byte* s = saux + 8;
  switch (a.op) {
    case Op::count: break;
    case Op::sum_i32:
    case Op::avg_i32:
    case Op::sum_i64:
    case Op::avg_i64: store(d, load<std::uint64_t>(d) + load<std::uint64_t>(s)); break;
    case Op::sum_f64:
    case Op::avg_f64: store(d, load<double>(d) + load<double>(s)); break;
    case Op::min_i32: take_min(d, load<std::int32_t>(s), false); break;
    case Op::min_i64: take_min(d, load<std::int64_t>(s), false); break;
    case Op::min_f64: take_min(d, load<double>(s), false); break;
    case Op::min_u8: take_min(d, load<std::uint8_t>(s), false); break;
    case Op::max_i32: take_max(d, load<std::int32_t>(s), false); break;
    case Op::max_i64: take_max(d, load<std::int64_t>(s), false); break;
    case Op::max_f64: take_max(d, load<double>(s), false); break;
    case Op::max_u8: take_max(d, load<std::uint8_t>(s), false); break;
    case Op::min_str:
      if (std::memcmp(s, d, a.width) < 0) std::memcpy(d, s, a.width);
      break;
    case Op::max_str:
      if (std::memcmp(d, s, a.width) < 0) std::memcpy(d, s, a.width);
      break;
    case Op::first:
      if (load<std::int64_t>(saux) < load<std::int64_t>(daux)) {
        std::memcpy(daux, saux, 8);
        std::memcpy(d, s, a.width);
      }
      break;
    case Op::last:
      if (load<std::int64_t>(saux) >= load<std::int64_t>(daux)) {
        std::memcpy(daux, saux, 8);
        std::memcpy(d, s, a.width);
      }
      break;
  }
}

inline void finalize(const Agg& a, const std::byte* rec, std::int64_t n, std::byte* out) {
  const std::byte* v = rec + a.at + 8;
  std::byte* o = out + a.out_offset;
  switch (a.op) {
    case Op::count: store(o, n); break;
    case Op::sum_i32:
    case Op::sum_i64:
    case Op::sum_f64: std::memcpy(o, v, 8); break;
    case Op::avg_i32:
    case Op::avg_i64:
      store(o, static_cast<double>(load<std::int64_t>(v)) / static_cast<double>(n));
      break;
    case Op::avg_f64: store(o, load<double>(v) / static_cast<double>(n)); break;
    default: std::memcpy(o, v, a.width); break;
  }
}

}  // namespace boreal::ops::aggregate_detail
