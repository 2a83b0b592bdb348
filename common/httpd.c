/* SPDX-License-Identifier: MIT */
/*
 * libmicrohttpd (0.9.75) driven by sd-event through MHD's epoll fd.
 *
 * Measured quirks this glue handles (DESIGN.md "Pitfalls"): after
 * MHD_resume_connection() nothing wakes the loop, so we run MHD from a defer
 * source and re-arm the timer from MHD_get_timeout() after every MHD_run();
 * a timeout of 0 means "run again now". Suspended connections never time out
 * in MHD, so callers keep their own deadlines.
 *
 * What MHD 0.9.75 lets through, read in its connection.c and checked on the wire
 * (tests/integration/test-http-framing.sh): it takes the first of several
 * Content-Length fields; it ignores Content-Length when Transfer-Encoding is present
 * and treats any coding other than "chunked" as a body of unknown length (the
 * connection then hangs); it accepts any byte but ':' and NUL in a header name;
 * header values are stored NUL-terminated, so a NUL inside one silently truncates it
 * (MHD_get_connection_values_n reports the truncated length); bare LF ends a line;
 * obs-fold continuations are glued onto the *name*; the request-target may hold
 * spaces, controls and bytes >= 0x80; no Host is needed. So the handler's first call
 * (all headers in) re-checks the whole header block against the bytes MHD received:
 * MHD parses in place, replacing ':' and CR LF by NULs, so every field must sit
 * exactly where the previous one ended (name NUL OWS value NUL NUL) and the last one
 * two NULs before the end of the block (MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
 * any byte left unaccounted for — a NUL in a value, a bare LF, a moved (folded)
 * field, extra spaces in the request line — is a 400.
 *
 * Our own refusals are written straight to the socket and the connection is then
 * dropped (the handler returns MHD_NO), instead of being queued through MHD: MHD
 * builds a queued reply's header in what is left of the connection's pool, and a
 * header block that filled it left no room — the connection was closed with no
 * answer at all (requests of ~65 000 bytes with the 64 KiB pool of old). An
 * over-long request-target is refused from the URI callback already: right after it
 * MHD stores the query arguments, and when the request line nearly fills the pool
 * that fails, MHD queues a 431, fails again on the headers and drops the connection
 * silently, skipping the completion callback (the leaked URI copy). Our limits
 * (HTTPD_MAX_*) bind well before the pool does, so MHD answers by itself only beyond
 * them: a header block over ~32 560 bytes or ~440 tiny fields (431), a request line
 * over the pool (414), a malformed chunked body (400) — complete answers with MHD's
 * HTML body, "Connection: close" — and a malformed single Content-Length (400, or 413
 * past 2^64), parsed before our code runs, where 0.9.75 sends the status line and
 * headers twice: the client sees the right status and a garbled body, then the
 * connection closes. No option of 0.9.75 changes those bodies.
 *
 * Connections: MHD_OPTION_NOTIFY_CONNECTION gives each one a HttpConn that owns the
 * request in progress (so a request MHD drops without its completion callback is
 * still freed when the connection closes) and tracks the phase deadlines on two FIFO
 * lists (same timeout per list, so each is sorted) served by one sd-event timer.
 * A connection past its deadline is shut down (shutdown(2) on its fd); MHD then sees
 * the end of stream and closes it itself.
 */
#include "common/httpd.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "common/hashmap.h"
#include "common/json-util.h"
#include "common/util.h"

/* MHD's per-connection memory: must hold a header block of HTTPD_MAX_HEADER_BLOCK + 1
 * bytes and HTTPD_MAX_HEADERS + 1 field records (56 bytes each) so that our 431
 * binds first, and leave room for a reply's header. No larger: MHD 0.9.75 zeroes the
 * whole pool before every request of a keep-alive connection (MHD_pool_reset), which
 * at 64 KiB was 5–6 % of pomed's CPU under GET load. */
#define POOL_SIZE ((size_t)32 * 1024)
/* Read-ahead of a streamed reply, bytes. */
#define STREAM_BLOCK ((size_t)16 * 1024)

typedef enum ConnPhase {
        PHASE_HEADER,  /* waiting for the request line and headers */
        PHASE_BODY,    /* headers in, body arriving */
        PHASE_HANDLER, /* the handler has it (or its reply is being sent) */
} ConnPhase;

typedef struct HttpConn HttpConn;

typedef struct ConnList {
        HttpConn *head, *tail;
} ConnList;

/* Connections open now from one client address. */
typedef struct Client {
        char addr[INET6_ADDRSTRLEN + 8]; /* the key */
        unsigned n;
} Client;

struct HttpConn {
        Httpd *d;
        int fd;
        Client *client; /* counted against this client, or NULL */
        ConnPhase phase;
        bool linked;     /* on d->lists[phase] */
        bool cut;        /* shut down by us: ignore whatever MHD still parses */
        uint64_t since;  /* CLOCK_MONOTONIC µs: start of the current phase */
        unsigned served; /* requests completed on this connection */
        HttpRequest *rq; /* request in progress (request line seen); owned */
        HttpConn *prev, *next;
};

struct HttpRequest {
        Httpd *d;
        HttpConn *hc; /* NULL if the connection could not be tracked (out of memory) */
        struct MHD_Connection *conn;
        char *uri;          /* raw request-target as received */
        char *path, *query; /* point into the second half of uri */
        char method[16];
        char *body;
        size_t body_len, body_cap;
        bool started;    /* first access-handler call seen */
        bool dispatched; /* handler called */
        bool suspended;
        bool replied;
        bool held; /* http_request_hold: a reply set stays unsent until released */
        bool head; /* HEAD request: refusals carry no body */
        json_t *headers;
        struct MHD_Response *response;
        unsigned status;
        uint64_t start_usec;
        HttpRequest *prev, *next; /* list of suspended requests */
};

