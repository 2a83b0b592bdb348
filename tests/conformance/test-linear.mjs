// The Linear twin driven the way agents drive Linear: the official, unmodified @linear/sdk
// (new LinearClient({apiKey, apiUrl: rest_url + "/graphql"}), its own generated documents
// and fragments, its models' lazy fetches) through real sandboxes: the viewer, teams and
// their workflow states, a filtered and paginated backlog, triage of that queue (states,
// priorities, assignees), labels, threaded comments, Linear's GraphQL error shape; then a
// hand-off from a GitHub issue (read with @octokit/rest) to a Linear issue in a sandbox of
// both twins. The world is checked through /_pome/state (the twin's flat world) and the tape.
// Expectations are Linear's as documented (developers.linear.app/docs/graphql, the SDK's
// types), computed from the seed below, never read back from the twin.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { LinearClient, LinearError, InvalidInputLinearError, LinearErrorType } from "@linear/sdk";
import { Octokit } from "@octokit/rest";
import { control, discard } from "./lib.mjs";

const failures = [];
async function section(name, fn) {
  try {
    await fn();
    console.log(`ok: ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL: ${name}\n  ${(e.stack ?? String(e)).split("\n").slice(0, 6).join("\n  ")}`);
    if (e instanceof LinearError) {
      console.log(`  LinearError type=${e.type} status=${e.status} errors=${JSON.stringify(e.errors).slice(0, 600)}`);
      console.log(`  query: ${(e.query ?? "").replace(/\s+/g, " ").slice(0, 300)}`);
    }
  }
}

const now = Math.floor(Date.now() / 1000) * 1000;
const ago = (hours) => new Date(now - hours * 3600e3).toISOString();
const VIEWER = "admin@pome-twin.test";

// ---- the seed: hosted Pome's Linear seed format, a team's untriaged backlog
const engStates = [
  { id: "state_eng_backlog", name: "Backlog", type: "backlog", position: 0 },
  { id: "state_eng_todo", name: "Todo", type: "unstarted", position: 1 },
  { id: "state_eng_progress", name: "In Progress", type: "started", position: 2 },
  { id: "state_eng_review", name: "In Review", type: "started", position: 3 },
  { id: "state_eng_done", name: "Done", type: "completed", position: 4 },
  { id: "state_eng_canceled", name: "Canceled", type: "canceled", position: 5 },
];
const seed = {
  clock: new Date(now).toISOString(),
  organization: { id: "org_acme", name: "Acme", urlKey: "acme" },
  users: [
    { id: "user_admin", email: VIEWER, name: "Admin User", displayName: "admin", admin: true },
    { id: "user_maya", email: "maya@acme.example", name: "Maya Chen", displayName: "maya" },
    { id: "user_omar", email: "omar@acme.example", name: "Omar Haddad", displayName: "omar" },
  ],
  teams: [
    { id: "team_eng", key: "ENG", name: "Engineering", states: engStates },
    {
      id: "team_des", key: "DES", name: "Design", states: [
        { id: "state_des_backlog", name: "Backlog", type: "backlog", position: 0 },
        { id: "state_des_todo", name: "Todo", type: "unstarted", position: 1 },
        { id: "state_des_done", name: "Done", type: "completed", position: 2 },
      ],
    },
  ],
  labels: [
    { id: "label_bug", name: "Bug", color: "#eb5757", team: "ENG" },
    { id: "label_feature", name: "Feature", color: "#4ea7fc", team: "ENG" },
  ],
  issues: [
    { id: "issue_checkout", team: "ENG", title: "Checkout returns 502 for EU cards", description: "Every EU card payment fails since 08:55.", state: "Backlog", creator: "maya@acme.example", createdAt: ago(5), updatedAt: ago(5) },
    { id: "issue_export", team: "ENG", title: "CSV export times out on large workspaces", state: "Backlog", creator: "omar@acme.example", createdAt: ago(30), updatedAt: ago(30) },
    { id: "issue_typo", team: "ENG", title: "Typo on the pricing page", state: "Backlog", createdAt: ago(50), updatedAt: ago(50) },
    { id: "issue_sso", team: "ENG", title: "Add SSO via Okta", state: "Backlog", createdAt: ago(70), updatedAt: ago(70) },
    { id: "issue_dup", team: "ENG", title: "Checkout broken (duplicate report)", state: "Backlog", createdAt: ago(4), updatedAt: ago(4) },
    { id: "issue_flaky", team: "ENG", title: "Flaky test: payments retry", state: "Todo", priority: 3, assignee: "omar@acme.example", createdAt: ago(90), updatedAt: ago(90) },
    { id: "issue_ratelimit", team: "ENG", title: "Rate-limit the login endpoint", state: "Done", priority: 2, labels: ["Bug"], assignee: "maya@acme.example", createdAt: ago(200), updatedAt: ago(100) },
    { id: "issue_illustrations", team: "DES", title: "New empty-state illustrations", state: "Backlog", createdAt: ago(10), updatedAt: ago(10) },
  ],
  comments: [
    { id: "comment_sentry", issue: "issue_checkout", body: "Seeing this in Sentry since the 08:55 deploy.", user: "omar@acme.example", createdAt: ago(4) },
  ],
};
const engBacklog = ["issue_checkout", "issue_export", "issue_typo", "issue_sso", "issue_dup"];

