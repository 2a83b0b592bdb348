/* SPDX-License-Identifier: MIT */
/*
 * The Gmail twin (kind "gmail"): the Gmail API v1 (developers.google.com/gmail/api/reference/
 * rest) under /gmail/v1/users/{userId} and its media uploads under /upload/gmail/v1, as the
 * official googleapis Node client calls them, and the 13 tools of Google's Gmail MCP server
 * (gmailmcp.googleapis.com, as hosted Pome lists them). This file holds the kind: the seed
 * (hosted Pome's format, packages/twin-gmail/src/seed.ts, loaded unmodified), Google's error
 * envelope, the pipeline every action runs through (the seed's faults), the shared helpers
 * and the handler table. The world's shape is in gmail.h.
 *
 * Where it differs from gmail.googleapis.com, knowingly: one mailbox is served (a seed's
 * other "mailboxes" only receive what it sends them under "seeded-mailboxes"); lists and searches
 * leave drafts out unless asked (labelIds DRAFT, in:draft), as hosted Pome's twin does;
 * filters act on imported mail and on mail sent to oneself, not on insert; thread label
 * changes pass over the thread's drafts; users.watch and users.stop, and the settings
 * beyond filters, sendAs and forwardingAddresses, are not served (the engine's loud 501).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/text.h"
#include "pods/gmail/gmail.h"

/* ------------------------------------------------------------------ helpers */

json_t *gmail_rows(json_t *world, const char *key)
{
        json_t *a = json_object_get(world, key);
        if (json_is_array(a))
                return a;
        a = json_array();
        if (!a || json_object_set_new(world, key, a) < 0)
                return NULL;
        return a;
}

json_t *gmail_find(json_t *rows, const char *id, size_t *ret_index)
{
        size_t i;
        json_t *v;
        if (!id)
                return NULL;
        json_array_foreach (rows, i, v)
                if (streq_ptr(json_get_str(v, "id"), id)) {
                        if (ret_index)
                                *ret_index = i;
                        return v;
                }
        return NULL;
}

/* google.rpc.Code names of the HTTP statuses Gmail answers (cloud.google.com/apis/design/
 * errors, "Handling errors"). */
static const char *google_status(int status)
{
        switch (status) {
        case 400:
                return "INVALID_ARGUMENT";
        case 401:
                return "UNAUTHENTICATED";
        case 403:
                return "PERMISSION_DENIED";
        case 404:
                return "NOT_FOUND";
        case 409:
                return "ALREADY_EXISTS";
        case 412:
                return "FAILED_PRECONDITION";
        case 429:
                return "RESOURCE_EXHAUSTED";
        case 501:
                return "UNIMPLEMENTED";
        case 503:
                return "UNAVAILABLE";
        case 504:
                return "DEADLINE_EXCEEDED";
        default:
                return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
        }
}

static json_t *envelope(int status, const char *reason, const char *message)
{
        return json_pack("{s:{s:i, s:s, s:[{s:s, s:s, s:s}], s:s}}", "error", "code", status,
                         "message", message, "errors", "message", message, "domain", "global",
                         "reason", reason, "status", google_status(status));
}

int gmail_fail(TwinReply *rp, int status, const char *reason, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        /* the caller's bytes may be in the sentence: never let them make it unrepresentable */
        _cleanup_json_ json_t *s = twin_json_string_lossy(msg, strlen(msg));
        if (!s)
                return -ENOMEM;
        return twin_reply_body(rp, status, envelope(status, reason, json_string_value(s)));
}

int gmail_not_found(TwinReply *rp)
{
        return gmail_fail(rp, 404, "notFound", "Requested entity was not found.");
}

int gmail_reply_ok(TwinReply *rp)
{
        int r = twin_reply_body(rp, 200, json_string("OK"));
        if (r < 0 || twin_reply_header(rp, "Content-Type", json_string("text/plain")) < 0)
                return -ENOMEM;
        return 0;
}

char *gmail_mint_id(json_t *world, const char *prefix, json_t *rows)
{
        json_t *counters = json_object_get(world, "counters");
        if (!json_is_object(counters)) {
                counters = json_object();
                if (!counters || json_object_set_new(world, "counters", counters) < 0)
                        return NULL;
        }
        json_int_t n = json_integer_value(json_object_get(counters, prefix));
        for (;;) {
                char *id;
                n++;
                if (asprintf(&id, "%s_%lld", prefix, (long long)n) < 0)
                        return NULL;
                if (rows && gmail_find(rows, id, NULL)) {
                        free(id);
                        continue;
                }
                if (json_object_set_new(counters, prefix, json_integer(n)) < 0) {
                        free(id);
                        return NULL;
                }
                return id;
        }
}

/* Counts a seeded id against the counter of prefix, as hosted Pome's seeding does (an id the
 * seed pins still advances the counter, so minted ids come after). */
static int count_seeded(json_t *world, const char *prefix)
{
        char *id = gmail_mint_id(world, prefix, NULL);
        free(id);
        return id ? 0 : -ENOMEM;
}

json_int_t gmail_history_bump(json_t *world)
{
        json_int_t h = json_integer_value(json_object_get(world, "historyId")) + 1;
        (void)json_object_set_new(world, "historyId", json_integer(h));
        return h;
}

