/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the Gmail twin's search query parser and matcher (pods/gmail/query.c).
 * Invariants, on arbitrary bytes: a query either parses or is refused with a sentence that
 * starts "Invalid query"; a parsed query matches a fixed message without crashing, the same
 * way twice, and its negation "-(q)" (when it parses) matches the other way.
 */
#include "common/json-util.h"
#include "pods/gmail/mime.h"
#include "pods/gmail/query.h"
#include "tests/fuzz/fuzz-assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *message, *labels;

static void setup(void)
{
        static const char raw[] = "From: Ann <ann@example.com>\r\n"
                                  "To: bob@example.com\r\n"
                                  "Subject: =?UTF-8?Q?Caf=C3=A9?= receipt\r\n"
                                  "Content-Type: multipart/mixed; boundary=b\r\n\r\n"
                                  "--b\r\nContent-Type: text/html\r\n\r\n<p>Hello &amp; bye</p>\r\n"
                                  "--b\r\nContent-Disposition: attachment; filename=a.pdf\r\n\r\n"
                                  "x\r\n--b--\r\n";
        json_t *payload = NULL;
        ASSERT(gmail_mime_parse(raw, sizeof(raw) - 1, &payload) == 0);
        message = json_pack("{s:s, s:[s, s, s], s:s, s:i, s:o}", "id", "m", "labelIds", "INBOX",
                            "UNREAD", "Label_1", "internalDate", "1765000000000", "sizeEstimate",
                            2048, "payload", payload);
        labels = json_pack("[{s:s, s:s, s:s}]", "id", "Label_1", "name", "Follow Up", "type",
                           "user");
        ASSERT(message && labels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (!message)
                setup();
        _cleanup_free_ char *q = strndup((const char *)data, size);
        if (!q)
                return 0;
        GmailQuery *g = NULL;
        char err[256] = "";
        int r = gmail_query_parse(q, &g, err, sizeof(err));
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                ASSERT(r == -EINVAL && !g && startswith(err, "Invalid query"));
                return 0;
        }
        ASSERT(r == 0 && g);
        bool m = gmail_query_match(g, message, labels, 1765000000);
        ASSERT(m == gmail_query_match(g, message, labels, 1765000000));
        (void)gmail_query_includes_spam_trash(g);
        gmail_query_free(g);

        size_t l = strlen(q);
        _cleanup_free_ char *neg = malloc(l + 4);
        if (!neg)
                return 0;
        memcpy(neg, "-(", 2);
        memcpy(neg + 2, q, l);
        memcpy(neg + 2 + l, ")", 2);
        if (gmail_query_parse(neg, &g, NULL, 0) == 0) {
                ASSERT(gmail_query_match(g, message, labels, 1765000000) == !m);
                gmail_query_free(g);
        }
        return 0;
}
