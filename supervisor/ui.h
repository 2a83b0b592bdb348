/* SPDX-License-Identifier: MIT */
/*
 * The dashboard's files (issue 30; DESIGN.md "Where the next parts live"): GET and HEAD of
 * /ui/… on the control listener, answered from the UI directory — static HTML, JavaScript and
 * CSS that speak only the public control API, with the team key the browser keeps. The files
 * need no key (they hold none); every call they make carries one.
 */
#pragma once

#include <stdbool.h>

#include "common/httpd.h"
#include "supervisor/config.h"

typedef struct Ui Ui;

/*
 * The UI directory: pomed.conf ui_dir (then only it), else the first of $POME_UI_DIR, this
 * source tree's ui/ and /usr/share/pome/ui that holds an index.html. None existing is no error:
 * /ui/ then answers 404 saying where it looked. 0 or -ENOMEM.
 */
int ui_new(const Config *cfg, Ui **ret);
Ui *ui_free(Ui *ui);

/*
 * Answers rq when its path is /ui or below (true), else leaves it (false). /ui → 308 to /ui/;
 * /ui/ → index.html; /ui/<path> → that file, when every component of path is made of
 * [A-Za-z0-9_.-], starts with neither '.' nor '-', and names a regular file (no symbolic
 * link) of at most UI_FILE_MAX bytes; else 404. GET and HEAD only (405). Errors are the
 * control API's JSON envelope with request_id. Every answer carries a Content-Security-Policy
 * that allows only the page's own origin (no inline script or style), nosniff, no referrer.
 */
bool ui_handle(Ui *ui, HttpRequest *rq, const char *request_id);

#define UI_FILE_MAX (4u << 20) /* bytes */
