#!/usr/bin/env bash
# The sealed agent (issue 24): hostile agents, a shell one and a Node one, each run by a real
# `pome run` against a real pomed and graded, try what an agent under test must not manage,
# and each attempt is refused and visible in the run:
#   - read the team key (./.pome/api-key, the state directory), another run's directory, the
#     task file;
#   - connect to an address outside the allow-list (directly, and through the proxy), and to
#     a host on it through its raw IP; reach pomed's control API or another sandbox's twins;
#   - leave a setsid / double-forked child alive after the timeout (checked from the host:
#     no process, no cgroup, no tape row after the run);
#   - write 1 GB on stdout into the run; fork-bomb; eat memory past its limit — while
#     pomed keeps answering and its sandboxes keep working.
# And the good: the examples' agents pass sealed, and an agent that calls an allowed host
# through the proxy (a local HTTPS server behind an allowed name) reaches it, and fails with
# the refusal recorded when the host is not allowed.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
require_seal
# pomed.conf's agent: the defaults `pome run` beside it applies (pomed.json carries them)
start_pomed "agent: {memory: 1536M, pids: 384}"
cd "$TMP"

TRIAGE=$SRC/examples/triage
# [code] criteria only (no judge here), a short timeout for the escapers
sed 's/^timeout: 60$/timeout: 4/; /^- \[model\]/d' "$TRIAGE/task.md" >task.md
grep -q '^timeout: 4$' task.md || fail "could not make a 4 s task"

# What a user's directory holds: the embedded default's .pome with its team key, and the
# run directories of earlier runs
mkdir -p .pome runs/ses_earlier
echo "sekrit-team-key-of-dot-pome" >.pome/api-key
echo '{"secret":"an earlier run"}' >runs/ses_earlier/verdict.json
STATE_KEY=$TMP/state/api-key
CONTROL_PORT=${CONTROL##*:}

# the other sandbox, whose twins the agent must not reach
create_sandbox github
OTHER_SID=$SID
OTHER_URL=$(rest_url github)

# meta FILTER RUN_DIR
meta() { jq -r "$1" "$2/meta.json"; }

# ---------------------------------------------------------------- the shell agent
cat >hostile.sh <<EOF
#!/usr/bin/env bash
cat >/dev/null
try() { # try WHAT CMD…: "denied WHAT" when CMD fails, "LEAK WHAT: …" when it works
        local out
        if out=\$("\${@:2}" 2>&1); then echo "LEAK \$1: \${out:0:80}"; else echo "denied \$1"; fi
}
try dot-pome-key cat ./.pome/api-key
try state-key cat $STATE_KEY
try earlier-run cat runs/ses_earlier/verdict.json
try task-file cat $TMP/task.md
try direct-ip curl -sS --noproxy '*' -m 2 http://1.1.1.1/
try control-api curl -sS --noproxy '*' -m 2 http://127.0.0.1:$CONTROL_PORT/v1/usage
try proxy-name curl -sS -f -m 3 https://example.com/
# localhost:9 is allowed (below); its raw address is not
try proxy-raw-ip curl -sS -f -m 3 --noproxy '' --proxy "\$HTTPS_PROXY" http://127.0.0.1:9/
# the other sandbox's twins, through this sandbox's own way to the gateway
other=\$(sed "s|^http://[^/]*|\${POME_GITHUB_REST_URL%%/github/*}|" <<<"$OTHER_URL")
try other-sandbox curl -sS -f -m 3 -H "Authorization: Bearer \$POME_AUTH_TOKEN" "\$other/repos/acme/api/issues"
# its own twins work
echo "own-twin \$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer \$POME_AUTH_TOKEN" "\$POME_GITHUB_REST_URL/repos/acme/api/issues/1")"
# escapers: setsid, and a double fork, calling the twins until they are killed
setsid bash -c 'exec -a pome-escapee-marker bash ./escaper.sh' </dev/null >/dev/null 2>&1 &
( (exec -a pome-escapee-marker bash ./escaper.sh) & ) </dev/null >/dev/null 2>&1
echo "escapers started"
sleep 1000
EOF
chmod +x hostile.sh
cat >escaper.sh <<'EOF'
while :; do
        curl -s -o /dev/null -X POST -H "Authorization: Bearer $POME_AUTH_TOKEN" -H 'Content-Type: application/json' \
                --data '{"body":"escaped"}' "$POME_GITHUB_REST_URL/repos/acme/api/issues/1/comments"
        sleep 0.3
