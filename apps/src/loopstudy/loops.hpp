// The wait strategies' thread bodies: each builds its poller (an epoll set, a ring, a
// signal mask) on the calling thread, runs drivers.hpp's loop with it and tears it down.
// run_study() picks one sender and one receiver body by strategy name.
#pragma once

#include <cstdint>

#include <boreal/transport/error.hpp>

#include "loopstudy/recv_core.hpp"
#include "loopstudy/send_core.hpp"
#include "loopstudy/study_shape.hpp"

namespace boreal::runtime::loopstudy {

// rearm: EPOLLOUT registered before every send and removed after it; receiver
// level-triggered. lazy: EPOLLOUT kept while the link has data, dropped after
// kLazyIdleWakeups idle loop iterations; receiver level-triggered. edge: every socket
// registered once with EPOLLIN|EPOLLOUT|EPOLLET, speculative sends and draining reads.
enum class EpollMode { rearm, lazy, edge };

// FlexPoll keeps write interest while "the link is under load"; this many consecutive loop
// iterations with nothing to send end the load. Each saves two epoll_ctl per send; an
// armed idle link costs at most this many extra epoll_wait wake-ups before it is dropped.
inline constexpr int kLazyIdleWakeups = 8;

[[nodiscard]] transport::Result<void> run_epoll_sender(EpollMode mode, SendCore& core,
                                                       const StudyControl& control,
                                                       std::uint64_t& epoll_ctl_saved);
[[nodiscard]] transport::Result<void> run_epoll_receiver(EpollMode mode, RecvCore& core,
                                                         const StudyControl& control);

// io_uring: interest changes (IORING_OP_POLL_ADD, one-shot) collected during an iteration
// and submitted with the wait in one io_uring_enter. available() says whether the kernel
// lets this process set up a ring (io_uring_queue_init), with the reason when it does not.
[[nodiscard]] transport::Result<void> uring_available();
[[nodiscard]] transport::Result<void> run_uring_sender(SendCore& core, const StudyControl& control);
[[nodiscard]] transport::Result<void> run_uring_receiver(RecvCore& core,
                                                         const StudyControl& control);

// Signal-driven I/O: O_ASYNC, F_SETSIG(SIGRTMIN), F_SETOWN_EX to the calling thread,
// SIGRTMIN (and SIGIO, the queue-overflow signal) blocked and taken with sigtimedwait.
[[nodiscard]] transport::Result<void> run_sigio_sender(SendCore& core, const StudyControl& control);
[[nodiscard]] transport::Result<void> run_sigio_receiver(RecvCore& core,
                                                         const StudyControl& control);

// Thread per link: blocking send and recv on one link, no readiness notification.
[[nodiscard]] transport::Result<void> run_blocking_sender(SendCore& core,
                                                          const StudyControl& control);
[[nodiscard]] transport::Result<void> run_blocking_receiver(RecvCore& core,
                                                            const StudyControl& control);

}  // namespace boreal::runtime::loopstudy
