#!/usr/bin/env bash
# Isolation, asserted from outside the pod: its own cgroup with the memory and
# pids limits applied, a seccomp filter (Seccomp: 2), no_new_privs, its own
# namespaces (net, ipc, uts, pid, mnt), a non-root uid, no capabilities and only
# the expected fds.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
shopt -s extglob
[[ -d /sys/fs/cgroup/memory || -f /sys/fs/cgroup/cgroup.controllers ]] || skip "no cgroup memory controller here"
start_pomed "pod:" "  memory_max: 48M" "  pids_max: 24"
require_cgroups_active
create_sandbox github slack

status_field() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
cgroup_of() { # cgroup_of PID CONTROLLER → path of that controller's cgroup (v1) or the v2 one
        awk -F: -v c="$2" '($2 == c || ($1 == "0" && $2 == "")) { print $3; exit }' "/proc/$1/cgroup"
}

# the pod user pomed chose: pome-pod where the package made it, else nobody (pomed warns)
pod_user=$(curl -s "$CONTROL/healthz" | jq -r .isolation.pod_user)
[[ $pod_user == pome-pod || $pod_user == nobody ]] || fail "pomed's pod user is '$pod_user'"
for twin in github slack; do
        pid=$(jq -r ".per_twin.$twin.pod.pid" <<<"$CREATED")
        [[ $pid =~ ^[0-9]+$ ]] || fail "$twin: no pod pid in the create response"
        [[ -d /proc/$pid ]] || fail "$twin: pod $pid is not running"
        assert_eq "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "pome-pod --twin $twin " "$twin: command line"

        assert_eq "$(status_field "$pid" Seccomp)" 2 "$twin: Seccomp (2 = filter)"
        assert_eq "$(status_field "$pid" NoNewPrivs)" 1 "$twin: NoNewPrivs"
        for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
                assert_eq "$(status_field "$pid" $cap)" 0000000000000000 "$twin: $cap"
        done
        uid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")
        [[ $uid != 0 ]] || fail "$twin: pod runs as root"
        assert_eq "$(stat -c %U "/proc/$pid")" "$pod_user" "$twin: pod user"

        for ns in net ipc uts pid mnt; do
                [[ $(readlink "/proc/$pid/ns/$ns") != $(readlink "/proc/$POMED_PID/ns/$ns") ]] ||
                        fail "$twin: shares pomed's $ns namespace"
        done
        other=$(jq -r ".per_twin | del(.$twin) | .[].pod.pid" <<<"$CREATED")
        [[ $(readlink "/proc/$pid/ns/net") != $(readlink "/proc/$other/ns/net") ]] ||
                fail "$twin: shares a network namespace with its sibling pod"
        # No network: only a loopback device that is down.
        ifaces=$(nsenter -t "$pid" -n ip -o link 2>/dev/null | awk -F': ' '{print $2}' | tr '\n' ' ')
        [[ -z $ifaces || $ifaces == "lo " ]] || fail "$twin: network interfaces $ifaces"

        fds=$(ls "/proc/$pid/fd" | sort -n | tr '\n' ' ')
        assert_eq "$fds" "0 1 2 3 " "$twin: open fds"
        assert_eq "$(readlink "/proc/$pid/fd/0")" /dev/null "$twin: stdin"
        [[ $(readlink "/proc/$pid/fd/3") == socket:* ]] || fail "$twin: fd 3 is not the frame socket"

        if [[ -d /sys/fs/cgroup/memory ]]; then
                mem=$(cgroup_of "$pid" memory)
                pids=$(cgroup_of "$pid" pids)
                # named by the pod (made before it had a sandbox), and no other pod's
                [[ $mem == */pod-+([0-9a-f])-+([0-9]) ]] || fail "$twin: memory cgroup $mem is not a pod's own"
                [[ $pids == "${pids%/*}/${mem##*/}" ]] || fail "$twin: pids cgroup $pids is not the pod's own"
                assert_eq "$(wc -l <"/sys/fs/cgroup/memory$mem/cgroup.procs")" 1 "$twin: processes in its cgroup"
                assert_eq "$(cat /sys/fs/cgroup/memory$mem/memory.limit_in_bytes)" $((48 << 20)) "$twin: memory limit"
                assert_eq "$(cat /sys/fs/cgroup/pids$pids/pids.max)" 24 "$twin: pids limit"
                grep -qx "$pid" "/sys/fs/cgroup/memory$mem/cgroup.procs" || fail "$twin: pid not in its cgroup"
                assert_eq "$(jq -r ".per_twin.$twin.pod.cgroup" <<<"$CREATED")" "/sys/fs/cgroup/memory$mem" "$twin: reported cgroup"
        else
                cg=$(cgroup_of "$pid" "")
                assert_eq "$(cat "/sys/fs/cgroup$cg/memory.max")" $((48 << 20)) "$twin: memory.max"
                assert_eq "$(cat "/sys/fs/cgroup$cg/pids.max")" 24 "$twin: pids.max"
        fi
        # The root filesystem is read-only inside the pod.
        [[ $(awk '$5 == "/" { print $6 }' "/proc/$pid/mountinfo" | cut -d, -f1) == ro ]] ||
                fail "$twin: / is not read-only in the pod's mount namespace"
        pass "$twin pod $pid: seccomp, no_new_privs, no caps, uid $uid, own namespaces, own cgroup, fds 0-3"
done

pids=$(jq -r '.per_twin[].pod.pid' <<<"$CREATED")
cgs=$(jq -r '.per_twin[].pod.cgroup // empty' <<<"$CREATED")
discard "$SID"
for p in $pids; do
        [[ ! -d /proc/$p ]] || fail "pod $p still runs after the sandbox stopped"
done
for c in $cgs; do
        [[ ! -d $c ]] || fail "cgroup $c remains after the sandbox stopped"
done
pass "stop leaves no pod process and no cgroup directory"
