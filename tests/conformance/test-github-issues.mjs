// Issues of the GitHub twin, driven by the vendors' own unmodified clients: @octokit/rest
// for a realistic triage of a busy backlog (paginate every issue and pull request, filter,
// label, milestone, assign, comment, close, search) and @modelcontextprotocol/sdk for the
// official github-mcp-server issue tools (get_me, issue_read, issue_write, list_issues,
// create_issue, add_issue_comment, search_issues). The sandbox is made from
// sandbox-images/github/seeds/triage-backlog.json, a seed in hosted Pome's task-seed format;
// what the test expects of the seeded backlog it computes from that file, not from the twin.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { Octokit } from "@octokit/rest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { control, discard } from "./lib.mjs";

const src = process.env.POME_SOURCE_DIR;
const build = process.env.POME_BUILD_DIR;
const seedFile = `${src}/sandbox-images/github/seeds/triage-backlog.json`;
const seed = JSON.parse(readFileSync(seedFile, "utf8"));

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const github = (auth, baseUrl) => new Octokit({ auth, baseUrl, log: quiet, request: { retries: 0 } });

// The error an octokit call is refused with (status and GitHub's body).
async function refusal(promise) {
  try {
    await promise;
  } catch (e) {
    return { status: e.status, body: e.response?.data };
  }
  assert.fail("the call was not refused");
}

// ---- what the seed says about acme/webapp (the twin is not asked)
const seeded = seed.repositories.find((r) => r.name === "webapp");
const rows = [...seeded.issues.map((i) => ({ ...i, pr: false })), ...seeded.pull_requests.map((p) => ({ ...p, pr: true }))];
const stateOf = (x) => (x.state === "merged" || x.merged ? "closed" : x.state ?? "open");
const assigneesOf = (x) => [...(x.assignee ? [x.assignee] : []), ...(x.assignees ?? [])];
const openRows = rows.filter((x) => stateOf(x) === "open");
const byNumber = (a, b) => a - b;
const numbers = (list) => list.map((x) => x.number).sort(byNumber);

const repo = { owner: "acme", repo: "webapp" };
let r = await control("POST", "/v1/sandboxes", { twins: ["github"], seeds: { github: "triage-backlog" } });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const restUrl = sb.per_twin.github.rest_url;
const gh = github(sb.session_token, restUrl);

// ============================================================ REST: read the backlog
// octokit.paginate follows Link rel="next" across pages; pull requests come with issues
const everything = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, state: "all", per_page: 20 });
assert.equal(everything.length, rows.length, "all issues and pull requests, over three pages");
assert.deepEqual(numbers(everything), numbers(rows));
const prs = everything.filter((i) => i.pull_request);
assert.deepEqual(numbers(prs), numbers(rows.filter((x) => x.pr)), "pull requests carry pull_request");
for (const p of prs) {
  assert.equal(p.pull_request.html_url, `https://github.com/acme/webapp/pull/${p.number}`);
  assert.equal(p.pull_request.diff_url, `${p.pull_request.html_url}.diff`);
  assert.equal(p.pull_request.url, `${restUrl}/repos/acme/webapp/pulls/${p.number}`);
}
const merged = prs.find((p) => p.pull_request.merged_at);
assert.ok(merged && merged.state === "closed", "the merged pull request shows merged_at");

const firstPage = await gh.rest.issues.listForRepo({ ...repo, per_page: 20 });
assert.equal(firstPage.data.length, 20);
assert.match(firstPage.headers.link, /[?&]page=2>; rel="next"/);
assert.match(firstPage.headers.link, /per_page=20/);
const openAll = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, per_page: 100 });
assert.deepEqual(numbers(openAll), numbers(openRows), "state defaults to open");
const sorted = openAll.map((i) => i.created_at);
assert.deepEqual(sorted, [...sorted].sort().reverse(), "newest first");

