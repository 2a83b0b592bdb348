/* SPDX-License-Identifier: MIT */
#include "supervisor/control.h"

#include <fcntl.h>
#include <inttypes.h>
#include <strings.h>
#include <time.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "pods/front/serve.h"
#include "pods/grade/grade.h"
#include "supervisor/log.h"
#include "supervisor/ui.h"

struct Control {
        Manager *manager;
        Ui *ui; /* the dashboard's files, /ui/ */
};

int control_new(Manager *m, Control **ret)
{
        Control *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->manager = m;
        int r = ui_new(manager_config(m), &c->ui);
        if (r < 0) {
                free(c);
                return r;
        }
        *ret = c;
        return 0;
}

Control *control_free(Control *c)
{
        if (c)
                ui_free(c->ui);
        free(c);
        return NULL;
}

/* One request being answered (lives until the reply, possibly asynchronous). */
typedef struct Call {
        Control *control;
        HttpRequest *rq;
        Team *team;
        char request_id[25];
        int64_t asked_ttl, asked_idle; /* create: seconds asked for, -1 = not given */
} Call;

static void reply_json(Call *c, int status, const json_t *body)
{
        _cleanup_json_ json_t *h = json_pack("{s:s}", "X-Request-Id", c->request_id);
        (void)http_reply_json(c->rq, status, h, body);
}

static void reply_envelope(Call *c, int status, const char *type, const char *message,
                           const json_t *details)
{
        _cleanup_json_ json_t *body =
                json_pack("{s:{s:s, s:s, s:O?, s:s}}", "error", "type", type, "message", message,
                          "details", details, "request_id", c->request_id);
        bool busy = streq(type, "busy");
        /* a burst's refusals are the admission working, and a full state directory is said
         * once when it fills (SandboxStorage): not one line each */
        if (status >= 500 && !busy && status != 507)
                log_warning("%s %s → %d %s: %s", http_request_method(c->rq),
                            http_request_path(c->rq), status, type, message);
        _cleanup_json_ json_t *h = json_pack("{s:s}", "X-Request-Id", c->request_id);
        /* RFC 9110 §10.2.3: when to try again */
        if (h && (busy || status == 503))
                json_object_set_new(h, "Retry-After", json_string("1"));
        (void)http_reply_json(c->rq, status, h, body);
}

/* The one place a domain error becomes HTTP (CONTRACT.md error types). */
static void reply_error(Call *c, const SandboxError *e)
{
        static const struct {
                int status;
                const char *type;
        } map[] = {
                [SANDBOX_ERR_INVALID] = {422, "validation_failed"},
                [SANDBOX_ERR_QUOTA] = {402, "quota_exceeded"},
                [SANDBOX_ERR_NOT_FOUND] = {404, "not_found"},
                [SANDBOX_ERR_PROVISIONING] = {409, "conflict"},
                [SANDBOX_ERR_UNGRADED] = {409, "conflict"},
                [SANDBOX_ERR_ENDED] = {409, "conflict"},
                [SANDBOX_ERR_EXPIRED] = {410, "session_expired"},
                [SANDBOX_ERR_SHUTTING_DOWN] = {503, "shutting_down"},
                [SANDBOX_ERR_BUSY] = {503, "busy"},
                [SANDBOX_ERR_START_FAILED] = {503, "internal_error"},
                [SANDBOX_ERR_STORAGE] = {507, "insufficient_storage"},
                [SANDBOX_ERR_UNISOLATED] = {503, "isolation_unavailable"},
                [SANDBOX_ERR_LEDGER] = {503, "ledger_unavailable"},
                [SANDBOX_ERR_INTERNAL] = {500, "internal_error"},
        };
        char message[sizeof(e->message) + 256];
        snprintf(message, sizeof(message), "%s", e->message);
        if (e->code == SANDBOX_ERR_UNGRADED) {
                const char *id = json_get_str(e->details, "session_id");
                snprintf(message, sizeof(message),
                         "%s To keep the run, finalize it (POST /v1/sandboxes/%s/finalize); to "
                         "discard it, repeat with ?confirm_discard=<discard_token>.",
                         e->message, strempty(id));
        } else if (e->code == SANDBOX_ERR_EXPIRED) {
                const char *id = json_get_str(e->details, "session_id");
                snprintf(message, sizeof(message),
                         "%s Its twins cannot be called any more; its record and tapes stay "
                         "readable (GET /v1/sandboxes/%s, …/events?twin=). Start a new sandbox "
                         "to go on.",
                         e->message, strempty(id));
        }
        reply_envelope(c, map[e->code].status, map[e->code].type, message, e->details);
}

static void fail(Call *c, int status, const char *type, json_t *details, const char *fmt, ...)
        _printf_(5, 6);
