/* SPDX-License-Identifier: MIT */
/*
 * The Gmail twin's MIME parser and builder (pods/gmail/mime.c): the shapes real mailers
 * send (Gmail, Thunderbird, Outlook, Apple Mail), the sloppy ones they also send, hostile
 * framing, the bounds, and build → parse round trips.
 */
#include "common/json-util.h"
#include "common/text.h"
#include "pods/gmail/mime.h"
#include "tests/unit/check.h"

static json_t *parse(const char *raw)
{
        json_t *p = NULL;
        int r = gmail_mime_parse(raw, strlen(raw), &p);
        CHECK(r == 0 && p);
        return p;
}

/* The part at a partId path ("" root, "1.0"), or NULL. */
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

/* The body bytes of part (decoded from body.data); a new string, "" when none. */
static char *body_of(const json_t *part)
{
        const char *d = json_get_str(json_object_get(part, "body"), "data");
        char *out = NULL;
        size_t n = 0;
        if (!d)
                return strdup("");
        CHECK(gmail_base64_decode(d, strlen(d), &out, &n) == 0);
        CHECK(strlen(out) == n || true);
        /* body.size is the decoded byte count */
        CHECK(json_integer_value(json_object_get(json_object_get(part, "body"), "size")) ==
              (json_int_t)n);
        return out;
}

static bool body_is(const json_t *part, const char *want)
{
        char *b = body_of(part);
        bool ok = b && streq(b, want);
        if (!ok)
                fprintf(stderr, "body: got \"%s\", want \"%s\"\n", b ? b : "(null)", want);
        free(b);
        return ok;
}

static bool hdr_is(const json_t *part, const char *name, const char *want)
{
        const char *v = gmail_mime_header(part, name);
        bool ok = v && streq(v, want);
        if (!ok)
                fprintf(stderr, "%s: got \"%s\", want \"%s\"\n", name, v ? v : "(null)", want);
        return ok;
}

static void test_base64(void)
{
        char *s = gmail_base64url("\xfb\xff\xfe", 3);
        CHECK(s && streq(s, "-__-"));
        free(s);
        s = gmail_base64url("ab", 2);
        CHECK(s && streq(s, "YWI"));
        free(s);
        s = gmail_base64url("", 0);
        CHECK(s && streq(s, ""));
        free(s);

        char *out;
        size_t n;
        CHECK(gmail_base64_decode("YWI", 3, &out, &n) == 0 && n == 2 && streq(out, "ab"));
        free(out);
        CHECK(gmail_base64_decode("YWI=", 4, &out, &n) == 0 && n == 2 && streq(out, "ab"));
        free(out);
        CHECK(gmail_base64_decode("-__-", 4, &out, &n) == 0 && n == 3 &&
              memcmp(out, "\xfb\xff\xfe", 3) == 0);
        free(out);
        CHECK(gmail_base64_decode("+//+", 4, &out, &n) == 0 && n == 3 &&
              memcmp(out, "\xfb\xff\xfe", 3) == 0);
        free(out);
        CHECK(gmail_base64_decode("YW\r\nJj ZA==", 11, &out, &n) == 0 && streq(out, "abcd"));
        free(out);
        CHECK(gmail_base64_decode("", 0, &out, &n) == 0 && n == 0);
        free(out);
        CHECK(gmail_base64_decode("YW*I", 4, &out, &n) == -EINVAL);
        CHECK(gmail_base64_decode("Y", 1, &out, &n) == -EINVAL);
        CHECK(gmail_base64_decode("YQ==YQ", 6, &out, &n) == -EINVAL);
}

