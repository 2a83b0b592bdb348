/* SPDX-License-Identifier: MIT */

#include "common/token.h"

#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <sys/random.h>

#include "common/json-util.h"
#include "common/util.h"

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *token_base64url(const void *data, size_t n)
{
        const unsigned char *p = data;
        char *out = malloc(n / 3 * 4 + 5), *o = out;
        if (!out)
                return NULL;
        size_t i = 0;
        for (; i + 3 <= n; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
                *o++ = b64url[v >> 18 & 63];
                *o++ = b64url[v >> 12 & 63];
                *o++ = b64url[v >> 6 & 63];
                *o++ = b64url[v & 63];
        }
        if (n - i == 1) {
                uint32_t v = (uint32_t)p[i] << 16;
                *o++ = b64url[v >> 18 & 63];
                *o++ = b64url[v >> 12 & 63];
        } else if (n - i == 2) {
                uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
                *o++ = b64url[v >> 18 & 63];
                *o++ = b64url[v >> 12 & 63];
                *o++ = b64url[v >> 6 & 63];
        }
        *o = 0;
        return out;
}

/* The 6-bit value of a base64url character (RFC 4648 §5), -1 for anything else ('=' and NUL
 * included). */
static int b64url_value(char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '-')
                return 62;
        if (c == '_')
                return 63;
        return -1;
}

int token_base64url_decode(const char *s, size_t len, char **ret, size_t *ret_len)
{
        /* No byte string encodes to a length ≡ 1 (mod 4). */
        if (len % 4 == 1)
                return -EBADMSG;
        _cleanup_free_ char *out = malloc(len / 4 * 3 + 3);
        if (!out)
                return -ENOMEM;
        char *o = out;
        uint32_t acc = 0;
        unsigned bits = 0;
        for (size_t i = 0; i < len; i++) {
                int v = b64url_value(s[i]);
                if (v < 0)
                        return -EBADMSG;
                acc = acc << 6 | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        *o++ = (char)(acc >> bits & 0xff);
                }
        }
        /* Canonical encoding only (RFC 4648 §3.5): the 2 or 4 bits below the last whole
         * byte must be zero. Otherwise four spellings of one signature all verify, and a
         * credential would no longer be exactly its bytes. */
        if (bits > 0 && (acc & ((UINT32_C(1) << bits) - 1)) != 0)
                return -EBADMSG;
        *o = 0;
        *ret_len = (size_t)(o - out);
        *ret = TAKE_PTR(out);
        return 0;
}

int token_base64_decode(const char *s, size_t len, char **ret, size_t *ret_len)
{
        /* Padding is optional, but when present it is whole: one or two '=' completing a
         * multiple of four characters, nothing after them. */
        size_t pad = 0;
        while (pad < len && s[len - 1 - pad] == '=')
                pad++;
        if (pad > 2 || (pad > 0 && len % 4 != 0))
                return -EBADMSG;
        len -= pad;
        _cleanup_free_ char *u = malloc(len + 1);
        if (!u)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == '-' || c == '_')
                        return -EBADMSG; /* not of this alphabet */
                u[i] = c == '+' ? '-' : c == '/' ? '_' : c;
        }
        u[len] = 0;
        return token_base64url_decode(u, len, ret, ret_len);
}

static void hmac_sha256(const uint8_t *key, size_t key_len, const void *msg, size_t n,
                        unsigned char out[32])
{
        unsigned int l = 32;
        HMAC(EVP_sha256(), key, (int)key_len, msg, n, out, &l);
}

const char *token_provider_prefix(const char *provider)
{
        if (!provider)
                return NULL;
        if (streq(provider, "github"))
                return "ghp_pome_";
        if (streq(provider, "slack"))
                return "xoxb-pome-";
        if (streq(provider, "stripe"))
                return "sk_test_pome_";
        if (streq(provider, "slack-user"))
                return "xoxp-pome-";
        if (streq(provider, "slack-upload"))
                return "xoxu-pome-";
        /* Google OAuth 2.0 access tokens start "ya29." (developers.google.com/identity) */
        if (streq(provider, "gmail"))
                return "ya29.pome-";
        /* Linear personal API keys start "lin_api_" (linear.app/developers) */
        if (streq(provider, "linear"))
                return "lin_api_pome_";
        return NULL;
}

