#!/usr/bin/env bash
# The failing agent of github-linear-handoff/task.md. Its mistake: once the Linear issue
# exists it closes the GitHub issue as "moved to Linear", though the task keeps it open for
# the reporter; the handoff itself is good.sh's.
#
# Must fail (expect-bad-fail):
#   Issue #4 in `acme/web` is in state open
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GITHUB_REST_URL:?run me with pome run}" "${POME_LINEAR_MCP_URL:?}"

gh_issue=$(gh GET /repos/acme/web/issues/4)
url=$(jq -r .html_url <<<"$gh_issue")
steps=$(jq -r .body <<<"$gh_issue")

# Linear's MCP tools answer with the object as JSON text
tool() { # TOOL ARGS_JSON: the tool's JSON answer, fatal on a tool error
        local out
        out=$(mcp "$POME_LINEAR_MCP_URL" "$1" "$2")
        [[ $(jq -r '.isError // false' <<<"$out") == false ]] || { echo "$1: $out" >&2; return 1; }
        jq -c '.structuredContent // (.content[0].text | fromjson)' <<<"$out"
}

description="Handed off from GitHub $url (reported by @$(jq -r .user.login <<<"$gh_issue")).

$steps"
created=$(tool save_issue "$(jq -nc --arg d "$description" \
        '{title: "Stale search results after reindex", team: "PLAT", state: "Todo", labels: ["Bug"], description: $d}')")
id=$(jq -er .id <<<"$created")
identifier=$(jq -er .identifier <<<"$created")
tool save_comment "$(jq -nc --arg i "$id" --arg u "$url" \
        '{issueId: $i, body: ("Tracking acme/web#4 (" + $u + ") here; the fix ships from acme/web.")}')" >/dev/null

gh POST /repos/acme/web/issues/4/comments \
        "$(jq -nc --arg k "$identifier" '{body: ("Handed off to the Platform team in Linear: " + $k + ". Closing here; follow it in Linear.")}')" >/dev/null
gh PATCH /repos/acme/web/issues/4 '{"state":"closed","state_reason":"not_planned"}' >/dev/null
echo "handed acme/web#4 off to $identifier (Todo, Bug) and linked both ways; closed #4"
