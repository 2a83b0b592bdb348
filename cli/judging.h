/* SPDX-License-Identifier: MIT */
/*
 * The judge options `pome run` and `pome eval` share (--judge, --judge-model,
 * --judge-key-file, --code-only): their parsing, their help text and the judge they make
 * (pods/grade/judges.h).
 */
#pragma once

#include <stdbool.h>

#include "cli/args.h"
#include "pods/grade/judges.h"

/* The option ids; a command's own ids start at JUDGING_FIRST_FREE. */
enum {
        OPT_JUDGE = ARGS_FIRST_OPTION + 64,
        OPT_JUDGE_MODEL,
        OPT_JUDGE_KEY_FILE,
        OPT_JUDGE_TIMEOUT,
        OPT_CODE_ONLY,
        JUDGING_FIRST_FREE,
};

/* clang-format off */
#define JUDGING_OPTIONS                                                                        \
        {"judge", OPT_JUDGE, true},                                                            \
        {"judge-model", OPT_JUDGE_MODEL, true},                                                \
        {"judge-key-file", OPT_JUDGE_KEY_FILE, true},                                          \
        {"judge-timeout", OPT_JUDGE_TIMEOUT, true},                                            \
        {"code-only", OPT_CODE_ONLY, false}
/* clang-format on */

/* The options' help lines, for a command's --help. */
extern const char judging_help[];

typedef struct JudgeFlags {
        const char *spec;     /* --judge: "openai:URL", "anthropic:URL", "command:CMD" */
        const char *model;    /* --judge-model */
        const char *key_file; /* --judge-key-file */
        const char *timeout;  /* --judge-timeout SECONDS */
        bool code_only;       /* --code-only */
} JudgeFlags;

/* Takes option id (with its value) when it is one of JUDGING_OPTIONS: true, else false. */
bool judging_take(JudgeFlags *f, int id, const char *value);

/*
 * The judge f asks for (NULL in *ret when it asks for none). Errors are printed naming
 * command ("pome run: …"); returns 0, or -EINVAL (a bad spec, --code-only with --judge, a
 * model or key file without --judge, a key file that cannot be read), -ENOMEM.
 */
int judging_open(const JudgeFlags *f, const char *command, Judge **ret);