int gmail_history_add(json_t *world, const char *kind, json_t *message, json_t *labels)
{
        json_t *history = gmail_rows(world, "history");
        if (!history)
                return -ENOMEM;
        json_int_t h = gmail_history_bump(world);
        char id[32];
        snprintf(id, sizeof(id), "%lld", (long long)h);
        if (json_object_set_new(message, "historyId", json_string(id)) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *ref =
                json_pack("{s:s, s:s, s:O}", "id", strempty(json_get_str(message, "id")),
                          "threadId", strempty(json_get_str(message, "threadId")), "labelIds",
                          json_object_get(message, "labelIds"));
        if (!ref)
                return -ENOMEM;
        json_t *entry = labels ? json_pack("{s:O, s:O}", "message", ref, "labelIds", labels)
                               : json_pack("{s:O}", "message", ref);
        json_t *rec = entry ? json_pack("{s:s, s:[{s:s, s:s}], s:[o]}", "id", id, "messages", "id",
                                        json_get_str(ref, "id"), "threadId",
                                        json_get_str(ref, "threadId"), kind, entry)
                            : NULL;
        if (!rec)
                return -ENOMEM;
        return json_array_append_new(history, rec) < 0 ? -ENOMEM : 0;
}

int64_t gmail_clock_ms(const json_t *world)
{
        return json_integer_value(json_object_get(world, "clock"));
}

int64_t gmail_now_ms(const TwinCall *c)
{
        return gmail_clock_ms(c->world) + 1000;
}

bool gmail_user_ok(const TwinCall *c)
{
        const char *u = json_get_str(c->args, "userId");
        return !u || streq(u, "me") ||
               strcasecmp(u, strempty(json_get_str(c->world, "emailAddress"))) == 0;
}

int gmail_user_refused(TwinCall *c, TwinReply *rp)
{
        return gmail_fail(rp, 403, "forbidden", "Delegation denied for %s",
                          strempty(json_get_str(c->world, "emailAddress")));
}

/* ------------------------------------------------------------------ faults */

/*
 * Hosted Pome's named faults (packages/twin-gmail/src/faults.ts): "rate-limited" on target
 * (a Gmail method, "messages.send"): calls 1..succeedFirst pass, the next throttleFor answer
 * 429 rateLimitExceeded with Retry-After, later ones pass; every call counts, throttled
 * ones too. 1 with the refusal in rp, 0 to go on, -ENOMEM.
 */
static int named_fault(TwinCall *c, TwinReply *rp, const char *op)
{
        json_t *faults = json_object_get(c->world, "faults"), *f;
        size_t i;
        json_array_foreach (faults, i, f) {
                if (!streq_ptr(json_get_str(f, "target"), op))
                        continue;
                json_t *attempts = json_object_get(c->world, "attempts");
                if (!json_is_object(attempts)) {
                        attempts = json_object();
                        if (!attempts || json_object_set_new(c->world, "attempts", attempts) < 0)
                                return -ENOMEM;
                }
                char key[160];
                snprintf(key, sizeof(key), "fault:%s", op);
                json_int_t n = json_integer_value(json_object_get(attempts, key)) + 1;
                if (json_object_set_new(attempts, key, json_integer(n)) < 0)
                        return -ENOMEM;
                json_int_t first = json_integer_value(json_object_get(f, "succeedFirst"));
                json_int_t span = json_integer_value(json_object_get(f, "throttleFor"));
                json_int_t after = json_integer_value(json_object_get(f, "retryAfterSeconds"));
                if (n <= first || n > first + span)
                        return 0;
                int r = gmail_fail(rp, 429, "rateLimitExceeded",
                                   "Rate limit exceeded for %s. Retry after %llds.", op,
                                   (long long)after);
                char s[32];
                snprintf(s, sizeof(s), "%lld", (long long)after);
                if (r < 0 || twin_reply_header(rp, "Retry-After", json_string(s)) < 0)
                        return -ENOMEM;
                return 1;
        }
        return 0;
}

/* Whether a failure_injection rule names "METHOD /path" (its path may end in '*'). */
static bool rule_matches(const json_t *rule, const char *method, const char *path)
{
        const char *m = strempty(json_get_str(rule, "method"));
        const char *p = strempty(json_get_str(rule, "path"));
        if (!streq(m, "*") && strcasecmp(m, method) != 0)
                return false;
        size_t pl = strlen(p);
        if (pl > 0 && p[pl - 1] == '*')
                return strncmp(path, p, pl - 1) == 0;
        return streq(path, p);
}

/* The injected answer of rule into rp: its body, else Google's envelope for its status. */
static int injected_reply(TwinReply *rp, const json_t *rule, json_int_t n, const char *endpoint)
{
        int status = (int)json_integer_value(json_object_get(rule, "status"));
        json_t *body = json_object_get(rule, "body");
        json_decref(rp->headers);
        rp->headers = NULL;
        json_decref(rp->body);
        rp->body = NULL;
        if (json_is_object(body))
                return twin_reply_body(rp, status, json_deep_copy(body));
        return gmail_fail(rp, status,
                          status == 503   ? "backendError"
                          : status == 429 ? "rateLimitExceeded"
                          : status >= 500 ? "backendError"
                                          : "failedPrecondition",
                          "%s (injected by the task's seed: attempt %lld of %s).",
                          status == 503   ? "The service is currently unavailable."
                          : status >= 500 ? "Internal error encountered."
                                          : "Precondition check failed.",
                          (long long)n, endpoint);
}

/*
 * The Stripe twin's failure injection (hosted Pome's rule shape, FDRS-339): the attempt-th
 * call of METHOD /path answers the rule's status and body; before_handler changes nothing,
 * after_handler runs the action first and keeps its change. An MCP call is "MCP <tool>".
 * Returns 1 (answered, *ret_after NULL) or 0 with *ret_after the after_handler rule to apply
 * once the action ran (a reference), -ENOMEM.
 */
static int injection(TwinCall *c, TwinReply *rp, const char *tool, json_t **ret_after,
                     json_int_t *ret_n, char *endpoint, size_t len)
{
        json_t *rules = json_object_get(c->world, "failure_injection"), *rule;
        size_t i;
        const char *method = c->request ? c->request->method : "MCP";
        const char *path = c->request ? c->request->path : tool;
        bool named = false;
        *ret_after = NULL;
        snprintf(endpoint, len, "%s %s", method, path);
        json_array_foreach (rules, i, rule)
                named = named || rule_matches(rule, method, path);
        if (!named)
                return 0;
        json_t *attempts = json_object_get(c->world, "attempts");
        if (!json_is_object(attempts)) {
                attempts = json_object();
                if (!attempts || json_object_set_new(c->world, "attempts", attempts) < 0)
                        return -ENOMEM;
        }
        json_int_t n = json_integer_value(json_object_get(attempts, endpoint)) + 1;
        if (json_object_set_new(attempts, endpoint, json_integer(n)) < 0)
                return -ENOMEM;
        json_array_foreach (rules, i, rule) {
                if (!rule_matches(rule, method, path) ||
                    json_integer_value(json_object_get(rule, "attempt")) != n)
                        continue;
                if (streq_ptr(json_get_str(rule, "mode"), "after_handler")) {
                        *ret_after = json_incref(rule);
                        *ret_n = n;
                        return 0;
                }
                int r = injected_reply(rp, rule, n, endpoint);
                return r < 0 ? r : 1;
        }
        return 0;
}

/* JSON Schema's name of v's type, as a refusal words it. */
static const char *json_type_name(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
        case JSON_REAL:
                return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        case JSON_NULL:
        default:
                return "null";
        }
}

static bool type_ok(const char *type, const json_t *v)
{
        if (streq(type, "object"))
                return json_is_object(v);
        if (streq(type, "array"))
                return json_is_array(v);
        if (streq(type, "string"))
                return json_is_string(v);
        if (streq(type, "boolean"))
                return json_is_boolean(v);
        if (streq(type, "number"))
                return json_is_number(v);
        if (streq(type, "integer"))
                return json_is_integer(v) ||
                       (json_is_real(v) &&
                        json_real_value(v) == (double)(int64_t)json_real_value(v));
        return true;
}

/* Whether s is empty or white space alone. */
static bool blank(const char *s)
{
        return s[strspn(s, " \t\r\n")] == 0;
}

/*
 * The bounds hosted Pome's twin (its zod schemas) and Google's descriptions put on
 * arguments the listed schema leaves open: pageSize 1 to 50 ("The maximum allowed value
 * is 50"), labelIds 1 to 100 ids, an id or a label's displayName not empty.
 */
static bool bounds_ok(const char *name, const json_t *v, const char *path, char *err, size_t errlen)
{
        if (streq(name, "pageSize") && json_is_number(v) &&
            (json_number_value(v) < 1 || json_number_value(v) > 50)) {
                snprintf(err, errlen, "Invalid argument %s: must be between 1 and 50", path);
                return false;
        }
        if (streq(name, "labelIds") && json_is_array(v) &&
            (json_array_size(v) < 1 || json_array_size(v) > 100)) {
                snprintf(err, errlen, "Invalid argument %s: must hold 1 to 100 label ids", path);
                return false;
        }
        if ((streq(name, "messageId") || streq(name, "threadId") ||
             streq(name, "replyToMessageId") || streq(name, "displayName")) &&
            json_is_string(v) && blank(json_string_value(v))) {
                snprintf(err, errlen, "Invalid argument %s: must not be empty", path);
                return false;
        }
        return true;
}

