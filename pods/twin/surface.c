/* SPDX-License-Identifier: MIT */
/*
 * A kind's surface as data: its tools (names, descriptions, input schemas) and REST routes
 * come from pods/<kind>/surface.json, embedded at build time, and are bound here to the
 * kind's C handlers by name. Parsed once per process.
 */
#include <stdarg.h>

#include "common/json-util.h"
#include "pods/twin/engine.h"

typedef struct SurfaceCache {
        const TwinKind *kind;
        TwinSurface *surface;
        json_t *doc; /* the parsed surface.json the surface's strings point into */
} SurfaceCache;

/* One slot per kind; kinds are few and static. */
static SurfaceCache cache[8];

static TwinActionFn handler_find(const TwinKind *k, const char *tool)
{
        for (size_t i = 0; i < k->n_handlers; i++)
                if (streq(k->handlers[i].tool, tool))
                        return k->handlers[i].fn;
        return NULL;
}

static int surface_error(char *err, size_t errlen, const TwinKind *k, const char *fmt, ...)
        _printf_(4, 5);
static int surface_error(char *err, size_t errlen, const TwinKind *k, const char *fmt, ...)
{
        if (errlen > 0) {
                char msg[256];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(msg, sizeof(msg), fmt, ap);
                va_end(ap);
                snprintf(err, errlen, "pods/%s/surface.json: %s", k->name, msg);
        }
        return -EINVAL;
}

static TwinSurface *surface_free(TwinSurface *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_actions; i++)
                json_decref(s->actions[i].input_schema);
        for (size_t i = 0; i < s->n_routes; i++)
                json_decref(s->routes[i].args);
        free(s->actions);
        free(s->routes);
        free(s->vendor_routes);
        free(s);
        return NULL;
}

static void surface_freep(TwinSurface **s)
{
        surface_free(*s);
}

static bool method_valid(const char *m)
{
        static const char *const methods[] = {"GET", "POST", "PATCH", "PUT", "DELETE", "*"};
        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                if (streq(m, methods[i]))
                        return true;
        return false;
}

/*
 * Parses the surface of k into *ret. The strings point into doc (kept alive by the
 * caller: the cache never frees it).
 */
