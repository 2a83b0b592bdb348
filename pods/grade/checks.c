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
        {grade_checks_github, &grade_n_checks_github},
        {grade_checks_slack, &grade_n_checks_slack},
        {grade_checks_stripe, &grade_n_checks_stripe},
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
                if (!span_digits(s, n, 15, &v)) {
                        want = "a non-negative integer";
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
        char *reason;
        if (closest[0])
                reason = strdup(closest);
        else if (asprintf(&reason, "no %s check has a sentence template this matches", twin) < 0)
                reason = NULL;
        if (!reason)
                return -ENOMEM;
        *ret_reason = reason;
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
        }
        return r;
}
