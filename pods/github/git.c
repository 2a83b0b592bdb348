/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's git data model: branches, commits, trees and tags of a repository, and
 * the seed loader for a repository's files[] (with their branch), branches, tags, releases
 * and default_branch.
 *
 * World layout (per repository; pods/github/github.c has the rest):
 *   branches[]  {name, sha, protected, protection?}   sha = the branch's head commit;
 *               protection {enforce_admins, required_status_checks {strict, contexts} | null,
 *               required_pull_request_reviews {required_approving_review_count} | null}
 *   commits[]   {sha, tree_sha, parents[sha], message, author{name, email, date},
 *                committer{name, email, date}, login, tree{"path": "content"}}
 *               in creation order; every commit keeps a full snapshot of its (text) files,
 *               the content strings shared between snapshots (never modified in place)
 *   tags[]      {name, sha, message, tag_sha, tagger{name, email, date}}  sha = the commit
 *   releases[]  {id, node_id, tag_name, name, body, draft, prerelease, created_at,
 *                published_at, author, target_commitish}
 *   objects     {sha: {type: blob, content} | {type: tree, tree}}  Git Database API objects
 *               not yet in a commit (gitdata.c); absent until one is made
 *   invitations[] {id, node_id, invitee, inviter, permissions, created_at}  (repos.c)
 *   parent      "owner/name" of a fork's source; archived  true once archived (repos.c)
 * Object ids are git's own (https://git-scm.com/book/en/v2/Git-Internals-Git-Objects): a blob
 * is sha1("blob <len>\0<content>"), a tree is hashed from its sorted entries with the same
 * encoding git uses, and a commit from its tree, parents, author, committer and message, so
 * the same files give the same shas as `git hash-object` would.
 */
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "pods/github/github.h"

/* ------------------------------------------------------------------ object ids */

/* sha1("<type> <len>\0<data>"): the id of a git object (Git Internals, "Object Storage"). */
static void object_sha(const char *type, const void *data, size_t len, char out[TWIN_SHA1_HEX])
{
        char head[64];
        int n = snprintf(head, sizeof(head), "%s %zu", type, len);
        TwinSha1 s;
        uint8_t d[TWIN_SHA1_SIZE];
        twin_sha1_init(&s);
        twin_sha1_update(&s, head, (size_t)n + 1); /* with its NUL */
        twin_sha1_update(&s, data, len);
        twin_sha1_final(&s, d);
        twin_sha1_to_hex(d, out);
}

/* The git blob id of len bytes of content (what `git hash-object` prints). */
void gh_blob_sha(const char *content, size_t len, char out[TWIN_SHA1_HEX])
{
        object_sha("blob", content, len, out);
}

static int hex_to_raw(const char *hex, uint8_t out[TWIN_SHA1_SIZE])
{
        for (size_t i = 0; i < TWIN_SHA1_SIZE; i++) {
                unsigned v;
                if (sscanf(hex + 2 * i, "%2x", &v) != 1)
                        return -EINVAL;
                out[i] = (uint8_t)v;
        }
        return 0;
}

static int path_cmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The tree of paths[lo, hi) below prefix (prefix_len bytes, "" or "dir/"): sorted full paths
 * sort like git's tree entries do (a directory compares as "name/"), so each level is a run
 * of files and of subdirectories, each subdirectory a contiguous range.
 */
static int tree_level(json_t *tree, const char **paths, size_t lo, size_t hi, size_t prefix_len,
                      json_t *dirs, char out[TWIN_SHA1_HEX])
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        int r = 0;
        for (size_t i = lo; i < hi && r >= 0;) {
                const char *name = paths[i] + prefix_len;
                const char *slash = strchr(name, '/');
                char sha[TWIN_SHA1_HEX];
                uint8_t raw[TWIN_SHA1_SIZE];
                size_t next = i + 1;
                if (slash) {
                        size_t nl = (size_t)(slash - name) + 1; /* "dir/" */
                        while (next < hi && strncmp(paths[next] + prefix_len, name, nl) == 0)
                                next++;
                        r = tree_level(tree, paths, i, next, prefix_len + nl, dirs, sha);
                        fprintf(f, "40000 %.*s", (int)(nl - 1), name);
                        if (r >= 0 && dirs) {
                                /* the directory's path is this path up to its slash */
                                _cleanup_free_ char *d = strndup(paths[i], prefix_len + nl - 1);
                                if (!d || json_object_set_new(dirs, d, json_string(sha)) < 0)
                                        r = -ENOMEM;
                        }
                } else {
                        json_t *content = json_object_get(tree, paths[i]);
                        gh_blob_sha(json_string_value(content), json_string_length(content), sha);
                        fprintf(f, "100644 %s", name);
                }
                fputc(0, f);
                if (r >= 0 && (r = hex_to_raw(sha, raw)) >= 0)
                        fwrite(raw, 1, sizeof(raw), f);
                i = next;
        }
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;
        if (r < 0)
                return r;
        object_sha("tree", buf, len, out);
        return 0;
}

/*
 * The git tree id of tree ({"path": "content"}, borrowed; paths relative, '/'-separated, no
 * empty segments) into out. Returns 0 or -ENOMEM.
 */
int gh_tree_sha(const json_t *tree, char out[TWIN_SHA1_HEX])
{
        return gh_tree_shas(tree, NULL, out);
}

/*
 * gh_tree_sha that also records, when dirs is not NULL, every directory of tree as dir path
 * → its tree sha (one pass over the tree, however many directories it has). 0 or -ENOMEM.
 */
int gh_tree_shas(const json_t *tree, json_t *dirs, char out[TWIN_SHA1_HEX])
{
        size_t n = json_object_size(tree), i = 0;
        _cleanup_free_ const char **paths = calloc(n + 1, sizeof(char *));
        if (!paths)
                return -ENOMEM;
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)tree, k, v)
                paths[i++] = k;
        qsort(paths, n, sizeof(char *), path_cmp);
        return tree_level((json_t *)tree, paths, 0, n, 0, dirs, out);
}

/* ------------------------------------------------------------------ lookups */

/* The branch row called name (exact, as git refs are case-sensitive), borrowed, or NULL. */
json_t *gh_branch_find(json_t *repo, const char *name)
{
        size_t i;
        json_t *b;
        json_array_foreach (json_object_get(repo, "branches"), i, b) {
                if (streq_ptr(json_get_str(b, "name"), name))
                        return b;
        }
        return NULL;
}

/* The tag row called name, borrowed, or NULL. */
json_t *gh_tag_find(json_t *repo, const char *name)
{
        size_t i;
        json_t *t;
        json_array_foreach (json_object_get(repo, "tags"), i, t) {
                if (streq_ptr(json_get_str(t, "name"), name))
                        return t;
        }
        return NULL;
}

static bool is_hex(const char *s, size_t min, size_t max)
{
        size_t n = strlen(s);
        return n >= min && n <= max && strspn(s, "0123456789abcdefABCDEF") == n;
}

/*
 * The commit row whose sha is sha (40 hex digits) or starts with it (an abbreviation of at
 * least 4 digits that only one commit has, as git resolves them), borrowed, or NULL.
 */
