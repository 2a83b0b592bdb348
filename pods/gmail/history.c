/* SPDX-License-Identifier: MIT */
/*
 * History (developers.google.com/gmail/api/reference/rest/v1/users.history/list): the
 * mailbox's changes after a startHistoryId, as the records the other files append
 * (gmail_history_add). History starts with the seeded world: an older startHistoryId is
 * Gmail's 404, "a full sync is required".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pods/gmail/gmail.h"

/* historyTypes' words as the records' keys */
static const char *record_key(const char *type)
{
        return streq(type, "messageAdded")     ? "messagesAdded"
               : streq(type, "messageDeleted") ? "messagesDeleted"
               : streq(type, "labelAdded")     ? "labelsAdded"
               : streq(type, "labelRemoved")   ? "labelsRemoved"
                                               : NULL;
}

/* Whether record rec is about label (its message carried it, or it was added or removed). */
static bool names_label(const json_t *rec, const char *label)
{
        static const char *const keys[] = {"messagesAdded", "messagesDeleted", "labelsAdded",
                                           "labelsRemoved"};
        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                size_t i, j;
                json_t *e, *l;
                json_array_foreach (json_object_get(rec, keys[k]), i, e) {
                        json_array_foreach (
                                json_object_get(json_object_get(e, "message"), "labelIds"), j, l)
                                if (streq_ptr(json_string_value(l), label))
                                        return true;
                        json_array_foreach (json_object_get(e, "labelIds"), j, l)
                                if (streq_ptr(json_string_value(l), label))
                                        return true;
                }
        }
        return false;
}

/* users.history.list: {startHistoryId, historyTypes, labelId, maxResults, pageToken}. */
int gmail_list_history(TwinCall *c, TwinReply *rp)
{
        int64_t start;
        int r = twin_arg_int(c->args, "startHistoryId", 0, INT64_MAX, &start);
        if (r == -ENOENT)
                return gmail_fail(rp, 400, "invalidArgument", "startHistoryId is required");
        if (r < 0)
                return gmail_fail(rp, 400, "invalidArgument", "Invalid startHistoryId");
        json_int_t first = json_integer_value(json_object_get(c->world, "historyStart"));
        if (start < first)
                return gmail_not_found(rp);
        _cleanup_json_ json_t *types = NULL;
        r = gmail_arg_list(c, "historyTypes", &types);
        if (r == -EINVAL)
                return gmail_fail(rp, 400, "invalidArgument", "Invalid historyTypes");
        size_t i;
        json_t *v;
        json_array_foreach (types, i, v)
                if (!record_key(json_string_value(v)))
                        return gmail_fail(rp, 400, "invalidArgument",
                                          "Invalid value for historyTypes: %s",
                                          json_string_value(v));
        const char *label = json_get_str(c->args, "labelId");
        size_t off, size;
        if ((r = gmail_page(c, "maxResults", 100, 500, &off, &size, rp)) < 0)
                return r == -EINVAL ? 0 : r;
        _cleanup_json_ json_t *hits = json_array();
        if (!hits)
                return -ENOMEM;
        json_array_foreach (json_object_get(c->world, "history"), i, v) {
                long long id = strtoll(strempty(json_get_str(v, "id")), NULL, 10);
                bool typed = json_array_size(types) == 0;
                size_t j;
                json_t *t;
                if (id <= start)
                        continue;
                json_array_foreach (types, j, t)
                        typed = typed || json_object_get(v, record_key(json_string_value(t)));
                if (!typed || (label && !names_label(v, label)))
                        continue;
                if (json_array_append(hits, v) < 0)
                        return -ENOMEM;
        }
        char h[32];
        snprintf(h, sizeof(h), "%lld",
                 (long long)json_integer_value(json_object_get(c->world, "historyId")));
        _cleanup_json_ json_t *body = json_pack("{s:s}", "historyId", h), *page = json_array();
        if (!body || !page)
                return -ENOMEM;
        for (i = off; i < off + size && i < json_array_size(hits); i++)
                if (json_array_append_new(page, json_deep_copy(json_array_get(hits, i))) < 0)
                        return -ENOMEM;
        if ((json_array_size(page) > 0 && json_object_set(body, "history", page) < 0) ||
            gmail_page_next(body, off, size, json_array_size(hits)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(body));
}
