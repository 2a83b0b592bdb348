/* SPDX-License-Identifier: MIT */
/*
 * The files.* family (https://api.slack.com/methods#files): list, info, upload (v1: content
 * in a form), the v2 flow (files.getUploadURLExternal, a POST of the bytes to the returned
 * upload_url, files.completeUploadExternal) as @slack/web-api's filesUploadV2 drives it,
 * and delete (the caller's own files only). The MCP server's slack_read_file is files.info
 * with the content. Canvases are files too (canvases.c); this family leaves them alone.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/slack/slack.h"

#define MAX_FILE_BYTES (1024 * 1024) /* content the twin keeps for one file */

/* Whether the caller can see f: shared into a conversation it sees, or its own. */
bool slack_file_visible(TwinCall *c, json_t *f)
{
        if (streq_ptr(json_get_str(f, "user"), slack_bot_user(c)))
                return true;
        size_t i;
        json_t *id;
        json_array_foreach (json_object_get(f, "channels"), i, id) {
                json_t *ch = slack_channel_resolve(c->world, strempty(json_string_value(id)));
                if (ch && slack_channel_visible(c, ch))
                        return true;
        }
        return false;
}

/* A file object as files.info shows it (no content). New reference, NULL on OOM. */
json_t *slack_render_file(TwinCall *c, json_t *f)
{
        _cleanup_free_ char *priv = NULL, *link = NULL;
        const char *domain = strempty(json_get_str(json_object_get(c->world, "team"), "domain"));
        if (asprintf(&priv, "https://files.slack.com/files-pri/%s-%s/%s",
                     strempty(json_get_str(json_object_get(c->world, "team"), "id")),
                     strempty(json_get_str(f, "id")), strempty(json_get_str(f, "name"))) < 0 ||
            asprintf(&link, "https://%s.slack.com/files/%s/%s/%s", domain,
                     strempty(json_get_str(f, "user")), strempty(json_get_str(f, "id")),
                     strempty(json_get_str(f, "name"))) < 0)
                return NULL;
        return json_pack(
                "{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:s, s:b, "
                "s:b, s:b, s:s, s:s, s:s, s:O, s:[], s:[], s:I}",
                "id", json_object_get(f, "id"), "created", json_object_get(f, "created"),
                "timestamp", json_object_get(f, "created"), "name", json_object_get(f, "name"),
                "title", json_object_get(f, "title"), "mimetype", json_object_get(f, "mimetype"),
                "filetype", json_object_get(f, "filetype"), "pretty_type",
                json_object_get(f, "filetype"), "user", json_object_get(f, "user"), "size",
                json_object_get(f, "size"), "user_team",
                json_object_get(json_object_get(c->world, "team"), "id"), "mode", "hosted",
                "editable", false, "is_external", false, "is_public", true, "url_private", priv,
                "url_private_download", priv, "permalink", link, "channels",
                json_object_get(f, "channels"), "groups", "ims", "comments_count", (json_int_t)0);
}

/* The file args[file] (or file_id) names, visible and complete: 1, 0 (file_not_found), -errno. */
static int arg_file(TwinCall *c, TwinReply *rp, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = slack_arg_string(c, rp, "file", "file_id", "file_not_found", &id);
        if (r <= 0)
                return r;
        size_t i;
        json_t *f;
        json_array_foreach (slack_world_list(c->world, "files"), i, f) {
                if (streq_ptr(json_get_str(f, "id"), id) &&
                    !json_is_true(json_object_get(f, "upload_pending")) &&
                    slack_file_visible(c, f)) {
                        *ret = f;
                        if (ret_idx)
                                *ret_idx = i;
                        return 1;
                }
        }
        return slack_fail(rp, "file_not_found");
}

static json_t *render_listed(TwinCall *c, json_t *f)
{
        return slack_render_file(c, f);
}

