/* SPDX-License-Identifier: MIT */
/* Route patterns: "/repos/{owner}/{repo}/issues/{issue_number}". */
#include "common/json-util.h"
#include "pods/twin/engine.h"

/* Length of the segment at s (up to '/' or the end). */
static size_t seg_len(const char *s)
{
        return strcspn(s, "/");
}

/* A parameter's n bytes at s with the two escapes the front keeps ("%2F", "%25") decoded. */
static char *unescape_param(const char *s, size_t n)
{
        char *out = malloc(n + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '%' && i + 2 < n &&
                    (strncmp(s + i, "%2F", 3) == 0 || strncmp(s + i, "%25", 3) == 0)) {
                        *o++ = s[i + 2] == 'F' ? '/' : '%';
                        i += 2;
                } else
                        *o++ = s[i];
        }
        *o = 0;
        return out;
}

int twin_route_match(const char *pattern, const char *path, json_t *params)
{
        if (pattern[0] != '/' || path[0] != '/')
                return 0;
        size_t plen = strlen(path);
        /* "/user/" is "/user": clients that join URLs carelessly still land */
        if (plen > 1 && path[plen - 1] == '/')
                plen--;

        const char *pp = pattern + 1, *sp = path + 1, *send = path + plen;
        for (;;) {
                size_t pl = seg_len(pp);
                size_t sl = sp <= send ? strcspn(sp, "/") : 0;
                if (sp + sl > send)
                        sl = (size_t)(send - sp);
                if (pl > 2 && pp[0] == '{' && pp[pl - 1] == '}') {
                        /* "{path+}" as the last segment takes the rest, slashes and all */
                        bool rest = pl > 3 && pp[pl - 2] == '+' && pp[pl] == 0;
                        if (rest)
                                sl = (size_t)(send - sp);
                        if (sl == 0)
                                return 0;
                        if (params) {
                                char name[64];
                                size_t nl = pl - 2 - rest;
                                if (nl >= sizeof(name))
                                        return 0;
                                memcpy(name, pp + 1, nl);
                                name[nl] = 0;
                                _cleanup_free_ char *dec = unescape_param(sp, sl);
                                if (!dec)
                                        return -ENOMEM;
                                json_t *v = twin_json_string_lossy(dec, strlen(dec));
                                if (!v || json_object_set_new(params, name, v) < 0)
                                        return -ENOMEM;
                        }
                } else if (pl != sl || memcmp(pp, sp, pl) != 0)
                        return 0;

                bool pend = pp[pl] == 0, spend = sp + sl >= send;
                if (pend || spend)
                        return pend && spend ? 1 : 0;
                pp += pl + 1;
                sp += sl + 1;
        }
}

json_t *twin_kind_supported(const TwinKind *k)
{
        static const char *const engine_surfaces[] = {
                "/mcp",          "/mcp/tools",   "/mcp/call",    "/openapi.json",
                "/_pome/health", "/_pome/state", "/_pome/events"};
        const TwinSurface *surface = twin_kind_surface(k);
        _cleanup_json_ json_t *a = json_array();
        if (!a || !surface)
                return NULL;
        for (size_t i = 0; i < surface->n_routes; i++) {
                char *s;
                if (asprintf(&s, "%s %s", surface->routes[i].method, surface->routes[i].pattern) <
                    0)
                        return NULL;
                int r = json_array_append_new(a, json_string(s));
                free(s);
                if (r < 0)
                        return NULL;
        }
        for (size_t i = 0; i < ELEMENTSOF(engine_surfaces); i++)
                if (json_array_append_new(a, json_string(engine_surfaces[i])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

/* One operation of the OpenAPI document: the action's name and sentence, and its
 * input schema as the JSON request body (what both REST and MCP callers send). */
static json_t *openapi_operation(const TwinKind *k, json_t *tools, const TwinRoute *route,
                                 bool with_body)
{
        const TwinAction *a = twin_kind_action(k, route->tool);
        json_t *tool =
                a ? json_array_get(tools, (size_t)(a - twin_kind_surface(k)->actions)) : NULL;
        const char *summary = json_string_value(json_object_get(tool, "description"));
        json_t *op = json_pack("{s:s, s:s, s:s, s:{s:{s:s}}}", "operationId", route->tool,
                               "summary", summary ? summary : route->tool, "x-pome-tool",
                               route->tool, "responses", "default", "description",
                               "The vendor's response shape (see the vendor's API reference).");
        json_t *schema = json_incref(json_object_get(tool, "inputSchema"));
        if (op && schema && with_body)
                json_object_set_new(op, "requestBody",
                                    json_pack("{s:{s:{s:o}}}", "content", "application/json",
                                              "schema", schema));
        else
                json_decref(schema);
        return op;
}

json_t *twin_kind_openapi(const TwinKind *k, const char *base_url)
{
        const TwinSurface *surface = twin_kind_surface(k);
        _cleanup_json_ json_t *paths = json_object(), *tools = twin_kind_surface_tools(k);
        if (!paths || !surface || !tools)
                return NULL;
        for (size_t i = 0; i < surface->n_routes; i++) {
                const TwinRoute *route = &surface->routes[i];
                json_t *item = json_object_get(paths, route->pattern);
                if (!item) {
                        item = json_object();
                        if (json_object_set_new(paths, route->pattern, item) < 0)
                                return NULL;
                }
                /* "*" routes (Slack's methods) are served for any verb: list the two
                 * the vendor documents. */
                static const char *const any[] = {"get", "post"};
                const char *one[] = {route->method};
                const char *const *verbs = streq(route->method, "*") ? any : one;
                size_t n = streq(route->method, "*") ? 2 : 1;
                for (size_t v = 0; v < n; v++) {
                        char verb[16];
                        size_t l = 0;
                        for (; verbs[v][l] && l < sizeof(verb) - 1; l++)
                                verb[l] = (char)(verbs[v][l] | 0x20);
                        verb[l] = 0;
                        bool body = !streq(verb, "get") && !streq(verb, "delete");
                        if (json_object_set_new(item, verb,
                                                openapi_operation(k, tools, route, body)) < 0)
                                return NULL;
                }
        }
        return json_pack("{s:s, s:{s:s, s:s, s:s}, s:[{s:s}], s:O}", "openapi", "3.1.0", "info",
                         "title", k->implementation, "version", POME_VERSION, "description",
                         "Routes this twin serves; anything else answers 501 fidelity "
                         "\"unsupported\". MCP at ./mcp serves the same actions as tools.",
                         "servers", "url", base_url ? base_url : "", "paths", paths);
}
