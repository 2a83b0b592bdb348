/* SPDX-License-Identifier: MIT */
/*
 * The agent pod's ways out (supervisor/agentnet.h): forwards, TLS listeners and the
 * allow-listed HTTP proxy, on pome's sd-event loop. The only user of libssl.
 *
 * A connection is two sockets — down, accepted from the pod; up, opened by pome in its own
 * network — and two pipes of PIPE_SIZE bytes each, one per direction. A side is read only
 * while the pipe it fills has room, and written only while the pipe it drains holds bytes,
 * so a slow reader stops its writer through TCP itself (back-pressure) and a connection
 * costs at most 2 × PIPE_SIZE of memory (and a TLS session's buffers, ~50 KiB while it
 * moves bytes, released while idle); CONNS_MAX connections at once (past it the listeners
 * pause and the kernel's backlog holds the rest). An EOF read from one side is passed on as
 * shutdown(SHUT_WR) of the other once its pipe is drained; the connection closes when both
 * ways are shut. An error on a side ends both directions through it — at once for the bytes
 * meant for that side, after delivering what was already read from it for the other — so
 * both sockets close on an error without losing an early answer.
 *
 * A TLS listener's down side is a TLS session over the socket, and the same pump moves its
 * plaintext: a side is read, written and shut through side_read, side_write and
 * side_shutdown, which are read(2), send(2) and shutdown(2) for a socket and SSL_read_ex,
 * SSL_write_ex and SSL_shutdown (close_notify, then the TCP FIN) for a session. A session
 * may need the socket writable to read and readable to write (a TLS 1.3 key update), so it
 * remembers what its last read and its last write wait for, and the loop waits for that.
 * A session is read only while its pipe has room for a whole record's plaintext (2^14
 * bytes): SSL_read then hands out all it decrypted, and never holds bytes back where epoll
 * cannot see them (the next are still in the socket, or a record's rest is still to come).
 * The session writes through a BIO of ours (send with MSG_NOSIGNAL: a client that resets
 * never raises SIGPIPE in pome).
 *
 * Name resolution: an address literal connects at once (getaddrinfo with AI_NUMERICHOST,
 * which never consults a resolver). A name is resolved in pome's network by the host's
 * resolver (getaddrinfo, as curl would) on a detached thread of its own, which only calls
 * getaddrinfo and writes an eventfd the loop watches: getaddrinfo can block for seconds
 * (resolv.conf's timeout × attempts × servers) and pome's loop carries every twin call of
 * the run. sd-resolve would fit sd-event better but libsystemd does not export it. At most
 * RESOLVE_MAX lookups run at once, the rest wait in order; a lookup whose connection went
 * away finishes and frees itself. The threads run with every signal blocked (sd-event's
 * signal sources stay the only takers). A fork while a lookup runs gives a child without that
 * thread, holding whatever lock it held: pome's children keep to async-signal-safe calls
 * until execve (STYLE.md), which no such lock can stall.
 *
 * Deadlines (CLOCK_MONOTONIC): a proxy request's whole head, and a TLS handshake, within
 * head_usec (then 408, or a close; a slow or silent client is dropped, not held); resolve
 * and connect within connect_usec (then 504, or a close for a forward or a TLS listener);
 * an answer of the proxy's own, and the lingering read after it (so that closing with
 * unread bytes does not reset the answer away), within LINGER_USEC. A tunnel has no idle
 * deadline: a model's streamed answer may pause for minutes, and the pod's end closes
 * everything.
 *
 * The proxy serves one request per connection for absolute-form requests: the request goes
 * up with `Connection: close`, the host's answer comes back as it is, and the connection
 * closes when the host closes. pome never parses an answer or frames a body, so it cannot
 * be made to read a message boundary differently from the host, and every byte after the
 * head goes to the host the head named.
 *
 * Nothing here logs: the records are what pome writes into the run.
 */
#include "supervisor/agentnet.h"

#include <arpa/inet.h>
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "common/json-util.h"
#include "common/timeutil.h"
#include "common/util.h"

#define PIPE_SIZE         (64u << 10) /* bytes buffered per direction of a connection */
#define CONNS_MAX         256u        /* connections open at once (past it, accepts wait) */
#define RESOLVE_MAX       8u          /* name lookups running at once */
#define ACCEPT_BURST      32u         /* accepts per wake-up of a listener */
#define PUMP_ROUNDS       16u         /* read/write rounds per wake-up of a connection */
#define LINGER_USEC       (2 * USEC_PER_SEC)
#define ACCEPT_RETRY_USEC (100 * USEC_PER_MSEC)
#define TIMER_ACCURACY    (10 * USEC_PER_MSEC)
#define ALLOW_TEXT_MAX    1024u /* bytes of the allow-list quoted in a 403 */
#define WHY_MAX           512u

typedef enum HostKind {
        HOST_NAME,
        HOST_INET,
        HOST_INET6,
} HostKind;

typedef struct HostSpec {
        HostKind kind;
        char text[256]; /* a name: lower case, no trailing dot; an address: inet_ntop's form */
        unsigned char addr[16];
} HostSpec;

typedef struct AllowEntry {
        HostSpec host; /* for a suffix, the domain after "*." */
        bool suffix;
        uint16_t port; /* 0: any */
} AllowEntry;

/* A TLS listener's route (AgentNetRoute, parsed). */
typedef struct TlsRoute {
        AllowEntry name; /* a host name, or a "*." suffix; port 0 */
        char *host;
        uint16_t port;
        char *label;
} TlsRoute;

typedef enum ListenerKind {
        LISTENER_FORWARD,
        LISTENER_TLS,
        LISTENER_PROXY,
} ListenerKind;

typedef struct Listener Listener;
struct Listener {
        AgentNet *net;
        Listener *next;
        ListenerKind kind;
        int fd;
        sd_event_source *src;
        char *host; /* forward: the target */
        uint16_t port;
        char *label;
        AllowEntry *allow; /* proxy */
        size_t n_allow;
        char *allow_text; /* "a, *.b, [::1]:443" for a 403's body */
        SSL_CTX *tls_ctx; /* TLS: the certificate, the key, the callbacks */
        TlsRoute *routes;
        size_t n_routes;
};

typedef enum ConnState {
        CONN_HEAD,       /* proxy: reading the request head */
        CONN_HANDSHAKE,  /* TLS: the server handshake */
        CONN_RESOLVING,  /* waiting for a name lookup (queued or running) */
        CONN_CONNECTING, /* a non-blocking connect in flight */
        CONN_SPLICING,   /* bytes both ways */
        CONN_REPLYING,   /* proxy: writing an answer of its own, then closing */
        CONN_LINGERING,  /* after that answer: reading what the client still sends, to EOF */
} ConnState;

/* One direction: bytes buf[start, start + len) wait to be written. */
typedef struct Pipe {
        char *buf;
        size_t start, len;
        bool eof;   /* the side it reads from said EOF (or failed) */
        bool shut;  /* the side it writes to was shut down (SHUT_WR) after the last byte */
        bool drain; /* the side it writes to is gone: what is read is dropped (pipe_kill) */
} Pipe;

/*
 * The agent's side of a TLS listener's connection: a server session over down_fd. Its
 * reads and writes say what they wait for (SSL_ERROR_WANT_READ: the socket readable,
 * WANT_WRITE: writable), the handshake's steps counting as reads.
 */
typedef struct Tls {
        SSL *ssl;
        uint32_t read_ev, write_ev; /* EPOLLIN or EPOLLOUT */
        bool broken;                /* a fatal error: no more I/O on it (SSL_get_error(3)) */
        bool hello;                 /* a ClientHello came: name holds what it asked for */
        char name[256];             /* the server name asked for, as recorded */
        const char *why;            /* why a callback failed the handshake (static) */
} Tls;

typedef struct Lookup {
        atomic_uint refs; /* the thread's and the connection's */
        int efd;          /* written once by the thread when done */
        char host[256];
        char service[8];
        struct addrinfo *res; /* the thread's result, taken by the loop */
        int gai;
        int gai_errno; /* errno for EAI_SYSTEM */
} Lookup;

typedef struct Conn Conn;
struct Conn {
        AgentNet *net;
        Listener *listener;
        Conn *prev, *next;
        ConnState state;
        int down_fd, up_fd;
        sd_event_source *down_src, *up_src, *timer;
        Pipe up;         /* agent → host */
        Pipe down;       /* host → agent */
        size_t down_own; /* bytes at the head of down that are the proxy's own answer */
        size_t head_scanned;
        char host[256];       /* the target, for getaddrinfo and the messages */
        char host_shown[260]; /* as a message shows it ([v6]) */
        uint16_t port;
        bool tunnel;    /* CONNECT: answer 200 once connected */
        bool lingering; /* both ways done, a killed way still drained until EOF or the timer */
        struct addrinfo *addrs, *addr_next;
        int connect_errno;
        Lookup *lookup;
        sd_event_source *lookup_src;
        Conn *queue_next;
        bool queued;
        bool recorded;
        json_t *rec, *rec_up, *rec_down; /* borrowed from net->records; NULL past the cap */
        uint64_t bytes_up, bytes_down;
        int64_t at_usec; /* CLOCK_REALTIME of the accept */

        Tls *tls;              /* a TLS listener's: down's session; else NULL */
        const TlsRoute *route; /* TLS: the route the server name picked */
};

struct AgentNet {
        sd_event *event;
        Listener *listeners;
        Conn *conns;
        size_t n_conns;
        Conn *queue_first, *queue_last; /* connections waiting for a lookup slot */
        unsigned n_resolving;
        sd_event_source *retry; /* re-enables the listeners after EMFILE and the like */
        bool paused;
        bool stopping;
        uint64_t head_usec, connect_usec;
        json_t *records;
        size_t allowed, refused, dropped;
};

static void conn_run(Conn *c);
static void conn_close(Conn *c, const char *why);

/* ---- hosts and the allow-list ---- */

