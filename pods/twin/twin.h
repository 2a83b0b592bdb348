/* SPDX-License-Identifier: MIT */
/*
 * The twin engine: a pure request → reply (+ tape metadata) function over an
 * in-memory world (a jansson document) loaded from a seed. No I/O, no logging,
 * no knowledge of the supervisor. Three front ends drive it: the pod loop
 * (pome-pod), `pome twin start` (in-process HTTP) and `pome eval`.
 *
 * A twin *kind* (github, slack, stripe) is a static table of actions and
 * routes. An *action* is one twin operation with one name: it is the MCP tool
 * name and the tape row's `tool`, whether it was reached over REST or MCP
 * (CONTRACT.md "Tape row"). REST routes map a method + path pattern onto an
 * action; path parameters, query parameters and the body are merged into one
 * JSON `args` object, which is exactly what an MCP tools/call carries.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Twin Twin;

/* One HTTP request below a twin's mount, as the front end decoded it. All borrowed. */
typedef struct TwinRequest {
        const char *method; /* upper-case: "GET", "POST", ... */
        const char *path;   /* percent-decoded path below the mount, starts with '/';
                             * "%2F" and "%25" stay escaped (front_decode_path) */
        const char *query;  /* raw query string without '?', "" when none */
        json_t *headers;    /* object: lower-case header name → string */
        const char *body;   /* raw body bytes (may be NULL when body_len is 0) */
        size_t body_len;    /* bytes */
        const char
                *base_url; /* absolute URL of the mount, no trailing '/' (for Link headers, urls) */
} TwinRequest;

/* The reply and the tape metadata of one call. Every pointer is owned by the reply. */
typedef struct TwinReply {
        int status;           /* HTTP status */
        json_t *headers;      /* object name → string of extra response headers, or NULL */
        json_t *body;         /* JSON body, NULL for an empty body (204, 202); a JSON
                                 string under a non-JSON Content-Type header is a text
                                 body (twin_reply_text) */
        char *tool;           /* action the caller named, NULL when the surface declares none */
        bool state_mutation;  /* true only if the call changed the world */
        json_t *state_delta;  /* {before, after} of the touched row, or NULL */
        const char *fidelity; /* static string: "semantic" or "unsupported" */
        char *error;          /* human message when status >= 400, else NULL */
        json_t *request_body; /* the request body parsed (JSON, or form/query as an object), or NULL
                               */
        bool idempotency_dedupe; /* Stripe: replayed from an Idempotency-Key */
        json_t *events;          /* world changes made before this call's own, in order, or NULL: an
                                    array of {tool, method, path, request_body, status, response_body,
                                    state_delta, by_caller?}, each its own tape row ahead of the call's
                                    (front_event_row). The twin's own (a scheduled message come due) are
                                    set by twin_handle / twin_call_action; an action appends the changes
                                    of its caller beyond its last (by_caller: a GraphQL request's
                                    earlier mutations, pods/github/graphql.c). */
} TwinReply;

/* Releases everything a reply owns and zeroes it. Accepts a zeroed reply. */
void twin_reply_done(TwinReply *rp);

/* What an action handler gets. */
typedef struct TwinCall {
        Twin *twin;
        json_t *world; /* borrowed, mutable */
        json_t *args;  /* borrowed: merged path params + query + body, or MCP arguments */
        const TwinRequest *request; /* the HTTP request, or NULL when called over MCP */
        const char *base_url;       /* mount URL (never NULL; "" when unknown) */
        int64_t now;                /* seconds since the epoch, one value per call */
} TwinCall;

/*
 * An action handler fills rp->status, rp->body, and, when it changes the world,
 * rp->state_mutation and rp->state_delta. The engine stamps tool, fidelity and
 * error. Returns 0; a negative errno only for internal failures (-ENOMEM), which
 * the engine turns into a 500.
 */
typedef int (*TwinActionFn)(TwinCall *c, TwinReply *rp);

/*
 * A kind's action handler bound to its name. The kind's surface (tools, descriptions,
 * input schemas, REST routes) is data: pods/<kind>/surface.json, embedded at build time
 * (pods/CMakeLists.txt); the C side only says which function serves which name.
 */
