/* SPDX-License-Identifier: MIT */
/*
 * x402 resources: HTTP 402 Payment Required for machine payments, protocol version 1
 * (https://github.com/coinbase/x402: specs/x402-specification-v1.md for the messages,
 * specs/transports-v1/http.md for the headers, the "exact" scheme on EVM networks for what
 * a payment authorizes). The Stripe twin plays the resource server, and the facilitator it
 * would ask, for the paid resources a seed declares (x402_resources[]), at /x402/{path}:
 * - without an X-PAYMENT header: 402 {x402Version: 1, error, accepts: [PaymentRequirements]}
 *   naming the resource (scheme exact, its network, asset and payTo, maxAmountRequired = its
 *   price in the asset's atomic units, resource = its absolute URL);
 * - with X-PAYMENT, base64 of a PaymentPayload {x402Version, scheme, network, payload:
 *   {signature, authorization: {from, to, value, validAfter, validBefore, nonce}}} whose
 *   EIP-3009 authorization meets the requirements (to is payTo, value covers the price,
 *   validAfter <= now < validBefore by the twin's clock, a nonce this world never settled):
 *   the payment is settled (a row of x402_payments[], the tape's state_delta) and the answer
 *   is 200 with the resource's content and X-PAYMENT-RESPONSE, base64 of a SettlementResponse
 *   {success: true, transaction, network, payer};
 * - with any other X-PAYMENT: 402 as above, its error saying what is wrong, X-PAYMENT-RESPONSE
 *   {success: false, errorReason: the spec's code, transaction: "", network, payer}, and the
 *   world as it was. A malformed payment is a 402 too (not the transport spec's 400), as the
 *   reference middleware answers it: a client reads one shape for every refusal.
 * The twin is offline: a signature is only checked to be hex, a payer's balance is never
 * known, the transaction hash is made up (deterministic per world) and nothing is
 * broadcast. No Stripe event is emitted: api.stripe.com has no event type for an on-chain
 * settlement, so /v1/events lists what Stripe's would; the settlement is in the world
 * (x402_payments[]) and on the tape.
 *
 * Without a seed, as hosted Pome's twin does, the twin also serves one resource of its own at
 * /x402/protected-resource (unless the seed declares that path): priced $0.01 on Base
 * Sepolia, paid to the deposit address of a crypto PaymentIntent the challenge opens, the
 * paid retry settling that intent through Stripe's own rail (default_fetch).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <strings.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/stripe/stripe.h"
#include "pods/twin/sha1.h"

#define X402_VERSION 1
#define X402_SCHEME  "exact"
/* The defaults of a resource that names none: USDC on Base Sepolia (Circle's contract, its
 * EIP-712 domain name and version for extra), and a payee that is plainly the twin's own. */
#define X402_NETWORK       "base-sepolia"
#define X402_ASSET         "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
#define X402_ASSET_NAME    "USDC"
#define X402_ASSET_VERSION "2"
#define X402_PAY_TO        "0x506f6d6500000000000000000000000000000402"
#define X402_TIMEOUT       60  /* maxTimeoutSeconds of every resource */
#define X402_PATH_MAX      200 /* bytes of a resource's path */
/* hosted Pome's default resource: its path, its price ($0.01: 10000 atomic units of USDC,
 * 6 decimals, and 1 cent as the PaymentIntent's amount), its network (Base Sepolia, as
 * CAIP-2) and the network of its PaymentIntent's deposit address */
#define X402_DEFAULT_PATH    "protected-resource"
#define X402_DEFAULT_PRICE   10000
#define X402_DEFAULT_CENTS   1
#define X402_DEFAULT_NETWORK "eip155:84532"
#define X402_DEFAULT_DEPOSIT "base"
#define X402_SIG_MAX         4096 /* hex digits of a signature (a smart wallet's run long) */
#define X402_VALUE_MAX       78   /* decimal digits of a uint256 */

/* ------------------------------------------------------------------ formats */

/* n hex digits exactly (n 0: one or more). */
static bool hex_digits(const char *s, size_t n)
{
        size_t l = 0;
        while (isxdigit((unsigned char)s[l]))
                l++;
        return s[l] == 0 && (n ? l == n : l > 0);
}

