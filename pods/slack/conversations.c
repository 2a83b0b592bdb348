/* SPDX-License-Identifier: MIT */
/*
 * auth.test and the conversations.* family (https://api.slack.com/methods#conversations):
 * list, info, history, replies, members, create/open, join, leave, invite, kick, archive,
 * setTopic, setPurpose. Membership as Slack enforces it (slack.c).
 */
#include "common/json-util.h"
#include "pods/slack/slack.h"

int slack_act_auth_test(TwinCall *c, TwinReply *rp)
{
        json_t *team = json_object_get(c->world, "team"), *bot = json_object_get(c->world, "bot");
        json_t *u = slack_user_by_id(c->world, json_get_str(bot, "user_id"));
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "https://%s.slack.com/", strempty(json_get_str(team, "domain"))) < 0)
                return -ENOMEM;
        return slack_ok(rp,
                        json_pack("{s:s, s:O, s:O, s:O, s:O, s:O*, s:b}", "url", url, "team",
                                  json_object_get(team, "name"), "user", json_object_get(u, "name"),
                                  "team_id", json_object_get(team, "id"), "user_id",
                                  json_object_get(bot, "user_id"), "bot_id",
                                  json_object_get(bot, "bot_id"), "is_enterprise_install", false));
}

/*
 * The conversations of types (public_channel, private_channel, mpim, im; default public
 * channels) the caller can see, without archived ones when exclude_archived, and only those
 * user is in when user is not NULL. conversations.list and users.conversations.
 */
static int list_filtered(TwinCall *c, TwinReply *rp, const char *user)
{
        _cleanup_json_ json_t *types = NULL;
        int r = twin_arg_strv(c->args, "types", &types);
        if (r == -ENOMEM)
                return r;
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_types");
        bool want_public = !types, want_private = false, want_im = false, want_mpim = false;
        size_t i;
        json_t *t;
        json_array_foreach (types, i, t) {
                const char *s = json_string_value(t);
                if (streq(s, "public_channel"))
                        want_public = true;
                else if (streq(s, "private_channel"))
                        want_private = true;
                else if (streq(s, "mpim"))
                        want_mpim = true;
                else if (streq(s, "im"))
                        want_im = true;
                else
                        return slack_fail(rp, "invalid_types");
        }
        bool exclude_archived = false;
        if (twin_arg_bool(c->args, "exclude_archived", &exclude_archived) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");

        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        json_t *ch;
        json_array_foreach (json_object_get(c->world, "channels"), i, ch) {
                bool priv = json_is_true(json_object_get(ch, "is_private"));
                bool im = json_is_true(json_object_get(ch, "is_im"));
                bool mpim = json_is_true(json_object_get(ch, "is_mpim"));
                bool want = im ? want_im : mpim ? want_mpim : priv ? want_private : want_public;
                if (want && slack_channel_visible(c, ch) && (!user || slack_is_member(ch, user)) &&
                    !(exclude_archived && json_is_true(json_object_get(ch, "is_archived"))) &&
                    json_array_append(match, ch) < 0)
                        return -ENOMEM;
        }
        return slack_list_page(c, rp, match, 100, 1000, slack_render_channel, "channels", NULL);
}

/* conversations.list: types (public_channel, private_channel, mpim, im), exclude_archived. */
int slack_act_list_conversations(TwinCall *c, TwinReply *rp)
{
        return list_filtered(c, rp, NULL);
}

/* users.conversations: the conversations user (default: the caller) is in, that the caller sees. */
int slack_act_user_conversations(TwinCall *c, TwinReply *rp)
{
        json_t *u = NULL;
        int r;
        json_t *v = json_object_get(c->args, "user");
        if (v && !json_is_null(v) && (r = slack_arg_user(c, rp, "user", NULL, &u)) <= 0)
                return r;
        return list_filtered(c, rp, u ? json_get_str(u, "id") : slack_bot_user(c));
}

int slack_act_conversation_info(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", "channel_id");
        if (r <= 0 || (r = slack_arg_channel(c, rp, &ch)) <= 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "channel", slack_render_channel(c, ch)));
}

/*
 * The cursor of a message list. Slack's is base64 "next_ts:<ts without its dot>": the
 * message the next page starts at, not an offset, so a page read after new posts (history is
 * newest first) or deletions neither repeats nor skips a message. 1 with *ret (µs, -1 for the
 * first page), 0 with invalid_cursor in rp, -ENOMEM.
 */
