/* SPDX-License-Identifier: MIT */
#include "pods/front/serve.h"

#include "common/frame.h"
#include "common/json-util.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "pods/front/front.h"

#define EVENTS_LIMIT_DEFAULT 100u
#define EVENTS_LIMIT_MAX     1000u /* also in front_reply_tape's message */

struct FrontExchange {
        HttpRequest *rq;
        const TwinKind *kind;
        FrontBackend backend;
        char request_id[32];
        char *run_id;
        char *full;  /* the raw path as requested, for the tape */
        char *mount; /* the raw path of the twin's mount (full without the part below it) */
        bool recorded;
        int64_t ts_usec;
};

void front_reply(HttpRequest *rq, int status, json_t *headers, const json_t *body,
                 const char *request_id)
{
        _cleanup_json_ json_t *h = headers ? json_incref(headers) : json_object();
        if (h && json_is_object(h))
                json_object_set_new(h, "X-Request-Id", json_string(request_id));
        const char *text = twin_reply_text(h, body);
        if (text)
                (void)http_reply(rq, status, h, text, json_string_length(body));
        else
                (void)http_reply_json(rq, status, h, body);
}

void front_reply_error(HttpRequest *rq, const TwinKind *kind, int status, const char *code,
                       const char *message, const char *request_id)
{
        TwinReply rp = {};
        kind->error(status, code, message, &rp);
        /* The body is the twin's envelope, the status the front's own: a Slack client must
         * see a 413 or a 503 as such, not as one of Slack's HTTP 200 API errors. */
        _cleanup_json_ json_t *h = rp.headers ? json_incref(rp.headers) : json_object();
        if (h && (status == 503 || status == 429))
                json_object_set_new(h, "Retry-After", json_string("1"));
        front_reply(rq, status, h, rp.body, request_id);
        twin_reply_done(&rp);
}

void front_refusal(const TwinKind *kind, int status, const char *code, const char *message,
                   HttpRefusal *ret)
{
        TwinReply rp = {};
        kind->error(status, code, message, &rp);
        ret->body = TAKE_PTR(rp.body);
        ret->headers = TAKE_PTR(rp.headers);
        twin_reply_done(&rp);
}

static void exchange_free(FrontExchange *x)
{
        if (!x)
                return;
        free(x->run_id);
        free(x->full);
        free(x->mount);
        free(x);
}

/* ---- /_pome/events: the tape, from disk, a page at a time ---- */

static ssize_t events_read(void *userdata, uint64_t pos _unused_, char *buf, size_t max)
{
        return tape_reader_read(userdata, buf, max);
}

static void events_free(void *userdata)
{
        tape_reader_free(userdata);
}

int front_reply_tape(HttpRequest *rq, Tape *tape, const char *link, uint64_t max_page,
                     const char *request_id, const char **ret_why)
{
        const char *query = http_request_query(rq);
        _cleanup_free_ char *after = NULL, *limit_s = NULL;
        int ra = front_query_value(query, "after", &after);
        int rl = front_query_value(query, "limit", &limit_s);
        if (ra == -EBADMSG || rl == -EBADMSG) {
                *ret_why = "after and limit must be text (a NUL is not).";
                return -EINVAL;
        }
        if ((ra < 0 && ra != -ENOENT) || (rl < 0 && rl != -ENOENT))
                return -ENOMEM;
        size_t limit = 0;
        if (limit_s) {
                char *end;
                errno = 0;
                unsigned long v = strtoul(limit_s, &end, 10);
                if (errno || end == limit_s || *end || v < 1 || v > EVENTS_LIMIT_MAX ||
                    limit_s[0] == '-' || limit_s[0] == '+') {
                        *ret_why = "limit must be an integer from 1 to 1000.";
                        return -EINVAL;
                }
                limit = v;
        } else if (after)
                limit = EVENTS_LIMIT_DEFAULT;
        TapeRange range;
        int r = tape_select(tape, after, limit, max_page, &range);
        if (r == -ENOENT) {
                *ret_why = "after names no event on this tape; pass the event_id of a row you "
                           "read, or leave it out to start at the first row.";
                return -ENOENT;
        }
        TapeReader *rd = NULL;
        if (r >= 0)
                r = tape_reader_new(tape, &range, &rd);
        if (r < 0) {
                *ret_why = "The tape cannot be read.";
                return r;
        }
        char total[32];
        snprintf(total, sizeof(total), "%zu", tape_count(tape));
        _cleanup_json_ json_t *h =
                json_pack("{s:s, s:s, s:s}", "Content-Type", "application/json; charset=utf-8",
                          "X-Request-Id", request_id, "X-Pome-Total-Events", total);
        char next[TAPE_EVENT_ID_MAX];
        if (h && range.more && tape_event_id(tape, range.first + range.n - 1, next) == 0) {
                _cleanup_free_ char *l = NULL;
                if (asprintf(&l, "<%s%cafter=%s&limit=%zu>; rel=\"next\"", link,
                             strchr(link, '?') ? '&' : '?', next, limit) >= 0)
                        json_object_set_new(h, "Link", json_string(l));
                json_object_set_new(h, "X-Pome-Next-After", json_string(next));
        }
        uint64_t size = tape_reader_size(rd);
        if (http_reply_stream(rq, 200, h, size, events_read, events_free, rd) < 0) {
                tape_reader_free(rd);
                *ret_why = "Out of memory.";
                return -ENOMEM;
        }
        return 0;
}

