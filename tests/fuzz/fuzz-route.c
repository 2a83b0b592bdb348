/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: route matching and the whole dispatch. Input: "METHOD\nPATH\nQUERY\nCTYPE\nBODY";
 * the first byte picks the kind (github, slack, stripe). Every request must get a reply with a
 * valid status, and a reply that says nothing changed must leave the world equal.
 */
#include "common/json-util.h"
#include "pods/twin/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *field(const char **p, const char *end)
{
        const char *nl = memchr(*p, '\n', (size_t)(end - *p));
        const char *stop = nl ? nl : end;
        char *s = strndup(*p, (size_t)(stop - *p));
        *p = nl ? nl + 1 : end;
        return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static Twin *twins[3];
        static json_t *seeds[3];
        static unsigned runs;
        if (!twins[0]) {
                seeds[0] = json_loads("{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\","
                                      "\"issues\":[{\"title\":\"t\",\"comments\":[\"c\"]}]}]}",
                                      0, NULL);
                seeds[1] = json_loads("{\"channels\":[{\"name\":\"g\",\"messages\":[{"
                                      "\"text\":\"x\",\"ts\":\"1.000001\"}]}]}",
                                      0, NULL);
                seeds[2] = json_loads("{\"customers\":[{\"id\":\"cus_a\",\"email\":\"a@b.c\","
                                      "\"metadata\":{\"k\":\"v\"}}],\"payment_intents\":[{\"id\":"
                                      "\"pi_a\",\"amount\":500,\"currency\":\"usd\",\"status\":"
                                      "\"succeeded\",\"customer\":\"cus_a\"}]}",
                                      0, NULL);
                if (twin_new(&twin_kind_github, seeds[0], &twins[0], NULL, 0) < 0 ||
                    twin_new(&twin_kind_slack, seeds[1], &twins[1], NULL, 0) < 0 ||
                    twin_new(&twin_kind_stripe, seeds[2], &twins[2], NULL, 0) < 0)
                        abort();
        }
        /* keep the worlds small: start over now and then */
        if (++runs % 1000 == 0)
                for (int i = 0; i < 3; i++)
                        if (twin_reseed(twins[i], seeds[i], NULL, 0) < 0)
                                abort();
        if (size < 1)
                return 0;
        Twin *t = twins[data[0] % 3];
        const char *p = (const char *)data + 1, *end = (const char *)data + size;
        _cleanup_free_ char *method = field(&p, end), *path = field(&p, end),
                            *query = field(&p, end), *ctype = field(&p, end);
        if (!method || !path || !query || !ctype)
                return 0;

        _cleanup_json_ json_t *params = json_object();
        (void)twin_route_match("/repos/{owner}/{repo}/issues/{issue_number}", path, params);

        _cleanup_json_ json_t *headers = json_pack("{s:s}", "content-type", ctype);
        if (!headers) /* ctype not UTF-8 */
                headers = json_object();
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        TwinRequest rq = {.method = method,
                          .path = path,
                          .query = query,
                          .headers = headers,
                          .body = p,
                          .body_len = (size_t)(end - p),
                          .base_url = "http://fuzz"};
        TwinReply rp = {};
        twin_handle(t, &rq, &rp);
        if (rp.status < 100 || rp.status > 599 || !rp.fidelity)
                abort();
        if (rp.status >= 400 && !rp.error)
                abort();
        if (!rp.state_mutation && !json_equal(before, twin_world(t)))
                abort();
        twin_reply_done(&rp);
        return 0;
}
