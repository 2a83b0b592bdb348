/* SPDX-License-Identifier: MIT */
/*
 * Gmail's search query language (support.google.com/mail/answer/7190), parsed into a tree
 * and matched against world messages.
 *
 * Grammar, as Gmail reads it:
 *   query   := and
 *   and     := or+                        juxtaposition ("AND" is allowed and skipped)
 *   or      := unary (("OR" | "|") unary)*  OR binds tighter than AND: "a b OR c" is
 *                                           a AND (b OR c), as in Gmail and Google search
 *   unary   := "-" unary | primary
 *   primary := "(" and ")" | "{" or-list "}" | op ":" value | word | "quoted phrase"
 *   value   := word | "quoted phrase" | "(" and ")" | "{" … "}"  (the group's bare words
 *                                           take the operator: subject:(a b))
 * An unknown "x:y" is an ordinary word. Matching of words is case-insensitive, at word
 * starts ("meet" finds "Meeting", not "comeet").
 *
 * Bounded: the query is at most QUERY_MAX bytes, nests at most DEPTH_MAX deep.
 */
#include <ctype.h>
#include <stdarg.h>
#include <strings.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/gmail/mime.h"
#include "pods/gmail/query.h"

#define QUERY_MAX 4096
#define DEPTH_MAX 32
#define NODES_MAX 1024

typedef enum NodeKind {
        NODE_AND,
        NODE_OR,
        NODE_NOT,
        NODE_TERM,
} NodeKind;

typedef enum Op {
        OP_TEXT, /* a bare word or phrase */
        OP_FROM,
        OP_TO,
        OP_CC,
        OP_BCC,
        OP_SUBJECT,
        OP_LABEL,
        OP_IN,
        OP_IS,
        OP_HAS,
        OP_FILENAME,
        OP_AFTER,      /* internalDate >= num (seconds) */
        OP_BEFORE,     /* internalDate < num */
        OP_OLDER_THAN, /* num: seconds of age */
        OP_NEWER_THAN,
        OP_LARGER, /* num: bytes */
        OP_SMALLER,
        OP_CATEGORY,
        OP_DELIVEREDTO,
        OP_LIST,
        OP_RFC822MSGID,
        _OP_MAX,
} Op;

static const char *const op_names[_OP_MAX] = {
        [OP_TEXT] = "",
        [OP_FROM] = "from",
        [OP_TO] = "to",
        [OP_CC] = "cc",
        [OP_BCC] = "bcc",
        [OP_SUBJECT] = "subject",
        [OP_LABEL] = "label",
        [OP_IN] = "in",
        [OP_IS] = "is",
        [OP_HAS] = "has",
        [OP_FILENAME] = "filename",
        [OP_AFTER] = "after",
        [OP_BEFORE] = "before",
        [OP_OLDER_THAN] = "older_than",
        [OP_NEWER_THAN] = "newer_than",
        [OP_LARGER] = "larger",
        [OP_SMALLER] = "smaller",
        [OP_CATEGORY] = "category",
        [OP_DELIVEREDTO] = "deliveredto",
        [OP_LIST] = "list",
        [OP_RFC822MSGID] = "rfc822msgid",
};

typedef struct Node Node;
struct Node {
        NodeKind kind;
        Op op;
        char *value; /* lowercased, whitespace runs one space */
        int64_t num;
        Node **kids;
        size_t n;
};

struct GmailQuery {
        Node *root;
};

static Node *node_free(Node *n)
{
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n; i++)
                node_free(n->kids[i]);
        free(n->kids);
        free(n->value);
        free(n);
        return NULL;
}

static void node_freep(Node **n)
{
        node_free(*n);
}
#define _cleanup_node_ _cleanup_(node_freep)

GmailQuery *gmail_query_free(GmailQuery *q)
{
        if (q) {
                node_free(q->root);
                free(q);
        }
        return NULL;
}

/* ---------------------------------------------------------------- folding text */

/*
 * A simple lowercase of the code point: ASCII, Latin-1, Latin Extended-A, Greek and
 * Cyrillic capitals (what mail in those scripts needs for case-insensitive search),
 * everything else as it is.
 */
static uint32_t cp_lower(uint32_t c)
{
        if (c >= 'A' && c <= 'Z')
                return c + 32;
        if (c < 0x80)
                return c;
        if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3AB && c != 0x3A2) ||
            (c >= 0x410 && c <= 0x42F))
                return c + 32;
        if (c >= 0x400 && c <= 0x40F)
                return c + 80;
        if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x138 && c != 0x149 && c != 0x17F) {
                bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
                if (odd_upper ? (c & 1) : !(c & 1))
                        return c + 1;
        }
        return c;
}

static uint32_t utf8_decode(const char *s, size_t l)
{
        const unsigned char *u = (const unsigned char *)s;
        switch (l) {
        case 1:
                return u[0];
        case 2:
                return (uint32_t)(u[0] & 0x1F) << 6 | (u[1] & 0x3F);
        case 3:
                return (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F);
        default:
                return (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3F) << 12 |
                       (uint32_t)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
        }
}