// filters as github.com has them
const triage = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, labels: "needs-triage" });
assert.deepEqual(numbers(triage), numbers(openRows.filter((x) => (x.labels ?? []).includes("needs-triage"))));
const both = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, labels: "bug,area:auth", state: "all" });
assert.deepEqual(numbers(both), numbers(rows.filter((x) => ["bug", "area:auth"].every((l) => (x.labels ?? []).includes(l)))));
const unassigned = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, assignee: "none" });
assert.deepEqual(numbers(unassigned), numbers(openRows.filter((x) => assigneesOf(x).length === 0)));
const alices = await gh.rest.issues.listForRepo({ ...repo, assignee: "alice", state: "all" });
assert.deepEqual(numbers(alices.data), numbers(rows.filter((x) => assigneesOf(x).includes("alice"))), "the seed's singular assignee");
const onMs = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, milestone: "2" });
assert.deepEqual(numbers(onMs), numbers(openRows.filter((x) => x.milestone === 2)));
const noMs = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, milestone: "none", state: "closed" });
assert.deepEqual(numbers(noMs), numbers(rows.filter((x) => stateOf(x) === "closed" && !x.milestone)));
const byErin = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, creator: "erin", state: "all" });
assert.deepEqual(numbers(byErin), numbers(rows.filter((x) => (x.user ?? x.author) === "erin")));
const mentionsCarol = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, mentioned: "carol" });
assert.ok(mentionsCarol.length > 0 && mentionsCarol.every((i) => /@carol\b/.test(i.body ?? "") || i.comments > 0));
const busiest = await gh.rest.issues.listForRepo({ ...repo, state: "all", sort: "comments", per_page: 1 });
assert.equal(busiest.data[0].comments, Math.max(...rows.map((x) => (x.comments ?? []).length)));
const recent = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, state: "all", since: "2026-03-15T00:00:00Z" });
assert.ok(recent.length > 0 && recent.every((i) => i.updated_at >= "2026-03-15T00:00:00Z"));
assert.deepEqual(numbers(recent), numbers(rows.filter((x) => x.updated_at >= "2026-03-15T00:00:00Z")));

// one issue, one pull request through the issues routes
const { data: two } = await gh.rest.issues.get({ ...repo, issue_number: 2 });
// sub-issues are not modelled: every issue has none, as a fresh github.com issue does
assert.deepEqual((await gh.rest.issues.listSubIssues({ ...repo, issue_number: 2 })).data, []);
assert.equal(two.assignee.login, "alice");
assert.equal(two.html_url, "https://github.com/acme/webapp/issues/2");
const prRow = seeded.pull_requests.find((p) => stateOf(p) === "open" && (p.comments ?? []).length > 0);
const { data: prIssue } = await gh.rest.issues.get({ ...repo, issue_number: prRow.number });
assert.equal(prIssue.title, prRow.title);
assert.ok(prIssue.pull_request);
const { data: prComments } = await gh.rest.issues.listComments({ ...repo, issue_number: prRow.number });
assert.deepEqual(prComments.map((c) => c.body), prRow.comments.map((c) => c.body), "a PR's conversation");

