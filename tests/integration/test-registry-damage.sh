#!/usr/bin/env bash
# A registry (pome.db) damaged or lost between two starts. A damaged one stops pomed with the
# file and the fix, whether the damage is the header (not a database) or a page inside
# (SQLite's quick_check at every start; integrity_check with --check-registry); pomed
# --rebuild-registry moves it aside and rebuilds the records from runs/. A deleted or
# 0-byte pome.db beside kept runs is rebuilt from them at start, and the journal says so; so
# are rows deleted from it and documents damaged inside a sound file (not JSON).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

DB=$TMP/state/pome.db
start_pomed
create_sandbox github
KEPT=$SID
api POST "/v1/sandboxes/$KEPT/finalize"
assert_status 200 "finalize"
create_sandbox slack
OTHER=$SID
discard "$OTHER"
stop_pomed || fail "pomed did not stop cleanly"
[[ -s $DB && ! -s $DB-wal ]] || fail "the registry is not checkpointed at stop"

# refused_start WHAT: pomed refuses to start, naming the file and the fix
refused_start() {
        : >"$TMP/pomed.log"
        "$POMED" --config "$TMP/pomed.conf" "$@" >>"$TMP/pomed.log" 2>&1 &
        local pid=$! status=0
        for _ in $(seq 100); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && { kill "$pid"; fail "pomed started on a damaged registry"; }
        wait "$pid" || status=$?
        [[ $status -ne 0 ]] || fail "pomed exited 0 on a damaged registry"
        grep -q "$DB is damaged\|$DB: file is not a database" "$TMP/pomed.log" ||
                fail "the refusal does not name $DB: $(cat "$TMP/pomed.log")"
        grep -q "pomed --rebuild-registry" "$TMP/pomed.log" ||
                fail "the refusal gives no fix: $(cat "$TMP/pomed.log")"
}
rebuild() {
        "$POMED" --config "$TMP/pomed.conf" --rebuild-registry >"$TMP/rebuild.log" 2>&1 ||
                fail "pomed --rebuild-registry failed: $(cat "$TMP/rebuild.log")"
        grep -q "rebuilt with 1 record" "$TMP/rebuild.log" ||
                fail "the rebuild does not say what it did: $(cat "$TMP/rebuild.log")"
        ls "$DB".damaged-* >/dev/null 2>&1 || fail "the damaged registry was not kept aside"
}
kept_again() { # the run's record is back, as it was
        start_pomed
        api GET "/v1/sandboxes/$KEPT"
        assert_status 200 "$1: the kept run's record"
        assert_jq .state done "$1: its state"
        api GET "/v1/sandboxes/$KEPT/events?twin=github"
        assert_status 200 "$1: its tape"
        stop_pomed || fail "pomed did not stop cleanly"
}

# 1. the header: not a database any more
cp "$DB" "$TMP/good.db"
printf 'garbage, not SQLite format 3\0' | dd of="$DB" bs=1 conv=notrunc status=none
refused_start
pass "a registry whose header is garbage stops pomed, naming the file and the fix"
rebuild
kept_again "after --rebuild-registry"
pass "pomed --rebuild-registry moved it aside and rebuilt the record from runs/"

# 2. a page inside: found by quick_check, though SQLite opens the file
cp "$TMP/good.db" "$DB"
rm -f "$DB".damaged-*
pages=$(($(stat -c %s "$DB") / 4096))
((pages >= 3)) || fail "the registry has only $pages pages"
for p in $(seq 1 $((pages - 1))); do
        head -c 4096 /dev/urandom | dd of="$DB" bs=4096 seek="$p" conv=notrunc status=none
done
refused_start
pass "a registry with damaged pages stops pomed (quick_check)"
rebuild
kept_again "after --rebuild-registry of damaged pages"

# 3. --check-registry: integrity_check, on a sound registry, starts
"$POMED" --config "$TMP/pomed.conf" --check-registry >>"$TMP/pomed.log" 2>&1 &
POMED_PID=$!
for _ in $(seq 100); do
        curl -s -o /dev/null "$(jq -r .control_url "$TMP/state/pomed.json" 2>/dev/null)/healthz" && break
        sleep 0.1
done
kill -0 "$POMED_PID" || fail "pomed --check-registry did not start on a sound registry"
stop_pomed || fail "pomed did not stop cleanly"
pass "--check-registry starts on a sound registry"

# 4. deleted, then 0 bytes: rebuilt from runs/ at start, and said
rm -f "$DB" "$DB-wal" "$DB-shm"
: >"$TMP/pomed.log"
kept_again "after pome.db was deleted"
grep -q "is new beside 1 kept run: their records are rebuilt from runs/" "$TMP/pomed.log" ||
        fail "the rebuild is not in the journal: $(cat "$TMP/pomed.log")"
: >"$DB"
rm -f "$DB-wal" "$DB-shm"
kept_again "after pome.db was emptied"
pass "a deleted or 0-byte registry beside kept runs is rebuilt from them at start, and said"

# 5. rows deleted, a document damaged (a sound SQLite file all the same): rebuilt from runs/
#    at start, and said; a damaged record with no run to rebuild it from is said too
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian: sqlite3)"
sqlite3 "$DB" "DELETE FROM sandboxes WHERE id = '$KEPT'"
: >"$TMP/pomed.log"
kept_again "after its row was deleted"
grep -q "lacked the records of 1 kept run (0 of them damaged" "$TMP/pomed.log" ||
        fail "the rebuild of a deleted row is not in the journal: $(cat "$TMP/pomed.log")"
sqlite3 "$DB" "UPDATE sandboxes SET doc = '#' || substr(doc, 2);
        INSERT INTO sandboxes (id, team_id, state, created_at, ended_at, doc, ended_pc)
        SELECT 'ses_norunkeptforit00', team_id, state, created_at, ended_at, doc, ended_pc
        FROM sandboxes WHERE id = '$KEPT'"
: >"$TMP/pomed.log"
kept_again "after its document was damaged"
grep -q "lacked the records of 1 kept run (1 of them damaged" "$TMP/pomed.log" ||
        fail "the rebuild of a damaged document is not in the journal: $(cat "$TMP/pomed.log")"
grep -q "holds 1 damaged record (not JSON) of sandboxes with no kept run" "$TMP/pomed.log" ||
        fail "the damaged record of the discarded sandbox is not said: $(cat "$TMP/pomed.log")"
pass "rows deleted or documents damaged inside a sound registry: rebuilt from runs/ at start, and said"
