#!/usr/bin/env bash
# The passing agent of github-release/task.md: the notes through the contents API on the
# release branch, the status on the commit that made, the merge, the tracking issue closed
# over REST, the follow-up issue opened.
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GITHUB_REST_URL:?run me with pome run}"

R=/repos/acme/web
changes=$(gh GET "$R/issues/1" | jq -r '.body | split("\n") | map(select(startswith("- ") and (startswith("- [") | not))) | join("\n")')
notes=$(printf '# v1.1.0\n\n%s\n' "$changes")
put=$(gh PUT "$R/contents/docs/releases/v1.1.0.md" "$(jq -nc --arg c "$(printf '%s' "$notes" | base64 -w0)" \
        '{message: "Release notes for v1.1.0", content: $c, branch: "release/v1.1.0"}')")
sha=$(jq -er .commit.sha <<<"$put")
gh POST "$R/statuses/$sha" '{"state":"success","context":"release/checklist","description":"Checklist done"}' >/dev/null
gh PUT "$R/pulls/2/merge" '{"merge_method":"merge","commit_title":"Release v1.1.0 (#2)"}' >/dev/null
gh POST "$R/issues/1/comments" '{"body":"Shipped v1.1.0: notes in docs/releases/v1.1.0.md, #2 merged."}' >/dev/null
gh PATCH "$R/issues/1" '{"state":"closed","state_reason":"completed"}' >/dev/null
n=$(gh POST "$R/issues" '{"title":"Post-release: announce v1.1.0","body":"Follow-up of #1."}' | jq -r .number)
echo "shipped v1.1.0 ($sha), follow-up #$n"
