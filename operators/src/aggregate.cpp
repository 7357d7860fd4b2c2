// AggregateBox: group table, pane rings, window close and emission (see aggregate.hpp).
//
// Invariants.
// - A pane record is [tag i64][n i64] then per aggregate [aux i64][value, width rounded up to
//   8]. tag is the pane id it holds (kNoPane when never used); a record whose tag differs from
//   the pane asked for is stale and is reset on first touch, so rings are never cleared.
// - Time windows: W_ (watermark) only grows. Every window with end <= W_ has been emitted;
//   every accepted tuple has t >= W_, so it never lands in an emitted window, and its pane is
//   >= release_from_. Live panes span less than the ring (pane_ring_need), so two live panes
//   never share a ring slot.
#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <limits>
#include <numeric>

#include <boreal/ops/aggregate.hpp>

#include "aggregate_accumulator.hpp"
#include "aggregate_groups.hpp"
#include "aggregate_plan.hpp"
#include "state_io.hpp"

namespace boreal::ops {
namespace {

using namespace aggregate_detail;  // NOLINT: this file is the accumulators' only user

constexpr std::int64_t kNoPane = std::numeric_limits<std::int64_t>::min();

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::int64_t sat_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? std::numeric_limits<std::int64_t>::min() : r;
}

}  // namespace

struct AggregateBox::State {
  State(Schema in, std::vector<Field> group_fields)
      : input(std::move(in)), groups(std::move(group_fields)) {}

  Schema input;
  bool time = false;
  bool ts_type = false;
  bool time_i32 = false;
  std::uint32_t time_offset = 0;
  std::int64_t size = 0, slide = 0, pane = 0, panes_per_window = 0;
  std::int64_t slack = 0;
  std::optional<std::int64_t> timeout;
  std::vector<Agg> aggs;
  std::uint32_t pane_bytes = 16;
  std::size_t ring = 0;  // power of two
  std::size_t group_stride = 0;

  // Groups.
  GroupTable groups;
  std::vector<std::uint32_t> key_out;  // group-by fields' offsets in the output
  std::vector<std::byte> panes;  // groups * group_stride

  // Count windows: per group.
  struct Cursor {
    std::int64_t n = 0;           // tuples seen
    std::int64_t pane = 0;        // pane of tuple n
    std::int64_t pane_end = 0;    // first index of the next pane
    std::int64_t next_close = 0;  // index of the last tuple of the next window to close
  };
  std::vector<Cursor> cursors;

  // Time windows.
  struct RingPane {
    std::int64_t tag = kNoPane;
    std::vector<std::uint32_t> gids;  // groups with data in this pane, first-touch order
  };
  std::vector<RingPane> pane_ring;
  bool started = false;
  std::int64_t watermark = std::numeric_limits<std::int64_t>::min();
  std::int64_t max_time = std::numeric_limits<std::int64_t>::min();
  std::int64_t next_k = 0, next_end = 0;
  std::int64_t release_from = 0;
  std::size_t live_panes = 0;
  std::int64_t cur_pane = kNoPane, cur_lo = 0;  // cache of the last pane computed
  std::uint64_t dropped = 0;

  std::vector<std::uint32_t> gid_scratch;
  std::vector<std::byte> merged;

  // Expression arguments: exprs[j] fills value column j (Expr::kChunkRows slots of 8 bytes)
  // for the chunk of the batch being added; see aggregate_accumulator.hpp.
  std::vector<Expr> exprs;
  std::vector<std::byte> values;
  std::array<std::int64_t, Expr::kChunkRows> ints{};
  std::array<double, Expr::kChunkRows> floats{};
  std::array<bool, Expr::kChunkRows> bools{};

