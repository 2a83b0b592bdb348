/* SPDX-License-Identifier: MIT */
#include "pods/front/serve.h"

#include <strings.h>

#include "common/frame.h"
#include "common/json-util.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "pods/twin/redact.h"

#define EVENTS_LIMIT_DEFAULT 100u
#define EVENTS_LIMIT_MAX     1000u /* also in front_reply_tape's message */

/* Which of the twin's answers lists its tools (and so gains a session's finalize_run). */
typedef enum ToolList {
        TOOL_LIST_NONE,
        TOOL_LIST_RPC,   /* POST /mcp tools/list: {jsonrpc, id, result: {tools}} */
        TOOL_LIST_PLAIN, /* GET /mcp/tools: {tools} */
} ToolList;

struct FrontExchange {
        HttpRequest *rq;
        const TwinKind *kind;
        FrontBackend backend;
        char request_id[32];
        char *run_id;
        char *full;  /* the raw path as requested, for the tape */
        char *mount; /* the raw path of the twin's mount (full without the part below it) */
        bool recorded;
        ToolList list; /* a list of tools whose answer gains finalize_run */
        int64_t ts_usec;
};

void front_reply(HttpRequest *rq, int status, json_t *headers, const json_t *body,
                 const char *request_id)
{
        _cleanup_json_ json_t *h = headers ? json_incref(headers) : json_object();
        if (h && json_is_object(h))
                json_object_set_new(h, "X-Request-Id", json_string(request_id));
        const char *text = twin_reply_text(h, body);
        if (text)
                (void)http_reply(rq, status, h, text, json_string_length(body));
        else
                (void)http_reply_json(rq, status, h, body);
}

/* A POST to an MCP endpoint (…/mcp): its errors are JSON-RPC's, not the REST API's. */
static bool is_mcp_rpc(HttpRequest *rq)
{
        const char *p = http_request_path(rq);
        size_t n = strlen(p);
        if (n && p[n - 1] == '/')
                n--;
        return streq(http_request_method(rq), "POST") && n >= 4 &&
               memcmp(p + n - 4, "/mcp", 4) == 0;
}

/*
 * A JSON-RPC 2.0 error response (jsonrpc.org/specification, 5.1) for a call refused before
 * the twin saw it: code -32000 (a server error), the front's message, and the HTTP status
 * and error type in data; the id of the request when its body is already read and has one.
 */
static void mcp_error(HttpRequest *rq, int status, const char *code, const char *message,
                      TwinReply *rp)
{
        size_t n = 0;
        const char *body = http_request_body(rq, &n);
        _cleanup_json_ json_t *msg = body && n ? json_loadb(body, n, 0, NULL) : NULL;
        json_t *id = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
        rp->body = json_pack("{s:s, s:O?, s:{s:i, s:s, s:{s:i, s:s}}}", "jsonrpc", "2.0", "id", id,
                             "error", "code", -32000, "message", message, "data", "status", status,
                             "type", code);
}

void front_reply_error(HttpRequest *rq, const TwinKind *kind, int status, const char *code,
                       const char *message, const char *request_id)
{
        TwinReply rp = {};
        if (is_mcp_rpc(rq))
                mcp_error(rq, status, code, message, &rp);
        else
                kind->error(status, code, message, &rp);
        /* The body is the twin's envelope, the status the front's own: a Slack client must
         * see a 413 or a 503 as such, not as one of Slack's HTTP 200 API errors. */
        _cleanup_json_ json_t *h = rp.headers ? json_incref(rp.headers) : json_object();
        if (h && (status == 503 || status == 429))
                json_object_set_new(h, "Retry-After", json_string("1"));
        if (h && kind->request_id_header)
                json_object_set_new(h, kind->request_id_header, json_string(request_id));
        front_reply(rq, status, h, rp.body, request_id);
        twin_reply_done(&rp);
}

void front_refusal(const TwinKind *kind, int status, const char *code, const char *message,
                   HttpRefusal *ret)
{
        TwinReply rp = {};
        kind->error(status, code, message, &rp);
        ret->body = TAKE_PTR(rp.body);
        ret->headers = TAKE_PTR(rp.headers);
        twin_reply_done(&rp);
}

static void exchange_free(FrontExchange *x)
{
        if (!x)
                return;
        free(x->run_id);
        free(x->full);
        free(x->mount);
        free(x);
}

/* ---- /_pome/events: the tape, from disk, a page at a time ---- */

/* *ret := s, a decimal integer in [min, max] (digits only: no sign, no space). 0 or -EINVAL. */
static int parse_count(const char *s, size_t min, size_t max, size_t *ret)
{
        if (!s[0] || strspn(s, "0123456789") != strlen(s))
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        if (errno || v < min || v > max)
                return -EINVAL;
        *ret = (size_t)v;
        return 0;
}

