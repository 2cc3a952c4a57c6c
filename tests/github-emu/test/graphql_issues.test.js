'use strict';
// GraphQL on today's schema: dependencies, issue filters, createIssue with
// parent, labels, board and issue type, sub-issue mutations, issue types and
// partial FORBIDDEN answers.

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed, issueOf } = require('./helpers');

let emu;
afterEach(() => emu && emu.close());

async function boot(extra) {
  emu = await start({ ...seed(), ...extra });
}

async function ok(query, variables, opts) {
  const r = await emu.gql(query, variables, opts);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.errors, undefined, JSON.stringify(r.json.errors));
  return r.json.data;
}

async function fails(query, variables, opts) {
  const r = await emu.gql(query, variables, opts);
  assert.equal(r.status, 200, r.text);
  assert.ok(r.json.errors, r.text);
  return r.json;
}

const W = (sel) => `{ repository(owner: "acme", name: "widgets") { ${sel} } }`;

test('blockedBy, blocking and issueDependenciesSummary come from the dependency model REST serves', async () => {
  await boot();
  const d = await ok(W(`issue(number: 10) {
    blockedBy(first: 2) { totalCount pageInfo { hasNextPage endCursor } nodes { number repository { nameWithOwner } } }
    blocking(first: 5) { totalCount nodes { number } }
    issueDependenciesSummary { blockedBy blocking totalBlockedBy totalBlocking } }`));
  const i = d.repository.issue;
  assert.deepEqual(i.blockedBy.nodes, [
    { number: 9, repository: { nameWithOwner: 'acme/widgets' } },
    { number: 1, repository: { nameWithOwner: 'acme/gadgets' } },
  ]);
  assert.equal(i.blockedBy.totalCount, 3);
  assert.equal(i.blockedBy.pageInfo.hasNextPage, true);
  assert.deepEqual(i.blocking, { totalCount: 0, nodes: [] });
  // #2 is closed: open blockers 2 of 3.
  assert.deepEqual(i.issueDependenciesSummary, { blockedBy: 2, blocking: 0, totalBlockedBy: 3, totalBlocking: 3 - 3 });
  const rest = await emu.get('/repos/acme/widgets/issues/10/dependencies/blocked_by');
  assert.deepEqual(rest.json.map((x) => x.number), [9, 1, 2]);
  const nine = await ok(W('issue(number: 9) { blocking(first: 5) { nodes { number } } issueDependenciesSummary { blocking totalBlocking } }'));
  assert.deepEqual(nine.repository.issue, { blocking: { nodes: [{ number: 10 }] }, issueDependenciesSummary: { blocking: 1, totalBlocking: 1 } });
  // An unreadable blocker is left out: bob cannot read acme/gadgets.
  await emu.post('/_emu/reset', { ...seed(), collaborators: { ...seed().collaborators, 'acme/gadgets': { alice: 'write' } } }, { token: null });
  const bob = await ok(W('issue(number: 10) { blockedBy(first: 5) { totalCount nodes { number } } }'), null, { token: 'tok-bob' });
  assert.deepEqual(bob.repository.issue.blockedBy, { totalCount: 2, nodes: [{ number: 9 }, { number: 2 }] });
});

const ADD_BLOCKED = `mutation($i: ID!, $b: ID!) { addBlockedBy(input: {issueId: $i, blockingIssueId: $b, clientMutationId: "m1"}) {
  clientMutationId issue { number blockedBy(first: 10) { nodes { number } } } blockingIssue { number } } }`;
const REMOVE_BLOCKED = `mutation($i: ID!, $b: ID!) { removeBlockedBy(input: {issueId: $i, blockingIssueId: $b}) {
  issue { number issueDependenciesSummary { totalBlockedBy } } blockingIssue { number } } }`;

