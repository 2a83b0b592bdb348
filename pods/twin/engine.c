/* SPDX-License-Identifier: MIT */
/*
 * The twin engine: instances, dispatch (/_pome, MCP, vendor routes, the loud 501),
 * argument merging and reply stamping. One mechanism for every kind; kinds only bring
 * tables and action functions.
 */
#include <sys/mman.h>
#include <time.h>

#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/timeutil.h"
#include "pods/twin/engine.h"
#include "pods/twin/redact.h"

struct Twin {
        const TwinKind *kind;
        json_t *world; /* NULL while packed */
        int64_t clock; /* pinned time in seconds since the epoch, 0 = the real clock */
        char *packed;  /* twin_pack: the world as compact JSON in pages of its own, or NULL */
        size_t packed_len, packed_cap;
        int64_t started_usec; /* CLOCK_MONOTONIC at twin_new */
};

/* Kinds in the fixed order of twin_kind_names(). */
static const TwinKind *const kinds[] = {&twin_kind_github, &twin_kind_slack, &twin_kind_stripe,
                                        &twin_kind_gmail, &twin_kind_linear};

const TwinKind *twin_kind_find(const char *name)
{
        for (size_t i = 0; name && i < ELEMENTSOF(kinds); i++)
                if (streq(kinds[i]->name, name))
                        return kinds[i];
        return NULL;
}

const char *const *twin_kind_names(void)
{
        static const char *names[ELEMENTSOF(kinds) + 1];
        if (!names[0])
                for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                        names[i] = kinds[i]->name;
        return names;
}

/*
 * Whether seed (an object, "_meta" removed) is a task seed for several twins: every member
 * is named after a twin kind (github, slack, stripe, gmail, linear) and is an object. No twin's
 * own seed has such a member, so the two forms never overlap.
 */
static bool is_multi_twin_seed(const json_t *seed)
{
        const char *key;
        json_t *v;
        if (json_object_size(seed) == 0)
                return false;
        json_object_foreach ((json_t *)seed, key, v) {
                if (!twin_kind_find(key) || !json_is_object(v))
                        return false;
        }
        return true;
}

static int load_world(const TwinKind *k, const json_t *seed, json_t **ret, char *err, size_t errlen)
{
        _cleanup_json_ json_t *empty = NULL;
        if (err && errlen > 0)
                err[0] = 0;
        if (!seed) {
                empty = json_object();
                if (!empty)
                        return -ENOMEM;
                seed = empty;
        }
        if (!json_is_object(seed))
                return twin_seed_error(err, errlen, "seed must be a JSON object");
        /* hosted Pome's compiled task seeds carry provenance in "_meta": not world state */
        _cleanup_json_ json_t *bare = NULL;
        if (json_object_get(seed, "_meta")) {
                bare = json_copy((json_t *)seed);
                if (!bare || json_object_del(bare, "_meta") < 0)
                        return -ENOMEM;
                seed = bare;
        }
        /* a task's seed for several twins, {"github": {…}, "slack": {…}}: this kind's part */
        if (is_multi_twin_seed(seed)) {
                json_t *part = json_object_get(seed, k->name);
                if (!json_is_object(part))
                        return twin_seed_error(err, errlen,
                                               "the seed is for several twins and has no "
                                               "\"%s\" object",
                                               k->name);
                seed = part;
        }
        return k->load_seed(seed, ret, err, errlen);
}

int twin_new(const TwinKind *k, const json_t *seed, Twin **ret, char *err, size_t errlen)
{
        _cleanup_json_ json_t *world = NULL;
        int r;
        if (!twin_kind_surface(k))
                return (r = twin_kind_check(k, err, errlen)) < 0 ? r : -ENOMEM;
        r = load_world(k, seed, &world, err, errlen);
        if (r < 0)
                return r;
        Twin *t = calloc(1, sizeof(Twin));
        if (!t)
                return -ENOMEM;
        t->kind = k;
        t->world = TAKE_PTR(world);
        t->started_usec = (int64_t)now_usec(CLOCK_MONOTONIC);
        *ret = t;
        return 0;
}

