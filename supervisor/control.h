/* SPDX-License-Identifier: MIT */
/*
 * The control API (DESIGN.md "Surfaces", CONTRACT.md "Sandbox API shapes"):
 * team-key authenticated JSON over HTTP; /v1/sessions… is a permanent alias of
 * /v1/sandboxes…. Every error uses one envelope:
 * {"error":{"type","message","details","request_id"}}.
 */
#pragma once

#include "common/httpd.h"
#include "supervisor/manager.h"

typedef struct Control Control;

int control_new(Manager *m, Control **ret);
Control *control_free(Control *c);

/* The HttpHandler of the control listener; userdata is the Control. */
void control_handle(HttpRequest *rq, void *userdata);

/* The HttpRefuseFn of the control listener: the control envelope (validation_failed,
 * or internal_error for 5xx) with details.reason = code and a fresh request id. */
void control_refuse(const char *path, const char *host, int status, const char *code,
                    const char *message, HttpRefusal *ret, void *userdata);
