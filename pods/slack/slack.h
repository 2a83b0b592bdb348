/* SPDX-License-Identifier: MIT */
/*
 * The Slack twin's private header: the world helpers, renderers and argument readers the
 * method-family files (conversations.c, chat.c, reactions.c, users.c, search.c, files.c,
 * canvases.c) share with slack.c, and the action handlers the kind's handler table
 * (slack.c) binds to pods/slack/surface.json. Each function's comment is at its
 * definition. Not for anything outside pods/slack.
 */
#pragma once

#include "pods/twin/kind.h"

#define SLACK_SEED_TS_US INT64_C(1700000000000100) /* first generated seed ts */
#define SLACK_MAX_TEXT   40000                     /* characters of a message (msg_too_long) */

/* ----- world (slack.c) */
json_t *slack_find_by(json_t *list, const char *key, const char *value);
json_t *slack_user_by_id(json_t *w, const char *id);
json_t *slack_user_resolve(json_t *w, const char *ref);
json_t *slack_channel_resolve(json_t *w, const char *ref);
int slack_alloc_id(json_t *w, char prefix, char ret[static 16]);
int slack_ts_parse(const json_t *v, int64_t *ret);
json_t *slack_ts_string(int64_t us);
int64_t slack_msg_ts(json_t *m);
size_t slack_utf8_chars(const char *s);
bool slack_msg_top_level(json_t *m);
json_t *slack_msg_find(json_t *ch, int64_t ts_us, size_t *ret_idx);
const char *slack_bot_user(TwinCall *c);
bool slack_strv_has(const json_t *a, const char *s);
bool slack_is_member(json_t *ch, const char *uid);
bool slack_channel_visible(TwinCall *c, json_t *ch);
bool slack_channel_is_group(json_t *ch);
bool slack_user_visible(json_t *u);
json_t *slack_world_list(json_t *w, const char *key);

/* ----- replies and rendering (slack.c) */
void slack_error(int status, const char *code, const char *message, TwinReply *rp);
int slack_fail(TwinReply *rp, const char *error);
int slack_ok(TwinReply *rp, json_t *more);
json_t *slack_render_channel(TwinCall *c, json_t *ch);
json_t *slack_render_message(TwinCall *c, json_t *ch, json_t *m);
json_t *slack_render_user(TwinCall *c, json_t *u);
/* The profile of user u as users.profile.get and users.info show it: the world's, with what
 * every profile has filled in (first and last name, images, status, huddle state). New
 * reference, NULL on OOM. */
json_t *slack_render_profile(TwinCall *c, json_t *u);
json_t *slack_permalink(TwinCall *c, json_t *ch, json_t *m);

/* ----- arguments and pages (slack.c) */
json_t *slack_arg2(TwinCall *c, const char *key, const char *alias);
int slack_arg_string(TwinCall *c, TwinReply *rp, const char *key, const char *alias,
                     const char *missing, const char **ret);
int slack_arg_required(TwinCall *c, TwinReply *rp, const char *key, const char *alias);
int slack_arg_channel(TwinCall *c, TwinReply *rp, json_t **ret);
int slack_arg_channel_in(TwinCall *c, TwinReply *rp, json_t **ret);
int slack_arg_user(TwinCall *c, TwinReply *rp, const char *key, const char *alias, json_t **ret);
int slack_arg_message(TwinCall *c, TwinReply *rp, json_t *ch, const char *key, const char *alias,
                      json_t **ret, size_t *ret_idx);
int slack_arg_limit(TwinCall *c, TwinReply *rp, int64_t def, int64_t max, int64_t *ret);
int slack_arg_page(TwinCall *c, TwinReply *rp, int64_t def, int64_t max, size_t n, size_t *from,
                   size_t *count);
json_t *slack_response_metadata(size_t next, size_t n);
json_t *slack_next_ts(TwinCall *c);
int slack_arg_json_array(TwinCall *c, const char *key, json_t **ret);
int slack_arg_bound(TwinCall *c, TwinReply *rp, const char *key, const char *error, int64_t *ret);
int slack_list_page(TwinCall *c, TwinReply *rp, json_t *items, int64_t def, int64_t max,
                    json_t *(*render)(TwinCall *c, json_t *item), const char *key, json_t *more);
int slack_row_replace(TwinReply *rp, json_t *list, size_t idx, json_t *next);

