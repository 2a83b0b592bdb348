/* SPDX-License-Identifier: MIT */
/*
 * libmicrohttpd (0.9.75) driven by sd-event through MHD's epoll fd.
 *
 * Measured quirks this glue handles (DESIGN.md "Pitfalls"): after
 * MHD_resume_connection() nothing wakes the loop, so we run MHD from a defer
 * source and re-arm the timer from MHD_get_timeout() after every MHD_run();
 * a timeout of 0 means "run again now". Suspended connections never time out
 * in MHD, so callers keep their own deadlines.
 */
#include "common/httpd.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "common/json-util.h"
#include "common/util.h"

struct HttpRequest {
        Httpd *d;
        struct MHD_Connection *conn;
        char *uri;
        char *path, *query; /* point into uri_copy */
        char method[16];
        char *body;
        size_t body_len, body_cap;
        bool too_large;
        bool started;    /* first access-handler call seen */
        bool dispatched; /* handler called */
        bool suspended;
        bool replied;
        json_t *headers;
        struct MHD_Response *response;
        unsigned status;
        uint64_t start_usec;
        HttpRequest *prev, *next; /* list of suspended requests */
};

struct Httpd {
        sd_event *event;
        struct MHD_Daemon *mhd;
        sd_event_source *io, *timer, *defer;
        HttpHandler handler;
        void *userdata;
        size_t max_body;
        uint16_t port;
        HttpRequest *suspended;
        size_t n_suspended;
        bool draining;
};

static uint64_t now_usec(clockid_t c)
{
        struct timespec ts;
        clock_gettime(c, &ts);
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
        free(r->uri);
        free(r->body);
        json_decref(r->headers);
        if (r->response)
                MHD_destroy_response(r->response);
        free(r);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
        HttpRequest *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        r->d = cls;
        r->conn = conn;
        r->start_usec = now_usec(CLOCK_MONOTONIC);
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
        return r;
}

static void on_completed(void *cls _unused_, struct MHD_Connection *conn _unused_, void **con_cls,
                         enum MHD_RequestTerminationCode toe _unused_)
{
        request_free(*con_cls);
        *con_cls = NULL;
}