typedef struct TwinHandler {
        const char *tool; /* the action's name in surface.json */
        TwinActionFn fn;
} TwinHandler;

/* One action of a kind, as its surface declares it. */
typedef struct TwinAction {
        const char *tool; /* MCP tool name == tape `tool` value */
        TwinActionFn fn;
        bool read_only;         /* MCP annotation readOnlyHint */
        bool mcp;               /* listed and callable as an MCP tool (false: a REST-only action) */
        const char *array_body; /* a JSON body that is an array is this argument's value (GitHub's
                                   labels: ["bug"] for {"labels": ["bug"]}); NULL: an array body
                                   is refused as any body that is not an object */
        bool any_body;      /* reads a body of any media type (JSON, form, multipart, other bytes)
                               even in a kind flagged TWIN_KIND_FORM_BODY or TWIN_KIND_JSON_BODY:
                               a route that is not the vendor's API (Stripe's x402 resources) */
        bool output_schema; /* its tool declares an outputSchema: over MCP, a text reply carries
                               structuredContent {} too (MCP 2025-06-18 "Output Schema") */
} TwinAction;

/* One REST route: method + path pattern → action, with fixed arguments. */
typedef struct TwinRoute {
        const char *method;  /* "GET", "POST", "PATCH", "PUT", "DELETE", or "*" for any */
        const char *pattern; /* "/repos/{owner}/{repo}/issues/{issue_number}"; {x} matches one
                                segment */
        const char *tool;    /* the action this route invokes (by TwinAction.tool) */
        json_t *args;        /* arguments the route fixes ({"method": "get"}), or NULL; they
                                win over the caller's */
} TwinRoute;

/*
 * A kind's surface, as its surface.json declares it (the shape; built from the tables the
 * build makes of it, see TwinSurfaceText):
 *   {"tools": [{"name", "description", "readOnly", "mcp"?: true, "anyBody"?: false,
 *               "arrayBody"?: null,
 *               "inputSchema"}],
 *    "prefixes"?: ["", "/api"],   every route is also served under each prefix
 *    "routes": [[method, pattern, tool, fixed-args?], ...],
 *    "vendor_routes"?: [[method, pattern], ...]}
 * Routes are tried in order; the first match wins. vendor_routes are what the vendor serves
 * on the paths of routes and the twin does not: a request that matches a route's path (a
 * pattern without {x+}) but neither a route's method nor a vendor route is the vendor's own
 * 404 (it exists nowhere), anything else unserved is the loud 501.
 */
typedef struct TwinSurface {
        TwinAction *actions;
        size_t n_actions;
        const TwinAction **by_name; /* the actions sorted by tool, for twin_kind_action */
        size_t n_tools;             /* actions with mcp = true */
        TwinRoute *routes;
        size_t n_routes;
        TwinRoute *vendor_routes; /* served by the vendor, not by the twin (tool NULL) */
        size_t n_vendor_routes;
} TwinSurface;

/* Why the front end refused a caller before any action ran. */
typedef enum TwinAuthFailure {
        TWIN_AUTH_MISSING,       /* no credential at all */
        TWIN_AUTH_INVALID,       /* a credential that does not verify (or has no auth scheme) */
        TWIN_AUTH_EXPIRED,       /* a good credential for this sandbox whose exp has passed */
        TWIN_AUTH_WRONG_SESSION, /* a good credential of this twin, minted for another sandbox */
} TwinAuthFailure;

