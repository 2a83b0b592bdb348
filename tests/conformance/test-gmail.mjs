// The Gmail twin driven the way agents drive Gmail: Google's official, unmodified
// `googleapis` Node client (google.gmail v1, an OAuth2 client holding the sandbox's ya29.
// access token) through a real sandbox, over a realistic day in an inbox: read it (list,
// threads, every get format), search it with Gmail's operators, label it (system and user
// labels and their counts, modify, batchModify), reply in a thread, draft and send with an
// attachment, the media-upload forms googleapis uses when given `media:`, trash/untrash,
// the history of it all, Google's error envelope — and the sandbox's tape, a row per change.
// Expectations are Gmail's as documented (developers.google.com/gmail/api/reference/rest),
// computed from the seed below, never read back from the twin.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
//
// googleapis and rootUrl: a rootUrl given to google.gmail({…}) keeps only its origin (the
// client rewrites every JSON URL to new URL(path, rootUrl), googleapis-common apirequest.js)
// and is not used at all for media uploads (mediaUrl takes only the per-call options), so
// the sandbox's path is passed per call, as MethodOptions ({rootUrl}); section 10 is the
// global form an agent writes, which reaches the twin because the gateway routes
// "/gmail/v1/…" by the ya29. token (as it does Stripe's "/v1/…").
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { google } from "googleapis";
import { control, discard } from "./lib.mjs";

const src = process.env.POME_SOURCE_DIR;
const ME = "pome-agent@pome-twin.test";

// ---- sections run in turn; a failing one is reported and the rest still run
const failures = [];
async function section(name, fn) {
  try {
    await fn();
    console.log(`ok: ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL: ${name}\n  ${(e.stack ?? String(e)).split("\n").slice(0, 6).join("\n  ")}`);
    if (e.response?.data !== undefined)
      console.log(`  response: ${e.response.status} ${JSON.stringify(e.response.data).slice(0, 600)}`);
    if (e.config?.url) console.log(`  request: ${e.config.method} ${e.config.url}`);
  }
}

// ---- the seed: hosted Pome's Gmail seed format, dates relative to now so that
// newer_than: means the same whether the twin's clock is the seed's or the host's
const now = Math.floor(Date.now() / 1000) * 1000;
const ago = (days, hours = 0) => new Date(now - days * 86400e3 - hours * 3600e3).toISOString();
const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x34, 0x0a, ...Array.from({ length: 300 }, (_, i) => (i * 37) & 0xff)]);
const seed = {
  primaryMailbox: {
    email: ME,
    displayName: "Pome Agent",
    labels: [
      { id: "Label_customers", name: "Customers" },
      { id: "Label_receipts", name: "Receipts" },
    ],
    messages: [
      {
        id: "msg_invoice", threadId: "thread_invoice", from: "billing@vendor.example", to: [ME],
        subject: "Invoice INV-2041 for November", text: "Please find invoice INV-2041 attached. Amount due: 1250.00 USD.",
        date: ago(1), messageId: "inv-2041@vendor.example", labels: ["INBOX", "UNREAD", "Receipts"],
        attachments: [{ filename: "INV-2041.pdf", mimeType: "application/pdf", data: pdf.toString("base64") }],
      },
      {
        id: "msg_outage", threadId: "thread_outage", from: "alice@customer.example", to: [ME],
        subject: "Checkout is down for our EU users", text: "Since 09:00 CET every checkout returns a 502. Can you look?",
        date: ago(0, 3), messageId: "outage-1@customer.example", labels: ["INBOX", "UNREAD", "IMPORTANT", "Customers"],
      },
      {
        id: "msg_outage_2", threadId: "thread_outage", from: "bob@customer.example", to: [ME], cc: ["alice@customer.example"],
        subject: "Re: Checkout is down for our EU users", text: "Adding to this: it started right after the 08:55 deploy.",
        date: ago(0, 2), messageId: "outage-2@customer.example", inReplyTo: "outage-1@customer.example",
        references: ["outage-1@customer.example"], labels: ["INBOX", "UNREAD", "Customers"],
      },
      {
        id: "msg_starred", threadId: "thread_starred", from: "carol@partner.example", to: [ME],
        subject: "Contract draft v3", text: "Here is v3 with the indemnity clause reworded.",
        date: ago(3), messageId: "contract-3@partner.example", labels: ["INBOX", "STARRED"],
      },
      {
        id: "msg_sent", threadId: "thread_sent", from: ME, to: ["carol@partner.example"],
        subject: "Quarterly review", text: "Can we move the quarterly review to Thursday?",
        date: ago(5), messageId: "qr-1@pome-twin.test", labels: ["SENT"],
      },
      {
        id: "msg_newsletter", threadId: "thread_newsletter", from: "news@weekly.example", to: [ME],
        subject: "This week in databases", text: "Postgres 18 ships async IO and a faster vacuum.",
        date: ago(10), messageId: "news-88@weekly.example", labels: ["INBOX", "CATEGORY_PROMOTIONS"],
      },
      {
        id: "msg_old_receipt", threadId: "thread_old_receipt", from: "billing@vendor.example", to: [ME],
        subject: "Receipt for October", text: "Thanks for your payment of 1250.00 USD.",
        date: ago(40), messageId: "rcpt-10@vendor.example", labels: ["Receipts"],
      },
    ],
  },
  clock: new Date(now).toISOString(),
};
const byDateDesc = ["msg_outage_2", "msg_outage", "msg_invoice", "msg_starred", "msg_sent", "msg_newsletter", "msg_old_receipt"];
const inbox = byDateDesc.filter((id) => seed.primaryMailbox.messages.find((m) => m.id === id).labels.includes("INBOX"));

