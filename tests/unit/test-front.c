/* SPDX-License-Identifier: MIT */
/*
 * The HTTP front: strict target decoding (a table of paths and queries), form values that
 * keep their bytes, and credentials that are exactly their bytes wherever they come from
 * (header, Basic, ?token=, form field), a scheme required but for a raw-key kind, the key used
 * as given; refusals worded as the vendor's (expired, another sandbox's); a tape row never
 * holding a team API key (the patterns themselves: test-redact); the vendors' own host
 * names and keyed paths that route a request by its credential.
 */
#include "common/json-util.h"
#include "common/token.h"
#include "common/util.h"
#include "common/frame.h"
#include "pods/front/front.h"
#include "pods/twin/podwire.h"
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
                {"/a%2Fb", "/a%2Fb"}, /* an escaped '/' stays in its segment */
                {"/a%2fb%25c", "/a%2Fb%25c"},
                {"/caf%C3%A9", "/caf\xc3\xa9"},
                {"/caf%c3%a9", "/caf\xc3\xa9"},
                {"/%E2%82%AC", "/\xe2\x82\xac"},        /* U+20AC, 3 bytes */
                {"/%F0%9F%98%80", "/\xf0\x9f\x98\x80"}, /* U+1F600, 4 bytes */
                {"/%EF%BF%BF", "/\xef\xbf\xbf"},        /* U+FFFF: a noncharacter, still UTF-8 */
                {"/%F4%8F%BF%BF", "/\xf4\x8f\xbf\xbf"}, /* U+10FFFF, the last code point */
                {"/%ED%9F%BF", "/\xed\x9f\xbf"},        /* U+D7FF, just below the surrogates */
                {"/%C2%80", "/\xc2\x80"},               /* U+0080, the shortest 2-byte form */
                {"/%0A%7F", "/\n\x7f"}, /* decoded controls travel as JSON escapes */
                {"/a%25", "/a%25"},
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
        return front_authenticate(k, key, sizeof key, SID, NULL, h, "", NULL, 0, NOW, NULL);
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
        return front_authenticate(k, key, sizeof key, SID, NULL, h, query, NULL, 0, NOW, NULL);
}

static FrontAuth auth_body(const TwinKind *k, const char *body, size_t n, const char *ctype)
{
        _cleanup_json_ json_t *h = headers(NULL, NULL, 0, ctype);
        return front_authenticate(k, key, sizeof key, SID, NULL, h, "", body, n, NOW, NULL);
}

