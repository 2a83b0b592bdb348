/* SPDX-License-Identifier: MIT */
/*
 * The twin engine, kind-independent parts: form and route parsers, argument readers,
 * dispatch (/_pome, MCP, the loud 501), argument precedence, reseeding, determinism.
 * Driven through the real github and slack kinds with their shipped seeds.
 */
#include <dirent.h>

#include "common/json-util.h"
#include "pods/twin/engine.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

#define BASE TWIN_TEST_BASE("github")

static void test_kinds(void)
{
        const char *const *names = twin_kind_names();
        CHECK(streq(names[0], "github") && streq(names[1], "slack") && streq(names[2], "stripe") &&
              streq(names[3], "gmail") && streq(names[4], "linear") && !names[5]);
        CHECK(twin_kind_find("stripe")->flags & TWIN_KIND_RAW_KEY);
        CHECK(twin_kind_find("github") == &twin_kind_github);
        CHECK(twin_kind_find("slack")->flags & TWIN_KIND_TOKEN_PARAM);
        CHECK(!twin_kind_find("gitlab") && !twin_kind_find(NULL));

        /* every kind's embedded surface binds: tools ↔ handlers, routes → tools; every
         * input schema is an object schema; every route pattern is reachable */
        for (const char *const *n = names; *n; n++) {
                const TwinKind *k = twin_kind_find(*n);
                char err[256];
                int r = twin_kind_check(k, err, sizeof(err));
                if (r < 0)
                        fprintf(stderr, "%s\n", err);
                CHECK(r == 0);
                const TwinSurface *s = twin_kind_surface(k);
                CHECK(s && s->n_actions > 0 && s->n_routes > 0 && s->n_tools <= s->n_actions);
                for (size_t i = 0; i < s->n_routes; i++)
                        CHECK(twin_kind_action(k, s->routes[i].tool));
                for (size_t i = 0; i < s->n_actions; i++)
                        CHECK(streq(
                                jps((json_t *)twin_action_input_schema(k, &s->actions[i]), "/type"),
                                "object"));
                /* a vendor route is one the twin does not serve */
                for (size_t i = 0; i < s->n_vendor_routes; i++)
                        for (size_t j = 0; j < s->n_routes; j++)
                                CHECK(!streq(s->vendor_routes[i].method, s->routes[j].method) ||
                                      !streq(s->vendor_routes[i].pattern, s->routes[j].pattern));
        }
        CHECK(twin_kind_surface(&twin_kind_github)->n_vendor_routes > 0);
}

static int act_noop(TwinCall *c _unused_, TwinReply *rp _unused_)
{
        return 0;
}

/* A surface that does not bind to its handlers is refused, naming what is wrong. */
static void test_surface_refusals(void)
{
        static const TwinHandler handlers[] = {{"a", act_noop}, {"b", act_noop}};
        static const char *const schemas[] = {"{\"type\":\"object\"}", "{\"type\":\"object\"}",
                                              "{\"type\":\"object\"}"};
#define TOOL(n)                                                        \
        "{\"name\":\"" n "\",\"description\":\"d\",\"readOnly\":true," \
        "\"inputSchema\":{\"type\":\"object\"}}"
        static const struct {
                const char *doc;
                size_t n_tools;
                const char *want; /* in the error, or NULL: accepted */
        } cases[] = {
                {"{\"tools\":[" TOOL("a") "," TOOL("b") "],\"routes\":[[\"GET\",\"/a\",\"a\"],"
                                                        "[\"POST\",\"/b/{id}\",\"b\"]]}",
                 2, NULL},
                {"{\"tools\":[" TOOL("a") "," TOOL("b") "," TOOL("a") "],\"routes\":[]}", 3,
                 "tool a declared twice"},
                {"{\"tools\":[" TOOL("a") "," TOOL("b") "," TOOL("c") "],\"routes\":[]}", 3,
                 "tool c has no handler in C"},
                {"{\"tools\":[" TOOL("a") "],\"routes\":[]}", 1,
                 "handler b is not a declared tool"},
                {"{\"tools\":[" TOOL("a") "," TOOL("b") "],\"routes\":[[\"GET\",\"/a\",\"a\"],"
                                                        "[\"GET\",\"/c\",\"c\"]]}",
                 2, "routes[1]: unknown tool c"},
        };
#undef TOOL
        /* the tables the build would make of cases[0] (cmake/embed-surface.cmake) */
        static const TwinToolDef tools[] = {{"a", true, true, false}, {"b", true, true, false}};
        static const TwinRouteDef routes[] = {{"GET", "/a", "a", NULL},
                                              {"POST", "/b/{id}", "b", NULL}};
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                TwinSurfaceText text = {.full = cases[i].doc,
                                        .schemas = schemas,
                                        .n_schemas = cases[i].n_tools,
                                        .tools = tools,
                                        .n_tools = ELEMENTSOF(tools),
                                        .routes = routes,
                                        .n_routes = ELEMENTSOF(routes)};
                TwinKind k = {.name = "fake",
                              .surface = &text,
                              .handlers = handlers,
                              .n_handlers = ELEMENTSOF(handlers)};
                char err[256] = "";
                int r = twin_kind_check(&k, err, sizeof(err));
                if (!cases[i].want)
                        CHECK(r == 0);
                else {
                        CHECK(r < 0 && strstr(err, cases[i].want));
                        if (!strstr(err, cases[i].want))
                                fprintf(stderr, "case %zu: %s\n", i, err);
                }
        }
        /* one name bound to two functions in C */
        static const TwinHandler twice[] = {{"b", act_noop}, {"a", act_noop}, {"b", act_noop}};
        TwinSurfaceText text = {.full = cases[0].doc,
                                .schemas = schemas,
                                .n_schemas = 2,
                                .tools = tools,
                                .n_tools = 2,
                                .routes = routes,
                                .n_routes = 2};
        TwinKind k = {.name = "fake", .surface = &text, .handlers = twice, .n_handlers = 3};
        char err[256] = "";
        CHECK(twin_kind_check(&k, err, sizeof(err)) < 0 && strstr(err, "handler b bound twice"));

        /* tables that say something else than the document: a flag, a pattern, a route's
         * fixed args, a route too few, a vendor route too many */
        static const TwinToolDef writable[] = {{"a", true, true, false}, {"b", false, true, false}};
        static const TwinRouteDef moved[] = {{"GET", "/a", "a", NULL},
                                             {"POST", "/b/{x}", "b", NULL}};
        static const TwinRouteDef fixed[] = {{"GET", "/a", "a", "{\"m\":1}"},
                                             {"POST", "/b/{id}", "b", NULL}};
        static const TwinRouteDef vendor[] = {{"GET", "/c", NULL, NULL}};
        const struct {
                const TwinToolDef *tools;
                const TwinRouteDef *routes;
                size_t n_routes, n_vendor;
        } wrong[] = {
                {writable, routes, 2, 0}, {tools, moved, 2, 0},  {tools, fixed, 2, 0},
                {tools, routes, 1, 0},    {tools, routes, 2, 1},
        };
        for (size_t i = 0; i < ELEMENTSOF(wrong); i++) {
                text.tools = wrong[i].tools;
                text.routes = wrong[i].routes;
                text.n_routes = wrong[i].n_routes;
                text.vendor_routes = vendor;
                text.n_vendor_routes = wrong[i].n_vendor;
                k.handlers = handlers;
                k.n_handlers = ELEMENTSOF(handlers);
                err[0] = 0;
                CHECK(twin_kind_check(&k, err, sizeof(err)) < 0 &&
                      strstr(err, "the embedded tables do not match the document"));
        }
        /* and once they match again, the kind is accepted */
        text.tools = tools;
        text.routes = routes;
        text.n_routes = 2;
        text.n_vendor_routes = 0;
        CHECK(twin_kind_check(&k, err, sizeof(err)) == 0);
}

