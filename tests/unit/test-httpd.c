/* SPDX-License-Identifier: MIT */
/*
 * The HTTP layer over real sockets: streamed replies (known size, chunked, failing,
 * from a suspended request, HTTP/1.0), the layer's own refusals (default envelope
 * and a surface's hook; none reaches the handler), the header and body deadlines
 * (a suspended request is never cut), draining and the 503 of httpd_free.
 * The server runs on this thread's sd-event loop; a client thread speaks raw HTTP.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>

#include "common/httpd.h"
#include "common/json-util.h"
#include "common/util.h"
#include "tests/unit/check.h"

static sd_event *loop;
static Httpd *srv;      /* no refusal hook, max_body 1024 */
static Httpd *srv_hook; /* with a hook */
static uint16_t port, port_hook;
static unsigned handled; /* handler calls */
static unsigned streams_freed;
static char hook_path[64] = "", hook_host[64] = "", hook_code[32] = "";
static int hook_status;

/* ---- server side ---- */

typedef struct Pattern {
        uint64_t size;    /* bytes to produce */
        uint64_t fail_at; /* UINT64_MAX = never */
        size_t piece;     /* at most this many bytes per call */
} Pattern;

static ssize_t pattern_read(void *userdata, uint64_t pos, char *buf, size_t max)
{
        Pattern *p = userdata;
        if (pos >= p->fail_at)
                return -EIO;
        if (pos >= p->size)
                return 0;
        size_t n = max < p->piece ? max : p->piece;
        if (n > p->size - pos)
                n = (size_t)(p->size - pos);
        for (size_t i = 0; i < n; i++)
                buf[i] = (char)('a' + (pos + i) % 26);
        return (ssize_t)n;
}

static void pattern_free(void *userdata)
{
        streams_freed++;
        free(userdata);
}

static int stream(HttpRequest *rq, uint64_t size, uint64_t declared, uint64_t fail_at)
{
        Pattern *p = malloc(sizeof(*p));
        if (!p)
                return -ENOMEM;
        *p = (Pattern){.size = size, .fail_at = fail_at, .piece = 1000};
        _cleanup_json_ json_t *h = json_pack("{s:s}", "Content-Type", "text/plain");
        int r = http_reply_stream(rq, 200, h, declared, pattern_read, pattern_free, p);
        if (r < 0)
                free(p);
        return r;
}

static int on_later(sd_event_source *s, uint64_t usec _unused_, void *userdata)
{
        HttpRequest *rq = userdata;
        if (streq(http_request_path(rq), "/async-stream"))
                CHECK_OK(stream(rq, 70000, 70000, UINT64_MAX));
        else
                CHECK_OK(http_reply(rq, 200, NULL, "late", 4));
        sd_event_source_disable_unref(s);
        return 0;
}

static int on_free_hook_server(sd_event_source *s, uint64_t usec _unused_, void *userdata _unused_)
{
        srv_hook = httpd_free(srv_hook); /* answers the waiting request with 503 */
        sd_event_source_disable_unref(s);
        return 0;
}

static void later(HttpRequest *rq, uint64_t usec, sd_event_time_handler_t cb)
{
        uint64_t now;
        sd_event_now(loop, CLOCK_MONOTONIC, &now);
        CHECK_OK(sd_event_add_time(loop, NULL, CLOCK_MONOTONIC, now + usec, 1, cb, rq));
}

static void handler(HttpRequest *rq, void *userdata)
{
        Httpd **self = userdata;
        const char *path = http_request_path(rq);
        handled++;
        if (streq(path, "/stream"))
                CHECK_OK(stream(rq, 100000, 100000, UINT64_MAX));
        else if (streq(path, "/big-stream")) /* many turns of the loop: throttled between */
                CHECK_OK(stream(rq, 3000000, 3000000, UINT64_MAX));
        else if (streq(path, "/big-chunked"))
                CHECK_OK(stream(rq, 2000000, UINT64_MAX, UINT64_MAX));
        else if (streq(path, "/chunked"))
                CHECK_OK(stream(rq, 5000, UINT64_MAX, UINT64_MAX));
        else if (streq(path, "/empty-stream"))
                CHECK_OK(stream(rq, 0, 0, UINT64_MAX));
        else if (streq(path, "/fail"))
                CHECK_OK(stream(rq, 100000, 100000, 50000));
        else if (streq(path, "/short"))
                CHECK_OK(stream(rq, 10, 100000, UINT64_MAX)); /* ends early: truncated */
        else if (streq(path, "/async-stream") || streq(path, "/slow"))
                later(rq, streq(path, "/slow") ? 600 * USEC_PER_MSEC : 50 * USEC_PER_MSEC,
                      on_later); /* suspended meanwhile */
        else if (streq(path, "/hang"))
                later(rq, 100 * USEC_PER_MSEC, on_free_hook_server);
        else if (streq(path, "/drain")) {
                httpd_drain(*self);
                CHECK(http_reply(rq, 200, NULL, "drained", 7) == 0);
        } else if (streq(path, "/echo")) {
                size_t len;
                const char *b = http_request_body(rq, &len);
                CHECK(http_reply(rq, 200, NULL, b, len) == 0);
                CHECK(http_reply(rq, 200, NULL, b, len) == -EALREADY);
        } else {
                _cleanup_json_ json_t *h = json_pack("{s:s}", "Content-Type", "text/plain");
                CHECK(http_reply(rq, 200, h, "ok", 2) == 0);
        }
}

