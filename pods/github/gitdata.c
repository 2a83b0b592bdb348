/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's Git Database API (https://docs.github.com/rest/git): blobs, trees and
 * commits by sha, and moving a ref — the low-level path tools take to write several files
 * in one commit (get the ref, create blobs, a tree on base_tree, a commit, update the ref).
 *
 * Blobs and trees made through this API and not yet part of a commit live in the
 * repository's objects {sha: {type: "blob", content} | {type: "tree", tree: {path:
 * content}}}; everything else is found in the commits' snapshots. Trees are text files
 * only, as everywhere in the twin.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

static json_t *objects(json_t *repo)
{
        json_t *o = json_object_get(repo, "objects");
        if (!o && json_object_set_new(repo, "objects", json_object()) == 0)
                o = json_object_get(repo, "objects");
        return o;
}

/* The content of the blob with sha (borrowed string JSON), or NULL. */
static json_t *blob_find(json_t *repo, const char *sha)
{
        json_t *o = json_object_get(json_object_get(repo, "objects"), sha);
        if (o && streq_ptr(json_get_str(o, "type"), "blob"))
                return json_object_get(o, "content");
        json_t *commits = json_object_get(repo, "commits");
        for (size_t i = json_array_size(commits); i > 0; i--) {
                const char *k;
                json_t *v;
                json_object_foreach (json_object_get(json_array_get(commits, i - 1), "tree"), k,
                                     v) {
                        char h[TWIN_SHA1_HEX];
                        gh_blob_sha(json_string_value(v), json_string_length(v), h);
                        if (streq(h, sha))
                                return v;
                }
        }
        return NULL;
}

/* The subtree of tree below dir ("" = itself), paths relative to dir. New reference. */
static json_t *subtree(const json_t *tree, const char *dir)
{
        json_t *out = json_object();
        size_t dl = strlen(dir);
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)tree, k, v) {
                if (dl == 0)
                        json_object_set(out, k, v);
                else if (strncmp(k, dir, dl) == 0 && k[dl] == '/')
                        json_object_set(out, k + dl + 1, v);
        }
        return out;
}

/*
 * The file tree a tree sha names (new reference), or NULL: a tree made through this API, a
 * commit's root tree, a directory of a branch head, or — as GitHub also accepts — a branch,
 * tag or commit.
 */
static json_t *tree_find(json_t *repo, const char *sha)
{
        json_t *o = json_object_get(json_object_get(repo, "objects"), sha);
        if (o && streq_ptr(json_get_str(o, "type"), "tree"))
                return json_incref(json_object_get(o, "tree"));
        size_t i;
        json_t *c;
        json_array_foreach (json_object_get(repo, "commits"), i, c) {
                if (streq_ptr(json_get_str(c, "tree_sha"), sha))
                        return json_incref(json_object_get(c, "tree"));
        }
        json_t *t = gh_tree_at(repo, sha);
        if (t)
                return json_incref(t);
        json_t *b;
        json_array_foreach (json_object_get(repo, "branches"), i, b) {
                json_t *head = gh_tree_at(repo, json_get_str(b, "sha"));
                _cleanup_json_ json_t *dirs = json_object();
                char h[TWIN_SHA1_HEX];
                if (!dirs || gh_tree_shas(head, dirs, h) < 0)
                        return NULL;
                const char *dir;
                json_t *v;
                json_object_foreach (dirs, dir, v) {
                        if (streq(json_string_value(v), sha))
                                return subtree(head, dir);
                }
        }
        return NULL;
}