static void test_form(void)
{
        static const struct {
                const char *in, *want;
        } cases[] = {
                {"", "{}"},
                {"a=1&b=two+words&c=%41%42", "{\"a\":\"1\",\"b\":\"two words\",\"c\":\"AB\"}"},
                {"metadata[k]=v&metadata[x]=y", "{\"metadata\":{\"k\":\"v\",\"x\":\"y\"}}"},
                {"expand[]=a&expand[]=b", "{\"expand\":[\"a\",\"b\"]}"},
                {"expand[]=only", "{\"expand\":[\"only\"]}"},
                {"items[0][price]=p&items[0][quantity]=2&items[1][price]=q",
                 "{\"items\":[{\"price\":\"p\",\"quantity\":\"2\"},{\"price\":\"q\"}]}"},
                {"a[5]=x&a[2]=y", "{\"a\":[\"y\",\"x\"]}"},
                {"a[][x]=1&a[][y]=2&a[][x]=3", "{\"a\":[{\"x\":\"1\",\"y\":\"2\"},{\"x\":\"3\"}]}"},
                {"m[0]=x&m[a]=y", "{\"m\":{\"0\":\"x\",\"a\":\"y\"}}"},
                {"a=1&a=2", "{\"a\":\"2\"}"},
                {"a=1&a[b]=2", "{\"a\":{\"b\":\"2\"}}"},
                {"flag", "{\"flag\":\"\"}"},
                {"=x&&b=", "{\"b\":\"\"}"},
                {"a[b=1", "{\"a[b\":\"1\"}"},
                {"a[b]c=1", "{\"a[b]c\":\"1\"}"},
                {"[x]=1", "{\"[x]\":\"1\"}"},
                {"%zz=1&x=%&y=%4", "{\"%zz\":\"1\",\"x\":\"%\",\"y\":\"%4\"}"},
                {"%ff=x", "{\"\\ufffd\":\"x\"}"},
                {"k=%e2%98%80", "{\"k\":\"\\u2600\"}"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *got = NULL,
                                      *want = json_loads(cases[i].want, JSON_ALLOW_NUL, NULL);
                CHECK_OK(twin_form_parse(cases[i].in, strlen(cases[i].in), &got));
                if (!json_equal(got, want)) {
                        _cleanup_free_ char *g = json_dumps(got, JSON_COMPACT);
                        fprintf(stderr, "form %s: got %s want %s\n", cases[i].in, g, cases[i].want);
                        check_failures++;
                }
        }

        /* NUL is refused, in values and keys (no world string holds U+0000) */
        static const char *const nul_cases[] = {"k=%00z", "%00=1", "a[%00]=1", "a=1&b=x%00"};
        for (size_t i = 0; i < ELEMENTSOF(nul_cases); i++) {
                _cleanup_json_ json_t *got = NULL;
                CHECK(twin_form_parse(nul_cases[i], strlen(nul_cases[i]), &got) == -EBADMSG);
                CHECK(got == NULL);
        }

        /* strict: invalid UTF-8 is refused naming the pair's key, valid UTF-8 kept as is */
        static const struct {
                const char *in, *bad;
        } bad_utf8[] = {{"k=%FF", "k"}, {"a=1&m[x]=%C0%AE", "m[x]"}, {"%FE=1", "\xef\xbf\xbd"}};
        for (size_t i = 0; i < ELEMENTSOF(bad_utf8); i++) {
                _cleanup_json_ json_t *got = NULL;
                _cleanup_free_ char *bad = NULL;
                CHECK(twin_form_parse_strict(bad_utf8[i].in, strlen(bad_utf8[i].in), &got, &bad) ==
                      -EILSEQ);
                CHECK(got == NULL && streq_ptr(bad, bad_utf8[i].bad));
        }
        {
                _cleanup_json_ json_t *got = NULL;
                CHECK_OK(twin_form_parse_strict("n=%C3%A9&m[a]=b", 15, &got, NULL));
                CHECK(streq_ptr(json_string_value(json_object_get(got, "n")), "\xc3\xa9"));
                CHECK(twin_form_parse_strict("n=%00", 5, &got, NULL) == -EBADMSG);
        }

        /* deep keys stay literal instead of nesting without bound */
        char deep[400] = "a";
        for (int i = 0; i < 40; i++)
                strcat(deep, "[b]");
        strcat(deep, "=1");
        _cleanup_json_ json_t *got = NULL;
        CHECK_OK(twin_form_parse(deep, strlen(deep), &got));
        CHECK(json_object_size(got) == 1 && !json_object_get(got, "a"));
}

static void test_route(void)
{
        static const struct {
                const char *pattern, *path;
                int match;
                const char *params;
        } cases[] = {
                {"/user", "/user", 1, "{}"},
                {"/user", "/user/", 1, "{}"},
                {"/user", "/users", 0, NULL},
                {"/user", "/", 0, NULL},
                {"/repos/{owner}/{repo}", "/repos/acme/api", 1,
                 "{\"owner\":\"acme\",\"repo\":\"api\"}"},
                {"/repos/{owner}/{repo}", "/repos/acme", 0, NULL},
                {"/repos/{owner}/{repo}", "/repos/acme/api/issues", 0, NULL},
                {"/repos/{owner}/{repo}", "/repos//api", 0, NULL},
                {"/repos/{owner}/{repo}/issues/{n}", "/repos/a/b/issues/7", 1,
                 "{\"owner\":\"a\",\"repo\":\"b\",\"n\":\"7\"}"},
                {"/api/chat.postMessage", "/api/chat.postMessage", 1, "{}"},
                {"/api/chat.postMessage", "/api/chat.postmessage", 0, NULL},
                {"/{m}", "/x//", 0, NULL},
                {"/repos/{o}/{r}/contents/{path+}", "/repos/a/b/contents/src/x/y.c", 1,
                 "{\"o\":\"a\",\"r\":\"b\",\"path\":\"src/x/y.c\"}"},
                {"/repos/{o}/{r}/contents/{path+}", "/repos/a/b/contents/README", 1,
                 "{\"o\":\"a\",\"r\":\"b\",\"path\":\"README\"}"},
                {"/repos/{o}/{r}/contents/{path+}", "/repos/a/b/contents", 0, NULL},
                {"/repos/{o}/{r}/contents/{path+}", "/repos/a/b/contents/", 0, NULL},
                {"/git/refs/{ref+}", "/git/refs/heads/feature/x/", 1,
                 "{\"ref\":\"heads/feature/x\"}"},
                {"/a/{x+}/b", "/a/q/b", 1, "{\"x+\":\"q\"}"},
                /* the front keeps "%2F" and "%25" escaped: one segment, decoded as a parameter */
                {"/commits/{ref}/status", "/commits/heads%2Ffix%2Fx/status", 1,
                 "{\"ref\":\"heads/fix/x\"}"},
                {"/commits/{ref}", "/commits/heads%2Ffix/status", 0, NULL},
                {"/c/{ref+}", "/c/a%252F/b%25", 1, "{\"ref\":\"a%2F/b%\"}"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *params = json_object();
                int r = twin_route_match(cases[i].pattern, cases[i].path, params);
                if (r != cases[i].match)
                        fprintf(stderr, "route %s ~ %s: %d\n", cases[i].pattern, cases[i].path, r);
                CHECK(r == cases[i].match);
                if (cases[i].params) {
                        _cleanup_json_ json_t *want = json_loads(cases[i].params, 0, NULL);
                        CHECK(json_equal(params, want));
                }
        }
}

static void test_args(void)
{
        _cleanup_json_ json_t *a = json_loads(
                "{\"s\":\"1\",\"i\":1,\"r\":2.0,\"half\":1.5,\"neg\":\"-3\",\"big\":"
                "\"99999999999999999999\",\"huge\":1e300,\"word\":\"abc\",\"t\":true,\"obj\":{},"
                "\"nul\":null,\"sp\":\" 1\",\"list\":\"bug, ui,,\",\"arr\":[\"x\",\"y\"],"
                "\"badarr\":[1],\"b1\":\"1\",\"bf\":\"false\",\"bx\":\"yes\"}",
                0, NULL);
        static const struct {
                const char *key;
                int r;
                int64_t v;
        } ints[] = {{"s", 0, 1},          {"i", 0, 1},          {"r", 0, 2},
                    {"neg", 0, -3},       {"half", -EINVAL, 0}, {"big", -EINVAL, 0},
                    {"huge", -EINVAL, 0}, {"word", -EINVAL, 0}, {"t", -EINVAL, 0},
                    {"obj", -EINVAL, 0},  {"nul", -ENOENT, 0},  {"missing", -ENOENT, 0},
                    {"sp", -EINVAL, 0}};
        for (size_t i = 0; i < ELEMENTSOF(ints); i++) {
                int64_t v = 42;
                int r = twin_arg_int(a, ints[i].key, INT64_MIN, INT64_MAX, &v);
                CHECK(r == ints[i].r);
                CHECK(r < 0 ? v == 42 : v == ints[i].v);
        }
        int64_t v;
        CHECK(twin_arg_int(a, "neg", 1, 10, &v) == -EINVAL);

        const char *s;
        CHECK(twin_arg_str(a, "s", &s) == 0 && streq(s, "1"));
        CHECK(twin_arg_str(a, "i", &s) == -EINVAL && twin_arg_str(a, "nul", &s) == -ENOENT);

        bool b;
        CHECK(twin_arg_bool(a, "t", &b) == 0 && b);
        CHECK(twin_arg_bool(a, "b1", &b) == 0 && b);
        CHECK(twin_arg_bool(a, "bf", &b) == 0 && !b);
        CHECK(twin_arg_bool(a, "bx", &b) == -EINVAL);

        _cleanup_json_ json_t *l1 = NULL, *l2 = NULL, *l3 = NULL;
        _cleanup_json_ json_t *want1 = json_pack("[s,s]", "bug", "ui"),
                              *want2 = json_pack("[s,s]", "x", "y");
        CHECK(twin_arg_strv(a, "list", &l1) == 0 && json_equal(l1, want1));
        CHECK(twin_arg_strv(a, "arr", &l2) == 0 && json_equal(l2, want2));
        CHECK(twin_arg_strv(a, "badarr", &l3) == -EINVAL && !l3);

        static const char *const b64[][2] = {{"", ""},
                                             {"f", "Zg=="},
                                             {"fo", "Zm8="},
                                             {"foo", "Zm9v"},
                                             {"05:Issue1", "MDU6SXNzdWUx"}};
        for (size_t i = 0; i < ELEMENTSOF(b64); i++) {
                _cleanup_free_ char *enc = twin_base64(b64[i][0], strlen(b64[i][0])), *dec = NULL;
                CHECK(streq(enc, b64[i][1]));
                CHECK(twin_base64_decode(enc, &dec) == 0 && streq(dec, b64[i][0]));
        }
        char *dec = NULL;
        CHECK(twin_base64_decode("Zm9", &dec) == -EINVAL && !dec);
        CHECK(twin_base64_decode("Zm=v", &dec) == -EINVAL);
        CHECK(twin_base64_decode("Z!9v", &dec) == -EINVAL);
}

static void test_pome_surfaces(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};

        twin_test_req(t, &rp, "GET", "/_pome/health", NULL, NULL, NULL);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/ok")));
        CHECK(streq(jps(rp.body, "/twin"), "github"));
        CHECK(streq(jps(rp.body, "/implementation"), "pome-github"));
        CHECK(streq(jps(rp.body, "/runtime/package"), "pome"));
        CHECK(!rp.tool && !rp.state_mutation && streq(rp.fidelity, "semantic"));

        twin_test_req(t, &rp, "GET", "/_pome/state", NULL, NULL, NULL);
        CHECK(rp.status == 200 && jpi(rp.body, "/repositories/0/issues/0/number") == 1);
        CHECK(!jp(rp.body, "/next_id"));

        twin_test_req(t, &rp, "POST", "/_pome/state", NULL, NULL, NULL);
        CHECK(rp.status == 405 && streq(jps(rp.headers, "/Allow"), "GET"));

        /* the loud 501: unknown paths, and known paths with a method GitHub has there but we
         * do not serve */
        const char *unknown[][2] = {{"GET", "/nope"},
                                    {"DELETE", "/repos/acme/api/collaborators/bob"},
                                    {"PATCH", "/user"},
                                    {"PUT", "/repos/acme/api/issues/1/lock"},
                                    {"GET", "/repos/acme/api/actions/runs"},
                                    {"GET", "/_pome/events"},
                                    {"GET", "/repos/\xff\xfe/api/x/y"}};
        for (size_t i = 0; i < ELEMENTSOF(unknown); i++) {
                twin_test_req(t, &rp, unknown[i][0], unknown[i][1], NULL, NULL, NULL);
                CHECK(rp.status == 501 && streq(rp.fidelity, "unsupported"));
                CHECK(streq(jps(rp.body, "/fidelity"), "unsupported"));
                CHECK(streq(jps(rp.body, "/twin"), "github"));
                CHECK(rp.error && strstr(rp.error, "is not supported by the pome github twin"));
                CHECK(!rp.tool && !rp.state_mutation);
                bool has_route = false, has_mcp = false;
                size_t k;
                json_t *x;
                json_array_foreach (jp(rp.body, "/supported"), k, x) {
                        has_route |= streq(json_string_value(x),
                                           "GET /repos/{owner}/{repo}/issues/{issue_number}");
                        has_mcp |= streq(json_string_value(x), "/mcp");
                }
                CHECK(has_route && has_mcp);
        }
        twin_test_req(t, &rp, "PATCH", "/user", NULL, NULL, NULL);
        CHECK(streq(jps(rp.body, "/message"),
                    "PATCH /user is not supported by the pome github twin"));

        /* a method GitHub has on no such path is its 404, as github.com answers it */
        const char *nowhere[][2] = {{"DELETE", "/repos/acme/api/issues/1"},
                                    {"PUT", "/repos/acme/api"},
                                    {"POST", "/repos/acme/api/pulls/1"},
                                    {"PUT", "/search/issues"},
                                    {"POST", "/repos/acme/api/releases/latest"}};
        for (size_t i = 0; i < ELEMENTSOF(nowhere); i++) {
                twin_test_req(t, &rp, nowhere[i][0], nowhere[i][1], NULL, NULL, NULL);
                CHECK(rp.status == 404 && streq(rp.fidelity, "semantic"));
                CHECK(streq(jps(rp.body, "/message"), "Not Found"));
                CHECK(streq(jps(rp.body, "/status"), "404") && !jp(rp.body, "/fidelity"));
                CHECK(!rp.tool && !rp.state_mutation);
        }
        CHECK(json_array_size(jp(twin_world(t), "/repositories/0/issues")) == 1);

        /* HEAD is GET without a body: the GET route answers it */
        twin_test_req(t, &rp, "HEAD", "/repos/acme/api", NULL, NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "get_repository"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_mcp(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};

        static const struct {
                const char *asked, *got;
        } versions[] = {{"2024-11-05", "2024-11-05"},
                        {"2025-03-26", "2025-03-26"},
                        {"2025-06-18", "2025-06-18"},
                        {"1999-01-01", "2025-06-18"}};
        for (size_t i = 0; i < ELEMENTSOF(versions); i++) {
                char msg[256];
                snprintf(msg, sizeof(msg),
                         "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"initialize\",\"params\":{"
                         "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{"
                         "\"name\":\"t\",\"version\":\"1\"}}}",
                         i, versions[i].asked);
                twin_test_mcp(t, &rp, msg);
                CHECK(rp.status == 200 && jpi(rp.body, "/id") == (long long)i);
                CHECK(streq(jps(rp.body, "/result/protocolVersion"), versions[i].got));
                CHECK(streq(jps(rp.body, "/result/serverInfo/name"), "pome-github"));
                CHECK(json_is_object(jp(rp.body, "/result/capabilities/tools")));
                CHECK(!rp.tool);
        }

        twin_test_mcp(t, &rp, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        CHECK(rp.status == 202 && !rp.body && !rp.error);

        twin_test_mcp(t, &rp, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/id"), "a"));
        CHECK(json_array_size(jp(rp.body, "/result/tools")) ==
              twin_kind_surface(&twin_kind_github)->n_tools);
        CHECK(streq(jps(rp.body, "/result/tools/0/name"), "get_me"));
        CHECK(streq(jps(rp.body, "/result/tools/2/inputSchema/type"), "object"));
        CHECK(json_is_true(jp(rp.body, "/result/tools/2/annotations/readOnlyHint")));

        twin_test_mcp(t, &rp, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
        CHECK(rp.status == 200 && json_is_object(jp(rp.body, "/result")));

        /* tools/call without initialize: stateless */
        twin_test_mcp(
                t, &rp,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"issue_read\",\"arguments\":{\"method\":\"get\",\"owner\":\"acme\",\"repo\":"
                "\"api\",\"issue_number\":"
                "1}"
                "}}");
        CHECK(rp.status == 200 && json_is_false(jp(rp.body, "/result/isError")));
        CHECK(jpi(rp.body, "/result/structuredContent/number") == 1);
        CHECK(streq(jps(rp.body, "/result/content/0/type"), "text"));
        _cleanup_json_ json_t *text = json_loads(jps(rp.body, "/result/content/0/text"), 0, NULL);
        CHECK(json_equal(text, jp(rp.body, "/result/structuredContent")));
        CHECK(streq(rp.tool, "issue_read") && !rp.state_mutation);

        /* a failing tool is a result with isError, not a JSON-RPC error */
        twin_test_mcp(
                t, &rp,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"issue_read\",\"arguments\":{\"method\":\"get\",\"owner\":\"acme\",\"repo\":"
                "\"api\",\"issue_number\":"
                "99"
                "}}}");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/result/isError")));
        CHECK(streq(jps(rp.body, "/result/structuredContent/message"), "Not Found"));
        CHECK(streq(rp.tool, "issue_read") && !rp.error);

        static const struct {
                const char *msg;
                int status, code;
                const char *tool;
        } errors[] = {
                {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"nope\",\"arguments\":{}}}",
                 200, -32602, "nope"},
                {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{}}", 200,
                 -32602, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"get_me\",\"arguments\":[1]}}",
                 200, -32602, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/list\"}", 200, -32601, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\",\"params\":7}", 200,
                 -32602, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":", 400, -32700, NULL},
                {"", 400, -32700, NULL},
                {"42", 400, -32600, NULL},
                {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", 400, -32600, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", 400, -32600, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":1}", 400, -32600, NULL},
        };
        for (size_t i = 0; i < ELEMENTSOF(errors); i++) {
                twin_test_mcp(t, &rp, errors[i].msg);
                if (rp.status != errors[i].status || jpi(rp.body, "/error/code") != errors[i].code)
                        fprintf(stderr, "mcp error case %zu: %d %lld\n", i, rp.status,
                                jpi(rp.body, "/error/code"));
                CHECK(rp.status == errors[i].status);
                CHECK(jpi(rp.body, "/error/code") == errors[i].code);
                CHECK(streq(jps(rp.body, "/jsonrpc"), "2.0") && jp(rp.body, "/id"));
                CHECK(streq_ptr(rp.tool, errors[i].tool));
                CHECK(!rp.state_mutation);
        }

        const char *not_allowed[][2] = {
                {"GET", "/mcp"}, {"DELETE", "/mcp"}, {"POST", "/mcp/tools"}, {"GET", "/mcp/call"}};
        for (size_t i = 0; i < ELEMENTSOF(not_allowed); i++) {
                twin_test_req(t, &rp, not_allowed[i][0], not_allowed[i][1], NULL, NULL, NULL);
                CHECK(rp.status == 405 && jp(rp.headers, "/Allow") && rp.error);
        }

        twin_test_req(t, &rp, "GET", "/mcp/tools", NULL, NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/tools")) ==
                                          twin_kind_surface(&twin_kind_github)->n_tools);
        /* hosted Pome's legacy /mcp/call answers what the action answers, not a CallToolResult */
        twin_test_req(t, &rp, "POST", "/mcp/call", NULL, "application/json",
                      "{\"tool\":\"get_me\",\"arguments\":{}}");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/login"), "pome-agent"));
        CHECK(!jp(rp.body, "/isError"));
        CHECK(streq(rp.tool, "get_me"));
        twin_test_req(t, &rp, "POST", "/mcp/call", NULL, "application/json", "{\"tool\":\"nope\"}");
        CHECK(rp.status == 422 && streq(rp.tool, "nope") && rp.error);
        CHECK(streq(jps(rp.body, "/message"), "Validation Failed"));
        twin_test_req(t, &rp, "POST", "/mcp/call", NULL, "application/json", "{");
        CHECK(rp.status == 400 && !rp.tool);

        TwinReply direct = {};
        _cleanup_json_ json_t *args = json_object();
        CHECK(twin_call_action(t, "nope", args, BASE, &direct) == -ENOENT && !direct.tool);
        CHECK(twin_call_action(t, "get_me", args, BASE, &direct) == 0 && direct.status == 200);
        CHECK(streq(direct.tool, "get_me") && streq(direct.fidelity, "semantic"));
        /* over MCP get_me answers the official server's MinimalUser with details */
        CHECK(streq(jps(direct.body, "/login"), "pome-agent"));
        CHECK(streq(jps(direct.body, "/profile_url"), "https://github.com/pome-agent"));
        CHECK(json_is_integer(jp(direct.body, "/details/public_repos")));
        twin_reply_done(&direct);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_args_merge(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};

        /* path beats body; GitHub reads a POST's query not at all (JSON_BODY kind) */
        twin_test_req(t, &rp, "POST", "/repos/acme/api/issues", "title=from-query&body=q",
                      "application/json",
                      "{\"title\":\"from-body\",\"owner\":\"evil\",\"repo\":\"nope\"}");
        CHECK(rp.status == 201 && streq(jps(rp.body, "/title"), "from-body"));
        CHECK(json_is_null(jp(rp.body, "/body")));
        CHECK(streq(jps(rp.request_body, "/title"), "from-body"));
        CHECK(strstr(jps(rp.body, "/url"), "/repos/acme/api/issues/2") != NULL);

        /* GitHub takes every body as JSON: a form (curl -d) is "Problems parsing JSON" */
        twin_test_req(t, &rp, "POST", "/repos/acme/api/issues", NULL,
                      "application/x-www-form-urlencoded", "title=form+issue");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/message"), "Problems parsing JSON"));
        twin_test_req(t, &rp, "POST", "/repos/acme/api/issues", NULL, "text/plain",
                      "{\"title\":\"typed as text\"}");
        CHECK(rp.status == 201 && streq(jps(rp.body, "/title"), "typed as text"));

        /* a kind that reads forms (Slack): body beats query, brackets make arrays */
        Twin *sl = twin_test_new("slack", "default");
        TwinReply srp = {};
        twin_test_req(sl, &srp, "POST", "/chat.postMessage", "channel=C_GENERAL&text=q",
                      "application/x-www-form-urlencoded", "text=form+text&x[]=1&x[]=2");
        CHECK(srp.status == 200 && json_is_true(jp(srp.body, "/ok")));
        CHECK(streq(jps(srp.body, "/message/text"), "form text"));
        CHECK(json_is_array(jp(srp.request_body, "/x")));
        twin_reply_done(&srp);
        twin_free(sl);

        twin_test_req(t, &rp, "POST", "/repos/acme/api/issues", NULL, NULL,
                      " {\"title\":\"bare\"}");
        CHECK(rp.status == 201 && streq(jps(rp.body, "/title"), "bare"));
        twin_test_req(t, &rp, "GET", "/repos/acme/api/issues/1", NULL, "application/json", "  \n");
        CHECK(rp.status == 200 && !rp.request_body);

        /* malformed bodies: the kind's 400, tool stamped, nothing changed */
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        const char *bad[] = {"{\"title\":", "[1,2]", "{\"title\":\"x\"} trailing", "\"s\""};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                twin_test_req(t, &rp, "POST", "/repos/acme/api/issues", NULL, "application/json",
                              bad[i]);
                CHECK(rp.status == 400 && streq(jps(rp.body, "/message"), "Problems parsing JSON"));
                CHECK(streq(rp.tool, "create_issue") && !rp.state_mutation && rp.error);
                CHECK(!rp.request_body);
        }
        CHECK(json_equal(before, twin_world(t)));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_seed_lifecycle(void)
{
        char err[256];
        Twin *a = NULL, *b = NULL;
        /* NULL seed = the empty world; a non-object seed is refused with a message */
        CHECK_OK(twin_new(&twin_kind_github, NULL, &a, err, sizeof(err)));
        CHECK(streq(jps(twin_world(a), "/viewer"), "pome-agent"));
        _cleanup_json_ json_t *arr = json_array();
        CHECK(twin_new(&twin_kind_slack, arr, &b, err, sizeof(err)) == -EINVAL && !b);
        CHECK(strstr(err, "JSON object") != NULL);
        CHECK(twin_new(&twin_kind_slack, NULL, &b, NULL, 0) == 0 && b);
        CHECK(twin_kind(b) == &twin_kind_slack);
        b = twin_free(b);
        CHECK(!twin_free(NULL));

        /* reseed replaces the world; a bad seed leaves it alone */
        _cleanup_json_ json_t *seed = twin_test_seed("github", "default"),
                              *broken = twin_test_seed("github", "broken");
        CHECK_OK(twin_reseed(a, seed, err, sizeof(err)));
        CHECK(jpi(twin_world(a), "/repositories/0/issues/0/number") == 1);
        _cleanup_json_ json_t *kept = json_deep_copy(twin_world(a));
        CHECK(twin_reseed(a, broken, err, sizeof(err)) == -EINVAL);
        CHECK(json_equal(kept, twin_world(a)));
        twin_free(a);

        /* same seed, same world; same calls at the same clock, same world again */
        Twin *x = twin_test_new("github", "default"), *y = twin_test_new("github", "default");
        CHECK(json_equal(twin_world(x), twin_world(y)));
        TwinReply rp = {};
        Twin *both[] = {x, y};
        for (size_t i = 0; i < 2; i++) {
                twin_test_req(both[i], &rp, "POST", "/repos/acme/api/issues", NULL,
                              "application/json",
                              "{\"title\":\"again\",\"labels\":[\"new-label\"]}");
                twin_test_req(both[i], &rp, "POST", "/repos/acme/api/issues/2/comments", NULL,
                              "application/json", "{\"body\":\"same\"}");
        }
        CHECK(json_equal(twin_world(x), twin_world(y)));
        twin_reply_done(&rp);
        twin_free(x);
        twin_free(y);

        Twin *s1 = twin_test_new("slack", "default"), *s2 = twin_test_new("slack", "default");
        CHECK(json_equal(twin_world(s1), twin_world(s2)));
        twin_free(s1);
        twin_free(s2);
}

/* An idle pod's world packed into bytes and back (pods/pod/main.c, pod.pack_after). */
static void test_pack(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};
        twin_test_req(t, &rp, "POST", "/repos/acme/api/issues/1/comments", NULL, "application/json",
                      "{\"body\":\"\\u00e9 \\ud83d\\ude00 1e300\"}");
        CHECK(rp.status == 201);
        twin_reply_done(&rp);
        /* U+0000 inside a string, and a real that only 17 digits give back */
        CHECK(json_object_set_new(twin_world(t), "x_nul", json_stringn("a\0b", 3)) == 0);
        CHECK(json_object_set_new(twin_world(t), "x_real", json_real(0.1 + 0.2)) == 0);
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));

        CHECK(twin_pack(t) == 1 && twin_packed(t) && !twin_world(t));
        CHECK(twin_pack(t) == 0); /* already packed */
        CHECK(twin_unpack(t) == 1 && !twin_packed(t));
        CHECK(twin_unpack(t) == 0);
        CHECK(json_equal(before, twin_world(t)));
        CHECK(json_real_value(json_object_get(twin_world(t), "x_real")) == 0.1 + 0.2);
        /* the unpacked world serves and changes as before */
        twin_test_req(t, &rp, "PATCH", "/repos/acme/api/issues/1", NULL, "application/json",
                      "{\"title\":\"after the pack\"}");
        CHECK(rp.status == 200);
        twin_reply_done(&rp);
        CHECK(streq(jps(twin_world(t), "/repositories/0/issues/0/title"), "after the pack"));

        /* a world that would not load back (not UTF-8) stays a tree, unchanged */
        CHECK(json_object_set_new(twin_world(t), "x_bad", json_stringn_nocheck("\xff\xfe", 2)) ==
              0);
        _cleanup_json_ json_t *kept = json_deep_copy(twin_world(t));
        CHECK(twin_pack(t) == -EBADMSG && !twin_packed(t) && json_equal(kept, twin_world(t)));
        CHECK(json_object_del(twin_world(t), "x_bad") == 0);

        /* packed, then replaced (a reseed): the bytes go, the new world is the tree */
        CHECK(twin_pack(t) == 1);
        _cleanup_json_ json_t *seed = twin_test_seed("github", "default");
        char err[256];
        CHECK_OK(twin_reseed(t, seed, err, sizeof(err)));
        CHECK(!twin_packed(t) && jpi(twin_world(t), "/repositories/0/issues/0/number") == 1);
        CHECK(twin_pack(t) == 1);
        twin_free(t); /* packed: freed without a leak (ASan) */

        /* a world smaller than a page is left a tree */
        Twin *s = twin_test_new("stripe", "default");
        CHECK(twin_pack(s) == 0 && !twin_packed(s) && twin_world(s));
        twin_free(s);
}

static void test_front_end_robustness(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};
        /* a request with holes (front end bug) is served, not crashed on */
        TwinRequest rq = {};
        twin_handle(t, &rq, &rp);
        CHECK(rp.status == 501);
        twin_reply_done(&rp);
        twin_free(t);
}

