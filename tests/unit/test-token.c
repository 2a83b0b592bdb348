/* SPDX-License-Identifier: MIT */
/*
 * Session JWTs and provider-shaped tokens: mint, verify, tamper, expire, parse from the right;
 * a token is exactly its bytes (nothing after it, a NUL included; only the canonical base64url
 * of every part; every single-byte change refused).
 */
#include "common/token.h"
#include "tests/unit/check.h"
#include "common/util.h"

static const uint8_t key[TOKEN_SECRET_LEN] = "0123456789abcdef0123456789abcdef";
static const uint8_t other[TOKEN_SECRET_LEN] = "fedcba9876543210fedcba9876543210";

/* token_verify of a C string with the test key. */
static int verify(const char *t, int64_t now, TokenClaims *c)
{
        return token_verify(key, sizeof key, t, strlen(t), now, c);
}

/* The 6-bit value of a base64url character (the test's own table, not token.c's). */
static int b64v(char c)
{
        static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const char *p = strchr(a, c);
        return p && c ? (int)(p - a) : -1;
}

/* t with its character at i replaced by the one whose value differs by the low bits x. */
static void flip_low_bits(char *t, size_t i, int x)
{
        static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        t[i] = a[b64v(t[i]) ^ x];
}

/* Every single-byte change of t (every position, every other byte value) must not verify,
 * nor may any prefix of it, nor t with any byte (NUL included) appended. */
static void check_exact(const char *t)
{
        size_t n = strlen(t);
        _cleanup_free_ char *b = malloc(n + 2);
        TokenClaims c;
        int accepted = 0;
        for (size_t i = 0; i < n; i++) {
                memcpy(b, t, n);
                for (int v = 0; v < 256; v++) {
                        if ((char)v == t[i])
                                continue;
                        b[i] = (char)v;
                        accepted += token_verify(key, sizeof key, b, n, 1000, &c) == 0;
                }
        }
        CHECK(accepted == 0);
        for (size_t l = 0; l < n; l++)
                CHECK(token_verify(key, sizeof key, t, l, 1000, &c) < 0);
        memcpy(b, t, n);
        for (int v = 0; v < 256; v++) {
                b[n] = (char)v;
                int r = token_verify(key, sizeof key, b, n + 1, 1000, &c);
                CHECK(v == 0 ? r == -EBADMSG : r < 0);
        }
        /* exactly n bytes, no terminator after them: read no further (ASan watches) */
        _cleanup_free_ char *exact = malloc(n);
        memcpy(exact, t, n);
        CHECK(token_verify(key, sizeof key, exact, n, 1000, &c) == 0);
}

static void test_jwt(void)
{
        _cleanup_free_ char *t = NULL;
        CHECK_OK(token_mint_session(key, sizeof key, "ses_abc", "local", 2000, "alice", NULL, &t));
        TokenClaims c;
        CHECK(verify(t, 1000, &c) == 0);
        CHECK(streq(c.sid, "ses_abc") && streq(c.team_id, "local") && c.exp == 2000);
        CHECK(streq(c.provider, ""));
        CHECK(verify(t, 2000, &c) == -ETIME);
        CHECK(token_verify(other, sizeof other, t, strlen(t), 1000, &c) == -EPERM);
        check_exact(t);

        /* The signature is 43 characters for 32 bytes: its last character carries two
         * unused bits. Any of the three other spellings of the same bytes is refused. */
        size_t n = strlen(t);
        for (int x = 1; x < 4; x++) {
                _cleanup_free_ char *u = strdup(t);
                flip_low_bits(u, n - 1, x);
                CHECK(verify(u, 1000, &c) == -EBADMSG);
        }
        /* padding, a fourth-of-a-byte tail, a character of standard base64 */
        _cleanup_free_ char *padded = NULL, *tail = NULL;
        CHECK(asprintf(&padded, "%s=", t) > 0 && asprintf(&tail, "%sA", t) > 0);
        CHECK(verify(padded, 1000, &c) == -EBADMSG);
        CHECK(verify(tail, 1000, &c) == -EBADMSG);
        _cleanup_free_ char *std = strdup(t);
        std[n - 2] = std[n - 2] == '-' ? '+' : std[n - 2] == '_' ? '/' : '+';
        CHECK(verify(std, 1000, &c) < 0);
        /* a NUL and junk after the token, as "?token=<t>%00junk" decodes */
        char buf[1024];
        int l = snprintf(buf, sizeof(buf), "%s%cjunk", t, 0);
        CHECK(token_verify(key, sizeof key, buf, (size_t)l, 1000, &c) == -EBADMSG);
        /* flip one character of the payload: the signature no longer matches */
        char *dot = strchr(t, '.');
        dot[3] = dot[3] == 'A' ? 'B' : 'A';
        CHECK(verify(t, 1000, &c) < 0);
        /* alg:none is never accepted */
        CHECK(verify("eyJhbGciOiJub25lIn0."
                     "eyJzaWQiOiJzZXNfYWJjIiwidGVhbV9pZCI6ImxvY2FsIiwiZXhwIjo5OTk5OTk5OTk5fQ.",
                     1000, &c) == -EBADMSG);
        CHECK(verify("garbage", 1000, &c) == -EBADMSG);
        CHECK(verify("", 1000, &c) == -EBADMSG);
        CHECK(token_verify(key, sizeof key, NULL, 0, 1000, &c) == -EBADMSG);
        _cleanup_free_ char *huge = malloc(TOKEN_MAX_LEN + 2);
        memset(huge, 'a', TOKEN_MAX_LEN + 1);
        huge[TOKEN_MAX_LEN + 1] = 0;
        CHECK(verify(huge, 1000, &c) == -EBADMSG);
}

