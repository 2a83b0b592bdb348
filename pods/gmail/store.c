/* SPDX-License-Identifier: MIT */
/*
 * Messages in the world: storing one (its MIME parsed by mime.c, attachment bytes moved out
 * behind an attachmentId as Gmail does, its thread found by References/In-Reply-To), the
 * users.messages resource in each format, labels changed with their history, search (q by
 * query.c), media uploads and list paging. The actions are in messages.c, threads.c and
 * drafts.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/text.h"
#include "pods/gmail/gmail.h"

/* ------------------------------------------------------------------ storing */

/* Moves the bytes of every attachment part (a filename) below part into the world's
 * attachments, leaving body {attachmentId, size}. 0, -ENOMEM. */
static int move_attachments(json_t *world, json_t *part, const char *message_id)
{
        json_t *body = json_object_get(part, "body");
        const char *fn = json_get_str(part, "filename");
        const char *data = json_get_str(body, "data");
        if (fn && *fn && data) {
                json_t *atts = gmail_rows(world, "attachments");
                _cleanup_free_ char *id = atts ? gmail_mint_id(world, "att", atts) : NULL;
                if (!id)
                        return -ENOMEM;
                json_t *row =
                        json_pack("{s:s, s:s, s:I, s:s}", "id", id, "messageId", message_id, "size",
                                  json_integer_value(json_object_get(body, "size")), "data", data);
                if (!row || json_array_append_new(atts, row) < 0 ||
                    json_object_del(body, "data") < 0 ||
                    json_object_set_new(body, "attachmentId", json_string(id)) < 0)
                        return -ENOMEM;
        }
        size_t i;
        json_t *p;
        json_array_foreach (json_object_get(part, "parts"), i, p) {
                int r = move_attachments(world, p, message_id);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The Message-IDs ("<a@b>") in a References or In-Reply-To value, each tried against the
 * world's messages: the thread of the first one found, or NULL. */
static const char *thread_by_refs(json_t *world, const char *refs)
{
        const char *p = refs;
        while (p && (p = strchr(p, '<'))) {
                const char *e = strchr(p, '>');
                if (!e)
                        break;
                size_t n = (size_t)(e - p + 1);
                size_t i;
                json_t *m;
                json_array_foreach (json_object_get(world, "messages"), i, m) {
                        const char *mid =
                                gmail_mime_header(json_object_get(m, "payload"), "Message-ID");
                        if (mid) {
                                while (*mid == ' ')
                                        mid++;
                                if (strlen(mid) >= n && strncmp(mid, p, n) == 0)
                                        return json_get_str(m, "threadId");
                        }
                }
                p = e + 1;
        }
        return NULL;
}

/* An RFC 5322 Date ("Tue, 19 Jul 2026 12:00:00 +0000") into ms; 0 when unreadable. */
static int64_t date_header_ms(const char *v)
{
        struct tm tm = {};
        const char *p = v;
        if (!v)
                return 0;
        while (*p == ' ')
                p++;
        const char *comma = strchr(p, ',');
        if (comma && comma - p <= 4)
                p = comma + 1;
        char *end = strptime(p, " %d %b %Y %H:%M:%S", &tm);
        if (!end) {
                memset(&tm, 0, sizeof(tm));
                end = strptime(p, " %d %b %Y %H:%M", &tm);
        }
        if (!end)
                return 0;
        int64_t t = (int64_t)timegm(&tm);
        while (*end == ' ')
                end++;
        if ((*end == '+' || *end == '-') && isdigit((unsigned char)end[1])) {
                int hhmm = atoi(end + 1);
                int64_t off = (int64_t)((hhmm / 100) * 60 + hhmm % 100) * 60;
                t -= *end == '+' ? off : -off;
        }
        return t > 0 ? t * 1000 : 0;
}

int gmail_store(json_t *world, const char *raw, size_t len, const GmailStore *o, json_t **ret)
{
        json_t *messages = gmail_rows(world, "messages");
        _cleanup_json_ json_t *payload = NULL;
        if (!messages)
                return -ENOMEM;
        int r = gmail_mime_parse(raw ? raw : "", raw ? len : 0, &payload);
        if (r < 0)
                return r;
        _cleanup_free_ char *id = o->id ? strdup(o->id) : gmail_mint_id(world, "msg", messages);
        if (!id)
                return -ENOMEM;
        if ((r = move_attachments(world, payload, id)) < 0)
                return r;
        _cleanup_free_ char *thread = NULL;
        const char *t = o->thread_id;
        if (!t)
                t = thread_by_refs(world, gmail_mime_header(payload, "In-Reply-To"));
        if (!t)
                t = thread_by_refs(world, gmail_mime_header(payload, "References"));
        if (!t) {
                json_t *threads = json_object();
                size_t i;
                json_t *m;
                if (!threads)
                        return -ENOMEM;
                /* a minted thread id never names a thread that exists */
                json_array_foreach (messages, i, m) {
                        const char *tid = json_get_str(m, "threadId");
                        if (tid)
                                (void)json_object_set_new(threads, tid, json_true());
                }
                for (;;) {
                        free(thread);
                        thread = gmail_mint_id(world, "thread", NULL);
                        if (!thread || !json_object_get(threads, thread))
                                break;
                }
                json_decref(threads);
                if (!thread)
                        return -ENOMEM;
                t = thread;
        }
        int64_t ms = o->internal_ms;
        if (ms <= 0)
                ms = date_header_ms(gmail_mime_header(payload, "Date"));
        if (ms <= 0)
                ms = o->now_ms;
        char date[32];
        snprintf(date, sizeof(date), "%lld", (long long)ms);
        _cleanup_free_ char *snippet = gmail_mime_snippet(payload);
        _cleanup_free_ char *b64 = gmail_base64url(raw ? raw : "", raw ? len : 0);
        json_int_t h = gmail_history_bump(world);
        char hid[32];
        snprintf(hid, sizeof(hid), "%lld", (long long)h);
        if (!snippet || !b64)
                return -ENOMEM;
        json_t *m =
                json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:I, s:O, s:s}", "id", id, "threadId", t,
                          "labelIds", o->label_ids ? json_deep_copy(o->label_ids) : json_array(),
                          "snippet", snippet, "historyId", hid, "internalDate", date,
                          "sizeEstimate", (json_int_t)len, "payload", payload, "raw", b64);
        if (!m || json_array_append_new(messages, m) < 0)
                return -ENOMEM;
        if (o->filters && (r = gmail_filters_apply(world, m, o->now_ms)) < 0)
                return r;
        if (o->history && (r = gmail_history_add(world, "messagesAdded", m, NULL)) < 0)
                return r;
        if (ret)
                *ret = m;
        return 0;
}

