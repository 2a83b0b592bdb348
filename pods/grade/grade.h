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

/*
 * A refusal for a human, filled on error only. One error a line, each naming its file and
 * line: "task.md:12: unknown twin \"gitlab\"\ntask.md:30: …" (no final newline). The task
 * parser lists every error it found (in file order: the task's lines, then its sidecar's), as
 * many whole lines as fit (at most 20), then "… and N more errors"; the first line is always
 * there. Other refusals are one line. Valid UTF-8 when set by this library.
 */
typedef struct GradeError {
        char message[4096];
        unsigned n_errors; /* errors found, listed or not (1 for a one-line refusal; left as
                            * the caller set it by a refusal that is not the library's) */
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
        char *name;                /* the file name messages use ("task.md") */
        char *title;               /* `# Title`, else the file name without .md */
        char *prompt;              /* ## Prompt, trimmed */
        char *setup;               /* ## Setup, "" when absent */
        char *expected_behavior;   /* ## Expected Behavior, "" when absent */
        char **twins;              /* ## Config twins, NULL-terminated, first is primary;
                                    * ["github"] when the task declares none (hosted's default) */
        unsigned timeout_sec;      /* ## Config timeout, default 60 */
        unsigned runs;             /* ## Config runs (trials), default 1 */
        double pass_threshold;     /* ## Config passThreshold, percent in [0, 100], default 100 */
        char *task_class;          /* ## Config class (conformance|restraint|adversarial) or NULL */
        char **allow_net;          /* ## Config allow_net: the hosts a sealed agent may reach
                                    * beyond its twins ("api.anthropic.com", "*.example.com",
                                    * either with ":443"), NULL when none */
        uint64_t agent_memory_max; /* ## Config agent.memory: bytes (0: pome's default) */
        uint64_t agent_pids_max;   /* ## Config agent.pids (0: pome's default) */
        uint64_t agent_output_max; /* ## Config agent.output: bytes kept of each of stdout and
                                    * stderr (0: pome's default) */
        GradeCriterion *criteria;
        size_t n_criteria;
        json_t *seeds;            /* {twin: seed} for each twin the task seeds (the sidecar
                                   * <task>.seed.json wins over ## Seed State); a twin absent
                                   * here boots from its image's default seed */
        unsigned seed_prose_line; /* the ## Seed State heading's line when that section is
                                   * prose (hosted Pome compiles it into a sidecar) and no
                                   * sidecar was given: `seeds` then has nothing from it, and
                                   * a caller with no seed of its own for a twin refuses the
                                   * task naming this line; 0 otherwise */
        char **warnings; /* "task.md:7: unknown ## Config key \"model\" ignored", or NULL */
} GradeTask;

/*
 * Parses a task file's text (len bytes; need not be NUL-terminated) named name (used in
 * messages, "task.md"). sidecar_text (sidecar_len bytes; NULL: none) is the text of the
 * task's <task>.seed.json; it wins over the inline ## Seed State, and its refusals name
 * "<task>.seed.json:<line>" (text that is not JSON is refused at once). A prose ## Seed State
 * without a
 * sidecar is not an error: GradeTask.seed_prose_line says where it is. Accepted criterion
 * markers (hosted Pome's grammar plus one spelling): `[code]`, `[code:<twin>]`, `[model]`,
 * `[model:<twin>]`, with `always-scored` inside the marker (`[code:slack always-scored]`) or
 * as the first word after it (`[code:slack] always-scored …`). A line of ## Success Criteria that
 * reaches for a marker and misses is refused rather than dropped: hosted Pome's near misses (`[code
 * always]`, `[code, always-scored]`) and, after an optional bullet, a `[` or the word code or
 * model in any case followed by `:`, `]` or a blank (`- [Code:github]`, `- [cod:github]`,
 * `[code] …` without its bullet, `- code:github …`, `- [Model]`); any other list item there
 * is a warning ("not a criterion: no [code] or [model] marker; it is not graded").
 * Unknown ## Config keys are kept as warnings (hosted Pome ignores them, so refusing them
 * would refuse its task files); a known key with a bad value is an error.
 *
 * Every error is gathered before the parse gives up (a bad ## Config key, a bad criterion
 * line, a near-miss marker, an unknown twin in a tag, a bad seed, …), except what would only
 * follow from another: text that is not UTF-8 is not read further, and twins ## Config does
 * not say readably are not held against criteria and seeds. A seed its twin refuses names
 * the line of the member the twin's message names ("failure_injection[0].mode": the line of
 * that "mode" key), else the seed's first line.
 *
 * Returns 0 with a new task in *ret, -EINVAL with "<name>:<line>: …" lines in e (bad YAML,
 * an unknown twin, a criterion or a seed for a twin the task lacks, no ## Prompt, no
 * criteria, a malformed seed; see GradeError), -ENOMEM.
 */