static bool is_tchar(char ch)
{
        /* RFC 9110 §5.6.2 */
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Whether label (len bytes) reads as a number: all digits, or 0x and hex digits. */
static bool label_is_number(const char *label, size_t len)
{
        size_t i = 0;
        bool hex = len >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X');
        if (hex)
                i = 2;
        for (; i < len; i++)
                if (!(hex ? (label[i] >= '0' && label[i] <= '9') ||
                                      (label[i] >= 'a' && label[i] <= 'f') ||
                                      (label[i] >= 'A' && label[i] <= 'F')
                          : label[i] >= '0' && label[i] <= '9'))
                        return false;
        return true;
}

/*
 * Parses a host (len bytes of s): "[IPv6]", a dotted-quad IPv4 address, or a host name
 * (labels of letters, digits, '-' and '_', up to 63 bytes each, 253 in all, a trailing dot
 * dropped). A name whose last label is a number is refused: inet_aton would take "127.1",
 * "0x7f.1" or "2130706433" as an address, and a raw IP never passes as a name (the URL
 * standard refuses such hosts for the same reason). 0, or -EINVAL with a static why.
 */
static int host_parse(const char *s, size_t len, HostSpec *ret, const char **why)
{
        HostSpec h = {};
        char buf[256];

        if (len == 0) {
                *why = "no host";
                return -EINVAL;
        }
        if (s[0] == '[') {
                if (len < 3 || s[len - 1] != ']' || len - 2 >= sizeof(buf)) {
                        *why = "a malformed [IPv6] address";
                        return -EINVAL;
                }
                memcpy(buf, s + 1, len - 2);
                buf[len - 2] = 0;
                if (inet_pton(AF_INET6, buf, h.addr) != 1) {
                        *why = "not an IPv6 address in brackets";
                        return -EINVAL;
                }
                h.kind = HOST_INET6;
                if (!inet_ntop(AF_INET6, h.addr, h.text, sizeof(h.text)))
                        return -errno;
                *ret = h;
                return 0;
        }
        if (len >= sizeof(buf) - 1) {
                *why = "a host name longer than 253 bytes";
                return -EINVAL;
        }
        memcpy(buf, s, len);
        buf[len] = 0;
        if (inet_pton(AF_INET, buf, h.addr) == 1) {
                h.kind = HOST_INET;
                if (!inet_ntop(AF_INET, h.addr, h.text, sizeof(h.text)))
                        return -errno;
                *ret = h;
                return 0;
        }
        if (memmem(buf, len, "://", 3)) {
                *why = "a URL where a host belongs";
                return -EINVAL;
        }
        if (memchr(buf, ':', len)) {
                *why = "an IPv6 address must be in brackets ([::1])";
                return -EINVAL;
        }
        if (len > 1 && buf[len - 1] == '.')
                buf[--len] = 0;
        if (len > 253) {
                *why = "a host name longer than 253 bytes";
                return -EINVAL;
        }
        size_t label = 0, last = 0;
        for (size_t i = 0; i <= len; i++) {
                char ch = buf[i];
                if (i == len || ch == '.') {
                        if (i == label || i - label > 63) {
                                *why = i == label ? "an empty label in a host name"
                                                  : "a host name label longer than 63 bytes";
                                return -EINVAL;
                        }
                        last = label;
                        label = i + 1;
                        continue;
                }
                if (ch >= 'A' && ch <= 'Z')
                        buf[i] = (char)(ch - 'A' + 'a');
                else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                           ch == '_')) {
                        *why = "not a host name (letters, digits, '-', '_' and dots)";
                        return -EINVAL;
                }
        }
        if (label_is_number(buf + last, len - last)) {
                *why = "a numeric host that is not a dotted-quad IPv4 address";
                return -EINVAL;
        }
        h.kind = HOST_NAME;
        memcpy(h.text, buf, len + 1);
        *ret = h;
        return 0;
}

/* A decimal port 1–65535 (len bytes). */
static int port_parse(const char *s, size_t len, uint16_t *ret)
{
        unsigned v = 0;
        if (len == 0 || len > 5)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned)(s[i] - '0');
        }
        if (v == 0 || v > 65535)
                return -EINVAL;
        *ret = (uint16_t)v;
        return 0;
}

/*
 * Parses an authority "host[:port]" (len bytes; RFC 3986 §3.2, without userinfo). *ret_port
 * is 0 without a port; with port_required that is an error. *ret_host_len: the bytes of s
 * that are the host, also on a host error (for the record). 0 or -EINVAL with a static why.
 */
static int authority_parse(const char *s, size_t len, bool port_required, HostSpec *ret_host,
                           uint16_t *ret_port, size_t *ret_host_len, const char **why)
{
        size_t hlen = len;
        const char *port = NULL;
        size_t plen = 0;

        if (len > 0 && s[0] == '[') {
                const char *end = memchr(s, ']', len);
                if (!end) {
                        *why = "a malformed [IPv6] address";
                        return -EINVAL;
                }
                hlen = (size_t)(end - s) + 1;
                if (hlen < len) {
                        if (s[hlen] != ':') {
                                *why = "bytes after an [IPv6] address";
                                return -EINVAL;
                        }
                        port = s + hlen + 1;
                        plen = len - hlen - 1;
                }
        } else {
                const char *colon = memrchr(s, ':', len);
                if (colon) {
                        hlen = (size_t)(colon - s);
                        port = colon + 1;
                        plen = len - hlen - 1;
                }
        }
        *ret_host_len = hlen;
        if (memchr(s, '@', hlen)) {
                *why = "user information in the authority";
                return -EINVAL;
        }
        uint16_t p = 0;
        if (port && port_parse(port, plen, &p) < 0) {
                *why = "not a port 1-65535";
                return -EINVAL;
        }
        if (!port && port_required) {
                *why = "no port (CONNECT takes host:port)";
                return -EINVAL;
        }
        int r = host_parse(s, hlen, ret_host, why);
        if (r < 0)
                return r;
        *ret_port = p;
        return 0;
}

/* The host as a message or a Host field shows it: an IPv6 address in brackets. */
static void host_show(const HostSpec *h, char *buf, size_t len)
{
        if (h->kind == HOST_INET6)
                snprintf(buf, len, "[%s]", h->text);
        else
                snprintf(buf, len, "%s", h->text);
}

/* Whether e names h, port aside: the same address or name, or a subdomain of a suffix. */
static bool entry_match(const AllowEntry *e, const HostSpec *h)
{
        if (e->host.kind != h->kind)
                return false;
        switch (h->kind) {
        case HOST_INET:
                return memcmp(e->host.addr, h->addr, 4) == 0;
        case HOST_INET6:
                return memcmp(e->host.addr, h->addr, 16) == 0;
        case HOST_NAME:
                if (!e->suffix)
                        return streq(e->host.text, h->text);
                size_t hl = strlen(h->text), sl = strlen(e->host.text);
                return hl > sl + 1 && h->text[hl - sl - 1] == '.' &&
                       streq(h->text + hl - sl, e->host.text);
        }
        return false;
}

static bool allow_match(const Listener *l, const HostSpec *h, uint16_t port)
{
        for (size_t i = 0; i < l->n_allow; i++) {
                const AllowEntry *e = &l->allow[i];
                if ((!e->port || e->port == port) && entry_match(e, h))
                        return true;
        }
        return false;
}

/* The route a TLS listener has for server name h: an exact name first, then the first suffix. */
static const TlsRoute *route_find(const Listener *l, const HostSpec *h)
{
        for (int suffix = 0; suffix <= 1; suffix++)
                for (size_t i = 0; i < l->n_routes; i++)
                        if (l->routes[i].name.suffix == (suffix == 1) &&
                            entry_match(&l->routes[i].name, h))
                                return &l->routes[i];
        return NULL;
}

/* ---- records ---- */

/* Bytes as a record can hold them: printable ASCII, the rest '?', at most 255 bytes. */
static void record_text(const char *s, size_t len, char out[256])
{
        if (len > 255)
                len = 255;
        for (size_t i = 0; i < len; i++)
                out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
        out[len] = 0;
}

/*
 * Records c once (allowed or not): the host and port asked for (host NULL: none could be
 * parsed), the method of a proxy request, the proxy's own status (0: none), why. Past
 * AGENT_NET_RECORDS_MAX, or out of memory, the connection is counted as dropped.
 */
static void conn_record(Conn *c, const char *host, uint16_t port, const char *method, bool allowed,
                        int status, const char *why)
{
        AgentNet *n = c->net;
        assert(!c->recorded);
        c->recorded = true;
        if (allowed)
                n->allowed++;
        else
                n->refused++;
        if (json_array_size(n->records) >= AGENT_NET_RECORDS_MAX) {
                n->dropped++;
                return;
        }
        char at[RFC3339_MAX];
        format_rfc3339_usec(c->at_usec, at, sizeof(at));
        const char *via = NULL, *label = NULL;
        switch (c->listener->kind) {
        case LISTENER_FORWARD:
                via = "forward";
                label = c->listener->label;
                break;
        case LISTENER_TLS:
                via = "tls";
                label = c->route ? c->route->label : NULL;
                break;
        case LISTENER_PROXY:
                via = "proxy";
                break;
        }
        _cleanup_json_ json_t *o =
                json_pack("{s:s, s:b, s:I, s:I, s:s}", "via", via, "allowed", allowed, "bytes_up",
                          (json_int_t)0, "bytes_down", (json_int_t)0, "at", at);
        if (!o || (label && json_object_set_new(o, "label", json_string(label)) < 0) ||
            (host && json_object_set_new(o, "host", json_string(host)) < 0) ||
            (host && port && json_object_set_new(o, "port", json_integer(port)) < 0) ||
            (method && json_object_set_new(o, "method", json_string(method)) < 0) ||
            (status && json_object_set_new(o, "status", json_integer(status)) < 0) ||
            (why && json_object_set_new(o, "why", json_string(why)) < 0) ||
            json_array_append(n->records, o) < 0) {
                n->dropped++;
                return;
        }
        c->rec = o; /* the array holds it */
        c->rec_up = json_object_get(o, "bytes_up");
        c->rec_down = json_object_get(o, "bytes_down");
}

/* Adds the proxy's status and why to c's record (kept first: the first failure is the cause). */
static void conn_note(Conn *c, int status, const char *why)
{
        if (!c->rec)
                return;
        if (status && !json_object_get(c->rec, "status"))
                (void)json_object_set_new(c->rec, "status", json_integer(status));
        if (why && !json_object_get(c->rec, "why"))
                (void)json_object_set_new(c->rec, "why", json_string(why));
}

static void conn_count_bytes(Conn *c)
{
        if (c->rec_up)
                (void)json_integer_set(c->rec_up, (json_int_t)c->bytes_up);
        if (c->rec_down)
                (void)json_integer_set(c->rec_down, (json_int_t)c->bytes_down);
}

/* ---- listeners ---- */

static void listeners_enable(AgentNet *n, bool on)
{
        for (Listener *l = n->listeners; l; l = l->next)
                if (l->src)
                        (void)sd_event_source_set_enabled(l->src, on ? SD_EVENT_ON : SD_EVENT_OFF);
}