/*
 * Whether v is what schema (a part of a tool's inputSchema root: type, enum, properties,
 * required, items, $ref to #/$defs/…) allows; else false with a sentence in err naming
 * path. Properties the schema does not name pass, as hosted Pome's passthrough schemas let
 * them; an optional argument that is null counts as absent.
 */
static bool schema_ok(const json_t *root, const json_t *schema, const json_t *v, const char *path,
                      char *err, size_t errlen)
{
        const char *ref = json_get_str(schema, "$ref");
        if (ref && startswith(ref, "#/$defs/"))
                schema = json_object_get(json_object_get(root, "$defs"), ref + 8);
        if (!json_is_object(schema))
                return true;
        const char *type = json_get_str(schema, "type");
        const char *what = *path ? path : "arguments";
        if (type && !type_ok(type, v)) {
                snprintf(err, errlen, "Invalid argument %s: expected %s%s, got %s", what,
                         streq(type, "integer") || streq(type, "array") || streq(type, "object")
                                 ? "an "
                                 : "a ",
                         type, json_type_name(v));
                return false;
        }
        json_t *e = json_object_get(schema, "enum"), *x;
        size_t i;
        if (json_is_array(e)) {
                bool hit = false;
                json_array_foreach (e, i, x)
                        hit = hit || json_equal(x, v);
                if (!hit) {
                        _cleanup_free_ char *d = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
                        snprintf(err, errlen, "Invalid argument %s: %s is not one of its values",
                                 what, d ? d : "the value");
                        return false;
                }
        }
        char sub[128];
        if (json_is_array(v)) {
                json_t *items = json_object_get(schema, "items");
                json_array_foreach (v, i, x) {
                        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
                        if (!schema_ok(root, items, x, sub, err, errlen))
                                return false;
                }
        }
        if (!json_is_object(v))
                return true;
        json_array_foreach (json_object_get(schema, "required"), i, x) {
                json_t *got = json_object_get(v, json_string_value(x));
                if (!got || json_is_null(got)) {
                        snprintf(err, errlen, "%s%s%s is required", path, *path ? "." : "",
                                 json_string_value(x));
                        return false;
                }
        }
        const char *key;
        json_t *p;
        json_object_foreach (json_object_get(schema, "properties"), key, p) {
                json_t *got = json_object_get(v, key);
                if (!got || json_is_null(got))
                        continue;
                snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
                if (!schema_ok(root, p, got, sub, err, errlen) ||
                    !bounds_ok(key, got, sub, err, errlen))
                        return false;
        }
        return true;
}

/*
 * Every action's pipeline: the mailbox (userId "me" or its address), the seed's named
 * faults on op (hosted Pome's Gmail method name, "messages.send"), its failure_injection
 * rules, then the action.
 */
static int gmail_serve(TwinCall *c, TwinReply *rp, const char *tool, const char *op,
                       TwinActionFn fn)
{
        if (!gmail_user_ok(c))
                return gmail_user_refused(c, rp);
        if (!c->request) {
                /* an MCP call's arguments are what its tool's input schema says */
                const TwinKind *k = twin_kind(c->twin);
                const TwinAction *a = twin_kind_action(k, tool);
                const json_t *schema = a ? twin_action_input_schema(k, a) : NULL;
                char err[256];
                if (schema && !schema_ok(schema, schema, c->args, "", err, sizeof(err)))
                        return gmail_fail(rp, 400, "invalidArgument", "%s", err);
        }
        int r = named_fault(c, rp, op);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!streq(op, tool) && (r = named_fault(c, rp, tool)) != 0)
                return r < 0 ? r : 0;
        _cleanup_json_ json_t *after = NULL;
        json_int_t n = 0;
        char endpoint[512];
        r = injection(c, rp, tool, &after, &n, endpoint, sizeof(endpoint));
        if (r != 0)
                return r < 0 ? r : 0;
        r = fn(c, rp);
        if (r < 0)
                return r;
        /* the mailbox's logical clock: one second per change, what gmail_now_ms stamped */
        if (rp->state_mutation &&
            json_object_set_new(c->world, "clock", json_integer(gmail_now_ms(c))) < 0)
                return -ENOMEM;
        return after ? injected_reply(rp, after, n, endpoint) : 0;
}

/* ------------------------------------------------------------------ seed */

/* RFC 3339 with an optional fraction and a Z or ±hh:mm offset, into ms since the epoch. */
static int parse_time_ms(const char *s, int64_t *ret)
{
        int y, mo, d, h, mi, sec, n = 0;
        if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
            n != 19)
                return -EINVAL;
        const char *p = s + n;
        int64_t ms = 0;
        if (*p == '.') {
                int digits = 0;
                for (p++; isdigit((unsigned char)*p); p++, digits++)
                        if (digits < 3)
                                ms = ms * 10 + (*p - '0');
                if (digits == 0)
                        return -EINVAL;
                for (; digits < 3; digits++)
                        ms *= 10;
        }
        int64_t off = 0;
        if (*p == 'Z' || *p == 'z')
                p++;
        else if (*p == '+' || *p == '-') {
                int oh, om;
                if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2 || strlen(p) != 6)
                        return -EINVAL;
                off = (int64_t)(oh * 60 + om) * 60 * (*p == '+' ? 1 : -1);
                p += 6;
        } else
                return -EINVAL;
        if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
                return -EINVAL;
        struct tm tm = {.tm_year = y - 1900,
                        .tm_mon = mo - 1,
                        .tm_mday = d,
                        .tm_hour = h,
                        .tm_min = mi,
                        .tm_sec = sec};
        *ret = ((int64_t)timegm(&tm) - off) * 1000 + ms;
        return 0;
}

/* hosted Pome's seed: an address (zod's email(), lower-cased) */
static bool is_email(const char *s)
{
        const char *at = s ? strchr(s, '@') : NULL;
        return at && at > s && at[1] && !strchr(at + 1, '@') && !strpbrk(s, " \t\r\n<>,;\"") &&
               strchr(at + 1, '.');
}