// ---- helpers
const b64url = (s) => Buffer.from(s).toString("base64url");
const unb64 = (s) => Buffer.from(s, "base64url");
const header = (part, name) => part?.headers?.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value;
const sorted = (xs) => [...xs].sort();
const ids = (list) => (list ?? []).map((m) => m.id);

// An RFC 5322 message, CRLF line ends.
function rfc822(headers, body) {
  return [...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", body].join("\r\n");
}
function withAttachment(headers, text, file) {
  const boundary = "pome_boundary_7d1f";
  const b64 = file.bytes.toString("base64").replace(/.{76}/g, "$&\r\n");
  return rfc822({ ...headers, "MIME-Version": "1.0", "Content-Type": `multipart/mixed; boundary="${boundary}"` }, [
    `--${boundary}`,
    'Content-Type: text/plain; charset="UTF-8"',
    "",
    text,
    `--${boundary}`,
    `Content-Type: ${file.mimeType}; name="${file.filename}"`,
    `Content-Disposition: attachment; filename="${file.filename}"`,
    "Content-Transfer-Encoding: base64",
    "",
    b64,
    `--${boundary}--`,
    "",
  ].join("\r\n"));
}

// The text of a message's first text/plain part.
function plainText(payload) {
  if (!payload) return undefined;
  if (payload.mimeType === "text/plain" && payload.body?.data) return unb64(payload.body.data).toString("utf8");
  for (const p of payload.parts ?? []) {
    const t = plainText(p);
    if (t !== undefined) return t;
  }
  return undefined;
}
function attachmentParts(payload, out = []) {
  if (!payload) return out;
  if (payload.filename) out.push(payload);
  for (const p of payload.parts ?? []) attachmentParts(p, out);
  return out;
}

// The tool the twin's surface names for a route (pods/gmail/surface.json).
const surface = JSON.parse(readFileSync(`${src}/pods/gmail/surface.json`, "utf8"));
function surfaceTool(method, path) {
  for (const [m, tmpl, tool] of surface.routes) {
    const re = new RegExp("^" + tmpl.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+") + "$");
    if (m === method && re.test(path)) return tool;
  }
  return undefined;
}
// A tape row's path below the sandbox's mount, without its query.
const below = (p) => p.replace(/^\/gmail\/s\/[^/]+/, "").split("?")[0];

async function sandbox(seeds) {
  const r = await control("POST", "/v1/sandboxes", { twins: ["gmail"], ...(seeds ? { seeds: { gmail: seeds } } : {}) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const sb = r.body;
  const token = sb.provider_credentials.gmail.token;
  assert.match(token, /^ya29\./, "a Google OAuth 2.0 access token's shape");
  const auth = new google.auth.OAuth2();
  auth.setCredentials({ access_token: token });
  const gmail = google.gmail({ version: "v1", auth });
  const restUrl = sb.per_twin.gmail.rest_url;
  return { sb, token, auth, gmail, restUrl, at: { rootUrl: restUrl + "/" } };
}

// =====================================================================================
// The seeded mailbox
// =====================================================================================
const { sb, gmail, restUrl, at, token } = await sandbox(seed);
const userId = "me";
let startHistoryId;
const made = {}; // ids the flow creates, for the later sections

await section("users.getProfile: the address, the counts and a historyId", async () => {
  const { data } = await gmail.users.getProfile({ userId }, at);
  assert.equal(data.emailAddress, ME);
  assert.equal(data.messagesTotal, 7);
  assert.equal(data.threadsTotal, 6);
  assert.match(String(data.historyId), /^\d+$/);
  startHistoryId = String(data.historyId);
  // userId may be the address itself
  assert.equal((await gmail.users.getProfile({ userId: ME }, at)).data.emailAddress, ME);
});

// =====================================================================================
// 1. Read the inbox
// =====================================================================================
await section("messages.list labelIds=INBOX: newest first, pages by pageToken", async () => {
  const all = (await gmail.users.messages.list({ userId, labelIds: ["INBOX"] }, at)).data;
  assert.deepEqual(ids(all.messages), inbox);
  assert.equal(all.resultSizeEstimate, inbox.length);
  assert.equal(all.nextPageToken, undefined);
  for (const m of all.messages) assert.equal(m.threadId, seed.primaryMailbox.messages.find((x) => x.id === m.id).threadId);
  const seen = [];
  let pageToken, pages = 0;
  do {
    const page = (await gmail.users.messages.list({ userId, labelIds: ["INBOX"], maxResults: 2, pageToken }, at)).data;
    assert.ok(page.messages.length <= 2);
    seen.push(...ids(page.messages));
    pageToken = page.nextPageToken;
    pages++;
  } while (pageToken);
  assert.deepEqual(seen, inbox);
  assert.equal(pages, 3);
  // no labelIds: all mail but spam and trash
  assert.deepEqual(ids((await gmail.users.messages.list({ userId }, at)).data.messages), byDateDesc);
  // two labelIds: messages with both
  assert.deepEqual(ids((await gmail.users.messages.list({ userId, labelIds: ["INBOX", "UNREAD"] }, at)).data.messages),
    ["msg_outage_2", "msg_outage", "msg_invoice"]);
});

await section("threads.list and threads.get: a conversation, oldest message first", async () => {
  const { data } = await gmail.users.threads.list({ userId, labelIds: ["INBOX"] }, at);
  assert.deepEqual(ids(data.threads), ["thread_outage", "thread_invoice", "thread_starred", "thread_newsletter"]);
  assert.ok(data.threads.every((t) => typeof t.snippet === "string" && /^\d+$/.test(String(t.historyId))));
  const t = (await gmail.users.threads.get({ userId, id: "thread_outage" }, at)).data;
  assert.equal(t.id, "thread_outage");
  assert.deepEqual(ids(t.messages), ["msg_outage", "msg_outage_2"]);
  assert.equal(header(t.messages[1].payload, "From"), "bob@customer.example");
  // a seeded message's raw is the twin's making: its one-part body may end in the CRLF MIME ends lines with
  assert.equal(plainText(t.messages[1].payload).replace(/\r\n$/, ""), "Adding to this: it started right after the 08:55 deploy.");
});

await section("messages.get format=full: payload, parts, headers, snippet, dates", async () => {
  const m = (await gmail.users.messages.get({ userId, id: "msg_invoice", format: "full" }, at)).data;
  assert.equal(m.id, "msg_invoice");
  assert.equal(m.threadId, "thread_invoice");
  assert.deepEqual(sorted(m.labelIds), sorted(["INBOX", "UNREAD", "Label_receipts"]));
  assert.equal(m.internalDate, String(Date.parse(seed.primaryMailbox.messages[0].date)));
  assert.ok(Number.isInteger(m.sizeEstimate) && m.sizeEstimate > pdf.length);
  assert.match(String(m.historyId), /^\d+$/);
  assert.ok(m.snippet.startsWith("Please find invoice INV-2041 attached."), m.snippet);
  assert.equal(m.payload.partId, "");
  assert.equal(m.payload.mimeType, "multipart/mixed");
  assert.equal(header(m.payload, "Subject"), "Invoice INV-2041 for November");
  assert.equal(header(m.payload, "From"), "billing@vendor.example");
  assert.equal(header(m.payload, "To"), ME);
  assert.match(header(m.payload, "Message-ID") ?? header(m.payload, "Message-Id"), /inv-2041@vendor\.example/);
  assert.equal(plainText(m.payload), "Please find invoice INV-2041 attached. Amount due: 1250.00 USD.");
  const [att] = attachmentParts(m.payload);
  assert.equal(att.filename, "INV-2041.pdf");
  assert.equal(att.mimeType, "application/pdf");
  assert.equal(att.body.size, pdf.length);
  assert.ok(att.body.attachmentId, "an attachment's bytes are behind an attachmentId");
  assert.equal(att.body.data, undefined);
  const a = (await gmail.users.messages.attachments.get({ userId, messageId: "msg_invoice", id: att.body.attachmentId }, at)).data;
  assert.equal(a.size, pdf.length);
  assert.deepEqual(unb64(a.data), pdf);
});

await section("messages.get format=metadata (metadataHeaders), minimal and raw", async () => {
  const meta = (await gmail.users.messages.get({ userId, id: "msg_outage_2", format: "metadata", metadataHeaders: ["From", "Subject"] }, at)).data;
  assert.deepEqual(sorted(meta.payload.headers.map((h) => h.name)), ["From", "Subject"]);
  assert.equal(header(meta.payload, "Subject"), "Re: Checkout is down for our EU users");
  assert.equal(meta.payload.body?.data, undefined, "metadata has no body");
  assert.equal(plainText(meta.payload), undefined);
  assert.deepEqual(sorted(meta.labelIds), sorted(["INBOX", "UNREAD", "Label_customers"]));
  const min = (await gmail.users.messages.get({ userId, id: "msg_outage_2", format: "minimal" }, at)).data;
  assert.equal(min.payload, undefined, "minimal has no payload");
  assert.equal(min.threadId, "thread_outage");
  assert.ok(min.labelIds.includes("UNREAD") && typeof min.snippet === "string" && min.sizeEstimate > 0);
  const raw = (await gmail.users.messages.get({ userId, id: "msg_outage_2", format: "raw" }, at)).data;
  assert.equal(raw.payload, undefined);
  assert.match(raw.raw, /^[A-Za-z0-9_-]+=*$/, "raw is base64url");
  const text = unb64(raw.raw).toString("utf8");
  assert.match(text, /^Subject: Re: Checkout is down for our EU users\r?$/m);
  assert.match(text, /^In-Reply-To: <outage-1@customer\.example>\r?$/m);
  assert.match(text, /it started right after the 08:55 deploy/);
});

// =====================================================================================
// 2. Search with Gmail's operators
// =====================================================================================
await section("messages.list q: from:, is:, subject:, has:attachment, label:, in:, -, OR, quotes, newer_than:", async () => {
  const q = async (query, extra = {}) => ids((await gmail.users.messages.list({ userId, q: query, ...extra }, at)).data.messages);
  const cases = [
    ["from:billing@vendor.example", ["msg_invoice", "msg_old_receipt"]],
    ["is:unread", ["msg_outage_2", "msg_outage", "msg_invoice"]],
    ["is:starred", ["msg_starred"]],
    ["is:important", ["msg_outage"]],
    ["subject:checkout", ["msg_outage_2", "msg_outage"]],
    ["has:attachment", ["msg_invoice"]],
    ["label:receipts", ["msg_invoice", "msg_old_receipt"]],
    ["label:Customers is:unread", ["msg_outage_2", "msg_outage"]],
    ["in:sent", ["msg_sent"]],
    ["to:carol@partner.example", ["msg_sent"]],
    ["from:billing@vendor.example -in:inbox", ["msg_old_receipt"]],
    ["is:unread -from:alice@customer.example", ["msg_outage_2", "msg_invoice"]],
    ["from:alice@customer.example OR from:carol@partner.example", ["msg_outage", "msg_starred"]],
    ['"async IO"', ["msg_newsletter"]],
    ['subject:"contract draft"', ["msg_starred"]],
    ["newer_than:2d", ["msg_outage_2", "msg_outage", "msg_invoice"]],
    ["older_than:30d", ["msg_old_receipt"]],
    ["is:unread newer_than:2d has:attachment", ["msg_invoice"]],
    ["INV-2041", ["msg_invoice"]],
    ["nothing-matches-this-zyx", []],
  ];
  for (const [query, want] of cases) assert.deepEqual(await q(query), want, `q=${query}`);
  assert.deepEqual(await q("from:billing@vendor.example", { labelIds: ["INBOX"] }), ["msg_invoice"], "q and labelIds together");
  const none = (await gmail.users.messages.list({ userId, q: "nothing-matches-this-zyx" }, at)).data;
  assert.equal(none.messages, undefined, "no matches: no messages key");
  assert.equal(none.resultSizeEstimate, 0);
  assert.deepEqual(ids((await gmail.users.threads.list({ userId, q: "subject:checkout" }, at)).data.threads), ["thread_outage"]);
});

// =====================================================================================
// 3. Labels: system and user labels, counts, create/patch/delete, modify, batchModify
// =====================================================================================
await section("labels.list and labels.get: system labels and their counts", async () => {
  const { labels } = (await gmail.users.labels.list({ userId }, at)).data;
  const byId = Object.fromEntries(labels.map((l) => [l.id, l]));
  for (const id of ["INBOX", "UNREAD", "STARRED", "SENT", "DRAFT", "TRASH", "SPAM", "IMPORTANT",
    "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS"]) {
    assert.equal(byId[id]?.type, "system", id);
    assert.equal(byId[id].name, id);
  }
  assert.deepEqual([byId.Label_customers?.type, byId.Label_customers?.name], ["user", "Customers"]);
  assert.deepEqual([byId.Label_receipts?.type, byId.Label_receipts?.name], ["user", "Receipts"]);
  const counts = async (id) => {
    const l = (await gmail.users.labels.get({ userId, id }, at)).data;
    return [l.messagesTotal, l.messagesUnread, l.threadsTotal, l.threadsUnread];
  };
  assert.deepEqual(await counts("INBOX"), [5, 3, 4, 2]);
  assert.deepEqual(await counts("Label_receipts"), [2, 1, 2, 1]);
  assert.deepEqual(await counts("Label_customers"), [2, 2, 1, 1]);
  assert.deepEqual(await counts("SENT"), [1, 0, 1, 0]);
});

await section("labels.create/get/patch/update/delete; a taken name is 409", async () => {
  const created = (await gmail.users.labels.create({
    userId, requestBody: { name: "Escalations", labelListVisibility: "labelShow", messageListVisibility: "show" },
  }, at)).data;
  assert.match(created.id, /^Label_/);
  assert.equal(created.name, "Escalations");
  made.escalations = created.id;
  const got = (await gmail.users.labels.get({ userId, id: created.id }, at)).data;
  assert.equal(got.type, "user");
  assert.equal(got.labelListVisibility, "labelShow");
  assert.equal(got.messageListVisibility, "show");
  assert.deepEqual([got.messagesTotal, got.messagesUnread, got.threadsTotal, got.threadsUnread], [0, 0, 0, 0]);
  await assert.rejects(gmail.users.labels.create({ userId, requestBody: { name: "Escalations" } }, at), (e) => {
    assert.equal(e.status, 409);
    assert.equal(e.response.data.error.code, 409);
    assert.equal(e.response.data.error.message, "Label name exists or conflicts");
    return true;
  });
  const temp = (await gmail.users.labels.create({ userId, requestBody: { name: "Temp" } }, at)).data;
  const patched = (await gmail.users.labels.patch({ userId, id: temp.id, requestBody: { name: "Temp/Old", color: { backgroundColor: "#16a766", textColor: "#ffffff" } } }, at)).data;
  assert.equal(patched.name, "Temp/Old");
  assert.deepEqual(patched.color, { backgroundColor: "#16a766", textColor: "#ffffff" });
  const updated = (await gmail.users.labels.update({ userId, id: temp.id, requestBody: { id: temp.id, name: "Temp/Older", labelListVisibility: "labelHide" } }, at)).data;
  assert.equal(updated.name, "Temp/Older");
  assert.equal(updated.labelListVisibility, "labelHide");
  await gmail.users.messages.modify({ userId, id: "msg_sent", requestBody: { addLabelIds: [temp.id] } }, at);
  const del = await gmail.users.labels.delete({ userId, id: temp.id }, at);
  assert.equal(del.status, 204);
  await assert.rejects(gmail.users.labels.get({ userId, id: temp.id }, at), (e) => e.status === 404);
  const sent = (await gmail.users.messages.get({ userId, id: "msg_sent", format: "minimal" }, at)).data;
  assert.deepEqual(sent.labelIds, ["SENT"], "a deleted label leaves its messages");
  await assert.rejects(gmail.users.labels.delete({ userId, id: "INBOX" }, at), (e) => e.status === 400, "system labels cannot be deleted");
});

await section("messages.modify and batchModify: labels on, UNREAD off, counts follow", async () => {
  assert.ok(made.escalations, "the Escalations label was made");
  const m = (await gmail.users.messages.modify({
    userId, id: "msg_outage", requestBody: { addLabelIds: [made.escalations], removeLabelIds: ["UNREAD"] },
  }, at)).data;
  assert.equal(m.id, "msg_outage");
  assert.ok(m.labelIds.includes(made.escalations));
  assert.ok(!m.labelIds.includes("UNREAD"));
  const batch = await gmail.users.messages.batchModify({
    userId, requestBody: { ids: ["msg_outage", "msg_outage_2"], addLabelIds: [made.escalations, "STARRED"], removeLabelIds: ["UNREAD"] },
  }, at);
  assert.equal(batch.status, 204);
  for (const id of ["msg_outage", "msg_outage_2"]) {
    const x = (await gmail.users.messages.get({ userId, id, format: "minimal" }, at)).data;
    assert.ok(x.labelIds.includes(made.escalations) && x.labelIds.includes("STARRED") && !x.labelIds.includes("UNREAD"), id);
  }
  const esc = (await gmail.users.labels.get({ userId, id: made.escalations }, at)).data;
  assert.deepEqual([esc.messagesTotal, esc.messagesUnread, esc.threadsTotal, esc.threadsUnread], [2, 0, 1, 0]);
  const ib = (await gmail.users.labels.get({ userId, id: "INBOX" }, at)).data;
  assert.deepEqual([ib.messagesUnread, ib.threadsUnread], [1, 1]);
  assert.deepEqual(ids((await gmail.users.messages.list({ userId, q: "label:escalations" }, at)).data.messages), ["msg_outage_2", "msg_outage"]);
  // threads.modify: a label on every message of the thread
  const t = (await gmail.users.threads.modify({ userId, id: "thread_invoice", requestBody: { addLabelIds: ["IMPORTANT"] } }, at)).data;
  assert.equal(t.id, "thread_invoice");
  assert.ok((await gmail.users.messages.get({ userId, id: "msg_invoice", format: "minimal" }, at)).data.labelIds.includes("IMPORTANT"));
  await assert.rejects(gmail.users.messages.modify({ userId, id: "msg_outage", requestBody: { addLabelIds: ["Label_nope"] } }, at),
    (e) => e.status === 400, "an unknown label id is refused");
});

// =====================================================================================
// 4. Reply in the thread
// =====================================================================================
await section("messages.send a reply (In-Reply-To, References, threadId): it lands in the thread", async () => {
  const parent = (await gmail.users.messages.get({ userId, id: "msg_outage_2", format: "metadata", metadataHeaders: ["Message-ID", "References", "Subject", "From"] }, at)).data;
  const parentId = header(parent.payload, "Message-ID");
  assert.equal(parentId, "<outage-2@customer.example>");
  const refs = `${header(parent.payload, "References")} ${parentId}`;
  const raw = rfc822({
    From: `Pome Agent <${ME}>`, To: "bob@customer.example", Cc: "alice@customer.example",
    Subject: `Re: ${header(parent.payload, "Subject").replace(/^Re: /, "")}`,
    "In-Reply-To": parentId, References: refs, "Content-Type": 'text/plain; charset="UTF-8"',
  }, "We rolled back the 08:55 deploy; checkout is recovering. Postmortem to follow.");
  const sent = (await gmail.users.messages.send({ userId, requestBody: { raw: b64url(raw), threadId: "thread_outage" } }, at)).data;
  made.reply = sent.id;
  assert.ok(sent.id && !seed.primaryMailbox.messages.some((m) => m.id === sent.id));
  assert.equal(sent.threadId, "thread_outage");
  assert.ok(sent.labelIds.includes("SENT"));
  assert.ok(!sent.labelIds.includes("INBOX"), "mail to others is not in one's own inbox");
  const t = (await gmail.users.threads.get({ userId, id: "thread_outage", format: "metadata", metadataHeaders: ["In-Reply-To", "References", "Subject"] }, at)).data;
  assert.deepEqual(ids(t.messages), ["msg_outage", "msg_outage_2", sent.id]);
  assert.equal(header(t.messages[2].payload, "In-Reply-To"), "<outage-2@customer.example>");
  assert.equal(header(t.messages[2].payload, "References"), "<outage-1@customer.example> <outage-2@customer.example>");
  const full = (await gmail.users.messages.get({ userId, id: sent.id }, at)).data;
  assert.equal(plainText(full.payload), "We rolled back the 08:55 deploy; checkout is recovering. Postmortem to follow.");
  assert.ok(full.snippet.startsWith("We rolled back the 08:55 deploy"));
  assert.deepEqual(ids((await gmail.users.messages.list({ userId, q: "in:sent subject:checkout" }, at)).data.messages), [sent.id]);
  assert.equal((await gmail.users.getProfile({ userId }, at)).data.messagesTotal, 8);
});

// =====================================================================================
// 5. Draft and send with an attachment
// =====================================================================================
const remittance = { filename: "remittance.pdf", mimeType: "application/pdf", bytes: Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 131 + 7) & 0xff)) };
const draftHeaders = {
  From: ME, To: "billing@vendor.example", Subject: "Re: Invoice INV-2041 for November",
  "In-Reply-To": "<inv-2041@vendor.example>", References: "<inv-2041@vendor.example>",
};
await section("drafts.create (multipart/mixed with an attachment), list, get, update", async () => {
  const raw = withAttachment(draftHeaders, "Paid today; remittance advice attached.", remittance);
  const d = (await gmail.users.drafts.create({ userId, requestBody: { message: { raw: b64url(raw), threadId: "thread_invoice" } } }, at)).data;
  assert.ok(d.id);
  assert.ok(d.message.id);
  assert.equal(d.message.threadId, "thread_invoice");
  assert.ok(d.message.labelIds.includes("DRAFT"));
  made.draft = d.id;
  const list = (await gmail.users.drafts.list({ userId }, at)).data;
  assert.deepEqual(list.drafts.map((x) => x.id), [d.id]);
  assert.equal(list.drafts[0].message.id, d.message.id);
  const got = (await gmail.users.drafts.get({ userId, id: d.id, format: "full" }, at)).data;
  assert.equal(got.id, d.id);
  assert.equal(header(got.message.payload, "Subject"), "Re: Invoice INV-2041 for November");
  assert.equal(got.message.payload.mimeType, "multipart/mixed");
  assert.equal(plainText(got.message.payload), "Paid today; remittance advice attached.");
  const [att] = attachmentParts(got.message.payload);
  assert.deepEqual([att.filename, att.mimeType, att.body.size], ["remittance.pdf", "application/pdf", remittance.bytes.length]);
  // in:draft finds the draft's message
  assert.deepEqual(ids((await gmail.users.messages.list({ userId, q: "in:draft" }, at)).data.messages), [d.message.id]);
  const raw2 = withAttachment(draftHeaders, "Paid in full today; remittance advice attached.", remittance);
  const u = (await gmail.users.drafts.update({ userId, id: d.id, requestBody: { id: d.id, message: { raw: b64url(raw2), threadId: "thread_invoice" } } }, at)).data;
  assert.equal(u.id, d.id, "the draft keeps its id");
  const again = (await gmail.users.drafts.get({ userId, id: d.id }, at)).data;
  assert.equal(plainText(again.message.payload), "Paid in full today; remittance advice attached.");
  assert.equal((await gmail.users.drafts.list({ userId }, at)).data.drafts.length, 1);
});

await section("drafts.send: SENT in the thread, the draft gone, attachments.get gives the bytes", async () => {
  assert.ok(made.draft, "the draft was made");
  const sent = (await gmail.users.drafts.send({ userId, requestBody: { id: made.draft } }, at)).data;
  made.draftSent = sent.id;
  assert.ok(sent.labelIds.includes("SENT"));
  assert.ok(!sent.labelIds.includes("DRAFT"));
  assert.equal(sent.threadId, "thread_invoice");
  await assert.rejects(gmail.users.drafts.get({ userId, id: made.draft }, at), (e) => e.status === 404);
  assert.equal((await gmail.users.drafts.list({ userId }, at)).data.drafts, undefined, "no drafts: no drafts key");
  const m = (await gmail.users.messages.get({ userId, id: sent.id }, at)).data;
  const [att] = attachmentParts(m.payload);
  assert.equal(att.filename, "remittance.pdf");
  assert.ok(att.body.attachmentId);
  const a = (await gmail.users.messages.attachments.get({ userId, messageId: sent.id, id: att.body.attachmentId }, at)).data;
  assert.equal(a.size, remittance.bytes.length);
  assert.deepEqual(unb64(a.data), remittance.bytes);
  assert.deepEqual(ids((await gmail.users.threads.get({ userId, id: "thread_invoice", format: "minimal" }, at)).data.messages), ["msg_invoice", sent.id]);
  assert.deepEqual(ids((await gmail.users.messages.list({ userId, q: "in:sent has:attachment filename:remittance.pdf" }, at)).data.messages), [sent.id]);
});

// =====================================================================================
// 6. The media-upload forms googleapis sends when given `media:`
// =====================================================================================
await section("messages.send with media (uploadType=multipart and uploadType=media) on /upload/gmail/v1", async () => {
  const raw = rfc822({ From: ME, To: "carol@partner.example", Subject: "Re: Contract draft v3", "In-Reply-To": "<contract-3@partner.example>", References: "<contract-3@partner.example>" },
    "Looks good to me; signing today.");
  const res = await gmail.users.messages.send({ userId, requestBody: { threadId: "thread_starred" }, media: { mimeType: "message/rfc822", body: raw } }, at);
  assert.match(res.config.url.toString(), /\/upload\/gmail\/v1\/users\/me\/messages\/send/);
  assert.match(res.config.url.toString(), /uploadType=multipart/);
  made.mediaMultipart = res.data.id;
  assert.ok(res.data.labelIds.includes("SENT"));
  assert.equal(res.data.threadId, "thread_starred");
  const m = (await gmail.users.messages.get({ userId, id: res.data.id }, at)).data;
  assert.equal(header(m.payload, "Subject"), "Re: Contract draft v3");
  assert.equal(plainText(m.payload), "Looks good to me; signing today.");
  const raw2 = rfc822({ From: ME, To: "dave@example.org", Subject: "Lunch?" }, "Noon at the usual place?");
  const res2 = await gmail.users.messages.send({ userId, media: { mimeType: "message/rfc822", body: raw2 } }, at);
  assert.match(res2.config.url.toString(), /uploadType=media/);
  made.mediaSimple = res2.data.id;
  assert.ok(res2.data.labelIds.includes("SENT"));
  assert.notEqual(res2.data.threadId, "thread_starred");
  assert.equal(header((await gmail.users.messages.get({ userId, id: res2.data.id, format: "metadata" }, at)).data.payload, "To"), "dave@example.org");
});

// =====================================================================================
// 7. Trash and untrash, a message and a thread
// =====================================================================================
await section("messages.trash/untrash and threads.trash/untrash", async () => {
  const t = (await gmail.users.messages.trash({ userId, id: "msg_newsletter" }, at)).data;
  assert.ok(t.labelIds.includes("TRASH"));
  assert.ok(!ids((await gmail.users.messages.list({ userId }, at)).data.messages).includes("msg_newsletter"), "trash is left out");
  assert.ok(ids((await gmail.users.messages.list({ userId, includeSpamTrash: true }, at)).data.messages).includes("msg_newsletter"));
  assert.deepEqual(ids((await gmail.users.messages.list({ userId, q: "in:trash" }, at)).data.messages), ["msg_newsletter"]);
  assert.deepEqual(ids((await gmail.users.messages.list({ userId, labelIds: ["TRASH"] }, at)).data.messages), ["msg_newsletter"]);
  const u = (await gmail.users.messages.untrash({ userId, id: "msg_newsletter" }, at)).data;
  assert.ok(!u.labelIds.includes("TRASH"));
  assert.ok(ids((await gmail.users.messages.list({ userId }, at)).data.messages).includes("msg_newsletter"));
  const th = (await gmail.users.threads.trash({ userId, id: "thread_starred" }, at)).data;
  assert.equal(th.id, "thread_starred");
  const inThread = ids((await gmail.users.threads.get({ userId, id: "thread_starred", format: "minimal" }, at)).data.messages);
  assert.equal(inThread.length, 2);
  for (const id of inThread)
    assert.ok((await gmail.users.messages.get({ userId, id, format: "minimal" }, at)).data.labelIds.includes("TRASH"), id);
  assert.ok(!ids((await gmail.users.threads.list({ userId }, at)).data.threads).includes("thread_starred"));
  await gmail.users.threads.untrash({ userId, id: "thread_starred" }, at);
  for (const id of inThread)
    assert.ok(!(await gmail.users.messages.get({ userId, id, format: "minimal" }, at)).data.labelIds.includes("TRASH"), id);
  assert.equal((await gmail.users.labels.get({ userId, id: "TRASH" }, at)).data.messagesTotal, 0);
});

// =====================================================================================
// 8. History since the first getProfile, and errors in Google's envelope
// =====================================================================================
await section("history.list from the startHistoryId seen before the changes", async () => {
  assert.ok(startHistoryId, "getProfile gave a historyId");
  const records = [];
  let pageToken, latest;
  do {
    const page = (await gmail.users.history.list({ userId, startHistoryId, pageToken }, at)).data;
    records.push(...(page.history ?? []));
    pageToken = page.nextPageToken;
    latest = page.historyId;
  } while (pageToken);
  assert.ok(records.length > 0);
  const big = (x) => BigInt(x);
  assert.ok(records.every((r) => big(r.id) > big(startHistoryId)), "only what came after");
  assert.ok(records.every((r, i) => i === 0 || big(records[i - 1].id) < big(r.id)), "in order");
  assert.ok(big(latest) >= big(records.at(-1).id));
  const added = records.flatMap((r) => r.messagesAdded ?? []).map((x) => x.message.id);
  const sentIds = [made.reply, made.draftSent, made.mediaMultipart, made.mediaSimple].filter(Boolean);
  assert.ok(sentIds.length > 0, "the flow sent mail");
  for (const id of sentIds) assert.ok(added.includes(id), `messagesAdded has ${id}`);
  const labelled = records.flatMap((r) => r.labelsAdded ?? []);
  assert.ok(labelled.some((x) => x.message.id === "msg_outage" && x.labelIds.includes(made.escalations)), "labelsAdded: the escalation");
  assert.ok(labelled.some((x) => x.message.id === "msg_newsletter" && x.labelIds.includes("TRASH")), "labelsAdded: the trash");
  const unlabelled = records.flatMap((r) => r.labelsRemoved ?? []);
  assert.ok(unlabelled.some((x) => x.message.id === "msg_outage" && x.labelIds.includes("UNREAD")), "labelsRemoved: read");
  assert.ok(records.every((r) => Array.isArray(r.messages) && r.messages.length > 0 && r.messages.every((m) => m.id && m.threadId)));
  // one kind of change only
  const onlyAdds = (await gmail.users.history.list({ userId, startHistoryId, historyTypes: ["messageAdded"] }, at)).data.history ?? [];
  assert.ok(onlyAdds.length > 0 && onlyAdds.every((r) => r.messagesAdded && !r.labelsAdded && !r.labelsRemoved));
  // one label only
  const onEsc = (await gmail.users.history.list({ userId, startHistoryId, labelId: made.escalations }, at)).data.history ?? [];
  assert.ok(onEsc.length > 0);
  // from now: nothing yet
  const nowId = (await gmail.users.getProfile({ userId }, at)).data.historyId;
  const empty = (await gmail.users.history.list({ userId, startHistoryId: nowId }, at)).data;
  assert.equal(empty.history, undefined);
  assert.equal(String(empty.historyId), String(nowId));
});

await section("errors: a missing message is a GaxiosError 404 in Google's envelope; no credential is 401", async () => {
  await assert.rejects(gmail.users.messages.get({ userId, id: "18c0ffee00000000" }, at), (e) => {
    // googleapis-common and google-auth-library may hold two gaxios versions, whose
    // classes instanceof does not cross: the error is the auth client's gaxios's
    assert.equal(e.constructor.name, "GaxiosError");
    assert.ok(Symbol.for("gaxios-gaxios-error") in e, "a GaxiosError by gaxios's own mark");
    assert.equal(e.status, 404);
    assert.equal(e.code, 404);
    assert.deepEqual(e.response.data, {
      error: {
        code: 404,
        message: "Requested entity was not found.",
        errors: [{ message: "Requested entity was not found.", domain: "global", reason: "notFound" }],
        status: "NOT_FOUND",
      },
    });
    assert.equal(e.message, "Requested entity was not found.");
    return true;
  });
  await assert.rejects(gmail.users.threads.get({ userId, id: "18c0ffee00000000" }, at), (e) => e.status === 404 && e.response.data.error.status === "NOT_FOUND");
  const anonymous = google.gmail({ version: "v1" });
  await assert.rejects(anonymous.users.getProfile({ userId }, at), (e) => {
    assert.equal(e.status, 401);
    assert.equal(e.response.data.error.code, 401);
    assert.equal(e.response.data.error.status, "UNAUTHENTICATED");
    return true;
  });
});

// =====================================================================================
// 9. The tape: a row per world change, named by the surface's tool
// =====================================================================================
await section("the tape: every change a state_mutation row with its route's tool; reads and refusals change nothing", async () => {
  const res = await fetch(`${restUrl}/_pome/events`, { headers: { authorization: `Bearer ${sb.session_token}` } });
  assert.equal(res.status, 200);
  const tape = await res.json();
  const rows = tape.filter((r) => /^\/(upload\/)?gmail\/v1\//.test(below(r.path)));
  assert.ok(rows.length > 50, `${rows.length} rows`);
  for (const r of rows.filter((x) => x.status !== 401)) {
    const p = below(r.path);
    assert.equal(r.tool, surfaceTool(r.method, p), `${r.method} ${p}: the surface's tool`);
    if (r.method === "GET" || r.status >= 400) assert.equal(r.state_mutation, false, `${r.method} ${p} ${r.status} changes nothing`);
  }
  const changes = rows.filter((r) => r.state_mutation);
  const count = (method, re) => changes.filter((r) => r.method === method && re.test(below(r.path))).length;
  // every change the flow made, once each
  assert.equal(count("POST", /\/labels$/), 2, "labels.create ×2 (the 409 is not one)");
  assert.equal(count("PATCH", /\/labels\/[^/]+$/), 1, "PATCH " + /\/labels\/[^/]+$/);
  assert.equal(count("PUT", /\/labels\/[^/]+$/), 1, "PUT " + /\/labels\/[^/]+$/);
  assert.equal(count("DELETE", /\/labels\/[^/]+$/), 1, "DELETE " + /\/labels\/[^/]+$/);
  assert.equal(count("POST", /\/messages\/[^/]+\/modify$/), 2, "POST " + /\/messages\/[^/]+\/modify$/);
  assert.equal(count("POST", /\/messages\/batchModify$/), 1, "POST " + /\/messages\/batchModify$/);
  assert.equal(count("POST", /\/threads\/[^/]+\/modify$/), 1, "POST " + /\/threads\/[^/]+\/modify$/);
  assert.equal(count("POST", /^\/gmail\/v1\/users\/me\/messages\/send$/), 1, "POST " + /^\/gmail\/v1\/users\/me\/messages\/send$/);
  assert.equal(count("POST", /^\/upload\/gmail\/v1\/users\/me\/messages\/send$/), 2, "POST " + /^\/upload\/gmail\/v1\/users\/me\/messages\/send$/);
  assert.equal(count("POST", /\/drafts$/), 1, "POST " + /\/drafts$/);
  assert.equal(count("PUT", /\/drafts\/[^/]+$/), 1, "PUT " + /\/drafts\/[^/]+$/);
  assert.equal(count("POST", /\/drafts\/send$/), 1, "POST " + /\/drafts\/send$/);
  assert.equal(count("POST", /\/messages\/[^/]+\/(trash|untrash)$/), 2, "POST " + /\/messages\/[^/]+\/(trash|untrash)$/);
  assert.equal(count("POST", /\/threads\/[^/]+\/(trash|untrash)$/), 2, "POST " + /\/threads\/[^/]+\/(trash|untrash)$/);
  assert.equal(changes.length, 19);
  // the REST methods the vendor's Gmail MCP server also has carry its tool names
  const toolOf = (method, re) => changes.find((r) => r.method === method && re.test(below(r.path)))?.tool;
  assert.equal(toolOf("POST", /\/labels$/), "create_label");
  assert.equal(toolOf("POST", /\/drafts$/), "create_draft");
  assert.ok(changes.every((r) => typeof r.tool === "string" && r.tool.length > 0));
});

// =====================================================================================
// 10. The client as an agent configures it: rootUrl given once, to google.gmail()
// =====================================================================================
await section("google.gmail({rootUrl: rest_url + '/'}): origin-rooted /gmail/v1/… routed by the ya29. token", async () => {
  const auth = new google.auth.OAuth2();
  auth.setCredentials({ access_token: token });
  const agent = google.gmail({ version: "v1", auth, rootUrl: restUrl + "/" });
  const res = await agent.users.getProfile({ userId });
  assert.equal(new URL(res.config.url).pathname, "/gmail/v1/users/me/profile", "googleapis keeps only rootUrl's origin");
  assert.equal(res.data.emailAddress, ME);
  assert.ok(ids((await agent.users.messages.list({ userId, labelIds: ["INBOX"] })).data.messages).includes("msg_invoice"));
});

await discard(sb.session_id);

// =====================================================================================
// 11. The default world is hosted Pome's
// =====================================================================================
await section("the default seed: hosted Pome's default mailbox", async () => {
  const d = await sandbox();
  try {
    const p = (await d.gmail.users.getProfile({ userId }, d.at)).data;
    assert.equal(p.emailAddress, ME);
    const list = ids((await d.gmail.users.messages.list({ userId, labelIds: ["INBOX"] }, d.at)).data.messages);
    assert.deepEqual(list, ["msg_support", "msg_build", "msg_welcome"]);
    const build = (await d.gmail.users.messages.get({ userId, id: "msg_build" }, d.at)).data;
    assert.equal(build.threadId, "thread_build");
    assert.equal(attachmentParts(build.payload)[0]?.filename, "build.log");
    assert.deepEqual(ids((await d.gmail.users.threads.get({ userId, id: "thread_build", format: "minimal" }, d.at)).data.messages), ["msg_build", "msg_build_reply"]);
    assert.deepEqual((await d.gmail.users.drafts.list({ userId }, d.at)).data.drafts.map((x) => x.id), ["draft_ack"]);
    const names = (await d.gmail.users.labels.list({ userId }, d.at)).data.labels.filter((l) => l.type === "user").map((l) => [l.id, l.name]);
    assert.deepEqual(sorted(names.map(String)), sorted([["Label_follow_up", "Follow Up"], ["Label_build", "Build"]].map(String)));
  } finally {
    await discard(d.sb.session_id);
  }
});

if (failures.length) {
  console.log(`${failures.length} section(s) failed: ${failures.join("; ")}`);
  process.exit(1);
}
console.log("ok: the Gmail twin through googleapis");