static void fail(Call *c, int status, const char *type, json_t *details, const char *fmt, ...)
{
        char message[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        reply_envelope(c, status, type, message, details);
        json_decref(details);
}

/*
 * Value of a query parameter (decoded, new string) into *ret, NULL when absent. Returns
 * false (the caller answers 422) for a value that is not text.
 */
static bool query_param(Call *c, const char *name, char **ret)
{
        int r = front_query_value(http_request_query(c->rq), name, ret);
        if (r == -ENOENT || r == -ENOMEM) /* out of memory reads as absent: the safe side */
                *ret = NULL;
        return r != -EBADMSG;
}

/* ---- handlers ---- */

/*
 * What a create asked for and did not get, said in the answer instead of cut silently:
 * a lifetime above the cap (30 minutes, or limits.lifetime) or an idle timeout above the
 * deployment's. A new array, or NULL when there is nothing to say.
 */
static json_t *create_warnings(const Call *c, const Sandbox *s)
{
        _cleanup_json_ json_t *w = json_array();
        int64_t lifetime = s->expires_at - s->created_at;
        int64_t idle = (int64_t)(s->idle_usec / USEC_PER_SEC);
        char msg[256];
        if (!w)
                return NULL;
        if (c->asked_ttl > lifetime) {
                snprintf(msg, sizeof(msg),
                         "ttl_seconds %" PRId64 " is above this deployment's cap of %" PRId64
                         " s (limits.lifetime, at most 30 minutes): the sandbox lives %" PRId64
                         " s.",
                         c->asked_ttl, lifetime, lifetime);
                json_array_append_new(w,
                                      json_pack("{s:s, s:s, s:I, s:I}", "field", "ttl_seconds",
                                                "message", msg, "asked", (json_int_t)c->asked_ttl,
                                                "granted", (json_int_t)lifetime));
        }
        /* with no idle cap (limits.idle_timeout: off) an ask is only held to the lifetime */
        if (c->asked_idle > idle && idle > 0 &&
            manager_config(c->control->manager)->idle_timeout_usec > 0) {
                snprintf(msg, sizeof(msg),
                         "idle_timeout_seconds %" PRId64 " is above this deployment's cap of "
                         "%" PRId64 " s (limits.idle_timeout): the sandbox ends after %" PRId64
                         " s without a twin call.",
                         c->asked_idle, idle, idle);
                json_array_append_new(w, json_pack("{s:s, s:s, s:I, s:I}", "field",
                                                   "idle_timeout_seconds", "message", msg, "asked",
                                                   (json_int_t)c->asked_idle, "granted",
                                                   (json_int_t)idle));
        }
        return json_array_size(w) ? TAKE_PTR(w) : NULL;
}

static void on_created(Sandbox *s, const SandboxError *e, void *userdata)
{
        Call *c = userdata;
        if (e)
                reply_error(c, e);
        else {
                _cleanup_json_ json_t *j = sandbox_credentials_json(s);
                json_t *w = j ? create_warnings(c, s) : NULL;
                if (w)
                        json_object_set_new(j, "warnings", w);
                if (j)
                        reply_json(c, 201, j);
                else
                        fail(c, 500, "internal_error", NULL, "out of memory");
        }
        free(c);
}

static int string_array(json_t *v, const char **out, size_t max, size_t *ret_n)
{
        size_t n = 0;
        if (json_is_string(v)) {
                out[0] = json_string_value(v);
                *ret_n = 1;
                return 0;
        }
        if (!json_is_array(v))
                return -EINVAL;
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x) {
                if (!json_is_string(x))
                        return -EINVAL;
                if (n < max)
                        out[n] = json_string_value(x);
                n++;
        }
        *ret_n = n;
        return 0;
}

/* The body's task_markdown (a string; absent or null = none) into *ret. False: answered. */
static bool task_markdown(Call *c, json_t *j, const char **ret, size_t *ret_len)
{
        json_t *t = json_object_get(j, "task_markdown");
        *ret = NULL;
        *ret_len = 0;
        if (!t || json_is_null(t))
                return true;
        if (!json_is_string(t)) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "task_markdown"),
                     "task_markdown must be a string: the whole task file, hosted Pome's Markdown "
                     "format.");
                return false;
        }
        *ret = json_string_value(t);
        *ret_len = json_string_length(t);
        return true;
}

