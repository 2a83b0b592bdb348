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
let pageFor = null; /* the hash the page on screen was made for */
let clockTimer = null;
let listState = "all";
let lastList = "";
let listPages = 1; /* pages of LIST_PAGE sandboxes shown: "Show more" adds one */
const LIST_PAGE = 100; /* the API's most per page */

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
                el.append(c instanceof Node ? c : document.createTextNode(visible(c)));
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
        /* a refusal that names the valid choices (an unknown seed: details.available) */
        const avail = err.details && Array.isArray(err.details.available) ? err.details.available : null;
        if (avail && avail.length) a.append(h("p", {}, `Available: ${avail.slice(0, 50).join(", ")}${avail.length > 50 ? ", …" : ""}.`));
        if (err.type) a.append(h("p", { class: "muted" }, `${err.status} ${err.type}`));
}

/* Text an API answer holds, with the characters that reorder or hide text (bidi controls,
 * zero-width ones, the BOM) written as \uXXXX, so a tape row or a reason shows what it holds
 * rather than what those characters make it look like. */
const INVISIBLE = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
function visible(text) {
        return String(text).replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
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

/* One control API call; resolves to its Response (2xx) or rejects with an ApiError that
 * carries the API's own message. */
async function request(method, path, body, withKey) {
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
                throw new ApiError(0, { error: { message: `The control API is unreachable (${e.message}): is pomed running? This page keeps trying every ${POLL_MS / 1000} s.` } });
        }
        if (r.ok) return r;
        let json = null;
        try {
                json = JSON.parse(await r.text());
        } catch {
                json = null;
        }
        throw new ApiError(r.status, json);
}

/* request() of a JSON answer; resolves to { body, headers }. */
async function api(method, path, body, withKey) {
        const r = await request(method, path, body, withKey);
        const text = await r.text();
        return { body: text ? JSON.parse(text) : null, headers: r.headers };
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

/* Replaces the page. A new page (a route, not a refresh of the same one) moves focus to its
 * title, so keyboard and screen-reader users start there rather than on <body>. */
function setPage(title, ...content) {
        /* a new page, or the same page made again (a "Loading…" replaced) while its title
         * had the focus */
        const fresh = pageFor !== location.hash || document.activeElement?.id === "page-title";
        pageFor = location.hash;
        document.title = `${title} · Pome`;
        const m = $("#main");
        m.replaceChildren(h("h2", { id: "page-title", tabindex: -1 }, title), ...content);
        if (fresh && !$("#login")) $("#page-title").focus({ preventScroll: true });
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
                        "The first line of pomed's <state_dir>/api-key: ./.pome/api-key for a pomed started in a checkout, /var/lib/pome/api-key for the package (readable by the pome group). Kept in this tab's session storage only."),
                h("button", { type: "submit" }, "Log in"),
        );
        setPage("Log in", form);
        if (loginNotice) showError(loginNotice);
        loginNotice = null;
        input.focus();
}

async function login(ev, input) {
        ev.preventDefault();
        const k = input.value.trim();
        try {
                await api("GET", "/v1/usage", undefined, k);
        } catch (e) {
                showError(e);
                input.setAttribute("aria-invalid", "true");
                input.setAttribute("aria-describedby", "key-help alert");
                input.focus();
                input.addEventListener("input", () => {
                        input.removeAttribute("aria-invalid");
                        input.setAttribute("aria-describedby", "key-help");
                        showError(null);
                }, { once: true });
                return;
        }
        sessionStorage.setItem(KEY_ITEM, k);
        showError(null);
        /* back to the page the key was refused on, if any */
        const back = returnTo && returnTo !== "#/login" ? returnTo : "#/sandboxes";
        returnTo = null;
        if (location.hash === back) route();
        else location.hash = back;
}

let returnTo = null; /* the page a refused key left, to return to after the next login */

/* Forgets the key. err: the API's refusal of it (a 401 from a poll), shown on the login form. */
function logout(err) {
        sessionStorage.removeItem(KEY_ITEM);
        if (err instanceof ApiError) {
                returnTo = location.hash;
                say("Logged out: the key was refused.");
        } else {
                returnTo = null;
                say("Logged out.");
        }
        loginNotice = err instanceof ApiError
                ? { message: `Your key was refused, so you are logged out: ${err.message} Log in again with a key of this deployment.`, status: err.status, type: err.type }
                : null;
        if (location.hash === "#/login") route();
        else location.hash = "#/login";
}

let loginNotice = null; /* why the last logout happened, for the login form to say */

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
                                listPages = 1;
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
                        h("div", { class: "table-wrap" }, table),
                        h("p", { class: "row" },
                                h("span", { id: "list-count", class: "muted" }),
                                h("button", { type: "button", id: "list-more", class: "secondary", hidden: true, onclick: () => {
                                        listPages++;
                                        lastList = "";
                                        refreshList();
                                } }, `Show ${LIST_PAGE} more`))),
        );
        poll(refreshList);
        clockTimer = setInterval(tickClocks, 1000);
}

const SLOTS = 3; /* twins a sandbox may have (the API's limit), one slot each */

function createForm() {
        const slots = [];
        for (let i = 1; i <= SLOTS; i++)
                slots.push(h("div", { class: "twin-choice" },
                        h("label", { for: `slot-${i}` }, `Twin ${i}`),
                        h("select", { id: `slot-${i}`, name: `slot-${i}` },
                                h("option", { value: "" }, "—"),
                                TWINS.map((t) => h("option", { value: t, selected: i === 1 && t === "github" }, t))),
                        h("label", { for: `seed-${i}`, class: "visually-hidden" }, `Seed of twin ${i}`),
                        h("input", { type: "text", id: `seed-${i}`, name: `seed-${i}`, placeholder: "seed (default)", autocomplete: "off" })));
        return h(
                "form",
                { id: "create", class: "card", onsubmit: createSandbox },
                h("fieldset", {},
                        h("legend", {}, "Create a sandbox: one to three twins, each with an optional seed name"),
                        slots),
                h("button", { type: "submit" }, "Create"),
        );
}

