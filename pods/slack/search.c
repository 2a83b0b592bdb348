/* SPDX-License-Identifier: MIT */
/*
 * search.messages (https://api.slack.com/methods/search.messages) and the MCP server's
 * slack_search_public, slack_search_public_and_private and slack_search_channels. Only
 * conversations the caller can see are searched: public channels, and (not for
 * slack_search_public) the private channels, DMs and group DMs it is a member of.
 *
 * The query language is Slack's ("Search in Slack", https://slack.com/help/articles/
 * 202528808): words (each must start a word of the text, case-insensitive; a trailing '*'
 * is allowed), "exact phrases", and the modifiers in:#channel / in:<#C…|name> / in:@user
 * (the DM) / in:<@U…>, from:@user / from:<@U…> / from:me, before:/after:/on:YYYY-MM-DD
 * (also today, yesterday), during:YYYY-MM-DD / YYYY-MM / YYYY, has:link, has:reaction,
 * has::emoji:, has:pin, is:thread. A leading '-' excludes a word, a phrase or a modifier.
 * Several in: (or from:) are alternatives; everything else must hold together. Days are
 * UTC days (Slack uses the searcher's time zone). A modifier value that is not one of these
 * forms is searched as a word. Results sort by score (hits of the words and phrases, newer
 * first among equals) or timestamp, sort_dir desc or asc, and page by page/count or by cursor
 * ("*" first, then next_cursor); highlight=true marks the hits in each text with U+E000 and
 * U+E001, as Slack does.
 */
#include <ctype.h>
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "pods/slack/slack.h"

#define MAX_TERMS 32

typedef enum TermKind {
        TERM_WORD,
        TERM_PHRASE,
        TERM_IN,
        TERM_FROM,
        TERM_TIME, /* ts in [lo, hi), seconds */
        TERM_HAS_LINK,
        TERM_HAS_REACTION,
        TERM_HAS_EMOJI,
        TERM_HAS_PIN,
        TERM_IS_THREAD,
} TermKind;

typedef struct Term {
        TermKind kind;
        bool neg;
        char text[128];   /* word, phrase or emoji name */
        json_t *channel;  /* TERM_IN: borrowed, NULL when it names nothing visible */
        const char *user; /* TERM_FROM: user id, NULL when it names nobody visible */
        int64_t lo, hi;   /* TERM_TIME */
} Term;

typedef struct Query {
        Term terms[MAX_TERMS];
        size_t n;
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

/* The conversation in:v names (a channel, or the DM with a user), or NULL. Borrowed. */
static json_t *resolve_in(TwinCall *c, const char *v)
{
        char buf[256];
        json_t *ch = slack_channel_resolve(c->world, unwrap(v, buf, sizeof(buf)));
        if (ch)
                return ch;
        json_t *u = slack_user_resolve(c->world, buf);
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(c->world, "channels"), i, x) {
                if (u && json_is_true(json_object_get(x, "is_im")) &&
                    streq_ptr(json_get_str(x, "user"), json_get_str(u, "id")))
                        return x;
        }
        return NULL;
}

/* n digits of s as a number, or -1. */
static int digits(const char *s, size_t n)
{
        int v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

/*
 * A day, month or year ("2026-05-28", "2026-05", "2026"; "today", "yesterday" when days
 * is true) as the UTC range [*lo, *hi) in seconds. false when v is none of these.
 */
static bool parse_period(TwinCall *c, const char *v, bool days_only, int64_t *lo, int64_t *hi)
{
        int64_t today = c->now - c->now % 86400;
        if (streq(v, "today") || streq(v, "yesterday")) {
                *lo = streq(v, "today") ? today : today - 86400;
                *hi = *lo + 86400;
                return true;
        }
        size_t l = strlen(v);
        int y = l >= 4 ? digits(v, 4) : -1, m = 1, d = 1;
        if (y < 1970 || (l != 4 && l != 7 && l != 10) || (days_only && l != 10))
                return false;
        if (l >= 7 && (v[4] != '-' || (m = digits(v + 5, 2)) < 1 || m > 12))
                return false;
        if (l == 10 && (v[7] != '-' || (d = digits(v + 8, 2)) < 1 || d > 31))
                return false;
        struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d};
        time_t start = timegm(&tm);
        struct tm check;
        if (start == (time_t)-1 || !gmtime_r(&start, &check) || check.tm_mday != d)
                return false; /* 2026-02-30 */
        struct tm next = tm;
        if (l == 10)
                next.tm_mday++;
        else if (l == 7)
                next.tm_mon++;
        else
                next.tm_year++;
        *lo = (int64_t)start;
        *hi = (int64_t)timegm(&next);
        return true;
}

