/* SPDX-License-Identifier: MIT */
/*
 * The Slack twin: the walkthrough's post to #general over the Web API (form, query, JSON;
 * /{method} and /api/{method}) and over MCP, ts ordering, threads, reactions, cursors,
 * error envelopes (HTTP 200 ok:false), redaction, seed validation.
 */
#include "common/json-util.h"
#include "pods/twin/kind.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

#define BASE TWIN_TEST_BASE("slack")
#define FORM "application/x-www-form-urlencoded"
#define JSON "application/json; charset=utf-8"

/* A slack twin from a seed written inline (JSON text). */
static Twin *twin_seed_text(const char *text)
{
        _cleanup_json_ json_t *seed = json_loads(text, 0, NULL);
        if (!seed) {
                fprintf(stderr, "seed: unparsable\n");
                exit(1);
        }
        return twin_test_from(&twin_kind_slack, seed);
}

/* What @slack/web-api does: POST form bodies to /api/<method>. */
static void sdk(Twin *t, TwinReply *rp, const char *method, const char *form)
{
        char path[128];
        snprintf(path, sizeof(path), "/api/%s", method);
        twin_test_req(t, rp, "POST", path, NULL, FORM, form);
}

static json_t *general(Twin *t)
{
        return jp(twin_world(t), "/channels/0/messages");
}

static void test_walkthrough(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};

        sdk(t, &rp, "auth.test", "token=xoxb-pome-x");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/ok")));
        CHECK(streq(jps(rp.body, "/url"), "https://pome-twin.slack.com/"));
        CHECK(streq(jps(rp.body, "/team"), "Pome Twin Workspace") &&
              streq(jps(rp.body, "/team_id"), "T_POME"));
        CHECK(streq(jps(rp.body, "/user"), "pome-agent") &&
              streq(jps(rp.body, "/user_id"), "U_PRIMARY"));
        CHECK(streq(jps(rp.body, "/bot_id"), "B_PRIMARY") && streq(rp.tool, "slack_auth_test"));

        /* #general holds exactly hosted Pome's two greetings, newest first */
        sdk(t, &rp, "conversations.history", "channel=C_GENERAL");
        CHECK(json_is_true(jp(rp.body, "/ok")) && json_array_size(jp(rp.body, "/messages")) == 2);
        CHECK(streq(jps(rp.body, "/messages/0/text"), "morning :wave:") &&
              streq(jps(rp.body, "/messages/0/user"), "U_BOB"));
        CHECK(streq(jps(rp.body, "/messages/1/text"), "morning team"));
        CHECK(streq(jps(rp.body, "/messages/1/user"), "U_ALICE"));
        CHECK(streq(jps(rp.body, "/messages/1/ts"), "1700000000.000100"));
        CHECK(streq(jps(rp.body, "/messages/0/type"), "message"));
        CHECK(json_is_false(jp(rp.body, "/has_more")));
        CHECK(streq(jps(rp.body, "/response_metadata/next_cursor"), ""));
        CHECK(streq(rp.tool, "slack_read_channel") && !rp.state_mutation);
        CHECK(!jp(rp.body, "/channel_id"));

        sdk(t, &rp, "chat.postMessage",
            "channel=%23general&text=Triaged+acme%2Fapi%231+%E2%80%94+assigned+to+alice");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/ok")));
        CHECK(streq(jps(rp.body, "/channel"), "C_GENERAL"));
        CHECK(streq(jps(rp.body, "/ts"), "1780000000.000000"));
        CHECK(streq(jps(rp.body, "/message/text"),
                    "Triaged acme/api#1 \xe2\x80\x94 assigned to alice"));
        CHECK(streq(jps(rp.body, "/message/user"), "U_PRIMARY"));
        CHECK(streq(jps(rp.body, "/message/bot_id"), "B_PRIMARY"));
        CHECK(streq(rp.tool, "slack_send_message") && rp.state_mutation);
        CHECK(json_is_null(jp(rp.state_delta, "/before")));
        CHECK(streq(jps(rp.state_delta, "/after/ts"), "1780000000.000000"));
        CHECK(streq(jps(rp.request_body, "/channel"), "#general"));
        CHECK(json_array_size(general(t)) == 3);

        /* the same second again: ts still grows */
        sdk(t, &rp, "chat.postMessage", "channel=C_GENERAL&text=second");
        CHECK(streq(jps(rp.body, "/ts"), "1780000000.000001"));
        twin_test_req(t, &rp, "POST", "/chat.postMessage", NULL, JSON,
                      "{\"channel\":\"general\",\"text\":\"third\"}");
        CHECK(streq(jps(rp.body, "/ts"), "1780000000.000002") &&
              streq(rp.tool, "slack_send_message"));
        twin_test_req(t, &rp, "GET", "/chat.postMessage", "channel=C_RANDOM&text=via+GET", NULL,
                      NULL);
        CHECK(json_is_true(jp(rp.body, "/ok")) && streq(jps(rp.body, "/channel"), "C_RANDOM"));

        /* history: newest first */
        sdk(t, &rp, "conversations.history", "channel=C_GENERAL&limit=2");
        CHECK(json_array_size(jp(rp.body, "/messages")) == 2);
        CHECK(streq(jps(rp.body, "/messages/0/text"), "third"));
        CHECK(json_is_true(jp(rp.body, "/has_more")));
        const char *cursor = jps(rp.body, "/response_metadata/next_cursor");
        CHECK(cursor && cursor[0]);
        char form[256];
        snprintf(form, sizeof(form), "channel=C_GENERAL&limit=2&cursor=%s", cursor);
        sdk(t, &rp, "conversations.history", form);
        CHECK(json_array_size(jp(rp.body, "/messages")) == 2);
        CHECK(streq(jps(rp.body, "/messages/1/ts"), "1700000030.000100"));
        CHECK(json_is_true(jp(rp.body, "/has_more")));
        snprintf(form, sizeof(form), "channel=C_GENERAL&limit=2&cursor=%s",
                 jps(rp.body, "/response_metadata/next_cursor"));
        sdk(t, &rp, "conversations.history", form);
        CHECK(json_array_size(jp(rp.body, "/messages")) == 1);
        CHECK(streq(jps(rp.body, "/messages/0/ts"), "1700000000.000100"));
        CHECK(json_is_false(jp(rp.body, "/has_more")));
        sdk(t, &rp, "conversations.history", "channel=C_GENERAL&oldest=1700000000.000100");
        CHECK(json_array_size(jp(rp.body, "/messages")) == 4);
        sdk(t, &rp, "conversations.history",
            "channel=C_GENERAL&oldest=1700000000.000100&inclusive=true&latest=1780000000.000001");
        CHECK(json_array_size(jp(rp.body, "/messages")) == 4);
        CHECK(streq(jps(rp.body, "/messages/0/text"), "second"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_mcp(void)
{
        Twin *rest = twin_test_new("slack", "default"), *m = twin_test_new("slack", "default");
        TwinReply rp = {};
        sdk(rest, &rp, "chat.postMessage", "channel=C_GENERAL&text=hello");
        twin_test_call(m, &rp, "slack_send_message",
                       "{\"channel_id\":\"C_GENERAL\",\"message\":\"hello\"}");
        CHECK(rp.status == 200 && json_is_false(jp(rp.body, "/result/isError")));
        CHECK(json_is_true(jp(rp.body, "/result/structuredContent/ok")));
        CHECK(streq(rp.tool, "slack_send_message") && rp.state_mutation);
        CHECK(json_equal(twin_world(rest), twin_world(m)));

        twin_test_call(m, &rp, "slack_send_message", "{\"channel_id\":\"C0NOPE\",\"text\":\"x\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        CHECK(streq(jps(rp.body, "/result/structuredContent/error"), "channel_not_found"));

        /* the MCP tool names the channel it read; conversations.history does not */
        twin_test_call(m, &rp, "slack_read_channel", "{\"channel_id\":\"general\"}");
        CHECK(streq_ptr(jps(rp.body, "/result/structuredContent/channel_id"), "C_GENERAL"));
        twin_test_call(m, &rp, "slack_search_channels", "{\"query\":\"general\"}");
        CHECK(json_array_size(jp(rp.body, "/result/structuredContent/channels")) == 1);
        twin_test_call(m, &rp, "slack_search_users",
                       "{\"query\":\"pome-twin.slack.com\",\"limit\":1}");
        CHECK(json_array_size(jp(rp.body, "/result/structuredContent/users")) == 1);
        CHECK(jps(rp.body, "/result/structuredContent/response_metadata/next_cursor")[0]);
        twin_test_call(m, &rp, "slack_search_users", "{\"query\":\"partner.test\"}");
        CHECK(json_array_size(jp(rp.body, "/result/structuredContent/users")) == 0);
        twin_test_call(m, &rp, "slack_read_user_profile", "{}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/user_id"), "U_PRIMARY"));
        twin_test_call(m, &rp, "slack_read_user_profile", "{\"user_id\":\"U_ALICE\"}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/profile/real_name"), "Alice"));
        twin_test_call(
                m, &rp, "slack_add_reaction",
                "{\"channel_id\":\"C_GENERAL\",\"message_ts\":\"1700000000.000100\",\"emoji\":"
                "\"wave\"}");
        CHECK(json_is_true(jp(rp.body, "/result/structuredContent/ok")) && rp.state_mutation);
        twin_test_call(m, &rp, "slack_send_message",
                       "{\"channel_id\":\"C_GENERAL\",\"thread_ts\":\"1700000000.000100\","
                       "\"message\":\"hi\"}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/message/thread_ts"),
                    "1700000000.000100"));
        twin_test_call(m, &rp, "slack_send_message",
                       "{\"channel_id\":\"C_GENERAL\",\"thread_ts\":\"1.000000\",\"message\":"
                       "\"hi\"}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/error"), "thread_not_found"));
        twin_reply_done(&rp);
        twin_free(rest);
        twin_free(m);
}

