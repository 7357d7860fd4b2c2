#include "fabric/fabric_context.hpp"
#include "fabric/fabric_library.hpp"

#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string_view>
#include <utility>

#include <boost/asio/error.hpp>

#include <boreal/transport/sanitizers.hpp>

namespace boreal::transport::fabric_medium {
namespace {

constexpr std::uint32_t kApiVersion = FI_VERSION(1, 17);
constexpr std::uint64_t kNeededCaps = FI_MSG | FI_TAGGED;
constexpr std::size_t kCqDepth = 1024;

struct InfoDeleter {
  void operator()(fi_info* info) const noexcept { loaded_libfabric().freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// Hints: what boreal needs plus every mr_mode bit it can honour (docs/transport-notes.md §1.2).
InfoPtr make_hints(const std::string& provider, bool full, bool rma, bool waw = false) {
  InfoPtr hints(loaded_libfabric().dupinfo(nullptr));  // fi_allocinfo()
  if (!hints) return hints;
  hints->ep_attr->type = FI_EP_RDM;
  hints->fabric_attr->prov_name = ::strdup(provider.c_str());
  if (full) {
    hints->caps = kNeededCaps | (rma ? FI_RMA : 0);
    hints->mode = FI_CONTEXT;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                  FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->av_type = FI_AV_TABLE;
    // fabric-rma also asks for write-after-write order (ring words), and goes without it
    // where the provider has none.
    hints->tx_attr->msg_order = FI_ORDER_SAS | (waw ? FI_ORDER_WAW : 0);
    hints->rx_attr->msg_order = FI_ORDER_SAS | (waw ? FI_ORDER_WAW : 0);
  }
  return hints;
}

std::string strerror_of(int rc) { return loaded_libfabric().strerror(rc < 0 ? -rc : rc); }

}  // namespace

Registration& Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    if (mr_) fi_close(&mr_->fid);
    mr_ = std::exchange(other.mr_, nullptr);
  }
  return *this;
}

Registration::~Registration() {
  if (mr_) fi_close(&mr_->fid);
}

void* Registration::desc() const noexcept { return mr_ ? fi_mr_desc(mr_) : nullptr; }
std::uint64_t Registration::key() const noexcept { return mr_ ? fi_mr_key(mr_) : 0; }

FabricContext::FabricContext(EventLoop& loop, std::string provider)
    : loop_(loop), provider_(std::move(provider)), recheck_(loop.context()) {}

FabricContext::~FabricContext() {
  *alive_ = false;
  recheck_.cancel();
  if (descriptor_) {
    // The fd belongs to the CQ: cancel our wait and hand it back without closing it.
    boost::system::error_code ignored;
    descriptor_->cancel(ignored);
    (void)descriptor_->release();
  }
  close_endpoint();
  if (cq_) fi_close(&cq_->fid);
  if (av_) fi_close(&av_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) loaded_libfabric().freeinfo(info_);
}

void FabricContext::close_endpoint() noexcept {
  if (ep_) fi_close(&ep_->fid);
  ep_ = nullptr;
}

Error FabricContext::error(const char* call, int rc) const {
  return Error{ErrorCategory::fabric, rc,
               std::string(call) + " (provider " + provider_ + "): " + strerror_of(rc)};
}

Result<std::unique_ptr<FabricContext>> FabricContext::open(EventLoop& loop,
                                                           const std::string& provider,
                                                           const std::string& host,
                                                           std::uint16_t port, bool bind_local,
                                                           Rma rma) {
  auto library = load_libfabric();
  if (!library) return library.error();
  const auto getinfo = library.value()->getinfo;
  std::unique_ptr<FabricContext> context(new FabricContext(loop, provider));
  // First ask only for the provider, to tell "not here" from "lacks a capability".
  {
    auto hints = make_hints(provider, false, false);
    fi_info* found = nullptr;
    const int rc = getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &found);
    InfoPtr any(found);
    if (rc != 0) {
      auto e = context->error("fi_getinfo", rc);
      e.message += ": no reliable-datagram (FI_EP_RDM) endpoint of provider '" + provider +
                   "' here (`fi_info -l` lists the providers)";
      return e;
    }
    std::uint64_t caps = 0;
    for (auto* i = any.get(); i; i = i->next) caps |= i->caps;
    std::string missing;
    if (!(caps & FI_MSG)) missing += " FI_MSG";
    if (!(caps & FI_TAGGED)) missing += " FI_TAGGED";
    if (!missing.empty()) {
      return fail(ErrorCategory::fabric, -FI_ENODATA,
                  "provider '" + provider + "' lacks" + missing + ", which fabric-msg needs");
    }
    if (!(caps & FI_RMA)) {
      context->rma_missing_ = "provider '" + provider + "' lacks FI_RMA, which fabric-rma needs";
      if (rma == Rma::required) {
        return fail(ErrorCategory::fabric, -FI_ENODATA, context->rma_missing_);
      }
      rma = Rma::unwanted;
    }
  }
  const std::string service = std::to_string(port);
  auto get = [&](bool with_rma, fi_info** found) {
    const auto flags = bind_local ? FI_SOURCE : 0;
    if (with_rma) {
      auto ordered = make_hints(provider, true, true, /*waw=*/true);
      if (getinfo(kApiVersion, host.c_str(), service.c_str(), flags, ordered.get(), found) ==
          0) {
        return 0;
      }
    }
    auto hints = make_hints(provider, true, with_rma);
    return getinfo(kApiVersion, host.c_str(), service.c_str(), flags, hints.get(), found);
  };
  fi_info* found = nullptr;
  int rc = get(rma != Rma::unwanted, &found);
  if (rc != 0 && rma == Rma::if_offered) {
    // FI_RMA is listed but not with everything else we ask for: serve fabric-msg only.
    context->rma_missing_ = "provider '" + provider + "' at " + host + ":" + service +
                            " offers FI_RMA only without the other capabilities boreal needs, "
                            "so fabric-rma is not available";
    rma = Rma::unwanted;
    rc = get(false, &found);
  }
  if (rc != 0) {
    auto e = context->error("fi_getinfo", rc);
    e.message += ": provider '" + provider + "' at " + host + ":" + service +
                 " offers no FI_EP_RDM endpoint with FI_MSG|FI_TAGGED" +
                 std::string(rma == Rma::required ? "|FI_RMA" : "") +
                 ", send-after-send order, FI_THREAD_DOMAIN and FI_AV_TABLE";
    return e;
  }
  if (auto ok = context->setup(found, bind_local); !ok) return ok.error();
  if (rma == Rma::unwanted) {
    if (context->rma_missing_.empty()) {
      context->rma_missing_ =
          "this endpoint of provider '" + provider + "' was opened for fabric-msg only";
    }
  } else {
    context->check_rma();
    if (rma == Rma::required && !context->rma_missing_.empty()) {
      return fail(ErrorCategory::fabric, -FI_ENODATA, context->rma_missing_);
    }
  }
  return context;
}