static char build_sha[64] = "unknown", build_time[64] = "unknown";

void twin_set_build(const char *git_sha, const char *time)
{
        snprintf(build_sha, sizeof(build_sha), "%s", git_sha ? git_sha : "unknown");
        snprintf(build_time, sizeof(build_time), "%s", time ? time : "unknown");
}

json_t *twin_runtime(void)
{
        return json_pack("{s:s, s:s, s:s, s:s}", "package", "pome", "version", POME_VERSION,
                         "git_sha", build_sha, "build_time", build_time);
}

double twin_uptime(const Twin *t)
{
        return (double)((int64_t)now_usec(CLOCK_MONOTONIC) - t->started_usec) / 1e6;
}

json_t *twin_health(const Twin *t, bool session)
{
        const TwinKind *k = t->kind;
        _cleanup_json_ json_t *body = json_pack("{s:b, s:s}", "ok", true, "twin", k->name);
        if (!body)
                return NULL;
        if (!session &&
            (json_object_set_new(body, "implementation", json_string(k->implementation)) < 0 ||
             json_object_set_new(body, "tools",
                                 json_integer((json_int_t)twin_kind_surface(k)->n_tools)) < 0 ||
             json_object_set_new(body, "runtime", twin_runtime()) < 0))
                return NULL;
        if (k->health_extras && k->health_extras(t, body, session) < 0)
                return NULL;
        return TAKE_PTR(body);
}

static void packed_free(Twin *t)
{
        if (t->packed)
                (void)munmap(t->packed, t->packed_cap);
        t->packed = NULL;
        t->packed_len = t->packed_cap = 0;
}

Twin *twin_free(Twin *t)
{
        if (t) {
                json_decref(t->world);
                packed_free(t);
                free(t);
        }
        return NULL;
}

/* JSON_ALLOW_NUL: a world string may hold U+0000 (json_stringn), which dumps as \u0000. */
#define PACK_LOAD_FLAGS (JSON_ALLOW_NUL | JSON_DECODE_ANY)
/* jansson's parser goes no deeper (JSON_PARSER_MAX_DEPTH) */
#define PACK_MAX_DEPTH 2048

int twin_pack(Twin *t)
{
        if (t->packed || !t->world)
                return 0;
        /* 0: a string that is not UTF-8 (json_stringn_nocheck), or no memory to dump */
        size_t n = json_dumpb(t->world, NULL, 0, JSON_COMPACT);
        if (n == 0)
                return -EBADMSG;
        long page = sysconf(_SC_PAGESIZE);
        if (n < (size_t)page)
                return 0; /* a page of its own would cost more than the tree it frees */
        size_t cap = (n + (size_t)page - 1) / (size_t)page * (size_t)page;
        /* pages of its own, not the heap: the heap the tree held can then go back whole */
        char *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return -ENOMEM;
        if (json_dumpb(t->world, p, n, JSON_COMPACT) != n) {
                (void)munmap(p, cap);
                return -ENOMEM;
        }
        /* the bytes must load back into this very world, or the tree stays (a world deeper
         * than jansson's parser goes would not). Checked by a scan, not a parse: a parse's freed
         * objects would stay cached by malloc at the heap's top and keep the pages packing is for.
         * Numbers come back the same (integers as written, reals at 17 digits). */
        if (!json_scan_compact(p, n, PACK_MAX_DEPTH)) {
                (void)munmap(p, cap);
                return -EBADMSG;
        }
        json_decref(t->world);
        t->world = NULL;
        t->packed = p;
        t->packed_len = n;
        t->packed_cap = cap;
        return 1;
}

int twin_unpack(Twin *t)
{
        if (!t->packed)
                return 0;
        json_t *w = json_loadb(t->packed, t->packed_len, PACK_LOAD_FLAGS, NULL);
        if (!w)
                return -ENOMEM; /* twin_pack checked that the bytes load: only memory can fail */
        t->world = w;
        packed_free(t);
        return 1;
}

bool twin_packed(const Twin *t)
{
        return t->packed != NULL;
}

const TwinKind *twin_kind(const Twin *t)
{
        return t->kind;
}