json_t *gh_commit_find(json_t *repo, const char *sha)
{
        if (!sha || !is_hex(sha, 4, 40))
                return NULL;
        size_t n = strlen(sha), i;
        json_t *c, *found = NULL;
        json_array_foreach (json_object_get(repo, "commits"), i, c) {
                const char *s = json_get_str(c, "sha");
                if (s && strncasecmp(s, sha, n) == 0) {
                        if (n == 40)
                                return c;
                        if (found && !streq(json_get_str(found, "sha"), s))
                                return NULL; /* ambiguous */
                        found = c;
                }
        }
        return found;
}

/*
 * The commit sha ref names in repo (borrowed from the world), or NULL: a branch name, a tag
 * name, "heads/<b>", "tags/<t>", "refs/heads/<b>", "refs/tags/<t>", "refs/pull/<n>/head", or a
 * full or abbreviated commit sha — the spellings GitHub's `ref`/`sha` parameters accept. Branches
 * win over tags, tags over shas, as in git's rev-parse order for a bare name.
 */
const char *gh_ref_sha(json_t *repo, const char *ref)
{
        if (!ref || !ref[0])
                return NULL;
        const char *r = startswith(ref, "refs/") ? ref + 5 : ref, *rest;
        json_t *row;
        if ((rest = startswith(r, "heads/")) && (row = gh_branch_find(repo, rest)))
                return json_get_str(row, "sha");
        if ((rest = startswith(r, "tags/")) && (row = gh_tag_find(repo, rest)))
                return json_get_str(row, "sha");
        if ((row = gh_branch_find(repo, r)) || (row = gh_tag_find(repo, r)))
                return json_get_str(row, "sha");
        if ((rest = startswith(r, "pull/"))) {
                /* refs/pull/<n>/head: the pull request's head commit */
                char *end;
                long long n = strtoll(rest, &end, 10);
                json_t *pr = n > 0 && streq(end, "/head")
                                     ? gh_number_find(repo, "pull_requests", n, NULL)
                                     : NULL;
                if (pr && json_get_str(pr, "head_sha"))
                        return json_get_str(pr, "head_sha");
                row = pr ? gh_branch_find(repo, json_get_str(pr, "head")) : NULL;
                return row ? json_get_str(row, "sha") : NULL;
        }
        row = gh_commit_find(repo, r);
        return row ? json_get_str(row, "sha") : NULL;
}

/* The file tree {"path": "content"} of the commit ref names (see gh_ref_sha), borrowed, or NULL. */
json_t *gh_tree_at(json_t *repo, const char *ref)
{
        const char *sha = gh_ref_sha(repo, ref);
        return sha ? json_object_get(gh_commit_find(repo, sha), "tree") : NULL;
}

/* ------------------------------------------------------------------ path conflicts */

/* Is the directory dir (len bytes of a path) a file of tree? */
static bool file_at(const json_t *tree, const char *dir, size_t len)
{
        char buf[1024];
        if (len >= sizeof(buf))
                return false; /* longer than any path a world holds (PATH_MAX of git: 4096) */
        memcpy(buf, dir, len);
        buf[len] = 0;
        return json_object_get(tree, buf) != NULL;
}

/*
 * Would adding path to tree (borrowed {"path": content}) put a file where a directory is,
 * or below a file? dirs (borrowed, may be NULL: computed) holds tree's directories, as
 * gh_tree_dirs makes them. Linear in the length of path, so checking every file of a big
 * tree stays linear.
 */
bool gh_path_conflicts(const json_t *tree, const json_t *dirs, const char *path)
{
        _cleanup_json_ json_t *own = dirs ? NULL : gh_tree_dirs(tree);
        if (json_object_get(dirs ? dirs : own, path))
                return true;
        for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/'))
                if (file_at(tree, path, (size_t)(s - path)))
                        return true;
        return false;
}

/* The directories of tree, as an object dir → true (new reference; NULL on OOM). */
json_t *gh_tree_dirs(const json_t *tree)
{
        json_t *dirs = json_object();
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)tree, k, v) {
                for (const char *s = strchr(k, '/'); dirs && s; s = strchr(s + 1, '/')) {
                        char buf[1024];
                        size_t len = (size_t)(s - k);
                        if (len >= sizeof(buf))
                                break;
                        memcpy(buf, k, len);
                        buf[len] = 0;
                        if (json_object_set(dirs, buf, json_true()) < 0) {
                                json_decref(dirs);
                                dirs = NULL;
                        }
                }
        }
        return dirs;
}

/* The first path of tree that sits below another of its files (borrowed), or NULL. */
const char *gh_tree_conflict(const json_t *tree)
{
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)tree, k, v) {
                for (const char *s = strchr(k, '/'); s; s = strchr(s + 1, '/'))
                        if (file_at(tree, k, (size_t)(s - k)))
                                return k;
        }
        return NULL;
}

/* ------------------------------------------------------------------ new commits */

/* git's identity of login: its name (else the login) and GitHub's noreply address. */
static json_t *identity(json_t *w, const char *login, const char *date)
{
        json_t *u = login ? gh_user_find(w, login) : NULL;
        const char *name = u ? json_get_str(u, "name") : NULL;
        _cleanup_free_ char *email = NULL;
        if (asprintf(&email, "%lld+%s@users.noreply.github.com",
                     (long long)json_integer_value(json_object_get(u, "id")),
                     login ? login : "ghost") < 0)
                return NULL;
        return json_pack("{s:s, s:s, s:s}", "name",
                         name    ? name
                         : login ? login
                                 : "ghost",
                         "email", email, "date", date);
}

/*
 * Appends a commit to repo: tree (borrowed; its file contents are shared, never copied: a
 * world's strings are immutable, so a thousand commits of one big file hold it once) with
 * parent1 and parent2 (each NULL
 * or a full sha; a merge has both), message, authored and committed by login (may be NULL)
 * at when (seconds since the epoch). Returns the new row (borrowed from the world), or NULL
 * on OOM. Branches are not moved: the caller points one at the row's sha.
 */
json_t *gh_commit_add(json_t *w, json_t *repo, const char *parent1, const char *parent2,
                      const json_t *tree, const char *message, const char *login, int64_t when)
{
        return gh_commit_add_as(w, repo, parent1, parent2, tree, message, login, NULL, NULL, when);
}

/* A git identity line's person: the override's name and email, else base's; its date. */
static json_t *person(const json_t *base, const json_t *over, const char *date, int64_t *when)
{
        const char *d = json_get_str(over, "date");
        struct tm tm = {};
        if (d && gh_time_valid(d) && strptime(d, "%Y-%m-%dT%H:%M:%SZ", &tm))
                *when = (int64_t)timegm(&tm);
        else
                d = date;
        const char *name = json_get_str(over, "name"), *email = json_get_str(over, "email");
        return json_pack("{s:s, s:s, s:s}", "name", name ? name : json_get_str(base, "name"),
                         "email", email ? email : json_get_str(base, "email"), "date", d);
}

/*
 * gh_commit_add with the author and committer given ({name, email, date?}, borrowed, each
 * may be NULL: login's identity at when), as the REST API's author/committer parameters.
 */
