/* SPDX-License-Identifier: MIT */
/*
 * The chat.* family (https://api.slack.com/methods#chat): postMessage (threads,
 * reply_broadcast), update, delete, scheduleMessage, deleteScheduledMessage and
 * scheduledMessages.list. The caller must be a member of the conversation (not_in_channel),
 * and may only change its own messages (cant_update_message, cant_delete_message).
 */
#include "common/json-util.h"
#include "pods/slack/slack.h"

/*
 * The text of a message: text (the MCP server's message), blocks and attachments. Writes
 * *ret_text (borrowed), *ret_blocks / *ret_attachments (new or NULL). 1, 0 with the error in
 * rp (no_text, msg_too_long, invalid_blocks, ...), -errno.
 */
static int arg_content(TwinCall *c, TwinReply *rp, const char **ret_text, json_t **ret_blocks,
                       json_t **ret_attachments)
{
        json_t *jt = slack_arg2(c, "text", "message");
        if (jt && !json_is_null(jt) && !json_is_string(jt))
                return slack_fail(rp, "invalid_arguments");
        const char *text = strempty(json_string_value(jt));
        _cleanup_json_ json_t *blocks = NULL, *attachments = NULL;
        if (slack_arg_json_array(c, "blocks", &blocks) < 0)
                return slack_fail(rp, "invalid_blocks");
        if (slack_arg_json_array(c, "attachments", &attachments) < 0)
                return slack_fail(rp, "invalid_attachments");
        if (!text[0] && json_array_size(blocks) == 0 && json_array_size(attachments) == 0)
                return slack_fail(rp, "no_text");
        if (json_string_length(jt) > SLACK_MAX_TEXT * 4 || slack_utf8_chars(text) > SLACK_MAX_TEXT)
                return slack_fail(rp, "msg_too_long");
        *ret_text = text;
        *ret_blocks = TAKE_PTR(blocks);
        *ret_attachments = TAKE_PTR(attachments);
        return 1;
}

/* The thread a reply goes to (thread_ts: any message of the thread): 1, 0 (rp), -errno. */
static int arg_thread(TwinCall *c, TwinReply *rp, json_t *ch, const char **ret)
{
        json_t *jth = json_object_get(c->args, "thread_ts");
        *ret = NULL;
        if (!jth || json_is_null(jth) || (json_is_string(jth) && !json_string_length(jth)))
                return 1;
        int64_t t;
        json_t *parent = slack_ts_parse(jth, &t) == 0 ? slack_msg_find(ch, t, NULL) : NULL;
        if (!parent)
                return slack_fail(rp, "thread_not_found");
        *ret = json_get_str(parent, "thread_ts");
        if (!*ret)
                *ret = json_get_str(parent, "ts");
        return 1;
}

/*
 * The conversation a post goes to: a channel the caller is in, or, for a user id (as
 * slack.com does), the caller's DM with that user, opened on the way.
 */
static int arg_post_channel(TwinCall *c, TwinReply *rp, json_t **ret)
{
        json_t *jth = json_object_get(c->args, "thread_ts");
        json_t *v = slack_arg2(c, "channel", "channel_id");
        const char *ref = json_string_value(v);
        if (ref && (ref[0] == 'U' || ref[0] == 'W') && !slack_channel_resolve(c->world, ref)) {
                json_t *u = slack_user_by_id(c->world, ref);
                if (!slack_user_visible(u))
                        return slack_fail(rp, "channel_not_found");
                _cleanup_json_ json_t *ids = json_pack("[O]", json_object_get(u, "id"));
                bool existing;
                /* a refused post opens nothing: a thread cannot be in a DM not yet open */
                if (json_string_length(jth) > 0 &&
                    !slack_find_by(json_object_get(c->world, "channels"), "user", ref))
                        return slack_fail(rp, "thread_not_found");
                return ids ? slack_conversation_open(c, rp, ids, ret, &existing) : -ENOMEM;
        }
        return slack_arg_channel_in(c, rp, ret);
}

