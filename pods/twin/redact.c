/* SPDX-License-Identifier: MIT */
/*
 * The one secret scanner of /_pome/state and tape rows. It runs over every string of every
 * tape row, so it is built to say "no" fast: a position is looked at only when its byte can
 * start a secret (a 256-entry table: 7 of 256 bytes can) and starts a word; then one
 * dispatch on that byte and at most two prefix compares. Nothing is allocated unless
 * something is replaced.
 */
#include "pods/twin/redact.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/text.h"
#include "common/util.h"

enum {
        C_WORD = 1u << 0, /* [A-Za-z0-9_]: a token's neighbours decide where words start */
        C_B64 = 1u << 1,  /* [A-Za-z0-9_-]: base64url, what a token's tail is made of */
        C_B62 = 1u << 2,  /* [A-Za-z0-9]: the team API keys' alphabet */
};

#define ALNUM (C_WORD | C_B64 | C_B62)
static const uint8_t char_class[256] = {
        ['0' ... '9'] = ALNUM,  ['A' ... 'Z'] = ALNUM, ['a' ... 'z'] = ALNUM,
        ['_'] = C_WORD | C_B64, ['-'] = C_B64,
};

/* The bytes a secret can start with: '-' PEM, 'e' JWT, 'g' GitHub, 'p' pome_ team keys,
 * 'r'/'s' Stripe and sk-, 'x' Slack, 'y' Google (ya29.), 'l' Linear. */
static const bool first_byte[256] = {
        ['-'] = true, ['e'] = true, ['g'] = true, ['l'] = true, ['p'] = true,
        ['r'] = true, ['s'] = true, ['x'] = true, ['y'] = true,
};

static bool is(char c, unsigned cls)
{
        return char_class[(uint8_t)c] & cls;
}

#define KEY(s)                   \
        {                        \
                s, sizeof(s) - 1 \
        }
static const struct {
        const char *name;
        size_t len;
} secret_keys[] = {
        KEY("authorization"), KEY("cookie"),        KEY("x-api-key"),   KEY("api_key"),
        KEY("client_secret"), KEY("password"),      KEY("secret"),      KEY("token"),
        KEY("access_token"),  KEY("refresh_token"), KEY("agent_token"),
};
#undef KEY

bool twin_redact_key(const char *k)
{
        /* Every secret key starts with one of these: most keys are out after one test, and
         * most of the rest after a length compare (a tree walk asks for every key). */
        if (!*k || !strchr("acprstxACPRSTX", *k))
                return false;
        size_t n = strnlen(k, sizeof("refresh_token"));
        for (size_t i = 0; i < ELEMENTSOF(secret_keys); i++)
                if (secret_keys[i].len == n && strcasecmp(k, secret_keys[i].name) == 0)
                        return true;
        return false;
}

/* The base64url word starting at p (which follows a prefix of s), at least min characters
 * long: its end minus s, or 0 when the prefix did not match (p NULL) or the word is
 * shorter. */
static size_t word_after(const char *s, const char *p, const char *end, size_t min)
{
        if (!p)
                return 0;
        const char *q = p;
        while (q < end && is(*q, C_B64))
                q++;
        return q > p && (size_t)(q - p) >= min ? (size_t)(q - s) : 0;
}

/* s[0..end) starts with prefix: the position after it, else NULL. */
static const char *prefixed(const char *s, const char *end, const char *prefix)
{
        size_t l = strlen(prefix);
        return (size_t)(end - s) >= l && memcmp(s, prefix, l) == 0 ? s + l : NULL;
}

/* sk_test_…, sk_live_…, rk_test_…, rk_live_… at s: its length, or 0. */
static size_t stripe_key(const char *s, const char *end)
{
        if (end - s < 8 || s[1] != 'k' || s[2] != '_')
                return 0;
        const char *p = prefixed(s + 3, end, "test_") ?: prefixed(s + 3, end, "live_");
        return word_after(s, p, end, 1);
}

/* Length of the secret starting at s (0 if none), looking no further than end; s is at a
 * word start and its byte is in first_byte. */
