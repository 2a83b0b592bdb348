/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's commit statuses (https://docs.github.com/rest/commits/statuses) and
 * check runs (https://docs.github.com/rest/checks/runs): create, list for a ref, the
 * combined status, get and update a check run, and their seed entries.
 *
 * repository.statuses[]: {id, node_id, sha, context, state, description, target_url, creator,
 * created_at, updated_at}, newest last. repository.check_runs[]: {id, node_id, head_sha, name,
 * status, conclusion, started_at, completed_at, output {title, summary, text}, details_url,
 * external_id}.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

static const char *const status_states[] = {"error", "failure", "pending", "success"};
static const char *const run_statuses[] = {"queued",  "in_progress", "completed",
                                           "waiting", "requested",   "pending"};
static const char *const run_conclusions[] = {"action_required", "cancelled", "failure",
                                              "neutral",         "success",   "skipped",
                                              "stale",           "timed_out"};

static bool one_of(const char *s, const char *const *v, size_t n)
{
        for (size_t i = 0; s && i < n; i++)
                if (streq(s, v[i]))
                        return true;
        return false;
}

/* repo[key] as an array, added when the repository has none yet. NULL on OOM. */
json_t *gh_repo_list(json_t *repo, const char *key)
{
        json_t *a = json_object_get(repo, key);
        if (json_is_array(a))
                return a;
        a = json_array();
        if (!a || json_object_set_new(repo, key, a) < 0)
                return NULL;
        return a;
}

/* ------------------------------------------------------------------ statuses */

static json_t *render_status(TwinCall *c, json_t *repo, json_t *st)
{
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/statuses/%s", c->base_url, json_get_str(repo, "owner"),
                     json_get_str(repo, "name"), json_get_str(st, "sha")) < 0)
                return NULL;
        return json_pack(
                "{s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:o}", "url", url, "avatar_url",
                "", "id", json_object_get(st, "id"), "node_id", json_object_get(st, "node_id"),
                "state", json_object_get(st, "state"), "description",
                json_object_get(st, "description"), "target_url", json_object_get(st, "target_url"),
                "context", json_object_get(st, "context"), "created_at",
                json_object_get(st, "created_at"), "updated_at", json_object_get(st, "updated_at"),
                "creator", gh_render_user(c, json_get_str(st, "creator")));
}