/* files.list: channel, user, types (a filetype list; "all"), count/page paging. */
int slack_act_list_files(TwinCall *c, TwinReply *rp)
{
        json_t *ch = NULL, *u = NULL;
        int r;
        if (slack_arg2(c, "channel", "channel_id") && (r = slack_arg_channel(c, rp, &ch)) <= 0)
                return r;
        if (json_is_string(json_object_get(c->args, "user")) &&
            (r = slack_arg_user(c, rp, "user", NULL, &u)) <= 0)
                return r;
        const char *types = json_get_str(c->args, "types");
        int64_t count = 100, page = 1;
        if (twin_arg_int(c->args, "count", 1, 1000, &count) == -EINVAL ||
            twin_arg_int(c->args, "page", 1, 100000, &page) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        size_t i;
        json_t *f;
        json_array_foreach (slack_world_list(c->world, "files"), i, f) {
                const char *ft = strempty(json_get_str(f, "filetype"));
                bool canvas = streq(ft, "quip");
                bool type_ok =
                        !types || !types[0] || streq(types, "all") ||
                        (canvas ? strstr(types, "canvas") != NULL : strstr(types, ft) != NULL);
                if (json_is_true(json_object_get(f, "upload_pending")) ||
                    !slack_file_visible(c, f) || !type_ok ||
                    (ch &&
                     !slack_strv_has(json_object_get(f, "channels"), json_get_str(ch, "id"))) ||
                    (u && !streq_ptr(json_get_str(f, "user"), json_get_str(u, "id"))))
                        continue;
                if (json_array_append(match, f) < 0)
                        return -ENOMEM;
        }
        size_t n = json_array_size(match), from = (size_t)((page - 1) * count);
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        /* newest first */
        for (i = from; i < n && i < from + (size_t)count; i++)
                if (json_array_append_new(out, render_listed(c, json_array_get(match, n - 1 - i))) <
                    0)
                        return -ENOMEM;
        json_int_t pages = (json_int_t)((n + (size_t)count - 1) / (size_t)count);
        return slack_ok(rp, json_pack("{s:O, s:{s:I, s:I, s:I, s:I}}", "files", out, "paging",
                                      "count", (json_int_t)count, "total", (json_int_t)n, "page",
                                      (json_int_t)page, "pages", pages));
}

/* files.info / slack_read_file: the file and, as the MCP server adds, its content. */
int slack_act_read_file(TwinCall *c, TwinReply *rp)
{
        json_t *f;
        int r = arg_file(c, rp, &f, NULL);
        if (r <= 0)
                return r;
        json_t *text = json_object_get(f, "content");
        return slack_ok(rp, json_pack("{s:o, s:O, s:[], s:b}", "file", slack_render_file(c, f),
                                      text ? "content" : "content_base64",
                                      text ? text : json_object_get(f, "content_base64"),
                                      "comments", "has_more", false));
}

/* Shares f into the channels (ids, borrowed) with a message carrying it: 1, 0 (rp), -errno. */
static int share(TwinCall *c, TwinReply *rp, json_t *f, json_t *channel_ids, const char *comment,
                 const char *thread)
{
        size_t i;
        json_t *id;
        json_array_foreach (channel_ids, i, id) {
                json_t *ch = slack_channel_resolve(c->world, strempty(json_string_value(id)));
                if (!ch || !slack_channel_visible(c, ch))
                        return slack_fail(rp, "channel_not_found");
                if (!slack_is_member(ch, slack_bot_user(c)))
                        return slack_fail(rp, "not_in_channel");
        }
        json_array_foreach (channel_ids, i, id) {
                json_t *ch = slack_channel_resolve(c->world, json_string_value(id));
                json_t *bot = json_object_get(c->world, "bot");
                _cleanup_json_ json_t *m = json_pack(
                        "{s:s, s:o, s:O, s:O*, s:s, s:[o], s:b}", "type", "message", "ts",
                        slack_next_ts(c), "user", json_object_get(bot, "user_id"), "bot_id",
                        json_object_get(bot, "bot_id"), "text", strempty(comment), "files",
                        slack_render_file(c, f), "upload", true);
                if (!m ||
                    (thread && thread[0] &&
                     json_object_set_new(m, "thread_ts", json_string(thread)) < 0) ||
                    json_array_append(json_object_get(ch, "messages"), m) < 0)
                        return -ENOMEM;
                if (!slack_strv_has(json_object_get(f, "channels"), json_get_str(ch, "id")) &&
                    json_array_append(json_object_get(f, "channels"), json_object_get(ch, "id")) <
                            0)
                        return -ENOMEM;
        }
        return 1;
}

/*
 * Sets f's content: text as it is, bytes that are not NUL-free UTF-8 (an image, a PDF) as
 * content_base64, since no string of a world may hold U+0000. 0 or -ENOMEM.
 */
static int content_set(json_t *f, const char *data, size_t len)
{
        json_object_del(f, "content");
        json_object_del(f, "content_base64");
        json_t *text = memchr(data, 0, len) ? NULL : json_stringn(data, len);
        if (text)
                return json_object_set_new(f, "content", text) < 0 ? -ENOMEM : 0;
        _cleanup_free_ char *b64 = twin_base64(data, len);
        if (!b64 || json_object_set_new(f, "content_base64", json_string(b64)) < 0)
                return -ENOMEM;
        return 0;
}

/* A new file row (upload_pending when content is still to come). Borrowed from the world. */
static json_t *file_new(TwinCall *c, const char *name, const char *title, const char *filetype,
                        const char *content, size_t len, bool pending)
{
        char id[16];
        if (slack_alloc_id(c->world, 'F', id) < 0)
                return NULL;
        const char *dot = strrchr(name, '.');
        const char *ft = filetype ? filetype : dot && dot[1] ? dot + 1 : "text";
        const char *mime = streq(ft, "json")   ? "application/json"
                           : streq(ft, "png")  ? "image/png"
                           : streq(ft, "pdf")  ? "application/pdf"
                           : streq(ft, "quip") ? "application/vnd.slack-docs"
                                               : "text/plain";
        json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:I, s:[]}", "id", id, "name",
                                name, "title", title ? title : name, "filetype", ft, "mimetype",
                                mime, "size", (json_int_t)len, "user", slack_bot_user(c), "created",
                                (json_int_t)c->now, "channels");
        json_t *files = slack_world_list(c->world, "files");
        if (!row || content_set(row, content ? content : "", len) < 0 ||
            (pending && json_object_set_new(row, "upload_pending", json_true()) < 0) || !files ||
            json_array_append_new(files, row) < 0)
                return NULL;
        return row;
}

