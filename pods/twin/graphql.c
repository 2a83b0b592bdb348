/* SPDX-License-Identifier: MIT */
/*
 * GraphQL: the lexer and parser of executable documents (GraphQL spec, October 2021, §2),
 * validation of a document against a schema of static tables (§5, the part that names
 * things: fields, arguments, fragments, types) and execution (§6). See graphql.h.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/twin/graphql.h"
#include "pods/twin/kind.h"

/* ------------------------------------------------------------------ lexer (§2.1) */

typedef enum Tok {
        T_EOF,
        T_PUNCT, /* one of ! $ & ( ) : = @ [ ] { | } and "..." */
        T_NAME,
        T_INT,
        T_FLOAT,
        T_STRING,
} Tok;

typedef struct Lexer {
        const char *s, *end, *p;
        int line;
        const char *line_start;
        /* the current token */
        Tok tok;
        const char *start;
        size_t len;
        int tline, tcol;
        char *str; /* T_STRING: its value, NUL-terminated (owned) */
        size_t str_len;
        /* the first error */
        char *err;
        size_t errlen;
        int eline, ecol;
        bool failed;
        int depth;
        size_t selections; /* parsed so far, against GQL_SELECTIONS_MAX */
} Lexer;

static int lex_fail(Lexer *l, int line, int col, const char *fmt, ...) _printf_(4, 5);
static int lex_fail(Lexer *l, int line, int col, const char *fmt, ...)
{
        if (!l->failed) {
                l->failed = true;
                l->eline = line;
                l->ecol = col;
                if (l->errlen > 0) {
                        va_list ap;
                        va_start(ap, fmt);
                        vsnprintf(l->err, l->errlen, fmt, ap);
                        va_end(ap);
                }
        }
        return -EINVAL;
}

static int col_of(const Lexer *l, const char *at)
{
        return (int)(at - l->line_start) + 1;
}

