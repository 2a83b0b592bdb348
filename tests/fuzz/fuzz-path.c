/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: request-target decoding (front_decode_path, front_check_query). On success the
 * decoded path starts with '/', is well-formed UTF-8 (checked here against the Unicode
 * table of well-formed byte sequences, not front.c's code), has no NUL and no "." or ".."
 * segment (an escaped '/' counts as a separator), and is exactly the percent-decoding of
 * an all-VCHAR input, except that an escaped '/' or '%' stays "%2F" / "%25". front_check_query
 * accepts exactly the all-VCHAR strings. Failures are -EINVAL or -ENOMEM, nothing else.
 */
#include "common/util.h"
#include "tests/fuzz/fuzz-assert.h"
#include "pods/front/front.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Unicode 15, Table 3-7 "Well-Formed UTF-8 Byte Sequences", row by row. */
static bool well_formed_utf8(const unsigned char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                unsigned char b = s[i];
                size_t len;
                unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
                if (b <= 0x7f)
                        len = 1;
                else if (b >= 0xc2 && b <= 0xdf)
                        len = 2;
                else if (b == 0xe0)
                        len = 3, lo = 0xa0;
                else if ((b >= 0xe1 && b <= 0xec) || b == 0xee || b == 0xef)
                        len = 3;
                else if (b == 0xed)
                        len = 3, hi = 0x9f;
                else if (b == 0xf0)
                        len = 4, lo = 0x90;
                else if (b >= 0xf1 && b <= 0xf3)
                        len = 4;
                else if (b == 0xf4)
                        len = 4, hi = 0x8f;
                else
                        return false;
                if (n - i < len)
                        return false;
                if (len > 1 && (s[i + 1] < lo || s[i + 1] > hi))
                        return false;
                for (size_t k = 2; k < len; k++)
                        if (s[i + k] < 0x80 || s[i + k] > 0xbf)
                                return false;
                i += len;
        }
        return true;
}

static int hex(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *raw = malloc(size + 1);
        if (!raw)
                return 0;
        memcpy(raw, data, size);
        raw[size] = 0;
        size_t n = strlen(raw); /* what a C-string caller sees */

        bool vchar = true;
        for (size_t i = 0; i < n; i++)
                vchar = vchar && raw[i] > 0x20 && raw[i] < 0x7f;
        ASSERT((front_check_query(raw) == 0) == vchar);

        _cleanup_free_ char *out = NULL;
        int r = front_decode_path(raw, &out);
        if (r < 0) {
                ASSERT(r == -EINVAL || r == -ENOMEM);
                ASSERT(out == NULL);
                return 0;
        }
        ASSERT(vchar);
        ASSERT(out[0] == '/');
        /* our own percent-decoding of the input, byte for byte */
        _cleanup_free_ char *want = malloc(n + 1);
        ASSERT(want);
        size_t wl = 0;
        for (size_t i = 0; i < n; i++) {
                if (raw[i] == '%') {
                        ASSERT(i + 2 < n && hex(raw[i + 1]) >= 0 && hex(raw[i + 2]) >= 0);
                        char c = (char)(hex(raw[i + 1]) << 4 | hex(raw[i + 2]));
                        if (c == '/' || c == '%') {
                                want[wl++] = '%';
                                want[wl++] = '2';
                                want[wl++] = c == '/' ? 'F' : '5';
                        } else
                                want[wl++] = c;
                        i += 2;
                } else
                        want[wl++] = raw[i];
        }
        ASSERT(memchr(want, 0, wl) == NULL); /* no NUL was decoded */
        ASSERT(strlen(out) == wl && memcmp(out, want, wl) == 0);
        ASSERT(well_formed_utf8((const unsigned char *)out, wl));
        /* no dot segment, with "%2F" read as the '/' it stands for */
        for (const char *seg = out; seg;) {
                const char *e = seg;
                while (*e && *e != '/' && strncmp(e, "%2F", 3) != 0)
                        e++;
                size_t l = (size_t)(e - seg);
                ASSERT(!(l == 1 && seg[0] == '.') && !(l == 2 && seg[0] == '.' && seg[1] == '.'));
                seg = *e ? e + (*e == '/' ? 1 : 3) : NULL;
        }
        return 0;
}
