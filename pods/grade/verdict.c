/* SPDX-License-Identifier: MIT */
/*
 * Grading a task against what its twins left behind, and the verdict's one byte form.
 * Deterministic by construction: no clock, criteria in file order, evidence in world and tape
 * order, keys sorted when rendered.
 */
#include <stdarg.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "pods/grade/check.h"
#include "pods/twin/twin.h"

#define GRADE_VERDICT_VERSION 1
#define MODEL_REASON          "no judge model configured"

/* One twin of the task while grading. */
typedef struct TwinState {
        const char *name;
        Twin *seed_twin;    /* the seed world, built as the pod built it */
        json_t *final;      /* borrowed from the run, or NULL */
        const json_t *tape; /* borrowed from the run, or NULL */
} TwinState;

typedef struct TwinStates {
        TwinState *v;
        size_t n;
} TwinStates;

static void twin_states_done(TwinStates *ts)
{
        for (size_t i = 0; ts->v && i < ts->n; i++)
                twin_free(ts->v[i].seed_twin);
        free(ts->v);
}

static int error(GradeError *e, int r, const char *fmt, ...) _printf_(3, 4);
static int error(GradeError *e, int r, const char *fmt, ...)
{
        if (e) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(e->message, sizeof(e->message), fmt, ap);
                va_end(ap);
        }
        return r;
}

static json_t *array_or_empty(json_t *a)
{
        return a ? json_incref(a) : json_array();
}

/* Grades criterion c (index i) into a new verdict entry, counting into counts. */
typedef struct Counts {
        size_t scored, passed, failed, unmatched, skipped, already;
} Counts;

static int grade_criterion(const GradeTask *task, TwinState *ts, size_t n_ts, size_t i,
                           Counts *counts, json_t **ret)
{
        const GradeCriterion *c = &task->criteria[i];
        GradeOutcome out = {};
        const GradeCheck *check = NULL;
        _cleanup_json_ json_t *args = NULL;
        const char *twin = c->twin;
        bool already = false;
        int r = 0;

        if (c->kind == GRADE_CRITERION_MODEL) {
                /* nothing here can judge it, and an unjudged criterion is never a pass */
                r = grade_outcome_set(&out, GRADE_SKIPPED, MODEL_REASON);
        } else {
                /* tagged: that twin's vocabulary; untagged: each twin's, in the task's order */
                _cleanup_free_ char *why = NULL;
                size_t tried = 0;
                for (size_t k = 0; k < n_ts && !check; k++) {
                        if (c->twin && !streq(c->twin, ts[k].name))
                                continue;
                        _cleanup_free_ char *reason = NULL;
                        r = grade_bind(c->text, ts[k].name, &check, &args, &reason);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                twin = ts[k].name;
                                /* the verdict */
                                r = grade_check_eval(check, args, twin_world(ts[k].seed_twin),
                                                     ts[k].final, ts[k].tape, &out);
                                if (r < 0)
                                        goto fail;
                                /* already true before the agent ran: the seed world taken as
                                 * the final one, with no tape (a tape check never is) */
                                if (check->substrate != GRADE_SUBSTRATE_TAPE) {
                                        GradeOutcome pre = {};
                                        json_t *seed = twin_world(ts[k].seed_twin);
                                        r = grade_check_eval(check, args, seed, seed, NULL, &pre);
                                        already = r >= 0 && pre.status == GRADE_PASSED;
                                        grade_outcome_done(&pre);
                                        if (r < 0)
                                                goto fail;
                                }
                                break;
                        }
                        /* keep the most telling reason: a near miss beats "no template" */
                        tried++;
                        if (!why || (strstr(reason, "shape of") && !strstr(why, "shape of"))) {
                                free(why);
                                why = TAKE_PTR(reason);
                        }
                }
                if (!check && tried > 1 && !strstr(why, "shape of"))
                        r = grade_outcome_set(&out, GRADE_UNMATCHED,
                                              "no check of any of the task's %zu twins has a "
                                              "sentence template this matches",
                                              tried);
                else if (!check)
                        r = grade_outcome_set(&out, GRADE_UNMATCHED, "%s",
                                              why ? why : "no twin to bind the sentence to");
        }
        if (r < 0)
                goto fail;

        bool scored = out.status != GRADE_SKIPPED && !(already && !c->always_scored);
        if (already)
                counts->already++;
        if (scored) {
                counts->scored++;
                if (out.status == GRADE_PASSED)
                        counts->passed++;
                else if (out.status == GRADE_UNMATCHED)
                        counts->unmatched++;
                else
                        counts->failed++;
        } else if (out.status == GRADE_SKIPPED)
                counts->skipped++;

        json_t *bound = json_null();
        if (check)
                bound = json_pack("{s:s, s:O, s:s, s:s}", "id", check->id, "params", args,
                                  "substrate", grade_substrate_to_string(check->substrate),
                                  "polarity",
                                  grade_check_polarity(check, args) == GRADE_POSITIVE ? "positive"
                                                                                      : "negative");
        if (check && !bound) {
                grade_outcome_done(&out);
                return -ENOMEM;
        }
        json_t *entry = json_pack(
                "{s:I, s:I, s:s, s:s?, s:s, s:o, s:s, s:s, s:o, s:o, s:b, s:b, s:b}", "index",
                (json_int_t)i, "line", (json_int_t)c->line, "kind",
                c->kind == GRADE_CRITERION_CODE ? "code" : "model", "twin", twin, "text", c->text,
                "check", bound, "status", grade_status_to_string(out.status), "reason", out.reason,
                "evidence_event_ids", array_or_empty(out.event_ids), "evidence_state_paths",
                array_or_empty(out.state_paths), "already_true_in_seed", already, "always_scored",
                c->always_scored, "scored", scored);
        grade_outcome_done(&out);
        if (!entry)
                return -ENOMEM;
        *ret = entry;
        return 0;