static void test_provider(void)
{
        static const char *const providers[] = {"github", "slack", "stripe"};
        /* sids whose base64url contains '_' and '-' exercise parsing from the right */
        static const char *const sids[] = {"ses_L2RwKae6MWKMg1v2", "ses_\xff\xfe?>", "s"};
        for (size_t i = 0; i < ELEMENTSOF(providers); i++)
                for (size_t j = 0; j < ELEMENTSOF(sids); j++)
                        for (int64_t exp = 0; exp <= 5000; exp += 5000) {
                                _cleanup_free_ char *t = NULL;
                                CHECK_OK(token_mint_provider(key, sizeof key, providers[i], sids[j],
                                                             exp, &t));
                                CHECK(startswith(t, token_provider_prefix(providers[i])));
                                TokenClaims c;
                                CHECK(verify(t, 1000, &c) == 0);
                                CHECK(streq(c.sid, sids[j]) && c.exp == exp);
                                CHECK(streq(c.provider, providers[i]));
                                CHECK(token_verify(other, sizeof other, t, strlen(t), 1000, &c) ==
                                      -EPERM);
                                if (exp)
                                        CHECK(verify(t, 6000, &c) == -ETIME);
                                if (j == 0)
                                        check_exact(t);
                                t[strlen(t) - 1] ^= 1;
                                CHECK(verify(t, 1000, &c) < 0);
                        }
        _cleanup_free_ char *t = NULL;
        CHECK(token_mint_provider(key, sizeof key, "gitlab", "ses_x", 0, &t) == -EINVAL);
        TokenClaims c;
        CHECK(verify("ghp_pome_", 1000, &c) == -EBADMSG);
        CHECK(verify("xoxb-pome-_aaaaaaaaaaaaaaaaaaaaaa", 1000, &c) < 0);
}

/* The base64url(sid) part: 20 bytes are 27 characters, two unused bits in the last. */
static void test_provider_canonical(void)
{
        static const char sid[] = "ses_L2RwKae6MWKMg1v2";
        _cleanup_free_ char *s64 = token_base64url(sid, strlen(sid));
        CHECK(strlen(s64) == 27);
        for (int64_t exp = 0; exp <= 5000; exp += 5000) {
                _cleanup_free_ char *t = NULL;
                CHECK_OK(token_mint_provider(key, sizeof key, "github", sid, exp, &t));
                size_t at = strlen("ghp_pome_") + 26; /* the last character of base64url(sid) */
                for (int x = 1; x < 4; x++) {
                        _cleanup_free_ char *u = strdup(t);
                        flip_low_bits(u, at, x);
                        TokenClaims c;
                        CHECK(verify(u, 1000, &c) < 0);
                }
        }
        /* exp as minted only: "_05000_" is not "_5000_" */
        _cleanup_free_ char *t = NULL, *z = NULL;
        CHECK_OK(token_mint_provider(key, sizeof key, "slack", sid, 5000, &t));
        char *e = strstr(t, "_5000_");
        CHECK(e != NULL);
        CHECK(asprintf(&z, "%.*s_0%s", (int)(e - t), t, e + 1) > 0);
        TokenClaims c;
        CHECK(verify(z, 1000, &c) < 0);

        /* "github:a:5" is the signed message of sid "a" with exp 5; a sid holding ':' is
         * neither minted nor accepted, so it cannot stand for that pair. */
        _cleanup_free_ char *forged_from = NULL;
        CHECK(token_mint_provider(key, sizeof key, "github", "a:5", 0, &forged_from) == -EINVAL);
        _cleanup_free_ char *legit = NULL, *a5 = token_base64url("a:5", 3), *forged = NULL;
        CHECK_OK(token_mint_provider(key, sizeof key, "github", "a", 5, &legit));
        CHECK(asprintf(&forged, "ghp_pome_%s_%s", a5, legit + strlen(legit) - TOKEN_SIG_CHARS) > 0);
        CHECK(verify(legit, 1, &c) == 0 && streq(c.sid, "a") && c.exp == 5);
        CHECK(verify(forged, 1, &c) < 0);
        char long_sid[80];
        memset(long_sid, 'x', sizeof(long_sid) - 1);
        long_sid[sizeof(long_sid) - 1] = 0;
        _cleanup_free_ char *lt = NULL;
        CHECK(token_mint_provider(key, sizeof key, "stripe", long_sid, 0, &lt) == -EINVAL);
}