/* Reads one modifier (key:value) into t. false when it is not one: then it is a word. */
static bool parse_modifier(TwinCall *c, const char *tok, Term *t)
{
        const char *v;
        int64_t lo, hi;
        if ((v = startswith(tok, "in:")) && v[0]) {
                t->kind = TERM_IN;
                t->channel = resolve_in(c, v);
                if (t->channel && !slack_channel_visible(c, t->channel))
                        t->channel = NULL;
                return true;
        }
        if ((v = startswith(tok, "from:")) && v[0]) {
                char buf[256];
                json_t *u = streq(v, "me")
                                    ? slack_user_by_id(c->world, strempty(slack_bot_user(c)))
                                    : slack_user_resolve(c->world, unwrap(v, buf, sizeof(buf)));
                t->kind = TERM_FROM;
                t->user = slack_user_visible(u) ? json_get_str(u, "id") : NULL;
                return true;
        }
        if ((v = startswith(tok, "before:")) && parse_period(c, v, true, &lo, &hi)) {
                *t = (Term){.kind = TERM_TIME, .neg = t->neg, .lo = INT64_MIN, .hi = lo};
                return true;
        }
        if ((v = startswith(tok, "after:")) && parse_period(c, v, true, &lo, &hi)) {
                *t = (Term){.kind = TERM_TIME, .neg = t->neg, .lo = hi, .hi = INT64_MAX};
                return true;
        }
        if (((v = startswith(tok, "on:")) && parse_period(c, v, true, &lo, &hi)) ||
            ((v = startswith(tok, "during:")) && parse_period(c, v, false, &lo, &hi))) {
                *t = (Term){.kind = TERM_TIME, .neg = t->neg, .lo = lo, .hi = hi};
                return true;
        }
        if (streq(tok, "has:link") || streq(tok, "has:reaction") || streq(tok, "has:pin") ||
            streq(tok, "is:thread")) {
                t->kind = streq(tok, "has:link")       ? TERM_HAS_LINK
                          : streq(tok, "has:reaction") ? TERM_HAS_REACTION
                          : streq(tok, "has:pin")      ? TERM_HAS_PIN
                                                       : TERM_IS_THREAD;
                return true;
        }
        /* has::emoji: */
        if ((v = startswith(tok, "has::")) && strlen(v) > 1 && v[strlen(v) - 1] == ':') {
                t->kind = TERM_HAS_EMOJI;
                snprintf(t->text, sizeof(t->text), "%.*s", (int)strlen(v) - 1, v);
                return true;
        }
        return false;
}

