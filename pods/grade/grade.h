/* SPDX-License-Identifier: MIT */
/*
 * Grading (DESIGN.md "Grading is a library too"): a pure function of (task, seed worlds,
 * final worlds, tapes) → verdict, shared by pomed's finalize, `pome run` and `pome eval`,
 * so the same inputs give the same verdict.json bytes wherever they are graded.
 *
 * - A *task* is hosted Pome's Markdown file (CONTRACT.md "Task file"), parsed by
 *   grade_task_parse: title, prompt, criteria, ## Config (YAML), ## Seed State.
 * - A *check* is one member of the closed vocabulary (CONTRACT.md "Checks"): an id, a twin,
 *   typed parameters, a substrate (final state, seed+final delta, or tape), a polarity and a
 *   sentence template. A `[code]` *criterion* binds to exactly one check when its sentence
 *   matches the check's template; one that binds nothing is `unmatched`, never passed.
 * - A *verdict* grades every criterion with evidence: tape event ids and RFC 6901 JSON
 *   Pointers into the twin's final world (the <twin>.final.json pomed keeps).
 *
 * Nothing here logs, reads a clock or knows the supervisor; the only I/O is the explicit
 * loaders (grade_task_load, grade_run_dir). Uses pods/twin (to build seed worlds as the pod
 * does) and common/ (YAML, files).
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A refusal for a human: "task.md:12: unknown twin \"gitlab\"". Filled on error only. */
typedef struct GradeError {
        char message[512];
} GradeError;

/* ---------------------------------------------------------------- tasks */

typedef enum GradeCriterionKind {
        GRADE_CRITERION_CODE,  /* `[code]`: bound to a check and graded here */
        GRADE_CRITERION_MODEL, /* `[model]`: for a judge model; skipped here */
} GradeCriterionKind;

/* One `- [code…] …` / `- [model…] …` line of ## Success Criteria. */
typedef struct GradeCriterion {
        unsigned line; /* 1-based line in the task file */
        GradeCriterionKind kind;
        char *twin;         /* the `[code:<twin>]` tag; NULL when untagged */
        bool always_scored; /* graded even when the seed already satisfies it */
        char *text;         /* the sentence, trimmed */
} GradeCriterion;

/* A parsed task. Every member is owned by the task. */
typedef struct GradeTask {
        char *name;              /* the file name messages use ("task.md") */
        char *title;             /* `# Title`, else the file name without .md */
        char *prompt;            /* ## Prompt, trimmed */
        char *setup;             /* ## Setup, "" when absent */
        char *expected_behavior; /* ## Expected Behavior, "" when absent */
        char **twins;            /* ## Config twins, NULL-terminated, first is primary;
                                  * ["github"] when the task declares none (hosted's default) */
        unsigned timeout_sec;    /* ## Config timeout, default 60 */
        unsigned runs;           /* ## Config runs (trials), default 1 */
        double pass_threshold;   /* ## Config passThreshold, percent in [0, 100], default 100 */
        char *task_class;        /* ## Config class (conformance|restraint|adversarial) or NULL */
        GradeCriterion *criteria;
        size_t n_criteria;
        json_t *seeds;   /* {twin: seed} for each twin the task seeds (the sidecar
                          * <task>.seed.json wins over ## Seed State); a twin absent
                          * here boots from its image's default seed */
        char **warnings; /* "task.md:7: unknown ## Config key \"model\" ignored", or NULL */
} GradeTask;

/*
 * Parses a task file's text (len bytes; need not be NUL-terminated) named name (used in
 * messages, "task.md"). sidecar_seed (borrowed, may be NULL) is the parsed <task>.seed.json;
 * it wins over the inline ## Seed State. Accepted criterion markers (hosted Pome's grammar
 * plus one spelling): `[code]`, `[code:<twin>]`, `[model]`, `[model:<twin>]`, with
 * `always-scored` inside the marker (`[code:slack always-scored]`) or as the first word
 * after it (`[code:slack] always-scored …`). A line of ## Success Criteria that reaches for
 * a marker and misses is refused rather than dropped: hosted Pome's near misses (`[code
 * always]`, `[code, always-scored]`) and, after an optional bullet, a `[` or the word code or
 * model in any case followed by `:`, `]` or a blank (`- [Code:github]`, `- [cod:github]`,
 * `[code] …` without its bullet, `- code:github …`, `- [Model]`); any other list item there
 * is a warning ("not a criterion: no [code] or [model] marker; it is not graded").
 * Unknown ## Config keys are kept as warnings (hosted Pome ignores them, so refusing them
 * would refuse its task files); a known key with a bad value is an error.
 *
 * Returns 0 with a new task in *ret, -EINVAL with "<name>:<line>: …" in e (bad YAML, an
 * unknown twin, a criterion or a seed for a twin the task lacks, no ## Prompt, no criteria,
 * a malformed seed), -ENOMEM.
 */
int grade_task_parse(const char *text, size_t len, const char *name, const json_t *sidecar_seed,
                     GradeTask **ret, GradeError *e);

/*
 * Reads the task file at path (at most 1 MiB) and the sidecar next to it (path with ".md"
 * replaced by ".seed.json", when it exists), then grade_task_parse with the file's base name.
 * Returns what grade_task_parse returns, or the errno of a failed read (e names the file).
 */
int grade_task_load(const char *path, GradeTask **ret, GradeError *e);

/* Frees a task. Accepts NULL; returns NULL. */
GradeTask *grade_task_free(GradeTask *t);