async function createSandbox(ev) {
        ev.preventDefault();
        const twins = [];
        const seeds = {};
        for (let i = 1; i <= SLOTS; i++) {
                const t = $(`#slot-${i}`).value;
                const seed = $(`#seed-${i}`).value.trim();
                if (!t) {
                        if (seed) return showError({ message: `Twin ${i} has a seed but no twin: choose its twin or clear its seed.` });
                        continue;
                }
                if (twins.includes(t)) return showError({ message: `${t} is chosen twice: a sandbox has each twin once.` });
                twins.push(t);
                if (seed) seeds[t] = seed;
        }
        if (!twins.length) return showError({ message: "Choose a twin: a sandbox has one to three." });
        const body = { twins };
        if (Object.keys(seeds).length) body.seeds = seeds;
        const submit = $("#create button[type=submit]");
        if (submit.getAttribute("aria-disabled") === "true") return; /* one create at a time */
        submit.setAttribute("aria-disabled", "true");
        submit.textContent = "Creating…";
        try {
                const { body: sb } = await api("POST", "/v1/sandboxes", body);
                showError(null);
                say(`Created ${sb.session_id} with ${sb.twins.join(", ")}.`);
                for (let i = 1; i <= SLOTS; i++) $(`#seed-${i}`).value = "";
                created(sb);
                lastList = "";
                refreshList();
        } catch (e) {
                showError(e);
        } finally {
                submit.removeAttribute("aria-disabled");
                submit.textContent = "Create";
        }
}

/* What a create answered, where it can be seen: the id, each twin's URL, and how an agent
 * gets the secrets (not shown here: `pome sandbox env` prints them, or the Credentials
 * button reads them once, on purpose). */
function created(sb) {
        const box = $("#confirm");
        const close = h("button", { type: "button", class: "secondary", onclick: () => box.replaceChildren() }, "Close");
        const creds = h("div", { id: "created-creds" });
        const show = h("button", { type: "button", class: "secondary", id: "show-creds", onclick: async () => {
                try {
                        const { body: c } = await api("GET", `/v1/sandboxes/${encodeURIComponent(sb.session_id)}/credentials`);
                        const lines = [`POME_SESSION_ID=${c.session_id}`, `POME_AUTH_TOKEN=${c.session_token}`,
                                ...Object.entries(c.per_twin || {}).map(([t, v]) => `POME_${t.toUpperCase()}_REST_URL=${v.rest_url}`)];
                        creds.replaceChildren(h("label", { for: "creds-text" }, "Its variables (secrets included: keep them out of logs)"),
                                h("textarea", { id: "creds-text", rows: lines.length, readonly: true, spellcheck: "false" }, lines.join("\n")));
                        show.remove();
                } catch (e) {
                        showError(e);
                }
        } }, "Show its credentials");
        box.replaceChildren(h("div", { class: "card", id: "created", role: "status" },
                h("h3", { tabindex: -1, id: "created-title" }, "Created ", h("a", { href: `#/run/${sb.session_id}` }, sb.session_id)),
                h("ul", {}, Object.entries(sb.per_twin || {}).map(([t, v]) => h("li", {}, `${t}: `, h("code", {}, v.rest_url)))),
                h("p", { class: "muted" }, "An agent gets its variables (token and URLs) with ", h("code", {}, `pome sandbox env ${sb.session_id}`), "."),
                creds,
                h("div", { class: "row" }, show, close)));
}

/* Reads the list's first listPages pages (newest first, the API's starting_after cursor). */
async function refreshList() {
        const data = [];
        let more = false, node = null;
        try {
                for (let p = 0; p < listPages; p++) {
                        const q = new URLSearchParams({ state: listState, limit: String(LIST_PAGE) });
                        if (data.length) q.set("starting_after", data[data.length - 1].session_id);
                        const { body: list } = await api("GET", `/v1/sandboxes?${q}`);
                        data.push(...list.data);
                        more = list.has_more;
                        node = list.node || null; /* a fleet node lists its own sandboxes */
                        if (!more) break;
                }
        } catch (e) {
                if (e.status === 401) return logout(e);
                return showError(e);
        }
        const tbody = $("#sandboxes tbody");
        if (!tbody) return;
        $("#list-more").hidden = !more;
        $("#list-count").textContent = `${data.length}${more ? "+" : ""} ${data.length === 1 ? "sandbox" : "sandboxes"}${listState === "all" ? "" : ` ${listState}`}` +
                (node ? ` on fleet node ${node} (each node lists its own)` : "");
        const sig = JSON.stringify(data.map((s) => [s.session_id, s.state, s.reason, s.expires_at]));
        if (sig === lastList) return; /* the same rows: keep focus where it is */
        lastList = sig;
        tbody.replaceChildren(
                ...(data.length ? data.map(sandboxRow) : [h("tr", {}, h("td", { colspan: 7 }, "No sandboxes."))]),
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
                h("td", {}, h("time", { datetime: s.created_at }, utc(new Date(s.created_at)))),
                h("td", {}, open && s.expires_at ? h("span", { class: "clock", "data-expires": s.expires_at }, countdown(s.expires_at)) : "—"),
                h("td", {}, open ? h("div", { class: "actions" }, [
                        h("button", { type: "button", class: "finalize", "aria-label": `Finalize ${s.session_id}`, onclick: () => finalizeForm(s.session_id) }, "Finalize"),
                        h("button", { type: "button", class: "stop", "aria-label": `Stop ${s.session_id}`, onclick: () => stopSandbox(s.session_id) }, "Stop"),
                ]) : ""),
        );
}

/* The button a dialog for id was opened from, to return focus to when it closes. */
function focusBack(id, cls) {
        document.querySelector(`#sandboxes tr[data-id="${id}"] button.${cls}`)?.focus();
}

async function stopSandbox(id, token) {
        showError(null);
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
        await refreshList();
        /* the dialog and the Stop button are gone: focus goes to the sandbox's row */
        document.querySelector(`#sandboxes tr[data-id="${id}"] a`)?.focus();
}

/* The CLI's refusal: the 409's own message, then a discard only when the user confirms it
 * (or a finalize instead, which keeps the run). */
