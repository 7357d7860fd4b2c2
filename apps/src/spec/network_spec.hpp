// A query network as written in its YAML file (docs/design.md "Query networks and the runtime"):
// schemas, nodes, transport defaults, boxes and per-stream link overrides, checked as a whole,
// plus the streams ("arrows") derived from the boxes' inputs and outputs.
//
// File format (every key is listed; anything else is reported as an unknown key):
//
//   name: demo                       required
//   cluster_token: 42                optional unsigned integer (link handshakes); default
//                                    default_cluster_token(name)
//   schemas:                         name -> list of {field: type} (ops/schema.hpp's types)
//     tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]
//   nodes:                           required; name and address (uri.hpp) each required
//     - {name: src, address: "tcp://127.0.0.1:7101"}
//   transport:                       defaults of every link; every key optional
//     {medium: tcp, provider: "tcp;ofi_rxm", wait: sleep, latency_budget_us: 200, spin_us: 20,
//      batch_bytes: 32768, flush_us: half the budget, window: 64, connection: per-link}
//   boxes:                           required; name, type, node required
//     - {name: gen, type: source, node: src, out: ticks, schema: tick, params: {...}}
//   links:                           optional; stream required, then any transport key
//     - {stream: ticks, wait: block}
//
// `in` and `out` take one stream name or a list. `schema` names the schema of a source's output
// (required) or asserts the schema of any other box's output (a sink: the schema it expects
// to receive). Every other stream's schema is derived by the boxes themselves, in the order
// of the arrows (box_types.hpp plans each operator box from its params and input schemas).
//
// Source params: kind (generator | csv; default generator). A generator: rate (tuples/s, a
// positive number, "max" or "idle"; default "max"), tuples and duration_s (stop at whichever
// comes first; 0 = no limit; default 0), seed (default 1), keys (distinct key values; default
// 1000), key_field (default "key" when the schema has it), distribution (uniform | zipf),
// zipf_s (default 1), values (a list of {field, min, max}: uniform numeric values),
// seq_field (default "seq"), time_field (default "ts"), start_ns (fixed scheduled times).
// A csv source: path (required; a header line naming the schema's fields) and rate. A nexmark
// source (docs/nexmark.md) has no `schema` (each stream's is fixed) and one to three outputs:
// streams (each output's kind: persons, auctions, bids or events; default events for one
// output, persons, auctions, bids for three), events (event ids to walk, of every kind; 0 = no
// limit), rate (events/s), duration_s, first_event, gap_us (default 10), max_delay_ms
// (default 0), stamp (default false: add ts:timestamp, the event's scheduled send time, to
// each stream, for latency sinks). Sink
// params: kind (check | count | discard | latency | csv; default check), output (a CSV file, with a
// header line, of every tuple received, in order; default none), field (latency: the time field;
// default "ts") and slow_us_per_frame (a test hook that makes the sink slow; default 0).
//
// Media and addresses. A stream between nodes goes over its `medium`. When neither the
// `transport` block nor its `links` entry names one, a stream into a node whose address is
// fabric://... uses fabric-msg, else tcp. The fabric media use a libfabric provider: the
// stream's `provider` key (or --provider), else the one in the receiving node's fabric://
// address, else "tcp;ofi_rxm" (fabric_provider()). A node receives on its address's host and
// port, with TCP or with one libfabric endpoint; when it receives over both, the libfabric
// endpoint takes the next port (fabric_listen_port()). Every fabric stream into one node must
// use the same provider.
//
// Errors. parse_network() checks everything it can and returns every problem at once, each as
// "file:line:col: path: what", sorted in file order (line and column are 1-based; the path is
// the YAML path such as boxes[1].params.rate).
//
// Threading: plain values; the functions are pure and may be called from any thread.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/outcome/result.hpp>
#include <boreal/ops/schema.hpp>
#include <boreal/ops/nexmark.hpp>
#include <boreal/ops/source.hpp>
#include <boreal/transport/wait_mode.hpp>
#include <yaml-cpp/yaml.h>

#include "spec/uri.hpp"

namespace boreal::runtime {

// Media by name (docs/design.md "Transport").
inline constexpr std::array<std::string_view, 2> kConnections = {"per-link", "per-thread-pair"};
inline constexpr std::array<std::string_view, 4> kMedia = {"tcp", "inproc", "fabric-msg",
                                                           "fabric-rma"};
// The libfabric provider of a fabric link that names none, and whose receiving node's address
// names none either: libfabric's tcp provider under the rxm utility layer (runs anywhere).
inline constexpr std::string_view kDefaultProvider = "tcp;ofi_rxm";

// fabric-msg or fabric-rma.
[[nodiscard]] bool is_fabric(std::string_view medium) noexcept;
// Box types the file may name: the two edges and the operators of box_types.hpp.
inline constexpr std::array<std::string_view, 11> kBoxTypes = {
    "source", "sink",  "filter",   "map",   "union", "aggregate",
    "join",   "bsort", "resample", "split", "argmax"};

// Every located problem found in a file (or in command-line overrides), in file order.
struct SpecErrors {
  std::vector<std::string> messages;  // "demo.yaml:14:11: boxes[1].node: unknown node 'dts' ..."