static size_t utf8_encode(uint32_t c, char *o)
{
        if (c < 0x80) {
                o[0] = (char)c;
                return 1;
        }
        if (c < 0x800) {
                o[0] = (char)(0xC0 | c >> 6);
                o[1] = (char)(0x80 | (c & 0x3F));
                return 2;
        }
        if (c < 0x10000) {
                o[0] = (char)(0xE0 | c >> 12);
                o[1] = (char)(0x80 | (c >> 6 & 0x3F));
                o[2] = (char)(0x80 | (c & 0x3F));
                return 3;
        }
        o[0] = (char)(0xF0 | c >> 18);
        o[1] = (char)(0x80 | (c >> 12 & 0x3F));
        o[2] = (char)(0x80 | (c >> 6 & 0x3F));
        o[3] = (char)(0x80 | (c & 0x3F));
        return 4;
}

/*
 * n bytes of text folded for matching: valid UTF-8 (malformed bytes dropped), lowercased,
 * whitespace runs one space, trimmed. A new string, NULL on OOM.
 */
static char *fold(const char *s, size_t n)
{
        if (n > (SIZE_MAX - 1) / 2)
                return NULL;
        char *o = malloc(n * 2 + 1); /* a lowercase is at most one byte longer per 2 */
        if (!o)
                return NULL;
        size_t k = 0;
        bool space = false;
        for (size_t i = 0; i < n;) {
                size_t l = utf8_char_len(s + i, n - i);
                if (l == 0) {
                        i++;
                        continue;
                }
                uint32_t c = utf8_decode(s + i, l);
                i += l;
                if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v' ||
                    c == 0xA0) {
                        space = k > 0;
                        continue;
                }
                if (space) {
                        o[k++] = ' ';
                        space = false;
                }
                k += utf8_encode(cp_lower(c), o + k);
        }
        o[k] = 0;
        return o;
}

/* Whether the byte before position i of h starts a new word there: h's start, or after a
 * byte that is not a letter or digit (any non-ASCII byte counts as a letter). */
static bool word_start(const char *h, size_t i)
{
        if (i == 0)
                return true;
        unsigned char c = (unsigned char)h[i - 1];
        return !(isalnum(c) || c >= 0x80);
}

/* Whether needle (folded) occurs in hay (folded) at a word start. An empty needle matches. */
static bool match_words(const char *hay, const char *needle)
{
        if (!needle[0])
                return true;
        if (!hay)
                return false;
        /* a needle that starts with a non-word byte ("@example.com") needs no word start */
        bool anywhere = word_start(needle, 1);
        for (const char *p = hay; (p = strstr(p, needle)); p++)
                if (anywhere || word_start(hay, (size_t)(p - hay)))
                        return true;
        return false;
}

/* ---------------------------------------------------------------- tokens */

typedef enum TokKind {
        TOK_END,
        TOK_LPAREN,
        TOK_RPAREN,
        TOK_LBRACE,
        TOK_RBRACE,
        TOK_OR,
        TOK_AND,
        TOK_MINUS, /* a '-' directly before a term, group or operator */
        TOK_WORD,  /* a word, maybe "op:" followed by its value */
        TOK_PHRASE,
} TokKind;

typedef struct Parser {
        const char *s;
        size_t n, i;
        TokKind kind;
        char *text; /* TOK_WORD / TOK_PHRASE: the text (a phrase's quotes removed) */
        unsigned depth;
        size_t nodes;
        char *err;
        size_t errlen;
} Parser;

