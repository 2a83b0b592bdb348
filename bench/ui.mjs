// bench/ui.sh's browser half: node bench/ui.mjs CONTROL_URL KEY RUNS ROWS.
// Makes a sandbox with a ROWS-row GitHub tape (GET /rate_limit), then, RUNS times, interleaved:
//  - dashboard: /ui/#/run/<id> from about:blank until its first tape row is painted; then a
//    scroll to row 90 % until that row is painted; the rows it read and the JS heap after;
//  - baseline: the same page's origin fetching the whole tape (GET …/events?twin=github,
//    one JSON array) and parsing it — what a page must do before its first paint when it
//    does not page — and the JS heap after.
// Prints each run and a Markdown table of medians (min–max) for BENCHMARKS.md.
import { createRequire } from "node:module";
import path from "node:path";

const [API, KEY, RUNS_S, ROWS_S] = process.argv.slice(2);
const RUNS = Number(RUNS_S), ROWS = Number(ROWS_S);
const require = createRequire(path.join(process.env.POME_SOURCE_DIR, "tests/conformance/package.json"));
const puppeteer = require("puppeteer-core");

const api = async (method, p, body) => {
        const r = await fetch(API + p, { method, headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json", Connection: "close" }, body: body && JSON.stringify(body) });
        const t = await r.text();
        return { status: r.status, headers: r.headers, body: t ? JSON.parse(t) : null };
};
const sb = (await api("POST", "/v1/sandboxes", { twins: ["github"], ttl_seconds: 3600 })).body;
const rl = `${sb.per_twin.github.rest_url}/rate_limit`;
const total = async () => Number((await api("GET", `/v1/sandboxes/${sb.session_id}/events?twin=github&limit=1`)).headers.get("x-pome-total-events"));
// exactly ROWS calls: 32 callers, each its share
await Promise.all(Array.from({ length: 32 }, async (_, w) => {
        for (let i = w; i < ROWS; i += 32)
                await (await fetch(rl, { headers: { Authorization: `Bearer ${sb.session_token}` } })).arrayBuffer();
}));
const rows = await total();
const bytes = Number((await fetch(`${API}/v1/sandboxes/${sb.session_id}/events?twin=github`, { headers: { Authorization: `Bearer ${KEY}` } }).then((r) => r.arrayBuffer())).byteLength);
console.log(`tape: ${rows} rows, ${(bytes / 1048576).toFixed(1)} MiB as one JSON array`);

const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
const page = await browser.newPage();
await page.setViewport({ width: 1366, height: 768 });
const cdp = await page.createCDPSession();
await page.goto(`${API}/ui/`);
await page.evaluate((k) => sessionStorage.setItem("pome.key", k), KEY);
const heap = async () => {
        await cdp.send("HeapProfiler.collectGarbage");
        return (await cdp.send("Runtime.getHeapUsage")).usedSize / 1048576;
};
const far = Math.floor(rows * 0.9);
const res = { paint: [], scroll: [], read: [], heap: [], base: [], baseHeap: [] };
for (let i = 0; i < RUNS; i++) {
        // the dashboard
        let asked = 0;
        const count = (rq) => {
                if (rq.url().includes("/events?")) asked += Number(new URL(rq.url()).searchParams.get("limit") || 0);
        };
        page.on("request", count);
        await page.goto(`${API}/ui/#/about`);
        await page.goto("about:blank");
        await page.goto(`${API}/ui/#/run/${sb.session_id}`);
        await page.waitForSelector("#tape-github .tape-row", { timeout: 30000 });
        const paint = await page.evaluate(() => performance.now());
        const t0 = await page.evaluate(() => performance.now());
        await page.$eval("#tape-github", (e, k) => (e.scrollTop = k * 26), far);
        await page.waitForSelector(`#tape-github [data-row="${far}"]`, { timeout: 30000 });
        const scroll = (await page.evaluate(() => performance.now())) - t0;
        page.off("request", count);
        const h1 = await heap();
        // the baseline: the whole tape before anything can be painted
        await page.goto("about:blank");
        await page.goto(`${API}/ui/#/checks`);
        const base = await page.evaluate(async (id, k) => {
                const t = performance.now();
                const r = await fetch(`/v1/sandboxes/${id}/events?twin=github`, { headers: { Authorization: `Bearer ${k}` } });
                window.__tape = await r.json();
                return performance.now() - t;
        }, sb.session_id, KEY);
        const h2 = await heap();
        await page.evaluate(() => delete window.__tape);
        res.paint.push(paint), res.scroll.push(scroll), res.read.push(asked), res.heap.push(h1), res.base.push(base), res.baseHeap.push(h2);
        console.log(`run ${i + 1}: first row painted ${paint.toFixed(0)} ms after navigation; row ${far + 1} ${scroll.toFixed(0)} ms after the scroll; ${asked} rows read; heap ${h1.toFixed(1)} MiB | baseline: whole tape read and parsed in ${base.toFixed(0)} ms, heap ${h2.toFixed(1)} MiB`);
}
await browser.close();
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const f = (a, d = 0) => `${med(a).toFixed(d)} (${Math.min(...a).toFixed(d)}–${Math.max(...a).toFixed(d)})`;
console.log(`\n| ${rows}-row tape, ${RUNS} runs | dashboard | baseline: read it whole | baseline / dashboard |`);
console.log("|---|---|---|---|");
console.log(`| first row on screen | ${f(res.paint)} ms after navigation | ${f(res.base)} ms to read and parse | ${(med(res.base) / med(res.paint)).toFixed(1)}× |`);
console.log(`| row ${far + 1} on screen after a scroll | ${f(res.scroll)} ms | (in memory once read) | |`);
console.log(`| rows read | ${f(res.read)} | ${rows} | |`);
console.log(`| JS heap after | ${f(res.heap, 1)} MiB | ${f(res.baseHeap, 1)} MiB | ${(med(res.baseHeap) / med(res.heap)).toFixed(1)}× |`);
await api("DELETE", `/v1/sandboxes/${sb.session_id}`).then((r) => r.body?.error?.details?.discard_token && api("DELETE", `/v1/sandboxes/${sb.session_id}?confirm_discard=${r.body.error.details.discard_token}`));