  // The messages, one per line, no trailing newline.
  [[nodiscard]] std::string joined() const;
};

template <class T>
using SpecResult =
    boost::outcome_v2::basic_result<T, SpecErrors, boost::outcome_v2::policy::terminate>;

// 1-based position in the file; 0 when the value did not come from a file.
struct SourcePos {
  int line = 0;
  int column = 0;
  friend bool operator==(const SourcePos&, const SourcePos&) = default;
};

// How one link is set up: the `transport` block, a `links` entry over it, then CLI flags.
struct TransportSpec {
  std::string medium = "tcp";  // one of kMedia
  std::string provider;        // fabric media: libfabric provider; empty = see fabric_provider()
  transport::WaitConfig wait;  // wait, latency_budget_us, spin_us
  // A partly filled frame is sent after this long: flush_us if given, else half the latency
  // budget (the receiver's waits get the other half).
  std::chrono::microseconds flush{100};
  bool flush_given = false;
  std::uint32_t batch_bytes = 32768;     // largest frame payload; holds at least one tuple
  std::uint32_t window = 64;             // frames of receive credit
  // tcp: "per-link", a connection of its own for each link, or "per-thread-pair", one for
  // all the links from a sending thread to a receiving node's thread (docs/design.md, "One
  // tcp connection per pair of threads").
  std::string connection = "per-link";

  // Its tcp links share a connection per pair of threads (validation allows per-thread-pair
  // on tcp only).
  [[nodiscard]] bool shares_connection() const noexcept {
    return medium == "tcp" && connection == "per-thread-pair";
  }
};

struct NodeSpec {
  std::string name;
  std::string address;  // as written
  Uri uri;              // parsed address
  // I/O threads (1 .. kMaxThreads); each runs its boxes and links with its own wait mode.
  std::uint32_t threads = 1;
  // Where the node keeps its checkpoint (docs/faults.md); empty: it keeps none, and a restart
  // of it cannot resume its input streams.
  std::string checkpoint;
};

inline constexpr std::uint32_t kMaxThreads = 64;
// The boxes a checkpointing node may run (docs/faults.md): those without state between
// tuples, and those whose state a checkpoint saves (ops::Box::save_state), unless the wall
// clock drives them (ticks_on_clock(), and any aggregate with a `timeout`): parse_network()
// refuses those.
inline constexpr std::array<std::string_view, 10> kCheckpointableBoxes = {
    "filter", "map", "union", "split", "sink", "aggregate", "join", "bsort", "resample",
    "argmax"};
[[nodiscard]] inline bool checkpoint_saves_state(std::string_view box_type) {
  return box_type == "aggregate" || box_type == "join" || box_type == "bsort" ||
         box_type == "resample" || box_type == "argmax";
}

enum class SourceKind : std::uint8_t { generator, csv, nexmark };

struct ValueSpec {
  std::string field;
  double min = 0;
  double max = 0;
};

struct SourceParams {
  SourceKind kind = SourceKind::generator;
  std::string path;  // csv: the file to read
  // nexmark: the event stream of each output, in `out` order (ops/nexmark.hpp), the events
  // to walk (0 = no count limit), the first event id, µs of event time per event, and the
  // bounded out-of-orderness of date_time in ms.
  std::vector<ops::NexmarkStream> streams;
  std::uint64_t events = 0;
  std::uint64_t first_event = 0;
  std::uint32_t gap_us = 10;
  std::uint32_t max_delay_ms = 0;
  bool stamp = false;  // nexmark: add ts:timestamp, each event's scheduled send time
  // tuples/s (nexmark: events/s of every kind); nullopt = "max" (as fast as credit allows);
  // 0 = "idle": the link is open and the source sends nothing until its duration ends (what
  // waiting costs with no traffic)
  std::optional<double> rate;
  std::uint64_t tuples = 0;                   // stop after this many; 0 = no count limit
  std::chrono::duration<double> duration{0};  // stop after this long; 0 = no time limit
  std::uint64_t seed = 1;
  std::uint64_t keys = 1000;  // distinct values of the key field
  std::string key_field;      // empty: "key" when the schema has such a field, else none
  bool zipf = false;          // keys Zipf-distributed (else uniform)
  double zipf_s = 1.0;
  std::vector<ValueSpec> values;
  std::string seq_field = "seq";
  std::string time_field = "ts";
  // Scheduled times start here (ns) instead of at the run's start, so the output is the same
  // in every run (for tests and differential runs; latency figures then mean nothing).
  std::optional<std::int64_t> start_ns;
};

enum class SinkKind : std::uint8_t {
  check,    // verify order, loss, duplicates and content CRC; latency histogram
  count,    // count tuples only
  discard,  // drop everything (measures the transport alone)
  latency,  // latency histogram of a time field only
  csv,      // write every tuple to `output` (required), in order; counts like count
};
[[nodiscard]] std::string_view to_string(SinkKind kind) noexcept;

struct SinkParams {
  SinkKind kind = SinkKind::check;
  std::chrono::microseconds slow_per_frame{0};  // test hook: stall this long per frame
  std::string output;  // when set: every received tuple is written to this CSV file, in order
  std::string field = "ts";  // latency: the time field
};

struct BoxPlan;    // box_types.hpp
struct YamlValue;  // spec_yaml.hpp

struct BoxSpec {
  std::string name;
  std::string type;  // one of kBoxTypes
  std::string node;
  std::vector<std::string> inputs;   // stream names, as listed
  std::vector<std::string> outputs;  // stream names, as listed
  std::uint32_t thread = 0;          // the node's I/O thread that runs it
  std::string schema;                // as written; empty when absent
  YAML::Node params;                 // as written (a null node when absent). A YAML::Node refers
                                     // into the parsed tree: copies share it, and `=` onto a bound
                                     // node overwrites that tree node (rebind with reset() instead)
  std::optional<SourceParams> source;  // set for type "source"
  std::optional<SinkParams> sink;      // set for type "sink"
  SourcePos pos;                       // where the box's `type` is written
  // Operator boxes: the plan derived from params and input schemas (output schemas, maker).
  std::shared_ptr<const BoxPlan> plan;
  // Where the box and its params are written, to plan it again after --tuple-bytes.
  std::shared_ptr<const YamlValue> at;
  std::shared_ptr<const YamlValue> params_at;  // null when the box has no params
};

// One arrow: a named stream from its producer box to its consumer boxes.
struct StreamSpec {
  std::string name;
  std::uint32_t id = 0;  // 1-based, in order of first mention in the file; stable for a file
  std::string schema;  // the name its producer gives (a source's, or an asserted one); may be empty
  std::optional<ops::Schema> tuple_schema;  // the schema it carries, derived; unset only on errors
  std::string producer;  // box name
  std::string producer_node;
  std::vector<std::string> consumers;       // box names, in file order
  std::vector<std::string> consumer_nodes;  // consumer_nodes[i] runs consumers[i]
  bool crosses_nodes = false;               // some consumer runs on another node than the producer
  TransportSpec transport;                  // effective: defaults, then the link override

