/* SPDX-License-Identifier: MIT */
/*
 * One twin in-process (cli/localtwin.h): the routes of a local twin (GET /healthz, the
 * loopback-only /admin/…, /s/<sid>/… through the shared front, and every path under its
 * vendor's own host names, keyed by the credential) over the engine, taped to a file.
 * `pome twin start` and `pome run --local` serve through this one file, so a local run sees
 * exactly the twin a developer pokes at with `pome twin start`.
 */
#include "cli/localtwin.h"

#include <assert.h>
#include <limits.h>
#include <strings.h>
#include <time.h>

#include "cli/build-info.h"
#include "common/httpd.h"
#include "common/json-util.h"
#include "common/text.h"
#include "common/timeutil.h"
#include "common/token.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "pods/front/serve.h"
#include "pods/front/tape.h"

#define LOCAL_MAX_BODY (1u << 20) /* bytes of a request body */

struct LocalTwin {
        Twin *twin;
        const TwinKind *kind;
        json_t *boot_seed; /* what /admin/reset goes back to */
        Tape *tape;
        Httpd *httpd;
        char *secret; /* the HMAC key, exactly the bytes given (CONTRACT.md "Tokens") */
        size_t secret_len;
        const char *admin_token;
        char base[128]; /* http://host:port */
        time_t started;
        unsigned long calls;
        json_t *rows; /* LocalTwinConfig.keep_rows: a copy of every tape row, in order */
};

/*
 * rp := the twin's own error envelope (GitHub {message, documentation_url, status}, Slack
 * {ok:false, error}) at status — ours, even where the vendor answers API errors with 200 —
 * and always carrying the sentence: these routes are ours, and a caller told only
 * "invalid_arguments" could not fix its seed.
 */
static void local_error(const LocalTwin *lt, int status, const char *code, const char *message,
                        TwinReply *rp)
{
        lt->kind->error(status, code, message, rp);
        rp->status = status;
        free(rp->error);
        rp->error = strdup(message);
        json_t *e = json_object_get(rp->body, "error");
        if (json_is_object(rp->body) && !json_object_get(rp->body, "message") && !json_is_object(e))
                json_object_set_new(rp->body, "message", json_string(message));
}

/* Answers rq with local_error's envelope. */
static void reply_local_error(const LocalTwin *lt, HttpRequest *rq, int status, const char *code,
                              const char *message, const char *request_id)
{
        TwinReply rp = {};
        local_error(lt, status, code, message, &rp);
        front_reply(rq, rp.status, rp.headers, rp.body, request_id);
        twin_reply_done(&rp);
}

static bool admin_allowed(LocalTwin *lt, HttpRequest *rq)
{
        if (lt->admin_token) {
                const char *t = http_request_header(rq, "X-Admin-Token");
                return t && token_equal(t, lt->admin_token);
        }
        return http_request_from_loopback(rq);
}

static json_t *mint(LocalTwin *lt, const char *sid)
{
        _cleanup_free_ char *session = NULL;
        int64_t exp = (int64_t)time(NULL) + 24 * 3600;
        const uint8_t *key = (const uint8_t *)lt->secret;
        if (token_mint_session(key, lt->secret_len, sid, "local", exp, NULL, NULL, &session) < 0)
                return NULL;
        char rest[256];
        snprintf(rest, sizeof(rest), "%s/s/%s", lt->base, sid);
        /* stripe's api_base is the host alone: its SDKs put "/v1/…" below it */
        _cleanup_json_ json_t *creds =
                front_provider_credentials(lt->kind, key, lt->secret_len, sid, exp, lt->base);
        const char *provider =
                json_get_str(creds, json_object_get(creds, "api_key") ? "api_key" : "token");
        return json_pack("{s:s, s:s, s:s, s:s?, s:O*, s:I}", "session_id", sid, "rest_url", rest,
                         "session_token", session, "provider_token", provider,
                         "provider_credentials", creds, "expires_at", (json_int_t)exp);
}

static bool blank(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!strchr(" \t\r\n", s[i]) || s[i] == 0)
                        return false;
        return true;
}

