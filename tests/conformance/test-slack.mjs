// The Slack twin driven the way agents drive Slack: the official, unmodified
// @slack/web-api WebClient (slackApiUrl = rest_url + "/") through a real sandbox,
// and every MCP tool through the official @modelcontextprotocol/sdk client.
// Also the hosted-Pome task-seed format (sandbox-images/slack/seeds/hosted-task.json)
// through a sandbox and through `pome twin start --seed FILE`.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { WebClient } from "@slack/web-api";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { control, discard } from "./lib.mjs";

async function get(url, token) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, url);
  return res.json();
}

const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel() {}, setName() {} };
const slackClient = (token, restUrl) =>
  new WebClient(token, { slackApiUrl: restUrl + "/", retryConfig: { retries: 0 }, logger: quiet });
const slackError = (code) => (e) => {
  assert.equal(e.data?.error, code, `expected ${code}, got ${e.data?.error ?? e.message}`);
  return true;
};

async function mcpClient(mcpUrl, token) {
  const client = new Client({ name: "pome-conformance", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

// A tool's result: structuredContent, or the JSON of its text.
async function tool(mcp, name, args, { error } = {}) {
  const res = await mcp.callTool({ name, arguments: args });
  const out = res.structuredContent ?? JSON.parse(res.content[0].text);
  if (error) {
    assert.equal(res.isError, true, `${name} should fail with ${error}`);
    assert.equal(out.error, error, `${name}: ${JSON.stringify(out)}`);
  } else {
    assert.ok(!res.isError, `${name}: ${JSON.stringify(out)}`);
    assert.equal(out.ok, true);
  }
  return out;
}

// =====================================================================================
// 1. The default workspace over REST with @slack/web-api
// =====================================================================================
let r = await control("POST", "/v1/sandboxes", { twins: ["slack"] });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const restUrl = sb.per_twin.slack.rest_url;
const mcpUrl = sb.per_twin.slack.mcp_url ?? `${restUrl}/mcp`;
const sl = slackClient(sb.session_token, restUrl);

const auth = await sl.auth.test();
assert.equal(auth.user_id, "U_PRIMARY");
assert.equal(auth.team_id, "T_POME");

// ---- cursor pagination: client.paginate and the explicit cursor loop
const names = [];
for await (const page of sl.paginate("conversations.list", { limit: 2, types: "public_channel,private_channel" }))
  names.push(...page.channels.map((c) => c.name));
assert.deepEqual(names, ["general", "random", "engineering", "design", "incidents", "old-project"]);
assert.ok(!names.includes("leadership"), "a private channel the bot is not in is invisible");
let cursor, top = [];
do {
  const page = await sl.conversations.history({ channel: "C_ENGINEERING", limit: 10, cursor });
  assert.ok(page.messages.length <= 10);
  top.push(...page.messages);
  cursor = page.response_metadata.next_cursor;
} while (cursor);
assert.equal(top.length, 25, "25 top-level messages in #engineering");
assert.ok(top.every((m, i) => i === 0 || Number(top[i - 1].ts) > Number(m.ts)), "newest first");
const window = await sl.conversations.history({
  channel: "C_ENGINEERING", oldest: "1700000600.000100", latest: "1700000720.000100", inclusive: true,
});
assert.deepEqual(window.messages.map((m) => m.ts), ["1700000720.000100", "1700000660.000100", "1700000600.000100"]);
const users = [];
for await (const page of sl.paginate("users.list", { limit: 2 })) users.push(...page.members.map((u) => u.name));
assert.deepEqual(users, ["alice", "bob", "carol", "dave", "frank", "pome-agent"], "erin is hidden from the bot");

// ---- membership, as Slack enforces it
await assert.rejects(sl.conversations.history({ channel: "C_DESIGN" }), slackError("not_in_channel"));
await assert.rejects(sl.chat.postMessage({ channel: "C_DESIGN", text: "hi" }), slackError("not_in_channel"));
await assert.rejects(sl.conversations.history({ channel: "G_LEADERSHIP" }), slackError("channel_not_found"));
await assert.rejects(sl.conversations.info({ channel: "G_LEADERSHIP" }), slackError("channel_not_found"));
await assert.rejects(sl.conversations.join({ channel: "G_LEADERSHIP" }), slackError("channel_not_found"));
await assert.rejects(sl.chat.postMessage({ channel: "G_LEADERSHIP", text: "x" }), slackError("channel_not_found"));
// a required argument left out: invalid_arguments, the field named where the SDK logs it
await assert.rejects(sl.conversations.history({}), (e) => {
  assert.equal(e.data?.error, "invalid_arguments");
  assert.deepEqual(e.data.response_metadata.messages, ["[ERROR] missing required field: channel"]);
  return true;
});
await assert.rejects(sl.conversations.replies({ channel: "C_GENERAL" }), slackError("invalid_arguments"));
assert.equal((await sl.conversations.info({ channel: "C_DESIGN" })).channel.is_member, false);
assert.equal((await sl.conversations.join({ channel: "C_DESIGN" })).channel.is_member, true);
assert.equal((await sl.conversations.history({ channel: "C_DESIGN" })).messages.length, 1);
await sl.conversations.invite({ channel: "C_DESIGN", users: "U_BOB,U_DAVE" });
assert.deepEqual((await sl.conversations.members({ channel: "C_DESIGN" })).members,
  ["U_ALICE", "U_CAROL", "U_PRIMARY", "U_BOB", "U_DAVE"]);
await assert.rejects(sl.conversations.invite({ channel: "C_DESIGN", users: "U_BOB" }), slackError("already_in_channel"));
await assert.rejects(sl.conversations.invite({ channel: "C_DESIGN", users: "U_ERIN" }), slackError("user_not_found"));
const generalMembers = (await sl.conversations.members({ channel: "C_GENERAL" })).members;
assert.equal(generalMembers.length, 6);
assert.ok(!generalMembers.includes("U_ERIN"), "a member the bot may not see is left out");
await sl.conversations.kick({ channel: "C_DESIGN", user: "U_DAVE" });
await sl.conversations.leave({ channel: "C_DESIGN" });
await assert.rejects(sl.chat.postMessage({ channel: "C_DESIGN", text: "bye" }), slackError("not_in_channel"));
await assert.rejects(sl.conversations.leave({ channel: "C_GENERAL" }), slackError("cant_leave_general"));
await assert.rejects(sl.chat.postMessage({ channel: "C_OLD_PROJECT", text: "x" }), slackError("is_archived"));

// ---- threads, reply_broadcast, ts strictly increasing
const parent = await sl.chat.postMessage({ channel: "C_ENGINEERING", text: "Release 1.4 is cut" });
assert.match(parent.ts, /^\d{10}\.\d{6}$/);
const reply1 = await sl.chat.postMessage({ channel: "C_ENGINEERING", text: "Changelog attached", thread_ts: parent.ts });
const reply2 = await sl.chat.postMessage({ channel: "C_ENGINEERING", text: "Tagged in git", thread_ts: reply1.ts, reply_broadcast: true });
assert.ok(Number(reply1.ts) > Number(parent.ts) && Number(reply2.ts) > Number(reply1.ts));
assert.equal(reply2.message.thread_ts, parent.ts, "a reply to a reply joins the parent's thread");
const thread = await sl.conversations.replies({ channel: "C_ENGINEERING", ts: parent.ts });
assert.deepEqual(thread.messages.map((m) => m.text), ["Release 1.4 is cut", "Changelog attached", "Tagged in git"]);
const head = await sl.conversations.history({ channel: "C_ENGINEERING", limit: 2 });
assert.equal(head.messages[0].text, "Tagged in git", "a broadcast reply shows in the channel");
assert.equal(head.messages[1].reply_count, 2);
await assert.rejects(sl.chat.postMessage({ channel: "C_ENGINEERING", text: "x", thread_ts: "1.000000" }), slackError("thread_not_found"));

// ---- chat.update / chat.delete (own messages only), scheduling
const edited = await sl.chat.update({ channel: "C_ENGINEERING", ts: parent.ts, text: "Release 1.4.0 is cut" });
assert.equal(edited.text, "Release 1.4.0 is cut");
await assert.rejects(sl.chat.update({ channel: "C_GENERAL", ts: "1700000000.000100", text: "x" }), slackError("cant_update_message"));
await assert.rejects(sl.chat.delete({ channel: "C_GENERAL", ts: "1700000000.000100" }), slackError("cant_delete_message"));
const oops = await sl.chat.postMessage({ channel: "C_RANDOM", text: "oops" });
await sl.chat.delete({ channel: "C_RANDOM", ts: oops.ts });
assert.ok(!(await sl.conversations.history({ channel: "C_RANDOM" })).messages.some((m) => m.ts === oops.ts));
const postAt = Math.floor(Date.now() / 1000) + 3600;
const sched = await sl.chat.scheduleMessage({ channel: "C_GENERAL", text: "Reminder: retro at 3", post_at: postAt });
assert.match(sched.scheduled_message_id, /^Q/);
const listed = await sl.chat.scheduledMessages.list({ channel: "C_GENERAL" });
assert.deepEqual(listed.scheduled_messages.map((s) => s.post_at), [postAt]);
await assert.rejects(sl.chat.scheduleMessage({ channel: "C_GENERAL", text: "x", post_at: 1000 }), slackError("time_in_past"));
await assert.rejects(sl.chat.scheduleMessage({ channel: "C_GENERAL", text: "x", post_at: postAt + 121 * 86400 }), slackError("time_too_far"));
await sl.chat.deleteScheduledMessage({ channel: "C_GENERAL", scheduled_message_id: sched.scheduled_message_id });
assert.equal((await sl.chat.scheduledMessages.list({})).scheduled_messages.length, 0);
// delivery: once post_at has passed, the next call finds the message posted (in its
// thread, with the ts of its delivery), the list empty, and the id no longer deletable
const soon = Math.floor(Date.now() / 1000) + 2;
const dueTop = await sl.chat.scheduleMessage({ channel: "C_ENGINEERING", text: "Scheduled: standup notes", post_at: soon });
const dueReply = await sl.chat.scheduleMessage({ channel: "C_ENGINEERING", text: "Scheduled: in the thread", post_at: soon, thread_ts: parent.ts });
const later = await sl.chat.scheduleMessage({ channel: "C_ENGINEERING", text: "Scheduled: next hour", post_at: postAt });
const pending = await sl.chat.scheduledMessages.list({ channel: "C_ENGINEERING", limit: 2 });
assert.deepEqual(pending.scheduled_messages.map((s) => s.id), [dueTop.scheduled_message_id, dueReply.scheduled_message_id], "soonest first");
assert.ok(pending.response_metadata.next_cursor, "a cursor to the third");
const rest = await sl.chat.scheduledMessages.list({ channel: "C_ENGINEERING", limit: 2, cursor: pending.response_metadata.next_cursor });
assert.deepEqual(rest.scheduled_messages.map((s) => s.id), [later.scheduled_message_id]);
assert.equal((await sl.chat.scheduledMessages.list({ oldest: String(soon + 60) })).scheduled_messages.length, 1);
assert.ok(!(await sl.conversations.history({ channel: "C_ENGINEERING", limit: 5 })).messages.some((m) => m.text.startsWith("Scheduled")));
await new Promise((resolve) => setTimeout(resolve, (soon + 1) * 1000 - Date.now()));
const afterDue = await sl.conversations.history({ channel: "C_ENGINEERING", limit: 5 });
const delivered = afterDue.messages.find((m) => m.text === "Scheduled: standup notes");
assert.ok(delivered, "delivered once post_at passed");
assert.ok(Number(delivered.ts) >= soon, "the ts of its delivery");
assert.equal(delivered.user, "U_PRIMARY");
const inThread = await sl.conversations.replies({ channel: "C_ENGINEERING", ts: parent.ts });
assert.ok(inThread.messages.some((m) => m.text === "Scheduled: in the thread" && m.thread_ts === parent.ts));
assert.deepEqual((await sl.chat.scheduledMessages.list({})).scheduled_messages.map((s) => s.id), [later.scheduled_message_id]);
await assert.rejects(sl.chat.deleteScheduledMessage({ channel: "C_ENGINEERING", scheduled_message_id: dueTop.scheduled_message_id }), slackError("invalid_scheduled_message_id"));
await sl.chat.deleteScheduledMessage({ channel: "C_ENGINEERING", scheduled_message_id: later.scheduled_message_id });

// ---- reactions, pins, bookmarks
await sl.reactions.add({ channel: "C_ENGINEERING", timestamp: parent.ts, name: "tada" });
await assert.rejects(sl.reactions.add({ channel: "C_ENGINEERING", timestamp: parent.ts, name: "tada" }), slackError("already_reacted"));
await sl.reactions.add({ channel: "C_ENGINEERING", timestamp: "1700000720.000100", name: "rocket" });
const rx = await sl.reactions.get({ channel: "C_ENGINEERING", timestamp: "1700000720.000100" });
assert.deepEqual(rx.message.reactions.find((x) => x.name === "rocket").users, ["U_ALICE", "U_BOB", "U_PRIMARY"]);
await sl.reactions.remove({ channel: "C_ENGINEERING", timestamp: parent.ts, name: "tada" });
await assert.rejects(sl.reactions.remove({ channel: "C_ENGINEERING", timestamp: parent.ts, name: "tada" }), slackError("no_reaction"));
assert.equal((await sl.pins.list({ channel: "C_ENGINEERING" })).items.length, 1, "the seeded pin");
await sl.pins.add({ channel: "C_ENGINEERING", timestamp: parent.ts });
await assert.rejects(sl.pins.add({ channel: "C_ENGINEERING", timestamp: parent.ts }), slackError("already_pinned"));
const pins = await sl.pins.list({ channel: "C_ENGINEERING" });
assert.deepEqual(pins.items.map((p) => p.message.ts), [parent.ts, "1700000720.000100"]);
await sl.pins.remove({ channel: "C_ENGINEERING", timestamp: parent.ts });
await assert.rejects(sl.pins.remove({ channel: "C_ENGINEERING", timestamp: parent.ts }), slackError("no_pin"));
const bm = await sl.bookmarks.add({ channel_id: "C_ENGINEERING", title: "Runbook", type: "link", link: "https://example.com/runbook" });
assert.equal((await sl.bookmarks.list({ channel_id: "C_ENGINEERING" })).bookmarks[0].id, bm.bookmark.id);
await sl.bookmarks.remove({ channel_id: "C_ENGINEERING", bookmark_id: bm.bookmark.id });
assert.equal((await sl.bookmarks.list({ channel_id: "C_ENGINEERING" })).bookmarks.length, 0);

// ---- creating, opening, describing conversations
const made = await sl.conversations.create({ name: "launch-war-room", is_private: true });
assert.equal(made.channel.is_private, true);
assert.equal(made.channel.is_member, true);
await assert.rejects(sl.conversations.create({ name: "general" }), slackError("name_taken"));
await assert.rejects(sl.conversations.create({ name: "Launch Room!" }), slackError("invalid_name_specials"));
await sl.conversations.setTopic({ channel: made.channel.id, topic: "Launch on Friday" });
const purposed = await sl.conversations.setPurpose({ channel: made.channel.id, purpose: "Coordinate the launch" });
assert.equal(purposed.channel.purpose.value, "Coordinate the launch");
assert.equal((await sl.conversations.info({ channel: made.channel.id })).channel.topic.value, "Launch on Friday");
await sl.conversations.archive({ channel: made.channel.id });
await assert.rejects(sl.conversations.archive({ channel: made.channel.id }), slackError("already_archived"));
await sl.conversations.unarchive({ channel: made.channel.id });
await assert.rejects(sl.conversations.unarchive({ channel: made.channel.id }), slackError("not_archived"));
assert.equal((await sl.conversations.rename({ channel: made.channel.id, name: "launch-room" })).channel.name, "launch-room");
await assert.rejects(sl.conversations.rename({ channel: made.channel.id, name: "random" }), slackError("name_taken"));
const mine = await sl.users.conversations({ types: "public_channel,private_channel", exclude_archived: true });
assert.deepEqual(mine.channels.map((c) => c.name), ["general", "random", "engineering", "incidents", "launch-room"]);
const bobs = await sl.users.conversations({ user: "U_BOB", types: "public_channel,private_channel" });
assert.deepEqual(bobs.channels.map((c) => c.name), ["general", "random", "engineering", "design", "old-project"], "bob's channels the bot can see");
const alices = await sl.users.conversations({ user: "U_ALICE", types: "public_channel,private_channel" });
assert.deepEqual(alices.channels.map((c) => c.name), ["general", "random", "engineering", "design", "incidents"], "not #leadership, which the bot cannot see");
const dm = await sl.conversations.open({ users: "U_BOB" });
assert.match(dm.channel.id, /^D/);
assert.equal((await sl.conversations.open({ users: "U_BOB" })).channel.id, dm.channel.id);
await sl.chat.postMessage({ channel: dm.channel.id, text: "psst, the launch moved" });
const toUser = await sl.chat.postMessage({ channel: "U_CAROL", text: "posted to a user id lands in the DM" });
assert.match(toUser.channel, /^D/);
await assert.rejects(sl.chat.postMessage({ channel: "U_ERIN", text: "x" }), slackError("channel_not_found"));
const ims = await sl.conversations.list({ types: "im" });
assert.deepEqual(ims.channels.map((c) => c.user), ["U_BOB", "U_CAROL"]);
const group = await sl.conversations.open({ users: '["U_BOB","U_CAROL"]', return_im: true });
assert.equal(group.channel.is_mpim, true);
assert.equal(group.channel.name, "mpdm-pome-agent--bob--carol-1");
const link = await sl.chat.getPermalink({ channel: "C_GENERAL", message_ts: "1700000000.000100" });
assert.equal(link.permalink, "https://pome-twin.slack.com/archives/C_GENERAL/p1700000000000100");

// ---- users, team, emoji
await assert.rejects(sl.users.info({ user: "U_ERIN" }), slackError("user_not_found"));
await assert.rejects(sl.users.lookupByEmail({ email: "erin@partner.test" }), slackError("users_not_found"));
assert.equal((await sl.users.lookupByEmail({ email: "dave@pome-twin.slack.com" })).user.id, "U_DAVE");
assert.equal((await sl.users.info({ user: "U_CAROL" })).user.real_name, "Carol Danvers");
assert.equal((await sl.users.profile.get({ user: "U_ALICE" })).profile.title, "Engineering Manager");
await sl.users.profile.set({ profile: { status_text: "Shipping", status_emoji: ":ship:" } });
assert.equal((await sl.users.profile.get({})).profile.status_text, "Shipping");
await assert.rejects(sl.users.profile.set({ user: "U_BOB", profile: { title: "x" } }), slackError("not_admin"));
assert.equal((await sl.team.info()).team.domain, "pome-twin");
assert.equal((await sl.emoji.list()).emoji.ship, "alias:shipit");

// ---- search.messages: only what the bot may see
const s1 = await sl.search.messages({ query: "staging in:#engineering" });
assert.deepEqual(s1.messages.matches.map((m) => m.text),
  ["Rotating the staging certificates", "Smoke tests passed on staging", "Deploy to staging done"]);
assert.ok(s1.messages.matches.every((m) => m.channel.id === "C_ENGINEERING" && m.permalink.startsWith("https://pome-twin.slack.com/archives/")));
const s2 = await sl.search.messages({ query: "from:<@U_DAVE> checkout" });
assert.deepEqual(s2.messages.matches.map((m) => m.channel.name), ["incidents"], "a private channel the bot is in");
assert.equal((await sl.search.messages({ query: "confidential" })).messages.total, 0, "#leadership is invisible");
assert.equal((await sl.search.messages({ query: "mockups" })).messages.total, 1, "public channels the bot left are searchable");
await assert.rejects(sl.search.messages({ query: "" }), slackError("no_query"));
// Slack's modifiers, phrases, exclusions, sorting and both paginations
const texts = (res) => res.messages.matches.map((m) => m.text);
await sl.chat.postMessage({ channel: "C_ENGINEERING", text: "Staging runbook: <https://example.com/runbook>" });
assert.deepEqual(texts(await sl.search.messages({ query: "staging has:link" })), ["Staging runbook: <https://example.com/runbook>"]);
assert.deepEqual(texts(await sl.search.messages({ query: "\"staging done\"" })), ["Deploy to staging done"]);
assert.deepEqual(texts(await sl.search.messages({ query: "staging -deploy -rotating -has:link in:<#C_ENGINEERING|engineering>" })), ["Smoke tests passed on staging"]);
assert.deepEqual(texts(await sl.search.messages({ query: "from:@carol has:reaction", sort: "timestamp" })), ["Deploy to staging done", "Tacos!"]);
assert.deepEqual(texts(await sl.search.messages({ query: "has::taco:" })), ["Tacos!"]);
assert.deepEqual(texts(await sl.search.messages({ query: "is:thread in:#engineering before:2024-01-01", sort: "timestamp", sort_dir: "asc" })),
  ["Deploy to staging done", "Smoke tests passed on staging", "Great, promoting to prod after lunch"]);
assert.deepEqual(texts(await sl.search.messages({ query: "staging before:2023-11-15 after:2023-11-13", sort: "timestamp" })),
  ["Rotating the staging certificates", "Smoke tests passed on staging", "Deploy to staging done"]);
assert.equal((await sl.search.messages({ query: "staging on:2023-11-14 during:2023-11" })).messages.total, 3);
const today = new Date().toISOString().slice(0, 10);
assert.deepEqual(texts(await sl.search.messages({ query: `staging on:${today}` })), ["Staging runbook: <https://example.com/runbook>"]);
const byPage = await sl.search.messages({ query: "in:#engineering", count: 20, page: 2, sort: "timestamp" });
assert.equal(byPage.messages.paging.pages, byPage.messages.paging.total > 20 ? 2 : 1);
const walked = [];
for await (const page of sl.paginate("search.messages", { query: "in:#engineering", sort: "timestamp", limit: 20 }))
  walked.push(...texts(page));
assert.equal(walked.length, byPage.messages.total, "the SDK's cursor walk sees every match once");
assert.deepEqual(walked.slice(20), texts(byPage), "page 2 by page/count is the cursor's second page");

// ---- files: the SDK's uploadV2 flow, files.upload, info, list, delete
const up = await sl.filesUploadV2({ channel_id: "C_ENGINEERING", content: "p99 latency: 120ms\n", filename: "report.txt", title: "Latency report", initial_comment: "Weekly numbers" });
const fileId = up.files[0].files[0].id;
const info = await sl.files.info({ file: fileId });
assert.equal(info.file.title, "Latency report");
assert.equal(info.content, "p99 latency: 120ms\n");
assert.deepEqual(info.file.channels, ["C_ENGINEERING"]);
const shared = (await sl.conversations.history({ channel: "C_ENGINEERING", limit: 1 })).messages[0];
assert.equal(shared.text, "Weekly numbers");
assert.equal(shared.files[0].id, fileId);
const bin = await sl.filesUploadV2({ channel_id: "C_ENGINEERING", file: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 255]), filename: "pixel.png" });
const binInfo = await sl.files.info({ file: bin.files[0].files[0].id });
assert.equal(binInfo.content_base64, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 255]).toString("base64"), "bytes kept, not as text");
assert.equal(binInfo.file.size, 7);
// the upload_url is pre-signed, as Slack's: the bytes go to it with no Authorization (as
// slack_sdk's files_upload_v2 sends them); its token opens nothing else, and the URL
// without it is the twin's 401
const pre = await sl.files.getUploadURLExternal({ filename: "plain.txt", length: 6 });
const upTok = new URL(pre.upload_url).searchParams.get("token");
assert.match(upTok, /^xoxu-pome-/);
const bare = await fetch(pre.upload_url, { method: "POST", body: "plain\n" });
assert.equal(bare.status, 200, await bare.clone().text());
assert.equal((await bare.json()).ok, true);
assert.equal((await fetch(pre.upload_url.replace(/\?.*$/, ""), { method: "POST", body: "x" })).status, 401);
assert.equal((await fetch(`${restUrl}/chat.postMessage?token=${upTok}&channel=C_GENERAL&text=x`, { method: "POST" })).status, 404,
  "the upload token posts no message");
