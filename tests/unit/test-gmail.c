/* SPDX-License-Identifier: MIT */
/*
 * The Gmail twin (pods/gmail): hosted Pome's seeds loading unmodified, each REST family
 * (profile, messages, uploads, threads, labels, drafts, history, filters), Google's error
 * envelope, the seed's faults, the 13 MCP tools, and hostile bodies (the envelope, the world
 * unchanged).
 */
#include <string.h>

#include "common/token.h"
#include "pods/gmail/mime.h"
#include "pods/twin/kind.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

#define U "/gmail/v1/users/me"

static Twin *gmail(const char *seed)
{
        return twin_test_new("gmail", seed);
}

/* A GET of path (query may be NULL) into rp; its status. */
static int get(Twin *t, TwinReply *rp, const char *path, const char *query)
{
        twin_test_req(t, rp, "GET", path, query, NULL, NULL);
        return rp->status;
}

/* A JSON request into rp; its status. */
static int send_json(Twin *t, TwinReply *rp, const char *method, const char *path, const char *body)
{
        twin_test_req(t, rp, method, path, NULL, body ? "application/json" : NULL, body);
        return rp->status;
}

/* An MCP tool's action called directly with args (JSON text) into rp; its status. */
static int tool(Twin *t, TwinReply *rp, const char *name, const char *args)
{
        _cleanup_json_ json_t *a = json_loads(args, 0, NULL);
        CHECK(a);
        twin_reply_done(rp);
        CHECK_OK(twin_call_action(t, name, a, TWIN_TEST_BASE("gmail"), rp));
        return rp->status;
}

/* Whether body is Google's error envelope at status with this google.rpc status name. */
static bool envelope(TwinReply *rp, int status, const char *name)
{
        json_t *b = rp->body;
        return rp->status == status && jpi(b, "/error/code") == status &&
               streq_ptr(jps(b, "/error/status"), name) && jps(b, "/error/message") &&
               streq_ptr(jps(b, "/error/errors/0/domain"), "global") &&
               jps(b, "/error/errors/0/reason");
}

/* base64url of s without padding, as a JSON body {"raw": …} wants it. */
static char *raw_of(const char *s)
{
        char *b = twin_base64(s, strlen(s));
        for (char *p = b; p && *p; p++)
                *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
        char *eq = b ? strchr(b, '=') : NULL;
        if (eq)
                *eq = 0;
        return b;
}

static json_t *msg(Twin *t, const char *id)
{
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(twin_world(t), "messages"), i, m)
                if (streq_ptr(json_get_str(m, "id"), id))
                        return m;
        return NULL;
}

static bool has_label(Twin *t, const char *id, const char *label)
{
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get(msg(t, id), "labelIds"), i, v)
                if (streq_ptr(json_string_value(v), label))
                        return true;
        return false;
}