void gmail_message_remove(json_t *world, size_t at)
{
        json_t *messages = json_object_get(world, "messages");
        json_t *m = json_array_get(messages, at);
        const char *id = json_get_str(m, "id");
        json_t *atts = json_object_get(world, "attachments");
        json_t *drafts = json_object_get(world, "drafts");
        for (size_t i = json_array_size(atts); i-- > 0;)
                if (streq_ptr(json_get_str(json_array_get(atts, i), "messageId"), id))
                        (void)json_array_remove(atts, i);
        for (size_t i = json_array_size(drafts); i-- > 0;)
                if (streq_ptr(json_get_str(json_array_get(drafts, i), "messageId"), id))
                        (void)json_array_remove(drafts, i);
        (void)json_array_remove(messages, at);
}

/* ------------------------------------------------------------------ rendering */

/* payload for format=metadata: mimeType and the headers (only those named, when named). */
static json_t *metadata_payload(const json_t *payload, const json_t *names)
{
        json_t *out = json_pack("{s:s, s:s, s:[]}", "partId", "", "mimeType",
                                strempty(json_get_str(payload, "mimeType")), "headers");
        json_t *hs = json_object_get(out, "headers");
        size_t i, j;
        json_t *h, *n;
        if (!out)
                return NULL;
        json_array_foreach (json_object_get(payload, "headers"), i, h) {
                bool keep = json_array_size(names) == 0;
                json_array_foreach (names, j, n)
                        keep = keep || strcasecmp(strempty(json_string_value(n)),
                                                  strempty(json_get_str(h, "name"))) == 0;
                if (keep && json_array_append(hs, h) < 0) {
                        json_decref(out);
                        return NULL;
                }
        }
        return out;
}