struct Httpd {
        sd_event *event;
        struct MHD_Daemon *mhd;
        sd_event_source *io, *timer, *defer, *deadline;
        HttpHandler handler;
        HttpRefuseFn refuse;
        HttpRepliedFn replied;
        void *userdata;
        size_t max_body;
        uint64_t timeout_usec[2]; /* by phase: header, body */
        uint16_t port;
        bool draining;
        bool closing;        /* quiesced: requests completing now never reach the handler */
        char keep_alive[32]; /* "timeout=N": when an idle connection will be closed */
        HttpRequest *suspended;
        size_t n_suspended;
        unsigned per_client;  /* connections per client address */
        Hashmap *clients;     /* address → Client */
        ConnList lists[2];    /* PHASE_HEADER, PHASE_BODY */
        uint64_t deadline_at; /* when d->deadline fires, 0 = off */
};

static uint64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static void rearm(Httpd *d)
{
        MHD_UNSIGNED_LONG_LONG ms;
        if (MHD_get_timeout(d->mhd, &ms) != MHD_YES) {
                sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
                return;
        }
        if (ms == 0) {
                sd_event_source_set_enabled(d->defer, SD_EVENT_ONESHOT);
                return;
        }
        uint64_t now;
        sd_event_now(d->event, CLOCK_MONOTONIC, &now);
        sd_event_source_set_time(d->timer, now + ms * USEC_PER_MSEC);
        sd_event_source_set_enabled(d->timer, SD_EVENT_ONESHOT);
}

static void run(Httpd *d)
{
        MHD_run(d->mhd);
        rearm(d);
}

static int on_io(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                 void *userdata)
{
        run(userdata);
        return 0;
}

static int on_timer(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        run(userdata);
        return 0;
}

static int on_defer(sd_event_source *s _unused_, void *userdata)
{
        run(userdata);
        return 0;
}

/* ---- refusals: the layer's own answers ---- */

/* The Host header of r once its header block is in (the handler's first call), else NULL. */
static const char *request_host(HttpRequest *r)
{
        return r->started
                       ? MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)
                       : NULL;
}

static const char *const default_fallback =
        "{\"error\":{\"type\":\"internal_error\",\"message\":\"out of memory\"}}";

/* The surface's envelope for (status, code, message) as body text + extra headers. */
static char *refusal_render(Httpd *d, const char *path, const char *host, int status,
                            const char *code, const char *message, json_t **ret_headers)
{
        HttpRefusal rf = {};
        if (d->refuse)
                d->refuse(path, host, status, code, message, &rf, d->userdata);
        if (!rf.body)
                rf.body = json_pack("{s:{s:s, s:s}}", "error", "type", code, "message", message);
        char *s = rf.body ? json_dumps(rf.body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        json_decref(rf.body);
        /* a 503 of this layer (too many connections, shutting down) is worth a retry */
        if (status == 503) {
                if (!rf.headers)
                        rf.headers = json_object();
                if (rf.headers && !json_object_get(rf.headers, "Retry-After"))
                        json_object_set_new(rf.headers, "Retry-After", json_string("1"));
        }
        *ret_headers = rf.headers;
        return s;
}

static bool is_tchar(unsigned char ch)
{
        /* RFC 9110 §5.6.2 token characters */
        static const char extra[] = "!#$%&'*+-.^_`|~";
        if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
                return true;
        return ch != 0 && strchr(extra, ch) != NULL;
}

static bool header_value_ok(const char *v)
{
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
                if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
                        return false;
        return true;
}

static bool header_name_ok(const char *k)
{
        if (!*k)
                return false;
        for (const unsigned char *p = (const unsigned char *)k; *p; p++)
                if (!is_tchar(*p))
                        return false;
        return true;
}

/*
 * Writes a complete refusal (status line, headers, Connection: close, body) straight
 * to fd. Used where MHD is not writing on this connection (before its reply) and
 * followed by dropping the connection. A short write (a client that does not read)
 * is left at that: the connection is closed anyway.
 */
static void refuse_on_fd(Httpd *d, int fd, const char *path, const char *host, bool head,
                         int status, const char *code, const char *message)
{
        if (fd < 0)
                return;
        if (d->replied)
                d->replied(path, host, status, d->userdata);
        _cleanup_json_ json_t *headers = NULL;
        _cleanup_free_ char *body = refusal_render(d, path, host, status, code, message, &headers);
        const char *b = body ? body : default_fallback;
        size_t blen = strlen(b);

        char date[64];
        time_t t = time(NULL);
        struct tm tm;
        strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&t, &tm));
        const char *reason = MHD_get_reason_phrase_for((unsigned)status);

        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return;
        bool have_ct = false;
        fprintf(f, "HTTP/1.1 %d %s\r\nDate: %s\r\nConnection: close\r\n", status,
                reason && *reason ? reason : "Error", date);
        const char *k;
        json_t *v;
        json_object_foreach (headers, k, v) {
                if (!json_is_string(v) || !header_name_ok(k) ||
                    !header_value_ok(json_string_value(v)) || strcasecmp(k, "connection") == 0 ||
                    strcasecmp(k, "content-length") == 0 || strcasecmp(k, "transfer-encoding") == 0)
                        continue;
                if (strcasecmp(k, "content-type") == 0)
                        have_ct = true;
                fprintf(f, "%s: %s\r\n", k, json_string_value(v));
        }
        if (!have_ct)
                fputs("Content-Type: application/json; charset=utf-8\r\n", f);
        fprintf(f, "Content-Length: %zu\r\n\r\n", blen);
        if (!head)
                fwrite(b, 1, blen, f);
        if (fclose(f) != 0)
                return;
        ssize_t n;
        do
                n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
}

