/* SPDX-License-Identifier: MIT */
#include "common/jsonbytes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/text.h"

int jsonbuf_reserve(JsonBuf *b, size_t n)
{
        if (b->oom)
                return -ENOMEM;
        if (b->cap - b->len > n)
                return 0;
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len <= n) {
                if (cap > SIZE_MAX / 2) {
                        b->oom = true;
                        return -ENOMEM;
                }
                cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (!d) {
                b->oom = true;
                return -ENOMEM;
        }
        b->data = d;
        b->cap = cap;
        return 0;
}

void jsonbuf_put(JsonBuf *b, const char *s, size_t n)
{
        if (n == 0 || jsonbuf_reserve(b, n) < 0)
                return;
        memcpy(b->data + b->len, s, n);
        b->len += n;
}

void jsonbuf_puts(JsonBuf *b, const char *s)
{
        jsonbuf_put(b, s, strlen(s));
}

void jsonbuf_printf(JsonBuf *b, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->oom = true;
                return;
        }
        if (jsonbuf_reserve(b, (size_t)n) < 0)
                return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
}

char *jsonbuf_text(JsonBuf *b)
{
        /* every write leaves a byte free past len (jsonbuf_reserve keeps cap > len + n) */
        if (jsonbuf_reserve(b, 0) < 0)
                return NULL;
        b->data[b->len] = 0;
        return b->data;
}

/* Bytes that need an escape in a JSON string: '"', '\' and the control bytes. */
static const bool needs_escape[256] = {
        [0 ... 0x1f] = true,
        ['"'] = true,
        ['\\'] = true,
};

void jsonbuf_put_string(JsonBuf *b, const char *s, size_t n)
{
        /* at most 6 bytes per input byte (\u00XX), plus the quotes */
        if (n > (SIZE_MAX - 2) / 6 || jsonbuf_reserve(b, n + 2) < 0) {
                b->oom = true;
                return;
        }
        b->data[b->len++] = '"';
        size_t i = 0;
        while (i < n) {
                size_t run = i;
                while (run < n && !needs_escape[(unsigned char)s[run]])
                        run++;
                jsonbuf_put(b, s + i, run - i);
                if (run == n)
                        break;
                unsigned char c = (unsigned char)s[run];
                char esc[8];
                switch (c) {
                case '"':
                        memcpy(esc, "\\\"", 3);
                        break;
                case '\\':
                        memcpy(esc, "\\\\", 3);
                        break;
                case '\b':
                        memcpy(esc, "\\b", 3);
                        break;
                case '\f':
                        memcpy(esc, "\\f", 3);
                        break;
                case '\n':
                        memcpy(esc, "\\n", 3);
                        break;
                case '\r':
                        memcpy(esc, "\\r", 3);
                        break;
                case '\t':
                        memcpy(esc, "\\t", 3);
                        break;
                default:
                        snprintf(esc, sizeof(esc), "\\u%04X", c);
                        break;
                }
                jsonbuf_puts(b, esc);
                i = run + 1;
        }
        jsonbuf_put(b, "\"", 1);
}

void jsonbuf_put_string_lossy(JsonBuf *b, const char *s, size_t n)
{
        if (utf8_valid(s, n)) {
                jsonbuf_put_string(b, s, n);
                return;
        }
        char *m;
        size_t ml;
        if (utf8_mend(s, n, &m, &ml) < 0) {
                b->oom = true;
                return;
        }
        jsonbuf_put_string(b, m, ml);
        free(m);
}

void jsonbuf_put_int(JsonBuf *b, int64_t v)
{
        char num[DECIMAL_MAX];
        jsonbuf_puts(b, format_int(num, v));
}

