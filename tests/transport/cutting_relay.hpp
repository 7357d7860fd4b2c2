// A relay between the two ends of tcp connections, for the tests that break them: it
// resets both of its sockets on demand (SO_LINGER 0, so the peers see a reset, not an orderly
// close), or refuses to relay any more, and counts the connections it relayed.
#pragma once

#include <array>
#include <atomic>
#include <future>
#include <list>
#include <memory>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

namespace boreal::transport::testing {

namespace asio = boost::asio;

// Relays connections from its port to `target_port`, on its own thread. cut() resets every
// relayed connection; refuse() also stops accepting new ones.
class CuttingRelay {
  using tcp = asio::ip::tcp;

 public:
  explicit CuttingRelay(std::uint16_t target_port)
      : acceptor_(context_, {asio::ip::make_address("127.0.0.1"), 0}), target_port_(target_port) {
    accept();
    thread_ = std::thread([this] { context_.run(); });
  }
  CuttingRelay(const CuttingRelay&) = delete;
  CuttingRelay& operator=(const CuttingRelay&) = delete;
  ~CuttingRelay() {
    context_.stop();
    thread_.join();
  }

  [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  [[nodiscard]] int accepted() const { return accepted_.load(); }

  void cut() { run_here([this] { reset_all(); }); }
  void refuse() {
    run_here([this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      reset_all();
    });
  }

 private:
  struct Pair {
    explicit Pair(asio::io_context& context) : front(context), back(context) {}
    tcp::socket front;  // from the sender
    tcp::socket back;   // to the receiver
    std::array<char, 65536> to_back{};
    std::array<char, 65536> to_front{};
  };

  template <typename F>
  void run_here(F f) {
    std::promise<void> done;
    asio::post(context_, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec) return;
      auto pair = std::make_shared<Pair>(context_);
      pair->front = std::move(socket);
      boost::system::error_code connect_ec;
      pair->back.connect({asio::ip::make_address("127.0.0.1"), target_port_}, connect_ec);
      if (!connect_ec) {
        ++accepted_;
        pairs_.push_back(pair);
        relay(pair, pair->front, pair->back, pair->to_back);
        relay(pair, pair->back, pair->front, pair->to_front);
      }
      accept();
    });
  }

  void relay(const std::shared_ptr<Pair>& pair, tcp::socket& from, tcp::socket& to,
             std::array<char, 65536>& buffer) {
    from.async_read_some(asio::buffer(buffer), [this, pair, &from, &to, &buffer](
                                                   const boost::system::error_code& ec,
                                                   std::size_t n) {
      if (ec) return reset(*pair);
      asio::async_write(to, asio::buffer(buffer.data(), n),
                        [this, pair, &from, &to, &buffer](const boost::system::error_code& wec,
                                                          std::size_t) {
                          if (wec) return reset(*pair);
                          relay(pair, from, to, buffer);
                        });
    });
  }

  static void reset(Pair& pair) {
    for (tcp::socket* s : {&pair.front, &pair.back}) {
      boost::system::error_code ignored;
      s->set_option(asio::socket_base::linger(true, 0), ignored);
      s->close(ignored);
    }
  }
  void reset_all() {
    for (auto& pair : pairs_) reset(*pair);
    pairs_.clear();
  }

  asio::io_context context_;
  tcp::acceptor acceptor_;
  std::uint16_t target_port_;
  std::list<std::shared_ptr<Pair>> pairs_;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

}  // namespace boreal::transport::testing