/* An EVM address: "0x" and 40 hex digits (any case: EIP-55's checksum is not checked). */
static bool evm_address(const char *s)
{
        return s && (startswith(s, "0x") || startswith(s, "0X")) && hex_digits(s + 2, 40);
}

/* A decimal integer string of 1 to max digits. */
static bool decimal(const char *s, size_t max)
{
        size_t l = 0;
        while (isdigit((unsigned char)s[l]))
                l++;
        return s[l] == 0 && l > 0 && l <= max;
}

/* A decimal string as seconds, saturated at INT64_MAX. */
static int64_t decimal_time(const char *s)
{
        int64_t v = 0;
        for (; *s; s++) {
                if (v > (INT64_MAX - 9) / 10)
                        return INT64_MAX;
                v = v * 10 + (*s - '0');
        }
        return v;
}

/* Whether the decimal string value is at least price (value may exceed 64 bits). */
static bool covers(const char *value, int64_t price)
{
        char want[24];
        snprintf(want, sizeof(want), "%" PRId64, price);
        while (value[0] == '0' && value[1])
                value++;
        size_t lv = strlen(value), lw = strlen(want);
        return lv != lw ? lv > lw : strcmp(value, want) >= 0;
}

/* A path below /x402/: names of letters, digits, '.', '_' and '-' joined by '/', none of them
 * empty, "." or "..", so it means the same to every client and proxy. */
static bool path_safe(const char *p)
{
        size_t n = strlen(p);
        if (n == 0 || n > X402_PATH_MAX)
                return false;
        for (const char *seg = p;;) {
                size_t l = strcspn(seg, "/");
                if (l == 0 || (l == 1 && seg[0] == '.') || (l == 2 && !strncmp(seg, "..", 2)))
                        return false;
                for (size_t i = 0; i < l; i++)
                        if (!isalnum((unsigned char)seg[i]) && !strchr("._-", seg[i]))
                                return false;
                if (!seg[l])
                        return true;
                seg += l + 1;
        }
}

/* A network name as x402 writes them: "base-sepolia", "base", or CAIP-2's "eip155:84532". */
static bool network_valid(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) &&
                    !strchr("-:", s[i]))
                        return false;
        return true;
}

/* A media type that can go into a Content-Type header as it is: "type/subtype[; params]". */
static bool media_type_valid(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 100 || !strchr(s, '/') || s[0] == '/')
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < 0x20 || s[i] > 0x7e)
                        return false;
        return true;
}

/* ------------------------------------------------------------------ seed */

/*
 * The seed's x402_resources[{path, price, asset?, network?, pay_to?, description?, mime_type?,
 * content}] into the world's x402_resources[] (and an empty x402_payments[]), each row with
 * its defaults filled in: asset USDC on Base Sepolia, network base-sepolia, pay_to the twin's
 * own address, description the path, mime_type application/json for an object or array
 * content (served as JSON) and text/plain; charset=utf-8 for a string (served as text).
 * price is a positive integer in the asset's atomic units (USDC has 6 decimals: 10000 is
 * 0.01 USDC). A seed without x402_resources leaves the world without either array.
 * 0, -EINVAL with the message in s->err, -ENOMEM.
 */
