/* SPDX-License-Identifier: MIT */
/*
 * The twin-serving pipeline, one for every front end (pomed's gateway and
 * `pome twin start`): once a front end has found the twin a request is for and
 * authenticated the caller, everything else happens here the same way —
 * path and target checks in the twin's own envelope, /_pome/events streamed from
 * the tape, the call handed to a backend (a pod, or a twin in-process), the tape
 * row written before the reply goes out.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/httpd.h"
#include "pods/front/tape.h"
#include "pods/twin/podwire.h"
#include "pods/twin/twin.h"

typedef struct FrontExchange FrontExchange;

#define FRONT_EVENTS_PAGE_MAX (4u << 20) /* bytes of one /_pome/events page, every front */

/* The message of a twin call refused, or not acknowledged, because its tape row cannot be
 * written (507 insufficient_storage, in the twin's envelope). */
#define FRONT_NO_STORAGE_MESSAGE                                                              \
        "pomed's state directory cannot be written (full or failing): this call was not "     \
        "carried out, as no tape row of it could be kept. Retry once the operator has freed " \
        "space (pome doctor, /healthz state_dir)."

/* A backend: where a front end's calls go. */
typedef struct FrontBackend {
        /*
         * Starts the call; front_exchange_done(x, …) must follow exactly once, later or
         * before this returns. Returns 0, or a negative errno when the call was not taken
         * (-EBUSY: too many queued → 503 busy; -ENOSPC: its tape cannot be written → 507
         * insufficient_storage; anything else → 502); then done must not run.
         */
        int (*call)(void *userdata, const TwinRequest *rq, FrontExchange *x);
        /*
         * Puts a served call's row on the tape (before its reply goes out); row is NULL when
         * it could not be built (out of memory). Returns 0 or negative errno (the reply
         * still goes out: the world has changed).
         */
        int (*record)(void *userdata, const json_t *row);
        /*
         * The same for a row already serialized (front_tape_line: len bytes ending in '\n',
         * event id event_id); line is NULL when it could not be built. Preferred when set:
         * without it, the line is parsed back for record.
         */
        int (*record_line)(void *userdata, const char *line, size_t len, const char *event_id);
        /*
         * Called with a call's request just before its reply is set, when the call put rows
         * on the tape: a backend whose rows may not be on disk yet holds the reply
         * (http_request_hold) until they are. May be NULL (rows are written before record
         * returns).
         */
        void (*hold)(void *userdata, HttpRequest *rq, const char *request_id);
        void *userdata;
} FrontBackend;

/*
 * A finalize asked from inside the run (POST {mount}/_pome/finalize, or the MCP tool
 * finalize_run over POST {mount}/mcp, /mcp/call or /mcp/tools/finalize_run), waiting for
 * the front end's answer: front_finalize_done() answers it in the surface's envelope.
 */
typedef struct FrontFinalize FrontFinalize;

/* What a front end offers beyond the twin itself, per session. */
typedef struct FrontSession {
        /*
         * Finalizes the sandbox the call is for (the target's run_id), once the front has
         * checked the caller's arguments; NULL when the front end has no run to finalize (a
         * local twin): then finalize_run is not listed and /_pome/finalize refuses (404).
         * front_finalize_done(f, …) must follow exactly once, later or before this returns.
         * userdata is valid only while this runs.
         */
        void (*finalize)(void *userdata, FrontFinalize *f);
        void *userdata;
} FrontSession;

/* The MCP tool a FrontSession with finalize adds to every twin's tools/list. */
#define FRONT_FINALIZE_TOOL "finalize_run"

/* The twin a request is for, as the front end found it (all borrowed for the call). */
typedef struct FrontTarget {
        const TwinKind *kind;
        Tape *tape;               /* for /_pome/events */
        const char *run_id;       /* the tape rows' run_id: the sandbox id */
        const char *mount_url;    /* absolute URL of the twin's mount, no trailing '/' */
        const char *rest;         /* the raw path below the mount ("" or "/…") */
        const char *request_id;   /* "req_…" */
        uint64_t max_page;        /* bytes of one /_pome/events page */
        const char *upload_token; /* the kind's upload token (front_upload_token), or NULL:
                                     handed to the twin in TWIN_UPLOAD_TOKEN_HEADER */
        const char *credential;   /* what the caller authenticated with, or NULL: handed to
                                     the twin in TWIN_CREDENTIAL_HEADER */
        FrontBackend backend;
        FrontSession session; /* zero: the twin alone */
} FrontTarget;

/*
 * Serves rq for target t: answers it, now or when the backend is done. The request must be
 * authenticated already. A finalize (front_finalize_asked) goes to t->session and never
 * to the backend; with a finalize hook, the twin's tool lists (MCP tools/list, GET
 * /mcp/tools) gain finalize_run.
 */
