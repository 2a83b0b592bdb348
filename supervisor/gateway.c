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
        /* a call whose row cannot be kept on disk is not carried out; the agent calling is
         * not idle for it */
        if (front_exchange_recorded(x) && sandbox_storage_blocked(st->sandbox->env)) {
                sandbox_restart_idle(st->sandbox);
                return -ENOSPC;
        }
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

static void pod_backend_hold(void *userdata, HttpRequest *rq, const char *request_id)
{
        SandboxTwin *st = userdata;
        sandbox_hold_reply(st->sandbox, st, rq, request_id);
}

/* ---- a finalize asked from inside the run (POST …/_pome/finalize, finalize_run) ---- */

/* What the finalize hook needs of the request it was asked from (valid while it runs). */
typedef struct FinalizeAsk {
        Gateway *gateway;
        const char *twin; /* the kind it came through */
        bool expired;     /* the caller's credential has expired */
} FinalizeAsk;

/* The answer of a finalize that ended s as done: its verdict's summary, or why there is none. */
static json_t *finalized_json(const Sandbox *s)
{
        char record[96], verdict[112], summary[112], score[32] = "none", message[1024];
        snprintf(record, sizeof(record), "/v1/sandboxes/%s", s->id);
        snprintf(verdict, sizeof(verdict), "%s/verdict", record);
        snprintf(summary, sizeof(summary), "%s/summary", record);
        json_t *v = s->verdict, *counts = json_object_get(v, "counts");
        if (json_is_number(json_object_get(v, "score")))
                snprintf(score, sizeof(score), "%.4g",
                         json_number_value(json_object_get(v, "score")));
        if (v)
                snprintf(message, sizeof(message),
                         "Sandbox %s is finalized and graded: %s, score %s (%" JSON_INTEGER_FORMAT
                         " of %" JSON_INTEGER_FORMAT
                         " scored criteria passed). The whole verdict: GET %s on the control API "
                         "(with the team's key); the run in words: GET %s.",
                         s->id, strempty(json_get_str(v, "state")), score,
                         json_integer_value(json_object_get(counts, "passed")),
                         json_integer_value(json_object_get(counts, "scored")), verdict, summary);
        else
                snprintf(message, sizeof(message),
                         "Sandbox %s is finalized, but its run could not be graded: %s. Its "
                         "record: GET %s on the control API.",
                         s->id, s->verdict_error ? s->verdict_error : "no verdict was written",
                         record);
        return json_pack("{s:b, s:s, s:s, s:s, s:s?, s:O?, s:O?, s:O?, s:s*, s:{s:s, s:s, s:s}, "
                         "s:s}",
                         "ok", true, "session_id", s->id, "run_id", s->id, "state",
                         sandbox_state_to_string(s->state), "task", s->task, "verdict", v, "passed",
                         json_object_get(v, "passed"), "score", json_object_get(v, "score"),
                         "verdict_error", s->verdict_error, "read", "verdict", verdict, "summary",
                         summary, "sandbox", record, "message", message);
}

/* Refuses finalize f of sandbox sid, which has ended (held or on record), saying how. */
static void finalize_refuse_ended(Manager *m, FrontFinalize *f, const char *sid, bool expired)
{
        _cleanup_json_ json_t *doc = NULL;
        (void)manager_record(m, sid, &doc);
        const char *state = json_get_str(doc, "state"), *reason = json_get_str(doc, "reason");
        char message[512];
        /* said as it is even to a credential past its exp: the run is what it asks about */
        if (streq_ptr(state, "done") && streq_ptr(reason, "finalized")) {
                _cleanup_json_ json_t *details =
                        json_pack("{s:s, s:s, s:s, s:O?, s:O*}", "session_id", sid, "state", state,
                                  "reason", reason, "verdict", json_object_get(doc, "verdict"),
                                  "verdict_error", json_object_get(doc, "verdict_error"));
                snprintf(message, sizeof(message),
                         "Sandbox %s has been finalized already: a run is graded once. Its "
                         "verdict: GET /v1/sandboxes/%s/verdict on the control API (its summary "
                         "is in these details).",
                         sid, sid);
                front_finalize_done(f, 409, "already_finalized", message, details);
                return;
        }
        _cleanup_json_ json_t *details =
                json_pack("{s:s, s:s?, s:s?}", "session_id", sid, "state", state, "reason", reason);
        if (expired || !state || streq(state, "expired")) {
                snprintf(message, sizeof(message),
                         "Sandbox %s has expired%s%s%s: there is no run left to finalize. Start a "
                         "new sandbox to go on.",
                         sid, reason ? " (" : "", strempty(reason), reason ? ")" : "");
                front_finalize_done(f, 410, "session_expired", message, details);
                return;
        }
        snprintf(message, sizeof(message),
                 "Sandbox %s has ended (%s%s%s) without being finalized: there is no run left to "
                 "grade.",
                 sid, state, reason ? ": " : "", strempty(reason));
        front_finalize_done(f, 409, "session_ended", message, details);
}