int stripe_x402_seed(TwinSeed *s, const json_t *seed)
{
        json_t *a, *v;
        size_t i;
        int r = twin_seed_array(s, seed, "x402_resources", "", &a);
        if (r < 0 || !a)
                return r;
        json_t *rows = stripe_rows(s->world, "x402_resources");
        if (!rows || !stripe_rows(s->world, "x402_payments"))
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                char p[64];
                const char *path, *asset, *network, *pay_to, *desc, *mime;
                snprintf(p, sizeof(p), "x402_resources[%zu]", i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "x402 resource", "path", "price", "asset",
                                         "network", "pay_to", "description", "mime_type",
                                         "content")) < 0 ||
                    (r = twin_seed_str(s, v, "path", p, NULL, TWIN_NULL_REFUSED, &path)) < 0 ||
                    (r = twin_seed_str(s, v, "asset", p, X402_ASSET, TWIN_NULL_ABSENT, &asset)) <
                            0 ||
                    (r = twin_seed_str(s, v, "network", p, X402_NETWORK, TWIN_NULL_ABSENT,
                                       &network)) < 0 ||
                    (r = twin_seed_str(s, v, "pay_to", p, X402_PAY_TO, TWIN_NULL_ABSENT, &pay_to)) <
                            0 ||
                    (r = twin_seed_str(s, v, "description", p, NULL, TWIN_NULL_ABSENT, &desc)) <
                            0 ||
                    (r = twin_seed_str(s, v, "mime_type", p, NULL, TWIN_NULL_ABSENT, &mime)) < 0)
                        return r;
                if (!path || !path_safe(path))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.path: needs a relative path of names made of "
                                               "letters, digits, '.', '_' and '-', at most %d "
                                               "bytes (\"market/report\")",
                                               p, X402_PATH_MAX);
                size_t j;
                json_t *other;
                json_array_foreach (rows, j, other) {
                        if (streq_ptr(json_get_str(other, "path"), path))
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.path: \"%s\" is x402_resources[%zu]'s "
                                                       "path already",
                                                       p, path, j);
                }
                json_t *pv = json_object_get(v, "price");
                if (!json_is_integer(pv) || json_integer_value(pv) < 1)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.price: must be a positive integer, in the "
                                               "asset's atomic units (10000 is 0.01 USDC)",
                                               p);
                if (!evm_address(asset))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.asset: must be a token contract address (0x "
                                               "and 40 hex digits)",
                                               p);
                if (!evm_address(pay_to))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.pay_to: must be an address (0x and 40 hex "
                                               "digits)",
                                               p);
                if (!network_valid(network))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.network: must be a network name such as "
                                               "\"base-sepolia\" (lower-case letters, digits, "
                                               "'-' and ':')",
                                               p);
                json_t *content = json_object_get(v, "content");
                bool text = json_is_string(content);
                if (!text && !json_is_object(content) && !json_is_array(content))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.content: must be a string (served as text) or "
                                               "a JSON object or array (served as JSON)",
                                               p);
                if (!mime)
                        mime = text ? "text/plain; charset=utf-8" : "application/json";
                if (!media_type_valid(mime))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.mime_type: must be a media type such as "
                                               "\"text/markdown\" (printable ASCII)",
                                               p);
                /* what the front sends as it is and what it serializes, by the type's name */
                if (text == (strstr(mime, "json") != NULL))
                        return twin_seed_error(s->err, s->errlen,
                                               text ? "%s.mime_type: a string content is served "
                                                      "as text, not as %s (make content an "
                                                      "object or array)"
                                                    : "%s.mime_type: an object or array content "
                                                      "is served as JSON, not as %s (make "
                                                      "content a string)",
                                               p, mime);
                json_t *row = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:O}", "path", path,
                                        "price", json_integer_value(pv), "asset", asset, "network",
                                        network, "pay_to", pay_to, "description",
                                        desc ? desc : path, "mime_type", mime, "content", content);
                if ((r = stripe_row_add(s->world, "x402_resources", row)) < 0)
                        return r;
        }
        return 0;
}

/* ------------------------------------------------------------------ replies */

/* The resource's PaymentRequirements (x402 v1 §5.1), in the spec's member order. */
static json_t *requirements(TwinCall *c, const json_t *res)
{
        char price[24];
        snprintf(price, sizeof(price), "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(res, "price")));
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/x402/%s", c->base_url, json_get_str(res, "path")) < 0)
                return NULL;
        const char *asset = json_get_str(res, "asset");
        _cleanup_json_ json_t *req = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:n, s:i}", "scheme", X402_SCHEME,
                "network", json_get_str(res, "network"), "maxAmountRequired", price, "asset", asset,
                "payTo", json_get_str(res, "pay_to"), "resource", url, "description",
                json_get_str(res, "description"), "mimeType", json_get_str(res, "mime_type"),
                "outputSchema", "maxTimeoutSeconds", X402_TIMEOUT);
        /* the EIP-712 domain a client signs for: known for the default asset only */
        if (req && strcasecmp(asset, X402_ASSET) == 0 &&
            json_object_set_new(req, "extra",
                                json_pack("{s:s, s:s}", "name", X402_ASSET_NAME, "version",
                                          X402_ASSET_VERSION)) < 0)
                return NULL;
        return TAKE_PTR(req);
}