static ssize_t events_read(void *userdata, uint64_t pos _unused_, char *buf, size_t max)
{
        return tape_reader_read(userdata, buf, max);
}

static void events_free(void *userdata)
{
        tape_reader_free(userdata);
}

int front_reply_tape(HttpRequest *rq, Tape *tape, const char *link, uint64_t max_page,
                     const char *request_id, const char **ret_why)
{
        const char *query = http_request_query(rq);
        _cleanup_free_ char *after = NULL, *limit_s = NULL, *offset_s = NULL;
        int ra = front_query_value(query, "after", &after);
        int rl = front_query_value(query, "limit", &limit_s);
        int ro = front_query_value(query, "offset", &offset_s);
        if (ra == -EBADMSG || rl == -EBADMSG || ro == -EBADMSG) {
                *ret_why = ra == -EBADMSG   ? "after must be text (a NUL is not)."
                           : rl == -EBADMSG ? "limit must be text (a NUL is not)."
                                            : "offset must be text (a NUL is not).";
                return -EINVAL;
        }
        if ((ra < 0 && ra != -ENOENT) || (rl < 0 && rl != -ENOENT) || (ro < 0 && ro != -ENOENT))
                return -ENOMEM;
        size_t limit = 0, offset = 0;
        if (limit_s) {
                if (parse_count(limit_s, 1, EVENTS_LIMIT_MAX, &limit) < 0) {
                        *ret_why = "limit must be an integer from 1 to 1000.";
                        return -EINVAL;
                }
        } else if (after || offset_s)
                limit = EVENTS_LIMIT_DEFAULT;
        if (offset_s) {
                if (after) {
                        *ret_why = "after and offset exclude each other: page on with after, or "
                                   "jump to a row number with offset.";
                        return -EINVAL;
                }
                if (parse_count(offset_s, 0, SIZE_MAX, &offset) < 0) {
                        *ret_why = "offset must be a row number: an integer from 0.";
                        return -EINVAL;
                }
        }
        TapeRange range;
        int r = offset_s ? tape_select_at(tape, offset, limit, max_page, &range)
                         : tape_select(tape, after, limit, max_page, &range);
        if (r == -ENOENT) {
                *ret_why = "after names no event on this tape; pass the event_id of a row you "
                           "read, or leave it out to start at the first row.";
                return -ENOENT;
        }
        TapeReader *rd = NULL;
        if (r >= 0)
                r = tape_reader_new(tape, &range, &rd);
        if (r < 0) {
                *ret_why = "The tape cannot be read.";
                return r;
        }
        char total[32], first[32];
        snprintf(total, sizeof(total), "%zu", tape_count(tape));
        snprintf(first, sizeof(first), "%zu", range.first);
        _cleanup_json_ json_t *h = json_pack(
                "{s:s, s:s, s:s, s:s}", "Content-Type", "application/json; charset=utf-8",
                "X-Request-Id", request_id, "X-Pome-Total-Events", total, "X-Pome-Offset", first);
        char next[TAPE_EVENT_ID_MAX];
        if (h && range.more && tape_event_id(tape, range.first + range.n - 1, next) == 0) {
                _cleanup_free_ char *l = NULL;
                if (asprintf(&l, "<%s%cafter=%s&limit=%zu>; rel=\"next\"", link,
                             strchr(link, '?') ? '&' : '?', next, limit) >= 0)
                        json_object_set_new(h, "Link", json_string(l));
                json_object_set_new(h, "X-Pome-Next-After", json_string(next));
        }
        uint64_t size = tape_reader_size(rd);
        if (http_reply_stream(rq, 200, h, size, events_read, events_free, rd) < 0) {
                tape_reader_free(rd);
                *ret_why = "Out of memory.";
                return -ENOMEM;
        }
        return 0;
}

static void serve_events(HttpRequest *rq, const FrontTarget *t)
{
        const TwinKind *k = t->kind;
        if (!streq(http_request_method(rq), "GET")) {
                front_reply_error(rq, k, 405, "method_not_allowed",
                                  "/_pome/events only answers GET.", t->request_id);
                return;
        }
        _cleanup_free_ char *link = NULL;
        if (asprintf(&link, "%s/_pome/events", t->mount_url) < 0) {
                front_reply_error(rq, k, 500, "internal_error", "Out of memory.", t->request_id);
                return;
        }
        const char *why = "Out of memory.";
        int r = front_reply_tape(rq, t->tape, link, t->max_page, t->request_id, &why);
        if (r == -EINVAL)
                front_reply_error(rq, k, 400,
                                  strstr(why, "limit must") ? "invalid_limit" : "invalid_parameter",
                                  why, t->request_id);
        else if (r == -ENOENT)
                front_reply_error(rq, k, 400, "unknown_event", why, t->request_id);
        else if (r < 0)
                front_reply_error(rq, k, 500, "internal_error", why, t->request_id);
}