void jsonbuf_put_real(JsonBuf *b, double v)
{
        /* jansson's jsonp_dtostr: "%.17g", a '.' for a decimal comma, ".0" when integral */
        char num[40];
        int k = snprintf(num, sizeof(num), "%.17g", v);
        if (k < 0 || (size_t)k >= sizeof(num) - 3) {
                b->oom = true;
                return;
        }
        for (char *p = num; *p; p++)
                if (*p == ',')
                        *p = '.';
        char *e = strchr(num, 'e');
        if (e) {
                /* as jansson: no '+' and no leading zeros in the exponent ("1e300", "1e-5") */
                char *start = e + 1, *end = start + 1;
                if (*start == '-')
                        start++;
                while (*end == '0')
                        end++;
                if (end != start) {
                        memmove(start, end, (size_t)k - (size_t)(end - num) + 1);
                        k -= (int)(end - start);
                }
        } else if (!strchr(num, '.')) {
                memcpy(num + k, ".0", 3);
                k += 2;
        }
        jsonbuf_put(b, num, (size_t)k);
}

static void put_json(JsonBuf *b, const json_t *j, unsigned depth)
{
        if (depth > 4096) {
                b->oom = true;
                return;
        }
        switch (json_typeof(j)) {
        case JSON_OBJECT: {
                const char *k;
                size_t kl;
                json_t *v;
                bool first = true;
                jsonbuf_put(b, "{", 1);
                json_object_keylen_foreach ((json_t *)j, k, kl, v) {
                        if (!first)
                                jsonbuf_put(b, ",", 1);
                        first = false;
                        jsonbuf_put_string(b, k, kl);
                        jsonbuf_put(b, ":", 1);
                        put_json(b, v, depth + 1);
                }
                jsonbuf_put(b, "}", 1);
                return;
        }
        case JSON_ARRAY: {
                size_t n = json_array_size(j);
                jsonbuf_put(b, "[", 1);
                for (size_t i = 0; i < n; i++) {
                        if (i)
                                jsonbuf_put(b, ",", 1);
                        put_json(b, json_array_get(j, i), depth + 1);
                }
                jsonbuf_put(b, "]", 1);
                return;
        }
        case JSON_STRING:
                jsonbuf_put_string(b, json_string_value(j), json_string_length(j));
                return;
        case JSON_INTEGER:
                jsonbuf_put_int(b, json_integer_value(j));
                return;
        case JSON_REAL:
                jsonbuf_put_real(b, json_real_value(j));
                return;
        case JSON_TRUE:
                jsonbuf_put(b, "true", 4);
                return;
        case JSON_FALSE:
                jsonbuf_put(b, "false", 5);
                return;
        case JSON_NULL:
                jsonbuf_put(b, "null", 4);
                return;
        }
        b->oom = true;
}

void jsonbuf_put_json(JsonBuf *b, const json_t *j)
{
        if (!j) {
                b->oom = true;
                return;
        }
        put_json(b, j, 0);
}

void jsonbuf_done(JsonBuf *b)
{
        free(b->data);
        *b = (JsonBuf){};
}

/* ---- the validating scanner ---- */

typedef struct Scan {
        const unsigned char *p, *end;
} Scan;

static int hex4(const unsigned char *p)
{
        int v = 0;
        for (int i = 0; i < 4; i++) {
                int d = unhex((char)p[i]);
                if (d < 0)
                        return -1;
                v = v << 4 | d;
        }
        return v;
}

static bool scan_string(Scan *sc)
{
        /* at the opening quote */
        const unsigned char *p = sc->p + 1, *end = sc->end;
        while (p < end) {
                unsigned char c = *p;
                if (c == '"') {
                        sc->p = p + 1;
                        return true;
                }
                if (c < 0x20)
                        return false;
                if (c == '\\') {
                        if (end - p < 2)
                                return false;
                        switch (p[1]) {
                        case '"':
                        case '\\':
                        case '/':
                        case 'b':
                        case 'f':
                        case 'n':
                        case 'r':
                        case 't':
                                p += 2;
                                continue;
                        case 'u': {
                                if (end - p < 6)
                                        return false;
                                int u = hex4(p + 2);
                                if (u < 0)
                                        return false;
                                p += 6;
                                if (u >= 0xdc00 && u <= 0xdfff)
                                        return false; /* a lone low surrogate */
                                if (u >= 0xd800 && u <= 0xdbff) {
                                        if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
                                                return false;
                                        int lo = hex4(p + 2);
                                        if (lo < 0xdc00 || lo > 0xdfff)
                                                return false;
                                        p += 6;
                                }
                                continue;
                        }
                        default:
                                return false;
                        }
                }
                if (c < 0x80) {
                        p++;
                        continue;
                }
                size_t l = utf8_char_len((const char *)p, (size_t)(end - p));
                if (l == 0)
                        return false;
                p += l;
        }
        return false;
}