/* Sets header name to the base64 of obj's compact JSON (stolen). 0 or -ENOMEM. */
static int set_b64_header(TwinReply *rp, const char *name, json_t *obj)
{
        _cleanup_json_ json_t *o = obj;
        _cleanup_free_ char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
        _cleanup_free_ char *b64 = text ? twin_base64(text, strlen(text)) : NULL;
        if (!b64)
                return -ENOMEM;
        return twin_reply_header(rp, name, json_string(b64));
}

/*
 * The 402 naming the resource, with error (a sentence). A refused payment (code, the spec's
 * errorReason, not NULL) also carries X-PAYMENT-RESPONSE {success: false, …}, payer being the
 * authorization's from when it was readable. 0 or -ENOMEM.
 */
static int challenge(TwinCall *c, TwinReply *rp, const json_t *res, const char *error,
                     const char *code, const char *payer)
{
        json_t *req = requirements(c, res);
        if (!req)
                return -ENOMEM;
        int r = twin_reply_body(rp, 402,
                                json_pack("{s:i, s:s, s:[o]}", "x402Version", X402_VERSION, "error",
                                          error, "accepts", req));
        if (r < 0 || !code)
                return r;
        return set_b64_header(rp, "X-PAYMENT-RESPONSE",
                              json_pack("{s:b, s:s, s:s, s:s, s:s}", "success", false,
                                        "errorReason", code, "transaction", "", "network",
                                        json_get_str(res, "network"), "payer", strempty(payer)));
}

/* ------------------------------------------------------------------ verification */

/* A payment read from X-PAYMENT, or why it is refused. */
typedef struct X402Check {
        json_t *doc;      /* the decoded PaymentPayload, owned */
        const char *from; /* the authorization's members, borrowed from doc */
        const char *to, *value, *valid_after, *valid_before, *nonce;
        const char *code; /* the refusal's errorReason (x402 v1 §9), NULL while good */
        char why[384];    /* the refusal's sentence */
} X402Check;

static void x402_check_done(X402Check *k)
{
        json_decref(k->doc);
}

static int refuse(X402Check *k, const char *code, const char *fmt, ...) _printf_(3, 4);
static int refuse(X402Check *k, const char *code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(k->why, sizeof(k->why), fmt, ap);
        va_end(ap);
        /* the reason quotes the caller's bytes (a member, jansson's parse error) and may be
         * cut inside a character: each byte of a malformed sequence becomes '?', so the
         * 402's JSON can carry it */
        for (size_t i = 0, n = strlen(k->why); i < n;) {
                size_t l = utf8_char_len(k->why + i, n - i);
                if (l == 0)
                        k->why[i++] = '?';
                else
                        i += l;
        }
        k->code = code;
        return 0;
}

/* A member as the refusals quote it: a string itself, anything else as compact JSON. */
static void quote(const json_t *v, char buf[static 64])
{
        _cleanup_free_ char *t =
                json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(buf, 64, "%.60s", json_is_string(v) ? json_string_value(v) : t ? t : "?");
}

/* The X-PAYMENT header's base64 (standard alphabet, padding optional) as a JSON object into
 * k->doc. 1, 0 refused, -ENOMEM. */
