/* SPDX-License-Identifier: MIT */
/*
 * MCP over Streamable HTTP, stateless (CONTRACT.md; MCP spec 2025-06-18 "Transports"):
 * each POST /mcp carries one JSON-RPC 2.0 message and gets one JSON answer, so
 * tools/call works without a prior initialize. Transport-level refusals (unparsable
 * JSON, not a JSON-RPC request, batches) are HTTP 400 with a JSON-RPC error and id null,
 * as the reference TypeScript SDK answers; protocol errors (unknown method, unknown tool)
 * are HTTP 200 JSON-RPC errors. A tool's own failure is a result with isError: true.
 * An MCP-Protocol-Version header naming a version we do not speak is refused with 400
 * ("Protocol Version Header"); none at all is fine (the spec's fallback is 2025-03-26).
 *
 * Besides, CONTRACT.md's plain-JSON surfaces: GET /mcp/tools; POST /mcp/tools/{name} with
 * the arguments as the body, answering the CallToolResult; and hosted Pome's legacy POST
 * /mcp/call {tool, arguments}, answering what the action answers over REST (status and
 * body), its body read and its refusals worded as hosted Pome's twin of the same vendor
 * does (TwinKind.control_error, TWIN_KIND_TOLERANT_CONTROL, TWIN_KIND_CALL_ALIASES).
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/twin/engine.h"

#define MCP_PARSE_ERROR      (-32700)
#define MCP_INVALID_REQUEST  (-32600)
#define MCP_METHOD_NOT_FOUND (-32601)
#define MCP_INVALID_PARAMS   (-32602)
#define MCP_SERVER_ERROR     (-32000) /* the TypeScript SDK's transport refusals */

static const char *const protocol_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/* Fills rp with a JSON-RPC error (id borrowed, NULL = null). */
static int rpc_error(TwinReply *rp, int status, json_t *id, int code, const char *message)
{
        return twin_reply_body(rp, status,
                               json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
                                         id ? id : json_null(), "error", "code", code, "message",
                                         message));
}

/* Fills rp with a JSON-RPC result (id borrowed, result stolen). */
static int rpc_result(TwinReply *rp, json_t *id, json_t *result)
{
        return twin_reply_body(
                rp, 200,
                json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/*
 * The CallToolResult for an action's reply (MCP "Tools": content, structuredContent). A
 * tool that declares an outputSchema must give structured content (MCP 2025-06-18 "Output
 * Schema"): when it answers with text alone (Gmail's "OK"), that is an empty object.
 */
static json_t *tool_result(const TwinAction *a, const TwinReply *inner)
{
        const char *raw = twin_reply_text(inner->headers, inner->body);
        _cleanup_free_ char *text =
                raw           ? strdup(raw)
                : inner->body ? json_dumps(inner->body, JSON_COMPACT | JSON_ENCODE_ANY)
                              : strdup("");
        if (!text)
                return NULL;
        bool is_error = inner->status >= 400 || json_is_false(json_object_get(inner->body, "ok"));
        _cleanup_json_ json_t *result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type",
                                                  "text", "text", text, "isError", is_error);
        if (!result)
                return NULL;
        if (json_is_object(inner->body) &&
            json_object_set(result, "structuredContent", inner->body) < 0)
                return NULL;
        if (raw && !is_error && a->output_schema &&
            json_object_set_new(result, "structuredContent", json_object()) < 0)
                return NULL;
        return TAKE_PTR(result);
}

/*
 * Runs tool name over MCP: stamps rp->tool (even for an unknown tool), moves the action's
 * tape metadata onto rp and returns the CallToolResult in *ret. Returns 0, -ENOENT for an
 * unknown tool, -ENOMEM.
 */
static int call_tool(Twin *t, const char *name, json_t *args, const char *base_url, TwinReply *rp,
                     json_t **ret)
{
        free(rp->tool);
        rp->tool = strdup(name);
        if (!rp->tool)
                return -ENOMEM;
        const TwinAction *a = twin_kind_action(twin_kind(t), name);
        if (!a || !a->mcp) /* a REST-only action is no tool */
                return -ENOENT;

        TwinReply inner = {};
        int r = twin_run_action(t, a, args, NULL, base_url, &inner);
        twin_reply_finish(t, &inner, r);
        rp->state_mutation = inner.state_mutation;
        rp->state_delta = TAKE_PTR(inner.state_delta);
        json_t *result = tool_result(a, &inner);
        twin_reply_done(&inner);
        if (!result)
                return -ENOMEM;
        *ret = result;
        return 0;
}

static json_t *initialize_result(Twin *t, json_t *params)
{
        const char *asked = json_get_str(params, "protocolVersion"), *version = NULL;
        for (size_t i = 0; asked && i < ELEMENTSOF(protocol_versions); i++)
                if (streq(asked, protocol_versions[i]))
                        version = protocol_versions[i];
        /* an unknown version gets our latest; the client decides whether it can go on */
        if (!version)
                version = protocol_versions[0];
        return json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}}", "protocolVersion", version,
                         "capabilities", "tools", "listChanged", false, "serverInfo", "name",
                         twin_kind(t)->implementation, "version", POME_VERSION);
}