/* GET {mount}/healthz (CONTRACT.md, as hosted Pome's twins): {ok, twin, sid} for a caller
 * authenticated for the sandbox. Like /_pome/, a read of our own: no tape row. */
static void serve_session_healthz(HttpRequest *rq, const FrontTarget *t)
{
        const char *m = http_request_method(rq);
        if (!streq(m, "GET") && !streq(m, "HEAD")) {
                front_reply_error(rq, t->kind, 405, "method_not_allowed",
                                  "/healthz only answers GET.", t->request_id);
                return;
        }
        _cleanup_json_ json_t *body =
                json_pack("{s:b, s:s, s:s}", "ok", true, "twin", t->kind->name, "sid", t->run_id);
        front_reply(rq, body ? 200 : 500, NULL, body, t->request_id);
}

/* ---- finalize from inside the run: POST /_pome/finalize and the MCP tool finalize_run ---- */

/*
 * A finalize leaves no tape row, in any form. A tape is what the caller did to one twin's
 * world, and the verdict grades it: a finalize changes no world, the tapes are frozen at its
 * start (what is graded is what is kept, so `pome eval` of the run directory gives pomed's
 * verdict byte for byte) and its answer, the verdict, exists only once they are graded. It
 * is on record elsewhere: the sandbox's state and reason (done, finalized), verdict.json
 * and pomed's log. Its refusals change nothing either, and leave no row as /_pome/ reads.
 */

typedef enum FinalizeForm {
        FINALIZE_REST, /* POST /_pome/finalize: a JSON answer, refusals in the twin's envelope */
        FINALIZE_RPC,  /* POST /mcp, JSON-RPC tools/call: a JSON-RPC result */
        FINALIZE_CALL, /* POST /mcp/call, /mcp/tools/finalize_run: the CallToolResult itself */
} FinalizeForm;

struct FrontFinalize {
        HttpRequest *rq;
        const TwinKind *kind;
        FinalizeForm form;
        json_t *id; /* the JSON-RPC request's id (FINALIZE_RPC) */
        char *run_id;
        json_t *reply; /* the agent_reply argument (a string), or NULL */
        char request_id[32];
};

static FrontFinalize *finalize_free(FrontFinalize *f)
{
        if (f) {
                json_decref(f->id);
                json_decref(f->reply);
                free(f->run_id);
                free(f);
        }
        return NULL;
}

/* finalize_run as tools/list shows it: a new reference, NULL on OOM. */
static json_t *finalize_tool(void)
{
        return json_pack(
                "{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}}, s:{s:s, s:b, "
                "s:b, "
                "s:b, s:b}}",
                "name", FRONT_FINALIZE_TOOL, "description",
                "Ends this run and grades it, as hosted Pome's finalize_run does: every twin's "
                "final state is kept, the run is graded against the task the sandbox was created "
                "with, and the sandbox ends (done): its twins answer no more calls. Call it once, "
                "when the task is finished. Answers the verdict's summary (state, passed, score, "
                "counts) and where the whole verdict is read (GET "
                "/v1/sandboxes/{session_id}/verdict on the control API).",
                "inputSchema", "type", "object", "properties", "session_id", "type", "string",
                "description",
                "This sandbox's id (optional; when given it must be the sandbox this twin "
                "belongs to).",
                "agent_token", "type", "string", "description",
                "Accepted for hosted Pome's callers and ignored: the call is already "
                "authenticated by its bearer.",
                "agent_reply", "type", "string", "description",
                "Optional: your final answer to the operator (what you would reply), at most "
                "64 KiB, shown to the judge of the task's [model] criteria as the end of your "
                "output.",
                "annotations", "title", "Finalize this run", "readOnlyHint", false,
                "destructiveHint", true, "idempotentHint", false, "openWorldHint", false);
}

/*
 * Answers rq with the twin's error envelope (front_reply_error); one that carries a code
 * and no sentence (Slack's {ok:false, error}) gets the sentence where Slack's Web API puts
 * one (response_metadata.messages, "[ERROR] …", as it does for invalid_arguments): a
 * refusal of a finalize must say why, in every twin.
 */
static void reply_refusal(HttpRequest *rq, const TwinKind *k, int status, const char *code,
                          const char *message, const char *request_id)
{
        TwinReply rp = {};
        k->error(status, code, message, &rp);
        if (json_is_object(rp.body) && json_is_string(json_object_get(rp.body, "error")) &&
            !json_object_get(rp.body, "message")) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "[ERROR] %s", message) >= 0)
                        json_object_set_new(rp.body, "response_metadata",
                                            json_pack("{s:[s]}", "messages", m));
        }
        _cleanup_json_ json_t *h = rp.headers ? json_incref(rp.headers) : json_object();
        if (h && status == 503)
                json_object_set_new(h, "Retry-After", json_string("1"));
        front_reply(rq, status, h, rp.body, request_id);
        twin_reply_done(&rp);
}

