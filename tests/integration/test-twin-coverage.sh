#!/usr/bin/env bash
# Every route and MCP tool of every twin has a test, and README.md's tables say which
# (issue 7: "a table in README: per twin, routes and tools, each with the test that
# covers it"). scripts/twin-coverage.mjs reads pods/<twin>/surface.json and the tests.
source "$(dirname "$0")/lib.sh"
command -v node >/dev/null || skip "node is not installed"
[[ -d $SRC/tests/conformance/node_modules/@octokit/plugin-rest-endpoint-methods ]] ||
        skip "tests/conformance/node_modules is not installed (npm ci there)"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
node "$SRC/scripts/twin-coverage.mjs" --check >"$TMP/tables.md" ||
        fail "a route or MCP tool has no test (the **none** rows): $(grep -F '**none**' "$TMP/tables.md" | head -5)"
pass "every route and MCP tool has a test"

sed -n '/<!-- twin-coverage:begin -->/,/<!-- twin-coverage:end -->/p' "$SRC/README.md" |
        sed '1d;$d' >"$TMP/readme.md"
[[ -s $TMP/readme.md ]] || fail "README.md has no twin-coverage block"
diff <(sed '/^$/d' "$TMP/tables.md") <(sed '/^$/d' "$TMP/readme.md") >"$TMP/diff" ||
        fail "README.md's twin tables are out of date (node scripts/twin-coverage.mjs): $(head -10 "$TMP/diff")"
pass "README.md's tables are current"
