/* SPDX-License-Identifier: MIT */
/* libFuzzer: the form/query parser (brackets, percent escapes, invalid UTF-8), lenient and
 * strict. */
#include "common/json-util.h"
#include "pods/twin/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_json_ json_t *j = NULL, *strict = NULL;
        _cleanup_free_ char *bad = NULL;
        int r = twin_form_parse((const char *)data, size, &j);
        int rs = twin_form_parse_strict((const char *)data, size, &strict, &bad);
        if (r < 0) {
                /* what the lenient parser refuses (a NUL), the strict one refuses too */
                if (rs >= 0)
                        abort();
                return 0;
        }
        /* strict accepts exactly what needs no mending, and then reads the same */
        if (rs == 0 && !json_equal(j, strict))
                abort();
        if (rs < 0 && (rs != -EILSEQ || !bad))
                abort();
        /* whatever came in, the result is a JSON object jansson can serialise */
        if (!json_is_object(j))
                abort();
        _cleanup_free_ char *s = json_dumps(j, JSON_COMPACT | JSON_ALLOW_NUL);
        if (!s)
                abort();
        return 0;
}
