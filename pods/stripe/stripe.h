/* SPDX-License-Identifier: MIT */
/*
 * The Stripe twin's private header: the world helpers, replies, argument readers, lists,
 * expansion and events the resource-family files (customers.c, payment_methods.c,
 * payment_intents.c, crypto.c, charges.c, refunds.c, balance.c, events.c, search.c,
 * products.c, prices.c, subscriptions.c, invoices.c, test_clocks.c, x402.c) share with stripe.c
 * and with each other, and
 * the action handlers the kind's table (stripe.c) binds to pods/stripe/surface.json. Each
 * function's comment is at its definition. Not for anything outside pods/stripe.
 */
#pragma once

#include "pods/twin/kind.h"

/* The largest amount the twin takes, in the currency's smallest unit (stripe_arg_amount's). */
#define STRIPE_MAX_AMOUNT INT64_C(99999999999)

/* ----- world (stripe.c) */
json_t *stripe_rows(json_t *w, const char *collection);
json_t *stripe_find(json_t *w, const char *collection, const char *id, size_t *ret_idx);
json_t *stripe_find_any(json_t *w, const char *id);
int stripe_new_id(json_t *w, const char *prefix, char ret[static 40]);
int stripe_row_add(json_t *w, const char *collection, json_t *row);
int stripe_row_replace(json_t *w, const char *collection, size_t idx, json_t *row);
int64_t stripe_fee(const char *currency, int64_t amount);
int stripe_txn_add(TwinCall *c, const char *type, const char *source, int64_t amount, int64_t fee,
                   const char *currency, const char *description, char ret_id[static 40]);

/* ----- replies (stripe.c) */
int stripe_fail(TwinReply *rp, int status, const char *type, const char *code, const char *param,
                const char *fmt, ...) _printf_(6, 7);
int stripe_invalid(TwinReply *rp, const char *code, const char *param, const char *fmt, ...)
        _printf_(4, 5);
int stripe_missing(TwinReply *rp, const char *collection, const char *id, const char *param);
int stripe_reply_object(TwinCall *c, TwinReply *rp, int status, json_t *obj);
int stripe_mutated(TwinReply *rp, const json_t *before, const json_t *after);

/* ----- arguments (stripe.c): c->args[key], or a member of a nested parameter named param */
int stripe_param_str(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                     bool required, const char **ret);
int stripe_param_int(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                     int64_t min, int64_t max, bool required, int64_t *ret);
int stripe_param_amount(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                        bool required, int64_t *ret);
/*
 * obj[key] as Stripe reads a boolean: JSON true/false, or the strings "true"/"false" in any
 * case ("True" from stripe-python); "1", "0" and anything else are -EINVAL. 0 with *ret,
 * -ENOENT when absent or null.
 */
int stripe_bool(const json_t *obj, const char *key, bool *ret);
int stripe_param_bool(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                      bool *ret);
int stripe_param_enum(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                      const char *const *values, const char **ret);
int stripe_param_currency(TwinReply *rp, const json_t *obj, const char *param, bool required,
                          const char **ret);
int stripe_param_object(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                        json_t **ret);
int stripe_param_known(TwinReply *rp, const json_t *obj, const char *param,
                       const char *const *keys);
int stripe_param_metadata(TwinReply *rp, const json_t *obj, const char *param, json_t *row);
int stripe_param_strings(TwinReply *rp, const json_t *obj, const char *prefix, json_t *row,
                         const char *const *keys);
int stripe_arg_id(TwinCall *c, TwinReply *rp, const char *key, const char **ret);
int stripe_arg_str(TwinCall *c, TwinReply *rp, const char *key, bool required, const char **ret);
int stripe_arg_amount(TwinCall *c, TwinReply *rp, const char *key, bool required, int64_t *ret);
int stripe_arg_bool(TwinCall *c, TwinReply *rp, const char *key, bool *ret);
int stripe_arg_enum(TwinCall *c, TwinReply *rp, const char *key, const char *const *values,
                    const char **ret);
int stripe_arg_currency(TwinCall *c, TwinReply *rp, bool required, const char **ret);
int stripe_apply_metadata(TwinCall *c, TwinReply *rp, json_t *row);
int stripe_set_strings(TwinCall *c, TwinReply *rp, json_t *row, const char *const *keys);
void stripe_money(const char *currency, int64_t amount, char buf[static 32]);

