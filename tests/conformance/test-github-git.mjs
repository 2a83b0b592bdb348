// The GitHub twin's git surface driven by the official, unmodified clients: @octokit/rest
// (a release flow: branch from main through git refs, commit a file, update it with its
// blob sha, read contents by ref, page through commits, compare, release, collaborators,
// search, repositories and forks) and @modelcontextprotocol/sdk (every MCP tool this surface
// owns, at least once), in a sandbox started on the hosted-format seed "release-train"
// (sandbox-images/github/seeds/release-train.json: _meta, files on two branches). The same
// seed file also loads through `pome twin start --seed FILE`.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { Octokit } from "@octokit/rest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { control } from "./lib.mjs";

const seedFile = `${process.env.POME_SOURCE_DIR}/sandbox-images/github/seeds/release-train.json`;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const github = (auth, baseUrl) => new Octokit({ auth, baseUrl, log: quiet, request: { retries: 0 } });
const b64 = (s) => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s) => Buffer.from(s, "base64").toString("utf8");
// git's blob id: what `git hash-object` prints for the same bytes
const blobSha = (s) => createHash("sha1").update(`blob ${Buffer.byteLength(s)}\0`).update(s).digest("hex");
const rejectsWith = (p, status, check) =>
  assert.rejects(p, (e) => {
    assert.equal(e.status, status, `${e.status} ${JSON.stringify(e.response?.data)}`);
    if (check) check(e.response.data);
    return true;
  });

// ---- a sandbox on the hosted-format seed
let r = await control("POST", "/v1/sandboxes", { twins: ["github"], seeds: { github: "release-train" } });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const restUrl = sb.per_twin.github.rest_url;
const gh = github(sb.session_token, restUrl);
const web = { owner: "acme", repo: "web" };

// the seed: files on main, and each other `branch` a commit on top of main
const { data: repo } = await gh.rest.repos.get(web);
assert.equal(repo.default_branch, "main");
const branches = await gh.paginate(gh.rest.repos.listBranches, { ...web, per_page: 2 });
assert.deepEqual(branches.map((b) => b.name), ["docs/changelog", "fix/checkout-total", "main", "staging"]);
const { data: mainRef } = await gh.rest.git.getRef({ ...web, ref: "heads/main" });
assert.equal(mainRef.ref, "refs/heads/main");
assert.equal(mainRef.object.type, "commit");
const mainSha = mainRef.object.sha;
assert.match(mainSha, /^[0-9a-f]{40}$/);
const fix = (await gh.rest.repos.getBranch({ ...web, branch: "fix/checkout-total" })).data;
assert.deepEqual(fix.commit.parents.map((p) => p.sha), [mainSha], "a seeded branch starts at main's head");
const fixFile = (await gh.rest.repos.getContent({ ...web, path: "src/checkout.js", ref: "fix/checkout-total" })).data;
assert.match(unb64(fixFile.content), /i\.qty/);
assert.equal(fixFile.sha, blobSha(unb64(fixFile.content)), "contents sha is git's blob id");
const readme = (await gh.rest.repos.getContent({ ...web, path: "README.md", ref: "fix/checkout-total" })).data;
assert.equal(unb64(readme.content), "# web\n\nAcme's storefront.\n", "other files come from main");
const srcDir = (await gh.rest.repos.getContent({ ...web, path: "src" })).data;
assert.ok(Array.isArray(srcDir));
assert.deepEqual(srcDir.map((e) => [e.name, e.type]), [["cart.js", "file"], ["checkout.js", "file"]]);
const root = (await gh.rest.repos.getContent({ ...web, path: "" })).data;
assert.ok(root.some((e) => e.name === "src" && e.type === "dir" && /^[0-9a-f]{40}$/.test(e.sha)));
// custom media types: the file's bytes (format "raw"), a directory as one object
const raw = await gh.rest.repos.getContent({ ...web, path: "README.md", mediaType: { format: "raw" } });
assert.equal(raw.data, "# web\n\nAcme's storefront.\n");
assert.match(raw.headers["content-type"], /^application\/vnd\.github\.raw/);
// api.github.com names every reply's request in X-GitHub-Request-Id (octokit's errors carry it)
assert.equal(raw.headers["x-github-request-id"], raw.headers["x-request-id"]);
assert.match(raw.headers["x-github-request-id"], /^req_/);
const rawReadme = await gh.rest.repos.getReadme({ ...web, mediaType: { format: "raw" } });
assert.equal(rawReadme.data, raw.data);
const srcObj = (await gh.rest.repos.getContent({ ...web, path: "src", mediaType: { format: "object" } })).data;
assert.equal(srcObj.type, "dir");
assert.deepEqual(srcObj.entries.map((e) => e.name), ["cart.js", "checkout.js"]);
assert.equal(srcObj.sha, root.find((e) => e.name === "src").sha);
// a ref with a slash travels as one escaped path segment (commits/fix%2Fcheckout-total/…)
const fixStatus = (await gh.rest.repos.getCombinedStatusForRef({ ...web, ref: "fix/checkout-total" })).data;
assert.equal(fixStatus.sha, fix.commit.sha);
const fixRuns = (await gh.rest.checks.listForRef({ ...web, ref: "fix/checkout-total" })).data;
assert.equal(typeof fixRuns.total_count, "number");
const fixCommit = (await gh.rest.repos.getCommit({ ...web, ref: "fix/checkout-total" })).data;
assert.equal(fixCommit.sha, fix.commit.sha);