static void test_base64(void)
{
        static const struct {
                const char *in;
                const char *out; /* NULL: refused */
                bool url;
        } cases[] = {
                {"", "", true},
                {"QQ", "A", true},
                {"QR", NULL, true},
                {"QQ==", NULL, true},
                {"Q", NULL, true},
                {"QUI", "AB", true},
                {"QUJ", NULL, true},
                {"QUJD", "ABC", true},
                {"QUJDRA", "ABCD", true},
                {"QUJDRB", NULL, true},
                {"Q+", NULL, true},
                {"Q/", NULL, true},
                {"-_8", "\xfb\xff", true},
                {"-_9", NULL, true},
                {"QQ\x01", NULL, true},
                {"QQ", "A", false},
                {"QQ==", "A", false},
                {"QQ=", NULL, false},
                {"QR==", NULL, false},
                {"QQ===", NULL, false},
                {"Q===", NULL, false},
                {"+/8=", "\xfb\xff", false},
                {"+/8", "\xfb\xff", false},
                {"-_8=", NULL, false},
                {"QQ=A", NULL, false},
                {"dXNlcjpw", "user:p", false},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL;
                size_t l = 0;
                size_t n = strlen(cases[i].in);
                int r = cases[i].url ? token_base64url_decode(cases[i].in, n, &out, &l)
                                     : token_base64_decode(cases[i].in, n, &out, &l);
                if (cases[i].out) {
                        if (r != 0 || l != strlen(cases[i].out) ||
                            memcmp(out, cases[i].out, l) != 0) {
                                fprintf(stderr, "base64 case %zu (%s) decoded wrong: %d\n", i,
                                        cases[i].in, r);
                                check_failures++;
                        }
                } else if (r != -EBADMSG) {
                        fprintf(stderr, "base64 case %zu (%s) not refused: %d\n", i, cases[i].in,
                                r);
                        check_failures++;
                }
        }
        /* a NUL inside the encoded text is outside the alphabet, and decoded bytes keep theirs */
        _cleanup_free_ char *out = NULL, *nul = NULL;
        size_t l;
        CHECK(token_base64url_decode("QQ\0Q", 4, &out, &l) == -EBADMSG);
        CHECK(token_base64url_decode("AEE", 3, &nul, &l) == 0 && l == 2 && nul[0] == 0 &&
              nul[1] == 'A');
}

