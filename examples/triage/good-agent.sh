#!/usr/bin/env bash
# The reference agent of examples/triage/task.md, in shell: curl against the twins' REST
# APIs with the sandbox bearer, jq to read the answers. `pome run` gives it the sandbox's
# POME_* variables (those of `pome sandbox create --secrets-file`) and the prompt on stdin.
#
#   pome run examples/triage/task.md -- examples/triage/good-agent.sh
set -euo pipefail
: "${POME_GITHUB_REST_URL:?run me with pome run}" "${POME_SLACK_REST_URL:?}" "${POME_AUTH_TOKEN:?}"

prompt=$(cat)
printf 'prompt: %s\n' "${prompt%%$'\n'*}"

gh() { # gh METHOD PATH [JSON]
        curl -fsS -X "$1" -H "Authorization: Bearer $POME_AUTH_TOKEN" \
                -H 'Content-Type: application/json' ${3:+--data-binary "$3"} "$POME_GITHUB_REST_URL$2"
}
slack() { # slack METHOD [NAME=VALUE…]: a form POST, as Slack's SDKs send one
        local method=$1 args=()
        shift
        for kv in "$@"; do args+=(--data-urlencode "$kv"); done
        curl -fsS -H "Authorization: Bearer $POME_AUTH_TOKEN" "${args[@]}" "$POME_SLACK_REST_URL/$method"
}

issue=$(gh GET /repos/acme/api/issues/1)
printf 'issue #1: %s (%s)\n' "$(jq -r .title <<<"$issue")" "$(jq -r .state <<<"$issue")"
gh POST /repos/acme/api/issues/1/assignees '{"assignees":["alice"]}' >/dev/null
gh POST /repos/acme/api/issues/1/comments \
        '{"body":"Triaged: reproduced the 500 on POST /orders; assigned to @alice."}' >/dev/null

general=$(slack conversations.list types=public_channel | jq -r '.channels[] | select(.name == "general") | .id')
[[ -n $general ]] || { echo "no #general channel" >&2; exit 1; }
posted=$(slack chat.postMessage "channel=$general" "text=acme/api#1 was triaged and assigned to alice.")
[[ $(jq -r .ok <<<"$posted") == true ]] || { echo "chat.postMessage: $posted" >&2; exit 1; }
echo "told #general: $(jq -r .message.text <<<"$posted")"