/* The upload token opens its kind's upload path of its sandbox, one plain segment, only. */
static void test_upload_token(void)
{
        const TwinKind *gh = twin_kind_find("github"), *sl = twin_kind_find("slack");
        _cleanup_free_ char *up = NULL, *none = NULL, *other = NULL, *q = NULL, *qo = NULL;
        CHECK_OK(front_upload_token(sl, key, sizeof key, SID, &up));
        CHECK(up && startswith(up, "xoxu-pome-"));
        CHECK_OK(front_upload_token(gh, key, sizeof key, SID, &none));
        CHECK(!none); /* GitHub has no pre-signed URLs */
        CHECK_OK(front_upload_token(sl, key, sizeof key, "ses_other", &other));
        CHECK(asprintf(&q, "token=%s", up) >= 0 && asprintf(&qo, "token=%s", other) >= 0);
        _cleanup_json_ json_t *h = json_object();
        struct {
                const TwinKind *k;
                const char *rest, *query;
                FrontAuth want;
        } cases[] = {
                {sl, "/_upload/F0000001", q, FRONT_AUTH_OK},
                {sl, "/_upload/F0000001", qo, FRONT_AUTH_WRONG_SESSION},
                {sl, "/chat.postMessage", q, FRONT_AUTH_INVALID},
                {sl, "/_upload/", q, FRONT_AUTH_INVALID},
                {sl, "/_upload/F1/../../mcp", q, FRONT_AUTH_INVALID},
                {sl, "/_upload/F%2F..", q, FRONT_AUTH_INVALID},
                {sl, "/_upload/F1/x", q, FRONT_AUTH_INVALID},
                {sl, NULL, q, FRONT_AUTH_INVALID},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                FrontAuth a = front_authenticate(cases[i].k, key, sizeof key, SID, cases[i].rest, h,
                                                 cases[i].query, NULL, 0, NOW, NULL);
                if (a != cases[i].want)
                        fprintf(stderr, "upload case %zu: %d\n", i, (int)a);
                CHECK(a == cases[i].want);
        }
        /* another kind's twin takes it nowhere, its upload path or not */
        _cleanup_json_ json_t *bearer = json_pack("{s:s+}", "authorization", "Bearer ", up);
        CHECK(front_authenticate(gh, key, sizeof key, SID, "/_upload/F0000001", bearer, "", NULL, 0,
                                 NOW, NULL) == FRONT_AUTH_INVALID);
        /* the bearer of a Slack bot token still goes everywhere, the upload path included */
        _cleanup_free_ char *xoxb = NULL, *qb = NULL;
        CHECK_OK(token_mint_provider(key, sizeof key, "slack", SID, 0, &xoxb));
        CHECK(asprintf(&qb, "token=%s", xoxb) >= 0);
        CHECK(front_authenticate(sl, key, sizeof key, SID, "/_upload/F1", h, qb, NULL, 0, NOW,
                                 NULL) == FRONT_AUTH_OK);
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
        /* no auth scheme: GitHub and Slack refuse it; a raw-key kind (Stripe) reads it */
        CHECK(auth_str(gh, "", ghp) == FRONT_AUTH_INVALID);
        CHECK(auth_str(gh, "", jwt) == FRONT_AUTH_INVALID);
        CHECK(auth_str(sl, "", xoxb) == FRONT_AUTH_INVALID);
        CHECK(auth_str(sl, "", jwt) == FRONT_AUTH_INVALID);
        TwinKind raw = *gh;
        raw.flags |= TWIN_KIND_RAW_KEY;
        CHECK(auth_str(&raw, "", ghp) == FRONT_AUTH_OK);
        CHECK(auth_str(&raw, "", jwt) == FRONT_AUTH_OK);
        CHECK(auth_str(&raw, "Bearer ", ghp) == FRONT_AUTH_OK);
        /* a good token of this twin for another sandbox is told apart from a bad one */
        CHECK(auth_str(gh, "Bearer ", other) == FRONT_AUTH_WRONG_SESSION);
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
        CHECK(auth_header(&raw, v, (size_t)n) == FRONT_AUTH_INVALID);

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
        CHECK(front_credential(&raw, h, "", NULL, 0, &cred, &cl) == 0 && cl == (size_t)n &&
              memcmp(cred, v, cl) == 0);
        /* … and a value in no form the kind reads is -EBADMSG, not "none" */
        CHECK(front_credential(sl, h, "", NULL, 0, &cred, &cl) == -EBADMSG);
        _cleanup_json_ json_t *dig = headers("authorization", "Digest x", 8, NULL);
        CHECK(front_credential(&raw, dig, "", NULL, 0, &cred, &cl) == -EBADMSG);
}

/*
 * The vendors' own names: a Host header names a kind whatever its case, port or trailing
 * dot; "*.slack.com" is every subdomain and not slack.com itself; nothing else is a vendor's.
 * The keyed path is Stripe's "/v1" and below it, on a segment boundary.
 */
