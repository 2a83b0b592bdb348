#!/usr/bin/env bash
# A power cut mid-churn, on a whole Debian 12 machine: the package installed in a QEMU VM
# (software emulation, cgroup v2, systemd as PID 1), its pomed with durability: full.
# Clients here write to a sandbox's GitHub twin and create sandboxes through forwarded
# ports; QEMU is killed (SIGKILL) while they do — the guest's page cache and whatever it
# had not written to its disk are gone. The VM boots again, and through its pomed's
# control API: every write a client saw answered 2xx has its tape row, and every create
# answered 201 has its record. The same churn with durability: normal is then reported
# (not asserted): it may lose the last rows, which is what full is for.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root (systemd-nspawn installs the package into the VM's root)"
require_tools mmdebstrap:mmdebstrap systemd-nspawn:systemd-container dpkg-buildpackage:dpkg-dev \
        qemu-system-x86_64:qemu-system-x86 mke2fs:e2fsprogs jq:jq curl:curl

STOP=$WORK/powercut-stop
trap 'touch "$STOP"; vm_power_cut; [[ -n ${KEEP_ROOT:-} ]] || rm -rf "$ROOT" "$WORK/vm.img"' EXIT

build_deb
make_root "$VM_PACKAGES"
KEY=pome_powercut$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$ROOT/etc/pome/pomed.conf.d"
# durability comes from a drop-in of its own, changed between the two runs
cat >"$ROOT/etc/pome/pomed.conf.d/50-powercut.conf" <<EOF
control_listen: 0.0.0.0:7070
gateway_listen: 0.0.0.0:7071
public_url: http://127.0.0.1:${VM_GATEWAY_PORT:-17071}
limits:
  idle_timeout: off
teams:
  - id: ci
    sessions_quota: 50
    api_keys_sha256: [$(printf '%s' "$KEY" | sha256sum | cut -c1-64)]
EOF
IMG=$WORK/vm.img

api() { # api METHOD PATH [BODY]: sets STATUS, BODY
        local args=(-s -m 30 -o "$WORK/pc-body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $KEY")
        [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
        STATUS=$(curl "${args[@]}" "$VM_CONTROL$2" || true)
        BODY=$(cat "$WORK/pc-body" 2>/dev/null || true)
}

# writer N URL TOKEN: GitHub comments until $STOP; "status request-id" lines in pc-log.N
writer() {
        local i=0 st rid
        while [[ ! -e $STOP ]]; do
                i=$((i + 1))
                st=$(curl -s -o /dev/null -D "$WORK/pc-h.$1" -w '%{http_code}' -m 10 \
                        -H "Authorization: Bearer $3" -H 'Content-Type: application/json' \
                        --data-binary "{\"body\":\"writer $1 comment $i\"}" \
                        "$2/repos/acme/api/issues/1/comments" || true)
                rid=$(tr -d '\r' <"$WORK/pc-h.$1" 2>/dev/null | awk 'tolower($1)=="x-request-id:" {print $2}')
                echo "$st $rid" >>"$WORK/pc-log.$1"
        done
}
creator() {
        while [[ ! -e $STOP ]]; do
                curl -s -m 30 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
                        --data-binary '{"twins":["github"]}' "$VM_CONTROL/v1/sandboxes" |
                        jq -r 'select(.state == "ready") | .session_id' >>"$WORK/pc-created" 2>/dev/null || true
                sleep 1
        done
}

# churn LEVEL: the churn and the cut; then the second boot; sets LOST (acknowledged writes
# without a row), LOST_CREATES, ACKED, CREATED
churn() {
        printf 'durability: %s\n' "$1" >"$ROOT/etc/pome/pomed.conf.d/60-durability.conf"
        vm_image "$IMG"
        vm_boot "$IMG"
        api POST /v1/sandboxes '{"twins":["github"]}'
        [[ $STATUS == 201 ]] || fail "create in the VM answered $STATUS: $BODY"
        local sid token url pids=()
        sid=$(jq -r .session_id <<<"$BODY") token=$(jq -r .session_token <<<"$BODY")
        url=$(jq -r .per_twin.github.rest_url <<<"$BODY")
        rm -f "$STOP" "$WORK"/pc-log.* "$WORK/pc-created"
        : >"$WORK/pc-created"
        for n in 1 2 3; do
                writer "$n" "$url" "$token" &
                pids+=($!)
        done
        creator &
        pids+=($!)
        sleep 15
        vm_power_cut # mid-churn: the writers are sending
        touch "$STOP"
        wait "${pids[@]}" 2>/dev/null || true
        cat "$WORK"/pc-log.* | awk '$1 ~ /^20[01]$/ {print $2}' | sort >"$WORK/pc-acked"
        ACKED=$(wc -l <"$WORK/pc-acked") CREATED=$(wc -l <"$WORK/pc-created")
        ((ACKED > 0)) || fail "no write was answered 2xx before the cut ($1)"

        vm_boot "$IMG" # the reboot: the guest's fsck replays its journal, pomed restarts
        api GET "/v1/sandboxes/$sid/events?twin=github"
        [[ $STATUS == 200 ]] || fail "the tape after the reboot answered $STATUS: $BODY"
        jq -r '.[].event_id' <<<"$BODY" | sort >"$WORK/pc-rows"
        LOST=$(comm -23 "$WORK/pc-acked" "$WORK/pc-rows" | wc -l)
        LOST_CREATES=0
        while read -r s; do
                api GET "/v1/sandboxes/$s"
                [[ $STATUS == 200 ]] || LOST_CREATES=$((LOST_CREATES + 1))
        done <"$WORK/pc-created"
        api GET "/v1/sandboxes/$sid"
        RECORD=$(jq -c '{state, reason}' <<<"$BODY")
        vm_power_cut
}

churn full
echo "durability: full: $ACKED writes and $CREATED creates acknowledged before the cut; after the reboot: $LOST writes without a row, $LOST_CREATES creates without a record; the sandbox: $RECORD"
assert_eq "$LOST" 0 "durability: full: acknowledged writes with no tape row after the power cut"
assert_eq "$LOST_CREATES" 0 "durability: full: creates answered 201 with no record after the power cut"
pass "durability: full: every one of $ACKED acknowledged writes and $CREATED creates is on disk after a power cut"

# the contrast, reported: the same cut with durability: normal (rows written before the
# reply, not synced) — POWER_CUT_FULL_ONLY=1 leaves it out
if [[ -z ${POWER_CUT_FULL_ONLY:-} ]]; then
        churn normal
        echo "durability: normal (reported, not asserted): $ACKED writes and $CREATED creates acknowledged before the cut; after the reboot: $LOST writes without a row, $LOST_CREATES creates without a record; the sandbox: $RECORD"
fi