static int on_retry(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        AgentNet *n = userdata;
        if (n->n_conns < CONNS_MAX) {
                n->paused = false;
                listeners_enable(n, true);
        }
        return 0;
}

/* Stops accepting: until a connection closes (full) or for a while (out of fds or memory). */
static void listeners_pause(AgentNet *n, bool full)
{
        n->paused = true;
        listeners_enable(n, false);
        if (full)
                return;
        int r;
        if (n->retry)
                r = sd_event_source_set_time_relative(n->retry, ACCEPT_RETRY_USEC);
        else
                r = sd_event_add_time_relative(n->event, &n->retry, CLOCK_MONOTONIC,
                                               ACCEPT_RETRY_USEC, TIMER_ACCURACY, on_retry, n);
        if (r >= 0)
                r = sd_event_source_set_enabled(n->retry, SD_EVENT_ONESHOT);
        if (r < 0)
                /* no timer: try again at the next close, or at once if nothing is open */
                if (n->n_conns == 0) {
                        n->paused = false;
                        listeners_enable(n, true);
                }
}

static Listener *listener_free(Listener *l)
{
        if (!l)
                return NULL;
        sd_event_source_disable_unref(l->src);
        safe_close(l->fd);
        free(l->host);
        free(l->label);
        free(l->allow);
        free(l->allow_text);
        SSL_CTX_free(l->tls_ctx);
        for (size_t i = 0; i < l->n_routes; i++) {
                free(l->routes[i].host);
                free(l->routes[i].label);
        }
        free(l->routes);
        free(l);
        return NULL;
}

/* ---- connections ---- */

static int pipe_alloc(Pipe *p)
{
        if (!p->buf) {
                p->buf = malloc(PIPE_SIZE);
                if (!p->buf)
                        return -ENOMEM;
        }
        return 0;
}

static int on_conn_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* Arms c's one deadline usec from now; what it means depends on c's state (on_conn_timer). */
static int timer_arm(Conn *c, uint64_t usec)
{
        int r;
        if (!c->timer) {
                r = sd_event_add_time_relative(c->net->event, &c->timer, CLOCK_MONOTONIC, usec,
                                               TIMER_ACCURACY, on_conn_timer, c);
                if (r < 0)
                        return r;
        } else {
                r = sd_event_source_set_time_relative(c->timer, usec);
                if (r < 0)
                        return r;
        }
        return sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
}

static void lookup_unref(Lookup *l)
{
        if (l && atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1) {
                if (l->res)
                        freeaddrinfo(l->res);
                safe_close(l->efd);
                free(l);
        }
}

static void resolve_next(AgentNet *n);

/* Leaves the lookup queue or gives up a running lookup (its thread finishes alone). */
static void conn_lookup_cancel(Conn *c)
{
        AgentNet *n = c->net;
        if (c->queued) {
                Conn **pp = &n->queue_first;
                Conn *prev = NULL;
                while (*pp && *pp != c) {
                        prev = *pp;
                        pp = &(*pp)->queue_next;
                }
                if (*pp) {
                        *pp = c->queue_next;
                        if (n->queue_last == c)
                                n->queue_last = prev;
                }
                c->queued = false;
                c->queue_next = NULL;
        }
        if (c->lookup) {
                c->lookup_src = sd_event_source_disable_unref(c->lookup_src);
                lookup_unref(TAKE_PTR(c->lookup));
                assert(n->n_resolving > 0);
                n->n_resolving--;
                resolve_next(n);
        }
}

static void conn_free(Conn *c)
{
        AgentNet *n = c->net;
        /* out of the list first: cancelling a lookup starts the next one queued, whose failure
         * may free another connection, a neighbour of c's among them */
        if (c->prev)
                c->prev->next = c->next;
        else
                n->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->prev = c->next = NULL;
        n->n_conns--;
        conn_lookup_cancel(c);
        conn_count_bytes(c);
        sd_event_source_disable_unref(c->down_src);
        sd_event_source_disable_unref(c->up_src);
        sd_event_source_disable_unref(c->timer);
        if (c->tls) {
                SSL_free(c->tls->ssl); /* and its BIO; the socket is closed below */
                free(c->tls);
        }
        safe_close(c->down_fd);
        safe_close(c->up_fd);
        if (c->addrs)
                freeaddrinfo(c->addrs);
        free(c->up.buf);
        free(c->down.buf);
        free(c);
        if (n->paused && !(n->retry && sd_event_source_get_enabled(n->retry, NULL) > 0) &&
            n->n_conns < CONNS_MAX) {
                n->paused = false;
                listeners_enable(n, true);
        }
}

/*
 * Closes c. A connection never recorded (a proxy request that never got a whole head, a TLS
 * handshake that never finished: with the server name it asked for) is recorded as not
 * allowed with why; a recorded one gets why if it has none.
 */
static void conn_close(Conn *c, const char *why)
{
        if (!c->recorded)
                conn_record(c, c->tls && c->tls->hello ? c->tls->name : NULL,
                            c->route ? c->route->port : 0, NULL, false, 0, why ? why : "closed");
        else if (why)
                conn_note(c, 0, why);
        conn_free(c);
}

static int io_set(sd_event_source *s, uint32_t mask)
{
        if (!s)
                return 0;
        if (mask == 0)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        int r = sd_event_source_set_io_events(s, mask);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(s, SD_EVENT_ON);
}

/*
 * The room p needs before its source is read: any for a socket; a whole record's plaintext
 * for a TLS session (RFC 8446 §5.1, RFC 5246 §6.2.1: 2^14 bytes at most), so SSL_read never
 * keeps decrypted bytes back (read_ahead is off: OpenSSL takes one record at a time).
 */
static size_t pipe_want(const Tls *t)
{
        return t ? SSL3_RT_MAX_PLAIN_LENGTH : 1;
}

/* Whether p takes bytes from its source now (those of a killed way are read and dropped). */
static bool pipe_open(const Pipe *p, const Tls *t)
{
        return !p->eof && (p->drain || PIPE_SIZE - p->len >= pipe_want(t));
}

/* Which events each side waits for in c's state: reads only into room, writes only of bytes. */
static int conn_update_events(Conn *c)
{
        uint32_t dm = 0, um = 0;
        switch (c->state) {
        case CONN_HEAD:
        case CONN_LINGERING:
                dm = EPOLLIN;
                break;
        case CONN_HANDSHAKE:
                dm = c->tls->read_ev;
                break;
        case CONN_RESOLVING:
                break;
        case CONN_CONNECTING:
                um = EPOLLOUT;
                break;
        case CONN_SPLICING:
                if (pipe_open(&c->up, c->tls))
                        dm |= c->tls ? c->tls->read_ev : EPOLLIN;
                /* a session's close_notify may wait for room as its bytes do */
                if (c->down.len || (c->down.eof && !c->down.shut))
                        dm |= c->tls ? c->tls->write_ev : EPOLLOUT;
                if (pipe_open(&c->down, NULL))
                        um |= EPOLLIN;
                if (c->up.len)
                        um |= EPOLLOUT;
                break;
        case CONN_REPLYING:
                dm = EPOLLOUT;
                break;
        }
        int r = io_set(c->down_src, dm);
        if (r < 0)
                return r;
        return io_set(c->up_src, um);
}

/*
 * Answers the client with an answer of the proxy's own (status, body: text) and closes after
 * it: the host's side, if any, is closed at once.
 */
static void conn_reply(Conn *c, int status, const char *body)
{
        static const struct {
                int status;
                const char *reason;
        } reasons[] = {
                {200, "Connection Established"},
                {400, "Bad Request"},
                {403, "Forbidden"},
                {408, "Request Timeout"},
                {431, "Request Header Fields Too Large"},
                {502, "Bad Gateway"},
                {504, "Gateway Timeout"},
        };
        const char *reason = "Error";
        for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
                if (reasons[i].status == status)
                        reason = reasons[i].reason;

        c->up_src = sd_event_source_disable_unref(c->up_src);
        c->up_fd = safe_close(c->up_fd);
        conn_lookup_cancel(c);
        if (pipe_alloc(&c->down) < 0) {
                conn_close(c, "out of memory");
                return;
        }
        int len = snprintf(c->down.buf, PIPE_SIZE,
                           "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                           status, reason, strlen(body), body);
        if (len < 0 || (size_t)len >= PIPE_SIZE) {
                conn_close(c, "answer too long");
                return;
        }
        c->down.start = 0;
        c->down.len = (size_t)len;
        c->down_own = (size_t)len;
        c->state = CONN_REPLYING;
        if (timer_arm(c, LINGER_USEC) < 0) {
                conn_close(c, NULL);
                return;
        }
        conn_run(c);
}

/*
 * Ends c after a failure of its own: a proxy request not yet answered gets status and a body
 * saying why; a forward (or a tunnel already open) is closed.
 */
static void conn_fail(Conn *c, int status, const char *why)
{
        if (!c->recorded)
                conn_record(c, NULL, 0, NULL, false, status, why);
        else
                conn_note(c, c->listener->kind == LISTENER_PROXY ? status : 0, why);
        if (c->listener->kind == LISTENER_PROXY &&
            (c->state == CONN_HEAD || c->state == CONN_RESOLVING || c->state == CONN_CONNECTING)) {
                char body[WHY_MAX + 32];
                snprintf(body, sizeof(body), "pome: %s\n", why);
                conn_reply(c, status, body);
                return;
        }
        conn_free(c);
}

/* ---- connecting ---- */

static int on_up_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

static void conn_failf(Conn *c, int status, const char *fmt, ...) _printf_(3, 4);
static void conn_failf(Conn *c, int status, const char *fmt, ...)
{
        char why[WHY_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        conn_fail(c, status, why);
}

/* Tries the next address of c->addrs (RFC 6724 order, getaddrinfo's). */
static void conn_try_next(Conn *c)
{
        while (c->addr_next) {
                struct addrinfo *a = c->addr_next;
                c->addr_next = a->ai_next;
                _cleanup_close_ int fd =
                        socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0) {
                        c->connect_errno = errno;
                        continue;
                }
                if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
                        c->connect_errno = errno;
                        continue;
                }
                int r = sd_event_add_io(c->net->event, &c->up_src, fd, EPOLLOUT, on_up_io, c);
                if (r < 0) {
                        conn_failf(c, 502, "connect %s:%u: %s", c->host_shown, c->port,
                                   strerror(-r));
                        return;
                }
                c->up_fd = TAKE_FD(fd);
                c->state = CONN_CONNECTING;
                if (conn_update_events(c) < 0)
                        conn_close(c, "sd-event");
                return;
        }
        conn_failf(c, 502, "connect %s:%u: %s", c->host_shown, c->port,
                   strerror(c->connect_errno ? c->connect_errno : EHOSTUNREACH));
}

