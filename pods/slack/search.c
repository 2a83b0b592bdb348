/* SPDX-License-Identifier: MIT */
/*
 * search.messages (https://api.slack.com/methods/search.messages) and the MCP server's
 * slack_search_public, slack_search_public_and_private and slack_search_channels. A query
 * is words that must all appear in the text (case-insensitive) plus the modifiers
 * in:#channel / in:<#C…> and from:@user / from:<@U…>. Only conversations the caller can
 * see are searched: public channels, and (not for slack_search_public) the private
 * channels, DMs and group DMs it is a member of.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/slack/slack.h"

typedef struct Query {
        char words[16][128];
        size_t n_words;
        json_t *in;       /* borrowed channel, or NULL */
        const char *from; /* user id, or NULL */
        bool impossible;  /* a modifier named nothing the caller can see */
} Query;

/* "<#C123|name>" / "<@U123>" → "C123" / "U123" into buf; else the text without '#'/'@'. */
static const char *unwrap(const char *v, char *buf, size_t len)
{
        size_t l = strlen(v);
        if (l > 3 && v[0] == '<' && (v[1] == '#' || v[1] == '@') && v[l - 1] == '>') {
                size_t n = strcspn(v + 2, "|>");
                snprintf(buf, len, "%.*s", (int)n, v + 2);
                return buf;
        }
        snprintf(buf, len, "%s", v[0] == '#' || v[0] == '@' ? v + 1 : v);
        return buf;
}

static void query_parse(TwinCall *c, const char *q, Query *out)
{
        *out = (Query){0};
        const char *p = q;
        while (*p) {
                while (*p == ' ')
                        p++;
                size_t l = strcspn(p, " ");
                if (l == 0)
                        break;
                char tok[256], buf[256];
                snprintf(tok, sizeof(tok), "%.*s", (int)(l < 255 ? l : 255), p);
                p += l;
                const char *v;
                if ((v = startswith(tok, "in:"))) {
                        json_t *ch = slack_channel_resolve(c->world, unwrap(v, buf, sizeof(buf)));
                        if (!ch) {
                                json_t *u = slack_user_resolve(c->world, buf);
                                /* in:@user: the DM with that user */
                                size_t i;
                                json_t *x;
                                json_array_foreach (json_object_get(c->world, "channels"), i, x) {
                                        if (u && json_is_true(json_object_get(x, "is_im")) &&
                                            streq_ptr(json_get_str(x, "user"),
                                                      json_get_str(u, "id")))
                                                ch = x;
                                }
                        }
                        if (!ch || !slack_channel_visible(c, ch))
                                out->impossible = true;
                        out->in = ch;
                } else if ((v = startswith(tok, "from:"))) {
                        json_t *u = slack_user_resolve(c->world, unwrap(v, buf, sizeof(buf)));
                        if (!slack_user_visible(u))
                                out->impossible = true;
                        else
                                out->from = json_get_str(u, "id");
                } else if (out->n_words < ELEMENTSOF(out->words)) {
                        char *w = out->words[out->n_words];
                        const char *s = tok;
                        size_t n = strlen(s);
                        if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
                                s++;
                                n -= 2;
                        }
                        snprintf(w, sizeof(out->words[0]), "%.*s", (int)n, s);
                        if (w[0])
                                out->n_words++;
                }
        }
}

static bool searchable(TwinCall *c, json_t *ch, bool include_private)
{
        bool priv = json_is_true(json_object_get(ch, "is_private"));
        return priv ? include_private && slack_channel_visible(c, ch) : true;
}

static json_t *render_match(TwinCall *c, json_t *ch, json_t *m)
{
        json_t *u = slack_user_by_id(c->world, strempty(json_get_str(m, "user")));
        bool priv = json_is_true(json_object_get(ch, "is_private"));
        bool im = json_is_true(json_object_get(ch, "is_im"));
        bool mpim = json_is_true(json_object_get(ch, "is_mpim"));
        return json_pack(
                "{s:s, s:{s:O, s:O*, s:b, s:b, s:b, s:b, s:b}, s:O*, s:O*, s:O, s:O, s:o, s:O, "
                "s:O*}",
                "type", "message", "channel", "id", json_object_get(ch, "id"), "name",
                json_object_get(ch, "name"), "is_channel", !priv, "is_group", priv && !im && !mpim,
                "is_im", im, "is_mpim", mpim, "is_private", priv, "user",
                json_object_get(m, "user"), "username", json_object_get(u, "name"), "ts",
                json_object_get(m, "ts"), "text", json_object_get(m, "text"), "permalink",
                slack_permalink(c, ch, m), "team",
                json_object_get(json_object_get(c->world, "team"), "id"), "thread_ts",
                json_object_get(m, "thread_ts"));
}

static int cmp_match_desc(const void *a, const void *b)
{
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int64_t tx = 0, ty = 0;
        (void)slack_ts_parse(json_object_get(x, "ts"), &tx);
        (void)slack_ts_parse(json_object_get(y, "ts"), &ty);
        return (tx < ty) - (tx > ty);
}