await sl.files.completeUploadExternal({ files: JSON.stringify([{ id: pre.file_id }]) });
assert.equal((await sl.files.info({ file: pre.file_id })).content, "plain\n");
const v1 = await sl.apiCall("files.upload", { content: "a,b\n1,2\n", filename: "data.csv", channels: "C_RANDOM" });
assert.equal(v1.file.filetype, "csv");
await assert.rejects(sl.apiCall("files.upload", { content: "x", channels: "C_DESIGN" }), slackError("not_in_channel"));
// files.upload with a Buffer: the SDK sends multipart/form-data (the file as a part)
const bytes = Buffer.from([0x25, 0x50, 0x44, 0x46, 0, 0x0d, 0x0a, 0x2d, 0x2d, 0xff]);
const v1bin = await sl.files.upload({ channels: "C_RANDOM", file: bytes, filename: "doc.pdf", title: "A PDF", initial_comment: "the scan" });
assert.equal(v1bin.file.filetype, "pdf");
assert.equal(v1bin.file.size, bytes.length);
assert.equal(v1bin.file.title, "A PDF");
const v1info = await sl.files.info({ file: v1bin.file.id });
assert.equal(v1info.content_base64, bytes.toString("base64"), "every byte, NUL and CRLF--included");
const v1text = await sl.files.upload({ channels: "C_RANDOM", file: Buffer.from("plain text\n"), filename: "t.txt" });
assert.equal((await sl.files.info({ file: v1text.file.id })).content, "plain text\n");
assert.equal((await sl.conversations.history({ channel: "C_RANDOM", limit: 2 })).messages[1].text, "the scan");
await assert.rejects(sl.files.upload({ channels: "C_DESIGN", file: bytes, filename: "x.bin" }), slackError("not_in_channel"));
// a malformed multipart body: invalid_form_data, and the tape shows file parts without bytes
const badForm = await fetch(`${restUrl}/files.upload`, {
  method: "POST",
  headers: { authorization: `Bearer ${sb.session_token}`, "content-type": "multipart/form-data; boundary=b" },
  body: "--b\r\nContent-Disposition: form-data; name=content\n\nx\r\n--b--\r\n",
}).then((x) => x.json());
assert.deepEqual(badForm, { ok: false, error: "invalid_form_data" });
const files = await sl.files.list({ channel: "C_ENGINEERING" });
assert.deepEqual(files.files.map((f) => f.id), [bin.files[0].files[0].id, fileId]);
await sl.files.delete({ file: v1.file.id });
await assert.rejects(sl.files.info({ file: v1.file.id }), slackError("file_not_found"));

