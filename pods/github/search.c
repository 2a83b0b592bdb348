/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's search: code, commits, repositories and users (GET /search/...,
 * https://docs.github.com/rest/search/search), over what the viewer can see: public
 * repositories and the private ones they own or collaborate on. A query is words (all must
 * match, case-insensitively; "quoted phrases" are one word; NOT excludes the next) and
 * qualifiers: repo:o/r, user:, org:, in:, path:, filename:, extension:, language:, author:,
 * committer:, hash:, type:, fork:, is:. Answers {total_count, incomplete_results, items} with
 * Link pages, as GitHub does.
 */
#include <ctype.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

typedef struct Query {
        json_t *words;    /* array of strings, all must match */
        json_t *excluded; /* array of strings, none may match */
        json_t *quals;    /* object: qualifier → array of values */
} Query;

static void query_done(Query *q)
{
        json_decref(q->words);
        json_decref(q->excluded);
        json_decref(q->quals);
}

static const char *const known_quals[] = {
        "repo",         "user",
        "org",          "in",
        "path",         "filename",
        "extension",    "language",
        "author",       "committer",
        "author-name",  "committer-name",
        "author-email", "committer-email",
        "hash",         "type",
        "fork",         "is",
        "merge",        "sort",
};

static bool is_qual(const char *k, size_t n)
{
        for (size_t i = 0; i < ELEMENTSOF(known_quals); i++)
                if (strlen(known_quals[i]) == n && strncasecmp(known_quals[i], k, n) == 0)
                        return true;
        return false;
}

static int query_parse(const char *s, Query *q)
{
        *q = (Query){json_array(), json_array(), json_object()};
        if (!q->words || !q->excluded || !q->quals)
                return -ENOMEM;
        bool negate = false;
        while (*s) {
                while (*s == ' ' || *s == '\t' || *s == '+')
                        s++;
                if (!*s)
                        break;
                _cleanup_free_ char *tok = NULL;
                if (*s == '"') {
                        const char *e = strchr(s + 1, '"');
                        size_t l = e ? (size_t)(e - s - 1) : strlen(s + 1);
                        tok = strndup(s + 1, l);
                        s += l + 1 + (e != NULL);
                } else {
                        size_t l = strcspn(s, " \t+");
                        tok = strndup(s, l);
                        s += l;
                }
                if (!tok)
                        return -ENOMEM;
                if (streq(tok, "AND") || streq(tok, "OR"))
                        continue;
                if (streq(tok, "NOT")) {
                        negate = true;
                        continue;
                }
                const char *colon = strchr(tok, ':');
                if (colon && colon > tok && is_qual(tok, (size_t)(colon - tok))) {
                        char key[32];
                        snprintf(key, sizeof(key), "%.*s", (int)(colon - tok), tok);
                        for (char *k = key; *k; k++)
                                *k = (char)tolower((unsigned char)*k);
                        json_t *a = json_object_get(q->quals, key);
                        if (!a) {
                                a = json_array();
                                if (json_object_set_new(q->quals, key, a) < 0)
                                        return -ENOMEM;
                        }
                        /* "in:name,description" is two values */
                        for (const char *v = colon + 1; *v;) {
                                size_t l = strcspn(v, ",");
                                if (l && json_array_append_new(a, json_stringn(v, l)) < 0)
                                        return -ENOMEM;
                                v += l + (v[l] == ',');
                        }
                        continue;
                }
                if (tok[0] &&
                    json_array_append_new(negate ? q->excluded : q->words, json_string(tok)) < 0)
                        return -ENOMEM;
                negate = false;
        }
        return 0;
}

/* Does any value of qualifier key equal v (case-insensitively)? true when key is absent. */
static bool qual_any(const Query *q, const char *key, const char *v)
{
        json_t *a = json_object_get(q->quals, key);
        if (!a)
                return true;
        size_t i;
        json_t *x;
        json_array_foreach (a, i, x) {
                if (v && strcasecmp(json_string_value(x), v) == 0)
                        return true;
        }
        return false;
}

