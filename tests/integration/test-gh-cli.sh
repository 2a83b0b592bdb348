#!/usr/bin/env bash
# The GitHub CLI against a sandbox (issue 25): gh 2.x, unmodified, with its default host, from
# a sealed agent's pod (where api.github.com is this sandbox's GitHub twin over TLS). Issues,
# comments, labels, the repository, and a pull request from a branch through its checks to
# its merge — REST and GraphQL as gh sends them — each with the output gh gives for the same
# world on github.com (gh's non-interactive formats), and the tape naming each change by the
# REST action that makes it.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v gh >/dev/null || skip "gh (the GitHub CLI) is not installed (apt-get install gh; scripts/setup.sh does)"
require_seal
start_pomed
cd "$TMP"

cat >task.md <<'EOF2'
# Work an issue and a pull request with gh

## Prompt
File the flaky-test issue, comment on #1, open a pull request from feat and merge it.

## Success Criteria
- [code:github] Issue #2 in `acme/api` has the `bug` label applied
- [code:github] A comment containing "looking into it" exists on issue #1 in `acme/api`
- [code:github] Pull request #3 in `acme/api` is merged

## Config
```yaml
twins: [github]
timeout: 60
```
EOF2

cat >gh-agent.sh <<'EOF2'
#!/usr/bin/env bash
cat >/dev/null
set -u
export GH_PROMPT_DISABLED=1 GH_NO_UPDATE_NOTIFIER=1 NO_COLOR=1
step() { echo "== $*"; "$@" 2>&1; echo "rc=$?"; }
R=(-R acme/api)
step gh issue list "${R[@]}"
step gh issue view 1 "${R[@]}"
step gh issue create "${R[@]}" -t "Flaky test in CI" -b "test_orders fails one run in ten" -l bug
step gh issue comment 1 "${R[@]}" -b "looking into it"
step gh repo view acme/api
step gh label list "${R[@]}"
main=$(gh api repos/acme/api/git/ref/heads/main --jq .object.sha)
gh api repos/acme/api/git/refs -f ref=refs/heads/feat -f sha="$main" >/dev/null
gh api -X PUT repos/acme/api/contents/NOTES.md -f message="Add notes" -f branch=feat \
        -f content="$(printf 'notes\n' | base64)" >/dev/null
step gh pr create "${R[@]}" -t "Add notes" -b "A notes file." -H feat -B main
n=$(gh pr list "${R[@]}" --json number -q '.[0].number')
head=$(gh api "repos/acme/api/pulls/$n" --jq .head.sha)
gh api "repos/acme/api/statuses/$head" -f state=success -f context=ci/test >/dev/null
step gh pr view "$n" "${R[@]}"
step gh pr checks "$n" "${R[@]}"
step gh pr list "${R[@]}"
step gh pr diff "$n" "${R[@]}"
step gh pr comment "$n" "${R[@]}" -b "noted"
step gh pr review "$n" "${R[@]}" --comment -b "reads well"
step gh pr review "$n" "${R[@]}" --approve
step gh pr close "$n" "${R[@]}"
step gh pr reopen "$n" "${R[@]}"
step gh pr merge "$n" "${R[@]}" --merge
step gh pr view "$n" "${R[@]}" --json state,mergedAt -q '"\(.state) \(.mergedAt != null)"'
step gh issue close 2 "${R[@]}"
step gh issue reopen 2 "${R[@]}"
step gh issue edit 1 "${R[@]}" --add-label enhancement --remove-label bug
step gh issue list "${R[@]}" --label enhancement
step gh search issues orders --repo acme/api
gh api repos/acme/api/releases -f tag_name=v1.0.0 -f name="First release" >/dev/null
step gh release list "${R[@]}"
EOF2
chmod +x gh-agent.sh

set +e
"$POME" run task.md --out runs --json -- ./gh-agent.sh >run.json 2>run.err
set -e
D=$(jq -r '.trials[0].run_dir' run.json)
[[ -d $D ]] || fail "no run directory: $(cat run.err)"
out=$D/stdout.txt
# section CMD: what gh printed for the step, without its "== " line
section() { awk -v h="== $1" '$0 == h {on = 1; next} /^== / {on = 0} on' "$out"; }
expect() { # expect CMD PATTERN WHAT: a line of the step's output matches
        section "$1" | grep -qE -- "$2" || fail "$3: $(section "$1" | head -30)"
}
expect "gh issue list -R acme/api" $'^1\tOPEN\t500 error on POST /orders after deploy\tbug\t' "gh issue list"
expect "gh issue list -R acme/api" '^rc=0$' "gh issue list: exit status"
expect "gh issue view 1 -R acme/api" $'^title:\t500 error on POST /orders after deploy$' "gh issue view: title"
expect "gh issue view 1 -R acme/api" $'^state:\tOPEN$' "gh issue view: state"
expect "gh issue view 1 -R acme/api" $'^labels:\tbug$' "gh issue view: labels"
expect "gh issue view 1 -R acme/api" '^Started failing right after the 14:00 deploy' "gh issue view: the body"
expect "gh issue create -R acme/api -t Flaky test in CI -b test_orders fails one run in ten -l bug" \
        '^https://github.com/acme/api/issues/2$' "gh issue create prints the new issue's URL"