static int fail(Parser *p, const char *fmt, ...) _printf_(2, 3);
static int fail(Parser *p, const char *fmt, ...)
{
        if (p->errlen > 0) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(p->err, p->errlen, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static bool is_break(char c)
{
        return is_space(c) || c == '(' || c == ')' || c == '{' || c == '}' || c == '"' || c == '|';
}

/* Reads the next token into p. */
static int next(Parser *p)
{
        free(p->text);
        p->text = NULL;
again:
        while (p->i < p->n && is_space(p->s[p->i]))
                p->i++;
        if (p->i >= p->n) {
                p->kind = TOK_END;
                return 0;
        }
        char c = p->s[p->i];
        switch (c) {
        case '(':
                p->kind = TOK_LPAREN;
                p->i++;
                return 0;
        case ')':
                p->kind = TOK_RPAREN;
                p->i++;
                return 0;
        case '{':
                p->kind = TOK_LBRACE;
                p->i++;
                return 0;
        case '}':
                p->kind = TOK_RBRACE;
                p->i++;
                return 0;
        case '|':
                p->kind = TOK_OR;
                p->i++;
                return 0;
        case '"': {
                size_t b = ++p->i;
                while (p->i < p->n && p->s[p->i] != '"')
                        p->i++;
                if (p->i >= p->n)
                        return fail(p, "Invalid query: unterminated quoted phrase");
                p->text = strndup(p->s + b, p->i - b);
                p->i++;
                p->kind = TOK_PHRASE;
                return p->text ? 0 : -ENOMEM;
        }
        case '-':
                if (p->i + 1 < p->n && !is_space(p->s[p->i + 1]) && p->s[p->i + 1] != ')' &&
                    p->s[p->i + 1] != '}' && p->s[p->i + 1] != '|') {
                        p->kind = TOK_MINUS;
                        p->i++;
                        return 0;
                }
                break;
        default:
                break;
        }
        size_t b = p->i;
        while (p->i < p->n && !is_break(p->s[p->i]))
                p->i++;
        if (p->i == b) { /* a lone '-' */
                p->i++;
                goto again;
        }
        p->text = strndup(p->s + b, p->i - b);
        if (!p->text)
                return -ENOMEM;
        if (streq(p->text, "OR")) {
                p->kind = TOK_OR;
                return 0;
        }
        if (streq(p->text, "AND")) {
                p->kind = TOK_AND;
                return 0;
        }
        p->kind = TOK_WORD;
        return 0;
}

/* ---------------------------------------------------------------- values */

static bool digits(const char *s, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        return true;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
        y -= m <= 2;
        const int64_t era = (y >= 0 ? y : y - 399) / 400;
        const unsigned yoe = (unsigned)(y - era * 400);
        const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + (int64_t)doe - 719468;
}

/* "YYYY/MM/DD", "YYYY-MM-DD" (UTC midnight; Gmail's own zone is the account's) or seconds
 * since the epoch. */
static int parse_date(const char *v, int64_t *ret)
{
        size_t n = strlen(v);
        if (digits(v, n) && n <= 12) {
                *ret = strtoll(v, NULL, 10);
                return 0;
        }
        unsigned y = 0, m = 0, d = 0;
        char s1, s2;
        int k = 0;
        if (sscanf(v, "%4u%c%2u%c%2u%n", &y, &s1, &m, &s2, &d, &k) != 5 || (size_t)k != n ||
            s1 != s2 || (s1 != '/' && s1 != '-') || !isdigit((unsigned char)v[0]) || m < 1 ||
            m > 12 || d < 1 || d > 31 || y < 1970)
                return -EINVAL;
        *ret = days_from_civil(y, m, d) * 86400;
        return 0;
}

/* "Nd", "Nm", "Ny" (days; months of 30 days, years of 365) into seconds. */
static int parse_age(const char *v, int64_t *ret)
{
        size_t n = strlen(v);
        if (n < 2 || n > 8 || !digits(v, n - 1))
                return -EINVAL;
        int64_t k = strtoll(v, NULL, 10), unit;
        switch (tolower((unsigned char)v[n - 1])) {
        case 'd':
                unit = 86400;
                break;
        case 'm':
                unit = 30 * 86400;
                break;
        case 'y':
                unit = 365 * 86400;
                break;
        default:
                return -EINVAL;
        }
        *ret = k * unit;
        return 0;
}

/* Bytes, or with K or M (and G) of 1024s; "10MB" too. */
static int parse_size(const char *v, int64_t *ret)
{
        size_t n = strlen(v), i = 0;
        while (i < n && v[i] >= '0' && v[i] <= '9')
                i++;
        if (i == 0 || i > 12)
                return -EINVAL;
        int64_t k = strtoll(v, NULL, 10), mul = 1;
        const char *u = v + i;
        if (!*u || strcasecmp(u, "b") == 0)
                mul = 1;
        else if (strcasecmp(u, "k") == 0 || strcasecmp(u, "kb") == 0)
                mul = 1024;
        else if (strcasecmp(u, "m") == 0 || strcasecmp(u, "mb") == 0)
                mul = 1024 * 1024;
        else if (strcasecmp(u, "g") == 0 || strcasecmp(u, "gb") == 0)
                mul = 1024 * 1024 * 1024;
        else
                return -EINVAL;
        *ret = k * mul;
        return 0;
}

/* ---------------------------------------------------------------- the tree */

static int node_new(Parser *p, NodeKind kind, Node **ret)
{
        if (++p->nodes > NODES_MAX)
                return fail(p, "Invalid query: too many terms");
        Node *n = calloc(1, sizeof(Node));
        if (!n)
                return -ENOMEM;
        n->kind = kind;
        *ret = n;
        return 0;
}

static int node_add(Node *parent, Node *kid)
{
        Node **k = realloc(parent->kids, (parent->n + 1) * sizeof(Node *));
        if (!k) {
                node_free(kid);
                return -ENOMEM;
        }
        parent->kids = k;
        parent->kids[parent->n++] = kid;
        return 0;
}

/* A term node of op with value v (raw text); op's value checked and converted. */
static int term_new(Parser *p, Op op, const char *v, Node **ret)
{
        _cleanup_node_ Node *t = NULL;
        int r = node_new(p, NODE_TERM, &t);
        if (r < 0)
                return r;
        t->op = op;
        if (op == OP_TEXT && v[0] == '+' && v[1]) /* Gmail's "+word": the word exactly */
                v++;
        t->value = fold(v, strlen(v));
        if (!t->value)
                return -ENOMEM;
        if (op == OP_AFTER || op == OP_BEFORE) {
                if (parse_date(v, &t->num) < 0)
                        return fail(p,
                                    "Invalid query: %s:%s is not a date (YYYY/MM/DD, YYYY-MM-DD "
                                    "or seconds since the epoch)",
                                    op_names[op], v);
        } else if (op == OP_OLDER_THAN || op == OP_NEWER_THAN) {
                if (parse_age(v, &t->num) < 0)
                        return fail(p, "Invalid query: %s:%s is not an age (Nd, Nm or Ny)",
                                    op_names[op], v);
        } else if (op == OP_LARGER || op == OP_SMALLER) {
                if (parse_size(v, &t->num) < 0)
                        return fail(p, "Invalid query: %s:%s is not a size (bytes, or with K or M)",
                                    op_names[op], v);
        } else if (op == OP_LABEL || op == OP_IN || op == OP_CATEGORY) {
                /* label names: '-', '_', '/' and spaces are one and the same */
                for (char *c = t->value; *c; c++)
                        if (*c == ' ' || *c == '_' || *c == '/')
                                *c = '-';
        }
        *ret = TAKE_PTR(t);
        return 0;
}

/* The operator named by the n bytes at s (case-insensitive; older: and newer: are before:
 * and after:), or -1. */
static int op_lookup(const char *s, size_t n)
{
        if (n == 5 && strncasecmp(s, "older", 5) == 0)
                return OP_BEFORE;
        if (n == 5 && strncasecmp(s, "newer", 5) == 0)
                return OP_AFTER;
        if (n == 4 && strncasecmp(s, "size", 4) == 0)
                return OP_LARGER;
        for (int o = 1; o < _OP_MAX; o++)
                if (strlen(op_names[o]) == n && strncasecmp(s, op_names[o], n) == 0)
                        return o;
        return -1;
}

static int parse_and(Parser *p, Op field, TokKind close, Node **ret);

static int parse_unary(Parser *p, Op field, Node **ret);

/* "{a b c}": the OR of its terms (p at the token after '{'). */
static int parse_braces(Parser *p, Op field, Node **ret)
{
        _cleanup_node_ Node *n = NULL;
        int r = node_new(p, NODE_OR, &n);
        if (r < 0)
                return r;
        while (p->kind != TOK_RBRACE) {
                if (p->kind == TOK_END)
                        return fail(p, "Invalid query: unbalanced braces");
                if (p->kind == TOK_OR || p->kind == TOK_AND) {
                        if ((r = next(p)) < 0)
                                return r;
                        continue;
                }
                Node *k = NULL;
                if ((r = parse_unary(p, field, &k)) < 0 || (r = node_add(n, k)) < 0)
                        return r;
        }
        if ((r = next(p)) < 0)
                return r;
        *ret = TAKE_PTR(n);
        return 0;
}

static int parse_primary(Parser *p, Op field, Node **ret)
{
        _cleanup_node_ Node *n = NULL;
        int r;
        if (++p->depth > DEPTH_MAX)
                return fail(p, "Invalid query: nested too deeply");
        switch (p->kind) {
        case TOK_LPAREN:
                if ((r = next(p)) < 0 || (r = parse_and(p, field, TOK_RPAREN, &n)) < 0)
                        return r;
                if (p->kind != TOK_RPAREN)
                        return fail(p, "Invalid query: unbalanced parentheses");
                r = next(p);
                break;
        case TOK_LBRACE:
                r = next(p);
                if (r >= 0)
                        r = parse_braces(p, field, &n);
                break;
        case TOK_PHRASE:
                r = term_new(p, field, p->text, &n);
                if (r >= 0)
                        r = next(p);
                break;
        case TOK_WORD: {
                const char *colon = strchr(p->text, ':');
                int op = colon ? op_lookup(p->text, (size_t)(colon - p->text)) : -1;
                if (op < 0) {
                        r = term_new(p, field, p->text, &n);
                        if (r >= 0)
                                r = next(p);
                        break;
                }
                if (colon[1]) {
                        r = term_new(p, (Op)op, colon + 1, &n);
                        if (r >= 0)
                                r = next(p);
                        break;
                }
                /* "op:" then its value: a phrase, a group or (leniently) the next word */
                _cleanup_free_ char *name = strndup(p->text, (size_t)(colon - p->text));
                if (!name)
                        return -ENOMEM;
                if ((r = next(p)) < 0)
                        return r;
                if (p->kind == TOK_END || p->kind == TOK_RPAREN || p->kind == TOK_RBRACE ||
                    p->kind == TOK_OR || p->kind == TOK_AND)
                        return fail(p, "Invalid query: %s: needs a value", name);
                r = parse_unary(p, (Op)op, &n);
                break;
        }
        case TOK_RPAREN:
                return fail(p, "Invalid query: unbalanced parentheses");
        case TOK_RBRACE:
                return fail(p, "Invalid query: unbalanced braces");
        case TOK_OR:
                return fail(p, "Invalid query: OR needs a term on each side");
        case TOK_AND:
        case TOK_MINUS:
        case TOK_END:
        default:
                return fail(p, "Invalid query: a term is missing");
        }
        if (r < 0)
                return r;
        p->depth--;
        *ret = TAKE_PTR(n);
        return 0;
}

static int parse_unary(Parser *p, Op field, Node **ret)
{
        int r;
        if (p->kind != TOK_MINUS)
                return parse_primary(p, field, ret);
        if (++p->depth > DEPTH_MAX)
                return fail(p, "Invalid query: nested too deeply");
        _cleanup_node_ Node *n = NULL, *k = NULL;
        if ((r = node_new(p, NODE_NOT, &n)) < 0 || (r = next(p)) < 0 ||
            (r = parse_unary(p, field, &k)) < 0 || (r = node_add(n, TAKE_PTR(k))) < 0)
                return r;
        p->depth--;
        *ret = TAKE_PTR(n);
        return 0;
}

/* unary (OR unary)* */
static int parse_or(Parser *p, Op field, Node **ret)
{
        _cleanup_node_ Node *first = NULL, *n = NULL;
        int r = parse_unary(p, field, &first);
        if (r < 0)
                return r;
        while (p->kind == TOK_OR) {
                if (!n) {
                        if ((r = node_new(p, NODE_OR, &n)) < 0 ||
                            (r = node_add(n, TAKE_PTR(first))) < 0)
                                return r;
                }
                if ((r = next(p)) < 0)
                        return r;
                if (p->kind == TOK_END || p->kind == TOK_RPAREN || p->kind == TOK_RBRACE ||
                    p->kind == TOK_OR || p->kind == TOK_AND)
                        return fail(p, "Invalid query: OR needs a term on each side");
                Node *k = NULL;
                if ((r = parse_unary(p, field, &k)) < 0 || (r = node_add(n, k)) < 0)
                        return r;
        }
        *ret = n ? TAKE_PTR(n) : TAKE_PTR(first);
        return 0;
}

/* or+ up to close (TOK_END or TOK_RPAREN, which is left for the caller). */
static int parse_and(Parser *p, Op field, TokKind close, Node **ret)
{
        _cleanup_node_ Node *n = NULL;
        int r = node_new(p, NODE_AND, &n);
        if (r < 0)
                return r;
        while (p->kind != close && p->kind != TOK_END) {
                if (p->kind == TOK_AND) {
                        if ((r = next(p)) < 0)
                                return r;
                        continue;
                }
                if (p->kind == TOK_RPAREN)
                        return fail(p, "Invalid query: unbalanced parentheses");
                Node *k = NULL;
                if ((r = parse_or(p, field, &k)) < 0 || (r = node_add(n, k)) < 0)
                        return r;
        }
        *ret = TAKE_PTR(n);
        return 0;
}

int gmail_query_parse(const char *q, GmailQuery **ret, char *err, size_t errlen)
{
        Parser p = {.s = strempty(q), .n = q ? strlen(q) : 0, .err = err, .errlen = errlen};
        if (errlen > 0)
                err[0] = 0;
        if (p.n > QUERY_MAX)
                return fail(&p, "Invalid query: longer than %d bytes", QUERY_MAX);
        _cleanup_node_ Node *root = NULL;
        int r = next(&p);
        if (r >= 0)
                r = parse_and(&p, OP_TEXT, TOK_END, &root);
        if (r >= 0 && p.kind != TOK_END)
                r = fail(&p, "Invalid query: unbalanced parentheses");
        free(p.text);
        if (r < 0)
                return r;
        GmailQuery *g = calloc(1, sizeof(GmailQuery));
        if (!g)
                return -ENOMEM;
        g->root = TAKE_PTR(root);
        *ret = g;
        return 0;
}

/* ---------------------------------------------------------------- matching */

/* A message's searchable text, folded on first use. */
typedef struct Doc {
        const json_t *m, *labels;
        int64_t now;
        bool done_text, done_names, done_subject, done_hdr[5];
        char *text, *names, *subject, *hdr[5];
} Doc;

static void doc_done(Doc *d)
{
        free(d->text);
        free(d->names);
        free(d->subject);
        for (size_t i = 0; i < ELEMENTSOF(d->hdr); i++)
                free(d->hdr[i]);
}

static const json_t *payload(const Doc *d)
{
        return json_object_get(d->m, "payload");
}

/* The folded value of the header (all of its occurrences, space-separated), or NULL. */
static const char *doc_header(Doc *d, unsigned slot, const char *name)
{
        if (d->done_hdr[slot])
                return d->hdr[slot];
        d->done_hdr[slot] = true;
        const json_t *hs = json_object_get(payload(d), "headers"), *h;
        size_t i, total = 0;
        json_array_foreach (hs, i, h) {
                const char *n = json_get_str(h, "name"), *v = json_get_str(h, "value");
                if (n && v && strcasecmp(n, name) == 0)
                        total += strlen(v) + 1;
        }
        if (total == 0)
                return NULL;
        _cleanup_free_ char *all = malloc(total + 1);
        if (!all)
                return NULL;
        size_t k = 0;
        json_array_foreach (hs, i, h) {
                const char *n = json_get_str(h, "name"), *v = json_get_str(h, "value");
                if (n && v && strcasecmp(n, name) == 0) {
                        size_t l = strlen(v);
                        memcpy(all + k, v, l);
                        k += l;
                        all[k++] = ' ';
                }
        }
        d->hdr[slot] = fold(all, k);
        return d->hdr[slot];
}

/* The attachments' file names, folded, one space between. */
static void names_collect(const json_t *part, char **acc, size_t *len)
{
        const char *fn = json_get_str(part, "filename");
        if (fn && fn[0] && *acc) {
                size_t l = strlen(fn);
                char *a = realloc(*acc, *len + l + 2);
                if (!a) {
                        free(*acc);
                        *acc = NULL;
                        return;
                }
                *acc = a;
                memcpy(a + *len, fn, l);
                *len += l;
                a[(*len)++] = ' ';
                a[*len] = 0;
        }
        const json_t *parts = json_object_get(part, "parts");
        for (size_t i = 0; i < json_array_size(parts); i++)
                names_collect(json_array_get(parts, i), acc, len);
}

static const char *doc_names(Doc *d)
{
        if (!d->done_names) {
                d->done_names = true;
                char *acc = calloc(1, 1);
                size_t len = 0;
                names_collect(payload(d), &acc, &len);
                if (acc) {
                        d->names = fold(acc, len);
                        free(acc);
                }
        }
        return d->names;
}

static const char *doc_subject(Doc *d)
{
        return doc_header(d, 4, "Subject");
}

/* Everything a bare word searches: subject, From/To/Cc, snippet, bodies, file names. */
static const char *doc_text(Doc *d)
{
        if (d->done_text)
                return d->text;
        d->done_text = true;
        _cleanup_free_ char *body = gmail_mime_text(payload(d));
        const char *parts[] = {
                doc_subject(d),         doc_header(d, 0, "From"),      doc_header(d, 1, "To"),
                doc_header(d, 2, "Cc"), json_get_str(d->m, "snippet"), body,
                doc_names(d),
        };
        size_t total = 1;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++)
                total += (parts[i] ? strlen(parts[i]) : 0) + 3;
        _cleanup_free_ char *all = malloc(total);
        if (!all)
                return NULL;
        size_t k = 0;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                if (!parts[i])
                        continue;
                size_t l = strlen(parts[i]);
                memcpy(all + k, parts[i], l);
                k += l;
                /* a separator no word or phrase crosses */
                memcpy(all + k, " \x01 ", 3);
                k += 3;
        }
        d->text = fold(all, k);
        return d->text;
}

