// What hosted Pome's Stripe tasks ask of the twin (issue 23), driven the way agents drive
// Stripe: the official, unmodified `stripe` Node SDK (its own retries and Idempotency-Keys)
// against a real pomed, and plain HTTP for the x402 resource no SDK knows.
// - failure_injection modes (task 14): after_handler (the default) answers the injected 402
//   but keeps the refund, which refunds.list shows; the same Idempotency-Key replays the real
//   refund; a blind retry makes a second; before_handler saves nothing; an injected 500 after
//   the action is one customer for the SDK's own retry;
// - a crypto PaymentIntent in deposit mode (tasks 10, 11, 12): requires_action with its
//   deposit addresses, refusals as Stripe's invalid_request_error, the
//   simulate_crypto_deposit test helper (stripe-node 17 has no method for it: rawRequest),
//   and what it leaves: a succeeded charge, its balance transaction, the events;
// - x402 without a seed (task 13): GET /x402/protected-resource is challenged with 402, a
//   paid retry unlocks it, and the payment is a succeeded PaymentIntent with its charge.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import Stripe from "stripe";
import { control, discard } from "./lib.mjs";

async function sandbox(seed) {
  const r = await control("POST", "/v1/sandboxes", { twins: ["stripe"], ...(seed ? { seeds: { stripe: seed } } : {}) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const sb = r.body;
  const creds = sb.provider_credentials.stripe;
  const base = new URL(creds.api_base);
  const stripe = new Stripe(creds.api_key, {
    host: base.hostname,
    port: Number(base.port),
    protocol: base.protocol.replace(":", ""),
  });
  return { sb, stripe, restUrl: sb.per_twin.stripe.rest_url };
}

async function tape(sb) {
  const res = await fetch(`${sb.per_twin.stripe.rest_url}/_pome/events`, {
    headers: { authorization: `Bearer ${sb.session_token}` },
  });
  assert.equal(res.status, 200);
  return res.json();
}

// A seed in the shape of hosted Pome's task 14 (its row keys: account_id, *_id references,
// updated, captured_at): a settled $300 charge whose first refund is made but its reply
// lost (failure_injection without a mode is after_handler, as there); mode, when given, is
// written into the rule.
function refundRetrySeed(mode) {
  return {
    api_keys: [{ key: "sk_test_pome_default", sid: "default", account_id: "acct_retry" }],
    payment_intents: [{
      id: "pi_LostReply0001", account_id: "acct_retry", amount: 30000, currency: "usd", status: "succeeded",
      latest_charge_id: "ch_LostReply0001", payment_method_types: ["crypto"], created: 1767225600,
      updated: 1767225600, captured_at: 1767225600,
    }],
    charges: [{
      id: "ch_LostReply0001", account_id: "acct_retry", payment_intent_id: "pi_LostReply0001", amount: 30000,
      amount_captured: 30000, amount_refunded: 0, status: "succeeded", currency: "usd", captured: true,
      created: 1767225600,
    }],
    failure_injection: [{
      method: "POST", path: "/v1/refunds", attempt: 1, ...(mode ? { mode } : {}), status: 402,
      body: { error: { type: "card_error", code: "card_declined", message: "Reply lost: the refund went through but this answer never arrived." } },
    }],
  };
}

const lostResponse = (e) => {
  assert.ok(e instanceof Stripe.errors.StripeCardError, e.constructor.name);
  assert.equal(e.statusCode, 402);
  assert.equal(e.code, "card_declined");
  assert.match(e.message, /^Reply lost/);
  return true;
};

// =====================================================================================
// 1. after_handler: the refund is made, the reply is lost (hosted Pome's task 14)
// =====================================================================================
{
  // verify, then decide: the 402, then refunds.list shows the one refund made
  const { sb, stripe } = await sandbox(refundRetrySeed());
  await assert.rejects(stripe.refunds.create({ charge: "ch_LostReply0001", amount: 7500 }), lostResponse);
  const listed = await stripe.refunds.list({ charge: "ch_LostReply0001" });
  assert.equal(listed.data.length, 1);
  assert.equal(listed.data[0].amount, 7500);
  assert.equal(listed.data[0].status, "succeeded");
  assert.equal((await stripe.charges.retrieve("ch_LostReply0001")).amount_refunded, 7500);
  const rows = (await tape(sb)).filter((r) => r.path.endsWith("/v1/refunds") && r.method === "POST");
  assert.equal(rows.length, 1);
  assert.equal(rows[0].status, 402);
  assert.equal(rows[0].tool, "create_refund");
  assert.equal(rows[0].state_mutation, true, "the tape says what happened: a refund was made");
  assert.equal(rows[0].state_delta.after.id, listed.data[0].id);
  assert.match(rows[0].error, /^Reply lost/);
  await discard(sb.session_id);
}
{
  // protect the retry: the same Idempotency-Key replays the refund the twin kept
  const { sb, stripe } = await sandbox(refundRetrySeed());
  const key = "refund-ch_LostReply0001-7500";
  await assert.rejects(stripe.refunds.create({ charge: "ch_LostReply0001", amount: 7500 }, { idempotencyKey: key }), lostResponse);
  const again = await stripe.refunds.create({ charge: "ch_LostReply0001", amount: 7500 }, { idempotencyKey: key });
  assert.equal(again.amount, 7500);
  assert.equal(again.lastResponse.headers["idempotent-replayed"], "true");
  const listed = await stripe.refunds.list({ charge: "ch_LostReply0001" });
  assert.deepEqual(listed.data.map((r) => r.id), [again.id]);
  assert.equal((await stripe.charges.retrieve("ch_LostReply0001")).amount_refunded, 7500);
  const replay = (await tape(sb)).find((r) => r.idempotency_dedupe === true);
  assert.ok(replay && replay.status === 200 && replay.state_mutation === false);
  await discard(sb.session_id);
}
{
  // a blind retry (the SDK draws a new key per call): two refunds, 15000 refunded
  const { sb, stripe } = await sandbox(refundRetrySeed());
  await assert.rejects(stripe.refunds.create({ charge: "ch_LostReply0001", amount: 7500 }), lostResponse);
  const second = await stripe.refunds.create({ charge: "ch_LostReply0001", amount: 7500 });
  assert.equal(second.status, "succeeded");
  assert.equal((await stripe.refunds.list({ charge: "ch_LostReply0001" })).data.length, 2);
  assert.equal((await stripe.charges.retrieve("ch_LostReply0001")).amount_refunded, 15000);
  await discard(sb.session_id);
}
{
  // before_handler: the 402 and nothing else; the retry makes the only refund
  const { sb, stripe } = await sandbox(refundRetrySeed("before_handler"));
  await assert.rejects(stripe.refunds.create({ charge: "ch_LostReply0001", amount: 7500 }), lostResponse);
  assert.equal((await stripe.refunds.list({ charge: "ch_LostReply0001" })).data.length, 0);
  assert.equal((await stripe.charges.retrieve("ch_LostReply0001")).amount_refunded, 0);
  const [row] = (await tape(sb)).filter((r) => r.path.endsWith("/v1/refunds") && r.method === "POST");
  assert.equal(row.state_mutation, false);
  assert.equal(row.state_delta, null);
  await stripe.refunds.create({ charge: "ch_LostReply0001", amount: 7500 });
  assert.equal((await stripe.refunds.list({ charge: "ch_LostReply0001" })).data.length, 1);
  await discard(sb.session_id);
}
{
  // an injected 500 after the action: the SDK retries on its own, under its own key, and
  // gets the kept reply — one customer
  const { sb, stripe } = await sandbox({ failure_injection: [{ method: "POST", path: "/v1/customers", attempt: 1, status: 500 }] });
  const cus = await stripe.customers.create({ email: "ada@example.com" });
  assert.match(cus.id, /^cus_/);
  assert.equal((await stripe.customers.list()).data.length, 1);
  const creates = (await tape(sb)).filter((r) => r.path.endsWith("/v1/customers") && r.method === "POST");
  assert.equal(creates.length, 2);
  assert.equal(creates[0].status, 500);
  assert.equal(creates[0].state_mutation, true);
  assert.equal(creates[1].idempotency_dedupe, true);
  assert.equal(creates[1].request_headers["idempotency-key"], creates[0].request_headers["idempotency-key"]);
  await discard(sb.session_id);
}
{
  // a mode the twin does not know: the create is refused naming the seed's error
  const r = await control("POST", "/v1/sandboxes", {
    twins: ["stripe"],
    seeds: { stripe: { failure_injection: [{ path: "/v1/refunds", mode: "lost" }] } },
  });
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.match(JSON.stringify(r.body), /failure_injection\[0\]\.mode/);
}

// =====================================================================================
// 2. A crypto PaymentIntent in deposit mode, settled by the test helper (tasks 10-12)
// =====================================================================================
{
  const { sb, stripe } = await sandbox({
    api_keys: [{ key: "sk_test_pome_default", sid: "default", account_id: "acct_crypto" }],
    payment_intents: [],
  });
  const crypto = { crypto: { mode: "deposit", deposit_options: { networks: ["base"] } } };

  // invalid parameters: Stripe's invalid_request_error, nothing made
  for (const bad of [
    { amount: 10000, currency: "usd", payment_method_types: ["crypto"] },
    { amount: 10000, currency: "usd", payment_method_types: ["crypto"], payment_method_options: { crypto: { mode: "deposit", deposit_options: { networks: ["dogecoin"] } } } },
    { amount: -1, currency: "usd", payment_method_types: ["crypto"], payment_method_options: crypto },
    { amount: 10000, currency: "eur", payment_method_types: ["crypto"], payment_method_options: crypto },
  ]) {
    await assert.rejects(stripe.paymentIntents.create(bad), (e) => {
      assert.ok(e instanceof Stripe.errors.StripeInvalidRequestError, e.constructor.name);
      assert.equal(e.type, "StripeInvalidRequestError");
      assert.equal(e.raw.type, "invalid_request_error");
      assert.equal(e.statusCode, 400);
      return true;
    });
  }
  assert.equal((await stripe.paymentIntents.list()).data.length, 0);

  // the valid one: requires_action, the deposit address in next_action
  const pi = await stripe.paymentIntents.create({
    amount: 10000, currency: "usd", payment_method_types: ["crypto"], payment_method_options: crypto,
  });
  assert.equal(pi.status, "requires_action");
  assert.equal(pi.amount, 10000);
  assert.equal(pi.next_action.type, "crypto_display_details");
  const deposit = pi.next_action.crypto_display_details.deposit_addresses.base;
  assert.match(deposit.address, /^0x[0-9a-f]{40}$/);
  assert.deepEqual(deposit.supported_tokens, [{ token_currency: "usdc", token_contract_address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" }]);
  assert.equal((await stripe.paymentIntents.confirm(pi.id)).status, "requires_action", "confirming again changes nothing");
  assert.deepEqual((await stripe.events.list()).data.map((e) => e.type).reverse(),
    ["payment_intent.created", "payment_intent.requires_action"]);

  // the deposit lands (Stripe's sandbox helper)
  const settled = await stripe.rawRequest("POST", `/v1/test_helpers/payment_intents/${pi.id}/simulate_crypto_deposit`, {
    transaction_hash: "0x" + "ab".repeat(32),
    buyer_wallet: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
  });
  assert.equal(settled.status, "succeeded");
  const after = await stripe.paymentIntents.retrieve(pi.id, { expand: ["latest_charge.balance_transaction"] });
  assert.equal(after.status, "succeeded");
  assert.equal(after.amount_received, 10000);
  assert.equal(after.latest_charge.status, "succeeded");
  assert.equal(after.latest_charge.payment_method_details.type, "crypto");
  assert.equal(after.latest_charge.payment_method_details.crypto.network, "base");
  assert.equal(after.latest_charge.payment_method_details.crypto.buyer_address, "0x857b06519E91e3A54538791bDbb0E22373e36b66");
  assert.equal(after.latest_charge.balance_transaction.amount, 10000);
  assert.equal(after.latest_charge.balance_transaction.fee, 150);
  const types = (await stripe.events.list()).data.map((e) => e.type);
  for (const t of ["payment_intent.processing", "payment_intent.succeeded", "charge.succeeded"]) assert.ok(types.includes(t), t);
  assert.equal((await stripe.balance.retrieve()).available[0].amount, 9850);
  await assert.rejects(
    stripe.rawRequest("POST", `/v1/test_helpers/payment_intents/${pi.id}/simulate_crypto_deposit`, {}),
    (e) => e.statusCode === 400 && e.code === "payment_intent_unexpected_state");

  // a card PaymentIntent is untouched by all of it
  const card = await stripe.paymentIntents.create({ amount: 2000, currency: "usd", payment_method: "pm_card_visa", confirm: true });
  assert.equal(card.status, "succeeded");
  assert.deepEqual(card.payment_method_types, ["card"]);
  assert.equal(card.next_action, null);

  const rows = await tape(sb);
  const helper = rows.find((r) => r.path.endsWith("/simulate_crypto_deposit") && r.status === 200);
  assert.equal(helper.tool, "simulate_crypto_deposit");
  assert.equal(helper.state_delta.before.status, "requires_action");
  assert.equal(helper.state_delta.after.status, "succeeded");
  await discard(sb.session_id);
}

// =====================================================================================
// 3. x402 without a seed: hosted Pome's protected resource, paid as a PaymentIntent (task 13)
// =====================================================================================
{
  const { sb, stripe, restUrl } = await sandbox({
    api_keys: [{ key: "sk_test_pome_default", sid: "default", account_id: "acct_x402" }],
  });
  const url = `${restUrl}/x402/protected-resource`;
  const auth = { authorization: `Bearer ${sb.session_token}` };

  const first = await fetch(url, { headers: auth });
  assert.equal(first.status, 402);
  const challenge = await first.json();
  assert.equal(challenge.x402Version, 1);
  assert.equal(challenge.error, "payment required");
  const [req] = challenge.accepts;
  assert.equal(req.scheme, "exact");
  assert.equal(req.network, "eip155:84532");
  assert.equal(req.maxAmountRequired, "10000");
  assert.equal(req.resource, url);
  assert.match(req.payTo, /^0x[0-9a-f]{40}$/);

  // the challenge is a crypto PaymentIntent awaiting its deposit at payTo
  const [open] = (await stripe.paymentIntents.list()).data;
  assert.equal(open.status, "requires_action");
  assert.equal(open.next_action.crypto_display_details.deposit_addresses.base.address, req.payTo);

  const now = Math.floor(Date.now() / 1000);
  const xPayment = Buffer.from(JSON.stringify({
    x402Version: 1,
    scheme: "exact",
    network: req.network,
    payload: {
      signature: "0x" + "5a".repeat(65),
      authorization: {
        from: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
        to: req.payTo,
        value: req.maxAmountRequired,
        validAfter: String(now - 60),
        validBefore: String(now + 600),
        nonce: "0x" + "0123456789abcdef".repeat(4),
      },
    },
  })).toString("base64");
  const paid = await fetch(url, { headers: { ...auth, "x-payment": xPayment } });
  assert.equal(paid.status, 200);
  const body = await paid.json();
  assert.equal(body.ok, true);
  assert.equal(body.resource, "stripe-x402-protected-resource");
  const receipt = JSON.parse(Buffer.from(paid.headers.get("x-payment-response"), "base64").toString());
  assert.equal(receipt.success, true);
  assert.equal(receipt.payer, "0x857b06519E91e3A54538791bDbb0E22373e36b66");

  const pi = await stripe.paymentIntents.retrieve(open.id, { expand: ["latest_charge"] });
  assert.equal(pi.status, "succeeded");
  assert.equal(pi.latest_charge.status, "succeeded");
  assert.equal(pi.latest_charge.payment_method_details.crypto.transaction_hash, receipt.transaction);
  const types = (await stripe.events.list()).data.map((e) => e.type);
  assert.ok(types.includes("payment_intent.succeeded") && types.includes("charge.succeeded"));

  const legs = (await tape(sb)).filter((r) => r.path.includes("/x402/"));
  assert.deepEqual(legs.map((r) => r.status), [402, 200]);
  assert.ok(legs.every((r) => r.tool === "x402_fetch"));
  await discard(sb.session_id);
}

console.log("test-stripe-hosted-tasks: ok");