static void refuse_hook(const char *path, const char *host, int status, const char *code,
                        const char *message, HttpRefusal *ret, void *userdata _unused_)
{
        snprintf(hook_path, sizeof(hook_path), "%s", path ? path : "(null)");
        snprintf(hook_host, sizeof(hook_host), "%s", host ? host : "(null)");
        snprintf(hook_code, sizeof(hook_code), "%s", code);
        hook_status = status;
        CHECK(message && *message);
        ret->body = json_pack("{s:s}", "x", code);
        ret->headers = json_pack("{s:s, s:s}", "X-Hook", "1", "Content-Length", "999");
}

/* ---- client side (its own thread) ---- */

static int client_connect(uint16_t p, const char *from)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -1;
        struct timeval tv = {.tv_sec = 3};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(p)};
        if (from) {
                struct sockaddr_in b = {.sin_family = AF_INET};
                inet_pton(AF_INET, from, &b.sin_addr);
                (void)bind(fd, (struct sockaddr *)&b, sizeof(b));
        }
        inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

typedef struct Resp {
        char *raw; /* everything read, NUL-terminated */
        size_t len;
        bool eof; /* the server closed */
        int status;
        char *body; /* points into raw */
        size_t body_len;
} Resp;

static void resp_done(Resp *r)
{
        free(r->raw);
        *r = (Resp){};
}

static void resp_parse(Resp *r)
{
        if (r->len >= 12 && startswith(r->raw, "HTTP/1.1 "))
                r->status = atoi(r->raw + 9);
        char *e = strstr(r->raw, "\r\n\r\n");
        r->body = e ? e + 4 : r->raw + r->len;
        r->body_len = (size_t)(r->raw + r->len - r->body);
}

/* Reads until the server closes (or 3 s pass). */
static void read_all(int fd, Resp *r)
{
        size_t cap = 4096;
        r->raw = malloc(cap);
        r->len = 0;
        for (;;) {
                if (r->len + 4096 + 1 > cap)
                        r->raw = realloc(r->raw, cap *= 2);
                ssize_t n = recv(fd, r->raw + r->len, cap - r->len - 1, 0);
                if (n <= 0) {
                        r->eof = n == 0 || errno == ECONNRESET;
                        break;
                }
                r->len += (size_t)n;
        }
        r->raw[r->len] = 0;
        resp_parse(r);
}

/* Reads one response framed by Content-Length (keep-alive). */
static void read_one(int fd, Resp *r)
{
        size_t cap = 65536;
        r->raw = malloc(cap);
        r->len = 0;
        for (;;) {
                r->raw[r->len] = 0;
                char *e = strstr(r->raw, "\r\n\r\n");
                if (e) {
                        char *cl = strcasestr(r->raw, "\r\nContent-Length: ");
                        size_t want =
                                (size_t)(e + 4 - r->raw) + (cl ? strtoul(cl + 18, NULL, 10) : 0);
                        if (r->len >= want)
                                break;
                }
                if (r->len + 4096 + 1 > cap)
                        r->raw = realloc(r->raw, cap *= 2);
                ssize_t n = recv(fd, r->raw + r->len, cap - r->len - 1, 0);
                if (n <= 0) {
                        r->eof = true;
                        break;
                }
                r->len += (size_t)n;
        }
        r->raw[r->len] = 0;
        resp_parse(r);
}