/*
 * Every seed the images ship loads in its twin: `available` offers each of them to users,
 * so one that fails to load (a test fixture) belongs in tests/sandbox-images, not there.
 */
static void test_shipped_seeds(void)
{
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        size_t seen = 0;
        for (const char *const *k = twin_kind_names(); *k; k++) {
                char dir[1024];
                snprintf(dir, sizeof(dir), "%s/sandbox-images/%s/seeds", src, *k);
                DIR *d = opendir(dir);
                CHECK(d);
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        size_t n = strlen(de->d_name);
                        if (n < 6 || !streq(de->d_name + n - 5, ".json"))
                                continue;
                        char path[1400], err[300] = "";
                        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                        json_error_t je;
                        _cleanup_json_ json_t *seed = json_load_file(path, 0, &je);
                        Twin *t = NULL;
                        int r = seed ? twin_new(twin_kind_find(*k), seed, &t, err, sizeof(err))
                                     : -EBADMSG;
                        if (r < 0) {
                                fprintf(stderr, "%s: a shipped seed that does not load: %s\n", path,
                                        seed ? err : je.text);
                                check_failures++;
                        }
                        twin_free(t);
                        seen++;
                }
                if (d)
                        closedir(d);
        }
        CHECK(seen >= 9); /* github 4, slack 2, stripe 3 */
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted keys of object o, comma-separated, into buf. */
static const char *keys_of(const json_t *o, char *buf, size_t n)
{
        const char *names[32];
        size_t k = 0;
        const char *key;
        json_t *v;
        json_object_foreach ((json_t *)o, key, v)
                if (k < ELEMENTSOF(names))
                        names[k++] = key;
        qsort(names, k, sizeof(names[0]), cmp_str);
        buf[0] = 0;
        for (size_t i = 0; i < k; i++)
                snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? "," : "", names[i]);
        return buf;
}

