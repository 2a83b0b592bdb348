#!/usr/bin/env bash
# Runs one conformance script (tests/conformance/test-*.mjs) against a real pomed
# started here; the script gets POME_API_URL and POME_API_KEY and drives the
# sandbox with the vendors' official SDK clients.
script=$1
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v node >/dev/null || skip "node is not installed"
[[ -d $SRC/tests/conformance/node_modules/@octokit/rest ]] ||
        skip "SDK clients not installed: run 'npm ci' in tests/conformance (scripts/test.sh does)"
start_pomed
node "$script" || fail "$(basename "$script") failed"
