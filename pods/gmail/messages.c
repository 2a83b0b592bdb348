/* SPDX-License-Identifier: MIT */
/*
 * Messages (developers.google.com/gmail/api/reference/rest/v1/users.messages) and the
 * profile: list, get (full|metadata|minimal|raw), send, insert, import (raw JSON or media
 * uploads), modify, batchModify, trash, untrash, delete, batchDelete, attachments.get; and the
 * MCP tools get_message, label_message, unlabel_message, apply_sensitive_message_label.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pods/gmail/gmail.h"

/* users.getProfile: {emailAddress, messagesTotal, threadsTotal, historyId}. */
int gmail_get_profile(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *threads = json_object();
        size_t i;
        json_t *m;
        if (!threads)
                return -ENOMEM;
        json_array_foreach (json_object_get(c->world, "messages"), i, m)
                (void)json_object_set_new(threads, strempty(json_get_str(m, "threadId")),
                                          json_true());
        char h[32];
        snprintf(h, sizeof(h), "%lld",
                 (long long)json_integer_value(json_object_get(c->world, "historyId")));
        return twin_reply_body(
                rp, 200,
                json_pack("{s:s, s:I, s:I, s:s}", "emailAddress",
                          strempty(json_get_str(c->world, "emailAddress")), "messagesTotal",
                          (json_int_t)json_array_size(json_object_get(c->world, "messages")),
                          "threadsTotal", (json_int_t)json_object_size(threads), "historyId", h));
}

json_t *gmail_slim(const json_t *m)
{
        return json_pack("{s:O, s:O, s:O}", "id", json_object_get(m, "id"), "threadId",
                         json_object_get(m, "threadId"), "labelIds",
                         json_object_get(m, "labelIds"));
}

static json_t *message_at(TwinCall *c, const char *key, size_t *ret_index)
{
        return gmail_find(json_object_get(c->world, "messages"), json_get_str(c->args, key),
                          ret_index);
}

/* A list argument (labelIds, ids): absent is NULL; not a list of strings: -EINVAL. */
static int strv_arg(TwinCall *c, const char *key, json_t **ret, TwinReply *rp)
{
        *ret = NULL;
        int r = gmail_arg_list(c, key, ret);
        if (r == -ENOENT)
                return 0;
        if (r == -EINVAL)
                return gmail_fail(rp, 400, "invalidArgument", "Invalid value for %s", key)
                               ?: -EINVAL;
        return r;
}