static void serve_events(HttpRequest *rq, const FrontTarget *t)
{
        const TwinKind *k = t->kind;
        if (!streq(http_request_method(rq), "GET")) {
                front_reply_error(rq, k, 405, "method_not_allowed",
                                  "/_pome/events only answers GET.", t->request_id);
                return;
        }
        _cleanup_free_ char *link = NULL;
        if (asprintf(&link, "%s/_pome/events", t->mount_url) < 0) {
                front_reply_error(rq, k, 500, "internal_error", "Out of memory.", t->request_id);
                return;
        }
        const char *why = "Out of memory.";
        int r = front_reply_tape(rq, t->tape, link, t->max_page, t->request_id, &why);
        if (r == -EINVAL)
                front_reply_error(rq, k, 400,
                                  strstr(why, "limit must") ? "invalid_limit" : "invalid_parameter",
                                  why, t->request_id);
        else if (r == -ENOENT)
                front_reply_error(rq, k, 400, "unknown_event", why, t->request_id);
        else if (r < 0)
                front_reply_error(rq, k, 500, "internal_error", why, t->request_id);
}

/* GET {mount}/healthz (CONTRACT.md, as hosted Pome's twins): {ok, twin, sid} for a caller
 * authenticated for the sandbox. Like /_pome/, a read of our own: no tape row. */
static void serve_session_healthz(HttpRequest *rq, const FrontTarget *t)
{
        const char *m = http_request_method(rq);
        if (!streq(m, "GET") && !streq(m, "HEAD")) {
                front_reply_error(rq, t->kind, 405, "method_not_allowed",
                                  "/healthz only answers GET.", t->request_id);
                return;
        }
        _cleanup_json_ json_t *body =
                json_pack("{s:b, s:s, s:s}", "ok", true, "twin", t->kind->name, "sid", t->run_id);
        front_reply(rq, body ? 200 : 500, NULL, body, t->request_id);
}

/* ---- calls ---- */

void front_serve(HttpRequest *rq, const FrontTarget *t)
{
        const TwinKind *k = t->kind;
        _cleanup_free_ char *path = NULL;
        if (front_decode_path(*t->rest ? t->rest : "/", &path) < 0 ||
            front_check_query(http_request_query(rq)) < 0) {
                front_reply_error(rq, k, 400, "invalid_path",
                                  "The request target is malformed: a path that walks outside "
                                  "the twin ('.' or '..' segments), bad percent-escapes, bytes "
                                  "that are not UTF-8, or raw bytes outside printable ASCII.",
                                  t->request_id);
                return;
        }
        /* The tape is the front's: /_pome/events never reaches the twin. */
        if (streq(path, "/_pome/events")) {
                serve_events(rq, t);
                return;
        }
        if (streq(path, "/healthz")) {
                serve_session_healthz(rq, t);
                return;
        }
        FrontExchange *x = calloc(1, sizeof(*x));
        size_t full_len = strlen(http_request_path(rq)), rest_len = strlen(t->rest);
        if (!x || !(x->full = strdup(http_request_path(rq))) || !(x->run_id = strdup(t->run_id)) ||
            !(x->mount = strndup(x->full, full_len >= rest_len ? full_len - rest_len : 0))) {
                exchange_free(x);
                front_reply_error(rq, k, 500, "internal_error", "Out of memory.", t->request_id);
                return;
        }
        x->rq = rq;
        x->kind = k;
        x->backend = t->backend;
        x->ts_usec = (int64_t)now_usec(CLOCK_REALTIME);
        snprintf(x->request_id, sizeof(x->request_id), "%s", t->request_id);
        /* Reading /_pome/ adds no tape row and is not agent activity. */
        x->recorded = !startswith(path, "/_pome/");
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        TwinRequest tr = {
                .method = http_request_method(rq),
                .path = path,
                .query = http_request_query(rq),
                .headers = http_request_headers(rq),
                .body = body,
                .body_len = body_len,
                .base_url = t->mount_url,
        };
        int r = t->backend.call(t->backend.userdata, &tr, x);
        if (r == -EBUSY) {
                front_reply_error(rq, k, 503, "busy",
                                  "The twin has too many calls waiting; retry shortly.",
                                  t->request_id);
                exchange_free(x);
        } else if (r < 0) {
                front_reply_error(rq, k, 502, "twin_unavailable", "The twin cannot take requests.",
                                  t->request_id);
                exchange_free(x);
        }
        /* else x belongs to front_exchange_done (which may have run already) */
}

