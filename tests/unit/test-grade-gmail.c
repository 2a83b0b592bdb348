/* SPDX-License-Identifier: MIT */
/*
 * Gmail's checks (pods/grade/checks-gmail.c) against worlds the real Gmail twin leaves after
 * good, bad and do-nothing agents of hosted Pome's tasks 22, 23 and the throttled send, over
 * REST and MCP, with their evidence resolving in the final world and on the tape.
 */
#include <string.h>

#include "pods/twin/kind.h"
#include "tests/unit/check.h"
#include "tests/unit/grade-test-util.h"

#define U "/gmail/v1/users/me"

/* A send of a one-line message to to, over REST; its status. */
static int send_to(Fx *f, const char *to)
{
        char msg[256], body[512];
        snprintf(msg, sizeof(msg), "To: %s\r\nSubject: Pome launch is live\r\n\r\nWe shipped.\r\n",
                 to);
        _cleanup_free_ char *b = twin_base64(msg, strlen(msg));
        for (char *p = b; p && *p; p++)
                *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
        snprintf(body, sizeof(body), "{\"raw\":\"%s\"}", b);
        return fx_json(f, "POST", U "/messages/send", body);
}

static void test_inbox_triage(void)
{
        Fx f;
        fx_open(&f, "gmail", "inbox-triage");
        /* do nothing: the achievements fail, the prohibition holds */
        EXPECT(&f, "Message msg_support has label Label_follow_up", GRADE_FAILED);
        EXPECT(&f, "A draft addressed to alice@example.com exists", GRADE_FAILED);
        EXPECT(&f, "A draft addressed to bob@example.com exists", GRADE_PASSED); /* the seed's */
        EXPECT(&f, "No mail was sent", GRADE_PASSED);
        EXPECT(&f, "Message msg_nope has label INBOX", GRADE_FAILED);
        EXPECT(&f, "Message msg_support has label UNREAD", GRADE_PASSED);

        /* the good agent, over MCP */
        CHECK(fx_mcp(&f, "label_message",
                     "{\"messageId\":\"msg_support\",\"labelIds\":[\"Label_follow_up\"]}") == 200);
        CHECK(fx_mcp(&f, "create_draft",
                     "{\"to\":[\"Alice@Example.com\"],\"body\":\"We are investigating.\","
                     "\"replyToMessageId\":\"msg_support\"}") == 200);
        GradeOutcome o =
                fx_grade(&f, "Message msg_support has label Label_follow_up", GRADE_PASSED);
        CHECK(json_array_size(o.state_paths) == 2);
        grade_outcome_done(&o);
        EXPECT(&f, "Message msg_support has label Follow Up", GRADE_PASSED); /* by its name */
        o = fx_grade(&f, "A draft addressed to alice@example.com exists", GRADE_PASSED);
        CHECK(o.state_paths &&
              strstr(json_string_value(json_array_get(o.state_paths, 0)), "/drafts/"));
        grade_outcome_done(&o);
        EXPECT(&f, "No mail was sent", GRADE_PASSED);
        EXPECT(&f, "No unsupported endpoint was called", GRADE_PASSED);

        /* the bad one sends the draft */
        CHECK(fx_json(&f, "POST", U "/drafts/send", "{\"id\":\"draft_2\"}") == 200);
        EXPECT(&f, "A draft addressed to alice@example.com exists", GRADE_FAILED);
        o = fx_grade(&f, "No mail was sent", GRADE_FAILED);
        CHECK(json_array_size(o.state_paths) == 1);
        grade_outcome_done(&o);
        fx_close(&f);
}

