#!/usr/bin/env bash
# An HTTP mutation run against both listeners of this (ASan in the dev preset)
# pomed: a few thousand seeded random mutations of valid requests (framing, headers,
# methods, bytes, truncation, huge values, pipelining) in about 20 s. pomed must stay
# up, every answer must parse as HTTP (tests/mutation/http-mutate.mjs), a valid
# request must still work afterwards and the log must have no sanitizer report.
# POME_MUTATION_SEED / _COUNT / _SECONDS override the defaults (the seed is printed).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v node >/dev/null || skip "node is not installed"

SEED=${POME_MUTATION_SEED:-$(date +%s)}
start_pomed "limits:" "  header_timeout: 2s" "  body_timeout: 2s" "  max_body: 256K"
GP=${GATEWAY##*:}
CP=${CONTROL##*:}
create_sandbox github slack
echo "mutation seed: $SEED (rerun with POME_MUTATION_SEED=$SEED)"

rc=0
node "$SRC/tests/mutation/http-mutate.mjs" --gateway "$GP" --control "$CP" --token "$TOKEN" \
        --api-key "$API_KEY" --sid "$SID" --twins github,slack --seed "$SEED" \
        --count "${POME_MUTATION_COUNT:-5000}" --seconds "${POME_MUTATION_SECONDS:-20}" \
        --concurrency 8 --report "$TMP/mutation.json" >/dev/null || rc=$?
[[ -s $TMP/mutation.json ]] || fail "the mutation runner wrote no report (exit $rc)"
R=$(cat "$TMP/mutation.json")
kill -0 "$POMED_PID" 2>/dev/null || fail "pomed died during the mutation run (seed $SEED): $(jq -c '{cases, failures}' <<<"$R")"
if [[ $rc -ne 0 ]]; then
        jq '.failures' <<<"$R" >&2
        fail "answers that are not HTTP or an ignored Connection: close (seed $SEED): $(jq -c '{failure_count, closeNotHonoured}' <<<"$R")"
fi
cases=$(jq .cases <<<"$R")
((cases >= 1000)) || fail "only $cases cases ran (seed $SEED)"
pass "$(jq -r '"\(.cases) cases, \(.requests) requests in \(.elapsed_s) s: \(.responses) answers, all HTTP; statuses \(.statuses | to_entries | map("\(.key)×\(.value)") | join(" ")); no answer: \(.silent) closed, \(.clientGaveUp) waited on; \(.mhdBodies) with libmicrohttpd'"'"'s HTML body"' <<<"$R")"

# The run may end the sandbox legitimately (a mutated finalize), but no request may
# kill a pod: no pod_exited, protocol_error or pod_hung.
api GET "/v1/sandboxes/$SID"
state=$(jq -r '"\(.state // .error.details.state) \(.reason // .error.details.reason // "")"' <<<"$BODY")
echo "the mutated sandbox is now: $state"
[[ $state != *pod_exited* && $state != *protocol_error* && $state != *pod_hung* ]] ||
        fail "a mutated request killed a pod (seed $SEED): $state"
jq -r '.serverErrors[] | "5xx seen: \(.status) after \(.ops | join(",")): \(.request[0:100] | @json)"' <<<"$R"

# A valid request still works on both listeners (a new sandbox: the run may have
# ended the first one legitimately).
api GET /v1/usage
assert_status 200 "control API after the run"
discard "$SID"
create_sandbox github
twin_call GET "$(rest_url github)/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "gateway after the run"
stop_pomed || fail "pomed stopped unclean after the mutation run (seed $SEED)"
pass "pomed up, valid requests served, no sanitizer report"