/* Whether the message carries a label with this id, case-insensitively. */
static bool has_label_id(const Doc *d, const char *id)
{
        const json_t *ids = json_object_get(d->m, "labelIds"), *l;
        size_t i;
        json_array_foreach (ids, i, l) {
                const char *s = json_string_value(l);
                if (s && strcasecmp(s, id) == 0)
                        return true;
        }
        return false;
}

/* Whether label name/id s (any case) is v (folded, '-' for ' ', '_' and '/'). */
static bool label_is(const char *s, const char *v)
{
        if (!s)
                return false;
        _cleanup_free_ char *f = fold(s, strlen(s));
        if (!f)
                return false;
        for (char *c = f; *c; c++)
                if (*c == ' ' || *c == '_' || *c == '/')
                        *c = '-';
        return streq(f, v);
}

/* label:v — a label of the message whose id or name is v. */
static bool match_label(const Doc *d, const char *v)
{
        const json_t *ids = json_object_get(d->m, "labelIds"), *l, *def;
        size_t i, j;
        json_array_foreach (ids, i, l) {
                const char *id = json_string_value(l);
                if (label_is(id, v))
                        return true;
                json_array_foreach (d->labels, j, def) {
                        const char *lid = json_get_str(def, "id");
                        if (id && lid && streq(id, lid) && label_is(json_get_str(def, "name"), v))
                                return true;
                }
        }
        return false;
}