/* The connection is made: splice, after the 200 of a CONNECT. */
static void conn_connected(Conn *c)
{
        static const char established[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
        int one = 1;
        (void)setsockopt(c->up_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        (void)setsockopt(c->down_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (pipe_alloc(&c->up) < 0 || pipe_alloc(&c->down) < 0) {
                conn_fail(c, 502, "out of memory");
                return;
        }
        if (c->tunnel) {
                memcpy(c->down.buf, established, sizeof(established) - 1);
                c->down.start = 0;
                c->down.len = c->down_own = sizeof(established) - 1;
                conn_note(c, 200, NULL);
        }
        c->timer = sd_event_source_disable_unref(c->timer);
        c->state = CONN_SPLICING;
        conn_run(c);
}

static void conn_connect_done(Conn *c)
{
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(c->up_fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
        if (err == 0) {
                conn_connected(c);
                return;
        }
        c->connect_errno = err;
        c->up_src = sd_event_source_disable_unref(c->up_src);
        c->up_fd = safe_close(c->up_fd);
        conn_try_next(c);
}

static void conn_addresses(Conn *c, struct addrinfo *res)
{
        if (c->addrs)
                freeaddrinfo(c->addrs);
        c->addrs = c->addr_next = res;
        c->connect_errno = 0;
        conn_try_next(c);
}

static int on_lookup(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                     void *userdata)
{
        Conn *c = userdata;
        AgentNet *n = c->net;
        Lookup *l = TAKE_PTR(c->lookup);
        c->lookup_src = sd_event_source_disable_unref(c->lookup_src);
        assert(n->n_resolving > 0);
        n->n_resolving--;
        struct addrinfo *res = TAKE_PTR(l->res);
        int gai = l->gai, gai_errno = l->gai_errno;
        lookup_unref(l);
        resolve_next(n);
        if (gai != 0) {
                if (res)
                        freeaddrinfo(res);
                conn_failf(c, 502, "resolve %s: %s", c->host,
                           gai == EAI_SYSTEM ? strerror(gai_errno) : gai_strerror(gai));
                return 0;
        }
        conn_addresses(c, res);
        return 0;
}

static void *lookup_thread(void *userdata)
{
        Lookup *l = userdata;
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        l->gai = getaddrinfo(l->host, l->service, &hints, &l->res);
        if (l->gai == EAI_SYSTEM)
                l->gai_errno = errno;
        uint64_t one = 1;
        (void)!write(l->efd, &one, sizeof(one));
        lookup_unref(l);
        return NULL;
}

/* Starts c's lookup on a thread of its own. */
static void conn_lookup_start(Conn *c)
{
        AgentNet *n = c->net;
        int r;
        Lookup *l = calloc(1, sizeof(*l));
        if (!l) {
                conn_fail(c, 502, "out of memory");
                return;
        }
        atomic_init(&l->refs, 1);
        snprintf(l->host, sizeof(l->host), "%s", c->host);
        snprintf(l->service, sizeof(l->service), "%u", c->port);
        l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->efd < 0) {
                r = -errno;
                lookup_unref(l);
                conn_failf(c, 502, "resolve %s: %s", c->host, strerror(-r));
                return;
        }
        r = sd_event_add_io(n->event, &c->lookup_src, l->efd, EPOLLIN, on_lookup, c);
        if (r < 0) {
                lookup_unref(l);
                conn_failf(c, 502, "resolve %s: %s", c->host, strerror(-r));
                return;
        }
        c->lookup = l;
        n->n_resolving++;

        pthread_attr_t attr;
        sigset_t all, old;
        pthread_t t;
        r = pthread_attr_init(&attr);
        if (r == 0) {
                (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                sigfillset(&all);
                (void)pthread_sigmask(SIG_SETMASK, &all, &old);
                atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed); /* the thread's */
                r = pthread_create(&t, &attr, lookup_thread, l);
                (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (r != 0)
                        atomic_fetch_sub_explicit(&l->refs, 1, memory_order_relaxed);
                (void)pthread_attr_destroy(&attr);
        }
        if (r != 0) {
                conn_lookup_cancel(c);
                conn_failf(c, 502, "resolve %s: %s", c->host, strerror(r));
        }
}

/* Starts queued lookups while fewer than RESOLVE_MAX run. */
static void resolve_next(AgentNet *n)
{
        while (!n->stopping && n->n_resolving < RESOLVE_MAX && n->queue_first) {
                Conn *c = n->queue_first;
                n->queue_first = c->queue_next;
                if (!n->queue_first)
                        n->queue_last = NULL;
                c->queue_next = NULL;
                c->queued = false;
                conn_lookup_start(c);
        }
}

/*
 * Opens c's connection to c->host:c->port: an address literal at once (AI_NUMERICHOST never
 * asks a resolver), a name through a lookup. Bounded by the connect deadline.
 */
static void conn_start(Conn *c)
{
        AgentNet *n = c->net;
        char service[8];
        struct addrinfo *res = NULL;
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};

        c->state = CONN_RESOLVING;
        if (timer_arm(c, n->connect_usec) < 0) {
                conn_fail(c, 502, "sd-event timer");
                return;
        }
        snprintf(service, sizeof(service), "%u", c->port);
        int gai = getaddrinfo(c->host, service, &hints, &res);
        if (gai == 0) {
                conn_addresses(c, res);
                return;
        }
        if (gai != EAI_NONAME) {
                conn_failf(c, 502, "resolve %s: %s", c->host, gai_strerror(gai));
                return;
        }
        if (conn_update_events(c) < 0) {
                conn_close(c, "sd-event");
                return;
        }
        c->queued = true;
        if (n->queue_last)
                n->queue_last->queue_next = c;
        else
                n->queue_first = c;
        n->queue_last = c;
        resolve_next(n);
}

/* ---- the proxy's request head (RFC 9112 §2–§5) ---- */

typedef struct Request {
        char method[32];
        char version[9];
        bool connect;
        HostSpec host;
        uint16_t port;
        const char *authority; /* absolute-form: as written, for the Host field */
        size_t authority_len;
        const char *path; /* absolute-form: what follows the authority (may be empty) */
        size_t path_len;
        size_t fields;        /* offset of the first field line */
        const char *bad_host; /* a host that did not parse, for the record */
        size_t bad_host_len;
} Request;

/*
 * The offset just past the empty line that ends the head in buf[0, len), or 0 while it has
 * not come. Lines end in CRLF or a bare LF (RFC 9112 §2.2), empty lines before the request
 * line are skipped. *scanned is where to resume on the next call.
 */
static size_t head_end(const char *buf, size_t len, size_t *scanned)
{
        size_t start = 0;
        while (start < len && (buf[start] == '\r' || buf[start] == '\n'))
                start++;
        for (size_t i = *scanned > start ? *scanned : start; i < len; i++) {
                if (buf[i] != '\n')
                        continue;
                if (i + 1 < len && buf[i + 1] == '\n')
                        return i + 2;
                if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
                        return i + 3;
                if (i + 2 >= len) {
                        *scanned = i;
                        return 0;
                }
        }
        *scanned = len;
        return 0;
}

/* The next line of buf[*pos, end): its bytes without CRLF/LF in *ret, *ret_len. */
static bool head_line(const char *buf, size_t end, size_t *pos, const char **ret, size_t *ret_len)
{
        if (*pos >= end)
                return false;
        const char *nl = memchr(buf + *pos, '\n', end - *pos);
        if (!nl)
                return false;
        size_t l = (size_t)(nl - (buf + *pos));
        *ret = buf + *pos;
        *pos += l + 1;
        if (l > 0 && (*ret)[l - 1] == '\r')
                l--;
        *ret_len = l;
        return true;
}

/*
 * Parses the head buf[0, head_len): the request line (RFC 9112 §3) with a CONNECT's
 * authority-form (§3.2.3) or an absolute-form http:// target (§3.2.2), and checks every
 * field line (§5: a name, a colon, no obs-fold, no CR, no NUL). 0, or -EINVAL with a static
 * why for a 400.
 */
static int request_parse(const char *buf, size_t head_len, Request *q, const char **why)
{
        size_t pos = 0;
        const char *line;
        size_t len;

        *q = (Request){};
        if (memchr(buf, 0, head_len)) {
                *why = "a NUL byte in the request head";
                return -EINVAL;
        }
        while (pos < head_len && (buf[pos] == '\r' || buf[pos] == '\n'))
                pos++;
        if (!head_line(buf, head_len, &pos, &line, &len)) {
                *why = "no request line";
                return -EINVAL;
        }
        if (memchr(line, '\r', len)) {
                *why = "a bare CR in the request line";
                return -EINVAL;
        }
        const char *sp1 = memchr(line, ' ', len);
        const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line)) : NULL;
        if (!sp1 || !sp2 || memchr(sp2 + 1, ' ', len - (size_t)(sp2 + 1 - line))) {
                *why = "not a request line (METHOD target HTTP/1.1)";
                return -EINVAL;
        }
        size_t mlen = (size_t)(sp1 - line);
        const char *target = sp1 + 1;
        size_t tlen = (size_t)(sp2 - target);
        const char *version = sp2 + 1;
        size_t vlen = len - (size_t)(version - line);
        if (mlen == 0 || mlen >= sizeof(q->method)) {
                *why = "no method, or a method longer than 31 bytes";
                return -EINVAL;
        }
        for (size_t i = 0; i < mlen; i++)
                if (!is_tchar(line[i])) {
                        *why = "a method that is not a token";
                        return -EINVAL;
                }
        memcpy(q->method, line, mlen);
        if (!(vlen == 8 &&
              (memcmp(version, "HTTP/1.1", 8) == 0 || memcmp(version, "HTTP/1.0", 8) == 0))) {
                *why = "not HTTP/1.1 or HTTP/1.0";
                return -EINVAL;
        }
        memcpy(q->version, version, 8);
        if (tlen == 0) {
                *why = "an empty request target";
                return -EINVAL;
        }
        for (size_t i = 0; i < tlen; i++)
                if ((unsigned char)target[i] <= 0x20 || (unsigned char)target[i] >= 0x7f) {
                        *why = "a request target with a control or non-ASCII byte";
                        return -EINVAL;
                }
        q->fields = pos;
        while (head_line(buf, head_len, &pos, &line, &len) && len > 0) {
                if (line[0] == ' ' || line[0] == '\t') {
                        *why = "a folded header field (obs-fold)";
                        return -EINVAL;
                }
                if (memchr(line, '\r', len)) {
                        *why = "a bare CR in a header field";
                        return -EINVAL;
                }
                size_t i = 0;
                while (i < len && is_tchar(line[i]))
                        i++;
                if (i == 0 || i == len || line[i] != ':') {
                        *why = "a header field without a name and a colon";
                        return -EINVAL;
                }
        }

        size_t hlen = 0;
        int r;
        if (streq(q->method, "CONNECT")) {
                q->connect = true;
                r = authority_parse(target, tlen, true, &q->host, &q->port, &hlen, why);
                if (r < 0) {
                        q->bad_host = target;
                        q->bad_host_len = hlen;
                        return r;
                }
                return 0;
        }
        if (target[0] == '/' || (tlen == 1 && target[0] == '*')) {
                *why = "not a proxy request: the target has no host (origin-form; a proxy "
                       "takes http://host/path or CONNECT host:port)";
                return -EINVAL;
        }
        if (tlen >= 8 && strncasecmp(target, "https://", 8) == 0) {
                *why = "an https:// target: HTTPS goes through CONNECT";
                return -EINVAL;
        }
        if (tlen < 7 || strncasecmp(target, "http://", 7) != 0) {
                *why = "not an absolute http:// target";
                return -EINVAL;
        }
        const char *auth = target + 7;
        size_t rest = tlen - 7, alen = 0;
        while (alen < rest && !strchr("/?#", auth[alen]))
                alen++;
        if (memchr(target, '#', tlen)) {
                *why = "a fragment in the request target";
                return -EINVAL;
        }
        r = authority_parse(auth, alen, false, &q->host, &q->port, &hlen, why);
        if (r < 0) {
                q->bad_host = auth;
                q->bad_host_len = hlen;
                return r;
        }
        if (q->port == 0)
                q->port = 80;
        q->authority = auth;
        q->authority_len = alen;
        q->path = auth + alen;
        q->path_len = rest - alen;
        return 0;
}

/* Hop-by-hop fields (RFC 9110 §7.6.1) and Host, which the proxy writes anew (RFC 9112 §3.2.2). */
static bool field_dropped(const char *line, size_t len)
{
        static const char *const dropped[] = {
                "host", "connection", "proxy-connection",   "keep-alive",
                "te",   "upgrade",    "proxy-authorization"};
        const char *colon = memchr(line, ':', len);
        size_t nlen = colon ? (size_t)(colon - line) : len;
        for (size_t i = 0; i < ELEMENTSOF(dropped); i++)
                if (strlen(dropped[i]) == nlen && strncasecmp(line, dropped[i], nlen) == 0)
                        return true;
        return false;
}

/*
 * Writes the request to send up for an absolute-form request (RFC 9112 §3.2.2): the request
 * line with the origin-form target ("/" for an empty path), the fields as received but the
 * hop-by-hop ones and Host, a Host field from the target's authority, `Connection: close`,
 * then the extra bytes that came after the head (the body's start). 0 or -E2BIG.
 */
static int request_rewrite(const Request *q, const char *buf, size_t head_len, const char *extra,
                           size_t extra_len, char *out, size_t cap, size_t *ret_len)
{
        size_t o = 0;
#define PUT(p, l)                         \
        do {                              \
                size_t _l = (l);          \
                if (_l > cap - o)         \
                        return -E2BIG;    \
                memcpy(out + o, (p), _l); \
                o += _l;                  \
        } while (0)
#define PUTS(s) PUT((s), strlen(s))
        PUTS(q->method);
        PUTS(" ");
        if (q->path_len == 0 || q->path[0] != '/')
                PUTS("/");
        PUT(q->path, q->path_len);
        PUTS(" ");
        PUTS(q->version);
        PUTS("\r\n");
        size_t pos = q->fields;
        const char *line;
        size_t len;
        while (head_line(buf, head_len, &pos, &line, &len) && len > 0) {
                if (field_dropped(line, len))
                        continue;
                PUT(line, len);
                PUTS("\r\n");
        }
        PUTS("Host: ");
        PUT(q->authority, q->authority_len);
        PUTS("\r\nConnection: close\r\n\r\n");
        PUT(extra, extra_len);
#undef PUTS
#undef PUT
        *ret_len = o;
        return 0;
}

/* The 403's body: what was asked, why not, what is allowed and how to allow more. */
static void refusal_body(const Listener *l, const HostSpec *h, uint16_t port, char *buf, size_t len)
{
        char shown[260];
        host_show(h, shown, sizeof(shown));
        const char *literal = h->kind == HOST_NAME
                                      ? ""
                                      : " (an address literal passes only when the list names "
                                        "that address)";
        if (l->n_allow == 0)
                snprintf(buf, len,
                         "pome: %s:%u is not allowed%s: the agent pod may reach no host through "
                         "this proxy; pass --allow-net HOST to allow one\n",
                         shown, port, literal);
        else
                snprintf(buf, len,
                         "pome: %s:%u is not allowed%s: the agent pod may reach only: %s; pass "
                         "--allow-net HOST to allow another\n",
                         shown, port, literal, l->allow_text);
}

/* A whole head has come: decide, and answer or connect. */
static void proxy_decide(Conn *c, size_t head_len)
{
        const Listener *l = c->listener;
        const char *why = NULL;
        Request q;
        int r = request_parse(c->up.buf, head_len, &q, &why);
        if (r < 0) {
                if (!why)
                        why = "a malformed request";
                char host[256], body[WHY_MAX];
                if (q.bad_host_len > 0)
                        record_text(q.bad_host, q.bad_host_len, host);
                conn_record(c, q.bad_host_len > 0 ? host : NULL, q.port,
                            q.method[0] ? q.method : NULL, false, 400, why);
                snprintf(body, sizeof(body), "pome: a bad proxy request: %s\n", why);
                conn_reply(c, 400, body);
                return;
        }
        if (!allow_match(l, &q.host, q.port)) {
                char body[ALLOW_TEXT_MAX + 512];
                conn_record(c, q.host.text, q.port, q.method, false, 403,
                            q.host.kind == HOST_NAME ? "not in the allow-list"
                                                     : "an address literal not in the allow-list");
                refusal_body(l, &q.host, q.port, body, sizeof(body));
                conn_reply(c, 403, body);
                return;
        }
        conn_record(c, q.host.text, q.port, q.method, true, 0, NULL);
        snprintf(c->host, sizeof(c->host), "%s", q.host.text);
        host_show(&q.host, c->host_shown, sizeof(c->host_shown));
        c->port = q.port;
        size_t extra = c->up.len - head_len;
        if (q.connect) {
                c->tunnel = true;
                memmove(c->up.buf, c->up.buf + head_len, extra);
                c->up.len = extra;
        } else {
                char *out = malloc(PIPE_SIZE);
                size_t len;
                if (!out) {
                        conn_fail(c, 502, "out of memory");
                        return;
                }
                r = request_rewrite(&q, c->up.buf, head_len, c->up.buf + head_len, extra, out,
                                    PIPE_SIZE, &len);
                if (r < 0) {
                        free(out);
                        conn_fail(c, 431, "the rewritten request head is too large");
                        return;
                }
                free(c->up.buf);
                c->up.buf = out;
                c->up.len = len;
        }
        c->up.start = 0;
        c->timer = sd_event_source_disable_unref(c->timer);
        conn_start(c);
}

/* Reads the request head, at most AGENT_NET_HEADER_MAX bytes. */
static void head_run(Conn *c)
{
        for (;;) {
                size_t room = AGENT_NET_HEADER_MAX - c->up.len;
                if (room == 0) {
                        conn_failf(c, 431, "a request head longer than %u bytes",
                                   AGENT_NET_HEADER_MAX);
                        return;
                }
                ssize_t k = read(c->down_fd, c->up.buf + c->up.len, room);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        conn_close(c, "the client's connection failed before a whole request head");
                        return;
                }
                if (k == 0) {
                        conn_close(c, "closed before a complete request head");
                        return;
                }
                c->up.len += (size_t)k;
                size_t end = head_end(c->up.buf, c->up.len, &c->head_scanned);
                if (end > 0) {
                        proxy_decide(c, end);
                        return;
                }
        }
        if (conn_update_events(c) < 0)
                conn_close(c, "sd-event");
}

