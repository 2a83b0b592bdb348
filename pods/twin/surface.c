/* SPDX-License-Identifier: MIT */
/*
 * A kind's surface as data: its tools (names, descriptions, input schemas) and REST routes
 * come from pods/<kind>/surface.json, embedded at build time, and are bound here to the
 * kind's C handlers by name. What a process keeps (names, flags, routes) comes from the
 * tables the build makes of the document, bound once per process without parsing JSON
 * (twin.h, twin_kind_surface); twin_kind_check reads the document itself and checks that
 * the tables say the same.
 */
#include <stdarg.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "pods/twin/engine.h"

typedef struct SurfaceCache {
        const TwinKind *kind;
        TwinSurface *surface;
        json_t **schemas; /* per action: its input schema once asked for, else NULL */
} SurfaceCache;

/* One slot per kind; kinds are few and static. */
static SurfaceCache cache[8];

/*
 * Names are matched through sorted arrays, not pairwise: checking each of GitHub's 102
 * tools against every other, every handler and every route was ~21 000 strcmp.
 */
static int cmp_handler(const void *a, const void *b)
{
        return strcmp((*(const TwinHandler *const *)a)->tool,
                      (*(const TwinHandler *const *)b)->tool);
}

static int cmp_action(const void *a, const void *b)
{
        return strcmp((*(const TwinAction *const *)a)->tool, (*(const TwinAction *const *)b)->tool);
}

/* The handler of tool in the sorted by_tool (n of them), or NULL. */
static const TwinHandler *handler_find(const TwinHandler *const *by_tool, size_t n,
                                       const char *tool)
{
        TwinHandler key = {.tool = tool};
        const TwinHandler *pk = &key;
        const TwinHandler *const *h = bsearch(&pk, by_tool, n, sizeof(*by_tool), cmp_handler);
        return h ? *h : NULL;
}

/* The action named tool in the sorted by_name (n of them), or NULL. */
static const TwinAction *action_find(const TwinAction *const *by_name, size_t n, const char *tool)
{
        TwinAction key = {.tool = tool};
        const TwinAction *pk = &key;
        const TwinAction *const *a = bsearch(&pk, by_name, n, sizeof(*by_name), cmp_action);
        return a ? *a : NULL;
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
        for (size_t i = 0; i < s->n_routes; i++)
                json_decref(s->routes[i].args);
        free(s->actions);
        free(s->by_name);
        free(s->routes);
        free(s->vendor_routes);
        free(s);
        return NULL;
}

static void surface_freep(TwinSurface **s)
{
        surface_free(*s);
}

/* The static spelling of method m, NULL when it is not a method a route may name. */
static const char *method_valid(const char *m)
{
        static const char *const methods[] = {"GET", "POST", "PATCH", "PUT", "DELETE", "*"};
        for (size_t i = 0; m && i < ELEMENTSOF(methods); i++)
                if (streq(m, methods[i]))
                        return methods[i];
        return NULL;
}

/*
 * Builds the surface of k from the tables of t into *ret: every tool bound to its handler,
 * every route to its tool. Names and patterns point into t's strings (which must outlive
 * the surface); a route's fixed args are parsed from their text.
 */
