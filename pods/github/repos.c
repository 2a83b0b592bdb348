/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's repository actions: create (user and organisation), fork, branches, git
 * refs, collaborators, tags and releases (https://docs.github.com/rest/repos,
 * .../rest/branches, .../rest/git/refs, .../rest/collaborators, .../rest/releases). The MCP
 * tools mirror github/github-mcp-server's names and input schemas; every action accepts both
 * the REST spelling of an argument and the MCP one.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

/* ------------------------------------------------------------------ shared */

/* args[a], else args[b] (the MCP and the REST spelling of one argument); see twin_arg_str. */
int gh_arg_str2(TwinCall *c, const char *a, const char *b, const char **ret)
{
        int r = twin_arg_str(c->args, a, ret);
        if (r != -ENOENT || !b)
                return r;
        return twin_arg_str(c->args, b, ret);
}

/*
 * gh_arg_repo for a write: the viewer must be able to push (the owner or a collaborator),
 * else 403 as GitHub answers a token without push access. Same returns as gh_arg_repo.
 */
int gh_arg_repo_write(TwinCall *c, TwinReply *rp, json_t **ret)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *viewer = json_get_str(c->world, "viewer");
        if (!viewer || !gh_repo_member(repo, viewer)) {
                gh_error(403, NULL, "Must have push access to repository", rp);
                return rp->body ? 0 : -ENOMEM;
        }
        *ret = repo;
        return 1;
}

/* A message-only error envelope with status, as GitHub sends for 409s and most 422s. */
int gh_fail(TwinReply *rp, int status, const char *message)
{
        gh_error(status, NULL, message, rp);
        return rp->body ? 0 : -ENOMEM;
}

/*
 * github-mcp-server's `fields`: when args name a subset of an item's fields, a new object
 * with those only (item is released); else item itself. NULL on OOM (item released).
 */
json_t *gh_pick_fields(TwinCall *c, json_t *item)
{
        json_t *fields = json_object_get(c->args, "fields");
        if (!json_is_array(fields) || json_array_size(fields) == 0 || !json_is_object(item))
                return item;
        json_t *out = json_object();
        size_t i;
        json_t *f;
        json_array_foreach (fields, i, f) {
                json_t *v = json_is_string(f) ? json_object_get(item, json_string_value(f)) : NULL;
                if (out && v && json_object_set(out, json_string_value(f), v) < 0) {
                        json_decref(out);
                        out = NULL;
                }
        }
        json_decref(item);
        return out;
}

/* The items of array page rendered by fn, into a 200 reply. */
static int reply_rendered(TwinCall *c, TwinReply *rp, json_t *repo, json_t *page,
                          json_t *(*fn)(TwinCall *, json_t *, json_t *))
{
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        size_t i;
        json_t *x;
        json_array_foreach (page, i, x) {
                if (json_array_append_new(out, gh_pick_fields(c, fn(c, repo, x))) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* ------------------------------------------------------------------ repositories */

/* The fields gh_render_repo leaves to the git model: fork, parent, source, counts. */
json_t *gh_render_repo_full(TwinCall *c, json_t *repo)
{
        _cleanup_json_ json_t *body = gh_render_repo(c, repo);
        if (!body)
                return NULL;
        const char *parent = json_get_str(repo, "parent");
        json_int_t forks = 0;
        size_t i;
        json_t *r;
        _cleanup_free_ char *full = NULL;
        if (asprintf(&full, "%s/%s", json_get_str(repo, "owner"), json_get_str(repo, "name")) < 0)
                return NULL;
        json_array_foreach (json_object_get(c->world, "repositories"), i, r) {
                forks += streq_ptr(json_get_str(r, "parent"), full);
        }
        if (json_object_set_new(body, "fork", json_boolean(parent != NULL)) < 0 ||
            json_object_set_new(body, "forks_count", json_integer(forks)) < 0 ||
            json_object_set_new(body, "forks", json_integer(forks)) < 0 ||
            json_object_set_new(body, "stargazers_count", json_integer(0)) < 0 ||
            json_object_set_new(body, "watchers_count", json_integer(0)) < 0 ||
            json_object_set_new(body, "size", json_integer(0)) < 0 ||
            json_object_set_new(body, "language", json_null()) < 0 ||
            json_object_set_new(body, "watchers", json_integer(0)) < 0 ||
            json_object_set_new(body, "subscribers_count", json_integer(0)) < 0 ||
            json_object_set_new(body, "network_count", json_integer(forks)) < 0 ||
            json_object_set_new(body, "license", json_null()) < 0 ||
            json_object_set_new(body, "has_projects", json_true()) < 0 ||
            json_object_set_new(body, "has_wiki", json_true()) < 0 ||
            json_object_set_new(body, "has_pages", json_false()) < 0 ||
            json_object_set_new(body, "has_discussions", json_false()) < 0 ||
            json_object_set_new(body, "archived",
                                json_boolean(json_is_true(json_object_get(repo, "archived")))) < 0)
                return NULL;
        if (parent) {
                char owner[128];
                const char *slash = strchr(parent, '/');
                snprintf(owner, sizeof(owner), "%.*s", slash ? (int)(slash - parent) : 0, parent);
                json_t *p = slash ? gh_repo_find(c->world, owner, slash + 1) : NULL;
                json_t *pr = p ? gh_render_repo(c, p) : json_null();
                if (!pr || json_object_set(body, "parent", pr) < 0 ||
                    json_object_set_new(body, "source", pr) < 0)
                        return NULL;
        }
        return TAKE_PTR(body);
}

static const char *const new_repo_labels[] = {
        "bug",         "documentation", "duplicate", "enhancement", "good first issue",
        "help wanted", "invalid",       "question",  "wontfix",
};

/*
 * A new repository row of owner/name (the layout of github.c's seed and git.c), appended to
 * the world: no commits and no branches yet (an empty repository, as GitHub creates one
 * without auto_init). Returns the row (borrowed) or NULL on OOM.
 */
static json_t *repo_add(TwinCall *c, const char *owner, const char *name, const char *desc,
                        bool priv, bool labels)
{
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = gh_alloc_id(c->world);
        json_t *repo = json_pack("{s:I, s:o, s:s, s:s, s:s?, s:b, s:s, s:s, s:s, s:[], s:[], s:[], "
                                 "s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[]}",
                                 "id", (json_int_t)id, "node_id", gh_node_id("Repository", id),
                                 "owner", owner, "name", name, "description", desc, "private", priv,
                                 "default_branch", "main", "created_at", now, "updated_at", now,
                                 "collaborators", "labels", "milestones", "issues", "pull_requests",
                                 "branches", "commits", "tags", "releases", "statuses",
                                 "check_runs", "invitations");
        if (!repo || json_array_append_new(json_object_get(c->world, "repositories"), repo) < 0)
                return NULL;
        if (json_is_null(json_object_get(repo, "description")) ||
            !json_object_get(repo, "description"))
                json_object_set_new(repo, "description", json_null());
        for (size_t i = 0; labels && i < ELEMENTSOF(new_repo_labels); i++)
                if (!gh_label_ensure(c->world, repo, new_repo_labels[i], NULL, NULL, 1))
                        return NULL;
        return repo;
}

/*
 * POST /user/repos, POST /orgs/{org}/repos, MCP create_repository {name, description,
 * private, autoInit, organization}: 201 with the repository; 422 when the owner already has
 * one of that name ("name already exists on this account"). REST's private defaults to
 * false, the MCP tool's to true (github-mcp-server's schema).
 */
int gh_act_create_repository(TwinCall *c, TwinReply *rp)
{
        const char *name, *org = NULL, *desc = NULL;
        int r = twin_arg_str(c->args, "name", &name);
        if (r < 0 || !gh_repo_name_valid(name))
                return gh_invalid(rp, "Repository", "name",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if (gh_arg_str2(c, "organization", "org", &org) == -EINVAL)
                return gh_invalid(rp, "Repository", "organization", "invalid");
        if (twin_arg_str(c->args, "description", &desc) == -EINVAL)
                return gh_invalid(rp, "Repository", "description", "invalid");
        bool priv = c->request == NULL, init = false;
        if ((r = twin_arg_bool(c->args, "private", &priv)) == -EINVAL)
                return gh_invalid(rp, "Repository", "private", "invalid");
        if (twin_arg_bool(c->args, "auto_init", &init) == -EINVAL ||
            twin_arg_bool(c->args, "autoInit", &init) == -EINVAL)
                return gh_invalid(rp, "Repository", "auto_init", "invalid");

        const char *viewer = json_get_str(c->world, "viewer"), *owner = viewer;
        if (org) {
                json_t *o = gh_user_find(c->world, org);
                if (!o || !streq_ptr(json_get_str(o, "type"), "Organization"))
                        return gh_not_found(rp);
                owner = json_get_str(o, "login");
        }
        if (!owner)
                return gh_not_found(rp);
        if (gh_repo_find(c->world, owner, name))
                return twin_reply_body(
                        rp, 422,
                        json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}], s:s, s:s}", "message",
                                  "Repository creation failed.", "errors", "resource", "Repository",
                                  "code", "custom", "field", "name", "message",
                                  "name already exists on this account", "documentation_url",
                                  GH_DOCS_URL, "status", "422"));
        json_t *repo = repo_add(c, owner, name, desc, priv, true);
        if (!repo)
                return -ENOMEM;
        if (org && viewer) {
                /* the creator administers the organisation's new repository */
                if (json_array_append_new(json_object_get(repo, "collaborators"),
                                          json_string(viewer)) < 0)
                        return -ENOMEM;
        }
        if (init) {
                _cleanup_free_ char *readme = NULL;
                if (asprintf(&readme, "# %s\n%s%s%s", name, desc ? "\n" : "", strempty(desc),
                             desc ? "\n" : "") < 0)
                        return -ENOMEM;
                _cleanup_json_ json_t *tree = json_pack("{s:s}", "README.md", readme);
                json_t *commit =
                        tree ? gh_commit_new(c, repo, NULL, NULL, tree, "Initial commit", viewer)
                             : NULL;
                if (!commit ||
                    json_array_append_new(json_object_get(repo, "branches"),
                                          json_pack("{s:s, s:O, s:b}", "name", "main", "sha",
                                                    json_object_get(commit, "sha"), "protected",
                                                    false)) < 0)
                        return -ENOMEM;
        }
        r = twin_reply_mutation(rp, NULL, repo);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 201, gh_render_repo_full(c, repo));
}

