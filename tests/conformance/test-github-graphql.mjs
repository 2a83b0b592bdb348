// The GitHub twin's GraphQL API (POST /graphql), driven by @octokit/rest's graphql client (the
// official @octokit/graphql), against a real pomed sandbox:
// - the twin's schema, read by introspection, is a subset of GitHub's published one
//   (@octokit/graphql-schema): every type, field, argument, input field and enum value the twin
//   serves exists there with the same kind and type;
// - queries read the world as REST shows it (issues with cursor pagination and filters, labels,
//   pull requests, the repository);
// - mutations change it through the REST actions: each tape row names the REST tool
//   (createIssue → create_issue, addComment → add_issue_comment, closeIssue/reopenIssue →
//   issue_write), one row per mutation of a request;
// - what the twin does not serve, and what is wrong, is GraphQL's error shape naming it.
// Run by run.sh against a real pomed; POME_API_URL and POME_API_KEY come from it.
import assert from "node:assert/strict";
import { Octokit } from "@octokit/rest";
import { schema } from "@octokit/graphql-schema";
import { control, discard } from "./lib.mjs";

const published = schema.json.__schema;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let r = await control("POST", "/v1/sandboxes", { twins: ["github"], seeds: { github: "triage-backlog" } });
assert.equal(r.status, 201, JSON.stringify(r.body));
const sb = r.body;
const restUrl = sb.per_twin.github.rest_url;
const gh = new Octokit({ auth: sb.session_token, baseUrl: restUrl, log: quiet, request: { retries: 0 } });

// ============================================================ the schema is GitHub's
const typeRef = "kind name ofType { kind name ofType { kind name ofType { kind name } } }";
const intro = await gh.graphql(`{ __schema { queryType { name } mutationType { name }
  types { kind name interfaces { name } possibleTypes { name } enumValues { name }
    fields { name type { ${typeRef} } args { name type { ${typeRef} } } }
    inputFields { name type { ${typeRef} } } } } }`);
const show = (t) => (!t ? "?" : t.kind === "NON_NULL" ? `${show(t.ofType)}!` : t.kind === "LIST" ? `[${show(t.ofType)}]` : t.name);
const theirs = new Map(published.types.map((t) => [t.name, t]));
assert.equal(intro.__schema.queryType.name, "Query");
assert.equal(intro.__schema.mutationType.name, "Mutation");
let checked = 0;
const problems = [];
for (const t of intro.__schema.types) {
  const g = theirs.get(t.name);
  if (!g) {
    problems.push(`type ${t.name} is not GitHub's`);
    continue;
  }
  if (g.kind !== t.kind) problems.push(`${t.name}: kind ${t.kind}, GitHub's is ${g.kind}`);
  for (const f of t.fields ?? []) {
    const gf = g.fields?.find((x) => x.name === f.name);
    checked++;
    if (!gf) {
      problems.push(`${t.name}.${f.name} is not GitHub's`);
      continue;
    }
    if (show(gf.type) !== show(f.type)) problems.push(`${t.name}.${f.name}: ${show(f.type)}, GitHub's is ${show(gf.type)}`);
    for (const a of f.args) {
      const ga = gf.args.find((x) => x.name === a.name);
      if (!ga) problems.push(`${t.name}.${f.name}(${a.name}) is not GitHub's`);
      else if (show(ga.type) !== show(a.type)) problems.push(`${t.name}.${f.name}(${a.name}): ${show(a.type)}, GitHub's is ${show(ga.type)}`);
    }
  }
  for (const f of t.inputFields ?? []) {
    const gf = g.inputFields?.find((x) => x.name === f.name);
    checked++;
    if (!gf) problems.push(`${t.name}.${f.name} is not GitHub's`);
    else if (show(gf.type) !== show(f.type)) problems.push(`${t.name}.${f.name}: ${show(f.type)}, GitHub's is ${show(gf.type)}`);
  }
  for (const v of t.enumValues ?? [])
    if (!g.enumValues?.some((x) => x.name === v.name)) problems.push(`${t.name}.${v.name} is not GitHub's`);
  for (const i of t.interfaces ?? [])
    if (!g.interfaces?.some((x) => x.name === i.name)) problems.push(`${t.name} implements ${i.name}: GitHub's does not`);
  if (t.kind === "UNION")
    for (const p of t.possibleTypes ?? [])
      if (!g.possibleTypes?.some((x) => x.name === p.name)) problems.push(`${t.name} includes ${p.name}: GitHub's does not`);
}
assert.deepEqual(problems, [], "the twin's schema against @octokit/graphql-schema");
assert.ok(checked > 250, `fields checked: ${checked}`);
console.log(`ok: the twin's schema (${intro.__schema.types.length} types, ${checked} fields) is GitHub's published one`);

