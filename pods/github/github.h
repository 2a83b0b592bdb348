/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's private header: the world helpers, renderers and argument readers the
 * resource-family files (issues.c, …) share with github.c, and the action handlers the
 * kind's handler table (github.c) binds to pods/github/surface.json. Each function's
 * comment is at its definition. Not for anything outside pods/github.
 */
#pragma once

#include "pods/twin/kind.h"
#include "pods/twin/sha1.h"

#define GH_DOCS_URL     "https://docs.github.com/rest"
#define GH_HTML_BASE    "https://github.com"
#define GH_SEED_TIME    "2026-01-01T00:00:00Z" /* created_at of seeded rows without one */
#define GH_DEFAULT_USER "pome-agent"           /* the viewer when a seed names none */

/* the documentation_url of a merge a protection rule refuses, as github.com answers it */
#define GH_PROTECTION_DOCS_URL "https://docs.github.com/articles/about-protected-branches"

/* ----- world (github.c) */
json_t *gh_world_users(json_t *w);
json_t *gh_user_find(json_t *w, const char *login);
int64_t gh_alloc_id(json_t *w);
json_t *gh_node_id(const char *type, int64_t id);
json_t *gh_user_ensure(json_t *w, const char *login, const char *type);
bool gh_login_valid(const char *s);
bool gh_repo_name_valid(const char *s);
json_t *gh_repo_find(json_t *w, const char *owner, const char *name);
bool gh_strv_has(const json_t *a, const char *s);
bool gh_repo_member(json_t *repo, const char *login);
json_t *gh_label_find(json_t *repo, const char *name);
json_t *gh_label_ensure(json_t *w, json_t *repo, const char *name, const char *color,
                        const char *description, int is_default);
int64_t gh_max_number(json_t *repo);
json_t *gh_number_find(json_t *repo, const char *list, int64_t number, size_t *ret_idx);
bool gh_is_pull(const json_t *row);
bool gh_time_valid(const char *s);

/*
 * The custom media type the REST caller asked for in Accept ("diff", "patch", "raw",
 * "object"; application/vnd.github[.v3].<format>[+json], docs.github.com "Media types"),
 * or NULL for plain JSON (and always over MCP). Borrowed, static.
 */
const char *gh_accept_format(TwinCall *c);

/*
 * Replies 200 with text (taken; NULL is -ENOMEM) as a non-JSON body: the body is a JSON
 * string and the Content-Type header names media_type, which the front sends as raw bytes
 * (pods/front/serve.c front_reply) and MCP as the tool's text content. 0 or -ENOMEM.
 */
int gh_reply_text(TwinReply *rp, const char *media_type, char *text);

/* ----- replies and rendering (github.c) */
/* The REST error envelope {message, documentation_url, status} (also the kind's .error). */
void gh_error(int status, const char *code, const char *message, TwinReply *rp);
int gh_not_found(TwinReply *rp);
/* 422 Validation Failed naming value too: {value, resource, field, code}. 0 or -ENOMEM. */
int gh_invalid_value(TwinReply *rp, const char *resource, const char *field, const char *code,
                     const char *value);
int gh_invalid(TwinReply *rp, const char *resource, const char *field, const char *code);
json_t *gh_render_user(TwinCall *c, const char *login);
json_t *gh_render_label(TwinCall *c, json_t *repo, const char *name);
json_t *gh_render_labels(TwinCall *c, json_t *repo, json_t *names);
const char *gh_association(json_t *repo, const char *login);
void gh_milestone_counts(json_t *repo, json_int_t number, json_int_t *ret_open,
                         json_int_t *ret_closed);
json_t *gh_render_milestone(TwinCall *c, json_t *repo, json_t *number);
json_t *gh_render_issue(TwinCall *c, json_t *repo, json_t *issue);
/* gh_render_issue plus what only a single issue carries (closed_by). New reference or NULL. */
json_t *gh_render_issue_full(TwinCall *c, json_t *repo, json_t *issue);
json_t *gh_render_comment(TwinCall *c, json_t *repo, json_t *issue, json_t *comment);
json_int_t gh_open_count(json_t *repo);
json_t *gh_render_repo(TwinCall *c, json_t *repo);

/* ----- arguments and pages (github.c) */
int gh_arg_repo(TwinCall *c, TwinReply *rp, json_t **ret);
int gh_arg_repo_issue(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_issue,
                      size_t *ret_idx);
