/* SPDX-License-Identifier: MIT */
/*
 * A twin's tape: the ordered rows of the calls it served (CONTRACT.md "Tape
 * row"), as JSON Lines in a file — a run's <twin>.tape.jsonl, or an unlinked
 * temporary file for a local twin. A row is one write(2) with O_APPEND, made
 * before the response goes out — or, on a deferred tape (tape_set_deferred, pomed's),
 * the rows of one loop iteration in one write(2) by tape_flush, which every read
 * through this API does first. Memory holds only 16 bytes per row (its offset
 * and a hash of its event id), so a tape of any length is read back page by
 * page straight from the file (/_pome/events), never loaded whole.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct Tape Tape;

#define TAPE_EVENT_ID_MAX 64 /* bytes of an event id, NUL included */

/*
 * Opens the tape file at path, appending to whatever it holds, or — when there is none —
 * a tape whose file (mode 0640, less the umask) is created by its first row; path NULL:
 * an anonymous temporary file in $TMPDIR (else /tmp), also made at the first row. A tape
 * that never gets a row holds no fd and leaves no file. Returns 0 or negative errno (of
 * opening an existing file; a failure to create one is tape_append's).
 */
int tape_open(const char *path, Tape **ret);

/*
 * Opens the existing tape file at path for reading only (a run that has ended): no file is
 * created and tape_append fails with -EBADF. Its index comes from <path>.idx when that
 * fits the file (tape_keep_index), else from one scan for newlines and event ids (no row
 * is parsed). Returns 0, -ENOENT when there is none, or negative errno.
 */
int tape_open_readonly(const char *path, Tape **ret);

/*
 * Repairs the tape file at path after a crash or power cut: cuts it back to its last whole
 * row (a line "{…}" with no NUL byte: a zeroed or torn tail is not one), syncs it, and drops
 * its index. Returns 1 when it cut *ret_cut bytes, 0 when the file was whole, or negative
 * errno (-ENOENT: no file).
 */
int tape_repair(const char *path, uint64_t *ret_cut);

/*
 * Writes the tape's index next to its file (<path>.idx: 16 bytes per row, atomically), for
 * a tape that is finished (its run ended): tape_open_readonly then loads it instead of
 * scanning the file, when it still describes the file byte for byte. Tapes under 1000
 * rows (a scan of them takes about a millisecond) get none. 0 (also when none is written)
 * or negative errno.
 */
int tape_keep_index(Tape *t);

/* Flushes (tape_flush, errors ignored: an owner that must not lose kept rows checks
 * tape_kept first), closes the file and frees the index. Accepts NULL; returns NULL. */
Tape *tape_free(Tape *t);

/*
 * Appends row (borrowed; a JSON object whose "event_id" names it) as one line, creating the
 * file at the first one. Returns 0, -ENOMEM, -EBADF for a read-only tape, or the errno of
 * the failed creation or write (-EIO for a short one); on failure the file is cut back to
 * where it was, so a row is on the tape entirely or not at all.
 */
int tape_append(Tape *t, const json_t *row);

/*
 * tape_append of a row already serialized: len bytes of one compact JSON object ending in
 * its only '\n' (front_tape_line), whose event id is event_id. -EINVAL for anything else
 * than one line; otherwise as tape_append.
 */
int tape_append_line(Tape *t, const char *line, size_t len, const char *event_id);

/*
 * Deferred: tape_append and tape_append_line keep the row in memory (indexed, counted) and
 * tape_flush writes every kept row in one write(2). The owner flushes once per loop
 * iteration; every read below tries to first. A flush that fails (ENOSPC, EIO…) leaves
 * the file as it was (cut back to its last whole row) and keeps the rows, in order, for
 * the next flush: a row is never dropped while the tape lives, and readers see only the
 * rows the file holds. Once deferred, a tape stays so for its life.
 */
void tape_set_deferred(Tape *t);

/* Sync: every write of rows is followed by fdatasync(2), and one that fails counts as a
 * failed write (pomed's durability: full). Off by default. */
void tape_set_sync(Tape *t, bool sync);

/* Writes the kept rows of a deferred tape. 0 (also with none kept) or the negative errno
 * of the write (the rows stay kept). Accepts NULL. */
int tape_flush(Tape *t);

/* The negative errno of the last flush while it left rows kept, or 0. Accepts NULL (0). */
int tape_error(const Tape *t);

/* Rows kept in memory, not yet in the file (0 once a flush succeeds). Accepts NULL (0). */
size_t tape_kept(const Tape *t);

/* Rows appended so far (kept ones included), and the bytes they take on disk. */
size_t tape_count(const Tape *t);
uint64_t tape_bytes(const Tape *t);

/* Empties the tape (a local twin's /admin/reset). 0 or negative errno. */
int tape_reset(Tape *t);

/* A run of consecutive rows: what one /_pome/events answer carries. */
typedef struct TapeRange {
        size_t first, n;         /* row numbers [first, first + n) */
        uint64_t offset, length; /* their bytes in the file, newlines included */
        bool more;               /* rows follow the range */
} TapeRange;

/*
 * Selects the rows after the row whose event id is after (NULL or "": from the first row),
 * at most limit of them (0: all, then max_bytes is ignored) and, when limit > 0, no more than
 * max_bytes bytes (but at least one row). Returns 0, -ENOENT when no row has the event id
 * after, or the errno of a failed read.
 */
int tape_select(Tape *t, const char *after, size_t limit, uint64_t max_bytes, TapeRange *ret);

/*
 * tape_select from row number first (0-based; past the last row: an empty range at the end,
 * as an open tape's reader that has read every row gets), for a reader that jumps (the
 * dashboard's virtualised list). Returns 0 or the errno of a failed read.
 */
int tape_select_at(Tape *t, size_t first, size_t limit, uint64_t max_bytes, TapeRange *ret);

/* The event id of row i into buf (TAPE_EVENT_ID_MAX bytes). 0, -ERANGE, -EBADMSG, -errno. */
int tape_event_id(Tape *t, size_t i, char buf[static TAPE_EVENT_ID_MAX]);

/*
 * A reader that turns a range into the JSON array of its rows ("[row,row]"), reading the
 * file in the caller's chunks. It holds its own file descriptor, so it stays valid after
 * the tape is freed (a sandbox ending while its tape is being read).
 */
typedef struct TapeReader TapeReader;

/* 0 or negative errno. */
int tape_reader_new(Tape *t, const TapeRange *range, TapeReader **ret);

/* Bytes the reader produces in all. */
uint64_t tape_reader_size(const TapeReader *rd);

/* Copies the next at most max bytes into buf: bytes (> 0), 0 at the end, negative errno. */
ssize_t tape_reader_read(TapeReader *rd, char *buf, size_t max);

TapeReader *tape_reader_free(TapeReader *rd);
