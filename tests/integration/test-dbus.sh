#!/usr/bin/env bash
# pomed's D-Bus surface on a private, system-bus-like dbus-daemon that loads the packaged
# policy (packaging/dbus/sh.pome.Supervisor1.conf): introspection and the object tree, the
# Team1 properties against GET /v1/usage after create, stop, SetQuota and expiry, exactly one
# PropertiesChanged per change, SandboxStateChanged, who may mutate (the policy, and pomed
# itself on a misconfigured bus), and a bus that is missing at start or goes away later.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
source "$POME_SOURCE_DIR/tests/integration/dbus-lib.sh"

BUS=unix:path=$TMP/bus
TEAM=/sh/pome/Supervisor1/team/local
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

bctl() { busctl --address="$BUS" "$@"; }
team_prop() { bctl --json=short get-property sh.pome.Supervisor1 "$TEAM" sh.pome.Team1 "$1" | jq -r .data; }

# dsend [nobody] METHOD ARG…: a call of sh.pome.Supervisor1 with dbus-send, which prints the
# D-Bus error name (busctl prints only its message); sets OUT and RC.
dsend() {
        local pre=()
        if [[ $1 == nobody ]]; then
                pre=("${NOBODY[@]}")
                shift
        fi
        local method=$1
        shift
        set +e
        OUT=$("${pre[@]}" dbus-send --bus="$BUS" --print-reply --reply-timeout=20000 \
                --dest=sh.pome.Supervisor1 /sh/pome/Supervisor1 "sh.pome.Supervisor1.$method" "$@" 2>&1)
        RC=$?
        set -e
}
expect_ok() { [[ $RC -eq 0 ]] || fail "$1: expected success, got: $OUT"; }
expect_error() { # expect_error NAME WHAT [TEXT]
        [[ $RC -ne 0 && $OUT == "Error $1: "* ]] || fail "$2: expected $1, got (rc $RC): $OUT"
        [[ -z ${3:-} || $OUT == *"$3"* ]] || fail "$2: expected a message with '$3', got: $OUT"
}

# The Team1 properties say what GET /v1/usage says.
assert_usage_matches() {
        api GET /v1/usage
        assert_status 200 "usage"
        local used quota
        used=$(jq -r .sessions_used <<<"$BODY")
        quota=$(jq -r .sessions_quota <<<"$BODY")
        assert_eq "$(team_prop SessionsUsed)" "$used" "SessionsUsed vs sessions_used ($1)"
        assert_eq "$(team_prop SessionsQuota)" "$quota" "SessionsQuota vs sessions_quota ($1)"
}

# ---- a system-like bus with the packaged policy ----
start_bus "$TMP/bus"
start_pomed_on_bus "$BUS"
wait_name "$BUS"
grep -q "D-Bus: acquired sh.pome.Supervisor1 on $BUS" "$TMP/pomed.log" ||
        fail "no 'acquired' line in the log"
pass "pomed owns sh.pome.Supervisor1 on a private system-like bus"

bctl introspect sh.pome.Supervisor1 /sh/pome/Supervisor1 >"$TMP/introspect"
for line in ".ListTeams method - a(suuso) -" ".ListSandboxes method s a(ssssstt) -" \
        ".StopSandbox method sb - -" ".SetQuota method su - -" ".SandboxStateChanged signal ssss - -" \
        ".Version property s * const" ".MissingLayers property s * const"; do
        read -r name type sig result flags <<<"$line"
        awk -v m="$name" -v t="$type" -v s="$sig" -v r="$result" -v f="$flags" \
                '$1 == m && $2 == t && $3 == s && (r == "*" || $4 == r) && $NF == f { ok = 1 } END { exit !ok }' \
                "$TMP/introspect" || fail "introspection lacks '$line': $(cat "$TMP/introspect")"
done
curl -s "$CONTROL/healthz" >"$TMP/healthz"
assert_eq "$(bctl --json=short get-property sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 \
        Version | jq -r .data)" "$(jq -r .version "$TMP/healthz")" "Version vs /healthz"
assert_eq "$(bctl --json=short get-property sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 \
        MissingLayers | jq -r .data)" "$(jq -r .missing_layers "$TMP/healthz")" "MissingLayers vs /healthz"
