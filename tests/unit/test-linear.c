/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin at the engine: hosted Pome's Linear seeds load unmodified into the agreed
 * world (and bad ones are refused naming what is wrong); GraphQL as @linear/sdk sends it —
 * fragments, variables, IssueFilter, pagination — and each mutation, with its tape tool the
 * same as the MCP tool's that makes the change; the MCP tools; Linear's error shape for
 * validation, not-found and bad input; hostile bodies answered in Linear's envelope with the
 * world unchanged.
 */
#include "common/json-util.h"
#include "pods/twin/kind.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

static void twin_freep(Twin **t)
{
        twin_free(*t);
}

/* POST /graphql {query, variables} (variables: JSON text or NULL). */
static void gql(Twin *t, TwinReply *rp, const char *query, const char *variables)
{
        _cleanup_json_ json_t *vars = variables ? json_loads(variables, 0, NULL) : NULL;
        CHECK(!variables || vars);
        _cleanup_json_ json_t *req = json_pack("{s:s, s:O?}", "query", query, "variables", vars);
        _cleanup_free_ char *body = json_dumps(req, JSON_COMPACT);
        twin_test_req(t, rp, "POST", "/graphql", NULL, "application/json", body);
}

static json_t *row(Twin *t, const char *list, const char *id)
{
        size_t i;
        json_t *r;
        json_array_foreach (json_object_get(twin_world(t), list), i, r) {
                if (streq_ptr(json_get_str(r, "id"), id))
                        return r;
        }
        return NULL;
}

static Twin *twin_text(const char *text, char *err, size_t errlen, int *ret)
{
        json_error_t e;
        _cleanup_json_ json_t *seed = json_loads(text, 0, &e);
        Twin *t = NULL;
        CHECK(seed);
        *ret = twin_new(&twin_kind_linear, seed, &t, err, errlen);
        return t;
}