static int arg_ts_cursor(TwinCall *c, TwinReply *rp, int64_t *ret)
{
        const char *cursor;
        int r = twin_arg_str(c->args, "cursor", &cursor);
        *ret = -1;
        if (r == -ENOENT || (r == 0 && !cursor[0]))
                return 1;
        if (r < 0)
                return slack_fail(rp, "invalid_cursor");
        _cleanup_free_ char *raw = NULL;
        r = twin_base64_decode(cursor, &raw);
        if (r == -ENOMEM)
                return r;
        const char *digits = r == 0 ? startswith(raw, "next_ts:") : NULL;
        size_t n = digits ? strlen(digits) : 0;
        if (n == 0 || n > 17 || strspn(digits, "0123456789") != n)
                return slack_fail(rp, "invalid_cursor");
        *ret = strtoll(digits, NULL, 10);
        return 1;
}

/* {next_cursor} of a message page whose next message is m (NULL: the last page). */
static json_t *ts_cursor_metadata(json_t *m)
{
        char raw[48];
        _cleanup_free_ char *cur = NULL;
        if (m) {
                snprintf(raw, sizeof(raw), "next_ts:%lld", (long long)slack_msg_ts(m));
                if (!(cur = twin_base64(raw, strlen(raw))))
                        return NULL;
        }
        return json_pack("{s:s}", "next_cursor", cur ? cur : "");
}

/* Messages of ch, newest first (history: top level only) or one thread oldest first. */
static int list_messages(TwinCall *c, TwinReply *rp, json_t *ch, const char *thread)
{
        int64_t oldest = 0, latest = INT64_MAX;
        bool inclusive = false;
        int r;
        if ((r = slack_arg_bound(c, rp, "oldest", "invalid_ts_oldest", &oldest)) <= 0 ||
            (r = slack_arg_bound(c, rp, "latest", "invalid_ts_latest", &latest)) <= 0)
                return r;
        if (twin_arg_bool(c->args, "inclusive", &inclusive) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");

        json_t *msgs = json_object_get(ch, "messages");
        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        size_t n = json_array_size(msgs);
        for (size_t k = 0; k < n; k++) {
                json_t *m = json_array_get(msgs, thread ? k : n - 1 - k);
                int64_t ts = slack_msg_ts(m);
                const char *th = json_get_str(m, "thread_ts");
                bool in =
                        thread ? (streq_ptr(json_get_str(m, "ts"), thread) || streq_ptr(th, thread))
                               : slack_msg_top_level(m);
                /* a thread's parent always leads its replies, whatever the bounds */
                bool parent = thread && streq_ptr(json_get_str(m, "ts"), thread);
                bool lo = inclusive ? ts >= oldest : ts > oldest;
                bool hi = inclusive ? ts <= latest : ts < latest;
                if (in && (parent || (lo && hi)) && json_array_append(match, m) < 0)
                        return -ENOMEM;
        }

        int64_t limit, resume;
        if ((r = slack_arg_limit(c, rp, thread ? 1000 : 100, 1000, &limit)) <= 0 ||
            (r = arg_ts_cursor(c, rp, &resume)) <= 0)
                return r;
        n = json_array_size(match);
        size_t from = 0;
        /* resume at the cursor's message, or where it would be had it not been deleted */
        while (resume >= 0 && from < n &&
               (thread ? slack_msg_ts(json_array_get(match, from)) < resume
                       : slack_msg_ts(json_array_get(match, from)) > resume))
                from++;
        size_t count = (size_t)limit < n - from ? (size_t)limit : n - from;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        for (size_t i = from; i < from + count; i++)
                if (json_array_append_new(
                            out, slack_render_message(c, ch, json_array_get(match, i))) < 0)
                        return -ENOMEM;
        /* channel_id only for the MCP tools: conversations.history/replies have no such member */
        return slack_ok(rp, json_pack("{s:O, s:b, s:O*, s:o}", "messages", out, "has_more",
                                      from + count < n, "channel_id",
                                      c->request ? NULL : json_object_get(ch, "id"),
                                      "response_metadata",
                                      ts_cursor_metadata(json_array_get(match, from + count))));
}

/* conversations.history / slack_read_channel. */
int slack_act_read_channel(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", "channel_id");
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0)
                return r;
        return list_messages(c, rp, ch, NULL);
}

