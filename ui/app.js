/*
 * Pome dashboard: a page over the control API (/v1/…) at the same origin. No framework and no
 * build step; every element is made with h() (text nodes, never innerHTML, so nothing an API
 * answer holds is parsed as markup). The team key lives in sessionStorage only: it is sent as
 * Authorization: Bearer and never put in a URL or logged.
 */
"use strict";

const KEY_ITEM = "pome.key";
const TWINS = ["github", "slack", "stripe", "gmail", "linear"];
const STATES = ["all", "provisioning", "ready", "running", "done", "expired", "failed", "stopped"];
const OPEN = new Set(["provisioning", "ready", "running"]);
const POLL_MS = 2000;

let pollTimer = null;
let clockTimer = null;
let listState = "all";
let lastList = "";

function h(tag, attrs, ...children) {
        const el = document.createElement(tag);
        for (const [k, v] of Object.entries(attrs || {})) {
                if (v === null || v === undefined || v === false) continue;
                if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
                else if (k === "class") el.className = v;
                else el.setAttribute(k, v === true ? "" : String(v));
        }
        for (const c of children.flat()) {
                if (c === null || c === undefined || c === false) continue;
                el.append(c instanceof Node ? c : document.createTextNode(String(c)));
        }
        return el;
}

const $ = (sel) => document.querySelector(sel);
const key = () => sessionStorage.getItem(KEY_ITEM);

function say(msg) {
        $("#status").textContent = msg;
}

/* Shows an API error (its own message) or clears the alert when err is null. */
function showError(err) {
        const a = $("#alert");
        a.replaceChildren();
        if (!err) return;
        a.append(h("p", {}, err.message));
        if (err.type) a.append(h("p", { class: "muted" }, `${err.status} ${err.type}`));
}

class ApiError extends Error {
        constructor(status, body) {
                const e = (body && body.error) || {};
                super(e.message || `The control API answered ${status}.`);
                this.status = status;
                this.type = e.type || null;
                this.details = e.details || null;
        }
}

/* One control API call; resolves to { body, headers } or rejects with an ApiError. */
async function api(method, path, body, withKey) {
        const headers = { Authorization: `Bearer ${withKey || key()}` };
        if (body !== undefined) headers["Content-Type"] = "application/json";
        let r;
        try {
                r = await fetch(path, {
                        method,
                        headers,
                        body: body === undefined ? undefined : JSON.stringify(body),
                        cache: "no-store",
                        credentials: "omit",
                });
        } catch (e) {
                throw new ApiError(0, { error: { message: `The control API is unreachable: ${e.message}` } });
        }
        let json = null;
        const text = await r.text();
        try {
                json = text ? JSON.parse(text) : null;
        } catch {
                json = null;
        }
        if (!r.ok) throw new ApiError(r.status, json);
        return { body: json, headers: r.headers };
}

function stopTimers() {
        clearInterval(pollTimer);
        clearInterval(clockTimer);
        pollTimer = clockTimer = null;
}

/* Calls fn now and every POLL_MS while the tab is visible; a call still running when the next
 * is due is not overlapped (a slow tape read would otherwise append its rows twice). fn may
 * return false to end the polling (a run that has ended and been read whole). */
function poll(fn) {
        let busy = false;
        const tick = async () => {
                if (busy || document.hidden) return;
                busy = true;
                try {
                        if ((await fn()) === false) {
                                clearInterval(timer);
                                if (pollTimer === timer) pollTimer = null;
                        }
                } finally {
                        busy = false;
                }
        };
        const timer = setInterval(tick, POLL_MS);
        pollTimer = timer;
        tick();
}

function setPage(title, ...content) {
        document.title = `${title} · Pome`;
        const m = $("#main");
        m.replaceChildren(h("h2", { id: "page-title" }, title), ...content);
        for (const a of document.querySelectorAll("#nav a"))
                if (a.getAttribute("href") === location.hash) a.setAttribute("aria-current", "page");
                else a.removeAttribute("aria-current");
}

/* ---- login ---- */

