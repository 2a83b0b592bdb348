/* SPDX-License-Identifier: MIT */
/*
 * RFC 5322 / MIME messages for the Gmail twin: parsed into the Gmail API's MessagePart
 * (users.messages resource, "payload") and built from a message's parts, as
 * messages.send/insert/import (raw), drafts and the seeds need. No I/O. Bounded: a part
 * nests at most GMAIL_MIME_DEPTH_MAX deep and a message has at most GMAIL_MIME_PARTS_MAX
 * parts; what lies beyond is kept as the enclosing part's opaque body, never refused.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>

#define GMAIL_MIME_DEPTH_MAX 16
#define GMAIL_MIME_PARTS_MAX 256

/*
 * Parses the message raw (len bytes; CRLF or LF line ends; any bytes) into a new
 * MessagePart (developers.google.com/gmail/api/reference/rest/v1/users.messages#MessagePart):
 * {partId ("" for the root, "0", "1", "1.0", … below), mimeType, filename, headers:
 * [{name, value}], body: {size, data?}, parts?}. Header values are unfolded and their
 * RFC 2047 encoded words decoded to UTF-8; a body's Content-Transfer-Encoding (base64,
 * quoted-printable) is undone and its bytes given as body.data in base64url, body.size
 * their count; a multipart's body is {size: 0}. An attachment keeps its bytes in
 * body.data (the caller moves them out behind an attachmentId). Malformed input parses as
 * best it can (a missing boundary leaves one opaque part): returns 0, or -ENOMEM.
 */
int gmail_mime_parse(const char *raw, size_t len, json_t **ret_payload);

/*
 * The first header called name (ASCII case-insensitive) of part (borrowed), its value
 * borrowed from part; NULL when none.
 */
const char *gmail_mime_header(const json_t *part, const char *name);

/*
 * The message's snippet as Gmail shows it: the text of its first text/plain part (else its
 * first text/html part, tags and entities removed), whitespace runs made one space, cut
 * after 200 characters at a UTF-8 boundary. A new string ("" when no text); NULL on OOM.
 */
char *gmail_mime_snippet(const json_t *payload);

/*
 * All the text of a message, for search: its text/plain and text/html leaves that are not
 * attachments (no filename), converted from their charset to UTF-8, HTML tags dropped and
 * character references decoded, whitespace runs made one space. A new string ("" when no
 * text); NULL on OOM.
 */
char *gmail_mime_text(const json_t *payload);

/*
 * Builds a message (CRLF line ends) from spec (borrowed): {from, to, cc, bcc (a string or an
 * array of addresses), subject, text, html, messageId, inReplyTo, references (a string or
 * an array), date (RFC 3339 or seconds since the epoch), attachments: [{filename,
 * mimeType, data (base64, standard or url alphabet)}]}. Non-ASCII header text is written
 * as RFC 2047 encoded words, bodies as quoted-printable or base64; text+html make a
 * multipart/alternative, attachments a multipart/mixed around it. *ret (malloc'd, len
 * bytes in *ret_len, NUL-terminated). 0, -EINVAL (an attachment's data is not base64),
 * -ENOMEM.
 */
int gmail_mime_build(const json_t *spec, char **ret, size_t *ret_len);

/* base64url (RFC 4648 §5) without padding of n bytes: a new string, NULL on OOM. */
char *gmail_base64url(const void *data, size_t n);

/*
 * Decodes n characters of base64 in either alphabet (url or standard), padding optional,
 * whitespace ignored, into *ret (malloc'd, NUL-terminated, *ret_len bytes). 0, -EINVAL,
 * -ENOMEM.
 */
int gmail_base64_decode(const char *s, size_t n, char **ret, size_t *ret_len);
