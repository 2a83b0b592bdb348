/* SPDX-License-Identifier: MIT */
/* Session JWTs and provider-shaped tokens: mint, verify, tamper, expire, parse from the right. */
#include "common/token.h"
#include "tests/unit/check.h"
#include "common/util.h"

static const uint8_t key[TOKEN_SECRET_LEN] = "0123456789abcdef0123456789abcdef";
static const uint8_t other[TOKEN_SECRET_LEN] = "fedcba9876543210fedcba9876543210";

static void test_jwt(void)
{
        _cleanup_free_ char *t = NULL;
        CHECK_OK(token_mint_session(key, sizeof key, "ses_abc", "local", 2000, "alice", NULL, &t));
        TokenClaims c;
        CHECK(token_verify(key, sizeof key, t, 1000, &c) == 0);
        CHECK(streq(c.sid, "ses_abc") && streq(c.team_id, "local") && c.exp == 2000);
        CHECK(streq(c.provider, ""));
        CHECK(token_verify(key, sizeof key, t, 2000, &c) == -ETIME);
        CHECK(token_verify(other, sizeof other, t, 1000, &c) == -EPERM);
        /* flip one character of the payload: the signature no longer matches */
        char *dot = strchr(t, '.');
        dot[3] = dot[3] == 'A' ? 'B' : 'A';
        CHECK(token_verify(key, sizeof key, t, 1000, &c) < 0);
        /* alg:none is never accepted */
        CHECK(token_verify(
                      key, sizeof key,
                      "eyJhbGciOiJub25lIn0."
                      "eyJzaWQiOiJzZXNfYWJjIiwidGVhbV9pZCI6ImxvY2FsIiwiZXhwIjo5OTk5OTk5OTk5fQ.",
                      1000, &c) == -EBADMSG);
        CHECK(token_verify(key, sizeof key, "garbage", 1000, &c) == -EBADMSG);
        CHECK(token_verify(key, sizeof key, "", 1000, &c) == -EBADMSG);
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
                                CHECK(token_verify(key, sizeof key, t, 1000, &c) == 0);
                                CHECK(streq(c.sid, sids[j]) && c.exp == exp);
                                CHECK(streq(c.provider, providers[i]));
                                CHECK(token_verify(other, sizeof other, t, 1000, &c) == -EPERM);
                                if (exp)
                                        CHECK(token_verify(key, sizeof key, t, 6000, &c) == -ETIME);
                                t[strlen(t) - 1] ^= 1;
                                CHECK(token_verify(key, sizeof key, t, 1000, &c) < 0);
                        }
        _cleanup_free_ char *t = NULL;
        CHECK(token_mint_provider(key, sizeof key, "gitlab", "ses_x", 0, &t) == -EINVAL);
        TokenClaims c;
        CHECK(token_verify(key, sizeof key, "ghp_pome_", 1000, &c) == -EBADMSG);
        CHECK(token_verify(key, sizeof key, "xoxb-pome-_aaaaaaaaaaaaaaaaaaaaaa", 1000, &c) < 0);
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

int main(void)
{
        test_jwt();
        test_provider();
        test_ids();
        return check_finish();
}