static bool create_request(Call *c, json_t *j, SandboxRequest *rq)
{
        *rq = (SandboxRequest){.idle_usec = -1};
        c->asked_ttl = c->asked_idle = -1;
        /* A misspelt field silently ignored would start a sandbox the caller did not ask
         * for (a 30-minute one for "ttl", the default world for "seed"). */
        static const char *const known[] = {
                "twins", "twin",         "seeds", "ttl_seconds", "idle_timeout_seconds",
                "task",  "task_markdown"};
        const char *key;
        json_t *value;
        json_object_foreach (j, key, value) {
                size_t i = 0;
                while (i < ELEMENTSOF(known) && !streq(key, known[i]))
                        i++;
                if (i == ELEMENTSOF(known)) {
                        fail(c, 422, "validation_failed", json_pack("{s:s}", "field", key),
                             "Unknown field '%s'. A create takes twins, seeds, ttl_seconds, "
                             "idle_timeout_seconds, task and task_markdown.",
                             key);
                        return false;
                }
        }
        json_t *twins = json_object_get(j, "twins");
        if (!twins)
                twins = json_object_get(j, "twin");
        if (!twins) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "twins"),
                     "\"twins\" is required, e.g. {\"twins\": [\"github\", \"slack\"]}.");
                return false;
        }
        if (string_array(twins, rq->twins, SANDBOX_TWINS_MAX, &rq->n_twins) < 0) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "twins"),
                     "\"twins\" must be a list of twin names.");
                return false;
        }
        json_t *seeds = json_object_get(j, "seeds");
        if (seeds && !json_is_null(seeds)) {
                if (!json_is_object(seeds)) {
                        fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "seeds"),
                             "\"seeds\" must map a twin to a seed name or a seed: "
                             "{\"github\": \"default\"}.");
                        return false;
                }
                const char *k;
                json_t *v;
                json_object_foreach (seeds, k, v) {
                        size_t i = 0;
                        while (i < rq->n_twins && i < SANDBOX_TWINS_MAX && !streq(rq->twins[i], k))
                                i++;
                        if (i >= rq->n_twins || i >= SANDBOX_TWINS_MAX ||
                            !(json_is_string(v) || json_is_object(v))) {
                                fail(c, 422, "validation_failed",
                                     json_pack("{s:s, s:s}", "field", "seeds", "twin", k),
                                     "seeds.%s: not a twin of this sandbox, or neither a seed "
                                     "name nor a seed (a JSON object).",
                                     k);
                                return false;
                        }
                        if (json_is_object(v))
                                rq->seed_docs[i] = v;
                        else
                                rq->seeds[i] = json_string_value(v);
                }
        }
        /* above the deployment's caps a clock is granted at the cap, and the answer says so
         * (create_warnings); only what is no number of seconds at all is refused */
        const Config *cfg = manager_config(c->control->manager);
        uint64_t lifetime_cap = cfg->lifetime_usec / USEC_PER_SEC;
        uint64_t idle_cap = cfg->idle_timeout_usec / USEC_PER_SEC;
        json_t *ttl = json_object_get(j, "ttl_seconds");
        if (ttl && !json_is_null(ttl)) {
                if (!json_is_integer(ttl) || json_integer_value(ttl) <= 0) {
                        fail(c, 422, "validation_failed",
                             json_pack("{s:s, s:I}", "field", "ttl_seconds", "cap",
                                       (json_int_t)lifetime_cap),
                             "ttl_seconds must be a positive whole number of seconds (above "
                             "this deployment's cap of %" PRIu64 " s it is granted at the cap).",
                             lifetime_cap);
                        return false;
                }
                json_int_t v = json_integer_value(ttl);
                c->asked_ttl = v;
                rq->ttl_usec = v > 1800 ? 1800 * USEC_PER_SEC : (uint64_t)v * USEC_PER_SEC;
        }
        json_t *idle = json_object_get(j, "idle_timeout_seconds");
        if (idle && !json_is_null(idle)) {
                if (!json_is_integer(idle) || json_integer_value(idle) < 0) {
                        if (idle_cap)
                                fail(c, 422, "validation_failed",
                                     json_pack("{s:s, s:I}", "field", "idle_timeout_seconds", "cap",
                                               (json_int_t)idle_cap),
                                     "idle_timeout_seconds must be a whole number of seconds, "
                                     "0 to turn the idle clock off (above this deployment's "
                                     "cap of %" PRIu64 " s it is granted at the cap).",
                                     idle_cap);
                        else
                                fail(c, 422, "validation_failed",
                                     json_pack("{s:s}", "field", "idle_timeout_seconds"),
                                     "idle_timeout_seconds must be a whole number of seconds, "
                                     "0 to turn the idle clock off (this deployment has none: "
                                     "limits.idle_timeout is off).");
                        return false;
                }
                json_int_t v = json_integer_value(idle);
                c->asked_idle = v;
                /* no clock outlives the lifetime cap: a larger ask (with no idle cap) would
                 * only risk the multiplication */
                if ((uint64_t)v > CONFIG_LIFETIME_MAX_USEC / USEC_PER_SEC)
                        v = (json_int_t)(CONFIG_LIFETIME_MAX_USEC / USEC_PER_SEC);
                rq->idle_usec = (int64_t)v * (int64_t)USEC_PER_SEC;
        }
        json_t *task = json_object_get(j, "task");
        if (task && !json_is_null(task)) {
                if (!json_is_string(task)) {
                        fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "task"),
                             "task must be a string.");
                        return false;
                }
                rq->task = json_string_value(task);
        }
        return task_markdown(c, j, &rq->task_markdown, &rq->task_markdown_len);
}