/*
 * Binds every `[code]` criterion of task against its twins' vocabularies, as grade_run will,
 * without grading anything: so a sentence that binds no check is found before an agent runs
 * rather than in its verdict. Returns the number of criteria that bind nothing (0 when all
 * do), with *ret_problems a new NULL-terminated list of "<task name>:<line>: <why>" (why as
 * the verdict's unmatched reason says it: the closest template and its bad value, or that no
 * template has this shape), NULL when there are none; -ENOMEM.
 */
int grade_task_check(const GradeTask *task, char ***ret_problems);

/* ---------------------------------------------------------------- inputs and verdict */

/* What one twin of a run left behind. All borrowed. */
typedef struct GradeTwinRun {
        const char *twin;    /* kind name: "github", "slack", "stripe" */
        const json_t *seed;  /* the raw seed the pod booted from (<twin>.seed.json); NULL = the
                              * kind's empty world. Turned into the seed world by twin_new,
                              * exactly as the pod did (load_seed reads no clock). */
        const json_t *final; /* the final world (<twin>.final.json), NULL when missing (the pod
                              * died before finalize exported it): every check that needs it
                              * fails, saying so */
        const json_t *tape;  /* the twin's tape rows in order (a JSON array), NULL when missing:
                              * every tape check fails, saying so */
} GradeTwinRun;

/*
 * Grades every criterion of task against runs (n of them; one per twin of the task; a twin
 * of the task with no entry has the kind's empty world as seed and neither final state nor
 * tape). Rules:
 * - `[model]` → skipped ("no judge model configured"), never counted.
 * - `[code]` binds its sentence to a check of its tagged twin, or, untagged, of each of the
 *   task's twins in order (the first that binds wins). No binding → unmatched.
 * - A criterion whose check (final or seed+final substrate) already passes against the seed
 *   world taken as the final one is already_true_in_seed: while it still passes it is not
 *   scored (the agent had nothing to do), unless always_scored; once it fails it is scored as
 *   a failure either way (the agent broke it). Tape checks are never already true in the
 *   seed: a seed has no tape.
 * - score = passed / scored, where scored counts passed, failed and unmatched criteria (an
 *   unmatched criterion scores as a failure) and leaves out skipped and already-true ones;
 *   passed = score * 100 >= passThreshold and at least one criterion was scored (state
 *   "pass"/"fail"; "incomplete" when none was).
 * Returns 0 with the verdict (a new JSON object, rendered by grade_verdict_render) in
 * *ret_verdict, -EINVAL with a message in e when a seed cannot be loaded by its twin or a run
 * names a twin the task lacks, -ENOMEM.
 */
int grade_run(const GradeTask *task, const GradeTwinRun *runs, size_t n, json_t **ret_verdict,
              GradeError *e);

/*
 * The one byte form of a verdict (every caller writes this, so `pome eval` reproduces
 * pomed's verdict.json byte for byte): keys sorted, two-space indent, arrays in grading
 * order, a final newline. Returns 0 with a new NUL-terminated buffer of *ret_len bytes (the
 * NUL excluded; ret_len may be NULL), -ENOMEM.
 */
int grade_verdict_render(const json_t *verdict, char **ret, size_t *ret_len);

/*
 * Grades a run directory (supervisor/rundir.h's layout): the task at task_path (NULL =
 * <dir>/task.md, with <dir>/task.seed.json as its sidecar), and for each twin of the task
 * <dir>/<twin>.seed.json (absent: the task's seed for that twin, else the kind's empty
 * world, with a warning in the verdict), <dir>/<twin>.final.json (absent: missing, as
 * GradeTwinRun says) and <dir>/<twin>.tape.jsonl (absent: an empty tape — pomed makes the
 * file with its first row). Returns 0 with the rendered verdict
 * (grade_verdict_render) in *ret and *ret_len, a negative errno with e naming the file and
 * line (a task that does not parse, a file that is not JSON, a tape line that is not a JSON
 * object), -ENOMEM.
 */
int grade_run_dir(const char *dir, const char *task_path, char **ret, size_t *ret_len,
                  GradeError *e);

/*
 * summary.md of a run directory (supervisor/rundir.h's layout), built from its files alone
 * (no model, no clock: the same directory gives the same bytes): the task's title and
 * prompt (task.md; a task that does not parse is said, not fatal), per twin of the task (or,
 * without one, per twin with a tape or a final state) every call in order — read or
 * changed, failed calls and routes the twin does not serve called out, the first 200 listed
 * —, then, with verdict.json, each criterion with its status, reason and evidence rendered
 * (the tape row of each event id, the final-state value of each pointer). Returns 0 with a
 * new NUL-terminated buffer of *ret_len bytes (ret_len may be NULL), a negative errno with e
 * naming the file and line that cannot be read, -ENOMEM.
 */
int grade_summary_run_dir(const char *dir, char **ret, size_t *ret_len, GradeError *e);

/* ---------------------------------------------------------------- vocabulary */

/*
 * The check vocabulary as JSON, for `GET /v1/checks?twin=` and `pome checks --format json`:
 * {"checks": [{id, twin, template, description, substrate, polarity, params: [{name, type,
 * enum?, description}]}]} in a fixed order, for twin only (NULL = every twin). Returns 0 with
 * a new reference, -ENOENT for a twin with no checks (an unknown name), -ENOMEM.
 */
int grade_checks_list(const char *twin, json_t **ret);

/*
 * RFC 6901: the value the JSON Pointer ptr names in doc ("" = doc itself; "~1" is '/', "~0"
 * is '~'; an array index is decimal without leading zeros). Borrowed; NULL when ptr does not
 * resolve or is malformed.
 */
json_t *grade_pointer_get(const json_t *doc, const char *ptr);
