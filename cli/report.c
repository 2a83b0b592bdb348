/* SPDX-License-Identifier: MIT */
#include "cli/report.h"

#include <errno.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/output.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/util.h"

#define C_RESET  "\033[0m"
#define C_BOLD   "\033[1m"
#define C_DIM    "\033[2m"
#define C_RED    "\033[31m"
#define C_GREEN  "\033[32m"
#define C_YELLOW "\033[33m"

bool report_use_color(FILE *f)
{
        const char *term = getenv("TERM");
        return isatty(fileno(f)) && !getenv("NO_COLOR") && !streq_ptr(term, "dumb");
}

const char *report_verdict_state(const json_t *verdict)
{
        const char *s = json_get_str(verdict, "state");
        return s ? s : "?";
}

bool report_verdict_passed(const json_t *verdict)
{
        return json_is_true(json_object_get(verdict, "passed"));
}

bool report_verdict_incomplete(const json_t *verdict)
{
        return streq_ptr(json_get_str(verdict, "state"), "incomplete");
}

int report_verdict_exit_status(const json_t *verdict)
{
        return report_verdict_passed(verdict)       ? POME_EXIT_OK
               : report_verdict_incomplete(verdict) ? POME_EXIT_INCOMPLETE
                                                    : POME_EXIT_ERROR;
}

static const char *state_color(const char *state)
{
        if (streq(state, "pass") || streq(state, "passed"))
                return C_GREEN;
        if (streq(state, "fail") || streq(state, "failed"))
                return C_RED;
        return C_YELLOW;
}

static json_int_t count(const json_t *counts, const char *key)
{
        return json_integer_value(json_object_get(counts, key));
}

/* "github.final.json#/repositories/0, slack tape req_…": the evidence of one criterion. */
static void print_evidence(FILE *f, const json_t *c)
{
        const char *twin = json_get_str(c, "twin");
        const json_t *paths = json_object_get(c, "evidence_state_paths");
        const json_t *events = json_object_get(c, "evidence_event_ids");
        size_t i, n = 0;
        json_t *v;

        if (json_array_size(paths) == 0 && json_array_size(events) == 0)
                return;
        fputs("             evidence: ", f);
        json_array_foreach (paths, i, v) {
                if (n++ > 0)
                        fputs(", ", f);
                output_fputs_clean(twin, f);
                fputs(".final.json#", f);
                output_fputs_clean(json_string_value(v), f);
        }
        json_array_foreach (events, i, v) {
                if (n++ > 0)
                        fputs(", ", f);
                output_fputs_clean(twin, f);
                fputs(" tape ", f);
                output_fputs_clean(json_string_value(v), f);
        }
        fputc('\n', f);
}

int report_verdict(FILE *f, const json_t *verdict, bool color)
{
        return report_verdict_except(f, verdict, color, NULL);
}

