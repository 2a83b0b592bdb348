// A burst of creates against a running pomed (issue 26, Admission): first the host's
// one-at-a-time create rate (create, then discard, SEQ times), then BURST creates sent at
// once to a team with a quota of QUOTA. Prints what each create was answered and the
// burst's goodput (sandboxes ready per second, from the first request to the last answer)
// beside the one-at-a-time rate, then discards every sandbox it made. Not a test.
//
//   [TWINS=github,slack,stripe] node bench/burst.mjs CONTROL_URL API_KEY [BURST=5000] [SEQ=40]
//   (bench/burst.sh starts the pomed: release build, quota 2000)
import http from "node:http";

const [control, key, burstArg, seqArg] = process.argv.slice(2);
const BURST = Number(burstArg ?? 5000), SEQ = Number(seqArg ?? 40);
const TWINS = (process.env.TWINS ?? "github").split(",");
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

function call(method, path, body) {
  return new Promise((resolve) => {
    const u = new URL(path, control);
    const data = body ? JSON.stringify(body) : undefined;
    const req = http.request(u, {
      method, agent,
      headers: { authorization: `Bearer ${key}`, ...(data ? { "content-type": "application/json" } : {}) },
    }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => {
        let json = null;
        try { json = JSON.parse(text); } catch {}
        resolve({ status: res.statusCode, body: json, retryAfter: res.headers["retry-after"] });
      });
    });
    req.on("error", (e) => resolve({ status: 0, error: e.code || String(e) }));
    if (data) req.write(data);
    req.end();
  });
}

async function discard(id) {
  let r = await call("DELETE", `/v1/sandboxes/${id}`);
  if (r.status === 409 && r.body?.error?.details?.discard_token)
    r = await call("DELETE", `/v1/sandboxes/${id}?confirm_discard=${r.body.error.details.discard_token}`);
  return r.status;
}

// 1. one at a time
let t0 = performance.now();
for (let i = 0; i < SEQ; i++) {
  const r = await call("POST", "/v1/sandboxes", { twins: TWINS });
  if (r.status !== 201) { console.error("sequential create:", r.status, JSON.stringify(r.body)); process.exit(1); }
  await discard(r.body.session_id);
}
const seqSeconds = (performance.now() - t0) / 1000;
const seqRate = SEQ / seqSeconds;

// 2. the burst
t0 = performance.now();
const answers = await Promise.all(Array.from({ length: BURST }, () => call("POST", "/v1/sandboxes", { twins: TWINS })));
const burstSeconds = (performance.now() - t0) / 1000;
const kinds = {};
for (const a of answers) {
  const k = a.status === 0 ? `connection ${a.error}` : `${a.status} ${a.body?.error?.type ?? a.body?.state ?? ""}`.trim();
  kinds[k] = (kinds[k] ?? 0) + 1;
}
const ready = answers.filter((a) => a.status === 201 && a.body?.state === "ready");
const busyNoRetry = answers.filter((a) => a.status === 503 && a.body?.error?.type === "busy" && !a.retryAfter).length;
const startTimeouts = answers.filter((a) => JSON.stringify(a.body ?? "").includes("start_timeout")).length;
console.log(JSON.stringify({
  one_at_a_time: { creates: SEQ, seconds: +seqSeconds.toFixed(2), per_second: +seqRate.toFixed(1) },
  burst: { creates: BURST, seconds: +burstSeconds.toFixed(2), answers: kinds, ready: ready.length,
    goodput_per_second: +(ready.length / burstSeconds).toFixed(1),
    goodput_vs_one_at_a_time: +((ready.length / burstSeconds) / seqRate).toFixed(2),
    start_timeouts: startTimeouts, busy_without_retry_after: busyNoRetry },
}, null, 1));

// 3. clean up
for (let i = 0; i < ready.length; i += 50)
  await Promise.all(ready.slice(i, i + 50).map((a) => discard(a.body.session_id)));