done
EOF

set +e
"$POME" run task.md --out runs --json --allow-net localhost:9 -- ./hostile.sh >sh.json 2>sh.err &
POME_PID=$!
wait $POME_PID
rc=$?
set -e
D=$(jq -r '.trials[0].run_dir' sh.json)
[[ -d $D ]] || fail "shell agent: no run directory: $(cat sh.err)"
assert_eq "$rc" 1 "shell agent: exit status (graded: fail)"
assert_eq "$(jq -r .result sh.json)" fail "shell agent: the result"
for what in dot-pome-key state-key earlier-run task-file direct-ip control-api proxy-name proxy-raw-ip other-sandbox; do
        grep -qx "denied $what" "$D/stdout.txt" || fail "shell agent: $what was not denied: $(cat "$D/stdout.txt")"
done
grep -q LEAK "$D/stdout.txt" && fail "shell agent: $(grep LEAK "$D/stdout.txt")"
grep -qx "own-twin 200" "$D/stdout.txt" || fail "shell agent: its own twin did not answer: $(cat "$D/stdout.txt")"
assert_eq "$(meta '.agent.seal.sealed' "$D")" true "shell agent: meta.json says sealed"
assert_eq "$(meta '.agent.timed_out' "$D")" true "shell agent: timed out"
# the refusals are in the run, naming what was asked for
assert_eq "$(meta '[.agent.seal.network.connections[] | select(.allowed == false) | .host] | sort | join(" ")' "$D")" \
        "127.0.0.1 example.com" "shell agent: the refused connections recorded"
[[ $(meta '.agent.seal.network.refused' "$D") -ge 2 ]] || fail "shell agent: refused count"
# from the host: nothing of it is left, nor its cgroup, and the tape stops growing
pgrep -f pome-escapee-marker >/dev/null && fail "an escaper outlived the run: $(pgrep -af pome-escapee-marker)"
left=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "pome-agents-$POME_PID" 2>/dev/null | head -1)
[[ -z $left ]] || fail "the agents' cgroup outlived the run: $left"
SID=$(jq -r '.trials[0].session_id' sh.json)
rows=$(wc -l <"$D/github.tape.jsonl")
sleep 1
api GET "/v1/sandboxes/$SID/events?twin=github&limit=1"
total=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $API_KEY" "$CONTROL/v1/sandboxes/$SID/events?twin=github&limit=1" | tr -d '\r' | sed -n 's/^X-Pome-Total-Events: //Ip')
assert_eq "$total" "$rows" "tape rows after the run (an escaper would add some)"
pass "shell agent: key, state, runs, task, direct IP, control API, proxy name and raw IP, other sandbox all refused and recorded; setsid and double-fork escapers dead, no cgroup left, the tape still"

# ---------------------------------------------------------------- the Node agent
cat >hostile.mjs <<EOF
import fs from 'node:fs';
import net from 'node:net';
import { spawn } from 'node:child_process';
const out = [];
const tryRead = (what, path) => {
  try { fs.readFileSync(path); out.push('LEAK ' + what); } catch (e) { out.push('denied ' + what + ' ' + e.code); }
};
tryRead('dot-pome-key', '.pome/api-key');
tryRead('state-key', '$STATE_KEY');
tryRead('ssh', '/root/.ssh/id_ed25519');
const connect = (what, port, host) => new Promise((res) => {
  const s = net.connect({ port, host, timeout: 2000 });
  s.on('connect', () => { out.push('LEAK ' + what); s.destroy(); res(); });
  s.on('error', (e) => { out.push('denied ' + what + ' ' + e.code); res(); });
  s.on('timeout', () => { out.push('denied ' + what + ' timeout'); s.destroy(); res(); });
});
await connect('direct-ip', 443, '1.1.1.1');
await connect('control-api', $CONTROL_PORT, '127.0.0.1');
// a detached child (setsid) that keeps going
spawn('sleep', ['1000'], { detached: true, stdio: 'ignore', argv0: 'pome-escapee-marker' }).unref();
console.log(out.join('\n'));
// then 1 GB on stdout
const chunk = Buffer.alloc(1 << 20, 0x61);
for (let i = 0; i < 1024; i++) { if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r)); }
EOF

