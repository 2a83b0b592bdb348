#!/usr/bin/env bash
# The Debian package under a real systemd: build the .deb from this tree, boot a Debian 12
# root with systemd as PID 1 (systemd-nspawn), and do what an operator does — install,
# start, use from another directory and another user, reload, stop, upgrade, remove,
# purge — checking each through the real parts: systemctl, the system bus with the
# packaged policy, the journal, the control API and twin gateway, /proc.
# One boot for every check (CI budget); the root is cached in the build directory.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root (systemd-nspawn boots a container)"
require_tools mmdebstrap:mmdebstrap systemd-nspawn:systemd-container dpkg-buildpackage:dpkg-dev \
        dh:debhelper scdoc:scdoc lintian:lintian promtool:prometheus jq:jq
# systemd-nspawn needs a cgroup hierarchy it can give the container a piece of
[[ -d /sys/fs/cgroup/systemd || -f /sys/fs/cgroup/cgroup.controllers ]] ||
        skip "no name=systemd or unified cgroup hierarchy: systemd-nspawn cannot run a systemd here"

trap shutdown_root EXIT

# ---- the package
mkdir -p "$WORK"
build_deb
VERSION=$(dpkg-deb -f "$DEB" Version)
lintian --fail-on error "$DEB" >"$WORK/lintian.log" 2>&1 ||
        fail "lintian reports errors: $(cat "$WORK/lintian.log")"
pass "$(basename "$DEB") built with dpkg-buildpackage; lintian: no errors ($(grep -c '^[WI]:' "$WORK/lintian.log" || true) warnings/infos)"

# The same package as a later version, for the upgrade.
rm -rf "$WORK/next" && dpkg-deb -R "$DEB" "$WORK/next"
sed -i "s/^Version: .*/Version: $VERSION+systemtest1/" "$WORK/next/DEBIAN/control"
dpkg-deb -b -Zgzip "$WORK/next" "$WORK/pome_next.deb" >/dev/null
rm -rf "$WORK/next"

# ---- a Debian 12 root booted with systemd as PID 1
# What pome's libraries and the test's tools need, so that apt-get installs the package
# with no network (the container has none).
make_root "systemd,systemd-sysv,dbus,curl,jq,procps,libcgroup2,libcurl4,libjansson4,libmicrohttpd12,libseccomp2,libsqlite3-0,libssl3,libyaml-0-2"
cp "$DEB" "$WORK/pome_next.deb" "$ROOT/root/"
boot_root
pass "Debian 12 booted with systemd as PID 1 ($(in_root systemctl --version | head -1))"

in_root useradd --create-home --shell /bin/sh alice
in_root useradd --create-home --shell /bin/sh bob
# Everything on disk before the package, to compare with after the purge.
snapshot() {
        in_root find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
                -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \
                -o -path /root/pome_next.deb -o -path /root/pome_"$VERSION"_amd64.deb \
                -o -path /var/lib/systemd/timers -o -path /var/lib/systemd/catalog \) -prune -o -print |
                sort
}
snapshot >"$WORK/before.txt"

# ---- install
in_root sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/$(basename "$DEB")" \
        >"$WORK/install.log" 2>&1 || fail "apt-get install failed: $(tail -20 "$WORK/install.log")"
for f in /usr/bin/pome /usr/sbin/pomed /usr/libexec/pome/pome-pod /usr/share/pome/sandbox-images \
        /usr/share/pome/policies /lib/systemd/system/pomed.service \
        /usr/share/dbus-1/system.d/sh.pome.Supervisor1.conf /usr/lib/sysusers.d/pome.conf \
        /usr/lib/tmpfiles.d/pome.conf /etc/pome/pomed.conf /usr/share/man/man8/pomed.8.gz \
        /usr/share/man/man1/pome.1.gz /usr/share/man/man5/pomed.conf.5.gz \
        /usr/share/bash-completion/completions/pome; do
        in_root test -e "$f" || fail "the package did not install $f"