static void test_single(void)
{
        json_t *p = parse("From: Alice <alice@example.com>\r\n"
                          "To: bob@example.com\r\n"
                          "Subject: Lunch\r\n"
                          "Content-Type: text/plain; charset=\"us-ascii\"\r\n"
                          "\r\n"
                          "Tomorrow at noon?\r\n");
        CHECK(streq(json_get_str(p, "partId"), ""));
        CHECK(streq(json_get_str(p, "mimeType"), "text/plain"));
        CHECK(streq(json_get_str(p, "filename"), ""));
        CHECK(json_array_size(json_object_get(p, "headers")) == 4);
        CHECK(hdr_is(p, "from", "Alice <alice@example.com>"));
        CHECK(hdr_is(p, "SUBJECT", "Lunch"));
        CHECK(gmail_mime_header(p, "Cc") == NULL);
        CHECK(body_is(p, "Tomorrow at noon?\r\n"));
        CHECK(!json_object_get(p, "parts"));
        char *sn = gmail_mime_snippet(p);
        CHECK(sn && streq(sn, "Tomorrow at noon?"));
        free(sn);
        json_decref(p);

        /* no Content-Type: text/plain; no body at all: {size: 0} without data */
        p = parse("Subject: x\r\n\r\n");
        CHECK(streq(json_get_str(p, "mimeType"), "text/plain"));
        CHECK(json_integer_value(json_object_get(json_object_get(p, "body"), "size")) == 0);
        CHECK(!json_object_get(json_object_get(p, "body"), "data"));
        json_decref(p);
}

static void test_unfold_and_words(void)
{
        json_t *p = parse("Subject: =?UTF-8?B?R3LDvMOfZQ==?= =?utf-8?q?_aus_K=C3=B6ln?=\r\n"
                          "\tand more\r\n"
                          "From: =?ISO-8859-1?Q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>\r\n"
                          "To: =?iso-8859-1?q?=A4uro_=80?= <e@x>\r\n"
                          "Cc: =?windows-1252?Q?=93quoted=94?= <q@x>\r\n"
                          "X-Split: =?UTF-8?B?w6k=?= =?UTF-8?B?w6k=?=\r\n"
                          "X-Split-Char: =?UTF-8?Q?=C3?= =?UTF-8?Q?=A9?=\r\n"
                          "X-Text: a =?utf-8?q?b?= c\r\n"
                          "X-Bad: =?utf-8?x?nope?= and =?utf-8?q?unterminated\r\n"
                          "X-Koi: =?koi8-r?B?8NLJ18XU?=\r\n"
                          "X-Lang: =?UTF-8*en?Q?hello?=\r\n"
                          "X-Raw8: caf\xc3\xa9 \xff\r\n"
                          "X-Empty:\r\n"
                          "X-Obs : spaced name\r\n"
                          "\r\n"
                          "body");
        CHECK(hdr_is(p, "Subject", "Grüße aus Köln\tand more"));
        CHECK(hdr_is(p, "From", "André Pirard <PIRARD@vm1.ulg.ac.be>"));
        /* ISO-8859-1 labels decode as Windows-1252, as WHATWG (and every browser) does */
        CHECK(hdr_is(p, "To", "¤uro € <e@x>"));
        CHECK(hdr_is(p, "Cc", "“quoted” <q@x>"));
        CHECK(hdr_is(p, "X-Split", "éé"));
        CHECK(hdr_is(p, "X-Split-Char", "é"));
        CHECK(hdr_is(p, "X-Text", "a b c"));
        CHECK(hdr_is(p, "X-Bad", "=?utf-8?x?nope?= and =?utf-8?q?unterminated"));
        /* an unknown charset: its bytes, made valid UTF-8 */
        const char *koi = gmail_mime_header(p, "X-Koi");
        CHECK(koi && utf8_valid(koi, strlen(koi)) && strstr(koi, "\xef\xbf\xbd"));
        CHECK(hdr_is(p, "X-Lang", "hello"));
        CHECK(hdr_is(p, "X-Raw8", "café \xef\xbf\xbd"));
        CHECK(hdr_is(p, "X-Empty", ""));
        CHECK(hdr_is(p, "X-Obs", "spaced name"));
        json_decref(p);
}