json_t *gmail_message_render(const json_t *m, const char *format, const json_t *metadata_headers)
{
        json_t *out = json_pack(
                "{s:O, s:O, s:O, s:O, s:O, s:O, s:O}", "id", json_object_get(m, "id"), "threadId",
                json_object_get(m, "threadId"), "labelIds", json_object_get(m, "labelIds"),
                "snippet", json_object_get(m, "snippet"), "sizeEstimate",
                json_object_get(m, "sizeEstimate"), "historyId", json_object_get(m, "historyId"),
                "internalDate", json_object_get(m, "internalDate"));
        if (!out)
                return NULL;
        int r = 0;
        if (!format || streq(format, "full"))
                r = json_object_set(out, "payload", json_object_get(m, "payload"));
        else if (streq(format, "metadata"))
                r = json_object_set_new(
                        out, "payload",
                        metadata_payload(json_object_get(m, "payload"), metadata_headers));
        else if (streq(format, "raw"))
                r = json_object_set(out, "raw", json_object_get(m, "raw"));
        if (r < 0) {
                json_decref(out);
                return NULL;
        }
        return out;
}

json_t *gmail_message_addresses(const json_t *m, const char *name)
{
        const char *v = gmail_mime_header(json_object_get(m, "payload"), name);
        json_t *out = json_array();
        if (!out || !v)
                return out;
        /* comma-separated, commas inside quotes or angle brackets not separating */
        const char *start = v;
        bool quoted = false;
        int angle = 0;
        for (const char *p = v;; p++) {
                if (*p == '"')
                        quoted = !quoted;
                else if (*p == '<' && !quoted)
                        angle++;
                else if (*p == '>' && !quoted && angle > 0)
                        angle--;
                if (*p && (*p != ',' || quoted || angle > 0))
                        continue;
                const char *a = start, *b = p;
                const char *lt = memchr(a, '<', (size_t)(b - a));
                if (lt) {
                        const char *gt = memchr(lt, '>', (size_t)(b - lt));
                        a = lt + 1;
                        b = gt ? gt : b;
                }
                while (a < b && isspace((unsigned char)*a))
                        a++;
                while (b > a && isspace((unsigned char)b[-1]))
                        b--;
                if (b > a && memchr(a, '@', (size_t)(b - a)) &&
                    json_array_append_new(out, json_stringn(a, (size_t)(b - a))) < 0) {
                        json_decref(out);
                        return NULL;
                }
                if (!*p)
                        break;
                start = p + 1;
        }
        return out;
}

/* The first non-attachment part of type mime_type below part (borrowed), or NULL. */
static const json_t *find_part(const json_t *part, const char *mime_type)
{
        const char *fn = json_get_str(part, "filename");
        if ((!fn || !*fn) && strcasecmp(strempty(json_get_str(part, "mimeType")), mime_type) == 0)
                return part;
        size_t i;
        json_t *p;
        json_array_foreach (json_object_get(part, "parts"), i, p) {
                const json_t *f = find_part(p, mime_type);
                if (f)
                        return f;
        }
        return NULL;
}

char *gmail_message_text(const json_t *m, const char *mime_type)
{
        const json_t *part = find_part(json_object_get(m, "payload"), mime_type);
        const char *data = json_get_str(json_object_get(part, "body"), "data");
        char *out = NULL;
        size_t n;
        if (!data || gmail_base64_decode(data, strlen(data), &out, &n) < 0)
                return strdup("");
        return out;
}