/* Do all words (and none of the excluded ones) occur in one of the texts (NULLs skipped)? */
static bool words_match(const Query *q, const char *const *texts, size_t n)
{
        json_t *lists[2] = {q->words, q->excluded};
        for (size_t k = 0; k < 2; k++) {
                size_t i;
                json_t *w;
                json_array_foreach (lists[k], i, w) {
                        bool found = false;
                        for (size_t t = 0; t < n && !found; t++)
                                found = texts[t] && strcasestr(texts[t], json_string_value(w));
                        if (found == (k == 1))
                                return false;
                }
        }
        return true;
}

/* Does in: (absent = every field in defaults) allow field? */
static bool in_allows(const Query *q, const char *field)
{
        return qual_any(q, "in", field);
}

/* The repository filter every search shares: visibility and repo:/user:/org:. */
static bool repo_visible(TwinCall *c, const Query *q, json_t *repo)
{
        const char *viewer = json_get_str(c->world, "viewer");
        if (json_is_true(json_object_get(repo, "private")) &&
            !(viewer && gh_repo_member(repo, viewer)))
                return false;
        const char *owner = json_get_str(repo, "owner");
        char full[256];
        snprintf(full, sizeof(full), "%s/%s", owner, json_get_str(repo, "name"));
        if (!qual_any(q, "repo", full))
                return false;
        if (json_object_get(q->quals, "user") || json_object_get(q->quals, "org"))
                return (json_object_get(q->quals, "user") && qual_any(q, "user", owner)) ||
                       (json_object_get(q->quals, "org") && qual_any(q, "org", owner));
        return true;
}

/* The language GitHub's linguist gives a file, by extension (the common ones). */
static const char *language_of(const char *path)
{
        static const struct {
                const char *ext, *lang;
        } map[] = {
                {"c", "C"},           {"h", "C"},
                {"cc", "C++"},        {"cpp", "C++"},
                {"go", "Go"},         {"rs", "Rust"},
                {"py", "Python"},     {"rb", "Ruby"},
                {"js", "JavaScript"}, {"mjs", "JavaScript"},
                {"ts", "TypeScript"}, {"tsx", "TypeScript"},
                {"java", "Java"},     {"kt", "Kotlin"},
                {"swift", "Swift"},   {"md", "Markdown"},
                {"json", "JSON"},     {"yml", "YAML"},
                {"yaml", "YAML"},     {"sh", "Shell"},
                {"html", "HTML"},     {"css", "CSS"},
                {"sql", "SQL"},       {"toml", "TOML"},
                {"php", "PHP"},       {"cs", "C#"},
        };
        const char *dot = strrchr(path, '.');
        if (!dot || strchr(dot, '/'))
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (strcasecmp(map[i].ext, dot + 1) == 0)
                        return map[i].lang;
        return NULL;
}

/* The query argument: MCP query, REST q. 1, 0 with the 422 in rp, negative errno. */
static int arg_query(TwinCall *c, TwinReply *rp, Query *q)
{
        const char *s;
        int r = gh_arg_str2(c, "query", "q", &s);
        if (r < 0 || !s[0])
                return twin_reply_body(rp, 422,
                                       json_pack("{s:s, s:[{s:s, s:s, s:s}], s:s, s:s}", "message",
                                                 "Validation Failed", "errors", "resource",
                                                 "Search", "field", "q", "code", "missing",
                                                 "documentation_url", GH_DOCS_URL, "status",
                                                 "422"));
        r = query_parse(s, q);
        return r < 0 ? r : 1;
}

