/* SPDX-License-Identifier: MIT */
/*
 * Drafts (developers.google.com/gmail/api/reference/rest/v1/users.drafts): list (the MCP
 * list_drafts), get, create (the MCP create_draft, which composes the message from its
 * fields), update, send, delete. A draft is {id, messageId}; its message is in the world's
 * messages with the DRAFT label.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pods/gmail/gmail.h"

static json_t *draft_message(TwinCall *c, const json_t *d, size_t *ret_index)
{
        return gmail_find(json_object_get(c->world, "messages"), json_get_str(d, "messageId"),
                          ret_index);
}

/* Google's Draft {id, message: {id, threadId, labelIds}}. */
static json_t *draft_render(TwinCall *c, const json_t *d, const char *format)
{
        json_t *m = draft_message(c, d, NULL);
        return json_pack("{s:O, s:o}", "id", json_object_get(d, "id"), "message",
                         !m       ? json_object()
                         : format ? gmail_message_render(m, format, NULL)
                                  : gmail_slim(m));
}

/* MCP's Draft: {id, threadId, toRecipients, ccRecipients, bccRecipients, date, subject?,
 * plaintextBody?, htmlBody?} (hosted Pome's draftResult). */
static json_t *draft_mcp(TwinCall *c, const json_t *d, bool metadata_only)
{
        json_t *m = draft_message(c, d, NULL);
        _cleanup_json_ json_t *full = m ? gmail_message_mcp(c->world, m, "full") : json_object();
        if (!full)
                return NULL;
        _cleanup_json_ json_t *out =
                json_pack("{s:O, s:s, s:o, s:o, s:o, s:s}", "id", json_object_get(d, "id"),
                          "threadId", strempty(json_get_str(m, "threadId")), "toRecipients",
                          json_object_get(full, "toRecipients")
                                  ? json_incref(json_object_get(full, "toRecipients"))
                                  : json_array(),
                          "ccRecipients",
                          json_object_get(full, "ccRecipients")
                                  ? json_incref(json_object_get(full, "ccRecipients"))
                                  : json_array(),
                          "bccRecipients",
                          json_object_get(full, "bccRecipients")
                                  ? json_incref(json_object_get(full, "bccRecipients"))
                                  : json_array(),
                          "date", strempty(json_get_str(full, "date")));
        if (!out)
                return NULL;
        if (metadata_only)
                return TAKE_PTR(out);
        if (json_object_set_new(out, "subject",
                                json_string(strempty(json_get_str(full, "subject")))) < 0 ||
            json_object_set_new(out, "plaintextBody",
                                json_string(strempty(json_get_str(full, "plaintextBody")))) < 0 ||
            (json_get_str(full, "htmlBody") &&
             json_object_set(out, "htmlBody", json_object_get(full, "htmlBody")) < 0))
                return NULL;
        return TAKE_PTR(out);
}

/* users.drafts.list ({q, maxResults, pageToken, includeSpamTrash}) and the MCP list_drafts
 * ({query, pageSize (20, at most 50), pageToken, view}). */