bctl --json=short call sh.pome.Supervisor1 /sh/pome/Supervisor1 org.freedesktop.DBus.Introspectable \
        Introspect | jq -r '.data[0]' >"$TMP/introspect.xml"
for arg in '<arg type="s" name="id" direction="in"/>' '<arg type="b" name="discard" direction="in"/>' \
        '<arg type="u" name="quota" direction="in"/>' '<arg type="a(suuso)" name="teams" direction="out"/>' \
        '<arg type="s" name="reason"/>' '<arg type="a(ssssstt)" name="sandboxes" direction="out"/>'; do
        grep -qF "$arg" "$TMP/introspect.xml" || fail "introspection XML lacks $arg"
done
bctl tree sh.pome.Supervisor1 | grep -q "$TEAM\$" || fail "busctl tree lacks $TEAM: $(bctl tree sh.pome.Supervisor1)"
bctl introspect sh.pome.Supervisor1 "$TEAM" sh.pome.Team1 >"$TMP/team"
for p in "Id s const" "SessionsUsed u emits-change" "SessionsQuota u emits-change" \
        "PlanTier s emits-change"; do
        read -r name sig flags <<<"$p"
        awk -v m=".$name" -v s="$sig" -v f="$flags" '$1 == m && $2 == "property" && $3 == s && $NF == f { ok = 1 }
                END { exit !ok }' "$TMP/team" || fail "Team1 lacks $p: $(cat "$TMP/team")"
done
assert_eq "$(team_prop Id)" local "Team1.Id"
assert_eq "$(team_prop PlanTier)" self-hosted "Team1.PlanTier"
teams=$(bctl --json=short call sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 ListTeams)
assert_eq "$(jq -c '.data[0]' <<<"$teams")" '[["local",0,10,"self-hosted","/sh/pome/Supervisor1/team/local"]]' "ListTeams"
pass "introspection (names, flags), busctl tree and ListTeams"

# Every PropertiesChanged and SandboxStateChanged from now on, one JSON line each. A probe
# signal tells when the monitor is in place, and later that everything before it has arrived.
bctl monitor --json=short \
        --match="type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" \
        --match="type='signal',interface='sh.pome.Supervisor1',member='SandboxStateChanged'" \
        --match="type='signal',interface='sh.pome.Test',member='Probe'" \
        >"$TMP/monitor.json" 2>"$TMP/monitor.err" &
EXTRA_PIDS+=($!)
PROBES=0
probe() {
        PROBES=$((PROBES + 1))
        local want=$PROBES
        for _ in $(seq 1 100); do
                bctl emit /sh/pome/Test sh.pome.Test Probe
                for _ in $(seq 1 10); do
                        [[ $(grep -c '"member":"Probe"' "$TMP/monitor.json") -ge $want ]] && return 0
                        sleep 0.01
                done
        done
        fail "the monitor never saw probe $want"
}
probe
# Probes sent before the monitor listened were lost and the one that arrived may not be alone:
# count from what arrived.
PROBES=$(grep -c '"member":"Probe"' "$TMP/monitor.json")

# signals MEMBER: the monitor's messages of that member (fromjson? skips a line being written).
signals() { jq -cR --arg m "$1" 'fromjson? | select(.member == $m)' "$TMP/monitor.json"; }
changes() { signals PropertiesChanged | jq -c '.payload.data[1] | map_values(.data)'; }
n_changes() { changes | wc -l; }
wait_changes() { # wait_changes N WHAT: until N PropertiesChanged have been seen (10 s)
        for _ in $(seq 1 100); do
                [[ $(n_changes) -ge $1 ]] && return 0
                sleep 0.1
        done
        fail "$2: expected $1 PropertiesChanged, saw $(n_changes)"
}
states() { signals SandboxStateChanged | jq -r --arg id "$1" '.payload.data | select(.[0] == $id) | "\(.[2]):\(.[3])"' | paste -sd' '; }

create_sandbox github
A=$SID
wait_changes 1 "create"
assert_usage_matches "after a create"
assert_eq "$(team_prop SessionsUsed)" 1 "SessionsUsed after a create"
pass "create: SessionsUsed 1, same as /v1/usage"

