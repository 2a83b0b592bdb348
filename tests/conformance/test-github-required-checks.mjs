// Merges gated by required status checks (issue 23), driven with the official, unmodified
// @octokit/rest client against a real pomed:
// - a pull request whose seed puts a failing status on its head (hosted Pome's task 18 in
//   kind): the merge is refused with GitHub's 405 and message while the context is red, the
//   tape's row changes nothing, and once the same context is green on the head it merges;
// - a seeded base branch protection (required_status_checks, GitHub's own shape): the context
//   must be success ("expected" while pending or unreported, "failing" when red);
// - a seed that marks nothing merges at once.
// The MCP door (merge_pull_request) answers the same refusal.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { Octokit } from "@octokit/rest";
import { control, discard } from "./lib.mjs";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const repo = { owner: "acme", repo: "shop" };

// A seed of acme/shop: src/price.py on main and on branch fix, pull request #1 from fix
// (pr: its extra members), main's entry in branches[] when given.
function seed(pr, mainBranch) {
  return {
    users: [{ login: "dana", type: "User", name: "Dana" }],
    repositories: [{
      owner: "acme", name: "shop", default_branch: "main", collaborators: ["dana"],
      files: [
        { path: "src/price.py", content: "def total(p, q):\n    return p * q\n" },
        { path: "src/price.py", content: "def total(p, q):\n    return p * q * 0.9\n", branch: "fix" },
      ],
      ...(mainBranch ? { branches: [mainBranch] } : {}),
      pull_requests: [{ number: 1, title: "Discount", body: "Ten percent off.", head: "fix", base: "main", author: "dana", ...pr }],
    }],
  };
}