static void test_threads_and_reactions(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        const char *parent = "1700000000.000100";

        sdk(t, &rp, "chat.postMessage", "channel=C_GENERAL&text=r1&thread_ts=1700000000.000100");
        CHECK(streq(jps(rp.body, "/message/thread_ts"), parent));
        const char *reply_ts = "1780000000.000000";
        /* replying to a reply lands in the parent's thread */
        sdk(t, &rp, "chat.postMessage", "channel=C_GENERAL&text=r2&thread_ts=1780000000.000000");
        CHECK(streq(jps(rp.body, "/message/thread_ts"), parent));
        sdk(t, &rp, "chat.postMessage", "channel=C_GENERAL&text=x&thread_ts=1.000000");
        CHECK(streq(jps(rp.body, "/error"), "thread_not_found") && !rp.state_mutation);

        sdk(t, &rp, "conversations.history", "channel=C_GENERAL");
        CHECK(json_array_size(jp(rp.body, "/messages")) == 2);
        CHECK(json_integer_value(jp(rp.body, "/messages/1/reply_count")) == 2);
        CHECK(streq(jps(rp.body, "/messages/1/reply_users/0"), "U_PRIMARY"));
        CHECK(streq(jps(rp.body, "/messages/1/latest_reply"), "1780000000.000001"));
        sdk(t, &rp, "conversations.replies", "channel=C_GENERAL&ts=1780000000.000000");
        CHECK(streq(rp.tool, "slack_read_thread"));
        CHECK(json_array_size(jp(rp.body, "/messages")) == 3);
        CHECK(streq(jps(rp.body, "/messages/0/ts"), parent));
        CHECK(streq(jps(rp.body, "/messages/1/ts"), reply_ts));
        /* a reply names its parent's author; the parent has none of that */
        CHECK(streq_ptr(jps(rp.body, "/messages/1/parent_user_id"), "U_ALICE"));
        CHECK(!jp(rp.body, "/messages/0/parent_user_id") && !jp(rp.body, "/messages/1/subtype"));
        /* a reply also sent to the channel: subtype thread_broadcast, its parent as root */
        sdk(t, &rp, "chat.postMessage",
            "channel=C_GENERAL&text=r3&thread_ts=1700000000.000100&reply_broadcast=true");
        CHECK(streq_ptr(jps(rp.body, "/message/subtype"), "thread_broadcast"));
        sdk(t, &rp, "conversations.history", "channel=C_GENERAL&limit=1");
        CHECK(streq_ptr(jps(rp.body, "/messages/0/text"), "r3"));
        CHECK(streq_ptr(jps(rp.body, "/messages/0/subtype"), "thread_broadcast"));
        CHECK(streq_ptr(jps(rp.body, "/messages/0/parent_user_id"), "U_ALICE"));
        CHECK(streq_ptr(jps(rp.body, "/messages/0/root/ts"), parent));
        CHECK(json_integer_value(jp(rp.body, "/messages/0/root/reply_count")) == 3);
        CHECK(!jp(rp.body, "/messages/0/root/root"));
        /* a parent with replies, deleted, leaves a tombstone: its thread stays readable */
        sdk(t, &rp, "chat.postMessage", "channel=C_RANDOM&text=doomed");
        _cleanup_free_ char *doomed = strdup(jps(rp.body, "/ts"));
        char form[128];
        snprintf(form, sizeof(form), "channel=C_RANDOM&text=kept&thread_ts=%s", doomed);
        sdk(t, &rp, "chat.postMessage", form);
        snprintf(form, sizeof(form), "channel=C_RANDOM&ts=%s", doomed);
        sdk(t, &rp, "chat.delete", form);
        CHECK(json_is_true(jp(rp.body, "/ok")) && rp.state_mutation);
        CHECK(streq_ptr(jps(rp.state_delta, "/after/subtype"), "tombstone"));
        sdk(t, &rp, "conversations.replies", form);
        CHECK(json_array_size(jp(rp.body, "/messages")) == 2);
        CHECK(streq_ptr(jps(rp.body, "/messages/0/subtype"), "tombstone"));
        CHECK(streq_ptr(jps(rp.body, "/messages/0/text"), "This message was deleted."));
        CHECK(json_integer_value(jp(rp.body, "/messages/0/reply_count")) == 1);
        CHECK(streq_ptr(jps(rp.body, "/messages/1/text"), "kept"));
        sdk(t, &rp, "search.messages", "query=deleted");
        CHECK(json_integer_value(jp(rp.body, "/messages/total")) == 0);
        sdk(t, &rp, "conversations.replies", "channel=C_GENERAL&ts=1.5");
        CHECK(streq(jps(rp.body, "/error"), "thread_not_found"));

        sdk(t, &rp, "reactions.add",
            "channel=C_GENERAL&timestamp=1700000000.000100&name=%3Atada%3A");
        CHECK(json_is_true(jp(rp.body, "/ok")) && rp.state_mutation);
        CHECK(streq(rp.tool, "slack_add_reaction"));
        CHECK(!jp(rp.state_delta, "/before/reactions"));
        CHECK(streq(jps(rp.state_delta, "/after/reactions/0/name"), "tada"));
        CHECK(streq(jps(general(t), "/0/reactions/0/users/0"), "U_PRIMARY"));

        static const struct {
                const char *form, *error;
        } errors[] = {
                {"channel=C_GENERAL&timestamp=1700000000.000100&name=tada", "already_reacted"},
                {"channel=C_GENERAL&timestamp=1700000000.000999&name=tada", "message_not_found"},
                {"channel=C_GENERAL&timestamp=garbage&name=tada", "bad_timestamp"},
                {"channel=C_GENERAL&timestamp=1700000000.0001009&name=tada", "bad_timestamp"},
                {"channel=C_GENERAL&name=tada", "no_item_specified"},
                {"channel=C_GENERAL&timestamp=1700000000.000100&name=Not+An+Emoji", "invalid_name"},
                {"channel=C_GENERAL&timestamp=1700000000.000100", "invalid_name"},
                {"channel=nope&timestamp=1700000000.000100&name=x", "channel_not_found"},
        };
        for (size_t i = 0; i < ELEMENTSOF(errors); i++) {
                sdk(t, &rp, "reactions.add", errors[i].form);
                CHECK(rp.status == 200 && json_is_false(jp(rp.body, "/ok")));
                CHECK(streq(jps(rp.body, "/error"), errors[i].error) && !rp.state_mutation);
        }
        sdk(t, &rp, "reactions.add",
            "channel=C_GENERAL&timestamp=1700000000.000100&name=thumbsup::skin-tone-3");
        CHECK(json_is_true(jp(rp.body, "/ok")));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_lists(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        sdk(t, &rp, "conversations.list", "limit=1");
        CHECK(json_array_size(jp(rp.body, "/channels")) == 1);
        CHECK(streq(jps(rp.body, "/channels/0/name"), "general"));
        CHECK(json_is_true(jp(rp.body, "/channels/0/is_general")));
        CHECK(json_is_true(jp(rp.body, "/channels/0/is_member")));
        CHECK(streq(jps(rp.body, "/channels/0/topic/value"),
                    "Company-wide announcements and chatter."));
        char form[128];
        snprintf(form, sizeof(form), "limit=1&cursor=%s",
                 jps(rp.body, "/response_metadata/next_cursor"));
        sdk(t, &rp, "conversations.list", form);
        CHECK(streq(jps(rp.body, "/channels/0/name"), "random"));
        CHECK(jps(rp.body, "/response_metadata/next_cursor")[0]);
        sdk(t, &rp, "conversations.list", "cursor=bm9wZQ%3D%3D");
        CHECK(streq(jps(rp.body, "/error"), "invalid_cursor"));
        sdk(t, &rp, "conversations.list", "cursor=!!!");
        CHECK(streq(jps(rp.body, "/error"), "invalid_cursor"));
        /* the private channel the bot is in, not the one it is not */
        sdk(t, &rp, "conversations.list", "types=private_channel");
        CHECK(json_array_size(jp(rp.body, "/channels")) == 1);
        CHECK(streq(jps(rp.body, "/channels/0/name"), "incidents"));
        /* a G id is a pre-2021 private channel: is_group; a new one is a private is_channel */
        CHECK(json_is_true(jp(rp.body, "/channels/0/is_group")));
        CHECK(json_is_false(jp(rp.body, "/channels/0/is_channel")));
        sdk(t, &rp, "conversations.create", "name=secret-plans&is_private=true");
        CHECK(jps(rp.body, "/channel/id")[0] == 'C');
        CHECK(json_is_true(jp(rp.body, "/channel/is_channel")));
        CHECK(json_is_false(jp(rp.body, "/channel/is_group")));
        CHECK(json_is_true(jp(rp.body, "/channel/is_private")));
        sdk(t, &rp, "conversations.leave", "channel=secret-plans");
        CHECK(streq_ptr(jps(rp.body, "/error"), "last_member") && !rp.state_mutation);
        sdk(t, &rp, "conversations.list", "types=public_channel,bogus");
        CHECK(streq(jps(rp.body, "/error"), "invalid_types"));
        sdk(t, &rp, "conversations.list", "limit=lots");
        CHECK(streq(jps(rp.body, "/error"), "invalid_limit"));

        sdk(t, &rp, "users.list", NULL);
        /* erin is hidden from the bot */
        CHECK(json_array_size(jp(rp.body, "/members")) == 6 && streq(rp.tool, "slack_list_users"));
        CHECK(streq(jps(rp.body, "/members/0/name"), "alice"));
        CHECK(streq(jps(rp.body, "/members/0/team_id"), "T_POME"));
        CHECK(json_is_true(jp(rp.body, "/members/5/is_bot")) && !jp(rp.body, "/members/0/hidden"));
        sdk(t, &rp, "users.profile.get", "user=bob");
        CHECK(streq(jps(rp.body, "/profile/real_name"), "Bob"));
        sdk(t, &rp, "users.profile.get", NULL);
        CHECK(streq(jps(rp.body, "/profile/real_name"), "Pome Agent") &&
              !jp(rp.body, "/profile/email"));
        sdk(t, &rp, "users.profile.get", "user=U0NOBODY");
        CHECK(streq(jps(rp.body, "/error"), "user_not_found"));
        twin_reply_done(&rp);
        twin_free(t);
}

/*
 * History pages by ts, as Slack's next_ts cursor does: a post or a deletion between two
 * pages neither repeats nor skips a message of the channel (an offset would, newest first).
 */
static void test_history_cursor(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        char form[256];
        /* #engineering: 25 top-level messages */
        sdk(t, &rp, "conversations.history", "channel=C_ENGINEERING&limit=10");
        CHECK(json_array_size(jp(rp.body, "/messages")) == 10 &&
              json_is_true(jp(rp.body, "/has_more")));
        _cleanup_free_ char *last = strdup(jps(rp.body, "/messages/9/ts"));
        const char *cursor = jps(rp.body, "/response_metadata/next_cursor");
        /* base64 "next_ts:<digits>", the shape slack.com uses */
        _cleanup_free_ char *raw = NULL;
        CHECK(cursor && twin_base64_decode(cursor, &raw) == 0 && startswith(raw, "next_ts:"));
        snprintf(form, sizeof(form), "channel=C_ENGINEERING&limit=10&cursor=%s", cursor);
        TwinReply post = {};
        sdk(t, &post, "chat.postMessage", "channel=C_ENGINEERING&text=meanwhile");
        CHECK(json_is_true(jp(post.body, "/ok")));
        twin_reply_done(&post);
        sdk(t, &rp, "conversations.history", form);
        CHECK(json_array_size(jp(rp.body, "/messages")) == 10);
        CHECK(strcmp(jps(rp.body, "/messages/0/ts"), last) < 0);
        CHECK(!streq(jps(rp.body, "/messages/0/text"), "meanwhile"));
        /* the message the cursor names deleted: the page starts at the next older one */
        _cleanup_free_ char *first = strdup(jps(rp.body, "/messages/0/ts"));
        _cleanup_free_ char *second = strdup(jps(rp.body, "/messages/1/ts"));
        json_t *msgs = jp(twin_world(t), "/channels/2/messages");
        for (size_t i = 0; i < json_array_size(msgs); i++)
                if (streq(json_string_value(jp(json_array_get(msgs, i), "/ts")), first)) {
                        json_array_remove(msgs, i);
                        break;
                }
        sdk(t, &rp, "conversations.history", form);
        CHECK(streq(jps(rp.body, "/messages/0/ts"), second));
        /* the last page ends with an empty cursor */
        sdk(t, &rp, "conversations.history", "channel=C_ENGINEERING&limit=1000");
        CHECK(streq(jps(rp.body, "/response_metadata/next_cursor"), ""));
        CHECK(json_is_false(jp(rp.body, "/has_more")));
        sdk(t, &rp, "conversations.history", "channel=C_ENGINEERING&cursor=b2Zmc2V0OjE%3D");
        CHECK(streq_ptr(jps(rp.body, "/error"), "invalid_cursor"));
        /* a thread pages oldest first; the parent leads the first page only */
        sdk(t, &rp, "conversations.replies", "channel=C_ENGINEERING&ts=1700000720.000100&limit=2");
        CHECK(streq_ptr(jps(rp.body, "/messages/0/ts"), "1700000720.000100"));
        CHECK(streq_ptr(jps(rp.body, "/messages/1/ts"), "1700000780.000200"));
        snprintf(form, sizeof(form), "channel=C_ENGINEERING&ts=1700000720.000100&limit=2&cursor=%s",
                 jps(rp.body, "/response_metadata/next_cursor"));
        sdk(t, &rp, "conversations.replies", form);
        CHECK(json_array_size(jp(rp.body, "/messages")) == 1);
        CHECK(streq_ptr(jps(rp.body, "/messages/0/ts"), "1700000780.000300"));
        CHECK(json_is_false(jp(rp.body, "/has_more")));
        twin_reply_done(&rp);
        twin_free(t);
}

/*
 * chat.scheduleMessage: refused in the past and beyond 120 days; listed soonest first with
 * oldest/latest and cursors; delivered lazily once post_at has passed (before any call,
 * /_pome/state included), in post_at order, in its thread, with the delivery's ts, each as
 * an event stamped slack_schedule_message; then gone from the list and no longer deletable.
 */
static void test_scheduled(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        char form[256];
        const long long now = TWIN_TEST_NOW;

        snprintf(form, sizeof(form), "channel=C_GENERAL&text=x&post_at=%lld", now);
        sdk(t, &rp, "chat.scheduleMessage", form);
        CHECK(streq(jps(rp.body, "/error"), "time_in_past") && !rp.state_mutation);
        snprintf(form, sizeof(form), "channel=C_GENERAL&text=x&post_at=%lld",
                 now + 120 * 86400 + 1);
        sdk(t, &rp, "chat.scheduleMessage", form);
        CHECK(streq(jps(rp.body, "/error"), "time_too_far"));
        sdk(t, &rp, "chat.scheduleMessage", "channel=C_GENERAL&text=x&post_at=soon");
        CHECK(streq(jps(rp.body, "/error"), "invalid_time"));
        snprintf(form, sizeof(form), "channel=C_DESIGN&text=x&post_at=%lld", now + 60);
        sdk(t, &rp, "chat.scheduleMessage", form);
        CHECK(streq(jps(rp.body, "/error"), "not_in_channel"));

        /* three messages: the later one scheduled first; one in the seeded greeting's thread */
        snprintf(form, sizeof(form), "channel=C_GENERAL&text=second&post_at=%lld", now + 120);
        sdk(t, &rp, "chat.scheduleMessage", form);
        CHECK(json_is_true(jp(rp.body, "/ok")) && rp.state_mutation);
        char second[16];
        snprintf(second, sizeof(second), "%s", jps(rp.body, "/scheduled_message_id"));
        snprintf(form, sizeof(form),
                 "channel=C_GENERAL&text=first&post_at=%lld&thread_ts=1700000000.000100", now + 60);
        sdk(t, &rp, "chat.scheduleMessage", form);
        CHECK(json_is_true(jp(rp.body, "/ok")) && jpi(rp.body, "/post_at") == now + 60);
        twin_test_call(t, &rp, "slack_schedule_message",
                       "{\"channel_id\":\"C_RANDOM\",\"message\":\"much later\",\"post_at\":"
                       "1780086400}");
        CHECK(json_is_true(jp(rp.body, "/result/structuredContent/ok")));
        CHECK(streq(rp.tool, "slack_schedule_message") && !rp.events);

        sdk(t, &rp, "chat.scheduledMessages.list", NULL);
        CHECK(json_array_size(jp(rp.body, "/scheduled_messages")) == 3);
        CHECK(streq(jps(rp.body, "/scheduled_messages/0/text"), "first"));
        CHECK(streq(jps(rp.body, "/scheduled_messages/2/text"), "much later"));
        sdk(t, &rp, "chat.scheduledMessages.list", "channel=C_GENERAL&limit=1");
        CHECK(json_array_size(jp(rp.body, "/scheduled_messages")) == 1);
        const char *cur = jps(rp.body, "/response_metadata/next_cursor");
        CHECK(cur && cur[0]);
        snprintf(form, sizeof(form), "channel=C_GENERAL&limit=1&cursor=%s", cur ? cur : "");
        sdk(t, &rp, "chat.scheduledMessages.list", form);
        CHECK(streq(jps(rp.body, "/scheduled_messages/0/text"), "second"));
        CHECK(streq(jps(rp.body, "/response_metadata/next_cursor"), ""));
        snprintf(form, sizeof(form), "oldest=%lld&latest=%lld", now + 100, now + 200);
        sdk(t, &rp, "chat.scheduledMessages.list", form);
        CHECK(json_array_size(jp(rp.body, "/scheduled_messages")) == 1);
        CHECK(streq(jps(rp.body, "/scheduled_messages/0/text"), "second"));
        sdk(t, &rp, "chat.scheduledMessages.list", "channel=G_LEADERSHIP");
        CHECK(streq(jps(rp.body, "/error"), "invalid_channel"));
        size_t before = json_array_size(general(t));

        /* nothing is due yet: nothing moves */
        twin_set_clock(t, now + 59);
        sdk(t, &rp, "auth.test", NULL);
        CHECK(!rp.events && json_array_size(general(t)) == before);

        /* both #general messages come due at once: delivered in post_at order */
        twin_set_clock(t, now + 500);
        twin_test_req(t, &rp, "GET", "/_pome/state", NULL, NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.events) == 2);
        CHECK(streq(jps(rp.events, "/0/tool"), "slack_schedule_message"));
        CHECK(streq(jps(rp.events, "/0/path"), "/chat.scheduleMessage"));
        CHECK(streq(jps(rp.events, "/0/response_body/message/text"), "first"));
        CHECK(streq(jps(rp.events, "/1/response_body/message/text"), "second"));
        CHECK(streq(jps(rp.events, "/1/request_body/scheduled_message_id"), second));
        CHECK(json_is_null(jp(rp.events, "/1/state_delta/before")));
        CHECK(streq(jps(rp.events, "/0/response_body/ts"), "1780000500.000000"));
        CHECK(streq(jps(rp.events, "/1/response_body/ts"), "1780000500.000001"));
        CHECK(json_array_size(jp(rp.body, "/channels/0/messages")) == before + 2);
        CHECK(json_array_size(general(t)) == before + 2);
        CHECK(streq(jps(general(t), "/2/thread_ts"), "1700000000.000100"));
        CHECK(!jp(general(t), "/3/thread_ts") && streq(jps(general(t), "/3/user"), "U_PRIMARY"));
        /* the thread shows it; the channel shows the top-level one */
        sdk(t, &rp, "conversations.replies", "channel=C_GENERAL&ts=1700000000.000100");
        CHECK(!rp.events && json_array_size(jp(rp.body, "/messages")) == 2);
        CHECK(streq(jps(rp.body, "/messages/1/text"), "first"));
        sdk(t, &rp, "chat.deleteScheduledMessage", "channel=C_GENERAL&scheduled_message_id=Q_NONE");
        CHECK(streq(jps(rp.body, "/error"), "invalid_scheduled_message_id"));
        snprintf(form, sizeof(form), "channel=C_GENERAL&scheduled_message_id=%s", second);
        sdk(t, &rp, "chat.deleteScheduledMessage", form);
        CHECK(streq(jps(rp.body, "/error"), "invalid_scheduled_message_id") && !rp.state_mutation);
        sdk(t, &rp, "chat.scheduledMessages.list", NULL);
        CHECK(json_array_size(jp(rp.body, "/scheduled_messages")) == 1);

        /* a channel left meanwhile: the message is dropped, and the event says why */
        sdk(t, &rp, "conversations.leave", "channel=C_RANDOM");
        CHECK(json_is_true(jp(rp.body, "/ok")));
        twin_set_clock(t, now + 86400);
        twin_test_call(t, &rp, "slack_read_user_profile", "{}");
        CHECK(json_array_size(rp.events) == 1);
        CHECK(streq(jps(rp.events, "/0/response_body/error"), "not_in_channel"));
        CHECK(json_is_null(jp(rp.events, "/0/state_delta/after")));
        CHECK(json_array_size(jp(twin_world(t), "/scheduled")) == 0);
        twin_reply_done(&rp);
        twin_free(t);
}