/* rp := the kind's envelope for a refusal of its control surfaces, message its error. */
static void control_error(const LocalTwin *lt, TwinControlError what, const char *message,
                          TwinReply *rp)
{
        lt->kind->control_error(what, message, rp);
        free(rp->error);
        rp->error = strdup(message);
}

/*
 * The seed a TWIN_KIND_TOLERANT_CONTROL kind's /admin/seed takes, read as hosted Pome's twin
 * of its vendor reads it: a form (its fields) when the Content-Type says so, else JSON, and
 * malformed or non-object JSON as {}; {seed: …} unwrapped for TWIN_KIND_SEED_WRAPPED; then
 * without the members the kind's seeds do not have (their names into *ret_ignored, a new
 * array). The seed into *ret (new reference). 0; -EINVAL when the wrapped seed is no object
 * (*ret is then the body as read); -ENOMEM.
 */
static int tolerant_seed(const LocalTwin *lt, HttpRequest *rq, json_t **ret, json_t **ret_ignored)
{
        size_t len;
        const char *body = http_request_body(rq, &len);
        const char *ct = http_request_header(rq, "Content-Type");
        _cleanup_json_ json_t *j = NULL;
        if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0) {
                _cleanup_json_ json_t *form = json_object();
                if (!form)
                        return -ENOMEM;
                /* each field a string, as hosted Pome's form reader gives it */
                for (const char *p = strempty(body), *end = p + (body ? len : 0); p < end;) {
                        const char *amp = memchr(p, '&', (size_t)(end - p)), *e = amp ? amp : end;
                        const char *eq = memchr(p, '=', (size_t)(e - p));
                        _cleanup_free_ char *name = strndup(p, (size_t)((eq ? eq : e) - p));
                        if (!name)
                                return -ENOMEM;
                        _cleanup_free_ char *v =
                                *name ? front_form_value(p, (size_t)(e - p), name) : NULL;
                        if (v && utf8_valid(name, strlen(name)) && utf8_valid(v, strlen(v)) &&
                            json_object_set_new(form, name, json_string(v)) < 0)
                                return -ENOMEM;
                        p = e + 1;
                }
                j = TAKE_PTR(form);
        } else
                j = body ? json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
        if (!json_is_object(j)) {
                json_decref(j);
                if (!(j = json_object()))
                        return -ENOMEM;
        }
        json_t *wrapped =
                (lt->kind->flags & TWIN_KIND_SEED_WRAPPED) ? json_object_get(j, "seed") : NULL;
        if (wrapped && !json_is_object(wrapped)) {
                *ret = TAKE_PTR(j);
                return -EINVAL;
        }
        _cleanup_json_ json_t *seed = json_deep_copy(wrapped ? wrapped : j),
                              *ignored = json_array();
        if (!seed || !ignored)
                return -ENOMEM;
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe (seed, tmp, k, v) {
                bool known = !lt->kind->seed_keys;
                for (const char *const *n = lt->kind->seed_keys; n && *n && !known; n++)
                        known = streq(*n, k);
                if (!known && (json_array_append_new(ignored, json_string(k)) < 0 ||
                               json_object_del(seed, k) < 0))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(seed);
        *ret_ignored = TAKE_PTR(ignored);
        return 0;
}

/*
 * The admin call what (reset, seed, token) of a caller past the gate, into rp: status,
 * body, error, request_body and state_mutation, for the reply and its tape row.
 */