static int decode(X402Check *k, const char *header)
{
        size_t n = strlen(header);
        if (n == 0)
                return refuse(k, "invalid_payload",
                              "X-PAYMENT is empty: it must hold the base64 of a payment payload");
        /* padding is optional (some encoders drop it), but only all of it */
        if (n % 4 == 1 || (strchr(header, '=') && n % 4 != 0))
                return refuse(k, "invalid_payload", "X-PAYMENT is not base64 (RFC 4648 §4)");
        size_t fill = (4 - n % 4) % 4;
        _cleanup_free_ char *padded = malloc(n + fill + 1), *raw = NULL;
        if (!padded)
                return -ENOMEM;
        memcpy(padded, header, n);
        memset(padded + n, '=', fill);
        padded[n + fill] = 0;
        int r = twin_base64_decode(padded, &raw);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(k, "invalid_payload", "X-PAYMENT is not base64 (RFC 4648 §4)");
        size_t eq = 0;
        while (eq < 2 && padded[n + fill - 1 - eq] == '=')
                eq++;
        size_t len = (n + fill) / 4 * 3 - eq;
        if (strlen(raw) != len)
                return refuse(k, "invalid_payload",
                              "X-PAYMENT does not decode to JSON: it holds a NUL byte");
        json_error_t e;
        k->doc = json_loadb(raw, len, 0, &e);
        if (!k->doc)
                return refuse(k, "invalid_payload", "X-PAYMENT does not decode to JSON: %s",
                              e.text);
        if (!json_is_object(k->doc))
                return refuse(k, "invalid_payload",
                              "X-PAYMENT decodes to JSON that is not an object (a payment "
                              "payload {x402Version, scheme, network, payload})");
        return 1;
}

/* The string member key of the authorization auth, into *ret. 1, 0 refused. */
static int auth_str(X402Check *k, const json_t *auth, const char *key, const char **ret)
{
        json_t *v = json_object_get(auth, key);
        char q[64];
        if (!v)
                return refuse(k, "invalid_payload", "payload.authorization.%s is missing", key);
        if (!json_is_string(v)) {
                quote(v, q);
                return refuse(k, "invalid_payload",
                              "payload.authorization.%s must be a string (got %s)", key, q);
        }
        *ret = json_string_value(v);
        return 1;
}

/*
 * Reads the X-PAYMENT header (a string) and checks it against the resource res (x402 v1 §5.2,
 * the exact scheme's verification, §6.1.2, but for the signature and the balance, which
 * need a chain). 1 good, with the authorization's members in k; 0 refused (k->code, k->why);
 * -ENOMEM.
 */