void FabricContext::check_rma() {
  // The immediate data of fabric-rma is 32 bits (fabric_wire.hpp).
  if (!(info_->caps & FI_RMA)) {
    rma_missing_ = "provider '" + provider_ + "' lacks FI_RMA, which fabric-rma needs";
  } else if (info_->domain_attr->cq_data_size < 4) {
    rma_missing_ = "provider '" + provider_ + "' lacks 4 bytes of remote CQ data (it offers " +
                   std::to_string(info_->domain_attr->cq_data_size) + "), which fabric-rma needs";
  }
}

bool FabricContext::hardware_rma() const noexcept {
  // "verbs;ofi_rxm" and the like name the core provider first.
  const std::string_view name(provider_);
  const auto core = name.substr(0, name.find(';'));
  return core == "verbs" || core == "efa";
}

std::size_t FabricContext::rx_size() const noexcept {
  return info_ != nullptr && info_->rx_attr != nullptr ? info_->rx_attr->size : 0;
}

std::uint64_t FabricContext::remote_address(const std::byte* base) const noexcept {
  if (!(info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR)) return 0;
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(base));
}

Result<void> FabricContext::setup(fi_info* info, bool bind_local) {
  info_ = info;
  inject_bytes_ = info->tx_attr->inject_size;
  if ((info->caps & FI_RMA) && (info->tx_attr->msg_order & FI_ORDER_WAW) &&
      (info->rx_attr->msg_order & FI_ORDER_WAW)) {
    ordered_write_bytes_ = info->ep_attr->max_order_waw_size;
  }
  // The sockets provider's own (uninstrumented) threads write the ring, and only x86's store
  // order puts a frame's bytes before its ring word: ThreadSanitizer sees a race on every
  // frame. Under it, that provider keeps immediate data, whose completion passes a mutex
  // TSan does see (tests/sanitizers/tsan.supp).
  if (kUnderThreadSanitizer && provider_ == "sockets") ordered_write_bytes_ = 0;
  yield_when_idle_ = info->domain_attr->data_progress == FI_PROGRESS_AUTO;
  if (int rc = loaded_libfabric().fabric(info->fabric_attr, &fabric_, nullptr)) {
    return error("fi_fabric", rc);
  }
  if (int rc = fi_domain(fabric_, info, &domain_, nullptr)) return error("fi_domain", rc);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  if (int rc = fi_av_open(domain_, &av_attr, &av_, nullptr)) return error("fi_av_open", rc);
  fi_cq_attr cq_attr{};
  cq_attr.size = kCqDepth;
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.wait_obj = FI_WAIT_FD;
  bool have_fd = true;
  if (fi_cq_open(domain_, &cq_attr, &cq_, nullptr) != 0) {
    // No wait fd (shm says -FI_ENOSYS): poll-only CQ, see the header.
    have_fd = false;
    cq_attr.wait_obj = FI_WAIT_NONE;
    if (int rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr)) return error("fi_cq_open", rc);
  }
  if (int rc = fi_endpoint(domain_, info, &ep_, nullptr)) return error("fi_endpoint", rc);
  if (int rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV))
    return error("fi_ep_bind(cq)", rc);
  if (int rc = fi_ep_bind(ep_, &av_->fid, 0)) return error("fi_ep_bind(av)", rc);
  if (int rc = fi_enable(ep_)) return error("fi_enable", rc);
  if (have_fd) {
    int fd = -1;
    if (int rc = fi_control(&cq_->fid, FI_GETWAIT, &fd)) return error("fi_control(FI_GETWAIT)", rc);
    descriptor_.emplace(loop_.context(), fd);
  }
  if (!bind_local) {
    if (!info->dest_addr) {
      return fail(ErrorCategory::fabric, -FI_EADDRNOTAVAIL,
                  "fi_getinfo (provider " + provider_ + ") resolved no destination address");
    }
    const int n = fi_av_insert(av_, info->dest_addr, 1, &peer_, 0, nullptr);
    if (n != 1) return error("fi_av_insert", n < 0 ? n : -FI_EADDRNOTAVAIL);
  }
  return success();
}

