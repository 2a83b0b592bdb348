// HTTP mutation run against pomed's two listeners (plain Node ≥ 18, `net` only).
//
// A seeded random mutator of valid requests — framing (Content-Length/Transfer-Encoding
// games, chunked bodies), header names and values (control bytes, NUL, bare CR/LF,
// obs-fold, huge values, thousands of fields), methods, versions, request-target bytes,
// raw byte flips/inserts/deletes, truncation, oversized bodies and pipelining — sent
// over concurrent connections. Every byte a listener sends back must parse as a
// sequence of HTTP/1.1 responses (status line, headers, a body framed by
// Content-Length, chunked coding or the end of the connection; nothing is read after a
// response that says Connection: close, as RFC 9112 §9.6 has a client do), and a
// response that says Connection: close must be followed by the server closing.
//
// usage: node http-mutate.mjs --gateway PORT --control PORT --token JWT --api-key KEY
//          --sid SID [--twins github,slack] [--seed N] [--count N] [--seconds S]
//          [--concurrency N] [--report FILE]
// Prints a JSON summary; exits 1 when an answer did not parse or a close was not
// honoured, 2 on bad usage.
import fs from 'node:fs';
import net from 'node:net';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const k of ['gateway', 'control', 'token', 'api-key', 'sid']) {
        if (!args[k]) {
                console.error(`http-mutate: --${k} is required`);
                process.exit(2);
        }
}
const seed = Number(args.seed ?? 1);
const count = Number(args.count ?? 3000);
const seconds = Number(args.seconds ?? 20);
const concurrency = Number(args.concurrency ?? 8);
const twins = (args.twins ?? 'github').split(',');