list() { bctl --json=short call sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 ListSandboxes s "$1"; }
row=$(list running | jq -c --arg id "$A" '.data[0][] | select(.[0] == $id)')
[[ -n $row ]] || fail "ListSandboxes(running) lacks $A: $(list running)"
assert_eq "$(jq -r '.[1:5] | join("|")' <<<"$row")" "local|ready||github" "ListSandboxes row of $A"
created_usec=$(($(date -d "$(jq -r .created_at <<<"$CREATED")" +%s) * 1000000))
expires_usec=$(($(date -d "$(jq -r .expires_at <<<"$CREATED")" +%s) * 1000000))
assert_eq "$(jq -r '.[5]' <<<"$row")" "$created_usec" "created_at in µs since the epoch"
assert_eq "$(jq -r '.[6]' <<<"$row")" "$expires_usec" "expires_at in µs since the epoch"
assert_eq "$(list all | jq '.data[0] | length')" 1 "ListSandboxes(all)"
assert_eq "$(list "" | jq '.data[0] | length')" 1 "ListSandboxes(\"\")"
assert_eq "$(list ready | jq '.data[0] | length')" 1 "ListSandboxes(ready)"
assert_eq "$(list stopped | jq '.data[0] | length')" 0 "ListSandboxes(stopped)"
dsend ListSandboxes string:bogus
expect_error org.freedesktop.DBus.Error.InvalidArgs "ListSandboxes(bogus)" "Unknown state 'bogus'"
pass "ListSandboxes: rows, the state filter, InvalidArgs"

# ---- who may do what ----
"${NOBODY[@]}" busctl --address="$BUS" call sh.pome.Supervisor1 /sh/pome/Supervisor1 \
        sh.pome.Supervisor1 ListTeams >/dev/null || fail "nobody cannot ListTeams"
# ListSandboxes: to a user in no team's unix_users, nothing (AccessDenied, by pomed)
dsend nobody ListSandboxes string:running
expect_error org.freedesktop.DBus.Error.AccessDenied "ListSandboxes as nobody, in no team" \
        "in no team's unix_users"
assert_eq "$("${NOBODY[@]}" busctl --address="$BUS" get-property sh.pome.Supervisor1 "$TEAM" \
        sh.pome.Team1 SessionsUsed)" "u 1" "nobody reads SessionsUsed"
"${NOBODY[@]}" busctl --address="$BUS" introspect sh.pome.Supervisor1 /sh/pome/Supervisor1 >/dev/null ||
        fail "nobody cannot introspect"
dsend nobody SetQuota string:local uint32:1
expect_error org.freedesktop.DBus.Error.AccessDenied "SetQuota as nobody" "Rejected send message"
dsend nobody StopSandbox string:"$A" boolean:true
expect_error org.freedesktop.DBus.Error.AccessDenied "StopSandbox as nobody" "Rejected send message"
assert_usage_matches "after refused calls"
assert_eq "$(team_prop SessionsUsed)" 1 "the sandbox nobody tried to stop is still open"
pass "nobody reads teams, lists no team's sandboxes; the policy denies nobody SetQuota and StopSandbox"

dsend SetQuota string:local uint32:5
expect_ok "SetQuota(local, 5) as root"
wait_changes 2 "SetQuota"
assert_usage_matches "after SetQuota"
assert_eq "$(team_prop SessionsQuota)" 5 "SessionsQuota after SetQuota"
dsend SetQuota string:local uint32:5
expect_ok "SetQuota to the same quota"
dsend SetQuota string:nosuch uint32:5
expect_error sh.pome.Error.NoSuchTeam "SetQuota(nosuch)"
# pomed.conf's range: 2^32-1 was taken and /v1/usage then said -1
dsend SetQuota string:local uint32:4294967295
expect_error org.freedesktop.DBus.Error.InvalidArgs "SetQuota(2^32-1)" "out of range: 0 to 100000"
dsend SetQuota string:local uint32:100001
expect_error org.freedesktop.DBus.Error.InvalidArgs "SetQuota(100001)" "out of range"
assert_eq "$(team_prop SessionsQuota)" 5 "SessionsQuota after refused SetQuotas"
pass "root's SetQuota: /v1/usage shows sessions_quota 5; NoSuchTeam; out of range is InvalidArgs"