/* ---- connections and their deadlines ---- */

static HttpConn *conn_of(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return ci ? ci->socket_context : NULL;
}

static void conn_unlink(HttpConn *c)
{
        if (!c->linked)
                return;
        ConnList *l = &c->d->lists[c->phase];
        if (c->prev)
                c->prev->next = c->next;
        else
                l->head = c->next;
        if (c->next)
                c->next->prev = c->prev;
        else
                l->tail = c->prev;
        c->prev = c->next = NULL;
        c->linked = false;
}

static void deadline_arm(Httpd *d)
{
        uint64_t at = 0;
        for (size_t i = 0; i < ELEMENTSOF(d->lists); i++) {
                HttpConn *h = d->lists[i].head;
                if (h && (at == 0 || h->since + d->timeout_usec[i] < at))
                        at = h->since + d->timeout_usec[i];
        }
        d->deadline_at = at;
        if (at == 0) {
                sd_event_source_set_enabled(d->deadline, SD_EVENT_OFF);
                return;
        }
        sd_event_source_set_time(d->deadline, at);
        sd_event_source_set_enabled(d->deadline, SD_EVENT_ONESHOT);
}

/* Moves c to phase p from now on. Cheap: a list append, the timer only moves earlier. */
static void conn_enter(HttpConn *c, ConnPhase p)
{
        if (!c)
                return;
        conn_unlink(c);
        c->phase = p;
        if (p == PHASE_HANDLER)
                return;
        Httpd *d = c->d;
        c->since = now_usec();
        ConnList *l = &d->lists[p];
        c->prev = l->tail;
        c->next = NULL;
        if (l->tail)
                l->tail->next = c;
        else
                l->head = c;
        l->tail = c;
        c->linked = true;
        uint64_t at = c->since + d->timeout_usec[p];
        if (d->deadline_at == 0 || at < d->deadline_at) {
                d->deadline_at = at;
                sd_event_source_set_time(d->deadline, at);
                sd_event_source_set_enabled(d->deadline, SD_EVENT_ONESHOT);
        }
}

/* Drops c: MHD sees the end of stream on its next run and closes the connection. */
static void conn_cut(HttpConn *c)
{
        conn_unlink(c);
        c->cut = true;
        (void)shutdown(c->fd, SHUT_RDWR);
        sd_event_source_set_enabled(c->d->defer, SD_EVENT_ONESHOT);
}

static int on_deadline(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Httpd *d = userdata;
        uint64_t now = now_usec();
        for (size_t i = 0; i < ELEMENTSOF(d->lists); i++) {
                HttpConn *c;
                while ((c = d->lists[i].head) && c->since + d->timeout_usec[i] <= now) {
                        /* A client mid-request learns why; one that sent nothing is just closed,
                         * as an idle keep-alive connection would be. */
                        if (c->rq)
                                refuse_on_fd(d, c->fd, c->rq->path, request_host(c->rq),
                                             c->rq->head, 408, "request_timeout",
                                             i == PHASE_HEADER
                                                     ? "The request headers did not arrive in time."
                                                     : "The request body did not arrive in time.");
                        conn_cut(c);
                }
        }
        deadline_arm(d);
        return 0;
}

static void request_free(HttpRequest *r);

/* The client address of conn as text, "" when unknown. */
static void client_address(struct MHD_Connection *conn, char *buf, size_t len)
{
        buf[0] = 0;
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!ci || !ci->client_addr)
                return;
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf,
                          (socklen_t)len);
        else if (sa->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
                          (socklen_t)len);
}

/*
 * Counts c against its client address; false when that client has per_client
 * connections already. (Our own count rather than MHD's per-IP limit, which resets the
 * connection: a client over its share gets an HTTP answer, 503 with Retry-After.)
 */
static bool client_admit(Httpd *d, HttpConn *c, struct MHD_Connection *conn)
{
        char addr[INET6_ADDRSTRLEN + 8];
        client_address(conn, addr, sizeof(addr));
        if (!addr[0] || !d->clients)
                return true;
        Client *cl = hashmap_get(d->clients, addr);
        if (cl && cl->n >= d->per_client)
                return false;
        if (!cl) {
                cl = calloc(1, sizeof(*cl));
                if (!cl)
                        return true; /* out of memory: not counted, not refused */
                snprintf(cl->addr, sizeof(cl->addr), "%s", addr);
                if (hashmap_put(d->clients, cl->addr, cl) < 0) {
                        free(cl);
                        return true;
                }
        }
        cl->n++;
        c->client = cl;
        return true;
}

