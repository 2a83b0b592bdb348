/* SPDX-License-Identifier: MIT */
/*
 * Stateless sandbox credentials (CONTRACT.md "Tokens"), ids and key hashing.
 * The only module that includes OpenSSL libcrypto.
 *
 * Session token: JWT, HS256 (RFC 7519, RFC 7515), claims sid, team_id, exp and
 * login (github/slack) or account_id (stripe).
 * Provider token: <prefix><base64url(sid)>[_<exp>]_<sig>, sig = first 22
 * characters of base64url(HMAC-SHA256(secret, "<provider>:<sid>[:<exp>]")).
 *
 * The key is the secret exactly as given, byte for byte, of any length (a local twin's
 * TWIN_AUTH_SECRET, pomed's twin-secret file): never hashed or otherwise derived, so a
 * token minted by hosted Pome's tooling with the same secret verifies here. An empty key
 * is refused (-EINVAL) by every function below: anyone can sign with it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOKEN_SECRET_LEN 32u /* bytes of the twin secret pomed generates (any length verifies) */
#define TOKEN_SIG_CHARS  22u
#define TOKEN_MAX_LEN    4096u /* bytes; longer credentials are refused unread */

typedef struct TokenClaims {
        char sid[64];
        char team_id[64];
        char provider[16]; /* "" for a session JWT, else github|slack|stripe|slack-user|
                              slack-upload */
        int64_t exp;       /* seconds since the epoch, 0 = none */
} TokenClaims;

/*
 * Provider prefixes: "ghp_pome_", "xoxb-pome-" (Slack's bot token), "sk_test_pome_",
 * "xoxp-pome-" for "slack-user" (Slack's user token, which the methods Slack serves to
 * users only take), and "xoxu-pome-" for "slack-upload" (the narrow token of a pre-signed
 * Slack upload_url, which the front takes on the Slack twin's upload path only); NULL for
 * an unknown provider.
 */
const char *token_provider_prefix(const char *provider);

/*
 * Mints a session JWT into a new string. login/account_id may be NULL (omitted).
 * exp in seconds since the epoch. Returns 0, -EINVAL (ids too long, empty key), -ENOMEM.
 */
int token_mint_session(const uint8_t *key, size_t key_len, const char *sid, const char *team_id,
                       int64_t exp, const char *login, const char *account_id, char **ret);

/*
 * Mints a provider-shaped token for provider (github|slack|stripe); exp 0 = no expiry part.
 * Returns 0, -EINVAL (unknown provider; sid holding ':' or of 64 bytes or more, which no
 * token could carry unambiguously; empty key), -ENOMEM.
 */
int token_mint_provider(const uint8_t *key, size_t key_len, const char *provider, const char *sid,
                        int64_t exp, char **ret);

/*
 * Verifies either kind of token with the deployment key; token is token_len bytes (need not
 * be NUL-terminated), now in seconds since the epoch. A token is exactly its bytes: a NUL or
 * anything else after it, a token longer than TOKEN_MAX_LEN, or a part that is not the
 * canonical base64url of its bytes (padding, non-zero unused low bits, a length ≡ 1 mod 4,
 * characters outside the alphabet), or a provider exp with a leading zero, is -EBADMSG.
 * Signatures are compared in constant time. On success fills *ret.
 * Returns 0, -EINVAL (empty key), -EBADMSG (not a token we issue / malformed), -EPERM (bad
 * signature), -ETIME (expired: exp <= now), -ENOMEM.
 */
int token_verify(const uint8_t *key, size_t key_len, const char *token, size_t token_len,
                 int64_t now, TokenClaims *ret);

/*
 * token_verify, remembering the tokens it verified: a bounded cache (TOKEN_CACHE_SLOTS
 * entries per process, direct-mapped by a hash of the token under a random per-process
 * seed) keyed by the key and the token's bytes, both compared in constant time. A token
 * seen again costs a hash and a compare instead of an HMAC (and, for a session JWT, a
 * base64 decode and a JSON parse). Only tokens whose signature verified are kept; their
 * exp is checked against now on every call, as token_verify checks it. Same results as
 * token_verify. Not thread-safe (pomed and `pome twin start` are single-threaded).
 */
int token_verify_cached(const uint8_t *key, size_t key_len, const char *token, size_t token_len,
                        int64_t now, TokenClaims *ret);

#define TOKEN_CACHE_SLOTS 1024u

/* base64url without padding (RFC 4648 §5) of n bytes into a new string. NULL on OOM. */
char *token_base64url(const void *data, size_t n);

/*
 * Decodes unpadded base64url of len bytes; *ret NUL-terminated (it may hold NULs of its own:
 * use *ret_len, which excludes the terminator). Only the canonical encoding is accepted
 * (RFC 4648 §3.5: unused low bits zero; no '=', no length ≡ 1 mod 4, nothing outside the
 * alphabet). Returns 0, -EBADMSG, -ENOMEM.
 */
int token_base64url_decode(const char *s, size_t len, char **ret, size_t *ret_len);

/*
 * Decodes standard base64 (RFC 4648 §4) the same way, canonical only; '=' padding is optional
 * but, when present, complete (length a multiple of 4, at most two '=').
 */
int token_base64_decode(const char *s, size_t len, char **ret, size_t *ret_len);

/* Fills buf with n cryptographically random bytes (getrandom). Returns 0 or negative errno. */
int token_random_bytes(void *buf, size_t n);

/* New string prefix + n random base62 characters (ids like ses_…, API keys pome_…). */
int token_random_id(const char *prefix, size_t n, char **ret);

/* Lower-case hex SHA-256 of s into out (65 bytes with NUL). */
void token_sha256_hex(const char *s, char out[65]);

/* Constant-time equality of two NUL-terminated strings (length leaks, content does not). */
bool token_equal(const char *a, const char *b);
