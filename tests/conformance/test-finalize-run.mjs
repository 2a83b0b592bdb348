// Finalize from inside the run (issue 23), through the official, unmodified
// @modelcontextprotocol/sdk client (StreamableHTTPClientTransport, the sandbox bearer in
// requestInit's headers) against a real pomed:
//   1. every twin of a sandbox lists finalize_run (tools/list and GET {mcp_url}/tools),
//      and the tape's tools/list row shows what was sent;
//   2. a sandbox created with hosted Pome's task (tests/tasks/github-triage/task.md) is
//      triaged by MCP calls, then finalize_run grades it: the tool's answer, the control
//      API's record (done, finalized, the verdict's summary) and GET …/verdict agree, and the
//      finalize left no tape row;
//   3. refusals are tool results with isError: true and a sentence (never a transport error):
//      a session_id of another sandbox (whose id the answer does not repeat), a task brought
//      by the caller, a sandbox created without a task, a second finalize, two at once; a
//      wrong bearer is still the gateway's 404, and no bearer GitHub's 401;
//   4. the control API's finalize of a sandbox the agent already finalized is a 409 conflict
//      (what `pome run` meets when its agent finalized first).
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { control } from "./lib.mjs";

// without its [model] criterion: what a run is graded on here does not hang on a judge
const TASK = readFileSync(new URL("../tasks/github-triage/task.md", import.meta.url), "utf8")
  .replace(/^- \[model\].*\n/m, "");
assert.ok(!TASK.includes("[model]") && TASK.includes("[code:github]"));

async function sandbox(body) {
  const r = await control("POST", "/v1/sandboxes", body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
async function mcpClient(url, token) {
  const client = new Client({ name: "conformance-finalize-run", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  }));
  return client;
}
async function rest(url, token, method = "GET", body) {
  const res = await fetch(url, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json, text };
}
// A tool call that must succeed; its structured payload.
async function ok(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name}(${JSON.stringify(args)}): ${res.content?.[0]?.text}`);
  return res.structuredContent ?? JSON.parse(res.content[0].text);
}
// A finalize_run that must be refused: the result, checked for the tool-error shape.
async function refused(client, args, type, sentence) {
  const res = await client.callTool({ name: "finalize_run", arguments: args });
  assert.equal(res.isError, true, `finalize_run(${JSON.stringify(args)}) was not refused: ${JSON.stringify(res)}`);
  assert.equal(res.content[0].type, "text");
  assert.match(res.content[0].text, sentence);
  assert.equal(res.structuredContent?.error?.type, type, JSON.stringify(res.structuredContent));
  assert.equal(res.structuredContent.error.message, res.content[0].text);
  return res;
}
const record = async (sid) => {
  const r = await control("GET", `/v1/sandboxes/${sid}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
};

// ============================================================ 1. finalize_run is listed
const a = await sandbox({ twins: ["github"], task_markdown: TASK });
const b = await sandbox({ twins: ["github", "slack"] }); // no task
const gh = await mcpClient(a.per_twin.github.mcp_url, a.session_token);
const listed = (await gh.listTools()).tools;
const fin = listed.find((t) => t.name === "finalize_run");
assert.ok(fin, "tools/list has finalize_run");
assert.equal(listed.filter((t) => t.name === "finalize_run").length, 1);
assert.match(fin.description, /grade/);
assert.equal(fin.inputSchema.type, "object");
assert.deepEqual(Object.keys(fin.inputSchema.properties).sort(), ["agent_reply", "agent_token", "session_id"]);
assert.equal(fin.inputSchema.required, undefined, "every argument is optional");
assert.equal(fin.annotations.readOnlyHint, false);
assert.ok(listed.length > 30, "the twin's own tools are still listed");
const plain = await rest(`${a.per_twin.github.mcp_url}/tools`, a.session_token);
assert.equal(plain.status, 200);
assert.deepEqual(plain.body.tools.map((t) => t.name), listed.map((t) => t.name), "GET /mcp/tools lists what tools/list does");
// /_pome/health has hosted Pome's frozen key set, which counts no tools
const health = await rest(`${a.per_twin.github.rest_url}/_pome/health`, a.session_token);
assert.deepEqual(Object.keys(health.body).sort(), ["fidelity", "implementation", "ok", "runtime", "twin"]);
// every twin of a sandbox offers it (b: GitHub and Slack)
for (const twin of ["github", "slack"]) {
  const c = await mcpClient(b.per_twin[twin].mcp_url, b.session_token);
  assert.ok((await c.listTools()).tools.some((t) => t.name === "finalize_run"), `${twin} lists finalize_run`);
  await c.close();
}
// the tape's row of tools/list holds the list as it was sent (its agent_token property redacted)
let events = await rest(`${a.per_twin.github.rest_url}/_pome/events`, a.session_token);
const listRow = events.body.find((r) => r.request_body?.method === "tools/list");
assert.ok(listRow, "tools/list is on the tape");
const tapedFin = listRow.response_body.result.tools.find((t) => t.name === "finalize_run");
assert.ok(tapedFin, "the tape's tools/list answer has finalize_run");
assert.equal(tapedFin.inputSchema.properties.agent_token, "[REDACTED]");
assert.equal(listRow.response_body.result.tools.length, listed.length);

