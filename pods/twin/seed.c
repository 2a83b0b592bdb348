/* SPDX-License-Identifier: MIT */
/*
 * Seed validation shared by every kind's load_seed: member readers that name the offending
 * member in their message, so a refusal reads the same whichever kind wrote it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/json-util.h"
#include "pods/twin/kind.h"

int twin_seed_error(char *err, size_t errlen, const char *fmt, ...)
{
        if (err && errlen > 0) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

int twin_seed_known(TwinSeed *s, const json_t *o, const char *path, const char *what,
                    const char *const *keys, size_t n)
{
        const char *key;
        json_t *v;
        json_object_foreach ((json_t *)o, key, v) {
                bool known = false;
                for (size_t i = 0; i < n && !known; i++)
                        known = streq(key, keys[i]);
                if (known)
                        continue;
                char list[768] = "";
                size_t l = 0;
                for (size_t i = 0; i < n && l < sizeof(list); i++)
                        l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "",
                                              keys[i]);
                const char *a = strchr("aeio", what[0]) ? "an" : "a"; /* "a user" */
                if (!path[0])
                        return twin_seed_error(s->err, s->errlen,
                                               "unknown key \"%s\" (%s %s has %s)", key, a, what,
                                               list);
                return twin_seed_error(s->err, s->errlen, "%s.%s: unknown key (%s %s has %s)", path,
                                       key, a, what, list);
        }
        return 0;
}

int twin_seed_str(TwinSeed *s, const json_t *o, const char *key, const char *path, const char *def,
                  TwinSeedNull nulls, const char **ret)
{
        json_t *v = json_object_get(o, key);
        if (!v || (nulls != TWIN_NULL_REFUSED && json_is_null(v))) {
                *ret = v && nulls == TWIN_NULL_KEPT ? NULL : def;
                return 0;
        }
        if (!json_is_string(v))
                return twin_seed_error(s->err, s->errlen, "%s.%s: must be a string%s", path, key,
                                       nulls == TWIN_NULL_KEPT ? " or null" : "");
        *ret = json_string_value(v);
        return 0;
}

int twin_seed_bool(TwinSeed *s, const json_t *o, const char *key, const char *path, bool def,
                   bool *ret)
{
        json_t *v = json_object_get(o, key);
        if (!v) {
                *ret = def;
                return 0;
        }
        if (!json_is_boolean(v))
                return twin_seed_error(s->err, s->errlen, "%s.%s: must be true or false", path,
                                       key);
        *ret = json_is_true(v);
        return 0;
}

int twin_seed_array(TwinSeed *s, const json_t *o, const char *key, const char *path, json_t **ret)
{
        json_t *v = json_object_get(o, key);
        if (!v || json_is_null(v)) {
                *ret = NULL;
                return 0;
        }
        if (!json_is_array(v))
                return twin_seed_error(s->err, s->errlen, "%s%s%s: must be an array", path,
                                       path[0] ? "." : "", key);
        *ret = v;
        return 0;
}

int twin_seed_failure_injection(TwinSeed *s, const json_t *seed, json_t *rules, bool slash_path,
                                const char *path_example)
{
        json_t *a, *v;
        size_t i;
        int r = twin_seed_array(s, seed, "failure_injection", "", &a);
        if (r < 0)
                return r;
        json_array_foreach (a, i, v) {
                char p[64];
                const char *method, *path, *mode;
                snprintf(p, sizeof(p), "failure_injection[%zu]", i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "failure injection", "method", "path", "attempt",
                                         "mode", "status", "body")) < 0 ||
                    (r = twin_seed_str(s, v, "method", p, "POST", TWIN_NULL_ABSENT, &method)) < 0 ||
                    (r = twin_seed_str(s, v, "path", p, NULL, TWIN_NULL_REFUSED, &path)) < 0 ||
                    (r = twin_seed_str(s, v, "mode", p, "after_handler", TWIN_NULL_ABSENT, &mode)) <
                            0)
                        return r;
                if (!streq(mode, "before_handler") && !streq(mode, "after_handler"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.mode: must be \"before_handler\" (fail, change "
                                               "nothing) or \"after_handler\" (the default: do it, "
                                               "then fail the reply)",
                                               p);
                if (!path || !*path || (slash_path && path[0] != '/'))
                        return twin_seed_error(s->err, s->errlen, "%s.path: needs a path%s (%s)", p,
                                               slash_path ? " starting with '/'" : "",
                                               path_example);
                json_t *at = json_object_get(v, "attempt"), *st = json_object_get(v, "status");
                json_t *body = json_object_get(v, "body");
                if (at && (!json_is_integer(at) || json_integer_value(at) < 1))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.attempt: must be a positive integer", p);
                if (st && (!json_is_integer(st) || json_integer_value(st) < 100 ||
                           json_integer_value(st) > 599))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.status: must be an HTTP status (100-599)", p);
                if (body && !json_is_object(body) && !json_is_null(body))
                        return twin_seed_error(s->err, s->errlen, "%s.body: must be an object", p);
                json_t *rule =
                        json_pack("{s:s, s:s, s:I, s:s, s:I}", "method", method, "path", path,
                                  "attempt", at ? json_integer_value(at) : (json_int_t)1, "mode",
                                  mode, "status", st ? json_integer_value(st) : (json_int_t)500);
                if (!rule || (json_is_object(body) && json_object_set(rule, "body", body) < 0) ||
                    json_array_append_new(rules, rule) < 0) {
                        json_decref(rule);
                        return -ENOMEM;
                }
        }
        return 0;
}