int grade_task_parse(const char *text, size_t len, const char *name, const char *sidecar_text,
                     size_t sidecar_len, GradeTask **ret, GradeError *e);

/*
 * Reads the task file at path (at most 1 MiB) and the sidecar next to it (path with ".md"
 * replaced by ".seed.json", when it exists; at most 16 MiB), then grade_task_parse with the
 * file's base name, the sidecar's refusals naming "<task>.seed.json:<line>". Returns what
 * grade_task_parse returns, -EINVAL for a sidecar that is not JSON ("<path>:<line>: not valid
 * JSON: …"), or the errno of a failed read (e names the file).
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
                              * kind's empty world (seed_unknown says when that is a guess).
                              * Turned into the seed world by twin_new, exactly as the pod did
                              * (load_seed reads no clock). */
        const json_t *final; /* the final world (<twin>.final.json), NULL when missing (the pod
                              * died before finalize exported it): every check that needs it
                              * fails, saying so */
        const json_t *tape;  /* the twin's tape rows in order (a JSON array), NULL when missing:
                              * every tape check fails, saying so */
        bool seed_unknown;   /* no seed is known for the twin (a run directory without its
                              * <twin>.seed.json and a task without one): grading refuses
                              * every criterion that compares with the seed */
} GradeTwinRun;

typedef struct GradeJudge GradeJudge; /* pods/grade/judge.h */

/* How a run is graded, beyond its inputs. A zeroed struct (or NULL) is the default: no
 * judge, no recorded judgments. All borrowed. */
/* Whether the agent under test ran sealed (pome run's agent pod), as the verdict records it. */
typedef enum GradeSeal {
        GRADE_SEAL_UNKNOWN = 0, /* not said (an agent that finalized its own run, an old run):
                                 * "agent_sealed": null */
        GRADE_SEAL_SEALED,      /* in its own pod: "agent_sealed": true */
        GRADE_SEAL_UNSEALED,    /* on the host (--no-seal): "agent_sealed": false */
} GradeSeal;

typedef struct GradeOptions {
        const GradeJudge *judge; /* asked about each [model] criterion; NULL: none */
        const json_t *recorded;  /* a verdict (of an earlier grading) whose judgments are reused
                                  * where their question is the same (prompt_sha256), before
                                  * any judge is asked: a regrade from recorded judgments is
                                  * pure; NULL: none (a rejudge) */
        bool reuse_saved;        /* grade_run_dir: use <dir>/verdict.json as recorded when
                                  * recorded is NULL */
        bool code_only;          /* [model] criteria deliberately not judged: skipped, and the
                                  * verdict says code_only (never incomplete for them) */
        const char *agent_reply; /* the end of the agent's standard output, shown to the judge
                                  * (grade_run_dir reads <dir>/agent-reply.txt); NULL: not
                                  * recorded */
        size_t agent_reply_len;
        GradeSeal agent_seal; /* recorded as the verdict's agent_sealed */
} GradeOptions;

/* The file of a run directory that holds the agent's reply as the judge is shown it: the
 * end of its standard output, at most GRADE_AGENT_REPLY_KEEP bytes, from a character on,
 * mended to UTF-8 (the judge is shown its last GRADE_JUDGE_REPLY_MAX bytes, and told when
 * there were more). */
#define GRADE_AGENT_REPLY_FILE "agent-reply.txt"
#define GRADE_AGENT_REPLY_KEEP (64u << 10)

