/* SPDX-License-Identifier: MIT */
/*
 * The check registry: the three twins' vocabularies as one list, binding a criterion's
 * sentence to a check by its template, parameter validation, evaluation with the substrate
 * guards, the vocabulary listing, and the JSON Pointer helpers outcomes cite with.
 */
#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <strings.h>

#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/text.h"
#include "pods/grade/check.h"
#include "pods/twin/twin.h"

const char *grade_status_to_string(GradeStatus s)
{
        switch (s) {
        case GRADE_PASSED:
                return "passed";
        case GRADE_FAILED:
                return "failed";
        case GRADE_UNMATCHED:
                return "unmatched";
        case GRADE_SKIPPED:
                return "skipped";
        case GRADE_ERROR:
                return "error";
        }
        return "failed";
}

const char *grade_substrate_to_string(GradeSubstrate s)
{
        switch (s) {
        case GRADE_SUBSTRATE_FINAL:
                return "final";
        case GRADE_SUBSTRATE_SEED_FINAL:
                return "seed+final";
        case GRADE_SUBSTRATE_TAPE:
                return "tape";
        }
        return "final";
}

void grade_outcome_done(GradeOutcome *o)
{
        free(o->reason);
        json_decref(o->event_ids);
        json_decref(o->state_paths);
        *o = (GradeOutcome){};
}

/* ---------------------------------------------------------------- registry */

static const struct {
        const GradeCheck *checks;
        const size_t *n;
} vocabularies[] = {
        {grade_checks_github, &grade_n_checks_github}, {grade_checks_slack, &grade_n_checks_slack},
        {grade_checks_stripe, &grade_n_checks_stripe}, {grade_checks_gmail, &grade_n_checks_gmail},
        {grade_checks_linear, &grade_n_checks_linear},
};

const GradeCheck *grade_check_at(size_t i)
{
        for (size_t v = 0; v < ELEMENTSOF(vocabularies); v++) {
                if (i < *vocabularies[v].n)
                        return &vocabularies[v].checks[i];
                i -= *vocabularies[v].n;
        }
        return NULL;
}

const GradeCheck *grade_check_find(const char *id)
{
        const GradeCheck *c;
        for (size_t i = 0; (c = grade_check_at(i)); i++)
                if (streq(c->id, id))
                        return c;
        return NULL;
}

GradePolarity grade_check_polarity(const GradeCheck *c, const json_t *args)
{
        return c->polarity_of ? c->polarity_of(args) : c->polarity;
}

/* ---------------------------------------------------------------- parameters */

