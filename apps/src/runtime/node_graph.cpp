#include "runtime/node_graph.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "spec/box_types.hpp"

namespace boreal::runtime {
namespace {

// A sending link's id across restarts of a checkpointing node (LinkOptions::sender_id).
std::uint32_t random_sender_id() {
  std::random_device entropy;
  for (;;) {
    if (const std::uint32_t id = entropy(); id != 0) return id;
  }
}

using transport::ErrorCategory;
using transport::fail;

std::string stream_label(const StreamSpec& stream) { return "stream '" + stream.name + "'"; }

// Threads of node `me` that run a consumer of `stream`.
std::vector<std::uint32_t> consumer_threads(const NetworkSpec& spec, const StreamSpec& stream,
                                            std::string_view me) {
  std::vector<std::uint32_t> threads;
  for (std::size_t i = 0; i < stream.consumers.size(); ++i) {
    if (stream.consumer_nodes[i] != me) continue;
    const BoxSpec* box = spec.find_box(stream.consumers[i]);
    if (box != nullptr && std::find(threads.begin(), threads.end(), box->thread) == threads.end()) {
      threads.push_back(box->thread);
    }
  }
  return threads;
}

// Where `stream` is on node `me`: produced or received there, and on which thread.
struct Placement {
  bool here = false;
  std::uint32_t home = 0;                // the thread that produces or receives it
  std::vector<std::uint32_t> consumers;  // threads with a consumer of it
};

Placement place(const NetworkSpec& spec, const StreamSpec& stream, std::string_view me) {
  Placement p;
  p.consumers = consumer_threads(spec, stream, me);
  p.here = stream.producer_node == me || !p.consumers.empty();
  if (p.here) p.home = stream_thread(spec, stream, me);
  return p;
}

// A link writer's hold (flush_hold.hpp): fixed when the stream gives flush_us, or when a
// source's rows reach the writer through a fan-out (the source held them already, and the
// two holds together must stay within the budget); else adapting to the receiver.
FlushHold flush_hold(const NetworkSpec& spec, const StreamSpec& stream,
                     bool source_writes_directly) {
  const BoxSpec* producer = spec.find_box(stream.producer);
  const bool held_upstream =
      producer != nullptr && producer->type == "source" && !source_writes_directly;
  if (stream.transport.flush_given || held_upstream) return FlushHold(stream.transport.flush);
  return FlushHold(stream.transport.flush, stream.transport.wait.latency_budget);
}

}  // namespace

int NodeGraph::do_work(std::chrono::steady_clock::time_point now, std::int64_t tick_ns) {
  int work = loop.do_work(now);
  if (listeners.tcp) work += listeners.tcp->do_work();
  if (listeners.fabric) work += listeners.fabric->do_work();
  for (LinkWriter* writer : pumped) writer->set_now(now);
  for (auto& reader : readers) work += reader->poll(now);
  for (auto& source : sources) work += source->do_work(now);
  if (tick_ns != 0) {
    for (auto& box : boxes) box->tick(tick_ns);
  }
  // Rows a box emitted in this cycle leave its partial batch now, upstream boxes first, so
  // a link's flush clock and not the box's batch size bounds their wait.
  if (work > 0 || tick_ns != 0) {
    for (auto& box : boxes) box->flush();
  }
  for (LinkWriter* writer : pumped) work += writer->pump(now);
  return work;
}

bool NodeGraph::follows_clock() const noexcept {
  return !checkpoint_path.empty() ||
         std::any_of(boxes.begin(), boxes.end(),
                     [](const auto& box) { return box->ticks_on_clock(); });
}

transport::Result<void> NodeGraph::maybe_checkpoint(std::chrono::steady_clock::time_point now) {
  if (checkpoint_path.empty()) return transport::success();
  std::size_t ended = 0;
  bool due = now - last_checkpoint_ >= kCheckpointInterval;
  for (std::size_t i = 0; i < readers.size(); ++i) {
    const auto& link = readers[i]->link();
    if (readers[i]->done()) ++ended;
    due = due || link.delivered() - acknowledged_[i] >= checkpoint_every_[i];
  }
  for (std::size_t i = 0; i < writers.size(); ++i) {
    // Held output fills the link's buffers (window + kCheckpointBackupWindows windows).
    const auto& link = writers[i]->link();
    due = due || link.committed() - released_[i] >= link.window();
  }
  if (ended == readers_ended_ && !due) return transport::success();
  readers_ended_ = ended;
  last_checkpoint_ = now;
  Checkpoint c;
  c.node = node_name;
  c.generation = ++generation_;
  for (const auto& reader : readers) {
    c.inputs.emplace(reader->identity().stream, reader->link().delivered());
    if (reader->done()) c.inputs_ended.insert(reader->identity().stream);
  }
  for (const auto& sink : sinks) {
    auto state = sink->checkpoint();
    if (!state) return fail(ErrorCategory::io, 0, state.error().message);
    c.sinks.emplace(sink->name(), state.value());
  }
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i]->finished()) c.boxes_finished.insert(boxes[i]->name());
    if (!checkpoint_saves_state(box_types[i])) continue;
    std::vector<std::byte> state;
    if (!boxes[i]->box().save_state(state)) {
      return fail(ErrorCategory::config, 0,
                  "box '" + boxes[i]->name() + "' (" + box_types[i] + ") cannot save its state");
    }
    c.box_states.emplace(boxes[i]->name(), std::move(state));
  }
  for (std::size_t i = 0; i < writers.size(); ++i) {
    LinkWriter& writer = *writers[i];
    const auto backlog = writer.prepare_checkpoint();
    OutputState out;
    out.sender_id = sender_ids_[i];
    out.committed = writer.link().committed();
    out.backlog.assign(backlog.begin(), backlog.end());
    writer.link().append_unacknowledged(out.frames);
    c.outputs.emplace(output_key(writer.identity().stream, writer.identity().peer), std::move(out));
  }
  if (auto ok = save_checkpoint(checkpoint_path, c); !ok) return ok;
  // The checkpoint holds them now: outputs may leave, inputs need not be kept upstream.
  for (std::size_t i = 0; i < writers.size(); ++i) {
    released_[i] = writers[i]->link().committed();
    writers[i]->link().release(released_[i]);
  }
  for (std::size_t i = 0; i < readers.size(); ++i) {
    acknowledged_[i] = c.inputs.at(readers[i]->identity().stream);
    readers[i]->link().acknowledge(acknowledged_[i]);
  }
  return transport::success();
}

