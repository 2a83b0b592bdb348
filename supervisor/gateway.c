/* SPDX-License-Identifier: MIT */
#include "supervisor/gateway.h"

#include <time.h>

#include "common/json-util.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "pods/front/serve.h"
#include "supervisor/control.h"
#include "supervisor/log.h"

struct Gateway {
        Manager *manager;
};

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

static void reply_no_pod(HttpRequest *rq, const char *request_id)
{
        _cleanup_json_ json_t *h = json_pack("{s:s}", "X-Request-Id", request_id);
        (void)http_reply(rq, 404, h, GATEWAY_NO_POD_BODY, strlen(GATEWAY_NO_POD_BODY));
}

static void reply_expired(HttpRequest *rq, const char *sid, const char *reason,
                          const char *request_id)
{
        _cleanup_json_ json_t *body = json_pack(
                "{s:{s:s, s:s, s:{s:s, s:s}, s:s}}", "error", "type", "session_expired", "message",
                "This sandbox has ended; every call against it answers 410. Start a new one.",
                "details", "session_id", sid, "reason", reason ? reason : "lifetime", "request_id",
                request_id);
        front_reply(rq, 410, NULL, body, request_id);
}

/* ---- the backend: a sandbox's pod ---- */

static void on_pod_reply(Pod *p _unused_, int err, const TwinReplyBytes *rb, void *userdata)
{
        front_exchange_done_bytes(userdata, err, rb);
}

static int pod_backend_call(void *userdata, const TwinRequest *rq, FrontExchange *x)
{
        SandboxTwin *st = userdata;
        if (!st->pod)
                return -ENOTCONN;
        int r = pod_call(st->pod, rq, st->sandbox->env->cfg->request_timeout_usec, on_pod_reply, x);
        if (r >= 0 && front_exchange_recorded(x))
                sandbox_touch(st->sandbox); /* a routed call: running, idle clock restarts */
        return r;
}

static int pod_backend_record(void *userdata, const json_t *row)
{
        SandboxTwin *st = userdata;
        return sandbox_record(st->sandbox, st, row);
}

static int pod_backend_record_line(void *userdata, const char *line, size_t len,
                                   const char *event_id)
{
        SandboxTwin *st = userdata;
        return sandbox_record_line(st->sandbox, st, line, len, event_id);
}

/* ---- routing ---- */

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

/*
 * Stripe's SDKs take a host but no path prefix: "/v1/…" is Stripe's API for the sandbox
 * whose key (or session token) the caller presents, served as "/stripe/s/{sid}/v1/…"
 * would be. Fills twin and sid from the credential; a credential that names no sandbox
 * (absent, malformed, badly signed) leaves sid empty, and the twin's own 401 follows.
 * Returns false when the path is not Stripe's or no stripe kind is built in.
 */