// ---- seeded PRNG (mulberry32) ----
let state = seed >>> 0;
function rnd() {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(rnd() * n);
const pick = (a) => a[int(a.length)];
const chance = (p) => rnd() < p;
const randBytes = (n, pool) => Buffer.from(Array.from({ length: n }, () => (pool ? pick(pool) : int(256))));

// ---- valid templates ----
const sid = args.sid;
const auth = [['Authorization', `Bearer ${args.token}`]];
const ctlAuth = [['Authorization', `Bearer ${args['api-key']}`]];
function json(o) { return Buffer.from(JSON.stringify(o)); }
const gw = [];
if (twins.includes('github')) {
        const P = `/github/s/${sid}`;
        gw.push(
                () => ({ method: 'GET', target: `${P}/_pome/health`, headers: auth }),
                () => ({ method: 'GET', target: `${P}/repos/acme/api/issues/1`, headers: auth }),
                () => ({ method: 'GET', target: `${P}/repos/acme/api/issues?state=open&per_page=2`, headers: auth }),
                () => ({ method: 'POST', target: `${P}/repos/acme/api/issues/1/comments`, headers: [...auth, ['Content-Type', 'application/json']], body: json({ body: 'mutation run' }) }),
                () => ({ method: 'POST', target: `${P}/mcp`, headers: [...auth, ['Content-Type', 'application/json']], body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }),
                () => ({ method: 'GET', target: `${P}/_pome/state`, headers: auth }),
        );
}
if (twins.includes('slack')) {
        const P = `/slack/s/${sid}`;
        gw.push(
                () => ({ method: 'POST', target: `${P}/chat.postMessage`, headers: [...auth, ['Content-Type', 'application/x-www-form-urlencoded']], body: Buffer.from('channel=C_GENERAL&text=mutation') }),
                () => ({ method: 'GET', target: `${P}/conversations.list?limit=2`, headers: auth }),
                () => ({ method: 'POST', target: `${P}/auth.test`, headers: auth }),
        );
}
const ctl = [
        () => ({ method: 'GET', target: '/v1/usage', headers: ctlAuth }),
        () => ({ method: 'GET', target: '/v1/sandboxes', headers: ctlAuth }),
        () => ({ method: 'GET', target: `/v1/sandboxes/${sid}`, headers: ctlAuth }),
        () => ({ method: 'GET', target: '/healthz', headers: [] }),
        () => ({ method: 'POST', target: '/v1/sandboxes', headers: [...ctlAuth, ['Content-Type', 'application/json']], body: json({ twins: ['nope'] }) }),
        () => ({ method: 'DELETE', target: '/v1/sandboxes/ses_doesnotexist', headers: ctlAuth }),
];

// ---- serialization ----
function chunkedOf(body, bad) {
        const parts = [];
        let i = 0;
        while (i < body.length) {
                const n = Math.min(body.length - i, 1 + int(64));
                let size = n.toString(16);
                if (bad && chance(0.3)) size = pick(['zz', '-1', '', ' ' + size, size + ';ext=1', '1'.repeat(20), size.toUpperCase() + ' ']);
                parts.push(Buffer.from(`${size}\r\n`), body.subarray(i, i + n), Buffer.from('\r\n'));
                i += n;
        }
        parts.push(Buffer.from(bad && chance(0.3) ? pick(['0\r\nX-Trailer: 1\r\n\r\n', '0\r\n', '0;x\r\n\r\n', '00\r\n\r\n']) : '0\r\n\r\n'));
        return Buffer.concat(parts);
}

// A request: {method, target, version, headers: [[name, value]], body, chunked, eol, rawHead}
function serialize(r) {
        const eol = r.eol ?? '\r\n';
        const lines = [`${r.method} ${r.target} ${r.version ?? 'HTTP/1.1'}`];
        const head = [Buffer.from(lines[0] + eol, 'latin1')];
        for (const [k, v] of r.headers) head.push(Buffer.concat([Buffer.from(k, 'latin1'), Buffer.from(': '), Buffer.isBuffer(v) ? v : Buffer.from(String(v), 'latin1'), Buffer.from(eol)]));
        head.push(Buffer.from(eol));
        return Buffer.concat([...head, r.wire ?? r.body ?? Buffer.alloc(0)]);
}

// ---- mutation operators (structural) ----
const CTL = [0, 1, 8, 9, 10, 11, 13, 27, 127];
const ops = {
        dupContentLength(r) { const n = r.body?.length ?? 0; r.headers.push(['Content-Length', String(chance(0.5) ? n : n + 1 + int(10))]); },
        contentLengthAndTE(r) { r.setCL = String(r.body?.length ?? 1); r.headers.push(['Transfer-Encoding', 'chunked']); r.wire = chunkedOf(r.body ?? Buffer.from('x'), false); },
        badContentLength(r) { r.setCL = pick(['+1', '1, 1', '1 1', '1a', '-1', '99999999999999999999999', '', '0x10', '1.0', ' 3 ', '\t2']); },
        transferEncoding(r) { r.dropCL = true; r.headers.push(['Transfer-Encoding', pick(['gzip', 'chunked, gzip', 'identity', 'Chunked', 'chunked ', 'xchunked', 'chunked, chunked', 'deflate, chunked'])]); r.wire = chunkedOf(r.body ?? Buffer.alloc(0), chance(0.3)); },
        chunked(r) { r.dropCL = true; r.headers.push(['Transfer-Encoding', 'chunked']); r.wire = chunkedOf(r.body ?? Buffer.from('{}'), chance(0.5)); },
        headerName(r) { const n = Buffer.concat([Buffer.from('X-'), randBytes(1 + int(6), [...CTL, 32, 34, 40, 44, 58, 59, 64, 123, 200, 255, 65, 97])]); r.headers.splice(int(r.headers.length + 1), 0, [n.toString('latin1'), 'v']); },
        headerValue(r) { r.headers.push(['X-Mut', Buffer.concat([Buffer.from('a'), randBytes(1 + int(8), [...CTL, 0, 32, 128, 195, 255, 37, 48])])]); },
        nulAfterToken(r) { const i = r.headers.findIndex(([k]) => k === 'Authorization'); if (i >= 0) r.headers[i] = ['Authorization', Buffer.concat([Buffer.from(r.headers[i][1]), Buffer.from([0]), Buffer.from('junk')])]; },
        manyHeaders(r) { const n = pick([50, 127, 128, 129, 500, 900, 2000]); for (let i = 0; i < n; i++) r.headers.push([`X-H${i}`, 'v']); },
        hugeValue(r) { r.headers.push(['X-Big', 'b'.repeat(pick([1000, 8000, 32700, 32800, 40000, 64000, 65300, 66000, 80000]))]); },
        hugeTarget(r) { r.target += (r.target.includes('?') ? '&' : '?') + 'p=' + 'q'.repeat(pick([1000, 8150, 8200, 30000, 65350, 65450, 70000])); },
        method(r) { r.method = pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'get', 'G\tET', 'X'.repeat(100), 'PO ST', '\x00GET', 'M' + int(1000)]); },
        version(r) { r.version = pick(['HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/1.1 ', 'http/1.1', 'HTTP/1', 'HTTP/0.9', 'HTTP/1.10', '']); },
        targetBytes(r) { const b = pick([' ', '\t', '\x01', '%00', '%ff', '%C0%AE', '/../..', '\xff', '#frag', '//', '%', '?a=%0', '\x7f']); const i = int(r.target.length + 1); r.target = r.target.slice(0, i) + b + r.target.slice(i); },
        host(r) { if (chance(0.5)) r.noHost = true; else r.headers.push(['Host', 'other']); },
        obsFold(r) { r.headers.push(['X-Fold', 'a\r\n b']); },
        bareLF(r) { r.eol = chance(0.5) ? '\n' : '\r\r\n'; },
        bodyLength(r) { r.setCL = String(Math.max(0, (r.body?.length ?? 0) + pick([-3, -1, 1, 5]))); },
        hugeBody(r) { r.body = Buffer.alloc(pick([300 * 1024, 2 << 20]), 'z'); r.sendPartial = chance(0.5); },
        formBytes(r) { r.body = Buffer.from(`text=${pick(['%00', '%01', '%0D%0A', '%FF', '%C0%AE', '%ED%A0%80', '%'])}x&channel=C_GENERAL`); },
        expect(r) { r.headers.push(['Expect', pick(['100-continue', '200-ok'])]); },
};
const opNames = Object.keys(ops);