function confirmDiscard(id, err) {
        const box = $("#confirm");
        const cancel = () => {
                box.replaceChildren();
                say("Kept open.");
                focusBack(id, "stop");
        };
        box.replaceChildren(
                h("section", { class: "card warn", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-msg", "data-for": id, "data-from": "stop" },
                        h("h3", { id: "confirm-title", tabindex: "-1" }, `Discard the run of ${id}?`),
                        h("p", { id: "confirm-msg" }, `${id} is still open, so its run (its tapes and its twins' worlds) is not kept yet. ` +
                                "Discarding stops it and throws the run away; finalizing stops it, keeps the run and grades it."),
                        h("details", {}, h("summary", {}, "What pomed answered"), h("p", { class: "muted", id: "confirm-api" }, `pomed: ${err.message}`)),
                        h("div", { class: "row" },
                                h("button", { type: "button", class: "danger", id: "confirm-discard", onclick: () => stopSandbox(id, err.details.discard_token) }, "Discard the run"),
                                h("button", { type: "button", class: "secondary", id: "confirm-finalize", onclick: () => finalizeForm(id) }, "Finalize instead"),
                                h("button", { type: "button", id: "confirm-cancel", onclick: cancel }, "Cancel"))),
        );
        $("#confirm-title").focus();
}

/* Finalize: grade the run against a task (its markdown), keeping tapes, final states and verdict. */
function finalizeForm(id) {
        showError(null);
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
                                h("button", { type: "button", class: "secondary", onclick: () => {
                                        box.replaceChildren();
                                        focusBack(id, "finalize");
                                } }, "Cancel"))),
        );
        box.firstChild.dataset.for = id;
        box.firstChild.dataset.from = "finalize";
        task.focus();
}

/* ---- usage ---- */

let lastUsage = null; /* when the Usage page last read /v1/usage */

/* A time as the list shows it: "2026-12-07 00:52:42 UTC". */
function utc(d) {
        if (Number.isNaN(d.getTime())) return "—";
        return d.toISOString().slice(0, 19).replace("T", " ") + " UTC";
}

function renderUsage() {
        lastUsage = null;
        setPage("Usage", h("dl", { id: "usage", class: "card stats" }, "Loading…"),
                h("p", { class: "muted", id: "usage-when" }),
                h("p", { class: "muted" }, "GET /v1/usage's numbers: the one counter D-Bus (sh.pome.Team1 SessionsUsed, SessionsQuota) and /metrics (pome_slots_used, pome_slots_quota) read too."));
        poll(async () => {
                let u;
                try {
                        ({ body: u } = await api("GET", "/v1/usage"));
                } catch (e) {
                        if (e.status === 401) return logout(e);
                        const when = $("#usage-when");
                        if (when && lastUsage) when.textContent = `Stale: these numbers were read at ${lastUsage}; the reads since fail.`;
                        return showError(e);
                }
                showError(null);
                lastUsage = utc(new Date());
                const dl = $("#usage");
                if (!dl) return;
                const item = (label, v, id) => [h("dt", {}, label), h("dd", { id }, String(v))];
                dl.replaceChildren(
                        ...item("Team", u.team_id, "usage-team"),
                        ...item("Sessions used (open sandboxes)", u.sessions_used, "usage-used"),
                        ...item("Quota", u.sessions_quota, "usage-quota"),
                        ...item("Remaining", u.sessions_remaining, "usage-remaining"),
                        /* a fleet node (pomed.conf fleet:) also says its own share */
                        ...(u.node ? [...item("This node", u.node, "usage-node"), ...item("Used on this node", u.sessions_used_here, "usage-used-here")] : []),
                        h("dt", {}, h("label", { for: "usage-meter" }, "Slots in use")),
                        h("dd", {}, h("meter", { id: "usage-meter", min: 0, max: u.sessions_quota || 1, value: u.sessions_used, high: Math.max(0, (u.sessions_quota || 1) - 1) },
                                `${u.sessions_used} of ${u.sessions_quota}`)),
                );
                $("#usage-when").textContent = `Read at ${lastUsage}, every ${POLL_MS / 1000} s.`;
        });
}

/* ---- checks ---- */

async function renderChecks() {
        setPage("Checks", h("p", {}, "Loading…"));
        let c;
        try {
                ({ body: c } = await api("GET", "/v1/checks"));
        } catch (e) {
                if (e.status === 401) return logout(e);
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
                                                h("button", { type: "button", class: "copy", "aria-label": `Copy the task line of ${ck.id}`, onclick: (ev) => copy(`- [code:${ck.twin}] ${ck.template}`, ev.currentTarget) }, "Copy"),
                                                h("p", { class: "muted" }, `${ck.id} · ${ck.substrate} · ${ck.polarity}`),
                                                h("p", {}, ck.description))))));
        setPage("Checks", h("p", {}, "Criteria a task's ## Success Criteria may name. Copy gives the task line (- [code:<twin>] …): fill in its {placeholders}."), ...sections);
}

/* Copies text, and says so on the button for 2 s (and to a screen reader). */
async function copy(text, button) {
        try {
                await navigator.clipboard.writeText(text);
                say(`Copied: ${text}`);
                button.textContent = "Copied";
                setTimeout(() => (button.textContent = "Copy"), 2000);
        } catch (e) {
                showError({ message: `Cannot copy (${e.message}); select the template instead.` });
        }
}

/* ---- run: each twin's tape as a column ----
 *
 * A tape may hold 100 000 rows. A column is as tall as its tape (a spacer of total × ROW_H
 * px) and puts in the DOM only the rows in view; it reads the pages in view by row number
 * (?offset=, PAGE rows each) and keeps at most CACHE_PAGES of them, so a far scroll reads
 * one page, not every page before it. A row's request and response are read again, alone,
 * when it is opened. A filter searches the whole tape (SCAN_PAGE rows a read, in the
 * background, with its progress in the column's count) and keeps only the rows it matches.
 */

