/* SPDX-License-Identifier: MIT */
/*
 * pome-pod --twin NAME: one twin instance behind the frame socket on fd 3
 * (DESIGN.md "Processes" and "Pod isolation"; wire format in pods/twin/podwire.h).
 *
 *   1. first frame {"op":"load","twin":NAME,"seed_len":N}, body = N bytes of seed JSON
 *      then the stage-2 seccomp program (struct sock_filter[], possibly empty);
 *   2. the seed becomes the world (twin_new); a rejected seed is reported over
 *      $NOTIFY_SOCKET as "STATUS=seed rejected: <why>\nERRNO=22", exit 65;
 *   3. connect to $NOTIFY_SOCKET (a path: abstract sockets belong to a network
 *      namespace, and the pod has its own), install stage 2 (no exec, no open, no new
 *      socket from here on), send READY=1 (sd_notify(3) protocol), close it;
 *   4. serve: "call" → twin_handle → reply with the same id; "export" → {"status":200}
 *      with the whole world as body; EOF → exit 0. With "pack_after_ms": T in the load
 *      frame (pomed's pod.pack_after), a pod that gets no frame for T ms packs its world
 *      into compact JSON (twin_pack) and returns its heap to the kernel; the next frame
 *      unpacks it before it is served. An idle pod then holds its world in bytes, not in
 *      jansson objects (~8× smaller).
 *
 * Once serving, no frame makes the pod exit: a call it cannot decode, an op it does not
 * know, a reply or a world too large for a frame are answered 500 in the twin's own
 * envelope (kind->error). A call that changed the world and whose reply cannot be sent
 * is undone first, so the world changes exactly as the tape rows say.
 *
 * A syscall the seccomp policy traps is reported to pomed before the pod dies of it
 * (sigsys.h): the handler is installed before anything else.
 *
 * Exit status: 0 after EOF, 64 usage (EX_USAGE), 65 rejected seed or malformed load frame
 * (EX_DATAERR), 71 system error (EX_OSERR). 119..127 belong to the spawner. stderr
 * carries one line for fatal errors only.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "common/fileio.h"
#include "common/frame.h"
#include "common/json-util.h"
#include "common/util.h"
#include "pods/twin/podwire.h"
#include "pods/twin/twin.h"
#include "pods/pod/sigsys.h"

#define POD_FD     3
#define EXIT_USAGE 64
#define EXIT_DATA  65
#define EXIT_OSERR 71

static const char *twin_name = "?";

static _noreturn_ _printf_(2, 3) void die(int status, const char *fmt, ...);

/*
 * Replies wait here while the calls after them are already read (a burst from pomed, which
 * sends as its connections ask): one write for the burst instead of one a reply. Written
 * before the pod waits for more frames, before a reply that would overflow the batch, and
 * before the pod dies (die). A reply so waits at most for the calls read with it, each of
 * which has its own deadline in pomed, as long as the first's. Measured (bench/ab.py, 4
 * pairs): the pod's CPU a GET 18.7 -> 14.2 us, every pair faster.
 */
#define REPLY_BATCH_MAX (64 * 1024)
static struct {
        char *data; /* REPLY_BATCH_MAX bytes once a reply was batched */
        size_t len;
} out;

/* len bytes of frames to pomed: the pod exits when pomed is gone, dies on another error. */
static void write_frames(const char *buf, size_t len)
{
        int r = write_all(POD_FD, buf, len);
        if (r == -EPIPE || r == -ECONNRESET)
                exit(0); /* pomed closed its end: nobody left to serve */
        if (r < 0)
                die(EXIT_OSERR, "write: %s", strerror(-r));
}

static void flush_replies(void)
{
        size_t n = out.len;
        out.len = 0;
        if (n > 0)
                write_frames(out.data, n);
}

static void die(int status, const char *fmt, ...)
{
        flush_replies(); /* the calls before what kills the pod were served */
        va_list ap;
        fprintf(stderr, "pome-pod[%s]: ", twin_name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        exit(status);
}

/* A datagram socket connected to $NOTIFY_SOCKET; -ENOENT when unset (a manual run). */
static int notify_connect(void)
{
        const char *path = getenv("NOTIFY_SOCKET");
        if (!path || !*path)
                return -ENOENT;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path))
                return -EAFNOSUPPORT; /* '@' abstract: unreachable from our network namespace */
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        return fd;
}