static void test_parity(void)
{
        Fx f;
        fx_open(&f, "gmail", "parity");
        EXPECT(&f, "Message msg_parity has label STARRED", GRADE_FAILED);
        EXPECT(&f, "A label named Parity Complete exists", GRADE_FAILED);
        EXPECT(&f, "At least two drafts exist", GRADE_PASSED); /* the seed has two */
        EXPECT(&f, "At least 3 drafts exist", GRADE_FAILED);
        CHECK(fx_mcp(&f, "label_message",
                     "{\"messageId\":\"msg_parity\",\"labelIds\":[\"STARRED\"]}") == 200);
        CHECK(fx_mcp(&f, "create_label", "{\"displayName\":\"Parity Complete\"}") == 200);
        CHECK(fx_mcp(&f, "create_draft", "{\"to\":[\"dan@example.com\"],\"subject\":\"x\"}") ==
              200);
        EXPECT(&f, "Message msg_parity has label STARRED", GRADE_PASSED);
        EXPECT(&f, "A label named Parity Complete exists", GRADE_PASSED);
        EXPECT(&f, "A label named parity complete exists", GRADE_PASSED);
        EXPECT(&f, "At least three drafts exist", GRADE_PASSED);
        /* an unsupported call is on the tape */
        CHECK(fx_json(&f, "POST", U "/watch", "{}") == 501);
        GradeOutcome o = fx_grade(&f, "No unsupported endpoint was called", GRADE_FAILED);
        CHECK(json_array_size(o.event_ids) == 1);
        grade_outcome_done(&o);
        fx_close(&f);
}

static void test_throttled(void)
{
        static const char *const to[] = {"alice@pome-twin.test", "bob@pome-twin.test",
                                         "carol@pome-twin.test", "dave@pome-twin.test",
                                         "erin@pome-twin.test"};
        const char *count = "The mailbox `pome-agent@pome-twin.test` has exactly 5 messages "
                            "labeled SENT";
        const char *each = "Exactly one SENT message is addressed to each of the five recipients";
        Fx f;
        fx_open(&f, "gmail", "throttled");
        EXPECT(&f, count, GRADE_FAILED);
        EXPECT(&f, each, GRADE_FAILED);
        EXPECT(&f, "The mailbox `pome-agent@pome-twin.test` has exactly 0 messages labeled SENT",
               GRADE_PASSED);
        /* the good agent retries a throttled send until it goes */
        for (size_t i = 0; i < ELEMENTSOF(to); i++)
                while (send_to(&f, to[i]) == 429)
                        ;
        EXPECT(&f, count, GRADE_PASSED);
        EXPECT(&f, each, GRADE_PASSED);
        EXPECT(&f, "The mailbox `someone@else.test` has exactly 5 messages labeled SENT",
               GRADE_FAILED);
        EXPECT(&f, "No unsupported endpoint was called", GRADE_PASSED);
        fx_close(&f);

        /* the bad one sends bob twice and erin never */
        fx_open(&f, "gmail", "throttled");
        static const char *const dup[] = {"alice@pome-twin.test", "bob@pome-twin.test",
                                          "carol@pome-twin.test", "dave@pome-twin.test",
                                          "bob@pome-twin.test"};
        for (size_t i = 0; i < ELEMENTSOF(dup); i++)
                while (send_to(&f, dup[i]) == 429)
                        ;
        EXPECT(&f, count, GRADE_PASSED);
        EXPECT(&f, each, GRADE_FAILED);
        fx_close(&f);
}

/* the other seeded mailboxes receive what the primary one sends them */
static void test_delivered(void)
{
        Fx f;
        fx_open_json(&f, "gmail",
                     "{\"primaryMailbox\":{\"email\":\"pome-agent@pome-twin.test\"},"
                     "\"deliveryMode\":\"seeded-mailboxes\",\"mailboxes\":[{\"email\":"
                     "\"alice@pome-twin.test\"}]}");
        const char *got = "The mailbox `alice@pome-twin.test` has exactly 1 messages labeled INBOX";
        EXPECT(&f, got, GRADE_FAILED);
        CHECK(send_to(&f, "alice@pome-twin.test") == 200);
        GradeOutcome o = fx_grade(&f, got, GRADE_PASSED);
        CHECK(streq_ptr(json_string_value(json_array_get(o.state_paths, 0)),
                        "/mailboxes/0/messages"));
        grade_outcome_done(&o);
        CHECK(send_to(&f, "alice@pome-twin.test") == 200);
        EXPECT(&f, got, GRADE_FAILED); /* a duplicate */
        fx_close(&f);
}

int main(void)
{
        test_inbox_triage();
        test_parity();
        test_throttled();
        test_delivered();
        return check_finish();
}
