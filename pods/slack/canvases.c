/* SPDX-License-Identifier: MIT */
/*
 * canvases.{create,edit,delete,sections.lookup} (https://api.slack.com/methods#canvases)
 * and the MCP server's slack_create_canvas, slack_update_canvas and slack_read_canvas.
 * A canvas is a file (filetype "quip", as files.info shows canvases) whose markdown is kept
 * as sections[{id, markdown}]; content is their concatenation.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/slack/slack.h"

#define MAX_CANVAS_BYTES (256 * 1024)
#define MAX_CANVAS_OPS   100 /* mcp.slack.com: "Max 100 operations" */

/* content = the sections' markdown joined by blank lines; size follows. */
static int canvas_refresh(json_t *f)
{
        size_t i, len = 0;
        json_t *s;
        json_t *sections = json_object_get(f, "sections");
        json_array_foreach (sections, i, s) {
                len += strlen(strempty(json_get_str(s, "markdown"))) + 1;
        }
        _cleanup_free_ char *all = calloc(1, len + 1);
        if (!all)
                return -ENOMEM;
        json_array_foreach (sections, i, s) {
                if (i)
                        strcat(all, "\n");
                strcat(all, strempty(json_get_str(s, "markdown")));
        }
        if (json_object_set_new(f, "content", json_string(all)) < 0 ||
            json_object_set_new(f, "size", json_integer((json_int_t)strlen(all))) < 0)
                return -ENOMEM;
        return 0;
}

static json_t *section_new(TwinCall *c, const char *markdown)
{
        char id[16];
        if (slack_alloc_id(c->world, 'S', id) < 0)
                return NULL;
        char sid[24];
        snprintf(sid, sizeof(sid), "temp:C:%s", id + 1);
        return json_pack("{s:s, s:s}", "id", sid, "markdown", markdown);
}

/*
 * document_content {type:"markdown", markdown} (a JSON object, or its text in a form), or
 * the MCP server's content string, into *ret (borrowed; NULL when absent). 1, 0 (rp), -errno.
 */
static int arg_markdown(TwinCall *c, TwinReply *rp, const char *key, json_t **keep,
                        const char **ret)
{
        json_t *v = json_object_get(c->args, key);
        *ret = NULL;
        if (!v || json_is_null(v)) {
                const char *s;
                int r = slack_arg_string(c, rp, "content", NULL, NULL, &s);
                if (r <= 0)
                        return r;
                *ret = s;
        } else {
                json_t *d = json_is_string(v) ? json_loads(json_string_value(v), 0, NULL)
                                              : json_incref(v);
                *keep = d;
                if (!json_is_object(d) || !streq_ptr(json_get_str(d, "type"), "markdown") ||
                    !json_is_string(json_object_get(d, "markdown")))
                        return slack_fail(rp, "invalid_arguments");
                *ret = json_get_str(d, "markdown");
        }
        if (*ret && strlen(*ret) > MAX_CANVAS_BYTES)
                return slack_fail(rp, "canvas_too_large");
        return 1;
}

static int arg_canvas(TwinCall *c, TwinReply *rp, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = slack_arg_string(c, rp, "canvas_id", NULL, "canvas_not_found", &id);
        if (r <= 0)
                return r;
        size_t i;
        json_t *f;
        json_array_foreach (slack_world_list(c->world, "files"), i, f) {
                if (streq_ptr(json_get_str(f, "id"), id) &&
                    streq_ptr(json_get_str(f, "filetype"), "quip") && slack_file_visible(c, f)) {
                        *ret = f;
                        if (ret_idx)
                                *ret_idx = i;
                        return 1;
                }
        }
        return slack_fail(rp, "canvas_not_found");
}

/* canvases.create / slack_create_canvas: title, document_content (or content), channel_id. */
int slack_act_create_canvas(TwinCall *c, TwinReply *rp)
{
        const char *title, *markdown;
        _cleanup_json_ json_t *doc = NULL;
        json_t *ch = NULL;
        int r;
        if ((r = slack_arg_string(c, rp, "title", NULL, NULL, &title)) <= 0 ||
            (r = arg_markdown(c, rp, "document_content", &doc, &markdown)) <= 0)
                return r;
        if (slack_arg2(c, "channel_id", "channel") && (r = slack_arg_channel_in(c, rp, &ch)) <= 0)
                return r;
        char id[16];
        if ((r = slack_alloc_id(c->world, 'F', id)) < 0)
                return r;
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:I, s:[], s:[]}", "id", id, "name",
                title ? title : "Untitled", "title", title ? title : "Untitled", "filetype", "quip",
                "mimetype", "application/vnd.slack-docs", "size", (json_int_t)0, "user",
                slack_bot_user(c), "created", (json_int_t)c->now, "channels", "sections");
        if (!row)
                return -ENOMEM;
        if (markdown && markdown[0] &&
            json_array_append_new(json_object_get(row, "sections"), section_new(c, markdown)) < 0)
                return -ENOMEM;
        if (ch &&
            json_array_append(json_object_get(row, "channels"), json_object_get(ch, "id")) < 0)
                return -ENOMEM;
        if ((r = canvas_refresh(row)) < 0)
                return r;
        json_t *files = slack_world_list(c->world, "files");
        if (!files || json_array_append(files, row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:s}", "canvas_id", id));
}