/* ---- a side: a socket, or a TLS session over one ---- */

/*
 * After a failed SSL_* call: -1 with errno EAGAIN when it waits (*ev: for what), 0 for the
 * peer's close_notify (or its TCP EOF: SSL_OP_IGNORE_UNEXPECTED_EOF), else -1 with errno and
 * the session broken. OpenSSL's error queue is left empty: it is the thread's, shared with
 * every other user of OpenSSL in pome.
 */
static ssize_t tls_failed(Tls *t, int ret, uint32_t *ev)
{
        int saved = errno;
        int e = SSL_get_error(t->ssl, ret);
        ERR_clear_error();
        switch (e) {
        case SSL_ERROR_WANT_READ:
                *ev = EPOLLIN;
                errno = EAGAIN;
                return -1;
        case SSL_ERROR_WANT_WRITE:
                *ev = EPOLLOUT;
                errno = EAGAIN;
                return -1;
        case SSL_ERROR_ZERO_RETURN:
                return 0;
        case SSL_ERROR_SYSCALL:
                t->broken = true;
                errno = saved ? saved : ECONNRESET;
                return -1;
        default:
                t->broken = true;
                errno = EPROTO;
                return -1;
        }
}

/* read(2) of a side: its socket's, or its session's plaintext. */
static ssize_t side_read(int fd, Tls *t, void *buf, size_t len)
{
        if (!t)
                return read(fd, buf, len);
        if (t->broken) {
                errno = EPIPE;
                return -1;
        }
        size_t got;
        ERR_clear_error();
        if (SSL_read_ex(t->ssl, buf, len, &got) == 1) {
                /* pipe_want: nothing decrypted is left behind the socket's back */
                assert(len < SSL3_RT_MAX_PLAIN_LENGTH || SSL_pending(t->ssl) == 0);
                return (ssize_t)got;
        }
        return tls_failed(t, 0, &t->read_ev);
}

