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

/* chat.delete: the caller's own message only (cant_delete_message); its pins go with it. */
int slack_act_delete_message(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        size_t idx;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0 || (r = arg_own_message(c, rp, ch, "cant_delete_message", &m, &idx)) <= 0)
                return r;
        _cleanup_json_ json_t *gone = json_incref(m);
        _cleanup_json_ json_t *ts = json_incref(json_object_get(m, "ts"));
        if ((r = twin_reply_mutation(rp, gone, NULL)) < 0)
                return r;
        if (json_array_remove(json_object_get(ch, "messages"), idx) < 0)
                return -ENOMEM;
        json_t *pins = json_object_get(ch, "pins");
        for (size_t i = json_array_size(pins); i-- > 0;)
                if (json_equal(json_object_get(json_array_get(pins, i), "ts"), ts))
                        json_array_remove(pins, i);
        return slack_ok(rp,
                        json_pack("{s:O, s:O}", "channel", json_object_get(ch, "id"), "ts", ts));
}

/* chat.scheduleMessage / slack_schedule_message: post_at in the next 120 days. */
int slack_act_schedule_message(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        const char *text, *thread;
        _cleanup_json_ json_t *blocks = NULL, *attachments = NULL;
        if ((r = arg_content(c, rp, &text, &blocks, &attachments)) <= 0 ||
            (r = arg_thread(c, rp, ch, &thread)) <= 0)
                return r;
        int64_t post_at;
        r = twin_arg_int(c->args, "post_at", 0, INT64_C(99999999999), &post_at);
        if (r == -ENOENT)
                return slack_fail(rp, "invalid_time");
        if (r < 0)
                return slack_fail(rp, "invalid_time");
        if (post_at <= c->now)
                return slack_fail(rp, "time_in_past");
        if (post_at > c->now + 120 * 86400)
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

/* chat.scheduledMessages.list: of the channels the caller is in, optionally one channel. */
int slack_act_list_scheduled_messages(TwinCall *c, TwinReply *rp)
{
        json_t *only = NULL;
        int r;
        if (slack_arg2(c, "channel", "channel_id") && (r = slack_arg_channel(c, rp, &only)) <= 0)
                return r;
        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        size_t i;
        json_t *s;
        json_array_foreach (slack_world_list(c->world, "scheduled"), i, s) {
                const char *cid = json_get_str(s, "channel_id");
                json_t *ch = slack_channel_resolve(c->world, strempty(cid));
                if (ch && slack_is_member(ch, slack_bot_user(c)) &&
                    (!only || streq_ptr(json_get_str(only, "id"), cid)) &&
                    json_array_append(match, s) < 0)
                        return -ENOMEM;
        }
        return slack_list_page(c, rp, match, 100, 1000, render_scheduled, "scheduled_messages",
                               NULL);
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