dsend StopSandbox string:"$A" boolean:false
expect_error sh.pome.Error.UngradedSession "StopSandbox without discard" "pass discard=true"
assert_eq "$(team_prop SessionsUsed)" 1 "an ungraded sandbox survives StopSandbox(discard=false)"
dsend StopSandbox string:ses_nosuch boolean:true
expect_error sh.pome.Error.NoSuchSandbox "StopSandbox(ses_nosuch)"
[[ -d $TMP/state/runs/$A ]] || fail "run directory of $A missing before the discard"
dsend StopSandbox string:"$A" boolean:true
expect_ok "StopSandbox(discard=true)"
# The reply waits for the teardown: the discarded run is already gone.
[[ ! -e $TMP/state/runs/$A ]] || fail "StopSandbox answered before $A's teardown finished"
wait_changes 3 "StopSandbox"
assert_usage_matches "after StopSandbox"
assert_eq "$(team_prop SessionsUsed)" 0 "SessionsUsed after StopSandbox"
dsend StopSandbox string:"$A" boolean:false
expect_ok "StopSandbox of an ended sandbox"
api GET "/v1/sandboxes/$A"
assert_jq .state stopped "state of $A over HTTP"
pass "StopSandbox: UngradedSession, NoSuchSandbox, discard answered after teardown, ended = no-op"

# ---- expiry ----
api POST /v1/sandboxes '{"twins":["slack"],"ttl_seconds":3,"idle_timeout_seconds":0}'
assert_status 201 "create with a 3 s lifetime"
B=$(jq -r .session_id <<<"$BODY")
wait_changes 4 "second create"
assert_usage_matches "after the second create"
for _ in $(seq 1 100); do
        [[ $(used) == 0 ]] && break
        sleep 0.1
done
assert_eq "$(used)" 0 "sessions_used once the 3 s lifetime is over"
wait_changes 5 "expiry"
assert_usage_matches "after expiry"
pass "expiry: SessionsUsed back to 0 with /v1/usage"

# ---- the signals, counted ----
probe
assert_eq "$(changes | paste -sd' ')" \
        '{"SessionsUsed":1} {"SessionsQuota":5} {"SessionsUsed":0} {"SessionsUsed":1} {"SessionsUsed":0}' \
        "PropertiesChanged, one per change, naming only what changed"
assert_eq "$(signals PropertiesChanged | jq -r .path | sort -u)" "$TEAM" \
        "PropertiesChanged path"
assert_eq "$(states "$A")" "provisioning: ready: stopped:discarded" "SandboxStateChanged of $A"
assert_eq "$(states "$B")" "provisioning: ready: expired:lifetime" "SandboxStateChanged of $B"
assert_eq "$(signals SandboxStateChanged | jq -r '.payload.data[1]' | sort -u)" \
        local "SandboxStateChanged team"
pass "exactly one PropertiesChanged per change (5), SandboxStateChanged for every transition"

# ---- ListSandboxes a page at a time, and to the users of a team ----
page() { bctl --json=short call sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 \
        ListSandboxesPage sus "$@"; }
assert_eq "$(page all 1 "" | jq -c '[.data[0][][0], .data[1]]')" "[\"$B\",true]" \
        "ListSandboxesPage(all, 1): the newest, and more"
assert_eq "$(page all 1 "$B" | jq -c '[.data[0][][0], .data[1]]')" "[\"$A\",false]" \
        "ListSandboxesPage(all, 1) after $B: the last"
dsend ListSandboxesPage string:all uint32:1001 string:
expect_error org.freedesktop.DBus.Error.InvalidArgs "ListSandboxesPage(limit 1001)" "1 to 1000"
dsend ListSandboxesPage string:all uint32:10 string:ses_nosuchsandbox00
expect_error org.freedesktop.DBus.Error.InvalidArgs "ListSandboxesPage after no sandbox" "starting_after"
api GET "/v1/sandboxes?state=all&limit=1&starting_after=$B"
assert_jq '[.data[].session_id, .has_more] | @json' "[\"$A\",false]" "GET /v1/sandboxes?starting_after="
# a reload names nobody in local's unix_users: nobody lists local's sandboxes
{
        sed '/^teams:/,$d' "$TMP/pomed.conf"
        echo "teams:"
        echo "  - id: local"
        echo "    sessions_quota: 10"
        echo "    unix_users: [nobody]"
} >"$TMP/pomed.conf.new"
mv "$TMP/pomed.conf.new" "$TMP/pomed.conf"
kill -HUP "$POMED_PID"
for _ in $(seq 100); do
        grep -q "reload: 1 team" "$TMP/pomed.log" && break
        sleep 0.05