/*
 * hosted Pome's frozen per-twin shapes (its contract suite, ../shared/contract-suite): the
 * key sets of /_pome/health and /healthz, the legacy /mcp/call's body corners and refusals.
 */
static void test_hosted_shapes(void)
{
        static const struct {
                const char *kind, *health, *healthz;
        } shapes[] = {
                {"github", "fidelity,implementation,ok,runtime,twin",
                 "access_control,fidelity,implementation,ok,runtime,tools,twin"},
                {"slack", "ok,twin", "implementation,ok,runtime,tools,twin"},
                {"stripe", "fidelity,implementation,ok,recorder,runtime,tthw_seconds,twin",
                 "fidelity,implementation,ok,runtime,tools,tthw_seconds,twin"},
        };
        char buf[256];
        for (size_t i = 0; i < ELEMENTSOF(shapes); i++) {
                Twin *t = twin_test_new(shapes[i].kind, "default");
                TwinReply rp = {};
                twin_test_req(t, &rp, "GET", "/_pome/health", NULL, NULL, NULL);
                CHECK(rp.status == 200);
                if (!streq(keys_of(rp.body, buf, sizeof(buf)), shapes[i].health)) {
                        fprintf(stderr, "%s /_pome/health keys: %s\n", shapes[i].kind, buf);
                        check_failures++;
                }
                _cleanup_json_ json_t *h = twin_health(t, false);
                if (!streq(keys_of(h, buf, sizeof(buf)), shapes[i].healthz)) {
                        fprintf(stderr, "%s /healthz keys: %s\n", shapes[i].kind, buf);
                        check_failures++;
                }
                _cleanup_json_ json_t *tools = twin_kind_tools(twin_kind(t));
                CHECK(jpi(h, "/tools") == (long long)json_array_size(tools));
                CHECK(streq(jps(h, "/runtime/version"), POME_VERSION));
                CHECK(json_is_string(jp(h, "/runtime/git_sha")) &&
                      json_is_string(jp(h, "/runtime/build_time")));
                twin_reply_done(&rp);
                twin_free(t);
        }

        static const struct {
                const char *kind, *ctype, *body;
                int status;
                const char *ptr, *value; /* a JSON pointer into the answer and its string */
        } calls[] = {
                /* GitHub: strict JSON, no aliases, its 422 "Validation Failed" */
                {"github", "application/json", "{\"tool\":\"definitely_not_a_tool\"}", 422,
                 "/message", "Validation Failed"},
                {"github", "application/json", "{\"name\":\"list_repos\",\"params\":{}}", 422,
                 "/errors/0/field", "tool"},
                {"github", "application/x-www-form-urlencoded", "tool=list_repos", 400, "/message",
                 "Problems parsing JSON"},
                {"github", "application/json", "{oops", 400, "/message", "Problems parsing JSON"},
                /* Slack: form or JSON, {name, params} aliases, malformed as {} */
                {"slack", "application/json", "{\"tool\":\"definitely_not_a_tool\"}", 404, "/error",
                 "unknown_tool"},
                {"slack", "application/json",
                 "{\"name\":\"slack_read_user_profile\",\"params\":{}}", 200, "/user_id",
                 "U_PRIMARY"},
                {"slack", "application/x-www-form-urlencoded", "tool=slack_read_user_profile", 200,
                 "/name", "pome-agent"},
                {"slack", "application/json", "{oops", 400, "/error", "invalid_arguments"},
                /* Stripe: form or JSON, no aliases, its parameter_invalid and tool_unknown */
                {"stripe", "application/json", "{\"tool\":\"definitely_not_a_tool\"}", 400,
                 "/error/code", "tool_unknown"},
                {"stripe", "application/json", "{\"name\":\"retrieve_balance\",\"params\":{}}", 400,
                 "/error/param", "tool"},
                {"stripe", "application/x-www-form-urlencoded", "tool=retrieve_balance", 200,
                 "/object", "balance"},
                {"stripe", "application/json", "{oops", 400, "/error/code", "parameter_invalid"},
        };
        for (size_t i = 0; i < ELEMENTSOF(calls); i++) {
                Twin *t = twin_test_new(calls[i].kind, "default");
                TwinReply rp = {};
                twin_test_req(t, &rp, "POST", "/mcp/call", NULL, calls[i].ctype, calls[i].body);
                if (rp.status != calls[i].status ||
                    !streq_ptr(jps(rp.body, calls[i].ptr), calls[i].value)) {
                        _cleanup_free_ char *got = json_dumps(rp.body, JSON_COMPACT);
                        fprintf(stderr, "/mcp/call case %zu (%s): %d %s\n", i, calls[i].kind,
                                rp.status, got ? got : "(null)");
                        check_failures++;
                }
                twin_reply_done(&rp);
                twin_free(t);
        }
}