enum {
        TWIN_KIND_TOKEN_PARAM = 1u
                                << 0, /* credential may come as ?token= or a form field (Slack) */
        TWIN_KIND_RAW_KEY =
                1u << 1, /* Authorization may be the bare key without a scheme (Stripe) */
        /* Every request body is JSON whatever its Content-Type says, and only a GET or
         * HEAD reads parameters from the query (GitHub REST: "parameters not included in
         * the URL should be encoded as JSON"; a form body is 400 "Problems parsing JSON") */
        TWIN_KIND_JSON_BODY = 1u << 2,
        /* Every body is application/x-www-form-urlencoded (Stripe v1: another Content-Type,
         * JSON included, is its 400 "Invalid request (check that your POST content type is
         * application/x-www-form-urlencoded)"), and invalid UTF-8 in a form or a query is
         * refused (invalid_utf8) instead of mended: api.stripe.com answers "Invalid UTF-8
         * characters found in POST body" */
        TWIN_KIND_FORM_BODY = 1u << 3,
        /*
         * The rest below are hosted Pome's frozen shapes of the surfaces around the vendor's
         * API (its twins' runtime contract, ../shared/contract-suite), which differ per twin.
         * The control surfaces (/admin/seed, {mount}/mcp/call) read a form or JSON
         * body whatever the kind's API reads, a malformed JSON body as {} (Slack's and
         * Stripe's tolerant parse); without it, they read JSON strictly.
         */
        TWIN_KIND_TOLERANT_CONTROL = 1u << 4,
        /* POST {mount}/mcp/call also takes {name, params} for {tool, arguments} (Slack) */
        TWIN_KIND_CALL_ALIASES = 1u << 5,
        /* GET {mount}/healthz is no route of the twin's: its loud 501 (Stripe) */
        TWIN_KIND_NO_SESSION_HEALTHZ = 1u << 6,
        /* /admin/seed leaves no tape row (Stripe) */
        TWIN_KIND_SEED_UNTAPED = 1u << 7,
        /* /admin/seed's body may wrap the seed as {seed: …} (Slack) */
        TWIN_KIND_SEED_WRAPPED = 1u << 8,
        /* /admin/seed's tape row carries the world's change, state_delta {before, after} (the
         * public states), where the others' carry null (Linear) */
        TWIN_KIND_SEED_DELTA = 1u << 9,
        /* Only keyed_prefix and the paths below it are keyed on the local twin's root; any
         * other root path is its unknown route (404), not the 401 of an auth wall (Gmail:
         * googleapis resolves its paths against a rootUrl's origin, so /gmail/v1 is keyed,
         * and hosted Pome's Gmail twin answers an unknown root route 404) */
        TWIN_KIND_KEYED_PREFIX_ONLY = 1u << 10,
};

/* Refusals of the control surfaces whose envelope hosted Pome froze per twin. */
typedef enum TwinControlError {
        TWIN_CONTROL_FORBIDDEN,    /* the admin routes refused by their gate (403) */
        TWIN_CONTROL_BAD_BODY,     /* /admin/seed: a body that is no JSON (strict kinds only) */
        TWIN_CONTROL_BAD_SEED,     /* /admin/seed: a seed load_seed refused; detail = why */
        TWIN_CONTROL_UNKNOWN_TOOL, /* /mcp/call: detail = the name of no tool */
        TWIN_CONTROL_NO_TOOL,      /* /mcp/call: the body names no tool */
} TwinControlError;

/* A tool of a kind's surface as a table holds it: surface.json's name, readOnly, mcp (absent:
 * true), anyBody (absent: false) and arrayBody (absent: NULL). */
typedef struct TwinToolDef {
        const char *name;
        bool read_only, mcp, any_body;
        const char *array_body;
        bool output_schema; /* the tool has an outputSchema object */
} TwinToolDef;

/* A route as a table holds it: pattern with its prefix already in front, args the fixed
 * arguments' JSON text (an object) or NULL; a vendor route has tool and args NULL. */
typedef struct TwinRouteDef {
        const char *method, *pattern, *tool, *args;
} TwinRouteDef;

/*
 * A kind's surface.json as embedded at build time (cmake/embed-surface.cmake): the whole
 * document; each tool's input schema alone, in the order of "tools"; and what a process
 * keeps of it (names, flags, routes) as tables, in the document's order, every route once
 * per prefix, so that a pod starts without parsing JSON. twin_kind_check compares the
 * tables with the document.
 */
typedef struct TwinSurfaceText {
        const char *full;
        const char *const *schemas; /* n_schemas of them */
        size_t n_schemas;
        const TwinToolDef *tools;
        size_t n_tools;
        const TwinRouteDef *routes;
        size_t n_routes;
        const TwinRouteDef *vendor_routes;
        size_t n_vendor_routes;
} TwinSurfaceText;