static bool name_start(char c)
{
        return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool name_cont(char c)
{
        return name_start(c) || (c >= '0' && c <= '9');
}

static void newline(Lexer *l, const char *after)
{
        l->line++;
        l->line_start = after;
}

/* Skips what §2.1.7 ignores: BOM, white space, line terminators, comments, commas. */
static void skip_ignored(Lexer *l)
{
        while (l->p < l->end) {
                unsigned char c = (unsigned char)*l->p;
                if (c == ' ' || c == '\t' || c == ',') {
                        l->p++;
                } else if (c == '\n') {
                        newline(l, ++l->p);
                } else if (c == '\r') {
                        l->p++;
                        if (l->p < l->end && *l->p == '\n')
                                l->p++;
                        newline(l, l->p);
                } else if (c == 0xEF && l->end - l->p >= 3 && (unsigned char)l->p[1] == 0xBB &&
                           (unsigned char)l->p[2] == 0xBF) {
                        l->p += 3;
                } else if (c == '#') {
                        while (l->p < l->end && *l->p != '\n' && *l->p != '\r')
                                l->p++;
                } else
                        break;
        }
}

/* Appends code point cp as UTF-8 to buf (room for 4 bytes at *n). */
static void put_utf8(char *buf, size_t *n, unsigned cp)
{
        if (cp < 0x80)
                buf[(*n)++] = (char)cp;
        else if (cp < 0x800) {
                buf[(*n)++] = (char)(0xC0 | (cp >> 6));
                buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
                buf[(*n)++] = (char)(0xE0 | (cp >> 12));
                buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
        } else {
                buf[(*n)++] = (char)(0xF0 | (cp >> 18));
                buf[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
        }
}

/* \uXXXX or \u{X...} after "\u" at *p; writes the code point. 0 or -EINVAL. */
static int read_unicode(Lexer *l, const char **p, unsigned *ret)
{
        const char *q = *p;
        unsigned cp = 0;
        if (q < l->end && *q == '{') {
                q++;
                int digits = 0;
                while (q < l->end && *q != '}') {
                        int h = unhex(*q++);
                        if (h < 0 || ++digits > 6)
                                return -EINVAL;
                        cp = cp * 16 + (unsigned)h;
                }
                if (q >= l->end || digits == 0)
                        return -EINVAL;
                q++;
        } else {
                if (l->end - q < 4)
                        return -EINVAL;
                for (int i = 0; i < 4; i++) {
                        int h = unhex(q[i]);
                        if (h < 0)
                                return -EINVAL;
                        cp = cp * 16 + (unsigned)h;
                }
                q += 4;
        }
        *p = q;
        *ret = cp;
        return 0;
}

/* A "..." string (§2.9.4); l->p is past the opening quote. */
static int lex_string(Lexer *l)
{
        size_t cap = (size_t)(l->end - l->p) + 1, n = 0;
        char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        const char *p = l->p;
        while (p < l->end && *p != '"') {
                char c = *p;
                if ((unsigned char)c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                        free(buf);
                        return lex_fail(l, l->line, col_of(l, p),
                                        "Parse error: a control character in a string at [%d, %d]",
                                        l->line, col_of(l, p));
                }
                if (c == '\n' || c == '\r') {
                        free(buf);
                        return lex_fail(l, l->tline, l->tcol, "Parse error: unterminated string");
                }
                if (c != '\\') {
                        buf[n++] = c;
                        p++;
                        continue;
                }
                if (++p >= l->end)
                        break;
                char e = *p++;
                const char *simple = strchr("\"\\/bfnrt", e);
                if (e && simple) {
                        static const char map[] = "\"\\/\b\f\n\r\t";
                        buf[n++] = map[simple - "\"\\/bfnrt"];
                        continue;
                }
                unsigned cp;
                if (e != 'u' || read_unicode(l, &p, &cp) < 0) {
                        free(buf);
                        return lex_fail(l, l->line, col_of(l, p),
                                        "Parse error: bad escape in string at [%d, %d]", l->line,
                                        col_of(l, p));
                }
                /* a surrogate pair written as two escapes (§2.9.4 "StringCharacter") */
                if (cp >= 0xD800 && cp <= 0xDBFF && l->end - p >= 6 && p[0] == '\\' &&
                    p[1] == 'u') {
                        const char *q = p + 2;
                        unsigned lo;
                        if (read_unicode(l, &q, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                p = q;
                        }
                }
                if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
                        free(buf);
                        return lex_fail(l, l->line, col_of(l, p),
                                        "Parse error: invalid Unicode escape at [%d, %d]", l->line,
                                        col_of(l, p));
                }
                /* an escape is at least 6 bytes of input and at most 4 of output */
                put_utf8(buf, &n, cp);
        }
        if (p >= l->end) {
                free(buf);
                return lex_fail(l, l->tline, l->tcol,
                                "Parse error: unterminated string at [%d, %d]", l->tline, l->tcol);
        }
        l->p = p + 1;
        buf[n] = 0;
        l->str = buf;
        l->str_len = n;
        return 0;
}

/* A """block string""" (§2.9.4 BlockStringValue: common indentation and blank first and last
 * lines removed); l->p is past the opening quotes. */
static int lex_block_string(Lexer *l)
{
        size_t cap = (size_t)(l->end - l->p) + 1, n = 0;
        _cleanup_free_ char *raw = malloc(cap);
        if (!raw)
                return -ENOMEM;
        const char *p = l->p;
        for (;;) {
                if (p >= l->end)
                        return lex_fail(l, l->tline, l->tcol,
                                        "Parse error: unterminated string at [%d, %d]", l->tline,
                                        l->tcol);
                if (l->end - p >= 3 && memcmp(p, "\"\"\"", 3) == 0) {
                        p += 3;
                        break;
                }
                if (l->end - p >= 4 && memcmp(p, "\\\"\"\"", 4) == 0) {
                        memcpy(raw + n, "\"\"\"", 3);
                        n += 3;
                        p += 4;
                        continue;
                }
                if (*p == '\r') {
                        raw[n++] = '\n';
                        p++;
                        if (p < l->end && *p == '\n')
                                p++;
                        newline(l, p);
                        continue;
                }
                if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n')
                        return lex_fail(l, l->line, col_of(l, p),
                                        "Parse error: a control character in a string at [%d, %d]",
                                        l->line, col_of(l, p));
                if (*p == '\n')
                        newline(l, p + 1);
                raw[n++] = *p++;
        }
        l->p = p;
        raw[n] = 0;

        /* BlockStringValue (§2.9.4): the common indentation of every line but the first
         * that is not blank, removed; then blank first and last lines dropped */
        size_t n_lines = 1;
        for (size_t i = 0; i < n; i++)
                n_lines += raw[i] == '\n';
        _cleanup_free_ struct {
                const char *p;
                size_t len;
        } *lines = calloc(n_lines, sizeof(*lines));
        if (!lines)
                return -ENOMEM;
        size_t common = SIZE_MAX, k = 0;
        for (const char *ln = raw;; ln++) {
                const char *nl = strchr(ln, '\n');
                size_t len = nl ? (size_t)(nl - ln) : strlen(ln), ind = 0;
                while (ind < len && (ln[ind] == ' ' || ln[ind] == '\t'))
                        ind++;
                if (k > 0 && ind < len && ind < common)
                        common = ind;
                lines[k].p = ln;
                lines[k++].len = len;
                if (!nl)
                        break;
                ln = nl;
        }
        for (size_t i = 1; i < k && common != SIZE_MAX; i++) {
                size_t cut = common < lines[i].len ? common : lines[i].len;
                lines[i].p += cut;
                lines[i].len -= cut;
        }
        size_t lo = 0, hi = k;
        while (lo < hi && strspn(lines[lo].p, " \t") >= lines[lo].len)
                lo++;
        while (hi > lo && strspn(lines[hi - 1].p, " \t") >= lines[hi - 1].len)
                hi--;
        char *out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        size_t m = 0;
        for (size_t i = lo; i < hi; i++) {
                if (i > lo)
                        out[m++] = '\n';
                memcpy(out + m, lines[i].p, lines[i].len);
                m += lines[i].len;
        }
        out[m] = 0;
        l->str = out;
        l->str_len = m;
        return 0;
}

/* The token name GitHub's parse errors use ("RCURLY"). */
static const char *tok_name(const Lexer *l)
{
        static const struct {
                char c;
                const char *name;
        } punct[] = {{'!', "BANG"},     {'$', "VAR_SIGN"}, {'&', "AMP"},    {'(', "LPAREN"},
                     {')', "RPAREN"},   {':', "COLON"},    {'=', "EQUALS"}, {'@', "DIR_SIGN"},
                     {'[', "LBRACKET"}, {']', "RBRACKET"}, {'{', "LCURLY"}, {'|', "PIPE"},
                     {'}', "RCURLY"}};
        switch (l->tok) {
        case T_EOF:
                return "EOF";
        case T_NAME:
                return "IDENTIFIER";
        case T_INT:
                return "INT";
        case T_FLOAT:
                return "FLOAT";
        case T_STRING:
                return "STRING";
        case T_PUNCT:
                if (l->len == 3)
                        return "ELLIPSIS";
                for (size_t i = 0; i < ELEMENTSOF(punct); i++)
                        if (punct[i].c == l->start[0])
                                return punct[i].name;
                break;
        }
        return "UNKNOWN_CHAR";
}

/* Advances to the next token. 0, -EINVAL (l->err), -ENOMEM. */
static int lex(Lexer *l)
{
        free(l->str);
        l->str = NULL;
        skip_ignored(l);
        l->start = l->p;
        l->tline = l->line;
        l->tcol = col_of(l, l->p);
        if (l->p >= l->end) {
                l->tok = T_EOF;
                l->len = 0;
                return 0;
        }
        char c = *l->p;
        if (strchr("!$&():=@[]{|}", c) && c) {
                l->tok = T_PUNCT;
                l->len = 1;
                l->p++;
                return 0;
        }
        if (c == '.') {
                if (l->end - l->p >= 3 && memcmp(l->p, "...", 3) == 0) {
                        l->tok = T_PUNCT;
                        l->len = 3;
                        l->p += 3;
                        return 0;
                }
                return lex_fail(l, l->tline, l->tcol, "Parse error on \".\" at [%d, %d]", l->tline,
                                l->tcol);
        }
        if (name_start(c)) {
                while (l->p < l->end && name_cont(*l->p))
                        l->p++;
                l->tok = T_NAME;
                l->len = (size_t)(l->p - l->start);
                return 0;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
                const char *p = l->p;
                bool is_float = false;
                if (*p == '-')
                        p++;
                if (p < l->end && *p == '0')
                        p++;
                else if (p < l->end && *p >= '1' && *p <= '9')
                        while (p < l->end && *p >= '0' && *p <= '9')
                                p++;
                else
                        goto bad_number;
                if (p < l->end && *p >= '0' && *p <= '9')
                        goto bad_number; /* a leading zero */
                if (p < l->end && *p == '.') {
                        is_float = true;
                        p++;
                        if (p >= l->end || *p < '0' || *p > '9')
                                goto bad_number;
                        while (p < l->end && *p >= '0' && *p <= '9')
                                p++;
                }
                if (p < l->end && (*p == 'e' || *p == 'E')) {
                        is_float = true;
                        p++;
                        if (p < l->end && (*p == '+' || *p == '-'))
                                p++;
                        if (p >= l->end || *p < '0' || *p > '9')
                                goto bad_number;
                        while (p < l->end && *p >= '0' && *p <= '9')
                                p++;
                }
                if (p < l->end && (name_start(*p) || *p == '.'))
                        goto bad_number;
                l->tok = is_float ? T_FLOAT : T_INT;
                l->p = p;
                l->len = (size_t)(p - l->start);
                return 0;
bad_number:
                return lex_fail(l, l->tline, l->tcol, "Parse error: invalid number at [%d, %d]",
                                l->tline, l->tcol);
        }
        if (c == '"') {
                int r;
                l->tok = T_STRING;
                if (l->end - l->p >= 3 && memcmp(l->p, "\"\"\"", 3) == 0) {
                        l->p += 3;
                        r = lex_block_string(l);
                } else {
                        l->p++;
                        r = lex_string(l);
                }
                l->len = (size_t)(l->p - l->start);
                return r;
        }
        return lex_fail(l, l->tline, l->tcol, "Parse error on \"%c\" (UNKNOWN_CHAR) at [%d, %d]",
                        (unsigned char)c >= 0x20 && (unsigned char)c < 0x7F ? c : '?', l->tline,
                        l->tcol);
}

/* ------------------------------------------------------------------ parser (§2.2–2.12) */

static int unexpected(Lexer *l)
{
        if (l->tok == T_EOF)
                return lex_fail(l, l->tline, l->tcol, "Parse error on end of input at [%d, %d]",
                                l->tline, l->tcol);
        int n = l->len > 40 ? 40 : (int)l->len;
        return lex_fail(l, l->tline, l->tcol, "Parse error on \"%.*s\" (%s) at [%d, %d]", n,
                        l->start, tok_name(l), l->tline, l->tcol);
}

static bool is_punct(const Lexer *l, const char *p)
{
        return l->tok == T_PUNCT && l->len == strlen(p) && memcmp(l->start, p, l->len) == 0;
}

static bool is_name(const Lexer *l, const char *n)
{
        return l->tok == T_NAME && l->len == strlen(n) && memcmp(l->start, n, l->len) == 0;
}

static int expect_punct(Lexer *l, const char *p)
{
        if (!is_punct(l, p))
                return unexpected(l);
        return lex(l);
}

/* A name token as a new JSON string in *ret. */
static int take_name(Lexer *l, json_t **ret)
{
        if (l->tok != T_NAME)
                return unexpected(l);
        *ret = json_stringn(l->start, l->len);
        if (!*ret)
                return -ENOMEM;
        return lex(l);
}

static int enter(Lexer *l)
{
        if (++l->depth > GQL_DEPTH_MAX)
                return lex_fail(l, l->tline, l->tcol,
                                "Parse error: the document nests deeper than %d at [%d, %d]",
                                GQL_DEPTH_MAX, l->tline, l->tcol);
        return 0;
}

static int parse_value(Lexer *l, bool is_const, json_t **ret);

static int parse_value_inner(Lexer *l, bool is_const, json_t **ret)
{
        int r;
        if (is_punct(l, "$") && !is_const) {
                if ((r = lex(l)) < 0)
                        return r;
                _cleanup_json_ json_t *n = NULL;
                if ((r = take_name(l, &n)) < 0)
                        return r;
                *ret = json_pack("{s:O}", "$variable", n);
                return *ret ? 0 : -ENOMEM;
        }
        if (is_punct(l, "[")) {
                _cleanup_json_ json_t *a = json_array();
                if (!a)
                        return -ENOMEM;
                if ((r = lex(l)) < 0)
                        return r;
                while (!is_punct(l, "]")) {
                        json_t *v = NULL;
                        if (l->tok == T_EOF)
                                return unexpected(l);
                        if ((r = parse_value(l, is_const, &v)) < 0)
                                return r;
                        if (json_array_append_new(a, v) < 0)
                                return -ENOMEM;
                }
                if ((r = lex(l)) < 0)
                        return r;
                *ret = TAKE_PTR(a);
                return 0;
        }
        if (is_punct(l, "{")) {
                _cleanup_json_ json_t *o = json_object();
                if (!o)
                        return -ENOMEM;
                if ((r = lex(l)) < 0)
                        return r;
                while (!is_punct(l, "}")) {
                        if (l->tok != T_NAME)
                                return unexpected(l);
                        _cleanup_free_ char *k = strndup(l->start, l->len);
                        if (!k)
                                return -ENOMEM;
                        int kl = l->tline, kc = l->tcol;
                        json_t *v = NULL;
                        if ((r = lex(l)) < 0 || (r = expect_punct(l, ":")) < 0 ||
                            (r = parse_value(l, is_const, &v)) < 0)
                                return r;
                        if (json_object_get(o, k)) {
                                json_decref(v);
                                return lex_fail(l, kl, kc,
                                                "There can be only one input field named \"%s\"",
                                                k);
                        }
                        if (json_object_set_new(o, k, v) < 0)
                                return -ENOMEM;
                }
                if ((r = lex(l)) < 0)
                        return r;
                *ret = TAKE_PTR(o);
                return 0;
        }
        switch (l->tok) {
        case T_INT: {
                errno = 0;
                char *end;
                _cleanup_free_ char *s = strndup(l->start, l->len);
                if (!s)
                        return -ENOMEM;
                long long v = strtoll(s, &end, 10);
                if (errno == ERANGE)
                        return lex_fail(l, l->tline, l->tcol,
                                        "Parse error: integer out of range at [%d, %d]", l->tline,
                                        l->tcol);
                *ret = json_integer(v);
                break;
        }
        case T_FLOAT: {
                _cleanup_free_ char *s = strndup(l->start, l->len);
                if (!s)
                        return -ENOMEM;
                double d = strtod(s, NULL);
                if (!isfinite(d)) /* JSON has no infinity (and jansson refuses one) */
                        return lex_fail(l, l->tline, l->tcol,
                                        "Parse error: float out of range at [%d, %d]", l->tline,
                                        l->tcol);
                *ret = json_real(d);
                break;
        }
        case T_STRING:
                *ret = json_stringn(l->str, l->str_len);
                if (!*ret)
                        return lex_fail(l, l->tline, l->tcol,
                                        "Parse error: a string that is not UTF-8 at [%d, %d]",
                                        l->tline, l->tcol);
                break;
        case T_NAME:
                if (is_name(l, "true") || is_name(l, "false"))
                        *ret = json_boolean(is_name(l, "true"));
                else if (is_name(l, "null"))
                        *ret = json_null();
                else
                        *ret = json_stringn(l->start, l->len); /* an enum value */
                break;
        case T_EOF:
        case T_PUNCT:
                return unexpected(l);
        }
        if (!*ret)
                return -ENOMEM;
        if ((r = lex(l)) < 0) { /* the next token is bad: nothing is returned */
                json_decref(*ret);
                *ret = NULL;
        }
        return r;
}

static int parse_value(Lexer *l, bool is_const, json_t **ret)
{
        int r = enter(l);
        if (r >= 0)
                r = parse_value_inner(l, is_const, ret);
        l->depth--;
        return r;
}

/* "(name: value, ...)" into a new object in *ret (NULL when there is none). */
static int parse_arguments(Lexer *l, bool is_const, json_t **ret)
{
        *ret = NULL;
        if (!is_punct(l, "("))
                return 0;
        int r = lex(l);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *o = json_object();
        if (!o)
                return -ENOMEM;
        do {
                if (l->tok != T_NAME)
                        return unexpected(l);
                _cleanup_free_ char *k = strndup(l->start, l->len);
                if (!k)
                        return -ENOMEM;
                int kl = l->tline, kc = l->tcol;
                json_t *v = NULL;
                if ((r = lex(l)) < 0 || (r = expect_punct(l, ":")) < 0 ||
                    (r = parse_value(l, is_const, &v)) < 0)
                        return r;
                if (json_object_get(o, k)) {
                        json_decref(v);
                        return lex_fail(l, kl, kc, "There can be only one argument named \"%s\"",
                                        k);
                }
                if (json_object_set_new(o, k, v) < 0)
                        return -ENOMEM;
        } while (!is_punct(l, ")"));
        if ((r = lex(l)) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* "@name(args) ..." into a new array in *ret (NULL when there are none). */
static int parse_directives(Lexer *l, bool is_const, json_t **ret)
{
        *ret = NULL;
        _cleanup_json_ json_t *a = NULL;
        while (is_punct(l, "@")) {
                int r = lex(l);
                _cleanup_json_ json_t *name = NULL, *args = NULL;
                if (r < 0 || (r = take_name(l, &name)) < 0 ||
                    (r = parse_arguments(l, is_const, &args)) < 0)
                        return r;
                if (!a && !(a = json_array()))
                        return -ENOMEM;
                if (json_array_append_new(
                            a, json_pack("{s:O, s:O?}", "name", name, "arguments", args)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

static int parse_type(Lexer *l, json_t **ret);

static int parse_type_inner(Lexer *l, json_t **ret)
{
        int r;
        _cleanup_free_ char *text = NULL;
        if (is_punct(l, "[")) {
                _cleanup_json_ json_t *inner = NULL;
                if ((r = lex(l)) < 0 || (r = parse_type(l, &inner)) < 0 ||
                    (r = expect_punct(l, "]")) < 0)
                        return r;
                if (asprintf(&text, "[%s]", json_string_value(inner)) < 0)
                        text = NULL;
        } else if (l->tok == T_NAME) {
                text = strndup(l->start, l->len);
                if ((r = lex(l)) < 0)
                        return r;
        } else
                return unexpected(l);
        if (!text)
                return -ENOMEM;
        if (is_punct(l, "!")) {
                if ((r = lex(l)) < 0)
                        return r;
                char *t = text;
                if (asprintf(&text, "%s!", t) < 0)
                        text = NULL;
                free(t);
                if (!text)
                        return -ENOMEM;
        }
        if (strlen(text) >= 120) /* the executor's buffers hold a type's text */
                return lex_fail(l, l->tline, l->tcol, "Parse error: a type nests too deep");
        *ret = json_string(text);
        return *ret ? 0 : -ENOMEM;
}

/* A type reference (§2.11) as its text ("[String!]!") in *ret (new string). */
static int parse_type(Lexer *l, json_t **ret)
{
        int r = enter(l);
        if (r >= 0)
                r = parse_type_inner(l, ret);
        l->depth--;
        return r;
}

static int parse_selection_set(Lexer *l, json_t **ret);

static int set_pos(json_t *o, int line, int col)
{
        if (json_object_set_new(o, "line", json_integer(line)) < 0 ||
            json_object_set_new(o, "column", json_integer(col)) < 0)
                return -ENOMEM;
        return 0;
}

static int parse_selection(Lexer *l, json_t **ret)
{
        int line = l->tline, col = l->tcol, r;
        if (++l->selections > GQL_SELECTIONS_MAX)
                return lex_fail(l, line, col,
                                "Parse error: the document has more than %d selections at [%d, %d]",
                                GQL_SELECTIONS_MAX, line, col);
        _cleanup_json_ json_t *o = json_object();
        if (!o)
                return -ENOMEM;
        if (is_punct(l, "...")) {
                if ((r = lex(l)) < 0)
                        return r;
                _cleanup_json_ json_t *dirs = NULL, *sel = NULL, *on = NULL;
                if (l->tok == T_NAME && !is_name(l, "on")) {
                        _cleanup_json_ json_t *name = NULL;
                        if ((r = take_name(l, &name)) < 0 ||
                            (r = parse_directives(l, false, &dirs)) < 0)
                                return r;
                        if (json_object_set(o, "spread", name) < 0)
                                return -ENOMEM;
                } else {
                        if (is_name(l, "on")) {
                                if ((r = lex(l)) < 0 || (r = take_name(l, &on)) < 0)
                                        return r;
                        }
                        if ((r = parse_directives(l, false, &dirs)) < 0 ||
                            (r = parse_selection_set(l, &sel)) < 0)
                                return r;
                        if (json_object_set_new(o, "inline", json_true()) < 0 ||
                            (on && json_object_set(o, "on", on) < 0) ||
                            json_object_set(o, "selections", sel) < 0)
                                return -ENOMEM;
                }
                if ((dirs && json_object_set(o, "directives", dirs) < 0) || set_pos(o, line, col))
                        return -ENOMEM;
                *ret = TAKE_PTR(o);
                return 0;
        }
        _cleanup_json_ json_t *name = NULL, *alias = NULL, *args = NULL, *dirs = NULL, *sel = NULL;
        if ((r = take_name(l, &name)) < 0)
                return r;
        if (is_punct(l, ":")) {
                alias = TAKE_PTR(name);
                if ((r = lex(l)) < 0 || (r = take_name(l, &name)) < 0)
                        return r;
        }
        if ((r = parse_arguments(l, false, &args)) < 0 ||
            (r = parse_directives(l, false, &dirs)) < 0)
                return r;
        if (is_punct(l, "{") && (r = parse_selection_set(l, &sel)) < 0)
                return r;
        if (json_object_set(o, "field", name) < 0 ||
            (alias && json_object_set(o, "alias", alias) < 0) ||
            (args && json_object_set(o, "arguments", args) < 0) ||
            (dirs && json_object_set(o, "directives", dirs) < 0) ||
            (sel && json_object_set(o, "selections", sel) < 0) || set_pos(o, line, col) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int parse_selection_set_inner(Lexer *l, json_t **ret)
{
        int r = expect_punct(l, "{");
        if (r < 0)
                return r;
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        do {
                json_t *s = NULL;
                if ((r = parse_selection(l, &s)) < 0)
                        return r;
                if (json_array_append_new(a, s) < 0)
                        return -ENOMEM;
        } while (!is_punct(l, "}"));
        if ((r = lex(l)) < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

static int parse_selection_set(Lexer *l, json_t **ret)
{
        int r = enter(l);
        if (r >= 0)
                r = parse_selection_set_inner(l, ret);
        l->depth--;
        return r;
}

static int parse_variables(Lexer *l, json_t *vars)
{
        if (!is_punct(l, "("))
                return 0;
        int r = lex(l);
        if (r < 0)
                return r;
        do {
                int line = l->tline, col = l->tcol;
                _cleanup_json_ json_t *name = NULL, *type = NULL, *def = NULL, *dirs = NULL;
                if ((r = expect_punct(l, "$")) < 0 || (r = take_name(l, &name)) < 0 ||
                    (r = expect_punct(l, ":")) < 0 || (r = parse_type(l, &type)) < 0)
                        return r;
                if (is_punct(l, "=") && ((r = lex(l)) < 0 || (r = parse_value(l, true, &def)) < 0))
                        return r;
                if ((r = parse_directives(l, true, &dirs)) < 0)
                        return r;
                size_t i;
                json_t *v;
                json_array_foreach (vars, i, v) {
                        if (json_equal(json_object_get(v, "name"), name))
                                return lex_fail(l, line, col,
                                                "There can be only one variable named \"%s\"",
                                                json_string_value(name));
                }
                v = json_pack("{s:O, s:O}", "name", name, "type", type);
                if (!v || json_array_append_new(vars, v) < 0 ||
                    (def && json_object_set(v, "default", def) < 0))
                        return -ENOMEM;
        } while (!is_punct(l, ")"));
        return lex(l);
}

static int parse_definition(Lexer *l, json_t *doc)
{
        int r, line = l->tline, col = l->tcol;
        if (is_name(l, "fragment")) {
                _cleanup_json_ json_t *name = NULL, *on = NULL, *dirs = NULL, *sel = NULL;
                if ((r = lex(l)) < 0)
                        return r;
                if (is_name(l, "on"))
                        return unexpected(l);
                if ((r = take_name(l, &name)) < 0)
                        return r;
                if (!is_name(l, "on"))
                        return unexpected(l);
                if ((r = lex(l)) < 0 || (r = take_name(l, &on)) < 0 ||
                    (r = parse_directives(l, false, &dirs)) < 0 ||
                    (r = parse_selection_set(l, &sel)) < 0)
                        return r;
                json_t *frags = json_object_get(doc, "fragments");
                if (json_object_get(frags, json_string_value(name)))
                        return lex_fail(l, line, col,
                                        "Fragment name \"%s\" must be unique (at [%d, %d])",
                                        json_string_value(name), line, col);
                return json_object_set_new(frags, json_string_value(name),
                                           json_pack("{s:O, s:O}", "on", on, "selections", sel));
        }
        _cleanup_json_ json_t *op = json_pack("{s:s, s:[]}", "operation", "query", "variables");
        if (!op)
                return -ENOMEM;
        if (!is_punct(l, "{")) {
                if (!is_name(l, "query") && !is_name(l, "mutation") && !is_name(l, "subscription"))
                        return unexpected(l);
                if (json_object_set_new(op, "operation", json_stringn(l->start, l->len)) < 0)
                        return -ENOMEM;
                if ((r = lex(l)) < 0)
                        return r;
                if (l->tok == T_NAME) {
                        _cleanup_json_ json_t *name = NULL;
                        if ((r = take_name(l, &name)) < 0)
                                return r;
                        if (json_object_set(op, "name", name) < 0)
                                return -ENOMEM;
                }
                _cleanup_json_ json_t *dirs = NULL;
                if ((r = parse_variables(l, json_object_get(op, "variables"))) < 0 ||
                    (r = parse_directives(l, false, &dirs)) < 0)
                        return r;
        }
        _cleanup_json_ json_t *sel = NULL;
        if ((r = parse_selection_set(l, &sel)) < 0)
                return r;
        if (json_object_set(op, "selections", sel) < 0 || set_pos(op, line, col) < 0)
                return -ENOMEM;
        return json_array_append(json_object_get(doc, "operations"), op);
}

int gql_parse(const char *text, size_t len, json_t **ret, char *err, size_t errlen, int *ret_line,
              int *ret_column)
{
        Lexer l = {
                .s = text,
                .end = text + len,
                .p = text,
                .line = 1,
                .line_start = text,
                .err = err,
                .errlen = errlen,
        };
        if (errlen > 0)
                err[0] = 0;
        _cleanup_json_ json_t *doc = json_pack("{s:[], s:{}}", "operations", "fragments");
        if (!doc)
                return -ENOMEM;
        int r = lex(&l);
        if (r >= 0 && l.tok == T_EOF)
                r = lex_fail(&l, 1, 1, "Unexpected end of document");
        while (r >= 0 && l.tok != T_EOF)
                r = parse_definition(&l, doc);
        free(l.str);
        if (r < 0) {
                if (r == -EINVAL) {
                        *ret_line = l.eline;
                        *ret_column = l.ecol;
                }
                return r;
        }
        *ret = TAKE_PTR(doc);
        return 0;
}

/* ------------------------------------------------------------------ schema lookups */

struct GqlExec {
        const GqlSchema *s;
        void *userdata;
        json_t *fragments; /* borrowed from the document */
        json_t *vars;      /* the operation's variables, coerced */
        json_t *errors;
        json_t *path;          /* the response path of the field being resolved */
        const json_t *field;   /* its selection node, for locations */
        const char *operation; /* "query" or "mutation" */
        size_t nodes;          /* fields validated, against GQL_NODES_MAX */
        json_t *declared;      /* the operation's variable definitions */
        /* fragments (spread or inline) nested in the selection set being validated, which
         * collect() follows no deeper than GQL_DEPTH_MAX */
        int fdepth;
};

static const GqlType builtin_scalars[] = {
        {"String", GQL_SCALAR, NULL, NULL, 0}, {"Int", GQL_SCALAR, NULL, NULL, 0},
        {"Float", GQL_SCALAR, NULL, NULL, 0},  {"Boolean", GQL_SCALAR, NULL, NULL, 0},
        {"ID", GQL_SCALAR, NULL, NULL, 0},
};

static const GqlType *introspection_type(const char *name);

static const GqlType *find_type(const GqlSchema *s, const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; i < s->n_types; i++)
                if (streq(s->types[i].name, name))
                        return &s->types[i];
        for (size_t i = 0; i < ELEMENTSOF(builtin_scalars); i++)
                if (streq(builtin_scalars[i].name, name))
                        return &builtin_scalars[i];
        return introspection_type(name);
}

static bool word_in(const char *list, const char *w)
{
        size_t n = strlen(w);
        for (const char *p = list; p && *p;) {
                p += strspn(p, " ");
                size_t k = strcspn(p, " ");
                if (k == n && memcmp(p, w, n) == 0)
                        return true;
                p += k;
        }
        return false;
}

/* Whether an object of type concrete is a value of type t (itself, an interface it implements,
 * a union it is a member of). */
static bool type_applies(const GqlType *t, const GqlType *concrete)
{
        if (t == concrete)
                return true;
        if (t->kind == GQL_INTERFACE)
                return concrete->kind == GQL_OBJECT && word_in(concrete->also, t->name);
        if (t->kind == GQL_UNION)
                return word_in(t->also, concrete->name);
        return false;
}

static bool composite(const GqlType *t)
{
        return t->kind == GQL_OBJECT || t->kind == GQL_INTERFACE || t->kind == GQL_UNION;
}

/* The named type of a type reference's text ("[Label!]!" → "Label") into buf. */
static const char *named(const char *text, char buf[static 128])
{
        size_t i = strspn(text, "[");
        size_t n = strcspn(text + i, "]!");
        if (n >= 128)
                n = 127;
        memcpy(buf, text + i, n);
        buf[n] = 0;
        return buf;
}

static const GqlField meta_fields[] = {
        {"__typename", "String!", NULL, NULL},
        {"__type", "__Type", "name: String!", NULL},
        {"__schema", "__Schema!", NULL, NULL},
};

static const GqlField *find_field(const GqlExec *x, const GqlType *t, const char *name)
{
        if (streq(name, "__typename"))
                return &meta_fields[0];
        if (streq(t->name, x->s->query))
                for (size_t i = 1; i < ELEMENTSOF(meta_fields); i++)
                        if (streq(meta_fields[i].name, name))
                                return &meta_fields[i];
        for (size_t i = 0; i < t->n_fields; i++)
                if (streq(t->fields[i].name, name))
                        return &t->fields[i];
        return NULL;
}

/*
 * The declared type of argument name in an "a: T, b: U" list into buf, or NULL when the list
 * has no such argument.
 */
static const char *arg_type(const char *args, const char *name, char buf[static 128])
{
        size_t n = strlen(name);
        for (const char *p = args; p && *p;) {
                p += strspn(p, " ,");
                size_t k = strcspn(p, ":");
                const char *colon = p + k;
                if (!*colon)
                        break;
                const char *t = colon + 1 + strspn(colon + 1, " ");
                size_t tl = strcspn(t, ",");
                while (tl > 0 && t[tl - 1] == ' ')
                        tl--;
                if (k == n && memcmp(p, name, n) == 0) {
                        if (tl >= 128)
                                tl = 127;
                        memcpy(buf, t, tl);
                        buf[tl] = 0;
                        return buf;
                }
                p = t + tl;
        }
        return NULL;
}

/* ------------------------------------------------------------------ errors */

static json_t *locations_of(const json_t *node)
{
        json_t *line = json_object_get(node, "line"), *col = json_object_get(node, "column");
        if (!line)
                return json_array();
        return json_pack("[{s:O, s:O}]", "line", line, "column", col);
}

/* Appends {message, locations, path?, type?, extensions?}. 0 or -ENOMEM. */
static int add_error(GqlExec *x, const json_t *node, bool with_path, const char *type,
                     json_t *extensions, const char *message)
{
        _cleanup_json_ json_t *ext = extensions;
        /* a message may quote a value cut at a byte count: mended into UTF-8 */
        json_t *e =
                json_pack("{s:o, s:o}", "message", twin_json_string_lossy(message, strlen(message)),
                          "locations", locations_of(node));
        if (!e || json_array_append_new(x->errors, e) < 0)
                return -ENOMEM;
        if (with_path && json_object_set_new(e, "path", json_deep_copy(x->path)) < 0)
                return -ENOMEM;
        if (type && json_object_set_new(e, "type", json_string(type)) < 0)
                return -ENOMEM;
        if (ext && json_object_set(e, "extensions", ext) < 0)
                return -ENOMEM;
        return 0;
}

static int verror(GqlExec *x, const json_t *node, json_t *extensions, const char *fmt, ...)
        _printf_(4, 5);
static int verror(GqlExec *x, const json_t *node, json_t *extensions, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *m = NULL;
        int n = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (n < 0) {
                json_decref(extensions);
                return -ENOMEM;
        }
        return add_error(x, node, false, NULL, extensions, m);
}

int gql_error(GqlExec *x, const char *type, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *m = NULL;
        int n = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        return add_error(x, x->field, true, type, NULL, m);
}

void *gql_userdata(GqlExec *x)
{
        return x->userdata;
}

const char *gql_field_name(GqlExec *x)
{
        return json_get_str(x->field, "field");
}

const char *gql_operation(GqlExec *x)
{
        return x->operation;
}

/* ------------------------------------------------------------------ input coercion (§5.6) */

static bool is_variable(const json_t *v)
{
        return json_is_object(v) && json_object_size(v) == 1 && json_object_get(v, "$variable");
}

/* A GraphQL value of the input type text as it will be used: 0 with *ret (new), 1 invalid
 * (why in err), -ENOMEM. A single value is a list of one (§3.1.7 "Input Coercion"). */
static int coerce(GqlExec *x, const char *text, json_t *v, json_t **ret, char *err, size_t errlen)
{
        size_t tl = strlen(text);
        bool non_null = tl > 0 && text[tl - 1] == '!';
        if (!v || json_is_null(v)) {
                if (non_null) {
                        snprintf(err, errlen, "Expected value to not be null");
                        return 1;
                }
                *ret = json_null();
                return 0;
        }
        char inner[128];
        size_t il = non_null ? tl - 1 : tl;
        if (il >= sizeof(inner))
                il = sizeof(inner) - 1;
        memcpy(inner, text, il);
        inner[il] = 0;
        if (inner[0] == '[') {
                char elem[128];
                size_t el = il >= 2 ? il - 2 : 0;
                memcpy(elem, inner + 1, el);
                elem[el] = 0;
                _cleanup_json_ json_t *out = json_array();
                if (!out)
                        return -ENOMEM;
                if (!json_is_array(v)) {
                        json_t *one = NULL;
                        int r = coerce(x, elem, v, &one, err, errlen);
                        if (r != 0)
                                return r;
                        if (json_array_append_new(out, one) < 0)
                                return -ENOMEM;
                } else {
                        size_t i;
                        json_t *e;
                        json_array_foreach (v, i, e) {
                                json_t *one = NULL;
                                int r = coerce(x, elem, e, &one, err, errlen);
                                if (r != 0)
                                        return r;
                                if (json_array_append_new(out, one) < 0)
                                        return -ENOMEM;
                        }
                }
                *ret = TAKE_PTR(out);
                return 0;
        }
        const GqlType *t = find_type(x->s, inner);
        if (!t) {
                snprintf(err, errlen, "No such type %s", inner);
                return 1;
        }
        bool ok = true;
        switch (t->kind) {
        case GQL_SCALAR:
                if (streq(inner, "Int"))
                        ok = json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
                             json_integer_value(v) <= INT32_MAX;
                else if (streq(inner, "Float"))
                        ok = json_is_number(v);
                else if (streq(inner, "Boolean"))
                        ok = json_is_boolean(v);
                else if (streq(inner, "ID"))
                        ok = json_is_string(v) || json_is_integer(v);
                else
                        ok = json_is_string(v); /* String and the custom scalars */
                break;
        case GQL_ENUM:
                ok = json_is_string(v) && word_in(t->also, json_string_value(v));
                break;
        case GQL_INPUT_OBJECT: {
                if (!json_is_object(v)) {
                        ok = false;
                        break;
                }
                const char *k;
                json_t *fv;
                json_object_foreach (v, k, fv) {
                        bool known = false;
                        for (size_t i = 0; i < t->n_fields; i++)
                                known |= streq(t->fields[i].name, k);
                        if (!known) {
                                snprintf(err, errlen, "Field is not defined on %s: %s", t->name, k);
                                return 1;
                        }
                }
                _cleanup_json_ json_t *out = json_object();
                if (!out)
                        return -ENOMEM;
                for (size_t i = 0; i < t->n_fields; i++) {
                        json_t *fv2 = json_object_get(v, t->fields[i].name), *c;
                        if (!fv2) {
                                size_t ftl = strlen(t->fields[i].type);
                                if (t->fields[i].type[ftl - 1] == '!') {
                                        snprintf(err, errlen,
                                                 "Argument '%s' on InputObject '%s' is required. "
                                                 "Expected type %s",
                                                 t->fields[i].name, t->name, t->fields[i].type);
                                        return 1;
                                }
                                continue;
                        }
                        int r = coerce(x, t->fields[i].type, fv2, &c, err, errlen);
                        if (r != 0)
                                return r;
                        if (json_object_set_new(out, t->fields[i].name, c) < 0)
                                return -ENOMEM;
                }
                *ret = TAKE_PTR(out);
                return 0;
        }
        case GQL_OBJECT:
        case GQL_INTERFACE:
        case GQL_UNION:
                ok = false;
                break;
        }
        if (!ok) {
                _cleanup_free_ char *shown = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                snprintf(err, errlen, "Could not coerce value %.60s to %s", strempty(shown), inner);
                return 1;
        }
        *ret = json_incref(v);
        return 0;
}

/* v (borrowed) with every {"$variable": n} replaced by the variable's value: a variable that
 * was not given leaves its object member out (§6.4.1 "CoerceArgumentValues"). New reference. */
static json_t *substitute(GqlExec *x, json_t *v)
{
        if (is_variable(v)) {
                json_t *val = json_object_get(x->vars, json_get_str(v, "$variable"));
                return val ? json_incref(val) : NULL;
        }
        if (json_is_array(v)) {
                json_t *a = json_array();
                size_t i;
                json_t *e;
                json_array_foreach (v, i, e) {
                        json_t *s = substitute(x, e);
                        if (json_array_append_new(a, s ? s : json_null()) < 0) {
                                json_decref(a);
                                return NULL;
                        }
                }
                return a;
        }
        if (json_is_object(v)) {
                json_t *o = json_object();
                const char *k;
                json_t *e;
                json_object_foreach (v, k, e) {
                        json_t *s = substitute(x, e);
                        if (s && json_object_set_new(o, k, s) < 0) {
                                json_decref(o);
                                return NULL;
                        }
                }
                return o;
        }
        return json_incref(v);
}

/* ------------------------------------------------------------------ validation (§5) */

/* Whether every variable that value (borrowed) uses is declared. */
static int check_variables(GqlExec *x, const json_t *node, json_t *v)
{
        if (is_variable(v)) {
                const char *name = json_get_str(v, "$variable");
                size_t i;
                json_t *d;
                json_array_foreach (x->declared, i, d) {
                        if (streq_ptr(json_get_str(d, "name"), name))
                                return 0;
                }
                return verror(
                        x, node,
                        json_pack("{s:s, s:s}", "code", "variableNotDefined", "variableName", name),
                        "Variable $%s is used by anonymous query but not declared", name);
        }
        size_t i;
        const char *k;
        json_t *e;
        int r = 0;
        if (json_is_array(v))
                json_array_foreach (v, i, e) {
                        if ((r = check_variables(x, node, e)) < 0)
                                return r;
                }
        else if (json_is_object(v))
                json_object_foreach (v, k, e) {
                        if ((r = check_variables(x, node, e)) < 0)
                                return r;
                }
        return r;
}

static int validate_selections(GqlExec *x, const GqlType *t, json_t *sels, json_t *stack);

static int validate_field(GqlExec *x, const GqlType *t, json_t *sel, json_t *stack)
{
        const char *name = json_get_str(sel, "field");
        const GqlField *f =
                t->kind == GQL_UNION && !streq(name, "__typename") ? NULL : find_field(x, t, name);
        if (!f)
                return verror(x, sel,
                              json_pack("{s:s, s:s, s:s}", "code", "undefinedField", "typeName",
                                        t->name, "fieldName", name),
                              "Field '%s' doesn't exist on type '%s'", name, t->name);
        json_t *args = json_object_get(sel, "arguments");
        const char *k;
        json_t *v;
        int r;
        json_object_foreach (args, k, v) {
                char buf[128];
                if (!arg_type(f->args, k, buf))
                        return verror(x, sel,
                                      json_pack("{s:s, s:s, s:s, s:s}", "code",
                                                "argumentNotAccepted", "name", name, "typeName",
                                                "Field", "argumentName", k),
                                      "Field '%s' doesn't accept argument '%s'", name, k);
                if ((r = check_variables(x, sel, v)) < 0)
                        return r;
                if (!is_variable(v)) {
                        /* a literal is checked now; a variable's value at execution */
                        _cleanup_json_ json_t *sub = substitute(x, v), *c = NULL;
                        char err[200];
                        r = coerce(x, buf, sub, &c, err, sizeof(err));
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                _cleanup_free_ char *shown =
                                        json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                                return verror(x, sel,
                                              json_pack("{s:s, s:s, s:s, s:s}", "code",
                                                        "argumentLiteralsIncompatible", "typeName",
                                                        "Field", "argumentName", k, "reason", err),
                                              "Argument '%s' on Field '%s' has an invalid value "
                                              "(%.60s). Expected type '%s'.",
                                              k, name, strempty(shown), buf);
                        }
                }
        }
        /* required arguments (a non-null type) that are missing */
        for (const char *p = f->args; p && *p;) {
                p += strspn(p, " ,");
                size_t kl = strcspn(p, ":");
                if (!p[kl])
                        break;
                char an[64];
                snprintf(an, sizeof(an), "%.*s", (int)(kl < 63 ? kl : 63), p);
                const char *tt = p + kl + 1;
                size_t tl = strcspn(tt, ",");
                while (tl > 0 && tt[tl - 1] == ' ')
                        tl--;
                if (tl > 0 && tt[tl - 1] == '!' && !json_object_get(args, an))
                        return verror(x, sel,
                                      json_pack("{s:s, s:s, s:s, s:s}", "code",
                                                "missingRequiredArguments", "className", "Field",
                                                "name", name, "arguments", an),
                                      "Field '%s' is missing required arguments: %s", name, an);
                p = tt + tl;
        }
        char buf[128];
        const GqlType *ft = find_type(x->s, named(f->type, buf));
        json_t *sub = json_object_get(sel, "selections");
        if (!ft)
                return verror(x, sel, NULL, "The twin's schema names an unknown type %s", buf);
        if (composite(ft) && !sub)
                return verror(x, sel,
                              json_pack("{s:s, s:s, s:s}", "code", "selectionMismatch", "nodeName",
                                        "field", "typeName", ft->name),
                              "Field must have selections (field '%s' returns %s but has no "
                              "selections. Did you mean '%s { ... }'?)",
                              name, ft->name, name);
        if (!composite(ft) && sub)
                return verror(x, sel,
                              json_pack("{s:s, s:s, s:s}", "code", "selectionMismatch", "nodeName",
                                        "field", "typeName", ft->name),
                              "Selections can't be made on %s (field '%s' returns %s but has "
                              "selections [...])",
                              ft->kind == GQL_ENUM ? "enums" : "scalars", name, ft->name);
        if (!sub)
                return 0;
        int saved = x->fdepth; /* a field's selections are collected afresh (complete) */
        x->fdepth = 0;
        r = validate_selections(x, ft, sub, stack);
        x->fdepth = saved;
        return r;
}

/* Fragments nested deeper than execution follows them (collect): refused, rather than their
 * fields silently left out. */
static int too_deep(GqlExec *x, const json_t *sel)
{
        return verror(x, sel, NULL, "Fragments nest deeper than %d in one selection set",
                      GQL_DEPTH_MAX);
}

static int validate_selections(GqlExec *x, const GqlType *t, json_t *sels, json_t *stack)
{
        size_t i;
        json_t *sel;
        int r;
        size_t max = x->s->max_nodes ? x->s->max_nodes : GQL_NODES_MAX;
        json_array_foreach (sels, i, sel) {
                if (++x->nodes > max)
                        return verror(x, sel, NULL,
                                      "This query selects more than %zu fields; ask for less", max);
                size_t before = json_array_size(x->errors);
                if (json_object_get(sel, "field")) {
                        r = validate_field(x, t, sel, stack);
                } else if (json_object_get(sel, "inline")) {
                        const char *on = json_get_str(sel, "on");
                        const GqlType *ct = on ? find_type(x->s, on) : t;
                        if (!ct || !composite(ct))
                                r = verror(x, sel,
                                           json_pack("{s:s, s:s}", "code", "undefinedType",
                                                     "typeName", strempty(on)),
                                           "No such type %s, so it can't be a fragment condition",
                                           strempty(on));
                        else if (x->fdepth >= GQL_DEPTH_MAX)
                                r = too_deep(x, sel);
                        else {
                                x->fdepth++;
                                r = validate_selections(x, ct, json_object_get(sel, "selections"),
                                                        stack);
                                x->fdepth--;
                        }
                } else {
                        const char *name = json_get_str(sel, "spread");
                        json_t *frag = json_object_get(x->fragments, name);
                        const GqlType *ct = frag ? find_type(x->s, json_get_str(frag, "on")) : NULL;
                        bool loop = false;
                        size_t j;
                        json_t *s;
                        json_array_foreach (stack, j, s) {
                                loop |= streq(json_string_value(s), name);
                        }
                        if (!frag)
                                r = verror(x, sel,
                                           json_pack("{s:s, s:s}", "code", "undefinedFragment",
                                                     "fragmentName", name),
                                           "Fragment %s was used, but not defined", name);
                        else if (!ct || !composite(ct))
                                r = verror(x, sel, NULL,
                                           "No such type %s, so it can't be a fragment condition",
                                           json_get_str(frag, "on"));
                        else if (loop)
                                r = verror(x, sel,
                                           json_pack("{s:s, s:s}", "code", "infiniteLoop",
                                                     "fragmentName", name),
                                           "Fragment %s contains an infinite loop", name);
                        else if (x->fdepth >= GQL_DEPTH_MAX)
                                r = too_deep(x, sel);
                        else {
                                if (json_array_append_new(stack, json_string(name)) < 0)
                                        return -ENOMEM;
                                x->fdepth++;
                                r = validate_selections(x, ct, json_object_get(frag, "selections"),
                                                        stack);
                                x->fdepth--;
                                json_array_remove(stack, json_array_size(stack) - 1);
                        }
                }
                if (r < 0)
                        return r;
                if (x->nodes > max && json_array_size(x->errors) > before)
                        return 0;
        }
        return 0;
}

/* ------------------------------------------------------------------ execution (§6) */

static bool included(GqlExec *x, const json_t *sel)
{
        size_t i;
        json_t *d;
        json_array_foreach (json_object_get(sel, "directives"), i, d) {
                const char *n = json_get_str(d, "name");
                _cleanup_json_ json_t *args = substitute(x, json_object_get(d, "arguments"));
                bool v = json_is_true(json_object_get(args, "if"));
                if (streq_ptr(n, "skip") && v)
                        return false;
                if (streq_ptr(n, "include") && !v)
                        return false;
        }
        return true;
}

/* CollectFields (§6.3.2): response key → [field selections], in order, into groups. */
static int collect(GqlExec *x, const GqlType *t, json_t *sels, json_t *groups, int depth)
{
        if (depth > GQL_DEPTH_MAX)
                return 0;
        size_t i;
        json_t *sel;
        json_array_foreach (sels, i, sel) {
                if (!included(x, sel))
                        continue;
                const char *name = json_get_str(sel, "field");
                if (name) {
                        const char *key = json_get_str(sel, "alias");
                        key = key ? key : name;
                        json_t *g = json_object_get(groups, key);
                        if (!g) {
                                g = json_array();
                                if (json_object_set_new(groups, key, g) < 0)
                                        return -ENOMEM;
                        }
                        if (json_array_append(g, sel) < 0)
                                return -ENOMEM;
                        continue;
                }
                json_t *inner;
                const char *on;
                if (json_object_get(sel, "inline")) {
                        inner = json_object_get(sel, "selections");
                        on = json_get_str(sel, "on");
                } else {
                        json_t *frag = json_object_get(x->fragments, json_get_str(sel, "spread"));
                        inner = json_object_get(frag, "selections");
                        on = json_get_str(frag, "on");
                }
                const GqlType *ct = on ? find_type(x->s, on) : t;
                if (!ct || !type_applies(ct, t))
                        continue;
                int r = collect(x, t, inner, groups, depth + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int exec_selections(GqlExec *x, const GqlType *t, json_t *source, json_t *fields,
                           json_t **ret);

/*
 * CompleteValue (§6.4.3) of v (taken) for type text and the field nodes (their selections
 * merged). 0 with *ret (new; JSON null allowed), 1 a null where the type is non-null (an error
 * added; the parent becomes null), -ENOMEM.
 */
static int complete(GqlExec *x, const char *field_name, const GqlType *parent, const char *text,
                    json_t *fields, json_t *v, json_t **ret)
{
        _cleanup_json_ json_t *val = v;
        size_t tl = strlen(text);
        if (tl > 0 && text[tl - 1] == '!') {
                char inner[128];
                snprintf(inner, sizeof(inner), "%.*s", (int)(tl - 1), text);
                int r = complete(x, field_name, parent, inner, fields, TAKE_PTR(val), ret);
                if (r != 0)
                        return r;
                if (json_is_null(*ret)) {
                        json_decref(*ret);
                        *ret = NULL;
                        r = gql_error(x, NULL, "Cannot return null for non-nullable field %s.%s",
                                      parent->name, field_name);
                        return r < 0 ? r : 1;
                }
                return 0;
        }
        if (!val || json_is_null(val)) {
                *ret = json_null();
                return 0;
        }
        if (text[0] == '[') {
                char elem[128];
                snprintf(elem, sizeof(elem), "%.*s", (int)(tl >= 2 ? tl - 2 : 0), text + 1);
                if (!json_is_array(val)) {
                        *ret = json_null();
                        return gql_error(x, NULL, "The twin answered %s.%s with a non-list",
                                         parent->name, field_name);
                }
                _cleanup_json_ json_t *out = json_array();
                if (!out)
                        return -ENOMEM;
                size_t i;
                json_t *e;
                json_array_foreach (val, i, e) {
                        if (json_array_append_new(x->path, json_integer((json_int_t)i)) < 0)
                                return -ENOMEM;
                        json_t *c = NULL;
                        int r = complete(x, field_name, parent, elem, fields, json_incref(e), &c);
                        json_array_remove(x->path, json_array_size(x->path) - 1);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                *ret = json_null();
                                return 0;
                        }
                        if (json_array_append_new(out, c) < 0)
                                return -ENOMEM;
                }
                *ret = TAKE_PTR(out);
                return 0;
        }
        char buf[128];
        const GqlType *t = find_type(x->s, named(text, buf));
        if (!t || !composite(t)) {
                *ret = TAKE_PTR(val);
                return 0;
        }
        const GqlType *concrete = t;
        const char *tn = json_get_str(val, "__typename");
        if (tn)
                concrete = find_type(x->s, tn);
        if (!concrete || concrete->kind != GQL_OBJECT || !type_applies(t, concrete)) {
                *ret = json_null();
                return gql_error(x, NULL, "The twin resolved %s.%s to a value that is not a %s",
                                 parent->name, field_name, t->name);
        }
        _cleanup_json_ json_t *groups = json_object();
        if (!groups)
                return -ENOMEM;
        size_t i;
        json_t *f;
        json_array_foreach (fields, i, f) {
                int r = collect(x, concrete, json_object_get(f, "selections"), groups, 0);
                if (r < 0)
                        return r;
        }
        return exec_selections(x, concrete, val, groups, ret);
}

/* ExecuteSelectionSet (§6.3) of the collected groups on source of object type t: 0 with *ret,
 * 1 a non-null field was null (the object is null), -ENOMEM. */
static int exec_selections(GqlExec *x, const GqlType *t, json_t *source, json_t *groups,
                           json_t **ret)
{
        _cleanup_json_ json_t *out = json_object();
        if (!out)
                return -ENOMEM;
        const char *key;
        json_t *g;
        json_object_foreach (groups, key, g) {
                json_t *sel = json_array_get(g, 0);
                const char *name = json_get_str(sel, "field");
                const GqlField *f = find_field(x, t, name);
                if (!f)
                        continue; /* validated: cannot happen */
                if (json_array_append_new(x->path, json_string(key)) < 0)
                        return -ENOMEM;
                const json_t *saved = x->field;
                x->field = sel;
                json_t *v = NULL;
                int r = 0;
                _cleanup_json_ json_t *args = json_object();
                if (!args)
                        return -ENOMEM;
                const char *an;
                json_t *av;
                json_object_foreach (json_object_get(sel, "arguments"), an, av) {
                        char buf[128], err[200];
                        _cleanup_json_ json_t *sub = substitute(x, av), *c = NULL;
                        if (!sub && is_variable(av))
                                continue; /* a variable not given: as if absent */
                        arg_type(f->args, an, buf);
                        r = coerce(x, buf, sub, &c, err, sizeof(err));
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                r = gql_error(
                                        x, "INVALID_ARGUMENT",
                                        "Argument '%s' on Field '%s' has an invalid value: %s", an,
                                        name, err);
                                if (r < 0)
                                        return r;
                                r = 2;
                                break;
                        }
                        if (json_object_set(args, an, c) < 0)
                                return -ENOMEM;
                }
                if (r == 2)
                        r = 0; /* v stays NULL: the field is null */
                else if (streq(name, "__typename"))
                        v = json_string(t->name);
                else if (f->resolve)
                        r = f->resolve(x, source, args, &v);
                else if (f == &meta_fields[2])
                        v = json_pack("{s:s}", "__typename", "__Schema");
                else if (f == &meta_fields[1]) {
                        const char *tn = json_get_str(args, "name");
                        v = find_type(x->s, tn) ? json_pack("{s:s}", "name", tn) : NULL;
                } else
                        v = json_incref(json_object_get(source, name));
                if (r < 0) {
                        json_decref(v);
                        return r;
                }
                json_t *c = NULL;
                r = complete(x, name, t, f->type, g, v, &c);
                x->field = saved;
                json_array_remove(x->path, json_array_size(x->path) - 1);
                if (r != 0)
                        return r;
                if (json_object_set_new(out, key, c) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/* ------------------------------------------------------------------ introspection (§4) */

static int type_ref(GqlExec *x, const char *text, json_t **ret)
{
        size_t tl = strlen(text);
        char inner[128];
        if (tl > 0 && text[tl - 1] == '!') {
                snprintf(inner, sizeof(inner), "%.*s", (int)(tl - 1), text);
                json_t *of;
                if (type_ref(x, inner, &of) < 0)
                        return -ENOMEM;
                *ret = json_pack("{s:s, s:o}", "kind", "NON_NULL", "ofType", of);
        } else if (text[0] == '[') {
                snprintf(inner, sizeof(inner), "%.*s", (int)(tl >= 2 ? tl - 2 : 0), text + 1);
                json_t *of;
                if (type_ref(x, inner, &of) < 0)
                        return -ENOMEM;
                *ret = json_pack("{s:s, s:o}", "kind", "LIST", "ofType", of);
        } else
                *ret = json_pack("{s:s}", "name", text);
        return *ret ? 0 : -ENOMEM;
}

static const GqlType *source_type(GqlExec *x, json_t *source)
{
        return find_type(x->s, json_get_str(source, "name"));
}

static int r_type_kind(GqlExec *x, json_t *source, json_t *args _unused_, json_t **ret)
{
        static const char *const kinds[] = {"SCALAR", "OBJECT", "INTERFACE",
                                            "UNION",  "ENUM",   "INPUT_OBJECT"};
        const char *k = json_get_str(source, "kind");
        const GqlType *t = source_type(x, source);
        *ret = json_string(k ? k : t ? kinds[t->kind] : "SCALAR");
        return *ret ? 0 : -ENOMEM;
}

/* "a: T, b: U" as [__InputValue] sources. */
static json_t *input_values(const char *list)
{
        json_t *a = json_array();
        for (const char *p = list; a && p && *p;) {
                p += strspn(p, " ,");
                size_t kl = strcspn(p, ":");
                if (!p[kl])
                        break;
                const char *tt = p + kl + 1 + strspn(p + kl + 1, " ");
                size_t tl = strcspn(tt, ",");
                while (tl > 0 && tt[tl - 1] == ' ')
                        tl--;
                _cleanup_free_ char *n = strndup(p, kl), *t = strndup(tt, tl);
                if (!n || !t ||
                    json_array_append_new(a, json_pack("{s:s, s:s, s:n}", "name", n, "typeText", t,
                                                       "defaultValue")) < 0) {
                        json_decref(a);
                        return NULL;
                }
                p = tt + tl;
        }
        return a;
}

static int r_type_fields(GqlExec *x, json_t *source, json_t *args _unused_, json_t **ret)
{
        const GqlType *t = source_type(x, source);
        *ret = NULL;
        if (!t || (t->kind != GQL_OBJECT && t->kind != GQL_INTERFACE))
                return 0;
        _cleanup_json_ json_t *a = json_array();
        for (size_t i = 0; a && i < t->n_fields; i++) {
                json_t *ia = input_values(t->fields[i].args);
                if (!ia || json_array_append_new(a, json_pack("{s:s, s:s, s:o}", "name",
                                                              t->fields[i].name, "typeText",
                                                              t->fields[i].type, "args", ia)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return *ret ? 0 : -ENOMEM;
}

static int r_type_input_fields(GqlExec *x, json_t *source, json_t *args _unused_, json_t **ret)
{
        const GqlType *t = source_type(x, source);
        *ret = NULL;
        if (!t || t->kind != GQL_INPUT_OBJECT)
                return 0;
        _cleanup_json_ json_t *a = json_array();
        for (size_t i = 0; a && i < t->n_fields; i++)
                if (json_array_append_new(a, json_pack("{s:s, s:s, s:n}", "name", t->fields[i].name,
                                                       "typeText", t->fields[i].type,
                                                       "defaultValue")) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(a);
        return *ret ? 0 : -ENOMEM;
}

/* The words of list as [{"name": w}] sources, or NULL (JSON null) unless applies. */
static int name_list(const char *list, bool applies, json_t **ret)
{
        *ret = NULL;
        if (!applies)
                return 0;
        _cleanup_json_ json_t *a = json_array();
        for (const char *p = list; a && p && *p;) {
                p += strspn(p, " ");
                size_t k = strcspn(p, " ");
                if (k == 0)
                        break;
                json_t *n = json_stringn(p, k);
                if (json_array_append_new(a, json_pack("{s:o}", "name", n)) < 0)
                        return -ENOMEM;
                p += k;
        }
        *ret = TAKE_PTR(a);
        return *ret ? 0 : -ENOMEM;
}

static int r_type_interfaces(GqlExec *x, json_t *source, json_t *args _unused_, json_t **ret)
{
        const GqlType *t = source_type(x, source);
        return name_list(t ? t->also : NULL, t && t->kind == GQL_OBJECT, ret);
}

static int r_type_possible(GqlExec *x, json_t *source, json_t *args _unused_, json_t **ret)
{
        const GqlType *t = source_type(x, source);
        if (t && t->kind == GQL_INTERFACE) {
                _cleanup_json_ json_t *a = json_array();
                for (size_t i = 0; a && i < x->s->n_types; i++)
                        if (&x->s->types[i] != t && type_applies(t, &x->s->types[i]) &&
                            json_array_append_new(
                                    a, json_pack("{s:s}", "name", x->s->types[i].name)) < 0)
                                return -ENOMEM;
                *ret = TAKE_PTR(a);
                return *ret ? 0 : -ENOMEM;
        }
        return name_list(t ? t->also : NULL, t && t->kind == GQL_UNION, ret);
}

static int r_type_enum_values(GqlExec *x, json_t *source, json_t *args _unused_, json_t **ret)
{
        const GqlType *t = source_type(x, source);
        int r = name_list(t ? t->also : NULL, t && t->kind == GQL_ENUM, ret);
        size_t i;
        json_t *v;
        json_array_foreach (*ret, i, v) {
                if (json_object_set_new(v, "isDeprecated", json_false()) < 0)
                        return -ENOMEM;
        }
        return r;
}

static int r_type_of(GqlExec *x _unused_, json_t *source, json_t *args _unused_, json_t **ret)
{
        *ret = json_incref(json_object_get(source, "ofType"));
        return 0;
}

static int r_type_name(GqlExec *x _unused_, json_t *source, json_t *args _unused_, json_t **ret)
{
        *ret = json_object_get(source, "kind") ? NULL
                                               : json_incref(json_object_get(source, "name"));
        return 0;
}

static int r_typed(GqlExec *x, json_t *source, json_t *args _unused_, json_t **ret)
{
        return type_ref(x, json_get_str(source, "typeText"), ret);
}

static int r_false(GqlExec *x _unused_, json_t *source _unused_, json_t *args _unused_,
                   json_t **ret)
{
        *ret = json_false();
        return 0;
}

static int r_schema_types(GqlExec *x, json_t *source _unused_, json_t *args _unused_, json_t **ret)
{
        _cleanup_json_ json_t *a = json_array();
        for (size_t i = 0; a && i < ELEMENTSOF(builtin_scalars); i++)
                if (json_array_append_new(a, json_pack("{s:s}", "name", builtin_scalars[i].name)) <
                    0)
                        return -ENOMEM;
        for (size_t i = 0; a && i < x->s->n_types; i++)
                if (json_array_append_new(a, json_pack("{s:s}", "name", x->s->types[i].name)) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(a);
        return *ret ? 0 : -ENOMEM;
}

static int r_schema_query(GqlExec *x, json_t *source _unused_, json_t *args _unused_, json_t **ret)
{
        *ret = json_pack("{s:s}", "name", x->s->query);
        return *ret ? 0 : -ENOMEM;
}

static int r_schema_mutation(GqlExec *x, json_t *source _unused_, json_t *args _unused_,
                             json_t **ret)
{
        *ret = x->s->mutation ? json_pack("{s:s}", "name", x->s->mutation) : NULL;
        return 0;
}

static int r_schema_directives(GqlExec *x _unused_, json_t *source _unused_, json_t *args _unused_,
                               json_t **ret)
{
        *ret = json_pack("[{s:s, s:[sss], s:[{s:s, s:s, s:n}], s:b}, "
                         "{s:s, s:[sss], s:[{s:s, s:s, s:n}], s:b}]",
                         "name", "include", "locations", "FIELD", "FRAGMENT_SPREAD",
                         "INLINE_FRAGMENT", "args", "name", "if", "typeText", "Boolean!",
                         "defaultValue", "isRepeatable", 0, "name", "skip", "locations", "FIELD",
                         "FRAGMENT_SPREAD", "INLINE_FRAGMENT", "args", "name", "if", "typeText",
                         "Boolean!", "defaultValue", "isRepeatable", 0);
        return *ret ? 0 : -ENOMEM;
}

static const GqlField schema_fields[] = {
        {"description", "String", NULL, NULL},
        {"types", "[__Type!]!", NULL, r_schema_types},
        {"queryType", "__Type!", NULL, r_schema_query},
        {"mutationType", "__Type", NULL, r_schema_mutation},
        {"subscriptionType", "__Type", NULL, NULL},
        {"directives", "[__Directive!]!", NULL, r_schema_directives},
};

static const GqlField type_fields[] = {
        {"kind", "__TypeKind!", NULL, r_type_kind},
        {"name", "String", NULL, r_type_name},
        {"description", "String", NULL, NULL},
        {"specifiedByURL", "String", NULL, NULL},
        {"fields", "[__Field!]", "includeDeprecated: Boolean", r_type_fields},
        {"interfaces", "[__Type!]", NULL, r_type_interfaces},
        {"possibleTypes", "[__Type!]", NULL, r_type_possible},
        {"enumValues", "[__EnumValue!]", "includeDeprecated: Boolean", r_type_enum_values},
        {"inputFields", "[__InputValue!]", "includeDeprecated: Boolean", r_type_input_fields},
        {"ofType", "__Type", NULL, r_type_of},
};

static const GqlField field_fields[] = {
        {"name", "String!", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"args", "[__InputValue!]!", "includeDeprecated: Boolean", NULL},
        {"type", "__Type!", NULL, r_typed},
        {"isDeprecated", "Boolean!", NULL, r_false},
        {"deprecationReason", "String", NULL, NULL},
};

static const GqlField input_value_fields[] = {
        {"name", "String!", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"type", "__Type!", NULL, r_typed},
        {"defaultValue", "String", NULL, NULL},
        {"isDeprecated", "Boolean!", NULL, r_false},
        {"deprecationReason", "String", NULL, NULL},
};

static const GqlField enum_value_fields[] = {
        {"name", "String!", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"isDeprecated", "Boolean!", NULL, r_false},
        {"deprecationReason", "String", NULL, NULL},
};

static const GqlField directive_fields[] = {
        {"name", "String!", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"locations", "[__DirectiveLocation!]!", NULL, NULL},
        {"args", "[__InputValue!]!", NULL, NULL},
        {"isRepeatable", "Boolean!", NULL, NULL},
};

static const GqlType introspection_types[] = {
        {"__Schema", GQL_OBJECT, NULL, schema_fields, ELEMENTSOF(schema_fields)},
        {"__Type", GQL_OBJECT, NULL, type_fields, ELEMENTSOF(type_fields)},
        {"__Field", GQL_OBJECT, NULL, field_fields, ELEMENTSOF(field_fields)},
        {"__InputValue", GQL_OBJECT, NULL, input_value_fields, ELEMENTSOF(input_value_fields)},
        {"__EnumValue", GQL_OBJECT, NULL, enum_value_fields, ELEMENTSOF(enum_value_fields)},
        {"__Directive", GQL_OBJECT, NULL, directive_fields, ELEMENTSOF(directive_fields)},
        {"__TypeKind", GQL_ENUM, "SCALAR OBJECT INTERFACE UNION ENUM INPUT_OBJECT LIST NON_NULL",
         NULL, 0},
        {"__DirectiveLocation", GQL_ENUM,
         "QUERY MUTATION SUBSCRIPTION FIELD FRAGMENT_DEFINITION FRAGMENT_SPREAD INLINE_FRAGMENT",
         NULL, 0},
};

static const GqlType *introspection_type(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(introspection_types); i++)
                if (streq(introspection_types[i].name, name))
                        return &introspection_types[i];
        return NULL;
}

/* ------------------------------------------------------------------ connections */

int gql_connection(GqlExec *x, json_t *items, json_t *args, json_t **ret)
{
        size_t total = json_array_size(items), lo = 0, hi = total;
        json_t *first = json_object_get(args, "first"), *last = json_object_get(args, "last");
        *ret = NULL;
        if ((first && (json_integer_value(first) < 0 || json_integer_value(first) > 100)) ||
            (last && (json_integer_value(last) < 0 || json_integer_value(last) > 100))) {
                const char *which = first ? "first" : "last";
                return gql_error(x, "EXCESSIVE_PAGINATION",
                                 "Requesting %lld records on the connection exceeds the `%s` "
                                 "limit of 100 records.",
                                 (long long)json_integer_value(first ? first : last), which);
        }
        const char *cursors[] = {json_get_str(args, "after"), json_get_str(args, "before")};
        size_t at[2] = {0, total};
        for (int k = 0; k < 2; k++) {
                if (!cursors[k])
                        continue;
                _cleanup_free_ char *raw = NULL;
                unsigned long long n;
                char tail;
                if (twin_base64_decode(cursors[k], &raw) < 0 ||
                    sscanf(raw, "cursor:v2:%llu%c", &n, &tail) != 1 || n > total)
                        return gql_error(x, NULL, "`%s` does not appear to be a valid cursor.",
                                         cursors[k]);
                at[k] = k == 0 ? (size_t)n : (size_t)n - 1;
        }
        lo = cursors[0] ? at[0] : 0;
        hi = cursors[1] ? at[1] : total;
        if (hi < lo)
                hi = lo;
        if (first && (size_t)json_integer_value(first) < hi - lo)
                hi = lo + (size_t)json_integer_value(first);
        if (last && (size_t)json_integer_value(last) < hi - lo)
                lo = hi - (size_t)json_integer_value(last);
        _cleanup_json_ json_t *nodes = json_array(), *edges = json_array();
        if (!nodes || !edges)
                return -ENOMEM;
        _cleanup_free_ char *start = NULL, *end = NULL;
        for (size_t i = lo; i < hi; i++) {
                char raw[48];
                snprintf(raw, sizeof(raw), "cursor:v2:%zu", i + 1);
                _cleanup_free_ char *cur = twin_base64(raw, strlen(raw));
                json_t *node = json_array_get(items, i);
                if (!cur || json_array_append(nodes, node) < 0 ||
                    json_array_append_new(edges,
                                          json_pack("{s:s, s:O}", "cursor", cur, "node", node)) < 0)
                        return -ENOMEM;
                if (i == lo && !(start = strdup(cur)))
                        return -ENOMEM;
                if (i + 1 == hi && !(end = strdup(cur)))
                        return -ENOMEM;
        }
        *ret = json_pack("{s:O, s:O, s:I, s:{s:b, s:b, s:o, s:o}}", "nodes", nodes, "edges", edges,
                         "totalCount", (json_int_t)total, "pageInfo", "hasNextPage",
                         hi<total, "hasPreviousPage", lo> 0, "startCursor",
                         json_string_or_null(start), "endCursor", json_string_or_null(end));
        return *ret ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ requests */

/* {"errors": [{message, locations?}]}: message may quote the request's bytes (a token cut at
 * 40 bytes), so it is mended into UTF-8 (twin_json_string_lossy). locations NULL (a request
 * that is not a document: no place in one to point at) leaves the member out, as GraphQL's
 * response format (§7.1.2) says: a list, or absent; never null. */
static int request_error(const char *message, json_t *locations, json_t **ret)
{
        *ret = json_pack("{s:[{s:o, s:o*}]}", "errors", "message",
                         twin_json_string_lossy(message, strlen(message)), "locations", locations);
        return *ret ? 0 : -ENOMEM;
}

int gql_execute(const GqlSchema *s, const char *body, size_t len, void *userdata, json_t **ret)
{
        json_error_t jerr;
        _cleanup_json_ json_t *req = json_loadb(body ? body : "", len, 0, &jerr);
        if (!req || !json_is_object(req))
                return request_error("Problems parsing JSON", NULL, ret);
        json_t *q = json_object_get(req, "query"), *vars = json_object_get(req, "variables");
        json_t *opname = json_object_get(req, "operationName");
        if (!json_is_string(q))
                return request_error("A query attribute must be specified and must be a string.",
                                     NULL, ret);
        if (vars && !json_is_object(vars) && !json_is_null(vars))
                return request_error("Variables are invalid JSON.", NULL, ret);
        if (opname && !json_is_string(opname) && !json_is_null(opname))
                return request_error("operationName must be a string", NULL, ret);

        char err[256];
        int line = 0, col = 0;
        _cleanup_json_ json_t *doc = NULL;
        int r = gql_parse(json_string_value(q), json_string_length(q), &doc, err, sizeof(err),
                          &line, &col);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return request_error(err, json_pack("[{s:i, s:i}]", "line", line, "column", col),
                                     ret);

        /* the operation to run (§6.1 "GetOperation") */
        json_t *ops = json_object_get(doc, "operations"), *op = NULL;
        const char *want = json_string_value(opname);
        size_t i;
        json_t *o;
        json_array_foreach (ops, i, o) {
                if (!want ? json_array_size(ops) == 1 : streq_ptr(json_get_str(o, "name"), want))
                        op = o;
        }
        if (!op)
                return request_error(want ? "No operation named the operationName"
                                          : "An operation name is required",
                                     NULL, ret);

        _cleanup_json_ json_t *errors = json_array(), *path = json_array(), *stack = json_array(),
                              *coerced = json_object();
        if (!errors || !path || !stack || !coerced)
                return -ENOMEM;
        GqlExec x = {
                .s = s,
                .userdata = userdata,
                .fragments = json_object_get(doc, "fragments"),
                .vars = coerced,
                .errors = errors,
                .path = path,
                .operation = json_get_str(op, "operation"),
                .declared = json_object_get(op, "variables"),
        };
        const char *root = streq(x.operation, "mutation") ? s->mutation
                           : streq(x.operation, "query")  ? s->query
                                                          : NULL;
        const GqlType *rt = find_type(s, root);
        if (!rt) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "Schema is not configured for %ss", x.operation) < 0)
                        return -ENOMEM;
                return request_error(m, NULL, ret);
        }

        /* variables (§6.1.2 "CoerceVariableValues") */
        json_t *d;
        json_array_foreach (x.declared, i, d) {
                const char *name = json_get_str(d, "name"), *type = json_get_str(d, "type");
                char buf[128];
                const GqlType *vt = find_type(s, named(type, buf));
                if (!vt || composite(vt)) {
                        if ((r = verror(&x, op, NULL, "%s isn't a valid input type (on $%s)", type,
                                        name)) < 0)
                                return r;
                        continue;
                }
                json_t *given = json_object_get(vars, name);
                if (!given)
                        given = json_object_get(d, "default");
                if (!given) {
                        size_t tl = strlen(type);
                        if (type[tl - 1] == '!' &&
                            (r = verror(&x, op,
                                        json_pack("{s:O, s:[], s:s}", "value", json_null(),
                                                  "problems", "code", "variableMismatch"),
                                        "Variable $%s of type %s was provided invalid value", name,
                                        type)) < 0)
                                return r;
                        continue;
                }
                json_t *c;
                r = coerce(&x, type, given, &c, err, sizeof(err));
                if (r < 0)
                        return r;
                if (r > 0) {
                        if ((r = verror(&x, op, NULL,
                                        "Variable $%s of type %s was provided invalid value: %s",
                                        name, type, err)) < 0)
                                return r;
                        continue;
                }
                if (json_object_set_new(coerced, name, c) < 0)
                        return -ENOMEM;
        }
        if ((r = validate_selections(&x, rt, json_object_get(op, "selections"), stack)) < 0)
                return r;
        if (json_array_size(errors) > 0) {
                *ret = json_pack("{s:O}", "errors", errors);
                return *ret ? 0 : -ENOMEM;
        }

        _cleanup_json_ json_t *groups = json_object(), *source = json_object(), *data = NULL;
        if (!groups || !source)
                return -ENOMEM;
        if ((r = collect(&x, rt, json_object_get(op, "selections"), groups, 0)) < 0)
                return r;
        r = exec_selections(&x, rt, source, groups, &data);
        if (r < 0)
                return r;
        *ret = json_pack("{s:o}", "data", data ? data : json_null());
        data = NULL;
        if (!*ret)
                return -ENOMEM;
        if (json_array_size(errors) > 0 && json_object_set(*ret, "errors", errors) < 0)
                return -ENOMEM;
        return 0;
}