static bool split_keyed(Manager *m, HttpRequest *rq, const char *path, char *twin, size_t tl,
                        char *sid, size_t sl)
{
        if (!front_keyed_path(path))
                return false;
        const TwinKind *k = twin_kind_find("stripe");
        if (!k || tl <= strlen(k->name))
                return false;
        strcpy(twin, k->name);
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        front_keyed_session(k, manager_secret(m), TOKEN_SECRET_LEN, http_request_headers(rq),
                            http_request_query(rq), body, body_len, sid, sl);
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
        const char *rest = raw;
        bool keyed = split_keyed(m, rq, raw, twin, sizeof(twin), sid, sizeof(sid));
        if (!keyed && !split_mount(raw, twin, sizeof(twin), sid, sizeof(sid), &rest)) {
                _cleanup_json_ json_t *body = json_pack(
                        "{s:{s:s, s:s, s:n, s:s}}", "error", "type", "not_found", "message",
                        "Twin URLs look like /{twin}/s/{session_id}/…; take rest_url from the "
                        "sandbox's create response.",
                        "details", "request_id", request_id);
                front_reply(rq, 404, NULL, body, request_id);
                return;
        }
        const TwinKind *k = twin_kind_find(twin);
        if (!k) {
                reply_no_pod(rq, request_id);
                return;
        }
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        FrontAuth auth = front_authenticate(k, manager_secret(m), TOKEN_SECRET_LEN, sid,
                                            http_request_headers(rq), http_request_query(rq), body,
                                            body_len, time(NULL), NULL);
        /*
         * Nothing about a sandbox is told to a caller who cannot prove it may know: no
         * credential gets the twin's own 401 wherever it is sent, a wrong one (or one for
         * another sandbox) the same 404 everywhere.
         */
        if (auth == FRONT_AUTH_MISSING ||
            (keyed && auth != FRONT_AUTH_OK && auth != FRONT_AUTH_EXPIRED)) {
                /* on a keyed path the key is all there is: Stripe's own 401 for a bad one */
                TwinReply rp = {};
                k->auth_error(front_auth_failure(auth), &rp);
                front_reply(rq, rp.status, rp.headers, rp.body, request_id);
                twin_reply_done(&rp);
                return;
        }
        if (auth == FRONT_AUTH_INVALID || auth == FRONT_AUTH_WRONG_SESSION) {
                reply_no_pod(rq, request_id);
                return;
        }
        Sandbox *s = manager_get(m, sid);
        if (!s) {
                /* An ended sandbox is only on record: 410 for its retention, then 404. */
                _cleanup_json_ json_t *doc = NULL;
                if (manager_record(m, sid, &doc) >= 0 || auth == FRONT_AUTH_EXPIRED)
                        reply_expired(rq, sid, json_get_str(doc, "reason"), request_id);
                else
                        reply_no_pod(rq, request_id);
                return;
        }
        SandboxTwin *st = sandbox_twin(s, twin);
        /* a finalize has taken the worlds and tapes the run ends with: it is over */
        if (auth == FRONT_AUTH_EXPIRED || !sandbox_state_is_open(s->state) || s->finalizing) {
                reply_expired(rq, sid, s->finalizing ? "finalizing" : s->reason, request_id);
                return;
        }
        if (!st) {
                reply_no_pod(rq, request_id);
                return;
        }
        if (manager_draining(m)) {
                front_reply_error(rq, k, 503, "shutting_down",
                                  "pomed is shutting down; this sandbox is about to end.",
                                  request_id);
                return;
        }
        if (s->state == SANDBOX_PROVISIONING) {
                front_reply_error(rq, k, 503, "twin_starting", "The twin is not ready yet.",
                                  request_id);
                return;
        }
        if (!st->pod || !pod_is_ready(st->pod)) {
                /* it was up (all-or-nothing): it died, and the sandbox is failing */
                front_reply_error(rq, k, 502, "twin_unavailable",
                                  "The twin pod ended; the sandbox has failed.", request_id);
                return;
        }
        char mount[512];
        snprintf(mount, sizeof(mount), "%s/%s/s/%s", manager_public_url(m), twin, sid);
        FrontTarget t = {
                .kind = k,
                .tape = st->tape,
                .run_id = s->id,
                .mount_url = mount,
                .rest = rest,
                .request_id = request_id,
                .max_page = FRONT_EVENTS_PAGE_MAX,
                .backend = {.call = pod_backend_call,
                            .record = pod_backend_record,
                            .record_line = pod_backend_record_line,
                            .userdata = st},
        };
        front_serve(rq, &t);
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
        /* "/v1/…" is Stripe's, routed by key (split_keyed) */
        const TwinKind *k = streq(seg, "v1") ? twin_kind_find("stripe")
                            : seg[0]         ? twin_kind_find(seg)
                                             : NULL;
        if (!k) {
                control_refuse(path, status, code, message, ret, NULL);
                return;
        }
        char request_id[25];
        if (front_request_id(request_id) < 0)
                snprintf(request_id, sizeof(request_id), "req_unavailable");
        front_refusal(k, status, code, message, ret);
        if (!ret->headers)
                ret->headers = json_object();
        if (ret->headers)
                json_object_set_new(ret->headers, "X-Request-Id", json_string(request_id));
}

void gateway_replied(const char *path, int status, void *userdata)
{
        Gateway *g = userdata;
        char seg[32] = "";
        if (path && path[0] == '/') {
                size_t n = strcspn(path + 1, "/");
                if (n < sizeof(seg)) {
                        memcpy(seg, path + 1, n);
                        seg[n] = 0;
                }
        }
        /* label values come from the kinds' names only: a caller's path adds no series */
        const TwinKind *k = front_keyed_path(path ? path : "") ? twin_kind_find("stripe")
                            : seg[0]                           ? twin_kind_find(seg)
                                                               : NULL;
        metrics_gateway_reply(manager_metrics(g->manager), k ? k->name : "none", status);
}
