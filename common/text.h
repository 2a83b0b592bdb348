/* SPDX-License-Identifier: MIT */
/*
 * Bytes as text: percent-decoding (RFC 3986 §2.1; application/x-www-form-urlencoded
 * per WHATWG URL) and UTF-8 well-formedness (RFC 3629 §4). The front's path and form
 * decoders and the twins' form parser all decode through here.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of a hex digit (either case), or -1. */
int unhex(char c);

/*
 * A size: decimal digits with an optional K, M or G suffix (powers of 1024, as cgroup and
 * systemd sizes are). 0 and *ret_bytes, -EINVAL for anything else, -ERANGE on overflow.
 */
int text_parse_size(const char *s, uint64_t *ret_bytes);

/* Room for any int64_t in decimal, its sign and a NUL. */
#define DECIMAL_MAX 21

/*
 * v in decimal (as "%" PRId64 prints it) at the end of buf, NUL-terminated: returns where
 * it starts inside buf. By hand, without printf's format machinery: the JSON writer and
 * the twins' URLs format a number for nearly every field of a reply.
 */
const char *format_int(char buf[static DECIMAL_MAX], int64_t v);

/*
 * Length in bytes of the well-formed UTF-8 sequence at the start of the n bytes at s (1 to
 * 4), or 0 when there is none there: a stray continuation byte, a truncated sequence, an
 * overlong form, a surrogate, a code point above U+10FFFF. n must be > 0.
 */
size_t utf8_char_len(const char *s, size_t n);

/* Whether all n bytes at s are well-formed UTF-8. */
bool utf8_valid(const char *s, size_t n);

/*
 * The n bytes at s with each byte of a malformed sequence replaced by U+FFFD (what
 * twin_json_string_lossy makes of them): a new buffer of *ret_len bytes (NUL-terminated)
 * in *ret. 0 or -ENOMEM.
 */
int utf8_mend(const char *s, size_t n, char **ret, size_t *ret_len);

/*
 * Percent-decodes n bytes at s into a new NUL-terminated buffer (*ret_len bytes, which
 * may contain NULs decoded from %00). With form, '+' is a space. With strict, a malformed
 * escape fails the decode (-EINVAL); without, it is kept as it is, as browsers do. Returns
 * 0, -EINVAL, -ENOMEM.
 */
int percent_decode(const char *s, size_t n, bool form, bool strict, char **ret, size_t *ret_len);