/* Splits q into terms (at most MAX_TERMS; the rest is ignored). */
static void query_parse(TwinCall *c, const char *q, Query *out)
{
        *out = (Query){0};
        const char *p = q;
        while (*p && out->n < MAX_TERMS) {
                while (*p == ' ' || *p == '\t' || *p == '\n')
                        p++;
                if (!*p)
                        break;
                Term *t = &out->terms[out->n];
                *t = (Term){0};
                if (p[0] == '-' && p[1] && p[1] != ' ') {
                        t->neg = true;
                        p++;
                }
                if (*p == '"') {
                        const char *e = strchr(p + 1, '"');
                        size_t l = e ? (size_t)(e - p - 1) : strlen(p + 1);
                        t->kind = TERM_PHRASE;
                        snprintf(t->text, sizeof(t->text), "%.*s",
                                 (int)(l < sizeof(t->text) - 1 ? l : sizeof(t->text) - 1), p + 1);
                        p += 1 + l + (e ? 1 : 0);
                        if (t->text[0])
                                out->n++;
                        continue;
                }
                size_t l = strcspn(p, " \t\n");
                char tok[256];
                snprintf(tok, sizeof(tok), "%.*s", (int)(l < 255 ? l : 255), p);
                p += l;
                if (parse_modifier(c, tok, t)) {
                        out->n++;
                        continue;
                }
                t->kind = TERM_WORD;
                size_t n = strlen(tok);
                while (n > 0 && tok[n - 1] == '*')
                        n--;
                snprintf(t->text, sizeof(t->text), "%.*s",
                         (int)(n < sizeof(t->text) - 1 ? n : sizeof(t->text) - 1), tok);
                if (t->text[0])
                        out->n++;
        }
}

static bool word_byte(unsigned char ch)
{
        return isalnum(ch) || ch >= 0x80 || ch == '_';
}

/*
 * How often needle occurs in text at the start of a word (case-insensitive); with whole, it
 * must also end one (a phrase).
 */
static size_t hits(const char *text, const char *needle, bool whole)
{
        size_t n = strlen(needle), count = 0;
        if (n == 0)
                return 0;
        for (const char *p = text; (p = strcasestr(p, needle)); p++) {
                bool start = p == text || !word_byte((unsigned char)p[-1]) ||
                             !word_byte((unsigned char)needle[0]);
                bool end = !whole || !word_byte((unsigned char)p[n]) ||
                           !word_byte((unsigned char)needle[n - 1]);
                count += start && end;
        }
        return count;
}

/* Whether m of ch is part of a thread: a reply, or a parent with replies. */
static bool in_thread(json_t *ch, json_t *m)
{
        if (json_get_str(m, "thread_ts"))
                return true;
        const char *ts = json_get_str(m, "ts");
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(ch, "messages"), i, x) {
                if (x != m && streq_ptr(json_get_str(x, "thread_ts"), ts))
                        return true;
        }
        return false;
}

static bool has_link(json_t *m)
{
        const char *text = strempty(json_get_str(m, "text"));
        return strcasestr(text, "http://") || strcasestr(text, "https://") ||
               strcasestr(text, "<mailto:") || json_array_size(json_object_get(m, "attachments"));
}

/* Whether one term holds for m of ch (before its negation); *score gains its hits. */
static bool term_holds(const Term *t, json_t *ch, json_t *m, size_t *score)
{
        const char *text = strempty(json_get_str(m, "text"));
        switch (t->kind) {
        case TERM_WORD:
        case TERM_PHRASE: {
                size_t h = hits(text, t->text, t->kind == TERM_PHRASE);
                if (!t->neg)
                        *score += h;
                return h > 0;
        }
        case TERM_IN:
                return t->channel == ch;
        case TERM_FROM:
                return t->user && streq_ptr(json_get_str(m, "user"), t->user);
        case TERM_TIME: {
                int64_t s = slack_msg_ts(m) / 1000000;
                return s >= t->lo && s < t->hi;
        }
        case TERM_HAS_LINK:
                return has_link(m);
        case TERM_HAS_REACTION:
                return json_array_size(json_object_get(m, "reactions")) > 0;
        case TERM_HAS_EMOJI: {
                size_t i;
                json_t *rx;
                json_array_foreach (json_object_get(m, "reactions"), i, rx) {
                        const char *name = strempty(json_get_str(rx, "name"));
                        /* "thumbsup" also matches "thumbsup::skin-tone-2" */
                        size_t l = strlen(t->text);
                        if (strncmp(name, t->text, l) == 0 && (!name[l] || name[l] == ':'))
                                return true;
                }
                return false;
        }
        case TERM_HAS_PIN: {
                size_t i;
                json_t *pin;
                json_array_foreach (json_object_get(ch, "pins"), i, pin) {
                        if (json_equal(json_object_get(pin, "ts"), json_object_get(m, "ts")))
                                return true;
                }
                return false;
        }
        case TERM_IS_THREAD:
                return in_thread(ch, m);
        }
        return false;
}