// GitHub Enterprise Server's path for the same API
const ghes = await gh.request("POST /api/graphql", { query: "{ viewer { login } }" });
assert.equal(ghes.status, 200);
assert.equal(typeof ghes.data.data.viewer.login, "string");

// ============================================================ queries read what REST shows
const repo = { owner: "acme", repo: "webapp" };
const restOpen = (await gh.paginate(gh.rest.issues.listForRepo, { ...repo, state: "open", per_page: 100 })).filter(
  (i) => !i.pull_request,
);
const pageQuery = `query($owner: String!, $repo: String!, $after: String) {
  repository(owner: $owner, name: $repo) {
    id nameWithOwner
    issues(first: 5, after: $after, states: OPEN, orderBy: {field: CREATED_AT, direction: ASC}) {
      totalCount nodes { number title state author { login } labels(first: 10) { nodes { name } } }
      pageInfo { hasNextPage endCursor } } } }`;
const seen = [];
let after = null, pages = 0, repoId;
do {
  const q = await gh.graphql(pageQuery, { owner: "acme", repo: "webapp", after });
  const c = q.repository.issues;
  assert.equal(c.totalCount, restOpen.length, "totalCount is every open issue");
  repoId = q.repository.id;
  seen.push(...c.nodes);
  after = c.pageInfo.endCursor;
  pages++;
  if (!c.pageInfo.hasNextPage) break;
} while (pages < 50);
assert.ok(pages > 1, "more than one page");
assert.deepEqual(
  seen.map((i) => i.number),
  restOpen.map((i) => i.number).sort((a, b) => a - b),
  "the pages are the open issues, oldest first, each once",
);
for (const i of seen) {
  const rest = restOpen.find((x) => x.number === i.number);
  assert.equal(i.title, rest.title);
  assert.equal(i.author.login, rest.user.login);
  assert.deepEqual(i.labels.nodes.map((l) => l.name).sort(), rest.labels.map((l) => l.name).sort());
}
console.log(`ok: ${seen.length} open issues over ${pages} pages, as REST lists them`);

const labelled = restOpen.find((i) => i.labels.length > 0);
const byLabel = await gh.graphql(
  `query($l: [String!]) { repository(owner: "acme", name: "webapp") { issues(first: 100, labels: $l, states: [OPEN]) { nodes { number } } } }`,
  { l: [labelled.labels[0].name] },
);
assert.deepEqual(
  byLabel.repository.issues.nodes.map((i) => i.number).sort((a, b) => a - b),
  restOpen.filter((i) => i.labels.some((l) => l.name === labelled.labels[0].name)).map((i) => i.number).sort((a, b) => a - b),
  "labels: filters as REST's labels=",
);
const restPulls = await gh.paginate(gh.rest.pulls.list, { ...repo, state: "all", per_page: 100 });
const pulls = await gh.graphql(`{ repository(owner: "acme", name: "webapp") {
  pullRequests(first: 100, states: [OPEN, CLOSED, MERGED]) { totalCount nodes { number headRefName baseRefName state isDraft } } } }`);
assert.equal(pulls.repository.pullRequests.totalCount, restPulls.length);
for (const p of pulls.repository.pullRequests.nodes) {
  const rest = restPulls.find((x) => x.number === p.number);
  assert.equal(p.headRefName, rest.head.ref);
  assert.equal(p.baseRefName, rest.base.ref);
  assert.equal(p.state, rest.merged_at ? "MERGED" : rest.state.toUpperCase());
}
console.log(`ok: ${restPulls.length} pull requests with their refs and states, as REST shows them`);

// ============================================================ mutations, and their tape rows
const labels = await gh.graphql(`{ repository(owner: "acme", name: "webapp") { labels(first: 100) { nodes { id name } } } }`);
const bug = labels.repository.labels.nodes.find((l) => l.name === "bug") ?? labels.repository.labels.nodes[0];
const created = await gh.graphql(
  `mutation($input: CreateIssueInput!) { createIssue(input: $input) { clientMutationId issue { id number title body state labels(first: 5) { nodes { name } } } } }`,
  { input: { repositoryId: repoId, title: "Made over GraphQL", body: "by octokit.graphql", labelIds: [bug.id], clientMutationId: "m1" } },
);
const issue = created.createIssue.issue;
assert.equal(created.createIssue.clientMutationId, "m1");
assert.equal(issue.title, "Made over GraphQL");
assert.equal(issue.state, "OPEN");
assert.deepEqual(issue.labels.nodes.map((l) => l.name), [bug.name]);
const viaRest = await gh.rest.issues.get({ ...repo, issue_number: issue.number });
assert.equal(viaRest.data.body, "by octokit.graphql", "REST reads what GraphQL made");
assert.equal(viaRest.data.node_id, issue.id, "the same node id");

