# shellcheck shell=bash
# Helpers of tests/system/test-fleet.sh: three "hosts" as network namespaces, a 3-member
# etcd cluster across them, a pomed per host run the way its systemd unit runs it, and
# HAProxy (packaging/haproxy/pome.cfg) in front. Sourced, not run.
#
# The network (nothing touches the machine's own interfaces or its root namespace's
# addresses; every name starts with $ID, so two runs never meet):
#
#   $ID-net   two bridges: brf, the hosts' network (10.77.0.0/24), and bre, the etcd
#             network (10.77.1.0/24)
#   $ID-h1..3 host i: eth0 10.77.0.1i (pomed's control :7070 and gateway :7071), etcd0
#             10.77.1.1i (etcd member e<i>: clients :2379, peers :2380)
#   $ID-fr    the front: eth0 10.77.0.10 (HAProxy :7070 and :7071), etcd0 10.77.1.10 (the
#             operator's etcdctl); every client of the test runs here
#
# etcd has a link of its own so that "a node partitioned from etcd" is literally its etcd
# link down (`ip link set etcd0 down` in its namespace) while the front still reaches it.
set -eEuo pipefail
# a command that fails under set -e says where, instead of ending the test in silence
trap 'echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \"$BASH_COMMAND\" failed (status $?)" >&2; trap - ERR' ERR

BUILD=${POME_BUILD_DIR:?POME_BUILD_DIR is set by ctest}
SRC=${POME_SOURCE_DIR:?POME_SOURCE_DIR is set by ctest}
POMED=$BUILD/supervisor/pomed
POME=$BUILD/cli/pome
POD=$BUILD/pods/pome-pod

skip() {
        echo "skip: $*" >&2
        exit 77
}
pass() { echo "ok: $*"; }
fail() {
        echo "FAIL: $*" >&2
        local i
        for i in 1 2 3; do
                if [[ -f ${TMP:-/nonexistent}/n$i/pomed.log ]]; then
                        echo "--- n$i: pomed log (last 15 lines)" >&2
                        tail -15 "$TMP/n$i/pomed.log" >&2
                fi
        done
        if [[ -f ${TMP:-/nonexistent}/haproxy.log ]]; then
                echo "--- haproxy log (last 10 lines)" >&2
                tail -10 "$TMP/haproxy.log" >&2
        fi
        exit 1
}
assert_eq() { [[ "$1" == "$2" ]] || fail "${3:-values differ}: expected '$2', got '$1'"; }

[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, cgroups, pods)"
for bin in "$POMED" "$POME" "$POD"; do
        [[ -x $bin ]] || skip "$bin is not built"
done
for tool in ip:iproute2 nsenter:util-linux etcd:etcd-server etcdctl:etcd-client haproxy:haproxy jq:jq curl:curl \
        python3:python3; do
        command -v "${tool%%:*}" >/dev/null ||
                skip "${tool%%:*} is not installed (Debian: ${tool#*:}; scripts/setup.sh installs it)"
done
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"

ID=pf$$
NS_NET=$ID-net
NS_FR=$ID-fr
NS_H=("" "$ID-h1" "$ID-h2" "$ID-h3")
FRONT_IP=10.77.0.10
HOST_IP=("" 10.77.0.11 10.77.0.12 10.77.0.13)
ETCD_IP=("" 10.77.1.11 10.77.1.12 10.77.1.13)
CONTROL=http://$FRONT_IP:7070
GATEWAY=http://$FRONT_IP:7071
ENDPOINTS=http://${ETCD_IP[1]}:2379,http://${ETCD_IP[2]}:2379,http://${ETCD_IP[3]}:2379
PREFIX=/pome
TEAM=ci
LEASE_TTL=5 # seconds (fleet.lease_ttl)

TMP=$(mktemp -d /tmp/pome-fleet.XXXXXX)
chmod 755 "$TMP"
NAMESPACES=()
ETCD_PIDS=("" "" "" "")
UNIT_LOOPS=("" "" "" "")
NOTIFY_PIDS=("" "" "" "")
HAPROXY_PID=
declare -a EXTRA_PIDS=()

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# ms: the time in milliseconds; secs_since MS: seconds since then, as 1.234.
ms() { date +%s%3N; }
secs_since() {
        local d=$(($(ms) - $1))
        printf '%d.%03d\n' $((d / 1000)) $((d % 1000))
}