/* JSON-RPC batches (MCP 2025-03-26 requires them; 2025-06-18 removed them) */
static void test_mcp_batch(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};
        twin_test_mcp(t, &rp,
                      "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"add_issue_comment\",\"arguments\":{\"owner\":\"acme\","
                      "\"repo\":\"api\",\"issue_number\":1,\"body\":\"one\"}}},"
                      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                      "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/list\"},"
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"create_issue\",\"arguments\":{\"owner\":\"acme\","
                      "\"repo\":\"api\",\"title\":\"two\"}}},"
                      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{}},"
                      "5]");
        CHECK(rp.status == 200 && json_array_size(rp.body) == 5); /* the notification: none */
        CHECK(jpi(rp.body, "/0/id") == 1 && jp(rp.body, "/0/result/content"));
        CHECK(streq(jps(rp.body, "/1/id"), "b") &&
              json_array_size(jp(rp.body, "/1/result/tools")) > 0);
        CHECK(jpi(rp.body, "/2/id") == 3 && jp(rp.body, "/2/result"));
        CHECK(jpi(rp.body, "/3/error/code") == -32600); /* initialize cannot be batched */
        CHECK(jpi(rp.body, "/4/error/code") == -32600);
        /* two changes: the last is the call's own tape row, the first a row ahead of it */
        CHECK(rp.state_mutation && streq(rp.tool, "create_issue"));
        CHECK(json_array_size(rp.events) == 1 &&
              streq(jps(rp.events, "/0/tool"), "add_issue_comment") &&
              json_is_true(jp(rp.events, "/0/by_caller")));
        twin_test_mcp(t, &rp, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]");
        CHECK(rp.status == 202 && !rp.body);
        twin_test_mcp(t, &rp, "[]");
        CHECK(rp.status == 400 && jpi(rp.body, "/error/code") == -32600);
        /* a client on 2025-06-18 has no batches */
        _cleanup_json_ json_t *h = json_pack("{s:s, s:s}", "content-type", "application/json",
                                             "mcp-protocol-version", "2025-06-18");
        const char *body = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]";
        TwinRequest rq = {.method = "POST",
                          .path = "/mcp",
                          .query = "",
                          .headers = h,
                          .body = body,
                          .body_len = strlen(body),
                          .base_url = TWIN_TEST_BASE("github")};
        twin_reply_done(&rp);
        twin_handle(t, &rq, &rp);
        CHECK(rp.status == 400 && strstr(jps(rp.body, "/error/message"), "2025-06-18"));
        twin_reply_done(&rp);
        twin_free(t);
}