static void client_release(Httpd *d, HttpConn *c)
{
        Client *cl = c->client;
        c->client = NULL;
        if (cl && --cl->n == 0) {
                (void)hashmap_remove(d->clients, cl->addr);
                free(cl);
        }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
        Httpd *d = cls;
        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci =
                        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
                HttpConn *c = calloc(1, sizeof(*c));
                if (!c) {
                        /* Untracked means no deadline: refuse the connection instead. */
                        if (ci)
                                (void)shutdown(ci->connect_fd, SHUT_RDWR);
                        return;
                }
                c->d = d;
                c->fd = ci ? ci->connect_fd : -1;
                *socket_context = c;
                conn_enter(c, PHASE_HEADER);
                if (!client_admit(d, c, conn)) {
                        /* Over this client's share: one answer, then the connection goes.
                         * What the client sent already is read first, so closing does not
                         * turn into a reset that could eat the answer. */
                        char junk[4096];
                        while (c->fd >= 0 && recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
                                ;
                        refuse_on_fd(d, c->fd, NULL, NULL, false, 503, "too_many_connections",
                                     "This client has too many connections open; close some "
                                     "or retry shortly.");
                        conn_cut(c);
                }
                return;
        }
        /* MHD_CONNECTION_NOTIFY_CLOSED */
        HttpConn *c = *socket_context;
        if (!c)
                return;
        *socket_context = NULL;
        client_release(d, c);
        conn_unlink(c);
        /* MHD 0.9.75 drops some requests without the completion callback (e.g. when
         * it gives up answering an oversized one): the request is ours to free. */
        if (c->rq)
                request_free(c->rq);
        free(c);
}

/* ---- requests ---- */

static void list_remove(Httpd *d, HttpRequest *r)
{
        if (r->prev)
                r->prev->next = r->next;
        else if (d->suspended == r)
                d->suspended = r->next;
        if (r->next)
                r->next->prev = r->prev;
        r->prev = r->next = NULL;
}

