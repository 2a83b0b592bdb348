/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the Stripe twin's X-PAYMENT reader (pods/stripe/x402.c). Input: one mode byte,
 * then the header's bytes; an odd mode byte sends the rest base64-encoded, so the fuzzer
 * reaches the JSON and the payment checks as easily as the base64 decoder. Every answer must
 * be a 402 that changed nothing and says why, or a 200 that settled exactly one payment and
 * says so in X-PAYMENT-RESPONSE.
 */
#include "common/json-util.h"
#include "pods/twin/kind.h"
#include "tests/fuzz/fuzz-assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static Twin *t;
        static json_t *seed;
        static unsigned runs;
        if (!t) {
                seed = json_loads("{\"x402_resources\":[{\"path\":\"r\",\"price\":10000,"
                                  "\"content\":{\"ok\":true}}]}",
                                  0, NULL);
                ASSERT(seed && twin_new(&twin_kind_stripe, seed, &t, NULL, 0) == 0);
                /* the clock the corpus's authorizations are valid around */
                twin_set_clock(t, 1780000000);
        }
        /* keep the world small, and nonces fresh: start over now and then */
        if (++runs % 1000 == 0)
                ASSERT(twin_reseed(t, seed, NULL, 0) == 0);
        if (size < 1)
                return 0;
        _cleanup_free_ char *b64 = data[0] & 1 ? twin_base64(data + 1, size - 1) : NULL;
        json_t *value = b64 ? json_string(b64) : json_stringn((const char *)data + 1, size - 1);
        if (!value) /* not UTF-8, or a NUL: no HTTP header carries that here */
                return 0;
        _cleanup_json_ json_t *headers = json_pack("{s:o}", "x-payment", value);
        ASSERT(headers);
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        size_t paid = json_array_size(json_object_get(twin_world(t), "x402_payments"));
        TwinRequest rq = {.method = "GET",
                          .path = "/x402/r",
                          .query = "",
                          .headers = headers,
                          .base_url = "http://fuzz"};
        TwinReply rp = {};
        twin_handle(t, &rq, &rp);
        ASSERT(rp.status == 402 || rp.status == 200);
        if (rp.status == 402) {
                ASSERT(!rp.state_mutation && json_equal(before, twin_world(t)));
                ASSERT(rp.error && *rp.error && json_get_str(rp.headers, "X-PAYMENT-RESPONSE"));
                ASSERT(json_array_size(json_object_get(rp.body, "accepts")) == 1);
        } else {
                ASSERT(rp.state_mutation && json_get_str(rp.headers, "X-PAYMENT-RESPONSE"));
                ASSERT(json_array_size(json_object_get(twin_world(t), "x402_payments")) ==
                       paid + 1);
        }
        twin_reply_done(&rp);
        return 0;
}
