/* SPDX-License-Identifier: MIT */
/*
 * Labels (developers.google.com/gmail/api/reference/rest/v1/users.labels): the system labels
 * every mailbox has, the user's own, their counts, and the MCP tools list_labels and
 * create_label, which are labels.list and labels.create's doors on the Gmail MCP server.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "pods/gmail/gmail.h"

/* Gmail's system labels (developers.google.com/gmail/api/guides/labels#system_labels). */
static const char *const system_labels[] = {
        "INBOX",
        "SENT",
        "DRAFT",
        "TRASH",
        "SPAM",
        "STARRED",
        "UNREAD",
        "IMPORTANT",
        "CHAT",
        "CATEGORY_PERSONAL",
        "CATEGORY_SOCIAL",
        "CATEGORY_PROMOTIONS",
        "CATEGORY_UPDATES",
        "CATEGORY_FORUMS",
};

int gmail_labels_system(json_t *world)
{
        json_t *labels = gmail_rows(world, "labels");
        if (!labels)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(system_labels); i++) {
                const char *n = system_labels[i];
                /* CHAT is hidden from the label list, as in Gmail */
                json_t *row = streq(n, "CHAT")
                                      ? json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", n, "name", n,
                                                  "type", "system", "messageListVisibility", "hide",
                                                  "labelListVisibility", "labelHide")
                                      : json_pack("{s:s, s:s, s:s}", "id", n, "name", n, "type",
                                                  "system");
                if (!row || json_array_append_new(labels, row) < 0)
                        return -ENOMEM;
        }
        return 0;
}

json_t *gmail_label(json_t *world, const char *id)
{
        return gmail_find(json_object_get(world, "labels"), id, NULL);
}

/* The label called name (case-insensitive). */
static json_t *label_by_name(json_t *world, const char *name)
{
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(world, "labels"), i, l)
                if (strcasecmp(strempty(json_get_str(l, "name")), name) == 0)
                        return l;
        return NULL;
}

/* A system label by its id in any case ("starred"); user labels only by their exact id. */
static json_t *system_label(json_t *world, const char *id)
{
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(world, "labels"), i, l)
                if (streq_ptr(json_get_str(l, "type"), "system") &&
                    strcasecmp(strempty(json_get_str(l, "id")), id) == 0)
                        return l;
        return NULL;
}