/*
 * Whether a request (path decoded) is a finalize, and in which form. REST's arguments are
 * read later (a bad body is answered there); MCP's are read here, and a message that any
 * MCP tools/call would be refused for is not a finalize (the twin refuses it as it refuses
 * any, mcp.c): then false. With mcp false (no finalize hook) only the REST form is one.
 * Sets *ret_args (new reference, NULL: none) and *ret_id (the JSON-RPC id, new reference).
 */
static bool finalize_form(HttpRequest *rq, const char *path, bool mcp, FinalizeForm *ret_form,
                          json_t **ret_args, json_t **ret_id)
{
        *ret_args = *ret_id = NULL;
        if (!streq(http_request_method(rq), "POST"))
                return false;
        if (streq(path, "/_pome/finalize")) {
                *ret_form = FINALIZE_REST;
                return true;
        }
        bool rpc = streq(path, "/mcp") || streq(path, "/mcp/");
        bool named = streq(path, "/mcp/tools/" FRONT_FINALIZE_TOOL);
        if (!mcp || (!rpc && !named && !streq(path, "/mcp/call")))
                return false;
        size_t n;
        const char *body = http_request_body(rq, &n);
        if (named && n == 0) {
                *ret_form = FINALIZE_CALL; /* POST /mcp/tools/{name} without a body: no arguments */
                return true;
        }
        /* only a body that names the tool calls it: no other call is parsed here */
        if (!named && (!body || !memmem(body, n, FRONT_FINALIZE_TOOL, strlen(FRONT_FINALIZE_TOOL))))
                return false;
        _cleanup_json_ json_t *msg = json_loadb(body, n, 0, NULL);
        if (!json_is_object(msg))
                return false;
        json_t *args = msg, *id = NULL;
        if (rpc) {
                json_t *params = json_object_get(msg, "params");
                const char *v = json_get_str(http_request_headers(rq), "mcp-protocol-version");
                id = json_object_get(msg, "id");
                if (!streq_ptr(json_get_str(msg, "jsonrpc"), "2.0") ||
                    !streq_ptr(json_get_str(msg, "method"), "tools/call") ||
                    !(json_is_string(id) || json_is_integer(id)) || !json_is_object(params) ||
                    !streq_ptr(json_get_str(params, "name"), FRONT_FINALIZE_TOOL) ||
                    (v && !twin_mcp_version_supported(v)))
                        return false;
                args = json_object_get(params, "arguments");
        } else if (!named) {
                /* {tool, arguments}, or {name, params} as hosted Pome's Slack twin takes it */
                const char *name = json_get_str(msg, "tool") ?: json_get_str(msg, "name");
                if (!streq_ptr(name, FRONT_FINALIZE_TOOL))
                        return false;
                args = json_object_get(msg, "arguments") ?: json_object_get(msg, "params");
        }
        if (args && !json_is_object(args) && !json_is_null(args))
                return false;
        *ret_form = rpc ? FINALIZE_RPC : FINALIZE_CALL;
        *ret_args = json_is_object(args) ? json_incref(args) : NULL;
        *ret_id = json_incref(id);
        return true;
}

bool front_finalize_asked(HttpRequest *rq, const char *rest)
{
        if (!streq(http_request_method(rq), "POST"))
                return false;
        /* the calls of the hot path end here: no copy, no parse */
        if (!strstr(rest, "/_pome/") && !strstr(rest, "/mcp") && !strchr(rest, '%'))
                return false;
        _cleanup_free_ char *path = NULL;
        _cleanup_json_ json_t *args = NULL, *id = NULL;
        FinalizeForm form;
        if (front_decode_path(*rest ? rest : "/", &path) < 0)
                return false;
        return finalize_form(rq, path, true, &form, &args, &id);
}

/*
 * The arguments of POST /_pome/finalize: none (an empty body), a JSON object, or a form
 * (a Slack client's; its fields as strings). A new object, or NULL with *ret_code and
 * *ret_why (static) when the body is none of these.
 */