/* conversations.replies / slack_read_thread (ts, or the MCP server's message_ts). */
int slack_act_read_thread(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", "channel_id");
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0)
                return r;
        json_t *v = slack_arg2(c, "ts", "message_ts");
        if (!v || json_is_null(v))
                v = json_object_get(c->args, "thread_ts");
        if ((!v || json_is_null(v)) && (r = slack_arg_required(c, rp, "ts", "message_ts")) <= 0)
                return r;
        int64_t ts;
        json_t *parent = v && slack_ts_parse(v, &ts) == 0 ? slack_msg_find(ch, ts, NULL) : NULL;
        if (!parent)
                return slack_fail(rp, "thread_not_found");
        /* a reply's ts stands for its thread, as on slack.com */
        const char *thread = json_get_str(parent, "thread_ts");
        return list_messages(c, rp, ch, thread ? thread : json_get_str(parent, "ts"));
}

/* conversations.members / slack_list_channel_members: ids of the members the caller sees. */
int slack_act_list_channel_members(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", "channel_id");
        if (r <= 0 || (r = slack_arg_channel(c, rp, &ch)) <= 0)
                return r;
        _cleanup_json_ json_t *ids = json_array();
        if (!ids)
                return -ENOMEM;
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(ch, "members"), i, m) {
                if (slack_user_visible(slack_user_by_id(c->world, json_string_value(m))) &&
                    json_array_append(ids, m) < 0)
                        return -ENOMEM;
        }
        return slack_list_page(c, rp, ids, 100, 1000, NULL, "members", NULL);
}

/*
 * The user ids of args[key] (comma-separated or an array), each one a user the caller sees.
 * 1, 0 with user_not_found / no_user in rp, -errno. *ret is a new array. With skip, a user
 * the caller does not see is left out instead (user_not_found only when none is left).
 */
static int arg_users_skip(TwinCall *c, TwinReply *rp, const char *key, const char *alias, bool skip,
                          json_t **ret)
{
        _cleanup_json_ json_t *refs = NULL, *ids = json_array(), *tmp = NULL;
        json_t *v = slack_arg2(c, key, alias);
        const char *sv = json_string_value(v);
        /* some clients send the list as JSON text: users='["U1","U2"]' */
        if (sv && sv[0] == '[' && (tmp = json_pack("{s:o}", "v", json_loads(sv, 0, NULL))))
                v = json_object_get(tmp, "v");
        _cleanup_json_ json_t *holder = json_pack("{s:O?}", "v", v);
        if (!holder)
                return -ENOMEM;
        int r = twin_arg_strv(holder, "v", &refs);
        if (r == -ENOMEM || !ids)
                return -ENOMEM;
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        if (r == -ENOENT || json_array_size(refs) == 0)
                return slack_fail(rp, "no_user");
        size_t i;
        json_t *x;
        json_array_foreach (refs, i, x) {
                json_t *u = slack_user_resolve(c->world, json_string_value(x));
                if (!slack_user_visible(u) && skip)
                        continue;
                if (!slack_user_visible(u))
                        return slack_fail(rp, "user_not_found");
                if (!slack_strv_has(ids, json_get_str(u, "id")) &&
                    json_array_append(ids, json_object_get(u, "id")) < 0)
                        return -ENOMEM;
        }
        if (json_array_size(ids) == 0)
                return slack_fail(rp, "user_not_found");
        *ret = TAKE_PTR(ids);
        return 1;
}

static int arg_users(TwinCall *c, TwinReply *rp, const char *key, const char *alias, json_t **ret)
{
        return arg_users_skip(c, rp, key, alias, false, ret);
}

static int add_channel(TwinCall *c, TwinReply *rp, json_t *ch)
{
        json_t *chans = slack_world_list(c->world, "channels");
        if (!chans || json_array_append(chans, ch) < 0)
                return -ENOMEM;
        return twin_reply_mutation(rp, NULL, ch);
}

/*
 * The DM (one other user) or group DM (several) of the caller with the users ids (a
 * borrowed array of visible user ids, the caller's own added), found or created (the
 * creation is recorded in rp). 1 with *ret (borrowed) and *ret_existing, 0 with the error
 * in rp (too_many_users), -errno. conversations.open; chat.postMessage to a user id.
 */