// ---- canvases
const cv = await sl.canvases.create({ title: "Launch plan", document_content: { type: "markdown", markdown: "# Launch plan\n" } });
await sl.canvases.edit({ canvas_id: cv.canvas_id, changes: [{ operation: "insert_at_end", document_content: { type: "markdown", markdown: "- [ ] announce in #general\n" } }] });
const secs = await sl.canvases.sections.lookup({ canvas_id: cv.canvas_id, criteria: { contains_text: "announce" } });
assert.equal(secs.sections.length, 1);
await sl.canvases.edit({ canvas_id: cv.canvas_id, changes: [{ operation: "replace", section_id: secs.sections[0].id, document_content: { type: "markdown", markdown: "- [x] announced\n" } }] });
assert.equal((await sl.files.info({ file: cv.canvas_id })).content, "# Launch plan\n\n- [x] announced\n");
await sl.canvases.delete({ canvas_id: cv.canvas_id });
await assert.rejects(sl.canvases.edit({ canvas_id: cv.canvas_id, changes: [{ operation: "insert_at_end", document_content: { type: "markdown", markdown: "x" } }] }), slackError("canvas_not_found"));
await assert.rejects(sl.files.info({ file: cv.canvas_id }), slackError("file_not_found"));

// ---- every method as GET + query and as a JSON body too
const viaGet = await get(`${restUrl}/conversations.info?channel=C_GENERAL`, sb.session_token);
assert.equal(viaGet.channel.name, "general");
const viaJson = await fetch(`${restUrl}/api/chat.postMessage`, {
  method: "POST",
  headers: { authorization: `Bearer ${sb.session_token}`, "content-type": "application/json" },
  body: JSON.stringify({ channel: "C_GENERAL", text: "json body" }),
}).then((x) => x.json());
assert.equal(viaJson.ok, true);