  void fill_values(const BatchView& batch, std::size_t first) {
    const std::size_t count = std::min(Expr::kChunkRows, batch.size() - first);
    for (std::size_t j = 0; j < exprs.size(); ++j) {
      std::byte* column = values.data() + j * Expr::kChunkRows * 8;
      Expr& e = exprs[j];
      switch (e.kind()) {
        case ValueKind::integer:
          e.eval_int_batch(batch, first, count, ints.data());
          std::memcpy(column, ints.data(), count * 8);
          break;
        case ValueKind::floating:
          e.eval_float_batch(batch, first, count, floats.data());
          std::memcpy(column, floats.data(), count * 8);
          break;
        case ValueKind::boolean:
          e.eval_bool_batch(batch, first, count, bools.data());
          for (std::size_t i = 0; i < count; ++i) column[i * 8] = std::byte{bools[i]};
          break;
        case ValueKind::string: break;  // refused by validate()
      }
    }
  }

  Output* out = nullptr;

  // The row's group, giving a new group its pane ring (and count cursor).
  template <KeyMode M>
  std::uint32_t group_of(const std::byte* row) {
    bool added;
    const std::uint32_t g = groups.find<M>(row, added);
    if (added) [[unlikely]] {
      panes.resize(panes.size() + group_stride);
      for (std::size_t r = 0; r < ring; ++r) {
        store(panes.data() + std::size_t{g} * group_stride + r * pane_bytes, kNoPane);
      }
      if (!time) cursors.push_back(Cursor{0, 0, pane, size - 1});
    }
    return g;
  }

  std::byte* record(std::uint32_t g, std::int64_t q) {
    return panes.data() + std::size_t{g} * group_stride +
           (static_cast<std::size_t>(q) & (ring - 1)) * pane_bytes;
  }

  // The record of pane q for group g, reset if stale; `fresh_pane` says it was.
  std::byte* touch(std::uint32_t g, std::int64_t q, bool& fresh_pane) {
    std::byte* rec = record(g, q);
    fresh_pane = load<std::int64_t>(rec) != q;
    if (fresh_pane) {
      store(rec, q);
      std::memset(rec + 8, 0, pane_bytes - 8);
    }
    return rec;
  }

  template <bool kValues>
  void add_tuple(std::byte* rec, const std::byte* row, const std::byte* vals, std::int64_t t) {
    const std::int64_t n = load<std::int64_t>(rec + 8);
    for (const Agg& a : aggs) update<kValues>(a, rec, row, vals, t, n == 0);
    store(rec + 8, n + 1);
  }

  // ---- emission ----
  // Merges group g's panes [q0, q0 + count) that hold data and appends one output row.
  void emit(std::uint32_t g, std::int64_t q0, std::int64_t count, std::int64_t start,
            std::int64_t end) {
    std::byte* m = merged.data();
    std::int64_t n = 0;
    for (std::int64_t q = q0; q < q0 + count; ++q) {
      const std::byte* rec = record(g, q);
      if (load<std::int64_t>(rec) != q) continue;
      const std::int64_t pn = load<std::int64_t>(rec + 8);
      if (pn == 0) continue;
      if (n == 0) {
        std::memcpy(m, rec, pane_bytes);
      } else {
        for (const Agg& a : aggs) merge(a, m, rec);
      }
      n += pn;
    }
    if (n == 0) return;
    MutRow row = out->append();
    std::byte* o = row.data();
    const std::byte* key = groups.key(g);
    for (std::size_t i = 0; i < key_out.size(); ++i) {
      std::memcpy(o + key_out[i], key, groups.fields()[i].width);
      key += groups.fields()[i].width;
    }
    store(o + key_out_window, start);
    store(o + key_out_window + 8, end);
    for (const Agg& a : aggs) finalize(a, m, n, o);
    if (partial_out >= 0) o[partial_out] = std::byte{flushing ? std::uint8_t{1} : std::uint8_t{0}};
  }
  std::uint32_t key_out_window = 0;  // offset of window_start (window_end follows)
  std::int64_t partial_out = -1;     // offset of the partial_field column, or -1
  bool flushing = false;             // emitting windows before their end (finish, timeout)

