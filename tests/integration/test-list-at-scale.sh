#!/usr/bin/env bash
# ListSandboxes on D-Bus by an unprivileged user, with 300 000 records kept (issue 26): the
# registry is seeded with 300 000 ended records (copies of a real one, python3's sqlite3),
# then `nobody` — first in no team, then in local's unix_users — lists and pages again and
# again while an agent calls its twin. Each answer holds at most one page (1 000 rows), a
# twin call made meanwhile is answered, and pomed's resident memory grows by a bounded
# amount (where the unbounded list grew it by ~1 GB). The times are printed, not asserted:
# unit/test-registry shows, in SQLite's steps, that a page costs the same in a registry of
# any size (a page of one state had sorted all its records: 3.6 s here, the agent's call
# waiting behind it).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
source "$POME_SOURCE_DIR/tests/integration/dbus-lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

N=${RECORDS:-300000}
BUS=unix:path=$TMP/bus
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
# freed memory goes back at once, so that RSS measures what pomed holds, not ASan's quarantine
export ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=1:malloc_context_size=5
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$POMED_PID/status"; }
as_nobody() { "${NOBODY[@]}" busctl --address="$BUS" --timeout=60 --json=short call \
        sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 "$@"; }
# timed LABEL COMMAND…: runs COMMAND with its output in $TMP/out, prints how long it took
timed() {
        local label=$1 t0 t1
        shift
        t0=$(date +%s%N)
        "$@" >"$TMP/out"
        t1=$(date +%s%N)
        printf '%-44s %6d ms, %8d bytes\n' "$label" $(((t1 - t0) / 1000000)) "$(wc -c <"$TMP/out")"
}

start_bus "$TMP/bus"
start_pomed_on_bus "$BUS" "teams:" "  - id: local" "    sessions_quota: 10"
wait_name "$BUS"
# one real ended record, the model of the seeded ones
create_sandbox github
MODEL=$SID
api DELETE "/v1/sandboxes/$MODEL"
api DELETE "/v1/sandboxes/$MODEL?confirm_discard=$(jq -r .error.details.discard_token <<<"$BODY")"
assert_status 204 "discard the model sandbox"
stop_pomed || fail "pomed did not stop cleanly"

python3 - "$TMP/state/pome.db" "$MODEL" "$N" <<'EOF'
import json, random, sqlite3, string, sys
path, model, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(path)
team, state, created, ended, doc, ended_pc = db.execute(
    "SELECT team_id, state, created_at, ended_at, doc, ended_pc FROM sandboxes WHERE id = ?",
    (model,)).fetchone()
doc = json.loads(doc)
alphabet = string.ascii_letters + string.digits
rng = random.Random(26)
def rows():
    for i in range(n):
        sid = "ses_" + "".join(rng.choice(alphabet) for _ in range(16))
        doc["session_id"] = sid
        # older than the model, one a second (well inside the retention of 7 days)
        yield (sid, team, state, created - n + i, ended - n + i, json.dumps(doc), ended_pc)
with db:
    db.executemany("INSERT INTO sandboxes (id, team_id, state, created_at, ended_at, doc, ended_pc)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?)", rows())
print(db.execute("SELECT count(*) FROM sandboxes").fetchone()[0], "records,",
      db.execute("SELECT length(doc) FROM sandboxes WHERE id = ?", (model,)).fetchone()[0],
      "bytes of JSON each")
EOF

start_pomed_on_bus "$BUS" "teams:" "  - id: local" "    sessions_quota: 10"
wait_name "$BUS"
create_sandbox github
AGENT_TOKEN=$TOKEN
TWIN=$(rest_url github)
twin_call GET "$TWIN/user" "$AGENT_TOKEN"
assert_status 200 "a twin call before the lists"
api GET "/v1/sandboxes?state=all&limit=100"
assert_jq '.data | length' 100 "GET /v1/sandboxes?limit=100 on $N records"
assert_jq .has_more true "has_more on $N records"
rss0=$(rss_kib)
echo "pomed RSS with $N records kept, before the lists: $((rss0 / 1024)) MiB"

# nobody in no team: refused at once
if as_nobody ListSandboxes s all >"$TMP/out" 2>&1; then fail "nobody, in no team, listed: $(head -c 300 "$TMP/out")"; fi
grep -qi "access denied" "$TMP/out" || fail "nobody is not refused access: $(cat "$TMP/out")"
pass "nobody, in no team's unix_users, is refused ListSandboxes"