static int verify(TwinCall *c, const json_t *res, const char *header, X402Check *k)
{
        int r = decode(k, header);
        if (r <= 0)
                return r;
        json_t *ver = json_object_get(k->doc, "x402Version");
        const char *network = json_get_str(res, "network"), *pay_to = json_get_str(res, "pay_to");
        char q[64];
        if (!json_is_integer(ver) || json_integer_value(ver) != X402_VERSION) {
                if (!ver)
                        return refuse(k, "invalid_x402_version",
                                      "x402Version is missing (this resource speaks x402 "
                                      "version %d)",
                                      X402_VERSION);
                quote(ver, q);
                return refuse(k, "invalid_x402_version", "x402Version must be %d (got %s)",
                              X402_VERSION, q);
        }
        json_t *scheme = json_object_get(k->doc, "scheme");
        if (!json_is_string(scheme) || !streq(json_string_value(scheme), X402_SCHEME)) {
                if (!scheme)
                        return refuse(k, "invalid_scheme",
                                      "scheme is missing (this resource accepts \"%s\")",
                                      X402_SCHEME);
                quote(scheme, q);
                return refuse(k, "invalid_scheme",
                              "scheme \"%s\" is not accepted: this resource accepts \"%s\"", q,
                              X402_SCHEME);
        }
        json_t *net = json_object_get(k->doc, "network");
        if (!json_is_string(net) || !streq(json_string_value(net), network)) {
                if (!net)
                        return refuse(k, "invalid_network",
                                      "network is missing (this resource accepts \"%s\")", network);
                quote(net, q);
                return refuse(k, "invalid_network",
                              "network \"%s\" is not this resource's: it accepts \"%s\"", q,
                              network);
        }
        json_t *payload = json_object_get(k->doc, "payload");
        if (!json_is_object(payload))
                return refuse(k, "invalid_payload",
                              "payload is %s: it must be an object {signature, authorization}",
                              payload ? "not an object" : "missing");
        json_t *sig = json_object_get(payload, "signature");
        const char *sv = json_string_value(sig);
        if (!sv || !(startswith(sv, "0x") || startswith(sv, "0X")) || !hex_digits(sv + 2, 0) ||
            strlen(sv + 2) % 2 || strlen(sv + 2) > X402_SIG_MAX)
                return refuse(k, "invalid_exact_evm_payload_signature",
                              "payload.signature %s: it must be 0x and an even number of hex "
                              "digits (at most %d)",
                              !sig ? "is missing" : "is not hex", X402_SIG_MAX);
        json_t *auth = json_object_get(payload, "authorization");
        if (!json_is_object(auth))
                return refuse(k, "invalid_payload",
                              "payload.authorization is %s: it must be an object {from, to, "
                              "value, validAfter, validBefore, nonce}",
                              auth ? "not an object" : "missing");
        if ((r = auth_str(k, auth, "from", &k->from)) <= 0 ||
            (r = auth_str(k, auth, "to", &k->to)) <= 0 ||
            (r = auth_str(k, auth, "value", &k->value)) <= 0 ||
            (r = auth_str(k, auth, "validAfter", &k->valid_after)) <= 0 ||
            (r = auth_str(k, auth, "validBefore", &k->valid_before)) <= 0 ||
            (r = auth_str(k, auth, "nonce", &k->nonce)) <= 0)
                return r;
        if (!evm_address(k->from))
                return refuse(k, "invalid_payload",
                              "payload.authorization.from must be an address (0x and 40 hex "
                              "digits)");
        if (!evm_address(k->to))
                return refuse(k, "invalid_payload",
                              "payload.authorization.to must be an address (0x and 40 hex "
                              "digits)");
        if (strcasecmp(k->to, pay_to) != 0)
                return refuse(k, "invalid_exact_evm_payload_recipient_mismatch",
                              "payload.authorization.to %s is not this resource's payTo %s", k->to,
                              pay_to);
        if (!decimal(k->value, X402_VALUE_MAX))
                return refuse(k, "invalid_payload",
                              "payload.authorization.value must be a decimal integer string "
                              "(the asset's atomic units)");
        int64_t price = json_integer_value(json_object_get(res, "price"));
        if (!covers(k->value, price))
                return refuse(k, "invalid_exact_evm_payload_authorization_value",
                              "payload.authorization.value %.40s is less than maxAmountRequired "
                              "%" PRId64,
                              k->value, price);
        if (!decimal(k->valid_after, 20) || !decimal(k->valid_before, 20))
                return refuse(k, "invalid_payload",
                              "payload.authorization.%s must be a decimal string of seconds "
                              "since the epoch",
                              decimal(k->valid_after, 20) ? "validBefore" : "validAfter");
        int64_t after = decimal_time(k->valid_after), before = decimal_time(k->valid_before);
        if (before <= c->now)
                return refuse(k, "invalid_exact_evm_payload_authorization_valid_before",
                              "the authorization has expired: validBefore %" PRId64
                              " is not after the twin's clock (%" PRId64 ")",
                              before, c->now);
        if (after > c->now)
                return refuse(k, "invalid_exact_evm_payload_authorization_valid_after",
                              "the authorization is not valid yet: validAfter %" PRId64
                              " is after the twin's clock (%" PRId64 ")",
                              after, c->now);
        if (!(startswith(k->nonce, "0x") || startswith(k->nonce, "0X")) ||
            !hex_digits(k->nonce + 2, 64))
                return refuse(k, "invalid_payload",
                              "payload.authorization.nonce must be 32 bytes of hex (0x and 64 "
                              "hex digits)");
        size_t i;
        json_t *paid;
        json_array_foreach (json_object_get(c->world, "x402_payments"), i, paid) {
                if (strcasecmp(strempty(json_get_str(paid, "nonce")), k->nonce) == 0)
                        /* EIP-3009: an authorization's nonce is spent once, on any resource */
                        return refuse(k, "invalid_transaction_state", "nonce already used");
        }
        return 1;
}

/* ------------------------------------------------------------------ settlement */

/* A made-up transaction hash, "0x" and 64 hex digits: SHA-1 of the payment's id and nonce,
 * then of that digest, cut to 32 bytes. Deterministic per world; no chain knows it. */