static json_t *rest_args(HttpRequest *rq, const char **ret_code, const char **ret_why)
{
        size_t n;
        const char *body = http_request_body(rq, &n);
        while (n > 0 && strchr(" \t\r\n", body[n - 1]))
                n--;
        if (n == 0)
                return json_object();
        *ret_why = "The body must be empty or a JSON object: {\"session_id\": …} (optional).";
        const char *ct = http_request_header(rq, "content-type");
        if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0) {
                _cleanup_json_ json_t *o = json_object();
                static const char *const keys[] = {"session_id", "agent_token", "agent_reply",
                                                   "task_markdown"};
                for (size_t i = 0; o && i < ELEMENTSOF(keys); i++) {
                        _cleanup_free_ char *v = NULL;
                        size_t l;
                        if (front_form_get(body, n, keys[i], &v, &l) < 0)
                                continue;
                        /* a value that is no text is kept as one that names nothing */
                        json_t *js = json_stringn(v, l);
                        json_object_set_new(o, keys[i], js ? js : json_string(""));
                }
                if (!o) {
                        *ret_code = "internal_error";
                        *ret_why = "Out of memory.";
                }
                return TAKE_PTR(o);
        }
        json_t *j = json_loadb(body, n, 0, NULL);
        if (!j)
                *ret_code = "invalid_json";
        else if (!json_is_object(j)) {
                *ret_code = "invalid_arguments";
                json_decref(j);
                j = NULL;
        }
        return j;
}

/*
 * Checks a finalize's arguments against the sandbox run_id: session_id, when given, must name
 * it; agent_token is hosted Pome's and ignored (the bearer already proved the caller), and so
 * is anything else hosted Pome's tool takes (agent_model…); task_markdown is refused. Returns
 * 0, or -1 with *ret_code (static) and a sentence in why (len bytes).
 */
static int finalize_check(const json_t *args, const char *run_id, const char **ret_code, char *why,
                          size_t len)
{
        json_t *sid = json_object_get(args, "session_id");
        *ret_code = "invalid_arguments";
        if (json_object_get(args, "task_markdown")) {
                snprintf(why, len,
                         "A run cannot set the task it is graded against: it is graded against "
                         "the task its sandbox was created with (task_markdown at create). To "
                         "grade it against another, finalize it through the control API "
                         "(POST /v1/sandboxes/%s/finalize) with the team's key.",
                         run_id);
                return -1;
        }
        json_t *reply = json_object_get(args, "agent_reply");
        if (reply && !json_is_null(reply) &&
            (!json_is_string(reply) || json_string_length(reply) > FRONT_AGENT_REPLY_MAX)) {
                snprintf(why, len,
                         "agent_reply must be a string of at most %u bytes: your final answer to "
                         "the operator, for the judge.",
                         FRONT_AGENT_REPLY_MAX);
                return -1;
        }
        if (sid && !json_is_null(sid) && !json_is_string(sid)) {
                snprintf(why, len, "session_id must be a string: this sandbox's id, %s.", run_id);
                return -1;
        }
        if (json_is_string(sid) && (json_string_length(sid) != strlen(run_id) ||
                                    memcmp(json_string_value(sid), run_id, strlen(run_id)) != 0)) {
                *ret_code = "invalid_session_id";
                snprintf(why, len,
                         "session_id does not name this sandbox: this URL and credential are for "
                         "%s. Leave session_id out, or pass %s.",
                         run_id, run_id);
                return -1;
        }
        return 0;
}

const char *front_finalize_session(const FrontFinalize *f)
{
        return f->run_id;
}

const char *front_finalize_reply(const FrontFinalize *f, size_t *ret_len)
{
        *ret_len = json_string_length(f->reply);
        return json_string_value(f->reply);
}

const char *front_finalize_surface(const FrontFinalize *f)
{
        return f->form == FINALIZE_REST ? "POST /_pome/finalize" : "MCP " FRONT_FINALIZE_TOOL;
}

void front_finalize_done(FrontFinalize *f, int status, const char *code, const char *message,
                         const json_t *body)
{
        if (f->form == FINALIZE_REST) {
                if (status == 200)
                        front_reply(f->rq, 200, NULL, body, f->request_id);
                else
                        reply_refusal(f->rq, f->kind, status, code, message, f->request_id);
                finalize_free(f);
                return;
        }
        /* MCP: a CallToolResult either way. The answer's JSON is also its text (MCP
         * 2025-06-18 "Structured Content": for clients without structuredContent); a
         * refusal's text is its sentence, its structuredContent the control API's envelope. */
        _cleanup_json_ json_t *content =
                status == 200 ? json_deep_copy(body)
                              : json_pack("{s:{s:s, s:s, s:O*}}", "error", "type", code, "message",
                                          message, "details", (json_t *)body);
        _cleanup_free_ char *text = status != 200 ? strdup(message)
                                    : content     ? json_dumps(content, JSON_COMPACT)
                                                  : NULL;
        _cleanup_json_ json_t *result =
                content && text
                        ? json_pack("{s:[{s:s, s:s}], s:O, s:b}", "content", "type", "text", "text",
                                    text, "structuredContent", content, "isError", status != 200)
                        : NULL;
        _cleanup_json_ json_t *doc = result && f->form == FINALIZE_RPC
                                             ? json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id",
                                                         f->id, "result", result)
                                             : json_incref(result);
        if (doc)
                front_reply(f->rq, 200, NULL, doc, f->request_id);
        else
                front_reply_error(f->rq, f->kind, 500, "internal_error", "Out of memory.",
                                  f->request_id);
        finalize_free(f);
}

