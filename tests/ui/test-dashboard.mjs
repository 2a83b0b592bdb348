// The dashboard in a real headless Chromium against a real pomed (tests/ui/run.sh starts it):
// a wrong key refused with the API's own message, a login, a three-twin sandbox created from
// the page and listed with its clock counting down, a twin call from here shown on the run
// page's tape, usage 1, a stop through the discard confirmation, usage back to 0; a one-twin
// sandbox finalized from the page with a task, its verdict on the run page and an evidence
// link followed to its tape row; a log out.
// axe-core runs on every page (no serious or critical violation passes), the page may log no
// error (a CSP refusal is one), and each page is saved to $POME_UI_SCREENSHOTS/<page>.png.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const SRC = process.env.POME_SOURCE_DIR;
const require = createRequire(path.join(SRC, "tests/conformance/package.json"));
const puppeteer = require("puppeteer-core");
const AXE = require.resolve("axe-core/axe.min.js");

const API = process.env.POME_API_URL;
const KEY = process.env.POME_API_KEY;
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
        return { status: r.status, body: t ? JSON.parse(t) : null };
}

const browser = await puppeteer.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        // root in a container: Chromium's own sandbox needs user namespaces it may not get
        args: ["--no-sandbox", "--disable-dev-shm-usage", "--font-render-hinting=none"],
});
let failed = false;
try {
        const page = await browser.newPage();
        await page.setViewport({ width: 1366, height: 768 });
        const problems = [];
        page.on("console", (m) => {
                // an API refusal (the wrong key's 401, the stop's 409) is logged by Chromium
                // itself as a failed load: expected here, shown on the page instead
                if (m.type() === "error" && !m.text().startsWith("Failed to load resource"))
                        problems.push(m.text());
        });
        page.on("pageerror", (e) => problems.push(String(e)));
        // the key must never reach a URL: no request may carry it outside the Authorization header
        page.on("request", (rq) => {
                if (rq.url().includes(KEY)) problems.push(`the key is in a URL: ${rq.url()}`);
        });

        async function axe(name) {
                // Runtime.evaluate is not subject to the page's CSP, unlike a <script> tag
                if (!(await page.evaluate(() => typeof window.axe !== "undefined")))
                        await page.evaluate(require("node:fs").readFileSync(AXE, "utf8"));
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

        // the page and its headers
        const resp = await page.goto(`${API}/ui/`, { waitUntil: "networkidle0" });
        assert.equal(resp.status(), 200);
        const csp = resp.headers()["content-security-policy"] || "";
        assert.match(csp, /default-src 'self'/, `CSP header: ${csp}`);
        await page.waitForSelector("#login #key", { timeout: T });
        step("GET /ui/ serves the login form with a CSP");
        await axe("login");
        await shot("login");

        // a wrong key: the API's own 401 message
        await page.type("#key", "pome_not_a_key_of_this_deployment");
        await page.keyboard.press("Enter");
        await page.waitForFunction(() => document.querySelector("#alert").textContent.includes("not valid"), { timeout: T });
        step(`wrong key refused: ${await text("#alert p")}`);
        assert.equal(await page.evaluate(() => sessionStorage.length), 0);

        // the right key, typed and submitted with the keyboard
        await page.$eval("#key", (e) => (e.value = ""));
        await page.type("#key", KEY);
        await page.keyboard.press("Enter");
        await page.waitForSelector("#sandboxes tbody", { timeout: T });
        assert.equal(await page.evaluate(() => sessionStorage.getItem("pome.key")), KEY);
        assert.ok(!page.url().includes(KEY));
        step("logged in; the key is in sessionStorage, not in the URL");

        // four twins: refused on the page, nothing sent
        for (const t of ["github", "slack", "stripe", "linear"]) await page.click(`#twin-${t}`);
        await page.click("#create button[type=submit]");
        await page.waitForFunction(() => document.querySelector("#alert").textContent.includes("one to three"), { timeout: T });
        step(`four twins refused on the page: ${await text("#alert p")}`);
        await page.click("#twin-linear");

        // a seed the deployment does not have: the API's own 422 message
        await page.type("#seed-github", "no-such-seed");
        await page.click("#create button[type=submit]");
        await page.waitForFunction(() => document.querySelector("#alert").textContent.includes("no-such-seed"), { timeout: T });
        step(`an unknown seed refused with the API's message: ${await text("#alert p")}`);
        await page.$eval("#seed-github", (e) => (e.value = ""));

        // create a three-twin sandbox from the page (its twins still checked)
        await page.type("#seed-github", "default");
        await page.click("#create button[type=submit]");
        await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Created "), { timeout: 60000 });
        const id = (await text("#status")).match(/ses_[A-Za-z0-9]+/)[0];
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

        // a twin call from the test, with the sandbox's token
        const cred = await api("GET", `/v1/sandboxes/${id}/credentials`);
        assert.equal(cred.status, 200, JSON.stringify(cred.body));
        const r = await fetch(`${cred.body.per_twin.github.rest_url}/user`, {
                headers: { Authorization: `Bearer ${cred.body.session_token}` },
        });
        assert.equal(r.status, 200);
        const r2 = await fetch(`${cred.body.per_twin.slack.rest_url}/api/auth.test`, {
                method: "POST",
                headers: { Authorization: `Bearer ${cred.body.session_token}` },
        });
        assert.equal(r2.status, 200);
        step("GET <github rest_url>/user and POST <slack rest_url>/api/auth.test with the session token: 200");

        // usage: 1
        await page.click('#nav a[href="#/usage"]');
        await page.waitForFunction(() => document.querySelector("#usage-used")?.textContent === "1", { timeout: T });
        step(`usage: ${await page.$$eval("#usage dd", (d) => d.map((x) => x.textContent).join(" / "))} (team / used / quota / remaining)`);
        await axe("usage");
        await shot("usage");

        // run: the twin call on github's tape, one column per twin
        await page.goto(`${API}/ui/#/run/${id}`, { waitUntil: "networkidle0" });
        await page.waitForFunction(() => document.querySelectorAll("#tape-github .tape-row").length >= 1 &&
                document.querySelectorAll("#tape-slack .tape-row").length >= 1, { timeout: T });
        const cols = await page.$$eval(".tape-col h3", (hs) => hs.map((x) => x.id));
        assert.deepEqual(cols, ["tape-h-github", "tape-h-slack", "tape-h-stripe"]);
        await page.click("#tape-github .tape-row");
        await page.waitForSelector("#detail-github pre", { timeout: T });
        assert.match(await text("#detail-github pre"), /"login": "pome-agent"/);
        const row0 = await page.$eval("#tape-github .tape-row", (e) => e.textContent);
        assert.match(row0, /GET \/github\/s\/.*\/user 200/);
        const slack0 = await page.$eval("#tape-slack .tape-row", (e) => e.textContent);
        step(`run page: three tape columns; github's row: ${row0}; slack's: ${slack0}`);
        // the tapes fill while the page is open
        await fetch(`${cred.body.per_twin.github.rest_url}/rate_limit`, { headers: { Authorization: `Bearer ${cred.body.session_token}` } });
        await page.waitForFunction(() => document.querySelectorAll("#tape-github .tape-row").length === 2, { timeout: T });
        step("a call made with the run page open appears on github's tape");
        const shown = () => page.$$eval(".tape .tape-row", (ls) => ls.map((l) => l.closest(".tape").id));
        await page.type("#tape-text", "auth.test");
        assert.deepEqual(await shown(), ["tape-slack"]);
        await page.$eval("#tape-text", (e) => (e.value = ""));
        await page.select("#tape-status", "4xx");
        await page.waitForFunction(() => !document.querySelector(".tape .tape-row"), { timeout: T });
        assert.deepEqual(await shown(), []);
        await page.select("#tape-status", "all");
        assert.deepEqual(await shown(), ["tape-github", "tape-github", "tape-slack"]);
        await page.click("#show-stripe");
        assert.equal(await page.$eval("#col-stripe", (e) => e.hidden), true);
        await page.click("#show-stripe");
        step("run page filters: text (auth.test: slack's row only), status (4xx: none), twin (stripe's column hidden and back)");
        await axe("run");
        await shot("run");

        // checks: the vocabulary with templates and copy buttons
        await page.click('#nav a[href="#/checks"]');
        await page.waitForSelector("#checks-github", { timeout: T });
        const nChecks = await page.$$eval(".checks li", (l) => l.length);
        const checks = await api("GET", "/v1/checks");
        assert.equal(nChecks, checks.body.checks.length);
        assert.equal(await page.$$eval("button.copy", (b) => b.length), nChecks);
        step(`checks page: ${nChecks} checks, each with a copy button`);
        await axe("checks");
        await shot("checks");

        // stop: the 409 refusal, then the discard confirmed
        await page.click('#nav a[href="#/sandboxes"]');
        await page.waitForSelector(`${row} button.stop`, { timeout: T });
        await page.click(`${row} button.stop`);
        await page.waitForSelector("#confirm-discard", { timeout: T });
        const msg = await text("#confirm-msg");
        assert.match(msg, /Refused to stop/);
        assert.equal(await page.evaluate(() => document.activeElement.id), "confirm-title");
        step(`stop refused with the API's message: ${msg.slice(0, 80)}…`);
        await page.keyboard.press("Escape");
        await page.waitForFunction(() => !document.querySelector("#confirm").firstChild, { timeout: T });
        assert.equal((await api("GET", `/v1/sandboxes/${id}`)).body.state, "running");
        step("Escape cancels the discard: the sandbox is still running");
        await page.click(`${row} button.stop`);
        await page.waitForSelector("#confirm-discard", { timeout: T });
        await axe("sandboxes (discard confirmation)");
        await shot("discard");
        await page.click("#confirm-discard");
        await page.waitForSelector(`${row}[data-state="stopped"]`, { timeout: T });
        const got = await api("GET", `/v1/sandboxes/${id}`);
        assert.equal(got.body.state, "stopped");
        step(`discarded: ${id} is stopped (${got.body.reason})`);

        // usage: back to 0
        await page.click('#nav a[href="#/usage"]');
        await page.waitForFunction(() => document.querySelector("#usage-used")?.textContent === "0", { timeout: T });
        step("usage falls back to 0");

        // finalize from the page: a one-twin sandbox, a call, a task; the verdict on the run
        // page, and its evidence link to the tape row it names
        await page.click('#nav a[href="#/sandboxes"]');
        await page.waitForSelector("#create", { timeout: T });
        await page.click("#twin-github");
        await page.click("#create button[type=submit]");
        await page.waitForFunction((old) => document.querySelector("#status").textContent.startsWith("Created ") &&
                !document.querySelector("#status").textContent.includes(old), { timeout: 60000 }, id);
        const id2 = (await text("#status")).match(/ses_[A-Za-z0-9]+/)[0];
        const row2 = `#sandboxes tr[data-id="${id2}"]`;
        const cred2 = await api("GET", `/v1/sandboxes/${id2}/credentials`);
        const r3 = await fetch(`${cred2.body.per_twin.github.rest_url}/repos/acme/api/issues`, {
                headers: { Authorization: `Bearer ${cred2.body.session_token}` },
        });
        assert.equal(r3.status, 200);
        await page.waitForSelector(`${row2} button.finalize`, { timeout: T });
        await page.click(`${row2} button.finalize`);
        await page.waitForSelector("#finalize-task", { timeout: T });
        assert.equal(await page.evaluate(() => document.activeElement.id), "finalize-task");
        await page.$eval("#finalize-task", (e) => (e.value = "# List the issues\n\n## Prompt\nList the issues of acme/api.\n\n" +
                "## Success Criteria\n- [code:github] `list_issues` was called\n- [code:github] Issue #1 in `acme/api` is in state open\n"));
        await axe("sandboxes (finalize form)");
        await page.click("#finalize-submit");
        await page.waitForSelector("#finalized-link", { timeout: 60000 });
        step(`finalized ${id2} from the page: ${await text("#status")}`);
        await page.click("#finalized-link");
        await page.waitForFunction(() => document.querySelectorAll("#criteria tbody tr").length === 2 &&
                document.querySelectorAll("#tape-github .tape-row").length >= 1, { timeout: T });
        const statuses = await page.$$eval("#criteria tbody tr", (rs) => rs.map((r) => r.dataset.status));
        assert.deepEqual(statuses, ["passed", "passed"]);
        const ev = await page.$eval("button.evidence", (b) => b.dataset.event);
        await page.click("button.evidence");
        await page.waitForSelector(`#ev-${ev}.current`, { timeout: T });
        await page.waitForFunction((e) => document.activeElement?.id === `ev-${e}`, { timeout: T }, ev);
        await page.waitForSelector("#detail-github pre", { timeout: T });
        step(`verdict on the run page (${statuses.join(", ")}); its evidence link opens and focuses tape row ${ev}`);
        await page.click('button.state-path[data-path="/repositories/0/issues/0/state"]');
        await page.waitForSelector("#state-value-json", { timeout: T });
        assert.equal(await text("#state-value-json"), '"open"');
        step("a final-state evidence link shows its value in github's final state: \"open\"");
        await axe("run (verdict)");
        await shot("verdict");
        await page.click('#nav a[href="#/usage"]');
        await page.waitForFunction(() => document.querySelector("#usage-used")?.textContent === "0", { timeout: T });
        step("usage is 0 again after the finalize");

        // an expired sandbox (a 3 s lifetime, created through the API) under the expired filter
        const ex = await api("POST", "/v1/sandboxes", { twins: ["slack"], ttl_seconds: 3 });
        assert.equal(ex.status, 201, JSON.stringify(ex.body));
        const rowx = `#sandboxes tr[data-id="${ex.body.session_id}"]`;
        await page.click('#nav a[href="#/sandboxes"]');
        await page.waitForSelector("#state-filter", { timeout: T });
        await page.select("#state-filter", "expired");
        await page.waitForSelector(`${rowx}[data-state="expired"]`, { timeout: T });
        const cells = await page.$$eval(`${rowx} td`, (tds) => tds.map((td) => td.textContent));
        assert.equal(cells[2], "lifetime");
        assert.equal(cells[5], "—");
        assert.equal(await page.$(`${rowx} button`), null);
        assert.equal(await page.$$eval("#sandboxes tbody tr", (rs) => rs.every((r) => r.dataset.state === "expired")), true);
        step(`expired filter: ${ex.body.session_id} expired (lifetime), no clock, no Stop`);

        // a 100 000-row tape: the run page paints its first rows within 1 s and reads the tape
        // only as far as it is scrolled, with only the rows in view in the DOM
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
        await page.goto(`${API}/ui/#/run/${bid}`);
        await page.waitForSelector("#tape-github .tape-row", { timeout: T });
        const paint = await page.evaluate(() => performance.now());
        const inDom = await page.$$eval("#tape-github .tape-row", (b) => b.length);
        assert.ok(paint <= 1000, `first rows painted after ${paint} ms`);
        assert.ok(inDom < 100, `${inDom} rows in the DOM`);
        step(`first rows of the ${bigN}-row tape painted ${Math.round(paint)} ms after navigation; ${inDom} rows in the DOM`);
        const ts = Date.now();
        await page.$eval("#tape-github", (e) => (e.scrollTop = 5000 * 26));
        await page.waitForSelector('#tape-github [aria-posinset="5001"] .tape-row, #tape-github [aria-posinset="5001"]', { timeout: T });
        const countText = await text("#count-github");
        const [, tot, read] = countText.match(/\((\d+) rows, (\d+) read/);
        assert.equal(Number(tot), bigN);
        assert.ok(Number(read) < bigN / 4, countText);
        const inDom2 = await page.$$eval("#tape-github .tape-row", (b) => b.length);
        assert.ok(inDom2 < 100, `${inDom2} rows in the DOM`);
        step(`scrolled to row 5001 in ${Date.now() - ts} ms: ${countText}; ${inDom2} rows in the DOM`);
        await axe("run (100 000 rows)");
        await shot("run-large");
        const gone = await api("DELETE", `/v1/sandboxes/${bid}`);
        assert.equal(gone.status, 409);
        const discarded = await api("DELETE", `/v1/sandboxes/${bid}?confirm_discard=${gone.body.error.details.discard_token}`);
        assert.ok(discarded.status < 300, JSON.stringify(discarded));

        // log out clears the key
        await page.click("#logout");
        await page.waitForSelector("#login #key", { timeout: T });
        assert.equal(await page.evaluate(() => sessionStorage.getItem("pome.key")), null);
        step("log out clears the key");

        assert.deepEqual(problems, [], "the page logged errors");
        step("the page logged no error");
} catch (e) {
        failed = true;
        console.error(`FAIL: ${e.stack || e}`);
} finally {
        await browser.close();
}
process.exit(failed ? 1 : 0);