typedef struct TwinKind {
        const char *name;               /* "github", "slack", "stripe" */
        const char *implementation;     /* "pome-github" */
        unsigned flags;                 /* TWIN_KIND_* */
        const TwinSurfaceText *surface; /* its surface.json, embedded at build time */
        const TwinHandler *handlers;
        size_t n_handlers;

        /*
         * The vendor's own host names, NULL-terminated: the hosts of its API's base URLs, by
         * which a caller that reaches the twin as it would reach the vendor (an agent whose
         * names and TLS pome holds) addresses it. A front routes a request whose Host is one
         * of them to this kind, the sandbox named by its credential (front_vendor_kind). An
         * entry "*.example.com" names every subdomain of example.com, at any depth, and not
         * example.com itself. The first entry is a plain name, the host of the API's base
         * URL: the origin of the URLs the twin writes for a call that came by name.
         */
        const char *const *vendor_hosts;

        /*
         * A path the vendor's SDKs use on whatever host they are given as their API base, and
         * nothing else uses (Stripe's "/v1": api_base takes a host and no path prefix), or
         * NULL. The prefix and every path below it are routed as on a vendor host, on any
         * host (front_keyed_kind), the mount staying the front's own.
         */
        const char *keyed_prefix;

        /*
         * Validates a seed and turns it into the initial world (a new reference in
         * *ret_world; the seed itself is borrowed and not modified). Deterministic:
         * the same seed gives the same world. On a bad seed returns -EINVAL and writes a
         * human message (what is wrong and where, e.g. "repositories[0].issues[2]: number
         * must be a positive integer") into err (errlen bytes, always NUL-terminated).
         */
        int (*load_seed)(const json_t *seed, json_t **ret_world, char *err, size_t errlen);

        /*
         * The members a seed may have, NULL-terminated (what load_seed knows; NULL: not
         * declared). A TWIN_KIND_TOLERANT_CONTROL kind's /admin/seed ignores the others, and
         * says which (hosted Pome's Slack and Stripe twins accept any seed body).
         */
        const char *const *seed_keys;

        /* The world as /_pome/state shows it, secrets redacted. New reference, NULL on OOM. */
        json_t *(*public_state)(const json_t *world);

        /* Fills rp with the vendor's own refusal (status, body) of a caller front_authenticate
         * did not let through, for each TwinAuthFailure. */
        void (*auth_error)(TwinAuthFailure why, TwinReply *rp);

        /*
         * Fills rp with the vendor's error envelope for an engine-detected problem
         * (malformed body, unknown method). code is a short machine word
         * ("invalid_json"), message a sentence.
         */
        void (*error)(int status, const char *code, const char *message, TwinReply *rp);

        /*
         * Fills rp (status and body) with the kind's answer to a refusal of a control
         * surface, as hosted Pome's twin of the same vendor answers it: e.g. GitHub's 422
         * "Validation Failed" for a bad seed, Slack's 500 internal_error, Stripe's 400
         * parameter_invalid. detail is a sentence or a name (see TwinControlError), may be
         * NULL.
         */
        void (*control_error)(TwinControlError what, const char *detail, TwinReply *rp);

        /*
         * Optional. Adds the kind's members to the bodies of GET /healthz (health false) and
         * GET {mount}/_pome/health (health true) beyond the core hosted Pome's contract
         * gives every twin, whose key sets it froze per twin. Returns 0 or -ENOMEM.
         */
        int (*health_extras)(const Twin *t, json_t *body, bool health);

        /*
         * Optional. Applies the world changes that came due by c->now without a caller (the
         * twin has no timer: the engine asks before every call, /_pome/state included), and
         * appends one event per change to events (shape: TwinReply.events). c->args is {} and
         * c->request NULL. Returns 0 or -ENOMEM; changes applied before a failure stay, with
         * their events.
         */
        int (*advance)(TwinCall *c, json_t *events);

        /*
         * Optional. Adds to rp what the vendor sends on every reply of its API to the REST
         * request rq (rate-limit headers; an ETag, and a conditional read's 304 in place of
         * the body), after the route's action ran; now is the call's clock (seconds since the
         * epoch). Not called for /_pome, MCP or a refusal before the action. 0 or -ENOMEM.
         */
        int (*vendor_headers)(const TwinRequest *rq, int64_t now, TwinReply *rp);

        /*
         * Optional. The header the vendor names its request id in (Stripe's Request-Id,
         * which stripe-python and stripe-node read as last_response.request_id): the front
         * sends the call's id in it too, beside X-Request-Id, on every reply it gives.
         */
        const char *request_id_header;

        /*
         * Optional. The path (a prefix below the mount) of the kind's pre-signed URLs, to
         * which a client sends bytes with no credential of its own (Slack's upload_url,
         * "/_upload/"). The front hands the twin, on every call, a narrow token ("<kind>-
         * upload", common/token.h) in the request header TWIN_UPLOAD_TOKEN_HEADER for it to
         * put in such a URL (as ?token=); that token opens this path of this sandbox only.
         */
        const char *upload_path;

        /*
         * Optional. value (borrowed: a tape row's request or response body, or a world) as a
         * judge of [model] criteria should read it: what the vendor encodes for the wire made
         * readable (Gmail's base64url `raw` and text parts' `body.data` as their text), so that
         * a criterion about what a message says can be judged from any client's calls. A new
         * reference: a changed copy, or value itself when nothing in it is encoded; NULL on OOM.
         */
        json_t *(*judge_view)(const json_t *value);
} TwinKind;

