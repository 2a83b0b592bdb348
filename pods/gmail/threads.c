/* SPDX-License-Identifier: MIT */
/*
 * Threads (developers.google.com/gmail/api/reference/rest/v1/users.threads): list (the MCP
 * search_threads is its door), get (the MCP get_thread), modify, trash, untrash, delete; and
 * the MCP label_thread, unlabel_thread, apply_sensitive_thread_label. A thread is the
 * messages sharing a threadId; it has no row of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pods/gmail/gmail.h"

static int64_t internal_ms(const json_t *m)
{
        return strtoll(strempty(json_get_str(m, "internalDate")), NULL, 10);
}

json_t *gmail_thread_messages(json_t *world, const char *id)
{
        json_t *out = json_array();
        size_t i;
        json_t *m;
        if (!out || !id)
                return out;
        json_array_foreach (json_object_get(world, "messages"), i, m)
                if (streq_ptr(json_get_str(m, "threadId"), id)) {
                        /* oldest first, as Gmail lists a thread's messages */
                        size_t at = json_array_size(out);
                        while (at > 0 && internal_ms(json_array_get(out, at - 1)) > internal_ms(m))
                                at--;
                        if (json_array_insert(out, at, m) < 0) {
                                json_decref(out);
                                return NULL;
                        }
                }
        return out;
}

/* The largest historyId of the thread's messages, as a string (static buffer of the caller). */
static const char *thread_history(const json_t *msgs, char *buf, size_t len)
{
        long long best = 0;
        size_t i;
        json_t *m;
        json_array_foreach (msgs, i, m) {
                long long h = strtoll(strempty(json_get_str(m, "historyId")), NULL, 10);
                best = h > best ? h : best;
        }
        snprintf(buf, len, "%lld", best);
        return buf;
}

