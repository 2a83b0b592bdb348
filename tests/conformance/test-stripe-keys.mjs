// Key coverage of the Stripe twin against stripe-node's own description of each object
// (node_modules/stripe/types/*.d.ts: a member without "?" is present on every instance, null
// or not). Each object the twin serves is made or read through the official SDK in a real
// pomed sandbox, and every always-present key must be there, except the few listed below
// with the reason each is left out. Prints the share of keys served per object.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Stripe from "stripe";
import { control, discard } from "./lib.mjs";

const types = new URL("./node_modules/stripe/types", import.meta.url).pathname;

// The always-present and the optional members of `interface NAME {` in FILE (top level only).
function described(file, name) {
  const text = readFileSync(join(types, file), "utf8");
  const at = text.search(new RegExp(`\\n {4}interface ${name} \\{`));
  assert.ok(at >= 0, `${name} in ${file}`);
  let depth = 0, i = text.indexOf("{", at), end = i;
  for (; end < text.length; end++) {
    if (text[end] === "{") depth++;
    else if (text[end] === "}" && --depth === 0) break;
  }
  const body = text.slice(i + 1, end);
  const always = [], optional = [];
  for (const m of body.matchAll(/^ {6}(\w+)(\??):/gm)) (m[2] ? optional : always).push(m[1]);
  return { always, optional };
}

// Keys the twin leaves out on purpose: {Object: {key: "reason"}}. None at present; a key added
// here must say why the twin cannot serve it.
const leftOut = {};

let r = await control("POST", "/v1/sandboxes", { twins: ["stripe"] });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const creds = sb.provider_credentials.stripe;
const base = new URL(creds.api_base);
const stripe = new Stripe(creds.api_key, {
  host: base.hostname, port: Number(base.port), protocol: base.protocol.replace(":", ""),
  maxNetworkRetries: 0,
});

const customer = await stripe.customers.create({ email: "keys@example.com", name: "Keys" });
const pi = await stripe.paymentIntents.create({
  amount: 1200, currency: "usd", customer: customer.id, payment_method: "pm_card_visa", confirm: true,
});
const charge = await stripe.charges.retrieve(pi.latest_charge);
const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 200 });
const pm = await stripe.paymentMethods.retrieve(pi.payment_method);
const product = await stripe.products.create({ name: "Widget" });
const price = await stripe.prices.create({ product: product.id, unit_amount: 900, currency: "usd" });
const monthly = await stripe.prices.create({
  product: product.id, unit_amount: 500, currency: "usd", recurring: { interval: "month" },
});
const card = await stripe.paymentMethods.attach("pm_card_visa", { customer: customer.id });
const subscription = await stripe.subscriptions.create({
  customer: customer.id, items: [{ price: monthly.id }], default_payment_method: card.id,
});
const invoice = await stripe.invoices.retrieve(subscription.latest_invoice);
const txn = (await stripe.balanceTransactions.list({ limit: 1 })).data[0];
const event = (await stripe.events.list({ limit: 1 })).data[0];

const served = { Charge: charge, PaymentIntent: pi, Customer: customer, Refund: refund,
  PaymentMethod: pm, Product: product, Price: price, Subscription: subscription, Invoice: invoice,
  BalanceTransaction: txn, Event: event };
const ifaces = { Event: "EventBase" };
const files = { Charge: "Charges.d.ts", PaymentIntent: "PaymentIntents.d.ts", Customer: "Customers.d.ts",
  Refund: "Refunds.d.ts", PaymentMethod: "PaymentMethods.d.ts", Product: "Products.d.ts", Price: "Prices.d.ts",
  Subscription: "Subscriptions.d.ts", Invoice: "Invoices.d.ts", BalanceTransaction: "BalanceTransactions.d.ts",
  Event: "Events.d.ts" };
const missing = [];
for (const [name, obj] of Object.entries(served)) {
  const { always } = described(files[name], ifaces[name] ?? name);
  const lacking = always.filter((k) => !(k in obj) && !(k in (leftOut[name] ?? {})));
  const have = always.filter((k) => k in obj).length;
  console.log(`${name}: ${have}/${always.length} always-present keys (${Math.round((100 * have) / always.length)}%)` +
    (lacking.length ? `; missing ${lacking.join(", ")}` : ""));
  if (lacking.length) missing.push(`${name}: ${lacking.join(", ")}`);
}
assert.deepEqual(missing, [], "always-present keys the twin does not serve (and does not list as left out)");
await discard(sb.session_id);
