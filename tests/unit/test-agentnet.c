/* SPDX-License-Identifier: MIT */
/*
 * The agent pod's ways out (supervisor/agentnet.h) over real sockets on 127.0.0.1: a listening
 * socket made here stands for the one made inside the pod's network namespace. The module
 * runs on this thread's sd-event loop; a client thread plays the agent, and small blocking
 * servers (threads) play the hosts: an echo server, a counting server (reads to EOF, then
 * answers), a gated sink (reads nothing until told: back-pressure), an HTTP server that
 * keeps the head it received.
 *
 * Forwards: bytes both ways, 8 MiB each way at once, half-close, a writer stopped when its
 * reader stalls, a refused connect. The proxy: CONNECT tunnels (early data, a name resolved
 * on a thread, a closed port → 502), the allow-list (raw IPs, "*." suffixes, ports), 403
 * bodies and records, absolute-form requests rewritten to origin-form, 400s, the 431 of an
 * oversize head, the 408 of a silent or slow client, the validation of entries, and stop.
 *
 * TLS listeners, with a CA and a leaf the openssl CLI makes here: curl (--resolve, the CA
 * as --cacert) and openssl s_client reaching the HTTP host with the request as sent, the
 * server name routing (two hosts, "*.slack.com" taking files.slack.com and a.b.slack.com
 * but not slack.com, an exact name before a suffix, case and a trailing dot, a route to a
 * name resolved on a thread), refusals recorded with the name asked for (an unknown name,
 * none, h2 alone, a client that distrusts the CA, plain HTTP), 8 MiB each way at once
 * through a libssl client of the test's own, back-pressure, half-closes both ways (a
 * close_notify each way), the handshake deadline, a host that refuses, 50 clients at once.
 *
 * With --serve ALLOW… [--tls CHAIN KEY NAME=HOST:PORT[=LABEL]…] it runs a proxy (and a TLS
 * listener) alone for tests/integration/test-agentnet.sh: prints the port of each, serves
 * until SIGTERM, then prints the report.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "supervisor/agentnet.h"
#include "common/fileio.h"
#include "common/json-util.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "tests/unit/check.h"

#define HEAD_USEC    (1000 * USEC_PER_MSEC) /* the proxy's head deadline here */
#define CONNECT_USEC (1500 * USEC_PER_MSEC)
#define IO_TIMEOUT_S 10 /* a client's blocking read gives up after this */

static sd_event *loop;
static AgentNet *net;

/* ---- sockets ---- */

static int listen_on(uint16_t *ret_port, int rcvbuf, bool nonblock)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
        CHECK(fd >= 0);
        if (rcvbuf)
                CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) == 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
        CHECK(listen(fd, 64) == 0);
        CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
        *ret_port = ntohs(a.sin_port);
        return fd;
}

static int tcp_connect(uint16_t port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(fd >= 0);
        struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
        return fd;
}

static bool send_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;
        while (len > 0) {
                ssize_t k = send(fd, p, len, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return false;
                p += k;
                len -= (size_t)k;
        }
        return true;
}

static bool send_str(int fd, const char *s)
{
        return send_all(fd, s, strlen(s));
}

/* Reads until EOF (true) or an error/timeout (false), at most cap - 1 bytes kept, NUL-ended. */
static bool read_to_eof(int fd, char *buf, size_t cap, size_t *ret_len)
{
        size_t len = 0;
        for (;;) {
                char tmp[4096];
                ssize_t k = recv(fd, tmp, sizeof(tmp), 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        /* a reset after the whole answer still counts as its end */
                        bool reset = errno == ECONNRESET;
                        buf[len] = 0;
                        *ret_len = len;
                        return reset;
                }
                if (k == 0)
                        break;
                size_t keep = (size_t)k < cap - 1 - len ? (size_t)k : cap - 1 - len;
                memcpy(buf + len, tmp, keep);
                len += keep;
        }
        buf[len] = 0;
        *ret_len = len;
        return true;
}

/* Reads exactly len bytes. */
static bool read_exact(int fd, char *buf, size_t len)
{
        while (len > 0) {
                ssize_t k = recv(fd, buf, len, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return false;
                buf += k;
                len -= (size_t)k;
        }
        return true;
}

static uint8_t pattern(uint64_t i)
{
        return (uint8_t)(i % 251);
}

/* ---- hosts (blocking servers, a thread per connection) ---- */

typedef void (*ServeFn)(int fd);

typedef struct Server {
        int fd;
        uint16_t port;
        ServeFn serve;
} Server;

typedef struct Job {
        ServeFn serve;
        int fd;
} Job;

static void *job_thread(void *p)
{
        Job j = *(Job *)p;
        free(p);
        j.serve(j.fd);
        close(j.fd);
        return NULL;
}

static void *server_thread(void *p)
{
        Server *s = p;
        for (;;) {
                int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return NULL;
                }
                Job *j = malloc(sizeof(*j));
                CHECK(j);
                *j = (Job){s->serve, fd};
                pthread_t t;
                pthread_attr_t attr;
                pthread_attr_init(&attr);
                pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                CHECK(pthread_create(&t, &attr, job_thread, j) == 0);
                pthread_attr_destroy(&attr);
        }
}

static void server_start(Server *s, ServeFn serve, int rcvbuf)
{
        s->fd = listen_on(&s->port, rcvbuf, false);
        s->serve = serve;
        pthread_t t;
        CHECK(pthread_create(&t, NULL, server_thread, s) == 0);
        pthread_detach(t);
}

/* Echoes until EOF, then closes its side. */
static void serve_echo(int fd)
{
        char buf[65536];
        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), 0);
                if (k <= 0)
                        break;
                if (!send_all(fd, buf, (size_t)k))
                        break;
        }
        shutdown(fd, SHUT_WR);
}

/* Reads to EOF, then answers "got N" (a half-closed client still reads the answer). */
static void serve_count(int fd)
{
        char buf[65536];
        size_t n = 0;
        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), 0);
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        char msg[64];
        snprintf(msg, sizeof(msg), "got %zu", n);
        send_all(fd, msg, strlen(msg));
}

static sem_t gate, gated_done;
static uint64_t gated_bytes;
static bool gated_ok;

/* Reads nothing until the gate opens, then reads to EOF checking the pattern. */
static void serve_gated(int fd)
{
        sem_wait(&gate);
        char buf[65536];
        uint64_t n = 0;
        bool ok = true;
        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), 0);
                if (k <= 0)
                        break;
                for (ssize_t i = 0; i < k; i++)
                        if ((uint8_t)buf[i] != pattern(n + (uint64_t)i))
                                ok = false;
                n += (uint64_t)k;
        }
        gated_bytes = n;
        gated_ok = ok;
        sem_post(&gated_done);
}

#define EARLY_SIZE (2u << 20)

/*
 * Answers after the first bytes of an upload (EARLY_SIZE bytes of pattern) and closes with
 * the rest unread: the kernel resets the connection behind the answer. It waits until its
 * answer has left its send queue (acknowledged by pome), since a reset also throws away
 * what a host has not sent yet, which no proxy could deliver.
 */
static void serve_early(int fd)
{
        char buf[1024];
        if (recv(fd, buf, sizeof(buf), 0) <= 0)
                return;
        char *answer = malloc(EARLY_SIZE);
        for (size_t i = 0; i < EARLY_SIZE; i++)
                answer[i] = (char)pattern(i);
        send_all(fd, answer, EARLY_SIZE);
        free(answer);
        for (int i = 0, q = 1; i < 5000 && q > 0; i++) {
                if (ioctl(fd, SIOCOUTQ, &q) < 0)
                        break;
                if (q > 0)
                        usleep(1000);
        }
}

static pthread_mutex_t http_lock = PTHREAD_MUTEX_INITIALIZER;
static char http_head[8192]; /* the last head the HTTP server received */

/* One request: reads its head and Content-Length body, answers "len=N" and closes. */
static void serve_http(int fd)
{
        char buf[16384];
        size_t len = 0;
        char *end = NULL;
        while (!end && len < sizeof(buf) - 1) {
                ssize_t k = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
                if (k <= 0)
                        return;
                len += (size_t)k;
                buf[len] = 0;
                end = strstr(buf, "\r\n\r\n");
        }
        if (!end)
                return;
        size_t head = (size_t)(end + 4 - buf);
        pthread_mutex_lock(&http_lock);
        snprintf(http_head, sizeof(http_head), "%.*s", (int)head, buf);
        pthread_mutex_unlock(&http_lock);
        size_t want = 0;
        for (char *p = buf; p < end; p++)
                if (strncasecmp(p, "\r\ncontent-length:", 17) == 0)
                        want = strtoul(p + 17, NULL, 10);
        size_t got = len - head;
        while (got < want) {
                char tmp[65536];
                ssize_t k = recv(fd, tmp, sizeof(tmp), 0);
                if (k <= 0)
                        break;
                got += (size_t)k;
        }
        char body[64], reply[256];
        snprintf(body, sizeof(body), "len=%zu", got);
        snprintf(reply, sizeof(reply),
                 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                 strlen(body), body);
        send_all(fd, reply, strlen(reply));
}

static void http_head_copy(char *out, size_t len)
{
        pthread_mutex_lock(&http_lock);
        size_t n = strnlen(http_head, len - 1);
        memcpy(out, http_head, n);
        out[n] = 0;
        http_head[0] = 0;
        pthread_mutex_unlock(&http_lock);
}

static pthread_mutex_t slack_lock = PTHREAD_MUTEX_INITIALIZER;
static char slack_head[8192]; /* the last head the "slack" host received */

/* Another HTTP host, told apart by its answer: reads a head, answers "slack" and closes. */
static void serve_slack(int fd)
{
        char buf[8192];
        size_t len = 0;
        while (len < sizeof(buf) - 1) {
                ssize_t k = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
                if (k <= 0)
                        return;
                len += (size_t)k;
                buf[len] = 0;
                if (strstr(buf, "\r\n\r\n"))
                        break;
        }
        pthread_mutex_lock(&slack_lock);
        snprintf(slack_head, sizeof(slack_head), "%s", buf);
        pthread_mutex_unlock(&slack_lock);
        static const char answer[] =
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nslack";
        send_all(fd, answer, strlen(answer));
}

static sem_t first_done;
static uint64_t first_bytes;

/* Speaks first and shuts its side at once, then reads to EOF: the agent half-closed. */
static void serve_first(int fd)
{
        char buf[65536];
        uint64_t n = 0;
        send_all(fd, "first", 5);
        shutdown(fd, SHUT_WR);
        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), 0);
                if (k <= 0)
                        break;
                n += (uint64_t)k;
        }
        first_bytes = n;
        sem_post(&first_done);
}

static Server echo_srv, count_srv, gated_srv, http_srv, early_srv, slack_srv, first_srv;
static uint16_t closed_port; /* nothing listens there */
static uint16_t tarpit_port; /* a full accept queue: a new connect hangs */

/* ---- calls made on the loop's thread ---- */

