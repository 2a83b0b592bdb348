/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's search: code, commits, repositories, users and issues (GET /search/...,
 * https://docs.github.com/rest/search/search), over what the viewer can see: public
 * repositories and the private ones they own or collaborate on. A query is words (all must
 * match, case-insensitively; "quoted phrases" are one word; NOT excludes the next) and
 * qualifiers: repo:o/r, user:, org:, in:, path:, filename:, extension:, language:, author:,
 * committer:, hash:, type:, fork:, is:, and for issues state:, label:, no:, assignee:,
 * mentions:, milestone:, involves:, commenter: ("-label:x" negates a qualifier). Answers
 * {total_count, incomplete_results, items} with Link pages, as GitHub does.
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
        "label",        "state",
        "no",           "assignee",
        "mentions",     "milestone",
        "involves",     "commenter",
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
                        /* label:"good first issue": a quoted value is part of its token */
                        size_t l = 0;
                        while (s[l] && !strchr(" \t+", s[l])) {
                                const char *e = s[l] == '"' ? strchr(s + l + 1, '"') : NULL;
                                l = e ? (size_t)(e - s) + 1 : l + 1;
                        }
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
                /* "-label:bug" is a qualifier that must not hold, kept as "-label" */
                const char *name = tok[0] == '-' ? tok + 1 : tok;
                if (colon && colon > name && is_qual(name, (size_t)(colon - name))) {
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
                        /* "in:name,description" is two values; "x, y" quoted is one */
                        const char *v = colon + 1;
                        size_t vl = strlen(v);
                        /* label:a,"b c" is one value meaning either label (has_label) */
                        if (streq(key, "label") || streq(key, "-label")) {
                                if (json_array_append_new(a, json_string(v)) < 0)
                                        return -ENOMEM;
                                continue;
                        }
                        if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
                                if (json_array_append_new(a, json_stringn(v + 1, vl - 2)) < 0)
                                        return -ENOMEM;
                                continue;
                        }
                        while (*v) {
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

/* Can the viewer search what a repo:, user: or org: value names? */
static bool scope_resolves(TwinCall *c, const char *key, const char *v)
{
        if (!streq(key, "repo")) {
                json_t *u = gh_user_find(c->world, v);
                return u &&
                       (streq(key, "user") || streq_ptr(json_get_str(u, "type"), "Organization"));
        }
        const char *slash = strchr(v, '/');
        if (!slash || slash == v)
                return false;
        _cleanup_free_ char *owner = strndup(v, (size_t)(slash - v));
        if (!owner)
                return false;
        json_t *repo = gh_repo_find(c->world, owner, slash + 1);
        const char *viewer = json_get_str(c->world, "viewer");
        return repo && (!json_is_true(json_object_get(repo, "private")) ||
                        (viewer && gh_repo_member(repo, viewer)));
}

/*
 * github.com refuses a query whose repo:, user: and org: qualifiers name nothing the viewer
 * can see (a typo'd repository is the usual cause) with 422 rather than answering no items.
 * 1 when the query may run, 0 with the 422 in rp, negative errno.
 */
static int check_scope(TwinCall *c, TwinReply *rp, const Query *q)
{
        static const char *const keys[] = {"repo", "user", "org"};
        bool named = false;
        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                size_t i;
                json_t *v;
                json_array_foreach (json_object_get(q->quals, keys[k]), i, v) {
                        named = true;
                        if (scope_resolves(c, keys[k], json_string_value(v)))
                                return 1;
                }
        }
        if (!named)
                return 1;
        return twin_reply_body(
                rp, 422,
                json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}], s:s, s:s}", "message",
                          "Validation Failed", "errors", "message",
                          "The listed users and repositories cannot be searched either because "
                          "the resources do not exist or you do not have permission to view "
                          "them.",
                          "resource", "Search", "field", "q", "code", "invalid",
                          "documentation_url", GH_DOCS_URL, "status", "422"));
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