set +e
"$POME" run task.md --out runs --json --output-max 1M -- node hostile.mjs >node.json 2>node.err
rc=$?
set -e
D=$(jq -r '.trials[0].run_dir' node.json)
[[ -d $D ]] || fail "Node agent: no run directory: $(cat node.err)"
assert_eq "$rc" 1 "Node agent: exit status (graded: fail)"
head -c 4096 "$D/stdout.txt" | grep -a -q LEAK && fail "Node agent: $(head -c 4096 "$D/stdout.txt" | grep -a LEAK)"
for what in dot-pome-key state-key ssh direct-ip control-api; do
        head -c 4096 "$D/stdout.txt" | grep -a -q "^denied $what" || fail "Node agent: $what not denied: $(head -c 300 "$D/stdout.txt")"
done
assert_eq "$(stat -c %s "$D/stdout.txt")" 1048576 "Node agent: stdout.txt kept at the cap"
assert_eq "$(meta '.agent.output | "\(.stdout_cut) \(.max_bytes)"' "$D")" "true 1048576" "Node agent: the cut is in meta.json"
[[ $(meta '.agent.output.stdout_bytes' "$D") -gt 1073741824 ]] || fail "Node agent: stdout bytes counted: $(meta .agent.output "$D")"
pgrep -f pome-escapee-marker >/dev/null && fail "the Node agent's detached child outlived the run"
pass "Node agent: key, state, ~/.ssh, direct IP, control API denied; 1 GB of stdout kept to 1 MiB with the cut recorded; its detached child dead"

# ---------------------------------------------------------------- limits
cat >bomb.sh <<'EOF'
#!/usr/bin/env bash
cat >/dev/null
bomb() { bomb | bomb & }
bomb
sleep 1000
EOF
chmod +x bomb.sh
set +e
"$POME" run task.md --local --out runs --json --agent-pids 64 -- ./bomb.sh >bomb.json 2>bomb.err
set -e
D=$(jq -r '.trials[0].run_dir' bomb.json)
[[ -d $D ]] || fail "fork bomb: no run directory: $(cat bomb.err)"
[[ $(meta '.agent.seal.limits_hit.pids_refused // 0' "$D") -gt 0 ]] || fail "fork bomb: the pids limit is not recorded as hit: $(meta .agent.seal "$D")"
pgrep -f "bomb.sh" >/dev/null && fail "the fork bomb outlived its run"
api GET /v1/usage
assert_status 200 "pomed after the fork bomb"
pass "fork bomb: held to 64 tasks, refusals counted ($(meta .agent.seal.limits_hit.pids_refused "$D")), nothing left"

cat >eat.mjs <<'EOF'
const hold = [];
for (;;) hold.push(Buffer.alloc(16 << 20, 1));
EOF
set +e
"$POME" run task.md --local --out runs --json --agent-memory 128M -- node eat.mjs >eat.json 2>eat.err
set -e
D=$(jq -r '.trials[0].run_dir' eat.json)
[[ -d $D ]] || fail "memory eater: no run directory: $(cat eat.err)"
assert_eq "$(meta '.agent | "\(.seal.oom_killed) \(.signal)"' "$D")" "true SIGKILL" "memory eater: OOM-killed, said in meta.json"
peak=$(meta '.agent.seal.limits_hit.memory_peak' "$D")
((peak <= 128 * 1024 * 1024 + 4096)) || fail "memory eater: peak $peak above the limit"
api GET "/v1/sandboxes/$OTHER_SID"
assert_status 200 "the other sandbox after the hostile agents"
assert_jq .state ready "the other sandbox is untouched"
pass "memory eater: OOM-killed at 128M (peak $peak), recorded; pomed and the other sandbox fine"

