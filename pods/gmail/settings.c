/* SPDX-License-Identifier: MIT */
/*
 * Filters (developers.google.com/gmail/api/reference/rest/v1/users.settings.filters): list,
 * get, create, delete, and their actions on the new mail that matches (insert is not new
 * mail; import and a message to oneself are), as Gmail applies them and hosted Pome's twin
 * does (criteria from/to/subject as substrings, query and negatedQuery as searches,
 * hasAttachment, size with sizeComparison).
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "pods/gmail/gmail.h"

static json_t *filter_at(TwinCall *c, size_t *ret_index)
{
        return gmail_find(json_object_get(c->world, "filters"), json_get_str(c->args, "id"),
                          ret_index);
}

/* users.settings.filters.list: {filter: [...]}, no member when there are none. */
int gmail_list_filters(TwinCall *c, TwinReply *rp)
{
        json_t *f = json_object_get(c->world, "filters");
        if (json_array_size(f) == 0)
                return twin_reply_body(rp, 200, json_object());
        return twin_reply_body(rp, 200, json_pack("{s:O}", "filter", f));
}

int gmail_get_filter(TwinCall *c, TwinReply *rp)
{
        json_t *f = filter_at(c, NULL);
        if (!f)
                return gmail_not_found(rp);
        return twin_reply_body(rp, 200, json_incref(f));
}

/* users.settings.filters.create: {criteria, action}; labels must exist, forwarding is not
 * served. */