/* ----- lists and expansion (stripe.c) */
typedef bool (*StripeFilter)(TwinCall *c, json_t *row);
int stripe_list(TwinCall *c, TwinReply *rp, const char *collection, const char *url,
                StripeFilter keep);
int stripe_expand(TwinCall *c, TwinReply *rp, json_t *obj, json_t *expand);
int stripe_list_expansions(TwinCall *c, TwinReply *rp, bool *ret_total, json_t **ret_paths);

/* ----- events (events.c) */
int stripe_event(TwinCall *c, const char *type, const json_t *object, const json_t *previous);

/* ----- payment intents (payment_intents.c) */
int stripe_pi_attempt(TwinCall *c, TwinReply *rp, json_t *pi, const char *ref, bool off,
                      bool error_on_action, bool *ret_declined);

/* ----- crypto payment intents in deposit mode (crypto.c) */
bool stripe_pi_is_crypto(const json_t *pi);
int stripe_crypto_prepare(TwinCall *c, TwinReply *rp, json_t *pi);
int stripe_crypto_open(TwinCall *c, json_t *pi);
const char *stripe_crypto_address(const json_t *pi, const char *network);
int stripe_crypto_settle(TwinCall *c, json_t *pi, const char *network, const char *buyer,
                         const char *tx, json_t **ret_charge);
int stripe_crypto_intent_new(TwinCall *c, int64_t amount, const char *network,
                             const json_t *metadata, json_t **ret);

/* ----- products and prices (products.c, prices.c) */
int stripe_product_fields(TwinReply *rp, const json_t *obj, const char *prefix, json_t *row);
int stripe_product_make(TwinCall *c, TwinReply *rp, const json_t *obj, const char *prefix,
                        json_t **ret);
int stripe_price_build(TwinCall *c, TwinReply *rp, const json_t *obj, const char *prefix,
                       json_t **ret);
int stripe_price_store(TwinCall *c, json_t *draft, const char *product, json_t **ret);
json_t *stripe_plan_of(const json_t *price);

/* ----- invoices and subscriptions (invoices.c, subscriptions.c) */
json_t *stripe_invoice_new(TwinCall *c, const char *id, const json_t *cus, const char *currency);
int stripe_invoice_add_line(TwinCall *c, json_t *inv, const json_t *item, int64_t start,
                            int64_t end, bool trial);
int stripe_invoice_finalize(TwinCall *c, json_t *inv, const char *pm, bool attempt, bool off);
int stripe_invoice_payment_attempted(TwinCall *c, json_t *pi);
int64_t stripe_interval_add(int64_t t, const char *interval, int64_t n);
int64_t stripe_subscription_due(const json_t *sub);
int64_t stripe_subscription_two_periods(const json_t *sub, int64_t t);
int stripe_subscription_renew(TwinCall *c, json_t *sub);
int stripe_subscriptions_end_for(TwinCall *c, const char *customer);
int stripe_items_total(const json_t *data, int64_t *ret);

/* ----- test clocks (test_clocks.c) */
int64_t stripe_clock_time(TwinCall *c, const char *clock_id);

/* ----- x402 resources (x402.c) */
int stripe_x402_seed(TwinSeed *s, const json_t *seed);

/* ----- payment methods (payment_methods.c) */
int stripe_pm_resolve(TwinCall *c, TwinReply *rp, const char *ref, const char *param, json_t **ret);
const char *stripe_pm_decline(const json_t *pm, const char **ret_code, const char **ret_message);
bool stripe_pm_needs_action(const json_t *pm);
bool stripe_pm_test_id(const char *ref);