int gmail_list_drafts(TwinCall *c, TwinReply *rp)
{
        bool mcp = !c->request;
        _cleanup_json_ json_t *ids = json_pack("[s]", "DRAFT"), *found = NULL;
        _cleanup_json_ json_t *list = json_array(), *hits = json_array();
        size_t off, size;
        if (!ids || !list || !hits)
                return -ENOMEM;
        int r = gmail_page(c, mcp ? "pageSize" : "maxResults", mcp ? 20 : 100, mcp ? 50 : 500, &off,
                           &size, rp);
        if (r == 0)
                r = gmail_search(c, json_get_str(c->args, mcp ? "query" : "q"), ids, true, &found,
                                 rp);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        /* drafts in the order their messages were found (newest first) */
        size_t i, j;
        json_t *m, *d;
        json_array_foreach (found, i, m)
                json_array_foreach (json_object_get(c->world, "drafts"), j, d)
                        if (streq_ptr(json_get_str(d, "messageId"), json_get_str(m, "id")) &&
                            json_array_append(hits, d) < 0)
                                return -ENOMEM;
        bool meta = streq_ptr(json_get_str(c->args, "view"), "DRAFT_VIEW_METADATA_ONLY");
        for (i = off; i < off + size && i < json_array_size(hits); i++) {
                d = json_array_get(hits, i);
                if (json_array_append_new(list, mcp ? draft_mcp(c, d, meta)
                                                    : draft_render(c, d, NULL)) < 0)
                        return -ENOMEM;
        }
        _cleanup_json_ json_t *body = json_object();
        if (!body ||
            (!mcp && json_object_set_new(body, "resultSizeEstimate",
                                         json_integer((json_int_t)json_array_size(hits))) < 0) ||
            ((mcp || json_array_size(list) > 0) && json_object_set(body, "drafts", list) < 0) ||
            gmail_page_next(body, off, size, json_array_size(hits)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(body));
}

int gmail_get_draft(TwinCall *c, TwinReply *rp)
{
        json_t *d =
                gmail_find(json_object_get(c->world, "drafts"), json_get_str(c->args, "id"), NULL);
        const char *format = json_get_str(c->args, "format");
        if (format && !streq(format, "full") && !streq(format, "metadata") &&
            !streq(format, "minimal") && !streq(format, "raw"))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid format value: %s", format);
        if (!d)
                return gmail_not_found(rp);
        return twin_reply_body(rp, 200, draft_render(c, d, format ? format : "full"));
}

/* Stores raw as a draft's message (DRAFT) in thread (NULL: by its references). */
static int store_draft_message(TwinCall *c, const char *raw, size_t len, const char *thread,
                               json_t **ret)
{
        _cleanup_json_ json_t *labels = json_pack("[s]", "DRAFT");
        if (!labels)
                return -ENOMEM;
        GmailStore o = {.thread_id = thread,
                        .label_ids = labels,
                        .internal_ms = gmail_now_ms(c),
                        .now_ms = gmail_now_ms(c),
                        .history = true};
        return gmail_store(c->world, raw, len, &o, ret);
}

/* A draft's message.threadId: NULL when absent or naming no thread (Gmail then threads by
 * the references). */
static const char *known_thread(TwinCall *c, const json_t *meta)
{
        const char *t = json_get_str(meta, "threadId");
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(c->world, "messages"), i, m)
                if (t && streq_ptr(json_get_str(m, "threadId"), t))
                        return t;
        return NULL;
}

/*
 * Quotes message orig below the reply in spec, as Gmail's composer does (and Google's
 * create_draft promises for replyToMessageId): the text gets "On <date>, <sender> wrote:"
 * and the original's lines each behind "> ", an HTML body the original in a blockquote.
 */
static int quote_original(json_t *spec, const json_t *orig)
{
        const json_t *p = json_object_get(orig, "payload");
        const char *from = gmail_mime_header(p, "From");
        time_t t = (time_t)(strtoll(strempty(json_get_str(orig, "internalDate")), NULL, 10) / 1000);
        struct tm tm;
        char when[64] = "";
        if (gmtime_r(&t, &tm))
                strftime(when, sizeof(when), "%a, %b %-d, %Y at %-I:%M %p", &tm);
        _cleanup_free_ char *text = gmail_message_text(orig, "text/plain"),
                            *html = gmail_message_text(orig, "text/html");
        if (!text || !html)
                return -ENOMEM;
        const char *orig_text = *text ? text : strempty(json_get_str(orig, "snippet"));
        if (!*orig_text)
                return 0; /* nothing to quote */

        char *q = NULL;
        size_t ql = 0;
        FILE *f = open_memstream(&q, &ql);
        if (!f)
                return -ENOMEM;
        const char *mine = json_get_str(spec, "text");
        if (mine && *mine)
                fprintf(f, "%s\r\n\r\n", mine);
        fprintf(f, "On %s, %s wrote:\r\n", when, from ? from : "the sender");
        for (const char *l = orig_text; *l;) {
                size_t n = strcspn(l, "\n");
                size_t k = n > 0 && l[n - 1] == '\r' ? n - 1 : n;
                fprintf(f, ">%s%.*s\r\n", k ? " " : "", (int)k, l);
                l += n + (l[n] == '\n');
        }
        if (fclose(f) != 0) {
                free(q);
                return -ENOMEM;
        }
        int r = json_object_set_new(spec, "text", json_string(q)) < 0 ? -ENOMEM : 0;
        free(q);
        const char *mine_html = json_get_str(spec, "html");
        if (r < 0 || !mine_html || !*html)
                return r;
        _cleanup_free_ char *h = NULL;
        if (asprintf(&h,
                     "%s<br><br><div class=\"gmail_quote\"><div>On %s, %s wrote:</div>"
                     "<blockquote class=\"gmail_quote\">%s</blockquote></div>",
                     mine_html, when, from ? from : "the sender", html) < 0)
                return -ENOMEM;
        return json_object_set_new(spec, "html", json_string(h)) < 0 ? -ENOMEM : 0;
}

