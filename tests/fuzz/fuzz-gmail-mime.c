/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the Gmail twin's MIME parser and builder (pods/gmail/mime.c).
 * Invariants, on arbitrary bytes (NULs included):
 * - the input parses (only OOM may fail) into a MessagePart jansson can dump: partIds are
 *   "", "0", "1", "1.0", … by position; each body.size is the byte count of its base64url
 *   body.data; a multipart with parts has {size: 0}; nesting and part count stay within
 *   GMAIL_MIME_DEPTH_MAX and GMAIL_MIME_PARTS_MAX;
 * - the snippet and the search text are valid UTF-8, the snippet at most 200 characters;
 * - the input cut at \x01 into subject, text, html, file name and attachment bytes builds a
 *   message whose lines end CRLF and hold at most 998 octets, and which parses back to the
 *   same subject, bodies (line ends made CRLF), file name and bytes.
 */
#include "common/json-util.h"
#include "common/text.h"
#include "pods/gmail/mime.h"
#include "pods/twin/kind.h"
#include "tests/fuzz/fuzz-assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t parts_seen;

static void check_part(const json_t *p, const char *id, unsigned depth)
{
        ASSERT(json_is_object(p));
        ASSERT(depth <= GMAIL_MIME_DEPTH_MAX);
        ASSERT(++parts_seen <= GMAIL_MIME_PARTS_MAX);
        ASSERT(streq(json_get_str(p, "partId"), id));
        const char *t = json_get_str(p, "mimeType");
        ASSERT(t && strchr(t, '/'));
        ASSERT(json_is_string(json_object_get(p, "filename")));
        const json_t *hs = json_object_get(p, "headers"), *h;
        size_t i;
        ASSERT(json_is_array(hs));
        json_array_foreach (hs, i, h) {
                ASSERT(json_get_str(h, "name") && json_get_str(h, "value"));
        }
        const json_t *body = json_object_get(p, "body");
        json_int_t size = json_integer_value(json_object_get(body, "size"));
        const char *d = json_get_str(body, "data");
        if (d) {
                _cleanup_free_ char *bytes = NULL;
                size_t n = 0;
                ASSERT(gmail_base64_decode(d, strlen(d), &bytes, &n) == 0);
                ASSERT((json_int_t)n == size && n > 0);
                ASSERT(!strchr(d, '=') && !strchr(d, '+') && !strchr(d, '/'));
        } else
                ASSERT(size == 0);
        const json_t *parts = json_object_get(p, "parts");
        if (parts) {
                ASSERT(json_array_size(parts) > 0 && size == 0 && !d);
                for (size_t k = 0; k < json_array_size(parts); k++) {
                        char cid[600];
                        snprintf(cid, sizeof(cid), *id ? "%s.%zu" : "%s%zu", id, k);
                        check_part(json_array_get(parts, k), cid, depth + 1);
                }
        }
}

static void check_text(const char *s, size_t max_chars)
{
        ASSERT(s);
        size_t n = strlen(s), chars = 0;
        ASSERT(utf8_valid(s, n));
        for (size_t i = 0; i < n; i++)
                chars += ((unsigned char)s[i] & 0xC0) != 0x80;
        ASSERT(chars <= max_chars);
}

/* The next piece of the input up to \x01 (or its end): a new string without NULs. */
static char *piece(const char **s, const char *end)
{
        const char *e = memchr(*s, 1, (size_t)(end - *s));
        if (!e)
                e = end;
        char *o = malloc((size_t)(e - *s) + 1);
        size_t k = 0;
        if (!o)
                abort();
        for (const char *c = *s; c < e; c++)
                if (*c)
                        o[k++] = *c;
        o[k] = 0;
        *s = e < end ? e + 1 : end;
        return o;
}

/* The bytes a text body must come back as: valid UTF-8, every line end CRLF. */
static char *crlf(const char *s)
{
        _cleanup_free_ char *m = NULL;
        size_t n;
        ASSERT(utf8_mend(s, strlen(s), &m, &n) == 0);
        char *o = malloc(n * 2 + 1);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (m[i] == '\n' && (i == 0 || m[i - 1] != '\r'))
                        o[k++] = '\r';
                o[k++] = m[i];
        }
        o[k] = 0;
        return o;
}

/* What a header value comes back as: valid UTF-8, CR LF NUL TAB spaces, trimmed. */
static char *header_text(const char *s, bool trim)
{
        char *m = NULL;
        size_t n;
        ASSERT(utf8_mend(s, strlen(s), &m, &n) == 0);
        for (size_t i = 0; i < n; i++)
                if (m[i] == '\r' || m[i] == '\n' || m[i] == '\t')
                        m[i] = ' ';
        if (trim) {
                size_t b = 0;
                while (b < n && m[b] == ' ')
                        b++;
                while (n > b && m[n - 1] == ' ')
                        n--;
                memmove(m, m + b, n - b);
                m[n - b] = 0;
        }
        return m;
}

