/* SPDX-License-Identifier: MIT */
/* Argument readers for actions, base64. */
#include "common/json-util.h"
#include "pods/twin/kind.h"

int twin_arg_str(const json_t *args, const char *key, const char **ret)
{
        json_t *v = json_object_get(args, key);
        if (!v || json_is_null(v))
                return -ENOENT;
        if (!json_is_string(v))
                return -EINVAL;
        *ret = json_string_value(v);
        return 0;
}

/* Strict decimal: optional '-', 1..19 digits, nothing else, no overflow. */
static int parse_int64(const char *s, int64_t *ret)
{
        const char *d = s[0] == '-' ? s + 1 : s;
        size_t n = strlen(d);
        if (n == 0 || n > 19 || strspn(d, "0123456789") != n)
                return -EINVAL;
        errno = 0;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (errno != 0 || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int twin_arg_int(const json_t *args, const char *key, int64_t min, int64_t max, int64_t *ret)
{
        json_t *v = json_object_get(args, key);
        int64_t x;
        if (!v || json_is_null(v))
                return -ENOENT;
        if (json_is_integer(v))
                x = json_integer_value(v);
        else if (json_is_real(v)) {
                double d = json_real_value(v);
                /* 2^63 is exactly representable; anything at or past it cannot be an int64 */
                if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) ||
                    d != (double)(int64_t)d)
                        return -EINVAL;
                x = (int64_t)d;
        } else if (json_is_string(v)) {
                if (parse_int64(json_string_value(v), &x) < 0)
                        return -EINVAL;
        } else
                return -EINVAL;
        if (x < min || x > max)
                return -EINVAL;
        *ret = x;
        return 0;
}

int twin_arg_bool(const json_t *args, const char *key, bool *ret)
{
        json_t *v = json_object_get(args, key);
        if (!v || json_is_null(v))
                return -ENOENT;
        if (json_is_boolean(v)) {
                *ret = json_is_true(v);
                return 0;
        }
        const char *s = json_string_value(v);
        if (s && (streq(s, "true") || streq(s, "1")))
                *ret = true;
        else if (s && (streq(s, "false") || streq(s, "0")))
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

int twin_arg_strv(const json_t *args, const char *key, json_t **ret)
{
        json_t *v = json_object_get(args, key);
        if (!v || json_is_null(v))
                return -ENOENT;
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        if (json_is_array(v)) {
                size_t i;
                json_t *e;
                json_array_foreach (v, i, e) {
                        if (!json_is_string(e))
                                return -EINVAL;
                        if (json_array_append(a, e) < 0)
                                return -ENOMEM;
                }
        } else if (json_is_string(v)) {
                const char *s = json_string_value(v);
                while (*s) {
                        size_t l = strcspn(s, ",");
                        const char *b = s, *e = s + l;
                        while (b < e && *b == ' ')
                                b++;
                        while (e > b && e[-1] == ' ')
                                e--;
                        if (e > b && json_array_append_new(a, json_stringn(b, (size_t)(e - b))) < 0)
                                return -ENOMEM;
                        s += l + (s[l] == ',');
                }
        } else
                return -EINVAL;
        *ret = TAKE_PTR(a);
        return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *twin_base64(const void *data, size_t n)
{
        const unsigned char *p = data;
        char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                             (i + 2 < n ? p[i + 2] : 0);
                *o++ = b64[v >> 18 & 63];
                *o++ = b64[v >> 12 & 63];
                *o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
                *o++ = i + 2 < n ? b64[v & 63] : '=';
        }
        *o = 0;
        return out;
}

int twin_base64_decode(const char *s, char **ret)
{
        size_t n = strlen(s), pad = 0;
        if (n % 4 != 0)
                return -EINVAL;
        while (pad < 2 && pad < n && s[n - 1 - pad] == '=')
                pad++;
        _cleanup_free_ char *out = malloc(n / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        uint32_t v = 0;
        for (size_t i = 0; i < n - pad; i++) {
                const char *c = strchr(b64, s[i]);
                if (!c || !*c)
                        return -EINVAL;
                v = v << 6 | (uint32_t)(c - b64);
                if (i % 4 == 3) {
                        out[o++] = (char)(v >> 16);
                        out[o++] = (char)(v >> 8);
                        out[o++] = (char)v;
                        v = 0;
                }
        }
        if (pad == 2) {
                out[o++] = (char)(v >> 4);
        } else if (pad == 1) {
                out[o++] = (char)(v >> 10);
                out[o++] = (char)(v >> 2);
        }
        out[o] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}