static void transaction_hash(const char *id, const char *nonce, char ret[static 67])
{
        char a[TWIN_SHA1_HEX], b[TWIN_SHA1_HEX], in[160];
        snprintf(in, sizeof(in), "pome-x402:%s:%s", id, nonce);
        twin_sha1_hex(in, strlen(in), a);
        twin_sha1_hex(a, strlen(a), b);
        snprintf(ret, 67, "0x%s%.24s", a, b);
}

/*
 * Settles the payment k for res: a row of x402_payments[] (the tape's state_delta), the
 * content with its Content-Type and X-PAYMENT-RESPONSE. With pi (the default resource's
 * challenge, a crypto PaymentIntent in the world) the payment is that intent's deposit, as
 * Stripe books an x402 payment: the intent succeeds with its charge and events
 * (stripe_crypto_settle), the payment row names it, and the intent is the state_delta.
 * 0 or -ENOMEM.
 */
static int settle(TwinCall *c, TwinReply *rp, const json_t *res, const X402Check *k, json_t *pi)
{
        char id[40], tx[67], nonce[67];
        int r = stripe_new_id(c->world, "x402", id);
        if (r < 0)
                return r;
        /* nonces compare in lower case: hex, whatever case the client wrote */
        snprintf(nonce, sizeof(nonce), "%s", k->nonce);
        for (char *p = nonce; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        transaction_hash(id, nonce, tx);
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/x402/%s", c->base_url, json_get_str(res, "path")) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:s, s:s, s:s, s:s, s:s, "
                "s:I}",
                "id", id, "object", "x402_payment", "resource", json_get_str(res, "path"), "url",
                url, "scheme", X402_SCHEME, "network", json_get_str(res, "network"), "asset",
                json_get_str(res, "asset"), "pay_to", json_get_str(res, "pay_to"), "payer", k->from,
                "price", json_object_get(res, "price"), "value", k->value, "valid_after",
                k->valid_after, "valid_before", k->valid_before, "nonce", nonce, "transaction", tx,
                "created", (json_int_t)c->now);
        _cleanup_json_ json_t *before = pi ? json_deep_copy(pi) : NULL;
        if (!row || (pi && !before))
                return -ENOMEM;
        if (pi && ((r = stripe_crypto_settle(c, pi, X402_DEFAULT_DEPOSIT, k->from, tx, NULL)) < 0 ||
                   json_object_set(row, "payment_intent", json_object_get(pi, "id")) < 0))
                return r < 0 ? r : -ENOMEM;
        if (stripe_row_add(c->world, "x402_payments", json_incref(row)) < 0 ||
            (pi ? stripe_mutated(rp, before, pi) : stripe_mutated(rp, NULL, row)) < 0)
                return -ENOMEM;
        rp->headers = json_pack("{s:s}", "Content-Type", json_get_str(res, "mime_type"));
        if (!rp->headers)
                return -ENOMEM;
        if ((r = set_b64_header(rp, "X-PAYMENT-RESPONSE",
                                json_pack("{s:b, s:s, s:s, s:s}", "success", true, "transaction",
                                          tx, "network", json_get_str(res, "network"), "payer",
                                          k->from))) < 0)
                return r;
        return twin_reply_body(rp, 200, json_deep_copy(json_object_get(res, "content")));
}

/* ------------------------------------------------------------------ the default resource */

/*
 * The challenge of the default resource waiting for its payment: the newest crypto
 * PaymentIntent the twin opened for it that still awaits its deposit (borrowed), or NULL.
 */
static json_t *open_challenge(TwinCall *c)
{
        json_t *pis = json_object_get(c->world, "payment_intents");
        for (size_t i = json_array_size(pis); i-- > 0;) {
                json_t *pi = json_array_get(pis, i);
                if (streq_ptr(json_get_str(pi, "status"), "requires_action") &&
                    streq_ptr(json_get_str(json_object_get(pi, "metadata"), "x402_resource"),
                              X402_DEFAULT_PATH) &&
                    stripe_crypto_address(pi, X402_DEFAULT_DEPOSIT))
                        return pi;
        }
        return NULL;
}