/* chat.postMessage / slack_send_message. */
int slack_act_send_message(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        const char *text, *thread;
        _cleanup_json_ json_t *blocks = NULL, *attachments = NULL;
        bool broadcast = false;
        /* everything that can be refused before the conversation (a DM may be opened) */
        json_t *jc = slack_arg2(c, "channel", "channel_id");
        if (jc && !json_is_null(jc) && !json_is_string(jc))
                return slack_fail(rp, "invalid_arguments");
        if (!json_string_length(jc))
                return slack_fail(rp, "channel_not_found");
        if (twin_arg_bool(c->args, "reply_broadcast", &broadcast) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        int r = arg_content(c, rp, &text, &blocks, &attachments);
        if (r <= 0 || (r = arg_post_channel(c, rp, &ch)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        if ((r = arg_thread(c, rp, ch, &thread)) <= 0)
                return r;

        json_t *bot = json_object_get(c->world, "bot");
        _cleanup_json_ json_t *m =
                json_pack("{s:s, s:o, s:O, s:O*, s:s}", "type", "message", "ts", slack_next_ts(c),
                          "user", json_object_get(bot, "user_id"), "bot_id",
                          json_object_get(bot, "bot_id"), "text", text);
        if (!m || (thread && json_object_set_new(m, "thread_ts", json_string(thread)) < 0) ||
            (thread && broadcast && json_object_set_new(m, "reply_broadcast", json_true()) < 0) ||
            (blocks && json_object_set(m, "blocks", blocks) < 0) ||
            (attachments && json_object_set(m, "attachments", attachments) < 0) ||
            json_array_append(json_object_get(ch, "messages"), m) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, m)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:O, s:O, s:o, s:o}", "channel", json_object_get(ch, "id"),
                                      "ts", json_object_get(m, "ts"), "message",
                                      slack_render_message(c, ch, m), "permalink",
                                      slack_permalink(c, ch, m)));
}

/*
 * chat.postEphemeral (https://api.slack.com/methods/chat.postEphemeral): a message that only
 * user sees in channel, never in its history: {ok, message_ts}. The bot must be in the channel
 * (not_in_channel) and so must the user (user_not_in_channel). The world keeps it in
 * ephemeral_messages[] {channel, user, ts, text, thread_ts?, blocks?, attachments?}, so a check
 * can read what was shown to whom.
 */
int slack_act_post_ephemeral(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *u;
        const char *text, *thread;
        _cleanup_json_ json_t *blocks = NULL, *attachments = NULL;
        json_t *jc = slack_arg2(c, "channel", "channel_id");
        if (jc && !json_is_null(jc) && !json_is_string(jc))
                return slack_fail(rp, "invalid_arguments");
        if (!json_string_length(jc))
                return slack_fail(rp, "channel_not_found");
        int r = arg_content(c, rp, &text, &blocks, &attachments);
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0 ||
            (r = slack_arg_user(c, rp, "user", "user_id", &u)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        if (!slack_is_member(ch, json_get_str(u, "id")))
                return slack_fail(rp, "user_not_in_channel");
        if ((r = arg_thread(c, rp, ch, &thread)) <= 0)
                return r;
        json_t *list = json_object_get(c->world, "ephemeral_messages");
        if (!list && (json_object_set_new(c->world, "ephemeral_messages", json_array()) < 0 ||
                      !(list = json_object_get(c->world, "ephemeral_messages"))))
                return -ENOMEM;
        _cleanup_json_ json_t *m =
                json_pack("{s:O, s:O, s:o, s:s}", "channel", json_object_get(ch, "id"), "user",
                          json_object_get(u, "id"), "ts", slack_next_ts(c), "text", text);
        if (!m || (thread && json_object_set_new(m, "thread_ts", json_string(thread)) < 0) ||
            (blocks && json_object_set(m, "blocks", blocks) < 0) ||
            (attachments && json_object_set(m, "attachments", attachments) < 0) ||
            json_array_append(list, m) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, m)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:O}", "message_ts", json_object_get(m, "ts")));
}

