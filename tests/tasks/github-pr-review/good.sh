#!/usr/bin/env bash
# The passing agent of github-pr-review/task.md: reads each pull request's files and
# statuses, requests changes on the red one (#2) with a conversation comment, approves the
# green one (#3), merges nothing.
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GITHUB_REST_URL:?run me with pome run}"

R=/repos/acme/payments
for n in 2 3; do
        pr=$(gh GET "$R/pulls/$n")
        sha=$(jq -r .head.sha <<<"$pr")
        files=$(gh GET "$R/pulls/$n/files" | jq -r '[.[].filename] | join(", ")')
        red=$(gh GET "$R/commits/$sha/status" |
                jq -r '[.statuses[] | select(.state != "success") | .context] | join(", ")')
        echo "#$n ($files): failing: ${red:-none}"
        if [[ -n $red ]]; then
                gh POST "$R/pulls/$n/reviews" "$(jq -nc --arg c "$red" \
                        '{event: "REQUEST_CHANGES", body: "\($c) is failing; it must be green before this goes in."}')" >/dev/null
                gh POST "$R/issues/$n/comments" "$(jq -nc --arg c "$red" \
                        '{body: "@dev-alice \($c) fails (flake8 W291: trailing whitespace in src/charge.py). Please fix it and push again."}')" >/dev/null
        else
                gh POST "$R/pulls/$n/reviews" '{"event":"APPROVE","body":"Green and clear. Approved."}' >/dev/null
        fi
done