const ROW_H = 26; /* px: .tape-row's height in app.css */
const PAGE = 100; /* rows of a page read for the view: the first paint waits for one */
const SCAN_PAGE = 1000; /* rows of a read by a filter's search (the API's most) */
const CACHE_PAGES = 50; /* pages of row summaries a column keeps */

let runTapes = {}; /* twin -> Tape column state, for the filters and evidence links */
let runId = null;

function renderRun(id) {
        runId = id;
        runTapes = {};
        const cols = h("div", { class: "tapes", id: "tapes" });
        const head = h("div", { id: "run-head", class: "row" });
        const verdict = h("section", { id: "verdict", "aria-labelledby": "verdict-title", hidden: true });
        const twinBoxes = h("span", { class: "row", id: "twin-filter" });
        const filters = h("form", { class: "row filters", id: "tape-filters", onsubmit: (ev) => ev.preventDefault(), oninput: applyTapeFilter, onchange: applyTapeFilter },
                h("label", { for: "tape-tool" }, "Tool"),
                h("input", { type: "text", id: "tape-tool", list: "tape-tools", placeholder: "any", autocomplete: "off", size: 16 }),
                h("datalist", { id: "tape-tools" }),
                h("label", { for: "tape-text" }, "Method or path"),
                h("input", { type: "text", id: "tape-text", placeholder: "any", autocomplete: "off", size: 16 }),
                h("label", { for: "tape-status" }, "Status"),
                h("select", { id: "tape-status" }, ["all", "2xx", "3xx", "4xx", "5xx"].map((x) => h("option", { value: x }, x))),
                h("fieldset", { class: "inline" }, h("legend", { class: "visually-hidden" }, "Twins shown"), twinBoxes));
        const download = h("button", { type: "button", id: "download", class: "secondary", onclick: () => downloadRun(id) }, "Download the run directory (.tar)");
        setPage(`Run ${id}`, h("div", { class: "row run-bar" }, head, download), verdict, filters, cols);
        let verdictRead = false;
        const tapes = runTapes;
        poll(async () => {
                let s;
                try {
                        ({ body: s } = await api("GET", `/v1/sandboxes/${encodeURIComponent(id)}`));
                } catch (e) {
                        if (e.status === 401) return logout(e);
                        showError(e);
                        /* no such run (never, or discarded): nothing here to read or filter */
                        if (e.status === 404 && !Object.keys(tapes).length) {
                                setPage(`Run ${id}`, h("p", {}, "There is no run to show here. ", h("a", { href: "#/sandboxes" }, "Back to the sandboxes")));
                                return false;
                        }
                        return;
                }
                if (runTapes !== tapes || !$("#tapes")) return false;
                head.replaceChildren(h("p", {}, `State ${s.state}${s.reason ? ` (${s.reason})` : ""} · twins ${s.twins.join(", ")} · ${s.calls} ${s.calls === 1 ? "call" : "calls"}`));
                for (const t of Object.values(tapes)) t.ended = !OPEN.has(s.state);
                for (const t of s.twins) {
                        if (!tapes[t]) {
                                tapes[t] = tapeColumn(id, t);
                                twinBoxes.append(h("input", { type: "checkbox", id: `show-${t}`, "data-twin": t, checked: true }),
                                        h("label", { for: `show-${t}` }, t));
                                cols.append(tapes[t].section);
                        }
                }
                /* every column's end at once: the first paint waits for the slowest only */
                await Promise.all(s.twins.map((t) => readEnd(tapes[t])));
                const ended = !OPEN.has(s.state);
                if (s.verdict && !verdictRead) {
                        verdictRead = true;
                        try {
                                const { body: v } = await api("GET", `/v1/sandboxes/${encodeURIComponent(id)}/verdict`);
                                showVerdict(verdict, v);
                                showSummary(verdict, id);
                        } catch (e) {
                                verdictRead = false;
                                showError(e);
                        }
                }
                /* an ended run's tapes and verdict no longer change: stop asking */
                if (ended && s.twins.every((t) => tapes[t].known) && (verdictRead || !s.verdict)) return false;
        });
}

function tapeColumn(id, twin) {
        const spacer = h("div", { class: "tape-spacer", role: "list", "aria-label": `${twin} tape` });
        const scroller = h("div", { class: "tape", id: `tape-${twin}`, tabindex: 0, "aria-label": `${twin} tape, scrollable` }, spacer);
        const count = h("span", { class: "muted", id: `count-${twin}` });
        const detail = h("div", { class: "tape-detail", id: `detail-${twin}`, hidden: true });
        const tp = {
                id, twin, total: 0, known: false, read: 0, pages: new Map(), reading: new Map(), failedAt: 0,
                filter: null, open: -1, focusK: -1, ended: false, drawn: "", scroller, spacer, count, detail, frame: 0,
        };
        tp.section = h("section", { class: "tape-col", id: `col-${twin}`, "aria-labelledby": `tape-h-${twin}` },
                h("h3", { id: `tape-h-${twin}` }, `${twin} `, count), scroller, detail);
        /* Up and Down move between rows, Home and End to the ends: the rows out of view are
         * not in the DOM, so Tab alone would stop at the last one drawn */
        spacer.addEventListener("focusin", (ev) => {
                const k = Number(ev.target?.dataset?.row);
                if (!Number.isNaN(k) && tp.focusK !== k) {
                        tp.focusK = k;
                        for (const b of spacer.querySelectorAll(".tape-row")) b.tabIndex = b === ev.target ? 0 : -1;
                }
        });
        /* from the scroll box itself: a key that moves goes to the rows */
        scroller.addEventListener("keydown", (ev) => {
                if (ev.target !== scroller || !["ArrowDown", "Enter", "Home", "End"].includes(ev.key)) return;
                const b = spacer.querySelector(`.tape-row[data-row="${tp.focusK}"]`) || spacer.querySelector(".tape-row");
                if (!b) return;
                ev.preventDefault();
                if (ev.key === "Home" || ev.key === "End") return focusRow(tp, ev.key === "Home" ? 0 : (tp.filter ? tp.filter.matches.length : tp.total) - 1);
                b.focus();
        });
        detail.addEventListener("keydown", (ev) => {
                if (ev.key === "Escape" && tp.open >= 0) closeRow(tp);
        });
        spacer.addEventListener("keydown", (ev) => {
                if (ev.key === "Escape" && tp.open >= 0) return closeRow(tp);
                const at = Number(document.activeElement?.dataset?.row);
                const n = tp.filter ? tp.filter.matches.length : tp.total;
                const pos = tp.filter ? tp.filter.matches.findIndex((m) => m.k === at) : at;
                const to = { ArrowDown: pos + 1, ArrowUp: pos - 1, Home: 0, End: n - 1 }[ev.key];
                if (to === undefined || Number.isNaN(at) || to < 0 || to >= n) return;
                ev.preventDefault();
                focusRow(tp, to);
        });
        scroller.addEventListener("scroll", () => {
                if (!tp.frame) tp.frame = requestAnimationFrame(() => {
                        tp.frame = 0;
                        draw(tp);
                });
        });
        return tp;
}

