/* SPDX-License-Identifier: MIT */
/*
 * The HTTP front: strict target decoding (a table of paths and queries), form values that
 * keep their bytes, and credentials that are exactly their bytes wherever they come from
 * (header, Basic, ?token=, form field); redaction of every token pattern, team API keys
 * (pome_…) included, anywhere in a tape row.
 */
#include "common/json-util.h"
#include "common/token.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "tests/unit/check.h"

static const uint8_t key[TOKEN_SECRET_LEN] = "0123456789abcdef0123456789abcdef";
#define SID "ses_L2RwKae6MWKMg1v2"
#define NOW 1000

static void test_decode_path(void)
{
        static const struct {
                const char *raw;
                const char *want; /* NULL: -EINVAL */
        } cases[] = {
                /* accepted */
                {"/", "/"},
                {"/repos/acme/api/issues/1", "/repos/acme/api/issues/1"},
                {"/a%20b", "/a b"},
                {"/a%2Fb", "/a/b"},
                {"/caf%C3%A9", "/caf\xc3\xa9"},
                {"/caf%c3%a9", "/caf\xc3\xa9"},
                {"/%E2%82%AC", "/\xe2\x82\xac"},        /* U+20AC, 3 bytes */
                {"/%F0%9F%98%80", "/\xf0\x9f\x98\x80"}, /* U+1F600, 4 bytes */
                {"/%EF%BF%BF", "/\xef\xbf\xbf"},        /* U+FFFF: a noncharacter, still UTF-8 */
                {"/%F4%8F%BF%BF", "/\xf4\x8f\xbf\xbf"}, /* U+10FFFF, the last code point */
                {"/%ED%9F%BF", "/\xed\x9f\xbf"},        /* U+D7FF, just below the surrogates */
                {"/%C2%80", "/\xc2\x80"},               /* U+0080, the shortest 2-byte form */
                {"/%0A%7F", "/\n\x7f"}, /* decoded controls travel as JSON escapes */
                {"/a%25", "/a%"},
                {"/.a/..b/c./d..", "/.a/..b/c./d.."},
                {"/%2ea", "/.a"},
                {"/~user/a-b_c!$&'()*+,;=:@", "/~user/a-b_c!$&'()*+,;=:@"},
                {"//double", "//double"},
                /* not a path */
                {"", NULL},
                {"relative", NULL},
                {"%2F", NULL},
                /* raw bytes outside VCHAR */
                {"/\xff", NULL},
                {"/caf\xc3\xa9", NULL}, /* even well-formed UTF-8 must come escaped */
                {"/a b", NULL},
                {"/a\tb", NULL},
                {"/a\x01", NULL},
                {"/a\x7f", NULL},
                /* malformed escapes */
                {"/a%", NULL},
                {"/a%0", NULL},
                {"/a%zz", NULL},
                {"/a%g0", NULL},
                /* NUL */
                {"/%00", NULL},
                {"/a%00b", NULL},
                /* invalid UTF-8 */
                {"/%FF", NULL},
                {"/%FE", NULL},
                {"/%80", NULL},             /* a continuation byte alone */
                {"/%C0%AE", NULL},          /* overlong '.' */
                {"/%C0%80", NULL},          /* overlong NUL */
                {"/%C1%BF", NULL},          /* overlong 0x7F */
                {"/%E0%80%AF", NULL},       /* overlong '/' in 3 bytes */
                {"/%E0%9F%BF", NULL},       /* overlong U+07FF */
                {"/%F0%80%80%AF", NULL},    /* overlong '/' in 4 bytes */
                {"/%F0%8F%BF%BF", NULL},    /* overlong U+FFFF */
                {"/%ED%A0%80", NULL},       /* U+D800, a surrogate */
                {"/%ED%BF%BF", NULL},       /* U+DFFF */
                {"/%F4%90%80%80", NULL},    /* U+110000 */
                {"/%F5%80%80%80", NULL},    /* beyond any code point */
                {"/%F8%88%80%80%80", NULL}, /* a 5-byte form */
                {"/%C3", NULL},             /* truncated at the end */
                {"/%E2%82", NULL},
                {"/%F0%9F%98", NULL},
                {"/%E2%82/x", NULL}, /* truncated before ASCII */
                {"/%C3%28", NULL},   /* a lead byte then no continuation */
                /* dot segments, raw or escaped */
                {"/.", NULL},
                {"/..", NULL},
                {"/a/../b", NULL},
                {"/a/./b", NULL},
                {"/a/..", NULL},
                {"/%2e%2e/x", NULL},
                {"/a/%2E", NULL},
                {"/a%2F..%2Fb", NULL},
                {"/a%2F.", NULL},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL;
                int r = front_decode_path(cases[i].raw, &out);
                bool ok = cases[i].want ? r == 0 && streq(out, cases[i].want) : r == -EINVAL;
                if (!ok) {
                        fprintf(stderr, "front_decode_path case %zu \"%s\": got %d \"%s\"\n", i,
                                cases[i].raw, r, r == 0 ? out : "");
                        check_failures++;
                }
        }
        char *out = NULL;
        CHECK(front_decode_path(NULL, &out) == -EINVAL && !out);
}