  // ---- count windows ----
  template <bool kValues>
  void count_tuple(std::uint32_t g, const std::byte* row, const std::byte* vals) {
    Cursor& c = cursors[g];
    const std::int64_t i = c.n++;
    if (i == c.pane_end) {
      ++c.pane;
      c.pane_end += pane;
    }
    bool fresh;
    std::byte* rec = touch(g, c.pane, fresh);
    add_tuple<kValues>(rec, row, vals, i);
    if (i == c.next_close) {
      const std::int64_t start = i + 1 - size;
      emit(g, start / pane, panes_per_window, start, i);
      c.next_close += slide;
    }
  }

  void count_end() {
    flushing = true;
    for (std::uint32_t g = 0; g < groups.size(); ++g) {
      const Cursor& c = cursors[g];
      for (std::int64_t start = c.next_close + 1 - size; start < c.n; start += slide) {
        emit(g, start / pane, panes_per_window, start, c.n - 1);
      }
    }
  }

  // ---- time windows ----
  std::int64_t pane_of(std::int64_t t) {
    if (t - cur_lo >= 0 && t - cur_lo < pane && cur_pane != kNoPane) return cur_pane;
    cur_pane = floor_div(t, pane);
    cur_lo = cur_pane * pane;
    return cur_pane;
  }

  std::int64_t first_window_ending_after(std::int64_t w) const {
    return floor_div(sat_sub(w, size), slide) + 1;
  }

  template <bool kValues>
  void time_tuple(const std::byte* row, const std::byte* vals, std::uint32_t g, std::int64_t t) {
    const std::int64_t q = pane_of(t);
    bool fresh;
    std::byte* rec = touch(g, q, fresh);
    if (fresh) {
      RingPane& rp = pane_ring[static_cast<std::size_t>(q) & (ring - 1)];
      if (rp.tag != q) {
        assert(rp.tag == kNoPane);
        rp.tag = q;
        ++live_panes;
      }
      rp.gids.push_back(g);
    }
    add_tuple<kValues>(rec, row, vals, t);
  }

  // Accepts t (returns false if late), moving the watermark and closing windows first.
  bool admit(std::int64_t t) {
    if (t < watermark) {
      ++dropped;
      return false;
    }
    if (t > max_time) {
      max_time = t;
      const std::int64_t w = sat_sub(t, slack);
      if (!started) {
        started = true;
        watermark = w;
        next_k = first_window_ending_after(w);
        next_end = next_k * slide + size;
        release_from = floor_div(next_k * slide, pane);
      } else if (w > watermark) {
        watermark = w;
        if (watermark >= next_end) close_through();
      }
    }
    return true;
  }

  void release_below(std::int64_t bound) {
    if (bound - release_from > static_cast<std::int64_t>(ring)) {
      for (RingPane& rp : pane_ring) {
        if (rp.tag != kNoPane && rp.tag < bound) release(rp);
      }
    } else {
      for (std::int64_t q = release_from; q < bound; ++q) {
        RingPane& rp = pane_ring[static_cast<std::size_t>(q) & (ring - 1)];
        if (rp.tag == q) release(rp);
      }
    }
    release_from = std::max(release_from, bound);
  }
  void release(RingPane& rp) {
    rp.tag = kNoPane;
    rp.gids.clear();
    --live_panes;
  }

  // Emits every window with end <= watermark, skipping long runs of empty windows.
  void close_through() {
    while (next_end <= watermark) {
      if ((watermark - next_end) / slide > static_cast<std::int64_t>(ring)) {
        std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
        for (const RingPane& rp : pane_ring) {
          if (rp.tag != kNoPane) lowest = std::min(lowest, rp.tag);
        }
        const std::int64_t target = live_panes == 0 ? first_window_ending_after(watermark)
                                                    : first_window_ending_after(lowest * pane);
        if (target > next_k) {
          next_k = target;
          next_end = next_k * slide + size;
          release_below(floor_div(next_k * slide, pane));
          continue;
        }
      }
      close_window(next_k);
      ++next_k;
      next_end += slide;
      release_below(floor_div(next_k * slide, pane));
    }
  }