static const char mixed[] = "From: a@example.com\r\n"
                            "Subject: report\r\n"
                            "MIME-Version: 1.0\r\n"
                            "Content-Type: multipart/mixed; boundary=\"000000000000abc\"\r\n"
                            "\r\n"
                            "This is a multi-part message in MIME format.\r\n"
                            "--000000000000abc\r\n"
                            "Content-Type: multipart/alternative; boundary=\"000000000000def\"\r\n"
                            "\r\n"
                            "--000000000000def\r\n"
                            "Content-Type: text/plain; charset=\"UTF-8\"\r\n"
                            "Content-Transfer-Encoding: quoted-printable\r\n"
                            "\r\n"
                            "Caf=C3=A9 report attached. A long line that is soft-=\r\n"
                            "wrapped, and =3D signs.\r\n"
                            "\r\n"
                            "--000000000000def\r\n"
                            "Content-Type: text/html; charset=\"UTF-8\"\r\n"
                            "Content-Transfer-Encoding: quoted-printable\r\n"
                            "\r\n"
                            "<div dir=3D\"ltr\">Caf=C3=A9 <b>report</b></div>\r\n"
                            "\r\n"
                            "--000000000000def--\r\n"
                            "--000000000000abc\r\n"
                            "Content-Type: application/pdf; name=\"Q3 report.pdf\"\r\n"
                            "Content-Disposition: attachment; filename=\"Q3 report.pdf\"\r\n"
                            "Content-Transfer-Encoding: base64\r\n"
                            "X-Attachment-Id: f_1\r\n"
                            "\r\n"
                            "JVBERi0xLjQK\r\n"
                            "JSVFT0YK\r\n"
                            "--000000000000abc--\r\n"
                            "epilogue, ignored\r\n";

static void test_multipart(void)
{
        json_t *p = parse(mixed);
        CHECK(streq(json_get_str(p, "mimeType"), "multipart/mixed"));
        CHECK(json_integer_value(json_object_get(json_object_get(p, "body"), "size")) == 0);
        CHECK(json_array_size(json_object_get(p, "parts")) == 2);
        const json_t *alt = part_at(p, "0"), *txt = part_at(p, "0.0"), *html = part_at(p, "0.1"),
                     *pdf = part_at(p, "1");
        CHECK(alt && streq(json_get_str(alt, "mimeType"), "multipart/alternative"));
        CHECK(txt && streq(json_get_str(txt, "mimeType"), "text/plain"));
        CHECK(txt && body_is(txt, "Café report attached. A long line that is soft-wrapped, and = "
                                  "signs.\r\n"));
        CHECK(html && body_is(html, "<div dir=\"ltr\">Café <b>report</b></div>\r\n"));
        CHECK(pdf && streq(json_get_str(pdf, "filename"), "Q3 report.pdf"));
        CHECK(pdf && streq(json_get_str(pdf, "mimeType"), "application/pdf"));
        CHECK(pdf && body_is(pdf, "%PDF-1.4\n%%EOF\n"));
        CHECK(pdf && hdr_is(pdf, "X-Attachment-Id", "f_1"));
        char *sn = gmail_mime_snippet(p);
        CHECK(sn &&
              streq(sn, "Café report attached. A long line that is soft-wrapped, and = signs."));
        free(sn);
        char *text = gmail_mime_text(p);
        CHECK(text && strstr(text, "soft-wrapped") && strstr(text, "Café report"));
        CHECK(text && !strstr(text, "<b>") && !strstr(text, "%PDF"));
        free(text);
        json_decref(p);
}

static void test_lf_only(void)
{
        /* the same message with LF line ends */
        size_t n = strlen(mixed);
        char *lf = malloc(n + 1);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (mixed[i] != '\r')
                        lf[k++] = mixed[i];
        lf[k] = 0;
        json_t *p = parse(lf);
        CHECK(streq(json_get_str(part_at(p, "0"), "mimeType"), "multipart/alternative"));
        CHECK(body_is(part_at(p, "0.0"),
                      "Café report attached. A long line that is soft-wrapped, and = signs.\n"));
        CHECK(body_is(part_at(p, "1"), "%PDF-1.4\n%%EOF\n"));
        CHECK(streq(json_get_str(part_at(p, "1"), "filename"), "Q3 report.pdf"));
        json_decref(p);
        free(lf);
}