/* The caller's own message of ch named by ts: 1, 0 with the error in rp, -errno. */
static int arg_own_message(TwinCall *c, TwinReply *rp, json_t *ch, const char *error, json_t **ret,
                           size_t *ret_idx)
{
        int r = slack_arg_message(c, rp, ch, "ts", "message_ts", ret, ret_idx);
        if (r <= 0)
                return r;
        if (!streq_ptr(json_get_str(*ret, "user"), slack_bot_user(c)))
                return slack_fail(rp, error);
        return 1;
}

/* chat.update: the caller's own message only (cant_update_message). */
int slack_act_edit_message(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        size_t idx;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0 || (r = arg_own_message(c, rp, ch, "cant_update_message", &m, &idx)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        const char *text;
        _cleanup_json_ json_t *blocks = NULL, *attachments = NULL;
        if ((r = arg_content(c, rp, &text, &blocks, &attachments)) <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(m);
        json_t *edited = json_pack("{s:s, s:o}", "user", slack_bot_user(c), "ts",
                                   slack_ts_string(c->now * INT64_C(1000000)));
        if (!next || json_object_set_new(next, "text", json_string(text)) < 0 ||
            json_object_set_new(next, "edited", edited) < 0 ||
            (blocks && json_object_set(next, "blocks", blocks) < 0) ||
            (attachments && json_object_set(next, "attachments", attachments) < 0))
                return -ENOMEM;
        if ((r = slack_row_replace(rp, json_object_get(ch, "messages"), idx, next)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:O, s:O, s:O, s:o}", "channel", json_object_get(ch, "id"),
                                      "ts", json_object_get(next, "ts"), "text",
                                      json_object_get(next, "text"), "message",
                                      slack_render_message(c, ch, next)));
}

/* Whether some message of ch replies in the thread of ts (a string). */
static bool has_replies(json_t *ch, const char *ts)
{
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(ch, "messages"), i, x) {
                if (streq_ptr(json_get_str(x, "thread_ts"), ts) &&
                    !streq_ptr(json_get_str(x, "ts"), ts))
                        return true;
        }
        return false;
}

/*
 * chat.delete: the caller's own message only (cant_delete_message); its pins go with it. A
 * thread's parent with replies leaves a tombstone, as on slack.com ("This message was
 * deleted.", subtype tombstone, hidden, by USLACKBOT), so its thread stays readable.
 */
int slack_act_delete_message(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        size_t idx;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0 || (r = arg_own_message(c, rp, ch, "cant_delete_message", &m, &idx)) <= 0)
                return r;
        _cleanup_json_ json_t *gone = json_incref(m);
        _cleanup_json_ json_t *ts = json_incref(json_object_get(m, "ts"));
        if (has_replies(ch, json_string_value(ts))) {
                _cleanup_json_ json_t *tomb =
                        json_pack("{s:s, s:s, s:s, s:s, s:b, s:O, s:O}", "type", "message",
                                  "subtype", "tombstone", "text", "This message was deleted.",
                                  "user", "USLACKBOT", "hidden", true, "ts", ts, "thread_ts", ts);
                if (!tomb)
                        return -ENOMEM;
                if ((r = slack_row_replace(rp, json_object_get(ch, "messages"), idx, tomb)) < 0)
                        return r;
        } else {
                if ((r = twin_reply_mutation(rp, gone, NULL)) < 0)
                        return r;
                if (json_array_remove(json_object_get(ch, "messages"), idx) < 0)
                        return -ENOMEM;
        }
        json_t *pins = json_object_get(ch, "pins");
        for (size_t i = json_array_size(pins); i-- > 0;)
                if (json_equal(json_object_get(json_array_get(pins, i), "ts"), ts))
                        json_array_remove(pins, i);
        return slack_ok(rp,
                        json_pack("{s:O, s:O}", "channel", json_object_get(ch, "id"), "ts", ts));
}

#define SCHEDULE_MAX_AHEAD (120 * 86400) /* seconds: Slack's limit (time_too_far) */

/*
 * chat.scheduleMessage / slack_schedule_message (https://api.slack.com/methods/
 * chat.scheduleMessage): post_at (Unix seconds) must be later than now (time_in_past) and at
 * most 120 days ahead (time_too_far); the message is delivered by slack_deliver_scheduled.
 */