static void admin_call(LocalTwin *lt, HttpRequest *rq, const char *what, TwinReply *rp)
{
        bool reset = streq(what, "reset"), seed = streq(what, "seed"), tok = streq(what, "token");
        if (!reset && !seed && !tok) {
                local_error(lt, 404, "unknown_method",
                            "Admin routes: POST /admin/reset, /admin/seed, /admin/token.", rp);
                return;
        }
        if (!streq(http_request_method(rq), "POST")) {
                local_error(lt, 405, "method_not_allowed", "Admin routes take POST.", rp);
                json_decref(rp->headers);
                rp->headers = json_pack("{s:s}", "Allow", "POST");
                return;
        }
        size_t len;
        const char *body = http_request_body(rq, &len);
        _cleanup_json_ json_t *j = NULL, *ignored = NULL;
        if (seed && (lt->kind->flags & TWIN_KIND_TOLERANT_CONTROL)) {
                int r = tolerant_seed(lt, rq, &j, &ignored);
                if (r == -ENOMEM) {
                        local_error(lt, 500, "internal_error", "Out of memory.", rp);
                        return;
                }
                rp->request_body = json_incref(j);
                if (r < 0) {
                        control_error(lt, TWIN_CONTROL_BAD_SEED,
                                      "seed must be a JSON object (the seed member of a form, "
                                      "or of a JSON body that wraps it).",
                                      rp);
                        return;
                }
        } else if (seed && (!body || blank(body, len))) {
                /* hosted Pome's GitHub twin: an empty body is no JSON */
                control_error(lt, TWIN_CONTROL_BAD_BODY, "The body is empty.", rp);
                return;
        } else if (!reset && body && !blank(body, len)) {
                json_error_t je;
                j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
                if (!j) {
                        char msg[128];
                        snprintf(msg, sizeof(msg), "The body is not JSON (line %d, column %d).",
                                 je.line, je.column);
                        if (seed)
                                control_error(lt, TWIN_CONTROL_BAD_BODY, msg, rp);
                        else
                                local_error(lt, 400, "invalid_json", msg, rp);
                        return;
                }
                rp->request_body = json_incref(j);
        }
        if (tok) {
                const char *sid = json_get_str(j, "sid");
                _cleanup_free_ char *gen = NULL;
                if (!sid && !json_object_get(j, "sid") && token_random_id("ses_", 16, &gen) >= 0)
                        sid = gen;
                if ((j && !json_is_object(j)) || !sid || strlen(sid) > 60 || !*sid ||
                    strchr(sid, '/') || strchr(sid, ':')) {
                        local_error(lt, 422, "invalid_arguments",
                                    "sid must be 1-60 characters without '/' or ':'.", rp);
                        return;
                }
                json_t *t = mint(lt, sid);
                if (!t)
                        local_error(lt, 500, "internal_error", "Out of memory.", rp);
                else
                        twin_reply_json(rp, 200, t);
                return;
        }
        char err[256] = "";
        int r;
        if (seed) {
                if (!json_is_object(j)) {
                        control_error(lt, TWIN_CONTROL_BAD_SEED,
                                      "The body must be a seed: a JSON object.", rp);
                        return;
                }
                _cleanup_json_ json_t *before = NULL;
                if ((lt->kind->flags & TWIN_KIND_SEED_DELTA) && twin_world(lt->twin))
                        before = lt->kind->public_state(twin_world(lt->twin));
                r = twin_reseed(lt->twin, j, err, sizeof(err));
                if (r >= 0 && before) {
                        _cleanup_json_ json_t *after = lt->kind->public_state(twin_world(lt->twin));
                        twin_reply_delta(rp, before, after);
                }
                if (r == -EINVAL) {
                        control_error(lt, TWIN_CONTROL_BAD_SEED, err, rp);
                        return;
                }
                if (r >= 0) {
                        /* the new seed is also what a later reset returns to */
                        json_decref(lt->boot_seed);
                        lt->boot_seed = json_incref(j);
                }
        } else
                r = twin_reseed(lt->twin, lt->boot_seed, err, sizeof(err));
        if (r < 0) {
                local_error(lt, r == -EINVAL ? 422 : 500,
                            r == -EINVAL ? "invalid_arguments" : "internal_error",
                            r == -EINVAL ? err : "Out of memory.", rp);
                return;
        }
        /* A reset is the start again, tape included; a seed keeps the tape (its row says when
         * the world was replaced). */
        if (reset) {
                (void)tape_reset(lt->tape);
                if (lt->rows)
                        json_array_clear(lt->rows);
        }
        rp->state_mutation = true;
        json_t *ok = json_pack("{s:b, s:s}", "ok", 1, "twin", lt->kind->name);
        if (ok && json_array_size(ignored) > 0)
                json_object_set(ok, "ignored", ignored);
        twin_reply_json(rp, 200, ok);
}