/*
 * tools/list carries a tool's outputSchema and annotations when its surface.json has them
 * (Gmail's, as Google lists them); a tool without keeps {readOnlyHint} alone, and a text
 * answer gets structuredContent only from a tool that declares an outputSchema.
 */
static void test_tool_metadata(void)
{
        const TwinKind *kinds[] = {&twin_kind_github, &twin_kind_slack, &twin_kind_stripe,
                                   &twin_kind_linear, &twin_kind_gmail};
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                _cleanup_json_ json_t *tools = twin_kind_tools(kinds[k]);
                _cleanup_json_ json_t *doc = twin_kind_surface_tools(kinds[k]);
                CHECK(json_array_size(tools) > 0);
                size_t i;
                json_t *tl;
                json_array_foreach (tools, i, tl) {
                        json_t *d = NULL, *x;
                        size_t j;
                        json_array_foreach (doc, j, x)
                                if (streq_ptr(json_get_str(x, "name"), json_get_str(tl, "name")))
                                        d = x;
                        CHECK(d);
                        json_t *ann = json_object_get(d, "annotations");
                        if (ann)
                                CHECK(json_equal(jp(tl, "/annotations"), ann));
                        else
                                CHECK(json_object_size(jp(tl, "/annotations")) == 1 &&
                                      json_is_boolean(jp(tl, "/annotations/readOnlyHint")));
                        CHECK(json_equal(json_object_get(tl, "outputSchema"),
                                         json_object_get(d, "outputSchema")) ||
                              (!json_object_get(tl, "outputSchema") &&
                               !json_object_get(d, "outputSchema")));
                        CHECK(json_object_size(tl) == (json_object_get(d, "outputSchema") ? 5 : 4));
                }
        }
}

int main(void)
{
        test_mcp_batch();
        test_kinds();
        test_surface_refusals();
        test_shipped_seeds();
        test_form();
        test_route();
        test_args();
        test_pome_surfaces();
        test_mcp();
        test_tool_metadata();
        test_hosted_shapes();
        test_args_merge();
        test_seed_lifecycle();
        test_pack();
        test_front_end_robustness();
        return check_finish();
}
