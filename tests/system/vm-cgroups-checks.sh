#!/bin/bash
# Runs inside the cgroup-v2 Debian 12 VM of test-vm-cgroups.sh, as the oneshot service
# pome-vm-checks.service after pomed.service, then powers the VM off. pomed is started the
# four ways an operator does — (a) by the packaged unit, (b) by systemd-run without
# Delegate=, (c) from a login-like scope in the background of a shell that keeps forking
# (20 times), (d) by a CI runner's service — and each time every pod must have its memory
# and pids limits (read from /sys/fs/cgroup) or the create must be refused with its reason,
# and the processes pomed was started beside must stay in their cgroup. One line per check
# in /root/vm-cgroups.out: "ok …", "refused …" or "FAIL …", then "DONE". Not run on the host.
set -u
OUT=/root/vm-cgroups.out
: >"$OUT"
out() { echo "$*" >>"$OUT"; }
cg_of() { awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup" 2>/dev/null; }

# mkconf NAME: /root/NAME/pomed.conf, a pomed of its own (ephemeral ports, no pool, no bus)
mkconf() {
        rm -rf "/root/$1"
        mkdir -p "/root/$1"
        cat >"/root/$1/pomed.conf" <<EOF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: /root/$1/state
bus: none
pool_size: 0
EOF
}
# wait_started NAME: until /root/NAME/state/pomed.json exists (120 s); sets URL and KEY
wait_started() {
        for _ in $(seq 1200); do
                [[ -f /root/$1/state/pomed.json ]] && break
                sleep 0.1
        done
        URL=$(jq -r .control_url "/root/$1/state/pomed.json" 2>/dev/null)
        KEY=$(head -1 "/root/$1/state/api-key" 2>/dev/null)
        [[ -n $URL && $URL != null ]]
}

# check_pods URL KEY LABEL TWIN…: a sandbox of the twins: each pod's cgroup has numbers in
# memory.max and pids.max; or the create is refused 503 isolation_unavailable
check_pods() {
        local url=$1 key=$2 label=$3 twins body st sid pid cg mem pids token
        shift 3
        twins=$(printf '"%s",' "$@")
        body=$(curl -s -m 120 -w '\n%{http_code}' -H "Authorization: Bearer $key" \
                -H 'Content-Type: application/json' -d "{\"twins\":[${twins%,}]}" "$url/v1/sandboxes")
        st=${body##*$'\n'} body=${body%$'\n'*}
        if [[ $st == 503 && $(jq -r .error.type <<<"$body") == isolation_unavailable ]]; then
                out "refused $label: $(jq -r .error.message <<<"$body")"
                return 0
        fi
        if [[ $st != 201 ]]; then
                out "FAIL $label: the create answered $st: $body"
                return 0
        fi
        sid=$(jq -r .session_id <<<"$body")
        for twin in "$@"; do
                pid=$(jq -r ".per_twin.$twin.pod.pid" <<<"$body")
                cg=$(cg_of "$pid")
                mem=$(cat "/sys/fs/cgroup$cg/memory.max" 2>/dev/null)
                pids=$(cat "/sys/fs/cgroup$cg/pids.max" 2>/dev/null)
                if [[ $mem =~ ^[0-9]+$ && $pids =~ ^[0-9]+$ ]]; then
                        out "ok $label: the $twin pod (pid $pid) in $cg: memory.max $mem, pids.max $pids"
                else
                        out "FAIL $label: the $twin pod (pid $pid) in '$cg': memory.max '$mem', pids.max '$pids'"
                fi
        done
        token=$(curl -s -m 60 -X DELETE -H "Authorization: Bearer $key" "$url/v1/sandboxes/$sid" |
                jq -r '.error.details.discard_token // empty')
        curl -s -m 60 -o /dev/null -X DELETE -H "Authorization: Bearer $key" \
                "$url/v1/sandboxes/$sid?confirm_discard=$token"
}

# (a) the packaged unit
for _ in $(seq 600); do systemctl is-active -q pomed && curl -sf -m 2 http://127.0.0.1:7070/healthz >/dev/null && break; sleep 0.2; done
out "note a-unit: pomed in $(cg_of "$(systemctl show -P MainPID pomed)")"
check_pods http://127.0.0.1:7070 "$(head -1 /var/lib/pome/api-key)" a-unit github slack

# (b) systemd-run, no Delegate=
mkconf b
systemd-run --quiet --unit=pomed-b /usr/sbin/pomed --config /root/b/pomed.conf
if wait_started b; then
        out "note b-systemd-run: pomed in $(cg_of "$(systemctl show -P MainPID pomed-b)")"
        check_pods "$URL" "$KEY" b-systemd-run github slack
else
        out "FAIL b-systemd-run: pomed did not start: $(journalctl -u pomed-b --no-pager -n 5 | tr '\n' ' ')"
fi
systemctl stop pomed-b

# (c) a login-like scope: a shell whose child keeps forking starts pomed in the background
mkconf c
cat >/root/c/run.sh <<'EOF'
set -u
(while :; do /bin/true; done) &
busy=$!
cg_of() { awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup" 2>/dev/null; }
before=$(cg_of $$)
rm -f /root/c/state/pomed.json
/usr/sbin/pomed --config /root/c/pomed.conf >>/root/c/pomed.log 2>&1 &
pomed=$!
for _ in $(seq 1200); do [[ -f /root/c/state/pomed.json ]] && break; sleep 0.1; done
echo "$before $(cg_of $$) $(cg_of $busy) $(cg_of $pomed)" >/root/c/cgroups
# the caller holds on until the checks are done: pomed and the loop stay in its scope
while [[ ! -e /root/c/done ]]; do sleep 0.1; done
kill $pomed
wait $pomed
kill $busy
EOF
for i in $(seq 20); do
        rm -f /root/c/done /root/c/cgroups
        : >/root/c/pomed.log
        systemd-run --quiet --scope --unit="login-c$i" bash /root/c/run.sh &
        runner=$!
        for _ in $(seq 1200); do [[ -s /root/c/cgroups ]] && break; sleep 0.1; done
        read -r before shell busy pomed_cg </root/c/cgroups 2>/dev/null || true
        if [[ -z ${before:-} || $before != "$shell" || $before != "$busy" ]]; then
                out "FAIL c$i: the caller was moved: its cgroup ${before:-?} → shell ${shell:-?}, loop ${busy:-?}"
        else
                out "ok c$i: the shell and its loop stay in $before; pomed in $pomed_cg"
        fi
        grep -q "cgroups unavailable" /root/c/pomed.log &&
                out "FAIL c$i: pomed lost its cgroup layer: $(grep -m1 'cgroups unavailable' /root/c/pomed.log)"
        if wait_started c; then
                check_pods "$URL" "$KEY" "c$i" github
        else
                out "FAIL c$i: pomed did not start: $(tail -3 /root/c/pomed.log | tr '\n' ' ')"
        fi
        touch /root/c/done
        wait "$runner"
done

# (d) a CI runner's service: the runner starts pomed, uses it, stops it
mkconf d
cat >/root/d/run.sh <<'EOF'
set -u
cg_of() { awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup" 2>/dev/null; }
before=$(cg_of $$)
/usr/sbin/pomed --config /root/d/pomed.conf >>/root/d/pomed.log 2>&1 &
pomed=$!
for _ in $(seq 1200); do [[ -f /root/d/state/pomed.json ]] && break; sleep 0.1; done
echo "$before $(cg_of $$) $(cg_of $pomed)" >/root/d/cgroups
while [[ ! -e /root/d/done ]]; do sleep 0.1; done
kill $pomed
wait $pomed
EOF
systemd-run --quiet --unit=runner-d --wait bash /root/d/run.sh &
runner=$!
for _ in $(seq 1200); do [[ -s /root/d/cgroups ]] && break; sleep 0.1; done
read -r before runner_cg pomed_cg </root/d/cgroups 2>/dev/null || true
if [[ -z ${before:-} || $before != "$runner_cg" ]]; then
        out "FAIL d-runner: the runner was moved: ${before:-?} → ${runner_cg:-?}"
else
        out "ok d-runner: the runner stays in $before; pomed in $pomed_cg"
fi
if wait_started d; then
        check_pods "$URL" "$KEY" d-runner github slack
else
        out "FAIL d-runner: pomed did not start: $(tail -3 /root/d/pomed.log | tr '\n' ' ')"
fi
touch /root/d/done
wait "$runner"

# (e) the package's checks on this cgroup-v2 machine
KEY=$(head -1 /var/lib/pome/api-key)
v=$(systemd-analyze verify --man=no /lib/systemd/system/pomed.service 2>&1)
exposure=$(systemd-analyze security pomed --no-pager 2>&1 | sed -n 's/.*Overall exposure level for pomed.service: //p')
[[ -z $v && -n $exposure ]] && out "ok package analyze: systemd-analyze verify clean; security: $exposure" ||
        out "FAIL package analyze: verify '$v', security '$exposure'"
# systemd stamps the watchdog when the unit becomes active, then at every WATCHDOG=1
active=$(systemctl show -P ActiveEnterTimestampMonotonic pomed)
for _ in $(seq 400); do
        wd=$(systemctl show -P WatchdogTimestampMonotonic pomed)
        ((wd > active + 1000000)) && break
        sleep 0.1
done
((wd > active + 1000000)) && out "ok package watchdog: WATCHDOG=1 $(((wd - active) / 1000000)) s after active" ||
        out "FAIL package watchdog: no WATCHDOG=1 (active at $active, stamp $wd)"
if pome doctor >/root/doctor.txt 2>&1 && grep -qE '^ok +cgroups' /root/doctor.txt; then
        out "ok package doctor: $(grep -E '^ok +cgroups' /root/doctor.txt)"
else
        out "FAIL package doctor: $(grep -vE '^ok' /root/doctor.txt | head -5 | tr '\n' ' ')"
fi
mkdir -p /etc/pome/pomed.conf.d
printf 'teams:\n  - id: local\n    sessions_quota: 7\n' >/etc/pome/pomed.conf.d/50-vm.conf
if systemctl reload pomed; then
        # no wait: systemctl reload returns once pomed has applied it
        q=$(curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:7070/v1/usage | jq .sessions_quota)
        [[ $q == 7 ]] && out "ok package reload: quota 7 as soon as systemctl reload returned" ||
                out "FAIL package reload: quota $q right after systemctl reload"
else
        out "FAIL package reload: systemctl reload pomed failed: $(journalctl -u pomed --no-pager -n 5 | tr '\n' ' ')"
fi
rm /etc/pome/pomed.conf.d/50-vm.conf
if systemctl restart pomed && systemctl is-active -q pomed &&
        curl -sf -m 5 http://127.0.0.1:7070/healthz >/dev/null; then
        out "ok package restart: active, pomed in $(cg_of "$(systemctl show -P MainPID pomed)")"
        check_pods http://127.0.0.1:7070 "$KEY" a-after-restart github
else
        out "FAIL package restart: $(systemctl status pomed --no-pager | tail -5 | tr '\n' ' ')"
fi

# (e2) users, the system bus, the journal and /metrics on this machine
useradd --create-home --shell /bin/sh alice
useradd --create-home --shell /bin/sh bob
usermod -aG pome alice
as() { # as USER CMD…: from /tmp, with that user's groups
        local u=$1
        shift
        runuser -u "$u" -- sh -c 'cd /tmp && exec "$@"' sh "$@"
}
if as alice pome sandbox create --twin github --secrets-file /tmp/alice.env >/root/alice.txt 2>&1; then
        sid=$(sh -c '. /tmp/alice.env && echo $POME_SESSION_ID')
        url=$(sh -c '. /tmp/alice.env && echo $POME_GITHUB_REST_URL')
        token=$(sh -c '. /tmp/alice.env && echo $POME_AUTH_TOKEN')
        title=$(as alice curl -s -H "Authorization: Bearer $token" "$url/repos/acme/api/issues/1" | jq -r .title)
        as alice pome sandbox stop "$sid" --discard >/dev/null 2>&1
        [[ -n $title && $title != null ]] && out "ok package alice: a member of pome created $sid, called its twin ('$title'), discarded it" ||
                out "FAIL package alice: the twin call of $sid gave no title"
else
        out "FAIL package alice: $(tail -3 /root/alice.txt | tr '\n' ' ')"
fi
if out_bob=$(as bob pome usage 2>&1); then
        out "FAIL package bob: bob (not in pome) read the team key"
else
        grep -q "group pome" <<<"$out_bob" && out "ok package bob: told to join the group pome" ||
                out "FAIL package bob: $out_bob"
fi
quota=$(as bob busctl --system --json=short get-property sh.pome.Supervisor1 /sh/pome/Supervisor1/team/local \
        sh.pome.Team1 SessionsQuota 2>&1 | jq -r .data 2>/dev/null)
if as alice busctl --system call sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 SetQuota su local 1 >/dev/null 2>&1; then
        out "FAIL package bus: alice may SetQuota"
elif [[ $quota =~ ^[0-9]+$ ]]; then
        out "ok package bus: bob reads SessionsQuota ($quota); alice may not SetQuota"
else
        out "FAIL package bus: bob cannot read SessionsQuota: $quota"
fi
if [[ -n ${sid:-} ]] && journalctl -u pomed -o json --no-pager | jq -se --arg sid "$sid" \
        'any(.[]; .MESSAGE_ID == "3f39e7c911b8423c9a59b79d6763f122" and .SANDBOX_ID == $sid and .TEAM == "local" and .REASON == "discarded")' >/dev/null; then
        out "ok package journal: $sid's end with SANDBOX_ID=, TEAM=, REASON=discarded, MESSAGE_ID="
else
        out "FAIL package journal: no end entry of ${sid:-?}"
fi
m=$(curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:7070/metrics | awk '$1 == "pome_slots_quota{team=\"local\"}" { print $2 }')
u=$(curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:7070/v1/usage | jq .sessions_quota)
[[ -n $m && $m == "$u" && $m == "$quota" ]] && out "ok package metrics: pome_slots_quota $m = /v1/usage = D-Bus" ||
        out "FAIL package metrics: /metrics '$m', /v1/usage '$u', D-Bus '$quota'"

# (f) the cgroup tests of the tree, through the installed binaries
if [[ -d /root/src/tests/integration ]]; then
        mkdir -p /root/build/supervisor /root/build/cli /root/build/pods
        ln -sf /usr/sbin/pomed /root/build/supervisor/pomed
        ln -sf /usr/bin/pome /root/build/cli/pome
        ln -sf /usr/libexec/pome/pome-pod /root/build/pods/pome-pod
        for t in test-isolation test-all-or-nothing test-pool test-restart-cgroup; do
                POME_SOURCE_DIR=/root/src POME_BUILD_DIR=/root/build timeout 400 \
                        bash "/root/src/tests/integration/$t.sh" >"/root/$t.log" 2>&1
                rc=$?
                case $rc in
                0) out "ok itest $t: $(grep -c '^ok:' "/root/$t.log") checks" ;;
                77) out "skip itest $t: $(grep -m1 'skip:' "/root/$t.log")" ;;
                *) out "FAIL itest $t (exit $rc): $(grep -m1 '^FAIL' "/root/$t.log") | $(tail -4 "/root/$t.log" | tr '\n' ' ')" ;;
                esac
        done
fi
if [[ -x /root/src/test-cgroup ]]; then
        if POME_SOURCE_DIR=/root/src timeout 120 /root/src/test-cgroup >/root/test-cgroup.log 2>&1; then
                out "ok unit test-cgroup"
        else
                out "FAIL unit test-cgroup (exit $?): $(tail -5 /root/test-cgroup.log | tr '\n' ' ')"
        fi
fi

# (f2) upgrade to a later version of the same package: the operator's pomed.conf is kept
if [[ -f /root/pome_next.deb ]]; then
        sed -i 's/sessions_quota: 10/sessions_quota: 9/' /etc/pome/pomed.conf
        next=$(dpkg-deb -f /root/pome_next.deb Version)
        if DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/pome_next.deb >/root/upgrade.log 2>&1 &&
                [[ $(dpkg-query -W -f '${Version}' pome) == "$next" ]] && systemctl is-active -q pomed; then
                for _ in $(seq 100); do curl -sf -m 2 http://127.0.0.1:7070/healthz >/dev/null && break; sleep 0.2; done
                q=$(curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:7070/v1/usage | jq .sessions_quota)
                [[ $q == 9 ]] && out "ok package upgrade: to $next, pomed.conf kept (quota 9), pomed active" ||
                        out "FAIL package upgrade: quota $q after the upgrade"
        else
                out "FAIL package upgrade: $(tail -3 /root/upgrade.log | tr '\n' ' '); $(systemctl is-active pomed)"
        fi
fi

# (g) stop: drained, no pod left
unit_procs() { find /sys/fs/cgroup/system.slice/pomed.service -name cgroup.procs -exec cat {} + 2>/dev/null; }
if systemctl stop pomed && [[ $(systemctl show -P MainPID pomed) == 0 && -z $(unit_procs) ]]; then
        out "ok package stop: the unit's pomed and pods are gone"
else
        out "FAIL package stop: left in the unit: $(unit_procs | tr '\n' ' ')"
fi

# (h) purge: no account, no file of the package
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -q pome >/root/purge.log 2>&1 &&
        ! getent passwd pome-pod >/dev/null && ! getent group pome >/dev/null &&
        [[ ! -e /usr/sbin/pomed && ! -e /var/lib/pome && ! -e /etc/pome ]]; then
        out "ok package purge: no pome-pod, no pome group, no /usr/sbin/pomed, /var/lib/pome or /etc/pome"
else
        out "FAIL package purge: $(tail -3 /root/purge.log | tr '\n' ' '); $(getent passwd pome-pod) $(getent group pome) $(ls -d /usr/sbin/pomed /var/lib/pome /etc/pome 2>/dev/null)"
fi

out "DONE"
sync
systemctl --no-block poweroff