  void close_window(std::int64_t k) {
    if (live_panes == 0) return;
    const std::int64_t start = k * slide;
    const std::int64_t q0 = floor_div(start, pane);
    gid_scratch.clear();
    for (std::int64_t q = q0; q < q0 + panes_per_window; ++q) {
      const RingPane& rp = pane_ring[static_cast<std::size_t>(q) & (ring - 1)];
      if (rp.tag == q) gid_scratch.insert(gid_scratch.end(), rp.gids.begin(), rp.gids.end());
    }
    if (gid_scratch.empty()) return;
    std::sort(gid_scratch.begin(), gid_scratch.end());
    if (panes_per_window > 1) {
      gid_scratch.erase(std::unique(gid_scratch.begin(), gid_scratch.end()), gid_scratch.end());
    }
    for (std::uint32_t g : gid_scratch) emit(g, q0, panes_per_window, start, start + size);
  }

  // Emits every window holding data; the watermark moves to the end of the last.
  void close_all() {
    if (!started || live_panes == 0) return;
    const std::int64_t last_end = floor_div(max_time, slide) * slide + size;
    watermark = std::max(watermark, last_end);
    // Every window that time closed has been emitted already: the rest are early.
    flushing = true;
    close_through();
    flushing = false;
  }

  std::int64_t time_of(const std::byte* row) const {
    if (time_i32) return load<std::int32_t>(row + time_offset);
    return load<std::int64_t>(row + time_offset);
  }

  // kValues: some argument is an expression; its values for the next kChunkRows rows are
  // computed before the first of them is added (a late tuple's values go unused).
  template <bool kTime, KeyMode M, bool kValues>
  void run(const BatchView& batch) {
    const std::byte* row = batch.size() == 0 ? nullptr : batch.row(0).data();
    const std::uint32_t stride = batch.tuple_bytes();
    for (std::size_t i = 0; i < batch.size(); ++i, row += stride) {
      const std::byte* vals = nullptr;
      if constexpr (kValues) {
        const std::size_t slot = i % Expr::kChunkRows;
        if (slot == 0) fill_values(batch, i);
        vals = values.data() + slot * 8;
      }
      if constexpr (kTime) {
        const std::int64_t t = time_of(row);
        if (!admit(t)) continue;
        time_tuple<kValues>(row, vals, group_of<M>(row), t);
      } else {
        count_tuple<kValues>(group_of<M>(row), row, vals);
      }
    }
  }

  template <bool kTime, bool kValues>
  void dispatch_keys(const BatchView& batch) {
    switch (groups.mode()) {
      case KeyMode::none: run<kTime, KeyMode::none, kValues>(batch); break;
      case KeyMode::word: run<kTime, KeyMode::word, kValues>(batch); break;
      case KeyMode::bytes: run<kTime, KeyMode::bytes, kValues>(batch); break;
    }
  }

  template <bool kTime>
  void dispatch(const BatchView& batch) {
    if (exprs.empty()) {
      dispatch_keys<kTime, false>(batch);
    } else {
      dispatch_keys<kTime, true>(batch);
    }
  }
};