/* The string array o[key] (absent: []) of addresses (emails) or any strings, copied. */
static int seed_strv(TwinSeed *s, const json_t *o, const char *key, const char *path, bool emails,
                     json_t **ret)
{
        json_t *a;
        int r = twin_seed_array(s, o, key, path, &a);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *v;
        if (!out)
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                const char *str = json_string_value(v);
                if (!str || (emails && !is_email(str)))
                        return twin_seed_error(s->err, s->errlen, "%s.%s[%zu]: must be %s", path,
                                               key, i, emails ? "an email address" : "a string");
                _cleanup_free_ char *low = strdup(str);
                if (!low)
                        return -ENOMEM;
                for (char *p = low; emails && *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                if (json_array_append_new(out, json_string(low)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/* A seed id: 1-128 of [A-Za-z0-9_-] (hosted Pome's). */
static bool seed_id_ok(const char *id)
{
        size_t n = strlen(id);
        if (n < 1 || n > 128)
                return false;
        for (const char *p = id; *p; p++)
                if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
                        return false;
        return true;
}

static int seed_id(TwinSeed *s, const json_t *o, const char *key, const char *path,
                   const char **ret)
{
        int r = twin_seed_str(s, o, key, path, NULL, TWIN_NULL_REFUSED, ret);
        if (r < 0)
                return r;
        if (*ret && !seed_id_ok(*ret))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.%s: must be 1-128 letters, digits, '_' or '-'", path,
                                       key);
        return 0;
}

/*
 * One seeded message or draft (hosted Pome's messageFields) into the world: its RFC 5322 form
 * built (or its raw taken), labels resolved. draft: a draft's message. 0, -EINVAL, -ENOMEM.
 */
static int seed_message(TwinSeed *s, const json_t *v, const char *path, bool draft,
                        int64_t clock_ms)
{
        json_t *world = s->world;
        int r;
        if (!json_is_object(v))
                return twin_seed_error(s->err, s->errlen, "%s: must be an object", path);
        if (draft)
                r = TWIN_SEED_KNOWN(s, v, path, "draft", "id", "threadId", "raw", "from", "to",
                                    "cc", "bcc", "subject", "text", "html", "date", "messageId",
                                    "inReplyTo", "references", "attachments");
        else
                r = TWIN_SEED_KNOWN(s, v, path, "message", "id", "threadId", "raw", "from", "to",
                                    "cc", "bcc", "subject", "text", "html", "date", "messageId",
                                    "inReplyTo", "references", "attachments", "labels");
        if (r < 0)
                return r;
        const char *id, *thread, *raw, *from, *subject, *text, *html, *date, *mid, *irt;
        _cleanup_json_ json_t *to = NULL, *cc = NULL, *bcc = NULL, *refs = NULL, *labels = NULL;
        if ((r = seed_id(s, v, "id", path, &id)) < 0 ||
            (r = seed_id(s, v, "threadId", path, &thread)) < 0 ||
            (r = twin_seed_str(s, v, "raw", path, NULL, TWIN_NULL_REFUSED, &raw)) < 0 ||
            (r = twin_seed_str(s, v, "from", path, NULL, TWIN_NULL_REFUSED, &from)) < 0 ||
            (r = twin_seed_str(s, v, "subject", path, "", TWIN_NULL_REFUSED, &subject)) < 0 ||
            (r = twin_seed_str(s, v, "text", path, "", TWIN_NULL_REFUSED, &text)) < 0 ||
            (r = twin_seed_str(s, v, "html", path, "", TWIN_NULL_REFUSED, &html)) < 0 ||
            (r = twin_seed_str(s, v, "date", path, NULL, TWIN_NULL_REFUSED, &date)) < 0 ||
            (r = twin_seed_str(s, v, "messageId", path, NULL, TWIN_NULL_REFUSED, &mid)) < 0 ||
            (r = twin_seed_str(s, v, "inReplyTo", path, NULL, TWIN_NULL_REFUSED, &irt)) < 0 ||
            (r = seed_strv(s, v, "to", path, true, &to)) < 0 ||
            (r = seed_strv(s, v, "cc", path, true, &cc)) < 0 ||
            (r = seed_strv(s, v, "bcc", path, true, &bcc)) < 0 ||
            (r = seed_strv(s, v, "references", path, false, &refs)) < 0 ||
            (r = seed_strv(s, v, "labels", path, false, &labels)) < 0)
                return r;
        if (from && !is_email(from))
                return twin_seed_error(s->err, s->errlen, "%s.from: must be an email address",
                                       path);
        if (mid && strlen(mid) < 3)
                return twin_seed_error(s->err, s->errlen, "%s.messageId: at least 3 characters",
                                       path);
        int64_t ms = 0;
        if (date && parse_time_ms(date, &ms) < 0)
                return twin_seed_error(s->err, s->errlen,
                                       "%s.date: must be an RFC 3339 date-time "
                                       "(\"2026-07-19T12:00:00.000Z\")",
                                       path);
        /* attachments: [{filename, mimeType, disposition, contentId, data}] */
        json_t *atts;
        if ((r = twin_seed_array(s, v, "attachments", path, &atts)) < 0)
                return r;
        size_t i;
        json_t *a;
        json_array_foreach (atts, i, a) {
                char p[256];
                snprintf(p, sizeof(p), "%s.attachments[%zu]", path, i);
                const char *fn, *mt, *disp, *cid, *data;
                if (!json_is_object(a))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, a, p, "attachment", "filename", "mimeType",
                                         "disposition", "contentId", "data")) < 0 ||
                    (r = twin_seed_str(s, a, "filename", p, NULL, TWIN_NULL_REFUSED, &fn)) < 0 ||
                    (r = twin_seed_str(s, a, "mimeType", p, "application/octet-stream",
                                       TWIN_NULL_REFUSED, &mt)) < 0 ||
                    (r = twin_seed_str(s, a, "disposition", p, "attachment", TWIN_NULL_REFUSED,
                                       &disp)) < 0 ||
                    (r = twin_seed_str(s, a, "contentId", p, NULL, TWIN_NULL_REFUSED, &cid)) < 0 ||
                    (r = twin_seed_str(s, a, "data", p, NULL, TWIN_NULL_REFUSED, &data)) < 0)
                        return r;
                if (!fn || !data)
                        return twin_seed_error(s->err, s->errlen, "%s: needs filename and data", p);
                if (!streq(disp, "attachment") && !streq(disp, "inline"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.disposition: must be \"attachment\" or "
                                               "\"inline\"",
                                               p);
        }
        const char *mailbox = json_get_str(world, "emailAddress");
        _cleanup_free_ char *bytes = NULL;
        size_t len = 0;
        if (raw) {
                /* hosted Pome: a raw with line breaks is the message itself, else base64url */
                if (strchr(raw, '\n')) {
                        bytes = strdup(raw);
                        len = strlen(raw);
                        if (!bytes)
                                return -ENOMEM;
                } else if ((r = gmail_base64_decode(raw, strlen(raw), &bytes, &len)) < 0)
                        return r == -ENOMEM ? r
                                            : twin_seed_error(s->err, s->errlen,
                                                              "%s.raw: must be base64url or a "
                                                              "message",
                                                              path);
        } else {
                _cleanup_free_ char *gen_mid = NULL;
                if (!mid) {
                        char *n = gmail_mint_id(world, "rfc", NULL);
                        if (!n || asprintf(&gen_mid, "%s@pome-twin.test", n) < 0) {
                                free(n);
                                return -ENOMEM;
                        }
                        free(n);
                }
                _cleanup_json_ json_t *spec = json_pack(
                        "{s:s, s:O, s:O, s:O, s:s, s:s, s:s, s:s, s:O, s:I}", "from",
                        from ? from : strempty(mailbox), "to", to, "cc", cc, "bcc", bcc, "subject",
                        subject, "text", text, "html", html, "messageId", mid ? mid : gen_mid,
                        "references", refs, "date", (json_int_t)((date ? ms : clock_ms) / 1000));
                if (!spec || (irt && json_object_set_new(spec, "inReplyTo", json_string(irt)) < 0))
                        return -ENOMEM;
                /* an empty html (the seed's default) is no part; text stays, empty or not,
                 * when there is no html */
                if (!*html)
                        json_object_del(spec, "html");
                else if (!*text)
                        json_object_del(spec, "text");
                if (json_array_size(atts) > 0 && json_object_set(spec, "attachments", atts) < 0)
                        return -ENOMEM;
                r = gmail_mime_build(spec, &bytes, &len);
                if (r == -EINVAL)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.attachments: data must be base64", path);
                if (r < 0)
                        return r;
        }
        /* labels: ids, or names of the mailbox's labels (case-insensitive) */
        _cleanup_json_ json_t *ids = json_array();
        json_t *l;
        if (!ids)
                return -ENOMEM;
        if (draft && json_array_append_new(ids, json_string("DRAFT")) < 0)
                return -ENOMEM;
        json_array_foreach (labels, i, l) {
                const char *name = json_string_value(l);
                json_t *found = gmail_label(world, name);
                size_t j;
                json_t *cand;
                if (!found)
                        json_array_foreach (json_object_get(world, "labels"), j, cand)
                                if (strcasecmp(strempty(json_get_str(cand, "name")), name) == 0) {
                                        found = cand;
                                        break;
                                }
                if (!found)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.labels[%zu]: no label \"%s\" (a system "
                                               "label or one of the mailbox's labels)",
                                               path, i, name);
                const char *lid = json_get_str(found, "id");
                bool dup = false;
                size_t k;
                json_t *have;
                json_array_foreach (ids, k, have)
                        dup = dup || streq(json_string_value(have), lid);
                if (!dup && json_array_append_new(ids, json_string(lid)) < 0)
                        return -ENOMEM;
        }
        json_t *messages = gmail_rows(world, "messages");
        if (!messages)
                return -ENOMEM;
        _cleanup_free_ char *msg_id = NULL;
        if (draft && id && asprintf(&msg_id, "%s_message", id) < 0)
                return -ENOMEM;
        const char *mid_final = draft ? msg_id : id;
        if (mid_final && gmail_find(messages, mid_final, NULL))
                return twin_seed_error(s->err, s->errlen, "%s.id: \"%s\" is used twice", path,
                                       mid_final);
        if ((!draft && id && (r = count_seeded(world, "msg")) < 0) ||
            (thread && (r = count_seeded(world, "thread")) < 0))
                return r;
        GmailStore o = {.id = mid_final,
                        .thread_id = thread,
                        .label_ids = ids,
                        .internal_ms = date ? ms : clock_ms,
                        .now_ms = clock_ms};
        json_t *m;
        if ((r = gmail_store(world, bytes, len, &o, &m)) < 0)
                return r;
        if (!draft)
                return 0;
        json_t *drafts = gmail_rows(world, "drafts");
        _cleanup_free_ char *did = NULL;
        if (!drafts)
                return -ENOMEM;
        if (id) {
                if (gmail_find(drafts, id, NULL))
                        return twin_seed_error(s->err, s->errlen, "%s.id: \"%s\" is used twice",
                                               path, id);
                if ((r = count_seeded(world, "draft")) < 0)
                        return r;
        } else if (!(did = gmail_mint_id(world, "draft", drafts)))
                return -ENOMEM;
        return json_array_append_new(drafts, json_pack("{s:s, s:s}", "id", id ? id : did,
                                                       "messageId", json_get_str(m, "id"))) < 0
                       ? -ENOMEM
                       : 0;
}

