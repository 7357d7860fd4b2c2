/* Shows that libfabric's `net` provider leaks memory its user cannot free. Two FI_EP_RDM
 * endpoints in one process, opened with the hints boreal asks for
 * (transport/src/fabric/fabric_context.cpp, make_hints) and the same open/close sequence as
 * FabricContext::setup and its destructor: a receiver bound to 127.0.0.1 (FI_SOURCE, as
 * FabricListener) and a sender that resolves it; the sender sends one tagged message, the
 * receiver receives it; then everything is closed, each fi_close returning 0, and every
 * fi_info freed. Only libfabric is used. Under LeakSanitizer, with libfabric 1.17.0 (Debian 12):
 *
 *   net           leaks, allocated in three places inside libfabric: fi_endpoint (an fi_info
 *                 duplicated by fi_dupinfo per endpoint), the sender's first fi_tsend (it
 *                 connects) and the receiver's fi_cq_read (it accepts the connection)
 *   tcp;ofi_rxm, sockets, shm   no leak
 *
 * 1888 bytes in 30 allocations for `net`, from the same code inside libfabric as the leaks in
 * boreal's fabric tests (the unnamed frames libfabric.so.1+0xec663 under fi_endpoint,
 * +0xe5431 under fi_cq_read, +0x42e8e under the first send; libfabric1 1.17.0-3).
 *
 * Build and run (exit 1 and a leak report = the leak is there):
 *
 *   gcc -g -fsanitize=address scripts/sanitizers/libfabric_leak_repro.c -o /tmp/leak_repro -lfabric
 *   export ASAN_OPTIONS=fast_unwind_on_malloc=0
 *   /tmp/leak_repro net
 *   /tmp/leak_repro sockets
 *
 * With the suppressions scripts/run-sanitizers.sh uses, `net` passes too:
 *
 *   LSAN_OPTIONS=suppressions=tests/sanitizers/lsan.supp:print_suppressions=1 /tmp/leak_repro net
 *
 * fast_unwind_on_malloc=0: libfabric is built without frame pointers, so the default (fast)
 * unwinder stops one frame above malloc, inside libfabric, and the stacks never reach the
 * libfabric call the program made.
 *
 * `pending N` leaves N more receives posted (never matched) when the receiver is closed, as a
 * listener with many links does (every link keeps its window of receives posted). `sockets`
 * allocates a receive beyond the first 256 of an endpoint on its own and does not free it when
 * the endpoint is closed:
 *
 *   /tmp/leak_repro sockets pending 300   # 13728 bytes in 44 allocations, under fi_trecv
 *   /tmp/leak_repro sockets pending 200   # no leak
 *
 * `close-first` closes the receiver before the sender, which then injects to it 100 times (as
 * a link's acks and heartbeats go on while its peer goes away). It shows why the shm cases of
 * tests/transport/fabric_link_test.cpp that close one end while the other sends are skipped:
 * with `shm` (both ends in one process) the first fi_tinject after the close crashes inside
 * libfabric (SIGSEGV in pthread_spin_lock, on the closed peer's region), with or without
 * sanitizers; `net`, `sockets` and `tcp;ofi_rxm` return an error or -FI_EAGAIN instead:
 *
 *   gcc -g scripts/sanitizers/libfabric_leak_repro.c -o /tmp/leak_repro -lfabric
 *   /tmp/leak_repro shm close-first      # "terminated with signal 11" (libfabric 1.17.0)
 *   /tmp/leak_repro sockets close-first  # completes
 *
 * Arguments: PROVIDER [rma] [pending N] [close-first]; `rma` adds FI_RMA to the caps, as
 * fabric-rma's hints do. Exit status: 0 done, 2 a libfabric call failed, 1 LeakSanitizer
 * found a leak. */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct side {
  struct fi_info* info;
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_av* av;
  struct fid_cq* cq;
  struct fid_ep* ep;
  struct fid_mr* mr;
  char buffer[64];
};

static int failed(const char* what, long rc) {
  if (rc == 0) return 0;
  fprintf(stderr, "%s: %s (%ld)\n", what, fi_strerror((int)(rc < 0 ? -rc : rc)), rc);
  return 1;
}

static int open_side(struct side* s, const char* provider, int rma, int receiver) {
  struct fi_info* hints = fi_allocinfo();
  if (!hints) return 1;
  hints->ep_attr->type = FI_EP_RDM;
  hints->fabric_attr->prov_name = strdup(provider);
  hints->caps = FI_MSG | FI_TAGGED | (rma ? FI_RMA : 0);
  hints->mode = FI_CONTEXT;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->av_type = FI_AV_TABLE;
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  /* The receiver binds a port of its own (shm names endpoints after it); the sender only
   * needs some node to resolve and inserts the receiver's real name into its AV. */
  int rc = fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", receiver ? "47391" : "47392",
                      receiver ? FI_SOURCE : 0, hints, &s->info);
  fi_freeinfo(hints);
  if (failed("fi_getinfo", rc)) return 1;

  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  struct fi_cq_attr cq_attr = {.size = 64, .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
  if (failed("fi_fabric", fi_fabric(s->info->fabric_attr, &s->fabric, NULL)) ||
      failed("fi_domain", fi_domain(s->fabric, s->info, &s->domain, NULL)) ||
      failed("fi_av_open", fi_av_open(s->domain, &av_attr, &s->av, NULL)) ||
      failed("fi_cq_open", fi_cq_open(s->domain, &cq_attr, &s->cq, NULL)) ||
      failed("fi_endpoint", fi_endpoint(s->domain, s->info, &s->ep, NULL)) ||
      failed("fi_ep_bind(cq)", fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV)) ||
      failed("fi_ep_bind(av)", fi_ep_bind(s->ep, &s->av->fid, 0)) ||
      failed("fi_enable", fi_enable(s->ep))) {
    return 1;
  }
  const uint64_t mode = s->info->domain_attr->mr_mode;
  if (mode & FI_MR_LOCAL) {
    if (failed("fi_mr_reg", fi_mr_reg(s->domain, s->buffer, sizeof s->buffer,
                                      FI_SEND | FI_RECV, 0, 1, 0, &s->mr, NULL))) {
      return 1;
    }
    if ((mode & FI_MR_ENDPOINT) && (failed("fi_mr_bind", fi_mr_bind(s->mr, &s->ep->fid, 0)) ||
                                    failed("fi_mr_enable", fi_mr_enable(s->mr)))) {
      return 1;
    }
  }
  return 0;
}

