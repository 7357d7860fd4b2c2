// The Prometheus text exposition format, version 0.0.4, of one node's MetricsSample
// (metrics_sample.hpp). docs/metrics.md lists every metric with its type, labels and meaning.
//
// Every family gets its HELP and TYPE lines, then one line per series; families appear in a
// fixed order and series in the node's thread, link and box order, so a sample always renders
// to the same text. Label values are escaped as the format requires (\\, \" and \n).
// Called on the metrics server's thread, once per scrape: it allocates freely.
#pragma once

#include <string>
#include <string_view>

#include "runtime/metrics_sample.hpp"

namespace boreal::runtime {

// The Content-Type of what render_metrics() returns.
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4";

[[nodiscard]] std::string render_metrics(const MetricsSample& sample);

}  // namespace boreal::runtime
