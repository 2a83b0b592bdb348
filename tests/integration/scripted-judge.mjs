// A scripted judge for the tests: the stand-in for a model behind the judges of [model]
// criteria (pods/grade/judges.h), over a real HTTP server or as a command.
//
//   node scripted-judge.mjs serve --port-file F [--log F] [--key K] [--rules F]... [--mode M]
//     An HTTP server on 127.0.0.1 (an ephemeral port, written to F) speaking OpenAI's chat
//     completions (POST …/chat/completions) and Anthropic's Messages API (POST …/v1/messages)
//     wire formats. Each request is checked (the model named, temperature 0, the system
//     prompt and the user's turn where each API puts them, the key when --key is given) and
//     logged as one JSON line to --log. POST /__mode with a mode as its body changes the mode.
//   node scripted-judge.mjs command [--rules F]... [--mode M]
//     The command judge: the question as JSON on stdin ({instructions, question, criterion,
//     …}), the answer on stdout.
//
// The answer: a rule of the --rules files (JSON arrays of {criterion, pass_if, flags?}) whose
// criterion is the question's decides: "pass" when its regular expression matches the
// question's evidence (what follows "The evidence"), else "fail", with the matched text as
// the rationale. A criterion no rule names is an error (HTTP 500, or exit 3): a test must
// say how each criterion is judged. Modes: rules (the default), garbage (an answer that is
// not the verdict's JSON), down (HTTP 503 / exit 4), flaky:N (the first N requests 503,
// then rules), slow:MS (the rules' answer after MS milliseconds), echo-secret (a pass whose
// rationale quotes a token).
import { readFileSync, appendFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

const args = process.argv.slice(2);
const verb = args.shift();
const opts = { rules: [] };
while (args.length) {
  const a = args.shift();
  if (a === "--rules") opts.rules.push(args.shift());
  else if (a.startsWith("--")) opts[a.slice(2)] = args.shift();
  else throw new Error(`unexpected argument ${a}`);
}
let mode = opts.mode ?? "rules";
let requests = 0;
const rules = opts.rules.flatMap((f) => JSON.parse(readFileSync(f, "utf8")));

function criterionOf(question) {
  const m = /The criterion to judge:\n<<<\n([\s\S]*?)\n>>>/.exec(question);
  return m ? m[1] : null;
}

// { status, answer } for one question; status 200 is an answer, anything else an error.
function decide(question, criterion) {
  requests++;
  if (mode === "down") return { status: 503, error: "the scripted judge is down" };
  const flaky = /^flaky:(\d+)$/.exec(mode);
  if (flaky && requests <= Number(flaky[1])) return { status: 503, error: "flaky: try again" };
  if (mode === "garbage") return { status: 200, answer: "Looks fine to me, I would say yes!" };
  if (mode === "echo-secret")
    return {
      status: 200,
      answer: JSON.stringify({ verdict: "pass", rationale: "it used ghp_abcdefghijklmnopqrstuvwxyz012345" }),
    };
  const rule = rules.find((r) => r.criterion === criterion);
  if (!rule) return { status: 500, error: `no scripted rule for the criterion: ${criterion}` };
  const evidence = question.slice(question.indexOf("The evidence"));
  const m = new RegExp(rule.pass_if, rule.flags ?? "").exec(evidence);
  const verdict = m ? "pass" : "fail";
  const rationale = m ? `the evidence shows ${JSON.stringify(m[0].slice(0, 120))}` : `the evidence has nothing matching /${rule.pass_if}/`;
  return { status: 200, answer: JSON.stringify({ verdict, rationale }) };
}

function log(entry) {
  if (opts.log) appendFileSync(opts.log, JSON.stringify(entry) + "\n");
}

if (verb === "command") {
  const input = JSON.parse(readFileSync(0, "utf8"));
  for (const k of ["instructions", "question", "criterion", "task_prompt", "prompt_sha256"])
    if (typeof input[k] !== "string") {
      process.stderr.write(`the request has no ${k} string\n`);
      process.exit(2);
    }
  if (input.temperature !== 0) {
    process.stderr.write("temperature is not 0\n");
    process.exit(2);
  }
  log({ api: "command", criterion: input.criterion, model: input.model, prompt_sha256: input.prompt_sha256 });
  const d = decide(input.question, input.criterion);
  if (d.status !== 200) {
    process.stderr.write(`${d.error}\n`);
    process.exit(d.status === 503 ? 4 : 3);
  }
  process.stdout.write(d.answer + "\n");
  process.exit(0);
}

if (verb !== "serve") throw new Error("usage: scripted-judge.mjs serve|command …");

function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const server = createServer((req, res) => {
  let raw = "";
  req.setEncoding("utf8");
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    if (req.method === "POST" && req.url === "/__mode") {
      mode = raw.trim();
      requests = 0;
      return send(res, 200, { mode });
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, { error: { message: "the body is not JSON" } });
    }
    const openai = req.url.endsWith("/chat/completions");
    const anthropic = req.url.endsWith("/v1/messages");
    if (req.method !== "POST" || (!openai && !anthropic))
      return send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
    const key = openai ? (req.headers.authorization ?? "").replace(/^Bearer /, "") : req.headers["x-api-key"];
    if (opts.key && key !== opts.key) return send(res, 401, { error: { message: "Incorrect API key provided" } });
    if (anthropic && req.headers["anthropic-version"] !== "2023-06-01")
      return send(res, 400, { error: { message: "anthropic-version: 2023-06-01 is required" } });
    const system = openai ? body.messages?.[0]?.content : body.system;
    const user = openai ? body.messages?.[1]?.content : body.messages?.[0]?.content;
    const roles = openai ? body.messages?.map((m) => m.role).join(",") : body.messages?.map((m) => m.role).join(",");
    if (typeof body.model !== "string" || body.temperature !== 0 || typeof system !== "string" ||
        typeof user !== "string" || roles !== (openai ? "system,user" : "user"))
      return send(res, 400, { error: { message: "not a judge's request: model, temperature 0, system and user" } });
    const criterion = criterionOf(user);
    log({ api: openai ? "openai" : "anthropic", url: req.url, model: body.model, temperature: body.temperature,
          max_tokens: body.max_tokens, criterion, system_len: system.length, user });
    const d = decide(user, criterion);
    const slow = /^slow:(\d+)$/.exec(mode);
    if (slow) return setTimeout(() => answer(res, openai, body, d), Number(slow[1]));
    answer(res, openai, body, d);
  });
});

function answer(res, openai, body, d) {
    if (res.destroyed) return; // the judge's caller gave up waiting
    if (d.status !== 200) return send(res, d.status, { error: { message: d.error } });
    if (openai)
      return send(res, 200, {
        id: `chatcmpl-${requests}`, object: "chat.completion", created: 1700000000, model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: d.answer }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    return send(res, 200, {
      id: `msg_${requests}`, type: "message", role: "assistant", model: body.model,
      content: [{ type: "text", text: d.answer }], stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 },
    });
}
server.listen(0, "127.0.0.1", () => {
  writeFileSync(opts["port-file"], String(server.address().port));
});