typedef struct LoopCall {
        void (*fn)(void *);
        void *arg;
} LoopCall;

static int call_pipe[2] = {-1, -1};
static sem_t call_done;

static void on_loop(void (*fn)(void *), void *arg)
{
        LoopCall c = {fn, arg};
        CHECK(write(call_pipe[1], &c, sizeof(c)) == (ssize_t)sizeof(c));
        sem_wait(&call_done);
}

static int on_call(sd_event_source *s _unused_, int fd, uint32_t revents _unused_,
                   void *userdata _unused_)
{
        LoopCall c;
        if (read(fd, &c, sizeof(c)) == (ssize_t)sizeof(c)) {
                c.fn(c.arg);
                sem_post(&call_done);
        }
        return 0;
}

static void do_report(void *arg)
{
        *(json_t **)arg = agent_net_report(net);
}

static json_t *report(void)
{
        json_t *r = NULL;
        on_loop(do_report, &r);
        CHECK(r);
        return r;
}

/* A new reference to the last connection recorded. */
static json_t *last_record(void)
{
        _cleanup_json_ json_t *r = report();
        json_t *a = json_object_get(r, "connections");
        json_t *last = json_array_get(a, json_array_size(a) ? json_array_size(a) - 1 : 0);
        CHECK(last);
        return json_incref(last);
}

static void do_refused(void *arg)
{
        *(size_t *)arg = agent_net_refused(net);
}

static size_t refused(void)
{
        size_t n = 0;
        on_loop(do_refused, &n);
        return n;
}

static bool rec_is(const json_t *rec, const char *via, const char *host, uint16_t port,
                   const char *method, bool allowed, int status)
{
        bool ok = streq_ptr(json_get_str(rec, "via"), via) &&
                  streq_ptr(json_get_str(rec, "host"), host) &&
                  json_integer_value(json_object_get(rec, "port")) == port &&
                  streq_ptr(json_get_str(rec, "method"), method) &&
                  json_is_true(json_object_get(rec, "allowed")) == allowed &&
                  json_integer_value(json_object_get(rec, "status")) == status;
        if (!ok) {
                char *s = json_dumps(rec, JSON_COMPACT);
                fprintf(stderr, "record: %s\n", s ? s : "?");
                free(s);
        }
        return ok;
}

/* ---- the agent's side ---- */

static double elapsed_s(uint64_t since)
{
        return (double)(now_usec(CLOCK_MONOTONIC) - since) / 1e6;
}

static uint16_t fwd_echo, fwd_count, fwd_gated, fwd_closed, fwd_early;
static uint16_t proxy_ips;   /* names and the literal 127.0.0.1 with ports */
static uint16_t proxy_names; /* names only: localhost, *.example.test */
static uint16_t proxy_none;  /* an empty allow-list */

static void test_forward_echo(void)
{
        int fd = tcp_connect(fwd_echo);
        char buf[64];
        size_t len;
        CHECK(send_str(fd, "hello"));
        CHECK(read_exact(fd, buf, 5) && memcmp(buf, "hello", 5) == 0);
        CHECK(send_str(fd, " again"));
        CHECK(shutdown(fd, SHUT_WR) == 0);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && streq(buf, " again"));
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "forward", "127.0.0.1", echo_srv.port, NULL, true, 0));
        CHECK(streq_ptr(json_get_str(rec, "label"), "echo twin"));
        CHECK(json_integer_value(json_object_get(rec, "bytes_up")) == 11);
        CHECK(json_integer_value(json_object_get(rec, "bytes_down")) == 11);
        const char *at = json_get_str(rec, "at");
        int64_t t;
        CHECK(at && parse_rfc3339(at, &t) == 0 && llabs(t - now_sec()) < 60);
}

/* Half-close: the host sees the agent's EOF and still answers on its side. */
static void test_forward_half_close(void)
{
        int fd = tcp_connect(fwd_count);
        char buf[64];
        size_t len;
        char data[1000];
        memset(data, 'x', sizeof(data));
        CHECK(send_all(fd, data, sizeof(data)));
        CHECK(shutdown(fd, SHUT_WR) == 0);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && streq(buf, "got 1000"));
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(json_integer_value(json_object_get(rec, "bytes_up")) == 1000);
        CHECK(json_integer_value(json_object_get(rec, "bytes_down")) == 8);
}

typedef struct Writer {
        int fd;
        uint64_t total;
        bool ok;
} Writer;

static void *writer_thread(void *p)
{
        Writer *w = p;
        char *buf = malloc(65536);
        w->ok = buf != NULL;
        for (uint64_t off = 0; w->ok && off < w->total;) {
                size_t n = w->total - off < 65536 ? (size_t)(w->total - off) : 65536;
                for (size_t i = 0; i < n; i++)
                        buf[i] = (char)pattern(off + i);
                w->ok = send_all(w->fd, buf, n);
                off += n;
        }
        shutdown(w->fd, SHUT_WR);
        free(buf);
        return NULL;
}

/* 8 MiB each way at once through the echo host: both directions full, nothing lost. */
static void test_forward_large(void)
{
        const uint64_t total = 8u << 20;
        int fd = tcp_connect(fwd_echo);
        Writer w = {.fd = fd, .total = total};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, writer_thread, &w) == 0);
        char *buf = malloc(65536);
        uint64_t got = 0;
        bool ok = true;
        for (;;) {
                ssize_t k = recv(fd, buf, 65536, 0);
                if (k <= 0) {
                        CHECK(k == 0);
                        break;
                }
                for (ssize_t i = 0; i < k; i++)
                        if ((uint8_t)buf[i] != pattern(got + (uint64_t)i))
                                ok = false;
                got += (uint64_t)k;
        }
        pthread_join(t, NULL);
        free(buf);
        close(fd);
        CHECK(w.ok && ok && got == total);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(json_integer_value(json_object_get(rec, "bytes_up")) == (json_int_t)total);
        CHECK(json_integer_value(json_object_get(rec, "bytes_down")) == (json_int_t)total);
}

/*
 * Back-pressure: a host that reads nothing stops the agent's writes after what the sockets
 * and one pipe hold (a few MiB here: pome's connected socket may buffer 4 MiB), not the 32
 * MiB offered; once it reads, every byte arrives in order.
 */
static void test_forward_backpressure(void)
{
        const uint64_t total = 32u << 20;
        int fd = tcp_connect(fwd_gated);
        int small = 65536;
        CHECK(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
        char *buf = malloc(65536);
        uint64_t sent = 0;
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                if (poll(&p, 1, 500) <= 0)
                        break; /* stalled for 0.5 s */
                size_t n = 65536;
                for (size_t i = 0; i < n; i++)
                        buf[i] = (char)pattern(sent + i);
                ssize_t k = send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && errno == EAGAIN)
                        continue;
                CHECK(k > 0);
                if (k <= 0)
                        break;
                sent += (uint64_t)k;
                if (sent >= total)
                        break;
        }
        fprintf(stderr, "back-pressure: %" PRIu64 " bytes accepted before the writer stalled\n",
                sent);
        CHECK(sent > 0 && sent < (12u << 20));
        sem_post(&gate);
        while (sent < total) {
                size_t n = total - sent < 65536 ? (size_t)(total - sent) : 65536;
                for (size_t i = 0; i < n; i++)
                        buf[i] = (char)pattern(sent + i);
                if (!send_all(fd, buf, n))
                        break;
                sent += n;
        }
        CHECK(sent == total);
        CHECK(shutdown(fd, SHUT_WR) == 0);
        sem_wait(&gated_done);
        CHECK(gated_ok && gated_bytes == total);
        size_t len;
        CHECK(read_to_eof(fd, buf, 64, &len) && len == 0);
        free(buf);
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(json_integer_value(json_object_get(rec, "bytes_up")) == (json_int_t)total);
}

/*
 * A host that answers early and resets while the agent, still uploading, does not read yet:
 * the whole answer still reaches the agent (what pome had not read from the host when the
 * reset came included), then both close.
 */
static void test_forward_early_answer(void)
{
        int fd = tcp_connect(fwd_early);
        int small = 65536;
        CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) == 0);
        Writer w = {.fd = fd, .total = 64u << 20};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, writer_thread, &w) == 0);
        usleep(300000);
        char *buf = malloc(65536);
        uint64_t got = 0;
        bool ok = true;
        for (;;) {
                ssize_t k = recv(fd, buf, 65536, 0);
                if (k <= 0)
                        break;
                for (ssize_t i = 0; i < k; i++)
                        if ((uint8_t)buf[i] != pattern(got + (uint64_t)i))
                                ok = false;
                got += (uint64_t)k;
        }
        free(buf);
        shutdown(fd, SHUT_RDWR); /* the writer, blocked or not, gives up */
        pthread_join(t, NULL);
        close(fd);
        if (got != EARLY_SIZE)
                fprintf(stderr, "early answer: %" PRIu64 " of %u bytes\n", got, EARLY_SIZE);
        CHECK(ok && got == EARLY_SIZE);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(json_integer_value(json_object_get(rec, "bytes_down")) == EARLY_SIZE);
}

static void test_forward_refused(void)
{
        int fd = tcp_connect(fwd_closed);
        char buf[64];
        size_t len;
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && len == 0);
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "forward", "127.0.0.1", closed_port, NULL, true, 0));
        const char *why = json_get_str(rec, "why");
        CHECK(why && strstr(why, "Connection refused"));
}

/* Sends req to the proxy at port, reads the answer to EOF. */
static void proxy_ask(uint16_t port, const char *req, char *resp, size_t cap)
{
        int fd = tcp_connect(port);
        size_t len;
        CHECK(send_str(fd, req));
        CHECK(read_to_eof(fd, resp, cap, &len));
        close(fd);
}

static bool status_is(const char *resp, int status)
{
        char want[32];
        snprintf(want, sizeof(want), "HTTP/1.1 %d ", status);
        bool ok = startswith(resp, want) != NULL;
        if (!ok)
                fprintf(stderr, "answer (wanted %d): %.200s\n", status, resp);
        return ok;
}

static const char established[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

/* CONNECT to an allowed host: 200, then a tunnel; early data after the head goes through. */
static void test_connect_tunnel(void)
{
        char req[256], buf[256];
        size_t len;
        snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
                 echo_srv.port, echo_srv.port);
        int fd = tcp_connect(proxy_ips);
        CHECK(send_str(fd, req));
        CHECK(read_exact(fd, buf, strlen(established)) &&
              memcmp(buf, established, strlen(established)) == 0);
        CHECK(send_str(fd, "ping"));
        CHECK(read_exact(fd, buf, 4) && memcmp(buf, "ping", 4) == 0);
        CHECK(shutdown(fd, SHUT_WR) == 0);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && len == 0);
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "proxy", "127.0.0.1", echo_srv.port, "CONNECT", true, 200));
        CHECK(json_integer_value(json_object_get(rec, "bytes_up")) == 4);
        CHECK(json_integer_value(json_object_get(rec, "bytes_down")) == 4);
        CHECK(!json_object_get(rec, "label") && !json_object_get(rec, "why"));

        /* early data: the bytes after the head in the same write */
        snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\nearly", echo_srv.port);
        fd = tcp_connect(proxy_ips);
        CHECK(send_str(fd, req));
        CHECK(shutdown(fd, SHUT_WR) == 0);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len));
        CHECK(len == strlen(established) + 5 && endswith(buf, "\r\n\r\nearly"));
        close(fd);
}