int gmail_list_messages(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *names = NULL, *ids = NULL, *found = NULL;
        bool spam_trash = false;
        size_t off, size;
        int r = strv_arg(c, "labelIds", &names, rp);
        if (r == 0 && names)
                r = gmail_label_ids(c->world, names, &ids, rp);
        if (r == 0 && twin_arg_bool(c->args, "includeSpamTrash", &spam_trash) == -EINVAL)
                r = gmail_fail(rp, 400, "invalidArgument", "Invalid includeSpamTrash value")
                            ?: -EINVAL;
        if (r == 0)
                r = gmail_page(c, "maxResults", 100, 500, &off, &size, rp);
        if (r == 0)
                r = gmail_search(c, json_get_str(c->args, "q"), ids, spam_trash, &found, rp);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        _cleanup_json_ json_t *body =
                json_pack("{s:I}", "resultSizeEstimate", (json_int_t)json_array_size(found));
        _cleanup_json_ json_t *page = json_array();
        if (!body || !page)
                return -ENOMEM;
        for (size_t i = off; i < off + size && i < json_array_size(found); i++) {
                json_t *m = json_array_get(found, i);
                if (json_array_append_new(page, json_pack("{s:O, s:O}", "id",
                                                          json_object_get(m, "id"), "threadId",
                                                          json_object_get(m, "threadId"))) < 0)
                        return -ENOMEM;
        }
        if ((json_array_size(page) > 0 && json_object_set(body, "messages", page) < 0) ||
            gmail_page_next(body, off, size, json_array_size(found)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(body));
}

/* MCP's messageFormat as a format of ours: "metadata", "minimal" or "full". */
static const char *mcp_format(TwinCall *c)
{
        const char *f = json_get_str(c->args, "messageFormat");
        return streq_ptr(f, "METADATA_ONLY") ? "metadata"
               : streq_ptr(f, "MINIMAL")     ? "minimal"
                                             : "full";
}

/* users.messages.get, and the MCP get_message ({messageId, messageFormat}). */
int gmail_get_message(TwinCall *c, TwinReply *rp)
{
        json_t *m = message_at(c, c->request ? "id" : "messageId", NULL);
        if (!c->request) {
                if (!m)
                        return gmail_not_found(rp);
                return twin_reply_body(rp, 200, gmail_message_mcp(c->world, m, mcp_format(c)));
        }
        const char *format = json_get_str(c->args, "format");
        if (format && !streq(format, "full") && !streq(format, "metadata") &&
            !streq(format, "minimal") && !streq(format, "raw"))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid format value: %s", format);
        if (!m)
                return gmail_not_found(rp);
        _cleanup_json_ json_t *headers = NULL;
        int r = strv_arg(c, "metadataHeaders", &headers, rp);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        return twin_reply_body(rp, 200, gmail_message_render(m, format, headers));
}

/* Whether the message has a header name (case-insensitive) among its first lines. */
static bool has_header(const json_t *payload, const char *name)
{
        return gmail_mime_header(payload, name) != NULL;
}

/*
 * The message as Gmail sends it: a From of the mailbox, a Date and a Message-ID added in
 * front when missing. *ret (malloc'd, *ret_len). 0, -ENOMEM.
 */
static int complete_message(TwinCall *c, const char *raw, size_t len, char **ret, size_t *ret_len)
{
        _cleanup_json_ json_t *payload = NULL;
        int r = gmail_mime_parse(raw, len, &payload);
        if (r < 0)
                return r;
        char *head = NULL;
        size_t hl = 0;
        FILE *f = open_memstream(&head, &hl);
        if (!f)
                return -ENOMEM;
        if (!has_header(payload, "From"))
                fprintf(f, "From: %s\r\n", strempty(json_get_str(c->world, "emailAddress")));
        if (!has_header(payload, "Date")) {
                char d[64];
                time_t t = (time_t)(gmail_now_ms(c) / 1000);
                struct tm tm;
                gmtime_r(&t, &tm);
                strftime(d, sizeof(d), "%a, %d %b %Y %H:%M:%S +0000", &tm);
                fprintf(f, "Date: %s\r\n", d);
        }
        if (!has_header(payload, "Message-ID"))
                /* unique per mailbox without a counter: a refused send changes nothing */
                fprintf(f, "Message-ID: <%lld.%lld@pome-twin.test>\r\n",
                        (long long)json_integer_value(json_object_get(c->world, "historyId")) + 1,
                        (long long)gmail_now_ms(c));
        if (fclose(f) != 0) {
                free(head);
                return -ENOMEM;
        }
        char *out = malloc(hl + len + 1);
        if (!out) {
                free(head);
                return -ENOMEM;
        }
        memcpy(out, head, hl);
        memcpy(out + hl, raw, len);
        out[hl + len] = 0;
        free(head);
        *ret = out;
        *ret_len = hl + len;
        return 0;
}

/* A threadId of an upload's metadata: NULL when absent; 1 with rp's refusal when no
 * such thread. */
static int upload_thread(TwinCall *c, const json_t *meta, const char **ret, TwinReply *rp)
{
        const char *t = json_get_str(meta, "threadId");
        *ret = NULL;
        if (!t || !*t)
                return 0;
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(c->world, "messages"), i, m)
                if (streq_ptr(json_get_str(m, "threadId"), t)) {
                        *ret = t;
                        return 0;
                }
        return gmail_fail(rp, 404, "notFound", "Requested entity was not found.") ?: 1;
}

/* Whether any address of To/Cc/Bcc of the parsed raw message is the mailbox's own. */
static int recipients(TwinCall *c, const json_t *m, bool *ret_any, bool *ret_self)
{
        const char *self = strempty(json_get_str(c->world, "emailAddress"));
        static const char *const hs[] = {"To", "Cc", "Bcc"};
        *ret_any = *ret_self = false;
        for (size_t k = 0; k < ELEMENTSOF(hs); k++) {
                _cleanup_json_ json_t *a = gmail_message_addresses(m, hs[k]);
                size_t i;
                json_t *v;
                if (!a)
                        return -ENOMEM;
                json_array_foreach (a, i, v) {
                        *ret_any = true;
                        *ret_self = *ret_self || strcasecmp(json_string_value(v), self) == 0;
                }
        }
        return 0;
}

/* raw without its Bcc header (and the header's continuation lines): the copy a recipient
 * gets. *ret malloc'd, *ret_len bytes. 0, -ENOMEM. */