int slack_conversation_open(TwinCall *c, TwinReply *rp, json_t *users, json_t **ret,
                            bool *ret_existing)
{
        const char *me = slack_bot_user(c);
        _cleanup_json_ json_t *ids = json_deep_copy(users);
        if (!ids)
                return -ENOMEM;
        if (!slack_strv_has(ids, me) && json_array_insert_new(ids, 0, json_string(me)) < 0)
                return -ENOMEM;
        if (json_array_size(ids) > 9)
                return slack_fail(rp, "too_many_users");
        bool im = json_array_size(ids) <= 2;
        size_t i;
        json_t *ch;
        json_array_foreach (json_object_get(c->world, "channels"), i, ch) {
                bool same = json_is_true(json_object_get(ch, im ? "is_im" : "is_mpim")) &&
                            json_array_size(json_object_get(ch, "members")) == json_array_size(ids);
                size_t k;
                json_t *x;
                json_array_foreach (ids, k, x) {
                        same = same && slack_is_member(ch, json_string_value(x));
                }
                if (same) {
                        *ret = ch;
                        *ret_existing = true;
                        return 1;
                }
        }
        char id[16];
        int r = slack_alloc_id(c->world, im ? 'D' : 'G', id);
        if (r < 0)
                return r;
        /* the other side of a DM; a self-DM talks to itself */
        const char *other = json_string_value(json_array_get(ids, json_array_size(ids) > 1));
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:b, s:b, s:b, s:b, s:I, s:s, s:O, s:[], s:[], s:[], s:{s:s, s:s, s:I}, "
                "s:{s:s, s:s, s:I}}",
                "id", id, "is_private", true, "is_archived", false, "is_im", im, "is_mpim", !im,
                "created", (json_int_t)c->now, "creator", me, "members", ids, "messages", "pins",
                "bookmarks", "topic", "value", "", "creator", "", "last_set", (json_int_t)0,
                "purpose", "value", "", "creator", "", "last_set", (json_int_t)0);
        if (!row)
                return -ENOMEM;
        if (im && json_object_set_new(row, "user", json_string(other)) < 0)
                return -ENOMEM;
        if (!im) {
                /* Slack names a group DM after its members: mpdm-a--b--c-1 */
                _cleanup_free_ char *name = strdup("mpdm");
                size_t k;
                json_t *x;
                json_array_foreach (ids, k, x) {
                        json_t *u = slack_user_by_id(c->world, json_string_value(x));
                        char *next = NULL;
                        if (!name || asprintf(&next, "%s%s%s", name, k ? "--" : "-",
                                              strempty(json_get_str(u, "name"))) < 0)
                                return -ENOMEM;
                        free(name);
                        name = next;
                }
                char *full = NULL;
                if (asprintf(&full, "%s-1", name) < 0 ||
                    json_object_set_new(row, "name", json_string(full)) < 0) {
                        free(full);
                        return -ENOMEM;
                }
                free(full);
        }
        if ((r = add_channel(c, rp, row)) < 0)
                return r;
        *ret = row;
        *ret_existing = false;
        return 1;
}

/* conversations.open: a DM with one user, a group DM with several (users), or channel. */
static int open_conversation(TwinCall *c, TwinReply *rp)
{
        json_t *v = json_object_get(c->args, "channel"), *ch;
        int r;
        if (json_is_string(v) && json_string_length(v)) {
                if ((r = slack_arg_channel(c, rp, &ch)) <= 0)
                        return r;
                return slack_ok(rp, json_pack("{s:b, s:b, s:{s:O}}", "no_op", true, "already_open",
                                              true, "channel", "id", json_object_get(ch, "id")));
        }
        _cleanup_json_ json_t *ids = NULL;
        bool existing;
        if ((r = arg_users(c, rp, "users", "user_ids", &ids)) <= 0 ||
            (r = slack_conversation_open(c, rp, ids, &ch, &existing)) <= 0)
                return r;
        bool full = false;
        (void)twin_arg_bool(c->args, "return_im", &full);
        json_t *out = full ? slack_render_channel(c, ch)
                           : json_pack("{s:O}", "id", json_object_get(ch, "id"));
        if (existing)
                return slack_ok(rp, json_pack("{s:b, s:b, s:o}", "no_op", true, "already_open",
                                              true, "channel", out));
        return slack_ok(rp, json_pack("{s:o}", "channel", out));
}

/*
 * Slack's channel name rules (conversations.create): at most 80 characters of lower-case
 * letters, digits, hyphens and underscores, not all of them punctuation. Returns NULL or
 * the error.
 */