/* The request header in which the front hands the twin its upload token (upload_path);
 * the front drops one a client sent. */
#define TWIN_UPLOAD_TOKEN_HEADER "x-pome-upload-token"

/* The request header in which the front tells the twin what the caller's credential is:
 * its provider ("slack" for Slack's bot token, "slack-user" for its user token, …,
 * common/token.h) or "session" (a session JWT); absent without a front. The front drops
 * one a client sent. */
#define TWIN_CREDENTIAL_HEADER "x-pome-credential"

/* The kind called name, or NULL. */
const TwinKind *twin_kind_find(const char *name);

/* NULL-terminated list of all kind names, in a fixed order (github, slack, stripe...). */
const char *const *twin_kind_names(void);

/*
 * Creates a twin instance of kind k from seed (borrowed; NULL = the empty world
 * the kind's load_seed makes of {}). Returns 0, -EINVAL with a message in err
 * (errlen bytes) for a seed the kind rejects, -ENOMEM.
 */
int twin_new(const TwinKind *k, const json_t *seed, Twin **ret, char *err, size_t errlen);

/* Frees a twin and its world. Accepts NULL; returns NULL. */
Twin *twin_free(Twin *t);

const TwinKind *twin_kind(const Twin *t);

/* The live world (borrowed; valid until the next call that mutates it); NULL while the
 * twin is packed (twin_pack). */
json_t *twin_world(Twin *t);

/*
 * Packs the world of an idle twin: dumps it as compact JSON into pages of its own
 * (mmap) and frees the tree, whose jansson objects take ~8× the bytes (the GitHub
 * default world: ~65 KiB of heap, 7.6 KB packed). The bytes are checked to load back
 * (json_scan_compact) before the tree goes; a world that would not dump or load back the
 * same (a string made with json_stringn_nocheck from bytes that are not UTF-8) stays a
 * tree. Until twin_unpack, twin_world is NULL and nothing but twin_unpack,
 * twin_packed, twin_world_replace, twin_reseed and twin_free may be called.
 * 1 packed, 0 nothing to do (already packed, or a world of less than a page, whose
 * pages would cost more than its tree), -EBADMSG the world does not round-trip or
 * there was no memory to dump it (left as it was), -ENOMEM (left as it was).
 */
int twin_pack(Twin *t);

/*
 * Loads the packed world back into a tree (a parse of the packed bytes: ~0.1 ms for the
 * default seeds). 1 unpacked, 0 not packed, -ENOMEM (still packed, nothing lost).
 */
int twin_unpack(Twin *t);

/* Whether the world is packed (twin_pack) and not yet unpacked. */
bool twin_packed(const Twin *t);