json_t *gh_commit_add_as(json_t *w, json_t *repo, const char *parent1, const char *parent2,
                         const json_t *tree, const char *message, const char *login,
                         const json_t *author_as, const json_t *committer_as, int64_t when)
{
        char date[32], tree_sha[TWIN_SHA1_HEX], sha[TWIN_SHA1_HEX];
        twin_format_time(when, date, sizeof(date));
        _cleanup_json_ json_t *copy = tree ? json_copy((json_t *)tree) : json_object();
        if (!copy)
                return NULL;
        /* paths in order, so a snapshot reads (and diffs) the same however it was built */
        size_t n = json_object_size(copy), i = 0;
        _cleanup_free_ const char **paths = calloc(n + 1, sizeof(char *));
        _cleanup_json_ json_t *sorted = json_object();
        const char *k;
        json_t *v;
        if (!paths || !sorted)
                return NULL;
        json_object_foreach (copy, k, v)
                paths[i++] = k;
        qsort(paths, n, sizeof(char *), path_cmp);
        for (i = 0; i < n; i++)
                if (json_object_set(sorted, paths[i], json_object_get(copy, paths[i])) < 0)
                        return NULL;
        if (gh_tree_sha(sorted, tree_sha) < 0)
                return NULL;

        _cleanup_json_ json_t *me = identity(w, login, date), *parents = json_array();
        int64_t awhen = when, cwhen = when;
        _cleanup_json_ json_t *author = me ? person(me, author_as, date, &awhen) : NULL,
                              *committer = me ? person(me, committer_as, date, &cwhen) : NULL;
        if (!author || !committer || !parents)
                return NULL;
        const char *ps[] = {parent1, parent2};
        for (i = 0; i < ELEMENTSOF(ps); i++)
                if (ps[i] && json_array_append_new(parents, json_string(ps[i])) < 0)
                        return NULL;

        _cleanup_free_ char *obj = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&obj, &len);
        if (!f)
                return NULL;
        fprintf(f, "tree %s\n", tree_sha);
        for (i = 0; i < ELEMENTSOF(ps); i++)
                if (ps[i])
                        fprintf(f, "parent %s\n", ps[i]);
        fprintf(f, "author %s <%s> %lld +0000\n", json_get_str(author, "name"),
                json_get_str(author, "email"), (long long)awhen);
        fprintf(f, "committer %s <%s> %lld +0000\n", json_get_str(committer, "name"),
                json_get_str(committer, "email"), (long long)cwhen);
        fprintf(f, "\n%s", strempty(message));
        if (fclose(f) != 0 || !obj)
                return NULL;
        object_sha("commit", obj, len, sha);

        json_t *row =
                json_pack("{s:s, s:s, s:O, s:s, s:O, s:O, s:s?, s:O}", "sha", sha, "tree_sha",
                          tree_sha, "parents", parents, "message", strempty(message), "author",
                          author, "committer", committer, "login", login, "tree", sorted);
        if (!row || json_array_append_new(json_object_get(repo, "commits"), row) < 0)
                return NULL;
        return row;
}

/* gh_commit_add for an action: the call's world and clock. */
json_t *gh_commit_new(TwinCall *c, json_t *repo, const char *parent1, const char *parent2,
                      const json_t *tree, const char *message, const char *login)
{
        return gh_commit_add(c->world, repo, parent1, parent2, tree, message, login, c->now);
}

/* ------------------------------------------------------------------ seed */

/* 2026-01-01T00:00:00Z (GH_SEED_TIME) in seconds since the epoch: seeded commits' time. */
#define GH_SEED_EPOCH 1767225600

/*
 * A file path git can store: relative, '/'-separated, no empty, "." or ".." segment, and
 * (the twin's own bound) shorter than 1024 bytes.
 */
bool gh_path_valid(const char *p)
{
        if (!p || !p[0] || strlen(p) >= 1024 || p[0] == '/' || p[strlen(p) - 1] == '/' ||
            strstr(p, "//"))
                return false;
        for (const char *s = p; *s;) {
                size_t l = strcspn(s, "/");
                if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.') ||
                    (l == 4 && strncmp(s, ".git", 4) == 0))
                        return false;
                s += l + (s[l] == '/');
        }
        return true;
}

/* A branch name git accepts (git-check-ref-format, the parts that matter here). */
bool gh_branch_name_valid(const char *n)
{
        size_t l = n ? strlen(n) : 0;
        if (l == 0 || l > 255 || n[0] == '/' || n[0] == '-' || n[l - 1] == '/' || n[l - 1] == '.' ||
            strstr(n, "..") || strstr(n, "//") || strstr(n, "@{") || streq(n, "@") ||
            (l >= 5 && streq(n + l - 5, ".lock")))
                return false;
        for (size_t i = 0; i < l; i++) {
                unsigned char ch = (unsigned char)n[i];
                if (ch < 0x20 || ch == 0x7f || strchr(" ~^:?*[\\", ch))
                        return false;
        }
        return true;
}

static int seed_branch_add(TwinSeed *s, json_t *repo, const char *name, const char *sha,
                           bool protect)
{
        (void)s;
        return json_array_append_new(json_object_get(repo, "branches"),
                                     json_pack("{s:s, s:s, s:b}", "name", name, "sha", sha,
                                               "protected", protect)) < 0
                       ? -ENOMEM
                       : 0;
}

/*
 * A seeded branch's protection {required_status_checks: {strict, contexts[], checks[{context,
 * app_id}]} | null, enforce_admins, required_pull_request_reviews:
 * {required_approving_review_count} | null} — the body of GitHub's "Update branch
 * protection" (PUT /repos/{o}/{r}/branches/{b}/protection), so a seed says what an admin
 * would have sent — onto the branch row b (borrowed), which it protects. The world keeps
 * what that PUT keeps (repos.c gh_act_update_branch_protection). 0, -EINVAL, -ENOMEM.
 */
