/* SPDX-License-Identifier: MIT */
/*
 * A kind's surface as data: its tools (names, descriptions, input schemas) and REST routes
 * come from pods/<kind>/surface.json, embedded at build time, and are bound here to the
 * kind's C handlers by name. Parsed once per process; what stays is names, flags and
 * routes, copied out of the document, which is then freed (twin.h, twin_kind_surface).
 */
#include <stdarg.h>
#include <sys/mman.h>

#include "common/json-util.h"
#include "pods/twin/engine.h"

typedef struct SurfaceCache {
        const TwinKind *kind;
        TwinSurface *surface;
        json_t **schemas; /* per action: its input schema once asked for, else NULL */
} SurfaceCache;

/* One slot per kind; kinds are few and static. */
static SurfaceCache cache[8];

/*
 * A bump arena for jansson (json_set_alloc_funcs) that the document kept parsed for life
 * (the part without descriptions and schemas) is parsed into: the document then goes
 * away whole with the arena, and what is kept from it (copies, made with malloc) lies
 * together at the bottom of the heap instead of spread over the pages the parse used.
 * Measured for GitHub: 24 KiB of heap resident for the kept surface instead of 72 KiB.
 * Frees are no-ops; a full arena fails the parse, which is then made on the heap.
 * jansson's allocator is process-wide: no program of ours runs threads.
 */
typedef struct Arena {
        char *base;
        size_t used, cap;
} Arena;

static Arena *arena_now;

/* n bytes (16-aligned) of arena a, or NULL when it has no room (or is NULL). */
static void *arena_take(Arena *a, size_t n)
{
        n = (n + 15) & ~(size_t)15;
        if (!a || n > a->cap - a->used)
                return NULL;
        void *p = a->base + a->used;
        a->used += n;
        return p;
}

static void *arena_alloc(size_t n)
{
        return arena_take(arena_now, n);
}

static void arena_free(void *p)
{
        (void)p;
}

/*
 * Names are matched through sorted arrays, not pairwise: a pod parses its surface at
 * every start, and checking each of GitHub's 102 tools against every other, every
 * handler and every route was ~21 000 strcmp (sorted: 60-75 µs less a parse).
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
        for (size_t i = 0; i < s->n_actions; i++)
                free((char *)s->actions[i].tool);
        for (size_t i = 0; i < s->n_routes; i++) {
                free((char *)s->routes[i].pattern);
                json_decref(s->routes[i].args);
        }
        for (size_t i = 0; i < s->n_vendor_routes; i++)
                free((char *)s->vendor_routes[i].pattern);
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
 * Parses the surface of k into *ret: from the whole document (full: the tools' descriptions
 * and input schemas are checked too) or from its part without them. Nothing in it points
 * into doc: names and patterns are copies, so are a route's fixed args. scratch (or NULL:
 * the heap) lends the memory of the name lookups.
 */
static int surface_parse(const TwinKind *k, json_t *doc, bool full, Arena *scratch,
                         TwinSurface **ret, char *err, size_t errlen)
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

        /* scratch from the parse's arena, which goes away after it: the heap the surface
         * keeps is left as it was (a freed index among the kept copies, or a deeper stack,
         * cost a pod a page of PSS) */
        _cleanup_free_ void *by_tool_heap = NULL, *by_name_heap = NULL;
        size_t n_tools = json_array_size(tools);
        const TwinHandler **by_tool = arena_take(scratch, k->n_handlers * sizeof(*by_tool));
        if (!by_tool)
                by_tool = by_tool_heap = calloc(k->n_handlers + 1, sizeof(*by_tool));
        const TwinAction **by_name = arena_take(scratch, n_tools * sizeof(*by_name));
        if (!by_name)
                by_name = by_name_heap = calloc(n_tools + 1, sizeof(*by_name));
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
                if (!name || !json_is_boolean(ro) || (mcp && !json_is_boolean(mcp)) ||
                    (any && !json_is_boolean(any)) ||
                    (full && (!json_is_object(schema) ||
                              !json_is_string(json_object_get(v, "description")))))
                        return surface_error(err, errlen, k,
                                             "tools[%zu]: needs name, description, readOnly "
                                             "(and mcp, anyBody) of the right types and an "
                                             "inputSchema object",
                                             i);
                const TwinHandler *handler = handler_find(by_tool, k->n_handlers, name);
                if (!handler)
                        return surface_error(err, errlen, k, "tool %s has no handler in C", name);
                TwinAction *a = &s->actions[s->n_actions];
                if (!(a->tool = strdup(name)))
                        return -ENOMEM;
                by_name[s->n_actions++] = a;
                a->fn = handler->fn;
                a->read_only = json_is_true(ro);
                a->mcp = !mcp || json_is_true(mcp);
                a->any_body = json_is_true(any);
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
                        const TwinAction *action = action_find(by_name, s->n_actions, tool);
                        const char *known = action ? action->tool : NULL;
                        if (!known)
                                return surface_error(err, errlen, k, "routes[%zu]: unknown tool %s",
                                                     i, tool);
                        TwinRoute *r = &s->routes[s->n_routes];
                        char *joined;
                        if (asprintf(&joined, "%s%s", prefix, pattern) < 0)
                                return -ENOMEM;
                        *r = (TwinRoute){method_valid(method), joined, known, json_deep_copy(args)};
                        s->n_routes++;
                        if (args && !r->args)
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
                char *copy = strdup(pattern);
                if (!copy)
                        return -ENOMEM;
                s->vendor_routes[s->n_vendor_routes++] =
                        (TwinRoute){method_valid(method), copy, NULL, NULL};
        }
        *ret = TAKE_PTR(s);
        return 0;
}

