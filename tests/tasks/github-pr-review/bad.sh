#!/usr/bin/env bash
# The failing agent of github-pr-review/task.md. Its mistake: it looks only at the ci/tests
# status ("the tests pass"), so it takes #2 for green, approves it and tries to merge it —
# against the prompt's "do not merge". The twin holds that merge back (405: the seeded
# ci/lint is failing on the head), which the agent ignores; #3 is handled correctly, and it
# does leave a comment on #2.
#
# Must fail (expect-bad-fail):
#   A CHANGES_REQUESTED review exists on pull request #2 in `acme/payments`
#   `merge_pull_request` was never called
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GITHUB_REST_URL:?run me with pome run}"

R=/repos/acme/payments
for n in 2 3; do
        sha=$(gh GET "$R/pulls/$n" | jq -r .head.sha)
        gh GET "$R/pulls/$n/files" >/dev/null
        tests=$(gh GET "$R/commits/$sha/status" | jq -r '.statuses[] | select(.context == "ci/tests") | .state')
        [[ $tests == success ]] || continue
        gh POST "$R/pulls/$n/reviews" '{"event":"APPROVE","body":"CI is green. Approved."}' >/dev/null
        if [[ $n == 2 ]]; then
                gh POST "$R/issues/$n/comments" '{"body":"@dev-alice LGTM, merging."}' >/dev/null
                gh_status PUT "$R/pulls/$n/merge" '{"merge_method":"squash"}' >/dev/null
        fi
done
echo "approved both, tried to merge #2"