static int surface_build(const TwinKind *k, const TwinSurfaceText *t, TwinSurface **ret, char *err,
                         size_t errlen)
{
        _cleanup_free_ const TwinHandler **by_tool = calloc(k->n_handlers + 1, sizeof(*by_tool));
        _cleanup_free_ const TwinAction **by_name = calloc(t->n_tools + 1, sizeof(*by_name));
        if (!by_tool || !by_name)
                return -ENOMEM;
        for (size_t h = 0; h < k->n_handlers; h++)
                by_tool[h] = &k->handlers[h];
        qsort(by_tool, k->n_handlers, sizeof(*by_tool), cmp_handler);
        for (size_t h = 1; h < k->n_handlers; h++)
                if (streq(by_tool[h - 1]->tool, by_tool[h]->tool))
                        return surface_error(err, errlen, k, "handler %s bound twice",
                                             by_tool[h]->tool);

        _cleanup_(surface_freep) TwinSurface *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->actions = calloc(t->n_tools + 1, sizeof(TwinAction));
        s->routes = calloc(t->n_routes + 1, sizeof(TwinRoute));
        s->vendor_routes = calloc(t->n_vendor_routes + 1, sizeof(TwinRoute));
        if (!s->actions || !s->routes || !s->vendor_routes)
                return -ENOMEM;

        for (size_t i = 0; i < t->n_tools; i++) {
                const TwinToolDef *d = &t->tools[i];
                const TwinHandler *handler = handler_find(by_tool, k->n_handlers, d->name);
                if (!handler)
                        return surface_error(err, errlen, k, "tool %s has no handler in C",
                                             d->name);
                TwinAction *a = &s->actions[s->n_actions];
                *a = (TwinAction){.tool = d->name,
                                  .fn = handler->fn,
                                  .read_only = d->read_only,
                                  .mcp = d->mcp,
                                  .array_body = d->array_body,
                                  .any_body = d->any_body,
                                  .output_schema = d->output_schema};
                by_name[s->n_actions++] = a;
                s->n_tools += a->mcp;
        }
        qsort(by_name, s->n_actions, sizeof(*by_name), cmp_action);
        for (size_t j = 1; j < s->n_actions; j++)
                if (streq(by_name[j - 1]->tool, by_name[j]->tool))
                        return surface_error(err, errlen, k, "tool %s declared twice",
                                             by_name[j]->tool);
        for (size_t h = 0; h < k->n_handlers; h++)
                if (!action_find(by_name, s->n_actions, k->handlers[h].tool))
                        return surface_error(err, errlen, k, "handler %s is not a declared tool",
                                             k->handlers[h].tool);

        for (size_t i = 0; i < t->n_routes; i++) {
                const TwinRouteDef *d = &t->routes[i];
                const char *method = method_valid(d->method);
                if (!method || !d->pattern || d->pattern[0] != '/')
                        return surface_error(err, errlen, k,
                                             "routes[%zu]: must be [METHOD, \"/pattern\", tool, "
                                             "{fixed args}?]",
                                             i);
                const TwinAction *action = action_find(by_name, s->n_actions, d->tool);
                if (!action)
                        return surface_error(err, errlen, k, "routes[%zu]: unknown tool %s", i,
                                             d->tool);
                TwinRoute *r = &s->routes[s->n_routes++];
                *r = (TwinRoute){method, d->pattern, action->tool, NULL};
                if (!d->args)
                        continue;
                r->args = json_loads(d->args, 0, NULL);
                if (!json_is_object(r->args)) /* a macro: its argument is read twice */
                        return r->args ? surface_error(err, errlen, k,
                                                       "routes[%zu]: fixed args must be an object",
                                                       i)
                                       : -ENOMEM;
        }
        for (size_t i = 0; i < t->n_vendor_routes; i++) {
                const TwinRouteDef *d = &t->vendor_routes[i];
                const char *method = method_valid(d->method);
                if (!method || streq(method, "*") || !d->pattern || d->pattern[0] != '/')
                        return surface_error(err, errlen, k,
                                             "vendor_routes[%zu]: must be [METHOD, \"/pattern\"]",
                                             i);
                s->vendor_routes[s->n_vendor_routes++] =
                        (TwinRoute){method, d->pattern, NULL, NULL};
        }
        s->by_name = TAKE_PTR(by_name);
        *ret = TAKE_PTR(s);
        return 0;
}

/* The tables read from a document: def arrays, and the strings made for them. */
typedef struct DocTables {
        TwinSurfaceText text;
        char **made; /* joined patterns, fixed args' text */
        size_t n_made;
} DocTables;

static void doc_tables_done(DocTables *d)
{
        free((void *)d->text.tools);
        free((void *)d->text.routes);
        free((void *)d->text.vendor_routes);
        strv_free(d->made);
        *d = (DocTables){};
}

/* a then b, as a string of d's (freed with it); NULL when a is NULL or on OOM. */
static const char *made(DocTables *d, const char *a, const char *b)
{
        if (!a || strv_extendf(&d->made, "%s%s", a, b) < 0)
                return NULL;
        return d->made[d->n_made++];
}

/*
 * Reads the whole document doc of k (the shape in twin.h, every tool with its description
 * and input schema) into the tables cmake/embed-surface.cmake makes of it at build time:
 * names and patterns point into doc, joined patterns and args into d->made.
 */
static int doc_tables(const TwinKind *k, json_t *doc, DocTables *d, char *err, size_t errlen)
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
        if (n_prefixes == 0)
                return surface_error(err, errlen, k, "\"prefixes\" must not be empty");

        TwinToolDef *td = calloc(json_array_size(tools) + 1, sizeof(*td));
        TwinRouteDef *rd = calloc(json_array_size(routes) * n_prefixes + 1, sizeof(*rd)),
                     *vd = calloc(json_array_size(vendor) + 1, sizeof(*vd));
        d->text.tools = td;
        d->text.routes = rd;
        d->text.vendor_routes = vd;
        if (!td || !rd || !vd)
                return -ENOMEM;

        size_t i;
        json_t *v;
        json_array_foreach (tools, i, v) {
                const char *name = json_string_value(json_object_get(v, "name"));
                json_t *ro = json_object_get(v, "readOnly"), *mcp = json_object_get(v, "mcp"),
                       *any = json_object_get(v, "anyBody"),
                       *array_body = json_object_get(v, "arrayBody");
                if (!name || !json_is_boolean(ro) || (mcp && !json_is_boolean(mcp)) ||
                    (any && !json_is_boolean(any)) || (array_body && !json_is_string(array_body)) ||
                    !json_is_object(json_object_get(v, "inputSchema")) ||
                    !json_is_string(json_object_get(v, "description")))
                        return surface_error(
                                err, errlen, k,
                                "tools[%zu]: needs name, description, readOnly "
                                "(and mcp, anyBody, arrayBody) of the right types and an "
                                "inputSchema object",
                                i);
                td[d->text.n_tools++] =
                        (TwinToolDef){name,
                                      json_is_true(ro),
                                      !mcp || json_is_true(mcp),
                                      json_is_true(any),
                                      json_string_value(array_body),
                                      json_is_object(json_object_get(v, "outputSchema"))};
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
                        TwinRouteDef *r = &rd[d->text.n_routes++];
                        *r = (TwinRouteDef){method, pattern, tool, NULL};
                        if (prefix[0] && !(r->pattern = made(d, prefix, pattern)))
                                return -ENOMEM;
                        _cleanup_free_ char *text = args ? json_dumps(args, JSON_COMPACT) : NULL;
                        if (args && !(r->args = made(d, text, "")))
                                return -ENOMEM;
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
                vd[d->text.n_vendor_routes++] = (TwinRouteDef){method, pattern, NULL, NULL};
        }
        return 0;
}

