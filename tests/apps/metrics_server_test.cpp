// The metrics server (runtime/metrics_server.hpp): serves the rendered text at GET /metrics
// with the exposition format's content type, 404 elsewhere, 405 for other methods; a client
// that sends garbage, too large a header, or never finishes its request gets an error or a
// closed connection, and the server keeps serving everyone else; stop() returns with
// connections still open.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "apps/http_test_client.hpp"
#include "runtime/metrics_server.hpp"
#include "runtime/metrics_text.hpp"

namespace {

using namespace boreal::runtime;
using namespace boreal::test;
using namespace std::chrono_literals;
namespace http = boost::beast::http;

constexpr const char* kText =
    "# HELP boreal_x_total X.\n# TYPE boreal_x_total counter\nboreal_x_total{node=\"n\"} 7\n";

std::unique_ptr<MetricsServer> start_server(std::chrono::milliseconds timeout = 5s,
                                            std::atomic<int>* renders = nullptr) {
  MetricsServerOptions options;
  options.port = 0;
  options.timeout = timeout;
  auto server = MetricsServer::start(options, [renders] {
    if (renders != nullptr) ++*renders;
    return std::string(kText);
  });
  EXPECT_TRUE(server) << (server ? "" : server.error().message);
  return server ? std::move(server).value() : nullptr;
}

// The server answered with `status_line`, or closed without a word (a close with unread input
// may reset the connection before its answer is read).
bool nothing_or(const RawReply& reply, const std::string& status_line) {
  return reply.received.empty() || reply.received.rfind(status_line, 0) == 0;
}

TEST(MetricsServer, ServesTheRenderedTextAtGetMetrics) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  ASSERT_NE(server->port(), 0);
  EXPECT_EQ(server->url(), "http://127.0.0.1:" + std::to_string(server->port()) + "/metrics");
  const HttpReply reply = http_get(server->port(), "/metrics");
  EXPECT_EQ(reply.status, 200) << reply.error;
  EXPECT_EQ(reply.content_type, std::string(kMetricsContentType));
  EXPECT_EQ(reply.content_type, "text/plain; version=0.0.4");
  EXPECT_EQ(reply.body, kText);
  EXPECT_EQ(http_get(server->port(), "/metrics?name[]=x").status, 200);
}

TEST(MetricsServer, OtherPathsAre404AndOtherMethods405) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(http_get(server->port(), "/nope").status, 404);
  EXPECT_EQ(http_get(server->port(), "/").status, 404);
  const HttpReply post = http_request(server->port(), http::verb::post, "/metrics");
  EXPECT_EQ(post.status, 405) << post.error;
  EXPECT_EQ(post.allow, "GET");
  EXPECT_EQ(http_request(server->port(), http::verb::delete_, "/metrics").status, 405);
}

TEST(MetricsServer, AnswersEveryRequestOfAKeptAliveConnection) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  const std::string one = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string last = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const RawReply reply = raw_exchange(server->port(), one + one + last, 5s);
  EXPECT_TRUE(reply.closed);
  std::size_t answers = 0;
  for (std::size_t at = reply.received.find("HTTP/1.1 200 OK"); at != std::string::npos;
       at = reply.received.find("HTTP/1.1 200 OK", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 3U) << reply.received;
}

TEST(MetricsServer, GarbageGetsAnErrorAndTheServerServesTheNextRequest) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  const RawReply garbage = raw_exchange(server->port(), "\x01\x02 this is not http\r\n\r\n", 5s);
  EXPECT_TRUE(garbage.closed);
  EXPECT_TRUE(nothing_or(garbage, "HTTP/1.1 400")) << garbage.received;
  EXPECT_EQ(http_get(server->port(), "/metrics").status, 200);
}

TEST(MetricsServer, AHugeHeaderOrBodyIsRefusedAndTheServerServesOn) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  const std::string header = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                             std::string(4 * MetricsServer::kHeaderLimit, 'a') + "\r\n\r\n";
  const RawReply big_header = raw_exchange(server->port(), header, 5s);
  EXPECT_TRUE(big_header.closed);
  EXPECT_TRUE(nothing_or(big_header, "HTTP/1.1 431")) << big_header.received;
  const std::string body = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                           std::to_string(4 * MetricsServer::kBodyLimit) + "\r\n\r\n" +
                           std::string(4 * MetricsServer::kBodyLimit, 'b');
  const RawReply big_body = raw_exchange(server->port(), body, 5s);
  EXPECT_TRUE(big_body.closed);
  EXPECT_TRUE(nothing_or(big_body, "HTTP/1.1 413")) << big_body.received;
  EXPECT_EQ(http_get(server->port(), "/metrics").status, 200);
}

TEST(MetricsServer, AClientThatNeverFinishesIsCutOffAtTheDeadlineWhileOthersAreServed) {
  auto server = start_server(300ms);
  ASSERT_NE(server, nullptr);
  RawReply slow;
  const auto start = std::chrono::steady_clock::now();
  std::thread slow_client([&] { slow = raw_exchange(server->port(), "GET /metr", 10s); });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(http_get(server->port(), "/metrics").status, 200);  // served meanwhile
  slow_client.join();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(slow.closed);
  EXPECT_TRUE(slow.received.empty()) << slow.received;
  EXPECT_LT(took, 5s);
  EXPECT_EQ(http_get(server->port(), "/metrics").status, 200);
}

TEST(MetricsServer, StopReturnsWithConnectionsOpenAndClosesThem) {
  auto server = start_server(30s);
  ASSERT_NE(server, nullptr);
  RawReply idle;
  std::thread client(
      [&] { idle = raw_exchange(server->port(), "GET /metrics HTTP/1.1\r\n", 10s); });
  std::this_thread::sleep_for(100ms);
  const auto start = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  client.join();
  EXPECT_TRUE(idle.closed);
  server->stop();  // idempotent
}

TEST(MetricsServer, APortInUseIsAnErrorThatNamesIt) {
  auto first = start_server();
  ASSERT_NE(first, nullptr);
  MetricsServerOptions options;
  options.port = first->port();
  auto second = MetricsServer::start(options, [] { return std::string(); });
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find(std::to_string(first->port())), std::string::npos)
      << second.error().message;
}

TEST(MetricsServer, BindsANumericHostAndLoopbackOrEveryInterfaceOtherwise) {
  EXPECT_EQ(metrics_bind_address("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(metrics_bind_address("198.18.0.2"), "198.18.0.2");
  EXPECT_EQ(metrics_bind_address("::1"), "::1");
  EXPECT_EQ(metrics_bind_address("localhost"), "127.0.0.1");
  EXPECT_EQ(metrics_bind_address(""), "127.0.0.1");
  EXPECT_EQ(metrics_bind_address("node2.cluster"), "0.0.0.0");
}

TEST(MetricsServer, RendersOncePerScrape) {
  std::atomic<int> renders{0};
  auto server = start_server(5s, &renders);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(http_get(server->port(), "/nope").status, 404);
  EXPECT_EQ(renders.load(), 0);
  EXPECT_EQ(http_get(server->port(), "/metrics").status, 200);
  EXPECT_EQ(http_get(server->port(), "/metrics").status, 200);
  EXPECT_EQ(renders.load(), 2);
}

}  // namespace