int gh_arg_label_names(TwinCall *c, const char *key, json_t **ret);
json_t *gh_assignable(TwinCall *c, json_t *repo, const char *login);
/*
 * args[key], a list of logins, as the canonical logins of those assignable in repo (*ret,
 * new): 0 absent or null, 1 read, 2 not a list of strings, -ENOMEM. With strict (creating
 * or editing an issue, as github.com) a login that cannot be assigned is 3 with it in
 * *ret_invalid (borrowed from args); without, it is dropped (the add-assignees route).
 */
int gh_arg_assignees(TwinCall *c, json_t *repo, const char *key, bool strict, json_t **ret,
                     const char **ret_invalid);
json_t *gh_labels_ensure(TwinCall *c, json_t *repo, json_t *names);
char *gh_query_without_page(const char *query);
int gh_paginate(TwinCall *c, TwinReply *rp, json_t *items, json_t **ret);
int gh_issue_commit(TwinCall *c, TwinReply *rp, json_t *repo, size_t idx, json_t *next);

/* ----- actions (issues.c): issues (pull requests included), comments, assignees */
int gh_act_get_me(TwinCall *c, TwinReply *rp);
int gh_act_get_user(TwinCall *c, TwinReply *rp);
int gh_act_get_org(TwinCall *c, TwinReply *rp);
int gh_act_get_rate_limit(TwinCall *c, TwinReply *rp);
/* graphql.c: POST /graphql */
int gh_act_graphql(TwinCall *c, TwinReply *rp);
int gh_act_get_repository(TwinCall *c, TwinReply *rp);
int gh_act_list_issues(TwinCall *c, TwinReply *rp);
int gh_act_issue_read(TwinCall *c, TwinReply *rp);
int gh_act_issue_write(TwinCall *c, TwinReply *rp);
int gh_act_create_issue(TwinCall *c, TwinReply *rp);
int gh_act_add_issue_assignees(TwinCall *c, TwinReply *rp);
int gh_act_remove_issue_assignees(TwinCall *c, TwinReply *rp);
int gh_act_list_assignees(TwinCall *c, TwinReply *rp);
int gh_act_check_user_can_be_assigned(TwinCall *c, TwinReply *rp);
int gh_act_add_issue_comment(TwinCall *c, TwinReply *rp);
int gh_act_list_issue_comments_for_repo(TwinCall *c, TwinReply *rp);
int gh_act_get_issue_comment(TwinCall *c, TwinReply *rp);
int gh_act_update_issue_comment(TwinCall *c, TwinReply *rp);
int gh_act_delete_issue_comment(TwinCall *c, TwinReply *rp);
json_t *gh_mcp_issue(const json_t *issue);
int gh_time_arg(TwinCall *c, const char *key, char out[32]);
bool gh_mentions(json_t *row, const char *login);

/* ----- actions (labels.c): labels and milestones */
int gh_act_list_labels(TwinCall *c, TwinReply *rp);
int gh_act_create_label(TwinCall *c, TwinReply *rp);
int gh_act_get_label(TwinCall *c, TwinReply *rp);
int gh_act_update_label(TwinCall *c, TwinReply *rp);
int gh_act_delete_label(TwinCall *c, TwinReply *rp);
int gh_act_add_issue_labels(TwinCall *c, TwinReply *rp);
int gh_act_remove_issue_label(TwinCall *c, TwinReply *rp);
int gh_act_set_issue_labels(TwinCall *c, TwinReply *rp);
int gh_act_remove_all_issue_labels(TwinCall *c, TwinReply *rp);
int gh_reply_issue_labels(TwinCall *c, TwinReply *rp, json_t *repo, json_t *issue);
int gh_act_list_milestones(TwinCall *c, TwinReply *rp);
int gh_act_create_milestone(TwinCall *c, TwinReply *rp);
int gh_act_get_milestone(TwinCall *c, TwinReply *rp);
int gh_act_update_milestone(TwinCall *c, TwinReply *rp);
int gh_act_delete_milestone(TwinCall *c, TwinReply *rp);

/* ----- git data model (git.c): branches, commits, trees, tags; the layout is in git.c */
void gh_blob_sha(const char *content, size_t len, char out[TWIN_SHA1_HEX]);
int gh_tree_sha(const json_t *tree, char out[TWIN_SHA1_HEX]);
int gh_tree_shas(const json_t *tree, json_t *dirs, char out[TWIN_SHA1_HEX]);
json_t *gh_branch_find(json_t *repo, const char *name);
json_t *gh_tag_find(json_t *repo, const char *name);
json_t *gh_commit_find(json_t *repo, const char *sha);
const char *gh_ref_sha(json_t *repo, const char *ref);
json_t *gh_tree_at(json_t *repo, const char *ref);
json_t *gh_commit_add(json_t *w, json_t *repo, const char *parent1, const char *parent2,
                      const json_t *tree, const char *message, const char *login, int64_t when);