// ---- the tape: REST methods stamp the MCP tool doing the same thing
const tape = await get(`${restUrl}/_pome/events`, sb.session_token);
const toolOf = (frag) => tape.find((row) => row.path.endsWith(frag))?.tool;
assert.equal(toolOf("/chat.postMessage"), "slack_send_message");
assert.equal(toolOf("/conversations.history"), "slack_read_channel");
assert.equal(toolOf("/conversations.replies"), "slack_read_thread");
assert.equal(toolOf("/reactions.add"), "slack_add_reaction");
assert.equal(toolOf("/conversations.create"), "slack_create_conversation");
assert.equal(toolOf("/canvases.create"), "slack_create_canvas");
assert.equal(toolOf("/files.info"), "slack_read_file");
assert.equal(toolOf("/search.messages"), "slack_search_public_and_private");
const uploadRow = tape.find((row) => row.path.endsWith("/files.upload") && row.request_body?.filename === "doc.pdf");
assert.deepEqual(uploadRow.request_body.file, { filename: "Untitled", content_type: "application/octet-stream", size: bytes.length }, "the part, not its bytes");
assert.equal(uploadRow.tool, "slack_upload_file");
// each delivery is a row of its own, made by the twin (no caller), stamped with the tool
// whose call caused it, before the row of the call that found it due
const deliveries = tape.filter((row) => row.origin === "twin");
assert.deepEqual(deliveries.map((row) => row.response_body.message.text), ["Scheduled: standup notes", "Scheduled: in the thread"]);
assert.ok(deliveries.every((row) => row.tool === "slack_schedule_message" && row.state_mutation && row.path.endsWith("/chat.scheduleMessage")));
const trigger = tape.findIndex((row) => row.event_id === deliveries[0].correlation_id);
assert.equal(tape[trigger].path.endsWith("/conversations.history"), true, "the call that found them due");
assert.ok(tape.indexOf(deliveries[1]) < trigger && tape.indexOf(deliveries[0]) < tape.indexOf(deliveries[1]));