/* A name is resolved (on a thread) in pome's network; the record keeps it as asked. */
static void test_connect_name(void)
{
        char req[256], buf[256];
        size_t len;
        snprintf(req, sizeof(req), "CONNECT LocalHost.:%u HTTP/1.1\r\n\r\n", echo_srv.port);
        int fd = tcp_connect(proxy_names);
        CHECK(send_str(fd, req));
        CHECK(read_exact(fd, buf, strlen(established)) &&
              memcmp(buf, established, strlen(established)) == 0);
        CHECK(send_str(fd, "named"));
        CHECK(shutdown(fd, SHUT_WR) == 0);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && streq(buf, "named"));
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "proxy", "localhost", echo_srv.port, "CONNECT", true, 200));
}

static void test_connect_refused(void)
{
        char buf[2048];
        size_t before = refused();

        proxy_ask(proxy_ips, "CONNECT evil.example.com:443 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        CHECK(status_is(buf, 403));
        CHECK(strstr(buf, "evil.example.com:443 is not allowed"));
        CHECK(strstr(buf, "the agent pod may reach only: "));
        CHECK(strstr(buf, "*.example.test"));
        CHECK(strstr(buf, "pass --allow-net HOST"));
        CHECK(strstr(buf, "Connection: close\r\n"));
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "proxy", "evil.example.com", 443, "CONNECT", false, 403));
        CHECK(streq_ptr(json_get_str(rec, "why"), "not in the allow-list"));
        CHECK(json_integer_value(json_object_get(rec, "bytes_up")) == 0);
        CHECK(json_integer_value(json_object_get(rec, "bytes_down")) == 0);
        CHECK(refused() == before + 1);

        /* nothing allowed at all */
        proxy_ask(proxy_none, "CONNECT api.anthropic.com:443 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        CHECK(status_is(buf, 403) && strstr(buf, "may reach no host"));

        /* a listed literal with another port */
        proxy_ask(proxy_ips, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        CHECK(status_is(buf, 403));
}

/* A raw IP passes only when the list names that literal, never as a name. */
static void test_raw_ip(void)
{
        char req[256], buf[2048];
        snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", echo_srv.port);
        proxy_ask(proxy_names, req, buf, sizeof(buf));
        CHECK(status_is(buf, 403) && strstr(buf, "address literal"));
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "proxy", "127.0.0.1", echo_srv.port, "CONNECT", false, 403));

        snprintf(req, sizeof(req), "CONNECT [::1]:%u HTTP/1.1\r\n\r\n", echo_srv.port);
        proxy_ask(proxy_names, req, buf, sizeof(buf));
        CHECK(status_is(buf, 403));
        json_decref(rec);
        rec = last_record();
        CHECK(rec_is(rec, "proxy", "::1", echo_srv.port, "CONNECT", false, 403));

        /* forms inet_aton would take as 127.0.0.1 are not names */
        const char *numeric[] = {"2130706433", "127.1", "0x7f.0.0.1", "127.0.0.1."};
        for (size_t i = 0; i < ELEMENTSOF(numeric); i++) {
                snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\n\r\n", numeric[i],
                         echo_srv.port);
                proxy_ask(proxy_names, req, buf, sizeof(buf));
                CHECK(status_is(buf, 400));
                json_decref(rec);
                rec = last_record();
                CHECK(streq_ptr(json_get_str(rec, "host"), numeric[i]) &&
                      json_is_false(json_object_get(rec, "allowed")));
        }
}

/* "*.example.test" takes its subdomains, not itself. */
static void test_suffix(void)
{
        char buf[2048];
        proxy_ask(proxy_names, "CONNECT example.test:9 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        CHECK(status_is(buf, 403));
        proxy_ask(proxy_names, "CONNECT badexample.test:9 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        CHECK(status_is(buf, 403));
        /* allowed: the name does not resolve here, so 502 (or 504 from a slow resolver) */
        const char *subs[] = {"a.example.test", "X.A.Example.Test"};
        for (size_t i = 0; i < ELEMENTSOF(subs); i++) {
                char req[128];
                snprintf(req, sizeof(req), "CONNECT %s:9 HTTP/1.1\r\n\r\n", subs[i]);
                proxy_ask(proxy_names, req, buf, sizeof(buf));
                CHECK(status_is(buf, 502) || status_is(buf, 504));
                _cleanup_json_ json_t *rec = last_record();
                CHECK(json_is_true(json_object_get(rec, "allowed")));
                CHECK(i == 0 ? streq_ptr(json_get_str(rec, "host"), "a.example.test")
                             : streq_ptr(json_get_str(rec, "host"), "x.a.example.test"));
        }
}

static void test_connect_closed_port(void)
{
        char req[128], buf[2048];
        snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", closed_port);
        proxy_ask(proxy_ips, req, buf, sizeof(buf));
        CHECK(status_is(buf, 502) && strstr(buf, "Connection refused"));
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "proxy", "127.0.0.1", closed_port, "CONNECT", true, 502));
        CHECK(strstr(strempty(json_get_str(rec, "why")), "Connection refused"));
}

/* An allowed host that never completes the handshake: 504 at the connect deadline. */
static void test_connect_deadline(void)
{
        char req[128], buf[2048];
        snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", tarpit_port);
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        proxy_ask(proxy_ips, req, buf, sizeof(buf));
        double dt = elapsed_s(t0);
        CHECK(status_is(buf, 504) && strstr(buf, "within 1500 ms"));
        CHECK(dt > 1.4 && dt < 4.0);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "proxy", "127.0.0.1", tarpit_port, "CONNECT", true, 504));
}

/* Names looked up at once, more than run in parallel (the rest wait their turn). */
static void test_concurrent_names(void)
{
        enum { N = 20 };
        int fds[N];
        char req[128], buf[256];
        size_t len, ok = 0;
        snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", echo_srv.port);
        for (size_t i = 0; i < N; i++) {
                fds[i] = tcp_connect(proxy_names);
                CHECK(send_str(fds[i], req));
        }
        for (size_t i = 0; i < N; i++) {
                char tag[16];
                snprintf(tag, sizeof(tag), "n%zu", i);
                if (read_exact(fds[i], buf, strlen(established)) &&
                    memcmp(buf, established, strlen(established)) == 0 && send_str(fds[i], tag) &&
                    shutdown(fds[i], SHUT_WR) == 0 && read_to_eof(fds[i], buf, sizeof(buf), &len) &&
                    streq(buf, tag))
                        ok++;
                close(fds[i]);
        }
        CHECK(ok == N);
}

/* Absolute-form: forwarded in origin-form, Host from the target, one request a connection. */
static void test_absolute_form(void)
{
        char req[1024], buf[4096], head[8192];
        snprintf(req, sizeof(req),
                 "GET http://127.0.0.1:%u/path/x?q=1&r=2 HTTP/1.1\r\nHost: elsewhere.test\r\n"
                 "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\n"
                 "User-Agent: test/1\r\nAccept: */*\r\n\r\n",
                 http_srv.port);
        proxy_ask(proxy_ips, req, buf, sizeof(buf));
        CHECK(status_is(buf, 200) && endswith(buf, "\r\n\r\nlen=0"));
        http_head_copy(head, sizeof(head));
        char want[256];
        snprintf(want, sizeof(want), "\r\nHost: 127.0.0.1:%u\r\n", http_srv.port);
        CHECK(startswith(head, "GET /path/x?q=1&r=2 HTTP/1.1\r\n"));
        CHECK(strstr(head, "\r\nUser-Agent: test/1\r\n") && strstr(head, "\r\nAccept: */*\r\n"));
        CHECK(strstr(head, want) && strstr(head, "\r\nConnection: close\r\n"));
        CHECK(!strstr(head, "elsewhere") && !strcasestr(head, "Proxy-"));
        if (!strstr(head, want))
                fprintf(stderr, "upstream head: %s\n", head);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "proxy", "127.0.0.1", http_srv.port, "GET", true, 0));
        CHECK(json_integer_value(json_object_get(rec, "bytes_down")) == (json_int_t)strlen(buf));
        CHECK(json_integer_value(json_object_get(rec, "bytes_up")) == (json_int_t)strlen(head));

        /* an empty path is "/", HTTP/1.0 stays, bare LFs are taken */
        snprintf(req, sizeof(req), "GET http://127.0.0.1:%u HTTP/1.0\nAccept: x\n\n",
                 http_srv.port);
        proxy_ask(proxy_ips, req, buf, sizeof(buf));
        CHECK(status_is(buf, 200));
        http_head_copy(head, sizeof(head));
        CHECK(startswith(head, "GET / HTTP/1.0\r\nAccept: x\r\n"));

        /* a body: the bytes after the head, then the rest as it comes */
        const size_t body = 300000;
        char *data = malloc(body);
        memset(data, 'b', body);
        snprintf(req, sizeof(req),
                 "POST http://127.0.0.1:%u/up HTTP/1.1\r\nContent-Length: %zu\r\n\r\nbbbb",
                 http_srv.port, body);
        int fd = tcp_connect(proxy_ips);
        size_t len;
        CHECK(send_str(fd, req));
        CHECK(send_all(fd, data, body - 4));
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len));
        CHECK(status_is(buf, 200) && endswith(buf, "\r\n\r\nlen=300000"));
        close(fd);
        free(data);
        http_head_copy(head, sizeof(head));
        CHECK(startswith(head, "POST /up HTTP/1.1\r\nContent-Length: 300000\r\n"));

        /* not allowed: 403, nothing sent up */
        proxy_ask(proxy_names, "GET http://evil.test/steal?k=1 HTTP/1.1\r\nHost: evil.test\r\n\r\n",
                  buf, sizeof(buf));
        CHECK(status_is(buf, 403));
        json_decref(rec);
        rec = last_record();
        CHECK(rec_is(rec, "proxy", "evil.test", 80, "GET", false, 403));
}