static void test_ids(void)
{
        _cleanup_free_ char *a = NULL, *b = NULL;
        CHECK_OK(token_random_id("ses_", 16, &a));
        CHECK_OK(token_random_id("ses_", 16, &b));
        CHECK(strlen(a) == 20 && startswith(a, "ses_") && !streq(a, b));
        char hex[65];
        token_sha256_hex("abc", hex);
        CHECK(streq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        CHECK(token_equal("abc", "abc") && !token_equal("abc", "abd") && !token_equal("a", "ab"));
}

/*
 * The key is the secret as given, of any length: tokens minted by another implementation
 * (Python's hmac, following CONTRACT.md "Tokens" to the letter) with hosted Pome's contract
 * secret verify byte for byte, and no derivation of that secret (our old SHA-256 of it) does.
 */
static void test_secret_as_given(void)
{
        static const char secret[] = "contract-suite-secret-0123456789abcdef"; /* 38 bytes */
        static const char *const minted[] = {
                "ghp_pome_c2VzX2thdA_4102444800_goGRKZ_aJgIpWndhONYfff",
                "xoxb-pome-c2VzX2thdA_4102444800_g3nnORqzmyZ5Oece1jVTxv",
                ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzaWQiOiJzZXNfa2F0IiwidGVhbV9pZCI6InRtX2Nv"
                 "bnRyYWN0IiwiZXhwIjo0MTAyNDQ0ODAwfQ.umjJlE19WtLuKpZtDXVktHjqnixUwO2PFKfFdXNYibg"),
        };
        const uint8_t *k = (const uint8_t *)secret;
        size_t kl = sizeof(secret) - 1;
        char hex[65];
        token_sha256_hex(secret, hex);
        uint8_t hashed[32];
        for (size_t i = 0; i < 32; i++)
                hashed[i] = (uint8_t)strtoul((char[]){hex[2 * i], hex[2 * i + 1], 0}, NULL, 16);
        for (size_t i = 0; i < ELEMENTSOF(minted); i++) {
                TokenClaims c;
                CHECK(token_verify(k, kl, minted[i], strlen(minted[i]), 1000, &c) == 0);
                CHECK(streq(c.sid, "ses_kat") && c.exp == 4102444800);
                CHECK(token_verify(hashed, sizeof hashed, minted[i], strlen(minted[i]), 1000, &c) ==
                      -EPERM);
                CHECK(token_verify(k, kl - 1, minted[i], strlen(minted[i]), 1000, &c) == -EPERM);
        }
        /* and ours, minted with that key, are the same bytes */
        _cleanup_free_ char *ghp = NULL, *xoxb = NULL;
        CHECK_OK(token_mint_provider(k, kl, "github", "ses_kat", 4102444800, &ghp));
        CHECK_OK(token_mint_provider(k, kl, "slack", "ses_kat", 4102444800, &xoxb));
        CHECK(ghp && streq(ghp, minted[0]) && xoxb && streq(xoxb, minted[1]));

        /* an empty key vouches for nothing: refused to mint and to verify */
        _cleanup_free_ char *t = NULL;
        CHECK(token_mint_session(k, 0, "ses_kat", "t", 2000, NULL, NULL, &t) == -EINVAL && !t);
        CHECK(token_mint_provider(k, 0, "github", "ses_kat", 0, &t) == -EINVAL && !t);
        TokenClaims c;
        CHECK(token_verify(k, 0, minted[0], strlen(minted[0]), 1000, &c) == -EINVAL);
        CHECK(token_verify((const uint8_t *)"", 0, minted[2], strlen(minted[2]), 1000, &c) ==
              -EINVAL);
}

/* The cache gives token_verify's answers: expiry on every call, another key, bad tokens. */
static void test_cached(void)
{
        _cleanup_free_ char *jwt = NULL, *gh = NULL, *noexp = NULL;
        CHECK_OK(token_mint_session(key, sizeof key, "ses_abc", "local", 2000, NULL, NULL, &jwt));
        CHECK_OK(token_mint_provider(key, sizeof key, "github", "ses_abc", 3000, &gh));
        CHECK_OK(token_mint_provider(key, sizeof key, "slack", "ses_abc", 0, &noexp));
        const char *toks[] = {jwt, gh, noexp};
        static const int64_t nows[] = {1000, 1999, 2000, 2999, 3000, 5000, INT64_MIN, 1000};
        for (int round = 0; round < 2; round++) /* the second round is served from the cache */
                for (size_t i = 0; i < ELEMENTSOF(toks); i++)
                        for (size_t j = 0; j < ELEMENTSOF(nows); j++) {
                                TokenClaims a = {}, b = {};
                                int ra = token_verify(key, sizeof key, toks[i], strlen(toks[i]),
                                                      nows[j], &a);
                                int rb = token_verify_cached(key, sizeof key, toks[i],
                                                             strlen(toks[i]), nows[j], &b);
                                CHECK(ra == rb);
                                CHECK(ra < 0 || memcmp(&a, &b, sizeof(a)) == 0);
                                /* another key never hits a cached token */
                                CHECK(token_verify_cached(other, sizeof other, toks[i],
                                                          strlen(toks[i]), nows[j], &b) == -EPERM);
                        }
        /* a token one byte off, or with a byte more, is not the cached one */
        _cleanup_free_ char *bad = strdup(gh);
        bad[strlen(bad) - 1] ^= 1;
        TokenClaims c;
        CHECK(token_verify_cached(key, sizeof key, bad, strlen(bad), 1000, &c) ==
              token_verify(key, sizeof key, bad, strlen(bad), 1000, &c));
        CHECK(token_verify_cached(key, sizeof key, gh, strlen(gh) + 1, 1000, &c) < 0);
        CHECK(token_verify_cached(key, sizeof key, gh, strlen(gh) - 1, 1000, &c) < 0);
}

int main(void)
{
        test_cached();
        test_secret_as_given();
        test_jwt();
        test_provider();
        test_provider_canonical();
        test_base64();
        test_ids();
        return check_finish();
}