const two = await gh.graphql(
  `mutation($id: ID!) {
     first: addComment(input: {subjectId: $id, body: "first over GraphQL"}) { commentEdge { node { body url } } subject { id } }
     closed: closeIssue(input: {issueId: $id, stateReason: NOT_PLANNED}) { issue { state stateReason closed } } }`,
  { id: issue.id },
);
assert.equal(two.first.commentEdge.node.body, "first over GraphQL");
assert.match(two.first.commentEdge.node.url, new RegExp(`/acme/webapp/issues/${issue.number}#issuecomment-\\d+$`));
assert.equal(two.first.subject.id, issue.id);
assert.deepEqual(two.closed.issue, { state: "CLOSED", stateReason: "NOT_PLANNED", closed: true });
const reopened = await gh.graphql(`mutation($id: ID!) { reopenIssue(input: {issueId: $id}) { issue { state } } }`, { id: issue.id });
assert.equal(reopened.reopenIssue.issue.state, "OPEN");

const tape = async () => {
  const res = await fetch(`${restUrl}/_pome/events`, { headers: { authorization: `Bearer ${sb.session_token}` } });
  assert.equal(res.status, 200);
  const body = await res.json();
  return body;
};
const rows = (await tape()).filter((x) => x.path.endsWith("/graphql"));
const changes = rows.filter((x) => x.state_mutation);
assert.deepEqual(
  changes.map((x) => x.tool),
  ["create_issue", "add_issue_comment", "issue_write", "issue_write"],
  "one row per mutation, named by the REST action that makes the change",
);
for (const x of changes) {
  assert.ok(x.state_delta?.after, `${x.tool}: the row carries the changed row`);
  assert.equal(x.origin, undefined, `${x.tool}: the caller's change, not the twin's own`);
}
assert.equal(changes[1].correlation_id, changes[2].correlation_id, "the two mutations of one request share it");
assert.ok(rows.filter((x) => !x.state_mutation).every((x) => x.tool === "graphql"), "a query's row is the graphql tool");
console.log("ok: createIssue, addComment, closeIssue, reopenIssue: REST sees them, one tape row each with the REST tool");

// ============================================================ refusals, in GraphQL's shape
const refusal = async (query, variables) => {
  try {
    await gh.graphql(query, variables);
  } catch (e) {
    return e;
  }
  assert.fail(`not refused: ${query}`);
};
let e = await refusal(`{ repository(owner: "acme", name: "webapp") { stargazers { totalCount } } }`);
assert.equal(e.name, "GraphqlResponseError");
assert.equal(e.errors[0].message, "Field 'stargazers' doesn't exist on type 'Repository'");
assert.equal(e.errors[0].extensions.code, "undefinedField");
assert.deepEqual(e.errors[0].locations, [{ line: 1, column: 47 }]);
assert.equal(e.data, undefined, "a document that does not validate runs nothing");
e = await refusal(`{ repository(owner: "acme", name: "nope") { id } }`);
assert.equal(e.errors[0].type, "NOT_FOUND");
assert.equal(e.errors[0].message, "Could not resolve to a Repository with the name 'acme/nope'.");
assert.deepEqual(e.errors[0].path, ["repository"]);
assert.deepEqual(e.data, { repository: null });
e = await refusal(`{ repository(owner: "acme", name: "webapp") { issues(first: 101) { totalCount } } }`);
assert.equal(e.errors[0].type, "EXCESSIVE_PAGINATION");
e = await refusal(`query { repository(owner: "acme" name: "webapp" { id } }`);
assert.match(e.errors[0].message, /^Parse error on "\{" \(LCURLY\) at \[1, \d+\]$/);
e = await refusal(`mutation { createIssue(input: {repositoryId: "nope", title: "x"}) { issue { id } } }`);
assert.equal(e.errors[0].type, "NOT_FOUND");
e = await refusal(`mutation($i: CreateIssueInput!) { createIssue(input: $i) { issue { id } } }`, { i: { title: "no repository" } });
assert.match(e.errors[0].message, /^Variable \$i of type CreateIssueInput! was provided invalid value/);
e = await refusal(`fragment a on Issue { ...b } fragment b on Issue { ...a } { repository(owner: "acme", name: "webapp") { issue(number: 1) { ...a } } }`);
assert.equal(e.errors[0].message, "Fragment a contains an infinite loop");
const raw = await fetch(`${restUrl}/graphql`, {
  method: "POST",
  headers: { authorization: `Bearer ${sb.session_token}`, "content-type": "application/json" },
  body: "{not json",
});
assert.equal(raw.status, 400, "a body that is not JSON is refused before GraphQL, as GitHub does");
assert.equal((await raw.json()).message, "Problems parsing JSON");
assert.equal((await tape()).filter((x) => x.path.endsWith("/graphql") && x.state_mutation).length, 4, "no refusal changed the world");
console.log("ok: unknown fields, missing objects, pagination limits, parse errors, bad variables, fragment loops: GraphQL's errors");

await discard(sb.session_id);
