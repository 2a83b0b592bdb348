/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: token verification (common/token.c). Invariants:
 * - token_verify on arbitrary bytes with a fixed key never crashes, leaks or reads past the
 *   bytes it was given; when it accepts, the token is canonical: every base64url part
 *   re-encodes to itself, and a provider token re-mints to exactly the input;
 * - base64url decoding accepts only canonical text: decode then encode gives the input back;
 * - a token minted from the input (provider and session, with and without expiry) verifies
 *   with the claims it was minted with; no single-byte change, appended byte or prefix of it
 *   (positions and values chosen by the input) does.
 */
#include "common/token.h"
#include "common/util.h"
#include "tests/fuzz/fuzz-assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t key[TOKEN_SECRET_LEN] = "fuzz-key-0123456789abcdef-fuzz!!";
#define NOW 1000

/* The part [p, p + n) decodes and re-encodes to itself. */
static bool canonical_part(const char *p, size_t n)
{
        _cleanup_free_ char *dec = NULL;
        size_t dl;
        if (token_base64url_decode(p, n, &dec, &dl) < 0)
                return false;
        _cleanup_free_ char *enc = token_base64url(dec, dl);
        return enc && strlen(enc) == n && memcmp(enc, p, n) == 0;
}

/* An accepted token is exactly what we would have minted. */
static void check_accepted(const char *t, size_t n, const TokenClaims *c)
{
        ASSERT(memchr(t, 0, n) == NULL);
        ASSERT(c->sid[0] && strnlen(c->sid, sizeof(c->sid)) < sizeof(c->sid));
        if (c->provider[0]) {
                _cleanup_free_ char *again = NULL;
                ASSERT(token_mint_provider(key, sizeof key, c->provider, c->sid, c->exp, &again) ==
                       0);
                ASSERT(strlen(again) == n && memcmp(again, t, n) == 0);
                return;
        }
        const char *d1 = memchr(t, '.', n);
        ASSERT(d1);
        const char *d2 = memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - t));
        ASSERT(d2);
        ASSERT(canonical_part(t, (size_t)(d1 - t)));
        ASSERT(canonical_part(d1 + 1, (size_t)(d2 - d1 - 1)));
        ASSERT(canonical_part(d2 + 1, n - (size_t)(d2 + 1 - t)));
}

/* token minted from the input: verifies as minted, and no byte of it can change. */
static void round_trip(const char *t, const TokenClaims *want, const uint8_t *data, size_t size)
{
        size_t n = strlen(t);
        TokenClaims c;
        ASSERT(token_verify(key, sizeof key, t, n, NOW, &c) == 0);
        ASSERT(streq(c.sid, want->sid) && streq(c.provider, want->provider) && c.exp == want->exp &&
               streq(c.team_id, want->team_id));
        /* exactly n bytes, no terminator: nothing past them is read (ASan watches) */
        _cleanup_free_ char *b = malloc(n + 1);
        ASSERT(b);
        memcpy(b, t, n);
        ASSERT(token_verify(key, sizeof key, b, n, NOW, &c) == 0);
        /* one byte changed, at a place and to a value the input chooses */
        for (size_t k = 0; k + 1 < size && k < 16; k += 2) {
                size_t at = data[k] % n;
                char was = b[at];
                b[at] = (char)(data[k + 1] == (uint8_t)was ? data[k + 1] ^ 0x01 : data[k + 1]);
                ASSERT(token_verify(key, sizeof key, b, n, NOW, &c) < 0);
                b[at] = was;
        }
        /* a byte appended (a NUL included), one byte short, a prefix the input chooses */
        b[n] = size > 0 ? (char)data[size - 1] : 0;
        ASSERT(token_verify(key, sizeof key, b, n + 1, NOW, &c) < 0);
        ASSERT(token_verify(key, sizeof key, b, n - 1, NOW, &c) < 0);
        ASSERT(token_verify(key, sizeof key, b, size > 0 ? data[0] % n : 0, NOW, &c) < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;

        /* 1. arbitrary bytes as a token */
        TokenClaims c;
        if (token_verify(key, sizeof key, s, size, NOW, &c) == 0)
                check_accepted(s, size, &c);

        /* 2. arbitrary bytes as base64url: accepted only if canonical */
        _cleanup_free_ char *dec = NULL;
        size_t dl;
        if (token_base64url_decode(s, size, &dec, &dl) == 0) {
                _cleanup_free_ char *enc = token_base64url(dec, dl);
                ASSERT(enc && strlen(enc) == size && memcmp(enc, s, size) == 0);
        }
        _cleanup_free_ char *dec2 = NULL;
        if (token_base64_decode(s, size, &dec2, &dl) == 0) {
                _cleanup_free_ char *enc = token_base64url(dec2, dl);
                size_t el = strlen(enc), unpadded = size;
                while (unpadded > 0 && s[unpadded - 1] == '=')
                        unpadded--;
                ASSERT(el == unpadded);
                for (size_t i = 0; i < el; i++) {
                        char e = enc[i] == '-' ? '+' : enc[i] == '_' ? '/' : enc[i];
                        ASSERT(e == s[i]);
                }
        }

        /* 3. tokens minted from the input */
        if (size < 3)
                return 0;
        static const char *const providers[] = {"github", "slack", "stripe"};
        const char *provider = providers[data[0] % 3];
        int64_t exp = data[1] & 1 ? 0 : NOW + 1 + data[1];
        /* any bytes but NUL and ':' make a provider sid; printable ASCII a JSON one */
        char sid[sizeof(c.sid)], jsid[sizeof(c.sid)];
        size_t sl = 0, jl = 0;
        for (size_t i = 2; i < size && sl < sizeof(sid) - 1; i++) {
                if (data[i] && data[i] != ':')
                        sid[sl++] = (char)data[i];
                if (data[i] >= 0x20 && data[i] < 0x7f && jl < sizeof(jsid) - 1)
                        jsid[jl++] = (char)data[i];
        }
        sid[sl] = 0;
        jsid[jl] = 0;
        if (sl > 0) {
                _cleanup_free_ char *t = NULL;
                ASSERT(token_mint_provider(key, sizeof key, provider, sid, exp, &t) == 0);
                TokenClaims want = {.exp = exp};
                memcpy(want.sid, sid, sl + 1);
                snprintf(want.provider, sizeof(want.provider), "%s", provider);
                round_trip(t, &want, data, size);
        }
        if (jl > 0) {
                _cleanup_free_ char *t = NULL;
                int64_t jexp = NOW + 1 + data[1];
                ASSERT(token_mint_session(key, sizeof key, jsid, "team_fuzz", jexp,
                                          data[0] & 1 ? jsid : NULL, NULL, &t) == 0);
                TokenClaims want = {.exp = jexp};
                memcpy(want.sid, jsid, jl + 1);
                snprintf(want.team_id, sizeof(want.team_id), "team_fuzz");
                round_trip(t, &want, data, size);
        }
        return 0;
}
