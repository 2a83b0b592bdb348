// Pull requests, reviews, statuses and check runs of the GitHub twin, driven by the
// vendors' own unmodified clients: @octokit/rest for the REST flow an agent runs (branch,
// commit, pull request, files and diff, review, CI status, merge) and
// @modelcontextprotocol/sdk for every MCP tool pods/github/pulls.c, reviews.c own.
// The sandbox is made from sandbox-images/github/seeds/pr-review.json, a seed in hosted
// Pome's task-seed format (_meta, PR statuses, files on a head branch); the same file is
// also loaded by `pome twin start --seed FILE` and reviewed there.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Octokit } from "@octokit/rest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { control, discard } from "./lib.mjs";

const src = process.env.POME_SOURCE_DIR;
const build = process.env.POME_BUILD_DIR;
const seedFile = `${src}/sandbox-images/github/seeds/pr-review.json`;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const github = (auth, baseUrl) => new Octokit({ auth, baseUrl, log: quiet, request: { retries: 0 } });
const b64 = (s) => Buffer.from(s).toString("base64");
const unb64 = (s) => Buffer.from(s, "base64").toString();

async function mcpClient(mcpUrl, token) {
  const client = new Client({ name: "conformance-pulls", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

// A tool's JSON result (content[0].text), asserting it is not an error unless asked.
async function call(client, name, args, { error = false } = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError ?? false, error, `${name}: ${res.content?.[0]?.text}`);
  const text = res.content[0].text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const repo = { owner: "acme", repo: "payments" };

// Creates branch from main with one file committed on it; returns the new head sha.
async function branchWithFile(gh, branch, path, content, message) {
  const { data: main } = await gh.rest.git.getRef({ ...repo, ref: "heads/main" });
  await gh.rest.git.createRef({ ...repo, ref: `refs/heads/${branch}`, sha: main.object.sha });
  const existing = await gh.rest.repos.getContent({ ...repo, path, ref: branch }).catch(() => null);
  const { data } = await gh.rest.repos.createOrUpdateFileContents({
    ...repo,
    path,
    branch,
    message,
    content: b64(content),
    ...(existing ? { sha: existing.data.sha } : {}),
  });
  return data.commit.sha;
}

// ============================================================ a sandbox over the hosted-format seed
let r = await control("POST", "/v1/sandboxes", { twins: ["github"], seeds: { github: "pr-review" } });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const restUrl = sb.per_twin.github.rest_url;
const mcpUrl = sb.per_twin.github.mcp_url;
const gh = github(sb.session_token, restUrl);

// ---- the seeded pull request as hosted Pome's seed describes it
const seeded = await gh.paginate(gh.rest.pulls.list, { ...repo, state: "all", per_page: 1 });
assert.deepEqual(seeded.map((p) => p.number).sort(), [2, 3], "paginate walks both seeded PRs");
let { data: pr2 } = await gh.rest.pulls.get({ ...repo, pull_number: 2 });
assert.equal(pr2.head.ref, "feature/refunds");
assert.equal(pr2.base.ref, "main");
assert.equal(pr2.user.login, "dev-alice", "author is the PR's user");
assert.deepEqual(pr2.requested_reviewers.map((u) => u.login), ["pome-agent"]);
assert.equal(pr2.mergeable, true);
assert.equal(pr2.mergeable_state, "blocked", "its seeded ci/lint fails on the head commit");
assert.equal(pr2.changed_files, 2);
const { data: combined0 } = await gh.rest.repos.getCombinedStatusForRef({ ...repo, ref: pr2.head.sha });
assert.equal(combined0.state, "failure");
assert.deepEqual(combined0.statuses.map((s) => `${s.context}=${s.state}`).sort(), ["ci/lint=failure", "ci/tests=success"]);
const { data: runs0 } = await gh.rest.checks.listForRef({ ...repo, ref: pr2.head.sha });
assert.equal(runs0.total_count, 1);
assert.equal(runs0.check_runs[0].conclusion, "success");
assert.deepEqual(runs0.check_runs[0].pull_requests.map((p) => p.number), [2]);
const { data: reviews0 } = await gh.rest.pulls.listReviews({ ...repo, pull_number: 2 });
assert.deepEqual(reviews0.map((v) => `${v.user.login}:${v.state}`), ["rev-bob:CHANGES_REQUESTED"]);

// ---- files and the unified diff
const { data: files2 } = await gh.rest.pulls.listFiles({ ...repo, pull_number: 2 });
assert.deepEqual(files2.map((f) => `${f.filename}:${f.status}:+${f.additions}-${f.deletions}`), [
  "src/charge.py:modified:+4-0",
  "tests/test_refund.py:added:+5-0",
]);
assert.match(files2[0].patch, /^@@ -2,3 \+2,7 @@ def charge\(amount\):\n/);
const diff2 = await gh.rest.pulls.get({ ...repo, pull_number: 2, mediaType: { format: "diff" } });
assert.equal(typeof diff2.data, "string");
assert.match(diff2.headers["content-type"], /^application\/vnd\.github\.diff/);
assert.ok(diff2.data.startsWith("diff --git a/src/charge.py b/src/charge.py\nindex "), diff2.data);
assert.ok(diff2.data.includes("new file mode 100644\n") && diff2.data.includes("+++ b/tests/test_refund.py\n"));
const patch2 = await gh.rest.pulls.get({ ...repo, pull_number: 2, mediaType: { format: "patch" } });
assert.match(patch2.data, /^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001\nFrom: /);
assert.ok(patch2.data.includes(" 2 files changed, 9 insertions(+)\n create mode 100644 tests/test_refund.py\n"));
// the same media types on a comparison and on a commit
const cmpDiff = await gh.rest.repos.compareCommitsWithBasehead({ ...repo, basehead: `main...${pr2.head.ref}`, mediaType: { format: "diff" } });
assert.match(cmpDiff.headers["content-type"], /^application\/vnd\.github\.diff/);
assert.equal(cmpDiff.data, diff2.data, "base...head is the pull request's diff");
const cmpPatch = await gh.rest.repos.compareCommitsWithBasehead({ ...repo, basehead: `main...${pr2.head.ref}`, mediaType: { format: "patch" } });
assert.match(cmpPatch.data, /^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001\nFrom: /);
const headDiff = await gh.rest.repos.getCommit({ ...repo, ref: pr2.head.sha, mediaType: { format: "diff" } });
assert.equal(typeof headDiff.data, "string");
assert.ok(headDiff.data.startsWith("diff --git a/"), headDiff.data);

// ---- a realistic review: line comment, reply, pending review submitted as approval
const { data: rc } = await gh.rest.pulls.createReviewComment({
  ...repo,
  pull_number: 2,
  commit_id: pr2.head.sha,
  path: "src/charge.py",
  line: 8,
  side: "RIGHT",
  body: "Should refund() reject negative amounts like charge() does?",
});
assert.equal(rc.line, 8);
assert.ok(rc.diff_hunk.endsWith('+    return {"ok": True, "refunded": amount}'), rc.diff_hunk);
await assert.rejects(
  gh.rest.pulls.createReviewComment({ ...repo, pull_number: 2, commit_id: pr2.head.sha, path: "README.md", line: 1, body: "x" }),
  (e) => e.status === 422 && e.response.data.errors[0].field === "pull_request_review_thread.path",
);
const { data: reply } = await gh.rest.pulls.createReplyForReviewComment({
  ...repo,
  pull_number: 2,
  comment_id: rc.id,
  body: "Good catch, I'll add a check.",
});
assert.equal(reply.in_reply_to_id, rc.id);
assert.equal(reply.path, "src/charge.py");
// a pending review can be read back and deleted; a submitted one cannot be deleted
const { data: draft } = await gh.rest.pulls.createReview({ ...repo, pull_number: 2, body: "draft" });
assert.equal((await gh.rest.pulls.getReview({ ...repo, pull_number: 2, review_id: draft.id })).data.state, "PENDING");
const { data: gone } = await gh.rest.pulls.deletePendingReview({ ...repo, pull_number: 2, review_id: draft.id });
assert.equal(gone.id, draft.id);
await assert.rejects(gh.rest.pulls.getReview({ ...repo, pull_number: 2, review_id: draft.id }), (e) => e.status === 404);
await assert.rejects(
  gh.rest.pulls.deletePendingReview({ ...repo, pull_number: 2, review_id: reviews0[0].id }),
  (e) => e.status === 422,
  "a submitted review is not deleted",
);
const { data: pending } = await gh.rest.pulls.createReview({ ...repo, pull_number: 2, body: "Looks close." });
assert.equal(pending.state, "PENDING");
assert.equal(pending.submitted_at, undefined);
await assert.rejects(
  gh.rest.pulls.createReview({ ...repo, pull_number: 2 }),
  (e) => e.status === 422 && /one pending review/.test(JSON.stringify(e.response.data)),
);
const { data: approved } = await gh.rest.pulls.submitReview({
  ...repo,
  pull_number: 2,
  review_id: pending.id,
  event: "APPROVE",
  body: "LGTM once lint is green.",
});
assert.equal(approved.state, "APPROVED");
({ data: pr2 } = await gh.rest.pulls.get({ ...repo, pull_number: 2 }));
assert.deepEqual(pr2.requested_reviewers, [], "an approving reviewer is no longer requested");
const { data: comments2 } = await gh.rest.pulls.listReviewComments({ ...repo, pull_number: 2 });
assert.equal(comments2.length, 2);
const { data: edited } = await gh.rest.pulls.updateReview({ ...repo, pull_number: 2, review_id: approved.id, body: "LGTM." });
assert.equal(edited.body, "LGTM.");
const { data: dismissed } = await gh.rest.pulls.dismissReview({
  ...repo,
  pull_number: 2,
  review_id: reviews0[0].id,
  message: "Negative refunds are now tested.",
});
assert.equal(dismissed.state, "DISMISSED");
assert.equal((await gh.rest.pulls.getReviewComment({ ...repo, comment_id: rc.id })).data.body, rc.body);
const { data: reworded } = await gh.rest.pulls.updateReviewComment({ ...repo, comment_id: reply.id, body: "Added a check." });
assert.equal(reworded.body, "Added a check.");
assert.equal((await gh.rest.pulls.deleteReviewComment({ ...repo, comment_id: reply.id })).status, 204);
await assert.rejects(gh.rest.pulls.getReviewComment({ ...repo, comment_id: reply.id }), (e) => e.status === 404);
await assert.rejects(gh.rest.pulls.checkIfMerged({ ...repo, pull_number: 2 }), (e) => e.status === 404);
const forRepo = await gh.paginate(gh.rest.pulls.listReviewCommentsForRepo, { ...repo, per_page: 1 });
assert.deepEqual(forRepo.map((c) => c.id), [rc.id]);

// ---- CI: fix the failing context, add a check run, read the combined state
await gh.rest.repos.createCommitStatus({ ...repo, sha: pr2.head.sha, state: "pending", context: "ci/lint" });
let { data: combined } = await gh.rest.repos.getCombinedStatusForRef({ ...repo, ref: pr2.head.sha });
assert.equal(combined.state, "pending", "the latest ci/lint is pending");
await gh.rest.repos.createCommitStatus({
  ...repo,
  sha: pr2.head.sha,
  state: "success",
  context: "ci/lint",
  description: "flake8 clean",
  target_url: "https://ci.example/lint/2",
});
({ data: combined } = await gh.rest.repos.getCombinedStatusForRef({ ...repo, ref: pr2.head.sha }));
assert.equal(combined.state, "success");
assert.equal(combined.total_count, 2);
const { data: statuses } = await gh.rest.repos.listCommitStatusesForRef({ ...repo, ref: pr2.head.sha });
assert.equal(statuses.length, 4, "every status, newest first");
assert.equal(statuses[0].description, "flake8 clean");
// the older alias GET /repos/{owner}/{repo}/statuses/{ref} lists the same
const { data: statusesAlias } = await gh.request("GET /repos/{owner}/{repo}/statuses/{ref}", { ...repo, ref: pr2.head.sha });
assert.deepEqual(statusesAlias.map((s) => s.id), statuses.map((s) => s.id));
await assert.rejects(
  gh.rest.repos.createCommitStatus({ ...repo, sha: pr2.head.sha, state: "green" }),
  (e) => e.status === 422,
);
const { data: run } = await gh.rest.checks.create({ ...repo, name: "e2e", head_sha: pr2.head.sha, status: "in_progress" });
assert.equal(run.conclusion, null);
const { data: done } = await gh.rest.checks.update({
  ...repo,
  check_run_id: run.id,
  conclusion: "success",
  output: { title: "E2E", summary: "12 scenarios passed" },
});
assert.equal(done.status, "completed");
assert.equal((await gh.rest.checks.get({ ...repo, check_run_id: run.id })).data.output.summary, "12 scenarios passed");
assert.equal((await gh.rest.checks.listForRef({ ...repo, ref: pr2.head.sha })).data.total_count, 2);

// ---- main moves on; the PR branch is brought up to date, then squash-merged
const { data: readme } = await gh.rest.repos.getContent({ ...repo, path: "README.md", ref: "main" });
await gh.rest.repos.createOrUpdateFileContents({
  ...repo,
  path: "README.md",
  branch: "main",
  message: "README: mention refunds",
  content: b64("# payments\n\nCharges cards and refunds them.\n"),
  sha: readme.sha,
});
await assert.rejects(
  gh.rest.pulls.updateBranch({ ...repo, pull_number: 2, expected_head_sha: "0".repeat(40) }),
  (e) => e.status === 422,
);
const upd = await gh.rest.pulls.updateBranch({ ...repo, pull_number: 2, expected_head_sha: pr2.head.sha });
assert.equal(upd.status, 202);
const { data: commits2 } = await gh.rest.pulls.listCommits({ ...repo, pull_number: 2 });
assert.equal(commits2.length, 2);
assert.equal(commits2[1].parents.length, 2, "update-branch made a merge commit");
({ data: pr2 } = await gh.rest.pulls.get({ ...repo, pull_number: 2 }));
assert.equal(pr2.head.sha, commits2[1].sha);
await assert.rejects(
  gh.rest.pulls.merge({ ...repo, pull_number: 2, sha: commits2[0].sha }),
  (e) => e.status === 409,
  "a stale head sha is refused",
);
const { data: merged2 } = await gh.rest.pulls.merge({ ...repo, pull_number: 2, sha: pr2.head.sha, merge_method: "squash" });
assert.equal(merged2.merged, true);
({ data: pr2 } = await gh.rest.pulls.get({ ...repo, pull_number: 2 }));
assert.equal(pr2.state, "closed");
assert.equal(pr2.merged, true);
assert.equal(pr2.merge_commit_sha, merged2.sha);
assert.equal((await gh.rest.pulls.checkIfMerged({ ...repo, pull_number: 2 })).status, 204);
const { data: assoc } = await gh.rest.repos.listPullRequestsAssociatedWithCommit({ ...repo, commit_sha: merged2.sha });
assert.deepEqual(assoc.map((p) => p.number), [2]);
const { data: mainRef } = await gh.rest.git.getRef({ ...repo, ref: "heads/main" });
assert.equal(mainRef.object.sha, merged2.sha);
const { data: refundTest } = await gh.rest.repos.getContent({ ...repo, path: "tests/test_refund.py", ref: "main" });
assert.match(unb64(refundTest.content), /def test_refund/);

// ============================================================ the agent's own pull request
const head = await branchWithFile(gh, "feature/retry", "src/retry.py", "def retry(f, n=3):\n    return f()\n", "Add retry helper");
const { data: mine } = await gh.rest.pulls.create({
  ...repo,
  title: "Add retry helper",
  head: "feature/retry",
  base: "main",
  body: "Retries flaky calls.",
});
assert.equal(mine.state, "open");
assert.equal(mine.head.sha, head);
await assert.rejects(
  gh.rest.pulls.create({ ...repo, title: "again", head: "feature/retry", base: "main" }),
  (e) => e.status === 422 && /already exists/.test(e.response.data.errors[0].message),
);
await assert.rejects(gh.rest.pulls.create({ ...repo, title: "x", head: "main", base: "main" }), (e) => e.status === 422);
await assert.rejects(gh.rest.pulls.create({ ...repo, title: "x", head: "no-such", base: "main" }), (e) => e.status === 422);
const { data: myFiles } = await gh.rest.pulls.listFiles({ ...repo, pull_number: mine.number });
assert.deepEqual(myFiles.map((f) => [f.filename, f.status, f.additions]), [["src/retry.py", "added", 2]]);
const myDiff = await gh.rest.pulls.get({ ...repo, pull_number: mine.number, mediaType: { format: "diff" } });
assert.ok(myDiff.data.includes("--- /dev/null\n+++ b/src/retry.py\n@@ -0,0 +1,2 @@\n+def retry(f, n=3):\n"));
// github.com refuses approving or requesting changes on one's own pull request
await assert.rejects(
  gh.rest.pulls.createReview({ ...repo, pull_number: mine.number, event: "APPROVE" }),
  (e) => e.status === 422 && /approve your own/.test(JSON.stringify(e.response.data)),
);
await assert.rejects(
  gh.rest.pulls.createReview({ ...repo, pull_number: mine.number, event: "REQUEST_CHANGES", body: "hm" }),
  (e) => e.status === 422,
);
const { data: note } = await gh.rest.pulls.createReview({ ...repo, pull_number: mine.number, event: "COMMENT", body: "Self-review: n is unused yet." });
assert.equal(note.state, "COMMENTED");
await gh.rest.pulls.requestReviewers({ ...repo, pull_number: mine.number, reviewers: ["rev-bob"] });
assert.deepEqual((await gh.rest.pulls.listRequestedReviewers({ ...repo, pull_number: mine.number })).data.users.map((u) => u.login), ["rev-bob"]);
await gh.rest.pulls.removeRequestedReviewers({ ...repo, pull_number: mine.number, reviewers: ["rev-bob"] });
assert.deepEqual((await gh.rest.pulls.listRequestedReviewers({ ...repo, pull_number: mine.number })).data.users, []);
await gh.rest.pulls.requestReviewers({ ...repo, pull_number: mine.number, reviewers: ["rev-bob"] });
await assert.rejects(
  gh.rest.pulls.requestReviewers({ ...repo, pull_number: mine.number, reviewers: ["pome-agent"] }),
  (e) => e.status === 422,
  "not from the author",
);
await gh.rest.repos.createCommitStatus({ ...repo, sha: head, state: "success", context: "ci/tests" });
await gh.rest.checks.create({ ...repo, name: "build", head_sha: head, conclusion: "success" });
assert.equal((await gh.rest.repos.getCombinedStatusForRef({ ...repo, ref: head })).data.state, "success");
const { data: mergedMine } = await gh.rest.pulls.merge({ ...repo, pull_number: mine.number, sha: head, merge_method: "merge" });
assert.equal(mergedMine.merged, true);
const { data: retry } = await gh.rest.repos.getContent({ ...repo, path: "src/retry.py", ref: "main" });
assert.match(unb64(retry.content), /def retry/);
const { data: mergeCommit } = await gh.rest.repos.getCommit({ ...repo, ref: mergedMine.sha });
assert.equal(mergeCommit.parents.length, 2);
assert.match(mergeCommit.commit.message, /^Merge pull request #\d+ from acme\/feature\/retry/);
await assert.rejects(gh.rest.pulls.merge({ ...repo, pull_number: mine.number }), (e) => e.status === 405);

// ---- two pull requests changing the same file: the second cannot merge
await branchWithFile(gh, "conflict-a", "README.md", "# payments (A)\n", "A's README");
await branchWithFile(gh, "conflict-b", "README.md", "# payments (B)\n", "B's README");
const { data: pa } = await gh.rest.pulls.create({ ...repo, title: "A", head: "conflict-a", base: "main" });
const { data: pb } = await gh.rest.pulls.create({ ...repo, title: "B", head: "conflict-b", base: "main" });
await gh.rest.pulls.merge({ ...repo, pull_number: pa.number });
const { data: pbNow } = await gh.rest.pulls.get({ ...repo, pull_number: pb.number });
assert.equal(pbNow.mergeable, false);
assert.equal(pbNow.mergeable_state, "dirty");
await assert.rejects(gh.rest.pulls.merge({ ...repo, pull_number: pb.number }), (e) => e.status === 405);
await assert.rejects(gh.rest.pulls.updateBranch({ ...repo, pull_number: pb.number }), (e) => e.status === 422);
const { data: closed } = await gh.rest.pulls.update({ ...repo, pull_number: pb.number, state: "closed", title: "B (superseded)" });
assert.equal(closed.state, "closed");
assert.equal(closed.title, "B (superseded)");
const open = await gh.paginate(gh.rest.pulls.list, { ...repo, state: "open" });
assert.deepEqual(open.map((p) => p.number), [3]);

// ---- a protected base: required checks and approvals hold the merge back (405), as on github.com
await gh.rest.repos.updateBranchProtection({
  ...repo,
  branch: "main",
  required_status_checks: { strict: false, contexts: ["ci/tests"] },
  enforce_admins: true,
  required_pull_request_reviews: { required_approving_review_count: 1 },
  restrictions: null,
});
const gHead = await branchWithFile(gh, "feature/guarded", "src/guard.py", "GUARD = True\n", "Add guard");
const { data: guarded } = await gh.rest.pulls.create({ ...repo, title: "Guard", head: "feature/guarded", base: "main" });
assert.equal((await gh.rest.pulls.get({ ...repo, pull_number: guarded.number })).data.mergeable_state, "blocked");
await assert.rejects(
  gh.rest.pulls.merge({ ...repo, pull_number: guarded.number }),
  (e) => e.status === 405 && e.response.data.message === 'Required status check "ci/tests" is expected.',
);
await gh.rest.repos.createCommitStatus({ ...repo, sha: gHead, state: "success", context: "ci/tests" });
await assert.rejects(
  gh.rest.pulls.merge({ ...repo, pull_number: guarded.number }),
  (e) => e.status === 405 && /At least 1 approving review is required/.test(e.response.data.message),
);
await gh.rest.repos.deleteBranchProtection({ ...repo, branch: "main" });
assert.equal((await gh.rest.pulls.merge({ ...repo, pull_number: guarded.number })).data.merged, true);

// ---- the tape: every world change carries its row before and after
const tape = await (await fetch(`${restUrl}/_pome/events`, { headers: { authorization: `Bearer ${sb.session_token}` } })).json();
const merges = tape.filter((e) => e.tool === "merge_pull_request" && e.state_mutation);
assert.equal(merges.length, 4);
for (const m of merges) {
  assert.equal(m.state_delta.before.merged, false);
  assert.equal(m.state_delta.after.merged, true);
}
assert.ok(tape.some((e) => e.tool === "create_commit_status" && e.state_mutation && e.state_delta.before === null));
assert.ok(tape.filter((e) => e.tool === "pull_request_read").every((e) => !e.state_mutation));

// ============================================================ every MCP tool this file owns
const mcp = await mcpClient(mcpUrl, sb.session_token);
const tools = (await mcp.listTools()).tools.map((t) => t.name);
for (const t of [
  "list_pull_requests",
  "pull_request_read",
  "create_pull_request",
  "update_pull_request",
  "update_pull_request_branch",
  "merge_pull_request",
  "pull_request_review_write",
  "create_pull_request_review",
  "add_reply_to_pull_request_comment",
])
  assert.ok(tools.includes(t), `tools/list has ${t}`);
const mh = await branchWithFile(gh, "mcp/feature", "docs/usage.md", "Use charge() and refund().\n", "Usage docs");
// the official server's outputs: MinimalResponse {id, url} for writes, trimmed objects for reads
const created = await call(mcp, "create_pull_request", { ...repo, title: "Usage docs", head: "mcp/feature", base: "main", body: "Docs." });
assert.equal(typeof created.id, "string");
const n = Number(created.url.match(/\/pull\/(\d+)$/)[1]);
assert.ok(created.url.startsWith("https://github.com/acme/payments/pull/"));
const listed = await call(mcp, "list_pull_requests", { ...repo, state: "open", perPage: 10 });
const mine2 = listed.find((p) => p.number === n);
assert.equal(mine2.head.ref, "mcp/feature");
assert.equal(mine2.user.login, "pome-agent");
assert.equal(mine2.head.repo.full_name, "acme/payments");
const slim = await call(mcp, "list_pull_requests", { ...repo, state: "all", fields: ["number", "state"] });
assert.ok(slim.every((p) => Object.keys(p).sort().join() === "number,state"));
const updated = await call(mcp, "update_pull_request", { ...repo, pullNumber: n, title: "Usage docs (charge, refund)", draft: false });
assert.equal(updated.url, created.url);
const got = await call(mcp, "pull_request_read", { method: "get", ...repo, pullNumber: n });
assert.equal(got.title, "Usage docs (charge, refund)");
assert.equal(got.head.sha, mh);
assert.equal(got.changed_files, 1);
assert.equal(got.mergeable_state, "clean");
const mdiff = await call(mcp, "pull_request_read", { method: "get_diff", ...repo, pullNumber: n });
assert.ok(mdiff.startsWith("diff --git a/docs/usage.md b/docs/usage.md\nnew file mode 100644\n"), mdiff);
const mfiles = await call(mcp, "pull_request_read", { method: "get_files", ...repo, pullNumber: n });
assert.deepEqual(mfiles, [{ filename: "docs/usage.md", status: "added", additions: 1, changes: 1, patch: "@@ -0,0 +1 @@\n+Use charge() and refund()." }]);
await gh.rest.repos.createCommitStatus({ ...repo, sha: mh, state: "pending", context: "docs/build" });
const mstatus = await call(mcp, "pull_request_read", { method: "get_status", ...repo, pullNumber: n });
assert.deepEqual([mstatus.state, mstatus.sha, mstatus.total_count, mstatus.statuses[0].context], ["pending", mh, 1, "docs/build"]);
await gh.rest.checks.create({ ...repo, name: "docs", head_sha: mh, conclusion: "success" });
const mruns = await call(mcp, "pull_request_read", { method: "get_check_runs", ...repo, pullNumber: n });
assert.deepEqual(mruns.check_runs.map((r) => [r.name, r.status, r.conclusion]), [["docs", "completed", "success"]]);
const { data: mrc } = await gh.rest.pulls.createReviewComment({ ...repo, pull_number: n, commit_id: mh, path: "docs/usage.md", line: 1, body: "Link the API docs?" });
const mreply = await call(mcp, "add_reply_to_pull_request_comment", { ...repo, pullNumber: n, commentId: mrc.id, body: "Will do." });
assert.match(mreply.url, /#discussion_r\d+$/);
const mreact = await call(mcp, "add_reply_to_pull_request_comment", { ...repo, commentId: mrc.id, reaction: "rocket" });
assert.match(mreact.url, /\/reactions\/\d+$/);
const threads = await call(mcp, "pull_request_read", { method: "get_review_comments", ...repo, pullNumber: n });
assert.equal(threads.totalCount, 1);
assert.deepEqual(threads.review_threads[0].comments.map((c) => [c.author, c.body]), [
  ["pome-agent", "Link the API docs?"],
  ["pome-agent", "Will do."],
]);
assert.equal(threads.review_threads[0].is_outdated, false);
const { data: rest2 } = await gh.rest.pulls.listReviewComments({ ...repo, pull_number: n });
assert.equal(rest2[1].in_reply_to_id, mrc.id, "the reply is threaded under the comment");
await gh.rest.issues.createComment({ ...repo, issue_number: n, body: "Thanks!" }).catch(() => null);
const mcomments = await call(mcp, "pull_request_read", { method: "get_comments", ...repo, pullNumber: n });
assert.ok(Array.isArray(mcomments));
assert.equal(await call(mcp, "pull_request_review_write", { method: "create", ...repo, pullNumber: n, body: "draft" }), "pending pull request created");
assert.equal(await call(mcp, "pull_request_review_write", { method: "delete_pending", ...repo, pullNumber: n }), "pending pull request review successfully deleted");
await call(mcp, "pull_request_review_write", { method: "delete_pending", ...repo, pullNumber: n }, { error: true });
await call(mcp, "pull_request_review_write", { method: "create", ...repo, pullNumber: n });
assert.equal(
  await call(mcp, "pull_request_review_write", { method: "submit_pending", ...repo, pullNumber: n, event: "COMMENT", body: "Self-check done." }),
  "pending pull request review successfully submitted",
);
const own = await call(mcp, "create_pull_request_review", { ...repo, pullNumber: n, event: "APPROVE" }, { error: true });
assert.match(JSON.stringify(own), /approve your own/);
const cr = await call(mcp, "create_pull_request_review", { ...repo, pullNumber: n, event: "COMMENT", body: "Reads well." });
assert.deepEqual(cr, { message: "pull request review submitted successfully" });
const mreviews = await call(mcp, "pull_request_read", { method: "get_reviews", ...repo, pullNumber: n });
assert.ok(mreviews.length >= 2 && mreviews.every((v) => v.state === "COMMENTED" && v.user.login === "pome-agent"));
assert.ok(mreviews.some((v) => v.body === "Reads well."));
const ub = await call(mcp, "update_pull_request_branch", { ...repo, pullNumber: n, expectedHeadSha: mh });
assert.equal(ub.message, "Updating pull request branch.");
await call(mcp, "merge_pull_request", { ...repo, pullNumber: n, expectedHeadSha: "0".repeat(40) }, { error: true });
const mm = await call(mcp, "merge_pull_request", { ...repo, pullNumber: n, merge_method: "rebase", expectedHeadSha: mh });
assert.equal(mm.merged, true);
const again = await call(mcp, "merge_pull_request", { ...repo, pullNumber: n }, { error: true });
assert.match(JSON.stringify(again), /not mergeable/);
const afterMerge = await call(mcp, "pull_request_read", { method: "get", ...repo, pullNumber: n });
assert.deepEqual([afterMerge.state, afterMerge.merged, afterMerge.merged_by], ["closed", true, "pome-agent"]);
await mcp.close();
await discard(sb.session_id);

// ============================================================ the same seed file under `pome twin start`
const twin = spawn(`${build}/cli/pome`, ["twin", "start", "github", "--port", "0", "--seed", seedFile], {
  stdio: ["ignore", "pipe", "pipe"],
});
try {
  const banner = await new Promise((resolve, reject) => {
    let out = "";
    twin.stdout.on("data", (d) => {
      out += d;
      if (/github token/.test(out)) resolve(out);
    });
    twin.on("exit", (code) => reject(new Error(`pome twin start exited ${code}: ${out}`)));
    setTimeout(() => reject(new Error(`pome twin start said: ${out}`)), 10000);
  });
  const localUrl = banner.match(/rest_url\s+(\S+)/)[1];
  const localToken = banner.match(/\n\s+token\s+(\S+)/)[1];
  const local = github(localToken, localUrl);
  const { data: lp } = await local.rest.pulls.get({ ...repo, pull_number: 2 });
  assert.equal(lp.user.login, "dev-alice");
  assert.equal((await local.rest.repos.getCombinedStatusForRef({ ...repo, ref: lp.head.sha })).data.state, "failure");
  const { data: lr } = await local.rest.pulls.createReview({ ...repo, pull_number: 2, event: "REQUEST_CHANGES", body: "ci/lint is red." });
  assert.equal(lr.state, "CHANGES_REQUESTED");
  const lm = await mcpClient(banner.match(/mcp_url\s+(\S+)/)[1], localToken);
  const lreviews = await call(lm, "pull_request_read", { method: "get_reviews", ...repo, pullNumber: 2 });
  assert.deepEqual(lreviews.map((v) => `${v.user.login}:${v.state}`), ["rev-bob:CHANGES_REQUESTED", "pome-agent:CHANGES_REQUESTED"]);
  await lm.close();
} finally {
  twin.kill("SIGTERM");
}
console.log("ok: github pulls conformance");