static bool is_system_label(const Doc *d, const char *id)
{
        const json_t *def;
        size_t j;
        json_array_foreach (d->labels, j, def) {
                const char *lid = json_get_str(def, "id");
                if (lid && streq(lid, id))
                        return streq_ptr(json_get_str(def, "type"), "system");
        }
        /* not in the list: Gmail's system ids are upper case (INBOX, CATEGORY_SOCIAL) */
        for (const char *c = id; *c; c++)
                if (islower((unsigned char)*c))
                        return false;
        return true;
}

static size_t user_label_count(const Doc *d)
{
        const json_t *ids = json_object_get(d->m, "labelIds"), *l;
        size_t i, k = 0;
        json_array_foreach (ids, i, l) {
                const char *id = json_string_value(l);
                if (id && !is_system_label(d, id))
                        k++;
        }
        return k;
}

static bool has_attachment(const json_t *part)
{
        const char *fn = json_get_str(part, "filename");
        if ((fn && fn[0]) || json_object_get(json_object_get(part, "body"), "attachmentId"))
                return true;
        const json_t *parts = json_object_get(part, "parts");
        for (size_t i = 0; i < json_array_size(parts); i++)
                if (has_attachment(json_array_get(parts, i)))
                        return true;
        return false;
}

/* internalDate (ms since the epoch, a string or a number) in seconds. */
static int64_t doc_date(const Doc *d)
{
        const json_t *v = json_object_get(d->m, "internalDate");
        int64_t ms = json_is_integer(v)  ? json_integer_value(v)
                     : json_is_string(v) ? strtoll(json_string_value(v), NULL, 10)
                                         : 0;
        return ms / 1000;
}