static void request(uint16_t p, const char *req, size_t len, Resp *r)
{
        int fd = client_connect(p, NULL);
        CHECK(fd >= 0);
        if (fd < 0)
                return;
        CHECK((size_t)send(fd, req, len, MSG_NOSIGNAL) == len);
        read_all(fd, r);
        close(fd);
}
#define REQ(p, s, r) request(p, s, sizeof(s) - 1, r)

static bool has_header(const Resp *r, const char *line)
{
        char *e = strstr(r->raw, "\r\n\r\n");
        char *h = strcasestr(r->raw, line);
        return h && (!e || h < e);
}

static bool pattern_ok(const char *b, size_t len, uint64_t from)
{
        for (size_t i = 0; i < len; i++)
                if (b[i] != (char)('a' + (from + i) % 26))
                        return false;
        return true;
}

/* Decodes a chunked body in place; returns its length or -1. */
static ssize_t dechunk(char *b, size_t len)
{
        char *in = b, *out = b, *end = b + len;
        for (;;) {
                char *nl = memmem(in, (size_t)(end - in), "\r\n", 2);
                if (!nl)
                        return -1;
                unsigned long n = strtoul(in, NULL, 16);
                in = nl + 2;
                if (n == 0)
                        return out - b;
                if ((size_t)(end - in) < n + 2)
                        return -1;
                memmove(out, in, n);
                out += n;
                in += n + 2;
        }
}

