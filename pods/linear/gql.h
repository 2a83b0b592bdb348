/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin's GraphQL schema (schema.c) and the resolvers it names (graphql.c). Private to
 * pods/linear. Every resolver has the GqlResolveFn contract (pods/twin/graphql.h).
 */
#pragma once

#include "pods/twin/graphql.h"

extern const GqlSchema ln_schema;

int lq_d_false(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_d_list(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_d_object(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_d_string(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_d_zero(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_attachment_create(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_attachment_link_url(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_issue_relation_create(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_issue_attachments(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_issue_relations(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_issue_inverse_relations(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_related_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_comment_create(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_comment_delete(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_comment_update(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_issue_add_label(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_issue_archive(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_issue_create(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_issue_delete(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_issue_remove_label(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_issue_update(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_label_create(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_label_update(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_m_project_create(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_comment(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_comments(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_cycle(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_cycles(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_label(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_organization(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_project(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_projects(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_state(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_states(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_team(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_teams(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_user(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_users(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_q_viewer(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_assignee_of(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_comment_children(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_comment_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_comment_parent(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_comment_user(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_creator_of(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_cycle_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_cycle_of(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_issue_children(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_issue_comments(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_issue_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_label_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_org_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_org_teams(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_org_users(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_organization(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_parent_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_project_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_project_of(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_project_status(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_project_teams(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_shared_access(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_state_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_state_of(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_team_cycles(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_team_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_team_members(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_team_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_team_of(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_team_projects(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_team_states(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_user_assigned(GqlExec *x, json_t *source, json_t *args, json_t **ret);
int lq_r_user_created(GqlExec *x, json_t *source, json_t *args, json_t **ret);