static int64_t doc_size(const Doc *d)
{
        const json_t *v = json_object_get(d->m, "sizeEstimate");
        return json_is_integer(v) ? json_integer_value(v) : 0;
}

static bool sent_by_me(const Doc *d)
{
        return has_label_id(d, "SENT") || has_label_id(d, "DRAFT");
}

static bool match_in(const Doc *d, const char *v)
{
        static const struct {
                const char *name, *id;
        } folders[] = {
                {"inbox", "INBOX"},   {"sent", "SENT"},       {"trash", "TRASH"},
                {"bin", "TRASH"},     {"spam", "SPAM"},       {"drafts", "DRAFT"},
                {"draft", "DRAFT"},   {"starred", "STARRED"}, {"important", "IMPORTANT"},
                {"unread", "UNREAD"},
        };
        if (streq(v, "anywhere"))
                return true;
        if (streq(v, "archive"))
                return !has_label_id(d, "INBOX") && !has_label_id(d, "TRASH") &&
                       !has_label_id(d, "SPAM") && !has_label_id(d, "DRAFT");
        if (streq(v, "snoozed") || streq(v, "chats") || streq(v, "chat"))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(folders); i++)
                if (streq(v, folders[i].name))
                        return has_label_id(d, folders[i].id);
        return match_label(d, v);
}

