/* SPDX-License-Identifier: MIT */
#include "pods/front/front.h"

#include <ctype.h>
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "common/text.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "pods/twin/kind.h"

/* A copy of the n bytes at p, NUL-terminated, into *ret (and n into *ret_len). */
static int copy_bytes(const char *p, size_t n, char **ret, size_t *ret_len)
{
        char *c = malloc(n + 1);
        if (!c)
                return -ENOMEM;
        memcpy(c, p, n);
        c[n] = 0;
        *ret = c;
        *ret_len = n;
        return 0;
}

int front_form_get(const char *s, size_t n, const char *name, char **ret, size_t *ret_len)
{
        size_t nl = strlen(name);
        const char *end = s + n;
        while (s < end) {
                const char *amp = memchr(s, '&', (size_t)(end - s));
                const char *e = amp ? amp : end;
                if ((size_t)(e - s) >= nl && memcmp(s, name, nl) == 0 &&
                    (s + nl == e || s[nl] == '=')) {
                        size_t l = 0;
                        char *v = NULL;
                        /* a bare "name" is an empty value */
                        if (s + nl == e)
                                v = strdup("");
                        else if (percent_decode(s + nl + 1, (size_t)(e - s) - nl - 1, true, false,
                                                &v, &l) < 0)
                                v = NULL;
                        if (!v)
                                return -ENOMEM;
                        *ret = v;
                        *ret_len = l;
                        return 0;
                }
                s = e + 1;
        }
        return -ENOENT;
}

char *front_form_value(const char *s, size_t n, const char *name)
{
        _cleanup_free_ char *v = NULL;
        size_t l;
        if (front_form_get(s, n, name, &v, &l) < 0)
                return NULL;
        /* A C string cannot hold what follows a NUL: refuse rather than truncate, so
         * "x=<secret>%00junk" never compares equal to <secret>. */
        if (memchr(v, 0, l))
                return NULL;
        return TAKE_PTR(v);
}

int front_credential(const TwinKind *k, json_t *headers, const char *query, const char *body,
                     size_t body_len, char **ret, size_t *ret_len)
{
        /* Lengths all the way: a header value may hold a NUL (the HTTP layer refuses them,
         * but this module does not rely on it) and so may a decoded parameter. */
        json_t *av = json_object_get(headers, "authorization");
        if (json_is_string(av)) {
                const char *a = json_string_value(av);
                size_t n = json_string_length(av);
                while (n > 0 && *a == ' ') {
                        a++;
                        n--;
                }
                const char *sp = memchr(a, ' ', n);
                if (sp) {
                        size_t sl = (size_t)(sp - a);
                        const char *cred = sp;
                        size_t cl = n - sl;
                        while (cl > 0 && *cred == ' ') {
                                cred++;
                                cl--;
                        }
                        if (cl == 0)
                                return -ENOENT;
                        if ((sl == 6 && strncasecmp(a, "bearer", 6) == 0) ||
                            (sl == 5 && strncasecmp(a, "token", 5) == 0))
                                return copy_bytes(cred, cl, ret, ret_len);
                        if (sl == 5 && strncasecmp(a, "basic", 5) == 0) {
                                /* RFC 7617: base64(user ":" password); the key is the user. */
                                _cleanup_free_ char *dec = NULL;
                                size_t dl;
                                if (token_base64_decode(cred, cl, &dec, &dl) < 0)
                                        return -ENOENT;
                                const char *colon = memchr(dec, ':', dl);
                                size_t ul = colon ? (size_t)(colon - dec) : dl;
                                if (ul == 0)
                                        return -ENOENT;
                                return copy_bytes(dec, ul, ret, ret_len);
                        }
                        /* an unknown scheme is a presented but unusable credential */
                        return copy_bytes(a, n, ret, ret_len);
                }
                /* A bare value: Stripe accepts the raw key; elsewhere it is still a
                 * credential the caller meant, just a bad one. */
                if (n > 0)
                        return copy_bytes(a, n, ret, ret_len);
        }
        if (k && (k->flags & TWIN_KIND_TOKEN_PARAM)) {
                _cleanup_free_ char *t = NULL;
                size_t tl = 0;
                int r = query ? front_form_get(query, strlen(query), "token", &t, &tl) : -ENOENT;
                const char *ct = json_get_str(headers, "content-type");
                if (r == -ENOENT && body && ct &&
                    strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0)
                        r = front_form_get(body, body_len, "token", &t, &tl);
                if (r == -ENOMEM)
                        return r;
                if (r == 0 && tl > 0) {
                        *ret = TAKE_PTR(t);
                        *ret_len = tl;
                        return 0;
                }
        }
        return -ENOENT;
}