void NodeGraph::drop_checkpoint() {
  if (!checkpoint_path.empty()) remove_checkpoint(checkpoint_path, generation_);
}

bool NodeGraph::done() const noexcept {
  return std::all_of(sources.begin(), sources.end(), [](const auto& s) { return s->done(); }) &&
         std::all_of(readers.begin(), readers.end(), [](const auto& r) { return r->done(); }) &&
         std::all_of(writers.begin(), writers.end(), [](const auto& w) { return w->done(); }) &&
         std::all_of(sinks.begin(), sinks.end(), [](const auto& s) { return s->ended(); });
}

std::size_t output_batch_rows(const NetworkSpec& spec, const BoxSpec& box) {
  std::size_t widest = 1;
  for (const std::string& name : box.outputs) {
    const StreamSpec* stream = spec.find_stream(name);
    if (stream != nullptr && stream->tuple_schema) {
      widest = std::max<std::size_t>(widest, stream->tuple_schema->tuple_bytes());
    }
  }
  return std::clamp<std::size_t>(kOutputBatchBytes / widest, 1, ops::Output::kDefaultBatchRows);
}

transport::Result<ThreadLinks> make_thread_links(const std::vector<transport::EventLoop*>& loops,
                                                 const NetworkSpec& spec, const NodeSpec& self) {
  ThreadLinks links;
  for (const StreamSpec& stream : spec.streams) {
    const Placement p = place(spec, stream, self.name);
    if (!p.here || !stream.tuple_schema) continue;
    for (std::uint32_t to : p.consumers) {
      if (to == p.home) continue;
      transport::LinkOptions options = link_options(spec, stream, *stream.tuple_schema);
      options.name =
          stream.name + " (thread " + std::to_string(p.home) + " to " + std::to_string(to) + ")";
      auto pair = transport::make_inproc_link(*loops.at(p.home), *loops.at(to), options);
      if (!pair) return std::move(pair).error();
      links.emplace(std::make_pair(stream.name, to), std::move(pair).value());
    }
  }
  return links;
}