/* The thread resource {id, snippet, historyId, messages?} of msgs (non-empty). */
static json_t *thread_render(const char *id, const json_t *msgs, const char *format,
                             const json_t *headers, bool with_messages)
{
        char h[32];
        json_t *last = json_array_get(msgs, json_array_size(msgs) - 1);
        _cleanup_json_ json_t *out = json_pack("{s:s, s:s, s:s}", "id", id, "snippet",
                                               strempty(json_get_str(last, "snippet")), "historyId",
                                               thread_history(msgs, h, sizeof(h)));
        if (!out)
                return NULL;
        if (!with_messages)
                return TAKE_PTR(out);
        json_t *list = json_array();
        size_t i;
        json_t *m;
        if (!list || json_object_set_new(out, "messages", list) < 0)
                return NULL;
        json_array_foreach (msgs, i, m)
                if (json_array_append_new(list, format ? gmail_message_render(m, format, headers)
                                                       : gmail_slim(m)) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

/* MCP's Thread {id, messages: [Message]} at format. */
static json_t *thread_mcp(json_t *world, const char *id, const json_t *msgs, const char *format)
{
        _cleanup_json_ json_t *out = json_pack("{s:s, s:[]}", "id", id, "messages");
        json_t *list = json_object_get(out, "messages"), *m;
        size_t i;
        if (!out)
                return NULL;
        json_array_foreach (msgs, i, m)
                if (json_array_append_new(list, gmail_message_mcp(world, m, format)) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

/*
 * users.threads.list ({q, labelIds, maxResults, pageToken, includeSpamTrash}: threads with a
 * matching message, the newest first) and the MCP search_threads ({query, pageSize (20, at
 * most 50), pageToken, includeTrash, view}: the threads with their messages).
 */
int gmail_search_threads(TwinCall *c, TwinReply *rp)
{
        bool mcp = !c->request, spam_trash = false;
        _cleanup_json_ json_t *names = NULL, *ids = NULL, *found = NULL, *order = json_array();
        _cleanup_json_ json_t *seen = json_object();
        size_t off, size;
        int r = 0;
        if (!order || !seen)
                return -ENOMEM;
        if (!mcp) {
                r = gmail_arg_list(c, "labelIds", &names);
                if (r == -ENOENT)
                        r = 0;
                else if (r == -EINVAL)
                        r = gmail_fail(rp, 400, "invalidArgument", "Invalid labelIds") ?: -EINVAL;
                if (r == 0 && names)
                        r = gmail_label_ids(c->world, names, &ids, rp);
        }
        if (r == 0 && twin_arg_bool(c->args, mcp ? "includeTrash" : "includeSpamTrash",
                                    &spam_trash) == -EINVAL)
                r = gmail_fail(rp, 400, "invalidArgument", "Invalid boolean value") ?: -EINVAL;
        if (r == 0)
                r = gmail_page(c, mcp ? "pageSize" : "maxResults", mcp ? 20 : 100, mcp ? 50 : 500,
                               &off, &size, rp);
        if (r == 0)
                r = gmail_search(c, json_get_str(c->args, mcp ? "query" : "q"), ids, spam_trash,
                                 &found, rp);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        size_t i;
        json_t *m;
        json_array_foreach (found, i, m) {
                const char *t = strempty(json_get_str(m, "threadId"));
                if (json_object_get(seen, t))
                        continue;
                if (json_object_set_new(seen, t, json_true()) < 0 ||
                    json_array_append_new(order, json_string(t)) < 0)
                        return -ENOMEM;
        }
        size_t total = json_array_size(order);
        _cleanup_json_ json_t *list = json_array();
        if (!list)
                return -ENOMEM;
        const char *view = json_get_str(c->args, "view");
        for (i = off; i < off + size && i < total; i++) {
                const char *t = json_string_value(json_array_get(order, i));
                _cleanup_json_ json_t *msgs = gmail_thread_messages(c->world, t);
                if (!msgs)
                        return -ENOMEM;
                json_t *row =
                        mcp ? thread_mcp(c->world, t, msgs,
                                         streq_ptr(view, "THREAD_VIEW_METADATA_ONLY") ? "metadata"
                                                                                      : "minimal")
                            : thread_render(t, msgs, NULL, NULL, false);
                if (json_array_append_new(list, row) < 0)
                        return -ENOMEM;
        }
        _cleanup_json_ json_t *body = json_object();
        char est[32];
        snprintf(est, sizeof(est), "%zu", total);
        if (!body ||
            (mcp ? json_object_set_new(body, "resultCountEstimate", json_string(est))
                 : json_object_set_new(body, "resultSizeEstimate",
                                       json_integer((json_int_t)total))) < 0 ||
            ((mcp || total > 0) && json_object_set(body, "threads", list) < 0) ||
            gmail_page_next(body, off, size, total) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(body));
}

/* users.threads.get ({id, format, metadataHeaders}) and the MCP get_thread ({threadId,
 * messageFormat}). */
int gmail_get_thread(TwinCall *c, TwinReply *rp)
{
        bool mcp = !c->request;
        const char *id = json_get_str(c->args, mcp ? "threadId" : "id");
        _cleanup_json_ json_t *msgs = gmail_thread_messages(c->world, id);
        if (!msgs)
                return -ENOMEM;
        if (json_array_size(msgs) == 0)
                return gmail_not_found(rp);
        if (mcp) {
                const char *f = json_get_str(c->args, "messageFormat");
                return twin_reply_body(rp, 200,
                                       thread_mcp(c->world, id, msgs,
                                                  streq_ptr(f, "METADATA_ONLY") ? "metadata"
                                                  : streq_ptr(f, "MINIMAL")     ? "minimal"
                                                                                : "full"));
        }
        const char *format = json_get_str(c->args, "format");
        if (format && !streq(format, "full") && !streq(format, "metadata") &&
            !streq(format, "minimal") && !streq(format, "raw"))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid format value: %s", format);
        _cleanup_json_ json_t *headers = NULL;
        if (gmail_arg_list(c, "metadataHeaders", &headers) == -EINVAL)
                return gmail_fail(rp, 400, "invalidArgument", "Invalid metadataHeaders");
        return twin_reply_body(rp, 200,
                               thread_render(id, msgs, format ? format : "full", headers, true));
}

static bool is_draft(const json_t *m)
{
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get(m, "labelIds"), i, v)
                if (streq_ptr(json_string_value(v), "DRAFT"))
                        return true;
        return false;
}

/*
 * Changes the labels of every message of thread id but its drafts (each checked first), the
 * messages' before/after on the tape; *ret_msgs (new) the thread's messages. 1 with a refusal in rp
 * (no such thread, a label refused), 0, -ENOMEM.
 */
static int thread_relabel(TwinCall *c, TwinReply *rp, const char *id, const json_t *add,
                          const json_t *remove, json_t **ret_msgs)
{
        _cleanup_json_ json_t *msgs = gmail_thread_messages(c->world, id);
        _cleanup_json_ json_t *before = json_array(), *after = json_array();
        size_t i;
        json_t *m;
        int r;
        if (!msgs || !before || !after)
                return -ENOMEM;
        if (json_array_size(msgs) == 0)
                return gmail_not_found(rp) ?: 1;
        json_array_foreach (msgs, i, m) {
                _cleanup_json_ json_t *a = NULL, *d = NULL;
                if (!is_draft(m) && (r = gmail_labels_checked(c, rp, m, add, remove, &a, &d)) != 0)
                        return r;
        }
        json_array_foreach (msgs, i, m) {
                _cleanup_json_ json_t *a = NULL, *d = NULL, *b = gmail_slim(m);
                bool changed;
                /* a draft in the thread keeps its DRAFT alone: the others' labels move */
                if (is_draft(m))
                        continue;
                if (!b || (r = gmail_labels_checked(c, rp, m, add, remove, &a, &d)) != 0 ||
                    (r = gmail_message_relabel(c->world, m, a, d, &changed)) < 0)
                        return r < 0 ? r : -ENOMEM;
                if (changed && (json_array_append(before, b) < 0 ||
                                json_array_append_new(after, gmail_slim(m)) < 0))
                        return -ENOMEM;
        }
        if (json_array_size(after) > 0 && (r = twin_reply_mutation(rp, before, after)) < 0)
                return r;
        *ret_msgs = TAKE_PTR(msgs);
        return 0;
}

static int strv(TwinCall *c, TwinReply *rp, const char *key, json_t **ret)
{
        int r = gmail_arg_list(c, key, ret);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r == -EINVAL)
                return gmail_fail(rp, 400, "invalidArgument", "Invalid value for %s", key) ?: 1;
        return r;
}

/* users.threads.modify: {addLabelIds, removeLabelIds} on every message; the thread back. */
int gmail_modify_thread(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *add = NULL, *rm = NULL, *msgs = NULL;
        const char *id = json_get_str(c->args, "id");
        int r = strv(c, rp, "addLabelIds", &add);
        if (r == 0)
                r = strv(c, rp, "removeLabelIds", &rm);
        if (r == 0)
                r = thread_relabel(c, rp, id, add, rm, &msgs);
        if (r != 0)
                return r < 0 ? r : 0;
        return twin_reply_body(rp, 200, thread_render(id, msgs, NULL, NULL, true));
}

static int thread_trash(TwinCall *c, TwinReply *rp, bool on)
{
        _cleanup_json_ json_t *l = json_pack("[s]", "TRASH"), *msgs = NULL;
        const char *id = json_get_str(c->args, "id");
        if (!l)
                return -ENOMEM;
        int r = thread_relabel(c, rp, id, on ? l : NULL, on ? NULL : l, &msgs);
        if (r != 0)
                return r < 0 ? r : 0;
        return twin_reply_body(rp, 200, thread_render(id, msgs, NULL, NULL, true));
}

int gmail_trash_thread(TwinCall *c, TwinReply *rp)
{
        return thread_trash(c, rp, true);
}

int gmail_untrash_thread(TwinCall *c, TwinReply *rp)
{
        return thread_trash(c, rp, false);
}

/* users.threads.delete: every message of the thread, for good; 204. */
int gmail_delete_thread(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *msgs = gmail_thread_messages(c->world, json_get_str(c->args, "id"));
        _cleanup_json_ json_t *before = json_array();
        size_t i;
        json_t *m;
        if (!msgs || !before)
                return -ENOMEM;
        if (json_array_size(msgs) == 0)
                return gmail_not_found(rp);
        json_array_foreach (msgs, i, m) {
                size_t at;
                int r;
                if (json_array_append_new(before, gmail_slim(m)) < 0 ||
                    (r = gmail_history_add(c->world, "messagesDeleted", m, NULL)) < 0)
                        return -ENOMEM;
                if (gmail_find(json_object_get(c->world, "messages"), json_get_str(m, "id"), &at))
                        gmail_message_remove(c->world, at);
        }
        int r = twin_reply_mutation(rp, before, NULL);
        if (r < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

static int mcp_thread_label(TwinCall *c, TwinReply *rp, bool add)
{
        _cleanup_json_ json_t *ids = NULL, *msgs = NULL;
        int r = strv(c, rp, "labelIds", &ids);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!ids)
                return gmail_fail(rp, 400, "invalidArgument", "labelIds is required");
        r = thread_relabel(c, rp, json_get_str(c->args, "threadId"), add ? ids : NULL,
                           add ? NULL : ids, &msgs);
        if (r != 0)
                return r < 0 ? r : 0;
        return gmail_reply_ok(rp);
}

int gmail_label_thread(TwinCall *c, TwinReply *rp)
{
        return mcp_thread_label(c, rp, true);
}

int gmail_unlabel_thread(TwinCall *c, TwinReply *rp)
{
        return mcp_thread_label(c, rp, false);
}

/* The MCP apply_sensitive_thread_label: {threadId, labelOption TRASH|SPAM}. */
int gmail_apply_sensitive_thread_label(TwinCall *c, TwinReply *rp)
{
        const char *opt = json_get_str(c->args, "labelOption");
        if (!streq_ptr(opt, "TRASH") && !streq_ptr(opt, "SPAM"))
                return gmail_fail(rp, 400, "invalidArgument", "labelOption must be TRASH or SPAM");
        _cleanup_json_ json_t *add = json_pack("[s]", opt), *msgs = NULL;
        _cleanup_json_ json_t *rm =
                json_pack("[s, s]", "INBOX", streq(opt, "TRASH") ? "SPAM" : "TRASH");
        if (!add || !rm)
                return -ENOMEM;
        int r = thread_relabel(c, rp, json_get_str(c->args, "threadId"), add, rm, &msgs);
        if (r != 0)
                return r < 0 ? r : 0;
        return gmail_reply_ok(rp);
}