bool twin_mcp_version_supported(const char *version)
{
        for (size_t i = 0; version && i < ELEMENTSOF(protocol_versions); i++)
                if (streq(version, protocol_versions[i]))
                        return true;
        return false;
}

/* Whether the request's MCP-Protocol-Version header, if any, names a version we speak. */
static bool protocol_header_ok(const TwinRequest *rq)
{
        const char *v = json_get_str(rq->headers, "mcp-protocol-version");
        return !v || twin_mcp_version_supported(v);
}

/* One JSON-RPC message (borrowed) of a POST /mcp: its answer in rp (202 with no body for a
 * notification or a response). in_batch: a batch's element, which initialize may not be. */
static int one_message(Twin *t, const TwinRequest *rq, json_t *msg, bool in_batch, TwinReply *rp)
{
        if (!json_is_object(msg))
                return rpc_error(rp, 400, NULL, MCP_INVALID_REQUEST, "Invalid Request");

        json_t *id = json_object_get(msg, "id");
        const char *method = json_get_str(msg, "method");
        /* MCP "Transports", Protocol Version Header: a bad version is 400 (the transport's
         * error, id null, as the TypeScript SDK words it). initialize is exempt: it
         * negotiates the version in its body, before the client has one to send. */
        if (!streq_ptr(method, "initialize") && !protocol_header_ok(rq))
                return rpc_error(rp, 400, NULL, MCP_SERVER_ERROR,
                                 "Bad Request: Unsupported protocol version (supported "
                                 "versions: 2025-06-18, 2025-03-26, 2024-11-05)");
        bool response = json_object_get(msg, "result") || json_object_get(msg, "error");
        /* notifications and the client's own responses: accepted, nothing to say (202) */
        if ((!method && response) || (!id && method)) {
                twin_reply_json(rp, 202, NULL);
                return 0;
        }
        if (!id)
                return rpc_error(rp, 400, NULL, MCP_INVALID_REQUEST, "Invalid Request");
        if (!json_is_string(id) && !json_is_integer(id))
                return rpc_error(rp, 400, NULL, MCP_INVALID_REQUEST, "Invalid Request: bad id");
        if (!streq_ptr(json_get_str(msg, "jsonrpc"), "2.0") || !method)
                return rpc_error(rp, 400, id, MCP_INVALID_REQUEST, "Invalid Request");

        json_t *params = json_object_get(msg, "params");
        if (params && !json_is_object(params))
                return rpc_error(rp, 200, id, MCP_INVALID_PARAMS, "Invalid params");

        json_t *result;
        if (streq(method, "initialize") && in_batch) /* MCP 2025-03-26 "Lifecycle" */
                return rpc_error(rp, 200, id, MCP_INVALID_REQUEST,
                                 "Invalid Request: initialize cannot be part of a batch");
        if (streq(method, "initialize"))
                result = initialize_result(t, params);
        else if (streq(method, "ping"))
                result = json_object();
        else if (streq(method, "tools/list"))
                result = json_pack("{s:o}", "tools", twin_kind_tools(twin_kind(t)));
        else if (streq(method, "tools/call")) {
                const char *name = json_get_str(params, "name");
                json_t *args = json_object_get(params, "arguments");
                if (!name)
                        return rpc_error(rp, 200, id, MCP_INVALID_PARAMS,
                                         "Invalid params: name is required");
                if (args && !json_is_object(args) && !json_is_null(args))
                        return rpc_error(rp, 200, id, MCP_INVALID_PARAMS,
                                         "Invalid params: arguments must be an object");
                int r = call_tool(t, name, args, rq->base_url, rp, &result);
                if (r == -ENOENT) {
                        _cleanup_free_ char *m = NULL;
                        if (asprintf(&m, "Unknown tool: %s", name) < 0)
                                return -ENOMEM;
                        return rpc_error(rp, 200, id, MCP_INVALID_PARAMS, m);
                }
                if (r < 0)
                        return r;
        } else {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "Method not found: %s", method) < 0)
                        return -ENOMEM;
                return rpc_error(rp, 200, id, MCP_METHOD_NOT_FOUND, m);
        }
        if (!result)
                return -ENOMEM;
        return rpc_result(rp, id, result);
}

