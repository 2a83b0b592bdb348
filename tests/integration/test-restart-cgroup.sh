#!/usr/bin/env bash
# A pomed restarted from another cgroup (another shell, another unit) still reaps what
# its predecessor left: the state directory records where the pod tree was. Leftovers
# here are a process that escaped into a pod's cgroup and the empty pod cgroups a
# kill -9 leaves; both go at the restart, which also reuses the stable runtime
# directory and removes the private ones older pomeds left behind.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
# Two cgroups pomed may be started in, A and B. v1/hybrid: below ours in every hierarchy
# pomed uses. v2: beside ours (ours holds this shell, which may not have children that
# take controllers: no internal processes), in its parent, whose controllers they get.
declare -A own
if [[ $(stat -fc %T /sys/fs/cgroup) == tmpfs ]]; then
        CTRLS=(memory pids cpu)
        for c in "${CTRLS[@]}"; do
                [[ -w /sys/fs/cgroup/$c ]] || skip "/sys/fs/cgroup/$c is not writable"
                rel=$(awk -F: -v c="$c" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup)
                own[$c]=/sys/fs/cgroup/$c${rel%/}
        done
else
        CTRLS=(memory) # one hierarchy: "memory" names it
        rel=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
        parent=$(dirname "/sys/fs/cgroup${rel%/}")
        [[ $rel != / && -w $parent ]] || skip "cgroup v2: the parent of this shell's cgroup ($parent) is not writable"
        own[memory]=$parent
fi
name=pome-test-$$
for side in A B; do
        for c in "${CTRLS[@]}"; do mkdir -p "${own[$c]}/$name-$side"; done
done
cleanup_cgroups() {
        for side in A B; do
                for c in "${CTRLS[@]}"; do
                        find "${own[$c]}/$name-$side" -depth -type d -exec rmdir {} + 2>/dev/null || true
                done
        done
}
trap 'rc=$?; cleanup_cgroups || true; cleanup $rc' EXIT

# A pomed that moves itself into cgroup $1 before it starts.
in_cgroup() {
        local side=$1 dirs=() c
        for c in "${CTRLS[@]}"; do dirs+=("${own[$c]}/$name-$side"); done
        cat >"$TMP/pomed-in-$side" <<WRAP
#!/usr/bin/env bash
for d in ${dirs[*]}; do echo \$\$ >"\$d/cgroup.procs"; done
exec "$BUILD/supervisor/pomed" "\$@"
WRAP
        chmod +x "$TMP/pomed-in-$side"
        POMED=$TMP/pomed-in-$side
}

in_cgroup A
start_pomed
grep -q "$name-A" "/proc/$POMED_PID/cgroup" || fail "pomed is not in cgroup A: $(cat "/proc/$POMED_PID/cgroup")"
create_sandbox github slack
OLD=$SID
leaf=$(jq -r .per_twin.github.pod.cgroup <<<"$CREATED")
[[ $leaf == *"$name-A"* ]] || fail "the pod's cgroup $leaf is not below cgroup A"
# The runtime directory is named after the state directory (its SHA-256), as the cgroup tree.
runtime=/run/pome-0-$(printf %s "$(realpath "$TMP/state")" | sha256sum | cut -c1-8)
[[ -S $runtime/notify ]] || fail "no notify socket in the runtime directory $runtime"
# A process that escaped into the pod's cgroups (not a pod process: PDEATHSIG spares it).
sleep 1000 &
stray=$!
EXTRA_PIDS+=("$stray") # killed by cleanup whatever happens: it holds ctest's output pipe
for c in "${CTRLS[@]}"; do
        echo "$stray" >"${own[$c]}${leaf#"${own[memory]}"}/cgroup.procs"
done
# An old-style private runtime directory of a pomed killed long ago. A pomed of a test
# running beside this one may sweep it first: that is the behaviour checked below too.
{ mkdir -p /run/pome.zzzzz9 &&
        { python3 -c "import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind('/run/pome.zzzzz9/notify')" ||
                : >/run/pome.zzzzz9/notify; }; } 2>/dev/null || true

kill -9 "$POMED_PID"
wait "$POMED_PID" 2>/dev/null || true
POMED_PID=
kill -0 "$stray" 2>/dev/null || fail "the stray process died with pomed (the test needs it alive)"
[[ -d $leaf ]] || fail "the pod cgroup $leaf vanished before the restart"

in_cgroup B
start_pomed
grep -q "$name-B" "/proc/$POMED_PID/cgroup" || fail "pomed is not in cgroup B"
for _ in $(seq 40); do kill -0 "$stray" 2>/dev/null || break; sleep 0.05; done
kill -0 "$stray" 2>/dev/null && fail "the process left in the predecessor's pod cgroup survived the restart"
wait "$stray" 2>/dev/null || true
[[ ! -d $leaf ]] || fail "the predecessor's pod cgroup $leaf survived the restart"
[[ -z $(find "${own[memory]}/$name-A" -mindepth 1 -type d) ]] ||
        fail "cgroups remain below A: $(find "${own[memory]}/$name-A" -mindepth 1 -type d)"
grep -q "pods left by a previous pomed (at " "$TMP/pomed.log" || fail "no log line about the reaped tree"
api GET "/v1/sandboxes/$OLD"
assert_jq .state failed
assert_jq .reason supervisor_restarted
[[ ! -e /run/pome.zzzzz9 ]] || fail "a stale /run/pome.* directory survived the start"
[[ -S $runtime/notify ]] || fail "the runtime directory $runtime was not reused"
create_sandbox github
leaf=$(jq -r .per_twin.github.pod.cgroup <<<"$CREATED")
[[ $leaf == *"$name-B"* ]] || fail "the new pod's cgroup $leaf is not below cgroup B"
discard "$SID"
pass "a pomed restarted from another cgroup reaped its predecessor's pods and cgroups"
stop_pomed || fail "pomed did not stop cleanly"
[[ ! -e $runtime ]] || fail "the runtime directory $runtime outlived a clean stop"
pass "stale runtime directories removed; the stable one reused and removed at a clean stop"