static void request_free(HttpRequest *r)
{
        if (!r)
                return;
        if (r->suspended) {
                list_remove(r->d, r);
                r->d->n_suspended--;
        }
        if (r->hc && r->hc->rq == r)
                r->hc->rq = NULL;
        free(r->uri);
        free(r->body);
        json_decref(r->headers);
        if (r->response)
                MHD_destroy_response(r->response);
        free(r);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
        HttpConn *c = conn_of(conn);
        if (c && c->rq) /* a previous request MHD dropped without telling us */
                request_free(c->rq);
        HttpRequest *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        r->d = cls;
        r->conn = conn;
        r->start_usec = now_usec();
        /* uri = path?query, still percent-encoded: keep both raw; decoding is the caller's. */
        size_t n = strlen(uri);
        r->uri = malloc(2 * n + 2);
        if (!r->uri) {
                free(r);
                return NULL;
        }
        memcpy(r->uri, uri, n + 1);
        r->path = r->uri + n + 1;
        memcpy(r->path, uri, n + 1);
        char *q = strchr(r->path, '?');
        if (q) {
                *q = 0;
                r->query = q + 1;
        } else
                r->query = r->path + strlen(r->path);
        r->hc = c;
        if (c) {
                c->rq = r;
                /* Refuse an over-long target now, before MHD stores its query arguments:
                 * when the request line nearly fills the pool that fails, MHD queues a 431,
                 * then fails again on the headers and drops the connection with no answer
                 * and without our completion callback (targets of ~65 400–65 500 bytes
                 * with a 64 KiB pool). */
                if (n > HTTPD_MAX_TARGET) {
                        refuse_on_fd(r->d, c->fd, r->path, NULL, false, 414, "uri_too_long",
                                     "The request-target is too long.");
                        conn_cut(c);
                }
        }
        return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
        Httpd *d = cls;
        HttpRequest *r = *con_cls;
        *con_cls = NULL;
        HttpConn *c = r ? r->hc : conn_of(conn);
        request_free(r);
        if (!c || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
                return; /* the connection is closing */
        c->served++;
        if (d->draining)
                conn_cut(c); /* the response is out: no further request on it */
        else
                conn_enter(c, PHASE_HEADER); /* kept alive: the next request's clock */
}

typedef struct Refusal {
        int status;
        const char *code;
        const char *message;
} Refusal;

static bool refused(Refusal *ref, int status, const char *code, const char *message)
{
        *ref = (Refusal){status, code, message};
        return false;
}

/* State of the walk over the header fields MHD parsed, in the order received. */
typedef struct HeaderWalk {
        const char *next; /* where the next field line must start */
        const char *end;  /* end of the header block */
        bool bad, too_many;
        unsigned n, n_cl, n_te, n_host, n_auth;
        const char *cl, *te;
} HeaderWalk;

static enum MHD_Result walk_header(void *cls, enum MHD_ValueKind kind _unused_, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
        HeaderWalk *w = cls;
        if (++w->n > HTTPD_MAX_HEADERS) {
                w->too_many = true;
                return MHD_NO;
        }
        /* name NUL(':') OWS value NUL(CR) NUL(LF), exactly where the previous line ended */
        if (key != w->next || key_size == 0 || (size_t)(w->end - key) < key_size + 3)
                goto bad;
        for (size_t i = 0; i < key_size; i++)
                if (!is_tchar((unsigned char)key[i]))
                        goto bad;
        const char *p = key + key_size;
        if (*p++ != 0 || value < p || value >= w->end)
                goto bad;
        while (p < value && (*p == ' ' || *p == '\t'))
                p++;
        if (p != value || (size_t)(w->end - value) < value_size + 2)
                goto bad;
        for (size_t i = 0; i < value_size; i++) {
                unsigned char ch = (unsigned char)value[i];
                if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                        goto bad;
        }
        if (value[value_size] != 0 || value[value_size + 1] != 0)
                goto bad;
        w->next = value + value_size + 2;

        if (key_size == 14 && strcasecmp(key, "content-length") == 0) {
                w->n_cl++;
                w->cl = value;
        } else if (key_size == 17 && strcasecmp(key, "transfer-encoding") == 0) {
                w->n_te++;
                w->te = value;
        } else if (key_size == 4 && strcasecmp(key, "host") == 0)
                w->n_host++;
        else if (key_size == 13 && strcasecmp(key, "authorization") == 0)
                w->n_auth++;
        return MHD_YES;
bad:
        w->bad = true;
        return MHD_NO;
}

/*
 * The checks of the handler's first call (see the top of this file). Returns true
 * when the request may proceed (*ret_body: a body follows), false with *ref filled.
 */
static bool check_request(Httpd *d, HttpRequest *r, struct MHD_Connection *conn, const char *method,
                          const char *url, const char *version, Refusal *ref, bool *ret_body)
{
        /* request-target: VCHAR only (RFC 9112 §3.2), bounded */
        size_t tl = strlen(r->uri);
        if (tl > HTTPD_MAX_TARGET)
                return refused(ref, 414, "uri_too_long", "The request-target is too long.");
        for (size_t i = 0; i < tl; i++) {
                unsigned char ch = (unsigned char)r->uri[i];
                if (ch <= 0x20 || ch >= 0x7f)
                        return refused(ref, 400, "bad_request",
                                       "The request-target has a byte outside visible ASCII; "
                                       "percent-encode it.");
        }
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
        if (!ci || ci->header_size > HTTPD_MAX_HEADER_BLOCK)
                return refused(ref, 431, "headers_too_large",
                               "The request line and headers exceed 16384 bytes.");
        /* method SP target SP version CRLF, in place: every byte accounted for */
        size_t ml = strlen(method), vl = strlen(version);
        const char *end = method + ci->header_size;
        if (url != method + ml + 1 || version != url + tl + 1 || version + vl + 2 > end ||
            version[vl] != 0 || version[vl + 1] != 0)
                return refused(ref, 400, "bad_request", "The request line is malformed.");

        HeaderWalk w = {.next = version + vl + 2, .end = end};
        MHD_get_connection_values_n(conn, MHD_HEADER_KIND, walk_header, &w);
        if (w.too_many)
                return refused(ref, 431, "headers_too_large",
                               "The request has more than 128 header fields.");
        if (w.bad || w.next + 2 != end || w.next[0] != 0 || w.next[1] != 0)
                return refused(ref, 400, "bad_request",
                               "A header field is malformed: a name must be a token, a value "
                               "must not hold control bytes, lines end with CRLF, no "
                               "line folding.");

        bool http11 = streq(version, MHD_HTTP_VERSION_1_1);
        if (http11 ? w.n_host != 1 : w.n_host > 1)
                return refused(ref, 400, "bad_request",
                               "An HTTP/1.1 request needs exactly one Host header.");
        /* A singleton field (RFC 9110 §11.6.2): two credentials, one for a proxy to check
         * and another for us to use, is a confusion no honest client needs. */
        if (w.n_auth > 1)
                return refused(ref, 400, "bad_request",
                               "More than one Authorization header: send one credential.");
        uint64_t cl = 0;
        if (w.n_te > 0) {
                if (w.n_cl > 0)
                        return refused(ref, 400, "bad_request",
                                       "Content-Length and Transfer-Encoding together are "
                                       "ambiguous framing.");
                if (!http11 || w.n_te > 1 || strcasecmp(w.te, "chunked") != 0)
                        return refused(ref, 400, "bad_request",
                                       "Only Transfer-Encoding: chunked is supported (HTTP/1.1).");
        } else if (w.n_cl > 1)
                return refused(ref, 400, "bad_request",
                               "Content-Length must be given exactly once.");
        else if (w.n_cl == 1) {
                const char *p = w.cl;
                if (!*p)
                        return refused(ref, 400, "bad_request",
                                       "Content-Length must be plain decimal digits.");
                for (; *p; p++) {
                        if (*p < '0' || *p > '9')
                                return refused(ref, 400, "bad_request",
                                               "Content-Length must be plain decimal digits.");
                        if (cl > (UINT64_MAX - 9) / 10) {
                                cl = UINT64_MAX;
                                break;
                        }
                        cl = cl * 10 + (uint64_t)(*p - '0');
                }
        }
        if (cl > d->max_body)
                return refused(ref, 413, "request_too_large", "The request body is too large.");
        *ret_body = w.n_te > 0 || cl > 0;
        if (cl > 0) { /* one allocation for the whole body */
                r->body = malloc(cl + 1);
                if (r->body) {
                        r->body_cap = cl + 1;
                        r->body[0] = 0;
                }
        }
        return true;
}

static void refuse_request(HttpRequest *r, int status, const char *code, const char *message)
{
        const union MHD_ConnectionInfo *ci =
                r->hc ? NULL : MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        int fd = r->hc ? r->hc->fd : ci ? ci->connect_fd : -1;
        refuse_on_fd(r->d, fd, r->path, request_host(r), r->head, status, code, message);
        if (r->hc) {
                conn_unlink(r->hc);
                r->hc->cut = true;
        }
}

static enum MHD_Result queue(HttpRequest *r)
{
        if (r->d->replied)
                r->d->replied(r->path, request_host(r), (int)r->status, r->d->userdata);
        enum MHD_Result ok = MHD_queue_response(r->conn, r->status, r->response);
        MHD_destroy_response(r->response);
        r->response = NULL;
        return ok;
}

static void reply_refusal(HttpRequest *rq, int status, const char *code, const char *message);
static void resume(HttpRequest *rq);

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
        Httpd *d = cls;
        HttpRequest *r = *con_cls;
        if (!r) {
                /* out of memory in on_uri */
                const union MHD_ConnectionInfo *ci =
                        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
                if (ci) {
                        static const char oom[] = "HTTP/1.1 500 Internal Server Error\r\n"
                                                  "Connection: close\r\nContent-Length: 0\r\n\r\n";
                        (void)send(ci->connect_fd, oom, strlen(oom), MSG_NOSIGNAL | MSG_DONTWAIT);
                }
                return MHD_NO;
        }

        if (!r->started) {
                r->started = true;
                if (r->hc && r->hc->cut)
                        return MHD_NO; /* past its deadline: already answered */
                snprintf(r->method, sizeof(r->method), "%s", method);
                r->head = streq(method, MHD_HTTP_METHOD_HEAD);
                Refusal ref = {};
                bool body = false;
                if (!check_request(d, r, conn, method, url, version, &ref, &body)) {
                        refuse_request(r, ref.status, ref.code, ref.message);
                        return MHD_NO;
                }
                conn_enter(r->hc, body ? PHASE_BODY : PHASE_HANDLER);
                return MHD_YES; /* wait for the body (or the final call) */
        }
        if (*upload_data_size > 0) {
                size_t n = *upload_data_size;
                *upload_data_size = 0;
                if (n > d->max_body - r->body_len) {
                        /* a chunked body grew past the limit */
                        refuse_request(r, 413, "request_too_large",
                                       "The request body is too large.");
                        return MHD_NO;
                }
                if (r->body_len + n + 1 > r->body_cap) {
                        size_t cap = r->body_cap ? r->body_cap : 4096;
                        while (cap < r->body_len + n + 1)
                                cap *= 2;
                        char *b = realloc(r->body, cap);
                        if (!b)
                                return MHD_NO;
                        r->body = b;
                        r->body_cap = cap;
                }
                memcpy(r->body + r->body_len, upload_data, n);
                r->body_len += n;
                r->body[r->body_len] = 0;
                return MHD_YES;
        }

        if (r->response) /* resumed after an asynchronous reply */
                return queue(r);
        if (r->dispatched)
                return MHD_YES; /* still waiting (spurious call) */
        r->dispatched = true;
        conn_enter(r->hc, PHASE_HANDLER);
        if (d->closing) {
                /* The handler's world may be gone already (pomed tearing down). */
                reply_refusal(r, 503, "shutting_down", "The server is shutting down.");
                return queue(r);
        }
        d->handler(r, d->userdata);
        if (r->response && !r->held)
                return queue(r);
        if (r->replied && !r->response)
                return MHD_NO;
        MHD_suspend_connection(conn);
        r->suspended = true;
        r->next = d->suspended;
        if (r->next)
                r->next->prev = r;
        d->suspended = r;
        d->n_suspended++;
        return MHD_YES;
}

