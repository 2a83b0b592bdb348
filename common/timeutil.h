/* SPDX-License-Identifier: MIT */
/*
 * Time as the project writes and reads it: RFC 3339 UTC timestamps (with or
 * without milliseconds) and clock readings in microseconds. One place for what
 * the tape, the registry, the API and the twins all print.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define RFC3339_MAX 32 /* bytes for "2026-12-01T06:29:57.123Z" and its NUL, with room */

/* Microseconds of clock (CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME) now. */
uint64_t now_usec(clockid_t clock);

/* Seconds since the epoch now (CLOCK_REALTIME, the clock now_usec reads: never behind it). */
int64_t now_sec(void);

/*
 * Formats t (seconds since the epoch) as RFC 3339 UTC, "2026-12-01T06:29:57Z", into buf
 * (len bytes, RFC3339_MAX is enough; always NUL-terminated). A time gmtime cannot
 * represent gives "1970-01-01T00:00:00Z".
 */
void format_rfc3339(int64_t t, char *buf, size_t len);

/* The same with milliseconds from a time in µs since the epoch: "…T06:29:57.123Z". */
void format_rfc3339_usec(int64_t usec, char *buf, size_t len);

/*
 * Parses "YYYY-MM-DDTHH:MM:SSZ" (optionally with ".fff" before the Z, ignored) into seconds
 * since the epoch. Returns 0, or -EINVAL for anything else (NULL included).
 */
int parse_rfc3339(const char *s, int64_t *ret);
