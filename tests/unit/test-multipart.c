/* SPDX-License-Identifier: MIT */
/*
 * The multipart/form-data parser (pods/twin/multipart.c): the bodies real clients send
 * (curl, the form-data package behind @slack/web-api) and, table-driven, every framing two
 * readers could read differently, which must be refused.
 */
#include "common/json-util.h"
#include "pods/twin/engine.h"
#include "tests/unit/check.h"

#define CT "multipart/form-data; boundary=XyZ"

static void test_boundary(void)
{
        char b[TWIN_MULTIPART_BOUNDARY_MAX + 1];
        CHECK(twin_multipart_boundary("multipart/form-data; boundary=abc", b) == 0 &&
              streq(b, "abc"));
        CHECK(twin_multipart_boundary("Multipart/Form-Data;charset=utf-8;BOUNDARY=\"a b:c\"", b) ==
                      0 &&
              streq(b, "a b:c"));
        /* form-data's own: dashes and digits */
        CHECK(twin_multipart_boundary(
                      "multipart/form-data; boundary=--------------------------123456789012", b) ==
              0);
        const char *bad[] = {
                "multipart/form-data",
                "multipart/mixed; boundary=abc",
                "application/x-www-form-urlencoded; boundary=abc",
                "multipart/form-data; boundary=",
                "multipart/form-data; boundary=\"\"",
                "multipart/form-data; boundary=\"ends with space \"",
                "multipart/form-data; boundary=a; boundary=b",
                "multipart/form-data; boundary=\"unterminated",
                "multipart/form-data; boundary=\"bad\\\"char\"",
                ("multipart/form-data; boundary="
                 "12345678901234567890123456789012345678901234567890123456789012345678901"),
                "multipart/form-data; boundary=abc junk",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = twin_multipart_boundary(bad[i], b);
                if (r != -EINVAL)
                        fprintf(stderr, "boundary accepted: %s\n", bad[i]);
                CHECK(r == -EINVAL);
        }
}

static void test_good(void)
{
        static const char body[] = "--XyZ\r\n"
                                   "Content-Disposition: form-data; name=\"channels\"\r\n"
                                   "\r\n"
                                   "C1,C2\r\n"
                                   "--XyZ\r\n"
                                   "content-disposition: form-data; name=\"file\"; "
                                   "filename=\"a \\\"q\\\".bin\"\r\n"
                                   "Content-Type: application/octet-stream\r\n"
                                   "Content-Transfer-Encoding: binary\r\n"
                                   "X-Other: ignored\r\n"
                                   "\r\n"
                                   "\x00\r\n--xyz\xff\r\n"
                                   "--XyZ\r\n"
                                   "Content-Disposition: form-data; name=empty\r\n"
                                   "\r\n"
                                   "\r\n"
                                   "--XyZ--\r\n";
        TwinMultipart m = {};
        const char *why = NULL;
        CHECK_OK(twin_multipart_parse(CT, body, sizeof(body) - 1, &m, &why));
        CHECK(m.n == 3);
        if (m.n != 3)
                return;
        CHECK(streq(m.parts[0].name, "channels") && !m.parts[0].filename);
        CHECK(m.parts[0].len == 5 && memcmp(m.parts[0].data, "C1,C2", 5) == 0);
        CHECK(streq(m.parts[1].name, "file") && streq(m.parts[1].filename, "a \"q\".bin"));
        CHECK(streq(m.parts[1].content_type, "application/octet-stream"));
        /* a NUL, a CRLF and a line that is not the boundary (case counts) are the part's bytes */
        CHECK(m.parts[1].len == 9 && memcmp(m.parts[1].data, "\x00\r\n--xyz\xff", 9) == 0);
        CHECK(streq(m.parts[2].name, "empty") && m.parts[2].len == 0);
        twin_multipart_done(&m);
        CHECK(m.n == 0 && !m.parts);

        /* no epilogue CRLF, no parts at all */
        CHECK_OK(twin_multipart_parse(CT, "--XyZ--", 7, &m, NULL));
        CHECK(m.n == 0);
        twin_multipart_done(&m);
}