static void test_vendor_hosts(void)
{
        static const struct {
                const char *host;
                const char *kind; /* NULL: no vendor's */
        } cases[] = {
                {"api.github.com", "github"},
                {"API.GitHub.COM", "github"},
                {"api.github.com:443", "github"},
                {"api.github.com:", "github"}, /* an empty port (RFC 3986 §3.2.3) */
                {"api.github.com.", "github"},
                {"api.github.com.:8443", "github"},
                {"github.com", "github"},
                {"slack.com", "slack"},
                {"files.slack.com", "slack"},
                {"acme.enterprise.slack.com", "slack"},
                {"Hooks.Slack.Com:443", "slack"},
                {"x-1.slack.com", "slack"},
                {"api.stripe.com", "stripe"},
                {"api.stripe.com:443", "stripe"},
                /* not a vendor's */
                {"127.0.0.1", NULL},
                {"127.0.0.1:8081", NULL},
                {"localhost", NULL},
                {"[::1]:8081", NULL},
                {"[api.github.com]", NULL},
                {"", NULL},
                {":443", NULL},
                {".", NULL},
                {"evil.example", NULL},
                {"api.github.com.evil.example", NULL},
                {"evilapi.github.com", NULL},
                {"www.github.com", NULL}, /* github.com has no wildcard */
                {"uploads.github.com", NULL},
                {"api.github.com..", NULL},
                {".api.github.com", NULL},
                {"api.github.com:https", NULL},
                {"api.github.com:443:443", NULL},
                {"api.github.com:-1", NULL},
                {"api.github.co", NULL},
                {"pi.github.com", NULL},
                {"stripe.com", NULL},
                {"files.stripe.com", NULL},
                {".slack.com", NULL}, /* an empty label stands for '*' */
                {"a..slack.com", NULL},
                {"..slack.com", NULL},
                {"a b.slack.com", NULL},
                {"evil/.slack.com", NULL},
                {"evil.slack.com.evil.example", NULL},
                {"notslack.com", NULL},
                {"slack.com.", "slack"},
                {"x.slack.com.", "slack"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const TwinKind *k = front_vendor_kind(cases[i].host);
                if (!streq_ptr(k ? k->name : NULL, cases[i].kind)) {
                        fprintf(stderr, "host \"%s\": %s, want %s\n", cases[i].host,
                                k ? k->name : "none", cases[i].kind ? cases[i].kind : "none");
                        check_failures++;
                }
        }
        CHECK(!front_vendor_kind(NULL));

        /* every kind has its names, the first a plain one: its API's origin */
        char origin[64];
        for (const char *const *n = twin_kind_names(); *n; n++) {
                const TwinKind *k = twin_kind_find(*n);
                CHECK(k && k->vendor_hosts && k->vendor_hosts[0] &&
                      !strchr(k->vendor_hosts[0], '*'));
                if (!k || !k->vendor_hosts || !k->vendor_hosts[0])
                        continue;
                CHECK(front_vendor_kind(k->vendor_hosts[0]) == k);
                front_vendor_origin(k, origin, sizeof(origin));
                CHECK(startswith(origin, "https://") &&
                      streq(origin + strlen("https://"), k->vendor_hosts[0]));
        }
        front_vendor_origin(twin_kind_find("github"), origin, sizeof(origin));
        CHECK(streq(origin, "https://api.github.com"));
        front_vendor_origin(twin_kind_find("slack"), origin, sizeof(origin));
        CHECK(streq(origin, "https://slack.com"));
        front_vendor_origin(twin_kind_find("stripe"), origin, sizeof(origin));
        CHECK(streq(origin, "https://api.stripe.com"));

        /* the keyed path: Stripe's "/v1" on a segment boundary, nothing else */
        const TwinKind *stripe = twin_kind_find("stripe");
        CHECK(front_keyed_kind("/v1") == stripe);
        CHECK(front_keyed_kind("/v1/") == stripe);
        CHECK(front_keyed_kind("/v1/customers") == stripe);
        CHECK(!front_keyed_kind("/v10/customers"));
        CHECK(!front_keyed_kind("/v1customers"));
        CHECK(!front_keyed_kind("/V1/customers"));
        CHECK(!front_keyed_kind("/stripe/s/ses_x/v1/customers"));
        CHECK(!front_keyed_kind("/repos/acme/api"));
        CHECK(!front_keyed_kind(""));
        CHECK(!front_keyed_kind("/"));
}

/* The body member name of rp as a string ("" when absent). */
static const char *body_str(const TwinReply *rp, const char *name)
{
        const char *v = json_get_str(rp->body, name);
        return v ? v : "";
}

/*
 * One mechanism, the vendor's words: front_authenticate tells missing, invalid, expired and
 * another sandbox's apart; front_auth_failure hands that to the kind's auth_error.
 */
static void test_auth_words(void)
{
        const TwinKind *gh = twin_kind_find("github"), *sl = twin_kind_find("slack");
        _cleanup_free_ char *old_ghp = NULL, *old_other = NULL, *other_ghp = NULL,
                            *other_xoxb = NULL, *old_xoxb = NULL;
        CHECK_OK(token_mint_provider(key, sizeof key, "github", SID, 500, &old_ghp));
        CHECK_OK(token_mint_provider(key, sizeof key, "slack", SID, 500, &old_xoxb));
        CHECK_OK(token_mint_provider(key, sizeof key, "github", "ses_other", 500, &old_other));
        CHECK_OK(token_mint_provider(key, sizeof key, "github", "ses_other", 0, &other_ghp));
        CHECK_OK(token_mint_provider(key, sizeof key, "slack", "ses_other", 0, &other_xoxb));
        CHECK(auth_str(gh, "token ", old_ghp) == FRONT_AUTH_EXPIRED);
        CHECK(auth_str(sl, "Bearer ", old_xoxb) == FRONT_AUTH_EXPIRED);
        CHECK(auth_str(gh, "Bearer ", old_xoxb) == FRONT_AUTH_INVALID); /* Slack's, on GitHub */
        /* expired and for another sandbox: nothing is told about either */
        CHECK(auth_str(gh, "token ", old_other) == FRONT_AUTH_INVALID);
        CHECK(auth_str(gh, "token ", other_ghp) == FRONT_AUTH_WRONG_SESSION);
        CHECK(auth_str(sl, "Bearer ", other_xoxb) == FRONT_AUTH_WRONG_SESSION);
        /* another twin's token for another sandbox is just invalid here */
        CHECK(auth_str(sl, "Bearer ", other_ghp) == FRONT_AUTH_INVALID);
        /* an empty deployment key lets nothing through */
        _cleanup_json_ json_t *h = headers("authorization", "token ", 6, NULL);
        json_object_set_new(h, "authorization", json_sprintf("token %s", other_ghp));
        CHECK(front_authenticate(gh, key, 0, "ses_other", NULL, h, "", NULL, 0, NOW, NULL) ==
              FRONT_AUTH_INVALID);
        CHECK(front_authenticate(gh, key, sizeof key, "ses_other", NULL, h, "", NULL, 0, NOW,
                                 NULL) == FRONT_AUTH_OK);

        CHECK(front_auth_failure(FRONT_AUTH_MISSING) == TWIN_AUTH_MISSING);
        CHECK(front_auth_failure(FRONT_AUTH_INVALID) == TWIN_AUTH_INVALID);
        CHECK(front_auth_failure(FRONT_AUTH_EXPIRED) == TWIN_AUTH_EXPIRED);
        CHECK(front_auth_failure(FRONT_AUTH_WRONG_SESSION) == TWIN_AUTH_WRONG_SESSION);

        static const struct {
                const char *kind;
                TwinAuthFailure why;
                int status;
                const char *member, *value;
        } words[] = {
                {"github", TWIN_AUTH_MISSING, 401, "message", "Requires authentication"},
                {"github", TWIN_AUTH_INVALID, 401, "message", "Bad credentials"},
                {"github", TWIN_AUTH_EXPIRED, 401, "message", "Bad credentials"},
                /* hosted Pome's sid-mismatch pin: 401 "Forbidden" (its contract suite) */
                {"github", TWIN_AUTH_WRONG_SESSION, 401, "message", "Forbidden"},
                {"slack", TWIN_AUTH_MISSING, 401, "error", "not_authed"},
                {"slack", TWIN_AUTH_INVALID, 401, "error", "invalid_auth"},
                {"slack", TWIN_AUTH_EXPIRED, 401, "error", "token_expired"},
                {"slack", TWIN_AUTH_WRONG_SESSION, 401, "error", "invalid_auth"},
        };
        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                TwinReply rp = {};
                twin_kind_find(words[i].kind)->auth_error(words[i].why, &rp);
                if (rp.status != words[i].status ||
                    !streq(body_str(&rp, words[i].member), words[i].value)) {
                        fprintf(stderr, "auth words %zu (%s): got %d %s\n", i, words[i].kind,
                                rp.status, body_str(&rp, words[i].member));
                        check_failures++;
                }
                if (streq(words[i].kind, "github")) {
                        char st[8];
                        snprintf(st, sizeof(st), "%d", words[i].status);
                        CHECK(streq(body_str(&rp, "status"), st));
                        CHECK(startswith(body_str(&rp, "documentation_url"), "https://"));
                } else
                        CHECK(json_is_false(json_object_get(rp.body, "ok")));
                twin_reply_done(&rp);
        }

        /* Stripe, as hosted Pome's Stripe twin: code "unauthorized" on every 401, the exact
         * "Invalid API Key provided." for a key that resolves nowhere, 403 "forbidden" for
         * another session's; no documentation_url anywhere (only GitHub sends one) */
        static const struct {
                TwinAuthFailure why;
                int status;
                const char *code, *message;
        } stripe[] = {
                {TWIN_AUTH_MISSING, 401, "unauthorized", NULL},
                {TWIN_AUTH_INVALID, 401, "unauthorized", "Invalid API Key provided."},
                {TWIN_AUTH_EXPIRED, 401, "unauthorized", "Expired API Key provided."},
                {TWIN_AUTH_WRONG_SESSION, 403, "forbidden", NULL},
        };
        for (size_t i = 0; i < ELEMENTSOF(stripe); i++) {
                TwinReply rp = {};
                twin_kind_find("stripe")->auth_error(stripe[i].why, &rp);
                json_t *e = json_object_get(rp.body, "error");
                CHECK(rp.status == stripe[i].status);
                CHECK(streq_ptr(json_get_str(e, "code"), stripe[i].code));
                CHECK(streq_ptr(json_get_str(e, "type"), "invalid_request_error"));
                CHECK(!stripe[i].message ||
                      streq_ptr(json_get_str(e, "message"), stripe[i].message));
                CHECK(!json_object_get(e, "documentation_url"));
                twin_reply_done(&rp);
        }
}

