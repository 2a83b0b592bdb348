/* SPDX-License-Identifier: MIT */
/*
 * The judges of `[model]` criteria (DESIGN.md "The judge"): the two implementations of
 * pods/grade/judge.h's GradeJudge, configured the same way from pomed.conf's `judge:` and
 * from `pome run|eval --judge`:
 *
 * - an HTTP chat API: OpenAI's chat completions (`POST {url}/chat/completions`, the wire
 *   format of OpenAI, vLLM, Ollama, llama.cpp's server and most gateways; the key as
 *   `Authorization: Bearer`) or Anthropic's Messages API (`POST {url}/v1/messages`, the key
 *   as `x-api-key`, `anthropic-version: 2023-06-01`), asked at temperature 0 with the fixed
 *   instructions as the system prompt and the question as the user's turn. Transport errors,
 *   408, 429 and 5xx are retried with exponential backoff (1 s, 2 s, 4 s…, at most 10 s, or
 *   the answer's Retry-After up to 30 s), `attempts` times in all; any other status is an
 *   error at once.
 * - a command: `/bin/sh -c COMMAND` in a session of its own, the question as one JSON object
 *   on its stdin ({instructions, question, criterion, task_prompt, prompt_sha256, model,
 *   temperature}), the answer on its stdout (what grade_judge_parse_answer reads), stderr
 *   kept for errors. A non-zero exit or a timeout (its session is killed) is an error; it is
 *   run once.
 *
 * Blocking: a judge waits for its answer (pomed asks from its grading child, never from the
 * loop).
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pods/grade/judge.h"

#define JUDGE_TIMEOUT_DEFAULT_SEC 60u
#define JUDGE_ATTEMPTS_DEFAULT    3u
#define JUDGE_MAX_TOKENS_DEFAULT  512u
#define JUDGE_ANSWER_MAX          (1u << 20) /* bytes of an answer read from a judge */

typedef enum JudgeApi {
        JUDGE_API_OPENAI,
        JUDGE_API_ANTHROPIC,
        JUDGE_API_COMMAND,
} JudgeApi;

/* "openai", "anthropic", "command". */
const char *judge_api_to_string(JudgeApi a);

/* A judge's configuration. Every string is owned (judge_config_done). */
typedef struct JudgeConfig {
        JudgeApi api;
        char *url;            /* openai, anthropic: the API's base URL (http or https) */
        char *model;          /* openai, anthropic: required; command: recorded, optional */
        char *key_file;       /* a file whose first line is the API key; NULL: no key */
        char *command;        /* command: the shell command line */
        unsigned timeout_sec; /* one attempt (the command: its whole run) */
        unsigned attempts;    /* HTTP: attempts in all, 1 to 10 */
        unsigned max_tokens;  /* HTTP: the answer's length cap */
} JudgeConfig;

/* Frees what c owns and zeroes it. */
void judge_config_done(JudgeConfig *c);

/*
 * A judge's configuration from a JSON object (pomed.conf's `judge:` read as JSON):
 * {api: "openai"|"anthropic"|"command", url, model, key_file, command, timeout (seconds),
 * attempts, max_tokens}; unknown members are refused (a misspelt one would otherwise be a
 * judge nobody asked for). Returns 0 with *ret filled (defaults for what is absent), -EINVAL
 * with why in err (errlen bytes), naming the member, -ENOMEM.
 */
int judge_config_from_json(const json_t *j, JudgeConfig *ret, char *err, size_t errlen);

/*
 * A judge's configuration from the command line: spec is "openai:URL", "anthropic:URL" or
 * "command:SHELL COMMAND"; model, key_file may be NULL. Returns 0 with *ret filled, -EINVAL
 * with why in err, -ENOMEM.
 */
int judge_config_from_spec(const char *spec, const char *model, const char *key_file,
                           JudgeConfig *ret, char *err, size_t errlen);

/* One line for a human: "openai gpt-4o-mini at http://…/v1" / "command ./judge.sh". New
 * string, NULL on OOM. */
char *judge_config_describe(const JudgeConfig *c);

typedef struct Judge Judge;

/*
 * A judge from c (copied; c may be freed after): reads the key file now (so a judge that
 * cannot read its key is refused at start, and a grading child needs no file access).
 * Returns 0 with a new judge, -errno with why in err (errlen bytes): a key file that cannot
 * be read or is empty (-EINVAL), -ENOMEM.
 */
int judge_new(const JudgeConfig *c, Judge **ret, char *err, size_t errlen);

/* Frees a judge (its key wiped). Accepts NULL; returns NULL. */
Judge *judge_free(Judge *j);

static inline void judge_freep(Judge **j)
{
        judge_free(*j);
}

/* The GradeJudge to hand grading (GradeOptions.judge): borrowed, valid while j lives. */
const GradeJudge *judge_grade_judge(const Judge *j);
