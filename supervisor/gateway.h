/* SPDX-License-Identifier: MIT */
/*
 * The twin gateway (DESIGN.md "Surfaces"): /{twin}/s/{sid}/… → that sandbox's
 * pod; a request under a vendor's own host name (Host: api.github.com, slack.com…) or on a
 * keyed path (Stripe's /v1/…) → the pod of the sandbox its credential names. It owns HTTP, auth,
 * routing, redaction and the tape; the pod only sees frames. Refusals are deliberately
 * uninformative where they must be: a wrong token and a right token on another sandbox's URL get
 * the same 404 body. A finalize asked from inside the run (POST …/_pome/finalize, the MCP tool
 * finalize_run that every twin of a sandbox lists) never reaches a pod: the gateway runs the
 * control API's finalize for the sandbox the caller's bearer proves, and answers once it is graded.
 */
#pragma once

#include "common/httpd.h"
#include "supervisor/manager.h"

typedef struct Gateway Gateway;

/* A gateway over manager m (borrowed). Returns 0 or -ENOMEM. */
int gateway_new(Manager *m, Gateway **ret);
Gateway *gateway_free(Gateway *g);

/* The HttpHandler of the gateway listener; userdata is the Gateway. */
void gateway_handle(HttpRequest *rq, void *userdata);

/* The HttpRefuseFn of the gateway listener: the envelope of the twin the request is for
 * (its kind's error()) — the vendor's whose host the Host header names, a keyed path's
 * (Stripe's "/v1/…"), the path's first segment's — else the control API's envelope. */
void gateway_refuse(const char *path, const char *host, int status, const char *code,
                    const char *message, HttpRefusal *ret, void *userdata);

/* The fixed body of every "no such pod for you" answer: the same bytes whatever the
 * cause, so it reveals nothing about other sandboxes. */
#define GATEWAY_NO_POD_BODY                                                                   \
        "{\"error\":{\"type\":\"not_found\",\"message\":\"No twin pod for this session.\","   \
        "\"details\":{\"hint\":\"The URL and the token must come from the same sandbox: use " \
        "its rest_url and its session_token (or the twin's provider credential).\"}}}"

/* HttpRepliedFn of the gateway's listener (userdata: the Gateway): counts every answer by
 * twin (as gateway_refuse finds it) and status for /metrics. */
void gateway_replied(const char *path, const char *host, int status, void *userdata);