json_t *gh_commit_add_as(json_t *w, json_t *repo, const char *parent1, const char *parent2,
                         const json_t *tree, const char *message, const char *login,
                         const json_t *author_as, const json_t *committer_as, int64_t when);
json_t *gh_commit_new(TwinCall *c, json_t *repo, const char *parent1, const char *parent2,
                      const json_t *tree, const char *message, const char *login);
json_t *gh_tag_add(json_t *w, json_t *repo, const char *name, const char *sha, const char *message,
                   const char *login, int64_t when);
int gh_branch_move(TwinReply *rp, json_t *branch, const char *sha);
json_t *gh_commits_between(json_t *repo, const char *base, const char *head, bool newest_first);
const char *gh_merge_base(json_t *repo, const char *a, const char *b);
json_t *gh_diff_files(TwinCall *c, json_t *repo, const json_t *a, const json_t *b, const char *at,
                      char **ret_diff);
bool gh_path_valid(const char *p);
bool gh_branch_name_valid(const char *n);
json_t *gh_tree_dirs(const json_t *tree);
bool gh_path_conflicts(const json_t *tree, const json_t *dirs, const char *path);
const char *gh_tree_conflict(const json_t *tree);
json_t *gh_render_commit(TwinCall *c, json_t *repo, json_t *commit, bool detail);
json_t *gh_render_ref(TwinCall *c, json_t *repo, const char *full_ref, const char *sha);
int gh_seed_git(TwinSeed *s, const json_t *r0, json_t *repo, const char *path);

/* ----- shared by the git family (repos.c, contents.c) */
int gh_arg_str2(TwinCall *c, const char *a, const char *b, const char **ret);
int gh_arg_repo_write(TwinCall *c, TwinReply *rp, json_t **ret);
int gh_arg_identities(TwinCall *c, TwinReply *rp);
int gh_fail(TwinReply *rp, int status, const char *message);
json_t *gh_pick_fields(TwinCall *c, json_t *item);
bool gh_branch_blocks(TwinCall *c, json_t *repo, json_t *branch);
json_t *gh_render_repo_full(TwinCall *c, json_t *repo);
char *gh_content_base64(const char *s);
json_t *gh_render_git_commit(TwinCall *c, json_t *repo, json_t *commit);

/* ----- actions (repos.c): repositories, branches, refs, protection, collaborators, tags,
 * releases */
int gh_act_create_repository(TwinCall *c, TwinReply *rp);
int gh_act_fork_repository(TwinCall *c, TwinReply *rp);
int gh_act_update_repository(TwinCall *c, TwinReply *rp);
int gh_act_delete_repository(TwinCall *c, TwinReply *rp);
int gh_act_list_repositories_for_authenticated_user(TwinCall *c, TwinReply *rp);
int gh_act_list_repositories_for_user(TwinCall *c, TwinReply *rp);
int gh_act_list_org_repositories(TwinCall *c, TwinReply *rp);
int gh_act_list_branches(TwinCall *c, TwinReply *rp);
int gh_act_get_branch(TwinCall *c, TwinReply *rp);
int gh_act_get_branch_protection(TwinCall *c, TwinReply *rp);
int gh_act_update_branch_protection(TwinCall *c, TwinReply *rp);
int gh_act_create_branch(TwinCall *c, TwinReply *rp);
int gh_act_get_git_ref(TwinCall *c, TwinReply *rp);
int gh_act_list_git_refs(TwinCall *c, TwinReply *rp);
int gh_act_delete_branch(TwinCall *c, TwinReply *rp);
int gh_act_list_repository_collaborators(TwinCall *c, TwinReply *rp);
int gh_act_check_collaborator(TwinCall *c, TwinReply *rp);
int gh_act_add_repository_collaborator(TwinCall *c, TwinReply *rp);
int gh_act_list_tags(TwinCall *c, TwinReply *rp);
int gh_act_get_tag(TwinCall *c, TwinReply *rp);
int gh_act_list_releases(TwinCall *c, TwinReply *rp);
int gh_act_get_latest_release(TwinCall *c, TwinReply *rp);
int gh_act_get_release_by_tag(TwinCall *c, TwinReply *rp);
int gh_act_create_release(TwinCall *c, TwinReply *rp);