static bool span_has(const char *s, size_t n, const char *bad)
{
        for (size_t i = 0; i < n; i++)
                if (strchr(bad, s[i]) || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return true;
        return false;
}

static bool span_all(const char *s, size_t n, const char *extra)
{
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
                        return false;
        return n > 0;
}

static bool span_digits(const char *s, size_t n, size_t max_digits, int64_t *ret)
{
        if (n == 0 || n > max_digits)
                return false;
        int64_t v = 0;
        for (size_t i = 0; i < n; i++) {
                if (!isdigit((unsigned char)s[i]))
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return true;
}

/* Whether twin declares an action (surface.json) called the n bytes at s: GRADE_PARAM_TOOL. */
static bool twin_has_action(const char *twin, const char *s, size_t n)
{
        const TwinKind *k = twin_kind_find(twin);
        const TwinSurface *surface = k ? twin_kind_surface(k) : NULL;
        for (size_t i = 0; surface && i < surface->n_actions; i++)
                if (strlen(surface->actions[i].tool) == n &&
                    memcmp(surface->actions[i].tool, s, n) == 0)
                        return true;
        return false;
}

/*
 * Validates the n bytes at s as p's value for a check of twin: 1 with the bound value in
 * *ret (new), 0 with why in why (whylen bytes), -ENOMEM.
 */

/* A number word of n bytes, "zero" to "twenty" in any case (hosted Pome's countWord: its
 * task 23 says "At least two drafts exist"): its value, or -1. */
static int64_t count_word(const char *s, size_t n)
{
        static const char *const words[] = {
                "zero",     "one",     "two",     "three",     "four",     "five",     "six",
                "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen",
                "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"};
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strlen(words[i]) == n && strncasecmp(s, words[i], n) == 0)
                        return (int64_t)i;
        return -1;
}

static int param_bind(const GradeParam *p, const char *twin, const char *s, size_t n, json_t **ret,
                      char *why, size_t whylen)
{
        int64_t v;
        const char *want = NULL;
        switch (p->type) {
        case GRADE_PARAM_NUMBER:
                if (!span_digits(s, n, 10, &v) || v < 1 || v > INT32_MAX) {
                        want = "a positive integer";
                        break;
                }
                return (*ret = json_integer(v)) ? 1 : -ENOMEM;
        case GRADE_PARAM_COUNT:
                if (!span_digits(s, n, 15, &v) && (v = count_word(s, n)) < 0) {
                        want = "a non-negative integer, in digits or a word up to twenty";
                        break;
                }
                return (*ret = json_integer(v)) ? 1 : -ENOMEM;
        case GRADE_PARAM_REPO: {
                const char *slash = memchr(s, '/', n);
                size_t on = slash ? (size_t)(slash - s) : 0;
                if (!slash || on > 39 || !span_all(s, on, "-") ||
                    !span_all(slash + 1, n - on - 1, "._-") || n - on - 1 > 100) {
                        want = "a repository as owner/name";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        }
        case GRADE_PARAM_LOGIN:
                if (n > 39 + 5 || !span_all(s, n, "-[]")) {
                        want = "a GitHub login";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_LABEL:
                if (n == 0 || n > 200 || span_has(s, n, "`")) {
                        want = "a label name (no backtick)";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_TEXT:
                if (n == 0 || span_has(s, n, "\"")) {
                        want = "text without a double quote";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_PATH:
                if (n == 0 || s[0] == '/' || span_has(s, n, "`")) {
                        want = "a relative file path";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_TOOL:
                if (!twin_has_action(twin, s, n)) {
                        snprintf(why, whylen,
                                 "parameter %s must name an action of the %s twin, "
                                 "got \"%.*s\"",
                                 p->name, twin, (int)(n > 80 ? 80 : n), s);
                        return 0;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_ENUM:
                for (size_t i = 0; p->values[i]; i++)
                        if (strlen(p->values[i]) == n &&
                            (p->fold_case ? strncasecmp(p->values[i], s, n)
                                          : strncmp(p->values[i], s, n)) == 0)
                                return (*ret = json_string(p->values[i])) ? 1 : -ENOMEM;
                {
                        char list[256] = "";
                        size_t l = 0;
                        for (size_t i = 0; p->values[i] && l < sizeof(list); i++)
                                l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s",
                                                      i ? ", " : "", p->values[i]);
                        snprintf(why, whylen, "parameter %s must be one of %s, got \"%.*s\"",
                                 p->name, list, (int)(n > 80 ? 80 : n), s);
                }
                return 0;
        case GRADE_PARAM_CHANNEL:
                if (n > 0 && s[0] == '#') {
                        s++;
                        n--;
                }
                if (n > 80 || !span_all(s, n, "_-.")) {
                        want = "a channel name or id";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_EMOJI:
                if (n >= 2 && s[0] == ':' && s[n - 1] == ':') {
                        s++;
                        n -= 2;
                }
                if (n > 100 || !span_all(s, n, "_+-'")) {
                        want = "an emoji name";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_CHARGE:
                if (n < 4 || (strncmp(s, "ch_", 3) != 0 && strncmp(s, "py_", 3) != 0) ||
                    !span_all(s + 3, n - 3, "_")) {
                        want = "a charge id (ch_…)";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        case GRADE_PARAM_EVENT_TYPE: {
                bool ok = n > 2 && memchr(s, '.', n) && s[0] != '.' && s[n - 1] != '.';
                for (size_t i = 0; ok && i < n; i++)
                        ok = islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
                             s[i] == '_' || (s[i] == '.' && s[i + 1] != '.');
                if (!ok) {
                        want = "an event type such as payment_intent.succeeded";
                        break;
                }
                return (*ret = json_stringn(s, n)) ? 1 : -ENOMEM;
        }
        }
        snprintf(why, whylen, "parameter %s must be %s, got \"%.*s\"", p->name,
                 want ? want : "valid", (int)(n > 80 ? 80 : n), s);
        return 0;
}

/* ---------------------------------------------------------------- binding */

#define GRADE_MAX_SLOTS    4
#define GRADE_SENTENCE_MAX 2048 /* bytes of a sentence worth matching */

/* A template cut into literal pieces and slots, each slot followed by a literal or the end. */
typedef struct Shape {
        const char *tpl;
        size_t n_slots;
        struct {
                size_t lit_off, lit_len; /* the literal before the slot (may be empty) */
        } before[GRADE_MAX_SLOTS + 1];   /* before[n_slots] is the tail after the last slot */
} Shape;

static void shape_of(const char *tpl, Shape *sh)
{
        *sh = (Shape){.tpl = tpl};
        size_t i = 0, start = 0;
        for (;;) {
                const char *open = strchr(tpl + i, '{');
                if (!open) {
                        sh->before[sh->n_slots].lit_off = start;
                        sh->before[sh->n_slots].lit_len = strlen(tpl) - start;
                        return;
                }
                const char *close = strchr(open, '}');
                assert(close && sh->n_slots < GRADE_MAX_SLOTS);
                sh->before[sh->n_slots].lit_off = start;
                sh->before[sh->n_slots].lit_len = (size_t)(open - tpl) - start;
                sh->n_slots++;
                start = i = (size_t)(close - tpl) + 1;
        }
}

typedef struct Split {
        size_t off[GRADE_MAX_SLOTS], len[GRADE_MAX_SLOTS];
} Split;

/* The values of the slots of c in s (the split of s against c's shape), each tried with the
 * shortest value first; with validate, a split counts only when every value is valid. */
static bool shape_match(const GradeCheck *c, const Shape *sh, const char *s, size_t n, size_t pos,
                        size_t slot, bool validate, Split *sp)
{
        const char *lit = sh->tpl + sh->before[slot].lit_off;
        size_t ll = sh->before[slot].lit_len;
        if (n - pos < ll || memcmp(s + pos, lit, ll) != 0)
                return false;
        pos += ll;
        if (slot == sh->n_slots)
                return pos == n;
        const char *next = sh->tpl + sh->before[slot + 1].lit_off;
        size_t nl = sh->before[slot + 1].lit_len;
        bool last = slot + 1 == sh->n_slots;
        for (size_t end = pos + 1; end <= n; end++) {
                if (last && nl == 0 && end != n)
                        continue;
                if (nl > 0 && (n - end < nl || memcmp(s + end, next, nl) != 0))
                        continue;
                if (validate) {
                        _cleanup_json_ json_t *v = NULL;
                        char why[8];
                        if (param_bind(&c->params[slot], c->twin, s + pos, end - pos, &v, why,
                                       sizeof(why)) <= 0)
                                continue;
                }
                sp->off[slot] = pos;
                sp->len[slot] = end - pos;
                if (shape_match(c, sh, s, n, end, slot + 1, validate, sp))
                        return true;
        }
        return false;
}

/* The sentence as templates are written: trimmed, inner whitespace runs made one space, one
 * trailing '.' dropped. New string or NULL. */
static char *normalize(const char *s)
{
        size_t n = strlen(s);
        char *out = malloc(n + 1);
        if (!out)
                return NULL;
        size_t k = 0;
        bool space = false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
                        space = k > 0;
                        continue;
                }
                if (space)
                        out[k++] = ' ';
                space = false;
                out[k++] = s[i];
        }
        if (k > 0 && out[k - 1] == '.')
                k--;
        out[k] = 0;
        return out;
}

/* ---------------------------------------------------------------- did you mean */

/*
 * A sentence that binds nothing is compared with each template of its twin by an edit
 * distance (Levenshtein, one per inserted, dropped or replaced character) in which a {slot}
 * stands for one or more characters its type can hold at no cost (none at all costs one, a
 * character it cannot hold two): so the distance counts what differs in the literal text,
 * which is what has to match exactly, and values that cannot be values. The nearest
 * templates are named, and the sentence is shown with each difference marked «what it
 * says→what the template says», widened to whole words: marks inside the line read the same
 * in a terminal, after a "task.md:12: " prefix and inside a JSON string, where a caret line
 * under the sentence would lose its alignment. Everything is a pure function of the sentence
 * and the vocabulary: the reason lands in the byte-compared verdict.
 */
#define SUGGEST_MAX      3    /* templates named */
#define SUGGEST_TOKENS   256  /* a template's literal bytes and slots */
#define SUGGEST_SHOWN    240  /* bytes of a marked sentence before unchanged runs are cut */
#define SUGGEST_CONTEXT  24   /* bytes kept on each side of a cut unchanged run */
#define SUGGEST_SLOT_TOK (-1) /* tok[] value of slot k: SUGGEST_SLOT_TOK - k */

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
        return a < b ? a : b;
}

/* A template as the distance reads it: each literal byte, and each slot as one token. */
typedef struct Tokens {
        int tok[SUGGEST_TOKENS];
        size_t n, literal; /* tokens; literal bytes among them */
} Tokens;

static void tokens_of(const char *tpl, Tokens *t)
{
        *t = (Tokens){};
        int slot = 0;
        for (const char *p = tpl; *p && t->n < SUGGEST_TOKENS; p++) {
                const char *close = *p == '{' ? strchr(p, '}') : NULL;
                if (close) {
                        t->tok[t->n++] = SUGGEST_SLOT_TOK - slot++;
                        p = close;
                } else {
                        t->tok[t->n++] = (unsigned char)*p;
                        t->literal++;
                }
        }
        assert(!tpl[0] || t->n < SUGGEST_TOKENS);
}

/* The sentence as code points (templates are ASCII; a character is one edit, not its bytes),
 * with each one's byte offset (off[m] = the byte length). */
typedef struct Chars {
        uint32_t *cp;
        size_t *off;
        size_t m;
} Chars;

static void chars_done(Chars *c)
{
        free(c->cp);
        free(c->off);
}

static int chars_of(const char *s, size_t n, Chars *c)
{
        *c = (Chars){.cp = malloc((n + 1) * sizeof(uint32_t)),
                     .off = malloc((n + 1) * sizeof(size_t))};
        if (!c->cp || !c->off)
                return -ENOMEM;
        for (size_t i = 0; i < n;) {
                size_t k = utf8_char_len(s + i, n - i);
                uint32_t v = (unsigned char)s[i];
                if (k == 0)
                        k = 1; /* a stray byte is one character that matches nothing */
                else if (k > 1) {
                        v &= 0x3fu >> (k - 1);
                        for (size_t b = 1; b < k; b++)
                                v = v << 6 | ((unsigned char)s[i + b] & 0x3f);
                }
                c->off[c->m] = i;
                c->cp[c->m++] = v;
                i += k;
        }
        c->off[c->m] = n;
        return 0;
}

/* What taking character v into a value of p costs: nothing when p's type can hold it, else
 * two edits, more than a character the template does not have, so a value stops where it
 * must (the login of "`alice` now" is alice, and " now" is what is extra). */
static bool ascii_in(uint32_t v, const char *set)
{
        return v > 0 && v < 0x80 && strchr(set, (int)v);
}

static uint32_t slot_cost(const GradeParam *p, uint32_t v)
{
        bool alnum = v < 0x80 && isalnum((int)v), ok = false;
        switch (p->type) {
        case GRADE_PARAM_NUMBER:
                ok = v >= '0' && v <= '9';
                break;
        case GRADE_PARAM_COUNT: /* digits, or the letters number words up to twenty use */
                ok = (v >= '0' && v <= '9') || ascii_in(v, "efghilnorstuvwxzEFGHILNORSTUVWXZ");
                break;
        case GRADE_PARAM_REPO:
                ok = alnum || ascii_in(v, "-._/");
                break;
        case GRADE_PARAM_LOGIN:
                ok = alnum || ascii_in(v, "-[]");
                break;
        case GRADE_PARAM_LABEL:
        case GRADE_PARAM_PATH:
                ok = v != '`' && v >= 0x20;
                break;
        case GRADE_PARAM_TEXT:
                ok = v != '"' && v >= 0x20;
                break;
        case GRADE_PARAM_TOOL:
        case GRADE_PARAM_ENUM:
        case GRADE_PARAM_CHARGE:
                ok = alnum || v == '_';
                break;
        case GRADE_PARAM_EVENT_TYPE:
                ok = alnum || v == '_' || v == '.';
                break;
        case GRADE_PARAM_CHANNEL:
                ok = alnum || ascii_in(v, "#_-.");
                break;
        case GRADE_PARAM_EMOJI:
                ok = alnum || ascii_in(v, ":_+-'");
                break;
        }
        return ok ? 0 : 2;
}

/* The distance table of check k's template t against c: d[i * (m + 1) + j] aligns t's first
 * i tokens with c's first j characters. With full, the whole table (for the alignment); else
 * only its last row is meaningful. Returns the distance, or -ENOMEM. */
static int distance(const GradeCheck *k, const Tokens *t, const Chars *c, bool full,
                    uint32_t **ret_table)
{
        size_t w = c->m + 1, rows = full ? t->n + 1 : 2;
        uint32_t *d = malloc(rows * w * sizeof(uint32_t));
        if (!d)
                return -ENOMEM;
        for (size_t j = 0; j < w; j++)
                d[j] = (uint32_t)j;
        for (size_t i = 1; i <= t->n; i++) {
                uint32_t *prev = d + (full ? i - 1 : (i - 1) % 2) * w;
                uint32_t *row = d + (full ? i : i % 2) * w;
                int tok = t->tok[i - 1];
                row[0] = prev[0] + 1;
                for (size_t j = 1; j < w; j++) {
                        uint32_t best = prev[j] + 1; /* the template's token is missing */
                        if (tok <= SUGGEST_SLOT_TOK) {
                                /* the slot takes c[j-1], first or after more of the value */
                                uint32_t take =
                                        slot_cost(&k->params[SUGGEST_SLOT_TOK - tok], c->cp[j - 1]);
                                best = min_u32(best, min_u32(prev[j - 1], row[j - 1]) + take);
                        } else {
                                best = min_u32(best, prev[j - 1] + ((uint32_t)tok != c->cp[j - 1]));
                                best = min_u32(best, row[j - 1] + 1); /* an extra character */
                        }
                        row[j] = best;
                }
        }
        int r = (int)d[(full ? t->n : t->n % 2) * w + c->m];
        if (ret_table)
                *ret_table = d;
        else
                free(d);
        return r;
}

/* One step of the alignment, in sentence order. */
typedef enum EditOp {
        OP_SAME,       /* the character is the template's */
        OP_SLOT,       /* the character is part of a slot's value */
        OP_REPLACE,    /* the character stands where the template has another */
        OP_EXTRA,      /* the character is not in the template */
        OP_MISSING,    /* the template's literal byte is not in the sentence */
        OP_SLOT_EMPTY, /* the template's slot has no value */
} EditOp;

typedef struct Edit {
        EditOp op;
        size_t j;   /* the sentence character (SAME, SLOT, REPLACE, EXTRA) */
        size_t tok; /* the template token (SAME, SLOT, REPLACE, MISSING, SLOT_EMPTY) */
} Edit;

/* The alignment behind the distance, first step first: a new array of *ret_n edits. */
static int align(const GradeCheck *k, const Tokens *t, const Chars *c, Edit **ret, size_t *ret_n)
{
        _cleanup_free_ uint32_t *d = NULL;
        int r = distance(k, t, c, true, &d);
        if (r < 0)
                return r;
        size_t w = c->m + 1, cap = t->n + c->m + 1, n = 0;
        _cleanup_free_ Edit *e = malloc(cap * sizeof(Edit));
        if (!e)
                return -ENOMEM;
        size_t i = t->n, j = c->m;
#define D(a, b) d[(a)*w + (b)]
        while (i > 0 || j > 0) {
                int tok = i > 0 ? t->tok[i - 1] : 0;
                Edit x;
                /* among alignments of the same cost, the one a reader expects: a value that
                 * takes what it can rather than a slot left empty beside stray characters, a
                 * missing quote beside a value rather than the value's last character
                 * replaced by it */
                if (i == 0)
                        x = (Edit){OP_EXTRA, --j, 0};
                else if (tok <= SUGGEST_SLOT_TOK) {
                        uint32_t take =
                                j > 0 ? slot_cost(&k->params[SUGGEST_SLOT_TOK - tok], c->cp[j - 1])
                                      : 0;
                        if (j > 0 && D(i, j) == D(i, j - 1) + take)
                                x = (Edit){OP_SLOT, --j, i - 1}; /* more of the value */
                        else if (D(i, j) == D(i - 1, j) + 1)
                                x = (Edit){OP_SLOT_EMPTY, j, --i};
                        else
                                x = (Edit){OP_SLOT, --j, --i}; /* the value's first character */
                } else if (j > 0 && (uint32_t)tok == c->cp[j - 1] && D(i, j) == D(i - 1, j - 1))
                        x = (Edit){OP_SAME, --j, --i};
                else if (D(i, j) == D(i - 1, j) + 1)
                        x = (Edit){OP_MISSING, j, --i};
                else if (j > 0 && D(i, j) == D(i - 1, j - 1) + 1)
                        x = (Edit){OP_REPLACE, --j, --i};
                else
                        x = (Edit){OP_EXTRA, --j, i};
                assert(n < cap);
                e[n++] = x;
        }
#undef D
        for (size_t a = 0; a < n / 2; a++) {
                Edit tmp = e[a];
                e[a] = e[n - 1 - a];
                e[n - 1 - a] = tmp;
        }
        *ret = TAKE_PTR(e);
        *ret_n = n;
        return 0;
}

/* Whether edit x is part of a difference. */
static bool edit_differs(const Edit *x)
{
        return x->op != OP_SAME && x->op != OP_SLOT;
}

/* An unchanged run of the sentence: whole when short, else its ends kept (lead: the part
 * before the first difference keeps its end; tail: the part after the last keeps its
 * start). */
static void add_unchanged(JsonBuf *b, const char *s, size_t n, bool lead, bool tail, bool cut)
{
        size_t keep = SUGGEST_CONTEXT;
        if (!cut || n <= 2 * keep + 3) {
                jsonbuf_put(b, s, n);
                return;
        }
        size_t head = lead ? 0 : keep, back = tail ? 0 : keep;
        while (head > 0 && ((unsigned char)s[head] & 0xc0) == 0x80)
                head--;
        size_t from = n - back;
        while (from < n && ((unsigned char)s[from] & 0xc0) == 0x80)
                from++;
        jsonbuf_put(b, s, head);
        jsonbuf_put(b, "…", strlen("…"));
        jsonbuf_put(b, s + from, n - from);
}

/*
 * The sentence s (as c) against check k's template t along the alignment e (n_e edits), said
 * into out: the sentence with each difference marked «sentence→template», widened to whole
 * words over unchanged characters, a slot with no value as its {name}, and a slot value that
 * is not valid taken into the difference it touches (a value the alignment made up out of a
 * misspelt word: "is «closed→in state {state}»"); the values that are not valid elsewhere
 * follow ("; and parameter issue must be …"). When the marked sentence would be long,
 * unchanged runs are cut to their ends. Returns the number of errors said, or -ENOMEM.
 */
static int explain(const GradeCheck *k, const Tokens *t, const Chars *c, const char *s,
                   const Edit *e, size_t n_e, JsonBuf *out)
{
        _cleanup_free_ bool *in = calloc(n_e + 1, sizeof(bool));
        _cleanup_free_ bool *bad = calloc(n_e + 1, sizeof(bool)); /* edits of invalid values */
        if (!in || !bad)
                return -ENOMEM;
        /* the invalid values: each slot's run of edits, bound as the binder would */
        JsonBuf whys = {};
        for (size_t a = 0; a < n_e;) {
                size_t z = a + 1;
                if (e[a].op != OP_SLOT) {
                        a = z;
                        continue;
                }
                while (z < n_e && e[z].op == OP_SLOT && e[z].tok == e[a].tok)
                        z++;
                size_t from = c->off[e[a].j], to = c->off[e[z - 1].j + 1];
                _cleanup_json_ json_t *v = NULL;
                char why[300];
                int r = param_bind(&k->params[SUGGEST_SLOT_TOK - t->tok[e[a].tok]], k->twin,
                                   s + from, to - from, &v, why, sizeof(why));
                if (r < 0) {
                        jsonbuf_done(&whys);
                        return r;
                }
                for (size_t x = a; r == 0 && x < z; x++)
                        bad[x] = true;
                a = z;
        }
        /* the differences, widened to whole words */
        for (size_t a = 0; a < n_e; a++) {
                if (!edit_differs(&e[a]))
                        continue;
                in[a] = true;
                for (size_t l = a; l > 0 && e[l - 1].op == OP_SAME && c->cp[e[l - 1].j] != ' '; l--)
                        in[l - 1] = true;
                for (size_t r = a + 1; r < n_e && e[r].op == OP_SAME && c->cp[e[r].j] != ' '; r++)
                        in[r] = true;
        }
        /* an invalid value that touches a difference, or is one space from it, joins it */
        for (int pass = 0; pass < 2; pass++) {
                for (size_t a = 0; a < n_e; a++) {
                        if (!bad[a] || in[a])
                                continue;
                        size_t z = a;
                        while (z < n_e && bad[z] && e[z].tok == e[a].tok)
                                z++;
                        size_t l = a, r = z;
                        if (l > 0 && !in[l - 1] && e[l - 1].op == OP_SAME &&
                            c->cp[e[l - 1].j] == ' ')
                                l--;
                        if (r < n_e && !in[r] && e[r].op == OP_SAME && c->cp[e[r].j] == ' ')
                                r++;
                        if ((l > 0 && in[l - 1]) || (r < n_e && in[r]))
                                for (size_t x = (l > 0 && in[l - 1]) ? l : a;
                                     x < ((r < n_e && in[r]) ? r : z); x++)
                                        in[x] = true;
                        a = z - 1;
                }
        }
        int errors = 0;
        for (size_t a = 0; a < n_e;) {
                size_t z = a + 1;
                if (bad[a] && !in[a]) {
                        while (z < n_e && bad[z] && e[z].tok == e[a].tok)
                                z++;
                        _cleanup_json_ json_t *v = NULL;
                        char why[300];
                        size_t from = c->off[e[a].j], to = c->off[e[z - 1].j + 1];
                        (void)param_bind(&k->params[SUGGEST_SLOT_TOK - t->tok[e[a].tok]], k->twin,
                                         s + from, to - from, &v, why, sizeof(why));
                        jsonbuf_printf(&whys, "; and %s", why);
                        errors++;
                }
                a = z;
        }
        for (int pass = 0; pass < 2; pass++) {
                JsonBuf b = {};
                int diffs = 0;
                bool cut = pass == 1;
                for (size_t a = 0; a < n_e;) {
                        size_t z = a;
                        if (!in[a]) {
                                while (z < n_e && !in[z])
                                        z++;
                                /* edits out of a difference all hold a character, in order */
                                size_t from = c->off[e[a].j], to = c->off[e[z - 1].j + 1];
                                add_unchanged(&b, s + from, to - from, a == 0, z == n_e, cut);
                                a = z;
                                continue;
                        }
                        while (z < n_e && in[z])
                                z++;
                        JsonBuf said = {}, want = {};
                        for (size_t x = a; x < z; x++) {
                                const Edit *ed = &e[x];
                                const char *slot = NULL;
                                if (ed->op == OP_SLOT_EMPTY || ed->op == OP_SLOT)
                                        slot = k->params[SUGGEST_SLOT_TOK - t->tok[ed->tok]].name;
                                if (ed->op != OP_MISSING && ed->op != OP_SLOT_EMPTY)
                                        jsonbuf_put(&said, s + c->off[ed->j],
                                                    c->off[ed->j + 1] - c->off[ed->j]);
                                if (slot &&
                                    (x == a || e[x - 1].op != OP_SLOT || e[x - 1].tok != ed->tok))
                                        jsonbuf_printf(&want, "{%s}", slot);
                                else if (!slot && ed->op != OP_EXTRA) {
                                        char ch = (char)t->tok[ed->tok];
                                        jsonbuf_put(&want, &ch, 1);
                                }
                        }
                        jsonbuf_printf(&b, "«%s→%s»", strempty(jsonbuf_text(&said)),
                                       strempty(jsonbuf_text(&want)));
                        b.oom = b.oom || said.oom || want.oom;
                        jsonbuf_done(&said);
                        jsonbuf_done(&want);
                        diffs++;
                        a = z;
                }
                if (!b.oom && (pass == 1 || b.len <= SUGGEST_SHOWN)) {
                        jsonbuf_put(out, strempty(jsonbuf_text(&b)), b.len);
                        jsonbuf_put(out, strempty(jsonbuf_text(&whys)), whys.len);
                        errors += diffs;
                        pass = 2;
                }
                if (b.oom)
                        out->oom = true;
                jsonbuf_done(&b);
        }
        jsonbuf_done(&whys);
        return out->oom ? -ENOMEM : errors;
}

/*
 * "; did you mean: `<template>` (…the sentence, marked…), `<second>` or `<third>`" for the
 * sentence s (n bytes, normalised) against twin's templates, into out; nothing when no
 * template is near (more than a third of its literal text, and more than 2 characters, would
 * have to change: "The moon is made of cheese" is near nothing). 0 or -ENOMEM.
 */
static int suggest(const char *s, size_t n, const char *twin, JsonBuf *out)
{
        _cleanup_(chars_done) Chars c = {};
        if (chars_of(s, n, &c) < 0)
                return -ENOMEM;
        const GradeCheck *near[SUGGEST_MAX];
        int dist[SUGGEST_MAX];
        size_t n_near = 0;
        const GradeCheck *k;
        for (size_t i = 0; (k = grade_check_at(i)); i++) {
                if (!streq(k->twin, twin))
                        continue;
                Tokens t;
                tokens_of(k->template, &t);
                int d = distance(k, &t, &c, false, NULL);
                if (d < 0)
                        return d;
                if ((size_t)d > (t.literal / 3 > 2 ? t.literal / 3 : 2))
                        continue;
                /* in order of distance, the vocabulary's order among equals */
                size_t at = n_near;
                while (at > 0 && dist[at - 1] > d)
                        at--;
                if (at == SUGGEST_MAX)
                        continue;
                for (size_t m = n_near < SUGGEST_MAX ? n_near : SUGGEST_MAX - 1; m > at; m--) {
                        near[m] = near[m - 1];
                        dist[m] = dist[m - 1];
                }
                near[at] = k;
                dist[at] = d;
                if (n_near < SUGGEST_MAX)
                        n_near++;
        }
        if (n_near == 0)
                return 0;
        Tokens t;
        tokens_of(near[0]->template, &t);
        _cleanup_free_ Edit *e = NULL;
        size_t n_e;
        int r = align(near[0], &t, &c, &e, &n_e);
        if (r < 0)
                return r;
        JsonBuf said = {};
        int errors = explain(near[0], &t, &c, s, e, n_e, &said);
        if (errors >= 0) {
                jsonbuf_printf(out, "; did you mean: `%s`", near[0]->template);
                if (errors > 1)
                        jsonbuf_printf(out, " (the sentence has %d errors: %s)", errors,
                                       strempty(jsonbuf_text(&said)));
                else
                        jsonbuf_printf(out, " (the sentence differs: %s)",
                                       strempty(jsonbuf_text(&said)));
                for (size_t m = 1; m < n_near; m++)
                        jsonbuf_printf(out, "%s`%s`", m + 1 == n_near ? " or " : ", ",
                                       near[m]->template);
        }
        jsonbuf_done(&said);
        if (errors < 0)
                return errors;
        return out->oom ? -ENOMEM : 0;
}

int grade_bind(const char *sentence, const char *twin, const GradeCheck **ret_check,
               json_t **ret_args, char **ret_reason)
{
        _cleanup_free_ char *s = normalize(sentence);
        if (!s)
                return -ENOMEM;
        size_t n = strlen(s);
        /* no template is near this long, and the split search is polynomial in it */
        if (n > GRADE_SENTENCE_MAX) {
                char *reason = strdup("the sentence is longer than any check's template allows");
                if (!reason)
                        return -ENOMEM;
                *ret_reason = reason;
                return 0;
        }
        char closest[400] = "";
        const GradeCheck *c;
        for (size_t i = 0; (c = grade_check_at(i)); i++) {
                if (!streq(c->twin, twin))
                        continue;
                Shape sh;
                Split sp;
                shape_of(c->template, &sh);
                assert(sh.n_slots == c->n_params);
                if (shape_match(c, &sh, s, n, 0, 0, true, &sp)) {
                        _cleanup_json_ json_t *args = json_object();
                        if (!args)
                                return -ENOMEM;
                        for (size_t k = 0; k < sh.n_slots; k++) {
                                json_t *v = NULL;
                                char why[8];
                                int r = param_bind(&c->params[k], c->twin, s + sp.off[k], sp.len[k],
                                                   &v, why, sizeof(why));
                                if (r <= 0)
                                        return r < 0 ? r : -EINVAL; /* validated above */
                                if (json_object_set_new(args, c->params[k].name, v) < 0)
                                        return -ENOMEM;
                        }
                        *ret_check = c;
                        *ret_args = TAKE_PTR(args);
                        return 1;
                }
                /* the right words with a bad value: say which value, for the first such check */
                if (!closest[0] && shape_match(c, &sh, s, n, 0, 0, false, &sp)) {
                        for (size_t k = 0; k < sh.n_slots; k++) {
                                _cleanup_json_ json_t *v = NULL;
                                char why[300];
                                int r = param_bind(&c->params[k], c->twin, s + sp.off[k], sp.len[k],
                                                   &v, why, sizeof(why));
                                if (r < 0)
                                        return r;
                                if (r == 0) {
                                        snprintf(closest, sizeof(closest),
                                                 "the sentence has the shape of %s (\"%s\") but %s",
                                                 c->id, c->template, why);
                                        break;
                                }
                        }
                }
        }
        if (closest[0]) {
                char *reason = strdup(closest);
                if (!reason)
                        return -ENOMEM;
                *ret_reason = reason;
                return 0;
        }
        JsonBuf b = {};
        jsonbuf_printf(&b, "no %s check has a sentence template this matches", twin);
        int r = b.oom ? -ENOMEM : suggest(s, n, twin, &b);
        if (r < 0 || !jsonbuf_text(&b)) {
                jsonbuf_done(&b);
                return -ENOMEM;
        }
        *ret_reason = TAKE_PTR(b.data);
        return 0;
}

/* ---------------------------------------------------------------- evaluation */

int grade_check_eval(const GradeCheck *c, const json_t *args, json_t *seed, json_t *final,
                     const json_t *tape, GradeOutcome *o)
{
        assert(seed);
        int r;
        if (c->substrate != GRADE_SUBSTRATE_TAPE && !final)
                return grade_outcome_set(o, GRADE_FAILED,
                                         "the %s twin left no final state (its pod ended before "
                                         "finalize exported it), so this cannot be shown",
                                         c->twin);
        if (c->substrate == GRADE_SUBSTRATE_TAPE && !json_is_array(tape))
                return grade_outcome_set(o, GRADE_FAILED,
                                         "the %s twin left no tape, so this cannot be shown",
                                         c->twin);
        GradeCheckInput in = {.args = args, .seed = seed, .final = final, .tape = tape};
        r = c->fn(&in, o);
        if (r < 0)
                return r;
        if (!o->reason) /* every check says why; a silent one is a bug, not a pass */
                return grade_outcome_set(o, GRADE_FAILED, "the check gave no reason");
        return 0;
}

/* ---------------------------------------------------------------- helpers */

int grade_outcome_set(GradeOutcome *o, GradeStatus status, const char *fmt, ...)
{
        va_list ap;
        char *s;
        va_start(ap, fmt);
        int k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        free(o->reason);
        o->reason = s;
        o->status = status;
        return 0;
}

static int cite(json_t **list, json_t *v)
{
        if (!v)
                return -ENOMEM;
        if (!*list && !(*list = json_array())) {
                json_decref(v);
                return -ENOMEM;
        }
        return json_array_append_new(*list, v) < 0 ? -ENOMEM : 0;
}

int grade_cite_path(GradeOutcome *o, const char *fmt, ...)
{
        va_list ap;
        char *s;
        va_start(ap, fmt);
        int k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        json_t *v = json_string(s);
        free(s);
        return cite(&o->state_paths, v);
}

int grade_cite_event(GradeOutcome *o, const json_t *row)
{
        const char *id = json_get_str(row, "event_id");
        if (!id || !*id)
                return 0;
        return cite(&o->event_ids, json_string(id));
}

int grade_check_no_unsupported_endpoint(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *row;
        size_t i, hits = 0;
        int r;
        json_array_foreach (in->tape, i, row) {
                if (!streq_ptr(json_get_str(row, "fidelity"), "unsupported"))
                        continue;
                hits++;
                if ((r = grade_cite_event(o, row)) < 0)
                        return r;
        }
        return grade_outcome_set(o, hits ? GRADE_FAILED : GRADE_PASSED,
                                 "%zu of %zu call(s) reached an endpoint the twin does not "
                                 "support",
                                 hits, json_array_size(in->tape));
}

char *grade_pointer_token(const char *s)
{
        size_t n = strlen(s), k = 0;
        char *out = malloc(2 * n + 1);
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '~' || s[i] == '/') {
                        out[k++] = '~';
                        out[k++] = s[i] == '~' ? '0' : '1';
                } else
                        out[k++] = s[i];
        }
        out[k] = 0;
        return out;
}

json_t *grade_pointer_get(const json_t *doc, const char *ptr)
{
        json_t *j = (json_t *)doc;
        if (!ptr)
                return NULL;
        if (*ptr && *ptr != '/')
                return NULL;
        while (j && *ptr == '/') {
                ptr++;
                size_t l = strcspn(ptr, "/");
                _cleanup_free_ char *tok = malloc(l + 1);
                if (!tok)
                        return NULL;
                size_t k = 0;
                for (size_t i = 0; i < l; i++) {
                        if (ptr[i] != '~')
                                tok[k++] = ptr[i];
                        else if (i + 1 < l && (ptr[i + 1] == '0' || ptr[i + 1] == '1'))
                                tok[k++] = ptr[++i] == '0' ? '~' : '/';
                        else
                                return NULL; /* RFC 6901 §3: '~' only as ~0 or ~1 */
                }
                tok[k] = 0;
                if (json_is_array(j)) {
                        int64_t idx;
                        /* §4: decimal, no leading zeros; "-" names no element */
                        if (!span_digits(tok, k, 18, &idx) || (k > 1 && tok[0] == '0'))
                                return NULL;
                        j = json_array_get(j, (size_t)idx);
                } else if (json_is_object(j))
                        j = json_object_get(j, tok);
                else
                        return NULL;
                ptr += l;
        }
        return j;
}

const char *grade_arg_str(const GradeCheckInput *in, const char *name)
{
        return json_get_str(in->args, name);
}

int64_t grade_arg_int(const GradeCheckInput *in, const char *name)
{
        return json_integer_value(json_object_get(in->args, name));
}

const char *grade_row_header(const json_t *row, const char *name)
{
        json_t *headers = json_object_get(row, "request_headers");
        const char *k;
        json_t *v;
        json_object_foreach (headers, k, v)
                if (strcasecmp(k, name) == 0 && json_is_string(v))
                        return json_string_value(v);
        return NULL;
}

/* ---------------------------------------------------------------- listing */

static json_t *param_json(const GradeParam *p)
{
        bool integer = p->type == GRADE_PARAM_NUMBER || p->type == GRADE_PARAM_COUNT;
        json_t *o = json_pack("{s:s, s:s, s:s}", "name", p->name, "type",
                              integer ? "integer" : "string", "description", p->description);
        if (o && p->type == GRADE_PARAM_ENUM) {
                json_t *values = json_array();
                for (size_t i = 0; values && p->values[i]; i++)
                        if (json_array_append_new(values, json_string(p->values[i])) < 0) {
                                json_decref(values);
                                values = NULL;
                        }
                if (!values || json_object_set_new(o, "enum", values) < 0) {
                        json_decref(o);
                        return NULL;
                }
        }
        return o;
}

int grade_checks_list(const char *twin, json_t **ret)
{
        _cleanup_json_ json_t *list = json_array();
        if (!list)
                return -ENOMEM;
        const GradeCheck *c;
        for (size_t i = 0; (c = grade_check_at(i)); i++) {
                if (twin && !streq(c->twin, twin))
                        continue;
                _cleanup_json_ json_t *params = json_array();
                if (!params)
                        return -ENOMEM;
                for (size_t k = 0; k < c->n_params; k++)
                        if (json_array_append_new(params, param_json(&c->params[k])) < 0)
                                return -ENOMEM;
                json_t *o =
                        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O}", "id", c->id, "twin",
                                  c->twin, "template", c->template, "description", c->description,
                                  "substrate", grade_substrate_to_string(c->substrate), "polarity",
                                  c->polarity_of                  ? "per-argument"
                                  : c->polarity == GRADE_POSITIVE ? "positive"
                                                                  : "negative",
                                  "params", params);
                if (json_array_append_new(list, o) < 0)
                        return -ENOMEM;
        }
        if (twin && json_array_size(list) == 0)
                return -ENOENT;
        json_t *out = json_pack("{s:O}", "checks", list);
        if (!out)
                return -ENOMEM;
        *ret = out;
        return 0;
}

int grade_error(GradeError *e, int r, const char *fmt, ...)
{
        if (e) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(e->message, sizeof(e->message), fmt, ap);
                va_end(ap);
                e->n_errors = 1;
        }
        return r;
}