/*
 * POST /repos/{o}/{r}/forks {organization, name, default_branch_only}, MCP fork_repository:
 * 202 Accepted with the fork (the viewer's, or the organisation's), carrying the source's
 * branches, commits (the rows shared: commits never change) and tags. Forking again returns the
 * existing fork, as GitHub does.
 */
int gh_act_fork_repository(TwinCall *c, TwinReply *rp)
{
        json_t *src;
        int r = gh_arg_repo(c, rp, &src);
        if (r <= 0)
                return r;
        const char *org = NULL, *name = json_get_str(src, "name");
        bool only_default = false;
        if (twin_arg_str(c->args, "organization", &org) == -EINVAL)
                return gh_invalid(rp, "Fork", "organization", "invalid");
        if (twin_arg_str(c->args, "name", &name) == -EINVAL || !gh_repo_name_valid(name))
                return gh_invalid(rp, "Fork", "name", "invalid");
        if (twin_arg_bool(c->args, "default_branch_only", &only_default) == -EINVAL)
                return gh_invalid(rp, "Fork", "default_branch_only", "invalid");
        const char *owner = json_get_str(c->world, "viewer");
        if (org) {
                json_t *o = gh_user_find(c->world, org);
                if (!o || !streq_ptr(json_get_str(o, "type"), "Organization"))
                        return gh_invalid(rp, "Fork", "organization", "invalid");
                owner = json_get_str(o, "login");
        }
        if (!owner)
                return gh_not_found(rp);
        _cleanup_free_ char *full = NULL;
        if (asprintf(&full, "%s/%s", json_get_str(src, "owner"), json_get_str(src, "name")) < 0)
                return -ENOMEM;
        json_t *fork = gh_repo_find(c->world, owner, name);
        if (fork) {
                if (!streq_ptr(json_get_str(fork, "parent"), full))
                        return gh_invalid(rp, "Fork", "name", "already_exists");
                return twin_reply_body(rp, 202, gh_render_repo_full(c, fork));
        }
        bool priv = json_is_true(json_object_get(src, "private"));
        fork = repo_add(c, owner, name, json_get_str(src, "description"), priv, false);
        if (!fork)
                return -ENOMEM;
        const char *def = json_get_str(src, "default_branch");
        json_t *branches = json_deep_copy(json_object_get(src, "branches"));
        if (only_default && branches) {
                json_decref(branches);
                json_t *b = gh_branch_find(src, def);
                branches = b ? json_pack("[O]", b) : json_array();
        }
        if (!branches || json_object_set_new(fork, "branches", branches) < 0 ||
            json_object_set_new(fork, "commits", json_copy(json_object_get(src, "commits"))) < 0 ||
            json_object_set_new(fork, "tags", json_deep_copy(json_object_get(src, "tags"))) < 0 ||
            json_object_set_new(fork, "default_branch", json_string(def)) < 0 ||
            json_object_set_new(fork, "parent", json_string(full)) < 0)
                return -ENOMEM;
        size_t i;
        json_t *b;
        json_array_foreach (json_object_get(fork, "branches"), i, b) {
                json_object_set_new(b, "protected", json_false());
        }
        r = twin_reply_mutation(rp, NULL, fork);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 202, gh_render_repo_full(c, fork));
}

/* ------------------------------------------------------------------ branches */

static json_t *render_branch_short(TwinCall *c, json_t *repo, json_t *b)
{
        _cleanup_free_ char *url = NULL;
        const char *sha = json_get_str(b, "sha");
        if (asprintf(&url, "%s/repos/%s/%s/commits/%s", c->base_url, json_get_str(repo, "owner"),
                     json_get_str(repo, "name"), sha) < 0)
                return NULL;
        json_t *out =
                json_pack("{s:O, s:{s:s, s:s}, s:O}", "name", json_object_get(b, "name"), "commit",
                          "sha", sha, "url", url, "protected", json_object_get(b, "protected"));
        /* github-mcp-server's `fields` names the head sha "sha" */
        if (out && json_is_array(json_object_get(c->args, "fields")) &&
            json_object_set_new(out, "sha", json_string(sha)) < 0) {
                json_decref(out);
                return NULL;
        }
        return out;
}

static int branch_cmp(const void *a, const void *b)
{
        return strcmp(json_get_str(*(json_t *const *)a, "name"),
                      json_get_str(*(json_t *const *)b, "name"));
}

