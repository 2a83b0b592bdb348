#!/usr/bin/env bash
# Hostile forms to the Stripe twin (issue 8), through pomed's key-routed /v1/… as the SDKs
# send them: expand[] with one element, metadata[a][b], 10 000 parameters, NUL, invalid
# UTF-8, strings past Stripe's limits, JSON bodies, numbers past 64 bits, wrong types,
# unknown parameters, out-of-range limits, bad keys, and billing's nested ones (20 000
# subscription items, items[0] or recurring as a string, amounts that add up past what
# the twin takes). Every
# one is a Stripe-shaped 400 ({error:{type:"invalid_request_error", message, param?}}),
# the pod keeps its pid, and the world (/_pome/state) is byte for byte what it was.
source "$(dirname "$0")/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the large bodies)"

start_pomed
create_sandbox stripe
URL=$(rest_url stripe)
KEY=$(jq -r .provider_credentials.stripe.api_key <<<"$CREATED")
BASE=$(jq -r .provider_credentials.stripe.api_base <<<"$CREATED")
[[ $KEY == sk_test_pome_* ]] || fail "no Stripe key in the create response: $KEY"
mkdir -p "$TMP/b"
PID0=$(pod_pid stripe)
# billing's refusals need a customer with a card and a monthly price to name
CUS=$(curl -s -u "$KEY:" "$BASE/v1/customers" -d payment_method=pm_card_visa \
        -d "invoice_settings[default_payment_method]=pm_card_visa" | jq -r .id)
PRICE=$(curl -s -u "$KEY:" "$BASE/v1/prices" -d currency=usd -d unit_amount=1000 \
        -d "recurring[interval]=month" -d "product_data[name]=Gold" | jq -r .id)
[[ $CUS == cus_* && $PRICE == price_* ]] || fail "billing setup: customer '$CUS', price '$PRICE'"
world_state "$URL" "$TMP/before"

python3 - "$TMP/b" "$CUS" "$PRICE" <<'PY'
import os, sys
d, cus, price = sys.argv[1:4]
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
w("fields", "&".join("f%d=1" % i for i in range(10000)).encode())
w("deepkey", b"metadata" + b"[a]" * 5000 + b"=1")
w("longname", b"name=" + b"n" * 257)
w("longline", b"address[line1]=" + b"a" * 5001)
# 20 000 subscription items of one price: refused before any is looked at
w("items", ("customer=%s&" % cus + "&".join("items[%d][price]=%s" % (i, price) for i in range(20000))).encode())
PY

# refuse PATH PARAM BODY…: POSTed to $BASE/v1/PATH with the key as the SDK sends it (Basic
# user); answered 400 invalid_request_error whose param matches PARAM, a regex ("" when
# none is named).
refuse() {
        local path=$1 param=$2
        shift 2
        local code
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -u "$KEY:" "$@" "$BASE/v1/$path")
        [[ $code == 400 ]] || fail "$path $*: HTTP $code: $(head -c 200 "$TMP/resp")"
        jq -e '.error.type == "invalid_request_error" and (.error.message | type == "string")' \
                "$TMP/resp" >/dev/null || fail "$path $*: not Stripe's envelope: $(head -c 200 "$TMP/resp")"
        local got
        got=$(jq -r '.error.param // ""' "$TMP/resp")
        [[ $got =~ ^($param)$ ]] || fail "$path $*: param '${got:0:80}', want '$param'"
        [[ $(pod_pid stripe) == "$PID0" ]] || fail "$path $*: the pod changed"
        local label="$*"
        pass "$path ${label:0:60} → 400 $(jq -r .error.message "$TMP/resp" | cut -c1-70)"
}

# one expand[] element is still a list of paths: a path Stripe cannot expand is its 400
refuse customers expand -d "expand[]=email" -d email=a@example.com
refuse customers expand -d "expand[]=invoice_settings.footer" -d email=a@example.com
refuse customers "metadata\[a\]" -d "metadata[a][b]=x"
refuse customers "metadata\[a\].*" --data-binary "@$TMP/b/deepkey"
refuse customers f0 --data-binary "@$TMP/b/fields"
refuse customers "" -d "name=a%00b"
refuse customers nope -d nope=1
refuse customers email -d "email[]=x"
refuse payment_intents amount -d amount=99999999999999999999999 -d currency=usd
refuse payment_intents amount -d amount=-5 -d currency=usd
refuse payment_intents amount -d amount=abc -d currency=usd
refuse payment_intents confirm -d amount=100 -d currency=usd -d confirm=maybe
refuse customers limit -G -d limit=1000
refuse customers limit -G -d limit=0
refuse refunds "" -d amount=100
# invalid UTF-8 is refused, not mended (in the body and in the query), as api.stripe.com does
refuse customers "" -d "name=%FF"
refuse customers "" -d "description=%C0%AE%C0%AE"
refuse customers "" -G -d "email=%FE"
# past Stripe's field limits: 256 for a customer's name, 5000 for any other string
refuse customers name --data-binary "@$TMP/b/longname"
refuse customers "address\[line1\]" --data-binary "@$TMP/b/longline"
# Stripe v1 reads only forms: a JSON body is its content-type 400
refuse customers "" -H "Content-Type: application/json" -d '{"email":"a@example.com"}'
refuse payment_intents "" -H "Content-Type: application/json" \
        -d '{"amount":100,"currency":"usd","confirm":true,"payment_method":"pm_card_visa"}'

refuse subscriptions items --data-binary "@$TMP/b/items"
refuse subscriptions "items\[0\]" -d "customer=$CUS" -d "items[0]=$PRICE"
refuse subscriptions "items\[0\]\[price\]" -d "customer=$CUS" -d "items[0][price][id]=$PRICE"
refuse subscriptions items -d "customer=$CUS" -d "items[0][price]=$PRICE" \
        -d "items[0][quantity]=999999999"
refuse subscriptions "items\[0\]\[quantity\]" -d "customer=$CUS" -d "items[0][price]=$PRICE" \
        -d "items[0][quantity]=99999999999999999999999"
refuse prices recurring -d currency=usd -d unit_amount=1 -d product_data[name]=X -d recurring=month
refuse prices "recurring\[interval\]" -d currency=usd -d unit_amount=1 -d product_data[name]=X \
        -d "recurring[interval][a]=b"
refuse prices "product_data\[name\]" -d currency=usd -d unit_amount=1 -d "product_data[name][]=X"
refuse products images -d name=X -d "images[a]=b"
refuse test_helpers/test_clocks frozen_time -d frozen_time=100000000000000000000

# ... and an expandable one works with a single element (default_source null stays null)
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -u "$KEY:" -G -d "expand[]=data.default_source" "$BASE/v1/customers")
assert_eq "$code" 200 "expand[]=data.default_source, one element"

# a bad key on the keyed path: Stripe's 401, nothing routed
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -u "sk_test_pome_bogus:" "$BASE/v1/customers")
assert_eq "$code" 401 "a bad key"
jq -e '.error.type == "invalid_request_error"' "$TMP/resp" >/dev/null || fail "401 not Stripe's: $(cat "$TMP/resp")"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' "$BASE/v1/customers")
assert_eq "$code" 401 "no key"
pass "no key and a bad key: Stripe's 401"

world_state "$URL" "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "the world changed: $(diff "$TMP/before" "$TMP/after" | head -30)"
[[ $(pod_pid stripe) == "$PID0" ]] || fail "the pod changed"
pass "world unchanged, pod $PID0 still serving"
