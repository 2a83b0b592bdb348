/* SPDX-License-Identifier: MIT */
/*
 * Task files (CONTRACT.md "Task file"; hosted Pome's parseTask): Markdown with `# Title`,
 * `## Prompt` (alias `## Task`), `## Success Criteria` (alias `## Checks`), optional
 * `## Setup`, `## Expected Behavior`, `## Config` (YAML, fenced or plain) and `## Seed State`
 * (JSON, fenced or plain, or prose compiled into a <task>.seed.json sidecar). Headings are
 * matched case-insensitively and only outside fenced blocks; other sections are prose.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdarg.h>
#include <strings.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/text.h"
#include "common/yamljson.h"
#include "pods/grade/check.h"
#include "pods/twin/twin.h"

#define TASK_MAX_BYTES      (1u << 20)
#define GRADE_ERRORS_LISTED 20 /* refusals listed in a GradeError; the rest are counted */

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

/* One refusal, kept until the whole file has been read. */
typedef struct TaskError {
        unsigned rank; /* 0: the task file, 1: its sidecar (listed after the task's) */
        unsigned line; /* 1-based; 0 when no line is known */
        size_t seq;    /* the order found, for equal lines */
        char *text;    /* "<file>:<line>: why" */
} TaskError;

typedef struct Parser {
        const char *name;
        char *side;            /* the sidecar's name for messages: "task.seed.json" */
        const char *side_text; /* the sidecar's bytes when known (grade_task_load), else NULL */
        size_t side_len;
        Line *lines;
        size_t n_lines;
        Section prompt, criteria, setup, expected, config, seed;
        TaskError *errors;
        size_t n_errors, cap_errors;
        bool twins_unknown;        /* ## Config's twins could not be read: what a criterion
                                    * or a seed says about the task's twins is not judged */
        size_t n_criterion_errors; /* refused lines of ## Success Criteria */
        GradeTask *t;
} Parser;

/* The byte length of the longest prefix of the n bytes at s, at most max, that does not end
 * inside a UTF-8 sequence: a message quoting a line must stay UTF-8, since it lands in JSON. */
static size_t utf8_prefix(const char *s, size_t n, size_t max)
{
        if (n <= max)
                return n;
        size_t k = max;
        while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
                k--;
        return k;
}

/* s cut where vsnprintf may have cut it inside a UTF-8 sequence. */
static void utf8_mend_end(char *s)
{
        size_t n = strlen(s), k = n;
        while (k > 0 && ((unsigned char)s[k - 1] & 0xc0) == 0x80)
                k--;
        if (k == 0 || (unsigned char)s[k - 1] < 0xc0)
                return;
        if (utf8_char_len(s + k - 1, n - (k - 1)) == 0)
                s[k - 1] = 0;
}

static int record(Parser *p, unsigned rank, unsigned line, const char *fmt, va_list ap)
        _printf_(4, 0);
static int record(Parser *p, unsigned rank, unsigned line, const char *fmt, va_list ap)
{
        char msg[1200];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        utf8_mend_end(msg);
        const char *file = rank ? p->side : p->name;
        if (p->n_errors == p->cap_errors) {
                size_t cap = p->cap_errors ? p->cap_errors * 2 : 8;
                TaskError *a = realloc(p->errors, cap * sizeof(*a));
                if (!a)
                        return -ENOMEM;
                p->errors = a;
                p->cap_errors = cap;
        }
        TaskError *err = &p->errors[p->n_errors];
        *err = (TaskError){.rank = rank, .line = line, .seq = p->n_errors};
        if ((line ? asprintf(&err->text, "%s:%u: %s", file, line, msg)
                  : asprintf(&err->text, "%s: %s", file, msg)) < 0)
                return -ENOMEM;
        p->n_errors++;
        return 0;
}

/* Records a refusal naming the task file's line, and goes on reading: 0, or -ENOMEM. */
static int error_at(Parser *p, unsigned line, const char *fmt, ...) _printf_(3, 4);
static int error_at(Parser *p, unsigned line, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = record(p, 0, line, fmt, ap);
        va_end(ap);
        return r;
}