expect "gh issue comment 1 -R acme/api -b looking into it" \
        '^https://github.com/acme/api/issues/1#issuecomment-[0-9]+$' "gh issue comment prints the comment's URL"
expect "gh repo view acme/api" $'^name:\tacme/api$' "gh repo view: name"
expect "gh label list -R acme/api" $'^bug\tSomething is not working\t#d73a4a$' "gh label list"
expect "gh pr create -R acme/api -t Add notes -b A notes file. -H feat -B main" \
        '^https://github.com/acme/api/pull/3$' "gh pr create prints the pull request's URL"
n=$(section "gh pr create -R acme/api -t Add notes -b A notes file. -H feat -B main" | grep -oE '[0-9]+$' | head -1)
expect "gh pr view $n -R acme/api" $'^title:\tAdd notes$' "gh pr view: title"
expect "gh pr view $n -R acme/api" $'^state:\tOPEN$' "gh pr view: state"
expect "gh pr view $n -R acme/api" $'^additions:\t1$' "gh pr view: additions"
expect "gh pr checks $n -R acme/api" $'^ci/test\tpass\t' "gh pr checks: the status"
expect "gh pr checks $n -R acme/api" '^rc=0$' "gh pr checks: all passing is exit 0"
expect "gh pr list -R acme/api" $'^'"$n"$'\tAdd notes\tfeat\tOPEN\t' "gh pr list"
expect "gh pr diff $n -R acme/api" '^\+\+\+ b/NOTES.md$' "gh pr diff: the file"
expect "gh pr diff $n -R acme/api" '^\+notes$' "gh pr diff: the line"
expect "gh pr comment $n -R acme/api -b noted" "^https://github.com/acme/api/pull/$n#issuecomment-[0-9]+$" "gh pr comment"
expect "gh pr review $n -R acme/api --comment -b reads well" '^rc=0$' "gh pr review --comment"
expect "gh pr review $n -R acme/api --approve" 'Can not approve your own pull request' \
        "gh pr review --approve of one's own pull request: GitHub's refusal"
expect "gh pr close $n -R acme/api" "Closed pull request #$n" "gh pr close"
expect "gh pr reopen $n -R acme/api" "Reopened pull request #$n" "gh pr reopen"
expect "gh pr merge $n -R acme/api --merge" '^rc=0$' "gh pr merge: exit status"
expect "gh pr view $n -R acme/api --json state,mergedAt -q \"\\(.state) \\(.mergedAt != null)\"" '^MERGED true$' \
        "gh pr view after the merge"
expect "gh issue close 2 -R acme/api" 'Closed issue #2 \(Flaky test in CI\)' "gh issue close"
expect "gh issue reopen 2 -R acme/api" 'Reopened issue #2 \(Flaky test in CI\)' "gh issue reopen"
expect "gh issue edit 1 -R acme/api --add-label enhancement --remove-label bug" \
        '^https://github.com/acme/api/issues/1$' "gh issue edit labels"
expect "gh issue list -R acme/api --label enhancement" $'^1\tOPEN\t500 error on POST /orders after deploy\tenhancement\t' \
        "gh issue list --label (GraphQL search)"
expect "gh search issues orders --repo acme/api" $'^acme/api\t1\topen\t500 error on POST /orders' "gh search issues"
expect "gh release list -R acme/api" $'^First release\tLatest\tv1.0.0\t' "gh release list"
pass "gh issue list/view/create/comment/close/reopen/edit, repo view, label list, search, release list, pr create/view/checks/list/diff/comment/review/close/reopen/merge: gh's own output"

# the tape: GraphQL calls, each change named by the REST action that makes it
# (gh sends some mutations at once, as two requests: their order is not its promise)
tools=$(jq -r 'select(.path | endswith("/graphql")) | select(.state_mutation) | .tool' "$D/github.tape.jsonl" | sort | tr '\n' ' ')
assert_eq "$tools" "add_issue_comment add_issue_comment add_issue_labels create_issue create_pull_request create_pull_request_review issue_write issue_write merge_pull_request remove_issue_label update_pull_request update_pull_request " \
        "the GraphQL changes on the tape, by REST tool"
assert_eq "$(jq -r .state "$D/verdict.json")" pass "the verdict"
pass "the tape names each GraphQL change by its REST tool; the run passes"