static void test_filenames(void)
{
        json_t *p = parse("Content-Type: multipart/mixed; boundary=b\r\n"
                          "\r\n"
                          "--b\r\n"
                          "Content-Type: text/plain; name=only-name.txt\r\n"
                          "\r\n"
                          "x\r\n"
                          "--b\r\n"
                          "Content-Type: application/octet-stream;\r\n"
                          " name=\"=?UTF-8?B?w6kudHh0?=\"\r\n"
                          "Content-Disposition: attachment;\r\n"
                          " filename=\"=?UTF-8?B?w6kudHh0?=\"\r\n"
                          "\r\n"
                          "y\r\n"
                          "--b\r\n"
                          "Content-Disposition: attachment;\r\n"
                          " filename*0*=utf-8''%E2%82%AC%20rates;\r\n"
                          " filename*1=\" 2026\";\r\n"
                          " filename*2*=%2Ecsv\r\n"
                          "\r\n"
                          "z\r\n"
                          "--b\r\n"
                          "Content-Disposition: attachment; filename*=iso-8859-1'fr'r%E9sum%E9.doc;"
                          " filename=\"fallback.doc\"\r\n"
                          "\r\n"
                          "w\r\n"
                          "--b\r\n"
                          "Content-Disposition: inline; FILENAME=\"a \\\"q\\\" (1).png\"\r\n"
                          "Content-Type: image/PNG\r\n"
                          "\r\n"
                          "v\r\n"
                          "--b\r\n"
                          "Content-Disposition: attachment; filename=sloppy name.txt; size=3\r\n"
                          "\r\n"
                          "u\r\n"
                          "--b--\r\n");
        CHECK(streq(json_get_str(part_at(p, "0"), "filename"), "only-name.txt"));
        CHECK(streq(json_get_str(part_at(p, "1"), "filename"), "é.txt"));
        CHECK(streq(json_get_str(part_at(p, "2"), "filename"), "€ rates 2026.csv"));
        CHECK(streq(json_get_str(part_at(p, "3"), "filename"), "résumé.doc"));
        CHECK(streq(json_get_str(part_at(p, "4"), "filename"), "a \"q\" (1).png"));
        CHECK(streq(json_get_str(part_at(p, "4"), "mimeType"), "image/png"));
        CHECK(streq(json_get_str(part_at(p, "5"), "filename"), "sloppy name.txt"));
        CHECK(body_is(part_at(p, "2"), "z"));
        json_decref(p);
}

static void test_rfc822(void)
{
        json_t *p = parse("Subject: Fwd: hello\r\n"
                          "Content-Type: multipart/mixed; boundary=\"outer\"\r\n"
                          "\r\n"
                          "--outer\r\n"
                          "Content-Type: text/plain\r\n"
                          "\r\n"
                          "see attached\r\n"
                          "--outer\r\n"
                          "Content-Type: message/rfc822\r\n"
                          "Content-Disposition: attachment; filename=\"hello.eml\"\r\n"
                          "\r\n"
                          "From: c@example.com\r\n"
                          "Subject: hello\r\n"
                          "Content-Type: multipart/alternative; boundary=inner\r\n"
                          "\r\n"
                          "--inner\r\n"
                          "Content-Type: text/plain\r\n"
                          "\r\n"
                          "inner text\r\n"
                          "--inner--\r\n"
                          "--outer--\r\n");
        const json_t *m = part_at(p, "1");
        CHECK(m && streq(json_get_str(m, "mimeType"), "message/rfc822"));
        CHECK(m && streq(json_get_str(m, "filename"), "hello.eml"));
        const json_t *inner = part_at(p, "1.0");
        CHECK(inner && streq(json_get_str(inner, "mimeType"), "multipart/alternative"));
        CHECK(inner && hdr_is(inner, "Subject", "hello"));
        CHECK(part_at(p, "1.0.0") && body_is(part_at(p, "1.0.0"), "inner text"));
        char *sn = gmail_mime_snippet(p);
        CHECK(sn && streq(sn, "see attached"));
        free(sn);
        json_decref(p);

        /* multipart/digest: parts default to message/rfc822 */
        p = parse("Content-Type: multipart/digest; boundary=d\r\n\r\n"
                  "--d\r\n\r\nSubject: one\r\n\r\nfirst\r\n--d--\r\n");
        CHECK(streq(json_get_str(part_at(p, "0"), "mimeType"), "message/rfc822"));
        CHECK(part_at(p, "0.0") && hdr_is(part_at(p, "0.0"), "Subject", "one"));
        json_decref(p);
}