static int seed_protection(TwinSeed *s, json_t *b, const json_t *v, const char *path)
{
        char p[300];
        snprintf(p, sizeof(p), "%s.protection", path);
        if (!json_is_object(v))
                return twin_seed_error(s->err, s->errlen,
                                       "%s: must be an object {required_status_checks, "
                                       "enforce_admins, required_pull_request_reviews}",
                                       p);
        bool enforce, strict;
        json_t *checks = json_object_get(v, "required_status_checks"),
               *reviews = json_object_get(v, "required_pull_request_reviews");
        int r;
        if ((r = TWIN_SEED_KNOWN(s, v, p, "branch protection", "required_status_checks",
                                 "enforce_admins", "required_pull_request_reviews",
                                 "restrictions")) < 0 ||
            (r = twin_seed_bool(s, v, "enforce_admins", p, false, &enforce)) < 0)
                return r;
        _cleanup_json_ json_t *contexts = NULL, *rv = NULL;
        if (checks && !json_is_null(checks)) {
                char q[340];
                snprintf(q, sizeof(q), "%s.required_status_checks", p);
                json_t *ctx, *runs, *x;
                size_t i;
                if (!json_is_object(checks))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be an object {strict, contexts} or null",
                                               q);
                if ((r = TWIN_SEED_KNOWN(s, checks, q, "required status checks", "strict",
                                         "contexts", "checks")) < 0 ||
                    (r = twin_seed_bool(s, checks, "strict", q, false, &strict)) < 0 ||
                    (r = twin_seed_array(s, checks, "contexts", q, &ctx)) < 0 ||
                    (r = twin_seed_array(s, checks, "checks", q, &runs)) < 0)
                        return r;
                if (!(contexts = json_array()))
                        return -ENOMEM;
                json_array_foreach (ctx, i, x) {
                        if (!json_is_string(x) || json_string_length(x) == 0)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.contexts[%zu]: must be a status "
                                                       "context (\"ci/test\")",
                                                       q, i);
                        if (!gh_strv_has(contexts, json_string_value(x)) &&
                            json_array_append(contexts, x) < 0)
                                return -ENOMEM;
                }
                /* the newer form: checks[{context, app_id}] */
                json_array_foreach (runs, i, x) {
                        json_t *name = json_object_get(x, "context");
                        if (!json_is_string(name) || json_string_length(name) == 0)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.checks[%zu].context: must be a status "
                                                       "context (\"ci/test\")",
                                                       q, i);
                        if (!gh_strv_has(contexts, json_string_value(name)) &&
                            json_array_append(contexts, name) < 0)
                                return -ENOMEM;
                }
                if (!(checks = json_pack("{s:b, s:O}", "strict", strict, "contexts", contexts)))
                        return -ENOMEM;
        } else
                checks = json_null();
        if (reviews && !json_is_null(reviews)) {
                char q[340];
                int64_t count = 1;
                snprintf(q, sizeof(q), "%s.required_pull_request_reviews", p);
                if (!json_is_object(reviews) ||
                    twin_seed_known(s, reviews, q, "required reviews",
                                    (const char *const[]){"required_approving_review_count",
                                                          "dismiss_stale_reviews",
                                                          "require_code_owner_reviews"},
                                    3) < 0 ||
                    twin_arg_int(reviews, "required_approving_review_count", 0, 6, &count) ==
                            -EINVAL)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be an object "
                                               "{required_approving_review_count: 0-6} or null",
                                               q);
                if (!(rv = json_pack("{s:I}", "required_approving_review_count",
                                     (json_int_t)count)))
                        return -ENOMEM;
        }
        json_t *prot =
                json_pack("{s:b, s:o, s:O?}", "enforce_admins", enforce, "required_status_checks",
                          checks, "required_pull_request_reviews", rv);
        if (!prot || json_object_set_new(b, "protection", prot) < 0 ||
            json_object_set_new(b, "protected", json_true()) < 0)
                return -ENOMEM;
        return 0;
}

/* tags[]: names (at the default head) or {name, ref (branch, tag or sha), message}. */
static int seed_tags(TwinSeed *s, const json_t *r0, json_t *repo, const char *path)
{
        json_t *a, *v;
        int r = twin_seed_array(s, r0, "tags", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_array_foreach (a, i, v) {
                char p[256];
                snprintf(p, sizeof(p), "%s.tags[%zu]", path, i);
                const char *name = json_string_value(v),
                           *ref = json_get_str(repo, "default_branch"), *message = "";
                if (!json_is_object(v) && !json_is_string(v))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be a tag name or {name, ref, message}", p);
                if (json_is_object(v) &&
                    ((r = TWIN_SEED_KNOWN(s, v, p, "tag", "name", "ref", "message")) < 0 ||
                     (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_REFUSED, &name)) < 0 ||
                     (r = twin_seed_str(s, v, "ref", p, ref, TWIN_NULL_ABSENT, &ref)) < 0 ||
                     (r = twin_seed_str(s, v, "message", p, "", TWIN_NULL_ABSENT, &message)) < 0))
                        return r;
                if (!gh_branch_name_valid(name) || gh_tag_find(repo, name))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.name: must be a new, valid tag name", p);
                const char *sha = gh_ref_sha(repo, ref);
                if (!sha)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.ref: \"%s\" names no branch, tag or commit", p,
                                               ref);
                if (!gh_tag_add(s->world, repo, name, sha, message, json_get_str(repo, "owner"),
                                GH_SEED_EPOCH))
                        return -ENOMEM;
        }
        return 0;
}

/*
 * releases[]: {tag_name, name, body, draft, prerelease, target_commitish, author,
 * created_at}; a release's missing tag is made at target_commitish (default branch).
 */
static int seed_releases(TwinSeed *s, const json_t *r0, json_t *repo, const char *path)
{
        json_t *a, *v;
        int r = twin_seed_array(s, r0, "releases", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_array_foreach (a, i, v) {
                char p[256];
                snprintf(p, sizeof(p), "%s.releases[%zu]", path, i);
                const char *tag, *name, *body, *target, *author, *created;
                bool draft, pre;
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "release", "tag_name", "name", "body", "draft",
                                         "prerelease", "target_commitish", "author",
                                         "created_at")) < 0 ||
                    (r = twin_seed_str(s, v, "tag_name", p, NULL, TWIN_NULL_REFUSED, &tag)) < 0 ||
                    (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_KEPT, &name)) < 0 ||
                    (r = twin_seed_str(s, v, "body", p, NULL, TWIN_NULL_KEPT, &body)) < 0 ||
                    (r = twin_seed_str(s, v, "target_commitish", p,
                                       json_get_str(repo, "default_branch"), TWIN_NULL_ABSENT,
                                       &target)) < 0 ||
                    (r = twin_seed_str(s, v, "author", p, json_get_str(repo, "owner"),
                                       TWIN_NULL_ABSENT, &author)) < 0 ||
                    (r = twin_seed_str(s, v, "created_at", p, GH_SEED_TIME, TWIN_NULL_ABSENT,
                                       &created)) < 0 ||
                    (r = twin_seed_bool(s, v, "draft", p, false, &draft)) < 0 ||
                    (r = twin_seed_bool(s, v, "prerelease", p, false, &pre)) < 0)
                        return r;
                if (!gh_branch_name_valid(tag))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.tag_name: must be a valid tag name", p);
                if (!gh_time_valid(created))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.created_at: must be a UTC time like "
                                               "\"2026-01-01T00:00:00Z\"",
                                               p);
                if (!gh_login_valid(author) || !gh_user_ensure(s->world, author, "User"))
                        return twin_seed_error(s->err, s->errlen, "%s.author: must be a login", p);
                size_t k;
                json_t *x;
                json_array_foreach (json_object_get(repo, "releases"), k, x) {
                        if (streq_ptr(json_get_str(x, "tag_name"), tag))
                                return twin_seed_error(
                                        s->err, s->errlen,
                                        "%s.tag_name: a release of %s exists already", p, tag);
                }
                if (!gh_tag_find(repo, tag)) {
                        const char *sha = gh_ref_sha(repo, target);
                        if (!sha)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.target_commitish: \"%s\" names no "
                                                       "branch, tag or commit",
                                                       p, target);
                        if (!gh_tag_add(s->world, repo, tag, sha, "", author, GH_SEED_EPOCH))
                                return -ENOMEM;
                }
                int64_t id = gh_alloc_id(s->world);
                json_t *row = json_pack(
                        "{s:I, s:o, s:s, s:s?, s:s?, s:b, s:b, s:s, s:s?, s:s, s:s}", "id",
                        (json_int_t)id, "node_id", gh_node_id("Release", id), "tag_name", tag,
                        "name", name, "body", body, "draft", draft, "prerelease", pre, "created_at",
                        created, "published_at", draft ? NULL : created, "author",
                        json_get_str(gh_user_find(s->world, author), "login"), "target_commitish",
                        target);
                if (!row || json_array_append_new(json_object_get(repo, "releases"), row) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * The git part of repository seed r0 (borrowed) at path into repo: files[] {path, content,
 * branch?} make the default branch's initial commit (its files) and, for each other branch
 * named, a commit on top of it whose tree is the default tree overlaid with that branch's
 * files (hosted Pome's task-seed format); branches[] (names, or {name, protected, from,
 * protection}) add branches at the default head (or at `from`) and mark protection (with
 * the rules of seed_protection). Every repository
 * gets its default branch, with an empty initial commit when no file is seeded, so refs,
 * contents and pull requests have something to start from. tags[] and releases[] follow
 * (see seed_tags, seed_releases). Returns 0, -EINVAL with a
 * message naming the JSON path, -ENOMEM.
 */