static int seed_labels(TwinSeed *s, const json_t *mb, const char *path)
{
        json_t *a, *v;
        size_t i;
        int r = twin_seed_array(s, mb, "labels", path, &a);
        if (r < 0)
                return r;
        json_t *labels = gmail_rows(s->world, "labels");
        if (!labels)
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                char p[128];
                snprintf(p, sizeof(p), "%s.labels[%zu]", path, i);
                const char *id, *name;
                json_t *color = json_object_get(v, "color");
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "label", "id", "name", "color")) < 0 ||
                    (r = seed_id(s, v, "id", p, &id)) < 0 ||
                    (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_REFUSED, &name)) < 0)
                        return r;
                if (!name || !*name || strlen(name) > 225)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.name: needs a name of 1-225 characters", p);
                if (color) {
                        char cp[160];
                        const char *tc, *bc;
                        snprintf(cp, sizeof(cp), "%s.color", p);
                        if (!json_is_object(color))
                                return twin_seed_error(s->err, s->errlen, "%s: must be an object",
                                                       cp);
                        if ((r = TWIN_SEED_KNOWN(s, color, cp, "color", "textColor",
                                                 "backgroundColor")) < 0 ||
                            (r = twin_seed_str(s, color, "textColor", cp, NULL, TWIN_NULL_REFUSED,
                                               &tc)) < 0 ||
                            (r = twin_seed_str(s, color, "backgroundColor", cp, NULL,
                                               TWIN_NULL_REFUSED, &bc)) < 0)
                                return r;
                }
                size_t j;
                json_t *have;
                json_array_foreach (labels, j, have)
                        if (strcasecmp(strempty(json_get_str(have, "name")), name) == 0 ||
                            (id && streq_ptr(json_get_str(have, "id"), id)))
                                return twin_seed_error(
                                        s->err, s->errlen, "%s: duplicate label \"%s\"", p,
                                        id && streq_ptr(json_get_str(have, "id"), id) ? id : name);
                _cleanup_free_ char *minted = NULL;
                if (id)
                        r = count_seeded(s->world, "Label");
                else if (!(minted = gmail_mint_id(s->world, "Label", labels)))
                        r = -ENOMEM;
                if (r < 0)
                        return r;
                json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", id ? id : minted, "name",
                                        name, "type", "user", "messageListVisibility", "show",
                                        "labelListVisibility", "labelShow");
                if (!row || (color && json_object_set(row, "color", color) < 0) ||
                    json_array_append_new(labels, row) < 0) {
                        json_decref(row);
                        return -ENOMEM;
                }
        }
        return 0;
}