/* arg_query, then check_scope: the query of a search over repositories' contents. */
static int arg_scoped_query(TwinCall *c, TwinReply *rp, Query *q)
{
        int r = arg_query(c, rp, q);
        return r <= 0 ? r : check_scope(c, rp, q);
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
        int r = arg_scoped_query(c, rp, &q);
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
        int r = arg_scoped_query(c, rp, &q);
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
        int r = arg_scoped_query(c, rp, &q);
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

/* ------------------------------------------------------------------ issues */

static json_t *render_issue_hit(TwinCall *c, json_t *repo, json_t *row)
{
        return gh_render_issue(c, repo, row);
}

/* Does some value of qualifier key hold for row, by pred? true when key is absent. */
static bool qual_holds(const Query *q, const char *key, json_t *repo, json_t *row,
                       bool (*pred)(json_t *repo, json_t *row, const char *v))
{
        json_t *a = json_object_get(q->quals, key);
        size_t i;
        json_t *x;
        json_array_foreach (a, i, x) {
                /* several values (label:a label:b) must all hold */
                if (!pred(repo, row, json_string_value(x)))
                        return false;
        }
        return true;
}

/* label:a,b is either label (GitHub's "Searching issues": a comma is OR; label:a label:b
 * is AND, see qual_holds); each value may be quoted ("good first issue"). */
static bool has_label(json_t *repo, json_t *row, const char *v)
{
        (void)repo;
        json_t *labels = json_object_get(row, "labels");
        for (const char *s = v;;) {
                const char *e = strchrnul(s, ',');
                size_t n = (size_t)(e - s);
                if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
                        s++;
                        n -= 2;
                }
                size_t i;
                json_t *l;
                json_array_foreach (labels, i, l) {
                        const char *name = json_string_value(l);
                        if (name && strlen(name) == n && strncasecmp(name, s, n) == 0)
                                return true;
                }
                if (!*e)
                        return false;
                s = e + 1;
        }
}

static bool lacks_label(json_t *repo, json_t *row, const char *v)
{
        return !has_label(repo, row, v);
}

static bool is_author(json_t *repo, json_t *row, const char *v)
{
        (void)repo;
        return strcasecmp(strempty(json_get_str(row, "user")), v) == 0;
}

static bool is_assignee(json_t *repo, json_t *row, const char *v)
{
        (void)repo;
        return gh_strv_has(json_object_get(row, "assignees"), v);
}

static bool is_mentioned(json_t *repo, json_t *row, const char *v)
{
        (void)repo;
        return gh_mentions(row, v);
}

static bool is_commenter(json_t *repo, json_t *row, const char *v)
{
        (void)repo;
        size_t i;
        json_t *cm;
        json_array_foreach (json_object_get(row, "comments"), i, cm) {
                if (strcasecmp(strempty(json_get_str(cm, "user")), v) == 0)
                        return true;
        }
        return false;
}

static bool is_involved(json_t *repo, json_t *row, const char *v)
{
        return is_author(repo, row, v) || is_assignee(repo, row, v) || is_mentioned(repo, row, v) ||
               is_commenter(repo, row, v);
}

static bool on_milestone(json_t *repo, json_t *row, const char *v)
{
        json_t *ms = json_object_get(row, "milestone");
        json_t *m = json_is_integer(ms)
                            ? gh_number_find(repo, "milestones", json_integer_value(ms), NULL)
                            : NULL;
        return m && strcasecmp(strempty(json_get_str(m, "title")), v) == 0;
}