// byte-level
function byteMutate(buf, cat) {
        const b = Buffer.from(buf);
        const kind = pick(['flip', 'insert', 'delete', 'truncate']);
        cat.push(kind);
        if (kind === 'flip') { for (let k = 0; k < 1 + int(4); k++) b[int(b.length)] = int(256); return b; }
        if (kind === 'insert') { const i = int(b.length); return Buffer.concat([b.subarray(0, i), randBytes(1 + int(8)), b.subarray(i)]); }
        if (kind === 'delete') { const i = int(b.length); return Buffer.concat([b.subarray(0, i), b.subarray(i + 1 + int(16))]); }
        return b.subarray(0, int(b.length));
}

// Operators after which the server may see this request end elsewhere than we wrote it: the
// next request of a pipeline then starts elsewhere too (a Content-Length one byte long eats
// the next method's first letter: "HEAD" becomes "EAD", which gets a body).
const SHIFTS = new Set(['bodyLength', 'badContentLength', 'dupContentLength', 'contentLengthAndTE', 'transferEncoding', 'chunked', 'hugeBody', 'bareLF', 'obsFold', 'version']);

function makeRequest(listener, cat) {
        const r = (listener === 'gateway' ? pick(gw) : pick(ctl))();
        r.headers = [['Host', 'pome.test'], ...r.headers];
        if (chance(0.7)) r.headers.push(['Connection', 'close']);
        const nops = chance(0.25) ? 0 : 1 + int(chance(0.2) ? 3 : 1);
        const mine = [];
        for (let i = 0; i < nops; i++) { const op = pick(opNames); cat.push(op); mine.push(op); ops[op](r); }
        if (r.noHost) r.headers = r.headers.filter(([k]) => k !== 'Host');
        const payload = r.wire ?? r.body;
        if (!r.dropCL && (r.setCL !== undefined || (payload && payload.length && !r.wire))) r.headers.push(['Content-Length', r.setCL ?? String(payload.length)]);
        if (r.sendPartial && r.body) r.body = r.body.subarray(0, 64 * 1024);
        let bytes = serialize(r);
        let flipped = false;
        if (chance(0.15)) { bytes = byteMutate(bytes, cat); flipped = true; }
        // flipped: its own method may have changed on the wire; shifts: where the next begins
        return { bytes, head: r.method === 'HEAD', flipped, shifts: flipped || r.sendPartial || mine.some((o) => SHIFTS.has(o)) };
}

