// Every MCP tool of both twins, through the official, unmodified @modelcontextprotocol/sdk
// client, in one sandbox holding the GitHub twin (seed "release-train") and the Slack twin
// (its default seed):
//   1. tools/list names exactly the vendors' official tools (GitHub: github/github-mcp-server;
//      Slack: mcp.slack.com as captured by hosted Pome, pome-sh/digital-twins
//      packages/twin-slack/fixtures/mcp-tools-list.canonical.json), and each input schema has
//      the official `required` list and property names (the tables OFFICIAL_* below);
//   2. every listed tool is called with valid arguments doing real work, and a meaningful
//      part of its result is asserted (the tables GITHUB_STEPS / SLACK_STEPS; a listed tool
//      without a step fails the test); a write tool must change /_pome/state, a read tool
//      must not, and every called tool must show on the tape as a row's `tool`;
//   3. the plain-JSON surfaces of CONTRACT.md (POST {mcp_url}/tools/{name}, POST
//      {mcp_url}/call) for one tool of each twin;
//   4. MCP errors: an unknown tool is a JSON-RPC -32602; wrong types and missing required
//      arguments are a tool error (isError) or a JSON-RPC error, as the official servers
//      answer; the pods keep their pids and the world is unchanged.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { control } from "./lib.mjs";