static int surface_parse(const TwinKind *k, json_t *doc, TwinSurface **ret, char *err,
                         size_t errlen)
{
        json_t *tools = json_object_get(doc, "tools"), *routes = json_object_get(doc, "routes"),
               *prefixes = json_object_get(doc, "prefixes"),
               *vendor = json_object_get(doc, "vendor_routes");
        if (!json_is_array(tools) || !json_is_array(routes))
                return surface_error(err, errlen, k, "needs arrays \"tools\" and \"routes\"");
        if (vendor && (!json_is_array(vendor) || prefixes))
                return surface_error(err, errlen, k,
                                     "\"vendor_routes\" must be an array, and without "
                                     "\"prefixes\"");
        if (prefixes && !json_is_array(prefixes))
                return surface_error(err, errlen, k, "\"prefixes\" must be an array of strings");
        size_t n_prefixes = prefixes ? json_array_size(prefixes) : 1;
        json_t *joined = json_array();
        if (!joined || json_object_set_new(doc, " joined patterns", joined) < 0)
                return -ENOMEM;
        if (n_prefixes == 0)
                return surface_error(err, errlen, k, "\"prefixes\" must not be empty");

        _cleanup_(surface_freep) TwinSurface *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->actions = calloc(json_array_size(tools) + 1, sizeof(TwinAction));
        s->routes = calloc(json_array_size(routes) * n_prefixes + 1, sizeof(TwinRoute));
        s->vendor_routes = calloc(json_array_size(vendor) + 1, sizeof(TwinRoute));
        if (!s->actions || !s->routes || !s->vendor_routes)
                return -ENOMEM;

        size_t i;
        json_t *v;
        json_array_foreach (tools, i, v) {
                const char *name = json_string_value(json_object_get(v, "name"));
                json_t *schema = json_object_get(v, "inputSchema"),
                       *ro = json_object_get(v, "readOnly"), *mcp = json_object_get(v, "mcp"),
                       *any = json_object_get(v, "anyBody");
                if (!name || !json_is_object(schema) || !json_is_boolean(ro) ||
                    (mcp && !json_is_boolean(mcp)) || (any && !json_is_boolean(any)) ||
                    !json_is_string(json_object_get(v, "description")))
                        return surface_error(err, errlen, k,
                                             "tools[%zu]: needs name, description, readOnly "
                                             "(and mcp, anyBody) of the right types and an "
                                             "inputSchema object",
                                             i);
                for (size_t j = 0; j < s->n_actions; j++)
                        if (streq(s->actions[j].tool, name))
                                return surface_error(err, errlen, k, "tool %s declared twice",
                                                     name);
                TwinActionFn fn = handler_find(k, name);
                if (!fn)
                        return surface_error(err, errlen, k, "tool %s has no handler in C", name);
                TwinAction *a = &s->actions[s->n_actions++];
                a->tool = name;
                a->description = json_string_value(json_object_get(v, "description"));
                a->input_schema = json_incref(schema);
                a->fn = fn;
                a->read_only = json_is_true(ro);
                a->mcp = !mcp || json_is_true(mcp);
                a->any_body = json_is_true(any);
                s->n_tools += a->mcp;
        }
        for (size_t h = 0; h < k->n_handlers; h++) {
                bool found = false;
                for (size_t j = 0; j < s->n_actions && !found; j++)
                        found = streq(s->actions[j].tool, k->handlers[h].tool);
                if (!found)
                        return surface_error(err, errlen, k, "handler %s is not a declared tool",
                                             k->handlers[h].tool);
        }

        /* routes, once per prefix, in order of prefix then table */
        for (size_t p = 0; p < n_prefixes; p++) {
                const char *prefix = prefixes ? json_string_value(json_array_get(prefixes, p)) : "";
                if (!prefix || (prefix[0] && prefix[0] != '/'))
                        return surface_error(err, errlen, k,
                                             "prefixes[%zu] must be \"\" or start with '/'", p);
                json_array_foreach (routes, i, v) {
                        const char *method = json_string_value(json_array_get(v, 0)),
                                   *pattern = json_string_value(json_array_get(v, 1)),
                                   *tool = json_string_value(json_array_get(v, 2));
                        json_t *args = json_array_get(v, 3);
                        if (!json_is_array(v) || json_array_size(v) < 3 || json_array_size(v) > 4 ||
                            !method || !method_valid(method) || !pattern || pattern[0] != '/' ||
                            !tool || (args && !json_is_object(args)))
                                return surface_error(
                                        err, errlen, k,
                                        "routes[%zu]: must be [METHOD, \"/pattern\", tool, "
                                        "{fixed args}?]",
                                        i);
                        bool known = false;
                        for (size_t j = 0; j < s->n_actions && !known; j++)
                                known = streq(s->actions[j].tool, tool);
                        if (!known)
                                return surface_error(err, errlen, k, "routes[%zu]: unknown tool %s",
                                                     i, tool);
                        TwinRoute *r = &s->routes[s->n_routes++];
                        r->method = method;
                        r->tool = tool;
                        r->args = json_incref(args);
                        if (prefix[0]) {
                                /* the joined pattern lives in doc, which the cache keeps */
                                char *p2;
                                if (asprintf(&p2, "%s%s", prefix, pattern) < 0)
                                        return -ENOMEM;
                                json_t *js = json_string(p2);
                                free(p2);
                                if (!js || json_array_append_new(joined, js) < 0)
                                        return -ENOMEM;
                                r->pattern = json_string_value(js);
                        } else
                                r->pattern = pattern;
                }
        }
        json_array_foreach (vendor, i, v) {
                const char *method = json_string_value(json_array_get(v, 0)),
                           *pattern = json_string_value(json_array_get(v, 1));
                if (!json_is_array(v) || json_array_size(v) != 2 || !method ||
                    !method_valid(method) || streq(method, "*") || !pattern || pattern[0] != '/')
                        return surface_error(err, errlen, k,
                                             "vendor_routes[%zu]: must be [METHOD, \"/pattern\"]",
                                             i);
                s->vendor_routes[s->n_vendor_routes++] = (TwinRoute){method, pattern, NULL, NULL};
        }
        *ret = TAKE_PTR(s);
        return 0;
}

static int surface_load(const TwinKind *k, json_t **ret_doc, TwinSurface **ret, char *err,
                        size_t errlen)
{
        if (!k->surface)
                return surface_error(err, errlen, k, "not embedded");
        json_error_t e;
        _cleanup_json_ json_t *doc = json_loads(k->surface, 0, &e);
        if (!doc)
                return surface_error(err, errlen, k, "line %d: %s", e.line, e.text);
        int r = surface_parse(k, doc, ret, err, errlen);
        if (r < 0)
                return r;
        *ret_doc = TAKE_PTR(doc);
        return 0;
}

const TwinSurface *twin_kind_surface(const TwinKind *k)
{
        for (size_t i = 0; i < ELEMENTSOF(cache); i++) {
                if (cache[i].kind == k)
                        return cache[i].surface;
                if (!cache[i].kind) {
                        json_t *doc;
                        TwinSurface *s;
                        if (surface_load(k, &doc, &s, NULL, 0) < 0)
                                return NULL;
                        /* doc holds the strings the surface points at: kept for the process */
                        cache[i] = (SurfaceCache){k, s, doc};
                        return s;
                }
        }
        return NULL;
}

int twin_kind_check(const TwinKind *k, char *err, size_t errlen)
{
        json_t *doc = NULL;
        TwinSurface *s = NULL;
        int r = surface_load(k, &doc, &s, err, errlen);
        surface_free(s);
        json_decref(doc);
        return r;
}

const TwinAction *twin_kind_action(const TwinKind *k, const char *tool)
{
        const TwinSurface *s = twin_kind_surface(k);
        if (!tool || !s)
                return NULL;
        for (size_t i = 0; i < s->n_actions; i++)
                if (streq(s->actions[i].tool, tool))
                        return &s->actions[i];
        return NULL;
}