static bool is_state(json_t *repo, json_t *row, const char *v)
{
        bool pull = gh_is_pull(row), merged = json_is_true(json_object_get(row, "merged"));
        const char *state = json_get_str(row, "state");
        if (strcasecmp(v, "issue") == 0)
                return !pull;
        if (strcasecmp(v, "pr") == 0 || strcasecmp(v, "pull-request") == 0)
                return pull;
        if (strcasecmp(v, "open") == 0 || strcasecmp(v, "closed") == 0)
                return strcasecmp(strempty(state), v) == 0;
        if (strcasecmp(v, "merged") == 0)
                return pull && merged;
        if (strcasecmp(v, "unmerged") == 0)
                return pull && !merged && streq_ptr(state, "closed");
        if (strcasecmp(v, "locked") == 0 || strcasecmp(v, "unlocked") == 0)
                return json_is_true(json_object_get(row, "locked")) == (v[0] == 'l' || v[0] == 'L');
        if (strcasecmp(v, "public") == 0 || strcasecmp(v, "private") == 0)
                return json_is_true(json_object_get(repo, "private")) ==
                       (strcasecmp(v, "private") == 0);
        if (strcasecmp(v, "draft") == 0)
                return pull && json_is_true(json_object_get(row, "draft"));
        return false;
}

static bool is_type(json_t *repo, json_t *row, const char *v)
{
        return is_state(repo, row, v);
}

static bool has_none(json_t *repo, json_t *row, const char *v)
{
        (void)repo;
        if (strcasecmp(v, "label") == 0)
                return json_array_size(json_object_get(row, "labels")) == 0;
        if (strcasecmp(v, "assignee") == 0)
                return json_array_size(json_object_get(row, "assignees")) == 0;
        if (strcasecmp(v, "milestone") == 0)
                return !json_is_integer(json_object_get(row, "milestone"));
        return true;
}

typedef struct IssueHit {
        json_t *row, *repo;
        const char *key; /* created_at, updated_at, NULL: comment count */
        bool desc;
} IssueHit;

static int issue_hit_cmp(const void *a, const void *b)
{
        const IssueHit *x = a, *y = b;
        int d;
        if (x->key)
                d = strcmp(strempty(json_get_str(x->row, x->key)),
                           strempty(json_get_str(y->row, x->key)));
        else {
                size_t cx = json_array_size(json_object_get(x->row, "comments")),
                       cy = json_array_size(json_object_get(y->row, "comments"));
                d = (cx > cy) - (cx < cy);
        }
        if (d == 0) {
                json_int_t ix = json_integer_value(json_object_get(x->row, "id")),
                           iy = json_integer_value(json_object_get(y->row, "id"));
                d = (ix > iy) - (ix < iy);
        }
        return x->desc ? -d : d;
}

/* Does query (a string) already say is:issue/is:pr (or type:)? */
static bool query_has_kind(const char *s)
{
        static const char *const kinds[] = {"is:issue", "is:pr", "is:pull-request", "type:issue",
                                            "type:pr"};
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (strcasestr(s, kinds[i]))
                        return true;
        return false;
}

/*
 * GET /search/issues?q= (https://docs.github.com/rest/search/search#search-issues-and-pull-
 * requests): issues and pull requests of the repositories the viewer can see, by the
 * qualifiers the header lists and words in title, body and comments (in:); sort comments,
 * created or updated (default: newest first), order. MCP search_issues {query, owner, repo,
 * sort, order, page, perPage}: as the official server, the query is scoped to is:issue
 * unless it names a kind, and to repo:owner/repo when both are given; items carry no score.
 */
