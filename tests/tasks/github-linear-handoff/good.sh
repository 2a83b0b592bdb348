#!/usr/bin/env bash
# The passing agent of github-linear-handoff/task.md: reads acme/web#4 over GitHub's REST
# API, creates and comments on the Linear issue with Linear's MCP tools (save_issue,
# save_comment, as the official server names them), then links back on GitHub.
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
        "$(jq -nc --arg k "$identifier" '{body: ("Handed off to the Platform team in Linear: " + $k + ". Keeping this open until the fix ships.")}')" >/dev/null
echo "handed acme/web#4 off to $identifier (Todo, Bug) and linked both ways; #4 stays open"