function summarize(ev) {
        const what = `${ev.method || ev.kind} ${ev.path || ""}`;
        /* the path below the twin's mount (/<twin>/s/<sandbox id>): the rest is the same on
         * every row; the full row is one click away */
        const short = `${ev.method || ev.kind} ${(ev.path || "").replace(/^\/[a-z]+\/s\/[A-Za-z0-9_]+(?=\/|$)/, "") || "/"}`;
        return {
                id: ev.event_id,
                status: String(ev.status ?? ""),
                tool: ev.tool || "",
                label: `${(ev.ts || "").slice(11, 23)} ${ev.status ?? "—"} ${short}${ev.tool ? ` · ${ev.tool}` : ""}`,
                full: `${ev.ts || ""} ${what} ${ev.status ?? ""}${ev.tool ? ` · ${ev.tool}` : ""}`,
                text: what.toLowerCase(),
        };
}

/* GET a page of the column's tape: rows from row number offset (at most limit), or the row
 * after event id after. Resolves to { rows, first, total } (raw: { bytes, first, total }, the
 * answer's bytes unparsed); rejects with an ApiError. */
async function readRows(tp, { offset, after, limit, raw }) {
        const q = new URLSearchParams({ twin: tp.twin, limit: String(limit) });
        if (after !== undefined) q.set("after", after);
        else q.set("offset", String(offset));
        const r = await request("GET", `/v1/sandboxes/${encodeURIComponent(tp.id)}/events?${q}`);
        const total = Number(r.headers.get("X-Pome-Total-Events"));
        const first = Number(r.headers.get("X-Pome-Offset"));
        if (raw) return { bytes: new Uint8Array(await r.arrayBuffer()), first, total };
        const rows = await r.json();
        if (!Number.isNaN(total)) setTotal(tp, total);
        tp.read += rows.length;
        return { rows, first, total };
}

/* A new length of the tape. Rows never change once written, so every page read stays; a
 * page read short (the end of the tape then) is read again by draw once rows follow it. */
function setTotal(tp, total) {
        const first = !tp.known;
        tp.known = true;
        if (total === tp.total) {
                if (first) draw(tp);
                return;
        }
        tp.total = total;
        if (tp.filter && tp.filter.done && tp.filter.searched < total) search(tp, tp.filter);
        draw(tp);
}

/* The tape's length (one row read at the end): the poll's question to an open run. */
async function readEnd(tp) {
        try {
                await readRows(tp, { offset: tp.total, limit: 1 });
        } catch (e) {
                showError(e);
        }
}

/* Page p's row summaries, read once (concurrent asks share the read); kept least recently
 * used first out. Resolves when they are there (or the read failed). */
function ensurePage(tp, p) {
        const have = tp.pages.get(p);
        if (have) {
                tp.pages.delete(p);
                tp.pages.set(p, have);
                /* a page read short at the tape's end is read again once rows follow it; its
                 * rows stay shown meanwhile */
                if (have.length === PAGE || p * PAGE + have.length >= tp.total) return Promise.resolve();
        }
        if (tp.reading.has(p)) return tp.reading.get(p);
        if (Date.now() - tp.failedAt < POLL_MS) return Promise.resolve();
        const done = (async () => {
                try {
                        const { rows } = await readRows(tp, { offset: p * PAGE, limit: PAGE });
                        tp.pages.set(p, rows.map(summarize));
                        while (tp.pages.size > CACHE_PAGES) tp.pages.delete(tp.pages.keys().next().value);
                        const list = $("#tape-tools");
                        const seen = new Set([...(list?.options || [])].map((o) => o.value));
                        for (const r of tp.pages.get(p)) if (r.tool && !seen.has(r.tool) && seen.size < 200) {
                                seen.add(r.tool);
                                list.append(h("option", { value: r.tool }));
                        }
                } catch (e) {
                        tp.failedAt = Date.now();
                        showError(e);
                } finally {
                        tp.reading.delete(p);
                }
                draw(tp);
        })();
        tp.reading.set(p, done);
        return done;
}

/* Scrolls position i of the column's list (row i, or the filter's i-th match) into view and
 * focuses its row once it is read. */
async function focusRow(tp, i) {
        const top = i * ROW_H, sc = tp.scroller;
        if (top < sc.scrollTop) sc.scrollTop = top;
        else if (top + ROW_H > sc.scrollTop + sc.clientHeight) sc.scrollTop = top + ROW_H - sc.clientHeight;
        const k = tp.filter ? tp.filter.matches[i]?.k : i;
        if (k === undefined) return;
        if (!tp.filter) await ensurePage(tp, Math.floor(k / PAGE));
        draw(tp);
        tp.spacer.querySelector(`[data-row="${k}"]`)?.focus();
}

function rowAt(tp, k) {
        const rows = tp.pages.get(Math.floor(k / PAGE));
        return rows && rows[k % PAGE];
}

function filterKey() {
        return JSON.stringify([($("#tape-tool")?.value || "").trim().toLowerCase(), ($("#tape-text")?.value || "").trim().toLowerCase(), $("#tape-status")?.value || "all"]);
}