json_t *twin_world(Twin *t)
{
        return t->world;
}

void twin_world_replace(Twin *t, json_t *world)
{
        if (!world)
                return;
        json_decref(t->world);
        packed_free(t);
        t->world = world;
}

void twin_set_clock(Twin *t, int64_t now)
{
        t->clock = now;
}

int twin_reseed(Twin *t, const json_t *seed, char *err, size_t errlen)
{
        json_t *world;
        int r = load_world(t->kind, seed, &world, err, errlen);
        if (r < 0)
                return r;
        json_decref(t->world);
        packed_free(t);
        t->world = world;
        return 0;
}

json_t *twin_kind_tools(const TwinKind *k)
{
        const TwinSurface *s = twin_kind_surface(k);
        _cleanup_json_ json_t *tools = json_array(), *doc = twin_kind_surface_tools(k);
        if (!tools || !s || !doc)
                return NULL;
        for (size_t i = 0; i < s->n_actions; i++) {
                const TwinAction *a = &s->actions[i];
                if (!a->mcp)
                        continue;
                json_t *d = json_array_get(doc, i);
                /* a tool's outputSchema and annotations (title and hints, as the vendor lists
                 * them) are surface.json's own when it has them; else {readOnlyHint} */
                json_t *ann = json_object_get(d, "annotations");
                json_t *tool = json_pack(
                        "{s:s, s:O, s:O, s:O*, s:o}", "name", a->tool, "description",
                        json_object_get(d, "description"), "inputSchema",
                        json_object_get(d, "inputSchema"), "outputSchema",
                        json_object_get(d, "outputSchema"), "annotations",
                        json_is_object(ann) ? json_incref(ann)
                                            : json_pack("{s:b}", "readOnlyHint", a->read_only));
                if (json_array_append_new(tools, tool) < 0)
                        return NULL;
        }
        return TAKE_PTR(tools);
}

static int64_t twin_now(const Twin *t)
{
        return t->clock ? t->clock : (int64_t)time(NULL);
}

/* The call an action (or the kind's advance hook) sees: args and rq borrowed, now the
 * twin's clock. */
static TwinCall call_of(Twin *t, json_t *args, const TwinRequest *rq, const char *base_url)
{
        return (TwinCall){
                .twin = t,
                .world = t->world,
                .args = args,
                .request = rq,
                .base_url = strempty(base_url),
                .now = twin_now(t),
        };
}

int twin_run_action(Twin *t, const TwinAction *a, json_t *args, const TwinRequest *rq,
                    const char *base_url, TwinReply *rp)
{
        free(rp->tool);
        rp->tool = strdup(a->tool);
        if (!rp->tool)
                return -ENOMEM;
        _cleanup_json_ json_t *empty = NULL;
        if (!json_is_object(args)) {
                empty = json_object();
                if (!empty)
                        return -ENOMEM;
                args = empty;
        }
        TwinCall c = call_of(t, args, rq, base_url);
        int r = a->fn(&c, rp);
        if (r < 0)
                return r;
        return rp->status >= 100 && rp->status <= 599 ? 0 : -EIO;
}

/* The message of an error body: GitHub {message}, Slack {error}, Stripe {error:{message}}. */
static char *error_message(const TwinReply *rp)
{
        const char *m = json_get_str(rp->body, "message");
        json_t *e = json_object_get(rp->body, "error");
        if (!m)
                m = json_string_value(e);
        if (!m)
                m = json_get_str(e, "message");
        if (m)
                return strdup(m);
        char *s;
        return asprintf(&s, "HTTP %d", rp->status) < 0 ? NULL : s;
}

void twin_reply_finish(Twin *t, TwinReply *rp, int r)
{
        if (r < 0) {
                json_decref(rp->body);
                json_decref(rp->headers);
                json_decref(rp->state_delta);
                free(rp->error);
                rp->body = rp->headers = rp->state_delta = NULL;
                rp->error = NULL;
                rp->state_mutation = false;
                t->kind->error(500, "internal_error", "The twin failed to serve this request.", rp);
                rp->status = 500;
        }
        if (!rp->fidelity)
                rp->fidelity = "semantic";
        if (rp->status >= 400 && !rp->error)
                rp->error = error_message(rp);
}

