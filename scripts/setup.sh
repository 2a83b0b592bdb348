#!/usr/bin/env bash
# Installs what Pome needs on Debian 12 (as root; packages only when missing) and
# builds one preset: scripts/setup.sh [dev|release]  (default: release).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}

packages=(
        build-essential cmake pkg-config clang clang-format
        libmicrohttpd-dev libsystemd-dev libjansson-dev libcgroup-dev libseccomp-dev
        libcurl4-openssl-dev libssl-dev libsqlite3-dev libyaml-dev
        dbus-daemon dbus-bin systemd curl jq util-linux passwd procps iproute2 wrk
        # the Debian package and tests/system (a Debian 12 root booted in systemd-nspawn;
        # promtool checks /metrics)
        debhelper dpkg-dev scdoc lintian cpio mmdebstrap systemd-container prometheus
)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
        if [[ $(id -u) -ne 0 ]]; then
                echo "setup: missing Debian packages: ${missing[*]} (run as root to install them)" >&2
                exit 1
        fi
        echo "setup: installing ${#missing[@]} Debian packages (a minute or two on first use): ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j"$(nproc)"
