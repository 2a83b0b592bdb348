#!/usr/bin/env bash
# The passing agent of github-triage/task.md: REST for the labels, assignee, milestone and
# comments, MCP (issue_write) to close the duplicate, and only labels the repository has.
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GITHUB_REST_URL:?run me with pome run}" "${POME_GITHUB_MCP_URL:?}"

labels=$(gh GET /repos/acme/api/labels | jq -c '[.[].name]')
jq -e 'index("bug") and index("enhancement")' <<<"$labels" >/dev/null ||
        { echo "acme/api lacks bug/enhancement: $labels" >&2; exit 1; }
v14=$(gh GET '/repos/acme/api/milestones?state=open' | jq -er '.[] | select(.title == "v1.4") | .number')

# #1: the bug
gh PUT /repos/acme/api/issues/1/labels '{"labels":["bug"]}' >/dev/null
gh POST /repos/acme/api/issues/1/assignees '{"assignees":["alice"]}' >/dev/null
gh PATCH /repos/acme/api/issues/1 "{\"milestone\":$v14}" >/dev/null
gh POST /repos/acme/api/issues/1/comments \
        '{"body":"Triage: a 500 on an empty cart is a server error on valid input, so a bug. For v1.4, @alice."}' >/dev/null

# #2: the feature request
gh POST /repos/acme/api/issues/2/labels '{"labels":["enhancement"]}' >/dev/null

# #3: the duplicate, closed over MCP as the official server's issue_write does it
gh POST /repos/acme/api/issues/3/comments '{"body":"Duplicate of #1"}' >/dev/null
closed=$(mcp "$POME_GITHUB_MCP_URL" issue_write \
        '{"method":"update","owner":"acme","repo":"api","issue_number":3,"state":"closed","state_reason":"duplicate","duplicate_of":1}')
[[ $(jq -r .isError <<<"$closed") == false ]] || { echo "issue_write: $closed" >&2; exit 1; }
echo "triaged #1 (bug, alice, v1.4), #2 (enhancement), closed #3 as a duplicate"