// ---- response stream parser ----
// Returns {responses:[{status, close}], error?, rest, closeSeen}
function parseResponses(buf, heads, ended) {
        const out = [];
        let i = 0;
        for (;;) {
                if (i >= buf.length) return { responses: out, done: true };
                const end = buf.indexOf('\r\n\r\n', i, 'latin1');
                if (end < 0) return { responses: out, partial: true, error: ended ? 'truncated header block' : null, at: i };
                const head = buf.subarray(i, end).toString('latin1');
                const lines = head.split('\r\n');
                const m = /^HTTP\/1\.[01] (\d{3}) [^\r\n]*$/.exec(lines[0]);
                if (!m) return { responses: out, error: `bad status line ${JSON.stringify(lines[0].slice(0, 80))}`, at: i };
                const status = Number(m[1]);
                const h = {};
                for (const l of lines.slice(1)) {
                        const c = l.indexOf(':');
                        if (c <= 0 || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(l.slice(0, c))) return { responses: out, error: `bad header line ${JSON.stringify(l.slice(0, 80))}`, at: i };
                        const k = l.slice(0, c).toLowerCase();
                        if (k in h && (k === 'content-length' || k === 'transfer-encoding')) return { responses: out, error: `repeated ${k}`, at: i };
                        h[k] = l.slice(c + 1).trim();
                }
                let p = end + 4;
                const close = /(^|,)\s*close\s*(,|$)/i.test(h.connection ?? '');
                const flag = heads[out.filter((x) => x.status >= 200).length];
                let isHead = status >= 200 && flag === true;
                if (status >= 200 && flag === null) {
                        // unknown: no body when what follows is the next answer (or nothing, at the end)
                        if (buf.length < p + 5 && !ended) return { responses: out, partial: true, at: i };
                        isHead = buf.length < p + 5 || buf.subarray(p, p + 5).toString('latin1') === 'HTTP/';
                }
                if (status < 200) { out.push({ status, close: false }); i = p; continue; }
                if (isHead || status === 204 || status === 304) {
                        // no body
                } else if (h['transfer-encoding']) {
                        if (!/^chunked$/i.test(h['transfer-encoding'])) return { responses: out, error: `transfer-encoding ${h['transfer-encoding']}`, at: i };
                        for (;;) {
                                const e = buf.indexOf('\r\n', p, 'latin1');
                                if (e < 0) return { responses: out, partial: true, error: ended ? 'truncated chunked body' : null, at: i };
                                const size = parseInt(buf.subarray(p, e).toString('latin1'), 16);
                                if (!Number.isFinite(size) || size < 0) return { responses: out, error: 'bad chunk size', at: i };
                                if (buf.length < e + 2 + size + 2) return { responses: out, partial: true, error: ended ? 'truncated chunk' : null, at: i };
                                p = e + 2 + size + 2;
                                if (size === 0) break;
                        }
                } else if (h['content-length'] !== undefined) {
                        if (!/^\d+$/.test(h['content-length'])) return { responses: out, error: `content-length ${h['content-length']}`, at: i };
                        const n = Number(h['content-length']);
                        if (buf.length < p + n) return { responses: out, partial: true, error: ended ? `truncated body (${buf.length - p}/${n})` : null, at: i };
                        p += n;
                } else {
                        if (!ended) return { responses: out, partial: true, at: i };
                        p = buf.length; // body until close
                }
                out.push({ status, close });
                i = p;
                if (close) return { responses: out, done: true, closeSeen: true, trailing: buf.length - p };
        }
}

// ---- one case over one connection ----
const stats = { cases: 0, requests: 0, responses: 0, statuses: {}, silent: 0, clientGaveUp: 0, trailingAfterClose: 0, mhdBodies: 0, byListener: { gateway: 0, control: 0 }, failures: [], serverErrors: [], closeNotHonoured: 0, ops: {} };

