/* SPDX-License-Identifier: MIT */
/*
 * Command-line parsing for pome's commands. Long options only (plus -h), exact
 * names (no getopt-style abbreviations: `--dis` is not `--discard`), both
 * `--opt value` and `--opt=value`, options before or after positional
 * arguments, `--` ends the options.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* args_next() results that are not option ids; option ids must be >= ARGS_FIRST_OPTION. */
enum {
        ARGS_END = 0,        /* no more arguments */
        ARGS_POSITIONAL = 1, /* a positional argument, in *ret_value */
        ARGS_HELP = 2,       /* -h or --help */
        ARGS_FIRST_OPTION = 16,
};

typedef struct ArgOption {
        const char *name; /* without the leading "--" */
        int id;           /* >= ARGS_FIRST_OPTION */
        bool has_value;
} ArgOption;

typedef struct ArgParser {
        int argc;
        char **argv; /* borrowed */
        int index;
        bool only_positionals; /* after "--" */
        const ArgOption *options;
        size_t n_options;
        const char *command; /* "sandbox create": names the command in errors; "" for pome itself */
} ArgParser;

/*
 * Sets up a parser over argv[first..argc). options (n entries) and command are
 * borrowed and must outlive the parser.
 */
void args_init(ArgParser *p, int argc, char **argv, int first, const ArgOption *options, size_t n,
               const char *command);

/*
 * Takes the next argument. Returns an option id (its value, if it takes one, in
 * *ret_value), ARGS_POSITIONAL (*ret_value), ARGS_HELP or ARGS_END. A value
 * option followed by nothing, or by something that looks like another option
 * ("--x"), is a missing value: pass such values as --opt=VALUE. Returns -EINVAL
 * after printing one line naming the bad argument and the command's --help.
 */
int args_next(ArgParser *p, const char **ret_value);

/*
 * Prints "pome COMMAND: <message> (try 'pome COMMAND --help')" on stderr. For
 * errors found after parsing (a missing required option, a bad value).
 * Returns -EINVAL so callers can `return args_error(…)`.
 */
int args_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What --format asks a command to print. */
typedef enum ArgsFormat {
        ARGS_FORMAT_TEXT,
        ARGS_FORMAT_JSON,
        ARGS_FORMAT_ENV, /* only where the command accepts it (allow_env) */
} ArgsFormat;

/*
 * Parses a --format value: "text" or "json", and "env" too with allow_env. Returns 0 and
 * *ret, or -EINVAL after args_error naming the values the command accepts.
 */
int args_parse_format(const char *command, const char *value, bool allow_env, ArgsFormat *ret);

/*
 * Parses a decimal integer in [min, max] with nothing around it. Returns 0 and
 * *ret, -EINVAL (not a number) or -ERANGE.
 */
int args_parse_uint(const char *s, unsigned long long min, unsigned long long max,
                    unsigned long long *ret);