static json_t *render_tree(TwinCall *c, json_t *repo, const json_t *tree, const char *sha,
                           bool recursive)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        _cleanup_json_ json_t *entries = json_array(), *dirs = json_object(), *shas = json_object();
        _cleanup_free_ char *url = NULL;
        char root[TWIN_SHA1_HEX];
        if (!entries || !dirs || !shas || gh_tree_shas(tree, shas, root) < 0 ||
            asprintf(&url, "%s/repos/%s/%s/git/trees/%s", c->base_url, owner, name, sha) < 0)
                return NULL;
        size_t n = json_object_size(tree), i = 0;
        _cleanup_free_ const char **paths = calloc(n + 1, sizeof(char *));
        if (!paths)
                return NULL;
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)tree, k, v)
                paths[i++] = k;
        for (size_t a = 1; a < n; a++)
                for (size_t b = a; b > 0 && strcmp(paths[b - 1], paths[b]) > 0; b--) {
                        const char *t = paths[b];
                        paths[b] = paths[b - 1];
                        paths[b - 1] = t;
                }
        for (i = 0; i < n; i++) {
                const char *p = paths[i];
                /* directories along the way, each once, before their files */
                for (const char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
                        _cleanup_free_ char *dir = strndup(p, (size_t)(s - p));
                        if (!dir)
                                return NULL;
                        if (json_object_get(dirs, dir) || (!recursive && strchr(dir, '/')))
                                continue;
                        const char *h = json_string_value(json_object_get(shas, dir));
                        _cleanup_free_ char *du = NULL;
                        if (!h ||
                            asprintf(&du, "%s/repos/%s/%s/git/trees/%s", c->base_url, owner, name,
                                     h) < 0 ||
                            json_object_set_new(dirs, dir, json_true()) < 0 ||
                            json_array_append_new(entries,
                                                  json_pack("{s:s, s:s, s:s, s:s, s:s}", "path",
                                                            dir, "mode", "040000", "type", "tree",
                                                            "sha", h, "url", du)) < 0)
                                return NULL;
                }
                if (!recursive && strchr(p, '/'))
                        continue;
                json_t *content = json_object_get(tree, p);
                char h[TWIN_SHA1_HEX];
                gh_blob_sha(json_string_value(content), json_string_length(content), h);
                _cleanup_free_ char *bu = NULL;
                if (asprintf(&bu, "%s/repos/%s/%s/git/blobs/%s", c->base_url, owner, name, h) < 0 ||
                    json_array_append_new(entries,
                                          json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "path", p,
                                                    "mode", "100644", "type", "blob", "sha", h,
                                                    "size", (json_int_t)json_string_length(content),
                                                    "url", bu)) < 0)
                        return NULL;
        }
        return json_pack("{s:s, s:s, s:O, s:b}", "sha", sha, "url", url, "tree", entries,
                         "truncated", false);
}

/* GET /repos/{o}/{r}/git/blobs/{file_sha}: {sha, node_id, size, url, content, encoding}. */
int gh_act_get_git_blob(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *sha;
        json_t *content =
                twin_arg_str(c->args, "file_sha", &sha) == 0 ? blob_find(repo, sha) : NULL;
        if (!content)
                return gh_not_found(rp);
        _cleanup_free_ char *url = NULL, *b64 = gh_content_base64(json_string_value(content));
        if (!b64 || asprintf(&url, "%s/repos/%s/%s/git/blobs/%s", c->base_url,
                             json_get_str(repo, "owner"), json_get_str(repo, "name"), sha) < 0)
                return -ENOMEM;
        char raw[96];
        int n = snprintf(raw, sizeof(raw), "04:Blob%lld:%s",
                         (long long)json_integer_value(json_object_get(repo, "id")), sha);
        _cleanup_free_ char *nid = twin_base64(raw, (size_t)n);
        if (!nid)
                return -ENOMEM;
        return twin_reply_body(rp, 200,
                               json_pack("{s:s, s:s, s:I, s:s, s:s, s:s}", "sha", sha, "node_id",
                                         nid, "size", (json_int_t)json_string_length(content),
                                         "url", url, "content", b64, "encoding", "base64"));
}

/* POST /repos/{o}/{r}/git/blobs {content, encoding: utf-8|base64}: 201 {sha, url}. */
int gh_act_create_git_blob(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *content, *encoding = "utf-8";
        if (twin_arg_str(c->args, "content", &content) < 0)
                return gh_invalid(rp, "Blob", "content", "missing_field");
        if (twin_arg_str(c->args, "encoding", &encoding) == -EINVAL ||
            (!streq(encoding, "utf-8") && !streq(encoding, "base64")))
                return gh_invalid(rp, "Blob", "encoding", "invalid");
        _cleanup_free_ char *decoded = NULL;
        if (streq(encoding, "base64")) {
                r = twin_base64_decode(content, &decoded);
                if (r == -ENOMEM)
                        return r;
                _cleanup_json_ json_t *text = r < 0 ? NULL : json_string(decoded);
                if (!text)
                        return gh_fail(rp, 422,
                                       "content must be base64 of UTF-8 text (this twin "
                                       "stores no binary files)");
                content = decoded;
        }
        char sha[TWIN_SHA1_HEX];
        gh_blob_sha(content, strlen(content), sha);
        json_t *objs = objects(repo);
        json_t *row = json_pack("{s:s, s:s}", "type", "blob", "content", content);
        if (!objs || !row || json_object_set_new(objs, sha, row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/git/blobs/%s", c->base_url, json_get_str(repo, "owner"),
                     json_get_str(repo, "name"), sha) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 201, json_pack("{s:s, s:s}", "sha", sha, "url", url));
}

