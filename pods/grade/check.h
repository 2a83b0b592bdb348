/* SPDX-License-Identifier: MIT */
/*
 * Grading internals shared by checks.c (registry, binding, evaluation), the per-twin
 * vocabularies (checks-github.c, checks-slack.c, checks-stripe.c), verdict.c and their unit
 * tests. Not for callers: they use grade.h.
 *
 * A check is data (GradeCheck) plus one pure function over (arguments, seed world, final
 * world, tape rows) → GradeOutcome. The function is called only with the substrate it
 * declares present: grade_check_eval turns a missing final state or tape into a failure
 * before it gets there.
 */
#pragma once

#include <stdint.h>

#include "common/util.h"
#include "pods/grade/grade.h"

typedef enum GradeStatus {
        GRADE_PASSED,
        GRADE_FAILED,
        GRADE_UNMATCHED, /* no check binds the sentence, or the check cannot decide which row
                          * the sentence means (several PaymentIntents for "The …") */
        GRADE_SKIPPED,   /* not graded: a [model] criterion with no judge, or --code-only */
        GRADE_ERROR,     /* the judge of a [model] criterion could not be asked, or answered
                          * something else than a verdict */
} GradeStatus;

/* "passed", "failed", "unmatched", "skipped", "error". */
const char *grade_status_to_string(GradeStatus s);

typedef enum GradeSubstrate {
        GRADE_SUBSTRATE_FINAL,      /* the final world alone */
        GRADE_SUBSTRATE_SEED_FINAL, /* the seed world against the final one */
        GRADE_SUBSTRATE_TAPE,       /* the tape rows (the final world may be read too, to
                                     * resolve a name, when present) */
} GradeSubstrate;

/* "final", "seed+final", "tape". */
const char *grade_substrate_to_string(GradeSubstrate s);

typedef enum GradePolarity {
        GRADE_POSITIVE, /* something must come to be: a do-nothing agent fails it */
        GRADE_NEGATIVE, /* a prohibition: the untouched world passes it */
} GradePolarity;

typedef enum GradeParamType {
        GRADE_PARAM_NUMBER,     /* an issue or pull request number: 1 to 2^31-1 (integer) */
        GRADE_PARAM_COUNT,      /* an amount or count: 0 to 10^15-1 (integer) */
        GRADE_PARAM_REPO,       /* owner/name */
        GRADE_PARAM_LOGIN,      /* a GitHub login */
        GRADE_PARAM_LABEL,      /* a label name: 1 to 50 characters, no backtick */
        GRADE_PARAM_TEXT,       /* quoted text: not empty, no double quote */
        GRADE_PARAM_PATH,       /* a file path in a repository, relative, no backtick */
        GRADE_PARAM_TOOL,       /* an action (MCP tool) of the check's twin */
        GRADE_PARAM_ENUM,       /* one of GradeParam.values */
        GRADE_PARAM_CHANNEL,    /* a Slack channel name or id, a leading '#' dropped */
        GRADE_PARAM_EMOJI,      /* a Slack emoji name, surrounding ':' dropped */
        GRADE_PARAM_CHARGE,     /* a Stripe charge id (ch_…, py_…) */
        GRADE_PARAM_EVENT_TYPE, /* a Stripe event type: dotted lower-case words */
} GradeParamType;

/* One {slot} of a template. */
typedef struct GradeParam {
        const char *name; /* the slot's name in the template */
        GradeParamType type;
        const char *const *values; /* GRADE_PARAM_ENUM: the NULL-terminated allowed values */
        bool fold_case;            /* GRADE_PARAM_ENUM: compared case-insensitively, bound
                                    * as spelt in values */
        const char *description;   /* one phrase for the vocabulary listing */
} GradeParam;

/* What a check found. Every pointer is owned by the outcome. */
typedef struct GradeOutcome {
        GradeStatus status;
        char *reason;        /* one sentence for a human */
        json_t *event_ids;   /* array of the tape rows' event_id that back it */
        json_t *state_paths; /* array of RFC 6901 pointers that resolve in the final world */
} GradeOutcome;

/* Releases what an outcome owns and zeroes it. Accepts a zeroed outcome. */
void grade_outcome_done(GradeOutcome *o);

/* What a check function reads. All borrowed. */
typedef struct GradeCheckInput {
        const json_t *args; /* the bound parameters: slot name → JSON integer or string */
        json_t *seed;       /* the seed world (always there) */
        json_t *final;      /* the final world (always there for final and seed+final checks;
                             * may be NULL for tape checks) */
        const json_t *tape; /* the tape rows (an array; always there for tape checks, may be
                             * NULL otherwise) */
} GradeCheckInput;

/* Fills o (status, reason, evidence). 0, or -ENOMEM (o is then released by the caller). */
typedef int (*GradeCheckFn)(const GradeCheckInput *in, GradeOutcome *o);

typedef struct GradeCheck {
        const char *id;          /* "github.issue-assignee" */
        const char *twin;        /* "github" */
        const char *template;    /* hosted Pome's sentence, {slot} for each parameter */
        const char *description; /* what it asserts, and what it does not */
        GradeSubstrate substrate;
        GradePolarity polarity;
        /* when the polarity turns on an argument ("is in state open" is a prohibition),
         * the polarity for these args; NULL: polarity */
        GradePolarity (*polarity_of)(const json_t *args);
        const GradeParam *params; /* one per slot, in template order */
        size_t n_params;
        GradeCheckFn fn;
} GradeCheck;