/* ----- actions */
int stripe_act_create_customer(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_customer(TwinCall *c, TwinReply *rp);
int stripe_act_update_customer(TwinCall *c, TwinReply *rp);
int stripe_act_delete_customer(TwinCall *c, TwinReply *rp);
int stripe_act_list_customers(TwinCall *c, TwinReply *rp);
int stripe_act_list_customer_payment_methods(TwinCall *c, TwinReply *rp);
int stripe_act_create_payment_method(TwinCall *c, TwinReply *rp);
int stripe_act_list_payment_methods(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_payment_method(TwinCall *c, TwinReply *rp);
int stripe_act_attach_payment_method(TwinCall *c, TwinReply *rp);
int stripe_act_detach_payment_method(TwinCall *c, TwinReply *rp);
int stripe_act_create_payment_intent(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_payment_intent(TwinCall *c, TwinReply *rp);
int stripe_act_update_payment_intent(TwinCall *c, TwinReply *rp);
int stripe_act_confirm_payment_intent(TwinCall *c, TwinReply *rp);
int stripe_act_cancel_payment_intent(TwinCall *c, TwinReply *rp);
int stripe_act_capture_payment_intent(TwinCall *c, TwinReply *rp);
int stripe_act_simulate_crypto_deposit(TwinCall *c, TwinReply *rp);
int stripe_act_list_payment_intents(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_charge(TwinCall *c, TwinReply *rp);
int stripe_act_list_charges(TwinCall *c, TwinReply *rp);
int stripe_act_create_refund(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_refund(TwinCall *c, TwinReply *rp);
int stripe_act_list_refunds(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_balance(TwinCall *c, TwinReply *rp);
int stripe_act_list_balance_transactions(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_event(TwinCall *c, TwinReply *rp);
int stripe_act_list_events(TwinCall *c, TwinReply *rp);
int stripe_act_search_customers(TwinCall *c, TwinReply *rp);
int stripe_act_search_payment_intents(TwinCall *c, TwinReply *rp);
int stripe_act_search_charges(TwinCall *c, TwinReply *rp);
int stripe_act_search_invoices(TwinCall *c, TwinReply *rp);
int stripe_act_search_prices(TwinCall *c, TwinReply *rp);
int stripe_act_search_products(TwinCall *c, TwinReply *rp);
int stripe_act_search_subscriptions(TwinCall *c, TwinReply *rp);
int stripe_act_create_product(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_product(TwinCall *c, TwinReply *rp);
int stripe_act_update_product(TwinCall *c, TwinReply *rp);
int stripe_act_delete_product(TwinCall *c, TwinReply *rp);
int stripe_act_list_products(TwinCall *c, TwinReply *rp);
int stripe_act_create_price(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_price(TwinCall *c, TwinReply *rp);
int stripe_act_update_price(TwinCall *c, TwinReply *rp);
int stripe_act_list_prices(TwinCall *c, TwinReply *rp);
int stripe_act_create_subscription(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_subscription(TwinCall *c, TwinReply *rp);
int stripe_act_update_subscription(TwinCall *c, TwinReply *rp);
int stripe_act_cancel_subscription(TwinCall *c, TwinReply *rp);
int stripe_act_list_subscriptions(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_invoice(TwinCall *c, TwinReply *rp);
int stripe_act_list_invoices(TwinCall *c, TwinReply *rp);
int stripe_act_create_test_clock(TwinCall *c, TwinReply *rp);
int stripe_act_retrieve_test_clock(TwinCall *c, TwinReply *rp);
int stripe_act_list_test_clocks(TwinCall *c, TwinReply *rp);
int stripe_act_delete_test_clock(TwinCall *c, TwinReply *rp);
int stripe_act_advance_test_clock(TwinCall *c, TwinReply *rp);
int stripe_act_x402_fetch(TwinCall *c, TwinReply *rp);

/* ----- seed rows, shared with the families that create them */
json_t *stripe_customer_new(const char *id, int64_t created);
/* Stripe's stub of a deleted object: {id, object, deleted: true}. New reference. */
json_t *stripe_deleted_stub(const json_t *row);
json_t *stripe_pm_new(const char *id, int64_t created, const char *brand, const char *last4);
json_t *stripe_pi_new(const char *id, int64_t created, int64_t amount, const char *currency);
json_t *stripe_charge_new(const char *id, int64_t created, int64_t amount, const char *currency);
json_t *stripe_refund_new(const char *id, int64_t created, int64_t amount, const char *currency);
json_t *stripe_product_new(const char *id, int64_t created, const char *name);
json_t *stripe_price_new(const char *id, int64_t created, const char *currency, int64_t amount);
