/* SPDX-License-Identifier: MIT */
/*
 * Redaction of secrets in what is shown *about* a twin — /_pome/state and tape rows
 * (CONTRACT.md "Tape row", "A twin, seen from the agent"). The world itself keeps the
 * real values: an agent reading a message over the vendor's API sees it as the vendor
 * would; only these two views are scrubbed, by this one scanner.
 *
 * What counts as a secret:
 * - the value under a key named authorization, cookie, x-api-key, api_key, client_secret,
 *   password, secret, token, access_token, refresh_token or agent_token (any case);
 * - a token-looking word anywhere in a string (object keys included): OpenAI-style sk-…
 *   (at least 8 characters after "sk-"), Stripe sk_test_/sk_live_/rk_test_/rk_live_…,
 *   GitHub ghp_/gho_/ghs_/ghu_/ghr_/github_pat_…, Slack xox?-… (xoxb, xoxp, xoxa, xoxs…),
 *   JWTs (three base64url parts, the first starting "eyJ"), PEM blocks from "-----BEGIN "
 *   to the end of their "-----END …-----" (or of the string), and team API keys (pome_ +
 *   at least 20 base62). A token is found where a word starts: at the start of the string,
 *   after a character other than [A-Za-z0-9_], or right after a %XX escape; the rest of its
 *   word ([A-Za-z0-9_-]) goes with it.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define TWIN_REDACTED "[REDACTED]"

/*
 * The first secret in the n bytes at s starting at or after offset from: its offset, and
 * its length in *ret_len; n when there is none (then *ret_len is untouched). Most positions
 * are rejected on their first byte. Never allocates.
 */
size_t twin_redact_find(const char *s, size_t n, size_t from, size_t *ret_len);

/*
 * The n bytes at s (NULs allowed) with every secret replaced by "[REDACTED]". Returns 0 when
 * s holds none (nothing allocated, *ret and *ret_len untouched), 1 with a new NUL-terminated
 * string of *ret_len bytes in *ret, or -ENOMEM.
 */
int twin_redact_string(const char *s, size_t n, char **ret, size_t *ret_len);

/* Whether k is one of the keys whose value is always redacted (case-insensitive). */
bool twin_redact_key(const char *k);

/*
 * Redacts the object or array j in place: a non-null value under a secret key becomes
 * "[REDACTED]", and every string in it, object keys included, is scrubbed of token-looking
 * words (a bare string has no place to be replaced in: use twin_redact_string). Allocates
 * only where something is replaced. Returns 0, or -ENOMEM with j partly redacted (the caller
 * must not show it).
 */
int twin_redact_json(json_t *j);

/*
 * Whether twin_redact_json (or, for a string, twin_redact_string) would change j: a
 * non-null value under a secret key, or a secret in any string or key. Walks j once with
 * the scanner and allocates nothing: most replies hold no secret, and their redacted form
 * is then their own bytes.
 */
bool twin_redact_needed(const json_t *j);

/*
 * The compact JSON text of j as a tape row holds it: j itself when it holds no secret,
 * else a redacted copy (j is not changed). NULL j gives NULL (the row's null). Returns 0
 * with a new string of *ret_len bytes in *ret, -ENOMEM.
 */
int twin_redact_dumps(const json_t *j, char **ret, size_t *ret_len);
