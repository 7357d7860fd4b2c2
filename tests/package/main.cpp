// Uses boreal::operators from an installed package: builds a batch of 100 rows, reads it back
// through a view of its payload bytes (what a receiving node would do with a frame), and
// prints a checksum line that PackageTest.cmake compares with the known value.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/schema.hpp>

namespace ops = boreal::ops;

namespace {

int failed(const char* what, const std::string& detail) {
  std::fprintf(stderr, "consumer: %s: %s\n", what, detail.c_str());
  return 1;
}

}  // namespace

int main() {
  ops::Result<ops::Schema> parsed =
      ops::Schema::parse("seq:i64,ts:timestamp,price:f64,ok:bool,sym:str8");
  if (!parsed) return failed("schema", parsed.error().describe());
  const ops::Schema& schema = parsed.value();

  auto seq = ops::FieldRef<std::int64_t>::bind(schema, "seq");
  auto ts = ops::FieldRef<ops::Timestamp>::bind(schema, "ts");
  auto price = ops::FieldRef<double>::bind(schema, "price");
  auto ok = ops::FieldRef<bool>::bind(schema, "ok");
  auto sym = ops::FieldRef<std::string_view>::bind(schema, "sym");
  if (!seq || !ts || !price || !ok || !sym) return failed("bind", "a field did not bind");
  auto wrong = ops::FieldRef<double>::bind(schema, "seq");
  if (wrong) return failed("bind", "binding an i64 field as double succeeded");

  constexpr int kRows = 100;
  ops::OwnedBatch batch(schema, kRows);
  for (int i = 0; i < kRows; ++i) {
    ops::MutRow row = batch.append();
    seq.value().set(row, i);
    ts.value().set(row, ops::Timestamp(std::chrono::seconds(i)));
    price.value().set(row, 0.25 * i);
    ok.value().set(row, i % 3 == 0);
    sym.value().set(row, "s" + std::to_string(i));
  }
  if (!batch.full()) return failed("batch", "not full after capacity_rows() appends");

  ops::Result<ops::BatchView> view = ops::BatchView::wrap(batch.bytes(), schema);
  if (!view) return failed("wrap", view.error().describe());

  std::int64_t seq_sum = 0;
  std::int64_t ts_sum_s = 0;
  double price_sum = 0;
  int ok_count = 0;
  std::size_t sym_bytes = 0;
  for (ops::Row row : view.value()) {
    seq_sum += seq.value().get(row);
    ts_sum_s += std::chrono::duration_cast<std::chrono::seconds>(
                    ts.value().get(row).time_since_epoch())
                    .count();
    price_sum += price.value().get(row);
    ok_count += ok.value().get(row) ? 1 : 0;
    sym_bytes += sym.value().get(row).size();
  }
  // FNV-1a of the payload pins the byte layout, which is the wire format.
  std::uint64_t payload_hash = 14695981039346656037ull;
  for (std::byte b : view.value().bytes()) {
    payload_hash = (payload_hash ^ static_cast<std::uint64_t>(b)) * 1099511628211ull;
  }

  std::printf("consumer: rows=%zu tuple_bytes=%u schema_hash=%016llx seq=%lld ts=%lld "
              "price=%.2f ok=%d sym_bytes=%zu payload_fnv=%016llx\n",
              view.value().size(), schema.tuple_bytes(),
              static_cast<unsigned long long>(schema.hash()), static_cast<long long>(seq_sum),
              static_cast<long long>(ts_sum_s), price_sum, ok_count, sym_bytes,
              static_cast<unsigned long long>(payload_hash));
  return 0;
}