static int strip_bcc(const char *raw, size_t len, char **ret, size_t *ret_len)
{
        char *out = malloc(len + 1);
        size_t o = 0;
        bool skipping = false, body = false;
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                const char *nl = memchr(raw + i, '\n', len - i);
                size_t end = nl ? (size_t)(nl - raw) + 1 : len, n = end - i;
                const char *line = raw + i;
                if (!body) {
                        if (n <= 2 && (line[0] == '\n' || (line[0] == '\r' && n == 2)))
                                body = true;
                        else if (skipping && (line[0] == ' ' || line[0] == '\t')) {
                                i = end;
                                continue;
                        } else
                                skipping = n >= 4 && strncasecmp(line, "bcc:", 4) == 0;
                }
                if (body || !skipping) {
                        memcpy(out + o, line, n);
                        o += n;
                }
                i = end;
        }
        out[o] = 0;
        *ret = out;
        *ret_len = o;
        return 0;
}

/*
 * Under deliveryMode "seeded-mailboxes", a copy of the sent message (Bcc removed) for each
 * other seeded mailbox among its recipients, with INBOX and UNREAD and that mailbox's
 * filters, as hosted Pome's twin delivers. 0, -ENOMEM.
 */
static int deliver(TwinCall *c, const char *raw, size_t len, const json_t *pm)
{
        if (!streq_ptr(json_get_str(c->world, "deliveryMode"), "seeded-mailboxes"))
                return 0;
        static const char *const hs[] = {"To", "Cc", "Bcc"};
        _cleanup_json_ json_t *done = json_object();
        _cleanup_free_ char *copy = NULL;
        size_t cl;
        int r;
        if (!done || (r = strip_bcc(raw, len, &copy, &cl)) < 0)
                return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(hs); k++) {
                _cleanup_json_ json_t *a = gmail_message_addresses(pm, hs[k]);
                size_t i, j;
                json_t *v, *sub;
                if (!a)
                        return -ENOMEM;
                json_array_foreach (a, i, v) {
                        json_array_foreach (json_object_get(c->world, "mailboxes"), j, sub) {
                                const char *e = json_get_str(sub, "emailAddress");
                                if (!e || strcasecmp(e, json_string_value(v)) != 0 ||
                                    json_object_get(done, e))
                                        continue;
                                _cleanup_json_ json_t *labels =
                                        json_pack("[s, s]", "INBOX", "UNREAD");
                                GmailStore o = {.label_ids = labels,
                                                .internal_ms = gmail_now_ms(c),
                                                .now_ms = gmail_now_ms(c),
                                                .history = true,
                                                .filters = true};
                                if (!labels || json_object_set_new(done, e, json_true()) < 0 ||
                                    (r = gmail_store(sub, copy, cl, &o, NULL)) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        return 0;
}

int gmail_send_raw(TwinCall *c, TwinReply *rp, const char *raw, size_t len, const char *thread,
                   const char *keep_id, json_t **ret)
{
        _cleanup_free_ char *full = NULL;
        size_t fl;
        int r = complete_message(c, raw, len, &full, &fl);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *probe = NULL;
        if ((r = gmail_mime_parse(full, fl, &probe)) < 0)
                return r;
        _cleanup_json_ json_t *pm = json_pack("{s:O}", "payload", probe);
        bool any, self;
        if (!pm || (r = recipients(c, pm, &any, &self)) < 0)
                return r < 0 ? r : -ENOMEM;
        if (!any)
                return gmail_fail(rp, 400, "invalidArgument", "Recipient address required") ?: 1;
        _cleanup_json_ json_t *labels =
                self ? json_pack("[s, s]", "SENT", "INBOX") : json_pack("[s]", "SENT");
        if (!labels)
                return -ENOMEM;
        GmailStore o = {.id = keep_id,
                        .thread_id = thread,
                        .label_ids = labels,
                        .internal_ms = gmail_now_ms(c),
                        .now_ms = gmail_now_ms(c),
                        .history = true,
                        .filters = self};
        if ((r = gmail_store(c->world, full, fl, &o, ret)) < 0)
                return r;
        return deliver(c, full, fl, pm);
}

/* users.messages.send: {raw} or a media upload; answers {id, threadId, labelIds}. */
int gmail_send_message(TwinCall *c, TwinReply *rp)
{
        _cleanup_free_ char *raw = NULL;
        _cleanup_json_ json_t *meta = NULL;
        size_t len;
        const char *thread;
        json_t *m;
        int r = gmail_upload(c, false, &raw, &len, &meta, rp);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = upload_thread(c, meta, &thread, rp)) != 0 ||
            (r = gmail_send_raw(c, rp, raw, len, thread, NULL, &m)) != 0)
                return r < 0 ? r : 0;
        _cleanup_json_ json_t *after = gmail_slim(m);
        if (!after || (r = twin_reply_mutation(rp, NULL, after)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, json_incref(after));
}

/*
 * insert (incoming = false: the labels given, no filters, internalDate the receive time by
 * default) and import (true: INBOX and UNREAD unless labels are given, filters applied, the
 * Date header's time by default), as Gmail describes them.
 */
static int put_message(TwinCall *c, TwinReply *rp, bool incoming)
{
        _cleanup_free_ char *raw = NULL;
        _cleanup_json_ json_t *meta = NULL, *ids = NULL;
        size_t len;
        const char *thread;
        json_t *m;
        int r = gmail_upload(c, false, &raw, &len, &meta, rp);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = upload_thread(c, meta, &thread, rp)) != 0)
                return r < 0 ? r : 0;
        json_t *names = json_object_get(meta, "labelIds");
        if (names && !json_is_array(names))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid value for labelIds");
        if ((r = gmail_label_ids(c->world, names, &ids, rp)) < 0)
                return r == -EINVAL ? 0 : r;
        if (incoming && json_array_size(ids) == 0 &&
            (json_array_append_new(ids, json_string("INBOX")) < 0 ||
             json_array_append_new(ids, json_string("UNREAD")) < 0))
                return -ENOMEM;
        const char *src = json_get_str(c->args, "internalDateSource");
        if (src && !streq(src, "receivedTime") && !streq(src, "dateHeader"))
                return gmail_fail(rp, 400, "invalidArgument",
                                  "Invalid internalDateSource value: %s", src);
        bool by_header = src ? streq(src, "dateHeader") : incoming;
        GmailStore o = {.thread_id = thread,
                        .label_ids = ids,
                        .internal_ms = by_header ? 0 : gmail_now_ms(c),
                        .now_ms = gmail_now_ms(c),
                        .history = true,
                        .filters = incoming};
        if ((r = gmail_store(c->world, raw, len, &o, &m)) < 0)
                return r;
        _cleanup_json_ json_t *after = gmail_slim(m);
        if (!after || (r = twin_reply_mutation(rp, NULL, after)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, json_incref(after));
}

int gmail_insert_message(TwinCall *c, TwinReply *rp)
{
        return put_message(c, rp, false);
}

int gmail_import_message(TwinCall *c, TwinReply *rp)
{
        return put_message(c, rp, true);
}

int gmail_labels_checked(TwinCall *c, TwinReply *rp, const json_t *m, const json_t *add,
                         const json_t *remove, json_t **ret_add, json_t **ret_remove)
{
        int r = gmail_label_ids(c->world, add, ret_add, rp);
        if (r == 0)
                r = gmail_label_ids(c->world, remove, ret_remove, rp);
        if (r < 0)
                return r == -EINVAL ? 1 : r;
        bool is_draft = false, adds_draft = false, other = false, rm_draft = false;
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get(m, "labelIds"), i, v)
                is_draft = is_draft || streq_ptr(json_string_value(v), "DRAFT");
        json_array_foreach (*ret_add, i, v) {
                adds_draft = adds_draft || streq_ptr(json_string_value(v), "DRAFT");
                other = other || !streq_ptr(json_string_value(v), "DRAFT");
        }
        json_array_foreach (*ret_remove, i, v)
                rm_draft = rm_draft || streq_ptr(json_string_value(v), "DRAFT");
        if (is_draft && (other || rm_draft))
                return gmail_fail(rp, 400, "invalidArgument",
                                  "Draft messages may only carry the DRAFT label")
                               ?: 1;
        if (!is_draft && adds_draft)
                return gmail_fail(rp, 400, "invalidArgument",
                                  "The DRAFT label is managed by draft operations")
                               ?: 1;
        return 0;
}