# in_ns NS CMD…: CMD in network namespace NS. nsenter, not `ip netns exec`: that forks, and
# mounts a sysfs of its own over /sys, which hides the cgroup hierarchies pomed puts its pods
# in. (A process started in the background whose pid matters calls nsenter itself: $! of a
# function is a subshell's.)
in_ns() {
        local ns=$1
        shift
        nsenter --net="/run/netns/$ns" -- "$@"
}
# fr CMD…: CMD on the front (where every client of the test runs).
fr() { in_ns "$NS_FR" "$@"; }

# ---- the network

# veth NS IFNAME ADDRESS/PREFIX BRIDGE PEER: a link from namespace NS onto BRIDGE.
veth() {
        local ns=$1 ifname=$2 addr=$3 br=$4 peer=$5
        ip -n "$NS_NET" link add "$peer" type veth peer name "$ifname" netns "$ns"
        ip -n "$NS_NET" link set "$peer" master "$br" up
        ip -n "$ns" addr add "$addr" dev "$ifname"
        ip -n "$ns" link set "$ifname" up
}

net_up() {
        local ns i
        for ns in "$NS_NET" "$NS_FR" "${NS_H[1]}" "${NS_H[2]}" "${NS_H[3]}"; do
                ip netns add "$ns"
                NAMESPACES+=("$ns")
                ip -n "$ns" link set lo up
        done
        for br in brf bre; do
                ip -n "$NS_NET" link add "$br" type bridge
                ip -n "$NS_NET" link set "$br" up
        done
        veth "$NS_FR" eth0 "$FRONT_IP/24" brf frf
        veth "$NS_FR" etcd0 10.77.1.10/24 bre fre
        for i in 1 2 3; do
                veth "${NS_H[i]}" eth0 "${HOST_IP[i]}/24" brf h${i}f
                veth "${NS_H[i]}" etcd0 "${ETCD_IP[i]}/24" bre h${i}e
        done
        # every host answers the front on both networks (a refused connection is an answer)
        for i in 1 2 3; do
                fr python3 -c "$REACH_PY" "${HOST_IP[i]}" "${ETCD_IP[i]}" ||
                        fail "host $i does not answer the front on the bridges"
        done
}

REACH_PY='
import socket, sys, time
for ip in sys.argv[1:]:
    for _ in range(50):
        try:
            socket.create_connection((ip, 9), timeout=0.2).close()
            break
        except ConnectionRefusedError:
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit(1)
'

net_down() {
        local ns
        for ns in "${NAMESPACES[@]}"; do
                ip netns del "$ns" 2>/dev/null || true
        done
        NAMESPACES=()
}

# ---- etcd

# etcd_start I: member e<I> in host I's namespace (a data dir that exists is a restart).
etcd_start() {
        local i=$1 ip=${ETCD_IP[$1]}
        mkdir -p "$TMP/etcd"
        nsenter --net="/run/netns/${NS_H[i]}" -- etcd --name "e$i" --data-dir "$TMP/etcd/e$i" \
                --listen-client-urls "http://$ip:2379" --advertise-client-urls "http://$ip:2379" \
                --listen-peer-urls "http://$ip:2380" --initial-advertise-peer-urls "http://$ip:2380" \
                --initial-cluster "e1=http://${ETCD_IP[1]}:2380,e2=http://${ETCD_IP[2]}:2380,e3=http://${ETCD_IP[3]}:2380" \
                --initial-cluster-token "$ID" --initial-cluster-state new \
                >>"$TMP/etcd/e$i.log" 2>&1 &
        ETCD_PIDS[i]=$!
}

etcd_kill() {
        local i=$1
        [[ -n ${ETCD_PIDS[i]} ]] || return 0
        kill -KILL "${ETCD_PIDS[i]}" 2>/dev/null || true
        wait "${ETCD_PIDS[i]}" 2>/dev/null || true
        ETCD_PIDS[i]=
}

# ectl ARG…: etcdctl from the front's operator address, against the three members.
ectl() { fr env ETCDCTL_API=3 etcdctl --endpoints="$ENDPOINTS" --dial-timeout=1s --command-timeout=3s "$@"; }