function renderLogin() {
        $("#nav").hidden = true;
        const input = h("input", {
                id: "key",
                name: "key",
                type: "password",
                autocomplete: "off",
                spellcheck: "false",
                required: true,
                placeholder: "pome_…",
                "aria-describedby": "key-help",
        });
        const form = h(
                "form",
                { id: "login", class: "card", onsubmit: (ev) => login(ev, input) },
                h("label", { for: "key" }, "Team API key"),
                input,
                h("p", { id: "key-help", class: "muted" },
                        "Kept in this tab's session storage only; pomed writes it to <state_dir>/api-key."),
                h("button", { type: "submit" }, "Log in"),
        );
        setPage("Log in", form);
        input.focus();
}

async function login(ev, input) {
        ev.preventDefault();
        const k = input.value.trim();
        try {
                await api("GET", "/v1/usage", undefined, k);
        } catch (e) {
                showError(e);
                input.focus();
                return;
        }
        sessionStorage.setItem(KEY_ITEM, k);
        showError(null);
        if (location.hash === "#/sandboxes") route();
        else location.hash = "#/sandboxes";
}

function logout() {
        sessionStorage.removeItem(KEY_ITEM);
        showError(null);
        say("Logged out.");
        if (location.hash === "#/login") route();
        else location.hash = "#/login";
}

/* ---- sandboxes ---- */

function countdown(iso) {
        const s = Math.max(0, Math.round((Date.parse(iso) - Date.now()) / 1000));
        const m = Math.floor(s / 60);
        return `${m}:${String(s % 60).padStart(2, "0")}`;
}

function tickClocks() {
        for (const el of document.querySelectorAll("[data-expires]")) el.textContent = countdown(el.dataset.expires);
}