// =====================================================================================
// 2. Every MCP tool, through the official MCP SDK, on the same sandbox
// =====================================================================================
const mcp = await mcpClient(mcpUrl, sb.session_token);
const { tools } = await mcp.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(), [
  "finalize_run", // pomed's, on every twin of a sandbox (test-finalize-run.mjs)
  "slack_add_reaction", "slack_create_canvas", "slack_create_conversation", "slack_get_reactions",
  "slack_list_channel_members", "slack_read_canvas", "slack_read_channel", "slack_read_file",
  "slack_read_thread", "slack_read_user_profile", "slack_schedule_message", "slack_search_channels",
  "slack_search_emojis", "slack_search_public", "slack_search_public_and_private", "slack_search_users",
  "slack_send_message", "slack_update_canvas",
]);
const sent = await tool(mcp, "slack_send_message", { channel_id: "C_GENERAL", message: "Standup in 5" });
await tool(mcp, "slack_send_message", { channel_id: "C_GENERAL", message: "ok", thread_ts: sent.ts });
await tool(mcp, "slack_send_message", { channel_id: "C_DESIGN", message: "x" }, { error: "not_in_channel" });
await tool(mcp, "slack_schedule_message", { channel_id: "C_GENERAL", message: "later", post_at: postAt });
await tool(mcp, "slack_add_reaction", { channel_id: "C_GENERAL", message_ts: sent.ts, emoji: "white_check_mark" });
const got = await tool(mcp, "slack_get_reactions", { channel_id: "C_GENERAL", message_ts: sent.ts });
assert.equal(got.message.reactions[0].name, "white_check_mark");
const conv = await tool(mcp, "slack_create_conversation", { channel_name: "ops-review", user_ids: ["U_DAVE"] });
assert.equal(conv.channel.num_members, 2);
const read = await tool(mcp, "slack_read_channel", { channel_id: "C_GENERAL", limit: 2 });
assert.equal(read.messages[0].text, "Standup in 5");
await tool(mcp, "slack_read_channel", { channel_id: "G_LEADERSHIP" }, { error: "channel_not_found" });
const th = await tool(mcp, "slack_read_thread", { channel_id: "C_GENERAL", message_ts: sent.ts });
assert.deepEqual(th.messages.map((m) => m.text), ["Standup in 5", "ok"]);
assert.equal((await tool(mcp, "slack_read_user_profile", { user_id: "U_BOB" })).profile.real_name, "Bob");
assert.equal((await tool(mcp, "slack_read_user_profile", {})).user_id, "U_PRIMARY");
const mem = await tool(mcp, "slack_list_channel_members", { channel_id: "C_ENGINEERING", limit: 2 });
assert.equal(mem.members.length, 2);
assert.ok(mem.response_metadata.next_cursor);
const chans = await tool(mcp, "slack_search_channels", { query: "incidents", channel_types: "public_channel,private_channel" });
assert.deepEqual(chans.channels.map((c) => c.id), ["G_INCIDENTS"]);
assert.equal((await tool(mcp, "slack_search_channels", { query: "leadership", channel_types: "private_channel" })).channels.length, 0);
const found = await tool(mcp, "slack_search_users", { query: "designer" });
assert.deepEqual(found.users.map((u) => u.id), ["U_CAROL"]);
const pubThreads = await tool(mcp, "slack_search_public", { query: "is:thread from:<@U_ALICE>", cursor: "*", limit: 1 });
assert.deepEqual(pubThreads.messages.matches.map((m) => m.text), ["Smoke tests passed on staging"], "not the private #incidents reply");
const pub = await tool(mcp, "slack_search_public", { query: "checkout" });
assert.equal(pub.messages.total, 0, "#incidents is private");
const priv = await tool(mcp, "slack_search_public_and_private", { query: "checkout" });
assert.equal(priv.messages.total, 1);
const emo = await tool(mcp, "slack_search_emojis", { query: "parrot" });
assert.deepEqual(emo.emojis.map((e) => e.name), ["partyparrot"]);
const rf = await tool(mcp, "slack_read_file", { file_id: fileId });
assert.equal(rf.content, "p99 latency: 120ms\n");
const made2 = await tool(mcp, "slack_create_canvas", { title: "Retro", content: "## Went well\n" });
await tool(mcp, "slack_update_canvas", { canvas_id: made2.canvas_id, action: "append", content: "## To improve\n" });
const rc = await tool(mcp, "slack_read_canvas", { canvas_id: made2.canvas_id });
assert.equal(rc.markdown, "## Went well\n\n## To improve\n");
await mcp.close();