static void on_finalized(Sandbox *s, void *userdata)
{
        FrontFinalize *f = userdata;
        if (s->state != SANDBOX_DONE || !streq_ptr(s->reason, "finalized")) {
                /* something else ended it while its worlds were exported or graded */
                char message[512];
                _cleanup_json_ json_t *details =
                        json_pack("{s:s, s:s, s:s?}", "session_id", s->id, "state",
                                  sandbox_state_to_string(s->state), "reason", s->reason);
                snprintf(message, sizeof(message),
                         "Sandbox %s ended (%s: %s) while it was being finalized: it was not "
                         "graded.",
                         s->id, sandbox_state_to_string(s->state), strempty(s->reason));
                bool expired = s->state == SANDBOX_EXPIRED;
                front_finalize_done(f, expired ? 410 : 409,
                                    expired ? "session_expired" : "session_ended", message,
                                    details);
                return;
        }
        _cleanup_json_ json_t *answer = finalized_json(s);
        if (answer)
                front_finalize_done(f, 200, NULL, NULL, answer);
        else
                front_finalize_done(f, 500, "internal_error", "Out of memory.", NULL);
}

_Static_assert(FRONT_AGENT_REPLY_MAX == GRADE_AGENT_REPLY_KEEP,
               "a finalize's agent_reply is bounded alike at both ends");

/*
 * The FrontSession.finalize of a sandbox's twins: the control API's finalize (manager_finalize,
 * the sandbox's own task, never one the caller brings), refused in the sandbox's words when it
 * cannot run. The answer waits for the teardown, as the control API's does (on_finalized).
 */
static void gateway_finalize(void *userdata, FrontFinalize *f)
{
        const FinalizeAsk *ask = userdata;
        Manager *m = ask->gateway->manager;
        const char *sid = front_finalize_session(f);
        Sandbox *s = manager_get(m, sid);
        char message[512];
        if (!s || !sandbox_state_is_open(s->state) || ask->expired) {
                finalize_refuse_ended(m, f, sid, ask->expired);
                return;
        }
        if (manager_draining(m)) {
                front_finalize_done(f, 503, "shutting_down",
                                    "pomed is shutting down; this sandbox is about to end.", NULL);
                return;
        }
        if (s->state == SANDBOX_PROVISIONING) {
                front_finalize_done(f, 503, "twin_starting",
                                    "The sandbox is still starting; finalize it once it is ready.",
                                    NULL);
                return;
        }
        if (s->finalizing) {
                snprintf(message, sizeof(message),
                         "Sandbox %s is being finalized already; its verdict will be at GET "
                         "/v1/sandboxes/%s/verdict on the control API.",
                         sid, sid);
                front_finalize_done(f, 409, "finalizing", message, NULL);
                return;
        }
        if (!s->has_task) {
                snprintf(message, sizeof(message),
                         "Sandbox %s has no task to grade against: create it with task_markdown, "
                         "or finalize it through the control API with one (POST "
                         "/v1/sandboxes/%s/finalize {\"task_markdown\": …}).",
                         sid, sid);
                front_finalize_done(f, 409, "no_task", message, NULL);
                return;
        }
        SandboxError se = {};
        /* the agent's own last words, when it gives them: the judge sees them as its reply */
        SandboxFinalizeSpec spec = {};
        spec.agent_reply = front_finalize_reply(f, &spec.reply_len);
        if (manager_finalize(m, s->team, sid, &spec, on_finalized, f, &se) < 0) {
                /* the checks above leave only what cannot happen here, said as it is */
                front_finalize_done(f, 500, "internal_error", se.message, se.details);
                sandbox_error_done(&se);
                return;
        }
        log_info("%s: finalize asked from inside the run (%s of the %s twin)", sid,
                 front_finalize_surface(f), ask->twin);
}

/*
 * Serves a finalize asked through twin k of sandbox sid (s when pomed still holds it), whose
 * base URL for this request is mount, by a caller authenticated for it (auth OK or EXPIRED):
 * it is answered by the finalize itself, whatever the sandbox's state, in the surface's
 * envelope (over MCP, a tool result).
 */