/* The request's body as a JSON object (an empty body is {}), or NULL: answered (400). */
static json_t *body_object(Call *c)
{
        size_t len;
        const char *body = http_request_body(c->rq, &len);
        json_error_t je;
        json_t *j = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : json_object();
        if (!j) {
                fail(c, 400, "validation_failed",
                     json_pack("{s:i, s:i}", "line", je.line, "column", je.column),
                     "Malformed JSON body: %s (line %d, column %d).", je.text, je.line, je.column);
                return NULL;
        }
        if (!json_is_object(j)) {
                json_decref(j);
                fail(c, 400, "validation_failed", NULL, "The body must be a JSON object.");
                return NULL;
        }
        return j;
}

static void handle_create(Call *c)
{
        _cleanup_json_ json_t *j = body_object(c);
        if (!j) {
                free(c);
                return;
        }
        SandboxRequest rq;
        if (!create_request(c, j, &rq)) {
                free(c);
                return;
        }
        SandboxError e = {};
        if (manager_create(c->control->manager, c->team, &rq, on_created, c, &e) < 0) {
                reply_error(c, &e);
                sandbox_error_done(&e);
                free(c);
        }
        /* else on_created answers and frees c (perhaps already has) */
}

static void handle_list(Call *c)
{
        _cleanup_free_ char *state = NULL, *limit_s = NULL, *after = NULL;
        if (!query_param(c, "state", &state) || !query_param(c, "limit", &limit_s) ||
            !query_param(c, "starting_after", &after)) {
                fail(c, 422, "validation_failed", NULL,
                     "Query parameters must be text (a NUL "
                     "is not).");
                return;
        }
        if (state && !streq(state, "all") && sandbox_state_from_string(state) < 0) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "state"),
                     "state must be one of provisioning, ready, running, done, expired, failed, "
                     "stopped, all.");
                return;
        }
        long limit = 20;
        if (limit_s) {
                char *end;
                limit = strtol(limit_s, &end, 10);
                if (*end || limit < 1 || limit > 1000) {
                        fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "limit"),
                             "limit must be an integer from 1 to 1000.");
                        return;
                }
        }
        /* The registry has every sandbox within its retention, across restarts. */
        _cleanup_json_ json_t *data = NULL;
        bool more = false;
        int r = manager_list(c->control->manager, c->team->id, state,
                             after && *after ? after : NULL, (unsigned)limit, &data, &more);
        if (r == -ENOENT) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "starting_after"),
                     "starting_after must be the id of one of your team's kept sandboxes (the "
                     "last of the previous page).");
                return;
        }
        if (r < 0) {
                fail(c, 500, "internal_error", NULL, "Cannot read the registry: %s", strerror(-r));
                return;
        }
        /* a fleet node lists its own sandboxes, and says whose they are (docs/fleet.md) */
        const FleetConfig *fleet = manager_config(c->control->manager)->fleet;
        _cleanup_json_ json_t *j =
                json_pack("{s:s, s:O, s:b, s:s?}", "object", "list", "data", data, "has_more", more,
                          "node", fleet ? fleet->node : NULL);
        reply_json(c, 200, j);
}

static void on_stopped(Sandbox *s _unused_, void *userdata)
{
        Call *c = userdata;
        _cleanup_json_ json_t *h = json_pack("{s:s}", "X-Request-Id", c->request_id);
        (void)http_reply(c->rq, 204, h, NULL, 0);
        free(c);
}

static void handle_delete(Call *c, const char *id)
{
        _cleanup_free_ char *confirm = NULL;
        (void)query_param(c, "confirm_discard", &confirm); /* not text: no token, refused */
        SandboxError e = {};
        if (manager_stop(c->control->manager, c->team, id, confirm, false, on_stopped, c, &e) < 0) {
                reply_error(c, &e);
                sandbox_error_done(&e);
                free(c);
        }
        /* else on_stopped answers and frees c (perhaps already has) */
}

static void handle_get(Call *c, const char *id)
{
        _cleanup_json_ json_t *doc = NULL;
        int r = manager_record(c->control->manager, id, &doc);
        if (r == -ENOENT || (r >= 0 && !streq_ptr(json_get_str(doc, "team_id"), c->team->id))) {
                fail(c, 404, "not_found", json_pack("{s:s}", "session_id", id),
                     "No sandbox %s for team %s.", id, c->team->id);
                return;
        }
        if (r < 0) {
                fail(c, 500, "internal_error", NULL, "Cannot read the registry: %s", strerror(-r));
                return;
        }
        /* every sandbox in the registry is readable, ended ones too (its twins answer 410) */
        reply_json(c, 200, doc);
}

