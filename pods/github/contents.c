/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's contents and commits: get a file or directory at a ref, create, update
 * and delete a file (one commit each), push several files in one commit, list, get and
 * compare commits (https://docs.github.com/rest/repos/contents, .../rest/commits/commits).
 * Over REST, file content travels base64-encoded; over MCP as plain text, as
 * github/github-mcp-server's tools take it.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

/* ------------------------------------------------------------------ contents */

/* The path argument without leading or trailing slashes ("" for the root). New string. */
static char *arg_path(TwinCall *c)
{
        const char *p = "";
        (void)twin_arg_str(c->args, "path", &p);
        while (*p == '/')
                p++;
        char *s = strdup(p);
        if (s) {
                size_t l = strlen(s);
                while (l > 0 && s[l - 1] == '/')
                        s[--l] = 0;
        }
        return s;
}

/* GitHub's base64 for contents: the standard alphabet, a newline after every 60 characters. */
char *gh_content_base64(const char *s)
{
        _cleanup_free_ char *b = twin_base64(s, strlen(s));
        if (!b)
                return NULL;
        size_t n = strlen(b);
        char *out = malloc(n + n / 60 + 2), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i += 60) {
                size_t k = n - i < 60 ? n - i : 60;
                memcpy(o, b + i, k);
                o += k;
                *o++ = '\n';
        }
        *o = 0;
        return out;
}

/* A file or directory entry: {type, size, name, path, sha, url, git_url, html_url,
 * download_url, _links}. at is the ref the urls name. */
static json_t *render_entry(TwinCall *c, json_t *repo, const char *at, const char *path,
                            const char *type, const char *sha, size_t size)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        const char *base = strrchr(path, '/');
        bool dir = streq(type, "dir");
        _cleanup_free_ char *url = NULL, *git = NULL, *html = NULL, *dl = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/contents/%s?ref=%s", c->base_url, owner, name, path,
                     at) < 0 ||
            asprintf(&git, "%s/repos/%s/%s/git/%s/%s", c->base_url, owner, name,
                     dir ? "trees" : "blobs", sha) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/%s/%s/%s", owner, name, dir ? "tree" : "blob", at,
                     path) < 0 ||
            asprintf(&dl, "https://raw.githubusercontent.com/%s/%s/%s/%s", owner, name, at, path) <
                    0)
                return NULL;
        return json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s?, s:{s:s, s:s, s:s}}",
                         "type", type, "size", (json_int_t)size, "name", base ? base + 1 : path,
                         "path", path, "sha", sha, "url", url, "git_url", git, "html_url", html,
                         "download_url", dir ? NULL : dl, "_links", "self", url, "git", git, "html",
                         html);
}

static json_t *render_file(TwinCall *c, json_t *repo, const char *at, const char *path,
                           const char *content, bool with_content)
{
        char sha[TWIN_SHA1_HEX];
        gh_blob_sha(content, strlen(content), sha);
        _cleanup_json_ json_t *e = render_entry(c, repo, at, path, "file", sha, strlen(content));
        _cleanup_free_ char *b64 = with_content ? gh_content_base64(content) : NULL;
        if (!e || (with_content && !b64))
                return NULL;
        if (with_content && (json_object_set_new(e, "content", json_string(b64)) < 0 ||
                             json_object_set_new(e, "encoding", json_string("base64")) < 0))
                return NULL;
        return TAKE_PTR(e);
}

/* The subtree of tree below dir ("" = all of it), paths relative to dir. New reference. */
static json_t *subtree(const json_t *tree, const char *dir)
{
        json_t *out = json_object();
        size_t dl = strlen(dir);
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)tree, k, v) {
                if (dl == 0 || (strncmp(k, dir, dl) == 0 && k[dl] == '/'))
                        json_object_set(out, dl ? k + dl + 1 : k, v);
        }
        return out;
}

/* The commit ref args name for reads: sha (MCP, wins), else ref, else the default branch. */
static const char *arg_read_ref(TwinCall *c, json_t *repo, const char **ret_name)
{
        const char *ref = NULL;
        if (twin_arg_str(c->args, "sha", &ref) < 0 && twin_arg_str(c->args, "ref", &ref) < 0)
                ref = json_get_str(repo, "default_branch");
        *ret_name = ref;
        return gh_ref_sha(repo, ref);
}