transport::Result<std::unique_ptr<NodeGraph>> build_node_graph(transport::EventLoop& loop,
                                                               const NetworkSpec& spec,
                                                               const NodeSpec& self,
                                                               std::uint32_t thread,
                                                               ThreadLinks& links) {
  auto graph = std::make_unique<NodeGraph>(loop, thread);
  graph->wait = thread_wait(spec, self, thread);
  graph->node_name = self.name;
  if (!self.checkpoint.empty()) {
    auto resumed = load_checkpoint(self.checkpoint, self.name);
    if (!resumed) return std::move(resumed).error();
    graph->checkpoint_path = self.checkpoint;
    graph->resumed = std::move(resumed).value();
    if (graph->resumed) graph->generation_ = graph->resumed->generation;
  }
  auto resumed_input = [&](const std::string& stream) -> std::uint64_t {
    if (!graph->resumed) return 0;
    auto it = graph->resumed->inputs.find(stream);
    return it == graph->resumed->inputs.end() ? 0 : it->second;
  };
  const std::string& me = self.name;
  auto schema_of = [](const StreamSpec& stream) -> const ops::Schema& {
    return *stream.tuple_schema;
  };
  auto on_this_thread = [&](const BoxSpec& box) { return box.node == me && box.thread == thread; };
  for (const StreamSpec& stream : spec.streams) {
    if (!stream.tuple_schema) {
      return fail(ErrorCategory::config, 0,
                  spec.file_name + ": " + stream_label(stream) + " has no schema");
    }
    const Placement p = place(spec, stream, me);
    const bool consumed_here =
        std::find(p.consumers.begin(), p.consumers.end(), thread) != p.consumers.end();
    if (p.here && (p.home == thread || consumed_here)) {
      graph->fanouts.emplace(stream.name, std::make_unique<StreamFanout>(stream.name));
    }
    // From the stream's home thread, over an inproc ring.
    if (p.here && p.home != thread && consumed_here) {
      auto it = links.find(std::make_pair(stream.name, thread));
      if (it == links.end() || !it->second.recv) {
        return fail(ErrorCategory::config, 0,
                    spec.file_name + ": " + stream_label(stream) + " has no ring to thread " +
                        std::to_string(thread));
      }
      graph->inproc_in.push_back(std::move(it->second.recv));
      graph->readers.push_back(std::make_unique<LinkReader>(
          LinkIdentity{stream.name, me + "/" + std::to_string(p.home), "inproc"},
          *graph->inproc_in.back(), schema_of(stream), *graph->fanouts.at(stream.name)));
      graph->acknowledged_.push_back(0);
      graph->checkpoint_every_.push_back(0);
    }
  }

  // Receiving side first, so the listeners are open before any peer connects. One libfabric
  // endpoint receives every fabric stream of the node, so they share one provider.
  std::string fabric_provider_in;
  std::string fabric_stream_in;
  for (const StreamSpec& stream : spec.streams) {
    if (stream.producer_node == me || !stream.consumed_on(me)) continue;
    if (stream_thread(spec, stream, me) != thread) continue;
    const Medium* medium = find_medium(stream.transport.medium);
    if (medium == nullptr) {
      return fail(ErrorCategory::config, 0,
                  spec.file_name + ": " + stream_label(stream) + " goes from node '" +
                      stream.producer_node + "' to node '" + me + "' over '" +
                      stream.transport.medium +
                      "', which stays inside one process; use tcp, fabric-msg or fabric-rma");
    }
    if (is_fabric(medium->name)) {
      const std::string provider = fabric_provider(spec, stream);
      if (!fabric_provider_in.empty() && provider != fabric_provider_in) {
        return fail(ErrorCategory::config, 0,
                    spec.file_name + ": node '" + me + "' receives " + fabric_stream_in +
                        " over provider '" + fabric_provider_in + "' and " + stream_label(stream) +
                        " over provider '" + provider +
                        "'; one node receives over one provider (set `provider` on the links)");
      }
      fabric_provider_in = provider;
      fabric_stream_in = stream_label(stream);
    }
    transport::LinkOptions options = link_options(spec, stream, schema_of(stream));
    // A busy thread polls its links without end: fabric-rma's sender may then leave out the
    // immediate data that only wakes a blocked thread.
    options.never_blocks = graph->wait.mode == transport::WaitMode::busy;
    if (!graph->checkpoint_path.empty()) {
      options.manual_ack = true;
      options.resume_after = resumed_input(stream.name);
    }
    auto link = medium->expect(loop, graph->listeners, spec, stream, self, thread, options);
    if (!link) return std::move(link).error();
    graph->readers.push_back(std::make_unique<LinkReader>(
        LinkIdentity{stream.name, stream.producer_node, std::string(medium->name),
                     is_fabric(medium->name) ? fabric_provider(spec, stream) : std::string()},
        *link.value(),
        schema_of(stream), *graph->fanouts.at(stream.name)));
    if (graph->resumed && graph->resumed->inputs_ended.contains(stream.name)) {
      graph->readers.back()->end_from_checkpoint();
    }
    graph->acknowledged_.push_back(options.resume_after);
    graph->checkpoint_every_.push_back(std::uint64_t{kCheckpointBackupWindows - 1} *
                                       options.window);
  }

  // The boxes, in arrow order.
  const auto order = topological_order(spec);
  for (std::size_t b : order) {
    const BoxSpec& box = spec.boxes[b];
    if (!on_this_thread(box) || box.type == "source") continue;
    if (box.type == "sink") {
      const StreamSpec& in = *spec.find_stream(box.inputs.at(0));
      const SinkState* resume = nullptr;
      if (graph->resumed) {
        auto it = graph->resumed->sinks.find(box.name);
        if (it != graph->resumed->sinks.end()) resume = &it->second;
      }
      auto sink = SinkTask::make(box.name, in.name, schema_of(in), *box.sink, resume);
      if (!sink) return fail(ErrorCategory::io, 0, sink.error().message);
      graph->fanouts.at(in.name)->add(sink.value().get());
      for (auto& reader : graph->readers) {
        if (reader->identity().stream != in.name) continue;
        // Links into this thread that carry the stream take each payload's CRC once for both
        // their frame check and the sink's content checksum.
        if (box.sink->kind == SinkKind::check) reader->add_check_sink(sink.value().get());
        if (sink.value()->records_latency()) reader->add_timed_sink(sink.value().get());
      }
      graph->sinks.push_back(std::move(sink).value());
      continue;
    }
    if (!box.plan) {
      return fail(ErrorCategory::config, 0,
                  spec.file_name + ": box '" + box.name + "' has no plan");
    }
    auto made = box.plan->make(output_batch_rows(spec, box));
    if (!made) {
      return fail(ErrorCategory::config, 0,
                  spec.file_name + ": box '" + box.name + "': " + made.error().describe());
    }
    const StreamSpec* first_in = box.inputs.empty() ? nullptr : spec.find_stream(box.inputs[0]);
    auto runner = std::make_unique<BoxRunner>(
        box.name, std::move(made).value(),
        ticks_on_clock(box, first_in != nullptr && first_in->tuple_schema ? &*first_in->tuple_schema
                                                                          : nullptr));
    for (std::size_t port = 0; port < box.outputs.size(); ++port) {
      runner->box().output(port).connect(graph->fanouts.at(box.outputs[port]).get());
    }
    for (std::size_t port = 0; port < box.inputs.size(); ++port) {
      auto input = std::make_unique<BoxInput>(*runner, port);
      graph->fanouts.at(box.inputs[port])->add(input.get());
      graph->inputs.push_back(std::move(input));
    }
    graph->box_types.push_back(box.type);
    graph->boxes.push_back(std::move(runner));
  }

  // Sending side: one link per stream and consuming node.
  std::map<std::string, LinkWriter*, std::less<>> direct;  // stream -> its source's only link
  for (const StreamSpec& stream : spec.streams) {
    const Placement p = place(spec, stream, me);
    if (!p.here || p.home != thread) continue;
    // To the other threads of this node that consume it.
    for (std::uint32_t to : p.consumers) {
      if (to == thread) continue;
      auto it = links.find(std::make_pair(stream.name, to));
      if (it == links.end() || !it->second.send) {
        return fail(ErrorCategory::config, 0,
                    spec.file_name + ": " + stream_label(stream) + " has no ring to thread " +
                        std::to_string(to));
      }
      auto writer = std::make_unique<LinkWriter>(
          LinkIdentity{stream.name, me + "/" + std::to_string(to), "inproc"},
          std::move(it->second.send), schema_of(stream), flush_hold(spec, stream, false));
      graph->sender_ids_.push_back(0);
      graph->released_.push_back(0);
      graph->fanouts.at(stream.name)->add(writer.get());
      graph->pumped.push_back(writer.get());
      graph->writers.push_back(std::move(writer));
    }
    if (stream.producer_node != me || !stream.crosses_nodes) continue;
    const Medium* medium = find_medium(stream.transport.medium);
    if (medium == nullptr) {
      return fail(ErrorCategory::config, 0,
                  spec.file_name + ": " + stream_label(stream) + " leaves node '" + me +
                      "' over '" + stream.transport.medium +
                      "', which stays inside one process; use tcp, fabric-msg or fabric-rma");
    }
    std::vector<std::string> peers;
    for (const std::string& node : stream.consumer_nodes) {
      if (node != me && std::find(peers.begin(), peers.end(), node) == peers.end())
        peers.push_back(node);
    }
    const BoxSpec* producer = spec.find_box(stream.producer);
    const bool source_only = producer != nullptr && producer->type == "source" &&
                             !stream.consumed_on(me) && peers.size() == 1;
    for (const std::string& peer_name : peers) {
      const NodeSpec* peer = spec.find_node(peer_name);
      transport::LinkOptions options = link_options(spec, stream, schema_of(stream));
      const OutputState* resumed_output = nullptr;
      if (!graph->checkpoint_path.empty()) {
        // Output commit (docs/faults.md): frames leave once a checkpoint holds them, so the
        // link keeps the frames of a checkpoint interval, and its sender id outlives restarts.
        options.hold_until_released = true;
        options.backup_frames = kCheckpointBackupWindows * options.window;
        if (graph->resumed) {
          auto it = graph->resumed->outputs.find(output_key(stream.name, peer_name));
          if (it != graph->resumed->outputs.end()) resumed_output = &it->second;
        }
        options.sender_id =
            resumed_output != nullptr ? resumed_output->sender_id : random_sender_id();
      }
      auto link = medium->connect(loop, graph->listeners, spec, stream, *peer,
                                  stream_thread(spec, stream, peer_name), options);
      if (!link) return std::move(link).error();
      if (resumed_output != nullptr) {
        if (auto ok = link.value()->restore(resumed_output->frames, resumed_output->committed);
            !ok) {
          return fail(ErrorCategory::config, 0,
                      "checkpoint " + graph->checkpoint_path + ": " + ok.error().message);
        }
      }
      graph->sender_ids_.push_back(options.sender_id);
      graph->released_.push_back(resumed_output != nullptr ? resumed_output->committed : 0);
      auto writer = std::make_unique<LinkWriter>(
          LinkIdentity{stream.name, peer_name, std::string(medium->name),
                       is_fabric(medium->name) ? fabric_provider(spec, stream) : std::string()},
          std::move(link).value(), schema_of(stream), flush_hold(spec, stream, source_only));
      if (resumed_output != nullptr) writer->restore_backlog(resumed_output->backlog);
      if (stream.transport.shares_connection()) {
        if (!graph->flush_wave) graph->flush_wave = std::make_unique<FlushWave>(loop);
        writer->join_wave(graph->flush_wave.get());
      }
      if (source_only) {
        direct.emplace(stream.name, writer.get());
      } else {
        graph->fanouts.at(stream.name)->add(writer.get());
        graph->pumped.push_back(writer.get());
      }
      graph->writers.push_back(std::move(writer));
    }
  }

  // A restart: the boxes carry on from their saved states, and those that had finished stay
  // finished (their outputs end without emitting again). Last, so the ends reach every target.
  if (graph->resumed) {
    for (std::size_t i = 0; i < graph->boxes.size(); ++i) {
      BoxRunner& runner = *graph->boxes[i];
      if (auto it = graph->resumed->box_states.find(runner.name());
          it != graph->resumed->box_states.end()) {
        if (auto ok = runner.box().restore_state(it->second); !ok) {
          return fail(ErrorCategory::config, 0,
                      "checkpoint " + graph->checkpoint_path + ": box '" + runner.name() +
                          "': " + ok.error().message);
        }
      }
      if (graph->resumed->boxes_finished.contains(runner.name())) runner.restore_finished();
    }
  }

  // Sources: one task per output (only a nexmark source has several).
  for (const BoxSpec& box : spec.boxes) {
    if (!on_this_thread(box) || box.type != "source") continue;
    for (std::size_t port = 0; port < box.outputs.size(); ++port) {
      const StreamSpec& out = *spec.find_stream(box.outputs[port]);
      RowTarget* target = nullptr;
      if (auto it = direct.find(out.name); it != direct.end()) {
        target = it->second;
      } else {
        const std::size_t rows =
            std::max<std::size_t>(1, out.transport.batch_bytes / schema_of(out).tuple_bytes());
        graph->targets.push_back(
            std::make_unique<FanoutTarget>(*graph->fanouts.at(out.name), schema_of(out), rows,
                                           out.transport.flush));
        target = graph->targets.back().get();
      }
      // Each task of a multi-output source reports as "box:stream".
      const std::string name = box.outputs.size() > 1 ? box.name + ":" + out.name : box.name;
      graph->sources.push_back(std::make_unique<SourceTask>(
          name, out.name, *target, schema_of(out), *box.source, port));
      if (auto it = direct.find(out.name);
          it != direct.end() && graph->flush_wave && out.transport.shares_connection()) {
        graph->sources.back()->join_wave(graph->flush_wave.get());
      }
    }
  }
  if (thread == 0 && std::none_of(spec.boxes.begin(), spec.boxes.end(),
                                  [&](const BoxSpec& box) { return box.node == me; })) {
    return fail(ErrorCategory::config, 0, spec.file_name + ": node '" + me + "' runs no box");
  }

  // Back-pressure: every fan-out watches the link writers its rows reach on this node.
  std::function<void(const std::string&, StreamFanout&, std::set<const LinkWriter*>&)> reach =
      [&](const std::string& stream, StreamFanout& root, std::set<const LinkWriter*>& seen) {
        for (const LinkWriter* writer : graph->pumped) {
          if (writer->identity().stream == stream && seen.insert(writer).second) root.watch(writer);
        }
        for (std::size_t b : order) {
          const BoxSpec& box = spec.boxes[b];
          if (!on_this_thread(box) || box.type == "sink" || box.type == "source") continue;
          if (std::find(box.inputs.begin(), box.inputs.end(), stream) == box.inputs.end()) continue;
          for (const std::string& out : box.outputs) reach(out, root, seen);
        }
      };
  for (auto& [name, fanout] : graph->fanouts) {
    std::set<const LinkWriter*> seen;
    reach(name, *fanout, seen);
  }
  return graph;
}

}  // namespace boreal::runtime