static const char *channel_name_error(const char *name)
{
        size_t n = strlen(name);
        if (n == 0)
                return "invalid_name_required";
        if (slack_utf8_chars(name) > 80)
                return "invalid_name_maxlength";
        if (strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != n)
                return "invalid_name_specials";
        if (strspn(name, "-_") == n)
                return "invalid_name_punctuation";
        return NULL;
}

/*
 * conversations.create (name, is_private) and slack_create_conversation (channel_name,
 * is_private, user_ids: invited after; without channel_name it opens a DM as
 * conversations.open does). The route fixes "mode" to "create" or "open".
 */
int slack_act_create_conversation(TwinCall *c, TwinReply *rp)
{
        const char *mode = json_get_str(c->args, "mode");
        const char *name;
        int r = slack_arg_string(c, rp, "name", "channel_name", NULL, &name);
        if (r <= 0)
                return r;
        if (streq_ptr(mode, "open") || (!mode && !name))
                return open_conversation(c, rp);
        if (!name && streq_ptr(mode, "create") &&
            (r = slack_arg_required(c, rp, "name", "channel_name")) <= 0)
                return r;
        if (!name)
                return slack_fail(rp, "invalid_name_required");
        if (name[0] == '#')
                name++;
        const char *bad = channel_name_error(name);
        if (bad)
                return slack_fail(rp, bad);
        if (slack_find_by(json_object_get(c->world, "channels"), "name", name))
                return slack_fail(rp, "name_taken");
        bool priv = false;
        if (twin_arg_bool(c->args, "is_private", &priv) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        _cleanup_json_ json_t *invite = NULL;
        if (slack_arg2(c, "user_ids", "users")) {
                r = arg_users(c, rp, "user_ids", "users", &invite);
                if (r <= 0)
                        return r;
        }
        const char *me = slack_bot_user(c);
        char id[16];
        /* private channels have had C ids since 2021, like public ones */
        if ((r = slack_alloc_id(c->world, 'C', id)) < 0)
                return r;
        _cleanup_json_ json_t *members = json_pack("[s]", me);
        size_t i;
        json_t *x;
        json_array_foreach (invite, i, x) {
                if (!slack_strv_has(members, json_string_value(x)) &&
                    json_array_append(members, x) < 0)
                        return -ENOMEM;
        }
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:s, s:b, s:b, s:I, s:s, s:O, s:[], s:[], s:[], s:{s:s, s:s, s:I}, "
                "s:{s:s, s:s, s:I}}",
                "id", id, "name", name, "is_private", priv, "is_archived", false, "created",
                (json_int_t)c->now, "creator", me, "members", members, "messages", "pins",
                "bookmarks", "topic", "value", "", "creator", "", "last_set", (json_int_t)0,
                "purpose", "value", "", "creator", "", "last_set", (json_int_t)0);
        if (!row)
                return -ENOMEM;
        if ((r = add_channel(c, rp, row)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "channel", slack_render_channel(c, row)));
}

/* Applies a membership change to ch (in place) and records {before, after}. */
static int set_members(TwinReply *rp, json_t *ch, json_t *members)
{
        _cleanup_json_ json_t *before = json_deep_copy(ch);
        if (!before || json_object_set(ch, "members", members) < 0)
                return -ENOMEM;
        return twin_reply_mutation(rp, before, ch);
}

static json_t *members_without(json_t *ch, const char *uid)
{
        json_t *out = json_array();
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(ch, "members"), i, m) {
                if (out && !streq_ptr(json_string_value(m), uid) && json_array_append(out, m) < 0)
                        return json_decref(out), NULL;
        }
        return out;
}

/* conversations.join: public channels only (a private one is invisible: channel_not_found). */
int slack_act_join(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel(c, rp, &ch)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_im")) ||
            json_is_true(json_object_get(ch, "is_mpim")))
                return slack_fail(rp, "method_not_supported_for_channel_type");
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        const char *me = slack_bot_user(c);
        if (slack_is_member(ch, me))
                return slack_ok(rp, json_pack("{s:o, s:s, s:{s:[s]}}", "channel",
                                              slack_render_channel(c, ch), "warning",
                                              "already_in_channel", "response_metadata", "warnings",
                                              "already_in_channel"));
        _cleanup_json_ json_t *members = json_deep_copy(json_object_get(ch, "members"));
        if (!members || json_array_append_new(members, json_string(me)) < 0)
                return -ENOMEM;
        if ((r = set_members(rp, ch, members)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "channel", slack_render_channel(c, ch)));
}