/*
 * GET /v1/sandboxes/{id}/events?twin=T[&after=&limit=]: a twin's tape, live or as the ended
 * run left it on disk, paged as /_pome/events is (front_reply_tape).
 */
/* The ?twin= of a run read, answered with the refusal when it is not text; NULL when absent
 * (the sandbox's first twin). false: answered. */
static bool twin_param(Call *c, char **ret)
{
        if (query_param(c, "twin", ret))
                return true;
        fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "twin"),
             "twin must be text (a NUL is not).");
        return false;
}

/* Answers e (a manager refusal) and releases it. */
static void reply_refusal(Call *c, SandboxError *e)
{
        reply_error(c, e);
        sandbox_error_done(e);
}

static void handle_events(Call *c, const char *id)
{
        _cleanup_free_ char *twin = NULL;
        if (!twin_param(c, &twin))
                return;
        Tape *tape = NULL;
        bool owned = false;
        const char *name = NULL;
        SandboxError se = {};
        if (manager_run_tape(c->control->manager, c->team, id, twin, &tape, &owned, &name, &se) <
            0) {
                reply_refusal(c, &se);
                return;
        }
        char link[160];
        snprintf(link, sizeof(link), "/v1/sandboxes/%s/events?twin=%s", id, name);
        const char *why = "Out of memory.";
        int r = front_reply_tape(c->rq, tape, link, FRONT_EVENTS_PAGE_MAX, c->request_id, &why);
        if (owned)
                tape_free(tape); /* a reader holds its own descriptor */
        /* why begins with the name of the parameter it refuses */
        if (r == -EINVAL || r == -ENOENT)
                fail(c, 422, "validation_failed",
                     json_pack("{s:s%}", "field", why, strcspn(why, " ,")), "%s", why);
        else if (r < 0)
                fail(c, 500, "internal_error", NULL, "%s", why);
}

#define SUMMARY_MAX  (16u << 20)  /* bytes of a summary.md served */
#define RUN_JSON_MAX (256u << 20) /* bytes of a verdict.json or <twin>.final.json served */

/*
 * GET /v1/sandboxes/{id}/verdict, /summary, /agent-reply and /state?twin=T: a file the run
 * left (verdict.json, summary.md as text/markdown, agent-reply.txt as text/plain: what the
 * judge was shown of the agent's reply, <twin>.final.json), for as long as the run is kept.
 */
static void handle_run_file(Call *c, const char *id, const char *what)
{
        char name[64];
        if (streq(what, "verdict"))
                snprintf(name, sizeof(name), "verdict.json");
        else if (streq(what, "summary"))
                snprintf(name, sizeof(name), "summary.md");
        else if (streq(what, "agent-reply"))
                snprintf(name, sizeof(name), GRADE_AGENT_REPLY_FILE);
        else {
                _cleanup_free_ char *twin = NULL;
                if (!twin_param(c, &twin))
                        return;
                const char *kind = NULL;
                SandboxError se = {};
                /* the same rules for which twin: the first unless named, one the sandbox has */
                if (manager_run_twin(c->control->manager, c->team, id, twin, &kind, &se) < 0) {
                        reply_refusal(c, &se);
                        return;
                }
                snprintf(name, sizeof(name), "%s.final.json", kind);
        }
        _cleanup_free_ char *path = NULL;
        SandboxError se = {};
        if (manager_run_file(c->control->manager, c->team, id, name, &path, &se) < 0) {
                reply_refusal(c, &se);
                return;
        }
        /* served as written, byte for byte: verdict.json is the bytes `pome eval` reproduces */
        bool md = streq(what, "summary"), text = streq(what, "agent-reply");
        _cleanup_free_ char *body = NULL;
        size_t len = 0;
        int r = read_file_at(AT_FDCWD, path, md || text ? SUMMARY_MAX : RUN_JSON_MAX, &body, &len);
        if (r < 0) {
                fail(c, 500, "internal_error", NULL, "Cannot read %s: %s", name, strerror(-r));
                return;
        }
        _cleanup_json_ json_t *h =
                json_pack("{s:s, s:s}", "X-Request-Id", c->request_id, "Content-Type",
                          md     ? "text/markdown; charset=utf-8"
                          : text ? "text/plain; charset=utf-8"
                                 : "application/json; charset=utf-8");
        (void)http_reply(c->rq, 200, h, body, len);
}