static void test_check_query(void)
{
        static const struct {
                const char *q;
                bool ok;
        } cases[] = {
                {"", true},
                {"a=b&c=d", true},
                {"a=%FF&b=%C0%AE&c=%00", true}, /* escapes are the twin's form decoder's */
                {"a=b+c&d=[]{}|\\^`\"<>", true},
                {"\xff", false},
                {"a=\xff", false},
                {"a=caf\xc3\xa9", false},
                {"a=b c", false},
                {"a=\x01", false},
                {"a=\x7f", false},
                {"a=\t", false},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r = front_check_query(cases[i].q);
                if (r != (cases[i].ok ? 0 : -EINVAL)) {
                        fprintf(stderr, "front_check_query case %zu: got %d\n", i, r);
                        check_failures++;
                }
        }
        CHECK(front_check_query(NULL) == 0);
}

static void test_form(void)
{
        static const char q[] = "a=1&token=abc%00junk&b&c=x+y%21%zz&a=2&tokenx=9&=e&d=";
        _cleanup_free_ char *v = NULL;
        size_t l;
        CHECK(front_form_get(q, strlen(q), "token", &v, &l) == 0 && l == 8 &&
              memcmp(v, "abc\0junk", 8) == 0);
        /* a C string cannot hold it: refused, not truncated to "abc" */
        CHECK(front_form_value(q, strlen(q), "token") == NULL);
        _cleanup_free_ char *a = front_form_value(q, strlen(q), "a");
        CHECK(a && streq(a, "1")); /* the first wins */
        _cleanup_free_ char *b = front_form_value(q, strlen(q), "b");
        CHECK(b && streq(b, "")); /* bare name */
        _cleanup_free_ char *c = front_form_value(q, strlen(q), "c");
        CHECK(c && streq(c, "x y!%zz")); /* '+', %XX, a malformed escape kept */
        _cleanup_free_ char *d = front_form_value(q, strlen(q), "d");
        CHECK(d && streq(d, ""));
        _cleanup_free_ char *e = NULL;
        CHECK(front_form_get(q, strlen(q), "e", &e, &l) == -ENOENT);
        CHECK(front_form_value(q, strlen(q), "tok") == NULL);
        /* n bounds the read: "a=1&tok" of a longer buffer */
        _cleanup_free_ char *t = NULL;
        CHECK(front_form_get(q, 5, "token", &t, &l) == -ENOENT);
        /* a body may hold NULs of its own */
        static const char body[] = "x=1\0&token=t\0u&y=2";
        _cleanup_free_ char *bt = NULL;
        CHECK(front_form_get(body, sizeof(body) - 1, "token", &bt, &l) == 0 && l == 3 &&
              memcmp(bt, "t\0u", 3) == 0);
}

/* Headers {name: value} with value of n bytes (NULs allowed), plus a content type. */
static json_t *headers(const char *name, const char *value, size_t n, const char *ctype)
{
        json_t *h = json_object();
        if (name)
                json_object_set_new(h, name, json_stringn(value, n));
        if (ctype)
                json_object_set_new(h, "content-type", json_string(ctype));
        return h;
}

static FrontAuth auth_header(const TwinKind *k, const char *value, size_t n)
{
        _cleanup_json_ json_t *h = headers("authorization", value, n, NULL);
        return front_authenticate(k, key, sizeof key, SID, h, "", NULL, 0, NOW, NULL);
}

/* The Authorization value scheme + cred (scheme may be "" for a bare credential). */
static FrontAuth auth_str(const TwinKind *k, const char *scheme, const char *cred)
{
        _cleanup_free_ char *v = NULL;
        CHECK(asprintf(&v, "%s%s", scheme, cred) >= 0);
        return auth_header(k, v, strlen(v));
}

static FrontAuth auth_query(const TwinKind *k, const char *query)
{
        _cleanup_json_ json_t *h = json_object();
        return front_authenticate(k, key, sizeof key, SID, h, query, NULL, 0, NOW, NULL);
}

