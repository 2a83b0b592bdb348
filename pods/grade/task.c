/* SPDX-License-Identifier: MIT */
/*
 * Task files (CONTRACT.md "Task file"; hosted Pome's parseTask): Markdown with `# Title`,
 * `## Prompt` (alias `## Task`), `## Success Criteria` (alias `## Checks`), optional
 * `## Setup`, `## Expected Behavior`, `## Config` (YAML, fenced or plain) and `## Seed State`
 * (JSON, fenced or plain, or prose compiled into a <task>.seed.json sidecar). Headings are
 * matched case-insensitively and only outside fenced blocks; other sections are prose.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <strings.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/text.h"
#include "common/yamljson.h"
#include "pods/grade/grade.h"
#include "pods/twin/twin.h"

#define TASK_MAX_BYTES (1u << 20)

/* One line of the file: its bytes without the line break. */
typedef struct Line {
        const char *s;
        size_t n;
        bool fenced; /* inside (or opening/closing) a fenced code block */
} Line;

/* A known section: the line of its heading and its content lines [first, end). */
typedef struct Section {
        unsigned heading; /* 1-based line of the heading; 0 = the section is absent */
        size_t first, end;
} Section;

typedef struct Parser {
        const char *name;
        Line *lines;
        size_t n_lines;
        Section prompt, criteria, setup, expected, config, seed;
        GradeError *e;
        GradeTask *t;
} Parser;