int slack_act_schedule_message(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        const char *text, *thread;
        bool broadcast = false;
        _cleanup_json_ json_t *blocks = NULL, *attachments = NULL;
        if ((r = arg_content(c, rp, &text, &blocks, &attachments)) <= 0 ||
            (r = arg_thread(c, rp, ch, &thread)) <= 0)
                return r;
        if (twin_arg_bool(c->args, "reply_broadcast", &broadcast) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        int64_t post_at;
        /* a JSON number or a decimal string; Slack takes "1700000000.5" as well */
        json_t *jp = json_object_get(c->args, "post_at");
        if (json_is_real(jp) && json_real_value(jp) > 0 && json_real_value(jp) < 1e11)
                post_at = (int64_t)json_real_value(jp);
        else if (twin_arg_int(c->args, "post_at", 0, INT64_C(99999999999), &post_at) < 0) {
                int64_t us;
                if (!json_is_string(jp) || slack_ts_parse(jp, &us) < 0)
                        return slack_fail(rp, "invalid_time");
                post_at = us / 1000000;
        }
        if (post_at <= c->now)
                return slack_fail(rp, "time_in_past");
        if (post_at > c->now + SCHEDULE_MAX_AHEAD)
                return slack_fail(rp, "time_too_far");
        char id[16];
        if ((r = slack_alloc_id(c->world, 'Q', id)) < 0)
                return r;
        json_t *list = slack_world_list(c->world, "scheduled");
        _cleanup_json_ json_t *row =
                json_pack("{s:s, s:O, s:I, s:I, s:s, s:s*}", "id", id, "channel_id",
                          json_object_get(ch, "id"), "post_at", (json_int_t)post_at, "date_created",
                          (json_int_t)c->now, "text", text, "thread_ts", thread);
        if (!list || !row || (blocks && json_object_set(row, "blocks", blocks) < 0) ||
            (attachments && json_object_set(row, "attachments", attachments) < 0) ||
            (thread && broadcast && json_object_set_new(row, "reply_broadcast", json_true()) < 0) ||
            json_array_append(list, row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        json_t *bot = json_object_get(c->world, "bot");
        return slack_ok(rp,
                        json_pack("{s:O, s:s, s:I, s:{s:s, s:s, s:O, s:O*, s:s, s:s*}}", "channel",
                                  json_object_get(ch, "id"), "scheduled_message_id", id, "post_at",
                                  (json_int_t)post_at, "message", "type", "message", "text", text,
                                  "user", json_object_get(bot, "user_id"), "bot_id",
                                  json_object_get(bot, "bot_id"), "type", "message", "thread_ts",
                                  thread));
}

/*
 * chat.deleteScheduledMessage: a message still pending in that channel; one already
 * delivered (or never scheduled) is invalid_scheduled_message_id, as on slack.com.
 */
int slack_act_delete_scheduled_message(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        const char *id;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0 || (r = slack_arg_string(c, rp, "scheduled_message_id", NULL,
                                            "invalid_scheduled_message_id", &id)) <= 0)
                return r;
        json_t *list = slack_world_list(c->world, "scheduled");
        size_t i;
        json_t *s;
        json_array_foreach (list, i, s) {
                if (streq_ptr(json_get_str(s, "id"), id) &&
                    streq_ptr(json_get_str(s, "channel_id"), json_get_str(ch, "id"))) {
                        if ((r = twin_reply_mutation(rp, s, NULL)) < 0)
                                return r;
                        if (json_array_remove(list, i) < 0)
                                return -ENOMEM;
                        return slack_ok(rp, json_object());
                }
        }
        return slack_fail(rp, "invalid_scheduled_message_id");
}

static json_t *render_scheduled(TwinCall *c, json_t *s)
{
        (void)c;
        return json_pack("{s:O, s:O, s:O, s:O, s:O}", "id", json_object_get(s, "id"), "channel_id",
                         json_object_get(s, "channel_id"), "post_at", json_object_get(s, "post_at"),
                         "date_created", json_object_get(s, "date_created"), "text",
                         json_object_get(s, "text"));
}

/* A Unix-time bound (seconds; "1562137200", "1562137200.5" or a number): 1, 0 (rp). */
static int arg_time(TwinCall *c, TwinReply *rp, const char *key, int64_t *ret)
{
        json_t *v = json_object_get(c->args, key);
        int64_t us;
        if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
                return 1;
        if (slack_ts_parse(v, &us) < 0)
                return slack_fail(rp, "invalid_arguments");
        *ret = us / 1000000;
        return 1;
}

/*
 * chat.scheduledMessages.list (https://api.slack.com/methods/chat.scheduledMessages.list):
 * the pending messages of the conversations the caller is in, soonest first, optionally of
 * one channel (invalid_channel when it names none the caller sees) and with post_at in
 * [oldest, latest]; limit + cursor pages.
 */
int slack_act_list_scheduled_messages(TwinCall *c, TwinReply *rp)
{
        json_t *only = NULL;
        int64_t oldest = 0, latest = INT64_MAX;
        int r;
        const char *ref;
        if ((r = slack_arg_string(c, rp, "channel", "channel_id", NULL, &ref)) <= 0)
                return r;
        if (ref) {
                only = slack_channel_resolve(c->world, ref);
                if (!only || !slack_channel_visible(c, only))
                        return slack_fail(rp, "invalid_channel");
        }
        if ((r = arg_time(c, rp, "oldest", &oldest)) <= 0 ||
            (r = arg_time(c, rp, "latest", &latest)) <= 0)
                return r;
        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        size_t i;
        json_t *s;
        json_array_foreach (slack_world_list(c->world, "scheduled"), i, s) {
                const char *cid = json_get_str(s, "channel_id");
                json_t *ch = slack_channel_resolve(c->world, strempty(cid));
                int64_t at = json_integer_value(json_object_get(s, "post_at"));
                if (ch && slack_is_member(ch, slack_bot_user(c)) &&
                    (!only || streq_ptr(json_get_str(only, "id"), cid)) && at >= oldest &&
                    at <= latest && json_array_append(match, s) < 0)
                        return -ENOMEM;
        }
        /* soonest first; equal times in the order they were scheduled (insertion sort: stable) */
        for (size_t a = 1; a < json_array_size(match); a++)
                for (size_t b = a; b > 0; b--) {
                        json_t *x = json_array_get(match, b - 1), *y = json_array_get(match, b);
                        if (json_integer_value(json_object_get(x, "post_at")) <=
                            json_integer_value(json_object_get(y, "post_at")))
                                break;
                        json_incref(x);
                        if (json_array_set(match, b - 1, y) < 0 ||
                            json_array_set_new(match, b, x) < 0)
                                return -ENOMEM;
                }
        return slack_list_page(c, rp, match, 100, 1000, render_scheduled, "scheduled_messages",
                               NULL);
}

/* The index in list of the pending message due first by now (ties: scheduled first), or -1. */
static ssize_t next_due(json_t *list, int64_t now)
{
        ssize_t best = -1;
        int64_t best_at = 0;
        size_t i;
        json_t *s;
        json_array_foreach (list, i, s) {
                int64_t at = json_integer_value(json_object_get(s, "post_at"));
                if (at <= now && (best < 0 || at < best_at)) {
                        best = (ssize_t)i;
                        best_at = at;
                }
        }
        return best;
}

/*
 * Delivers the pending message s (borrowed, still in the scheduled list) into its channel as
 * the bot posting it now, and appends the event to events. A channel gone, archived or left
 * meanwhile gets nothing: the event records the refusal (ok:false) and the message is
 * dropped, as Slack drops it. 0 or -ENOMEM.
 */
static int deliver(TwinCall *c, json_t *s, json_t *events)
{
        const char *cid = strempty(json_get_str(s, "channel_id"));
        json_t *ch = slack_find_by(json_object_get(c->world, "channels"), "id", cid);
        _cleanup_json_ json_t *request = json_pack(
                "{s:O, s:s, s:O, s:O}", "scheduled_message_id", json_object_get(s, "id"), "channel",
                cid, "post_at", json_object_get(s, "post_at"), "text", json_object_get(s, "text"));
        const char *refused = !ch ? "channel_not_found"
                              : json_is_true(json_object_get(ch, "is_archived")) ? "is_archived"
                              : !slack_is_member(ch, slack_bot_user(c))          ? "not_in_channel"
                                                                                 : NULL;
        json_t *ev;
        if (refused) {
                ev = json_pack("{s:s, s:s, s:s, s:O, s:i, s:{s:b, s:s}, s:{s:O, s:n}}", "tool",
                               "slack_schedule_message", "method", "POST", "path",
                               "/chat.scheduleMessage", "request_body", request, "status", 200,
                               "response_body", "ok", false, "error", refused, "state_delta",
                               "before", s, "after");
                return json_array_append_new(events, ev) < 0 ? -ENOMEM : 0;
        }
        /* a thread whose parent went meanwhile: the message goes to the channel */
        const char *thread = json_get_str(s, "thread_ts");
        int64_t th;
        if (thread && (slack_ts_parse(json_object_get(s, "thread_ts"), &th) < 0 ||
                       !slack_msg_find(ch, th, NULL)))
                thread = NULL;
        json_t *bot = json_object_get(c->world, "bot");
        _cleanup_json_ json_t *m =
                json_pack("{s:s, s:o, s:O, s:O*, s:O}", "type", "message", "ts", slack_next_ts(c),
                          "user", json_object_get(bot, "user_id"), "bot_id",
                          json_object_get(bot, "bot_id"), "text", json_object_get(s, "text"));
        if (!m || !request ||
            (thread && json_object_set_new(m, "thread_ts", json_string(thread)) < 0) ||
            (thread && json_is_true(json_object_get(s, "reply_broadcast")) &&
             json_object_set_new(m, "reply_broadcast", json_true()) < 0) ||
            (json_object_get(s, "blocks") &&
             json_object_set(m, "blocks", json_object_get(s, "blocks")) < 0) ||
            (json_object_get(s, "attachments") &&
             json_object_set(m, "attachments", json_object_get(s, "attachments")) < 0) ||
            json_array_append(json_object_get(ch, "messages"), m) < 0)
                return -ENOMEM;
        ev = json_pack("{s:s, s:s, s:s, s:O, s:i, s:{s:b, s:O, s:O, s:O, s:o}, s:{s:n, s:O}}",
                       "tool", "slack_schedule_message", "method", "POST", "path",
                       "/chat.scheduleMessage", "request_body", request, "status", 200,
                       "response_body", "ok", true, "channel", json_object_get(ch, "id"), "ts",
                       json_object_get(m, "ts"), "scheduled_message_id", json_object_get(s, "id"),
                       "message", slack_render_message(c, ch, m), "state_delta", "before", "after",
                       m);
        return json_array_append_new(events, ev) < 0 ? -ENOMEM : 0;
}

/*
 * The kind's advance hook: every pending message whose post_at has come (c->now, seconds)
 * is posted, soonest first, each with the ts of its delivery (ts keep growing per channel)
 * and in its thread; it leaves the scheduled list (chat.deleteScheduledMessage then answers
 * invalid_scheduled_message_id, chat.scheduledMessages.list no longer shows it). Each
 * delivery is one event stamped tool "slack_schedule_message": the action the agent called
 * to cause it (the agent never called slack_send_message). 0 or -ENOMEM.
 */
int slack_deliver_scheduled(TwinCall *c, json_t *events)
{
        json_t *list = json_object_get(c->world, "scheduled");
        ssize_t i;
        while ((i = next_due(list, c->now)) >= 0) {
                int r = deliver(c, json_array_get(list, (size_t)i), events);
                if (r < 0)
                        return r;
                if (json_array_remove(list, (size_t)i) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* chat.getPermalink: channel + message_ts → {channel, permalink}. */
int slack_act_get_permalink(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        int r = slack_arg_channel(c, rp, &ch);
        if (r <= 0 || (r = slack_arg_message(c, rp, ch, "message_ts", "ts", &m, NULL)) <= 0)
                return r;
        return slack_ok(rp, json_pack("{s:O, s:o}", "channel", json_object_get(ch, "id"),
                                      "permalink", slack_permalink(c, ch, m)));
}