static bool match_is(const Doc *d, const char *v)
{
        if (streq(v, "unread"))
                return has_label_id(d, "UNREAD");
        if (streq(v, "read"))
                return !has_label_id(d, "UNREAD");
        if (streq(v, "starred"))
                return has_label_id(d, "STARRED");
        if (streq(v, "important"))
                return has_label_id(d, "IMPORTANT");
        if (streq(v, "muted"))
                return has_label_id(d, "MUTED");
        if (streq(v, "snoozed") || streq(v, "chat"))
                return false;
        return match_label(d, v);
}

static bool match_has(Doc *d, const char *v)
{
        static const struct {
                const char *what, *url;
        } links[] = {
                {"youtube", "youtube.com"},
                {"youtube", "youtu.be"},
                {"drive", "drive.google.com"},
                {"document", "docs.google.com/document"},
                {"spreadsheet", "docs.google.com/spreadsheets"},
                {"presentation", "docs.google.com/presentation"},
        };
        if (streq(v, "attachment"))
                return has_attachment(payload(d));
        if (streq(v, "userlabels"))
                return user_label_count(d) > 0;
        if (streq(v, "nouserlabels"))
                return user_label_count(d) == 0;
        if (streq(v, "yellow-star") || streq(v, "star"))
                return has_label_id(d, "STARRED");
        bool any = false;
        for (size_t i = 0; i < ELEMENTSOF(links); i++)
                if (streq(v, links[i].what)) {
                        const char *t = doc_text(d);
                        any = any || (t && strstr(t, links[i].url));
                }
        return any;
}