/* Serves a finalize (finalize_form said which): checks its arguments, then hands it to the
 * front end's session, which answers it through front_finalize_done. */
static void serve_finalize(HttpRequest *rq, const FrontTarget *t, FinalizeForm form, json_t *args,
                           json_t *id)
{
        const TwinKind *k = t->kind;
        if (!t->session.finalize) {
                /* `pome twin start`: a twin alone, with no task and nothing that grades (its
                 * tools/list has no finalize_run either). 404, not the loud 501 of an unknown
                 * route: there is no run here to finalize, and GitHub's envelope says a 5xx
                 * only as "Server Error". */
                reply_refusal(rq, k, 404, "no_run",
                              "This twin runs alone (pome twin start): there is no sandbox run to "
                              "finalize or grade. Finalize a pomed sandbox instead ({rest_url}/"
                              "_pome/finalize or the finalize_run MCP tool of its twins), or grade "
                              "a saved run with pome eval.",
                              t->request_id);
                return;
        }
        FrontFinalize *f = calloc(1, sizeof(*f));
        if (!f || !(f->run_id = strdup(t->run_id))) {
                finalize_free(f);
                front_reply_error(rq, k, 500, "internal_error", "Out of memory.", t->request_id);
                return;
        }
        f->rq = rq;
        f->kind = k;
        f->form = form;
        f->id = json_incref(id);
        snprintf(f->request_id, sizeof(f->request_id), "%s", t->request_id);
        _cleanup_json_ json_t *a = args ? json_incref(args) : json_object();
        const char *code = "internal_error", *why = "Out of memory.";
        if (form == FINALIZE_REST) {
                json_decref(a);
                a = rest_args(rq, &code, &why);
        }
        if (!a) {
                front_finalize_done(f, streq(code, "internal_error") ? 500 : 400, code, why, NULL);
                return;
        }
        char sentence[512];
        if (finalize_check(a, t->run_id, &code, sentence, sizeof(sentence)) < 0) {
                front_finalize_done(f, 400, code, sentence, NULL);
                return;
        }
        json_t *reply = json_object_get(a, "agent_reply");
        f->reply = json_is_string(reply) ? json_incref(reply) : NULL;
        t->session.finalize(t->session.userdata, f);
}

/* ---- what a session adds to the twin's lists of tools ---- */

/* Which answer of the twin, to the call (path decoded), lists its tools. */
static ToolList tool_list_of(HttpRequest *rq, const char *path)
{
        const char *m = http_request_method(rq);
        if (streq(m, "GET"))
                return streq(path, "/mcp/tools") ? TOOL_LIST_PLAIN : TOOL_LIST_NONE;
        if (!streq(m, "POST") || (!streq(path, "/mcp") && !streq(path, "/mcp/")))
                return TOOL_LIST_NONE;
        size_t n;
        const char *body = http_request_body(rq, &n);
        return body && memmem(body, n, "tools/list", 10) ? TOOL_LIST_RPC : TOOL_LIST_NONE;
}

/*
 * The twin's answer (n bytes of compact JSON) with finalize_run added to the tools it lists
 * (for the tape: redacted as a tape part is, when redact): a new text in *ret (*ret_len bytes).
 * Returns 0, -ENOENT when the answer lists no tools (an error, a tools/call that mentioned
 * "tools/list"): it then goes out as it is, -ENOMEM.
 */
static int tool_list_add(ToolList list, const char *text, size_t n, bool redact, char **ret,
                         size_t *ret_len)
{
        _cleanup_json_ json_t *doc = json_loadb(text, n, 0, NULL), *tool = NULL;
        json_t *tools = NULL, *result = json_object_get(doc, "result");
        switch (list) {
        case TOOL_LIST_RPC:
                tools = json_object_get(result, "content") ? NULL
                                                           : json_object_get(result, "tools");
                break;
        case TOOL_LIST_PLAIN:
                tools = json_object_get(doc, "tools");
                break;
        case TOOL_LIST_NONE:
                return -ENOENT;
        }
        if (!json_is_array(tools))
                return -ENOENT;
        tool = finalize_tool();
        if (!tool || (redact && twin_redact_json(tool) < 0) || json_array_append(tools, tool) < 0)
                return -ENOMEM;
        char *out = json_dumps(doc, JSON_COMPACT);
        if (!out)
                return -ENOMEM;
        *ret_len = strlen(out);
        *ret = out;
        return 0;
}

