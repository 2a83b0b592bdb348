#!/usr/bin/env bash
# The passing agent of linear-triage/task.md, over Linear's GraphQL API as @linear/sdk calls
# it: reads the team, its workflow states, the labels, the users and the Backlog (with each
# issue's comments), then updates each issue, replies inside Sam's thread (parentId) and
# comments on the duplicate with the original's identifier.
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_LINEAR_REST_URL:?run me with pome run}"

team=$(lin 'query { teams { nodes { id key name } } }' | jq -er '.teams.nodes[] | select(.key == "ENG") | .id')
states=$(lin 'query($id: String!) { team(id: $id) { states { nodes { id name type } } } }' \
        "$(jq -nc --arg id "$team" '{id: $id}')" | jq -c '.team.states.nodes')
state() { jq -er --arg n "$1" '.[] | select(.name == $n) | .id' <<<"$states"; }
labels=$(lin 'query { issueLabels(first: 100) { nodes { id name } } }' | jq -c '.issueLabels.nodes')
label() { jq -er --arg n "$1" '.[] | select(.name == $n) | .id' <<<"$labels"; }
priya=$(lin 'query { users { nodes { id name email } } }' |
        jq -er '.users.nodes[] | select(.email == "priya@acme.test") | .id')

backlog=$(lin 'query($team: String!) {
  issues(first: 50, filter: {team: {id: {eq: $team}}, state: {name: {eq: "Backlog"}}}) {
    nodes { id identifier title description labels { nodes { id name } }
            comments { nodes { id body parent { id } user { name } } } }
  }
}' "$(jq -nc --arg t "$team" '{team: $t}')" | jq -c '.issues.nodes')
issue() { jq -ec --arg t "$1" '.[] | select(.title == $t)' <<<"$backlog"; }
bug=$(issue "Card payments fail for expired cards")
feature=$(issue "Export invoices as CSV")
dup=$(issue "Payments fail when the card has expired")

update() { # ISSUE_JSON INPUT_JSON
        lin 'mutation($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success issue { identifier state { name } } }
}' "$(jq -nc --arg id "$(jq -r .id <<<"$1")" --argjson in "$2" '{id: $id, input: $in}')" |
                jq -e '.issueUpdate.success' >/dev/null
}
comment() { # ISSUE_JSON BODY [PARENT_ID]
        local input
        input=$(jq -nc --arg i "$(jq -r .id <<<"$1")" --arg b "$2" --arg p "${3:-}" \
                '{issueId: $i, body: $b} + (if $p == "" then {} else {parentId: $p} end)')
        lin 'mutation($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { id } } }' \
                "$(jq -nc --argjson in "$input" '{input: $in}')" | jq -e '.commentCreate.success' >/dev/null
}
with_label() { jq -c --arg l "$2" '[.labels.nodes[].id] + [$l] | unique' <<<"$1"; }

update "$bug" "$(jq -nc --arg s "$(state Todo)" --argjson l "$(with_label "$bug" "$(label Bug)")" \
        --arg a "$priya" '{stateId: $s, labelIds: $l, assigneeId: $a, estimate: 3}')"
question=$(jq -er '.comments.nodes[] | select(.parent == null and .user.name == "Sam Lee") | .id' <<<"$bug")
comment "$bug" "Only customers whose saved card has expired are affected: other card payments go through. Scheduled for this cycle with Priya." "$question"

update "$feature" "$(jq -nc --argjson l "$(with_label "$feature" "$(label Feature)")" '{labelIds: $l}')"

original=$(jq -r .identifier <<<"$bug")
comment "$dup" "Duplicate of $original"
update "$dup" "$(jq -nc --arg s "$(state Canceled)" '{stateId: $s}')"

echo "$original: Bug, Todo, assigned to Priya, 3 points; answered Sam in his thread (expired cards only)."
echo "$(jq -r .identifier <<<"$feature"): Feature, left in Backlog."
echo "$(jq -r .identifier <<<"$dup"): duplicate of $original, Canceled."