static void arena_use(Arena *a)
{
        arena_now = a;
        if (a)
                json_set_alloc_funcs(arena_alloc, arena_free);
        else
                json_set_alloc_funcs(malloc, free);
}

static int surface_load(const TwinKind *k, bool full, TwinSurface **ret, char *err, size_t errlen)
{
        if (!k->surface || !k->surface->full || !k->surface->min)
                return surface_error(err, errlen, k, "not embedded");
        const char *text = full ? k->surface->full : k->surface->min;
        /* the kept parse only: the full document's tools are handed out (tools/list) */
        Arena a = {.cap = full ? 0 : 32 * strlen(text) + 65536};
        if (a.cap) {
                a.base = mmap(NULL, a.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                              0);
                if (a.base == MAP_FAILED)
                        a = (Arena){};
        }
        json_error_t e;
        arena_use(a.base ? &a : NULL);
        json_t *doc = json_loads(text, 0, &e);
        arena_use(NULL);
        if (!doc && a.base)
                doc = json_loads(text, 0, &e); /* the arena was too small: on the heap */
        int r = doc ? surface_parse(k, doc, full, a.base ? &a : NULL, ret, err, errlen)
                    : surface_error(err, errlen, k, "line %d: %s", e.line, e.text);
        if (doc && a.base && (char *)doc >= a.base && (char *)doc < a.base + a.cap) {
                arena_use(&a);
                json_decref(doc);
                arena_use(NULL);
        } else
                json_decref(doc);
        if (a.base)
                (void)munmap(a.base, a.cap);
        return r;
}

static SurfaceCache *cache_of(const TwinKind *k)
{
        for (size_t i = 0; i < ELEMENTSOF(cache); i++) {
                if (cache[i].kind == k)
                        return &cache[i];
                if (!cache[i].kind) {
                        TwinSurface *s;
                        if (surface_load(k, false, &s, NULL, 0) < 0 ||
                            s->n_actions != k->surface->n_schemas)
                                return NULL;
                        json_t **schemas = calloc(s->n_actions + 1, sizeof(json_t *));
                        if (!schemas) {
                                surface_free(s);
                                return NULL;
                        }
                        cache[i] = (SurfaceCache){k, s, schemas};
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

int twin_kind_check(const TwinKind *k, char *err, size_t errlen)
{
        _cleanup_(surface_freep) TwinSurface *s = NULL, *m = NULL;
        int r = surface_load(k, true, &s, err, errlen);
        if (r >= 0)
                r = surface_load(k, false, &m, err, errlen);
        if (r < 0)
                return r;
        /* the build's parts (cmake/embed-surface.cmake) are the document's */
        bool same = m->n_actions == s->n_actions && m->n_routes == s->n_routes &&
                    k->surface->n_schemas == s->n_actions;
        for (size_t i = 0; same && i < s->n_actions; i++)
                same = streq(s->actions[i].tool, m->actions[i].tool);
        if (!same)
                return surface_error(err, errlen, k,
                                     "the embedded parts do not match the document");
        return 0;
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
