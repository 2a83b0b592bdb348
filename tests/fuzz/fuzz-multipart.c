/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the multipart/form-data parser. The first line of the input is the
 * Content-Type (so boundaries are fuzzed too), the rest the body.
 */
#include "common/json-util.h"
#include "common/text.h"
#include "pods/twin/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *in = (const char *)data;
        const char *nl = memchr(in, '\n', size);
        size_t ctl = nl ? (size_t)(nl - in) : size;
        _cleanup_free_ char *ct = strndup(in, ctl);
        if (!ct)
                return 0;
        const char *body = nl ? nl + 1 : in + size;
        size_t len = size - (size_t)(body - in);
        TwinMultipart m = {};
        const char *why = NULL;
        int r = twin_multipart_parse(ct, body, len, &m, &why);
        if (r == -EBADMSG && (!why || m.n != 0))
                abort(); /* a refusal says why and hands nothing out */
        if (r < 0)
                return 0;
        /* every part lies inside the body and its names are text */
        for (size_t i = 0; i < m.n; i++) {
                const TwinPart *p = &m.parts[i];
                if (p->data < body || p->data + p->len > body + len || !p->name || !p->name[0] ||
                    !utf8_valid(p->name, strlen(p->name)))
                        abort();
        }
        twin_multipart_done(&m);
        return 0;
}