static int local_record(void *userdata, const json_t *row)
{
        LocalTwin *lt = userdata;
        lt->calls++;
        int r = row ? tape_append(lt->tape, row) : -ENOMEM;
        /* a copy, not a reference: the row is the caller's, and the rows kept are what the
         * tape file received, whatever becomes of that file */
        if (r >= 0 && lt->rows && json_array_append_new(lt->rows, json_deep_copy(row)) < 0)
                r = -ENOMEM;
        return r;
}

/* record for a row the front serialized already (the gateway's fast path): the bytes go to
 * the file as they are; kept rows are parsed back from the same bytes. */
static int local_record_line(void *userdata, const char *line, size_t len, const char *event_id)
{
        LocalTwin *lt = userdata;
        lt->calls++;
        int r = line ? tape_append_line(lt->tape, line, len, event_id) : -ENOMEM;
        if (r >= 0 && lt->rows) {
                json_t *row = json_loadb(line, len, JSON_ALLOW_NUL, NULL);
                if (!row || json_array_append_new(lt->rows, row) < 0)
                        r = -ENOMEM;
        }
        return r;
}

/* /admin/…: the gate, then the call, its tape row (run_id "local"), and the reply. */
static void handle_admin(LocalTwin *lt, HttpRequest *rq, const char *what, const char *request_id)
{
        if (!admin_allowed(lt, rq)) {
                /* not a served call: a stranger does not get to write on the tape; the body
                 * is hosted Pome's admin-gate 403 of the vendor, word for word */
                TwinReply deny = {};
                lt->kind->control_error(TWIN_CONTROL_FORBIDDEN, NULL, &deny);
                front_reply(rq, deny.status, deny.headers, deny.body, request_id);
                twin_reply_done(&deny);
                return;
        }
        int64_t ts = (int64_t)now_usec(CLOCK_REALTIME);
        TwinReply rp = {};
        admin_call(lt, rq, what, &rp);
        if (!rp.body) {
                twin_reply_done(&rp);
                reply_local_error(lt, rq, 500, "internal_error", "Out of memory.", request_id);
                return;
        }
        rp.fidelity = "semantic";
        size_t len;
        const char *body = http_request_body(rq, &len);
        FrontCall fc = {
                .twin = lt->kind->name,
                .run_id = "local",
                .request_id = request_id,
                .method = http_request_method(rq),
                .path = http_request_path(rq),
                .query = http_request_query(rq),
                .headers = http_request_headers(rq),
                .body = body,
                .body_len = len,
                .latency_ms =
                        (double)(now_usec(CLOCK_MONOTONIC) - http_request_start_usec(rq)) / 1000.0,
                .ts_usec = ts,
        };
        /* hosted Pome's Stripe twin keeps /admin/seed off its tape */
        if (!streq(what, "seed") || !(lt->kind->flags & TWIN_KIND_SEED_UNTAPED)) {
                _cleanup_json_ json_t *row = front_tape_row(&fc, &rp);
                (void)local_record(lt, row);
        }
        front_reply(rq, rp.status, rp.headers, rp.body, request_id);
        twin_reply_done(&rp);
}

/* The in-process backend: the twin answers at once. */
static int local_call(void *userdata, const TwinRequest *rq, FrontExchange *x)
{
        LocalTwin *lt = userdata;
        TwinReply rp = {};
        twin_handle(lt->twin, rq, &rp);
        front_exchange_done(x, 0, &rp);
        twin_reply_done(&rp);
        return 0;
}

/* HttpRefuseFn: the HTTP layer's own refusals (400, 413, 431…) in the twin's envelope. */
static void refuse(const char *path _unused_, const char *host _unused_, int status,
                   const char *code, const char *message, HttpRefusal *ret, void *userdata)
{
        LocalTwin *lt = userdata;
        front_refusal(lt->kind, status, code, message, ret);
}