  // Some box on `node` consumes it.
  [[nodiscard]] bool consumed_on(std::string_view node) const {
    return std::find(consumer_nodes.begin(), consumer_nodes.end(), node) != consumer_nodes.end();
  }
  // `node` runs an end of its link: it produces a stream that crosses nodes, or receives it.
  [[nodiscard]] bool link_end_on(std::string_view node) const {
    return crosses_nodes && (producer_node == node || consumed_on(node));
  }
};

// The token of a network whose file sets none: a hash of its name (FNV-1a of
// "boreal network <name>", never 0), so that the nodes of two networks that were pointed at
// one address by mistake refuse each other's links even when a stream id, schema and tuple
// size happen to match; every node of one network reads the same name, so they agree.
[[nodiscard]] std::uint64_t default_cluster_token(std::string_view name);

struct NetworkSpec {
  std::string name;
  std::string file_name;  // as given to parse_network, for messages
  std::uint64_t cluster_token = 0;
  std::map<std::string, ops::Schema, std::less<>> schemas;
  std::vector<NodeSpec> nodes;     // in file order
  std::vector<BoxSpec> boxes;      // in file order
  TransportSpec transport;         // the defaults (the `transport` block)
  std::vector<StreamSpec> streams;  // ordered by id: streams[i].id == i + 1
  // Measurement: the first `warmup` after a node's links start is not measured (CPU, rates,
  // latency); tuples sent in it are still delivered and checked. Set by --warmup.
  std::chrono::duration<double> warmup{0};

