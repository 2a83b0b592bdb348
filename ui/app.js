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
const TAPE_ROWS_MAX = 2000; /* rows per twin the run page keeps; the rest stays on the server */

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

/* ---- run: each twin's tape as a column ---- */

function renderRun(id) {
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
        const tapes = {}; /* twin -> { after, rows, total } */
        poll(async () => {
                let s;
                try {
                        ({ body: s } = await api("GET", `/v1/sandboxes/${encodeURIComponent(id)}`));
                } catch (e) {
                        if (e.status === 401) return logout();
                        return showError(e);
                }
                if (!$("#tapes")) return;
                head.replaceChildren(h("p", {}, `State ${s.state}${s.reason ? ` (${s.reason})` : ""} · twins ${s.twins.join(", ")} · ${s.calls} calls`));
                for (const t of s.twins) {
                        if (!tapes[t]) {
                                tapes[t] = { after: null, n: 0, list: h("ol", { class: "tape", id: `tape-${t}`, tabindex: 0, "aria-label": `${t} tape` }), count: h("span", { class: "muted" }) };
                                twinBoxes.append(h("input", { type: "checkbox", id: `show-${t}`, "data-twin": t, checked: true }),
                                        h("label", { for: `show-${t}` }, t));
                                cols.append(h("section", { class: "tape-col", id: `col-${t}`, "aria-labelledby": `tape-h-${t}` },
                                        h("h3", { id: `tape-h-${t}` }, `${t} `, tapes[t].count), tapes[t].list));
                        }
                        await readTape(id, t, tapes[t]);
                }
                const whole = s.twins.every((t) => tapes[t].whole);
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

function showVerdict(sec, v) {
        const evidence = (c) => [
                ...(c.evidence_event_ids || []).map((ev) =>
                        h("button", { type: "button", class: "evidence link", "data-event": ev, onclick: () => jumpToRow(ev) }, `tape row ${ev}`)),
                ...(c.evidence_state_paths || []).map((p) => h("code", { class: "state-path" }, `${c.twin}${p}`)),
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
        );
}

/* Whether a tape row passes the run page's filters (text in method/path/tool, status class). */
function rowShown(li) {
        const text = ($("#tape-text")?.value || "").trim().toLowerCase();
        const st = $("#tape-status")?.value || "all";
        if (text && !li.dataset.text.includes(text)) return false;
        return st === "all" || li.dataset.status.startsWith(st[0]);
}

function applyTapeFilter() {
        for (const li of document.querySelectorAll(".tape li")) li.hidden = !rowShown(li);
        for (const cb of document.querySelectorAll("#twin-filter input")) $(`#col-${cb.dataset.twin}`).hidden = !cb.checked;
}

/* Opens the tape row an evidence id names, scrolls it into view and moves focus to it. */
function jumpToRow(ev) {
        const li = document.getElementById(`ev-${ev}`);
        if (!li) return showError({ message: `Tape row ${ev} is not loaded on this page (the first ${TAPE_ROWS_MAX} rows per twin are).` });
        for (const x of document.querySelectorAll(".tape li.current")) x.classList.remove("current");
        if (li.hidden || li.closest(".tape-col").hidden) {
                $("#tape-text").value = "";
                $("#tape-status").value = "all";
                for (const cb of document.querySelectorAll("#twin-filter input")) cb.checked = true;
                applyTapeFilter();
        }
        li.classList.add("current");
        li.querySelector("details").open = true;
        li.scrollIntoView({ block: "center" });
        li.querySelector("summary").focus();
        say(`Tape row ${ev}.`);
}

async function readTape(id, twin, tp) {
        for (let pages = 0; pages < 10 && tp.n < TAPE_ROWS_MAX; pages++) {
                const q = new URLSearchParams({ twin, limit: "200" });
                if (tp.after) q.set("after", tp.after);
                let r;
                try {
                        r = await api("GET", `/v1/sandboxes/${encodeURIComponent(id)}/events?${q}`);
                } catch (e) {
                        return showError(e);
                }
                for (const ev of r.body) {
                        const li = h("li", { id: `ev-${ev.event_id}`, "data-status": String(ev.status ?? ""), "data-text": `${ev.method || ev.kind} ${ev.path || ""} ${ev.tool || ""}`.toLowerCase() },
                                h("details", {},
                                        h("summary", {}, `${ev.ts.slice(11, 23)} ${ev.method || ev.kind} ${ev.path || ""} ${ev.status ?? ""}`),
                                        h("pre", { tabindex: 0 }, JSON.stringify({ request: ev.request_body, response: ev.response_body }, null, 2))));
                        li.hidden = !rowShown(li);
                        tp.list.append(li);
                        tp.after = ev.event_id;
                        tp.n++;
                }
                tp.count.textContent = tp.n ? `(${tp.n} of ${r.headers.get("X-Pome-Total-Events") || tp.n} rows)` : "(no rows yet)";
                tp.whole = !r.headers.get("X-Pome-Next-After");
                if (tp.whole) return;
        }
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