static void on_mhd_log(void *cls _unused_, const char *fm _unused_, va_list ap _unused_)
{
        /* Low layer: no logging. MHD's messages are about client misbehaviour. */
}

int httpd_new(sd_event *e, const HttpdConfig *cfg, HttpHandler handler, void *userdata, Httpd **ret)
{
        struct sockaddr_storage ss = {};
        socklen_t sl;
        unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
        struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        if (inet_pton(AF_INET, cfg->address, &in4->sin_addr) == 1) {
                in4->sin_family = AF_INET;
                in4->sin_port = htons(cfg->port);
                sl = sizeof(*in4);
        } else if (inet_pton(AF_INET6, cfg->address, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(cfg->port);
                sl = sizeof(*in6);
                flags |= MHD_USE_IPv6;
        } else
                return -EINVAL;

        /* Bind ourselves so a bind error comes back as an errno, not a NULL daemon. */
        _cleanup_close_ int fd =
                socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 512) < 0)
                return negative_errno();

        Httpd *d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->event = sd_event_ref(e);
        d->handler = handler;
        d->refuse = cfg->refuse;
        d->replied = cfg->replied;
        d->userdata = userdata;
        d->max_body = cfg->max_body;
        d->timeout_usec[PHASE_HEADER] = cfg->header_timeout_usec
                                                ? cfg->header_timeout_usec
                                                : HTTPD_DEFAULT_HEADER_TIMEOUT_USEC;
        d->timeout_usec[PHASE_BODY] =
                cfg->body_timeout_usec ? cfg->body_timeout_usec : HTTPD_DEFAULT_BODY_TIMEOUT_USEC;
        uint64_t idle_s = d->timeout_usec[PHASE_HEADER] / USEC_PER_SEC;
        snprintf(d->keep_alive, sizeof(d->keep_alive), "timeout=%" PRIu64,
                 idle_s > 1 ? idle_s - 1 : 0);
        /* The deadline source first: MHD announces connections as soon as it runs. */
        int r = sd_event_add_time(e, &d->deadline, CLOCK_MONOTONIC, 0, 1000, on_deadline, d);
        if (r < 0) {
                httpd_free(d);
                return r;
        }
        sd_event_source_set_enabled(d->deadline, SD_EVENT_OFF);
        unsigned limit =
                cfg->connection_limit ? cfg->connection_limit : HTTPD_DEFAULT_CONNECTION_LIMIT;
        d->per_client =
                cfg->per_client_limit ? cfg->per_client_limit : HTTPD_DEFAULT_PER_CLIENT_LIMIT;
        d->clients = hashmap_new(HASHMAP_STRING);
        if (!d->clients) {
                httpd_free(d);
                return -ENOMEM;
        }
        unsigned idle = cfg->connection_timeout ? cfg->connection_timeout
                                                : HTTPD_DEFAULT_CONNECTION_TIMEOUT;
        d->mhd = MHD_start_daemon(
                flags, 0, NULL, NULL, on_access, d, MHD_OPTION_LISTEN_SOCKET, fd,
                MHD_OPTION_URI_LOG_CALLBACK, on_uri, d, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
                d, MHD_OPTION_NOTIFY_CONNECTION, on_connection, d, MHD_OPTION_CONNECTION_LIMIT,
                limit, MHD_OPTION_CONNECTION_TIMEOUT, idle, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                POOL_SIZE, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, d, MHD_OPTION_END);
        if (!d->mhd) {
                httpd_free(d);
                return -EIO;
        }
        TAKE_FD(fd); /* MHD owns the listener now */
        const union MHD_DaemonInfo *pi = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_BIND_PORT);
        d->port = pi ? pi->port : cfg->port;
        const union MHD_DaemonInfo *ei = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        r = ei ? sd_event_add_io(e, &d->io, ei->epoll_fd, EPOLLIN, on_io, d) : -EIO;
        if (r >= 0)
                r = sd_event_add_time(e, &d->timer, CLOCK_MONOTONIC, 0, 1, on_timer, d);
        if (r >= 0)
                r = sd_event_add_defer(e, &d->defer, on_defer, d);
        /*
         * "Run MHD again now" comes after every other source that is pending: a response
         * MHD writes a block at a time (a tape of hundreds of MB) keeps asking, and at
         * sd-event's normal priority the ask won every tie with the pods' sockets, so no
         * other call got its reply until that response was done.
         */
        if (r >= 0)
                r = sd_event_source_set_priority(d->defer, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r < 0) {
                httpd_free(d);
                return r;
        }
        sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
        sd_event_source_set_enabled(d->defer, SD_EVENT_OFF);
        rearm(d);
        *ret = d;
        return 0;
}

