/* SPDX-License-Identifier: MIT */
#include "gateway.h"

#include <time.h>

#include "common/json-util.h"
#include "common/util.h"
#include "control.h"
#include "front.h"
#include "log.h"

struct Gateway {
        Manager *manager;
};

/* One call in flight to a pod. */
typedef struct GatewayCall {
        Gateway *g;
        HttpRequest *rq;
        Sandbox *sandbox;
        SandboxTwin *twin;
        char request_id[25];
        char *path;    /* decoded, below the mount */
        char *full;    /* raw path as requested, for the tape */
        bool recorded; /* goes on the tape (not /_pome/ reads) */
        int64_t ts_usec;
} GatewayCall;

static int64_t realtime_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t monotonic_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

int gateway_new(Manager *m, Gateway **ret)
{
        Gateway *g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->manager = m;
        *ret = g;
        return 0;
}

Gateway *gateway_free(Gateway *g)
{
        free(g);
        return NULL;
}

static void reply_headers(HttpRequest *rq, int status, json_t *headers, const json_t *body,
                          const char *request_id)
{
        _cleanup_json_ json_t *h = headers ? json_incref(headers) : json_object();
        if (h && json_is_object(h))
                json_object_set_new(h, "X-Request-Id", json_string(request_id));
        (void)http_reply_json(rq, status, h, body);
}

static void reply_no_pod(HttpRequest *rq, const char *request_id)
{
        _cleanup_json_ json_t *h = json_pack("{s:s}", "X-Request-Id", request_id);
        (void)http_reply(rq, 404, h, GATEWAY_NO_POD_BODY, strlen(GATEWAY_NO_POD_BODY));
}

/* A refusal in the twin's own envelope (kind->error), e.g. 400, 413, 502, 504. */
static void reply_twin_error(HttpRequest *rq, const TwinKind *k, int status, const char *code,
                             const char *message, const char *request_id)
{
        TwinReply rp = {};
        k->error(status, code, message, &rp);
        reply_headers(rq, rp.status ? rp.status : status, rp.headers, rp.body, request_id);
        twin_reply_done(&rp);
}

static void reply_expired(HttpRequest *rq, const char *sid, const char *reason,
                          const char *request_id)
{
        _cleanup_json_ json_t *body = json_pack(
                "{s:{s:s, s:s, s:{s:s, s:s}, s:s}}", "error", "type", "session_expired", "message",
                "This sandbox has ended; every call against it answers 410. Start a new one.",
                "details", "session_id", sid, "reason", reason ? reason : "lifetime", "request_id",
                request_id);
        reply_headers(rq, 410, NULL, body, request_id);
}

static void call_free(GatewayCall *c)
{
        if (!c)
                return;
        free(c->path);
        free(c->full);
        free(c);
}

static void on_pod_reply(Pod *p _unused_, int err, TwinReply *rp, void *userdata)
{
        GatewayCall *c = userdata;
        const TwinKind *k = c->twin->kind;
        if (err == -ETIMEDOUT) {
                reply_twin_error(c->rq, k, 504, "twin_timeout", "The twin did not answer in time.",
                                 c->request_id);
                call_free(c);
                return;
        }
        if (err < 0) {
                reply_twin_error(c->rq, k, 502, "twin_unavailable",
                                 err == -EPROTO ? "The twin pod sent a malformed reply."
                                                : "The twin pod ended before it answered.",
                                 c->request_id);
                call_free(c);
                return;
        }
        if (c->recorded) {
                size_t body_len;
                const char *body = http_request_body(c->rq, &body_len);
                FrontCall fc = {
                        .twin = k->name,
                        .run_id = c->sandbox->id,
                        .request_id = c->request_id,
                        .method = http_request_method(c->rq),
                        .path = c->full,
                        .query = http_request_query(c->rq),
                        .headers = http_request_headers(c->rq),
                        .body = body,
                        .body_len = body_len,
                        .latency_ms = (double)(monotonic_usec() - http_request_start_usec(c->rq)) /
                                      1000.0,
                        .ts_usec = c->ts_usec,
                };
                _cleanup_json_ json_t *row = front_tape_row(&fc, rp);
                /* The row is on disk before the caller sees the response. */
                int r = row ? tape_append(c->twin->tape, row) : -ENOMEM;
                if (r < 0)
                        log_error_errno(r, "%s: cannot append to the %s tape", c->sandbox->id,
                                        k->name);
        }
        reply_headers(c->rq, rp->status, rp->headers, rp->body, c->request_id);
        call_free(c);
}

