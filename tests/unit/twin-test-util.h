/* SPDX-License-Identifier: MIT */
/*
 * For the twin tests (engine, github, slack): JSON pointer readers for the checks, twins
 * made from the shipped seeds at a pinned clock, and requests served the way the front
 * ends serve them (twin_handle, REST or MCP). A seed or a twin that cannot be made fails
 * its check and ends the test (exit status 1): nothing after it could pass.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/json-util.h"
#include "tests/unit/check.h"
#include "pods/twin/twin.h"

/* The clock every test twin runs at: 2026-05-28T20:26:40Z (seconds since the epoch). */
#define TWIN_TEST_NOW 1780000000

/* The mount URL a test twin of kind (a string literal) is served under. */
#define TWIN_TEST_BASE(kind) "http://127.0.0.1:7071/" kind "/s/ses_test"

/* RFC 6901 pointer lookup ("/a/0/b"), borrowed; NULL when absent. */
static inline json_t *jp(json_t *j, const char *ptr)
{
        while (j && *ptr == '/') {
                char key[128];
                size_t l = strcspn(++ptr, "/");
                snprintf(key, sizeof(key), "%.*s", (int)l, ptr);
                j = json_is_array(j) ? json_array_get(j, strtoul(key, NULL, 10))
                                     : json_object_get(j, key);
                ptr += l;
        }
        return j;
}

/* The string at ptr, NULL when absent or not a string. */
static inline const char *jps(json_t *j, const char *ptr)
{
        return json_string_value(jp(j, ptr));
}

/* The integer at ptr, 0 when absent or not an integer. */
static inline long long jpi(json_t *j, const char *ptr)
{
        return json_integer_value(jp(j, ptr));
}

/*
 * The shipped seed sandbox-images/<kind>/seeds/<name>.json below $POME_SOURCE_DIR (else
 * the configured source tree), or the test fixture tests/sandbox-images/<kind>/seeds/
 * <name>.json (a seed that must fail, never shipped), as a new reference.
 */
static inline json_t *twin_test_seed(const char *kind, const char *name)
{
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        char path[1024];
        snprintf(path, sizeof(path), "%s/sandbox-images/%s/seeds/%s.json", src, kind, name);
        /* the test fixtures (broken seeds) are laid out as images of their own */
        if (access(path, F_OK) < 0)
                snprintf(path, sizeof(path), "%s/tests/sandbox-images/%s/seeds/%s.json", src, kind,
                         name);
        json_error_t e;
        json_t *j = json_load_file(path, 0, &e);
        CHECK(j);
        if (!j) {
                fprintf(stderr, "%s: %s\n", path, e.text);
                exit(1);
        }
        return j;
}

/* A twin of kind k from seed (borrowed), its clock pinned at TWIN_TEST_NOW. */
static inline Twin *twin_test_from(const TwinKind *k, const json_t *seed)
{
        char err[256];
        Twin *t = NULL;
        CHECK_OK(twin_new(k, seed, &t, err, sizeof(err)));
        if (!t) {
                fprintf(stderr, "twin_new(%s): %s\n", k->name, err);
                exit(1);
        }
        twin_set_clock(t, TWIN_TEST_NOW);
        return t;
}

/* A twin of kind from its shipped seed name, as twin_test_from. */
static inline Twin *twin_test_new(const char *kind, const char *name)
{
        _cleanup_json_ json_t *seed = twin_test_seed(kind, name);
        return twin_test_from(twin_kind_find(kind), seed);
}

/*
 * Serves one request at TWIN_TEST_BASE(<the twin's kind>) into rp, which is released
 * first. query, ctype (the content-type header) and body may be NULL.
 */
static inline void twin_test_req(Twin *t, TwinReply *rp, const char *method, const char *path,
                                 const char *query, const char *ctype, const char *body)
{
        char base[128];
        snprintf(base, sizeof(base), TWIN_TEST_BASE("%s"), twin_kind(t)->name);
        _cleanup_json_ json_t *headers = json_object();
        if (ctype)
                json_object_set_new(headers, "content-type", json_string(ctype));
        TwinRequest rq = {.method = method,
                          .path = path,
                          .query = query ? query : "",
                          .headers = headers,
                          .body = body,
                          .body_len = body ? strlen(body) : 0,
                          .base_url = base};
        twin_reply_done(rp);
        twin_handle(t, &rq, rp);
}

/* POSTs one JSON-RPC message to /mcp, as an MCP client does; rp holds the reply. */
static inline void twin_test_mcp(Twin *t, TwinReply *rp, const char *message)
{
        twin_test_req(t, rp, "POST", "/mcp", NULL, "application/json", message);
}

/* tools/call name(arguments, a JSON object as text) over POST /mcp. */
static inline void twin_test_call(Twin *t, TwinReply *rp, const char *name, const char *arguments)
{
        char msg[2048];
        snprintf(msg, sizeof(msg),
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"%s\",\"arguments\":%s}}",
                 name, arguments);
        twin_test_mcp(t, rp, msg);
}