/* GET /repos/{o}/{r}/branches {protected, per_page, page}, MCP list_branches: by name. */
int gh_act_list_branches(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        bool only_protected = false,
             filter = twin_arg_bool(c->args, "protected", &only_protected) == 0;
        json_t *branches = json_object_get(repo, "branches");
        size_t n = 0, i;
        json_t *b;
        _cleanup_free_ json_t **v = calloc(json_array_size(branches) + 1, sizeof(json_t *));
        if (!v)
                return -ENOMEM;
        json_array_foreach (branches, i, b) {
                if (!filter || json_is_true(json_object_get(b, "protected")) == only_protected)
                        v[n++] = b;
        }
        qsort(v, n, sizeof(json_t *), branch_cmp);
        _cleanup_json_ json_t *all = json_array(), *page = NULL;
        if (!all)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(all, v[i]) < 0)
                        return -ENOMEM;
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        return reply_rendered(c, rp, repo, page, render_branch_short);
}

/* GET /repos/{o}/{r}/branches/{branch}: the branch with its head commit, links, protection. */
int gh_act_get_branch(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *name = NULL;
        json_t *b = twin_arg_str(c->args, "branch", &name) == 0 ? gh_branch_find(repo, name) : NULL;
        if (!b && name) {
                /* .../branches/{branch}/protection, should a route table ever list the
                 * {branch+} route first */
                size_t l = strlen(name);
                if (l > 11 && streq(name + l - 11, "/protection")) {
                        _cleanup_free_ char *bn = strndup(name, l - 11);
                        if (!bn || json_object_set_new(c->args, "branch", json_string(bn)) < 0)
                                return -ENOMEM;
                        return gh_act_get_branch_protection(c, rp);
                }
        }
        if (!b)
                return gh_fail(rp, 404, "Branch not found");
        json_t *commit = gh_commit_find(repo, json_get_str(b, "sha"));
        _cleanup_free_ char *self = NULL, *html = NULL, *prot = NULL;
        const char *owner = json_get_str(repo, "owner"), *rname = json_get_str(repo, "name");
        if (asprintf(&self, "%s/repos/%s/%s/branches/%s", c->base_url, owner, rname, name) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/tree/%s", owner, rname, name) < 0 ||
            asprintf(&prot, "%s/protection", self) < 0)
                return -ENOMEM;
        bool on = json_is_true(json_object_get(b, "protected"));
        return twin_reply_body(
                rp, 200,
                json_pack("{s:O, s:o, s:{s:s, s:s}, s:b, s:{s:b, s:{s:s, s:[], s:[]}}, s:s}",
                          "name", json_object_get(b, "name"), "commit",
                          gh_render_commit(c, repo, commit, false), "_links", "self", self, "html",
                          html, "protected", on, "protection", "enabled", on,
                          "required_status_checks", "enforcement_level", on ? "non_admins" : "off",
                          "contexts", "checks", "protection_url", prot));
}

/* ------------------------------------------------------------------ git refs */

/*
 * POST /repos/{o}/{r}/git/refs {ref: "refs/heads/x" | "refs/tags/x", sha} (REST) and MCP
 * create_branch {branch, from_branch} (from the default branch when omitted): 201 with the
 * new ref. 422 "Reference already exists" / "Object does not exist" as GitHub answers.
 */
int gh_act_create_branch(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *ref = NULL, *sha = NULL, *branch = NULL, *from = NULL;
        if (twin_arg_str(c->args, "ref", &ref) == -EINVAL ||
            twin_arg_str(c->args, "sha", &sha) == -EINVAL ||
            twin_arg_str(c->args, "branch", &branch) == -EINVAL ||
            twin_arg_str(c->args, "from_branch", &from) == -EINVAL)
                return gh_fail(rp, 422,
                               c->request ? "Invalid request.\n\nFor 'properties/ref', it is "
                                            "not a string."
                                          : "Invalid request: branch and from_branch must be "
                                            "strings.");
        _cleanup_free_ char *full = NULL;
        const char *name;
        bool tag = false;
        if (ref) {
                const char *rest = startswith(ref, "refs/");
                const char *h = rest ? startswith(rest, "heads/") : NULL;
                const char *t = rest ? startswith(rest, "tags/") : NULL;
                if (!h && !t)
                        return gh_fail(rp, 422,
                                       "Reference name must start with 'refs/' and have "
                                       "at least two slashes.");
                name = h ? h : t;
                tag = t != NULL;
                full = strdup(ref);
        } else if (branch) {
                name = branch;
                if (asprintf(&full, "refs/heads/%s", branch) < 0)
                        full = NULL;
        } else if (!c->request) /* MCP create_branch: the official server's wording */
                return gh_fail(rp, 422, "missing required parameter: branch");
        else
                return gh_invalid(rp, "Reference", "ref", "missing_field");
        if (!full)
                return -ENOMEM;
        if (!gh_branch_name_valid(name))
                return gh_fail(rp, 422, "Reference name is not valid");
        if (!sha) {
                if (ref)
                        return gh_invalid(rp, "Reference", "sha", "missing_field");
                const char *src = from ? from : json_get_str(repo, "default_branch");
                json_t *b = gh_branch_find(repo, src);
                if (!b)
                        return gh_fail(rp, 404, "Branch not found");
                sha = json_get_str(b, "sha");
        }
        json_t *commit = gh_commit_find(repo, sha);
        if (!commit || strlen(sha) != 40)
                return gh_fail(rp, 422, "Object does not exist");
        sha = json_get_str(commit, "sha");
        if (tag ? gh_tag_find(repo, name) != NULL : gh_branch_find(repo, name) != NULL)
                return gh_fail(rp, 422, "Reference already exists");
        json_t *row;
        if (tag)
                row = gh_tag_add(c->world, repo, name, sha, "", json_get_str(c->world, "viewer"),
                                 c->now);
        else {
                row = json_pack("{s:s, s:s, s:b}", "name", name, "sha", sha, "protected", false);
                if (row && json_array_append_new(json_object_get(repo, "branches"), row) < 0)
                        row = NULL;
        }
        if (!row || (r = twin_reply_mutation(rp, NULL, row)) < 0)
                return row ? r : -ENOMEM;
        return twin_reply_body(rp, 201, gh_render_ref(c, repo, full, sha));
}

/* "heads/x", "tags/x" (with or without "refs/") → is_tag and the name. NULL when neither. */
static const char *ref_name(const char *ref, bool *is_tag)
{
        const char *r = startswith(ref, "refs/") ? ref + 5 : ref, *n;
        if ((n = startswith(r, "heads/"))) {
                *is_tag = false;
                return n;
        }
        if ((n = startswith(r, "tags/"))) {
                *is_tag = true;
                return n;
        }
        return NULL;
}

/* GET /repos/{o}/{r}/git/ref/{ref}: one branch or tag ref, 404 when it does not exist. */
int gh_act_get_git_ref(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *ref, *name;
        bool tag;
        if (twin_arg_str(c->args, "ref", &ref) < 0 || !(name = ref_name(ref, &tag)))
                return gh_not_found(rp);
        json_t *row = tag ? gh_tag_find(repo, name) : gh_branch_find(repo, name);
        if (!row)
                return gh_not_found(rp);
        _cleanup_free_ char *full = NULL;
        if (asprintf(&full, "refs/%s/%s", tag ? "tags" : "heads", name) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, gh_render_ref(c, repo, full, json_get_str(row, "sha")));
}