static void test_bad_requests(void)
{
        char buf[2048];
        char req[256];
        const char *bad[] = {
                "GARBAGE\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                "GET * HTTP/1.1\r\n\r\n",
                "GET https://api.example.test/ HTTP/1.1\r\n\r\n",
                "GET ftp://x.example.test/ HTTP/1.1\r\n\r\n",
                "GET http:///nohost HTTP/1.1\r\n\r\n",
                "GET http://user@a.example.test/ HTTP/1.1\r\n\r\n",
                "GET http://a.example.test/#frag HTTP/1.1\r\n\r\n",
                "CONNECT a.example.test HTTP/1.1\r\n\r\n",
                "CONNECT a.example.test:0 HTTP/1.1\r\n\r\n",
                "CONNECT a.example.test:99999 HTTP/1.1\r\n\r\n",
                "CONNECT ::1:443 HTTP/1.1\r\n\r\n",
                "CONNECT http://a.example.test:443 HTTP/1.1\r\n\r\n",
                "CONNECT a.example.test:443 HTTP/2.0\r\n\r\n",
                "CONNECT a.example.test:443 HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n",
                "CONNECT a.example.test:443 HTTP/1.1\r\nBad Name: 1\r\n\r\n",
                "CONNECT a.example.test:443 HTTP/1.1\r\nNoColon\r\n\r\n",
                "CONNECT a.example.test:443 HTTP/1.1\r\nX: a\rb\r\n\r\n",
                "GE(T http://a.example.test/ HTTP/1.1\r\n\r\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                proxy_ask(proxy_names, bad[i], buf, sizeof(buf));
                if (!status_is(buf, 400))
                        fprintf(stderr, "  for request %zu: %s\n", i, bad[i]);
                CHECK(status_is(buf, 400) && strstr(buf, "pome: a bad proxy request: "));
                _cleanup_json_ json_t *rec = last_record();
                CHECK(json_is_false(json_object_get(rec, "allowed")) &&
                      json_integer_value(json_object_get(rec, "status")) == 400 &&
                      json_get_str(rec, "why"));
        }
        /* a NUL in the head */
        int fd = tcp_connect(proxy_names);
        size_t len;
        static const char nul[] = "CONNECT a.example.test:443 HTTP/1.1\r\nX: \0\r\n\r\n";
        CHECK(send_all(fd, nul, sizeof(nul) - 1));
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len));
        CHECK(status_is(buf, 400));
        close(fd);

        /* empty lines before the request line are skipped (RFC 9112 §2.2) */
        snprintf(req, sizeof(req), "\r\n\r\nCONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", closed_port);
        proxy_ask(proxy_ips, req, buf, sizeof(buf));
        CHECK(status_is(buf, 502));
}

/* A head past AGENT_NET_HEADER_MAX: 431, the answer readable, then the connection closed. */
static void test_oversize_head(void)
{
        size_t n = AGENT_NET_HEADER_MAX + 4096;
        char *req = malloc(n + 1);
        int off = snprintf(req, n, "GET http://127.0.0.1:%u/ HTTP/1.1\r\nX-Pad: ", http_srv.port);
        memset(req + off, 'a', n - (size_t)off);
        req[n] = 0;
        char buf[2048];
        proxy_ask(proxy_ips, req, buf, sizeof(buf));
        CHECK(status_is(buf, 431));
        free(req);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(json_is_false(json_object_get(rec, "allowed")) &&
              json_integer_value(json_object_get(rec, "status")) == 431);
        char head[64];
        http_head_copy(head, sizeof(head));
        CHECK(head[0] == 0); /* nothing went up */
}

/* A silent client and a slow one are dropped at the head deadline (HEAD_USEC here). */
static void test_head_deadline(void)
{
        char buf[2048];
        size_t len;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        int fd = tcp_connect(proxy_ips);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len));
        double dt = elapsed_s(t0);
        CHECK(status_is(buf, 408));
        CHECK(dt > 0.9 && dt < 3.0);
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(json_is_false(json_object_get(rec, "allowed")) &&
              json_integer_value(json_object_get(rec, "status")) == 408 &&
              strstr(strempty(json_get_str(rec, "why")), "no complete request head"));

        /* a byte every 150 ms: never a whole head, dropped at the same deadline */
        t0 = now_usec(CLOCK_MONOTONIC);
        fd = tcp_connect(proxy_ips);
        const char *slow = "CONNECT a.example.test:443 HTTP/1.1\r\nX-Slow: 1234567890\r\n";
        for (const char *p = slow; *p; p++) {
                if (send(fd, p, 1, MSG_NOSIGNAL) != 1)
                        break;
                struct pollfd pf = {.fd = fd, .events = POLLIN};
                if (poll(&pf, 1, 150) > 0)
                        break; /* the answer came */
        }
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len));
        dt = elapsed_s(t0);
        CHECK(status_is(buf, 408));
        CHECK(dt > 0.9 && dt < 3.0);
        close(fd);

        /* a client that closes before a whole head is recorded too */
        fd = tcp_connect(proxy_ips);
        CHECK(send_str(fd, "CONNECT a.exa"));
        close(fd);
        usleep(100000);
        json_decref(rec);
        rec = last_record();
        CHECK(json_is_false(json_object_get(rec, "allowed")) &&
              streq_ptr(json_get_str(rec, "why"), "closed before a complete request head"));
}

/*
 * More connections than CONNS_MAX (256) at once: past it the listeners pause, the rest wait
 * in the backlog, and each gets its 408 once the first ones are gone.
 */
static void test_many_connections(void)
{
        enum { N = 300 };
        int fds[N];
        char buf[512];
        size_t len, answered = 0;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        for (size_t i = 0; i < N; i++)
                fds[i] = tcp_connect(proxy_ips);
        for (size_t i = 0; i < N; i++) {
                if (read_to_eof(fds[i], buf, sizeof(buf), &len) && startswith(buf, "HTTP/1.1 408 "))
                        answered++;
                close(fds[i]);
        }
        double dt = elapsed_s(t0);
        CHECK(answered == N);
        CHECK(dt > 1.8 && dt < 6.0); /* two rounds of the 1 s deadline */
        /* and the listeners accept again */
        proxy_ask(proxy_ips, "CONNECT example.test:9 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        CHECK(status_is(buf, 403));
}

/* ---- TLS listeners ---- */

static char tls_dir[64];          /* the CA, the leaf and its key, made by the openssl CLI */
static char *tls_chain, *tls_key; /* the leaf then the CA, the leaf's key: PEM text */
static bool tls_ok;               /* false: no openssl CLI, the TLS cases are skipped */
static bool have_curl;
static uint16_t tls_port;
static SSL_CTX *client_ctx; /* trusts the test's CA only */

/* Runs cmd with sh -c (say 2>&1 to keep stderr), its output into out (NUL-ended). Its status. */
static int run(const char *cmd, char *out, size_t cap)
{
        FILE *f = popen(cmd, "r");
        if (!f)
                return -1;
        size_t len = 0, k;
        char tmp[4096];
        while ((k = fread(tmp, 1, sizeof(tmp), f)) > 0) {
                size_t keep = k < cap - 1 - len ? k : cap - 1 - len;
                memcpy(out + len, tmp, keep);
                len += keep;
        }
        out[len] = 0;
        int st = pclose(f);
        return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *tls_file(const char *name)
{
        char path[128], *text = NULL;
        snprintf(path, sizeof(path), "%s/%s", tls_dir, name);
        CHECK_OK(read_file_at(AT_FDCWD, path, 1 << 20, &text, NULL));
        return text;
}

/*
 * A CA and a leaf for api.github.com, slack.com, *.slack.com and *.pome.test (ECDSA P-256,
 * as a run's CA makes them), another CA (for a client that trusts only it), and a client
 * context that trusts the first CA alone.
 */
static void tls_setup(void)
{
        char cmd[2048], out[4096];
        if (run("command -v openssl >/dev/null 2>&1", out, sizeof(out)) != 0) {
                fprintf(stderr, "skip: the TLS cases: the openssl CLI is not installed\n");
                return;
        }
        have_curl = run("command -v curl >/dev/null 2>&1", out, sizeof(out)) == 0;
        snprintf(tls_dir, sizeof(tls_dir), "/tmp/pome-agentnet-tls.XXXXXX");
        CHECK(mkdtemp(tls_dir));
        snprintf(cmd, sizeof(cmd),
                 "(cd '%s' && "
                 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
                 "-keyout ca.key -out ca.pem -days 2 -subj /CN=pome-test-ca && "
                 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
                 "-keyout other.key -out other.pem -days 2 -subj /CN=another-ca && "
                 "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key "
                 "-out leaf.csr -subj /CN=api.github.com && "
                 "printf 'subjectAltName=DNS:api.github.com,DNS:slack.com,DNS:*.slack.com,"
                 "DNS:*.pome.test\\nbasicConstraints=CA:FALSE\\nkeyUsage=critical,"
                 "digitalSignature\\nextendedKeyUsage=serverAuth\\n' >leaf.ext && "
                 "openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
                 "-sha256 -extfile leaf.ext -out leaf.pem && cat leaf.pem ca.pem >chain.pem) 2>&1",
                 tls_dir);
        int st = run(cmd, out, sizeof(out));
        if (st != 0)
                fprintf(stderr, "making the test CA: %s\n", out);
        CHECK(st == 0);
        tls_chain = tls_file("chain.pem");
        tls_key = tls_file("leaf.key");
        client_ctx = SSL_CTX_new(TLS_client_method());
        CHECK(client_ctx);
        snprintf(cmd, sizeof(cmd), "%s/ca.pem", tls_dir);
        CHECK(client_ctx && SSL_CTX_load_verify_locations(client_ctx, cmd, NULL) == 1);
        tls_ok = st == 0 && tls_chain && tls_key && client_ctx;
}

static void tls_teardown(void)
{
        free(tls_chain);
        free(tls_key);
        SSL_CTX_free(client_ctx);
        if (tls_dir[0])
                (void)rm_rf_at(AT_FDCWD, tls_dir);
}

/*
 * A TLS client on port asking for sni (NULL: no server name), the certificate checked for
 * that name when verify. NULL when the handshake fails.
 */
static SSL *tls_dial(uint16_t port, const char *sni, bool verify, int *ret_fd)
{
        int fd = tcp_connect(port);
        SSL *ssl = SSL_new(client_ctx);
        CHECK(ssl);
        if (!ssl) {
                close(fd);
                return NULL;
        }
        SSL_set_fd(ssl, fd);
        if (sni)
                SSL_set_tlsext_host_name(ssl, sni);
        SSL_set_verify(ssl, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
        if (verify)
                SSL_set1_host(ssl, sni);
        if (SSL_connect(ssl) != 1) {
                ERR_clear_error();
                SSL_free(ssl);
                close(fd);
                return NULL;
        }
        *ret_fd = fd;
        return ssl;
}

static void tls_hangup(SSL *ssl, int fd)
{
        SSL_free(ssl);
        close(fd);
}

static bool tls_send(SSL *ssl, const void *buf, size_t len)
{
        const char *p = buf;
        while (len > 0) {
                size_t k;
                if (SSL_write_ex(ssl, p, len, &k) != 1) {
                        ERR_clear_error();
                        return false;
                }
                p += k;
                len -= k;
        }
        return true;
}

/* Sends the client's close_notify (its half-close). */
static bool tls_shut(SSL *ssl)
{
        bool ok = SSL_shutdown(ssl) >= 0;
        ERR_clear_error();
        return ok;
}

/*
 * Reads to the server's close_notify (true) or a failure (false: an EOF without
 * close_notify included), at most cap - 1 bytes kept, NUL-ended.
 */
static bool tls_read_to_end(SSL *ssl, char *buf, size_t cap, size_t *ret_len)
{
        size_t len = 0;
        bool clean;
        for (;;) {
                char tmp[16384];
                size_t k;
                if (SSL_read_ex(ssl, tmp, sizeof(tmp), &k) != 1) {
                        clean = SSL_get_error(ssl, 0) == SSL_ERROR_ZERO_RETURN;
                        ERR_clear_error();
                        break;
                }
                size_t keep = k < cap - 1 - len ? k : cap - 1 - len;
                memcpy(buf + len, tmp, keep);
                len += keep;
        }
        buf[len] = 0;
        *ret_len = len;
        return clean;
}

/* One HTTP request over TLS to the listener, asking for sni; the whole answer into buf. */
static bool tls_ask(const char *sni, bool verify, const char *req, char *buf, size_t cap)
{
        int fd;
        size_t len;
        SSL *ssl = tls_dial(tls_port, sni, verify, &fd);
        if (!ssl) {
                fprintf(stderr, "TLS handshake for %s failed\n", strempty(sni));
                return false;
        }
        bool ok = tls_send(ssl, req, strlen(req)) && tls_read_to_end(ssl, buf, cap, &len);
        tls_hangup(ssl, fd);
        return ok;
}

static json_int_t rec_int(const json_t *rec, const char *key)
{
        return json_integer_value(json_object_get(rec, key));
}

/* curl, as an agent's SDK would go: the vendor's name, resolved to the pod's listener. */
static void test_tls_curl(void)
{
        char cmd[1024], out[8192], head[8192], want[128];
        if (!have_curl) {
                fprintf(stderr, "skip: the curl cases: curl is not installed\n");
                return;
        }
        snprintf(cmd, sizeof(cmd),
                 "timeout 20 curl -sS --noproxy '*' --resolve api.github.com:%u:127.0.0.1 "
                 "--cacert %s/ca.pem -H 'Authorization: token ghp_test' -d hello "
                 "-w '\\n%%{http_version}' 'https://api.github.com:%u/repos/o/r/issues?state=open' "
                 "2>&1",
                 tls_port, tls_dir, tls_port);
        int st = run(cmd, out, sizeof(out));
        if (st != 0 || !streq(out, "len=5\n1.1"))
                fprintf(stderr, "curl: exit %d: %s\n", st, out);
        CHECK(st == 0 && streq(out, "len=5\n1.1")); /* HTTP/1.1 although curl offers h2 */
        http_head_copy(head, sizeof(head));
        snprintf(want, sizeof(want), "\r\nHost: api.github.com:%u\r\n", tls_port);
        CHECK(startswith(head, "POST /repos/o/r/issues?state=open HTTP/1.1\r\n"));
        CHECK(strstr(head, want) && strstr(head, "\r\nAuthorization: token ghp_test\r\n"));
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "tls", "api.github.com", http_srv.port, NULL, true, 0));
        CHECK(streq_ptr(json_get_str(rec, "label"), "github twin"));
        CHECK(!json_object_get(rec, "why"));
        CHECK(rec_int(rec, "bytes_up") == (json_int_t)strlen(head) + 5);
        CHECK(rec_int(rec, "bytes_down") ==
              (json_int_t)strlen("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: "
                                 "close\r\n\r\nlen=5"));

        /* a 3 MiB upload */
        snprintf(cmd, sizeof(cmd),
                 "head -c 3145728 /dev/zero | timeout 20 curl -sS --noproxy '*' --resolve "
                 "api.github.com:%u:127.0.0.1 --cacert %s/ca.pem -H 'Expect:' --data-binary @- "
                 "https://api.github.com:%u/upload 2>&1",
                 tls_port, tls_dir, tls_port);
        st = run(cmd, out, sizeof(out));
        CHECK(st == 0 && streq(out, "len=3145728"));
        if (st != 0 || !streq(out, "len=3145728"))
                fprintf(stderr, "curl upload: exit %d: %s\n", st, out);
}

/* openssl s_client: the server name picks the route, here the "slack" host. */
static void test_tls_s_client(void)
{
        char cmd[1024], out[8192], head[8192];
        snprintf(cmd, sizeof(cmd),
                 "printf 'GET /api/files.list HTTP/1.1\\r\\nHost: files.slack.com\\r\\n\\r\\n' | "
                 "timeout 20 openssl s_client -connect 127.0.0.1:%u -servername files.slack.com "
                 "-CAfile %s/ca.pem -verify_return_error -verify_hostname files.slack.com -quiet "
                 "2>&1",
                 tls_port, tls_dir);
        int st = run(cmd, out, sizeof(out));
        if (st != 0 || !endswith(out, "\r\n\r\nslack"))
                fprintf(stderr, "s_client: exit %d: %s\n", st, out);
        CHECK(st == 0 && endswith(out, "\r\n\r\nslack"));
        pthread_mutex_lock(&slack_lock);
        snprintf(head, sizeof(head), "%s", slack_head);
        pthread_mutex_unlock(&slack_lock);
        CHECK(streq(head, "GET /api/files.list HTTP/1.1\r\nHost: files.slack.com\r\n\r\n"));
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "tls", "files.slack.com", slack_srv.port, NULL, true, 0));
        CHECK(streq_ptr(json_get_str(rec, "label"), "slack twin"));
}