done
in_root getent passwd pome-pod >/dev/null || fail "sysusers.d did not create pome-pod"
in_root getent group pome >/dev/null || fail "sysusers.d did not create group pome"
in_root usermod -aG pome alice
assert_eq "$(in_root systemctl is-active pomed)" active "pomed after apt-get install"
assert_eq "$(in_root systemctl is-enabled pomed)" enabled "pomed enabled"
pass "apt-get install ./$(basename "$DEB"): files in place, pome-pod and pome created, pomed enabled and active"

out=$(in_root systemd-analyze verify --man=no /lib/systemd/system/pomed.service 2>&1) ||
        fail "systemd-analyze verify: $out"
[[ -z $out ]] || fail "systemd-analyze verify is not clean: $out"
exposure=$(in_root systemd-analyze security pomed --no-pager 2>&1 | sed -n 's/.*Overall exposure level for pomed.service: //p')
[[ -n $exposure ]] || fail "systemd-analyze security printed no exposure"
pass "systemd-analyze verify: clean; systemd-analyze security: $exposure"

# ---- start: active only once READY=1 came, and READY=1 only once every surface answers
in_root systemctl stop pomed
in_root systemctl start pomed || fail "systemctl start pomed failed"
# at once, with no retry: systemctl start returned, so both listeners and the name are up
status=$(in_root curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:7070/healthz)
assert_eq "$status" 200 "control API right after systemctl start"
status=$(in_root curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:7071/healthz || true)
[[ $status =~ ^[0-9]{3}$ && $status != 000 ]] || fail "twin gateway not answering right after systemctl start"
in_root busctl status sh.pome.Supervisor1 >/dev/null || fail "sh.pome.Supervisor1 not on the bus right after systemctl start"
in_root journalctl -u pomed -o json --no-pager >"$WORK/journal.json"
ready_ts=$(jq -rs '[.[] | select(.MESSAGE_ID == "0b48ed2c87104d138afe69b9aa66f1dd")] | last | .__MONOTONIC_TIMESTAMP' "$WORK/journal.json")
acquired_ts=$(jq -rs '[.[] | select(.MESSAGE | tostring | test("D-Bus: acquired sh.pome.Supervisor1"))] | last | .__MONOTONIC_TIMESTAMP' "$WORK/journal.json")
started_ts=$(jq -rs '[.[] | select(.MESSAGE_ID == "39f53479d3a045ac8e11786248231fbf")] | last | .__MONOTONIC_TIMESTAMP' "$WORK/journal.json")
[[ $ready_ts != null && $started_ts != null && $acquired_ts != null ]] ||
        fail "journal lacks pomed's ready entry, its D-Bus acquisition or systemd's Started entry"
((acquired_ts <= ready_ts && ready_ts <= started_ts)) ||
        fail "order: D-Bus name at $acquired_ts, READY at $ready_ts, systemd 'Started' at $started_ts"
assert_eq "$(in_root systemctl show -P Type pomed)" notify "Type="
status_text=$(in_root systemctl show -P StatusText pomed)
[[ $status_text == "Serving: 0 sandboxes open (0 of 10 slots)"* ]] || fail "StatusText: $status_text"
watchdog=$(in_root systemctl show -P WatchdogUSec pomed)
[[ $watchdog == 30s ]] || fail "WatchdogUSec: $watchdog"
pass "systemctl start returns once READY=1: listeners and bus name up before it (D-Bus $acquired_ts ≤ READY $ready_ts ≤ Started $started_ts µs); STATUS='$status_text'"

