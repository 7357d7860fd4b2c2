#include "sweep/bench_soak.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "launch/launcher.hpp"
#include "runtime/metrics_server.hpp"

namespace boreal::runtime {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using transport::ErrorCategory;
using transport::fail;

namespace {

using Clock = std::chrono::steady_clock;

// A scrape that takes longer than this counts as missed: the node's server answers within
// milliseconds (docs/metrics.md), so a late answer means the node is gone or stuck.
constexpr std::chrono::milliseconds kScrapeTimeout{800};
// How long the nodes' metrics servers may take to answer a first time.
constexpr std::chrono::seconds kServersUp{30};
// Seconds the sources run past the scraped DURATION, so the last scrape still sees them.
constexpr double kTailS = 3.0;
// flatness(): the shortest window (seconds), and the p99's allowance on top of doubling. A
// p99 of a few milliseconds comes and goes on a machine shared with other work (wake-ups
// wait for a CPU); growth that matters — a queue that builds up — passes any fixed allowance
// within seconds, as a load above what the nodes get shows (README "Soak").
constexpr std::size_t kMinWindow = 5;
constexpr double kP99SlackUs = 5000.0;
// A late p99 of a second or more is never flat, whatever the early window saw: the paced
// tuples wait that long because the nodes fell behind the load (a p99 at the latency
// histogram's top, 2^34 ns, would otherwise pass as "no higher than the early peak").
constexpr double kBehindUs = 1e6;

// GET /metrics of one node with Beast's client (one connection per scrape, once a second, is
// no cost worth a kept-alive connection's bookkeeping). nullopt when it fails or times out.
std::optional<std::string> scrape(const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const auto address = net::ip::make_address(host, ec);
  if (ec) return std::nullopt;
  net::io_context context;
  beast::tcp_stream stream(context);
  http::request<http::empty_body> request{http::verb::get, "/metrics", 11};
  request.set(http::field::host, host + ":" + std::to_string(port));
  request.set(http::field::connection, "close");
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  bool ok = false;
  // One deadline for connect, write and read together.
  stream.expires_after(kScrapeTimeout);
  stream.async_connect(net::ip::tcp::endpoint(address, port), [&](beast::error_code connected) {
    if (connected) return;
    http::async_write(stream, request, [&](beast::error_code written, std::size_t) {
      if (written) return;
      http::async_read(stream, buffer, response, [&](beast::error_code got, std::size_t) {
        ok = !got && response.result() == http::status::ok;
      });
    });
  });
  context.run();
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  if (!ok) return std::nullopt;
  return std::move(response.body());
}

std::optional<double> number(std::string_view text) {
  if (text == "+Inf") return std::numeric_limits<double>::infinity();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The value of label `key` in a series' label text (`a="x",le="0.001"`); the soak's labels
// hold no escaped quotes.
std::string_view label(std::string_view labels, std::string_view key) {
  const std::string needle = std::string(key) + "=\"";
  std::size_t at = 0;
  while ((at = labels.find(needle, at)) != std::string_view::npos) {
    if (at == 0 || labels[at - 1] == ',' || labels[at - 1] == '{') {
      const std::size_t from = at + needle.size();
      const std::size_t to = labels.find('"', from);
      if (to == std::string_view::npos) return {};
      return labels.substr(from, to - from);
    }
    at += needle.size();
  }
  return {};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::string fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string rate_text(double rate) {
  char text[32];
  if (rate >= 1e6) {
    std::snprintf(text, sizeof text, "%.2fM", rate / 1e6);
  } else if (rate >= 1e3) {
    std::snprintf(text, sizeof text, "%.1fk", rate / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f", rate);
  }
  return text;
}

// The rows of `node`, in order.
std::vector<const SoakRow*> rows_of(const std::vector<SoakRow>& rows, const std::string& node) {
  std::vector<const SoakRow*> out;
  for (const auto& row : rows) {
    if (row.node == node) out.push_back(&row);
  }
  return out;
}

std::vector<std::string> nodes_of(const std::vector<SoakRow>& rows) {
  std::vector<std::string> nodes;
  for (const auto& row : rows) {
    if (std::find(nodes.begin(), nodes.end(), row.node) == nodes.end()) nodes.push_back(row.node);
  }
  return nodes;
}

template <class Field>
std::vector<double> column(const std::vector<const SoakRow*>& rows, std::size_t from,
                           std::size_t to, Field field) {
  std::vector<double> out;
  for (std::size_t i = from; i < to && i < rows.size(); ++i) out.push_back(field(*rows[i]));
  return out;
}

}  // namespace

transport::Result<SoakSeconds> parse_soak_duration(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return fail(ErrorCategory::config, 0, "--soak: '" + text + "' " + why);
  };
  std::string_view digits = text;
  double unit = 1;
  if (!digits.empty() && std::string_view("smh").find(digits.back()) != std::string_view::npos) {
    unit = digits.back() == 'h' ? 3600 : digits.back() == 'm' ? 60 : 1;
    digits.remove_suffix(1);
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
    return bad("is not a duration (expected whole seconds such as 600, or 30s, 10m, 1h)");
  }
  const double seconds = static_cast<double>(value) * unit;
  if (seconds <= 0) return bad("is not a duration: it must be positive");
  if (seconds > 7 * 24 * 3600.0) return bad("is longer than a week");
  return SoakSeconds(seconds);
}

SoakScrape parse_scrape(const std::string& text) {
  SoakScrape s;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() == '#') continue;
    const std::string_view view = line;
    const std::size_t space = view.rfind(' ');
    if (space == std::string_view::npos) continue;
    const auto value = number(view.substr(space + 1));
    if (!value) continue;
    const std::string_view series = view.substr(0, space);
    const std::size_t brace = series.find('{');
    const std::string_view name = series.substr(0, brace);
    const std::string_view labels =
        brace == std::string_view::npos ? std::string_view{} : series.substr(brace);
    if (name == "boreal_process_resident_memory_bytes") {
      s.rss_bytes += *value;
    } else if (name == "boreal_node_tuples_sent_total" ||
               name == "boreal_node_tuples_received_total") {
      s.tuples += *value;
    } else if (name == "boreal_link_frames_unacknowledged") {
      s.frames_unacknowledged += *value;
    } else if (name == "boreal_link_send_buffers_in_use") {
      s.buffers_in_use += *value;
    } else if (name == "boreal_link_send_buffers") {
      s.buffers += *value;
    } else if (name == "boreal_link_backlog_bytes") {
      s.backlog_bytes += *value;
    } else if (name == "boreal_sink_lost_tuples") {
      s.lost += *value;
    } else if (name == "boreal_sink_duplicated_total") {
      s.duplicated += *value;
    } else if (name == "boreal_sink_out_of_order_total") {
      s.out_of_order += *value;
    } else if (name == "boreal_sink_latency_seconds_bucket") {
      if (const auto le = number(label(labels, "le"))) s.latency[*le] += *value;
    }
  }
  return s;
}

double p99_between(const std::map<double, double>& before, const std::map<double, double>& after) {
  // Cumulative counts of the interval, bucket by bucket; a bucket the earlier scrape lacks
  // (or a node that restarted, whose counts fell) counts from zero.
  std::vector<std::pair<double, double>> cumulative;
  for (const auto& [le, count] : after) {
    const auto it = before.find(le);
    const double earlier = it == before.end() || it->second > count ? 0.0 : it->second;
    cumulative.emplace_back(le, count - earlier);
  }
  if (cumulative.empty() || cumulative.back().second <= 0) return 0;
  const double rank = 0.99 * cumulative.back().second;
  double lower = 0;
  double below = 0;
  for (const auto& [le, count] : cumulative) {
    if (count >= rank) {
      if (std::isinf(le)) return lower * 1e6;
      const double share = count > below ? (rank - below) / (count - below) : 1.0;
      return (lower + (le - lower) * share) * 1e6;
    }
    lower = le;
    below = count;
  }
  return lower * 1e6;
}

std::string soak_csv_header() {
  return "elapsed_s,node,rss_kb,frames_unacknowledged,buffers_in_use,buffers,backlog_bytes,"
         "tuples_per_s,lost,duplicated,out_of_order,p99_us";
}

std::string soak_csv_line(const SoakRow& r) {
  std::string line = std::to_string(r.elapsed_s) + "," + r.node;
  for (const double v : {r.rss_kb, r.frames_unacknowledged, r.buffers_in_use, r.buffers,
                         r.backlog_bytes, r.tuples_per_s, r.lost, r.duplicated, r.out_of_order,
                         r.p99_us}) {
    line += "," + csv_number(v);
  }
  return line;
}

SoakVerdict flatness(const std::vector<SoakRow>& rows) {
  SoakVerdict verdict;
  auto& why = verdict.reasons;
  for (const auto& node : nodes_of(rows)) {
    const auto mine = rows_of(rows, node);
    const std::size_t n = mine.size();
    if (n < 3 * kMinWindow) {
      why.push_back(node + ": only " + std::to_string(n) + " seconds of rows (at least " +
                    std::to_string(3 * kMinWindow) + " needed)");
      continue;
    }
    const std::size_t tenth = std::max<std::size_t>(kMinWindow, n / 10);
    const std::size_t early_from = tenth;
    const std::size_t early_to = 2 * tenth;
    const std::size_t late_from = n - tenth;
    const auto rss = [](const SoakRow& r) { return r.rss_kb; };
    const double rss_early = median(column(mine, early_from, early_to, rss));
    const double rss_late = median(column(mine, late_from, n, rss));
    const double rss_allowed = std::max(0.05 * rss_early, 4.0 * 1024.0);
    if (std::abs(rss_late - rss_early) > rss_allowed) {
      why.push_back(node + ": RSS went from " + fixed(rss_early / 1024.0, 1) + " to " +
                    fixed(rss_late / 1024.0, 1) + " MiB (more than 5 % or 4 MiB)");
    }
    const auto in_use = [](const SoakRow& r) { return r.buffers_in_use; };
    const auto early_in_use = column(mine, early_from, early_to, in_use);
    const double in_use_early_max = *std::max_element(early_in_use.begin(), early_in_use.end());
    const double in_use_late = median(column(mine, late_from, n, in_use));
    const double buffers = mine.back()->buffers;
    if (in_use_late > in_use_early_max + 0.1 * buffers) {
      why.push_back(node + ": send buffers in use climbed from at most " +
                    fixed(in_use_early_max, 0) + " to a median of " + fixed(in_use_late, 1) +
                    " of " + fixed(buffers, 0));
    }
    if (mine.front()->has_latency) {
      const auto p99 = [](const SoakRow& r) { return r.p99_us; };
      const auto early = column(mine, early_from, early_to, p99);
      const double p99_early = median(early);
      const double p99_late = median(column(mine, late_from, n, p99));
      // Growth lifts the late window above anything the early one saw; noise does not.
      const double p99_early_max = *std::max_element(early.begin(), early.end());
      if (p99_late >= kBehindUs) {
        why.push_back(node + ": p99 of " + fixed(p99_late, 0) +
                      " us at the end (a second or more: the nodes fell behind the load)");
      } else if (p99_late > 2.0 * p99_early + kP99SlackUs && p99_late > p99_early_max) {
        why.push_back(node + ": p99 grew from " + fixed(p99_early, 0) + " to " +
                      fixed(p99_late, 0) +
                      " us (more than twice + 5 ms; a load the machine cannot keep up with "
                      "does this)");
      }
    }
    double lost = 0;
    double duplicated = 0;
    for (const SoakRow* r : mine) {
      lost = std::max(lost, r->lost);
      duplicated = std::max(duplicated, r->duplicated);
    }
    if (lost > 0 || duplicated > 0) {
      why.push_back(node + ": " + fixed(lost, 0) + " tuples lost and " + fixed(duplicated, 0) +
                    " duplicated at its sinks");
    }
  }
  if (rows.empty()) why.emplace_back("no rows: no node could be scraped");
  verdict.flat = why.empty();
  return verdict;
}

std::string soak_summary(const std::vector<SoakRow>& rows, const SoakVerdict& verdict,
                         double max_rate, double offered_rate) {
  std::ostringstream out;
  const auto nodes = nodes_of(rows);
  std::size_t seconds = 0;
  for (const auto& node : nodes) seconds = std::max(seconds, rows_of(rows, node).size());
  const std::size_t window = std::min<std::size_t>(60, std::max<std::size_t>(1, seconds / 3));
  out << "soak: ";
  if (max_rate > 0) out << "maximum " << rate_text(max_rate) << " tuples/s; ";
  out << "offered " << rate_text(offered_rate) << " tuples/s for " << seconds
      << " s; first and last " << window << " s (medians):\n";
  char head[256];
  std::snprintf(head, sizeof head, "  %-10s %5s %9s %9s %9s %9s %11s %11s %9s %9s %6s %6s\n",
                "node", "rows", "RSS MiB", "(last)", "p99 us", "(last)", "buffers max",
                "unacked max", "backlog B", "tuples/s", "lost", "dup");
  out << head;
  for (const auto& node : nodes) {
    const auto mine = rows_of(rows, node);
    const std::size_t n = mine.size();
    const auto rss = [](const SoakRow& r) { return r.rss_kb / 1024.0; };
    const auto p99 = [](const SoakRow& r) { return r.p99_us; };
    double in_use = 0, buffers = 0, unacked = 0, backlog = 0, lost = 0, duplicated = 0;
    for (const SoakRow* r : mine) {
      in_use = std::max(in_use, r->buffers_in_use);
      buffers = std::max(buffers, r->buffers);
      unacked = std::max(unacked, r->frames_unacknowledged);
      backlog = std::max(backlog, r->backlog_bytes);
      lost = std::max(lost, r->lost);
      duplicated = std::max(duplicated, r->duplicated);
    }
    const bool timed = n > 0 && mine.front()->has_latency;
    const auto tuples = [](const SoakRow& r) { return r.tuples_per_s; };
    const std::string buffers_text = buffers > 0 ? fixed(in_use, 0) + "/" + fixed(buffers, 0) : "-";
    char line[256];
    std::snprintf(
        line, sizeof line, "  %-10s %5zu %9s %9s %9s %9s %11s %11s %9s %9s %6s %6s\n", node.c_str(),
        n, fixed(median(column(mine, 0, window, rss)), 1).c_str(),
        fixed(median(column(mine, n - std::min(n, window), n, rss)), 1).c_str(),
        timed ? fixed(median(column(mine, 0, window, p99)), 0).c_str() : "-",
        timed ? fixed(median(column(mine, n - std::min(n, window), n, p99)), 0).c_str() : "-",
        buffers_text.c_str(), buffers > 0 ? fixed(unacked, 0).c_str() : "-",
        buffers > 0 ? fixed(backlog, 0).c_str() : "-",
        rate_text(median(column(mine, 0, n, tuples))).c_str(), fixed(lost, 0).c_str(),
        fixed(duplicated, 0).c_str());
    out << line;
  }
  if (verdict.flat) {
    out << "verdict: flat (after a 10 % warm-up, the last 10 % against the next 10 %: RSS within "
           "5 % or 4 MiB, send buffers in use not climbing, p99 within 2x + 5 ms or the early peak "
           "and under 1 s, "
           "no loss)\n";
  } else {
    out << "verdict: NOT flat\n";
    for (const auto& reason : verdict.reasons) out << "  " << reason << '\n';
  }
  return out.str();
}

SustainedMaximum sustained_maximum(const std::vector<SoakRow>& rows, std::size_t nodes, int from_s,
                                   int to_s, double mean_rate) {
  std::map<int, std::pair<std::size_t, double>> seconds;  // elapsed → (nodes seen, tuples/s)
  for (const auto& row : rows) {
    if (row.elapsed_s <= from_s || row.elapsed_s > to_s) continue;
    auto& [seen, rate] = seconds[row.elapsed_s];
    ++seen;
    rate += row.tuples_per_s;
  }
  std::vector<double> rates;
  for (const auto& [elapsed, second] : seconds) {
    if (second.first == nodes && second.second > 0) rates.push_back(second.second);
  }
  SustainedMaximum out;
  out.rate = mean_rate;
  if (rates.empty()) return out;
  double sum = 0;
  for (const double r : rates) sum += r;
  const double mean = sum / static_cast<double>(rates.size());
  std::sort(rates.begin(), rates.end());
  // The 10th percentile by nearest rank: the second-slowest of 11..20 seconds, the slowest
  // of up to 10.
  const auto rank = static_cast<std::size_t>(std::ceil(0.10 * static_cast<double>(rates.size())));
  out.slow_ratio = rates[rank == 0 ? 0 : rank - 1] / mean;
  out.rate = mean_rate * out.slow_ratio;
  out.seconds = rates.size();
  return out;
}

namespace {

// A node's previous good scrape, to take the second's differences from.
struct Previous {
  bool seen = false;
  Clock::time_point at{};
  SoakScrape scrape;
};

// One launch of the network with every node's metrics server on, scraped once a second for
// `seconds` (from when every server first answered) while the launch runs on a thread of its
// own. Rows go to `csv` too when it is given; progress every 10 s, headed `label`.
struct ScrapedRun {
  std::vector<SoakRow> rows;
  BenchSample sample;
  std::vector<std::string> errors;
  bool cut_short = false;  // the launch ended before `seconds`
};

ScrapedRun scraped_run(const BenchOptions& bench, const NetworkSpec& network, const BenchRun& run,
                       const BenchGroup& group, std::optional<double> rate, int seconds,
                       std::ostream* csv, const std::string& label) {
  std::ostream* progress = bench.progress;
  ScrapedRun result;
  const std::size_t node_count = network.nodes.size();
  // Reserved until this run is done (lease_tcp_ports: no other boreal run takes them).
  auto port = lease_tcp_ports("127.0.0.1", static_cast<std::uint16_t>(node_count));
  if (!port) {
    result.errors.push_back("no free ports for the metrics servers: " + port.error().message);
    return result;
  }
  std::vector<std::string> hosts;
  for (const auto& node : network.nodes) {
    const std::string bound = metrics_bind_address(node.uri.host);
    hosts.push_back(bound == "0.0.0.0" ? "127.0.0.1" : bound);
  }
  std::atomic<bool> finished{false};
  std::thread launcher([&] {
    result.sample = run_bench_launch(bench, network, run, group, rate, result.errors,
                                     port.value().port());
    finished.store(true);
  });

  std::vector<Previous> previous(node_count);
  auto scrape_all = [&](int elapsed, bool write_rows) {
    for (std::size_t i = 0; i < node_count; ++i) {
      const auto text = scrape(hosts[i], static_cast<std::uint16_t>(port.value().port() + i));
      if (!text) continue;
      const auto now = Clock::now();
      SoakScrape scraped = parse_scrape(*text);
      Previous& before = previous[i];
      if (write_rows && before.seen) {
        const double dt = std::chrono::duration<double>(now - before.at).count();
        SoakRow row;
        row.elapsed_s = elapsed;
        row.node = network.nodes[i].name;
        row.rss_kb = scraped.rss_bytes / 1024.0;
        row.frames_unacknowledged = scraped.frames_unacknowledged;
        row.buffers_in_use = scraped.buffers_in_use;
        row.buffers = scraped.buffers;
        row.backlog_bytes = scraped.backlog_bytes;
        row.tuples_per_s = dt > 0 ? std::max(0.0, scraped.tuples - before.scrape.tuples) / dt : 0;
        row.lost = scraped.lost;
        row.duplicated = scraped.duplicated;
        row.out_of_order = scraped.out_of_order;
        row.has_latency = !scraped.latency.empty();
        row.p99_us = p99_between(before.scrape.latency, scraped.latency);
        if (csv != nullptr) *csv << soak_csv_line(row) << '\n';
        result.rows.push_back(std::move(row));
      }
      before = {true, now, std::move(scraped)};
    }
    if (csv != nullptr) csv->flush();
  };

  // Wait for every node's server to answer once: that scrape is the first row's "before".
  const auto give_up = Clock::now() + kServersUp;
  while (!finished.load() && Clock::now() < give_up) {
    scrape_all(0, false);
    if (std::all_of(previous.begin(), previous.end(), [](const Previous& p) { return p.seen; }))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto start = Clock::now();
  for (int second = 1; second <= seconds && !finished.load(); ++second) {
    std::this_thread::sleep_until(start + std::chrono::seconds(second));
    scrape_all(second, true);
    if (progress == nullptr || (second % 10 != 0 && second != seconds)) continue;
    *progress << "[" << label << " " << second << "/" << seconds << " s]";
    for (const SoakRow& r : result.rows) {
      if (r.elapsed_s != second) continue;
      *progress << " " << r.node << ": RSS " << fixed(r.rss_kb / 1024.0, 1) << " MiB, "
                << rate_text(r.tuples_per_s) << "/s";
      if (r.buffers > 0)
        *progress << ", buffers " << fixed(r.buffers_in_use, 0) << "/" << fixed(r.buffers, 0);
      if (r.has_latency) {
        *progress << ", p99 " << fixed(r.p99_us, 0) << " us, lost " << fixed(r.lost, 0) << ", dup "
                  << fixed(r.duplicated, 0);
      }
      *progress << ";";
    }
    *progress << '\n';
  }
  result.cut_short = finished.load();
  launcher.join();
  return result;
}

}  // namespace

int run_soak(const SoakOptions& options, std::ostream& out) {
  const BenchOptions& bench = options.bench;
  std::ostream* progress = bench.progress;
  auto problems = check(bench.grid);
  if (bench.grid.media.size() != 1 || bench.grid.waits.size() != 1 ||
      bench.grid.tuple_bytes.size() != 1 || bench.grid.batch_bytes.size() != 1) {
    problems.emplace_back("--soak runs one medium, wait mode, tuple size and frame size");
  }
  if (!problems.empty()) {
    for (const auto& p : problems) std::cerr << "bench: " << p << '\n';
    return 2;
  }
  const auto base = load_network(bench.grid.file);
  if (!base) {
    std::cerr << base.error().joined() << '\n';
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(bench.out_dir, ec);
  const std::string csv_path = bench.out_dir + "/soak.csv";
  std::ofstream csv(csv_path, std::ios::trunc);
  if (ec || !csv) {
    std::cerr << "bench: cannot write to '" << bench.out_dir << "': "
              << (ec ? ec.message() : std::strerror(errno)) << '\n';
    return 2;
  }
  const BenchGroup group = groups(bench.grid).front();
  const std::string wait = bench.grid.waits.front();
  const std::size_t node_count = base.value().nodes.size();

  // 1. The sustained maximum (unless the rate is absolute): a run at max, scraped like the
  //    soak, its measured rate scaled down to its slow seconds (sustained_maximum()).
  double max_rate = 0;
  SustainedMaximum sustained;
  if (options.rate.needs_max()) {
    const int warmup_s = static_cast<int>(std::ceil(bench.grid.warmup.count()));
    const int max_seconds =
        static_cast<int>(std::floor((bench.grid.warmup + bench.grid.duration).count()));
    if (progress != nullptr) {
      *progress << "bench: soak of " << bench.grid.file << " (" << group.medium << ", " << wait
                << "): measuring the sustained maximum for " << max_seconds << " s\n";
    }
    ScrapedRun at_max = scraped_run(bench, base.value(), {0, wait, kCalibrationRun, 0}, group,
                                    std::nullopt, max_seconds, nullptr, "max");
    const auto& summary = at_max.sample.summary;
    const double mean_rate = !summary             ? 0
                             : bench.grid.network ? summary->events_per_s
                                                  : summary->tuples_per_s;
    if (!at_max.sample.ok || mean_rate <= 0) {
      std::cerr << "bench: the run at max failed, so the soak has no rate"
                << (at_max.errors.empty() ? std::string() : ": " + at_max.errors.front()) << '\n';
      return 1;
    }
    // The last second may hold the sources' end; it is left out.
    sustained = sustained_maximum(at_max.rows, node_count, warmup_s, max_seconds - 1, mean_rate);
    max_rate = sustained.rate;
    if (progress != nullptr) {
      *progress << "bench: at max " << rate_text(mean_rate) << " tuples/s on average";
      if (sustained.seconds > 0) {
        *progress << ", its slowest 10 % of " << sustained.seconds << " seconds at "
                  << fixed(100.0 * sustained.slow_ratio, 0) << " % of that";
      }
      *progress << ": sustained maximum " << rate_text(max_rate) << " tuples/s\n";
    }
  }
  const std::optional<double> rate = options.rate.offered(max_rate);
  if (!rate || *rate <= 0) {
    std::cerr << "bench: --rates " << options.rate.label
              << ": a soak needs a load below the maximum\n";
    return 2;
  }
  const double offered = *rate;

  // 2. The soak.
  BenchOptions soak_options = bench;
  soak_options.grid.duration = options.duration + SoakSeconds(kTailS);
  const auto seconds_total = static_cast<int>(std::lround(options.duration.count()));
  if (progress != nullptr) {
    *progress << "bench: ";
    if (max_rate > 0) *progress << "maximum " << rate_text(max_rate) << " tuples/s; ";
    *progress << "soaking at " << options.rate.label
              << (max_rate > 0 ? " = " + rate_text(offered) : std::string()) << " tuples/s for "
              << seconds_total << " s, scraping " << node_count << " nodes once a second\n";
  }
  const BenchMeta meta = describe_machine(bench.command);
  csv << "# boreal bench --soak: host=" << meta.host << " cpus=" << meta.cpus
      << " kernel=" << meta.kernel << " commit=" << meta.commit << " date=" << meta.date << '\n'
      << "# command: " << meta.command << '\n'
      << "# " << group.medium << ", wait " << wait << ", maximum "
      << (max_rate > 0
              ? csv_number(max_rate) +
                    " tuples/s (sustained: " + fixed(100.0 * sustained.slow_ratio, 1) +
                    " % of the run at max's mean, from " + std::to_string(sustained.seconds) + " s)"
              : std::string("not measured"))
      << ", offered " << csv_number(offered) << " tuples/s\n"
      << soak_csv_header() << '\n';
  ScrapedRun soak = scraped_run(soak_options, base.value(), {0, wait, 0, 0}, group, offered,
                                seconds_total, &csv, "soak");
  csv.close();
  std::vector<SoakRow>& rows = soak.rows;
  const bool cut_short = soak.cut_short;
  const std::vector<std::string>& soak_errors = soak.errors;

  SoakVerdict verdict = flatness(rows);
  if (cut_short) verdict.reasons.insert(verdict.reasons.begin(), "the run ended before DURATION");
  if (!soak.sample.ok) {
    verdict.reasons.insert(
        verdict.reasons.begin(),
        "the soak run failed" + (soak_errors.empty() ? std::string() : ": " + soak_errors.front()));
  }
  verdict.flat = verdict.reasons.empty();
  const std::string summary = soak_summary(rows, verdict, max_rate, offered);
  out << summary;
  std::ofstream(bench.out_dir + "/soak.txt", std::ios::trunc) << summary;

  if (bench.plots) {
    if (auto python = find_plot_python()) {
      auto plotted =
          run_program({*python, bench.plot_script, "--soak", csv_path, "--out", bench.out_dir},
                      SoakSeconds(120));
      if (!plotted || plotted->status != 0) {
        std::cerr << "bench: plotting failed: "
                  << (plotted ? plotted->output : "cannot run " + *python);
      } else if (progress != nullptr) {
        *progress << plotted->output;
      }
    } else {
      std::cerr << "bench: no Python with matplotlib (apt-get install python3-matplotlib); "
                   "no plot. The CSV is "
                << csv_path << '\n';
    }
  }
  if (progress != nullptr)
    *progress << "bench: soak done; " << bench.out_dir << "/{soak.csv,soak.txt,soak.png}\n";
  return verdict.flat ? 0 : 1;
}

}  // namespace boreal::runtime