/* Routing by server name: suffixes, an exact name first, case, a trailing dot, a name host. */
static void test_tls_routes(void)
{
        char buf[4096];
        const char *get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        static const struct {
                const char *sni, *recorded;
                bool verify;
        } slack[] = {
                {"files.slack.com", "files.slack.com", true},
                {"FILES.Slack.COM.", "files.slack.com", false},
                {"a.b.slack.com", "a.b.slack.com", false}, /* the route, not the certificate */
        };
        for (size_t i = 0; i < ELEMENTSOF(slack); i++) {
                CHECK(tls_ask(slack[i].sni, slack[i].verify, get, buf, sizeof(buf)) &&
                      endswith(buf, "\r\n\r\nslack"));
                _cleanup_json_ json_t *rec = last_record();
                CHECK(rec_is(rec, "tls", slack[i].recorded, slack_srv.port, NULL, true, 0));
        }
        /* api.github.com goes to the other host */
        CHECK(tls_ask("api.github.com", true, "GET /user HTTP/1.1\r\nHost: api.github.com\r\n\r\n",
                      buf, sizeof(buf)) &&
              endswith(buf, "\r\n\r\nlen=0"));
        /* an exact name before the suffix listed ahead of it */
        int fd;
        size_t len;
        SSL *ssl = tls_dial(tls_port, "hooks.slack.com", true, &fd);
        CHECK(ssl);
        if (ssl) {
                CHECK(tls_send(ssl, "ping", 4) && tls_shut(ssl));
                CHECK(tls_read_to_end(ssl, buf, sizeof(buf), &len) && streq(buf, "ping"));
                tls_hangup(ssl, fd);
        }
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "tls", "hooks.slack.com", echo_srv.port, NULL, true, 0));
        CHECK(streq_ptr(json_get_str(rec, "label"), "webhooks"));
        /* a route whose host is a name, resolved on a thread */
        ssl = tls_dial(tls_port, "named.pome.test", true, &fd);
        CHECK(ssl);
        if (ssl) {
                CHECK(tls_send(ssl, "named", 5) && tls_shut(ssl));
                CHECK(tls_read_to_end(ssl, buf, sizeof(buf), &len) && streq(buf, "named"));
                tls_hangup(ssl, fd);
        }
        json_decref(rec);
        rec = last_record();
        CHECK(rec_is(rec, "tls", "named.pome.test", echo_srv.port, NULL, true, 0));
}