/* The attachments below part as MCP's AttachmentMetadata [{id, filename, mimeType}]. */
static int mcp_attachments(const json_t *part, json_t *out)
{
        const char *aid = json_get_str(json_object_get(part, "body"), "attachmentId");
        if (aid && json_array_append_new(
                           out, json_pack("{s:s, s:s, s:s}", "id", aid, "filename",
                                          strempty(json_get_str(part, "filename")), "mimeType",
                                          strempty(json_get_str(part, "mimeType")))) < 0)
                return -ENOMEM;
        size_t i;
        json_t *p;
        json_array_foreach (json_object_get(part, "parts"), i, p) {
                int r = mcp_attachments(p, out);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* An internalDate (ms, a string) as MCP's date: "YYYY-MM-DD". */
static void date_only(const json_t *m, char *buf, size_t len)
{
        time_t t = (time_t)(strtoll(strempty(json_get_str(m, "internalDate")), NULL, 10) / 1000);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, len, "%Y-%m-%d", &tm);
}

json_t *gmail_message_mcp(json_t *world _unused_, const json_t *m, const char *format)
{
        char date[16];
        date_only(m, date, sizeof(date));
        _cleanup_json_ json_t *out =
                json_pack("{s:O, s:O, s:s}", "id", json_object_get(m, "id"), "labelIds",
                          json_object_get(m, "labelIds"), "date", date);
        if (!out)
                return NULL;
        if (streq(format, "metadata"))
                return TAKE_PTR(out);
        const json_t *payload = json_object_get(m, "payload");
        const char *from = gmail_mime_header(payload, "From");
        const char *subject = gmail_mime_header(payload, "Subject");
        json_t *froms = gmail_message_addresses(m, "From");
        const char *sender = json_string_value(json_array_get(froms, 0));
        if (!froms || json_object_set(out, "snippet", json_object_get(m, "snippet")) < 0 ||
            json_object_set_new(out, "subject", json_string(strempty(subject))) < 0 ||
            json_object_set_new(out, "sender", json_string(sender ? sender : strempty(from))) < 0 ||
            json_object_set_new(out, "toRecipients", gmail_message_addresses(m, "To")) < 0 ||
            json_object_set_new(out, "ccRecipients", gmail_message_addresses(m, "Cc")) < 0 ||
            json_object_set_new(out, "bccRecipients", gmail_message_addresses(m, "Bcc")) < 0) {
                json_decref(froms);
                return NULL;
        }
        json_decref(froms);
        if (streq(format, "minimal"))
                return TAKE_PTR(out);
        _cleanup_free_ char *text = gmail_message_text(m, "text/plain");
        _cleanup_free_ char *html = gmail_message_text(m, "text/html");
        _cleanup_json_ json_t *atts = json_array(), *ids = json_array();
        size_t i;
        json_t *a;
        if (!text || !html || !atts || !ids || mcp_attachments(payload, atts) < 0)
                return NULL;
        json_array_foreach (atts, i, a)
                if (json_array_append(ids, json_object_get(a, "id")) < 0)
                        return NULL;
        if (json_object_set_new(out, "plaintextBody", twin_json_string_lossy(text, strlen(text))) <
                    0 ||
            (*html && json_object_set_new(out, "htmlBody",
                                          twin_json_string_lossy(html, strlen(html))) < 0) ||
            json_object_set(out, "attachmentIds", ids) < 0 ||
            (json_array_size(atts) > 0 && json_object_set(out, "attachments", atts) < 0))
                return NULL;
        return TAKE_PTR(out);
}

/* ------------------------------------------------------------------ labels */

static bool has_id(const json_t *a, const char *id)
{
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v)
                if (streq_ptr(json_string_value(v), id))
                        return true;
        return false;
}

int gmail_message_relabel(json_t *world, json_t *m, const json_t *add, const json_t *remove,
                          bool *ret_changed)
{
        json_t *labels = json_object_get(m, "labelIds");
        _cleanup_json_ json_t *added = json_array(), *removed = json_array();
        _cleanup_json_ json_t *rm = remove ? json_deep_copy(remove) : json_array();
        size_t i;
        json_t *v;
        if (!json_is_array(labels)) {
                labels = json_array();
                if (!labels || json_object_set_new(m, "labelIds", labels) < 0)
                        return -ENOMEM;
        }
        if (!added || !removed || !rm)
                return -ENOMEM;
        /* TRASH and SPAM exclude each other, as in Gmail */
        if ((has_id(add, "TRASH") && json_array_append_new(rm, json_string("SPAM")) < 0) ||
            (has_id(add, "SPAM") && json_array_append_new(rm, json_string("TRASH")) < 0))
                return -ENOMEM;
        json_array_foreach (rm, i, v) {
                const char *id = json_string_value(v);
                if (has_id(add, id) && !streq_ptr(id, "SPAM") && !streq_ptr(id, "TRASH"))
                        continue;
                for (size_t j = json_array_size(labels); j-- > 0;)
                        if (streq_ptr(json_string_value(json_array_get(labels, j)), id)) {
                                if (json_array_remove(labels, j) < 0 ||
                                    (!has_id(removed, id) &&
                                     json_array_append_new(removed, json_string(id)) < 0))
                                        return -ENOMEM;
                        }
        }
        json_array_foreach (add, i, v) {
                const char *id = json_string_value(v);
                if (!id || has_id(labels, id) ||
                    (has_id(remove, id) && !streq(id, "TRASH") && !streq(id, "SPAM")))
                        continue;
                if (json_array_append_new(labels, json_string(id)) < 0 ||
                    json_array_append_new(added, json_string(id)) < 0)
                        return -ENOMEM;
        }
        int r;
        if (json_array_size(removed) > 0 &&
            (r = gmail_history_add(world, "labelsRemoved", m, removed)) < 0)
                return r;
        if (json_array_size(added) > 0 &&
            (r = gmail_history_add(world, "labelsAdded", m, added)) < 0)
                return r;
        *ret_changed = json_array_size(added) + json_array_size(removed) > 0;
        return 0;
}