# etcd_wait_healthy [MEMBER…]: until each member (default all three) says it is healthy.
etcd_wait_healthy() {
        local members=("$@") i ok
        ((${#members[@]})) || members=(1 2 3)
        for _ in $(seq 1 150); do
                ok=1
                for i in "${members[@]}"; do
                        fr env ETCDCTL_API=3 etcdctl --endpoints="http://${ETCD_IP[i]}:2379" \
                                --dial-timeout=1s --command-timeout=2s endpoint health >/dev/null 2>&1 || ok=0
                done
                ((ok)) && return 0
                sleep 0.2
        done
        fail "etcd members ${members[*]} are not healthy after 30 s: $(tail -3 "$TMP/etcd/e${members[0]}.log")"
}

# slots_in_etcd: how many slot keys the team has in etcd right now.
slots_in_etcd() {
        ectl get --prefix --keys-only -w json "$PREFIX/slots/$TEAM/" | jq ".count // 0"
}

# ---- a pomed per host, run as its systemd unit (packaging/systemd/pomed.service) runs it
#
# Emulated, without systemd:
#   Type=notify, NotifyAccess=main  a datagram socket per node ($TMP/n<i>/notify.sock, a
#                                   python3 listener writing every message to notify.log);
#                                   started = READY=1 received (NotifyAccess not checked)
#   ExecStartPre=pomed --check-config   run before every start; its failure fails the start
#   WatchdogSec=30s                 WATCHDOG_USEC=30000000 in the environment; the pings are
#                                   recorded, not enforced
#   Restart=on-failure              a loop per node restarts pomed after RestartSec's default
#                                   100 ms unless it exited 0 or by SIGTERM/SIGINT/SIGHUP/
#                                   SIGPIPE (systemd's clean signals); kill -9 restarts it.
#                                   `unit_down I` makes the next exit final (the host died)
#   TimeoutStopSec=45s, KillMode=mixed  unit_stop: SIGTERM to the main pid alone, SIGKILL
#                                   after 45 s
#   StateDirectory, RuntimeDirectory  $STATE_DIRECTORY=$TMP/n<i>/state (0750),
#                                   $RUNTIME_DIRECTORY=$TMP/n<i>/run (0755)
#   StartLimitBurst, -IntervalSec   systemd's defaults: a 6th start within 10 s gives up
#   WorkingDirectory=/var/lib/pome  the state directory; UMask=0027; LimitNOFILE=65536 (or
#                                   the hard limit the test runs under, when lower);
#                                   the environment is systemd's: env -i plus PATH, LANG,
#                                   INVOCATION_ID, NOTIFY_SOCKET, WATCHDOG_USEC and the dirs
# Not emulated: Group=pome, the hardening (ProtectSystem=…, SystemCallFilter=…,
# CapabilityBoundingSet=…), Delegate=yes and the journal (stderr goes to pomed.log):
# tests/system/test-package.sh runs the real unit under systemd.

NOTIFY_PY='
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        msg = s.recv(65536).decode("utf-8", "replace")
        for line in msg.splitlines():
            out.write("%.3f %s\n" % (time.time(), line))
'

# node_conf I [YAML lines…]: writes node I's pomed.conf.
node_conf() {
        local i=$1 d=$TMP/n$1
        shift
        mkdir -p "$d/state" "$d/run"
        chmod 750 "$d/state"
        chmod 755 "$d/run" "$d"
        {
                echo "control_listen: ${HOST_IP[i]}:7070"
                echo "gateway_listen: ${HOST_IP[i]}:7071"
                echo "public_url: $GATEWAY"
                echo "state_dir: $d/state"
                echo "bus: none"
                echo "fleet:"
                echo "  node: n$i"
                echo "  advertise_url: http://${HOST_IP[i]}:7070"
                echo "  lease_ttl: ${LEASE_TTL}s"
                echo "  timeout: 1s"
                echo "  etcd:"
                echo "    endpoints: [http://${ETCD_IP[1]}:2379, http://${ETCD_IP[2]}:2379, http://${ETCD_IP[3]}:2379]"
                echo "    prefix: $PREFIX"
                for line in "$@"; do echo "$line"; done
        } >"$d/pomed.conf"
}

# unit_loop I: the service manager of node I (run in the background by unit_start).
unit_loop() {
        local i=$1 d=$TMP/n$1 rc pid nofile starts=()
        # LimitNOFILE=65536, or the hard limit this test runs under when that is lower
        nofile=$(ulimit -Hn)
        [[ $nofile == unlimited || $nofile -gt 65536 ]] && nofile=65536
        while :; do
                # StartLimitBurst=5 in StartLimitIntervalSec=10s (systemd's defaults)
                starts+=("$(ms)")
                if ((${#starts[@]} > 5 && starts[-1] - starts[-6] < 10000)); then
                        echo "$(date +%s.%N) start-limit-hit" >>"$d/unit.events"
                        return 0
                fi
                rc=0
                in_ns "${NS_H[i]}" "$POMED" --check-config --config "$d/pomed.conf" >>"$d/pomed.log" 2>&1 || rc=$?
                if ((rc != 0)); then
                        echo "$(date +%s.%N) start-pre-failed $rc" >>"$d/unit.events"
                        return 0
                fi
                nsenter --net="/run/netns/${NS_H[i]}" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
                        INVOCATION_ID="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" \
                        NOTIFY_SOCKET="$d/notify.sock" WATCHDOG_USEC=30000000 \
                        STATE_DIRECTORY="$d/state" RUNTIME_DIRECTORY="$d/run" \
                        ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
                        bash -c 'cd "$1" && umask 0027 && ulimit -n "$2" && shift 2 && exec "$@"' _ \
                        "$d/state" "$nofile" "$POMED" --config "$d/pomed.conf" >>"$d/pomed.log" 2>&1 &
                pid=$!
                echo "$pid" >"$d/main.pid"
                echo "$(date +%s.%N) started $pid" >>"$d/unit.events"
                rc=0
                wait "$pid" || rc=$?
                echo "$(date +%s.%N) exited $pid $rc" >>"$d/unit.events"
                rm -f "$d/main.pid"
                [[ ! -e $d/stopping && ! -e $d/down ]] || return 0
                case $rc in
                0 | 129 | 130 | 141 | 143) return 0 ;; # exit 0, SIGHUP, SIGINT, SIGPIPE, SIGTERM
                esac
                sleep 0.1 # RestartSec=100ms
                echo "$(date +%s.%N) restarting" >>"$d/unit.events"
        done
}

# unit_start I: `systemctl start` of node I: returns once it said READY=1.
unit_start() {
        local i=$1 d=$TMP/n$1 n
        rm -f "$d/stopping" "$d/down"
        if [[ -z ${NOTIFY_PIDS[i]} ]]; then
                rm -f "$d/notify.sock"
                python3 -c "$NOTIFY_PY" "$d/notify.sock" "$d/notify.log" </dev/null >/dev/null 2>&1 &
                NOTIFY_PIDS[i]=$!
                for _ in $(seq 1 50); do
                        [[ -S $d/notify.sock ]] && break
                        sleep 0.05
                done
        fi
        n=$(ready_count "$i")
        unit_loop "$i" </dev/null >>"$d/unit.log" 2>&1 &
        UNIT_LOOPS[i]=$!
        wait_ready "$i" $((n + 1))
}

# ready_count I: how many READY=1 node I has sent so far.
ready_count() { grep -c ' READY=1$' "$TMP/n$1/notify.log" 2>/dev/null || true; }

# wait_ready I N: until node I has sent its N-th READY=1 (at most 30 s); fails if its unit
# gave up.
wait_ready() {
        local i=$1 n=$2
        for _ in $(seq 1 300); do
                (($(ready_count "$i") >= n)) && return 0
                if [[ -n ${UNIT_LOOPS[i]} ]] && ! kill -0 "${UNIT_LOOPS[i]}" 2>/dev/null; then
                        fail "node n$i did not start: $(tail -3 "$TMP/n$i/unit.events" | tr '\n' ' ')"
                fi
                sleep 0.1
        done
        fail "node n$i sent no READY=1 within 30 s"
}

main_pid() { cat "$TMP/n$1/main.pid" 2>/dev/null || true; }

# unit_stop I: `systemctl stop`: SIGTERM to the main pid (KillMode=mixed), SIGKILL after
# TimeoutStopSec=45s. Sets STOP_RC (pomed's exit status) and STOP_SECONDS.
unit_stop() {
        local i=$1 d=$TMP/n$1 pid t0
        pid=$(main_pid "$i")
        touch "$d/stopping"
        t0=$(ms)
        [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 450); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
        wait "${UNIT_LOOPS[i]}" 2>/dev/null || true
        UNIT_LOOPS[i]=
        STOP_SECONDS=$(secs_since "$t0")
        STOP_RC=$(awk '$2 == "exited" { rc = $4 } END { print rc }' "$d/unit.events")
}

# unit_kill9 I: kill -9 of node I's main pid; Restart=on-failure brings it back unless
# unit_down I was said first.
unit_kill9() {
        local pid
        pid=$(main_pid "$1")
        [[ -n $pid ]] || fail "node n$1 has no main pid to kill"
        kill -KILL "$pid"
}
unit_down() { touch "$TMP/n$1/down"; }

# ---- HAProxy

haproxy_start() {
        cat >"$TMP/haproxy-global.cfg" <<EOF
global
        log stdout format raw local0
        stats socket $TMP/haproxy.sock mode 600 level admin
        maxconn 4096
EOF
        "$SRC/packaging/haproxy/pome-haproxy-nodes" "$SRC/packaging/haproxy/pome.cfg" \
                "n1=${HOST_IP[1]}" "n2=${HOST_IP[2]}" "n3=${HOST_IP[3]}" >"$TMP/pome.cfg"
        haproxy -c -q -f "$TMP/haproxy-global.cfg" -f "$TMP/pome.cfg" >"$TMP/haproxy-check.log" 2>&1 ||
                fail "haproxy -c refuses the generated configuration: $(cat "$TMP/haproxy-check.log")"
        nsenter --net="/run/netns/$NS_FR" -- haproxy -db -f "$TMP/haproxy-global.cfg" -f "$TMP/pome.cfg" >>"$TMP/haproxy.log" 2>&1 &
        HAPROXY_PID=$!
}

# ha CMD: a command on HAProxy's stats socket; prints the answer.
ha() {
        python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
out = b""
while True:
    b = s.recv(65536)
    if not b: break
    out += b
sys.stdout.write(out.decode())' "$TMP/haproxy.sock" "$1"
}

# pool_up: the servers of the control pool HAProxy sees UP, e.g. "n1 n2 n3".
pool_up() {
        ha "show stat" | awk -F, '$1 == "pome_control_pool" && $2 ~ /^n[0-9]+$/ && $18 == "UP" { print $2 }' |
                sort | xargs
}

# wait_pool WANT: until pool_up is WANT (at most 20 s).
wait_pool() {
        for _ in $(seq 1 200); do
                [[ $(pool_up) == "$1" ]] && return 0
                sleep 0.1
        done
        fail "HAProxy's control pool is '$(pool_up)', not '$1', after 20 s"
}

# ---- HTTP through the front (or to one node)

# capi METHOD PATH [BODY]: a control API call through the front; sets STATUS and BODY.
capi() { url_call "$CONTROL" "$@"; }
# napi I METHOD PATH [BODY]: the same, to node I directly.
napi() {
        local i=$1
        shift
        url_call "http://${HOST_IP[i]}:7070" "$@"
}
url_call() {
        local base=$1 method=$2 path=$3 data=${4:-}
        local args=(-s -o "$TMP/body" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $API_KEY")
        [[ -n $data ]] && args+=(-H 'Content-Type: application/json' --data-binary "$data")
        STATUS=$(fr curl "${args[@]}" "$base$path") || STATUS=000
        BODY=$(cat "$TMP/body" 2>/dev/null || true)
}

# twin_call METHOD URL AUTH-HEADER [CURL ARG…]: a twin call from the front; sets STATUS, BODY.
twin_call() {
        local method=$1 url=$2 auth=$3
        shift 3
        STATUS=$(fr curl -s -o "$TMP/body" -w '%{http_code}' -X "$method" ${auth:+-H "$auth"} "$@" "$url") ||
                STATUS=000
        BODY=$(cat "$TMP/body" 2>/dev/null || true)
}

# node_of SID: its node's number (ses_n2_… → 2).
node_of() {
        local n=${1#ses_n}
        echo "${n%%_*}"
}

# used_here I: node I's own open sandboxes of the team (its /v1/usage, asked directly).
used_here() {
        napi "$1" GET /v1/usage
        [[ $STATUS == 200 ]] || {
                echo "?"
                return
        }
        jq -r '.sessions_used_here // "?"' <<<"$BODY"
}

# used_fleet: the team's sessions_used through the front.
used_fleet() {
        capi GET /v1/usage
        jq -r '.sessions_used // "?"' <<<"$BODY"
}

# open_sids I: node I's open sandboxes of the team, one a line (asked directly).
open_sids() {
        local st
        for st in provisioning ready running; do
                napi "$1" GET "/v1/sandboxes?state=$st&limit=1000"
                [[ $STATUS == 200 ]] && jq -r '.data[].session_id' <<<"$BODY"
        done
        return 0
}

# discard SID: ends an open sandbox through the front, confirming the discard.
discard() {
        capi DELETE "/v1/sandboxes/$1"
        if [[ $STATUS == 409 ]]; then
                local t
                t=$(jq -r '.error.details.discard_token // empty' <<<"$BODY")
                capi DELETE "/v1/sandboxes/$1?confirm_discard=$t"
        fi
        [[ $STATUS == 204 || $STATUS == 410 ]] || fail "discard $1 answered $STATUS: $BODY"
}

# discard_all: every open sandbox of every running node, ended through the front.
discard_all() {
        local i sid
        for i in 1 2 3; do
                [[ -n $(main_pid "$i") ]] || continue
                for sid in $(open_sids "$i"); do discard "$sid"; done
        done
}

# wait_slots N [SECONDS]: until etcd holds N slot keys of the team (default 10 s); prints
# how long it took, in seconds.
wait_slots() {
        local want=$1 limit=${2:-10} t0
        t0=$(ms)
        while :; do
                [[ $(slots_in_etcd) == "$want" ]] && break
                (($(ms) - t0 > limit * 1000)) &&
                        fail "etcd holds $(slots_in_etcd) slot keys, not $want, after $limit s"
                sleep 0.05
        done
        secs_since "$t0"
}

# consistent WHAT [NODE…]: etcd's count, the front's /v1/usage and the sum of the nodes' own
# open sandboxes (those running, or the NODEs given) are one number (nothing lost or
# counted twice): sets SLOTS to it and CONSISTENT_DETAIL to the three.
consistent() {
        local what=$1 e u sum=0 i h here="" nodes
        shift
        nodes=("$@")
        ((${#nodes[@]})) || nodes=(1 2 3)
        for _ in $(seq 1 30); do # the nodes' watches follow etcd within moments
                e=$(slots_in_etcd)
                u=$(used_fleet)
                sum=0 here=""
                for i in "${nodes[@]}"; do
                        [[ -n $(main_pid "$i") ]] || continue
                        h=$(used_here "$i")
                        here+=" n$i=$h"
                        sum=$((sum + h))
                done
                [[ $e == "$u" && $e == "$sum" ]] && break
                sleep 0.2
        done
        [[ $e == "$u" && $e == "$sum" ]] ||
                fail "$what: etcd holds $e slots, /v1/usage says $u, the nodes hold$here"
        CONSISTENT_DETAIL="etcd $e = /v1/usage $u = the nodes' own (${here# })"
        SLOTS=$e
}

# cleanup: the EXIT trap. Everything started goes, then the namespaces; a sanitizer report
# in any pomed's log fails the test.
cleanup() {
        local rc=${1:-$?} i pid
        trap - EXIT
        set +e # a process already gone must not end the cleanup half-way
        trap - ERR
        for i in 1 2 3; do
                [[ -e $TMP/n$i ]] && touch "$TMP/n$i/stopping"
                pid=$(main_pid "$i")
                [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null
        done
        for i in 1 2 3; do
                pid=$(main_pid "$i")
                for _ in $(seq 1 150); do
                        [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || break
                        sleep 0.1
                done
                [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
                [[ -n ${UNIT_LOOPS[i]} ]] && wait "${UNIT_LOOPS[i]}" 2>/dev/null
        done
        for pid in "${EXTRA_PIDS[@]}" "$HAPROXY_PID" "${NOTIFY_PIDS[@]}"; do
                [[ -n $pid ]] && kill "$pid" 2>/dev/null
        done
        for i in 1 2 3; do etcd_kill "$i"; done
        wait 2>/dev/null
        net_down
        for i in 1 2 3; do
                if [[ -f $TMP/n$i/pomed.log ]] &&
                        grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/n$i/pomed.log"; then
                        echo "--- sanitizer report in n$i's pomed.log" >&2
                        grep -A30 -E "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/n$i/pomed.log" | head -60 >&2
                        rc=1
                fi
        done
        if [[ -n ${KEEP_TMP:-} ]]; then
                echo "kept: $TMP" >&2
        else
                rm -rf "$TMP"
        fi
        exit "$rc"
}
trap cleanup EXIT
