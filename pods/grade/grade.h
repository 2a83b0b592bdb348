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