static FrontAuth auth_body(const TwinKind *k, const char *body, size_t n, const char *ctype)
{
        _cleanup_json_ json_t *h = headers(NULL, NULL, 0, ctype);
        return front_authenticate(k, key, sizeof key, SID, h, "", body, n, NOW, NULL);
}

static void test_credentials(void)
{
        /* No Stripe twin is built yet: its raw-key and Basic forms are tried on GitHub,
         * where the front accepts them too. */
        const TwinKind *gh = twin_kind_find("github"), *sl = twin_kind_find("slack");
        CHECK(gh && sl);
        _cleanup_free_ char *jwt = NULL, *old = NULL, *other = NULL, *ghp = NULL, *xoxb = NULL;
        CHECK_OK(token_mint_session(key, sizeof key, SID, "local", 5000, "alice", NULL, &jwt));
        CHECK_OK(token_mint_session(key, sizeof key, SID, "local", 500, NULL, NULL, &old));
        CHECK_OK(token_mint_session(key, sizeof key, "ses_other", "local", 5000, NULL, NULL,
                                    &other));
        CHECK_OK(token_mint_provider(key, sizeof key, "github", SID, 0, &ghp));
        CHECK_OK(token_mint_provider(key, sizeof key, "slack", SID, 0, &xoxb));

        /* header schemes the SDKs use */
        CHECK(auth_str(gh, "Bearer ", jwt) == FRONT_AUTH_OK);
        CHECK(auth_str(gh, "bearer ", jwt) == FRONT_AUTH_OK);
        CHECK(auth_str(gh, "BEARER ", jwt) == FRONT_AUTH_OK);
        CHECK(auth_str(gh, "token ", ghp) == FRONT_AUTH_OK);
        CHECK(auth_str(gh, "  Token   ", ghp) == FRONT_AUTH_OK);
        CHECK(auth_str(gh, "", ghp) == FRONT_AUTH_OK); /* the bare Stripe key */
        CHECK(auth_str(gh, "Bearer ", other) == FRONT_AUTH_INVALID);
        CHECK(auth_str(gh, "Bearer ", old) == FRONT_AUTH_EXPIRED);
        CHECK(auth_str(sl, "Bearer ", ghp) == FRONT_AUTH_INVALID); /* another twin's */
        CHECK(auth_str(gh, "Digest ", jwt) == FRONT_AUTH_INVALID);
        _cleanup_free_ char *space = NULL, *word = NULL;
        CHECK(asprintf(&space, "%s ", jwt) > 0 && asprintf(&word, "%s x", jwt) > 0);
        CHECK(auth_str(gh, "Bearer ", space) == FRONT_AUTH_INVALID);
        CHECK(auth_str(gh, "Bearer ", word) == FRONT_AUTH_INVALID);
        CHECK(auth_header(gh, "Bearer ", 7) == FRONT_AUTH_MISSING);
        CHECK(auth_header(gh, "", 0) == FRONT_AUTH_MISSING);
        /* a NUL in a header value and anything after it: the whole value is the credential */
        char v[1024];
        int n = snprintf(v, sizeof(v), "Bearer %s%cjunk", jwt, 0);
        CHECK(auth_header(gh, v, (size_t)n) == FRONT_AUTH_INVALID);
        n = snprintf(v, sizeof(v), "Bearer %s%c", jwt, 0);
        CHECK(auth_header(gh, v, (size_t)n) == FRONT_AUTH_INVALID);
        n = snprintf(v, sizeof(v), "%s%cjunk", ghp, 0);
        CHECK(auth_header(gh, v, (size_t)n) == FRONT_AUTH_INVALID);

        /* Basic with the key as user (RFC 7617) */
        char user[512];
        snprintf(user, sizeof(user), "%s:", ghp);
        _cleanup_free_ char *b = token_base64url(user, strlen(user));
        for (char *p = b; *p; p++) /* standard alphabet */
                *p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
        CHECK(auth_str(gh, "Basic ", b) == FRONT_AUTH_OK);
        CHECK(auth_str(gh, "basic ", b) == FRONT_AUTH_OK);
        n = snprintf(user, sizeof(user), "%s%cjunk:", ghp, 0);
        _cleanup_free_ char *bn = token_base64url(user, (size_t)n);
        CHECK(auth_str(gh, "Basic ", bn) == FRONT_AUTH_INVALID);
        CHECK(auth_str(gh, "Basic ", "Og==") == FRONT_AUTH_MISSING); /* ":" : no user */
        CHECK(auth_str(gh, "Basic ", "!!!!") == FRONT_AUTH_MISSING);

        /* Slack: ?token= and a form field */
        _cleanup_free_ char *q = NULL, *qn = NULL, *f = NULL, *fn = NULL;
        CHECK(asprintf(&q, "channel=C1&token=%s", xoxb) > 0);
        CHECK(asprintf(&qn, "token=%s%%00junk", xoxb) > 0);
        CHECK(asprintf(&f, "token=%s&text=hi", xoxb) > 0);
        CHECK(asprintf(&fn, "token=%s%%00junk&text=hi", xoxb) > 0);
        CHECK(auth_query(sl, q) == FRONT_AUTH_OK);
        CHECK(auth_query(sl, qn) == FRONT_AUTH_INVALID);
        CHECK(auth_query(gh, q) == FRONT_AUTH_MISSING); /* only Slack reads ?token= */
        CHECK(auth_query(sl, "token=") == FRONT_AUTH_MISSING);
        CHECK(auth_query(sl, "token=%00") == FRONT_AUTH_INVALID);
        static const char form[] = "application/x-www-form-urlencoded";
        CHECK(auth_body(sl, f, strlen(f), form) == FRONT_AUTH_OK);
        CHECK(auth_body(sl, f, strlen(f), "application/x-www-form-urlencoded; charset=utf-8") ==
              FRONT_AUTH_OK);
        CHECK(auth_body(sl, fn, strlen(fn), form) == FRONT_AUTH_INVALID);
        CHECK(auth_body(sl, f, strlen(f), "application/json") == FRONT_AUTH_MISSING);
        /* a raw NUL in the body after the token is part of the value */
        n = snprintf(v, sizeof(v), "token=%s%cjunk", xoxb, 0);
        CHECK(auth_body(sl, v, (size_t)n, form) == FRONT_AUTH_INVALID);
        /* the body's length bounds the read: the same bytes cut after the token are fine */
        CHECK(auth_body(sl, v, strlen(v), form) == FRONT_AUTH_OK);

        /* what front_credential hands on is every byte */
        _cleanup_json_ json_t *h = headers("authorization", v, (size_t)n, NULL);
        _cleanup_free_ char *cred = NULL;
        size_t cl;
        CHECK(front_credential(sl, h, "", NULL, 0, &cred, &cl) == 0 && cl == (size_t)n &&
              memcmp(cred, v, cl) == 0);
}