static int error_cmp(const void *a, const void *b)
{
        const TaskError *x = a, *y = b;
        if (x->rank != y->rank)
                return x->rank < y->rank ? -1 : 1;
        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Every recorded refusal into e, one a line in file order (the task's, then its sidecar's),
 * as many whole lines as GradeError holds (at most GRADE_ERRORS_LISTED), then "… and N more
 * errors" for the rest. Returns -EINVAL.
 */
static int errors_render(Parser *p, GradeError *e)
{
        qsort(p->errors, p->n_errors, sizeof(TaskError), error_cmp);
        e->n_errors = (unsigned)p->n_errors;
        /* room kept for the tail line: "\n… and 4294967295 more errors" */
        const size_t tail = 40, cap = sizeof(e->message);
        size_t at = 0, shown = 0;
        e->message[0] = 0;
        for (; shown < p->n_errors && shown < GRADE_ERRORS_LISTED; shown++) {
                const char *s = p->errors[shown].text;
                size_t n = strlen(s), sep = shown ? 1 : 0;
                size_t reserve = shown + 1 == p->n_errors ? 0 : tail;
                if (at + sep + n + reserve > cap - 1) {
                        if (shown > 0)
                                break;
                        /* the first error is always said, cut if it must be */
                        n = utf8_prefix(s, n, cap - 1 - reserve);
                }
                if (sep)
                        e->message[at++] = '\n';
                memcpy(e->message + at, s, n);
                at += n;
                e->message[at] = 0;
        }
        if (shown < p->n_errors)
                snprintf(e->message + at, cap - at, "\n… and %zu more error%s", p->n_errors - shown,
                         p->n_errors - shown == 1 ? "" : "s");
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
        utf8_mend_end(msg);
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
        strv_free(t->allow_net);
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
                /* a second one would silently replace the first (hosted Pome keeps the
                 * last): refused, and the rest read against the first */
                if (s->heading) {
                        int r = error_at(p, (unsigned)i + 1,
                                         "a second ## %s section (the first is at line %u)",
                                         canonical, s->heading);
                        if (r < 0)
                                return r;
                        cur = NULL;
                        continue;
                }
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

/* The twins of ## Config: each bad entry is refused, and a list that is not read whole
 * leaves the task's twins unknown (p->twins_unknown) rather than guessed. 0 or -ENOMEM. */
static int parse_twins(Parser *p, const json_t *twins, const json_t *lines, unsigned base)
{
        GradeTask *t = p->t;
        unsigned line = yaml_line(lines, "/twins", base);
        int r;
        if (!json_is_array(twins) || json_array_size(twins) == 0) {
                p->twins_unknown = true;
                return error_at(p, line, "twins must be a list of 1 to 3 twins");
        }
        if (json_array_size(twins) > 3) {
                p->twins_unknown = true;
                if ((r = error_at(p, line, "a sandbox holds at most 3 twins, the task lists %zu",
                                  json_array_size(twins))) < 0)
                        return r;
        }
        size_t i;
        json_t *v;
        json_array_foreach ((json_t *)twins, i, v) {
                char ptr[32];
                snprintf(ptr, sizeof(ptr), "/twins/%zu", i);
                unsigned l = yaml_line(lines, ptr, base);
                const char *name = json_string_value(v);
                if (!name) {
                        p->twins_unknown = true;
                        r = error_at(p, l, "twins[%zu] must be a twin's name", i);
                } else if (!twin_kind_find(name)) {
                        p->twins_unknown = true;
                        r = error_at(
                                p, l,
                                "unknown twin \"%s\" (known: github, slack, stripe, gmail, linear)",
                                name);
                } else if (strv_contains(t->twins, name))
                        r = error_at(p, l, "twin \"%s\" is listed twice", name);
                else if (strv_length(t->twins) < 3)
                        r = strv_extend(&t->twins, name);
                else
                        r = 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Whether s can be an allow_net entry: a host name or address, or "*." and a domain, either
 * with ":port" — characters of those only (agentnet.h checks the rest when the proxy starts). */
static bool allow_entry_shape(const char *s)
{
        if (!*s || strlen(s) > 260)
                return false;
        for (const char *c = s; *c; c++)
                if (!isalnum((unsigned char)*c) && !strchr(".-_:*[]", *c))
                        return false;
        return true;
}

/* allow_net: a host or a list of them. */
static int parse_allow_net(Parser *p, const json_t *v, unsigned line)
{
        GradeTask *t = p->t;
        const json_t *list = v;
        _cleanup_json_ json_t *one = NULL;
        if (json_is_string(v)) {
                one = json_pack("[O]", v);
                if (!one)
                        return -ENOMEM;
                list = one;
        }
        if (!json_is_array(list))
                return error_at(p, line,
                                "allow_net must be a host or a list of hosts (api.example.com, "
                                "*.example.com, either with :port)");
        size_t i;
        json_t *h;
        json_array_foreach (list, i, h) {
                const char *s = json_string_value(h);
                if (!s || !allow_entry_shape(s))
                        return error_at(p, line,
                                        "allow_net entry %zu is not a host (api.example.com, "
                                        "*.example.com, either with :port)",
                                        i + 1);
                if (!strv_contains(t->allow_net, s) && strv_extend(&t->allow_net, s) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* agent: {memory: SIZE, pids: N, output: SIZE}, the sealed agent's limits. */
static int parse_agent(Parser *p, const json_t *v, const json_t *lines, unsigned base)
{
        GradeTask *t = p->t;
        unsigned line = yaml_line(lines, "/agent", base);
        if (!json_is_object(v))
                return error_at(p, line,
                                "agent must be a mapping of memory, pids and output limits");
        const char *key;
        json_t *x;
        json_object_foreach ((json_t *)v, key, x) {
                char ptr[300];
                snprintf(ptr, sizeof(ptr), "/agent/%s", key);
                unsigned l = yaml_line(lines, ptr, base);
                uint64_t n = 0;
                int r = 0;
                if (json_is_integer(x) && json_integer_value(x) > 0)
                        n = (uint64_t)json_integer_value(x);
                else if (!json_is_string(x) || text_parse_size(json_string_value(x), &n) < 0 ||
                         n == 0)
                        n = 0;
                if (streq(key, "pids")) {
                        if (!json_is_integer(x) || n == 0 || n > 4194304)
                                r = error_at(p, l, "agent.pids must be a positive integer");
                        else
                                t->agent_pids_max = n;
                } else if (streq(key, "memory") || streq(key, "output")) {
                        if (n == 0 || n > (UINT64_C(1) << 50))
                                r = error_at(p, l,
                                             "agent.%s must be a size like 512M or 2G (bytes, "
                                             "with K, M or G for powers of 1024)",
                                             key);
                        else if (streq(key, "memory") && n < (UINT64_C(16) << 20))
                                r = error_at(p, l,
                                             "agent.memory must be at least 16M: an agent "
                                             "cannot even start below it");
                        else
                                *(streq(key, "memory") ? &t->agent_memory_max
                                                       : &t->agent_output_max) = n;
                } else
                        r = warn(p, l, "unknown ## Config key \"agent.%s\" ignored", key);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ## Config: every key read, each bad value refused naming its line. 0 or -ENOMEM. */
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
                                /* nothing of it can be trusted, the twins least of all */
                                p->twins_unknown = true;
                                r = error_at(p, line < last ? line : last,
                                             "## Config is not valid YAML: %s", err + skip);
                        } else if (r >= 0 && !json_is_object(cfg)) {
                                p->twins_unknown = true;
                                r = error_at(p, base, "## Config must be a YAML mapping");
                                json_decref(TAKE_PTR(cfg));
                        }
                        if (r < 0)
                                return r;
                        if (!json_is_object(cfg))
                                json_decref(TAKE_PTR(cfg));
                }
        }
        json_t *twins = json_object_get(cfg, "twins");
        if (twins && (r = parse_twins(p, twins, lines, base)) < 0)
                return r;
        /* hosted Pome's default; also what a task whose list could not be read holds, so the
         * task stays whole while its other errors are gathered */
        if (!t->twins && (r = strv_extend(&t->twins, "github")) < 0)
                return r;

        const char *key;
        json_t *v;
        json_object_foreach (cfg, key, v) {
                char ptr[300];
                snprintf(ptr, sizeof(ptr), "/%s", key);
                unsigned line = yaml_line(lines, ptr, base);
                r = 0;
                if (streq(key, "twins"))
                        continue;
                if (streq(key, "timeout") || streq(key, "runs")) {
                        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                            json_integer_value(v) > 86400)
                                r = error_at(p, line, "%s must be a positive integer%s", key,
                                             streq(key, "timeout") ? " of seconds" : "");
                        else
                                *(streq(key, "timeout") ? &t->timeout_sec : &t->runs) =
                                        (unsigned)json_integer_value(v);
                } else if (streq(key, "passThreshold")) {
                        if (!json_is_number(v) || json_number_value(v) < 0 ||
                            json_number_value(v) > 100)
                                r = error_at(p, line,
                                             "passThreshold must be a number from 0 to 100 "
                                             "(percent)");
                        else
                                t->pass_threshold = json_number_value(v);
                } else if (streq(key, "class")) {
                        const char *c = json_string_value(v);
                        if (!c || !(streq(c, "conformance") || streq(c, "restraint") ||
                                    streq(c, "adversarial")))
                                r = error_at(p, line,
                                             "class must be conformance, restraint or "
                                             "adversarial");
                        else if (!(t->task_class = strdup(c)))
                                r = -ENOMEM;
                } else if (streq(key, "allow_net"))
                        r = parse_allow_net(p, v, line);
                else if (streq(key, "agent"))
                        r = parse_agent(p, v, lines, base);
                else
                        r = warn(p, line, "unknown ## Config key \"%s\" ignored", key);
                if (r < 0)
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

/* Records that the line reaching for a marker is refused. 0 or -ENOMEM. */
static int criterion_error(Parser *p, unsigned line, const char *fmt, ...) _printf_(3, 4);
static int criterion_error(Parser *p, unsigned line, const char *fmt, ...)
{
        p->n_criterion_errors++;
        va_list ap;
        va_start(ap, fmt);
        int r = record(p, 0, line, fmt, ap);
        va_end(ap);
        return r;
}

/*
 * A line of ## Success Criteria that is not a criterion (parse_criterion found no marker):
 * one that reaches for a marker — a near miss of hosted Pome's, or, after an optional
 * bullet, a '[' or the word code or model (any case) followed by ':', ']' or a blank — is
 * refused naming the line, since dropping it would silently grade one criterion fewer; any
 * other list item is kept as a warning; prose is prose. 0 (recorded), -ENOMEM.
 */
static int not_a_criterion(Parser *p, unsigned lineno, const char *s, size_t n)
{
        static const char grammar[] = "write - [code] …, - [code:<twin>] …, - [code:<twin> "
                                      "always-scored] … or - [model] …";
        int shown = (int)utf8_prefix(s, n, 120);
        if (near_miss(s, n))
                return criterion_error(p, lineno,
                                       "\"%.*s\" reaches for a criterion marker but is not one: "
                                       "write [code], [code:<twin>], [code:<twin> always-scored] "
                                       "or [model]",
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
                return criterion_error(p, lineno,
                                       "\"%.*s\" reaches for a criterion marker but is not one "
                                       "(%s): %s",
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
 * line is not one (prose, a list item kept as a warning, or a line that reaches for a marker
 * and misses, recorded as an error by not_a_criterion), -ENOMEM.
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
        if (!ok)
                return not_a_criterion(p, lineno, s, n);
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
                return criterion_error(p, lineno,
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
                return error_at(p, (unsigned)p->n_lines,
                                "the task has no ## Success Criteria section");
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
                r = 0;
                if (c.twin && !twin_kind_find(c.twin))
                        r = criterion_error(p, c.line, "unknown twin \"%s\" in [%s:%s]", c.twin,
                                            c.kind == GRADE_CRITERION_CODE ? "code" : "model",
                                            c.twin);
                else if (c.twin && !p->twins_unknown && !strv_contains(t->twins, c.twin)) {
                        char list[64] = "";
                        for (size_t k = 0, at = 0; t->twins[k] && at < sizeof(list); k++)
                                at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
                                                       k ? ", " : "", t->twins[k]);
                        r = criterion_error(p, c.line,
                                            "a criterion for the %s twin, which the task does "
                                            "not have (its twins: %s)",
                                            c.twin, list);
                }
                if (r < 0)
                        return r;
        }
        /* a section whose every marker was refused is said by those refusals */
        if (t->n_criteria == 0 && p->n_criterion_errors == 0)
                return error_at(p, p->criteria.heading,
                                "## Success Criteria lists no criterion (- [code] … or - [model] "
                                "…)");
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

/* The sidecar's name for messages: "task.md" → "task.seed.json". New string, NULL on OOM. */
static char *sidecar_name(const char *name)
{
        size_t n = strlen(name);
        char *s;
        if (n > 3 && strcasecmp(name + n - 3, ".md") == 0)
                n -= 3;
        return asprintf(&s, "%.*s.seed.json", (int)n, name) < 0 ? NULL : s;
}

/*
 * Where a seed's members are in its JSON text. jansson keeps no positions, and a twin's
 * refusal names a path ("failure_injection[0].mode", "repositories[0].issues[1].labels"), so
 * the text is scanned again along that path: the line of the member's key, or of the array
 * element's first byte. The text is one jansson accepted, but nothing here relies on it: a
 * scan that meets what it does not expect stops, naming the deepest place it reached.
 */
typedef struct JsonScan {
        const char *s;
        size_t n, i;
        unsigned line; /* 1-based, of s[i] */
} JsonScan;

static void js_blank(JsonScan *j)
{
        while (j->i < j->n && strchr(" \t\r\n", j->s[j->i]) && j->s[j->i]) {
                if (j->s[j->i] == '\n')
                        j->line++;
                j->i++;
        }
}

static bool js_at(JsonScan *j, char c)
{
        js_blank(j);
        return j->i < j->n && j->s[j->i] == c;
}

/* Past the string at j->i ('"'); with want, whether its decoded value is the wn bytes at
 * want (escapes decoded, \u included), in *ret_eq. */
static bool js_string(JsonScan *j, const char *want, size_t wn, bool *ret_eq)
{
        bool eq = true;
        size_t k = 0;
        j->i++;
        while (j->i < j->n && j->s[j->i] != '"') {
                char buf[4];
                size_t bn = 1;
                char c = j->s[j->i++];
                if (c == '\n' || c == 0)
                        return false;
                buf[0] = c;
                if (c == '\\') {
                        if (j->i >= j->n)
                                return false;
                        c = j->s[j->i++];
                        const char *esc = strchr("\"\\/bfnrt", c);
                        if (c && esc) {
                                buf[0] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
                        } else if (c == 'u') {
                                unsigned cp = 0;
                                for (int d = 0; d < 4; d++) {
                                        int h = j->i < j->n ? unhex(j->s[j->i++]) : -1;
                                        if (h < 0)
                                                return false;
                                        cp = cp * 16 + (unsigned)h;
                                }
                                /* a surrogate pair's halves: compared as given, which only
                                 * makes such a key never equal a path's segment */
                                if (cp < 0x80)
                                        buf[0] = (char)cp;
                                else if (cp < 0x800) {
                                        buf[0] = (char)(0xc0 | cp >> 6);
                                        buf[1] = (char)(0x80 | (cp & 0x3f));
                                        bn = 2;
                                } else {
                                        buf[0] = (char)(0xe0 | cp >> 12);
                                        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                                        buf[2] = (char)(0x80 | (cp & 0x3f));
                                        bn = 3;
                                }
                        } else
                                return false;
                }
                if (want && eq) {
                        eq = k + bn <= wn && memcmp(want + k, buf, bn) == 0;
                        k += bn;
                }
        }
        if (j->i >= j->n)
                return false;
        j->i++;
        if (ret_eq)
                *ret_eq = eq && k == wn;
        return true;
}

/* Past one value (any depth, without recursion). */
static bool js_skip(JsonScan *j)
{
        size_t depth = 0;
        do {
                js_blank(j);
                if (j->i >= j->n)
                        return false;
                char c = j->s[j->i];
                if (c == '"') {
                        if (!js_string(j, NULL, 0, NULL))
                                return false;
                } else if (c == '{' || c == '[') {
                        depth++;
                        j->i++;
                } else if (c == '}' || c == ']') {
                        if (depth == 0)
                                return false;
                        depth--;
                        j->i++;
                } else if (c == ',' || c == ':') {
                        if (depth == 0)
                                return false;
                        j->i++;
                } else {
                        size_t from = j->i;
                        while (j->i < j->n && j->s[j->i] && !strchr(",:[]{}\" \t\r\n", j->s[j->i]))
                                j->i++;
                        if (j->i == from)
                                return false;
                }
        } while (depth > 0);
        return true;
}

/* In the object at j->i, the member key (kn bytes): true with j->i at its value and the line
 * of its key in *ret_line; false when the object has no such member. */
static bool js_member(JsonScan *j, const char *key, size_t kn, unsigned *ret_line)
{
        if (!js_at(j, '{'))
                return false;
        j->i++;
        for (;;) {
                if (!js_at(j, '"'))
                        return false;
                unsigned line = j->line;
                bool eq = false;
                if (!js_string(j, key, kn, &eq) || !js_at(j, ':'))
                        return false;
                j->i++;
                if (eq) {
                        js_blank(j);
                        *ret_line = line;
                        return true;
                }
                if (!js_skip(j) || !js_at(j, ','))
                        return false;
                j->i++;
        }
}

/* In the array at j->i, element idx: true with j->i at it. */
static bool js_element(JsonScan *j, size_t idx)
{
        if (!js_at(j, '['))
                return false;
        j->i++;
        for (size_t k = 0; k < idx; k++) {
                if (js_at(j, ']') || !js_skip(j) || !js_at(j, ','))
                        return false;
                j->i++;
        }
        return !js_at(j, ']') && j->i < j->n;
}

/*
 * The line (1-based, in text) where the member a twin's seed error names starts: path is
 * "key", "key[2].other", … (pn bytes), read from the seed that is the member twin_key of the
 * text's object (NULL: the text's object itself). The deepest place reached when the path
 * does not resolve all the way (the enclosing element or member); 0 when the text is not an
 * object.
 */
static unsigned json_path_line(const char *text, size_t len, const char *twin_key, const char *path,
                               size_t pn)
{
        JsonScan j = {.s = text, .n = len, .line = 1};
        if (!js_at(&j, '{'))
                return 0;
        unsigned best = j.line;
        if (twin_key && !js_member(&j, twin_key, strlen(twin_key), &best))
                return best;
        for (size_t at = 0; at < pn;) {
                if (path[at] == '[') {
                        size_t idx = 0, d = ++at;
                        while (at < pn && path[at] >= '0' && path[at] <= '9' && at - d < 9)
                                idx = idx * 10 + (size_t)(path[at++] - '0');
                        if (at == d || at >= pn || path[at] != ']' || !js_element(&j, idx))
                                return best;
                        at++;
                        best = j.line;
                        continue;
                }
                if (path[at] == '.')
                        at++;
                size_t k = at;
                while (k < pn && path[k] != '.' && path[k] != '[')
                        k++;
                unsigned line;
                if (k == at || !js_member(&j, path + at, k - at, &line))
                        return best;
                best = line;
                at = k;
        }
        return best;
}

/*
 * The path at the start of a twin's seed refusal: "repositories[0].issues[1].labels: must be
 * …" or, for a member of the seed itself, `unknown key "x" (…)`. 0 when err names none.
 */
static size_t seed_error_path(const char *err, const char **ret)
{
        static const char unknown[] = "unknown key \"";
        if (startswith(err, unknown)) {
                const char *k = err + strlen(unknown), *q = strchr(k, '"');
                *ret = k;
                return q ? (size_t)(q - k) : 0;
        }
        size_t n = 0;
        for (;;) {
                size_t w = 0;
                while (err[n + w] && (isalnum((unsigned char)err[n + w]) || err[n + w] == '_' ||
                                      err[n + w] == '-' || err[n + w] == '$'))
                        w++;
                if (w == 0)
                        return 0;
                n += w;
                while (err[n] == '[') {
                        size_t d = n + 1;
                        while (err[d] >= '0' && err[d] <= '9')
                                d++;
                        if (d == n + 1 || err[d] != ']')
                                return 0;
                        n = d + 1;
                }
                if (err[n] == ':') {
                        *ret = err;
                        return n;
                }
                if (err[n] != '.')
                        return 0;
                n++;
        }
}

/* Where a seed came from, for naming the lines of its refusals. */
typedef struct SeedSource {
        unsigned rank;    /* 0: ## Seed State of the task file, 1: the sidecar */
        const char *text; /* its JSON text, NULL when not known (then no line is named) */
        size_t len;
        unsigned base; /* the file line of text's first line */
} SeedSource;

/* The file line of the twin_key seed's member named by path (pn bytes; 0: the seed itself),
 * or of the seed text's start when the path does not resolve. */
static unsigned seed_line(const SeedSource *src, const char *twin_key, const char *path, size_t pn)
{
        if (!src->text)
                return 0;
        unsigned l = json_path_line(src->text, src->len, twin_key, path, pn);
        return src->base + (l ? l - 1 : 0);
}

static int seed_error(Parser *p, const SeedSource *src, unsigned line, const char *fmt, ...)
        _printf_(4, 5);
static int seed_error(Parser *p, const SeedSource *src, unsigned line, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = record(p, src->rank, line, fmt, ap);
        va_end(ap);
        return r;
}

/* Whether the trimmed text of ## Seed State is JSON (an object or array) rather than prose. */
static bool seed_is_json(const char *text)
{
        while (*text && strchr(" \t\r\n", *text))
                text++;
        return *text == '{' || *text == '[';
}

static int parse_seed(Parser *p, const json_t *sidecar)
{
        GradeTask *t = p->t;
        _cleanup_json_ json_t *inline_seed = NULL;
        _cleanup_free_ char *text = NULL;
        unsigned line = p->seed.heading;
        int r;
        if (!(t->seeds = json_object()))
                return -ENOMEM;
        if (p->seed.heading && !sidecar) {
                if (!(text = section_data(p, &p->seed, &line)))
                        return -ENOMEM;
                if (seed_is_json(text)) {
                        json_error_t je;
                        inline_seed = json_loads(text, JSON_REJECT_DUPLICATES, &je);
                        if (!inline_seed)
                                return error_at(p, line + (je.line > 0 ? (unsigned)je.line - 1 : 0),
                                                "## Seed State is not valid JSON: %s", je.text);
                } else if (!is_blank_text(text))
                        /* prose, compiled into a sidecar by hosted Pome's pome compile-seeds:
                         * the seeds sent at creation stand in for it, and whoever has none
                         * to send refuses the task naming this line */
                        t->seed_prose_line = p->seed.heading;
        }
        const json_t *seed = sidecar ? sidecar : inline_seed;
        if (!seed)
                return 0;
        SeedSource src = sidecar ? (SeedSource){.rank = 1,
                                                .text = p->side_text,
                                                .len = p->side_len,
                                                .base = 1}
                                 : (SeedSource){.text = text, .len = strlen(text), .base = line};
        unsigned root = src.text ? seed_line(&src, NULL, "", 0) : 0;
        if (!json_is_object(seed))
                return sidecar ? seed_error(p, &src, root, "must hold a JSON object")
                               : error_at(p, line, "## Seed State must be a JSON object");
        bool envelope = is_envelope(seed);
        if (envelope) {
                const char *k;
                json_t *v;
                json_object_foreach ((json_t *)seed, k, v) {
                        if (streq(k, "_meta"))
                                continue;
                        if (!p->twins_unknown && !strv_contains(t->twins, k)) {
                                unsigned l = seed_line(&src, k, "", 0);
                                r = sidecar ? seed_error(p, &src, l,
                                                         "a seed for the %s twin, which %s does "
                                                         "not have",
                                                         k, p->name)
                                            : error_at(p, l,
                                                       "a seed for the %s twin, which the task "
                                                       "does not have",
                                                       k);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        if (json_object_set(t->seeds, k, v) < 0)
                                return -ENOMEM;
                }
        } else if (p->twins_unknown)
                return 0; /* a seed for a twin the task does not say */
        else if (t->twins[1])
                return seed_error(p, &src, sidecar ? root : line,
                                  "a task with several twins needs its seed as {\"<twin>\": "
                                  "seed, …}");
        else if (json_object_set(t->seeds, t->twins[0], (json_t *)seed) < 0)
                return -ENOMEM;
        /* refuse a seed its twin would refuse at sandbox creation, with the twin's words,
         * naming the line of the member they name */
        const char *k;
        json_t *v;
        json_object_foreach (t->seeds, k, v) {
                char err[1024]; /* a twin names every key an entry may have */
                Twin *tw = NULL;
                r = twin_new(twin_kind_find(k), v, &tw, err, sizeof(err));
                twin_free(tw);
                if (r == -EINVAL) {
                        const char *path = NULL;
                        size_t pn = seed_error_path(err, &path);
                        unsigned l = src.text ? seed_line(&src, envelope ? k : NULL, path, pn) : 0;
                        r = seed_error(p, &src,
                                       l         ? l
                                       : sidecar ? 0
                                                 : line,
                                       "the %s seed: %s", k, err);
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

static void parser_done(Parser *p)
{
        for (size_t i = 0; i < p->n_errors; i++)
                free(p->errors[i].text);
        free(p->errors);
        free(p->lines);
        free(p->side);
}

/* Each line of text that is not UTF-8 (or holds a NUL) refused: every string of a task lands
 * in JSON. 0 or -ENOMEM. */
static int check_utf8(Parser *p, const char *text, size_t len)
{
        unsigned line = 1, bad = 0;
        for (size_t i = 0; i < len;) {
                size_t k = text[i] ? utf8_char_len(text + i, len - i) : 0;
                if (k == 0) {
                        if (bad != line) {
                                int r = error_at(p, line, "not valid UTF-8 text");
                                if (r < 0)
                                        return r;
                                bad = line;
                        }
                        k = 1;
                } else if (text[i] == '\n')
                        line++;
                i += k;
        }
        return 0;
}

/* The parse, with the sidecar's text when the caller read it (its refusals then name its
 * lines). Every refusal that does not follow from another is gathered, then said at once. */
static int task_parse(const char *text, size_t len, const char *name, const json_t *sidecar_seed,
                      const char *sidecar_text, size_t sidecar_len, GradeTask **ret, GradeError *e)
{
        GradeError scratch;
        _cleanup_(parser_done) Parser p = {
                .name = name ? name : "task.md",
                .side_text = sidecar_text,
                .side_len = sidecar_len,
        };
        e = e ? e : &scratch;
        if (!(p.side = sidecar_name(p.name)))
                return -ENOMEM;
        int r;
        if (len > TASK_MAX_BYTES) {
                if ((r = error_at(&p, 1, "larger than %u bytes", TASK_MAX_BYTES)) < 0)
                        return r;
                return errors_render(&p, e);
        }
        /* text that is not UTF-8 is not read further: its lines would be quoted in messages */
        if ((r = check_utf8(&p, text, len)) < 0)
                return r;
        if (p.n_errors > 0)
                return errors_render(&p, e);
        _cleanup_(grade_task_freep) GradeTask *t = calloc(1, sizeof(GradeTask));
        if (!t)
                return -ENOMEM;
        p.t = t;
        if (!(t->name = strdup(p.name)) || split_lines(&p, text ? text : "", len) < 0)
                return -ENOMEM;
        if ((r = find_sections(&p)) < 0 || (r = parse_title(&p)) < 0 || (r = parse_config(&p)) < 0)
                return r;
        if (!p.prompt.heading)
                r = error_at(&p, (unsigned)p.n_lines, "the task has no ## Prompt section");
        else if (!(t->prompt = section_text(&p, &p.prompt)))
                r = -ENOMEM;
        else if (!t->prompt[0])
                r = error_at(&p, p.prompt.heading, "## Prompt is empty");
        if (r < 0)
                return r;
        if (!((t->setup = section_text(&p, &p.setup)) &&
              (t->expected_behavior = section_text(&p, &p.expected))))
                return -ENOMEM;
        if ((r = parse_criteria(&p)) < 0 || (r = parse_seed(&p, sidecar_seed)) < 0)
                return r;
        if (p.n_errors > 0)
                return errors_render(&p, e);
        *ret = TAKE_PTR(t);
        return 0;
}

int grade_task_parse(const char *text, size_t len, const char *name, const char *sidecar_text,
                     size_t sidecar_len, GradeTask **ret, GradeError *e)
{
        _cleanup_json_ json_t *sidecar = NULL;
        if (sidecar_text) {
                json_error_t je;
                _cleanup_free_ char *side = sidecar_name(name ? name : "task.md");
                if (!side)
                        return -ENOMEM;
                sidecar = json_loadb(sidecar_text, sidecar_len, JSON_REJECT_DUPLICATES, &je);
                if (!sidecar)
                        return grade_error(e, -EINVAL, "%s:%d: not valid JSON: %s", side, je.line,
                                           je.text);
        }
        return task_parse(text, len, name, sidecar, sidecar_text, sidecar_len, ret, e);
}

int grade_task_load(const char *path, GradeTask **ret, GradeError *e)
{
        _cleanup_free_ char *text = NULL, *side_text = NULL;
        size_t len, side_len = 0;
        int r = read_file_at(AT_FDCWD, path, TASK_MAX_BYTES, &text, &len);
        if (r < 0)
                return grade_error(e, r, "%s: %s", path,
                                   r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
        size_t n = strlen(path);
        _cleanup_free_ char *side = NULL;
        if (n > 3 && strcasecmp(path + n - 3, ".md") == 0) {
                if (asprintf(&side, "%.*s.seed.json", (int)(n - 3), path) < 0)
                        return -ENOMEM;
        } else if (asprintf(&side, "%s.seed.json", path) < 0)
                return -ENOMEM;
        r = read_file_at(AT_FDCWD, side, GRADE_SEED_MAX, &side_text, &side_len);
        if (r < 0 && r != -ENOENT)
                return grade_error(e, r, "%s: %s", side,
                                   r == -EFBIG ? "larger than 16 MiB" : strerror(-r));
        const char *base = strrchr(path, '/');
        return grade_task_parse(text, len, base ? base + 1 : path, side_text, side_len, ret, e);
}