int slack_act_leave(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel(c, rp, &ch)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_im")))
                return slack_fail(rp, "method_not_supported_for_channel_type");
        const char *me = slack_bot_user(c);
        if (!slack_is_member(ch, me))
                return slack_ok(rp, json_pack("{s:b}", "not_in_channel", true));
        if (streq_ptr(json_get_str(ch, "name"), "general"))
                return slack_fail(rp, "cant_leave_general");
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        /* a private channel keeps a member: nobody could let anyone back in */
        if (json_is_true(json_object_get(ch, "is_private")) &&
            json_array_size(json_object_get(ch, "members")) == 1)
                return slack_fail(rp, "last_member");
        _cleanup_json_ json_t *members = members_without(ch, me);
        if (!members)
                return -ENOMEM;
        if ((r = set_members(rp, ch, members)) < 0)
                return r;
        return slack_ok(rp, json_object());
}

/*
 * conversations.invite: users (comma-separated ids), the caller being a member. Without
 * force one user that cannot be invited fails the call and invites nobody; with force the
 * others are invited and the call fails only when none is left
 * (https://api.slack.com/methods/conversations.invite).
 */
int slack_act_invite(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        if (json_is_true(json_object_get(ch, "is_im")))
                return slack_fail(rp, "method_not_supported_for_channel_type");
        bool force = false;
        if (twin_arg_bool(c->args, "force", &force) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        _cleanup_json_ json_t *ids = NULL;
        r = arg_users_skip(c, rp, "users", "user_ids", force, &ids);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *members = json_deep_copy(json_object_get(ch, "members"));
        if (!members)
                return -ENOMEM;
        size_t i, added = 0;
        json_t *x;
        const char *refused = NULL;
        json_array_foreach (ids, i, x) {
                const char *uid = json_string_value(x);
                const char *why =
                        streq_ptr(uid, slack_bot_user(c)) ? "cant_invite_self"
                        : slack_strv_has(members, uid)    ? "already_in_channel"
                        : json_is_true(json_object_get(slack_user_by_id(c->world, uid), "deleted"))
                                ? "user_is_deleted"
                                : NULL;
                if (why && !force)
                        return slack_fail(rp, why);
                if (why) {
                        refused = refused ? refused : why;
                        continue;
                }
                if (json_array_append(members, x) < 0)
                        return -ENOMEM;
                added++;
        }
        if (added == 0)
                return slack_fail(rp, refused ? refused : "no_user");
        if ((r = set_members(rp, ch, members)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "channel", slack_render_channel(c, ch)));
}

int slack_act_kick(TwinCall *c, TwinReply *rp)
{
        json_t *ch, *u;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0 ||
            (r = slack_arg_required(c, rp, "user", "user_id")) <= 0 ||
            (r = slack_arg_user(c, rp, "user", "user_id", &u)) <= 0)
                return r;
        const char *uid = json_get_str(u, "id");
        if (streq_ptr(uid, slack_bot_user(c)))
                return slack_fail(rp, "cant_kick_self");
        if (streq_ptr(json_get_str(ch, "name"), "general"))
                return slack_fail(rp, "cant_kick_from_general");
        if (json_is_true(json_object_get(ch, "is_im")) ||
            json_is_true(json_object_get(ch, "is_mpim")))
                return slack_fail(rp, "method_not_supported_for_channel_type");
        if (!slack_is_member(ch, uid))
                return slack_fail(rp, "not_in_channel");
        _cleanup_json_ json_t *members = members_without(ch, uid);
        if (!members)
                return -ENOMEM;
        if ((r = set_members(rp, ch, members)) < 0)
                return r;
        return slack_ok(rp, json_object());
}

int slack_act_archive(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_im")) ||
            json_is_true(json_object_get(ch, "is_mpim")))
                return slack_fail(rp, "method_not_supported_for_channel_type");
        if (streq_ptr(json_get_str(ch, "name"), "general"))
                return slack_fail(rp, "cant_archive_general");
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "already_archived");
        _cleanup_json_ json_t *before = json_deep_copy(ch);
        if (!before || json_object_set_new(ch, "is_archived", json_true()) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, ch)) < 0)
                return r;
        return slack_ok(rp, json_object());
}