int gh_seed_git(TwinSeed *s, const json_t *r0, json_t *repo, const char *path)
{
        json_t *files, *branches;
        int r;
        if ((r = twin_seed_array(s, r0, "files", path, &files)) < 0 ||
            (r = twin_seed_array(s, r0, "branches", path, &branches)) < 0)
                return r;
        const char *def = json_get_str(repo, "default_branch");
        if (!gh_branch_name_valid(def))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.default_branch: must be a valid branch name", path);

        /* per branch, in order of first mention: its files (default branch first) */
        _cleanup_json_ json_t *trees = json_object(), *tdirs = json_object(), *order = json_array();
        if (!trees || !tdirs || !order || json_object_set_new(trees, def, json_object()) < 0 ||
            json_array_append_new(order, json_string(def)) < 0)
                return -ENOMEM;
        size_t i;
        json_t *v;
        json_array_foreach (files, i, v) {
                char p[256];
                snprintf(p, sizeof(p), "%s.files[%zu]", path, i);
                const char *fpath, *content, *branch;
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "file", "path", "content", "branch")) < 0 ||
                    (r = twin_seed_str(s, v, "path", p, NULL, TWIN_NULL_REFUSED, &fpath)) < 0 ||
                    (r = twin_seed_str(s, v, "content", p, "", TWIN_NULL_REFUSED, &content)) < 0 ||
                    (r = twin_seed_str(s, v, "branch", p, def, TWIN_NULL_ABSENT, &branch)) < 0)
                        return r;
                if (!gh_path_valid(fpath))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.path: needs a relative path like "
                                               "\"src/main.c\" (no empty, '.', '..' or '.git' "
                                               "segment)",
                                               p);
                if (!gh_branch_name_valid(branch))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.branch: must be a valid branch name", p);
                json_t *t = json_object_get(trees, branch);
                if (!t) {
                        t = json_object();
                        if (json_object_set_new(trees, branch, t) < 0 ||
                            json_array_append_new(order, json_string(branch)) < 0)
                                return -ENOMEM;
                }
                /* a file cannot also be a directory of the same tree */
                json_t *dirs = json_object_get(tdirs, branch);
                if (!dirs) {
                        dirs = json_object();
                        if (json_object_set_new(tdirs, branch, dirs) < 0)
                                return -ENOMEM;
                }
                if (!json_object_get(t, fpath) && gh_path_conflicts(t, dirs, fpath))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.path: \"%s\" is both a file and a "
                                               "directory on branch %s",
                                               p, fpath, branch);
                for (const char *sl = strchr(fpath, '/'); sl; sl = strchr(sl + 1, '/')) {
                        _cleanup_free_ char *d = strndup(fpath, (size_t)(sl - fpath));
                        if (!d || json_object_set(dirs, d, json_true()) < 0)
                                return -ENOMEM;
                }
                if (json_object_set_new(t, fpath, json_string(content)) < 0)
                        return -ENOMEM;
        }

        const char *owner = json_get_str(repo, "owner");
        json_t *deftree = json_object_get(trees, def);
        json_t *root = gh_commit_add(s->world, repo, NULL, NULL, deftree, "Initial commit", owner,
                                     GH_SEED_EPOCH);
        if (!root)
                return -ENOMEM;
        const char *head = json_get_str(root, "sha");
        if ((r = seed_branch_add(s, repo, def, head, false)) < 0)
                return r;
        json_t *b;
        json_array_foreach (order, i, b) {
                const char *name = json_string_value(b);
                if (i == 0)
                        continue;
                _cleanup_json_ json_t *t = json_copy(deftree);
                if (!t || json_object_update(t, json_object_get(trees, name)) < 0)
                        return -ENOMEM;
                /* an overlaid file may replace a directory of the default tree, or sit in
                 * one: the default tree's file gives way */
                json_t *own = json_object_get(trees, name);
                json_t *own_dirs = json_object_get(tdirs, name);
                const char *k;
                json_t *x;
                void *tmp;
                json_object_foreach_safe (t, tmp, k, x) {
                        if (!json_object_get(own, k) && gh_path_conflicts(own, own_dirs, k))
                                json_object_del(t, k);
                }
                _cleanup_free_ char *msg = NULL;
                if (asprintf(&msg, "Update %s", name) < 0)
                        return -ENOMEM;
                json_t *c = gh_commit_add(s->world, repo, head, NULL, t, msg, owner,
                                          GH_SEED_EPOCH + 60);
                if (!c || (r = seed_branch_add(s, repo, name, json_get_str(c, "sha"), false)) < 0)
                        return c ? r : -ENOMEM;
        }

        json_array_foreach (branches, i, v) {
                char p[256];
                snprintf(p, sizeof(p), "%s.branches[%zu]", path, i);
                const char *name = json_string_value(v), *from = NULL;
                json_t *protection = json_object_get(v, "protection");
                bool protect = false;
                if (json_is_object(v) &&
                    ((r = TWIN_SEED_KNOWN(s, v, p, "branch", "name", "protected", "from",
                                          "protection")) < 0 ||
                     (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_REFUSED, &name)) < 0 ||
                     (r = twin_seed_str(s, v, "from", p, NULL, TWIN_NULL_ABSENT, &from)) < 0 ||
                     (r = twin_seed_bool(s, v, "protected", p, protection != NULL, &protect)) < 0))
                        return r;
                if (!json_is_object(v) && !json_is_string(v))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be a branch name or {name, protected, "
                                               "from, protection}",
                                               p);
                if (protection && !protect)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.protected: a branch with a protection is "
                                               "protected",
                                               p);
                if (!gh_branch_name_valid(name))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.name: must be a valid branch name", p);
                json_t *row = gh_branch_find(repo, name);
                if (row) {
                        if (from)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.from: branch %s already has files of "
                                                       "its own",
                                                       p, name);
                        if (json_object_set_new(row, "protected", json_boolean(protect)) < 0)
                                return -ENOMEM;
                        if (protection && (r = seed_protection(s, row, protection, p)) < 0)
                                return r;
                        continue;
                }
                const char *sha = from ? gh_ref_sha(repo, from) : head;
                if (!sha)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.from: \"%s\" names no branch, tag or commit", p,
                                               from);
                if ((r = seed_branch_add(s, repo, name, sha, protect)) < 0)
                        return r;
                if (protection &&
                    (r = seed_protection(s, gh_branch_find(repo, name), protection, p)) < 0)
                        return r;
        }
        if ((r = seed_tags(s, r0, repo, path)) < 0)
                return r;
        return seed_releases(s, r0, repo, path);
}

