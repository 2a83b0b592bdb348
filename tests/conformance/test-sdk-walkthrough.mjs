// The product walkthrough (two twins, one sandbox; then all three) driven by the
// vendors' own, unmodified SDK clients: @octokit/rest with baseUrl = the GitHub twin's
// rest_url, @slack/web-api with slackApiUrl = the Slack twin's rest_url + "/", and
// stripe with nothing but the host and port of provider_credentials.stripe.api_base.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { Octokit } from "@octokit/rest";
import { WebClient } from "@slack/web-api";
import Stripe from "stripe";
import { control } from "./lib.mjs";

async function discard(sid) {
  let r = await control("DELETE", `/v1/sandboxes/${sid}`);
  assert.equal(r.status, 409, "an open sandbox is not stopped without confirmation");
  assert.equal(r.body.error.details.reason, "ungraded_session");
  r = await control("DELETE", `/v1/sandboxes/${sid}?confirm_discard=${r.body.error.details.discard_token}`);
  assert.equal(r.status, 204);
}

async function events(restUrl, token) {
  const res = await fetch(`${restUrl}/_pome/events`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  return res.json();
}

const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel() {}, setName() {} };
const slackClient = (token, restUrl) =>
  new WebClient(token, { slackApiUrl: restUrl + "/", retryConfig: { retries: 0 }, logger: quiet });
const github = (auth, baseUrl) => new Octokit({ auth, baseUrl, log: quiet, request: { retries: 0 } });

// ---- one sandbox, two twins
let r = await control("POST", "/v1/sandboxes", { twins: ["github", "slack"] });
assert.equal(r.status, 201, JSON.stringify(r.body));
const a = r.body;
assert.match(a.session_id, /^ses_/);
assert.equal(a.state, "ready");
const ghUrl = a.per_twin.github.rest_url;
const slUrl = a.per_twin.slack.rest_url;
assert.ok(ghUrl.includes(`/s/${a.session_id}`) && slUrl.includes(`/s/${a.session_id}`));

// ---- the GitHub half, with the session token (a JWT: Octokit sends "bearer …")
const gh = github(a.session_token, ghUrl);
const repo = { owner: "acme", repo: "api" };
const { data: issue } = await gh.rest.issues.get({ ...repo, issue_number: 1 });
assert.equal(issue.state, "open");
assert.deepEqual(issue.assignees, []);
assert.equal(issue.comments, 0);
assert.ok(issue.labels.some((l) => l.name === "bug"), "issue #1 is a bug");

const { data: assigned } = await gh.rest.issues.addAssignees({ ...repo, issue_number: 1, assignees: ["alice"] });
assert.deepEqual(assigned.assignees.map((u) => u.login), ["alice"]);
const { data: comment } = await gh.rest.issues.createComment({
  ...repo,
  issue_number: 1,
  body: "Triaged: reproducible, assigned to @alice.",
});
assert.equal(comment.body, "Triaged: reproducible, assigned to @alice.");
const comments = await gh.paginate(gh.rest.issues.listComments, { ...repo, issue_number: 1, per_page: 1 });
assert.equal(comments.length, 1);
const issues = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, state: "all", per_page: 1 });
assert.ok(issues.length >= 1 && issues.every((i) => typeof i.number === "number"));

// the provider-shaped token works too (Octokit sends "token …" for it)
const ghp = github(a.provider_credentials.github.token, ghUrl);
assert.equal((await ghp.rest.repos.get(repo)).data.full_name, "acme/api");

// vendor-shaped refusals
await assert.rejects(gh.rest.issues.get({ ...repo, issue_number: 999999 }), (e) => e.status === 404);
await assert.rejects(github(undefined, ghUrl).rest.issues.get({ ...repo, issue_number: 1 }), (e) => {
  assert.equal(e.status, 401);
  assert.equal(e.response.data.message, "Requires authentication");
  return true;
});
await assert.rejects(github("ghp_pome_bogus_aaaaaaaaaaaaaaaaaaaaaa", ghUrl).rest.issues.get({ ...repo, issue_number: 1 }),
  (e) => e.status === 404);

// ---- the Slack half, and the carry: the agent moves acme/api#1 into the message
const sl = slackClient(a.session_token, slUrl);
const auth = await sl.auth.test();
assert.equal(auth.ok, true);
const { channels } = await sl.conversations.list();
const general = channels.find((c) => c.name === "general");
assert.ok(general, "#general exists");
let hist = await sl.conversations.history({ channel: general.id });
assert.equal(hist.messages.length, 2, "#general holds the two seeded greetings only");
const posted = await sl.chat.postMessage({ channel: general.id, text: `${issue.title}: acme/api#${issue.number} triaged, assigned to alice.` });
assert.equal(posted.ok, true);
assert.match(posted.ts, /^\d+\.\d+$/);
hist = await sl.conversations.history({ channel: general.id });
assert.equal(hist.messages.length, 3);
assert.ok(hist.messages[0].text.includes("acme/api#1"), "newest first");
await assert.rejects(sl.chat.postMessage({ channel: "C_NOPE", text: "x" }), (e) => e.data?.error === "channel_not_found");
const xoxb = slackClient(a.provider_credentials.slack.token, slUrl);
assert.equal((await xoxb.auth.test()).ok, true);