// MCP and REST change the world the same way
const state = await get(`${restUrl}/_pome/state`, sb.session_token);
assert.ok(state.channels.find((c) => c.name === "ops-review").members.includes("U_DAVE"));
await discard(sb.session_id);

// =====================================================================================
// 3. Hosted Pome's task-seed format through a sandbox: a realistic flow, REST and MCP
// =====================================================================================
r = await control("POST", "/v1/sandboxes", { twins: ["slack"], seeds: { slack: "hosted-task" } });
assert.equal(r.status, 201, JSON.stringify(r.body));
const hs = r.body;
const hosted = slackClient(hs.session_token, hs.per_twin.slack.rest_url);
assert.equal((await hosted.auth.test()).user_id, "U_PRIMARY", "the agent is the seed's U_PRIMARY");
const report = (await hosted.conversations.history({ channel: "C_SECPRIV" })).messages[0];
assert.match(report.text, /world-readable/);
await assert.rejects(hosted.conversations.history({ channel: "C_XFILES" }), slackError("channel_not_found"));
const summary = await hosted.chat.postMessage({ channel: "C_GENERAL", text: "A security report came in; Dana is on it." });
await hosted.reactions.add({ channel: "C_SECPRIV", timestamp: report.ts, name: "white_check_mark" });
const hmcp = await mcpClient(hs.per_twin.slack.mcp_url ?? `${hs.per_twin.slack.rest_url}/mcp`, hs.session_token);
assert.equal((await tool(hmcp, "slack_search_public", { query: "bucket" })).messages.total, 0);
assert.equal((await tool(hmcp, "slack_search_public_and_private", { query: "bucket" })).messages.total, 1);
await tool(hmcp, "slack_read_channel", { channel_id: "C_XFILES" }, { error: "channel_not_found" });
const hthread = await tool(hmcp, "slack_read_thread", { channel_id: "C_GENERAL", message_ts: "1700000100.000100" });
assert.deepEqual(hthread.messages.map((m) => m.user), ["U_DANA", "U_MULDER"]);
await tool(hmcp, "slack_send_message", { channel_id: "C_SECPRIV", message: "Posted a heads-up in #general", thread_ts: report.ts });
await hmcp.close();
const hstate = await get(`${hs.per_twin.slack.rest_url}/_pome/state`, hs.session_token);
const gen = hstate.channels.find((c) => c.id === "C_GENERAL");
assert.ok(gen.messages.some((m) => m.ts === summary.ts && m.user === "U_PRIMARY"));
await discard(hs.session_id);

