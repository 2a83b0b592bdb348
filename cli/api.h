/* SPDX-License-Identifier: MIT */
/*
 * pomed's control API as the CLI sees it: JSON requests with the team API key,
 * the error envelope {"error":{type,message,details,request_id}} and the
 * mapping of outcomes to pome's exit statuses.
 */
#pragma once

#include <jansson.h>

#include "cli/config.h"

typedef struct ApiReply {
        char *url;    /* owned: the URL asked */
        long status;  /* HTTP status */
        json_t *json; /* owned: the parsed body, NULL when the body is empty or not JSON */
        char *body;   /* owned: the raw body, NUL-terminated */
        size_t body_len;
        char *headers; /* owned: the response's header lines (client_header_value reads them) */
        /* Set when the body is an error envelope; borrowed from json. */
        const char *error_type;
        const char *error_message;
        const char *request_id;
        const json_t *error_details;
} ApiReply;

/* Frees what an ApiReply owns and zeroes it. Accepts a zeroed reply. */
void api_reply_done(ApiReply *r);

/*
 * Sends method to c->api_url + path (path starts with "/v1/", its variable
 * parts already escaped), with body (borrowed, may be NULL) as JSON.
 * Returns 0 for a 2xx answer whose body is empty or JSON; -EREMOTEIO for any
 * other HTTP status (*ret filled: hand it to api_exit_status, or inspect it
 * first, as stop does with 409); otherwise a negative errno after printing a
 * one-line error on stderr (pomed unreachable, timeout, a 2xx body that is not
 * JSON: -EBADMSG).
 */
int api_call(const Config *c, const char *method, const char *path, const json_t *body,
             ApiReply *ret);

/* api_request flags */
enum {
        API_ANY_BODY = 1 << 0, /* a 2xx body may be anything (a JSON array, Markdown): json is
                                * its parse when it is JSON, else NULL */
        API_QUIET = 1 << 1,    /* print nothing, not even why pomed could not be reached (a
                                * progress poll that a later call will report on) */
};

/* api_call with flags (API_*). */
int api_request(const Config *c, const char *method, const char *path, const json_t *body,
                unsigned flags, ApiReply *ret);

/*
 * Turns the outcome of config_load or api_call into an exit status
 * (POME_EXIT_*). For -EREMOTEIO it first prints the server's error:
 * "pome: <message> (<type>, request <request_id>)" plus one indented line per
 * scalar detail, or the status and first line of a body that is not an
 * envelope. HTTP 401/403 → AUTH, 402/429 → QUOTA, 409 → REFUSED, others →
 * ERROR; -ENOKEY/-EACCES (no readable key) → AUTH; -EINVAL (bad URL) → USAGE.
 */
int api_exit_status(int r, const ApiReply *reply);