/* Refused handshakes, each recorded with the name asked for and why. */
static void test_tls_refused(void)
{
        char cmd[1024], out[8192];
        size_t before = refused();
        static const struct {
                const char *args, *said, *host, *why;
        } cases[] = {
                {"-servername slack.com", "unrecognized name", "slack.com", "no TLS route"},
                {"-servername evil.example.com", "unrecognized name", "evil.example.com",
                 "no TLS route"},
                {"-noservername", "unrecognized name", "(no SNI)", "no server name (SNI)"},
                {"-servername 127.0.0.1", "unrecognized name", "127.0.0.1", "not a host name"},
                {"-servername api.github.com -alpn h2", "no application protocol", "api.github.com",
                 "ALPN"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                snprintf(cmd, sizeof(cmd),
                         "timeout 20 openssl s_client -connect 127.0.0.1:%u %s -CAfile %s/ca.pem "
                         "</dev/null 2>&1",
                         tls_port, cases[i].args, tls_dir);
                int st = run(cmd, out, sizeof(out));
                if (st == 0 || !strstr(out, cases[i].said))
                        fprintf(stderr, "s_client %s: exit %d: %s\n", cases[i].args, st, out);
                CHECK(st != 0 && strstr(out, cases[i].said));
                _cleanup_json_ json_t *rec = last_record();
                CHECK(streq_ptr(json_get_str(rec, "via"), "tls") &&
                      streq_ptr(json_get_str(rec, "host"), cases[i].host) &&
                      json_is_false(json_object_get(rec, "allowed")) &&
                      strstr(strempty(json_get_str(rec, "why")), cases[i].why));
                /* a route was picked only for the h2 case: its port and label */
                bool routed = strstr(cases[i].args, "alpn") != NULL;
                CHECK(routed ? rec_int(rec, "port") == http_srv.port &&
                                       streq_ptr(json_get_str(rec, "label"), "github twin")
                             : !json_object_get(rec, "port") && !json_object_get(rec, "label"));
                CHECK(rec_int(rec, "bytes_up") == 0 && rec_int(rec, "bytes_down") == 0);
        }
        size_t n = ELEMENTSOF(cases);

        /* a client that trusts another CA says so with an alert, which is the why */
        if (have_curl) {
                snprintf(cmd, sizeof(cmd),
                         "timeout 20 curl -sS --noproxy '*' --resolve api.github.com:%u:127.0.0.1 "
                         "--cacert %s/other.pem https://api.github.com:%u/ 2>&1",
                         tls_port, tls_dir, tls_port);
                int st = run(cmd, out, sizeof(out));
                CHECK(st == 60); /* CURLE_PEER_FAILED_VERIFICATION */
                usleep(100000);  /* the alert may reach pome after curl's exit */
                _cleanup_json_ json_t *rec = last_record();
                CHECK(rec_is(rec, "tls", "api.github.com", http_srv.port, NULL, false, 0));
                if (!streq_ptr(json_get_str(rec, "why"), "TLS handshake: tlsv1 alert unknown ca"))
                        fprintf(stderr, "distrusting client: %s\n", json_get_str(rec, "why"));
                CHECK(streq_ptr(json_get_str(rec, "why"), "TLS handshake: tlsv1 alert unknown ca"));
                n++;
        }

        /* plain HTTP to the TLS port */
        int fd = tcp_connect(tls_port);
        size_t len;
        CHECK(send_str(fd, "GET / HTTP/1.1\r\nHost: api.github.com\r\n\r\n"));
        CHECK(read_to_eof(fd, out, sizeof(out), &len));
        close(fd);
        usleep(50000);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(streq_ptr(json_get_str(rec, "via"), "tls") && !json_object_get(rec, "host") &&
              json_is_false(json_object_get(rec, "allowed")) &&
              streq_ptr(json_get_str(rec, "why"), "TLS handshake: http request"));
        n++;
        CHECK(refused() == before + n);
}

typedef struct Duplex {
        uint64_t total, sent, got;
        bool ok;
} Duplex;

/*
 * total bytes of pattern each way at once over a non-blocking session (one thread: a
 * session is not to be used from two), the client's close_notify after the last byte, then
 * everything read to the server's close_notify and checked.
 */
static void tls_duplex(SSL *ssl, int fd, Duplex *d)
{
        char *out = malloc(65536), *in = malloc(65536);
        bool shut = false, end = false, failed = false;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        d->ok = true;
        CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
        while (!end && !failed && elapsed_s(t0) < 30) {
                short events = 0;
                bool moved = false;
                int e;
                if (d->sent < d->total) {
                        /* the same bytes again after a WANT_*: made from d->sent alone */
                        size_t n =
                                d->total - d->sent < 65536 ? (size_t)(d->total - d->sent) : 65536;
                        for (size_t i = 0; i < n; i++)
                                out[i] = (char)pattern(d->sent + i);
                        size_t k;
                        if (SSL_write_ex(ssl, out, n, &k) == 1) {
                                d->sent += k;
                                moved = true;
                        } else if ((e = SSL_get_error(ssl, 0)) == SSL_ERROR_WANT_READ)
                                events |= POLLIN;
                        else if (e == SSL_ERROR_WANT_WRITE)
                                events |= POLLOUT;
                        else
                                failed = true;
                } else if (!shut) {
                        if (SSL_shutdown(ssl) >= 0)
                                shut = moved = true;
                        else if ((e = SSL_get_error(ssl, -1)) == SSL_ERROR_WANT_WRITE)
                                events |= POLLOUT;
                        else
                                failed = true;
                }
                size_t k;
                if (SSL_read_ex(ssl, in, 65536, &k) == 1) {
                        for (size_t i = 0; i < k; i++)
                                if ((uint8_t)in[i] != pattern(d->got + i))
                                        d->ok = false;
                        d->got += k;
                        moved = true;
                } else if ((e = SSL_get_error(ssl, 0)) == SSL_ERROR_WANT_READ)
                        events |= POLLIN;
                else if (e == SSL_ERROR_WANT_WRITE)
                        events |= POLLOUT;
                else if (e == SSL_ERROR_ZERO_RETURN)
                        end = true;
                else
                        failed = true;
                ERR_clear_error();
                if (!moved && !end && !failed) {
                        struct pollfd p = {.fd = fd, .events = events ? events : POLLIN};
                        (void)poll(&p, 1, 1000);
                }
        }
        if (!end || failed)
                fprintf(stderr, "duplex: sent %" PRIu64 " got %" PRIu64 " end %d failed %d\n",
                        d->sent, d->got, end, failed);
        d->ok = d->ok && end && !failed;
        free(out);
        free(in);
}

/* 8 MiB each way at once through the echo host, TLS on the agent's side. */
static void test_tls_large(void)
{
        int fd;
        SSL *ssl = tls_dial(tls_port, "echo.pome.test", true, &fd);
        CHECK(ssl);
        if (!ssl)
                return;
        Duplex d = {.total = 8u << 20};
        tls_duplex(ssl, fd, &d);
        tls_hangup(ssl, fd);
        CHECK(d.ok && d.sent == d.total && d.got == d.total);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "tls", "echo.pome.test", echo_srv.port, NULL, true, 0));
        CHECK(rec_int(rec, "bytes_up") == (json_int_t)d.total &&
              rec_int(rec, "bytes_down") == (json_int_t)d.total);
}

typedef struct TlsWriter {
        SSL *ssl;
        uint64_t total;
        _Atomic uint64_t sent;
        bool ok;
} TlsWriter;

static void *tls_writer_thread(void *p)
{
        TlsWriter *w = p;
        char *buf = malloc(65536);
        w->ok = buf != NULL;
        for (uint64_t off = 0; w->ok && off < w->total;) {
                size_t n = w->total - off < 65536 ? (size_t)(w->total - off) : 65536;
                for (size_t i = 0; i < n; i++)
                        buf[i] = (char)pattern(off + i);
                w->ok = tls_send(w->ssl, buf, n);
                off += n;
                atomic_store(&w->sent, off);
        }
        free(buf);
        return NULL;
}

/*
 * Back-pressure through a session: a host that reads nothing stops the agent's TLS writes
 * after what the sockets, the session and one pipe hold, not the 32 MiB offered; once it
 * reads, every byte arrives in order.
 */
static void test_tls_backpressure(void)
{
        int fd;
        SSL *ssl = tls_dial(tls_port, "gated.pome.test", true, &fd);
        CHECK(ssl);
        if (!ssl)
                return;
        int small = 65536;
        CHECK(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
        TlsWriter w = {.ssl = ssl, .total = 32u << 20};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, tls_writer_thread, &w) == 0);
        uint64_t last = 0, stalled = 0;
        for (unsigned i = 0; i < 100 && stalled < 5; i++) {
                usleep(100000);
                uint64_t now = atomic_load(&w.sent);
                stalled = now == last ? stalled + 1 : 0;
                last = now;
        }
        fprintf(stderr, "TLS back-pressure: %" PRIu64 " bytes accepted before the writer stalled\n",
                last);
        CHECK(stalled >= 5 && last > 0 && last < (12u << 20));
        sem_post(&gate);
        pthread_join(t, NULL);
        CHECK(w.ok && atomic_load(&w.sent) == w.total);
        CHECK(tls_shut(ssl));
        sem_wait(&gated_done);
        CHECK(gated_ok && gated_bytes == w.total);
        char buf[64];
        size_t len;
        CHECK(tls_read_to_end(ssl, buf, sizeof(buf), &len) && len == 0);
        tls_hangup(ssl, fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_int(rec, "bytes_up") == (json_int_t)w.total);
}

/*
 * Half-closes, both orders: the agent's close_notify reaches the host as an EOF that still
 * gets an answer; the host's EOF reaches the agent as a close_notify, and the agent still
 * sends after it.
 */
static void test_tls_half_close(void)
{
        char buf[256], data[100000];
        size_t len;
        int fd;
        memset(data, 'x', sizeof(data));
        SSL *ssl = tls_dial(tls_port, "count.pome.test", true, &fd);
        CHECK(ssl);
        if (ssl) {
                CHECK(tls_send(ssl, data, 1000) && tls_shut(ssl));
                CHECK(tls_read_to_end(ssl, buf, sizeof(buf), &len) && streq(buf, "got 1000"));
                tls_hangup(ssl, fd);
                _cleanup_json_ json_t *rec = last_record();
                CHECK(rec_int(rec, "bytes_up") == 1000 && rec_int(rec, "bytes_down") == 8);
        }

        ssl = tls_dial(tls_port, "first.pome.test", true, &fd);
        CHECK(ssl);
        if (ssl) {
                CHECK(tls_read_to_end(ssl, buf, sizeof(buf), &len) && streq(buf, "first"));
                CHECK(tls_send(ssl, data, sizeof(data)) && tls_shut(ssl));
                sem_wait(&first_done);
                CHECK(first_bytes == sizeof(data));
                tls_hangup(ssl, fd);
                usleep(50000);
                _cleanup_json_ json_t *rec = last_record();
                CHECK(rec_int(rec, "bytes_up") == (json_int_t)sizeof(data) &&
                      rec_int(rec, "bytes_down") == 5);
        }
}

/* A client that never finishes its handshake is closed at the head deadline (HEAD_USEC). */
static void test_tls_handshake_deadline(void)
{
        char buf[8192];
        size_t len;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        int fd = tcp_connect(tls_port);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && len == 0);
        double dt = elapsed_s(t0);
        CHECK(dt > 0.9 && dt < 3.0);
        close(fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(streq_ptr(json_get_str(rec, "via"), "tls") && !json_object_get(rec, "host") &&
              json_is_false(json_object_get(rec, "allowed")) &&
              streq_ptr(json_get_str(rec, "why"), "no TLS handshake within 1000 ms"));

        /* a ClientHello (made in memory), then silence: recorded with the name it asked for */
        SSL *ssl = SSL_new(client_ctx);
        BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
        CHECK(ssl && rb && wb);
        SSL_set_bio(ssl, rb, wb);
        SSL_set_tlsext_host_name(ssl, "api.github.com");
        SSL_set_connect_state(ssl);
        CHECK(SSL_do_handshake(ssl) <= 0 && SSL_get_error(ssl, -1) == SSL_ERROR_WANT_READ);
        char *hello;
        long n = BIO_get_mem_data(wb, &hello);
        CHECK(n > 0);
        t0 = now_usec(CLOCK_MONOTONIC);
        fd = tcp_connect(tls_port);
        CHECK(send_all(fd, hello, (size_t)n));
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && len > 0); /* the server's flight */
        dt = elapsed_s(t0);
        CHECK(dt > 0.9 && dt < 3.0);
        close(fd);
        SSL_free(ssl);
        json_decref(rec);
        rec = last_record();
        CHECK(rec_is(rec, "tls", "api.github.com", http_srv.port, NULL, false, 0));
        CHECK(streq_ptr(json_get_str(rec, "why"), "no TLS handshake within 1000 ms"));
}

/* The route's host refuses: the handshake is done, then the agent's connection closes. */
static void test_tls_upstream_refused(void)
{
        int fd;
        char buf[64];
        size_t len;
        SSL *ssl = tls_dial(tls_port, "closed.pome.test", true, &fd);
        CHECK(ssl);
        if (!ssl)
                return;
        CHECK(!tls_read_to_end(ssl, buf, sizeof(buf), &len) && len == 0); /* no close_notify */
        tls_hangup(ssl, fd);
        _cleanup_json_ json_t *rec = last_record();
        CHECK(rec_is(rec, "tls", "closed.pome.test", closed_port, NULL, true, 0));
        CHECK(streq_ptr(json_get_str(rec, "label"), "closed twin"));
        CHECK(strstr(strempty(json_get_str(rec, "why")), "Connection refused"));
}

typedef struct TlsJob {
        unsigned i;
        bool ok;
} TlsJob;