// ============================================================ the official schemas
// name → [required, property names], from each tool's pkg/github/__toolsnaps__/<name>.snap
// in github/github-mcp-server. `extra` lists properties the twin declares beyond the
// official ones (kept as extensions: an agent written for the official server never sends
// them, so they cannot break it); anything else missing or added fails.
const OFFICIAL_GITHUB = {
  get_me: [[], []],
  issue_read: [["method", "owner", "repo", "issue_number"], ["issue_number", "method", "owner", "page", "perPage", "repo"]],
  issue_write: [["method", "owner", "repo"], ["assignees", "body", "duplicate_of", "issue_number", "labels", "method", "milestone",
    "owner", "repo", "show_ui", "state", "state_reason", "title", "type"]],
  list_issues: [["owner", "repo"], ["after", "direction", "field_filters", "fields", "labels", "orderBy", "owner", "perPage", "repo",
    "since", "state"]],
  create_issue: [["owner", "repo", "title"], ["body", "owner", "repo", "title"]],
  add_issue_comment: [["owner", "repo", "issue_number"], ["body", "issue_number", "owner", "reaction", "repo"]],
  search_issues: [["query"], ["order", "owner", "page", "perPage", "query", "repo", "sort"]],
  search_code: [["query"], ["fields", "order", "page", "perPage", "query", "sort"]],
  search_commits: [["query"], ["order", "page", "perPage", "query", "sort"]],
  search_repositories: [["query"], ["minimal_output", "order", "page", "perPage", "query", "sort"]],
  search_users: [["query"], ["order", "page", "perPage", "query", "sort"]],
  list_pull_requests: [["owner", "repo"], ["base", "direction", "fields", "head", "owner", "page", "perPage", "repo", "sort", "state"]],
  pull_request_read: [["method", "owner", "repo", "pullNumber"], ["method", "owner", "page", "perPage", "pullNumber", "repo"]],
  create_pull_request: [["owner", "repo", "title", "head", "base"], ["base", "body", "draft", "head", "maintainer_can_modify", "owner",
    "repo", "reviewers", "show_ui", "title"]],
  update_pull_request: [["owner", "repo", "pullNumber"], ["base", "body", "draft", "maintainer_can_modify", "owner", "pullNumber", "repo",
    "reviewers", "state", "title"]],
  update_pull_request_branch: [["owner", "repo", "pullNumber"], ["expectedHeadSha", "owner", "pullNumber", "repo"]],
  merge_pull_request: [["owner", "repo", "pullNumber"], ["commit_message", "commit_title", "merge_method", "owner", "pullNumber", "repo"],
    { extra: ["expectedHeadSha"] }],
  pull_request_review_write: [["method", "owner", "repo", "pullNumber"], ["body", "commitID", "event", "method", "owner", "pullNumber",
    "repo"]],
  create_pull_request_review: [["owner", "repo", "pullNumber"], ["body", "commitID", "event", "owner", "pullNumber", "repo"]],
  add_reply_to_pull_request_comment: [["owner", "repo", "commentId"], ["body", "commentId", "owner", "pullNumber", "reaction", "repo"]],
  get_file_contents: [["owner", "repo"], ["owner", "path", "ref", "repo", "sha"]],
  create_or_update_file: [["owner", "repo", "path", "content", "message", "branch"], ["branch", "content", "message", "owner", "path",
    "repo", "sha"]],
  delete_file: [["owner", "repo", "path", "message", "branch"], ["branch", "message", "owner", "path", "repo"]],
  push_files: [["owner", "repo", "branch", "files", "message"], ["branch", "files", "message", "owner", "repo"]],
  list_branches: [["owner", "repo"], ["fields", "owner", "page", "perPage", "repo"]],
  create_branch: [["owner", "repo", "branch"], ["branch", "from_branch", "owner", "repo"]],
  list_commits: [["owner", "repo"], ["author", "fields", "owner", "page", "path", "perPage", "repo", "sha", "since", "until"]],
  get_commit: [["owner", "repo", "sha"], ["include_diff", "owner", "page", "perPage", "repo", "sha"]],
  list_tags: [["owner", "repo"], ["owner", "page", "perPage", "repo"]],
  get_tag: [["owner", "repo", "tag"], ["owner", "repo", "tag"]],
  list_releases: [["owner", "repo"], ["owner", "page", "perPage", "repo"]],
  get_latest_release: [["owner", "repo"], ["owner", "repo"]],
  get_release_by_tag: [["owner", "repo", "tag"], ["owner", "repo", "tag"]],
  list_repository_collaborators: [["owner", "repo"], ["affiliation", "owner", "page", "perPage", "repo"], { extra: ["permission"] }],
  create_repository: [["name"], ["autoInit", "description", "name", "organization", "private"]],
  fork_repository: [["owner", "repo"], ["organization", "owner", "repo"]],
};
// Slack's 18, as mcp.slack.com lists them (hosted Pome's capture of 2026-08-10).
const OFFICIAL_SLACK = {
  slack_send_message: [["channel_id", "message"], ["channel_id", "draft_id", "message", "reply_broadcast", "thread_ts", "unfurl_app_links"]],
  slack_schedule_message: [["channel_id", "message", "post_at"], ["channel_id", "message", "post_at", "reply_broadcast", "thread_ts"]],
  slack_add_reaction: [["channel_id", "message_ts", "emoji"], ["channel_id", "emoji", "message_ts"]],
  slack_get_reactions: [["channel_id", "message_ts"], ["channel_id", "message_ts"]],
  slack_create_conversation: [[], ["channel_name", "is_private", "user_ids"]],
  slack_read_channel: [["channel_id"], ["channel_id", "cursor", "latest", "limit", "oldest", "response_format"]],
  slack_read_thread: [["channel_id", "message_ts"], ["channel_id", "cursor", "latest", "limit", "message_ts", "oldest", "response_format"]],
  slack_read_user_profile: [[], ["include_locale", "response_format", "user_id"]],
  slack_list_channel_members: [["channel_id"], ["channel_id", "cursor", "include_bots", "include_deleted", "limit", "response_format"]],
  slack_search_channels: [["query"], ["channel_types", "cursor", "include_archived", "limit", "query", "response_format"]],
  slack_search_users: [["query"], ["cursor", "limit", "query", "response_format"]],
  slack_search_public: [["query"], ["after", "before", "content_types", "context_channel_id", "cursor", "include_bots", "include_context",
    "limit", "max_context_length", "only_my_channels", "query", "response_format", "sort", "sort_dir"]],
  slack_search_public_and_private: [["query"], ["after", "before", "channel_types", "content_types", "context_channel_id", "cursor",
    "include_bots", "include_context", "limit", "max_context_length", "only_my_channels", "query", "response_format", "sort", "sort_dir"]],
  slack_search_emojis: [["query"], ["query"]],
  slack_read_file: [["file_id"], ["file_id"]],
  slack_create_canvas: [["title", "content"], ["content", "title"]],
  slack_update_canvas: [["canvas_id"], ["action", "canvas_id", "content", "section_id", "sections"]],
  slack_read_canvas: [["canvas_id"], ["canvas_id"]],
};

