/* SPDX-License-Identifier: MIT */
/*
 * The HTTP front of a twin: what every front end (pomed's gateway, `pome twin
 * start`) does around a twin call — find the caller's credential the way the
 * vendor's SDKs send it, verify it for this sandbox, decode and police the
 * path, and turn the call into a redacted tape row (CONTRACT.md "Tape row").
 * No HTTP library and no I/O here.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/token.h"
#include "pods/twin/podwire.h"
#include "pods/twin/twin.h"

typedef enum FrontAuth {
        FRONT_AUTH_OK,
        FRONT_AUTH_MISSING,       /* no credential presented */
        FRONT_AUTH_INVALID,       /* malformed, bad signature, no auth scheme (but Stripe's raw
                                     key), other twin's provider, expired for another sandbox */
        FRONT_AUTH_EXPIRED,       /* signature good, sandbox id right, exp passed */
        FRONT_AUTH_WRONG_SESSION, /* signature good, this twin's, minted for another sandbox */
} FrontAuth;

/*
 * Finds the credential: Authorization with any-case "Bearer"/"token" scheme (RFC 9110
 * §11.1; @octokit sends "token" for plain tokens, "bearer" for JWTs), HTTP Basic with
 * the key as user name (Stripe's curl style; RFC 7617), a bare key for TWIN_KIND_RAW_KEY
 * kinds, and ?token= or a form field `token` for TWIN_KIND_TOKEN_PARAM kinds (Slack).
 * The credential is every byte presented, NULs included (a header value's JSON length,
 * a decoded parameter's full length): a new string in *ret, NUL-terminated for
 * convenience, with its length in *ret_len. Returns 0, -ENOENT when there is none,
 * -EBADMSG when Authorization holds one in no form the kind reads (an unknown scheme, or
 * a value without a scheme where the vendor wants one: GitHub and Slack refuse
 * "Authorization: <token>"), -ENOMEM.
 */
int front_credential(const TwinKind *k, json_t *headers, const char *query, const char *body,
                     size_t body_len, char **ret, size_t *ret_len);

/*
 * The twin kind whose vendor's own host host is (TwinKind.vendor_hosts), or NULL. host is a
 * Host header's value (RFC 9110 §7.2: uri-host [":" port]; NULL when absent): compared
 * case-insensitively (RFC 4343), without its port and one trailing dot (the absolute form
 * of a DNS name, RFC 1034 §3.1); an IP literal, a malformed port or a name with an empty
 * label is no vendor's. The names are each vendor's API base URL: https://api.github.com
 * (docs.github.com/rest, "Getting started with the REST API"), https://slack.com/api/
 * (api.slack.com/web, "Basics"; its workspaces and files.slack.com are its subdomains),
 * https://api.stripe.com (docs.stripe.com/api, "Base URL"). A request so named is routed
 * keyed: its whole path is below the twin's mount, its sandbox is its credential's
 * (front_keyed_session).
 */
const TwinKind *front_vendor_kind(const char *host);

/*
 * The origin of the API of kind k, which must have vendor_hosts: "https://" and the first
 * of them, into buf (n bytes, always NUL-terminated) — the base URL of a call that came by
 * the vendor's name, so that the URLs the twin writes lead back to it by the same name.
 */
void front_vendor_origin(const TwinKind *k, char *buf, size_t n);

/*
 * The twin kind whose TwinKind.keyed_prefix path (raw) is or is below ("/v1", "/v1/…":
 * Stripe's), or NULL: such a path is routed keyed on any host.
 */
const TwinKind *front_keyed_kind(const char *path);

/*
 * The sandbox a credential for kind k names, for a request that carries none in its path (a
 * vendor host, a keyed path: front_vendor_kind, front_keyed_kind). Writes the sid into sid
 * (sl bytes), or "" when the credential is absent, malformed or badly signed; an expired one
 * still names its sandbox, so front_authenticate can tell its holder "expired". The caller
 * then authenticates as for any other path.
 */
void front_keyed_session(const TwinKind *k, const uint8_t *key, size_t key_len, json_t *headers,
                         const char *query, const char *body, size_t body_len, char *sid,
                         size_t sl);