# an agent the pod could not see (under the host's /tmp, outside the working directory): said
# before anything starts, with what to do
hidden=$(mktemp /tmp/pome-hidden-agent.XXXXXX)
printf '#!/bin/sh\necho hi\n' >"$hidden"
chmod +x "$hidden"
set +e
"$POME" run task.md --local --out runs -- "$hidden" >hidden.out 2>&1
rc=$?
set -e
rm -f "$hidden"
assert_eq "$rc" 2 "an agent under the host's /tmp: refused as a usage error"
grep -q "which is under /tmp: the sealed pod has a /tmp of its own" hidden.out ||
        fail "an agent under the host's /tmp: $(cat hidden.out)"
grep -q -- "--no-seal" hidden.out || fail "the refusal does not say what to do: $(cat hidden.out)"
pass "an agent command naming a file the pod cannot see is refused up front, saying why"

# ---------------------------------------------------------------- the good
set +e
"$POME" run task.md --out runs --quiet -- "$TRIAGE/good-agent.sh" >good-sh.txt 2>&1
rc1=$?
"$POME" run task.md --out runs --quiet -- node "$TRIAGE/good-agent.mjs" >good-node.txt 2>&1
rc2=$?
set -e
assert_eq "$rc1" 0 "the shell good agent sealed: $(cat good-sh.txt)"
assert_eq "$rc2" 0 "the Node good agent (official SDKs from its node_modules) sealed: $(cat good-node.txt)"
D=$(ls -dt runs/*/ | head -1)
assert_eq "$(meta '.agent.seal.limits | "\(.memory_max) \(.pids_max)"' "$D")" "1610612736 384" \
        "pomed.conf's agent: defaults, when neither the task nor the command line says"
pass "the examples' good agents pass sealed, held to pomed.conf's agent: limits"

# an allowed model host through the proxy: a local HTTPS server behind a name this host
# resolves (its own hostname: not loopback's "localhost", which NO_PROXY sends direct)
NAME=$(hostname)
ADDR=$(getent ahostsv4 "$NAME" | awk 'NR == 1 {print $1}')
[[ -n $ADDR && $NAME != localhost ]] || skip "this host's name ($NAME) resolves to no IPv4 address for the model server"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=$NAME" \
        -addext "subjectAltName=DNS:$NAME" -keyout model.key -out model.crt 2>/dev/null
MODEL_PORT=$((20000 + RANDOM % 20000))
openssl s_server -quiet -accept "$ADDR:$MODEL_PORT" -www -cert model.crt -key model.key >/dev/null 2>&1 &
EXTRA_PIDS+=($!)
for _ in $(seq 50); do curl -s --noproxy '*' --cacert model.crt "https://$NAME:$MODEL_PORT/" >/dev/null && break; sleep 0.1; done
cat >model-agent.sh <<EOF
#!/usr/bin/env bash
cat >/dev/null
curl -sS -f -m 5 --cacert model.crt https://$NAME:$MODEL_PORT/ >/dev/null && echo "model reached" || echo "model refused"
EOF
chmod +x model-agent.sh
set +e
"$POME" run task.md --local --out runs --json --allow-net "$NAME:$MODEL_PORT" -- ./model-agent.sh >model.json 2>model.err
"$POME" run task.md --local --out runs --json -- ./model-agent.sh >nomodel.json 2>nomodel.err
set -e
D=$(jq -r '.trials[0].run_dir' model.json)
grep -qx "model reached" "$D/stdout.txt" || fail "the allowed model host was not reached: $(cat "$D/stdout.txt" "$D/stderr.txt")"
assert_eq "$(meta '[.agent.seal.network.connections[] | select(.via == "proxy") | "\(.host) \(.allowed)"] | join(",")' "$D")" \
        "$NAME true" "the proxied call recorded"
D=$(jq -r '.trials[0].run_dir' nomodel.json)
grep -qx "model refused" "$D/stdout.txt" || fail "the model host was reached without --allow-net"
assert_eq "$(meta '[.agent.seal.network.connections[] | select(.allowed == false) | .host] | join(",")' "$D")" \
        "$NAME" "the refusal recorded"
pass "an allowed model host over HTTPS through the proxy works; not allowed, it is refused and recorded"
