/* SPDX-License-Identifier: MIT */
#include "common/yamljson.h"

#include <ctype.h>
#include <yaml.h>

#include "common/json-util.h"
#include "common/util.h"

#define YAML_MAX_DEPTH 64
#define YAML_MAX_NODES 100000

/* What one conversion carries down the node tree. */
typedef struct Walk {
        yaml_document_t *doc;
        size_t budget; /* nodes left before the document counts as too large */
        json_t *lines; /* pointer → line, or NULL when the caller did not ask */
        char *ptr;     /* the JSON Pointer of the node being converted */
        size_t ptr_len, ptr_cap;
        char *err;
        size_t errlen;
} Walk;

static json_t *plain_scalar(const char *s, size_t n)
{
        if (n == 0 || (n == 1 && s[0] == '~') || (n == 4 && memcmp(s, "null", 4) == 0))
                return json_null();
        if (n == 4 && memcmp(s, "true", 4) == 0)
                return json_true();
        if (n == 5 && memcmp(s, "false", 5) == 0)
                return json_false();
        char buf[64];
        if (n < sizeof(buf)) {
                memcpy(buf, s, n);
                buf[n] = 0;
                char *end;
                errno = 0;
                long long v = strtoll(buf, &end, 10);
                if (*end == 0 && errno == 0 && (isdigit((unsigned char)buf[0]) || buf[0] == '-'))
                        return json_integer(v);
                double d = strtod(buf, &end);
                if (*end == 0 && (isdigit((unsigned char)buf[0]) || buf[0] == '-') &&
                    strpbrk(buf, ".eE"))
                        return json_real(d);
        }
        return json_stringn(s, n);
}

/* Appends "/" + token (RFC 6901 §3: '~' → "~0", '/' → "~1") to the walk's pointer. */
static int ptr_push(Walk *w, const char *token, size_t n)
{
        size_t need = w->ptr_len + 1 + 2 * n + 1;
        if (need > w->ptr_cap) {
                size_t cap = w->ptr_cap ? w->ptr_cap : 64;
                while (cap < need)
                        cap *= 2;
                char *p = realloc(w->ptr, cap);
                if (!p)
                        return -ENOMEM;
                w->ptr = p;
                w->ptr_cap = cap;
        }
        w->ptr[w->ptr_len++] = '/';
        for (size_t i = 0; i < n; i++) {
                if (token[i] == '~' || token[i] == '/') {
                        w->ptr[w->ptr_len++] = '~';
                        w->ptr[w->ptr_len++] = token[i] == '~' ? '0' : '1';
                } else
                        w->ptr[w->ptr_len++] = token[i];
        }
        w->ptr[w->ptr_len] = 0;
        return 0;
}

static int note_line(Walk *w, size_t mark_line)
{
        if (!w->lines)
                return 0;
        /* a pointer may carry a NUL decoded from the YAML ("\0" in a quoted key): jansson
         * keys cannot, and such a key is refused below anyway */
        if (strlen(w->ptr ? w->ptr : "") != w->ptr_len)
                return 0;
        return json_object_set_new(w->lines, w->ptr ? w->ptr : "",
                                   json_integer((json_int_t)mark_line + 1)) < 0
                       ? -ENOMEM
                       : 0;
}

