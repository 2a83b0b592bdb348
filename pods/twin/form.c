/* SPDX-License-Identifier: MIT */
/*
 * application/x-www-form-urlencoded bodies and query strings, with Rack/Stripe brackets.
 * Values stay strings: typing is the action's business (twin_arg_int & co).
 */
#include "common/json-util.h"
#include "common/text.h"
#include "pods/twin/engine.h"

#define FORM_MAX_DEPTH 32 /* bracket segments per key; deeper keys are kept literally */

json_t *twin_json_string_lossy(const char *s, size_t n)
{
        json_t *j = json_stringn(s, n);
        if (j)
                return j;

        /* jansson refused it: invalid UTF-8 (or OOM). Rebuild with U+FFFD for each bad byte. */
        _cleanup_free_ char *out = NULL;
        size_t o;
        if (utf8_mend(s, n, &out, &o) < 0)
                return NULL;
        return json_stringn(out, o);
}

/* Percent-decodes n bytes, '+' as a space, malformed escapes kept; NULL on OOM. */
static char *form_decode(const char *s, size_t n, size_t *ret_len)
{
        char *out = NULL;
        return percent_decode(s, n, true, false, &out, ret_len) < 0 ? NULL : out;
}

/*
 * Splits key into its base and bracket segments, in place: "a[b][]" → {"a", "b", ""}.
 * Returns the number of segments, or 0 when the key is not well-formed bracket syntax
 * (then it is used literally).
 */
static size_t key_split(char *key, char *segs[static FORM_MAX_DEPTH])
{
        char *b = strchr(key, '[');
        if (!b || b == key)
                return 0;

        /* validate first: a malformed key must reach the caller unmodified */
        size_t n = 1;
        for (const char *q = b; *q; n++) {
                const char *e = strchr(q + 1, ']');
                if (*q != '[' || n == FORM_MAX_DEPTH || !e ||
                    memchr(q + 1, '[', (size_t)(e - q - 1)))
                        return 0;
                q = e + 1;
        }

        n = 0;
        segs[n++] = key;
        while (*b) {
                char *e = strchr(b + 1, ']');
                *b = 0;
                *e = 0;
                segs[n++] = b + 1;
                b = e + 1;
        }
        return n;
}

/* Adds one decoded pair to root, walking and creating containers per the segments. */
static int form_set(json_t *root, char *key, json_t *value)
{
        char *segs[FORM_MAX_DEPTH];
        size_t n = key_split(key, segs);
        if (n == 0) {
                segs[0] = key;
                n = 1;
        }

        json_t *cur = root;
        for (size_t i = 0; i < n; i++) {
                bool last = i + 1 == n;
                if (last) {
                        /* cur is an array exactly when this segment is "" ("a[]=x") */
                        int r = json_is_array(cur) ? json_array_append(cur, value)
                                                   : json_object_set(cur, segs[i], value);
                        return r < 0 ? -ENOMEM : 0;
                }
                bool want_array = segs[i + 1][0] == 0;
                json_t *child;
                if (json_is_array(cur)) {
                        /* "a[][b]=1&a[][c]=2" fills one element until a key repeats (Rack) */
                        child = json_array_get(cur, json_array_size(cur) - 1);
                        if (want_array || !json_is_object(child) ||
                            json_object_get(child, segs[i + 1])) {
                                child = want_array ? json_array() : json_object();
                                if (json_array_append_new(cur, child) < 0)
                                        return -ENOMEM;
                        }
                } else {
                        child = json_object_get(cur, segs[i]);
                        if (want_array ? !json_is_array(child) : !json_is_object(child)) {
                                child = want_array ? json_array() : json_object();
                                if (json_object_set_new(cur, segs[i], child) < 0)
                                        return -ENOMEM;
                        }
                }
                cur = child;
        }
        return 0;
}

/* Canonical array index: "0", "17"; no sign, no leading zero, at most 6 digits. */
static bool is_index(const char *k, long *ret)
{
        size_t l = strlen(k);
        if (l == 0 || l > 6 || (l > 1 && k[0] == '0') || strspn(k, "0123456789") != l)
                return false;
        *ret = strtol(k, NULL, 10);
        return true;
}

static int cmp_index(const void *a, const void *b)
{
        long x = *(const long *)a, y = *(const long *)b;
        return (x > y) - (x < y);
}

