#!/usr/bin/env node
// The reference agent of examples/triage/task.md with the vendors' official SDK clients,
// unmodified: @octokit/rest with baseUrl = the GitHub twin's REST URL and the GitHub-shaped
// token, @slack/web-api with slackApiUrl = the Slack twin's REST URL + "/" and the
// Slack-shaped token. `pome run` gives it the sandbox's POME_* variables.
//
//   pome run examples/triage/task.md -- node examples/triage/good-agent.mjs
//
// Where the SDKs come from: the packages are not installed next to this file; it loads
// them from $POME_NODE_MODULES, else from the repository's tests/conformance/node_modules
// (`(cd tests/conformance && npm ci)` installs them there, pinned by its package-lock.json).
// Any node_modules directory holding @octokit/rest and @slack/web-api works.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = process.env.POME_NODE_MODULES ?? path.resolve(here, "../../tests/conformance/node_modules");
const require = createRequire(path.join(modules, "noop.js"));
async function load(name) {
  let entry;
  try {
    entry = require.resolve(name);
  } catch {
    console.error(`${name} is not installed in ${modules}: run 'npm ci' in tests/conformance, or set POME_NODE_MODULES`);
    process.exit(2);
  }
  return import(pathToFileURL(entry).href);
}
const { Octokit } = await load("@octokit/rest");
const slackSdk = await load("@slack/web-api");
const WebClient = slackSdk.WebClient ?? slackSdk.default.WebClient;

for (const v of ["POME_GITHUB_REST_URL", "POME_GITHUB_TOKEN", "POME_SLACK_REST_URL", "POME_SLACK_TOKEN"])
  if (!process.env[v]) {
    console.error(`${v} is not set: run me with pome run`);
    process.exit(2);
  }
console.log(`prompt: ${process.env.POME_TASK.split("\n")[0]}`);

const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel() {}, setName() {} };
const gh = new Octokit({ auth: process.env.POME_GITHUB_TOKEN, baseUrl: process.env.POME_GITHUB_REST_URL, log: quiet });
const slack = new WebClient(process.env.POME_SLACK_TOKEN, {
  slackApiUrl: process.env.POME_SLACK_REST_URL + "/",
  logger: quiet,
});

const repo = { owner: "acme", repo: "api" };
const { data: issue } = await gh.rest.issues.get({ ...repo, issue_number: 1 });
console.log(`issue #1: ${issue.title} (${issue.state})`);
await gh.rest.issues.addAssignees({ ...repo, issue_number: 1, assignees: ["alice"] });
await gh.rest.issues.createComment({
  ...repo,
  issue_number: 1,
  body: "Triaged: reproduced the 500 on POST /orders; assigned to @alice.",
});

const { channels } = await slack.conversations.list({ types: "public_channel" });
const general = channels.find((c) => c.name === "general");
if (!general) throw new Error("no #general channel");
const posted = await slack.chat.postMessage({
  channel: general.id,
  text: `${repo.owner}/${repo.repo}#${issue.number} was triaged and assigned to alice.`,
});
console.log(`told #general: ${posted.message.text}`);