static SurfaceCache *cache_of(const TwinKind *k)
{
        for (size_t i = 0; i < ELEMENTSOF(cache); i++) {
                if (cache[i].kind == k)
                        return &cache[i];
                if (!cache[i].kind) {
                        _cleanup_(surface_freep) TwinSurface *s = NULL;
                        if (!k->surface || surface_build(k, k->surface, &s, NULL, 0) < 0 ||
                            s->n_actions != k->surface->n_schemas)
                                return NULL;
                        json_t **schemas = calloc(s->n_actions + 1, sizeof(json_t *));
                        if (!schemas)
                                return NULL;
                        cache[i] = (SurfaceCache){k, TAKE_PTR(s), schemas};
                        return &cache[i];
                }
        }
        return NULL;
}

const TwinSurface *twin_kind_surface(const TwinKind *k)
{
        SurfaceCache *c = cache_of(k);
        return c ? c->surface : NULL;
}

json_t *twin_kind_surface_tools(const TwinKind *k)
{
        if (!twin_kind_surface(k)) /* checks the document once */
                return NULL;
        _cleanup_json_ json_t *doc = json_loads(k->surface->full, 0, NULL);
        return json_incref(json_object_get(doc, "tools"));
}

const json_t *twin_action_input_schema(const TwinKind *k, const TwinAction *a)
{
        SurfaceCache *c = cache_of(k);
        if (!c || a < c->surface->actions || a >= c->surface->actions + c->surface->n_actions)
                return NULL;
        size_t i = (size_t)(a - c->surface->actions);
        if (!c->schemas[i])
                c->schemas[i] = json_loads(k->surface->schemas[i], 0, NULL);
        return c->schemas[i];
}

static bool same_route(const TwinRoute *a, const TwinRoute *b)
{
        return streq(a->method, b->method) && streq(a->pattern, b->pattern) &&
               streq_ptr(a->tool, b->tool) &&
               (a->args || b->args ? json_equal(a->args, b->args) : true);
}

/* Whether the surfaces built from the document (d) and from the tables (t) are the same. */
static bool same_surface(const TwinSurface *d, const TwinSurface *t)
{
        if (d->n_actions != t->n_actions || d->n_routes != t->n_routes ||
            d->n_vendor_routes != t->n_vendor_routes)
                return false;
        for (size_t i = 0; i < d->n_actions; i++) {
                const TwinAction *x = &d->actions[i], *y = &t->actions[i];
                if (!streq(x->tool, y->tool) || x->fn != y->fn || x->read_only != y->read_only ||
                    x->mcp != y->mcp || x->any_body != y->any_body ||
                    x->output_schema != y->output_schema ||
                    !streq_ptr(x->array_body, y->array_body))
                        return false;
        }
        for (size_t i = 0; i < d->n_routes; i++)
                if (!same_route(&d->routes[i], &t->routes[i]))
                        return false;
        for (size_t i = 0; i < d->n_vendor_routes; i++)
                if (!same_route(&d->vendor_routes[i], &t->vendor_routes[i]))
                        return false;
        return true;
}

int twin_kind_check(const TwinKind *k, char *err, size_t errlen)
{
        if (!k->surface || !k->surface->full)
                return surface_error(err, errlen, k, "not embedded");
        json_error_t e;
        _cleanup_json_ json_t *doc = json_loads(k->surface->full, 0, &e);
        if (!doc)
                return surface_error(err, errlen, k, "line %d: %s", e.line, e.text);
        _cleanup_(doc_tables_done) DocTables d = {};
        _cleanup_(surface_freep) TwinSurface *s = NULL, *m = NULL;
        int r = doc_tables(k, doc, &d, err, errlen);
        if (r >= 0)
                r = surface_build(k, &d.text, &s, err, errlen);
        if (r >= 0)
                r = surface_build(k, k->surface, &m, err, errlen);
        if (r < 0)
                return r;
        /* the build's tables and schemas (cmake/embed-surface.cmake) are the document's */
        if (k->surface->n_schemas != s->n_actions || !same_surface(s, m))
                return surface_error(err, errlen, k,
                                     "the embedded tables do not match the document");
        return 0;
}

const TwinAction *twin_kind_action(const TwinKind *k, const char *tool)
{
        const TwinSurface *s = twin_kind_surface(k);
        return tool && s ? action_find(s->by_name, s->n_actions, tool) : NULL;
}
