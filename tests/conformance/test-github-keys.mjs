// Key coverage of the GitHub twin against GitHub's own OpenAPI description, as
// @octokit/openapi-types carries it (components["schemas"][…]: a member without "?" is
// required, present on every instance, null or not). Each object is read through @octokit/rest
// from a real pomed sandbox; every required key must be there, except those listed in leftOut
// with the reason each is left out. Prints the share of keys served per object.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Octokit } from "@octokit/rest";
import { control, discard } from "./lib.mjs";

const types = readFileSync(new URL("./node_modules/@octokit/openapi-types/types.d.ts", import.meta.url), "utf8");

// The required and optional members of components["schemas"][name] (top level only).
function described(name) {
  const at = types.indexOf(`\n    "${name}": {`);
  const at2 = at >= 0 ? at : types.indexOf(`\n    ${name}: {`);
  assert.ok(at2 >= 0, `schema ${name}`);
  let depth = 0, i = types.indexOf("{", at2), end = i;
  for (; end < types.length; end++) {
    if (types[end] === "{") depth++;
    else if (types[end] === "}" && --depth === 0) break;
  }
  const body = types.slice(i + 1, end);
  const required = [], optional = [];
  for (const m of body.matchAll(/^ {6}"?([\w+-]+)"?(\??):/gm)) (m[2] ? optional : required).push(m[1]);
  return { required, optional };
}

// Keys the twin leaves out on purpose: {schema: {key: "reason"}}.
const leftOut = {};

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let r = await control("POST", "/v1/sandboxes", { twins: ["github"], seeds: { github: "triage-backlog" } });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const gh = new Octokit({ auth: sb.session_token, baseUrl: sb.per_twin.github.rest_url, log: quiet, request: { retries: 0 } });
const repo = { owner: "acme", repo: "webapp" };

const issues = (await gh.rest.issues.listForRepo({ ...repo, state: "all", per_page: 100 })).data;
const issue = issues.find((i) => !i.pull_request && i.milestone) ?? issues.find((i) => !i.pull_request);
const pullNumber = issues.find((i) => i.pull_request).number;
const comment = (await gh.rest.issues.createComment({ ...repo, issue_number: issue.number, body: "keys" })).data;
const served = {
  "full-repository": (await gh.rest.repos.get(repo)).data,
  issue: (await gh.rest.issues.get({ ...repo, issue_number: issue.number })).data,
  "issue-comment": comment,
  label: (await gh.rest.issues.listLabelsForRepo(repo)).data[0],
  milestone: issue.milestone,
  "pull-request": (await gh.rest.pulls.get({ ...repo, pull_number: pullNumber })).data,
  "simple-user": issue.user,
  "public-user": (await gh.rest.users.getByUsername({ username: issue.user.login })).data,
  "private-user": (await gh.rest.users.getAuthenticated()).data,
  "organization-full": (await gh.rest.orgs.get({ org: "acme" })).data,
};
const missing = [];
for (const [name, obj] of Object.entries(served)) {
  assert.ok(obj, `${name}: an instance`);
  const { required } = described(name);
  const lacking = required.filter((k) => !(k in obj) && !(k in (leftOut[name] ?? {})));
  const have = required.filter((k) => k in obj).length;
  console.log(`${name}: ${have}/${required.length} required keys (${Math.round((100 * have) / required.length)}%)` +
    (lacking.length ? `; missing ${lacking.join(", ")}` : ""));
  if (lacking.length) missing.push(`${name}: ${lacking.join(", ")}`);
}
assert.deepEqual(missing, [], "required keys the twin does not serve (and does not list as left out)");
await discard(sb.session_id);