/* ------------------------------------------------------------------ history */

/* Index of the commit row with sha in repo's commits[], or -1. */
static ssize_t commit_index(json_t *repo, const char *sha)
{
        size_t i;
        json_t *c;
        json_array_foreach (json_object_get(repo, "commits"), i, c) {
                if (streq_ptr(json_get_str(c, "sha"), sha))
                        return (ssize_t)i;
        }
        return -1;
}

/*
 * Marks in seen (one byte per commits[] row, calloc'd by the caller) every ancestor of the
 * commit with sha, itself included. Parents are always older rows, so one backwards sweep
 * suffices.
 */
static void mark_ancestors(json_t *repo, const char *sha, char *seen)
{
        json_t *commits = json_object_get(repo, "commits");
        ssize_t top = commit_index(repo, sha);
        if (top < 0)
                return;
        seen[top] = 1;
        for (ssize_t i = top; i >= 0; i--) {
                if (!seen[i])
                        continue;
                size_t k;
                json_t *p;
                json_array_foreach (json_object_get(json_array_get(commits, (size_t)i), "parents"),
                                    k, p) {
                        ssize_t j = commit_index(repo, json_string_value(p));
                        if (j >= 0)
                                seen[j] = 1;
                }
        }
}

/*
 * The commits reachable from head and not from base (base may be NULL: all of head's
 * history), as a new array of borrowed-then-referenced commit rows, newest first when
 * newest_first, else oldest first (git log --reverse base..head). NULL on OOM.
 */
