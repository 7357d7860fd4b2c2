#include <boreal/ops/graph.hpp>

#include <cassert>
#include <string>
#include <utility>

namespace boreal::ops {

// One arrow: the consumer of an upstream Output that drives the downstream box's input port.
class Graph::Edge final : public BatchConsumer {
 public:
  Edge(Box& to, std::size_t port) noexcept : to_(&to), port_(port) {}
  void consume(const BatchView& batch) override { to_->process(port_, batch); }
  void end() override { to_->finish(port_); }

 private:
  Box* to_;
  std::size_t port_;
};

Graph::Graph() = default;
Graph::~Graph() = default;

BoxId Graph::add(std::unique_ptr<Box> box) {
  assert(box != nullptr);
  Node node;
  node.input_fed.assign(box->input_count(), false);
  node.output_drained.assign(box->output_count(), false);
  node.box = std::move(box);
  boxes_.push_back(std::move(node));
  return BoxId{boxes_.size() - 1};
}

namespace {

std::string name_of(std::size_t index, const Box& box) {
  return "box " + std::to_string(index) + " (" + std::string(box.type()) + ")";
}

std::string plural(std::size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

Result<void> Graph::connect(BoxId from, std::size_t out_port, BoxId to, std::size_t in_port) {
  for (BoxId id : {from, to}) {
    if (id.index >= boxes_.size()) {
      return fail("no box " + std::to_string(id.index) + "; the graph has " +
                      std::to_string(boxes_.size()) + (boxes_.size() == 1 ? " box" : " boxes"),
                  "connect");
    }
  }
  Node& up = boxes_[from.index];
  Node& down = boxes_[to.index];
  const std::string up_name = name_of(from.index, *up.box);
  const std::string down_name = name_of(to.index, *down.box);
  if (out_port >= up.box->output_count()) {
    return fail(up_name + " has " + plural(up.box->output_count(), "output") +
                    "; there is no output " + std::to_string(out_port),
                "connect");
  }
  if (in_port >= down.box->input_count()) {
    return fail(down_name + " has " + plural(down.box->input_count(), "input") +
                    "; there is no input " + std::to_string(in_port),
                "connect");
  }
  const std::string output_text = "output " + std::to_string(out_port) + " of " + up_name;
  const std::string input_text = "input " + std::to_string(in_port) + " of " + down_name;
  const Schema& produced = up.box->output(out_port).schema();
  const Schema& expected = down.box->input_schema(in_port);
  if (!(produced == expected)) {
    return fail(output_text + " has schema " + produced.to_string() + " but " + input_text +
                    " expects " + expected.to_string(),
                "connect");
  }
  if (up.output_drained[out_port]) return fail(output_text + " is already connected", "connect");
  if (down.input_fed[in_port]) return fail(input_text + " is already connected", "connect");
  if (reaches(to.index, from.index)) {
    return fail("an edge from " + up_name + " to " + down_name + " would close a cycle",
                "connect");
  }

  edges_.push_back(std::make_unique<Edge>(*down.box, in_port));
  up.box->output(out_port).connect(edges_.back().get());
  up.output_drained[out_port] = true;
  down.input_fed[in_port] = true;
  up.next.push_back(to.index);
  return success();
}

// Whether `to` is `from` or downstream of it. Plan time only: a depth-first walk.
bool Graph::reaches(std::size_t from, std::size_t to) const {
  std::vector<bool> seen(boxes_.size(), false);
  std::vector<std::size_t> stack{from};
  while (!stack.empty()) {
    const std::size_t at = stack.back();
    stack.pop_back();
    if (at == to) return true;
    if (seen[at]) continue;
    seen[at] = true;
    for (std::size_t next : boxes_[at].next) stack.push_back(next);
  }
  return false;
}

void Graph::push(BoxId to, std::size_t in_port, const BatchView& batch) {
  assert(to.index < boxes_.size());
  Node& node = boxes_[to.index];
  assert(in_port < node.box->input_count());
  assert(!node.input_fed[in_port]);
  assert(batch.empty() || batch.tuple_bytes() == node.box->input_schema(in_port).tuple_bytes());
  node.box->process(in_port, batch);
}

void Graph::finish(BoxId to, std::size_t in_port) {
  assert(to.index < boxes_.size());
  Node& node = boxes_[to.index];
  assert(in_port < node.box->input_count());
  assert(!node.input_fed[in_port]);
  node.box->finish(in_port);
}

void Graph::collect(BoxId from, std::size_t out_port, BatchConsumer& consumer) {
  assert(from.index < boxes_.size());
  Node& node = boxes_[from.index];
  assert(out_port < node.box->output_count());
  assert(!node.output_drained[out_port]);
  node.box->output(out_port).connect(&consumer);
}

void Graph::flush() {
  // Kahn's order: a box is flushed only after every box with an edge into it, so the rows
  // an upstream flush hands on are flushed in turn. connect() keeps the graph acyclic.
  std::vector<std::size_t> waiting(boxes_.size(), 0);
  for (const Node& node : boxes_) {
    for (std::size_t next : node.next) ++waiting[next];
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const std::size_t at = ready.back();
    ready.pop_back();
    Box& box = *boxes_[at].box;
    for (std::size_t port = 0; port < box.output_count(); ++port) box.output(port).flush();
    for (std::size_t next : boxes_[at].next) {
      if (--waiting[next] == 0) ready.push_back(next);
    }
  }
}

void Graph::tick(std::int64_t now) {
  for (Node& node : boxes_) node.box->tick(now);
}

Box& Graph::box(BoxId id) noexcept {
  assert(id.index < boxes_.size());
  return *boxes_[id.index].box;
}

const Box& Graph::box(BoxId id) const noexcept {
  assert(id.index < boxes_.size());
  return *boxes_[id.index].box;
}

void CollectingConsumer::consume(const BatchView& batch) {
  ++batches_;
  if (batch.empty()) return;
  assert(tuple_bytes_ == 0 || tuple_bytes_ == batch.tuple_bytes());
  tuple_bytes_ = batch.tuple_bytes();
  const std::span<const std::byte> bytes = batch.bytes();
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  rows_ += batch.size();
}

BatchView CollectingConsumer::view(const Schema& schema) const {
  assert(tuple_bytes_ == 0 || tuple_bytes_ == schema.tuple_bytes());
  return BatchView::wrap(bytes_, schema).value();
}

void CollectingConsumer::clear() noexcept {
  bytes_.clear();
  rows_ = 0;
  batches_ = 0;
  ends_ = 0;
  tuple_bytes_ = 0;
}

}  // namespace boreal::ops