/* send(2) of a side, never blocking and never raising SIGPIPE. */
static ssize_t side_write(int fd, Tls *t, const void *buf, size_t len)
{
        if (!t)
                return send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (t->broken) {
                errno = EPIPE;
                return -1;
        }
        size_t done;
        ERR_clear_error();
        if (SSL_write_ex(t->ssl, buf, len, &done) == 1)
                return (ssize_t)done;
        ssize_t k = tls_failed(t, 0, &t->write_ev);
        if (k == 0) {
                t->broken = true;
                errno = EPIPE;
                k = -1;
        }
        return k;
}

/*
 * Ends a side's writing: shutdown(SHUT_WR) of a socket; a session's close_notify (RFC 8446
 * §6.1), then the TCP FIN, for clients that wait for either. 0, -EAGAIN while the
 * close_notify waits for room, or -errno.
 */
static int side_shutdown(int fd, Tls *t)
{
        if (t) {
                if (t->broken)
                        return -EPIPE;
                ERR_clear_error();
                int k = SSL_shutdown(t->ssl);
                if (k < 0 && tls_failed(t, k, &t->write_ev) < 0)
                        return -errno;
        }
        return shutdown(fd, SHUT_WR) < 0 ? -errno : 0;
}

/* ---- splicing ---- */

/*
 * Reads from fd (through t, if not NULL) into p while it has room (pipe_want; *progress set
 * when something happened). A read error ends the direction like an EOF: what p holds is
 * still delivered.
 */
static void pipe_fill(Pipe *p, int fd, Tls *t, bool *progress)
{
        if (!pipe_open(p, t))
                return;
        if (p->drain) {
                ssize_t k = side_read(fd, t, p->buf, PIPE_SIZE);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (k <= 0)
                        p->eof = true;
                *progress = true;
                return;
        }
        if (p->len == 0)
                p->start = 0;
        else if (PIPE_SIZE - p->start - p->len < pipe_want(t)) {
                memmove(p->buf, p->buf + p->start, p->len);
                p->start = 0;
        }
        ssize_t k = side_read(fd, t, p->buf + p->start + p->len, PIPE_SIZE - p->start - p->len);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (k <= 0)
                p->eof = true;
        else
                p->len += (size_t)k;
        *progress = true;
}

/*
 * The side p writes to is gone: p's bytes have nowhere to go. What its source still sends is
 * read and dropped rather than left unread: closing a socket with unread bytes resets it,
 * and a reset throws away what the kernel has not yet delivered the other way (the end of
 * an answer the host gave before it went).
 */
static void pipe_kill(Pipe *p)
{
        p->start = p->len = 0;
        p->shut = p->drain = true;
}

/*
 * Writes p's bytes to fd (through t, if not NULL), then shuts fd's writing down once p is
 * drained after an EOF. *own: bytes at p's head that are not counted (the proxy's own
 * answer). A write error kills the direction (pipe_kill) and returns -errno.
 */
static int pipe_flush(Pipe *p, int fd, Tls *t, uint64_t *count, size_t *own, bool *progress)
{
        if (p->len > 0) {
                /* a session retried after WANT_WRITE gets the same bytes, perhaps moved
                 * (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER) and with more after them */
                ssize_t k = side_write(fd, t, p->buf + p->start, p->len);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                if (k < 0) {
                        int r = -errno;
                        pipe_kill(p);
                        *progress = true;
                        return r;
                }
                size_t mine = own ? (*own < (size_t)k ? *own : (size_t)k) : 0;
                if (own)
                        *own -= mine;
                *count += (size_t)k - mine;
                p->start += (size_t)k;
                p->len -= (size_t)k;
                if (p->len == 0)
                        p->start = 0;
                *progress = true;
        }
        if (p->eof && p->len == 0 && !p->shut) {
                int r = side_shutdown(fd, t);
                if (r == -EAGAIN)
                        return 0;
                p->shut = true;
                *progress = true;
                return r;
        }
        return 0;
}

/*
 * Moves bytes both ways. 1 when both ways are done, 2 when only a killed way is still being
 * drained, 0 to wait. An error on a side ends the
 * directions through it (a failed read as an EOF, a failed write drops what was for that
 * side) while the other direction delivers what it already holds: a host that answers early
 * and resets (a 413 to an upload) still has its answer reach the agent. Then both close.
 */
static int splice_run(Conn *c)
{
        for (unsigned round = 0; round < PUMP_ROUNDS; round++) {
                bool progress = false;
                pipe_fill(&c->up, c->down_fd, c->tls, &progress);
                (void)pipe_flush(&c->up, c->up_fd, NULL, &c->bytes_up, NULL, &progress);
                pipe_fill(&c->down, c->up_fd, NULL, &progress);
                (void)pipe_flush(&c->down, c->down_fd, c->tls, &c->bytes_down, &c->down_own,
                                 &progress);
                if (!progress)
                        break;
        }
        if (!c->up.shut || !c->down.shut)
                return 0;
        /* a killed way is drained to its EOF (pipe_kill), for LINGER_USEC at most */
        return (c->up.drain && !c->up.eof) || (c->down.drain && !c->down.eof) ? 2 : 1;
}

/* Reads and drops what the client sends after the answer. 1 when c was freed (EOF, error). */
static int linger_run(Conn *c)
{
        for (unsigned i = 0; i < PUMP_ROUNDS; i++) {
                char sink[4096];
                ssize_t k = read(c->down_fd, sink, sizeof(sink));
                if (k > 0)
                        continue;
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                conn_free(c);
                return 1;
        }
        return 0;
}

/* ---- TLS (RFC 8446, RFC 5246; OpenSSL's conventions turned into ours here) ---- */

/*
 * The BIO a session reads and writes its socket through: OpenSSL's socket BIO writes with
 * write(2), which raises SIGPIPE when the client has reset; this one sends with MSG_NOSIGNAL.
 * Its data is the fd; BIO_FLAGS_IN_EOF marks the client's EOF (BIO_eof), which
 * SSL_OP_IGNORE_UNEXPECTED_EOF turns into a close_notify.
 */
static int tls_bio_write(BIO *b, const char *buf, size_t len, size_t *written)
{
        BIO_clear_retry_flags(b);
        ssize_t k = send((int)(intptr_t)BIO_get_data(b), buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        BIO_set_retry_write(b);
                return 0;
        }
        *written = (size_t)k;
        return 1;
}

static int tls_bio_read(BIO *b, char *buf, size_t len, size_t *got)
{
        BIO_clear_retry_flags(b);
        ssize_t k = recv((int)(intptr_t)BIO_get_data(b), buf, len, MSG_DONTWAIT);
        if (k < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        BIO_set_retry_read(b);
                return 0;
        }
        if (k == 0) {
                BIO_set_flags(b, BIO_FLAGS_IN_EOF);
                return 0;
        }
        *got = (size_t)k;
        return 1;
}

static long tls_bio_ctrl(BIO *b, int cmd, long num _unused_, void *ptr _unused_)
{
        switch (cmd) {
        case BIO_CTRL_FLUSH:
                return 1;
        case BIO_CTRL_EOF:
                return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
        default:
                return 0;
        }
}

static BIO_METHOD *tls_bio_method;
static pthread_once_t tls_bio_once = PTHREAD_ONCE_INIT;

/* Made once for the process (BIO type indexes are few), never freed. */
static void tls_bio_init(void)
{
        int index = BIO_get_new_index();
        BIO_METHOD *m =
                index < 0 ? NULL : BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "pome agent socket");
        if (!m)
                return;
        if (!BIO_meth_set_write_ex(m, tls_bio_write) || !BIO_meth_set_read_ex(m, tls_bio_read) ||
            !BIO_meth_set_ctrl(m, tls_bio_ctrl)) {
                BIO_meth_free(m);
                return;
        }
        tls_bio_method = m;
}

/*
 * The ClientHello's server name picks the route (RFC 6066 §3: a host name, compared
 * case-insensitively, host_parse lowering it and dropping a trailing dot). None, or one no
 * route serves, fails the handshake with unrecognized_name (OpenSSL calls this without a
 * server name too).
 */
static int on_tls_name(SSL *ssl, int *alert, void *arg _unused_)
{
        Conn *c = SSL_get_app_data(ssl);
        Tls *t = c->tls;
        const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        HostSpec h;
        const char *why = NULL;

        t->hello = true;
        c->route = NULL;
        *alert = SSL_AD_UNRECOGNIZED_NAME;
        if (!name) {
                snprintf(t->name, sizeof(t->name), "(no SNI)");
                t->why = "no server name (SNI) in the TLS ClientHello";
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        }
        if (host_parse(name, strlen(name), &h, &why) < 0 || h.kind != HOST_NAME) {
                record_text(name, strlen(name), t->name);
                t->why = "a TLS server name that is not a host name";
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        }
        snprintf(t->name, sizeof(t->name), "%s", h.text);
        c->route = route_find(c->listener, &h);
        if (!c->route) {
                t->why = "no TLS route serves this server name";
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        }
        return SSL_TLSEXT_ERR_OK;
}

/*
 * ALPN (RFC 7301 §3.2): "http/1.1" when the client offers it; a client that offers only
 * other protocols (h2) gets no_application_protocol, since pome passes HTTP/1.1 bytes and
 * never speaks HTTP/2. Not called when the client offers none.
 */