Result<Registration> FabricContext::register_region(std::span<std::byte> region,
                                                    std::uint64_t access) {
  const auto mode = info_->domain_attr->mr_mode;
  const bool remote = (access & (FI_REMOTE_WRITE | FI_REMOTE_READ)) != 0;
  if (!remote && !(mode & FI_MR_LOCAL)) return Registration{};
  fid_mr* mr = nullptr;
  // Without FI_MR_PROV_KEY the requested key is the key; with it the provider picks one
  // (fi_mr_key, which the peer is always sent: docs/transport-notes.md §1.3.6).
  if (int rc = fi_mr_reg(domain_, region.data(), region.size(), access, 0,
                         next_key_++, 0, &mr, nullptr)) {
    return error("fi_mr_reg", rc);
  }
  Registration registration(mr);
  if (mode & FI_MR_ENDPOINT) {
    if (int rc = fi_mr_bind(mr, &ep_->fid, 0)) return error("fi_mr_bind", rc);
    if (int rc = fi_mr_enable(mr)) return error("fi_mr_enable", rc);
  }
  return registration;
}

Result<std::vector<std::byte>> FabricContext::local_name() const {
  std::vector<std::byte> name(256);
  std::size_t length = name.size();
  if (int rc = fi_getname(&ep_->fid, name.data(), &length)) return error("fi_getname", rc);
  name.resize(length);
  return name;
}