static int seed_filters(TwinSeed *s, const json_t *mb, const char *path)
{
        json_t *a, *v;
        size_t i;
        int r = twin_seed_array(s, mb, "filters", path, &a);
        if (r < 0)
                return r;
        json_t *filters = gmail_rows(s->world, "filters");
        if (!filters)
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                char p[128];
                const char *id;
                snprintf(p, sizeof(p), "%s.filters[%zu]", path, i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "filter", "id", "criteria", "action")) < 0 ||
                    (r = seed_id(s, v, "id", p, &id)) < 0)
                        return r;
                json_t *crit = json_object_get(v, "criteria"), *act = json_object_get(v, "action");
                char cp[160], ap[160];
                snprintf(cp, sizeof(cp), "%s.criteria", p);
                snprintf(ap, sizeof(ap), "%s.action", p);
                if ((crit && !json_is_object(crit)) || (act && !json_is_object(act)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: criteria and action must be objects", p);
                if ((crit && (r = TWIN_SEED_KNOWN(s, crit, cp, "criteria", "from", "to", "subject",
                                                  "query", "negatedQuery", "hasAttachment",
                                                  "excludeChats", "size", "sizeComparison")) < 0) ||
                    (act && (r = TWIN_SEED_KNOWN(s, act, ap, "action", "addLabelIds",
                                                 "removeLabelIds", "forward")) < 0))
                        return r;
                if (act && json_object_get(act, "forward"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.forward: filter forwarding is unsupported", ap);
                const char *qk[] = {"query", "negatedQuery"};
                for (size_t k = 0; k < ELEMENTSOF(qk); k++) {
                        const char *q = json_get_str(crit, qk[k]);
                        GmailQuery *gq = NULL;
                        char qerr[160] = "";
                        if (!q)
                                continue;
                        r = gmail_query_parse(q, &gq, qerr, sizeof(qerr));
                        gmail_query_free(gq);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return twin_seed_error(s->err, s->errlen, "%s.%s: %s", cp, qk[k],
                                                       qerr);
                }
                _cleanup_free_ char *minted = NULL;
                if (id)
                        r = count_seeded(s->world, "filter");
                else if (!(minted = gmail_mint_id(s->world, "filter", filters)))
                        r = -ENOMEM;
                if (r < 0)
                        return r;
                json_t *row = json_pack("{s:s, s:o, s:o}", "id", id ? id : minted, "criteria",
                                        crit ? json_deep_copy(crit) : json_object(), "action",
                                        act ? json_deep_copy(act) : json_object());
                if (!row || json_array_append_new(filters, row) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int seed_settings(TwinSeed *s, const json_t *mb, const char *path)
{
        json_t *a, *v;
        size_t i;
        int r;
        if ((r = twin_seed_array(s, mb, "sendAs", path, &a)) < 0)
                return r;
        json_t *rows = gmail_rows(s->world, "sendAs");
        if (!rows)
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                char p[128];
                snprintf(p, sizeof(p), "%s.sendAs[%zu]", path, i);
                if (!json_is_object(v) || !is_email(json_get_str(v, "sendAsEmail")))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be an object with a sendAsEmail", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "sendAs", "sendAsEmail", "displayName",
                                         "replyToAddress", "isPrimary", "isDefault",
                                         "verificationStatus")) < 0)
                        return r;
                if (json_array_append_new(rows, json_deep_copy(v)) < 0)
                        return -ENOMEM;
        }
        if ((r = twin_seed_array(s, mb, "forwardingAddresses", path, &a)) < 0)
                return r;
        if (!(rows = gmail_rows(s->world, "forwardingAddresses")))
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                char p[128];
                snprintf(p, sizeof(p), "%s.forwardingAddresses[%zu]", path, i);
                if (!json_is_object(v) || !is_email(json_get_str(v, "forwardingEmail")))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be an object with a forwardingEmail", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "forwarding address", "forwardingEmail",
                                         "verificationStatus")) < 0)
                        return r;
                if (json_array_append_new(rows, json_deep_copy(v)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* hosted Pome's faults[{name: "rate-limited", target, succeedFirst, throttleFor,
 * retryAfterSeconds}] with its defaults */
static int seed_faults(TwinSeed *s, const json_t *seed)
{
        json_t *a, *v;
        size_t i;
        int r = twin_seed_array(s, seed, "faults", "", &a);
        if (r < 0)
                return r;
        json_t *rows = gmail_rows(s->world, "faults");
        if (!rows)
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                char p[64];
                const char *name, *target;
                snprintf(p, sizeof(p), "faults[%zu]", i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "fault", "name", "target", "succeedFirst",
                                         "throttleFor", "retryAfterSeconds")) < 0 ||
                    (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_REFUSED, &name)) < 0 ||
                    (r = twin_seed_str(s, v, "target", p, "messages.send", TWIN_NULL_REFUSED,
                                       &target)) < 0)
                        return r;
                if (!streq_ptr(name, "rate-limited"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.name: must be \"rate-limited\" (the one "
                                               "named fault)",
                                               p);
                struct {
                        const char *key;
                        json_int_t def, min, max;
                } nums[] = {{"succeedFirst", 2, 0, 1000},
                            {"throttleFor", 3, 1, 1000},
                            {"retryAfterSeconds", 1, 1, 3600}};
                json_t *row = json_pack("{s:s, s:s}", "name", name, "target", target);
                if (!row || json_array_append_new(rows, row) < 0)
                        return -ENOMEM;
                for (size_t k = 0; k < ELEMENTSOF(nums); k++) {
                        json_t *n = json_object_get(v, nums[k].key);
                        if (n && (!json_is_integer(n) || json_integer_value(n) < nums[k].min ||
                                  json_integer_value(n) > nums[k].max))
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.%s: must be an integer in "
                                                       "[%lld, %lld]",
                                                       p, nums[k].key, (long long)nums[k].min,
                                                       (long long)nums[k].max);
                        if (json_object_set_new(
                                    row, nums[k].key,
                                    json_integer(n ? json_integer_value(n) : nums[k].def)) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* The Stripe twin's failure_injection[{method, path, attempt, mode, status, body}]
 * (twin_seed_failure_injection); a path may be an MCP tool's name. */
static int seed_injection(TwinSeed *s, const json_t *seed)
{
        json_t *rows = gmail_rows(s->world, "failure_injection");
        if (!rows)
                return -ENOMEM;
        return twin_seed_failure_injection(s, seed, rows, false,
                                           "\"/gmail/v1/users/me/messages/send\", or a tool "
                                           "name for MCP");
}

static const char *const seed_keys[] = {
        "primaryMailbox",    "mailboxes", "deliveryMode", "clock", "faults",
        "failure_injection", NULL};

/*
 * One seeded mailbox (hosted Pome's mailboxSchema) at path into s->world: its address, system
 * and own labels, messages, drafts, filters and settings, its history starting after them.
 * 0, -EINVAL, -ENOMEM.
 */
static int seed_mailbox(TwinSeed *s, const json_t *mb, const char *path, int64_t clock_ms)
{
        const char *email, *display;
        int r;
        if (!json_is_object(mb))
                return twin_seed_error(s->err, s->errlen,
                                       "%s: an object {email, displayName, labels, messages, "
                                       "drafts, filters, …}",
                                       path);
        if ((r = TWIN_SEED_KNOWN(s, mb, path, "mailbox", "email", "displayName", "labels",
                                 "messages", "drafts", "filters", "forwardingAddresses",
                                 "sendAs")) < 0 ||
            (r = twin_seed_str(s, mb, "email", path, NULL, TWIN_NULL_REFUSED, &email)) < 0 ||
            (r = twin_seed_str(s, mb, "displayName", path, "", TWIN_NULL_REFUSED, &display)) < 0)
                return r;
        if (!is_email(email))
                return twin_seed_error(s->err, s->errlen, "%s.email: must be an email address",
                                       path);
        _cleanup_free_ char *low = strdup(email);
        if (!low)
                return -ENOMEM;
        for (char *p = low; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        json_t *w = s->world;
        if (json_object_set_new(w, "emailAddress", json_string(low)) < 0 ||
            json_object_set_new(w, "displayName", json_string(display)) < 0 ||
            json_object_set_new(w, "clock", json_integer(clock_ms)) < 0 ||
            json_object_set_new(w, "historyId", json_integer(0)) < 0 || gmail_labels_system(w) < 0)
                return -ENOMEM;
        if ((r = seed_labels(s, mb, path)) < 0)
                return r;
        static const char *const kinds[] = {"messages", "drafts"};
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                json_t *a, *v;
                size_t i;
                if ((r = twin_seed_array(s, mb, kinds[k], path, &a)) < 0)
                        return r;
                json_array_foreach (a, i, v) {
                        char p[128];
                        snprintf(p, sizeof(p), "%s.%s[%zu]", path, kinds[k], i);
                        if ((r = seed_message(s, v, p, k == 1, clock_ms)) < 0)
                                return r;
                }
        }
        if ((r = seed_filters(s, mb, path)) < 0 || (r = seed_settings(s, mb, path)) < 0)
                return r;
        /* the seeded world is where history starts: nothing older can be listed */
        if (!gmail_rows(w, "history") || !gmail_rows(w, "drafts") ||
            !gmail_rows(w, "attachments") || !gmail_rows(w, "messages") ||
            json_object_set(w, "historyStart", json_object_get(w, "historyId")) < 0)
                return -ENOMEM;
        return 0;
}

static int seed_load(TwinSeed *s, const json_t *seed)
{
        int r = twin_seed_known(s, seed, "", "Gmail seed", seed_keys, ELEMENTSOF(seed_keys) - 1);
        if (r < 0)
                return r;
        const json_t *mb = json_object_get(seed, "primaryMailbox");
        if (!json_is_object(mb))
                return twin_seed_error(s->err, s->errlen,
                                       "primaryMailbox: required, an object {email, displayName, "
                                       "labels, messages, drafts, filters, …}");
        const char *mode, *clock;
        json_t *others, *v;
        if ((r = twin_seed_str(s, seed, "deliveryMode", "", "sender-only", TWIN_NULL_REFUSED,
                               &mode)) < 0 ||
            (r = twin_seed_str(s, seed, "clock", "", "2025-01-01T00:00:00.000Z", TWIN_NULL_REFUSED,
                               &clock)) < 0 ||
            (r = twin_seed_array(s, seed, "mailboxes", "", &others)) < 0)
                return r;
        if (!streq(mode, "sender-only") && !streq(mode, "seeded-mailboxes"))
                return twin_seed_error(s->err, s->errlen,
                                       "deliveryMode: must be \"sender-only\" or "
                                       "\"seeded-mailboxes\"");
        int64_t clock_ms;
        if (parse_time_ms(clock, &clock_ms) < 0)
                return twin_seed_error(s->err, s->errlen, "clock: must be an RFC 3339 date-time");
        json_t *w = s->world;
        if (json_object_set_new(w, "deliveryMode", json_string(mode)) < 0)
                return -ENOMEM;
        if ((r = seed_mailbox(s, mb, "primaryMailbox", clock_ms)) < 0)
                return r;
        /* the other mailboxes: worlds of their own below "mailboxes", where seeded-mailboxes
         * delivery puts what the primary one sends them */
        json_t *subs = gmail_rows(w, "mailboxes");
        size_t i;
        if (!subs)
                return -ENOMEM;
        json_array_foreach (others, i, v) {
                char p[64];
                _cleanup_json_ json_t *sub = json_object();
                TwinSeed ss = {.world = sub, .err = s->err, .errlen = s->errlen};
                snprintf(p, sizeof(p), "mailboxes[%zu]", i);
                if (!sub)
                        return -ENOMEM;
                if ((r = seed_mailbox(&ss, v, p, clock_ms)) < 0)
                        return r;
                const char *e = json_get_str(sub, "emailAddress");
                bool dup = streq_ptr(e, json_get_str(w, "emailAddress"));
                size_t j;
                json_t *o;
                json_array_foreach (subs, j, o)
                        dup = dup || streq_ptr(e, json_get_str(o, "emailAddress"));
                if (dup)
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate mailbox: %s", p,
                                               e);
                if (json_array_append(subs, sub) < 0)
                        return -ENOMEM;
        }
        if ((r = seed_faults(s, seed)) < 0 || (r = seed_injection(s, seed)) < 0)
                return r;
        return 0;
}

static int gmail_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen)
{
        _cleanup_json_ json_t *world = json_object();
        if (!world)
                return -ENOMEM;
        if (!json_is_object(seed))
                return twin_seed_error(err, errlen, "the seed must be a JSON object");
        TwinSeed s = {.world = world, .err = err, .errlen = errlen};
        int r = seed_load(&s, seed);
        if (r < 0)
                return r;
        *ret_world = TAKE_PTR(world);
        return 0;
}