/*
 * GET /repos/{o}/{r}/contents/{path}?ref=, MCP get_file_contents {path, ref, sha}: a file
 * (base64 content, blob sha; over MCP also its text, as github-mcp-server returns the file
 * itself) or a directory (an array of entries by name). 404 for a path or ref that does not
 * exist.
 */
int gh_act_get_file_contents(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *refname;
        const char *sha = arg_read_ref(c, repo, &refname);
        if (!json_array_size(json_object_get(repo, "commits")))
                return gh_fail(rp, 404, "This repository is empty.");
        if (!sha)
                return gh_fail(rp, 404, "No commit found for the ref");
        _cleanup_free_ char *path = arg_path(c);
        if (!path)
                return -ENOMEM;
        json_t *tree = gh_tree_at(repo, sha);
        /* urls name the ref as the caller did (GitHub keeps the branch name) */
        const char *at = refname;
        json_t *file = path[0] ? json_object_get(tree, path) : NULL;
        const char *format = gh_accept_format(c);
        if (file && streq_ptr(format, "raw")) /* the file's bytes, as octokit's format: "raw" */
                return gh_reply_text(rp, "application/vnd.github.raw; charset=utf-8",
                                     strdup(json_string_value(file)));
        if (file) {
                _cleanup_json_ json_t *body =
                        render_file(c, repo, at, path, json_string_value(file), true);
                /* over MCP the official tool hands the agent the file's text, not base64 */
                if (body && !c->request && json_object_set(body, "text", file) < 0)
                        return -ENOMEM;
                return twin_reply_body(rp, 200, TAKE_PTR(body));
        }

        _cleanup_json_ json_t *sub = subtree(tree, path);
        if (!sub)
                return -ENOMEM;
        if (path[0] && json_object_size(sub) == 0)
                return gh_not_found(rp);
        /* the directory's immediate entries: files, and subdirectories with their tree sha */
        _cleanup_json_ json_t *names = json_object(), *out = json_array();
        if (!names || !out)
                return -ENOMEM;
        const char *k;
        json_t *v;
        json_object_foreach (sub, k, v) {
                const char *slash = strchr(k, '/');
                _cleanup_free_ char *n = slash ? strndup(k, (size_t)(slash - k)) : strdup(k);
                if (!n || json_object_set_new(names, n, json_boolean(slash != NULL)) < 0)
                        return -ENOMEM;
        }
        /* every directory's tree sha in one pass */
        _cleanup_json_ json_t *dirs = json_object();
        char root_sha[TWIN_SHA1_HEX];
        if (!dirs || gh_tree_shas(tree, dirs, root_sha) < 0)
                return -ENOMEM;
        size_t cnt = json_object_size(names), i = 0;
        _cleanup_free_ const char **sorted = calloc(cnt + 1, sizeof(char *));
        if (!sorted)
                return -ENOMEM;
        json_object_foreach (names, k, v)
                sorted[i++] = k;
        for (size_t a = 1; a < cnt; a++)
                for (size_t b = a; b > 0 && strcmp(sorted[b - 1], sorted[b]) > 0; b--) {
                        const char *t = sorted[b];
                        sorted[b] = sorted[b - 1];
                        sorted[b - 1] = t;
                }
        for (i = 0; i < cnt; i++) {
                _cleanup_free_ char *full = NULL;
                if (asprintf(&full, "%s%s%s", path, path[0] ? "/" : "", sorted[i]) < 0)
                        return -ENOMEM;
                json_t *e;
                if (json_is_true(json_object_get(names, sorted[i])))
                        e = render_entry(c, repo, at, full, "dir",
                                         json_string_value(json_object_get(dirs, full)), 0);
                else
                        e = render_file(c, repo, at, full,
                                        json_string_value(json_object_get(tree, full)), false);
                if (json_array_append_new(out, e) < 0)
                        return -ENOMEM;
        }
        if (streq_ptr(format, "object")) {
                /* application/vnd.github.object: the directory itself, its list in entries */
                const char *dsha =
                        path[0] ? json_string_value(json_object_get(dirs, path)) : root_sha;
                json_t *d = render_entry(c, repo, at, path, "dir", dsha, 0);
                if (!d || json_object_set_new(d, "entries", TAKE_PTR(out)) < 0) {
                        json_decref(d);
                        return -ENOMEM;
                }
                return twin_reply_body(rp, 200, d);
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* The "commit" member of a contents write reply (GitHub's git commit shape). */
json_t *gh_render_git_commit(TwinCall *c, json_t *repo, json_t *commit)
{
        _cleanup_json_ json_t *full = gh_render_commit(c, repo, commit, false);
        json_t *inner = json_object_get(full, "commit");
        if (!full)
                return NULL;
        return json_pack(
                "{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}", "sha",
                json_object_get(full, "sha"), "node_id", json_object_get(full, "node_id"), "url",
                json_object_get(inner, "url"), "html_url", json_object_get(full, "html_url"),
                "author", json_object_get(inner, "author"), "committer",
                json_object_get(inner, "committer"), "tree", json_object_get(inner, "tree"),
                "message", json_object_get(inner, "message"), "parents",
                json_object_get(full, "parents"), "verification",
                json_object_get(inner, "verification"));
}

/*
 * The branch a write goes to: args branch (default: the default branch). In an empty
 * repository the default branch is created by the first write (*ret_branch NULL, 1).
 * Returns 1, 0 when rp holds the refusal (404 unknown branch, 409 protected), negative errno.
 */
static int write_branch(TwinCall *c, TwinReply *rp, json_t *repo, const char **ret_name,
                        json_t **ret_branch)
{
        const char *name = json_get_str(repo, "default_branch");
        if (twin_arg_str(c->args, "branch", &name) == -EINVAL)
                return gh_invalid(rp, "Commit", "branch", "invalid");
        json_t *b = gh_branch_find(repo, name);
        bool empty = json_array_size(json_object_get(repo, "branches")) == 0;
        if (!b && !(empty && streq(name, json_get_str(repo, "default_branch"))))
                return gh_fail(rp, 404, "Branch not found");
        if (b && gh_branch_blocks(c, repo, b))
                return gh_fail(rp, 409, "Changes must be made through a pull request.");
        *ret_name = name;
        *ret_branch = b;
        return 1;
}

/*
 * Commits tree (borrowed) on top of branch (NULL: the first commit of an empty repository,
 * which creates the default branch), with message, as the viewer; sets the tape delta of the
 * branch row. Returns the new commit row (borrowed) or NULL on OOM.
 */
static json_t *commit_tree(TwinCall *c, TwinReply *rp, json_t *repo, const char *branch_name,
                           json_t *branch, json_t *tree, const char *message)
{
        const char *parent = branch ? json_get_str(branch, "sha") : NULL;
        json_t *commit = gh_commit_add_as(
                c->world, repo, parent, NULL, tree, message, json_get_str(c->world, "viewer"),
                json_object_get(c->args, "author"), json_object_get(c->args, "committer"), c->now);
        if (!commit)
                return NULL;
        const char *sha = json_get_str(commit, "sha");
        if (branch) {
                if (gh_branch_move(rp, branch, sha) < 0)
                        return NULL;
        } else {
                json_t *row = json_pack("{s:s, s:s, s:b}", "name", branch_name, "sha", sha,
                                        "protected", false);
                if (!row || json_array_append_new(json_object_get(repo, "branches"), row) < 0 ||
                    twin_reply_mutation(rp, NULL, row) < 0)
                        return NULL;
        }
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        json_object_set_new(repo, "updated_at", json_string(now));
        return commit;
}

/*
 * args author and committer, when given, must be {name, email, date?} with strings (REST's
 * commit identity); 1, or 0 with the 422 in rp.
 */
int gh_arg_identities(TwinCall *c, TwinReply *rp)
{
        const char *keys[] = {"author", "committer"};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                json_t *o = json_object_get(c->args, keys[i]);
                if (!o || json_is_null(o))
                        continue;
                json_t *d = json_object_get(o, "date");
                if (!json_is_object(o) || !json_is_string(json_object_get(o, "name")) ||
                    !json_is_string(json_object_get(o, "email")) ||
                    (d && !(json_is_string(d) && gh_time_valid(json_string_value(d)))))
                        return gh_invalid(rp, "Commit", keys[i], "invalid");
        }
        return 1;
}

/* The message argument of a write (required, non-empty), and the identities. 1, 0 with a
 * 422 in rp. */
static int arg_message(TwinCall *c, TwinReply *rp, const char **ret)
{
        int r = twin_arg_str(c->args, "message", ret);
        if (r < 0 || !(*ret)[0])
                return gh_invalid(rp, "Commit", "message",
                                  r == -EINVAL ? "invalid" : "missing_field");
        return gh_arg_identities(c, rp);
}

/*
 * Checks args sha against the blob at path of tree (content, or NULL when there is none):
 * GitHub's optimistic lock for updates and deletes. required says whether a missing sha is
 * an error when the file exists (REST; the MCP delete tool looks the sha up itself).
 * Returns 1 when the write may go on, 0 when rp holds the 409/422, negative errno.
 */
static int check_blob_sha(TwinCall *c, TwinReply *rp, const char *path, const char *content,
                          bool required)
{
        const char *sha = NULL;
        int r = twin_arg_str(c->args, "sha", &sha);
        if (r == -EINVAL)
                return gh_invalid(rp, "Commit", "sha", "invalid");
        if (!content)
                return 1;
        if (!sha)
                return required ? gh_fail(rp, 422, "Invalid request.\n\n\"sha\" wasn't supplied.")
                                : 1;
        char cur[TWIN_SHA1_HEX];
        gh_blob_sha(content, strlen(content), cur);
        if (!streq(sha, cur)) {
                _cleanup_free_ char *msg = NULL;
                if (asprintf(&msg, "%s does not match %s", path, sha) < 0)
                        return -ENOMEM;
                return gh_fail(rp, 409, msg);
        }
        return 1;
}

/*
 * PUT /repos/{o}/{r}/contents/{path} {message, content (base64), sha, branch}, MCP
 * create_or_update_file {path, content (text), message, branch, sha}: one commit on the
 * branch. 201 for a new file, 200 for an update; updating needs the current blob sha (422
 * when missing, 409 when stale).
 */
int gh_act_create_or_update_file(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *branch;
        const char *branch_name, *message, *content;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        _cleanup_free_ char *path = arg_path(c), *decoded = NULL;
        if (!path)
                return -ENOMEM;
        if (!gh_path_valid(path))
                return gh_invalid(rp, "Commit", "path", path[0] ? "invalid" : "missing_field");
        if ((r = arg_message(c, rp, &message)) <= 0)
                return r;
        r = twin_arg_str(c->args, "content", &content);
        if (r < 0)
                return gh_invalid(rp, "Commit", "content",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if (c->request) {
                /* REST carries the bytes base64-encoded (line breaks allowed, as git's) */
                _cleanup_free_ char *packed = malloc(strlen(content) + 1);
                size_t n = 0, pad = 0;
                if (!packed)
                        return -ENOMEM;
                for (const char *p = content; *p; p++)
                        if (!strchr("\r\n \t", *p))
                                packed[n++] = *p;
                packed[n] = 0;
                while (pad < 2 && pad < n && packed[n - 1 - pad] == '=')
                        pad++;
                r = twin_base64_decode(packed, &decoded);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return gh_fail(rp, 422, "content is not valid Base64");
                /* worlds hold text: no NUL bytes, valid UTF-8 */
                _cleanup_json_ json_t *text = json_string(decoded);
                if (strlen(decoded) != n / 4 * 3 - pad || !text)
                        return gh_fail(rp, 422,
                                       "content must be UTF-8 text (this twin stores "
                                       "no binary files)");
                content = decoded;
        }
        if ((r = write_branch(c, rp, repo, &branch_name, &branch)) <= 0)
                return r;
        json_t *tree = branch ? gh_tree_at(repo, json_get_str(branch, "sha")) : NULL;
        const char *cur = json_string_value(json_object_get(tree, path));
        if ((r = check_blob_sha(c, rp, path, cur, true)) <= 0)
                return r;
        /* a file cannot take the place of a directory, nor sit below a file */
        if (!cur && gh_path_conflicts(tree, NULL, path))
                return gh_invalid(rp, "Commit", "path", "invalid");
        _cleanup_json_ json_t *next = tree ? json_copy(tree) : json_object();
        if (!next || json_object_set_new(next, path, json_string(content)) < 0)
                return -ENOMEM;
        json_t *commit = commit_tree(c, rp, repo, branch_name, branch, next, message);
        if (!commit)
                return -ENOMEM;
        return twin_reply_body(rp, cur ? 200 : 201,
                               json_pack("{s:o, s:o}", "content",
                                         render_file(c, repo, branch_name, path, content, false),
                                         "commit", gh_render_git_commit(c, repo, commit)));
}

/*
 * DELETE /repos/{o}/{r}/contents/{path} {message, sha, branch}, MCP delete_file {path,
 * message, branch}: one commit removing the file; 200 {content: null, commit}. 404 when the
 * file does not exist; REST needs the blob sha (422 missing, 409 stale).
 */
int gh_act_delete_file(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *branch;
        const char *branch_name, *message;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        _cleanup_free_ char *path = arg_path(c);
        if (!path)
                return -ENOMEM;
        if ((r = arg_message(c, rp, &message)) <= 0)
                return r;
        if ((r = write_branch(c, rp, repo, &branch_name, &branch)) <= 0)
                return r;
        json_t *tree = branch ? gh_tree_at(repo, json_get_str(branch, "sha")) : NULL;
        const char *cur = json_string_value(json_object_get(tree, path));
        if (!cur)
                return gh_not_found(rp);
        if ((r = check_blob_sha(c, rp, path, cur, c->request != NULL)) <= 0)
                return r;
        _cleanup_json_ json_t *next = json_copy(tree);
        if (!next || json_object_del(next, path) < 0)
                return -ENOMEM;
        json_t *commit = commit_tree(c, rp, repo, branch_name, branch, next, message);
        if (!commit)
                return -ENOMEM;
        return twin_reply_body(rp, 200,
                               json_pack("{s:n, s:o}", "content", "commit",
                                         gh_render_git_commit(c, repo, commit)));
}

/*
 * MCP push_files {branch, files: [{path, content}], message}: one commit with every file
 * (plain text), on an existing branch. Answers the updated ref, as the official tool does.
 */
int gh_act_push_files(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *branch;
        const char *branch_name, *message;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        if ((r = arg_message(c, rp, &message)) <= 0)
                return r;
        json_t *files = json_object_get(c->args, "files");
        if (!json_is_array(files) || json_array_size(files) == 0)
                return gh_invalid(rp, "Commit", "files", files ? "invalid" : "missing_field");
        if ((r = write_branch(c, rp, repo, &branch_name, &branch)) <= 0)
                return r;
        json_t *tree = branch ? gh_tree_at(repo, json_get_str(branch, "sha")) : NULL;
        _cleanup_json_ json_t *next = tree ? json_copy(tree) : json_object();
        if (!next)
                return -ENOMEM;
        size_t i;
        json_t *f;
        json_array_foreach (files, i, f) {
                const char *p = json_get_str(f, "path"), *content = json_get_str(f, "content");
                if (!p || !content || !gh_path_valid(p))
                        return gh_invalid(rp, "Commit", "files", "invalid");
                if (json_object_set_new(next, p, json_string(content)) < 0)
                        return -ENOMEM;
        }
        /* no path may be both a file and a directory of the new tree */
        if (gh_tree_conflict(next))
                return gh_invalid(rp, "Commit", "files", "invalid");
        json_t *commit = commit_tree(c, rp, repo, branch_name, branch, next, message);
        if (!commit)
                return -ENOMEM;
        _cleanup_free_ char *full = NULL;
        if (asprintf(&full, "refs/heads/%s", branch_name) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, gh_render_ref(c, repo, full, json_get_str(commit, "sha")));
}

/* ------------------------------------------------------------------ commits */

/* Does commit change path (a file, or any file below a directory) against its first parent? */
static bool commit_touches(json_t *repo, json_t *commit, const char *path)
{
        json_t *tree = json_object_get(commit, "tree");
        const char *parent =
                json_string_value(json_array_get(json_object_get(commit, "parents"), 0));
        json_t *ptree = parent ? gh_tree_at(repo, parent) : NULL;
        size_t pl = strlen(path);
        json_t *trees[2] = {tree, ptree};
        for (size_t t = 0; t < 2; t++) {
                const char *k;
                json_t *v;
                json_object_foreach (trees[t], k, v) {
                        if (!(streq(k, path) || (strncmp(k, path, pl) == 0 && k[pl] == '/')))
                                continue;
                        if (!json_equal(v, json_object_get(trees[1 - t], k)))
                                return true;
                }
        }
        return false;
}

/* A date argument (YYYY-MM-DD or a full UTC time) as a comparable "YYYY-MM-DDTHH:MM:SSZ". */
static bool arg_date(TwinCall *c, const char *key, char out[32])
{
        const char *s;
        if (twin_arg_str(c->args, key, &s) < 0)
                return false;
        snprintf(out, 32, "%s", s);
        if (strlen(out) == 10)
                strcat(out, "T00:00:00Z");
        return true;
}

/*
 * GET /repos/{o}/{r}/commits {sha, path, author, since, until, per_page, page}, MCP
 * list_commits: the history of sha (default branch by default), newest first, Link pages.
 */
int gh_act_list_commits(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        if (!json_array_size(json_object_get(repo, "commits")))
                return gh_fail(rp, 409, "Git Repository is empty.");
        const char *refname;
        const char *head = arg_read_ref(c, repo, &refname);
        if (!head)
                return gh_not_found(rp);
        const char *path = NULL, *author = NULL;
        (void)twin_arg_str(c->args, "path", &path);
        (void)twin_arg_str(c->args, "author", &author);
        char since[32], until[32];
        bool has_since = arg_date(c, "since", since), has_until = arg_date(c, "until", until);
        _cleanup_json_ json_t *hist = gh_commits_between(repo, NULL, head, true),
                              *all = json_array(), *page = NULL;
        if (!hist || !all)
                return -ENOMEM;
        size_t i;
        json_t *x;
        json_array_foreach (hist, i, x) {
                const char *date =
                        json_string_value(json_object_get(json_object_get(x, "author"), "date"));
                if (path && path[0] && !commit_touches(repo, x, path))
                        continue;
                if (author && strcasecmp(strempty(json_get_str(x, "login")), author) != 0 &&
                    strcasecmp(strempty(json_string_value(
                                       json_object_get(json_object_get(x, "author"), "email"))),
                               author) != 0)
                        continue;
                if ((has_since && strcmp(strempty(date), since) < 0) ||
                    (has_until && strcmp(strempty(date), until) > 0))
                        continue;
                if (json_array_append(all, x) < 0)
                        return -ENOMEM;
        }
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        json_array_foreach (page, i, x) {
                if (json_array_append_new(
                            out, gh_pick_fields(c, gh_render_commit(c, repo, x, false))) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/*
 * GET /repos/{o}/{r}/commits/{ref}, MCP get_commit {sha, include_diff}: one commit with
 * stats and files (422 "No commit found for SHA: x" when ref names none, as GitHub).
 */
int gh_act_get_commit(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *ref = NULL;
        if (gh_arg_str2(c, "ref", "sha", &ref) < 0)
                return gh_invalid(rp, "Commit", "sha", "missing_field");
        bool diff = true;
        (void)twin_arg_bool(c->args, "include_diff", &diff);
        json_t *commit = gh_commit_find(repo, gh_ref_sha(repo, ref));
        if (!commit) {
                _cleanup_free_ char *msg = NULL;
                if (asprintf(&msg, "No commit found for SHA: %s", ref) < 0)
                        return -ENOMEM;
                return gh_fail(rp, 422, msg);
        }
        /* the diff and patch media types: the change against the first parent, as git shows */
        const char *format = gh_accept_format(c);
        if (streq_ptr(format, "diff")) {
                const char *parent =
                        json_string_value(json_array_get(json_object_get(commit, "parents"), 0));
                return gh_reply_text(rp, "application/vnd.github.diff; charset=utf-8",
                                     gh_tree_diff_text(parent ? gh_tree_at(repo, parent) : NULL,
                                                       json_object_get(commit, "tree")));
        }
        if (streq_ptr(format, "patch")) {
                _cleanup_json_ json_t *one = json_pack("[O]", commit);
                return gh_reply_text(rp, "application/vnd.github.patch; charset=utf-8",
                                     one ? gh_commits_patch_text(repo, one) : NULL);
        }
        return twin_reply_body(rp, 200, gh_render_commit(c, repo, commit, diff));
}

/*
 * GET /repos/{o}/{r}/compare/{base}...{head} (also "..", and MCP-style base/head args):
 * status ahead|behind|diverged|identical, ahead_by, behind_by, merge_base_commit, the
 * commits head has over the merge base (oldest first) and the files changed since it.
 */
int gh_act_compare_commits(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *basehead = NULL, *b = NULL, *h = NULL;
        _cleanup_free_ char *base_s = NULL;
        if (twin_arg_str(c->args, "basehead", &basehead) == 0) {
                const char *dots = strstr(basehead, "...");
                size_t skip = 3;
                if (!dots) {
                        dots = strstr(basehead, "..");
                        skip = 2;
                }
                if (!dots)
                        return gh_not_found(rp);
                base_s = strndup(basehead, (size_t)(dots - basehead));
                if (!base_s)
                        return -ENOMEM;
                b = base_s;
                h = dots + skip;
        } else if (twin_arg_str(c->args, "base", &b) < 0 || twin_arg_str(c->args, "head", &h) < 0)
                return gh_invalid(rp, "Comparison", "basehead", "missing_field");
        const char *bs = gh_ref_sha(repo, b), *hs = gh_ref_sha(repo, h);
        if (!bs || !hs)
                return gh_not_found(rp);
        const char *mb = gh_merge_base(repo, bs, hs);
        if (!mb)
                return gh_fail(rp, 404, "No common ancestor between the base and the head.");
        _cleanup_json_ json_t *ahead = gh_commits_between(repo, bs, hs, false),
                              *behind = gh_commits_between(repo, hs, bs, false);
        if (!ahead || !behind)
                return -ENOMEM;
        /* the diff and patch media types: what head changed since the merge base */
        const char *format = gh_accept_format(c);
        if (streq_ptr(format, "diff"))
                return gh_reply_text(rp, "application/vnd.github.diff; charset=utf-8",
                                     gh_tree_diff_text(gh_tree_at(repo, mb), gh_tree_at(repo, hs)));
        if (streq_ptr(format, "patch"))
                return gh_reply_text(rp, "application/vnd.github.patch; charset=utf-8",
                                     gh_commits_patch_text(repo, ahead));
        size_t na = json_array_size(ahead), nb = json_array_size(behind);
        const char *status = na && nb ? "diverged" : na ? "ahead" : nb ? "behind" : "identical";
        _cleanup_json_ json_t *commits = json_array();
        if (!commits)
                return -ENOMEM;
        size_t i;
        json_t *x;
        json_array_foreach (ahead, i, x) {
                if (json_array_append_new(commits, gh_render_commit(c, repo, x, false)) < 0)
                        return -ENOMEM;
        }
        json_t *files =
                gh_diff_files(c, repo, gh_tree_at(repo, mb), gh_tree_at(repo, hs), hs, NULL);
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        _cleanup_free_ char *url = NULL, *html = NULL, *perma = NULL, *diff = NULL, *patch = NULL;
        if (!files ||
            asprintf(&url, "%s/repos/%s/%s/compare/%s...%s", c->base_url, owner, name, b, h) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/compare/%s...%s", owner, name, b, h) < 0 ||
            asprintf(&perma, GH_HTML_BASE "/%s/%s/compare/%s...%s", owner, name, bs, hs) < 0 ||
            asprintf(&diff, "%s.diff", html) < 0 || asprintf(&patch, "%s.patch", html) < 0) {
                json_decref(files);
                return -ENOMEM;
        }
        return twin_reply_body(
                rp, 200,
                json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:I, s:I, s:I, s:o, s:o}",
                          "url", url, "html_url", html, "permalink_url", perma, "diff_url", diff,
                          "patch_url", patch, "base_commit",
                          gh_render_commit(c, repo, gh_commit_find(repo, bs), false),
                          "merge_base_commit",
                          gh_render_commit(c, repo, gh_commit_find(repo, mb), false), "status",
                          status, "ahead_by", (json_int_t)na, "behind_by", (json_int_t)nb,
                          "total_commits", (json_int_t)na, "commits", TAKE_PTR(commits), "files",
                          files));
}

/* GET /repos/{o}/{r}/readme?ref=: the README at the root (any case and extension). */
int gh_act_get_readme(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *refname;
        const char *sha = arg_read_ref(c, repo, &refname);
        json_t *tree = sha ? gh_tree_at(repo, sha) : NULL;
        const char *k;
        json_t *v;
        json_object_foreach (tree, k, v) {
                if (!strchr(k, '/') && strncasecmp(k, "readme", 6) == 0 &&
                    (k[6] == 0 || k[6] == '.') && streq_ptr(gh_accept_format(c), "raw"))
                        return gh_reply_text(rp, "application/vnd.github.raw; charset=utf-8",
                                             strdup(json_string_value(v)));
                if (!strchr(k, '/') && strncasecmp(k, "readme", 6) == 0 &&
                    (k[6] == 0 || k[6] == '.'))
                        return twin_reply_body(
                                rp, 200,
                                render_file(c, repo, refname, k, json_string_value(v), true));
        }
        return gh_not_found(rp);
}