/*
 * Whether m of ch matches q: every term but in:/from: holds (or, negated, does not); of
 * the positive in: terms one holds, likewise from:. *score = the hits of the words.
 */
static bool matches(const Query *q, json_t *ch, json_t *m, size_t *score)
{
        bool any_in = false, in_ok = false, any_from = false, from_ok = false;
        *score = 0;
        for (size_t i = 0; i < q->n; i++) {
                const Term *t = &q->terms[i];
                bool h = term_holds(t, ch, m, score);
                if (!t->neg && t->kind == TERM_IN) {
                        any_in = true;
                        in_ok = in_ok || h;
                } else if (!t->neg && t->kind == TERM_FROM) {
                        any_from = true;
                        from_ok = from_ok || h;
                } else if (h == t->neg)
                        return false;
        }
        return (!any_in || in_ok) && (!any_from || from_ok);
}

static bool searchable(TwinCall *c, json_t *ch, bool include_private)
{
        bool priv = json_is_true(json_object_get(ch, "is_private"));
        return priv ? include_private && slack_channel_visible(c, ch) : true;
}

/* Whether a hit of needle starts at p in text (see hits). */
static bool hit_at(const char *text, const char *p, const char *needle, bool whole)
{
        size_t n = strlen(needle);
        if (n == 0 || strncasecmp(p, needle, n) != 0)
                return false;
        bool start = p == text || !word_byte((unsigned char)p[-1]) ||
                     !word_byte((unsigned char)needle[0]);
        bool end = !whole || !word_byte((unsigned char)p[n]) ||
                   !word_byte((unsigned char)needle[n - 1]);
        return start && end;
}

/*
 * text with every hit of q's positive words and phrases between Slack's highlight markers,
 * U+E000 and U+E001 (search.messages highlight=true). New string, NULL on OOM.
 */
static json_t *highlight(const Query *q, const char *text)
{
        size_t n = strlen(text);
        _cleanup_free_ char *out = malloc(n * 7 + 1);
        if (!out)
                return NULL;
        size_t o = 0;
        for (const char *p = text; *p;) {
                size_t best = 0;
                for (size_t i = 0; i < q->n; i++) {
                        const Term *t = &q->terms[i];
                        if (t->neg || (t->kind != TERM_WORD && t->kind != TERM_PHRASE) ||
                            !hit_at(text, p, t->text, t->kind == TERM_PHRASE))
                                continue;
                        size_t l = strlen(t->text);
                        /* a word marks the rest of the word it starts */
                        if (t->kind == TERM_WORD)
                                while (p[l] && word_byte((unsigned char)p[l]))
                                        l++;
                        best = l > best ? l : best;
                }
                if (best == 0) {
                        out[o++] = *p++;
                        continue;
                }
                memcpy(out + o, "\xee\x80\x80", 3);
                memcpy(out + o + 3, p, best);
                memcpy(out + o + 3 + best, "\xee\x80\x81", 3);
                o += best + 6;
                p += best;
        }
        return twin_json_string_lossy(out, o);
}