bool front_exchange_recorded(const FrontExchange *x)
{
        return x->recorded;
}

/* A row onto the backend's tape: as bytes when it takes them, else parsed back. */
static void record_line(FrontExchange *x, char *line, size_t len, const char *event_id)
{
        if (x->backend.record_line) {
                (void)x->backend.record_line(x->backend.userdata, line, len, event_id);
                return;
        }
        _cleanup_json_ json_t *row = line ? json_loadb(line, len, 0, NULL) : NULL;
        (void)x->backend.record(x->backend.userdata, row);
}

void front_exchange_done_bytes(FrontExchange *x, int err, const TwinReplyBytes *rb)
{
        HttpRequest *rq = x->rq;
        if (err == -ETIMEDOUT)
                front_reply_error(rq, x->kind, 504, "twin_timeout",
                                  "The twin did not answer in time; the sandbox has failed "
                                  "(pod_hung) and nothing this call carried was applied later.",
                                  x->request_id);
        else if (err < 0)
                front_reply_error(rq, x->kind, 502, "twin_unavailable",
                                  err == -EPROTO ? "The twin sent a malformed reply."
                                                 : "The twin ended before it answered.",
                                  x->request_id);
        else {
                size_t body_len;
                const char *body = http_request_body(rq, &body_len);
                FrontCall fc = {
                        .twin = x->kind->name,
                        .run_id = x->run_id,
                        .request_id = x->request_id,
                        .method = http_request_method(rq),
                        .path = x->full,
                        .query = http_request_query(rq),
                        .headers = http_request_headers(rq),
                        .body = body,
                        .body_len = body_len,
                        .latency_ms =
                                (double)(now_usec(CLOCK_MONOTONIC) - http_request_start_usec(rq)) /
                                1000.0,
                        .ts_usec = x->ts_usec,
                };
                /* What the twin did on its own before this call (a scheduled message
                 * delivered) is on the tape first, whatever the call: a /_pome/state
                 * read that let it happen adds those rows and none of its own. Rare: these
                 * rows are built as documents. */
                size_t i;
                json_t *ev;
                json_array_foreach (rb->events, i, ev) {
                        _cleanup_json_ json_t *erow = front_event_row(&fc, x->mount, ev);
                        _cleanup_free_ char *text =
                                erow ? json_dumps(erow, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
                        size_t n = text ? strlen(text) : 0;
                        if (text)
                                text[n++] = '\n'; /* over the NUL: a line */
                        record_line(x, text, n, json_get_str(erow, "event_id"));
                }
                if (x->recorded) {
                        /* The row is on the tape before the caller sees the response; a row
                         * that cannot be built (NULL) is the backend's to report. */
                        _cleanup_free_ char *line = NULL;
                        size_t n = 0;
                        if (front_tape_line(&fc, rb, &line, &n) < 0)
                                line = NULL;
                        record_line(x, line, n, x->request_id);
                }
                _cleanup_json_ json_t *h = rb->headers ? json_incref(rb->headers) : json_object();
                if (h)
                        json_object_set_new(h, "X-Request-Id", json_string(x->request_id));
                (void)http_reply(rq, rb->status, h, rb->body, rb->body_len);
        }
        exchange_free(x);
}

void front_exchange_done(FrontExchange *x, int err, TwinReply *rp)
{
        if (err < 0) {
                front_exchange_done_bytes(x, err, NULL);
                return;
        }
        size_t body_len;
        const char *body = http_request_body(x->rq, &body_len);
        TwinRequest rq = {.body = body, .body_len = body_len};
        Frame f = {};
        TwinReplyBytes rb;
        int r = podwire_reply_bytes(rp, &rq, &f, &rb);
        if (r < 0) {
                front_reply_error(x->rq, x->kind, 500, "internal_error",
                                  r == -EMSGSIZE ? "The reply is too large."
                                                 : "The reply could not be encoded.",
                                  x->request_id);
                exchange_free(x);
                return;
        }
        front_exchange_done_bytes(x, 0, &rb);
        frame_done(&f);
}