/* /_pome/state: the world without the bytes it keeps twice (each message's raw, each
 * attachment's data: both are in the payload's parts and sizes). */
static json_t *gmail_public_state(const json_t *world)
{
        json_t *w = json_deep_copy(world), *v;
        size_t i;
        if (!w)
                return NULL;
        json_array_foreach (json_object_get(w, "messages"), i, v)
                json_object_del(v, "raw");
        json_array_foreach (json_object_get(w, "attachments"), i, v)
                json_object_del(v, "data");
        json_t *sub;
        json_array_foreach (json_object_get(w, "mailboxes"), i, sub) {
                size_t j;
                json_array_foreach (json_object_get(sub, "messages"), j, v)
                        json_object_del(v, "raw");
                json_array_foreach (json_object_get(sub, "attachments"), j, v)
                        json_object_del(v, "data");
        }
        return w;
}

/* text of n bytes of base64 (either alphabet) when it decodes to UTF-8, else NULL */
static json_t *decoded_text(const char *b64)
{
        _cleanup_free_ char *bytes = NULL;
        size_t n = 0;
        if (gmail_base64_decode(b64, strlen(b64), &bytes, &n) < 0 || !utf8_valid(bytes, n) ||
            memchr(bytes, 0, n))
                return NULL;
        return json_stringn(bytes, n);
}

/* Decodes, in place, every `raw` and every text part's `body.data` under v. 0 or -ENOMEM. */
static int judge_decode(json_t *v)
{
        const char *key;
        json_t *m;
        size_t i;
        if (json_is_array(v)) {
                json_array_foreach (v, i, m)
                        if (judge_decode(m) < 0)
                                return -ENOMEM;
                return 0;
        }
        if (!json_is_object(v))
                return 0;
        const char *mime = json_string_value(json_object_get(v, "mimeType"));
        json_t *data = json_object_get(json_object_get(v, "body"), "data");
        if (mime && startswith(mime, "text/") && json_is_string(data)) {
                json_t *text = decoded_text(json_string_value(data));
                if (text && json_object_set_new(json_object_get(v, "body"), "data", text) < 0)
                        return -ENOMEM;
        }
        json_t *raw = json_object_get(v, "raw");
        if (json_is_string(raw)) {
                json_t *text = decoded_text(json_string_value(raw));
                if (text && json_object_set_new(v, "raw", text) < 0)
                        return -ENOMEM;
        }
        json_object_foreach (v, key, m)
                if (!streq(key, "raw") && judge_decode(m) < 0)
                        return -ENOMEM;
        return 0;
}

/* TwinKind.judge_view: a message's `raw` and its text parts' `body.data` as their text (the
 * bytes are base64url on the wire, which a judge should not have to decode). */
static json_t *gmail_judge_view(const json_t *value)
{
        _cleanup_json_ json_t *v = json_deep_copy(value);
        if (!v || judge_decode(v) < 0)
                return NULL;
        return TAKE_PTR(v);
}

/* ------------------------------------------------------------------ envelopes */

/* The engine's refusals (malformed body, the loud 501) in Google's envelope. */
static void gmail_error(int status, const char *code, const char *message, TwinReply *rp)
{
        if (streq_ptr(code, "unsupported_endpoint"))
                /* hosted Pome's Gmail twin answers an unserved route UNIMPLEMENTED */
                (void)twin_reply_body(rp, 501, envelope(501, "notImplemented", message));
        else
                (void)twin_reply_body(rp, status,
                                      envelope(status,
                                               status == 404   ? "notFound"
                                               : status >= 500 ? "backendError"
                                                               : "invalidArgument",
                                               message));
}

