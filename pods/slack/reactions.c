/* SPDX-License-Identifier: MIT */
/*
 * Things attached to messages and channels: reactions.{add,get,remove}, pins.{add,list,
 * remove} and bookmarks.{add,list,remove} (https://api.slack.com/methods).
 */
#include "common/json-util.h"
#include "pods/slack/slack.h"

/* Reaction names: a-z, 0-9, '_', '+', '-', '\'', and one "::skin-tone-N". */
static bool reaction_name_valid(const char *s)
{
        size_t n = strlen(s);
        const char *skin = strstr(s, "::skin-tone-");
        if (skin)
                n = (size_t)(skin - s);
        return n > 0 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_+-'") == n &&
               (!skin || (strlen(skin) == 13 && skin[12] >= '2' && skin[12] <= '6'));
}

/*
 * The reaction name (name, or the MCP server's emoji), colons around it dropped, into
 * name[128]: 1, 0 with invalid_name in rp, -errno.
 */
static int arg_reaction(TwinCall *c, TwinReply *rp, char name[static 128])
{
        json_t *jn = slack_arg2(c, "name", "emoji");
        if (!jn || json_is_null(jn))
                jn = json_object_get(c->args, "reaction");
        const char *raw = json_string_value(jn);
        if (!raw)
                return slack_fail(rp,
                                  jn && !json_is_null(jn) ? "invalid_arguments" : "invalid_name");
        size_t l = strlen(raw);
        if (l >= 2 && raw[0] == ':' && raw[l - 1] == ':') {
                raw++;
                l -= 2;
        }
        if (l >= 128)
                return slack_fail(rp, "invalid_name");
        memcpy(name, raw, l);
        name[l] = 0;
        if (!reaction_name_valid(name))
                return slack_fail(rp, "invalid_name");
        return 1;
}

/*
 * The channel and message a reaction or pin call names (timestamp, or message_ts). A
 * timestamp that is no ts at all is bad_timestamp, one of no message message_not_found
 * (reactions.add, pins.add: https://api.slack.com/methods/reactions.add).
 */
static int arg_target(TwinCall *c, TwinReply *rp, bool member, json_t **ret_ch, json_t **ret_m,
                      size_t *ret_idx)
{
        int r = member ? slack_arg_channel_in(c, rp, ret_ch) : slack_arg_channel(c, rp, ret_ch);
        if (r <= 0)
                return r;
        const char *key = "timestamp", *alias = "message_ts";
        json_t *v = slack_arg2(c, key, alias);
        if (!v || json_is_null(v)) {
                key = "ts";
                alias = NULL;
                v = json_object_get(c->args, key);
        }
        int64_t ts;
        if (v && !json_is_null(v) && !(json_is_string(v) && !json_string_length(v)) &&
            slack_ts_parse(v, &ts) < 0)
                return slack_fail(rp, "bad_timestamp");
        return slack_arg_message(c, rp, *ret_ch, key, alias, ret_m, ret_idx);
}

