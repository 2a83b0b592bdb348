#!/usr/bin/env node
// Prints, as Markdown, what each twin serves (pods/<twin>/surface.json: REST routes and MCP
// tools) and which tests exercise each one, for README.md's "What the twins serve".
//   node scripts/twin-coverage.mjs            the tables
//   node scripts/twin-coverage.mjs --check    exit 1 when a route or MCP tool has no test
// A test covers a GitHub route when it calls the @octokit/rest method of that route (from
// the SDK's own endpoint table; octokit.graphql for POST /graphql), octokit.request("METHOD
// /path"), or the twin engine directly (unit tests: req(t, &rp, "METHOD", "/path")); a Slack method when it calls it
// through @slack/web-api (client.chat.postMessage(…), apiCall("chat.postMessage")); a Stripe
// route when a test calls the stripe SDK method of its action (stripe.customers.create(…)) or
// the twin engine directly with its path (unit tests: post(t, &rp, "/v1/customers", …); the
// x402 resources, which no SDK knows, through x402(t, &rp, "GET", "/x402/…", …) or the grading
// fixture's fx_call_h(&f, "POST", "/x402/…", …)); a Gmail route when a test calls the googleapis
// method of that route (gmail.users.messages.list(…), from the client's generated code) or the
// twin engine with its path; Linear's POST /graphql when a test makes a LinearClient or posts
// to /graphql through the engine; an MCP tool when a test names it as a string.
import { readFileSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");

const tests = [];
for (const dir of ["tests/conformance", "tests/integration", "tests/unit"]) {
  for (const f of readdirSync(join(root, dir)).sort()) {
    if (/^test-.*\.(mjs|sh|c)$/.test(f)) tests.push({ name: f, text: readFileSync(join(root, dir, f), "utf8") });
  }
}

// "/repos/{owner}/{repo}/contents/{path+}" → a RegExp over concrete paths and a key over
// templates: parameter names differ between octokit and us, their places do not.
const templateKey = (method, path) =>
  `${method} ${path.replace(/\{[^}]+\}/g, "{}").replace(/\/$/, "")}`;
const concrete = (path) =>
  new RegExp(
    "^" +
      path
        .split(/(\{[^}]+\})/)
        .map((p) => (p.startsWith("{") ? (p.endsWith("+}") ? ".+" : "[^/?\"']+") : p.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
        .join("") +
      "(\\?|$)",
  );

async function octokitMethods() {
  const file = join(root, "tests/conformance/node_modules/@octokit/plugin-rest-endpoint-methods/dist-src/generated/endpoints.js");
  const endpoints = (await import(file)).default;
  const byKey = new Map();
  for (const [ns, methods] of Object.entries(endpoints))
    for (const [m, [route]] of Object.entries(methods)) {
      const [verb, path] = route.split(" ");
      const k = templateKey(verb, path);
      if (!byKey.has(k)) byKey.set(k, []);
      byKey.get(k).push(`${ns}.${m}`);
    }
  return byKey;
}

function coveredBy(pred) {
  return tests.filter((t) => pred(t.text)).map((t) => t.name);
}

function githubRouteTests(method, path, byKey) {
  const methods = byKey.get(templateKey(method, path.replace("{path+}", "{path}").replace(/\{(\w+)\+\}/, "{$1}"))) ?? [];
  const re = concrete(path);
  return coveredBy((text) => {
    for (const m of methods) if (text.includes(`.${m}(`) || text.includes(`.${m},`)) return true;
    // GraphQL: octokit.graphql(…) posts to {baseUrl}/graphql
    if (method === "POST" && path === "/graphql" && /\.graphql\(/.test(text)) return true;
    // octokit.request("GET /repos/{owner}/…") and the C unit tests' req(t, &rp, "GET", "/…")
    for (const [, verb, p] of text.matchAll(/["'`](GET|POST|PUT|PATCH|DELETE) (\/[^"'`\s]*)["'`]/g))
      if (verb === method && (re.test(p) || templateKey(verb, p) === templateKey(method, path))) return true;
    for (const [, verb, p] of text.matchAll(/"(GET|POST|PUT|PATCH|DELETE)",\s*"(\/[^"]*)"/g))
      if (verb === method && re.test(p)) return true;
    return false;
  });
}

// googleapis' method for each Gmail route ("users.messages.list"), read from the client's own
// generated code: each method's url (and mediaUrl, the /upload/… form of the same method)
// under the class of its resource.
function googleapisMethods() {
  const file = join(root, "tests/conformance/node_modules/googleapis/build/src/apis/gmail/v1.js");
  const byKey = new Map();
  const add = (verb, path, name) => {
    const k = templateKey(verb, path);
    if (!byKey.has(k)) byKey.set(k, []);
    byKey.get(k).push(name);
  };
  let resource = null, name = null, path = null, verb = null;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    let m;
    if ((m = line.match(/^\s*class Resource\$(\S+) \{/)))
      resource = m[1].split("$").map((w) => w[0].toLowerCase() + w.slice(1)).join(".");
    else if ((m = line.match(/^\s{8}(\w+)\(paramsOrCallback/))) [name, path, verb] = [`${resource}.${m[1]}`, null, null];
    else if ((m = line.match(/^\s*url: \(rootUrl \+ '([^']+)'\)/))) path = m[1];
    else if ((m = line.match(/^\s*method: '(\w+)'/)) && path) add((verb = m[1]), path, name);
    // an upload goes to the mediaUrl with the method's own verb, when the call has a media
    else if ((m = line.match(/^\s*mediaUrl: \(rootUrl \+ '([^']+)'\)/)) && verb) add(verb, m[1], `${name}+media`);
  }
  return byKey;
}

// A C test's text with its string macros expanded where they start a literal
// (#define U "/gmail/v1/users/me" … U "/labels" → "/gmail/v1/users/me/labels").
// Adjacent literals are joined ("/upload" "/gmail/…"), and a path made with snprintf(path,
// sizeof(path), "/…/%s", …) stands in for that variable where a later call passes it.
function expandMacros(text) {
  for (const [, name, value] of text.matchAll(/^#define (\w+) "([^"\\]*)"$/gm))
    text = text.replace(new RegExp(`\\b${name} "`, "g"), `"${value}`);
  text = text.replace(/"([^"\\\n]*)"\s+"/g, '"$1');
  const vars = new Map();
  return text
    .split("\n")
    .map((line) => {
      const m = line.match(/snprintf\((\w+), sizeof\(\1\), "(\/[^"]*)"/);
      if (m) vars.set(m[1], m[2]);
      else
        line = line.replace(/(&rp, |"(?:GET|POST|PUT|PATCH|DELETE)",\s*)(\w+)([,)])/g, (all, pre, v, post) =>
          vars.has(v) ? `${pre}"${vars.get(v)}"${post}` : all);
      return line;
    })
    .join("\n");
}

function gmailRouteTests(method, path, byKey) {
  const methods = byKey.get(templateKey(method, path)) ?? [];
  const re = concrete(path);
  return coveredBy((raw) => {
    // googleapis: gmail.users.messages.send(…); its upload form only with a media body
    for (const m of methods)
      if (m.endsWith("+media") ? raw.includes(`.${m.slice(0, -6)}(`) && /\bmedia:/.test(raw) : raw.includes(`.${m}(`))
        return true;
    // the C unit tests: send_json(t, &rp, "POST", U "/labels", …), get(t, &rp, U "/labels", …)
    const text = expandMacros(raw);
    const calls = [
      ...text.matchAll(/"(GET|POST|PUT|PATCH|DELETE)",\s*"(\/[^"]*)"/g),
      ...[...text.matchAll(/\bget\(\w+, &rp, "(\/[^"]*)"/g)].map(([a, p]) => [a, "GET", p]),
      ...text.matchAll(/\btwin_test_req\(\w+, &rp, "(GET|POST|PUT|PATCH|DELETE)", "(\/[^"]*)"/g),
    ];
    return calls.some(([, verb, p]) => verb === method && re.test(p.replace(/%s/g, "x")));
  });
}

// Linear's one route: POST /graphql, which @linear/sdk's LinearClient calls and the C unit
// tests reach with their GraphQL helper.
const linearRouteTests = () => coveredBy((text) => /new LinearClient\(|"POST",\s*"\/graphql"/.test(text));

function slackMethodTests(name) {
  // the upload URL files.getUploadURLExternal hands out: the SDK's filesUploadV2 posts there
  if (name.startsWith("_upload/")) return coveredBy((text) => /\.filesUploadV2\(/.test(text));
  const [ns, ...rest] = name.split(".");
  const call = new RegExp(`\\.${ns}\\.${rest.join("\\.")}\\(|apiCall\\(["']${name.replace(/\./g, "\\.")}["']|["'/]${name.replace(/\./g, "\\.")}["'?]`);
  return coveredBy((text) => call.test(text));
}

// stripe-node's method for each Stripe action (resource.method, as the SDK names them)
const stripeMethods = {
  create_customer: "customers.create", retrieve_customer: "customers.retrieve",
  update_customer: "customers.update", delete_customer: "customers.del", list_customers: "customers.list",
  list_customer_payment_methods: "customers.listPaymentMethods",
  create_payment_method: "paymentMethods.create", retrieve_payment_method: "paymentMethods.retrieve",
  attach_payment_method: "paymentMethods.attach", detach_payment_method: "paymentMethods.detach",
  list_payment_methods: "paymentMethods.list",
  create_payment_intent: "paymentIntents.create", retrieve_payment_intent: "paymentIntents.retrieve",
  update_payment_intent: "paymentIntents.update", confirm_payment_intent: "paymentIntents.confirm",
  cancel_payment_intent: "paymentIntents.cancel", capture_payment_intent: "paymentIntents.capture",
  list_payment_intents: "paymentIntents.list",
  retrieve_charge: "charges.retrieve", list_charges: "charges.list",
  create_refund: "refunds.create", retrieve_refund: "refunds.retrieve", list_refunds: "refunds.list",
  retrieve_balance: "balance.retrieve", list_balance_transactions: "balanceTransactions.list",
  retrieve_event: "events.retrieve", list_events: "events.list",
  search_customers: "customers.search", search_payment_intents: "paymentIntents.search",
  search_charges: "charges.search", search_invoices: "invoices.search", search_prices: "prices.search",
  search_products: "products.search", search_subscriptions: "subscriptions.search",
  create_product: "products.create", retrieve_product: "products.retrieve", update_product: "products.update",
  delete_product: "products.del", list_products: "products.list",
  create_price: "prices.create", retrieve_price: "prices.retrieve", update_price: "prices.update",
  list_prices: "prices.list",
  create_subscription: "subscriptions.create", retrieve_subscription: "subscriptions.retrieve",
  update_subscription: "subscriptions.update", cancel_subscription: "subscriptions.cancel",
  list_subscriptions: "subscriptions.list",
  retrieve_invoice: "invoices.retrieve", list_invoices: "invoices.list",
  create_test_clock: "testHelpers.testClocks.create", retrieve_test_clock: "testHelpers.testClocks.retrieve",
  list_test_clocks: "testHelpers.testClocks.list", delete_test_clock: "testHelpers.testClocks.del",
  advance_test_clock: "testHelpers.testClocks.advance",
};

function stripeRouteTests(method, path, tool) {
  const sdk = stripeMethods[tool];
  // the unit tests' paths may be printf formats: "/v1/payment_intents/%s/confirm"
  const re = concrete(path);
  return coveredBy((text) => {
    if (sdk && text.includes(`.${sdk}(`)) return true;
    const calls = [
      ...[...text.matchAll(/\b(post|get)\(\w+, &rp, "(\/v1[^"]*)"/g)].map(([, v, p]) => [v.toUpperCase(), p]),
      ...[...text.matchAll(/\bcall\(\w+, &rp, "(GET|POST|DELETE)", "(\/v1[^"]*)"/g)].map(([, v, p]) => [v, p]),
      ...[...text.matchAll(/\b(?:x402\(\w+, &rp|fx_call_h\(&\w+), "(GET|POST)",\s*"(\/x402\/[^"]*)"/g)].map(([, v, p]) => [v, p]),
    ];
    return calls.some(([verb, p]) => verb === method && re.test(p.replace(/%s/g, "x")));
  });
}

const toolTests = (tool) => coveredBy((text) => new RegExp(`["'\`]${tool}["'\`]`).test(text));

const list = (names) => (names.length ? names.join(", ") : "**none**");
let missing = 0;
const out = [];
const byKey = await octokitMethods();

const gmailByKey = googleapisMethods();

const titles = { github: "GitHub", slack: "Slack", stripe: "Stripe", gmail: "Gmail", linear: "Linear" };
for (const twin of ["github", "slack", "stripe", "gmail", "linear"]) {
  const surface = JSON.parse(readFileSync(join(root, `pods/${twin}/surface.json`), "utf8"));
  const tools = new Map(surface.tools.map((t) => [t.name, t]));
  const mcp = surface.tools.filter((t) => t.mcp !== false);
  out.push(`<details><summary>${titles[twin]}: ${surface.routes.length} routes, ${mcp.length} MCP tools</summary>`, "");
  out.push("| Route | Tool | Tests |", "|---|---|---|");
  for (const [method, path, tool, fixed] of surface.routes) {
    const shown = twin === "slack" ? `${method === "*" ? "GET/POST" : method} \`${path}\`` : `${method} \`${path}\``;
    const names =
      twin === "slack" ? slackMethodTests(path.slice(1))
      : twin === "stripe" ? stripeRouteTests(method, path, tool)
      : twin === "gmail" ? gmailRouteTests(method, path, gmailByKey)
      : twin === "linear" ? linearRouteTests()
      : githubRouteTests(method, path, byKey);
    if (!names.length) missing++;
    const t = tools.get(tool);
    const label = `\`${tool}\`${fixed ? ` ${JSON.stringify(fixed).replace(/"/g, "")}` : ""}${t?.mcp === false ? "" : " (MCP)"}`;
    out.push(`| ${shown} | ${label} | ${list(names)} |`);
  }
  out.push("", "| MCP tool | Tests |", "|---|---|");
  for (const t of mcp) {
    const names = toolTests(t.name);
    if (!names.length) missing++;
    out.push(`| \`${t.name}\` | ${list(names)} |`);
  }
  out.push("", "</details>", "");
}
console.log(out.join("\n"));
if (check && missing) {
  console.error(`twin-coverage: ${missing} route(s) or tool(s) without a test`);
  process.exit(1);
}