test('addBlockedBy / removeBlockedBy change the same edges as REST, with its limits', async () => {
  await boot();
  // #9 (I_D0JJ) blocked by gadgets#1 (I_D0JB).
  const d = await ok(ADD_BLOCKED, { i: 'I_D0JJ', b: 'I_D0JB' });
  assert.deepEqual(d.addBlockedBy, {
    clientMutationId: 'm1', issue: { number: 9, blockedBy: { nodes: [{ number: 1 }] } }, blockingIssue: { number: 1 },
  });
  let st = await emu.state();
  assert.deepEqual(issueOf(st, 'acme/widgets', 9).blocked_by, ['acme/gadgets#1']);
  assert.equal(issueOf(st, 'acme/widgets', 9).updated_at, '2026-11-03T00:00:00Z');
  const rest = await emu.get('/repos/acme/gadgets/issues/1/dependencies/blocking');
  assert.deepEqual(rest.json.map((x) => x.number), [10, 9]);

  const again = await fails(ADD_BLOCKED, { i: 'I_D0JJ', b: 'I_D0JB' });
  assert.deepEqual(again.data, { addBlockedBy: null });
  assert.equal(again.errors[0].type, 'UNPROCESSABLE');
  assert.equal(again.errors[0].message, 'This dependency already exists');
  assert.deepEqual(again.errors[0].path, ['addBlockedBy']);
  const self = await fails(ADD_BLOCKED, { i: 'I_D0JJ', b: 'I_D0JJ' });
  assert.equal(self.errors[0].message, 'An issue cannot be blocked by itself');
  const missing = await fails(ADD_BLOCKED, { i: 'I_D0JJ', b: 'I_nope' });
  assert.equal(missing.errors[0].type, 'NOT_FOUND');
  assert.equal(missing.errors[0].message, "Could not resolve to a node with the global id of 'I_nope'");
  // bob has read on acme/widgets: FORBIDDEN, nothing changes.
  const bob = await fails(REMOVE_BLOCKED, { i: 'I_D0JK', b: 'I_D0JJ' }, { token: 'tok-bob' });
  assert.equal(bob.errors[0].type, 'FORBIDDEN');
  assert.equal(bob.errors[0].message, 'Resource not accessible by personal access token');

  const r = await ok(REMOVE_BLOCKED, { i: 'I_D0JJ', b: 'I_D0JB' });
  assert.deepEqual(r.removeBlockedBy, { issue: { number: 9, issueDependenciesSummary: { totalBlockedBy: 0 } }, blockingIssue: { number: 1 } });
  st = await emu.state();
  assert.deepEqual(issueOf(st, 'acme/widgets', 9).blocked_by, []);
  const gone = await fails(REMOVE_BLOCKED, { i: 'I_D0JJ', b: 'I_D0JB' });
  assert.equal(gone.errors[0].type, 'NOT_FOUND');
});

test('repository.issues filterBy createdBy, labels and since, and the labels argument', async () => {
  await boot();
  const q = (args) => ok(W(`issues(first: 10, ${args}) { totalCount nodes { number } }`)).then((d) => d.repository.issues.nodes.map((n) => n.number));
  // A bot's login with or without "[bot]", without regard to case.
  assert.deepEqual(await q('filterBy: {createdBy: "github-actions[bot]"}'), [9, 10]);
  assert.deepEqual(await q('filterBy: {createdBy: "GitHub-Actions"}'), [9, 10]);
  assert.deepEqual(await q('filterBy: {createdBy: "octocat"}'), [2]);
  assert.deepEqual(await q('filterBy: {createdBy: "nobody"}'), []);
  // labels: any of the names, without regard to case.
  assert.deepEqual(await q('filterBy: {labels: ["AREA:UI", "absent"]}'), [10]);
  assert.deepEqual(await q('filterBy: {labels: ["type:task"]}'), [9, 10]);
  assert.deepEqual(await q('labels: ["area:ui"]'), [10]);
  // since: updatedAt at or after, inclusive (#9 is 10:00:02.250Z, #10 10:00:03Z).
  assert.deepEqual(await q('filterBy: {since: "2026-11-02T10:00:03Z"}'), [10]);
  assert.deepEqual(await q('filterBy: {since: "2026-11-02T10:00:02Z"}'), [9, 10]);
  assert.deepEqual(await q('filterBy: {states: [OPEN], createdBy: "github-actions", since: "2026-11-01T00:00:00Z", labels: ["type:task"]}'), [9, 10]);
  assert.deepEqual(await q('states: [CLOSED], filterBy: {states: [OPEN, CLOSED]}'), [2]);
  // A seeded filter that misses: narrowing filters never return #9.
  await emu.post('/_emu/reset', { ...seed(), filter_misses: ['acme/widgets#9'] }, { token: null });
  assert.deepEqual(await q('filterBy: {createdBy: "github-actions"}'), [10]);
  assert.deepEqual(await q('states: [OPEN]'), [9, 10]);
  assert.deepEqual((await emu.state()).filter_misses, ['acme/widgets#9']);
  // Filters the emulator does not model answer 501.
  const r = await emu.gql(W('issues(first: 10, filterBy: {mentioned: "bob"}) { totalCount }'));
  assert.equal(r.status, 501);
  assert.match(r.json.message, /IssueFilters\.mentioned/);
});