// ============================================================ 3a. refusals that finalize nothing
const before = (await record(a.session_id)).state;
let res = await refused(gh, { session_id: b.session_id }, "invalid_session_id", /does not name this sandbox/);
assert.ok(!JSON.stringify(res).includes(b.session_id), "a refusal never repeats another sandbox's id");
assert.ok(res.content[0].text.includes(a.session_id), "it names the sandbox the caller may use");
await refused(gh, { session_id: 42 }, "invalid_arguments", /session_id must be a string/);
await refused(gh, { task_markdown: "# Mine\n" }, "invalid_arguments", /cannot set the task it is graded against/);
assert.equal((await record(a.session_id)).state, before, "refusals leave the sandbox open");

// no task: refused, over MCP and over REST, on every twin; the sandbox stays open
const bgh = await mcpClient(b.per_twin.github.mcp_url, b.session_token);
await refused(bgh, {}, "no_task", /has no task to grade against: create it with task_markdown, or finalize it through the control API with one/);
const bsl = await mcpClient(b.per_twin.slack.mcp_url, b.session_token);
await refused(bsl, { session_id: b.session_id }, "no_task", /no task to grade against/);
let r = await rest(`${b.per_twin.github.rest_url}/_pome/finalize`, b.session_token, "POST", {});
assert.equal(r.status, 409, r.text);
assert.match(r.body.message, /has no task to grade against/, "GitHub's envelope: message");
assert.equal(r.body.status, "409");
assert.ok(["ready", "running"].includes((await record(b.session_id)).state), "b is still open");

// a wrong bearer is the gateway's 404 (the same bytes as for any twin call), none GitHub's 401
const stranger = await mcpClient(a.per_twin.github.mcp_url, b.session_token).catch((e) => e);
assert.ok(stranger instanceof Error && stranger.code === 404, String(stranger));
r = await rest(a.per_twin.github.mcp_url, b.session_token, "POST",
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "finalize_run", arguments: {} } });
assert.equal(r.status, 404);
assert.equal(r.body.error.message, "No twin pod for this session.");
r = await rest(`${a.per_twin.github.rest_url}/_pome/finalize`, b.session_token, "POST", {});
assert.equal(r.status, 404);
assert.equal(r.body.error.message, "No twin pod for this session.");
r = await rest(a.per_twin.github.mcp_url, "", "POST",
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "finalize_run", arguments: {} } });
assert.equal(r.status, 401);
assert.equal(r.body.message, "Requires authentication");
assert.equal((await record(a.session_id)).state, before);

// ============================================================ 2. the agent's work, then finalize_run
const repo = { owner: "acme", repo: "api" };
await ok(gh, "issue_write", { method: "update", ...repo, issue_number: 1, labels: ["bug"], assignees: ["alice"], milestone: 2 });
await ok(gh, "add_issue_comment", { ...repo, issue_number: 1, body: "Triage: a 500 on valid input is a bug; v1.4, @alice." });
await ok(gh, "issue_write", { method: "update", ...repo, issue_number: 2, labels: ["enhancement"] });
await ok(gh, "add_issue_comment", { ...repo, issue_number: 3, body: "Duplicate of #1" });
await ok(gh, "issue_write", { method: "update", ...repo, issue_number: 3, state: "closed", state_reason: "duplicate", duplicate_of: 1 });
events = await control("GET", `/v1/sandboxes/${a.session_id}/events?twin=github&limit=1000`);
const rowsBefore = events.body.length;

const done = await gh.callTool({ name: "finalize_run", arguments: { session_id: a.session_id, agent_token: a.agent_token } });
assert.equal(done.isError, false, JSON.stringify(done));
const out = done.structuredContent;
assert.deepEqual(JSON.parse(done.content[0].text), out, "the text is the answer's JSON");
assert.equal(out.session_id, a.session_id);
assert.equal(out.run_id, a.session_id);
assert.equal(out.state, "done");
assert.equal(out.verdict.state, "pass", JSON.stringify(out));
assert.equal(out.passed, true);
assert.equal(out.score, 100);
assert.equal(out.verdict.counts.failed, 0);
assert.ok(out.verdict.counts.passed > 0);
assert.equal(out.read.verdict, `/v1/sandboxes/${a.session_id}/verdict`);
assert.match(out.message, /finalized and graded: pass/);

