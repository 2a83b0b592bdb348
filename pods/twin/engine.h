/* SPDX-License-Identifier: MIT */
/*
 * Engine internals shared by engine.c, mcp.c, route.c and form.c (and their fuzzers).
 * Not for kinds: they use kind.h.
 */
#pragma once

#include "pods/twin/kind.h"

/*
 * Decodes an application/x-www-form-urlencoded string (WHATWG URL "urlencoded parser":
 * '&' separated, '+' is a space, %XX escapes) into a new JSON object of strings, with the
 * bracket convention of Rack and Stripe: "metadata[k]=v" nests objects, "expand[]=x" always
 * appends to an array, "items[0][price]=p" makes "items" an array when all its keys are
 * indices. Later pairs win over earlier ones. Malformed pieces are kept literally and
 * invalid UTF-8 becomes U+FFFD, but a key or value that decodes to a NUL byte ("%00") is
 * refused: no string of a world holds U+0000 (JSON bodies: jansson refuses "\u0000").
 * Returns 0, -EBADMSG for a NUL, -ENOMEM.
 */
int twin_form_parse(const char *s, size_t len, json_t **ret);

/*
 * twin_form_parse where invalid UTF-8 is refused instead of mended: -EILSEQ, with the key of
 * the first offending pair (mended, a new string) in *ret_bad when ret_bad is not NULL.
 */
int twin_form_parse_strict(const char *s, size_t len, json_t **ret, char **ret_bad);

/* ----- multipart/form-data (multipart.c) ----- */

#define TWIN_MULTIPART_BOUNDARY_MAX 70 /* bytes of a boundary (RFC 2046 §5.1.1) */
#define TWIN_MULTIPART_MAX_PARTS    64 /* parts of one body */
#define TWIN_MULTIPART_MAX_HEADERS  8  /* header lines of one part (each at most 1 KiB) */

/* One part of a multipart/form-data body. */
typedef struct TwinPart {
        char *name;         /* Content-Disposition name: UTF-8, no control bytes, not empty */
        char *filename;     /* its filename (same rules, may be ""), NULL for a plain field */
        char *content_type; /* the part's Content-Type, NULL when it names none */
        const char *data;   /* the part's bytes, borrowed from the body */
        size_t len;         /* bytes */
} TwinPart;

typedef struct TwinMultipart {
        TwinPart *parts; /* in body order */
        size_t n;
} TwinMultipart;

/*
 * The boundary parameter of a Content-Type "multipart/form-data; boundary=…" (token or
 * quoted-string; RFC 2046 §5.1.1: 1 to 70 bchars, no trailing space; exactly one) into ret.
 * 0, -EINVAL (another media type, no boundary, two, or an invalid one), -ENOMEM.
 */
int twin_multipart_boundary(const char *content_type,
                            char ret[static TWIN_MULTIPART_BOUNDARY_MAX + 1]);

/*
 * Splits a multipart/form-data body (RFC 7578) of len bytes framed by content_type's
 * boundary into *ret (release with twin_multipart_done; data points into body). Strict where
 * readers could frame it differently: the body starts with the first boundary line (no
 * preamble) and ends with the closing one (then nothing, or one CRLF); every line is CRLF
 * terminated (no bare LF, no transport padding, no folded headers); a boundary line that
 * only starts with the boundary, a part without a form-data Content-Disposition name, a
 * repeated name/filename parameter or header, filename*, and a Content-Transfer-Encoding
 * other than 7bit/8bit/binary are refused; at most TWIN_MULTIPART_MAX_PARTS parts of
 * TWIN_MULTIPART_MAX_HEADERS header lines. Returns 0, -EBADMSG with a static sentence in
 * *ret_why (may be NULL), -ENOMEM.
 */
int twin_multipart_parse(const char *content_type, const char *body, size_t len, TwinMultipart *ret,
                         const char **ret_why);

/* Releases what twin_multipart_parse made and zeroes *m. Accepts a zeroed one. */
void twin_multipart_done(TwinMultipart *m);

/*
 * Deepest nesting of arrays and objects accepted in a request's JSON (bodies, MCP
 * arguments). A reply carries the request body, and a state_delta a row holding it, a
 * few levels deeper; pomed's decoder stops at jansson's 2048 levels, so the twin refuses
 * (400, its own envelope) long before anything it stored could not be sent back.
 */
#define TWIN_JSON_MAX_DEPTH 64

/* Nesting depth of j: 0 for a scalar, 1 for [] or {}, … Stops counting past limit. */
size_t twin_json_depth(const json_t *j, size_t limit);

/*
 * Matches path against a route pattern ("/repos/{owner}/{repo}"; {x} matches exactly one
 * non-empty segment, a last segment {x+} the non-empty rest of the path, slashes included; one
 * trailing '/' on path is ignored). On a match adds each {x} → the segment (string) to params when
 * params is not NULL and returns 1; returns 0 for no match, -ENOMEM.
 */
int twin_route_match(const char *pattern, const char *path, json_t *params);

/*
 * "METHOD pattern" for each route plus the engine's own surfaces (new array), for the
 * 501 body. NULL on OOM.
 */
json_t *twin_kind_supported(const TwinKind *k);

/* An OpenAPI 3.1 document of the kind's routes (operationId = the action's tool
 * name, request body = its input schema), servers[0] = base_url. New reference. */
json_t *twin_kind_openapi(const TwinKind *k, const char *base_url);

/*
 * Runs action a with args (borrowed; NULL = {}) and stamps rp->tool. rq is the HTTP request
 * or NULL over MCP; base_url the mount URL (NULL = ""). Returns 0 or negative errno
 * (-ENOMEM, -EIO when the action left no valid status).
 */
int twin_run_action(Twin *t, const TwinAction *a, json_t *args, const TwinRequest *rq,
                    const char *base_url, TwinReply *rp);

/*
 * Last touches on every reply: r < 0 (a failed serve) replaces the reply with the kind's
 * 500; fidelity defaults to "semantic"; status >= 400 gets an error message (the body's
 * message/error, else "HTTP <status>").
 */
void twin_reply_finish(Twin *t, TwinReply *rp, int r);

/* POST /mcp (one JSON-RPC message), GET /mcp/tools, POST /mcp/call and POST /mcp/tools/{name}
 * (twin_mcp_call tells them apart by rq->path). 0 or -ENOMEM. */
int twin_mcp_jsonrpc(Twin *t, const TwinRequest *rq, TwinReply *rp);
int twin_mcp_list(Twin *t, TwinReply *rp);
int twin_mcp_call(Twin *t, const TwinRequest *rq, TwinReply *rp);