/*
 * Replaces the live world with world (takes the reference), as when a call is undone:
 * the pod restores a snapshot when the reply of a call that changed the world cannot be
 * sent (pods/pod/main.c). Accepts NULL world (no-op).
 */
void twin_world_replace(Twin *t, json_t *world);

/*
 * Pins the clock the twin's actions see to now (seconds since the epoch; 0 = the real
 * clock again), so tests and `pome eval` replays get the same timestamps and ids.
 */
void twin_set_clock(Twin *t, int64_t now);

/*
 * Replaces the world with one loaded from seed (borrowed), as /admin/reset (seed =
 * the boot seed) and /admin/seed do. Same errors as twin_new; on error the world
 * is unchanged.
 */
int twin_reseed(Twin *t, const json_t *seed, char *err, size_t errlen);

/*
 * Serves one request below the mount: /_pome/health, /_pome/state, MCP (/mcp,
 * /mcp/tools, /mcp/call), the kind's vendor routes, and a loud 501 for anything
 * else (CONTRACT.md). /_pome/events is not here: the tape belongs to the front end.
 * Always fills *rp (zeroed by the caller); never fails (OOM becomes a 500).
 */
void twin_handle(Twin *t, const TwinRequest *rq, TwinReply *rp);

/*
 * Applies the changes that came due by now without a call (TwinKind.advance), as twin_handle
 * does before every call, and sets rp->events to them (left NULL when none). For a front that
 * reads the world without a call: pomed's finalize export, so a scheduled message due by then
 * is in the final state and on the tape. 0 or -ENOMEM.
 */
int twin_advance(Twin *t, TwinReply *rp);

/*
 * Runs the action called tool directly with args (borrowed), as MCP tools/call does.
 * Returns -ENOENT (rp untouched) when the kind has no such action, else 0 with rp filled.
 */
int twin_call_action(Twin *t, const char *tool, json_t *args, const char *base_url, TwinReply *rp);

/*
 * The surface of kind k, built once per process and kept (not thread-safe on the first
 * call; the engine is single-threaded). NULL when the embedded data is broken (see
 * twin_kind_check) or on OOM. It keeps names, flags and routes only, built from the
 * TwinSurfaceText tables (their strings are used in place, not copied): the descriptions
 * and input schemas, most of surface.json and ~600 KiB once parsed for GitHub, are read
 * from the embedded text when asked for (twin_kind_surface_tools,
 * twin_action_input_schema), so that an idle pod holds its world and little else.
 */
const TwinSurface *twin_kind_surface(const TwinKind *k);

/*
 * The "tools" array of kind k's surface.json, parsed anew (new reference; element i is
 * the tool of twin_kind_surface(k)->actions[i]), with every description and input
 * schema. A parse of the embedded text, under a millisecond: for tools/list and the
 * OpenAPI document. NULL on OOM or a broken surface.
 */
json_t *twin_kind_surface_tools(const TwinKind *k);

/* The kind's action called tool (borrowed from twin_kind_surface), or NULL. */
const TwinAction *twin_kind_action(const TwinKind *k, const char *tool);

/*
 * The input schema (a JSON Schema object) of action a of kind k: borrowed, parsed from
 * its own embedded text on first use and kept for the process, one action at a time
 * (Stripe reads the schema of every action it serves). NULL on OOM.
 */
const json_t *twin_action_input_schema(const TwinKind *k, const TwinAction *a);

/*
 * Checks kind k's embedded surface: valid JSON of the shape above, every tool bound to a
 * handler and every handler to a tool, every route naming a tool, no tool twice. Returns 0,
 * -EINVAL with a message in err (errlen bytes), -ENOMEM. twin_new refuses a kind that fails.
 */
int twin_kind_check(const TwinKind *k, char *err, size_t errlen);

/* The MCP tools/list array for kind k (new reference). */
json_t *twin_kind_tools(const TwinKind *k);

/*
 * Names the build of the program serving twins, for the runtime block of their health
 * answers: git_sha (the commit) and build_time (RFC 3339), copied (truncated to 63 bytes).
 * A program that never calls it says "unknown" for both (a pod knows no commit). Not
 * thread-safe: call it at start.
 */
