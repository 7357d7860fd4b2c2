/* Shows that libfabric's `shm` provider (1.17.0, Debian 12) reports some remote writes with
 * remote CQ data (fi_writedata) at their target with op_context 0x1, a value the target never
 * posted, instead of NULL. It is the completion that crashed the receiving node in
 * tests/apps/media_test.cpp's EveryFabricMedium.BadSendersAreRefusedAndTheGoodStreamsArriveInFull
 * (fabric-rma over shm): FabricListenerImpl::drain_cq (transport/src/fabric/fabric_listener.cpp)
 * takes a NULL context for a remote write and any other for one of its OpContexts, so it read
 * op->owner at address 0x1. Only libfabric is used.
 *
 * As in boreal, the receiver (this process) opens an FI_EP_RDM endpoint with the hints boreal
 * asks for (transport/src/fabric/fabric_context.cpp, make_hints: FI_MSG | FI_TAGGED | FI_RMA,
 * mode FI_CONTEXT, FI_THREAD_DOMAIN, FI_AV_TABLE, send-after-send order, the same mr_mode
 * offer; a FI_CQ_FORMAT_TAGGED CQ), bound with FI_SOURCE to 127.0.0.1:<port> like a
 * FabricListener. It registers a ring for FI_REMOTE_WRITE, posts 4 tagged receives of hellos on
 * tag 1<<32 whose contexts it knows, and reads its CQ, reposting each hello receive (a refused
 * hello is only counted). The senders are this program again, fork'd and exec'd:
 *
 *   writer    one sender for the whole run, like a fabric-rma FabricSendLink: 8 tagged control
 *             receives and a credit word registered for FI_REMOTE_WRITE, a hello (fi_tsend on the
 *             hello tag), then `writes` 64-byte frames by fi_writedata into the ring with 32 bits
 *             of immediate data (fabric_wire.hpp's encode_imm), one every `pace` microseconds;
 *             with `heartbeat K`, a 32-byte fi_tinject on the hello tag after every Kth frame
 *   refused   `refused N` short-lived senders, two at a time, started once the writer's hello has
 *             arrived: each opens its endpoint, inserts the receiver's address, sends one hello,
 *             waits for its own completion, closes everything and exits; with `connreq-only`,
 *             each exits after its first fi_tsend said -FI_EAGAIN (shm's connection request is
 *             out, the hello is not) and `linger` milliseconds of sleep (default 50)
 *
 * The receiver prints each completion whose op_context is neither one of its hello receives nor
 * NULL (10 at most), with flags, length, data and how many completions it had read, then a
 * summary line. Build and run (exit status 1 = such completions came):
 *
 *   gcc -std=c11 -Wall -Wextra -g scripts/sanitizers/shm_context_repro.c -o /tmp/shm_context_repro -lfabric
 *   timeout 60 /tmp/shm_context_repro               # the writer alone: 0 unknown contexts, exit 0
 *   timeout 60 /tmp/shm_context_repro refused 50    # exit 1, about 10 s:
 *
 *   unknown op_context 0x1: flags 0x22004 (FI_RMA|FI_REMOTE_WRITE|FI_REMOTE_CQ_DATA) len 64 data 0x1010040 (completion 535; hellos so far 5)
 *   unknown op_context 0x1: flags 0x22004 (FI_RMA|FI_REMOTE_WRITE|FI_REMOTE_CQ_DATA) len 64 data 0x1020040 (completion 536; hellos so far 5)
 *   ...
 *   ... 356 more
 *   writes 3000, hellos 51, heartbeats 0, refused senders 50, unknown contexts 366
 *
 * `refused 1` is enough in most runs (5 to 10 unknown contexts, about 512 completions apart);
 * `refused 200` gave 131 in 45 s on a busy 2-vCPU machine. No refused sender is needed:
 * `heartbeat 301` gives about 1979 of 3000, and `refused 50 connreq-only` about 1700.
 *
 * Why, from reading libfabric 1.17.0's prov/shm: every command a peer sends takes one slot of
 * the target's command ring (rx_size, 1024 slots), except an RMA command, which takes two: the
 * message header, then a slot whose first 8 bytes are rma_count (1 here). At the target, a
 * remote write with remote CQ data is completed with op_context = the header's msg_id field,
 * which only the mmap protocol fills in; an inline write's header leaves there whatever the slot
 * held before. The writer's headers all fall on slots of one parity, and msg_id stays 0, until a
 * single-slot command falls between two of its writes: a heartbeat, or a new peer's connection
 * request and its first message, which go out apart (the first send to a new peer sends the
 * request and says -FI_EAGAIN; the message follows only once the target has taken the request,
 * and the writer's writes fall in between). From then on some header slots hold an rma_count of
 * 1, and a remote write whose header lands on one, one ring later (512 writes), is reported with
 * op_context 0x1. Header writes never clear msg_id, so such a slot stays bad for the endpoint's
 * life. In the media test the bad node's three refused links are, most likely, the new peers
 * connecting while the good streams write.
 *
 * A second crash, also libfabric's alone: `refused 20 connreq-only linger 0` (senders that exit
 * before the receiver took their connection request) kills the receiver with SIGSEGV inside
 * fi_cq_read: shm's connection-request handler cannot map the departed peer's region (its file
 * is gone), and reads the peer's pid through a NULL region pointer (gdb: `cmp %eax,0x4(%rdi)`,
 * rdi 0, eax the sender's pid). Its senders are then SIGKILLed (PR_SET_PDEATHSIG) and may leave
 * their regions behind as /dev/shm/<pid>:0:0; the crash handler of Debian's libinfinipath (the
 * psm provider, loaded by fi_getinfo) writes shm_context_repro.80s-<pid>,vm.btr to the current
 * directory.
 *
 * Arguments: [writes W] [pace US] [refused N] [connreq-only [linger MS]] [heartbeat K]
 * [provider P]; defaults: 3000 writes 2000 us apart, no refused sender, no heartbeat, shm.
 * Exit status: 0 done and every completion was known, 1 some were not, 2 a libfabric call or a
 * sender failed, 3 the run did not end within 50 s. Every process ends within 60 s (alarm). */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HELLO_TAG (UINT64_C(1) << 32)
