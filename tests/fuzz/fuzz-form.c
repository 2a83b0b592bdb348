/* SPDX-License-Identifier: MIT */
/* libFuzzer: the form/query parser (brackets, percent escapes, invalid UTF-8). */
#include "common/json-util.h"
#include "pods/twin/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_json_ json_t *j = NULL;
        if (twin_form_parse((const char *)data, size, &j) < 0)
                return 0;
        /* whatever came in, the result is a JSON object jansson can serialise */
        if (!json_is_object(j))
                abort();
        _cleanup_free_ char *s = json_dumps(j, JSON_COMPACT | JSON_ALLOW_NUL);
        if (!s)
                abort();
        return 0;
}