function matcher() {
        const [tool, text, st] = JSON.parse(filterKey());
        if (!tool && !text && st === "all") return null;
        return (row) => (!tool || row.tool.toLowerCase().includes(tool)) && (!text || row.text.includes(text)) && (st === "all" || row.status.startsWith(st[0]));
}

/* Reads the tape from where the filter's search stopped to its end, a SCAN_PAGE at a time,
 * keeping the rows it matches (their row numbers and summaries); stops when the filter
 * changes. */
async function search(tp, f) {
        if (f.running) return;
        f.running = true;
        f.done = false;
        try {
                while (tp.filter === f && f.searched < tp.total) {
                        let got;
                        try {
                                got = await readRows(tp, { offset: f.searched, limit: SCAN_PAGE });
                        } catch (e) {
                                showError(e);
                                break;
                        }
                        if (tp.filter !== f || !got.rows.length) break;
                        got.rows.forEach((ev, j) => {
                                const row = summarize(ev);
                                if (f.match(row)) f.matches.push({ k: got.first + j, row });
                        });
                        f.searched = got.first + got.rows.length;
                        draw(tp);
                }
        } finally {
                f.running = false;
                f.done = true;
                if (tp.filter === f) {
                        draw(tp);
                        say(`${tp.twin}: ${f.matches.length} of ${tp.total} ${tp.total === 1 ? "row matches" : "rows match"} the filters.`);
                }
        }
}

/* Puts the rows in view (and a few either side) in the DOM, nothing else; asks for the pages
 * in view that are not read yet. */
function draw(tp) {
        const f = tp.filter;
        const n = f ? f.matches.length + (f.done ? 0 : 1) : tp.total;
        tp.spacer.style.height = `${n * ROW_H}px`;
        const first = Math.max(0, Math.floor(tp.scroller.scrollTop / ROW_H) - 5);
        const last = Math.min(n, first + Math.ceil((tp.scroller.clientHeight || 600) / ROW_H) + 10);
        const items = [];
        for (let i = first; i < last; i++) {
                const m = f ? f.matches[i] : null;
                const k = f ? (m ? m.k : -1) : i;
                const row = f ? m && m.row : rowAt(tp, i);
                if (!row) {
                        if (!f) ensurePage(tp, Math.floor(i / PAGE));
                        items.push(h("div", { class: "tape-item pending", role: "listitem" }, f ? `searching… (${f.searched} of ${tp.total} rows)` : "reading…"));
                        continue;
                }
                items.push(h("div", { class: "tape-item", role: "listitem", "aria-posinset": k + 1, "aria-setsize": tp.total },
                        h("button", {
                                type: "button",
                                class: `tape-row${tp.open === k ? " current" : ""}${row.status >= "400" && row.status.length === 3 ? " failed-call" : ""}`,
                                id: `ev-${row.id}`,
                                "data-row": k,
                                "data-status": row.status,
                                title: row.full,
                                "aria-expanded": tp.open === k ? "true" : "false",
                                "aria-controls": `detail-${tp.twin}`,
                                onclick: () => openRow(tp, k, row),
                        }, row.label)));
        }
        /* the roving tab stop: one row of the column takes Tab (the focused one while it is
         * drawn, else the first drawn), and the arrows move it */
        const buttons = items.map((el) => el.firstChild).filter((b) => b && b.tagName === "BUTTON");
        if (buttons.length && !buttons.some((b) => Number(b.dataset.row) === tp.focusK)) tp.focusK = Number(buttons[0].dataset.row);
        for (const b of buttons) b.tabIndex = Number(b.dataset.row) === tp.focusK ? 0 : -1;
        if (f && f.done && !f.matches.length && tp.total) {
                tp.spacer.style.height = `${ROW_H}px`;
                items.push(h("div", { class: "tape-item pending", role: "listitem" }, `No row of ${tp.total} matches the filters.`));
        }
        /* positions set through the CSSOM: the CSP refuses style attributes in markup, not this */
        items.forEach((el, j) => {
                el.style.top = `${(first + j) * ROW_H}px`;
        });
        /* the same rows as drawn last: leave the DOM (and the focus in it) alone */
        const sig = JSON.stringify([first, tp.open, tp.focusK, items.map((el) => el.textContent + (el.firstChild?.className || ""))]);
        if (sig !== tp.drawn) {
                tp.drawn = sig;
                const focused = document.activeElement && tp.spacer.contains(document.activeElement) ? document.activeElement.id : null;
                tp.spacer.replaceChildren(...items);
                if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
        } else for (const el of tp.spacer.children) if (el.hasAttribute("aria-setsize")) el.setAttribute("aria-setsize", tp.total);
        const rows = `${tp.total} ${tp.total === 1 ? "row" : "rows"}`;
        tp.count.textContent = !tp.known ? "(reading…)"
                : !tp.total ? (tp.ended ? "(no rows)" : "(no rows yet)")
                : f ? `(${rows}, ${f.matches.length} ${f.matches.length === 1 ? "match" : "matches"}${f.done ? "" : `, ${f.searched} searched`})`
                : `(${rows}${tp.read < tp.total ? `, ${tp.read} loaded` : ""})`;
}

/* Shows row k's request and response below the column: the row is read again, alone. */
async function openRow(tp, k, row) {
        tp.open = k;
        draw(tp);
        tp.detail.hidden = false;
        tp.detail.replaceChildren(h("p", { class: "muted" }, `Reading ${row.id}…`));
        let ev;
        try {
                ({ rows: [ev] } = await readRows(tp, { offset: k, limit: 1 }));
        } catch (e) {
                return showError(e);
        }
        if (!ev || tp.open !== k) return;
        tp.detail.replaceChildren(
                h("div", { class: "row" }, h("h4", {}, row.full), h("button", { type: "button", class: "secondary", onclick: () => closeRow(tp) }, "Close")),
                h("pre", { tabindex: 0, "aria-label": `${row.id}: request and response` },
                        JSON.stringify({ event_id: ev.event_id, tool: ev.tool, request_headers: ev.request_headers, request: ev.request_body, response: ev.response_body, state_delta: ev.state_delta }, null, 2)));
}