#define KEY32   \
        "pome_" \
        "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f" /* statedir's shape: pome_ + 32 base62 */

static void test_scrub(void)
{
        static const struct {
                const char *in;
                const char *want;
        } cases[] = {
                /* team API keys */
                {KEY32, "[REDACTED]"},
                {"my key is " KEY32 ".", "my key is [REDACTED]."},
                {"api_key=" KEY32 "&x=1", "api_key=[REDACTED]&x=1"},
                {"q=key%20" KEY32, "q=key%20[REDACTED]"}, /* after an escape */
                {"q=key%3D" KEY32 "%26", "q=key%3D[REDACTED]%26"},
                {"\"" KEY32 "\"", "\"[REDACTED]\""},
                {"pome_"
                 "abcdefghij0123456789",
                 "[REDACTED]"}, /* 20 base62: enough */
                {"pome_"
                 "abcdefghij012345678",
                 "pome_abcdefghij012345678"}, /* 19: not a key */
                {"pome_tape_rows_are_not_keys_at_all", "pome_tape_rows_are_not_keys_at_all"},
                {"x" KEY32, "x" KEY32}, /* inside a word */
                {"9" KEY32, "9" KEY32},
                {KEY32 "_tail", "[REDACTED]"}, /* the rest of the word goes too */
                {"pome_", "pome_"},
                {"pome", "pome"},
                /* the other patterns */
                {"sk_test_abc sk_live_def rk_test_g rk_live_h",
                 "[REDACTED] [REDACTED] [REDACTED] [REDACTED]"},
                {"ghp_a gho_b ghs_c ghu_d ghr_e github_pat_f",
                 "[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED]"},
                {"ghx_a gh_a sk_test_ sk_tes", "ghx_a gh_a sk_test_ sk_tes"},
                {"xoxb-1-2 xoxp-x xox-no xoxbb-no", "[REDACTED] [REDACTED] xox-no xoxbb-no"},
                {"t=eyJhbGciOiJIUzI1NiJ9.eyJzIjoxfQ.c2ln!", "t=[REDACTED]!"},
                {"eyJhbGciOiJIUzI1NiJ9.only", "eyJhbGciOiJIUzI1NiJ9.only"},
                {"a -----BEGIN KEY-----\nMIIB\n-----END KEY----- b", "a [REDACTED] b"},
                {"a -----BEGIN KEY-----\nMIIB", "a [REDACTED]"},
                {"two " KEY32 " and ghp_x", "two [REDACTED] and [REDACTED]"},
                {"", ""},
                {"g", "g"},
                {"gh", "gh"},
                {"e", "e"},
                {"nothing here at all", "nothing here at all"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = front_scrub(cases[i].in);
                if (!out || !streq(out, cases[i].want)) {
                        fprintf(stderr, "front_scrub case %zu \"%s\": got \"%s\"\n", i, cases[i].in,
                                out ? out : "(null)");
                        check_failures++;
                }
        }
        CHECK(front_is_secret(KEY32));
        CHECK(!front_is_secret("a " KEY32));
        CHECK(!front_is_secret(""));
}

static void test_redact(void)
{
        _cleanup_json_ json_t *j =
                json_pack("{s:s, s:s, s:s, s:[s, {s:s}], s:{s:s}, s:n, s:i}", "note", "key " KEY32,
                          "X-Api-Key", "anything", "password", "hunter2", "list", KEY32, "in",
                          "ghp_abc", "nested", "Token", "plain", "secret", KEY32, 1);
        CHECK(j);
        /* a string that holds a NUL before the key: scrubbed past it, the NUL kept */
        json_object_set_new(j, "bytes", json_stringn("a\0 " KEY32, 3 + strlen(KEY32)));
        front_redact(j);
        _cleanup_free_ char *dump = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        CHECK(dump && !strstr(dump, KEY32) && !strstr(dump, "ghp_abc") && !strstr(dump, "hunter2"));
        CHECK(streq(json_get_str(j, "note"), "key [REDACTED]"));
        CHECK(streq(json_get_str(j, "X-Api-Key"), "[REDACTED]"));
        CHECK(streq(json_get_str(j, "password"), "[REDACTED]"));
        CHECK(json_is_null(json_object_get(j, "secret"))); /* null stays null */
        CHECK(streq(json_string_value(json_array_get(json_object_get(j, "list"), 0)),
                    "[REDACTED]"));
        CHECK(streq(json_get_str(json_array_get(json_object_get(j, "list"), 1), "in"),
                    "[REDACTED]"));
        CHECK(streq(json_get_str(json_object_get(j, "nested"), "Token"), "[REDACTED]"));
        CHECK(json_integer_value(json_object_get(j, "[REDACTED]")) == 1); /* a key in a key */
        json_t *b = json_object_get(j, "bytes");
        CHECK(json_string_length(b) == 13 &&
              memcmp(json_string_value(b), "a\0 [REDACTED]", 13) == 0);
}

/* A tape row never holds a team API key, wherever the agent put it. */
static void test_tape_row(void)
{
        _cleanup_json_ json_t *h =
                json_pack("{s:s, s:s, s:s, s:s}", "x-api-key", KEY32, "x-custom", "Bearer " KEY32,
                          "authorization", "Bearer " KEY32, "content-type", "application/json");
        static const char body[] = "{\"comment\":\"use " KEY32 " to call\"}";
        FrontCall fc = {
                .twin = "github",
                .run_id = SID,
                .request_id = "req_0123456789abcdefghij",
                .method = "POST",
                .path = "/github/s/" SID "/repos/acme/api/issues",
                .query = "api_key=" KEY32 "&k=" KEY32,
                .headers = h,
                .body = body,
                .body_len = sizeof(body) - 1,
                .ts_usec = INT64_C(1780000000) * 1000000,
        };
        TwinReply rp = {
                .status = 422,
                .body = json_pack("{s:s}", "message", "bad key " KEY32),
                .error = strdup("echo " KEY32),
        };
        _cleanup_json_ json_t *row = front_tape_row(&fc, &rp);
        CHECK(row);
        _cleanup_free_ char *dump = json_dumps(row, JSON_COMPACT);
        CHECK(dump && !strstr(dump, KEY32) && !strstr(dump, "pome_Ab3d"));
        CHECK(streq(json_get_str(row, "path"),
                    "/github/s/" SID "/repos/acme/api/issues?api_key=[REDACTED]&k=[REDACTED]"));
        twin_reply_done(&rp);
}

int main(void)
{
        test_decode_path();
        test_check_query();
        test_form();
        test_credentials();
        test_scrub();
        test_redact();
        test_tape_row();
        return check_finish();
}
