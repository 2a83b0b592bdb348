/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin (kind "linear"): Linear's GraphQL API (POST /graphql,
 * https://linear.app/developers/graphql) as the official @linear/sdk calls it, and the tools
 * of Linear's MCP server (https://linear.app/docs/mcp) with their names and input schemas.
 * Both doors run the same actions (actions.c): issueUpdate and save_issue are one change
 * with one tape `tool`. This file holds the world helpers, the error envelopes and the kind.
 *
 * Errors are Linear's GraphQL error shape, {errors: [{message, extensions: {code, type?,
 * userPresentableMessage?, http: {status}}}]}, as hosted Pome's Linear twin froze it for
 * every surface (its contract suite: AUTHENTICATION_ERROR, BAD_USER_INPUT, NOT_FOUND,
 * FORBIDDEN).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "pods/linear/linear.h"

/* ------------------------------------------------------------------ world */

/* The array world[list] (borrowed; NULL when absent). */
json_t *ln_list(json_t *w, const char *list)
{
        return json_object_get(w, list);
}

/* The row of world[list] whose id is id (borrowed), or NULL. */
json_t *ln_by_id(json_t *w, const char *list, const char *id)
{
        size_t i;
        json_t *row;
        if (!id)
                return NULL;
        json_array_foreach (ln_list(w, list), i, row) {
                if (streq_ptr(json_get_str(row, "id"), id))
                        return row;
        }
        return NULL;
}

static bool same_ci(const json_t *row, const char *key, const char *ref)
{
        const char *v = json_get_str(row, key);
        return v && ref && strcasecmp(v, ref) == 0;
}

/* The first row of list whose id equals ref, else whose member keys[i] equals ref ignoring case
 * (in the order of keys), limited to rows whose teamId is team_id when team_id is given (a
 * label with teamId null belongs to every team). Borrowed, or NULL. */
static json_t *find_ref(json_t *w, const char *list, const char *team_id, const char *ref,
                        const char *const *keys)
{
        size_t i;
        json_t *row;
        if (!ref || !*ref)
                return NULL;
        json_t *hit = ln_by_id(w, list, ref);
        if (hit)
                return hit;
        for (const char *const *k = keys; *k; k++)
                json_array_foreach (ln_list(w, list), i, row) {
                        const char *t = json_get_str(row, "teamId");
                        if (team_id && t && !streq(t, team_id))
                                continue;
                        if (same_ci(row, *k, ref))
                                return row;
                }
        return NULL;
}

/* A user by id, email, name or display name; "me" is the viewer. Borrowed, or NULL. */
json_t *ln_user_ref(json_t *w, const char *ref)
{
        if (ref && strcasecmp(ref, "me") == 0)
                return ln_by_id(w, "users", json_get_str(w, "viewer"));
        return find_ref(w, "users", NULL, ref,
                        (const char *const[]){"email", "name", "displayName", NULL});
}

/* A team by id, key or name. Borrowed, or NULL. */
json_t *ln_team_ref(json_t *w, const char *ref)
{
        return find_ref(w, "teams", NULL, ref, (const char *const[]){"key", "name", NULL});
}

/* A workflow state of team team_id (NULL: any team) by id, name or type. Borrowed, or NULL. */
json_t *ln_state_ref(json_t *w, const char *team_id, const char *ref)
{
        json_t *s =
                find_ref(w, "states", team_id, ref, (const char *const[]){"name", "type", NULL});
        if (s && team_id && !streq_ptr(json_get_str(s, "teamId"), team_id))
                return NULL; /* another team's state, named by its id */
        return s;
}

/* A label usable in team team_id (its own or a workspace label) by id or name. */
json_t *ln_label_ref(json_t *w, const char *team_id, const char *ref)
{
        json_t *l = find_ref(w, "labels", team_id, ref, (const char *const[]){"name", NULL});
        const char *t = json_get_str(l, "teamId");
        if (l && team_id && t && !streq(t, team_id))
                return NULL;
        return l;
}

/* A project by id or name. Borrowed, or NULL. */
json_t *ln_project_ref(json_t *w, const char *ref)
{
        return find_ref(w, "projects", NULL, ref, (const char *const[]){"name", NULL});
}