// ---- open a release branch from main through git refs
const { data: created } = await gh.rest.git.createRef({ ...web, ref: "refs/heads/release-1.1", sha: mainSha });
assert.equal(created.ref, "refs/heads/release-1.1");
assert.equal(created.object.sha, mainSha);
await rejectsWith(gh.rest.git.createRef({ ...web, ref: "refs/heads/release-1.1", sha: mainSha }), 422,
  (d) => assert.equal(d.message, "Reference already exists"));
await rejectsWith(gh.rest.git.createRef({ ...web, ref: "refs/heads/x", sha: "0".repeat(40) }), 422);

// commit a file, then update it: the blob sha is GitHub's optimistic lock
const put = await gh.rest.repos.createOrUpdateFileContents({
  ...web, path: "VERSION", branch: "release-1.1", message: "Bump version to 1.1.0", content: b64("1.1.0\n"),
});
assert.equal(put.status, 201);
assert.equal(put.data.content.path, "VERSION");
assert.equal(put.data.content.sha, blobSha("1.1.0\n"));
assert.deepEqual(put.data.commit.parents.map((p) => p.sha), [mainSha]);
assert.equal(put.data.commit.message, "Bump version to 1.1.0");
await rejectsWith(gh.rest.repos.createOrUpdateFileContents({
  ...web, path: "VERSION", branch: "release-1.1", message: "no sha", content: b64("1.1.1\n"),
}), 422, (d) => assert.match(d.message, /"sha" wasn't supplied/));
await rejectsWith(gh.rest.repos.createOrUpdateFileContents({
  ...web, path: "VERSION", branch: "release-1.1", message: "stale", content: b64("1.1.1\n"), sha: blobSha("1.0.0\n"),
}), 409, (d) => assert.match(d.message, /does not match/));
const upd = await gh.rest.repos.createOrUpdateFileContents({
  ...web, path: "VERSION", branch: "release-1.1", message: "Bump version to 1.1.1", content: b64("1.1.1\n"),
  sha: put.data.content.sha, author: { name: "Release Bot", email: "release-bot@acme.example" },
});
assert.equal(upd.data.commit.author.name, "Release Bot");
assert.equal(upd.data.commit.committer.name, "Pome Agent", "the committer is the token's user");
assert.equal(upd.status, 200);
assert.equal(upd.data.content.sha, blobSha("1.1.1\n"));
assert.deepEqual(upd.data.commit.parents.map((p) => p.sha), [put.data.commit.sha]);
await rejectsWith(gh.rest.repos.createOrUpdateFileContents({
  ...web, path: "x.txt", branch: "no-such-branch", message: "m", content: b64("x"),
}), 404);

// contents by ref: the branch has it, main does not
const atRelease = (await gh.rest.repos.getContent({ ...web, path: "VERSION", ref: "release-1.1" })).data;
assert.equal(unb64(atRelease.content), "1.1.1\n");
assert.equal(atRelease.encoding, "base64");
const atFirst = (await gh.rest.repos.getContent({ ...web, path: "VERSION", ref: put.data.commit.sha })).data;
assert.equal(unb64(atFirst.content), "1.1.0\n", "a commit sha reads its own snapshot");
await rejectsWith(gh.rest.repos.getContent({ ...web, path: "VERSION" }), 404);
await rejectsWith(gh.rest.repos.getContent({ ...web, path: "VERSION", ref: "nope" }), 404);

// three more commits, then page through history one commit per page (Link: rel="next")
for (const n of [1, 2, 3]) {
  await gh.rest.repos.createOrUpdateFileContents({
    ...web, path: `notes/${n}.md`, branch: "release-1.1", message: `Release note ${n}`, content: b64(`note ${n}\n`),
  });
}
const pageOne = await gh.rest.repos.listCommits({ ...web, sha: "release-1.1", per_page: 2 });
assert.match(pageOne.headers.link, /rel="next"/);
assert.match(pageOne.headers.link, /rel="last"/);
const history = await gh.paginate(gh.rest.repos.listCommits, { ...web, sha: "release-1.1", per_page: 2 });
assert.deepEqual(history.map((c) => c.commit.message), [
  "Release note 3", "Release note 2", "Release note 1", "Bump version to 1.1.1", "Bump version to 1.1.0", "Initial commit",
]);
assert.equal(history.at(-1).sha, mainSha);
assert.equal(history[0].author.login, "pome-agent");
const touching = await gh.paginate(gh.rest.repos.listCommits, { ...web, sha: "release-1.1", path: "VERSION", per_page: 1 });
assert.deepEqual(touching.map((c) => c.commit.message), ["Bump version to 1.1.1", "Bump version to 1.1.0"]);
const byCarol = await gh.rest.repos.listCommits({ ...web, sha: "release-1.1", author: "carol" });
assert.equal(byCarol.data.length, 0);

// one commit with its diff
assert.equal((await gh.rest.repos.getCommit({ ...web, ref: "fix/checkout-total" })).data.sha, fix.commit.sha,
  "a branch name with a slash names its head");
const { data: commit } = await gh.rest.repos.getCommit({ ...web, ref: upd.data.commit.sha });
assert.equal(commit.sha, upd.data.commit.sha);
assert.deepEqual(commit.files.map((f) => [f.filename, f.status, f.additions, f.deletions]), [["VERSION", "modified", 1, 1]]);
assert.equal(commit.files[0].patch, "@@ -1 +1 @@\n-1.1.0\n+1.1.1\n");
assert.equal(commit.stats.total, 2);
await rejectsWith(gh.rest.repos.getCommit({ ...web, ref: "f".repeat(40) }), 422);

// compare: base...head
const { data: cmp } = await gh.rest.repos.compareCommitsWithBasehead({ ...web, basehead: "main...release-1.1" });
assert.equal(cmp.status, "ahead");
assert.equal(cmp.ahead_by, 5);
assert.equal(cmp.behind_by, 0);
assert.equal(cmp.merge_base_commit.sha, mainSha);
assert.deepEqual(cmp.commits.map((c) => c.commit.message)[0], "Bump version to 1.1.0", "oldest first");
assert.deepEqual(cmp.files.map((f) => `${f.filename}:${f.status}`), ["VERSION:added", "notes/1.md:added", "notes/2.md:added", "notes/3.md:added"]);
const { data: diverged } = await gh.rest.repos.compareCommitsWithBasehead({ ...web, basehead: "docs/changelog...fix/checkout-total" });
assert.equal(diverged.status, "diverged");
assert.equal(diverged.ahead_by, 1);
assert.equal(diverged.behind_by, 1);
assert.deepEqual(diverged.files.map((f) => f.filename), ["src/checkout.js", "test/checkout.test.js"]);

// delete a file with its sha
const note3 = (await gh.rest.repos.getContent({ ...web, path: "notes/3.md", ref: "release-1.1" })).data;
await rejectsWith(gh.rest.repos.deleteFile({ ...web, path: "notes/3.md", branch: "release-1.1", message: "rm", sha: blobSha("x") }), 409);
const del = await gh.rest.repos.deleteFile({ ...web, path: "notes/3.md", branch: "release-1.1", message: "Drop note 3", sha: note3.sha });
assert.equal(del.status, 200);
assert.equal(del.data.content, null);
await rejectsWith(gh.rest.repos.getContent({ ...web, path: "notes/3.md", ref: "release-1.1" }), 404);

// ---- release: tag created at the branch head
const head = (await gh.rest.repos.getBranch({ ...web, branch: "release-1.1" })).data.commit.sha;
const rel = await gh.rest.repos.createRelease({ ...web, tag_name: "v1.1.0", target_commitish: "release-1.1", name: "1.1.0", body: "Quantities count." });
assert.equal(rel.status, 201);
assert.equal(rel.data.tag_name, "v1.1.0");
assert.equal(rel.data.author.login, "pome-agent");
await rejectsWith(gh.rest.repos.createRelease({ ...web, tag_name: "v1.1.0" }), 422);
await gh.rest.repos.createRelease({ ...web, tag_name: "v1.2.0-rc1", prerelease: true });
assert.deepEqual((await gh.rest.repos.listReleases(web)).data.map((x) => x.tag_name).sort(), ["v1.1.0", "v1.2.0-rc1"]);
assert.equal((await gh.rest.repos.getLatestRelease(web)).data.tag_name, "v1.1.0", "a prerelease is never latest");
assert.equal((await gh.rest.repos.getReleaseByTag({ ...web, tag: "v1.1.0" })).data.id, rel.data.id);
await rejectsWith(gh.rest.repos.getReleaseByTag({ ...web, tag: "v9" }), 404);
const tags = (await gh.rest.repos.listTags(web)).data;
assert.equal(tags.find((t) => t.name === "v1.1.0").commit.sha, head);
assert.equal((await gh.rest.git.getRef({ ...web, ref: "tags/v1.1.0" })).data.object.sha, head);

// ---- collaborators
const collabs = await gh.paginate(gh.rest.repos.listCollaborators, web);
assert.deepEqual(collabs.map((u) => u.login).sort(), ["carol", "pome-agent"]);
assert.equal((await gh.rest.repos.checkCollaborator({ ...web, username: "carol" })).status, 204);
await rejectsWith(gh.rest.repos.checkCollaborator({ ...web, username: "dave" }), 404);
const invite = await gh.rest.repos.addCollaborator({ ...web, username: "dave", permission: "push" });
assert.equal(invite.status, 201);
assert.equal(invite.data.invitee.login, "dave");
assert.equal(invite.data.permissions, "push");
assert.equal((await gh.rest.repos.addCollaborator({ ...web, username: "carol" })).status, 204);
await rejectsWith(gh.rest.repos.checkCollaborator({ ...web, username: "dave" }), 404, undefined);
await rejectsWith(gh.rest.repos.addCollaborator({ ...web, username: "nobody-here" }), 404);

// ---- search
const code = (await gh.rest.search.code({ q: "reduce repo:acme/web language:javascript" })).data;
assert.equal(code.total_count, 1);
assert.equal(code.incomplete_results, false);
assert.equal(code.items[0].path, "src/checkout.js");
assert.equal(code.items[0].repository.full_name, "acme/web");
assert.equal((await gh.rest.search.code({ q: "echo" })).data.total_count, 0, "acme/infra is private to its collaborators");
assert.equal((await gh.rest.search.code({ q: "storefront in:path" })).data.total_count, 0);
assert.equal((await gh.rest.search.commits({ q: "release note repo:acme/web" })).data.total_count, 0,
  "commit search indexes the default branch only");
const commits = (await gh.rest.search.commits({ q: "initial repo:acme/web" })).data;
assert.equal(commits.total_count, 1);
assert.equal(commits.items[0].sha, mainSha);
assert.equal(commits.items[0].repository.full_name, "acme/web");
const repos = (await gh.rest.search.repos({ q: "storefront" })).data;
assert.deepEqual(repos.items.map((x) => x.full_name), ["acme/web"]);
assert.equal((await gh.rest.search.repos({ q: "user:carol" })).data.items[0].name, "dotfiles");
const users = (await gh.rest.search.users({ q: "carol" })).data;
assert.deepEqual(users.items.map((u) => u.login), ["carol"]);
assert.deepEqual((await gh.rest.search.users({ q: "acme type:org" })).data.items.map((u) => u.login), ["acme"]);
const pagedUsers = await gh.paginate(gh.rest.search.users, { q: "a", per_page: 1 });
assert.ok(pagedUsers.length >= 3, "search pages through Link too");
await rejectsWith(gh.rest.search.code({ q: "" }), 422);

// ---- repositories: create for the user and in an org, fork
const mine = await gh.rest.repos.createForAuthenticatedUser({ name: "scratch", auto_init: true, description: "Playground" });
assert.equal(mine.status, 201);
assert.equal(mine.data.full_name, "pome-agent/scratch");
assert.equal(mine.data.private, false);
assert.equal(unb64((await gh.rest.repos.getContent({ owner: "pome-agent", repo: "scratch", path: "README.md" })).data.content),
  "# scratch\n\nPlayground\n");
await rejectsWith(gh.rest.repos.createForAuthenticatedUser({ name: "scratch" }), 422,
  (d) => assert.equal(d.errors[0].message, "name already exists on this account"));
const inOrg = await gh.rest.repos.createInOrg({ org: "acme", name: "svc", private: true });
assert.equal(inOrg.data.full_name, "acme/svc");
assert.equal(inOrg.data.private, true);
await rejectsWith(gh.rest.repos.getContent({ owner: "acme", repo: "svc", path: "" }), 404, (d) => assert.equal(d.message, "This repository is empty."));
const first = await gh.rest.repos.createOrUpdateFileContents({ owner: "acme", repo: "svc", path: "main.go", message: "First", content: b64("package main\n") });
assert.equal(first.status, 201, "the first write to an empty repository makes its default branch");
assert.equal((await gh.rest.repos.getBranch({ owner: "acme", repo: "svc", branch: "main" })).data.commit.sha, first.data.commit.sha);
const fork = await gh.rest.repos.createFork(web);
assert.equal(fork.status, 202);
assert.equal(fork.data.full_name, "pome-agent/web");
assert.equal(fork.data.fork, true);
assert.equal(fork.data.parent.full_name, "acme/web");
assert.equal((await gh.rest.repos.getBranch({ owner: "pome-agent", repo: "web", branch: "release-1.1" })).data.commit.sha, head);

// ---- repository lists and the README
{
  const mineList = await gh.paginate(gh.rest.repos.listForAuthenticatedUser, { per_page: 2 });
  assert.deepEqual(mineList.map((x) => x.full_name),
    ["acme/svc", "acme/web", "pome-agent/scratch", "pome-agent/web"], "own repos and collaborations, by full name");
  const orgList = (await gh.rest.repos.listForOrg({ org: "acme", sort: "full_name" })).data.map((x) => x.full_name);
  assert.deepEqual(orgList, ["acme/svc", "acme/web"], "acme/infra is private and the viewer no collaborator");
  assert.deepEqual((await gh.rest.repos.listForUser({ username: "carol" })).data.map((x) => x.name), ["dotfiles"]);
  assert.deepEqual((await gh.rest.repos.listForAuthenticatedUser({ visibility: "private" })).data.map((x) => x.full_name), ["acme/svc"]);
  await rejectsWith(gh.rest.repos.listForOrg({ org: "carol" }), 404);
  const readmeAt = (await gh.rest.repos.getReadme({ ...web, ref: "fix/checkout-total" })).data;
  assert.equal(readmeAt.path, "README.md");
  assert.equal(unb64(readmeAt.content), "# web\n\nAcme's storefront.\n");
  await rejectsWith(gh.rest.repos.getReadme({ owner: "acme", repo: "svc" }), 404);
}

// ---- update and delete a repository
{
  const upd2 = await gh.rest.repos.update({ owner: "pome-agent", repo: "scratch", description: "Sandbox", default_branch: "main", archived: true });
  assert.equal(upd2.data.description, "Sandbox");
  assert.equal(upd2.data.archived, true);
  await rejectsWith(gh.rest.repos.update({ owner: "pome-agent", repo: "scratch", default_branch: "nope" }), 422);
  await rejectsWith(gh.rest.repos.delete(web), 403, (d) => assert.equal(d.message, "Must have admin rights to Repository."));
  assert.equal((await gh.rest.repos.delete({ owner: "pome-agent", repo: "scratch" })).status, 204);
  await rejectsWith(gh.rest.repos.get({ owner: "pome-agent", repo: "scratch" }), 404);
}

// ---- the Git Database API: blobs, a tree on base_tree, a commit, a ref update
{
  const { data: ref } = await gh.rest.git.getRef({ ...web, ref: "heads/docs/changelog" });
  const { data: parent } = await gh.rest.git.getCommit({ ...web, commit_sha: ref.object.sha });
  assert.equal(parent.sha, ref.object.sha);
  const blob = await gh.rest.git.createBlob({ ...web, content: b64("export const tax = 0.2;\n"), encoding: "base64" });
  assert.equal(blob.status, 201);
  assert.equal(blob.data.sha, blobSha("export const tax = 0.2;\n"));
  const tree = await gh.rest.git.createTree({ ...web, base_tree: parent.tree.sha, tree: [
    { path: "src/tax.js", mode: "100644", type: "blob", sha: blob.data.sha },
    { path: "docs/tax.md", mode: "100644", type: "blob", content: "# Tax\n" },
    { path: "CHANGELOG.md", mode: "100644", type: "blob", sha: null },
  ] });
  assert.equal(tree.status, 201);
  const made = await gh.rest.git.createCommit({ ...web, message: "Tax module", tree: tree.data.sha, parents: [parent.sha] });
  assert.equal(made.status, 201);
  assert.equal(made.data.tree.sha, tree.data.sha, "the commit's tree is the tree made");
  assert.deepEqual(made.data.parents.map((p) => p.sha), [parent.sha]);
  await rejectsWith(gh.rest.repos.getBranch({ ...web, branch: "docs/changelog" }).then((b) => {
    if (b.data.commit.sha === made.data.sha) throw Object.assign(new Error("moved"), { status: 0 });
    throw Object.assign(new Error("not moved yet"), { status: 418, response: { data: {} } });
  }), 418);
  const moved = await gh.rest.git.updateRef({ ...web, ref: "heads/docs/changelog", sha: made.data.sha });
  assert.equal(moved.data.object.sha, made.data.sha);
  const { data: t } = await gh.rest.git.getTree({ ...web, tree_sha: "docs/changelog", recursive: "1" });
  assert.deepEqual(t.tree.filter((e) => e.type === "blob").map((e) => e.path),
    ["README.md", "docs/tax.md", "package.json", "src/cart.js", "src/checkout.js", "src/tax.js"]);
  assert.ok(t.tree.some((e) => e.path === "src" && e.type === "tree" && e.mode === "040000"));
  const top = (await gh.rest.git.getTree({ ...web, tree_sha: t.sha })).data.tree.map((e) => e.path);
  assert.deepEqual(top, ["README.md", "docs", "package.json", "src"]);
  const srcTree = t.tree.find((e) => e.path === "src");
  assert.deepEqual((await gh.rest.git.getTree({ ...web, tree_sha: srcTree.sha })).data.tree.map((e) => e.path),
    ["cart.js", "checkout.js", "tax.js"]);
  assert.equal(unb64((await gh.rest.git.getBlob({ ...web, file_sha: blob.data.sha })).data.content), "export const tax = 0.2;\n");
  await rejectsWith(gh.rest.git.updateRef({ ...web, ref: "heads/docs/changelog", sha: parent.sha }), 422,
    (d) => assert.equal(d.message, "Update is not a fast forward"));
  assert.equal((await gh.rest.git.updateRef({ ...web, ref: "heads/docs/changelog", sha: parent.sha, force: true })).data.object.sha, parent.sha);
  await rejectsWith(gh.rest.git.createCommit({ ...web, message: "x", tree: "0".repeat(40) }), 422);
}

// ---- delete the branch ref
assert.equal((await gh.rest.git.deleteRef({ ...web, ref: "heads/staging" })).status, 204);
await rejectsWith(gh.rest.repos.getBranch({ ...web, branch: "staging" }), 404);
await rejectsWith(gh.rest.git.deleteRef({ ...web, ref: "heads/staging" }), 422);
await rejectsWith(gh.rest.git.deleteRef({ ...web, ref: "heads/main" }), 422);

// ---- branch protection
{
  const fk = { owner: "pome-agent", repo: "web" };
  const prot = await gh.rest.repos.updateBranchProtection({ ...fk, branch: "main",
    required_status_checks: { strict: true, contexts: ["ci/test"] }, enforce_admins: true,
    required_pull_request_reviews: { required_approving_review_count: 1 }, restrictions: null });
  assert.equal(prot.status, 200);
  assert.deepEqual(prot.data.required_status_checks.contexts, ["ci/test"]);
  assert.equal((await gh.rest.repos.getBranchProtection({ ...fk, branch: "main" })).data.enforce_admins.enabled, true);
  assert.equal((await gh.rest.repos.getBranch({ ...fk, branch: "main" })).data.protected, true);
  await rejectsWith(gh.rest.repos.createOrUpdateFileContents({ ...fk, path: "x.md", message: "direct", content: b64("x") }), 409,
    (d) => assert.equal(d.message, "Changes must be made through a pull request."));
  await gh.rest.repos.updateBranchProtection({ ...fk, branch: "main", required_status_checks: null, enforce_admins: false,
    required_pull_request_reviews: null, restrictions: null });
  assert.equal((await gh.rest.repos.createOrUpdateFileContents({ ...fk, path: "x.md", message: "admin bypass", content: b64("x") })).status, 201,
    "the owner passes a protection that does not enforce admins");
  assert.equal((await gh.rest.repos.deleteBranchProtection({ ...fk, branch: "main" })).status, 204);
  await rejectsWith(gh.rest.repos.getBranchProtection({ ...fk, branch: "main" }), 404, (d) => assert.equal(d.message, "Branch not protected"));
}

// ---- the tape: every write names its tool, sets state_mutation and the touched row
async function tape() {
  const res = await fetch(`${restUrl}/_pome/events`, { headers: { authorization: `Bearer ${sb.session_token}` } });
  assert.equal(res.status, 200);
  return res.json();
}
let rows = await tape();
const writes = rows.filter((x) => x.state_mutation);
const tools = new Set(writes.map((x) => x.tool));
for (const t of ["create_branch", "create_or_update_file", "delete_file", "create_release", "add_repository_collaborator",
  "create_repository", "fork_repository", "delete_branch", "create_git_blob", "create_git_tree", "create_git_commit",
  "update_git_ref", "update_branch_protection", "update_repository", "delete_repository"]) assert.ok(tools.has(t), `a write stamped ${t}`);
const bump = writes.find((x) => x.tool === "create_or_update_file");
assert.equal(bump.state_delta.before.name, "release-1.1");
assert.equal(bump.state_delta.before.sha, mainSha);
assert.equal(bump.state_delta.after.sha, put.data.commit.sha);
assert.ok(rows.filter((x) => !x.state_mutation).every((x) => x.state_delta == null), "reads change nothing");
assert.ok(rows.some((x) => x.tool === "compare_commits") && rows.some((x) => x.tool === "search_code"));

// ---- MCP: every tool this surface owns, through the official SDK client
const client = new Client({ name: "conformance-github-git", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(sb.per_twin.github.mcp_url), {
  requestInit: { headers: { authorization: `Bearer ${sb.session_token}` } },
}));
const listed = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
const mine_ = ["get_file_contents", "create_or_update_file", "delete_file", "push_files", "list_branches", "create_branch",
  "list_commits", "get_commit", "list_tags", "get_tag", "list_releases", "get_latest_release", "get_release_by_tag",
  "list_repository_collaborators", "create_repository", "fork_repository", "search_code", "search_commits",
  "search_repositories", "search_users"];
for (const t of mine_) assert.ok(listed.has(t), `tools/list has ${t}`);
assert.deepEqual(listed.get("create_or_update_file").inputSchema.required, ["owner", "repo", "path", "content", "message", "branch"]);
assert.deepEqual(listed.get("create_branch").inputSchema.required, ["owner", "repo", "branch"]);
assert.ok(listed.get("get_file_contents").annotations.readOnlyHint);
for (const hidden of ["get_branch", "compare_commits", "check_collaborator", "get_git_ref"])
  assert.ok(!listed.has(hidden), `${hidden} is REST-only`);

const called = new Set();
async function call(name, args, { error = false } = {}) {
  called.add(name);
  const res = await client.callTool({ name, arguments: args });
  assert.equal(!!res.isError, error, `${name}: ${res.content?.[0]?.text}`);
  return JSON.parse(res.content[0].text);
}
const br = await call("create_branch", { ...web, branch: "mcp-docs", from_branch: "docs/changelog" });
assert.equal(br.ref, "refs/heads/mcp-docs");
await call("create_branch", { ...web, branch: "mcp-docs" }, { error: true });
const f1 = await call("create_or_update_file", { ...web, path: "docs/guide.md", content: "# Guide\n", message: "Add guide", branch: "mcp-docs" });
assert.equal(f1.content.sha, blobSha("# Guide\n"), "MCP content is plain text");
await call("create_or_update_file", { ...web, path: "docs/guide.md", content: "# Guide v2\n", message: "no sha", branch: "mcp-docs" }, { error: true });
await call("create_or_update_file", { ...web, path: "docs/guide.md", content: "# Guide v2\n", message: "Guide v2", branch: "mcp-docs", sha: f1.content.sha });
const got = await call("get_file_contents", { ...web, path: "docs/guide.md", ref: "refs/heads/mcp-docs" });
assert.equal(unb64(got.content), "# Guide v2\n");
assert.equal(got.text, "# Guide v2\n", "over MCP the file's text comes along");
const dir = await call("get_file_contents", { ...web, path: "/", ref: "mcp-docs" });
assert.ok(dir.some((e) => e.path === "docs" && e.type === "dir"));
const pushed = await call("push_files", { ...web, branch: "mcp-docs", message: "Two files", files: [
  { path: "docs/a.md", content: "A\n" }, { path: "docs/b.md", content: "B\n" }] });
assert.equal(pushed.ref, "refs/heads/mcp-docs");
const deleted = await call("delete_file", { ...web, path: "docs/a.md", message: "Drop a", branch: "mcp-docs" });
assert.equal(deleted.content, null);
const mcpBranches = await call("list_branches", { ...web, perPage: 100 });
assert.ok(mcpBranches.some((b) => b.name === "mcp-docs" && b.commit.sha === deleted.commit.sha));
const slim = await call("list_branches", { ...web, fields: ["name", "sha"] });
assert.deepEqual(slim.find((b) => b.name === "mcp-docs"), { name: "mcp-docs", sha: deleted.commit.sha }, "fields picks");
assert.deepEqual(Object.keys((await call("list_commits", { ...web, fields: ["sha"], perPage: 1 }))[0]), ["sha"]);
assert.deepEqual((await call("list_repository_collaborators", { ...web, affiliation: "outside" })).map((u) => u.login).sort(),
  ["carol", "pome-agent"], "an organisation's repository: everyone is outside");
const mcpCommits = await call("list_commits", { ...web, sha: "mcp-docs", perPage: 3, page: 1 });
assert.deepEqual(mcpCommits.map((c) => c.commit.message), ["Drop a", "Two files", "Guide v2"]);
const mcpCommit = await call("get_commit", { ...web, sha: pushed.object.sha });
assert.deepEqual(mcpCommit.files.map((f) => f.filename), ["docs/a.md", "docs/b.md"]);
assert.ok((await call("list_tags", web)).some((t) => t.name === "v1.1.0"));
const tag = await call("get_tag", { ...web, tag: "v1.1.0" });
assert.equal(tag.tag, "v1.1.0");
assert.equal(tag.object.sha, head);
const restTag = (await gh.rest.git.getTag({ ...web, tag_sha: tag.sha })).data;
assert.equal(restTag.tag, "v1.1.0", "REST git/tags/{tag_sha} reads the same tag object");
assert.equal(restTag.object.sha, head);
await rejectsWith(gh.rest.git.getTag({ ...web, tag_sha: "0".repeat(40) }), 404);
assert.equal((await call("list_releases", { ...web, perPage: 1 })).length, 1);
assert.equal((await call("get_latest_release", web)).tag_name, "v1.1.0");
assert.equal((await call("get_release_by_tag", { ...web, tag: "v1.2.0-rc1" })).prerelease, true);
await call("get_release_by_tag", { ...web, tag: "v0" }, { error: true });
assert.deepEqual((await call("list_repository_collaborators", web)).map((u) => u.login).sort(), ["carol", "pome-agent"]);
const newRepo = await call("create_repository", { name: "mcp-made", description: "via MCP", autoInit: true });
assert.equal(newRepo.full_name, "pome-agent/mcp-made");
assert.equal(newRepo.private, true, "the MCP tool's private defaults to true");
const orgRepo = await call("create_repository", { name: "mcp-svc", organization: "acme", private: false });
assert.equal(orgRepo.full_name, "acme/mcp-svc");
const forked = await call("fork_repository", { owner: "carol", repo: "dotfiles", organization: "acme" });
assert.equal(forked.full_name, "acme/dotfiles");
const sc = await call("search_code", { query: "Guide repo:acme/web" });
assert.equal(sc.total_count, 0, "search_code reads the default branch only");
assert.equal((await call("search_code", { query: "alias", perPage: 5 })).items[0].path, ".bashrc");
await call("push_files", { owner: "pome-agent", repo: "mcp-made", branch: "main", message: "Add the guide",
  files: [{ path: "GUIDE.md", content: "guide\n" }] });
const scm = await call("search_commits", { query: "repo:pome-agent/mcp-made", order: "asc" });
assert.deepEqual(scm.items.map((i) => i.commit.message), ["Initial commit", "Add the guide"]);
assert.equal((await call("search_commits", { query: "guide repo:acme/web" })).total_count, 0, "mcp-docs is no default branch");
const sr = await call("search_repositories", { query: "mcp in:name" });
assert.deepEqual(sr.items.map((i) => i.full_name).sort(), ["acme/mcp-svc", "pome-agent/mcp-made"]);
assert.ok(!("owner" in sr.items[0]), "minimal_output by default");
assert.ok("owner" in (await call("search_repositories", { query: "mcp-made", minimal_output: false })).items[0]);
assert.deepEqual((await call("search_users", { query: "a" })).items.every((u) => u.type === "User"), true,
  "search_users is scoped to type:user");
await call("search_users", {}, { error: true });
for (const t of mine_) assert.ok(called.has(t), `MCP tool ${t} was called`);
await client.close();

rows = await tape();
const mcpWrite = rows.find((x) => x.tool === "push_files" && x.state_mutation);
assert.ok(mcpWrite && mcpWrite.state_delta.after.name === "mcp-docs", "MCP writes are taped like REST ones");

// ---- the same seed file through `pome twin start --seed FILE`
const child = spawn(`${process.env.POME_BUILD_DIR}/cli/pome`, ["twin", "start", "github", "--port", "0", "--seed", seedFile],
  { stdio: ["ignore", "pipe", "pipe"] });
let out = "";
const ready = new Promise((resolve, reject) => {
  child.stdout.on("data", (d) => {
    out += d;
    if (/^\s+token\s+\S+/m.test(out) && /rest_url\s+\S+/.test(out)) resolve();
  });
  child.on("exit", (code) => reject(new Error(`pome twin start exited ${code}: ${out}`)));
  setTimeout(() => reject(new Error(`pome twin start did not come up: ${out}`)), 10000);
});
try {
  await ready;
  const localUrl = out.match(/rest_url\s+(\S+)/)[1];
  const localToken = out.match(/^\s+token\s+(\S+)/m)[1];
  const local = github(localToken, localUrl);
  const lb = await local.paginate(local.rest.repos.listBranches, { ...web, per_page: 100 });
  assert.deepEqual(lb.map((b) => b.name), ["docs/changelog", "fix/checkout-total", "main", "staging"]);
  assert.equal((await local.rest.git.getRef({ ...web, ref: "heads/main" })).data.object.sha, mainSha,
    "the same seed gives the same commit shas everywhere");
  const lcmp = (await local.rest.repos.compareCommitsWithBasehead({ ...web, basehead: "main...docs/changelog" })).data;
  assert.deepEqual(lcmp.files.map((f) => f.filename), ["CHANGELOG.md"]);
  const lput = await local.rest.repos.createOrUpdateFileContents({ ...web, path: "CHANGELOG.md", branch: "docs/changelog",
    message: "Date the release", content: b64("# Changelog\n\n## 1.1.0 (2026-12-01)\n"),
    sha: (await local.rest.repos.getContent({ ...web, path: "CHANGELOG.md", ref: "docs/changelog" })).data.sha });
  assert.equal(lput.status, 200);
} finally {
  child.kill("SIGTERM");
}

// ---- done: discard the sandbox
r = await control("DELETE", `/v1/sandboxes/${sb.session_id}`);
if (r.status === 409)
  r = await control("DELETE", `/v1/sandboxes/${sb.session_id}?confirm_discard=${r.body.error.details.discard_token}`);
assert.equal(r.status, 204);
console.log("conformance: github git surface (octokit + MCP SDK) passed");