/* Pages items (rendered by fn with the row's repository) into {total_count, ...}. */
static int reply_search(TwinCall *c, TwinReply *rp, json_t *rows, json_t *repos,
                        json_t *(*fn)(TwinCall *, json_t *, json_t *))
{
        _cleanup_json_ json_t *idx = json_array(), *page = NULL, *items = json_array();
        if (!idx || !items)
                return -ENOMEM;
        for (size_t i = 0; i < json_array_size(rows); i++)
                if (json_array_append_new(idx, json_integer((json_int_t)i)) < 0)
                        return -ENOMEM;
        int r = gh_paginate(c, rp, idx, &page);
        if (r < 0)
                return r;
        size_t i;
        json_t *x;
        json_array_foreach (page, i, x) {
                size_t k = (size_t)json_integer_value(x);
                json_t *item = gh_pick_fields(
                        c, fn(c, repos ? json_array_get(repos, k) : NULL, json_array_get(rows, k)));
                if (!item || json_object_set_new(item, "score", json_real(1.0)) < 0 ||
                    json_array_append_new(items, item) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200,
                               json_pack("{s:I, s:b, s:O}", "total_count",
                                         (json_int_t)json_array_size(rows), "incomplete_results",
                                         false, "items", items));
}

/* ------------------------------------------------------------------ code */

static json_t *render_code(TwinCall *c, json_t *repo, json_t *hit)
{
        const char *path = json_get_str(hit, "path"), *content = json_get_str(hit, "content");
        const char *at = json_get_str(hit, "at");
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        char sha[TWIN_SHA1_HEX];
        gh_blob_sha(content, strlen(content), sha);
        const char *base = strrchr(path, '/');
        _cleanup_free_ char *url = NULL, *git = NULL, *html = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/contents/%s?ref=%s", c->base_url, owner, name, path,
                     at) < 0 ||
            asprintf(&git, "%s/repos/%s/%s/git/blobs/%s", c->base_url, owner, name, sha) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/blob/%s/%s", owner, name, at, path) < 0)
                return NULL;
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "name", base ? base + 1 : path,
                         "path", path, "sha", sha, "url", url, "git_url", git, "html_url", html,
                         "repository", gh_render_repo(c, repo));
}

/* GET /search/code?q=, MCP search_code {query}: files of default branches. */
int gh_act_search_code(TwinCall *c, TwinReply *rp)
{
        _cleanup_(query_done) Query q = {};
        int r = arg_query(c, rp, &q);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *rows = json_array(), *repos = json_array();
        if (!rows || !repos)
                return -ENOMEM;
        bool in_file = in_allows(&q, "file"), in_path = in_allows(&q, "path");
        size_t i;
        json_t *repo;
        json_array_foreach (json_object_get(c->world, "repositories"), i, repo) {
                if (!repo_visible(c, &q, repo))
                        continue;
                const char *def = json_get_str(repo, "default_branch");
                const char *head = gh_ref_sha(repo, def);
                json_t *tree = head ? gh_tree_at(repo, head) : NULL;
                const char *path;
                json_t *content;
                json_object_foreach (tree, path, content) {
                        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
                        const char *dot = strrchr(base, '.');
                        json_t *pq = json_object_get(q.quals, "path");
                        if (pq) {
                                /* path:dir matches files at or below dir */
                                bool ok = false;
                                size_t k;
                                json_t *p;
                                json_array_foreach (pq, k, p) {
                                        const char *pp = json_string_value(p);
                                        while (*pp == '/')
                                                pp++;
                                        size_t pl = strlen(pp);
                                        while (pl > 0 && pp[pl - 1] == '/')
                                                pl--;
                                        ok = ok || pl == 0 ||
                                             (strncasecmp(path, pp, pl) == 0 &&
                                              (path[pl] == '/' || path[pl] == 0));
                                }
                                if (!ok)
                                        continue;
                        }
                        if (!qual_any(&q, "filename", base) ||
                            !qual_any(&q, "extension", dot ? dot + 1 : "") ||
                            !qual_any(&q, "language", language_of(path)))
                                continue;
                        const char *texts[] = {in_file ? json_string_value(content) : NULL,
                                               in_path ? path : NULL};
                        if (!words_match(&q, texts, ELEMENTSOF(texts)))
                                continue;
                        if (json_array_append_new(rows, json_pack("{s:s, s:O, s:s}", "path", path,
                                                                  "content", content, "at", head)) <
                                    0 ||
                            json_array_append(repos, repo) < 0)
                                return -ENOMEM;
                }
        }
        return reply_search(c, rp, rows, repos, render_code);
}

/* ------------------------------------------------------------------ commits */