/*
 * A file part of a multipart body as the engine hands it over ({filename, size, content |
 * content_base64}), or NULL when v is not one. Borrowed.
 */
static json_t *file_part(json_t *v)
{
        if (!json_is_object(v) || !json_is_integer(json_object_get(v, "size")) ||
            !(json_is_string(json_object_get(v, "content")) ||
              json_is_string(json_object_get(v, "content_base64"))))
                return NULL;
        return v;
}

/* Sets f's content and size from a file part (content or content_base64). 0 or -ENOMEM. */
static int content_from_part(json_t *f, json_t *part)
{
        json_t *text = json_object_get(part, "content");
        json_object_del(f, "content");
        json_object_del(f, "content_base64");
        if (json_object_set(f, text ? "content" : "content_base64",
                            text ? text : json_object_get(part, "content_base64")) < 0 ||
            json_object_set(f, "size", json_object_get(part, "size")) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * files.upload (https://api.slack.com/methods/files.upload, v1): the bytes as a multipart
 * file part "file" (what @slack/web-api sends for a Buffer or stream) or as the text field
 * "content"; filename (else the part's own), title, filetype, channels, initial_comment,
 * thread_ts. Neither: no_file_data; beyond 1 MiB: file_too_large.
 */
int slack_act_upload_file(TwinCall *c, TwinReply *rp)
{
        const char *content = NULL, *name, *title, *ft, *comment, *thread;
        json_t *part = file_part(json_object_get(c->args, "file"));
        int r;
        if ((!part &&
             (r = slack_arg_string(c, rp, "content", NULL, "no_file_data", &content)) <= 0) ||
            (r = slack_arg_string(c, rp, "filename", NULL, NULL, &name)) <= 0 ||
            (r = slack_arg_string(c, rp, "title", NULL, NULL, &title)) <= 0 ||
            (r = slack_arg_string(c, rp, "filetype", NULL, NULL, &ft)) <= 0 ||
            (r = slack_arg_string(c, rp, "initial_comment", NULL, NULL, &comment)) <= 0 ||
            (r = slack_arg_string(c, rp, "thread_ts", NULL, NULL, &thread)) <= 0)
                return r;
        if ((part ? json_integer_value(json_object_get(part, "size"))
                  : (json_int_t)strlen(content)) > MAX_FILE_BYTES)
                return slack_fail(rp, "file_too_large");
        if (!name && part && json_string_length(json_object_get(part, "filename")))
                name = json_get_str(part, "filename");
        _cleanup_json_ json_t *chans = NULL;
        r = twin_arg_strv(c->args, "channels", &chans);
        if (r == -ENOMEM)
                return r;
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_channel");
        _cleanup_json_ json_t *snapshot = json_deep_copy(c->world);
        if (!snapshot)
                return -ENOMEM;
        json_t *f = file_new(c, name ? name : "file.txt", title, ft, strempty(content),
                             content ? strlen(content) : 0, false);
        if (!f || (part && content_from_part(f, part) < 0))
                return -ENOMEM;
        if ((r = share(c, rp, f, chans, comment, thread)) <= 0) {
                /* refused after the row went in: put the world back as it was */
                json_object_update(c->world, snapshot);
                return r;
        }
        if ((r = twin_reply_mutation(rp, NULL, f)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "file", slack_render_file(c, f)));
}

/* files.getUploadURLExternal: filename, length (bytes) → {upload_url, file_id}. */
int slack_act_get_upload_url(TwinCall *c, TwinReply *rp)
{
        const char *name;
        int64_t len;
        int r = slack_arg_string(c, rp, "filename", NULL, "invalid_arguments", &name);
        if (r <= 0)
                return r;
        r = twin_arg_int(c->args, "length", 1, MAX_FILE_BYTES, &len);
        if (r < 0)
                return slack_fail(rp, r == -ENOENT ? "invalid_arguments" : "invalid_length");
        json_t *f = file_new(c, name, NULL, NULL, NULL, 0, true);
        if (!f)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, f)) < 0)
                return r;
        /* Slack's upload_url is pre-signed (api.slack.com/methods/files.getUploadURLExternal:
         * the bytes are POSTed to it, and slack_sdk's files_upload_v2 sends them with no
         * token): the twin's carries the front's upload token (TwinKind.upload_path), which
         * opens this sandbox's upload path and nothing else; no front, no token */
        const char *token =
                c->request ? json_get_str(c->request->headers, TWIN_UPLOAD_TOKEN_HEADER) : NULL;
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/_upload/%s%s%s", c->base_url, json_get_str(f, "id"),
                     token ? "?token=" : "", token ? token : "") < 0)
                return -ENOMEM;
        return slack_ok(rp, json_pack("{s:s, s:O}", "upload_url", url, "file_id",
                                      json_object_get(f, "id")));
}