function runCase(listener) {
        return new Promise((resolve) => {
                const cat = [];
                const n = chance(0.15) ? 2 + int(3) : 1;
                const reqs = Array.from({ length: n }, () => makeRequest(listener, cat));
                // null: whether the server read a HEAD here is not ours to know (see SHIFTS)
                const heads = reqs.map((r, k) => (r.flipped || reqs.slice(0, k).some((q) => q.shifts) ? null : r.head));
                const bytes = Buffer.concat(reqs.map((r) => r.bytes));
                for (const c of cat) stats.ops[c] = (stats.ops[c] ?? 0) + 1;
                stats.cases++;
                stats.requests += n;
                stats.byListener[listener]++;
                const port = Number(listener === 'gateway' ? args.gateway : args.control);
                const sock = net.connect({ host: '127.0.0.1', port });
                let buf = Buffer.alloc(0);
                let idle = null, closeTimer = null, finished = false;
                const finish = (ended, why) => {
                        if (finished) return;
                        finished = true;
                        clearTimeout(idle);
                        clearTimeout(closeTimer);
                        const res = parseResponses(buf, heads, ended);
                        for (const r of res.responses) {
                                stats.responses++;
                                stats.statuses[r.status] = (stats.statuses[r.status] ?? 0) + 1;
                                if (r.status >= 500 && r.status !== 501 && r.status !== 505 && stats.serverErrors.length < 10)
                                        stats.serverErrors.push({ listener, status: r.status, ops: cat, request: bytes.subarray(0, 200).toString('latin1'), answer: buf.subarray(0, 300).toString('latin1') });
                        }
                        if (res.error && !res.closeSeen) {
                                if (stats.failures.length < 20) stats.failures.push({ listener, ops: cat, why: res.error, request: bytes.subarray(0, 300).toString('latin1'), answer: buf.subarray(res.at ?? 0, (res.at ?? 0) + 300).toString('latin1') });
                                else stats.failures.push(null);
                        }
                        if (res.trailing) stats.trailingAfterClose++;
                        if (buf.length && /^HTTP\/1\.1 \d{3}[^]*?\r\n\r\n<html>/.test(buf.subarray(0, 2000).toString('latin1'))) stats.mhdBodies++;
                        if (buf.length === 0) { if (why === 'gaveup') stats.clientGaveUp++; else stats.silent++; }
                        sock.destroy();
                        resolve();
                };
                const armIdle = () => {
                        if (closeTimer) return; /* waiting for the promised close */
                        clearTimeout(idle);
                        idle = setTimeout(() => finish(false, 'gaveup'), 300);
                };
                sock.on('connect', () => {
                        sock.write(bytes, () => armIdle());
                });
                sock.on('data', (d) => {
                        buf = Buffer.concat([buf, d]);
                        armIdle();
                        const res = parseResponses(buf, heads, false);
                        if (res.closeSeen && !closeTimer) {
                                // the server said close: it must close, promptly
                                clearTimeout(idle);
                                closeTimer = setTimeout(() => { stats.closeNotHonoured++; finish(false, 'close'); }, 3000);
                        } else if (!res.partial && !res.error && res.responses.filter((r) => r.status >= 200).length >= n) {
                                finish(false, 'complete');
                        }
                });
                sock.on('error', () => finish(true, 'error'));
                sock.on('end', () => finish(true, 'end'));
                sock.on('close', () => finish(true, 'close'));
        });
}

const t0 = Date.now();
let started = 0;
async function worker() {
        while (started < count && Date.now() - t0 < seconds * 1000) {
                started++;
                await runCase(chance(0.6) ? 'gateway' : 'control');
        }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const failures = stats.failures.filter(Boolean);
const summary = { seed, elapsed_s: (Date.now() - t0) / 1000, ...stats, failures: failures.slice(0, 10), failure_count: stats.failures.length };
const text = JSON.stringify(summary, null, 1);
if (args.report) fs.writeFileSync(args.report, text);
console.log(text);
process.exit(stats.failures.length || stats.closeNotHonoured ? 1 : 0);