const CREATE = `mutation($in: CreateIssueInput!) { createIssue(input: $in) {
  clientMutationId
  issue { number title body databaseId author { login } labels(first: 10) { nodes { name } }
    parent { number } issueType { name } projectItems(first: 5) { nodes { project { number } } } } } }`;

async function ids() {
  const d = await ok(`{ repository(owner: "acme", name: "widgets") {
    id issueTypes(first: 10) { nodes { id name } } } organization(login: "acme") { projectV2(number: 1) { id } } }`);
  const labels = await emu.get('/repos/acme/widgets/labels/type:task');
  return {
    repo: d.repository.id,
    types: Object.fromEntries(d.repository.issueTypes.nodes.map((t) => [t.name, t.id])),
    project: d.organization.projectV2 && d.organization.projectV2.id,
    label: labels.json && labels.json.node_id,
  };
}

test('createIssue with labels, parent, board and issue type in one request', async () => {
  await boot();
  const id = await ids();
  assert.deepEqual(id.types, { Task: 'IT_AQ', Bug: 'IT_Ag', Feature: 'IT_Aw' });
  const lab = await ok('{ repository(owner: "acme", name: "widgets") { issue(number: 10) { labels(first: 10) { nodes { id name } } } } }');
  const task = lab.repository.issue.labels.nodes.find((l) => l.name === 'type:task').id;
  const d = await ok(CREATE, { in: {
    repositoryId: id.repo, title: 'Gauge', body: 'b', labelIds: [task], parentIssueId: 'I_D0JK',
    projectV2Ids: [id.project], issueTypeId: id.types.Task, clientMutationId: 'c1',
  } });
  assert.deepEqual(d.createIssue, {
    clientMutationId: 'c1',
    issue: {
      number: 11, title: 'Gauge', body: 'b', databaseId: 1000021, author: { login: 'alice' },
      labels: { nodes: [{ name: 'type:task' }] }, parent: { number: 10 }, issueType: { name: 'Task' },
      projectItems: { nodes: [{ project: { number: 1 } }] },
    },
  });
  const st = await emu.state();
  const i = issueOf(st, 'acme/widgets', 11);
  assert.equal(i.parent, 'acme/widgets#10');
  assert.deepEqual(i.labels, ['type:task']);
  assert.equal(i.updated_at, '2026-11-03T00:00:00Z');
  assert.deepEqual(st.issue_type, { 'acme/widgets#11': 'Task' });
  assert.ok(st.state.project.items.some((it) => it.issue === 'acme/widgets#11'));
  const log = await emu.log();
  assert.equal(log.requests.at(-1).operation, 'mutation createIssue');
  assert.equal(log.requests.at(-1).content_creating, true);
});