static void test_refused(void)
{
        static const struct {
                const char *what, *body;
        } cases[] = {
                {"preamble", "junk\r\n--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n"
                             "--XyZ--"},
                {"no closing boundary",
                 "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n"},
                {"truncated after a delimiter", "--XyZ"},
                {"epilogue", "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n"
                             "--XyZ--\r\nmore"},
                {"transport padding",
                 "--XyZ  \r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--XyZ--"},
                {"bare LF after boundary",
                 "--XyZ\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--XyZ--"},
                {"bare LF in headers",
                 "--XyZ\r\nContent-Disposition: form-data; name=a\n\r\nx\r\n--XyZ--"},
                {"bare CR in headers",
                 "--XyZ\r\nContent-Disposition: form-data; name=a\rX: y\r\n\r\nx\r\n--XyZ--"},
                {"folded header",
                 "--XyZ\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\nx\r\n--XyZ--"},
                {"headers never end", "--XyZ\r\nContent-Disposition: form-data; name=a\r\n"},
                {"no disposition", "--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--"},
                {"not form-data",
                 "--XyZ\r\nContent-Disposition: attachment; name=a\r\n\r\nx\r\n--XyZ--"},
                {"no name", "--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--"},
                {"empty name",
                 "--XyZ\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nx\r\n--XyZ--"},
                {"two names", "--XyZ\r\nContent-Disposition: form-data; name=a; name=b\r\n\r\nx\r\n"
                              "--XyZ--"},
                {"two dispositions", "--XyZ\r\nContent-Disposition: form-data; name=a\r\n"
                                     "Content-Disposition: form-data; name=b\r\n\r\nx\r\n--XyZ--"},
                {"two content types", "--XyZ\r\nContent-Disposition: form-data; name=a\r\n"
                                      "Content-Type: a/b\r\nContent-Type: c/d\r\n\r\nx\r\n--XyZ--"},
                {"filename*", "--XyZ\r\nContent-Disposition: form-data; name=a; "
                              "filename*=UTF-8''x\r\n\r\nx\r\n--XyZ--"},
                {"base64 transfer encoding", "--XyZ\r\nContent-Disposition: form-data; name=a\r\n"
                                             "Content-Transfer-Encoding: base64\r\n\r\neA==\r\n"
                                             "--XyZ--"},
                {"unterminated quote",
                 "--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--XyZ--"},
                {"name not UTF-8",
                 "--XyZ\r\nContent-Disposition: form-data; name=\"\xc0\xae\"\r\n\r\nx\r\n--XyZ--"},
                {"header without colon",
                 "--XyZ\r\nContent-Disposition form-data; name=a\r\n\r\nx\r\n--XyZ--"},
                {"a longer boundary inside", "--XyZ\r\nContent-Disposition: form-data; name=a\r\n"
                                             "\r\nx\r\n--XyZW\r\n--XyZ--"},
                {"empty body", ""},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                TwinMultipart m = {};
                const char *why = NULL;
                int r = twin_multipart_parse(CT, cases[i].body, strlen(cases[i].body), &m, &why);
                if (r != -EBADMSG)
                        fprintf(stderr, "accepted: %s\n", cases[i].what);
                CHECK(r == -EBADMSG && why && m.n == 0);
                twin_multipart_done(&m);
        }

        /* a NUL in a header line is refused too (lengths, not C strings, frame the body) */
        static const char nul[] = "--XyZ\r\nContent-Disposition: form-data; name=a\0b\r\n\r\nx\r\n"
                                  "--XyZ--";
        TwinMultipart m = {};
        CHECK(twin_multipart_parse(CT, nul, sizeof(nul) - 1, &m, NULL) == -EBADMSG);

        /* limits: parts, header lines */
        _cleanup_free_ char *many = NULL;
        size_t cap = 64 * 1024, o = 0;
        many = malloc(cap);
        for (int i = 0; i <= TWIN_MULTIPART_MAX_PARTS; i++)
                o += (size_t)snprintf(
                        many + o, cap - o,
                        "--XyZ\r\nContent-Disposition: form-data; name=p%d\r\n\r\nx\r\n", i);
        o += (size_t)snprintf(many + o, cap - o, "--XyZ--");
        CHECK(twin_multipart_parse(CT, many, o, &m, NULL) == -EBADMSG);
        o = (size_t)snprintf(many, cap, "--XyZ\r\nContent-Disposition: form-data; name=a\r\n");
        for (int i = 0; i < TWIN_MULTIPART_MAX_HEADERS; i++)
                o += (size_t)snprintf(many + o, cap - o, "X-H%d: v\r\n", i);
        o += (size_t)snprintf(many + o, cap - o, "\r\nx\r\n--XyZ--");
        CHECK(twin_multipart_parse(CT, many, o, &m, NULL) == -EBADMSG);
        CHECK(twin_multipart_parse("text/plain", "--XyZ--", 7, &m, NULL) == -EBADMSG);
}

int main(void)
{
        test_boundary();
        test_good();
        test_refused();
        return check_finish();
}