static size_t secret_at(const char *s, const char *end)
{
        const char *p;
        switch (*s) {
        case 's': /* sk-… (OpenAI style), then Stripe secret keys as 'r' */
                if ((p = prefixed(s, end, "sk-")))
                        return word_after(s, p, end, 8); /* "sk-" + a short word is prose */
                return stripe_key(s, end);
        case 'r': /* Stripe restricted keys */
                return stripe_key(s, end);
        case 'y': /* Google OAuth 2.0 access tokens: ya29.… */
                return word_after(s, prefixed(s, end, "ya29."), end, 8);
        case 'l': /* Linear API keys: lin_api_…, OAuth lin_oauth_… */
                return word_after(s, prefixed(s, end, "lin_api_") ?: prefixed(s, end, "lin_oauth_"),
                                  end, 8);
        case 'g': /* GitHub: ghp_, gho_, ghs_, ghu_, ghr_, github_pat_ */
                if (end - s >= 4 && s[1] == 'h' && s[2] && strchr("posur", s[2]) && s[3] == '_')
                        return word_after(s, s + 4, end, 1);
                return word_after(s, prefixed(s, end, "github_pat_"), end, 1);
        case 'x': /* Slack: xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-… (xox?-) */
                if (end - s >= 6 && s[1] == 'o' && s[2] == 'x' &&
                    ((s[3] >= 'a' && s[3] <= 'z') || (s[3] >= 'A' && s[3] <= 'Z')) && s[4] == '-')
                        return word_after(s, s + 5, end, 1);
                return 0;
        case 'p': { /* team API keys: pome_ + at least 20 base62 (statedir makes 32) */
                p = prefixed(s, end, "pome_");
                if (!p)
                        return 0;
                const char *q = p;
                while (q < end && is(*q, C_B62))
                        q++;
                return q - p >= 20 ? word_after(s, p, end, 1) : 0;
        }
        case 'e': /* JWT: handled by jwt_at, which needs the caller's memory */
                return 0;
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

/*
 * Length of the JWT at s (0 if none): three base64url parts, the first starting with eyJ
 * ('{"'). *first_end is set to where the first part ends: no JWT starts anywhere before it
 * either (from any later "eyJ" of that part the scan meets the same dots), so the caller
 * skips there — otherwise "eyJ-eyJ-eyJ-…" would cost the square of its length.
 */
static size_t jwt_at(const char *s, const char *end, const char **first_end)
{
        if (!prefixed(s, end, "eyJ"))
                return 0;
        const char *p = s;
        int dots = 0;
        for (;;) {
                while (p < end && is(*p, C_B64))
                        p++;
                if (dots == 0)
                        *first_end = p;
                if (p + 1 < end && *p == '.' && dots < 2 && is(p[1], C_B64)) {
                        dots++;
                        p++;
                        continue;
                }
                break;
        }
        return dots == 2 ? (size_t)(p - s) : 0;
}

/* Whether offset i of s starts a word: the string's start, after a non-word byte, or right
 * after a percent-escape (a URL's "%20ghp_…" or "%3Dpome_…" still holds the token). */
static bool word_start(const char *s, size_t i)
{
        if (i == 0 || !is(s[i - 1], C_WORD))
                return true;
        return i >= 3 && s[i - 3] == '%' && unhex(s[i - 2]) >= 0 && unhex(s[i - 1]) >= 0;
}

size_t twin_redact_find(const char *s, size_t n, size_t from, size_t *ret_len)
{
        const char *no_jwt_before = s;
        for (size_t i = from; i < n; i++) {
                if (!first_byte[(uint8_t)s[i]] || !word_start(s, i))
                        continue;
                size_t l;
                if (s[i] == 'e') {
                        if (s + i < no_jwt_before)
                                continue;
                        l = jwt_at(s + i, s + n, &no_jwt_before);
                } else
                        l = secret_at(s + i, s + n);
                if (l > 0) {
                        *ret_len = l;
                        return i;
                }
        }
        return n;
}

int twin_redact_string(const char *s, size_t n, char **ret, size_t *ret_len)
{
        static const char mark[] = TWIN_REDACTED;
        size_t l, i = twin_redact_find(s, n, 0, &l);
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
                i = twin_redact_find(s, n, last, &l);
        }
        memcpy(out + used, s + last, n - last);
        used += n - last;
        out[used] = 0;
        *ret = TAKE_PTR(out);
        *ret_len = used;
        return 1;
}

/* The string v scrubbed into *ret (a new reference), or NULL there when it holds no secret.
 * 0 or -ENOMEM. */
static int scrubbed_string(json_t *v, json_t **ret)
{
        _cleanup_free_ char *c = NULL;
        size_t l;
        int r = twin_redact_string(json_string_value(v), json_string_length(v), &c, &l);
        if (r <= 0) {
                *ret = NULL;
                return r;
        }
        /* Only ASCII was cut out and put in: the bytes stay as valid (or not) as they were. */
        *ret = json_stringn_nocheck(c, l);
        return *ret ? 0 : -ENOMEM;
}

/* Replaces the string v (at index i of array a, or under key k of object o) when it holds a
 * secret, else descends into v. 0 or -ENOMEM. */
static int redact_member(json_t *parent, size_t i, const char *k, json_t *v)
{
        if (!json_is_string(v))
                return twin_redact_json(v);
        json_t *c;
        int r = scrubbed_string(v, &c);
        if (r < 0 || !c)
                return r;
        r = k ? json_object_set_new(parent, k, c) : json_array_set_new(parent, i, c);
        return r < 0 ? -ENOMEM : 0;
}

int twin_redact_json(json_t *j)
{
        const char *k;
        json_t *v;
        size_t i;
        int r;
        if (json_is_array(j)) {
                json_array_foreach (j, i, v) {
                        r = redact_member(j, i, NULL, v);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (!json_is_object(j))
                return 0;
        /* Keys can carry a secret too ("pome_…=1" in a form): renamed after the walk, since
         * an object must not grow while it is iterated. */
        _cleanup_json_ json_t *renamed = NULL;
        void *tmp;
        json_object_foreach_safe (j, tmp, k, v) {
                if (twin_redact_key(k) && !json_is_null(v)) {
                        if (json_object_set_new(j, k, json_string(TWIN_REDACTED)) < 0)
                                return -ENOMEM;
                } else {
                        r = redact_member(j, 0, k, v);
                        if (r < 0)
                                return r;
                }
                _cleanup_free_ char *ck = NULL;
                size_t kl;
                r = twin_redact_string(k, strlen(k), &ck, &kl);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                if (!renamed && !(renamed = json_object()))
                        return -ENOMEM;
                if (json_object_set(renamed, ck, json_object_get(j, k)) < 0)
                        return -ENOMEM;
                json_object_del(j, k);
        }
        if (renamed && json_object_update(j, renamed) < 0)
                return -ENOMEM;
        return 0;
}

static bool string_needs(const char *s, size_t n)
{
        size_t l;
        return twin_redact_find(s, n, 0, &l) < n;
}

bool twin_redact_needed(const json_t *j)
{
        const char *k;
        json_t *v;
        size_t i;
        if (json_is_string(j))
                return string_needs(json_string_value(j), json_string_length(j));
        if (json_is_array(j)) {
                json_array_foreach ((json_t *)j, i, v)
                        if (twin_redact_needed(v))
                                return true;
                return false;
        }
        if (!json_is_object(j))
                return false;
        json_object_foreach ((json_t *)j, k, v) {
                if ((twin_redact_key(k) && !json_is_null(v)) || string_needs(k, strlen(k)) ||
                    twin_redact_needed(v))
                        return true;
        }
        return false;
}

int twin_redact_dumps(const json_t *j, char **ret, size_t *ret_len)
{
        if (!j) {
                *ret = NULL;
                *ret_len = 0;
                return 0;
        }
        _cleanup_json_ json_t *copy = NULL;
        if (twin_redact_needed(j)) {
                if (json_is_string(j)) {
                        _cleanup_free_ char *c = NULL;
                        size_t l;
                        int r = twin_redact_string(json_string_value(j), json_string_length(j), &c,
                                                   &l);
                        if (r < 0)
                                return r;
                        copy = json_stringn_nocheck(c, l);
                } else if ((copy = json_deep_copy(j)) && twin_redact_json(copy) < 0)
                        return -ENOMEM;
                if (!copy)
                        return -ENOMEM;
                j = copy;
        }
        JsonBuf b = {};
        jsonbuf_put_json(&b, j);
        if (b.oom || jsonbuf_reserve(&b, 1) < 0) {
                jsonbuf_done(&b);
                return -ENOMEM;
        }
        b.data[b.len] = 0;
        *ret = b.data;
        *ret_len = b.len;
        return 0;
}