static int str_cmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every ref of repo (refs/heads/… then refs/tags/…, each by name, as git sorts them) whose
 * full name starts with prefix, rendered: a new array, NULL on OOM. */
static json_t *refs_matching(TwinCall *c, json_t *repo, const char *prefix)
{
        _cleanup_json_ json_t *out = json_array();
        const char *lists[][2] = {{"branches", "refs/heads/"}, {"tags", "refs/tags/"}};
        for (size_t k = 0; out && k < ELEMENTSOF(lists); k++) {
                json_t *rows = json_object_get(repo, lists[k][0]);
                size_t n = json_array_size(rows), i;
                _cleanup_free_ const char **names = calloc(n ? n : 1, sizeof(*names));
                if (!names)
                        return NULL;
                for (i = 0; i < n; i++)
                        names[i] = strempty(json_get_str(json_array_get(rows, i), "name"));
                qsort(names, n, sizeof(*names), str_cmp);
                for (i = 0; i < n; i++) {
                        _cleanup_free_ char *full = NULL;
                        if (asprintf(&full, "%s%s", lists[k][1], names[i]) < 0)
                                return NULL;
                        if (!startswith(full, prefix))
                                continue;
                        json_t *row = k == 0 ? gh_branch_find(repo, names[i])
                                             : gh_tag_find(repo, names[i]);
                        if (json_array_append_new(out, gh_render_ref(c, repo, full,
                                                                     json_get_str(row, "sha"))) < 0)
                                return NULL;
                }
        }
        return TAKE_PTR(out);
}

/*
 * GET /repos/{o}/{r}/git/refs[/{ref}] and /git/matching-refs/{ref} (list_git_refs): every ref,
 * or those whose name starts with refs/<ref> ("heads", "heads/feat"). The legacy /git/refs
 * form that PyGithub 1.55 and octokit.rb 4.20 use answers an exact match as the ref object
 * itself, other matches as a list, none as 404 (docs.github.com "Git references": "If the
 * {ref} doesn't exist in the repository, but existing refs start with {ref}, they will be
 * returned as an array"); /git/matching-refs answers a list always, [] included.
 */
int gh_act_list_git_refs(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *ref = NULL;
        (void)twin_arg_str(c->args, "ref", &ref);
        bool matching = json_is_true(json_object_get(c->args, "matching"));
        _cleanup_free_ char *prefix = NULL;
        if (asprintf(&prefix, "refs/%s", strempty(ref)) < 0)
                return -ENOMEM;
        if (ref && !matching) {
                /* an exact ref is the object; a directory of refs is matched below it */
                _cleanup_json_ json_t *exact = refs_matching(c, repo, prefix);
                if (!exact)
                        return -ENOMEM;
                size_t i;
                json_t *x;
                json_array_foreach (exact, i, x) {
                        if (streq_ptr(json_get_str(x, "ref"), prefix))
                                return twin_reply_body(rp, 200, json_incref(x));
                }
                char *dir;
                if (asprintf(&dir, "%s/", prefix) < 0)
                        return -ENOMEM;
                free(prefix);
                prefix = dir;
        }
        json_t *list = refs_matching(c, repo, prefix);
        if (!list)
                return -ENOMEM;
        if (!matching && ref && json_array_size(list) == 0) {
                json_decref(list);
                return gh_not_found(rp);
        }
        return twin_reply_body(rp, 200, list);
}

/*
 * DELETE /repos/{o}/{r}/git/refs/{ref} (REST, "heads/x" or "tags/x") and delete_branch
 * {branch}: 204; 422 "Reference does not exist"; the default branch cannot be deleted.
 */
int gh_act_delete_branch(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *ref = NULL, *name = NULL;
        bool tag = false;
        if (twin_arg_str(c->args, "ref", &ref) == 0)
                name = ref_name(ref, &tag);
        else
                (void)twin_arg_str(c->args, "branch", &name);
        if (!name)
                return gh_fail(rp, 422, "Reference does not exist");
        const char *list = tag ? "tags" : "branches";
        json_t *rows = json_object_get(repo, list);
        size_t i;
        json_t *row;
        json_array_foreach (rows, i, row) {
                if (!streq_ptr(json_get_str(row, "name"), name))
                        continue;
                if (!tag && streq_ptr(name, json_get_str(repo, "default_branch")))
                        return gh_fail(rp, 422, "Cannot delete the default branch");
                if (!tag && json_is_true(json_object_get(row, "protected")))
                        return gh_fail(rp, 422, "Cannot delete a protected branch");
                if ((r = twin_reply_mutation(rp, row, NULL)) < 0)
                        return r;
                json_array_remove(rows, i);
                twin_reply_json(rp, 204, NULL);
                return 0;
        }
        return gh_fail(rp, 422, "Reference does not exist");
}

/* ------------------------------------------------------------------ collaborators */

static const char *collab_permission(json_t *repo, const char *login)
{
        if (strcasecmp(json_get_str(repo, "owner"), login) == 0)
                return "admin";
        return gh_strv_has(json_object_get(repo, "collaborators"), login) ? "write" : NULL;
}

static json_t *render_collaborator(TwinCall *c, json_t *repo, json_t *login)
{
        const char *l = json_string_value(login), *perm = collab_permission(repo, l);
        bool admin = streq_ptr(perm, "admin");
        json_t *u = gh_render_user(c, l);
        if (!u ||
            json_object_set_new(u, "permissions",
                                json_pack("{s:b, s:b, s:b, s:b, s:b}", "admin", admin, "maintain",
                                          admin, "push", true, "triage", true, "pull", true)) < 0 ||
            json_object_set_new(u, "role_name", json_string(perm)) < 0) {
                json_decref(u);
                return NULL;
        }
        return u;
}

/*
 * GET /repos/{o}/{r}/collaborators, MCP list_repository_collaborators: the owner (when a
 * user, not an organisation) and the collaborators, with their permissions.
 */
int gh_act_list_repository_collaborators(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *all = json_array(), *page = NULL;
        if (!all)
                return -ENOMEM;
        const char *affiliation = "all";
        if (twin_arg_str(c->args, "affiliation", &affiliation) == -EINVAL ||
            (!streq(affiliation, "all") && !streq(affiliation, "direct") &&
             !streq(affiliation, "outside")))
                return gh_invalid(rp, "Collaborator", "affiliation", "invalid");
        json_t *o = gh_user_find(c->world, json_get_str(repo, "owner"));
        /* the owner is no outside collaborator */
        if (o && !streq(affiliation, "outside") &&
            !streq_ptr(json_get_str(o, "type"), "Organization") &&
            json_array_append(all, json_object_get(o, "login")) < 0)
                return -ENOMEM;
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(repo, "collaborators"), i, l) {
                if (!gh_strv_has(all, json_string_value(l)) && json_array_append(all, l) < 0)
                        return -ENOMEM;
        }
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        return reply_rendered(c, rp, repo, page, render_collaborator);
}

