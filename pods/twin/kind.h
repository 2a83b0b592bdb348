/* SPDX-License-Identifier: MIT */
/*
 * What a twin kind implementation (pods/github, pods/slack, ...) uses besides twin.h:
 * the kinds the engine knows, and readers for action arguments. Arguments come from
 * REST (path, query and form values are strings) or from MCP (typed JSON), so every
 * reader accepts both spellings of a value.
 */
#pragma once

#include "common/util.h"
#include "twin.h"

extern const TwinKind twin_kind_github;
extern const TwinKind twin_kind_slack;

/*
 * Readers of args[key]. All return 0 and write *ret; -ENOENT when the key is absent
 * or JSON null; -EINVAL when present with a wrong type, format or range. Borrowed results.
 */

/* A string. */
int twin_arg_str(const json_t *args, const char *key, const char **ret);

/*
 * An integer in [min, max]: a JSON integer, an integral JSON real, or a decimal string
 * ("1", "-3"; no sign-less junk, no overflow). Used for issue_number "1" and 1 alike.
 */
int twin_arg_int(const json_t *args, const char *key, int64_t min, int64_t max, int64_t *ret);

/* A boolean: JSON true/false, or the strings "true"/"false"/"1"/"0". */
int twin_arg_bool(const json_t *args, const char *key, bool *ret);

/*
 * A list of strings: a JSON array of strings, or one comma-separated string ("bug,ui";
 * items are trimmed, empty ones dropped). *ret is a new array reference.
 */
int twin_arg_strv(const json_t *args, const char *key, json_t **ret);

/* Standard base64 with padding (RFC 4648 §4) of n bytes into a new string; NULL on OOM. */
char *twin_base64(const void *data, size_t n);

/*
 * Decodes standard padded base64 into a new NUL-terminated string. Returns 0, -EINVAL for
 * bad input, -ENOMEM.
 */
int twin_base64_decode(const char *s, char **ret);

/*
 * A JSON string of n bytes where invalid UTF-8 (which jansson refuses) is replaced by
 * U+FFFD, so no request byte sequence can make a value unrepresentable. NULL on OOM.
 */
json_t *twin_json_string_lossy(const char *s, size_t n);

/*
 * For load_seed: writes a printf-style message into err (errlen bytes, may be 0) and
 * returns -EINVAL.
 */
int twin_seed_error(char *err, size_t errlen, const char *fmt, ...) _printf_(3, 4);