/*
 * GET /v1/sandboxes/{id}/credentials: the create answer again (tokens, per-twin URLs and
 * credentials) for its own team, while the sandbox is open, so output masked at create is
 * not a dead end. The tokens are the stateless ones create minted (same sid, same exp).
 */
static void handle_credentials(Call *c, const char *id)
{
        Sandbox *s = manager_get(c->control->manager, id);
        if (!s || s->team != c->team) {
                _cleanup_json_ json_t *doc = NULL;
                if (!s && manager_record(c->control->manager, id, &doc) >= 0 &&
                    streq_ptr(json_get_str(doc, "team_id"), c->team->id)) {
                        SandboxError e = {};
                        (void)sandbox_error_ended(&e, id, strempty(json_get_str(doc, "state")),
                                                  json_get_str(doc, "reason"));
                        reply_error(c, &e);
                        sandbox_error_done(&e);
                        return;
                }
                fail(c, 404, "not_found", json_pack("{s:s}", "session_id", id),
                     "No sandbox %s for team %s.", id, c->team->id);
                return;
        }
        if (!sandbox_state_is_open(s->state)) {
                SandboxError e = {};
                (void)sandbox_error_ended(&e, id, sandbox_state_to_string(s->state), s->reason);
                reply_error(c, &e);
                sandbox_error_done(&e);
                return;
        }
        _cleanup_json_ json_t *j = sandbox_credentials_json(s);
        if (j)
                reply_json(c, 200, j);
        else
                fail(c, 500, "internal_error", NULL, "out of memory");
}

static void on_finalized(Sandbox *s, void *userdata)
{
        Call *c = userdata;
        _cleanup_json_ json_t *j = sandbox_to_json(s);
        reply_json(c, j ? 200 : 500, j);
        free(c);
}

/* POST /v1/sandboxes/{id}/finalize [{"task_markdown": "…", "agent_reply": "…", "code_only":
 * true, "agent_sealed": false}]: grade (when there is a task), then done. The reply is the
 * record, its verdict summary included. */
static void handle_finalize(Call *c, const char *id)
{
        _cleanup_json_ json_t *j = body_object(c);
        if (!j) {
                free(c);
                return;
        }
        static const char *const known[] = {"task_markdown", "agent_reply", "code_only",
                                            "agent_sealed"};
        const char *key;
        json_t *value;
        json_object_foreach (j, key, value) {
                size_t i = 0;
                while (i < ELEMENTSOF(known) && !streq(key, known[i]))
                        i++;
                if (i == ELEMENTSOF(known)) {
                        fail(c, 422, "validation_failed", json_pack("{s:s}", "field", key),
                             "Unknown field '%s'. A finalize takes task_markdown, agent_reply, "
                             "code_only and agent_sealed (or no body).",
                             key);
                        free(c);
                        return;
                }
        }
        SandboxFinalizeSpec spec = {};
        if (!task_markdown(c, j, &spec.task_markdown, &spec.task_len)) {
                free(c);
                return;
        }
        json_t *reply = json_object_get(j, "agent_reply"),
               *code_only = json_object_get(j, "code_only");
        if (reply && !json_is_null(reply) && !json_is_string(reply)) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "agent_reply"),
                     "agent_reply must be a string: the end of the agent's output, for the "
                     "judge of [model] criteria.");
                free(c);
                return;
        }
        if (code_only && !json_is_boolean(code_only)) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "code_only"),
                     "code_only must be true or false.");
                free(c);
                return;
        }
        json_t *sealed = json_object_get(j, "agent_sealed");
        if (sealed && !json_is_boolean(sealed) && !json_is_null(sealed)) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "agent_sealed"),
                     "agent_sealed must be true, false or null: whether the agent under test "
                     "ran sealed, which the verdict records.");
                free(c);
                return;
        }
        spec.agent_seal = json_is_true(sealed)    ? GRADE_SEAL_SEALED
                          : json_is_false(sealed) ? GRADE_SEAL_UNSEALED
                                                  : GRADE_SEAL_UNKNOWN;
        if (json_is_string(reply)) {
                spec.agent_reply = json_string_value(reply);
                spec.reply_len = json_string_length(reply);
        }
        spec.code_only = json_is_true(code_only);
        SandboxError se = {};
        if (manager_finalize(c->control->manager, c->team, id, &spec, on_finalized, c, &se) < 0) {
                reply_error(c, &se);
                sandbox_error_done(&se);
                free(c);
        }
        /* else on_finalized answers and frees c */
}