/* The statuses of sha, newest first (new array of borrowed rows); latest: one per context. */
static json_t *statuses_of(json_t *repo, const char *sha, bool latest)
{
        _cleanup_json_ json_t *out = json_array(), *seen = json_object();
        json_t *all = json_object_get(repo, "statuses");
        if (!out || !seen)
                return NULL;
        for (size_t i = json_array_size(all); sha && i-- > 0;) {
                json_t *st = json_array_get(all, i);
                const char *ctx = strempty(json_get_str(st, "context"));
                if (!streq_ptr(json_get_str(st, "sha"), sha))
                        continue;
                if (latest && json_object_get(seen, ctx))
                        continue;
                if (json_object_set_new(seen, ctx, json_true()) < 0 ||
                    json_array_append(out, st) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

const char *gh_combined_state(json_t *repo, const char *sha)
{
        _cleanup_json_ json_t *latest = statuses_of(repo, sha, true);
        bool pending = json_array_size(latest) == 0, failed = false;
        size_t i;
        json_t *st;
        json_array_foreach (latest, i, st) {
                const char *s = json_get_str(st, "state");
                failed = failed || streq_ptr(s, "error") || streq_ptr(s, "failure");
                pending = pending || streq_ptr(s, "pending");
        }
        /* "Get the combined status for a specific reference": failure wins, then pending */
        return failed ? "failure" : pending ? "pending" : "success";
}

size_t gh_status_count(json_t *repo, const char *sha)
{
        _cleanup_json_ json_t *latest = statuses_of(repo, sha, true);
        return json_array_size(latest);
}

int gh_reply_combined_status(TwinCall *c, TwinReply *rp, json_t *repo, const char *sha)
{
        if (!sha)
                return gh_not_found(rp);
        _cleanup_json_ json_t *latest = statuses_of(repo, sha, true), *page = NULL,
                              *out = json_array();
        if (!latest || !out)
                return -ENOMEM;
        int r = gh_paginate(c, rp, latest, &page);
        if (r < 0)
                return r;
        size_t i;
        json_t *st;
        json_array_foreach (page, i, st) {
                if (json_array_append_new(out, render_status(c, repo, st)) < 0)
                        return -ENOMEM;
        }
        _cleanup_free_ char *url = NULL, *commit_url = NULL;
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        if (asprintf(&commit_url, "%s/repos/%s/%s/commits/%s", c->base_url, owner, name, sha) < 0 ||
            asprintf(&url, "%s/status", commit_url) < 0)
                return -ENOMEM;
        return twin_reply_body(
                rp, 200,
                json_pack("{s:s, s:o, s:s, s:I, s:o, s:s, s:s}", "state",
                          gh_combined_state(repo, sha), "statuses", TAKE_PTR(out), "sha", sha,
                          "total_count", (json_int_t)json_array_size(latest), "repository",
                          gh_render_repo(c, repo), "commit_url", commit_url, "url", url));
}

/* The commit sha args[key] names (a ref or a sha): 1, or 0 with rp holding the refusal. */
static int arg_ref_sha(TwinCall *c, TwinReply *rp, json_t *repo, const char *key, const char **ret)
{
        const char *ref;
        if (twin_arg_str(c->args, key, &ref) < 0)
                return gh_invalid(rp, "Commit", key, "missing_field");
        const char *sha = gh_ref_sha(repo, ref);
        if (!sha) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "No commit found for SHA: %s", ref) < 0)
                        return -ENOMEM;
                return gh_fail(rp, 422, m);
        }
        *ret = sha;
        return 1;
}

