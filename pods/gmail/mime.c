/* SPDX-License-Identifier: MIT */
/*
 * RFC 5322 / MIME (RFC 2045, 2046, 2047, 2183, 2231) messages for the Gmail twin: parsed
 * into the Gmail API's MessagePart and built from a message's parts.
 *
 * Our own parser, not GMime. Debian's libgmime-3.0-dev does ship a static
 * libgmime-3.0.a, but linking it into the static, seccomp-filtered pome-pod pulls GLib in
 * with it (GObject's type system and its lazy class initialisation, GLib's thread pool and
 * allocator, libgmime's own charset layer on iconv) — and glibc's iconv in a static
 * program dlopen()s its gconv modules from /usr/lib at first use, which the pod (no loader,
 * no file system, a seccomp allow-list) cannot do. What the twin needs is a bounded, pure
 * function from bytes to JSON and back; the three charsets that matter (UTF-8, US-ASCII,
 * ISO-8859-1/Windows-1252) convert in a table, everything else is kept lossily as UTF-8.
 * tests/fuzz/fuzz-gmail-mime.c holds it to "never crash, never hang, always valid JSON".
 *
 * Time is linear in the input times the nesting (at most GMAIL_MIME_DEPTH_MAX): every scan
 * moves forward and each level scans its own bytes once. Measured (-O2, one core): 8 MiB
 * of hostile shapes (encoded-word junk, unclosed tags, 1.4M delimiters, base64, folds,
 * 2231 segments, unclosed comments) each parse in 0.04-0.5 s.
 */
#include <ctype.h>
#include <stdarg.h>
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/gmail/mime.h"
#include "pods/twin/kind.h"

#define HEADERS_MAX     1000 /* header fields kept per part; more are dropped */
#define PARAM_SEGS_MAX  256  /* RFC 2231 continuation segments read per parameter */
#define SNIPPET_CHARS   200
#define LINE_MAX_OCTETS 998 /* RFC 5322 §2.1.1 */
#define QP_LINE         76  /* RFC 2045 §6.7 (5) */

/* ---------------------------------------------------------------- growing buffers */

typedef struct Buf {
        char *p;
        size_t n, cap;
} Buf;

static void buf_done(Buf *b)
{
        free(b->p);
        *b = (Buf){};
}

static int buf_put(Buf *b, const void *s, size_t n)
{
        if (n > SIZE_MAX - b->n - 1 || buf_reserve(&b->p, &b->cap, b->n + n + 1, 256) < 0)
                return -ENOMEM;
        if (n)
                memcpy(b->p + b->n, s, n);
        b->n += n;
        b->p[b->n] = 0;
        return 0;
}

static int buf_puts(Buf *b, const char *s)
{
        return buf_put(b, s, strlen(s));
}

static int buf_putc(Buf *b, char c)
{
        return buf_put(b, &c, 1);
}

/* Appends code point cp (< 0x10000 is all callers need, but any is accepted) as UTF-8. */
static int buf_put_cp(Buf *b, uint32_t cp)
{
        char u[4];
        size_t k;
        if (cp < 0x80) {
                u[0] = (char)cp;
                k = 1;
        } else if (cp < 0x800) {
                u[0] = (char)(0xC0 | cp >> 6);
                u[1] = (char)(0x80 | (cp & 0x3F));
                k = 2;
        } else if (cp < 0x10000) {
                if (cp >= 0xD800 && cp < 0xE000)
                        cp = 0xFFFD;
                u[0] = (char)(0xE0 | cp >> 12);
                u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
                u[2] = (char)(0x80 | (cp & 0x3F));
                k = 3;
        } else if (cp < 0x110000) {
                u[0] = (char)(0xF0 | cp >> 18);
                u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
                u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
                u[3] = (char)(0x80 | (cp & 0x3F));
                k = 4;
        } else
                return buf_put_cp(b, 0xFFFD);
        return buf_put(b, u, k);
}

static int buf_printf(Buf *b, const char *fmt, ...) _printf_(2, 3);
static int buf_printf(Buf *b, const char *fmt, ...)
{
        char tmp[256];
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t)k >= sizeof(tmp))
                return -ENOMEM; /* callers format short fixed things only */
        return buf_put(b, tmp, (size_t)k);
}

/* ---------------------------------------------------------------- base64 */

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The sextet of c in either alphabet, -1 for anything else. */
static int b64_val(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+' || c == '-')
                return 62;
        if (c == '/' || c == '_')
                return 63;
        return -1;
}

static char *b64_encode(const void *data, size_t n, const char *alphabet, bool pad)
{
        const unsigned char *p = data;
        if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
                return NULL;
        char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                             (i + 2 < n ? p[i + 2] : 0);
                *o++ = alphabet[v >> 18 & 63];
                *o++ = alphabet[v >> 12 & 63];
                if (i + 1 < n)
                        *o++ = alphabet[v >> 6 & 63];
                else if (pad)
                        *o++ = '=';
                if (i + 2 < n)
                        *o++ = alphabet[v & 63];
                else if (pad)
                        *o++ = '=';
        }
        *o = 0;
        return out;
}

char *gmail_base64url(const void *data, size_t n)
{
        return b64_encode(data, n, b64_url, false);
}

/*
 * Decodes the sextets among n bytes at s into out (room for n / 4 * 3 + 3 bytes). strict:
 * only the two alphabets, whitespace and trailing '=' padding, and no dangling single
 * sextet; else every other byte is skipped (RFC 2045 §6.8: "ignored"). Returns the byte
 * count, or -EINVAL.
 */
static ssize_t b64_decode_into(const char *s, size_t n, bool strict, char *out)
{
        size_t o = 0, k = 0;
        uint32_t v = 0;
        bool padding = false;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                int d = b64_val(c);
                if (d < 0) {
                        if (c == '=') {
                                padding = true;
                                continue;
                        }
                        if (strict && !strchr(" \t\r\n", c))
                                return -EINVAL;
                        continue;
                }
                if (padding && strict)
                        return -EINVAL; /* data after padding */
                v = v << 6 | (uint32_t)d;
                if (++k == 4) {
                        out[o++] = (char)(v >> 16);
                        out[o++] = (char)(v >> 8);
                        out[o++] = (char)v;
                        v = 0;
                        k = 0;
                }
        }
        if (k == 1 && strict)
                return -EINVAL;
        if (k == 2)
                out[o++] = (char)(v >> 4);
        else if (k == 3) {
                out[o++] = (char)(v >> 10);
                out[o++] = (char)(v >> 2);
        }
        return (ssize_t)o;
}

int gmail_base64_decode(const char *s, size_t n, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *out = malloc(n / 4 * 3 + 4);
        if (!out)
                return -ENOMEM;
        ssize_t k = b64_decode_into(s, n, true, out);
        if (k < 0)
                return (int)k;
        out[k] = 0;
        *ret = TAKE_PTR(out);
        *ret_len = (size_t)k;
        return 0;
}

/* ---------------------------------------------------------------- charsets */

/* Windows-1252's 0x80-0x9F (WHATWG Encoding: the decoder browsers use for "iso-8859-1"). */
static const uint16_t cp1252_hi[32] = {
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
        0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
};

/* Whether charset (NULL: none given) names ISO-8859-1 or Windows-1252. */
static bool charset_is_latin1(const char *cs)
{
        static const char *const names[] = {
                "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1",       "l1",     "latin-1",
                "cp819",      "ibm819",    "iso-ir-100", "windows-1252", "cp1252", "x-cp1252",
        };
        if (!cs)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcasecmp(cs, names[i]) == 0)
                        return true;
        return startswith(cs, "iso_8859-1:") != NULL;
}

/*
 * Appends n bytes at s, in charset cs, to b as UTF-8: ISO-8859-1 and Windows-1252 by table
 * (as WHATWG decodes both); UTF-8, US-ASCII and every other charset as the bytes
 * themselves, which the caller mends into valid UTF-8 (U+FFFD for what is not).
 */