/* ------------------------------------------------------------------ search */

static int64_t internal_ms(const json_t *m)
{
        return strtoll(strempty(json_get_str(m, "internalDate")), NULL, 10);
}

/* A search hit: the row and where it is stored. */
typedef struct Hit {
        json_t *m;
        size_t at;
} Hit;

/* newest first; the later stored first among equal dates (qsort is not stable) */
static int by_date_desc(const void *a, const void *b)
{
        const Hit *x = a, *y = b;
        int64_t dx = internal_ms(x->m), dy = internal_ms(y->m);
        if (dx != dy)
                return dx < dy ? 1 : -1;
        return x->at < y->at ? 1 : x->at > y->at ? -1 : 0;
}

/* Whether q names drafts (in:draft, is:draft, label:draft), which Gmail's lists leave out. */
static bool names_drafts(const char *q)
{
        static const char *const pats[] = {"in:draft", "is:draft", "label:draft", "in:anywhere"};
        for (size_t i = 0; q && i < ELEMENTSOF(pats); i++)
                if (strcasestr(q, pats[i]))
                        return true;
        return false;
}

int gmail_search(TwinCall *c, const char *q, const json_t *label_ids, bool spam_trash, json_t **ret,
                 TwinReply *rp)
{
        GmailQuery *gq = NULL;
        char err[256] = "";
        int r = gmail_query_parse(q, &gq, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                r = gmail_fail(rp, 400, "invalidArgument", "%s",
                               *err ? err : "Invalid search query");
                return r < 0 ? r : -EINVAL;
        }
        bool st = spam_trash || gmail_query_includes_spam_trash(gq);
        bool drafts = names_drafts(q) || has_id(label_ids, "DRAFT");
        st = st || has_id(label_ids, "TRASH") || has_id(label_ids, "SPAM");
        json_t *labels = json_object_get(c->world, "labels");
        json_t *all = json_object_get(c->world, "messages");
        size_t n = json_array_size(all), k = 0;
        _cleanup_free_ Hit *v = calloc(n ? n : 1, sizeof(*v));
        if (!v) {
                gmail_query_free(gq);
                return -ENOMEM;
        }
        for (size_t i = n; i-- > 0;) {
                json_t *m = json_array_get(all, i), *l;
                size_t j;
                bool ok = true;
                json_t *ids = json_object_get(m, "labelIds");
                if (!st && (has_id(ids, "TRASH") || has_id(ids, "SPAM")))
                        continue;
                if (!drafts && has_id(ids, "DRAFT"))
                        continue;
                json_array_foreach (label_ids, j, l)
                        ok = ok && has_id(ids, json_string_value(l));
                if (ok && gmail_query_match(gq, m, labels, gmail_clock_ms(c->world) / 1000))
                        v[k++] = (Hit){m, i};
        }
        gmail_query_free(gq);
        qsort(v, k, sizeof(*v), by_date_desc);
        json_t *out = json_array();
        for (size_t i = 0; out && i < k; i++)
                if (json_array_append(out, v[i].m) < 0) {
                        json_decref(out);
                        out = NULL;
                }
        if (!out)
                return -ENOMEM;
        *ret = out;
        return 0;
}

/* ------------------------------------------------------------------ uploads */

/* The value of parameter name ("boundary") of a Content-Type, malloc'd; NULL. */
static char *ct_param(const char *ct, const char *name)
{
        size_t nl = strlen(name);
        for (const char *p = ct ? strchr(ct, ';') : NULL; p; p = strchr(p + 1, ';')) {
                const char *q = p + 1;
                while (*q == ' ' || *q == '\t')
                        q++;
                if (strncasecmp(q, name, nl) != 0 || q[nl] != '=')
                        continue;
                q += nl + 1;
                if (*q == '"') {
                        const char *e = strchr(q + 1, '"');
                        return e ? strndup(q + 1, (size_t)(e - q - 1)) : NULL;
                }
                size_t n = strcspn(q, "; \t");
                return strndup(q, n);
        }
        return NULL;
}