Result<std::unique_ptr<AggregateBox>> AggregateBox::make(const AggregateParams& params,
                                                         const Schema& input,
                                                         std::size_t batch_rows) {
  Result<Schema> output = params.output_schema(input);
  if (!output) return fail(output.error().message);
  const Schema& out = output.value();
  std::vector<Field> group_fields;
  for (const std::string& name : params.group_by) {
    group_fields.push_back(input.field(*input.index_of(name)));
  }
  auto s = std::make_unique<State>(input, std::move(group_fields));
  s->time = params.window.kind() == WindowKind::time;
  if (s->time) {
    const Field& f = input.field(*input.index_of(params.window.field));
    s->time_offset = f.offset;
    s->time_i32 = f.type == FieldType::i32;
    s->ts_type = f.type == FieldType::timestamp;
    s->slack = params.slack.count();
    if (params.timeout) s->timeout = params.timeout->count();
  }
  s->size = static_cast<std::int64_t>(window_units(params.window.size));
  s->slide = static_cast<std::int64_t>(window_units(params.window.slide));
  s->pane = std::gcd(s->size, s->slide);
  s->panes_per_window = s->size / s->pane;
  s->ring = std::bit_ceil(pane_ring_need(window_units(params.window.size),
                                         window_units(params.window.slide),
                                         static_cast<std::uint64_t>(s->slack)));
  std::uint32_t at = 16;
  std::size_t out_index = params.group_by.size() + 2;
  for (const AggregateField& a : params.aggregates) {
    const AggFunction fn = *parse_agg_function(a.function);
    Agg agg{};
    if (fn == AggFunction::count) {
      agg.op = Op::count;
    } else if (is_expression_argument(a.field, input)) {
      Expr e = Expr::compile(a.field, input).value();
      const FieldType type = expression_field_type(e.kind());
      agg.op = pick_op(fn, type);
      agg.from_values = true;
      agg.in_offset = static_cast<std::uint32_t>(s->exprs.size() * Expr::kChunkRows * 8);
      agg.width = type == FieldType::boolean ? 1 : 8;
      s->exprs.push_back(std::move(e));
    } else {
      const Field& f = input.field(*input.index_of(a.field));
      agg.op = pick_op(fn, f.type);
      agg.in_offset = f.offset;
      agg.width = f.width;
    }
    agg.at = at;
    at += 8 + (std::max<std::uint32_t>(agg.width, 8) + 7) / 8 * 8;
    agg.out_offset = out.field(out_index++).offset;
    s->aggs.push_back(agg);
  }
  s->values.resize(s->exprs.size() * Expr::kChunkRows * 8);
  s->pane_bytes = at;
  s->group_stride = s->ring * s->pane_bytes;
  s->merged.resize(s->pane_bytes);
  for (std::size_t i = 0; i < params.group_by.size(); ++i) {
    s->key_out.push_back(out.field(i).offset);
  }
  s->key_out_window = out.field(params.group_by.size()).offset;
  if (!params.partial_field.empty()) s->partial_out = out.field(out.field_count() - 1).offset;
  if (s->time) s->pane_ring.resize(s->ring);
  return std::unique_ptr<AggregateBox>(new AggregateBox(std::move(s), out, batch_rows));
}

AggregateBox::AggregateBox(std::unique_ptr<State> state, Schema output, std::size_t batch_rows)
    : state_(std::move(state)) {
  outputs_.emplace_back(std::move(output), batch_rows);
  state_->out = &outputs_[0];
}

AggregateBox::~AggregateBox() = default;

const Schema& AggregateBox::input_schema(std::size_t port) const noexcept {
  (void)port;
  return state_->input;
}

void AggregateBox::on_batch(std::size_t port, const BatchView& batch) {
  assert(port == 0);
  (void)port;
  if (state_->time) {
    state_->dispatch<true>(batch);
  } else {
    state_->dispatch<false>(batch);
  }
}

void AggregateBox::tick(std::int64_t now) {
  State& s = *state_;
  if (!s.time || !s.timeout || !s.started || s.live_panes == 0) return;
  if (sat_sub(now, *s.timeout) >= s.max_time) s.close_all();
}

void AggregateBox::on_end() {
  if (state_->time) {
    state_->close_all();
  } else {
    state_->count_end();
  }
}

namespace {

using detail::put;
using detail::put_bytes;
using detail::StateReader;

constexpr std::uint32_t kStateMagic = 0x41475331;  // "AGS1"

}  // namespace

