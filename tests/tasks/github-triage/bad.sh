#!/usr/bin/env bash
# The failing agent of github-triage/task.md. Its mistake: it tags #1 with a `needs-triage`
# label the repository does not define, next to `bug` — GitHub creates a missing label on
# the fly, so the label set grows. Everything else is right.
#
# Must fail (expect-bad-fail):
#   Issue #1 in `acme/api` has exactly one classification label, and it is `bug`
#   No new labels were created in `acme/api`
# and pass every other [code] criterion (`create_label` was never called: the label came
# from add_issue_labels).
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GITHUB_REST_URL:?run me with pome run}" "${POME_GITHUB_MCP_URL:?}"

v14=$(gh GET '/repos/acme/api/milestones?state=open' | jq -er '.[] | select(.title == "v1.4") | .number')
gh POST /repos/acme/api/issues/1/labels '{"labels":["bug","needs-triage"]}' >/dev/null
gh POST /repos/acme/api/issues/1/assignees '{"assignees":["alice"]}' >/dev/null
gh PATCH /repos/acme/api/issues/1 "{\"milestone\":$v14}" >/dev/null
gh POST /repos/acme/api/issues/1/comments \
        '{"body":"Triage: a 500 on an empty cart is a server error on valid input, so a bug. For v1.4, @alice."}' >/dev/null
gh POST /repos/acme/api/issues/2/labels '{"labels":["enhancement"]}' >/dev/null
gh POST /repos/acme/api/issues/3/comments '{"body":"Duplicate of #1"}' >/dev/null
gh PATCH /repos/acme/api/issues/3 '{"state":"closed","state_reason":"duplicate"}' >/dev/null
echo "triaged, with a needs-triage label for good measure"