static int on_tls_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg _unused_)
{
        for (unsigned i = 0; i < inlen && in[i] > 0 && i + 1u + in[i] <= inlen; i += 1u + in[i])
                if (in[i] == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
                        *out = in + i + 1;
                        *outlen = 8;
                        return SSL_TLSEXT_ERR_OK;
                }
        Conn *c = SSL_get_app_data(ssl);
        c->tls->why = "the client offers ALPN protocols without http/1.1 (pome passes HTTP/1.1, "
                      "never h2)";
        return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static void ssl_ctx_freep(SSL_CTX **p)
{
        SSL_CTX_free(*p);
}

static void bio_freep(BIO **p)
{
        BIO_free(*p);
}

static void x509_freep(X509 **p)
{
        X509_free(*p);
}

static void evp_pkey_freep(EVP_PKEY **p)
{
        EVP_PKEY_free(*p);
}

static int no_passphrase(char *buf _unused_, int size _unused_, int rwflag _unused_,
                         void *u _unused_)
{
        return -1; /* an encrypted key is refused, never asked for on a terminal */
}

/* "what: OpenSSL's reason" into err, the error queue emptied. -EINVAL. */
static int tls_error(char *err, size_t errlen, const char *what)
{
        unsigned long e = ERR_peek_last_error();
        const char *reason = e ? ERR_reason_error_string(e) : NULL;
        if (err && errlen)
                snprintf(err, errlen, "%s: %s", what, reason ? reason : "an OpenSSL error");
        ERR_clear_error();
        return -EINVAL;
}

/*
 * A TLS listener's context: TLS 1.2 and 1.3 only; no renegotiation (RFC 5746 aside, nothing
 * here needs it); no session tickets or cache, so every connection is a full handshake that
 * runs on_tls_name and nothing is kept between connections; an unexpected EOF read as a
 * close_notify (the client's TCP half-close passes as a forward's does); partial writes and
 * a write buffer that may move between retries, as the pipes need; buffers released while
 * a session is idle (a long-lived streamed answer costs a pipe, not also a session's 50
 * KiB). The leaf is cert_pem's first certificate, the rest its chain.
 */
static int tls_ctx_new(const char *cert_pem, const char *key_pem, SSL_CTX **ret, char *err,
                       size_t errlen)
{
        ERR_clear_error();
        _cleanup_(ssl_ctx_freep) SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
        _cleanup_(bio_freep) BIO *certs = BIO_new_mem_buf(cert_pem, -1);
        _cleanup_(bio_freep) BIO *keys = BIO_new_mem_buf(key_pem, -1);
        if (!ctx || !certs || !keys) {
                ERR_clear_error();
                return -ENOMEM;
        }
        if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION))
                return tls_error(err, errlen, "TLS versions");
        SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET |
                                         SSL_OP_IGNORE_UNEXPECTED_EOF);
        (void)SSL_CTX_set_num_tickets(ctx, 0);
        (void)SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        (void)SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                            SSL_MODE_RELEASE_BUFFERS);
        SSL_CTX_set_tlsext_servername_callback(ctx, on_tls_name);
        SSL_CTX_set_alpn_select_cb(ctx, on_tls_alpn, NULL);

        _cleanup_(x509_freep) X509 *leaf = PEM_read_bio_X509(certs, NULL, no_passphrase, NULL);
        if (!leaf || !SSL_CTX_use_certificate(ctx, leaf))
                return tls_error(err, errlen, "TLS certificate");
        for (;;) {
                X509 *x = PEM_read_bio_X509(certs, NULL, no_passphrase, NULL);
                if (!x)
                        break;
                if (!SSL_CTX_add0_chain_cert(ctx, x)) { /* takes x when it succeeds */
                        X509_free(x);
                        return tls_error(err, errlen, "TLS certificate chain");
                }
        }
        /* the end of the text ends the chain (no more PEM lines); anything else is an error */
        unsigned long e = ERR_peek_last_error();
        if (e && !(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE))
                return tls_error(err, errlen, "TLS certificate chain");
        ERR_clear_error();
        _cleanup_(evp_pkey_freep) EVP_PKEY *key =
                PEM_read_bio_PrivateKey(keys, NULL, no_passphrase, NULL);
        if (!key || !SSL_CTX_use_PrivateKey(ctx, key) || !SSL_CTX_check_private_key(ctx))
                return tls_error(err, errlen, "TLS key");
        *ret = TAKE_PTR(ctx);
        return 0;
}

/* c's session over its accepted socket, in the server's role. */
static int tls_start(Conn *c)
{
        pthread_once(&tls_bio_once, tls_bio_init);
        if (!tls_bio_method)
                return -ENOMEM;
        c->tls = calloc(1, sizeof(*c->tls));
        if (!c->tls)
                return -ENOMEM;
        c->tls->read_ev = EPOLLIN;
        c->tls->write_ev = EPOLLOUT;
        c->tls->ssl = SSL_new(c->listener->tls_ctx);
        BIO *b = BIO_new(tls_bio_method);
        if (!c->tls->ssl || !b) {
                BIO_free(b);
                ERR_clear_error();
                return -ENOMEM;
        }
        BIO_set_data(b, (void *)(intptr_t)c->down_fd);
        BIO_set_init(b, 1);
        SSL_set_bio(c->tls->ssl, b, b); /* takes b */
        SSL_set_app_data(c->tls->ssl, c);
        SSL_set_accept_state(c->tls->ssl);
        return 0;
}

/* The handshake is done: record the route taken, connect to its host. */
static void tls_accepted(Conn *c)
{
        const TlsRoute *r = c->route;
        assert(r); /* on_tls_name fails every handshake it did not route */
        conn_record(c, c->tls->name, r->port, NULL, true, 0, NULL);
        snprintf(c->host, sizeof(c->host), "%s", r->host);
        snprintf(c->host_shown, sizeof(c->host_shown), strchr(r->host, ':') ? "[%s]" : "%s",
                 r->host);
        c->port = r->port;
        conn_start(c);
}

/* Runs the server handshake as far as the socket lets it. May free c. */
static void tls_handshake_run(Conn *c)
{
        Tls *t = c->tls;
        ERR_clear_error();
        int k = SSL_do_handshake(t->ssl);
        if (k == 1) {
                tls_accepted(c);
                return;
        }
        int saved = errno;
        int e = SSL_get_error(t->ssl, k);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                ERR_clear_error();
                t->read_ev = e == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT;
                if (conn_update_events(c) < 0)
                        conn_close(c, "sd-event");
                return;
        }
        char why[WHY_MAX];
        unsigned long err = ERR_peek_last_error();
        const char *reason = err ? ERR_reason_error_string(err) : NULL;
        if (t->why)
                snprintf(why, sizeof(why), "%s", t->why);
        else if (e == SSL_ERROR_SSL && reason)
                snprintf(why, sizeof(why), "TLS handshake: %s", reason);
        else if (e == SSL_ERROR_SYSCALL && saved)
                snprintf(why, sizeof(why), "TLS handshake: %s", strerror(saved));
        else
                snprintf(why, sizeof(why), "the client closed the connection in the TLS handshake");
        ERR_clear_error();
        conn_close(c, why);
}

/* c's deadline: what it means depends on the state c is in. */
static int on_conn_timer(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Conn *c = userdata;
        switch (c->state) {
        case CONN_HEAD:
                conn_failf(c, 408, "no complete request head within %" PRIu64 " ms",
                           c->net->head_usec / USEC_PER_MSEC);
                break;
        case CONN_HANDSHAKE: {
                char why[WHY_MAX];
                snprintf(why, sizeof(why), "no TLS handshake within %" PRIu64 " ms",
                         c->net->head_usec / USEC_PER_MSEC);
                conn_close(c, why);
                break;
        }
        case CONN_RESOLVING:
        case CONN_CONNECTING:
                conn_failf(c, 504, "no connection to %s:%u within %" PRIu64 " ms", c->host_shown,
                           c->port, c->net->connect_usec / USEC_PER_MSEC);
                break;
        case CONN_REPLYING:
        case CONN_LINGERING:
        case CONN_SPLICING: /* armed only while a killed way is drained */
                conn_free(c);
                break;
        }
        return 0;
}

/* Does what c's state allows now, then waits for what it needs next. May free c. */
static void conn_run(Conn *c)
{
        int r;
        switch (c->state) {
        case CONN_HEAD:
                head_run(c);
                return;
        case CONN_HANDSHAKE:
                tls_handshake_run(c);
                return;
        case CONN_RESOLVING:
        case CONN_CONNECTING:
                break;
        case CONN_SPLICING:
                r = splice_run(c);
                conn_count_bytes(c);
                if (r == 1) {
                        conn_free(c);
                        return;
                }
                if (r == 2 && !c->lingering) {
                        c->lingering = true;
                        if (timer_arm(c, LINGER_USEC) < 0) {
                                conn_free(c);
                                return;
                        }
                }
                break;
        case CONN_REPLYING: {
                uint64_t ignored = 0;
                bool progress = false;
                c->down.eof = true;
                r = pipe_flush(&c->down, c->down_fd, NULL, &ignored, NULL, &progress);
                if (r < 0) {
                        conn_free(c);
                        return;
                }
                if (!c->down.shut)
                        break;
                /* answered: read what the client still sends until its EOF, so that closing
                 * with unread bytes does not reset the connection before it read the answer */
                c->state = CONN_LINGERING;
                if (linger_run(c) > 0)
                        return;
                break;
        }
        case CONN_LINGERING:
                if (linger_run(c) > 0)
                        return;
                break;
        }
        if (conn_update_events(c) < 0)
                conn_close(c, "sd-event");
}

static int on_down_io(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                      void *userdata)
{
        conn_run(userdata);
        return 0;
}

static int on_up_io(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                    void *userdata)
{
        Conn *c = userdata;
        if (c->state == CONN_CONNECTING)
                conn_connect_done(c);
        else
                conn_run(c);
        return 0;
}

/* ---- accepting ---- */

static int conn_new(Listener *l, int fd)
{
        AgentNet *n = l->net;
        _cleanup_close_ int cfd = fd;
        Conn *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->net = n;
        c->listener = l;
        c->down_fd = -1;
        c->up_fd = -1;
        c->at_usec = (int64_t)now_usec(CLOCK_REALTIME);
        int r = sd_event_add_io(n->event, &c->down_src, cfd, EPOLLIN, on_down_io, c);
        if (r < 0) {
                free(c);
                return r;
        }
        c->down_fd = TAKE_FD(cfd);
        c->next = n->conns;
        if (n->conns)
                n->conns->prev = c;
        n->conns = c;
        n->n_conns++;

        if (l->kind == LISTENER_FORWARD) {
                conn_record(c, l->host, l->port, NULL, true, 0, NULL);
                snprintf(c->host, sizeof(c->host), "%s", l->host);
                snprintf(c->host_shown, sizeof(c->host_shown), strchr(l->host, ':') ? "[%s]" : "%s",
                         l->host);
                c->port = l->port;
                conn_start(c);
                return 0;
        }
        /* TLS first shakes hands; the proxy reads a request head into its pipe */
        bool tls = l->kind == LISTENER_TLS;
        c->state = tls ? CONN_HANDSHAKE : CONN_HEAD;
        if ((tls ? tls_start(c) : pipe_alloc(&c->up)) < 0) {
                conn_close(c, "out of memory");
                return 0;
        }
        if (timer_arm(c, n->head_usec) < 0) {
                conn_close(c, "sd-event timer");
                return 0;
        }
        conn_run(c);
        return 0;
}

