/* SPDX-License-Identifier: MIT */
/*
 * Gmail's search operators (pods/gmail/query.c), table-driven: each query against a small
 * mailbox of world messages (payloads from the real MIME parser), and the queries Gmail
 * refuses.
 */
#include "common/json-util.h"
#include "pods/gmail/mime.h"
#include "pods/gmail/query.h"
#include "tests/unit/check.h"

#define DAY 86400
#define NOW INT64_C(1765000000) /* 2025-12-06T05:46:40Z */

static json_t *labels;
static json_t *box[4];

/* A world message: raw MIME parsed as the twin does, with labels, date and size. */
static json_t *message(const char *id, const char *raw, const char *label_ids, int64_t date,
                       int64_t size)
{
        json_t *payload = NULL;
        CHECK(gmail_mime_parse(raw, strlen(raw), &payload) == 0);
        char *snippet = gmail_mime_snippet(payload);
        json_error_t e;
        json_t *ids = json_loads(label_ids, 0, &e);
        char ms[32];
        snprintf(ms, sizeof(ms), "%lld", (long long)date * 1000);
        json_t *m = json_pack("{s:s, s:s, s:o, s:s, s:I, s:s, s:o}", "id", id, "threadId", id,
                              "labelIds", ids, "internalDate", ms, "sizeEstimate", (json_int_t)size,
                              "snippet", snippet, "payload", payload);
        free(snippet);
        CHECK(m != NULL);
        return m;
}

static void setup(void)
{
        labels = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s},"
                           " {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}]",
                           "id", "INBOX", "name", "INBOX", "type", "system", "id", "UNREAD", "name",
                           "UNREAD", "type", "system", "id", "Label_1", "name", "Follow Up", "type",
                           "user", "id", "Label_2", "name", "Work/Projects", "type", "user", "id",
                           "TRASH", "name", "TRASH", "type", "system", "id", "SENT", "name", "SENT",
                           "type", "system");
        /* 0: an unread invoice from Stripe with a PDF, in the inbox, 2 days old */
        box[0] = message(
                "m0",
                "From: Stripe Billing <billing@stripe.com>\r\n"
                "To: Alice Example <alice@example.com>\r\n"
                "Cc: finance@example.com\r\n"
                "Subject: Your receipt #1234 from Acme\r\n"
                "Content-Type: multipart/mixed; boundary=b\r\n\r\n"
                "--b\r\nContent-Type: text/plain\r\n\r\nThanks for your payment of $20.00.\r\n"
                "--b\r\nContent-Type: application/pdf\r\n"
                "Content-Disposition: attachment; filename=\"Receipt-1234.pdf\"\r\n\r\n%PDF\r\n"
                "--b--\r\n",
                "[\"INBOX\", \"UNREAD\", \"IMPORTANT\", \"CATEGORY_UPDATES\"]", NOW - 2 * DAY,
                40000);
        /* 1: a read, starred message labelled Follow Up, 40 days old, HTML only */
        box[1] = message("m1",
                         "From: bob@partner.io\r\n"
                         "To: alice@example.com\r\n"
                         "Subject: =?UTF-8?Q?Caf=C3=A9_meeting?= notes\r\n"
                         "Content-Type: text/html\r\n\r\n"
                         "<p>The <b>quarterly</b> roadmap, see "
                         "https://docs.google.com/document/d/1</p>\r\n",
                         "[\"INBOX\", \"STARRED\", \"Label_1\"]", NOW - 40 * DAY, 3000);
        /* 2: sent by the user, Work/Projects, 2 years old, big */
        box[2] = message("m2",
                         "From: alice@example.com\r\n"
                         "To: carol@client.org\r\n"
                         "Bcc: boss@example.com\r\n"
                         "Subject: Re: Proposal\r\n\r\n"
                         "Attached is the proposal. Follow-up next week.\r\n",
                         "[\"SENT\", \"Label_2\"]", NOW - 730 * DAY, 5 * 1024 * 1024);
        /* 3: spam in the trash */
        box[3] = message("m3",
                         "From: \"Prize Dept\" <win@spam.example>\r\n"
                         "Subject: You won!!!\r\n\r\nClaim your prize now\r\n",
                         "[\"TRASH\"]", NOW - 1 * DAY, 500);
}

/* Which of the mailbox's messages q matches, as a string of their indexes ("02"). */
static bool matches(const char *q, const char *want)
{
        GmailQuery *g = NULL;
        char err[256] = "";
        int r = gmail_query_parse(q, &g, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "query \"%s\" refused: %d %s\n", q, r, err);
                return false;
        }
        char got[8] = "";
        size_t k = 0;
        for (size_t i = 0; i < ELEMENTSOF(box); i++)
                if (gmail_query_match(g, box[i], labels, NOW))
                        got[k++] = (char)('0' + i);
        got[k] = 0;
        gmail_query_free(g);
        if (!streq(got, want))
                fprintf(stderr, "query \"%s\": matched \"%s\", want \"%s\"\n", q, got, want);
        return streq(got, want);
}

