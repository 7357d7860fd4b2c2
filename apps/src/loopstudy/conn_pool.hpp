// Per-connection structures (buffers and frame state) for the loop study, either allocated
// for every connection and freed when it closes, or recycled through a free list (the
// `recycled` strategy). Counts the allocations made after warm-up (the first connection of
// every link), which is what the recycled option is meant to bring to zero. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace boreal::runtime::loopstudy {

template <class Conn>
class ConnPool {
 public:
  // `make` builds one structure with its buffers sized for the whole run.
  ConnPool(bool recycle, std::function<std::unique_ptr<Conn>()> make)
      : recycle_(recycle), make_(std::move(make)) {}

  // A structure for a new connection, reset by the caller. Allocates unless a recycled one
  // is free.
  [[nodiscard]] std::unique_ptr<Conn> take() {
    if (!free_.empty()) {
      auto conn = std::move(free_.back());
      free_.pop_back();
      return conn;
    }
    if (warm_) ++allocations_after_warmup_;
    return make_();
  }
  // The structure of a closed connection: kept for the next take() when recycling, freed
  // otherwise.
  void give(std::unique_ptr<Conn> conn) {
    if (recycle_) free_.push_back(std::move(conn));
  }
  // Called once every link has its first connection.
  void end_warmup() {
    warm_ = true;
    free_.reserve(free_.size() + 64);  // ≤ 64 links: give() never grows the list later
  }
  [[nodiscard]] std::uint64_t allocations_after_warmup() const noexcept {
    return allocations_after_warmup_;
  }

 private:
  bool recycle_;
  bool warm_ = false;
  std::function<std::unique_ptr<Conn>()> make_;
  std::vector<std::unique_ptr<Conn>> free_;
  std::uint64_t allocations_after_warmup_ = 0;
};

}  // namespace boreal::runtime::loopstudy
