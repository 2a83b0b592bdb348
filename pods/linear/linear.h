/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin's private header: the world helpers (linear.c), the seed loader (seed.c),
 * the actions MCP and GraphQL share (actions.c) and the GraphQL endpoint (graphql.c). Each
 * function's comment is at its definition. Not for anything outside pods/linear.
 *
 * The world (what /_pome/state shows and grading reads; pods/grade/checks-linear.c relies on
 * exactly this shape):
 *   {organization: {id, name, urlKey}, viewer: user id | null,
 *    users: [{id, name, displayName, email, admin, active, createdAt}],
 *    teams: [{id, key, name, description, private, createdAt}],
 *    states: [{id, teamId, name, type, position, color}],
 *    labels: [{id, name, color, description, teamId, createdAt}],
 *    projects: [{id, name, description, state, teamIds, createdAt}],
 *    cycles: [{id, teamId, number, name, startsAt, endsAt}],
 *    issues: [{id, identifier, number, teamId, title, description, priority, estimate, stateId,
 *              assigneeId, creatorId, labelIds, projectId, cycleId, parentId, dueDate,
 *              createdAt, updatedAt, startedAt, completedAt, canceledAt, archivedAt}],
 *    comments: [{id, issueId, userId, body, parentId, createdAt, updatedAt}],
 *    attachments: [{id, issueId, url, title, createdAt}]  (an issue's links),
 *    relations: [{id, type: related | blocks | duplicate, issueId, relatedIssueId, createdAt}]
 *               (issueId blocks / duplicates / is related to relatedIssueId),
 *    next: {id: counter of new ids, numbers: {teamId: last issue number}}}
 * Times are RFC 3339 with milliseconds ("2026-07-20T10:00:00.000Z").
 */
#pragma once

#include "pods/twin/kind.h"

#define LN_APP_URL "https://linear.app" /* the web app the urls of issues point into */

/* ----- world (linear.c) */
json_t *ln_list(json_t *w, const char *list);
json_t *ln_by_id(json_t *w, const char *list, const char *id);
json_t *ln_user_ref(json_t *w, const char *ref);
json_t *ln_team_ref(json_t *w, const char *ref);
json_t *ln_state_ref(json_t *w, const char *team_id, const char *ref);
json_t *ln_label_ref(json_t *w, const char *team_id, const char *ref);
json_t *ln_project_ref(json_t *w, const char *ref);
json_t *ln_cycle_ref(json_t *w, const char *team_id, const char *ref);
json_t *ln_issue_ref(json_t *w, const char *ref);
int ln_new_id(json_t *w, const char *prefix, char **ret);
int64_t ln_next_number(json_t *w, const char *team_id);
void ln_time(int64_t t, char buf[static 32]);
int ln_parse_time(const char *s, int64_t *ret);
int ln_page(json_t *items, int64_t first, const char *after, int64_t last, const char *before,
            json_t **ret_nodes, json_t **ret_info, char *err, size_t errlen);
json_t *ln_issue_url(json_t *w, const json_t *issue);
void ln_branch_name(const json_t *issue, char buf[static 96]);
int ln_fail(TwinReply *rp, int status, const char *code, const char *fmt, ...) _printf_(4, 5);
json_t *ln_error_body(int status, const char *code, const char *message);
int ln_set_issue_state(json_t *issue, const json_t *state, const char *now);

/* ----- seed (seed.c) */
int ln_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen);
extern const char *const ln_seed_keys[];

/* ----- actions (actions.c): one per MCP tool of Linear's MCP server, and the changes only
 * GraphQL makes (archive_issue, delete_issue, update_issue_label) */
int ln_act_list_issues(TwinCall *c, TwinReply *rp);
int ln_act_get_issue(TwinCall *c, TwinReply *rp);
int ln_act_save_issue(TwinCall *c, TwinReply *rp);
int ln_act_archive_issue(TwinCall *c, TwinReply *rp);
int ln_act_delete_issue(TwinCall *c, TwinReply *rp);
int ln_act_list_comments(TwinCall *c, TwinReply *rp);
int ln_act_save_comment(TwinCall *c, TwinReply *rp);
int ln_act_delete_comment(TwinCall *c, TwinReply *rp);
int ln_act_list_issue_statuses(TwinCall *c, TwinReply *rp);
int ln_act_get_issue_status(TwinCall *c, TwinReply *rp);
int ln_act_list_issue_labels(TwinCall *c, TwinReply *rp);
int ln_act_create_issue_label(TwinCall *c, TwinReply *rp);
int ln_act_update_issue_label(TwinCall *c, TwinReply *rp);
int ln_act_list_teams(TwinCall *c, TwinReply *rp);
int ln_act_get_team(TwinCall *c, TwinReply *rp);
int ln_act_list_users(TwinCall *c, TwinReply *rp);
int ln_act_get_user(TwinCall *c, TwinReply *rp);
int ln_act_list_projects(TwinCall *c, TwinReply *rp);
int ln_act_get_project(TwinCall *c, TwinReply *rp);
int ln_act_save_project(TwinCall *c, TwinReply *rp);
int ln_act_list_cycles(TwinCall *c, TwinReply *rp);

/* ----- GraphQL (graphql.c) */
int ln_act_graphql(TwinCall *c, TwinReply *rp);