const sorted = (xs) => [...xs].sort();

async function sandbox(twins, seeds) {
  const r = await control("POST", "/v1/sandboxes", { twins, ...(seeds ? { seeds } : {}) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const sb = r.body;
  const apiKey = sb.provider_credentials.linear.token;
  assert.match(apiKey, /^lin_api_/, "a Linear personal API key's shape");
  const restUrl = sb.per_twin.linear.rest_url;
  const linear = new LinearClient({ apiKey, apiUrl: `${restUrl}/graphql` });
  return { sb, linear, restUrl };
}
async function pome(restUrl, sb, what) {
  const res = await fetch(`${restUrl}/_pome/${what}`, { headers: { authorization: `Bearer ${sb.session_token}` } });
  assert.equal(res.status, 200, what);
  return res.json();
}

// =====================================================================================
// 1. Triage a queue in a Linear-only sandbox
// =====================================================================================
const { sb, linear, restUrl } = await sandbox(["linear"], { linear: seed });
const expectTools = []; // the tape's tool for each mutation, in order
const t = {}; // what the flow finds and makes

await section("viewer and organization", async () => {
  const me = await linear.viewer;
  assert.equal(me.id, "user_admin");
  assert.equal(me.email, VIEWER);
  assert.equal(me.name, "Admin User");
  assert.equal(me.displayName, "admin");
  assert.equal(me.admin, true);
  assert.equal(me.active, true);
  assert.equal(me.isMe, true);
  const org = await linear.organization;
  assert.equal(org.name, "Acme");
  assert.equal(org.urlKey, "acme");
  const users = await linear.users();
  assert.deepEqual(sorted(users.nodes.map((u) => u.email)), sorted(seed.users.map((u) => u.email)));
  assert.equal((await linear.user("user_maya")).name, "Maya Chen");
});

await section("teams() and team.states()", async () => {
  const teams = await linear.teams();
  assert.deepEqual(sorted(teams.nodes.map((x) => x.key)), ["DES", "ENG"]);
  const eng = teams.nodes.find((x) => x.key === "ENG");
  assert.equal(eng.id, "team_eng");
  assert.equal(eng.name, "Engineering");
  const states = await eng.states();
  assert.deepEqual(sorted(states.nodes.map((s) => `${s.name}:${s.type}`)), sorted(engStates.map((s) => `${s.name}:${s.type}`)));
  for (const s of states.nodes) {
    assert.equal(s.teamId, "team_eng");
    assert.equal(s.position, engStates.find((x) => x.name === s.name).position);
  }
  t.state = Object.fromEntries(states.nodes.map((s) => [s.name, s]));
  assert.equal((await linear.team("team_eng")).key, "ENG");
  const des = await teams.nodes.find((x) => x.key === "DES").states();
  assert.deepEqual(sorted(des.nodes.map((s) => s.name)), ["Backlog", "Done", "Todo"]);
  const labels = await eng.labels();
  assert.deepEqual(sorted(labels.nodes.map((l) => l.name)), ["Bug", "Feature"]);
});

const backlogFilter = { team: { key: { eq: "ENG" } }, state: { type: { eq: "backlog" } } };
await section("issues({filter: team ENG, state backlog}) a page at a time (first: 1, after: endCursor)", async () => {
  const seen = [];
  let after, pages = 0, conn;
  do {
    conn = await linear.issues({ filter: backlogFilter, first: 1, after });
    assert.equal(conn.nodes.length, 1);
    seen.push(conn.nodes[0].id);
    assert.ok(conn.pageInfo.endCursor, "a cursor for the page");
    after = conn.pageInfo.endCursor;
    pages++;
    assert.ok(pages <= 5, "no more than five pages");
  } while (conn.pageInfo.hasNextPage);
  assert.deepEqual(sorted(seen), sorted(engBacklog));
  assert.equal(new Set(seen).size, seen.length, "no issue twice");
  assert.equal(conn.pageInfo.hasNextPage, false);
  // the SDK's own paging
  const all = await linear.issues({ filter: backlogFilter, first: 2 });
  assert.equal(all.nodes.length, 2);
  assert.equal(all.pageInfo.hasNextPage, true);
  while (all.pageInfo.hasNextPage) await all.fetchNext();
  assert.deepEqual(sorted(all.nodes.map((i) => i.id)), sorted(engBacklog));
  for (const i of all.nodes) {
    assert.equal(i.teamId, "team_eng");
    assert.equal(i.stateId, "state_eng_backlog");
    assert.match(i.identifier, /^ENG-\d+$/);
    assert.equal(i.identifier, `ENG-${i.number}`);
    assert.ok(i.createdAt instanceof Date && i.updatedAt instanceof Date);
  }
  const checkout = all.nodes.find((i) => i.id === "issue_checkout");
  assert.equal(checkout.title, "Checkout returns 502 for EU cards");
  assert.equal(checkout.description, "Every EU card payment fails since 08:55.");
  assert.equal(checkout.priority, 0);
  assert.equal(checkout.priorityLabel, "No priority");
  assert.equal(checkout.assigneeId, undefined);
  assert.equal(checkout.creatorId, "user_maya");
  assert.equal(checkout.createdAt.toISOString(), seed.issues[0].createdAt);
  // other filters a triager uses
  const omars = await linear.issues({ filter: { assignee: { email: { eq: "omar@acme.example" } } } });
  assert.deepEqual(omars.nodes.map((i) => i.id), ["issue_flaky"]);
  const bugs = await linear.issues({ filter: { labels: { some: { name: { eq: "Bug" } } } } });
  assert.deepEqual(bugs.nodes.map((i) => i.id), ["issue_ratelimit"]);
  const titled = await linear.issues({ filter: { title: { containsIgnoreCase: "checkout" } } });
  assert.deepEqual(sorted(titled.nodes.map((i) => i.id)), ["issue_checkout", "issue_dup"]);
  const des = await linear.issues({ filter: { team: { key: { eq: "DES" } } } });
  assert.deepEqual(des.nodes.map((i) => i.id), ["issue_illustrations"]);
});

await section("triage: issueUpdate state In Progress/Todo/Done/Canceled, priority, assignee", async () => {
  assert.ok(t.state?.["In Progress"], "the states were read");
  const [maya, omar] = await Promise.all([linear.user("user_maya"), linear.user("user_omar")]);
  // client.updateIssue: the urgent one, to Maya, started
  const p1 = await linear.updateIssue("issue_checkout", { stateId: t.state["In Progress"].id, priority: 1, assigneeId: maya.id });
  expectTools.push("save_issue");
  assert.equal(p1.success, true);
  assert.equal(p1.issueId, "issue_checkout");
  assert.equal(typeof p1.lastSyncId, "number");
  const checkout = await p1.issue;
  assert.equal(checkout.priority, 1);
  assert.equal(checkout.priorityLabel, "Urgent");
  assert.equal(checkout.stateId, "state_eng_progress");
  assert.equal(checkout.assigneeId, "user_maya");
  assert.ok(checkout.startedAt instanceof Date, "a started state sets startedAt");
  assert.equal((await checkout.state).name, "In Progress");
  assert.equal((await checkout.assignee).email, "maya@acme.example");
  assert.ok(checkout.updatedAt > new Date(seed.issues[0].updatedAt));
  // issue.update on a fetched model: the export, high, to Omar, Todo
  const exp = await linear.issue("issue_export");
  const p2 = await exp.update({ stateId: t.state.Todo.id, priority: 2, assigneeId: omar.id });
  expectTools.push("save_issue");
  assert.equal(p2.success, true);
  const exp2 = await linear.issue("issue_export");
  assert.deepEqual([exp2.stateId, exp2.priority, exp2.priorityLabel, exp2.assigneeId], ["state_eng_todo", 2, "High", "user_omar"]);
  // the typo is fixed already: Done
  const p3 = await linear.updateIssue("issue_typo", { stateId: t.state.Done.id });
  expectTools.push("save_issue");
  const typo = await p3.issue;
  assert.equal((await typo.state).type, "completed");
  assert.ok(typo.completedAt instanceof Date, "a completed state sets completedAt");
  // the duplicate: Canceled
  const p4 = await linear.updateIssue("issue_dup", { stateId: t.state.Canceled.id });
  expectTools.push("save_issue");
  const dup = await p4.issue;
  assert.equal((await dup.state).type, "canceled");
  assert.ok(dup.canceledAt instanceof Date, "a canceled state sets canceledAt");
  // the feature request: priority only, stays in the backlog
  const p5 = await linear.updateIssue("issue_sso", { priority: 3 });
  expectTools.push("save_issue");
  assert.equal((await p5.issue).stateId, "state_eng_backlog");
  // what is left in the backlog
  const left = await linear.issues({ filter: backlogFilter });
  assert.deepEqual(left.nodes.map((i) => i.id), ["issue_sso"]);
  const inProgress = await linear.issues({ filter: { team: { key: { eq: "ENG" } }, state: { name: { eq: "In Progress" } } } });
  assert.deepEqual(inProgress.nodes.map((i) => i.id), ["issue_checkout"]);
  const mayas = await (await linear.user("user_maya")).assignedIssues();
  assert.deepEqual(sorted(mayas.nodes.map((i) => i.id)), ["issue_checkout", "issue_ratelimit"]);
  // an issue by its identifier
  assert.equal((await linear.issue(checkout.identifier)).id, "issue_checkout");
});

await section("labels: createIssueLabel, issueUpdate labelIds, issueAddLabel", async () => {
  const p = await linear.createIssueLabel({ name: "Regression", color: "#f2994a", teamId: "team_eng" });
  expectTools.push("create_issue_label");
  assert.equal(p.success, true);
  const regression = await p.issueLabel;
  t.regression = regression;
  assert.equal(regression.name, "Regression");
  assert.equal(regression.color, "#f2994a");
  assert.equal((await regression.team).key, "ENG");
  const u = await linear.updateIssue("issue_checkout", { labelIds: ["label_bug", regression.id] });
  expectTools.push("save_issue");
  assert.equal(u.success, true);
  const checkout = await linear.issue("issue_checkout");
  assert.deepEqual(sorted(checkout.labelIds), sorted(["label_bug", regression.id]));
  assert.deepEqual(sorted((await checkout.labels()).nodes.map((l) => l.name)), ["Bug", "Regression"]);
  const a = await linear.issueAddLabel("issue_sso", "label_feature");
  expectTools.push("save_issue");
  assert.equal(a.success, true);
  assert.deepEqual((await (await linear.issue("issue_sso")).labels()).nodes.map((l) => l.name), ["Feature"]);
  const engLabels = await linear.issueLabels({ filter: { team: { key: { eq: "ENG" } } } });
  assert.deepEqual(sorted(engLabels.nodes.map((l) => l.name)), ["Bug", "Feature", "Regression"]);
  const regressions = await linear.issues({ filter: { labels: { some: { id: { eq: regression.id } } } } });
  assert.deepEqual(regressions.nodes.map((i) => i.id), ["issue_checkout"]);
});

await section("comments: createComment, a threaded reply (parentId), issue.comments(), children()", async () => {
  const p = await linear.createComment({ issueId: "issue_checkout", body: "Rolled back the 08:55 deploy; watching the error rate." });
  expectTools.push("save_comment");
  assert.equal(p.success, true);
  const c = await p.comment;
  t.comment = c;
  assert.equal(c.body, "Rolled back the 08:55 deploy; watching the error rate.");
  assert.equal(c.issueId, "issue_checkout");
  assert.equal(c.userId, "user_admin");
  assert.equal((await c.user).email, VIEWER);
  assert.ok(c.createdAt instanceof Date);
  assert.match(c.url, /^https:\/\/linear\.app\/acme\/issue\/ENG-\d+/);
  const r = await linear.createComment({ issueId: "issue_checkout", body: "Error rate is back to baseline.", parentId: c.id });
  expectTools.push("save_comment");
  const reply = await r.comment;
  assert.equal(reply.parentId, c.id);
  assert.equal((await reply.parent).body, c.body);
  const comments = await (await linear.issue("issue_checkout")).comments();
  assert.deepEqual(sorted(comments.nodes.map((x) => x.id)), sorted(["comment_sentry", c.id, reply.id]));
  const sentry = comments.nodes.find((x) => x.id === "comment_sentry");
  assert.equal(sentry.body, "Seeing this in Sentry since the 08:55 deploy.");
  assert.equal(sentry.userId, "user_omar");
  assert.equal(sentry.parentId, undefined);
  // Comment.children() does not send the comment's id (the SDK's Comment_ChildrenQuery
  // takes its variables only; linear/linear#682), so it is given, as Linear's users do
  const children = await c.children({ id: c.id });
  assert.deepEqual(children.nodes.map((x) => x.id), [reply.id]);
  assert.equal((await linear.comment({ id: reply.id })).body, "Error rate is back to baseline.");
});

await section("errors: issue(\"missing\") is an InvalidInputLinearError in Linear's GraphQL error shape", async () => {
  await assert.rejects(linear.issue("missing"), (e) => {
    assert.ok(e instanceof LinearError, e.constructor.name);
    assert.ok(e instanceof InvalidInputLinearError, e.constructor.name);
    assert.equal(e.type, LinearErrorType.InvalidInput);
    assert.match(e.message, /^Entity not found: Issue/);
    assert.equal(e.errors.length, 1);
    assert.equal(e.errors[0].type, LinearErrorType.InvalidInput);
    assert.equal(e.errors[0].userError, true);
    assert.deepEqual(e.errors[0].path, ["issue"]);
    assert.match(e.errors[0].message, /could not find referenced issue/i);
    const raw = e.raw?.response?.errors?.[0];
    assert.equal(raw.extensions.type, "invalid input");
    assert.equal(raw.extensions.userError, true);
    assert.equal(typeof raw.extensions.userPresentableMessage, "string");
    return true;
  });
  // a mutation on a missing issue changes nothing and says the same
  await assert.rejects(linear.createComment({ issueId: "missing", body: "x" }), (e) => {
    assert.ok(e instanceof InvalidInputLinearError, e.constructor.name);
    return true;
  });
});

await section("the world through /_pome/state and the tape's tool names", async () => {
  const state = await pome(restUrl, sb, "state");
  const issue = (id) => state.issues.find((i) => i.id === id);
  assert.deepEqual(
    [issue("issue_checkout").stateId, issue("issue_checkout").priority, issue("issue_checkout").assigneeId],
    ["state_eng_progress", 1, "user_maya"]);
  assert.deepEqual(sorted(issue("issue_checkout").labelIds), sorted(["label_bug", t.regression?.id]));
  assert.deepEqual([issue("issue_export").stateId, issue("issue_export").assigneeId], ["state_eng_todo", "user_omar"]);
  assert.equal(issue("issue_typo").stateId, "state_eng_done");
  assert.equal(issue("issue_dup").stateId, "state_eng_canceled");
  assert.deepEqual([issue("issue_sso").priority, issue("issue_sso").labelIds], [3, ["label_feature"]]);
  assert.ok(state.states.some((s) => s.id === "state_eng_progress" && s.teamId === "team_eng" && s.name === "In Progress"));
  assert.ok(state.labels.some((l) => l.name === "Regression" && l.teamId === "team_eng"));
  const mine = state.comments.filter((c) => c.issueId === "issue_checkout");
  assert.equal(mine.length, 3);
  assert.ok(mine.some((c) => c.parentId === t.comment?.id && c.body === "Error rate is back to baseline." && c.userId === "user_admin"));
  const tape = await pome(restUrl, sb, "events");
  const rows = tape.filter((r) => r.path.endsWith("/graphql"));
  const changes = rows.filter((r) => r.state_mutation);
  assert.deepEqual(changes.map((r) => r.tool), expectTools, "one row per mutation, named by the Linear MCP tool doing the same");
  assert.ok(rows.filter((r) => r.status >= 400 || /^\s*(query|\{)/.test(r.request_body?.query ?? "")).every((r) => !r.state_mutation), "queries and refusals change nothing");
});

await discard(sb.session_id);

// =====================================================================================
// 2. Hand-off: a GitHub issue becomes a Linear issue, in a sandbox of both twins
// =====================================================================================
await section("hand-off: read the GitHub issue with @octokit/rest, file it in Linear, link both ways", async () => {
  const both = await sandbox(["github", "linear"], { linear: seed });
  try {
    const gh = new Octokit({
      auth: both.sb.provider_credentials.github.token, baseUrl: both.sb.per_twin.github.rest_url,
      log: { debug() {}, info() {}, warn() {}, error() {} }, request: { retries: 0 },
    });
    const { data: src } = await gh.rest.issues.get({ owner: "acme", repo: "api", issue_number: 1 });
    assert.equal(src.title, "500 error on POST /orders after deploy");
    assert.equal(src.html_url, "https://github.com/acme/api/issues/1");
    const li = both.linear;
    const eng = (await li.teams({ filter: { key: { eq: "ENG" } } })).nodes[0];
    assert.equal(eng.id, "team_eng");
    const todo = (await eng.states()).nodes.find((s) => s.name === "Todo");
    const bug = (await eng.labels()).nodes.find((l) => l.name === "Bug");
    const before = await li.issues({ filter: { team: { key: { eq: "ENG" } } }, first: 50 });
    const next = Math.max(...before.nodes.map((i) => i.number)) + 1;
    const description = `Escalated from GitHub: ${src.html_url}\n\n${src.body ?? ""}`.trim();
    const p = await li.createIssue({ teamId: eng.id, title: src.title, description, priority: 2, stateId: todo.id, labelIds: [bug.id] });
    assert.equal(p.success, true);
    const issue = await p.issue;
    assert.equal(issue.title, src.title);
    assert.equal(issue.description, description);
    assert.equal(issue.number, next, "Linear numbers a team's issues in sequence");
    assert.equal(issue.identifier, `ENG-${next}`);
    assert.match(issue.url, new RegExp(`^https://linear\\.app/acme/issue/ENG-${next}(/|$)`));
    assert.equal(issue.stateId, todo.id);
    assert.equal(issue.creatorId, "user_admin");
    assert.deepEqual(issue.labelIds, [bug.id]);
    const c = await li.createComment({ issueId: issue.id, body: `Source: ${src.html_url}` });
    assert.equal(c.success, true);
    const back = await gh.rest.issues.createComment({ owner: "acme", repo: "api", issue_number: 1, body: `Tracked in Linear as ${issue.identifier}: ${issue.url}` });
    assert.equal(back.status, 201);
    // the worlds
    const lstate = await pome(both.restUrl, both.sb, "state");
    const filed = lstate.issues.filter((i) => i.title === src.title);
    assert.equal(filed.length, 1);
    assert.ok(filed[0].description.includes(src.html_url));
    assert.deepEqual([filed[0].teamId, filed[0].stateId, filed[0].priority, filed[0].labelIds], ["team_eng", todo.id, 2, [bug.id]]);
    assert.ok(lstate.comments.some((x) => x.issueId === issue.id && x.body === `Source: ${src.html_url}`));
    const ghComments = await gh.rest.issues.listComments({ owner: "acme", repo: "api", issue_number: 1 });
    assert.ok(ghComments.data.some((x) => x.body.includes(issue.url)));
    const tape = await pome(both.restUrl, both.sb, "events");
    assert.deepEqual(tape.filter((r) => r.path.endsWith("/graphql") && r.state_mutation).map((r) => r.tool), ["save_issue", "save_comment"]);
  } finally {
    await discard(both.sb.session_id);
  }
});

// =====================================================================================
// 3. The default world is hosted Pome's
// =====================================================================================
await section("the default seed: hosted Pome's default workspace", async () => {
  const d = await sandbox(["linear"]);
  try {
    assert.equal((await d.linear.viewer).email, VIEWER);
    const eng = await d.linear.team("team_eng");
    assert.deepEqual([eng.key, eng.name], ["ENG", "Engineering"]);
    const issues = await d.linear.issues({ filter: { team: { key: { eq: "ENG" } } } });
    assert.deepEqual(sorted(issues.nodes.map((i) => i.title)), sorted([
      "Triage inbox for agent eval", "Ship Linear twin GraphQL surface", "Wire MCP tools to commands", "Seed multi-issue agent world",
    ]));
    const todo = await d.linear.issue("issue_todo");
    assert.equal((await todo.state).name, "Todo");
    assert.deepEqual((await todo.comments()).nodes.map((c) => c.body), ["Starting with viewer + issues queries."]);
  } finally {
    await discard(d.sb.session_id);
  }
});

if (failures.length) {
  console.log(`${failures.length} section(s) failed: ${failures.join("; ")}`);
  process.exit(1);
}
console.log("ok: the Linear twin through @linear/sdk");