done
"${NOBODY[@]}" busctl --address="$BUS" --json=short call sh.pome.Supervisor1 /sh/pome/Supervisor1 \
        sh.pome.Supervisor1 ListSandboxesPage sus all 10 "" >"$TMP/nobody-page" ||
        fail "nobody, in local's unix_users, cannot ListSandboxesPage"
assert_eq "$(jq -c '[.data[0][][0]]' "$TMP/nobody-page")" "[\"$B\",\"$A\"]" "nobody's page of local's sandboxes"
pass "ListSandboxesPage and GET /v1/sandboxes page by starting_after; a team's unix_users list its sandboxes"

# ---- a bus that is not there yet, then misconfigured, then gone and back ----
stop_pomed || fail "pomed did not stop cleanly"
BUS=unix:path=$TMP/bus2
from=$(($(wc -l <"$TMP/pomed.log") + 1))
log_since() { tail -n +"$from" "$TMP/pomed.log"; }
POMED_ARGS=-v start_pomed_on_bus "$BUS"
create_sandbox github
C=$SID
pass "with no bus at $BUS pomed serves HTTP (created $C)"
for _ in $(seq 1 100); do
        log_since | grep -q "cannot connect to $BUS: No such file or directory (again)" && break
        sleep 0.1
done
log_since | grep -q "cannot connect to $BUS: No such file or directory (again)" ||
        fail "pomed did not retry the missing bus within 10 s"
assert_eq "$(log_since | grep -c "warning D-Bus: cannot connect to $BUS")" 1 \
        "warnings for the missing bus (one, however many retries)"
start_bus "$TMP/bus2" loose
wait_name "$BUS"
assert_eq "$(log_since | grep -c "D-Bus: acquired sh.pome.Supervisor1 on $BUS")" 1 "acquisitions"
assert_usage_matches "a sandbox created before the bus came"
assert_eq "$(team_prop SessionsUsed)" 1 "SessionsUsed of the sandbox created before the bus came"
pass "pomed acquired the name once the bus appeared"

# This bus lets anyone call anything: pomed's own check is all that stands.
dsend nobody SetQuota string:local uint32:1
expect_error org.freedesktop.DBus.Error.AccessDenied "SetQuota as nobody on a loose bus" "for root only"
dsend nobody StopSandbox string:"$C" boolean:true
expect_error org.freedesktop.DBus.Error.AccessDenied "StopSandbox as nobody on a loose bus" "for root only"
assert_usage_matches "after refused calls on a loose bus"
assert_eq "$(team_prop SessionsUsed)" 1 "nobody stopped nothing on a loose bus"
pass "on a misconfigured bus pomed itself denies nobody SetQuota and StopSandbox"

stop_bus
for _ in $(seq 1 100); do
        log_since | grep -q "D-Bus: lost the connection to $BUS" && break
        sleep 0.1
done
log_since | grep -q "D-Bus: lost the connection to $BUS" || fail "pomed did not notice the bus going away"
api GET /v1/usage
assert_status 200 "usage with the bus gone"
start_bus "$TMP/bus2" loose
wait_name "$BUS"
assert_eq "$(log_since | grep -c "D-Bus: acquired sh.pome.Supervisor1 on $BUS")" 2 "acquisitions after the bus came back"
assert_usage_matches "after reconnecting"
dsend StopSandbox string:"$C" boolean:true
expect_ok "StopSandbox after reconnecting"
assert_usage_matches "after a stop after reconnecting"
assert_eq "$(team_prop SessionsUsed)" 0 "SessionsUsed after a stop after reconnecting"
pass "pomed reconnected after the bus went away and came back"