/*
 * Lets the kind apply what came due by now (Slack's scheduled messages) before a call sees
 * the world; the changes go to rp->events, each a tape row of its own. 0 or -ENOMEM.
 */
static int advance(Twin *t, const char *base_url, TwinReply *rp)
{
        if (!t->kind->advance)
                return 0;
        _cleanup_json_ json_t *args = json_object(), *events = json_array();
        if (!args || !events)
                return -ENOMEM;
        TwinCall c = call_of(t, args, NULL, base_url);
        int r = t->kind->advance(&c, events);
        if (json_array_size(events) > 0) {
                json_decref(rp->events);
                rp->events = TAKE_PTR(events);
        }
        return r;
}

int twin_advance(Twin *t, TwinReply *rp)
{
        return advance(t, "", rp);
}

int twin_call_action(Twin *t, const char *tool, json_t *args, const char *base_url, TwinReply *rp)
{
        const TwinAction *a = twin_kind_action(t->kind, tool);
        if (!a)
                return -ENOENT;
        int r = advance(t, base_url, rp);
        if (r >= 0)
                r = twin_run_action(t, a, args, NULL, base_url, rp);
        twin_reply_finish(t, rp, r);
        return 0;
}

static const char *header(const TwinRequest *rq, const char *name)
{
        return json_get_str(rq->headers, name);
}

static bool body_blank(const TwinRequest *rq)
{
        for (size_t i = 0; i < rq->body_len; i++)
                if (!strchr(" \t\r\n", rq->body[i]) || rq->body[i] == 0)
                        return false;
        return true;
}

static bool body_starts_json(const TwinRequest *rq)
{
        for (size_t i = 0; i < rq->body_len; i++)
                if (!strchr(" \t\r\n", rq->body[i]) || rq->body[i] == 0)
                        return rq->body[i] == '{' || rq->body[i] == '[';
        return false;
}

/* Media type without parameters, compared case-insensitively (RFC 9110 §8.3.1). */
static bool media_type_is(const char *ct, const char *type)
{
        size_t l = strlen(type);
        if (!ct || strncasecmp(ct, type, l) != 0)
                return false;
        return ct[l] == 0 || ct[l] == ';' || ct[l] == ' ';
}

size_t twin_json_depth(const json_t *j, size_t limit)
{
        if (!json_is_object(j) && !json_is_array(j))
                return 0;
        if (limit == 0)
                return 1;
        size_t max = 0;
        if (json_is_array(j)) {
                for (size_t i = 0; i < json_array_size(j) && max < limit; i++) {
                        size_t d = twin_json_depth(json_array_get(j, i), limit - 1);
                        max = d > max ? d : max;
                }
        } else {
                const char *k;
                json_t *v;
                json_object_foreach ((json_t *)j, k, v) {
                        size_t d = twin_json_depth(v, limit - 1);
                        max = d > max ? d : max;
                        if (max >= limit)
                                break;
                }
        }
        return max + 1;
}

/*
 * twin_form_parse for a body or query; a NUL refused there becomes the kind's 400
 * invalid_form_data in rp (returns 1). 0, 1, -ENOMEM.
 */
static int form_args(Twin *t, const char *s, size_t len, bool body, json_t **ret, TwinReply *rp)
{
        _cleanup_free_ char *bad = NULL;
        int r = t->kind->flags & TWIN_KIND_FORM_BODY ? twin_form_parse_strict(s, len, ret, &bad)
                                                     : twin_form_parse(s, len, ret);
        if (r == -EILSEQ) {
                _cleanup_free_ char *msg = NULL;
                if (asprintf(&msg, "Invalid UTF-8 characters found in %s: \"%.80s\".",
                             body ? "POST body" : "query string", strempty(bad)) < 0)
                        return -ENOMEM;
                t->kind->error(400, "invalid_utf8", msg, rp);
                return rp->body ? 1 : -ENOMEM;
        }
        if (r != -EBADMSG)
                return r;
        t->kind->error(400, "invalid_form_data",
                       "Form data and query strings cannot contain NUL bytes (%00).", rp);
        return rp->body ? 1 : -ENOMEM;
}

