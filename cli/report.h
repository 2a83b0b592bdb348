/* SPDX-License-Identifier: MIT */
/*
 * How pome shows graded runs to people: the verdict table (one block per criterion: status,
 * twin, sentence, the grader's reason and its evidence pointers, as file names and JSON
 * Pointers a reader can resolve in the run directory) and the comparison of two verdicts.
 * Shared by `pome run`, `pome run show` and `pome eval`.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Whether f is a terminal that may be coloured: a tty, $NO_COLOR unset, $TERM not "dumb". */
bool report_use_color(FILE *f);

/* "pass", "fail" or "incomplete" (the verdict's state), "?" when it has none. Borrowed. */
const char *report_verdict_state(const json_t *verdict);

/* Whether the verdict passed (its "passed" member is true). */
bool report_verdict_passed(const json_t *verdict);

/* Whether the verdict is incomplete: its state says so (a verdict of any version). */
bool report_verdict_incomplete(const json_t *verdict);

/* The exit status a verdict calls for: POME_EXIT_OK when it passed, POME_EXIT_INCOMPLETE
 * when it is incomplete, POME_EXIT_ERROR when it failed. */
int report_verdict_exit_status(const json_t *verdict);

/*
 * Prints verdict (a verdict.json document) on f: a headline (state, score, threshold,
 * counts; for an incomplete verdict, what was not evaluated), then per criterion its status
 * (passed, failed, unmatched, skipped, error, or excluded when it was already true in the
 * seed and not scored), twin, sentence, reason and evidence
 * ("github.final.json#/repositories/0/issues/0", "slack tape req_…"). Text from the verdict
 * is cleaned of control characters. color: ANSI colours for the statuses. 0 or -EIO.
 */
int report_verdict(FILE *f, const json_t *verdict, bool color);

/*
 * report_verdict, less the verdict's warnings listed in said (NULL-terminated, may be NULL):
 * those the caller has already shown — `pome run` says the task's own warnings as it loads
 * the task, naming the user's file, and would otherwise repeat them as the run directory's
 * task.md. 0 or -EIO.
 */
int report_verdict_except(FILE *f, const json_t *verdict, bool color, char *const *said);

/*
 * Prints, one per line on f, where a and b differ ("/criteria/3/status: \"failed\" →
 * \"passed\""), at most max lines and then how many more there are. Returns the number of
 * differences (0: the documents are equal as JSON).
 */
size_t report_json_diff(FILE *f, const json_t *a, const json_t *b, size_t max);