/* The first file part among the arguments (the SDK's is called "body"), or NULL. */
static json_t *first_file_part(TwinCall *c)
{
        const char *k;
        json_t *v;
        json_object_foreach (c->args, k, v) {
                if (file_part(v))
                        return v;
        }
        return NULL;
}

/*
 * POST {upload_url}: the bytes of a pending upload, as files.slack.com takes them: a
 * multipart body's file part (what filesUploadV2 sends), or the raw body (any media type
 * the engine does not read as arguments, e.g. application/octet-stream).
 */
int slack_act_put_upload(TwinCall *c, TwinReply *rp)
{
        const char *id = json_get_str(c->args, "file_id");
        json_t *f = NULL;
        size_t i, idx = 0;
        json_t *x;
        json_array_foreach (slack_world_list(c->world, "files"), i, x) {
                if (streq_ptr(json_get_str(x, "id"), id) &&
                    json_is_true(json_object_get(x, "upload_pending")) &&
                    streq_ptr(json_get_str(x, "user"), slack_bot_user(c))) {
                        f = x;
                        idx = i;
                }
        }
        if (!f || !c->request)
                return slack_fail(rp, "file_not_found");
        json_t *part = first_file_part(c);
        const char *ct = json_get_str(c->request->headers, "content-type");
        if (!part && ct && strncasecmp(ct, "multipart/", 10) == 0)
                return slack_fail(rp, "no_file_data"); /* fields only, no file */
        size_t len = part ? (size_t)json_integer_value(json_object_get(part, "size"))
                          : c->request->body_len;
        if (len > MAX_FILE_BYTES)
                return slack_fail(rp, "file_too_large");
        _cleanup_json_ json_t *next = json_deep_copy(f);
        if (!next ||
            (part ? content_from_part(next, part)
                  : content_set(next, c->request->body ? c->request->body : "", len)) < 0 ||
            json_object_set_new(next, "size", json_integer((json_int_t)len)) < 0)
                return -ENOMEM;
        int r = slack_row_replace(rp, slack_world_list(c->world, "files"), idx, next);
        if (r < 0)
                return r;
        return slack_ok(rp, json_object());
}

