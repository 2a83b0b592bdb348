/* SPDX-License-Identifier: MIT */
#include "common/text.h"

#include <stdint.h>

#include "common/util.h"

const char *format_int(char buf[static DECIMAL_MAX], int64_t v)
{
        char *p = buf + DECIMAL_MAX - 1;
        uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
        *p = 0;
        do
                *--p = (char)('0' + u % 10);
        while (u /= 10);
        if (v < 0)
                *--p = '-';
        return p;
}

int unhex(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        c = (char)(c | 0x20);
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

size_t utf8_char_len(const char *s, size_t n)
{
        const unsigned char *p = (const unsigned char *)s;
        unsigned char c = p[0];
        if (c < 0x80)
                return 1;
        size_t len;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0)
                len = 2, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
                len = 3, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
                len = 4, cp = c & 0x07, min = 0x10000;
        else
                return 0; /* a continuation byte first, or 0xf8… */
        if (n < len)
                return 0;
        for (size_t j = 1; j < len; j++) {
                if ((p[j] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (p[j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

bool utf8_valid(const char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                size_t l = utf8_char_len(s + i, n - i);
                if (l == 0)
                        return false;
                i += l;
        }
        return true;
}

int percent_decode(const char *s, size_t n, bool form, bool strict, char **ret, size_t *ret_len)
{
        char *out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                int hi, lo;
                if (form && s[i] == '+')
                        out[o++] = ' ';
                else if (s[i] != '%')
                        out[o++] = s[i];
                else if (i + 2 < n && (hi = unhex(s[i + 1])) >= 0 && (lo = unhex(s[i + 2])) >= 0) {
                        out[o++] = (char)(hi << 4 | lo);
                        i += 2;
                } else if (strict) {
                        free(out);
                        return -EINVAL;
                } else
                        out[o++] = s[i];
        }
        out[o] = 0;
        *ret = out;
        if (ret_len)
                *ret_len = o;
        return 0;
}

int utf8_mend(const char *s, size_t n, char **ret, size_t *ret_len)
{
        char *out = n <= (SIZE_MAX - 1) / 3 ? malloc(n * 3 + 1) : NULL;
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        for (size_t i = 0; i < n;) {
                size_t len = utf8_char_len(s + i, n - i);
                if (len) {
                        memcpy(out + o, s + i, len);
                        o += len;
                        i += len;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        i++;
                }
        }
        out[o] = 0;
        *ret = out;
        *ret_len = o;
        return 0;
}

int text_parse_size(const char *s, uint64_t *ret_bytes)
{
        uint64_t v = 0;
        const char *p = s;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        unsigned shift = 0;
        switch (*p) {
        case 0:
                break;
        case 'K':
                shift = 10;
                break;
        case 'M':
                shift = 20;
                break;
        case 'G':
                shift = 30;
                break;
        default:
                return -EINVAL;
        }
        if (*p && p[1])
                return -EINVAL;
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret_bytes = v << shift;
        return 0;
}