/* ----- actions (contents.c): contents and commits */
int gh_act_get_file_contents(TwinCall *c, TwinReply *rp);
int gh_act_get_readme(TwinCall *c, TwinReply *rp);
int gh_act_create_or_update_file(TwinCall *c, TwinReply *rp);
int gh_act_delete_file(TwinCall *c, TwinReply *rp);
int gh_act_push_files(TwinCall *c, TwinReply *rp);
int gh_act_list_commits(TwinCall *c, TwinReply *rp);
int gh_act_get_commit(TwinCall *c, TwinReply *rp);
int gh_act_compare_commits(TwinCall *c, TwinReply *rp);

/* ----- actions (gitdata.c): the Git Database API */
int gh_act_get_git_blob(TwinCall *c, TwinReply *rp);
int gh_act_create_git_blob(TwinCall *c, TwinReply *rp);
int gh_act_get_git_tree(TwinCall *c, TwinReply *rp);
int gh_act_create_git_tree(TwinCall *c, TwinReply *rp);
int gh_act_get_git_commit(TwinCall *c, TwinReply *rp);
int gh_act_create_git_commit(TwinCall *c, TwinReply *rp);
int gh_act_update_git_ref(TwinCall *c, TwinReply *rp);

/* ----- actions (search.c) */
int gh_act_search_code(TwinCall *c, TwinReply *rp);
int gh_act_search_commits(TwinCall *c, TwinReply *rp);
int gh_act_search_repositories(TwinCall *c, TwinReply *rp);
int gh_act_search_users(TwinCall *c, TwinReply *rp);
int gh_act_search_issues(TwinCall *c, TwinReply *rp);

/* ----- pull requests (pulls.c, linediff.c, reviews.c, checks.c) */
#define GH_PR_TITLE_MAX 256   /* characters of a pull request title (as an issue's) */
#define GH_PR_BODY_MAX  65536 /* characters of a pull request, review or comment body */
int gh_pulls_too_long(TwinReply *rp, const char *resource, const char *field, const char *s,
                      size_t max);
/*
 * A line diff of old and new (NULL = no file) as unified diff hunks with three lines of
 * context (git's format, as a pull request file's patch): 0 with *ret_patch (new, "" when
 * equal) and the counts of added and deleted lines, -ENOMEM.
 */
int gh_line_diff(const char *old, const char *new, char **ret_patch, size_t *ret_additions,
                 size_t *ret_deletions);
bool gh_pr_is_ancestor(json_t *repo, const char *ancestor, const char *sha);
const char *gh_pr_merge_base(json_t *repo, const char *a, const char *b);
json_t *gh_pr_commits_between(json_t *repo, const char *base, const char *head);
int gh_tree_merge(json_t *base, json_t *ours, json_t *theirs, json_t **ret);
int gh_pr_commit_new(TwinCall *c, json_t *repo, const char *parent1, const char *parent2,
                     json_t *tree, const char *message, const char *login, char **ret_sha);
int gh_pr_rebase(TwinCall *c, json_t *repo, const char *base, const char *head, char **ret_sha);
json_t *gh_render_pr_commit(TwinCall *c, json_t *repo, json_t *cm);
const char *gh_pr_head_sha(json_t *repo, json_t *pr);
bool gh_pr_blocked(TwinCall *c, json_t *repo, json_t *pr, char *msg, size_t len);
const char *gh_pr_base_sha(json_t *repo, json_t *pr);
int gh_pr_pin_tips(json_t *repo, json_t *pr);
json_t *gh_pr_files(TwinCall *c, json_t *repo, json_t *pr);
char *gh_pr_diff_text(json_t *repo, json_t *pr);
char *gh_pr_patch_text(json_t *repo, json_t *pr);
/* git's diff from tree old to tree new ({path: content}, NULL for none). New string or NULL. */
char *gh_tree_diff_text(json_t *old, json_t *new);
/* git format-patch of commits (world rows, oldest first), as github.com's .patch media type of
 * a pull request, a comparison or a commit. New string or NULL. */