static void test_malformed(void)
{
        /* no boundary parameter: one opaque part */
        json_t *p = parse("Content-Type: multipart/mixed\r\n\r\n--x\r\nhello\r\n--x--\r\n");
        CHECK(streq(json_get_str(p, "mimeType"), "multipart/mixed"));
        CHECK(!json_object_get(p, "parts"));
        CHECK(body_is(p, "--x\r\nhello\r\n--x--\r\n"));
        json_decref(p);

        /* the boundary never appears: opaque too */
        p = parse("Content-Type: multipart/mixed; boundary=zz\r\n\r\njust text\r\n");
        CHECK(!json_object_get(p, "parts") && body_is(p, "just text\r\n"));
        json_decref(p);

        /* missing close delimiter (a truncated message): the last part runs to the end */
        p = parse("Content-Type: multipart/mixed; boundary=b\r\n\r\n"
                  "--b\r\n\r\none\r\n--b\r\nContent-Type: text/plain\r\n\r\ntwo, cut");
        CHECK(json_array_size(json_object_get(p, "parts")) == 2);
        CHECK(body_is(part_at(p, "0"), "one"));
        CHECK(body_is(part_at(p, "1"), "two, cut"));
        json_decref(p);

        /* a boundary that only prefixes a line is not a delimiter; padding after one is */
        p = parse("Content-Type: multipart/mixed; boundary=b\r\n\r\n"
                  "--b \t\r\n\r\n--bb is text\r\n--b--  \r\n");
        CHECK(json_array_size(json_object_get(p, "parts")) == 1);
        CHECK(body_is(part_at(p, "0"), "--bb is text"));
        json_decref(p);

        /* truncated in the headers; no blank line; a part without headers */
        p = parse("Subject: cut off\r\nX-Half: ab");
        CHECK(hdr_is(p, "X-Half", "ab") && body_is(p, ""));
        json_decref(p);
        p = parse("not a header line\r\nSubject: no\r\n");
        CHECK(json_array_size(json_object_get(p, "headers")) == 0);
        CHECK(body_is(p, "not a header line\r\nSubject: no\r\n"));
        json_decref(p);
        p = parse("");
        CHECK(streq(json_get_str(p, "mimeType"), "text/plain") && body_is(p, ""));
        json_decref(p);

        /* an mbox "From " line before the headers */
        p = parse("From alice@example.com Sat Jan  3 01:05:34 1996\nSubject: mbox\n\nbody\n");
        CHECK(hdr_is(p, "Subject", "mbox") && body_is(p, "body\n"));
        json_decref(p);

        /* broken encodings: base64 junk skipped, stray '=' kept in quoted-printable */
        p = parse("Content-Transfer-Encoding: BASE64\r\n\r\nYW*Jj\r\nZA=\r\n=");
        CHECK(body_is(p, "abcd"));
        json_decref(p);
        p = parse("Content-Transfer-Encoding: quoted-printable\r\n\r\na=zz b=4 c=\r\nd=  \r\ne=");
        CHECK(body_is(p, "a=zz b=4 cde"));
        json_decref(p);
        /* padding at a line end goes; before a soft break or as =20 it stays */
        p = parse("Content-Transfer-Encoding: quoted-printable\r\n\r\n"
                  "pad  \t\r\nkeep =\r\nx=20\r\nlf \nend ");
        CHECK(body_is(p, "pad\r\nkeep x \r\nlf\nend"));
        json_decref(p);

        /* a bad Content-Type is text/plain; an unknown encoding leaves the bytes */
        p = parse("Content-Type: garbage\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nraw");
        CHECK(streq(json_get_str(p, "mimeType"), "text/plain") && body_is(p, "raw"));
        json_decref(p);

        /* NULs and 8-bit bytes in headers and body: valid JSON strings */
        static const char nul[] = "Subject: a\0b\xff\r\n\r\n\0\xfe";
        CHECK(gmail_mime_parse(nul, sizeof(nul) - 1, &p) == 0);
        const char *s = gmail_mime_header(p, "Subject");
        CHECK(s && utf8_valid(s, strlen(s)));
        char *dump = json_dumps(p, 0);
        CHECK(dump != NULL);
        free(dump);
        json_decref(p);
}

