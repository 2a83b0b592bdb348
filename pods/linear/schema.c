/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin's GraphQL schema: the types, fields and arguments of Linear's published
 * schema (as @linear/sdk 98 declares them) that the SDK's own documents select for the
 * queries and mutations the twin serves, with Linear's names and types, so that an SDK call
 * validates as it does against api.linear.app; a field outside it is GraphQL's validation
 * error. Fields the world models are resolved from it (graphql.c); a nullable field it does not
 * model is null, and a non-null one the neutral value of its type (lq_d_*: false, 0, "", [],
 * {}), which is what a workspace without that feature shows.
 */
#include "common/util.h"
#include "pods/linear/gql.h"

#define TYPE(n, k, also, f)                  \
        {                                    \
                n, k, also, f, ELEMENTSOF(f) \
        }
#define INPUT(n, f)                                         \
        {                                                   \
                n, GQL_INPUT_OBJECT, NULL, f, ELEMENTSOF(f) \
        }
#define EMPTY_INPUT(n)                             \
        {                                          \
                n, GQL_INPUT_OBJECT, NULL, NULL, 0 \
        }
#define ENUM(n, values)                      \
        {                                    \
                n, GQL_ENUM, values, NULL, 0 \
        }
#define SCALAR(n)                            \
        {                                    \
                n, GQL_SCALAR, NULL, NULL, 0 \
        }

static const GqlField f_ActorBot[] = {
        {"avatarUrl", "String", NULL, NULL},    {"id", "ID", NULL, NULL},
        {"name", "String", NULL, NULL},         {"subType", "String", NULL, NULL},
        {"type", "String!", NULL, lq_d_string}, {"userDisplayName", "String", NULL, NULL},
};

static const GqlField f_AgentSession[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_AiPromptRules[] = {
        {"archivedAt", "DateTime", NULL, NULL}, {"createdAt", "DateTime!", NULL, lq_d_string},
        {"id", "ID!", NULL, lq_d_string},       {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"updatedBy", "User", NULL, NULL},
};

static const GqlField f_Attachment[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"bodyData", "String", NULL, NULL},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"creator", "User", NULL, lq_r_creator_of},
        {"externalUserCreator", "ExternalUser", NULL, NULL},
        {"groupBySource", "Boolean!", NULL, lq_d_false},
        {"id", "ID!", NULL, lq_d_string},
        {"issue", "Issue!", NULL, lq_r_comment_issue},
        {"metadata", "JSONObject!", NULL, lq_d_object},
        {"originalIssue", "Issue", NULL, NULL},
        {"source", "JSONObject", NULL, NULL},
        {"sourceType", "String", NULL, NULL},
        {"subtitle", "String", NULL, NULL},
        {"title", "String!", NULL, lq_d_string},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"url", "String!", NULL, lq_d_string},
};

