/* SPDX-License-Identifier: MIT */
/*
 * An HTTP/1.1 server on an sd-event loop: the only module that includes
 * libmicrohttpd. pomed's control API and twin gateway and `pome twin start`
 * all serve through it.
 *
 * Model: the handler is called once per request, after the whole body has
 * arrived. It answers with http_reply() (or http_reply_stream()) either before
 * it returns or later from any other event-loop callback (the connection is
 * suspended meanwhile — MHD's suspend/resume). Exactly one reply per request.
 * The request object stays valid until it has been replied to; after that it
 * must not be touched.
 *
 * What never reaches the handler (answered by this layer itself, in the surface's
 * envelope through HttpdConfig.refuse, with `Connection: close`, then the
 * connection is closed — so nothing is routed, authenticated or taped):
 * - 400 for framing a proxy could read differently (RFC 9112 §6.1–6.3, §5, §3.2;
 *   RFC 9110 §5.5): more than one Content-Length field or a list value, a
 *   Content-Length that is not plain digits, Transfer-Encoding with Content-Length,
 *   a Transfer-Encoding other than exactly `chunked` (or any on HTTP/1.0), more than
 *   one Transfer-Encoding field, a header name that is not a token, a NUL, CR, LF or
 *   other control byte in a header value, obs-fold line continuations, a bare LF as
 *   line end, a request-target with a byte outside VCHAR, more than one SP between
 *   the parts of the request line, an HTTP/1.1 request without exactly one Host;
 * - 414 for a request-target over HTTPD_MAX_TARGET bytes, 431 for a header block
 *   over HTTPD_MAX_HEADER_BLOCK bytes or more than HTTPD_MAX_HEADERS fields, 413 for
 *   a body over max_body (from Content-Length before the body is read, or while a
 *   chunked body arrives);
 * - 408 when the request line + headers are not complete within header_timeout of
 *   the connection's accept or of the end of its previous response, or the body not
 *   within body_timeout of the end of the headers (a connection that has not sent a
 *   request line yet is closed without an answer, like an idle keep-alive one).
 * Beyond MHD's per-connection memory (32 KiB: a header block of about 32 560 bytes,
 * about 440 tiny header fields, a request line of about 32 740) and for a malformed
 * single Content-Length or a malformed chunked body, libmicrohttpd answers by itself
 * (431/414/400/413, its HTML body, Connection: close); see httpd.c for what 0.9.75
 * sends there.
 *
 * Fair connections: at most per_client_limit connections per client address (one more
 * gets a 503 `too_many_connections` with Retry-After and is closed), at most
 * connection_limit in all, and the two phase deadlines above are kept on our own
 * clock (MHD's idle timeout restarts on every byte). A request waiting for its
 * reply (the handler's phase, suspended or not) is never cut by this layer: its
 * owner keeps its own deadline. connection_timeout (MHD's inactivity timeout)
 * still bounds a client that stops reading its response.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

/* Limits that bind before libmicrohttpd's own (its per-connection pool is 32 KiB). The
 * header block's is Node.js's default (http.maxHeaderSize, 16 KiB), the runtime of the
 * hosted service's twins. */
#define HTTPD_MAX_TARGET       8192u  /* bytes of request-target; more → 414 */
#define HTTPD_MAX_HEADER_BLOCK 16384u /* bytes of request line + header fields; more → 431 */
#define HTTPD_MAX_HEADERS      128u   /* header fields; more → 431 */

/* Defaults used when the matching HttpdConfig field is 0. */
#define HTTPD_DEFAULT_CONNECTION_LIMIT    1000u
#define HTTPD_DEFAULT_PER_CLIENT_LIMIT    256u
#define HTTPD_DEFAULT_CONNECTION_TIMEOUT  60u /* seconds */
#define HTTPD_DEFAULT_HEADER_TIMEOUT_USEC (10 * UINT64_C(1000000))
#define HTTPD_DEFAULT_BODY_TIMEOUT_USEC   (30 * UINT64_C(1000000))