static int on_listener(sd_event_source *s, int fd, uint32_t revents _unused_, void *userdata)
{
        Listener *l = userdata;
        AgentNet *n = l->net;
        for (unsigned i = 0; i < ACCEPT_BURST; i++) {
                if (n->n_conns >= CONNS_MAX) {
                        listeners_pause(n, true);
                        return 0;
                }
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        switch (errno) {
                        case EAGAIN:
                                return 0;
                        case EINTR:
                        case ECONNABORTED:
                        case EPROTO:
                        case ENETDOWN:
                        case ENOPROTOOPT:
                        case EHOSTDOWN:
                        case ENONET:
                        case EHOSTUNREACH:
                        case EOPNOTSUPP:
                        case ENETUNREACH:
                                continue; /* that connection failed, not the listener */
                        case EMFILE:
                        case ENFILE:
                        case ENOBUFS:
                        case ENOMEM:
                                listeners_pause(n, false);
                                return 0;
                        default:
                                /* the listener itself is broken: stop watching it */
                                (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
                                return 0;
                        }
                }
                if (conn_new(l, cfd) < 0) {
                        listeners_pause(n, false);
                        return 0;
                }
        }
        return 0;
}

static int listener_add(AgentNet *n, Listener *l)
{
        int flags = fcntl(l->fd, F_GETFL);
        if (flags < 0 || (!(flags & O_NONBLOCK) && fcntl(l->fd, F_SETFL, flags | O_NONBLOCK) < 0))
                return -errno;
        int r = sd_event_add_io(n->event, &l->src, l->fd, EPOLLIN, on_listener, l);
        if (r < 0)
                return r;
        if (n->paused)
                (void)sd_event_source_set_enabled(l->src, SD_EVENT_OFF);
        l->next = n->listeners;
        n->listeners = l;
        return 0;
}

/* ---- the interface ---- */

int agent_net_new(sd_event *e, AgentNet **ret)
{
        assert(e && ret);
        AgentNet *n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->records = json_array();
        if (!n->records) {
                free(n);
                return -ENOMEM;
        }
        n->event = sd_event_ref(e);
        n->head_usec = AGENT_NET_HEAD_TIMEOUT_USEC;
        n->connect_usec = AGENT_NET_CONNECT_TIMEOUT_USEC;
        *ret = n;
        return 0;
}

void agent_net_set_deadlines(AgentNet *n, uint64_t head_usec, uint64_t connect_usec)
{
        assert(n);
        if (head_usec)
                n->head_usec = head_usec;
        if (connect_usec)
                n->connect_usec = connect_usec;
}

/* Whether pome can connect to host: an address literal (getaddrinfo's forms) or a host name. */
static bool target_valid(const char *host)
{
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
        struct addrinfo *res = NULL;
        if (getaddrinfo(host, NULL, &hints, &res) == 0) {
                freeaddrinfo(res);
                return true;
        }
        HostSpec h;
        const char *why;
        return host_parse(host, strlen(host), &h, &why) == 0 && h.kind == HOST_NAME;
}

int agent_net_forward(AgentNet *n, int listen_fd, const char *host, uint16_t port,
                      const char *label)
{
        assert(n && host);
        _cleanup_close_ int fd = listen_fd;
        if (port == 0 || !target_valid(host))
                return -EINVAL;
        Listener *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->net = n;
        l->kind = LISTENER_FORWARD;
        l->fd = TAKE_FD(fd);
        l->port = port;
        l->host = strdup(host);
        l->label = label ? strdup(label) : NULL;
        if (!l->host || (label && !l->label)) {
                listener_free(l);
                return -ENOMEM;
        }
        int r = listener_add(n, l);
        if (r < 0) {
                listener_free(l);
                return r;
        }
        return 0;
}

/* Parses a TLS route: a host name or a "*." suffix, a host to connect to, a port. */
static int route_parse(const AgentNetRoute *r, TlsRoute *ret, const char **why)
{
        const char *name = r->name ? r->name : "";
        const char *p = startswith(name, "*.");
        TlsRoute t = {.name.suffix = p != NULL, .port = r->port};
        if (!p)
                p = name;
        if (strchr(p, '*')) {
                *why = "a '*' other than a leading \"*.\"";
                return -EINVAL;
        }
        if (strchr(p, ':') || strchr(p, '/')) {
                *why = "a server name is a host name alone (api.example.com or *.example.com)";
                return -EINVAL;
        }
        int k = host_parse(p, strlen(p), &t.name.host, why);
        if (k < 0)
                return k;
        if (t.name.host.kind != HOST_NAME) {
                *why = "an address: a TLS server name is a host name (RFC 6066 §3)";
                return -EINVAL;
        }
        if (!r->host || !target_valid(r->host)) {
                *why = "its host is neither an address nor a host name";
                return -EINVAL;
        }
        if (r->port == 0) {
                *why = "its port is 0";
                return -EINVAL;
        }
        *ret = t;
        return 0;
}

int agent_net_tls(AgentNet *n, int listen_fd, const char *cert_pem, const char *key_pem,
                  const AgentNetRoute *routes, size_t n_routes, char *err, size_t errlen)
{
        assert(n && cert_pem && key_pem && (routes || n_routes == 0));
        _cleanup_close_ int fd = listen_fd;
        Listener *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->net = n;
        l->kind = LISTENER_TLS;
        l->fd = -1;
        l->routes = calloc(n_routes ? n_routes : 1, sizeof(TlsRoute));
        if (!l->routes) {
                listener_free(l);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_routes; i++) {
                const char *why = NULL;
                TlsRoute *t = &l->routes[l->n_routes];
                if (route_parse(&routes[i], t, &why) < 0) {
                        if (err && errlen)
                                snprintf(err, errlen, "TLS route \"%s\": %s",
                                         strempty(routes[i].name), why ? why : "not a host name");
                        listener_free(l);
                        return -EINVAL;
                }
                l->n_routes++;
                t->host = strdup(routes[i].host);
                t->label = routes[i].label ? strdup(routes[i].label) : NULL;
                if (!t->host || (routes[i].label && !t->label)) {
                        listener_free(l);
                        return -ENOMEM;
                }
        }
        int r = tls_ctx_new(cert_pem, key_pem, &l->tls_ctx, err, errlen);
        if (r < 0) {
                listener_free(l);
                return r;
        }
        l->fd = TAKE_FD(fd);
        r = listener_add(n, l);
        if (r < 0) {
                listener_free(l);
                return r;
        }
        return 0;
}

/* Parses one allow-list entry: host, "*." domain, either with ":port". */
static int allow_parse(const char *s, AllowEntry *ret, const char **why)
{
        AllowEntry e = {};
        const char *p = startswith(s, "*.");
        size_t hlen;
        if (p)
                e.suffix = true;
        else
                p = s;
        if (strchr(p, '*')) {
                *why = "a '*' other than a leading \"*.\"";
                return -EINVAL;
        }
        if (strchr(p, '/')) {
                *why = "a URL or a path: write the host only (api.example.com[:port])";
                return -EINVAL;
        }
        int r = authority_parse(p, strlen(p), false, &e.host, &e.port, &hlen, why);
        if (r < 0)
                return r;
        if (e.suffix && e.host.kind != HOST_NAME) {
                *why = "\"*.\" takes a domain name, not an address";
                return -EINVAL;
        }
        *ret = e;
        return 0;
}

int agent_net_proxy(AgentNet *n, int listen_fd, char *const *allow, char *err, size_t errlen)
{
        assert(n);
        _cleanup_close_ int fd = listen_fd;
        size_t count = 0;
        while (allow && allow[count])
                count++;
        Listener *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->net = n;
        l->kind = LISTENER_PROXY;
        l->fd = -1;
        l->allow = calloc(count ? count : 1, sizeof(AllowEntry));
        l->allow_text = calloc(1, ALLOW_TEXT_MAX);
        if (!l->allow || !l->allow_text) {
                listener_free(l);
                return -ENOMEM;
        }
        size_t tlen = 0;
        for (size_t i = 0; i < count; i++) {
                const char *why = NULL;
                AllowEntry *e = &l->allow[l->n_allow];
                if (allow_parse(allow[i], e, &why) < 0) {
                        if (err && errlen)
                                snprintf(err, errlen, "--allow-net \"%s\": %s", allow[i],
                                         why ? why : "not a host");
                        listener_free(l);
                        return -EINVAL;
                }
                l->n_allow++;
                char shown[280], item[300];
                host_show(&e->host, shown, sizeof(shown));
                if (e->port)
                        snprintf(item, sizeof(item), "%s%s%s:%u", i ? ", " : "",
                                 e->suffix ? "*." : "", shown, e->port);
                else
                        snprintf(item, sizeof(item), "%s%s%s", i ? ", " : "", e->suffix ? "*." : "",
                                 shown);
                size_t il = strlen(item);
                if (tlen + il + sizeof(", …") < ALLOW_TEXT_MAX) {
                        memcpy(l->allow_text + tlen, item, il + 1);
                        tlen += il;
                } else if (!endswith(l->allow_text, ", …")) {
                        memcpy(l->allow_text + tlen, ", …", sizeof(", …"));
                        tlen += sizeof(", …") - 1;
                }
        }
        l->fd = TAKE_FD(fd);
        int r = listener_add(n, l);
        if (r < 0) {
                listener_free(l);
                return r;
        }
        return 0;
}

void agent_net_stop(AgentNet *n)
{
        if (!n)
                return;
        /* connections first: their records name their listener */
        n->stopping = true;
        while (n->conns) {
                Conn *c = n->conns;
                conn_close(c, c->recorded ? NULL
                              : c->tls    ? "the agent pod ended before a TLS handshake"
                                          : "the agent pod ended before a request head");
        }
        n->stopping = false;
        while (n->listeners) {
                Listener *l = n->listeners;
                n->listeners = l->next;
                listener_free(l);
        }
        n->retry = sd_event_source_disable_unref(n->retry);
        n->paused = false;
}

json_t *agent_net_report(const AgentNet *n)
{
        assert(n);
        json_t *copy = json_deep_copy(n->records);
        if (!copy)
                return NULL;
        return json_pack("{s:o, s:I, s:I, s:I}", "connections", copy, "refused",
                         (json_int_t)n->refused, "allowed", (json_int_t)n->allowed, "dropped",
                         (json_int_t)n->dropped);
}

size_t agent_net_refused(const AgentNet *n)
{
        assert(n);
        return n->refused;
}

AgentNet *agent_net_free(AgentNet *n)
{
        if (!n)
                return NULL;
        agent_net_stop(n);
        json_decref(n->records);
        sd_event_unref(n->event);
        free(n);
        return NULL;
}