fail:
        grade_outcome_done(&out);
        return r;
}

int grade_run(const GradeTask *task, const GradeTwinRun *runs, size_t n, json_t **ret_verdict,
              GradeError *e)
{
        size_t n_ts = strv_length(task->twins);
        _cleanup_(twin_states_done)
                TwinStates st = {calloc(n_ts ? n_ts : 1, sizeof(TwinState)), n_ts};
        TwinState *ts = st.v;
        if (!ts)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                size_t k = 0;
                while (k < n_ts && !streq(task->twins[k], runs[i].twin))
                        k++;
                if (k == n_ts)
                        return error(e, -EINVAL, "the run has a %s twin, which task %s does not",
                                     runs[i].twin, task->name);
                if (ts[k].name)
                        return error(e, -EINVAL, "the run lists the %s twin twice", runs[i].twin);
                ts[k].name = task->twins[k];
                ts[k].final = (json_t *)runs[i].final;
                ts[k].tape = runs[i].tape;
        }
        _cleanup_json_ json_t *twins = json_object(), *names = json_array();
        if (!twins || !names)
                return -ENOMEM;
        for (size_t k = 0; k < n_ts; k++) {
                const GradeTwinRun *run = NULL;
                for (size_t i = 0; i < n; i++)
                        if (streq(runs[i].twin, task->twins[k]))
                                run = &runs[i];
                ts[k].name = task->twins[k];
                char err[300];
                /* the world the pod booted into: twin_new from the raw seed, as the pod does
                 * (a kind's load_seed reads no clock, so this is the same world) */
                int r = twin_new(twin_kind_find(task->twins[k]), run ? run->seed : NULL,
                                 &ts[k].seed_twin, err, sizeof(err));
                if (r == -EINVAL)
                        return error(e, r, "the %s seed: %s", task->twins[k], err);
                if (r < 0)
                        return r;
                json_t *rows = json_is_array(ts[k].tape)
                                       ? json_integer((json_int_t)json_array_size(ts[k].tape))
                                       : json_null();
                if (json_object_set_new(twins, task->twins[k],
                                        json_pack("{s:b, s:o}", "final_state", ts[k].final != NULL,
                                                  "tape_rows", rows)) < 0 ||
                    json_array_append_new(names, json_string(task->twins[k])) < 0)
                        return -ENOMEM;
        }

        _cleanup_json_ json_t *criteria = json_array(), *warnings = json_array();
        if (!criteria || !warnings)
                return -ENOMEM;
        Counts counts = {};
        for (size_t i = 0; i < task->n_criteria; i++) {
                json_t *entry = NULL;
                int r = grade_criterion(task, ts, n_ts, i, &counts, &entry);
                if (r < 0)
                        return r;
                if (json_array_append_new(criteria, entry) < 0)
                        return -ENOMEM;
        }
        for (char **w = task->warnings; w && *w; w++)
                if (json_array_append_new(warnings, json_string(*w)) < 0)
                        return -ENOMEM;
        /* percent of the scored criteria that passed; an unmatched one scores as failed */
        bool passed = counts.scored > 0 &&
                      100.0 * (double)counts.passed >= task->pass_threshold * (double)counts.scored;
        json_t *score = counts.scored
                                ? json_real(100.0 * (double)counts.passed / (double)counts.scored)
                                : json_null();
        json_t *v = json_pack(
                "{s:i, s:{s:s, s:O, s:f, s:s?}, s:s, s:b, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, "
                "s:I}, s:O, s:O, s:O}",
                "version", GRADE_VERDICT_VERSION, "task", "title", task->title, "twins", names,
                "pass_threshold", task->pass_threshold, "class", task->task_class, "state",
                !counts.scored ? "incomplete"
                : passed       ? "pass"
                               : "fail",
                "passed", passed, "score", score, "counts", "criteria",
                (json_int_t)task->n_criteria, "scored", (json_int_t)counts.scored, "passed",
                (json_int_t)counts.passed, "failed", (json_int_t)counts.failed, "unmatched",
                (json_int_t)counts.unmatched, "skipped", (json_int_t)counts.skipped,
                "already_true_in_seed", (json_int_t)counts.already, "criteria", criteria, "twins",
                twins, "warnings", warnings);
        if (!v)
                return -ENOMEM;
        *ret_verdict = v;
        return 0;
}

int grade_verdict_render(const json_t *verdict, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *s = json_dumps(verdict, JSON_SORT_KEYS | JSON_INDENT(2));
        if (!s)
                return -ENOMEM;
        size_t n = strlen(s);
        char *out = malloc(n + 2);
        if (!out)
                return -ENOMEM;
        memcpy(out, s, n);
        out[n] = '\n';
        out[n + 1] = 0;
        *ret = out;
        if (ret_len)
                *ret_len = n + 1;
        return 0;
}