function closeRow(tp, refocus = true) {
        const k = tp.open;
        tp.open = -1;
        tp.detail.hidden = true;
        draw(tp);
        if (refocus) tp.spacer.querySelector(`[data-row="${k}"]`)?.focus();
}

function applyTapeFilter() {
        const match = matcher();
        const key = filterKey();
        for (const tp of Object.values(runTapes)) {
                if ((tp.filter ? tp.filter.key : null) === (match ? key : null)) continue;
                tp.filter = match ? { key, match, matches: [], searched: 0, done: false, running: false } : null;
                tp.scroller.scrollTop = 0;
                if (tp.open >= 0) closeRow(tp, false);
                draw(tp);
                if (tp.filter) search(tp, tp.filter);
        }
        for (const cb of document.querySelectorAll("#twin-filter input")) $(`#col-${cb.dataset.twin}`).hidden = !cb.checked;
}

/* The verdict's counts in words: what made it pass, fail or stay incomplete. */
function verdictCounts(v) {
        const list = v.criteria || [];
        const by = new Map();
        for (const c of list) by.set(c.status, (by.get(c.status) || 0) + 1);
        const parts = [...by].map(([st, n]) => `${n} ${st}`);
        const of = `${list.length} ${list.length === 1 ? "criterion" : "criteria"}: `;
        const threshold = v.task && v.task.pass_threshold !== undefined ? ` A pass needs a score of ${v.task.pass_threshold}` +
                (v.state === "incomplete" ? " and every criterion evaluated: the reasons say which were not." : ".") : "";
        return `${of}${parts.join(", ") || "none"}.${threshold}`;
}

function showVerdict(sec, v) {
        const SHOWN = 5; /* evidence links a criterion shows before "N more" */
        const evidence = (c) => {
                const all = [
                        ...(c.evidence_state_paths || []).map((p) =>
                                h("button", { type: "button", class: "evidence link state-path", "data-path": p, onclick: () => showStateValue(c.twin, p) }, `${c.twin}${p}`)),
                        ...(c.evidence_event_ids || []).map((ev) =>
                                h("button", { type: "button", class: "evidence link", "data-event": ev, "data-twin": c.twin, onclick: () => jumpToRow(c.twin, ev) }, `${c.twin} tape row ${ev}`)),
                ];
                if (all.length <= SHOWN + 1) return all;
                const more = h("button", { type: "button", class: "link more", onclick: () => {
                        more.replaceWith(...all.slice(SHOWN));
                        all[SHOWN].focus();
                } }, `${all.length - SHOWN} more`);
                return [...all.slice(0, SHOWN), more];
        };
        sec.hidden = false;
        sec.replaceChildren(
                h("h3", { id: "verdict-title" }, `Verdict: ${v.state}${v.score !== undefined ? `, score ${Math.round(v.score)}` : ""}`),
                h("p", { id: "verdict-counts" }, verdictCounts(v)),
                h("div", { class: "table-wrap" }, h("table", { id: "criteria" },
                        h("caption", { class: "visually-hidden" }, "Criteria of the verdict"),
                        h("thead", {}, h("tr", {}, ["Criterion", "Twin", "Status", "Reason", "Evidence"].map((c) => h("th", { scope: "col" }, c)))),
                        h("tbody", {}, (v.criteria || []).map((c) =>
                                h("tr", { "data-status": c.status },
                                        h("td", {}, c.text),
                                        h("td", {}, c.twin || ""),
                                        h("td", {}, h("span", { class: `status status-${c.status}` }, c.status),
                                                c.already_true_in_seed ? h("span", { class: "muted" }, c.status === "passed" ? " · it already held in the seed" : " · it held in the seed; the run broke it") : ""),
                                        h("td", {}, c.reason || ""),
                                        h("td", { class: "evidence-cell" }, evidence(c))))))),
                h("div", { id: "state-value", class: "card", hidden: true, tabindex: -1 }),
        );
}

/* The run's summary.md (GET …/summary), as the text it is, folded under the verdict. */
async function showSummary(sec, id) {
        let text;
        try {
                text = await (await request("GET", `/v1/sandboxes/${encodeURIComponent(id)}/summary`)).text();
        } catch (e) {
                if (e.status !== 404) showError(e);
                return;
        }
        sec.append(h("details", { id: "summary", class: "card" },
                h("summary", {}, "Summary (summary.md)"),
                h("pre", { tabindex: 0, "aria-label": "summary.md" }, text)));
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
        const close = () => {
                box.hidden = true;
                opener?.focus();
        };
        const opener = document.activeElement;
        box.onkeydown = (ev) => {
                if (ev.key === "Escape") close();
        };
        box.replaceChildren(
                h("div", { class: "row" }, h("h4", {}, `${twin}'s final state at ${pointer}`),
                        h("button", { type: "button", class: "secondary", id: "state-value-close", onclick: close }, "Close")),
                h("pre", { id: "state-value-json" }, v === undefined ? "(not in the final state)" : JSON.stringify(v, null, 2)));
        box.focus();
}

/* Follows an evidence link: finds the row's number (the page after it says where it starts),
 * clears the filters, scrolls the row into view, opens it and moves focus to it. */
async function jumpToRow(twin, ev) {
        const tp = runTapes[twin];
        if (!tp) return showError({ message: `No tape column for ${twin}.` });
        let k;
        try {
                k = (await readRows(tp, { after: ev, limit: 1 })).first - 1;
        } catch (e) {
                return showError(e.status === 422 ? { message: `Tape row ${ev} is not on ${twin}'s tape.` } : e);
        }
        $("#tape-tool").value = "";
        $("#tape-text").value = "";
        $("#tape-status").value = "all";
        for (const cb of document.querySelectorAll("#twin-filter input")) cb.checked = true;
        applyTapeFilter();
        tp.scroller.scrollTop = Math.max(0, k * ROW_H - tp.scroller.clientHeight / 2);
        await ensurePage(tp, Math.floor(k / PAGE));
        const row = rowAt(tp, k);
        if (!row) return showError({ message: `Tape row ${ev} cannot be read.` });
        await openRow(tp, k, row);
        document.getElementById(`ev-${ev}`)?.focus();
        say(`Tape row ${ev} (row ${k + 1} of ${tp.total} on ${twin}'s tape).`);
}