/*
 * A multipart/form-data body as arguments (*ret) and as the tape shows it (*ret_tape), new
 * objects: a field is a string (invalid UTF-8 mended, a NUL refused as in forms), a file part
 * {filename, content_type?, size, content | content_base64} (text as it is, other bytes in
 * base64), which the tape keeps without its bytes. Later parts of one name win, as in forms.
 * 0, 1 when rp holds the kind's invalid_form_data refusal, -ENOMEM.
 */
static int multipart_args(Twin *t, const TwinRequest *rq, const char *ct, json_t **ret,
                          json_t **ret_tape, TwinReply *rp)
{
        _cleanup_(twin_multipart_done) TwinMultipart m = {};
        const char *why = NULL;
        int r = twin_multipart_parse(ct, rq->body, rq->body_len, &m, &why);
        if (r == -ENOMEM)
                return r;
        _cleanup_json_ json_t *args = json_object(), *tape = json_object();
        if (!args || !tape)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < m.n; i++) {
                const TwinPart *p = &m.parts[i];
                bool nul = memchr(p->data, 0, p->len) != NULL;
                if (!p->filename) {
                        if (nul) {
                                why = "a form field holds a NUL byte";
                                r = -EBADMSG;
                                break;
                        }
                        json_t *v = twin_json_string_lossy(p->data, p->len);
                        if (json_object_set_new(args, p->name, v) < 0 ||
                            json_object_set(tape, p->name, v) < 0)
                                return -ENOMEM;
                        continue;
                }
                json_t *text = nul ? NULL : json_stringn(p->data, p->len);
                _cleanup_free_ char *b64 = text ? NULL : twin_base64(p->data, p->len);
                _cleanup_json_ json_t *meta =
                        json_pack("{s:s, s:s*, s:I}", "filename", p->filename, "content_type",
                                  p->content_type, "size", (json_int_t)p->len);
                json_t *file = meta ? json_deep_copy(meta) : NULL;
                if (!file || (!text && !b64) ||
                    json_object_set_new(file, text ? "content" : "content_base64",
                                        text ? text : json_string(b64)) < 0 ||
                    json_object_set_new(args, p->name, file) < 0 ||
                    json_object_set(tape, p->name, meta) < 0)
                        return -ENOMEM;
        }
        if (r < 0) {
                char msg[160];
                snprintf(msg, sizeof(msg), "Malformed multipart/form-data body: %s.",
                         why ? why : "unreadable");
                t->kind->error(400, "invalid_form_data", msg, rp);
                return rp->body ? 1 : -ENOMEM;
        }
        *ret = TAKE_PTR(args);
        *ret_tape = TAKE_PTR(tape);
        return 0;
}

/*
 * Parses the request body into *ret (a new object, or NULL when there is none or it is
 * not a format we read; a JSON array is {array_body: the array} when array_body is not NULL,
 * else refused) and, when the tape should show it otherwise (multipart: files
 * without their bytes), *ret_tape (else NULL). flags are the kind's TWIN_KIND_* as they
 * apply to this action (an any_body action's without the body ones). Returns 0, 1 when rp
 * now holds the kind's invalid_json / invalid_form_data refusal, or -ENOMEM.
 */
