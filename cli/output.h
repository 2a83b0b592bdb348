/* SPDX-License-Identifier: MIT */
/*
 * Text output helpers for pome's human formats: terminal-safe strings,
 * durations, aligned tables and pretty JSON.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * New copy of s (NULL → "-") in which control characters (C0 and DEL) are
 * replaced by '?', so text that came from the network cannot drive the
 * terminal. NULL on OOM.
 */
char *output_clean(const char *s);

/* Prints s like fputs, control characters replaced by '?' (see output_clean). */
void output_fputs_clean(const char *s, FILE *f);

/* Prints each line of text (several errors, one a line) as "PREFIX: line\n", cleaned as
 * output_fputs_clean cleans. */
void output_lines(FILE *f, const char *prefix, const char *text);

/*
 * Formats a duration in seconds the way people say it: "42s", "3m 10s",
 * "1h 2m", "2d 3h" (the smaller unit dropped when zero: "3m", "1h").
 * buf receives at most 32 bytes.
 */
void output_duration(uint64_t seconds, char buf[static 32]);

/* Whether to colour what goes to f: only a terminal, not with NO_COLOR set nor TERM=dumb. */
bool output_color(FILE *f);

/* Pretty-prints j (2-space indent, keys in their order) and a newline on stdout. 0 or -EIO. */
int output_json(const json_t *j);

/* An aligned text table: columns separated by two spaces, last column not padded. */
typedef struct Table Table;

/* New table with n columns, headers borrowed (must outlive the table). NULL on OOM. */
Table *table_new(size_t n, const char *const *headers);

/* Appends a row of n cells (NULL cells print as "-"); cells are copied and cleaned. 0 or -ENOMEM.
 */
int table_add_row(Table *t, const char *const *cells);

/* Number of rows added so far. */
size_t table_rows(const Table *t);

/* Prints the header line and every row. 0 or -ENOMEM. */
int table_print(const Table *t, FILE *f);

/* Frees t; accepts NULL and returns NULL. */
Table *table_free(Table *t);

static inline void table_freep(Table **t)
{
        table_free(*t);
}