FrontAuth front_authenticate(const TwinKind *k, const uint8_t *key, size_t key_len, const char *sid,
                             json_t *headers, const char *query, const char *body, size_t body_len,
                             int64_t now, TokenClaims *ret_claims)
{
        _cleanup_free_ char *cred = NULL;
        size_t cred_len;
        int r = front_credential(k, headers, query, body, body_len, &cred, &cred_len);
        if (r == -ENOENT)
                return FRONT_AUTH_MISSING;
        if (r < 0)
                return FRONT_AUTH_INVALID;
        TokenClaims c;
        r = token_verify(key, key_len, cred, cred_len, now, &c);
        if (r == -ETIME) {
                /* Expired, but only say so to the holder of a good token for this sandbox. */
                TokenClaims c2;
                if (token_verify(key, key_len, cred, cred_len, INT64_MIN, &c2) == 0 &&
                    streq(c2.sid, sid))
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

/* RFC 5234 VCHAR: what a request target may carry unescaped (RFC 9112 §3.2, RFC 3986). */
static bool is_vchar(char c)
{
        return c > 0x20 && c < 0x7f;
}

int front_query_value(const char *query, const char *name, char **ret)
{
        char *v = NULL;
        size_t l = 0;
        int r = front_form_get(strempty(query), strlen(strempty(query)), name, &v, &l);
        if (r < 0)
                return r;
        if (memchr(v, 0, l)) {
                free(v);
                return -EBADMSG;
        }
        *ret = v;
        return 0;
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
                /* Raw bytes outside VCHAR (controls, space, DEL, 8-bit) are not a URI. */
                if (!is_vchar(raw[i]))
                        return -EINVAL;
                if (raw[i] == '%') {
                        if (i + 2 >= n)
                                return -EINVAL;
                        int hi = unhex(raw[i + 1]), lo = unhex(raw[i + 2]);
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
        /* The decoded path travels as a JSON string (the frame head to the pod, the twin's
         * routing): it must be text (RFC 3986 §2.5 reads escapes as UTF-8). */
        if (!utf8_valid(out, (size_t)(o - out)))
                return -EINVAL;
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

int front_check_query(const char *raw_query)
{
        if (!raw_query)
                return 0;
        for (const char *p = raw_query; *p; p++)
                if (!is_vchar(*p))
                        return -EINVAL;
        return 0;
}

/* ---- redaction ---- */

static const char *const secret_keys[] = {
        "authorization", "cookie", "x-api-key",    "api_key",       "client_secret", "password",
        "secret",        "token",  "access_token", "refresh_token", "agent_token",
};

static bool is_secret_key(const char *k)
{
        /* Every secret key starts with one of these: most keys are out after one test. */
        if (!*k || !strchr("acprstxACPRSTX", *k))
                return false;
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
static bool base62_char(char c)
{
        return isalnum((unsigned char)c);
}

/* The first characters secret_at() can match: 'e' JWT, 'g' GitHub, 'p' pome_ team keys,
 * 'r'/'s' Stripe, 'x' Slack, '-' PEM. */
static bool secret_first_char(char c)
{
        switch (c) {
        case '-':
        case 'e':
        case 'g':
        case 'p':
        case 'r':
        case 's':
        case 'x':
                return true;
        default:
                return false;
        }
}

/* The word of base64url characters starting at p, which follows a prefix of s: its end
 * minus s, or 0 when the prefix did not match (p NULL) or nothing follows it. */
static size_t word_after(const char *s, const char *p, const char *end)
{
        if (!p || p >= end || !b64url_char(*p))
                return 0;
        while (p < end && b64url_char(*p))
                p++;
        return (size_t)(p - s);
}

/* s[0..end) starts with prefix: the position after it, else NULL. */
static const char *prefixed(const char *s, const char *end, const char *prefix)
{
        size_t l = strlen(prefix);
        return (size_t)(end - s) >= l && memcmp(s, prefix, l) == 0 ? s + l : NULL;
}

/*
 * Length of a secret starting at s (0 if none), looking no further than end. s must be at a
 * word boundary. This runs at every word boundary of every string of every tape row, so it is
 * one dispatch on the first character, then at most two prefix compares.
 */
static size_t secret_at(const char *s, const char *end)
{
        const char *p;
        switch (*s) {
        case 's': /* Stripe secret keys */
        case 'r': /* Stripe restricted keys */
                if (end - s < 8 || s[1] != 'k' || s[2] != '_')
                        return 0;
                p = prefixed(s + 3, end, "test_") ?: prefixed(s + 3, end, "live_");
                return word_after(s, p, end);
        case 'g': /* GitHub: ghp_, gho_, ghs_, ghu_, ghr_, github_pat_ */
                if (end - s >= 4 && s[1] == 'h' && s[2] && strchr("posur", s[2]) && s[3] == '_')
                        return word_after(s, s + 4, end);
                return word_after(s, prefixed(s, end, "github_pat_"), end);
        case 'x': /* Slack: xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-... (xox?-) */
                if (end - s >= 6 && s[1] == 'o' && s[2] == 'x' && isalpha((unsigned char)s[3]) &&
                    s[4] == '-')
                        return word_after(s, s + 5, end);
                return 0;
        case 'p': { /* team API keys: pome_ + at least 20 base62 (statedir makes 32) */
                p = prefixed(s, end, "pome_");
                if (!p)
                        return 0;
                const char *q = p;
                while (q < end && base62_char(*q))
                        q++;
                return q - p >= 20 ? word_after(s, p, end) : 0;
        }
        case 'e': { /* JWT: three base64url parts, the first starting with eyJ ('{"'). */
                if (!prefixed(s, end, "eyJ"))
                        return 0;
                p = s;
                int dots = 0;
                for (;;) {
                        while (p < end && b64url_char(*p))
                                p++;
                        if (p + 1 < end && *p == '.' && dots < 2 && b64url_char(p[1])) {
                                dots++;
                                p++;
                                continue;
                        }
                        break;
                }
                return dots == 2 ? (size_t)(p - s) : 0;
        }
        case '-': { /* PEM block: -----BEGIN …----- to the end of the matching -----END …----- */
                if (!prefixed(s, end, "-----BEGIN "))
                        return 0;
                const char *e = memmem(s, (size_t)(end - s), "-----END ", 9);
                if (e) {
                        const char *f = memmem(e + 9, (size_t)(end - e - 9), "-----", 5);
                        if (f)
                                return (size_t)(f + 5 - s);
                }
                return (size_t)(end - s); /* unterminated: everything after it is key material */
        }
        default:
                return 0;
        }
}

/* True when position i of s starts a word: the string's start, after a non-word character, or
 * right after a percent-escape (a URL's "%20ghp_…" or "%3Dpome_…" still holds the token). */
static bool word_start(const char *s, size_t i)
{
        if (i == 0 || !word_char(s[i - 1]))
                return true;
        return i >= 3 && s[i - 3] == '%' && unhex(s[i - 2]) >= 0 && unhex(s[i - 1]) >= 0;
}

/* Offset of the first secret in s[0..n) at or after from, its length in *ret_len; n if none. */
static size_t find_secret(const char *s, size_t n, size_t from, size_t *ret_len)
{
        for (size_t i = from; i < n; i++) {
                if (!secret_first_char(s[i]) || !word_start(s, i))
                        continue;
                size_t l = secret_at(s + i, s + n);
                if (l > 0) {
                        *ret_len = l;
                        return i;
                }
        }
        return n;
}

/*
 * s[0..n) with every secret replaced by "[REDACTED]". Returns 0 when s holds no secret (nothing
 * allocated, *ret untouched), 1 with a new string of *ret_len bytes in *ret, or -ENOMEM.
 */
static int scrub_n(const char *s, size_t n, char **ret, size_t *ret_len)
{
        static const char mark[] = "[REDACTED]";
        size_t l, i = find_secret(s, n, 0, &l);
        if (i == n)
                return 0; /* the common case: no allocation */
        size_t cap = n + sizeof(mark) + 16, used = 0, last = 0;
        _cleanup_free_ char *out = malloc(cap);
        if (!out)
                return -ENOMEM;
        while (i < n) {
                /* "[REDACTED]" may be longer than what it replaces: grow as needed. */
                size_t need = used + (i - last) + sizeof(mark) + (n - i - l) + 1;
                if (need > cap) {
                        cap = need + n / 4 + 16;
                        char *b = realloc(out, cap);
                        if (!b)
                                return -ENOMEM;
                        out = b;
                }
                memcpy(out + used, s + last, i - last);
                used += i - last;
                memcpy(out + used, mark, sizeof(mark) - 1);
                used += sizeof(mark) - 1;
                last = i + l;
                i = find_secret(s, n, last, &l);
        }
        memcpy(out + used, s + last, n - last);
        used += n - last;
        out[used] = 0;
        *ret = TAKE_PTR(out);
        *ret_len = used;
        return 1;
}

char *front_scrub(const char *s)
{
        char *c;
        size_t l;
        int r = scrub_n(s, strlen(s), &c, &l);
        if (r < 0)
                return NULL;
        return r > 0 ? c : strdup(s);
}

bool front_is_secret(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && secret_first_char(*s) && secret_at(s, s + n) == n;
}

/* A string with its secrets scrubbed (a new reference), or NULL when it holds none (or on
 * OOM: the caller then keeps the original — redaction of a row being built is best effort,
 * and front_tape_row's own allocations fail first). */
static json_t *scrubbed_string(json_t *v)
{
        _cleanup_free_ char *c = NULL;
        size_t l;
        if (scrub_n(json_string_value(v), json_string_length(v), &c, &l) <= 0)
                return NULL;
        /* Only ASCII was cut out and put in: the bytes stay as valid (or not) as they were. */
        return json_stringn_nocheck(c, l);
}

void front_redact(json_t *j)
{
        const char *k;
        json_t *v;
        size_t i;
        if (json_is_array(j)) {
                json_array_foreach (j, i, v) {
                        json_t *c = json_is_string(v) ? scrubbed_string(v) : NULL;
                        if (c)
                                json_array_set_new(j, i, c);
                        else
                                front_redact(v);
                }
                return;
        }
        if (!json_is_object(j))
                return;
        /* Keys can carry a secret too ("pome_…=1" in a form): renamed after the walk,
         * since an object must not grow while it is iterated. */
        _cleanup_json_ json_t *renamed = NULL;
        void *tmp;
        json_object_foreach_safe (j, tmp, k, v) {
                if (is_secret_key(k) && !json_is_null(v)) {
                        json_object_set_new(j, k, json_string("[REDACTED]"));
                        continue;
                }
                json_t *c = json_is_string(v) ? scrubbed_string(v) : NULL;
                if (c)
                        json_object_set_new(j, k, c);
                else
                        front_redact(v);
                _cleanup_free_ char *ck = NULL;
                size_t kl;
                if (scrub_n(k, strlen(k), &ck, &kl) > 0 && (renamed || (renamed = json_object()))) {
                        json_object_set(renamed, ck, json_object_get(j, k));
                        json_object_del(j, k);
                }
        }
        if (renamed)
                json_object_update(j, renamed);
}

json_t *front_tape_row(const FrontCall *fc, const TwinReply *rp)
{
        char ts[40];
        format_rfc3339_usec(fc->ts_usec, ts, sizeof(ts));
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