static int notify_send(int fd, const char *msg)
{
        if (send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 0;
}

static _noreturn_ void seed_rejected(const char *why)
{
        char msg[1024];
        snprintf(msg, sizeof(msg), "STATUS=seed rejected: %s", why);
        /* one line per assignment in the notify protocol */
        for (char *p = msg; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        strncat(msg, "\nERRNO=22", sizeof(msg) - strlen(msg) - 1);
        int fd = notify_connect();
        if (fd >= 0) {
                (void)notify_send(fd, msg);
                close(fd);
        }
        die(EXIT_DATA, "seed rejected: %s", why);
}

/* Installs the stage-2 filter. NO_NEW_PRIVS is set by the spawner; again here for manual runs. */
static int install_stage2(const char *insns, size_t size)
{
        if (size == 0)
                return 0;
        struct sock_fprog prog = {.len = (unsigned short)(size / sizeof(struct sock_filter)),
                                  .filter = (struct sock_filter *)insns};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                return negative_errno();
        return 0;
}

/* Milliseconds without a frame after which a loaded pod packs its world; 0 = never. */
static int pack_after_ms;
/* Whether reads of fd 3 time out now (after an idle pack they wait for ever). */
static bool timing;

/* How long a read of fd 3 may wait (SO_RCVTIMEO): ms, 0 = for ever. 0 or -errno. */
static int set_read_timeout(int ms)
{
        struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
        return setsockopt(POD_FD, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ? negative_errno()
                                                                                : 0;
}

/*
 * No frame came for pack_after_ms: packs t's world, lets the frame buffer go when it holds
 * nothing, gives the freed heap back to the kernel and waits for ever from now on.
 */
static void pack_idle(Twin *t, FrameReader *r)
{
        if (twin_pack(t) == -EBADMSG)
                pack_after_ms = 0; /* this world does not round-trip: never try again */
        if (r->off == r->len)
                frame_reader_done(r);
        free(out.data); /* empty: flushed before the read that timed out */
        out.data = NULL;
        (void)malloc_trim(0);
        if (set_read_timeout(0) == 0)
                timing = false;
}

/*
 * A frame came: the world is needed again, and idleness is timed anew (a world left a tree
 * because it was smaller than a page may have grown since). 0 or -ENOMEM.
 */
static int unpack(Twin *t)
{
        int r = twin_unpack(t);
        if (r >= 0 && !timing && pack_after_ms > 0 && set_read_timeout(pack_after_ms) == 0)
                timing = true;
        return r < 0 ? r : 0;
}

/*
 * Blocks until one whole frame is in *f; t (NULL before the load) packs its world when a
 * read times out (SO_RCVTIMEO, set only while there is a world to pack: the hot path
 * makes no extra syscall). 1, 0 on a clean EOF, negative on error.
 */
static int read_frame(FrameReader *r, Frame *f, Twin *t)
{
        for (;;) {
                int k = frame_reader_next(r, f);
                if (k != 0)
                        return k;
                flush_replies();
                k = frame_reader_fill(r, POD_FD);
                if (k == -EAGAIN && t) {
                        pack_idle(t, r);
                        continue;
                }
                if (k == 0)
                        return r->len > r->off ? -EPROTO : 0;
                if (k < 0)
                        return k;
        }
}

/* One frame to pomed (buf is freed): batched with the replies before it, see out. */
static void send_frame(char *buf, size_t len)
{
        if (out.len + len > REPLY_BATCH_MAX)
                flush_replies();
        if (!out.data)
                out.data = malloc(REPLY_BATCH_MAX);
        if (out.data && out.len + len <= REPLY_BATCH_MAX) {
                memcpy(out.data + out.len, buf, len);
                out.len += len;
        } else
                write_frames(buf, len); /* larger than a batch (or no memory for one): alone */
        free(buf);
}

/*
 * A 500 in the twin's own envelope for frame id, with message as the tape's error.
 * mutated: the world changed and could not be restored (said, not hidden).
 */
static void send_error(Twin *t, uint64_t id, const char *message, bool mutated)
{
        TwinReply rp = {.fidelity = "semantic", .state_mutation = mutated};
        twin_kind(t)->error(500, "internal_error", message, &rp);
        rp.status = 500;
        rp.error = strdup(message);
        char *buf;
        size_t len;
        int r = podwire_encode_reply(id, &rp, NULL, &buf, &len);
        twin_reply_done(&rp);
        if (r < 0)
                die(EXIT_OSERR, "encoding a 500 reply: %s", strerror(-r));
        send_frame(buf, len);
}

/*
 * Whether the reply to a write of `in` bytes might not fit in a frame for a reason the
 * request itself brings: it repeats the request (request_body) and renders what the call
 * wrote (body, and its redacted copy for the tape when it holds a secret), each at most
 * 6·in bytes once escaped, a redaction mark being longer than the secret it replaces;
 * ROW_ALLOWANCE stands for what a rendered row adds to that (ids, times, URLs, and the
 * fields the twins cap at the vendor's own limits: 65 536 characters an issue body…).
 * Only a large request passes it (about 400 KB and up), and only then is the world copied to undo
 * the call: the copy costs the world's size, paid by the request that may need it, never by every
 * write of a long run. What can outgrow a frame without a large request is the tape's state_delta
 * (a row before and after: an issue with its comments), which serve_call gives up instead.
 */
#define ROW_ALLOWANCE (1024u * 1024u)

static bool reply_may_overflow(size_t in)
{
        const size_t lim = FRAME_MAX - 64 * 1024;
        return in > lim / 30 || 4 * ROW_ALLOWANCE + 30 * in > lim;
}

/* The tape's state_delta of a row too large to travel (it stays in the world). */
static json_t *delta_omitted(void)
{
        return json_pack("{s:s}", "omitted",
                         "The touched row is too large for the tape; the call's other parts "
                         "and the final world have it.");
}

static void serve_call(Twin *t, Frame *f)
{
        TwinRequest rq;
        TwinReply rp = {};
        char *buf;
        size_t len;

        if (podwire_decode_request(f, &rq) < 0) {
                send_error(t, f->id, "The pod received a call it cannot decode.", false);
                return;
        }
        size_t in = f->body_len + strlen(rq.query) + strlen(rq.path);
        bool reads = streq(rq.method, "GET") || streq(rq.method, "HEAD");
        /* a snapshot only when a reply could fail: its cost is the world's size */
        _cleanup_json_ json_t *snapshot =
                !reads && reply_may_overflow(in) ? json_deep_copy(twin_world(t)) : NULL;

        twin_handle(t, &rq, &rp);
        int r = podwire_encode_reply(f->id, &rp, &rq, &buf, &len);
        /* deliveries the twin made before the call (rp.events) changed the world too */
        bool mutated = rp.state_mutation || json_array_size(rp.events) > 0;
        if (r == -EMSGSIZE && mutated && !snapshot && rp.state_delta) {
                /* a small call on a huge row: the call stands, its row is not repeated */
                json_decref(rp.state_delta);
                rp.state_delta = delta_omitted();
                r = rp.state_delta ? podwire_encode_reply(f->id, &rp, &rq, &buf, &len) : -ENOMEM;
        }
        twin_reply_done(&rp);
        if (r >= 0) {
                send_frame(buf, len);
                return;
        }
        /* The reply cannot be sent: undo the call, then say so in the twin's envelope. */
        if (mutated && snapshot) {
                twin_world_replace(t, TAKE_PTR(snapshot));
                mutated = false;
        }
        send_error(t, f->id,
                   r == -EMSGSIZE ? "The reply is larger than the twin can send; nothing was "
                                    "changed."
                                  : "The twin could not encode its reply.",
                   mutated);
}

static void serve_export(Twin *t, const Frame *f)
{
        /* what came due by the end of the run is part of its final world, and of its tape:
         * the events go with the export for pomed to record */
        TwinReply due = {};
        int a = twin_advance(t, &due);
        _cleanup_json_ json_t *events = TAKE_PTR(due.events);
        twin_reply_done(&due);
        if (a < 0) {
                send_error(t, f->id, "The twin could not bring its world up to date.",
                           events != NULL);
                return;
        }
        _cleanup_free_ char *world = json_dumps(twin_world(t), JSON_COMPACT);
        /* the world is the HTTP-style body of the reply, and nothing goes on a tape */
        TwinReplyBytes rb = {.status = 200,
                             .body = world,
                             .body_len = world ? strlen(world) : 0,
                             .events = events};
        char *buf;
        size_t len;
        int r = world ? podwire_encode_reply_bytes(f->id, &rb, &buf, &len) : -ENOMEM;
        if (r < 0) {
                send_error(t, f->id,
                           r == -EMSGSIZE ? "The world is larger than a frame."
                                          : "The world could not be encoded.",
                           false);
                return;
        }
        send_frame(buf, len);
}

int main(int argc, char **argv)
{
        /* first: every trapped syscall from here on is named to pomed */
        if (pod_sigsys_install(POD_FD) < 0)
                return EXIT_OSERR;
        if (argc != 3 || !streq(argv[1], "--twin")) {
                fprintf(stderr, "usage: pome-pod --twin NAME   (fd 3: frame socket from pomed)\n");
                return EXIT_USAGE;
        }
        twin_name = argv[2];
        const TwinKind *kind = twin_kind_find(twin_name);
        if (!kind) {
                fprintf(stderr, "pome-pod: unknown twin \"%s\"\n", twin_name);
                return EXIT_USAGE;
        }

        /*
         * jansson seeds its hash function from /dev/urandom on first use; the pod's
         * read-only, nodev view refuses that, and stage 2 refuses open(2) altogether. So
         * before the first object (a route's fixed args, just below).
         */
        size_t hseed;
        if (getrandom(&hseed, sizeof(hseed), 0) == (ssize_t)sizeof(hseed))
                json_object_seed(hseed ? hseed : 1);

        /* The surface is bound now, while a pooled pod waits for its load frame: off the
         * create's path (its tables are built in: no parse). */
        if (!twin_kind_surface(kind))
                die(EXIT_OSERR, "the embedded surface of %s does not load", twin_name);

        /* No core dump of a world, no /proc/<pod> readable by other pods' uid. */
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* A write to a closed socket is an EPIPE to handle, not a death. */
        signal(SIGPIPE, SIG_IGN);

        FrameReader rd = {};
        Frame f = {};
        int r = read_frame(&rd, &f, NULL);
        if (r <= 0)
                die(EXIT_DATA, "no load frame: %s", r == 0 ? "EOF" : strerror(-r));
        json_t *sl = json_object_get(f.head, "seed_len");
        if (!streq_ptr(json_get_str(f.head, "op"), "load") ||
            !streq_ptr(json_get_str(f.head, "twin"), twin_name) || !json_is_integer(sl) ||
            json_integer_value(sl) < 0 || (uint64_t)json_integer_value(sl) > f.body_len)
                die(EXIT_DATA, "first frame is not a load of %s with a valid seed_len", twin_name);
        size_t seed_len = (size_t)json_integer_value(sl);
        json_t *pa = json_object_get(f.head, "pack_after_ms");
        if (pa && (!json_is_integer(pa) || json_integer_value(pa) < 0 ||
                   json_integer_value(pa) > INT_MAX))
                die(EXIT_DATA, "pack_after_ms is not a number of milliseconds");
        pack_after_ms = (int)json_integer_value(pa);
        size_t bpf_len = f.body_len - seed_len;
        if (bpf_len % sizeof(struct sock_filter) != 0 ||
            bpf_len / sizeof(struct sock_filter) > BPF_MAXINSNS)
                die(EXIT_DATA, "stage-2 program of %zu bytes is not a BPF program", bpf_len);

        _cleanup_json_ json_t *seed = NULL;
        if (seed_len > 0) {
                json_error_t je;
                seed = json_loadb(f.body, seed_len, JSON_REJECT_DUPLICATES, &je);
                if (!seed) {
                        char why[256];
                        snprintf(why, sizeof(why), "line %d column %d: %s", je.line, je.column,
                                 je.text);
                        seed_rejected(why);
                }
        }
        Twin *t = NULL;
        char err[512] = "";
        r = twin_new(kind, seed, &t, err, sizeof(err));
        if (r == -EINVAL)
                seed_rejected(err[0] ? err : "invalid seed");
        if (r < 0)
                die(EXIT_OSERR, "creating the twin: %s", strerror(-r));
        json_decref(TAKE_PTR(seed)); /* the world is built: the seed is not kept for life */

        int nfd = notify_connect();
        if (nfd < 0 && nfd != -ENOENT)
                die(EXIT_OSERR, "NOTIFY_SOCKET: %s", strerror(-nfd));
        r = install_stage2(f.body + seed_len, bpf_len);
        if (r < 0)
                die(EXIT_OSERR, "installing the stage-2 seccomp filter: %s", strerror(-r));
        if (nfd >= 0) {
                r = notify_send(nfd, "READY=1");
                if (r < 0)
                        die(EXIT_OSERR, "sending READY=1: %s", strerror(-r));
                close(nfd);
        }
        frame_done(&f);
        if (rd.off == rd.len) /* the load frame's buffer (a seed's size) is not kept */
                frame_reader_done(&rd);
        /* what loading freed (the seed, the load frame) goes back to the kernel: an idle
         * pod holds its world and little else */
        (void)malloc_trim(0);
        if (pack_after_ms > 0 && set_read_timeout(pack_after_ms) < 0)
                pack_after_ms = 0; /* a filter without setsockopt: the world stays a tree */
        timing = pack_after_ms > 0;

        for (;;) {
                r = read_frame(&rd, &f, t);
                if (r == 0)
                        break;
                if (r < 0)
                        die(r == -ENOMEM ? EXIT_OSERR : EXIT_DATA, "reading frames: %s",
                            strerror(-r));
                /* a call has a binary head, the rare ops a JSON one */
                const char *op = podwire_is_call(&f) ? "call" : json_get_str(f.head, "op");
                if (unpack(t) < 0)
                        /* still packed, nothing lost: the next frame tries again */
                        send_error(t, f.id, "The twin could not unpack its idle world.", false);
                else if (streq_ptr(op, "call"))
                        serve_call(t, &f);
                else if (streq_ptr(op, "export"))
                        serve_export(t, &f);
                else {
                        char m[128];
                        snprintf(m, sizeof(m), "The pod does not know the op \"%.64s\".",
                                 strempty(op));
                        send_error(t, f.id, m, false);
                }
                frame_done(&f);
        }
        frame_reader_done(&rd);
        twin_free(t);
        return 0;
}