/* GET /repos/{o}/{r}/collaborators/{username}: 204 when a collaborator, else 404. */
int gh_act_check_collaborator(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *login;
        if (twin_arg_str(c->args, "username", &login) < 0 || !collab_permission(repo, login))
                return gh_not_found(rp);
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/*
 * PUT /repos/{o}/{r}/collaborators/{username} {permission}: 201 with an invitation the user
 * has to accept (they are not a collaborator until then, as on github.com), 204 when they
 * already are one or are invited already. 404 for an unknown user, 422 for an organisation.
 */
int gh_act_add_repository_collaborator(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *login, *perm = "push";
        if (twin_arg_str(c->args, "username", &login) < 0)
                return gh_invalid(rp, "Collaborator", "username", "missing_field");
        if (twin_arg_str(c->args, "permission", &perm) == -EINVAL ||
            (!streq(perm, "pull") && !streq(perm, "triage") && !streq(perm, "push") &&
             !streq(perm, "maintain") && !streq(perm, "admin")))
                return gh_invalid(rp, "Collaborator", "permission", "invalid");
        json_t *u = gh_user_find(c->world, login);
        if (!u)
                return gh_not_found(rp);
        if (streq_ptr(json_get_str(u, "type"), "Organization"))
                return gh_invalid(rp, "Collaborator", "username", "invalid");
        login = json_get_str(u, "login");
        json_t *inv = json_object_get(repo, "invitations");
        if (!inv) {
                if (json_object_set_new(repo, "invitations", json_array()) < 0)
                        return -ENOMEM;
                inv = json_object_get(repo, "invitations");
        }
        size_t i;
        json_t *x;
        json_array_foreach (inv, i, x) {
                if (strcasecmp(json_get_str(x, "invitee"), login) == 0) {
                        twin_reply_json(rp, 204, NULL);
                        return 0;
                }
        }
        if (collab_permission(repo, login)) {
                twin_reply_json(rp, 204, NULL);
                return 0;
        }
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = gh_alloc_id(c->world);
        const char *viewer = json_get_str(c->world, "viewer");
        json_t *row = json_pack("{s:I, s:o, s:s, s:s, s:s, s:s}", "id", (json_int_t)id, "node_id",
                                gh_node_id("RepositoryInvitation", id), "invitee", login, "inviter",
                                viewer, "permissions", perm, "created_at", now);
        if (!row || json_array_append_new(inv, row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        _cleanup_free_ char *url = NULL, *html = NULL;
        if (asprintf(&url, "%s/user/repository_invitations/%lld", c->base_url, (long long)id) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/invitations", json_get_str(repo, "owner"),
                     json_get_str(repo, "name")) < 0)
                return -ENOMEM;
        return twin_reply_body(
                rp, 201,
                json_pack("{s:I, s:O, s:o, s:o, s:o, s:s, s:s, s:s, s:s, s:b}", "id",
                          (json_int_t)id, "node_id", json_object_get(row, "node_id"), "repository",
                          gh_render_repo(c, repo), "invitee", gh_render_user(c, login), "inviter",
                          gh_render_user(c, viewer), "permissions", perm, "created_at", now, "url",
                          url, "html_url", html, "expired", false));
}

/* ------------------------------------------------------------------ tags */

static json_t *render_tag(TwinCall *c, json_t *repo, json_t *t)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        const char *tag = json_get_str(t, "name"), *sha = json_get_str(t, "sha");
        _cleanup_free_ char *zip = NULL, *tar = NULL, *url = NULL, *raw = NULL, *nid = NULL;
        int n = asprintf(&raw, "03:Ref%lld:refs/tags/%s",
                         (long long)json_integer_value(json_object_get(repo, "id")), tag);
        if (n < 0 || !(nid = twin_base64(raw, (size_t)n)) ||
            asprintf(&zip, "%s/repos/%s/%s/zipball/refs/tags/%s", c->base_url, owner, name, tag) <
                    0 ||
            asprintf(&tar, "%s/repos/%s/%s/tarball/refs/tags/%s", c->base_url, owner, name, tag) <
                    0 ||
            asprintf(&url, "%s/repos/%s/%s/commits/%s", c->base_url, owner, name, sha) < 0)
                return NULL;
        return json_pack("{s:s, s:s, s:s, s:{s:s, s:s}, s:s}", "name", tag, "zipball_url", zip,
                         "tarball_url", tar, "commit", "sha", sha, "url", url, "node_id", nid);
}

/* GET /repos/{o}/{r}/tags, MCP list_tags: newest first. */
int gh_act_list_tags(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        json_t *tags = json_object_get(repo, "tags");
        _cleanup_json_ json_t *all = json_array(), *page = NULL;
        if (!all)
                return -ENOMEM;
        for (size_t i = json_array_size(tags); i > 0; i--)
                if (json_array_append(all, json_array_get(tags, i - 1)) < 0)
                        return -ENOMEM;
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        return reply_rendered(c, rp, repo, page, render_tag);
}

/*
 * MCP get_tag {tag} and GET /repos/{o}/{r}/git/tags/{tag_sha}: the annotated tag object
 * {node_id, tag, sha, url, message, tagger, object {sha, type, url}, verification}.
 */
int gh_act_get_tag(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *name = NULL, *tag_sha = NULL;
        json_t *t = NULL;
        if (twin_arg_str(c->args, "tag", &name) == 0)
                t = gh_tag_find(repo, name);
        else if (twin_arg_str(c->args, "tag_sha", &tag_sha) == 0) {
                size_t i;
                json_t *x;
                json_array_foreach (json_object_get(repo, "tags"), i, x) {
                        if (streq_ptr(json_get_str(x, "tag_sha"), tag_sha))
                                t = x;
                }
        }
        if (!t)
                return gh_not_found(rp);
        const char *owner = json_get_str(repo, "owner"), *rname = json_get_str(repo, "name");
        const char *ts = json_get_str(t, "tag_sha"), *sha = json_get_str(t, "sha");
        _cleanup_free_ char *url = NULL, *obj = NULL, *raw = NULL, *nid = NULL;
        int n = asprintf(&raw, "03:Tag%lld:%s",
                         (long long)json_integer_value(json_object_get(repo, "id")), ts);
        if (n < 0 || !(nid = twin_base64(raw, (size_t)n)) ||
            asprintf(&url, "%s/repos/%s/%s/git/tags/%s", c->base_url, owner, rname, ts) < 0 ||
            asprintf(&obj, "%s/repos/%s/%s/git/commits/%s", c->base_url, owner, rname, sha) < 0)
                return -ENOMEM;
        return twin_reply_body(
                rp, 200,
                json_pack("{s:s, s:O, s:s, s:s, s:O, s:O, s:{s:s, s:s, s:s}, s:{s:b, s:s, s:n, "
                          "s:n, s:n}}",
                          "node_id", nid, "tag", json_object_get(t, "name"), "sha", ts, "url", url,
                          "message", json_object_get(t, "message"), "tagger",
                          json_object_get(t, "tagger"), "object", "sha", sha, "type", "commit",
                          "url", obj, "verification", "verified", false, "reason", "unsigned",
                          "signature", "payload", "verified_at"));
}

/* ------------------------------------------------------------------ releases */

static json_t *render_release(TwinCall *c, json_t *repo, json_t *rel)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        const char *tag = json_get_str(rel, "tag_name");
        long long id = json_integer_value(json_object_get(rel, "id"));
        _cleanup_free_ char *url = NULL, *html = NULL, *assets = NULL, *upload = NULL, *tar = NULL,
                            *zip = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/releases/%lld", c->base_url, owner, name, id) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/releases/tag/%s", owner, name, tag) < 0 ||
            asprintf(&assets, "%s/assets", url) < 0 ||
            asprintf(&upload,
                     "https://uploads.github.com/repos/%s/%s/releases/%lld/assets{?name,label}",
                     owner, name, id) < 0 ||
            asprintf(&tar, "%s/repos/%s/%s/tarball/%s", c->base_url, owner, name, tag) < 0 ||
            asprintf(&zip, "%s/repos/%s/%s/zipball/%s", c->base_url, owner, name, tag) < 0)
                return NULL;
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, "
                         "s:O, s:o, s:[], s:O}",
                         "url", url, "html_url", html, "assets_url", assets, "upload_url", upload,
                         "tarball_url", tar, "zipball_url", zip, "id", json_object_get(rel, "id"),
                         "node_id", json_object_get(rel, "node_id"), "tag_name",
                         json_object_get(rel, "tag_name"), "target_commitish",
                         json_object_get(rel, "target_commitish"), "name",
                         json_object_get(rel, "name"), "draft", json_object_get(rel, "draft"),
                         "prerelease", json_object_get(rel, "prerelease"), "created_at",
                         json_object_get(rel, "created_at"), "published_at",
                         json_object_get(rel, "published_at"), "author",
                         gh_render_user(c, json_get_str(rel, "author")), "assets", "body",
                         json_object_get(rel, "body"));
}