static bool is_digit(unsigned char c)
{
        return c >= '0' && c <= '9';
}

static bool scan_number(Scan *sc)
{
        const unsigned char *p = sc->p, *end = sc->end;
        if (p < end && *p == '-')
                p++;
        if (p == end)
                return false;
        if (*p == '0')
                p++;
        else if (*p >= '1' && *p <= '9')
                while (p < end && is_digit(*p))
                        p++;
        else
                return false;
        if (p < end && *p == '.') {
                p++;
                if (p == end || !is_digit(*p))
                        return false;
                while (p < end && is_digit(*p))
                        p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
                p++;
                if (p < end && (*p == '+' || *p == '-'))
                        p++;
                if (p == end || !is_digit(*p))
                        return false;
                while (p < end && is_digit(*p))
                        p++;
        }
        sc->p = p;
        return true;
}

static bool scan_literal(Scan *sc, const char *lit)
{
        size_t l = strlen(lit);
        if ((size_t)(sc->end - sc->p) < l || memcmp(sc->p, lit, l) != 0)
                return false;
        sc->p += l;
        return true;
}

/* One scalar at sc->p (a string, number or literal). */
static bool scan_scalar(Scan *sc)
{
        switch (*sc->p) {
        case '"':
                return scan_string(sc);
        case 't':
                return scan_literal(sc, "true");
        case 'f':
                return scan_literal(sc, "false");
        case 'n':
                return scan_literal(sc, "null");
        default:
                return scan_number(sc);
        }
}

bool json_scan_compact(const char *s, size_t n, unsigned max_depth)
{
        /*
         * Iterative, with the open containers' kinds as a bit stack (1 = object): no
         * recursion for a hostile depth, and no allocation up to 4096 levels.
         */
        uint64_t kinds[64] = {0};
        unsigned depth = 0;
        if (max_depth > 64 * 64)
                max_depth = 64 * 64;
        Scan sc = {(const unsigned char *)s, (const unsigned char *)s + n};
        /* expect: 0 a value, 1 a key or '}' (after '{'), 2 a value or ']' (after '['),
         * 3 ',' or the end of a container, 4 a key (after ',' in an object) */
        int expect = 0;
        for (;;) {
                if (sc.p == sc.end)
                        return false;
                unsigned char c = *sc.p;
                if (expect == 1 || expect == 4) {
                        if (c == '}' && expect == 1)
                                goto close;
                        if (c != '"' || !scan_string(&sc))
                                return false;
                        if (sc.p == sc.end || *sc.p != ':')
                                return false;
                        sc.p++;
                        expect = 0;
                        continue;
                }
                if (expect == 3) {
                        if (c == ',') {
                                sc.p++;
                                expect =
                                        (kinds[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1 ? 4 : 0;
                                continue;
                        }
                        goto close;
                }
                if (c == ']' && expect == 2)
                        goto close;
                /* a value */
                if (c == '{' || c == '[') {
                        if (depth >= max_depth)
                                return false;
                        uint64_t bit = UINT64_C(1) << (depth % 64);
                        if (c == '{')
                                kinds[depth / 64] |= bit;
                        else
                                kinds[depth / 64] &= ~bit;
                        depth++;
                        sc.p++;
                        expect = c == '{' ? 1 : 2;
                        continue;
                }
                if (!scan_scalar(&sc))
                        return false;
                if (depth == 0)
                        return sc.p == sc.end;
                expect = 3;
                continue;
close:
                if (depth == 0)
                        return false;
                {
                        bool obj = (kinds[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1;
                        if (c != (obj ? '}' : ']'))
                                return false;
                }
                sc.p++;
                depth--;
                if (depth == 0)
                        return sc.p == sc.end;
                expect = 3;
        }
}
