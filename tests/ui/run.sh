#!/usr/bin/env bash
# Runs one browser test (tests/ui/test-*.mjs) against a real pomed started here: Debian's
# chromium, driven by puppeteer-core from tests/conformance/node_modules (nothing downloaded
# at test time), loads the dashboard pomed serves at /ui/. The script gets POME_API_URL,
# POME_API_KEY, POME_UI_SCREENSHOTS (where to write its screenshots: the build directory's
# ui-screenshots unless set; POME_UI_SCREENSHOTS=$PWD/docs/ui renews the README's), CHROMIUM,
# POME_TEST_BUS (the address of the private, system-bus-like dbus-daemon pomed is on, for the
# usage the page shows against D-Bus) and POME_CLI (pome, for `pome run collect`).
script=${1:-$(dirname "$0")/test-dashboard.mjs}
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
source "$POME_SOURCE_DIR/tests/integration/dbus-lib.sh"
command -v node >/dev/null || skip "node is not installed"
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[[ -x $CHROMIUM ]] || skip "$CHROMIUM is missing (apt-get install chromium; scripts/setup.sh does)"
for m in puppeteer-core axe-core; do
        [[ -d $SRC/tests/conformance/node_modules/$m ]] ||
                skip "$m not installed: run 'npm ci' in tests/conformance (scripts/test.sh does)"
done
[[ -f $SRC/ui/index.html ]] || skip "no dashboard in $SRC/ui"
export POME_UI_SCREENSHOTS=${POME_UI_SCREENSHOTS:-$BUILD/ui-screenshots}
mkdir -p "$POME_UI_SCREENSHOTS"
# a tape of 100 000 rows of GET /rate_limit is ~130 MB (limits.max_tape: 64M by default)
start_bus "$TMP/bus"
export POME_TEST_BUS=unix:path=$TMP/bus POME_CLI=$BUILD/cli/pome
start_pomed_on_bus "$POME_TEST_BUS" "ui_dir: $SRC/ui" "limits:" "  max_tape: 512M"
wait_name "$POME_TEST_BUS"
node "$script" || fail "$(basename "$script") failed"