/* A multipart nested n deep. */
static char *nested(unsigned n)
{
        size_t cap = (size_t)n * 120 + 200, k = 0;
        char *s = malloc(cap);
        for (unsigned i = 0; i < n; i++)
                k += (size_t)snprintf(s + k, cap - k,
                                      "Content-Type: multipart/mixed; boundary=\"b%u\"\r\n\r\n"
                                      "--b%u\r\n",
                                      i, i);
        k += (size_t)snprintf(s + k, cap - k, "Content-Type: text/plain\r\n\r\ndeep\r\n");
        for (unsigned i = n; i-- > 0;)
                k += (size_t)snprintf(s + k, cap - k, "--b%u--\r\n", i);
        return s;
}

static unsigned depth_of(const json_t *p)
{
        const json_t *parts = json_object_get(p, "parts");
        unsigned d = 0;
        for (size_t i = 0; i < json_array_size(parts); i++) {
                unsigned k = depth_of(json_array_get(parts, i)) + 1;
                d = k > d ? k : d;
        }
        return d;
}

static void test_bounds(void)
{
        char *s = nested(GMAIL_MIME_DEPTH_MAX);
        json_t *p = parse(s);
        CHECK(depth_of(p) == GMAIL_MIME_DEPTH_MAX);
        char *sn = gmail_mime_snippet(p);
        CHECK(sn && streq(sn, "deep"));
        free(sn);
        json_decref(p);
        free(s);

        /* deeper: what lies beyond the bound is the last multipart's opaque body */
        s = nested(GMAIL_MIME_DEPTH_MAX + 5);
        p = parse(s);
        CHECK(depth_of(p) == GMAIL_MIME_DEPTH_MAX);
        json_decref(p);
        free(s);

        /* very deep (no stack growth: nothing recurses past the bound) */
        s = nested(5000);
        p = parse(s);
        CHECK(depth_of(p) == GMAIL_MIME_DEPTH_MAX);
        json_decref(p);
        free(s);

        /* too many parts: the multipart stays opaque */
        size_t cap = 40 * (GMAIL_MIME_PARTS_MAX + 10) + 100, k = 0;
        s = malloc(cap);
        k += (size_t)snprintf(s, cap, "Content-Type: multipart/mixed; boundary=b\r\n\r\n");
        for (unsigned i = 0; i < GMAIL_MIME_PARTS_MAX + 5; i++)
                k += (size_t)snprintf(s + k, cap - k, "--b\r\n\r\n%u\r\n", i);
        snprintf(s + k, cap - k, "--b--\r\n");
        p = parse(s);
        CHECK(!json_object_get(p, "parts"));
        CHECK(json_object_get(json_object_get(p, "body"), "data") != NULL);
        json_decref(p);
        free(s);

        /* exactly at the bound: root + (max - 1) children */
        k = (size_t)snprintf(s = malloc(cap), cap,
                             "Content-Type: multipart/mixed; boundary=b\r\n\r\n");
        for (unsigned i = 0; i < GMAIL_MIME_PARTS_MAX - 1; i++)
                k += (size_t)snprintf(s + k, cap - k, "--b\r\n\r\n%u\r\n", i);
        snprintf(s + k, cap - k, "--b--\r\n");
        p = parse(s);
        CHECK(json_array_size(json_object_get(p, "parts")) == GMAIL_MIME_PARTS_MAX - 1);
        CHECK(body_is(part_at(p, "254"), "254"));
        json_decref(p);
        free(s);
}

static void test_snippet(void)
{
        /* HTML only: tags, style and entities */
        json_t *p = parse("Content-Type: text/html; charset=iso-8859-1\r\n\r\n"
                          "<html><head><style>p {color: red}</style></head><body>"
                          "<p>Caf\xe9 &amp; <b>bar</b>&nbsp;&lt;3 &#8364;5 &#x41;</p>\r\n\r\n"
                          "<!-- hidden --><p>next</p></body></html>");
        char *sn = gmail_mime_snippet(p);
        CHECK(sn && streq(sn, "Café & bar <3 €5 A next"));
        free(sn);
        json_decref(p);

        /* cut after 200 characters at a character boundary */
        char buf[1024] = "Content-Type: text/plain; charset=utf-8\r\n\r\n";
        size_t k = strlen(buf);
        for (int i = 0; i < 250; i++) {
                memcpy(buf + k, "\xc3\xa9", 2);
                k += 2;
        }
        buf[k] = 0;
        p = parse(buf);
        sn = gmail_mime_snippet(p);
        CHECK(sn && strlen(sn) == 400 && utf8_valid(sn, strlen(sn)));
        free(sn);
        json_decref(p);

        /* no text: "" */
        p = parse("Content-Type: image/png\r\n\r\nPNG");
        sn = gmail_mime_snippet(p);
        CHECK(sn && streq(sn, ""));
        free(sn);
        json_decref(p);
}