/* A cycle of team team_id (NULL: any) by id, name or number. Borrowed, or NULL. */
json_t *ln_cycle_ref(json_t *w, const char *team_id, const char *ref)
{
        json_t *c = find_ref(w, "cycles", team_id, ref, (const char *const[]){"name", NULL});
        size_t i;
        json_t *row;
        if (!c && ref)
                json_array_foreach (ln_list(w, "cycles"), i, row) {
                        char n[32];
                        snprintf(n, sizeof(n), "%lld",
                                 (long long)json_integer_value(json_object_get(row, "number")));
                        if (streq(n, ref) &&
                            (!team_id || streq_ptr(json_get_str(row, "teamId"), team_id))) {
                                c = row;
                                break;
                        }
                }
        return c;
}

/* An issue by id or identifier ("ENG-1", any case). Borrowed, or NULL. */
json_t *ln_issue_ref(json_t *w, const char *ref)
{
        return find_ref(w, "issues", NULL, ref, (const char *const[]){"identifier", NULL});
}

/* Whether some row of the world has the id id. */
static bool id_taken(json_t *w, const char *id)
{
        static const char *const all[] = {"users",       "teams",    "states", "labels",
                                          "projects",    "cycles",   "issues", "comments",
                                          "attachments", "relations"};
        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                if (ln_by_id(w, all[i], id))
                        return true;
        return false;
}

/* A new id "<prefix>_<n>" from the world's counter (next.id), skipping ids a seed gave its rows,
 * into *ret (malloc'd). 0 or -ENOMEM. */