static json_t *section_find(json_t *f, const char *id, size_t *ret_idx)
{
        size_t i;
        json_t *s;
        json_array_foreach (json_object_get(f, "sections"), i, s) {
                if (streq_ptr(json_get_str(s, "id"), id)) {
                        *ret_idx = i;
                        return s;
                }
        }
        return NULL;
}

/* One change of canvases.edit applied to next (a copy): 1, 0 (rp), -errno. */
static int apply_change(TwinCall *c, TwinReply *rp, json_t *next, const char *op,
                        const char *section, const char *markdown, const char *title)
{
        json_t *sections = json_object_get(next, "sections");
        size_t idx = 0;
        if (section && !section_find(next, section, &idx))
                return slack_fail(rp, "canvas_editing_failed");
        if (streq(op, "rename")) {
                if (!title)
                        return slack_fail(rp, "invalid_arguments");
                if (json_object_set_new(next, "title", json_string(title)) < 0)
                        return -ENOMEM;
                return 1;
        }
        if (streq(op, "delete")) {
                if (!section)
                        return slack_fail(rp, "invalid_arguments");
                return json_array_remove(sections, idx) < 0 ? -ENOMEM : 1;
        }
        if (!markdown)
                return slack_fail(rp, "invalid_arguments");
        json_t *s = section_new(c, markdown);
        if (!s)
                return -ENOMEM;
        int r;
        if (streq(op, "replace")) {
                if (section)
                        r = json_array_set_new(sections, idx, s);
                else {
                        json_array_clear(sections);
                        r = json_array_append_new(sections, s);
                }
        } else if (streq(op, "insert_at_end"))
                r = json_array_append_new(sections, s);
        else if (streq(op, "insert_at_start"))
                r = json_array_insert_new(sections, 0, s);
        else if (streq(op, "insert_after") && section)
                r = json_array_insert_new(sections, idx + 1, s);
        else if (streq(op, "insert_before") && section)
                r = json_array_insert_new(sections, idx, s);
        else {
                json_decref(s);
                return slack_fail(rp, "invalid_arguments");
        }
        return r < 0 ? -ENOMEM : 1;
}

/* The canvases.edit operation for the MCP tool's edit type (append, prepend, replace,
 * delete) relative to section (NULL: the whole canvas); NULL if there is none. */
static const char *edit_op(const char *type, const char *section)
{
        if (streq(type, "replace"))
                return "replace";
        if (streq(type, "append"))
                return section ? "insert_after" : "insert_at_end";
        if (streq(type, "prepend"))
                return section ? "insert_before" : "insert_at_start";
        if (streq(type, "delete"))
                return "delete";
        return NULL;
}

/*
 * canvases.edit: changes[{operation, section_id?, document_content?, title_content?}];
 * slack_update_canvas (mcp.slack.com's schema): sections[{edit_type, section_id?, content?}]
 * at most 100, or the legacy single edit action append|prepend|replace, content, section_id.
 */
