'use strict';
// Seed `ghes`: a GitHub Enterprise Server without sub-issues and/or issue
// dependencies. Their GraphQL fields and mutations are not in its schema
// (a document naming them fails validation; introspection does not list
// them) and their REST routes answer 404.

const { test, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed } = require('./helpers');

let emu;
afterEach(() => emu && emu.close());

const FIELDS = '{ issue: __type(name: "Issue") { fields(includeDeprecated: true) { name } } }';

async function issueFields() {
  const r = await emu.gql(FIELDS);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.errors, undefined, r.text);
  return new Set(r.json.data.issue.fields.map((f) => f.name));
}

test('without the seed, introspection lists parent and blockedBy and the routes answer', async () => {
  emu = await start(seed());
  const f = await issueFields();
  assert.ok(f.has('parent') && f.has('blockedBy') && f.has('subIssues'));
  assert.equal((await emu.get('/repos/acme/widgets/issues/10/dependencies/blocked_by')).status, 200);
  assert.equal((await emu.get('/repos/acme/widgets/issues/2/sub_issues')).status, 200);
});

test('ghes without sub-issues or dependencies: no such fields, mutations or routes', async () => {
  emu = await start({ ...seed(), ghes: { sub_issues: false, dependencies: false } });
  const f = await issueFields();
  for (const gone of ['parent', 'subIssues', 'subIssuesSummary', 'blockedBy', 'blocking', 'issueDependenciesSummary']) {
    assert.ok(!f.has(gone), gone);
  }
  assert.ok(f.has('title') && f.has('labels'));
  // A query naming a missing field fails as a whole, as on an older schema.
  const q = await emu.gql('{ repository(owner: "acme", name: "widgets") { issue(number: 10) { title parent { number } } } }');
  assert.equal(q.status, 200);
  assert.equal(q.json.data, undefined);
  assert.match(q.json.errors[0].message, /parent/);
  const m = await emu.gql('mutation { addBlockedBy(input: {issueId: "x", blockingIssueId: "y"}) { issue { id } } }');
  assert.ok(m.json.errors && /addBlockedBy/.test(m.json.errors[0].message), m.text);
  // What it still has works.
  const ok = await emu.gql('{ repository(owner: "acme", name: "widgets") { issue(number: 10) { title } } }');
  assert.equal(ok.json.errors, undefined, ok.text);
  for (const [method, p, body] of [
    ['GET', '/repos/acme/widgets/issues/10/dependencies/blocked_by'],
    ['POST', '/repos/acme/widgets/issues/10/dependencies/blocked_by', { issue_id: 1000002 }],
    ['GET', '/repos/acme/widgets/issues/2/sub_issues'],
    ['POST', '/repos/acme/widgets/issues/2/sub_issues', { sub_issue_id: 1000009 }],
    ['GET', '/repos/acme/widgets/issues/10/parent'],
  ]) {
    const r = await emu.req(method, p, body ? { body } : {});
    assert.equal(r.status, 404, `${method} ${p}: ${r.text}`);
  }
  // Nothing changed: the seed's edges are still there.
  const st = await emu.state();
  assert.deepEqual(st.ghes, { sub_issues: false, dependencies: false });
  const i10 = st.state.repositories.find((r) => r.repo === 'acme/widgets').issues.find((i) => i.number === 10);
  assert.equal(i10.parent, 'acme/widgets#2');
});

test('ghes with dependencies but no sub-issues keeps blockedBy', async () => {
  emu = await start({ ...seed(), ghes: { sub_issues: false } });
  const f = await issueFields();
  assert.ok(!f.has('parent') && f.has('blockedBy'));
  assert.equal((await emu.get('/repos/acme/widgets/issues/10/dependencies/blocked_by')).status, 200);
  assert.equal((await emu.get('/repos/acme/widgets/issues/2/sub_issues')).status, 404);
});

test('a ghes seed with an unknown key is refused', async () => {
  assert.throws(() => new (require('../lib/app').Emulator)({ ...seed(), ghes: { projects: false } }));
});

test('ghes without issue types: no Issue.issueType, issueTypes or updateIssueIssueType; the rest stays', async () => {
  emu = await start({ ...seed(), ghes: { issue_types: false } });
  const f = await issueFields();
  assert.ok(!f.has('issueType'));
  assert.ok(f.has('parent') && f.has('blockedBy'));
  for (const q of [
    '{ repository(owner: "acme", name: "widgets") { issueTypes(first: 5) { nodes { name } } } }',
    '{ organization(login: "acme") { issueTypes(first: 5) { nodes { name } } } }',
    'mutation { updateIssueIssueType(input: {issueId: "x"}) { issue { id } } }',
  ]) {
    const r = await emu.gql(q);
    assert.equal(r.status, 200);
    assert.equal(r.json.data, undefined, q);
    assert.equal(r.json.errors[0].extensions.code, 'undefinedField', q);
  }
  const ok = await emu.gql('{ repository(owner: "acme", name: "widgets") { issue(number: 10) { title parent { number } } } }');
  assert.equal(ok.json.errors, undefined, ok.text);
  assert.deepEqual((await emu.state()).ghes, { sub_issues: true, dependencies: true, issue_types: false });
});