/* GET /healthz (CONTRACT.md): no auth; tools = the MCP tool count; runtime = this build. */
static void serve_healthz(LocalTwin *lt, HttpRequest *rq, const char *request_id)
{
        const char *m = http_request_method(rq);
        if (!streq(m, "GET") && !streq(m, "HEAD")) {
                TwinReply rp = {};
                local_error(lt, 405, "method_not_allowed", "/healthz only answers GET.", &rp);
                json_decref(rp.headers);
                rp.headers = json_pack("{s:s}", "Allow", "GET");
                front_reply(rq, rp.status, rp.headers, rp.body, request_id);
                twin_reply_done(&rp);
                return;
        }
        /* hosted Pome's key set for the kind (twin_health), and this process in runtime */
        _cleanup_json_ json_t *j = twin_health(lt->twin, false);
        json_t *runtime = json_object_get(j, "runtime");
        if (json_is_object(runtime) &&
            json_object_update_new(runtime, json_pack("{s:i, s:I, s:I, s:I}", "pid", (int)getpid(),
                                                      "uptime_seconds",
                                                      (json_int_t)(time(NULL) - lt->started),
                                                      "calls", (json_int_t)lt->calls, "tape_rows",
                                                      (json_int_t)tape_count(lt->tape))) < 0) {
                json_decref(j);
                j = NULL;
        }
        front_reply(rq, j ? 200 : 500, NULL, j, request_id);
}

/* Answers rq with the 404 of a path that is none of the local twin's routes. */
static void reply_unknown_route(LocalTwin *lt, HttpRequest *rq, const char *request_id)
{
        reply_local_error(lt, rq, 404, "unknown_method",
                          "Local twin routes: GET /healthz, /s/<session-id>/… (the twin), "
                          "POST /admin/reset|seed|token.",
                          request_id);
}

static void handle(HttpRequest *rq, void *userdata)
{
        LocalTwin *lt = userdata;
        const char *raw = http_request_path(rq);
        char request_id[25];
        if (front_request_id(request_id) < 0)
                snprintf(request_id, sizeof(request_id), "req_unavailable");
        /*
         * Called by its vendor's own name (through pome's TLS in a sealed agent's pod), the
         * whole path is the twin's, /healthz and /admin/ included (no vendor serves ours),
         * and the credential names the session; another vendor's name is no route here.
         */
        const TwinKind *vendor = front_vendor_kind(http_request_header(rq, "Host"));
        if (vendor && vendor != lt->kind) {
                reply_unknown_route(lt, rq, request_id);
                return;
        }
        if (!vendor && streq(raw, "/healthz")) {
                serve_healthz(lt, rq, request_id);
                return;
        }
        const char *admin = vendor ? NULL : startswith(raw, "/admin/");
        if (admin) {
                handle_admin(lt, rq, admin, request_id);
                return;
        }
        const char *p = startswith(raw, "/s/");
        const char *e = p ? strchrnul(p, '/') : NULL;
        char sid[64];
        json_t *headers = http_request_headers(rq);
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        if (vendor || front_keyed_kind(raw) == lt->kind ||
            (!p && lt->kind->keyed_prefix && !(lt->kind->flags & TWIN_KIND_KEYED_PREFIX_ONLY))) {
                /* by name, or on Stripe's "/v1" (its SDKs take no path prefix): the
                 * credential names the session. A Stripe twin routes every other path
                 * outside /s/ so too: its key is asked for first (hosted Pome's Stripe
                 * twin: an unknown root route is the 401 of its /v1 auth wall). */
                front_keyed_session(lt->kind, (const uint8_t *)lt->secret, lt->secret_len, headers,
                                    http_request_query(rq), body, body_len, sid, sizeof(sid));
                p = e = raw;
        } else if (!p || e == p || (size_t)(e - p) >= sizeof(sid)) {
                reply_unknown_route(lt, rq, request_id);
                return;
        } else {
                memcpy(sid, p, (size_t)(e - p));
                sid[e - p] = 0;
        }
        TokenClaims claims = {};
        FrontAuth auth = front_authenticate(lt->kind, (const uint8_t *)lt->secret, lt->secret_len,
                                            sid, e, headers, http_request_query(rq), body, body_len,
                                            time(NULL), &claims);
        if (auth != FRONT_AUTH_OK) {
                /* A local twin answers as the vendor would, in its own envelope and words. */
                TwinReply rp = {};
                front_auth_refusal(lt->kind, auth, e, &rp);
                front_reply(rq, rp.status, rp.headers, rp.body, request_id);
                twin_reply_done(&rp);
                return;
        }
        _cleanup_free_ char *upload = NULL;
        if (front_upload_token(lt->kind, (const uint8_t *)lt->secret, lt->secret_len, sid,
                               &upload) < 0) {
                front_reply_error(rq, lt->kind, 500, "internal_error", "Out of memory.",
                                  request_id);
                return;
        }
        char mount[256];
        if (vendor)
                front_vendor_origin(lt->kind, mount, sizeof(mount));
        else
                snprintf(mount, sizeof(mount), "%s/s/%s", lt->base, sid);
        FrontTarget t = {
                .kind = lt->kind,
                .tape = lt->tape,
                .run_id = sid,
                .mount_url = mount,
                .rest = e,
                .request_id = request_id,
                .max_page = FRONT_EVENTS_PAGE_MAX,
                .upload_token = upload,
                .credential = claims.provider[0] ? claims.provider : "session",
                .backend = {.call = local_call,
                            .record = local_record,
                            .record_line = local_record_line,
                            .userdata = lt},
        };
        front_serve(rq, &t);
}