char *gh_commits_patch_text(json_t *repo, json_t *commits);
json_t *gh_render_pull(TwinCall *c, json_t *repo, json_t *pr, bool full);
int gh_arg_pull_number(TwinCall *c, int64_t *ret);
int gh_arg_repo_pull(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_pr);
int gh_invalid_custom(TwinReply *rp, const char *resource, const char *message);
int gh_pr_touch(TwinCall *c, TwinReply *rp, const json_t *before, json_t *pr);
int gh_seed_pull(TwinSeed *s, json_t *repo, const json_t *v, json_t *row, const char *path);
int gh_act_list_pull_requests(TwinCall *c, TwinReply *rp);
int gh_act_pull_request_read(TwinCall *c, TwinReply *rp);
int gh_act_get_pull_request_commits(TwinCall *c, TwinReply *rp);
int gh_act_create_pull_request(TwinCall *c, TwinReply *rp);
int gh_act_update_pull_request(TwinCall *c, TwinReply *rp);
int gh_act_merge_pull_request(TwinCall *c, TwinReply *rp);
int gh_act_update_pull_request_branch(TwinCall *c, TwinReply *rp);
int gh_act_check_pull_request_merged(TwinCall *c, TwinReply *rp);
int gh_act_list_pull_requests_associated_with_commit(TwinCall *c, TwinReply *rp);
/* reviews.c */
json_t *gh_review_find(json_t *pr, int64_t id);
json_t *gh_render_review(TwinCall *c, json_t *repo, json_t *pr, json_t *rv);
json_t *gh_render_review_comment(TwinCall *c, json_t *repo, json_t *pr, json_t *cm);
int gh_reply_reviews(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr);
int gh_reply_review_comments(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr);
int gh_check_reviewers(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr, json_t *logins);
int gh_seed_reviews(TwinSeed *s, json_t *repo, const json_t *v, json_t *pr, const char *path);
int gh_act_create_pull_request_review(TwinCall *c, TwinReply *rp);
int gh_act_get_pull_request_review(TwinCall *c, TwinReply *rp);
int gh_act_pull_request_review_write(TwinCall *c, TwinReply *rp);
int gh_act_create_pull_request_review_comment(TwinCall *c, TwinReply *rp);
int gh_act_add_reply_to_pull_request_comment(TwinCall *c, TwinReply *rp);
int gh_act_request_reviewers(TwinCall *c, TwinReply *rp);
int gh_act_remove_requested_reviewers(TwinCall *c, TwinReply *rp);
int gh_act_list_requested_reviewers(TwinCall *c, TwinReply *rp);
int gh_act_update_pull_request_review(TwinCall *c, TwinReply *rp);
int gh_act_dismiss_pull_request_review(TwinCall *c, TwinReply *rp);
int gh_act_get_pull_request_review_comment(TwinCall *c, TwinReply *rp);
int gh_act_update_pull_request_review_comment(TwinCall *c, TwinReply *rp);
int gh_act_delete_pull_request_review_comment(TwinCall *c, TwinReply *rp);
int gh_act_list_review_comments_for_repo(TwinCall *c, TwinReply *rp);
/* pullsmcp.c: the official MCP server's trimmed outputs, from rendered REST bodies */
json_t *gh_mcp_pull(const json_t *pr);
json_t *gh_mcp_pulls(const json_t *prs);
json_t *gh_mcp_combined_status(const json_t *cs);
json_t *gh_mcp_reviews(const json_t *reviews);
json_t *gh_mcp_files(const json_t *files);
json_t *gh_mcp_issue_comments(const json_t *comments);
json_t *gh_mcp_check_runs(const json_t *result);
json_t *gh_mcp_review_threads(const json_t *comments, const char *head_sha);
json_t *gh_mcp_minimal_response(const json_t *id, const char *url);
int gh_mcp_reply(TwinReply *rp, json_t *body);
int gh_mcp_reply_text(TwinReply *rp, const char *text);
/* checks.c */
json_t *gh_repo_list(json_t *repo, const char *key);
const char *gh_combined_state(json_t *repo, const char *sha);
/* How many contexts have a status on sha (the latest per context); 0 for an unknown sha. */
size_t gh_status_count(json_t *repo, const char *sha);
int gh_reply_combined_status(TwinCall *c, TwinReply *rp, json_t *repo, const char *sha);
int gh_reply_check_runs(TwinCall *c, TwinReply *rp, json_t *repo, const char *sha);
json_t *gh_check_run_find(json_t *repo, int64_t id);
int gh_seed_statuses(TwinSeed *s, json_t *repo, const json_t *v, const char *sha,
                     const char *creator, const char *path);
int gh_seed_check_runs(TwinSeed *s, json_t *repo, const json_t *v, const char *sha,
                       const char *path);
int gh_act_create_commit_status(TwinCall *c, TwinReply *rp);
int gh_act_list_commit_statuses(TwinCall *c, TwinReply *rp);
int gh_act_get_combined_status_for_ref(TwinCall *c, TwinReply *rp);
int gh_act_create_check_run(TwinCall *c, TwinReply *rp);
int gh_act_get_check_run(TwinCall *c, TwinReply *rp);
int gh_act_update_check_run(TwinCall *c, TwinReply *rp);
int gh_act_list_check_runs_for_ref(TwinCall *c, TwinReply *rp);