int token_mint_session(const uint8_t *key, size_t key_len, const char *sid, const char *team_id,
                       int64_t exp, const char *login, const char *account_id, char **ret)
{
        if (key_len == 0)
                return -EINVAL;
        if (strlen(sid) >= sizeof(((TokenClaims *)0)->sid) ||
            strlen(team_id) >= sizeof(((TokenClaims *)0)->team_id))
                return -EINVAL;
        _cleanup_json_ json_t *claims = json_pack("{s:s, s:s, s:I}", "sid", sid, "team_id", team_id,
                                                  "exp", (json_int_t)exp);
        if (!claims)
                return -ENOMEM;
        if (login && json_object_set_new(claims, "login", json_string(login)) < 0)
                return -ENOMEM;
        if (account_id && json_object_set_new(claims, "account_id", json_string(account_id)) < 0)
                return -ENOMEM;
        static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
        _cleanup_free_ char *payload = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS);
        _cleanup_free_ char *h64 = token_base64url(header, strlen(header));
        _cleanup_free_ char *p64 = payload ? token_base64url(payload, strlen(payload)) : NULL;
        if (!h64 || !p64)
                return -ENOMEM;
        _cleanup_free_ char *signing = NULL;
        if (asprintf(&signing, "%s.%s", h64, p64) < 0)
                return -ENOMEM;
        unsigned char mac[32];
        hmac_sha256(key, key_len, signing, strlen(signing), mac);
        _cleanup_free_ char *s64 = token_base64url(mac, sizeof(mac));
        if (!s64)
                return -ENOMEM;
        char *t;
        if (asprintf(&t, "%s.%s", signing, s64) < 0)
                return -ENOMEM;
        *ret = t;
        return 0;
}

/* sig = first 22 chars of base64url(HMAC(secret, "<provider>:<sid>[:<exp>]")) */
static int provider_sig(const uint8_t *key, size_t key_len, const char *provider, const char *sid,
                        int64_t exp, char out[TOKEN_SIG_CHARS + 1])
{
        _cleanup_free_ char *msg = NULL;
        int r = exp > 0 ? asprintf(&msg, "%s:%s:%" PRId64, provider, sid, exp)
                        : asprintf(&msg, "%s:%s", provider, sid);
        if (r < 0)
                return -ENOMEM;
        unsigned char mac[32];
        hmac_sha256(key, key_len, msg, strlen(msg), mac);
        _cleanup_free_ char *s64 = token_base64url(mac, sizeof(mac));
        if (!s64)
                return -ENOMEM;
        memcpy(out, s64, TOKEN_SIG_CHARS);
        out[TOKEN_SIG_CHARS] = 0;
        return 0;
}

int token_mint_provider(const uint8_t *key, size_t key_len, const char *provider, const char *sid,
                        int64_t exp, char **ret)
{
        const char *prefix = token_provider_prefix(provider);
        if (!prefix || key_len == 0)
                return -EINVAL;
        /* A ':' in sid would make "<provider>:<sid>" read as "<provider>:<sid'>:<exp>" (the
         * signed message of another sid with an expiry); too long a sid never verifies. */
        if (strchr(sid, ':') || strlen(sid) >= sizeof(((TokenClaims *)0)->sid))
                return -EINVAL;
        char sig[TOKEN_SIG_CHARS + 1];
        int r = provider_sig(key, key_len, provider, sid, exp, sig);
        if (r < 0)
                return r;
        _cleanup_free_ char *s64 = token_base64url(sid, strlen(sid));
        if (!s64)
                return -ENOMEM;
        char *t;
        r = exp > 0 ? asprintf(&t, "%s%s_%" PRId64 "_%s", prefix, s64, exp, sig)
                    : asprintf(&t, "%s%s_%s", prefix, s64, sig);
        if (r < 0)
                return -ENOMEM;
        *ret = t;
        return 0;
}

/* Tries one split of a provider token's middle part into base64url(sid) and exp. */
static int provider_try(const uint8_t *key, size_t key_len, const char *provider, const char *s64,
                        size_t s64_len, int64_t exp, const char *sig, TokenClaims *ret)
{
        _cleanup_free_ char *sid = NULL;
        size_t sid_len;
        if (s64_len == 0 || token_base64url_decode(s64, s64_len, &sid, &sid_len) < 0)
                return -EBADMSG;
        if (sid_len == 0 || sid_len >= sizeof(ret->sid) || memchr(sid, 0, sid_len) ||
            memchr(sid, ':', sid_len))
                return -EBADMSG;
        char want[TOKEN_SIG_CHARS + 1];
        int r = provider_sig(key, key_len, provider, sid, exp, want);
        if (r < 0)
                return r;
        if (CRYPTO_memcmp(want, sig, TOKEN_SIG_CHARS) != 0)
                return -EPERM;
        *ret = (TokenClaims){.exp = exp};
        memcpy(ret->sid, sid, sid_len + 1);
        snprintf(ret->provider, sizeof(ret->provider), "%s", provider);
        return 0;
}