// the control API says the same
const rec = await record(a.session_id);
assert.equal(rec.state, "done");
assert.equal(rec.reason, "finalized");
assert.deepEqual(rec.verdict, out.verdict, "the record's verdict summary is the tool's");
r = await control("GET", out.read.verdict);
assert.equal(r.status, 200);
for (const k of ["state", "passed", "score", "counts"]) assert.deepEqual(r.body[k], out.verdict[k], `verdict.json ${k}`);
assert.ok(r.body.criteria.every((c) => c.status !== "failed"), JSON.stringify(r.body.criteria));
const summary = await fetch(process.env.POME_API_URL + out.read.summary, { headers: { authorization: `Bearer ${process.env.POME_API_KEY}` } });
assert.equal(summary.status, 200);
assert.match(await summary.text(), /^# Run summary: Triage the new acme\/api issues/);
// the finalize is not on the tape
events = await control("GET", `/v1/sandboxes/${a.session_id}/events?twin=github&limit=1000`);
assert.equal(events.body.length, rowsBefore, "finalize_run added a tape row");
assert.ok(!events.body.some((e) => e.tool === "finalize_run" || /finalize/.test(e.path)));

// ============================================================ 3b. after it: a second one, the twins, the control API
res = await refused(gh, {}, "already_finalized", /has been finalized already/);
assert.deepEqual(res.structuredContent.error.details.verdict, out.verdict, "the refusal carries the verdict's summary");
r = await rest(`${a.per_twin.github.rest_url}/_pome/finalize`, a.session_token, "POST");
assert.equal(r.status, 409, r.text);
assert.match(r.body.message, /finalized already/);
r = await rest(`${a.per_twin.github.rest_url}/repos/acme/api/issues/1`, a.session_token);
assert.equal(r.status, 410, "the twins answer no more calls");
r = await control("POST", `/v1/sandboxes/${a.session_id}/finalize`);
assert.equal(r.status, 409, JSON.stringify(r.body));
assert.equal(r.body.error.type, "conflict");
assert.equal(r.body.error.details.state, "done");
assert.equal(r.body.error.details.reason, "finalized");
console.log(`control API finalize after finalize_run: ${r.status} ${JSON.stringify(r.body)}`);

// ============================================================ 3c. two at once: one grades, the other is refused
const c = await sandbox({ twins: ["github"], task_markdown: TASK });
const c1 = await mcpClient(c.per_twin.github.mcp_url, c.session_token);
const c2 = await mcpClient(c.per_twin.github.mcp_url, c.provider_credentials.github.token);
const both = await Promise.all([
  c1.callTool({ name: "finalize_run", arguments: {} }),
  c2.callTool({ name: "finalize_run", arguments: { session_id: c.session_id } }),
]);
const wins = both.filter((x) => !x.isError);
assert.equal(wins.length, 1, `exactly one finalize grades: ${JSON.stringify(both)}`);
const lost = both.find((x) => x.isError);
assert.ok(["finalizing", "already_finalized"].includes(lost.structuredContent.error.type), JSON.stringify(lost));
console.log(`two finalize_run at once: one graded, the other refused as ${lost.structuredContent.error.type}: ${lost.content[0].text}`);
assert.equal(wins[0].structuredContent.state, "done");
// nothing done: every criterion that needed work fails, and the answer says so
assert.equal(wins[0].structuredContent.passed, false);
assert.equal(wins[0].structuredContent.verdict.state, "fail");
assert.deepEqual((await record(c.session_id)).verdict, wins[0].structuredContent.verdict);

// the agent's finalize_run and the control API's finalize (pome run's, once its agent exits)
// at once: one grades; the control API's, if it comes second, is the 409 `pome run` reads
const d = await sandbox({ twins: ["github"], task_markdown: TASK });
const d1 = await mcpClient(d.per_twin.github.mcp_url, d.session_token);
const [tool, api] = await Promise.all([
  d1.callTool({ name: "finalize_run", arguments: {} }),
  control("POST", `/v1/sandboxes/${d.session_id}/finalize`),
]);
assert.equal(tool.isError, api.status === 200, `exactly one finalize grades: ${JSON.stringify([tool, api])}`);
if (api.status !== 200) {
  assert.equal(api.status, 409, JSON.stringify(api.body));
  assert.equal(api.body.error.type, "conflict");
  assert.ok(api.body.error.details.reason === "finalizing" || api.body.error.details.reason === "finalized", JSON.stringify(api.body));
} else assert.ok(["finalizing", "already_finalized"].includes(tool.structuredContent.error.type), JSON.stringify(tool));
console.log(`finalize_run and the control API's finalize at once: control API ${api.status} ${JSON.stringify(api.body.error ?? api.body.state)}`);

for (const cl of [gh, bgh, bsl, c1, c2, d1]) await cl.close();
r = await control("DELETE", `/v1/sandboxes/${b.session_id}`);
if (r.status === 409) r = await control("DELETE", `/v1/sandboxes/${b.session_id}?confirm_discard=${r.body.error.details.discard_token}`);
assert.equal(r.status, 204);
console.log("ok: finalize_run over the official MCP SDK — listed, graded, refused");