typedef struct Httpd Httpd;
typedef struct HttpRequest HttpRequest;

typedef void (*HttpHandler)(HttpRequest *rq, void *userdata);

/* What a surface puts in an answer the layer makes by itself. */
typedef struct HttpRefusal {
        json_t *headers; /* object name → string (new reference) or NULL: extra headers */
        json_t *body;    /* new reference, or NULL for the default envelope */
} HttpRefusal;

/*
 * Fills ret (zeroed by the caller) with the surface's envelope for an answer the
 * layer makes itself. path is the raw request path (percent-encoded, query removed)
 * or NULL when the request line was not read; host is the Host header's value as sent, or
 * NULL when there is none or the header block was not read; status is fixed by the layer
 * (400, 408, 413, 414, 431, 500, 503); code is a short machine word ("bad_request",
 * "request_timeout", "request_too_large", "uri_too_long", "headers_too_large",
 * "internal_error", "shutting_down") and message a sentence. userdata is the
 * handler's. Must not block and must not touch any request. Leaving ret empty gives
 * the default {"error":{"type":code,"message":message}}.
 */
typedef void (*HttpRefuseFn)(const char *path, const char *host, int status, const char *code,
                             const char *message, HttpRefusal *ret, void *userdata);

/*
 * Told of every answer as it is handed to the connection, the handler's and the layer's
 * own refusals alike: path and host as in HttpRefuseFn (NULL when not read), the status
 * sent. userdata is the handler's. For counters: must not block nor touch any
 * request.
 */
typedef void (*HttpRepliedFn)(const char *path, const char *host, int status, void *userdata);

typedef struct HttpdConfig {
        const char *address;          /* IPv4/IPv6 literal to bind, e.g. "127.0.0.1" */
        uint16_t port;                /* 0 = ephemeral; see httpd_port() */
        size_t max_body;              /* bytes; a larger body is refused with 413 */
        unsigned connection_limit;    /* MHD_OPTION_CONNECTION_LIMIT; 0 = 1000 */
        unsigned per_client_limit;    /* connections per client address; 0 = 256 */
        unsigned connection_timeout;  /* seconds without I/O progress before MHD closes; 0 = 60 */
        uint64_t header_timeout_usec; /* request line + headers must arrive within; 0 = 10 s */
        uint64_t body_timeout_usec;   /* the body must arrive within; 0 = 30 s */
        HttpRefuseFn refuse;          /* envelope of the layer's own answers; NULL = default */
        HttpRepliedFn replied;        /* told of every answer sent; NULL = nobody */
} HttpdConfig;

/*
 * Starts a server on loop e. handler and userdata are borrowed for the server's life
 * (userdata is also passed to cfg->refuse). Returns 0, -EADDRINUSE / -EACCES /
 * -EADDRNOTAVAIL (bind failed), -EINVAL (bad address), -ENOMEM, -EIO (libmicrohttpd
 * refused to start for another reason).
 */
int httpd_new(sd_event *e, const HttpdConfig *cfg, HttpHandler handler, void *userdata,
              Httpd **ret);

/*
 * Answers every request still waiting with 503 `shutting_down` in the surface's
 * envelope (the handler's reply callbacks must no longer use them afterwards), closes
 * the listener and every connection and frees the server. Accepts NULL; returns NULL.
 */
Httpd *httpd_free(Httpd *d);

/*
 * Stops accepting new connections (listener closed); from now on a request that completes
 * is answered 503 shutting_down without reaching the handler, whose state may be gone,
 * and no reply reaches the replied hook (HttpdConfig.replied) either, for the same reason.
 */
void httpd_quiesce(Httpd *d);

/*
 * Starts draining: from now on every reply carries `Connection: close`, so every
 * connection ends after its next response (an idle keep-alive one is not cut, which would
 * race a request its client may be sending). The listener stays open (new connections get
 * one answer each, e.g. a 503 `shutting_down` from the handler). Idempotent; finish with
 * httpd_quiesce() and/or httpd_free() as usual.
 */
