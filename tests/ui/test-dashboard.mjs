// The dashboard in a real headless Chromium against a real pomed on a private D-Bus
// (tests/ui/run.sh starts both):
//  - a wrong key refused with the API's own message; a login;
//  - a three-twin sandbox created from the page (three twin slots, a seed), its clock counting
//    down; usage 1 on the page = GET /v1/usage = D-Bus SessionsUsed = /metrics;
//  - an agent driven from here with the vendors' SDKs (octokit, @slack/web-api, stripe) while
//    the run page is open: the three tapes fill side by side, call by call; a row opened;
//    the filters by tool, method or path, status and twin;
//  - the sandbox finalized from the page with a task; the verdict on the run page; an
//    evidence link followed to its tape row, another to a final-state value; the run
//    directory downloaded as a tar and compared with `pome run collect`'s; usage back to 0
//    on the page, the API, D-Bus and /metrics;
//  - a stop refused (409) and discarded through the confirmation; an expired sandbox under
//    the expired filter and on its run page;
//  - a 100 000-row tape: its first rows painted after two small reads (the time is printed;
//    bench/ui.sh measures it), far scrolls and Home/End reading only the pages in view, a
//    handful of rows in the DOM, a filter searching it whole;
//  - every page on a 1280×720 laptop screen without a horizontal scroll bar; a log out.
// axe-core runs on every page (no serious or critical violation passes), the page may log no
// error (a CSP refusal is one), and each page is saved to $POME_UI_SCREENSHOTS/<page>.png.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const SRC = process.env.POME_SOURCE_DIR;
const require = createRequire(path.join(SRC, "tests/conformance/package.json"));
const puppeteer = require("puppeteer-core");
const { Octokit } = require("@octokit/rest");
const { WebClient } = require("@slack/web-api");
const Stripe = require("stripe");
const AXE = require.resolve("axe-core/axe.min.js");

const API = process.env.POME_API_URL;
const KEY = process.env.POME_API_KEY;
const BUS = process.env.POME_TEST_BUS;
const SHOTS = process.env.POME_UI_SCREENSHOTS;
const T = 15000; // ms any one wait may take

const step = (msg) => console.log(`ok: ${msg}`);

async function api(method, p, body) {
        const r = await fetch(API + p, {
                method,
                headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
                body: body && JSON.stringify(body),
        });
        const t = await r.text();
        return { status: r.status, body: t ? JSON.parse(t) : null, headers: r.headers };
}

// Stops an open sandbox the way the API asks: the 409 refusal, then the discard its token confirms.
async function discard(sid) {
        const no = await api("DELETE", `/v1/sandboxes/${sid}`);
        assert.equal(no.status, 409, JSON.stringify(no.body));
        const yes = await api("DELETE", `/v1/sandboxes/${sid}?confirm_discard=${no.body.error.details.discard_token}`);
        assert.equal(yes.status, 204, JSON.stringify(yes.body));
}

