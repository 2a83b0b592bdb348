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
 *
 * Details (RFC 2045-2047, 2183, 2231): mimeType is lowercased ("text/plain" when absent or
 * unreadable, "message/rfc822" inside multipart/digest); filename is Content-Disposition's
 * filename, else Content-Type's name, either in RFC 2231 form (charset'lang'%xx,
 * continuations) or plain (encoded words decoded), "" when none. A message/rfc822 part is
 * {size: 0} with one child, the embedded message ("<id>.0"), as Gmail shows it. Header text
 * in UTF-8, US-ASCII, ISO-8859-1 or Windows-1252 (ISO-8859-1 read as Windows-1252, as WHATWG
 * does) becomes UTF-8; other charsets keep their bytes, each invalid one made U+FFFD. Body
 * bytes are never converted: body.data holds what the part holds.
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
 * bytes in *ret_len, NUL-terminated). 0, -EINVAL (an attachment's data is not base64, or
 * date is neither RFC 3339 nor a number), -ENOMEM.
 *
 * Details: headers come in the order From, To, Cc, Bcc, Subject, Date (UTC, RFC 5322
 * §3.3; none when date is absent — the caller owns the clock), Message-ID, In-Reply-To,
 * References, MIME-Version; ids get their angle brackets. CR, LF, NUL and TAB in header
 * text become spaces (one logical line: no header injection). Every line ends CRLF and
 * holds at most 998 octets (RFC 5322 §2.1.1): long headers are folded, text bodies are
 * 7bit when ASCII with short lines, else quoted-printable; attachments are base64 with
 * RFC 2231 names when not plain ASCII. Boundaries contain "=_" (never in quoted-printable
 * or base64 output, refused in 7bit) and derive from a hash of spec: the same spec builds
 * the same bytes, so tapes replay exactly.
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