/* A reply in the surface's envelope, through MHD (the request is the handler's). */
static void reply_refusal(HttpRequest *rq, int status, const char *code, const char *message)
{
        _cleanup_json_ json_t *headers = NULL;
        _cleanup_free_ char *body =
                refusal_render(rq->d, rq->path, request_host(rq), status, code, message, &headers);
        const char *b = body ? body : default_fallback;
        (void)http_reply(rq, status, headers, b, strlen(b));
}

Httpd *httpd_free(Httpd *d)
{
        if (!d)
                return NULL;
        if (d->mhd) {
                while (d->suspended) {
                        HttpRequest *r = d->suspended;
                        r->held = false;
                        if (r->response)
                                resume(r); /* a held reply goes out as it is */
                        else
                                reply_refusal(r, 503, "shutting_down",
                                              "The server is shutting down.");
                }
                MHD_run(d->mhd); /* flush the replies to resumed connections */
                MHD_stop_daemon(d->mhd);
        }
        sd_event_source_disable_unref(d->io);
        sd_event_source_disable_unref(d->timer);
        sd_event_source_disable_unref(d->defer);
        sd_event_source_disable_unref(d->deadline);
        hashmap_free(d->clients); /* empty: every connection was closed */
        sd_event_unref(d->event);
        free(d);
        return NULL;
}

void httpd_quiesce(Httpd *d)
{
        d->closing = true;
        /* pomed frees the manager (the gateway's hook counts into its metrics) before
         * httpd_free flushes the last replies: ASan caught the hook reading it freed */
        d->replied = NULL;
        int fd = MHD_quiesce_daemon(d->mhd);
        if (fd >= 0)
                close(fd);
}

void httpd_drain(Httpd *d)
{
        /* Idle keep-alive connections stay: closing one races a request its client may be
         * sending, which would then get no answer at all. Their next request is answered
         * (Connection: close) like any other; the header deadline still applies. */
        d->draining = true;
}

uint16_t httpd_port(const Httpd *d)
{
        return d->port;
}

size_t httpd_pending(const Httpd *d)
{
        return d->n_suspended;
}

const char *http_request_method(const HttpRequest *rq)
{
        return rq->method;
}
const char *http_request_path(const HttpRequest *rq)
{
        return rq->path;
}
const char *http_request_query(const HttpRequest *rq)
{
        return rq->query;
}
const char *http_request_header(HttpRequest *rq, const char *name)
{
        /* Through the collected fields: names folded to lower case, values trimmed. */
        char lower[128];
        size_t n = strlen(name);
        if (n >= sizeof(lower))
                return NULL;
        for (size_t i = 0; i <= n; i++)
                lower[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
        return json_string_value(json_object_get(http_request_headers(rq), lower));
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind _unused_, const char *key,
                                      const char *value)
{
        json_t *o = cls;
        char name[128];
        size_t n = strlen(key);
        if (n >= sizeof(name))
                return MHD_YES; /* absurd header names are not worth keeping */
        for (size_t i = 0; i <= n; i++)
                name[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] + 32 : key[i]);
        /* A field value has no trailing whitespace (RFC 9112 §5; MHD keeps it). json_string
         * refuses invalid UTF-8: such a header is dropped, not mangled. */
        size_t vl = value ? strlen(value) : 0;
        while (vl > 0 && (value[vl - 1] == ' ' || value[vl - 1] == '\t'))
                vl--;
        json_t *v = json_stringn(value ? value : "", vl);
        if (v)
                json_object_set_new(o, name, v);
        return MHD_YES;
}

