#!/usr/bin/env bash
# The vendors' own names inside a sealed pod (issue 24): with nothing but the run's variables,
# an agent built for the real services reaches this sandbox's twins unchanged —
#   curl https://api.github.com/…, https://slack.com/api/…, https://api.stripe.com/v1/…
#   (GITHUB_TOKEN, SLACK_BOT_TOKEN, STRIPE_API_KEY: the vendors' own variables);
#   new Octokit({auth}) with no baseUrl, new WebClient(token) with no slackApiUrl and
#   new Stripe(key) with no host, each the official SDK from its node_modules, and the GitHub
#   CLI with its default host (gh issue list|view|comment, label list, repo view: GraphQL) —
# over TLS that pome terminates with a CA made for the run, which only the pod trusts. The
# tapes show every call, meta.json which names were reached; a vendor whose twin is not in
# the sandbox is refused and recorded. Through pomed and with --local.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
require_seal
MODULES=$SRC/tests/conformance/node_modules
[[ -d $MODULES/@octokit/rest && -d $MODULES/@slack/web-api && -d $MODULES/stripe ]] ||
        skip "the official SDKs are not installed (npm ci in tests/conformance)"
start_pomed
cd "$TMP"
store=$(sha256sum /etc/ssl/certs/ca-certificates.crt /etc/hosts 2>/dev/null || true)

cat >task.md <<'EOF'
# Reach the vendors by their own names

## Prompt
Read acme/api#1, post to #general, list the Stripe customers.

## Success Criteria
- [code:github] A comment containing "by name" exists on issue #1 in `acme/api`
- [code:slack] A message in "general" contains "by name"

## Config
```yaml
twins: [github, slack, stripe]
timeout: 30
```
EOF

cat >curl-agent.sh <<'EOF'
#!/usr/bin/env bash
cat >/dev/null
set -u
say() { echo "$1 $2"; }
say github-get "$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/repos/acme/api/issues/1)"
say github-comment "$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $GITHUB_TOKEN" \
        -H 'Content-Type: application/json' -d '{"body":"curl by name"}' https://api.github.com/repos/acme/api/issues/1/comments)"
say slack-post "$(curl -sS -H "Authorization: Bearer $SLACK_BOT_TOKEN" -d channel=general -d 'text=curl by name' \
        https://slack.com/api/chat.postMessage | jq -r .ok)"
say stripe-list "$(curl -sS -o /dev/null -w '%{http_code}' -u "$STRIPE_API_KEY:" https://api.stripe.com/v1/customers)"
# not a name of this sandbox's (no such twin kind): refused
say other "$(curl -sS -o /dev/null -w '%{http_code}' -m 5 https://www.google.com/ 2>/dev/null || echo refused)"
EOF
chmod +x curl-agent.sh

cat >sdk-agent.mjs <<EOF
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
const require = createRequire("$MODULES/noop.js");
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { Octokit } = await load("@octokit/rest");
const { WebClient } = await load("@slack/web-api");
const Stripe = (await load("stripe")).default;
const gh = new Octokit({ auth: process.env.GITHUB_TOKEN });
const issue = await gh.rest.issues.get({ owner: "acme", repo: "api", issue_number: 1 });
console.log("octokit-get", issue.status, issue.data.number);
const c = await gh.rest.issues.createComment({ owner: "acme", repo: "api", issue_number: 1, body: "sdk by name" });
console.log("octokit-comment", c.status);
const slack = new WebClient(process.env.SLACK_BOT_TOKEN);
const m = await slack.chat.postMessage({ channel: "general", text: "sdk by name" });
console.log("slack-post", m.ok);
const stripe = new Stripe(process.env.STRIPE_API_KEY);
const list = await stripe.customers.list({ limit: 3 });
console.log("stripe-list", list.object);
const cu = await stripe.customers.create({ email: "byname@example.com" });
console.log("stripe-create", cu.object);
EOF

# the GitHub CLI with its default host: REST and GraphQL (POST https://api.github.com/graphql)
cat >gh-agent.sh <<'EOF'
#!/usr/bin/env bash
cat >/dev/null
set -u
export GH_PROMPT_DISABLED=1 GH_NO_UPDATE_NOTIFIER=1 NO_COLOR=1
echo "gh-issue-list $(gh issue list -R acme/api | cut -f1,2 | tr '\t' ' ' | head -1)"
echo "gh-issue-view $(gh issue view 1 -R acme/api --json number,state -q '"\(.number) \(.state)"')"
echo "gh-comment $(gh issue comment 1 -R acme/api -b 'gh by name')"
echo "gh-labels $(gh label list -R acme/api | cut -f1 | sort | tr '\n' ' ')"
echo "gh-repo $(gh repo view acme/api --json nameWithOwner -q .nameWithOwner)"
EOF
chmod +x gh-agent.sh