static int parse_body(Twin *t, const TwinRequest *rq, unsigned flags, const char *array_body,
                      json_t **ret, json_t **ret_tape, TwinReply *rp)
{
        *ret = NULL;
        *ret_tape = NULL;
        if (!rq->body || rq->body_len == 0 || body_blank(rq))
                return 0;
        const char *ct = header(rq, "content-type");
        if (flags & TWIN_KIND_FORM_BODY) {
                if (ct && !media_type_is(ct, "application/x-www-form-urlencoded")) {
                        t->kind->error(400, "invalid_content_type",
                                       "Invalid request (check that your POST content type is "
                                       "application/x-www-form-urlencoded).",
                                       rp);
                        return rp->body ? 1 : -ENOMEM;
                }
                return form_args(t, rq->body, rq->body_len, true, ret, rp);
        }
        bool json = (flags & TWIN_KIND_JSON_BODY) || media_type_is(ct, "application/json") ||
                    (ct && strstr(ct, "+json")) || body_starts_json(rq);
        if (json) {
                json_error_t e;
                /* no JSON_ALLOW_NUL: "\u0000" is refused here as %00 is in forms */
                json_t *b = json_loadb(rq->body, rq->body_len, 0, &e);
                if (json_is_array(b) && array_body &&
                    twin_json_depth(b, TWIN_JSON_MAX_DEPTH) <= TWIN_JSON_MAX_DEPTH) {
                        /* the action takes its list as the whole body (TwinAction.array_body) */
                        *ret = json_pack("{s:o}", array_body, b);
                        return *ret ? 0 : -ENOMEM;
                }
                if (!json_is_object(b) ||
                    twin_json_depth(b, TWIN_JSON_MAX_DEPTH) > TWIN_JSON_MAX_DEPTH) {
                        /* jansson's words, except where they name its own flag */
                        const char *why = !b && strstr(e.text, "JSON_ALLOW_NUL")
                                                  ? "Strings must not contain \\u0000"
                                          : !b                ? e.text
                                          : json_is_object(b) ? "Body nests too deeply"
                                                              : "Body should be a JSON object";
                        json_decref(b);
                        t->kind->error(400, "invalid_json", why, rp);
                        return 1;
                }
                *ret = b;
                return 0;
        }
        if (media_type_is(ct, "multipart/form-data"))
                return multipart_args(t, rq, ct, ret, ret_tape, rp);
        /* other media types carry nothing we read: the action has the raw bytes */
        if (ct && !media_type_is(ct, "application/x-www-form-urlencoded") &&
            !media_type_is(ct, "text/plain"))
                return 0;
        return form_args(t, rq->body, rq->body_len, true, ret, rp);
}

/* Merges src's members into dst (dst's values lose). */
static int merge(json_t *dst, json_t *src)
{
        return src && json_object_update(dst, src) < 0 ? -ENOMEM : 0;
}

static int serve_route(Twin *t, const TwinRoute *route, json_t *params, const TwinRequest *rq,
                       TwinReply *rp)
{
        const TwinAction *a = twin_kind_action(t->kind, route->tool);
        if (!a)
                return -EIO; /* a kind table bug */

        /* the tool is stamped even when the body is refused: the caller named it */
        rp->tool = strdup(a->tool);
        if (!rp->tool)
                return -ENOMEM;

        unsigned flags = t->kind->flags;
        if (a->any_body)
                flags &= ~(unsigned)(TWIN_KIND_FORM_BODY | TWIN_KIND_JSON_BODY);
        _cleanup_json_ json_t *body = NULL, *tape_body = NULL;
        int r = parse_body(t, rq, flags, a->array_body, &body, &tape_body, rp);
        if (r != 0)
                return r < 0 ? r : 0;

        /* precedence: path parameters > body > query */
        _cleanup_json_ json_t *args = NULL;
        const char *query = strempty(rq->query);
        if ((flags & TWIN_KIND_JSON_BODY) && !streq_ptr(rq->method, "GET") &&
            !streq_ptr(rq->method, "HEAD"))
                query = "";
        r = form_args(t, query, strlen(query), false, &args, rp);
        if (r != 0)
                return r < 0 ? r : 0;
        r = merge(args, body);
        if (r < 0)
                return r;
        r = merge(args, params);
        if (r < 0)
                return r;
        r = merge(args, route->args);
        if (r < 0)
                return r;
        rp->request_body = json_incref(tape_body ? tape_body : body);
        r = twin_run_action(t, a, args, rq, rq->base_url, rp);
        if (r >= 0 && t->kind->vendor_headers)
                r = t->kind->vendor_headers(rq, twin_now(t), rp);
        return r;
}