/* ---- calls ---- */

void front_serve(HttpRequest *rq, const FrontTarget *t)
{
        const TwinKind *k = t->kind;
        _cleanup_free_ char *path = NULL;
        if (front_decode_path(*t->rest ? t->rest : "/", &path) < 0 ||
            front_check_query(http_request_query(rq)) < 0) {
                front_reply_error(rq, k, 400, "invalid_path",
                                  "The request target is malformed: a path that walks outside "
                                  "the twin ('.' or '..' segments), bad percent-escapes, bytes "
                                  "that are not UTF-8, or raw bytes outside printable ASCII.",
                                  t->request_id);
                return;
        }
        /* The tape is the front's: /_pome/events never reaches the twin. */
        if (streq(path, "/_pome/events")) {
                serve_events(rq, t);
                return;
        }
        /* hosted Pome's Stripe twin has no session healthz: its twin's 501 answers */
        if (streq(path, "/healthz") && !(k->flags & TWIN_KIND_NO_SESSION_HEALTHZ)) {
                serve_session_healthz(rq, t);
                return;
        }
        FinalizeForm form;
        _cleanup_json_ json_t *fargs = NULL, *fid = NULL;
        if (finalize_form(rq, path, t->session.finalize, &form, &fargs, &fid)) {
                serve_finalize(rq, t, form, fargs, fid);
                return;
        }
        if (streq(path, "/_pome/finalize")) {
                front_reply_error(rq, k, 405, "method_not_allowed",
                                  "/_pome/finalize only answers POST.", t->request_id);
                return;
        }
        FrontExchange *x = calloc(1, sizeof(*x));
        size_t full_len = strlen(http_request_path(rq)), rest_len = strlen(t->rest);
        if (!x || !(x->full = strdup(http_request_path(rq))) || !(x->run_id = strdup(t->run_id)) ||
            !(x->mount = strndup(x->full, full_len >= rest_len ? full_len - rest_len : 0))) {
                exchange_free(x);
                front_reply_error(rq, k, 500, "internal_error", "Out of memory.", t->request_id);
                return;
        }
        x->rq = rq;
        x->kind = k;
        x->backend = t->backend;
        x->ts_usec = (int64_t)now_usec(CLOCK_REALTIME);
        snprintf(x->request_id, sizeof(x->request_id), "%s", t->request_id);
        /* Reading /_pome/ adds no tape row and is not agent activity. */
        x->recorded = !startswith(path, "/_pome/");
        if (t->session.finalize)
                x->list = tool_list_of(rq, path);
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        /* these headers are the front's to give, never a client's */
        json_t *headers = http_request_headers(rq);
        json_object_del(headers, TWIN_UPLOAD_TOKEN_HEADER);
        json_object_del(headers, TWIN_CREDENTIAL_HEADER);
        if ((t->upload_token && json_object_set_new(headers, TWIN_UPLOAD_TOKEN_HEADER,
                                                    json_string(t->upload_token)) < 0) ||
            (t->credential && json_object_set_new(headers, TWIN_CREDENTIAL_HEADER,
                                                  json_string(t->credential)) < 0)) {
                front_reply_error(rq, k, 500, "internal_error", "Out of memory.", t->request_id);
                exchange_free(x);
                return;
        }
        TwinRequest tr = {
                .method = http_request_method(rq),
                .path = path,
                .query = http_request_query(rq),
                .headers = http_request_headers(rq),
                .body = body,
                .body_len = body_len,
                .base_url = t->mount_url,
        };
        int r = t->backend.call(t->backend.userdata, &tr, x);
        if (r == -EBUSY) {
                front_reply_error(rq, k, 503, "busy",
                                  "The twin has too many calls waiting; retry shortly.",
                                  t->request_id);
                exchange_free(x);
        } else if (r == -ENOSPC) {
                front_reply_error(rq, k, 507, "insufficient_storage", FRONT_NO_STORAGE_MESSAGE,
                                  t->request_id);
                exchange_free(x);
        } else if (r < 0) {
                front_reply_error(rq, k, 502, "twin_unavailable", "The twin cannot take requests.",
                                  t->request_id);
                exchange_free(x);
        }
        /* else x belongs to front_exchange_done (which may have run already) */
}

bool front_exchange_recorded(const FrontExchange *x)
{
        return x->recorded;
}

/* A row onto the backend's tape: as bytes when it takes them, else parsed back. */
static void record_line(FrontExchange *x, char *line, size_t len, const char *event_id)
{
        if (x->backend.record_line) {
                (void)x->backend.record_line(x->backend.userdata, line, len, event_id);
                return;
        }
        _cleanup_json_ json_t *row = line ? json_loadb(line, len, 0, NULL) : NULL;
        (void)x->backend.record(x->backend.userdata, row);
}