static int fail(Parser *p, unsigned line, const char *fmt, ...) _printf_(3, 4);
static int fail(Parser *p, unsigned line, const char *fmt, ...)
{
        char msg[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (p->e)
                snprintf(p->e->message, sizeof(p->e->message), "%s:%u: %s", p->name, line, msg);
        return -EINVAL;
}

static int warn(Parser *p, unsigned line, const char *fmt, ...) _printf_(3, 4);
static int warn(Parser *p, unsigned line, const char *fmt, ...)
{
        char msg[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return strv_extendf(&p->t->warnings, "%s:%u: %s", p->name, line, msg);
}

GradeTask *grade_task_free(GradeTask *t)
{
        if (!t)
                return NULL;
        free(t->name);
        free(t->title);
        free(t->prompt);
        free(t->setup);
        free(t->expected_behavior);
        strv_free(t->twins);
        free(t->task_class);
        for (size_t i = 0; i < t->n_criteria; i++) {
                free(t->criteria[i].twin);
                free(t->criteria[i].text);
        }
        free(t->criteria);
        json_decref(t->seeds);
        strv_free(t->warnings);
        free(t);
        return NULL;
}

static inline void grade_task_freep(GradeTask **t)
{
        grade_task_free(*t);
}

/* ---------------------------------------------------------------- lines and sections */

static bool is_space(char c)
{
        return c == ' ' || c == '\t';
}

/* The n bytes at s without leading and trailing blanks. */
static void trim(const char **s, size_t *n)
{
        while (*n > 0 && is_space(**s))
                (*s)++, (*n)--;
        while (*n > 0 && is_space((*s)[*n - 1]))
                (*n)--;
}

/* A fence line's character ('`' or '~') and length when the line opens or closes a fence. */
static size_t fence_of(const Line *l, char *ret_c)
{
        const char *s = l->s;
        size_t n = l->n, k = 0;
        while (n > 0 && *s == ' ' && k < 3)
                s++, n--, k++;
        if (n < 3 || (s[0] != '`' && s[0] != '~'))
                return 0;
        size_t run = 0;
        while (run < n && s[run] == s[0])
                run++;
        if (run < 3)
                return 0;
        *ret_c = s[0];
        return run;
}

static int split_lines(Parser *p, const char *text, size_t len)
{
        size_t cap = 64;
        p->lines = malloc(cap * sizeof(Line));
        if (!p->lines)
                return -ENOMEM;
        char fence_c = 0;
        size_t fence_n = 0;
        for (size_t at = 0;;) {
                const char *nl = memchr(text + at, '\n', len - at);
                size_t end = nl ? (size_t)(nl - text) : len;
                if (p->n_lines == cap) {
                        Line *l = realloc(p->lines, (cap *= 2) * sizeof(Line));
                        if (!l)
                                return -ENOMEM;
                        p->lines = l;
                }
                Line *l = &p->lines[p->n_lines++];
                *l = (Line){.s = text + at, .n = end - at};
                if (l->n > 0 && l->s[l->n - 1] == '\r')
                        l->n--;
                char c;
                size_t run = fence_of(l, &c);
                if (fence_n) {
                        l->fenced = true;
                        if (run >= fence_n && c == fence_c)
                                fence_n = 0;
                } else if (run) {
                        l->fenced = true;
                        fence_c = c;
                        fence_n = run;
                }
                if (!nl)
                        return 0;
                at = end + 1;
        }
}

/* "## Heading" outside a fence: the heading, trimmed; else NULL. */
static bool heading_of(const Line *l, unsigned level, const char **ret, size_t *ret_n)
{
        if (l->fenced || l->n <= level || l->s[level] == '#')
                return false;
        for (unsigned i = 0; i < level; i++)
                if (l->s[i] != '#')
                        return false;
        if (!is_space(l->s[level]))
                return false;
        const char *s = l->s + level;
        size_t n = l->n - level;
        trim(&s, &n);
        /* a closing sequence of #s is not part of the heading (CommonMark §4.2) */
        while (n > 0 && s[n - 1] == '#')
                n--;
        trim(&s, &n);
        if (n == 0)
                return false;
        *ret = s;
        *ret_n = n;
        return true;
}

static bool heading_is(const char *s, size_t n, const char *name)
{
        return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

static int find_sections(Parser *p)
{
        Section *cur = NULL;
        for (size_t i = 0; i < p->n_lines; i++) {
                const char *h;
                size_t hn;
                if (!heading_of(&p->lines[i], 2, &h, &hn))
                        continue;
                if (cur)
                        cur->end = i;
                Section *s = NULL;
                const char *canonical = NULL;
                if (heading_is(h, hn, "prompt") || heading_is(h, hn, "task"))
                        s = &p->prompt, canonical = "Prompt";
                else if (heading_is(h, hn, "success criteria") || heading_is(h, hn, "checks"))
                        s = &p->criteria, canonical = "Success Criteria";
                else if (heading_is(h, hn, "setup"))
                        s = &p->setup, canonical = "Setup";
                else if (heading_is(h, hn, "expected behavior"))
                        s = &p->expected, canonical = "Expected Behavior";
                else if (heading_is(h, hn, "config"))
                        s = &p->config, canonical = "Config";
                else if (heading_is(h, hn, "seed state"))
                        s = &p->seed, canonical = "Seed State";
                cur = s;
                if (!s)
                        continue; /* a section of prose the grader does not read */
                /* a second one would silently replace the first (hosted Pome keeps the last) */
                if (s->heading)
                        return fail(p, (unsigned)i + 1,
                                    "a second ## %s section (the first is "
                                    "at line %u)",
                                    canonical, s->heading);
                *s = (Section){.heading = (unsigned)i + 1, .first = i + 1, .end = p->n_lines};
        }
        return 0;
}

/* The lines [first, end) joined by '\n', trimmed of blank lines and blanks around. New. */
static char *join(const Parser *p, size_t first, size_t end)
{
        size_t len = 0;
        for (size_t i = first; i < end; i++)
                len += p->lines[i].n + 1;
        char *out = malloc(len + 1), *w = out;
        if (!out)
                return NULL;
        for (size_t i = first; i < end; i++) {
                memcpy(w, p->lines[i].s, p->lines[i].n);
                w += p->lines[i].n;
                *w++ = '\n';
        }
        *w = 0;
        /* trim whitespace (line breaks included) at both ends */
        char *s = out;
        while (*s && strchr(" \t\r\n", *s))
                s++;
        size_t n = strlen(s);
        while (n > 0 && strchr(" \t\r\n", s[n - 1]))
                n--;
        memmove(out, s, n);
        out[n] = 0;
        return out;
}

static char *section_text(const Parser *p, const Section *s)
{
        return s->heading ? join(p, s->first, s->end) : strdup("");
}

/*
 * The body of a data section (## Config, ## Seed State): the first fenced block's content
 * when the section has one (its info string, "yaml" or "json", ignored), else the whole
 * section. *ret_line is the 1-based file line its first byte is on. New string.
 */
static char *section_data(const Parser *p, const Section *s, unsigned *ret_line)
{
        for (size_t i = s->first; i < s->end; i++) {
                char c;
                size_t run = fence_of(&p->lines[i], &c);
                if (!run)
                        continue;
                size_t close = i + 1;
                while (close < s->end) {
                        char c2;
                        if (fence_of(&p->lines[close], &c2) >= run && c2 == c)
                                break;
                        close++;
                }
                *ret_line = (unsigned)i + 2;
                size_t len = 0;
                for (size_t k = i + 1; k < close; k++)
                        len += p->lines[k].n + 1;
                char *out = malloc(len + 1), *w = out;
                if (!out)
                        return NULL;
                for (size_t k = i + 1; k < close; k++) {
                        memcpy(w, p->lines[k].s, p->lines[k].n);
                        w += p->lines[k].n;
                        *w++ = '\n';
                }
                *w = 0;
                return out;
        }
        *ret_line = (unsigned)s->first + 1;
        size_t len = 0;
        for (size_t k = s->first; k < s->end; k++)
                len += p->lines[k].n + 1;
        char *out = malloc(len + 1), *w = out;
        if (!out)
                return NULL;
        for (size_t k = s->first; k < s->end; k++) {
                memcpy(w, p->lines[k].s, p->lines[k].n);
                w += p->lines[k].n;
                *w++ = '\n';
        }
        *w = 0;
        return out;
}

/* ---------------------------------------------------------------- ## Config */

static unsigned yaml_line(const json_t *lines, const char *ptr, unsigned base)
{
        json_t *l = json_object_get(lines, ptr);
        return base + (json_is_integer(l) ? (unsigned)json_integer_value(l) - 1 : 0);
}

static bool is_blank_text(const char *s)
{
        for (; *s; s++)
                if (!strchr(" \t\r\n", *s))
                        return false;
        return true;
}

static int parse_config(Parser *p)
{
        GradeTask *t = p->t;
        t->timeout_sec = 60;
        t->runs = 1;
        t->pass_threshold = 100;
        int r;
        _cleanup_json_ json_t *cfg = NULL, *lines = NULL;
        unsigned base = p->config.heading;
        if (p->config.heading) {
                _cleanup_free_ char *yaml = section_data(p, &p->config, &base);
                if (!yaml)
                        return -ENOMEM;
                if (!is_blank_text(yaml)) {
                        char err[300];
                        r = yamljson_parse(yaml, strlen(yaml), &cfg, &lines, err, sizeof(err));
                        if (r == -EINVAL) {
                                /* "line N: why" → the file's line */
                                unsigned yl = 1;
                                int skip = 0;
                                if (sscanf(err, "line %u: %n", &yl, &skip) < 1 || skip == 0)
                                        skip = 0, yl = 1;
                                /* an unterminated construct is noticed at the end of the
                                 * text: name the section's last line, not one past the file */
                                unsigned line = base + yl - 1, last = p->config.heading;
                                for (size_t i = p->config.first; i < p->config.end; i++)
                                        if (p->lines[i].n > 0)
                                                last = (unsigned)i + 1;
                                return fail(p, line < last ? line : last,
                                            "## Config is not valid YAML: %s", err + skip);
                        }
                        if (r < 0)
                                return r;
                        if (!json_is_object(cfg))
                                return fail(p, base, "## Config must be a YAML mapping");
                }
        }
        json_t *twins = json_object_get(cfg, "twins");
        if (twins) {
                unsigned line = yaml_line(lines, "/twins", base);
                if (!json_is_array(twins) || json_array_size(twins) == 0)
                        return fail(p, line, "twins must be a list of 1 to 3 twins");
                if (json_array_size(twins) > 3)
                        return fail(p, line, "a sandbox holds at most 3 twins, the task lists %zu",
                                    json_array_size(twins));
                size_t i;
                json_t *v;
                json_array_foreach (twins, i, v) {
                        char ptr[32];
                        snprintf(ptr, sizeof(ptr), "/twins/%zu", i);
                        unsigned l = yaml_line(lines, ptr, base);
                        const char *name = json_string_value(v);
                        if (!name)
                                return fail(p, l, "twins[%zu] must be a twin's name", i);
                        if (!twin_kind_find(name))
                                return fail(p, l,
                                            "unknown twin \"%s\" (known: github, slack, "
                                            "stripe)",
                                            name);
                        if (strv_contains(t->twins, name))
                                return fail(p, l, "twin \"%s\" is listed twice", name);
                        if ((r = strv_extend(&t->twins, name)) < 0)
                                return r;
                }
        } else if ((r = strv_extend(&t->twins, "github")) < 0)
                return r; /* hosted Pome's default */

        const char *key;
        json_t *v;
        json_object_foreach (cfg, key, v) {
                char ptr[300];
                snprintf(ptr, sizeof(ptr), "/%s", key);
                unsigned line = yaml_line(lines, ptr, base);
                if (streq(key, "twins"))
                        continue;
                if (streq(key, "timeout") || streq(key, "runs")) {
                        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                            json_integer_value(v) > 86400)
                                return fail(p, line, "%s must be a positive integer%s", key,
                                            streq(key, "timeout") ? " of seconds" : "");
                        *(streq(key, "timeout") ? &t->timeout_sec : &t->runs) =
                                (unsigned)json_integer_value(v);
                } else if (streq(key, "passThreshold")) {
                        if (!json_is_number(v) || json_number_value(v) < 0 ||
                            json_number_value(v) > 100)
                                return fail(p, line,
                                            "passThreshold must be a number from 0 to "
                                            "100 (percent)");
                        t->pass_threshold = json_number_value(v);
                } else if (streq(key, "class")) {
                        const char *c = json_string_value(v);
                        if (!c || !(streq(c, "conformance") || streq(c, "restraint") ||
                                    streq(c, "adversarial")))
                                return fail(p, line,
                                            "class must be conformance, restraint or "
                                            "adversarial");
                        if (!(t->task_class = strdup(c)))
                                return -ENOMEM;
                } else if ((r = warn(p, line, "unknown ## Config key \"%s\" ignored", key)) < 0)
                        return r;
        }
        return 0;
}

/* ---------------------------------------------------------------- ## Success Criteria */

static bool word_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
}

/* hosted Pome's near-miss guard: a bullet whose bracket names code or model as a word. */
static bool near_miss(const char *s, size_t n)
{
        if (n < 1 || (s[0] != '-' && s[0] != '*'))
                return false;
        size_t i = 1;
        while (i < n && is_space(s[i]))
                i++;
        if (i >= n || s[i++] != '[')
                return false;
        while (i < n && is_space(s[i]))
                i++;
        size_t w;
        if (n - i >= 4 && memcmp(s + i, "code", 4) == 0)
                w = 4;
        else if (n - i >= 5 && memcmp(s + i, "model", 5) == 0)
                w = 5;
        else
                return false;
        i += w;
        if (i < n && word_char(s[i]))
                return false;
        return memchr(s + i, ']', n - i) != NULL;
}

/* The length of s's list bullet ("- ", "* ", "+ ", "1. ", "2) "), blanks after it included;
 * 0 when the line is not a list item. A bullet glued to a bracket ("-[code]") counts too:
 * it is a list item that reaches for a marker. */
static size_t bullet_of(const char *s, size_t n)
{
        size_t i = 0;
        if (n > 0 && (s[0] == '-' || s[0] == '*' || s[0] == '+'))
                i = 1;
        else {
                while (i < n && i < 9 && s[i] >= '0' && s[i] <= '9')
                        i++;
                if (i == 0 || i >= n || (s[i] != '.' && s[i] != ')'))
                        return 0;
                i++;
        }
        size_t ws = i;
        while (i < n && is_space(s[i]))
                i++;
        if (i == ws && !(i < n && s[i] == '['))
                return 0; /* "---", "-1", "2.5": not a list item */
        return i < n ? i : 0;
}

/* Whether s (n bytes) starts with word (ASCII, any case) followed by ':', ']', a blank or the
 * end; *ret_exact says whether it is spelt as given. */
static bool starts_with_word(const char *s, size_t n, const char *word, bool *ret_exact)
{
        size_t w = strlen(word);
        if (n < w || strncasecmp(s, word, w) != 0)
                return false;
        if (w < n && s[w] != ':' && s[w] != ']' && !is_space(s[w]))
                return false;
        *ret_exact = memcmp(s, word, w) == 0;
        return true;
}

/*
 * A line of ## Success Criteria that is not a criterion (parse_criterion found no marker):
 * one that reaches for a marker — a near miss of hosted Pome's, or, after an optional
 * bullet, a '[' or the word code or model (any case) followed by ':', ']' or a blank — is
 * refused naming the line, since dropping it would silently grade one criterion fewer; any
 * other list item is kept as a warning; prose is prose. 0, -EINVAL, -ENOMEM.
 */
static int not_a_criterion(Parser *p, unsigned lineno, const char *s, size_t n)
{
        static const char grammar[] = "write - [code] …, - [code:<twin>] …, - [code:<twin> "
                                      "always-scored] … or - [model] …";
        int shown = (int)(n > 120 ? 120 : n);
        if (near_miss(s, n))
                return fail(p, lineno,
                            "\"%.*s\" reaches for a criterion marker but is not one: write "
                            "[code], [code:<twin>], [code:<twin> always-scored] or [model]",
                            shown, s);
        size_t b = bullet_of(s, n);
        const char *rest = s + b;
        size_t rn = n - b;
        bool exact = false;
        const char *hint = NULL;
        if (rn > 0 && rest[0] == '[') {
                /* a Markdown task-list box is a list item, not a marker */
                if (b > 0 && rn >= 3 && strchr(" xX", rest[1]) && rest[2] == ']' &&
                    (rn == 3 || is_space(rest[3])))
                        return warn(p, lineno,
                                    "not a criterion: no [code] or [model] marker; it is not "
                                    "graded");
                const char *w = rest + 1;
                size_t wn = rn - 1;
                while (wn > 0 && is_space(*w))
                        w++, wn--;
                if (starts_with_word(w, wn, "code", &exact) ||
                    starts_with_word(w, wn, "model", &exact)) {
                        if (!exact)
                                hint = "markers are lower case";
                        else if (b == 0)
                                hint = "a criterion is a list item: start the line with \"- \"";
                        else if (s[0] != '-' && s[0] != '*')
                                hint = "a criterion's bullet is \"- \" or \"* \"";
                        else
                                hint = "the marker is malformed";
                } else
                        hint = "a bracket there opens a marker, and [code] and [model] are the "
                               "only ones";
        } else if (starts_with_word(rest, rn, "code", &exact) ||
                   starts_with_word(rest, rn, "model", &exact))
                hint = "a marker goes in brackets";
        if (hint)
                return fail(p, lineno,
                            "\"%.*s\" reaches for a criterion marker but is not one (%s): %s",
                            shown, s, hint, grammar);
        if (b > 0)
                return warn(p, lineno,
                            "not a criterion: no [code] or [model] marker; it is not graded");
        return 0;
}

/*
 * One criterion line: hosted Pome's grammar
 *   ^[-*]\s+\[(code|model)(?::([a-z][a-z0-9_-]*))?(\s+always-scored)?\]\s+(.+)$
 * plus `always-scored` as the sentence's first word. 1 with the criterion filled, 0 when the
 * line is not one (prose, or a list item kept as a warning), -EINVAL for a line that reaches
 * for a marker and misses (not_a_criterion), -ENOMEM.
 */
static int parse_criterion(Parser *p, unsigned lineno, const char *s, size_t n, GradeCriterion *ret)
{
        size_t i = 0;
        bool ok = n > 0 && (s[0] == '-' || s[0] == '*');
        i = 1;
        if (ok) {
                size_t ws = i;
                while (i < n && is_space(s[i]))
                        i++;
                ok = i > ws && i < n && s[i] == '[';
        }
        GradeCriterionKind kind = GRADE_CRITERION_CODE;
        const char *tag = NULL;
        size_t tag_n = 0;
        bool always = false;
        if (ok) {
                i++;
                if (n - i >= 4 && memcmp(s + i, "code", 4) == 0)
                        i += 4;
                else if (n - i >= 5 && memcmp(s + i, "model", 5) == 0) {
                        kind = GRADE_CRITERION_MODEL;
                        i += 5;
                } else
                        ok = false;
        }
        if (ok && i < n && s[i] == ':') {
                i++;
                tag = s + i;
                if (i < n && s[i] >= 'a' && s[i] <= 'z') {
                        while (i < n &&
                               ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
                                s[i] == '_' || s[i] == '-'))
                                i++;
                        tag_n = (size_t)(s + i - tag);
                } else
                        ok = false;
        }
        if (ok && i < n && is_space(s[i])) {
                while (i < n && is_space(s[i]))
                        i++;
                if (n - i >= 13 && memcmp(s + i, "always-scored", 13) == 0) {
                        always = true;
                        i += 13;
                } else
                        ok = false;
        }
        if (ok)
                ok = i < n && s[i++] == ']';
        if (ok) {
                size_t ws = i;
                while (i < n && is_space(s[i]))
                        i++;
                ok = i > ws && i < n;
        }
        if (!ok) {
                int r = not_a_criterion(p, lineno, s, n);
                return r < 0 ? r : 0;
        }
        const char *text = s + i;
        size_t tn = n - i;
        /* the brief's spelling: `- [code:slack] always-scored No message …` */
        if (tn > 14 && memcmp(text, "always-scored", 13) == 0 && is_space(text[13])) {
                always = true;
                text += 13;
                tn -= 13;
                trim(&text, &tn);
        }
        if (always && kind == GRADE_CRITERION_MODEL)
                return fail(p, lineno,
                            "always-scored applies to [code] criteria only: a "
                            "[model] criterion is never graded against the seed");
        *ret = (GradeCriterion){.line = lineno, .kind = kind, .always_scored = always};
        if (tag && !(ret->twin = strndup(tag, tag_n)))
                return -ENOMEM;
        if (!(ret->text = strndup(text, tn))) {
                free(ret->twin);
                return -ENOMEM;
        }
        return 1;
}