function renderSandboxes() {
        const filter = h(
                "select",
                {
                        id: "state-filter",
                        onchange: (ev) => {
                                listState = ev.target.value;
                                lastList = "";
                                refreshList();
                        },
                },
                STATES.map((s) => h("option", { value: s, selected: s === listState }, s)),
        );
        const table = h(
                "table",
                { id: "sandboxes" },
                h("caption", { class: "visually-hidden" }, "Sandboxes"),
                h("thead", {}, h("tr", {}, ["Id", "State", "Reason", "Twins", "Created", "Expires in", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
                h("tbody", {}),
        );
        lastList = "";
        setPage(
                "Sandboxes",
                createForm(),
                h("div", { id: "confirm" }),
                h("section", { "aria-labelledby": "list-title" },
                        h("h3", { id: "list-title" }, "Sandboxes of your team"),
                        h("p", { class: "row" }, h("label", { for: "state-filter" }, "State "), filter),
                        table),
        );
        poll(refreshList);
        clockTimer = setInterval(tickClocks, 1000);
}

function createForm() {
        const rows = TWINS.map((t) =>
                h("div", { class: "twin-choice" },
                        h("input", { type: "checkbox", id: `twin-${t}`, name: "twin", value: t }),
                        h("label", { for: `twin-${t}` }, t),
                        h("label", { for: `seed-${t}`, class: "visually-hidden" }, `Seed for ${t}`),
                        h("input", { type: "text", id: `seed-${t}`, name: `seed-${t}`, placeholder: "seed (default)", autocomplete: "off" })),
        );
        return h(
                "form",
                { id: "create", class: "card", onsubmit: createSandbox },
                h("fieldset", {},
                        h("legend", {}, "Create a sandbox: one to three twins, each with an optional seed name"),
                        rows),
                h("button", { type: "submit" }, "Create"),
        );
}

async function createSandbox(ev) {
        ev.preventDefault();
        const twins = TWINS.filter((t) => $(`#twin-${t}`).checked);
        if (twins.length < 1 || twins.length > 3) {
                showError({ message: "Choose one to three twins." });
                return;
        }
        const body = { twins };
        const seeds = {};
        for (const t of twins) {
                const s = $(`#seed-${t}`).value.trim();
                if (s) seeds[t] = s;
        }
        if (Object.keys(seeds).length) body.seeds = seeds;
        try {
                const { body: sb } = await api("POST", "/v1/sandboxes", body);
                showError(null);
                say(`Created ${sb.session_id} with ${sb.twins.join(", ")}.`);
                for (const t of TWINS) $(`#twin-${t}`).checked = false;
                lastList = "";
                refreshList();
        } catch (e) {
                showError(e);
        }
}

async function refreshList() {
        const q = new URLSearchParams({ state: listState, limit: "100" });
        let list;
        try {
                ({ body: list } = await api("GET", `/v1/sandboxes?${q}`));
        } catch (e) {
                if (e.status === 401) return logout();
                return showError(e);
        }
        const tbody = $("#sandboxes tbody");
        if (!tbody) return;
        const sig = JSON.stringify(list.data.map((s) => [s.session_id, s.state, s.reason, s.expires_at]));
        if (sig === lastList) return; /* the same rows: keep focus where it is */
        lastList = sig;
        tbody.replaceChildren(
                ...(list.data.length ? list.data.map(sandboxRow) : [h("tr", {}, h("td", { colspan: 7 }, "No sandboxes."))]),
        );
}

function sandboxRow(s) {
        const open = OPEN.has(s.state);
        return h(
                "tr",
                { "data-id": s.session_id, "data-state": s.state },
                h("td", {}, h("a", { href: `#/run/${s.session_id}` }, s.session_id)),
                h("td", {}, h("span", { class: `state state-${s.state}` }, s.state)),
                h("td", {}, s.reason || ""),
                h("td", {}, (s.twins || []).join(", ")),
                h("td", {}, h("time", { datetime: s.created_at }, s.created_at.replace("T", " ").replace("Z", " UTC"))),
                h("td", {}, open && s.expires_at ? h("span", { class: "clock", "data-expires": s.expires_at }, countdown(s.expires_at)) : "—"),
                h("td", { class: "actions" }, open ? [
                        h("button", { type: "button", class: "finalize", "aria-label": `Finalize ${s.session_id}`, onclick: () => finalizeForm(s.session_id) }, "Finalize"),
                        h("button", { type: "button", class: "stop", "aria-label": `Stop ${s.session_id}`, onclick: () => stopSandbox(s.session_id) }, "Stop"),
                ] : ""),
        );
}

async function stopSandbox(id, token) {
        const path = `/v1/sandboxes/${encodeURIComponent(id)}` + (token ? `?confirm_discard=${encodeURIComponent(token)}` : "");
        try {
                await api("DELETE", path);
        } catch (e) {
                if (e.status === 409 && e.details && e.details.discard_token && !token)
                        return confirmDiscard(id, e);
                return showError(e);
        }
        $("#confirm").replaceChildren();
        showError(null);
        say(`Stopped ${id}.`);
        lastList = "";
        refreshList();
}

/* The CLI's refusal: the 409's own message, then a discard only when the user confirms it. */
function confirmDiscard(id, err) {
        const box = $("#confirm");
        const cancel = () => {
                box.replaceChildren();
                say("Kept open.");
        };
        box.replaceChildren(
                h("div", { class: "card warn", role: "alertdialog", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-msg" },
                        h("h3", { id: "confirm-title", tabindex: "-1" }, `Discard ${id}?`),
                        h("p", { id: "confirm-msg" }, err.message),
                        h("p", { class: "muted" }, `Discard token: ${err.details.discard_token}`),
                        h("div", { class: "row" },
                                h("button", { type: "button", class: "danger", id: "confirm-discard", onclick: () => stopSandbox(id, err.details.discard_token) }, "Discard the run"),
                                h("button", { type: "button", id: "confirm-cancel", onclick: cancel }, "Cancel"))),
        );
        $("#confirm-title").focus();
}

/* Finalize: grade the run against a task (its markdown), keeping tapes, final states and verdict. */
function finalizeForm(id) {
        const box = $("#confirm");
        const task = h("textarea", { id: "finalize-task", rows: 8, cols: 80, spellcheck: "false", "aria-describedby": "finalize-help" });
        const submit = async (ev) => {
                ev.preventDefault();
                const t = task.value.trim();
                let r;
                try {
                        ({ body: r } = await api("POST", `/v1/sandboxes/${encodeURIComponent(id)}/finalize`, t ? { task_markdown: task.value } : {}));
                } catch (e) {
                        return showError(e);
                }
                showError(null);
                const v = r.verdict;
                const line = v ? `verdict ${v.state}, score ${Math.round(v.score)}` : `no verdict${r.verdict_error ? `: ${r.verdict_error}` : ""}`;
                say(`Finalized ${id}: ${line}.`);
                box.replaceChildren(h("div", { class: "card", id: "finalized" },
                        h("p", {}, `Finalized ${id}: ${line}. `, h("a", { href: `#/run/${id}`, id: "finalized-link" }, "Open the run")),
                        h("button", { type: "button", onclick: () => box.replaceChildren() }, "Close")));
                $("#finalized-link").focus();
                lastList = "";
                refreshList();
        };
        box.replaceChildren(
                h("form", { class: "card", id: "finalize", "aria-labelledby": "finalize-title", onsubmit: submit },
                        h("h3", { id: "finalize-title" }, `Finalize ${id}`),
                        h("label", { for: "finalize-task" }, "Task (markdown with ## Success Criteria)"),
                        h("div", {}, task),
                        h("p", { id: "finalize-help", class: "muted" }, "Leave it empty when the sandbox was created with its task."),
                        h("div", { class: "row" },
                                h("button", { type: "submit", id: "finalize-submit" }, "Finalize and grade"),
                                h("button", { type: "button", class: "secondary", onclick: () => box.replaceChildren() }, "Cancel"))),
        );
        task.focus();
}

/* ---- usage ---- */

function renderUsage() {
        setPage("Usage", h("dl", { id: "usage", class: "card stats" }, "Loading…"));
        poll(async () => {
                let u;
                try {
                        ({ body: u } = await api("GET", "/v1/usage"));
                } catch (e) {
                        if (e.status === 401) return logout();
                        return showError(e);
                }
                const dl = $("#usage");
                if (!dl) return;
                const item = (label, v, id) => [h("dt", {}, label), h("dd", { id }, String(v))];
                dl.replaceChildren(
                        ...item("Team", u.team_id, "usage-team"),
                        ...item("Sessions used", u.sessions_used, "usage-used"),
                        ...item("Quota", u.sessions_quota, "usage-quota"),
                        ...item("Remaining", u.sessions_remaining, "usage-remaining"),
                );
        });
}

/* ---- checks ---- */

async function renderChecks() {
        setPage("Checks", h("p", {}, "Loading…"));
        let c;
        try {
                ({ body: c } = await api("GET", "/v1/checks"));
        } catch (e) {
                if (e.status === 401) return logout();
                return showError(e);
        }
        const byTwin = new Map();
        for (const ck of c.checks) {
                if (!byTwin.has(ck.twin)) byTwin.set(ck.twin, []);
                byTwin.get(ck.twin).push(ck);
        }
        const sections = [...byTwin].map(([twin, list]) =>
                h("section", { "aria-labelledby": `checks-${twin}` },
                        h("h3", { id: `checks-${twin}` }, twin),
                        h("ul", { class: "checks" },
                                list.map((ck) =>
                                        h("li", { class: "card" },
                                                h("code", { class: "template" }, ck.template),
                                                h("button", { type: "button", class: "copy", "aria-label": `Copy the template of ${ck.id}`, onclick: () => copy(ck.template) }, "Copy"),
                                                h("p", { class: "muted" }, `${ck.id} · ${ck.substrate} · ${ck.polarity}`),
                                                h("p", {}, ck.description))))));
        setPage("Checks", h("p", {}, "Criteria a task's ## Success Criteria may name, as [code:<twin>] lines."), ...sections);
}

async function copy(text) {
        try {
                await navigator.clipboard.writeText(text);
                say(`Copied: ${text}`);
        } catch (e) {
                showError({ message: `Cannot copy (${e.message}); select the template instead.` });
        }
}

/* ---- run: each twin's tape as a column ----
 *
 * A tape may hold 100 000 rows: a column keeps only each row's summary (not its bodies), reads
 * the tape page by page (the control API's ?after= cursor) as far as the user scrolls, and
 * puts in the DOM only the rows in view (a fixed row height, a spacer as tall as the tape).
 * A row's request and response are read again, alone, when it is opened.
 */

const ROW_H = 26; /* px: .tape-row's height in app.css */
const FIRST_PAGE = 100; /* rows of the first read: the first paint waits for it */
const PAGE = 1000; /* rows of each later read (the API's most) */

let runTapes = {}; /* twin -> Tape column state, for the filters and evidence links */
let runId = null;

function renderRun(id) {
        runId = id;
        runTapes = {};
        const cols = h("div", { class: "tapes", id: "tapes" });
        const head = h("div", { id: "run-head" });
        const verdict = h("section", { id: "verdict", "aria-labelledby": "verdict-title", hidden: true });
        const twinBoxes = h("span", { class: "row", id: "twin-filter" });
        const filters = h("form", { class: "row filters", id: "tape-filters", onsubmit: (ev) => ev.preventDefault(), oninput: applyTapeFilter, onchange: applyTapeFilter },
                h("label", { for: "tape-text" }, "Rows matching"),
                h("input", { type: "text", id: "tape-text", placeholder: "method, path or tool", autocomplete: "off" }),
                h("label", { for: "tape-status" }, "Status"),
                h("select", { id: "tape-status" }, ["all", "2xx", "3xx", "4xx", "5xx"].map((x) => h("option", { value: x }, x))),
                h("fieldset", { class: "inline" }, h("legend", { class: "visually-hidden" }, "Twins shown"), twinBoxes));
        setPage(`Run ${id}`, head, verdict, filters, cols);
        let verdictRead = false;
        const tapes = runTapes;
        poll(async () => {
                let s;
                try {
                        ({ body: s } = await api("GET", `/v1/sandboxes/${encodeURIComponent(id)}`));
                } catch (e) {
                        if (e.status === 401) return logout();
                        return showError(e);
                }
                if (runTapes !== tapes || !$("#tapes")) return false;
                head.replaceChildren(h("p", {}, `State ${s.state}${s.reason ? ` (${s.reason})` : ""} · twins ${s.twins.join(", ")} · ${s.calls} calls`));
                for (const t of s.twins) {
                        if (!tapes[t]) {
                                tapes[t] = tapeColumn(id, t);
                                twinBoxes.append(h("input", { type: "checkbox", id: `show-${t}`, "data-twin": t, checked: true }),
                                        h("label", { for: `show-${t}` }, t));
                                cols.append(tapes[t].section);
                        }
                }
                /* first pages of every twin together: the first paint waits for the slowest only */
                await Promise.all(s.twins.map((t) => (tapes[t].rows.length ? null : readPage(tapes[t], FIRST_PAGE))));
                for (const t of s.twins) {
                        const tp = tapes[t];
                        /* an open run's tape grows: read its new rows when all the old are read */
                        if (!tp.more && OPEN.has(s.state)) tp.more = true;
                        await fill(tp);
                }
                const whole = s.twins.every((t) => !tapes[t].more);
                if (s.verdict && !verdictRead) {
                        verdictRead = true;
                        try {
                                const { body: v } = await api("GET", `/v1/sandboxes/${encodeURIComponent(id)}/verdict`);
                                showVerdict(verdict, v);
                        } catch (e) {
                                verdictRead = false;
                                showError(e);
                        }
                }
                /* an ended run's tapes and verdict no longer change: stop asking */
                if (!OPEN.has(s.state) && whole && (verdictRead || !s.verdict)) return false;
        });
}

function tapeColumn(id, twin) {
        const spacer = h("div", { class: "tape-spacer", role: "list", "aria-label": `${twin} tape` });
        const scroller = h("div", { class: "tape", id: `tape-${twin}`, tabindex: 0, "aria-label": `${twin} tape, scrollable` }, spacer);
        const count = h("span", { class: "muted", id: `count-${twin}` });
        const detail = h("div", { class: "tape-detail", id: `detail-${twin}`, hidden: true });
        const tp = {
                id, twin, rows: [], index: new Map(), view: null, total: 0, more: true, loading: null,
                scroller, spacer, count, detail, open: null,
        };
        tp.section = h("section", { class: "tape-col", id: `col-${twin}`, "aria-labelledby": `tape-h-${twin}` },
                h("h3", { id: `tape-h-${twin}` }, `${twin} `, count), scroller, detail);
        scroller.addEventListener("scroll", () => {
                draw(tp);
                fill(tp);
        });
        return tp;
}

/* Reads the tape's next page (rows after the last read) into tp.rows. */
function readPage(tp, limit) {
        if (tp.loading) return tp.loading;
        tp.loading = (async () => {
                const q = new URLSearchParams({ twin: tp.twin, limit: String(limit) });
                const last = tp.rows[tp.rows.length - 1];
                if (last) q.set("after", last.id);
                let r;
                try {
                        r = await api("GET", `/v1/sandboxes/${encodeURIComponent(tp.id)}/events?${q}`);
                } catch (e) {
                        showError(e);
                        return;
                }
                for (const ev of r.body) {
                        const row = {
                                id: ev.event_id,
                                status: String(ev.status ?? ""),
                                label: `${(ev.ts || "").slice(11, 23)} ${ev.method || ev.kind} ${ev.path || ""} ${ev.status ?? ""}`,
                        };
                        row.text = `${ev.method || ev.kind} ${ev.path || ""} ${ev.tool || ""}`.toLowerCase();
                        tp.index.set(row.id, tp.rows.length);
                        tp.rows.push(row);
                }
                tp.total = Number(r.headers.get("X-Pome-Total-Events")) || tp.rows.length;
                tp.more = Boolean(r.headers.get("X-Pome-Next-After"));
                if (r.body.length) tp.view = null;
                draw(tp);
        })().finally(() => {
                tp.loading = null;
        });
        return tp.loading;
}

/* Reads pages until the rows in view are read (or the tape is). */
async function fill(tp) {
        for (let i = 0; i < 200 && tp.more && !tp.loading; i++) {
                const view = visible(tp);
                const want = Math.ceil((tp.scroller.scrollTop + tp.scroller.clientHeight) / ROW_H) + 20;
                if (view.length >= want) return;
                const before = tp.rows.length;
                await readPage(tp, tp.rows.length ? PAGE : FIRST_PAGE);
                if (tp.rows.length === before) return; /* nothing new (an open run's end) */
        }
}

function filtering() {
        return Boolean(($("#tape-text")?.value || "").trim()) || ($("#tape-status")?.value || "all") !== "all";
}

function matches(row) {
        const text = ($("#tape-text")?.value || "").trim().toLowerCase();
        const st = $("#tape-status")?.value || "all";
        if (text && !row.text.includes(text)) return false;
        return st === "all" || row.status.startsWith(st[0]);
}

/* The read rows the filters let through, as indexes into tp.rows. */
function visible(tp) {
        if (!tp.view) tp.view = filtering() ? tp.rows.flatMap((r, i) => (matches(r) ? [i] : [])) : null;
        return tp.view || { length: tp.rows.length, at: (i) => i };
}

/* Puts the rows in view (and a few either side) in the DOM, nothing else. */
function draw(tp) {
        const view = visible(tp);
        const filtered = Boolean(tp.view);
        const n = filtered ? view.length + (tp.more ? 1 : 0) : Math.max(tp.total, tp.rows.length);
        tp.spacer.style.height = `${n * ROW_H}px`;
        const first = Math.max(0, Math.floor(tp.scroller.scrollTop / ROW_H) - 5);
        const last = Math.min(n, first + Math.ceil((tp.scroller.clientHeight || 600) / ROW_H) + 10);
        const items = [];
        for (let i = first; i < last; i++) {
                const k = filtered ? view[i] : i;
                const row = k === undefined ? undefined : tp.rows[k];
                if (!row) {
                        items.push(h("div", { class: "tape-item pending", role: "listitem" }, tp.more ? "reading…" : ""));
                        continue;
                }
                items.push(h("div", { class: "tape-item", role: "listitem", "aria-posinset": k + 1, "aria-setsize": tp.total || -1 },
                        h("button", {
                                type: "button",
                                class: `tape-row${tp.open === row.id ? " current" : ""}`,
                                id: `ev-${row.id}`,
                                "data-status": row.status,
                                "aria-expanded": tp.open === row.id ? "true" : "false",
                                "aria-controls": `detail-${tp.twin}`,
                                onclick: () => openRow(tp, k),
                        }, row.label)));
        }
        /* positions set through the CSSOM: the CSP refuses style attributes in markup, not this */
        items.forEach((el, j) => {
                el.style.top = `${(first + j) * ROW_H}px`;
        });
        const focused = document.activeElement && tp.spacer.contains(document.activeElement) ? document.activeElement.id : null;
        tp.spacer.replaceChildren(...items);
        if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
        tp.count.textContent = tp.rows.length
                ? `(${tp.total} ${tp.total === 1 ? "row" : "rows"}${tp.rows.length < tp.total ? `, ${tp.rows.length} read` : ""}${filtered ? `, ${view.length} match` : ""})`
                : "(no rows yet)";
}

/* Shows row k's request and response below the column: the row is read again, alone. */
async function openRow(tp, k) {
        const row = tp.rows[k];
        tp.open = row.id;
        draw(tp);
        const q = new URLSearchParams({ twin: tp.twin, limit: "1" });
        if (k > 0) q.set("after", tp.rows[k - 1].id);
        tp.detail.hidden = false;
        tp.detail.replaceChildren(h("p", { class: "muted" }, `Reading ${row.id}…`));
        let ev;
        try {
                ({ body: [ev] } = await api("GET", `/v1/sandboxes/${encodeURIComponent(tp.id)}/events?${q}`));
        } catch (e) {
                return showError(e);
        }
        tp.detail.replaceChildren(
                h("div", { class: "row" }, h("h4", {}, row.label), h("button", { type: "button", class: "secondary", onclick: () => closeRow(tp) }, "Close")),
                h("pre", { tabindex: 0, "aria-label": `${row.id}: request and response` },
                        JSON.stringify({ event_id: ev.event_id, request_headers: ev.request_headers, request: ev.request_body, response: ev.response_body }, null, 2)));
}

function closeRow(tp) {
        const id = tp.open;
        tp.open = null;
        tp.detail.hidden = true;
        draw(tp);
        document.getElementById(`ev-${id}`)?.focus();
}

function applyTapeFilter() {
        for (const tp of Object.values(runTapes)) {
                tp.view = null;
                tp.scroller.scrollTop = 0;
                draw(tp);
                fill(tp);
        }
        for (const cb of document.querySelectorAll("#twin-filter input")) $(`#col-${cb.dataset.twin}`).hidden = !cb.checked;
}

function showVerdict(sec, v) {
        const evidence = (c) => [
                ...(c.evidence_event_ids || []).map((ev) =>
                        h("button", { type: "button", class: "evidence link", "data-event": ev, "data-twin": c.twin, onclick: () => jumpToRow(c.twin, ev) }, `tape row ${ev}`)),
                ...(c.evidence_state_paths || []).map((p) =>
                        h("button", { type: "button", class: "evidence link state-path", "data-path": p, onclick: () => showStateValue(c.twin, p) }, `${c.twin}${p}`)),
        ];
        sec.hidden = false;
        sec.replaceChildren(
                h("h3", { id: "verdict-title" }, `Verdict: ${v.state}${v.score !== undefined ? `, score ${Math.round(v.score)}` : ""}`),
                h("table", { id: "criteria" },
                        h("thead", {}, h("tr", {}, ["Criterion", "Twin", "Status", "Reason", "Evidence"].map((c) => h("th", { scope: "col" }, c)))),
                        h("tbody", {}, (v.criteria || []).map((c) =>
                                h("tr", { "data-status": c.status },
                                        h("td", {}, c.text),
                                        h("td", {}, c.twin || ""),
                                        h("td", {}, h("span", { class: `status status-${c.status}` }, c.status + (c.already_true_in_seed ? " (already true in the seed)" : ""))),
                                        h("td", {}, c.reason || ""),
                                        h("td", { class: "evidence-cell" }, evidence(c)))))),
                h("div", { id: "state-value", class: "card", hidden: true, tabindex: -1, "aria-live": "polite" }),
        );
}

const finalStates = {}; /* twin -> its final state, read once per run page */

/* Follows a final-state evidence path (a JSON pointer, RFC 6901) into the twin's final state
 * (GET …/state?twin=) and shows the value it names. */
async function showStateValue(twin, pointer) {
        const key = `${runId} ${twin}`;
        if (!finalStates[key]) {
                try {
                        ({ body: finalStates[key] } = await api("GET", `/v1/sandboxes/${encodeURIComponent(runId)}/state?twin=${encodeURIComponent(twin)}`));
                } catch (e) {
                        return showError(e);
                }
        }
        let v = finalStates[key];
        for (const part of pointer.split("/").slice(1)) {
                const k = part.replace(/~1/g, "/").replace(/~0/g, "~");
                v = v === null || typeof v !== "object" ? undefined : v[k];
        }
        const box = $("#state-value");
        box.hidden = false;
        box.replaceChildren(
                h("h4", {}, `${twin}'s final state at ${pointer}`),
                h("pre", { id: "state-value-json" }, v === undefined ? "(not in the final state)" : JSON.stringify(v, null, 2)));
        box.focus();
}

/* Follows an evidence link: reads the twin's tape up to the row, clears the filters, scrolls
 * the row into view, opens it and moves focus to it. */
async function jumpToRow(twin, ev) {
        const tp = runTapes[twin];
        if (!tp) return showError({ message: `No tape column for ${twin}.` });
        for (let i = 0; !tp.index.has(ev) && tp.more && i < 200; i++) await readPage(tp, PAGE);
        const k = tp.index.get(ev);
        if (k === undefined) return showError({ message: `Tape row ${ev} is not on ${twin}'s tape.` });
        $("#tape-text").value = "";
        $("#tape-status").value = "all";
        for (const cb of document.querySelectorAll("#twin-filter input")) cb.checked = true;
        applyTapeFilter();
        tp.scroller.scrollTop = Math.max(0, k * ROW_H - tp.scroller.clientHeight / 2);
        await openRow(tp, k);
        document.getElementById(`ev-${ev}`)?.focus();
        say(`Tape row ${ev}.`);
}

/* ---- routing ---- */

function route() {
        stopTimers();
        showError(null);
        const hash = location.hash || "#/sandboxes";
        if (!key()) return renderLogin();
        $("#nav").hidden = false;
        const run = hash.match(/^#\/run\/([A-Za-z0-9_-]+)$/);
        if (run) return renderRun(run[1]);
        switch (hash) {
        case "#/usage":
                return renderUsage();
        case "#/checks":
                return renderChecks();
        case "#/login":
        case "#/sandboxes":
        default:
                if (hash !== "#/sandboxes") {
                        location.replace("#/sandboxes");
                        return;
                }
                return renderSandboxes();
        }
}

/* Escape closes the discard confirmation or the finalize form, as their Cancel does. */
document.addEventListener("keydown", (ev) => {
        const box = $("#confirm");
        if (ev.key !== "Escape" || !box || !box.firstChild || !box.contains(document.activeElement)) return;
        box.replaceChildren();
        say("Cancelled.");
});

document.addEventListener("DOMContentLoaded", () => {
        $("#logout").addEventListener("click", logout);
        window.addEventListener("hashchange", route);
        route();
});
