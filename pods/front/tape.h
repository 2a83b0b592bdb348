/* SPDX-License-Identifier: MIT */
/*
 * A twin's tape: the ordered rows of the calls it served (CONTRACT.md "Tape
 * row"). With a path, rows are appended to a JSON Lines file (one write(2) per
 * row, O_APPEND, before the response goes out) and read back from it; without
 * one (a local twin) they live in memory and die with the process.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>

typedef struct Tape Tape;

/* Opens (creating, mode 0644) the tape file at path, or a memory tape when path is
 * NULL. Returns 0 or negative errno. */
int tape_open(const char *path, Tape **ret);

/* Appends row (borrowed). Returns 0, -ENOMEM, or the errno of a failed write. */
int tape_append(Tape *t, const json_t *row);

/* All rows in order, as a new array. A damaged line in a file is skipped. NULL on OOM. */
json_t *tape_rows(Tape *t);

/* Rows appended so far. */
size_t tape_count(const Tape *t);

/* Clears a memory tape (local twin reset); a file tape is left alone. */
void tape_reset(Tape *t);

Tape *tape_free(Tape *t);