/*
 * Verifies the caller of twin kind k on sandbox sid at time now (seconds since the
 * epoch) with the deployment key: key_len bytes used as the HMAC key exactly as given
 * (CONTRACT.md "Tokens"; an empty key verifies nothing). A provider-shaped token must be
 * the provider of k; k's upload token (front_upload_token) only opens a rest (the raw path
 * below the mount, NULL for none) that is k's upload path and one segment of letters,
 * digits, '-' and '_'. Fills *ret_claims (may be NULL) on FRONT_AUTH_OK and
 * FRONT_AUTH_EXPIRED (whose sandbox may still be open: its lifetime runs on the boot
 * clock, exp on the wall clock). The one check of
 * every front end (pomed's gateway, `pome twin start`); each words a refusal its own way,
 * a local twin as the vendor does (front_auth_failure).
 */
FrontAuth front_authenticate(const TwinKind *k, const uint8_t *key, size_t key_len, const char *sid,
                             const char *rest, json_t *headers, const char *query, const char *body,
                             size_t body_len, int64_t now, TokenClaims *ret_claims);

/*
 * The vendor credentials of sandbox sid for twin kind k, as the control API gives them in
 * provider_credentials.<twin> (CONTRACT.md): Stripe's {api_key, api_base} (api_base may be
 * NULL: ""), else {token}, with {user_token} beside it where the vendor has user tokens
 * too (Slack: xoxb- and xoxp-, common/token.h). exp in seconds since the epoch (0 = none).
 * A new object, or NULL (out of memory, an empty key, a kind without credentials).
 */
json_t *front_provider_credentials(const TwinKind *k, const uint8_t *key, size_t key_len,
                                   const char *sid, int64_t exp, const char *api_base);

/*
 * The upload token of kind k for sandbox sid (TwinKind.upload_path): a new string in *ret,
 * or NULL when k has no upload path. It is a provider token of provider "<kind>-upload"
 * without expiry, which front_authenticate takes below k's upload path of that sandbox and
 * nowhere else. Returns 0, -EINVAL (sid or kind name too long, empty key), -ENOMEM.
 */
int front_upload_token(const TwinKind *k, const uint8_t *key, size_t key_len, const char *sid,
                       char **ret);

/*
 * What a refusal of front_authenticate (a != FRONT_AUTH_OK) is to the vendor, for the
 * kind's auth_error: MISSING, INVALID, EXPIRED, WRONG_SESSION map one to one.
 */
TwinAuthFailure front_auth_failure(FrontAuth a);

/*
 * Fills rp (zeroed by the caller) with kind k's refusal of a caller front_authenticate did not
 * let through (auth != FRONT_AUTH_OK) for a request to rest, the path below the twin's mount.
 * A 401 of the MCP endpoint (/mcp, /mcp/…) also carries the Bearer challenge MCP clients read
 * (MCP 2025-06-18 "Authorization": a 401 has WWW-Authenticate; RFC 6750 §3, with
 * error="invalid_token" for a credential that does not verify or has expired).
 */
void front_auth_refusal(const TwinKind *k, FrontAuth auth, const char *rest, TwinReply *rp);

/*
 * The first value of name in an application/x-www-form-urlencoded string of n bytes (a
 * query or a form body; WHATWG URL §5.1), decoded ('+' is a space, %XX a byte, %00 a NUL;
 * a malformed escape is kept as is): a new string in *ret of *ret_len bytes (it may hold
 * NULs; NUL-terminated besides), "" for a bare "name". Returns 0, -ENOENT when absent,
 * -ENOMEM.
 */
int front_form_get(const char *s, size_t n, const char *name, char **ret, size_t *ret_len);

/*
 * front_form_get for callers that want a C string: a new string, "" for a bare "name",
 * NULL when absent, when the decoded value holds a NUL (refused rather than truncated:
 * "x=<secret>%00junk" must not read as <secret>), or on OOM.
 */
char *front_form_value(const char *s, size_t n, const char *name);

