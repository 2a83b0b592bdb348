/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: GraphQL (pods/twin/graphql.c) and the GitHub twin's POST /graphql. Input: a
 * GraphQL document. It is parsed alone, then sent as {"query": input} to a GitHub twin: every
 * request gets a 200 with a JSON object holding data or errors, and a reply that says nothing
 * changed leaves the world equal.
 */
#include "common/json-util.h"
#include "pods/twin/engine.h"
#include "pods/twin/graphql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static Twin *twin;
        static json_t *seed;
        static unsigned runs;
        if (!twin) {
                seed = json_loads("{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"labels\":"
                                  "[{\"name\":\"bug\"}],\"issues\":[{\"title\":\"t\",\"labels\":"
                                  "[\"bug\"],\"comments\":[\"c\"]}]}]}",
                                  0, NULL);
                if (!seed || twin_new(&twin_kind_github, seed, &twin, NULL, 0) < 0)
                        abort();
        }
        if (++runs % 1000 == 0 && twin_reseed(twin, seed, NULL, 0) < 0)
                abort();

        _cleanup_json_ json_t *doc = NULL;
        char err[256];
        int line, col;
        int r = gql_parse((const char *)data, size, &doc, err, sizeof(err), &line, &col);
        if (r != 0 && r != -EINVAL && r != -ENOMEM)
                abort();
        if ((r == 0) != (doc != NULL))
                abort();

        _cleanup_json_ json_t *q = json_stringn((const char *)data, size);
        if (!q) /* not UTF-8: no JSON body can carry it */
                return 0;
        _cleanup_json_ json_t *req = json_pack("{s:O}", "query", q);
        _cleanup_free_ char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
        _cleanup_json_ json_t *headers = json_pack("{s:s}", "content-type", "application/json");
        if (!body || !headers)
                return 0;
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(twin));
        TwinRequest rq = {.method = "POST",
                          .path = "/graphql",
                          .query = "",
                          .headers = headers,
                          .body = body,
                          .body_len = strlen(body),
                          .base_url = "http://fuzz"};
        TwinReply rp = {};
        twin_handle(twin, &rq, &rp);
        /* a body holding \u0000 is the engine's 400 "Problems parsing JSON", before GraphQL */
        if (rp.status == 400 && memchr(data, 0, size)) {
                twin_reply_done(&rp);
                return 0;
        }
        if (rp.status != 200 || !json_is_object(rp.body))
                abort();
        if (!json_object_get(rp.body, "data") && !json_object_get(rp.body, "errors"))
                abort();
        if (!rp.state_mutation && !json_equal(before, twin_world(twin)))
                abort();
        twin_reply_done(&rp);
        return 0;
}
