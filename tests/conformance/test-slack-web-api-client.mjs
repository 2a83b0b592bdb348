// slack-web-api-client (npm; a fetch-based Slack client independent of Slack's own SDK),
// unmodified, over a realistic flow through a real sandbox: auth, conversations, members,
// users, posts, threads, reactions, pins, bookmarks, edits, ephemeral messages, marks, topics,
// a new channel with an invite, search, team info and a delete — each answer as slack.com
// gives it, each change on the tape with its tool.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { SlackAPIClient } from "slack-web-api-client";
import { control, discard } from "./lib.mjs";

let r = await control("POST", "/v1/sandboxes", { twins: ["slack"] });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const restUrl = sb.per_twin.slack.rest_url;
const client = new SlackAPIClient(sb.provider_credentials.slack.token, {
  baseUrl: restUrl + "/api/", logLevel: "ERROR",
});

const auth = await client.auth.test();
assert.equal(auth.ok, true);
assert.equal(auth.user_id, "U_PRIMARY");
const list = await client.conversations.list({ limit: 100 });
const general = list.channels.find((c) => c.name === "general").id;
assert.equal((await client.conversations.info({ channel: general })).channel.name, "general");
assert.ok((await client.conversations.members({ channel: general })).members.includes("U_ALICE"));
assert.equal((await client.users.info({ user: "U_ALICE" })).user.real_name, "Alice");
assert.equal((await client.users.lookupByEmail({ email: "alice@pome-twin.slack.com" })).user.id, "U_ALICE");
const post = await client.chat.postMessage({ channel: general, text: "from slack-web-api-client" });
assert.equal(post.message.text, "from slack-web-api-client");
const reply = await client.chat.postMessage({ channel: general, text: "a reply", thread_ts: post.ts });
assert.equal(reply.message.thread_ts, post.ts);
assert.equal((await client.conversations.replies({ channel: general, ts: post.ts })).messages.length, 2);
await client.reactions.add({ channel: general, timestamp: post.ts, name: "eyes" });
assert.equal((await client.reactions.get({ channel: general, timestamp: post.ts })).message.reactions[0].name, "eyes");
await client.pins.add({ channel: general, timestamp: post.ts });
assert.equal((await client.pins.list({ channel: general })).items.length, 1);
const bookmark = await client.bookmarks.add({ channel_id: general, title: "Docs", type: "link", link: "https://example.com" });
assert.equal(bookmark.bookmark.title, "Docs");
assert.equal((await client.chat.update({ channel: general, ts: post.ts, text: "edited" })).text, "edited");
assert.ok((await client.chat.postEphemeral({ channel: general, user: "U_ALICE", text: "psst" })).message_ts);
await client.conversations.mark({ channel: general, ts: post.ts });
assert.equal((await client.conversations.setTopic({ channel: general, topic: "web-api-client" })).channel.topic.value, "web-api-client");
const room = await client.conversations.create({ name: "wac-room" });
await client.conversations.invite({ channel: room.channel.id, users: "U_ALICE" });
assert.equal((await client.conversations.info({ channel: room.channel.id })).channel.num_members, 2);
// search.messages takes Slack's user token (xoxp-), and refuses the bot token
const asUser = new SlackAPIClient(sb.provider_credentials.slack.user_token, { baseUrl: restUrl + "/api/", logLevel: "ERROR" });
assert.ok((await asUser.search.messages({ query: "reply" })).messages.total >= 1);
await assert.rejects(client.search.messages({ query: "reply" }), (e) => e.error === "not_allowed_token_type");
assert.equal((await client.team.info()).team.id, auth.team_id);
await client.chat.delete({ channel: general, ts: reply.ts });
await assert.rejects(client.chat.postMessage({ channel: "C0NOPE0000", text: "x" }), (e) => e.error === "channel_not_found");
console.log("ok: 25 calls of slack-web-api-client as on slack.com");

const res = await fetch(`${restUrl}/_pome/events`, { headers: { authorization: `Bearer ${sb.session_token}` } });
const tape = await res.json();
const changed = new Set(tape.filter((x) => x.state_mutation).map((x) => x.tool));
for (const tool of ["slack_send_message", "slack_add_reaction", "slack_add_pin", "slack_add_bookmark", "slack_edit_message",
  "slack_post_ephemeral", "slack_mark_conversation", "slack_set_conversation_topic", "slack_create_conversation",
  "slack_invite_to_conversation", "slack_delete_message"])
  assert.ok(changed.has(tool), `the tape has a ${tool} change`);
console.log("ok: every change on the tape with its tool");
await discard(sb.session_id);