/* The admin gate's 403, hosted Pome's body of each vendor exactly (its contract suite). */
static void test_control_forbidden(void)
{
        static const struct {
                const char *kind, *body;
        } want[] = {
                {"github", "{\"message\":\"Forbidden\",\"documentation_url\":"
                           "\"https://docs.github.com/rest\",\"status\":\"403\"}"},
                {"slack", "{\"ok\":false,\"error\":\"restricted_action\"}"},
                {"stripe", "{\"error\":{\"type\":\"invalid_request_error\",\"code\":"
                           "\"forbidden\",\"message\":\"Forbidden\"}}"},
        };
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                TwinReply rp = {};
                twin_kind_find(want[i].kind)->control_error(TWIN_CONTROL_FORBIDDEN, NULL, &rp);
                _cleanup_json_ json_t *expect = json_loads(want[i].body, 0, NULL);
                CHECK(rp.status == 403);
                if (!json_equal(rp.body, expect)) {
                        _cleanup_free_ char *got = json_dumps(rp.body, JSON_COMPACT);
                        fprintf(stderr, "%s admin 403: %s\n", want[i].kind, got ? got : "(null)");
                        check_failures++;
                }
                twin_reply_done(&rp);
        }
}

#define KEY32   \
        "pome_" \
        "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f" /* statedir's shape: pome_ + 32 base62 */

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