int ln_new_id(json_t *w, const char *prefix, char **ret)
{
        json_t *next = json_object_get(w, "next");
        json_int_t n = json_integer_value(json_object_get(next, "id"));
        _cleanup_free_ char *id = NULL;
        do {
                free(id);
                id = NULL;
                if (asprintf(&id, "%s_%lld", prefix, (long long)++n) < 0)
                        return -ENOMEM;
        } while (id_taken(w, id));
        if (!json_is_object(next) || json_object_set_new(next, "id", json_integer(n)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(id);
        return 0;
}

/* The number of the next issue of team team_id (Linear never reuses one), counted in
 * next.numbers. Returns it, or -ENOMEM. */
int64_t ln_next_number(json_t *w, const char *team_id)
{
        json_t *next = json_object_get(w, "next");
        json_t *nums = json_object_get(next, "numbers");
        if (!json_is_object(nums)) {
                nums = json_object();
                if (!nums || json_object_set_new(next, "numbers", nums) < 0)
                        return -ENOMEM;
        }
        json_int_t n = json_integer_value(json_object_get(nums, team_id)) + 1;
        if (json_object_set_new(nums, team_id, json_integer(n)) < 0)
                return -ENOMEM;
        return n;
}

/* t (seconds since the epoch) as Linear writes times, RFC 3339 UTC with milliseconds
 * ("2026-07-20T10:00:00.000Z"), into buf. */
void ln_time(int64_t t, char buf[static 32])
{
        char s[32];
        twin_format_time(t, s, sizeof(s));
        size_t n = strlen(s);
        if (n > 0 && s[n - 1] == 'Z')
                n--;
        if (n > 26)
                n = 26;
        memcpy(buf, s, n);
        memcpy(buf + n, ".000Z", 6);
}

/* The web URL of issue, https://linear.app/<urlKey>/issue/<identifier> (new reference). */
json_t *ln_issue_url(json_t *w, const json_t *issue)
{
        _cleanup_free_ char *u = NULL;
        const char *key = json_get_str(json_object_get(w, "organization"), "urlKey");
        if (asprintf(&u, LN_APP_URL "/%s/issue/%s", key ? key : "pome-twin",
                     strempty(json_get_str(issue, "identifier"))) < 0)
                return NULL;
        return json_string(u);
}

/* Linear's branch name of issue into buf: its identifier and the start of its title, lower-case
 * and dashed ("eng-1-triage-inbox-for-agent-eval"). */
void ln_branch_name(const json_t *issue, char buf[static 96])
{
        int k = snprintf(buf, 96, "%.40s-", strempty(json_get_str(issue, "identifier")));
        size_t n = k > 0 ? (size_t)k : 0;
        bool dash = true;
        for (const char *p = strempty(json_get_str(issue, "title")); *p && n < 90; p++) {
                char ch = *p;
                if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                    (ch >= 'A' && ch <= 'Z')) {
                        buf[n++] = ch;
                        dash = false;
                } else if (!dash) {
                        buf[n++] = '-';
                        dash = true;
                }
        }
        while (n > 0 && buf[n - 1] == '-')
                n--;
        buf[n] = 0;
        for (char *p = buf; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                        *p = (char)(*p - 'A' + 'a');
}

/* Moves issue into state (both borrowed): stateId, and the startedAt, completedAt and
 * canceledAt Linear stamps when an issue enters a started, completed or canceled state (now).
 * 0 or -ENOMEM. */
int ln_set_issue_state(json_t *issue, const json_t *state, const char *now)
{
        const char *type = json_get_str(state, "type");
        if (json_object_set(issue, "stateId", json_object_get(state, "id")) < 0)
                return -ENOMEM;
        struct {
                const char *key, *type;
        } stamps[] = {
                {"startedAt", "started"}, {"completedAt", "completed"}, {"canceledAt", "canceled"}};
        for (size_t i = 0; i < ELEMENTSOF(stamps); i++) {
                json_t *v = json_object_get(issue, stamps[i].key);
                bool is = streq_ptr(type, stamps[i].type);
                /* leaving a completed or canceled state clears its stamp; startedAt stays
                 * once an issue started, unless it goes back to backlog or unstarted */
                if (is && json_is_null(v) &&
                    json_object_set_new(issue, stamps[i].key, json_string(now)) < 0)
                        return -ENOMEM;
                bool keep = is || (streq(stamps[i].type, "started") &&
                                   (streq_ptr(type, "completed") || streq_ptr(type, "canceled")));
                if (!keep && json_object_set_new(issue, stamps[i].key, json_null()) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* s (an RFC 3339 time, "2026-07-20T10:00:00.000Z" or a date "2026-07-20") as seconds since the
 * epoch into *ret. 0, or -EINVAL. */
int ln_parse_time(const char *s, int64_t *ret)
{
        struct tm tm = {};
        int n = 0;
        if (!s || sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3)
                return -EINVAL;
        if (s[n] == 'T' || s[n] == 't') {
                if (sscanf(s + n + 1, "%2d:%2d:%2d", &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 3)
                        return -EINVAL;
                const char *z = s + n + 9;
                while (*z == '.' || (*z >= '0' && *z <= '9'))
                        z++;
                int oh = 0, om = 0;
                if ((*z == '+' || *z == '-') && sscanf(z + 1, "%2d:%2d", &oh, &om) == 2) {
                        int off = (oh * 60 + om) * 60;
                        tm.tm_sec -= *z == '+' ? off : -off;
                } else if (*z != 'Z' && *z != 'z')
                        return -EINVAL;
        } else if (s[n])
                return -EINVAL;
        if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31)
                return -EINVAL;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        *ret = (int64_t)timegm(&tm);
        return 0;
}

/*
 * One page of items (a borrowed array) as Linear pages connections: cursors are node ids,
 * first/after from the front, last/before from the back (first and last: -1 when not given;
 * Linear's default page is 50). *ret_nodes (new array of borrowed-then-increfed items) and
 * *ret_info ({hasNextPage, hasPreviousPage, startCursor, endCursor}, new). 0, 1 with a
 * message in err when a cursor names no node or a count is negative, -ENOMEM.
 */
int ln_page(json_t *items, int64_t first, const char *after, int64_t last, const char *before,
            json_t **ret_nodes, json_t **ret_info, char *err, size_t errlen)
{
        size_t n = json_array_size(items), lo = 0, hi = n;
        if (first < -1 || last < -1) {
                snprintf(err, errlen, "first and last must not be negative");
                return 1;
        }
        const char *cursors[2] = {after, before};
        for (int k = 0; k < 2; k++) {
                if (!cursors[k])
                        continue;
                size_t i;
                json_t *row;
                bool found = false;
                json_array_foreach (items, i, row) {
                        if (streq_ptr(json_get_str(row, "id"), cursors[k])) {
                                found = true;
                                if (k == 0)
                                        lo = i + 1;
                                else
                                        hi = i;
                                break;
                        }
                }
                if (!found) {
                        snprintf(err, errlen, "Invalid cursor: %.80s", cursors[k]);
                        return 1;
                }
        }
        if (hi < lo)
                hi = lo;
        if (first < 0 && last < 0)
                first = 50;
        if (first >= 0 && (size_t)first < hi - lo)
                hi = lo + (size_t)first;
        if (last >= 0 && (size_t)last < hi - lo)
                lo = hi - (size_t)last;
        _cleanup_json_ json_t *nodes = json_array();
        if (!nodes)
                return -ENOMEM;
        for (size_t i = lo; i < hi; i++)
                if (json_array_append(nodes, json_array_get(items, i)) < 0)
                        return -ENOMEM;
        json_t *s = json_object_get(json_array_get(items, lo), "id");
        json_t *e = json_object_get(json_array_get(items, hi ? hi - 1 : 0), "id");
        *ret_info =
                json_pack("{s:b, s:b, s:O?, s:O?}", "hasNextPage", hi<n, "hasPreviousPage", lo> 0,
                          "startCursor", hi > lo ? s : NULL, "endCursor", hi > lo ? e : NULL);
        if (!*ret_info)
                return -ENOMEM;
        if (hi <= lo && (json_object_set_new(*ret_info, "startCursor", json_null()) < 0 ||
                         json_object_set_new(*ret_info, "endCursor", json_null()) < 0))
                return -ENOMEM;
        *ret_nodes = TAKE_PTR(nodes);
        return 0;
}

/* ------------------------------------------------------------------ errors */

/* Linear's error "type" for an extensions code, as api.linear.app names it. */
static const char *code_type(const char *code)
{
        if (streq_ptr(code, "AUTHENTICATION_ERROR"))
                return "authentication error";
        if (streq_ptr(code, "FORBIDDEN"))
                return "forbidden";
        if (streq_ptr(code, "GRAPHQL_VALIDATION_FAILED") || streq_ptr(code, "GRAPHQL_PARSE_FAILED"))
                return "graphql error";
        if (streq_ptr(code, "INTERNAL_SERVER_ERROR") || streq_ptr(code, "UNIMPLEMENTED"))
                return "internal error";
        return "invalid input";
}

/*
 * {errors: [{message, extensions: {code, type, userPresentableMessage, http: {status}}}]}: one
 * Linear error (a new reference, NULL on OOM). message is mended into UTF-8 (it may quote a
 * caller's bytes).
 */
json_t *ln_error_body(int status, const char *code, const char *message)
{
        return json_pack("{s:[{s:o, s:{s:s, s:s, s:o, s:{s:i}}}]}", "errors", "message",
                         twin_json_string_lossy(message, strlen(message)), "extensions", "code",
                         code, "type", code_type(code), "userPresentableMessage",
                         twin_json_string_lossy(message, strlen(message)), "http", "status",
                         status);
}

/* Fills rp with a Linear error at HTTP status (code: BAD_USER_INPUT, NOT_FOUND, ...). Returns
 * 0, or -ENOMEM. */
int ln_fail(TwinReply *rp, int status, const char *code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *m = NULL;
        int n = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        return twin_reply_body(rp, status, ln_error_body(status, code, m));
}

static const char *status_code(int status)
{
        switch (status) {
        case 401:
                return "AUTHENTICATION_ERROR";
        case 403:
                return "FORBIDDEN";
        case 404:
                return "NOT_FOUND";
        case 501:
                return "UNIMPLEMENTED";
        default:
                return status >= 500 ? "INTERNAL_SERVER_ERROR" : "BAD_USER_INPUT";
        }
}

/* The engine's own refusals (malformed body, unknown route, 500) in Linear's envelope. The
 * loud 501 is hosted Pome's: {message, errors: [{message: "Not implemented", extensions:
 * {code: UNIMPLEMENTED}}]} (the engine adds fidelity "unsupported"). */
static void linear_error(int status, const char *code, const char *message, TwinReply *rp)
{
        if (streq_ptr(code, "unsupported_endpoint")) {
                json_t *b = ln_error_body(501, "UNIMPLEMENTED", "Not implemented");
                if (b &&
                    json_object_set_new(b, "message",
                                        twin_json_string_lossy(message, strlen(message))) < 0) {
                        json_decref(b);
                        b = NULL;
                }
                twin_reply_json(rp, 501, b);
                return;
        }
        twin_reply_json(rp, status, ln_error_body(status, status_code(status), message));
}

/* api.linear.app answers every credential it cannot use with one body (measured by hosted
 * Pome, 2026-08-13): AUTHENTICATION_ERROR with statusCode, userError and meta. */
static void linear_auth_error(TwinAuthFailure why, TwinReply *rp)
{
        (void)why;
        twin_reply_json(rp, 401,
                        json_pack("{s:[{s:s, s:{s:s, s:s, s:i, s:b, s:s, s:{}, s:{s:i}}}]}",
                                  "errors", "message", "Authentication required, not authenticated",
                                  "extensions", "type", "authentication error", "code",
                                  "AUTHENTICATION_ERROR", "statusCode", 401, "userError", true,
                                  "userPresentableMessage",
                                  "You need to authenticate to access this operation.", "meta",
                                  "http", "status", 401));
}

static void linear_control_error(TwinControlError what, const char *detail, TwinReply *rp)
{
        switch (what) {
        case TWIN_CONTROL_FORBIDDEN:
                /* hosted Pome's frozen admin 403: exactly this, nothing more */
                twin_reply_json(rp, 403,
                                json_pack("{s:[{s:s, s:{s:s, s:{s:i}}}]}", "errors", "message",
                                          "Forbidden", "extensions", "code", "FORBIDDEN", "http",
                                          "status", 403));
                return;
        case TWIN_CONTROL_UNKNOWN_TOOL: {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "Unknown tool: %s", strempty(detail)) < 0)
                        return;
                twin_reply_json(rp, 404, ln_error_body(404, "NOT_FOUND", m));
                return;
        }
        case TWIN_CONTROL_NO_TOOL:
                twin_reply_json(rp, 400,
                                ln_error_body(400, "BAD_USER_INPUT",
                                              "tool is required: {\"tool\": NAME, "
                                              "\"arguments\": {...}}"));
                return;
        case TWIN_CONTROL_BAD_BODY:
                twin_reply_json(rp, 400, ln_error_body(400, "BAD_USER_INPUT", "Invalid JSON"));
                return;
        case TWIN_CONTROL_BAD_SEED:
                twin_reply_json(rp, 400,
                                ln_error_body(400, "BAD_USER_INPUT",
                                              detail ? detail : "The seed is not valid."));
                return;
        }
}

/* /healthz and /_pome/health carry fidelity; /_pome/health also version (hosted Pome's frozen
 * key set: fidelity, ok, twin, version). */
static int linear_health_extras(const Twin *t, json_t *body, bool health)
{
        (void)t;
        if (json_object_set_new(body, "fidelity", json_string("semantic")) < 0)
                return -ENOMEM;
        if (health) {
                _cleanup_json_ json_t *rt = twin_runtime();
                if (!rt || json_object_set(body, "version", json_object_get(rt, "version")) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The world without its bookkeeping (next). */
static json_t *linear_public_state(const json_t *world)
{
        json_t *s = json_deep_copy(world);
        if (s)
                json_object_del(s, "next");
        return s;
}

static const TwinHandler linear_handlers[] = {
        {"graphql", ln_act_graphql},
        {"list_issues", ln_act_list_issues},
        {"get_issue", ln_act_get_issue},
        {"save_issue", ln_act_save_issue},
        {"archive_issue", ln_act_archive_issue},
        {"delete_issue", ln_act_delete_issue},
        {"list_comments", ln_act_list_comments},
        {"save_comment", ln_act_save_comment},
        {"delete_comment", ln_act_delete_comment},
        {"list_issue_statuses", ln_act_list_issue_statuses},
        {"get_issue_status", ln_act_get_issue_status},
        {"list_issue_labels", ln_act_list_issue_labels},
        {"create_issue_label", ln_act_create_issue_label},
        {"update_issue_label", ln_act_update_issue_label},
        {"list_teams", ln_act_list_teams},
        {"get_team", ln_act_get_team},
        {"list_users", ln_act_list_users},
        {"get_user", ln_act_get_user},
        {"list_projects", ln_act_list_projects},
        {"get_project", ln_act_get_project},
        {"save_project", ln_act_save_project},
        {"list_cycles", ln_act_list_cycles},
};

const TwinKind twin_kind_linear = {
        .name = "linear",
        .implementation = "pome-linear",
        /* @linear/sdk sends an API key as the whole Authorization value, no scheme
         * (linear.app/developers/graphql "Personal API keys"); an OAuth token as Bearer */
        .flags = TWIN_KIND_RAW_KEY | TWIN_KIND_JSON_BODY | TWIN_KIND_SEED_DELTA,
        .surface = &twin_surface_linear,
        .handlers = linear_handlers,
        .n_handlers = ELEMENTSOF(linear_handlers),
        /* the API's host, and that of Linear's MCP server (https://mcp.linear.app/mcp), which a
         * sealed agent configured with the official server reaches the twin's /mcp by */
        .vendor_hosts = (const char *const[]){"api.linear.app", "mcp.linear.app", NULL},
        /* the API is one path, https://api.linear.app/graphql: on a front's own host too, a
         * request there (or anywhere outside a sandbox's path, where hosted Pome's Linear twin
         * mounts its session) is the session its credential names */
        .keyed_prefix = "/graphql",
        .load_seed = ln_load_seed,
        .seed_keys = ln_seed_keys,
        .public_state = linear_public_state,
        .auth_error = linear_auth_error,
        .error = linear_error,
        .control_error = linear_control_error,
        .health_extras = linear_health_extras,
};