/* The MCP create_draft's fields as gmail_mime_build's spec; *ret_thread the replied-to
 * message's thread. 1 with the refusal in rp. */
static int mcp_spec(TwinCall *c, TwinReply *rp, json_t **ret, const char **ret_thread)
{
        static const char *const lists[] = {"to", "cc", "bcc"};
        /* dated by the mailbox's clock, as the draft's internalDate */
        _cleanup_json_ json_t *spec =
                json_pack("{s:s, s:I}", "from", strempty(json_get_str(c->world, "emailAddress")),
                          "date", (json_int_t)(gmail_now_ms(c) / 1000));
        *ret_thread = NULL;
        if (!spec)
                return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                json_t *v = json_object_get(c->args, lists[k]);
                if (!v || json_is_null(v))
                        continue;
                _cleanup_json_ json_t *a = NULL;
                if (twin_arg_strv(c->args, lists[k], &a) < 0)
                        return gmail_fail(rp, 400, "invalidArgument",
                                          "%s must be a list of email addresses", lists[k])
                                       ?: 1;
                if (json_object_set(spec, lists[k], a) < 0)
                        return -ENOMEM;
        }
        static const char *const strs[][2] = {
                {"subject", "subject"}, {"body", "text"}, {"htmlBody", "html"}};
        for (size_t k = 0; k < ELEMENTSOF(strs); k++) {
                json_t *v = json_object_get(c->args, strs[k][0]);
                if (!v || json_is_null(v))
                        continue;
                if (!json_is_string(v))
                        return gmail_fail(rp, 400, "invalidArgument", "%s must be a string",
                                          strs[k][0])
                                       ?: 1;
                if (json_object_set(spec, strs[k][1], v) < 0)
                        return -ENOMEM;
        }
        const char *reply = json_get_str(c->args, "replyToMessageId");
        if (reply) {
                json_t *orig = gmail_find(json_object_get(c->world, "messages"), reply, NULL);
                if (!orig)
                        return gmail_not_found(rp) ?: 1;
                const json_t *p = json_object_get(orig, "payload");
                const char *mid = gmail_mime_header(p, "Message-ID");
                const char *refs = gmail_mime_header(p, "References");
                const char *subj = gmail_mime_header(p, "Subject");
                _cleanup_free_ char *allrefs = NULL, *re = NULL;
                if (mid && asprintf(&allrefs, "%s%s%s", refs ? refs : "", refs ? " " : "", mid) < 0)
                        return -ENOMEM;
                if (mid && (json_object_set_new(spec, "inReplyTo", json_string(mid)) < 0 ||
                            json_object_set_new(spec, "references", json_string(allrefs)) < 0))
                        return -ENOMEM;
                if (!json_object_get(spec, "subject") && subj) {
                        if (asprintf(&re, "%s%s",
                                     strncasecmp(subj, "Re:", 3) == 0 ? "" : "Re: ", subj) < 0 ||
                            json_object_set_new(spec, "subject", json_string(re)) < 0)
                                return -ENOMEM;
                }
                int r = quote_original(spec, orig);
                if (r < 0)
                        return r;
                *ret_thread = json_get_str(orig, "threadId");
        }
        json_t *atts = json_object_get(c->args, "attachments"), *a;
        size_t i;
        if (atts && !json_is_array(atts) && !json_is_null(atts))
                return gmail_fail(rp, 400, "invalidArgument", "attachments must be a list") ?: 1;
        if (json_array_size(atts) > 0) {
                _cleanup_json_ json_t *out = json_array();
                if (!out || json_object_set(spec, "attachments", out) < 0)
                        return -ENOMEM;
                json_array_foreach (atts, i, a) {
                        const char *content = json_get_str(a, "content");
                        if (!content)
                                return gmail_fail(rp, 400, "invalidArgument",
                                                  "attachments[%zu].content is required", i)
                                               ?: 1;
                        const char *fn = json_get_str(a, "filename");
                        const char *mt = json_get_str(a, "mimeType");
                        if (json_array_append_new(
                                    out, json_pack("{s:s, s:s, s:s}", "filename", fn ? fn : "",
                                                   "mimeType", mt ? mt : "application/octet-stream",
                                                   "data", content)) < 0)
                                return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(spec);
        return 0;
}

/* users.drafts.create ({message: {raw, threadId}} or a media upload) and the MCP
 * create_draft (the message composed from its fields). */
int gmail_create_draft(TwinCall *c, TwinReply *rp)
{
        bool mcp = !c->request;
        _cleanup_free_ char *raw = NULL;
        _cleanup_json_ json_t *meta = NULL;
        size_t len;
        const char *thread = NULL;
        int r;
        if (mcp) {
                _cleanup_json_ json_t *spec = NULL;
                if ((r = mcp_spec(c, rp, &spec, &thread)) != 0)
                        return r < 0 ? r : 0;
                r = gmail_mime_build(spec, &raw, &len);
                if (r == -EINVAL)
                        return gmail_fail(rp, 400, "invalidArgument",
                                          "attachment content must be base64");
                if (r < 0)
                        return r;
        } else {
                if ((r = gmail_upload(c, true, &raw, &len, &meta, rp)) != 0)
                        return r < 0 ? r : 0;
                thread = known_thread(c, json_object_get(meta, "message"));
        }
        json_t *m, *drafts = gmail_rows(c->world, "drafts");
        if (!drafts || (r = store_draft_message(c, raw, len, thread, &m)) < 0)
                return -ENOMEM;
        _cleanup_free_ char *id = gmail_mint_id(c->world, "draft", drafts);
        json_t *d = id ? json_pack("{s:s, s:O}", "id", id, "messageId", json_object_get(m, "id"))
                       : NULL;
        if (!d || json_array_append_new(drafts, d) < 0 ||
            (r = twin_reply_mutation(rp, NULL, d)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, mcp ? draft_mcp(c, d, false) : draft_render(c, d, NULL));
}

/* Replaces draft d's message with raw (its old message deleted). */
static int replace_message(TwinCall *c, json_t *d, const char *raw, size_t len, const json_t *meta)
{
        size_t at;
        json_t *old = draft_message(c, d, &at);
        const char *thread = known_thread(c, json_object_get(meta, "message"));
        _cleanup_free_ char *keep_thread =
                !thread && old ? strdup(strempty(json_get_str(old, "threadId"))) : NULL;
        int r;
        if (old) {
                _cleanup_json_ json_t *ref = json_incref(old);
                if ((r = gmail_history_add(c->world, "messagesDeleted", old, NULL)) < 0)
                        return r;
                /* keep the draft: take the message alone out */
                if (json_array_remove(json_object_get(c->world, "messages"), at) < 0)
                        return -ENOMEM;
                json_t *atts = json_object_get(c->world, "attachments");
                for (size_t i = json_array_size(atts); i-- > 0;)
                        if (streq_ptr(json_get_str(json_array_get(atts, i), "messageId"),
                                      json_get_str(ref, "id")))
                                (void)json_array_remove(atts, i);
        }
        json_t *m;
        if ((r = store_draft_message(c, raw, len, thread ? thread : keep_thread, &m)) < 0)
                return r;
        return json_object_set(d, "messageId", json_object_get(m, "id")) < 0 ? -ENOMEM : 0;
}

/* users.drafts.update: {id, message: {raw}} or a media upload; the draft back. */
int gmail_update_draft(TwinCall *c, TwinReply *rp)
{
        json_t *d =
                gmail_find(json_object_get(c->world, "drafts"), json_get_str(c->args, "id"), NULL);
        if (!d)
                return gmail_not_found(rp);
        _cleanup_free_ char *raw = NULL;
        _cleanup_json_ json_t *meta = NULL, *before = json_deep_copy(d);
        size_t len;
        int r = gmail_upload(c, true, &raw, &len, &meta, rp);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!before ||
            (r = replace_message(c, d, raw, len, json_object_get(meta, "message"))) < 0 ||
            (r = twin_reply_mutation(rp, before, d)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, draft_render(c, d, NULL));
}

/* Whether the call carries a message: a media upload, or a JSON message.raw. */
static bool carries_message(TwinCall *c)
{
        const char *ct = c->request ? json_get_str(c->request->headers, "content-type") : NULL;
        if (c->request && c->request->body_len > 0 && ct &&
            strncasecmp(ct, "application/json", 16) != 0)
                return true;
        return json_is_string(json_object_get(json_object_get(c->args, "message"), "raw"));
}

/* users.drafts.send: {id, message?} — the draft's message (replaced first when the call
 * carries one) sent, the draft gone; the sent Message back. */
int gmail_send_draft(TwinCall *c, TwinReply *rp)
{
        json_t *drafts = json_object_get(c->world, "drafts");
        const char *id = json_get_str(c->args, "id");
        _cleanup_free_ char *raw = NULL;
        _cleanup_json_ json_t *meta = NULL;
        bool fresh = carries_message(c);
        size_t len = 0, at;
        int r;
        if (fresh) {
                if ((r = gmail_upload(c, true, &raw, &len, &meta, rp)) != 0)
                        return r < 0 ? r : 0;
                id = id ? id : json_get_str(meta, "id");
        }
        json_t *d = gmail_find(drafts, id, &at);
        if (!d)
                return id ? gmail_not_found(rp)
                          : gmail_fail(rp, 400, "invalidArgument", "Draft id is required");
        _cleanup_json_ json_t *before = json_deep_copy(d);
        if (!before)
                return -ENOMEM;
        if (fresh && (r = replace_message(c, d, raw, len, json_object_get(meta, "message"))) < 0)
                return r;
        size_t mat;
        json_t *m = draft_message(c, d, &mat);
        if (!m)
                return gmail_not_found(rp);
        _cleanup_free_ char *bytes = NULL;
        size_t blen;
        const char *raw64 = strempty(json_get_str(m, "raw"));
        if ((r = gmail_base64_decode(raw64, strlen(raw64), &bytes, &blen)) < 0)
                return r == -ENOMEM ? r : gmail_fail(rp, 500, "backendError", "Unreadable draft");
        _cleanup_free_ char *mid = strdup(strempty(json_get_str(m, "id")));
        _cleanup_free_ char *thread = strdup(strempty(json_get_str(m, "threadId")));
        _cleanup_json_ json_t *old = json_incref(m), *saved = json_array();
        json_t *atts = json_object_get(c->world, "attachments");
        if (!mid || !thread || !saved)
                return -ENOMEM;
        /* the draft's message leaves (its attachments too) to come back as the sent one */
        for (size_t i = json_array_size(atts); i-- > 0;)
                if (streq_ptr(json_get_str(json_array_get(atts, i), "messageId"), mid) &&
                    (json_array_append(saved, json_array_get(atts, i)) < 0 ||
                     json_array_remove(atts, i) < 0))
                        return -ENOMEM;
        if (json_array_remove(json_object_get(c->world, "messages"), mat) < 0)
                return -ENOMEM;
        json_t *sent;
        r = gmail_send_raw(c, rp, bytes, blen, thread, mid, &sent);
        if (r != 0) {
                /* refused (no recipient): the draft's message goes back as it was */
                if (json_array_insert(json_object_get(c->world, "messages"), mat, old) < 0 ||
                    json_array_extend(gmail_rows(c->world, "attachments"), saved) < 0)
                        return -ENOMEM;
                return r < 0 ? r : 0;
        }
        if (gmail_find(drafts, json_get_str(before, "id"), &at) &&
            json_array_remove(drafts, at) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *after = gmail_slim(sent);
        if (!after || (r = twin_reply_mutation(rp, before, after)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, json_incref(after));
}

/* users.drafts.delete: the draft and its message, for good; 204. */
int gmail_delete_draft(TwinCall *c, TwinReply *rp)
{
        json_t *d =
                gmail_find(json_object_get(c->world, "drafts"), json_get_str(c->args, "id"), NULL);
        if (!d)
                return gmail_not_found(rp);
        _cleanup_json_ json_t *before = json_deep_copy(d);
        size_t at;
        json_t *m = draft_message(c, d, &at);
        int r;
        if (!before)
                return -ENOMEM;
        if (m) {
                if ((r = gmail_history_add(c->world, "messagesDeleted", m, NULL)) < 0)
                        return r;
                gmail_message_remove(c->world, at); /* takes the draft row along */
        } else {
                size_t dat;
                gmail_find(json_object_get(c->world, "drafts"), json_get_str(before, "id"), &dat);
                (void)json_array_remove(json_object_get(c->world, "drafts"), dat);
        }
        if ((r = twin_reply_mutation(rp, before, NULL)) < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}