static int search(TwinCall *c, TwinReply *rp, bool include_private)
{
        const char *q;
        int r = slack_arg_string(c, rp, "query", NULL, "no_query", &q);
        if (r <= 0)
                return r;
        int64_t count = 20, page = 1;
        r = twin_arg_int(c->args, "count", 1, 100, &count);
        if (r == -ENOENT)
                r = twin_arg_int(c->args, "limit", 1, 100, &count);
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        if (twin_arg_int(c->args, "page", 1, 100, &page) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        const char *dir = json_get_str(c->args, "sort_dir");
        bool asc = streq_ptr(dir, "asc");

        Query query;
        query_parse(c, q, &query);
        _cleanup_json_ json_t *all = json_array();
        if (!all)
                return -ENOMEM;
        size_t i;
        json_t *ch;
        json_array_foreach (json_object_get(c->world, "channels"), i, ch) {
                if (query.impossible || !searchable(c, ch, include_private) ||
                    (query.in && query.in != ch))
                        continue;
                size_t k;
                json_t *m;
                json_array_foreach (json_object_get(ch, "messages"), k, m) {
                        const char *text = strempty(json_get_str(m, "text"));
                        bool hit = !query.from || streq_ptr(json_get_str(m, "user"), query.from);
                        for (size_t w = 0; hit && w < query.n_words; w++)
                                hit = strcasestr(text, query.words[w]) != NULL;
                        if (hit && json_array_append_new(all, render_match(c, ch, m)) < 0)
                                return -ENOMEM;
                }
        }
        size_t n = json_array_size(all);
        _cleanup_free_ json_t **sorted = calloc(n + 1, sizeof(json_t *));
        if (!sorted)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                sorted[i] = json_array_get(all, i);
        qsort(sorted, n, sizeof(json_t *), cmp_match_desc);
        _cleanup_json_ json_t *matches = json_array();
        if (!matches)
                return -ENOMEM;
        size_t from = (size_t)((page - 1) * count);
        for (i = from; i < n && i < from + (size_t)count; i++)
                if (json_array_append(matches, sorted[asc ? n - 1 - i : i]) < 0)
                        return -ENOMEM;
        json_int_t pages = (json_int_t)((n + (size_t)count - 1) / (size_t)count);
        return slack_ok(rp, json_pack("{s:s, s:{s:I, s:O, s:{s:I, s:I, s:I, s:I, s:I, s:I}, "
                                      "s:{s:I, s:I, s:I, s:I}}}",
                                      "query", q, "messages", "total", (json_int_t)n, "matches",
                                      matches, "pagination", "total_count", (json_int_t)n, "page",
                                      (json_int_t)page, "per_page", (json_int_t)count, "page_count",
                                      pages, "first", (json_int_t)(n ? from + 1 : 0), "last",
                                      (json_int_t)(from + json_array_size(matches)), "paging",
                                      "count", (json_int_t)count, "total", (json_int_t)n, "page",
                                      (json_int_t)page, "pages", pages));
}

/* slack_search_public: public channels only. */
int slack_act_search_public(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, false);
}

/* search.messages / slack_search_public_and_private. */
int slack_act_search_all(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, true);
}

/*
 * slack_search_channels: channels whose name, topic or purpose hold every word of query;
 * channel_types (default public_channel), include_archived.
 */
int slack_act_search_channels(TwinCall *c, TwinReply *rp)
{
        const char *q;
        int r = slack_arg_string(c, rp, "query", NULL, NULL, &q);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *types = NULL;
        r = twin_arg_strv(c->args, "channel_types", &types);
        if (r == -ENOMEM)
                return r;
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_types");
        bool want_private = false, archived = false;
        size_t i;
        json_t *t;
        json_array_foreach (types, i, t) {
                want_private = want_private || streq(json_string_value(t), "private_channel");
        }
        if (twin_arg_bool(c->args, "include_archived", &archived) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        Query query;
        query_parse(c, strempty(q), &query);
        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        json_t *ch;
        json_array_foreach (json_object_get(c->world, "channels"), i, ch) {
                if (json_is_true(json_object_get(ch, "is_im")) ||
                    json_is_true(json_object_get(ch, "is_mpim")) ||
                    !searchable(c, ch, want_private) ||
                    (!archived && json_is_true(json_object_get(ch, "is_archived"))))
                        continue;
                const char *fields[] = {
                        json_get_str(ch, "name"),
                        json_get_str(json_object_get(ch, "topic"), "value"),
                        json_get_str(json_object_get(ch, "purpose"), "value"),
                };
                bool hit = true;
                for (size_t w = 0; hit && w < query.n_words; w++) {
                        hit = false;
                        for (size_t f = 0; f < ELEMENTSOF(fields); f++)
                                hit = hit || (fields[f] && strcasestr(fields[f], query.words[w]));
                }
                if (hit && json_array_append(match, ch) < 0)
                        return -ENOMEM;
        }
        return slack_list_page(c, rp, match, 20, 100, slack_render_channel, "channels", NULL);
}