/* reactions.add / slack_add_reaction (already_reacted when the caller has reacted so). */
int slack_act_add_reaction(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        size_t idx;
        char name[128];
        int r = arg_target(c, rp, false, &ch, &m, &idx);
        if (r <= 0 || (r = arg_reaction(c, rp, name)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        const char *me = slack_bot_user(c);
        _cleanup_json_ json_t *next = json_deep_copy(m);
        if (!next)
                return -ENOMEM;
        json_t *reactions = json_object_get(next, "reactions");
        if (!reactions) {
                reactions = json_array();
                if (json_object_set_new(next, "reactions", reactions) < 0)
                        return -ENOMEM;
        }
        json_t *x = slack_find_by(reactions, "name", name);
        if (x) {
                json_t *users = json_object_get(x, "users");
                if (slack_strv_has(users, me))
                        return slack_fail(rp, "already_reacted");
                if (json_array_append_new(users, json_string(me)) < 0 ||
                    json_object_set_new(x, "count",
                                        json_integer((json_int_t)json_array_size(users))) < 0)
                        return -ENOMEM;
        } else if (json_array_append_new(reactions, json_pack("{s:s, s:[s], s:i}", "name", name,
                                                              "users", me, "count", 1)) < 0)
                return -ENOMEM;
        if ((r = slack_row_replace(rp, json_object_get(ch, "messages"), idx, next)) < 0)
                return r;
        return slack_ok(rp, json_object());
}

/* reactions.remove: no_reaction when the caller has not reacted with that name. */
int slack_act_remove_reaction(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        size_t idx;
        char name[128];
        int r = arg_target(c, rp, false, &ch, &m, &idx);
        if (r <= 0 || (r = arg_reaction(c, rp, name)) <= 0)
                return r;
        const char *me = slack_bot_user(c);
        _cleanup_json_ json_t *next = json_deep_copy(m);
        if (!next)
                return -ENOMEM;
        json_t *reactions = json_object_get(next, "reactions");
        size_t i;
        json_t *x;
        json_array_foreach (reactions, i, x) {
                if (!streq_ptr(json_get_str(x, "name"), name))
                        continue;
                json_t *users = json_object_get(x, "users");
                for (size_t k = 0; k < json_array_size(users); k++) {
                        if (!streq_ptr(json_string_value(json_array_get(users, k)), me))
                                continue;
                        json_array_remove(users, k);
                        if (json_array_size(users) == 0)
                                json_array_remove(reactions, i);
                        else if (json_object_set_new(
                                         x, "count",
                                         json_integer((json_int_t)json_array_size(users))) < 0)
                                return -ENOMEM;
                        if (json_array_size(reactions) == 0)
                                json_object_del(next, "reactions");
                        if ((r = slack_row_replace(rp, json_object_get(ch, "messages"), idx,
                                                   next)) < 0)
                                return r;
                        return slack_ok(rp, json_object());
                }
        }
        return slack_fail(rp, "no_reaction");
}

/* reactions.get / slack_get_reactions: {type:"message", channel, message{...reactions}}. */
int slack_act_get_reactions(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        size_t idx;
        int r = arg_target(c, rp, true, &ch, &m, &idx);
        if (r <= 0)
                return r;
        return slack_ok(rp, json_pack("{s:s, s:O, s:o}", "type", "message", "channel",
                                      json_object_get(ch, "id"), "message",
                                      slack_render_message(c, ch, m)));
}

/* ------------------------------------------------------------------ pins */

static json_t *pin_find(json_t *ch, json_t *m, size_t *ret_idx)
{
        size_t i;
        json_t *p;
        json_array_foreach (json_object_get(ch, "pins"), i, p) {
                if (json_equal(json_object_get(p, "ts"), json_object_get(m, "ts"))) {
                        *ret_idx = i;
                        return p;
                }
        }
        return NULL;
}

/* pins.add: the caller must be in the channel; already_pinned. */
int slack_act_add_pin(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m;
        size_t idx;
        int r = arg_target(c, rp, true, &ch, &m, &idx);
        if (r <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        if (pin_find(ch, m, &idx))
                return slack_fail(rp, "already_pinned");
        json_t *pins = json_object_get(ch, "pins");
        if (!pins) {
                pins = json_array();
                if (json_object_set_new(ch, "pins", pins) < 0)
                        return -ENOMEM;
        }
        if (json_array_size(pins) >= 100)
                return slack_fail(rp, "too_many_pins");
        _cleanup_json_ json_t *pin =
                json_pack("{s:O, s:I, s:s}", "ts", json_object_get(m, "ts"), "created",
                          (json_int_t)c->now, "created_by", slack_bot_user(c));
        if (!pin || json_array_append(pins, pin) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, pin)) < 0)
                return r;
        return slack_ok(rp, json_object());
}

int slack_act_remove_pin(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *m, *pin;
        size_t idx;
        int r = arg_target(c, rp, true, &ch, &m, &idx);
        if (r <= 0)
                return r;
        if (!(pin = pin_find(ch, m, &idx)))
                return slack_fail(rp, "no_pin");
        if ((r = twin_reply_mutation(rp, pin, NULL)) < 0)
                return r;
        if (json_array_remove(json_object_get(ch, "pins"), idx) < 0)
                return -ENOMEM;
        return slack_ok(rp, json_object());
}

/* pins.list: {items:[{type, created, created_by, channel, message}]}, newest pin first. */
int slack_act_list_pins(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_channel(c, rp, &ch);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *items = json_array();
        if (!items)
                return -ENOMEM;
        json_t *pins = json_object_get(ch, "pins");
        for (size_t i = json_array_size(pins); i-- > 0;) {
                json_t *p = json_array_get(pins, i);
                int64_t ts;
                json_t *m = slack_ts_parse(json_object_get(p, "ts"), &ts) == 0
                                    ? slack_msg_find(ch, ts, NULL)
                                    : NULL;
                if (m && json_array_append_new(
                                 items, json_pack("{s:s, s:O, s:O, s:O, s:o}", "type", "message",
                                                  "created", json_object_get(p, "created"),
                                                  "created_by", json_object_get(p, "created_by"),
                                                  "channel", json_object_get(ch, "id"), "message",
                                                  slack_render_message(c, ch, m))) < 0)
                        return -ENOMEM;
        }
        return slack_ok(rp, json_pack("{s:O}", "items", items));
}

/* ------------------------------------------------------------------ bookmarks */

/* bookmarks.add: channel_id, title, type "link", link, emoji? (the caller a member). */
int slack_act_add_bookmark(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        const char *title, *type, *link, *emoji;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0 ||
            (r = slack_arg_string(c, rp, "title", NULL, "invalid_arguments", &title)) <= 0 ||
            (r = slack_arg_string(c, rp, "type", NULL, "invalid_arguments", &type)) <= 0 ||
            (r = slack_arg_string(c, rp, "link", NULL, NULL, &link)) <= 0 ||
            (r = slack_arg_string(c, rp, "emoji", NULL, NULL, &emoji)) <= 0)
                return r;
        if (!streq(type, "link"))
                return slack_fail(rp, "invalid_bookmark_type");
        if (!link || !(startswith(link, "https://") || startswith(link, "http://")))
                return slack_fail(rp, "invalid_link");
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        char id[16];
        if ((r = slack_alloc_id(c->world, 'B', id)) < 0)
                return r;
        char bk[20];
        snprintf(bk, sizeof(bk), "Bk%s", id + 1);
        json_t *list = json_object_get(ch, "bookmarks");
        if (!list) {
                list = json_array();
                if (json_object_set_new(ch, "bookmarks", list) < 0)
                        return -ENOMEM;
        }
        json_t *team = json_object_get(json_object_get(c->world, "team"), "id");
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:O, s:s, s:s, s:s, s:s, s:n, s:n, s:I, s:I, s:s, s:s, s:O, s:n, s:n}", "id",
                bk, "channel_id", json_object_get(ch, "id"), "title", title, "link", link, "emoji",
                strempty(emoji), "type", "link", "icon_url", "entity_id", "date_created",
                (json_int_t)c->now, "date_updated", (json_int_t)c->now, "rank", "U",
                "last_updated_by_user_id", slack_bot_user(c), "last_updated_by_team_id", team,
                "shortcut_id", "app_id");
        if (!row || json_array_append(list, row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:O}", "bookmark", row));
}

int slack_act_list_bookmarks(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_channel(c, rp, &ch);
        if (r <= 0)
                return r;
        json_t *list = json_object_get(ch, "bookmarks");
        return slack_ok(
                rp, json_pack("{s:o}", "bookmarks", list ? json_deep_copy(list) : json_array()));
}

int slack_act_remove_bookmark(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        const char *id;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0 ||
            (r = slack_arg_string(c, rp, "bookmark_id", NULL, "invalid_bookmark_id", &id)) <= 0)
                return r;
        json_t *list = json_object_get(ch, "bookmarks");
        size_t i;
        json_t *b;
        json_array_foreach (list, i, b) {
                if (!streq_ptr(json_get_str(b, "id"), id))
                        continue;
                if ((r = twin_reply_mutation(rp, b, NULL)) < 0)
                        return r;
                if (json_array_remove(list, i) < 0)
                        return -ENOMEM;
                return slack_ok(rp, json_object());
        }
        return slack_fail(rp, "not_found");
}