static void test_seeds(void)
{
        static const char *const shipped[] = {"default", "inbox-triage", "parity",
                                              "support-escalation", "throttled"};
        for (size_t i = 0; i < ELEMENTSOF(shipped); i++) {
                Twin *t = gmail(shipped[i]);
                CHECK(streq_ptr(jps(twin_world(t), "/emailAddress"), "pome-agent@pome-twin.test"));
                twin_free(t);
        }

        /* the default world: hosted Pome's, messages parsed, attachment bytes moved out */
        Twin *t = gmail("default");
        json_t *w = twin_world(t);
        CHECK(json_array_size(json_object_get(w, "messages")) == 5); /* 4 + the draft's */
        CHECK(has_label(t, "msg_support", "INBOX") && has_label(t, "msg_support", "UNREAD"));
        CHECK(has_label(t, "msg_build", "Label_build")); /* "Build" by name */
        CHECK(streq_ptr(jps(msg(t, "msg_support"), "/internalDate"), "1784462400000"));
        CHECK(streq_ptr(jps(msg(t, "msg_support"), "/threadId"), "thread_support"));
        CHECK(strstr(jps(msg(t, "msg_support"), "/snippet"), "Our production export"));
        CHECK(streq_ptr(jps(w, "/attachments/0/messageId"), "msg_build"));
        CHECK(streq_ptr(jps(w, "/drafts/0/id"), "draft_ack"));
        CHECK(streq_ptr(jps(w, "/drafts/0/messageId"), "draft_ack_message"));
        CHECK(has_label(t, "draft_ack_message", "DRAFT"));
        CHECK(streq_ptr(jps(w, "/labels/0/id"), "INBOX"));
        twin_free(t);

        /* a task's seed for several twins: the gmail part */
        _cleanup_json_ json_t *one = twin_test_seed("gmail", "support-escalation");
        _cleanup_json_ json_t *multi =
                json_pack("{s:O, s:{s:[]}}", "gmail", one, "github", "repositories");
        t = twin_test_from(&twin_kind_gmail, multi);
        CHECK(msg(t, "msg_support"));
        twin_free(t);

        /* refusals say where */
        static const struct {
                const char *seed, *says;
        } bad[] = {
                {"{}", "primaryMailbox"},
                {"{\"definitely\":\"not-a-seed\"}", "definitely"},
                {"{\"primaryMailbox\":{\"email\":\"nope\"}}", "primaryMailbox.email"},
                {"{\"primaryMailbox\":{\"email\":\"a@b.co\",\"messages\":[{\"labels\":[\"X\"]}]}}",
                 "messages[0].labels[0]"},
                {"{\"primaryMailbox\":{\"email\":\"a@b.co\",\"messages\":[{\"date\":\"y\"}]}}",
                 "messages[0].date"},
                {"{\"primaryMailbox\":{\"email\":\"a@b.co\",\"labels\":[{\"name\":\"A\"},"
                 "{\"name\":\"a\"}]}}",
                 "duplicate label"},
                {"{\"primaryMailbox\":{\"email\":\"a@b.co\"},\"faults\":[{\"name\":\"slow\"}]}",
                 "faults[0].name"},
                {"{\"primaryMailbox\":{\"email\":\"a@b.co\"},\"mailboxes\":[{\"email\":\"A@b.co\"}"
                 "]}",
                 "mailboxes[0]: duplicate mailbox"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_json_ json_t *s = json_loads(bad[i].seed, 0, NULL);
                char err[300] = "";
                Twin *x = NULL;
                CHECK(s && twin_new(&twin_kind_gmail, s, &x, err, sizeof(err)) == -EINVAL && !x);
                if (!strstr(err, bad[i].says)) {
                        fprintf(stderr, "seed %s: \"%s\" does not say %s\n", bad[i].seed, err,
                                bad[i].says);
                        check_failures++;
                }
        }
}

static void test_messages(void)
{
        Twin *t = gmail("default");
        TwinReply rp = {};
        CHECK(get(t, &rp, U "/profile", NULL) == 200);
        CHECK(streq_ptr(jps(rp.body, "/emailAddress"), "pome-agent@pome-twin.test"));
        CHECK(jpi(rp.body, "/messagesTotal") == 5 && jpi(rp.body, "/threadsTotal") == 4);

        /* list: newest first, drafts left out, paged */
        CHECK(get(t, &rp, U "/messages", "maxResults=2") == 200);
        CHECK(jpi(rp.body, "/resultSizeEstimate") == 4);
        CHECK(streq_ptr(jps(rp.body, "/messages/0/id"), "msg_support"));
        CHECK(json_array_size(jp(rp.body, "/messages")) == 2);
        const char *tok = jps(rp.body, "/nextPageToken");
        CHECK(tok);
        char q[64];
        snprintf(q, sizeof(q), "maxResults=2&pageToken=%s", tok ? tok : "");
        CHECK(get(t, &rp, U "/messages", q) == 200);
        CHECK(streq_ptr(jps(rp.body, "/messages/0/id"), "msg_build") &&
              !jp(rp.body, "/nextPageToken"));
        CHECK(get(t, &rp, U "/messages", "pageToken=zz") == 400 &&
              envelope(&rp, 400, "INVALID_ARGUMENT"));
        CHECK(get(t, &rp, U "/messages", "q=from%3Aalice%20is%3Aunread") == 200);
        CHECK(jpi(rp.body, "/resultSizeEstimate") == 1);
        CHECK(get(t, &rp, U "/messages", "labelIds=Label_build") == 200);
        CHECK(streq_ptr(jps(rp.body, "/messages/0/id"), "msg_build"));
        CHECK(get(t, &rp, U "/messages", "labelIds=NOPE") == 400);
        CHECK(get(t, &rp, U "/messages", "q=label%3Anosuchlabel") == 200 &&
              jpi(rp.body, "/resultSizeEstimate") == 0 && !jp(rp.body, "/messages"));

        /* get, in each format */
        CHECK(get(t, &rp, U "/messages/msg_build", NULL) == 200);
        CHECK(streq_ptr(jps(rp.body, "/payload/mimeType"), "multipart/mixed"));
        CHECK(streq_ptr(jps(rp.body, "/payload/parts/1/filename"), "build.log"));
        const char *att = jps(rp.body, "/payload/parts/1/body/attachmentId");
        CHECK(att && !jp(rp.body, "/payload/parts/1/body/data"));
        char path[128];
        snprintf(path, sizeof(path), U "/messages/msg_build/attachments/%s", att ? att : "x");
        CHECK(get(t, &rp, path, NULL) == 200);
        CHECK(streq_ptr(jps(rp.body, "/data"), "QlVJTEQgRkFJTEVEIHN0ZXA9dGVzdAo"));
        CHECK(jpi(rp.body, "/size") == 23);
        CHECK(get(t, &rp, U "/messages/msg_welcome/attachments/att_1", NULL) == 404);
        CHECK(get(t, &rp, U "/messages/msg_build", "format=minimal") == 200);
        CHECK(!jp(rp.body, "/payload") && !jp(rp.body, "/raw") && jps(rp.body, "/snippet"));
        CHECK(get(t, &rp, U "/messages/msg_build", "format=raw") == 200);
        CHECK(jps(rp.body, "/raw") && !jp(rp.body, "/payload"));
        CHECK(get(t, &rp, U "/messages/msg_build", "format=metadata&metadataHeaders=Subject") ==
              200);
        CHECK(json_array_size(jp(rp.body, "/payload/headers")) == 1);
        CHECK(streq_ptr(jps(rp.body, "/payload/headers/0/value"), "Build failed on main"));
        CHECK(get(t, &rp, U "/messages/msg_build",
                  "format=metadata&metadataHeaders=From&metadataHeaders=Subject") == 200);
        CHECK(json_array_size(jp(rp.body, "/payload/headers")) == 2);
        CHECK(get(t, &rp, U "/messages", "labelIds=INBOX&labelIds=UNREAD") == 200);
        CHECK(jpi(rp.body, "/resultSizeEstimate") == 2); /* msg_build and msg_support */
        CHECK(get(t, &rp, U "/messages/msg_build", "format=wat") == 400);
        CHECK(get(t, &rp, U "/messages/nope", NULL) == 404 && envelope(&rp, 404, "NOT_FOUND"));
        CHECK(get(t, &rp, "/gmail/v1/users/someone@else.com/messages", NULL) == 403 &&
              envelope(&rp, 403, "PERMISSION_DENIED"));

        /* modify, trash, untrash, batchModify, delete, batchDelete */
        CHECK(send_json(t, &rp, "POST", U "/messages/msg_support/modify",
                        "{\"addLabelIds\":[\"Label_follow_up\",\"STARRED\"],"
                        "\"removeLabelIds\":[\"UNREAD\"]}") == 200);
        CHECK(rp.state_mutation && streq_ptr(rp.tool, "modify_message"));
        CHECK(has_label(t, "msg_support", "Label_follow_up") &&
              !has_label(t, "msg_support", "UNREAD"));
        CHECK(send_json(t, &rp, "POST", U "/messages/msg_support/modify",
                        "{\"addLabelIds\":[\"NOPE\"]}") == 400 &&
              envelope(&rp, 400, "INVALID_ARGUMENT") && !rp.state_mutation);
        CHECK(send_json(t, &rp, "POST", U "/messages/msg_support/modify",
                        "{\"addLabelIds\":[\"DRAFT\"]}") == 400);
        CHECK(send_json(t, &rp, "POST", U "/messages/msg_welcome/trash", NULL) == 200);
        CHECK(has_label(t, "msg_welcome", "TRASH"));
        CHECK(get(t, &rp, U "/messages", NULL) == 200 && jpi(rp.body, "/resultSizeEstimate") == 3);
        CHECK(get(t, &rp, U "/messages", "includeSpamTrash=true") == 200 &&
              jpi(rp.body, "/resultSizeEstimate") == 4);
        CHECK(get(t, &rp, U "/messages", "q=in%3Atrash") == 200 &&
              jpi(rp.body, "/resultSizeEstimate") == 1);
        CHECK(send_json(t, &rp, "POST", U "/messages/msg_welcome/untrash", NULL) == 200);
        CHECK(!has_label(t, "msg_welcome", "TRASH"));
        CHECK(send_json(t, &rp, "POST", U "/messages/batchModify",
                        "{\"ids\":[\"msg_welcome\",\"msg_build\"],"
                        "\"addLabelIds\":[\"IMPORTANT\"]}") == 204);
        CHECK(has_label(t, "msg_welcome", "IMPORTANT") && has_label(t, "msg_build", "IMPORTANT"));
        CHECK(send_json(t, &rp, "POST", U "/messages/batchModify",
                        "{\"ids\":[\"msg_welcome\",\"nope\"],\"addLabelIds\":[\"STARRED\"]}") ==
              400);
        CHECK(!has_label(t, "msg_welcome", "STARRED")); /* all or nothing */
        CHECK(send_json(t, &rp, "DELETE", U "/messages/msg_welcome", NULL) == 204 && !rp.body);
        CHECK(!msg(t, "msg_welcome"));
        CHECK(send_json(t, &rp, "POST", U "/messages/batchDelete",
                        "{\"ids\":[\"msg_build_reply\"]}") == 204);
        CHECK(!msg(t, "msg_build_reply"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_send_insert_import(void)
{
        Twin *t = gmail("default");
        TwinReply rp = {};
        /* a reply: threaded by In-Reply-To, From/Date/Message-ID added, SENT */
        _cleanup_free_ char *raw = raw_of("To: alice@example.com\r\n"
                                          "Subject: Re: Production export is stuck\r\n"
                                          "In-Reply-To: <support-001@example.com>\r\n\r\n"
                                          "We are investigating.\r\n");
        char body[1024];
        snprintf(body, sizeof(body), "{\"raw\":\"%s\"}", raw);
        CHECK(send_json(t, &rp, "POST", U "/messages/send", body) == 200);
        CHECK(streq_ptr(rp.tool, "send_message") && rp.state_mutation);
        const char *id = jps(rp.body, "/id");
        CHECK(streq_ptr(jps(rp.body, "/threadId"), "thread_support"));
        CHECK(streq_ptr(jps(rp.body, "/labelIds/0"), "SENT"));
        json_t *m = msg(t, id);
        size_t i;
        json_t *h;
        bool from = false;
        json_array_foreach (jp(m, "/payload/headers"), i, h)
                from = from || (streq_ptr(json_get_str(h, "name"), "From") &&
                                streq_ptr(json_get_str(h, "value"), "pome-agent@pome-twin.test"));
        CHECK(from);

        /* no recipient: refused, nothing stored */
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        _cleanup_free_ char *lonely = raw_of("Subject: to no one\r\n\r\nx\r\n");
        snprintf(body, sizeof(body), "{\"raw\":\"%s\"}", lonely);
        CHECK(send_json(t, &rp, "POST", U "/messages/send", body) == 400);
        CHECK(envelope(&rp, 400, "INVALID_ARGUMENT") && !rp.state_mutation);
        CHECK(send_json(t, &rp, "POST", U "/messages/send", "{\"raw\":\"!!\"}") == 400);
        CHECK(send_json(t, &rp, "POST", U "/messages/send", "{}") == 400);
        CHECK(json_equal(before, twin_world(t)));

        /* googleapis' multipart upload: JSON metadata, then the message/rfc822 */
        const char *up = "--XYZ\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                         "{\"threadId\":\"thread_build\"}\r\n"
                         "--XYZ\r\nContent-Type: message/rfc822\r\n\r\n"
                         "To: ci@example.com\r\nSubject: Re: Build failed on main\r\n"
                         "Content-Type: multipart/mixed; boundary=b1\r\n\r\n"
                         "--b1\r\nContent-Type: text/plain\r\n\r\nFixed.\r\n"
                         "--b1\r\nContent-Type: text/x-diff\r\n"
                         "Content-Disposition: attachment; filename=fix.diff\r\n"
                         "Content-Transfer-Encoding: base64\r\n\r\nLS0tIGEKKysrIGIK\r\n"
                         "--b1--\r\n\r\n--XYZ--\r\n";
        twin_test_req(t, &rp, "POST", "/upload" U "/messages/send", "uploadType=multipart",
                      "multipart/related; boundary=XYZ", up);
        CHECK(rp.status == 200 && streq_ptr(rp.tool, "send_message"));
        CHECK(streq_ptr(jps(rp.body, "/threadId"), "thread_build"));
        m = msg(t, jps(rp.body, "/id"));
        CHECK(streq_ptr(jps(m, "/payload/parts/1/filename"), "fix.diff"));
        CHECK(jps(m, "/payload/parts/1/body/attachmentId"));
        twin_test_req(t, &rp, "POST", "/upload" U "/messages/send", "uploadType=multipart",
                      "multipart/related; boundary=XYZ", "garbage");
        CHECK(rp.status == 400 && envelope(&rp, 400, "INVALID_ARGUMENT"));

        /* import: incoming, INBOX + UNREAD, the Date header's time */
        twin_test_req(t, &rp, "POST", "/upload" U "/messages/import", "uploadType=media",
                      "message/rfc822",
                      "From: x@y.com\r\nTo: pome-agent@pome-twin.test\r\nSubject: hi\r\n"
                      "Date: Mon, 20 Jul 2026 08:00:00 +0000\r\n\r\nhello\r\n");
        CHECK(rp.status == 200 && streq_ptr(rp.tool, "import_message"));
        m = msg(t, jps(rp.body, "/id"));
        CHECK(has_label(t, jps(rp.body, "/id"), "INBOX") &&
              has_label(t, jps(rp.body, "/id"), "UNREAD"));
        CHECK(streq_ptr(jps(m, "/internalDate"), "1784534400000"));
        /* insert: the labels given, the receive time */
        _cleanup_free_ char *ins = raw_of("From: a@b.co\r\nSubject: kept\r\n\r\nx\r\n");
        snprintf(body, sizeof(body), "{\"raw\":\"%s\",\"labelIds\":[\"STARRED\"]}", ins);
        CHECK(send_json(t, &rp, "POST", U "/messages", body) == 200);
        CHECK(streq_ptr(jps(rp.body, "/labelIds/0"), "STARRED") && !jp(rp.body, "/labelIds/1"));
        /* the same two as JSON {raw} (import) and as a media upload (insert) */
        _cleanup_free_ char *imp = raw_of("From: z@y.com\r\nTo: pome-agent@pome-twin.test\r\n"
                                          "Subject: by json\r\n\r\nbody\r\n");
        snprintf(body, sizeof(body), "{\"raw\":\"%s\"}", imp);
        CHECK(send_json(t, &rp, "POST", U "/messages/import", body) == 200);
        CHECK(streq_ptr(rp.tool, "import_message") && rp.state_mutation);
        CHECK(has_label(t, jps(rp.body, "/id"), "INBOX"));
        CHECK(streq_ptr(gmail_mime_header(jp(msg(t, jps(rp.body, "/id")), "/payload"), "Subject"),
                        "by json"));
        twin_test_req(t, &rp, "POST", "/upload" U "/messages", "uploadType=media", "message/rfc822",
                      "From: q@y.com\r\nSubject: uploaded\r\n\r\nx\r\n");
        CHECK(rp.status == 200 && streq_ptr(rp.tool, "insert_message") && rp.state_mutation);
        CHECK(streq_ptr(gmail_mime_header(jp(msg(t, jps(rp.body, "/id")), "/payload"), "Subject"),
                        "uploaded"));
        twin_reply_done(&rp);
        twin_free(t);
}

/* deliveryMode seeded-mailboxes: what the primary mailbox sends another seeded one arrives
 * there, without its Bcc, under that mailbox's filters */
static void test_delivery(void)
{
        _cleanup_json_ json_t *seed = json_loads(
                "{\"primaryMailbox\":{\"email\":\"me@pome-twin.test\"},\"deliveryMode\":"
                "\"seeded-mailboxes\",\"mailboxes\":[{\"email\":\"bob@pome-twin.test\","
                "\"labels\":[{\"id\":\"Label_team\",\"name\":\"Team\"}],\"filters\":[{"
                "\"criteria\":{\"from\":\"me@pome-twin.test\"},\"action\":{\"addLabelIds\":["
                "\"Label_team\"]}}]},{\"email\":\"carol@pome-twin.test\"}]}",
                0, NULL);
        Twin *t = twin_test_from(&twin_kind_gmail, seed);
        TwinReply rp = {};
        _cleanup_free_ char *raw = raw_of("To: bob@pome-twin.test, dan@elsewhere.test\r\n"
                                          "Bcc: carol@pome-twin.test\r\nSubject: hi\r\n\r\nx\r\n");
        char body[512];
        snprintf(body, sizeof(body), "{\"raw\":\"%s\"}", raw);
        CHECK(send_json(t, &rp, "POST", U "/messages/send", body) == 200);
        json_t *w = twin_world(t);
        json_t *bob = jp(w, "/mailboxes/0"), *carol = jp(w, "/mailboxes/1");
        CHECK(json_array_size(json_object_get(bob, "messages")) == 1);
        CHECK(json_array_size(json_object_get(carol, "messages")) == 1);
        CHECK(streq_ptr(jps(bob, "/messages/0/labelIds/0"), "INBOX"));
        CHECK(streq_ptr(jps(bob, "/messages/0/labelIds/2"), "Label_team")); /* bob's filter */
        size_t i;
        json_t *h;
        json_array_foreach (jp(carol, "/messages/0/payload/headers"), i, h)
                CHECK(!streq_ptr(json_get_str(h, "name"), "Bcc"));
        CHECK(json_array_size(json_object_get(w, "messages")) == 1); /* the sender's SENT */
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_threads_labels(void)
{
        Twin *t = gmail("default");
        TwinReply rp = {};
        CHECK(get(t, &rp, U "/threads", NULL) == 200);
        CHECK(jpi(rp.body, "/resultSizeEstimate") == 3);
        CHECK(streq_ptr(jps(rp.body, "/threads/0/id"), "thread_support"));
        CHECK(get(t, &rp, U "/threads/thread_build", NULL) == 200);
        CHECK(json_array_size(jp(rp.body, "/messages")) == 2);
        CHECK(streq_ptr(jps(rp.body, "/messages/0/id"), "msg_build")); /* oldest first */
        CHECK(get(t, &rp, U "/threads/nope", NULL) == 404);
        CHECK(send_json(t, &rp, "POST", U "/threads/thread_build/modify",
                        "{\"addLabelIds\":[\"STARRED\"]}") == 200);
        CHECK(has_label(t, "msg_build", "STARRED") && has_label(t, "msg_build_reply", "STARRED"));
        CHECK(send_json(t, &rp, "POST", U "/threads/thread_build/trash", NULL) == 200);
        CHECK(has_label(t, "msg_build_reply", "TRASH"));
        CHECK(send_json(t, &rp, "POST", U "/threads/thread_build/untrash", NULL) == 200);
        CHECK(send_json(t, &rp, "DELETE", U "/threads/thread_build", NULL) == 204);
        CHECK(!msg(t, "msg_build") && !msg(t, "msg_build_reply"));
        CHECK(json_array_size(json_object_get(twin_world(t), "attachments")) == 0);

        /* labels: system and user, counts, create/patch/update/delete */
        CHECK(get(t, &rp, U "/labels", NULL) == 200);
        CHECK(json_array_size(jp(rp.body, "/labels")) == 14 + 2);
        CHECK(get(t, &rp, U "/labels/INBOX", NULL) == 200);
        CHECK(jpi(rp.body, "/messagesTotal") == 2 && jpi(rp.body, "/messagesUnread") == 1 &&
              jpi(rp.body, "/threadsTotal") == 2 && jpi(rp.body, "/threadsUnread") == 1);
        CHECK(send_json(t, &rp, "POST", U "/labels", "{\"name\":\"Escalated\"}") == 200);
        CHECK(streq_ptr(rp.tool, "create_label") && rp.state_mutation);
        const char *id = jps(rp.body, "/id");
        CHECK(id && streq_ptr(jps(rp.body, "/type"), "user"));
        char path[128];
        snprintf(path, sizeof(path), U "/labels/%s", id ? id : "x");
        CHECK(send_json(t, &rp, "POST", U "/labels", "{\"name\":\"escalated\"}") == 409 &&
              envelope(&rp, 409, "ALREADY_EXISTS"));
        CHECK(send_json(t, &rp, "POST", U "/labels", "{\"name\":\"inbox\"}") == 409);
        CHECK(send_json(t, &rp, "POST", U "/labels", "{}") == 400);
        CHECK(send_json(t, &rp, "PATCH", path, "{\"labelListVisibility\":\"labelHide\"}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/name"), "Escalated") &&
              streq_ptr(jps(rp.body, "/labelListVisibility"), "labelHide"));
        CHECK(send_json(t, &rp, "PUT", path, "{\"name\":\"Escalated 2\"}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/labelListVisibility"), "labelShow"));
        CHECK(send_json(t, &rp, "PATCH", U "/labels/INBOX", "{\"name\":\"x\"}") == 400);
        CHECK(send_json(t, &rp, "DELETE", U "/labels/INBOX", NULL) == 400);
        CHECK(send_json(t, &rp, "DELETE", U "/labels/Label_follow_up", NULL) == 204);
        CHECK(get(t, &rp, U "/labels/Label_follow_up", NULL) == 404);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_drafts_history_filters(void)
{
        Twin *t = gmail("default");
        TwinReply rp = {};
        CHECK(get(t, &rp, U "/drafts", NULL) == 200);
        CHECK(jpi(rp.body, "/resultSizeEstimate") == 1);
        CHECK(streq_ptr(jps(rp.body, "/drafts/0/id"), "draft_ack"));
        CHECK(get(t, &rp, U "/drafts/draft_ack", "format=minimal") == 200);
        CHECK(streq_ptr(jps(rp.body, "/message/labelIds/0"), "DRAFT"));
        _cleanup_free_ char *raw = raw_of("To: carol@example.com\r\nSubject: hi\r\n\r\nbody\r\n");
        char body[512];
        snprintf(body, sizeof(body), "{\"message\":{\"raw\":\"%s\"}}", raw);
        CHECK(send_json(t, &rp, "POST", U "/drafts", body) == 200);
        CHECK(streq_ptr(rp.tool, "create_draft"));
        _cleanup_free_ char *did = strdup(jps(rp.body, "/id") ?: "");
        char path[128];
        snprintf(path, sizeof(path), U "/drafts/%s", did);
        CHECK(send_json(t, &rp, "PUT", path, body) == 200);
        CHECK(streq_ptr(jps(rp.body, "/id"), did));
        snprintf(body, sizeof(body), "{\"id\":\"%s\"}", did);
        CHECK(send_json(t, &rp, "POST", U "/drafts/send", body) == 200);
        CHECK(streq_ptr(jps(rp.body, "/labelIds/0"), "SENT"));
        CHECK(get(t, &rp, path, NULL) == 404);
        CHECK(send_json(t, &rp, "DELETE", U "/drafts/draft_ack", NULL) == 204);
        CHECK(!msg(t, "draft_ack_message"));
        CHECK(json_array_size(json_object_get(twin_world(t), "drafts")) == 0);

        /* history: since the seeded world; older is Gmail's 404 */
        CHECK(get(t, &rp, U "/history", "startHistoryId=1") == 404 &&
              envelope(&rp, 404, "NOT_FOUND"));
        CHECK(get(t, &rp, U "/history", NULL) == 400);
        json_int_t start = json_integer_value(json_object_get(twin_world(t), "historyStart"));
        char q[96];
        snprintf(q, sizeof(q), "startHistoryId=%lld", (long long)start);
        CHECK(get(t, &rp, U "/history", q) == 200);
        CHECK(json_array_size(jp(rp.body, "/history")) >= 3 && jps(rp.body, "/historyId"));
        snprintf(q, sizeof(q), "startHistoryId=%lld&historyTypes=messageDeleted", (long long)start);
        CHECK(get(t, &rp, U "/history", q) == 200);
        size_t i;
        json_t *h;
        json_array_foreach (jp(rp.body, "/history"), i, h)
                CHECK(json_object_get(h, "messagesDeleted"));

        /* filters: a new matching message gets the actions */
        CHECK(send_json(t, &rp, "POST", U "/settings/filters",
                        "{\"criteria\":{\"from\":\"alice@example.com\"},"
                        "\"action\":{\"addLabelIds\":[\"Label_follow_up\"],"
                        "\"removeLabelIds\":[\"INBOX\"]}}") == 200);
        _cleanup_free_ char *fid = strdup(jps(rp.body, "/id") ?: "");
        CHECK(send_json(
                      t, &rp, "POST", U "/settings/filters",
                      "{\"criteria\":{\"from\":\"x\"},\"action\":{\"addLabelIds\":[\"NOPE\"]}}") ==
              400);
        CHECK(get(t, &rp, U "/settings/filters", NULL) == 200 &&
              json_array_size(jp(rp.body, "/filter")) == 1);
        twin_test_req(t, &rp, "POST", "/upload" U "/messages/import", "uploadType=media",
                      "message/rfc822",
                      "From: Alice <alice@example.com>\r\nTo: pome-agent@pome-twin.test\r\n"
                      "Subject: again\r\n\r\nstill stuck\r\n");
        CHECK(rp.status == 200);
        const char *mid = jps(rp.body, "/id");
        CHECK(has_label(t, mid, "Label_follow_up") && !has_label(t, mid, "INBOX"));
        snprintf(path, sizeof(path), U "/settings/filters/%s", fid);
        CHECK(get(t, &rp, path, NULL) == 200);
        CHECK(send_json(t, &rp, "DELETE", path, NULL) == 204);
        CHECK(get(t, &rp, path, NULL) == 404);

        /* sendAs: the mailbox's own address first; forwarding addresses: none seeded */
        CHECK(get(t, &rp, U "/settings/sendAs", NULL) == 200);
        CHECK(streq_ptr(jps(rp.body, "/sendAs/0/sendAsEmail"), "pome-agent@pome-twin.test"));
        CHECK(json_is_true(jp(rp.body, "/sendAs/0/isPrimary")));
        CHECK(get(t, &rp, U "/settings/sendAs/pome-agent@pome-twin.test", NULL) == 200);
        CHECK(get(t, &rp, U "/settings/sendAs/x@y.co", NULL) == 404);
        CHECK(get(t, &rp, U "/settings/forwardingAddresses", NULL) == 200 &&
              json_object_size(rp.body) == 0);
        CHECK(get(t, &rp, U "/settings/forwardingAddresses/f@g.co", NULL) == 404);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_faults(void)
{
        Twin *t = gmail("throttled");
        TwinReply rp = {};
        _cleanup_free_ char *raw =
                raw_of("To: alice@pome-twin.test\r\nSubject: launch\r\n\r\nx\r\n");
        char body[512];
        snprintf(body, sizeof(body), "{\"raw\":\"%s\"}", raw);
        int want[] = {200, 200, 429, 429, 429, 200};
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                CHECK(send_json(t, &rp, "POST", U "/messages/send", body) == want[i]);
                if (want[i] == 429) {
                        CHECK(envelope(&rp, 429, "RESOURCE_EXHAUSTED"));
                        CHECK(streq_ptr(jps(rp.body, "/error/errors/0/reason"),
                                        "rateLimitExceeded"));
                        CHECK(streq_ptr(json_get_str(rp.headers, "Retry-After"), "1"));
                        CHECK(!rp.state_mutation);
                }
        }
        size_t sent = 0, i;
        json_t *m;
        json_array_foreach (json_object_get(twin_world(t), "messages"), i, m)
                sent++;
        CHECK(sent == 3);
        twin_free(t);

        /* the Stripe twin's failure injection: the attempt-th call answers 503 */
        _cleanup_json_ json_t *seed = json_loads(
                "{\"primaryMailbox\":{\"email\":\"a@b.co\"},\"failure_injection\":[{\"method\":"
                "\"GET\",\"path\":\"/gmail/v1/users/me/profile\",\"attempt\":2,\"status\":503,"
                "\"mode\":\"before_handler\"}]}",
                0, NULL);
        t = twin_test_from(&twin_kind_gmail, seed);
        CHECK(get(t, &rp, U "/profile", NULL) == 200);
        CHECK(get(t, &rp, U "/profile", NULL) == 503 && envelope(&rp, 503, "UNAVAILABLE"));
        CHECK(get(t, &rp, U "/profile", NULL) == 200);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_mcp(void)
{
        Twin *t = gmail("parity");
        TwinReply rp = {};
        /* the 13 tools, in the listing's order */
        static const char *const names[] = {"create_draft",    "list_drafts",
                                            "get_thread",      "get_message",
                                            "search_threads",  "label_thread",
                                            "unlabel_thread",  "apply_sensitive_thread_label",
                                            "list_labels",     "label_message",
                                            "unlabel_message", "apply_sensitive_message_label",
                                            "create_label"};
        _cleanup_json_ json_t *tools = twin_kind_tools(&twin_kind_gmail);
        CHECK(json_array_size(tools) == ELEMENTSOF(names));
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                CHECK(streq_ptr(jps(json_array_get(tools, i), "/name"), names[i]));

        CHECK(tool(t, &rp, "list_labels", "{}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/labels/0/labelId"), "INBOX"));
        CHECK(json_is_integer(jp(rp.body, "/labels/0/messagesTotal")));
        CHECK(tool(t, &rp, "get_message", "{\"messageId\":\"msg_build\"}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/sender"), "ci@example.com"));
        CHECK(streq_ptr(jps(rp.body, "/attachments/0/filename"), "build.log"));
        CHECK(streq_ptr(jps(rp.body, "/date"), "2026-07-19"));
        CHECK(tool(t, &rp, "get_message",
                   "{\"messageId\":\"msg_build\",\"messageFormat\":\"METADATA_ONLY\"}") == 200);
        CHECK(!jp(rp.body, "/subject") && jp(rp.body, "/labelIds"));
        CHECK(tool(t, &rp, "get_message", "{\"messageId\":\"nope\"}") == 404);
        CHECK(tool(t, &rp, "get_message", "{}") == 400 && envelope(&rp, 400, "INVALID_ARGUMENT"));
        CHECK(tool(t, &rp, "label_thread", "{\"threadId\":\"thread_build\"}") == 400);
        CHECK(tool(t, &rp, "search_threads", "{\"query\":\"from:alice\"}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/resultCountEstimate"), "2"));
        CHECK(tool(t, &rp, "get_thread",
                   "{\"threadId\":\"thread_build\",\"messageFormat\":\"MINIMAL\"}") == 200);
        CHECK(json_array_size(jp(rp.body, "/messages")) == 2 &&
              !jp(rp.body, "/messages/0/plaintextBody"));
        CHECK(tool(t, &rp, "label_message",
                   "{\"messageId\":\"msg_parity\",\"labelIds\":[\"STARRED\"]}") == 200);
        CHECK(rp.state_mutation && has_label(t, "msg_parity", "STARRED"));
        CHECK(tool(t, &rp, "unlabel_message",
                   "{\"messageId\":\"msg_parity\",\"labelIds\":[\"UNREAD\"]}") == 200);
        CHECK(!has_label(t, "msg_parity", "UNREAD"));
        CHECK(tool(t, &rp, "label_thread",
                   "{\"threadId\":\"thread_parity\",\"labelIds\":[\"Label_parity\"]}") == 200);
        CHECK(has_label(t, "msg_parity", "Label_parity"));
        CHECK(tool(t, &rp, "unlabel_thread",
                   "{\"threadId\":\"thread_parity\",\"labelIds\":[\"Label_parity\"]}") == 200);
        CHECK(!has_label(t, "msg_parity", "Label_parity"));
        CHECK(tool(t, &rp, "apply_sensitive_thread_label",
                   "{\"threadId\":\"thread_trash_target\",\"labelOption\":\"TRASH\"}") == 200);
        CHECK(tool(t, &rp, "apply_sensitive_message_label",
                   "{\"messageId\":\"msg_spam_target\",\"labelOption\":\"SPAM\"}") == 200);
        CHECK(has_label(t, "msg_spam_target", "SPAM") && !has_label(t, "msg_spam_target", "INBOX"));
        CHECK(tool(t, &rp, "apply_sensitive_message_label",
                   "{\"messageId\":\"msg_spam_target\",\"labelOption\":\"STARRED\"}") == 400);
        CHECK(tool(t, &rp, "create_label", "{\"displayName\":\"Parity Complete\"}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/name"), "Parity Complete") && jps(rp.body, "/labelId"));
        CHECK(tool(t, &rp, "create_label", "{\"displayName\":\"Team/Ops\"}") == 200);
        CHECK(tool(t, &rp, "create_label", "{\"displayName\":\"Team\"}") == 409);
        CHECK(tool(t, &rp, "create_draft",
                   "{\"to\":[\"alice@example.com\"],\"body\":\"Investigating.\","
                   "\"replyToMessageId\":\"msg_support\"}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/toRecipients/0"), "alice@example.com"));
        CHECK(streq_ptr(jps(rp.body, "/threadId"), "thread_support"));
        CHECK(streq_ptr(jps(rp.body, "/subject"), "Re: Production export is stuck"));
        /* a thread with a draft in it: the draft keeps DRAFT alone */
        CHECK(tool(t, &rp, "label_thread",
                   "{\"threadId\":\"thread_support\",\"labelIds\":[\"STARRED\"]}") == 200);
        CHECK(has_label(t, "msg_support", "STARRED"));
        CHECK(tool(t, &rp, "list_drafts", "{\"view\":\"DRAFT_VIEW_METADATA_ONLY\"}") == 200);
        CHECK(json_array_size(jp(rp.body, "/drafts")) == 3 && !jp(rp.body, "/drafts/0/subject"));
        CHECK(tool(t, &rp, "list_drafts", "{\"pageSize\":1}") == 200);
        CHECK(json_array_size(jp(rp.body, "/drafts")) == 1 && jps(rp.body, "/nextPageToken"));

        /* tools/list: Google's listing, outputSchema and annotations (title, hints) with it */
        json_t *lm = json_array_get(tools, 9);
        CHECK(streq_ptr(jps(lm, "/annotations/title"), "Add labels to message"));
        CHECK(jp(lm, "/annotations/readOnlyHint") == json_false() &&
              jp(lm, "/annotations/idempotentHint") == json_true() &&
              jp(lm, "/annotations/destructiveHint") == json_false() &&
              jp(lm, "/annotations/openWorldHint") == json_false());
        CHECK(streq_ptr(jps(lm, "/outputSchema/type"), "object"));
        CHECK(jp(json_array_get(tools, 1), "/annotations/readOnlyHint") == json_true());
        CHECK(jps(json_array_get(tools, 0), "/outputSchema/properties/id/type"));

        /* a label tool answers the text "OK" and an empty structuredContent, as Google's */
        static const char *const ok_calls[][2] = {
                {"label_message", "{\"messageId\":\"msg_parity\",\"labelIds\":[\"STARRED\"]}"},
                {"unlabel_message", "{\"messageId\":\"msg_parity\",\"labelIds\":[\"STARRED\"]}"},
                {"label_thread", "{\"threadId\":\"thread_parity\",\"labelIds\":[\"STARRED\"]}"},
                {"unlabel_thread", "{\"threadId\":\"thread_parity\",\"labelIds\":[\"STARRED\"]}"},
                {"apply_sensitive_message_label",
                 "{\"messageId\":\"msg_parity\",\"labelOption\":\"TRASH\"}"},
                {"apply_sensitive_thread_label",
                 "{\"threadId\":\"thread_parity\",\"labelOption\":\"TRASH\"}"},
        };
        for (size_t i = 0; i < ELEMENTSOF(ok_calls); i++) {
                twin_test_call(t, &rp, ok_calls[i][0], ok_calls[i][1]);
                CHECK(rp.status == 200);
                CHECK(streq_ptr(jps(rp.body, "/result/content/0/text"), "OK"));
                CHECK(jp(rp.body, "/result/isError") == json_false());
                json_t *sc = jp(rp.body, "/result/structuredContent");
                CHECK(json_is_object(sc) && json_object_size(sc) == 0);
                twin_reply_done(&rp);
        }

        /* over JSON-RPC: the same action, the same tool on the tape as REST's */
        twin_test_call(t, &rp, "create_label", "{\"displayName\":\"Via RPC\"}");
        CHECK(rp.status == 200 && streq_ptr(rp.tool, "create_label") && rp.state_mutation);
        twin_reply_done(&rp);
        twin_free(t);
}

/* The mailbox's own clock: the seed's, one second later per change, whatever the wall says. */
static void test_clock(void)
{
        TwinReply rp = {};
        _cleanup_free_ char *first = NULL;
        /* two runs at different wall clocks make the same world */
        for (int run = 0; run < 2; run++) {
                Twin *t = gmail("inbox-triage");
                twin_set_clock(t, run ? 1796000000 : TWIN_TEST_NOW);
                /* newer_than:/older_than: count back from the seed's clock (2026-07-20) */
                CHECK(tool(t, &rp, "search_threads",
                           "{\"query\":\"from:alice@example.com is:unread newer_than:7d\"}") ==
                      200);
                CHECK(json_array_size(jp(rp.body, "/threads")) == 1);
                CHECK(get(t, &rp, U "/messages", "q=newer_than:7d") == 200);
                CHECK(json_array_size(jp(rp.body, "/messages")) == 4);
                CHECK(get(t, &rp, U "/messages", "q=older_than:1d") == 200);
                CHECK(json_array_size(jp(rp.body, "/messages")) == 1); /* msg_welcome, 07-18 */
                /* a new message is stamped a second after the clock, the next one more */
                CHECK(tool(t, &rp, "create_draft",
                           "{\"to\":[\"bob@example.com\"],\"body\":\"x\"}") == 200);
                json_t *rows = json_object_get(twin_world(t), "messages");
                json_t *m = json_array_get(rows, json_array_size(rows) - 1);
                CHECK(streq_ptr(json_get_str(m, "internalDate"), "1784505601000"));
                const char *b64 = strempty(json_get_str(m, "raw"));
                _cleanup_free_ char *raw = NULL;
                size_t len = 0;
                CHECK(token_base64url_decode(b64, strlen(b64), &raw, &len) == 0);
                CHECK(raw && memmem(raw, len, "Date: Mon, 20 Jul 2026 00:00:01 +0000", 37));
                CHECK(jpi(twin_world(t), "/clock") == 1784505601000);
                _cleanup_free_ char *r2 = raw_of("To: bob@example.com\r\nSubject: s\r\n\r\nhi\r\n");
                _cleanup_free_ char *body = NULL;
                CHECK(asprintf(&body, "{\"raw\":\"%s\"}", r2) > 0);
                CHECK(send_json(t, &rp, "POST", U "/messages/send", body) == 200);
                CHECK(streq_ptr(json_get_str(msg(t, jps(rp.body, "/id")), "internalDate"),
                                "1784505602000"));
                /* a read changes nothing, the clock with it */
                CHECK(get(t, &rp, U "/profile", NULL) == 200);
                CHECK(jpi(twin_world(t), "/clock") == 1784505602000);
                char *dump = json_dumps(twin_world(t), JSON_SORT_KEYS | JSON_COMPACT);
                CHECK(dump);
                if (run == 0)
                        first = dump;
                else {
                        CHECK(streq_ptr(first, dump));
                        free(dump);
                }
                twin_free(t);
        }
        twin_reply_done(&rp);
}

/* As strict as Gmail: label ids, not names; MCP arguments as their tools' schemas say. */
static void test_strict(void)
{
        Twin *t = gmail("inbox-triage");
        TwinReply rp = {};
        /* REST: a label's name is no label id (400, nothing changed) */
        CHECK(send_json(t, &rp, "POST", U "/messages/msg_support/modify",
                        "{\"addLabelIds\":[\"Follow Up\"]}") == 400);
        CHECK(envelope(&rp, 400, "INVALID_ARGUMENT") &&
              streq_ptr(jps(rp.body, "/error/message"), "Invalid label: Follow Up"));
        CHECK(!rp.state_mutation && !has_label(t, "msg_support", "Label_follow_up"));
        CHECK(send_json(t, &rp, "POST", U "/messages/batchModify",
                        "{\"ids\":[\"msg_support\"],\"addLabelIds\":[\"Follow Up\"]}") == 400);
        CHECK(!has_label(t, "msg_support", "Label_follow_up"));
        CHECK(send_json(t, &rp, "POST", U "/threads/thread_support/modify",
                        "{\"addLabelIds\":[\"Follow Up\"]}") == 400);
        CHECK(!has_label(t, "msg_support", "Label_follow_up"));
        CHECK(get(t, &rp, U "/messages", "labelIds=Follow%20Up") == 400);
        CHECK(send_json(t, &rp, "POST", U "/messages/msg_support/modify",
                        "{\"addLabelIds\":[\"Label_follow_up\",\"starred\"]}") == 200);
        CHECK(has_label(t, "msg_support", "Label_follow_up") &&
              has_label(t, "msg_support", "STARRED"));

        /* MCP: the label tools take ids ("The tool accepts label_ids and not label names") */
        CHECK(tool(t, &rp, "label_message",
                   "{\"messageId\":\"msg_build\",\"labelIds\":[\"Follow Up\"]}") == 400);
        CHECK(!rp.state_mutation && !has_label(t, "msg_build", "Label_follow_up"));
        twin_test_call(t, &rp, "label_message",
                       "{\"messageId\":\"msg_build\",\"labelIds\":\"STARRED\"}");
        CHECK(jp(rp.body, "/result/isError") == json_true() &&
              !has_label(t, "msg_build", "STARRED"));
        CHECK(strstr(strempty(jps(rp.body, "/result/content/0/text")), "labelIds"));
        twin_reply_done(&rp);
        CHECK(tool(t, &rp, "label_message", "{\"messageId\":\"msg_build\",\"labelIds\":[]}") ==
              400);
        CHECK(tool(t, &rp, "label_message", "{\"messageId\":\"msg_build\",\"labelIds\":[7]}") ==
              400);
        CHECK(tool(t, &rp, "get_message",
                   "{\"messageId\":\"msg_build\",\"messageFormat\":\"EVERYTHING\"}") == 400);
        CHECK(envelope(&rp, 400, "INVALID_ARGUMENT"));
        CHECK(tool(t, &rp, "get_message", "{\"messageId\":\"\"}") == 400);
        CHECK(tool(t, &rp, "search_threads", "{\"pageSize\":500}") == 400);
        CHECK(tool(t, &rp, "search_threads", "{\"pageSize\":0}") == 400);
        CHECK(tool(t, &rp, "search_threads", "{\"pageSize\":\"5\"}") == 400);
        CHECK(tool(t, &rp, "search_threads", "{\"pageSize\":50}") == 200);
        CHECK(tool(t, &rp, "list_drafts", "{\"view\":\"EVERYTHING\"}") == 400);
        CHECK(tool(t, &rp, "apply_sensitive_message_label",
                   "{\"messageId\":\"msg_build\",\"labelOption\":\"STARRED\"}") == 400);
        CHECK(tool(t, &rp, "create_draft", "{\"to\":\"bob@example.com\",\"body\":\"x\"}") == 400);
        CHECK(tool(t, &rp, "create_draft",
                   "{\"to\":[\"bob@example.com\"],\"attachments\":[{\"filename\":\"a\"}]}") == 400);
        CHECK(tool(t, &rp, "create_label", "{\"displayName\":\"  \"}") == 400);
        /* what the schema allows still goes, arguments it does not name with it */
        CHECK(tool(t, &rp, "label_message",
                   "{\"messageId\":\"msg_build\",\"labelIds\":[\"Label_follow_up\"],\"x\":1}") ==
              200);
        CHECK(has_label(t, "msg_build", "Label_follow_up"));
        twin_reply_done(&rp);
        twin_free(t);
}

/* create_draft with replyToMessageId: threaded, and the original quoted below the reply. */
static void test_reply_draft(void)
{
        Twin *t = gmail("parity");
        TwinReply rp = {};
        CHECK(tool(t, &rp, "create_draft",
                   "{\"to\":[\"alice@example.com\"],\"body\":\"Investigating.\","
                   "\"replyToMessageId\":\"msg_support\"}") == 200);
        CHECK(streq_ptr(jps(rp.body, "/threadId"), "thread_support"));
        json_t *drafts = json_object_get(twin_world(t), "drafts");
        const char *mid = jps(json_array_get(drafts, json_array_size(drafts) - 1), "/messageId");
        json_t *m = msg(t, mid);
        CHECK(m && streq_ptr(json_get_str(m, "threadId"), "thread_support"));
        _cleanup_free_ char *args = NULL;
        CHECK(asprintf(&args, "{\"messageId\":\"%s\"}", strempty(mid)) > 0);
        CHECK(tool(t, &rp, "get_message", args) == 200);
        const char *text = strempty(jps(rp.body, "/plaintextBody"));
        CHECK(startswith(text, "Investigating.\r\n\r\nOn Sun, Jul 19, 2026 at 12:30 PM, "
                               "alice@example.com wrote:\r\n> Our production export has been "
                               "stuck for an hour. Can you investigate?"));
        _cleanup_free_ char *path = NULL;
        CHECK(asprintf(&path, U "/messages/%s", strempty(mid)) > 0);
        CHECK(get(t, &rp, path, "format=metadata") == 200);
        bool irt = false, refs = false;
        size_t i;
        json_t *h;
        json_array_foreach (jp(rp.body, "/payload/headers"), i, h) {
                irt = irt || (streq_ptr(json_get_str(h, "name"), "In-Reply-To") &&
                              streq_ptr(json_get_str(h, "value"), "<support-001@example.com>"));
                refs = refs ||
                       (streq_ptr(json_get_str(h, "name"), "References") &&
                        strstr(strempty(json_get_str(h, "value")), "<support-001@example.com>"));
        }
        CHECK(irt && refs);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_hostile(void)
{
        Twin *t = gmail("default");
        TwinReply rp = {};
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        static const struct {
                const char *method, *path, *ctype, *body;
                int status;
        } cases[] = {
                {"POST", U "/messages/send", "application/json", "[1,2]", 400},
                {"POST", U "/messages/send", "application/json", "{oops", 400},
                {"POST", U "/messages/send", "application/json", "{\"raw\":42}", 400},
                {"POST", U "/messages/msg_support/modify", "application/json",
                 "{\"addLabelIds\":{\"a\":1}}", 400},
                {"POST", U "/labels", "application/json", "{\"name\":[\"x\"]}", 400},
                {"POST", U "/labels", "application/json", "{\"name\":\"\\u00ff\\ud800\"}", 400},
                {"POST", U "/drafts", "application/json", "{\"message\":\"x\"}", 400},
                {"POST", U "/settings/filters", "application/json", "{\"criteria\":7}", 400},
                {"POST", "/upload" U "/messages/send", "multipart/related; boundary=\"",
                 "--\r\n\r\n", 400},
                {"GET", U "/history", NULL, NULL, 400},
                {"POST", U "/watch", "application/json", "{}", 501},
                {"GET", "/gmail/v1/users/me/../../etc/passwd", NULL, NULL, 501},
                {"PATCH", U "/messages/msg_support", "application/json", "{}", 404},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                twin_test_req(t, &rp, cases[i].method, cases[i].path, NULL, cases[i].ctype,
                              cases[i].body);
                if (rp.status != cases[i].status || !jp(rp.body, "/error/status") ||
                    jpi(rp.body, "/error/code") != cases[i].status) {
                        fprintf(stderr, "%s %s %s: %d %s\n", cases[i].method, cases[i].path,
                                strempty(cases[i].body), rp.status,
                                rp.body ? json_dumps(rp.body, 0) : "(no body)");
                        check_failures++;
                }
                CHECK(!rp.state_mutation);
        }
        twin_test_req(t, &rp, "POST", U "/watch", NULL, "application/json", "{}");
        CHECK(envelope(&rp, 501, "UNIMPLEMENTED") && streq_ptr(rp.fidelity, "unsupported"));
        /* a very deep body */
        char deep[4100];
        size_t n = 0;
        for (; n < 2000; n++)
                deep[n] = '[';
        deep[n] = 0;
        twin_test_req(t, &rp, "POST", U "/labels", NULL, "application/json", deep);
        CHECK(rp.status == 400 && jp(rp.body, "/error"));
        CHECK(json_equal(before, twin_world(t)));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_envelopes(void)
{
        TwinReply rp = {};
        twin_kind_gmail.auth_error(TWIN_AUTH_MISSING, &rp);
        CHECK(envelope(&rp, 401, "UNAUTHENTICATED") && !jp(rp.body, "/error/documentation_url"));
        twin_reply_done(&rp);
        twin_kind_gmail.control_error(TWIN_CONTROL_FORBIDDEN, NULL, &rp);
        _cleanup_json_ json_t *want = json_loads(
                "{\"error\":{\"code\":403,\"message\":\"Forbidden\",\"errors\":[{\"message\":"
                "\"Forbidden\",\"domain\":\"global\",\"reason\":\"forbidden\"}],\"status\":"
                "\"PERMISSION_DENIED\"}}",
                0, NULL);
        CHECK(rp.status == 403 && json_equal(rp.body, want));
        twin_reply_done(&rp);
        twin_kind_gmail.control_error(TWIN_CONTROL_UNKNOWN_TOOL, "x", &rp);
        CHECK(envelope(&rp, 404, "NOT_FOUND"));
        twin_reply_done(&rp);
        twin_kind_gmail.control_error(TWIN_CONTROL_BAD_SEED, "why", &rp);
        CHECK(envelope(&rp, 400, "INVALID_ARGUMENT"));
        twin_reply_done(&rp);

        Twin *t = gmail("default");
        _cleanup_json_ json_t *health = twin_health(t, true);
        CHECK(json_object_size(health) == 4 && jp(health, "/fidelity") && jp(health, "/version"));
        _cleanup_json_ json_t *state = twin_kind_gmail.public_state(twin_world(t));
        CHECK(state && !jp(state, "/messages/0/raw") && jp(state, "/messages/0/payload"));
        twin_free(t);
}

int main(void)
{
        test_seeds();
        test_messages();
        test_send_insert_import();
        test_delivery();
        test_threads_labels();
        test_drafts_history_filters();
        test_faults();
        test_mcp();
        test_clock();
        test_strict();
        test_reply_draft();
        test_hostile();
        test_envelopes();
        return check_finish();
}