// ============================================================ plumbing

let r = await control("POST", "/v1/sandboxes", { twins: ["github", "slack"], seeds: { github: "release-train" } });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const token = sb.session_token;
const twins = {
  github: { rest: sb.per_twin.github.rest_url, mcp: sb.per_twin.github.mcp_url },
  slack: { rest: sb.per_twin.slack.rest_url, mcp: sb.per_twin.slack.mcp_url },
};
for (const t of Object.values(twins)) assert.ok(t.rest && t.mcp, JSON.stringify(sb.per_twin));

async function rest(twin, method, path, body, ctype = "application/json") {
  const res = await fetch(twins[twin].rest + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": ctype } : {}) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json, text };
}
const state = async (twin) => {
  const s = await rest(twin, "GET", "/_pome/state");
  assert.equal(s.status, 200);
  return s.text;
};
const pids = async () => {
  const s = await control("GET", `/v1/sandboxes/${sb.session_id}`);
  assert.equal(s.status, 200);
  return [s.body.per_twin.github.pod.pid, s.body.per_twin.slack.pod.pid];
};

async function mcpClient(url) {
  const client = new Client({ name: "conformance-every-tool", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  }));
  return client;
}

// A CallToolResult's payload: structuredContent, else the JSON of its text, else the text.
function payload(res) {
  if (res.structuredContent !== undefined) return res.structuredContent;
  const text = res.content?.[0]?.text ?? "";
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// ============================================================ schemas
const clients = { github: await mcpClient(twins.github.mcp), slack: await mcpClient(twins.slack.mcp) };
const listed = {};
for (const twin of ["github", "slack"]) listed[twin] = new Map((await clients[twin].listTools()).tools.map((t) => [t.name, t]));
// pomed's own finalize_run is on every twin of a sandbox (tests/conformance/test-finalize-run.mjs
// calls it): not the vendor's, and calling it here would end the sandbox
for (const twin of ["github", "slack"]) assert.ok(listed[twin].delete("finalize_run"), `${twin} lists finalize_run`);

function checkNames(twin, official) {
  const names = [...listed[twin].keys()];
  const missing = Object.keys(official).filter((n) => !listed[twin].has(n));
  assert.deepEqual(missing, [], `${twin}: official tools missing from tools/list`);
  const unofficial = names.filter((n) => !(n in official));
  assert.deepEqual(unofficial, [], `${twin}: tools/list names tools no official server has`);
}
checkNames("github", OFFICIAL_GITHUB);
checkNames("slack", OFFICIAL_SLACK);
assert.equal(Object.keys(OFFICIAL_GITHUB).length, 36);
assert.equal(Object.keys(OFFICIAL_SLACK).length, 18);

const schemaErrors = [];
for (const [twin, official] of [["github", OFFICIAL_GITHUB], ["slack", OFFICIAL_SLACK]])
  for (const [name, [required, props, opts = {}]] of Object.entries(official)) {
    const schema = listed[twin].get(name).inputSchema;
    const got = { required: [...(schema.required ?? [])].sort(), props: Object.keys(schema.properties ?? {}).sort() };
    const want = { required: [...required].sort(), props: [...props, ...(opts.extra ?? [])].sort() };
    if (JSON.stringify(got) !== JSON.stringify(want))
      schemaErrors.push(`${twin} ${name}: ${JSON.stringify(got)} != official ${JSON.stringify(want)}`);
    if (schema.type !== "object") schemaErrors.push(`${twin} ${name}: inputSchema.type is ${schema.type}`);
  }
assert.deepEqual(schemaErrors, [], "input schemas differ from the official servers'");

// ============================================================ every tool, doing real work
const web = { owner: "acme", repo: "web" };
const b64 = (s) => Buffer.from(s).toString("base64");
const unb64 = (s) => Buffer.from(s, "base64").toString();
const ctx = {};

// Setup the reads need that no MCP tool makes: a release (and its tag) on acme/web, a file
// shared in Slack. Made over REST before the steps run.
r = await rest("github", "POST", "/repos/acme/web/releases", {
  tag_name: "v9.0.0", target_commitish: "main", name: "Nine", body: "Every tool, once.",
});
assert.equal(r.status, 201, r.text);
r = await rest("slack", "POST", "/files.upload", "content=p50%3A+40ms%0A&filename=lat.txt&channels=C_GENERAL",
  "application/x-www-form-urlencoded");
assert.equal(r.body?.ok, true, r.text);
ctx.fileId = r.body.file.id;

// Each step: [tool, args (or a function of ctx), check(result, ctx)]. A tool's first step is
// the one that proves it; later steps for the same tool only set things up or clean up.
// write: whether the call must change /_pome/state (and be a mutation on the tape).
const GITHUB_STEPS = [
  ["get_me", {}, (x) => assert.equal(x.login, "pome-agent")],
  ["list_branches", web, (x) => assert.deepEqual(x.map((b) => b.name).filter((n) => ["main", "staging"].includes(n)), ["main", "staging"])],
  ["create_branch", { ...web, branch: "mcp-every", from_branch: "main" }, (x) => assert.equal(x.ref, "refs/heads/mcp-every"), true],
  ["create_or_update_file", { ...web, path: "docs/every.md", content: "# Every tool\n", message: "Add every.md", branch: "mcp-every" },
    (x) => assert.deepEqual([x.content.path, x.commit.message], ["docs/every.md", "Add every.md"]), true],
  ["get_file_contents", { ...web, path: "docs/every.md", ref: "refs/heads/mcp-every" },
    (x) => assert.equal(unb64(x.content), "# Every tool\n")],
  ["push_files", { ...web, branch: "mcp-every", message: "Two more", files: [{ path: "docs/x.md", content: "X\n" }, { path: "docs/y.md", content: "Y\n" }] },
    (x, c) => {
      assert.equal(x.ref, "refs/heads/mcp-every");
      c.pushSha = x.object.sha;
    }, true],
  ["delete_file", { ...web, path: "docs/y.md", message: "Drop y", branch: "mcp-every" },
    (x, c) => {
      assert.equal(x.content, null);
      c.head = x.commit.sha;
    }, true],
  ["list_commits", { ...web, sha: "mcp-every", perPage: 3 },
    (x) => assert.deepEqual(x.map((k) => k.commit.message), ["Drop y", "Two more", "Add every.md"])],
  ["get_commit", (c) => ({ ...web, sha: c.pushSha }), (x) => assert.deepEqual(x.files.map((f) => f.filename), ["docs/x.md", "docs/y.md"])],
  ["create_pull_request", { ...web, title: "Every tool", head: "mcp-every", base: "main", body: "Once each." },
    (x, c) => {
      c.pr = Number(x.url.match(/\/pull\/(\d+)$/)[1]);
    }, true],
  ["list_pull_requests", { ...web, state: "open" }, (x, c) => assert.equal(x.find((p) => p.number === c.pr)?.head.ref, "mcp-every")],
  ["pull_request_read", (c) => ({ method: "get", ...web, pullNumber: c.pr }),
    (x, c) => assert.deepEqual([x.title, x.changed_files, x.head.sha], ["Every tool", 2, c.head])],
  ["update_pull_request", (c) => ({ ...web, pullNumber: c.pr, body: "Once each, really." }),
    (x, c) => assert.match(x.url, new RegExp(`/pull/${c.pr}$`)), true],
  ["create_pull_request_review", (c) => ({ ...web, pullNumber: c.pr, event: "COMMENT", body: "Reads well." }),
    (x) => assert.equal(x.message, "pull request review submitted successfully"), true],
  ["pull_request_review_write", (c) => ({ method: "create", ...web, pullNumber: c.pr, body: "pending" }),
    (x) => assert.equal(x, "pending pull request created"), true],
  ["pull_request_review_write", (c) => ({ method: "submit_pending", ...web, pullNumber: c.pr, event: "COMMENT", body: "Done." }),
    (x) => assert.equal(x, "pending pull request review successfully submitted"), true],
  ["add_reply_to_pull_request_comment", (c) => ({ ...web, pullNumber: c.pr, commentId: c.commentId, body: "Will do." }),
    (x) => assert.match(x.url, /#discussion_r\d+$/), true],
  ["create_or_update_file", { ...web, path: "NOTES.md", content: "main moves on\n", message: "Notes", branch: "main" },
    (x) => assert.equal(x.content.path, "NOTES.md"), true],
  ["update_pull_request_branch", (c) => ({ ...web, pullNumber: c.pr, expectedHeadSha: c.head }),
    (x) => assert.equal(x.message, "Updating pull request branch."), true],
  ["merge_pull_request", (c) => ({ ...web, pullNumber: c.pr, merge_method: "squash" }), (x) => assert.equal(x.merged, true), true],
  ["list_tags", web, (x) => assert.ok(x.some((t) => t.name === "v9.0.0"), JSON.stringify(x))],
  ["get_tag", { ...web, tag: "v9.0.0" }, (x) => assert.match(x.object.sha, /^[0-9a-f]{40}$/)],
  ["list_releases", web, (x) => assert.ok(x.some((v) => v.tag_name === "v9.0.0"))],
  ["get_latest_release", web, (x) => assert.equal(x.tag_name, "v9.0.0")],
  ["get_release_by_tag", { ...web, tag: "v9.0.0" }, (x) => assert.deepEqual([x.name, x.body], ["Nine", "Every tool, once."])],
  ["list_repository_collaborators", web, (x) => assert.deepEqual(x.map((u) => u.login).sort(), ["carol", "pome-agent"])],
  ["create_repository", { name: "mcp-every", description: "via MCP", autoInit: true },
    (x) => assert.match(JSON.stringify(x), /pome-agent\/mcp-every/), true],
  ["fork_repository", { owner: "carol", repo: "dotfiles" }, (x) => assert.match(JSON.stringify(x), /pome-agent\/dotfiles/), true],
  ["search_code", { query: "alias repo:carol/dotfiles" }, (x) => assert.equal(x.items[0].path, ".bashrc")],
  ["search_commits", { query: "repo:pome-agent/mcp-every" }, (x) => assert.deepEqual(x.items.map((i) => i.commit.message), ["Initial commit"])],
  ["search_repositories", { query: "mcp-every in:name" }, (x) => assert.deepEqual(x.items.map((i) => i.full_name), ["pome-agent/mcp-every"])],
  ["search_users", { query: "carol" }, (x) => assert.ok(x.items.some((u) => u.login === "carol"))],
  // the issue family, against the official schemas
  ["list_issues", { ...web, state: "OPEN" }, (x) => assert.ok((x.issues ?? x).some((i) => i.number === 1), JSON.stringify(x))],
  ["issue_read", { method: "get", ...web, issue_number: 1 }, (x) => assert.equal(x.title, "Checkout total ignores quantities")],
  ["create_issue", { ...web, title: "Made by create_issue", body: "b" },
    (x) => assert.match(x.url, /\/acme\/web\/issues\/\d+$/), true],
  ["issue_write", { method: "create", ...web, title: "Made by issue_write", labels: ["release"] },
    (x, c) => {
      c.issue = Number(x.url.match(/\/issues\/(\d+)$/)[1]);
    }, true],
  ["issue_write", (c) => ({ method: "update", ...web, issue_number: c.issue, state: "closed", state_reason: "completed" }),
    (x, c) => assert.match(x.url, new RegExp(`/issues/${c.issue}$`)), true],
  ["add_issue_comment", { ...web, issue_number: 1, body: "Seen it." }, (x) => assert.match(x.url, /#issuecomment-\d+$/), true],
  ["issue_read", { method: "get_comments", ...web, issue_number: 1 }, (x) => assert.ok(x.some((k) => k.body === "Seen it."))],
  ["issue_read", (c) => ({ method: "get_labels", ...web, issue_number: c.issue }),
    (x) => assert.deepEqual((x.labels ?? x).map((l) => l.name), ["release"])],
  ["search_issues", { query: "quantities", ...web }, (x) => assert.ok(x.items.some((i) => i.number === 1), JSON.stringify(x))],
];

const SLACK_STEPS = [
  ["slack_send_message", { channel_id: "C_GENERAL", message: "Every tool, once" },
    (x, c) => {
      assert.match(x.ts, /^\d{10}\.\d{6}$/);
      c.ts = x.ts;
    }, true],
  ["slack_schedule_message", { channel_id: "C_GENERAL", message: "later", post_at: Math.floor(Date.now() / 1000) + 3600 },
    (x) => assert.match(x.scheduled_message_id, /^Q/), true],
  ["slack_add_reaction", (c) => ({ channel_id: "C_GENERAL", message_ts: c.ts, emoji: "eyes" }), (x) => assert.equal(x.ok, true), true],
  ["slack_get_reactions", (c) => ({ channel_id: "C_GENERAL", message_ts: c.ts }),
    (x) => assert.deepEqual(x.message.reactions.map((k) => [k.name, k.count]), [["eyes", 1]])],
  ["slack_create_conversation", { channel_name: "every-tool", user_ids: ["U_DAVE"] },
    (x) => assert.deepEqual([x.channel.name, x.channel.num_members], ["every-tool", 2]), true],
  ["slack_read_channel", { channel_id: "C_GENERAL", limit: 1 }, (x) => assert.equal(x.messages[0].text, "Every tool, once")],
  ["slack_read_thread", (c) => ({ channel_id: "C_GENERAL", message_ts: c.ts }),
    (x) => assert.deepEqual(x.messages.map((m) => m.text), ["Every tool, once"])],
  ["slack_read_user_profile", { user_id: "U_BOB" }, (x) => assert.equal(x.profile.real_name, "Bob")],
  ["slack_list_channel_members", { channel_id: "C_ENGINEERING" }, (x) => assert.ok(JSON.stringify(x.members).includes("U_ALICE"))],
  ["slack_search_channels", { query: "incidents", channel_types: "public_channel,private_channel" },
    (x) => assert.deepEqual(x.channels.map((k) => k.id), ["G_INCIDENTS"])],
  ["slack_search_users", { query: "designer" }, (x) => assert.deepEqual(x.users.map((u) => u.id), ["U_CAROL"])],
  ["slack_search_public", { query: "mockups" }, (x) => assert.equal(x.messages.total, 1)],
  ["slack_search_public_and_private", { query: "checkout" }, (x) => assert.equal(x.messages.total, 1)],
  ["slack_search_emojis", { query: "parrot" }, (x) => assert.deepEqual(x.emojis.map((e) => e.name), ["partyparrot"])],
  ["slack_read_file", (c) => ({ file_id: c.fileId }), (x) => assert.equal(x.content, "p50: 40ms\n")],
  ["slack_create_canvas", { title: "Every tool", content: "# Plan\n" },
    (x, c) => {
      assert.match(x.canvas_id, /^F/);
      c.canvas = x.canvas_id;
    }, true],
  ["slack_update_canvas", (c) => ({ canvas_id: c.canvas, action: "append", content: "## More\n" }), (x) => assert.equal(x.ok, true), true],
  ["slack_read_canvas", (c) => ({ canvas_id: c.canvas }),
    (x, c) => {
      assert.equal(x.markdown, "# Plan\n\n## More\n");
      c.sections = x.sections.map((k) => k.id);
    }],
  // the official schema's batch form: sections[{edit_type, section_id, content}]
  ["slack_update_canvas", (c) => ({ canvas_id: c.canvas, sections: [
    { edit_type: "replace", section_id: c.sections[1], content: "## Most\n" },
    { edit_type: "prepend", section_id: c.sections[0], content: "Draft\n" },
  ] }), (x) => assert.equal(x.ok, true), true],
  ["slack_read_canvas", (c) => ({ canvas_id: c.canvas }), (x) => assert.equal(x.markdown, "Draft\n\n# Plan\n\n## Most\n")],
];

const called = { github: new Set(), slack: new Set() };
for (const [twin, steps] of [["github", GITHUB_STEPS], ["slack", SLACK_STEPS]]) {
  const covered = new Set(steps.map(([name]) => name));
  const uncovered = [...listed[twin].keys()].filter((n) => !covered.has(n));
  assert.deepEqual(uncovered, [], `${twin}: listed tools without a step`);
}
async function runSteps(twin, steps) {
  for (const [name, argsOrFn, check, write = false] of steps) {
    const tool = listed[twin].get(name);
    assert.ok(tool, `${twin} lists ${name}`);
    assert.equal(tool.annotations?.readOnlyHint ?? false, !write, `${name}: readOnlyHint`);
    const args = typeof argsOrFn === "function" ? argsOrFn(ctx) : argsOrFn;
    const before = await state(twin);
    const res = await clients[twin].callTool({ name, arguments: args });
    const out = payload(res);
    assert.ok(!res.isError, `${name}(${JSON.stringify(args)}): ${res.content?.[0]?.text}`);
    try {
      check(out, ctx);
    } catch (e) {
      e.message = `${name}: ${e.message}\n  result: ${JSON.stringify(out).slice(0, 600)}`;
      throw e;
    }
    const after = await state(twin);
    if (write) assert.notEqual(after, before, `${name} is a write and changed nothing in /_pome/state`);
    else assert.equal(after, before, `${name} is a read and changed /_pome/state`);
    called[twin].add(name);
  }
}

// a review comment to reply to, made over REST once the pull request exists
const prStep = GITHUB_STEPS.findIndex(([n]) => n === "pull_request_read");
await runSteps("github", GITHUB_STEPS.slice(0, prStep + 1));
r = await rest("github", "POST", `/repos/acme/web/pulls/${ctx.pr}/comments`, {
  body: "Link the docs?", commit_id: ctx.head, path: "docs/every.md", line: 1, side: "RIGHT",
});
assert.equal(r.status, 201, r.text);
ctx.commentId = r.body.id;
await runSteps("github", GITHUB_STEPS.slice(prStep + 1));
await runSteps("slack", SLACK_STEPS);

// ---- the tape: every called tool is a row's `tool`; writes are mutations there too
for (const twin of ["github", "slack"]) {
  const t = await rest(twin, "GET", "/_pome/events");
  assert.equal(t.status, 200);
  const rows = t.body;
  for (const name of called[twin]) {
    const mine = rows.filter((row) => row.tool === name);
    assert.ok(mine.length > 0, `${twin}: no tape row has tool ${name}`);
    assert.ok(mine.every((row) => row.path.endsWith("/mcp") && row.status === 200), `${name}: rows are MCP calls`);
  }
  for (const [name, , , write] of twin === "github" ? GITHUB_STEPS : SLACK_STEPS)
    if (write && called[twin].has(name))
      assert.ok(rows.some((row) => row.tool === name && row.state_mutation === true), `${twin}: ${name} has a mutation row`);
}
console.log(`ok: ${called.github.size} GitHub and ${called.slack.size} Slack tools called, each doing real work`);

// ============================================================ the plain-JSON surfaces
async function plain(twin, path, body) {
  const res = await fetch(twins[twin].mcp + path, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
r = await plain("github", "/tools/get_file_contents", { ...web, path: "NOTES.md", ref: "main" });
assert.equal(r.status, 200, JSON.stringify(r.body));
assert.equal(r.body.isError, false);
assert.equal(unb64(payload(r.body).content), "main moves on\n");
// {mcp_url}/call is hosted Pome's legacy dispatch: it answers what the tool answers, not a
// CallToolResult (their contract suite, ../shared/contract-suite)
r = await plain("github", "/call", { tool: "list_branches", arguments: { ...web, fields: ["name"] } });
assert.equal(r.status, 200, JSON.stringify(r.body));
assert.ok(r.body.some((b) => b.name === "mcp-every"));
r = await plain("slack", "/tools/slack_read_user_profile", { user_id: "U_CAROL" });
assert.equal(r.status, 200, JSON.stringify(r.body));
assert.equal(payload(r.body).profile.title, "Designer");
r = await plain("slack", "/call", { tool: "slack_search_emojis", arguments: { query: "ship" } });
assert.equal(r.status, 200, JSON.stringify(r.body));
assert.equal(r.body.ok, true);
assert.ok(r.body.emojis.some((e) => e.name === "ship"));
r = await plain("slack", "/call", { tool: "slack_no_such_tool", arguments: {} });
assert.equal(r.status, 404);
assert.deepEqual([r.body.ok, r.body.error], [false, "unknown_tool"]);
r = await plain("github", "/tools/no_such_tool", {});
assert.equal(r.status, 404);
assert.match(r.body.message, /Unknown tool/);
console.log("ok: POST {mcp_url}/tools/{name} and {mcp_url}/call");

// ============================================================ MCP errors
const pids0 = await pids();
const world0 = { github: await state("github"), slack: await state("slack") };

// an unknown tool: JSON-RPC -32602, as the official servers answer
for (const twin of ["github", "slack"])
  await assert.rejects(clients[twin].callTool({ name: "no_such_tool", arguments: {} }), (e) => {
    assert.equal(e.code, -32602, e.message);
    assert.match(e.message, /no_such_tool/);
    return true;
  });

// bad arguments: a tool error (isError, a message naming the argument) or a JSON-RPC error
async function refused(twin, name, args, mention) {
  let res;
  try {
    res = await clients[twin].callTool({ name, arguments: args });
  } catch (e) {
    assert.equal(e.code, -32602, `${name}(${JSON.stringify(args)}): ${e.message}`);
    return;
  }
  assert.equal(res.isError, true, `${name}(${JSON.stringify(args)}) should fail: ${res.content?.[0]?.text}`);
  if (mention) assert.match(res.content[0].text, mention, `${name}: the error names the argument`);
}
await refused("github", "get_file_contents", { repo: "web", path: "README.md" }, /owner/);
await refused("github", "get_file_contents", { owner: 7, repo: "web", path: "README.md" }, /owner/);
await refused("github", "create_branch", { ...web, branch: ["x"] }, /branch/);
await refused("github", "create_branch", { ...web }, /branch/);
await refused("github", "create_pull_request", { ...web, title: "x", head: "staging" }, /base/);
// a pull number that is no number names no pull request: Not Found, as GET /pulls/one answers
await refused("github", "merge_pull_request", { ...web, pullNumber: "one" }, /Not Found/);
await refused("github", "push_files", { ...web, branch: "main", message: "m", files: "not an array" }, /files/);
await refused("github", "create_or_update_file", { ...web, path: "a.md", content: { x: 1 }, message: "m", branch: "main" }, /content/);
await refused("github", "create_repository", { name: 12 }, /name/);
await refused("slack", "slack_send_message", { channel_id: "C_GENERAL" }, /no_text/);
await refused("slack", "slack_send_message", { channel_id: 5, message: "x" }, /channel|invalid_arguments/);
await refused("slack", "slack_add_reaction", { channel_id: "C_GENERAL", message_ts: ctx.ts, emoji: ["eyes"] });
await refused("slack", "slack_schedule_message", { channel_id: "C_GENERAL", message: "x", post_at: "soon" });
await refused("slack", "slack_create_conversation", { channel_name: 42 });
await refused("slack", "slack_read_channel", {}, /channel|invalid_arguments/);

assert.deepEqual(await pids(), pids0, "the pods kept their pids");
assert.equal(await state("github"), world0.github, "the GitHub world is unchanged by refused calls");
assert.equal(await state("slack"), world0.slack, "the Slack world is unchanged by refused calls");
// still serving
assert.equal(payload(await clients.github.callTool({ name: "list_tags", arguments: web })).some((t) => t.name === "v9.0.0"), true);
assert.equal(payload(await clients.slack.callTool({ name: "slack_search_emojis", arguments: { query: "parrot" } })).ok, true);
console.log("ok: unknown tools and bad arguments refused, pods alive, worlds unchanged");

for (const c of Object.values(clients)) await c.close();
r = await control("DELETE", `/v1/sandboxes/${sb.session_id}`);
if (r.status === 409) r = await control("DELETE", `/v1/sandboxes/${sb.session_id}?confirm_discard=${r.body.error.details.discard_token}`);
assert.equal(r.status, 204);
console.log("conformance: every MCP tool of the GitHub and Slack twins passed");