static int close_side(struct side* s) {
  int bad = 0;
  if (s->ep) bad |= failed("fi_close(ep)", fi_close(&s->ep->fid));
  if (s->mr) bad |= failed("fi_close(mr)", fi_close(&s->mr->fid));
  if (s->cq) bad |= failed("fi_close(cq)", fi_close(&s->cq->fid));
  if (s->av) bad |= failed("fi_close(av)", fi_close(&s->av->fid));
  if (s->domain) bad |= failed("fi_close(domain)", fi_close(&s->domain->fid));
  if (s->fabric) bad |= failed("fi_close(fabric)", fi_close(&s->fabric->fid));
  if (s->info) fi_freeinfo(s->info);
  return bad;
}

/* Progresses both sides until each has read one completion (the send, the receive); 5 s at
 * most. */
static int complete_both(struct side* a, struct side* b) {
  struct side* both[2] = {a, b};
  int done[2] = {0, 0};
  const time_t deadline = time(NULL) + 5;
  while (!(done[0] && done[1]) && time(NULL) < deadline) {
    for (int i = 0; i < 2; ++i) {
      struct fi_cq_tagged_entry entry;
      const ssize_t n = fi_cq_read(both[i]->cq, &entry, 1);
      if (n == 1) done[i] = 1;
      if (n < 0 && n != -FI_EAGAIN) return failed("fi_cq_read", n);
    }
  }
  if (done[0] && done[1]) return 0;
  fprintf(stderr, "no completion within 5 s\n");
  return 1;
}

int main(int argc, char** argv) {
  const char* provider = argc > 1 ? argv[1] : "net";
  int rma = 0, close_first = 0, pending = 0;
  for (int i = 2; i < argc; ++i) {
    rma |= strcmp(argv[i], "rma") == 0;
    close_first |= strcmp(argv[i], "close-first") == 0;
    if (strcmp(argv[i], "pending") == 0 && i + 1 < argc) pending = atoi(argv[++i]);
  }
  static struct side receiver, sender;
  int bad = open_side(&receiver, provider, rma, 1) || open_side(&sender, provider, rma, 0);
  if (!bad) {
    char name[256];
    size_t length = sizeof name;
    fi_addr_t peer = FI_ADDR_UNSPEC;
    bad = failed("fi_getname", fi_getname(&receiver.ep->fid, name, &length)) ||
          fi_av_insert(sender.av, name, 1, &peer, 0, NULL) != 1;
    bad = bad || failed("fi_trecv", fi_trecv(receiver.ep, receiver.buffer, 8,
                                             receiver.mr ? fi_mr_desc(receiver.mr) : NULL,
                                             FI_ADDR_UNSPEC, 7, 0, NULL));
    if (!bad) {
      memcpy(sender.buffer, "boreal!", 8);
      ssize_t rc;
      const time_t deadline = time(NULL) + 5;
      do {  /* rxm and net may refuse while they connect */
        rc = fi_tsend(sender.ep, sender.buffer, 8, sender.mr ? fi_mr_desc(sender.mr) : NULL,
                      peer, 7, NULL);
        if (rc == -FI_EAGAIN) fi_cq_read(sender.cq, NULL, 0), fi_cq_read(receiver.cq, NULL, 0);
      } while (rc == -FI_EAGAIN && time(NULL) < deadline);
      bad = failed("fi_tsend", rc) || complete_both(&receiver, &sender) ||
            memcmp(receiver.buffer, "boreal!", 8) != 0;
    }
  }
  for (int i = 0; i < pending && !bad; ++i) {  /* tag 99: nothing is ever sent with it */
    bad = failed("fi_trecv(pending)",
                 fi_trecv(receiver.ep, receiver.buffer + 8, 8,
                          receiver.mr ? fi_mr_desc(receiver.mr) : NULL, FI_ADDR_UNSPEC, 99, 0,
                          NULL));
  }
  if (close_first && !bad) {
    bad |= close_side(&receiver);
    fprintf(stderr, "%s: receiver closed; the sender injects to it\n", provider);
    for (int i = 0; i < 100; ++i) {
      struct fi_cq_tagged_entry entry;
      (void)fi_tinject(sender.ep, sender.buffer, 8, 0, 7); /* fi_addr 0: the receiver */
      (void)fi_cq_read(sender.cq, &entry, 1);
    }
  }
  bad |= close_side(&sender);
  if (!close_first) bad |= close_side(&receiver);
  fprintf(stderr, "%s: one tagged message %s, everything closed and freed%s\n", provider,
          bad ? "NOT delivered" : "delivered", bad ? " (errors above)" : "");
  return bad ? 2 : 0; /* LeakSanitizer turns a leak into exit 1 and a report at exit */
}