LocalTwin *local_twin_free(LocalTwin *lt)
{
        if (!lt)
                return NULL;
        httpd_free(lt->httpd);
        tape_free(lt->tape);
        json_decref(lt->rows);
        twin_free(lt->twin);
        json_decref(lt->boot_seed);
        if (lt->secret)
                explicit_bzero(lt->secret, lt->secret_len);
        free(lt->secret);
        free(lt);
        return NULL;
}

int local_twin_new(sd_event *e, const LocalTwinConfig *cfg, LocalTwin **ret, char *err,
                   size_t errlen)
{
        assert(e && cfg && cfg->kind && cfg->secret && cfg->secret_len > 0 && cfg->host);
        /* the health answers' runtime block names this build */
        twin_set_build(POME_GIT_SHA, POME_BUILD_TIME);
        LocalTwin *lt = calloc(1, sizeof(*lt));
        if (!lt)
                return -ENOMEM;
        lt->kind = cfg->kind;
        lt->started = time(NULL);
        lt->admin_token = cfg->admin_token;
        lt->boot_seed = cfg->seed ? json_deep_copy(cfg->seed) : json_object();
        lt->secret = malloc(cfg->secret_len + 1);
        if (cfg->keep_rows && !(lt->rows = json_array())) {
                local_twin_free(lt);
                return -ENOMEM;
        }
        if (!lt->boot_seed || !lt->secret) {
                local_twin_free(lt);
                return -ENOMEM;
        }
        memcpy(lt->secret, cfg->secret, cfg->secret_len);
        lt->secret[cfg->secret_len] = 0;
        lt->secret_len = cfg->secret_len;
        int r = twin_new(lt->kind, lt->boot_seed, &lt->twin, err, errlen);
        if (r < 0) {
                local_twin_free(lt);
                return r;
        }
        r = tape_open(cfg->tape_path, &lt->tape);
        if (r < 0) {
                snprintf(err, errlen, "cannot open the tape %s: %s",
                         cfg->tape_path ? cfg->tape_path : "(a temporary file)", strerror(-r));
                local_twin_free(lt);
                return r;
        }
        HttpdConfig hc = {.address = cfg->host,
                          .port = cfg->port,
                          .max_body = LOCAL_MAX_BODY,
                          .connection_limit = 256,
                          .connection_timeout = 60,
                          .refuse = refuse};
        r = httpd_new(e, &hc, handle, lt, &lt->httpd);
        if (r < 0) {
                snprintf(err, errlen, "cannot listen on %s:%u: %s", cfg->host, cfg->port,
                         strerror(-r));
                local_twin_free(lt);
                return r;
        }
        bool v6 = strchr(cfg->host, ':') != NULL;
        snprintf(lt->base, sizeof(lt->base), "http://%s%s%s:%u", v6 ? "[" : "", cfg->host,
                 v6 ? "]" : "", httpd_port(lt->httpd));
        *ret = lt;
        return 0;
}