void front_exchange_done_bytes(FrontExchange *x, int err, const TwinReplyBytes *rb)
{
        HttpRequest *rq = x->rq;
        if (err == -ETIMEDOUT)
                front_reply_error(rq, x->kind, 504, "twin_timeout",
                                  "The twin did not answer in time; the sandbox has failed "
                                  "(pod_hung) and nothing this call carried was applied later.",
                                  x->request_id);
        else if (err < 0)
                front_reply_error(rq, x->kind, 502, "twin_unavailable",
                                  err == -EPROTO ? "The twin sent a malformed reply."
                                                 : "The twin ended before it answered.",
                                  x->request_id);
        else {
                /* A session's finalize_run is in the twin's lists, on the tape as sent. */
                TwinReplyBytes listed;
                _cleanup_free_ char *lbody = NULL, *lresp = NULL;
                size_t ll, lr;
                if (x->list != TOOL_LIST_NONE && rb->status == 200 && rb->body &&
                    tool_list_add(x->list, rb->body, rb->body_len, false, &lbody, &ll) == 0) {
                        listed = *rb;
                        listed.body = lbody;
                        listed.body_len = ll;
                        if (rb->response_body &&
                            tool_list_add(x->list, rb->response_body, rb->response_body_len, true,
                                          &lresp, &lr) == 0) {
                                listed.response_body = lresp;
                                listed.response_body_len = lr;
                        }
                        rb = &listed;
                }
                size_t body_len;
                const char *body = http_request_body(rq, &body_len);
                FrontCall fc = {
                        .twin = x->kind->name,
                        .run_id = x->run_id,
                        .request_id = x->request_id,
                        .method = http_request_method(rq),
                        .path = x->full,
                        .query = http_request_query(rq),
                        .headers = http_request_headers(rq),
                        .body = body,
                        .body_len = body_len,
                        .latency_ms =
                                (double)(now_usec(CLOCK_MONOTONIC) - http_request_start_usec(rq)) /
                                1000.0,
                        .ts_usec = x->ts_usec,
                };
                /* What the twin did on its own before this call (a scheduled message
                 * delivered) is on the tape first, whatever the call: a /_pome/state
                 * read that let it happen adds those rows and none of its own. Rare: these
                 * rows are built as documents. */
                size_t i;
                json_t *ev;
                bool rows = json_array_size(rb->events) > 0 || x->recorded;
                json_array_foreach (rb->events, i, ev) {
                        _cleanup_json_ json_t *erow = front_event_row(&fc, x->mount, ev);
                        _cleanup_free_ char *text =
                                erow ? json_dumps(erow, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
                        size_t n = text ? strlen(text) : 0;
                        if (text)
                                text[n++] = '\n'; /* over the NUL: a line */
                        record_line(x, text, n, json_get_str(erow, "event_id"));
                }
                if (x->recorded) {
                        /* The row is on the tape before the caller sees the response; a row
                         * that cannot be built (NULL) is the backend's to report. */
                        _cleanup_free_ char *line = NULL;
                        size_t n = 0;
                        if (front_tape_line(&fc, rb, &line, &n) < 0)
                                line = NULL;
                        record_line(x, line, n, x->request_id);
                }
                _cleanup_json_ json_t *h = rb->headers ? json_incref(rb->headers) : json_object();
                if (h && x->kind->request_id_header)
                        json_object_set_new(h, x->kind->request_id_header,
                                            json_string(x->request_id));
                if (h)
                        json_object_set_new(h, "X-Request-Id", json_string(x->request_id));
                if (rows && x->backend.hold)
                        x->backend.hold(x->backend.userdata, rq, x->request_id);
                (void)http_reply(rq, rb->status, h, rb->body, rb->body_len);
        }
        exchange_free(x);
}

void front_exchange_done(FrontExchange *x, int err, TwinReply *rp)
{
        if (err < 0) {
                front_exchange_done_bytes(x, err, NULL);
                return;
        }
        size_t body_len;
        const char *body = http_request_body(x->rq, &body_len);
        TwinRequest rq = {.body = body, .body_len = body_len};
        Frame f = {};
        TwinReplyBytes rb;
        int r = podwire_reply_bytes(rp, &rq, &f, &rb);
        if (r < 0) {
                front_reply_error(x->rq, x->kind, 500, "internal_error",
                                  r == -EMSGSIZE ? "The reply is too large."
                                                 : "The reply could not be encoded.",
                                  x->request_id);
                exchange_free(x);
                return;
        }
        front_exchange_done_bytes(x, 0, &rb);
        frame_done(&f);
}