# run MODE LABEL AGENT…: a graded run; its directory in $D
run() {
        local mode=$1 label=$2
        shift 2
        local args=(--out runs --json)
        [[ $mode == local ]] && args+=(--local)
        set +e
        "$POME" run task.md "${args[@]}" -- "$@" >"$label.json" 2>"$label.err"
        set -e
        D=$(jq -r '.trials[0].run_dir' "$label.json")
        [[ -d $D ]] || fail "$label: no run directory: $(cat "$label.err")"
}
# tape_has D TWIN PATTERN: a row of TWIN's tape matches
tape_has() { grep -q "$3" "$1/$2.tape.jsonl" || fail "$1: the $2 tape has no $3: $(tail -c 600 "$1/$2.tape.jsonl")"; }

for mode in pomed local; do
        run $mode "curl-$mode" ./curl-agent.sh
        out=$D/stdout.txt
        for line in "github-get 200" "github-comment 201" "slack-post true" "stripe-list 200"; do
                grep -qx "$line" "$out" || fail "$mode curl: '$line' missing: $(cat "$out" "$D/stderr.txt")"
        done
        grep -q '^other \(refused\|000\)' "$out" || fail "$mode curl: another name was reached: $(grep ^other "$out")"
        tape_has "$D" github 'curl by name'
        tape_has "$D" slack 'curl by name'
        tape_has "$D" stripe '/v1/customers'
        assert_eq "$(jq -r '[.agent.seal.network.connections[] | select(.via == "tls" and .allowed) | .host] | unique | join(" ")' "$D/meta.json")" \
                "api.github.com api.stripe.com slack.com" "$mode curl: the names reached, in meta.json"
        assert_eq "$(jq -r .state "$D/verdict.json")" pass "$mode curl: the verdict"
        assert_eq "$(jq -r .agent_sealed "$D/verdict.json")" true "$mode curl: the verdict says the agent was sealed"
        pass "$mode: curl with the vendors' names and variables reached the twins (tapes, meta.json, verdict pass)"

        run $mode "sdk-$mode" node sdk-agent.mjs
        out=$D/stdout.txt
        for line in "octokit-get 200 1" "octokit-comment 201" "slack-post true" "stripe-list list" "stripe-create customer"; do
                grep -qx "$line" "$out" || fail "$mode SDKs: '$line' missing: $(cat "$out" "$D/stderr.txt")"
        done
        tape_has "$D" github 'sdk by name'
        tape_has "$D" slack 'sdk by name'
        tape_has "$D" stripe 'byname@example.com'
        assert_eq "$(jq -r .state "$D/verdict.json")" pass "$mode SDKs: the verdict"
        pass "$mode: Octokit, WebClient and Stripe with no base URL reached the twins"

        if ! command -v gh >/dev/null; then
                echo "note: gh (the GitHub CLI) is not installed: its part is not run here"
                continue
        fi
        run $mode "gh-$mode" ./gh-agent.sh
        out=$D/stdout.txt
        for line in "gh-issue-list 1 OPEN" "gh-issue-view 1 OPEN" \
                "gh-comment https://github.com/acme/api/issues/1#issuecomment-.*" \
                "gh-labels bug documentation enhancement feature good first issue question " "gh-repo acme/api"; do
                grep -qx "$line" "$out" || fail "$mode gh: '$line' missing: $(cat "$out" "$D/stderr.txt")"
        done
        tape_has "$D" github '"path":"[^"]*/graphql"'
        grep '"tool":"add_issue_comment"' "$D/github.tape.jsonl" | grep -q '/graphql.*gh by name' ||
                fail "$mode gh: no add_issue_comment row for the GraphQL comment"
        assert_eq "$(jq -r .state "$D/verdict.json")" fail "$mode gh: the verdict (no slack message)"
        pass "$mode: gh issue list/view/comment, label list and repo view with the default host reached the twin (GraphQL on the tape)"
done

# a vendor whose twin the sandbox does not have: refused, and the attempt recorded
sed 's/twins: \[github, slack, stripe\]/twins: [github]/; /code:slack/d' task.md >github-only.md
cat >stripe-agent.sh <<'EOF'
#!/usr/bin/env bash
cat >/dev/null
curl -sS -m 5 -o /dev/null -w '%{http_code}\n' https://api.stripe.com/v1/customers -u sk_test_x: 2>&1 | tail -1
EOF
chmod +x stripe-agent.sh
set +e
"$POME" run github-only.md --out runs --json -- ./stripe-agent.sh >gh-only.json 2>gh-only.err
set -e
D=$(jq -r '.trials[0].run_dir' gh-only.json)
assert_eq "$(jq -r '[.agent.seal.network.connections[] | select(.via == "tls" and .allowed == false) | .host] | join(",")' "$D/meta.json")" \
        api.stripe.com "the refused vendor name recorded"
[[ ! -s $D/stripe.tape.jsonl ]] || fail "a stripe tape in a sandbox without a stripe twin"
pass "a vendor whose twin is not in the sandbox: refused, recorded"

# the CA is the run's and the pod's alone: the host does not trust what the pod was shown
assert_eq "$(sha256sum /etc/ssl/certs/ca-certificates.crt /etc/hosts 2>/dev/null || true)" "$store" \
        "the host's CA store and /etc/hosts after the runs"
pass "the host's CA store and /etc/hosts are untouched"