static json_t *render_commit_hit(TwinCall *c, json_t *repo, json_t *commit)
{
        json_t *body = gh_render_commit(c, repo, commit, false);
        if (body && json_object_set_new(body, "repository", gh_render_repo(c, repo)) < 0) {
                json_decref(body);
                return NULL;
        }
        return body;
}

typedef struct CommitHit {
        json_t *commit, *repo;
        bool desc;
} CommitHit;

static int hit_cmp(const void *a, const void *b)
{
        const CommitHit *x = a, *y = b;
        int d = strcmp(strempty(json_string_value(
                               json_object_get(json_object_get(x->commit, "author"), "date"))),
                       strempty(json_string_value(
                               json_object_get(json_object_get(y->commit, "author"), "date"))));
        return x->desc ? -d : d;
}

/*
 * GET /search/commits?q=, MCP search_commits {query, sort, order}: the commits of each
 * repository's default branch, as GitHub indexes them.
 */
int gh_act_search_commits(TwinCall *c, TwinReply *rp)
{
        _cleanup_(query_done) Query q = {};
        int r = arg_query(c, rp, &q);
        if (r <= 0)
                return r;
        const char *order = "desc";
        (void)twin_arg_str(c->args, "order", &order);
        size_t cap = 16, n = 0;
        _cleanup_free_ CommitHit *hits = malloc(cap * sizeof(CommitHit));
        if (!hits)
                return -ENOMEM;
        size_t i;
        json_t *repo;
        json_array_foreach (json_object_get(c->world, "repositories"), i, repo) {
                if (!repo_visible(c, &q, repo))
                        continue;
                /* GitHub indexes the default branch only */
                const char *head = gh_ref_sha(repo, json_get_str(repo, "default_branch"));
                _cleanup_json_ json_t *hist =
                        head ? gh_commits_between(repo, NULL, head, false) : json_array();
                if (!hist)
                        return -ENOMEM;
                size_t k;
                json_t *cm;
                json_array_foreach (hist, k, cm) {
                        json_t *au = json_object_get(cm, "author");
                        const char *sha = json_get_str(cm, "sha");
                        json_t *hq = json_object_get(q.quals, "hash");
                        if (hq &&
                            !(json_array_size(hq) &&
                              strncasecmp(sha, json_string_value(json_array_get(hq, 0)),
                                          strlen(json_string_value(json_array_get(hq, 0)))) == 0))
                                continue;
                        if (!qual_any(&q, "author", json_get_str(cm, "login")) ||
                            !qual_any(&q, "committer", json_get_str(cm, "login")) ||
                            !qual_any(&q, "author-name", json_get_str(au, "name")) ||
                            !qual_any(&q, "author-email", json_get_str(au, "email")))
                                continue;
                        bool merge = json_array_size(json_object_get(cm, "parents")) > 1;
                        if (json_object_get(q.quals, "merge") &&
                            !qual_any(&q, "merge", merge ? "true" : "false"))
                                continue;
                        const char *texts[] = {json_get_str(cm, "message")};
                        if (!words_match(&q, texts, 1))
                                continue;
                        if (n == cap) {
                                CommitHit *w = realloc(hits, (cap *= 2) * sizeof(CommitHit));
                                if (!w)
                                        return -ENOMEM;
                                hits = w;
                        }
                        hits[n++] = (CommitHit){cm, repo, !streq(order, "asc")};
                }
        }
        /* newest first by default (GitHub's best match ties break on recency) */
        qsort(hits, n, sizeof(CommitHit), hit_cmp);
        _cleanup_json_ json_t *rows = json_array(), *repos = json_array();
        if (!rows || !repos)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(rows, hits[i].commit) < 0 ||
                    json_array_append(repos, hits[i].repo) < 0)
                        return -ENOMEM;
        return reply_search(c, rp, rows, repos, render_commit_hit);
}

/* ------------------------------------------------------------------ repositories */