const char *local_twin_base(const LocalTwin *lt)
{
        return lt->base;
}

const TwinKind *local_twin_kind(const LocalTwin *lt)
{
        return lt->kind;
}

size_t local_twin_tape_rows(const LocalTwin *lt)
{
        return tape_count(lt->tape);
}

const json_t *local_twin_rows(const LocalTwin *lt)
{
        return lt->rows;
}

json_t *local_twin_mint(LocalTwin *lt, const char *sid)
{
        return mint(lt, sid);
}

int local_twin_export(LocalTwin *lt, const char *sid, json_t **ret)
{
        TwinReply due = {};
        int r = twin_advance(lt->twin, &due);
        _cleanup_json_ json_t *events = TAKE_PTR(due.events);
        twin_reply_done(&due);
        if (r < 0)
                return r;
        if (json_array_size(events) > 0) {
                char request_id[25], mount[128];
                if (front_request_id(request_id) < 0)
                        snprintf(request_id, sizeof(request_id), "req_finalize");
                snprintf(mount, sizeof(mount), "/s/%s", sid);
                FrontCall fc = {.twin = lt->kind->name,
                                .run_id = sid,
                                .request_id = request_id,
                                .ts_usec = (int64_t)now_usec(CLOCK_REALTIME)};
                size_t i;
                json_t *ev;
                json_array_foreach (events, i, ev) {
                        _cleanup_json_ json_t *row = front_event_row(&fc, mount, ev);
                        r = local_record(lt, row);
                        if (r < 0)
                                return r;
                }
        }
        json_t *world = json_deep_copy(twin_world(lt->twin));
        if (!world)
                return -ENOMEM;
        *ret = world;
        return 0;
}

char *local_images_dir(void)
{
        const char *env = getenv("POME_IMAGES_DIR");
        if (env)
                return strdup(env);
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n > 0) {
                exe[n] = 0;
                char *slash = strrchr(exe, '/');
                if (slash)
                        *slash = 0;
                char *p;
                if (asprintf(&p, "%s/../share/pome/sandbox-images", exe) >= 0) {
                        if (access(p, R_OK) == 0)
                                return p;
                        free(p);
                }
        }
        if (access(POME_SOURCE_DIR "/sandbox-images", R_OK) == 0)
                return strdup(POME_SOURCE_DIR "/sandbox-images");
        return strdup("/usr/share/pome/sandbox-images");
}

int local_seed_load(const char *twin, const char *name_or_path, json_t **ret, char *err,
                    size_t errlen)
{
        _cleanup_free_ char *path = NULL;
        if (strchr(name_or_path, '/') || endswith(name_or_path, ".json"))
                path = strdup(name_or_path);
        else {
                _cleanup_free_ char *dir = local_images_dir();
                if (!dir || asprintf(&path, "%s/%s/seeds/%s.json", dir, twin, name_or_path) < 0)
                        path = NULL;
        }
        if (!path)
                return -ENOMEM;
        if (access(path, R_OK) < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "cannot read seed %s: %s", path, strerror(-r));
                return r == -ENOENT ? -ENOENT : -EINVAL;
        }
        json_error_t je;
        json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!j || !json_is_object(j)) {
                snprintf(err, errlen, "cannot load seed %s: %s", path,
                         j ? "a seed is one JSON object" : je.text);
                json_decref(j);
                return -EINVAL;
        }
        *ret = j;
        return 0;
}
