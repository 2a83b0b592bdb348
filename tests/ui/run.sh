#!/usr/bin/env bash
# Runs one browser test (tests/ui/test-*.mjs) against a real pomed started here: Debian's
# chromium, driven by puppeteer-core from tests/conformance/node_modules (nothing downloaded
# at test time), loads the dashboard pomed serves at /ui/. The script gets POME_API_URL,
# POME_API_KEY, POME_UI_SCREENSHOTS (where to write its screenshots: the build directory's
# ui-screenshots unless set; POME_UI_SCREENSHOTS=$PWD/docs/ui renews the README's) and CHROMIUM.
script=${1:-$(dirname "$0")/test-dashboard.mjs}
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
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
start_pomed "ui_dir: $SRC/ui" "limits:" "  max_tape: 512M"
node "$script" || fail "$(basename "$script") failed"