static json_t *render_repo_hit(TwinCall *c, json_t *unused, json_t *repo)
{
        (void)unused;
        json_t *full = gh_render_repo_full(c, repo);
        bool minimal = c->request == NULL;
        (void)twin_arg_bool(c->args, "minimal_output", &minimal);
        if (!full || !minimal)
                return full;
        /* github-mcp-server's minimal_output: the fields an agent picks a repository by */
        static const char *const keep[] = {
                "id",
                "name",
                "full_name",
                "description",
                "html_url",
                "language",
                "stargazers_count",
                "forks_count",
                "open_issues_count",
                "updated_at",
                "created_at",
                "topics",
                "private",
                "fork",
                "archived",
                "default_branch",
        };
        json_t *out = json_object();
        for (size_t i = 0; out && i < ELEMENTSOF(keep); i++) {
                json_t *v = json_object_get(full, keep[i]);
                if (v && json_object_set(out, keep[i], v) < 0) {
                        json_decref(out);
                        out = NULL;
                }
        }
        json_decref(full);
        return out;
}

/* GET /search/repositories?q=, MCP search_repositories {query, sort, order, minimal_output}. */
int gh_act_search_repositories(TwinCall *c, TwinReply *rp)
{
        _cleanup_(query_done) Query q = {};
        int r = arg_query(c, rp, &q);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *rows = json_array();
        if (!rows)
                return -ENOMEM;
        size_t i;
        json_t *repo;
        json_array_foreach (json_object_get(c->world, "repositories"), i, repo) {
                if (!repo_visible(c, &q, repo))
                        continue;
                bool fork = json_get_str(repo, "parent") != NULL;
                json_t *fq = json_object_get(q.quals, "fork");
                if (fork && !(fq && (qual_any(&q, "fork", "true") || qual_any(&q, "fork", "only"))))
                        continue;
                if (!fork && fq && qual_any(&q, "fork", "only"))
                        continue;
                bool priv = json_is_true(json_object_get(repo, "private"));
                if (json_object_get(q.quals, "is") &&
                    !qual_any(&q, "is", priv ? "private" : "public"))
                        continue;
                if (json_object_get(q.quals, "language")) {
                        /* the language of any file of the default branch */
                        bool ok = false;
                        const char *p;
                        json_t *v;
                        json_object_foreach (gh_tree_at(repo, json_get_str(repo, "default_branch")),
                                             p, v) {
                                ok = ok ||
                                     (language_of(p) && qual_any(&q, "language", language_of(p)));
                        }
                        if (!ok)
                                continue;
                }
                const char *texts[] = {
                        in_allows(&q, "name") ? json_get_str(repo, "name") : NULL,
                        in_allows(&q, "description") ? json_get_str(repo, "description") : NULL};
                if (!words_match(&q, texts, ELEMENTSOF(texts)))
                        continue;
                if (json_array_append(rows, repo) < 0)
                        return -ENOMEM;
        }
        return reply_search(c, rp, rows, NULL, render_repo_hit);
}

/* ------------------------------------------------------------------ users */

static json_t *render_user_hit(TwinCall *c, json_t *unused, json_t *u)
{
        (void)unused;
        return gh_render_user(c, json_get_str(u, "login"));
}

/* GET /search/users?q=, MCP search_users {query} (the MCP tool scopes to type:user). */
int gh_act_search_users(TwinCall *c, TwinReply *rp)
{
        _cleanup_(query_done) Query q = {};
        int r = arg_query(c, rp, &q);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *rows = json_array();
        if (!rows)
                return -ENOMEM;
        size_t i;
        json_t *u;
        json_array_foreach (json_object_get(c->world, "users"), i, u) {
                const char *type = json_get_str(u, "type");
                const char *t = streq_ptr(type, "Organization") ? "org" : "user";
                if (!qual_any(&q, "type", t) ||
                    (c->request == NULL && streq(t, "org") && !json_object_get(q.quals, "type")))
                        continue;
                const char *texts[] = {in_allows(&q, "login") ? json_get_str(u, "login") : NULL,
                                       in_allows(&q, "name") ? json_get_str(u, "name") : NULL,
                                       in_allows(&q, "email") ? json_get_str(u, "email") : NULL};
                if (!words_match(&q, texts, ELEMENTSOF(texts)))
                        continue;
                if (json_array_append(rows, u) < 0)
                        return -ENOMEM;
        }
        return reply_search(c, rp, rows, NULL, render_user_hit);
}