async function sandbox(s) {
  const r = await control("POST", "/v1/sandboxes", { twins: ["github"], seeds: { github: s } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const sb = r.body;
  const gh = new Octokit({ auth: sb.session_token, baseUrl: sb.per_twin.github.rest_url, log: quiet, request: { retries: 0 } });
  return { sb, gh };
}

async function tape(sb) {
  const res = await fetch(`${sb.per_twin.github.rest_url}/_pome/events`, { headers: { authorization: `Bearer ${sb.session_token}` } });
  assert.equal(res.status, 200);
  return res.json();
}

const refused = (message) => (e) => {
  assert.equal(e.status, 405, e.message);
  assert.equal(e.response.data.message, message);
  assert.equal(e.response.data.documentation_url, "https://docs.github.com/articles/about-protected-branches");
  return true;
};

// ---- red CI seeded on the pull request holds the merge back until the context is green
{
  const { sb, gh } = await sandbox(seed({ statuses: [{ context: "ci/test", state: "failure", description: "1 test failing" }] }));
  const { data: pr } = await gh.rest.pulls.get({ ...repo, pull_number: 1 });
  assert.equal(pr.mergeable_state, "blocked");
  const { data: combined } = await gh.rest.repos.getCombinedStatusForRef({ ...repo, ref: pr.head.sha });
  assert.equal(combined.state, "failure");

  await assert.rejects(gh.rest.pulls.merge({ ...repo, pull_number: 1 }), refused('Required status check "ci/test" is failing.'));
  await assert.rejects(gh.rest.pulls.merge({ ...repo, pull_number: 1, merge_method: "squash" }), refused('Required status check "ci/test" is failing.'));
  assert.equal((await gh.rest.pulls.get({ ...repo, pull_number: 1 })).data.merged, false);
  const { data: main0 } = await gh.rest.git.getRef({ ...repo, ref: "heads/main" });

  // the MCP tool is the same action: the same refusal, a tool error
  const mcp = await fetch(sb.per_twin.github.mcp_url, {
    method: "POST",
    headers: { authorization: `Bearer ${sb.session_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "merge_pull_request", arguments: { ...repo, pullNumber: 1 } } }),
  });
  const rpc = await mcp.json();
  assert.equal(rpc.result.isError, true);
  assert.match(rpc.result.content[0].text, /Required status check \\?"ci\/test\\?" is failing/);

  let rows = (await tape(sb)).filter((r) => r.tool === "merge_pull_request");
  assert.equal(rows.length, 3);
  for (const row of rows) {
    assert.equal(row.state_mutation, false);
    assert.equal(row.state_delta, null);
  }
  assert.deepEqual(rows.map((r) => r.status), [405, 405, 200], "MCP answers 200 with isError");
  assert.equal((await gh.rest.git.getRef({ ...repo, ref: "heads/main" })).data.object.sha, main0.object.sha);

  // green on the same head (how it got green is the task's question, not the twin's)
  await gh.rest.repos.createCommitStatus({ ...repo, sha: pr.head.sha, state: "success", context: "ci/test" });
  const { data: merged } = await gh.rest.pulls.merge({ ...repo, pull_number: 1 });
  assert.equal(merged.merged, true);
  assert.equal((await gh.rest.pulls.get({ ...repo, pull_number: 1 })).data.merged, true);
  rows = (await tape(sb)).filter((r) => r.tool === "merge_pull_request");
  assert.equal(rows.at(-1).status, 200);
  assert.equal(rows.at(-1).state_mutation, true);
  assert.equal(rows.at(-1).state_delta.after.merged, true);
  await discard(sb.session_id);
}

// ---- a seeded protection on main: GitHub's rule, the required context must be success
{
  const { sb, gh } = await sandbox(seed({}, {
    name: "main",
    protection: { required_status_checks: { strict: false, contexts: ["ci/build"] }, enforce_admins: true, required_pull_request_reviews: null },
  }));
  const { data: prot } = await gh.rest.repos.getBranchProtection({ ...repo, branch: "main" });
  assert.deepEqual(prot.required_status_checks.contexts, ["ci/build"]);
  assert.equal(prot.enforce_admins.enabled, true);
  const { data: pr } = await gh.rest.pulls.get({ ...repo, pull_number: 1 });
  await assert.rejects(gh.rest.pulls.merge({ ...repo, pull_number: 1 }), refused('Required status check "ci/build" is expected.'));
  await gh.rest.repos.createCommitStatus({ ...repo, sha: pr.head.sha, state: "pending", context: "ci/build" });
  await assert.rejects(gh.rest.pulls.merge({ ...repo, pull_number: 1 }), refused('Required status check "ci/build" is expected.'));
  await gh.rest.repos.createCommitStatus({ ...repo, sha: pr.head.sha, state: "failure", context: "ci/build" });
  await assert.rejects(gh.rest.pulls.merge({ ...repo, pull_number: 1 }), refused('Required status check "ci/build" is failing.'));
  await gh.rest.repos.createCommitStatus({ ...repo, sha: pr.head.sha, state: "success", context: "ci/build" });
  assert.equal((await gh.rest.pulls.merge({ ...repo, pull_number: 1 })).data.merged, true);
  await discard(sb.session_id);
}

// ---- a seed that marks nothing: the merge goes through at once
{
  const { sb, gh } = await sandbox(seed({}));
  assert.equal((await gh.rest.pulls.get({ ...repo, pull_number: 1 })).data.mergeable_state, "clean");
  const { data: merged } = await gh.rest.pulls.merge({ ...repo, pull_number: 1 });
  assert.equal(merged.merged, true);
  await discard(sb.session_id);
}

// ---- a protection the seed gets wrong is the create's 422, naming the path
{
  const r = await control("POST", "/v1/sandboxes", {
    twins: ["github"],
    seeds: { github: seed({}, { name: "main", protection: { required_status_checks: { contexts: "ci/build" } } }) },
  });
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.match(JSON.stringify(r.body), /branches\[0\]\.protection\.required_status_checks\.contexts/);
}

console.log("test-github-required-checks: ok");
