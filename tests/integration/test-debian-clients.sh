#!/usr/bin/env bash
# Clients from Debian, unmodified, against real sandboxes (issue 25): PyGithub
# (python3-github), octokit.rb (ruby-octokit), stripe-python (python3-stripe) and slack-go
# (golang-github-slack-go-slack-dev, built here with Debian's Go), each over a realistic flow
# (tests/conformance/{python,ruby,go}/: 30, 29, 23 and 26 steps), with the tape checked for the
# changes they made. Python is Debian's (/usr/bin/python3), whose modules apt installs.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
PY=/usr/bin/python3
[[ -x $PY ]] || skip "Debian's python3 is not installed"
"$PY" -c 'import github, stripe' 2>/dev/null ||
        skip "python3-github and python3-stripe are not installed (apt-get install python3-github python3-stripe; scripts/setup.sh does)"
ruby -e 'require "octokit"' 2>/dev/null ||
        skip "ruby-octokit is not installed (apt-get install ruby-octokit; scripts/setup.sh does)"
[[ -d /usr/share/gocode/src/github.com/slack-go/slack ]] && command -v go >/dev/null ||
        skip "slack-go is not installed (apt-get install golang-go golang-github-slack-go-slack-dev; scripts/setup.sh does)"
start_pomed
FLOWS=$SRC/tests/conformance/python

# tape_changes TWIN CLIENT TOOL…: the last sandbox's TWIN tape has a world change by each TOOL
tape_changes() {
        local twin=$1 client=$2 tool
        shift 2
        twin_call GET "$(rest_url "$twin")/_pome/events" "$TOKEN"
        for tool in "$@"; do
                jq -e --arg t "$tool" 'any(.[]; .tool == $t and .state_mutation)' <<<"$BODY" >/dev/null ||
                        fail "$client: no $tool row on the tape"
        done
}

create_sandbox github
gh_token=$(jq -r .provider_credentials.github.token <<<"$CREATED")
[[ $gh_token != null ]] || gh_token=$TOKEN
"$PY" "$FLOWS/pygithub_flow.py" "$gh_token" "$(rest_url github)" >pygithub.out 2>&1 ||
        fail "PyGithub: $(grep -v '^ok' pygithub.out)"
grep -q '^passed 30$' pygithub.out || fail "PyGithub: $(tail -3 pygithub.out)"
tape_changes github PyGithub add_issue_labels set_issue_labels add_issue_comment create_issue create_label \
        create_branch create_or_update_file create_pull_request create_pull_request_review merge_pull_request \
        issue_write
pass "PyGithub 1.55: 30 steps as on github.com (labels as a list body, lazy users and orgs, legacy refs, the rate limit), each change on the tape"

create_sandbox github
gh_token=$(jq -r .provider_credentials.github.token <<<"$CREATED")
ruby "$SRC/tests/conformance/ruby/octokit_flow.rb" "$gh_token" "$(rest_url github)" >octokit-rb.out 2>&1 ||
        fail "octokit.rb: $(grep -v '^ok' octokit-rb.out)"
grep -q '^passed 29$' octokit-rb.out || fail "octokit.rb: $(tail -3 octokit-rb.out)"
tape_changes github octokit.rb add_issue_labels set_issue_labels add_issue_comment create_issue issue_write \
        create_label create_branch create_or_update_file create_pull_request merge_pull_request
pass "octokit.rb 4.20: 29 steps as on github.com (its rate limit is 5000, legacy refs), each change on the tape"

create_sandbox stripe
key=$(jq -r .provider_credentials.stripe.api_key <<<"$CREATED")
base=$(jq -r .provider_credentials.stripe.api_base <<<"$CREATED")
"$PY" "$FLOWS/stripe_python_flow.py" "$key" "$base" >stripe.out 2>&1 ||
        fail "stripe-python: $(grep -v '^ok' stripe.out)"
grep -q '^passed 25$' stripe.out || fail "stripe-python: $(tail -3 stripe.out)"
twin_call GET "$(rest_url stripe)/_pome/events" "$TOKEN"
jq -e 'any(.[]; .tool == "create_payment_intent" and (.request_body.confirm == "True"))' <<<"$BODY" >/dev/null ||
        fail "stripe-python: the confirm=True payment intent is not on the tape"
pass "stripe-python: 25 steps as on api.stripe.com (Python booleans, payment method lists, nulls where Stripe sends them, Request-Id, a loud 501 for Invoice.upcoming)"

# slack-go, from Debian's GOPATH sources
(cd "$SRC/tests/conformance/go/slackflow" &&
        GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE=$TMP/gocache go build -o "$TMP/slackflow" .) \
        >go-build.out 2>&1 || fail "cannot build the slack-go flow: $(tail -5 go-build.out)"
create_sandbox slack
xoxb=$(jq -r .provider_credentials.slack.token <<<"$CREATED")
xoxp=$(jq -r .provider_credentials.slack.user_token <<<"$CREATED")
[[ $xoxp == xoxp-pome-* ]] || fail "no Slack user token in provider_credentials: $xoxp"
"$TMP/slackflow" "$xoxb" "$xoxp" "$(rest_url slack)/api/" >slack-go.out 2>&1 ||
        fail "slack-go: $(grep -v '^ok' slack-go.out)"
grep -q '^passed 27$' slack-go.out || fail "slack-go: $(tail -3 slack-go.out)"
tape_changes slack slack-go slack_send_message slack_add_reaction slack_add_pin slack_edit_message \
        slack_post_ephemeral slack_mark_conversation slack_set_conversation_topic slack_create_conversation \
        slack_upload_file slack_delete_message
pass "slack-go: 27 steps as on slack.com (ephemeral messages, marks, user groups, search with the user token only), each change on the tape"