static int node_to_json(Walk *w, yaml_node_t *node, int depth, json_t **ret)
{
        if (depth > YAML_MAX_DEPTH || w->budget-- == 0) {
                snprintf(w->err, w->errlen, "line %zu: document too deep or too large",
                         node->start_mark.line + 1);
                return -EINVAL;
        }
        switch (node->type) {
        case YAML_SCALAR_NODE: {
                const char *s = (const char *)node->data.scalar.value;
                size_t n = node->data.scalar.length;
                json_t *j = node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain_scalar(s, n)
                                                                               : json_stringn(s, n);
                if (!j) {
                        snprintf(w->err, w->errlen, "line %zu: not valid UTF-8",
                                 node->start_mark.line + 1);
                        return -EINVAL;
                }
                *ret = j;
                return 0;
        }
        case YAML_SEQUENCE_NODE: {
                _cleanup_json_ json_t *a = json_array();
                if (!a)
                        return -ENOMEM;
                size_t base = w->ptr_len;
                for (yaml_node_item_t *i = node->data.sequence.items.start;
                     i < node->data.sequence.items.top; i++) {
                        char idx[24];
                        int l = snprintf(idx, sizeof(idx), "%zu", json_array_size(a));
                        yaml_node_t *item = yaml_document_get_node(w->doc, *i);
                        json_t *v;
                        int r = ptr_push(w, idx, (size_t)l);
                        if (r >= 0)
                                r = note_line(w,
                                              item ? item->start_mark.line : node->start_mark.line);
                        if (r >= 0)
                                r = node_to_json(w, item, depth + 1, &v);
                        w->ptr_len = base;
                        if (w->ptr)
                                w->ptr[base] = 0;
                        if (r < 0)
                                return r;
                        if (json_array_append_new(a, v) < 0)
                                return -ENOMEM;
                }
                *ret = TAKE_PTR(a);
                return 0;
        }
        case YAML_MAPPING_NODE: {
                _cleanup_json_ json_t *o = json_object();
                if (!o)
                        return -ENOMEM;
                size_t base = w->ptr_len;
                for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
                     p < node->data.mapping.pairs.top; p++) {
                        yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
                        if (!k || k->type != YAML_SCALAR_NODE) {
                                snprintf(w->err, w->errlen,
                                         "line %zu: mapping keys must be scalars",
                                         node->start_mark.line + 1);
                                return -EINVAL;
                        }
                        const char *ks = (const char *)k->data.scalar.value;
                        size_t kn = k->data.scalar.length;
                        _cleanup_free_ char *key = strndup(ks, kn);
                        if (!key)
                                return -ENOMEM;
                        if (json_object_get(o, key)) {
                                snprintf(w->err, w->errlen, "line %zu: duplicate key '%s'",
                                         k->start_mark.line + 1, key);
                                return -EINVAL;
                        }
                        json_t *v;
                        int r = ptr_push(w, ks, kn);
                        if (r >= 0)
                                r = note_line(w, k->start_mark.line);
                        if (r >= 0)
                                r = node_to_json(w, yaml_document_get_node(w->doc, p->value),
                                                 depth + 1, &v);
                        w->ptr_len = base;
                        if (w->ptr)
                                w->ptr[base] = 0;
                        if (r < 0)
                                return r;
                        if (json_object_set_new(o, key, v) < 0) {
                                snprintf(w->err, w->errlen, "line %zu: key is not valid UTF-8",
                                         k->start_mark.line + 1);
                                return -EINVAL;
                        }
                }
                *ret = TAKE_PTR(o);
                return 0;
        }
        case YAML_NO_NODE:
        default:
                *ret = json_null();
                return 0;
        }
}

int yamljson_parse(const char *text, size_t len, json_t **ret, json_t **ret_lines, char *err,
                   size_t errlen)
{
        yaml_parser_t parser;
        yaml_document_t doc;
        if (errlen > 0)
                err[0] = 0;
        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
        if (!yaml_parser_load(&parser, &doc)) {
                snprintf(err, errlen, "line %zu: %s", parser.problem_mark.line + 1,
                         parser.problem ? parser.problem : "syntax error");
                yaml_parser_delete(&parser);
                return -EINVAL;
        }
        _cleanup_json_ json_t *lines = ret_lines ? json_object() : NULL;
        /* Aliases make the node graph a DAG whose expansion can be exponential
         * ("billion laughs"): the node budget bounds the work. */
        Walk w = {.doc = &doc,
                  .budget = YAML_MAX_NODES,
                  .lines = lines,
                  .err = err,
                  .errlen = errlen};
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        int r = 0;
        json_t *j = NULL;
        if (ret_lines && !lines)
                r = -ENOMEM;
        else if (!root)
                j = json_object();
        else {
                r = note_line(&w, root->start_mark.line);
                if (r >= 0)
                        r = node_to_json(&w, root, 0, &j);
        }
        free(w.ptr);
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        if (r < 0)
                return r;
        if (!j)
                return -ENOMEM;
        *ret = j;
        if (ret_lines)
                *ret_lines = TAKE_PTR(lines);
        return 0;
}