static int verify_provider(const uint8_t *key, size_t key_len, const char *provider,
                           const char *rest, int64_t now, TokenClaims *ret)
{
        /* Parse from the right: the signature is always the last 22 characters. */
        size_t n = strlen(rest);
        if (n < TOKEN_SIG_CHARS + 2 || rest[n - TOKEN_SIG_CHARS - 1] != '_')
                return -EBADMSG;
        const char *sig = rest + n - TOKEN_SIG_CHARS;
        size_t mid = n - TOKEN_SIG_CHARS - 1;
        TokenClaims c;
        /* base64url(sid) may itself contain '_': try "<sid>_<exp>" first, then "<sid>". */
        int r = -EBADMSG;
        const char *us = memrchr(rest, '_', mid);
        if (us && us + 1 < rest + mid) {
                int64_t exp = 0;
                /* Decimal as minted: no leading zero ("_05000_" is not "_5000_"). */
                bool digits = us[1] != '0';
                for (const char *p = us + 1; p < rest + mid; p++) {
                        if (*p < '0' || *p > '9' || exp > INT64_MAX / 10 - 10) {
                                digits = false;
                                break;
                        }
                        exp = exp * 10 + (*p - '0');
                }
                if (digits && exp > 0)
                        r = provider_try(key, key_len, provider, rest, (size_t)(us - rest), exp,
                                         sig, &c);
        }
        if (r < 0) {
                int q = provider_try(key, key_len, provider, rest, mid, 0, sig, &c);
                if (q == 0 || r == -EBADMSG)
                        r = q;
        }
        if (r < 0)
                return r;
        if (c.exp > 0 && c.exp <= now)
                return -ETIME;
        *ret = c;
        return 0;
}

static int verify_jwt(const uint8_t *key, size_t key_len, const char *token, int64_t now,
                      TokenClaims *ret)
{
        const char *d1 = strchr(token, '.');
        const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        if (!d1 || !d2 || strchr(d2 + 1, '.'))
                return -EBADMSG;
        _cleanup_free_ char *hdr = NULL, *payload = NULL, *sig = NULL;
        size_t hl, pl, sl;
        if (token_base64url_decode(token, (size_t)(d1 - token), &hdr, &hl) < 0 ||
            token_base64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), &payload, &pl) < 0 ||
            token_base64url_decode(d2 + 1, strlen(d2 + 1), &sig, &sl) < 0)
                return -EBADMSG;
        _cleanup_json_ json_t *h = json_loadb(hdr, hl, 0, NULL);
        /* Only HS256: never let the token choose "none" or another algorithm. */
        if (!json_is_object(h) || !streq_ptr(json_get_str(h, "alg"), "HS256"))
                return -EBADMSG;
        unsigned char mac[32];
        if (sl != sizeof(mac))
                return -EBADMSG; /* not an HS256 signature at all */
        hmac_sha256(key, key_len, token, (size_t)(d2 - token), mac);
        if (CRYPTO_memcmp(mac, sig, sizeof(mac)) != 0)
                return -EPERM;
        _cleanup_json_ json_t *c = json_loadb(payload, pl, 0, NULL);
        const char *sid = json_get_str(c, "sid"), *team = json_get_str(c, "team_id");
        json_t *exp = json_object_get(c, "exp");
        if (!sid || !team || !json_is_integer(exp) || strlen(sid) >= sizeof(ret->sid) ||
            strlen(team) >= sizeof(ret->team_id))
                return -EBADMSG;
        if (json_integer_value(exp) <= now)
                return -ETIME;
        *ret = (TokenClaims){.exp = json_integer_value(exp)};
        snprintf(ret->sid, sizeof(ret->sid), "%s", sid);
        snprintf(ret->team_id, sizeof(ret->team_id), "%s", team);
        return 0;
}

int token_verify(const uint8_t *key, size_t key_len, const char *token, size_t token_len,
                 int64_t now, TokenClaims *ret)
{
        /* Anyone can compute an HMAC under the empty key: it vouches for nothing. */
        if (key_len == 0)
                return -EINVAL;
        if (!token || token_len == 0 || token_len > TOKEN_MAX_LEN)
                return -EBADMSG;
        /* A credential is exactly its bytes: no token of ours holds a NUL, and a reader that
         * stopped at one would accept "<token>\0<anything>". */
        if (memchr(token, 0, token_len))
                return -EBADMSG;
        _cleanup_free_ char *t = strndup(token, token_len);
        if (!t)
                return -ENOMEM;
        static const char *const providers[] = {"github", "slack",      "stripe",      "gmail",
                                                "linear", "slack-user", "slack-upload"};
        for (size_t i = 0; i < ELEMENTSOF(providers); i++) {
                const char *rest = startswith(t, token_provider_prefix(providers[i]));
                if (rest)
                        return verify_provider(key, key_len, providers[i], rest, now, ret);
        }
        return verify_jwt(key, key_len, t, now, ret);
}

typedef struct TokenCacheEntry {
        char *token; /* NULL: free */
        size_t token_len;
        uint8_t key[64];
        size_t key_len;
        TokenClaims claims; /* as token_verify filled them (signature good) */
} TokenCacheEntry;