json_t *gh_commits_between(json_t *repo, const char *base, const char *head, bool newest_first)
{
        size_t n = json_array_size(json_object_get(repo, "commits"));
        _cleanup_free_ char *in_head = calloc(n + 1, 1), *in_base = calloc(n + 1, 1);
        _cleanup_json_ json_t *out = json_array();
        if (!in_head || !in_base || !out)
                return NULL;
        mark_ancestors(repo, head, in_head);
        if (base)
                mark_ancestors(repo, base, in_base);
        for (size_t k = 0; k < n; k++) {
                size_t i = newest_first ? n - 1 - k : k;
                if (in_head[i] && !in_base[i] &&
                    json_array_append(out, json_array_get(json_object_get(repo, "commits"), i)) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

/*
 * The best common ancestor of commits a and b (the newest commit both reach), borrowed
 * from the world, or NULL when they share no history.
 */
const char *gh_merge_base(json_t *repo, const char *a, const char *b)
{
        size_t n = json_array_size(json_object_get(repo, "commits"));
        _cleanup_free_ char *sa = calloc(n + 1, 1), *sb = calloc(n + 1, 1);
        if (!sa || !sb)
                return NULL;
        mark_ancestors(repo, a, sa);
        mark_ancestors(repo, b, sb);
        for (size_t i = n; i > 0; i--)
                if (sa[i - 1] && sb[i - 1])
                        return json_get_str(json_array_get(json_object_get(repo, "commits"), i - 1),
                                            "sha");
        return NULL;
}

/* ------------------------------------------------------------------ diffs */

typedef struct Line {
        const char *p;
        size_t len;
} Line;

/* Lines of s (without their '\n'); *ret_nl says whether s ends with a newline. */
static Line *split_lines(const char *s, size_t *ret_n, bool *ret_nl)
{
        size_t n = 0, cap = 16;
        Line *v = malloc(cap * sizeof(Line));
        if (!v)
                return NULL;
        *ret_nl = true;
        for (const char *p = strempty(s); *p;) {
                const char *e = strchr(p, '\n');
                size_t l = e ? (size_t)(e - p) : strlen(p);
                if (n == cap) {
                        Line *w = realloc(v, (cap *= 2) * sizeof(Line));
                        if (!w) {
                                free(v);
                                return NULL;
                        }
                        v = w;
                }
                v[n++] = (Line){p, l};
                if (!e) {
                        *ret_nl = false;
                        break;
                }
                p = e + 1;
        }
        *ret_n = n;
        return v;
}

static bool line_eq(const Line *a, const Line *b)
{
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

typedef struct Op {
        char op; /* ' ', '-', '+' */
        size_t ai, bi;
} Op;

/* An edit script turning a into b: a longest common subsequence, or (for texts too large to
 * compare line by line here) everything removed then everything added. */
static Op *edit_script(const Line *a, size_t na, const Line *b, size_t nb, size_t *ret_n)
{
        Op *ops = malloc((na + nb + 1) * sizeof(Op));
        if (!ops)
                return NULL;
        size_t n = 0;
        uint32_t *dp = NULL;
        if ((na + 1) * (nb + 1) <= 1024u * 1024) /* 4 MiB of table at most */
                dp = calloc((na + 1) * (nb + 1), sizeof(uint32_t));
        if (dp) {
#define DP(i, j) dp[(i) * (nb + 1) + (j)]
                for (size_t i = na; i-- > 0;)
                        for (size_t j = nb; j-- > 0;)
                                DP(i, j) = line_eq(&a[i], &b[j])
                                                   ? DP(i + 1, j + 1) + 1
                                                   : (DP(i + 1, j) >= DP(i, j + 1) ? DP(i + 1, j)
                                                                                   : DP(i, j + 1));
                size_t i = 0, j = 0;
                while (i < na || j < nb) {
                        if (i < na && j < nb && line_eq(&a[i], &b[j])) {
                                ops[n++] = (Op){' ', i++, j++};
                        } else if (j >= nb || (i < na && DP(i + 1, j) >= DP(i, j + 1)))
                                ops[n++] = (Op){'-', i++, j};
                        else
                                ops[n++] = (Op){'+', i, j++};
                }
#undef DP
                free(dp);
        } else {
                for (size_t i = 0; i < na; i++)
                        ops[n++] = (Op){'-', i, 0};
                for (size_t j = 0; j < nb; j++)
                        ops[n++] = (Op){'+', na, j};
        }
        *ret_n = n;
        return ops;
}

/*
 * The hunks of a unified diff (3 lines of context, as git and GitHub's `patch` fields)
 * from old to new text (either may be NULL: an added or removed file) into f; counts the
 * added and removed lines. Returns 0 or -ENOMEM.
 */
static int unified_hunks(FILE *f, const char *old, const char *new, size_t *ret_add,
                         size_t *ret_del)
{
        size_t na, nb, nops;
        bool anl, bnl;
        _cleanup_free_ Line *a = split_lines(old, &na, &anl), *b = split_lines(new, &nb, &bnl);
        if (!a || !b)
                return -ENOMEM;
        _cleanup_free_ Op *ops = edit_script(a, na, b, nb, &nops);
        if (!ops)
                return -ENOMEM;
        size_t add = 0, del = 0;
        for (size_t k = 0; k < nops;) {
                size_t c = k;
                while (c < nops && ops[c].op == ' ')
                        c++;
                if (c == nops)
                        break;
                size_t start = c >= k + 3 ? c - 3 : k, last = c;
                for (size_t x = c; x < nops && x <= last + 6; x++)
                        if (ops[x].op != ' ')
                                last = x;
                size_t end = last + 4 < nops ? last + 4 : nops;
                size_t ac = 0, bc = 0;
                for (size_t x = start; x < end; x++) {
                        ac += ops[x].op != '+';
                        bc += ops[x].op != '-';
                }
                size_t as = ac ? ops[start].ai + 1 : ops[start].ai,
                       bs = bc ? ops[start].bi + 1 : ops[start].bi;
                fprintf(f, "@@ -%zu", as);
                if (ac != 1)
                        fprintf(f, ",%zu", ac);
                fprintf(f, " +%zu", bs);
                if (bc != 1)
                        fprintf(f, ",%zu", bc);
                fputs(" @@\n", f);
                for (size_t x = start; x < end; x++) {
                        const Line *l = ops[x].op == '+' ? &b[ops[x].bi] : &a[ops[x].ai];
                        bool eof_nonl = ops[x].op == '+' ? (!bnl && ops[x].bi == nb - 1)
                                                         : (!anl && ops[x].ai == na - 1);
                        if (ops[x].op == ' ' && !eof_nonl && !bnl && ops[x].bi == nb - 1)
                                eof_nonl = true;
                        fputc(ops[x].op, f);
                        fwrite(l->p, 1, l->len, f);
                        fputc('\n', f);
                        if (eof_nonl)
                                fputs("\\ No newline at end of file\n", f);
                        add += ops[x].op == '+';
                        del += ops[x].op == '-';
                }
                k = end;
        }
        *ret_add = add;
        *ret_del = del;
        return 0;
}

/*
 * The changed files from tree a to tree b (borrowed {"path": "content"} trees; NULL reads as
 * empty), as GitHub's `files` array of a commit or a comparison (new array): {sha,
 * filename, status: added|removed|modified, additions, deletions, changes, blob_url,
 * raw_url, contents_url, patch}, in path order. at is the commit (sha) the urls point at.
 * When ret_diff is not NULL, also the whole change as `git diff` prints it (a new string,
 * the .diff media type of a pull request or comparison). NULL on OOM.
 */
json_t *gh_diff_files(TwinCall *c, json_t *repo, const json_t *a, const json_t *b, const char *at,
                      char **ret_diff)
{
        _cleanup_json_ json_t *paths = json_object(), *files = json_array();
        if (!paths || !files)
                return NULL;
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)a, k, v)
                if (json_object_set(paths, k, json_true()) < 0)
                        return NULL;
        json_object_foreach ((json_t *)b, k, v)
                if (json_object_set(paths, k, json_true()) < 0)
                        return NULL;
        size_t n = json_object_size(paths), i = 0;
        _cleanup_free_ const char **sorted = calloc(n + 1, sizeof(char *));
        if (!sorted)
                return NULL;
        json_object_foreach (paths, k, v)
                sorted[i++] = k;
        qsort(sorted, n, sizeof(char *), path_cmp);

        _cleanup_free_ char *diff = NULL;
        size_t difflen = 0;
        FILE *df = ret_diff ? open_memstream(&diff, &difflen) : NULL;
        if (ret_diff && !df)
                return NULL;
        int r = 0;
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        for (i = 0; i < n && r >= 0; i++) {
                const char *p = sorted[i];
                const char *old = json_string_value(json_object_get(a, p)),
                           *new = json_string_value(json_object_get(b, p));
                if (old && new &&streq(old, new))
                        continue;
                char osha[TWIN_SHA1_HEX] = "", nsha[TWIN_SHA1_HEX] = "";
                if (old)
                        gh_blob_sha(old, strlen(old), osha);
                if (new)
                        gh_blob_sha(new, strlen(new), nsha);
                _cleanup_free_ char *patch = NULL;
                size_t plen = 0, add = 0, del = 0;
                FILE *pf = open_memstream(&patch, &plen);
                if (!pf)
                        r = -ENOMEM;
                else {
                        r = unified_hunks(pf, old, new, &add, &del);
                        if (fclose(pf) != 0 || !patch)
                                r = -ENOMEM;
                }
                if (r < 0)
                        break;
                const char *status = !old ? "added" : !new ? "removed" : "modified";
                if (df) {
                        fprintf(df, "diff --git a/%s b/%s\n", p, p);
                        if (!old)
                                fprintf(df, "new file mode 100644\nindex 0000000..%.7s\n", nsha);
                        else if (!new)
                                fprintf(df, "deleted file mode 100644\nindex %.7s..0000000\n",
                                        osha);
                        else
                                fprintf(df, "index %.7s..%.7s 100644\n", osha, nsha);
                        fprintf(df, "--- %s%s\n+++ %s%s\n%s", old ? "a/" : "/dev/null",
                                old ? p : "", new ? "b/" : "/dev/null", new ? p : "", patch);
                }
                _cleanup_free_ char *blob = NULL, *raw = NULL, *contents = NULL;
                if (asprintf(&blob, GH_HTML_BASE "/%s/%s/blob/%s/%s", owner, name, at, p) < 0 ||
                    asprintf(&raw, GH_HTML_BASE "/%s/%s/raw/%s/%s", owner, name, at, p) < 0 ||
                    asprintf(&contents, "%s/repos/%s/%s/contents/%s?ref=%s", c->base_url, owner,
                             name, p, at) < 0) {
                        r = -ENOMEM;
                        break;
                }
                json_t *e = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:s}", "sha",
                                      new ? nsha : osha, "filename", p, "status", status,
                                      "additions", (json_int_t)add, "deletions", (json_int_t)del,
                                      "changes", (json_int_t)(add + del), "blob_url", blob,
                                      "raw_url", raw, "contents_url", contents, "patch", patch);
                if (json_array_append_new(files, e) < 0)
                        r = -ENOMEM;
        }
        if (df && (fclose(df) != 0 || !diff))
                r = -ENOMEM;
        if (r < 0)
                return NULL;
        if (ret_diff)
                *ret_diff = TAKE_PTR(diff);
        return TAKE_PTR(files);
}

/* ------------------------------------------------------------------ rendering */