static void test_operators(void)
{
        static const struct {
                const char *q, *want;
        } cases[] = {
                {"", "0123"},
                {"   ", "0123"},
                /* words: case-insensitive, at word starts, anywhere searchable */
                {"receipt", "0"},
                {"RECEIPT", "0"},
                {"+receipt", "0"},
                {"eceipt", ""},
                {"meet", "1"},         /* a word start: "meeting" */
                {"café", "1"},         /* an encoded-word subject */
                {"CAFÉ", "1"},         /* non-ASCII folds too */
                {"quarterly", "1"},    /* HTML body text */
                {"payment", "0"},      /* text body */
                {"receipt-1234", "0"}, /* attachment file name */
                {"stripe", "0"},       /* From name and address */
                {"@stripe.com", "0"},
                {"prize", "3"},
                /* address operators */
                {"from:billing@stripe.com", "0"},
                {"from:stripe", "0"},
                {"from:Billing", "0"},
                {"from:bob", "1"},
                {"from:partner.io", "1"},
                {"from:me", "2"},
                {"to:alice", "01"},
                {"to:carol@client.org", "2"},
                {"cc:finance", "0"},
                {"bcc:boss", "2"},
                {"to:me", "013"},
                {"deliveredto:nobody", ""},
                /* subject */
                {"subject:receipt", "0"},
                {"subject:thanks", ""},
                {"subject:\"meeting notes\"", "1"},
                {"subject:(café notes)", "1"},
                {"subject:(café proposal)", ""},
                {"subject:{café proposal}", "12"},
                /* phrases */
                {"\"your receipt\"", "0"},
                {"\"receipt your\"", ""},
                {"\"payment   of $20\"", "0"},
                /* labels, by id or name; '-' for spaces and '/' */
                {"label:follow-up", "1"},
                {"label:\"Follow Up\"", "1"},
                {"label:FOLLOW_UP", "1"},
                {"label:label_1", "1"},
                {"label:work-projects", "2"},
                {"label:work/projects", "2"},
                {"label:inbox", "01"},
                {"label:nope", ""},
                /* in: */
                {"in:inbox", "01"},
                {"in:sent", "2"},
                {"in:trash", "3"},
                {"in:spam", ""},
                {"in:anywhere", "0123"},
                {"in:starred", "1"},
                {"in:important", "0"},
                {"in:drafts", ""},
                {"in:archive", "2"},
                {"in:follow-up", "1"},
                /* is: */
                {"is:unread", "0"},
                {"is:read", "123"},
                {"is:starred", "1"},
                {"is:important", "0"},
                {"is:snoozed", ""},
                /* has: */
                {"has:attachment", "0"},
                {"has:userlabels", "12"},
                {"has:nouserlabels", "03"},
                {"has:document", "1"},
                {"has:youtube", ""},
                {"category:updates", "0"},
                {"category:social", ""},
                /* filename: */
                {"filename:pdf", "0"},
                {"filename:receipt-1234.pdf", "0"},
                {"filename:doc", ""},
                /* dates: after is inclusive, before exclusive; three spellings */
                {"after:2025/12/01", "03"},
                {"after:2025-12-01", "03"},
                {"newer:2025/12/01", "03"},
                {"before:2025/12/01", "12"},
                {"older:2025/12/01", "12"},
                {"after:1764000000", "03"},
                {"after:2024/01/01 before:2025/12/01", "1"},
                {"older_than:1y", "2"},
                {"older_than:30d", "12"},
                {"newer_than:3d", "03"},
                {"newer_than:2m", "013"},
                {"older_than:1m", "12"},
                {"NEWER_THAN:3D", "03"},
                /* sizes */
                {"larger:10K", "02"},
                {"larger:1M", "2"},
                {"smaller:1000", "3"},
                {"smaller:5k", "13"},
                {"size:4000000", "2"},
                {"larger:5000000", "2"},
                /* negation */
                {"-is:unread", "123"},
                {"-in:inbox", "23"},
                {"-receipt", "123"},
                {"-label:follow-up -in:trash", "02"},
                {"-(is:unread OR is:starred)", "23"},
                {"-{is:unread is:starred}", "23"},
                {"-\"your receipt\"", "123"},
                /* OR, |, braces, and their precedence (OR binds tighter than AND) */
                {"is:unread OR is:starred", "01"},
                {"is:unread | is:starred", "01"},
                {"is:unread|is:starred", "01"},
                {"{is:unread is:starred}", "01"},
                {"from:stripe OR from:bob OR from:me", "012"},
                {"in:inbox is:unread OR is:starred", "01"},
                {"is:unread OR is:starred in:inbox", "01"},
                {"is:unread OR in:sent from:alice", "2"},
                {"or", "2"}, /* lowercase: a word ("client.org") */
                {"{}", "0123"},
                /* parentheses and AND */
                {"(is:unread OR is:starred) from:bob", "1"},
                {"((((from:bob))))", "1"},
                {"from:bob AND is:starred", "1"},
                {"in:inbox (receipt OR roadmap)", "01"},
                {"in:inbox -(receipt OR roadmap)", ""},
                {"()", "0123"},
                /* words that only look like operators */
                {"re:", "2"},
                {"proposal.", "2"},
                {"roposal", ""},
                {"http://docs.google.com", ""},
                {"docs.google.com", "1"},
                {"follow-up", "2"},
                {"from: bob", "1"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                CHECK(matches(cases[i].q, cases[i].want));
}

static void test_spam_trash(void)
{
        static const struct {
                const char *q;
                bool want;
        } cases[] = {
                {"", false},           {"in:trash", true},       {"in:spam", true},
                {"in:anywhere", true}, {"label:trash", true},    {"label:SPAM", true},
                {"-in:trash", false},  {"in:inbox", false},      {"a OR (in:trash b)", true},
                {"--in:trash", true},  {"subject:trash", false},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                GmailQuery *g = NULL;
                char err[128];
                CHECK(gmail_query_parse(cases[i].q, &g, err, sizeof(err)) == 0);
                if (gmail_query_includes_spam_trash(g) != cases[i].want)
                        fprintf(stderr, "includes_spam_trash(\"%s\") != %d\n", cases[i].q,
                                cases[i].want);
                CHECK(gmail_query_includes_spam_trash(g) == cases[i].want);
                gmail_query_free(g);
        }
        CHECK(!gmail_query_includes_spam_trash(NULL));
}

static void test_invalid(void)
{
        static const struct {
                const char *q, *msg;
        } cases[] = {
                {"(a b", "unbalanced parentheses"},
                {"a b)", "unbalanced parentheses"},
                {")", "unbalanced parentheses"},
                {"{a b", "unbalanced braces"},
                {"a }", "unbalanced braces"},
                {"\"open phrase", "unterminated quoted phrase"},
                {"OR a", "OR needs a term"},
                {"a OR", "OR needs a term"},
                {"a OR OR b", "OR needs a term"},
                {"after:yesterday", "is not a date"},
                {"before:2025/13/01", "is not a date"},
                {"after:2025/1/1/1", "is not a date"},
                {"after:2025-01/01", "is not a date"},
                {"older_than:3w", "is not an age"},
                {"newer_than:d", "is not an age"},
                {"larger:lots", "is not a size"},
                {"smaller:10T", "is not a size"},
                {"from:", "needs a value"},
                {"(from:)", "needs a value"},
                {"subject:(a", "unbalanced parentheses"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                GmailQuery *g = NULL;
                char err[256] = "";
                int r = gmail_query_parse(cases[i].q, &g, err, sizeof(err));
                if (r != -EINVAL || !strstr(err, cases[i].msg) || !startswith(err, "Invalid query"))
                        fprintf(stderr, "query \"%s\": %d \"%s\", want -EINVAL \"%s\"\n",
                                cases[i].q, r, err, cases[i].msg);
                CHECK(r == -EINVAL && strstr(err, cases[i].msg));
                CHECK(g == NULL);
        }
        /* bounds: nesting and length; errlen 0 is allowed */
        char deep[200];
        memset(deep, '(', 100);
        memset(deep + 100, ')', 100);
        GmailQuery *g = NULL;
        CHECK(gmail_query_parse("((((((((((((((((((((a))))))))))))))))))))", &g, NULL, 0) == 0);
        gmail_query_free(g);
        char *q = calloc(1, 201);
        memcpy(q, deep, 200);
        CHECK(gmail_query_parse(q, &g, NULL, 0) == -EINVAL);
        free(q);
        q = malloc(10000);
        memset(q, 'a', 9999);
        q[9999] = 0;
        CHECK(gmail_query_parse(q, &g, NULL, 0) == -EINVAL);
        free(q);
        CHECK(gmail_query_parse(NULL, &g, NULL, 0) == 0 &&
              gmail_query_match(g, box[0], labels, NOW));
        gmail_query_free(g);
        CHECK(gmail_query_free(NULL) == NULL);
}

int main(void)
{
        setup();
        test_operators();
        test_spam_trash();
        test_invalid();
        for (size_t i = 0; i < ELEMENTSOF(box); i++)
                json_decref(box[i]);
        json_decref(labels);
        return check_finish();
}