/* files.completeUploadExternal: files ([{id, title?}], JSON text in a form), channel_id. */
int slack_act_complete_upload(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *list = NULL, *chans = NULL;
        if (slack_arg_json_array(c, "files", &list) < 0 || json_array_size(list) == 0)
                return slack_fail(rp, "invalid_arguments");
        const char *cid, *comment, *thread;
        int r;
        if ((r = slack_arg_string(c, rp, "channel_id", "channel", NULL, &cid)) <= 0 ||
            (r = slack_arg_string(c, rp, "initial_comment", NULL, NULL, &comment)) <= 0 ||
            (r = slack_arg_string(c, rp, "thread_ts", NULL, NULL, &thread)) <= 0)
                return r;
        if (cid)
                chans = json_pack("[s]", cid);
        else {
                r = twin_arg_strv(c->args, "channels", &chans);
                if (r == -ENOMEM)
                        return r;
        }
        json_t *files = slack_world_list(c->world, "files");
        _cleanup_json_ json_t *done = json_array(), *snapshot = json_deep_copy(c->world);
        if (!done || !snapshot)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach (list, i, e) {
                json_t *f = slack_find_by(files, "id", strempty(json_get_str(e, "id")));
                if (!f || !json_is_true(json_object_get(f, "upload_pending")) ||
                    !streq_ptr(json_get_str(f, "user"), slack_bot_user(c))) {
                        json_object_update(c->world, snapshot);
                        return slack_fail(rp, "file_not_found");
                }
                json_object_del(f, "upload_pending");
                const char *title = json_get_str(e, "title");
                if (title && json_object_set_new(f, "title", json_string(title)) < 0)
                        return -ENOMEM;
                if ((r = share(c, rp, f, chans, i == 0 ? comment : NULL, thread)) <= 0) {
                        json_object_update(c->world, snapshot);
                        return r;
                }
                if (json_array_append_new(done, slack_render_file(c, f)) < 0)
                        return -ENOMEM;
        }
        /* the row as the world holds it (the last file, for several) */
        json_t *last = slack_find_by(
                files, "id", json_get_str(json_array_get(list, json_array_size(list) - 1), "id"));
        if ((r = twin_reply_mutation(rp, NULL, last)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:O}", "files", done));
}

/* files.delete: the caller's own files (cant_delete_file). */
int slack_act_delete_file(TwinCall *c, TwinReply *rp)
{
        json_t *f;
        size_t idx;
        int r = arg_file(c, rp, &f, &idx);
        if (r <= 0)
                return r;
        if (!streq_ptr(json_get_str(f, "user"), slack_bot_user(c)))
                return slack_fail(rp, "cant_delete_file");
        if (streq_ptr(json_get_str(f, "filetype"), "quip"))
                return slack_fail(rp, "file_not_found");
        if ((r = twin_reply_mutation(rp, f, NULL)) < 0)
                return r;
        if (json_array_remove(slack_world_list(c->world, "files"), idx) < 0)
                return -ENOMEM;
        return slack_ok(rp, json_object());
}