/*
 * Post-order pass: an object (below the root) whose keys are all indices becomes an array
 * ordered by index, so "items[0][price]" reads as items: [{price}]. *ret_repl is the
 * replacement for j, or NULL when j stays.
 */
static int arrayify(json_t *j, bool root, json_t **ret_repl)
{
        *ret_repl = NULL;
        if (json_is_array(j)) {
                for (size_t i = 0; i < json_array_size(j); i++) {
                        json_t *repl;
                        int r = arrayify(json_array_get(j, i), false, &repl);
                        if (r < 0)
                                return r;
                        if (repl && json_array_set_new(j, i, repl) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        if (!json_is_object(j))
                return 0;

        const char *k;
        json_t *v;
        bool all_index = json_object_size(j) > 0;
        json_object_foreach (j, k, v) {
                json_t *repl;
                long idx;
                int r = arrayify(v, false, &repl);
                if (r < 0)
                        return r;
                /* replacing the value of an existing key does not disturb the iteration */
                if (repl && json_object_set_new(j, k, repl) < 0)
                        return -ENOMEM;
                all_index = all_index && is_index(k, &idx);
        }
        if (root || !all_index)
                return 0;

        size_t n = json_object_size(j), i = 0;
        _cleanup_free_ long *idx = calloc(n, sizeof(long));
        if (!idx)
                return -ENOMEM;
        json_object_foreach (j, k, v) {
                (void)is_index(k, &idx[i++]);
        }
        qsort(idx, n, sizeof(long), cmp_index);
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        for (i = 0; i < n; i++) {
                char key[16];
                snprintf(key, sizeof(key), "%ld", idx[i]);
                if (json_array_append(a, json_object_get(j, key)) < 0)
                        return -ENOMEM;
        }
        *ret_repl = TAKE_PTR(a);
        return 0;
}

static int form_parse(const char *s, size_t len, bool strict, json_t **ret, char **ret_bad)
{
        _cleanup_json_ json_t *root = json_object();
        if (!root)
                return -ENOMEM;

        const char *end = s + len;
        for (const char *p = s; p < end;) {
                const char *amp = memchr(p, '&', (size_t)(end - p));
                const char *stop = amp ? amp : end;
                const char *eq = memchr(p, '=', (size_t)(stop - p));
                size_t klen, vlen;
                _cleanup_free_ char *key = form_decode(p, (size_t)((eq ? eq : stop) - p), &klen);
                _cleanup_free_ char *val =
                        eq ? form_decode(eq + 1, (size_t)(stop - eq - 1), &vlen) : strdup("");
                if (!key || !val)
                        return -ENOMEM;
                if (!eq)
                        vlen = 0;
                p = amp ? amp + 1 : end;

                /*
                 * NUL is refused, in keys and values alike: a world holds no U+0000, since
                 * a C-string reader of it (a lookup, a comparison, a token check) would see
                 * only the bytes before it ("C1%00x" would name channel C1). Invalid UTF-8
                 * is mended to U+FFFD, as the WHATWG urlencoded parser does.
                 */
                if (memchr(key, 0, klen) || (eq && memchr(val, 0, vlen)))
                        return -EBADMSG;
                _cleanup_json_ json_t *k = twin_json_string_lossy(key, klen);
                _cleanup_json_ json_t *v = twin_json_string_lossy(val, vlen);
                if (!k || !v)
                        return -ENOMEM;
                if (strict && (json_string_length(k) != klen || json_string_length(v) != vlen)) {
                        if (ret_bad && !(*ret_bad = strdup(json_string_value(k))))
                                return -ENOMEM;
                        return -EILSEQ;
                }
                if (json_string_length(k) == 0)
                        continue;
                _cleanup_free_ char *kcopy = strdup(json_string_value(k));
                if (!kcopy)
                        return -ENOMEM;
                int r = form_set(root, kcopy, v);
                if (r < 0)
                        return r;
        }

        json_t *repl;
        int r = arrayify(root, true, &repl);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(root);
        return 0;
}

int twin_form_parse(const char *s, size_t len, json_t **ret)
{
        return form_parse(s, len, false, ret, NULL);
}

int twin_form_parse_strict(const char *s, size_t len, json_t **ret, char **ret_bad)
{
        return form_parse(s, len, true, ret, ret_bad);
}