int gmail_create_filter(TwinCall *c, TwinReply *rp)
{
        json_t *crit = json_object_get(c->args, "criteria");
        json_t *act = json_object_get(c->args, "action");
        if (!json_is_object(crit) || json_object_size(crit) == 0)
                return gmail_fail(rp, 400, "invalidArgument", "Filter doesn't have any criteria");
        if (!json_is_object(act) || json_object_size(act) == 0)
                return gmail_fail(rp, 400, "invalidArgument", "Filter doesn't have any actions");
        if (json_object_get(act, "forward"))
                return gmail_fail(rp, 501, "notImplemented",
                                  "Filter forwarding is not implemented by the twin");
        static const char *const ck[] = {"from", "to", "subject", "query", "negatedQuery"};
        for (size_t k = 0; k < ELEMENTSOF(ck); k++) {
                json_t *v = json_object_get(crit, ck[k]);
                if (v && !json_is_string(v))
                        return gmail_fail(rp, 400, "invalidArgument", "Invalid criteria.%s", ck[k]);
                if (v && (streq(ck[k], "query") || streq(ck[k], "negatedQuery"))) {
                        GmailQuery *q = NULL;
                        char err[200] = "";
                        int r = gmail_query_parse(json_string_value(v), &q, err, sizeof(err));
                        gmail_query_free(q);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return gmail_fail(rp, 400, "invalidArgument", "%s", err);
                }
        }
        json_t *size = json_object_get(crit, "size");
        const char *cmp = json_get_str(crit, "sizeComparison");
        if ((size && !json_is_integer(size)) ||
            (cmp && !streq(cmp, "larger") && !streq(cmp, "smaller") && !streq(cmp, "unspecified")))
                return gmail_fail(rp, 400, "invalidArgument", "Invalid size criteria");
        _cleanup_json_ json_t *add = NULL, *rm = NULL;
        int r = gmail_label_ids(c->world, json_object_get(act, "addLabelIds"), &add, rp);
        if (r == 0)
                r = gmail_label_ids(c->world, json_object_get(act, "removeLabelIds"), &rm, rp);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        json_t *filters = gmail_rows(c->world, "filters");
        _cleanup_free_ char *id = filters ? gmail_mint_id(c->world, "filter", filters) : NULL;
        if (!id)
                return -ENOMEM;
        _cleanup_json_ json_t *action = json_object(), *row = NULL;
        if (!action ||
            (json_array_size(add) > 0 && json_object_set(action, "addLabelIds", add) < 0) ||
            (json_array_size(rm) > 0 && json_object_set(action, "removeLabelIds", rm) < 0))
                return -ENOMEM;
        row = json_pack("{s:s, s:o, s:O}", "id", id, "criteria", json_deep_copy(crit), "action",
                        action);
        if (!row || json_array_append(filters, row) < 0 ||
            (r = twin_reply_mutation(rp, NULL, row)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, json_incref(row));
}

int gmail_delete_filter(TwinCall *c, TwinReply *rp)
{
        size_t at;
        json_t *f = filter_at(c, &at);
        if (!f)
                return gmail_not_found(rp);
        _cleanup_json_ json_t *before = json_incref(f);
        if (json_array_remove(json_object_get(c->world, "filters"), at) < 0)
                return -ENOMEM;
        int r = twin_reply_mutation(rp, before, NULL);
        if (r < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/* Whether the header name's value of m contains want (case-insensitive); To also reads Cc. */
static bool header_has(const json_t *m, const char *name, const char *want)
{
        const json_t *p = json_object_get(m, "payload");
        const char *v = gmail_mime_header(p, name);
        if (v && strcasestr(v, want))
                return true;
        return streq(name, "To") && (v = gmail_mime_header(p, "Cc")) && strcasestr(v, want);
}

static bool has_attachment(const json_t *part)
{
        if (json_get_str(json_object_get(part, "body"), "attachmentId"))
                return true;
        size_t i;
        json_t *p;
        json_array_foreach (json_object_get(part, "parts"), i, p)
                if (has_attachment(p))
                        return true;
        return false;
}

static bool query_matches(json_t *world, const json_t *m, const char *q, int64_t now_ms)
{
        GmailQuery *gq = NULL;
        if (gmail_query_parse(q, &gq, NULL, 0) < 0)
                return false;
        bool hit = gmail_query_match(gq, m, json_object_get(world, "labels"), now_ms / 1000);
        gmail_query_free(gq);
        return hit;
}

static bool filter_matches(json_t *world, const json_t *f, const json_t *m, int64_t now_ms)
{
        const json_t *crit = json_object_get(f, "criteria");
        const char *from = json_get_str(crit, "from"), *to = json_get_str(crit, "to");
        const char *subject = json_get_str(crit, "subject"), *q = json_get_str(crit, "query");
        const char *nq = json_get_str(crit, "negatedQuery");
        json_t *size = json_object_get(crit, "size");
        json_int_t est = json_integer_value(json_object_get(m, "sizeEstimate"));
        if ((from && !header_has(m, "From", from)) || (to && !header_has(m, "To", to)) ||
            (subject && !header_has(m, "Subject", subject)))
                return false;
        if (json_is_true(json_object_get(crit, "hasAttachment")) &&
            !has_attachment(json_object_get(m, "payload")))
                return false;
        if (json_is_integer(size)) {
                bool smaller = streq_ptr(json_get_str(crit, "sizeComparison"), "smaller");
                if (smaller ? est >= json_integer_value(size) : est <= json_integer_value(size))
                        return false;
        }
        if (q && !query_matches(world, m, q, now_ms))
                return false;
        return !(nq && query_matches(world, m, nq, now_ms));
}

int gmail_filters_apply(json_t *world, json_t *m, int64_t now_ms)
{
        size_t i;
        json_t *f;
        json_array_foreach (json_object_get(world, "filters"), i, f) {
                if (!filter_matches(world, f, m, now_ms))
                        continue;
                json_t *act = json_object_get(f, "action");
                bool changed;
                int r = gmail_message_relabel(world, m, json_object_get(act, "addLabelIds"),
                                              json_object_get(act, "removeLabelIds"), &changed);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The sendAs aliases as Gmail lists them: the primary address first (the seed's entry for it,
 * if any, else its defaults), then the seed's others, each with Gmail's defaults. New array,
 * NULL on OOM. */
static json_t *send_as_all(TwinCall *c)
{
        const char *own = strempty(json_get_str(c->world, "emailAddress"));
        json_t *out = json_array(), *v;
        json_t *primary = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:s}", "sendAsEmail", own,
                                    "displayName", strempty(json_get_str(c->world, "displayName")),
                                    "replyToAddress", "", "signature", "", "isPrimary", true,
                                    "isDefault", true, "verificationStatus", "accepted");
        size_t i;
        if (!out || !primary || json_array_append_new(out, primary) < 0) {
                json_decref(out);
                return NULL;
        }
        json_array_foreach (json_object_get(c->world, "sendAs"), i, v) {
                bool is_own = strcasecmp(strempty(json_get_str(v, "sendAsEmail")), own) == 0;
                json_t *row = is_own ? primary
                                     : json_pack("{s:s, s:s, s:s, s:b, s:b, s:s}", "displayName",
                                                 "", "replyToAddress", "", "signature", "",
                                                 "isPrimary", false, "isDefault", false,
                                                 "verificationStatus", "accepted");
                if (!row || json_object_update(row, v) < 0 ||
                    (!is_own && json_array_append_new(out, row) < 0)) {
                        json_decref(out);
                        return NULL;
                }
        }
        return out;
}

/* users.settings.sendAs.list: {sendAs: [...]}, the primary address included. */
int gmail_list_send_as(TwinCall *c, TwinReply *rp)
{
        json_t *all = send_as_all(c);
        return twin_reply_body(rp, 200, all ? json_pack("{s:o}", "sendAs", all) : NULL);
}

int gmail_get_send_as(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *all = send_as_all(c);
        const char *want = json_get_str(c->args, "sendAsEmail");
        size_t i;
        json_t *v;
        if (!all)
                return -ENOMEM;
        json_array_foreach (all, i, v)
                if (want && strcasecmp(strempty(json_get_str(v, "sendAsEmail")), want) == 0)
                        return twin_reply_body(rp, 200, json_incref(v));
        return gmail_not_found(rp);
}

/* A forwarding address as Gmail shows it: {forwardingEmail, verificationStatus}. */
static json_t *forwarding_render(const json_t *v)
{
        const char *st = json_get_str(v, "verificationStatus");
        return json_pack("{s:s, s:s}", "forwardingEmail",
                         strempty(json_get_str(v, "forwardingEmail")), "verificationStatus",
                         st ? st : "pending");
}

/* users.settings.forwardingAddresses.list: {forwardingAddresses: [...]}. */
int gmail_list_forwarding_addresses(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *v;
        if (!out)
                return -ENOMEM;
        json_array_foreach (json_object_get(c->world, "forwardingAddresses"), i, v)
                if (json_array_append_new(out, forwarding_render(v)) < 0)
                        return -ENOMEM;
        if (json_array_size(out) == 0)
                return twin_reply_body(rp, 200, json_object());
        return twin_reply_body(rp, 200, json_pack("{s:O}", "forwardingAddresses", out));
}

int gmail_get_forwarding_address(TwinCall *c, TwinReply *rp)
{
        const char *want = json_get_str(c->args, "forwardingEmail");
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get(c->world, "forwardingAddresses"), i, v)
                if (want && strcasecmp(strempty(json_get_str(v, "forwardingEmail")), want) == 0)
                        return twin_reply_body(rp, 200, forwarding_render(v));
        return gmail_not_found(rp);
}
