/* SPDX-License-Identifier: MIT */
/*
 * The pome CLI's commands and its exit statuses. Each cmd_* takes the argv that
 * starts at its own name (argv[0] = "sandbox", "usage", "twin"…), prints what it
 * has to say and returns the process exit status (one of POME_EXIT_*).
 */
#pragma once

/* Exit statuses, documented in `pome --help` (minijail-style: every outcome has one code). */
enum {
        POME_EXIT_OK = 0,
        POME_EXIT_ERROR = 1,   /* anything not listed below (network, 404, 410, 422, 5xx…) */
        POME_EXIT_USAGE = 2,   /* bad command line */
        POME_EXIT_AUTH = 3,    /* no API key found, HTTP 401 or 403 */
        POME_EXIT_QUOTA = 4,   /* HTTP 402 quota_exceeded or 429 rate_limited */
        POME_EXIT_REFUSED = 5, /* HTTP 409 conflict, e.g. a refused stop of an ungraded sandbox */
        POME_EXIT_INCOMPLETE = 6,    /* pome run / eval: a verdict neither passed nor failed (a
                                      * criterion that should have been evaluated was not) */
        POME_EXIT_INTERRUPTED = 130, /* pome run stopped by SIGINT/SIGTERM (the shell's 128 + 2) */
};

/* `pome sandbox …` and its permanent alias `pome session …` (cli/sandbox.c). */
int cmd_sandbox(int argc, char **argv);

/* `pome usage` (cli/usage.c). */
int cmd_usage(int argc, char **argv);

/* `pome twin start …`: a local twin served in-process (cli/twin.c). */
int cmd_twin(int argc, char **argv);

/* `pome checks`: the check vocabulary of the linked grading library (cli/checks.c). */
int cmd_checks(int argc, char **argv);

/* `pome eval RUN_DIR`: regrades a saved run offline (cli/eval.c). */
int cmd_eval(int argc, char **argv);

/* `pome run TASK.md -- AGENT…` and `pome run show` (cli/run.c). */
int cmd_run(int argc, char **argv);

/* `pome doctor`: the host's isolation layers and the deployment, each problem with its fix
 * (cli/doctor.c). */
int cmd_doctor(int argc, char **argv);