static json_t *render_match(TwinCall *c, json_t *ch, json_t *m, size_t score)
{
        json_t *u = slack_user_by_id(c->world, strempty(json_get_str(m, "user")));
        bool priv = json_is_true(json_object_get(ch, "is_private"));
        bool im = json_is_true(json_object_get(ch, "is_im"));
        bool mpim = json_is_true(json_object_get(ch, "is_mpim"));
        return json_pack(
                "{s:s, s:{s:O, s:O*, s:b, s:b, s:b, s:b, s:b}, s:O*, s:O*, s:O, s:O, s:o, s:O, "
                "s:O*, s:I}",
                "type", "message", "channel", "id", json_object_get(ch, "id"), "name",
                json_object_get(ch, "name"), "is_channel",
                !im && !mpim && !slack_channel_is_group(ch), "is_group", slack_channel_is_group(ch),
                "is_im", im, "is_mpim", mpim, "is_private", priv, "user",
                json_object_get(m, "user"), "username", json_object_get(u, "name"), "ts",
                json_object_get(m, "ts"), "text", json_object_get(m, "text"), "permalink",
                slack_permalink(c, ch, m), "team",
                json_object_get(json_object_get(c->world, "team"), "id"), "thread_ts",
                json_object_get(m, "thread_ts"), "score", (json_int_t)score);
}

typedef struct Hit {
        json_t *match; /* borrowed from the result array */
        int64_t ts;
        size_t score;
} Hit;

static int cmp_time_desc(const void *a, const void *b)
{
        const Hit *x = a, *y = b;
        return (x->ts < y->ts) - (x->ts > y->ts);
}

static int cmp_score_desc(const void *a, const void *b)
{
        const Hit *x = a, *y = b;
        if (x->score != y->score)
                return (x->score < y->score) - (x->score > y->score);
        return cmp_time_desc(a, b);
}

/* The offset a search cursor names: "*" or absent is 0. 1, or 0 with invalid_cursor in rp. */
static int arg_cursor(TwinCall *c, TwinReply *rp, size_t n, bool *ret_used, size_t *ret_from)
{
        const char *cursor;
        int r = twin_arg_str(c->args, "cursor", &cursor);
        *ret_used = false;
        *ret_from = 0;
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_cursor");
        if (r < 0 || !cursor[0])
                return 1;
        *ret_used = true;
        if (streq(cursor, "*"))
                return 1;
        _cleanup_free_ char *raw = NULL;
        r = twin_base64_decode(cursor, &raw);
        if (r == -ENOMEM)
                return r;
        const char *num = r < 0 ? NULL : startswith(raw, "offset:");
        _cleanup_json_ json_t *tmp = num ? json_pack("{s:s}", "o", num) : NULL;
        int64_t off;
        if (!tmp || twin_arg_int(tmp, "o", 0, (int64_t)n, &off) < 0)
                return slack_fail(rp, "invalid_cursor");
        *ret_from = (size_t)off;
        return 1;
}