static json_t *build_parse(json_t *spec, char **ret_raw)
{
        char *raw = NULL;
        size_t n = 0;
        int r = gmail_mime_build(spec, &raw, &n);
        CHECK(r == 0 && raw && strlen(raw) == n);
        if (r < 0)
                return NULL;
        /* every line ends CRLF and is at most 998 octets */
        size_t line = 0;
        for (size_t i = 0; i < n; i++) {
                if (raw[i] == '\n') {
                        CHECK(i > 0 && raw[i - 1] == '\r');
                        line = 0;
                } else if (++line > 999)
                        CHECK(!"line longer than 998");
                CHECK(raw[i] != 0);
        }
        json_t *p = NULL;
        CHECK(gmail_mime_parse(raw, n, &p) == 0);
        if (ret_raw)
                *ret_raw = raw;
        else
                free(raw);
        return p;
}

static void test_build(void)
{
        /* text only: 7bit when it can */
        json_t *spec =
                json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "from", "Alice <alice@example.com>",
                          "to", "bob@example.com", "subject", "Hello", "text", "line one\nline two",
                          "messageId", "abc@pome.test", "date", (json_int_t)1765000000);
        char *raw;
        json_t *p = build_parse(spec, &raw);
        CHECK(strstr(raw, "Message-ID: <abc@pome.test>\r\n"));
        CHECK(strstr(raw, "Date: Sat, 06 Dec 2025 05:46:40 +0000\r\n"));
        CHECK(strstr(raw, "MIME-Version: 1.0\r\n"));
        CHECK(strstr(raw, "Content-Transfer-Encoding: 7bit\r\n"));
        CHECK(hdr_is(p, "From", "Alice <alice@example.com>"));
        CHECK(hdr_is(p, "To", "bob@example.com"));
        CHECK(streq(json_get_str(p, "mimeType"), "text/plain"));
        CHECK(body_is(p, "line one\r\nline two\r\n"));
        free(raw);
        json_decref(p);
        json_decref(spec);

        /* everything: non-ASCII headers, alternative, attachments, threading */
        spec = json_pack(
                "{s:s, s:[s, s], s:s, s:s, s:s, s:s, s:s, s:s, s:[s, s], s:s, s:[{s:s, s:s, s:s},"
                " {s:s, s:s}]}",
                "from", "Jürgen Müller <j@example.de>", "to", "\"Ann, B\" <ann@example.com>",
                "Zoë <zoe@example.com>", "cc", "carol@example.com", "subject",
                "Grüße — a long subject line that goes on and on and on, well past seventy-eight "
                "columns, so it must fold",
                "text", "Héllo =_ there\nsecond line with trailing space \n", "html",
                "<p>Héllo</p>", "messageId", "<m2@example.de>", "inReplyTo", "m1@example.com",
                "references", "<m0@example.com>", "m1@example.com", "date",
                "2026-12-06T19:00:00+01:00", "attachments", "filename", "résumé.pdf", "mimeType",
                "application/pdf", "data", "JVBERi0xLjQK", "filename", "plain.bin", "data", "-_8=");
        p = build_parse(spec, &raw);
        CHECK(strstr(raw, "Date: Sun, 06 Dec 2026 18:00:00 +0000\r\n"));
        CHECK(strstr(raw, "In-Reply-To: <m1@example.com>\r\n"));
        CHECK(strstr(raw, "References: <m0@example.com> <m1@example.com>\r\n"));
        CHECK(hdr_is(p, "From", "Jürgen Müller <j@example.de>"));
        CHECK(hdr_is(p, "To", "\"Ann, B\" <ann@example.com>, Zoë <zoe@example.com>"));
        CHECK(hdr_is(p, "Subject",
                     "Grüße — a long subject line that goes on and on and on, well past "
                     "seventy-eight columns, so it must fold"));
        CHECK(streq(json_get_str(p, "mimeType"), "multipart/mixed"));
        CHECK(streq(json_get_str(part_at(p, "0"), "mimeType"), "multipart/alternative"));
        CHECK(body_is(part_at(p, "0.0"), "Héllo =_ there\r\nsecond line with trailing space \r\n"));
        CHECK(body_is(part_at(p, "0.1"), "<p>Héllo</p>"));
        CHECK(streq(json_get_str(part_at(p, "1"), "filename"), "résumé.pdf"));
        CHECK(streq(json_get_str(part_at(p, "1"), "mimeType"), "application/pdf"));
        CHECK(body_is(part_at(p, "1"), "%PDF-1.4\n"));
        CHECK(streq(json_get_str(part_at(p, "2"), "filename"), "plain.bin"));
        CHECK(streq(json_get_str(part_at(p, "2"), "mimeType"), "application/octet-stream"));
        char *b = body_of(part_at(p, "2"));
        CHECK(memcmp(b, "\xfb\xff", 2) == 0);
        free(b);
        char *sn = gmail_mime_snippet(p);
        CHECK(sn && streq(sn, "Héllo =_ there second line with trailing space"));
        free(sn);
        free(raw);
        json_decref(p);
        json_decref(spec);

        /* header injection is flattened, not passed on */
        spec = json_pack("{s:s, s:s, s:s}", "to", "a@x\r\nBcc: evil@x", "subject",
                         "hi\r\nX-Injected: 1", "html", "<b>only html</b>");
        p = build_parse(spec, &raw);
        CHECK(gmail_mime_header(p, "X-Injected") == NULL);
        CHECK(gmail_mime_header(p, "Bcc") == NULL);
        CHECK(streq(json_get_str(p, "mimeType"), "text/html"));
        free(raw);
        json_decref(p);
        json_decref(spec);

        /* a 5000-byte word and a 3000-byte body line still fit 998-octet lines */
        char *big = malloc(5001);
        memset(big, 'x', 5000);
        big[5000] = 0;
        spec = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "subject", big, "text", big, "attachments",
                         "filename", big, "data", "");
        p = build_parse(spec, NULL);
        CHECK(hdr_is(p, "Subject", big));
        CHECK(body_is(part_at(p, "0"), big));
        CHECK(streq(json_get_str(part_at(p, "1"), "filename"), big));
        json_decref(p);
        json_decref(spec);
        free(big);

        /* attachments only */
        spec = json_pack("{s:[{s:s, s:s}]}", "attachments", "filename", "a.txt", "data", "YQ");
        p = build_parse(spec, NULL);
        CHECK(json_array_size(json_object_get(p, "parts")) == 1);
        CHECK(body_is(part_at(p, "0"), "a"));
        json_decref(p);
        json_decref(spec);

        /* errors */
        char *out;
        size_t n;
        spec = json_pack("{s:[{s:s, s:s}]}", "attachments", "filename", "a", "data", "!!");
        CHECK(gmail_mime_build(spec, &out, &n) == -EINVAL);
        json_decref(spec);
        spec = json_pack("{s:s}", "date", "yesterday");
        CHECK(gmail_mime_build(spec, &out, &n) == -EINVAL);
        json_decref(spec);

        /* the same spec builds the same bytes (tapes replay byte for byte) */
        spec = json_pack("{s:s, s:s, s:s}", "text", "a", "html", "b", "subject", "s");
        char *r1 = NULL, *r2 = NULL;
        size_t n1 = 0, n2 = 1;
        CHECK(gmail_mime_build(spec, &r1, &n1) == 0 && gmail_mime_build(spec, &r2, &n2) == 0);
        CHECK(n1 == n2 && memcmp(r1, r2, n1) == 0);
        free(r1);
        free(r2);
        json_decref(spec);
}

int main(void)
{
        test_base64();
        test_single();
        test_unfold_and_words();
        test_multipart();
        test_lf_only();
        test_filenames();
        test_rfc822();
        test_malformed();
        test_bounds();
        test_snippet();
        test_build();
        return check_finish();
}