// The team's used slots as the three other surfaces say it: GET /v1/usage, the Team1 object's
// SessionsUsed on D-Bus (its path from ListTeams) and /metrics' pome_slots_used.
async function usedElsewhere() {
        const u = (await api("GET", "/v1/usage")).body;
        const bus = (...a) => JSON.parse(execFileSync("busctl", [`--address=${BUS}`, "--json=short", ...a], { encoding: "utf8" }));
        const teams = bus("call", "sh.pome.Supervisor1", "/sh/pome/Supervisor1", "sh.pome.Supervisor1", "ListTeams").data[0];
        const team = teams.find((t) => t[0] === u.team_id);
        assert.ok(team, `ListTeams lacks ${u.team_id}: ${JSON.stringify(teams)}`);
        const prop = (name) => bus("get-property", "sh.pome.Supervisor1", team[4], "sh.pome.Team1", name).data;
        const m = await (await fetch(`${API}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } })).text();
        const metric = (name) => {
                const line = m.split("\n").find((l) => l.startsWith(`${name}{team="${u.team_id}"}`));
                assert.ok(line, `/metrics lacks ${name} of ${u.team_id}`);
                return Number(line.split(" ").pop());
        };
        return {
                api: u.sessions_used, dbus: prop("SessionsUsed"), metrics: metric("pome_slots_used"),
                quota: [u.sessions_quota, prop("SessionsQuota"), metric("pome_slots_quota")],
        };
}

const SCAN_ROWS = (reads) => reads.filter((q) => q.get("limit") === "1000").length;
const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel() {}, setName() {} };

const browser = await puppeteer.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        // root in a container: Chromium's own sandbox needs user namespaces it may not get
        args: ["--no-sandbox", "--disable-dev-shm-usage", "--font-render-hinting=none"],
});
const downloads = fs.mkdtempSync(path.join(os.tmpdir(), "pome-ui-dl."));
let failed = false;
let page = null;
try {
        page = await browser.newPage();
        await page.setViewport({ width: 1366, height: 768 });
        const problems = [];
        page.on("console", (m) => {
                // an API refusal (the wrong key's 401, the stop's 409) is logged by Chromium
                // itself as a failed load: expected here, shown on the page instead
                if (m.type() === "error" && !m.text().startsWith("Failed to load resource"))
                        problems.push(m.text());
        });
        page.on("pageerror", (e) => problems.push(String(e)));
        // the key must never reach a URL: no request may carry it outside the Authorization
        // header; and every tape read is counted (rows asked for), to show what a scroll reads
        let eventReads = [];
        page.on("request", (rq) => {
                if (rq.url().includes(KEY)) problems.push(`the key is in a URL: ${rq.url()}`);
                if (rq.url().includes("/events?")) eventReads.push(new URL(rq.url()).searchParams);
        });
        const cdp = await page.createCDPSession();
        await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });

        async function axe(name) {
                // Runtime.evaluate is not subject to the page's CSP, unlike a <script> tag
                if (!(await page.evaluate(() => typeof window.axe !== "undefined")))
                        await page.evaluate(fs.readFileSync(AXE, "utf8"));
                const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
                const bad = res.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
                for (const v of res.violations)
                        console.log(`axe ${name}: ${v.impact} ${v.id}: ${v.help} (${v.nodes.length} nodes)`);
                assert.equal(bad.length, 0, `axe: serious/critical violations on ${name}: ${bad.map((v) => v.id).join(", ")}`);
                step(`axe on ${name}: ${res.violations.length} violations, none serious or critical`);
        }
        async function shot(name) {
                await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
                step(`screenshot ${name}.png`);
        }
        const text = (sel) => page.$eval(sel, (e) => e.textContent);
        // Download on the run page: the tar the page saves, extracted into <downloads>/<into>;
        // returns its <sid>/ directory
        async function download(sid, into) {
                await page.click("#download");
                const tar = path.join(downloads, `${sid}.tar`);
                for (let i = 0; i < 150 && !fs.existsSync(tar); i++) await new Promise((r) => setTimeout(r, 100));
                assert.ok(fs.existsSync(tar), `no ${tar}`);
                const x = path.join(downloads, into);
                fs.mkdirSync(x);
                execFileSync("tar", ["-xf", tar, "-C", x]);
                return path.join(x, sid);
        }
        const nav = async (hash, sel) => {
                await page.click(`#nav a[href="${hash}"]`);
                await page.waitForSelector(sel, { timeout: T });
        };
        // usage on the page once it says n, and the other three surfaces
        async function usageIs(n) {
                await nav("#/usage", "#usage");
                await page.waitForFunction((v) => document.querySelector("#usage-used")?.textContent === String(v), { timeout: T }, n);
                const elsewhere = await usedElsewhere();
                const quota = Number(await text("#usage-quota"));
                assert.deepEqual(elsewhere, { api: n, dbus: n, metrics: n, quota: [quota, quota, quota] });
                assert.equal(await page.$eval("#usage-meter", (e) => e.value), n);
                return `${await page.$$eval("#usage dd[id]", (d) => d.map((x) => x.textContent).join(" / "))} (team / used / quota / remaining); ` +
                        `GET /v1/usage ${elsewhere.api}, D-Bus SessionsUsed ${elsewhere.dbus}, /metrics pome_slots_used ${elsewhere.metrics}; quota ${quota} on all four`;
        }
        const counts = () => page.$$eval(".tape-col h3 span", (ss) => ss.map((s) => (s.textContent.match(/\((\d+) rows?/) || [0, 0])[1] | 0));

        // ---- the page and its headers
        const resp = await page.goto(`${API}/ui/`, { waitUntil: "networkidle0" });
        assert.equal(resp.status(), 200);
        const csp = resp.headers()["content-security-policy"] || "";
        assert.match(csp, /default-src 'self'/, `CSP header: ${csp}`);
        await page.waitForSelector("#login #key", { timeout: T });
        step("GET /ui/ serves the login form with a CSP");
        await axe("login");
        await shot("login");

        // ---- a wrong key: the API's own 401 message
        await page.type("#key", "pome_not_a_key_of_this_deployment");
        await page.keyboard.press("Enter");
        await page.waitForFunction(() => document.querySelector("#alert").textContent.includes("not valid"), { timeout: T });
        step(`wrong key refused: ${await text("#alert p")}`);
        assert.equal(await page.evaluate(() => sessionStorage.length), 0);

        // ---- the right key, typed and submitted with the keyboard
        await page.$eval("#key", (e) => (e.value = ""));
        await page.type("#key", KEY);
        await page.keyboard.press("Enter");
        await page.waitForSelector("#sandboxes tbody", { timeout: T });
        assert.equal(await page.evaluate(() => sessionStorage.getItem("pome.key")), KEY);
        assert.ok(!page.url().includes(KEY));
        step("logged in; the key is in sessionStorage, not in the URL");

        // ---- the create form: three twin slots, refusals on the page and the API's own
        assert.deepEqual(await page.$$eval("#create select", (ss) => ss.map((s) => s.id)), ["slot-1", "slot-2", "slot-3"]);
        await page.select("#slot-2", "github");
        await page.click("#create button[type=submit]");
        await page.waitForFunction(() => document.querySelector("#alert").textContent.includes("chosen twice"), { timeout: T });
        step(`the selector offers three twin slots; a twin chosen twice is refused on the page: ${await text("#alert p")}`);
        await page.select("#slot-2", "slack");
        await page.select("#slot-3", "stripe");
        await page.type("#seed-1", "no-such-seed");
        await page.click("#create button[type=submit]");
        await page.waitForFunction(() => document.querySelector("#alert").textContent.includes("no-such-seed"), { timeout: T });
        assert.match(await text("#alert"), /Available: .*default/);
        step(`an unknown seed refused with the API's message and its choices: ${(await text("#alert")).slice(0, 160)}…`);

        // ---- a three-twin sandbox from the page
        await page.$eval("#seed-1", (e) => (e.value = ""));
        await page.type("#seed-1", "default");
        const before = (await api("GET", "/v1/sandboxes?state=all&limit=100")).body.data.length;
        // clicked twice at once: one sandbox (the button waits for the first)
        await page.$eval("#create button[type=submit]", (b) => {
                b.click();
                b.click();
        });
        await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Created "), { timeout: 60000 });
        const id = (await text("#status")).match(/ses_[A-Za-z0-9_]+/)[0];
        assert.equal((await api("GET", "/v1/sandboxes?state=all&limit=100")).body.data.length, before + 1);
        const card = await text("#created");
        assert.ok(card.includes(id) && card.includes(`pome sandbox env ${id}`), card);
        await page.click("#show-creds");
        await page.waitForSelector("#creds-text", { timeout: T });
        const credText = await page.$eval("#creds-text", (e) => e.value);
        assert.match(credText, new RegExp(`^POME_SESSION_ID=${id}\nPOME_AUTH_TOKEN=\\S+\nPOME_GITHUB_REST_URL=http`));
        step(`Create clicked twice at once made one sandbox; its card shows its twins' URLs, pome sandbox env ${id}, and its variables on request`);
        const row = `#sandboxes tr[data-id="${id}"]`;
        await page.waitForSelector(`${row} .clock`, { timeout: T });
        const twinsCell = await page.$eval(`${row} td:nth-child(4)`, (e) => e.textContent);
        assert.equal(twinsCell, "github, slack, stripe");
        const c1 = await page.$eval(`${row} .clock`, (e) => e.textContent);
        await page.waitForFunction((sel, c) => document.querySelector(sel).textContent !== c, { timeout: 5000 }, `${row} .clock`, c1);
        const c2 = await page.$eval(`${row} .clock`, (e) => e.textContent);
        assert.match(c2, /^\d+:\d\d$/);
        step(`created ${id} from the page (${twinsCell}); its clock counts down: ${c1} → ${c2}`);
        await axe("sandboxes");
        await shot("sandboxes");

        step(`usage on the page: ${await usageIs(1)}`);
        assert.equal(await page.evaluate(() => document.activeElement.id), "page-title");
        // live: a sandbox created and discarded elsewhere moves the open page's numbers
        const other = await api("POST", "/v1/sandboxes", { twins: ["slack"] });
        assert.equal(other.status, 201, JSON.stringify(other.body));
        await page.waitForFunction(() => document.querySelector("#usage-used")?.textContent === "2", { timeout: T });
        await discard(other.body.session_id);
        await page.waitForFunction(() => document.querySelector("#usage-used")?.textContent === "1", { timeout: T });
        step("the open Usage page follows a sandbox created and discarded through the API: 1 → 2 → 1");
        await axe("usage");
        await shot("usage");

        // ---- an agent, driven from here with the vendors' SDKs, while the run page is open:
        // after each of its calls the page shows the tapes as they are, side by side
        const cred = (await api("GET", `/v1/sandboxes/${id}/credentials`)).body;
        const gh = new Octokit({ auth: cred.session_token, baseUrl: cred.per_twin.github.rest_url, log: quiet, request: { retries: 0 } });
        const sl = new WebClient(cred.session_token, { slackApiUrl: `${cred.per_twin.slack.rest_url}/`, retryConfig: { retries: 0 }, logger: quiet });
        const base = new URL(cred.provider_credentials.stripe.api_base);
        const st = new Stripe(cred.provider_credentials.stripe.api_key, { host: base.hostname, port: Number(base.port), protocol: base.protocol.replace(":", ""), maxNetworkRetries: 0 });
        const repo = { owner: "acme", repo: "api" };
        await nav("#/sandboxes", `${row} a`);
        await page.click(`${row} a`);
        await page.waitForFunction(() => document.querySelectorAll(".tape-col").length === 3 &&
                [...document.querySelectorAll(".tape-col h3 span")].every((s) => s.textContent === "(no rows yet)"), { timeout: T });
        const cols = await page.$$eval(".tape-col h3", (hs) => hs.map((x) => x.id));
        assert.deepEqual(cols, ["tape-h-github", "tape-h-slack", "tape-h-stripe"]);
        const agent = [
                ["octokit issues.get #1", () => gh.rest.issues.get({ ...repo, issue_number: 1 }), [1, 0, 0]],
                ["octokit issues.addAssignees alice", () => gh.rest.issues.addAssignees({ ...repo, issue_number: 1, assignees: ["alice"] }), [2, 0, 0]],
                ["slack conversations.list", () => sl.conversations.list(), [2, 1, 0]],
                ["octokit issues.createComment", () => gh.rest.issues.createComment({ ...repo, issue_number: 1, body: "Triaged: the crash on an empty body is a bug." }), [3, 1, 0]],
                ["slack chat.postMessage", () => sl.chat.postMessage({ channel: "C_GENERAL", text: "acme/api#1 was triaged and assigned to alice." }), [3, 2, 0]],
                ["stripe customers.create", () => st.customers.create({ email: "alice@acme.test", name: "Alice" }), [3, 2, 1]],
                ["stripe paymentIntents.create (confirm)", () => st.paymentIntents.create({ amount: 4200, currency: "usd", payment_method: "pm_card_visa", confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: "never" } }), [3, 2, 2]],
                ["octokit issues.get #999 (a 404)", () => gh.rest.issues.get({ ...repo, issue_number: 999 }).catch((e) => assert.equal(e.status, 404)), [4, 2, 2]],
        ];
        const seen = [];
        for (const [what, call, want] of agent) {
                await call();
                await page.waitForFunction((w) => {
                        const got = [...document.querySelectorAll(".tape-col h3 span")].map((s) => (s.textContent.match(/\((\d+) rows?/) || [0, 0])[1] | 0);
                        const rows = [...document.querySelectorAll(".tape-col")].map((c) => c.querySelectorAll(".tape-row").length);
                        return JSON.stringify(got) === JSON.stringify(w) && JSON.stringify(rows) === JSON.stringify(w);
                }, { timeout: T }, want).catch(async (e) => {
                        const now = await page.$$eval(".tape-col", (cs) => cs.map((c) => `${c.querySelector("h3").textContent}: ${c.querySelectorAll(".tape-row").length} rows in the DOM`));
                        throw new Error(`after ${what} the page shows ${now.join("; ")}, not ${want}: ${e.message}`);
                });
                seen.push(`${what} → ${(await counts()).join("/")}`);
        }
        step(`an agent with the vendors' SDKs; after each call the run page showed the tapes (github/slack/stripe rows): ${seen.join("; ")}`);
        const ghRows = await page.$$eval("#tape-github .tape-row", (bs) => bs.map((b) => b.textContent));
        assert.match(ghRows[1], /^\d\d:\d\d:\d\d\.\d{3} 201 POST \/repos\/acme\/api\/issues\/1\/assignees · add_issue_assignees$/);
        assert.match(ghRows[3], / 404 GET /);
        assert.deepEqual(await page.$$eval("#tape-github .tape-row", (bs) => bs.map((b) => b.classList.contains("failed-call"))), [false, false, false, true]);
        // one Tab stop per column (the rows rove), Escape closes an opened row
        assert.equal(await page.$$eval("#tape-github .tape-row", (bs) => bs.filter((b) => b.tabIndex === 0).length), 1);
        await page.click("#tape-github .tape-row[data-row='1']");
        await page.waitForSelector("#detail-github pre", { timeout: T });
        const detail = JSON.parse(await text("#detail-github pre"));
        assert.deepEqual(detail.request, { assignees: ["alice"] });
        assert.deepEqual(detail.response.assignees.map((u) => u.login), ["alice"]);
        await page.keyboard.press("Escape");
        await page.waitForFunction(() => document.querySelector("#detail-github").hidden && document.activeElement?.dataset?.row === "1", { timeout: T });
        step(`github's row 2 (${ghRows[1].trim()}) opens to its request ${JSON.stringify(detail.request)} and response; Escape closes it, focus back on the row; the 404 row is marked failed`);

        // the filters: tool, method or path, status, twin
        const shown = () => page.$$eval(".tape-col:not([hidden]) .tape-row", (ls) => ls.map((l) => `${l.closest(".tape").id.slice(5)}:${l.dataset.row}`));
        const until = (want) => page.waitForFunction(async (w) => JSON.stringify([...document.querySelectorAll(".tape-col:not([hidden]) .tape-row")].map((l) => `${l.closest(".tape").id.slice(5)}:${l.dataset.row}`)) === w &&
                ![...document.querySelectorAll(".tape-col h3 span")].some((s) => s.textContent.includes("searched")), { timeout: T }, JSON.stringify(want));
        await page.type("#tape-tool", "create_payment_intent");
        await until(["stripe:1"]);
        await page.$eval("#tape-tool", (e) => (e.value = ""));
        await page.type("#tape-text", "chat.postmessage");
        await until(["slack:1"]);
        await page.$eval("#tape-text", (e) => (e.value = ""));
        await page.select("#tape-status", "4xx");
        await until(["github:3"]);
        await page.select("#tape-status", "all");
        await until(["github:0", "github:1", "github:2", "github:3", "slack:0", "slack:1", "stripe:0", "stripe:1"]);
        await page.click("#show-stripe");
        assert.deepEqual(await shown(), ["github:0", "github:1", "github:2", "github:3", "slack:0", "slack:1"]);
        await page.click("#show-stripe");
        step("run page filters: tool create_payment_intent → stripe's row 2; path chat.postMessage → slack's row 2; status 4xx → github's 404; twin stripe hidden and back");
        await axe("run");
        await shot("run");

        // ---- finalize from the page with a task; the verdict and its evidence
        const task = "# Triage acme/api#1, tell #general, take the payment\n\n## Prompt\nTriage acme/api#1, tell #general, take $42.\n\n" +
                "## Success Criteria\n" +
                "- [code:github] Issue #1 in `acme/api` is assigned to `alice`\n" +
                "- [code:github] A comment containing \"Triaged:\" exists on issue #1 in `acme/api`\n" +
                "- [code:github] `add_issue_assignees` was called\n" +
                "- [code:slack] A message in \"general\" contains \"acme/api#1\"\n" +
                "- [code:stripe] A PaymentIntent exists with status \"succeeded\"\n\n" +
                "## Config\n```yaml\ntwins: [github, slack, stripe]\n```\n";
        await nav("#/sandboxes", `${row} button.finalize`);
        await page.click(`${row} button.finalize`);
        await page.waitForSelector("#finalize-task", { timeout: T });
        assert.equal(await page.evaluate(() => document.activeElement.id), "finalize-task");
        await page.$eval("#finalize-task", (e, t) => (e.value = t), task);
        await axe("sandboxes (finalize form)");
        await page.click("#finalize-submit");
        await page.waitForSelector("#finalized-link", { timeout: 60000 });
        step(`finalized ${id} from the page: ${await text("#status")}`);
        await page.click("#finalized-link");
        await page.waitForFunction(() => document.querySelectorAll("#criteria tbody tr").length === 5, { timeout: T });
        const statuses = await page.$$eval("#criteria tbody tr", (rs) => rs.map((r) => r.dataset.status));
        assert.deepEqual(statuses, ["passed", "passed", "passed", "passed", "passed"]);
        assert.match(await text("#verdict-title"), /Verdict: pass/);
        const ev = await page.$eval('button.evidence[data-twin="github"][data-event]', (b) => b.dataset.event);
        const evRow = (await api("GET", `/v1/sandboxes/${id}/events?twin=github&after=${ev}&limit=1`)).headers.get("x-pome-offset") - 1;
        await page.click(`button.evidence[data-event="${ev}"]`);
        await page.waitForSelector(`#ev-${ev}.current`, { timeout: T });
        await page.waitForFunction((e) => document.activeElement?.id === `ev-${e}`, { timeout: T }, ev);
        await page.waitForFunction((e) => document.querySelector("#detail-github pre")?.textContent.includes(e), { timeout: T }, ev);
        assert.equal(await page.$eval(`#ev-${ev}`, (b) => Number(b.dataset.row)), evRow);
        await page.click("#summary summary");
        assert.match(await text("#summary pre"), /add_issue_assignees/);
        step(`verdict on the run page (${statuses.join(", ")}); its summary.md under it; the evidence link of ${ev} opens, marks and focuses github's row ${evRow + 1}`);
        const sp = await page.$eval("button.state-path", (b) => [b.dataset.path, b.textContent]);
        await page.click("button.state-path");
        await page.waitForSelector("#state-value-json", { timeout: T });
        const spValue = await text("#state-value-json");
        assert.notEqual(spValue, "(not in the final state)");
        await axe("run (verdict)");
        await shot("verdict");
        await page.keyboard.press("Escape");
        await page.waitForFunction(() => document.querySelector("#state-value").hidden && document.activeElement?.classList.contains("state-path"), { timeout: T });
        step(`a final-state evidence link (${sp[1]}) shows the value it points at: ${spValue.replace(/\s+/g, " ").slice(0, 80)}; Escape closes it, focus back on the link`);

        // the run directory, downloaded as a tar: the same files `pome run collect` writes
        const x = await download(id, "x");
        const got = fs.readdirSync(x).sort();
        const collected = path.join(downloads, "collected");
        execFileSync(process.env.POME_CLI, ["run", "collect", id, collected], { env: { ...process.env }, stdio: ["ignore", "ignore", "inherit"] });
        const same = [];
        for (const f of fs.readdirSync(collected).sort()) {
                if (f === "meta.json") continue; // pome's own record of the run; the tar has sandbox.json
                assert.ok(got.includes(f), `the tar lacks ${f} (it has ${got.join(" ")})`);
                const a = fs.readFileSync(path.join(x, f)), b = fs.readFileSync(path.join(collected, f));
                if (f.endsWith(".jsonl")) assert.deepEqual(a.toString().split("\n").map((l) => l && JSON.parse(l)), b.toString().split("\n").map((l) => l && JSON.parse(l)), f);
                else if (f.endsWith(".json")) assert.deepEqual(JSON.parse(a), JSON.parse(b), f);
                else assert.equal(a.toString(), b.toString(), f);
                same.push(f);
        }
        assert.equal(fs.readFileSync(path.join(x, "github.tape.jsonl"), "utf8").trimEnd().split("\n").length, 4);
        // and the tapes and verdict are the run directory's files byte for byte
        const runDir = path.join(process.env.POME_STATE_DIR, "runs", id);
        for (const f of ["github.tape.jsonl", "slack.tape.jsonl", "stripe.tape.jsonl", "verdict.json", "summary.md"])
                assert.ok(fs.readFileSync(path.join(x, f)).equals(fs.readFileSync(path.join(runDir, f))), `the tar's ${f} is not pomed's`);
        assert.equal(JSON.parse(fs.readFileSync(path.join(x, "sandbox.json"))).session_id, id);
        step(`downloaded ${id}.tar (${got.join(", ")}); the same content as pome run collect's ${same.join(", ")}; tapes, verdict.json and summary.md byte for byte pomed's files`);

        step(`usage falls back to zero: ${await usageIs(0)}`);

        // ---- stop: the 409 refusal, then the discard confirmed
        await nav("#/sandboxes", "#create");
        await page.select("#slot-1", "github");
        await page.select("#slot-2", "");
        await page.select("#slot-3", "");
        await page.click("#create button[type=submit]");
        await page.waitForFunction((old) => document.querySelector("#status").textContent.startsWith("Created ") &&
                !document.querySelector("#status").textContent.includes(old), { timeout: 60000 }, id);
        const id2 = (await text("#status")).match(/ses_[A-Za-z0-9_]+/)[0];
        const row2 = `#sandboxes tr[data-id="${id2}"]`;
        const cred2 = (await api("GET", `/v1/sandboxes/${id2}/credentials`)).body;
        // hostile text on the tape (a title and a path that are markup) stays text on the page
        const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
        const gh2 = new Octokit({ auth: cred2.session_token, baseUrl: cred2.per_twin.github.rest_url, log: quiet, request: { retries: 0 } });
        await gh2.rest.issues.create({ ...repo, title: HOSTILE, body: "RTL \u202egnp.exe\u202c zero\u200bwidth" });
        await fetch(`${cred2.per_twin.github.rest_url}/repos/acme/${encodeURIComponent(HOSTILE)}/issues`, { headers: { Authorization: `Bearer ${cred2.session_token}` } });
        await page.goto(`${API}/ui/#/run/${id2}`, { waitUntil: "networkidle0" });
        await page.waitForFunction(() => document.querySelectorAll("#tape-github .tape-row").length === 2, { timeout: T });
        await page.click("#tape-github .tape-row[data-row='0']");
        await page.waitForFunction((x) => document.querySelector("#detail-github pre")?.textContent.includes(x), { timeout: T }, JSON.stringify(HOSTILE).slice(1, -1));
        await page.click("#tape-github .tape-row[data-row='1']");
        await page.waitForFunction(() => document.querySelector("#detail-github pre")?.textContent.includes("404"), { timeout: T });
        await page.click("#tape-github .tape-row[data-row='0']");
        await page.waitForFunction(() => document.querySelector("#detail-github pre")?.textContent.includes("RTL \\u202egnp.exe\\u202c zero\\u200bwidth"), { timeout: T });
        assert.equal(await page.evaluate(() => window.__pwned), undefined);
        assert.equal(await page.$$eval("#main img, #main script", (e) => e.length), 0);
        step(`a title and a path that are markup (${HOSTILE}) show as text on the run page: nothing ran, no element made; bidi and zero-width characters show escaped (\\u202e, \\u200b)`);
        // the tape grows under a focused row: the focus and the open row stay
        await page.focus("#tape-github .tape-row[data-row='0']");
        for (let i = 0; i < 3; i++) await gh2.rest.rateLimit.get();
        await page.waitForFunction(() => document.querySelector("#count-github").textContent === "(5 rows)" &&
                document.querySelectorAll("#tape-github .tape-row").length === 5, { timeout: T });
        await new Promise((r) => setTimeout(r, 2500)); // one more poll with nothing new
        assert.equal(await page.evaluate(() => document.activeElement?.dataset?.row), "0");
        assert.equal(await page.$eval("#detail-github", (d) => d.hidden), false);
        step("three calls more while row 1 has the focus: the rows are added, the focus and the open row stay");
        // an open run's directory: its tape so far, the rows cut back to their lines exactly
        const x2 = await download(id2, "x2");
        // byte for byte the tape file pomed writes (<state_dir>/runs/<id>/): every digit of a
        // latency, the markup and its quotes
        const tape2 = fs.readFileSync(path.join(process.env.POME_STATE_DIR, "runs", id2, "github.tape.jsonl"));
        assert.ok(fs.readFileSync(path.join(x2, "github.tape.jsonl")).equals(tape2), "the tar's tape is not the tape file");
        assert.deepEqual(fs.readdirSync(x2).sort(), ["github.tape.jsonl", "sandbox.json"]);
        step(`an open run's tar: github.tape.jsonl is pomed's tape file byte for byte (${tape2.length} bytes, ${tape2.toString().trimEnd().split("\n").length} rows, markup and quotes included), and sandbox.json`);
        await nav("#/sandboxes", `${row2} button.stop`);
        await page.waitForSelector(`${row2} button.stop`, { timeout: T });
        await page.click(`${row2} button.stop`);
        await page.waitForSelector("#confirm-discard", { timeout: T });
        const msg = await text("#confirm-api");
        assert.match(msg, /^pomed: Refused to stop/);
        assert.equal(await page.evaluate(() => document.activeElement.id), "confirm-title");
        step(`stop refused with the API's message: ${msg.slice(0, 80)}…`);
        await page.keyboard.press("Escape");
        await page.waitForFunction(() => !document.querySelector("#confirm").firstChild, { timeout: T });
        assert.equal((await api("GET", `/v1/sandboxes/${id2}`)).body.state, "running");
        assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), `Stop ${id2}`);
        step("Escape cancels the discard: the sandbox is still running, focus back on its Stop button");
        await page.click(`${row2} button.stop`);
        await page.waitForSelector("#confirm-discard", { timeout: T });
        await axe("sandboxes (discard confirmation)");
        await shot("discard");
        await page.click("#confirm-discard");
        await page.waitForSelector(`${row2}[data-state="stopped"]`, { timeout: T });
        await page.waitForFunction((i) => document.activeElement?.textContent === i, { timeout: T }, id2);
        const stopped = await api("GET", `/v1/sandboxes/${id2}`);
        assert.equal(stopped.body.state, "stopped");
        step(`discarded: ${id2} is stopped (${stopped.body.reason}); ${await usageIs(0)}`);

        // ---- an expired sandbox (a 3 s lifetime, a call before it ends) under the expired
        // filter, and its run page
        const ex = await api("POST", "/v1/sandboxes", { twins: ["slack"], ttl_seconds: 3 });
        assert.equal(ex.status, 201, JSON.stringify(ex.body));
        await new WebClient(ex.body.session_token, { slackApiUrl: `${ex.body.per_twin.slack.rest_url}/`, retryConfig: { retries: 0 }, logger: quiet }).auth.test();
        const rowx = `#sandboxes tr[data-id="${ex.body.session_id}"]`;
        await nav("#/sandboxes", "#state-filter");
        await page.select("#state-filter", "expired");
        await page.waitForSelector(`${rowx}[data-state="expired"]`, { timeout: T });
        const cells = await page.$$eval(`${rowx} td`, (tds) => tds.map((td) => td.textContent));
        assert.equal(cells[2], "lifetime");
        assert.equal(cells[5], "—");
        assert.equal(await page.$(`${rowx} button`), null);
        assert.equal(await page.$$eval("#sandboxes tbody tr", (rs) => rs.every((r) => r.dataset.state === "expired")), true);
        await page.click(`${rowx} a`);
        await page.waitForFunction(() => document.querySelector("#run-head")?.textContent.includes("State expired (lifetime)") &&
                document.querySelectorAll("#tape-slack .tape-row").length === 1, { timeout: T });
        assert.match(await text("#tape-slack .tape-row"), /200 POST \/auth\.test/);
        step(`expired filter: ${ex.body.session_id} expired (lifetime), no clock, no Stop; its run page reads its tape: ${(await text("#tape-slack .tape-row")).trim()}`);

        // ---- the list's pages: 100 more stopped sandboxes, the second page on "Show 100 more"
        for (let i = 0; i < 100; i++) {
                const c = await api("POST", "/v1/sandboxes", { twins: ["slack"] });
                assert.equal(c.status, 201, JSON.stringify(c.body));
                await discard(c.body.session_id);
        }
        await page.goto(`${API}/ui/#/sandboxes`, { waitUntil: "networkidle0" });
        await page.select("#state-filter", "stopped");
        await page.waitForFunction(() => document.querySelector("#list-count").textContent === "100+ sandboxes stopped", { timeout: T });
        assert.equal(await page.$$eval("#sandboxes tbody tr", (r) => r.length), 100);
        await page.click("#list-more");
        await page.waitForFunction(() => document.querySelectorAll("#sandboxes tbody tr").length === 102 && document.querySelector("#list-more").hidden, { timeout: T });
        assert.equal(await page.$$eval("#sandboxes tbody tr", (rs) => new Set(rs.map((r) => r.dataset.id)).size), 102);
        step(`the list pages: 100 stopped sandboxes, then "Show 100 more" → ${await text("#list-count")}, none twice`);

        // ---- a 100 000-row tape: the first rows paint within 1 s; a far scroll reads the
        // pages in view only, with only the rows in view in the DOM
        const BIG = 100000;
        const big = await api("POST", "/v1/sandboxes", { twins: ["github"] });
        assert.equal(big.status, 201, JSON.stringify(big.body));
        const bid = big.body.session_id;
        const rl = `${big.body.per_twin.github.rest_url}/rate_limit`;
        const tapeTotal = async () => {
                // a kept-alive connection pomed closed while wrk ran fails once: ask again
                for (let i = 0; ; i++) {
                        try {
                                const r = await fetch(`${API}/v1/sandboxes/${bid}/events?twin=github&limit=1`, { headers: { Authorization: `Bearer ${KEY}`, Connection: "close" } });
                                await r.arrayBuffer();
                                return Number(r.headers.get("x-pome-total-events"));
                        } catch (e) {
                                if (i >= 2) throw e;
                        }
                }
        };
        const t0 = Date.now();
        const haveWrk = spawnSync("wrk", ["--version"]).error === undefined;
        for (let n = await tapeTotal(); n < BIG; n = await tapeTotal()) {
                if (haveWrk) {
                        const secs = Math.max(1, Math.ceil((BIG - n) / 20000));
                        spawnSync("wrk", ["-t2", "-c16", `-d${secs}s`, "-H", `Authorization: Bearer ${big.body.session_token}`, rl]);
                } else {
                        await Promise.all(Array.from({ length: 32 }, async () => {
                                for (let i = 0; i < Math.ceil((BIG - n) / 32); i++)
                                        await (await fetch(rl, { headers: { Authorization: `Bearer ${big.body.session_token}` } })).arrayBuffer();
                        }));
                }
        }
        const bigN = await tapeTotal();
        step(`${bigN} tape rows made in ${((Date.now() - t0) / 1000).toFixed(1)} s (${haveWrk ? "wrk" : "fetch"})`);
        await page.goto("about:blank");
        eventReads = [];
        await page.goto(`${API}/ui/#/run/${bid}`);
        await page.waitForSelector("#tape-github .tape-row", { timeout: T });
        const paint = await page.evaluate(() => performance.now());
        const inDom = await page.$$eval("#tape-github .tape-row", (b) => b.length);
        // what makes the first paint fast, asserted; its time is bench/ui.sh's (BENCHMARKS.md),
        // printed here, not asserted: the first rows wait for the tape's length (one row) and
        // one page of 100, nothing more
        const firstReads = eventReads.map((q) => Number(q.get("limit")));
        assert.ok(firstReads.length <= 3 && firstReads.every((n) => n <= 100), `reads before the first paint: ${firstReads}`);
        assert.ok(inDom < 100, `${inDom} rows in the DOM`);
        step(`first rows of the ${bigN}-row tape painted ${Math.round(paint)} ms after navigation (bench/ui.sh measures it), after ${firstReads.length} reads of ${firstReads.join("+")} rows; ${inDom} rows in the DOM`);
        const rowsAsked = () => eventReads.reduce((a, q) => a + Number(q.get("limit") || 0), 0);
        for (const target of [90000, 50000, bigN - 1]) {
                const ts = Date.now();
                await page.$eval("#tape-github", (e, k) => (e.scrollTop = k * 26), target);
                await page.waitForSelector(`#tape-github [data-row="${target}"]`, { timeout: T });
                const label = await text(`#tape-github [data-row="${target}"]`);
                assert.match(label, /200 GET \/rate_limit/);
                const inDom2 = await page.$$eval("#tape-github .tape-row", (b) => b.length);
                assert.ok(inDom2 < 100, `${inDom2} rows in the DOM`);
                step(`scrolled to row ${target + 1} in ${Date.now() - ts} ms; ${inDom2} rows in the DOM; rows read so far ${rowsAsked()} of ${bigN} in ${eventReads.length} reads`);
        }
        assert.ok(rowsAsked() < 2000, `${rowsAsked()} rows read for three far scrolls`);
        // the keyboard: Home, Down, End and Up move the focus along the whole tape
        const focusedRow = (k) => page.waitForFunction((v) => document.activeElement?.dataset?.row === String(v), { timeout: T }, k);
        await page.focus(`#tape-github [data-row="${bigN - 1}"]`);
        await page.keyboard.press("Home");
        await focusedRow(0);
        for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowDown");
        await focusedRow(3);
        await page.keyboard.press("End");
        await focusedRow(bigN - 1);
        await page.keyboard.press("ArrowUp");
        await focusedRow(bigN - 2);
        step(`keyboard: Home → row 1, Down ×3 → row 4, End → row ${bigN}, Up → row ${bigN - 1}; rows read so far ${rowsAsked()}`);
        const countText = await text("#count-github");
        assert.match(countText, new RegExp(`^\\(${bigN} rows, \\d+ loaded\\)$`));
        await axe("run (100 000 rows)");
        await shot("run-large");
        // a filter searches the whole tape in the background, the DOM still bounded
        const tf = Date.now();
        await page.select("#tape-status", "2xx");
        await page.waitForSelector('#tape-github [data-row="0"]', { timeout: T });
        await page.select("#tape-status", "4xx");
        await page.waitForFunction((n) => document.querySelector("#count-github").textContent === `(${n} rows, 0 matches)`, { timeout: 120000 }, bigN);
        assert.equal(await page.$$eval("#tape-github .tape-row", (b) => b.length), 0);
        step(`status 4xx over the ${bigN}-row tape: searched whole in ${((Date.now() - tf) / 1000).toFixed(1)} s (${SCAN_ROWS(eventReads)} reads of 1000 rows), 0 match`);
        await discard(bid);

        // ---- a laptop screen (1280×720) and a phone-sized window (360×640): no page scrolls
        // sideways (the header and forms wrap, wide tables scroll by themselves)
        for (const [width, height] of [[1280, 720], [360, 640]]) {
                await page.setViewport({ width, height });
                const fits = [];
                for (const [hash, sel] of [["#/sandboxes", "#sandboxes tbody tr"], ["#/usage", "#usage-used"], ["#/checks", "#checks-github"], [`#/run/${id}`, "#criteria tbody tr"]]) {
                        await page.goto(`${API}/ui/${hash}`, { waitUntil: "networkidle0" });
                        await page.waitForSelector(sel, { timeout: T });
                        const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
                        if (sw > cw) await page.screenshot({ path: path.join(SHOTS, `too-wide-${width}-${hash.split("/")[1]}.png`), fullPage: true });
                        assert.ok(sw <= cw, `${hash} is ${sw} px wide on a ${cw} px screen`);
                        fits.push(`${hash.split("/")[1]} ${sw}/${cw}`);
                }
                step(`${width}×${height}: no page wider than the screen (${fits.join(", ")})`);
        }
        await nav("#/checks", "#checks-github");
        const nChecks = await page.$$eval(".checks li", (l) => l.length);
        const checks = await api("GET", "/v1/checks");
        assert.equal(nChecks, checks.body.checks.length);
        assert.equal(await page.$$eval("button.copy", (b) => b.length), nChecks);
        assert.equal(await page.evaluate(() => document.activeElement.id), "page-title");
        step(`checks page: ${nChecks} checks, each with a copy button; the focus on its title once loaded`);
        await page.setViewport({ width: 1366, height: 768 });
        await axe("checks");
        await shot("checks");

        // ---- a run that does not exist: the API's 404, and nothing to read or download
        await page.goto(`${API}/ui/#/run/ses_doesnotexist0000`, { waitUntil: "networkidle0" });
        await page.waitForFunction(() => document.querySelector("#main")?.textContent.includes("There is no run to show here"), { timeout: T });
        assert.match(await text("#alert"), /ses_doesnotexist0000/);
        assert.equal(await page.$("#download"), null);
        step(`a run that does not exist: ${(await text("#alert p"))}; no tapes, filters or download offered`);

        // ---- a key refused mid-session: the login says why, and the next login returns there
        await page.evaluate(() => sessionStorage.setItem("pome.key", "pome_revoked_or_rotated"));
        await page.goto(`${API}/ui/#/run/${id}`, { waitUntil: "networkidle0" });
        await page.waitForSelector("#login #key", { timeout: T });
        assert.match(await text("#alert"), /Your key was refused, so you are logged out: The API key is not valid/);
        await page.type("#key", KEY);
        await page.keyboard.press("Enter");
        await page.waitForSelector("#criteria tbody tr", { timeout: T });
        assert.equal(new URL(page.url()).hash, `#/run/${id}`);
        step("a key refused mid-session: the login form says so with the API's message; logging in again returns to the run");

        // ---- log out clears the key
        await page.click("#logout");
        await page.waitForSelector("#login #key", { timeout: T });
        assert.equal(await page.evaluate(() => sessionStorage.getItem("pome.key")), null);
        step("log out clears the key");
        await page.goto(`${API}/ui/#/usage`, { waitUntil: "networkidle0" });
        await page.waitForSelector("#login #key", { timeout: T });
        await page.type("#key", KEY);
        await page.keyboard.press("Enter");
        await page.waitForSelector("#usage-used", { timeout: T });
        step("a link to #/usage opened logged out: the login, then the usage page");
        await page.click("#logout");
        await page.waitForSelector("#login #key", { timeout: T });

        assert.deepEqual(problems, [], "the page logged errors");
        step("the page logged no error");
} catch (e) {
        failed = true;
        console.error(`FAIL: ${e.stack || e}`);
        // what the page said then: its alert (an API error) and its status line
        const said = await page?.evaluate(() => [document.querySelector("#alert")?.textContent, document.querySelector("#status")?.textContent]).catch(() => null);
        if (said) console.error(`the page's alert: ${JSON.stringify(said[0])}; its status: ${JSON.stringify(said[1])}`);
} finally {
        await browser.close();
        fs.rmSync(downloads, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