/*
 * The value of name in a query (raw, without '?') as a C string: 0 and a new string in
 * *ret ("" for a bare "name"); -ENOENT when absent; -EBADMSG when the decoded value holds
 * a NUL (a parameter that is not text is refused by the caller, never read as absent or
 * truncated); -ENOMEM.
 */
int front_query_value(const char *query, const char *name, char **ret);

/*
 * Percent-decodes a raw path (RFC 3986 §2.1) into a new string and refuses what no
 * twin serves: raw bytes outside VCHAR (RFC 5234: controls, space, DEL, 8-bit),
 * malformed escapes, escapes that decode to a NUL or to anything but well-formed UTF-8
 * (RFC 3629: overlong forms such as %C0%AE, surrogates, above U+10FFFF, truncated
 * sequences), "." or ".." segments (after decoding), paths not starting with '/'.
 * An escaped '/' or '%' stays escaped as "%2F" or "%25" (upper case), so "heads%2Ffix"
 * remains one segment as on github.com; twin_route_match decodes parameters.
 * On success the result is valid UTF-8 without NUL. Returns 0, -EINVAL (the front
 * answers 400), -ENOMEM.
 */
int front_decode_path(const char *raw, char **ret);

/*
 * Checks a raw query (without '?'; NULL or "" is fine) for bytes a request target cannot
 * carry unescaped: anything outside VCHAR (RFC 9112 §3.2, RFC 3986 §3.4). Percent-escapes
 * are left to the twin's form decoder (invalid UTF-8 becomes U+FFFD there). Returns 0 or
 * -EINVAL (the front answers 400 before the call reaches the twin).
 */
int front_check_query(const char *raw_query);

/* One served call, as the front end saw it (all borrowed). */
typedef struct FrontCall {
        const char *twin;
        const char *run_id;     /* the sandbox id, or "local" */
        const char *request_id; /* "req_…", also the tape row's event_id */
        const char *method;
        const char *path;  /* full path as requested, with /s/{sid} */
        const char *query; /* raw, "" if none */
        json_t *headers;   /* lower-case names */
        const char *body;
        size_t body_len;
        double latency_ms;
        int64_t ts_usec; /* wall-clock time the call arrived, µs since the epoch */
} FrontCall;

/*
 * Builds the tape row for a call and its reply, redacted by twin_redact_json
 * (pods/twin/redact.h: values under secret keys, token-looking strings anywhere, object
 * keys included). Returns a new reference, NULL on OOM (also when redaction could not
 * finish: a row is redacted whole or not built). The document form of a row: the
 * gateway splices its rows as bytes (front_tape_line), checked against this one.
 */
json_t *front_tape_row(const FrontCall *fc, const TwinReply *rp);

/*
 * The tape row of a call and its reply as one line of bytes, '\n' included (a new buffer
 * of *ret_len bytes in *ret), spliced from what is already serialized: the reply's tape
 * parts as the pod redacted them (podwire.h), the rest written around them with the same
 * redaction (token-looking words scrubbed from every string, values under secret keys of
 * the request headers replaced). Parses to the same JSON as front_tape_row for the reply
 * rb was encoded from (the unit test holds them side by side), without building or
 * dumping a document. Returns 0, -EINVAL for a string that is not UTF-8 where the
 * document builder would have refused it too, -ENOMEM.
 */
int front_tape_line(const FrontCall *fc, const TwinReplyBytes *rb, char **ret, size_t *ret_len);

/*
 * Builds the tape row of a world change made before the call fc's own (one element of
 * TwinReply.events: {tool, method, path, request_body, status, response_body, state_delta,
 * by_caller?}), redacted as front_tape_row's: a new event id, the call's ts, path =
 * mount_path (the raw path of the twin's mount, "/slack/s/ses_…") + the event's path, no
 * request headers, latency 0, state_mutation true, correlation_id = the call's request id,
 * and origin "twin" (the twin made it on its own) unless by_caller is true (the caller made
 * it: one of several mutations of a GraphQL request). New reference, NULL on OOM.
 */
json_t *front_event_row(const FrontCall *fc, const char *mount_path, const json_t *event);

/* New request id "req_" + 20 base62 characters into buf (>= 25 bytes). 0 or -errno. */
int front_request_id(char buf[static 25]);