static bool match_category(const Doc *d, const char *v)
{
        static const struct {
                const char *name, *id;
        } cats[] = {
                {"primary", "CATEGORY_PERSONAL"},
                {"personal", "CATEGORY_PERSONAL"},
                {"social", "CATEGORY_SOCIAL"},
                {"promotions", "CATEGORY_PROMOTIONS"},
                {"updates", "CATEGORY_UPDATES"},
                {"forums", "CATEGORY_FORUMS"},
                {"reservations", "CATEGORY_RESERVATIONS"},
                {"purchases", "CATEGORY_PURCHASES"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cats); i++)
                if (streq(v, cats[i].name))
                        return has_label_id(d, cats[i].id);
        return false;
}

static bool match_term(Doc *d, const Node *t)
{
        const char *v = t->value;
        switch (t->op) {
        case OP_TEXT:
                return match_words(doc_text(d), v);
        case OP_FROM:
                if (streq(v, "me"))
                        return sent_by_me(d);
                return match_words(doc_header(d, 0, "From"), v);
        case OP_TO:
                if (streq(v, "me"))
                        return !sent_by_me(d);
                return match_words(doc_header(d, 1, "To"), v);
        case OP_CC:
                return match_words(doc_header(d, 2, "Cc"), v);
        case OP_BCC:
                return match_words(doc_header(d, 3, "Bcc"), v);
        case OP_SUBJECT:
                return match_words(doc_subject(d), v);
        case OP_DELIVEREDTO: {
                _cleanup_free_ char *h = NULL;
                const char *raw = gmail_mime_header(payload(d), "Delivered-To");
                return raw && (h = fold(raw, strlen(raw))) && match_words(h, v);
        }
        case OP_LIST: {
                _cleanup_free_ char *h = NULL;
                const char *raw = gmail_mime_header(payload(d), "List-Id");
                return raw && (h = fold(raw, strlen(raw))) && match_words(h, v);
        }
        case OP_RFC822MSGID: {
                const char *raw = gmail_mime_header(payload(d), "Message-ID");
                if (!raw)
                        return false;
                _cleanup_free_ char *h = fold(raw, strlen(raw));
                const char *a = h, *b = v;
                if (!h)
                        return false;
                size_t al = strlen(a), bl = strlen(b);
                if (al && a[0] == '<')
                        a++, al--;
                if (al && a[al - 1] == '>')
                        al--;
                if (bl && b[0] == '<')
                        b++, bl--;
                if (bl && b[bl - 1] == '>')
                        bl--;
                return al == bl && memcmp(a, b, al) == 0;
        }
        case OP_LABEL:
                return match_label(d, v);
        case OP_IN:
                return match_in(d, v);
        case OP_IS:
                return match_is(d, v);
        case OP_HAS:
                return match_has(d, v);
        case OP_CATEGORY:
                return match_category(d, v);
        case OP_FILENAME:
                return match_words(doc_names(d), v);
        case OP_AFTER:
                return doc_date(d) >= t->num;
        case OP_BEFORE:
                return doc_date(d) < t->num;
        case OP_NEWER_THAN:
                return doc_date(d) > d->now - t->num;
        case OP_OLDER_THAN:
                return doc_date(d) < d->now - t->num;
        case OP_LARGER:
                return doc_size(d) > t->num;
        case OP_SMALLER:
                return doc_size(d) < t->num;
        case _OP_MAX:
        default:
                return false;
        }
}

static bool match_node(Doc *d, const Node *n)
{
        switch (n->kind) {
        case NODE_AND:
                for (size_t i = 0; i < n->n; i++)
                        if (!match_node(d, n->kids[i]))
                                return false;
                return true;
        case NODE_OR:
                for (size_t i = 0; i < n->n; i++)
                        if (match_node(d, n->kids[i]))
                                return true;
                return n->n == 0; /* "{}" asks for nothing */
        case NODE_NOT:
                return n->n == 1 && !match_node(d, n->kids[0]);
        case NODE_TERM:
                return match_term(d, n);
        default:
                return false;
        }
}

bool gmail_query_match(const GmailQuery *q, const json_t *message, const json_t *labels,
                       int64_t now)
{
        if (!q || !q->root)
                return true;
        Doc d = {.m = message, .labels = labels, .now = now};
        bool r = match_node(&d, q->root);
        doc_done(&d);
        return r;
}

static bool names_spam_trash(const Node *n, bool negated)
{
        if (n->kind == NODE_NOT)
                return n->n == 1 && names_spam_trash(n->kids[0], !negated);
        if (n->kind == NODE_TERM) {
                if (negated)
                        return false;
                if (n->op == OP_IN)
                        return streq(n->value, "trash") || streq(n->value, "bin") ||
                               streq(n->value, "spam") || streq(n->value, "anywhere");
                if (n->op == OP_LABEL)
                        return streq(n->value, "trash") || streq(n->value, "spam");
                return false;
        }
        for (size_t i = 0; i < n->n; i++)
                if (names_spam_trash(n->kids[i], negated))
                        return true;
        return false;
}

bool gmail_query_includes_spam_trash(const GmailQuery *q)
{
        return q && q->root && names_spam_trash(q->root, false);
}
