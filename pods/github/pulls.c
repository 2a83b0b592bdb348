/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's pull requests (https://docs.github.com/rest/pulls/pulls): list, get
 * (JSON, or the unified diff for Accept: application/vnd.github.diff), create, update,
 * merge, update-branch, commits and files, and the pull request part of the seed.
 *
 * A pull request row keeps every issue field and adds head/base (branch names), head_sha/
 * base_sha (the tips when last touched; while the pull request is open the branches' live
 * tips win), draft, merged, merged_at, merged_by, merge_commit_sha, requested_reviewers,
 * reviews[] and review_comments[] (reviews.c), and required_contexts[] (the contexts of the
 * statuses its seed put on its head: required not to be failing when it merges,
 * gh_pr_blocked).
 * What a pull request changes is what github.com shows: the head tree against the merge
 * base of head and base ("three-dot").
 */
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "pods/github/github.h"

/* ------------------------------------------------------------------ history (on git.c) */

static char *dup_or_null(const char *s)
{
        return s ? strdup(s) : NULL;
}

/* Adds sha and every ancestor of it to set (an object used as a set). 0 or -ENOMEM. */
static int ancestors(json_t *repo, const char *sha, json_t *set)
{
        _cleanup_json_ json_t *todo = json_pack("[s?]", sha);
        if (!todo)
                return -ENOMEM;
        while (json_array_size(todo) > 0) {
                _cleanup_free_ char *s = strdup(json_string_value(json_array_get(todo, 0)));
                if (!s || json_array_remove(todo, 0) < 0)
                        return -ENOMEM;
                if (json_object_get(set, s))
                        continue;
                if (json_object_set_new(set, s, json_true()) < 0)
                        return -ENOMEM;
                size_t i;
                json_t *p;
                json_array_foreach (json_object_get(gh_commit_find(repo, s), "parents"), i, p) {
                        if (json_is_string(p) && json_array_append(todo, p) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

bool gh_pr_is_ancestor(json_t *repo, const char *ancestor, const char *sha)
{
        _cleanup_json_ json_t *set = json_object();
        return set && ancestors(repo, sha, set) == 0 && ancestor &&
               json_object_get(set, ancestor) != NULL;
}

/*
 * The best common ancestor of a and b (git merge-base): of the ancestors of b, the first
 * that a reaches, walking b's history breadth first. Borrowed from repo; NULL for
 * unrelated histories or on OOM.
 */
const char *gh_pr_merge_base(json_t *repo, const char *a, const char *b)
{
        _cleanup_json_ json_t *set = json_object(), *seen = json_object();
        _cleanup_json_ json_t *todo = json_pack("[s?]", b);
        if (!set || !seen || !todo || ancestors(repo, a, set) < 0)
                return NULL;
        while (json_array_size(todo) > 0) {
                json_t *cm = gh_commit_find(repo, json_string_value(json_array_get(todo, 0)));
                if (json_array_remove(todo, 0) < 0)
                        return NULL;
                const char *s = json_get_str(cm, "sha");
                if (!s || json_object_get(seen, s))
                        continue;
                if (json_object_get(set, s))
                        return s;
                if (json_object_set_new(seen, s, json_true()) < 0)
                        return NULL;
                size_t i;
                json_t *p;
                json_array_foreach (json_object_get(cm, "parents"), i, p) {
                        if (json_array_append(todo, p) < 0)
                                return NULL;
                }
        }
        return NULL;
}

/* The commits reachable from head but not from base, oldest first (new array of rows). */
json_t *gh_pr_commits_between(json_t *repo, const char *base, const char *head)
{
        _cleanup_json_ json_t *set = json_object(), *mine = json_object(), *out = json_array();
        if (!set || !mine || !out || ancestors(repo, base, set) < 0 ||
            ancestors(repo, head, mine) < 0)
                return NULL;
        size_t i;
        json_t *cm;
        /* commits[] is in creation order: that is github.com's order for a pull request */
        json_array_foreach (json_object_get(repo, "commits"), i, cm) {
                const char *s = json_get_str(cm, "sha");
                if (s && json_object_get(mine, s) && !json_object_get(set, s) &&
                    json_array_append(out, cm) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

static int str_cmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The paths of the n trees (objects {path: content}, NULL for none), sorted (new array). */
static json_t *tree_paths(json_t *const *trees, size_t n)
{
        _cleanup_json_ json_t *keys = json_object(), *out = json_array();
        const char *key;
        json_t *val;
        if (!keys || !out)
                return NULL;
        for (size_t k = 0; k < n; k++)
                json_object_foreach (trees[k], key, val) {
                        if (json_object_set(keys, key, json_true()) < 0)
                                return NULL;
                }
        size_t m = json_object_size(keys), i = 0;
        _cleanup_free_ const char **v = calloc(m + 1, sizeof(char *));
        if (!v)
                return NULL;
        json_object_foreach (keys, key, val)
                v[i++] = key;
        qsort(v, m, sizeof(char *), str_cmp);
        for (i = 0; i < m; i++)
                if (json_array_append_new(out, json_string(v[i])) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

/*
 * A three-way merge of file snapshots (whole files: a file both sides changed differently
 * is a conflict). Returns 0 with the merged tree in *ret (new), 1 on a conflict, -ENOMEM.
 */
int gh_tree_merge(json_t *base, json_t *ours, json_t *theirs, json_t **ret)
{
        json_t *trees[] = {base, ours, theirs};
        _cleanup_json_ json_t *paths = tree_paths(trees, ELEMENTSOF(trees)), *out = json_object();
        if (!paths || !out)
                return -ENOMEM;
        size_t i;
        json_t *p;
        json_array_foreach (paths, i, p) {
                const char *key = json_string_value(p);
                json_t *jb = json_object_get(base, key), *jo = json_object_get(ours, key),
                       *jt = json_object_get(theirs, key), *pick;
                const char *b = json_string_value(jb), *o = json_string_value(jo),
                           *t = json_string_value(jt);
                if (streq_ptr(o, t))
                        pick = jo;
                else if (streq_ptr(o, b))
                        pick = jt;
                else if (streq_ptr(t, b))
                        pick = jo;
                else
                        return 1; /* both sides changed the file, differently */
                /* the content strings are shared, as git.c's commits share them */
                if (pick && json_object_set(out, key, pick) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/*
 * A new commit of repo (gh_commit_new) on parent1 (and parent2 for a merge) with tree, by
 * login: 0 with its sha in *ret_sha (new string), -ENOMEM.
 */
int gh_pr_commit_new(TwinCall *c, json_t *repo, const char *parent1, const char *parent2,
                     json_t *tree, const char *message, const char *login, char **ret_sha)
{
        json_t *row = gh_commit_new(c, repo, parent1, parent2, tree, message, login);
        char *sha = row ? strdup(json_get_str(row, "sha")) : NULL;
        if (!sha)
                return -ENOMEM;
        *ret_sha = sha;
        return 0;
}

/*
 * Replays the commits head has and base lacks onto base, oldest first, each with its own
 * message and author (merge_method "rebase"). 0 with the last new sha in *ret_sha, 1 when a
 * commit does not apply, -ENOMEM.
 */
int gh_pr_rebase(TwinCall *c, json_t *repo, const char *base, const char *head, char **ret_sha)
{
        const char *mb = gh_pr_merge_base(repo, base, head);
        _cleanup_json_ json_t *commits = mb ? gh_pr_commits_between(repo, mb, head) : NULL;
        if (!commits || json_array_size(commits) == 0)
                return mb && !commits ? -ENOMEM : 1;
        _cleanup_free_ char *cur = strdup(base);
        if (!cur)
                return -ENOMEM;
        size_t i;
        json_t *cm;
        json_array_foreach (commits, i, cm) {
                const char *parent =
                        json_string_value(json_array_get(json_object_get(cm, "parents"), 0));
                _cleanup_json_ json_t *tree = NULL;
                int r = gh_tree_merge(gh_tree_at(repo, parent), gh_tree_at(repo, cur),
                                      json_object_get(cm, "tree"), &tree);
                if (r != 0)
                        return r;
                char *next;
                r = gh_pr_commit_new(c, repo, cur, NULL, tree, json_get_str(cm, "message"),
                                     json_get_str(cm, "login"), &next);
                if (r < 0)
                        return r;
                free(cur);
                cur = next;
        }
        *ret_sha = TAKE_PTR(cur);
        return 0;
}

/* A commit as GET .../pulls/{n}/commits lists it (the REST "commit" object). */
json_t *gh_render_pr_commit(TwinCall *c, json_t *repo, json_t *cm)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        const char *sha = json_get_str(cm, "sha"), *login = json_get_str(cm, "login");
        _cleanup_free_ char *url = NULL, *html = NULL, *git_url = NULL, *tree_url = NULL,
                            *comments = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/commits/%s", c->base_url, owner, name, sha) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/commit/%s", owner, name, sha) < 0 ||
            asprintf(&git_url, "%s/repos/%s/%s/git/commits/%s", c->base_url, owner, name, sha) <
                    0 ||
            asprintf(&tree_url, "%s/repos/%s/%s/git/trees/%s", c->base_url, owner, name,
                     json_get_str(cm, "tree_sha")) < 0 ||
            asprintf(&comments, "%s/comments", url) < 0)
                return NULL;
        _cleanup_json_ json_t *parents = json_array();
        size_t i;
        json_t *p;
        if (!parents)
                return NULL;
        json_array_foreach (json_object_get(cm, "parents"), i, p) {
                _cleanup_free_ char *pu = NULL, *ph = NULL;
                if (asprintf(&pu, "%s/repos/%s/%s/commits/%s", c->base_url, owner, name,
                             json_string_value(p)) < 0 ||
                    asprintf(&ph, GH_HTML_BASE "/%s/%s/commit/%s", owner, name,
                             json_string_value(p)) < 0 ||
                    json_array_append_new(parents, json_pack("{s:O, s:s, s:s}", "sha", p, "url", pu,
                                                             "html_url", ph)) < 0)
                        return NULL;
        }
        char node[64];
        snprintf(node, sizeof(node), "C_%s", sha);
        return json_pack(
                "{s:s, s:s, s:{s:O, s:O, s:O, s:{s:O, s:s}, s:s, s:i}, s:s, s:s, s:s, "
                "s:o, s:o, s:O}",
                "sha", sha, "node_id", node, "commit", "author", json_object_get(cm, "author"),
                "committer", json_object_get(cm, "committer"), "message",
                json_object_get(cm, "message"), "tree", "sha", json_object_get(cm, "tree_sha"),
                "url", tree_url, "url", git_url, "comment_count", 0, "url", url, "html_url", html,
                "comments_url", comments, "author", login ? gh_render_user(c, login) : json_null(),
                "committer", login ? gh_render_user(c, login) : json_null(), "parents", parents);
}

/* ------------------------------------------------------------------ pull request state */

const char *gh_pr_head_sha(json_t *repo, json_t *pr)
{
        json_t *b = gh_branch_find(repo, json_get_str(pr, "head"));
        if (b && streq_ptr(json_get_str(pr, "state"), "open"))
                return json_get_str(b, "sha");
        return json_get_str(pr, "head_sha");
}

const char *gh_pr_base_sha(json_t *repo, json_t *pr)
{
        json_t *b = gh_branch_find(repo, json_get_str(pr, "base"));
        if (b && streq_ptr(json_get_str(pr, "state"), "open"))
                return json_get_str(b, "sha");
        return json_get_str(pr, "base_sha");
}

/*
 * Copies the live tips into the row's head_sha and base_sha: what a closed pull request
 * keeps showing after its branches move on. Call it before setting state "closed" (the
 * issues routes closing a pull request should too). 0 or -ENOMEM.
 */
int gh_pr_pin_tips(json_t *repo, json_t *pr)
{
        json_t *hs = json_string_or_null(gh_pr_head_sha(repo, pr)),
               *bs = json_string_or_null(gh_pr_base_sha(repo, pr));
        if (json_object_set_new(pr, "head_sha", hs) < 0 ||
            json_object_set_new(pr, "base_sha", bs) < 0)
                return -ENOMEM;
        return 0;
}

/* The tree the pull request is compared against: the merge base's (borrowed, may be NULL). */
static json_t *pr_compare_tree(json_t *repo, json_t *pr)
{
        const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
        const char *mb = head && base ? gh_pr_merge_base(repo, base, head) : NULL;
        return gh_tree_at(repo, mb ? mb : base);
}

/*
 * The files a pull request changes, as GET .../pulls/{n}/files renders them: sorted by
 * filename, each {sha, filename, status, additions, deletions, changes, blob_url, raw_url,
 * contents_url, patch}. New array, NULL on OOM.
 */
json_t *gh_pr_files(TwinCall *c, json_t *repo, json_t *pr)
{
        const char *head = gh_pr_head_sha(repo, pr);
        json_t *old = pr_compare_tree(repo, pr), *new = gh_tree_at(repo, head);
        json_t *trees[] = {old, new};
        _cleanup_json_ json_t *paths = tree_paths(trees, 2), *out = json_array();
        if (!paths || !out)
                return NULL;
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        size_t i;
        json_t *p;
        json_array_foreach (paths, i, p) {
                const char *path = json_string_value(p);
                const char *a = json_string_value(json_object_get(old, path)),
                           *b = json_string_value(json_object_get(new, path));
                if (streq_ptr(a, b))
                        continue;
                _cleanup_free_ char *patch = NULL, *blob = NULL, *raw = NULL, *contents = NULL;
                size_t adds, dels;
                int r = gh_line_diff(a, b, &patch, &adds, &dels);
                if (r < 0)
                        return NULL;
                size_t pl = strlen(patch);
                if (pl > 0 && patch[pl - 1] == '\n')
                        patch[pl - 1] = 0; /* github.com's patch has no final newline */
                char sha[TWIN_SHA1_HEX];
                gh_blob_sha(b ? b : a, strlen(b ? b : a), sha);
                if (asprintf(&blob, GH_HTML_BASE "/%s/%s/blob/%s/%s", owner, name, head, path) <
                            0 ||
                    asprintf(&raw, GH_HTML_BASE "/%s/%s/raw/%s/%s", owner, name, head, path) < 0 ||
                    asprintf(&contents, "%s/repos/%s/%s/contents/%s?ref=%s", c->base_url, owner,
                             name, path, head) < 0)
                        return NULL;
                json_t *f = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:s}", "sha",
                                      sha, "filename", path, "status",
                                      !a   ? "added"
                                      : !b ? "removed"
                                           : "modified",
                                      "additions", (json_int_t)adds, "deletions", (json_int_t)dels,
                                      "changes", (json_int_t)(adds + dels), "blob_url", blob,
                                      "raw_url", raw, "contents_url", contents, "patch", patch);
                if (json_array_append_new(out, f) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

/*
 * Writes git's diff of the trees old and new (objects {path: content}, NULL for none) to f:
 * with stat, first the diffstat git format-patch prints. 0 or -ENOMEM.
 */
static int tree_diff(FILE *f, json_t *old, json_t *new, bool stat)
{
        json_t *trees[] = {old, new};
        _cleanup_json_ json_t *paths = tree_paths(trees, 2), *patches = json_array();
        if (!paths || !patches)
                return -ENOMEM;
        size_t i, files = 0, all_adds = 0, all_dels = 0, width = 0, most = 0;
        json_t *p;
        /* first pass: the patches and counts (the diffstat comes before them) */
        json_array_foreach (paths, i, p) {
                const char *path = json_string_value(p);
                const char *a = json_string_value(json_object_get(old, path)),
                           *b = json_string_value(json_object_get(new, path));
                _cleanup_free_ char *patch = NULL;
                size_t adds = 0, dels = 0;
                if (!streq_ptr(a, b) && gh_line_diff(a, b, &patch, &adds, &dels) < 0)
                        return -ENOMEM;
                if (json_array_append_new(
                            patches, json_pack("{s:s, s:I, s:I}", "patch", strempty(patch), "adds",
                                               (json_int_t)adds, "dels", (json_int_t)dels)) < 0)
                        return -ENOMEM;
                if (streq_ptr(a, b))
                        continue;
                files++;
                all_adds += adds;
                all_dels += dels;
                width = strlen(path) > width ? strlen(path) : width;
                most = adds + dels > most ? adds + dels : most;
        }
        if (stat && files > 0) {
                int digits = snprintf(NULL, 0, "%zu", most);
                json_array_foreach (paths, i, p) {
                        json_t *x = json_array_get(patches, i);
                        size_t adds = (size_t)json_integer_value(json_object_get(x, "adds")),
                               dels = (size_t)json_integer_value(json_object_get(x, "dels"));
                        const char *path = json_string_value(p);
                        if (streq_ptr(json_string_value(json_object_get(old, path)),
                                      json_string_value(json_object_get(new, path))))
                                continue;
                        /* bars scale down past 50 columns, as git's do */
                        size_t scale = most > 50 ? most : 50, pa = adds * 50 / scale,
                               pd = dels * 50 / scale;
                        if (adds && !pa)
                                pa = 1;
                        if (dels && !pd)
                                pd = 1;
                        fprintf(f, " %-*s | %*zu %s", (int)width, path, digits, adds + dels, "");
                        for (size_t k = 0; k < pa; k++)
                                fputc('+', f);
                        for (size_t k = 0; k < pd; k++)
                                fputc('-', f);
                        fputc('\n', f);
                }
                fprintf(f, " %zu file%s changed", files, files == 1 ? "" : "s");
                if (all_adds)
                        fprintf(f, ", %zu insertion%s(+)", all_adds, all_adds == 1 ? "" : "s");
                if (all_dels)
                        fprintf(f, ", %zu deletion%s(-)", all_dels, all_dels == 1 ? "" : "s");
                fputc('\n', f);
                /* git's summary of created and deleted files */
                json_array_foreach (paths, i, p) {
                        const char *path = json_string_value(p);
                        bool in_old = json_object_get(old, path),
                             in_new = json_object_get(new, path);
                        if (in_old != in_new)
                                fprintf(f, " %s mode 100644 %s\n", in_new ? "create" : "delete",
                                        path);
                }
                fputc('\n', f);
        }
        json_array_foreach (paths, i, p) {
                const char *path = json_string_value(p);
                const char *a = json_string_value(json_object_get(old, path)),
                           *b = json_string_value(json_object_get(new, path));
                if (streq_ptr(a, b))
                        continue;
                char sa[TWIN_SHA1_HEX] = "0000000000", sb[TWIN_SHA1_HEX] = "0000000000";
                if (a)
                        gh_blob_sha(a, strlen(a), sa);
                if (b)
                        gh_blob_sha(b, strlen(b), sb);
                fprintf(f, "diff --git a/%s b/%s\n", path, path);
                if (!a)
                        fprintf(f, "new file mode 100644\nindex 0000000..%.7s\n--- /dev/null\n",
                                sb);
                else if (!b)
                        fprintf(f, "deleted file mode 100644\nindex %.7s..0000000\n", sa);
                else
                        fprintf(f, "index %.7s..%.7s 100644\n", sa, sb);
                if (a)
                        fprintf(f, "--- a/%s\n", path);
                fprintf(f, b ? "+++ b/%s\n" : "+++ /dev/null\n", path);
                fputs(json_get_str(json_array_get(patches, i), "patch"), f);
        }
        return 0;
}

/* The unified diff of a pull request (git diff format, as github.com's .diff). */
char *gh_pr_diff_text(json_t *repo, json_t *pr)
{
        return gh_tree_diff_text(pr_compare_tree(repo, pr),
                                 gh_tree_at(repo, gh_pr_head_sha(repo, pr)));
}

char *gh_tree_diff_text(json_t *old, json_t *new)
{
        _cleanup_free_ char *out = NULL;
        size_t outlen = 0;
        FILE *f = open_memstream(&out, &outlen);
        if (!f)
                return NULL;
        int r = tree_diff(f, old, new, false);
        if (fclose(f) != 0 || r < 0)
                return NULL;
        return TAKE_PTR(out);
}

/*
 * The pull request as github.com's .patch: git format-patch of each of its commits, oldest
 * first (mbox "From <sha> Mon Sep 17 00:00:00 2001" headers, subject "[PATCH k/n]", the
 * diffstat, the diff against the commit's first parent).
 */
char *gh_pr_patch_text(json_t *repo, json_t *pr)
{
        const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
        const char *mb = head && base ? gh_pr_merge_base(repo, base, head) : NULL;
        _cleanup_json_ json_t *commits = gh_pr_commits_between(repo, mb ? mb : base, head);
        if (!commits)
                return NULL;
        return gh_commits_patch_text(repo, commits);
}

char *gh_commits_patch_text(json_t *repo, json_t *commits)
{
        _cleanup_free_ char *out = NULL;
        size_t outlen = 0, n = json_array_size(commits), i;
        FILE *f = open_memstream(&out, &outlen);
        if (!f)
                return NULL;
        json_t *cm;
        int r = 0;
        json_array_foreach (commits, i, cm) {
                json_t *author = json_object_get(cm, "author");
                const char *msg = strempty(json_get_str(cm, "message"));
                size_t l = strcspn(msg, "\n");
                const char *rest = msg + l;
                while (*rest == '\n')
                        rest++;
                /* RFC 2822 date of the author date (seconds since the epoch in UTC) */
                char date[64] = "";
                struct tm tm = {};
                const char *d = json_get_str(author, "date");
                if (d && strptime(d, "%Y-%m-%dT%H:%M:%SZ", &tm))
                        strftime(date, sizeof(date), "%a, %-d %b %Y %H:%M:%S +0000", &tm);
                fprintf(f, "From %s Mon Sep 17 00:00:00 2001\nFrom: %s <%s>\nDate: %s\n",
                        json_get_str(cm, "sha"), strempty(json_get_str(author, "name")),
                        strempty(json_get_str(author, "email")), date);
                if (n > 1)
                        fprintf(f, "Subject: [PATCH %zu/%zu] %.*s\n\n", i + 1, n, (int)l, msg);
                else
                        fprintf(f, "Subject: [PATCH] %.*s\n\n", (int)l, msg);
                if (*rest)
                        fprintf(f, "%s%s", rest, rest[strlen(rest) - 1] == '\n' ? "" : "\n");
                fputs("---\n", f);
                const char *parent =
                        json_string_value(json_array_get(json_object_get(cm, "parents"), 0));
                if ((r = tree_diff(f, parent ? gh_tree_at(repo, parent) : NULL,
                                   json_object_get(cm, "tree"), true)) < 0)
                        break;
                fputs("\n", f);
        }
        if (fclose(f) != 0 || r < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* ------------------------------------------------------------------ branch protection */

/* The latest state of context on sha: a commit status's, or a check run's conclusion. */
static const char *check_state(json_t *repo, const char *sha, const char *context)
{
        json_t *statuses = json_object_get(repo, "statuses"),
               *runs = json_object_get(repo, "check_runs");
        for (size_t i = json_array_size(statuses); i-- > 0;) {
                json_t *st = json_array_get(statuses, i);
                if (streq_ptr(json_get_str(st, "sha"), sha) &&
                    streq_ptr(json_get_str(st, "context"), context))
                        return json_get_str(st, "state");
        }
        for (size_t i = json_array_size(runs); i-- > 0;) {
                json_t *run = json_array_get(runs, i);
                if (!streq_ptr(json_get_str(run, "head_sha"), sha) ||
                    !streq_ptr(json_get_str(run, "name"), context))
                        continue;
                const char *concl = json_get_str(run, "conclusion");
                if (!concl)
                        return "pending";
                return streq(concl, "success") || streq(concl, "neutral") || streq(concl, "skipped")
                               ? "success"
                               : "failure";
        }
        return NULL;
}

/*
 * Whether one of contexts (an array of strings) holds the merge of sha back: strict (branch
 * protection's rule), its latest status (or check run) on sha is not success; else (a pull
 * request's seeded contexts), it is failing (failure or error). Writes GitHub's 405 message
 * into msg (len bytes) when so: "Required status check \"ci/test\" is failing." (failure,
 * error) or "... is expected." (pending, or nothing reported yet) — the words github.com
 * answers a merge with.
 */
static bool contexts_unmet(json_t *repo, const char *sha, json_t *contexts, bool strict, char *msg,
                           size_t len)
{
        size_t i;
        json_t *ctx;
        json_array_foreach (contexts, i, ctx) {
                const char *st = check_state(repo, sha, json_string_value(ctx));
                bool failing = streq_ptr(st, "failure") || streq_ptr(st, "error");
                if (strict ? !streq_ptr(st, "success") : failing) {
                        snprintf(msg, len, "Required status check \"%s\" is %s.",
                                 json_string_value(ctx),
                                 !st || streq(st, "pending") ? "expected" : "failing");
                        return true;
                }
        }
        return false;
}

/*
 * Whether merging pr is refused now, and why (GitHub's 405 message into msg, len bytes):
 * - the pull request's own required contexts (required_contexts[], which its seed's
 *   statuses mark) while one's latest status on the head is failing — for everyone, as a
 *   branch seeded protected without details is. That is hosted Pome's gate
 *   (packages/twin-github/src/domain/pulls.ts mergePullRequest refuses a failing combined
 *   status), kept to the contexts the seed named: a seeded status says CI ran and what it
 *   found, not that CI must report again on every new head (a pending or not yet reported
 *   context does not hold the merge back; a seed wanting GitHub's whole rule declares the
 *   base branch's protection);
 * - the base branch's protection (GitHub "About protected branches": required status checks
 *   on the head commit, strict = head up to date with base, required approving reviews; an
 *   admin passes when enforce_admins is off).
 */
bool gh_pr_blocked(TwinCall *c, json_t *repo, json_t *pr, char *msg, size_t len)
{
        const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
        if (contexts_unmet(repo, head, json_object_get(pr, "required_contexts"), false, msg, len))
                return true;
        json_t *b = gh_branch_find(repo, json_get_str(pr, "base"));
        json_t *p = json_object_get(b, "protection");
        if (!json_is_true(json_object_get(b, "protected")) || !json_is_object(p))
                return false;
        const char *viewer = json_get_str(c->world, "viewer");
        if (viewer && strcasecmp(viewer, json_get_str(repo, "owner")) == 0 &&
            !json_is_true(json_object_get(p, "enforce_admins")))
                return false;
        json_t *checks = json_object_get(p, "required_status_checks");
        size_t i;
        if (contexts_unmet(repo, head, json_object_get(checks, "contexts"), true, msg, len))
                return true;
        if (json_is_true(json_object_get(checks, "strict")) && head && base &&
            !gh_pr_is_ancestor(repo, base, head)) {
                snprintf(msg, len, "Head branch is out of date. Review and try the merge again.");
                return true;
        }
        json_t *reviews = json_object_get(p, "required_pull_request_reviews");
        if (json_is_object(reviews)) {
                int64_t need = json_integer_value(
                        json_object_get(reviews, "required_approving_review_count"));
                /* each reviewer's latest submitted review counts */
                _cleanup_json_ json_t *latest = json_object();
                json_t *rv;
                if (!latest)
                        return false;
                json_array_foreach (json_object_get(pr, "reviews"), i, rv) {
                        const char *state = json_get_str(rv, "state"),
                                   *who = json_get_str(rv, "user");
                        if (who && (streq_ptr(state, "APPROVED") ||
                                    streq_ptr(state, "CHANGES_REQUESTED") ||
                                    streq_ptr(state, "DISMISSED")))
                                json_object_set(latest, who, json_object_get(rv, "state"));
                }
                int64_t approvals = 0;
                bool changes = false;
                const char *who;
                json_t *st;
                json_object_foreach (latest, who, st) {
                        approvals += streq_ptr(json_string_value(st), "APPROVED");
                        changes = changes || streq_ptr(json_string_value(st), "CHANGES_REQUESTED");
                }
                if (changes) {
                        snprintf(msg, len, "Changes requested by a reviewer with write access.");
                        return true;
                }
                if (approvals < need) {
                        snprintf(msg, len,
                                 "At least %lld approving review%s required by reviewers with "
                                 "write access.",
                                 (long long)need, need == 1 ? " is" : "s are");
                        return true;
                }
        }
        return false;
}

/* ------------------------------------------------------------------ rendering */

static json_t *render_ref(TwinCall *c, json_t *repo, const char *ref, const char *sha)
{
        const char *owner = json_get_str(repo, "owner");
        _cleanup_free_ char *label = NULL;
        if (asprintf(&label, "%s:%s", owner, strempty(ref)) < 0)
                return NULL;
        return json_pack("{s:s, s:s?, s:s?, s:o, s:o}", "label", label, "ref", ref, "sha", sha,
                         "user", gh_render_user(c, owner), "repo", gh_render_repo(c, repo));
}

static json_t *render_users(TwinCall *c, json_t *logins)
{
        _cleanup_json_ json_t *a = json_array();
        size_t i;
        json_t *l;
        if (!a)
                return NULL;
        json_array_foreach (logins, i, l) {
                if (json_array_append_new(a, gh_render_user(c, json_string_value(l))) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

/* Whether the pull request's head merges cleanly into its base (null when unknown). */
static json_t *pr_mergeable(json_t *repo, json_t *pr)
{
        if (!streq_ptr(json_get_str(pr, "state"), "open"))
                return json_is_true(json_object_get(pr, "merged")) ? json_false() : json_null();
        const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
        const char *mb = head && base ? gh_pr_merge_base(repo, base, head) : NULL;
        if (!mb)
                return json_null();
        _cleanup_json_ json_t *merged = NULL;
        int r = gh_tree_merge(gh_tree_at(repo, mb), gh_tree_at(repo, base), gh_tree_at(repo, head),
                              &merged);
        return r < 0 ? json_null() : json_boolean(r == 0);
}

json_t *gh_render_pull(TwinCall *c, json_t *repo, json_t *pr, bool full)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        long long n = json_integer_value(json_object_get(pr, "number"));
        _cleanup_free_ char *repo_url = NULL, *url = NULL, *html = NULL, *issue_url = NULL,
                            *commits_url = NULL, *rc_url = NULL, *rc1_url = NULL,
                            *comments_url = NULL, *statuses_url = NULL, *diff = NULL, *patch = NULL;
        const char *head_sha = gh_pr_head_sha(repo, pr), *base_sha = gh_pr_base_sha(repo, pr);
        if (asprintf(&repo_url, "%s/repos/%s/%s", c->base_url, owner, name) < 0 ||
            asprintf(&url, "%s/pulls/%lld", repo_url, n) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/pull/%lld", owner, name, n) < 0 ||
            asprintf(&diff, "%s.diff", html) < 0 || asprintf(&patch, "%s.patch", html) < 0 ||
            asprintf(&issue_url, "%s/issues/%lld", repo_url, n) < 0 ||
            asprintf(&commits_url, "%s/commits", url) < 0 ||
            asprintf(&rc_url, "%s/comments", url) < 0 ||
            asprintf(&rc1_url, "%s/pulls/comments{/number}", repo_url) < 0 ||
            asprintf(&comments_url, "%s/comments", issue_url) < 0 ||
            asprintf(&statuses_url, "%s/statuses/%s", repo_url, strempty(head_sha)) < 0)
                return NULL;
        _cleanup_json_ json_t *assignees = render_users(c, json_object_get(pr, "assignees"));
        if (!assignees)
                return NULL;
        const char *user = json_get_str(pr, "user");
        const char *merged_by = json_get_str(pr, "merged_by");
        _cleanup_json_ json_t *o = json_pack(
                "{s:s, s:O, s:O, s:s, s:s, s:s, s:s, s:I, s:O, s:O, s:O, s:o, s:O, s:o, s:o, "
                "s:n, s:O, s:O, s:O, s:O, s:O?, s:o, s:O, s:o, s:[], s:o, s:o, s:s, s:s, "
                "s:s, s:s, s:s, s:s, s:n, s:b}",
                "url", url, "id", json_object_get(pr, "id"), "node_id",
                json_object_get(pr, "node_id"), "html_url", html, "diff_url", diff, "patch_url",
                patch, "issue_url", issue_url, "number", (json_int_t)n, "state",
                json_object_get(pr, "state"), "locked", json_object_get(pr, "locked"), "title",
                json_object_get(pr, "title"), "user", gh_render_user(c, user), "body",
                json_object_get(pr, "body"), "labels",
                gh_render_labels(c, repo, json_object_get(pr, "labels")), "milestone",
                gh_render_milestone(c, repo, json_object_get(pr, "milestone")),
                "active_lock_reason", "created_at", json_object_get(pr, "created_at"), "updated_at",
                json_object_get(pr, "updated_at"), "closed_at", json_object_get(pr, "closed_at"),
                "merged_at", json_object_get(pr, "merged_at"), "merge_commit_sha",
                json_object_get(pr, "merge_commit_sha"), "assignee",
                json_array_size(assignees) ? json_incref(json_array_get(assignees, 0))
                                           : json_null(),
                "assignees", assignees, "requested_reviewers",
                render_users(c, json_object_get(pr, "requested_reviewers")), "requested_teams",
                "head", render_ref(c, repo, json_get_str(pr, "head"), head_sha), "base",
                render_ref(c, repo, json_get_str(pr, "base"), base_sha), "commits_url", commits_url,
                "review_comments_url", rc_url, "review_comment_url", rc1_url, "comments_url",
                comments_url, "statuses_url", statuses_url, "author_association",
                gh_association(repo, user), "auto_merge", "draft",
                json_is_true(json_object_get(pr, "draft")));
        if (!o)
                return NULL;
        _cleanup_json_ json_t *links = json_pack(
                "{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}", "self",
                "href", url, "html", "href", html, "issue", "href", issue_url, "comments", "href",
                comments_url, "review_comments", "href", rc_url, "review_comment", "href", rc1_url,
                "commits", "href", commits_url, "statuses", "href", statuses_url);
        if (!links || json_object_set(o, "_links", links) < 0)
                return NULL;
        if (!full)
                return TAKE_PTR(o);

        _cleanup_json_ json_t *files = gh_pr_files(c, repo, pr);
        const char *mb = head_sha && base_sha ? gh_pr_merge_base(repo, base_sha, head_sha) : NULL;
        _cleanup_json_ json_t *commits = gh_pr_commits_between(repo, mb ? mb : base_sha, head_sha);
        if (!files || !commits)
                return NULL;
        json_int_t adds = 0, dels = 0;
        size_t i;
        json_t *f;
        json_array_foreach (files, i, f) {
                adds += json_integer_value(json_object_get(f, "additions"));
                dels += json_integer_value(json_object_get(f, "deletions"));
        }
        json_t *mergeable = pr_mergeable(repo, pr);
        const char *mstate = json_is_true(mergeable)    ? "clean"
                             : json_is_false(mergeable) ? "dirty"
                                                        : "unknown";
        if (json_is_true(json_object_get(pr, "draft")) && json_is_true(mergeable))
                mstate = "draft";
        else if (json_is_true(mergeable) && gh_status_count(repo, head_sha) > 0 &&
                 !streq_ptr(gh_combined_state(repo, head_sha), "success"))
                mstate = "unstable"; /* "failing/pending commit status", GitHub's docs */
        char why[256];
        if (json_is_true(mergeable) && !streq(mstate, "draft") &&
            gh_pr_blocked(c, repo, pr, why, sizeof(why)))
                mstate = "blocked";
        if (!streq_ptr(json_get_str(pr, "state"), "open"))
                mstate = "unknown";
        _cleanup_json_ json_t *more = json_pack(
                "{s:O, s:o, s:o, s:s, s:o, s:I, s:I, s:b, s:I, s:I, s:I, s:I}", "merged",
                json_object_get(pr, "merged"), "mergeable", mergeable, "rebaseable",
                json_incref(mergeable), "mergeable_state", mstate, "merged_by",
                merged_by ? gh_render_user(c, merged_by) : json_null(), "comments",
                (json_int_t)json_array_size(json_object_get(pr, "comments")), "review_comments",
                (json_int_t)json_array_size(json_object_get(pr, "review_comments")),
                "maintainer_can_modify", json_is_true(json_object_get(pr, "maintainer_can_modify")),
                "commits", (json_int_t)json_array_size(commits), "additions", adds, "deletions",
                dels, "changed_files", (json_int_t)json_array_size(files));
        if (!more || json_object_update(o, more) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* ------------------------------------------------------------------ arguments */

int gh_arg_pull_number(TwinCall *c, int64_t *ret)
{
        int r = twin_arg_int(c->args, "pull_number", 1, INT32_MAX, ret);
        if (r == -ENOENT)
                r = twin_arg_int(c->args, "pullNumber", 1, INT32_MAX, ret);
        return r;
}

int gh_arg_repo_pull(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_pr)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        int64_t n;
        r = gh_arg_pull_number(c, &n);
        if (r == -ENOENT)
                return gh_invalid(rp, "PullRequest", "pull_number", "missing_field");
        json_t *pr = r < 0 ? NULL : gh_number_find(repo, "pull_requests", n, NULL);
        if (!pr)
                return gh_not_found(rp);
        *ret_repo = repo;
        *ret_pr = pr;
        return 1;
}

/* 422 Validation Failed with one custom error message (GitHub's "custom" code). */
int gh_invalid_custom(TwinReply *rp, const char *resource, const char *message)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:[{s:s, s:s, s:s}], s:s, s:s}", "message",
                                         "Validation Failed", "errors", "resource", resource,
                                         "code", "custom", "message", message, "documentation_url",
                                         GH_DOCS_URL, "status", "422"));
}

/* Characters (UTF-8 code points) of s. */
static size_t utf8_chars(const char *s)
{
        size_t n = 0;
        for (; s && *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        return n;
}

/*
 * Whether s is longer than max characters; if so rp holds GitHub's 422 {resource, field,
 * code: custom, message: "<field> is too long (maximum is <max> characters)"} (the same
 * refusal github.c gives issues). Returns 1 when too long, 0 when fine, -ENOMEM.
 */
int gh_pulls_too_long(TwinReply *rp, const char *resource, const char *field, const char *s,
                      size_t max)
{
        if (utf8_chars(s) <= max)
                return 0;
        char msg[128];
        snprintf(msg, sizeof(msg), "%s is too long (maximum is %zu characters)", field, max);
        int r = twin_reply_body(rp, 422,
                                json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}], s:s, s:s}", "message",
                                          "Validation Failed", "errors", "resource", resource,
                                          "code", "custom", "field", field, "message", msg,
                                          "documentation_url", GH_DOCS_URL, "status", "422"));
        return r < 0 ? r : 1;
}

/*
 * Records that pr (a row of the world, changed in place) differs from before (its deep copy
 * taken before the change): updated_at becomes now and the tape gets both. 0 or -ENOMEM.
 */
int gh_pr_touch(TwinCall *c, TwinReply *rp, const json_t *before, json_t *pr)
{
        if (json_equal((json_t *)before, pr))
                return 0;
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if (json_object_set_new(pr, "updated_at", json_string(now)) < 0)
                return -ENOMEM;
        return twin_reply_mutation(rp, before, pr);
}

/* ------------------------------------------------------------------ actions */

static bool pr_matches(json_t *repo, json_t *pr, const char *state, const char *head,
                       const char *base)
{
        if (!streq(state, "all") && !streq_ptr(json_get_str(pr, "state"), state))
                return false;
        if (base && !streq_ptr(json_get_str(pr, "base"), base))
                return false;
        /* "owner:branch", github.com's documented form; a bare branch name is silently
         * ignored there (every pull request matches), a well-known trap we keep */
        const char *colon = head ? strchr(head, ':') : NULL;
        if (colon) {
                if (strncasecmp(head, strempty(json_get_str(repo, "owner")),
                                (size_t)(colon - head)) != 0 ||
                    strlen(strempty(json_get_str(repo, "owner"))) != (size_t)(colon - head))
                        return false;
                if (!streq_ptr(json_get_str(pr, "head"), colon + 1))
                        return false;
        }
        return true;
}

typedef struct PullOrder {
        const char *key;
        bool desc;
} PullOrder;

static int pull_cmp(const void *a, const void *b, void *userdata)
{
        const PullOrder *o = userdata;
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int d = o->key ? strcmp(strempty(json_get_str(x, o->key)),
                                strempty(json_get_str(y, o->key)))
                       : 0;
        if (d == 0) {
                json_int_t nx = json_integer_value(json_object_get(x, "number")),
                           ny = json_integer_value(json_object_get(y, "number"));
                d = (nx > ny) - (nx < ny);
        }
        return o->desc ? -d : d;
}

int gh_act_list_pull_requests(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *state = "open", *head = NULL, *base = NULL, *sort = "created",
                   *direction = NULL;
        if (twin_arg_str(c->args, "state", &state) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "state", "invalid");
        /* the MCP server's enums are lower case; accept OPEN/CLOSED as list_issues does */
        state = strcasecmp(state, "open") == 0     ? "open"
                : strcasecmp(state, "closed") == 0 ? "closed"
                : strcasecmp(state, "all") == 0    ? "all"
                                                   : NULL;
        if (!state)
                return gh_invalid(rp, "PullRequest", "state", "invalid");
        if (twin_arg_str(c->args, "head", &head) == -EINVAL ||
            twin_arg_str(c->args, "base", &base) == -EINVAL)
                return gh_invalid(rp, "PullRequest", head ? "base" : "head", "invalid");
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            (!streq(sort, "created") && !streq(sort, "updated") && !streq(sort, "popularity") &&
             !streq(sort, "long-running")))
                return gh_invalid(rp, "PullRequest", "sort", "invalid");
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (direction && !streq(direction, "asc") && !streq(direction, "desc")))
                return gh_invalid(rp, "PullRequest", "direction", "invalid");

        json_t *pulls = json_object_get(repo, "pull_requests");
        size_t n = 0, i;
        json_t *pr;
        _cleanup_free_ json_t **v = calloc(json_array_size(pulls) + 1, sizeof(json_t *));
        if (!v)
                return -ENOMEM;
        json_array_foreach (pulls, i, pr) {
                if (pr_matches(repo, pr, state, head, base))
                        v[n++] = pr;
        }
        /* popularity (comments) and long-running (age) have no data here beyond creation */
        PullOrder order = {
                .key = streq(sort, "updated") ? "updated_at" : "created_at",
                /* direction defaults to desc, but to asc for long-running (docs) */
                .desc = direction ? streq(direction, "desc") : !streq(sort, "long-running"),
        };
        if (streq(sort, "long-running"))
                order.desc = !order.desc;
        qsort_r(v, n, sizeof(json_t *), pull_cmp, &order);
        _cleanup_json_ json_t *all = json_array(), *page = NULL, *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(all, v[i]) < 0)
                        return -ENOMEM;
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        json_array_foreach (page, i, pr) {
                if (json_array_append_new(out, gh_render_pull(c, repo, pr, false)) < 0)
                        return -ENOMEM;
        }
        if (!c->request) { /* MCP: MinimalPullRequest[] as github-mcp-server answers */
                _cleanup_json_ json_t *fields = NULL, *min = gh_mcp_pulls(out);
                if (!min)
                        return -ENOMEM;
                if (json_object_get(c->args, "fields") &&
                    twin_arg_strv(c->args, "fields", &fields) == -EINVAL)
                        return gh_invalid(rp, "PullRequest", "fields", "invalid");
                /* fields: each pull request keeps only the members named */
                json_array_foreach (min, i, pr) {
                        const char *key;
                        json_t *member;
                        void *tmp;
                        json_object_foreach_safe (pr, tmp, key, member) {
                                if (fields && json_array_size(fields) > 0 &&
                                    !gh_strv_has(fields, key))
                                        json_object_del(pr, key);
                        }
                }
                return twin_reply_body(rp, 200, TAKE_PTR(min));
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* The media type the caller's Accept asks of GET .../pulls/{n}: "diff", "patch" or NULL. */
int gh_act_pull_request_read(TwinCall *c, TwinReply *rp)
{
        const char *method = "get";
        if (twin_arg_str(c->args, "method", &method) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "method", "invalid");
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        const char *format = streq(method, "get") ? gh_accept_format(c) : NULL;
        if (streq_ptr(format, "patch"))
                return gh_reply_text(rp, "application/vnd.github.patch; charset=utf-8",
                                     gh_pr_patch_text(repo, pr));
        if (format)
                method = "get_diff";
        /* over MCP every method answers what github-mcp-server's pull_request_read does */
        bool mcp = !c->request;
        if (streq(method, "get")) {
                _cleanup_json_ json_t *full = gh_render_pull(c, repo, pr, true);
                if (!full)
                        return -ENOMEM;
                return twin_reply_body(rp, 200, mcp ? gh_mcp_pull(full) : json_incref(full));
        }
        if (streq(method, "get_diff"))
                return gh_reply_text(rp, "application/vnd.github.diff; charset=utf-8",
                                     gh_pr_diff_text(repo, pr));
        if (streq(method, "get_files")) {
                _cleanup_json_ json_t *files = gh_pr_files(c, repo, pr), *page = NULL;
                if (!files || (r = gh_paginate(c, rp, files, &page)) < 0)
                        return files ? r : -ENOMEM;
                return twin_reply_body(rp, 200, mcp ? gh_mcp_files(page) : json_incref(page));
        }
        if (streq(method, "get_status"))
                r = gh_reply_combined_status(c, rp, repo, gh_pr_head_sha(repo, pr));
        else if (streq(method, "get_check_runs"))
                r = gh_reply_check_runs(c, rp, repo, gh_pr_head_sha(repo, pr));
        else if (streq(method, "get_reviews"))
                r = gh_reply_reviews(c, rp, repo, pr);
        else if (streq(method, "get_review_comments"))
                r = gh_reply_review_comments(c, rp, repo, pr);
        else
                r = 1;
        if (r <= 0) {
                if (r < 0 || !mcp || rp->status != 200)
                        return r;
                json_t *b = rp->body;
                return gh_mcp_reply(rp,
                                    streq(method, "get_status")       ? gh_mcp_combined_status(b)
                                    : streq(method, "get_check_runs") ? gh_mcp_check_runs(b)
                                    : streq(method, "get_reviews")
                                            ? gh_mcp_reviews(b)
                                            : gh_mcp_review_threads(b, gh_pr_head_sha(repo, pr)));
        }
        if (streq(method, "get_comments")) {
                _cleanup_json_ json_t *all = json_array(), *page = NULL;
                size_t i;
                json_t *cm;
                if (!all)
                        return -ENOMEM;
                json_array_foreach (json_object_get(pr, "comments"), i, cm) {
                        if (json_array_append_new(all, gh_render_comment(c, repo, pr, cm)) < 0)
                                return -ENOMEM;
                }
                if ((r = gh_paginate(c, rp, all, &page)) < 0)
                        return r;
                return twin_reply_body(rp, 200,
                                       mcp ? gh_mcp_issue_comments(page) : json_incref(page));
        }
        return gh_invalid(rp, "PullRequest", "method", "invalid");
}

int gh_act_get_pull_request_commits(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
        const char *mb = head && base ? gh_pr_merge_base(repo, base, head) : NULL;
        _cleanup_json_ json_t *commits = gh_pr_commits_between(repo, mb ? mb : base, head),
                              *page = NULL, *out = json_array();
        if (!commits || !out)
                return -ENOMEM;
        if ((r = gh_paginate(c, rp, commits, &page)) < 0)
                return r;
        size_t i;
        json_t *cm;
        json_array_foreach (page, i, cm) {
                if (json_array_append_new(out, gh_render_pr_commit(c, repo, cm)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* An open pull request of repo from head into base, or NULL. */
static json_t *open_pull_for(json_t *repo, const char *head, const char *base)
{
        size_t i;
        json_t *pr;
        json_array_foreach (json_object_get(repo, "pull_requests"), i, pr) {
                if (streq_ptr(json_get_str(pr, "state"), "open") &&
                    streq_ptr(json_get_str(pr, "head"), head) &&
                    streq_ptr(json_get_str(pr, "base"), base))
                        return pr;
        }
        return NULL;
}

/*
 * Checks that a pull request from head into base can exist (POST /pulls): both branches
 * exist, differ, and head has commits base lacks. 1 when fine, 0 when rp holds the 422.
 */
static int check_branches(TwinReply *rp, json_t *repo, const char *head, const char *base)
{
        const char *hs = gh_ref_sha(repo, head), *bs = gh_ref_sha(repo, base);
        if (!gh_branch_find(repo, base))
                return gh_invalid(rp, "PullRequest", "base", "invalid");
        if (!gh_branch_find(repo, head))
                return gh_invalid(rp, "PullRequest", "head", "invalid");
        if (streq(head, base) || gh_pr_is_ancestor(repo, hs, bs)) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "No commits between %s and %s", base, head) < 0)
                        return -ENOMEM;
                return gh_invalid_custom(rp, "PullRequest", m);
        }
        return 1;
}

int gh_act_create_pull_request(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *title = NULL, *body = NULL, *head = NULL, *base = NULL;
        bool draft = false, mcm = true;
        if ((r = twin_arg_str(c->args, "base", &base)) < 0)
                return gh_invalid(rp, "PullRequest", "base",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if ((r = twin_arg_str(c->args, "head", &head)) < 0)
                return gh_invalid(rp, "PullRequest", "head",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if ((r = twin_arg_str(c->args, "title", &title)) == -EINVAL ||
            (r == -ENOENT && !json_object_get(c->args, "issue")))
                return gh_invalid(rp, "PullRequest", "title",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if (twin_arg_str(c->args, "body", &body) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "body", "invalid");
        if (twin_arg_bool(c->args, "draft", &draft) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "draft", "invalid");
        if (twin_arg_bool(c->args, "maintainer_can_modify", &mcm) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "maintainer_can_modify", "invalid");
        _cleanup_json_ json_t *reviewers = NULL;
        if (json_object_get(c->args, "reviewers") &&
            twin_arg_strv(c->args, "reviewers", &reviewers) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "reviewers", "invalid");

        /* "owner:branch" names a branch of this repository's owner (no forks here) */
        const char *colon = strchr(head, ':');
        if (colon) {
                if (strncasecmp(head, strempty(json_get_str(repo, "owner")),
                                (size_t)(colon - head)) != 0 ||
                    strlen(strempty(json_get_str(repo, "owner"))) != (size_t)(colon - head))
                        return gh_invalid(rp, "PullRequest", "head", "invalid");
                head = colon + 1;
        }
        /* converting an issue into a pull request takes the issue's title */
        json_t *issue = NULL;
        size_t issue_idx = 0;
        if (json_object_get(c->args, "issue")) {
                int64_t in;
                if (twin_arg_int(c->args, "issue", 1, INT32_MAX, &in) < 0 ||
                    !(issue = gh_number_find(repo, "issues", in, &issue_idx)))
                        return gh_invalid(rp, "PullRequest", "issue", "invalid");
                title = json_get_str(issue, "title");
                body = json_get_str(issue, "body");
        }
        if (!title || !title[0])
                return gh_invalid(rp, "PullRequest", "title", "missing_field");
        if ((r = gh_pulls_too_long(rp, "PullRequest", "title", title, GH_PR_TITLE_MAX)) != 0 ||
            (r = gh_pulls_too_long(rp, "PullRequest", "body", body, GH_PR_BODY_MAX)) != 0)
                return r < 0 ? r : 0;
        if ((r = check_branches(rp, repo, head, base)) <= 0)
                return r;
        if (open_pull_for(repo, head, base)) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "A pull request already exists for %s:%s.",
                             json_get_str(repo, "owner"), head) < 0)
                        return -ENOMEM;
                return gh_invalid_custom(rp, "PullRequest", m);
        }
        if (reviewers && (r = gh_check_reviewers(c, rp, repo, NULL, reviewers)) <= 0)
                return r;

        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        const char *viewer = json_get_str(c->world, "viewer");
        int64_t id = gh_alloc_id(c->world);
        int64_t number = issue ? json_integer_value(json_object_get(issue, "number"))
                               : gh_max_number(repo) + 1;
        _cleanup_json_ json_t *row = json_pack(
                "{s:I, s:o, s:I, s:s, s:s?, s:s, s:n, s:b, s:s, s:[], s:[], s:n, s:[], s:s, s:s, "
                "s:n, s:s, s:s, s:s, s:s, s:b, s:b, s:n, s:n, s:n, s:O, s:[], s:[], s:b}",
                "id", (json_int_t)id, "node_id", gh_node_id("PullRequest", id), "number",
                (json_int_t)number, "title", title, "body", body, "state", "open", "state_reason",
                "locked", false, "user", viewer, "labels", "assignees", "milestone", "comments",
                "created_at", now, "updated_at", now, "closed_at", "head", head, "head_sha",
                gh_ref_sha(repo, head), "base", base, "base_sha", gh_ref_sha(repo, base), "draft",
                draft, "merged", false, "merged_at", "merged_by", "merge_commit_sha",
                "requested_reviewers", reviewers ? reviewers : json_array(), "reviews",
                "review_comments", "maintainer_can_modify", mcm);
        if (!row)
                return -ENOMEM;
        if (issue) {
                /* the issue becomes the pull request: same number, labels, comments */
                const char *keep[] = {"labels",   "assignees", "milestone",
                                      "comments", "user",      "created_at"};
                for (size_t k = 0; k < ELEMENTSOF(keep); k++)
                        if (json_object_set(row, keep[k], json_object_get(issue, keep[k])) < 0)
                                return -ENOMEM;
                if (json_array_remove(json_object_get(repo, "issues"), issue_idx) < 0)
                        return -ENOMEM;
        }
        if (json_array_append(json_object_get(repo, "pull_requests"), row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        _cleanup_free_ char *loc = NULL;
        if (asprintf(&loc, "%s/repos/%s/%s/pulls/%lld", c->base_url, json_get_str(repo, "owner"),
                     json_get_str(repo, "name"), (long long)number) < 0)
                return -ENOMEM;
        if (twin_reply_header(rp, "Location", json_string(loc)) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *out = gh_render_pull(c, repo, row, true);
        if (!out)
                return -ENOMEM;
        if (!c->request) /* MCP: MinimalResponse {id, url} */
                return twin_reply_body(rp, 201,
                                       gh_mcp_minimal_response(json_object_get(out, "id"),
                                                               json_get_str(out, "html_url")));
        return twin_reply_body(rp, 201, TAKE_PTR(out));
}

int gh_act_update_pull_request(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        const char *title = NULL, *body = NULL, *state = NULL, *base = NULL;
        bool draft, mcm;
        int rd, rm;
        if ((r = twin_arg_str(c->args, "title", &title)) == -EINVAL || (title && !title[0]))
                return gh_invalid(rp, "PullRequest", "title", "invalid");
        if (twin_arg_str(c->args, "body", &body) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "body", "invalid");
        if ((r = gh_pulls_too_long(rp, "PullRequest", "title", title, GH_PR_TITLE_MAX)) != 0 ||
            (r = gh_pulls_too_long(rp, "PullRequest", "body", body, GH_PR_BODY_MAX)) != 0)
                return r < 0 ? r : 0;
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (state && strcasecmp(state, "open") != 0 && strcasecmp(state, "closed") != 0))
                return gh_invalid(rp, "PullRequest", "state", "invalid");
        if (twin_arg_str(c->args, "base", &base) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "base", "invalid");
        if ((rd = twin_arg_bool(c->args, "draft", &draft)) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "draft", "invalid");
        if ((rm = twin_arg_bool(c->args, "maintainer_can_modify", &mcm)) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "maintainer_can_modify", "invalid");
        _cleanup_json_ json_t *reviewers = NULL;
        if (json_object_get(c->args, "reviewers") &&
            twin_arg_strv(c->args, "reviewers", &reviewers) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "reviewers", "invalid");
        bool merged = json_is_true(json_object_get(pr, "merged"));
        if (base && !streq_ptr(base, json_get_str(pr, "base"))) {
                if (merged || !streq_ptr(json_get_str(pr, "state"), "open"))
                        return gh_invalid_custom(rp, "PullRequest",
                                                 "Cannot change the base branch of a closed "
                                                 "pull request.");
                if ((r = check_branches(rp, repo, json_get_str(pr, "head"), base)) <= 0)
                        return r;
        }
        if (state && strcasecmp(state, "open") == 0 && merged)
                return gh_invalid_custom(rp, "PullRequest", "Cannot reopen a merged pull request.");
        if (state && strcasecmp(state, "open") == 0 &&
            !streq_ptr(json_get_str(pr, "state"), "open") &&
            open_pull_for(repo, json_get_str(pr, "head"), base ? base : json_get_str(pr, "base"))) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "A pull request already exists for %s:%s.",
                             json_get_str(repo, "owner"), json_get_str(pr, "head")) < 0)
                        return -ENOMEM;
                return gh_invalid_custom(rp, "PullRequest", m);
        }
        if (reviewers && (r = gh_check_reviewers(c, rp, repo, pr, reviewers)) <= 0)
                return r;

        _cleanup_json_ json_t *before = json_deep_copy(pr);
        if (!before)
                return -ENOMEM;
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if ((title && json_object_set_new(pr, "title", json_string(title)) < 0) ||
            (body && json_object_set_new(pr, "body", json_string(body)) < 0) ||
            (json_is_null(json_object_get(c->args, "body")) &&
             json_object_set_new(pr, "body", json_null()) < 0) ||
            (base && json_object_set_new(pr, "base", json_string(base)) < 0) ||
            (rd == 0 && json_object_set_new(pr, "draft", json_boolean(draft)) < 0) ||
            (rm == 0 && json_object_set_new(pr, "maintainer_can_modify", json_boolean(mcm)) < 0))
                return -ENOMEM;
        if (reviewers) {
                json_t *req = json_object_get(pr, "requested_reviewers");
                size_t i;
                json_t *l;
                json_array_foreach (reviewers, i, l) {
                        if (!gh_strv_has(req, json_string_value(l)) &&
                            json_array_append(req, l) < 0)
                                return -ENOMEM;
                }
        }
        if (state) {
                bool open = strcasecmp(state, "open") == 0;
                bool was_open = streq_ptr(json_get_str(pr, "state"), "open");
                if (open != was_open) {
                        /* closing pins the tips the pull request showed */
                        if (gh_pr_pin_tips(repo, pr) < 0 ||
                            json_object_set_new(pr, "state",
                                                json_string(open ? "open" : "closed")) < 0 ||
                            json_object_set_new(pr, "closed_at",
                                                open ? json_null() : json_string(now)) < 0 ||
                            json_object_set_new(pr, "closed_by",
                                                open ? json_null()
                                                     : json_string_or_null(json_get_str(
                                                               c->world, "viewer"))) < 0)
                                return -ENOMEM;
                }
        }
        if ((r = gh_pr_touch(c, rp, before, pr)) < 0)
                return r;
        _cleanup_json_ json_t *out = gh_render_pull(c, repo, pr, true);
        if (!out)
                return -ENOMEM;
        if (!c->request) /* MCP: MinimalResponse {id, url} */
                return twin_reply_body(rp, 200,
                                       gh_mcp_minimal_response(json_object_get(out, "id"),
                                                               json_get_str(out, "html_url")));
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* The merge of pr's head into its base: 0 with *ret_tree (new), 1 on a conflict. */
static int pr_merge_tree(json_t *repo, json_t *pr, json_t **ret_tree)
{
        const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
        const char *mb = head && base ? gh_pr_merge_base(repo, base, head) : NULL;
        if (!mb)
                return 1;
        return gh_tree_merge(gh_tree_at(repo, mb), gh_tree_at(repo, base), gh_tree_at(repo, head),
                             ret_tree);
}

int gh_act_merge_pull_request(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        if ((r = gh_arg_repo_pull(c, rp, &repo, &pr)) <= 0)
                return r;
        const char *method = "merge", *sha = NULL, *title = NULL, *message = NULL;
        if (twin_arg_str(c->args, "merge_method", &method) == -EINVAL ||
            (!streq(method, "merge") && !streq(method, "squash") && !streq(method, "rebase")))
                return gh_invalid(rp, "PullRequest", "merge_method", "invalid");
        if (gh_arg_str2(c, "sha", "expectedHeadSha", &sha) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "sha", "invalid");
        if (twin_arg_str(c->args, "commit_title", &title) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "commit_title", "invalid");
        if (twin_arg_str(c->args, "commit_message", &message) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "commit_message", "invalid");

        if (json_is_true(json_object_get(pr, "merged")) ||
            !streq_ptr(json_get_str(pr, "state"), "open"))
                return gh_fail(rp, 405, "Pull Request is not mergeable");
        if (json_is_true(json_object_get(pr, "draft")))
                return gh_fail(rp, 405, "Pull Request is still a draft");
        /* copies: moving the base branch below frees the strings the rows hold */
        _cleanup_free_ char *head = dup_or_null(gh_pr_head_sha(repo, pr)),
                            *base = dup_or_null(gh_pr_base_sha(repo, pr));
        if (!head || !base || !gh_branch_find(repo, json_get_str(pr, "base")))
                return gh_fail(rp, 405, "Pull Request is not mergeable");
        if (sha && !streq(sha, head))
                return gh_fail(rp, 409,
                               "Head branch was modified. Review and try the merge again.");
        /* A merge the rules refuse is GitHub's 405 "Method Not Allowed if merge cannot be
         * performed" (REST "Merge a pull request"), its message the protection's own
         * ("Required status check \"ci/test\" is failing."). Hosted Pome's twin answers 409
         * "Required status check failed"; the twin answers as github.com does, which
         * clients already handle: 409 there means the sha did not match. */
        char why[256];
        if (gh_pr_blocked(c, repo, pr, why, sizeof(why))) {
                if ((r = gh_fail(rp, 405, why)) < 0 ||
                    json_object_set_new(rp->body, "documentation_url",
                                        json_string(GH_PROTECTION_DOCS_URL)) < 0)
                        return r < 0 ? r : -ENOMEM;
                return 0;
        }
        _cleanup_json_ json_t *tree = NULL;
        if ((r = pr_merge_tree(repo, pr, &tree)) < 0)
                return r;
        if (r > 0)
                return gh_fail(rp, 405, "Pull Request is not mergeable");

        long long n = json_integer_value(json_object_get(pr, "number"));
        const char *viewer = json_get_str(c->world, "viewer");
        _cleanup_free_ char *msg = NULL;
        _cleanup_free_ char *new_sha = NULL;
        if (streq(method, "merge")) {
                _cleanup_free_ char *dflt = NULL;
                if (asprintf(&dflt, "Merge pull request #%lld from %s/%s", n,
                             json_get_str(repo, "owner"), json_get_str(pr, "head")) < 0 ||
                    asprintf(&msg, "%s\n\n%s", title ? title : dflt,
                             message ? message : json_get_str(pr, "title")) < 0)
                        return -ENOMEM;
                r = gh_pr_commit_new(c, repo, base, head, tree, msg, viewer, &new_sha);
        } else if (streq(method, "squash")) {
                _cleanup_free_ char *dflt = NULL;
                if (asprintf(&dflt, "%s (#%lld)", json_get_str(pr, "title"), n) < 0 ||
                    asprintf(&msg, "%s%s%s", title ? title : dflt, message ? "\n\n" : "",
                             strempty(message)) < 0)
                        return -ENOMEM;
                r = gh_pr_commit_new(c, repo, base, NULL, tree, msg, viewer, &new_sha);
        } else
                r = gh_pr_rebase(c, repo, base, head, &new_sha);
        if (r < 0)
                return r;
        if (r > 0)
                return gh_fail(rp, 405, "Pull Request is not mergeable");

        _cleanup_json_ json_t *before = json_deep_copy(pr);
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        json_t *bb = gh_branch_find(repo, json_get_str(pr, "base"));
        if (!before || json_object_set_new(bb, "sha", json_string(new_sha)) < 0 ||
            json_object_set_new(pr, "head_sha", json_string(head)) < 0 ||
            json_object_set_new(pr, "base_sha", json_string(base)) < 0 ||
            json_object_set_new(pr, "state", json_string("closed")) < 0 ||
            json_object_set_new(pr, "closed_at", json_string(now)) < 0 ||
            json_object_set_new(pr, "merged", json_true()) < 0 ||
            json_object_set_new(pr, "merged_at", json_string(now)) < 0 ||
            json_object_set_new(pr, "merged_by", json_string(viewer)) < 0 ||
            json_object_set_new(pr, "merge_commit_sha", json_string(new_sha)) < 0)
                return -ENOMEM;
        if ((r = gh_pr_touch(c, rp, before, pr)) < 0)
                return r;
        return twin_reply_body(rp, 200,
                               json_pack("{s:s, s:b, s:s}", "sha", new_sha, "merged", true,
                                         "message", "Pull Request successfully merged"));
}

int gh_act_update_pull_request_branch(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        if ((r = gh_arg_repo_pull(c, rp, &repo, &pr)) <= 0)
                return r;
        const char *expected = NULL;
        if (gh_arg_str2(c, "expected_head_sha", "expectedHeadSha", &expected) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "expected_head_sha", "invalid");
        if (!streq_ptr(json_get_str(pr, "state"), "open"))
                return gh_invalid_custom(rp, "PullRequest", "Pull request is closed.");
        const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
        json_t *hb = gh_branch_find(repo, json_get_str(pr, "head"));
        if (!head || !base || !hb)
                return gh_invalid_custom(rp, "PullRequest", "The head branch no longer exists.");
        if (expected && !streq(expected, head))
                return gh_invalid_custom(rp, "PullRequest",
                                         "expected head sha didn't match current head ref.");
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, GH_HTML_BASE "/%s/%s/pull/%lld", json_get_str(repo, "owner"),
                     json_get_str(repo, "name"),
                     (long long)json_integer_value(json_object_get(pr, "number"))) < 0)
                return -ENOMEM;
        if (!gh_pr_is_ancestor(repo, base, head)) {
                const char *mb = gh_pr_merge_base(repo, base, head);
                _cleanup_json_ json_t *tree = NULL;
                if (!mb)
                        return gh_invalid_custom(rp, "PullRequest",
                                                 "merge conflict between base and head");
                r = gh_tree_merge(gh_tree_at(repo, mb), gh_tree_at(repo, head),
                                  gh_tree_at(repo, base), &tree);
                if (r < 0)
                        return r;
                if (r > 0)
                        return gh_invalid_custom(rp, "PullRequest",
                                                 "merge conflict between base and head");
                _cleanup_free_ char *msg = NULL, *new_sha = NULL;
                if (asprintf(&msg, "Merge branch '%s' into %s", json_get_str(pr, "base"),
                             json_get_str(pr, "head")) < 0)
                        return -ENOMEM;
                r = gh_pr_commit_new(c, repo, head, base, tree, msg,
                                     json_get_str(c->world, "viewer"), &new_sha);
                if (r < 0)
                        return r;
                _cleanup_json_ json_t *before = json_deep_copy(hb);
                if (!before || json_object_set_new(hb, "sha", json_string(new_sha)) < 0 ||
                    json_object_set_new(pr, "head_sha", json_string(new_sha)) < 0)
                        return -ENOMEM;
                if ((r = twin_reply_mutation(rp, before, hb)) < 0)
                        return r;
        }
        return twin_reply_body(
                rp, 202,
                json_pack("{s:s, s:s}", "message", "Updating pull request branch.", "url", url));
}

/* ------------------------------------------------------------------ seed */

/* "2026-01-01T00:00:00Z" as seconds since the epoch (the one shape gh_time_valid takes). */
static int64_t seed_epoch(const char *t)
{
        struct tm tm = {};
        if (!t || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                         &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
                return 0;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        return (int64_t)timegm(&tm);
}

/*
 * A seeded pull request that is merged has its merge commit on base, as on github.com: the
 * base branch holds what the head brought (unless it already did, or the two conflict, in
 * which case the seed keeps base as written). Sets merge_commit_sha. 0 or -ENOMEM.
 */
static int seed_merge(TwinSeed *s, json_t *repo, json_t *pr, const char *merged_at,
                      const char *merged_by)
{
        json_t *bb = gh_branch_find(repo, json_get_str(pr, "base"));
        const char *head = json_get_str(pr, "head_sha"), *base = json_get_str(bb, "sha");
        if (!head || !base || gh_pr_is_ancestor(repo, head, base))
                return 0;
        const char *mb = gh_pr_merge_base(repo, base, head);
        _cleanup_json_ json_t *tree = NULL;
        if (!mb || gh_tree_merge(gh_tree_at(repo, mb), gh_tree_at(repo, base),
                                 gh_tree_at(repo, head), &tree) != 0)
                return 0;
        _cleanup_free_ char *msg = NULL;
        if (asprintf(&msg, "Merge pull request #%lld from %s/%s\n\n%s",
                     (long long)json_integer_value(json_object_get(pr, "number")),
                     json_get_str(repo, "owner"), json_get_str(pr, "head"),
                     json_get_str(pr, "title")) < 0)
                return -ENOMEM;
        json_t *cm = gh_commit_add(s->world, repo, base, head, tree, msg, merged_by,
                                   seed_epoch(merged_at));
        if (!cm || json_object_set(bb, "sha", json_object_get(cm, "sha")) < 0 ||
            json_object_set(pr, "merge_commit_sha", json_object_get(cm, "sha")) < 0 ||
            json_object_set(pr, "base_sha", json_array_get(json_object_get(cm, "parents"), 0)) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * The pull request part of a repository seed's pull_requests[] entry v at path, onto row
 * (the issue fields github.c's seed_item made): head and base (branches; a head branch the
 * seed lacks starts at base), author (the user), draft, merged (merged_by, merged_at),
 * requested_reviewers, reviews, and statuses and check_runs on the head commit; the
 * statuses' contexts must not be failing when it merges (required_contexts). Unknown
 * keys are refused naming their path. 0, -EINVAL with the message in s->err, -ENOMEM.
 */
int gh_seed_pull(TwinSeed *s, json_t *repo, const json_t *v, json_t *row, const char *path)
{
        static const char *const keys[] = {
                /* the issue fields (github.c seed_item) */
                "number", "title", "body", "state", "state_reason", "locked", "user", "labels",
                "assignees", "assignee", "milestone", "comments", "created_at", "updated_at",
                "closed_at",
                /* the pull request's own */
                "head", "base", "author", "draft", "merged", "merged_at", "merged_by",
                "maintainer_can_modify", "requested_reviewers", "reviews", "statuses",
                "check_runs"};
        int r = twin_seed_known(s, v, path, "pull request", keys, ELEMENTSOF(keys));
        if (r < 0)
                return r;
        const char *head, *base, *author = NULL, *merged_by = NULL, *merged_at = NULL;
        bool draft = false, merged = false, mcm = true;
        if ((r = twin_seed_str(s, v, "head", path, "feature", TWIN_NULL_REFUSED, &head)) < 0 ||
            (r = twin_seed_str(s, v, "base", path, json_get_str(repo, "default_branch"),
                               TWIN_NULL_REFUSED, &base)) < 0 ||
            (r = twin_seed_str(s, v, "author", path, NULL, TWIN_NULL_REFUSED, &author)) < 0 ||
            (r = twin_seed_str(s, v, "merged_by", path, NULL, TWIN_NULL_KEPT, &merged_by)) < 0 ||
            (r = twin_seed_str(s, v, "merged_at", path, NULL, TWIN_NULL_KEPT, &merged_at)) < 0 ||
            (r = twin_seed_bool(s, v, "draft", path, false, &draft)) < 0 ||
            (r = twin_seed_bool(s, v, "merged", path, false, &merged)) < 0 ||
            (r = twin_seed_bool(s, v, "maintainer_can_modify", path, true, &mcm)) < 0)
                return r;
        if (streq_ptr(json_get_str(v, "state"), "merged"))
                merged = true;
        /* hosted Pome's head may read "owner:branch" */
        const char *colon = strchr(head, ':');
        if (colon)
                head = colon + 1;
        if (!gh_branch_find(repo, base))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.base: no branch \"%s\" in the repository", path, base);
        if (streq(head, base))
                return twin_seed_error(s->err, s->errlen, "%s.head: must differ from base \"%s\"",
                                       path, base);
        if (!gh_branch_find(repo, head)) {
                /* a head branch no file names starts at base, as a fresh branch would */
                if (!gh_branch_name_valid(head))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.head: not a valid branch name", path);
                json_t *b = json_pack("{s:s, s:s, s:b}", "name", head, "sha",
                                      gh_ref_sha(repo, base), "protected", false);
                if (!b || json_array_append_new(json_object_get(repo, "branches"), b) < 0)
                        return -ENOMEM;
        }
        if (merged_at && !gh_time_valid(merged_at))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.merged_at: must be a UTC time like "
                                       "\"2026-01-01T00:00:00Z\"",
                                       path);
        char p[320], at[32];
        if (author) {
                snprintf(p, sizeof(p), "%s.author", path);
                if (!gh_login_valid(author) || !gh_user_ensure(s->world, author, "User"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be a GitHub login (letters, digits, '-')",
                                               p);
                if (json_object_set_new(
                            row, "user",
                            json_string(json_get_str(gh_user_find(s->world, author), "login"))) < 0)
                        return -ENOMEM;
        }
        const char *user = json_get_str(row, "user");
        if (merged) {
                if (!merged_by)
                        merged_by = json_get_str(repo, "owner");
                if (!gh_login_valid(merged_by) || !gh_user_ensure(s->world, merged_by, "User"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.merged_by: must be a GitHub login", path);
                /* a copy: the row's closed_at is replaced below */
                snprintf(at, sizeof(at), "%s",
                         merged_at ? merged_at
                                   : json_get_str(row, "closed_at")
                                             ?: strempty(json_get_str(row, "updated_at")));
                merged_at = at;
                if (json_object_set_new(row, "state", json_string("closed")) < 0 ||
                    json_object_set_new(row, "state_reason", json_null()) < 0 ||
                    json_object_set_new(row, "closed_at", json_string(merged_at)) < 0)
                        return -ENOMEM;
        }
        _cleanup_json_ json_t *req = json_array();
        json_t *ra;
        if (!req)
                return -ENOMEM;
        if ((r = twin_seed_array(s, v, "requested_reviewers", path, &ra)) < 0)
                return r;
        size_t i;
        json_t *l;
        json_array_foreach (ra, i, l) {
                json_t *login = json_is_object(l) ? json_object_get(l, "login") : l;
                if (!json_is_string(login) || !gh_login_valid(json_string_value(login)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.requested_reviewers[%zu]: must be a GitHub "
                                               "login",
                                               path, i);
                json_t *u = gh_user_ensure(s->world, json_string_value(login), "User");
                if (!u || (!gh_strv_has(req, json_get_str(u, "login")) &&
                           json_array_append(req, json_object_get(u, "login")) < 0))
                        return -ENOMEM;
        }
        const char *hs = gh_ref_sha(repo, head), *bs = gh_ref_sha(repo, base);
        if (json_object_set_new(row, "head", json_string(head)) < 0 ||
            json_object_set_new(row, "head_sha", json_string(hs)) < 0 ||
            json_object_set_new(row, "base", json_string(base)) < 0 ||
            json_object_set_new(row, "base_sha", json_string(bs)) < 0 ||
            json_object_set_new(row, "draft", json_boolean(draft)) < 0 ||
            json_object_set_new(row, "merged", json_boolean(merged)) < 0 ||
            json_object_set_new(row, "merged_at", json_string_or_null(merged ? merged_at : NULL)) <
                    0 ||
            json_object_set_new(row, "merged_by", json_string_or_null(merged ? merged_by : NULL)) <
                    0 ||
            json_object_set_new(row, "merge_commit_sha", json_null()) < 0 ||
            json_object_set_new(row, "maintainer_can_modify", json_boolean(mcm)) < 0 ||
            json_object_set(row, "requested_reviewers", req) < 0 ||
            json_object_set_new(row, "reviews", json_array()) < 0 ||
            json_object_set_new(row, "review_comments", json_array()) < 0)
                return -ENOMEM;
        if (merged && (r = seed_merge(s, repo, row, merged_at, merged_by)) < 0)
                return r;
        if ((r = gh_seed_reviews(s, repo, v, row, path)) < 0 ||
            (r = gh_seed_statuses(s, repo, v, hs, json_get_str(repo, "owner"), path)) < 0 ||
            (r = gh_seed_check_runs(s, repo, v, hs, path)) < 0)
                return r;
        /* the contexts its seeded statuses name must not be failing when it merges */
        _cleanup_json_ json_t *required = json_array();
        json_t *st;
        if (!required)
                return -ENOMEM;
        json_array_foreach (json_object_get(v, "statuses"), i, st) {
                json_t *ctx = json_object_get(st, "context");
                if (!ctx)
                        ctx = json_string("default");
                else
                        json_incref(ctx);
                if (!ctx || (!gh_strv_has(required, json_string_value(ctx)) &&
                             json_array_append(required, ctx) < 0)) {
                        json_decref(ctx);
                        return -ENOMEM;
                }
                json_decref(ctx);
        }
        if (json_array_size(required) > 0 &&
            json_object_set(row, "required_contexts", required) < 0)
                return -ENOMEM;
        (void)user;
        return 0;
}

/* GET .../pulls/{n}/merge: 204 when the pull request was merged, else 404 (docs). */
int gh_act_check_pull_request_merged(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        if (!json_is_true(json_object_get(pr, "merged")))
                return gh_not_found(rp);
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/*
 * GET /repos/{o}/{r}/commits/{sha}/pulls: the pull requests whose commits include sha, or
 * that it merged (docs: "List pull requests associated with a commit"), newest first.
 */
int gh_act_list_pull_requests_associated_with_commit(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        const char *ref;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        if (gh_arg_str2(c, "commit_sha", "sha", &ref) < 0)
                return gh_invalid(rp, "Commit", "commit_sha", "missing_field");
        const char *sha = gh_ref_sha(repo, ref);
        if (!sha) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "No commit found for SHA: %s", ref) < 0)
                        return -ENOMEM;
                return gh_fail(rp, 422, m);
        }
        _cleanup_json_ json_t *all = json_array(), *page = NULL, *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        json_t *pulls = json_object_get(repo, "pull_requests");
        for (size_t i = json_array_size(pulls); i-- > 0;) {
                json_t *pr = json_array_get(pulls, i);
                const char *head = gh_pr_head_sha(repo, pr), *base = gh_pr_base_sha(repo, pr);
                bool hit = streq_ptr(json_get_str(pr, "merge_commit_sha"), sha) ||
                           streq_ptr(head, sha);
                if (!hit && head && base) {
                        const char *mb = gh_pr_merge_base(repo, base, head);
                        _cleanup_json_ json_t *commits =
                                gh_pr_commits_between(repo, mb ? mb : base, head);
                        size_t k;
                        json_t *cm;
                        json_array_foreach (commits, k, cm) {
                                hit = hit || streq_ptr(json_get_str(cm, "sha"), sha);
                        }
                }
                if (hit && json_array_append(all, pr) < 0)
                        return -ENOMEM;
        }
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        size_t i;
        json_t *pr;
        json_array_foreach (page, i, pr) {
                if (json_array_append_new(out, gh_render_pull(c, repo, pr, false)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}
