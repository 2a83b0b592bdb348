# shellcheck shell=bash
# Shared by the scripted agents of tests/tasks/*/ (good.sh, bad.sh): curl against the twins
# with what `pome run` hands an agent (the secrets file's POME_* variables), jq to read the
# answers. Sourced, not run. Every call fails the agent loudly on a transport error; HTTP
# errors are the caller's to read (the *_status helpers) or fatal (the others, curl -f).
set -euo pipefail

# gh METHOD PATH [JSON]: GitHub's REST API with the sandbox bearer; the body on stdout.
gh() {
        curl -fsS -X "$1" -H "Authorization: Bearer $POME_AUTH_TOKEN" \
                -H 'Accept: application/vnd.github+json' -H 'Content-Type: application/json' \
                ${3:+--data-binary "$3"} "$POME_GITHUB_REST_URL$2"
}

# gh_status METHOD PATH [JSON]: like gh, but prints the HTTP status alone and never fails.
gh_status() {
        curl -sS -o /dev/null -w '%{http_code}' -X "$1" -H "Authorization: Bearer $POME_AUTH_TOKEN" \
                -H 'Content-Type: application/json' ${3:+--data-binary "$3"} "$POME_GITHUB_REST_URL$2"
}

# mcp URL TOOL ARGS_JSON: one stateless MCP tools/call (no initialize, as the contract
# allows); the tool's result object on stdout.
mcp() {
        local body
        body=$(jq -nc --arg t "$2" --argjson a "$3" \
                '{jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: $t, arguments: $a}}')
        curl -fsS -H "Authorization: Bearer $POME_AUTH_TOKEN" -H 'Content-Type: application/json' \
                -H 'Accept: application/json, text/event-stream' --data-binary "$body" "$1" | jq -c .result
}

# slack METHOD [NAME=VALUE…]: a form POST, as Slack's SDKs send one; fails unless ok:true.
slack() {
        local method=$1 args=() out
        shift
        for kv in "$@"; do args+=(--data-urlencode "$kv"); done
        out=$(curl -fsS -H "Authorization: Bearer ${POME_SLACK_TOKEN:-$POME_AUTH_TOKEN}" "${args[@]}" \
                "$POME_SLACK_REST_URL/$method")
        jq -e .ok >/dev/null <<<"$out" || { echo "slack $method: $out" >&2; return 1; }
        printf '%s\n' "$out"
}

# slack_channel NAME: the id of the channel called NAME (public or private, the agent's view).
slack_channel() {
        slack conversations.list types=public_channel,private_channel |
                jq -er --arg n "$1" '.channels[] | select(.name == $n) | .id'
}

# stripe METHOD PATH [NAME=VALUE…]: Stripe's REST API with the sandbox's key, form bodies
# in Stripe's bracket convention; STRIPE_IDEMPOTENCY_KEY, when set, goes with the call.
# Prints the body and never fails on an HTTP error: STRIPE_STATUS holds the status (call it
# as `stripe … >file` or `x=$(stripe …)` and read STRIPE_STATUS from the file's sibling).
stripe() {
        local method=$1 path=$2 args=() code
        shift 2
        for kv in "$@"; do args+=(--data-urlencode "$kv"); done
        if [[ $method == GET ]]; then args=(-G "${args[@]}"); else args=(-X "$method" "${args[@]}"); fi
        [[ -z ${STRIPE_IDEMPOTENCY_KEY:-} ]] || args+=(-H "Idempotency-Key: $STRIPE_IDEMPOTENCY_KEY")
        code=$(curl -sS -o "$AGENT_TMP/stripe.body" -w '%{http_code}' -u "$POME_STRIPE_API_KEY:" \
                "${args[@]}" "$POME_STRIPE_API_BASE$path")
        printf '%s' "$code" >"$AGENT_TMP/stripe.status"
        cat "$AGENT_TMP/stripe.body"
}
stripe_status() { cat "$AGENT_TMP/stripe.status"; }

# x402 PATH [X-PAYMENT]: GET the Stripe twin's x402 resource PATH ({rest_url}/x402/PATH) with
# the sandbox bearer and, when given, the X-PAYMENT header. Prints the body and never fails on
# an HTTP error: x402_status is the status, x402_header NAME a response header's value.
x402() {
        local args=(-H "Authorization: Bearer $POME_AUTH_TOKEN") code
        [[ -z ${2:-} ]] || args+=(-H "X-PAYMENT: $2")
        code=$(curl -sS -o "$AGENT_TMP/x402.body" -D "$AGENT_TMP/x402.headers" -w '%{http_code}' \
                "${args[@]}" "$POME_STRIPE_REST_URL/x402/$1")
        printf '%s' "$code" >"$AGENT_TMP/x402.status"
        cat "$AGENT_TMP/x402.body"
}
x402_status() { cat "$AGENT_TMP/x402.status"; }
x402_header() { tr -d '\r' <"$AGENT_TMP/x402.headers" | awk -v n="$1" 'tolower($1) == tolower(n) ":" {print $2}'; }

# lin QUERY [VARIABLES_JSON]: one GraphQL request to the Linear twin (POST {rest_url}/graphql,
# the API key in Authorization as @linear/sdk sends it); fails on an HTTP error or a GraphQL
# `errors` member, else prints the `data` object.
lin() {
        local vars=${2:-'{}'} body out
        body=$(jq -nc --arg q "$1" --argjson v "$vars" '{query: $q, variables: $v}')
        out=$(curl -fsS -H "Authorization: ${POME_LINEAR_TOKEN:-Bearer $POME_AUTH_TOKEN}" \
                -H 'Content-Type: application/json' --data-binary "$body" "$POME_LINEAR_REST_URL/graphql")
        jq -e '.errors == null and .data != null' >/dev/null <<<"$out" || { echo "linear: $out" >&2; return 1; }
        jq -c .data <<<"$out"
}

# gm METHOD PATH [JSON]: the Gmail API v1 for the signed-in user ({rest_url}/gmail/v1/users/me
# PATH) with the sandbox's OAuth token; the body on stdout, fatal on an HTTP error.
gm() {
        curl -fsS -X "$1" -H "Authorization: Bearer ${POME_GMAIL_TOKEN:-$POME_AUTH_TOKEN}" \
                -H 'Content-Type: application/json' ${3:+--data-binary "$3"} \
                "$POME_GMAIL_REST_URL/gmail/v1/users/me$2"
}

# gm_raw FROM TO SUBJECT TEXT [IN_REPLY_TO]: an RFC 5322 message, base64url as Gmail's `raw`
# wants it (a reply names the Message-ID it answers in In-Reply-To and References).
gm_raw() {
        {
                printf 'From: %s\r\nTo: %s\r\nSubject: %s\r\n' "$1" "$2" "$3"
                [[ -z ${5:-} ]] || printf 'In-Reply-To: %s\r\nReferences: %s\r\n' "$5" "$5"
                printf 'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n%s\r\n' "$4"
        } | base64 -w0 | tr '+/' '-_' | tr -d '='
}

# b64url_decode: stdin (base64url, as Gmail's body.data and raw are, padding optional) decoded.
b64url_decode() {
        local s
        s=$(tr -d '\n' | tr '_-' '/+')
        while ((${#s} % 4)); do s+='='; done
        base64 -d <<<"$s"
}

AGENT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pome-agent.XXXXXX")
trap 'rm -rf "$AGENT_TMP"' EXIT

# The prompt arrives on stdin; an agent reads it, as a model would.
PROMPT=$(cat)
printf 'prompt: %s\n' "${PROMPT%%$'\n'*}"
