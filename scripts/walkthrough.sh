#!/usr/bin/env bash
# The main job, end to end, on the embedded default configuration: start pomed,
# open a GitHub + Slack + Stripe sandbox, let an agent (this script, over plain HTTP)
# triage acme/api#1 and tell #general, take a payment in Stripe and file its receipt
# in #general, read the tapes, show that a second sandbox still has the untouched
# world, stop both, then grade an agent against a task (pome run: INCOMPLETE while its
# [model] criterion has no judge, then --code-only a passing one and the committed defect,
# and pome eval regrading the run offline). Every block prints
# what the platform answered.
#
# It runs in the checkout, keeping pomed's state in ./.pome (mode 0750, as pomed wants it)
# and the graded runs in ./.pome-runs/. For the tests: POME_BUILD_DIR=DIR uses that build
# instead of setting up build/release, WALKTHROUGH_DIR=DIR runs in DIR instead of the
# checkout, and WALKTHROUGH_POMED_ARGS adds pomed options (ephemeral ports, --bus none).
set -euo pipefail
# --help: the comment above, as usage
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
fi
if (($#)); then
        echo "walkthrough.sh: takes no arguments (--help)" >&2
        exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [[ -n ${POME_BUILD_DIR:-} ]]; then
        BIN=$(cd "$POME_BUILD_DIR" && pwd)
else
        # setup reports on stderr what it installs and builds; the walkthrough itself is stdout
        scripts/setup.sh release
        BIN=$ROOT/build/release
fi
export PATH=$BIN/cli:$BIN/supervisor:$PATH
if [[ -n ${WALKTHROUGH_DIR:-} ]]; then
        cd "$WALKTHROUGH_DIR"
        # the commands below read the same as in the checkout
        [[ -e examples ]] || ln -s "$ROOT/examples" examples
fi
# shellcheck disable=SC2206 # options, split as given
POMED_ARGS=(${WALKTHROUGH_POMED_ARGS:-})

# bold headings on a terminal only (not in a log, not with NO_COLOR)
if [[ -t 1 && -z ${NO_COLOR:-} && ${TERM:-dumb} != dumb ]]; then
        say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
        say() { printf '\n== %s\n' "$*"; }
fi
show() { printf '$ %s\n' "$*"; "$@"; }

# pomed on the embedded default: 127.0.0.1:7070 (control) and :7071 (gateway), ./.pome
for port in 7070 7071; do
        [[ ${#POMED_ARGS[@]} -eq 0 ]] || break
        if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
                echo "walkthrough: port $port is in use (another pomed?). Stop it first." >&2
                exit 1
        fi
done
rm -f .pome/pomed.json
# pomed's state directory is closed to other users (0750, as pomed makes it and pome doctor
# checks); made here because its log goes there, and set so again if an older one was not
install -d -m 0750 .pome
pomed "${POMED_ARGS[@]}" >.pome/walkthrough.log 2>&1 &
POMED=$!
SECRETS=$(mktemp /tmp/pome-secrets.XXXXXX)
SECRETS_B=$(mktemp /tmp/pome-secrets.XXXXXX)
trap 'kill $POMED 2>/dev/null; wait $POMED 2>/dev/null; rm -f "$SECRETS" "$SECRETS.pi" "$SECRETS_B"' EXIT
for _ in $(seq 100); do [[ -f .pome/pomed.json ]] && break; sleep 0.05; done
[[ -f .pome/pomed.json ]] || { cat .pome/walkthrough.log; exit 1; }
say "pomed is up (log: .pome/walkthrough.log)"
cat .pome/pomed.json

say "Start one sandbox with three twins (all or nothing)"
show pome sandbox create --twin github --twin slack --twin stripe --secrets-file "$SECRETS"

say "One credential, three addresses: the secrets file"
sed -E 's/(TOKEN|API_KEY)=.*/\1=<hidden>/' "$SECRETS"
echo "($(grep -c '^export' "$SECRETS") variables)"
# shellcheck disable=SC1090
source "$SECRETS"
gh() { curl -s -H "Authorization: Bearer $POME_AUTH_TOKEN" -H "Content-Type: application/json" "$@"; }
slack() { curl -s -H "Authorization: Bearer $POME_AUTH_TOKEN" "$@"; }

say "The GitHub half: read acme/api#1, assign alice, comment"
gh "$POME_GITHUB_REST_URL/repos/acme/api/issues/1" |
        jq '{number, title, state, labels: [.labels[].name], assignees: [.assignees[].login], comments}'
gh -X POST "$POME_GITHUB_REST_URL/repos/acme/api/issues/1/assignees" -d '{"assignees":["alice"]}' |
        jq '{number, assignees: [.assignees[].login]}'
gh -X POST "$POME_GITHUB_REST_URL/repos/acme/api/issues/1/comments" \
        -d '{"body":"Triaged: reproducible on main, assigned to @alice."}' | jq '{id, body}'

say "The Slack half, and the carry: the agent moves acme/api#1 into the message"
GENERAL=$(slack "$POME_SLACK_REST_URL/conversations.list" | jq -r '.channels[] | select(.name=="general") | .id')
slack -X POST "$POME_SLACK_REST_URL/chat.postMessage" \
        --data-urlencode "channel=$GENERAL" \
        --data-urlencode "text=acme/api#1 is triaged and assigned to alice." | jq '{ok, channel, ts, text: .message.text}'

say "The Stripe half: take a payment, file the receipt in #general"
# Stripe's own paths at api_base, the key alone says which sandbox (as the SDKs need)
stripe() { curl -s -u "$POME_STRIPE_API_KEY:" "$@"; }
CUS=$(stripe "$POME_STRIPE_API_BASE/v1/customers" -d email=alice@acme.test -d name=Alice | jq -r .id)
stripe "$POME_STRIPE_API_BASE/v1/payment_intents" -d amount=4200 -d currency=usd \
        -d customer="$CUS" -d payment_method=pm_card_visa -d confirm=true \
        -d "automatic_payment_methods[enabled]=true" -d "automatic_payment_methods[allow_redirects]=never" |
        tee "$SECRETS.pi" | jq '{id, status, amount, currency, latest_charge}'
CHARGE=$(jq -r .latest_charge "$SECRETS.pi")
slack -X POST "$POME_SLACK_REST_URL/chat.postMessage" --data-urlencode "channel=$GENERAL" \
        --data-urlencode "text=Payment received: $CHARGE (\$42.00 from Alice)" | jq '{ok, text: .message.text}'

say "Read the tapes — one per twin"
for twin in github slack stripe; do
        url_var=POME_${twin^^}_REST_URL
        echo "-- $twin"
        gh "${!url_var}/_pome/events" | jq -r '.[] | "\(.method) \(.path)  tool=\(.tool)  state_mutation=\(.state_mutation)  status=\(.status)"'
done
echo "-- GitHub and Slack paths carry $POME_SESSION_ID (Stripe's are its own /v1/…: the key names the sandbox);"
echo "   the rows are disjoint; reading a tape adds no row:"
n1=$(gh "$POME_GITHUB_REST_URL/_pome/events" | jq length)
n2=$(gh "$POME_GITHUB_REST_URL/_pome/events" | jq length)
echo "github tape: $n1 rows, read again: $n2 rows"

say "A second sandbox, opened while the first is still running"
pome sandbox create --twin github --twin slack --secrets-file "$SECRETS_B" >/dev/null
B_URL_GH=$(grep POME_GITHUB_REST_URL "$SECRETS_B" | cut -d"'" -f2)
B_URL_SL=$(grep POME_SLACK_REST_URL "$SECRETS_B" | cut -d"'" -f2)
B_TOKEN=$(grep POME_AUTH_TOKEN "$SECRETS_B" | cut -d"'" -f2)
B_SID=$(grep POME_SESSION_ID "$SECRETS_B" | cut -d"'" -f2)
echo "-- the same question to both sandboxes, at the same moment:"
jobs_=()
gh "$POME_GITHUB_REST_URL/repos/acme/api/issues/1" |
        jq -c '{sandbox: "A", issue: 1, assignees: [.assignees[].login], comments}' & jobs_+=($!)
curl -s -H "Authorization: Bearer $B_TOKEN" "$B_URL_GH/repos/acme/api/issues/1" |
        jq -c '{sandbox: "B", issue: 1, assignees: [.assignees[].login], comments}' & jobs_+=($!)
slack "$POME_SLACK_REST_URL/conversations.history?channel=$GENERAL" |
        jq -c '{sandbox: "A", general: [.messages[].text]}' & jobs_+=($!)
curl -s -H "Authorization: Bearer $B_TOKEN" "$B_URL_SL/conversations.history?channel=$GENERAL" |
        jq -c '{sandbox: "B", general: [.messages[].text]}' & jobs_+=($!)
wait "${jobs_[@]}" # not a bare wait: pomed is a child of this shell too
echo "-- A's token on B's URL (the routing layer answers before any twin does):"
gh -w ' HTTP %{http_code}\n' "$B_URL_GH/repos/acme/api/issues/1"

say "What this costs: sandboxes, not twins"
show pome usage

say "Stopping refuses an ungraded sandbox"
show pome sandbox stop "$POME_SESSION_ID" || echo "(exit status $?)"

say "Stop both, discarding their runs"
show pome sandbox stop "$POME_SESSION_ID" --discard
show pome sandbox stop "$B_SID" --discard
show pome usage

say "A graded run: a task, an agent, a verdict (pome run)"
# kept after the walkthrough, so the run directories it prints can be read again
RUNS=.pome-runs
mkdir -p "$RUNS"
echo "-- its [model] criterion needs a judge, and this pomed has none (judge: in pomed.conf):"
echo "-- the criterion is not evaluated, so the run is INCOMPLETE (exit status 6), never a pass:"
show pome run examples/triage/task.md --out "$RUNS" -- examples/triage/good-agent.sh ||
        echo "(exit status $?: incomplete, as it should be without a judge)"
echo "-- --code-only grades its [code] criteria alone, on purpose, and the verdict says so:"
show pome run examples/triage/task.md --out "$RUNS" --code-only -- examples/triage/good-agent.sh
echo "-- the committed defect decides right in GitHub and never tells Slack:"
show pome run examples/triage/task.md --out "$RUNS" --code-only -- examples/triage/bad-agent.sh ||
        echo "(exit status $?: the run failed, as it should)"
LAST=$(ls -td "$RUNS"/ses_* | head -1)
echo "-- regraded offline from its run directory, byte for byte:"
show pome eval "$LAST" ||
        echo "(exit status $?: the verdict it reproduced is a fail)"
echo
echo "Done. The walkthrough's sandboxes are discarded or graded; pomed stops now."
echo "The graded runs stay in $PWD/$RUNS/ (pome run show or pome eval them again; remove"
echo "the directory when done). The defect's summary: $PWD/$LAST/summary.md"