int gmail_label_ids(json_t *world, const json_t *names, json_t **ret, TwinReply *rp)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i, j;
        json_t *v, *have;
        if (!out)
                return -ENOMEM;
        json_array_foreach (names, i, v) {
                const char *n = json_string_value(v);
                json_t *l = n ? gmail_label(world, n) : NULL;
                if (!l && n)
                        l = system_label(world, n);
                if (!l) {
                        int r = gmail_fail(rp, 400, "invalidArgument", "Invalid label: %s",
                                           n ? n : "(not a string)");
                        return r < 0 ? r : -EINVAL;
                }
                const char *id = json_get_str(l, "id");
                bool dup = false;
                json_array_foreach (out, j, have)
                        dup = dup || streq(json_string_value(have), id);
                if (!dup && json_array_append_new(out, json_string(id)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

static bool has_label(const json_t *m, const char *id)
{
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get(m, "labelIds"), i, v)
                if (streq_ptr(json_string_value(v), id))
                        return true;
        return false;
}

/* Whether thread id is in the array of ids seen (else adds it). */
static bool seen_thread(json_t *seen, const char *id)
{
        if (json_object_get(seen, id))
                return true;
        (void)json_object_set_new(seen, id, json_true());
        return false;
}

json_t *gmail_label_render(json_t *world, const json_t *label, bool with_counts, bool mcp)
{
        const char *id = json_get_str(label, "id");
        json_t *out;
        if (mcp)
                out = json_pack("{s:s, s:s}", "labelId", id, "name", json_get_str(label, "name"));
        else {
                out = json_pack("{s:s, s:s}", "id", id, "name", json_get_str(label, "name"));
                const char *keys[] = {"messageListVisibility", "labelListVisibility", "type"};
                for (size_t k = 0; out && k < ELEMENTSOF(keys); k++) {
                        json_t *v = json_object_get(label, keys[k]);
                        if (v && json_object_set(out, keys[k], v) < 0) {
                                json_decref(out);
                                return NULL;
                        }
                }
        }
        if (!out)
                return NULL;
        json_t *color = json_object_get(label, "color");
        if (json_is_object(color) && json_object_size(color) > 0 &&
            json_object_set(out, "color", color) < 0) {
                /* not `goto oom`: that would jump into the scope of the cleanup variables
                 * below, which are not yet initialized */
                json_decref(out);
                return NULL;
        }
        if (!with_counts)
                return out;
        json_int_t total = 0, unread = 0;
        _cleanup_json_ json_t *threads = json_object(), *unread_threads = json_object();
        size_t i;
        json_t *m;
        if (!threads || !unread_threads)
                goto oom;
        json_array_foreach (json_object_get(world, "messages"), i, m) {
                if (!has_label(m, id))
                        continue;
                bool u = has_label(m, "UNREAD");
                const char *t = strempty(json_get_str(m, "threadId"));
                total++;
                unread += u;
                (void)seen_thread(threads, t);
                if (u)
                        (void)seen_thread(unread_threads, t);
        }
        if (json_object_set_new(out, "messagesTotal", json_integer(total)) < 0 ||
            json_object_set_new(out, "messagesUnread", json_integer(unread)) < 0 ||
            json_object_set_new(out, "threadsTotal",
                                json_integer((json_int_t)json_object_size(threads))) < 0 ||
            json_object_set_new(out, "threadsUnread",
                                json_integer((json_int_t)json_object_size(unread_threads))) < 0)
                goto oom;
        return out;
oom:
        json_decref(out);
        return NULL;
}

/* users.labels.list; the MCP list_labels (every label, with counts, in MCP's shape). */
int gmail_list_labels(TwinCall *c, TwinReply *rp)
{
        bool mcp = !c->request;
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *l;
        if (!out)
                return -ENOMEM;
        json_array_foreach (json_object_get(c->world, "labels"), i, l)
                if (json_array_append_new(out, gmail_label_render(c->world, l, mcp, mcp)) < 0)
                        return -ENOMEM;
        return twin_reply_body(rp, 200, json_pack("{s:O}", "labels", out));
}

int gmail_get_label(TwinCall *c, TwinReply *rp)
{
        json_t *l = gmail_label(c->world, json_get_str(c->args, "id"));
        if (!l)
                return gmail_not_found(rp);
        return twin_reply_body(rp, 200, gmail_label_render(c->world, l, true, false));
}

static bool visibility_ok(const char *key, const char *v)
{
        if (streq(key, "messageListVisibility"))
                return streq(v, "show") || streq(v, "hide");
        return streq(v, "labelShow") || streq(v, "labelShowIfUnread") || streq(v, "labelHide");
}

/*
 * The checks of a user label's new fields from args (name required when need_name), into
 * label (a user label row, changed in place): 1 with the refusal in rp, 0, -ENOMEM.
 */
static int label_fields(TwinCall *c, TwinReply *rp, json_t *label, const char *name_key,
                        bool need_name)
{
        const char *name = json_get_str(c->args, name_key);
        json_t *nv = json_object_get(c->args, name_key);
        if (nv && !json_is_string(nv))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid label name") ?: 1;
        if (need_name && (!name || !*name))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid label name") ?: 1;
        if (name) {
                size_t n = strlen(name);
                while (n > 0 && (name[n - 1] == ' ' || name[n - 1] == '\t'))
                        n--;
                if (n == 0 || n > 225 || name[0] == ' ')
                        return gmail_fail(rp, 400, "invalidArgument", "Invalid label name") ?: 1;
                json_t *other = label_by_name(c->world, name);
                bool system = false;
                for (size_t i = 0; i < ELEMENTSOF(system_labels); i++)
                        system = system || strcasecmp(system_labels[i], name) == 0;
                if ((other && other != label) || system)
                        return gmail_fail(rp, 409, "alreadyExists",
                                          "Label name exists or conflicts")
                                       ?: 1;
                if (json_object_set_new(label, "name", json_string(name)) < 0)
                        return -ENOMEM;
        }
        const char *vis[] = {"messageListVisibility", "labelListVisibility"};
        for (size_t k = 0; k < ELEMENTSOF(vis); k++) {
                json_t *v = json_object_get(c->args, vis[k]);
                if (!v || json_is_null(v))
                        continue;
                if (!json_is_string(v) || !visibility_ok(vis[k], json_string_value(v)))
                        return gmail_fail(rp, 400, "invalidArgument", "Invalid value for %s",
                                          vis[k])
                                       ?: 1;
                if (json_object_set(label, vis[k], v) < 0)
                        return -ENOMEM;
        }
        json_t *color = json_object_get(c->args, "color");
        if (color && !json_is_null(color)) {
                const char *tc = json_get_str(color, "textColor");
                const char *bc = json_get_str(color, "backgroundColor");
                if (!json_is_object(color) || (!tc && json_object_get(color, "textColor")) ||
                    (!bc && json_object_get(color, "backgroundColor")))
                        return gmail_fail(rp, 400, "invalidArgument", "Invalid label color") ?: 1;
                _cleanup_json_ json_t *cv = json_object();
                if (!cv || (tc && json_object_set_new(cv, "textColor", json_string(tc)) < 0) ||
                    (bc && json_object_set_new(cv, "backgroundColor", json_string(bc)) < 0) ||
                    json_object_set(label, "color", cv) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* A new user label called by args[name_key] into the world: the row (borrowed) in *ret. */
static int label_new(TwinCall *c, TwinReply *rp, const char *name_key, json_t **ret)
{
        json_t *labels = gmail_rows(c->world, "labels");
        _cleanup_json_ json_t *row =
                json_pack("{s:s, s:s, s:s}", "type", "user", "messageListVisibility", "show",
                          "labelListVisibility", "labelShow");
        if (!labels || !row)
                return -ENOMEM;
        int r = label_fields(c, rp, row, name_key, true);
        if (r != 0)
                return r;
        _cleanup_free_ char *id = gmail_mint_id(c->world, "Label", labels);
        if (!id || json_object_set_new(row, "id", json_string(id)) < 0 ||
            json_array_append(labels, row) < 0)
                return -ENOMEM;
        *ret = row;
        return 0;
}

/*
 * users.labels.create (body: a Label, name required) and the MCP create_label ({displayName,
 * color?, autoCreateParentLabels (default true): "a/b" makes "a" first when missing}).
 */
int gmail_create_label(TwinCall *c, TwinReply *rp)
{
        bool mcp = !c->request;
        json_t *row;
        int r;
        if (mcp) {
                const char *dn = json_get_str(c->args, "displayName");
                bool parents = true;
                if (!dn || !*dn)
                        return gmail_fail(rp, 400, "invalidArgument", "displayName is required")
                                       ?: 0;
                if (twin_arg_bool(c->args, "autoCreateParentLabels", &parents) == -EINVAL)
                        return gmail_fail(rp, 400, "invalidArgument",
                                          "autoCreateParentLabels must be a boolean");
                if (!label_by_name(c->world, dn) && parents)
                        for (const char *p = strchr(dn, '/'); p; p = strchr(p + 1, '/')) {
                                _cleanup_free_ char *parent = strndup(dn, (size_t)(p - dn));
                                if (!parent)
                                        return -ENOMEM;
                                if (!*parent || label_by_name(c->world, parent))
                                        continue;
                                _cleanup_json_ json_t *args =
                                        json_pack("{s:s}", "displayName", parent);
                                json_t *saved = c->args, *prow;
                                if (!args)
                                        return -ENOMEM;
                                c->args = args;
                                r = label_new(c, rp, "displayName", &prow);
                                c->args = saved;
                                if (r != 0)
                                        return r < 0 ? r : 0;
                                if ((r = twin_reply_mutation(rp, NULL, prow)) < 0)
                                        return r;
                        }
                r = label_new(c, rp, "displayName", &row);
        } else
                r = label_new(c, rp, "name", &row);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        return twin_reply_body(rp, 200, gmail_label_render(c->world, row, mcp, mcp));
}

/* labels.update (replace) and labels.patch (given fields only) of a user label. */
static int label_change(TwinCall *c, TwinReply *rp, bool replace)
{
        json_t *l = gmail_label(c->world, json_get_str(c->args, "id"));
        if (!l)
                return gmail_not_found(rp);
        if (streq_ptr(json_get_str(l, "type"), "system"))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid update request");
        _cleanup_json_ json_t *before = json_deep_copy(l), *work = json_deep_copy(l);
        if (!before || !work)
                return -ENOMEM;
        if (replace) {
                json_object_del(work, "color");
                (void)json_object_set_new(work, "messageListVisibility", json_string("show"));
                (void)json_object_set_new(work, "labelListVisibility", json_string("labelShow"));
        }
        int r = label_fields(c, rp, work, "name", replace);
        if (r != 0)
                return r < 0 ? r : 0;
        if (json_object_update(l, work) < 0)
                return -ENOMEM;
        if (replace && !json_object_get(work, "color"))
                json_object_del(l, "color");
        if (!json_equal(before, l) && (r = twin_reply_mutation(rp, before, l)) < 0)
                return r;
        return twin_reply_body(rp, 200, gmail_label_render(c->world, l, false, false));
}

int gmail_update_label(TwinCall *c, TwinReply *rp)
{
        return label_change(c, rp, true);
}

int gmail_patch_label(TwinCall *c, TwinReply *rp)
{
        return label_change(c, rp, false);
}

/* labels.delete: a user label, taken off every message it was on (their history too). */
int gmail_delete_label(TwinCall *c, TwinReply *rp)
{
        size_t at;
        json_t *labels = json_object_get(c->world, "labels");
        json_t *l = gmail_find(labels, json_get_str(c->args, "id"), &at);
        if (!l)
                return gmail_not_found(rp);
        if (streq_ptr(json_get_str(l, "type"), "system"))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid delete request");
        _cleanup_json_ json_t *before = json_incref(l);
        _cleanup_json_ json_t *gone = json_pack("[s]", json_get_str(l, "id"));
        size_t i;
        json_t *m;
        if (!gone)
                return -ENOMEM;
        json_array_foreach (json_object_get(c->world, "messages"), i, m) {
                bool changed;
                int r = gmail_message_relabel(c->world, m, NULL, gone, &changed);
                if (r < 0)
                        return r;
        }
        if (json_array_remove(labels, at) < 0)
                return -ENOMEM;
        int r = twin_reply_mutation(rp, before, NULL);
        if (r < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}