/*
 * A JSON-RPC batch (MCP 2025-03-26 "Transports": a POST may carry an array of requests and
 * notifications, answered by an array of responses; 2025-06-18 removed batching, so a client
 * that says it speaks 2025-06-18 is refused one). Each element is answered as a message of its
 * own; a call that changed the world is a tape row: the last the call's own, earlier ones rows
 * ahead of it (TwinReply.events, by_caller). Only notifications and responses: 202.
 */
static int batch(Twin *t, const TwinRequest *rq, json_t *msgs, TwinReply *rp)
{
        const char *v = json_get_str(rq->headers, "mcp-protocol-version");
        if (v && strcmp(v, "2025-06-18") >= 0)
                return rpc_error(rp, 400, NULL, MCP_INVALID_REQUEST,
                                 "Invalid Request: batches are not supported in protocol version "
                                 "2025-06-18");
        if (json_array_size(msgs) == 0)
                return rpc_error(rp, 400, NULL, MCP_INVALID_REQUEST,
                                 "Invalid Request: empty batch");
        _cleanup_json_ json_t *answers = json_array(), *changes = json_array();
        if (!answers || !changes)
                return -ENOMEM;
        size_t i;
        json_t *m;
        json_array_foreach (msgs, i, m) {
                TwinReply one = {};
                int r = one_message(t, rq, m, true, &one);
                if (r >= 0 && one.body && json_array_append(answers, one.body) < 0)
                        r = -ENOMEM;
                if (r >= 0 && one.state_mutation &&
                    json_array_append_new(changes,
                                          json_pack("{s:s?, s:O?, s:i, s:O?}", "tool", one.tool,
                                                    "state_delta", one.state_delta, "status", 200,
                                                    "response_body", one.body)) < 0)
                        r = -ENOMEM;
                if (r >= 0 && one.tool && !rp->tool && !(rp->tool = strdup(one.tool)))
                        r = -ENOMEM;
                twin_reply_done(&one);
                if (r < 0)
                        return r;
        }
        int r = twin_reply_changes(rp, changes, rq);
        if (r < 0)
                return r;
        if (json_array_size(answers) == 0) {
                twin_reply_json(rp, 202, NULL);
                return 0;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(answers));
}

int twin_mcp_jsonrpc(Twin *t, const TwinRequest *rq, TwinReply *rp)
{
        json_error_t e;
        json_t *msg = json_loadb(rq->body ? rq->body : "", rq->body_len, JSON_DECODE_ANY, &e);
        if (!msg)
                return rpc_error(rp, 400, NULL, MCP_PARSE_ERROR, "Parse error");
        if (twin_json_depth(msg, TWIN_JSON_MAX_DEPTH) > TWIN_JSON_MAX_DEPTH) {
                json_decref(msg);
                return rpc_error(rp, 400, NULL, MCP_PARSE_ERROR, "Parse error: nests too deeply");
        }
        rp->request_body = msg; /* the reply owns it: the tape records the message */
        if (json_is_array(msg))
                return batch(t, rq, msg, rp);
        return one_message(t, rq, msg, false, rp);
}

int twin_mcp_list(Twin *t, TwinReply *rp)
{
        return twin_reply_body(rp, 200, json_pack("{s:o}", "tools", twin_kind_tools(twin_kind(t))));
}

/*
 * Fills rp with the twin's own error envelope (GitHub {message, documentation_url, status},
 * Slack {ok:false, error: code}) at HTTP status: these surfaces are ours, so the status is
 * ours too, even where the vendor answers its API errors with 200. 0 or -ENOMEM.
 */
static int call_error(Twin *t, TwinReply *rp, int status, const char *code, const char *message)
{
        twin_kind(t)->error(status, code, message, rp);
        if (!rp->body)
                return -ENOMEM;
        rp->status = status;
        free(rp->error);
        rp->error = strdup(message);
        return rp->error ? 0 : -ENOMEM;
}

/* The kind's control_error for /mcp/call, with rp->error its sentence. 0 or -ENOMEM. */
static int control_error(Twin *t, TwinReply *rp, TwinControlError what, const char *detail,
                         const char *message)
{
        twin_kind(t)->control_error(what, detail, rp);
        if (!rp->body)
                return -ENOMEM;
        free(rp->error);
        rp->error = strdup(message);
        return rp->error ? 0 : -ENOMEM;
}

/*
 * The body of POST /mcp/call as hosted Pome's twin of the kind reads it: strict JSON, or
 * (TWIN_KIND_TOLERANT_CONTROL) a form when the Content-Type says so and otherwise JSON whose
 * malformed or non-object text reads as {}. A new reference in *ret, NULL when strict JSON
 * failed to parse. 0 or -ENOMEM.
 */
