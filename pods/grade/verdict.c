/* SPDX-License-Identifier: MIT */
/*
 * Grading a task against what its twins left behind, and the verdict's one byte form.
 * Deterministic by construction: no clock, criteria in file order, evidence in world and tape
 * order, keys sorted when rendered.
 */
#include <assert.h>
#include <stdarg.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "common/text.h"
#include "pods/grade/check.h"
#include "pods/grade/judge.h"
#include "pods/twin/redact.h"
#include "pods/twin/twin.h"

/* 2: [model] criteria judged (judgment), statuses "error", states by completeness
 * (not_evaluated), code_only */
#define GRADE_VERDICT_VERSION 2
#define NO_JUDGE_REASON                                                                    \
        "not evaluated: no judge is configured (judge: in pomed.conf, or --judge), and a " \
        "[model] criterion needs one"
#define CODE_ONLY_REASON "not judged: graded --code-only, [model] criteria deliberately left out"

/* One twin of the task while grading. */
typedef struct TwinState {
        const char *name;
        Twin *seed_twin;    /* the seed world, built as the pod built it */
        bool seed_unknown;  /* GradeTwinRun.seed_unknown: seed_twin is a guess */
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

static json_t *array_or_empty(json_t *a)
{
        return a ? json_incref(a) : json_array();
}

/* How telling a binder's reason is: 2 a near miss (the shape of a check, a bad value), 1 the
 * nearest templates ("did you mean"), 0 nothing binds. */
static int reason_rank(const char *reason)
{
        return !reason                            ? -1
               : strstr(reason, "shape of")       ? 2
               : strstr(reason, "; did you mean") ? 1
                                                  : 0;
}

/*
 * Binds [code] criterion c of task: tagged, in its twin's vocabulary; untagged, in each of the
 * task's twins' in order (the first that binds wins). Returns 1 with the check, its arguments
 * (a new object) and the twin (borrowed from task) in *ret_*; 0 with why nothing binds in
 * *ret_reason (a new string: a near miss of one vocabulary, else that no template of any
 * twin tried matches); -ENOMEM.
 */
static int bind_criterion(const GradeTask *task, const GradeCriterion *c,
                          const GradeCheck **ret_check, json_t **ret_args, const char **ret_twin,
                          char **ret_reason)
{
        _cleanup_free_ char *why = NULL;
        size_t tried = 0;
        for (char **tw = task->twins; tw && *tw; tw++) {
                if (c->twin && !streq(c->twin, *tw))
                        continue;
                _cleanup_free_ char *reason = NULL;
                int r = grade_bind(c->text, *tw, ret_check, ret_args, &reason);
                if (r < 0)
                        return r;
                if (r > 0) {
                        *ret_twin = *tw;
                        return 1;
                }
                /* keep the most telling reason: a near miss beats a "did you mean", which
                 * beats "no template" */
                tried++;
                if (!why || reason_rank(reason) > reason_rank(why)) {
                        free(why);
                        why = TAKE_PTR(reason);
                }
        }
        if (tried > 1 && reason_rank(why) < 2) {
                /* said for every twin tried, with the nearest template, if any (hint points
                 * into one, freed after) */
                char *one = TAKE_PTR(why);
                const char *hint = one ? strstr(one, "; did you mean") : NULL;
                if (asprintf(&why,
                             "no check of any of the task's %zu twins has a sentence template "
                             "this matches%s",
                             tried, strempty(hint)) < 0)
                        why = NULL;
                free(one);
        } else if (!why)
                why = strdup("no twin to bind the sentence to");
        if (!why)
                return -ENOMEM;
        /* the sentence of another twin's check: say so, it is the likelier slip */
        for (const char *const *k = twin_kind_names(); *k && reason_rank(why) < 2; k++) {
                const GradeCheck *other;
                _cleanup_json_ json_t *args = NULL;
                _cleanup_free_ char *ignored = NULL, *more = NULL;
                if (c->twin ? streq(c->twin, *k) : strv_contains(task->twins, *k))
                        continue; /* bound against above */
                int r = grade_bind(c->text, *k, &other, &args, &ignored);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                bool has = strv_contains(task->twins, *k);
                if (asprintf(&more, "%s; it is the sentence of %s, a check of the %s twin%s%s%s",
                             why, other->id, *k,
                             has ? ": tag it [code:"
                                 : ", which the task does not "
                                   "have (## Config twins)",
                             has ? *k : "", has ? "]" : "") < 0)
                        return -ENOMEM;
                free(why);
                why = TAKE_PTR(more);
                break;
        }
        *ret_reason = TAKE_PTR(why);
        return 0;
}

int grade_task_check(const GradeTask *task, char ***ret_problems)
{
        _cleanup_strv_free_ char **problems = NULL;
        size_t n = 0;
        for (size_t i = 0; i < task->n_criteria; i++) {
                const GradeCriterion *c = &task->criteria[i];
                const GradeCheck *check;
                const char *twin;
                _cleanup_json_ json_t *args = NULL;
                _cleanup_free_ char *why = NULL;
                if (c->kind != GRADE_CRITERION_CODE)
                        continue;
                int r = bind_criterion(task, c, &check, &args, &twin, &why);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (strv_extendf(&problems, "%s:%u: %s", task->name, c->line, why) < 0)
                        return -ENOMEM;
                n++;
        }
        *ret_problems = TAKE_PTR(problems);
        return (int)n;
}

/* Grades criterion c (index i) into a new verdict entry, counting into counts. */
typedef struct Counts {
        size_t scored, passed, failed, unmatched, skipped, error, not_evaluated, already;
} Counts;

/* What grading one criterion needs besides the criterion. */
typedef struct Grading {
        const GradeTask *task;
        TwinState *ts;
        size_t n_ts;
        const GradeOptions *opts;
        Counts counts;
} Grading;

/* The judgment of criteria of recorded (a verdict) whose question hashed to sha, or NULL. */
static const json_t *recorded_judgment(const json_t *recorded, const char *sha)
{
        size_t i;
        json_t *c;
        json_array_foreach (json_object_get(recorded, "criteria"), i, c) {
                json_t *j = json_object_get(c, "judgment");
                if (streq_ptr(json_get_str(j, "prompt_sha256"), sha) &&
                    json_is_string(json_object_get(j, "verdict")))
                        return j;
        }
        return NULL;
}

/* s made fit for a verdict: valid UTF-8, secrets redacted, at most max bytes (cut on a
 * character). A new string, NULL on OOM. */
static char *shown_text(const char *s, size_t n, size_t max)
{
        _cleanup_free_ char *mended = NULL, *redacted = NULL;
        size_t len;
        if (!utf8_valid(s, n)) {
                if (utf8_mend(s, n, &mended, &len) < 0)
                        return NULL;
                s = mended, n = len;
        }
        int r = twin_redact_string(s, n, &redacted, &len);
        if (r < 0)
                return NULL;
        if (r > 0)
                s = redacted, n = len;
        if (n > max) {
                n = max;
                while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
                        n--;
        }
        return strndup(s, n);
}

/* "openai gpt-4o-mini", or the API alone when no model is named: how reasons name a judge. */
static void judge_name(const char *api, const char *model, char *buf, size_t len)
{
        snprintf(buf, len, "%s%s%s", strempty(api), model && *model ? " " : "", strempty(model));
}

/*
 * Judges [model] criterion c: its question from the evidence, then a recorded judgment of the
 * same question, else the judge. Fills o and, when a judgment was made or reused, *ret_judgment
 * (a new object). Returns 0 (o says how it went: passed, failed, error, skipped) or -ENOMEM.
 */
static int judge_criterion(const Grading *g, const GradeCriterion *c, GradeOutcome *o,
                           json_t **ret_judgment)
{
        const GradeOptions *opts = g->opts;
        if (opts->code_only)
                return grade_outcome_set(o, GRADE_SKIPPED, CODE_ONLY_REASON);

        GradeJudgeTwin tw[3] = {};
        size_t n = g->n_ts < ELEMENTSOF(tw) ? g->n_ts : ELEMENTSOF(tw);
        for (size_t k = 0; k < n; k++)
                tw[k] = (GradeJudgeTwin){
                        .name = g->ts[k].name,
                        .seed_world = g->ts[k].seed_unknown ? NULL : twin_world(g->ts[k].seed_twin),
                        .final = g->ts[k].final,
                        .tape = g->ts[k].tape,
                };
        _cleanup_free_ char *question = NULL;
        int r = grade_judge_question(g->task->prompt, c->text, tw, n, opts->agent_reply,
                                     opts->agent_reply_len, &question);
        if (r < 0)
                return r;
        char sha[65];
        grade_judge_prompt_sha256(grade_judge_instructions, question, sha);

        const json_t *kept = recorded_judgment(opts->recorded, sha);
        if (kept) {
                /* the same question was judged before: its answer stands, byte for byte */
                const char *why = json_get_str(kept, "rationale");
                bool pass = streq_ptr(json_get_str(kept, "verdict"), "pass");
                if (!(*ret_judgment = json_deep_copy(kept)))
                        return -ENOMEM;
                char who[160];
                judge_name(json_get_str(kept, "api"), json_get_str(kept, "model"), who,
                           sizeof(who));
                return grade_outcome_set(o, pass ? GRADE_PASSED : GRADE_FAILED,
                                         "judged %s (%s): %s", pass ? "pass" : "fail", who,
                                         strempty(why));
        }
        const GradeJudge *judge = opts->judge;
        if (!judge) {
                bool other = false;
                size_t i;
                json_t *e;
                json_array_foreach (json_object_get(opts->recorded, "criteria"), i, e)
                        if (streq_ptr(json_get_str(e, "text"), c->text) &&
                            json_object_get(e, "judgment"))
                                other = true;
                return other ? grade_outcome_set(
                                       o, GRADE_SKIPPED,
                                       "not evaluated: the recorded judgment of this criterion "
                                       "was made on other evidence (another question), and no "
                                       "judge is configured to ask again")
                             : grade_outcome_set(o, GRADE_SKIPPED, NO_JUDGE_REASON);
        }

        GradeJudgeQuestion q = {.instructions = grade_judge_instructions,
                                .question = question,
                                .criterion = c->text,
                                .task_prompt = g->task->prompt,
                                .prompt_sha256 = sha};
        _cleanup_free_ char *answer = NULL, *shown = NULL, *rationale = NULL, *why = NULL;
        char err[512] = "";
        r = judge->ask(judge->userdata, &q, &answer, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !(shown = shown_text(answer, strlen(answer), GRADE_JUDGE_ANSWER_MAX)))
                return -ENOMEM;
        bool pass = false;
        if (r >= 0) {
                r = grade_judge_parse_answer(shown, &pass, &rationale, err, sizeof(err));
                if (r == -ENOMEM)
                        return r;
        }
        json_t *j = json_pack("{s:s, s:s, s:i, s:s}", "api", judge->api, "model",
                              strempty(judge->model), "temperature", 0, "prompt_sha256", sha);
        if (!j)
                return -ENOMEM;
        *ret_judgment = j;
        char who[160];
        judge_name(judge->api, judge->model, who, sizeof(who));
        if (r < 0) {
                _cleanup_free_ char *clean = shown_text(err, strlen(err), sizeof(err));
                if (!clean || json_object_set_new(j, "error", json_string(clean)) < 0)
                        return -ENOMEM;
                return grade_outcome_set(o, GRADE_ERROR, "not evaluated: the judge (%s) %s", who,
                                         clean);
        }
        if (!(why = shown_text(rationale, strlen(rationale), GRADE_JUDGE_ANSWER_MAX)) ||
            json_object_set_new(j, "verdict", json_string(pass ? "pass" : "fail")) < 0 ||
            json_object_set_new(j, "rationale", json_string(why)) < 0 ||
            json_object_set_new(j, "answer", json_string(shown)) < 0)
                return -ENOMEM;
        return grade_outcome_set(o, pass ? GRADE_PASSED : GRADE_FAILED, "judged %s (%s): %s",
                                 pass ? "pass" : "fail", who, why);
}

static int grade_criterion(Grading *g, size_t i, json_t **ret)
{
        const GradeTask *task = g->task;
        TwinState *ts = g->ts;
        size_t n_ts = g->n_ts;
        Counts *counts = &g->counts;
        const GradeCriterion *c = &task->criteria[i];
        GradeOutcome out = {};
        const GradeCheck *check = NULL;
        _cleanup_json_ json_t *args = NULL, *judgment = NULL;
        const char *twin = c->twin;
        bool already = false;
        int r = 0;

        if (c->kind == GRADE_CRITERION_MODEL) {
                r = judge_criterion(g, c, &out, &judgment);
        } else {
                _cleanup_free_ char *why = NULL;
                r = bind_criterion(task, c, &check, &args, &twin, &why);
                if (r < 0)
                        return r;
                size_t k = 0;
                while (r > 0 && k < n_ts && !streq(ts[k].name, twin))
                        k++;
                assert(r == 0 || k < n_ts); /* ts[k].name is task->twins[k] */
                if (r > 0 && ts[k].seed_unknown && check->substrate != GRADE_SUBSTRATE_TAPE) {
                        /* graded against a world nobody booted, it would say nothing true */
                        grade_outcome_done(&out);
                        return -ENOENT;
                }
                if (r > 0) {
                        /* the verdict */
                        r = grade_check_eval(check, args, twin_world(ts[k].seed_twin), ts[k].final,
                                             ts[k].tape, &out);
                        if (r < 0)
                                goto fail;
                        /* already true before the agent ran: the seed world taken as the
                         * final one, and an empty tape (the agent's calls before its
                         * first): a prohibition on the tape ("`x` was never called") holds
                         * there as one on the world does, and earns a run that did nothing
                         * nothing; a requirement on it ("`x` was called") never does */
                        GradeOutcome pre = {};
                        json_t *seed = twin_world(ts[k].seed_twin);
                        _cleanup_json_ json_t *none = json_array();
                        r = none ? grade_check_eval(check, args, seed, seed, none, &pre) : -ENOMEM;
                        already = r >= 0 && pre.status == GRADE_PASSED;
                        grade_outcome_done(&pre);
                        if (r < 0)
                                goto fail;
                } else
                        r = grade_outcome_set(&out, GRADE_UNMATCHED, "%s", why);
        }
        if (r < 0)
                goto fail;

        /* true in the seed and still true: the agent had nothing to do, so it earns nothing
         * (unless always-scored); true in the seed and false now: the agent broke it, and
         * that is a failure whatever the marker says. Only passed and failed are scored: the
         * rest were not evaluated (or, --code-only, deliberately left out) */
        bool scored = (out.status == GRADE_PASSED || out.status == GRADE_FAILED) &&
                      !(already && !c->always_scored && out.status == GRADE_PASSED);
        if (already && out.status == GRADE_FAILED && out.reason) {
                _cleanup_free_ char *why = out.reason;
                if (asprintf(&out.reason, "true in the seed, broken by the run: %s", why) < 0) {
                        out.reason = TAKE_PTR(why);
                        r = -ENOMEM;
                        goto fail;
                }
        }
        if (already)
                counts->already++;
        if (scored) {
                counts->scored++;
                if (out.status == GRADE_PASSED)
                        counts->passed++;
                else
                        counts->failed++;
        }
        switch (out.status) {
        case GRADE_UNMATCHED:
                counts->unmatched++;
                counts->not_evaluated++;
                break;
        case GRADE_ERROR:
                counts->error++;
                counts->not_evaluated++;
                break;
        case GRADE_SKIPPED:
                counts->skipped++;
                if (!g->opts->code_only)
                        counts->not_evaluated++;
                break;
        case GRADE_PASSED:
        case GRADE_FAILED:
                break;
        }

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
        if (!entry || (judgment && json_object_set(entry, "judgment", judgment) < 0)) {
                json_decref(entry);
                return -ENOMEM;
        }
        *ret = entry;
        return 0;
fail:
        grade_outcome_done(&out);
        return r;
}

int grade_run(const GradeTask *task, const GradeTwinRun *runs, size_t n, const GradeOptions *opts,
              json_t **ret_verdict, GradeError *e)
{
        static const GradeOptions defaults = {};
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
                        return grade_error(e, -EINVAL,
                                           "the run has a %s twin, which task %s does not",
                                           runs[i].twin, task->name);
                if (ts[k].name)
                        return grade_error(e, -EINVAL, "the run lists the %s twin twice",
                                           runs[i].twin);
                ts[k].name = task->twins[k];
                ts[k].final = (json_t *)runs[i].final;
                ts[k].tape = runs[i].tape;
                ts[k].seed_unknown = runs[i].seed_unknown;
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
                        return grade_error(e, r, "the %s seed: %s", task->twins[k], err);
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
        Grading g = {.task = task, .ts = ts, .n_ts = n_ts, .opts = opts ? opts : &defaults};
        for (size_t i = 0; i < task->n_criteria; i++) {
                json_t *entry = NULL;
                int r = grade_criterion(&g, i, &entry);
                if (r == -ENOENT) {
                        const GradeCriterion *c = &task->criteria[i];
                        return grade_error(
                                e, r,
                                "%s:%u: the criterion compares with its twin's seed, and no seed "
                                "is known for it: the run holds no <twin>.seed.json and the task "
                                "declares none (give the task its seed, or grade a run "
                                "directory that keeps the seeds)",
                                task->name, c->line);
                }
                if (r < 0)
                        return r;
                if (json_array_append_new(criteria, entry) < 0)
                        return -ENOMEM;
        }
        for (char **w = task->warnings; w && *w; w++)
                if (json_array_append_new(warnings, json_string(*w)) < 0)
                        return -ENOMEM;
        const Counts *counts = &g.counts;
        /* hosted Pome's completeness: a criterion that should have been evaluated and was
         * not makes the run incomplete, whatever the others scored — never a pass */
        bool complete = counts->scored > 0 && counts->not_evaluated == 0;
        bool passed = complete && 100.0 * (double)counts->passed >=
                                          task->pass_threshold * (double)counts->scored;
        json_t *score = counts->scored
                                ? json_real(100.0 * (double)counts->passed / (double)counts->scored)
                                : json_null();
        json_t *v = json_pack(
                "{s:i, s:{s:s, s:O, s:f, s:s?}, s:s, s:b, s:b, s:o, s:{s:I, s:I, s:I, s:I, s:I, "
                "s:I, s:I, s:I, s:I}, s:O, s:O, s:O, s:o}",
                "version", GRADE_VERDICT_VERSION, "task", "title", task->title, "twins", names,
                "pass_threshold", task->pass_threshold, "class", task->task_class, "state",
                !complete ? "incomplete"
                : passed  ? "pass"
                          : "fail",
                "passed", passed, "code_only", g.opts->code_only, "score", score, "counts",
                "criteria", (json_int_t)task->n_criteria, "scored", (json_int_t)counts->scored,
                "passed", (json_int_t)counts->passed, "failed", (json_int_t)counts->failed,
                "unmatched", (json_int_t)counts->unmatched, "skipped", (json_int_t)counts->skipped,
                "error", (json_int_t)counts->error, "not_evaluated",
                (json_int_t)counts->not_evaluated, "already_true_in_seed",
                (json_int_t)counts->already, "criteria", criteria, "twins", twins, "warnings",
                warnings, "agent_sealed",
                g.opts->agent_seal == GRADE_SEAL_UNKNOWN
                        ? json_null()
                        : json_boolean(g.opts->agent_seal == GRADE_SEAL_SEALED));
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