/* GET /v1/checks[?twin=T]: the check vocabulary a task's [code] criteria bind to. */
static void handle_checks(Call *c)
{
        _cleanup_free_ char *twin = NULL;
        if (!query_param(c, "twin", &twin)) {
                fail(c, 422, "validation_failed", json_pack("{s:s}", "field", "twin"),
                     "twin must be text (a NUL is not).");
                return;
        }
        _cleanup_json_ json_t *j = NULL;
        int r = grade_checks_list(twin, &j);
        if (r == -ENOENT) {
                /* name the twins that have checks, from the vocabulary itself */
                _cleanup_json_ json_t *all = NULL, *twins = json_array();
                char list[128] = "";
                size_t k = 0, i;
                json_t *check;
                if (!twins || grade_checks_list(NULL, &all) < 0) {
                        fail(c, 500, "internal_error", NULL, "out of memory");
                        return;
                }
                json_array_foreach (json_object_get(all, "checks"), i, check) {
                        const char *t = json_get_str(check, "twin");
                        bool seen = false;
                        size_t n;
                        json_t *v;
                        json_array_foreach (twins, n, v)
                                seen = seen || streq_ptr(json_string_value(v), t);
                        if (seen || !t)
                                continue;
                        json_array_append_new(twins, json_string(t));
                        if (k < sizeof(list))
                                k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s",
                                                      k ? ", " : "", t);
                }
                fail(c, 422, "validation_failed",
                     json_pack("{s:s, s:s, s:O}", "field", "twin", "twin", twin, "twins", twins),
                     "No checks for twin '%s': checks exist for %s.", twin, list);
                return;
        }
        if (r < 0) {
                fail(c, 500, "internal_error", NULL, "Cannot list the checks: %s", strerror(-r));
                return;
        }
        reply_json(c, 200, j);
}

static void handle_usage(Call *c)
{
        Team *t = c->team;
        /* in a fleet: sessions_used is every node's (the ledger's count), and this node's
         * share beside it */
        const FleetConfig *fleet = manager_config(c->control->manager)->fleet;
        _cleanup_json_ json_t *j = json_pack(
                "{s:s, s:i, s:i, s:i, s:s}", "team_id", t->id, "sessions_used", (int)t->used,
                "sessions_quota", (int)t->quota, "sessions_remaining",
                (int)(t->quota > t->used ? t->quota - t->used : 0), "plan_tier", t->plan_tier);
        if (j && fleet &&
            (json_object_set_new(j, "node", json_string(fleet->node)) < 0 ||
             json_object_set_new(j, "sessions_used_here", json_integer(t->used_here)) < 0)) {
                json_decref(j);
                j = NULL;
        }
        reply_json(c, 200, j);
}

/* GET /metrics: the deployment's metrics (every team's), for any team key: one pomed
 * serves one operator, whose Prometheus scrapes with a key of its own. */
static void handle_metrics(Call *c)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int r = f ? manager_write_metrics(c->control->manager, f) : -ENOMEM;
        if (f && fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                fail(c, 500, "internal_error", NULL, "Cannot write the metrics: %s", strerror(-r));
                return;
        }
        _cleanup_json_ json_t *h =
                json_pack("{s:s, s:s}", "X-Request-Id", c->request_id, "Content-Type",
                          "text/plain; version=0.0.4; charset=utf-8");
        (void)http_reply(c->rq, 200, h, text, len);
}

static void method_not_allowed(Call *c, const char *allowed)
{
        fail(c, 405, "validation_failed", json_pack("{s:s}", "allowed", allowed),
             "%s is not allowed on %s (allowed: %s).", http_request_method(c->rq),
             http_request_path(c->rq), allowed);
}

static const char *bearer(HttpRequest *rq)
{
        const char *a = http_request_header(rq, "Authorization");
        if (!a)
                return NULL;
        while (*a == ' ')
                a++;
        if (strncasecmp(a, "bearer ", 7) != 0)
                return NULL;
        a += 7;
        while (*a == ' ')
                a++;
        return a;
}