/* What gmail.googleapis.com answers a caller without a usable OAuth token (probed by hosted
 * Pome, F-1497): 401 UNAUTHENTICATED, no documentation_url. */
static void gmail_auth_error(TwinAuthFailure why, TwinReply *rp)
{
        const char *msg =
                why == TWIN_AUTH_MISSING
                        ? "Request is missing required authentication credential. Expected OAuth "
                          "2 access token, login cookie or other valid authentication credential."
                        : "Request had invalid authentication credentials. Expected OAuth 2 "
                          "access token, login cookie or other valid authentication credential.";
        (void)twin_reply_body(
                rp, 401, envelope(401, why == TWIN_AUTH_MISSING ? "required" : "authError", msg));
}

/* hosted Pome's Gmail twin's control-surface refusals (contract/suite.mjs, gmail) */
static void gmail_control_error(TwinControlError what, const char *detail, TwinReply *rp)
{
        char msg[512];
        switch (what) {
        case TWIN_CONTROL_FORBIDDEN:
                (void)twin_reply_body(rp, 403, envelope(403, "forbidden", "Forbidden"));
                return;
        case TWIN_CONTROL_UNKNOWN_TOOL:
                snprintf(msg, sizeof(msg), "Unknown tool: %s", strempty(detail));
                (void)twin_reply_body(rp, 404, envelope(404, "notFound", msg));
                return;
        case TWIN_CONTROL_NO_TOOL:
                (void)twin_reply_body(rp, 400, envelope(400, "invalidArgument", "Invalid request"));
                return;
        case TWIN_CONTROL_BAD_BODY:
                (void)twin_reply_body(rp, 400, envelope(400, "invalidArgument", "Invalid JSON"));
                return;
        case TWIN_CONTROL_BAD_SEED:
                snprintf(msg, sizeof(msg), "Invalid request: %s", strempty(detail));
                (void)twin_reply_body(rp, 400, envelope(400, "invalidArgument", msg));
                return;
        }
        (void)twin_reply_body(rp, 400, envelope(400, "invalidArgument", "Invalid request"));
}

/* hosted Pome's frozen key sets: /healthz adds fidelity; /_pome/health is {fidelity, ok,
 * twin, version}. */
static int gmail_health_extras(const Twin *t _unused_, json_t *body, bool health)
{
        if (json_object_set_new(body, "fidelity", json_string("semantic")) < 0)
                return -ENOMEM;
        if (health && json_object_set_new(body, "version", json_string(POME_VERSION)) < 0)
                return -ENOMEM;
        return 0;
}

/* ------------------------------------------------------------------ table */

/* Each action behind the pipeline, with the Gmail method hosted Pome's faults name it by. */
#define SERVE(name, op)                                             \
        static int serve_##name(TwinCall *c, TwinReply *rp)         \
        {                                                           \
                return gmail_serve(c, rp, #name, op, gmail_##name); \
        }

SERVE(get_profile, "getProfile")
SERVE(list_messages, "messages.list")
SERVE(get_message, "messages.get")
SERVE(send_message, "messages.send")
SERVE(insert_message, "messages.insert")
SERVE(import_message, "messages.import")
SERVE(modify_message, "messages.modify")
SERVE(batch_modify_messages, "messages.batchModify")
SERVE(batch_delete_messages, "messages.batchDelete")
SERVE(trash_message, "messages.trash")
SERVE(untrash_message, "messages.untrash")
SERVE(delete_message, "messages.delete")
SERVE(get_attachment, "messages.attachments.get")
SERVE(label_message, "label_message")
SERVE(unlabel_message, "unlabel_message")
SERVE(apply_sensitive_message_label, "apply_sensitive_message_label")
SERVE(search_threads, "threads.list")
SERVE(get_thread, "threads.get")
SERVE(modify_thread, "threads.modify")
SERVE(trash_thread, "threads.trash")
SERVE(untrash_thread, "threads.untrash")
SERVE(delete_thread, "threads.delete")
SERVE(label_thread, "label_thread")
SERVE(unlabel_thread, "unlabel_thread")
SERVE(apply_sensitive_thread_label, "apply_sensitive_thread_label")
SERVE(list_labels, "labels.list")
SERVE(get_label, "labels.get")
SERVE(create_label, "labels.create")
SERVE(update_label, "labels.update")
SERVE(patch_label, "labels.patch")
SERVE(delete_label, "labels.delete")
SERVE(list_drafts, "drafts.list")
SERVE(get_draft, "drafts.get")
SERVE(create_draft, "drafts.create")
SERVE(update_draft, "drafts.update")
SERVE(send_draft, "drafts.send")
SERVE(delete_draft, "drafts.delete")
SERVE(list_history, "history.list")
SERVE(list_filters, "settings.filters.list")
SERVE(get_filter, "settings.filters.get")
SERVE(create_filter, "settings.filters.create")
SERVE(delete_filter, "settings.filters.delete")
SERVE(list_send_as, "settings.sendAs.list")
SERVE(get_send_as, "settings.sendAs.get")
SERVE(list_forwarding_addresses, "settings.forwardingAddresses.list")
SERVE(get_forwarding_address, "settings.forwardingAddresses.get")

#define H(name)                     \
        {                           \
#name, serve_##name \
        }

static const TwinHandler gmail_handlers[] = {
        H(get_profile),
        H(list_messages),
        H(get_message),
        H(send_message),
        H(insert_message),
        H(import_message),
        H(modify_message),
        H(batch_modify_messages),
        H(batch_delete_messages),
        H(trash_message),
        H(untrash_message),
        H(delete_message),
        H(get_attachment),
        H(label_message),
        H(unlabel_message),
        H(apply_sensitive_message_label),
        H(search_threads),
        H(get_thread),
        H(modify_thread),
        H(trash_thread),
        H(untrash_thread),
        H(delete_thread),
        H(label_thread),
        H(unlabel_thread),
        H(apply_sensitive_thread_label),
        H(list_labels),
        H(get_label),
        H(create_label),
        H(update_label),
        H(patch_label),
        H(delete_label),
        H(list_drafts),
        H(get_draft),
        H(create_draft),
        H(update_draft),
        H(send_draft),
        H(delete_draft),
        H(list_history),
        H(list_filters),
        H(get_filter),
        H(create_filter),
        H(delete_filter),
        H(list_send_as),
        H(get_send_as),
        H(list_forwarding_addresses),
        H(get_forwarding_address),
};

const TwinKind twin_kind_gmail = {
        .name = "gmail",
        .implementation = "pome-gmail",
        /* googleapis resolves its paths against a rootUrl's origin (a global rootUrl's
         * path is dropped): /gmail/v1 is served on the root too, the token naming the
         * session */
        .flags = TWIN_KIND_KEYED_PREFIX_ONLY,
        .keyed_prefix = "/gmail/v1",
        .surface = &twin_surface_gmail,
        .handlers = gmail_handlers,
        .n_handlers = ELEMENTSOF(gmail_handlers),
        .vendor_hosts = (const char *const[]){"gmail.googleapis.com", NULL},
        .load_seed = gmail_load_seed,
        .seed_keys = seed_keys,
        .public_state = gmail_public_state,
        .auth_error = gmail_auth_error,
        .error = gmail_error,
        .control_error = gmail_control_error,
        .health_extras = gmail_health_extras,
        .judge_view = gmail_judge_view,
};