static void test_streams(void)
{
        Resp r = {};
        REQ(port, "GET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        CHECK(r.status == 200);
        CHECK(has_header(&r, "\r\nContent-Length: 100000\r\n"));
        CHECK(has_header(&r, "\r\nContent-Type: text/plain\r\n"));
        CHECK(r.body_len == 100000 && pattern_ok(r.body, r.body_len, 0));
        resp_done(&r);

        REQ(port, "GET /chunked HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        CHECK(r.status == 200);
        CHECK(has_header(&r, "\r\nTransfer-Encoding: chunked\r\n"));
        ssize_t n = dechunk(r.body, r.body_len);
        CHECK(n == 5000 && pattern_ok(r.body, (size_t)n, 0));
        resp_done(&r);

        /* bodies of many turns' budget: sent a share per turn, whole and in order */
        REQ(port, "GET /big-stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        CHECK(r.status == 200 && has_header(&r, "\r\nContent-Length: 3000000\r\n"));
        CHECK(r.body_len == 3000000 && pattern_ok(r.body, r.body_len, 0));
        resp_done(&r);
        REQ(port, "GET /big-chunked HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        n = dechunk(r.body, r.body_len);
        CHECK(r.status == 200 && n == 2000000 && pattern_ok(r.body, (size_t)n, 0));
        resp_done(&r);

        /* HTTP/1.0 has no chunked coding: the body ends with the connection. */
        REQ(port, "GET /chunked HTTP/1.0\r\n\r\n", &r);
        CHECK(r.status == 200 && r.eof);
        CHECK(!has_header(&r, "Transfer-Encoding"));
        CHECK(r.body_len == 5000 && pattern_ok(r.body, r.body_len, 0));
        resp_done(&r);

        REQ(port, "GET /empty-stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        CHECK(r.status == 200 && r.body_len == 0);
        CHECK(has_header(&r, "\r\nContent-Length: 0\r\n"));
        resp_done(&r);

        /* A read error mid-body closes the connection: the client sees a short body. */
        REQ(port, "GET /fail HTTP/1.1\r\nHost: a\r\n\r\n", &r);
        CHECK(r.status == 200 && r.eof);
        CHECK(r.body_len < 100000 && pattern_ok(r.body, r.body_len, 0));
        resp_done(&r);
        REQ(port, "GET /short HTTP/1.1\r\nHost: a\r\n\r\n", &r);
        CHECK(r.status == 200 && r.eof && r.body_len == 10);
        resp_done(&r);

        /* From a suspended request; HEAD gets the length and no body. */
        REQ(port, "GET /async-stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        CHECK(r.status == 200 && r.body_len == 70000 && pattern_ok(r.body, r.body_len, 0));
        resp_done(&r);
        REQ(port, "HEAD /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        CHECK(r.status == 200 && r.body_len == 0);
        CHECK(has_header(&r, "\r\nContent-Length: 100000\r\n"));
        resp_done(&r);

        /* Two streams on one kept-alive connection. */
        int fd = client_connect(port, NULL);
        static const char two[] = "GET /stream HTTP/1.1\r\nHost: a\r\n\r\n";
        for (int i = 0; i < 2; i++) {
                CHECK(send(fd, two, strlen(two), MSG_NOSIGNAL) == (ssize_t)strlen(two));
                read_one(fd, &r);
                CHECK(r.status == 200 && r.body_len == 100000 && !r.eof);
                resp_done(&r);
        }
        close(fd);
}

static void test_refusals(void)
{
        Resp r = {};
        unsigned before = handled;
        /* repeated Content-Length on a kept-alive connection after a good request: the
         * smuggled request behind it must never be served */
        REQ(port,
            "GET /ok HTTP/1.1\r\nHost: a\r\n\r\n"
            "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"
            "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
            &r);
        CHECK(r.status == 200 && r.eof);
        char *second = strstr(r.body, "HTTP/1.1 ");
        CHECK(second && startswith(second, "HTTP/1.1 400 Bad Request\r\n"));
        CHECK(second && strstr(second, "\r\nConnection: close\r\n"));
        CHECK(second && strstr(second, "{\"error\":{\"type\":\"bad_request\",\"message\":"));
        CHECK(!strstr(r.raw, "smuggled") && handled == before + 1);
        resp_done(&r);

        static const struct {
                const char *req;
                int status;
        } cases[] = {
                {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n"
                 "0\r\n\r\n",
                 400},
                {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\nabc", 400},
                {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n0\r\n\r\n",
                 400},
                {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
                {"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", 400},
                {"GET / HTTP/1.1\r\nHost: a\r\nBad\x7fName: x\r\n\r\n", 400},
                {"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n", 400},
                {"GET / HTTP/1.1\r\nHost: a\r\nX: a\rz\r\n\r\n", 400},
                {"GET / HTTP/1.1\r\nHost: a\r\nX: a\n\r\n", 400},
                {"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n folded\r\n\r\n", 400},
                {"GET /\x80 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
                {"GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", 400},
                {"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
                {"GET / HTTP/1.1\r\n\r\n", 400},
                {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
                {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1025\r\n\r\n", 413},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                request(port, cases[i].req, strlen(cases[i].req), &r);
                if (r.status != cases[i].status || !r.eof ||
                    !has_header(&r, "\r\nConnection: close\r\n"))
                        fprintf(stderr, "case %zu: got %d eof=%d\n", i, r.status, r.eof);
                CHECK(r.status == cases[i].status && r.eof);
                CHECK(has_header(&r, "\r\nConnection: close\r\n"));
                resp_done(&r);
        }
        /* NUL inside a value (MHD would truncate it silently) */
        static const char nul[] =
                "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer t\0junk\r\n\r\n";
        request(port, nul, sizeof(nul) - 1, &r);
        CHECK(r.status == 400 && r.eof);
        resp_done(&r);
        static const char nul_target[] = "GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n";
        request(port, nul_target, sizeof(nul_target) - 1, &r);
        CHECK(r.status == 400 && r.eof);
        resp_done(&r);

        /* a chunked body that grows past max_body */
        int fd = client_connect(port, NULL);
        static const char head[] =
                "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        CHECK(send(fd, head, strlen(head), MSG_NOSIGNAL) > 0);
        char chunk[700 + 16];
        int hl = snprintf(chunk, sizeof(chunk), "%x\r\n", 700);
        memset(chunk + hl, 'x', 700);
        memcpy(chunk + hl + 700, "\r\n", 2);
        for (int i = 0; i < 2; i++)
                (void)send(fd, chunk, (size_t)hl + 702, MSG_NOSIGNAL);
        read_all(fd, &r);
        CHECK(r.status == 413 && r.eof);
        resp_done(&r);
        close(fd);

        /* limits: exactly at them passes, one byte over is refused */
        size_t cap = HTTPD_MAX_HEADER_BLOCK + 1024;
        char *big = malloc(cap);
        static const char pre[] = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: ";
        for (int over = 0; over <= 1; over++) {
                size_t fill = HTTPD_MAX_HEADER_BLOCK - (sizeof(pre) - 1) - 4 + (size_t)over;
                memcpy(big, pre, sizeof(pre) - 1);
                memset(big + sizeof(pre) - 1, 'b', fill);
                memcpy(big + sizeof(pre) - 1 + fill, "\r\n\r\n", 4);
                request(port, big, sizeof(pre) - 1 + fill + 4, &r);
                CHECK(r.status == (over ? 431 : 200));
                resp_done(&r);
        }
        static const char tpre[] = "GET /", tpost[] = " HTTP/1.1\r\nHost: a\r\n\r\n";
        for (int over = 0; over <= 1; over++) {
                size_t fill = HTTPD_MAX_TARGET - 1 + (size_t)over;
                memcpy(big, tpre, 5);
                memset(big + 5, 't', fill);
                memcpy(big + 5 + fill, tpost, strlen(tpost));
                request(port, big, 5 + fill + strlen(tpost), &r);
                CHECK(r.status == (over ? 414 : 200));
                resp_done(&r);
        }
        /* A target with a query that nearly fills MHD's 32 KiB pool: MHD 0.9.75 used to
         * drop these with no answer (and leak our request); and a header block past the
         * pool gets MHD's own complete 431. */
        big = realloc(big, 70000 + 64);
        for (size_t n = 32600; n < 32900; n += 37) {
                memcpy(big, "GET /?", 6);
                memset(big + 6, 'q', n);
                memcpy(big + 6 + n, tpost, strlen(tpost));
                request(port, big, 6 + n + strlen(tpost), &r);
                CHECK(r.status == 414 && r.eof);
                resp_done(&r);
        }
        memcpy(big, pre, sizeof(pre) - 1);
        memset(big + sizeof(pre) - 1, 'b', 70000);
        memcpy(big + sizeof(pre) - 1 + 70000, "\r\n\r\n", 4);
        request(port, big, sizeof(pre) - 1 + 70000 + 4, &r);
        CHECK(r.status == 431 && r.eof);
        resp_done(&r);
        size_t len = (size_t)sprintf(big, "GET / HTTP/1.1\r\n");
        for (unsigned i = 0; i < HTTPD_MAX_HEADERS; i++)
                len += (size_t)sprintf(big + len, "h%u: v\r\n", i);
        memcpy(big + len, "Host: a\r\n\r\n", 11);
        request(port, big, len + 11, &r); /* one field too many */
        CHECK(r.status == 431);
        resp_done(&r);
        free(big);

        /* the hook: path, host, status and code reach it; its envelope and headers are used,
         * but never its framing headers */
        REQ(port_hook,
            "GET /p/q?x=1 HTTP/1.1\r\nHost: Api.Example:8080\r\nContent-Length: 1\r\n"
            "Content-Length: 2\r\n\r\n",
            &r);
        CHECK(r.status == 400);
        CHECK(streq(hook_path, "/p/q") && hook_status == 400 && streq(hook_code, "bad_request"));
        CHECK(streq(hook_host, "Api.Example:8080"));
        CHECK(has_header(&r, "\r\nX-Hook: 1\r\n") && !has_header(&r, "999"));
        CHECK(streq(r.body, "{\"x\":\"bad_request\"}"));
        resp_done(&r);
        CHECK(handled == before + 1 + 2 /* the 200s at the limits */);

        /* a good request with a body still works */
        REQ(port,
            "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            &r);
        CHECK(r.status == 200 && r.body_len == 5 && memcmp(r.body, "hello", 5) == 0);
        resp_done(&r);
        REQ(port,
            "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\nConnection: "
            "close\r\n\r\n"
            "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            &r);
        CHECK(r.status == 200 && r.body_len == 5 && memcmp(r.body, "abcde", 5) == 0);
        resp_done(&r);
}

static uint64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_deadlines(void)
{
        /* headers trickling in: cut at the header deadline (300 ms) with a 408 */
        Resp r = {};
        int fd = client_connect(port, NULL);
        uint64_t t0 = mono_ms();
        static const char part[] = "GET / HTTP/1.1\r\nHost: a\r\n";
        CHECK(send(fd, part, strlen(part), MSG_NOSIGNAL) > 0);
        for (int i = 0; i < 4; i++) {
                usleep(100 * 1000);
                (void)send(fd, "X-a: b\r\n", 8, MSG_NOSIGNAL);
        }
        read_all(fd, &r);
        uint64_t dt = mono_ms() - t0;
        CHECK(r.status == 408 && r.eof && dt >= 250 && dt < 2000);
        resp_done(&r);
        close(fd);

        /* nothing sent at all: closed without an answer */
        fd = client_connect(port, NULL);
        t0 = mono_ms();
        read_all(fd, &r);
        dt = mono_ms() - t0;
        CHECK(r.len == 0 && r.eof && dt >= 250 && dt < 2000);
        resp_done(&r);
        close(fd);

        /* a body that stalls: cut at the body deadline */
        fd = client_connect(port, NULL);
        static const char body[] =
                "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc";
        CHECK(send(fd, body, strlen(body), MSG_NOSIGNAL) > 0);
        read_all(fd, &r);
        CHECK(r.status == 408 && r.eof);
        resp_done(&r);
        close(fd);

        /* a request waiting for its reply (600 ms, suspended) is never cut */
        REQ(port, "GET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &r);
        CHECK(r.status == 200 && streq(r.body, "late"));
        resp_done(&r);

        /* the deadline restarts after each response of a kept-alive connection */
        fd = client_connect(port, NULL);
        static const char one[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        for (int i = 0; i < 3; i++) {
                usleep(200 * 1000);
                CHECK(send(fd, one, strlen(one), MSG_NOSIGNAL) > 0);
                read_one(fd, &r);
                CHECK(r.status == 200 && !r.eof);
                resp_done(&r);
        }
        close(fd);
}

static void test_drain(void)
{
        Resp r = {};
        /* an idle kept-alive connection... */
        int idle = client_connect(port, NULL);
        static const char one[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        CHECK(send(idle, one, strlen(one), MSG_NOSIGNAL) > 0);
        read_one(idle, &r);
        CHECK(r.status == 200 && !has_header(&r, "Connection: close"));
        CHECK(has_header(&r, "\r\nKeep-Alive: timeout=0\r\n")); /* header_timeout 0.3 s */
        resp_done(&r);
        /* ...is not cut when the server drains (its client may be sending a request right
         * then): its next request is answered, with close; the reply that drains says close */
        REQ(port, "GET /drain HTTP/1.1\r\nHost: a\r\n\r\n", &r);
        CHECK(r.status == 200 && r.eof && has_header(&r, "\r\nConnection: close\r\n"));
        resp_done(&r);
        CHECK(send(idle, one, strlen(one), MSG_NOSIGNAL) > 0);
        read_all(idle, &r);
        CHECK(r.status == 200 && r.eof && has_header(&r, "\r\nConnection: close\r\n"));
        resp_done(&r);
        close(idle);
        /* the listener stays open: one answer per connection */
        int fd = client_connect(port, NULL);
        CHECK(send(fd, one, strlen(one), MSG_NOSIGNAL) > 0);
        read_all(fd, &r);
        CHECK(r.status == 200 && r.eof && has_header(&r, "\r\nConnection: close\r\n"));
        resp_done(&r);
        close(fd);
}

static void test_free_answers_waiting(void)
{
        Resp r = {};
        REQ(port_hook, "GET /hang HTTP/1.1\r\nHost: a\r\n\r\n", &r);
        CHECK(r.status == 503 && streq(r.body, "{\"x\":\"shutting_down\"}"));
        CHECK(streq(hook_path, "/hang") && streq(hook_host, "a") && hook_status == 503);
        resp_done(&r);
}

static int done_fd = -1;

static void *client(void *arg _unused_)
{
        test_streams();
        test_refusals();
        test_deadlines();
        test_drain();
        test_free_answers_waiting();
        uint64_t one = 1;
        (void)!write(done_fd, &one, sizeof(one));
        return NULL;
}

static int on_done(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                   void *userdata _unused_)
{
        return sd_event_exit(loop, 0);
}

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        CHECK_OK(sd_event_default(&loop));
        HttpdConfig cfg = {.address = "127.0.0.1",
                           .max_body = 1024,
                           .header_timeout_usec = 300 * USEC_PER_MSEC,
                           .body_timeout_usec = 300 * USEC_PER_MSEC};
        CHECK_OK(httpd_new(loop, &cfg, handler, &srv, &srv));
        cfg.refuse = refuse_hook;
        CHECK_OK(httpd_new(loop, &cfg, handler, &srv_hook, &srv_hook));
        if (!srv || !srv_hook)
                return check_finish();
        port = httpd_port(srv);
        port_hook = httpd_port(srv_hook);
        CHECK(port != 0 && port_hook != 0 && port != port_hook);

        done_fd = eventfd(0, EFD_CLOEXEC);
        CHECK_OK(sd_event_add_io(loop, NULL, done_fd, EPOLLIN, on_done, NULL));
        pthread_t t;
        CHECK(pthread_create(&t, NULL, client, NULL) == 0);
        CHECK_OK(sd_event_loop(loop));
        pthread_join(t, NULL);

        CHECK(srv_hook == NULL);
        CHECK(httpd_pending(srv) == 0);
        /* every stream's userdata was released exactly once, sent in full or not */
        CHECK(streams_freed == 12);
        srv = httpd_free(srv);
        close(done_fd);
        sd_event_unref(loop);
        return check_finish();
}