/* Splits "/{twin}/s/{sid}{rest}" (raw). Returns false when the path has another shape. */
static bool split_mount(const char *path, char *twin, size_t tl, char *sid, size_t sl,
                        const char **ret_rest)
{
        const char *p = path;
        if (*p++ != '/')
                return false;
        const char *e = strchrnul(p, '/');
        if (e == p || (size_t)(e - p) >= tl || strncmp(e, "/s/", 3) != 0)
                return false;
        memcpy(twin, p, (size_t)(e - p));
        twin[e - p] = 0;
        p = e + 3;
        e = strchrnul(p, '/');
        if (e == p || (size_t)(e - p) >= sl)
                return false;
        memcpy(sid, p, (size_t)(e - p));
        sid[e - p] = 0;
        *ret_rest = e;
        return true;
}

void gateway_handle(HttpRequest *rq, void *userdata)
{
        Gateway *g = userdata;
        Manager *m = g->manager;
        char request_id[25];
        if (front_request_id(request_id) < 0)
                snprintf(request_id, sizeof(request_id), "req_unavailable");
        const char *raw = http_request_path(rq);
        char twin[32], sid[64];
        const char *rest;
        if (!split_mount(raw, twin, sizeof(twin), sid, sizeof(sid), &rest)) {
                _cleanup_json_ json_t *body = json_pack(
                        "{s:{s:s, s:s, s:n, s:s}}", "error", "type", "not_found", "message",
                        "Twin URLs look like /{twin}/s/{session_id}/…; take rest_url from the "
                        "sandbox's create response.",
                        "details", "request_id", request_id);
                reply_headers(rq, 404, NULL, body, request_id);
                return;
        }
        const TwinKind *k = twin_kind_find(twin);
        if (!k) {
                reply_no_pod(rq, request_id);
                return;
        }
        json_t *headers = http_request_headers(rq);
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        FrontAuth auth =
                front_authenticate(k, manager_secret(m), TOKEN_SECRET_LEN, sid, headers,
                                   http_request_query(rq), body, body_len, time(NULL), NULL);
        Sandbox *s = manager_find(m, sid);
        if (s)
                (void)sandbox_check_clocks(s);
        SandboxTwin *st = s ? sandbox_twin(s, twin) : NULL;
        switch (auth) {
        case FRONT_AUTH_MISSING:
                /* No credential: the twin's own 401 — but only where a pod exists,
                 * so the answer reveals nothing about other URLs. */
                if (st && sandbox_state_is_open(s->state)) {
                        TwinReply rp = {};
                        k->auth_error(TWIN_AUTH_MISSING, &rp);
                        reply_headers(rq, rp.status, rp.headers, rp.body, request_id);
                        twin_reply_done(&rp);
                } else
                        reply_no_pod(rq, request_id);
                return;
        case FRONT_AUTH_INVALID:
                reply_no_pod(rq, request_id);
                return;
        case FRONT_AUTH_EXPIRED:
                reply_expired(rq, sid, s && s->reason ? s->reason : "lifetime", request_id);
                return;
        case FRONT_AUTH_OK:
                break;
        }
        if (!st) {
                reply_no_pod(rq, request_id);
                return;
        }
        if (!sandbox_state_is_open(s->state)) {
                reply_expired(rq, sid, s->reason, request_id);
                return;
        }
        Pod *pod = st->pod;
        if (http_request_too_large(rq)) {
                char msg[128];
                snprintf(msg, sizeof(msg), "The request body exceeds %zu bytes.",
                         manager_config(m)->max_body);
                reply_twin_error(rq, k, 413, "request_too_large", msg, request_id);
                return;
        }
        if (!pod || !pod_is_ready(pod)) {
                reply_twin_error(rq, k, 503, "twin_starting", "The twin is not ready yet.",
                                 request_id);
                return;
        }

        GatewayCall *c = calloc(1, sizeof(*c));
        if (!c || !(c->full = strdup(raw))) {
                free(c);
                reply_twin_error(rq, k, 500, "internal_error", "Out of memory.", request_id);
                return;
        }
        int r = front_decode_path(*rest ? rest : "/", &c->path);
        if (r < 0) {
                call_free(c);
                reply_twin_error(rq, k, 400, "invalid_path",
                                 "The path is malformed or walks outside the twin ('.' or '..' "
                                 "segments, bad percent-escapes).",
                                 request_id);
                return;
        }
        c->g = g;
        c->rq = rq;
        c->sandbox = s;
        c->twin = st;
        c->ts_usec = realtime_usec();
        memcpy(c->request_id, request_id, sizeof(request_id));
        const char *method = http_request_method(rq);

        /* The tape is the gateway's: /_pome/events never reaches the pod. */
        if (streq(c->path, "/_pome/events")) {
                if (!streq(method, "GET")) {
                        reply_twin_error(rq, k, 405, "method_not_allowed",
                                         "/_pome/events only answers GET.", request_id);
                } else {
                        _cleanup_json_ json_t *rows = tape_rows(st->tape);
                        reply_headers(rq, rows ? 200 : 500, NULL, rows, request_id);
                }
                call_free(c);
                return;
        }
        /* Reading /_pome/ adds no tape row and is not agent activity. */
        c->recorded = !startswith(c->path, "/_pome/");
        if (c->recorded)
                sandbox_touch(s);

        char base_url[512];
        snprintf(base_url, sizeof(base_url), "%s/%s/s/%s", manager_public_url(m), twin, sid);
        TwinRequest tr = {
                .method = method,
                .path = c->path,
                .query = http_request_query(rq),
                .headers = headers,
                .body = body,
                .body_len = body_len,
                .base_url = base_url,
        };
        r = pod_call(pod, &tr, manager_config(m)->request_timeout_usec, on_pod_reply, c);
        if (r < 0) {
                call_free(c);
                reply_twin_error(rq, k, 502, "twin_unavailable",
                                 "The twin pod cannot take requests.", request_id);
        }
}

void gateway_refuse(const char *path, int status, const char *code, const char *message,
                    HttpRefusal *ret, void *userdata _unused_)
{
        /* The twin named by the first segment answers in its own envelope, as it would
         * for any other refusal under its mount; anything else gets the control one. */
        char seg[32] = "";
        if (path && path[0] == '/') {
                size_t n = strcspn(path + 1, "/");
                if (n < sizeof(seg)) {
                        memcpy(seg, path + 1, n);
                        seg[n] = 0;
                }
        }
        const TwinKind *k = seg[0] ? twin_kind_find(seg) : NULL;
        if (!k) {
                control_refuse(path, status, code, message, ret, NULL);
                return;
        }
        char request_id[25];
        if (front_request_id(request_id) < 0)
                snprintf(request_id, sizeof(request_id), "req_unavailable");
        TwinReply rp = {};
        k->error(status, code, message, &rp);
        ret->body = TAKE_PTR(rp.body);
        ret->headers = rp.headers ? TAKE_PTR(rp.headers) : json_object();
        if (ret->headers)
                json_object_set_new(ret->headers, "X-Request-Id", json_string(request_id));
        twin_reply_done(&rp);
}