/* Each twin's vocabulary, in listing order (checks-<twin>.c). */
extern const GradeCheck grade_checks_github[];
extern const size_t grade_n_checks_github;
extern const GradeCheck grade_checks_slack[];
extern const size_t grade_n_checks_slack;
extern const GradeCheck grade_checks_stripe[];
extern const size_t grade_n_checks_stripe;
extern const GradeCheck grade_checks_gmail[];
extern const size_t grade_n_checks_gmail;
extern const GradeCheck grade_checks_linear[];
extern const size_t grade_n_checks_linear;

/* The i-th check of the whole vocabulary (github, slack, stripe order), NULL past the end. */
const GradeCheck *grade_check_at(size_t i);

/* The check called id, or NULL. */
const GradeCheck *grade_check_find(const char *id);

/* The polarity of c bound to args. */
GradePolarity grade_check_polarity(const GradeCheck *c, const json_t *args);

/*
 * Binds sentence (a criterion's text) to a check of twin: the first check, in vocabulary
 * order, whose template it matches with every parameter valid. Whitespace around and
 * inside the sentence is normalised (runs become one space) and one trailing '.' dropped;
 * the template's literal text, backticks and double quotes included, must match exactly.
 * Returns 1 with the check in *ret_check and its arguments (a new object, slot → value) in
 * *ret_args; 0 when nothing binds, with why in *ret_reason (a new string: the closest
 * template and its invalid parameter, or that no template has this shape, followed by
 * "; did you mean: `TEMPLATE`… (the sentence differs: …«was→wanted»…)" naming up to three
 * nearest templates, the differences marked, when any is near); -ENOMEM.
 */
int grade_bind(const char *sentence, const char *twin, const GradeCheck **ret_check,
               json_t **ret_args, char **ret_reason);

/*
 * Evaluates check c with args against seed (the seed world, not NULL), final (NULL when the
 * twin left none) and tape (NULL when missing). A missing substrate the check needs is a
 * failure that says so; otherwise c->fn decides. Fills o (zeroed by the caller). 0 or -ENOMEM.
 */
int grade_check_eval(const GradeCheck *c, const json_t *args, json_t *seed, json_t *final,
                     const json_t *tape, GradeOutcome *o);

/* ----- for the check functions (checks.c) */

/* Sets o's status and reason (printf-style). 0 or -ENOMEM. */
int grade_outcome_set(GradeOutcome *o, GradeStatus status, const char *fmt, ...) _printf_(3, 4);

/* Appends a state path built printf-style (the caller escapes tokens: grade_pointer_token).
 * 0 or -ENOMEM. */
int grade_cite_path(GradeOutcome *o, const char *fmt, ...) _printf_(2, 3);

/* Appends row's event_id when it has a non-empty one. 0 or -ENOMEM. */
int grade_cite_event(GradeOutcome *o, const json_t *row);

/* "No unsupported endpoint was called", hosted Pome's check of the GitHub, Gmail and Linear
 * twins alike: no tape row has fidelity "unsupported" (the loud 501); cites those that do.
 * A GradeCheckFn. */
int grade_check_no_unsupported_endpoint(const GradeCheckInput *in, GradeOutcome *o);

/* s as an RFC 6901 reference token ('~' → "~0", '/' → "~1"): a new string, NULL on OOM. */
char *grade_pointer_token(const char *s);

/* The string or integer argument name of in (borrowed; NULL / 0 when absent). */
const char *grade_arg_str(const GradeCheckInput *in, const char *name);
int64_t grade_arg_int(const GradeCheckInput *in, const char *name);

/* The tape row's request header name (lower-case, as the front records it; matched
 * case-insensitively for tapes from other recorders), or NULL. */
const char *grade_row_header(const json_t *row, const char *name);

/* Writes the printf-style message into e (when not NULL) and returns r, for one-line
 * refusals: return grade_error(e, -EINVAL, "task.md:%u: …", line). */
int grade_error(GradeError *e, int r, const char *fmt, ...) _printf_(3, 4);

/* ----- run directory files (load.c), for the loader and the summary */

#define GRADE_SEED_MAX  (16u << 20)  /* bytes of a <twin>.seed.json */
#define GRADE_FINAL_MAX (256u << 20) /* bytes of a <twin>.final.json (or a verdict.json) */
#define GRADE_TAPE_MAX  (1u << 30)   /* bytes of a <twin>.tape.jsonl */

/* <dir>/<name> (at most max bytes) as one JSON document: 0, 1 when absent (*ret NULL),
 * -EINVAL with e naming the line, -EFBIG, another negative errno. */
int grade_load_json(const char *dir, const char *name, size_t max, json_t **ret, GradeError *e);

/* <dir>/<name>, JSON Lines of tape rows, as a new array: 0, 1 when absent (*ret NULL), -EINVAL
 * with e naming the line that is not a JSON object, another negative errno. */
int grade_load_tape(const char *dir, const char *name, json_t **ret, GradeError *e);