static int parse_criteria(Parser *p)
{
        GradeTask *t = p->t;
        if (!p->criteria.heading)
                return fail(p, (unsigned)p->n_lines, "the task has no ## Success Criteria section");
        size_t cap = 0;
        for (size_t i = p->criteria.first; i < p->criteria.end; i++) {
                const Line *l = &p->lines[i];
                if (l->fenced)
                        continue;
                const char *s = l->s;
                size_t n = l->n;
                trim(&s, &n);
                GradeCriterion c;
                int r = parse_criterion(p, (unsigned)i + 1, s, n, &c);
                if (r <= 0) {
                        if (r < 0)
                                return r;
                        continue;
                }
                if (t->n_criteria == cap) {
                        GradeCriterion *a =
                                realloc(t->criteria, (cap = cap ? cap * 2 : 8) * sizeof(*a));
                        if (!a) {
                                free(c.twin);
                                free(c.text);
                                return -ENOMEM;
                        }
                        t->criteria = a;
                }
                t->criteria[t->n_criteria++] = c;
                if (c.twin && !twin_kind_find(c.twin))
                        return fail(p, c.line, "unknown twin \"%s\" in [%s:%s]", c.twin,
                                    c.kind == GRADE_CRITERION_CODE ? "code" : "model", c.twin);
                if (c.twin && !strv_contains(t->twins, c.twin)) {
                        char list[64] = "";
                        for (size_t k = 0, at = 0; t->twins[k] && at < sizeof(list); k++)
                                at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
                                                       k ? ", " : "", t->twins[k]);
                        return fail(p, c.line,
                                    "a criterion for the %s twin, which the task "
                                    "does not have (its twins: %s)",
                                    c.twin, list);
                }
        }
        if (t->n_criteria == 0)
                return fail(p, p->criteria.heading,
                            "## Success Criteria lists no criterion (- [code] … or - [model] …)");
        return 0;
}