static int call_body(Twin *t, const TwinRequest *rq, json_t **ret)
{
        const char *body = rq->body ? rq->body : "";
        *ret = NULL;
        if (!(twin_kind(t)->flags & TWIN_KIND_TOLERANT_CONTROL)) {
                *ret = json_loadb(body, rq->body_len, 0, NULL);
                return 0;
        }
        const char *ct = json_get_str(rq->headers, "content-type");
        if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0) {
                int r = twin_form_parse(body, rq->body_len, ret);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        *ret = NULL;
        } else
                *ret = json_loadb(body, rq->body_len, 0, NULL);
        if (!json_is_object(*ret)) {
                json_decref(*ret);
                *ret = json_object();
        }
        return *ret ? 0 : -ENOMEM;
}

/*
 * The body of a plain-JSON call as read (msg: a new reference, NULL when it is not JSON),
 * taken into rp->request_body (the tape records the request), and refused when no call can
 * be made of it: not JSON, not an object (not_object says what it must be), nested too
 * deeply. 1 to go on with it, 0 with the refusal in rp, -ENOMEM.
 */
static int call_body_ok(Twin *t, TwinReply *rp, json_t *msg, const char *not_object)
{
        int r = 1;
        rp->request_body = msg;
        if (!msg)
                r = call_error(t, rp, 400, "invalid_json", "The body is not JSON.");
        else if (!json_is_object(msg))
                r = call_error(t, rp, 400, "invalid_arguments", not_object);
        else if (twin_json_depth(msg, TWIN_JSON_MAX_DEPTH) > TWIN_JSON_MAX_DEPTH)
                r = call_error(t, rp, 400, "invalid_arguments", "The body nests too deeply.");
        return r;
}

/* POST /mcp/tools/{name}: the body is the arguments, the answer the CallToolResult. */
static int call_named(Twin *t, const TwinRequest *rq, const char *name, TwinReply *rp)
{
        bool blank = !rq->body || rq->body_len == 0;
        json_t *msg =
                blank ? json_object() : json_loadb(rq->body ? rq->body : "", rq->body_len, 0, NULL);
        int r = call_body_ok(t, rp, msg, "The body must be the tool's arguments, a JSON object.");
        if (r <= 0)
                return r;
        json_t *result;
        r = call_tool(t, name, msg, rq->base_url, rp, &result);
        if (r == -ENOENT) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "Unknown tool: %s (GET /mcp/tools lists them).", name) < 0)
                        return -ENOMEM;
                return call_error(t, rp, 404, "unknown_tool", m);
        }
        if (r < 0)
                return r;
        twin_reply_json(rp, 200, result);
        return 0;
}

int twin_mcp_call(Twin *t, const TwinRequest *rq, TwinReply *rp)
{
        const char *named = startswith(rq->path, "/mcp/tools/");
        if (named)
                return call_named(t, rq, named, rp);

        /* POST /mcp/call {tool, arguments} (hosted Pome's legacy dispatch; Slack's also
         * {name, params}): the answer is the action's own, as its REST route gives it. */
        json_t *msg;
        int r = call_body(t, rq, &msg);
        if (r < 0 || (r = call_body_ok(t, rp, msg,
                                       "The body must be a JSON object {tool, arguments}.")) <= 0)
                return r;
        bool aliases = twin_kind(t)->flags & TWIN_KIND_CALL_ALIASES;
        const char *name = json_get_str(msg, "tool");
        json_t *args = json_object_get(msg, "arguments");
        if (aliases) {
                name = name ?: json_get_str(msg, "name");
                args = args ?: json_object_get(msg, "params");
        }
        if (!name || !*name)
                return control_error(t, rp, TWIN_CONTROL_NO_TOOL, NULL,
                                     "tool is required: {\"tool\": NAME, \"arguments\": {…}}.");
        if (args && !json_is_object(args) && !json_is_null(args))
                return call_error(t, rp, 400, "invalid_arguments", "arguments must be an object.");

        free(rp->tool);
        rp->tool = strdup(name);
        if (!rp->tool)
                return -ENOMEM;
        const TwinAction *a = twin_kind_action(twin_kind(t), name);
        if (!a || !a->mcp) { /* a REST-only action is no tool */
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "Unknown tool: %s (GET /mcp/tools lists them).", name) < 0)
                        return -ENOMEM;
                return control_error(t, rp, TWIN_CONTROL_UNKNOWN_TOOL, name, m);
        }
        _cleanup_json_ json_t *request_body = TAKE_PTR(rp->request_body);
        r = twin_run_action(t, a, json_is_object(args) ? args : NULL, NULL, rq->base_url, rp);
        /* the tape records the request as it came */
        json_decref(rp->request_body);
        rp->request_body = TAKE_PTR(request_body);
        return r;
}