static void serve_finalize_asked(Gateway *g, HttpRequest *rq, const TwinKind *k, const char *sid,
                                 Sandbox *s, const char *mount, const char *rest,
                                 const char *request_id, bool expired)
{
        Manager *m = g->manager;
        _cleanup_json_ json_t *doc = NULL;
        /* the same 404 as any call: a sandbox past its retention, a twin it never had */
        if ((!s && manager_record(m, sid, &doc) < 0 && !expired) ||
            (s && !sandbox_twin(s, k->name))) {
                reply_no_pod(rq, request_id);
                return;
        }
        FinalizeAsk ask = {.gateway = g, .twin = k->name, .expired = expired};
        FrontTarget t = {
                .kind = k,
                .run_id = sid,
                .mount_url = mount,
                .rest = rest,
                .request_id = request_id,
                .session = {.finalize = gateway_finalize, .userdata = &ask},
        };
        front_serve(rq, &t);
}

/* ---- routing ---- */

/* Where a request goes, as its Host and path say. */
typedef struct Route {
        const TwinKind *kind;
        char sid[64];     /* "" when a keyed request's credential names no sandbox */
        const char *rest; /* the raw path below the mount */
        bool keyed;       /* the sandbox is the credential's, not the path's */
        char mount[512];  /* the twin's base URL for this request (TwinRequest.base_url) */
} Route;

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
 * A request with no sandbox in its path, routed by its credential: one whose Host is a
 * vendor's own name (api.github.com, slack.com…: an agent that reaches the twins by the
 * vendors' names through pome's TLS), its whole path below that vendor's twin and its URLs
 * written at the vendor's origin; or one on a kind's keyed path on any host (Stripe's
 * "/v1/…": its SDKs take a host but no path prefix), served as "/stripe/s/{sid}/v1/…" would
 * be. The gateway's own names (127.0.0.1, its public name) are never a vendor's. Fills r
 * with the sandbox the credential names; one that names none (absent, malformed, badly
 * signed) leaves r->sid empty, and the twin's own 401 follows. Returns false when the
 * request is neither.
 */
static bool route_keyed(Manager *m, HttpRequest *rq, const char *path, Route *r)
{
        const TwinKind *k = front_vendor_kind(http_request_header(rq, "Host"));
        bool by_name = k != NULL;
        if (!k && !(k = front_keyed_kind(path)))
                return false;
        r->kind = k;
        r->rest = path;
        r->keyed = true;
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        front_keyed_session(k, manager_secret(m), TOKEN_SECRET_LEN, http_request_headers(rq),
                            http_request_query(rq), body, body_len, r->sid, sizeof(r->sid));
        if (by_name)
                front_vendor_origin(k, r->mount, sizeof(r->mount));
        else
                snprintf(r->mount, sizeof(r->mount), "%s/%s/s/%s", manager_public_url(m), k->name,
                         r->sid);
        return true;
}