Result<fi_addr_t> FabricContext::insert_address(std::span<const std::byte> name) {
  fi_addr_t address = FI_ADDR_UNSPEC;
  const int n = fi_av_insert(av_, name.data(), 1, &address, 0, nullptr);
  if (n != 1) return error("fi_av_insert", n < 0 ? n : -FI_EADDRNOTAVAIL);
  return address;
}

std::uint16_t FabricContext::bound_port() const {
  auto name = local_name();
  if (!name) return 0;
  const auto& bytes = name.value();
  if (info_->addr_format == FI_SOCKADDR_IN && bytes.size() >= sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, bytes.data(), sizeof in);
    return ntohs(in.sin_port);
  }
  if (info_->addr_format == FI_SOCKADDR_IN6 && bytes.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, bytes.data(), sizeof in6);
    return ntohs(in6.sin6_port);
  }
  return 0;
}

Result<std::size_t> FabricContext::read_cq(std::span<fi_cq_tagged_entry> out,
                                           const OpContext** failed) {
  if (failed) *failed = nullptr;
  const auto n = fi_cq_read(cq_, out.data(), out.size());
  if (n > 0) {
    empty_reads_ = 0;
    return static_cast<std::size_t>(n);
  }
  if (n == -FI_EAGAIN) {
    // See kYieldAfter: let the provider's progress threads run.
    if (yield_when_idle_ && ++empty_reads_ % kYieldAfter == 0) ::sched_yield();
    return std::size_t{0};
  }
  if (n != -FI_EAVAIL) return error("fi_cq_read", static_cast<int>(n));
  fi_cq_err_entry entry{};
  const auto got = fi_cq_readerr(cq_, &entry, 0);
  if (got < 0) return error("fi_cq_readerr", static_cast<int>(got));
  auto e = error("completion", entry.err);
  const char* detail = fi_cq_strerror(cq_, entry.prov_errno, entry.err_data, nullptr, 0);
  const auto* op = static_cast<const OpContext*>(entry.op_context);
  if (failed) *failed = op != nullptr || (entry.flags & FI_RECV) ? op : &injected_;
  const char* what = (entry.flags & FI_RECV)    ? "receive"
                     : (entry.flags & FI_WRITE) ? "write"
                                                : "send";
  e.message += " of a " + std::string(what) +
               (op ? " (slot " + std::to_string(op->slot) + ")" : std::string()) +
               (detail ? std::string(": ") + detail : std::string());
  return e;
}

bool FabricContext::arm() {
  if (!descriptor_) {
    if (wait_pending_) return true;
    wait_pending_ = true;
    recheck_.expires_after(kNoFdRecheck);
    recheck_.async_wait(
        with_memory(wait_memory_, [this, alive = alive_](const boost::system::error_code& ec) {
          if (!*alive || ec == boost::asio::error::operation_aborted) return;
          wait_pending_ = false;
          loop_.notify();
        }));
    return true;
  }
  fid* cq_fid = &cq_->fid;
  // fi_trywait every time: it is what re-arms the fd after completions were read.
  if (fi_trywait(fabric_, &cq_fid, 1) != FI_SUCCESS) return false;
  if (wait_pending_) return true;
  wait_pending_ = true;
  descriptor_->async_wait(
      boost::asio::posix::stream_descriptor::wait_read,
      with_memory(wait_memory_, [this, alive = alive_](const boost::system::error_code& ec) {
        if (!*alive || ec == boost::asio::error::operation_aborted) return;
        wait_pending_ = false;
        loop_.notify();
      }));
  return true;
}

}  // namespace boreal::transport::fabric_medium
