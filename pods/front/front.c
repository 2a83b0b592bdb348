/* SPDX-License-Identifier: MIT */
#include "front.h"

#include <ctype.h>
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "common/util.h"
#include "kind.h"

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        c = (char)(c | 0x20);
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Decodes one x-www-form-urlencoded component ('+' is a space) into a new string. */
static char *form_decode(const char *s, size_t n)
{
        char *out = malloc(n + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '+')
                        *o++ = ' ';
                else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
                         hexval(s[i + 2]) >= 0) {
                        *o++ = (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
                        i += 2;
                } else
                        *o++ = s[i];
        }
        *o = 0;
        return out;
}

char *front_form_value(const char *s, size_t n, const char *name)
{
        size_t nl = strlen(name);
        const char *end = s + n;
        while (s < end) {
                const char *amp = memchr(s, '&', (size_t)(end - s));
                const char *e = amp ? amp : end;
                if ((size_t)(e - s) >= nl && strncmp(s, name, nl) == 0) {
                        if (s + nl == e) /* a bare "name" is an empty value */
                                return strdup("");
                        if (s[nl] == '=')
                                return form_decode(s + nl + 1, (size_t)(e - s) - nl - 1);
                }
                s = e + 1;
        }
        return NULL;
}

int front_credential(const TwinKind *k, json_t *headers, const char *query, const char *body,
                     size_t body_len, char **ret)
{
        const char *auth = json_get_str(headers, "authorization");
        if (auth) {
                while (*auth == ' ')
                        auth++;
                const char *sp = strchr(auth, ' ');
                if (sp) {
                        size_t sl = (size_t)(sp - auth);
                        const char *cred = sp;
                        while (*cred == ' ')
                                cred++;
                        if (*cred == 0)
                                return -ENOENT;
                        if ((sl == 6 && strncasecmp(auth, "bearer", 6) == 0) ||
                            (sl == 5 && strncasecmp(auth, "token", 5) == 0)) {
                                *ret = strdup(cred);
                                return *ret ? 0 : -ENOMEM;
                        }
                        if (sl == 5 && strncasecmp(auth, "basic", 5) == 0) {
                                _cleanup_free_ char *dec = NULL;
                                size_t dl;
                                if (token_base64_decode(cred, strlen(cred), &dec, &dl) < 0)
                                        return -ENOENT;
                                char *colon = strchr(dec, ':');
                                if (colon)
                                        *colon = 0;
                                if (!*dec)
                                        return -ENOENT;
                                *ret = strdup(dec);
                                return *ret ? 0 : -ENOMEM;
                        }
                        /* an unknown scheme is a presented but unusable credential */
                        *ret = strdup(auth);
                        return *ret ? 0 : -ENOMEM;
                }
                if (*auth) {
                        /* A bare value: Stripe accepts the raw key; elsewhere it is
                         * still a credential the caller meant, just a bad one. */
                        *ret = strdup(auth);
                        return *ret ? 0 : -ENOMEM;
                }
        }
        if (k && (k->flags & TWIN_KIND_TOKEN_PARAM)) {
                char *t = query ? front_form_value(query, strlen(query), "token") : NULL;
                const char *ct = json_get_str(headers, "content-type");
                if (!t && body && ct &&
                    strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0)
                        t = front_form_value(body, body_len, "token");
                if (t && *t) {
                        *ret = t;
                        return 0;
                }
                free(t);
        }
        return -ENOENT;
}

FrontAuth front_authenticate(const TwinKind *k, const uint8_t *key, size_t key_len, const char *sid,
                             json_t *headers, const char *query, const char *body, size_t body_len,
                             int64_t now, TokenClaims *ret_claims)
{
        _cleanup_free_ char *cred = NULL;
        int r = front_credential(k, headers, query, body, body_len, &cred);
        if (r == -ENOENT)
                return FRONT_AUTH_MISSING;
        if (r < 0)
                return FRONT_AUTH_INVALID;
        TokenClaims c;
        r = token_verify(key, key_len, cred, now, &c);
        if (r == -ETIME) {
                /* Expired, but only say so to the holder of a good token for this sandbox. */
                TokenClaims c2;
                if (token_verify(key, key_len, cred, INT64_MIN, &c2) == 0 && streq(c2.sid, sid))
                        return FRONT_AUTH_EXPIRED;
                return FRONT_AUTH_INVALID;
        }
        if (r < 0 || !streq(c.sid, sid))
                return FRONT_AUTH_INVALID;
        if (c.provider[0] && (!k || !streq(c.provider, k->name)))
                return FRONT_AUTH_INVALID;
        if (ret_claims)
                *ret_claims = c;
        return FRONT_AUTH_OK;
}