void httpd_drain(Httpd *d);

/* The bound port (useful with port 0). */
uint16_t httpd_port(const Httpd *d);

/* Number of requests currently waiting for an asynchronous reply. */
size_t httpd_pending(const Httpd *d);

/* ---- request accessors: all borrowed, valid until the reply ---- */
const char *http_request_method(const HttpRequest *rq); /* "GET" … as sent */
const char *http_request_path(const HttpRequest *rq);   /* raw (still percent-encoded) path */
const char *http_request_query(const HttpRequest *rq);  /* raw query without '?', "" if none */
/* Header value by case-insensitive name (trailing whitespace removed, RFC 9112 §5), or
 * NULL. A value with a NUL or a control byte never reaches the handler. Borrowed. */
const char *http_request_header(HttpRequest *rq, const char *name);
/* All headers as an object with lower-case names and trimmed values (the last value wins
 * for repeats; a repeated Authorization never reaches the handler). */
json_t *http_request_headers(HttpRequest *rq);
const char *http_request_body(const HttpRequest *rq, size_t *ret_len); /* NUL-terminated */
bool http_request_from_loopback(const HttpRequest *rq);
/* Microseconds (CLOCK_MONOTONIC) when the request line arrived. */
uint64_t http_request_start_usec(const HttpRequest *rq);

/*
 * Answers rq with status, extra headers (object name → string, borrowed, may be NULL)
 * and body (copied; len bytes). Content-Type defaults to application/json when a body is
 * given and headers do not set it. Usable from the handler or later (suspended request).
 * Returns 0, -EALREADY when rq was already answered, -ENOMEM (then the client gets a 500).
 */
int http_reply(HttpRequest *rq, int status, const json_t *headers, const void *body, size_t len);

/* http_reply with body = the compact JSON of body (borrowed; NULL = empty body). */
int http_reply_json(HttpRequest *rq, int status, const json_t *headers, const json_t *body);

/*
 * Holds rq's reply: one set from now on (http_reply…) stays unsent, the connection suspended,
 * until http_request_release sends it — or http_request_unreply drops it for another. For a
 * reply that may only go out once something else is done (a tape row on disk). The owner of
 * a hold must release it before the request's server is freed (httpd_free sends a held reply
 * as it is).
 */
void http_request_hold(HttpRequest *rq);

/* Ends the hold: the reply set meanwhile goes out now, or the next one set does. */
void http_request_release(HttpRequest *rq);

/* Drops the held reply of rq, so that another may be set. 0, or -EINVAL when rq is not held
 * or has no reply set. */
int http_request_unreply(HttpRequest *rq);

/*
 * Reads the bytes at offset pos (bytes from the start of the body) into buf (max
 * bytes, max > 0). Returns the number of bytes (> 0, ≤ max), 0 at the end of the
 * body, or a negative errno: the connection is then closed (the client sees a
 * truncated body). Called on the event loop while the client drains its socket: it
 * must not block for long (reading a local file is fine).
 */
typedef ssize_t (*HttpStreamRead)(void *userdata, uint64_t pos, char *buf, size_t max);

/*
 * Answers rq with a body produced piece by piece by read (MHD_create_response_from_callback),
 * so a large body (a tape) is never held in memory. size is the body length in bytes,
 * or UINT64_MAX when unknown: then HTTP/1.1 clients get chunked transfer coding and
 * HTTP/1.0 ones a body ended by closing the connection. With a known size, read
 * returning 0 before size bytes closes the connection. headers as for http_reply
 * (Content-Type defaults to application/json). Usable from the handler or later.
 * On success (0) userdata belongs to the reply: free_cb (may be NULL) is called
 * exactly once when the reply is done, sent or not. On failure the caller keeps
 * userdata: -EALREADY (rq already answered), -ENOMEM (the client gets a 500).
 */
int http_reply_stream(HttpRequest *rq, int status, const json_t *headers, uint64_t size,
                      HttpStreamRead read, void (*free_cb)(void *), void *userdata);