int gh_act_create_commit_status(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *sha, *state, *context = "default", *desc = NULL, *target = NULL;
        if ((r = twin_arg_str(c->args, "state", &state)) < 0 ||
            !one_of(state, status_states, ELEMENTSOF(status_states)))
                return gh_invalid(rp, "Status", "state",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if (twin_arg_str(c->args, "context", &context) == -EINVAL || !context[0])
                return gh_invalid(rp, "Status", "context", "invalid");
        if (twin_arg_str(c->args, "description", &desc) == -EINVAL)
                return gh_invalid(rp, "Status", "description", "invalid");
        /* GitHub keeps a status description to 140 characters */
        if ((r = gh_pulls_too_long(rp, "Status", "description", desc, 140)) != 0)
                return r < 0 ? r : 0;
        if (twin_arg_str(c->args, "target_url", &target) == -EINVAL)
                return gh_invalid(rp, "Status", "target_url", "invalid");
        if ((r = arg_ref_sha(c, rp, repo, "sha", &sha)) <= 0)
                return r;
        json_t *list = gh_repo_list(repo, "statuses");
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = gh_alloc_id(c->world);
        _cleanup_json_ json_t *row = json_pack(
                "{s:I, s:o, s:s, s:s, s:s, s:s?, s:s?, s:s, s:s, s:s}", "id", (json_int_t)id,
                "node_id", gh_node_id("StatusContext", id), "sha", sha, "context", context, "state",
                state, "description", desc, "target_url", target, "creator",
                json_get_str(c->world, "viewer"), "created_at", now, "updated_at", now);
        if (!list || !row || json_array_append(list, row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        return twin_reply_body(rp, 201, render_status(c, repo, row));
}

int gh_act_list_commit_statuses(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        const char *sha;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        if ((r = arg_ref_sha(c, rp, repo, "ref", &sha)) <= 0)
                return r;
        _cleanup_json_ json_t *all = statuses_of(repo, sha, false), *page = NULL,
                              *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        size_t i;
        json_t *st;
        json_array_foreach (page, i, st) {
                if (json_array_append_new(out, render_status(c, repo, st)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

int gh_act_get_combined_status_for_ref(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        const char *sha;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        if ((r = arg_ref_sha(c, rp, repo, "ref", &sha)) <= 0)
                return r;
        return gh_reply_combined_status(c, rp, repo, sha);
}

/* ------------------------------------------------------------------ check runs */

static json_t *render_run(TwinCall *c, json_t *repo, json_t *run)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        long long id = json_integer_value(json_object_get(run, "id"));
        _cleanup_free_ char *url = NULL, *html = NULL, *ann = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/check-runs/%lld", c->base_url, owner, name, id) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/runs/%lld", owner, name, id) < 0 ||
            asprintf(&ann, "%s/annotations", url) < 0)
                return NULL;
        json_t *out = json_object_get(run, "output");
        _cleanup_json_ json_t *prs = json_array();
        size_t i;
        json_t *pr;
        if (!prs)
                return NULL;
        const char *head_sha = json_get_str(run, "head_sha");
        json_array_foreach (json_object_get(repo, "pull_requests"), i, pr) {
                if (!streq_ptr(json_get_str(pr, "state"), "open") ||
                    !streq_ptr(gh_pr_head_sha(repo, pr), head_sha))
                        continue;
                _cleanup_free_ char *pu = NULL;
                if (asprintf(&pu, "%s/repos/%s/%s/pulls/%lld", c->base_url, owner, name,
                             (long long)json_integer_value(json_object_get(pr, "number"))) < 0)
                        return NULL;
                if (json_array_append_new(
                            prs, json_pack("{s:s, s:O, s:O, s:{s:O, s:s?}, s:{s:O, s:s?}}", "url",
                                           pu, "id", json_object_get(pr, "id"), "number",
                                           json_object_get(pr, "number"), "head", "ref",
                                           json_object_get(pr, "head"), "sha", head_sha, "base",
                                           "ref", json_object_get(pr, "base"), "sha",
                                           gh_pr_base_sha(repo, pr))) < 0)
                        return NULL;
        }
        return json_pack(
                "{s:O, s:O, s:O, s:O, s:s, s:s, s:O, s:O, s:O, s:O, s:O, "
                "s:{s:O, s:O, s:O, s:i, s:s}, s:O, s:{s:I}, s:{s:I, s:s, s:s, s:s?}, s:o}",
                "id", json_object_get(run, "id"), "node_id", json_object_get(run, "node_id"),
                "head_sha", json_object_get(run, "head_sha"), "external_id",
                json_object_get(run, "external_id"), "url", url, "html_url", html, "details_url",
                json_object_get(run, "details_url"), "status", json_object_get(run, "status"),
                "conclusion", json_object_get(run, "conclusion"), "started_at",
                json_object_get(run, "started_at"), "completed_at",
                json_object_get(run, "completed_at"), "output", "title",
                json_object_get(out, "title") ?: json_null(), "summary",
                json_object_get(out, "summary") ?: json_null(), "text",
                json_object_get(out, "text") ?: json_null(), "annotations_count", 0,
                "annotations_url", ann, "name", json_object_get(run, "name"), "check_suite", "id",
                (json_int_t)id, "app", "id", (json_int_t)1, "slug", "pome-ci", "name", "Pome CI",
                "owner", NULL, "pull_requests", TAKE_PTR(prs));
}

json_t *gh_check_run_find(json_t *repo, int64_t id)
{
        size_t i;
        json_t *run;
        json_array_foreach (json_object_get(repo, "check_runs"), i, run) {
                if (json_integer_value(json_object_get(run, "id")) == id)
                        return run;
        }
        return NULL;
}

/*
 * Applies the writable check run fields of args (name, status, conclusion, started_at,
 * completed_at, details_url, external_id, output) to run. 1, or 0 with rp holding the 422.
 */
static int run_apply(TwinCall *c, TwinReply *rp, json_t *run)
{
        const char *s;
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        const char *strs[] = {"name", "details_url", "external_id"};
        for (size_t k = 0; k < ELEMENTSOF(strs); k++) {
                int r = twin_arg_str(c->args, strs[k], &s);
                if (r == -EINVAL || (r == 0 && k == 0 && !s[0]))
                        return gh_invalid(rp, "CheckRun", strs[k], "invalid");
                if (r == 0 && json_object_set_new(run, strs[k], json_string(s)) < 0)
                        return -ENOMEM;
        }
        const char *times[] = {"started_at", "completed_at"};
        for (size_t k = 0; k < ELEMENTSOF(times); k++) {
                int r = twin_arg_str(c->args, times[k], &s);
                /* ISO 8601; the twin keeps GitHub's own Z form */
                if (r == -EINVAL || (r == 0 && !gh_time_valid(s)))
                        return gh_invalid(rp, "CheckRun", times[k], "invalid");
                if (r == 0 && json_object_set_new(run, times[k], json_string(s)) < 0)
                        return -ENOMEM;
        }
        const char *status = NULL, *conclusion = NULL;
        if (twin_arg_str(c->args, "status", &status) == -EINVAL ||
            (status && !one_of(status, run_statuses, ELEMENTSOF(run_statuses))))
                return gh_invalid(rp, "CheckRun", "status", "invalid");
        if (twin_arg_str(c->args, "conclusion", &conclusion) == -EINVAL ||
            (conclusion && !one_of(conclusion, run_conclusions, ELEMENTSOF(run_conclusions))))
                return gh_invalid(rp, "CheckRun", "conclusion", "invalid");
        /* a conclusion completes the run; completed needs a conclusion (docs: "Required if
         * you provide completed_at or a status of completed") */
        if (conclusion)
                status = "completed";
        if (status && streq(status, "completed") && !conclusion &&
            json_is_null(json_object_get(run, "conclusion")))
                return gh_invalid(rp, "CheckRun", "conclusion", "missing_field");
        if (status && json_object_set_new(run, "status", json_string(status)) < 0)
                return -ENOMEM;
        if (conclusion && json_object_set_new(run, "conclusion", json_string(conclusion)) < 0)
                return -ENOMEM;
        if (streq_ptr(json_get_str(run, "status"), "completed") &&
            json_is_null(json_object_get(run, "completed_at")) &&
            json_object_set_new(run, "completed_at", json_string(now)) < 0)
                return -ENOMEM;
        json_t *out = json_object_get(c->args, "output");
        if (out) {
                if (!json_is_object(out))
                        return gh_invalid(rp, "CheckRun", "output", "invalid");
                json_t *o = json_object_get(run, "output");
                const char *fields[] = {"title", "summary", "text"};
                for (size_t k = 0; k < ELEMENTSOF(fields); k++) {
                        json_t *v = json_object_get(out, fields[k]);
                        if (v && !json_is_string(v) && !json_is_null(v))
                                return gh_invalid(rp, "CheckRun", "output", "invalid");
                        if (v && json_object_set(o, fields[k], v) < 0)
                                return -ENOMEM;
                }
                if (!json_is_string(json_object_get(o, "summary")) &&
                    json_is_string(json_object_get(o, "title")))
                        return gh_invalid(rp, "CheckRun", "output.summary", "missing_field");
        }
        return 1;
}

static json_t *new_run(TwinCall *c, const char *name, const char *head_sha)
{
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = gh_alloc_id(c->world);
        return json_pack("{s:I, s:o, s:s, s:s, s:s, s:n, s:s, s:n, s:{s:n, s:n, s:n}, s:n, s:n}",
                         "id", (json_int_t)id, "node_id", gh_node_id("CheckRun", id), "head_sha",
                         head_sha, "name", name, "status", "queued", "conclusion", "started_at",
                         now, "completed_at", "output", "title", "summary", "text", "details_url",
                         "external_id");
}

int gh_act_create_check_run(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo_write(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *name, *sha;
        if ((r = twin_arg_str(c->args, "name", &name)) < 0 || !name[0])
                return gh_invalid(rp, "CheckRun", "name",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if ((r = arg_ref_sha(c, rp, repo, "head_sha", &sha)) <= 0)
                return r;
        _cleanup_json_ json_t *mark = json_incref(json_object_get(c->world, "next_id"));
        _cleanup_json_ json_t *run = new_run(c, name, sha);
        if (!run)
                return -ENOMEM;
        if ((r = run_apply(c, rp, run)) <= 0) {
                json_object_set(c->world, "next_id", mark); /* refused: no id taken */
                return r;
        }
        json_t *list = gh_repo_list(repo, "check_runs");
        if (!list || json_array_append(list, run) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, run)) < 0)
                return r;
        return twin_reply_body(rp, 201, render_run(c, repo, run));
}

static int arg_run(TwinCall *c, TwinReply *rp, bool write, json_t **ret_repo, json_t **ret_run)
{
        json_t *repo;
        int64_t id;
        int r = write ? gh_arg_repo_write(c, rp, &repo) : gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        r = twin_arg_int(c->args, "check_run_id", 1, INT64_MAX, &id);
        json_t *run = r < 0 ? NULL : gh_check_run_find(repo, id);
        if (!run)
                return gh_not_found(rp);
        *ret_repo = repo;
        *ret_run = run;
        return 1;
}

int gh_act_get_check_run(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *run;
        int r = arg_run(c, rp, false, &repo, &run);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, render_run(c, repo, run));
}

int gh_act_update_check_run(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *run;
        int r = arg_run(c, rp, true, &repo, &run);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(run);
        if (!next)
                return -ENOMEM;
        if ((r = run_apply(c, rp, next)) <= 0)
                return r;
        if (!json_equal(next, run)) {
                _cleanup_json_ json_t *before = json_deep_copy(run);
                if (!before || json_object_update(run, next) < 0)
                        return -ENOMEM;
                if ((r = twin_reply_mutation(rp, before, run)) < 0)
                        return r;
        }
        return twin_reply_body(rp, 200, render_run(c, repo, run));
}

int gh_reply_check_runs(TwinCall *c, TwinReply *rp, json_t *repo, const char *sha)
{
        const char *name = NULL, *status = NULL, *filter = "latest";
        if (twin_arg_str(c->args, "check_name", &name) == -EINVAL)
                return gh_invalid(rp, "CheckRun", "check_name", "invalid");
        if (twin_arg_str(c->args, "status", &status) == -EINVAL ||
            (status && !one_of(status, run_statuses, ELEMENTSOF(run_statuses))))
                return gh_invalid(rp, "CheckRun", "status", "invalid");
        if (twin_arg_str(c->args, "filter", &filter) == -EINVAL ||
            (!streq(filter, "latest") && !streq(filter, "all")))
                return gh_invalid(rp, "CheckRun", "filter", "invalid");
        _cleanup_json_ json_t *all = json_array(), *seen = json_object(), *page = NULL,
                              *out = json_array();
        if (!all || !seen || !out)
                return -ENOMEM;
        json_t *runs = json_object_get(repo, "check_runs");
        /* newest first; "latest" keeps the most recent run of each name */
        for (size_t i = json_array_size(runs); sha && i-- > 0;) {
                json_t *run = json_array_get(runs, i);
                const char *n = strempty(json_get_str(run, "name"));
                if (!streq_ptr(json_get_str(run, "head_sha"), sha) || (name && !streq(n, name)) ||
                    (status && !streq_ptr(json_get_str(run, "status"), status)))
                        continue;
                if (streq(filter, "latest") && json_object_get(seen, n))
                        continue;
                if (json_object_set_new(seen, n, json_true()) < 0 ||
                    json_array_append(all, run) < 0)
                        return -ENOMEM;
        }
        int r = gh_paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        size_t i;
        json_t *run;
        json_array_foreach (page, i, run) {
                if (json_array_append_new(out, render_run(c, repo, run)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200,
                               json_pack("{s:I, s:o}", "total_count",
                                         (json_int_t)json_array_size(all), "check_runs",
                                         TAKE_PTR(out)));
}

int gh_act_list_check_runs_for_ref(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        const char *sha;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        if ((r = arg_ref_sha(c, rp, repo, "ref", &sha)) <= 0)
                return r;
        return gh_reply_check_runs(c, rp, repo, sha);
}

/* ------------------------------------------------------------------ seed */

int gh_seed_statuses(TwinSeed *s, json_t *repo, const json_t *v, const char *sha,
                     const char *creator, const char *path)
{
        static const char *const keys[] = {"context", "state",      "description", "target_url",
                                           "creator", "created_at", "updated_at",  "sha"};
        json_t *a;
        int r = twin_seed_array(s, v, "statuses", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_t *e;
        json_array_foreach (a, i, e) {
                char p[300];
                snprintf(p, sizeof(p), "%s.statuses[%zu]", path, i);
                if (!json_is_object(e))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                const char *ctx, *state, *desc, *target, *who = creator, *c_at, *u_at, *at;
                if ((r = twin_seed_known(s, e, p, "status", keys, ELEMENTSOF(keys))) < 0 ||
                    (r = twin_seed_str(s, e, "context", p, "default", TWIN_NULL_REFUSED, &ctx)) <
                            0 ||
                    (r = twin_seed_str(s, e, "state", p, NULL, TWIN_NULL_REFUSED, &state)) < 0 ||
                    (r = twin_seed_str(s, e, "description", p, NULL, TWIN_NULL_KEPT, &desc)) < 0 ||
                    (r = twin_seed_str(s, e, "target_url", p, NULL, TWIN_NULL_KEPT, &target)) < 0 ||
                    (r = twin_seed_str(s, e, "creator", p, creator, TWIN_NULL_REFUSED, &who)) < 0 ||
                    (r = twin_seed_str(s, e, "sha", p, sha, TWIN_NULL_REFUSED, &at)) < 0 ||
                    (r = twin_seed_str(s, e, "created_at", p, GH_SEED_TIME, TWIN_NULL_REFUSED,
                                       &c_at)) < 0 ||
                    (r = twin_seed_str(s, e, "updated_at", p, c_at, TWIN_NULL_REFUSED, &u_at)) < 0)
                        return r;
                if (!one_of(state, status_states, ELEMENTSOF(status_states)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.state: must be error, failure, pending or "
                                               "success",
                                               p);
                if (!gh_time_valid(c_at) || !gh_time_valid(u_at))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: times must look like \"2026-01-01T00:00:00Z\"",
                                               p);
                if (!at || !gh_ref_sha(repo, at))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.sha: no commit of the repository", p);
                if (!gh_login_valid(who) || !gh_user_ensure(s->world, who, "User"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.creator: must be a GitHub login", p);
                int64_t id = gh_alloc_id(s->world);
                json_t *row =
                        json_pack("{s:I, s:o, s:s, s:s, s:s, s:s?, s:s?, s:s, s:s, s:s}", "id",
                                  (json_int_t)id, "node_id", gh_node_id("StatusContext", id), "sha",
                                  gh_ref_sha(repo, at), "context", ctx, "state", state,
                                  "description", desc, "target_url", target, "creator", who,
                                  "created_at", c_at, "updated_at", u_at);
                json_t *list = gh_repo_list(repo, "statuses");
                if (!list || json_array_append_new(list, row) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int gh_seed_check_runs(TwinSeed *s, json_t *repo, const json_t *v, const char *sha,
                       const char *path)
{
        static const char *const keys[] = {"name",        "status",       "conclusion",
                                           "started_at",  "completed_at", "output",
                                           "details_url", "external_id",  "head_sha"};
        static const char *const out_keys[] = {"title", "summary", "text"};
        json_t *a;
        int r = twin_seed_array(s, v, "check_runs", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_t *e;
        json_array_foreach (a, i, e) {
                char p[300], po[320];
                snprintf(p, sizeof(p), "%s.check_runs[%zu]", path, i);
                snprintf(po, sizeof(po), "%s.output", p);
                if (!json_is_object(e))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                const char *name, *status, *concl, *st_at, *co_at, *details, *ext, *at;
                json_t *out = json_object_get(e, "output");
                if ((r = twin_seed_known(s, e, p, "check run", keys, ELEMENTSOF(keys))) < 0 ||
                    (out && !json_is_object(out) &&
                     (r = twin_seed_error(s->err, s->errlen, "%s: must be an object", po)) < 0) ||
                    (out && (r = twin_seed_known(s, out, po, "check run output", out_keys,
                                                 ELEMENTSOF(out_keys))) < 0) ||
                    (r = twin_seed_str(s, e, "name", p, NULL, TWIN_NULL_REFUSED, &name)) < 0 ||
                    (r = twin_seed_str(s, e, "conclusion", p, NULL, TWIN_NULL_KEPT, &concl)) < 0 ||
                    (r = twin_seed_str(s, e, "status", p, concl ? "completed" : "queued",
                                       TWIN_NULL_REFUSED, &status)) < 0 ||
                    (r = twin_seed_str(s, e, "started_at", p, GH_SEED_TIME, TWIN_NULL_KEPT,
                                       &st_at)) < 0 ||
                    (r = twin_seed_str(s, e, "completed_at", p, NULL, TWIN_NULL_KEPT, &co_at)) <
                            0 ||
                    (r = twin_seed_str(s, e, "details_url", p, NULL, TWIN_NULL_KEPT, &details)) <
                            0 ||
                    (r = twin_seed_str(s, e, "external_id", p, NULL, TWIN_NULL_KEPT, &ext)) < 0 ||
                    (r = twin_seed_str(s, e, "head_sha", p, sha, TWIN_NULL_REFUSED, &at)) < 0)
                        return r;
                if (!name || !name[0])
                        return twin_seed_error(s->err, s->errlen, "%s: needs a name", p);
                if (!one_of(status, run_statuses, ELEMENTSOF(run_statuses)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.status: must be queued, in_progress or "
                                               "completed",
                                               p);
                if (concl && !one_of(concl, run_conclusions, ELEMENTSOF(run_conclusions)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.conclusion: must be success, failure, neutral, "
                                               "cancelled, skipped, timed_out, action_required or "
                                               "stale",
                                               p);
                if (streq(status, "completed") != (concl != NULL))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: a completed run needs a conclusion (and only "
                                               "a completed one has one)",
                                               p);
                if ((st_at && !gh_time_valid(st_at)) || (co_at && !gh_time_valid(co_at)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: times must look like \"2026-01-01T00:00:00Z\"",
                                               p);
                if (!at || !gh_ref_sha(repo, at))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.head_sha: no commit of the repository", p);
                for (size_t k = 0; k < ELEMENTSOF(out_keys); k++) {
                        json_t *ov = json_object_get(out, out_keys[k]);
                        if (ov && !json_is_string(ov) && !json_is_null(ov))
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.%s: must be a string or null", po,
                                                       out_keys[k]);
                }
                int64_t id = gh_alloc_id(s->world);
                json_t *row = json_pack(
                        "{s:I, s:o, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:{s:O?, s:O?, s:O?}, s:s?, "
                        "s:s?}",
                        "id", (json_int_t)id, "node_id", gh_node_id("CheckRun", id), "head_sha",
                        gh_ref_sha(repo, at), "name", name, "status", status, "conclusion", concl,
                        "started_at", st_at, "completed_at", co_at ? co_at : (concl ? st_at : NULL),
                        "output", "title", json_object_get(out, "title"), "summary",
                        json_object_get(out, "summary"), "text", json_object_get(out, "text"),
                        "details_url", details, "external_id", ext);
                json_t *list = gh_repo_list(repo, "check_runs");
                if (!list || json_array_append_new(list, row) < 0)
                        return -ENOMEM;
        }
        return 0;
}
