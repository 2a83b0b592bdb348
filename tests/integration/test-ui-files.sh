#!/usr/bin/env bash
# The dashboard's files on the control listener (supervisor/ui.c): /ui redirects to /ui/,
# /ui/ is index.html, a file has its type and every answer the page's security headers;
# names the dashboard does not use (dotfiles, "..", escapes, symbolic links, directories,
# other methods) get the control API's JSON 404/405, and nothing outside ui_dir is read.
# A pomed with no UI directory says where it looked.
source "$(dirname "$0")/lib.sh"

UI=$TMP/ui
mkdir -p "$UI/img" "$UI/.hidden"
printf '<!doctype html><title>Pome</title>\n' >"$UI/index.html"
printf 'console.log(1);\n' >"$UI/app.js"
printf 'body{}\n' >"$UI/app.css"
printf '<svg xmlns="http://www.w3.org/2000/svg"/>\n' >"$UI/img/logo.svg"
printf 'secret\n' >"$UI/.env"
printf 'secret\n' >"$TMP/outside.txt"
ln -s "$TMP/outside.txt" "$UI/link.txt"
start_pomed "ui_dir: $UI"

# get PATH [CURL ARG…]: sets STATUS, BODY, HEADERS
get() {
        local path=$1
        shift
        STATUS=$(curl -s --path-as-is -D "$TMP/h" -o "$TMP/b" -w '%{http_code}' "$@" "$CONTROL$path")
        BODY=$(cat "$TMP/b")
        HEADERS=$(tr -d '\r' <"$TMP/h")
}
header() { awk -v k="$(tr '[:upper:]' '[:lower:]' <<<"$1"):" 'tolower($1) == k { sub(/^[^:]*: /, ""); print }' <<<"$HEADERS"; }

get /ui
assert_eq "$STATUS" 308 "/ui"
assert_eq "$(header Location)" /ui/ "/ui's Location"
get /ui/
assert_eq "$STATUS" 200 "/ui/"
assert_eq "$BODY" "$(cat "$UI/index.html")" "/ui/ is index.html"
assert_eq "$(header Content-Type)" "text/html; charset=utf-8" "index.html's type"
[[ $(header Content-Security-Policy) == "default-src 'self';"* ]] || fail "no CSP on /ui/: $HEADERS"
assert_eq "$(header X-Content-Type-Options)" nosniff "nosniff"
assert_eq "$(header Referrer-Policy)" no-referrer "Referrer-Policy"
get /ui/app.js
assert_eq "$STATUS/$(header Content-Type)" "200/text/javascript; charset=utf-8" "app.js"
get /ui/app.css
assert_eq "$STATUS/$(header Content-Type)" "200/text/css; charset=utf-8" "app.css"
get /ui/img/logo.svg
assert_eq "$STATUS/$(header Content-Type)" "200/image/svg+xml" "img/logo.svg"
get /ui/app.js -I
assert_eq "$STATUS/$(header Content-Type)" "200/text/javascript; charset=utf-8" "HEAD app.js"
pass "/ui → /ui/, index.html, app.js, app.css, img/logo.svg with their types; CSP, nosniff, no referrer; HEAD"

for path in /ui/.env /ui/.hidden/x /ui/../outside.txt /ui/img/../../outside.txt /ui/%2e%2e/outside.txt \
        /ui/link.txt /ui/img /ui/img/ /ui//app.js /ui/nope.js /ui/-x /ui/app.js%00.png "/ui/$(head -c 3000 /dev/zero | tr '\0' a)"; do
        get "$path"
        assert_eq "$STATUS" 404 "GET $path"
        assert_eq "$(jq -r .error.type <<<"$BODY")" not_found "GET $path's error"
        [[ $BODY != *secret* ]] || fail "GET $path showed a file outside the dashboard"
        jq -e '.error.request_id | startswith("req_")' <<<"$BODY" >/dev/null || fail "GET $path: no request_id: $BODY"
done
get /ui/index.html -X POST -d x
assert_eq "$STATUS" 405 "POST /ui/index.html"
assert_eq "$(header Allow)" "GET, HEAD" "405's Allow"
get /uix
assert_eq "$STATUS" 404 "/uix is no dashboard path"
[[ $(jq -r .error.message <<<"$BODY") == "No such endpoint: GET /uix."* ]] || fail "/uix: $BODY"
pass "dotfiles, .., %2e%2e, a symbolic link out, directories, //, unknown names, NUL escapes and a 3000-byte name: 404 in the API's envelope, nothing outside read; POST 405 with Allow"

stop_pomed
POME_UI_DIR= start_pomed "ui_dir: $TMP/none"
get /ui/
assert_eq "$STATUS" 404 "/ui/ with no UI directory"
[[ $(jq -r .error.message <<<"$BODY") == "The dashboard is not installed: no index.html in $TMP/none"* ]] ||
        fail "no UI directory: $BODY"
pass "no UI directory: /ui/ says so and where it looked"