int report_verdict_except(FILE *f, const json_t *verdict, bool color, char *const *said)
{
        const char *state = report_verdict_state(verdict);
        const json_t *counts = json_object_get(verdict, "counts");
        const json_t *score = json_object_get(verdict, "score");
        const json_t *task = json_object_get(verdict, "task");
        const json_t *criteria = json_object_get(verdict, "criteria");
        const json_t *threshold = json_object_get(task, "pass_threshold");
        size_t i;
        json_t *c;

        fputs("Verdict: ", f);
        if (color)
                fprintf(f, C_BOLD "%s", state_color(state));
        for (const char *p = state; *p; p++)
                fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, f);
        if (color)
                fputs(C_RESET, f);
        if (json_is_number(score))
                fprintf(f, "  score %.1f%%%s", json_number_value(score),
                        streq(state, "incomplete") ? " of what was evaluated" : "");
        else
                fputs("  no criterion was scored", f);
        if (json_is_number(threshold))
                fprintf(f, " (pass at %g%%)", json_number_value(threshold));
        fprintf(f,
                "  %" JSON_INTEGER_FORMAT " passed, %" JSON_INTEGER_FORMAT
                " failed; %" JSON_INTEGER_FORMAT " not evaluated, %" JSON_INTEGER_FORMAT
                " skipped, %" JSON_INTEGER_FORMAT " already true in the seed\n",
                count(counts, "passed"), count(counts, "failed"),
                json_object_get(counts, "not_evaluated")
                        ? count(counts, "not_evaluated")
                        : count(counts, "unmatched"), /* a verdict of version 1 */
                count(counts, "skipped"), count(counts, "already_true_in_seed"));
        if (streq(state, "incomplete")) {
                if (count(counts, "scored") == 0 && count(counts, "not_evaluated") == 0)
                        fputs("Incomplete: no criterion was scored (every one was already true "
                              "in the seed, or skipped), so the run is neither passed nor "
                              "failed.\n",
                              f);
                else
                        fprintf(f,
                                "Incomplete: %" JSON_INTEGER_FORMAT
                                " criteria that should have been evaluated were not (below: "
                                "unmatched, error, or skipped for want of a judge); a run "
                                "with one is never a pass.\n",
                                count(counts, "not_evaluated"));
        }
        if (json_is_true(json_object_get(verdict, "code_only")))
                fputs("Graded --code-only: the [model] criteria were not judged, on "
                      "purpose.\n",
                      f);
        if (json_get_str(task, "title")) {
                fputs("Task: ", f);
                output_fputs_clean(json_get_str(task, "title"), f);
                fputc('\n', f);
        }
        fputs("  STATUS     TWIN    CRITERION (line) / reason / evidence\n", f);
        json_array_foreach (criteria, i, c) {
                const char *status = json_get_str(c, "status");
                bool scored = json_is_true(json_object_get(c, "scored"));
                bool already = json_is_true(json_object_get(c, "already_true_in_seed"));
                const char *shown = status ? status : "?";
                const char *kind = json_get_str(c, "kind");
                const char *twin = json_get_str(c, "twin");
                if (!scored && already)
                        shown = "excluded";
                fputs("  ", f);
                if (color)
                        fputs(streq(shown, "excluded") ? C_DIM : state_color(shown), f);
                fprintf(f, "%-9s", shown);
                if (color)
                        fputs(C_RESET, f);
                fputs("  ", f);
                _cleanup_free_ char *tw = output_clean(streq_ptr(kind, "model") ? "model"
                                                       : twin                   ? twin
                                                                                : "-");
                fprintf(f, "%-6s  ", tw ? tw : "?");
                output_fputs_clean(json_get_str(c, "text"), f);
                if (json_is_integer(json_object_get(c, "line")))
                        fprintf(f, " (line %" JSON_INTEGER_FORMAT ")",
                                json_integer_value(json_object_get(c, "line")));
                fputc('\n', f);
                fputs("             ", f);
                if (!scored && already)
                        fputs("already true in the seed, not scored: ", f);
                output_fputs_clean(json_get_str(c, "reason"), f);
                fputc('\n', f);
                print_evidence(f, c);
        }
        size_t n;
        json_t *w;
        json_array_foreach (json_object_get(verdict, "warnings"), n, w) {
                if (json_is_string(w) && strv_contains(said, json_string_value(w)))
                        continue;
                fputs("warning: ", f);
                output_fputs_clean(json_string_value(w), f);
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}

static void print_scalar(FILE *f, const json_t *v)
{
        if (!v) {
                fputs("(absent)", f);
                return;
        }
        _cleanup_free_ char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
        if (s && strlen(s) > 120)
                strcpy(s + 117, "...");
        output_fputs_clean(s ? s : "?", f);
}

/* Appends one differing path; counts every difference, prints the first max. */
static void diff_at(FILE *f, const char *path, const json_t *a, const json_t *b, size_t max,
                    size_t *n)
{
        if (a && b && json_typeof(a) == json_typeof(b)) {
                if (json_is_object(a)) {
                        const char *k;
                        json_t *v;
                        json_object_foreach ((json_t *)a, k, v) {
                                _cleanup_free_ char *p = NULL;
                                if (asprintf(&p, "%s/%s", path, k) < 0)
                                        return;
                                diff_at(f, p, v, json_object_get(b, k), max, n);
                        }
                        json_object_foreach ((json_t *)b, k, v) {
                                if (json_object_get(a, k))
                                        continue;
                                _cleanup_free_ char *p = NULL;
                                if (asprintf(&p, "%s/%s", path, k) < 0)
                                        return;
                                diff_at(f, p, NULL, v, max, n);
                        }
                        return;
                }
                if (json_is_array(a)) {
                        size_t na = json_array_size(a), nb = json_array_size(b);
                        for (size_t i = 0; i < (na > nb ? na : nb); i++) {
                                _cleanup_free_ char *p = NULL;
                                if (asprintf(&p, "%s/%zu", path, i) < 0)
                                        return;
                                diff_at(f, p, json_array_get(a, i), json_array_get(b, i), max, n);
                        }
                        return;
                }
                if (json_equal(a, b))
                        return;
        }
        if (!a && !b)
                return;
        if ((*n)++ >= max)
                return;
        fputs("  ", f);
        output_fputs_clean(*path ? path : "/", f);
        fputs(": ", f);
        print_scalar(f, a);
        fputs(" → ", f);
        print_scalar(f, b);
        fputc('\n', f);
}

size_t report_json_diff(FILE *f, const json_t *a, const json_t *b, size_t max)
{
        size_t n = 0;
        diff_at(f, "", a, b, max, &n);
        if (n > max)
                fprintf(f, "  … and %zu more\n", n - max);
        return n;
}