/*
 * The default resource (hosted Pome's GET /x402/protected-resource,
 * packages/twin-stripe/src/session.ts) as a resource row: $0.01 (10000 atomic units of
 * USDC, which hosted Pome's challenge names "USDC") on Base Sepolia, paid to the deposit
 * address of the challenge's PaymentIntent pi, and hosted Pome's content. New reference.
 */
static json_t *default_resource(const json_t *pi)
{
        return json_pack(
                "{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:{s:b, s:s, s:s}}", "path", X402_DEFAULT_PATH,
                "price", X402_DEFAULT_PRICE, "asset", "USDC", "network", X402_DEFAULT_NETWORK,
                "pay_to", stripe_crypto_address(pi, X402_DEFAULT_DEPOSIT), "description",
                "Unlock the hosted Stripe x402 protected resource", "mime_type", "application/json",
                "content", "ok", true, "resource", "stripe-x402-protected-resource", "message",
                "Payment verified by the Stripe twin.");
}

/*
 * The default resource, served when the seed declares none at its path. As on Stripe's x402
 * guide (https://docs.stripe.com/payments/machine/x402) and in hosted Pome's twin, its
 * challenge opens a crypto PaymentIntent (deposit mode, $0.01, metadata x402_resource) whose
 * deposit address is the payTo; later challenges name the same intent while it waits, and a
 * paid retry to that address is its deposit (settle): the intent succeeds with its charge,
 * balance transaction and events. So the 402 that opens an intent changes the world (the
 * intent is its state_delta): Stripe's intent exists before anything is paid. Payments are
 * checked as a seeded resource's are (verify).
 */
static int default_fetch(TwinCall *c, TwinReply *rp, const char *header)
{
        json_t *pi = open_challenge(c);
        bool opened = false;
        int r;
        if (!pi) {
                _cleanup_json_ json_t *meta =
                        json_pack("{s:s}", "x402_resource", X402_DEFAULT_PATH);
                if (!meta || (r = stripe_crypto_intent_new(c, X402_DEFAULT_CENTS,
                                                           X402_DEFAULT_DEPOSIT, meta, &pi)) < 0)
                        return meta ? r : -ENOMEM;
                opened = true;
        }
        _cleanup_json_ json_t *res = default_resource(pi);
        if (!res)
                return -ENOMEM;
        _cleanup_(x402_check_done) X402Check k = {};
        r = header ? verify(c, res, header, &k) : 0;
        if (r < 0)
                return r;
        if (r > 0)
                return settle(c, rp, res, &k, pi);
        if (opened && (r = stripe_mutated(rp, NULL, pi)) < 0)
                return r;
        if (!header)
                return challenge(c, rp, res, "payment required", NULL, NULL);
        return challenge(c, rp, res, k.why, k.code, evm_address(k.from) ? k.from : NULL);
}

/* ------------------------------------------------------------------ the action */

int stripe_act_x402_fetch(TwinCall *c, TwinReply *rp)
{
        const char *path = json_get_str(c->args, "path");
        const char *header = c->request ? json_get_str(c->request->headers, "x-payment") : NULL;
        json_t *res = NULL, *row;
        size_t i;
        json_array_foreach (json_object_get(c->world, "x402_resources"), i, row) {
                if (streq_ptr(json_get_str(row, "path"), path))
                        res = row;
        }
        if (!res && streq_ptr(path, X402_DEFAULT_PATH))
                return default_fetch(c, rp, header);
        if (!res)
                return stripe_fail(rp, 404, "invalid_request_error", "resource_missing", "path",
                                   "No such x402 resource: '%s'", strempty(path));
        if (!header)
                return challenge(c, rp, res, "X-PAYMENT header is required", NULL, NULL);
        _cleanup_(x402_check_done) X402Check k = {};
        int r = verify(c, res, header, &k);
        if (r < 0)
                return r;
        if (r == 0)
                return challenge(c, rp, res, k.why, k.code, evm_address(k.from) ? k.from : NULL);
        return settle(c, rp, res, &k, NULL);
}