# The dashboard, as the package installs it: /usr/share/pome/ui served at /ui/ by the unit.
ui=$(in_root curl -s -D - http://127.0.0.1:7070/ui/app.js -o /dev/null)
grep -qi '^content-security-policy: .*default-src .self.' <<<"$ui" || fail "GET /ui/app.js: no CSP: $ui"
cmp -s <(in_root cat /usr/share/pome/ui/app.js) "$SRC/ui/app.js" || fail "/usr/share/pome/ui/app.js is not ui/app.js"
in_root curl -s http://127.0.0.1:7070/ui/ | grep -q '<script src="app.js"' || fail "GET /ui/ is not the dashboard"
pass "the dashboard: /usr/share/pome/ui served at /ui/ by the unit, with its CSP"

# The cgroup layer is missing in this container (v1 controllers read-only) and pomed says so.
health=$(in_root curl -s http://127.0.0.1:7070/healthz)
jq -e '.missing_layers | test("cgroups")' <<<"$health" >/dev/null ||
        fail "pomed does not report the missing cgroup layer: $health"
jq -rs '.[] | select(.MESSAGE_ID == "567344ca32a84e4c9ebd1e21fd224240") | .MESSAGE' "$WORK/journal.json" |
        grep -q cgroups || fail "no journal entry names the missing cgroup layer"
KEY=$(in_root head -1 /var/lib/pome/api-key)
out=$(in_root curl -s -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
        -d '{"twins":["github"]}' http://127.0.0.1:7070/v1/sandboxes)
assert_eq "$(jq -r .error.type <<<"$out")" isolation_unavailable "a create without the cgroup layer"
pass "the read-only v1 controllers: pomed runs, names the missing layer ($(jq -r .missing_layers <<<"$health")) and refuses creates: $(jq -r .error.message <<<"$out" | cut -c1-80)…"
# this container cannot give cgroups: the operator's opt-in, for the checks that follow
in_root sh -c 'echo "allow_unlimited_pods: true" >/etc/pome/pomed.conf.d/40-container.conf'
in_root systemctl restart pomed || fail "systemctl restart pomed with allow_unlimited_pods"

# ---- the system bus, through the packaged policy
TEAM=/sh/pome/Supervisor1/team/local
prop() { as_user "$1" busctl --system --json=short get-property sh.pome.Supervisor1 "$TEAM" sh.pome.Team1 "$2" | jq -r .data; }
assert_eq "$(prop bob SessionsUsed)" 0 "SessionsUsed as bob"
assert_eq "$(prop bob SessionsQuota)" 10 "SessionsQuota as bob"
out=$(as_user alice busctl --system call sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 SetQuota su local 1 2>&1) &&
        fail "SetQuota as alice succeeded"
grep -qi "access denied\|AccessDenied" <<<"$out" || fail "SetQuota as alice: $out"
assert_eq "$(prop bob SessionsQuota)" 10 "quota after a denied SetQuota"
in_root busctl --system call sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 SetQuota su local 10 >/dev/null ||
        fail "SetQuota as root was refused"
pass "system bus: non-root reads SessionsUsed/SessionsQuota; SetQuota denied to alice ($out), allowed to root"

# ---- pome from /tmp: root, then alice (group pome); bob (not in it) is told how
pod_user_of() { in_root ps -o user= -p "$1" | tr -d ' '; }
use_pome() { # use_pome USER: create, call a twin, check the pod user, stop
        local who=$1 run
        if [[ $who == root ]]; then run=(in_root sh -c 'cd /tmp && exec "$@"' sh); else run=(as_user "$who"); fi
        "${run[@]}" pome sandbox create --twin github --secrets-file "/tmp/$who.env" >"$WORK/create-$who.txt" 2>&1 ||
                fail "pome sandbox create as $who from /tmp: $(cat "$WORK/create-$who.txt")"
        read -r SID TOKEN URL < <(in_root sh -c ". /tmp/$who.env && echo \$POME_SESSION_ID \$POME_AUTH_TOKEN \$POME_GITHUB_REST_URL")
        [[ $SID == ses_* && -n $TOKEN && -n $URL ]] || fail "secrets file of $who: SID=$SID URL=$URL"
        title=$("${run[@]}" curl -s -H "Authorization: Bearer $TOKEN" "$URL/repos/acme/api/issues/1" | jq -r .title)
        [[ -n $title && $title != null ]] || fail "twin call as $who failed"
        KEY=$(in_root head -1 /var/lib/pome/api-key)
        pid=$(in_root curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:7070/v1/sandboxes/$SID" | jq -r .per_twin.github.pod.pid)
        assert_eq "$(pod_user_of "$pid")" pome-pod "the pod's user"
        "${run[@]}" pome sandbox stop "$SID" --discard >/dev/null 2>&1 || fail "pome sandbox stop as $who"
}
use_pome root
ROOT_SID=$SID ROOT_TOKEN=$TOKEN
use_pome alice
out=$(as_user bob pome usage 2>&1) && fail "bob (not in group pome) read the team key"
grep -q "group pome" <<<"$out" || fail "bob is not told which group may read the key: $out"
pass "pome from /tmp as root and as alice (group pome): create, twin call ('$title'), pod user pome-pod, stop; bob is told to join pome"

# ---- pome doctor in the container, as alice: the read-only cgroups named, with the fix
status=0
as_user alice pome doctor >"$WORK/doctor.txt" 2>&1 || status=$?
assert_eq "$status" 1 "pome doctor's exit status (the cgroup layer is missing here)"
# the reason is on the cgroups line or on its fix line (v1 and v2 word it differently)
grep -A1 -E "^missing +cgroups" "$WORK/doctor.txt" | grep -q "read-only" || fail "doctor: $(cat "$WORK/doctor.txt")"
grep -A1 -E "^missing +cgroups" "$WORK/doctor.txt" | grep -q "fix:" || fail "no fix for the cgroups"
grep -qE "^ok +D-Bus +sh.pome.Supervisor1 owned on the system bus" "$WORK/doctor.txt" || fail "doctor's D-Bus line"
grep -qE "^ok +pod user +pome-pod" "$WORK/doctor.txt" || fail "doctor's pod user line"
grep -qE "^ok +state dir +/var/lib/pome mode 0750" "$WORK/doctor.txt" || fail "doctor's state dir line"
grep -qE "^ok +control API +http://127.0.0.1:7070 answers .*found via /run/pome/pomed.json" "$WORK/doctor.txt" ||
        fail "doctor's control API line"
pass "pome doctor as alice: cgroups missing (read-only v1 controllers) with its fix; bus, pod user, state dir, listeners ok"

# ---- credentials again: alice's masked create, then pome sandbox env
as_user alice pome sandbox create --twin slack >"$WORK/create-masked.txt" 2>&1 || fail "masked create"
SID=$(sed -n 's/.*pome sandbox env \(ses_[A-Za-z0-9]*\).*/\1/p' "$WORK/create-masked.txt")
[[ -n $SID ]] || fail "create does not point at pome sandbox env: $(cat "$WORK/create-masked.txt")"
as_user alice pome sandbox env "$SID" >"$WORK/env.txt" || fail "pome sandbox env as alice"
grep -q "^export POME_SLACK_TOKEN='\?xoxb-pome-" "$WORK/env.txt" || fail "env: $(cat "$WORK/env.txt")"
as_user alice pome sandbox stop "$SID" --discard >/dev/null
out=$(as_user alice pome sandbox stop "$SID")
[[ $out == *"had already ended (stopped: discarded); nothing to stop." ]] || fail "stop again: $out"
pass "alice: masked create, then pome sandbox env $SID gives the Slack token; a second stop says it had ended"

# ---- the journal: structured lifecycle entries, no secret
in_root journalctl -u pomed -o json --no-pager >"$WORK/journal.json"
for id in 3361558e9ba2469086c6b1e8cc13f9da bf6f1bdf30cf4a4e8c18d32d306f732a \
        ce58c4342b9045b8be3da8b76bb9135b 3f39e7c911b8423c9a59b79d6763f122 \
        9095d9b61bd34a2689719f43fa450f3d; do
        n=$(jq -s --arg id "$id" --arg sid "$ROOT_SID" \
                '[.[] | select(.MESSAGE_ID == $id and .SANDBOX_ID == $sid and .TEAM == "local")] | length' "$WORK/journal.json")
        ((n >= 1)) || fail "no journal entry MESSAGE_ID=$id SANDBOX_ID=$ROOT_SID TEAM=local"
done
jq -se --arg sid "$ROOT_SID" 'any(.[]; .MESSAGE_ID == "9095d9b61bd34a2689719f43fa450f3d" and .SANDBOX_ID == $sid
        and .TWIN == "github" and (.POD_PID | tonumber) > 0 and .REASON == "killed")' "$WORK/journal.json" >/dev/null ||
        fail "the pod-exit entry lacks TWIN=, POD_PID= or REASON="
jq -se --arg sid "$ROOT_SID" 'any(.[]; .MESSAGE_ID == "3f39e7c911b8423c9a59b79d6763f122" and .SANDBOX_ID == $sid
        and .REASON == "discarded" and .PRIORITY == "6")' "$WORK/journal.json" >/dev/null ||
        fail "the sandbox-ended entry lacks REASON=discarded at PRIORITY=6"
for secret in "$KEY" "$ROOT_TOKEN" "$TOKEN"; do
        ! grep -qF "$secret" "$WORK/journal.json" || fail "a secret is in the journal"
done
pass "journalctl -o json: provisioning, ready, running, pod exit and end entries with SANDBOX_ID=, TEAM=, TWIN=, POD_PID=, REASON=, MESSAGE_ID=; no key or token"

# ---- systemctl reload: a drop-in's teams apply
in_root sh -c 'cat >/etc/pome/pomed.conf.d/50-teams.conf' <<'EOF'
teams:
  - id: local
    sessions_quota: 7
  - id: ci
    sessions_quota: 3
EOF
in_root pomed --check-config >"$WORK/check.txt" 2>&1 || fail "pomed --check-config: $(cat "$WORK/check.txt")"
grep -q "50-teams.conf" "$WORK/check.txt" || fail "--check-config does not name the drop-in: $(cat "$WORK/check.txt")"
# as on a minimal Debian, which has no kill(1) (procps): the unit must not need it
in_root mv /usr/bin/kill /usr/bin/kill.hidden
in_root systemctl reload pomed || fail "systemctl reload pomed failed (without /usr/bin/kill)"
# no wait: pomed --reload (ExecReload) returned only once the reload was done
in_root mv /usr/bin/kill.hidden /usr/bin/kill
assert_eq "$(prop bob SessionsQuota)" 7 "local's quota after the reload"
teams=$(in_root busctl --system --json=short call sh.pome.Supervisor1 /sh/pome/Supervisor1 sh.pome.Supervisor1 ListTeams | jq -c '[.data[0][][0]]')
assert_eq "$teams" '["local","ci"]' "teams after the reload"
assert_eq "$(in_root curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:7070/v1/usage | jq .sessions_quota)" 7 "/v1/usage quota"
assert_eq "$(in_root systemctl is-active pomed)" active "pomed after the reload"
pass "systemctl reload (no kill(1) on the machine): the drop-in's teams applied (D-Bus and /v1/usage: quota 7; teams $teams)"
in_root sh -c 'echo "teams: [" >/etc/pome/pomed.conf.d/60-broken.conf'
if in_root systemctl reload pomed 2>"$WORK/reload-broken.txt"; then
        fail "systemctl reload pomed succeeded with a broken drop-in"
fi
in_root rm /etc/pome/pomed.conf.d/60-broken.conf
in_root journalctl -u pomed --no-pager -n 20 | grep -q "the running pomed keeps its configuration" ||
        fail "the journal does not say why the reload failed: $(in_root journalctl -u pomed --no-pager -n 10)"
assert_eq "$(in_root systemctl is-active pomed)" active "pomed after a failed reload"
assert_eq "$(prop bob SessionsQuota)" 7 "local's quota after a failed reload"
pass "systemctl reload with a broken drop-in fails, says why in the journal, and pomed keeps its configuration"

# ---- the watchdog: pomed's loop pings (WATCHDOG=1 at half of WatchdogSec=30s)
# systemd stamps the watchdog when the service becomes active, then at every WATCHDOG=1:
# a stamp later than that is a ping (sd-event sends the first between 15 and 22.5 s).
active=$(in_root systemctl show -P ActiveEnterTimestampMonotonic pomed)
for _ in $(seq 1 300); do
        wd=$(in_root systemctl show -P WatchdogTimestampMonotonic pomed)
        ((wd > active + 1000000)) && break
        sleep 0.1
done
((wd > active + 1000000)) || fail "no WATCHDOG=1 reached systemd within 30 s (active at $active, watchdog stamp $wd)"
pass "systemd received WATCHDOG=1 from pomed $(((wd - active) / 1000000)) s after it became active"

# ---- systemctl stop: drains and leaves no pod
in_root sh -c 'cd /tmp && pome sandbox create --twin github --twin slack --secrets-file /tmp/s.env' >/dev/null ||
        fail "create before stop"
SID=$(in_root sh -c '. /tmp/s.env && echo $POME_SESSION_ID')
pids=$(in_root curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:7070/v1/sandboxes/$SID" | jq -r '.per_twin[].pod.pid')
[[ $(wc -w <<<"$pids") == 2 ]] || fail "pod pids: $pids"
read -r TOKEN URL < <(in_root sh -c '. /tmp/s.env && echo $POME_AUTH_TOKEN $POME_GITHUB_REST_URL')
in_root curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" "$URL/repos/acme/api/issues/1"
in_root curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:7070/metrics >"$WORK/metrics.txt"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.txt" 2>&1 || fail "promtool: $(cat "$WORK/promtool.txt")"
sample() { awk -v k="$1" '$1 == k { print $2 }' "$WORK/metrics.txt"; }
usage=$(in_root curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:7070/v1/usage)
assert_eq "$(sample 'pome_slots_used{team="local"}')" "$(jq .sessions_used <<<"$usage")" "metrics vs /v1/usage: used"
assert_eq "$(sample 'pome_slots_used{team="local"}')" "$(prop bob SessionsUsed)" "metrics vs D-Bus: used"
assert_eq "$(sample 'pome_slots_quota{team="local"}')" "$(jq .sessions_quota <<<"$usage")" "metrics vs /v1/usage: quota"
assert_eq "$(sample 'pome_slots_quota{team="local"}')" "$(prop bob SessionsQuota)" "metrics vs D-Bus: quota"
assert_eq "$(sample 'pome_sandboxes{team="local",state="running"}')" 1 "running sandboxes in /metrics"
[[ $(sample 'pome_gateway_requests_total{twin="github",code="200"}') -ge 3 ]] || fail "gateway counter: $(grep gateway_requests "$WORK/metrics.txt")"
pass "curl /metrics: promtool check metrics accepts it; slots $(sample 'pome_slots_used{team="local"}')/$(sample 'pome_slots_quota{team="local"}') = /v1/usage = D-Bus"
# systemd's own debug log names every notification it receives: STOPPING=1 is seen, not
# inferred
in_root systemctl log-level debug
in_root systemctl stop pomed
in_root systemctl log-level info
for p in $pids; do
        ! in_root kill -0 "$p" 2>/dev/null || fail "pod $p outlived systemctl stop"
done
[[ -z $(in_root pgrep -u pome-pod || true) ]] || fail "a pome-pod process is left"
assert_eq "$(in_root systemctl show -P Result pomed)" success "Result after stop"
assert_eq "$(in_root systemctl show -P ExecMainStatus pomed)" 0 "pomed's exit status"
in_root journalctl -u pomed -o json --no-pager >"$WORK/journal.json"
jq -se '[.[] | select(.MESSAGE_ID == "2129b8bb962d4c26a6b75af5b0a77f14")] | length > 0' "$WORK/journal.json" >/dev/null ||
        fail "no draining entry"
jq -se --arg sid "$SID" 'any(.[]; .MESSAGE_ID == "3f39e7c911b8423c9a59b79d6763f122" and .SANDBOX_ID == $sid
        and .REASON == "supervisor_stopped")' "$WORK/journal.json" >/dev/null || fail "the open sandbox did not end supervisor_stopped"
jq -se '[.[] | select(.MESSAGE_ID == "b6908f7a17124fbb9ae811a182088b27")] | length > 0' "$WORK/journal.json" >/dev/null ||
        fail "no stopped entry"
in_root journalctl -b _PID=1 -o cat --no-pager >"$WORK/pid1.txt"
grep -Eq '^pomed\.service: Got notification message from PID [0-9]+ \((.*, )?STOPPING=1' "$WORK/pid1.txt" ||
        fail "systemd received no STOPPING=1: $(grep -F 'pomed.service: Got notification' "$WORK/pid1.txt" | tail -3)"
pass "systemctl stop: STOPPING=1 received by systemd, drained (journal: draining, $SID ended supervisor_stopped, stopped), exit 0, no pod left"

# ---- upgrade: the operator's configuration is kept
in_root sed -i 's/sessions_quota: 10/sessions_quota: 9/' /etc/pome/pomed.conf
in_root rm /etc/pome/pomed.conf.d/50-teams.conf /etc/pome/pomed.conf.d/40-container.conf
in_root systemctl start pomed
in_root sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/pome_next.deb" >"$WORK/upgrade.log" 2>&1 ||
        fail "upgrade failed: $(tail -20 "$WORK/upgrade.log")"
assert_eq "$(in_root dpkg-query -W -f '${Version}' pome)" "$VERSION+systemtest1" "version after the upgrade"
in_root grep -q "sessions_quota: 9" /etc/pome/pomed.conf || fail "the upgrade replaced the operator's pomed.conf"
assert_eq "$(in_root systemctl is-active pomed)" active "pomed after the upgrade"
assert_eq "$(prop bob SessionsQuota)" 9 "quota from the kept configuration"
pass "upgrade to $VERSION+systemtest1: pomed.conf kept (quota 9), pomed restarted and active"

# ---- remove, then purge
in_root sh -c "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q pome" >"$WORK/remove.log" 2>&1 ||
        fail "apt-get remove failed: $(tail -20 "$WORK/remove.log")"
in_root test ! -e /usr/sbin/pomed || fail "remove left /usr/sbin/pomed"
in_root test -e /etc/pome/pomed.conf || fail "remove took the configuration"
[[ -z $(in_root pgrep -x pomed || true) ]] || fail "pomed still runs after remove"
in_root sh -c "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q pome" >"$WORK/purge.log" 2>&1 ||
        fail "apt-get purge failed: $(tail -20 "$WORK/purge.log")"
! in_root getent passwd pome-pod >/dev/null || fail "purge left the pome-pod user"
! in_root getent group pome >/dev/null || fail "purge left the pome group"
snapshot >"$WORK/after.txt"
if ! diff -u "$WORK/before.txt" "$WORK/after.txt" >"$WORK/purge.diff"; then
        fail "after the purge the file system differs from before the install: $(grep '^[-+]/' "$WORK/purge.diff" | head -20)"
fi
pass "apt-get remove keeps the configuration; apt-get purge leaves the file system as before the install"