/* Releases newest first (created_at, then id), as GitHub lists them. */
static int release_cmp(const void *a, const void *b)
{
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int d = strcmp(strempty(json_get_str(y, "created_at")),
                       strempty(json_get_str(x, "created_at")));
        if (d)
                return d;
        json_int_t ix = json_integer_value(json_object_get(x, "id")),
                   iy = json_integer_value(json_object_get(y, "id"));
        return (iy > ix) - (iy < ix);
}

static json_t *releases_sorted(json_t *repo)
{
        json_t *rels = json_object_get(repo, "releases");
        size_t n = json_array_size(rels), i;
        _cleanup_free_ json_t **v = calloc(n + 1, sizeof(json_t *));
        _cleanup_json_ json_t *out = json_array();
        if (!v || !out)
                return NULL;
        json_t *x;
        json_array_foreach (rels, i, x)
                v[i] = x;
        qsort(v, n, sizeof(json_t *), release_cmp);
        for (i = 0; i < n; i++)
                if (json_array_append(out, v[i]) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

/* GET /repos/{o}/{r}/releases, MCP list_releases: newest first, paginated. */
int gh_act_list_releases(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *all = releases_sorted(repo), *page = NULL;
        if (!all)
                return -ENOMEM;
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        return reply_rendered(c, rp, repo, page, render_release);
}

/* GET /repos/{o}/{r}/releases/latest, MCP get_latest_release: newest published, non-pre. */
int gh_act_get_latest_release(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *all = releases_sorted(repo);
        if (!all)
                return -ENOMEM;
        size_t i;
        json_t *x;
        json_array_foreach (all, i, x) {
                if (!json_is_true(json_object_get(x, "draft")) &&
                    !json_is_true(json_object_get(x, "prerelease")))
                        return twin_reply_body(rp, 200, render_release(c, repo, x));
        }
        return gh_not_found(rp);
}

/* GET /repos/{o}/{r}/releases/tags/{tag}, MCP get_release_by_tag. */
int gh_act_get_release_by_tag(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *tag;
        if (twin_arg_str(c->args, "tag", &tag) < 0)
                return gh_not_found(rp);
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(repo, "releases"), i, x) {
                if (streq_ptr(json_get_str(x, "tag_name"), tag))
                        return twin_reply_body(rp, 200, render_release(c, repo, x));
        }
        return gh_not_found(rp);
}

/*
 * POST /repos/{o}/{r}/releases {tag_name, target_commitish, name, body, draft, prerelease}:
 * 201. A tag that does not exist yet is created at target_commitish (default branch by
 * default), as GitHub does; a second release of one tag is 422 already_exists.
 */
int gh_act_create_release(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *tag, *target = json_get_str(repo, "default_branch"), *name = NULL, *body = NULL;
        bool draft = false, pre = false;
        r = twin_arg_str(c->args, "tag_name", &tag);
        if (r < 0 || !gh_branch_name_valid(tag))
                return gh_invalid(rp, "Release", "tag_name",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if (twin_arg_str(c->args, "target_commitish", &target) == -EINVAL)
                return gh_invalid(rp, "Release", "target_commitish", "invalid");
        if (twin_arg_str(c->args, "name", &name) == -EINVAL ||
            twin_arg_str(c->args, "body", &body) == -EINVAL ||
            twin_arg_bool(c->args, "draft", &draft) == -EINVAL ||
            twin_arg_bool(c->args, "prerelease", &pre) == -EINVAL)
                return gh_invalid(rp, "Release", "body", "invalid");
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(repo, "releases"), i, x) {
                if (streq_ptr(json_get_str(x, "tag_name"), tag))
                        return gh_invalid(rp, "Release", "tag_name", "already_exists");
        }
        if (!gh_tag_find(repo, tag)) {
                const char *sha = gh_ref_sha(repo, target);
                if (!sha)
                        return gh_invalid(rp, "Release", "target_commitish", "invalid");
                if (!draft && !gh_tag_add(c->world, repo, tag, sha, "",
                                          json_get_str(c->world, "viewer"), c->now))
                        return -ENOMEM;
        }
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = gh_alloc_id(c->world);
        json_t *row = json_pack("{s:I, s:o, s:s, s:s?, s:s?, s:b, s:b, s:s, s:s?, s:s, s:s}", "id",
                                (json_int_t)id, "node_id", gh_node_id("Release", id), "tag_name",
                                tag, "name", name, "body", body, "draft", draft, "prerelease", pre,
                                "created_at", now, "published_at", draft ? NULL : now, "author",
                                json_get_str(c->world, "viewer"), "target_commitish", target);
        if (!row || json_array_append_new(json_object_get(repo, "releases"), row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        return twin_reply_body(rp, 201, render_release(c, repo, row));
}

/* ------------------------------------------------------------------ repository lists */

typedef struct RepoOrder {
        const char *key; /* "full_name" (owner/name), or a time field */
        bool desc;
} RepoOrder;

static int repo_cmp(const void *a, const void *b, void *userdata)
{
        const RepoOrder *o = userdata;
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int d;
        if (streq(o->key, "full_name")) {
                d = strcasecmp(json_get_str(x, "owner"), json_get_str(y, "owner"));
                if (!d)
                        d = strcasecmp(json_get_str(x, "name"), json_get_str(y, "name"));
        } else {
                d = strcmp(strempty(json_get_str(x, o->key)), strempty(json_get_str(y, o->key)));
                if (!d) {
                        json_int_t ix = json_integer_value(json_object_get(x, "id")),
                                   iy = json_integer_value(json_object_get(y, "id"));
                        d = (ix > iy) - (ix < iy);
                }
        }
        return o->desc ? -d : d;
}

/*
 * The repositories of the world a list shows: who names the list's owner (NULL: the viewer's
 * own and collaborations), include_private whether private ones the viewer may see count.
 * Sorted by sort (full_name, created, updated, pushed) and direction (default: asc for
 * full_name, else desc), paged. GitHub "List repositories for ..." endpoints.
 */
static int list_repos(TwinCall *c, TwinReply *rp, const char *who, bool include_private,
                      const char *default_sort)
{
        const char *viewer = json_get_str(c->world, "viewer"), *sort = default_sort,
                   *direction = NULL, *visibility = "all", *type = "all";
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            (!streq(sort, "full_name") && !streq(sort, "created") && !streq(sort, "updated") &&
             !streq(sort, "pushed")))
                return gh_invalid(rp, "Repository", "sort", "invalid");
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (direction && !streq(direction, "asc") && !streq(direction, "desc")))
                return gh_invalid(rp, "Repository", "direction", "invalid");
        if (twin_arg_str(c->args, "visibility", &visibility) == -EINVAL ||
            (!streq(visibility, "all") && !streq(visibility, "public") &&
             !streq(visibility, "private")))
                return gh_invalid(rp, "Repository", "visibility", "invalid");
        (void)twin_arg_str(c->args, "type", &type);
        json_t *repos = json_object_get(c->world, "repositories");
        size_t n = 0, i;
        json_t *r;
        _cleanup_free_ json_t **v = calloc(json_array_size(repos) + 1, sizeof(json_t *));
        if (!v)
                return -ENOMEM;
        json_array_foreach (repos, i, r) {
                const char *owner = json_get_str(r, "owner");
                bool priv = json_is_true(json_object_get(r, "private"));
                bool member = viewer && gh_repo_member(r, viewer);
                if (priv && !(include_private && member))
                        continue;
                if ((streq(visibility, "public") && priv) ||
                    (streq(visibility, "private") && !priv))
                        continue;
                if (who) {
                        if (strcasecmp(owner, who) != 0)
                                continue;
                } else {
                        bool own = viewer && strcasecmp(owner, viewer) == 0;
                        if (!member || (streq(type, "owner") && !own) ||
                            (streq(type, "member") && own))
                                continue;
                }
                if (who && (streq(type, "forks") || streq(type, "sources")) &&
                    streq(type, "forks") != (json_get_str(r, "parent") != NULL))
                        continue;
                v[n++] = r;
        }
        RepoOrder order = {.key = streq(sort, "full_name") ? "full_name"
                                  : streq(sort, "created") ? "created_at"
                                                           : "updated_at",
                           .desc = direction ? streq(direction, "desc")
                                             : !streq(sort, "full_name")};
        qsort_r(v, n, sizeof(json_t *), repo_cmp, &order);
        _cleanup_json_ json_t *all = json_array(), *page = NULL, *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(all, v[i]) < 0)
                        return -ENOMEM;
        int ret = gh_paginate(c, rp, all, &page);
        if (ret < 0)
                return ret;
        json_array_foreach (page, i, r) {
                if (json_array_append_new(out, gh_render_repo_full(c, r)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* GET /user/repos {visibility, affiliation, type, sort, direction}: the viewer's own and
 * collaborations, private ones included. */
int gh_act_list_repositories_for_authenticated_user(TwinCall *c, TwinReply *rp)
{
        return list_repos(c, rp, NULL, true, "full_name");
}

/* GET /users/{username}/repos {type, sort, direction}: a user's public repositories. */
int gh_act_list_repositories_for_user(TwinCall *c, TwinReply *rp)
{
        const char *who;
        json_t *u =
                twin_arg_str(c->args, "username", &who) == 0 ? gh_user_find(c->world, who) : NULL;
        if (!u)
                return gh_not_found(rp);
        return list_repos(c, rp, json_get_str(u, "login"), false, "full_name");
}

/* GET /orgs/{org}/repos {type, sort, direction}: an organisation's repositories (private
 * ones when the viewer collaborates on them), newest first. */
int gh_act_list_org_repositories(TwinCall *c, TwinReply *rp)
{
        const char *org;
        json_t *u = twin_arg_str(c->args, "org", &org) == 0 ? gh_user_find(c->world, org) : NULL;
        if (!u || !streq_ptr(json_get_str(u, "type"), "Organization"))
                return gh_not_found(rp);
        return list_repos(c, rp, json_get_str(u, "login"), true, "created");
}

/* ------------------------------------------------------------------ update, delete */

/*
 * PATCH /repos/{o}/{r} {name, description, private, visibility, default_branch, archived}:
 * 200 with the repository. The default branch must exist (422); a new name must be free.
 * Only the owner (or an admin: here, a collaborator) may.
 */
int gh_act_update_repository(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *name = NULL, *desc = NULL, *def = NULL, *vis = NULL;
        bool priv = json_is_true(json_object_get(repo, "private")), archived = false;
        if (twin_arg_str(c->args, "name", &name) == -EINVAL || (name && !gh_repo_name_valid(name)))
                return gh_invalid(rp, "Repository", "name", "invalid");
        json_t *dj = json_object_get(c->args, "description");
        if (dj && !json_is_null(dj) && twin_arg_str(c->args, "description", &desc) < 0)
                return gh_invalid(rp, "Repository", "description", "invalid");
        if (twin_arg_bool(c->args, "private", &priv) == -EINVAL)
                return gh_invalid(rp, "Repository", "private", "invalid");
        if (twin_arg_str(c->args, "visibility", &vis) == -EINVAL ||
            (vis && !streq(vis, "public") && !streq(vis, "private")))
                return gh_invalid(rp, "Repository", "visibility", "invalid");
        if (vis)
                priv = streq(vis, "private");
        if (twin_arg_bool(c->args, "archived", &archived) == -EINVAL)
                return gh_invalid(rp, "Repository", "archived", "invalid");
        if (twin_arg_str(c->args, "default_branch", &def) == -EINVAL ||
            (def && !gh_branch_find(repo, def)))
                return gh_invalid(rp, "Repository", "default_branch", "invalid");
        if (name && strcasecmp(name, json_get_str(repo, "name")) != 0 &&
            gh_repo_find(c->world, json_get_str(repo, "owner"), name))
                return gh_invalid(rp, "Repository", "name", "already_exists");

        _cleanup_json_ json_t *before = json_pack(
                "{s:O, s:O, s:O, s:O}", "name", json_object_get(repo, "name"), "description",
                json_object_get(repo, "description"), "private", json_object_get(repo, "private"),
                "default_branch", json_object_get(repo, "default_branch"));
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if (!before || (name && json_object_set_new(repo, "name", json_string(name)) < 0) ||
            (dj && json_object_set_new(repo, "description", json_string_or_null(desc)) < 0) ||
            json_object_set_new(repo, "private", json_boolean(priv)) < 0 ||
            (def && json_object_set_new(repo, "default_branch", json_string(def)) < 0) ||
            (json_object_get(c->args, "archived") &&
             json_object_set_new(repo, "archived", json_boolean(archived)) < 0))
                return -ENOMEM;
        _cleanup_json_ json_t *after = json_pack(
                "{s:O, s:O, s:O, s:O}", "name", json_object_get(repo, "name"), "description",
                json_object_get(repo, "description"), "private", json_object_get(repo, "private"),
                "default_branch", json_object_get(repo, "default_branch"));
        if (!after)
                return -ENOMEM;
        if (!json_equal(before, after) || json_object_get(c->args, "archived")) {
                if (json_object_set_new(repo, "updated_at", json_string(now)) < 0 ||
                    (r = twin_reply_mutation(rp, before, after)) < 0)
                        return r < 0 ? r : -ENOMEM;
        }
        return twin_reply_body(rp, 200, gh_render_repo_full(c, repo));
}

/* DELETE /repos/{o}/{r}: 204; only the owner (403 "Must have admin rights to Repository."). */
int gh_act_delete_repository(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *viewer = json_get_str(c->world, "viewer");
        if (!viewer || strcasecmp(viewer, json_get_str(repo, "owner")) != 0)
                return gh_fail(rp, 403, "Must have admin rights to Repository.");
        json_t *repos = json_object_get(c->world, "repositories");
        size_t i;
        json_t *x;
        json_array_foreach (repos, i, x) {
                if (x != repo)
                        continue;
                _cleanup_json_ json_t *before = json_pack(
                        "{s:O, s:O, s:O}", "id", json_object_get(repo, "id"), "owner",
                        json_object_get(repo, "owner"), "name", json_object_get(repo, "name"));
                if (!before || (r = twin_reply_mutation(rp, before, NULL)) < 0)
                        return before ? r : -ENOMEM;
                json_array_remove(repos, i);
                twin_reply_json(rp, 204, NULL);
                return 0;
        }
        return gh_not_found(rp);
}

/* ------------------------------------------------------------------ branch protection */

/*
 * Does branch (a row of repo.branches) refuse a direct write by the viewer? A protected
 * branch does, except to an admin (the owner) when its protection does not enforce_admins;
 * a branch seeded "protected" without details enforces for everyone. GitHub "About
 * protected branches".
 */
bool gh_branch_blocks(TwinCall *c, json_t *repo, json_t *branch)
{
        if (!json_is_true(json_object_get(branch, "protected")))
                return false;
        json_t *p = json_object_get(branch, "protection");
        const char *viewer = json_get_str(c->world, "viewer");
        bool admin = viewer && strcasecmp(viewer, json_get_str(repo, "owner")) == 0;
        return !(p && admin && !json_is_true(json_object_get(p, "enforce_admins")));
}

static json_t *render_protection(TwinCall *c, json_t *repo, json_t *b)
{
        json_t *p = json_object_get(b, "protection");
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/branches/%s/protection", c->base_url,
                     json_get_str(repo, "owner"), json_get_str(repo, "name"),
                     json_get_str(b, "name")) < 0)
                return NULL;
        json_t *checks = json_object_get(p, "required_status_checks"),
               *reviews = json_object_get(p, "required_pull_request_reviews");
        json_t *out =
                json_pack("{s:s, s:{s:s, s:b}}", "url", url, "enforce_admins", "url", url,
                          "enabled", p ? json_is_true(json_object_get(p, "enforce_admins")) : true);
        if (out && checks && !json_is_null(checks) &&
            json_object_set_new(out, "required_status_checks",
                                json_pack("{s:s, s:O, s:O}", "url", url, "strict",
                                          json_object_get(checks, "strict"), "contexts",
                                          json_object_get(checks, "contexts"))) < 0)
                goto oom;
        if (out && reviews && !json_is_null(reviews) &&
            json_object_set_new(
                    out, "required_pull_request_reviews",
                    json_pack("{s:s, s:O}", "url", url, "required_approving_review_count",
                              json_object_get(reviews, "required_approving_review_count"))) < 0)
                goto oom;
        return out;
oom:
        json_decref(out);
        return NULL;
}

/* GET /repos/{o}/{r}/branches/{branch}/protection: 404 "Branch not protected" when not. */
int gh_act_get_branch_protection(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *name;
        json_t *b = twin_arg_str(c->args, "branch", &name) == 0 ? gh_branch_find(repo, name) : NULL;
        if (!b)
                return gh_fail(rp, 404, "Branch not found");
        if (!json_is_true(json_object_get(b, "protected")))
                return gh_fail(rp, 404, "Branch not protected");
        return twin_reply_body(rp, 200, render_protection(c, repo, b));
}

/*
 * PUT /repos/{o}/{r}/branches/{branch}/protection {required_status_checks {strict,
 * contexts}, enforce_admins, required_pull_request_reviews {required_approving_review_count},
 * restrictions}: protects the branch (200 with the protection); DELETE unprotects (204).
 * Only the owner or a collaborator with push access may (403 otherwise).
 */
int gh_act_update_branch_protection(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *name;
        json_t *b = twin_arg_str(c->args, "branch", &name) == 0 ? gh_branch_find(repo, name) : NULL;
        if (!b)
                return gh_fail(rp, 404, "Branch not found");
        bool del = c->request && streq(c->request->method, "DELETE");
        _cleanup_json_ json_t *before = json_deep_copy(b);
        if (!before)
                return -ENOMEM;
        if (del) {
                if (json_object_set_new(b, "protected", json_false()) < 0)
                        return -ENOMEM;
                json_object_del(b, "protection");
                if (!json_equal(before, b) && (r = twin_reply_mutation(rp, before, b)) < 0)
                        return r;
                twin_reply_json(rp, 204, NULL);
                return 0;
        }
        json_t *checks = json_object_get(c->args, "required_status_checks");
        json_t *reviews = json_object_get(c->args, "required_pull_request_reviews");
        bool enforce = false;
        if (twin_arg_bool(c->args, "enforce_admins", &enforce) == -EINVAL)
                return gh_invalid(rp, "Protection", "enforce_admins", "invalid");
        _cleanup_json_ json_t *contexts = NULL;
        bool strict = false;
        if (checks && !json_is_null(checks)) {
                json_t *ctx = json_object_get(checks, "contexts");
                if (!json_is_object(checks) || (ctx && !json_is_array(ctx)))
                        return gh_invalid(rp, "Protection", "required_status_checks", "invalid");
                contexts = json_array();
                size_t i;
                json_t *x;
                json_array_foreach (ctx, i, x) {
                        if (!json_is_string(x))
                                return gh_invalid(rp, "Protection", "required_status_checks",
                                                  "invalid");
                        if (json_array_append(contexts, x) < 0)
                                return -ENOMEM;
                }
                /* the newer checks[] form: [{context, app_id}] */
                json_array_foreach (json_object_get(checks, "checks"), i, x) {
                        if (json_is_string(json_object_get(x, "context")) &&
                            json_array_append(contexts, json_object_get(x, "context")) < 0)
                                return -ENOMEM;
                }
                strict = json_is_true(json_object_get(checks, "strict"));
        }
        int64_t count = 1;
        if (reviews && !json_is_null(reviews)) {
                if (!json_is_object(reviews) ||
                    twin_arg_int(reviews, "required_approving_review_count", 0, 6, &count) ==
                            -EINVAL)
                        return gh_invalid(rp, "Protection", "required_pull_request_reviews",
                                          "invalid");
        }
        json_t *p = json_pack("{s:b}", "enforce_admins", enforce);
        if (!p || json_object_set_new(b, "protection", p) < 0 ||
            json_object_set_new(b, "protected", json_true()) < 0 ||
            json_object_set_new(
                    p, "required_status_checks",
                    contexts ? json_pack("{s:b, s:O}", "strict", strict, "contexts", contexts)
                             : json_null()) < 0 ||
            json_object_set_new(p, "required_pull_request_reviews",
                                reviews && !json_is_null(reviews)
                                        ? json_pack("{s:I}", "required_approving_review_count",
                                                    (json_int_t)count)
                                        : json_null()) < 0)
                return -ENOMEM;
        if (!json_equal(before, b) && (r = twin_reply_mutation(rp, before, b)) < 0)
                return r;
        return twin_reply_body(rp, 200, render_protection(c, repo, b));
}
