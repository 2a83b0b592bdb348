/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the secret scanner of /_pome/state and tape rows (pods/twin/redact.c).
 * Invariants, on arbitrary bytes (NULs included):
 * - nothing found ⇔ nothing allocated and nothing changed; the find never reports a match
 *   past the end;
 * - what comes out holds no secret any more (scrubbing again finds nothing), and every byte
 *   before the first match is the input's;
 * - twin_redact_json over an object holding the bytes as a value (under an ordinary and a
 *   secret key) and as a key never leaves the bytes' secrets anywhere in the document.
 */
#include "common/json-util.h"
#include "common/util.h"
#include "pods/twin/redact.h"
#include "tests/fuzz/fuzz-assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;
        size_t l = 0, first = twin_redact_find(s, size, 0, &l);
        ASSERT(first <= size);
        ASSERT(first == size || (l > 0 && first + l <= size));

        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        int r = twin_redact_string(s, size, &out, &n);
        if (r < 0)
                return 0;
        if (r == 0) {
                ASSERT(first == size && !out);
                return 0;
        }
        ASSERT(first < size && out && out[n] == 0);
        ASSERT(n >= first && memcmp(out, s, first) == 0);
        ASSERT(n >= first + strlen(TWIN_REDACTED) &&
               memcmp(out + first, TWIN_REDACTED, strlen(TWIN_REDACTED)) == 0);
        size_t again;
        ASSERT(twin_redact_find(out, n, 0, &again) == n);

        /* the same bytes inside a document: value, secret-keyed value, key */
        _cleanup_json_ json_t *v = json_stringn_nocheck(s, size);
        _cleanup_json_ json_t *doc = json_object(), *list = json_array();
        if (!v || !doc || !list || json_object_set(doc, "text", v) < 0 ||
            json_object_set(doc, "token", v) < 0 || json_array_append(list, v) < 0 ||
            json_object_set(doc, "list", list) < 0)
                return 0;
        if (!memchr(s, 0, size)) { /* jansson keys are C strings */
                _cleanup_free_ char *k = strndup(s, size);
                if (!k || json_object_set_new(doc, k, json_true()) < 0)
                        return 0;
        }
        if (twin_redact_json(doc) < 0)
                return 0;
        ASSERT(streq(json_string_value(json_object_get(doc, "token")), TWIN_REDACTED));
        json_t *t = json_object_get(doc, "text");
        ASSERT(json_string_length(t) == n && memcmp(json_string_value(t), out, n) == 0);
        json_t *e = json_array_get(json_object_get(doc, "list"), 0);
        ASSERT(json_string_length(e) == n && memcmp(json_string_value(e), out, n) == 0);
        const char *k;
        json_t *x;
        json_object_foreach (doc, k, x) {
                size_t kl = strlen(k);
                ASSERT(twin_redact_find(k, kl, 0, &again) == kl);
        }
        return 0;
}