static const GqlField f_AttachmentConnection[] = {
        {"edges", "[AttachmentEdge!]!", NULL, lq_d_list},
        {"nodes", "[Attachment!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_AttachmentEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "Attachment!", NULL, NULL},
};

static const GqlField f_AttachmentPayload[] = {
        {"attachment", "Attachment!", NULL, NULL},
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_IssueRelation[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"id", "ID!", NULL, lq_d_string},
        {"issue", "Issue!", NULL, lq_r_comment_issue},
        {"relatedIssue", "Issue!", NULL, lq_r_related_issue},
        {"type", "String!", NULL, lq_d_string},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
};

static const GqlField f_IssueRelationConnection[] = {
        {"edges", "[IssueRelationEdge!]!", NULL, lq_d_list},
        {"nodes", "[IssueRelation!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_IssueRelationEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "IssueRelation!", NULL, NULL},
};

static const GqlField f_IssueRelationPayload[] = {
        {"issueRelation", "IssueRelation!", NULL, NULL},
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_Comment[] = {
        {"agentSession", "AgentSession", NULL, NULL},
        {"archivedAt", "DateTime", NULL, NULL},
        {"body", "String!", NULL, lq_d_string},
        {"botActor", "ActorBot", NULL, NULL},
        {"children", "CommentConnection!",
         "after: String, before: String, filter: CommentFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_comment_children},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"documentContent", "DocumentContent", NULL, NULL},
        {"documentContentId", "String", NULL, NULL},
        {"editedAt", "DateTime", NULL, NULL},
        {"externalThread", "SyncedExternalThread", NULL, NULL},
        {"externalUser", "ExternalUser", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"initiative", "Initiative", NULL, NULL},
        {"initiativeId", "String", NULL, NULL},
        {"initiativeUpdate", "InitiativeUpdate", NULL, NULL},
        {"initiativeUpdateId", "String", NULL, NULL},
        {"issue", "Issue", NULL, lq_r_comment_issue},
        {"issueId", "String", NULL, NULL},
        {"parent", "Comment", NULL, lq_r_comment_parent},
        {"parentId", "String", NULL, NULL},
        {"project", "Project", NULL, NULL},
        {"projectId", "String", NULL, NULL},
        {"projectUpdate", "ProjectUpdate", NULL, NULL},
        {"projectUpdateId", "String", NULL, NULL},
        {"quotedText", "String", NULL, NULL},
        {"reactionData", "JSONObject!", NULL, lq_d_object},
        {"reactions", "[Reaction!]!", NULL, lq_d_list},
        {"resolvedAt", "DateTime", NULL, NULL},
        {"resolvingComment", "Comment", NULL, NULL},
        {"resolvingCommentId", "String", NULL, NULL},
        {"resolvingUser", "User", NULL, NULL},
        {"syncedWith", "[ExternalEntityInfo!]", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"url", "String!", NULL, lq_d_string},
        {"user", "User", NULL, lq_r_comment_user},
};

static const GqlField f_CommentConnection[] = {
        {"edges", "[CommentEdge!]!", NULL, lq_d_list},
        {"nodes", "[Comment!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_CommentEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "Comment!", NULL, NULL},
};

static const GqlField f_CommentPayload[] = {
        {"comment", "Comment!", NULL, NULL},
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_Cycle[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"autoArchivedAt", "DateTime", NULL, NULL},
        {"completedAt", "DateTime", NULL, NULL},
        {"completedIssueCountHistory", "[Float!]!", NULL, lq_d_list},
        {"completedScopeHistory", "[Float!]!", NULL, lq_d_list},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"description", "String", NULL, NULL},
        {"endsAt", "DateTime!", NULL, lq_d_string},
        {"id", "ID!", NULL, lq_d_string},
        {"inProgressScopeHistory", "[Float!]!", NULL, lq_d_list},
        {"inheritedFrom", "Cycle", NULL, NULL},
        {"isActive", "Boolean!", NULL, lq_d_false},
        {"isFuture", "Boolean!", NULL, lq_d_false},
        {"isNext", "Boolean!", NULL, lq_d_false},
        {"isPast", "Boolean!", NULL, lq_d_false},
        {"isPrevious", "Boolean!", NULL, lq_d_false},
        {"issueCountHistory", "[Float!]!", NULL, lq_d_list},
        {"issues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_cycle_issues},
        {"name", "String", NULL, NULL},
        {"number", "Float!", NULL, lq_d_zero},
        {"progress", "Float!", NULL, lq_d_zero},
        {"scopeHistory", "[Float!]!", NULL, lq_d_list},
        {"startsAt", "DateTime!", NULL, lq_d_string},
        {"team", "Team!", NULL, lq_r_team_of},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
};

static const GqlField f_CycleConnection[] = {
        {"edges", "[CycleEdge!]!", NULL, lq_d_list},
        {"nodes", "[Cycle!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_CycleEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "Cycle!", NULL, NULL},
};

static const GqlField f_DeletePayload[] = {
        {"entityId", "String!", NULL, lq_d_string},
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_Document[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_DocumentContent[] = {
        {"aiPromptRules", "AiPromptRules", NULL, NULL},
        {"archivedAt", "DateTime", NULL, NULL},
        {"content", "String", NULL, NULL},
        {"contentState", "String", NULL, NULL},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"document", "Document", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"initiative", "Initiative", NULL, NULL},
        {"issue", "Issue", NULL, NULL},
        {"project", "Project", NULL, NULL},
        {"projectMilestone", "ProjectMilestone", NULL, NULL},
        {"restoredAt", "DateTime", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"welcomeMessage", "WelcomeMessage", NULL, NULL},
};

static const GqlField f_ExternalEntityInfo[] = {
        {"id", "String!", NULL, lq_d_string},
        {"metadata", "ExternalEntityInfoMetadata", NULL, NULL},
        {"service", "ExternalSyncService!", NULL, NULL},
};

static const GqlField f_ExternalEntityInfoGithubMetadata[] = {
        {"number", "Float", NULL, NULL},
        {"owner", "String", NULL, NULL},
        {"repo", "String", NULL, NULL},
};

static const GqlField f_ExternalEntityInfoJiraMetadata[] = {
        {"issueKey", "String", NULL, NULL},
        {"issueTypeId", "String", NULL, NULL},
        {"projectId", "String", NULL, NULL},
};

static const GqlField f_ExternalEntitySlackMetadata[] = {
        {"channelId", "String", NULL, NULL},
        {"channelName", "String", NULL, NULL},
        {"isFromSlack", "Boolean!", NULL, lq_d_false},
        {"messageUrl", "String", NULL, NULL},
};

static const GqlField f_ExternalUser[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_Favorite[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_Initiative[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_InitiativeUpdate[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_Integration[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_IntegrationsSettings[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_Issue[] = {
        {"addedToCycleAt", "DateTime", NULL, NULL},
        {"addedToProjectAt", "DateTime", NULL, NULL},
        {"addedToTeamAt", "DateTime", NULL, NULL},
        {"archivedAt", "DateTime", NULL, NULL},
        {"asksExternalUserRequester", "ExternalUser", NULL, NULL},
        {"asksRequester", "User", NULL, NULL},
        {"assignee", "User", NULL, lq_r_assignee_of},
        {"attachments", "AttachmentConnection!",
         "after: String, before: String, filter: AttachmentFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_issue_attachments},
        {"autoArchivedAt", "DateTime", NULL, NULL},
        {"autoClosedAt", "DateTime", NULL, NULL},
        {"boardOrder", "Float!", NULL, lq_d_zero},
        {"botActor", "ActorBot", NULL, NULL},
        {"branchName", "String!", NULL, lq_d_string},
        {"canceledAt", "DateTime", NULL, NULL},
        {"children", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_issue_children},
        {"comments", "CommentConnection!",
         "after: String, before: String, filter: CommentFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_issue_comments},
        {"completedAt", "DateTime", NULL, NULL},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"creator", "User", NULL, lq_r_creator_of},
        {"customerTicketCount", "Int!", NULL, lq_d_zero},
        {"cycle", "Cycle", NULL, lq_r_cycle_of},
        {"delegate", "User", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"dueDate", "TimelessDate", NULL, NULL},
        {"estimate", "Float", NULL, NULL},
        {"externalUserCreator", "ExternalUser", NULL, NULL},
        {"favorite", "Favorite", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"identifier", "String!", NULL, lq_d_string},
        {"inheritsSharedAccess", "Boolean!", NULL, lq_d_false},
        {"integrationSourceType", "IntegrationService", NULL, NULL},
        {"inverseRelations", "IssueRelationConnection!",
         "after: String, before: String, first: Int, includeArchived: Boolean, last: Int, "
         "orderBy: PaginationOrderBy",
         lq_r_issue_inverse_relations},
        {"labelIds", "[String!]!", NULL, lq_d_list},
        {"labels", "IssueLabelConnection!",
         "after: String, before: String, filter: IssueLabelFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_issue_labels},
        {"lastAppliedTemplate", "Template", NULL, NULL},
        {"number", "Float!", NULL, lq_d_zero},
        {"parent", "Issue", NULL, lq_r_parent_issue},
        {"previousIdentifiers", "[String!]!", NULL, lq_d_list},
        {"priority", "Float!", NULL, lq_d_zero},
        {"priorityLabel", "String!", NULL, lq_d_string},
        {"prioritySortOrder", "Float!", NULL, lq_d_zero},
        {"project", "Project", NULL, lq_r_project_of},
        {"projectMilestone", "ProjectMilestone", NULL, NULL},
        {"reactionData", "JSONObject!", NULL, lq_d_object},
        {"reactions", "[Reaction!]!", NULL, lq_d_list},
        {"recurringIssueTemplate", "Template", NULL, NULL},
        {"relations", "IssueRelationConnection!",
         "after: String, before: String, first: Int, includeArchived: Boolean, last: Int, "
         "orderBy: PaginationOrderBy",
         lq_r_issue_relations},
        {"sharedAccess", "IssueSharedAccess!", NULL, lq_r_shared_access},
        {"slaBreachesAt", "DateTime", NULL, NULL},
        {"slaHighRiskAt", "DateTime", NULL, NULL},
        {"slaMediumRiskAt", "DateTime", NULL, NULL},
        {"slaStartedAt", "DateTime", NULL, NULL},
        {"slaType", "String", NULL, NULL},
        {"snoozedBy", "User", NULL, NULL},
        {"snoozedUntilAt", "DateTime", NULL, NULL},
        {"sortOrder", "Float!", NULL, lq_d_zero},
        {"sourceComment", "Comment", NULL, NULL},
        {"startedAt", "DateTime", NULL, NULL},
        {"startedTriageAt", "DateTime", NULL, NULL},
        {"state", "WorkflowState!", NULL, lq_r_state_of},
        {"subIssueSortOrder", "Float", NULL, NULL},
        {"syncedWith", "[ExternalEntityInfo!]", NULL, NULL},
        {"team", "Team!", NULL, lq_r_team_of},
        {"title", "String!", NULL, lq_d_string},
        {"trashed", "Boolean", NULL, NULL},
        {"triagedAt", "DateTime", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"url", "String!", NULL, lq_d_string},
};

static const GqlField f_IssueArchivePayload[] = {
        {"entity", "Issue", NULL, NULL},
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_IssueConnection[] = {
        {"edges", "[IssueEdge!]!", NULL, lq_d_list},
        {"nodes", "[Issue!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_IssueEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "Issue!", NULL, NULL},
};

static const GqlField f_IssueLabel[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"color", "String!", NULL, lq_d_string},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"creator", "User", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"groupType", "LabelGroupType", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"inheritedFrom", "IssueLabel", NULL, NULL},
        {"isGroup", "Boolean!", NULL, lq_d_false},
        {"issues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_label_issues},
        {"lastAppliedAt", "DateTime", NULL, NULL},
        {"name", "String!", NULL, lq_d_string},
        {"parent", "IssueLabel", NULL, NULL},
        {"retiredBy", "User", NULL, NULL},
        {"team", "Team", NULL, lq_r_team_of},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
};

static const GqlField f_IssueLabelConnection[] = {
        {"edges", "[IssueLabelEdge!]!", NULL, lq_d_list},
        {"nodes", "[IssueLabel!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_IssueLabelEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "IssueLabel!", NULL, NULL},
};

static const GqlField f_IssueLabelPayload[] = {
        {"issueLabel", "IssueLabel!", NULL, NULL},
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_IssuePayload[] = {
        {"issue", "Issue", NULL, NULL},
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_IssueSharedAccess[] = {
        {"disallowedIssueFields", "[IssueSharedAccessDisallowedField!]!", NULL, lq_d_list},
        {"isShared", "Boolean!", NULL, lq_d_false},
        {"sharedWithCount", "Int!", NULL, lq_d_zero},
        {"sharedWithUsers", "[User!]!", NULL, lq_d_list},
        {"viewerHasOnlySharedAccess", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_Mutation[] = {
        {"attachmentCreate", "AttachmentPayload!", "input: AttachmentCreateInput!",
         lq_m_attachment_create},
        {"attachmentLinkURL", "AttachmentPayload!",
         "createAsUser: String, displayIconUrl: String, id: String, issueId: String!, title: "
         "String, url: String!",
         lq_m_attachment_link_url},
        {"commentCreate", "CommentPayload!", "input: CommentCreateInput!", lq_m_comment_create},
        {"commentDelete", "DeletePayload!", "id: String!", lq_m_comment_delete},
        {"commentUpdate", "CommentPayload!",
         "id: String!, input: CommentUpdateInput!, skipEditedAt: Boolean", lq_m_comment_update},
        {"issueAddLabel", "IssuePayload!", "id: String!, labelId: String!", lq_m_issue_add_label},
        {"issueArchive", "IssueArchivePayload!", "id: String!, trash: Boolean", lq_m_issue_archive},
        {"issueCreate", "IssuePayload!", "input: IssueCreateInput!", lq_m_issue_create},
        {"issueDelete", "IssueArchivePayload!", "id: String!, permanentlyDelete: Boolean",
         lq_m_issue_delete},
        {"issueLabelCreate", "IssueLabelPayload!",
         "input: IssueLabelCreateInput!, replaceTeamLabels: Boolean", lq_m_label_create},
        {"issueLabelUpdate", "IssueLabelPayload!",
         "id: String!, input: IssueLabelUpdateInput!, replaceTeamLabels: Boolean",
         lq_m_label_update},
        {"issueRelationCreate", "IssueRelationPayload!",
         "input: IssueRelationCreateInput!, overrideCreatedAt: DateTime",
         lq_m_issue_relation_create},
        {"issueRemoveLabel", "IssuePayload!", "id: String!, labelId: String!",
         lq_m_issue_remove_label},
        {"issueUpdate", "IssuePayload!", "id: String!, input: IssueUpdateInput!",
         lq_m_issue_update},
        {"projectCreate", "ProjectPayload!",
         "aiConversationId: String, input: ProjectCreateInput!, projectDraftId: String, "
         "slackChannelName: String",
         lq_m_project_create},
};

static const GqlField f_Organization[] = {
        {"aiDiscussionSummariesEnabled", "Boolean!", NULL, lq_d_false},
        {"aiThreadSummariesEnabled", "Boolean!", NULL, lq_d_false},
        {"allowMembersToInvite", "Boolean", NULL, NULL},
        {"allowedAuthServices", "[String!]!", NULL, lq_d_list},
        {"allowedFileUploadContentTypes", "[String!]", NULL, NULL},
        {"archivedAt", "DateTime", NULL, NULL},
        {"authSettings", "JSONObject!", NULL, lq_d_object},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"createdIssueCount", "Int!", NULL, lq_d_zero},
        {"customerCount", "Int!", NULL, lq_d_zero},
        {"customersConfiguration", "JSONObject!", NULL, lq_d_object},
        {"customersEnabled", "Boolean!", NULL, lq_d_false},
        {"defaultFeedSummarySchedule", "FeedSummarySchedule", NULL, NULL},
        {"defaultHomeView", "String", NULL, NULL},
        {"defaultHomeViewTargetId", "String", NULL, NULL},
        {"deletionRequestedAt", "DateTime", NULL, NULL},
        {"feedEnabled", "Boolean!", NULL, lq_d_false},
        {"fiscalYearStartMonth", "Float!", NULL, lq_d_zero},
        {"gitBranchFormat", "String", NULL, NULL},
        {"gitLinkbackDescriptionsEnabled", "Boolean!", NULL, lq_d_false},
        {"gitLinkbackMessagesEnabled", "Boolean!", NULL, lq_d_false},
        {"gitPublicLinkbackMessagesEnabled", "Boolean!", NULL, lq_d_false},
        {"hideNonPrimaryOrganizations", "Boolean!", NULL, lq_d_false},
        {"hipaaComplianceEnabled", "Boolean!", NULL, lq_d_false},
        {"id", "ID!", NULL, lq_d_string},
        {"initiativeUpdateReminderFrequencyInWeeks", "Float", NULL, NULL},
        {"initiativeUpdateRemindersDay", "Day!", NULL, NULL},
        {"initiativeUpdateRemindersHour", "Float!", NULL, lq_d_zero},
        {"labels", "IssueLabelConnection!",
         "after: String, before: String, filter: IssueLabelFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_org_labels},
        {"logoUrl", "String", NULL, NULL},
        {"name", "String!", NULL, lq_d_string},
        {"periodUploadVolume", "Float!", NULL, lq_d_zero},
        {"previousUrlKeys", "[String!]!", NULL, lq_d_list},
        {"projectStatuses", "[ProjectStatus!]!", NULL, lq_d_list},
        {"projectUpdateReminderFrequencyInWeeks", "Float", NULL, NULL},
        {"projectUpdateRemindersDay", "Day!", NULL, NULL},
        {"projectUpdateRemindersHour", "Float!", NULL, lq_d_zero},
        {"projectUpdatesReminderFrequency", "ProjectUpdateReminderFrequency!", NULL, NULL},
        {"pullRequestIssueMode", "String!", NULL, lq_d_string},
        {"pullRequestTourEnabled", "Boolean!", NULL, lq_d_false},
        {"releaseChannel", "ReleaseChannel!", NULL, NULL},
        {"releasesEnabled", "Boolean!", NULL, lq_d_false},
        {"restrictLabelManagementToAdmins", "Boolean", NULL, NULL},
        {"restrictTeamCreationToAdmins", "Boolean", NULL, NULL},
        {"roadmapEnabled", "Boolean!", NULL, lq_d_false},
        {"samlEnabled", "Boolean!", NULL, lq_d_false},
        {"scimEnabled", "Boolean!", NULL, lq_d_false},
        {"securitySettings", "JSONObject!", NULL, lq_d_object},
        {"slaDayCount", "SLADayCountType!", NULL, NULL},
        {"slackProjectChannelIntegration", "Integration", NULL, NULL},
        {"slackProjectChannelPrefix", "String!", NULL, lq_d_string},
        {"subscription", "PaidSubscription", NULL, NULL},
        {"suggestedBranchNameEnabled", "Boolean!", NULL, lq_d_false},
        {"teams", "TeamConnection!",
         "after: String, before: String, filter: TeamFilter, first: Int, includeArchived: Boolean, "
         "last: Int, orderBy: PaginationOrderBy",
         lq_r_org_teams},
        {"trialEndsAt", "DateTime", NULL, NULL},
        {"trialStartsAt", "DateTime", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"urlKey", "String!", NULL, lq_d_string},
        {"userCount", "Int!", NULL, lq_d_zero},
        {"users", "UserConnection!",
         "after: String, before: String, first: Int, includeArchived: Boolean, includeDisabled: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_org_users},
};

static const GqlField f_PageInfo[] = {
        {"endCursor", "String", NULL, NULL},
        {"hasNextPage", "Boolean!", NULL, lq_d_false},
        {"hasPreviousPage", "Boolean!", NULL, lq_d_false},
        {"startCursor", "String", NULL, NULL},
};

static const GqlField f_PaidSubscription[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"cancelAt", "DateTime", NULL, NULL},
        {"canceledAt", "DateTime", NULL, NULL},
        {"collectionMethod", "String!", NULL, lq_d_string},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"creator", "User", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"nextBillingAt", "DateTime", NULL, NULL},
        {"pendingChangeType", "String", NULL, NULL},
        {"seats", "Float!", NULL, lq_d_zero},
        {"seatsMaximum", "Float", NULL, NULL},
        {"seatsMinimum", "Float", NULL, NULL},
        {"type", "String!", NULL, lq_d_string},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
};

static const GqlField f_Project[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"autoArchivedAt", "DateTime", NULL, NULL},
        {"canceledAt", "DateTime", NULL, NULL},
        {"color", "String!", NULL, lq_d_string},
        {"completedAt", "DateTime", NULL, NULL},
        {"completedIssueCountHistory", "[Float!]!", NULL, lq_d_list},
        {"completedScopeHistory", "[Float!]!", NULL, lq_d_list},
        {"content", "String", NULL, NULL},
        {"convertedFromIssue", "Issue", NULL, NULL},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"creator", "User", NULL, NULL},
        {"description", "String!", NULL, lq_d_string},
        {"documentContent", "DocumentContent", NULL, NULL},
        {"favorite", "Favorite", NULL, NULL},
        {"frequencyResolution", "FrequencyResolutionType!", NULL, NULL},
        {"health", "ProjectUpdateHealthType", NULL, NULL},
        {"healthUpdatedAt", "DateTime", NULL, NULL},
        {"icon", "String", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"inProgressScopeHistory", "[Float!]!", NULL, lq_d_list},
        {"integrationsSettings", "IntegrationsSettings", NULL, NULL},
        {"issueCountHistory", "[Float!]!", NULL, lq_d_list},
        {"issues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_project_issues},
        {"labelIds", "[String!]!", NULL, lq_d_list},
        {"lastAppliedTemplate", "Template", NULL, NULL},
        {"lastUpdate", "ProjectUpdate", NULL, NULL},
        {"lead", "User", NULL, NULL},
        {"microsoftTeamsChannelId", "String", NULL, NULL},
        {"name", "String!", NULL, lq_d_string},
        {"priority", "Int!", NULL, lq_d_zero},
        {"priorityLabel", "String!", NULL, lq_d_string},
        {"prioritySortOrder", "Float!", NULL, lq_d_zero},
        {"progress", "Float!", NULL, lq_d_zero},
        {"projectUpdateRemindersPausedUntilAt", "DateTime", NULL, NULL},
        {"resourceCount", "Int!", NULL, lq_d_zero},
        {"scope", "Float!", NULL, lq_d_zero},
        {"scopeHistory", "[Float!]!", NULL, lq_d_list},
        {"slackChannelId", "String", NULL, NULL},
        {"slackIssueComments", "Boolean!", NULL, lq_d_false},
        {"slackIssueStatuses", "Boolean!", NULL, lq_d_false},
        {"slackNewIssue", "Boolean!", NULL, lq_d_false},
        {"slugId", "String!", NULL, lq_d_string},
        {"sortOrder", "Float!", NULL, lq_d_zero},
        {"startDate", "TimelessDate", NULL, NULL},
        {"startDateResolution", "DateResolutionType", NULL, NULL},
        {"startedAt", "DateTime", NULL, NULL},
        {"state", "String!", NULL, lq_d_string},
        {"status", "ProjectStatus!", NULL, lq_r_project_status},
        {"syncedWith", "[ExternalEntityInfo!]", NULL, NULL},
        {"targetDate", "TimelessDate", NULL, NULL},
        {"targetDateResolution", "DateResolutionType", NULL, NULL},
        {"teams", "TeamConnection!",
         "after: String, before: String, filter: TeamFilter, first: Int, includeArchived: Boolean, "
         "last: Int, orderBy: PaginationOrderBy",
         lq_r_project_teams},
        {"trashed", "Boolean", NULL, NULL},
        {"updateReminderFrequency", "Float", NULL, NULL},
        {"updateReminderFrequencyInWeeks", "Float", NULL, NULL},
        {"updateRemindersDay", "Day", NULL, NULL},
        {"updateRemindersHour", "Float", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"url", "String!", NULL, lq_d_string},
};

static const GqlField f_ProjectConnection[] = {
        {"edges", "[ProjectEdge!]!", NULL, lq_d_list},
        {"nodes", "[Project!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_ProjectEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "Project!", NULL, NULL},
};

static const GqlField f_ProjectMilestone[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_ProjectPayload[] = {
        {"lastSyncId", "Float!", NULL, lq_d_zero},
        {"project", "Project", NULL, NULL},
        {"success", "Boolean!", NULL, lq_d_false},
};

static const GqlField f_ProjectStatus[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"color", "String!", NULL, lq_d_string},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"description", "String", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"indefinite", "Boolean!", NULL, lq_d_false},
        {"name", "String!", NULL, lq_d_string},
        {"position", "Float!", NULL, lq_d_zero},
        {"type", "ProjectStatusType!", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
};

static const GqlField f_ProjectUpdate[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_Query[] = {
        {"comment", "Comment!", "hash: String, id: String", lq_q_comment},
        {"comments", "CommentConnection!",
         "after: String, before: String, filter: CommentFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_q_comments},
        {"cycle", "Cycle!", "id: String!", lq_q_cycle},
        {"cycles", "CycleConnection!",
         "after: String, before: String, filter: CycleFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_q_cycles},
        {"issue", "Issue!", "id: String!", lq_q_issue},
        {"issueLabel", "IssueLabel!", "id: String!", lq_q_label},
        {"issueLabels", "IssueLabelConnection!",
         "after: String, before: String, filter: IssueLabelFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_q_labels},
        {"issues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy, sort: [IssueSortInput!]",
         lq_q_issues},
        {"organization", "Organization!", NULL, lq_q_organization},
        {"project", "Project!", "id: String!", lq_q_project},
        {"projects", "ProjectConnection!",
         "after: String, before: String, filter: ProjectFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy, sort: [ProjectSortInput!]",
         lq_q_projects},
        {"team", "Team!", "id: String!", lq_q_team},
        {"teams", "TeamConnection!",
         "after: String, before: String, filter: TeamFilter, first: Int, includeArchived: Boolean, "
         "last: Int, orderBy: PaginationOrderBy",
         lq_q_teams},
        {"user", "User!", "id: String!", lq_q_user},
        {"users", "UserConnection!",
         "after: String, before: String, filter: UserFilter, first: Int, includeArchived: Boolean, "
         "includeDisabled: Boolean, last: Int, orderBy: PaginationOrderBy, sort: [UserSortInput!]",
         lq_q_users},
        {"viewer", "User!", NULL, lq_q_viewer},
        {"workflowState", "WorkflowState!", "id: String!", lq_q_state},
        {"workflowStates", "WorkflowStateConnection!",
         "after: String, before: String, filter: WorkflowStateFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_q_states},
};

static const GqlField f_Reaction[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"comment", "Comment", NULL, NULL},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"emoji", "String!", NULL, lq_d_string},
        {"externalUser", "ExternalUser", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"initiativeUpdate", "InitiativeUpdate", NULL, NULL},
        {"issue", "Issue", NULL, NULL},
        {"projectUpdate", "ProjectUpdate", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"user", "User", NULL, NULL},
};

static const GqlField f_SyncedExternalThread[] = {
        {"displayName", "String", NULL, NULL},
        {"id", "ID", NULL, NULL},
        {"isConnected", "Boolean!", NULL, lq_d_false},
        {"isPersonalIntegrationConnected", "Boolean!", NULL, lq_d_false},
        {"isPersonalIntegrationRequired", "Boolean!", NULL, lq_d_false},
        {"name", "String", NULL, NULL},
        {"subType", "String", NULL, NULL},
        {"type", "String!", NULL, lq_d_string},
        {"url", "String", NULL, NULL},
};

static const GqlField f_Team[] = {
        {"activeCycle", "Cycle", NULL, NULL},
        {"aiDiscussionSummariesEnabled", "Boolean!", NULL, lq_d_false},
        {"aiThreadSummariesEnabled", "Boolean!", NULL, lq_d_false},
        {"allMembersCanJoin", "Boolean", NULL, NULL},
        {"archivedAt", "DateTime", NULL, NULL},
        {"autoArchivePeriod", "Float!", NULL, lq_d_zero},
        {"autoCloseChildIssues", "Boolean", NULL, NULL},
        {"autoCloseParentIssues", "Boolean", NULL, NULL},
        {"autoClosePeriod", "Float", NULL, NULL},
        {"autoCloseStateId", "String", NULL, NULL},
        {"color", "String", NULL, NULL},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"cycleCalenderUrl", "String!", NULL, lq_d_string},
        {"cycleCooldownTime", "Float!", NULL, lq_d_zero},
        {"cycleDuration", "Float!", NULL, lq_d_zero},
        {"cycleIssueAutoAssignCompleted", "Boolean!", NULL, lq_d_false},
        {"cycleIssueAutoAssignStarted", "Boolean!", NULL, lq_d_false},
        {"cycleLockToActive", "Boolean!", NULL, lq_d_false},
        {"cycleStartDay", "Float!", NULL, lq_d_zero},
        {"cycles", "CycleConnection!",
         "after: String, before: String, filter: CycleFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_team_cycles},
        {"cyclesEnabled", "Boolean!", NULL, lq_d_false},
        {"defaultIssueEstimate", "Float!", NULL, lq_d_zero},
        {"defaultIssueState", "WorkflowState", NULL, NULL},
        {"defaultProjectTemplate", "Template", NULL, NULL},
        {"defaultTemplateForMembers", "Template", NULL, NULL},
        {"defaultTemplateForMembersId", "String", NULL, NULL},
        {"defaultTemplateForNonMembers", "Template", NULL, NULL},
        {"defaultTemplateForNonMembersId", "String", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"displayName", "String!", NULL, lq_d_string},
        {"draftWorkflowState", "WorkflowState", NULL, NULL},
        {"groupIssueHistory", "Boolean!", NULL, lq_d_false},
        {"icon", "String", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"inheritIssueEstimation", "Boolean!", NULL, lq_d_false},
        {"inheritWorkflowStatuses", "Boolean!", NULL, lq_d_false},
        {"initiativesEnabled", "Boolean!", NULL, lq_d_false},
        {"integrationsSettings", "IntegrationsSettings", NULL, NULL},
        {"inviteHash", "String!", NULL, lq_d_string},
        {"issueCount", "Int!", "includeArchived: Boolean", lq_d_zero},
        {"issueEstimationAllowZero", "Boolean!", NULL, lq_d_false},
        {"issueEstimationExtended", "Boolean!", NULL, lq_d_false},
        {"issueEstimationType", "String!", NULL, lq_d_string},
        {"issueOrderingNoPriorityFirst", "Boolean!", NULL, lq_d_false},
        {"issueSortOrderDefaultToBottom", "Boolean!", NULL, lq_d_false},
        {"issues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, includeSubTeams: Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_team_issues},
        {"key", "String!", NULL, lq_d_string},
        {"labels", "IssueLabelConnection!",
         "after: String, before: String, filter: IssueLabelFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_team_labels},
        {"ledInitiativeCount", "Int!", NULL, lq_d_zero},
        {"markedAsDuplicateWorkflowState", "WorkflowState", NULL, NULL},
        {"mergeWorkflowState", "WorkflowState", NULL, NULL},
        {"members", "UserConnection!",
         "after: String, before: String, filter: UserFilter, first: Int, includeArchived: "
         "Boolean, includeDisabled: Boolean, last: Int, orderBy: PaginationOrderBy, sort: "
         "[UserSortInput!]",
         lq_r_team_members},
        {"mergeableWorkflowState", "WorkflowState", NULL, NULL},
        {"name", "String!", NULL, lq_d_string},
        {"organization", "Organization!", NULL, lq_r_organization},
        {"parent", "Team", NULL, NULL},
        {"private", "Boolean!", NULL, lq_d_false},
        {"projects", "ProjectConnection!",
         "after: String, before: String, filter: ProjectFilter, first: Int, includeArchived: "
         "Boolean, includeSubTeams: Boolean, last: Int, orderBy: PaginationOrderBy, sort: "
         "[ProjectSortInput!]",
         lq_r_team_projects},
        {"requirePriorityToLeaveTriage", "Boolean!", NULL, lq_d_false},
        {"retiredAt", "DateTime", NULL, NULL},
        {"reviewWorkflowState", "WorkflowState", NULL, NULL},
        {"scimGroupName", "String", NULL, NULL},
        {"scimManaged", "Boolean!", NULL, lq_d_false},
        {"securitySettings", "JSONObject!", NULL, lq_d_object},
        {"setIssueSortOrderOnStateChange", "String!", NULL, lq_d_string},
        {"slackIssueComments", "Boolean!", NULL, lq_d_false},
        {"slackIssueStatuses", "Boolean!", NULL, lq_d_false},
        {"slackNewIssue", "Boolean!", NULL, lq_d_false},
        {"startWorkflowState", "WorkflowState", NULL, NULL},
        {"states", "WorkflowStateConnection!",
         "after: String, before: String, filter: WorkflowStateFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_team_states},
        {"timezone", "String!", NULL, lq_d_string},
        {"triageEnabled", "Boolean!", NULL, lq_d_false},
        {"triageIssueState", "WorkflowState", NULL, NULL},
        {"triageResponsibility", "TriageResponsibility", NULL, NULL},
        {"upcomingCycleCount", "Float!", NULL, lq_d_zero},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"viewerCanJoin", "Boolean!", NULL, lq_d_false},
        {"viewerCanLeave", "Boolean!", NULL, lq_d_false},
        {"viewerMembership", "TeamMembership", NULL, NULL},
        {"visibility", "TeamVisibility!", NULL, NULL},
};

static const GqlField f_TeamConnection[] = {
        {"edges", "[TeamEdge!]!", NULL, lq_d_list},
        {"nodes", "[Team!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_TeamEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "Team!", NULL, NULL},
};

static const GqlField f_TeamMembership[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_Template[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_TriageResponsibility[] = {
        {"id", "ID!", NULL, lq_d_string},
};

static const GqlField f_User[] = {
        {"active", "Boolean!", NULL, lq_d_false},
        {"admin", "Boolean!", NULL, lq_d_false},
        {"app", "Boolean!", NULL, lq_d_false},
        {"archivedAt", "DateTime", NULL, NULL},
        {"assignedIssues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_user_assigned},
        {"avatarBackgroundColor", "String!", NULL, lq_d_string},
        {"avatarUrl", "String", NULL, NULL},
        {"calendarHash", "String", NULL, NULL},
        {"canAccessAnyPublicTeam", "Boolean!", NULL, lq_d_false},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"createdIssueCount", "Int!", NULL, lq_d_zero},
        {"createdIssues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_user_created},
        {"description", "String", NULL, NULL},
        {"disableReason", "String", NULL, NULL},
        {"displayName", "String!", NULL, lq_d_string},
        {"email", "String!", NULL, lq_d_string},
        {"gitHubUserId", "String", NULL, NULL},
        {"guest", "Boolean!", NULL, lq_d_false},
        {"id", "ID!", NULL, lq_d_string},
        {"initials", "String!", NULL, lq_d_string},
        {"inviteHash", "String!", NULL, lq_d_string},
        {"isAssignable", "Boolean!", NULL, lq_d_false},
        {"isMe", "Boolean!", NULL, lq_d_false},
        {"isMentionable", "Boolean!", NULL, lq_d_false},
        {"lastSeen", "DateTime", NULL, NULL},
        {"name", "String!", NULL, lq_d_string},
        {"organization", "Organization!", NULL, lq_r_organization},
        {"owner", "Boolean!", NULL, lq_d_false},
        {"statusEmoji", "String", NULL, NULL},
        {"statusLabel", "String", NULL, NULL},
        {"statusUntilAt", "DateTime", NULL, NULL},
        {"supportsAgentSessions", "Boolean!", NULL, lq_d_false},
        {"timezone", "String", NULL, NULL},
        {"title", "String", NULL, NULL},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"url", "String!", NULL, lq_d_string},
};

static const GqlField f_UserConnection[] = {
        {"edges", "[UserEdge!]!", NULL, lq_d_list},
        {"nodes", "[User!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_UserEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "User!", NULL, NULL},
};

static const GqlField f_WelcomeMessage[] = {
        {"archivedAt", "DateTime", NULL, NULL},    {"createdAt", "DateTime!", NULL, lq_d_string},
        {"enabled", "Boolean!", NULL, lq_d_false}, {"id", "ID!", NULL, lq_d_string},
        {"title", "String", NULL, NULL},           {"updatedAt", "DateTime!", NULL, lq_d_string},
        {"updatedBy", "User", NULL, NULL},
};

static const GqlField f_WorkflowState[] = {
        {"archivedAt", "DateTime", NULL, NULL},
        {"color", "String!", NULL, lq_d_string},
        {"createdAt", "DateTime!", NULL, lq_d_string},
        {"description", "String", NULL, NULL},
        {"id", "ID!", NULL, lq_d_string},
        {"inheritedFrom", "WorkflowState", NULL, NULL},
        {"issues", "IssueConnection!",
         "after: String, before: String, filter: IssueFilter, first: Int, includeArchived: "
         "Boolean, last: Int, orderBy: PaginationOrderBy",
         lq_r_state_issues},
        {"name", "String!", NULL, lq_d_string},
        {"position", "Float!", NULL, lq_d_zero},
        {"team", "Team!", NULL, lq_r_team_of},
        {"type", "String!", NULL, lq_d_string},
        {"updatedAt", "DateTime!", NULL, lq_d_string},
};

static const GqlField f_WorkflowStateConnection[] = {
        {"edges", "[WorkflowStateEdge!]!", NULL, lq_d_list},
        {"nodes", "[WorkflowState!]!", NULL, lq_d_list},
        {"pageInfo", "PageInfo!", NULL, NULL},
};

static const GqlField f_WorkflowStateEdge[] = {
        {"cursor", "String!", NULL, lq_d_string},
        {"node", "WorkflowState!", NULL, NULL},
};

/* ----- input types: the members of Linear's filters and inputs the twin evaluates (graphql.c
 * filter tables); a member outside them is GraphQL's coercion error, never ignored */

#define STRING_CMP                                                                             \
        {"eq", "String", NULL, NULL}, {"neq", "String", NULL, NULL},                           \
                {"in", "[String!]", NULL, NULL}, {"nin", "[String!]", NULL, NULL},             \
                {"contains", "String", NULL, NULL}, {"notContains", "String", NULL, NULL},     \
                {"containsIgnoreCase", "String", NULL, NULL},                                  \
                {"notContainsIgnoreCase", "String", NULL, NULL},                               \
                {"startsWith", "String", NULL, NULL}, {"notStartsWith", "String", NULL, NULL}, \
                {"endsWith", "String", NULL, NULL}, {"notEndsWith", "String", NULL, NULL},     \
                {"eqIgnoreCase", "String", NULL, NULL},                                        \
        {                                                                                      \
                "neqIgnoreCase", "String", NULL, NULL                                          \
        }
#define NUMBER_CMP                                                                              \
        {"eq", "Float", NULL, NULL}, {"neq", "Float", NULL, NULL}, {"lt", "Float", NULL, NULL}, \
                {"lte", "Float", NULL, NULL}, {"gt", "Float", NULL, NULL},                      \
                {"gte", "Float", NULL, NULL}, {"in", "[Float!]", NULL, NULL},                   \
        {                                                                                       \
                "nin", "[Float!]", NULL, NULL                                                   \
        }
#define DATE_CMP                                                                             \
        {"eq", "DateTimeOrDuration", NULL, NULL}, {"neq", "DateTimeOrDuration", NULL, NULL}, \
                {"lt", "DateTimeOrDuration", NULL, NULL},                                    \
                {"lte", "DateTimeOrDuration", NULL, NULL},                                   \
                {"gt", "DateTimeOrDuration", NULL, NULL},                                    \
        {                                                                                    \
                "gte", "DateTimeOrDuration", NULL, NULL                                      \
        }
#define NULL_CMP                              \
        {                                     \
                "null", "Boolean", NULL, NULL \
        }

static const GqlField in_StringComparator[] = {STRING_CMP};
static const GqlField in_NullableStringComparator[] = {STRING_CMP, NULL_CMP};
static const GqlField in_IDComparator[] = {
        {"eq", "ID", NULL, NULL},
        {"neq", "ID", NULL, NULL},
        {"in", "[ID!]", NULL, NULL},
        {"nin", "[ID!]", NULL, NULL},
};
static const GqlField in_NumberComparator[] = {NUMBER_CMP};
static const GqlField in_NullableNumberComparator[] = {NUMBER_CMP, NULL_CMP};
static const GqlField in_DateComparator[] = {DATE_CMP};
static const GqlField in_NullableDateComparator[] = {DATE_CMP, NULL_CMP};
static const GqlField in_NullableTimelessDateComparator[] = {
        {"eq", "TimelessDateOrDuration", NULL, NULL},
        {"neq", "TimelessDateOrDuration", NULL, NULL},
        {"lt", "TimelessDateOrDuration", NULL, NULL},
        {"lte", "TimelessDateOrDuration", NULL, NULL},
        {"gt", "TimelessDateOrDuration", NULL, NULL},
        {"gte", "TimelessDateOrDuration", NULL, NULL},
        NULL_CMP,
};
static const GqlField in_BooleanComparator[] = {
        {"eq", "Boolean", NULL, NULL},
        {"neq", "Boolean", NULL, NULL},
};

#define TEAM_FILTER(self)                                                            \
        {"id", "IDComparator", NULL, NULL}, {"key", "StringComparator", NULL, NULL}, \
                {"name", "StringComparator", NULL, NULL},                            \
                {"description", "NullableStringComparator", NULL, NULL},             \
                {"and", "[" self "!]", NULL, NULL},                                  \
        {                                                                            \
                "or", "[" self "!]", NULL, NULL                                      \
        }
static const GqlField in_TeamFilter[] = {TEAM_FILTER("TeamFilter")};
static const GqlField in_NullableTeamFilter[] = {TEAM_FILTER("NullableTeamFilter"), NULL_CMP};

#define USER_FILTER(self)                                                                      \
        {"id", "IDComparator", NULL, NULL}, {"name", "StringComparator", NULL, NULL},          \
                {"displayName", "StringComparator", NULL, NULL},                               \
                {"email", "StringComparator", NULL, NULL},                                     \
                {"active", "BooleanComparator", NULL, NULL},                                   \
                {"admin", "BooleanComparator", NULL, NULL},                                    \
                {"isMe", "BooleanComparator", NULL, NULL}, {"and", "[" self "!]", NULL, NULL}, \
        {                                                                                      \
                "or", "[" self "!]", NULL, NULL                                                \
        }
static const GqlField in_UserFilter[] = {USER_FILTER("UserFilter")};
static const GqlField in_NullableUserFilter[] = {USER_FILTER("NullableUserFilter"), NULL_CMP};

static const GqlField in_WorkflowStateFilter[] = {
        {"id", "IDComparator", NULL, NULL},           {"name", "StringComparator", NULL, NULL},
        {"type", "StringComparator", NULL, NULL},     {"position", "NumberComparator", NULL, NULL},
        {"team", "TeamFilter", NULL, NULL},           {"and", "[WorkflowStateFilter!]", NULL, NULL},
        {"or", "[WorkflowStateFilter!]", NULL, NULL},
};

#define LABEL_FILTER(self)                                                                      \
        {"id", "IDComparator", NULL, NULL}, {"name", "StringComparator", NULL, NULL},           \
                {"team", "NullableTeamFilter", NULL, NULL}, {"and", "[" self "!]", NULL, NULL}, \
        {                                                                                       \
                "or", "[" self "!]", NULL, NULL                                                 \
        }
static const GqlField in_IssueLabelFilter[] = {LABEL_FILTER("IssueLabelFilter")};
static const GqlField in_IssueLabelCollectionFilter[] = {
        LABEL_FILTER("IssueLabelCollectionFilter"),
        {"some", "IssueLabelFilter", NULL, NULL},
        {"every", "IssueLabelFilter", NULL, NULL},
        {"length", "NumberComparator", NULL, NULL},
};

#define PROJECT_FILTER(self)                                                                   \
        {"id", "IDComparator", NULL, NULL}, {"name", "StringComparator", NULL, NULL},          \
                {"state", "StringComparator", NULL, NULL}, {"and", "[" self "!]", NULL, NULL}, \
        {                                                                                      \
                "or", "[" self "!]", NULL, NULL                                                \
        }
static const GqlField in_ProjectFilter[] = {PROJECT_FILTER("ProjectFilter")};
static const GqlField in_NullableProjectFilter[] = {PROJECT_FILTER("NullableProjectFilter"),
                                                    NULL_CMP};

#define CYCLE_FILTER(self)                                                                      \
        {"id", "IDComparator", NULL, NULL}, {"name", "StringComparator", NULL, NULL},           \
                {"number", "NumberComparator", NULL, NULL}, {"team", "TeamFilter", NULL, NULL}, \
                {"and", "[" self "!]", NULL, NULL},                                             \
        {                                                                                       \
                "or", "[" self "!]", NULL, NULL                                                 \
        }
static const GqlField in_CycleFilter[] = {CYCLE_FILTER("CycleFilter")};
static const GqlField in_NullableCycleFilter[] = {CYCLE_FILTER("NullableCycleFilter"), NULL_CMP};

static const GqlField in_NullableIssueFilter[] = {
        {"id", "IDComparator", NULL, NULL},           {"title", "StringComparator", NULL, NULL},
        {"number", "NumberComparator", NULL, NULL},   {"and", "[NullableIssueFilter!]", NULL, NULL},
        {"or", "[NullableIssueFilter!]", NULL, NULL}, NULL_CMP,
};

static const GqlField in_IssueFilter[] = {
        {"id", "IDComparator", NULL, NULL},
        {"title", "StringComparator", NULL, NULL},
        {"description", "NullableStringComparator", NULL, NULL},
        {"number", "NumberComparator", NULL, NULL},
        {"priority", "NullableNumberComparator", NULL, NULL},
        {"estimate", "EstimateComparator", NULL, NULL},
        {"team", "TeamFilter", NULL, NULL},
        {"state", "WorkflowStateFilter", NULL, NULL},
        {"assignee", "NullableUserFilter", NULL, NULL},
        {"creator", "NullableUserFilter", NULL, NULL},
        {"labels", "IssueLabelCollectionFilter", NULL, NULL},
        {"project", "NullableProjectFilter", NULL, NULL},
        {"cycle", "NullableCycleFilter", NULL, NULL},
        {"parent", "NullableIssueFilter", NULL, NULL},
        {"createdAt", "DateComparator", NULL, NULL},
        {"updatedAt", "DateComparator", NULL, NULL},
        {"startedAt", "NullableDateComparator", NULL, NULL},
        {"completedAt", "NullableDateComparator", NULL, NULL},
        {"canceledAt", "NullableDateComparator", NULL, NULL},
        {"archivedAt", "NullableDateComparator", NULL, NULL},
        {"dueDate", "NullableTimelessDateComparator", NULL, NULL},
        {"searchableContent", "ContentComparator", NULL, NULL},
        {"and", "[IssueFilter!]", NULL, NULL},
        {"or", "[IssueFilter!]", NULL, NULL},
};

#define COMMENT_FILTER(self)                                                                      \
        {"id", "IDComparator", NULL, NULL}, {"body", "StringComparator", NULL, NULL},             \
                {"user", "UserFilter", NULL, NULL}, {"issue", "NullableIssueFilter", NULL, NULL}, \
                {"parent", "NullableCommentFilter", NULL, NULL},                                  \
                {"createdAt", "DateComparator", NULL, NULL},                                      \
                {"updatedAt", "DateComparator", NULL, NULL}, {"and", "[" self "!]", NULL, NULL},  \
        {                                                                                         \
                "or", "[" self "!]", NULL, NULL                                                   \
        }
static const GqlField in_CommentFilter[] = {COMMENT_FILTER("CommentFilter")};
static const GqlField in_NullableCommentFilter[] = {COMMENT_FILTER("NullableCommentFilter"),
                                                    NULL_CMP};

static const GqlField in_ContentComparator[] = {
        {"contains", "String", NULL, NULL},
        {"notContains", "String", NULL, NULL},
};

static const GqlField in_AttachmentFilter[] = {
        {"id", "IDComparator", NULL, NULL},         {"title", "StringComparator", NULL, NULL},
        {"url", "StringComparator", NULL, NULL},    {"createdAt", "DateComparator", NULL, NULL},
        {"and", "[AttachmentFilter!]", NULL, NULL}, {"or", "[AttachmentFilter!]", NULL, NULL},
};

static const GqlField in_AttachmentCreateInput[] = {
        {"issueId", "String!", NULL, NULL},
        {"title", "String!", NULL, NULL},
        {"url", "String!", NULL, NULL},
};

static const GqlField in_IssueRelationCreateInput[] = {
        {"id", "String", NULL, NULL},
        {"issueId", "String!", NULL, NULL},
        {"relatedIssueId", "String!", NULL, NULL},
        {"type", "IssueRelationType!", NULL, NULL},
};

static const GqlField in_IssueCreateInput[] = {
        {"teamId", "String!", NULL, NULL},     {"title", "String", NULL, NULL},
        {"description", "String", NULL, NULL}, {"priority", "Int", NULL, NULL},
        {"estimate", "Int", NULL, NULL},       {"stateId", "String", NULL, NULL},
        {"assigneeId", "String", NULL, NULL},  {"labelIds", "[String!]", NULL, NULL},
        {"projectId", "String", NULL, NULL},   {"cycleId", "String", NULL, NULL},
        {"parentId", "String", NULL, NULL},    {"dueDate", "TimelessDate", NULL, NULL},
};

static const GqlField in_IssueUpdateInput[] = {
        {"teamId", "String", NULL, NULL},
        {"title", "String", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"priority", "Int", NULL, NULL},
        {"estimate", "Int", NULL, NULL},
        {"stateId", "String", NULL, NULL},
        {"assigneeId", "String", NULL, NULL},
        {"labelIds", "[String!]", NULL, NULL},
        {"addedLabelIds", "[String!]", NULL, NULL},
        {"removedLabelIds", "[String!]", NULL, NULL},
        {"projectId", "String", NULL, NULL},
        {"cycleId", "String", NULL, NULL},
        {"parentId", "String", NULL, NULL},
        {"dueDate", "TimelessDate", NULL, NULL},
};

static const GqlField in_CommentCreateInput[] = {
        {"issueId", "String", NULL, NULL},
        {"parentId", "String", NULL, NULL},
        {"body", "String", NULL, NULL},
};

static const GqlField in_CommentUpdateInput[] = {
        {"body", "String", NULL, NULL},
};

static const GqlField in_IssueLabelCreateInput[] = {
        {"name", "String!", NULL, NULL},
        {"color", "String", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"teamId", "String", NULL, NULL},
};

static const GqlField in_IssueLabelUpdateInput[] = {
        {"name", "String", NULL, NULL},
        {"color", "String", NULL, NULL},
        {"description", "String", NULL, NULL},
};

static const GqlField in_ProjectCreateInput[] = {
        {"name", "String!", NULL, NULL},
        {"description", "String", NULL, NULL},
        {"teamIds", "[String!]!", NULL, NULL},
        {"state", "String", NULL, NULL},
};

static const GqlType types[] = {
        TYPE("ActorBot", GQL_OBJECT, NULL, f_ActorBot),
        TYPE("Attachment", GQL_OBJECT, NULL, f_Attachment),
        TYPE("AttachmentConnection", GQL_OBJECT, NULL, f_AttachmentConnection),
        TYPE("AttachmentEdge", GQL_OBJECT, NULL, f_AttachmentEdge),
        TYPE("AttachmentPayload", GQL_OBJECT, NULL, f_AttachmentPayload),
        TYPE("IssueRelation", GQL_OBJECT, NULL, f_IssueRelation),
        TYPE("IssueRelationConnection", GQL_OBJECT, NULL, f_IssueRelationConnection),
        TYPE("IssueRelationEdge", GQL_OBJECT, NULL, f_IssueRelationEdge),
        TYPE("IssueRelationPayload", GQL_OBJECT, NULL, f_IssueRelationPayload),
        ENUM("IssueRelationType", "blocks duplicate related similar"),
        TYPE("AgentSession", GQL_OBJECT, NULL, f_AgentSession),
        TYPE("AiPromptRules", GQL_OBJECT, NULL, f_AiPromptRules),
        TYPE("Comment", GQL_OBJECT, NULL, f_Comment),
        TYPE("CommentConnection", GQL_OBJECT, NULL, f_CommentConnection),
        TYPE("CommentEdge", GQL_OBJECT, NULL, f_CommentEdge),
        TYPE("CommentPayload", GQL_OBJECT, NULL, f_CommentPayload),
        TYPE("Cycle", GQL_OBJECT, NULL, f_Cycle),
        TYPE("CycleConnection", GQL_OBJECT, NULL, f_CycleConnection),
        TYPE("CycleEdge", GQL_OBJECT, NULL, f_CycleEdge),
        TYPE("DeletePayload", GQL_OBJECT, NULL, f_DeletePayload),
        TYPE("Document", GQL_OBJECT, NULL, f_Document),
        TYPE("DocumentContent", GQL_OBJECT, NULL, f_DocumentContent),
        TYPE("ExternalEntityInfo", GQL_OBJECT, NULL, f_ExternalEntityInfo),
        TYPE("ExternalEntityInfoGithubMetadata", GQL_OBJECT, NULL,
             f_ExternalEntityInfoGithubMetadata),
        TYPE("ExternalEntityInfoJiraMetadata", GQL_OBJECT, NULL, f_ExternalEntityInfoJiraMetadata),
        TYPE("ExternalEntitySlackMetadata", GQL_OBJECT, NULL, f_ExternalEntitySlackMetadata),
        TYPE("ExternalUser", GQL_OBJECT, NULL, f_ExternalUser),
        TYPE("Favorite", GQL_OBJECT, NULL, f_Favorite),
        TYPE("Initiative", GQL_OBJECT, NULL, f_Initiative),
        TYPE("InitiativeUpdate", GQL_OBJECT, NULL, f_InitiativeUpdate),
        TYPE("Integration", GQL_OBJECT, NULL, f_Integration),
        TYPE("IntegrationsSettings", GQL_OBJECT, NULL, f_IntegrationsSettings),
        TYPE("Issue", GQL_OBJECT, NULL, f_Issue),
        TYPE("IssueArchivePayload", GQL_OBJECT, NULL, f_IssueArchivePayload),
        TYPE("IssueConnection", GQL_OBJECT, NULL, f_IssueConnection),
        TYPE("IssueEdge", GQL_OBJECT, NULL, f_IssueEdge),
        TYPE("IssueLabel", GQL_OBJECT, NULL, f_IssueLabel),
        TYPE("IssueLabelConnection", GQL_OBJECT, NULL, f_IssueLabelConnection),
        TYPE("IssueLabelEdge", GQL_OBJECT, NULL, f_IssueLabelEdge),
        TYPE("IssueLabelPayload", GQL_OBJECT, NULL, f_IssueLabelPayload),
        TYPE("IssuePayload", GQL_OBJECT, NULL, f_IssuePayload),
        TYPE("IssueSharedAccess", GQL_OBJECT, NULL, f_IssueSharedAccess),
        TYPE("Mutation", GQL_OBJECT, NULL, f_Mutation),
        TYPE("Organization", GQL_OBJECT, NULL, f_Organization),
        TYPE("PageInfo", GQL_OBJECT, NULL, f_PageInfo),
        TYPE("PaidSubscription", GQL_OBJECT, NULL, f_PaidSubscription),
        TYPE("Project", GQL_OBJECT, NULL, f_Project),
        TYPE("ProjectConnection", GQL_OBJECT, NULL, f_ProjectConnection),
        TYPE("ProjectEdge", GQL_OBJECT, NULL, f_ProjectEdge),
        TYPE("ProjectMilestone", GQL_OBJECT, NULL, f_ProjectMilestone),
        TYPE("ProjectPayload", GQL_OBJECT, NULL, f_ProjectPayload),
        TYPE("ProjectStatus", GQL_OBJECT, NULL, f_ProjectStatus),
        TYPE("ProjectUpdate", GQL_OBJECT, NULL, f_ProjectUpdate),
        TYPE("Query", GQL_OBJECT, NULL, f_Query),
        TYPE("Reaction", GQL_OBJECT, NULL, f_Reaction),
        TYPE("SyncedExternalThread", GQL_OBJECT, NULL, f_SyncedExternalThread),
        TYPE("Team", GQL_OBJECT, NULL, f_Team),
        TYPE("TeamConnection", GQL_OBJECT, NULL, f_TeamConnection),
        TYPE("TeamEdge", GQL_OBJECT, NULL, f_TeamEdge),
        TYPE("TeamMembership", GQL_OBJECT, NULL, f_TeamMembership),
        TYPE("Template", GQL_OBJECT, NULL, f_Template),
        TYPE("TriageResponsibility", GQL_OBJECT, NULL, f_TriageResponsibility),
        TYPE("User", GQL_OBJECT, NULL, f_User),
        TYPE("UserConnection", GQL_OBJECT, NULL, f_UserConnection),
        TYPE("UserEdge", GQL_OBJECT, NULL, f_UserEdge),
        TYPE("WelcomeMessage", GQL_OBJECT, NULL, f_WelcomeMessage),
        TYPE("WorkflowState", GQL_OBJECT, NULL, f_WorkflowState),
        TYPE("WorkflowStateConnection", GQL_OBJECT, NULL, f_WorkflowStateConnection),
        TYPE("WorkflowStateEdge", GQL_OBJECT, NULL, f_WorkflowStateEdge),
        ENUM("DateResolutionType", "halfYear month quarter year"),
        ENUM("Day", "Friday Monday Saturday Sunday Thursday Tuesday Wednesday"),
        ENUM("ExternalSyncService", "github jira slack"),
        ENUM("FeedSummarySchedule", "daily never weekly"),
        ENUM("FrequencyResolutionType", "daily weekly"),
        ENUM("IntegrationService",
             "airbyte asksWeb datadog discord email figma figmaPlugin front github "
             "githubCodeAccessPersonal githubCommit githubEnterpriseServer githubImport "
             "githubPersonal gitlab gong googleCalendarPersonal googleSheets intercom jira "
             "jiraPersonal launchDarkly launchDarklyPersonal loom mcpServer mcpServerPersonal "
             "microsoftPersonal microsoftTeams microsoftTeamsProjectPost notion opsgenie origin "
             "pagerDuty salesforce sentry slack slackAsks slackCustomViewNotifications "
             "slackInitiativePost slackOrgInitiativeUpdatesPost slackOrgProjectUpdatesPost "
             "slackPersonal slackPost slackProjectPost slackProjectUpdatesPost zendesk"),
        ENUM("IssueSharedAccessDisallowedField", "cycleId projectId projectMilestoneId teamId"),
        ENUM("LabelGroupType", "multiSelect singleSelect"),
        ENUM("ProjectStatusType", "backlog canceled completed paused planned started"),
        ENUM("ProjectUpdateHealthType", "atRisk offTrack onTrack"),
        ENUM("ProjectUpdateReminderFrequency", "month never twoWeeks week"),
        ENUM("ReleaseChannel", "beta development internal preRelease privateBeta public"),
        ENUM("SLADayCountType", "all onlyBusinessDays"),
        ENUM("TeamVisibility", "private public restricted"),
        SCALAR("DateTime"),
        {"ExternalEntityInfoMetadata", GQL_UNION,
         "ExternalEntityInfoGithubMetadata ExternalEntityInfoJiraMetadata "
         "ExternalEntitySlackMetadata",
         NULL, 0},
        SCALAR("JSONObject"),
        SCALAR("TimelessDate"),
        INPUT("StringComparator", in_StringComparator),
        INPUT("NullableStringComparator", in_NullableStringComparator),
        INPUT("IDComparator", in_IDComparator),
        INPUT("NumberComparator", in_NumberComparator),
        INPUT("NullableNumberComparator", in_NullableNumberComparator),
        INPUT("DateComparator", in_DateComparator),
        INPUT("NullableDateComparator", in_NullableDateComparator),
        INPUT("NullableTimelessDateComparator", in_NullableTimelessDateComparator),
        INPUT("BooleanComparator", in_BooleanComparator),
        INPUT("TeamFilter", in_TeamFilter),
        INPUT("NullableTeamFilter", in_NullableTeamFilter),
        INPUT("UserFilter", in_UserFilter),
        INPUT("NullableUserFilter", in_NullableUserFilter),
        INPUT("WorkflowStateFilter", in_WorkflowStateFilter),
        INPUT("IssueLabelFilter", in_IssueLabelFilter),
        INPUT("IssueLabelCollectionFilter", in_IssueLabelCollectionFilter),
        INPUT("ProjectFilter", in_ProjectFilter),
        INPUT("NullableProjectFilter", in_NullableProjectFilter),
        INPUT("CycleFilter", in_CycleFilter),
        INPUT("NullableCycleFilter", in_NullableCycleFilter),
        INPUT("NullableIssueFilter", in_NullableIssueFilter),
        INPUT("IssueFilter", in_IssueFilter),
        INPUT("CommentFilter", in_CommentFilter),
        INPUT("NullableCommentFilter", in_NullableCommentFilter),
        INPUT("ContentComparator", in_ContentComparator),
        INPUT("AttachmentFilter", in_AttachmentFilter),
        INPUT("AttachmentCreateInput", in_AttachmentCreateInput),
        INPUT("IssueRelationCreateInput", in_IssueRelationCreateInput),
        INPUT("IssueCreateInput", in_IssueCreateInput),
        INPUT("IssueUpdateInput", in_IssueUpdateInput),
        INPUT("CommentCreateInput", in_CommentCreateInput),
        INPUT("CommentUpdateInput", in_CommentUpdateInput),
        INPUT("IssueLabelCreateInput", in_IssueLabelCreateInput),
        INPUT("IssueLabelUpdateInput", in_IssueLabelUpdateInput),
        INPUT("ProjectCreateInput", in_ProjectCreateInput),
        {"EstimateComparator", GQL_INPUT_OBJECT, NULL, in_NullableNumberComparator,
         ELEMENTSOF(in_NullableNumberComparator)},
        /* Linear's sort inputs: no ordering of theirs is evaluated, so none is accepted */
        EMPTY_INPUT("IssueSortInput"),
        EMPTY_INPUT("ProjectSortInput"),
        EMPTY_INPUT("UserSortInput"),
        ENUM("PaginationOrderBy", "createdAt updatedAt"),
        SCALAR("DateTimeOrDuration"),
        SCALAR("TimelessDateOrDuration"),
};

const GqlSchema ln_schema = {
        .types = types,
        .n_types = ELEMENTSOF(types),
        .query = "Query",
        .mutation = "Mutation",
        /* Linear refuses a query of more than 10 000 complexity points (developers.linear.app,
         * "Rate limiting": a point per object and a tenth per field); one point a field here,
         * which no query of @linear/sdk's own comes near */
        .max_nodes = 10000,
};