/* setTopic / setPurpose: at most 250 characters (too_long), the caller a member. */
static int set_text(TwinCall *c, TwinReply *rp, const char *key)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0 ||
            (r = slack_arg_required(c, rp, key, NULL)) <= 0)
                return r;
        json_t *v = json_object_get(c->args, key);
        if (!json_is_string(v))
                return slack_fail(rp, "invalid_arguments");
        if (slack_utf8_chars(json_string_value(v)) > 250)
                return slack_fail(rp, "too_long");
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        _cleanup_json_ json_t *before = json_deep_copy(ch);
        json_t *t = json_pack("{s:O, s:s, s:I}", "value", v, "creator", slack_bot_user(c),
                              "last_set", (json_int_t)c->now);
        if (!before || json_object_set_new(ch, key, t) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, ch)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "channel", slack_render_channel(c, ch)));
}

int slack_act_set_topic(TwinCall *c, TwinReply *rp)
{
        return set_text(c, rp, "topic");
}

int slack_act_set_purpose(TwinCall *c, TwinReply *rp)
{
        return set_text(c, rp, "purpose");
}

/* conversations.unarchive: the caller a member; not_archived. */
int slack_act_unarchive(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0)
                return r;
        if (!json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "not_archived");
        _cleanup_json_ json_t *before = json_deep_copy(ch);
        if (!before || json_object_set_new(ch, "is_archived", json_false()) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, ch)) < 0)
                return r;
        return slack_ok(rp, json_object());
}

/* conversations.rename: name rules as conversations.create; #general keeps its name. */
int slack_act_rename(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        const char *name;
        int r = slack_arg_required(c, rp, "channel", NULL);
        if (r <= 0 || (r = slack_arg_channel_in(c, rp, &ch)) <= 0 ||
            (r = slack_arg_required(c, rp, "name", NULL)) <= 0 ||
            (r = slack_arg_string(c, rp, "name", NULL, "invalid_name_required", &name)) <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_im")) ||
            json_is_true(json_object_get(ch, "is_mpim")))
                return slack_fail(rp, "method_not_supported_for_channel_type");
        if (name[0] == '#')
                name++;
        const char *bad = channel_name_error(name);
        if (bad)
                return slack_fail(rp, bad);
        json_t *other = slack_find_by(json_object_get(c->world, "channels"), "name", name);
        if (other && other != ch)
                return slack_fail(rp, "name_taken");
        if (streq_ptr(json_get_str(ch, "name"), "general"))
                return slack_fail(rp, "not_authorized");
        if (json_is_true(json_object_get(ch, "is_archived")))
                return slack_fail(rp, "is_archived");
        _cleanup_json_ json_t *before = json_deep_copy(ch);
        if (!before || json_object_set_new(ch, "name", json_string(name)) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, ch)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "channel", slack_render_channel(c, ch)));
}

/*
 * conversations.mark (https://api.slack.com/methods/conversations.mark): moves the caller's
 * read cursor in a channel it is in to ts (a message's, or any valid timestamp): {ok}. The
 * channel keeps it as last_read.
 */
int slack_act_mark(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = slack_arg_channel_in(c, rp, &ch);
        if (r <= 0)
                return r;
        json_t *jts = json_object_get(c->args, "ts");
        int64_t us;
        if (!jts || json_is_null(jts) || (json_is_string(jts) && !json_string_length(jts)))
                return slack_fail(rp, "invalid_timestamp");
        if (slack_ts_parse(jts, &us) < 0)
                return slack_fail(rp, "invalid_timestamp");
        json_t *ts = slack_ts_string(us);
        if (!ts)
                return -ENOMEM;
        if (json_equal(json_object_get(ch, "last_read"), ts)) {
                json_decref(ts);
                return slack_ok(rp, json_object());
        }
        _cleanup_json_ json_t *before = json_pack("{s:O, s:O?}", "id", json_object_get(ch, "id"),
                                                  "last_read", json_object_get(ch, "last_read"));
        if (!before || json_object_set_new(ch, "last_read", ts) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *after = json_pack("{s:O, s:O}", "id", json_object_get(ch, "id"),
                                                 "last_read", json_object_get(ch, "last_read"));
        if (!after || (r = twin_reply_mutation(rp, before, after)) < 0)
                return -ENOMEM;
        return slack_ok(rp, json_object());
}