int gmail_relabel(TwinCall *c, TwinReply *rp, json_t *m, const json_t *add, const json_t *remove)
{
        _cleanup_json_ json_t *a = NULL, *d = NULL, *before = gmail_slim(m);
        if (!before)
                return -ENOMEM;
        int r = gmail_labels_checked(c, rp, m, add, remove, &a, &d);
        if (r != 0)
                return r;
        bool changed;
        if ((r = gmail_message_relabel(c->world, m, a, d, &changed)) < 0)
                return r;
        if (!changed)
                return 0;
        _cleanup_json_ json_t *after = gmail_slim(m);
        return after ? twin_reply_mutation(rp, before, after) : -ENOMEM;
}

/* users.messages.modify: {addLabelIds, removeLabelIds}; answers the message's ids. */
int gmail_modify_message(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *add = NULL, *rm = NULL;
        json_t *m = message_at(c, "id", NULL);
        if (!m)
                return gmail_not_found(rp);
        int r = strv_arg(c, "addLabelIds", &add, rp);
        if (r == 0)
                r = strv_arg(c, "removeLabelIds", &rm, rp);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        if ((r = gmail_relabel(c, rp, m, add, rm)) != 0)
                return r < 0 ? r : 0;
        return twin_reply_body(rp, 200, gmail_slim(m));
}

