/* SPDX-License-Identifier: MIT */
/*
 * HTTP client (pome's control API calls, the judge of [model] criteria). It turns libcurl's
 * CURLcode into negative errnos plus a human message, and knows nothing about the JSON it
 * carries. The one other module that includes <curl/curl.h> is supervisor/ledger-etcd.c,
 * which needs what this client does not offer: etcd's endpoints tried in turn, TLS client
 * certificates, a streaming watch on a thread of its own.
 */
#pragma once

#include <stddef.h>

/* Bodies larger than this are refused. Most control API answers are kilobytes; a twin's
 * final world (GET …/state) and a page of tape (at most 4 MiB) are the large ones. */
#define CLIENT_BODY_MAX (64u * 1024u * 1024u)

#define CLIENT_CONNECT_TIMEOUT_SEC 5L
#define CLIENT_TOTAL_TIMEOUT_SEC   60L

typedef struct ClientResponse {
        long status; /* HTTP status code */
        char *body;  /* owned, NUL-terminated (also when empty); body_len excludes the NUL */
        size_t body_len;
        char *headers; /* owned: the response's header lines as received ("Name: value\r\n"…),
                        * NUL-terminated; NULL when there were none */
} ClientResponse;

/* Why a request produced no response, for a human: libcurl's own wording. */
typedef struct ClientError {
        char message[512];
} ClientError;

/* What a request sends besides its method, URL and body. */
typedef struct ClientOptions {
        const char *bearer;         /* sent as "Authorization: Bearer <bearer>" (no CR/LF); NULL:
                                     * no Authorization header */
        const char *const *headers; /* more header lines, "Name: value" (no CR/LF),
                                     * NULL-terminated; NULL for none */
        long timeout_sec;           /* the whole request; 0: CLIENT_TOTAL_TIMEOUT_SEC */
} ClientOptions;

/*
 * client_request with options: the bearer optional, more headers, another total timeout.
 * Errors as client_request's.
 */
int client_request_with(const char *method, const char *url, const ClientOptions *o,
                        const char *body, ClientResponse *ret, ClientError *ret_error);

/*
 * Sends one request and reads the whole response.
 *   method   "GET", "POST", "DELETE"…
 *   url      absolute http:// or https:// URL (path and query already escaped)
 *   bearer   sent as "Authorization: Bearer <bearer>"; must hold no CR/LF
 *   body     JSON text sent with Content-Type: application/json, or NULL
 * Timeouts: CLIENT_CONNECT_TIMEOUT_SEC to connect, CLIENT_TOTAL_TIMEOUT_SEC in
 * all. Redirects are not followed. The standard proxy variables (http_proxy,
 * https_proxy, no_proxy…) are honoured, except for loopback hosts (localhost,
 * 127.0.0.0/8, ::1), which are always reached directly.
 * Any HTTP status is a success here: *ret is filled and 0 returned.
 * Errors (ret_error->message says more): -ECONNREFUSED (could not connect),
 * -EHOSTUNREACH (host not resolved), -ETIMEDOUT, -EFBIG (body over
 * CLIENT_BODY_MAX), -EINVAL (malformed or non-HTTP URL), -ECONNRESET
 * (connection dropped or empty reply), -ENOMEM, -EPROTO (anything else,
 * TLS included).
 */
int client_request(const char *method, const char *url, const char *bearer, const char *body,
                   ClientResponse *ret, ClientError *ret_error);

/*
 * The value of the first header field called name (case-insensitive, RFC 9110 §5.1) in a
 * header block as ClientResponse.headers holds it, surrounding whitespace removed: a new
 * string, or NULL when absent (or on OOM).
 */
char *client_header_value(const char *headers, const char *name);

/* Frees what a ClientResponse owns and zeroes it. Accepts a zeroed response. */
void client_response_done(ClientResponse *r);

/*
 * Percent-encodes s for use as one path segment or query value (RFC 3986
 * unreserved characters stay as they are). Returns a new string, NULL on OOM.
 */
char *client_escape(const char *s);