static bool media_is(const char *ct, const char *type)
{
        size_t n = strlen(type);
        return ct && strncasecmp(ct, type, n) == 0 && (!ct[n] || ct[n] == ';' || ct[n] == ' ');
}

/* Where the line after position p (in [p, end)) starts, or end. */
static const char *next_line(const char *p, const char *end)
{
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        return nl ? nl + 1 : end;
}

/*
 * Splits a multipart/related upload (RFC 2387, Google's "multipart upload": a JSON metadata
 * part, then the media) into its parts' headers-and-bodies. Up to 2 parts are kept: the
 * metadata (its Content-Type JSON) and the media. 0, -EINVAL.
 */
static int related_parts(const char *body, size_t len, const char *boundary, const char **ret_meta,
                         size_t *ret_meta_len, const char **ret_media, size_t *ret_media_len)
{
        _cleanup_free_ char *delim = NULL;
        if (asprintf(&delim, "--%s", boundary) < 0)
                return -ENOMEM;
        size_t dl = strlen(delim);
        const char *end = body + len, *p = body;
        const char *starts[8];
        size_t n = 0;
        while (p < end && n < ELEMENTSOF(starts)) {
                const char *hit = memmem(p, (size_t)(end - p), delim, dl);
                if (!hit)
                        break;
                if (hit + dl + 1 < end && hit[dl] == '-' && hit[dl + 1] == '-') {
                        starts[n++] = hit; /* the closing delimiter ends the last part */
                        break;
                }
                starts[n++] = hit;
                p = hit + dl;
        }
        *ret_meta = *ret_media = NULL;
        for (size_t i = 0; i + 1 < n; i++) {
                const char *part = next_line(starts[i], end), *stop = starts[i + 1];
                /* the CRLF before a delimiter belongs to it */
                if (stop > part && stop[-1] == '\n')
                        stop--;
                if (stop > part && stop[-1] == '\r')
                        stop--;
                /* headers until an empty line */
                const char *h = part, *bodyp = NULL;
                bool json = false;
                while (h < stop) {
                        const char *e = next_line(h, stop);
                        size_t ll = (size_t)(e - h);
                        if (ll <= 2 && (h[0] == '\n' || (h[0] == '\r' && ll == 2))) {
                                bodyp = e;
                                break;
                        }
                        if (ll > 13 && strncasecmp(h, "content-type:", 13) == 0) {
                                const char *v = h + 13;
                                while (*v == ' ')
                                        v++;
                                json = strncasecmp(v, "application/json", 16) == 0;
                        }
                        h = e;
                }
                if (!bodyp)
                        bodyp = part;
                if (bodyp > stop)
                        bodyp = stop;
                if (json && !*ret_meta) {
                        *ret_meta = bodyp;
                        *ret_meta_len = (size_t)(stop - bodyp);
                } else if (!*ret_media) {
                        *ret_media = bodyp;
                        *ret_media_len = (size_t)(stop - bodyp);
                }
        }
        return *ret_media || *ret_meta ? 0 : -EINVAL;
}