bool AggregateBox::save_state(std::vector<std::byte>& out) const {
  const State& s = *state_;
  put(out, kStateMagic);
  put(out, s.groups.size());
  std::size_t key_bytes = 0;
  for (const Field& f : s.groups.fields()) key_bytes += f.width;
  put_bytes(out, s.groups.size() == 0 ? nullptr : s.groups.key(0), key_bytes * s.groups.size());
  put_bytes(out, s.panes.data(), s.panes.size());
  put_bytes(out, s.cursors.data(), s.cursors.size() * sizeof(State::Cursor));
  put(out, static_cast<std::uint64_t>(s.pane_ring.size()));
  for (const auto& pane : s.pane_ring) {
    put(out, pane.tag);
    put_bytes(out, pane.gids.data(), pane.gids.size() * sizeof(std::uint32_t));
  }
  put(out, static_cast<std::uint8_t>(s.started));
  for (std::int64_t v : {s.watermark, s.max_time, s.next_k, s.next_end, s.release_from,
                         s.cur_pane, s.cur_lo}) {
    put(out, v);
  }
  put(out, static_cast<std::uint64_t>(s.live_panes));
  put(out, s.dropped);
  return true;
}

Result<void> AggregateBox::restore_state(std::span<const std::byte> in) {
  State& s = *state_;
  if (s.groups.size() != 0 || s.started) return fail("restore_state on an aggregate that has run");
  StateReader r{in};
  auto bad = [](const std::string& what) { return fail("aggregate state: " + what); };
  if (r.get<std::uint32_t>() != kStateMagic) return bad("not an aggregate's saved state");
  const auto groups = r.get<std::uint32_t>();
  const auto keys = r.bytes();
  const auto panes = r.bytes();
  const auto cursors = r.bytes();
  std::size_t key_bytes = 0;
  for (const Field& f : s.groups.fields()) key_bytes += f.width;
  if (r.bad || keys.size() != key_bytes * groups || panes.size() != s.group_stride * groups ||
      cursors.size() != (s.time ? 0 : groups * sizeof(State::Cursor))) {
    return bad("sizes do not fit this aggregate's groups and windows");
  }
  // The groups again, in id order, from rows holding just their keys.
  std::vector<std::byte> row(s.input.tuple_bytes());
  for (std::uint32_t g = 0; g < groups; ++g) {
    const std::byte* key = keys.data() + std::size_t{g} * key_bytes;
    for (const Field& f : s.groups.fields()) {
      std::memcpy(row.data() + f.offset, key, f.width);
      key += f.width;
    }
    std::uint32_t got = 0;
    switch (s.groups.mode()) {
      case KeyMode::none: got = s.group_of<KeyMode::none>(row.data()); break;
      case KeyMode::word: got = s.group_of<KeyMode::word>(row.data()); break;
      case KeyMode::bytes: got = s.group_of<KeyMode::bytes>(row.data()); break;
    }
    if (got != g) return bad("group keys repeat");
  }
  if (!panes.empty()) std::memcpy(s.panes.data(), panes.data(), panes.size());
  if (!cursors.empty()) std::memcpy(s.cursors.data(), cursors.data(), cursors.size());
  const auto ring = r.get<std::uint64_t>();
  if (r.bad || ring != s.pane_ring.size()) return bad("pane ring of another size");
  for (auto& pane : s.pane_ring) {
    pane.tag = r.get<std::int64_t>();
    const auto gids = r.bytes();
    pane.gids.resize(gids.size() / sizeof(std::uint32_t));
    if (!gids.empty()) std::memcpy(pane.gids.data(), gids.data(), gids.size());
    for (std::uint32_t gid : pane.gids) {
      if (gid >= groups) return bad("a pane names group " + std::to_string(gid));
    }
  }
  s.started = r.get<std::uint8_t>() != 0;
  for (std::int64_t* v : {&s.watermark, &s.max_time, &s.next_k, &s.next_end, &s.release_from,
                          &s.cur_pane, &s.cur_lo}) {
    *v = r.get<std::int64_t>();
  }
  s.live_panes = r.get<std::uint64_t>();
  s.dropped = r.get<std::uint64_t>();
  if (r.bad || !r.in.empty()) return bad("truncated or followed by other bytes");
  return success();
}

std::uint64_t AggregateBox::dropped_late() const noexcept { return state_->dropped; }
std::size_t AggregateBox::group_count() const noexcept { return state_->groups.size(); }

}  // namespace boreal::ops
