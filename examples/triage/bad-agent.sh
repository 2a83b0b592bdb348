#!/usr/bin/env bash
# The committed defect of examples/triage/task.md: it decides correctly in GitHub (assigns
# alice, comments) and never tells Slack. The platform carries nothing between twins, so
# the Slack criterion — and only it — fails.
#
#   pome run examples/triage/task.md -- examples/triage/bad-agent.sh    # exit status 1
set -euo pipefail
: "${POME_GITHUB_REST_URL:?run me with pome run}" "${POME_AUTH_TOKEN:?}"

gh() { # gh METHOD PATH [JSON]
        curl -fsS -X "$1" -H "Authorization: Bearer $POME_AUTH_TOKEN" \
                -H 'Content-Type: application/json' ${3:+--data-binary "$3"} "$POME_GITHUB_REST_URL$2"
}

gh GET /repos/acme/api/issues/1 >/dev/null
gh POST /repos/acme/api/issues/1/assignees '{"assignees":["alice"]}' >/dev/null
gh POST /repos/acme/api/issues/1/comments \
        '{"body":"Triaged: reproduced the 500 on POST /orders; assigned to @alice."}' >/dev/null
echo "triaged acme/api#1 (and forgot to tell anyone)"
