/* SPDX-License-Identifier: MIT */
/*
 * Crypto PaymentIntents in deposit mode (Stripe's stablecoin payments, a private preview:
 * https://docs.stripe.com/payments/deposit-mode-stablecoin-payments, and the machine
 * payments guide https://docs.stripe.com/payments/machine/x402), the rail hosted Pome's
 * twin calls x402 (packages/twin-stripe/src/domain/payment-intents.ts):
 * - created with payment_method_types[]=crypto, payment_method_options[crypto][mode]=deposit
 *   and payment_method_options[crypto][deposit_options][networks][] (base, tempo, solana),
 *   in usd, the intent is requires_action at once, its next_action Stripe's
 *   {type: "crypto_display_details", crypto_display_details: {deposit_addresses: {<network>:
 *   {address, supported_tokens: [{token_currency: "usdc", token_contract_address}]}}}} — with
 *   or without confirm=true (Stripe's guide confirms at create; hosted Pome's twin takes no
 *   confirm and gives the same status), and payment_method_data[type]=crypto accepted;
 * - POST /v1/test_helpers/payment_intents/{id}/simulate_crypto_deposit (Stripe's sandbox
 *   helper: sandboxes watch no testnet) settles it as funds landing on a deposit address
 *   would: payment_intent.processing, a succeeded charge whose payment_method_details are
 *   {type: crypto, crypto: {buyer_address, network, token_currency, transaction_hash}}, its
 *   balance transaction (Stripe's stablecoin pricing, 1.5%), status succeeded,
 *   charge.succeeded and payment_intent.succeeded;
 * - confirming one again changes nothing (hosted Pome's rule; a canceled one is refused), and
 *   an update may change only what a settled intent may (description, metadata,
 *   receipt_email, statement_descriptor): the deposit addresses were handed out.
 * The twin is offline: addresses are made up, deterministic per intent (SHA-1 of its id and
 * the network), and no chain is watched. A deposit always succeeds (Stripe's failing test
 * transaction hash is not modelled).
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/stripe/stripe.h"
#include "pods/twin/sha1.h"

/* The networks Stripe's deposit mode documents and the USDC contract it names on each. */
static const struct {
        const char *network, *usdc;
} networks[] = {
        {"base", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
        {"tempo", "0x20c000000000000000000000b9537d11c60e8b50"},
        {"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
};

static const char *network_usdc(const char *network)
{
        for (size_t i = 0; network && i < ELEMENTSOF(networks); i++)
                if (streq(network, networks[i].network))
                        return networks[i].usdc;
        return NULL;
}

/* Whether pi (a world row or a draft) is a crypto PaymentIntent. */
bool stripe_pi_is_crypto(const json_t *pi)
{
        size_t i;
        json_t *t;
        json_array_foreach (json_object_get(pi, "payment_method_types"), i, t) {
                if (streq_ptr(json_string_value(t), "crypto"))
                        return true;
        }
        return false;
}

/*
 * A deposit address of intent id on network, into ret (64 bytes): on an EVM network (base,
 * tempo) "0x" and the 40 hex digits of SHA-1("<id>:<network>"); on solana 32 bytes (two
 * such digests, cut) in base58, as Solana writes addresses.
 */
static void deposit_address(const char *id, const char *network, char ret[static 64])
{
        char in[128];
        uint8_t d[2 * TWIN_SHA1_SIZE];
        TwinSha1 s;
        snprintf(in, sizeof(in), "%s:%s", id, network);
        if (!streq(network, "solana")) {
                char hex[TWIN_SHA1_HEX];
                twin_sha1_hex(in, strlen(in), hex);
                snprintf(ret, 64, "0x%s", hex);
                return;
        }
        for (int k = 0; k < 2; k++) {
                twin_sha1_init(&s);
                twin_sha1_update(&s, k ? "2:" : "1:", 2);
                twin_sha1_update(&s, in, strlen(in));
                twin_sha1_final(&s, d + k * TWIN_SHA1_SIZE);
        }
        /* base58 (Bitcoin's alphabet) of the first 32 bytes, big-endian */
        static const char b58[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
        uint8_t num[32];
        char out[64];
        size_t n = 0;
        memcpy(num, d, sizeof(num));
        for (;;) {
                bool zero = true;
                unsigned rem = 0;
                for (size_t i = 0; i < sizeof(num); i++) {
                        unsigned cur = rem * 256 + num[i];
                        num[i] = (uint8_t)(cur / 58);
                        rem = cur % 58;
                        zero = zero && num[i] == 0;
                }
                out[n++] = b58[rem];
                if (zero)
                        break;
        }
        for (size_t i = 0; i < n; i++)
                ret[i] = out[n - 1 - i];
        ret[n] = 0;
}

/*
 * Checks the crypto arguments of a create onto the draft pi (its payment_method_types
 * already crypto): payment_method_options {crypto: {mode: "deposit", deposit_options:
 * {networks: [...]}}} (kept on the intent), payment_method_data {type: "crypto"}, usd, no
 * card's payment_method, automatic capture. 1, 0 with Stripe's 400 in rp, -ENOMEM. Nothing
 * changes in the world.
 */
int stripe_crypto_prepare(TwinCall *c, TwinReply *rp, json_t *pi)
{
        static const char *const opt_keys[] = {"crypto", NULL};
        static const char *const crypto_keys[] = {"mode", "deposit_options", "setup_future_usage",
                                                  NULL};
        static const char *const deposit_keys[] = {"networks", NULL};
        static const char *const data_keys[] = {"type", "metadata", "billing_details", NULL};
        static const char *const modes[] = {"deposit", NULL};
        json_t *opts, *crypto, *deposit, *data;
        const char *mode, *type;
        int r;
        if ((r = stripe_param_object(rp, c->args, "payment_method_options",
                                     "payment_method_options", &opts)) <= 0 ||
            (opts && (r = stripe_param_known(rp, opts, "payment_method_options", opt_keys)) <= 0) ||
            (r = stripe_param_object(rp, opts, "crypto", "payment_method_options[crypto]",
                                     &crypto)) <= 0 ||
            (crypto && (r = stripe_param_known(rp, crypto, "payment_method_options[crypto]",
                                               crypto_keys)) <= 0) ||
            (r = stripe_param_enum(rp, crypto, "mode", "payment_method_options[crypto][mode]",
                                   modes, &mode)) <= 0 ||
            (r = stripe_param_object(rp, crypto, "deposit_options",
                                     "payment_method_options[crypto][deposit_options]",
                                     &deposit)) <= 0 ||
            (deposit &&
             (r = stripe_param_known(rp, deposit, "payment_method_options[crypto][deposit_options]",
                                     deposit_keys)) <= 0) ||
            (r = stripe_param_object(rp, c->args, "payment_method_data", "payment_method_data",
                                     &data)) <= 0 ||
            (data && (r = stripe_param_known(rp, data, "payment_method_data", data_keys)) <= 0) ||
            (r = stripe_param_str(rp, data, "type", "payment_method_data[type]", data != NULL,
                                  &type)) <= 0)
                return r;
        if (data && !streq(type, "crypto"))
                return stripe_invalid(rp, NULL, "payment_method_data[type]",
                                      "payment_method_data[type] must be \"crypto\" for a crypto "
                                      "PaymentIntent (got \"%s\").",
                                      type);
        if (!mode)
                return stripe_invalid(rp, "parameter_missing",
                                      "payment_method_options[crypto][mode]",
                                      "A crypto PaymentIntent needs "
                                      "payment_method_options[crypto][mode]=deposit: the twin "
                                      "serves Stripe's deposit mode only.");
        json_t *nets = json_object_get(deposit, "networks");
        const char *param = "payment_method_options[crypto][deposit_options][networks]";
        if (!json_is_array(nets) || json_array_size(nets) == 0)
                return stripe_invalid(rp, "parameter_missing", param,
                                      "Deposit mode needs the networks to make deposit addresses "
                                      "on: %s[] (base, tempo or solana).",
                                      param);
        size_t i;
        json_t *n;
        json_array_foreach (nets, i, n) {
                if (!network_usdc(json_string_value(n)))
                        return stripe_invalid(rp, NULL, param,
                                              "Invalid %s[%zu]: must be one of base, tempo, or "
                                              "solana",
                                              param, i);
        }
        const char *cur = json_get_str(pi, "currency");
        if (!streq_ptr(cur, "usd"))
                return stripe_invalid(rp, NULL, "currency",
                                      "The currency %s is not supported for the crypto payment "
                                      "method: a stablecoin payment is made in usd.",
                                      strempty(cur));
        if (json_object_get(c->args, "payment_method"))
                return stripe_invalid(rp, NULL, "payment_method",
                                      "A crypto PaymentIntent in deposit mode takes no "
                                      "payment_method: the customer pays to a deposit address "
                                      "(next_action.crypto_display_details).");
        if (streq_ptr(json_get_str(pi, "capture_method"), "manual"))
                return stripe_invalid(rp, NULL, "capture_method",
                                      "The crypto payment method does not support "
                                      "capture_method=manual.");
        _cleanup_json_ json_t *kept = json_deep_copy(crypto);
        if (!kept ||
            json_object_set_new(pi, "payment_method_options", json_pack("{s:O}", "crypto", kept)) <
                    0 ||
            json_object_set_new(pi, "automatic_payment_methods", json_null()) < 0)
                return -ENOMEM;
        return 1;
}

/*
 * Opens the crypto intent pi (a world row, its id drawn, its options checked by
 * stripe_crypto_prepare): a deposit address per requested network in next_action, status
 * requires_action, payment_intent.requires_action emitted. 0 or -ENOMEM.
 */
int stripe_crypto_open(TwinCall *c, json_t *pi)
{
        json_t *nets = json_object_get(
                json_object_get(
                        json_object_get(json_object_get(pi, "payment_method_options"), "crypto"),
                        "deposit_options"),
                "networks");
        _cleanup_json_ json_t *addrs = json_object();
        if (!addrs)
                return -ENOMEM;
        size_t i;
        json_t *n;
        json_array_foreach (nets, i, n) {
                const char *net = json_string_value(n);
                char addr[64];
                deposit_address(json_get_str(pi, "id"), net, addr);
                if (json_object_set_new(addrs, net,
                                        json_pack("{s:s, s:[{s:s, s:s}]}", "address", addr,
                                                  "supported_tokens", "token_currency", "usdc",
                                                  "token_contract_address", network_usdc(net))) < 0)
                        return -ENOMEM;
        }
        json_t *na = json_pack("{s:s, s:{s:O}}", "type", "crypto_display_details",
                               "crypto_display_details", "deposit_addresses", addrs);
        if (!na || json_object_set_new(pi, "next_action", na) < 0 ||
            json_object_set_new(pi, "status", json_string("requires_action")) < 0)
                return -ENOMEM;
        return stripe_event(c, "payment_intent.requires_action", pi, NULL);
}

/*
 * The deposit address of the crypto intent pi on network (borrowed), NULL when it has none
 * there.
 */
const char *stripe_crypto_address(const json_t *pi, const char *network)
{
        json_t *na = json_object_get(pi, "next_action");
        return json_get_str(json_object_get(json_object_get(json_object_get(na, "crypto_display_"
                                                                                "details"),
                                                            "deposit_addresses"),
                                            network),
                            "address");
}

/* The first network pi has a deposit address on (borrowed), NULL when none. */
static const char *first_network(const json_t *pi)
{
        json_t *addrs = json_object_get(
                json_object_get(json_object_get(pi, "next_action"), "crypto_display_details"),
                "deposit_addresses");
        const char *k;
        json_t *v;
        json_object_foreach (addrs, k, v)
                return k;
        return NULL;
}

/* Stripe's stablecoin pricing (https://stripe.com/pricing): 1.5%, rounded half up. */
static int64_t crypto_fee(int64_t amount)
{
        return (amount * 15 + 500) / 1000;
}

/*
 * Settles the crypto intent pi (a world row in requires_action, changed in place) as a
 * deposit of token on network (one of its deposit addresses) from buyer (NULL: unknown)
 * in transaction tx (NULL: unknown): payment_intent.processing, a succeeded charge with its
 * balance transaction, status succeeded, charge.succeeded, payment_intent.succeeded. The
 * charge (borrowed) into *ret_charge when not NULL. 0 or -ENOMEM.
 */
int stripe_crypto_settle(TwinCall *c, json_t *pi, const char *network, const char *buyer,
                         const char *tx, json_t **ret_charge)
{
        int r;
        if (json_object_set_new(pi, "status", json_string("processing")) < 0 ||
            json_object_set_new(pi, "next_action", json_null()) < 0)
                return -ENOMEM;
        if ((r = stripe_event(c, "payment_intent.processing", pi, NULL)) < 0)
                return r;
        char ch_id[40], txn[40], receipt[128];
        if ((r = stripe_new_id(c->world, "ch", ch_id)) < 0)
                return r;
        int64_t amount = json_integer_value(json_object_get(pi, "amount"));
        const char *currency = strempty(json_get_str(pi, "currency"));
        if ((r = stripe_txn_add(c, "charge", ch_id, amount, crypto_fee(amount), currency,
                                json_get_str(pi, "description"), txn)) < 0)
                return r;
        snprintf(receipt, sizeof(receipt), "https://pay.stripe.com/receipts/payment/%s", ch_id);
        json_t *ch = stripe_charge_new(ch_id, c->now, amount, currency);
        json_t *details = json_pack("{s:s, s:{s:s?, s:s, s:s, s:s?}}", "type", "crypto", "crypto",
                                    "buyer_address", buyer, "network", network, "token_currency",
                                    "usdc", "transaction_hash", tx);
        json_t *outcome =
                json_pack("{s:s, s:n, s:s, s:i, s:s, s:s}", "network_status", "approved_by_network",
                          "reason", "risk_level", "normal", "risk_score", 0, "seller_message",
                          "Payment complete.", "type", "authorized");
        if (!ch || !details || !outcome ||
            json_object_set(ch, "customer", json_object_get(pi, "customer")) < 0 ||
            json_object_set(ch, "description", json_object_get(pi, "description")) < 0 ||
            json_object_set(ch, "payment_intent", json_object_get(pi, "id")) < 0 ||
            json_object_set(ch, "receipt_email", json_object_get(pi, "receipt_email")) < 0 ||
            json_object_set_new(ch, "balance_transaction", json_string(txn)) < 0 ||
            json_object_set_new(ch, "payment_method_details", TAKE_PTR(details)) < 0 ||
            json_object_set_new(ch, "outcome", TAKE_PTR(outcome)) < 0 ||
            json_object_set_new(ch, "receipt_url", json_string(receipt)) < 0) {
                json_decref(ch);
                json_decref(details);
                json_decref(outcome);
                return -ENOMEM;
        }
        if ((r = stripe_row_add(c->world, "charges", ch)) < 0)
                return r;
        if (json_object_set_new(pi, "status", json_string("succeeded")) < 0 ||
            json_object_set(pi, "amount_received", json_object_get(pi, "amount")) < 0 ||
            json_object_set_new(pi, "latest_charge", json_string(ch_id)) < 0 ||
            json_object_set_new(pi, "last_payment_error", json_null()) < 0)
                return -ENOMEM;
        if ((r = stripe_event(c, "charge.succeeded", ch, NULL)) < 0 ||
            (r = stripe_event(c, "payment_intent.succeeded", pi, NULL)) < 0)
                return r;
        if (ret_charge)
                *ret_charge = ch;
        return 0;
}

/*
 * A crypto intent the twin makes itself (the x402 protected resource's challenge, x402.c):
 * amount cents of usd payable on network, metadata (borrowed, may be NULL) kept on it,
 * payment_intent.created and payment_intent.requires_action emitted. Borrowed into *ret.
 * 0 or -ENOMEM.
 */
int stripe_crypto_intent_new(TwinCall *c, int64_t amount, const char *network,
                             const json_t *metadata, json_t **ret)
{
        char id[40], secret[96];
        int r = stripe_new_id(c->world, "pi", id);
        if (r < 0)
                return r;
        snprintf(secret, sizeof(secret), "%s_secret_pome%lld", id, (long long)c->now);
        json_t *pi = stripe_pi_new(id, c->now, amount, "usd");
        if (!pi || json_object_set_new(pi, "client_secret", json_string(secret)) < 0 ||
            json_object_set_new(pi, "payment_method_types", json_pack("[s]", "crypto")) < 0 ||
            json_object_set_new(pi, "automatic_payment_methods", json_null()) < 0 ||
            json_object_set_new(pi, "payment_method_options",
                                json_pack("{s:{s:s, s:{s:[s]}}}", "crypto", "mode", "deposit",
                                          "deposit_options", "networks", network)) < 0 ||
            (metadata && json_object_set_new(pi, "metadata", json_deep_copy(metadata)) < 0)) {
                json_decref(pi);
                return -ENOMEM;
        }
        if ((r = stripe_row_add(c->world, "payment_intents", pi)) < 0 ||
            (r = stripe_event(c, "payment_intent.created", pi, NULL)) < 0 ||
            (r = stripe_crypto_open(c, pi)) < 0)
                return r;
        *ret = pi;
        return 0;
}

/*
 * POST /v1/test_helpers/payment_intents/{id}/simulate_crypto_deposit {network?,
 * token_currency?, buyer_wallet?, transaction_hash?}: Stripe's sandbox helper
 * (https://docs.stripe.com/api/payment_intents/simulate_crypto_deposit, preview API) settles
 * a crypto intent in requires_action (stripe_crypto_settle) and answers it. Refusals change
 * nothing: another kind of intent, another status (payment_intent_unexpected_state), a
 * network it has no deposit address on, a token other than usdc.
 */
int stripe_act_simulate_crypto_deposit(TwinCall *c, TwinReply *rp)
{
        static const char *const tokens[] = {"usdc", NULL};
        const char *id, *network, *token, *buyer, *tx;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0 || (r = stripe_arg_str(c, rp, "network", false, &network)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "token_currency", tokens, &token)) <= 0 ||
            (r = stripe_arg_str(c, rp, "buyer_wallet", false, &buyer)) <= 0 ||
            (r = stripe_arg_str(c, rp, "transaction_hash", false, &tx)) <= 0)
                return r;
        json_t *pi = stripe_find(c->world, "payment_intents", id, NULL);
        if (!pi)
                return stripe_missing(rp, "payment_intents", id, "id");
        if (!stripe_pi_is_crypto(pi))
                return stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                      "This PaymentIntent (%s) does not accept crypto deposits: "
                                      "only a PaymentIntent with "
                                      "payment_method_options[crypto][mode]=deposit does.",
                                      id);
        if (!streq_ptr(json_get_str(pi, "status"), "requires_action"))
                return stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                      "You cannot simulate a crypto deposit for this "
                                      "PaymentIntent because it has a status of %s. Only a "
                                      "PaymentIntent with a status of requires_action awaits a "
                                      "deposit.",
                                      strempty(json_get_str(pi, "status")));
        if (!network)
                network = first_network(pi);
        if (!stripe_crypto_address(pi, network))
                return stripe_invalid(rp, NULL, "network",
                                      "This PaymentIntent has no deposit address on network %s.",
                                      strempty(network));
        /* a copy: the intent's next_action (which holds the key) is cleared below */
        char net[16];
        snprintf(net, sizeof(net), "%s", network);
        _cleanup_json_ json_t *before = json_deep_copy(pi);
        if (!before)
                return -ENOMEM;
        if ((r = stripe_crypto_settle(c, pi, net, buyer, tx, NULL)) < 0 ||
            (r = stripe_mutated(rp, before, pi)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, pi);
}