/* The texts of a search.messages answer's matches, joined by '|', into buf. */
static const char *match_texts(json_t *body, char *buf, size_t len)
{
        size_t i, o = 0;
        json_t *m;
        buf[0] = 0;
        json_array_foreach (jp(body, "/messages/matches"), i, m) {
                int n = snprintf(buf + o, len - o, "%s%s", i ? "|" : "",
                                 json_string_value(json_object_get(m, "text")));
                if (n < 0 || (size_t)n >= len - o)
                        break;
                o += (size_t)n;
        }
        return buf;
}

/* search.messages: Slack's modifiers, exclusions, phrases, sorting and both paginations. */
static void test_search_modifiers(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        char buf[2048];
        /* today's messages (2026-05-28) beside the seed's (2023-11-14) */
        sdk(t, &rp, "chat.postMessage",
            "channel=C_ENGINEERING&text=Staging+runbook:+%3Chttps://example.com/runbook%3E");
        sdk(t, &rp, "chat.postMessage",
            "channel=C_ENGINEERING&text=staging+staging+staging:+the+staging+box+is+down");
        struct {
                const char *query, *extra, *want;
        } cases[] = {
                /* words start words of the text; all must hold */
                {"staging", "&sort=timestamp",
                 "staging staging staging: the staging box is down|Staging runbook: "
                 "<https://example.com/runbook>|Rotating the staging certificates|Smoke tests "
                 "passed on staging|Deploy to staging done"},
                {"stag*", "&sort=timestamp&sort_dir=asc&count=2",
                 "Deploy to staging done|Smoke tests passed on staging"},
                {"taging", "", ""},
                /* score: the most hits first, newer first among equals */
                {"staging", "&count=2",
                 "staging staging staging: the staging box is down|Staging runbook: "
                 "<https://example.com/runbook>"},
                {"\"staging done\"", "", "Deploy to staging done"},
                {"\"done staging\"", "", ""},
                {"staging -deploy -\"the staging box\" -runbook -rotating", "",
                 "Smoke tests passed on staging"},
                {"from:@carol staging", "", "Deploy to staging done"},
                {"from:<@U_ALICE> from:dave staging", "", "Smoke tests passed on staging"},
                {"from:me staging", "",
                 "staging staging staging: the staging box is down|Staging "
                 "runbook: <https://example.com/runbook>"},
                {"-from:me -in:#engineering tacos", "", "Tacos!"},
                {"in:<#C_RANDOM|random> in:#general", "&sort=timestamp",
                 "Tacos!|Anyone up for lunch?|morning :wave:|morning team"},
                {"in:@erin", "", ""},
                {"in:#leadership reorg", "", ""},
                /* dates are UTC days */
                {"staging before:2026-05-28", "&sort=timestamp",
                 "Rotating the staging certificates|Smoke tests passed on staging|Deploy to "
                 "staging done"},
                {"staging after:2026-05-27", "&sort=timestamp",
                 "staging staging staging: the staging box is down|Staging runbook: "
                 "<https://example.com/runbook>"},
                {"staging after:2026-05-28", "", ""},
                {"staging on:2026-05-28 has:link", "",
                 "Staging runbook: <https://example.com/runbook>"},
                {"staging during:2026-05 -has:link", "",
                 "staging staging staging: the staging box is down"},
                {"during:2023-11-14 on:today", "", ""},
                {"checkout during:2023", "", "SEV2: elevated 500s on checkout"},
                {"on:2023-02-30", "", ""},
                {"has:reaction", "&sort=timestamp", "Deploy to staging done|Tacos!"},
                {"has::taco:", "", "Tacos!"},
                {"has::rocket: -has::eyes:", "", ""},
                {"has:pin", "", "Deploy to staging done"},
                {"is:thread in:#engineering", "&sort=timestamp",
                 "Great, promoting to prod after lunch|Smoke tests passed on staging|Deploy to "
                 "staging done"},
                {"is:thread -in:#engineering", "",
                 "Paging payments on-call|SEV2: elevated 500s on "
                 "checkout"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char form[512];
                _cleanup_free_ char *q = NULL;
                size_t n = strlen(cases[i].query);
                q = malloc(n * 3 + 1);
                size_t o = 0;
                for (size_t k = 0; k < n; k++)
                        o += (size_t)sprintf(q + o, "%%%02X", (unsigned char)cases[i].query[k]);
                snprintf(form, sizeof(form), "query=%s%s", q, cases[i].extra);
                sdk(t, &rp, "search.messages", form);
                CHECK(json_is_true(jp(rp.body, "/ok")));
                if (!streq(match_texts(rp.body, buf, sizeof(buf)), cases[i].want))
                        fprintf(stderr, "query %s: got \"%s\"\n", cases[i].query, buf);
                CHECK(streq(buf, cases[i].want));
        }

        /* page/count and cursor ("*", then next_cursor) walk the same order */
        sdk(t, &rp, "search.messages", "query=in%3A%23engineering&count=10&page=3");
        CHECK(jpi(rp.body, "/messages/total") == 29 && jpi(rp.body, "/messages/paging/pages") == 3);
        CHECK(json_array_size(jp(rp.body, "/messages/matches")) == 9);
        CHECK(jpi(rp.body, "/messages/pagination/first") == 21);
        CHECK(streq(jps(rp.body, "/response_metadata/next_cursor"), ""));
        size_t seen = 0, pages = 0;
        char cursor[128] = "*";
        while (cursor[0] && pages < 10) {
                char form[256];
                snprintf(form, sizeof(form), "query=in%%3A%%23engineering&limit=10&cursor=%s",
                         cursor);
                sdk(t, &rp, "search.messages", form);
                CHECK(json_is_true(jp(rp.body, "/ok")));
                seen += json_array_size(jp(rp.body, "/messages/matches"));
                pages++;
                snprintf(cursor, sizeof(cursor), "%s",
                         strempty(jps(rp.body, "/response_metadata/next_cursor")));
                CHECK(streq(cursor, strempty(jps(rp.body, "/messages/pagination/next_cursor"))));
        }
        CHECK(seen == 29 && pages == 3);
        sdk(t, &rp, "search.messages", "query=staging&cursor=bm9wZQ%3D%3D");
        CHECK(streq(jps(rp.body, "/error"), "invalid_cursor"));

        /* highlight=true: Slack's private-use markers around each hit (a word's whole word) */
        sdk(t, &rp, "search.messages", "query=stag*+done+in%3A%23engineering&highlight=true");
        CHECK(streq(jps(rp.body, "/messages/matches/0/text"),
                    "Deploy to \xee\x80\x80staging\xee\x80\x81 \xee\x80\x80"
                    "done\xee\x80\x81"));
        sdk(t, &rp, "search.messages", "query=%22staging+done%22&highlight=1");
        CHECK(streq(jps(rp.body, "/messages/matches/0/text"),
                    "Deploy to \xee\x80\x80staging done\xee\x80\x81"));
        sdk(t, &rp, "search.messages", "query=%22staging+done%22");
        CHECK(streq(jps(rp.body, "/messages/matches/0/text"), "Deploy to staging done"));
        sdk(t, &rp, "search.messages", "query=x&highlight=maybe");
        CHECK(streq(jps(rp.body, "/error"), "invalid_arguments"));

        /* the MCP tools take the same language; slack_search_public stays public */
        twin_test_call(t, &rp, "slack_search_public",
                       "{\"query\":\"is:thread\",\"sort\":\"timestamp\"}");
        CHECK(jpi(rp.body, "/result/structuredContent/messages/total") == 3);
        twin_test_call(t, &rp, "slack_search_public_and_private",
                       "{\"query\":\"is:thread\",\"limit\":1}");
        CHECK(jpi(rp.body, "/result/structuredContent/messages/total") == 5);
        CHECK(jps(rp.body, "/result/structuredContent/response_metadata/next_cursor")[0]);
        twin_reply_done(&rp);
        twin_free(t);
}

/* files.upload and the upload URL with multipart/form-data bodies, as the SDK sends them. */
static void test_multipart_upload(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        const char *ct = "multipart/form-data; boundary=--------------------------4242";
        sdk(t, &rp, "files.list", NULL);
        size_t files = json_array_size(jp(rp.body, "/files"));
        twin_test_req(t, &rp, "POST", "/api/files.upload", NULL, ct,
                      "----------------------------4242\r\n"
                      "Content-Disposition: form-data; name=\"channels\"\r\n\r\n"
                      "C_RANDOM\r\n"
                      "----------------------------4242\r\n"
                      "Content-Disposition: form-data; name=\"file\"; filename=\"notes.md\"\r\n"
                      "Content-Type: application/octet-stream\r\n\r\n"
                      "# Notes\r\n- one\r\n"
                      "----------------------------4242--\r\n");
        CHECK(json_is_true(jp(rp.body, "/ok")) && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/file/name"), "notes.md") && jpi(rp.body, "/file/size") == 14);
        CHECK(streq(jps(rp.body, "/file/channels/0"), "C_RANDOM"));
        /* the tape keeps the part without its bytes */
        CHECK(jpi(rp.request_body, "/file/size") == 14 && !jp(rp.request_body, "/file/content"));
        CHECK(streq(jps(rp.request_body, "/channels"), "C_RANDOM"));
        char form[64];
        snprintf(form, sizeof(form), "file=%s", jps(rp.body, "/file/id"));
        sdk(t, &rp, "files.info", form);
        CHECK(streq(jps(rp.body, "/content"), "# Notes\r\n- one"));

        /* malformed framing: refused, nothing changes */
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        twin_test_req(t, &rp, "POST", "/api/files.upload", NULL, ct,
                      "----------------------------4242\r\n"
                      "Content-Disposition: form-data; name=\"content\"\n\nx\r\n"
                      "----------------------------4242--\r\n");
        CHECK(streq(jps(rp.body, "/error"), "invalid_form_data") && !rp.state_mutation);
        CHECK(streq(rp.tool, "slack_upload_file"));
        twin_test_req(t, &rp, "POST", "/api/files.upload", NULL, "multipart/form-data", "x");
        CHECK(streq(jps(rp.body, "/error"), "invalid_form_data"));
        CHECK(json_equal(before, twin_world(t)));

        /* v2: getUploadURLExternal, the bytes as the SDK posts them, completeUploadExternal */
        sdk(t, &rp, "files.getUploadURLExternal", "filename=a.txt&length=5");
        char path[96];
        const char *url = jps(rp.body, "/upload_url");
        CHECK(url && startswith(url, BASE));
        snprintf(path, sizeof(path), "%s", url ? url + strlen(BASE) : "/");
        char id[32];
        snprintf(id, sizeof(id), "%s", jps(rp.body, "/file_id"));
        twin_test_req(t, &rp, "POST", path, NULL, "multipart/form-data; boundary=b",
                      "--b\r\nContent-Disposition: form-data; name=\"body\"; "
                      "filename=\"Untitled\"\r\n\r\nhello\r\n--b--\r\n");
        CHECK(json_is_true(jp(rp.body, "/ok")) && streq(rp.tool, "slack_put_file_upload"));
        char files_arg[128];
        snprintf(files_arg, sizeof(files_arg),
                 "files=%%5B%%7B%%22id%%22%%3A%%22%s%%22%%7D%%5D&channel_id=C_GENERAL", id);
        sdk(t, &rp, "files.completeUploadExternal", files_arg);
        CHECK(json_is_true(jp(rp.body, "/ok")));
        snprintf(form, sizeof(form), "file=%s", id);
        sdk(t, &rp, "files.info", form);
        CHECK(streq(jps(rp.body, "/content"), "hello") && jpi(rp.body, "/file/size") == 5);
        sdk(t, &rp, "files.list", NULL);
        CHECK(json_array_size(jp(rp.body, "/files")) == files + 2);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_errors(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));

        static const struct {
                const char *method, *ctype, *body, *error;
        } cases[] = {
                {"chat.postMessage", FORM, "channel=C0NOPE&text=x", "channel_not_found"},
                {"chat.postMessage", FORM, "text=x", "channel_not_found"},
                {"chat.postMessage", FORM, "channel=C_GENERAL", "no_text"},
                {"chat.postMessage", FORM, "channel=C_GENERAL&text=", "no_text"},
                {"chat.postMessage", FORM, "channel=C_GENERAL&blocks=not-json", "invalid_blocks"},
                {"chat.postMessage", JSON, "{\"channel\":\"C_GENERAL\",\"text\":{\"x\":1}}",
                 "invalid_arguments"},
                {"chat.postMessage", JSON, "{\"channel\":[\"C_GENERAL\"],\"text\":\"x\"}",
                 "invalid_arguments"},
                {"chat.postMessage", JSON, "{\"channel\":", "invalid_json"},
                {"chat.postMessage", FORM, "channel=C_GENERAL&text=x&thread_ts=abc",
                 "thread_not_found"},
                /* a required argument left out: Slack's validator, not a lookup */
                {"conversations.history", FORM, "", "invalid_arguments"},
                {"conversations.history", FORM, "channel=", "channel_not_found"},
                {"conversations.info", FORM, "", "invalid_arguments"},
                {"conversations.members", FORM, "", "invalid_arguments"},
                {"conversations.replies", FORM, "channel=C_GENERAL", "invalid_arguments"},
                {"conversations.replies", FORM, "ts=1700000000.000100", "invalid_arguments"},
                {"conversations.join", FORM, "", "invalid_arguments"},
                {"conversations.leave", FORM, "", "invalid_arguments"},
                {"conversations.archive", FORM, "", "invalid_arguments"},
                {"conversations.kick", FORM, "channel=C_GENERAL", "invalid_arguments"},
                {"conversations.setTopic", FORM, "channel=C_GENERAL", "invalid_arguments"},
                {"conversations.setPurpose", FORM, "channel=C_GENERAL", "invalid_arguments"},
                {"conversations.rename", FORM, "channel=C_GENERAL", "invalid_arguments"},
                {"conversations.create", FORM, "", "invalid_arguments"},
                {"conversations.create", FORM, "name=", "invalid_name_required"},
                {"conversations.invite", FORM, "channel=C_GENERAL", "no_user"},
                {"conversations.history", FORM, "channel=C_GENERAL&latest=soon",
                 "invalid_ts_latest"},
                {"conversations.history", FORM, "channel=C_GENERAL&oldest=-5", "invalid_ts_oldest"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char path[64];
                snprintf(path, sizeof(path), "/api/%s", cases[i].method);
                twin_test_req(t, &rp, "POST", path, NULL, cases[i].ctype, cases[i].body);
                if (!streq_ptr(jps(rp.body, "/error"), cases[i].error))
                        fprintf(stderr, "slack case %zu: %s\n", i, jps(rp.body, "/error"));
                CHECK(rp.status == 200 && json_is_false(jp(rp.body, "/ok")));
                CHECK(streq_ptr(jps(rp.body, "/error"), cases[i].error));
                CHECK(!rp.state_mutation && !rp.state_delta && rp.tool);
        }
        /* ...and names the field, as @slack/web-api logs it; over MCP by the tool's name */
        sdk(t, &rp, "conversations.replies", "channel=C_GENERAL");
        CHECK(streq_ptr(jps(rp.body, "/response_metadata/messages/0"),
                        "[ERROR] missing required field: ts"));
        sdk(t, &rp, "conversations.history", "");
        CHECK(streq_ptr(jps(rp.body, "/response_metadata/messages/0"),
                        "[ERROR] missing required field: channel"));
        twin_test_call(t, &rp, "slack_read_channel", "{}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        CHECK(streq_ptr(jps(rp.body, "/result/structuredContent/error"), "invalid_arguments"));
        CHECK(streq_ptr(jps(rp.body, "/result/structuredContent/response_metadata/messages/0"),
                        "[ERROR] missing required field: channel_id"));

        /* blocks without text is a message */
        sdk(t, &rp, "chat.postMessage",
            "channel=C_GENERAL&blocks=%5B%7B%22type%22%3A%22divider%22%7D%5D");
        CHECK(json_is_true(jp(rp.body, "/ok")));
        CHECK(streq(jps(rp.body, "/message/blocks/0/type"), "divider"));
        json_array_remove(general(t), 2);
        json_object_set_new(twin_world(t), "last_ts_us",
                            json_incref(json_object_get(before, "last_ts_us")));
        CHECK(json_equal(before, twin_world(t)));

        /* an unknown method is the engine's loud 501, not ok:false */
        twin_test_req(t, &rp, "POST", "/api/admin.users.invite", NULL, FORM, "email=x");
        CHECK(rp.status == 501 && streq(rp.fidelity, "unsupported") && !rp.tool);
        CHECK(streq(jps(rp.body, "/twin"), "slack"));
        twin_test_req(t, &rp, "POST", "/api/chat.startStream", NULL, FORM, "channel=C_GENERAL");
        CHECK(rp.status == 501);

        twin_kind_slack.auth_error(TWIN_AUTH_MISSING, &rp);
        CHECK(rp.status == 401 && streq(jps(rp.body, "/error"), "not_authed"));
        CHECK(json_is_false(jp(rp.body, "/ok")));
        twin_reply_done(&rp);
        twin_kind_slack.auth_error(TWIN_AUTH_INVALID, &rp);
        CHECK(rp.status == 401 && streq(jps(rp.body, "/error"), "invalid_auth"));
        twin_reply_done(&rp);
        twin_kind_slack.error(500, "internal_error", "x", &rp);
        CHECK(rp.status == 500 && streq(jps(rp.body, "/error"), "internal_error"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_state_and_redaction(void)
{
        Twin *t = twin_seed_text(
                "{\"team\":{\"name\":\"Big Co\",\"domain\":\"bigco\"},\"users\":[{\"name\":"
                "\"alice\",\"profile\":{\"email\":\"a@x\",\"api_token\":\"xoxp-1\"}}],"
                "\"channels\":[{\"name\":\"#ops\",\"is_private\":true,\"messages\":[{\"text\":"
                "\"b\",\"user\":\"alice\",\"ts\":\"1700000001.000000\"},{\"text\":\"a\",\"user\":"
                "\"alice\",\"ts\":\"1700000000.000000\"},{\"text\":\"r\",\"thread_ts\":"
                "\"1700000000.000000\",\"reactions\":[{\"name\":\"eyes\",\"users\":[\"alice\"]}]}]}"
                "],\"secrets\":{\"deploy_key\":\"sk_live_123\"}}");
        TwinReply rp = {};
        twin_test_req(t, &rp, "GET", "/_pome/state", NULL, NULL, NULL);
        json_t *s = rp.body;
        CHECK(streq(jps(s, "/secrets"), "[REDACTED]"));
        CHECK(streq(jps(s, "/users/0/profile/api_token"), "[REDACTED]"));
        CHECK(streq(jps(s, "/users/0/profile/email"), "a@x"));
        CHECK(!jp(s, "/next_id") && !jp(s, "/last_ts_us"));
        /* seeded messages are kept oldest first whatever the seed order */
        CHECK(streq(jps(s, "/channels/0/messages/0/text"), "a"));
        CHECK(streq(jps(s, "/channels/0/messages/2/text"), "r"));
        /* the seed's ts-less reply got one after the latest seeded ts */
        CHECK(streq(jps(s, "/channels/0/messages/2/ts"), "1700000001.000100"));
        CHECK(streq(jps(s, "/channels/0/name"), "ops"));
        /* a private channel has a C id, as Slack has given them since 2021 */
        CHECK(jps(s, "/channels/0/id")[0] == 'C');
        CHECK(jps(s, "/users/0/id")[0] == 'U' && jps(s, "/team/id")[0] == 'T');
        /* the synthetic bot */
        CHECK(streq(jps(s, "/users/1/name"), "pome-bot") && json_is_true(jp(s, "/users/1/is_bot")));
        CHECK(streq(jps(s, "/bot/user_id"), jps(s, "/users/1/id")));
        /* the live world keeps the secret: the grader's export still sees it */
        CHECK(streq(jps(twin_world(t), "/secrets/deploy_key"), "sk_live_123"));

        sdk(t, &rp, "auth.test", NULL);
        CHECK(streq(jps(rp.body, "/url"), "https://bigco.slack.com/"));
        /* a post made while the clock is behind the seed still follows it */
        twin_set_clock(t, 1600000000);
        sdk(t, &rp, "chat.postMessage", "channel=ops&text=late");
        CHECK(streq(jps(rp.body, "/ts"), "1700000001.000101"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_seeds(void)
{
        char err[256] = "";
        _cleanup_json_ json_t *broken = twin_test_seed("slack", "broken");
        Twin *b = NULL;
        CHECK(broken && twin_new(&twin_kind_slack, broken, &b, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "channels[0].messages[0].user: must name a user") != NULL);

        static const struct {
                const char *seed, *msg;
        } cases[] = {
                {"{\"workspace\":{}}", "unknown key \"workspace\""},
                {"{\"team\":[]}", "team: must be an object"},
                {"{\"team\":{\"id\":\"lower\"}}", "team.id"},
                {"{\"team\":{\"domain\":\"Big Co\"}}", "team.domain"},
                {"{\"users\":[{\"id\":\"C123\",\"name\":\"x\"}]}", "users[0].id"},
                {"{\"users\":[{\"name\":\"a\"},{\"name\":\"a\"}]}", "users[1].name: duplicate"},
                {"{\"users\":[{\"id\":\"U1A\",\"name\":\"a\"},{\"id\":\"U1A\",\"name\":\"b\"}]}",
                 "users[1].id: duplicate"},
                {"{\"users\":[{\"name\":\"a\",\"is_bot\":\"yes\"}]}", "users[0].is_bot"},
                {"{\"users\":[{}]}", "users[0].name"},
                {"{\"channels\":[{\"name\":\"General\"}]}", "channels[0].name"},
                {"{\"channels\":[{\"name\":\"a\"},{\"name\":\"#a\"}]}",
                 "channels[1].name: duplicate"},
                {"{\"channels\":[{\"name\":\"a\",\"members\":[\"ghost\"]}]}",
                 "channels[0].members[0]"},
                {"{\"channels\":[{\"name\":\"a\",\"messages\":[{\"ts\":\"17.1234567\"}]}]}",
                 "channels[0].messages[0].ts"},
                {"{\"channels\":[{\"name\":\"a\",\"messages\":[{\"ts\":\"1.000001\"},{\"ts\":"
                 "\"1.000001\"}]}]}",
                 "channels[0].messages[1].ts"},
                {"{\"channels\":[{\"name\":\"a\",\"messages\":[{\"thread_ts\":\"5.000000\"}]}]}",
                 "thread_ts 5.000000 has no message"},
                {"{\"channels\":[{\"name\":\"a\",\"messages\":[{\"text\":7}]}]}",
                 "channels[0].messages[0].text"},
                {"{\"channels\":[{\"name\":\"a\",\"messages\":[{\"reactions\":[{\"name\":\"x\","
                 "\"users\":[]}]}]}]}",
                 "channels[0].messages[0].reactions[0].users"},
                /* unknown keys at any depth are refused by path, never dropped */
                {"{\"team\":{\"name\":\"a\",\"plan\":\"pro\"}}", "team.plan: unknown key"},
                {"{\"users\":[{\"name\":\"a\",\"colour\":\"red\"}]}",
                 "users[0].colour: unknown key"},
                {"{\"channels\":[{\"name\":\"a\",\"is_shared\":true}]}",
                 "channels[0].is_shared: unknown key"},
                {"{\"channels\":[{\"name\":\"a\",\"messages\":[{\"text\":\"x\",\"files\":[]}]}]}",
                 "channels[0].messages[0].files: unknown key"},
                {"{\"channels\":[{\"name\":\"a\",\"messages\":[{\"reactions\":[{\"name\":\"x\","
                 "\"users\":[],\"skin\":1}]}]}]}",
                 "channels[0].messages[0].reactions[0].skin: unknown key"},
                {"{\"emoji\":{\"Bad Name\":\"https://x\"}}", "emoji.Bad Name"},
                {"{\"users\":[{\"id\":\"u_lower\",\"name\":\"a\"}]}", "users[0].id"},
                {"{\"users\":[{\"name\":\"a\"}],\"channels\":[{\"name\":\"c\",\"messages\":[{"
                 "\"reactions\":"
                 "[{\"name\":\"x\",\"user\":\"a\",\"users\":[\"a\"]}]}]}]}",
                 "channels[0].messages[0].reactions[0]: needs users (a list) or user (one)"},
                {"{\"emoji\":[{\"name\":\"ok\",\"color\":\"red\"}]}",
                 "emoji[0].color: unknown key"},
                {"{\"emoji\":\"party\"}", "emoji: must be an object"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *s = json_loads(cases[i].seed, 0, NULL);
                err[0] = 0;
                CHECK(s && twin_new(&twin_kind_slack, s, &b, err, sizeof(err)) == -EINVAL);
                if (!strstr(err, cases[i].msg)) {
                        fprintf(stderr, "seed case %zu: got \"%s\", want \"%s\"\n", i, err,
                                cases[i].msg);
                        check_failures++;
                }
        }

        /* generated ids skip the ones a seed already uses */
        Twin *t = twin_seed_text("{\"users\":[{\"id\":\"U00000002\",\"name\":\"a\"},{\"name\":"
                                 "\"b\"}],\"channels\":[{\"name\":\"c\"}]}");
        json_t *w = twin_world(t);
        CHECK(streq(jps(w, "/team/id"), "T00000001"));
        CHECK(streq(jps(w, "/users/1/id"), "U00000003"));
        CHECK(streq(jps(w, "/channels/0/id"), "C00000006"));
        CHECK(json_array_size(jp(w, "/channels/0/members")) == 3);
        twin_free(t);
}

/* Hosted Pome's task-seed format: _meta, T_ACME/U_PRIMARY/C_GENERAL ids, the agent bound. */
static void test_hosted_seed(void)
{
        Twin *t = twin_test_new("slack", "hosted-task");
        TwinReply rp = {};
        sdk(t, &rp, "auth.test", NULL);
        CHECK(streq(jps(rp.body, "/user_id"), "U_PRIMARY") &&
              streq(jps(rp.body, "/team_id"), "T_ACME"));
        /* no domain in the seed: made from the team's name */
        CHECK(streq(jps(rp.body, "/url"), "https://acme-corp.slack.com/"));
        CHECK(!jp(rp.body, "/bot_id"));
        sdk(t, &rp, "conversations.list", "types=public_channel,private_channel");
        CHECK(json_array_size(jp(rp.body, "/channels")) == 2);
        CHECK(streq(jps(rp.body, "/channels/1/id"), "C_SECPRIV"));
        /* their reactions come one user per entry; Slack shows them merged */
        sdk(t, &rp, "conversations.history", "channel=C_SECPRIV");
        CHECK(streq(jps(rp.body, "/messages/0/reactions/0/users/0"), "U_PRIMARY"));
        CHECK(json_integer_value(jp(rp.body, "/messages/0/reactions/0/count")) == 2);
        CHECK(streq(jps(rp.body, "/messages/0/reactions/1/name"), "rotating_light"));
        /* their emoji list: aliases and bare names */
        sdk(t, &rp, "emoji.list", NULL);
        CHECK(streq(jps(rp.body, "/emoji/shipit"), "alias:squirrel"));
        CHECK(streq(jps(rp.body, "/emoji/squirrel"),
                    "https://emoji.slack-edge.com/T_ACME/squirrel.png"));
        /* B-prefixed user ids */
        sdk(t, &rp, "users.info", "user=B_DEPLOY");
        CHECK(json_is_true(jp(rp.body, "/user/is_bot")));
        sdk(t, &rp, "conversations.history", "channel=C_XFILES");
        CHECK(streq(jps(rp.body, "/error"), "channel_not_found"));
        sdk(t, &rp, "search.messages", "query=case");
        CHECK(json_integer_value(jp(rp.body, "/messages/total")) == 0);
        sdk(t, &rp, "chat.postMessage", "channel=C_GENERAL&text=Report+received");
        CHECK(json_is_true(jp(rp.body, "/ok")) &&
              streq(jps(rp.body, "/message/user"), "U_PRIMARY"));
        twin_reply_done(&rp);
        twin_free(t);
}

/* Membership as Slack enforces it, and the families beyond chat. */
static void test_membership(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        _cleanup_json_ json_t *before = NULL;
        static const struct {
                const char *method, *form, *error;
        } refused[] = {
                {"conversations.history", "channel=C_DESIGN", "not_in_channel"},
                {"chat.postMessage", "channel=design&text=x", "not_in_channel"},
                {"conversations.history", "channel=G_LEADERSHIP", "channel_not_found"},
                {"conversations.info", "channel=leadership", "channel_not_found"},
                {"conversations.join", "channel=G_LEADERSHIP", "channel_not_found"},
                {"chat.postMessage", "channel=old-project&text=x", "is_archived"},
                {"users.info", "user=U_ERIN", "user_not_found"},
                {"users.lookupByEmail", "email=erin%40partner.test", "users_not_found"},
                {"chat.delete", "channel=C_GENERAL&ts=1700000000.000100", "cant_delete_message"},
                {"chat.update", "channel=C_GENERAL&ts=1700000000.000100&text=x",
                 "cant_update_message"},
                {"conversations.create", "name=general", "name_taken"},
                {"conversations.create", "name=Has+Space", "invalid_name_specials"},
                {"conversations.create", "name=--_", "invalid_name_punctuation"},
                {"conversations.rename", "channel=random&name=-", "invalid_name_punctuation"},
                {"reactions.remove", "channel=C_GENERAL&timestamp=1700000000.000100&name=tada",
                 "no_reaction"},
                {"pins.add", "channel=C_ENGINEERING&timestamp=1700000720.000100", "already_pinned"},
                {"conversations.kick", "channel=C_GENERAL&user=U_PRIMARY", "cant_kick_self"},
                {"conversations.leave", "channel=general", "cant_leave_general"},
        };
        before = json_deep_copy(twin_world(t));
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                sdk(t, &rp, refused[i].method, refused[i].form);
                if (!streq_ptr(jps(rp.body, "/error"), refused[i].error))
                        fprintf(stderr, "membership case %zu: %s\n", i, jps(rp.body, "/error"));
                CHECK(streq_ptr(jps(rp.body, "/error"), refused[i].error) && !rp.state_mutation);
        }
        CHECK(json_equal(before, twin_world(t)));

        sdk(t, &rp, "conversations.join", "channel=design");
        CHECK(json_is_true(jp(rp.body, "/channel/is_member")) && rp.state_mutation);
        CHECK(streq(rp.tool, "slack_join_conversation"));
        sdk(t, &rp, "conversations.history", "channel=C_DESIGN");
        CHECK(json_array_size(jp(rp.body, "/messages")) == 1);
        sdk(t, &rp, "conversations.invite", "channel=design&users=U_BOB");
        CHECK(json_is_true(jp(rp.body, "/ok")) &&
              json_integer_value(jp(rp.body, "/channel/num_members")) == 4);
        sdk(t, &rp, "conversations.invite", "channel=design&users=U_BOB");
        CHECK(streq(jps(rp.body, "/error"), "already_in_channel"));
        /* one user that cannot be invited: nobody is, unless force says to go on */
        sdk(t, &rp, "conversations.invite", "channel=design&users=U_BOB,U_DAVE,U0NOPE");
        CHECK(streq(jps(rp.body, "/error"), "user_not_found") && !rp.state_mutation);
        sdk(t, &rp, "conversations.invite", "channel=design&users=U_BOB,U_DAVE");
        CHECK(streq(jps(rp.body, "/error"), "already_in_channel") && !rp.state_mutation);
        sdk(t, &rp, "conversations.invite", "channel=design&users=U_BOB,U_DAVE,U0NOPE&force=true");
        CHECK(json_is_true(jp(rp.body, "/ok")) && rp.state_mutation);
        CHECK(json_integer_value(jp(rp.body, "/channel/num_members")) == 5);
        sdk(t, &rp, "conversations.invite", "channel=design&users=U_BOB,U0NOPE&force=true");
        CHECK(streq(jps(rp.body, "/error"), "already_in_channel") && !rp.state_mutation);
        sdk(t, &rp, "conversations.kick", "channel=design&user=U_DAVE");
        CHECK(json_is_true(jp(rp.body, "/ok")));
        sdk(t, &rp, "conversations.kick", "channel=design&user=U_BOB");
        CHECK(json_is_true(jp(rp.body, "/ok")));
        sdk(t, &rp, "conversations.leave", "channel=design");
        CHECK(json_is_true(jp(rp.body, "/ok")) && rp.state_mutation);
        sdk(t, &rp, "conversations.leave", "channel=design");
        CHECK(json_is_true(jp(rp.body, "/not_in_channel")) && !rp.state_mutation);

        /* chat.update / chat.delete of the bot's own message */
        sdk(t, &rp, "chat.postMessage", "channel=random&text=draft");
        char form[128];
        snprintf(form, sizeof(form), "channel=random&ts=%s&text=final", jps(rp.body, "/ts"));
        sdk(t, &rp, "chat.update", form);
        CHECK(streq(jps(rp.body, "/text"), "final") && streq(rp.tool, "slack_edit_message"));
        sdk(t, &rp, "chat.delete", form);
        CHECK(json_is_true(jp(rp.body, "/ok")) && streq(rp.tool, "slack_delete_message"));
        CHECK(json_is_null(jp(rp.state_delta, "/after")));

        /* pins and bookmarks */
        sdk(t, &rp, "pins.list", "channel=engineering");
        CHECK(json_array_size(jp(rp.body, "/items")) == 1);
        CHECK(streq(jps(rp.body, "/items/0/message/pinned_to/0"), "C_ENGINEERING"));
        sdk(t, &rp, "pins.remove", "channel=engineering&timestamp=1700000720.000100");
        CHECK(json_is_true(jp(rp.body, "/ok")));
        sdk(t, &rp, "pins.remove", "channel=engineering&timestamp=1700000720.000100");
        CHECK(streq(jps(rp.body, "/error"), "no_pin"));
        sdk(t, &rp, "bookmarks.add",
            "channel_id=C_ENGINEERING&title=Runbook&type=link&link=https%3A%2F%2Fexample.com");
        CHECK(streq(jps(rp.body, "/bookmark/title"), "Runbook"));
        twin_reply_done(&rp);
        twin_free(t);
}

/* A REST method and the MCP tool that does the same thing make the same world change. */
static void test_parity(void)
{
        static const struct {
                const char *method, *form, *tool, *arguments;
        } pairs[] = {
                {"reactions.add", "channel=C_GENERAL&timestamp=1700000000.000100&name=wave",
                 "slack_add_reaction",
                 "{\"channel_id\":\"C_GENERAL\",\"message_ts\":\"1700000000.000100\","
                 "\"emoji\":\"wave\"}"},
                {"canvases.create",
                 "title=Plan&document_content=%7B%22type%22%3A%22markdown%22%2C%22markdown%22%3A%"
                 "22%23+Plan%22%7D",
                 "slack_create_canvas", "{\"title\":\"Plan\",\"content\":\"# Plan\"}"},
                {"conversations.create", "name=war-room", "slack_create_conversation",
                 "{\"channel_name\":\"war-room\"}"},
                {"conversations.open", "users=U_BOB", "slack_create_conversation",
                 "{\"user_ids\":[\"U_BOB\"]}"},
                {"chat.scheduleMessage", "channel=C_GENERAL&text=later&post_at=1780003600",
                 "slack_schedule_message",
                 "{\"channel_id\":\"C_GENERAL\",\"message\":\"later\",\"post_at\":1780003600}"},
        };
        for (size_t i = 0; i < ELEMENTSOF(pairs); i++) {
                Twin *rest = twin_test_new("slack", "default"),
                     *m = twin_test_new("slack", "default");
                TwinReply rp = {};
                sdk(rest, &rp, pairs[i].method, pairs[i].form);
                CHECK(json_is_true(jp(rp.body, "/ok")) && rp.state_mutation);
                CHECK(streq(rp.tool, pairs[i].tool));
                twin_test_call(m, &rp, pairs[i].tool, pairs[i].arguments);
                CHECK(json_is_true(jp(rp.body, "/result/structuredContent/ok")) &&
                      rp.state_mutation);
                if (!json_equal(twin_world(rest), twin_world(m))) {
                        fprintf(stderr, "parity %s / %s: worlds differ\n", pairs[i].method,
                                pairs[i].tool);
                        check_failures++;
                }
                twin_reply_done(&rp);
                twin_free(rest);
                twin_free(m);
        }
}

/* chat.postEphemeral, conversations.mark and usergroups.list, which slack-go and other
 * clients call (501 before) */
static void test_ephemeral_mark_usergroups(void)
{
        Twin *t = twin_test_new("slack", "default");
        TwinReply rp = {};
        size_t before = json_array_size(general(t));
        sdk(t, &rp, "chat.postEphemeral", "channel=C_GENERAL&user=U_ALICE&text=only+you");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/ok")) &&
              streq(rp.tool, "slack_post_ephemeral") && rp.state_mutation);
        CHECK(jps(rp.body, "/message_ts") && json_object_size(rp.body) == 2);
        CHECK(json_array_size(general(t)) == before); /* never in the channel's history */
        CHECK(streq(jps(twin_world(t), "/ephemeral_messages/0/user"), "U_ALICE") &&
              streq(jps(twin_world(t), "/ephemeral_messages/0/text"), "only you"));
        sdk(t, &rp, "chat.postEphemeral", "channel=C_RANDOM&user=U_DAVE&text=x");
        CHECK(streq(jps(rp.body, "/error"), "user_not_in_channel") && !rp.state_mutation);
        sdk(t, &rp, "chat.postEphemeral", "channel=C_DESIGN&user=U_ALICE&text=x");
        CHECK(streq(jps(rp.body, "/error"), "not_in_channel"));
        sdk(t, &rp, "chat.postEphemeral", "channel=C_GENERAL&user=U0NOBODY1&text=x");
        CHECK(streq(jps(rp.body, "/error"), "user_not_found"));
        sdk(t, &rp, "chat.postEphemeral", "channel=C_GENERAL&user=U_ALICE");
        CHECK(streq(jps(rp.body, "/error"), "no_text"));

        sdk(t, &rp, "conversations.mark", "channel=C_GENERAL&ts=1780000000.000100");
        CHECK(json_is_true(jp(rp.body, "/ok")) && streq(rp.tool, "slack_mark_conversation") &&
              rp.state_mutation);
        CHECK(streq(jps(twin_world(t), "/channels/0/last_read"), "1780000000.000100"));
        sdk(t, &rp, "conversations.mark", "channel=C_GENERAL&ts=1780000000.000100");
        CHECK(json_is_true(jp(rp.body, "/ok")) && !rp.state_mutation); /* already there */
        sdk(t, &rp, "conversations.mark", "channel=C_GENERAL&ts=yesterday");
        CHECK(streq(jps(rp.body, "/error"), "invalid_timestamp"));
        sdk(t, &rp, "conversations.mark", "channel=C_DESIGN&ts=1780000000.000100");
        CHECK(streq(jps(rp.body, "/error"), "not_in_channel"));

        sdk(t, &rp, "usergroups.list", "include_users=true");
        CHECK(json_is_true(jp(rp.body, "/ok")) && json_array_size(jp(rp.body, "/usergroups")) == 0);
        CHECK(!rp.state_mutation);
        twin_reply_done(&rp);
        twin_free(t);
}

int main(void)
{
        test_ephemeral_mark_usergroups();
        test_walkthrough();
        test_mcp();
        test_threads_and_reactions();
        test_lists();
        test_history_cursor();
        test_scheduled();
        test_search_modifiers();
        test_multipart_upload();
        test_errors();
        test_state_and_redaction();
        test_seeds();
        test_hosted_seed();
        test_membership();
        test_parity();
        return check_finish();
}