// =====================================================================================
// 4. The same file through `pome twin start --seed FILE`
// =====================================================================================
const pome = `${process.env.POME_BUILD_DIR}/cli/pome`;
const seedFile = `${process.env.POME_SOURCE_DIR}/sandbox-images/slack/seeds/hosted-task.json`;
const child = spawn(pome, ["twin", "start", "slack", "--port", "0", "--seed", seedFile], { stdio: ["ignore", "pipe", "pipe"] });
try {
  const out = await new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`pome twin start: no banner: ${buf}`)), 5000);
    child.stdout.on("data", (d) => {
      buf += d;
      if (/^\s+token\s+\S+/m.test(buf) && /rest_url/.test(buf)) {
        clearTimeout(timer);
        resolve(buf);
      }
    });
    child.on("exit", (code) => reject(new Error(`pome twin start exited ${code}: ${buf}`)));
  });
  const localRest = out.match(/rest_url\s+(\S+)/)[1];
  const localToken = out.match(/^\s+token\s+(\S+)/m)[1];
  const local = slackClient(localToken, localRest);
  assert.equal((await local.auth.test()).team_id, "T_ACME");
  const lc = await local.conversations.list({ types: "public_channel,private_channel" });
  assert.deepEqual(lc.channels.map((c) => c.id), ["C_GENERAL", "C_SECPRIV"]);
  // uploads through the local twin's own HTTP front: v2 (bytes to its upload_url) and v1 multipart
  const lup = await local.filesUploadV2({ channel_id: "C_GENERAL", file: Buffer.from([1, 0, 2, 13, 10]), filename: "x.bin" });
  assert.equal((await local.files.info({ file: lup.files[0].files[0].id })).content_base64, "AQACDQo=");
  const lv1 = await local.files.upload({ channels: "C_GENERAL", file: Buffer.from("local v1\n"), filename: "v1.txt" });
  assert.equal((await local.files.info({ file: lv1.file.id })).content, "local v1\n");
  const lm = await mcpClient(`${localRest}/mcp`, localToken);
  assert.equal((await tool(lm, "slack_read_user_profile", { user_id: "U_DANA" })).profile.real_name, "Dana Scully");
  await lm.close();
} finally {
  child.kill("SIGTERM");
}