int slack_act_update_canvas(TwinCall *c, TwinReply *rp)
{
        json_t *f;
        size_t idx;
        int r = arg_canvas(c, rp, &f, &idx);
        if (r <= 0)
                return r;
        if (!streq_ptr(json_get_str(f, "user"), slack_bot_user(c)))
                return slack_fail(rp, "canvas_editing_failed");
        _cleanup_json_ json_t *next = json_deep_copy(f), *changes = NULL;
        if (!next)
                return -ENOMEM;
        if (json_object_get(c->args, "changes")) {
                if (slack_arg_json_array(c, "changes", &changes) < 0 ||
                    json_array_size(changes) == 0)
                        return slack_fail(rp, "invalid_arguments");
                size_t i;
                json_t *ch;
                json_array_foreach (changes, i, ch) {
                        json_t *doc = json_object_get(ch, "document_content");
                        json_t *tc = json_object_get(ch, "title_content");
                        const char *op = json_get_str(ch, "operation");
                        if (!op)
                                return slack_fail(rp, "invalid_arguments");
                        r = apply_change(c, rp, next, op, json_get_str(ch, "section_id"),
                                         json_get_str(doc, "markdown"),
                                         json_get_str(tc, "markdown"));
                        if (r <= 0)
                                return r;
                }
        } else if (json_object_get(c->args, "sections")) {
                /* the MCP tool's batch form: sections[{edit_type, section_id?, content?}],
                 * applied in order to one copy, so all or none land */
                json_t *ops = json_object_get(c->args, "sections");
                if (!json_is_array(ops) || json_array_size(ops) == 0 ||
                    json_array_size(ops) > MAX_CANVAS_OPS)
                        return slack_fail(rp, "invalid_arguments");
                size_t i;
                json_t *o;
                json_array_foreach (ops, i, o) {
                        const char *type = json_get_str(o, "edit_type");
                        const char *section = json_get_str(o, "section_id");
                        json_t *content = json_object_get(o, "content");
                        if (!type || (json_object_get(o, "section_id") && !section) ||
                            (content && !json_is_string(content)))
                                return slack_fail(rp, "invalid_arguments");
                        const char *op = edit_op(type, section);
                        if (!op)
                                return slack_fail(rp, "invalid_arguments");
                        r = apply_change(c, rp, next, op, section, json_string_value(content),
                                         NULL);
                        if (r <= 0)
                                return r;
                }
        } else {
                const char *action, *content, *section;
                if ((r = slack_arg_string(c, rp, "action", NULL, NULL, &action)) <= 0 ||
                    (r = slack_arg_string(c, rp, "content", NULL, "invalid_arguments", &content)) <=
                            0 ||
                    (r = slack_arg_string(c, rp, "section_id", NULL, NULL, &section)) <= 0)
                        return r;
                const char *op = edit_op(action ?: "replace", section);
                if (!op || streq(op, "delete"))
                        return slack_fail(rp, "invalid_arguments");
                if ((r = apply_change(c, rp, next, op, section, content, NULL)) <= 0)
                        return r;
        }
        if ((r = canvas_refresh(next)) < 0)
                return r;
        if (json_integer_value(json_object_get(next, "size")) > MAX_CANVAS_BYTES)
                return slack_fail(rp, "canvas_too_large");
        if ((r = slack_row_replace(rp, slack_world_list(c->world, "files"), idx, next)) < 0)
                return r;
        return slack_ok(rp, json_object());
}

/* slack_read_canvas: {canvas_id, title, markdown, sections[{id, markdown}]}. */
int slack_act_read_canvas(TwinCall *c, TwinReply *rp)
{
        json_t *f;
        int r = arg_canvas(c, rp, &f, NULL);
        if (r <= 0)
                return r;
        return slack_ok(rp,
                        json_pack("{s:O, s:O, s:O, s:O, s:o}", "canvas_id",
                                  json_object_get(f, "id"), "title", json_object_get(f, "title"),
                                  "markdown", json_object_get(f, "content"), "sections",
                                  json_object_get(f, "sections"), "file", slack_render_file(c, f)));
}

int slack_act_delete_canvas(TwinCall *c, TwinReply *rp)
{
        json_t *f;
        size_t idx;
        int r = arg_canvas(c, rp, &f, &idx);
        if (r <= 0)
                return r;
        if (!streq_ptr(json_get_str(f, "user"), slack_bot_user(c)))
                return slack_fail(rp, "canvas_deleting_failed");
        if ((r = twin_reply_mutation(rp, f, NULL)) < 0)
                return r;
        if (json_array_remove(slack_world_list(c->world, "files"), idx) < 0)
                return -ENOMEM;
        return slack_ok(rp, json_object());
}

/* canvases.sections.lookup: criteria {section_types?, contains_text?} → {sections[{id}]}. */
int slack_act_lookup_canvas_sections(TwinCall *c, TwinReply *rp)
{
        json_t *f;
        int r = arg_canvas(c, rp, &f, NULL);
        if (r <= 0)
                return r;
        json_t *v = json_object_get(c->args, "criteria");
        _cleanup_json_ json_t *crit =
                json_is_string(v) ? json_loads(json_string_value(v), 0, NULL) : json_incref(v);
        if (!json_is_object(crit))
                return slack_fail(rp, "invalid_arguments");
        const char *text = json_get_str(crit, "contains_text");
        json_t *types = json_object_get(crit, "section_types");
        bool headers_only = slack_strv_has(types, "h1") || slack_strv_has(types, "h2") ||
                            slack_strv_has(types, "h3");
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        size_t i;
        json_t *s;
        json_array_foreach (json_object_get(f, "sections"), i, s) {
                const char *md = strempty(json_get_str(s, "markdown"));
                if ((text && !strcasestr(md, text)) || (headers_only && md[0] != '#'))
                        continue;
                if (json_array_append_new(out, json_pack("{s:O}", "id", json_object_get(s, "id"))) <
                    0)
                        return -ENOMEM;
        }
        return slack_ok(rp, json_pack("{s:O}", "sections", out));
}