// ---- tapes: one per twin, disjoint, the session id in every path, tool + state_mutation on each
const ghTape = await events(ghUrl, a.session_token);
const slTape = await events(slUrl, a.session_token);
assert.equal((await events(ghUrl, a.session_token)).length, ghTape.length, "reading the tape adds no row");
for (const row of [...ghTape, ...slTape]) {
  assert.ok(row.path.includes(`/s/${a.session_id}/`), row.path);
  assert.ok("tool" in row && "state_mutation" in row);
  assert.ok(!JSON.stringify(row).includes(a.session_token), "the bearer never reaches a tape");
  if (row.request_headers.authorization) assert.equal(row.request_headers.authorization, "[REDACTED]");
}
assert.ok(ghTape.every((r) => r.twin === "github") && slTape.every((r) => r.twin === "slack"));
const ghIds = new Set(ghTape.map((r) => r.event_id));
assert.ok(slTape.every((r) => !ghIds.has(r.event_id)), "the two tapes are disjoint");
assert.ok(!ghTape.some((r) => r.path.includes("chat.postMessage")), "Slack's write is not on GitHub's tape");
const writes = ghTape.filter((r) => r.state_mutation);
assert.deepEqual(writes.map((r) => r.tool).sort(), ["add_issue_assignees", "add_issue_comment"]);
assert.equal(slTape.filter((r) => r.state_mutation).length, 1);

// ---- a second sandbox opened meanwhile still has the untouched world
r = await control("POST", "/v1/sandboxes", { twins: ["github", "slack"] });
assert.equal(r.status, 201);
const b = r.body;
const [bIssue, bHist, aIssue] = await Promise.all([
  github(b.session_token, b.per_twin.github.rest_url).rest.issues.get({ ...repo, issue_number: 1 }),
  slackClient(b.session_token, b.per_twin.slack.rest_url).conversations.history({ channel: general.id }),
  gh.rest.issues.get({ ...repo, issue_number: 1 }),
]);
assert.deepEqual(bIssue.data.assignees, [], "sandbox B: issue #1 still unassigned");
assert.equal(bIssue.data.comments, 0);
assert.equal(bHist.messages.length, 2, "sandbox B: #general still holds only the greetings");
assert.equal(aIssue.data.comments, 1, "sandbox A kept its writes");
// A's token on B's URL is the same opaque 404 a wrong token gets
await assert.rejects(github(a.session_token, b.per_twin.github.rest_url).rest.issues.get({ ...repo, issue_number: 1 }),
  (e) => e.status === 404);

let usage = await control("GET", "/v1/usage");
assert.equal(usage.body.sessions_used, 2);
await discard(a.session_id);
await discard(b.session_id);
usage = await control("GET", "/v1/usage");
assert.equal(usage.body.sessions_used, 0);

// ---- three twins, all or nothing: a seed one twin refuses opens none of them
r = await control("POST", "/v1/sandboxes", {
  twins: ["github", "slack", "stripe"],
  seeds: { stripe: { customers: [{ id: "cus_x", nope: 1 }] } },
});
assert.ok(r.status >= 400 && r.status < 500, JSON.stringify(r.body));
assert.equal((await control("GET", "/v1/usage")).body.sessions_used, 0, "no slot held by a failed create");

// ---- three twins: take a payment in Stripe, file the receipt in Slack
r = await control("POST", "/v1/sandboxes", { twins: ["github", "slack", "stripe"] });
assert.equal(r.status, 201, JSON.stringify(r.body));
const c = r.body;
assert.deepEqual(Object.keys(c.per_twin).sort(), ["github", "slack", "stripe"]);
const base = new URL(c.provider_credentials.stripe.api_base);
const stripe = new Stripe(c.provider_credentials.stripe.api_key, {
  host: base.hostname,
  port: Number(base.port),
  protocol: base.protocol.replace(":", ""),
});
const customer = await stripe.customers.create({ email: "alice@acme.test", name: "Alice" });
const pi = await stripe.paymentIntents.create({
  amount: 4200,
  currency: "usd",
  customer: customer.id,
  payment_method: "pm_card_visa",
  confirm: true,
  automatic_payment_methods: { enabled: true, allow_redirects: "never" },
});
assert.equal(pi.status, "succeeded");
assert.match(pi.latest_charge, /^ch_/);
const charge = await stripe.charges.retrieve(pi.latest_charge);
assert.equal(charge.amount, 4200);
assert.equal(charge.paid, true);
const slc = slackClient(c.session_token, c.per_twin.slack.rest_url);
const receipt = await slc.chat.postMessage({ channel: general.id, text: `Payment received: ${charge.id} ($42.00 from Alice)` });
assert.equal(receipt.ok, true);
const cHist = await slc.conversations.history({ channel: general.id });
assert.ok(cHist.messages[0].text.includes(charge.id), "the receipt id is in #general");
const stTape = await events(c.per_twin.stripe.rest_url, c.session_token);
// the SDK's own paths (routed by the key), on this sandbox's tape
assert.deepEqual(stTape.map((row) => row.path), ["/v1/customers", "/v1/payment_intents", `/v1/charges/${charge.id}`]);
assert.ok(stTape.every((row) => row.twin === "stripe" && row.run_id === c.session_id));
assert.ok(!JSON.stringify(stTape).includes(c.provider_credentials.stripe.api_key), "the key never reaches a tape");
assert.deepEqual(
  stTape.filter((row) => row.state_mutation).map((row) => row.tool),
  ["create_customer", "create_payment_intent"],
);
await discard(c.session_id);
usage = await control("GET", "/v1/usage");
assert.equal(usage.body.sessions_used, 0);
console.log("conformance: octokit + slack web-api + stripe walkthrough passed");