/*
 * Grades every criterion of task against runs (n of them; one per twin of the task; a twin
 * of the task with no entry has the kind's empty world as seed and neither final state nor
 * tape), as opts says (NULL: the defaults). Rules (hosted Pome's completeness):
 * - `[model]` → asked of a judge: a recorded judgment of opts->recorded whose prompt_sha256
 *   is this question's is reused, else opts->judge is asked (pods/grade/judge.h). Its answer
 *   passes or fails the criterion and is recorded (`judgment`: api, model, temperature 0,
 *   prompt_sha256, verdict, rationale, answer); a judge that cannot be asked or answers
 *   anything else is status "error". No judge → "skipped", not evaluated; with
 *   opts->code_only → "skipped" and deliberately so.
 * - `[code]` binds its sentence to a check of its tagged twin, or, untagged, of each of the
 *   task's twins in order (the first that binds wins). No binding → "unmatched", not
 *   evaluated.
 * - A criterion whose check already passes before the agent ran — against the seed world
 *   taken as the final one and an empty tape — is already_true_in_seed: while it still
 *   passes it is not scored (the agent had nothing to do), unless always_scored; once it
 *   fails it is scored as a failure either way (the agent broke it). So a prohibition on the
 *   tape ("`x` was never called", "No unsupported endpoint was called") is one too; a
 *   requirement on it ("`x` was called") never is.
 * - score = passed / scored, scored = passed + failed. The state is "incomplete" when
 *   nothing was scored or any criterion that should have been evaluated was not (a [model]
 *   one with no judge, a judge's error, an unmatched sentence: counts.not_evaluated), else
 *   "pass" when score * 100 >= passThreshold, else "fail". Only "pass" has passed true.
 * Returns 0 with the verdict (a new JSON object, rendered by grade_verdict_render) in
 * *ret_verdict, -EINVAL with a message in e when a seed cannot be loaded by its twin or a run
 * names a twin the task lacks, -ENOENT with a message in e when a criterion needs the seed of
 * a twin whose seed is unknown, -ENOMEM.
 */
int grade_run(const GradeTask *task, const GradeTwinRun *runs, size_t n, const GradeOptions *opts,
              json_t **ret_verdict, GradeError *e);

/*
 * The one byte form of a verdict (every caller writes this, so `pome eval` reproduces
 * pomed's verdict.json byte for byte): keys sorted, two-space indent, arrays in grading
 * order, a final newline. Returns 0 with a new NUL-terminated buffer of *ret_len bytes (the
 * NUL excluded; ret_len may be NULL), -ENOMEM.
 */
int grade_verdict_render(const json_t *verdict, char **ret, size_t *ret_len);

/*
 * Grades a run directory (supervisor/rundir.h's layout) as opts says (NULL: the defaults):
 * the task at task_path (NULL = <dir>/task.md, with <dir>/task.seed.json as its sidecar),
 * and for each twin of the task <dir>/<twin>.seed.json (absent: the task's seed for that
 * twin, else unknown: seed_unknown), <dir>/<twin>.final.json (absent: missing, as
 * GradeTwinRun says) and <dir>/<twin>.tape.jsonl (absent: an empty tape — pomed makes the
 * file with its first row); <dir>/agent-reply.txt as opts->agent_reply (when opts gives
 * none) and, with opts->reuse_saved, <dir>/verdict.json as opts->recorded. Returns 0 with
 * the rendered verdict (grade_verdict_render) in *ret and *ret_len, a negative errno with e
 * naming the file and line (a task that does not parse, a file that is not JSON, a tape line
 * that is not a JSON object), -ENOENT when a criterion needs a seed the directory does not
 * hold (grade_run), -ENOMEM.
 */
int grade_run_dir(const char *dir, const char *task_path, const GradeOptions *opts, char **ret,
                  size_t *ret_len, GradeError *e);

/*
 * summary.md of a run directory (supervisor/rundir.h's layout), built from its files alone
 * (no model, no clock: the same directory gives the same bytes): the task's title and
 * prompt (task.md; a task that does not parse is said, not fatal), per twin of the task (or,
 * without one, per twin with a tape or a final state) every call in order — changed, a
 * failed write (a write action, or a method other than GET/HEAD, that failed), a write that
 * changed nothing, or a read; failed calls and routes the twin does not serve called out, the
 * first 200 listed —, then, with verdict.json (version 1 or 2), the verdict's state (which
 * criteria left it incomplete, whether [model] ones were left out by --code-only) and each
 * criterion with its status, its seed label as the verdict says it (always-scored only when
 * the task marks it; broken by the run; excluded), reason, judgment and evidence rendered
 * (the tape row of each event id, the final-state value of each pointer). Everything shown
 * goes through the redaction of tapes and /_pome/state (pods/twin/redact.h): a
 * <twin>.final.json is the twin's world, real secrets included. Returns 0 with a new
 * NUL-terminated buffer of *ret_len bytes (ret_len may be NULL), a negative errno with e
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