test('createIssue refuses a bad reference or permission and creates nothing', async () => {
  await boot({ issue_types: { acme: [{ name: 'Epic', color: 'PURPLE' }, { name: 'Old', is_enabled: false }] } });
  const id = await ids();
  assert.deepEqual(Object.keys(id.types), ['Epic']);
  const org = await ok('{ organization(login: "acme") { issueTypes(first: 10) { nodes { name isEnabled color description } } } }');
  assert.deepEqual(org.organization.issueTypes.nodes, [
    { name: 'Epic', isEnabled: true, color: 'PURPLE', description: null },
    { name: 'Old', isEnabled: false, color: 'GRAY', description: null },
  ]);
  const before = await emu.state();
  const cases = [
    [{ parentIssueId: 'I_nope' }, 'NOT_FOUND', "Could not resolve to a node with the global id of 'I_nope'"],
    [{ labelIds: ['LA_nope'] }, 'NOT_FOUND', "Could not resolve to a node with the global id of 'LA_nope'"],
    [{ issueTypeId: 'IT_Ag' }, 'UNPROCESSABLE', 'Issue type Old is not available in acme/widgets'],
    [{ parentIssueId: 'I_D0JU' }, 'UNPROCESSABLE', 'The sub-issue must belong to the same repository owner as the parent issue'],
    [{ title: '' }, 'UNPROCESSABLE', null],
  ];
  for (const [extra, type, message] of cases) {
    const r = await fails(CREATE, { in: { repositoryId: id.repo, title: 'X', ...extra } });
    assert.deepEqual(r.data, { createIssue: null }, JSON.stringify(extra));
    assert.equal(r.errors[0].type, type, JSON.stringify(r.errors));
    if (message) assert.equal(r.errors[0].message, message);
  }
  // bob (read) may open an issue but not give it a parent; carol's board scope is read only.
  const bob = await fails(CREATE, { in: { repositoryId: id.repo, title: 'X', parentIssueId: 'I_D0JK' } }, { token: 'tok-bob' });
  assert.equal(bob.errors[0].type, 'FORBIDDEN');
  const carol = await fails(CREATE, { in: { repositoryId: id.repo, title: 'X', projectV2Ids: [id.project] } }, { token: 'tok-carol' });
  assert.equal(carol.errors[0].type, 'INSUFFICIENT_SCOPES');
  assert.deepEqual((await emu.state()).state, before.state);
  const plain = await ok(CREATE.replace(/projectItems\(first: 5\) \{ nodes \{ project \{ number \} \} \} /, ''),
    { in: { repositoryId: id.repo, title: 'Plain' } }, { token: 'tok-bob' });
  assert.deepEqual(plain.createIssue.issue.parent, null);
  assert.equal(plain.createIssue.issue.author.login, 'bob');
  // The seed's issue types survive a dump and reset.
  const dump = await emu.state();
  assert.deepEqual(dump.issue_types, { acme: [
    { name: 'Epic', description: null, color: 'PURPLE', is_enabled: true },
    { name: 'Old', description: null, color: 'GRAY', is_enabled: false },
  ] });
  assert.equal((await emu.post('/_emu/reset', dump, { token: null })).status, 200);
  assert.deepEqual(await emu.state(), dump);
});

const ADD_SUB = `mutation($p: ID!, $c: ID, $u: String, $r: Boolean) {
  addSubIssue(input: {issueId: $p, subIssueId: $c, subIssueUrl: $u, replaceParent: $r}) { issue { number subIssues(first: 10) { nodes { number } } } subIssue { number parent { number } } } }`;
const REMOVE_SUB = `mutation($p: ID!, $c: ID!) {
  removeSubIssue(input: {issueId: $p, subIssueId: $c}) { issue { number subIssuesSummary { total } } subIssue { number parent { number } } } }`;

test('addSubIssue / removeSubIssue, by id or by URL, with the REST rules', async () => {
  await boot();
  // #9 under #10.
  const d = await ok(ADD_SUB, { p: 'I_D0JK', c: 'I_D0JJ' });
  assert.deepEqual(d.addSubIssue, { issue: { number: 10, subIssues: { nodes: [{ number: 9 }] } }, subIssue: { number: 9, parent: { number: 10 } } });
  assert.equal(issueOf(await emu.state(), 'acme/widgets', 9).parent, 'acme/widgets#10');
  // A second parent needs replaceParent.
  const second = await fails(ADD_SUB, { p: 'I_D0JB', c: 'I_D0JJ' });
  assert.equal(second.errors[0].type, 'UNPROCESSABLE');
  assert.equal(second.errors[0].message, 'Sub-issue may only have one parent');
  const moved = await ok(ADD_SUB, { p: 'I_D0JB', u: 'https://github.com/acme/widgets/issues/9', r: true });
  assert.deepEqual(moved.addSubIssue.subIssue, { number: 9, parent: { number: 1 } });
  const cycle = await fails(ADD_SUB, { p: 'I_D0JK', c: 'I_D0JC' });
  assert.equal(cycle.errors[0].message, 'Sub-issue cannot be an ancestor of its parent');
  const neither = await fails(ADD_SUB, { p: 'I_D0JK' });
  assert.equal(neither.errors[0].message, 'Exactly one of subIssueId or subIssueUrl must be given');
  const r = await ok(REMOVE_SUB, { p: 'I_D0JB', c: 'I_D0JJ' });
  assert.deepEqual(r.removeSubIssue, { issue: { number: 1, subIssuesSummary: { total: 0 } }, subIssue: { number: 9, parent: null } });
  const notChild = await fails(REMOVE_SUB, { p: 'I_D0JB', c: 'I_D0JJ' });
  assert.equal(notChild.errors[0].type, 'NOT_FOUND');
  const ro = await fails(ADD_SUB, { p: 'I_D0JK', c: 'I_D0JJ' }, { token: 'tok-bob' });
  assert.equal(ro.errors[0].type, 'FORBIDDEN');
});