/* ---------------------------------------------------------------- ## Seed State */

/* A seed for several twins: every member but _meta names a twin and holds an object. */
static bool is_envelope(const json_t *seed)
{
        const char *k;
        json_t *v;
        size_t twins = 0;
        json_object_foreach ((json_t *)seed, k, v) {
                if (streq(k, "_meta"))
                        continue;
                if (!twin_kind_find(k) || !json_is_object(v))
                        return false;
                twins++;
        }
        return twins > 0;
}

/* The sidecar's name for messages: "task.md" → "task.seed.json". */
static void sidecar_name(const char *name, char *buf, size_t len)
{
        size_t n = strlen(name);
        if (n > 3 && strcasecmp(name + n - 3, ".md") == 0)
                n -= 3;
        snprintf(buf, len, "%.*s.seed.json", (int)n, name);
}

static int parse_seed(Parser *p, const json_t *sidecar)
{
        GradeTask *t = p->t;
        char side[128];
        sidecar_name(p->name, side, sizeof(side));
        _cleanup_json_ json_t *inline_seed = NULL;
        unsigned line = p->seed.heading;
        if (p->seed.heading) {
                _cleanup_free_ char *text = section_data(p, &p->seed, &line);
                if (!text)
                        return -ENOMEM;
                const char *s = text;
                while (*s && strchr(" \t\r\n", *s))
                        s++;
                if (*s == '{' || *s == '[') {
                        json_error_t je;
                        inline_seed = json_loads(text, JSON_REJECT_DUPLICATES, &je);
                        if (!inline_seed && !sidecar)
                                return fail(p, line + (je.line > 0 ? (unsigned)je.line - 1 : 0),
                                            "## Seed State is not valid JSON: %s", je.text);
                        if (inline_seed && !json_is_object(inline_seed) && !sidecar)
                                return fail(p, line, "## Seed State must be a JSON object");
                } else if (*s && !sidecar)
                        /* prose is compiled into the sidecar (hosted Pome's pome compile-seeds) */
                        return fail(p, p->seed.heading,
                                    "## Seed State is prose and there is no %s sidecar "
                                    "compiled from it",
                                    side);
        }
        const json_t *seed = sidecar ? sidecar : inline_seed;
        const char *where = sidecar ? side : NULL;
        if (!(t->seeds = json_object()))
                return -ENOMEM;
        if (!seed)
                return 0;
        if (!json_is_object(seed))
                return where ? fail(p, 1, "%s must hold a JSON object", where)
                             : fail(p, line, "## Seed State must be a JSON object");
        bool several = t->twins[1] != NULL;
        int r;
        if (is_envelope(seed)) {
                const char *k;
                json_t *v;
                json_object_foreach ((json_t *)seed, k, v) {
                        if (streq(k, "_meta"))
                                continue;
                        if (!strv_contains(t->twins, k)) {
                                if (where)
                                        snprintf(p->e->message, sizeof(p->e->message),
                                                 "%s: a seed for the %s twin, which %s does not "
                                                 "have",
                                                 where, k, p->name);
                                return where ? -EINVAL
                                             : fail(p, line,
                                                    "a seed for the %s twin, which the "
                                                    "task does not have",
                                                    k);
                        }
                        if (json_object_set(t->seeds, k, v) < 0)
                                return -ENOMEM;
                }
        } else if (several) {
                if (where) {
                        snprintf(p->e->message, sizeof(p->e->message),
                                 "%s: a task with several twins needs its seed as {\"<twin>\": "
                                 "seed, …}",
                                 where);
                        return -EINVAL;
                }
                return fail(p, line,
                            "a task with several twins needs its seed as "
                            "{\"<twin>\": seed, …}");
        } else if (json_object_set(t->seeds, t->twins[0], (json_t *)seed) < 0)
                return -ENOMEM;
        /* refuse a seed its twin would refuse at sandbox creation, with the twin's words */
        const char *k;
        json_t *v;
        json_object_foreach (t->seeds, k, v) {
                char err[300];
                Twin *tw = NULL;
                r = twin_new(twin_kind_find(k), v, &tw, err, sizeof(err));
                twin_free(tw);
                if (r == -EINVAL) {
                        if (where) {
                                snprintf(p->e->message, sizeof(p->e->message),
                                         "%s: the %s seed: %s", where, k, err);
                                return -EINVAL;
                        }
                        return fail(p, line, "the %s seed: %s", k, err);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---------------------------------------------------------------- the task */

static int parse_title(Parser *p)
{
        for (size_t i = 0; i < p->n_lines; i++) {
                const char *h;
                size_t hn;
                if (heading_of(&p->lines[i], 1, &h, &hn))
                        return (p->t->title = strndup(h, hn)) ? 0 : -ENOMEM;
        }
        size_t n = strlen(p->name);
        if (n > 3 && strcasecmp(p->name + n - 3, ".md") == 0)
                n -= 3;
        return (p->t->title = strndup(p->name, n)) ? 0 : -ENOMEM;
}

int grade_task_parse(const char *text, size_t len, const char *name, const json_t *sidecar_seed,
                     GradeTask **ret, GradeError *e)
{
        GradeError scratch;
        Parser p = {.name = name ? name : "task.md", .e = e ? e : &scratch};
        if (len > TASK_MAX_BYTES)
                return fail(&p, 1, "larger than %u bytes", TASK_MAX_BYTES);
        /* text must be UTF-8 without NULs: every string of it lands in JSON */
        for (size_t i = 0, line = 1; i < len;) {
                size_t k = text[i] ? utf8_char_len(text + i, len - i) : 0;
                if (k == 0)
                        return fail(&p, (unsigned)line, "not valid UTF-8 text");
                if (text[i] == '\n')
                        line++;
                i += k;
        }
        _cleanup_(grade_task_freep) GradeTask *t = calloc(1, sizeof(GradeTask));
        if (!t)
                return -ENOMEM;
        p.t = t;
        int r;
        if (!(t->name = strdup(p.name)) || split_lines(&p, text ? text : "", len) < 0) {
                free(p.lines);
                return -ENOMEM;
        }
        if ((r = find_sections(&p)) >= 0 && (r = parse_title(&p)) >= 0 &&
            (r = parse_config(&p)) >= 0) {
                if (!p.prompt.heading)
                        r = fail(&p, (unsigned)p.n_lines, "the task has no ## Prompt section");
                else if (!(t->prompt = section_text(&p, &p.prompt)))
                        r = -ENOMEM;
                else if (!t->prompt[0])
                        r = fail(&p, p.prompt.heading, "## Prompt is empty");
        }
        if (r >= 0 && !((t->setup = section_text(&p, &p.setup)) &&
                        (t->expected_behavior = section_text(&p, &p.expected))))
                r = -ENOMEM;
        if (r >= 0)
                r = parse_criteria(&p);
        if (r >= 0)
                r = parse_seed(&p, sidecar_seed);
        free(p.lines);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int grade_task_load(const char *path, GradeTask **ret, GradeError *e)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_file_at(AT_FDCWD, path, TASK_MAX_BYTES, &text, &len);
        if (r < 0) {
                if (e)
                        snprintf(e->message, sizeof(e->message), "%s: %s", path,
                                 r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
                return r;
        }
        size_t n = strlen(path);
        _cleanup_free_ char *side = NULL;
        if (n > 3 && strcasecmp(path + n - 3, ".md") == 0) {
                if (asprintf(&side, "%.*s.seed.json", (int)(n - 3), path) < 0)
                        return -ENOMEM;
        } else if (asprintf(&side, "%s.seed.json", path) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *sidecar = NULL;
        if (access(side, F_OK) == 0) {
                json_error_t je;
                sidecar = json_load_file(side, JSON_REJECT_DUPLICATES, &je);
                if (!sidecar) {
                        if (e)
                                snprintf(e->message, sizeof(e->message),
                                         "%s:%d: not valid JSON: %s", side, je.line, je.text);
                        return -EINVAL;
                }
        }
        const char *base = strrchr(path, '/');
        return grade_task_parse(text, len, base ? base + 1 : path, sidecar, ret, e);
}
