/* SPDX-License-Identifier: MIT */
/*
 * JSON as bytes, without documents: a growable buffer with writers for the few value
 * kinds a tape row splices around pre-serialized parts (strings escaped as jansson's
 * json_dumps escapes them, integers, reals in jansson's "%.17g" form), and a validating
 * scanner for bytes that come from elsewhere (a pod) before they are spliced into a file
 * of one JSON text per line. The hot path of the gateway builds rows with these instead
 * of building and dumping a json_t (DESIGN.md "The supervisor").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct JsonBuf {
        char *data;
        size_t len, cap;
        bool oom; /* a write failed for memory: the buffer holds no valid text */
} JsonBuf;

/* Makes room for n more bytes. 0 or -ENOMEM (and oom set). */
int jsonbuf_reserve(JsonBuf *b, size_t n);

/* Appends n raw bytes (already JSON, or punctuation). */
void jsonbuf_put(JsonBuf *b, const char *s, size_t n);

/* jsonbuf_put of a NUL-terminated literal or string. */
void jsonbuf_puts(JsonBuf *b, const char *s);

/* Appends printf-style text (text built for people: reasons, summaries, a judge's question). */
void jsonbuf_printf(JsonBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The buffer's bytes NUL-terminated (the NUL not counted in len), or NULL when a write failed
 * for memory. Borrowed: owned by b, valid until its next write; TAKE_PTR(b->data) keeps it.
 */
char *jsonbuf_text(JsonBuf *b);

/*
 * Appends the n bytes at s (NULs allowed) as a JSON string: quotes, '"' and '\' escaped,
 * control bytes as \b \f \n \r \t or \u00XX, everything else as it is (s must be valid
 * UTF-8 for the result to be valid JSON: utf8_valid, or twin_json_string_lossy's mending).
 */
void jsonbuf_put_string(JsonBuf *b, const char *s, size_t n);

/* jsonbuf_put_string of bytes that need not be UTF-8: each byte of a malformed sequence
 * becomes U+FFFD (as twin_json_string_lossy mends them). */
void jsonbuf_put_string_lossy(JsonBuf *b, const char *s, size_t n);

void jsonbuf_put_int(JsonBuf *b, int64_t v);

/* A finite double as jansson dumps a real: "%.17g", with ".0" added to an integral value. */
void jsonbuf_put_real(JsonBuf *b, double v);

typedef struct json_t json_t;

/*
 * Appends j as json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) writes it, byte for byte (keys
 * in the object's order, strings escaped as above, reals as jsonbuf_put_real), without
 * jansson's per-code-point UTF-8 walk: the pods serialize every reply with it. A document
 * nested deeper than 4096 levels sets oom.
 */
void jsonbuf_put_json(JsonBuf *b, const json_t *j);

/* Frees the buffer and zeroes b. */
void jsonbuf_done(JsonBuf *b);

/*
 * Whether the n bytes at s are exactly one JSON value (RFC 8259) in compact form, as
 * json_dumps(JSON_COMPACT) writes them: no whitespace between tokens (so no line break
 * anywhere: a tape line stays one line), strings of well-formed UTF-8 (RFC 3629) with
 * valid escapes (a \u escape of a lone surrogate is refused, as jansson's parser refuses
 * it; \u0000 is allowed), numbers in JSON's grammar, nesting at most max_depth deep.
 * One pass, no allocation.
 */
bool json_scan_compact(const char *s, size_t n, unsigned max_depth);