static int charset_append(Buf *b, const char *cs, const char *s, size_t n)
{
        if (!charset_is_latin1(cs))
                return buf_put(b, s, n);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                int r = c < 0x80   ? buf_putc(b, (char)c)
                        : c < 0xA0 ? buf_put_cp(b, cp1252_hi[c - 0x80])
                                   : buf_put_cp(b, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---------------------------------------------------------------- RFC 2047 encoded words */

static int hexval(unsigned char c)
{
        return unhex((char)c);
}

/*
 * Parses an encoded word "=?charset?B|Q?text?=" at s (n bytes): on success its end in
 * *ret_end, the charset (without an RFC 2231 "*lang") in cs (NUL-terminated) and the
 * decoded bytes appended to raw.
 */
static bool encoded_word(const char *s, size_t n, size_t *ret_end, char cs[static 64], Buf *raw,
                         int *ret_err)
{
        *ret_err = 0;
        if (n < 8 || s[0] != '=' || s[1] != '?')
                return false;
        size_t i = 2, csb = i;
        while (i < n && s[i] != '?' && i - csb < 63 && (unsigned char)s[i] > ' ')
                i++;
        if (i >= n || s[i] != '?' || i == csb)
                return false;
        size_t csl = i - csb;
        memcpy(cs, s + csb, csl);
        cs[csl] = 0;
        char *star = strchr(cs, '*');
        if (star)
                *star = 0;
        i++;
        if (i + 1 >= n || s[i + 1] != '?')
                return false;
        char enc = (char)toupper((unsigned char)s[i]);
        if (enc != 'B' && enc != 'Q')
                return false;
        i += 2;
        size_t tb = i;
        /* the text: no whitespace, no '?' (B's alphabet has none; Q encodes it) */
        while (i < n && s[i] != '?' && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
                i++;
        if (i + 1 >= n || s[i] != '?' || s[i + 1] != '=')
                return false;
        size_t te = i;
        *ret_end = i + 2;
        if (enc == 'B') {
                if (buf_reserve(&raw->p, &raw->cap, raw->n + (te - tb) / 4 * 3 + 5, 64) < 0) {
                        *ret_err = -ENOMEM;
                        return false;
                }
                ssize_t k = b64_decode_into(s + tb, te - tb, false, raw->p + raw->n);
                raw->n += (size_t)(k < 0 ? 0 : k);
                raw->p[raw->n] = 0;
                return true;
        }
        for (size_t j = tb; j < te; j++) {
                char c = s[j];
                int h, l;
                if (c == '_')
                        c = ' ';
                else if (c == '=' && j + 2 < te && (h = hexval((unsigned char)s[j + 1])) >= 0 &&
                         (l = hexval((unsigned char)s[j + 2])) >= 0) {
                        c = (char)(h << 4 | l);
                        j += 2;
                }
                if (buf_putc(raw, c) < 0) {
                        *ret_err = -ENOMEM;
                        return false;
                }
        }
        return true;
}

/*
 * Appends n bytes of header text at s to out with its encoded words decoded (RFC 2047 §6.2:
 * whitespace between two encoded words is dropped; adjacent words in one charset are joined
 * before conversion, so a character split across words survives).
 */
static int decode_words(Buf *out, const char *s, size_t n)
{
        Buf raw = {};
        char cs[64], pcs[64] = "";
        size_t i = 0, lit = 0; /* literal text pending from lit to i */
        bool after_word = false;
        int r = 0;
        while (i < n) {
                size_t end;
                int err;
                if (s[i] == '=' && i + 1 < n && s[i + 1] == '?') {
                        size_t rawn = raw.n;
                        if (encoded_word(s + i, n - i, &end, cs, &raw, &err)) {
                                /* literal text before: kept unless only whitespace between words */
                                bool ws = true;
                                for (size_t j = lit; j < i; j++)
                                        if (s[j] != ' ' && s[j] != '\t' && s[j] != '\r' &&
                                            s[j] != '\n')
                                                ws = false;
                                bool joined = after_word && ws && strcasecmp(cs, pcs) == 0;
                                if (!joined) {
                                        /* flush the pending word bytes, then the literal */
                                        if (rawn > 0) {
                                                r = charset_append(out, pcs, raw.p, rawn);
                                                if (r < 0)
                                                        goto done;
                                                memmove(raw.p, raw.p + rawn, raw.n - rawn);
                                                raw.n -= rawn;
                                        }
                                        if (!(after_word && ws)) {
                                                r = buf_put(out, s + lit, i - lit);
                                                if (r < 0)
                                                        goto done;
                                        }
                                }
                                memcpy(pcs, cs, sizeof(pcs));
                                after_word = true;
                                i += end;
                                lit = i;
                                continue;
                        }
                        if (err < 0) {
                                r = err;
                                goto done;
                        }
                        raw.n = rawn;
                }
                i++;
        }
        if (raw.n > 0 && (r = charset_append(out, pcs, raw.p, raw.n)) < 0)
                goto done;
        r = buf_put(out, s + lit, n - lit);
done:
        buf_done(&raw);
        return r;
}

/* ---------------------------------------------------------------- lines and headers */

/* The end of the line starting at pos (before its CRLF or LF) and the next line's start. */
static size_t line_end(const char *s, size_t n, size_t pos, size_t *ret_next)
{
        const char *nl = memchr(s + pos, '\n', n - pos);
        if (!nl) {
                *ret_next = n;
                return n;
        }
        size_t e = (size_t)(nl - s);
        *ret_next = e + 1;
        return e > pos && s[e - 1] == '\r' ? e - 1 : e;
}

typedef struct Header {
        const char *name; /* not NUL-terminated */
        size_t name_len;
        char *value; /* unfolded, trimmed, still encoded: a NUL-terminated copy */
        size_t value_len;
} Header;

typedef struct Headers {
        Header *h;
        size_t n;
        size_t body; /* where the body starts */
} Headers;

static void headers_done(Headers *hs)
{
        for (size_t i = 0; i < hs->n; i++)
                free(hs->h[i].value);
        free(hs->h);
        *hs = (Headers){};
}

static bool is_ftext(unsigned char c)
{
        return c >= 33 && c <= 126 && c != ':';
}

/*
 * The length of a header line's field name at s (n bytes) and where its value starts,
 * or 0 when the line is not a header field ("name:" with optional obsolete WSP before
 * the colon, RFC 5322 §4.5).
 */
static size_t field_name(const char *s, size_t n, size_t *ret_value)
{
        size_t i = 0;
        while (i < n && is_ftext((unsigned char)s[i]))
                i++;
        size_t k = i;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (k == 0 || i >= n || s[i] != ':')
                return 0;
        *ret_value = i + 1;
        return k;
}

/* Unfolds a header's lines (RFC 5322 §2.2.3: CRLF before WSP removed) and trims it. */
static char *unfold(const char *s, size_t n, size_t *ret_len)
{
        char *v = malloc(n + 1);
        if (!v)
                return NULL;
        size_t o = 0;
        for (size_t i = 0; i < n; i++)
                if (s[i] != '\r' && s[i] != '\n')
                        v[o++] = s[i];
        size_t b = 0;
        while (b < o && (v[b] == ' ' || v[b] == '\t'))
                b++;
        while (o > b && (v[o - 1] == ' ' || v[o - 1] == '\t'))
                o--;
        memmove(v, v + b, o - b);
        o -= b;
        v[o] = 0;
        *ret_len = o;
        return v;
}

/*
 * Reads the header section at the start of s (n bytes): fields up to the empty line, or
 * up to the first line that is neither a field nor a continuation (then the body starts
 * there: a part without headers and without the empty line still has its text).
 */
static int headers_parse(const char *s, size_t n, bool root, Headers *ret)
{
        Headers hs = {};
        size_t cap = 0, pos = 0, next;
        if (root && n >= 5 && memcmp(s, "From ", 5) == 0) /* an mbox separator line */
                line_end(s, n, 0, &pos);
        hs.body = n;
        while (pos < n) {
                size_t e = line_end(s, n, pos, &next);
                if (e == pos) { /* the empty line */
                        hs.body = next;
                        break;
                }
                size_t vstart, nl = field_name(s + pos, e - pos, &vstart);
                if (nl == 0) {
                        hs.body = pos;
                        break;
                }
                /* the field's continuation lines */
                size_t fe = e, fnext = next;
                while (fnext < n && (s[fnext] == ' ' || s[fnext] == '\t')) {
                        size_t ce = line_end(s, n, fnext, &next);
                        fe = ce;
                        fnext = next;
                }
                if (hs.n < HEADERS_MAX) {
                        if (hs.n == cap) {
                                size_t c = cap ? cap * 2 : 16;
                                Header *h = realloc(hs.h, c * sizeof(*h));
                                if (!h) {
                                        headers_done(&hs);
                                        return -ENOMEM;
                                }
                                hs.h = h;
                                cap = c;
                        }
                        Header *h = &hs.h[hs.n];
                        h->name = s + pos;
                        h->name_len = nl;
                        h->value = unfold(s + pos + vstart, fe - pos - vstart, &h->value_len);
                        if (!h->value) {
                                headers_done(&hs);
                                return -ENOMEM;
                        }
                        hs.n++;
                }
                pos = fnext;
        }
        *ret = hs;
        return 0;
}

static const Header *headers_get(const Headers *hs, const char *name)
{
        size_t l = strlen(name);
        for (size_t i = 0; i < hs->n; i++)
                if (hs->h[i].name_len == l && strncasecmp(hs->h[i].name, name, l) == 0)
                        return &hs->h[i];
        return NULL;
}

/* ---------------------------------------------------------------- parameters (RFC 2045 §5.1, RFC
 * 2231) */

static bool is_tspecial_or_space(unsigned char c)
{
        return c <= ' ' || c >= 127 || strchr("()<>@,;:\\\"/[]?=", c);
}

/* Skips whitespace and RFC 5322 comments "(...)" (nested, with quoted pairs). */
static size_t skip_cfws(const char *s, size_t n, size_t i)
{
        while (i < n) {
                if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')
                        i++;
                else if (s[i] == '(') {
                        unsigned depth = 0;
                        for (; i < n; i++) {
                                if (s[i] == '\\' && i + 1 < n)
                                        i++;
                                else if (s[i] == '(')
                                        depth++;
                                else if (s[i] == ')' && --depth == 0) {
                                        i++;
                                        break;
                                }
                        }
                } else
                        break;
        }
        return i;
}

/*
 * Reads a token or quoted-string value at s[i..n) into out (quotes and quoted pairs
 * undone; an unquoted value runs to ';' so that sloppy "name=a b.txt" keeps its spaces).
 */
static int param_value(const char *s, size_t n, size_t *i, Buf *out)
{
        size_t j = *i;
        if (j < n && s[j] == '"') {
                for (j++; j < n && s[j] != '"'; j++) {
                        if (s[j] == '\\' && j + 1 < n)
                                j++;
                        if (buf_putc(out, s[j]) < 0)
                                return -ENOMEM;
                }
                *i = j < n ? j + 1 : n;
                return 0;
        }
        size_t b = j;
        while (j < n && s[j] != ';')
                j++;
        size_t e = j;
        while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
                e--;
        *i = j;
        return buf_put(out, s + b, e - b);
}

/* Percent-decodes RFC 2231 extended value text (n bytes) onto out. */
static int pct_append(Buf *out, const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int h, l;
                if (s[i] == '%' && i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
                    (l = hexval((unsigned char)s[i + 2])) >= 0) {
                        if (buf_putc(out, (char)(h << 4 | l)) < 0)
                                return -ENOMEM;
                        i += 2;
                } else if (buf_putc(out, s[i]) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * The parameter want (lowercase) of a Content-Type or Content-Disposition value v: from
 * RFC 2231's extended "want*=charset'lang'%xx" or continuations "want*0*=", "want*1=", …
 * (preferred when present), else the plain "want=". Encoded words in a plain value are
 * decoded (mailers put them there, RFC 2047 §5 notwithstanding). *ret is UTF-8 when the
 * charset is known, else the bytes as they are; NULL (return 0) when absent.
 */
static int param_get(const char *v, const char *want, char **ret)
{
        size_t n = strlen(v), wl = strlen(want), i = 0;
        Buf plain = {}, segs[PARAM_SEGS_MAX] = {};
        bool have_plain = false, seg_ext[PARAM_SEGS_MAX] = {}, seg_have[PARAM_SEGS_MAX] = {};
        int r = 0;
        *ret = NULL;
        /* skip the type itself */
        while (i < n && v[i] != ';') {
                if (v[i] == '"') { /* a quoted-string in a sloppy type: skip it whole */
                        for (i++; i < n && v[i] != '"'; i++)
                                if (v[i] == '\\' && i + 1 < n)
                                        i++;
                        if (i < n)
                                i++;
                } else
                        i++;
        }
        while (i < n) {
                i = skip_cfws(v, n, i + (v[i] == ';'));
                size_t nb = i;
                while (i < n && !is_tspecial_or_space((unsigned char)v[i]))
                        i++;
                /* '*' is not a tspecial, so "name*0*" is read whole */
                size_t ne = i;
                i = skip_cfws(v, n, i);
                if (i >= n || v[i] != '=') {
                        while (i < n && v[i] != ';')
                                i++;
                        continue;
                }
                i = skip_cfws(v, n, i + 1);
                bool match = ne - nb >= wl && strncasecmp(v + nb, want, wl) == 0;
                const char *rest = v + nb + wl;
                size_t restl = ne - nb - wl;
                Buf val = {};
                if ((r = param_value(v, n, &i, &val)) < 0) {
                        buf_done(&val);
                        goto done;
                }
                if (match && restl == 0 && !have_plain) {
                        plain = val;
                        have_plain = true;
                        val = (Buf){};
                } else if (match && rest[0] == '*') {
                        /* "*", "*N", "*N*" */
                        unsigned idx = 0;
                        size_t k = 1;
                        bool digits = false, ext;
                        while (k < restl && rest[k] >= '0' && rest[k] <= '9' && idx < 1000) {
                                idx = idx * 10 + (unsigned)(rest[k] - '0');
                                k++;
                                digits = true;
                        }
                        ext = !digits || (k < restl && rest[k] == '*');
                        if (k + (digits && ext) == restl && idx < PARAM_SEGS_MAX &&
                            !seg_have[idx]) {
                                segs[idx] = val;
                                seg_have[idx] = true;
                                seg_ext[idx] = ext;
                                val = (Buf){};
                        }
                }
                buf_done(&val);
                while (i < n && v[i] != ';')
                        i++;
        }

        Buf out = {};
        if (seg_have[0]) {
                /* segment 0's extended value carries charset'language' */
                char cs[64] = "";
                Buf bytes = {};
                for (size_t k = 0; k < PARAM_SEGS_MAX && seg_have[k]; k++) {
                        const char *p = segs[k].p ? segs[k].p : "";
                        size_t pl = segs[k].n;
                        if (k == 0 && seg_ext[0]) {
                                const char *q1 = memchr(p, '\'', pl);
                                const char *q2 =
                                        q1 ? memchr(q1 + 1, '\'', pl - (size_t)(q1 + 1 - p)) : NULL;
                                if (q2) {
                                        size_t cl = (size_t)(q1 - p);
                                        if (cl < sizeof(cs)) {
                                                memcpy(cs, p, cl);
                                                cs[cl] = 0;
                                        }
                                        pl -= (size_t)(q2 + 1 - p);
                                        p = q2 + 1;
                                }
                        }
                        r = seg_ext[k] ? pct_append(&bytes, p, pl) : buf_put(&bytes, p, pl);
                        if (r < 0) {
                                buf_done(&bytes);
                                goto done;
                        }
                }
                r = charset_append(&out, cs[0] ? cs : NULL, bytes.p ? bytes.p : "", bytes.n);
                buf_done(&bytes);
        } else if (have_plain)
                r = decode_words(&out, plain.p ? plain.p : "", plain.n);
        else
                goto done;
        if (r >= 0)
                r = buf_put(&out, "", 0); /* a string even when empty */
        if (r < 0) {
                buf_done(&out);
                goto done;
        }
        *ret = out.p;
done:
        buf_done(&plain);
        for (size_t k = 0; k < PARAM_SEGS_MAX; k++)
                buf_done(&segs[k]);
        return r;
}

/* The "type/subtype" of a Content-Type value, lowercased, or NULL when it has none. */
static char *media_type(const char *v)
{
        size_t n = strcspn(v, ";");
        while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
                n--;
        size_t b = skip_cfws(v, n, 0);
        const char *slash = memchr(v + b, '/', n - b);
        if (!slash || slash == v + b || slash + 1 == v + n)
                return NULL;
        for (size_t i = b; i < n; i++)
                if (v + i != slash && is_tspecial_or_space((unsigned char)v[i]))
                        return NULL;
        char *t = strndup(v + b, n - b);
        if (t)
                for (char *p = t; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
        return t;
}

/* ---------------------------------------------------------------- transfer encodings */

/*
 * Undoes quoted-printable (RFC 2045 §6.7), leniently: a stray '=' is kept as it is; the
 * spaces and tabs that end an encoded line are transport padding and go (rule 3), those
 * before a soft line break or encoded as =20 stay.
 */
static int qp_decode(const char *s, size_t n, Buf *out)
{
        if (buf_reserve(&out->p, &out->cap, n + 1, 64) < 0)
                return -ENOMEM;
        size_t o = 0, ws = SIZE_MAX; /* where the literal whitespace at the end began */
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (c == '=') {
                        int h, l;
                        if (i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
                            (l = hexval((unsigned char)s[i + 2])) >= 0) {
                                out->p[o++] = (char)(h << 4 | l);
                                ws = SIZE_MAX;
                                i += 2;
                                continue;
                        }
                        /* a soft line break: '=', optional transport padding, EOL */
                        size_t j = i + 1;
                        while (j < n && (s[j] == ' ' || s[j] == '\t'))
                                j++;
                        if (j == n || s[j] == '\n' ||
                            (s[j] == '\r' && j + 1 < n && s[j + 1] == '\n')) {
                                i = j < n && s[j] == '\r' ? j + 1 : j;
                                ws = SIZE_MAX;
                                continue;
                        }
                }
                if (c == ' ' || c == '\t') {
                        if (ws == SIZE_MAX)
                                ws = o;
                } else {
                        if ((c == '\n' || (c == '\r' && i + 1 < n && s[i + 1] == '\n')) &&
                            ws != SIZE_MAX)
                                o = ws;
                        ws = SIZE_MAX;
                }
                out->p[o++] = c;
        }
        if (ws != SIZE_MAX) /* the last line ends where the body does */
                o = ws;
        out->n = o;
        out->p[o] = 0;
        return 0;
}

/* ---------------------------------------------------------------- parsing */

typedef struct Ctx {
        size_t parts; /* parts made so far */
} Ctx;

typedef struct Range {
        size_t b, e;
} Range;

/*
 * Whether the line at pos is a delimiter "--boundary" (close: "--boundary--"), with
 * optional transport padding (RFC 2046 §5.1.1), and where the next line starts.
 */
static bool is_delimiter(const char *s, size_t n, size_t pos, const char *bd, size_t bl,
                         bool *ret_close, size_t *ret_next)
{
        if (n - pos < bl + 2 || s[pos] != '-' || s[pos + 1] != '-' ||
            memcmp(s + pos + 2, bd, bl) != 0)
                return false;
        size_t i = pos + 2 + bl;
        bool close = false;
        if (n - i >= 2 && s[i] == '-' && s[i + 1] == '-') {
                close = true;
                i += 2;
        }
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (i < n && s[i] == '\r')
                i++;
        if (i < n && s[i] != '\n')
                return false;
        *ret_close = close;
        *ret_next = i < n ? i + 1 : n;
        return true;
}

/*
 * The body parts of a multipart body (s, n bytes) delimited by bd: up to max + 1 ranges
 * into ranges (the caller treats max + 1 as "too many"). The CRLF before a delimiter
 * belongs to it; preamble and epilogue are dropped; a missing close delimiter ends the
 * last part at the end of the body. Returns the count.
 */
static size_t multipart_split(const char *s, size_t n, const char *bd, Range *ranges, size_t max)
{
        size_t bl = strlen(bd), count = 0, pos = 0, next;
        bool open = false, close;
        while (pos < n) {
                if (is_delimiter(s, n, pos, bd, bl, &close, &next)) {
                        if (open) {
                                size_t e = pos;
                                if (e > 0 && s[e - 1] == '\n')
                                        e--;
                                if (e > 0 && s[e - 1] == '\r')
                                        e--;
                                if (e < ranges[count - 1].b)
                                        e = ranges[count - 1].b;
                                ranges[count - 1].e = e;
                        }
                        if (close) {
                                open = false;
                                break;
                        }
                        if (count == max + 1)
                                return count;
                        ranges[count++] = (Range){next, n};
                        open = true;
                        pos = next;
                        continue;
                }
                const char *nl = memchr(s + pos, '\n', n - pos);
                pos = nl ? (size_t)(nl - s) + 1 : n;
        }
        return count;
}

static int parse_entity(Ctx *c, const char *s, size_t n, const char *id, unsigned depth, bool root,
                        const char *default_type, json_t **ret);

/* body {size, data?} of n bytes. */
static json_t *body_json(const char *s, size_t n)
{
        if (n == 0)
                return json_pack("{s:i}", "size", 0);
        _cleanup_free_ char *d = gmail_base64url(s, n);
        if (!d)
                return NULL;
        return json_pack("{s:I, s:s}", "size", (json_int_t)n, "data", d);
}

static int child_id(const char *id, size_t k, char out[static 512])
{
        int w = *id ? snprintf(out, 512, "%s.%zu", id, k) : snprintf(out, 512, "%zu", k);
        return w < 0 || w >= 512 ? -ENOMEM : 0;
}

static int parse_entity(Ctx *c, const char *s, size_t n, const char *id, unsigned depth, bool root,
                        const char *default_type, json_t **ret)
{
        _cleanup_(headers_done) Headers hs = {};
        int r = headers_parse(s, n, root, &hs);
        if (r < 0)
                return r;
        c->parts++;

        _cleanup_json_ json_t *part = json_object(), *hj = json_array();
        if (!part || !hj)
                return -ENOMEM;
        for (size_t i = 0; i < hs.n; i++) {
                Buf v = {};
                json_t *h = json_object();
                r = h ? decode_words(&v, hs.h[i].value, hs.h[i].value_len) : -ENOMEM;
                if (r >= 0 &&
                    (json_array_append_new(hj, h) < 0 ||
                     json_object_set_new(h, "name",
                                         twin_json_string_lossy(hs.h[i].name, hs.h[i].name_len)) <
                             0 ||
                     json_object_set_new(h, "value", twin_json_string_lossy(v.p ? v.p : "", v.n)) <
                             0))
                        r = -ENOMEM;
                buf_done(&v);
                if (r < 0)
                        return r;
        }

        const Header *ct = headers_get(&hs, "Content-Type");
        _cleanup_free_ char *type = ct ? media_type(ct->value) : NULL;
        if (!type && !(type = strdup(default_type)))
                return -ENOMEM;
        const Header *cd = headers_get(&hs, "Content-Disposition");
        _cleanup_free_ char *filename = NULL;
        if (cd && (r = param_get(cd->value, "filename", &filename)) < 0)
                return r;
        if (!filename && ct && (r = param_get(ct->value, "name", &filename)) < 0)
                return r;

        const char *body = s + hs.body;
        size_t blen = n - hs.body;

        /* undo the transfer encoding (also for message/rfc822 sent as base64, against §6.4) */
        Buf dec = {};
        const Header *cte = headers_get(&hs, "Content-Transfer-Encoding");
        const char *data = body;
        size_t dlen = blen;
        bool multipart = startswith(type, "multipart/") != NULL;
        if (cte && !multipart) {
                if (strcasecmp(cte->value, "base64") == 0) {
                        if (buf_reserve(&dec.p, &dec.cap, blen / 4 * 3 + 4, 64) < 0)
                                return -ENOMEM;
                        dec.n = (size_t)b64_decode_into(body, blen, false, dec.p);
                        data = dec.p;
                        dlen = dec.n;
                } else if (strcasecmp(cte->value, "quoted-printable") == 0) {
                        if (qp_decode(body, blen, &dec) < 0) {
                                buf_done(&dec);
                                return -ENOMEM;
                        }
                        data = dec.p;
                        dlen = dec.n;
                }
        }

        json_t *children = NULL;
        bool opaque = true;
        if (multipart && depth < GMAIL_MIME_DEPTH_MAX) {
                _cleanup_free_ char *bd = NULL;
                if ((r = param_get(ct->value, "boundary", &bd)) < 0) {
                        buf_done(&dec);
                        return r;
                }
                if (bd && bd[0] && strlen(bd) <= 200) {
                        _cleanup_free_ Range *rs =
                                malloc((GMAIL_MIME_PARTS_MAX + 1) * sizeof(Range));
                        if (!rs) {
                                buf_done(&dec);
                                return -ENOMEM;
                        }
                        size_t k = multipart_split(body, blen, bd, rs, GMAIL_MIME_PARTS_MAX);
                        if (k > 0 && c->parts + k <= GMAIL_MIME_PARTS_MAX) {
                                c->parts += k; /* reserved: a child's own count comes later */
                                children = json_array();
                                if (!children) {
                                        buf_done(&dec);
                                        return -ENOMEM;
                                }
                                const char *dt = streq(type, "multipart/digest") ? "message/rfc822"
                                                                                 : "text/plain";
                                for (size_t j = 0; j < k; j++) {
                                        char cid[512];
                                        json_t *ch = NULL;
                                        c->parts--;
                                        r = child_id(id, j, cid);
                                        if (r >= 0)
                                                r = parse_entity(c, body + rs[j].b,
                                                                 rs[j].e - rs[j].b, cid, depth + 1,
                                                                 false, dt, &ch);
                                        if (r >= 0 && json_array_append_new(children, ch) < 0)
                                                r = -ENOMEM;
                                        if (r < 0) {
                                                json_decref(children);
                                                buf_done(&dec);
                                                return r;
                                        }
                                }
                                opaque = false;
                        }
                }
        } else if (streq(type, "message/rfc822") && depth < GMAIL_MIME_DEPTH_MAX &&
                   c->parts + 1 <= GMAIL_MIME_PARTS_MAX && dlen > 0) {
                /* the embedded message is this part's one child, "<id>.0" (Gmail's shape) */
                char cid[512];
                json_t *ch = NULL;
                r = child_id(id, 0, cid);
                if (r >= 0)
                        r = parse_entity(c, data, dlen, cid, depth + 1, true, "text/plain", &ch);
                if (r >= 0 && !(children = json_pack("[o]", ch)))
                        r = -ENOMEM;
                if (r < 0) {
                        buf_done(&dec);
                        return r;
                }
                opaque = false;
        }

        json_t *bj = opaque ? body_json(data, dlen) : json_pack("{s:i}", "size", 0);
        buf_done(&dec);
        /* json_object_set_new takes its value even when it fails (or is NULL) */
        if (json_object_set_new(part, "partId", json_string(id)) < 0 ||
            json_object_set_new(part, "mimeType", json_string(type)) < 0 ||
            json_object_set_new(part, "filename",
                                twin_json_string_lossy(strempty(filename),
                                                       filename ? strlen(filename) : 0)) < 0 ||
            json_object_set(part, "headers", hj) < 0 || json_object_set_new(part, "body", bj) < 0 ||
            (children && json_object_set_new(part, "parts", children) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(part);
        return 0;
}

int gmail_mime_parse(const char *raw, size_t len, json_t **ret_payload)
{
        Ctx c = {};
        json_t *p = NULL;
        int r = parse_entity(&c, raw ? raw : "", raw ? len : 0, "", 0, true, "text/plain", &p);
        if (r < 0)
                return r;
        *ret_payload = p;
        return 0;
}

const char *gmail_mime_header(const json_t *part, const char *name)
{
        json_t *hs = json_object_get(part, "headers"), *h;
        size_t i;
        json_array_foreach (hs, i, h) {
                const char *n = json_get_str(h, "name");
                if (n && strcasecmp(n, name) == 0)
                        return json_get_str(h, "value");
        }
        return NULL;
}

/* ---------------------------------------------------------------- text and snippet */

/* Decodes the part's body.data and converts it from its charset: UTF-8 appended to out. */
static int part_text(const json_t *part, Buf *out)
{
        const char *d = json_get_str(json_object_get(part, "body"), "data");
        if (!d)
                return 0;
        _cleanup_free_ char *bytes = NULL, *cs = NULL;
        size_t n = 0;
        int r = gmail_base64_decode(d, strlen(d), &bytes, &n);
        if (r == -EINVAL)
                return 0;
        if (r < 0)
                return r;
        const char *ct = gmail_mime_header(part, "Content-Type");
        if (ct && (r = param_get(ct, "charset", &cs)) < 0)
                return r;
        return charset_append(out, cs, bytes, n);
}

/* One HTML character reference at s (n bytes, s[0] == '&'): its code point, length. */
static uint32_t html_entity(const char *s, size_t n, size_t *ret_len)
{
        static const struct {
                const char *name;
                uint32_t cp;
        } named[] = {
                {"amp;", '&'},      {"lt;", '<'},        {"gt;", '>'},       {"quot;", '"'},
                {"apos;", '\''},    {"nbsp;", ' '},      {"#39;", '\''},     {"copy;", 0xA9},
                {"reg;", 0xAE},     {"hellip;", 0x2026}, {"mdash;", 0x2014}, {"ndash;", 0x2013},
                {"rsquo;", 0x2019}, {"lsquo;", 0x2018},  {"rdquo;", 0x201D}, {"ldquo;", 0x201C},
                {"euro;", 0x20AC},
        };
        for (size_t i = 0; i < ELEMENTSOF(named); i++) {
                size_t l = strlen(named[i].name);
                if (n - 1 >= l && strncasecmp(s + 1, named[i].name, l) == 0) {
                        *ret_len = l + 1;
                        return named[i].cp;
                }
        }
        if (n > 3 && s[1] == '#') {
                bool hex = s[2] == 'x' || s[2] == 'X';
                size_t i = hex ? 3 : 2;
                uint32_t v = 0;
                size_t digits = 0;
                for (; i < n && digits < 8; i++, digits++) {
                        int d = hex ? hexval((unsigned char)s[i])
                                    : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
                        if (d < 0)
                                break;
                        v = v * (hex ? 16 : 10) + (uint32_t)d;
                }
                if (digits > 0 && i < n && s[i] == ';') {
                        *ret_len = i + 1;
                        return v == 0 || v > 0x10FFFF ? 0xFFFD : v;
                }
        }
        *ret_len = 1;
        return '&';
}

/* HTML (n bytes) as text onto out: tags dropped (<style>/<script> with their content), a
 * block tag a space, character references decoded. Linear; never backtracks. */
static int html_text(const char *s, size_t n, Buf *out)
{
        for (size_t i = 0; i < n;) {
                if (s[i] == '<') {
                        const char *skip_to = NULL;
                        if (n - i > 7 && strncasecmp(s + i, "<style", 6) == 0)
                                skip_to = "</style";
                        else if (n - i > 8 && strncasecmp(s + i, "<script", 7) == 0)
                                skip_to = "</script";
                        else if (n - i > 4 && strncmp(s + i, "<!--", 4) == 0)
                                skip_to = "-->";
                        if (skip_to) {
                                size_t l = strlen(skip_to), j = i + 1;
                                while (j + l <= n && strncasecmp(s + j, skip_to, l) != 0)
                                        j++;
                                i = j + l <= n ? j + l : n;
                        }
                        const char *gt = i < n ? memchr(s + i, '>', n - i) : NULL;
                        i = gt ? (size_t)(gt - s) + 1 : n;
                        if (buf_putc(out, ' ') < 0)
                                return -ENOMEM;
                        continue;
                }
                if (s[i] == '&') {
                        size_t l;
                        uint32_t cp = html_entity(s + i, n - i, &l);
                        if (buf_put_cp(out, cp) < 0)
                                return -ENOMEM;
                        i += l;
                        continue;
                }
                if (buf_putc(out, s[i++]) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The first leaf of type (depth first), or NULL. Attachments (a filename) are not text. */
static const json_t *find_leaf(const json_t *part, const char *type)
{
        const json_t *parts = json_object_get(part, "parts");
        if (json_array_size(parts) > 0) {
                for (size_t i = 0; i < json_array_size(parts); i++) {
                        const json_t *f = find_leaf(json_array_get(parts, i), type);
                        if (f)
                                return f;
                }
                return NULL;
        }
        const char *t = json_get_str(part, "mimeType"), *fn = json_get_str(part, "filename");
        return t && streq(t, type) && (!fn || !fn[0]) ? part : NULL;
}

/* out's text as valid UTF-8 with every whitespace run one space, trimmed: a new string. */
static char *squeeze(const Buf *in, size_t max_chars)
{
        _cleanup_free_ char *m = NULL;
        size_t mn;
        if (utf8_mend(in->p ? in->p : "", in->n, &m, &mn) < 0)
                return NULL;
        char *o = malloc(mn + 1);
        if (!o)
                return NULL;
        size_t k = 0, chars = 0;
        bool space = false;
        for (size_t i = 0; i < mn;) {
                unsigned char ch = (unsigned char)m[i];
                bool ws = ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\f' ||
                          ch == '\v';
                /* U+00A0 (no-break space) is whitespace too */
                if (ch == 0xC2 && i + 1 < mn && (unsigned char)m[i + 1] == 0xA0) {
                        ws = true;
                        i++;
                }
                if (ws) {
                        space = k > 0;
                        i++;
                        continue;
                }
                if (chars >= max_chars)
                        break;
                if (space) {
                        o[k++] = ' ';
                        chars++;
                        space = false;
                        if (chars >= max_chars)
                                break;
                }
                size_t l = utf8_char_len(m + i, mn - i);
                if (l == 0)
                        l = 1;
                memcpy(o + k, m + i, l);
                k += l;
                i += l;
                chars++;
        }
        o[k] = 0;
        return o;
}

char *gmail_mime_snippet(const json_t *payload)
{
        Buf t = {};
        const json_t *p = find_leaf(payload, "text/plain");
        int r = 0;
        if (p)
                r = part_text(p, &t);
        else if ((p = find_leaf(payload, "text/html"))) {
                Buf h = {};
                r = part_text(p, &h);
                if (r >= 0)
                        r = html_text(h.p ? h.p : "", h.n, &t);
                buf_done(&h);
        }
        char *s = r < 0 ? NULL : squeeze(&t, SNIPPET_CHARS);
        buf_done(&t);
        return s;
}

static int collect_text(const json_t *part, Buf *out)
{
        const json_t *parts = json_object_get(part, "parts");
        int r;
        if (json_array_size(parts) > 0) {
                for (size_t i = 0; i < json_array_size(parts); i++)
                        if ((r = collect_text(json_array_get(parts, i), out)) < 0)
                                return r;
                return 0;
        }
        const char *t = json_get_str(part, "mimeType"), *fn = json_get_str(part, "filename");
        if (!t || (fn && fn[0]))
                return 0;
        if (streq(t, "text/plain")) {
                if ((r = part_text(part, out)) < 0)
                        return r;
        } else if (streq(t, "text/html")) {
                Buf h = {};
                r = part_text(part, &h);
                if (r >= 0)
                        r = html_text(h.p ? h.p : "", h.n, out);
                buf_done(&h);
                if (r < 0)
                        return r;
        } else
                return 0;
        return buf_putc(out, ' ');
}

char *gmail_mime_text(const json_t *payload)
{
        Buf t = {};
        int r = collect_text(payload, &t);
        char *s = r < 0 ? NULL : squeeze(&t, SIZE_MAX);
        buf_done(&t);
        return s;
}

/* ---------------------------------------------------------------- building */

static bool is_ascii_printable(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7F)
                        return false;
        return true;
}

/*
 * Header text (UTF-8, n bytes) with CR, LF and NUL made spaces (a header is one logical
 * line; this is what keeps a caller's value from injecting another header). New string.
 */
static char *header_clean(const char *s, size_t n)
{
        _cleanup_free_ char *m = NULL;
        size_t mn;
        if (utf8_mend(s, n, &m, &mn) < 0)
                return NULL;
        for (size_t i = 0; i < mn; i++)
                if (m[i] == '\r' || m[i] == '\n' || m[i] == 0 || m[i] == '\t')
                        m[i] = ' ';
        return TAKE_PTR(m);
}

/*
 * Appends s (UTF-8, n bytes) as RFC 2047 B encoded words "=?UTF-8?B?…?=", each at most 75
 * characters and cut at character boundaries, separated by CRLF SP (a fold), to out. col
 * is the current line's length; updated.
 */
static int put_encoded_words(Buf *out, const char *s, size_t n, size_t *col)
{
        /* 75 - strlen("=?UTF-8?B??=") = 63 base64 characters: 45 bytes of text at most */
        const size_t max_bytes = 45;
        for (size_t i = 0; i < n;) {
                size_t take = 0;
                while (i + take < n) {
                        size_t l = utf8_char_len(s + i + take, n - i - take);
                        if (l == 0)
                                l = 1;
                        if (take + l > max_bytes)
                                break;
                        take += l;
                }
                _cleanup_free_ char *b = b64_encode(s + i, take, b64_std, true);
                if (!b)
                        return -ENOMEM;
                size_t wl = 12 + strlen(b);
                if (i > 0 || (*col + wl > 78 && *col > 1)) {
                        if (buf_puts(out, "\r\n ") < 0)
                                return -ENOMEM;
                        *col = 1;
                }
                if (buf_puts(out, "=?UTF-8?B?") < 0 || buf_puts(out, b) < 0 ||
                    buf_puts(out, "?=") < 0)
                        return -ENOMEM;
                *col += wl;
                i += take;
        }
        return 0;
}

/*
 * Appends unstructured header text v (UTF-8, n bytes) at column *col (updated): as it is
 * when it is printable ASCII without "=?", folded before a run of spaces once past 78
 * columns; as encoded words when it is not, or when some run of spaces and its word would
 * not fit a 998-octet line.
 */
static int put_unstructured(Buf *out, const char *v, size_t n, size_t *col)
{
        bool plain = is_ascii_printable(v, n) && !memmem(v, n, "=?", 2);
        for (size_t i = 0; plain && i < n;) {
                size_t e = i;
                while (e < n && v[e] == ' ')
                        e++;
                while (e < n && v[e] != ' ')
                        e++;
                if (e - i > LINE_MAX_OCTETS - 40)
                        plain = false;
                i = e;
        }
        if (!plain)
                return put_encoded_words(out, v, n, col);
        for (size_t i = 0; i < n;) {
                size_t w = i;
                while (w < n && v[w] == ' ')
                        w++;
                size_t e = w;
                while (e < n && v[e] != ' ')
                        e++;
                /* the spaces before the word and the word; a fold keeps the spaces */
                if (*col + (e - i) > 78 && *col > 1 && w > i) {
                        if (buf_puts(out, "\r\n") < 0)
                                return -ENOMEM;
                        *col = 0;
                }
                if (buf_put(out, v + i, e - i) < 0)
                        return -ENOMEM;
                *col += e - i;
                i = e;
        }
        return 0;
}

/*
 * One address "Name <addr>" or "addr" (UTF-8, n bytes) onto out at column *col, after a
 * comma unless first: a non-ASCII display name as encoded words (RFC 2047 §5 (3)) before
 * the ASCII <addr>; anything else as unstructured text (folded, or all encoded words when
 * it cannot be written otherwise — an address no mailer could use, but one that survives).
 */
static int put_address(Buf *out, const char *a, size_t n, size_t *col, bool first)
{
        while (n > 0 && a[0] == ' ')
                a++, n--;
        while (n > 0 && a[n - 1] == ' ')
                n--;
        if (n == 0)
                return 0;
        if (!first) {
                if (buf_putc(out, ',') < 0)
                        return -ENOMEM;
                (*col)++;
        }
        const char *lt = NULL;
        for (size_t i = n; i > 0; i--)
                if (a[i - 1] == '<') {
                        lt = a + i - 1;
                        break;
                }
        size_t al = lt ? n - (size_t)(lt - a) : 0;
        if (!lt || is_ascii_printable(a, (size_t)(lt - a)) || al > 200 ||
            !is_ascii_printable(lt, al)) {
                _cleanup_free_ char *t = malloc(n + 2);
                if (!t)
                        return -ENOMEM;
                t[0] = ' ';
                memcpy(t + 1, a, n);
                return put_unstructured(out, first ? t + 1 : t, first ? n : n + 1, col);
        }
        if (!first) {
                if (buf_puts(out, "\r\n ") < 0)
                        return -ENOMEM;
                *col = 1;
        }
        const char *nb = a, *ne = lt;
        while (ne > nb && ne[-1] == ' ')
                ne--;
        if (ne - nb >= 2 && nb[0] == '"' && ne[-1] == '"')
                nb++, ne--;
        int r = put_encoded_words(out, nb, (size_t)(ne - nb), col);
        if (r < 0)
                return r;
        if (buf_puts(out, *col + 1 + al > 78 ? "\r\n " : " ") < 0 || buf_put(out, lt, al) < 0)
                return -ENOMEM;
        *col = (*col + 1 + al > 78 ? 1 : *col + 1) + al;
        return 0;
}

/* An address header from a string ("a, B <b>") or an array of strings; nothing when empty. */
static int put_addresses(Buf *out, const char *name, const json_t *v)
{
        Buf list = {};
        int r = 0;
        if (json_is_string(v))
                r = buf_puts(&list, json_string_value(v));
        else if (json_is_array(v)) {
                size_t i;
                json_t *e;
                json_array_foreach (v, i, e) {
                        if (!json_is_string(e) || !json_string_length(e))
                                continue;
                        if ((list.n && buf_puts(&list, ", ") < 0) ||
                            buf_puts(&list, json_string_value(e)) < 0)
                                r = -ENOMEM;
                }
        }
        if (r < 0 || list.n == 0) {
                buf_done(&list);
                return r;
        }
        _cleanup_free_ char *clean = header_clean(list.p, list.n);
        buf_done(&list);
        if (!clean)
                return -ENOMEM;
        if (buf_printf(out, "%s: ", name) < 0)
                return -ENOMEM;
        size_t col = strlen(name) + 2;
        /* split at commas outside quotes and angle brackets */
        bool quoted = false, first = true;
        int angle = 0;
        size_t b = 0, n = strlen(clean);
        for (size_t i = 0; i <= n; i++) {
                char ch = i < n ? clean[i] : ',';
                if (ch == '"')
                        quoted = !quoted;
                else if (ch == '<' && !quoted)
                        angle++;
                else if (ch == '>' && !quoted && angle > 0)
                        angle--;
                else if (ch == ',' && ((!quoted && angle == 0) || i == n)) {
                        size_t k = b;
                        while (k < i && clean[k] == ' ')
                                k++;
                        if (k < i) {
                                if ((r = put_address(out, clean + b, i - b, &col, first)) < 0)
                                        return r;
                                first = false;
                        }
                        b = i + 1;
                }
        }
        return buf_puts(out, "\r\n");
}

static int put_header_text(Buf *out, const char *name, const char *v)
{
        _cleanup_free_ char *clean = header_clean(v, strlen(v));
        if (!clean || buf_printf(out, "%s: ", name) < 0)
                return -ENOMEM;
        const char *t = clean;
        while (*t == ' ')
                t++;
        size_t tl = strlen(t);
        while (tl > 0 && t[tl - 1] == ' ')
                clean[(size_t)(t - clean) + --tl] = 0;
        size_t col = strlen(name) + 2;
        int r = put_unstructured(out, t, strlen(t), &col);
        return r < 0 ? r : buf_puts(out, "\r\n");
}

/* "<id>" for a message id with or without its angle brackets; NULL when not usable. */
static char *msgid_bracket(const char *v)
{
        while (*v == ' ')
                v++;
        size_t n = strlen(v);
        while (n > 0 && v[n - 1] == ' ')
                n--;
        if (n > 0 && v[0] == '<')
                v++, n--;
        if (n > 0 && v[n - 1] == '>')
                n--;
        if (n == 0 || n > 900)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)v[i] <= ' ' || (unsigned char)v[i] >= 0x7F || v[i] == '<' ||
                    v[i] == '>')
                        return NULL;
        char *o = malloc(n + 3);
        if (o) {
                o[0] = '<';
                memcpy(o + 1, v, n);
                o[n + 1] = '>';
                o[n + 2] = 0;
        }
        return o;
}

static int put_msgids(Buf *out, const char *name, const json_t *v)
{
        json_t *one = json_is_string(v) ? json_pack("[O]", v) : NULL;
        const json_t *arr = one ? one : v;
        size_t col = 0, i;
        json_t *e;
        int r = 0;
        bool any = false;
        json_array_foreach (arr, i, e) {
                if (!json_is_string(e))
                        continue;
                /* a string may hold several ids separated by spaces */
                _cleanup_free_ char *copy = strdup(json_string_value(e));
                if (!copy) {
                        r = -ENOMEM;
                        break;
                }
                char *save = NULL;
                for (char *t = strtok_r(copy, " \t\r\n,", &save); t;
                     t = strtok_r(NULL, " \t\r\n,", &save)) {
                        _cleanup_free_ char *b = msgid_bracket(t);
                        if (!b)
                                continue;
                        if (!any) {
                                if (buf_printf(out, "%s:", name) < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                                col = strlen(name) + 1;
                                any = true;
                        } else if (col + strlen(b) + 1 > 78) {
                                if (buf_puts(out, "\r\n") < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                                col = 0;
                        }
                        if (buf_putc(out, ' ') < 0 || buf_puts(out, b) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        col += strlen(b) + 1;
                }
                if (r < 0)
                        break;
        }
        json_decref(one);
        if (r >= 0 && any)
                r = buf_puts(out, "\r\n");
        return r;
}

/* days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil) */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
        y -= m <= 2;
        const int64_t era = (y >= 0 ? y : y - 399) / 400;
        const unsigned yoe = (unsigned)(y - era * 400);
        const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + (int64_t)doe - 719468;
}

/* "YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)" (RFC 3339 §5.6) into seconds since the epoch. */
static int parse_date_spec(const json_t *v, int64_t *ret)
{
        if (json_is_integer(v)) {
                *ret = json_integer_value(v);
                return 0;
        }
        if (json_is_real(v)) {
                *ret = (int64_t)json_real_value(v);
                return 0;
        }
        const char *s = json_string_value(v);
        if (!s)
                return -EINVAL;
        unsigned y, mo, d, h, mi, se;
        int k = 0;
        if (sscanf(s, "%4u-%2u-%2u%*1[Tt ]%2u:%2u:%2u%n", &y, &mo, &d, &h, &mi, &se, &k) != 6 ||
            k != 19 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) {
                /* all digits: seconds */
                char *e;
                errno = 0;
                long long t = strtoll(s, &e, 10);
                if (*s && !*e && errno == 0) {
                        *ret = t;
                        return 0;
                }
                return -EINVAL;
        }
        const char *p = s + 19;
        if (*p == '.')
                for (p++; *p >= '0' && *p <= '9'; p++)
                        ;
        int64_t off = 0;
        if (*p == 'Z' || *p == 'z')
                p++;
        else if (*p == '+' || *p == '-') {
                unsigned oh, om;
                int kk = 0;
                if (sscanf(p + 1, "%2u:%2u%n", &oh, &om, &kk) != 2 || kk != 5 || oh > 23 || om > 59)
                        return -EINVAL;
                off = (int64_t)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
                p += 6;
        } else
                return -EINVAL;
        if (*p)
                return -EINVAL;
        *ret = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
        return 0;
}

static int put_date(Buf *out, int64_t t)
{
        static const char *const wd[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
        static const char *const mn[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
        if (t < 0 || t > INT64_C(253402300799)) /* RFC 5322 years have 4 digits */
                t = 0;
        int64_t days = t / 86400, secs = t % 86400;
        /* civil_from_days */
        int64_t z = days + 719468, era = z / 146097;
        unsigned doe = (unsigned)(z - era * 146097);
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        int64_t y = (int64_t)yoe + era * 400;
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        unsigned mp = (5 * doy + 2) / 153;
        unsigned d = doy - (153 * mp + 2) / 5 + 1;
        unsigned m = mp < 10 ? mp + 3 : mp - 9;
        y += m <= 2;
        return buf_printf(out, "Date: %s, %02u %s %04lld %02d:%02d:%02d +0000\r\n", wd[days % 7], d,
                          mn[m - 1], (long long)y, (int)(secs / 3600), (int)(secs / 60 % 60),
                          (int)(secs % 60));
}

/* Whether text (n bytes) may go as 7bit: ASCII, no NUL, no bare CR, lines <= 998, and no
 * "=_" (which every boundary we make contains, so no body line can be taken for one). */
static bool fits_7bit(const char *s, size_t n)
{
        size_t run = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == 0 || c >= 0x80 || (c == '\r' && (i + 1 >= n || s[i + 1] != '\n')))
                        return false;
                if (c == '=' && i + 1 < n && s[i + 1] == '_')
                        return false;
                if (c == '\n')
                        run = 0;
                else if (c != '\r' && ++run > LINE_MAX_OCTETS)
                        return false;
        }
        return true;
}

/* Text (n bytes; LF or CRLF line ends) as 7bit lines ending CRLF. */
static int put_7bit(Buf *out, const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\r')
                        continue;
                if (s[i] == '\n' ? buf_puts(out, "\r\n") : buf_putc(out, s[i]))
                        return -ENOMEM;
        }
        return 0;
}

/* Text as quoted-printable (RFC 2045 §6.7): LF or CRLF are hard line breaks, lines <= 76. */
static int put_qp(Buf *out, const char *s, size_t n)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t col = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                bool eol = c == '\n' || (c == '\r' && i + 1 < n && s[i + 1] == '\n');
                if (eol) {
                        if (c == '\r')
                                i++;
                        if (buf_puts(out, "\r\n") < 0)
                                return -ENOMEM;
                        col = 0;
                        continue;
                }
                char enc[3];
                size_t k;
                /* a space or tab at a line end must be encoded (§6.7 (3)) */
                bool at_end = i + 1 == n || s[i + 1] == '\n' || s[i + 1] == '\r';
                if ((c >= 33 && c <= 126 && c != '=') || ((c == ' ' || c == '\t') && !at_end)) {
                        enc[0] = (char)c;
                        k = 1;
                } else {
                        enc[0] = '=';
                        enc[1] = hex[c >> 4];
                        enc[2] = hex[c & 15];
                        k = 3;
                }
                if (col + k > QP_LINE - 1) {
                        if (buf_puts(out, "=\r\n") < 0)
                                return -ENOMEM;
                        col = 0;
                }
                if (buf_put(out, enc, k) < 0)
                        return -ENOMEM;
                col += k;
        }
        return 0;
}

/* A text/plain or text/html entity: its headers and body. */
static int put_text_part(Buf *out, const char *type, const char *s, size_t n)
{
        bool seven = fits_7bit(s, n);
        if (buf_printf(
                    out,
                    "Content-Type: %s; charset=\"UTF-8\"\r\nContent-Transfer-Encoding: %s\r\n\r\n",
                    type, seven ? "7bit" : "quoted-printable") < 0)
                return -ENOMEM;
        return seven ? put_7bit(out, s, n) : put_qp(out, s, n);
}

/* A parameter (RFC 2045 §5.1) name=value: quoted when printable ASCII and short, else
 * RFC 2231 extended continuations name*0*=utf-8''%xx;… of at most ~70 octets a line. */
static int put_param(Buf *out, const char *name, const char *v)
{
        size_t n = strlen(v);
        /* plain only when a reader cannot take it for encoded words (param_get decodes them) */
        if (is_ascii_printable(v, n) && n <= 200 && !strstr(v, "=?")) {
                if (buf_printf(out, ";\r\n %s=\"", name) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        if (((v[i] == '"' || v[i] == '\\') && buf_putc(out, '\\') < 0) ||
                            buf_putc(out, v[i]) < 0)
                                return -ENOMEM;
                return buf_putc(out, '"');
        }
        static const char hex[] = "0123456789ABCDEF";
        size_t seg = 0, enc = 0;
        for (size_t i = 0; i < n; i++)
                enc += isalnum((unsigned char)v[i]) || strchr("!#$&+-.^_`|~", v[i]) ? 1 : 3;
        for (size_t i = 0; i < n || seg == 0; seg++) {
                /* one segment: "name*=" (RFC 2231 §4), understood more widely than "*0*" */
                int r = enc <= 200 ? buf_printf(out, ";\r\n %s*=UTF-8''", name)
                                   : buf_printf(out, ";\r\n %s*%zu*=%s", name, seg,
                                                seg == 0 ? "UTF-8''" : "");
                if (r < 0)
                        return -ENOMEM;
                size_t col = 0;
                while (i < n && col < 200) {
                        unsigned char c = (unsigned char)v[i];
                        /* attribute-char (RFC 2231 §7) */
                        if (isalnum(c) || strchr("!#$&+-.^_`|~", c)) {
                                if (buf_putc(out, (char)c) < 0)
                                        return -ENOMEM;
                                col++;
                        } else {
                                char e[3] = {'%', hex[c >> 4], hex[c & 15]};
                                if (buf_put(out, e, 3) < 0)
                                        return -ENOMEM;
                                col += 3;
                        }
                        i++;
                }
                if (i >= n)
                        break;
        }
        return 0;
}

/* Whether t looks like "type/subtype" of token characters (RFC 2045 §5.1). */
static bool media_type_ok(const char *t)
{
        const char *slash = strchr(t, '/');
        if (!slash || slash == t || !slash[1] || strlen(t) > 200)
                return false;
        for (const char *p = t; *p; p++)
                if (p != slash && is_tspecial_or_space((unsigned char)*p))
                        return false;
        return true;
}

static int put_attachment(Buf *out, const char *bd, const json_t *a)
{
        const char *fn = json_get_str(a, "filename"), *mt = json_get_str(a, "mimeType"),
                   *data = json_get_str(a, "data");
        _cleanup_free_ char *bytes = NULL, *clean = NULL;
        size_t n = 0;
        int r = 0;
        if (data && (r = gmail_base64_decode(data, strlen(data), &bytes, &n)) < 0)
                return r;
        if (!data && json_object_get(a, "data") && !json_is_null(json_object_get(a, "data")))
                return -EINVAL;
        if (fn && !(clean = header_clean(fn, strlen(fn))))
                return -ENOMEM;
        if (buf_printf(out, "--%s\r\nContent-Type: %s", bd,
                       mt && media_type_ok(mt) ? mt : "application/octet-stream") < 0)
                return -ENOMEM;
        if (clean && clean[0] && (r = put_param(out, "name", clean)) < 0)
                return r;
        if (buf_puts(out, "\r\nContent-Disposition: attachment") < 0)
                return -ENOMEM;
        if (clean && clean[0] && (r = put_param(out, "filename", clean)) < 0)
                return r;
        if (buf_puts(out, "\r\nContent-Transfer-Encoding: base64\r\n\r\n") < 0)
                return -ENOMEM;
        _cleanup_free_ char *b = b64_encode(bytes ? bytes : "", n, b64_std, true);
        if (!b)
                return -ENOMEM;
        size_t bl = strlen(b);
        for (size_t i = 0; i < bl; i += 76)
                if (buf_put(out, b + i, bl - i < 76 ? bl - i : 76) < 0 || buf_puts(out, "\r\n") < 0)
                        return -ENOMEM;
        return 0;
}

/* 64 bits of FNV-1a over the spec's text: boundaries that differ between messages yet are
 * the same for the same message (tapes replay byte for byte). */
static uint64_t fnv1a(const char *s, uint64_t h)
{
        for (; s && *s; s++)
                h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
        return h;
}

int gmail_mime_build(const json_t *spec, char **ret, size_t *ret_len)
{
        Buf out = {};
        int r;
        const char *text = json_get_str(spec, "text"), *html = json_get_str(spec, "html");
        const json_t *atts = json_object_get(spec, "attachments");
        size_t natt = json_is_array(atts) ? json_array_size(atts) : 0;
        _cleanup_free_ char *dumped = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
        if (!dumped)
                return -ENOMEM;
        uint64_t h = fnv1a(dumped, UINT64_C(0xcbf29ce484222325));
        char mixed[64], alt[64];
        snprintf(mixed, sizeof(mixed), "=_pome_mixed_%016llx", (unsigned long long)h);
        snprintf(alt, sizeof(alt), "=_pome_alt_%016llx", (unsigned long long)h);

        /* headers */
        if ((r = put_addresses(&out, "From", json_object_get(spec, "from"))) < 0 ||
            (r = put_addresses(&out, "To", json_object_get(spec, "to"))) < 0 ||
            (r = put_addresses(&out, "Cc", json_object_get(spec, "cc"))) < 0 ||
            (r = put_addresses(&out, "Bcc", json_object_get(spec, "bcc"))) < 0)
                goto fail;
        const char *subject = json_get_str(spec, "subject");
        if (subject && (r = put_header_text(&out, "Subject", subject)) < 0)
                goto fail;
        const json_t *date = json_object_get(spec, "date");
        if (date && !json_is_null(date)) {
                int64_t t;
                if ((r = parse_date_spec(date, &t)) < 0 || (r = put_date(&out, t)) < 0)
                        goto fail;
        }
        const char *mid = json_get_str(spec, "messageId");
        if (mid) {
                _cleanup_free_ char *b = msgid_bracket(mid);
                if (b && (r = buf_printf(&out, "Message-ID: %s\r\n", b)) < 0)
                        goto fail;
        }
        if ((r = put_msgids(&out, "In-Reply-To", json_object_get(spec, "inReplyTo"))) < 0 ||
            (r = put_msgids(&out, "References", json_object_get(spec, "references"))) < 0)
                goto fail;
        if ((r = buf_puts(&out, "MIME-Version: 1.0\r\n")) < 0)
                goto fail;

        bool has_text = text != NULL, has_html = html != NULL;
        if (natt > 0 &&
            (r = buf_printf(&out, "Content-Type: multipart/mixed; boundary=\"%s\"\r\n\r\n",
                            mixed)) < 0)
                goto fail;
        if (natt == 0 || has_text || has_html) {
                if (natt > 0 && (r = buf_printf(&out, "--%s\r\n", mixed)) < 0)
                        goto fail;
                if (has_text && has_html) {
                        if ((r = buf_printf(&out,
                                            "Content-Type: multipart/alternative; "
                                            "boundary=\"%s\"\r\n\r\n--%s\r\n",
                                            alt, alt)) < 0 ||
                            (r = put_text_part(&out, "text/plain", text, strlen(text))) < 0 ||
                            (r = buf_printf(&out, "\r\n--%s\r\n", alt)) < 0 ||
                            (r = put_text_part(&out, "text/html", html, strlen(html))) < 0 ||
                            (r = buf_printf(&out, "\r\n--%s--\r\n", alt)) < 0)
                                goto fail;
                } else {
                        const char *t = has_html ? html : strempty(text);
                        if ((r = put_text_part(&out, has_html ? "text/html" : "text/plain", t,
                                               strlen(t))) < 0 ||
                            (r = buf_puts(&out, "\r\n")) < 0)
                                goto fail;
                }
        }
        for (size_t i = 0; i < natt; i++)
                if ((r = put_attachment(&out, mixed, json_array_get(atts, i))) < 0)
                        goto fail;
        if (natt > 0 && (r = buf_printf(&out, "--%s--\r\n", mixed)) < 0)
                goto fail;
        *ret = out.p ? out.p : strdup("");
        if (!*ret)
                return -ENOMEM;
        *ret_len = out.n;
        return 0;
fail:
        buf_done(&out);
        return r;
}
