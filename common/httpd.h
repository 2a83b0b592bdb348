/* SPDX-License-Identifier: MIT */
/*
 * An HTTP/1.1 server on an sd-event loop: the only module that includes
 * libmicrohttpd. pomed's control API and twin gateway and `pome twin start`
 * all serve through it.
 *
 * Model: the handler is called once per request, after the whole body has
 * arrived (or as soon as it is known to exceed max_body). It answers with
 * http_reply() either before it returns or later from any other event-loop
 * callback (the connection is suspended meanwhile — MHD's suspend/resume).
 * Exactly one reply per request. The request object stays valid until
 * it has been replied to; after that it must not be touched.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

typedef struct Httpd Httpd;
typedef struct HttpRequest HttpRequest;

typedef void (*HttpHandler)(HttpRequest *rq, void *userdata);

typedef struct HttpdConfig {
        const char *address;         /* IPv4/IPv6 literal to bind, e.g. "127.0.0.1" */
        uint16_t port;               /* 0 = ephemeral; see httpd_port() */
        size_t max_body;             /* bytes; larger bodies reach the handler as too large */
        unsigned connection_limit;   /* MHD_OPTION_CONNECTION_LIMIT */
        unsigned connection_timeout; /* seconds of inactivity before an idle connection is closed */
} HttpdConfig;

/*
 * Starts a server on loop e. handler and userdata are borrowed for the server's life.
 * Returns 0, -EADDRINUSE / -EACCES / -EADDRNOTAVAIL (bind failed), -EINVAL (bad address),
 * -ENOMEM, -EIO (libmicrohttpd refused to start for another reason).
 */
int httpd_new(sd_event *e, const HttpdConfig *cfg, HttpHandler handler, void *userdata,
              Httpd **ret);

/*
 * Answers every request still waiting with 503 (the handler's reply callbacks
 * must no longer use them afterwards), closes the listener and frees the server.
 * Accepts NULL; returns NULL.
 */
Httpd *httpd_free(Httpd *d);

/*
 * From now on every reply carries Connection: close, so clients go away as their calls are
 * answered; the listener stays open (pomed answers 503 shutting_down while it drains).
 */
void httpd_drain(Httpd *d);

/* Stops accepting new connections (listener closed); open ones finish. */
void httpd_quiesce(Httpd *d);

/* The bound port (useful with port 0). */
uint16_t httpd_port(const Httpd *d);

/* Number of requests currently waiting for an asynchronous reply. */
size_t httpd_pending(const Httpd *d);

/* ---- request accessors: all borrowed, valid until the reply ---- */
const char *http_request_method(const HttpRequest *rq); /* "GET" … as sent */
const char *http_request_path(const HttpRequest *rq);   /* raw (still percent-encoded) path */
const char *http_request_query(const HttpRequest *rq);  /* raw query without '?', "" if none */
/* Header value by case-insensitive name, or NULL. */
const char *http_request_header(const HttpRequest *rq, const char *name);
/* All headers as an object with lower-case names (the last value wins for repeats). */
json_t *http_request_headers(HttpRequest *rq);
const char *http_request_body(const HttpRequest *rq, size_t *ret_len); /* NUL-terminated */
bool http_request_too_large(const HttpRequest *rq);
bool http_request_from_loopback(const HttpRequest *rq);
/* Microseconds (CLOCK_MONOTONIC) when the request's headers arrived. */
uint64_t http_request_start_usec(const HttpRequest *rq);

/*
 * Answers rq with status, extra headers (object name → string, borrowed, may be NULL)
 * and body (copied; len bytes). Content-Type defaults to application/json when a body is
 * given and headers do not set it. Returns 0, -EALREADY when rq was already answered,
 * -ENOMEM (then the client gets a 500).
 */
int http_reply(HttpRequest *rq, int status, const json_t *headers, const void *body, size_t len);

/* Produces the next bytes of a streamed body at pos: bytes (> 0), 0 at the end, -errno. */
typedef ssize_t (*HttpStreamRead)(void *userdata, uint64_t pos, char *buf, size_t max);

/*
 * Answers rq with a body produced by read in chunks of up to 64 KiB as the connection can
 * take them (size bytes in all; UINT64_MAX = unknown: chunked). free_cb(userdata) runs when
 * the response is done with, whatever happened. Returns 0, -EALREADY, -ENOMEM (then nothing
 * was sent, free_cb did not run, and the caller may still answer otherwise).
 */
int http_reply_stream(HttpRequest *rq, int status, const json_t *headers, uint64_t size,
                      HttpStreamRead read, void (*free_cb)(void *), void *userdata);

/* http_reply with body = the compact JSON of body (borrowed; NULL = empty body). */
int http_reply_json(HttpRequest *rq, int status, const json_t *headers, const json_t *body);