void twin_set_build(const char *git_sha, const char *build_time);

/* The runtime block of the health answers (hosted Pome's contract): {package: "pome",
 * version, git_sha, build_time}, all strings. New reference, NULL on OOM. */
json_t *twin_runtime(void);

/* Seconds (wall-clock, with fractions) since twin_new made t. */
double twin_uptime(const Twin *t);

/*
 * The body of GET /healthz (session false: {ok, twin, implementation, tools: the MCP tool
 * count, runtime}) or of GET {mount}/_pome/health (session true: {ok, twin}), each with
 * the kind's health_extras: the key sets hosted Pome froze per twin. New reference, NULL on
 * OOM.
 */
json_t *twin_health(const Twin *t, bool session);

/*
 * Whether version (NULL: no) is an MCP protocol version the twins speak, which an
 * MCP-Protocol-Version header must name (MCP 2025-06-18 "Transports", Protocol Version
 * Header; else 400). For a front end that answers an MCP call of its own (pomed's
 * finalize_run) exactly as the engine would judge the header.
 */
bool twin_mcp_version_supported(const char *version);

/* ----- helpers for kind implementations ----- */

/*
 * Sets the response header name (static or longer-lived than rp) to value (taken; a JSON
 * string; NULL, as a failed json_string gives, is -ENOMEM), making rp->headers when there are
 * none yet. 0 or -ENOMEM.
 */
int twin_reply_header(TwinReply *rp, const char *name, json_t *value);

/*
 * Records the world changes one call made, in order, as its tape rows: changes is an array of
 * {tool, state_delta, status, response_body} (borrowed; its elements are amended). The last is
 * the call's own row (rp->tool, state_mutation, state_delta); each earlier one a row of the
 * caller's ahead of it (TwinReply.events, by_caller) with rq's method and path (rq may be NULL:
 * POST /) and rp->request_body. Nothing when there are none. 0 or -ENOMEM. For a call that
 * carries several operations: a GraphQL request's mutations, a JSON-RPC batch's tool calls.
 */
int twin_reply_changes(TwinReply *rp, json_t *changes, const TwinRequest *rq);

/*
 * Runs action a as one part of the call c (a GraphQL request's mutation, as the action's own
 * REST route or MCP tool runs it) with args (borrowed), filling rp (zeroed by the caller,
 * released by it); when the part changed the world, appends its {tool, status,
 * response_body, state_delta} to changes, the array twin_reply_changes then records. 0, or
 * the action's -ENOMEM.
 */
int twin_call_part(const TwinCall *c, const TwinAction *a, json_t *args, json_t *changes,
                   TwinReply *rp);

/* Sets rp->status and takes ownership of body (may be NULL). */
void twin_reply_json(TwinReply *rp, int status, json_t *body);

/*
 * twin_reply_json for a body that must exist: takes ownership of body, where NULL (a
 * json_pack or a render that failed) leaves rp alone and returns -ENOMEM. Returns 0.
 */
int twin_reply_body(TwinReply *rp, int status, json_t *body);

/*
 * The text of a text reply: body is a JSON string and headers (borrowed, may be NULL) set a
 * Content-Type that is not JSON ("application/vnd.github.diff"). The front ends send it as
 * the raw body bytes and MCP as the tool's text content; NULL for a JSON reply. Borrowed.
 */
const char *twin_reply_text(const json_t *headers, const json_t *body);

/* Sets the tape's state_delta to {before, after}; both are copied (deep), may be NULL. */
void twin_reply_delta(TwinReply *rp, const json_t *before, const json_t *after);

/*
 * Records that the call changed the world: state_mutation, and state_delta as
 * twin_reply_delta sets it (before NULL for a new row, after NULL for a removed one).
 * Returns 0 or -ENOMEM.
 */
int twin_reply_mutation(TwinReply *rp, const json_t *before, const json_t *after);

/* Current time as RFC 3339 UTC ("2026-11-29T09:00:00Z") into buf (>= 21 bytes). */
void twin_format_time(int64_t t, char *buf, size_t len);