/*
 * The loud 501 (CONTRACT.md): the kind's own client-error envelope, so the caller's SDK reads
 * it as the vendor's (GitHub {message, documentation_url, status}, Slack {ok:false, error:
 * "unsupported_endpoint"}), at 501 and carrying fidelity "unsupported", the twin and what it
 * serves; fidelity and twin also under "_twin", where hosted Pome's twins put them.
 */
static int reply_unsupported(Twin *t, const TwinRequest *rq, TwinReply *rp)
{
        _cleanup_free_ char *raw = NULL;
        if (asprintf(&raw, "%s %s is not supported by the pome %s twin", rq->method, rq->path,
                     t->kind->name) < 0)
                return -ENOMEM;
        /* the path is the caller's bytes: mend invalid UTF-8 rather than fail the 501 */
        _cleanup_json_ json_t *msg = twin_json_string_lossy(raw, strlen(raw));
        rp->error = msg ? strdup(json_string_value(msg)) : NULL;
        if (!rp->error)
                return -ENOMEM;
        t->kind->error(400, "unsupported_endpoint", rp->error, rp);
        rp->status = 501;
        rp->fidelity = "unsupported";
        if (!json_is_object(rp->body))
                return -ENOMEM;
        if (json_is_string(json_object_get(rp->body, "status")) &&
            json_object_set_new(rp->body, "status", json_string("501")) < 0)
                return -ENOMEM;
        json_t *supported = twin_kind_supported(t->kind);
        if (json_object_set_new(rp->body, "fidelity", json_string("unsupported")) < 0 ||
            json_object_set_new(rp->body, "twin", json_string(t->kind->name)) < 0 ||
            json_object_set_new(rp->body, "supported", supported) < 0 ||
            json_object_set_new(
                    rp->body, "_twin",
                    json_pack("{s:s, s:s}", "fidelity", "unsupported", "twin", t->kind->name)) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * Whether the vendor may serve method on path, as far as the surface knows: false only when
 * path is one the twin routes (by a pattern that does not take the rest of the path) and
 * neither the twin nor the vendor (vendor_routes) has method there. github.com answers such a
 * call (DELETE on an issue) 404 Not Found, not 405: a fact about the vendor we can mirror,
 * where a path we do not know at all stays the loud 501.
 */
static bool vendor_serves(const TwinSurface *s, const char *method, const char *path)
{
        bool known = false;
        for (size_t i = 0; i < s->n_routes && !known; i++) {
                const TwinRoute *route = &s->routes[i];
                if (streq(route->method, "*") && twin_route_match(route->pattern, path, NULL) > 0)
                        return true;
                known = !strstr(route->pattern, "+}") &&
                        twin_route_match(route->pattern, path, NULL) > 0;
        }
        if (!known)
                return true;
        for (size_t i = 0; i < s->n_vendor_routes; i++)
                if (streq(s->vendor_routes[i].method, method) &&
                    twin_route_match(s->vendor_routes[i].pattern, path, NULL) > 0)
                        return true;
        return false;
}

/*
 * Whether method on path is one of the vendor's endpoints the surface names literally (no
 * parameter) in vendor_routes: it wins over a served route whose parameter would take the
 * same segment (Stripe's GET /v1/invoices/upcoming is not an invoice called "upcoming").
 */
static bool vendor_literal(const TwinSurface *s, const char *method, const char *path)
{
        for (size_t i = 0; s && i < s->n_vendor_routes; i++)
                if (streq(s->vendor_routes[i].method, method) &&
                    !strchr(s->vendor_routes[i].pattern, '{') &&
                    streq(s->vendor_routes[i].pattern, path))
                        return true;
        return false;
}

/* The vendor's 404 for a method it has on no such path, in the kind's envelope. */
static int reply_vendor_not_found(Twin *t, TwinReply *rp)
{
        t->kind->error(404, "not_found", "Not Found", rp);
        return rp->body ? 0 : -ENOMEM;
}

/* 405 with Allow, in the shape of the MCP TypeScript SDK's refusal (JSON-RPC, id null). */
static int reply_not_allowed(TwinReply *rp, const char *allow)
{
        json_t *body = json_pack("{s:s, s:{s:i, s:s}, s:n}", "jsonrpc", "2.0", "error", "code",
                                 -32000, "message", "Method not allowed.", "id");
        rp->headers = json_pack("{s:s}", "Allow", allow);
        if (!body || !rp->headers) {
                json_decref(body);
                return -ENOMEM;
        }
        twin_reply_json(rp, 405, body);
        return 0;
}

static int serve_pome(Twin *t, const TwinRequest *rq, TwinReply *rp, const char *what)
{
        if (!streq(rq->method, "GET") && !streq(rq->method, "HEAD"))
                return reply_not_allowed(rp, "GET");
        json_t *body;
        if (streq(what, "health"))
                body = twin_health(t, true);
        else {
                /* The kind drops its bookkeeping; secret-looking values go here, for every kind
                 * alike (the world keeps them: the vendor's API shows them as they are). */
                body = t->kind->public_state(t->world);
                if (body && twin_redact_json(body) < 0) {
                        json_decref(body);
                        body = NULL;
                }
        }
        return twin_reply_body(rp, 200, body);
}

static int handle(Twin *t, const TwinRequest *rq, TwinReply *rp)
{
        const char *path = rq->path, *m = rq->method;

        if (streq(path, "/_pome/health"))
                return serve_pome(t, rq, rp, "health");
        if (streq(path, "/_pome/state"))
                return serve_pome(t, rq, rp, "state");
        if (streq(path, "/mcp") || streq(path, "/mcp/"))
                return streq(m, "POST") ? twin_mcp_jsonrpc(t, rq, rp)
                                        : reply_not_allowed(rp, "POST");
        if (streq(path, "/mcp/tools"))
                return streq(m, "GET") ? twin_mcp_list(t, rp) : reply_not_allowed(rp, "GET");
        if (streq(path, "/mcp/call"))
                return streq(m, "POST") ? twin_mcp_call(t, rq, rp) : reply_not_allowed(rp, "POST");
        if (startswith(path, "/mcp/tools/"))
                return streq(m, "POST") ? twin_mcp_call(t, rq, rp) : reply_not_allowed(rp, "POST");
        if (streq(path, "/openapi.json"))
                return streq(m, "GET")
                               ? twin_reply_body(rp, 200, twin_kind_openapi(t->kind, rq->base_url))
                               : reply_not_allowed(rp, "GET");

        const TwinSurface *s = twin_kind_surface(t->kind);
        /* HEAD is GET without the body (RFC 9110 §9.3.2); the HTTP layer drops the body */
        const char *as = streq(m, "HEAD") ? "GET" : m;
        if (vendor_literal(s, as, path))
                return reply_unsupported(t, rq, rp);
        for (size_t i = 0; s && i < s->n_routes; i++) {
                const TwinRoute *route = &s->routes[i];
                if (!streq(route->method, "*") && !streq(route->method, as))
                        continue;
                /* matched bare first: filling params decodes each parameter segment, and
                 * most routes a path is tried against share its first ones
                 * ("/repos/{owner}/{repo}/…") before they fail */
                if (twin_route_match(route->pattern, path, NULL) == 0)
                        continue;
                _cleanup_json_ json_t *params = json_object();
                if (!params)
                        return -ENOMEM;
                int r = twin_route_match(route->pattern, path, params);
                if (r < 0)
                        return r;
                if (r > 0)
                        return serve_route(t, route, params, rq, rp);
        }
        if (s && !vendor_serves(s, as, path))
                return reply_vendor_not_found(t, rp);
        return reply_unsupported(t, rq, rp);
}

void twin_handle(Twin *t, const TwinRequest *rq, TwinReply *rp)
{
        TwinRequest safe = *rq;
        /* a front end bug must not crash the pod: missing fields read as empty */
        if (!safe.method)
                safe.method = "GET";
        if (!safe.path || safe.path[0] != '/')
                safe.path = "/";
        if (!safe.query)
                safe.query = "";
        if (!safe.base_url)
                safe.base_url = "";
        int r = advance(t, safe.base_url, rp);
        twin_reply_finish(t, rp, r < 0 ? r : handle(t, &safe, rp));
}