// =====================================================================================
// 5. A scheduled message due when the run is finalized, with no call after post_at: it is
//    in the final state and on the tape all the same
// =====================================================================================
{
  const { readFileSync } = await import("node:fs");
  r = await control("POST", "/v1/sandboxes", { twins: ["slack"] });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const fs5 = r.body;
  const c5 = slackClient(fs5.session_token, fs5.per_twin.slack.rest_url);
  const at = Math.floor(Date.now() / 1000) + 2;
  const q = await c5.chat.scheduleMessage({ channel: "C_GENERAL", text: "Due at the end", post_at: at });
  await new Promise((resolve) => setTimeout(resolve, (at + 1) * 1000 - Date.now()));
  const fin = await control("POST", `/v1/sandboxes/${fs5.session_id}/finalize`);
  assert.ok(fin.status < 300, JSON.stringify(fin.body));
  const run = `${process.env.POME_STATE_DIR}/runs/${fs5.session_id}`;
  const final = JSON.parse(readFileSync(`${run}/slack.final.json`, "utf8"));
  const general = final.channels.find((c) => c.id === "C_GENERAL");
  assert.ok(general.messages.some((m) => m.text === "Due at the end"), "delivered into the final state");
  assert.equal((final.scheduled ?? []).length, 0);
  const rows = readFileSync(`${run}/slack.tape.jsonl`, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const last = rows[rows.length - 1];
  assert.equal(last.origin, "twin");
  assert.equal(last.tool, "slack_schedule_message");
  assert.equal(last.response_body.scheduled_message_id, q.scheduled_message_id);
  assert.equal(last.path, `/slack/s/${fs5.session_id}/chat.scheduleMessage`);
}

console.log("conformance: slack web-api + MCP SDK, default and hosted-format seeds passed");