/* The legacy node id of a commit: base64("06:Commit<repo id>:<sha>"), as GitHub gives. */
static json_t *commit_node_id(json_t *repo, const char *sha)
{
        char raw[128];
        int n = snprintf(raw, sizeof(raw), "06:Commit%lld:%s",
                         (long long)json_integer_value(json_object_get(repo, "id")), sha);
        _cleanup_free_ char *b = twin_base64(raw, (size_t)n);
        return b ? json_string(b) : NULL;
}

/* The GitHub user behind a commit's login (or NULL JSON when it has none). */
static json_t *commit_user(TwinCall *c, json_t *commit)
{
        const char *login = json_get_str(commit, "login");
        return login && gh_user_find(c->world, login) ? gh_render_user(c, login) : json_null();
}

/*
 * A commit as the REST API renders it (GET /repos/{o}/{r}/commits/{ref}): sha, node_id,
 * commit {author, committer, message, tree, url, comment_count, verification}, url, html_url,
 * comments_url, author, committer, parents[{sha, url, html_url}]. With detail, also stats and
 * files against the first parent. New reference, NULL on OOM.
 */
json_t *gh_render_commit(TwinCall *c, json_t *repo, json_t *commit, bool detail)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        const char *sha = json_get_str(commit, "sha");
        _cleanup_free_ char *url = NULL, *html = NULL, *git_url = NULL, *tree_url = NULL,
                            *comments = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/commits/%s", c->base_url, owner, name, sha) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/commit/%s", owner, name, sha) < 0 ||
            asprintf(&git_url, "%s/repos/%s/%s/git/commits/%s", c->base_url, owner, name, sha) <
                    0 ||
            asprintf(&tree_url, "%s/repos/%s/%s/git/trees/%s", c->base_url, owner, name,
                     json_get_str(commit, "tree_sha")) < 0 ||
            asprintf(&comments, "%s/comments", url) < 0)
                return NULL;
        _cleanup_json_ json_t *parents = json_array();
        if (!parents)
                return NULL;
        size_t i;
        json_t *p;
        json_array_foreach (json_object_get(commit, "parents"), i, p) {
                _cleanup_free_ char *pu = NULL, *ph = NULL;
                const char *ps = json_string_value(p);
                if (asprintf(&pu, "%s/repos/%s/%s/commits/%s", c->base_url, owner, name, ps) < 0 ||
                    asprintf(&ph, GH_HTML_BASE "/%s/%s/commit/%s", owner, name, ps) < 0 ||
                    json_array_append_new(parents, json_pack("{s:s, s:s, s:s}", "sha", ps, "url",
                                                             pu, "html_url", ph)) < 0)
                        return NULL;
        }
        _cleanup_json_ json_t *body = json_pack(
                "{s:s, s:o, s:{s:O, s:O, s:O, s:{s:O, s:s}, s:s, s:i, s:{s:b, s:s, s:n, s:n, "
                "s:n}}, s:s, s:s, s:s, s:o, s:o, s:O}",
                "sha", sha, "node_id", commit_node_id(repo, sha), "commit", "author",
                json_object_get(commit, "author"), "committer",
                json_object_get(commit, "committer"), "message", json_object_get(commit, "message"),
                "tree", "sha", json_object_get(commit, "tree_sha"), "url", tree_url, "url", git_url,
                "comment_count", 0, "verification", "verified", false, "reason", "unsigned",
                "signature", "payload", "verified_at", "url", url, "html_url", html, "comments_url",
                comments, "author", commit_user(c, commit), "committer", commit_user(c, commit),
                "parents", parents);
        if (!body)
                return NULL;
        if (detail) {
                const char *parent = json_string_value(
                        json_array_get(parents, 0)
                                ? json_object_get(json_array_get(parents, 0), "sha")
                                : NULL);
                json_t *ptree = parent ? gh_tree_at(repo, parent) : NULL;
                json_t *files =
                        gh_diff_files(c, repo, ptree, json_object_get(commit, "tree"), sha, NULL);
                if (!files)
                        return NULL;
                json_int_t add = 0, del = 0;
                json_t *f;
                json_array_foreach (files, i, f) {
                        add += json_integer_value(json_object_get(f, "additions"));
                        del += json_integer_value(json_object_get(f, "deletions"));
                }
                if (json_object_set_new(body, "stats",
                                        json_pack("{s:I, s:I, s:I}", "total", add + del,
                                                  "additions", add, "deletions", del)) < 0 ||
                    json_object_set_new(body, "files", files) < 0)
                        return NULL;
        }
        return TAKE_PTR(body);
}

/*
 * A git reference as GET /repos/{o}/{r}/git/ref/{ref} renders it: {ref ("refs/heads/x"),
 * node_id, url, object {sha, type: "commit", url}}. New reference, NULL on OOM.
 */
json_t *gh_render_ref(TwinCall *c, json_t *repo, const char *full_ref, const char *sha)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        _cleanup_free_ char *url = NULL, *obj = NULL, *raw = NULL, *nid = NULL;
        int n = asprintf(&raw, "03:Ref%lld:%s",
                         (long long)json_integer_value(json_object_get(repo, "id")), full_ref);
        if (n < 0 || !(nid = twin_base64(raw, (size_t)n)) ||
            asprintf(&url, "%s/repos/%s/%s/git/%s", c->base_url, owner, name, full_ref) < 0 ||
            asprintf(&obj, "%s/repos/%s/%s/git/commits/%s", c->base_url, owner, name, sha) < 0)
                return NULL;
        return json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "ref", full_ref, "node_id", nid,
                         "url", url, "object", "sha", sha, "type", "commit", "url", obj);
}

/*
 * Moves branch (a row of repo.branches) to sha, recording the tape delta {before, after} of
 * the branch row. Returns 0 or -ENOMEM.
 */
int gh_branch_move(TwinReply *rp, json_t *branch, const char *sha)
{
        _cleanup_json_ json_t *before = json_deep_copy(branch);
        if (!before || json_object_set_new(branch, "sha", json_string(sha)) < 0)
                return -ENOMEM;
        return twin_reply_mutation(rp, before, branch);
}

/*
 * Adds tag name → commit sha to repo, with an annotated tag object (message, tagger login at
 * when) whose id is tag_sha. Returns the row (borrowed) or NULL on OOM.
 */
json_t *gh_tag_add(json_t *w, json_t *repo, const char *name, const char *sha, const char *message,
                   const char *login, int64_t when)
{
        char date[32], tag_sha[TWIN_SHA1_HEX];
        twin_format_time(when, date, sizeof(date));
        _cleanup_json_ json_t *tagger = identity(w, login, date);
        if (!tagger)
                return NULL;
        _cleanup_free_ char *obj = NULL;
        int n = asprintf(&obj, "object %s\ntype commit\ntag %s\ntagger %s <%s> %lld +0000\n\n%s",
                         sha, name, json_get_str(tagger, "name"), json_get_str(tagger, "email"),
                         (long long)when, strempty(message));
        if (n < 0)
                return NULL;
        object_sha("tag", obj, (size_t)n, tag_sha);
        json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:O}", "name", name, "sha", sha, "message",
                                strempty(message), "tag_sha", tag_sha, "tagger", tagger);
        if (!row || json_array_append_new(json_object_get(repo, "tags"), row) < 0)
                return NULL;
        return row;
}