/* The rows of args.ids (up to 1000), all of which must exist; 1 with rp's refusal. The
 * array (new) holds them. */
static int batch_rows(TwinCall *c, TwinReply *rp, json_t **ret)
{
        _cleanup_json_ json_t *ids = NULL, *rows = json_array();
        int r = strv_arg(c, "ids", &ids, rp);
        if (r < 0)
                return r == -EINVAL ? 1 : r;
        if (!rows)
                return -ENOMEM;
        if (json_array_size(ids) == 0)
                return gmail_fail(rp, 400, "invalidArgument", "ids must not be empty") ?: 1;
        if (json_array_size(ids) > 1000)
                return gmail_fail(rp, 400, "invalidArgument",
                                  "Too many ids: at most 1000 per request")
                               ?: 1;
        size_t i;
        json_t *v;
        json_array_foreach (ids, i, v) {
                json_t *m = gmail_find(json_object_get(c->world, "messages"), json_string_value(v),
                                       NULL);
                if (!m)
                        return gmail_fail(rp, 400, "invalidArgument", "Invalid id value: %s",
                                          json_string_value(v))
                                       ?: 1;
                if (json_array_append(rows, m) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(rows);
        return 0;
}

/* users.messages.batchModify: every message checked first, then changed; 204. */
int gmail_batch_modify_messages(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *rows = NULL, *add = NULL, *rm = NULL;
        _cleanup_json_ json_t *before = json_array(), *after = json_array();
        int r = batch_rows(c, rp, &rows);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = strv_arg(c, "addLabelIds", &add, rp)) < 0 ||
            (r = strv_arg(c, "removeLabelIds", &rm, rp)) < 0)
                return r == -EINVAL ? 0 : r;
        if (!before || !after)
                return -ENOMEM;
        size_t i;
        json_t *m;
        json_array_foreach (rows, i, m) {
                _cleanup_json_ json_t *a = NULL, *d = NULL;
                if ((r = gmail_labels_checked(c, rp, m, add, rm, &a, &d)) != 0)
                        return r < 0 ? r : 0;
        }
        bool any = false;
        json_array_foreach (rows, i, m) {
                _cleanup_json_ json_t *a = NULL, *d = NULL, *b = gmail_slim(m);
                bool changed;
                if (!b || (r = gmail_labels_checked(c, rp, m, add, rm, &a, &d)) != 0 ||
                    (r = gmail_message_relabel(c->world, m, a, d, &changed)) < 0)
                        return r < 0 ? r : -ENOMEM;
                if (changed && (json_array_append(before, b) < 0 ||
                                json_array_append_new(after, gmail_slim(m)) < 0))
                        return -ENOMEM;
                any = any || changed;
        }
        if (any && (r = twin_reply_mutation(rp, before, after)) < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/* Deletes the message row m for good, with its history record. 0, -ENOMEM. */
static int delete_row(TwinCall *c, json_t *m)
{
        _unused_ _cleanup_json_ json_t *keep = json_incref(m); /* m outlives its removal */
        size_t at;
        if (!gmail_find(json_object_get(c->world, "messages"), json_get_str(m, "id"), &at))
                return 0;
        int r = gmail_history_add(c->world, "messagesDeleted", m, NULL);
        if (r < 0)
                return r;
        gmail_message_remove(c->world, at);
        return 0;
}

int gmail_batch_delete_messages(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *rows = NULL, *before = json_array();
        int r = batch_rows(c, rp, &rows);
        if (r != 0)
                return r < 0 ? r : 0;
        size_t i;
        json_t *m;
        if (!before)
                return -ENOMEM;
        json_array_foreach (rows, i, m)
                if (json_array_append_new(before, gmail_slim(m)) < 0 || (r = delete_row(c, m)) < 0)
                        return r < 0 ? r : -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, NULL)) < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

int gmail_delete_message(TwinCall *c, TwinReply *rp)
{
        json_t *m = message_at(c, "id", NULL);
        if (!m)
                return gmail_not_found(rp);
        _cleanup_json_ json_t *before = gmail_slim(m);
        int r;
        if (!before || (r = delete_row(c, m)) < 0 ||
            (r = twin_reply_mutation(rp, before, NULL)) < 0)
                return -ENOMEM;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/* trash (TRASH on) or untrash (TRASH off) of the message args[key]. */
static int trash_one(TwinCall *c, TwinReply *rp, const char *key, bool on)
{
        json_t *m = message_at(c, key, NULL);
        if (!m)
                return gmail_not_found(rp);
        _cleanup_json_ json_t *l = json_pack("[s]", "TRASH");
        _cleanup_json_ json_t *before = gmail_slim(m);
        bool changed;
        if (!l || !before)
                return -ENOMEM;
        int r = gmail_message_relabel(c->world, m, on ? l : NULL, on ? NULL : l, &changed);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *after = gmail_slim(m);
        if (!after || (changed && twin_reply_mutation(rp, before, after) < 0))
                return -ENOMEM;
        return twin_reply_body(rp, 200, json_incref(after));
}

int gmail_trash_message(TwinCall *c, TwinReply *rp)
{
        return trash_one(c, rp, "id", true);
}

int gmail_untrash_message(TwinCall *c, TwinReply *rp)
{
        return trash_one(c, rp, "id", false);
}

/* users.messages.attachments.get: {attachmentId, size, data (base64url)}. */
int gmail_get_attachment(TwinCall *c, TwinReply *rp)
{
        const char *mid = json_get_str(c->args, "messageId");
        json_t *a = gmail_find(json_object_get(c->world, "attachments"),
                               json_get_str(c->args, "id"), NULL);
        if (!message_at(c, "messageId", NULL) || !a ||
            !streq_ptr(json_get_str(a, "messageId"), mid))
                return gmail_not_found(rp);
        return twin_reply_body(
                rp, 200,
                json_pack("{s:O, s:O, s:O}", "attachmentId", json_object_get(a, "id"), "size",
                          json_object_get(a, "size"), "data", json_object_get(a, "data")));
}

/* The MCP label_message / unlabel_message: {messageId, labelIds}; answers {}. */
static int mcp_label(TwinCall *c, TwinReply *rp, bool add)
{
        json_t *m = message_at(c, "messageId", NULL);
        _cleanup_json_ json_t *ids = NULL;
        int r = strv_arg(c, "labelIds", &ids, rp);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        if (!ids)
                return gmail_fail(rp, 400, "invalidArgument", "labelIds is required");
        if (!m)
                return gmail_not_found(rp);
        if ((r = gmail_relabel(c, rp, m, add ? ids : NULL, add ? NULL : ids)) != 0)
                return r < 0 ? r : 0;
        return gmail_reply_ok(rp);
}

int gmail_label_message(TwinCall *c, TwinReply *rp)
{
        return mcp_label(c, rp, true);
}

int gmail_unlabel_message(TwinCall *c, TwinReply *rp)
{
        return mcp_label(c, rp, false);
}

/* The MCP apply_sensitive_message_label: {messageId, labelOption TRASH|SPAM}: the label on,
 * INBOX and the other one off (hosted Pome's). */
int gmail_apply_sensitive_message_label(TwinCall *c, TwinReply *rp)
{
        const char *opt = json_get_str(c->args, "labelOption");
        if (!streq_ptr(opt, "TRASH") && !streq_ptr(opt, "SPAM"))
                return gmail_fail(rp, 400, "invalidArgument", "labelOption must be TRASH or SPAM");
        json_t *m = message_at(c, "messageId", NULL);
        if (!m)
                return gmail_not_found(rp);
        _cleanup_json_ json_t *add = json_pack("[s]", opt);
        _cleanup_json_ json_t *rm =
                json_pack("[s, s]", "INBOX", streq(opt, "TRASH") ? "SPAM" : "TRASH");
        if (!add || !rm)
                return -ENOMEM;
        int r = gmail_relabel(c, rp, m, add, rm);
        if (r != 0)
                return r < 0 ? r : 0;
        return gmail_reply_ok(rp);
}