static void test_seeds(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        json_t *w = twin_world(t);
        static const char *const keys[] = {"organization", "viewer",   "users",       "teams",
                                           "states",       "labels",   "projects",    "cycles",
                                           "issues",       "comments", "attachments", "relations",
                                           "next"};
        CHECK(json_object_size(w) == ELEMENTSOF(keys));
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                CHECK(json_object_get(w, keys[i]));
        CHECK(streq(jps(w, "/viewer"), "user_admin"));
        CHECK(streq(jps(w, "/organization/urlKey"), "pome-twin"));
        CHECK(json_array_size(jp(w, "/users")) == 3 && json_array_size(jp(w, "/states")) == 5);
        json_t *is = row(t, "issues", "issue_backlog");
        CHECK(streq(jps(is, "/identifier"), "ENG-1") && jpi(is, "/number") == 1);
        CHECK(streq(jps(is, "/stateId"), "state_backlog") && streq(jps(is, "/teamId"), "team_eng"));
        CHECK(streq(jps(is, "/assigneeId"), "user_dev") &&
              streq(jps(is, "/creatorId"), "user_admin"));
        CHECK(streq(jps(is, "/labelIds/0"), "label_agent") &&
              streq(jps(is, "/projectId"), "project_local"));
        CHECK(streq(jps(is, "/cycleId"), "cycle_1") && json_is_null(jp(is, "/parentId")));
        CHECK(json_is_null(jp(is, "/estimate")) && json_is_null(jp(is, "/archivedAt")));
        CHECK(json_is_null(jp(is, "/startedAt")));
        json_t *done = row(t, "issues", "issue_done");
        CHECK(streq(jps(done, "/identifier"), "ENG-4"));
        CHECK(streq(jps(done, "/completedAt"), "2026-07-20T18:00:00.000Z"));
        CHECK(streq(jps(row(t, "issues", "issue_progress"), "/startedAt"),
                    "2026-07-21T00:00:00.000Z"));
        json_t *cm = row(t, "comments", "comment_1");
        CHECK(streq(jps(cm, "/issueId"), "issue_todo") && streq(jps(cm, "/userId"), "user_admin"));
        CHECK(json_is_null(jp(cm, "/parentId")));
        CHECK(json_is_null(jp(row(t, "labels", "label_bug"), "/teamId")) == false);
        CHECK(streq(jps(row(t, "projects", "project_local"), "/teamIds/0"), "team_eng"));

        /* /_pome/state: the world without its bookkeeping */
        TwinReply rp = {};
        twin_test_req(t, &rp, "GET", "/_pome/state", NULL, NULL, NULL);
        CHECK(rp.status == 200 && !json_object_get(rp.body, "next"));
        CHECK(json_array_size(jp(rp.body, "/issues")) == 4);
        twin_reply_done(&rp);

        /* every hosted task seed loads as it is */
        static const char *const tasks[] = {"issue-triage", "comment-label-triage", "handoff"};
        for (size_t i = 0; i < ELEMENTSOF(tasks); i++) {
                _cleanup_(twin_freep) Twin *tt = twin_test_new("linear", tasks[i]);
                CHECK(json_array_size(jp(twin_world(tt), "/teams")) == 1);
        }

        /* {} is a seed: an empty workspace */
        char err[256];
        int r;
        _cleanup_(twin_freep) Twin *empty = twin_text("{}", err, sizeof(err), &r);
        CHECK(r == 0 && json_is_null(jp(twin_world(empty), "/viewer")));

        /* refusals name what is wrong */
        struct {
                const char *seed, *says;
        } bad[] = {
                {"{\"definitely\": \"not-a-seed\"}", "unknown key \"definitely\""},
                {"{\"users\": [{\"email\": \"a@b.c\", \"nick\": 1}]}", "users[0].nick"},
                {"{\"teams\": [{\"key\": \"eng\", \"name\": \"E\"}]}", "teams[0].key"},
                {"{\"issues\": [{\"team\": \"NOPE\", \"title\": \"x\"}]}", "issues[0].team"},
                {"{\"users\": [{\"email\": \"a@b.c\"}], \"teams\": [{\"key\": \"ENG\", "
                 "\"name\": \"E\"}], \"issues\": [{\"team\": "
                 "\"ENG\", \"title\": \"x\", \"labels\": [\"Ghost\"]}]}",
                 "Issue label not found"},
                {"{\"users\": [{\"email\": \"a@b.c\"}], \"teams\": [{\"key\": \"ENG\", "
                 "\"name\": \"E\"}], \"issues\": [{\"team\": "
                 "\"ENG\", \"title\": \"x\", \"priority\": 7}]}",
                 "priority"},
                {"{\"documents\": [{\"title\": \"d\"}]}", "documents"},
                {"{\"clock\": \"yesterday\"}", "clock"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(twin_freep) Twin *b = twin_text(bad[i].seed, err, sizeof(err), &r);
                CHECK(r == -EINVAL && strstr(err, bad[i].says));
                if (!strstr(err, bad[i].says))
                        fprintf(stderr, "seed %zu: %s\n", i, err);
        }
}

static const char *const issue_fragment =
        "fragment IssueParts on Issue { id identifier title priority priorityLabel url "
        "branchName state { id name type } team { key } assignee { email } "
        "labels { nodes { name } } }";

static void test_queries(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        gql(t, &rp, "{ viewer { id name email isMe } organization { name urlKey } }", NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/data/viewer/id"), "user_admin"));
        CHECK(json_is_true(jp(rp.body, "/data/viewer/isMe")));
        CHECK(streq(jps(rp.body, "/data/organization/urlKey"), "pome-twin"));
        CHECK(streq(rp.tool, "graphql") && !rp.state_mutation);

        /* the SDK's shape: a named operation, variables, fragments, IssueFilter */
        char q[1024];
        snprintf(q, sizeof(q),
                 "query issues($filter: IssueFilter, $first: Int) { issues(filter: $filter, "
                 "first: $first) { nodes { ...IssueParts } pageInfo { hasNextPage endCursor } } "
                 "} %s",
                 issue_fragment);
        gql(t, &rp, q,
            "{\"filter\": {\"team\": {\"key\": {\"eq\": \"ENG\"}}, \"state\": {\"name\": "
            "{\"eq\": \"Backlog\"}}}}");
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data/issues/nodes")) == 1);
        CHECK(streq(jps(rp.body, "/data/issues/nodes/0/identifier"), "ENG-1"));
        CHECK(streq(jps(rp.body, "/data/issues/nodes/0/priorityLabel"), "High"));
        CHECK(streq(jps(rp.body, "/data/issues/nodes/0/url"),
                    "https://linear.app/pome-twin/issue/ENG-1"));
        CHECK(streq(jps(rp.body, "/data/issues/nodes/0/labels/nodes/0/name"), "Agent"));
        CHECK(streq(jps(rp.body, "/data/issues/nodes/0/assignee/email"), "dev@pome-twin.test"));

        struct {
                const char *filter;
                size_t n;
        } filters[] = {
                {"{\"labels\": {\"name\": {\"eq\": \"Feature\"}}}", 2},
                {"{\"labels\": {\"some\": {\"name\": {\"eq\": \"Agent\"}}}}", 2},
                {"{\"assignee\": {\"email\": {\"eq\": \"admin@pome-twin.test\"}}}", 1},
                {"{\"assignee\": {\"isMe\": {\"eq\": true}}}", 1},
                {"{\"assignee\": {\"null\": true}}", 0},
                {"{\"title\": {\"containsIgnoreCase\": \"MCP\"}}", 1},
                {"{\"priority\": {\"lte\": 2}}", 3},
                {"{\"state\": {\"type\": {\"in\": [\"started\", \"completed\"]}}}", 2},
                {"{\"or\": [{\"priority\": {\"eq\": 1}}, {\"priority\": {\"eq\": 3}}]}", 2},
                {"{\"and\": [{\"priority\": {\"eq\": 2}}, {\"labels\": {\"name\": {\"eq\": "
                 "\"Feature\"}}}]}",
                 1},
                {"{\"cycle\": {\"null\": true}}", 1},
                {"{\"createdAt\": {\"gt\": \"2026-07-20T11:00:00.000Z\"}}", 2},
        };
        for (size_t i = 0; i < ELEMENTSOF(filters); i++) {
                char vars[512];
                snprintf(vars, sizeof(vars), "{\"filter\": %s}", filters[i].filter);
                gql(t, &rp,
                    "query q($filter: IssueFilter) { issues(filter: $filter) { nodes { id } } }",
                    vars);
                CHECK(rp.status == 200 &&
                      json_array_size(jp(rp.body, "/data/issues/nodes")) == filters[i].n);
                if (json_array_size(jp(rp.body, "/data/issues/nodes")) != filters[i].n)
                        fprintf(stderr, "filter %zu gave %zu\n", i,
                                json_array_size(jp(rp.body, "/data/issues/nodes")));
        }

        /* pagination: cursors are ids; first/after walks the list, last/before back */
        gql(t, &rp,
            "{ issues(first: 3) { nodes { id } edges { cursor node { id } } pageInfo { "
            "hasNextPage hasPreviousPage startCursor endCursor } } }",
            NULL);
        CHECK(json_array_size(jp(rp.body, "/data/issues/nodes")) == 3);
        CHECK(json_is_true(jp(rp.body, "/data/issues/pageInfo/hasNextPage")));
        CHECK(streq(jps(rp.body, "/data/issues/edges/2/cursor"),
                    jps(rp.body, "/data/issues/pageInfo/endCursor")));
        char vars[256];
        snprintf(vars, sizeof(vars), "{\"after\": \"%s\"}",
                 jps(rp.body, "/data/issues/pageInfo/endCursor"));
        gql(t, &rp,
            "query q($after: String) { issues(first: 3, after: $after) { nodes { id } pageInfo { "
            "hasNextPage hasPreviousPage } } }",
            vars);
        CHECK(json_array_size(jp(rp.body, "/data/issues/nodes")) == 1);
        CHECK(json_is_false(jp(rp.body, "/data/issues/pageInfo/hasNextPage")));
        CHECK(json_is_true(jp(rp.body, "/data/issues/pageInfo/hasPreviousPage")));
        gql(t, &rp, "{ issues(first: 1, last: 1) { nodes { id } } }", NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/errors/0/extensions/code"), "BAD_USER_INPUT"));
        gql(t, &rp, "{ issues(first: 100000) { nodes { id } } }", NULL);
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data/issues/nodes")) == 4);
        gql(t, &rp, "{ issues(after: \"nope\") { nodes { id } } }", NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/errors/0/extensions/code"), "BAD_USER_INPUT"));

        /* nested: a team's states, an issue's comments, by identifier */
        gql(t, &rp,
            "{ team(id: \"ENG\") { key states { nodes { name } } labels { nodes { name } } } "
            "issue(id: \"ENG-2\") { title comments { nodes { body user { email } } } "
            "project { name } cycle { number } creator { name } } }",
            NULL);
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data/team/states/nodes")) == 5);
        CHECK(json_array_size(jp(rp.body, "/data/team/labels/nodes")) == 3);
        CHECK(streq(jps(rp.body, "/data/issue/comments/nodes/0/body"),
                    "Starting with viewer + issues queries."));
        CHECK(streq(jps(rp.body, "/data/issue/project/name"), "Local Twin"));
        CHECK(jpi(rp.body, "/data/issue/cycle/number") == 1);
        gql(t, &rp,
            "{ workflowStates(filter: {type: {eq: \"completed\"}}) { nodes { name } } "
            "users { nodes { email } } projects { nodes { name status { type } } } "
            "cycles { nodes { name team { key } } } issueLabels { nodes { name } } }",
            NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/data/workflowStates/nodes/0/name"), "Done"));
        CHECK(json_array_size(jp(rp.body, "/data/users/nodes")) == 3);
        CHECK(streq(jps(rp.body, "/data/projects/nodes/0/status/type"), "started"));
        CHECK(streq(jps(rp.body, "/data/cycles/nodes/0/team/key"), "ENG"));
        twin_reply_done(&rp);
}

static void test_errors(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        gql(t, &rp, "{ viewer { id shoeSize } }", NULL);
        CHECK(rp.status == 400 && !json_object_get(rp.body, "data"));
        CHECK(streq(jps(rp.body, "/errors/0/message"),
                    "Cannot query field \"shoeSize\" on type \"User\"."));
        CHECK(streq(jps(rp.body, "/errors/0/extensions/code"), "GRAPHQL_VALIDATION_FAILED"));
        CHECK(jpi(rp.body, "/errors/0/extensions/http/status") == 400);
        gql(t, &rp, "{ issue(id: \"ENG-99\") { id } }", NULL);
        CHECK(rp.status == 400 && json_array_size(jp(rp.body, "/errors")) == 1);
        CHECK(streq(jps(rp.body, "/errors/0/extensions/code"), "NOT_FOUND"));
        CHECK(streq(jps(rp.body, "/errors/0/message"), "Entity not found: Issue"));
        CHECK(streq(jps(rp.body, "/errors/0/extensions/userPresentableMessage"),
                    "Could not find referenced Issue."));
        gql(t, &rp, "{ issues(filter: {shoe: {eq: 1}}) { nodes { id } } }", NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/errors/0/extensions/code"), "GRAPHQL_VALIDATION_FAILED"));
        gql(t, &rp, "{ viewer { id }", NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/errors/0/extensions/code"), "GRAPHQL_PARSE_FAILED"));
        /* past Linear's complexity limit: 6 000 aliases of viewer { id } select 12 000 fields
         * (refused by validation, nothing run); 12 000 aliases are 24 000 selections as
         * written (refused by the parser, whose tree they would swell past a pod's memory) */
        for (int n = 6000; n <= 12000; n += 6000) {
                size_t cap = (size_t)n * 32 + 8, len = 0;
                _cleanup_free_ char *q = malloc(cap);
                CHECK(q);
                if (!q)
                        break;
                len += (size_t)snprintf(q + len, cap - len, "{");
                for (int i = 0; i < n; i++)
                        len += (size_t)snprintf(q + len, cap - len, " a%d: viewer { id }", i);
                snprintf(q + len, cap - len, " }");
                gql(t, &rp, q, NULL);
                CHECK(rp.status == 400 && !json_object_get(rp.body, "data"));
                CHECK(streq_ptr(jps(rp.body, "/errors/0/extensions/code"),
                                n == 6000 ? "GRAPHQL_VALIDATION_FAILED" : "GRAPHQL_PARSE_FAILED"));
                CHECK(strstr(strempty(jps(rp.body, "/errors/0/message")),
                             n == 6000 ? "more than 10000 fields" : "more than 20000 selections"));
        }
        /* "locations" is a list or absent (GraphQL spec §7.1.2), never null; Linear's user
         * errors say userError */
        static const char *const requests[] = {
                "{\"query\": 5}",
                "{\"query\": \"{ viewer { id } }\", \"variables\": \"{nope\"}",
                "{\"query\": \"{ viewer { id } }\", \"operationName\": 7}",
                "{\"query\": \"query a { viewer { id } }\", \"operationName\": \"b\"}",
                "{\"query\": \"{ viewer { id shoeSize } }\"}",
                "{\"query\": \"{ issue(id: \\\"ENG-99\\\") { id } }\"}",
                "{\"query\": \"mutation { issueUpdate(id: \\\"ENG-1\\\", input: {stateId: "
                "\\\"Todo\\\"}) { success } }\"}",
        };
        for (size_t i = 0; i < ELEMENTSOF(requests); i++) {
                twin_test_req(t, &rp, "POST", "/graphql", NULL, "application/json", requests[i]);
                json_t *e = jp(rp.body, "/errors/0");
                CHECK(rp.status == 400 && json_is_object(e));
                json_t *loc = json_object_get(e, "locations");
                CHECK(!loc || json_is_array(loc));
                CHECK(json_is_true(jp(e, "/extensions/userError")));
                if (loc && !json_is_array(loc))
                        fprintf(stderr, "request %zu: locations %s\n", i,
                                json_is_null(loc) ? "null" : "?");
        }
        /* a route the twin does not serve: the loud 501 */
        twin_test_req(t, &rp, "GET", "/definitely/not", NULL, NULL, NULL);
        CHECK(rp.status == 501 && streq(jps(rp.body, "/fidelity"), "unsupported"));
        CHECK(streq(jps(rp.body, "/errors/0/extensions/code"), "UNIMPLEMENTED"));
        twin_reply_done(&rp);
}

static void test_mutations(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        /* issueUpdate to In Progress: save_issue on the tape, startedAt stamped */
        gql(t, &rp,
            "mutation u($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, "
            "input: $input) { success lastSyncId issue { id state { name } startedAt } } }",
            "{\"id\": \"issue_backlog\", \"input\": {\"stateId\": \"state_progress\", "
            "\"priority\": 1, \"assigneeId\": null}}");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/data/issueUpdate/success")));
        CHECK(streq(jps(rp.body, "/data/issueUpdate/issue/state/name"), "In Progress"));
        CHECK(streq(rp.tool, "save_issue") && rp.state_mutation);
        json_t *is = row(t, "issues", "issue_backlog");
        CHECK(streq(jps(is, "/stateId"), "state_progress") && jpi(is, "/priority") == 1);
        CHECK(json_is_null(jp(is, "/assigneeId")));
        CHECK(streq(jps(is, "/startedAt"), "2026-05-28T20:26:40.000Z"));
        CHECK(streq(jps(rp.state_delta, "/before/stateId"), "state_backlog"));

        /* issueCreate: the next number of its team, in Todo, by the viewer */
        gql(t, &rp,
            "mutation { issueCreate(input: {teamId: \"team_eng\", title: \"New one\", "
            "labelIds: [\"label_bug\"], description: \"d\"}) { success issue { id identifier "
            "state { name } creator { id } labels { nodes { name } } } } }",
            NULL);
        CHECK(rp.status == 200 &&
              streq(jps(rp.body, "/data/issueCreate/issue/identifier"), "ENG-5"));
        CHECK(streq(jps(rp.body, "/data/issueCreate/issue/state/name"), "Todo"));
        CHECK(streq(jps(rp.body, "/data/issueCreate/issue/creator/id"), "user_admin"));
        CHECK(streq(rp.tool, "save_issue") && json_is_null(jp(rp.state_delta, "/before")));
        char *nid = strdup(jps(rp.body, "/data/issueCreate/issue/id"));

        /* commentCreate, a reply in its thread, commentUpdate, commentDelete */
        char q[512];
        snprintf(q, sizeof(q),
                 "mutation { commentCreate(input: {issueId: \"%s\", body: \"Triaging now\"}) { "
                 "success comment { id body user { id } issue { identifier } } } }",
                 nid);
        gql(t, &rp, q, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "save_comment"));
        CHECK(streq(jps(rp.body, "/data/commentCreate/comment/issue/identifier"), "ENG-5"));
        char *cid = strdup(jps(rp.body, "/data/commentCreate/comment/id"));
        CHECK(!row(t, "comments", "comment_1") || !streq(cid, "comment_1"));
        snprintf(q, sizeof(q),
                 "mutation { commentCreate(input: {parentId: \"%s\", body: \"reply\"}) { "
                 "comment { id parent { id } } } }",
                 cid);
        gql(t, &rp, q, NULL);
        CHECK(streq(jps(rp.body, "/data/commentCreate/comment/parent/id"), cid));
        char *rid = strdup(jps(rp.body, "/data/commentCreate/comment/id"));
        snprintf(q, sizeof(q),
                 "mutation { commentUpdate(id: \"%s\", input: {body: \"edited\"}) { comment { "
                 "body } } }",
                 cid);
        gql(t, &rp, q, NULL);
        CHECK(streq(jps(rp.body, "/data/commentUpdate/comment/body"), "edited"));
        CHECK(streq(rp.tool, "save_comment"));
        snprintf(q, sizeof(q), "mutation { commentDelete(id: \"%s\") { success entityId } }", cid);
        gql(t, &rp, q, NULL);
        CHECK(streq(jps(rp.body, "/data/commentDelete/entityId"), cid));
        CHECK(streq(rp.tool, "delete_comment") && !row(t, "comments", cid) &&
              !row(t, "comments", rid));

        /* labels: create, update, add to and remove from an issue */
        gql(t, &rp,
            "mutation { issueLabelCreate(input: {name: \"Needs triage\", teamId: \"team_eng\", "
            "color: \"#ff0000\"}) { success issueLabel { id name color team { key } } } }",
            NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "create_issue_label"));
        CHECK(streq(jps(rp.body, "/data/issueLabelCreate/issueLabel/team/key"), "ENG"));
        char *lid = strdup(jps(rp.body, "/data/issueLabelCreate/issueLabel/id"));
        gql(t, &rp,
            "mutation { issueLabelCreate(input: {name: \"needs TRIAGE\", teamId: \"team_eng\"}) "
            "{ success } }",
            NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/errors/0/extensions/code"), "BAD_USER_INPUT"));
        snprintf(q, sizeof(q),
                 "mutation { issueLabelUpdate(id: \"%s\", input: {color: \"#00ff00\"}) { "
                 "issueLabel { color } } }",
                 lid);
        gql(t, &rp, q, NULL);
        CHECK(streq(jps(rp.body, "/data/issueLabelUpdate/issueLabel/color"), "#00ff00"));
        CHECK(streq(rp.tool, "update_issue_label"));
        snprintf(q, sizeof(q),
                 "mutation { issueAddLabel(id: \"ENG-1\", labelId: \"%s\") { issue { labels { "
                 "nodes { name } } } } }",
                 lid);
        gql(t, &rp, q, NULL);
        CHECK(json_array_size(jp(rp.body, "/data/issueAddLabel/issue/labels/nodes")) == 2);
        CHECK(streq(rp.tool, "save_issue"));
        gql(t, &rp,
            "mutation { issueRemoveLabel(id: \"ENG-1\", labelId: \"label_agent\") { issue { "
            "labels { nodes { name } } } } }",
            NULL);
        CHECK(streq(jps(rp.body, "/data/issueRemoveLabel/issue/labels/nodes/0/name"),
                    "Needs triage"));

        /* archive and delete */
        gql(t, &rp, "mutation { issueArchive(id: \"ENG-2\") { success entity { archivedAt } } }",
            NULL);
        CHECK(streq(rp.tool, "archive_issue") &&
              json_is_string(jp(rp.body, "/data/issueArchive/entity/archivedAt")));
        gql(t, &rp, "{ issues { nodes { id } } }", NULL);
        CHECK(json_array_size(jp(rp.body, "/data/issues/nodes")) == 4);
        gql(t, &rp, "{ issues(includeArchived: true) { nodes { id } } }", NULL);
        CHECK(json_array_size(jp(rp.body, "/data/issues/nodes")) == 5);
        gql(t, &rp, "mutation { issueDelete(id: \"ENG-3\") { success } }", NULL);
        CHECK(streq(rp.tool, "delete_issue") && !row(t, "issues", "issue_progress"));
        CHECK(!row(t, "comments", "comment_2"));

        /* projectCreate runs save_project */
        gql(t, &rp,
            "mutation { projectCreate(input: {name: \"Handoff\", teamIds: [\"team_eng\"]}) { "
            "success project { name state teams { nodes { key } } } } }",
            NULL);
        CHECK(streq(rp.tool, "save_project") &&
              streq(jps(rp.body, "/data/projectCreate/project/teams/nodes/0/key"), "ENG"));

        /* two mutations in one request: two rows, the earlier one ahead of the call's */
        gql(t, &rp,
            "mutation { a: issueUpdate(id: \"ENG-1\", input: {priority: 4}) { success } "
            "b: commentCreate(input: {issueId: \"ENG-1\", body: \"x\"}) { success } }",
            NULL);
        CHECK(streq(rp.tool, "save_comment") && json_array_size(rp.events) == 1);
        CHECK(streq(jps(rp.events, "/0/tool"), "save_issue"));

        /* a refused mutation changes nothing */
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        gql(t, &rp,
            "mutation { issueUpdate(id: \"ENG-1\", input: {stateId: \"state_nope\"}) { success "
            "} }",
            NULL);
        CHECK(rp.status == 400 && streq(jps(rp.body, "/errors/0/extensions/code"), "NOT_FOUND"));
        CHECK(json_equal(before, twin_world(t)) && !rp.state_mutation);
        free(nid);
        free(cid);
        free(rid);
        free(lid);
        twin_reply_done(&rp);
}

static void test_mcp(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        twin_test_mcp(t, &rp, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        json_t *tools = jp(rp.body, "/result/tools");
        CHECK(json_array_size(tools) == 18);
        size_t i;
        json_t *tool;
        bool save_issue = false, graphql = false;
        json_array_foreach (tools, i, tool) {
                save_issue |= streq_ptr(json_get_str(tool, "name"), "save_issue");
                graphql |= streq_ptr(json_get_str(tool, "name"), "graphql");
        }
        CHECK(save_issue && !graphql);

        twin_test_call(t, &rp, "list_issues", "{\"team\": \"ENG\", \"state\": \"backlog\"}");
        CHECK(rp.status == 200 && !json_is_true(jp(rp.body, "/result/isError")));
        _cleanup_json_ json_t *out = json_loads(jps(rp.body, "/result/content/0/text"), 0, NULL);
        CHECK(json_array_size(jp(out, "/issues")) == 1);
        CHECK(streq(jps(out, "/issues/0/identifier"), "ENG-1"));
        CHECK(streq(jps(out, "/issues/0/status"), "Backlog"));

        twin_test_call(t, &rp, "get_issue", "{\"id\": \"eng-1\"}");
        out = (json_decref(out), json_loads(jps(rp.body, "/result/content/0/text"), 0, NULL));
        CHECK(streq(jps(out, "/labelIds/0"), "label_agent") &&
              streq(jps(out, "/labels/0"), "Agent"));
        CHECK(streq(jps(out, "/gitBranchName"), "eng-1-triage-inbox-for-agent-eval"));
        CHECK(streq(jps(out, "/assignee"), "Developer") && streq(jps(out, "/team"), "Engineering"));

        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"state\": \"In Progress\", \"labels\": [\"Bug\", "
                       "\"Agent\"], \"assignee\": \"me\"}");
        CHECK(streq(rp.tool, "save_issue") && rp.state_mutation);
        json_t *is = row(t, "issues", "issue_backlog");
        CHECK(streq(jps(is, "/stateId"), "state_progress") &&
              json_array_size(jp(is, "/labelIds")) == 2);
        CHECK(streq(jps(is, "/assigneeId"), "user_admin"));

        twin_test_call(t, &rp, "save_issue", "{\"title\": \"By MCP\", \"team\": \"ENG\"}");
        CHECK(streq(rp.tool, "save_issue") && rp.state_mutation);
        twin_test_call(t, &rp, "save_comment", "{\"issueId\": \"ENG-1\", \"body\": \"hi\"}");
        CHECK(streq(rp.tool, "save_comment") && rp.state_mutation);
        twin_test_call(t, &rp, "create_issue_label",
                       "{\"name\": \"Triaged\", \"teamId\": \"ENG\"}");
        CHECK(streq(rp.tool, "create_issue_label") && rp.state_mutation);
        twin_test_call(t, &rp, "list_issue_statuses", "{\"team\": \"Engineering\"}");
        out = (json_decref(out), json_loads(jps(rp.body, "/result/content/0/text"), 0, NULL));
        CHECK(json_array_size(jp(out, "/statuses")) == 5);
        twin_test_call(t, &rp, "get_user", "{\"query\": \"me\"}");
        out = (json_decref(out), json_loads(jps(rp.body, "/result/content/0/text"), 0, NULL));
        CHECK(streq(jps(out, "/email"), "admin@pome-twin.test"));
        twin_test_call(t, &rp, "list_cycles", "{\"teamId\": \"ENG\"}");
        out = (json_decref(out), json_loads(jps(rp.body, "/result/content/0/text"), 0, NULL));
        CHECK(json_array_size(jp(out, "/cycles")) == 1);

        /* patch: edits in order, all or none */
        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"patch\": [{\"op\": \"replace\", "
                       "\"old_string\": \"waiting\", \"new_string\": \"ready\"}, {\"op\": "
                       "\"append\", \"text\": \" Done.\"}, {\"op\": \"insert_before\", "
                       "\"anchor\": \"Backlog\", \"text\": \"A \"}]}");
        CHECK(streq(jps(row(t, "issues", "issue_backlog"), "/description"),
                    "A Backlog item ready for triage. Done."));
        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"patch\": [{\"op\": \"append\", \"text\": "
                       "\"!\"}, {\"op\": \"replace\", \"old_string\": \"absent\", "
                       "\"new_string\": \"x\"}]}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        CHECK(streq(jps(row(t, "issues", "issue_backlog"), "/description"),
                    "A Backlog item ready for triage. Done."));

        /* what the world does not model is refused by name, never ignored */
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        twin_test_call(t, &rp, "save_issue", "{\"id\": \"ENG-1\", \"milestone\": \"M1\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        CHECK(strstr(strempty(jps(rp.body, "/result/content/0/text")), "milestone"));
        twin_test_call(t, &rp, "save_issue", "{\"id\": \"ENG-77\", \"title\": \"x\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        CHECK(json_equal(before, twin_world(t)));
        twin_reply_done(&rp);
}

/* save_issue's links and relations (its inputSchema's links, relatedTo, blocks, blockedBy,
 * duplicateOf and remove*): attachments and relations of the world, served by get_issue and by
 * GraphQL (Issue.attachments, relations, inverseRelations; attachmentLinkURL,
 * issueRelationCreate); a bad one refuses the whole call and changes nothing. */
static void test_links_relations(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        _cleanup_json_ json_t *out = NULL;
        /* task 26's handoff: a link to the GitHub issue */
        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"links\": [{\"url\": "
                       "\"https://github.com/acme/api/issues/1\", \"title\": \"acme/api#1\"}]}");
        CHECK(rp.status == 200 && !json_is_true(jp(rp.body, "/result/isError")));
        CHECK(streq_ptr(rp.tool, "save_issue") && rp.state_mutation);
        json_t *atts = json_object_get(twin_world(t), "attachments");
        CHECK(json_array_size(atts) == 1);
        CHECK(streq_ptr(jps(atts, "/0/issueId"), "issue_backlog") &&
              streq_ptr(jps(atts, "/0/url"), "https://github.com/acme/api/issues/1") &&
              streq_ptr(jps(atts, "/0/title"), "acme/api#1") && jps(atts, "/0/id") &&
              jps(atts, "/0/createdAt"));
        /* the same link again changes nothing */
        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"links\": [{\"url\": "
                       "\"https://github.com/acme/api/issues/1\", \"title\": \"acme/api#1\"}]}");
        CHECK(!json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        CHECK(json_array_size(json_object_get(twin_world(t), "attachments")) == 1);

        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"relatedTo\": [\"ENG-2\"], \"blocks\": "
                       "[\"issue_progress\"], \"blockedBy\": [\"ENG-4\"], \"duplicateOf\": "
                       "\"ENG-2\"}");
        CHECK(!json_is_true(jp(rp.body, "/result/isError")) && rp.state_mutation);
        json_t *rels = json_object_get(twin_world(t), "relations");
        CHECK(json_array_size(rels) == 4);
        size_t i;
        json_t *r;
        int seen = 0;
        json_array_foreach (rels, i, r) {
                const char *type = json_get_str(r, "type"), *a = json_get_str(r, "issueId"),
                           *b = json_get_str(r, "relatedIssueId");
                seen |= (streq_ptr(type, "related") && streq_ptr(a, "issue_backlog") &&
                         streq_ptr(b, "issue_todo"))
                        << 0;
                seen |= (streq_ptr(type, "blocks") && streq_ptr(a, "issue_backlog") &&
                         streq_ptr(b, "issue_progress"))
                        << 1;
                seen |= (streq_ptr(type, "blocks") && streq_ptr(a, "issue_done") &&
                         streq_ptr(b, "issue_backlog"))
                        << 2;
                seen |= (streq_ptr(type, "duplicate") && streq_ptr(a, "issue_backlog") &&
                         streq_ptr(b, "issue_todo"))
                        << 3;
                CHECK(json_get_str(r, "id") && json_get_str(r, "createdAt"));
        }
        CHECK(seen == 15);

        /* get_issue: attachments always, relations when asked */
        twin_test_call(t, &rp, "get_issue", "{\"id\": \"ENG-1\", \"includeRelations\": true}");
        out = json_loads(strempty(jps(rp.body, "/result/content/0/text")), 0, NULL);
        CHECK(streq_ptr(jps(out, "/attachments/0/url"), "https://github.com/acme/api/issues/1"));
        CHECK(streq_ptr(jps(out, "/attachments/0/title"), "acme/api#1"));
        CHECK(streq_ptr(jps(out, "/relations/relatedTo/0"), "ENG-2"));
        CHECK(streq_ptr(jps(out, "/relations/blocks/0"), "ENG-3"));
        CHECK(streq_ptr(jps(out, "/relations/blockedBy/0"), "ENG-4"));
        CHECK(streq_ptr(jps(out, "/relations/duplicateOf"), "ENG-2"));

        /* GraphQL sees them as @linear/sdk asks */
        gql(t, &rp,
            "{ issue(id: \"ENG-1\") { attachments { nodes { id url title issue { identifier } "
            "metadata groupBySource } } relations { nodes { type relatedIssue { identifier } } } "
            "} i4: issue(id: \"ENG-4\") { inverseRelations { nodes { type issue { identifier } } "
            "} } }",
            NULL);
        CHECK(rp.status == 200);
        CHECK(streq_ptr(jps(rp.body, "/data/issue/attachments/nodes/0/url"),
                        "https://github.com/acme/api/issues/1"));
        CHECK(streq_ptr(jps(rp.body, "/data/issue/attachments/nodes/0/issue/identifier"), "ENG-1"));
        CHECK(json_array_size(jp(rp.body, "/data/issue/relations/nodes")) == 3);
        CHECK(streq_ptr(jps(rp.body, "/data/i4/inverseRelations/nodes/0/issue/identifier"),
                        "ENG-4") ||
              json_array_size(jp(rp.body, "/data/i4/inverseRelations/nodes")) == 0);
        gql(t, &rp,
            "mutation { attachmentLinkURL(issueId: \"issue_todo\", url: "
            "\"https://example.com/x\", title: \"X\") { success attachment { id url issue { "
            "identifier } } } r: issueRelationCreate(input: {issueId: \"issue_todo\", "
            "relatedIssueId: \"issue_done\", type: blocks}) { success issueRelation { type "
            "issue { identifier } relatedIssue { identifier } } } }",
            NULL);
        CHECK(rp.status == 200 && streq_ptr(rp.tool, "save_issue"));
        CHECK(streq_ptr(jps(rp.body, "/data/attachmentLinkURL/attachment/issue/identifier"),
                        "ENG-2"));
        CHECK(streq_ptr(jps(rp.body, "/data/r/issueRelation/relatedIssue/identifier"), "ENG-4"));
        CHECK(json_array_size(json_object_get(twin_world(t), "relations")) == 5);

        /* removal, and duplicateOf null */
        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"removeRelatedTo\": [\"ENG-2\"], "
                       "\"duplicateOf\": null}");
        CHECK(!json_is_true(jp(rp.body, "/result/isError")) && rp.state_mutation);
        CHECK(json_array_size(json_object_get(twin_world(t), "relations")) == 3);

        /* a bad link or an unknown issue refuses everything, byte for byte */
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        static const char *const bad[] = {
                "{\"id\": \"ENG-1\", \"title\": \"new\", \"links\": [{\"url\": \"not a "
                "url\", \"title\": \"x\"}]}",
                "{\"id\": \"ENG-1\", \"title\": \"new\", \"links\": [{\"url\": "
                "\"https://a.b/c\"}]}",
                "{\"id\": \"ENG-1\", \"title\": \"new\", \"blocks\": [\"ENG-99\"]}",
                "{\"id\": \"ENG-1\", \"relatedTo\": [\"ENG-1\"]}",
                "{\"id\": \"ENG-1\", \"links\": \"https://a.b/c\"}",
                "{\"title\": \"t\", \"team\": \"ENG\", \"duplicateOf\": \"ENG-99\"}",
        };
        for (i = 0; i < ELEMENTSOF(bad); i++) {
                twin_test_call(t, &rp, "save_issue", bad[i]);
                CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        }
        CHECK(json_equal(before, twin_world(t)));
        /* a new issue with its links */
        twin_test_call(t, &rp, "save_issue",
                       "{\"title\": \"Handoff\", \"team\": \"ENG\", \"links\": [{\"url\": "
                       "\"https://github.com/acme/api/issues/2\", \"title\": \"acme/api#2\"}], "
                       "\"blockedBy\": [\"ENG-1\"]}");
        CHECK(!json_is_true(jp(rp.body, "/result/isError")) && rp.state_mutation);
        CHECK(json_array_size(json_object_get(twin_world(t), "attachments")) == 3);
        twin_reply_done(&rp);
}

/* GraphQL's inputs take ids, as Linear's API does: a name where an id belongs is "Entity not
 * found" and changes nothing; an issue's identifier is taken where Linear takes one. The MCP
 * tools keep taking names. */
static void test_ids_only(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        static const struct {
                const char *query, *what;
        } names[] = {
                {"mutation { issueUpdate(id: \"ENG-1\", input: {stateId: \"In Progress\"}) { "
                 "success } }",
                 "WorkflowState"},
                {"mutation { issueUpdate(id: \"ENG-1\", input: {stateId: \"started\"}) { "
                 "success } }",
                 "WorkflowState"},
                {"mutation { issueUpdate(id: \"ENG-1\", input: {labelIds: [\"Agent\"]}) { "
                 "success } }",
                 "IssueLabel"},
                {"mutation { issueUpdate(id: \"ENG-1\", input: {addedLabelIds: [\"Bug\"]}) { "
                 "success } }",
                 "IssueLabel"},
                {"mutation { issueUpdate(id: \"ENG-1\", input: {assigneeId: \"me\"}) { "
                 "success } }",
                 "User"},
                {"mutation { issueUpdate(id: \"ENG-1\", input: {assigneeId: "
                 "\"dev@pome-twin.test\"}) { success } }",
                 "User"},
                {"mutation { issueUpdate(id: \"ENG-1\", input: {projectId: \"Local Twin\"}) { "
                 "success } }",
                 "Project"},
                {"mutation { issueUpdate(id: \"ENG-1\", input: {cycleId: \"1\"}) { success } }",
                 "Cycle"},
                {"mutation { issueCreate(input: {teamId: \"ENG\", title: \"x\"}) { success } }",
                 "Team"},
                {"mutation { issueCreate(input: {teamId: \"Engineering\", title: \"x\"}) { "
                 "success } }",
                 "Team"},
                {"mutation { issueCreate(input: {teamId: \"team_eng\", title: \"x\", stateId: "
                 "\"Todo\"}) { success } }",
                 "WorkflowState"},
                {"mutation { issueAddLabel(id: \"ENG-1\", labelId: \"Bug\") { success } }",
                 "IssueLabel"},
                {"mutation { issueLabelCreate(input: {name: \"N\", teamId: \"ENG\"}) { success "
                 "} }",
                 "Team"},
                {"mutation { projectCreate(input: {name: \"P\", teamIds: [\"ENG\"]}) { "
                 "success } }",
                 "Team"},
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                gql(t, &rp, names[i].query, NULL);
                CHECK(rp.status == 400 && !rp.state_mutation);
                CHECK(strstr(strempty(jps(rp.body, "/errors/0/message")), "Entity not found") &&
                      strstr(strempty(jps(rp.body, "/errors/0/message")), names[i].what));
                CHECK(json_is_string(jp(rp.body, "/errors/0/extensions/code")));
                if (rp.status != 400 ||
                    !strstr(strempty(jps(rp.body, "/errors/0/message")), names[i].what))
                        fprintf(stderr, "names %zu: %d %s\n", i, rp.status,
                                strempty(jps(rp.body, "/errors/0/message")));
        }
        CHECK(json_equal(before, twin_world(t)));
        /* ids, and the identifiers Linear takes (issue(id:), issueUpdate(id:), parentId) */
        gql(t, &rp,
            "mutation { issueUpdate(id: \"ENG-1\", input: {stateId: \"state_progress\", "
            "labelIds: [\"label_agent\", \"label_bug\"], parentId: \"ENG-2\"}) { success "
            "issue { state { name } parent { identifier } } } }",
            NULL);
        CHECK(rp.status == 200 &&
              streq_ptr(jps(rp.body, "/data/issueUpdate/issue/state/name"), "In Progress"));
        CHECK(streq_ptr(jps(rp.body, "/data/issueUpdate/issue/parent/identifier"), "ENG-2"));
        gql(t, &rp,
            "mutation { issueCreate(input: {teamId: \"team_eng\", title: \"x\"}) { success } }",
            NULL);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/data/issueCreate/success")));
        /* the MCP tools keep names */
        twin_test_call(t, &rp, "save_issue",
                       "{\"id\": \"ENG-1\", \"state\": \"Done\", \"labels\": [\"Bug\"]}");
        CHECK(!json_is_true(jp(rp.body, "/result/isError")) && rp.state_mutation);
        twin_reply_done(&rp);
}

/* Filters and fields an agent reaches for: CommentFilter.parent (a threaded reply),
 * IssueFilter.searchableContent, Team.members. */
static void test_filters(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        gql(t, &rp,
            "mutation { commentCreate(input: {parentId: \"comment_1\", body: \"a reply\"}) { "
            "comment { id } } }",
            NULL);
        CHECK(rp.status == 200);
        gql(t, &rp,
            "{ comments(filter: {parent: {id: {eq: \"comment_1\"}}}) { nodes { body parent { id } "
            "} } top: comments(filter: {parent: {null: true}, user: {id: {eq: \"user_admin\"}}, "
            "issue: {id: {eq: \"issue_todo\"}}}) { nodes { id } } }",
            NULL);
        CHECK(rp.status == 200);
        CHECK(json_array_size(jp(rp.body, "/data/comments/nodes")) == 1 &&
              streq_ptr(jps(rp.body, "/data/comments/nodes/0/body"), "a reply"));
        CHECK(json_array_size(jp(rp.body, "/data/top/nodes")) == 1 &&
              streq_ptr(jps(rp.body, "/data/top/nodes/0/id"), "comment_1"));
        gql(t, &rp,
            "{ issues(filter: {searchableContent: {contains: \"AGENT eval\"}}) { nodes { "
            "identifier } } none: issues(filter: {searchableContent: {contains: \"zzz\"}}) { "
            "nodes { id } } }",
            NULL);
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data/issues/nodes")) == 1 &&
              streq_ptr(jps(rp.body, "/data/issues/nodes/0/identifier"), "ENG-1"));
        CHECK(json_array_size(jp(rp.body, "/data/none/nodes")) == 0);
        gql(t, &rp,
            "query m($id: String!) { team(id: $id) { members(first: 50) { nodes { id email } "
            "pageInfo { hasNextPage } } } }",
            "{\"id\": \"team_eng\"}");
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data/team/members/nodes")) == 3);
        twin_reply_done(&rp);
}

/* list_issues' query is words, each somewhere in the title or description, as Linear's MCP
 * server searches; an issue keeps the real server's flat shape (its `fields` enum: status,
 * statusType, team, teamId, assignee, assigneeId). */
static void test_mcp_search(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        _cleanup_json_ json_t *out = NULL;
        static const struct {
                const char *query;
                size_t n;
        } q[] = {
                {"agent eval triage", 1}, {"EVAL   Agent", 1}, {"triage", 1}, {"agent", 3},
                {"agent nope", 0},        {"eng-2", 1},
        };
        for (size_t i = 0; i < ELEMENTSOF(q); i++) {
                _cleanup_json_ json_t *args = json_pack("{s:s}", "query", q[i].query);
                _cleanup_free_ char *a = json_dumps(args, JSON_COMPACT);
                twin_test_call(t, &rp, "list_issues", a);
                json_decref(out);
                out = json_loads(strempty(jps(rp.body, "/result/content/0/text")), 0, NULL);
                CHECK(json_array_size(jp(out, "/issues")) == q[i].n);
                if (json_array_size(jp(out, "/issues")) != q[i].n)
                        fprintf(stderr, "query %s: %zu\n", q[i].query,
                                json_array_size(jp(out, "/issues")));
        }
        twin_test_call(t, &rp, "list_issues", "{\"query\": \"agent eval triage\"}");
        json_decref(out);
        out = json_loads(strempty(jps(rp.body, "/result/content/0/text")), 0, NULL);
        CHECK(streq_ptr(jps(out, "/issues/0/identifier"), "ENG-1"));
        CHECK(streq_ptr(jps(out, "/issues/0/status"), "Backlog") &&
              streq_ptr(jps(out, "/issues/0/statusType"), "backlog"));
        CHECK(streq_ptr(jps(out, "/issues/0/team"), "Engineering") &&
              streq_ptr(jps(out, "/issues/0/teamId"), "team_eng"));
        CHECK(streq_ptr(jps(out, "/issues/0/assignee"), "Developer") &&
              streq_ptr(jps(out, "/issues/0/assigneeId"), "user_dev"));
        twin_reply_done(&rp);
}

/* The read tools of Linear's MCP server an agent looks around with before it acts: each
 * answers the default world's rows, found by id, key or name as the server's schemas say. */
static void test_mcp_reads(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        TwinReply rp = {};
        _cleanup_json_ json_t *out = NULL;
#define READ(name, args)                                                                     \
        do {                                                                                 \
                twin_test_call(t, &rp, name, args);                                          \
                CHECK(rp.status == 200 && !json_is_true(jp(rp.body, "/result/isError")));    \
                CHECK(streq_ptr(rp.tool, name) && !rp.state_mutation);                       \
                json_decref(out);                                                            \
                out = json_loads(strempty(jps(rp.body, "/result/content/0/text")), 0, NULL); \
                CHECK(out);                                                                  \
        } while (0)
        READ("list_teams", "{}");
        CHECK(json_array_size(jp(out, "/teams")) == 1 && streq(jps(out, "/teams/0/key"), "ENG"));
        READ("get_team", "{\"query\": \"ENG\"}");
        CHECK(streq(jps(out, "/id"), "team_eng") && streq(jps(out, "/name"), "Engineering"));
        READ("get_team", "{\"query\": \"Engineering\"}");
        CHECK(streq(jps(out, "/id"), "team_eng"));
        READ("list_users", "{}");
        CHECK(json_array_size(jp(out, "/users")) == 3);
        READ("list_issue_labels", "{\"team\": \"ENG\"}");
        CHECK(json_array_size(jp(out, "/labels")) == 3 && streq(jps(out, "/labels/0/name"), "Bug"));
        READ("list_issue_labels", "{\"name\": \"Agent\"}");
        CHECK(json_array_size(jp(out, "/labels")) == 1 &&
              streq(jps(out, "/labels/0/id"), "label_agent"));
        READ("get_issue_status", "{\"id\": \"state_progress\", \"name\": \"\", \"team\": \"ENG\"}");
        CHECK(streq(jps(out, "/name"), "In Progress") && streq(jps(out, "/type"), "started"));
        READ("list_comments", "{\"issueId\": \"ENG-3\"}");
        CHECK(json_array_size(jp(out, "/comments")) == 1 &&
              streq(jps(out, "/comments/0/id"), "comment_2"));
        READ("list_projects", "{}");
        CHECK(json_array_size(jp(out, "/projects")) == 1 &&
              streq(jps(out, "/projects/0/name"), "Local Twin"));
        READ("get_project", "{\"query\": \"project_local\"}");
        CHECK(streq(jps(out, "/name"), "Local Twin"));
        READ("get_project", "{\"query\": \"Local Twin\"}");
        CHECK(streq(jps(out, "/id"), "project_local"));
#undef READ
        /* a row that does not exist is the tool's error, and no read changes the world */
        twin_test_call(t, &rp, "get_team", "{\"query\": \"NOPE\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        twin_reply_done(&rp);
}

static void test_hostile(void)
{
        _cleanup_(twin_freep) Twin *t = twin_test_new("linear", "default");
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        TwinReply rp = {};
        static const char *const bodies[] = {
                "not json",
                "[1, 2]",
                "{\"query\": 5}",
                "{\"query\": \"mutation { issueDelete(id: \\\"ENG-1\\\") { success } \"}",
                "{\"query\": \"{ issues(first: -1) { nodes { id } } }\"}",
                "{\"query\": \"{ __schema { types { name } } }\", \"variables\": [1]}",
                "{\"query\": \"mutation m($i: IssueUpdateInput!) { issueUpdate(id: \\\"ENG-1\\\", "
                "input: $i) { success } }\", \"variables\": {\"i\": {\"priority\": \"high\"}}}",
        };
        for (size_t i = 0; i < ELEMENTSOF(bodies); i++) {
                twin_test_req(t, &rp, "POST", "/graphql", NULL, "application/json", bodies[i]);
                CHECK(rp.status >= 400 && rp.status < 500);
                CHECK(json_is_string(jp(rp.body, "/errors/0/extensions/code")));
                if (!json_is_string(jp(rp.body, "/errors/0/extensions/code")))
                        fprintf(stderr, "body %zu: %d\n", i, rp.status);
        }
        /* deep nesting and a huge document are refused, not followed */
        char deep[4096] = "{\"query\": \"{ viewer ";
        for (int i = 0; i < 300; i++)
                strcat(deep, "{ a ");
        strcat(deep, "\"}");
        twin_test_req(t, &rp, "POST", "/graphql", NULL, "application/json", deep);
        CHECK(rp.status == 400 && json_is_string(jp(rp.body, "/errors/0/extensions/code")));
        /* a chain of fragments deeper than execution follows: refused, not answered empty */
        size_t cap = 1 << 20, n = 0;
        _cleanup_free_ char *chain = malloc(cap);
        CHECK(chain);
        n += (size_t)snprintf(chain + n, cap - n, "{\"query\": \"{ viewer { ...F0 } } ");
        for (int i = 0; i < 1000; i++)
                n += (size_t)snprintf(chain + n, cap - n, "fragment F%d on User { ...F%d } ", i,
                                      i + 1);
        snprintf(chain + n, cap - n, "fragment F1000 on User { id }\"}");
        twin_test_req(t, &rp, "POST", "/graphql", NULL, "application/json", chain);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/errors/0/extensions/code"), "GRAPHQL_VALIDATION_FAILED"));
        CHECK(json_equal(before, twin_world(t)));
        twin_reply_done(&rp);
}

int main(void)
{
        test_seeds();
        test_queries();
        test_errors();
        test_mutations();
        test_mcp();
        test_mcp_reads();
        test_links_relations();
        test_ids_only();
        test_filters();
        test_mcp_search();
        test_hostile();
        return check_finish();
}