# nobody in local's unix_users: three whole lists, every state, and 30 pages, while the agent calls
sed -i 's/^    sessions_quota: 10$/&\n    unix_users: [nobody]/' "$TMP/pomed.conf"
kill -HUP "$POMED_PID"
wait_for "the reload" grep -q "reload: 1 team" "$TMP/pomed.log"
(
        for i in $(seq 200); do
                curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}\n' \
                        -H "Authorization: Bearer $AGENT_TOKEN" "$TWIN/user"
                sleep 0.05
        done
) >"$TMP/agent-calls" &
AGENT=$!
EXTRA_PIDS+=("$AGENT")
for i in 1 2 3; do
        timed "ListSandboxes(all) #$i" as_nobody ListSandboxes s all
        assert_eq "$(jq '.data[0] | length' "$TMP/out")" 1000 "rows of ListSandboxes(all) #$i"
done
for s in running ready stopped expired failed; do
        timed "ListSandboxes($s)" as_nobody ListSandboxes s "$s"
        rows=$(jq '.data[0] | length' "$TMP/out")
        ((rows <= 1000)) || fail "ListSandboxes($s) gave $rows rows"
done
after=
seen=0
for i in $(seq 30); do
        timed "ListSandboxesPage(all, 1000) page $i" as_nobody ListSandboxesPage sus all 1000 "$after"
        assert_eq "$(jq '.data[0] | length' "$TMP/out")" 1000 "rows of page $i"
        assert_eq "$(jq '.data[1]' "$TMP/out")" true "more after page $i"
        after=$(jq -r '.data[0][-1][0]' "$TMP/out")
        seen=$((seen + 1000))
done
kill "$AGENT" 2>/dev/null || true
wait "$AGENT" 2>/dev/null || true
rss1=$(rss_kib)
echo "pomed RSS after the lists: $((rss1 / 1024)) MiB (+$(((rss1 - rss0) / 1024)) MiB)"
calls=$(wc -l <"$TMP/agent-calls")
((calls > 0)) || fail "the agent made no call during the lists"
grep -v '^200 ' "$TMP/agent-calls" && fail "twin calls made during the lists were not answered 200"
echo "twin calls during the lists: $calls, slowest $(sort -k2 -n "$TMP/agent-calls" | tail -1 | cut -d' ' -f2) s"
# a flood: 40 listings at once, the agent calling meanwhile. pomed serves them one after
# the other; the agent's calls take turns with them instead of waiting behind them all
rm -f "$TMP/flood-done"
(
        while [[ ! -e $TMP/flood-done ]]; do
                curl -s -o /dev/null --max-time 30 -w '%{http_code} %{time_total}\n' \
                        -H "Authorization: Bearer $AGENT_TOKEN" "$TWIN/user"
                sleep 0.02
        done
) >"$TMP/flood-calls" &
AGENT=$!
EXTRA_PIDS+=("$AGENT")
sleep 0.3
t0=$(date +%s%N)
flood=()
for i in $(seq 40); do
        as_nobody ListSandboxes s stopped >/dev/null &
        flood+=($!)
done
for p in "${flood[@]}"; do wait "$p" || fail "a listing of the flood failed"; done
flood_ms=$((($(date +%s%N) - t0) / 1000000))
touch "$TMP/flood-done"
wait "$AGENT" 2>/dev/null || true
grep -v '^200 ' "$TMP/flood-calls" && fail "twin calls made during the flood were not answered 200"
slowest_ms=$(sort -k2 -n "$TMP/flood-calls" | tail -1 | awk '{ printf "%d", $2 * 1000 }')
echo "40 listings at once: $flood_ms ms in all; the agent's $(wc -l <"$TMP/flood-calls") calls meanwhile, slowest $slowest_ms ms"
((slowest_ms * 2 < flood_ms)) ||
        fail "an agent's call waited $slowest_ms ms behind the flood of $flood_ms ms (the listings went first)"
pass "a flood of 40 listings by nobody: the agent's calls took turns with them (slowest $slowest_ms of $flood_ms ms)"

# 38 lists of 1 000 rows: what one answer holds at a time, not what 300 000 records weigh
(((rss1 - rss0) < 64 * 1024)) || fail "pomed grew by $(((rss1 - rss0) / 1024)) MiB over the lists"
pass "nobody listed $N records in pages of 1 000 ($seen rows paged), every twin call meanwhile was answered, RSS +$(((rss1 - rss0) / 1024)) MiB"