void front_serve(HttpRequest *rq, const FrontTarget *t);

/*
 * Whether rq, below a mount at rest (the raw path under it), asks for a finalize that a
 * front end with a finalize hook answers itself: POST /_pome/finalize, or a well-formed
 * MCP tools/call of finalize_run (JSON-RPC 2.0 with an id and a supported
 * MCP-Protocol-Version header, if any; or POST /mcp/call {tool: "finalize_run"} or POST
 * /mcp/tools/finalize_run). Anything malformed is not one: it goes to the twin, which
 * answers it as it answers any such request. Cheap for every other request (a POST whose
 * target holds neither "/_pome/", "/mcp" nor '%' is decided without a copy).
 */
bool front_finalize_asked(HttpRequest *rq, const char *rest);

/* The sandbox id a finalize is for (the target's run_id; borrowed from f). */
const char *front_finalize_session(const FrontFinalize *f);

/* The longest agent_reply a finalize takes: bytes (GRADE_AGENT_REPLY_KEEP, which the front
 * cannot see; supervisor/gateway.c holds them equal). */
#define FRONT_AGENT_REPLY_MAX (64u << 10)

/* The finalize's agent_reply argument (the agent's final answer, for the judge: at most
 * FRONT_AGENT_REPLY_MAX bytes of UTF-8), borrowed from f, its length in *ret_len; NULL when
 * not given. */
const char *front_finalize_reply(const FrontFinalize *f, size_t *ret_len);

/* How a finalize was asked, for logs: "POST /_pome/finalize" or "MCP finalize_run" (static). */
const char *front_finalize_surface(const FrontFinalize *f);

/*
 * Answers finalize f and frees it. status 200: finalized, body (borrowed) is the answer —
 * the REST body, and the MCP result's structuredContent and text (its compact JSON).
 * Otherwise a refusal: status (the REST form's HTTP status), code (a machine word: the
 * twin's envelope's code, the MCP error's type), message (a sentence) and body the details
 * (borrowed, may be NULL); over MCP it is a tool result with isError: true, whose text is
 * the message (MCP "Tools", Error Handling: a tool's failure is a result, not a protocol
 * error).
 */
void front_finalize_done(FrontFinalize *f, int status, const char *code, const char *message,
                         const json_t *body);

/*
 * Answers rq with one page of tape (CONTRACT.md, /_pome/events): the rows after the query's
 * after (an event id; from the first row when absent) or from its offset (a row number,
 * 0-based: a reader that jumps; after and offset exclude each other), at most its limit
 * (1–1000, 100 with after or offset; all rows when none is given) and max_page bytes, as a
 * JSON array streamed from the file, with X-Pome-Total-Events, X-Pome-Offset (the row number
 * of the page's first row) and, while rows follow, X-Pome-Next-After and a Link rel="next"
 * to link (an absolute URL; "after" and "limit" are appended with '?' or '&'). Returns 0
 * when answered; otherwise nothing is sent and *ret_why (static text) says why: -EINVAL for
 * a bad after, offset or limit, -ENOENT when after names no row (both the caller's 400),
 * another negative errno (its 500).
 */
int front_reply_tape(HttpRequest *rq, Tape *tape, const char *link, uint64_t max_page,
                     const char *request_id, const char **ret_why);

/* Whether the call of x is agent activity that goes on the tape (not a /_pome/ read). */
bool front_exchange_recorded(const FrontExchange *x);

/*
 * The backend's answer to the call of x (err: 0 with rb, or -ETIMEDOUT, -ECONNRESET,
 * -EPROTO): the tape row spliced from rb's bytes, then rb's body forwarded as it is.
 * rb is borrowed for the call.
 */
void front_exchange_done_bytes(FrontExchange *x, int err, const TwinReplyBytes *rb);

/* front_exchange_done_bytes for a backend that has a TwinReply (an in-process twin). */
void front_exchange_done(FrontExchange *x, int err, TwinReply *rp);

/*
 * Answers rq with status and kind's own error envelope (kind->error) as the body, an
 * X-Request-Id header, and Retry-After for 503. The status stays the front's whatever the
 * twin would map it to (Slack answers its API errors with HTTP 200).
 */
void front_reply_error(HttpRequest *rq, const TwinKind *kind, int status, const char *code,
                       const char *message, const char *request_id);

/* An HttpRefuseFn's answer in kind's own error envelope (body and headers into ret). */
void front_refusal(const TwinKind *kind, int status, const char *code, const char *message,
                   HttpRefusal *ret);

/* Answers rq with status, extra headers (may be NULL), body (may be NULL), X-Request-Id. */
void front_reply(HttpRequest *rq, int status, json_t *headers, const json_t *body,
                 const char *request_id);