static int search(TwinCall *c, TwinReply *rp, bool include_private)
{
        /* search.messages takes user tokens only (api.slack.com/methods/search.messages,
         * "Token types: User"); a bot token is refused before its arguments are read, as
         * Slack checks the token first. A session token stands for the user, as the MCP
         * server's OAuth user token does. */
        if (c->request &&
            streq_ptr(json_get_str(c->request->headers, TWIN_CREDENTIAL_HEADER), "slack"))
                return slack_fail(rp, "not_allowed_token_type");
        const char *q;
        int r = slack_arg_string(c, rp, "query", NULL, "no_query", &q);
        if (r <= 0)
                return r;
        int64_t count = 20, page = 1;
        r = twin_arg_int(c->args, "count", 1, INT64_MAX, &count);
        if (r == -ENOENT)
                r = twin_arg_int(c->args, "limit", 1, INT64_MAX, &count);
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        /* "Maximum of 100": more is served as 100 (the SDK's paginate asks for 200) */
        if (count > 100)
                count = 100;
        if (twin_arg_int(c->args, "page", 1, 100, &page) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");
        const char *dir = json_get_str(c->args, "sort_dir");
        const char *sort = json_get_str(c->args, "sort");
        bool asc = streq_ptr(dir, "asc"), by_time = streq_ptr(sort, "timestamp"), hl = false;
        if (twin_arg_bool(c->args, "highlight", &hl) == -EINVAL)
                return slack_fail(rp, "invalid_arguments");

        Query query;
        query_parse(c, q, &query);
        _cleanup_json_ json_t *all = json_array();
        if (!all)
                return -ENOMEM;
        size_t i;
        json_t *ch;
        json_array_foreach (json_object_get(c->world, "channels"), i, ch) {
                if (!searchable(c, ch, include_private))
                        continue;
                size_t k;
                json_t *m;
                json_array_foreach (json_object_get(ch, "messages"), k, m) {
                        size_t score;
                        /* a deleted thread parent's tombstone is no message to find */
                        if (json_is_true(json_object_get(m, "hidden")) ||
                            !matches(&query, ch, m, &score))
                                continue;
                        json_t *x = render_match(c, ch, m, score);
                        if (!x || json_array_append_new(all, x) < 0)
                                return -ENOMEM;
                        if (hl && json_object_set_new(
                                          x, "text",
                                          highlight(&query, strempty(json_get_str(m, "text")))) < 0)
                                return -ENOMEM;
                }
        }
        size_t n = json_array_size(all);
        _cleanup_free_ Hit *sorted = calloc(n + 1, sizeof(Hit));
        if (!sorted)
                return -ENOMEM;
        for (i = 0; i < n; i++) {
                json_t *x = json_array_get(all, i);
                sorted[i].match = x;
                (void)slack_ts_parse(json_object_get(x, "ts"), &sorted[i].ts);
                sorted[i].score = (size_t)json_integer_value(json_object_get(x, "score"));
        }
        qsort(sorted, n, sizeof(Hit), by_time ? cmp_time_desc : cmp_score_desc);

        bool cursored;
        size_t from;
        if ((r = arg_cursor(c, rp, n, &cursored, &from)) <= 0)
                return r;
        if (!cursored)
                from = (size_t)((page - 1) * count);
        else
                page = (int64_t)(from / (size_t)count) + 1;
        _cleanup_json_ json_t *matches_out = json_array();
        if (!matches_out)
                return -ENOMEM;
        for (i = from; i < n && i < from + (size_t)count; i++)
                if (json_array_append(matches_out, sorted[asc ? n - 1 - i : i].match) < 0)
                        return -ENOMEM;
        size_t next = from + json_array_size(matches_out);
        json_int_t pages = (json_int_t)((n + (size_t)count - 1) / (size_t)count);
        _cleanup_json_ json_t *meta = slack_response_metadata(next, n);
        if (!meta)
                return -ENOMEM;
        return slack_ok(
                rp, json_pack("{s:s, s:{s:I, s:O, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:O}, "
                              "s:{s:I, s:I, s:I, s:I}}, s:O}",
                              "query", q, "messages", "total", (json_int_t)n, "matches",
                              matches_out, "pagination", "total_count", (json_int_t)n, "page",
                              (json_int_t)page, "per_page", (json_int_t)count, "page_count", pages,
                              "first", (json_int_t)(next > from ? from + 1 : 0), "last",
                              (json_int_t)next, "next_cursor", json_object_get(meta, "next_cursor"),
                              "paging", "count", (json_int_t)count, "total", (json_int_t)n, "page",
                              (json_int_t)page, "pages", pages, "response_metadata", meta));
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
                for (size_t w = 0; hit && w < query.n; w++) {
                        const Term *term = &query.terms[w];
                        if (term->kind != TERM_WORD && term->kind != TERM_PHRASE)
                                continue;
                        bool found = false;
                        for (size_t f = 0; f < ELEMENTSOF(fields); f++)
                                found = found || (fields[f] && strcasestr(fields[f], term->text));
                        hit = found != term->neg;
                }
                if (hit && json_array_append(match, ch) < 0)
                        return -ENOMEM;
        }
        return slack_list_page(c, rp, match, 20, 100, slack_render_channel, "channels", NULL);
}