  // nullptr when absent.
  [[nodiscard]] const NodeSpec* find_node(std::string_view name) const;
  [[nodiscard]] const BoxSpec* find_box(std::string_view name) const;
  [[nodiscard]] const StreamSpec* find_stream(std::string_view name) const;
  [[nodiscard]] const ops::Schema* find_schema(std::string_view name) const;
};

// Whether a node ticks `box` with its clock (ops::Box::tick): an aggregate with a `timeout`,
// or a resample in hold mode, whose time field is a timestamp (the node's clock is realtime
// ns; other time fields have no clock to follow). `input`: the schema of its first input,
// null when unknown (then false).
[[nodiscard]] bool ticks_on_clock(const BoxSpec& box, const ops::Schema* input);

// The operator library's generator for a generator source emitting `schema`: every option of
// `source`, with the rate left unset (the node paces it and stamps scheduled times itself).
[[nodiscard]] ops::GeneratorParams generator_params(const SourceParams& source,
                                                    const ops::Schema& schema);

// The provider a stream's fabric link uses: the stream's own `provider`, else the provider of
// its receiving node's fabric:// address, else kDefaultProvider.
[[nodiscard]] std::string fabric_provider(const NetworkSpec& spec, const StreamSpec& stream);

// The port `node`'s libfabric endpoint listens on: its address's port, or the next one when
// the node also receives a stream over tcp (which holds the address's port). Thread t > 0 of
// a node listens on its own ports: tcp on port + 2t, libfabric on port + 2t + 1.
[[nodiscard]] std::uint16_t fabric_listen_port(const NetworkSpec& spec, const NodeSpec& node,
                                               std::uint32_t thread = 0);
[[nodiscard]] std::uint16_t tcp_listen_port(const NodeSpec& node, std::uint32_t thread = 0);

// The thread of `node` where `stream` lives: its producer's thread on the producing node; on
// a consuming node, the thread of its first consumer there (file order), which runs the
// receiving end of the link; consumers on other threads get it over an inproc ring.
[[nodiscard]] std::uint32_t stream_thread(const NetworkSpec& spec, const StreamSpec& stream,
                                          std::string_view node);

// The wait of thread `thread` of node `self`: the mode and spin of the links it runs
// (parse_network() checked they agree) and the smallest latency budget left to it. A
// receiving end gets its stream's budget less the sender's flush (at least a quarter of it).
// A thread without links waits as the network's `transport` says.
[[nodiscard]] transport::WaitConfig thread_wait(const NetworkSpec& spec, const NodeSpec& self,
                                                std::uint32_t thread);

// Parses and checks a network. `file_name` prefixes every message.
[[nodiscard]] SpecResult<NetworkSpec> parse_network(std::string_view yaml_text,
                                                    std::string_view file_name);
// The text of `path`; an unreadable file is one error naming the path.
[[nodiscard]] SpecResult<std::string> read_network_file(const std::string& path);
// Reads `path` and parses it (read_network_file(), then parse_network()).
[[nodiscard]] SpecResult<NetworkSpec> load_network(const std::string& path);

// What a run needs once the flags' overrides are applied (check, run and launch call it): an
// idle source has a duration ("demo.yaml:20:11: boxes[0].params.rate: an idle source needs a
// duration ..."), no stream between nodes goes over inproc, the fabric streams one thread of
// a node receives share a provider, and every node runs a box.
[[nodiscard]] SpecResult<void> validate_runnable(const NetworkSpec& spec);

// The boxes in an order where every box comes after the producers of its inputs (the file
// is acyclic once parse_network() accepted it).
[[nodiscard]] std::vector<std::size_t> topological_order(const NetworkSpec& spec);

// Command-line flags that override the file, for every link or every source. Values are as
// the user typed them; apply_overrides() checks them.
struct Overrides {
  std::optional<std::string> medium;             // --medium
  std::optional<std::string> provider;           // --provider
  std::optional<std::string> wait;               // --wait
  std::optional<std::int64_t> latency_budget_us;  // --latency-budget
  std::optional<std::int64_t> spin_us;           // --spin-us
  std::optional<std::int64_t> batch_bytes;       // --batch-bytes
  std::optional<std::int64_t> flush_us;          // --flush-us
  std::optional<std::string> rate;               // --rate: tuples/s, "max" or "idle"
  std::optional<std::int64_t> tuples;            // --tuples (0 = no count limit)
  std::optional<double> duration_s;              // --duration (0 = no time limit)
  std::optional<double> warmup_s;                // --warmup (seconds not measured)
  std::optional<std::int64_t> tuple_bytes;       // --tuple-bytes
  std::optional<std::int64_t> window;            // --window
  std::optional<std::string> connection;         // --connection
  // --no-output: sinks write no CSV files (a csv sink counts instead), so a run measures the
  // query and not the formatting of its results (bench --network does this).
  bool no_output = false;
};

// Applies every set override: transport flags to the defaults and to every stream (over the
// file's link overrides), source flags to every source. --tuple-bytes resizes the last str
// field of each source's schema so its tuples are exactly that long. On error `spec` is left
// unchanged and every problem is returned, each naming its flag ("--window: must be positive,
// got 0").
[[nodiscard]] SpecResult<void> apply_overrides(NetworkSpec& spec, const Overrides& overrides);

}  // namespace boreal::runtime