// error shapes
let e = await refusal(gh.rest.issues.get({ ...repo, issue_number: 9999 }));
assert.equal(e.status, 404);
assert.deepEqual(e.body, { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" });
// a method GitHub has on no such path is its 404 (not the twin's 501 unsupported)
e = await refusal(gh.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}", { ...repo, issue_number: 2 }));
assert.equal(e.status, 404);
assert.deepEqual(e.body, { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" });
e = await refusal(gh.rest.issues.create({ ...repo, title: "" }));
assert.equal(e.status, 422);
assert.equal(e.body.message, "Validation Failed");
assert.deepEqual(e.body.errors, [{ resource: "Issue", field: "title", code: "missing_field" }]);
e = await refusal(gh.rest.issues.listForRepo({ ...repo, state: "sideways" }));
assert.equal(e.status, 422);
assert.equal(e.body.errors[0].field, "state");

// ============================================================ REST: labels
const labels = await gh.paginate(gh.rest.issues.listLabelsForRepo, { ...repo, per_page: 5 });
assert.deepEqual(labels.map((l) => l.name).sort(), seeded.labels.map((l) => l.name).sort());
const { data: created } = await gh.rest.issues.createLabel({ ...repo, name: "regression", color: "e11d21", description: "Worked before" });
assert.equal(created.name, "regression");
assert.equal(created.default, false);
e = await refusal(gh.rest.issues.createLabel({ ...repo, name: "Regression", color: "000000" }));
assert.equal(e.status, 422);
assert.deepEqual(e.body.errors, [{ resource: "Label", code: "already_exists", field: "name" }]);
const { data: renamed } = await gh.rest.issues.updateLabel({ ...repo, name: "area:ui", new_name: "area:frontend", color: "5319e7" });
assert.equal(renamed.name, "area:frontend");
const frontend = await gh.paginate(gh.rest.issues.listForRepo, { ...repo, labels: "area:frontend", state: "all" });
assert.deepEqual(numbers(frontend), numbers(rows.filter((x) => (x.labels ?? []).includes("area:ui"))), "issues follow a rename");
assert.equal((await gh.rest.issues.getLabel({ ...repo, name: "area:frontend" })).data.color, "5319e7");
assert.equal((await refusal(gh.rest.issues.getLabel({ ...repo, name: "area:ui" }))).status, 404);

// the triage of one needs-triage issue: labels swapped, milestone, assignees, a comment
const target = triage[triage.length - 1].number;
const { data: afterAdd } = await gh.rest.issues.addLabels({ ...repo, issue_number: target, labels: ["regression"] });
assert.ok(afterAdd.some((l) => l.name === "regression"));
const { data: afterRemove } = await gh.rest.issues.removeLabel({ ...repo, issue_number: target, name: "needs-triage" });
assert.ok(!afterRemove.some((l) => l.name === "needs-triage"));
e = await refusal(gh.rest.issues.removeLabel({ ...repo, issue_number: target, name: "needs-triage" }));
assert.equal(e.status, 404);
assert.equal(e.body.message, "Label does not exist");
const { data: setTo } = await gh.rest.issues.setLabels({ ...repo, issue_number: target, labels: ["bug", "regression", "priority:high"] });
assert.deepEqual(setTo.map((l) => l.name), ["bug", "regression", "priority:high"]);
const { data: onIssue } = await gh.rest.issues.listLabelsOnIssue({ ...repo, issue_number: target });
assert.deepEqual(onIssue.map((l) => l.name), ["bug", "regression", "priority:high"]);
await gh.rest.issues.deleteLabel({ ...repo, name: "priority:high" });
assert.deepEqual((await gh.rest.issues.listLabelsOnIssue({ ...repo, issue_number: target })).data.map((l) => l.name), ["bug", "regression"]);

// ============================================================ REST: milestones
const { data: openMs } = await gh.rest.issues.listMilestones({ ...repo });
const seededOpen = seeded.milestones.filter((m) => m.state === "open").sort((a, b) => a.due_on.localeCompare(b.due_on));
assert.deepEqual(openMs.map((m) => m.title), seededOpen.map((m) => m.title), "open ones, by due date");
for (const m of openMs) {
  assert.equal(m.open_issues, openRows.filter((x) => x.milestone === m.number).length, `${m.title} open_issues`);
  assert.equal(m.closed_issues, rows.filter((x) => x.milestone === m.number && stateOf(x) === "closed").length);
}
const { data: allMs } = await gh.rest.issues.listMilestones({ ...repo, state: "all", sort: "completeness", direction: "desc" });
assert.equal(allMs.length, seeded.milestones.length);
assert.equal(allMs[0].state, "closed", "the shipped milestone is complete");
const { data: v16 } = await gh.rest.issues.createMilestone({ ...repo, title: "v1.6", description: "Regressions", due_on: "2026-11-01T00:00:00Z" });
assert.equal(v16.number, Math.max(...seeded.milestones.map((m) => m.number)) + 1);
assert.equal(v16.creator.login, "pome-agent");
assert.equal(v16.open_issues, 0);
e = await refusal(gh.rest.issues.createMilestone({ ...repo, title: "v1.6" }));
assert.equal(e.status, 422);
assert.deepEqual(e.body.errors, [{ resource: "Milestone", code: "already_exists", field: "title" }]);
const { data: moved } = await gh.rest.issues.update({ ...repo, issue_number: target, milestone: v16.number });
assert.equal(moved.milestone.title, "v1.6");
assert.equal((await gh.rest.issues.getMilestone({ ...repo, milestone_number: v16.number })).data.open_issues, 1);
const { data: v16b } = await gh.rest.issues.updateMilestone({ ...repo, milestone_number: v16.number, description: "Regressions found in v1.5" });
assert.equal(v16b.description, "Regressions found in v1.5");

// ============================================================ REST: assignees
const { data: assignable } = await gh.rest.issues.listAssignees({ ...repo });
const collaborators = seeded.collaborators;
assert.deepEqual(assignable.map((u) => u.login).sort(), [...collaborators].sort());
assert.equal((await gh.rest.issues.checkUserCanBeAssigned({ ...repo, assignee: "carol" })).status, 204);
const reporter = rows.map((x) => x.user).find((u) => u && !collaborators.includes(u));
assert.equal((await refusal(gh.rest.issues.checkUserCanBeAssigned({ ...repo, assignee: reporter }))).status, 404);
const { data: assigned } = await gh.rest.issues.addAssignees({ ...repo, issue_number: target, assignees: [reporter, "carol"] });
assert.deepEqual(assigned.assignees.map((u) => u.login), ["carol"], `${reporter} is silently dropped`);
const { data: unassignedNow } = await gh.rest.issues.removeAssignees({ ...repo, issue_number: target, assignees: ["carol"] });
assert.deepEqual(unassignedNow.assignees, []);
await gh.rest.issues.update({ ...repo, issue_number: target, assignees: ["dave"] });

// ============================================================ REST: comments
const { data: mine } = await gh.rest.issues.createComment({ ...repo, issue_number: target, body: "Triaged: regression from v1.5, @dave owns it." });
assert.equal(mine.user.login, "pome-agent");
assert.equal(mine.issue_url, `${restUrl}/repos/acme/webapp/issues/${target}`);
const { data: onPr } = await gh.rest.issues.createComment({ ...repo, issue_number: prRow.number, body: "Linked to the triage." });
assert.ok(onPr.html_url.includes(`/issues/${prRow.number}#issuecomment-`));
const repoComments = await gh.paginate(gh.rest.issues.listCommentsForRepo, { ...repo, per_page: 7 });
assert.equal(repoComments.length, rows.reduce((n, x) => n + (x.comments ?? []).length, 0) + 2);
const newest = await gh.rest.issues.listCommentsForRepo({ ...repo, sort: "created", direction: "desc", per_page: 2 });
assert.deepEqual(newest.data.map((c) => c.id).sort(byNumber), [mine.id, onPr.id].sort(byNumber));
assert.equal((await gh.rest.issues.getComment({ ...repo, comment_id: mine.id })).data.body, mine.body);
const { data: edited } = await gh.rest.issues.updateComment({ ...repo, comment_id: mine.id, body: "Triaged: regression from v1.5; @dave owns it." });
assert.equal(edited.body, "Triaged: regression from v1.5; @dave owns it.");
assert.equal((await gh.rest.issues.deleteComment({ ...repo, comment_id: onPr.id })).status, 204);
assert.equal((await refusal(gh.rest.issues.getComment({ ...repo, comment_id: onPr.id }))).status, 404);
assert.equal((await gh.rest.issues.get({ ...repo, issue_number: target })).data.comments, 1);

// close: a duplicate issue as not planned, a stale pull request through the issues API
const dupe = openRows.find((x) => !x.pr && x.number !== target && x.number !== 2);
const { data: closed } = await gh.rest.issues.update({ ...repo, issue_number: dupe.number, state: "closed", state_reason: "not_planned" });
assert.equal(closed.state_reason, "not_planned");
assert.ok(closed.closed_at);
assert.equal(closed.closed_by.login, "pome-agent", "a single issue names who closed it");
assert.equal((await gh.rest.issues.get({ ...repo, issue_number: dupe.number })).data.closed_by.login, "pome-agent");
const stale = seeded.pull_requests.find((p) => stateOf(p) === "open" && p.number !== prRow.number);
const { data: closedPr } = await gh.rest.issues.update({ ...repo, issue_number: stale.number, state: "closed" });
assert.equal(closedPr.state, "closed");
assert.ok(closedPr.pull_request);
assert.equal((await gh.rest.pulls.get({ ...repo, pull_number: stale.number })).data.state, "closed", "the pull request is closed");

// ============================================================ REST: search
const search = (q, extra = {}) => gh.rest.search.issuesAndPullRequests({ q, ...extra });
let { data: found } = await search("repo:acme/webapp is:pr is:open");
assert.equal(found.total_count, seeded.pull_requests.filter((p) => stateOf(p) === "open").length - 1);
assert.equal(found.incomplete_results, false);
assert.ok(found.items.every((i) => i.pull_request));
({ data: found } = await search("repo:acme/webapp is:issue label:regression"));
assert.deepEqual(found.items.map((i) => i.number), [target]);
({ data: found } = await search("repo:acme/webapp is:issue is:open no:assignee -label:bug"));
assert.ok(found.total_count > 0 && found.items.every((i) => i.assignees.length === 0 && !i.labels.some((l) => l.name === "bug")));
({ data: found } = await search('"owns it" in:comments'));
assert.deepEqual(found.items.map((i) => i.number), [target]);
({ data: found } = await search("repo:acme/webapp author:erin is:issue", { sort: "created", order: "asc", per_page: 5 }));
assert.equal(found.items.length, 5);
assert.equal(found.total_count, rows.filter((x) => !x.pr && x.user === "erin").length);
const erinAll = await gh.paginate("GET /search/issues", { q: "repo:acme/webapp author:erin is:issue", per_page: 5 });
assert.equal(erinAll.length, found.total_count, "paginate walks search pages");
({ data: found } = await search("milestone:v1.6 assignee:dave"));
assert.deepEqual(found.items.map((i) => i.number), [target]);
e = await refusal(gh.rest.search.issuesAndPullRequests({ q: "" }));
assert.equal(e.status, 422);
assert.equal(e.body.errors[0].field, "q");
// a repository that does not exist cannot be searched: 422, as github.com, not zero items
e = await refusal(search("repo:acme/web-app is:issue"));
assert.equal(e.status, 422);
assert.equal(e.body.message, "Validation Failed");
assert.deepEqual({ ...e.body.errors[0], message: undefined }, { resource: "Search", field: "q", code: "invalid", message: undefined });
assert.match(e.body.errors[0].message, /^The listed users and repositories cannot be searched/);

// the milestone goes, the issue keeps no milestone
assert.equal((await gh.rest.issues.deleteMilestone({ ...repo, milestone_number: v16.number })).status, 204);
assert.equal((await gh.rest.issues.get({ ...repo, issue_number: target })).data.milestone, null);

// ---- the tape: each REST call stamps the tool its route names
const events = async () => (await fetch(`${restUrl}/_pome/events`, { headers: { authorization: `Bearer ${sb.session_token}` } })).json();
let tape = await events();
const pathOf = (t) => t.path.split("?")[0];
const toolOf = (method, pathRe) => tape.filter((t) => t.method === method && pathRe.test(pathOf(t))).map((t) => t.tool);
const uniq = (a) => [...new Set(a)];
assert.deepEqual(uniq(toolOf("GET", /\/issues\/\d+$/)), ["issue_read"]);
assert.deepEqual(uniq(toolOf("PATCH", /\/issues\/\d+$/)), ["issue_write"]);
assert.deepEqual(uniq(toolOf("GET", /\/issues\/\d+\/comments$/)), ["issue_read"]);
assert.deepEqual(uniq(toolOf("GET", /\/issues\/\d+\/labels$/)), ["issue_read"]);
assert.deepEqual(uniq(toolOf("GET", /\/repos\/acme\/webapp\/issues$/)), ["list_issues"]);
assert.deepEqual(uniq(toolOf("GET", /\/search\/issues$/)), ["search_issues"]);
assert.deepEqual(uniq(toolOf("POST", /\/labels$/)), ["create_label", "add_issue_labels"]);
assert.deepEqual(uniq(toolOf("PATCH", /\/issues\/comments\/\d+$/)), ["update_issue_comment"]);
assert.deepEqual(uniq(toolOf("DELETE", /\/milestones\/\d+$/)), ["delete_milestone"]);
const closing = tape.find((t) => t.tool === "issue_write" && t.state_delta?.after?.number === stale.number);
assert.equal(closing.state_delta.before.state, "open");
assert.equal(closing.state_delta.after.state, "closed");
assert.ok(tape.filter((t) => t.tool === "issue_read" || t.tool === "list_issues").every((t) => !t.state_mutation));
assert.ok(tape.filter((t) => t.status >= 400).every((t) => !t.state_mutation), "refusals change nothing");

// ============================================================ MCP: the official issue tools
const client = new Client({ name: "conformance-issues", version: "1.0.0" });
await client.connect(
  new StreamableHTTPClientTransport(new URL(sb.per_twin.github.mcp_url), {
    requestInit: { headers: { authorization: `Bearer ${sb.session_token}` } },
  }),
);
async function call(name, args, { error = false } = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError ?? false, error, `${name}: ${res.content?.[0]?.text}`);
  return JSON.parse(res.content[0].text);
}
const official = [
  "get_me", "issue_read", "issue_write", "list_issues", "create_issue", "add_issue_comment", "search_issues",
  "search_code", "search_commits", "search_repositories", "search_users", "list_pull_requests", "pull_request_read",
  "create_pull_request", "update_pull_request", "update_pull_request_branch", "merge_pull_request",
  "pull_request_review_write", "create_pull_request_review", "add_reply_to_pull_request_comment", "get_file_contents",
  "create_or_update_file", "delete_file", "push_files", "list_branches", "create_branch", "list_commits", "get_commit",
  "list_tags", "get_tag", "list_releases", "get_latest_release", "get_release_by_tag", "list_repository_collaborators",
  "create_repository", "fork_repository",
];
const listed = (await client.listTools()).tools;
// … and pomed's finalize_run, on every twin of a sandbox (test-finalize-run.mjs)
assert.deepEqual(listed.map((t) => t.name).sort(), [...official, "finalize_run"].sort(), "tools/list is the official server's");
const schema = (n) => listed.find((t) => t.name === n).inputSchema;
assert.deepEqual(schema("list_issues").properties.state.enum, ["OPEN", "CLOSED"]);
assert.deepEqual(schema("issue_read").required, ["method", "owner", "repo", "issue_number"]);
assert.deepEqual(schema("issue_write").properties.method.enum, ["create", "update"]);
assert.deepEqual(schema("create_issue").required, ["owner", "repo", "title"]);

const me = await call("get_me", {});
assert.equal(me.login, "pome-agent");
assert.equal(me.profile_url, "https://github.com/pome-agent");
assert.equal(me.details.name, "Pome Triage Agent");

// list_issues: GraphQL's issues (no pull requests), cursor pages
const openIssues = openRows.filter((x) => !x.pr).length - 1; // one closed above
let page = await call("list_issues", { ...repo, state: "OPEN", perPage: 25 });
assert.equal(page.totalCount, openIssues);
assert.equal(page.issues.length, 25);
assert.equal(page.pageInfo.hasNextPage, true);
assert.ok(page.issues.every((i) => i.state === "OPEN" && Array.isArray(i.assignees)));
const walked = [...page.issues];
while (page.pageInfo.hasNextPage) {
  page = await call("list_issues", { ...repo, state: "OPEN", perPage: 25, after: page.pageInfo.endCursor });
  assert.equal(page.pageInfo.hasPreviousPage, true);
  walked.push(...page.issues);
}
assert.equal(walked.length, openIssues);
assert.ok(!walked.some((i) => seeded.pull_requests.some((p) => p.number === i.number)), "no pull requests");
const closedIssues = await call("list_issues", { ...repo, state: "CLOSED", orderBy: "UPDATED_AT", direction: "ASC", fields: ["number", "state"] });
assert.ok(closedIssues.issues.every((i) => Object.keys(i).sort().join() === "number,state" && i.state === "CLOSED"));
const paged = await call("list_issues", { ...repo, page: 2 }, { error: true });
assert.match(JSON.stringify(paged), /cursor-based pagination/);

// issue_read, every method
const got = await call("issue_read", { method: "get", ...repo, issue_number: target });
assert.deepEqual(got.labels, ["bug", "regression"]);
assert.deepEqual(got.assignees, ["dave"]);
assert.equal(got.html_url, `https://github.com/acme/webapp/issues/${target}`);
assert.equal(got.user.login, rows.find((x) => x.number === target).user);
const comments = await call("issue_read", { method: "get_comments", ...repo, issue_number: target });
assert.deepEqual(comments.map((c) => [c.user.login, c.body]), [["pome-agent", "Triaged: regression from v1.5; @dave owns it."]]);
const issueLabels = await call("issue_read", { method: "get_labels", ...repo, issue_number: target });
assert.equal(issueLabels.totalCount, 2);
assert.deepEqual(issueLabels.labels.map((l) => [l.name, l.color]), [["bug", "d73a4a"], ["regression", "e11d21"]]);
assert.deepEqual(await call("issue_read", { method: "get_sub_issues", ...repo, issue_number: target }), []);
const prAsIssue = await call("issue_read", { method: "get", ...repo, issue_number: prRow.number });
assert.equal(prAsIssue.html_url, `https://github.com/acme/webapp/pull/${prRow.number}`);
await call("issue_read", { method: "get", ...repo, issue_number: 9999 }, { error: true });

// create_issue and issue_write create: one action each, the same world change
const c1 = await call("create_issue", { ...repo, title: "Login page flickers on Safari", body: "Seen on iOS 18." });
assert.equal(typeof c1.id, "string");
const n1 = Number(c1.url.match(/\/issues\/(\d+)$/)[1]);
assert.equal(n1, rows.length + 1);
// creating with a login that cannot be assigned fails, as on github.com (adding drops it)
await call("issue_write", { method: "create", ...repo, title: "Flaky login e2e test", assignees: ["carol", reporter] }, { error: true });
const c2 = await call("issue_write", { method: "create", ...repo, title: "Flaky login e2e test", labels: ["bug"], assignees: ["carol"], milestone: 2 });
const n2 = Number(c2.url.match(/\/issues\/(\d+)$/)[1]);
const { data: i2 } = await gh.rest.issues.get({ ...repo, issue_number: n2 });
assert.deepEqual([i2.labels.map((l) => l.name), i2.assignees.map((u) => u.login), i2.milestone.number], [["bug"], ["carol"], 2]);
await call("issue_write", { method: "create", ...repo, body: "no title" }, { error: true });
// issue_write update: close as duplicate of the first
const u = await call("issue_write", { method: "update", ...repo, issue_number: n2, state: "closed", state_reason: "duplicate", duplicate_of: n1 });
assert.equal(u.url, `https://github.com/acme/webapp/issues/${n2}`);
const { data: i2b } = await gh.rest.issues.get({ ...repo, issue_number: n2 });
assert.deepEqual([i2b.state, i2b.state_reason], ["closed", "duplicate"]);
await call("issue_write", { method: "update", ...repo, issue_number: n1, state: "closed", state_reason: "duplicate" }, { error: true });
await call("issue_write", { method: "update", ...repo, issue_number: n1, title: "", body: "Seen on iOS 18 and macOS 15." });
const { data: i1 } = await gh.rest.issues.get({ ...repo, issue_number: n1 });
assert.deepEqual([i1.title, i1.body], ["Login page flickers on Safari", "Seen on iOS 18 and macOS 15."], "an empty title leaves it alone");

// add_issue_comment: on an issue, on a pull request, a reaction
const ac = await call("add_issue_comment", { ...repo, issue_number: n1, body: "Reproduced on main." });
assert.match(ac.url, new RegExp(`/issues/${n1}#issuecomment-${ac.id}$`));
await call("add_issue_comment", { ...repo, issue_number: prRow.number, body: "MCP says hi." });
const react = await call("add_issue_comment", { ...repo, issue_number: n1, reaction: "eyes" });
assert.match(react.url, new RegExp(`/repos/acme/webapp/issues/${n1}/reactions/${react.id}$`));
await call("add_issue_comment", { ...repo, issue_number: n1 }, { error: true });

// search_issues: scoped to is:issue, and to owner/repo when both are given
const s1 = await call("search_issues", { query: "login", owner: "acme", repo: "webapp", sort: "created", order: "desc", perPage: 100 });
assert.ok(s1.total_count > 0 && s1.items.every((i) => !i.pull_request));
assert.deepEqual(s1.items.slice(0, 2).map((i) => i.number), [n2, n1], "newest first");
const s2 = await call("search_issues", { query: "is:pr login" });
assert.ok(s2.items.length > 0 && s2.items.every((i) => i.pull_request));

// ---- MCP rows on the tape carry the tool the caller named
tape = await events();
const mcpRows = tape.filter((t) => pathOf(t).endsWith("/mcp"));
const mcpTools = uniq(mcpRows.map((t) => t.tool).filter(Boolean)).sort();
assert.deepEqual(mcpTools, ["add_issue_comment", "create_issue", "get_me", "issue_read", "issue_write", "list_issues", "search_issues"]);
const creates = tape.filter((t) => t.state_mutation && t.state_delta?.before === null && t.state_delta?.after?.title && "locked" in t.state_delta.after);
assert.deepEqual(creates.map((t) => t.tool), ["create_issue", "issue_write"]);

await client.close();
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
  const local = github(banner.match(/\n\s+token\s+(\S+)/)[1], banner.match(/rest_url\s+(\S+)/)[1]);
  const localAll = await local.paginate(local.rest.issues.listForRepo, { ...repo, state: "all", per_page: 30 });
  assert.deepEqual(numbers(localAll), numbers(rows), "the seed file loads unmodified in a local twin");
  const { data: localTwo } = await local.rest.issues.get({ ...repo, issue_number: 2 });
  assert.equal(localTwo.assignee.login, "alice");
} finally {
  twin.kill("SIGTERM");
}
console.log("ok: github issues conformance");