#define STREAM_TAG UINT64_C(7)
#define HELLO_SLOTS 4
#define HELLO_BYTES 320 /* kHelloFrameBytes in transport/src/fabric/fabric_wire.hpp */
#define CONTROL_SLOTS 8
#define CONTROL_BYTES 64
#define RING_SLOTS 16
#define FRAME_BYTES 64
#define MAX_REPORTED 10

struct side {
  struct fi_info* info;
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_av* av;
  struct fid_cq* cq;
  struct fid_ep* ep;
  fi_addr_t peer;
};

/* An operation's context: FI_CONTEXT mode, the fi_context comes first (OpContext). */
struct op {
  struct fi_context fi;
  int slot;
};

static const char* provider = "shm";
static pid_t receiver_pid; /* a sender's parent */

static void check(const char* call, long rc) {
  if (rc == 0) return;
  fprintf(stderr, "[%d] %s: %s (%ld)\n", (int)getpid(), call, fi_strerror((int)(rc < 0 ? -rc : rc)),
          rc);
  exit(2);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* As FabricContext::open and setup: bind_local = the receiver. */
static void open_side(struct side* s, const char* service, int bind_local) {
  struct fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->fabric_attr->prov_name = strdup(provider);
  hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
  hints->mode = FI_CONTEXT;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->av_type = FI_AV_TABLE;
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  check("fi_getinfo", fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", service,
                                 bind_local ? FI_SOURCE : 0, hints, &s->info));
  fi_freeinfo(hints);
  check("fi_fabric", fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
  check("fi_domain", fi_domain(s->fabric, s->info, &s->domain, NULL));
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  check("fi_av_open", fi_av_open(s->domain, &av_attr, &s->av, NULL));
  struct fi_cq_attr cq_attr = {.size = 1024, .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_FD};
  if (fi_cq_open(s->domain, &cq_attr, &s->cq, NULL) != 0) {
    cq_attr.wait_obj = FI_WAIT_NONE; /* shm has no wait fd, as in FabricContext::setup */
    check("fi_cq_open", fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
  }
  check("fi_endpoint", fi_endpoint(s->domain, s->info, &s->ep, NULL));
  check("fi_ep_bind(cq)", fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
  check("fi_ep_bind(av)", fi_ep_bind(s->ep, &s->av->fid, 0));
  check("fi_enable", fi_enable(s->ep));
  s->peer = FI_ADDR_UNSPEC;
  if (!bind_local) {
    if (fi_av_insert(s->av, s->info->dest_addr, 1, &s->peer, 0, NULL) != 1) {
      check("fi_av_insert", -FI_EINVAL);
    }
  }
}

static void close_side(struct side* s) {
  fi_close(&s->ep->fid);
  fi_close(&s->cq->fid);
  fi_close(&s->av->fid);
  fi_close(&s->domain->fid);
  fi_close(&s->fabric->fid);
  fi_freeinfo(s->info);
}

/* As FabricContext::register_region: local access only under FI_MR_LOCAL. */
static struct fid_mr* reg(struct side* s, void* base, size_t len, uint64_t access, uint64_t key) {
  const uint64_t mode = s->info->domain_attr->mr_mode;
  if (!(access & (FI_REMOTE_WRITE | FI_REMOTE_READ)) && !(mode & FI_MR_LOCAL)) return NULL;
  struct fid_mr* mr = NULL;
  check("fi_mr_reg", fi_mr_reg(s->domain, base, len, access, 0, key, 0, &mr, NULL));
  if (mode & FI_MR_ENDPOINT) {
    check("fi_mr_bind", fi_mr_bind(mr, &s->ep->fid, 0));
    check("fi_mr_enable", fi_mr_enable(mr));
  }
  return mr;
}

/* Reads the CQ until `want` completions came (a sender's own operations); an error entry fails. */
static void await(struct side* s, int want) {
  const double give_up = now_s() + 20;
  struct fi_cq_tagged_entry e[8];
  while (want > 0) {
    const ssize_t n = fi_cq_read(s->cq, e, 8);
    if (n > 0) {
      want -= (int)n;
    } else if (n == -FI_EAVAIL) {
      struct fi_cq_err_entry err = {0};
      fi_cq_readerr(s->cq, &err, 0);
      fprintf(stderr, "[%d] error completion: %s\n", (int)getpid(), fi_strerror(err.err));
      exit(2);
    } else if (n != -FI_EAGAIN) {
      check("fi_cq_read", n);
    }
    if (now_s() > give_up || getppid() != receiver_pid) {
      fprintf(stderr, "[%d] no completion within 20 s, or the receiver is gone\n", (int)getpid());
      close_side(s);
      exit(2);
    }
  }
}

/* After -FI_EAGAIN: progress, and leave (closing, so that shm unlinks its region) when the
 * receiver is gone (this process was re-parented) or nothing moved for 20 s. */
static void retry_or_leave(struct side* s, double give_up) {
  (void)fi_cq_read(s->cq, NULL, 0);
  if (getppid() != receiver_pid || now_s() > give_up) {
    fprintf(stderr, "[%d] the receiver is gone or stuck; leaving\n", (int)getpid());
    close_side(s);
    exit(2);
  }
}

/* A hello: [96 bytes of frame, payload and extension][this endpoint's fi_getname]. */
static size_t make_hello(struct side* s, char* out) {
  memset(out, 0x5a, 96);
  size_t len = HELLO_BYTES - 96;
  check("fi_getname", fi_getname(&s->ep->fid, out + 96, &len));
  return 96 + len;
}

static int run_writer(const char* service, uint64_t ring_address, uint64_t ring_key, int writes,
                      int heartbeat, int pace_us) {
  struct side s;
  open_side(&s, service, 0);
  static char pool[HELLO_BYTES + RING_SLOTS * FRAME_BYTES];
  static char control[CONTROL_SLOTS * CONTROL_BYTES];
  static uint64_t credit_words[2];
  static char beat[32];
  struct fid_mr* pool_mr = reg(&s, pool, sizeof pool, FI_SEND | FI_WRITE, 1);
  struct fid_mr* words_mr = reg(&s, credit_words, sizeof credit_words, FI_REMOTE_WRITE, 2);
  struct fid_mr* control_mr = reg(&s, control, sizeof control, FI_SEND | FI_RECV, 3);
  void* pool_desc = pool_mr ? fi_mr_desc(pool_mr) : NULL;
  static struct op control_ops[CONTROL_SLOTS], hello_op, frame_op;
  for (int i = 0; i < CONTROL_SLOTS; ++i) {
    control_ops[i].slot = i;
    check("fi_trecv", fi_trecv(s.ep, control + i * CONTROL_BYTES, CONTROL_BYTES,
                               control_mr ? fi_mr_desc(control_mr) : NULL, s.peer, STREAM_TAG, 0,
                               &control_ops[i].fi));
  }
  const size_t hello_len = make_hello(&s, pool);
  ssize_t rc;
  double give_up = now_s() + 20;
  while ((rc = fi_tsend(s.ep, pool, hello_len, pool_desc, s.peer, HELLO_TAG, &hello_op.fi)) ==
         -FI_EAGAIN) {
    retry_or_leave(&s, give_up);
  }
  check("fi_tsend(hello)", rc);
  await(&s, 1);
  for (int i = 0; i < writes; ++i) {
    const int slot = i % RING_SLOTS;
    give_up = now_s() + 20;
    char* frame = pool + HELLO_BYTES + slot * FRAME_BYTES;
    memset(frame, i & 0xff, FRAME_BYTES);
    /* Immediate data as fabric_wire.hpp's encode_imm: link 1, ring slot, frame length. */
    const uint64_t imm = (UINT64_C(1) << 24) | ((uint64_t)slot << 16) | FRAME_BYTES;
    while ((rc = fi_writedata(s.ep, frame, FRAME_BYTES, pool_desc, imm, s.peer,
                              ring_address + (uint64_t)slot * FRAME_BYTES, ring_key,
                              &frame_op.fi)) == -FI_EAGAIN) {
      retry_or_leave(&s, give_up);
    }
    check("fi_writedata", rc);
    await(&s, 1);
    if (heartbeat > 0 && (i + 1) % heartbeat == 0) {
      while ((rc = fi_tinject(s.ep, beat, sizeof beat, s.peer, HELLO_TAG)) == -FI_EAGAIN) {
        retry_or_leave(&s, give_up);
      }
      check("fi_tinject(heartbeat)", rc);
    }
    if (pace_us > 0) usleep((useconds_t)pace_us); /* refused senders come and go meanwhile */
  }
  if (pool_mr) fi_close(&pool_mr->fid);
  if (words_mr) fi_close(&words_mr->fid);
  if (control_mr) fi_close(&control_mr->fid);
  close_side(&s);
  return 0;
}

static int run_refused(const char* service, int connreq_only, int linger_ms) {
  struct side s;
  open_side(&s, service, 0);
  static char hello[HELLO_BYTES];
  static struct op hello_op;
  struct fid_mr* mr = reg(&s, hello, sizeof hello, FI_SEND, 1);
  const size_t len = make_hello(&s, hello);
  ssize_t rc;
  const double give_up = now_s() + 20;
  /* shm sends its connection request on the first send to a new peer and says -FI_EAGAIN. */
  while ((rc = fi_tsend(s.ep, hello, len, mr ? fi_mr_desc(mr) : NULL, s.peer, HELLO_TAG,
                        &hello_op.fi)) == -FI_EAGAIN) {
    if (connreq_only) break;
    retry_or_leave(&s, give_up);
  }
  if (rc == 0) await(&s, 1);
  else if (!connreq_only) check("fi_tsend(hello)", rc);
  if (connreq_only && linger_ms > 0) usleep((useconds_t)linger_ms * 1000);
  if (mr) fi_close(&mr->fid);
  close_side(&s);
  return 0;
}

static pid_t spawn(char* const argv[]) {
  const pid_t receiver = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the receiver crashed: end too */
    if (getppid() != receiver) _exit(2);
    execv("/proc/self/exe", argv);
    perror("execv");
    _exit(2);
  }
  return pid;
}

static const char* describe_flags(uint64_t f, char* out, size_t n) {
  out[0] = '\0';
  const struct {
    uint64_t bit;
    const char* name;
  } names[] = {{FI_SEND, "FI_SEND"},         {FI_RECV, "FI_RECV"},
               {FI_MSG, "FI_MSG"},           {FI_TAGGED, "FI_TAGGED"},
               {FI_RMA, "FI_RMA"},           {FI_WRITE, "FI_WRITE"},
               {FI_REMOTE_WRITE, "FI_REMOTE_WRITE"}, {FI_REMOTE_CQ_DATA, "FI_REMOTE_CQ_DATA"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if (!(f & names[i].bit)) continue;
    if (out[0]) strncat(out, "|", n - strlen(out) - 1);
    strncat(out, names[i].name, n - strlen(out) - 1);
  }
  return out;
}

int main(int argc, char** argv) {
  receiver_pid = getppid(); /* in a sender */
  alarm(60); /* a last resort: every process of a run ends within 60 s */
  if (argc >= 2 && strcmp(argv[1], "--writer") == 0 && argc == 9) {
    provider = argv[8];
    return run_writer(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
                      atoi(argv[5]), atoi(argv[6]), atoi(argv[7]));
  }
  if (argc >= 2 && strcmp(argv[1], "--refused") == 0 && argc == 6) {
    provider = argv[5];
    return run_refused(argv[2], atoi(argv[3]), atoi(argv[4]));
  }
  int writes = 3000, refused = 0, connreq_only = 0, heartbeat = 0, linger_ms = 50,
      pace_us = 2000;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "writes") == 0 && i + 1 < argc) writes = atoi(argv[++i]);
    else if (strcmp(argv[i], "refused") == 0 && i + 1 < argc) refused = atoi(argv[++i]);
    else if (strcmp(argv[i], "heartbeat") == 0 && i + 1 < argc) heartbeat = atoi(argv[++i]);
    else if (strcmp(argv[i], "provider") == 0 && i + 1 < argc) provider = argv[++i];
    else if (strcmp(argv[i], "pace") == 0 && i + 1 < argc) pace_us = atoi(argv[++i]);
    else if (strcmp(argv[i], "linger") == 0 && i + 1 < argc) linger_ms = atoi(argv[++i]);
    else if (strcmp(argv[i], "connreq-only") == 0) connreq_only = 1;
    else {
      fprintf(stderr,
              "usage: %s [writes W] [pace US] [refused N] [connreq-only [linger MS]] "
              "[heartbeat K] [provider P]\n",
              argv[0]);
      return 2;
    }
  }
  char service[16];
  snprintf(service, sizeof service, "%d", 20000 + (int)(getpid() % 40000));

  struct side r;
  open_side(&r, service, 1);
  static char hello_buffers[HELLO_SLOTS * HELLO_BYTES];
  static char ring[RING_SLOTS * FRAME_BYTES];
  static struct op hello_ops[HELLO_SLOTS];
  struct fid_mr* hello_mr = reg(&r, hello_buffers, sizeof hello_buffers, FI_SEND | FI_RECV, 1);
  struct fid_mr* ring_mr = reg(&r, ring, sizeof ring, FI_REMOTE_WRITE, 2);
  void* hello_desc = hello_mr ? fi_mr_desc(hello_mr) : NULL;
  for (int i = 0; i < HELLO_SLOTS; ++i) {
    hello_ops[i].slot = i;
    check("fi_trecv", fi_trecv(r.ep, hello_buffers + i * HELLO_BYTES, HELLO_BYTES, hello_desc,
                               FI_ADDR_UNSPEC, HELLO_TAG, 0, &hello_ops[i].fi));
  }
  const uint64_t ring_address =
      (r.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)ring : 0;
  char address_arg[32], key_arg[32], writes_arg[16], heartbeat_arg[16], connreq_arg[4],
      linger_arg[16], pace_arg[16];
  snprintf(address_arg, sizeof address_arg, "%" PRIu64, ring_address);
  snprintf(key_arg, sizeof key_arg, "%" PRIu64, fi_mr_key(ring_mr));
  snprintf(writes_arg, sizeof writes_arg, "%d", writes);
  snprintf(heartbeat_arg, sizeof heartbeat_arg, "%d", heartbeat);
  snprintf(connreq_arg, sizeof connreq_arg, "%d", connreq_only);
  snprintf(linger_arg, sizeof linger_arg, "%d", linger_ms);
  snprintf(pace_arg, sizeof pace_arg, "%d", pace_us);
  char* writer_argv[] = {argv[0], "--writer", service, address_arg, key_arg,
                         writes_arg, heartbeat_arg, pace_arg, (char*)provider, NULL};
  char* refused_argv[] = {argv[0],    "--refused",      service, connreq_arg,
                          linger_arg, (char*)provider, NULL};
  pid_t writer = spawn(writer_argv);
  pid_t senders[2] = {0, 0}; /* refused senders running at once */
  int senders_started = 0, failed_children = 0;
  int remote_writes = 0, hellos = 0, heartbeats = 0, unknown = 0;
  const double give_up = now_s() + 50;
  struct fi_cq_tagged_entry e[32];
  while (writer || senders[0] || senders[1] || senders_started < refused ||
         remote_writes < writes) {
    if (now_s() > give_up) {
      printf("not finished within 50 s: writes %d of %d, hellos %d, heartbeats %d, refused "
             "senders %d started, unknown contexts %d\n",
             remote_writes, writes, hellos, heartbeats, senders_started, unknown);
      if (writer) kill(writer, SIGKILL);
      for (int k = 0; k < 2; ++k) {
        if (senders[k]) kill(senders[k], SIGKILL);
      }
      return 3;
    }
    /* Refused senders, two at a time, started once the writer's hello arrived. */
    int status = 0;
    for (int k = 0; k < 2; ++k) {
      if (senders[k] && waitpid(senders[k], &status, WNOHANG) == senders[k]) {
        failed_children += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        senders[k] = 0;
      }
      if (!senders[k] && senders_started < refused && hellos > 0) {
        senders[k] = spawn(refused_argv);
        ++senders_started;
      }
    }
    if (writer && waitpid(writer, &status, WNOHANG) == writer) {
      failed_children += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      writer = 0;
    }
    const ssize_t n = fi_cq_read(r.cq, e, 32);
    if (n == -FI_EAGAIN) continue;
    if (n == -FI_EAVAIL) {
      struct fi_cq_err_entry err = {0};
      fi_cq_readerr(r.cq, &err, 0);
      printf("error completion: op_context %p, %s\n", err.op_context, fi_strerror(err.err));
      continue;
    }
    if (n < 0) check("fi_cq_read", n);
    for (ssize_t i = 0; i < n; ++i) {
      const void* context = e[i].op_context;
      if (context >= (void*)&hello_ops[0] && context < (void*)&hello_ops[HELLO_SLOTS]) {
        const struct op* op = context;
        if (e[i].len == 32) ++heartbeats;
        else ++hellos; /* refused: nothing else to do than to receive the next one */
        check("fi_trecv", fi_trecv(r.ep, hello_buffers + op->slot * HELLO_BYTES, HELLO_BYTES,
                                   hello_desc, FI_ADDR_UNSPEC, HELLO_TAG, 0,
                                   &hello_ops[op->slot].fi));
      } else if (context == NULL && (e[i].flags & FI_REMOTE_CQ_DATA)) {
        ++remote_writes;
      } else {
        /* Neither ours nor NULL: drain_cq would have taken it for an OpContext. */
        if (e[i].flags & FI_REMOTE_CQ_DATA) ++remote_writes;
        if (unknown++ < MAX_REPORTED) {
          char flags[160];
          printf("unknown op_context %p: flags %#" PRIx64 " (%s) len %zu data %#" PRIx64
                 " (completion %d; hellos so far %d)\n",
                 context, (uint64_t)e[i].flags, describe_flags(e[i].flags, flags, sizeof flags),
                 e[i].len, (uint64_t)e[i].data, remote_writes + hellos + heartbeats, hellos);
        }
      }
    }
  }
  if (unknown > MAX_REPORTED) printf("... %d more\n", unknown - MAX_REPORTED);
  printf("writes %d, hellos %d, heartbeats %d, refused senders %d%s, unknown contexts %d\n",
         remote_writes, hellos, heartbeats, senders_started, connreq_only ? " (connreq-only)" : "",
         unknown);
  if (hello_mr) fi_close(&hello_mr->fid);
  fi_close(&ring_mr->fid);
  close_side(&r);
  if (failed_children) {
    fprintf(stderr, "%d sender process(es) failed\n", failed_children);
    return 2;
  }
  return unknown ? 1 : 0;
}
