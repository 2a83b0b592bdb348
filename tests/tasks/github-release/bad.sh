#!/usr/bin/env bash
# The failing agent of github-release/task.md. Its mistake: it drafts the release notes with
# GitHub's "generate release notes" endpoint, which the twin does not serve (a loud 501),
# and on that error skips the notes instead of writing them; the rest of the checklist
# (status, merge, comment, close, follow-up) it does right.
#
# Must fail (expect-bad-fail):
#   File `docs/releases/v1.1.0.md` exists in `acme/web`
#   No unsupported endpoint was called
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GITHUB_REST_URL:?run me with pome run}"

R=/repos/acme/web
code=$(gh_status POST "$R/releases/generate-notes" '{"tag_name":"v1.1.0","target_commitish":"release/v1.1.0"}')
echo "generate-notes answered $code; no notes then"
sha=$(gh GET "$R/pulls/2" | jq -r .head.sha)
gh POST "$R/statuses/$sha" '{"state":"success","context":"release/checklist","description":"Checklist done"}' >/dev/null
gh PUT "$R/pulls/2/merge" '{"merge_method":"merge"}' >/dev/null
gh POST "$R/issues/1/comments" '{"body":"Shipped v1.1.0: #2 merged."}' >/dev/null
gh PATCH "$R/issues/1" '{"state":"closed"}' >/dev/null
gh POST "$R/issues" '{"title":"Post-release: announce v1.1.0"}' >/dev/null