static void *tls_job(void *p)
{
        TlsJob *j = p;
        char msg[32768], buf[40000];
        size_t len;
        int fd;
        int off = snprintf(msg, sizeof(msg), "client %u\n", j->i);
        for (size_t i = (size_t)off; i < sizeof(msg); i++)
                msg[i] = (char)('a' + (i + j->i) % 26);
        SSL *ssl = tls_dial(tls_port, "echo.pome.test", true, &fd);
        if (!ssl)
                return NULL;
        j->ok = tls_send(ssl, msg, sizeof(msg)) && tls_shut(ssl) &&
                tls_read_to_end(ssl, buf, sizeof(buf), &len) && len == sizeof(msg) &&
                memcmp(buf, msg, len) == 0;
        tls_hangup(ssl, fd);
        return NULL;
}

/* 50 clients at once, each its own handshake and echo. */
static void test_tls_concurrent(void)
{
        enum { N = 50 };
        pthread_t t[N];
        TlsJob jobs[N];
        size_t ok = 0;
        _cleanup_json_ json_t *before = report();
        for (unsigned i = 0; i < N; i++) {
                jobs[i] = (TlsJob){.i = i};
                CHECK(pthread_create(&t[i], NULL, tls_job, &jobs[i]) == 0);
        }
        for (unsigned i = 0; i < N; i++) {
                pthread_join(t[i], NULL);
                ok += jobs[i].ok;
        }
        CHECK(ok == N);
        _cleanup_json_ json_t *after = report();
        json_t *a = json_object_get(after, "connections");
        size_t first = json_array_size(json_object_get(before, "connections")), echoed = 0;
        for (size_t i = first; i < json_array_size(a); i++) {
                json_t *rec = json_array_get(a, i);
                if (rec_is(rec, "tls", "echo.pome.test", echo_srv.port, NULL, true, 0) &&
                    rec_int(rec, "bytes_up") == 32768 && rec_int(rec, "bytes_down") == 32768)
                        echoed++;
        }
        CHECK(echoed == N);
}

static void test_tls(void)
{
        if (!tls_ok)
                return;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        test_tls_curl();
        test_tls_s_client();
        test_tls_routes();
        test_tls_refused();
        test_tls_large();
        test_tls_backpressure();
        test_tls_half_close();
        test_tls_handshake_deadline();
        test_tls_upstream_refused();
        test_tls_concurrent();
        fprintf(stderr, "TLS cases: %.2f s\n", elapsed_s(t0));
}

static void test_report_shape(void)
{
        _cleanup_json_ json_t *r = report();
        if (getenv("AGENTNET_DUMP")) { /* to look at what a run records */
                json_dumpf(r, stderr, JSON_COMPACT);
                fputc('\n', stderr);
        }
        json_t *a = json_object_get(r, "connections");
        size_t allowed = 0, not_allowed = 0, i;
        json_t *rec;
        json_array_foreach (a, i, rec) {
                if (json_is_true(json_object_get(rec, "allowed")))
                        allowed++;
                else
                        not_allowed++;
                const char *at = json_get_str(rec, "at");
                CHECK(at && strlen(at) == 24 && at[23] == 'Z' && at[10] == 'T');
                CHECK(json_is_integer(json_object_get(rec, "bytes_up")) &&
                      json_is_integer(json_object_get(rec, "bytes_down")));
                const char *via = json_get_str(rec, "via");
                CHECK(streq_ptr(via, "forward") || streq_ptr(via, "proxy") ||
                      streq_ptr(via, "tls"));
        }
        CHECK(json_integer_value(json_object_get(r, "allowed")) == (json_int_t)allowed);
        CHECK(json_integer_value(json_object_get(r, "refused")) == (json_int_t)not_allowed);
        CHECK(json_integer_value(json_object_get(r, "dropped")) == 0);
        CHECK(refused() == not_allowed);
        CHECK(allowed > 10 && not_allowed > 20);
}

static void do_stop(void *arg _unused_)
{
        agent_net_stop(net);
}

/* stop closes open tunnels and the listeners; the records stay. */
static void test_stop(void)
{
        char buf[256];
        size_t len;
        int fd = tcp_connect(fwd_echo);
        CHECK(send_str(fd, "x"));
        CHECK(read_exact(fd, buf, 1));
        int silent = tcp_connect(proxy_ips);
        int silent_tls = tls_ok ? tcp_connect(tls_port) : -1;
        usleep(50000);
        _cleanup_json_ json_t *before = report();
        on_loop(do_stop, NULL);
        CHECK(read_to_eof(fd, buf, sizeof(buf), &len) && len == 0);
        CHECK(read_to_eof(silent, buf, sizeof(buf), &len) && len == 0);
        if (silent_tls >= 0) {
                CHECK(read_to_eof(silent_tls, buf, sizeof(buf), &len) && len == 0);
                close(silent_tls);
        }
        close(fd);
        close(silent);
        _cleanup_json_ json_t *after = report();
        json_t *recs = json_object_get(after, "connections");
        size_t nb = json_array_size(json_object_get(before, "connections"));
        size_t na = json_array_size(recs);
        /* the silent clients, recorded at stop */
        CHECK(na == nb + 1 + (silent_tls >= 0));
        for (size_t i = nb; i < na; i++) {
                json_t *rec = json_array_get(recs, i);
                bool tls = streq_ptr(json_get_str(rec, "via"), "tls");
                CHECK(strstr(strempty(json_get_str(rec, "why")),
                             tls ? "ended before a TLS handshake" : "ended before a request head"));
        }
        json_t *tunnel = json_array_get(recs, nb - 1);
        CHECK(rec_is(tunnel, "forward", "127.0.0.1", echo_srv.port, NULL, true, 0));
        CHECK(json_integer_value(json_object_get(tunnel, "bytes_down")) == 1);
        /* the listeners are closed */
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(proxy_ips),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        CHECK(connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == ECONNREFUSED);
        close(c);
        if (tls_ok) {
                c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                a.sin_port = htons(tls_port);
                CHECK(connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == ECONNREFUSED);
                close(c);
        }
}

static int done_fd = -1;

static void *client(void *arg _unused_)
{
        test_forward_echo();
        test_forward_half_close();
        test_forward_large();
        test_forward_backpressure();
        test_forward_early_answer();
        test_forward_refused();
        test_connect_tunnel();
        test_connect_name();
        test_connect_refused();
        test_raw_ip();
        test_suffix();
        test_connect_closed_port();
        test_connect_deadline();
        test_concurrent_names();
        test_absolute_form();
        test_bad_requests();
        test_oversize_head();
        test_head_deadline();
        test_many_connections();
        test_tls();
        test_report_shape();
        test_stop();
        uint64_t one = 1;
        (void)!write(done_fd, &one, sizeof(one));
        return NULL;
}

static int on_done(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                   void *userdata _unused_)
{
        return sd_event_exit(loop, 0);
}

/* ---- allow-list validation (no loop needed) ---- */

static int try_proxy(const char *entry, char *err, size_t len)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        char *allow[] = {(char *)"api.example.com", (char *)entry, NULL};
        err[0] = 0;
        int r = agent_net_proxy(net, fd, allow, err, len);
        if (r < 0) /* the fd is taken either way: closed on an error */
                CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
        return r;
}

static int try_tls(const AgentNetRoute *routes, size_t n, const char *cert, const char *key,
                   char *err, size_t len)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        err[0] = 0;
        int r = agent_net_tls(net, fd, cert, key, routes, n, err, len);
        if (r < 0) /* taken either way */
                CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
        return r;
}

