// The Stripe twin driven the way agents drive Stripe: the official, unmodified `stripe`
// Node SDK (default maxNetworkRetries, its automatic Idempotency-Keys) pointed at the
// gateway by host/port alone — /v1/… is routed by the sandbox's sk_test_pome_… key —
// payments, refunds and billing (products, prices, subscriptions, invoices, test clocks),
// and every Stripe MCP tool through the official @modelcontextprotocol/sdk client.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import Stripe from "stripe";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { control, discard } from "./lib.mjs";

async function get(url, token) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, url);
  return res.json();
}

async function sandbox(seed) {
  const r = await control("POST", "/v1/sandboxes", { twins: ["stripe"], ...(seed ? { seeds: { stripe: seed } } : {}) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const sb = r.body;
  const creds = sb.provider_credentials.stripe;
  assert.match(creds.api_key, /^sk_test_pome_/);
  const base = new URL(creds.api_base);
  // nothing but host, port and protocol: the SDK's own paths, retries and keys
  const stripe = new Stripe(creds.api_key, {
    host: base.hostname,
    port: Number(base.port),
    protocol: base.protocol.replace(":", ""),
  });
  return { sb, stripe, restUrl: sb.per_twin.stripe.rest_url };
}

// =====================================================================================
// 1. A payment, a decline, refunds, pages and events with the official SDK
// =====================================================================================
{
  const { sb, stripe, restUrl } = await sandbox();

  const cus = await stripe.customers.create({ email: "ada@example.com", name: "Ada", metadata: { plan: "pro" } });
  assert.match(cus.id, /^cus_/);
  assert.equal(cus.metadata.plan, "pro");
  const pm = await stripe.paymentMethods.attach("pm_card_visa", { customer: cus.id });
  assert.equal(pm.customer, cus.id);
  assert.equal(pm.card.last4, "4242");

  const pi = await stripe.paymentIntents.create({
    amount: 2000, currency: "usd", customer: cus.id, payment_method: pm.id, confirm: true,
    expand: ["latest_charge"],
  });
  assert.equal(pi.status, "succeeded");
  assert.equal(pi.latest_charge.status, "succeeded");
  const txns = await stripe.balanceTransactions.list({ limit: 1 });
  assert.equal(txns.data[0].source, pi.latest_charge.id);
  assert.equal(txns.data[0].fee, 88);
  assert.equal(txns.data[0].net, 1912);
  const balance = await stripe.balance.retrieve();
  assert.equal(balance.available[0].amount, 1912);

  // a declined card: StripeCardError with the decline code, the intent back to requires_payment_method
  await assert.rejects(
    stripe.paymentIntents.create({ amount: 1000, currency: "usd", payment_method: "pm_card_chargeDeclinedInsufficientFunds", confirm: true }),
    (e) => {
      assert.ok(e instanceof Stripe.errors.StripeCardError, e.constructor.name);
      assert.equal(e.code, "card_declined");
      assert.equal(e.decline_code, "insufficient_funds");
      assert.equal(e.statusCode, 402);
      assert.equal(e.payment_intent.status, "requires_payment_method");
      return true;
    });

  // partial refund, the rest, a third one refused
  const re1 = await stripe.refunds.create({ payment_intent: pi.id, amount: 500 });
  assert.equal(re1.amount, 500);
  const re2 = await stripe.refunds.create({ charge: pi.latest_charge.id });
  assert.equal(re2.amount, 1500);
  const ch = await stripe.charges.retrieve(pi.latest_charge.id);
  assert.equal(ch.amount_refunded, 2000);
  assert.equal(ch.refunded, true);
  await assert.rejects(stripe.refunds.create({ charge: ch.id }), (e) => {
    assert.ok(e instanceof Stripe.errors.StripeInvalidRequestError, e.constructor.name);
    assert.equal(e.code, "charge_already_refunded");
    assert.equal(e.message, `Charge ${ch.id} has already been refunded.`);
    return true;
  });

  // the rest of the surface, each through its SDK method
  assert.equal((await stripe.customers.retrieve(cus.id)).email, "ada@example.com");
  assert.equal((await stripe.customers.update(cus.id, { metadata: { plan: "" }, phone: "+1555" })).phone, "+1555");
  assert.equal((await stripe.customers.listPaymentMethods(cus.id, { type: "card" })).data[0].id, pm.id);
  const mc = await stripe.paymentMethods.create({ type: "card", card: { token: "tok_mastercard" } });
  assert.equal((await stripe.paymentMethods.retrieve(mc.id)).card.brand, "mastercard");
  const open = await stripe.paymentIntents.create({ amount: 700, currency: "usd", customer: cus.id });
  assert.equal(open.status, "requires_payment_method");
  const upd = await stripe.paymentIntents.update(open.id, { payment_method: "pm_card_authenticationRequired" });
  assert.equal(upd.status, "requires_confirmation");
  assert.equal((await stripe.paymentIntents.confirm(open.id)).status, "requires_action");
  assert.equal((await stripe.paymentIntents.cancel(open.id, { cancellation_reason: "abandoned" })).status, "canceled");
  assert.equal((await stripe.paymentIntents.retrieve(open.id)).status, "canceled");
  // a hold (capture_method=manual), captured in part: the rest is released
  const hold = await stripe.paymentIntents.create({
    amount: 1200, currency: "usd", customer: cus.id, payment_method: pm.id, confirm: true, capture_method: "manual",
  });
  assert.equal(hold.status, "requires_capture");
  assert.equal(hold.amount_capturable, 1200);
  const captured = await stripe.paymentIntents.capture(hold.id, { amount_to_capture: 1000, expand: ["latest_charge"] });
  assert.equal(captured.status, "succeeded");
  assert.equal(captured.amount_received, 1000);
  assert.equal(captured.latest_charge.amount_captured, 1000);
  assert.equal(captured.latest_charge.amount_refunded, 200);
  assert.equal((await stripe.paymentIntents.list({ customer: cus.id })).data.length, 3);
  assert.equal((await stripe.charges.list({ payment_intent: pi.id })).data.length, 1);
  await stripe.paymentMethods.attach(mc.id, { customer: cus.id });
  assert.equal((await stripe.paymentMethods.detach(mc.id)).customer, null);
  assert.equal((await stripe.refunds.retrieve(re1.id)).amount, 500);
  assert.equal((await stripe.refunds.list({ charge: ch.id })).data.length, 2);
  const lastEvent = (await stripe.events.list({ limit: 1 })).data[0];
  assert.equal((await stripe.events.retrieve(lastEvent.id)).type, "payment_method.detached");
  const gone = await stripe.customers.create({ email: "gone@example.com" });
  assert.equal((await stripe.customers.del(gone.id)).deleted, true);
  assert.equal((await stripe.customers.retrieve(gone.id)).deleted, true);

  // unknown parameters: Stripe's parameter_unknown
  await assert.rejects(stripe.customers.create({ emial: "x@y.z" }), (e) => {
    assert.equal(e.code, "parameter_unknown");
    assert.equal(e.param, "emial");
    return true;
  });

  // autoPagingEach across pages of customers
  for (let i = 0; i < 24; i++) await stripe.customers.create({ email: `c${i}@example.com` });
  const seen = [];
  await stripe.customers.list({ limit: 10 }).autoPagingEach((c) => { seen.push(c.email); });
  assert.equal(seen.length, 25); // the deleted customer is not listed
  assert.equal(seen[0], "c23@example.com");
  assert.equal(seen[24], "ada@example.com");
  assert.equal(new Set(seen).size, 25);

  // search, paged by the SDK through next_page
  const found = [];
  await stripe.customers.search({ query: "email~'@example.com' AND -email:'ada@example.com'", limit: 7 })
    .autoPagingEach((c) => { found.push(c.email); });
  assert.equal(found.length, 24);
  assert.equal(found[0], "c23@example.com");
  const big = await stripe.paymentIntents.search({ query: `customer:'${cus.id}' AND amount>=1000` });
  assert.deepEqual(big.data.map((p) => p.amount).sort(), [1200, 2000]);
  assert.equal((await stripe.charges.search({ query: "refunded:'true'" })).data[0].id, ch.id);
  assert.equal((await stripe.invoices.search({ query: "created>0" })).object, "search_result");
  assert.equal((await stripe.subscriptions.search({ query: "status:'active'" })).object, "search_result");
  assert.equal((await stripe.prices.search({ query: "active:'true'" })).object, "search_result");
  assert.equal((await stripe.products.search({ query: "active:'true'" })).object, "search_result");
  await assert.rejects(stripe.customers.search({ query: "colour:'red'" }), (e) => {
    assert.ok(e instanceof Stripe.errors.StripeInvalidRequestError, e.constructor.name);
    assert.match(e.message, /unsupported search field/);
    return true;
  });

  // events, newest first, in the order the changes happened
  const events = (await stripe.events.list({ limit: 100 })).data.map((e) => e.type).reverse();
  const firstPayment = events.slice(0, 5);
  assert.deepEqual(firstPayment, ["customer.created", "payment_method.attached", "payment_intent.created",
    "charge.succeeded", "payment_intent.succeeded"]);
  const refundEvents = events.filter((t) => t.startsWith("refund.") || t === "charge.refunded");
  assert.deepEqual(refundEvents, ["refund.created", "charge.refunded", "refund.created", "charge.refunded"]);
  assert.ok(events.includes("charge.failed") && events.includes("payment_intent.payment_failed"));

  // the tape: every SDK call carries an Idempotency-Key on POST; none was replayed
  const tape = await get(`${restUrl}/_pome/events`, sb.session_token);
  const posts = tape.filter((row) => row.method === "POST");
  assert.ok(posts.length > 0 && posts.every((row) => row.idempotency_dedupe === false));
  assert.equal(tape.find((row) => row.path.endsWith("/v1/refunds") && row.status === 400)?.tool, "create_refund");
  await discard(sb.session_id);
}

// =====================================================================================
// 2. An injected 500 on the first attempt: the SDK's retry charges exactly once
// =====================================================================================
{
  const { sb, stripe, restUrl } = await sandbox("first-attempt-fails");
  const pi = await stripe.paymentIntents.create({ amount: 4200, currency: "usd", payment_method: "pm_card_visa", confirm: true });
  assert.equal(pi.status, "succeeded");
  assert.equal((await stripe.charges.list()).data.length, 1);
  assert.equal((await stripe.paymentIntents.list()).data.length, 1);

  // the same request again under the same key: replayed, not charged again
  const key = "order-42";
  const a = await stripe.paymentIntents.create({ amount: 1000, currency: "usd", payment_method: "pm_card_visa", confirm: true }, { idempotencyKey: key });
  const b = await stripe.paymentIntents.create({ amount: 1000, currency: "usd", payment_method: "pm_card_visa", confirm: true }, { idempotencyKey: key });
  assert.equal(a.id, b.id);
  assert.equal((await stripe.charges.list()).data.length, 2);
  await assert.rejects(
    stripe.paymentIntents.create({ amount: 9999, currency: "usd" }, { idempotencyKey: key }),
    (e) => { assert.ok(e instanceof Stripe.errors.StripeIdempotencyError, e.constructor.name); return true; });

  const tape = await get(`${restUrl}/_pome/events`, sb.session_token);
  const creates = tape.filter((row) => row.method === "POST" && row.path.endsWith("/v1/payment_intents"));
  assert.equal(creates[0].status, 500);
  assert.equal(creates[0].state_mutation, false);
  assert.equal(creates[1].status, 200);
  assert.equal(creates[1].request_headers["idempotency-key"], creates[0].request_headers["idempotency-key"]);
  assert.equal(creates[1].state_mutation, true);
  const replay = creates.find((row) => row.idempotency_dedupe === true);
  assert.ok(replay, "a replayed row on the tape");
  assert.equal(replay.state_mutation, false);
  await discard(sb.session_id);
}

// =====================================================================================
// 3. Billing with the official SDK: products, prices, subscriptions paid through the same
//    payment path, their invoices, a decline, cancellation, pages, events, a test clock
// =====================================================================================
{
  const { sb, stripe } = await sandbox();
  const product = await stripe.products.create({ name: "Gold", metadata: { tier: "gold" } });
  assert.match(product.id, /^prod_/);
  assert.equal(product.active, true);
  assert.equal((await stripe.products.retrieve(product.id)).name, "Gold");
  const price = await stripe.prices.create({ product: product.id, currency: "usd", unit_amount: 1000,
    recurring: { interval: "month" }, lookup_key: "gold_monthly" });
  assert.match(price.id, /^price_/);
  assert.equal(price.type, "recurring");
  assert.equal(price.recurring.interval, "month");
  assert.equal((await stripe.prices.retrieve(price.id)).unit_amount, 1000);
  assert.equal((await stripe.prices.update(price.id, { nickname: "Gold monthly" })).nickname, "Gold monthly");
  // a price's amount is immutable: Stripe's parameter_unknown
  await assert.rejects(stripe.prices.update(price.id, { unit_amount: 2000 }), (e) => {
    assert.ok(e instanceof Stripe.errors.StripeInvalidRequestError, e.constructor.name);
    assert.equal(e.code, "parameter_unknown");
    assert.equal(e.param, "unit_amount");
    return true;
  });
  assert.equal((await stripe.products.update(product.id, { default_price: price.id })).default_price, price.id);

  // a product with prices cannot be deleted; one without can
  await assert.rejects(stripe.products.del(product.id), (e) => {
    assert.equal(e.message, "This product cannot be deleted because it has one or more user-created prices.");
    return true;
  });
  const lone = await stripe.products.create({ name: "Lone" });
  assert.equal((await stripe.products.del(lone.id)).deleted, true);

  // pages of prices and products with autoPagingEach
  for (let i = 0; i < 11; i++) await stripe.prices.create({ currency: "usd", unit_amount: 100 + i, product_data: { name: `P${i}` } });
  const amounts = [];
  await stripe.prices.list({ limit: 4, type: "one_time" }).autoPagingEach((p) => { amounts.push(p.unit_amount); });
  assert.deepEqual(amounts, [110, 109, 108, 107, 106, 105, 104, 103, 102, 101, 100]);
  const names = [];
  await stripe.products.list({ limit: 5 }).autoPagingEach((p) => { names.push(p.name); });
  assert.equal(names.length, 12);
  assert.equal(names.at(-1), "Gold");
  assert.equal((await stripe.prices.list({ lookup_keys: ["gold_monthly"] })).data[0].id, price.id);

  // pm_card_visa as the customer's default: the subscription pays at once
  const cus = await stripe.customers.create({ email: "sub@example.com", payment_method: "pm_card_visa",
    invoice_settings: { default_payment_method: "pm_card_visa" } });
  const sub = await stripe.subscriptions.create({ customer: cus.id, items: [{ price: price.id, quantity: 2 }],
    expand: ["latest_invoice.payment_intent"] });
  assert.match(sub.id, /^sub_/);
  assert.equal(sub.status, "active");
  assert.equal(sub.items.data[0].price.id, price.id);
  assert.equal(sub.items.data[0].quantity, 2);
  assert.ok(sub.current_period_end > sub.current_period_start);
  const inv = sub.latest_invoice;
  assert.equal(inv.object, "invoice");
  assert.equal(inv.status, "paid");
  assert.equal(inv.amount_paid, 2000);
  assert.equal(inv.amount_remaining, 0);
  assert.equal(inv.lines.data[0].amount, 2000);
  assert.equal(inv.payment_intent.status, "succeeded");
  const charge = await stripe.charges.retrieve(inv.charge);
  assert.equal(charge.status, "succeeded");
  assert.equal(charge.amount, 2000);
  assert.equal(charge.invoice, inv.id);
  assert.equal((await stripe.invoices.retrieve(inv.id)).subscription, sub.id);
  assert.equal((await stripe.invoices.list({ subscription: sub.id })).data.length, 1);
  assert.equal((await stripe.subscriptions.retrieve(sub.id)).latest_invoice, inv.id);
  const events = (await stripe.events.list({ limit: 100 })).data.map((e) => e.type).reverse();
  const from = events.indexOf("customer.subscription.created");
  assert.deepEqual(events.slice(from, from + 9), ["customer.subscription.created", "invoice.created",
    "invoice.finalized", "payment_intent.created", "charge.succeeded", "payment_intent.succeeded",
    "invoice.paid", "invoice.payment_succeeded", "customer.subscription.updated"]);

  // a declined card: incomplete, the invoice open, its intent waiting for another card
  const bad = await stripe.customers.create({ email: "declined@example.com", payment_method: "pm_card_chargeDeclined",
    invoice_settings: { default_payment_method: "pm_card_chargeDeclined" } });
  const inc = await stripe.subscriptions.create({ customer: bad.id, items: [{ price: price.id }],
    expand: ["latest_invoice.payment_intent"] });
  assert.equal(inc.status, "incomplete");
  assert.equal(inc.latest_invoice.status, "open");
  assert.equal(inc.latest_invoice.payment_intent.status, "requires_payment_method");
  assert.equal(inc.latest_invoice.payment_intent.last_payment_error.decline_code, "generic_decline");
  // error_if_incomplete: the card's 402, no subscription left behind
  await assert.rejects(
    stripe.subscriptions.create({ customer: bad.id, items: [{ price: price.id }], payment_behavior: "error_if_incomplete" }),
    (e) => {
      assert.ok(e instanceof Stripe.errors.StripeCardError, e.constructor.name);
      assert.equal(e.statusCode, 402);
      assert.equal(e.code, "card_declined");
      return true;
    });
  assert.equal((await stripe.subscriptions.list({ customer: bad.id })).data.length, 1);
  // paying its intent with a good card makes it active
  await stripe.paymentIntents.confirm(inc.latest_invoice.payment_intent.id, { payment_method: "pm_card_visa" });
  assert.equal((await stripe.subscriptions.retrieve(inc.id)).status, "active");
  assert.equal((await stripe.invoices.retrieve(inc.latest_invoice.id)).status, "paid");

  // update, then cancel: customer.subscription.deleted
  const upd = await stripe.subscriptions.update(sub.id, { cancel_at_period_end: true, metadata: { why: "test" } });
  assert.equal(upd.cancel_at_period_end, true);
  assert.equal(upd.cancel_at, sub.current_period_end);
  const canceled = await stripe.subscriptions.cancel(inc.id, { cancellation_details: { feedback: "too_expensive" } });
  assert.equal(canceled.status, "canceled");
  assert.equal(canceled.cancellation_details.feedback, "too_expensive");
  assert.equal((await stripe.events.list({ limit: 1 })).data[0].type, "customer.subscription.deleted");
  assert.equal((await stripe.subscriptions.list({ status: "canceled" })).data[0].id, inc.id);
  assert.equal((await stripe.subscriptions.list({ customer: cus.id, price: price.id })).data.length, 1);

  const paid = [];
  await stripe.invoices.list({ limit: 1, status: "paid" }).autoPagingEach((i) => { paid.push(i.id); });
  assert.deepEqual(paid, [inc.latest_invoice.id, inv.id]);

  // a test clock: the customer lives on it, advancing past the period renews the subscription
  const start = 1767225600; // 2026-01-01T00:00:00Z
  const clock = await stripe.testHelpers.testClocks.create({ frozen_time: start, name: "renewals" });
  assert.equal(clock.status, "ready");
  assert.equal((await stripe.testHelpers.testClocks.retrieve(clock.id)).frozen_time, start);
  const ccus = await stripe.customers.create({ email: "clock@example.com", test_clock: clock.id,
    payment_method: "pm_card_visa", invoice_settings: { default_payment_method: "pm_card_visa" } });
  const csub = await stripe.subscriptions.create({ customer: ccus.id, items: [{ price: price.id }] });
  assert.equal(csub.current_period_start, start);
  assert.equal(csub.current_period_end, 1769904000); // 2026-02-01
  const advancing = await stripe.testHelpers.testClocks.advance(clock.id, { frozen_time: 1770076800 }); // 02-03
  assert.equal(advancing.status, "advancing");
  assert.equal((await stripe.testHelpers.testClocks.retrieve(clock.id)).status, "ready");
  const renewed = await stripe.subscriptions.retrieve(csub.id, { expand: ["latest_invoice"] });
  assert.equal(renewed.status, "active");
  assert.equal(renewed.current_period_start, 1769904000);
  assert.equal(renewed.current_period_end, 1772323200); // 2026-03-01
  assert.equal(renewed.latest_invoice.billing_reason, "subscription_cycle");
  assert.equal(renewed.latest_invoice.status, "paid");
  assert.equal((await stripe.invoices.list({ customer: ccus.id })).data.length, 2);
  assert.equal((await stripe.testHelpers.testClocks.list()).data[0].id, clock.id);
  assert.equal((await stripe.testHelpers.testClocks.del(clock.id)).deleted, true);
  await discard(sb.session_id);
}

// =====================================================================================
// 4. Every Stripe MCP tool once, through the official MCP client
// =====================================================================================
{
  const { sb } = await sandbox();
  const client = new Client({ name: "pome-conformance", version: "1.0.0" });
  const mcpUrl = sb.per_twin.stripe.mcp_url ?? `${sb.per_twin.stripe.rest_url}/mcp`;
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${sb.session_token}` } },
  }));
  const listed = (await client.listTools()).tools.map((t) => t.name).sort();
  const expected = ["create_customer", "retrieve_customer", "update_customer", "delete_customer", "list_customers",
    "list_customer_payment_methods", "create_payment_method", "retrieve_payment_method", "attach_payment_method",
    "detach_payment_method", "create_payment_intent", "retrieve_payment_intent", "update_payment_intent",
    "confirm_payment_intent", "cancel_payment_intent", "capture_payment_intent", "simulate_crypto_deposit",
    "list_payment_intents",
    "retrieve_charge", "list_charges",
    "create_refund", "retrieve_refund", "list_refunds", "retrieve_balance", "list_balance_transactions",
    "retrieve_event", "list_events", "search_customers", "search_payment_intents", "search_charges",
    "search_invoices", "search_prices", "search_products", "search_subscriptions",
    "create_product", "retrieve_product", "update_product", "delete_product", "list_products",
    "create_price", "retrieve_price", "update_price", "list_prices",
    "create_subscription", "retrieve_subscription", "update_subscription", "cancel_subscription", "list_subscriptions",
    "retrieve_invoice", "list_invoices",
    "create_test_clock", "retrieve_test_clock", "list_test_clocks", "delete_test_clock", "advance_test_clock"];
  // … and pomed's finalize_run, on every twin of a sandbox (test-finalize-run.mjs)
  assert.deepEqual(listed, [...expected, "finalize_run"].sort());
  const called = new Set();
  const tool = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    const out = res.structuredContent ?? JSON.parse(res.content[0].text);
    assert.ok(!res.isError, `${name}: ${JSON.stringify(out)}`);
    called.add(name);
    return out;
  };
  const cus = await tool("create_customer", { email: "m@example.com" });
  await tool("retrieve_customer", { id: cus.id });
  await tool("update_customer", { id: cus.id, name: "Em" });
  const pm = await tool("create_payment_method", { type: "card", card: { token: "tok_mastercard" } });
  await tool("retrieve_payment_method", { id: pm.id });
  await tool("attach_payment_method", { id: pm.id, customer: cus.id });
  assert.equal((await tool("list_customer_payment_methods", { id: cus.id })).data.length, 1);
  const pi = await tool("create_payment_intent", { amount: 3000, currency: "usd", customer: cus.id });
  await tool("update_payment_intent", { id: pi.id, payment_method: pm.id });
  const done = await tool("confirm_payment_intent", { id: pi.id });
  assert.equal(done.status, "succeeded");
  await tool("retrieve_payment_intent", { id: pi.id });
  await tool("list_payment_intents", { customer: cus.id });
  await tool("retrieve_charge", { id: done.latest_charge });
  await tool("list_charges", { payment_intent: pi.id });
  const re = await tool("create_refund", { charge: done.latest_charge, amount: 1000 });
  await tool("retrieve_refund", { id: re.id });
  await tool("list_refunds", { charge: done.latest_charge });
  await tool("retrieve_balance", {});
  await tool("list_balance_transactions", { type: "refund" });
  const evs = await tool("list_events", { limit: 1 });
  assert.equal(evs.data[0].type, "charge.refunded");
  await tool("retrieve_event", { id: evs.data[0].id });
  // billing: a product and its price, a subscription paid with the attached card, its invoice
  const prod = await tool("create_product", { name: "Seats", metadata: { kind: "seat" } });
  await tool("retrieve_product", { id: prod.id });
  assert.equal((await tool("update_product", { id: prod.id, description: "Per seat" })).description, "Per seat");
  assert.ok((await tool("list_products", { active: true })).data.some((p) => p.id === prod.id));
  const price = await tool("create_price", { product: prod.id, currency: "usd", unit_amount: 800,
    recurring: { interval: "month" } });
  await tool("retrieve_price", { id: price.id });
  await tool("update_price", { id: price.id, nickname: "Seat monthly" });
  assert.equal((await tool("list_prices", { product: prod.id })).data.length, 1);
  const sub = await tool("create_subscription", { customer: cus.id, items: [{ price: price.id, quantity: 3 }],
    default_payment_method: pm.id });
  assert.equal(sub.status, "active");
  await tool("retrieve_subscription", { id: sub.id });
  await tool("update_subscription", { id: sub.id, metadata: { seats: "3" } });
  assert.equal((await tool("list_subscriptions", { customer: cus.id })).data.length, 1);
  const invoice = await tool("retrieve_invoice", { id: sub.latest_invoice });
  assert.equal(invoice.amount_paid, 2400);
  assert.equal((await tool("list_invoices", { subscription: sub.id })).data.length, 1);
  assert.equal((await tool("cancel_subscription", { id: sub.id })).status, "canceled");
  const gone = await tool("create_product", { name: "Unpriced" });
  assert.equal((await tool("delete_product", { id: gone.id })).deleted, true);
  const clock = await tool("create_test_clock", { frozen_time: 1767225600 });
  await tool("retrieve_test_clock", { id: clock.id });
  assert.equal((await tool("list_test_clocks", {})).data.length, 1);
  assert.equal((await tool("advance_test_clock", { id: clock.id, frozen_time: 1767312000 })).frozen_time, 1767312000);
  assert.equal((await tool("delete_test_clock", { id: clock.id })).deleted, true);
  const other = await tool("create_payment_intent", { amount: 500, currency: "usd" });
  await tool("cancel_payment_intent", { id: other.id });
  const held = await tool("create_payment_intent", {
    amount: 800, currency: "usd", payment_method: "pm_card_visa", confirm: true, capture_method: "manual",
  });
  assert.equal(held.status, "requires_capture");
  assert.equal((await tool("capture_payment_intent", { id: held.id })).status, "succeeded");
  await tool("detach_payment_method", { id: pm.id });
  await tool("delete_customer", { id: cus.id });
  await tool("list_customers", {});
  assert.equal((await tool("search_customers", { query: "email:'m@example.com'" })).data.length, 0);
  // the payment, the subscription's first invoice, the captured hold
  assert.equal((await tool("search_payment_intents", { query: "status:'succeeded'" })).data.length, 3);
  assert.equal((await tool("search_charges", { query: `payment_intent:'${pi.id}'` })).data.length, 1);
  assert.deepEqual((await tool("search_subscriptions", { query: "status:'canceled'" })).data.map((x) => x.id), [sub.id]);
  assert.deepEqual((await tool("search_invoices", { query: `subscription:'${sub.id}' AND total:2400` }))
    .data.map((x) => x.id), [invoice.id]);
  assert.deepEqual((await tool("search_prices", { query: `product:'${prod.id}' AND active:'true'` }))
    .data.map((x) => x.id), [price.id]);
  assert.deepEqual((await tool("search_products", { query: "name~'seat' AND metadata['kind']:'seat'" }))
    .data.map((x) => x.id), [prod.id]);
  // a crypto PaymentIntent paid by the deposit test helper (test-stripe-hosted-tasks.mjs has more)
  const crypto = await tool("create_payment_intent", {
    amount: 10000, currency: "usd", payment_method_types: ["crypto"],
    payment_method_options: { crypto: { mode: "deposit", deposit_options: { networks: ["base"] } } },
  });
  assert.equal(crypto.status, "requires_action");
  assert.equal((await tool("simulate_crypto_deposit", { id: crypto.id })).status, "succeeded");
  assert.deepEqual([...called].sort(), [...expected].sort());
  await client.close();
  await discard(sb.session_id);
}
console.log("ok: stripe conformance");
