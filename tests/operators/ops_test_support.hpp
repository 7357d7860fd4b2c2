// Helpers shared by the operator tests: schemas from text, unwrapping a box factory's result,
// rows printed as text for comparisons, and a box cut and restored from its saved state.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops::test_support {

// The schema for `text` ("seq:i64,sym:str8"); a parse error fails the test.
inline Schema schema_of(std::string_view text) {
  Result<Schema> schema = Schema::parse(text);
  EXPECT_TRUE(schema) << schema.error().describe();
  return std::move(schema).value();
}

// The box a make() returned; an error fails the test (and the null pointer then crashes it).
template <class T>
std::unique_ptr<T> ok(Result<std::unique_ptr<T>> made) {
  EXPECT_TRUE(made) << made.error().describe();
  return std::move(made).value();
}

// One row as text, field by field, comma-separated: "1700000000,IBM,3,101.500000".
inline std::string format_row(const Schema& schema, Row row) {
  std::string out;
  for (const Field& f : schema.fields()) {
    if (!out.empty()) out += ',';
    switch (f.type) {
      case FieldType::i32: out += std::to_string(FieldRef<std::int32_t>{f.offset}.get(row)); break;
      case FieldType::i64: out += std::to_string(FieldRef<std::int64_t>{f.offset}.get(row)); break;
      case FieldType::f64: out += std::to_string(FieldRef<double>{f.offset}.get(row)); break;
      case FieldType::boolean: out += FieldRef<bool>{f.offset}.get(row) ? "true" : "false"; break;
      case FieldType::timestamp:
        out += std::to_string(FieldRef<Timestamp>{f.offset}.get(row).time_since_epoch().count());
        break;
      case FieldType::str: out += FieldRef<std::string_view>{f.offset, f.width}.get(row); break;
    }
  }
  return out;
}

// The rows a box emits: as text (format_row) for a readable failure, and as their bytes, so
// that doubles compare exactly.
struct Emitted final : BatchConsumer {
  explicit Emitted(const Schema& of) : schema(of) {}
  void consume(const BatchView& batch) override {
    for (Row row : batch) {
      text.push_back(format_row(schema, row));
      bytes.emplace_back(reinterpret_cast<const char*>(row.data()), batch.tuple_bytes());
    }
  }
  void end() override { ++ends; }
  Schema schema;
  std::vector<std::string> text;
  std::vector<std::string> bytes;
  int ends = 0;
};

// One batch for input `port` of a box.
struct Feed {
  std::size_t port = 0;
  BatchView batch;
};

// What a box from `make()` emits on output 0 for `feed`, in order, and then every input
// finishing. With `cut`, a checkpoint (docs/faults.md) after the first `cut` batches: that box
// flushes and saves its state, and a fresh box from `make()` restores it and takes the rest.
template <class Make>
Emitted run_cut(const Make& make, const std::vector<Feed>& feed, std::optional<std::size_t> cut) {
  auto box = make();
  Emitted out(box->output(0).schema());
  box->output(0).connect(&out);
  for (std::size_t i = 0; i < feed.size(); ++i) {
    if (cut && i == *cut) {
      box->output(0).flush();
      std::vector<std::byte> state;
      EXPECT_TRUE(box->save_state(state)) << "cut at batch " << i;
      box = make();
      const Result<void> restored = box->restore_state(state);
      EXPECT_TRUE(restored) << "cut at batch " << i << ": " << restored.error().describe();
      box->output(0).connect(&out);
    }
    box->process(feed[i].port, feed[i].batch);
  }
  for (std::size_t port = 0; port < box->input_count(); ++port) box->finish(port);
  EXPECT_EQ(out.ends, 1);
  return out;
}

// A box restored at each of `cuts` (batch indexes into `feed`) emits exactly the rows of the
// box that ran uninterrupted, in the same order; that box emits some.
template <class Make>
void expect_restores_exactly(const Make& make, const std::vector<Feed>& feed,
                             const std::vector<std::size_t>& cuts) {
  const Emitted whole = run_cut(make, feed, std::nullopt);
  ASSERT_FALSE(whole.text.empty());
  for (std::size_t cut : cuts) {
    const Emitted got = run_cut(make, feed, cut);
    EXPECT_EQ(got.text, whole.text) << "cut at batch " << cut;
    EXPECT_TRUE(got.bytes == whole.bytes) << "cut at batch " << cut << ": the rows' bytes differ";
  }
}

// The message restore_state() gives for `state`, or "restored" when it takes it.
inline std::string restore_error(Box& box, std::span<const std::byte> state) {
  const Result<void> restored = box.restore_state(state);
  return restored ? std::string("restored") : restored.error().message;
}

// `box`'s saved state.
inline std::vector<std::byte> saved(const Box& box) {
  std::vector<std::byte> state;
  EXPECT_TRUE(box.save_state(state)) << box.type() << " saves no state";
  return state;
}

}  // namespace boreal::ops::test_support