/* n bytes of c, NUL-terminated (a huge string for a body). */
static char *repeat(char c, size_t n)
{
        char *s = malloc(n + 1);
        memset(s, c, n);
        s[n] = 0;
        return s;
}

/* JSON nested depth arrays deep around a value: [[[…"x"…]]]. */
static json_t *nested(int depth)
{
        json_t *j = json_string("ghp_deepdeepdeepdeepdeep");
        for (int i = 0; i < depth; i++) {
                json_t *a = json_array();
                json_array_append_new(a, j);
                j = a;
        }
        return j;
}

/*
 * The gateway's tape row is spliced from bytes (front_tape_line) where it used to be
 * built as a document (front_tape_row): for a table of hostile calls and replies, both
 * parse to the same JSON, and the line is one line.
 */
static void test_tape_line(void)
{
        _cleanup_free_ char *huge = repeat('a', 3u << 20);
        char jwt[] = "eyJhbGciOiJIUzI1NiJ9.eyJzaWQiOiJ4In0.c2lnbmF0dXJlc2lnbmF0dXJl";
        struct {
                const char *twin, *method, *path, *query, *body;
                size_t body_len;
                json_t *headers;
                TwinReply rp;
        } cases[] = {
                /* secrets in nested bodies, headers, the query, the error, the delta */
                {"github",
                 "POST",
                 "/github/s/" SID "/repos/acme/api/issues",
                 "token=" KEY32 "&q=1",
                 "{\"title\":\"t\",\"api_key\":\"k\",\"deep\":{\"password\":\"p\"}}",
                 0,
                 json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "authorization", "Bearer " KEY32,
                           "cookie", "a=b", "x-api-key", "abc", "x-custom", jwt,
                           "x-pome-correlation-id", "corr-" KEY32, "x-pome-scenario-step-id",
                           "step 1"),
                 {.status = 422,
                  .body = json_pack("{s:{s:[{s:s, s:s, s:n}]}, s:s}", "a", "b", "password", "x",
                                    "note", "ghp_abcdefghijklmnopqrstuvwx", "token", "message",
                                    "echo " KEY32),
                  .error = strdup("bad key " KEY32),
                  .tool = strdup("create_issue"),
                  .state_delta = json_pack("{s:n, s:{s:s, s:s}}", "before", "after", "text",
                                           "xoxb-123-456-abcdef", KEY32 "=1", "v")}},
                /* invalid UTF-8 in the path and query: mended, never a lost row */
                {"github",
                 "GET",
                 "/github/s/" SID "/repos/\xff\xfe/x\xc0\xae",
                 "a=\xe2\x82&b=%FF",
                 NULL,
                 0,
                 json_pack("{s:s}", "user-agent", "caf\xc3\xa9"),
                 {.status = 404, .body = json_pack("{s:s}", "message", "Not Found")}},
                /* a body with \u0000: refused by the request-body parser (null on the tape);
                 * a reply string with a NUL travels as \u0000 */
                {"slack",
                 "POST",
                 "/slack/s/" SID "/chat.postMessage",
                 "",
                 "{\"text\":\"a\\u0000b\"}",
                 0,
                 json_pack("{s:s}", "content-type", "application/json"),
                 {.status = 200,
                  .body = json_pack("{s:b, s:s%}", "ok", 1, "text", "x\0y", (size_t)3)}},
                /* huge bodies, and a deep one */
                {"github",
                 "POST",
                 "/github/s/" SID "/repos/acme/api/issues/1/comments",
                 "",
                 NULL,
                 0,
                 json_object(),
                 {.status = 201,
                  .body = json_pack("{s:s, s:o}", "body", huge, "deep", nested(500)),
                  .request_body = json_pack("{s:s}", "body", huge),
                  .state_mutation = true,
                  .tool = strdup("add_issue_comment")}},
                /* a text body with a secret; a top-level string */
                {"github",
                 "GET",
                 "/github/s/" SID "/raw",
                 "",
                 NULL,
                 0,
                 NULL,
                 {.status = 200,
                  .body = json_string("line one\nsk_test_abcdefghijklmnop\n"),
                  .headers = json_pack("{s:s}", "Content-Type", "text/plain")}},
                /* Stripe: idempotency_dedupe; no tool; unsupported; an error without text */
                {"stripe",
                 "POST",
                 "/stripe/s/" SID "/v1/nope",
                 "",
                 "a=1&client_secret=s",
                 0,
                 json_pack("{s:s}", "idempotency-key", "k1"),
                 {.status = 501,
                  .body = json_pack("{s:{s:s}}", "error", "message", "unsupported"),
                  .fidelity = "unsupported",
                  .idempotency_dedupe = true}},
                /* a header whose name is a token (the document path), reals, big ints, keys
                 * that are secrets, an empty reply */
                {"github",
                 "DELETE",
                 "/github/s/" SID "/x",
                 "",
                 NULL,
                 0,
                 json_pack("{s:s, s:s}", "ghp_abcdefghijklmnopqrstuv", "1", "accept", "*/*"),
                 {.status = 204,
                  .request_body = json_pack("{s:f, s:f, s:I, s:i}", "r", 1.5, "big", 1e300, "i",
                                            (json_int_t)INT64_MAX, KEY32, 1),
                  .state_mutation = true}},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                if (cases[i].body && !cases[i].body_len)
                        cases[i].body_len = strlen(cases[i].body);
                FrontCall fc = {
                        .twin = cases[i].twin,
                        .run_id = SID,
                        .request_id = "req_0123456789abcdefghij",
                        .method = cases[i].method,
                        .path = cases[i].path,
                        .query = cases[i].query,
                        .headers = cases[i].headers,
                        .body = cases[i].body,
                        .body_len = cases[i].body_len,
                        .latency_ms = 0.1 + (double)i / 3,
                        .ts_usec = INT64_C(1780000000) * 1000000 + 123456,
                };
                TwinReply *rp = &cases[i].rp;
                if (!rp->fidelity)
                        rp->fidelity = "semantic";
                _cleanup_json_ json_t *old = front_tape_row(&fc, rp);
                CHECK(old);
                TwinRequest rq = {.body = cases[i].body, .body_len = cases[i].body_len};
                Frame f = {};
                TwinReplyBytes rb;
                CHECK_OK(podwire_reply_bytes(rp, &rq, &f, &rb));
                _cleanup_free_ char *line = NULL;
                size_t len = 0;
                CHECK_OK(front_tape_line(&fc, &rb, &line, &len));
                CHECK(len > 0 && line[len - 1] == '\n' && !memchr(line, '\n', len - 1));
                json_error_t je;
                _cleanup_json_ json_t *got = json_loadb(line, len, JSON_ALLOW_NUL, &je);
                if (!got)
                        fprintf(stderr, "case %zu: not JSON: %s\n", i, je.text);
                if (!json_equal(got, old)) {
                        _cleanup_free_ char *a = json_dumps(old, JSON_COMPACT);
                        fprintf(stderr, "case %zu:\n old %.600s\n new %.600s\n", i, a, line);
                }
                CHECK(got && json_equal(got, old));
                CHECK(!memmem(line, len, KEY32, strlen(KEY32)));
                /* the body the caller gets is the reply's, secrets and all */
                if (i == 0)
                        CHECK(memmem(rb.body, rb.body_len, "ghp_abcdefghijklmnopqrstuvwx", 28));
                frame_done(&f);
                twin_reply_done(rp);
                json_decref(cases[i].headers);
        }
}

int main(void)
{
        test_decode_path();
        test_check_query();
        test_form();
        test_credentials();
        test_upload_token();
        test_vendor_hosts();
        test_auth_words();
        test_control_forbidden();
        test_tape_row();
        test_tape_line();
        return check_finish();
}