void control_handle(HttpRequest *rq, void *userdata)
{
        Control *ctl = userdata;
        Call *c = calloc(1, sizeof(*c));
        if (!c) {
                static const char oom[] =
                        "{\"error\":{\"type\":\"internal_error\",\"message\":"
                        "\"out of memory\",\"details\":null,\"request_id\":null}}";
                (void)http_reply(rq, 500, NULL, oom, strlen(oom));
                return;
        }
        c->control = ctl;
        c->rq = rq;
        if (front_request_id(c->request_id) < 0)
                snprintf(c->request_id, sizeof(c->request_id), "req_unavailable");
        const char *method = http_request_method(rq);
        const char *path = http_request_path(rq);

        if (streq(path, "/healthz")) {
                /* a full state directory is said (what fails next is writes and creates); a
                 * draining pomed answers 503, so a load balancer's health check sends it no
                 * new sandbox while its calls in flight finish (packaging/haproxy/) */
                bool draining = manager_draining(ctl->manager);
                const FleetConfig *fleet = manager_config(ctl->manager)->fleet;
                _cleanup_json_ json_t *j = json_pack(
                        "{s:b, s:b, s:s, s:s, s:o?, s:o?, s:s?, s:o?}", "ok", !draining, "draining",
                        draining, "version", POME_VERSION, "missing_layers",
                        manager_missing_layers(ctl->manager), "isolation",
                        manager_isolation_json(ctl->manager), "state_dir",
                        manager_state_dir_json(ctl->manager), "node", fleet ? fleet->node : NULL,
                        "ledger", ledger_status_json(manager_ledger(ctl->manager)));
                reply_json(c, draining ? 503 : 200, j);
                free(c);
                return;
        }
        if (ui_handle(ctl->ui, rq, c->request_id)) {
                free(c);
                return;
        }
        const char *rest = startswith(path, "/v1/sandboxes");
        if (!rest)
                rest = startswith(path, "/v1/sessions");
        bool usage = streq(path, "/v1/usage"), checks = streq(path, "/v1/checks");
        bool metrics = streq(path, "/metrics");
        if (!rest && !usage && !checks && !metrics) {
                fail(c, 404, "not_found", NULL,
                     "No such endpoint: %s %s. The control API serves /v1/sandboxes, "
                     "/v1/sessions, /v1/usage, /v1/checks and /metrics; the dashboard is /ui/.",
                     method, path);
                free(c);
                return;
        }
        c->team = teams_by_key(manager_teams(ctl->manager), bearer(rq));
        if (!c->team) {
                fail(c, 401, "invalid_auth", NULL,
                     bearer(rq) ? "The API key is not valid for this deployment."
                                : "Send a team API key: Authorization: Bearer pome_….");
                free(c);
                return;
        }
        if (metrics) {
                if (streq(method, "GET"))
                        handle_metrics(c);
                else
                        method_not_allowed(c, "GET");
                free(c);
                return;
        }
        if (usage || checks) {
                if (!streq(method, "GET"))
                        method_not_allowed(c, "GET");
                else if (usage)
                        handle_usage(c);
                else
                        handle_checks(c);
                free(c);
                return;
        }
        if (*rest == 0 || streq(rest, "/")) {
                if (streq(method, "POST")) {
                        handle_create(c); /* frees c */
                        return;
                }
                if (streq(method, "GET"))
                        handle_list(c);
                else
                        method_not_allowed(c, "GET, POST");
                free(c);
                return;
        }
        /* /{id}, /{id}/finalize, /{id}/events, /{id}/verdict, /{id}/summary, /{id}/state */
        char id[64];
        const char *p = rest + 1, *e = strchrnul(p, '/');
        if ((size_t)(e - p) >= sizeof(id) || e == p) {
                fail(c, 404, "not_found", NULL, "No such sandbox.");
                free(c);
                return;
        }
        memcpy(id, p, (size_t)(e - p));
        id[e - p] = 0;
        if (*e == 0) {
                if (streq(method, "GET"))
                        handle_get(c, id);
                else if (streq(method, "DELETE")) {
                        handle_delete(c, id); /* frees c */
                        return;
                } else
                        method_not_allowed(c, "GET, DELETE");
                free(c);
                return;
        }
        if (streq(e, "/credentials")) {
                if (streq(method, "GET"))
                        handle_credentials(c, id);
                else
                        method_not_allowed(c, "GET");
                free(c);
                return;
        }
        if (streq(e, "/events") || streq(e, "/verdict") || streq(e, "/summary") ||
            streq(e, "/state") || streq(e, "/agent-reply")) {
                if (!streq(method, "GET"))
                        method_not_allowed(c, "GET");
                else if (streq(e, "/events"))
                        handle_events(c, id);
                else
                        handle_run_file(c, id, e + 1);
                free(c);
                return;
        }
        if (streq(e, "/finalize")) {
                if (!streq(method, "POST")) {
                        method_not_allowed(c, "POST");
                        free(c);
                        return;
                }
                handle_finalize(c, id); /* frees c */
                return;
        }
        fail(c, 404, "not_found", NULL, "No such endpoint: %s %s.", method, path);
        free(c);
}

void control_refuse(const char *path _unused_, const char *host _unused_, int status,
                    const char *code, const char *message, HttpRefusal *ret,
                    void *userdata _unused_)
{
        char request_id[25];
        if (front_request_id(request_id) < 0)
                snprintf(request_id, sizeof(request_id), "req_unavailable");
        ret->body = json_pack("{s:{s:s, s:s, s:{s:s}, s:s}}", "error", "type",
                              status >= 500 ? "internal_error" : "validation_failed", "message",
                              message, "details", "reason", code, "request_id", request_id);
        ret->headers = json_pack("{s:s}", "X-Request-Id", request_id);
}