int front_decode_path(const char *raw, char **ret)
{
        if (!raw || raw[0] != '/')
                return -EINVAL;
        size_t n = strlen(raw);
        _cleanup_free_ char *out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        char *o = out;
        for (size_t i = 0; i < n; i++) {
                if (raw[i] == '%') {
                        if (i + 2 >= n)
                                return -EINVAL;
                        int hi = hexval(raw[i + 1]), lo = hexval(raw[i + 2]);
                        if (hi < 0 || lo < 0)
                                return -EINVAL;
                        char c = (char)(hi << 4 | lo);
                        if (c == 0)
                                return -EINVAL;
                        *o++ = c;
                        i += 2;
                } else
                        *o++ = raw[i];
        }
        *o = 0;
        /* Refuse dot segments anywhere (RFC 3986 §3.3): no twin route has them, and
         * a path that walks upwards is never what an honest client meant. */
        for (const char *s = out; *s;) {
                if (*s == '/') {
                        s++;
                        continue;
                }
                const char *e = strchrnul(s, '/');
                size_t l = (size_t)(e - s);
                if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.'))
                        return -EINVAL;
                s = e;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/* ---- redaction ---- */

static const char *const secret_keys[] = {
        "authorization", "cookie", "x-api-key",    "api_key",       "client_secret", "password",
        "secret",        "token",  "access_token", "refresh_token", "agent_token",
};

static bool is_secret_key(const char *k)
{
        for (size_t i = 0; i < ELEMENTSOF(secret_keys); i++)
                if (strcasecmp(k, secret_keys[i]) == 0)
                        return true;
        return false;
}

static bool word_char(char c)
{
        return isalnum((unsigned char)c) || c == '_';
}
static bool b64url_char(char c)
{
        return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* Length of a secret starting at s (0 if none). s must be at a word boundary. */
static size_t secret_at(const char *s)
{
        static const char *const word_prefixes[] = {
                "sk_test_", "sk_live_", "rk_test_", "rk_live_", "ghp_",
                "gho_",     "ghs_",     "ghu_",     "ghr_",     "github_pat_"};
        for (size_t i = 0; i < ELEMENTSOF(word_prefixes); i++) {
                const char *p = startswith(s, word_prefixes[i]);
                if (p && b64url_char(*p)) {
                        while (b64url_char(*p))
                                p++;
                        return (size_t)(p - s);
                }
        }
        /* Slack: xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-... (xox?-) */
        if (strncmp(s, "xox", 3) == 0 && isalpha((unsigned char)s[3]) && s[4] == '-' &&
            b64url_char(s[5])) {
                const char *p = s + 5;
                while (b64url_char(*p))
                        p++;
                return (size_t)(p - s);
        }
        /* JWT: three base64url parts, the first starting with eyJ ('{"'). */
        if (strncmp(s, "eyJ", 3) == 0) {
                const char *p = s;
                int dots = 0;
                for (;;) {
                        while (b64url_char(*p))
                                p++;
                        if (*p == '.' && dots < 2 && b64url_char(p[1])) {
                                dots++;
                                p++;
                                continue;
                        }
                        break;
                }
                if (dots == 2)
                        return (size_t)(p - s);
        }
        /* PEM block: -----BEGIN …----- to the end of the matching -----END …----- */
        if (strncmp(s, "-----BEGIN ", 11) == 0) {
                const char *e = strstr(s, "-----END ");
                if (e) {
                        const char *f = strstr(e + 9, "-----");
                        if (f)
                                return (size_t)(f + 5 - s);
                }
                return strlen(s); /* unterminated: everything after it is key material */
        }
        return 0;
}

char *front_scrub(const char *s)
{
        static const char mark[] = "[REDACTED]";
        size_t n = strlen(s), cap = n + 1;
        char *out = malloc(cap), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n;) {
                size_t l = (i == 0 || !word_char(s[i - 1])) ? secret_at(s + i) : 0;
                if (l == 0) {
                        *o++ = s[i++];
                        continue;
                }
                /* "[REDACTED]" may be longer than what it replaces: grow as needed. */
                size_t used = (size_t)(o - out);
                if (used + sizeof(mark) + (n - i) > cap) {
                        cap = used + sizeof(mark) + (n - i) + 16;
                        char *b = realloc(out, cap);
                        if (!b) {
                                free(out);
                                return NULL;
                        }
                        out = b;
                        o = out + used;
                }
                memcpy(o, mark, sizeof(mark) - 1);
                o += sizeof(mark) - 1;
                i += l;
        }
        *o = 0;
        return out;
}

bool front_is_secret(const char *s)
{
        return *s && secret_at(s) == strlen(s);
}

void front_redact(json_t *j)
{
        const char *k;
        json_t *v;
        size_t i;
        if (json_is_object(j)) {
                json_object_foreach (j, k, v) {
                        if (is_secret_key(k) && !json_is_null(v))
                                json_object_set_new(j, k, json_string("[REDACTED]"));
                        else
                                front_redact(v);
                }
        } else if (json_is_array(j)) {
                json_array_foreach (j, i, v) {
                        if (json_is_string(v)) {
                                char *c = front_scrub(json_string_value(v));
                                if (c && !streq(c, json_string_value(v)))
                                        json_array_set_new(j, i, json_string(c));
                                free(c);
                        } else
                                front_redact(v);
                }
        }
        /* Strings directly under objects are handled here, not in the recursion, so
         * the object can be updated in place. */
        if (json_is_object(j)) {
                json_object_foreach (j, k, v) {
                        if (!json_is_string(v))
                                continue;
                        char *c = front_scrub(json_string_value(v));
                        if (c && !streq(c, json_string_value(v)))
                                json_object_set_new(j, k, json_string(c));
                        free(c);
                }
        }
}

static void format_ts(int64_t usec, char *buf, size_t len)
{
        time_t t = (time_t)(usec / 1000000);
        struct tm tm;
        gmtime_r(&t, &tm);
        char base[32];
        strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, len, "%s.%03dZ", base, (int)(usec % 1000000 / 1000));
}

json_t *front_tape_row(const FrontCall *fc, const TwinReply *rp)
{
        char ts[40];
        format_ts(fc->ts_usec, ts, sizeof(ts));
        _cleanup_free_ char *full = NULL;
        if (fc->query && *fc->query) {
                if (asprintf(&full, "%s?%s", fc->path, fc->query) < 0)
                        return NULL;
        }
        json_t *request_body = rp->request_body ? json_deep_copy(rp->request_body) : NULL;
        if (!request_body && fc->body_len > 0)
                request_body = json_loadb(fc->body, fc->body_len, JSON_DECODE_ANY, NULL);
        const char *corr = json_get_str(fc->headers, "x-pome-correlation-id");
        const char *step = json_get_str(fc->headers, "x-pome-scenario-step-id");
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:O, s:o, s:i, s:O, s:f, s:o, s:b, s:O, s:s, "
                "s:o, s:s, s:o}",
                "kind", "TwinHttpEvent", "event_id", fc->request_id, "ts", ts, "run_id", fc->run_id,
                "twin", fc->twin, "method", fc->method, "path",
                /* the caller's bytes: invalid UTF-8 mended, never a row lost */
                twin_json_string_lossy(full ? full : fc->path, strlen(full ? full : fc->path)),
                "request_headers", fc->headers ? fc->headers : json_object(), "request_body",
                request_body ? request_body : json_null(), "status", rp->status, "response_body",
                rp->body ? rp->body : json_null(), "latency_ms", fc->latency_ms, "tool",
                json_string_or_null(rp->tool), "state_mutation", rp->state_mutation, "state_delta",
                rp->state_delta ? rp->state_delta : json_null(), "fidelity",
                rp->fidelity ? rp->fidelity : "semantic", "error",
                rp->status >= 400 ? json_string(rp->error ? rp->error : "error") : json_null(),
                "correlation_id", corr ? corr : fc->request_id, "task_step_id",
                json_string_or_null(step));
        if (!row)
                return NULL;
        if (streq(fc->twin, "stripe") &&
            json_object_set_new(row, "idempotency_dedupe", json_boolean(rp->idempotency_dedupe)) <
                    0)
                return NULL;
        /* The row shares the request's headers and the reply's bodies: redact a copy. */
        json_t *copy = json_deep_copy(row);
        if (copy)
                front_redact(copy);
        return copy;
}

int front_request_id(char buf[static 25])
{
        _cleanup_free_ char *id = NULL;
        int r = token_random_id("req_", 20, &id);
        if (r < 0)
                return r;
        memcpy(buf, id, 25);
        return 0;
}