/* A request on a sandbox's mount, "/{twin}/s/{sid}/…". Returns false for another shape. */
static bool route_mount(Manager *m, const char *path, Route *r)
{
        char twin[32];
        if (!split_mount(path, twin, sizeof(twin), r->sid, sizeof(r->sid), &r->rest))
                return false;
        r->kind = twin_kind_find(twin);
        snprintf(r->mount, sizeof(r->mount), "%s/%s/s/%s", manager_public_url(m), twin, r->sid);
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
        Route route = {};
        if (!route_keyed(m, rq, raw, &route) && !route_mount(m, raw, &route)) {
                _cleanup_json_ json_t *body = json_pack(
                        "{s:{s:s, s:s, s:n, s:s}}", "error", "type", "not_found", "message",
                        "Twin URLs look like /{twin}/s/{session_id}/…; take rest_url from the "
                        "sandbox's create response.",
                        "details", "request_id", request_id);
                front_reply(rq, 404, NULL, body, request_id);
                return;
        }
        const TwinKind *k = route.kind;
        const char *sid = route.sid, *rest = route.rest;
        bool keyed = route.keyed;
        if (!k) {
                reply_no_pod(rq, request_id);
                return;
        }
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        TokenClaims claims = {};
        FrontAuth auth = front_authenticate(k, manager_secret(m), TOKEN_SECRET_LEN, sid, rest,
                                            http_request_headers(rq), http_request_query(rq), body,
                                            body_len, time(NULL), &claims);
        /*
         * Nothing about a sandbox is told to a caller who cannot prove it may know: no
         * credential gets the twin's own 401 wherever it is sent, a wrong one (or one for
         * another sandbox) the same 404 everywhere.
         */
        if (auth == FRONT_AUTH_MISSING ||
            (keyed && auth != FRONT_AUTH_OK && auth != FRONT_AUTH_EXPIRED)) {
                /* keyed, the key is all there is: the vendor's own 401 for a bad one */
                TwinReply rp = {};
                front_auth_refusal(k, auth, rest, &rp);
                front_reply(rq, rp.status, rp.headers, rp.body, request_id);
                twin_reply_done(&rp);
                return;
        }
        if (auth == FRONT_AUTH_INVALID || auth == FRONT_AUTH_WRONG_SESSION) {
                reply_no_pod(rq, request_id);
                return;
        }
        Sandbox *s = manager_get(m, sid);
        if (front_finalize_asked(rq, rest)) {
                serve_finalize_asked(g, rq, k, sid, s, route.mount, rest, request_id,
                                     auth == FRONT_AUTH_EXPIRED);
                return;
        }
        if (!s) {
                /* An ended sandbox is only on record: 410 for its retention, then 404. */
                _cleanup_json_ json_t *doc = NULL;
                if (manager_record(m, sid, &doc) >= 0 || auth == FRONT_AUTH_EXPIRED)
                        reply_expired(rq, sid, json_get_str(doc, "reason"), request_id);
                else
                        reply_no_pod(rq, request_id);
                return;
        }
        SandboxTwin *st = sandbox_twin(s, k->name);
        /* A finalize has taken the worlds and tapes the run ends with: it is over. A token
         * whose exp passed on the wall clock (stepped forward) while its sandbox is open on
         * the boot clock, which is what its lifetime runs on, is still good: the sandbox,
         * not the wall clock, says when it ends. */
        if (!sandbox_state_is_open(s->state) || s->finalizing) {
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
        /* the same for every call of the sandbox: minted once, not an HMAC per call */
        if (!st->upload_token && k->upload_path &&
            front_upload_token(k, manager_secret(m), TOKEN_SECRET_LEN, s->id, &st->upload_token) <
                    0) {
                front_reply_error(rq, k, 500, "internal_error", "Out of memory.", request_id);
                return;
        }
        /* finalize_run in the twin's tool lists; a finalize itself never gets this far */
        FinalizeAsk ask = {.gateway = g, .twin = k->name};
        FrontTarget t = {
                .kind = k,
                .tape = st->tape,
                .run_id = s->id,
                .mount_url = route.mount,
                .rest = rest,
                .request_id = request_id,
                .max_page = FRONT_EVENTS_PAGE_MAX,
                .upload_token = st->upload_token,
                .credential = claims.provider[0] ? claims.provider : "session",
                .backend = {.call = pod_backend_call,
                            .record = pod_backend_record,
                            .record_line = pod_backend_record_line,
                            .hold = pod_backend_hold,
                            .userdata = st},
                .session = {.finalize = gateway_finalize, .userdata = &ask},
        };
        front_serve(rq, &t);
}

/*
 * The twin kind a request is for, as the HTTP layer's hooks can tell without a credential:
 * the vendor's whose name host is, a keyed path's (route_keyed), else the path's first
 * segment's, else NULL.
 */
static const TwinKind *kind_of(const char *path, const char *host)
{
        const TwinKind *k = front_vendor_kind(host);
        if (k)
                return k;
        if (!path || path[0] != '/')
                return NULL;
        if ((k = front_keyed_kind(path)))
                return k;
        char seg[32];
        size_t n = strcspn(path + 1, "/");
        if (n == 0 || n >= sizeof(seg))
                return NULL;
        memcpy(seg, path + 1, n);
        seg[n] = 0;
        return twin_kind_find(seg);
}

void gateway_refuse(const char *path, const char *host, int status, const char *code,
                    const char *message, HttpRefusal *ret, void *userdata _unused_)
{
        /* The twin the request is for answers in its own envelope, as it would for any
         * other refusal of its calls; anything else gets the control one. */
        const TwinKind *k = kind_of(path, host);
        if (!k) {
                control_refuse(path, host, status, code, message, ret, NULL);
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

void gateway_replied(const char *path, const char *host, int status, void *userdata)
{
        Gateway *g = userdata;
        /* label values come from the kinds' names only: a caller's path adds no series */
        const TwinKind *k = kind_of(path, host);
        metrics_gateway_reply(manager_metrics(g->manager), k ? k->name : "none", status);
}