json_t *http_request_headers(HttpRequest *rq)
{
        if (!rq->headers) {
                rq->headers = json_object();
                if (rq->headers)
                        MHD_get_connection_values(rq->conn, MHD_HEADER_KIND, collect_header,
                                                  rq->headers);
        }
        return rq->headers;
}

const char *http_request_body(const HttpRequest *rq, size_t *ret_len)
{
        if (ret_len)
                *ret_len = rq->body_len;
        return rq->body ? rq->body : "";
}

bool http_request_from_loopback(const HttpRequest *rq)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!ci || !ci->client_addr)
                return false;
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
                return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
        if (sa->sa_family == AF_INET6) {
                const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
                if (IN6_IS_ADDR_LOOPBACK(a))
                        return true;
                return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
        }
        return false;
}

uint64_t http_request_start_usec(const HttpRequest *rq)
{
        return rq->start_usec;
}

/* A suspended request whose reply is set: back to MHD, which sends it. */
static void resume(HttpRequest *rq)
{
        Httpd *d = rq->d;
        list_remove(d, rq);
        d->n_suspended--;
        rq->suspended = false;
        MHD_resume_connection(rq->conn);
        /* Nothing wakes the loop after a resume: run MHD soon from a defer source. */
        sd_event_source_set_enabled(d->defer, SD_EVENT_ONESHOT);
}

/* Adds headers to resp, hands it to rq and resumes rq if it waits (and is not held). Takes
 * resp. */
static void reply_set(HttpRequest *rq, int status, const json_t *headers, struct MHD_Response *resp,
                      bool has_body)
{
        bool have_ct = false;
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)headers, k, v) {
                if (!json_is_string(v))
                        continue;
                if (strcasecmp(k, "content-type") == 0)
                        have_ct = true;
                MHD_add_response_header(resp, k, json_string_value(v));
        }
        if (has_body && !have_ct)
                MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
        /* Tell keep-alive clients when we close an idle connection (the header deadline),
         * as Node's http server does, so they do not send into a closing socket. */
        if (rq->d->draining)
                MHD_add_response_header(resp, "Connection", "close");
        else
                MHD_add_response_header(resp, "Keep-Alive", rq->d->keep_alive);
        rq->response = resp;
        rq->status = (unsigned)status;
        if (rq->suspended && !rq->held)
                resume(rq);
}

void http_request_hold(HttpRequest *rq)
{
        rq->held = true;
}

void http_request_release(HttpRequest *rq)
{
        rq->held = false;
        if (rq->suspended && rq->response)
                resume(rq);
}

int http_request_unreply(HttpRequest *rq)
{
        if (!rq->held || !rq->response)
                return -EINVAL;
        MHD_destroy_response(rq->response);
        rq->response = NULL;
        rq->replied = false;
        return 0;
}

int http_reply(HttpRequest *rq, int status, const json_t *headers, const void *body, size_t len)
{
        if (rq->replied)
                return -EALREADY;
        rq->replied = true;
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)(body ? body : ""),
                                                                    MHD_RESPMEM_MUST_COPY);
        if (!resp) {
                status = 500;
                headers = NULL;
                len = 0;
                resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
                if (!resp)
                        return -ENOMEM;
        }
        reply_set(rq, status, headers, resp, len > 0);
        return 0;
}

int http_reply_json(HttpRequest *rq, int status, const json_t *headers, const json_t *body)
{
        if (!body)
                return http_reply(rq, status, headers, NULL, 0);
        _cleanup_free_ char *s = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!s) {
                static const char oom[] = "{\"error\":{\"type\":\"internal_error\","
                                          "\"message\":\"out of memory\"}}";
                (void)http_reply(rq, 500, NULL, oom, strlen(oom));
                return -ENOMEM;
        }
        return http_reply(rq, status, headers, s, strlen(s));
}

typedef struct Stream {
        HttpStreamRead read;
        void (*free_cb)(void *);
        void *userdata;
} Stream;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
        Stream *s = cls;
        ssize_t n = s->read(s->userdata, pos, buf, max);
        if (n > 0)
                return (size_t)n <= max ? n : MHD_CONTENT_READER_END_WITH_ERROR;
        /* 0 would mean "nothing yet, ask again" to MHD: our 0 is the end. */
        return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
        Stream *s = cls;
        if (s->free_cb)
                s->free_cb(s->userdata);
        free(s);
}

int http_reply_stream(HttpRequest *rq, int status, const json_t *headers, uint64_t size,
                      HttpStreamRead read, void (*free_cb)(void *), void *userdata)
{
        if (rq->replied)
                return -EALREADY;
        Stream *s = malloc(sizeof(*s));
        struct MHD_Response *resp = NULL;
        if (s) {
                *s = (Stream){read, free_cb, userdata};
                resp = MHD_create_response_from_callback(size == UINT64_MAX ? MHD_SIZE_UNKNOWN
                                                                            : size,
                                                         STREAM_BLOCK, stream_read, s, stream_free);
                if (!resp)
                        free(s);
        }
        if (!resp) {
                (void)http_reply(rq, 500, NULL, NULL, 0);
                return -ENOMEM;
        }
        rq->replied = true;
        reply_set(rq, status, headers, resp, size != 0);
        return 0;
}