test('updateIssueIssueType sets and clears an issue type; Issue.issueType reads it', async () => {
  await boot({ issue_type: { 'acme/widgets#10': 'bug' } });
  const q = W('issue(number: 10) { issueType { id name color } }');
  assert.deepEqual((await ok(q)).repository.issue.issueType, { id: 'IT_Ag', name: 'Bug', color: 'RED' });
  const m = 'mutation($i: ID!, $t: ID) { updateIssueIssueType(input: {issueId: $i, issueTypeId: $t}) { issue { issueType { name } } } }';
  assert.deepEqual((await ok(m, { i: 'I_D0JK', t: 'IT_Aw' })).updateIssueIssueType.issue.issueType, { name: 'Feature' });
  assert.deepEqual((await emu.state()).issue_type, { 'acme/widgets#10': 'Feature' });
  assert.equal((await ok(m, { i: 'I_D0JK', t: null })).updateIssueIssueType.issue.issueType, null);
  assert.equal((await emu.state()).issue_type, undefined);
  // octocat/tools belongs to a user: no issue types there.
  const user = await fails(m, { i: 'I_D0JU', t: 'IT_AQ' });
  assert.equal(user.errors[0].message, 'Issue type Task is not available in octocat/tools');
  assert.equal((await ok('{ repository(owner: "octocat", name: "tools") { issueTypes(first: 5) { totalCount } } }')).repository.issueTypes, null);
  const bad = await emu.post('/_emu/reset', { ...seed(), issue_type: { 'acme/widgets#10': 'Saga' } }, { token: null });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.json.problems, ['issue_type: Saga is not an issue type of acme']);
});

test('a forbidden field: null at its path and a FORBIDDEN error, HTTP 200, the rest answered', async () => {
  await boot({ forbidden_fields: { 'acme/widgets#10': ['parent', 'blockedBy'] } });
  const r = await emu.gql(W('issues(first: 10) { nodes { number parent { number } } }'), null, { token: 'tok-actions' });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.data.repository.issues.nodes, [{ number: 2, parent: null }, { number: 9, parent: null }, { number: 10, parent: null }]);
  assert.deepEqual(r.json.errors, [{
    type: 'FORBIDDEN', path: ['repository', 'issues', 'nodes', 2, 'parent'], extensions: { saml_failure: false },
    locations: [{ line: 1, column: 83 }], message: 'Resource not accessible by integration',
  }]);
  // blockedBy is non-null: the issue itself is null in its list, the others stay.
  const b = await emu.gql(W('issues(first: 10) { nodes { number blockedBy(first: 5) { totalCount } } }'));
  assert.equal(b.status, 200);
  assert.deepEqual(b.json.data.repository.issues.nodes.map((n) => n && n.number), [2, 9, null]);
  assert.equal(b.json.errors.length, 1);
  assert.equal(b.json.errors[0].type, 'FORBIDDEN');
  assert.deepEqual(b.json.errors[0].path, ['repository', 'issues', 'nodes', 2, 'blockedBy']);
  assert.equal(b.json.errors[0].message, 'Resource not accessible by personal access token');
  // Other fields of the issue read normally; the seed key survives a dump.
  assert.equal((await ok(W('issue(number: 10) { title }'))).repository.issue.title.length > 0, true);
  assert.deepEqual((await emu.state()).forbidden_fields, { 'acme/widgets#10': ['blockedBy', 'parent'] });
});

test("pm-bot's issues document reads each issue's type and the repository's types in the same page", async () => {
  await boot({ issue_type: { 'acme/widgets#10': 'bug' } });
  const doc = require('node:fs').readFileSync(require('node:path').join(__dirname, '..', '..', '..',
    'src', 'github', 'graphql', 'issues.graphql'), 'utf8');
  const d = await ok(doc, { owner: 'acme', name: 'widgets', after: null, filter: null });
  assert.deepEqual(d.repository.issueTypes.nodes.map((t) => t.name), ['Task', 'Bug', 'Feature']);
  const byNumber = Object.fromEntries(d.repository.issues.nodes.map((i) => [i.number, i.issueType]));
  assert.deepEqual(byNumber[10], { name: 'Bug' });
  assert.equal(byNumber[9], null);
  // A user's repository has no types: null, and the issues are still read.
  const u = await ok(doc, { owner: 'octocat', name: 'tools', after: null, filter: null });
  assert.equal(u.repository.issueTypes, null);
  assert.ok(u.repository.issues.nodes.length > 0);
});
