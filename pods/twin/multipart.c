/* SPDX-License-Identifier: MIT */
/*
 * multipart/form-data bodies (RFC 7578 over RFC 2046 §5.1), read strictly: what two
 * readers could frame differently is refused, never guessed at. The parts' bytes stay in
 * the caller's body; only names, file names and media types are copied out.
 */
#include <strings.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/twin/engine.h"

#define MAX_HEADER_LINE 1024 /* bytes of one part header line, CRLF excluded */

void twin_multipart_done(TwinMultipart *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n; i++) {
                free(m->parts[i].name);
                free(m->parts[i].filename);
                free(m->parts[i].content_type);
        }
        free(m->parts);
        *m = (TwinMultipart){};
}

/* RFC 9110 §5.6.2 tchar. */
static bool tchar(unsigned char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* RFC 2046 §5.1.1 bchars (space only inside). */
static bool bchar(unsigned char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c && strchr("'()+_,-./:=? ", c));
}

static const char *skip_ows(const char *p)
{
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/*
 * One parameter "; name=value" at *pp (value a token or a quoted-string with quoted-pairs):
 * the lower-cased name into name (namelen bytes), the value into a new string *ret. Advances
 * *pp. 1 with a parameter, 0 at the end of the string, -EBADMSG, -ENOMEM.
 */
static int next_param(const char **pp, char *name, size_t namelen, char **ret)
{
        const char *p = skip_ows(*pp);
        if (!*p)
                return 0;
        if (*p != ';')
                return -EBADMSG;
        p = skip_ows(p + 1);
        size_t n = 0;
        while (tchar((unsigned char)p[n]))
                n++;
        if (n == 0 || n >= namelen)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                name[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a' : p[i]);
        name[n] = 0;
        p += n;
        if (*p != '=')
                return -EBADMSG;
        p++;
        _cleanup_free_ char *v = malloc(strlen(p) + 1);
        if (!v)
                return -ENOMEM;
        size_t o = 0;
        if (*p == '"') {
                for (p++; *p != '"'; p++) {
                        if (!*p)
                                return -EBADMSG; /* unterminated */
                        if (*p == '\\') {
                                p++;
                                if (!*p)
                                        return -EBADMSG;
                        }
                        v[o++] = *p;
                }
                p++;
        } else {
                while (tchar((unsigned char)*p))
                        v[o++] = *p++;
                if (o == 0)
                        return -EBADMSG;
        }
        v[o] = 0;
        *pp = p;
        *ret = TAKE_PTR(v);
        return 1;
}

int twin_multipart_boundary(const char *content_type,
                            char ret[static TWIN_MULTIPART_BOUNDARY_MAX + 1])
{
        static const char type[] = "multipart/form-data";
        if (!content_type || strncasecmp(content_type, type, sizeof(type) - 1) != 0)
                return -EINVAL;
        const char *p = content_type + sizeof(type) - 1;
        bool found = false;
        for (;;) {
                char name[32];
                _cleanup_free_ char *v = NULL;
                int r = next_param(&p, name, sizeof(name), &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return -EINVAL;
                if (r == 0)
                        break;
                if (!streq(name, "boundary"))
                        continue;
                size_t n = strlen(v);
                /* one boundary, 1..70 bchars, not ending in a space (RFC 2046 §5.1.1) */
                if (found || n == 0 || n > TWIN_MULTIPART_BOUNDARY_MAX || v[n - 1] == ' ')
                        return -EINVAL;
                for (size_t i = 0; i < n; i++)
                        if (!bchar((unsigned char)v[i]))
                                return -EINVAL;
                memcpy(ret, v, n + 1);
                found = true;
        }
        return found ? 0 : -EINVAL;
}

/* A copy of s into *ret when it is UTF-8 without control bytes but HT: 0, -EBADMSG, -ENOMEM. */
static int text_dup(const char *s, char **ret)
{
        size_t n = strlen(s);
        if (!utf8_valid(s, n))
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
                        return -EBADMSG;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

/* Content-Disposition: form-data; name="…"[; filename="…"] into part. */
static int parse_disposition(const char *v, TwinPart *part, const char **why)
{
        static const char fd[] = "form-data";
        if (strncasecmp(v, fd, sizeof(fd) - 1) != 0 ||
            (v[sizeof(fd) - 1] && v[sizeof(fd) - 1] != ';' && v[sizeof(fd) - 1] != ' ' &&
             v[sizeof(fd) - 1] != '\t')) {
                *why = "a part's Content-Disposition is not form-data";
                return -EBADMSG;
        }
        const char *p = v + sizeof(fd) - 1;
        for (;;) {
                char name[32];
                _cleanup_free_ char *val = NULL;
                int r = next_param(&p, name, sizeof(name), &val);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        *why = "a part's Content-Disposition parameters are malformed";
                        return r;
                }
                if (r == 0)
                        break;
                char **slot = streq(name, "name")       ? &part->name
                              : streq(name, "filename") ? &part->filename
                                                        : NULL;
                if (streq(name, "filename*")) {
                        /* RFC 7578 §4.2: not to be used; beside filename it would be a second
                         * answer to the same question */
                        *why = "filename* is not accepted in multipart/form-data";
                        return -EBADMSG;
                }
                if (!slot)
                        continue;
                if (*slot) {
                        *why = "a part's Content-Disposition names a parameter twice";
                        return -EBADMSG;
                }
                r = text_dup(val, slot);
                if (r < 0) {
                        *why = "a part's name or filename is not text";
                        return r;
                }
        }
        if (!part->name || !part->name[0]) {
                *why = "a part has no name";
                return -EBADMSG;
        }
        return 0;
}

/*
 * The header block of one part, from p up to and including its empty line (end bounds the
 * body). Writes *ret_next past the block. 0, -EBADMSG (with *why), -ENOMEM.
 */
static int parse_headers(const char *p, const char *end, TwinPart *part, const char **ret_next,
                         const char **why)
{
        bool disposition = false, ctype = false, cte = false;
        for (size_t lines = 0;; lines++) {
                const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
                if (!eol) {
                        *why = "a part's headers do not end";
                        return -EBADMSG;
                }
                size_t n = (size_t)(eol - p);
                if (n == 0) {
                        *ret_next = eol + 2;
                        break;
                }
                if (lines >= TWIN_MULTIPART_MAX_HEADERS || n > MAX_HEADER_LINE) {
                        *why = "a part's headers are too large";
                        return -EBADMSG;
                }
                char line[MAX_HEADER_LINE + 1];
                memcpy(line, p, n);
                line[n] = 0;
                /* bare CR or LF, NUL, controls: one reader's line is not another's */
                for (size_t i = 0; i < n; i++)
                        if (((unsigned char)line[i] < 0x20 && line[i] != '\t') || line[i] == 0x7f) {
                                *why = "a part's headers hold control bytes";
                                return -EBADMSG;
                        }
                size_t nl = 0;
                while (tchar((unsigned char)line[nl]))
                        nl++;
                /* no name (a folded continuation line starts with a space) or no colon */
                if (nl == 0 || line[nl] != ':') {
                        *why = "a part's header line is malformed";
                        return -EBADMSG;
                }
                line[nl] = 0;
                char *value = (char *)skip_ows(line + nl + 1);
                size_t vl = strlen(value);
                while (vl > 0 && (value[vl - 1] == ' ' || value[vl - 1] == '\t'))
                        value[--vl] = 0;
                int r = 0;
                if (strcasecmp(line, "content-disposition") == 0) {
                        if (disposition) {
                                *why = "a part has two Content-Disposition headers";
                                return -EBADMSG;
                        }
                        disposition = true;
                        r = parse_disposition(value, part, why);
                } else if (strcasecmp(line, "content-type") == 0) {
                        if (ctype) {
                                *why = "a part has two Content-Type headers";
                                return -EBADMSG;
                        }
                        ctype = true;
                        r = text_dup(value, &part->content_type);
                        if (r == -EBADMSG)
                                *why = "a part's Content-Type is not text";
                } else if (strcasecmp(line, "content-transfer-encoding") == 0) {
                        /* RFC 7578 §4.7: senders do not encode; decoding is not ours to guess */
                        if (cte ||
                            (strcasecmp(value, "binary") != 0 && strcasecmp(value, "8bit") != 0 &&
                             strcasecmp(value, "7bit") != 0)) {
                                *why = "a part has a Content-Transfer-Encoding other than binary";
                                return -EBADMSG;
                        }
                        cte = true;
                }
                if (r < 0)
                        return r;
                p = eol + 2;
        }
        if (!disposition) {
                *why = "a part has no Content-Disposition";
                return -EBADMSG;
        }
        return 0;
}

int twin_multipart_parse(const char *content_type, const char *body, size_t len, TwinMultipart *ret,
                         const char **ret_why)
{
        const char *why_local;
        const char **why = ret_why ? ret_why : &why_local;
        char boundary[TWIN_MULTIPART_BOUNDARY_MAX + 1];
        *why = NULL;
        if (twin_multipart_boundary(content_type, boundary) < 0) {
                *why = "the Content-Type is not multipart/form-data with one valid boundary";
                return -EBADMSG;
        }
        /* "\r\n--" boundary: the delimiter; the body's first one comes without the CRLF */
        char delim[TWIN_MULTIPART_BOUNDARY_MAX + 5];
        size_t dl = (size_t)snprintf(delim, sizeof(delim), "\r\n--%s", boundary);
        const char *p = body ? body : "", *end = p + len;
        if (len < dl - 2 || memcmp(p, delim + 2, dl - 2) != 0) {
                *why = "the body does not start with its boundary";
                return -EBADMSG;
        }
        p += dl - 2;
        _cleanup_(twin_multipart_done) TwinMultipart m = {};
        for (;;) {
                /* after a delimiter: "--" closes, CRLF opens a part, anything else (transport
                 * padding, a longer boundary that merely starts with ours) is refused */
                if (end - p >= 2 && p[0] == '-' && p[1] == '-') {
                        p += 2;
                        if (p == end || (end - p == 2 && p[0] == '\r' && p[1] == '\n'))
                                break;
                        *why = "bytes follow the closing boundary";
                        return -EBADMSG;
                }
                if (end - p < 2 || p[0] != '\r' || p[1] != '\n') {
                        *why = p == end ? "the body ends without its closing boundary"
                                        : "a boundary line does not end with CRLF";
                        return -EBADMSG;
                }
                p += 2;
                if (m.n == TWIN_MULTIPART_MAX_PARTS) {
                        *why = "the body has too many parts";
                        return -EBADMSG;
                }
                TwinPart *parts = realloc(m.parts, (m.n + 1) * sizeof(TwinPart));
                if (!parts)
                        return -ENOMEM;
                m.parts = parts;
                TwinPart *part = &m.parts[m.n++];
                *part = (TwinPart){};
                int r = parse_headers(p, end, part, &p, why);
                if (r < 0)
                        return r;
                const char *stop = memmem(p, (size_t)(end - p), delim, dl);
                if (!stop) {
                        *why = "the body ends without its closing boundary";
                        return -EBADMSG;
                }
                part->data = p;
                part->len = (size_t)(stop - p);
                p = stop + dl;
        }
        *ret = m;
        m = (TwinMultipart){};
        return 0;
}