static const json_t *part_at(const json_t *root, const char *id)
{
        if (streq(json_get_str(root, "partId"), id))
                return root;
        const json_t *parts = json_object_get(root, "parts");
        for (size_t i = 0; i < json_array_size(parts); i++) {
                const json_t *f = part_at(json_array_get(parts, i), id);
                if (f)
                        return f;
        }
        return NULL;
}

static bool body_equals(const json_t *part, const char *want, size_t wn)
{
        const char *d = json_get_str(json_object_get(part, "body"), "data");
        if (!d)
                return wn == 0;
        _cleanup_free_ char *b = NULL;
        size_t n;
        ASSERT(gmail_base64_decode(d, strlen(d), &b, &n) == 0);
        return n == wn && memcmp(b, want, n) == 0;
}

static void round_trip(const char *in, size_t size)
{
        const char *s = in, *end = in + size;
        _cleanup_free_ char *subject = piece(&s, end), *text = piece(&s, end),
                            *html = piece(&s, end), *fn = piece(&s, end);
        size_t dn = (size_t)(end - s);
        _cleanup_free_ char *b64 = twin_base64(s, dn);
        ASSERT(b64);
        bool with_html = html[0] != 0, with_att = fn[0] != 0 || dn > 0;
        _cleanup_json_ json_t *spec = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:I}", "from", "Zoë <z@example.com>", "to", subject,
                "subject", subject, "text", text, "messageId", "m@x", "date", (json_int_t)size);
        ASSERT(spec || !utf8_valid(subject, strlen(subject)) || !utf8_valid(text, strlen(text)));
        if (!spec)
                return; /* jansson refuses invalid UTF-8; the twin never holds such a spec */
        if (with_html && utf8_valid(html, strlen(html)))
                json_object_set_new(spec, "html", json_string(html));
        else
                with_html = false;
        if (with_att && utf8_valid(fn, strlen(fn)))
                json_object_set_new(spec, "attachments",
                                    json_pack("[{s:s, s:s}]", "filename", fn, "data", b64));
        else
                with_att = false;

        _cleanup_free_ char *raw = NULL;
        size_t n = 0;
        int r = gmail_mime_build(spec, &raw, &n);
        if (r == -ENOMEM)
                return;
        ASSERT(r == 0 && raw && raw[n] == 0);
        size_t line = 0;
        for (size_t i = 0; i < n; i++) {
                ASSERT(raw[i] != 0);
                if (raw[i] == '\n') {
                        ASSERT(i > 0 && raw[i - 1] == '\r');
                        line = 0;
                } else if (raw[i] != '\r') {
                        ASSERT(++line <= 998);
                } else
                        ASSERT(i + 1 < n && raw[i + 1] == '\n');
        }

        _cleanup_json_ json_t *p = NULL;
        if (gmail_mime_parse(raw, n, &p) < 0)
                return;
        _cleanup_free_ char *want_subject = header_text(subject, true);
        const char *got = gmail_mime_header(p, "Subject");
        if (want_subject[0]) {
                if (!got || !streq(got, want_subject))
                        fprintf(stderr, "subject: got \"%s\" want \"%s\"\n", got, want_subject);
                ASSERT(got && streq(got, want_subject));
        }
        _cleanup_free_ char *want_text = crlf(text), *want_html = crlf(html);
        const char *tid = with_att ? (with_html ? "0.0" : "0") : (with_html ? "0" : "");
        const json_t *tp = part_at(p, tid);
        ASSERT(tp);
        if (!with_att && !with_html) {
                /* a lone text body ends with the message's last CRLF */
                size_t wl = strlen(want_text);
                _cleanup_free_ char *w = malloc(wl + 3);
                memcpy(w, want_text, wl);
                memcpy(w + wl, "\r\n", 3);
                ASSERT(body_equals(tp, w, wl + 2));
        } else
                ASSERT(body_equals(tp, want_text, strlen(want_text)));
        if (with_html)
                ASSERT(body_equals(part_at(p, with_att ? "0.1" : "1"), want_html,
                                   strlen(want_html)));
        if (with_att) {
                const json_t *ap = part_at(p, "1");
                ASSERT(ap);
                _cleanup_free_ char *want_fn = header_text(fn, false);
                ASSERT(streq(json_get_str(ap, "filename"), want_fn));
                ASSERT(body_equals(ap, s, dn));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *in = (const char *)data;
        _cleanup_json_ json_t *p = NULL;
        int r = gmail_mime_parse(in, size, &p);
        if (r == -ENOMEM)
                return 0;
        ASSERT(r == 0 && p);
        parts_seen = 0;
        check_part(p, "", 0);
        _cleanup_free_ char *dump = json_dumps(p, JSON_COMPACT);
        ASSERT(dump);
        _cleanup_free_ char *snippet = gmail_mime_snippet(p), *text = gmail_mime_text(p);
        check_text(snippet, 200);
        check_text(text, SIZE_MAX);
        round_trip(in, size);
        return 0;
}
