# D-Bus helpers of the integration tests: a private, system-bus-like dbus-daemon whose
# policy is the repository's packaging/dbus/sh.pome.Supervisor1.conf, and busctl wrappers.
# Sourced after lib.sh, not run.

command -v dbus-daemon >/dev/null || skip "dbus-daemon is not installed (Debian: dbus-daemon)"
command -v busctl >/dev/null || skip "busctl is not installed (Debian: systemd)"
command -v dbus-monitor >/dev/null || skip "dbus-monitor is not installed (Debian: dbus-bin)"
command -v setpriv >/dev/null || skip "setpriv is not installed (Debian: util-linux)"

POLICY=$SRC/packaging/dbus/sh.pome.Supervisor1.conf
[[ -f $POLICY ]] || fail "$POLICY is missing"

# write_bus_config SOCKET CONFIG [loose]: a configuration like Debian's
# /usr/share/dbus-1/system.conf (deny own and method calls by default, allow the bus driver,
# root may monitor) that includes the real policy file of the package. "loose" makes it a
# misconfigured bus instead: everyone may own anything and call everything.
write_bus_config() {
        local socket=$1 config=$2 policy
        if [[ ${3:-} == loose ]]; then
                policy='<policy context="default"><allow own="*"/><allow send_type="method_call"/></policy>'
        else
                policy="<include>$POLICY</include>"
        fi
        cat >"$config" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  $policy
</busconfig>
EOF
}

# start_bus SOCKET [loose]: a private dbus-daemon listening on SOCKET (its directory must be
# traversable by others so that an unprivileged caller can connect); sets BUS_PID.
start_bus() {
        local socket=$1 config=$1.conf
        write_bus_config "$socket" "$config" "${2:-}"
        rm -f "$socket" # a previous daemon's socket would look like this one being up
        dbus-daemon --config-file="$config" --nofork --nosyslog >>"$TMP/dbus-daemon.log" 2>&1 &
        BUS_PID=$!
        EXTRA_PIDS+=("$BUS_PID")
        for _ in $(seq 1 100); do
                [[ -S $socket ]] && return 0
                kill -0 "$BUS_PID" 2>/dev/null || fail "dbus-daemon exited: $(cat "$TMP/dbus-daemon.log")"
                sleep 0.05
        done
        fail "dbus-daemon did not create $socket within 5 s"
}

# stop_bus: stops the daemon of the last start_bus.
stop_bus() {
        kill "$BUS_PID" 2>/dev/null || true
        wait "$BUS_PID" 2>/dev/null || true
}

# start_pomed_on_bus ADDRESS [YAML lines…]: start_pomed with pomed on the bus at ADDRESS
# (and POMED_ARGS, e.g. -v, on its command line).
# start_pomed's configuration already says "bus: none" (and a repeated key is an error), so
# the bus comes from pomed's --bus option, which overrides the file.
start_pomed_on_bus() {
        local address=$1 real=$POMED
        shift
        printf '#!/bin/sh\nexec "%s" "$@" --bus "%s" %s\n' "$real" "$address" "${POMED_ARGS:-}" \
                >"$TMP/pomed-on-bus"
        chmod +x "$TMP/pomed-on-bus"
        POMED=$TMP/pomed-on-bus
        start_pomed "$@"
        POMED=$real
}

# wait_name ADDRESS: until sh.pome.Supervisor1 answers on the bus at ADDRESS (up to 20 s).
wait_name() {
        for _ in $(seq 1 200); do
                busctl --address="$1" get-property sh.pome.Supervisor1 /sh/pome/Supervisor1 \
                        sh.pome.Supervisor1 Version >/dev/null 2>&1 && return 0
                kill -0 "$POMED_PID" 2>/dev/null || fail "pomed exited"
                sleep 0.1
        done
        fail "sh.pome.Supervisor1 did not appear on $1 within 20 s"
}

# wait_for DESCRIPTION COMMAND…: polls COMMAND (up to 10 s) until it succeeds.
wait_for() {
        local what=$1
        shift
        for _ in $(seq 1 100); do
                "$@" && return 0
                sleep 0.1
        done
        fail "timed out waiting for $what"
}