int gh_act_search_issues(TwinCall *c, TwinReply *rp)
{
        _cleanup_(query_done) Query q = {};
        int r;
        if (!c->request) {
                const char *s = NULL, *owner = NULL, *name = NULL;
                r = twin_arg_str(c->args, "query", &s);
                if (r < 0 || !s[0])
                        return twin_reply_body(rp, 422,
                                               json_pack("{s:s, s:s, s:s}", "message",
                                                         "missing required parameter: query",
                                                         "documentation_url", GH_DOCS_URL, "status",
                                                         "422"));
                (void)twin_arg_str(c->args, "owner", &owner);
                (void)twin_arg_str(c->args, "repo", &name);
                _cleanup_free_ char *full = NULL;
                if (asprintf(&full, "%s%s%s%s%s %s", query_has_kind(s) ? "" : "is:issue ",
                             owner && name && !strcasestr(s, "repo:") ? "repo:" : "",
                             owner && name && !strcasestr(s, "repo:") ? owner : "",
                             owner && name && !strcasestr(s, "repo:") ? "/" : "",
                             owner && name && !strcasestr(s, "repo:") ? name : "", s) < 0)
                        return -ENOMEM;
                if ((r = query_parse(full, &q)) < 0)
                        return r;
                if ((r = check_scope(c, rp, &q)) <= 0)
                        return r;
        } else if ((r = arg_scoped_query(c, rp, &q)) <= 0)
                return r;

        const char *sort = NULL, *order = "desc";
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            twin_arg_str(c->args, "order", &order) == -EINVAL ||
            (!streq(order, "asc") && !streq(order, "desc")))
                return gh_invalid(rp, "Search", "order", "invalid");
        const char *key = !sort                     ? "created_at"
                          : streq(sort, "updated")  ? "updated_at"
                          : streq(sort, "created")  ? "created_at"
                          : streq(sort, "comments") ? NULL
                                                    : "created_at";
        bool in_title = in_allows(&q, "title"), in_body = in_allows(&q, "body"),
             in_comments = in_allows(&q, "comments");

        size_t cap = 16, n = 0;
        _cleanup_free_ IssueHit *hits = malloc(cap * sizeof(IssueHit));
        if (!hits)
                return -ENOMEM;
        const char *lists[] = {"issues", "pull_requests"};
        size_t i;
        json_t *repo;
        json_array_foreach (json_object_get(c->world, "repositories"), i, repo) {
                if (!repo_visible(c, &q, repo))
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                        size_t j;
                        json_t *row;
                        json_array_foreach (json_object_get(repo, lists[k]), j, row) {
                                if (!qual_holds(&q, "is", repo, row, is_state) ||
                                    !qual_holds(&q, "type", repo, row, is_type) ||
                                    !qual_holds(&q, "state", repo, row, is_state) ||
                                    !qual_holds(&q, "label", repo, row, has_label) ||
                                    !qual_holds(&q, "-label", repo, row, lacks_label) ||
                                    !qual_holds(&q, "no", repo, row, has_none) ||
                                    !qual_holds(&q, "author", repo, row, is_author) ||
                                    !qual_holds(&q, "assignee", repo, row, is_assignee) ||
                                    !qual_holds(&q, "mentions", repo, row, is_mentioned) ||
                                    !qual_holds(&q, "commenter", repo, row, is_commenter) ||
                                    !qual_holds(&q, "involves", repo, row, is_involved) ||
                                    !qual_holds(&q, "milestone", repo, row, on_milestone))
                                        continue;
                                json_t *comments = json_object_get(row, "comments");
                                size_t nt = 2 + json_array_size(comments);
                                _cleanup_free_ const char **texts = calloc(nt, sizeof(char *));
                                if (!texts)
                                        return -ENOMEM;
                                texts[0] = in_title ? json_get_str(row, "title") : NULL;
                                texts[1] = in_body ? json_get_str(row, "body") : NULL;
                                for (size_t t = 2; in_comments && t < nt; t++)
                                        texts[t] = json_get_str(json_array_get(comments, t - 2),
                                                                "body");
                                if (!words_match(&q, texts, nt))
                                        continue;
                                if (n == cap) {
                                        IssueHit *w = realloc(hits, (cap *= 2) * sizeof(*w));
                                        if (!w)
                                                return -ENOMEM;
                                        hits = w;
                                }
                                hits[n++] = (IssueHit){row, repo, key, !streq(order, "asc")};
                        }
                }
        }
        qsort(hits, n, sizeof(IssueHit), issue_hit_cmp);
        _cleanup_json_ json_t *rows = json_array(), *repos = json_array();
        if (!rows || !repos)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(rows, hits[i].row) < 0 ||
                    json_array_append(repos, hits[i].repo) < 0)
                        return -ENOMEM;
        if ((r = reply_search(c, rp, rows, repos, render_issue_hit)) < 0 || c->request)
                return r;
        /* the official server marshals go-github's Issue, which has no score */
        json_array_foreach (json_object_get(rp->body, "items"), i, repo) {
                json_object_del(repo, "score");
        }
        return 0;
}
