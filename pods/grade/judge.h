/* SPDX-License-Identifier: MIT */
/*
 * The judge of `[model]` criteria (DESIGN.md "The judge"), the pure half: the grading library
 * asks a GradeJudge about one criterion at a time with a question built here from the run's
 * evidence, reads the answer's one form, and records the judgment in verdict.json, so that a
 * regrade from recorded judgments is a pure function again. The judges themselves (an
 * OpenAI-compatible or Anthropic chat API over HTTP, or a command) are pods/grade/judges.h's:
 * they do I/O, this file does none.
 *
 * The question is bounded: the end of the agent's reply (GRADE_JUDGE_REPLY_MAX bytes), each
 * twin's tape (every row's request and response cut, GRADE_JUDGE_TAPE_MAX bytes in all) and
 * what changed in each twin's world from its seed (GRADE_JUDGE_CHANGES_MAX bytes in all),
 * every cut said where it is made. Everything in it has been through the redaction of tapes
 * and /_pome/state (pods/twin/redact.h): a judge is another party, and sees no secret.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GRADE_JUDGE_REPLY_MAX        8192u       /* bytes: the end of the agent's reply */
#define GRADE_JUDGE_TAPE_MAX         (48u << 10) /* bytes: the tape rows, all twins together */
#define GRADE_JUDGE_ROW_BODY_MAX     2000u       /* bytes: one row's request or response body */
#define GRADE_JUDGE_CHANGES_MAX      (16u << 10) /* bytes: the changes, all twins together */
#define GRADE_JUDGE_CHANGE_VALUE_MAX 1024u       /* bytes: one changed value */
#define GRADE_JUDGE_ANSWER_MAX       4096u       /* bytes of the answer recorded in verdict.json */

/* One question to a judge. All borrowed. */
typedef struct GradeJudgeQuestion {
        const char *instructions;  /* grade_judge_instructions: the system prompt */
        const char *question;      /* the task, the criterion and the evidence: the user turn */
        const char *criterion;     /* the criterion's sentence alone */
        const char *task_prompt;   /* the task's ## Prompt alone */
        const char *prompt_sha256; /* hex SHA-256 of instructions, a blank line, question */
} GradeJudgeQuestion;

/*
 * A judge. ask answers one question: 0 with the answer's text (a new string, what the model
 * said) in *ret_answer, or a negative errno with why, for a human, in err (errlen bytes):
 * unreachable, timed out, an HTTP error, no text in the answer. Retries, if any, are the
 * judge's own; the grading library asks once per criterion and never retries.
 */
typedef struct GradeJudge {
        const char *api;   /* "openai", "anthropic" or "command": recorded in each judgment */
        const char *model; /* the model id recorded in each judgment ("" when unknown) */
        int (*ask)(void *userdata, const GradeJudgeQuestion *q, char **ret_answer, char *err,
                   size_t errlen);
        void *userdata;
} GradeJudge;

/* The fixed instructions (the system prompt) every question is asked under; README "The
 * judge" quotes them. */
extern const char grade_judge_instructions[];

/* One twin's evidence. All borrowed. */
typedef struct GradeJudgeTwin {
        const char *name;         /* "github" */
        const json_t *seed_world; /* the world the twin booted into; NULL: unknown */
        const json_t *final;      /* its world at the end; NULL: none was recorded */
        const json_t *tape;       /* its tape rows (an array); NULL: none was recorded */
} GradeJudgeTwin;

/*
 * The question about criterion (its sentence) of a task with prompt, from the evidence of n
 * twins and the agent's reply (reply_len bytes, any bytes; only its last
 * GRADE_JUDGE_REPLY_MAX are used; NULL: not recorded). Deterministic: the same inputs give
 * the same bytes (object members in key order). Returns 0 with a new NUL-terminated string in
 * *ret, -ENOMEM.
 */
int grade_judge_question(const char *prompt, const char *criterion, const GradeJudgeTwin *twins,
                         size_t n, const char *reply, size_t reply_len, char **ret);

/* The hex SHA-256 of instructions, "\n\n" and question, into out. */
void grade_judge_prompt_sha256(const char *instructions, const char *question, char out[65]);

/*
 * Reads a judge's answer: one JSON object {"verdict": "pass"|"fail", "rationale": string},
 * alone or inside other text (a code fence, a sentence around it: the first '{' to the last
 * '}' is read). The verdict's case is ignored. Returns 0 with the verdict in *ret_pass and a
 * new string in *ret_rationale; -EBADMSG with why in err (errlen bytes) when the answer has
 * no such object; -ENOMEM.
 */
int grade_judge_parse_answer(const char *answer, bool *ret_pass, char **ret_rationale, char *err,
                             size_t errlen);