static enum MHD_Result queue(HttpRequest *r)
{
        enum MHD_Result ok = MHD_queue_response(r->conn, r->status, r->response);
        MHD_destroy_response(r->response);
        r->response = NULL;
        return ok;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url _unused_,
                                 const char *method, const char *version _unused_,
                                 const char *upload_data, size_t *upload_data_size, void **con_cls)
{
        Httpd *d = cls;
        HttpRequest *r = *con_cls;
        if (!r)
                return MHD_NO; /* out of memory in on_uri: drop the connection */

        if (!r->started) {
                r->started = true;
                snprintf(r->method, sizeof(r->method), "%s", method);
                const char *cl =
                        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
                if (cl && strtoull(cl, NULL, 10) > d->max_body)
                        r->too_large = true;
                if (!r->too_large)
                        return MHD_YES; /* wait for the body (or the final call) */
                /* Too large: answer before the upload; MHD then closes the connection. */
        } else if (*upload_data_size > 0) {
                size_t n = *upload_data_size;
                *upload_data_size = 0;
                if (r->too_large)
                        return MHD_YES;
                if (r->body_len + n > d->max_body) {
                        r->too_large = true;
                        free(r->body);
                        r->body = NULL;
                        r->body_len = r->body_cap = 0;
                        return MHD_YES;
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
        d->handler(r, d->userdata);
        if (r->response)
                return queue(r);
        if (r->replied)
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
        d->userdata = userdata;
        d->max_body = cfg->max_body;
        d->mhd = MHD_start_daemon(
                flags, 0, NULL, NULL, on_access, d, MHD_OPTION_LISTEN_SOCKET, fd,
                MHD_OPTION_URI_LOG_CALLBACK, on_uri, d, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
                d, MHD_OPTION_CONNECTION_LIMIT,
                cfg->connection_limit ? cfg->connection_limit : 1000, MHD_OPTION_CONNECTION_TIMEOUT,
                cfg->connection_timeout ? cfg->connection_timeout : 60,
                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_EXTERNAL_LOGGER,
                on_mhd_log, d, MHD_OPTION_END);
        if (!d->mhd) {
                httpd_free(d);
                return -EIO;
        }
        TAKE_FD(fd); /* MHD owns the listener now */
        const union MHD_DaemonInfo *pi = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_BIND_PORT);
        d->port = pi ? pi->port : cfg->port;
        const union MHD_DaemonInfo *ei = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        int r = ei ? sd_event_add_io(e, &d->io, ei->epoll_fd, EPOLLIN, on_io, d) : -EIO;
        if (r >= 0)
                r = sd_event_add_time(e, &d->timer, CLOCK_MONOTONIC, 0, 1, on_timer, d);
        if (r >= 0)
                r = sd_event_add_defer(e, &d->defer, on_defer, d);
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

static const char busy_body[] =
        "{\"error\":{\"type\":\"internal_error\",\"message\":\"The server is shutting down.\","
        "\"details\":null,\"request_id\":null}}";

Httpd *httpd_free(Httpd *d)
{
        if (!d)
                return NULL;
        if (d->mhd) {
                while (d->suspended)
                        (void)http_reply(d->suspended, 503, NULL, busy_body, strlen(busy_body));
                MHD_run(d->mhd); /* flush the replies to resumed connections */
                MHD_stop_daemon(d->mhd);
        }
        sd_event_source_disable_unref(d->io);
        sd_event_source_disable_unref(d->timer);
        sd_event_source_disable_unref(d->defer);
        sd_event_unref(d->event);
        free(d);
        return NULL;
}

void httpd_drain(Httpd *d)
{
        d->draining = true;
}

void httpd_quiesce(Httpd *d)
{
        int fd = MHD_quiesce_daemon(d->mhd);
        if (fd >= 0)
                close(fd);
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
const char *http_request_header(const HttpRequest *rq, const char *name)
{
        /* MHD compares header names case-insensitively. */
        return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
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
        /* json_string() refuses invalid UTF-8: such a header is dropped, not mangled. */
        json_t *v = json_string(value ? value : "");
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

bool http_request_too_large(const HttpRequest *rq)
{
        return rq->too_large;
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

/* Adds headers (object name → string) to resp; true when they set Content-Type. */
static bool add_headers(Httpd *d, struct MHD_Response *resp, const json_t *headers)
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
        if (d->draining)
                MHD_add_response_header(resp, "Connection", "close");
        return have_ct;
}

static void set_response(HttpRequest *rq, int status, struct MHD_Response *resp)
{
        rq->response = resp;
        rq->status = (unsigned)status;
        if (rq->suspended) {
                Httpd *d = rq->d;
                list_remove(d, rq);
                d->n_suspended--;
                rq->suspended = false;
                MHD_resume_connection(rq->conn);
                /* Nothing wakes the loop after a resume: run MHD soon from a defer source. */
                sd_event_source_set_enabled(d->defer, SD_EVENT_ONESHOT);
        }
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
                resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
                if (!resp)
                        return -ENOMEM;
        }
        bool have_ct = add_headers(rq->d, resp, headers);
        if (len > 0 && !have_ct)
                MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
        set_response(rq, status, resp);
        return 0;
}

typedef struct Stream {
        HttpStreamRead read;
        void (*free_cb)(void *);
        void *userdata;
} Stream;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
        Stream *st = cls;
        ssize_t k = st->read(st->userdata, pos, buf, max);
        return k > 0    ? k
               : k == 0 ? MHD_CONTENT_READER_END_OF_STREAM
                        : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
        Stream *st = cls;
        if (st->free_cb)
                st->free_cb(st->userdata);
        free(st);
}

int http_reply_stream(HttpRequest *rq, int status, const json_t *headers, uint64_t size,
                      HttpStreamRead read, void (*free_cb)(void *), void *userdata)
{
        if (rq->replied)
                return -EALREADY;
        Stream *st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        *st = (Stream){.read = read, .free_cb = free_cb, .userdata = userdata};
        struct MHD_Response *resp =
                MHD_create_response_from_callback(size == UINT64_MAX ? MHD_SIZE_UNKNOWN : size,
                                                  64 * 1024, stream_read, st, stream_free);
        if (!resp) {
                free(st);
                return -ENOMEM;
        }
        rq->replied = true;
        (void)add_headers(rq->d, resp, headers);
        set_response(rq, status, resp);
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