/* TLS routes, certificates and keys. */
static void test_tls_validation(void)
{
        char err[256];
        if (!tls_ok)
                return;
        static const struct {
                AgentNetRoute route;
                const char *why;
        } bad[] = {
                {{"", "127.0.0.1", 443, NULL}, "no host"},
                {{NULL, "127.0.0.1", 443, NULL}, "no host"},
                {{"*", "127.0.0.1", 443, NULL}, "'*'"},
                {{"*.", "127.0.0.1", 443, NULL}, "no host"},
                {{"a.*.example.com", "127.0.0.1", 443, NULL}, "'*'"},
                {{"api.github.com:443", "127.0.0.1", 443, NULL}, "host name alone"},
                {{"https://api.github.com", "127.0.0.1", 443, NULL}, "host name alone"},
                {{"127.0.0.1", "127.0.0.1", 443, NULL}, "an address"},
                {{"*.127.0.0.1", "127.0.0.1", 443, NULL}, "an address"},
                {{"a..b", "127.0.0.1", 443, NULL}, "empty label"},
                {{"api.github.com", "not a host!", 443, NULL}, "neither an address"},
                {{"api.github.com", NULL, 443, NULL}, "neither an address"},
                {{"api.github.com", "127.0.0.1", 0, NULL}, "port is 0"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = try_tls(&bad[i].route, 1, tls_chain, tls_key, err, sizeof(err));
                if (r != -EINVAL || !startswith(err, "TLS route \"") || !strstr(err, bad[i].why))
                        fprintf(stderr, "route \"%s\": r=%d err=%s\n", strempty(bad[i].route.name),
                                r, err);
                CHECK(r == -EINVAL && startswith(err, "TLS route \"") && strstr(err, bad[i].why));
        }
        AgentNetRoute ok[] = {{"api.github.com", "127.0.0.1", 443, "github"},
                              {"*.Slack.COM.", "localhost", 443, NULL},
                              {"x", "::1", 1, NULL}};
        CHECK(try_tls(ok, ELEMENTSOF(ok), tls_chain, tls_key, err, sizeof(err)) == 0);
        CHECK(try_tls(NULL, 0, tls_chain, tls_key, err, sizeof(err)) == 0); /* refuses all */
        CHECK(try_tls(ok, 1, "not PEM", tls_key, err, sizeof(err)) == -EINVAL &&
              startswith(err, "TLS certificate: "));
        CHECK(try_tls(ok, 1, tls_chain, "", err, sizeof(err)) == -EINVAL &&
              startswith(err, "TLS key: "));
        /* the CA's key is not the leaf's */
        _cleanup_free_ char *ca_key = tls_file("ca.key");
        CHECK(try_tls(ok, 1, tls_chain, ca_key, err, sizeof(err)) == -EINVAL &&
              startswith(err, "TLS key: "));
        fprintf(stderr, "a wrong key: %s\n", err);
        /* a chain with garbage after the certificates */
        char *bad_chain = malloc(strlen(tls_chain) + 64);
        sprintf(bad_chain, "%s-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                tls_chain);
        CHECK(try_tls(ok, 1, bad_chain, tls_key, err, sizeof(err)) == -EINVAL &&
              startswith(err, "TLS certificate chain: "));
        free(bad_chain);
}

static void test_validation(void)
{
        char err[256];
        const char *good[] = {"api.anthropic.com",
                              "*.example.com",
                              "*.example.com:443",
                              "LocalHost.",
                              "127.0.0.1",
                              "127.0.0.1:8080",
                              "[::1]",
                              "[::1]:443",
                              "under_score.example",
                              "xn--bcher-kva.example"};
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                int r = try_proxy(good[i], err, sizeof(err));
                if (r < 0)
                        fprintf(stderr, "refused %s: %s\n", good[i], err);
                CHECK(r == 0);
        }
        static const struct {
                const char *entry, *why;
        } bad[] = {
                {"", "no host"},
                {"*", "'*'"},
                {"*.", "no host"},
                {"a*b.example.com", "'*'"},
                {"*.127.0.0.1", "takes a domain name"},
                {"*.[::1]", "takes a domain name"},
                {"::1", "brackets"},
                {"[::1", "[IPv6]"},
                {"[1.2.3.4]", "IPv6"},
                {"http://api.example.com", "URL"},
                {"api.example.com/v1", "URL"},
                {"a..b", "empty label"},
                {".example.com", "empty label"},
                {"host:0", "port"},
                {"host:65536", "port"},
                {"host:", "port"},
                {"host:http", "port"},
                {"exa mple.com", "not a host name"},
                {"127.1", "numeric"},
                {"2130706433", "numeric"},
                {"0x7f000001", "numeric"},
                {"user@host", "user information"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = try_proxy(bad[i].entry, err, sizeof(err));
                char want[64];
                snprintf(want, sizeof(want), "\"%s\": ", bad[i].entry);
                if (r != -EINVAL || !strstr(err, want) || !strstr(err, bad[i].why))
                        fprintf(stderr, "entry \"%s\": r=%d err=%s\n", bad[i].entry, r, err);
                CHECK(r == -EINVAL && strstr(err, want) && strstr(err, bad[i].why));
        }
        /* forwards: a port and a host */
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(agent_net_forward(net, fd, "127.0.0.1", 0, NULL) == -EINVAL);
        CHECK(fcntl(fd, F_GETFD) < 0);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(agent_net_forward(net, fd, "not a host!", 80, NULL) == -EINVAL);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(agent_net_forward(net, fd, "::1", 80, "v6") == 0);
        test_tls_validation();
        /* the validation proxies and this forward are not used again: stop them */
        agent_net_stop(net);
}

/* ---- --serve: a proxy alone, for the integration test ---- */

static int on_term(sd_event_source *s _unused_, const struct signalfd_siginfo *si _unused_,
                   void *userdata _unused_)
{
        return sd_event_exit(loop, 0);
}

/*
 * --serve ALLOW… [--tls CHAIN.pem KEY.pem NAME=HOST:PORT[=LABEL]…]: the proxy and, with
 * --tls, a TLS listener; prints the proxy's port and the TLS listener's, a line each.
 */
static int serve(char **args)
{
        char err[256] = "";
        uint16_t port, tport = 0;
        char **allow = args, **tls = NULL;
        for (char **a = args; *a; a++)
                if (streq(*a, "--tls")) {
                        *a = NULL;
                        tls = a + 1;
                        break;
                }
        int fd = listen_on(&port, 0, true);
        CHECK_OK(agent_net_new(loop, &net));
        int r = agent_net_proxy(net, fd, allow, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "agent_net_proxy: %s\n", err);
                return 2;
        }
        if (tls) {
                AgentNetRoute routes[32];
                size_t n = 0;
                _cleanup_free_ char *chain = NULL, *key = NULL;
                if (!tls[0] || !tls[1] ||
                    read_file_at(AT_FDCWD, tls[0], 1 << 20, &chain, NULL) < 0 ||
                    read_file_at(AT_FDCWD, tls[1], 1 << 20, &key, NULL) < 0) {
                        fprintf(stderr, "--tls CHAIN.pem KEY.pem: cannot read them\n");
                        return 2;
                }
                for (char **a = tls + 2; *a && n < ELEMENTSOF(routes); a++) {
                        /* NAME=HOST:PORT[=LABEL] */
                        char *host = strchr(*a, '='), *colon, *label;
                        if (!host || !(colon = strrchr(host, ':'))) {
                                fprintf(stderr, "a route is NAME=HOST:PORT[=LABEL]: %s\n", *a);
                                return 2;
                        }
                        *host++ = 0;
                        *colon++ = 0;
                        label = strchr(colon, '=');
                        if (label)
                                *label++ = 0;
                        routes[n++] = (AgentNetRoute){*a, host, (uint16_t)atoi(colon), label};
                }
                fd = listen_on(&tport, 0, true);
                r = agent_net_tls(net, fd, chain, key, routes, n, err, sizeof(err));
                if (r < 0) {
                        fprintf(stderr, "agent_net_tls: %s\n", err);
                        return 2;
                }
        }
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        CHECK_OK(sd_event_add_signal(loop, NULL, SIGTERM, on_term, NULL));
        CHECK_OK(sd_event_add_signal(loop, NULL, SIGINT, on_term, NULL));
        printf("%u\n", port);
        if (tport)
                printf("%u\n", tport);
        fflush(stdout);
        CHECK_OK(sd_event_loop(loop));
        agent_net_stop(net);
        _cleanup_json_ json_t *rep = agent_net_report(net);
        char *s = json_dumps(rep, JSON_COMPACT);
        printf("%s\n", s ? s : "null");
        free(s);
        net = agent_net_free(net);
        sd_event_unref(loop);
        return check_finish();
}

int main(int argc, char **argv)
{
        signal(SIGPIPE, SIG_IGN);
        CHECK_OK(sd_event_default(&loop));
        if (argc > 1 && streq(argv[1], "--serve"))
                return serve(argv + 2);

        CHECK_OK(agent_net_new(loop, &net));
        if (!net)
                return check_finish();
        tls_setup();
        test_validation();
        agent_net_set_deadlines(net, HEAD_USEC, CONNECT_USEC);

        sem_init(&gate, 0, 0);
        sem_init(&gated_done, 0, 0);
        sem_init(&first_done, 0, 0);
        sem_init(&call_done, 0, 0);
        server_start(&echo_srv, serve_echo, 0);
        server_start(&count_srv, serve_count, 0);
        server_start(&gated_srv, serve_gated, 65536);
        server_start(&http_srv, serve_http, 0);
        server_start(&early_srv, serve_early, 0);
        server_start(&slack_srv, serve_slack, 0);
        server_start(&first_srv, serve_first, 0);
        int closed = listen_on(&closed_port, 0, false);
        close(closed);
        /* the tarpit: backlog 0 holds one connection; with two made, the next SYN is dropped */
        int tarpit = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in ta = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t tlen = sizeof(ta);
        CHECK(bind(tarpit, (struct sockaddr *)&ta, sizeof(ta)) == 0 && listen(tarpit, 0) == 0);
        CHECK(getsockname(tarpit, (struct sockaddr *)&ta, &tlen) == 0);
        tarpit_port = ntohs(ta.sin_port);
        int fill[2];
        for (size_t i = 0; i < 2; i++) {
                fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                (void)connect(fill[i], (struct sockaddr *)&ta, sizeof(ta));
        }
        usleep(50000);

        /* the pod's listening sockets; the gated forward's keeps a small receive buffer */
        int fd = listen_on(&fwd_echo, 0, true);
        CHECK_OK(agent_net_forward(net, fd, "127.0.0.1", echo_srv.port, "echo twin"));
        fd = listen_on(&fwd_count, 0, true);
        CHECK_OK(agent_net_forward(net, fd, "127.0.0.1", count_srv.port, NULL));
        fd = listen_on(&fwd_gated, 65536, true);
        CHECK_OK(agent_net_forward(net, fd, "127.0.0.1", gated_srv.port, NULL));
        fd = listen_on(&fwd_early, 0, true);
        CHECK_OK(agent_net_forward(net, fd, "127.0.0.1", early_srv.port, NULL));
        fd = listen_on(&fwd_closed, 0, false); /* made non-blocking by the module */
        CHECK_OK(agent_net_forward(net, fd, "127.0.0.1", closed_port, NULL));

        char echo_entry[64], http_entry[64], closed_entry[64], tarpit_entry[64], err[256];
        snprintf(echo_entry, sizeof(echo_entry), "127.0.0.1:%u", echo_srv.port);
        snprintf(http_entry, sizeof(http_entry), "127.0.0.1:%u", http_srv.port);
        snprintf(closed_entry, sizeof(closed_entry), "127.0.0.1:%u", closed_port);
        snprintf(tarpit_entry, sizeof(tarpit_entry), "127.0.0.1:%u", tarpit_port);
        char *ips[] = {echo_entry, http_entry, closed_entry, tarpit_entry, (char *)"*.example.test",
                       NULL};
        fd = listen_on(&proxy_ips, 0, true);
        CHECK_OK(agent_net_proxy(net, fd, ips, err, sizeof(err)));
        char *names[] = {(char *)"localhost", (char *)"*.example.test", NULL};
        fd = listen_on(&proxy_names, 0, true);
        CHECK_OK(agent_net_proxy(net, fd, names, err, sizeof(err)));
        fd = listen_on(&proxy_none, 0, true);
        CHECK_OK(agent_net_proxy(net, fd, NULL, err, sizeof(err)));

        /* TLS: "*.slack.com" listed before the exact hooks.slack.com, which still wins; the
         * small receive buffer makes back-pressure show early, as the gated forward's */
        const AgentNetRoute routes[] = {
                {"api.github.com", "127.0.0.1", http_srv.port, "github twin"},
                {"*.slack.com", "127.0.0.1", slack_srv.port, "slack twin"},
                {"hooks.slack.com", "127.0.0.1", echo_srv.port, "webhooks"},
                {"echo.pome.test", "127.0.0.1", echo_srv.port, NULL},
                {"count.pome.test", "127.0.0.1", count_srv.port, NULL},
                {"gated.pome.test", "127.0.0.1", gated_srv.port, NULL},
                {"first.pome.test", "127.0.0.1", first_srv.port, NULL},
                {"closed.pome.test", "127.0.0.1", closed_port, "closed twin"},
                {"named.pome.test", "localhost", echo_srv.port, NULL},
        };
        if (tls_ok) {
                fd = listen_on(&tls_port, 65536, true);
                int r = agent_net_tls(net, fd, tls_chain, tls_key, routes, ELEMENTSOF(routes), err,
                                      sizeof(err));
                if (r < 0)
                        fprintf(stderr, "agent_net_tls: %s\n", err);
                CHECK_OK(r);
        }

        CHECK(pipe2(call_pipe, O_CLOEXEC) == 0);
        CHECK_OK(sd_event_add_io(loop, NULL, call_pipe[0], EPOLLIN, on_call, NULL));
        done_fd = eventfd(0, EFD_CLOEXEC);
        CHECK_OK(sd_event_add_io(loop, NULL, done_fd, EPOLLIN, on_done, NULL));
        pthread_t t;
        CHECK(pthread_create(&t, NULL, client, NULL) == 0);
        CHECK_OK(sd_event_loop(loop));
        pthread_join(t, NULL);

        net = agent_net_free(net);
        tls_teardown();
        close(fill[0]);
        close(fill[1]);
        close(tarpit);
        close(done_fd);
        close(call_pipe[0]);
        close(call_pipe[1]);
        sd_event_unref(loop);
        return check_finish();
}