/* ----- actions: conversations.c */
int slack_act_auth_test(TwinCall *c, TwinReply *rp);
int slack_act_list_conversations(TwinCall *c, TwinReply *rp);
int slack_act_conversation_info(TwinCall *c, TwinReply *rp);
int slack_act_read_channel(TwinCall *c, TwinReply *rp);
int slack_act_read_thread(TwinCall *c, TwinReply *rp);
int slack_act_list_channel_members(TwinCall *c, TwinReply *rp);
int slack_act_create_conversation(TwinCall *c, TwinReply *rp);
int slack_act_join(TwinCall *c, TwinReply *rp);
int slack_act_leave(TwinCall *c, TwinReply *rp);
int slack_act_invite(TwinCall *c, TwinReply *rp);
int slack_act_kick(TwinCall *c, TwinReply *rp);
int slack_act_archive(TwinCall *c, TwinReply *rp);
int slack_act_set_topic(TwinCall *c, TwinReply *rp);
int slack_act_set_purpose(TwinCall *c, TwinReply *rp);
int slack_act_user_conversations(TwinCall *c, TwinReply *rp);
int slack_act_unarchive(TwinCall *c, TwinReply *rp);
int slack_act_rename(TwinCall *c, TwinReply *rp);
int slack_conversation_open(TwinCall *c, TwinReply *rp, json_t *users, json_t **ret,
                            bool *ret_existing);

/* ----- actions: chat.c */
int slack_act_send_message(TwinCall *c, TwinReply *rp);
int slack_act_post_ephemeral(TwinCall *c, TwinReply *rp);
int slack_act_mark(TwinCall *c, TwinReply *rp);
int slack_act_list_usergroups(TwinCall *c, TwinReply *rp);
int slack_act_edit_message(TwinCall *c, TwinReply *rp);
int slack_act_delete_message(TwinCall *c, TwinReply *rp);
int slack_act_schedule_message(TwinCall *c, TwinReply *rp);
int slack_act_delete_scheduled_message(TwinCall *c, TwinReply *rp);
int slack_act_list_scheduled_messages(TwinCall *c, TwinReply *rp);
int slack_act_get_permalink(TwinCall *c, TwinReply *rp);
int slack_deliver_scheduled(TwinCall *c, json_t *events);

/* ----- actions: reactions.c (reactions, pins, bookmarks) */
int slack_act_add_reaction(TwinCall *c, TwinReply *rp);
int slack_act_get_reactions(TwinCall *c, TwinReply *rp);
int slack_act_remove_reaction(TwinCall *c, TwinReply *rp);
int slack_act_add_pin(TwinCall *c, TwinReply *rp);
int slack_act_list_pins(TwinCall *c, TwinReply *rp);
int slack_act_remove_pin(TwinCall *c, TwinReply *rp);
int slack_act_add_bookmark(TwinCall *c, TwinReply *rp);
int slack_act_list_bookmarks(TwinCall *c, TwinReply *rp);
int slack_act_remove_bookmark(TwinCall *c, TwinReply *rp);

/* ----- actions: users.c */
int slack_act_list_users(TwinCall *c, TwinReply *rp);
int slack_act_user_info(TwinCall *c, TwinReply *rp);
int slack_act_lookup_by_email(TwinCall *c, TwinReply *rp);
int slack_act_read_user_profile(TwinCall *c, TwinReply *rp);
int slack_act_set_user_profile(TwinCall *c, TwinReply *rp);
int slack_act_team_info(TwinCall *c, TwinReply *rp);
int slack_act_list_emoji(TwinCall *c, TwinReply *rp);
int slack_act_search_emojis(TwinCall *c, TwinReply *rp);
int slack_act_search_users(TwinCall *c, TwinReply *rp);

/* ----- actions: search.c */
int slack_act_search_public(TwinCall *c, TwinReply *rp);
int slack_act_search_all(TwinCall *c, TwinReply *rp);
int slack_act_search_channels(TwinCall *c, TwinReply *rp);

/* ----- actions: files.c */
int slack_act_list_files(TwinCall *c, TwinReply *rp);
int slack_act_read_file(TwinCall *c, TwinReply *rp);
int slack_act_upload_file(TwinCall *c, TwinReply *rp);
int slack_act_get_upload_url(TwinCall *c, TwinReply *rp);
int slack_act_put_upload(TwinCall *c, TwinReply *rp);
int slack_act_complete_upload(TwinCall *c, TwinReply *rp);
int slack_act_delete_file(TwinCall *c, TwinReply *rp);
json_t *slack_render_file(TwinCall *c, json_t *f);
bool slack_file_visible(TwinCall *c, json_t *f);

/* ----- actions: canvases.c */
int slack_act_create_canvas(TwinCall *c, TwinReply *rp);
int slack_act_update_canvas(TwinCall *c, TwinReply *rp);
int slack_act_read_canvas(TwinCall *c, TwinReply *rp);
int slack_act_delete_canvas(TwinCall *c, TwinReply *rp);
int slack_act_lookup_canvas_sections(TwinCall *c, TwinReply *rp);