static TokenCacheEntry token_cache[TOKEN_CACHE_SLOTS];
static uint64_t token_cache_seed;

static uint64_t token_hash(const char *s, size_t n)
{
        /* FNV-1a from a random seed, then a final mix: spreads tokens over the slots; the
         * match itself is a constant-time compare of the whole token */
        uint64_t h = token_cache_seed ^ UINT64_C(14695981039346656037);
        for (size_t i = 0; i < n; i++)
                h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
        h ^= h >> 33;
        h *= UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 33;
        return h;
}

/* What token_verify says of claims it verified, at time now: its expiry rule. */
static int claims_at(const TokenClaims *c, int64_t now)
{
        /* a session JWT always has exp; a provider token may have none (0) */
        bool expired = c->provider[0] ? c->exp > 0 && c->exp <= now : c->exp <= now;
        return expired ? -ETIME : 0;
}

int token_verify_cached(const uint8_t *key, size_t key_len, const char *token, size_t token_len,
                        int64_t now, TokenClaims *ret)
{
        if (key_len == 0 || key_len > sizeof(token_cache[0].key) || !token || token_len == 0 ||
            token_len > TOKEN_MAX_LEN)
                return token_verify(key, key_len, token, token_len, now, ret);
        if (token_cache_seed == 0 && token_random_bytes(&token_cache_seed, sizeof(uint64_t)) < 0)
                token_cache_seed = 1;
        TokenCacheEntry *e = &token_cache[token_hash(token, token_len) % TOKEN_CACHE_SLOTS];
        if (e->token && e->token_len == token_len && e->key_len == key_len &&
            CRYPTO_memcmp(e->token, token, token_len) == 0 &&
            CRYPTO_memcmp(e->key, key, key_len) == 0) {
                int r = claims_at(&e->claims, now);
                if (r == 0 && ret)
                        *ret = e->claims;
                return r;
        }
        /* verified with no expiry in the way, so that an expired token's good signature is
         * remembered too (its holder is told "expired" by the rule above) */
        TokenClaims c;
        int r = token_verify(key, key_len, token, token_len, INT64_MIN, &c);
        if (r < 0)
                return r; /* -ETIME is the only answer that depends on now */
        char *copy = malloc(token_len);
        if (copy) {
                memcpy(copy, token, token_len);
                free(e->token);
                *e = (TokenCacheEntry){
                        .token = copy, .token_len = token_len, .key_len = key_len, .claims = c};
                memcpy(e->key, key, key_len);
        }
        r = claims_at(&c, now);
        if (r == 0 && ret)
                *ret = c;
        return r;
}

int token_random_bytes(void *buf, size_t n)
{
        char *p = buf;
        while (n > 0) {
                ssize_t k = getrandom(p, n, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

static unsigned char pool[4096];
static size_t pool_used = sizeof(pool);
static bool pool_hooked;

static void pool_forget(void)
{
        explicit_bzero(pool, sizeof(pool));
        pool_used = sizeof(pool);
}

int token_random_id(const char *prefix, size_t n, char **ret)
{
        static const char alphabet[] =
                "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        size_t pl = strlen(prefix);
        _cleanup_free_ char *s = malloc(pl + n + 1);
        if (!s)
                return -ENOMEM;
        memcpy(s, prefix, pl);
        /*
         * Ids come from a process-wide pool of random bytes, refilled by one getrandom(2)
         * per 4 KiB (the gateway mints an id per call: a syscall each was most of the cost
         * of a request id). A pool inherited across fork(2) is refilled, never shared.
         * Rejection sampling keeps base62 uniform.
         */
        if (!pool_hooked) {
                /* fork(2)'s child starts with an empty pool (glibc runs the hook; a raw
                 * clone(2) child, the spawner's, never mints ids) */
                (void)pthread_atfork(NULL, NULL, pool_forget);
                pool_hooked = true;
        }
        for (size_t i = 0; i < n;) {
                if (pool_used == sizeof(pool)) {
                        int r = token_random_bytes(pool, sizeof(pool));
                        if (r < 0)
                                return r;
                        pool_used = 0;
                }
                unsigned char b = pool[pool_used];
                pool[pool_used++] = 0; /* a byte handed out is not kept */
                if (b < 248)
                        s[pl + i++] = alphabet[b % 62];
        }
        s[pl + n] = 0;
        *ret = TAKE_PTR(s);
        return 0;
}

void token_sha256_hex(const char *s, char out[65])
{
        unsigned char d[32];
        SHA256((const unsigned char *)s, strlen(s), d);
        for (int i = 0; i < 32; i++)
                snprintf(out + 2 * i, 3, "%02x", d[i]);
}

bool token_equal(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        if (la != lb)
                return false;
        return CRYPTO_memcmp(a, b, la) == 0;
}