int gmail_upload(TwinCall *c, bool in_message, char **ret, size_t *ret_len, json_t **ret_meta,
                 TwinReply *rp)
{
        const TwinRequest *rq = c->request;
        const char *ct = rq ? json_get_str(rq->headers, "content-type") : NULL;
        _cleanup_json_ json_t *meta = NULL;
        *ret = NULL;
        *ret_len = 0;
        if (rq && rq->body_len > 0 && media_is(ct, "multipart/related")) {
                _cleanup_free_ char *b = ct_param(ct, "boundary");
                const char *mp = NULL, *md = NULL;
                size_t ml = 0, dl = 0;
                int r = b ? related_parts(rq->body, rq->body_len, b, &mp, &ml, &md, &dl) : -EINVAL;
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return gmail_fail(rp, 400, "badContent", "Malformed multipart body.") ?: 1;
                if (mp) {
                        meta = json_loadb(mp, ml, 0, NULL);
                        if (!json_is_object(meta))
                                return gmail_fail(rp, 400, "parseError",
                                                  "Parse Error: the metadata part is not a "
                                                  "JSON object.")
                                               ?: 1;
                }
                if (md) {
                        *ret = malloc(dl + 1);
                        if (!*ret)
                                return -ENOMEM;
                        memcpy(*ret, md, dl);
                        (*ret)[dl] = 0;
                        *ret_len = dl;
                }
        } else if (rq && rq->body_len > 0 && ct && !media_is(ct, "application/json") &&
                   !json_is_string(json_object_get(c->args, "raw")) &&
                   !json_is_object(json_object_get(c->args, "message"))) {
                /* uploadType=media: the body is the message itself */
                *ret = malloc(rq->body_len + 1);
                if (!*ret)
                        return -ENOMEM;
                memcpy(*ret, rq->body, rq->body_len);
                (*ret)[rq->body_len] = 0;
                *ret_len = rq->body_len;
        }
        if (!meta)
                meta = json_deep_copy(c->args);
        if (!meta)
                return -ENOMEM;
        json_t *msg = in_message ? json_object_get(meta, "message") : meta;
        if (!*ret) {
                const char *raw = json_get_str(msg, "raw");
                if (!raw || !*raw)
                        return gmail_fail(rp, 400, "invalidArgument",
                                          "'raw' RFC822 payload message string or uploading "
                                          "message via /upload/* URL required")
                                       ?: 1;
                int r = gmail_base64_decode(raw, strlen(raw), ret, ret_len);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return gmail_fail(rp, 400, "invalidArgument",
                                          "Invalid value for ByteString: %.64s", raw)
                                       ?: 1;
        }
        *ret_meta = TAKE_PTR(meta);
        return 0;
}

/* ------------------------------------------------------------------ list arguments */

int gmail_arg_list(TwinCall *c, const char *key, json_t **ret)
{
        const char *q = c->request ? c->request->query : NULL;
        size_t kl = strlen(key);
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        for (const char *p = q; p && *p;) {
                const char *e = strchrnul(p, '&');
                const char *eq = memchr(p, '=', (size_t)(e - p));
                if (eq && (size_t)(eq - p) == kl && strncmp(p, key, kl) == 0) {
                        _cleanup_free_ char *v = NULL;
                        size_t vl;
                        if (percent_decode(eq + 1, (size_t)(e - eq - 1), true, false, &v, &vl) <
                                    0 ||
                            json_array_append_new(out, twin_json_string_lossy(v, vl)) < 0)
                                return -ENOMEM;
                }
                p = *e ? e + 1 : e;
        }
        /* repeated (googleapis' labelIds=A&labelIds=B): the form parser kept the last only */
        if (json_array_size(out) > 1) {
                *ret = TAKE_PTR(out);
                return 0;
        }
        return twin_arg_strv(c->args, key, ret);
}

/* ------------------------------------------------------------------ paging */

int gmail_page(TwinCall *c, const char *size_key, int64_t def, int64_t max, size_t *ret_offset,
               size_t *ret_size, TwinReply *rp)
{
        int64_t size = def, off = 0;
        int r = twin_arg_int(c->args, size_key, 0, INT32_MAX, &size);
        if (r == -EINVAL)
                return gmail_fail(rp, 400, "invalidArgument", "Invalid %s value", size_key)
                               ?: -EINVAL;
        if (r == -ENOENT || size == 0)
                size = def;
        if (size > max)
                size = max;
        const char *tok = json_get_str(c->args, "pageToken");
        json_t *tv = json_object_get(c->args, "pageToken");
        if (tv && !json_is_null(tv) && !tok)
                return gmail_fail(rp, 400, "invalidArgument", "Invalid pageToken") ?: -EINVAL;
        if (tok && *tok) {
                char *end;
                errno = 0;
                long long v = strtoll(tok, &end, 10);
                if (errno || *end || v < 0 || !isdigit((unsigned char)tok[0]))
                        return gmail_fail(rp, 400, "invalidArgument", "Invalid pageToken")
                                       ?: -EINVAL;
                off = v;
        }
        *ret_offset = (size_t)off;
        *ret_size = (size_t)size;
        return 0;
}

int gmail_page_next(json_t *body, size_t offset, size_t size, size_t total)
{
        if (offset + size >= total)
                return 0;
        char tok[32];
        snprintf(tok, sizeof(tok), "%zu", offset + size);
        return json_object_set_new(body, "nextPageToken", json_string(tok)) < 0 ? -ENOMEM : 0;
}
