// The soak's load: N workers looping create (GitHub + Slack) → 5 twin calls → discard,
// and a killer that SIGKILLs a random live pod now and then. Plain Node 20 (fetch keeps
// connections alive), no dependencies.
//
//   node churn.mjs CONTROL_URL API_KEY SECONDS WORKERS
//
// Prints one JSON line: {"iterations", "kills", "unexpected": {"<step>:<status>": n}}.
const [control, key, seconds, workers] = process.argv.slice(2);
const deadline = Date.now() + Number(seconds) * 1000;
const auth = { authorization: `Bearer ${key}` };
const unexpected = {};
let iterations = 0;
let kills = 0;

function note(step, status) {
  const k = `${step}:${status}`;
  unexpected[k] = (unexpected[k] || 0) + 1;
}

async function call(step, url, init, ok) {
  try {
    const r = await fetch(url, init);
    const text = await r.text();
    if (!ok.includes(r.status)) note(step, r.status);
    return { status: r.status, text };
  } catch (e) {
    note(step, `error ${e.cause?.code || e.message}`);
    return { status: 0, text: '' };
  }
}

// A call a killed pod may fail: 410 (the sandbox has ended) or 502 (the pod died in flight).
const twinOk = [200, 201, 410, 502];

async function round() {
  const c = await call('create', `${control}/v1/sandboxes`,
    { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"twins":["github","slack"]}' },
    [201]);
  if (c.status !== 201) return;
  const s = JSON.parse(c.text);
  const tok = { authorization: `Bearer ${s.session_token}` };
  const gh = s.per_twin.github.rest_url, sl = s.per_twin.slack.rest_url;
  await call('issue', `${gh}/repos/acme/api/issues/1`, { headers: tok }, twinOk);
  await call('comment', `${gh}/repos/acme/api/issues/1/comments`,
    { method: 'POST', headers: { ...tok, 'content-type': 'application/json' }, body: '{"body":"soak"}' }, twinOk);
  await call('post', `${sl}/chat.postMessage`,
    { method: 'POST', headers: { ...tok, 'content-type': 'application/x-www-form-urlencoded' }, body: 'channel=C_GENERAL&text=soak%20acme%2Fapi%231' }, twinOk);
  await call('events', `${gh}/_pome/events?limit=2`, { headers: tok }, twinOk);
  await call('mcp', `${sl}/mcp`,
    { method: 'POST', headers: { ...tok, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' }, twinOk);
  const refused = await call('stop', `${control}/v1/sandboxes/${s.session_id}`, { method: 'DELETE', headers: auth }, [204, 409]);
  if (refused.status === 409) {
    const t = JSON.parse(refused.text).error.details.discard_token;
    await call('discard', `${control}/v1/sandboxes/${s.session_id}?confirm_discard=${t}`, { method: 'DELETE', headers: auth }, [204]);
  }
  iterations++;
}

async function worker() {
  while (Date.now() < deadline) await round();
}

async function killer() {
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 300 + Math.random() * 500));
    const l = await call('list', `${control}/v1/sandboxes?state=running&limit=100`, { headers: auth }, [200]);
    if (l.status !== 200) continue;
    const pids = JSON.parse(l.text).data.flatMap((d) => Object.values(d.per_twin).map((t) => t.pod?.pid)).filter(Boolean);
    if (!pids.length) continue;
    try {
      process.kill(pids[Math.floor(Math.random() * pids.length)], 'SIGKILL');
      kills++;
    } catch { /* gone meanwhile */ }
  }
}

await Promise.all([...Array(Number(workers))].map(worker).concat(killer()));
console.log(JSON.stringify({ iterations, kills, unexpected }));