/* GET /repos/{o}/{r}/git/trees/{tree_sha}?recursive=1: the tree's entries. */
int gh_act_get_git_tree(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *sha, *rec = NULL;
        _cleanup_json_ json_t *tree =
                twin_arg_str(c->args, "tree_sha", &sha) == 0 ? tree_find(repo, sha) : NULL;
        if (!tree)
                return gh_not_found(rp);
        /* GitHub: any value of recursive turns it on ("1", "true"), none leaves it off */
        bool recursive = twin_arg_str(c->args, "recursive", &rec) == 0 ||
                         json_is_true(json_object_get(c->args, "recursive"));
        char h[TWIN_SHA1_HEX];
        if (gh_tree_sha(tree, h) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, render_tree(c, repo, tree, h, recursive));
}

/*
 * POST /repos/{o}/{r}/git/trees {base_tree, tree: [{path, mode, type, sha | content}]}:
 * 201 with the new tree. An entry with sha null removes the path; mode 160000 (submodules)
 * and trees given by sha other than a known tree are refused (422).
 */
int gh_act_create_git_tree(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *base = NULL;
        if (twin_arg_str(c->args, "base_tree", &base) == -EINVAL)
                return gh_invalid(rp, "Tree", "base_tree", "invalid");
        _cleanup_json_ json_t *tree = NULL;
        if (base) {
                _cleanup_json_ json_t *bt = tree_find(repo, base);
                if (!bt)
                        return gh_fail(rp, 422, "base_tree is not a valid tree oid");
                tree = json_copy(bt);
        } else
                tree = json_object();
        json_t *entries = json_object_get(c->args, "tree");
        if (!tree)
                return -ENOMEM;
        if (!json_is_array(entries))
                return gh_invalid(rp, "Tree", "tree", entries ? "invalid" : "missing_field");
        size_t i;
        json_t *e;
        json_array_foreach (entries, i, e) {
                const char *p = json_get_str(e, "path"), *type = json_get_str(e, "type");
                const char *mode = json_get_str(e, "mode");
                json_t *sha = json_object_get(e, "sha"), *content = json_object_get(e, "content");
                if (!p || !gh_path_valid(p))
                        return gh_fail(rp, 422, "tree.path contains a malformed path component");
                if (mode && streq(mode, "160000"))
                        return gh_fail(rp, 422, "This twin stores no submodules (mode 160000)");
                if (json_is_null(sha)) {
                        /* removes the file, or everything below a directory */
                        size_t pl = strlen(p);
                        const char *k;
                        json_t *v;
                        void *tmp;
                        json_object_foreach_safe (tree, tmp, k, v) {
                                if (streq(k, p) || (strncmp(k, p, pl) == 0 && k[pl] == '/'))
                                        json_object_del(tree, k);
                        }
                        continue;
                }
                if (streq_ptr(type, "tree")) {
                        _cleanup_json_ json_t *st =
                                json_is_string(sha) ? tree_find(repo, json_string_value(sha))
                                                    : NULL;
                        if (!st)
                                return gh_fail(rp, 422, "tree.sha is not a valid tree");
                        const char *k;
                        json_t *v;
                        json_object_foreach (st, k, v) {
                                _cleanup_free_ char *full = NULL;
                                if (asprintf(&full, "%s/%s", p, k) < 0 ||
                                    json_object_set(tree, full, v) < 0)
                                        return -ENOMEM;
                        }
                        continue;
                }
                json_t *text = json_is_string(content) ? content
                               : json_is_string(sha)   ? blob_find(repo, json_string_value(sha))
                                                       : NULL;
                if (!text)
                        return gh_fail(rp, 422,
                                       json_is_string(sha)
                                               ? "tree.sha is not a valid blob"
                                               : "Must supply tree.sha or tree.content");
                if (json_object_set(tree, p, text) < 0)
                        return -ENOMEM;
        }
        /* no path may be a file and a directory at once */
        if (gh_tree_conflict(tree))
                return gh_fail(rp, 422, "tree contains a file and a directory of the same name");
        char h[TWIN_SHA1_HEX];
        if (gh_tree_sha(tree, h) < 0)
                return -ENOMEM;
        json_t *objs = objects(repo);
        json_t *row = json_pack("{s:s, s:O}", "type", "tree", "tree", tree);
        if (!objs || !row || json_object_set_new(objs, h, row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        return twin_reply_body(rp, 201, render_tree(c, repo, tree, h, true));
}

/* GET /repos/{o}/{r}/git/commits/{commit_sha}: the git commit object. */
int gh_act_get_git_commit(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *sha;
        json_t *commit = twin_arg_str(c->args, "commit_sha", &sha) == 0 && strlen(sha) == 40
                                 ? gh_commit_find(repo, sha)
                                 : NULL;
        if (!commit)
                return gh_not_found(rp);
        return twin_reply_body(rp, 200, gh_render_git_commit(c, repo, commit));
}

/*
 * POST /repos/{o}/{r}/git/commits {message, tree, parents[]}: 201 with the commit. No ref
 * moves: update_git_ref does that.
 */
int gh_act_create_git_commit(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *message, *tree_sha;
        if (twin_arg_str(c->args, "message", &message) < 0)
                return gh_invalid(rp, "Commit", "message", "missing_field");
        if (twin_arg_str(c->args, "tree", &tree_sha) < 0)
                return gh_invalid(rp, "Commit", "tree", "missing_field");
        _cleanup_json_ json_t *tree = tree_find(repo, tree_sha);
        if (!tree)
                return gh_fail(rp, 422, "Tree SHA does not exist");
        _cleanup_json_ json_t *parents = NULL;
        r = twin_arg_strv(c->args, "parents", &parents);
        if (r == -ENOMEM)
                return r;
        if (r == -EINVAL || json_array_size(parents) > 2)
                return gh_invalid(rp, "Commit", "parents", "invalid");
        const char *p[2] = {};
        for (size_t i = 0; i < json_array_size(parents); i++) {
                json_t *pc = gh_commit_find(repo, json_string_value(json_array_get(parents, i)));
                if (!pc)
                        return gh_fail(rp, 422,
                                       "Parent SHA does not exist or is not a commit "
                                       "object");
                p[i] = json_get_str(pc, "sha");
        }
        if ((r = gh_arg_identities(c, rp)) <= 0)
                return r;
        json_t *commit = gh_commit_add_as(
                c->world, repo, p[0], p[1], tree, message, json_get_str(c->world, "viewer"),
                json_object_get(c->args, "author"), json_object_get(c->args, "committer"), c->now);
        if (!commit || (r = twin_reply_mutation(rp, NULL, commit)) < 0)
                return commit ? r : -ENOMEM;
        /* the blobs and tree it used are part of history now */
        json_object_del(objects(repo), tree_sha);
        return twin_reply_body(rp, 201, gh_render_git_commit(c, repo, commit));
}

/*
 * PATCH /repos/{o}/{r}/git/refs/{ref} {sha, force}: moves a branch or tag. Without force the
 * new commit must descend from the old one (422 "Update is not a fast forward").
 */
int gh_act_update_git_ref(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *ref, *sha;
        bool force = false;
        if (twin_arg_str(c->args, "ref", &ref) < 0)
                return gh_fail(rp, 422, "Reference does not exist");
        if (twin_arg_str(c->args, "sha", &sha) < 0)
                return gh_invalid(rp, "Reference", "sha", "missing_field");
        (void)twin_arg_bool(c->args, "force", &force);
        const char *rr = startswith(ref, "refs/") ? ref + 5 : ref, *name;
        bool tag = false;
        json_t *row = NULL;
        if ((name = startswith(rr, "heads/")))
                row = gh_branch_find(repo, name);
        else if ((name = startswith(rr, "tags/"))) {
                row = gh_tag_find(repo, name);
                tag = true;
        }
        if (!row)
                return gh_fail(rp, 422, "Reference does not exist");
        json_t *commit = strlen(sha) == 40 ? gh_commit_find(repo, sha) : NULL;
        if (!commit)
                return gh_fail(rp, 422, "Object does not exist");
        sha = json_get_str(commit, "sha");
        const char *old = json_get_str(row, "sha");
        if (!tag && gh_branch_blocks(c, repo, row))
                return gh_fail(rp, 422, "Protected branch update failed");
        if (!force && !streq(old, sha)) {
                _cleanup_json_ json_t *ahead = gh_commits_between(repo, sha, old, false);
                if (!ahead)
                        return -ENOMEM;
                if (json_array_size(ahead) > 0)
                        return gh_fail(rp, 422, "Update is not a fast forward");
        }
        _cleanup_free_ char *full = NULL, *keep = strdup(sha);
        if (!keep || asprintf(&full, "refs/%s/%s", tag ? "tags" : "heads", name) < 0)
                return -ENOMEM;
        if (!streq(old, sha) && (r = gh_branch_move(rp, row, keep)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_ref(c, repo, full, keep));
}