/* ---- the run directory, as a tar file made here ----
 *
 * What `pome run collect` writes from the same API, under <id>/: each twin's tape
 * (<twin>.tape.jsonl: the rows as the tape file holds them, one per line) and final state
 * (<twin>.final.json), verdict.json, summary.md and agent-reply.txt when the run has them,
 * and sandbox.json (the sandbox's record). The tape is read SCAN_PAGE rows a request.
 */

/* A POSIX ustar archive (POSIX.1-2001, pax's "ustar" format) of files [{name, parts}] (the
 * file's bytes as a list of Uint8Arrays; parts null: a directory), as the parts of a Blob: a
 * 512-byte header and the data padded to 512 per file, then two zero blocks; nothing is
 * copied. Names are at most 100 bytes (ours are "<id>/<twin>.tape.jsonl"). */
function tarParts(files, mtime) {
        const enc = new TextEncoder();
        const parts = [];
        const put = (hd, off, len, str) => hd.set(enc.encode(str).subarray(0, len), off);
        const octal = (n, len) => n.toString(8).padStart(len - 1, "0") + "\0";
        for (const f of files) {
                const hd = new Uint8Array(512);
                const dir = f.parts === null;
                const size = dir ? 0 : f.parts.reduce((a, b) => a + b.length, 0);
                put(hd, 0, 100, f.name);
                put(hd, 100, 8, octal(dir ? 0o755 : 0o644, 8));
                put(hd, 108, 8, octal(0, 8));
                put(hd, 116, 8, octal(0, 8));
                put(hd, 124, 12, octal(size, 12));
                put(hd, 136, 12, octal(mtime, 12));
                put(hd, 148, 8, "        ");
                hd[156] = dir ? 0x35 : 0x30;
                put(hd, 257, 6, "ustar\0");
                put(hd, 263, 2, "00");
                const sum = hd.reduce((a, b) => a + b, 0);
                put(hd, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
                parts.push(hd);
                if (dir) continue;
                parts.push(...f.parts);
                if (size % 512) parts.push(new Uint8Array(512 - (size % 512)));
        }
        parts.push(new Uint8Array(1024));
        return parts;
}

/* The rows of one events answer ("[row,row]", each row its tape line with the newline made
 * a comma) back as the tape's lines, byte for byte: the commas between rows are the ones
 * outside every string, object and array. */
function tapeLines(bytes) {
        const out = [];
        let depth = 0, inStr = false, esc = false, start = 1;
        for (let i = 0; i < bytes.length; i++) {
                const c = bytes[i];
                if (inStr) {
                        if (esc) esc = false;
                        else if (c === 0x5c) esc = true;
                        else if (c === 0x22) inStr = false;
                } else if (c === 0x22) inStr = true;
                else if (c === 0x7b || c === 0x5b) depth++;
                else if (c === 0x7d || c === 0x5d) {
                        depth--;
                        if (depth === 0 && i > start) out.push(bytes.subarray(start, i));
                } else if (c === 0x2c && depth === 1) {
                        out.push(bytes.subarray(start, i));
                        start = i + 1;
                }
        }
        return out.flatMap((line) => [line, new Uint8Array([0x0a])]);
}

async function downloadRun(id) {
        const button = $("#download");
        if (button.getAttribute("aria-disabled") === "true") return;
        button.setAttribute("aria-disabled", "true");
        const enc = new TextEncoder();
        const files = [{ name: `${id}/`, parts: null }];
        const file = async (name, path) => {
                try {
                        const r = await request("GET", `/v1/sandboxes/${encodeURIComponent(id)}${path}`);
                        files.push({ name: `${id}/${name}`, parts: [new Uint8Array(await r.arrayBuffer())] });
                } catch (e) {
                        if (e.status !== 404) throw e; /* a run without a verdict, a summary… */
                }
        };
        try {
                const { body: s } = await api("GET", `/v1/sandboxes/${encodeURIComponent(id)}`);
                files.push({ name: `${id}/sandbox.json`, parts: [enc.encode(`${JSON.stringify(s, null, 2)}\n`)] });
                for (const t of s.twins) {
                        const parts = [];
                        for (let off = 0; ; ) {
                                say(`Downloading ${t}'s tape: ${off} rows…`);
                                const got = await readRows({ id, twin: t }, { offset: off, limit: SCAN_PAGE, raw: true });
                                const lines = tapeLines(got.bytes);
                                if (!lines.length) break;
                                parts.push(...lines);
                                off += lines.length / 2;
                                if (off >= got.total) break;
                        }
                        files.push({ name: `${id}/${t}.tape.jsonl`, parts });
                        if (!OPEN.has(s.state)) await file(`${t}.final.json`, `/state?twin=${encodeURIComponent(t)}`);
                }
                await file("verdict.json", "/verdict");
                await file("summary.md", "/summary");
                await file("agent-reply.txt", "/agent-reply");
                const mtime = Math.floor(Date.now() / 1000);
                const url = URL.createObjectURL(new Blob(tarParts(files, mtime), { type: "application/x-tar" }));
                const a = h("a", { href: url, download: `${id}.tar`, hidden: true });
                document.body.append(a);
                a.click();
                a.remove();
                setTimeout(() => URL.revokeObjectURL(url), 60000);
                say(`Downloaded ${id}.tar: ${files.length - 1} files.`);
        } catch (e) {
                showError(e);
        } finally {
                button.removeAttribute("aria-disabled");
        }
}

/* ---- routing ---- */

function route() {
        stopTimers();
        showError(null);
        const hash = location.hash || "#/sandboxes";
        if (!key()) {
                if (hash !== "#/login") returnTo = hash;
                return renderLogin();
        }
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
        const { for: id, from } = box.firstChild.dataset || {};
        box.replaceChildren();
        say("Cancelled.");
        if (id && from) focusBack(id, from);
});

document.addEventListener("DOMContentLoaded", () => {
        $("#logout").addEventListener("click", logout);
        window.addEventListener("hashchange", route);
        route();
});
