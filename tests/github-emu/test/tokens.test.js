'use strict';
// Token options of the seed: "read_only" (GITHUB_TOKEN on a fork's pull
// request: every write refused) and "projects" (false: Projects v2 refused
// like GitHub refuses GITHUB_TOKEN; "read": its mutations refused).

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed, request } = require('./helpers');

let emu;
beforeEach(async () => {
  const s = seed('seed-action.json');
  Object.assign(s.tokens, {
    'tok-alice-ro': { login: 'alice', type: 'User', scopes: ['repo', 'project'], read_only: true },
    'tok-app': { login: 'pm-bot[bot]', type: 'Bot', scopes: ['project'] },
    'tok-app-ro': { login: 'pm-bot[bot]', type: 'Bot', scopes: ['project'], read_only: true },
    'tok-app-noboard': { login: 'pm-bot[bot]', type: 'Bot', scopes: ['project'], projects: false },
    'tok-app-readboard': { login: 'pm-bot[bot]', type: 'Bot', scopes: ['project'], projects: 'read' },
    'tok-alice-noboard': { login: 'alice', type: 'User', scopes: ['repo', 'project'], projects: false },
  });
  s.collaborators['acme/widgets']['pm-bot[bot]'] = 'write';
  emu = await start(s);
});
afterEach(() => emu.close());

const ADD = 'mutation { addProjectV2ItemById(input: {projectId: "PVT_kwDOAA", contentId: "I_D0JJ"}) { item { id } } }';
const BOARD = '{ organization(login: "acme") { projectV2(number: 1) { id items(first: 10) { totalCount } } } }';

async function onBoard(ref) {
  const st = await emu.state();
  return st.state.project.items.some((i) => i.issue === ref);
}

test('a read-only token is refused every REST write with 403 and changes nothing', async () => {
  const comment = (await emu.get('/repos/acme/widgets/issues/12/comments')).json[0];
  const cases = [
    ['POST', '/repos/acme/widgets/issues/12/comments', { body: 'plan' }],
    ['PATCH', `/repos/acme/widgets/issues/comments/${comment.id}`, { body: 'edited' }],
    ['DELETE', `/repos/acme/widgets/issues/comments/${comment.id}`, undefined],
    ['POST', `/repos/acme/widgets/issues/comments/${comment.id}/reactions`, { content: 'eyes' }],
    ['POST', '/repos/acme/widgets/issues', { title: 'tracking' }],
    ['PATCH', '/repos/acme/widgets/issues/9', { title: 'renamed' }],
    ['POST', '/repos/acme/widgets/issues/9/labels', { labels: ['x'] }],
    ['POST', '/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 1000002 }],
  ];
  const before = await emu.state();
  for (const [method, p, body] of cases) {
    const r = await emu.req(method, p, { token: 'tok-actions-ro', body });
    assert.equal(r.status, 403, `${method} ${p}`);
    assert.deepEqual(Object.keys(r.json).sort(), ['documentation_url', 'message', 'status']);
    assert.equal(r.json.message, 'Resource not accessible by integration');
    assert.equal(r.json.status, '403');
  }
  assert.deepEqual(await emu.state(), before);
  const log = await emu.log();
  assert.equal(log.content_creating, cases.length, 'refused writes still count as content-creating');
});

test('a read-only token reads as before', async () => {
  for (const p of ['/repos/acme/widgets', '/repos/acme/widgets/pulls/13', '/repos/acme/widgets/issues/12/comments', '/repos/acme/widgets/collaborators/alice/permission']) {
    const r = await emu.get(p, { token: 'tok-actions-ro' });
    assert.equal(r.status, 200, p);
  }
});

test('a read-only token is refused before the request is validated; a hidden repository stays 404', async () => {
  const invalid = await emu.post('/repos/acme/widgets/issues/12/comments', { body: 42 }, { token: 'tok-actions-ro' });
  assert.equal(invalid.status, 403);
  const user = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'x' }, { token: 'tok-alice-ro' });
  assert.equal(user.status, 403);
  assert.equal(user.json.message, 'Resource not accessible by personal access token', 'a user token says so');
  const s = seed('seed-action.json');
  s.tokens['tok-dave-ro'] = { login: 'dave', scopes: ['repo'], read_only: true };
  await request(emu.port, 'POST', '/_emu/reset', { token: null, body: s });
  const none = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'x' }, { token: 'tok-dave-ro' });
  assert.equal(none.status, 404, 'no permission at all hides the repository first');
});

test('GraphQL: a read-only token gets FORBIDDEN for every mutation, in HTTP 200, and queries still run', async () => {
  for (const [token, message] of [['tok-app-ro', 'Resource not accessible by integration'], ['tok-alice-ro', 'Resource not accessible by personal access token']]) {
    const r = await emu.gql(ADD, undefined, { token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.data, { addProjectV2ItemById: null });
    assert.equal(r.json.errors.length, 1);
    const e = r.json.errors[0];
    assert.equal(e.type, 'FORBIDDEN');
    assert.equal(e.message, message);
    assert.deepEqual(e.path, ['addProjectV2ItemById']);
    assert.deepEqual(e.extensions, { saml_failure: false });
    assert.deepEqual(e.locations, [{ line: 1, column: 12 }]);
    const q = await emu.gql(BOARD, undefined, { token });
    assert.equal(q.json.errors, undefined, JSON.stringify(q.json.errors));
    assert.equal(q.json.data.organization.projectV2.items.totalCount, 3);
  }
  assert.equal(await onBoard('acme/widgets#9'), false);
  const rw = await emu.gql(ADD, undefined, { token: 'tok-app' });
  assert.equal(rw.json.errors, undefined, 'the same token without read_only may write');
  assert.equal(await onBoard('acme/widgets#9'), true);
});

test('GraphQL: read-only refuses each aliased mutation of a request', async () => {
  const r = await emu.gql(`mutation {
    a: clearProjectV2ItemFieldValue(input: {projectId: "PVT_kwDOAA", itemId: "nope", fieldId: "nope"}) { clientMutationId }
    b: addProjectV2ItemById(input: {projectId: "PVT_kwDOAA", contentId: "I_D0JJ"}) { item { id } }
  }`, undefined, { token: 'tok-app-ro' });
  assert.deepEqual(r.json.data, { a: null, b: null });
  assert.deepEqual(r.json.errors.map((e) => [e.type, e.path[0]]), [['FORBIDDEN', 'a'], ['FORBIDDEN', 'b']]);
});

test('projects: false refuses the board like GitHub refuses GITHUB_TOKEN, whatever the scopes', async () => {
  for (const [token, message] of [['tok-app-noboard', 'Resource not accessible by integration'], ['tok-alice-noboard', 'Resource not accessible by personal access token']]) {
    const m = await emu.gql(ADD, undefined, { token });
    assert.equal(m.status, 200);
    assert.deepEqual(m.json.data, { addProjectV2ItemById: null });
    assert.equal(m.json.errors[0].type, 'FORBIDDEN');
    assert.equal(m.json.errors[0].message, message);
    assert.deepEqual(m.json.errors[0].extensions, { saml_failure: false });
    const q = await emu.gql(BOARD, undefined, { token });
    assert.deepEqual(q.json.data, { organization: { projectV2: null } });
    assert.deepEqual(q.json.errors[0].path, ['organization', 'projectV2']);
    assert.equal(q.json.errors[0].type, 'FORBIDDEN');
    const issues = await emu.gql('{ repository(owner: "acme", name: "widgets") { issue(number: 9) { title } } }', undefined, { token });
    assert.equal(issues.json.data.repository.issue.title, 'Task: calibrate', 'the repository stays readable');
  }
  const rest = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'REST is not the board' }, { token: 'tok-app-noboard' });
  assert.equal(rest.status, 201);
  assert.equal(await onBoard('acme/widgets#9'), false);
});

test('projects: "read" reads the board and refuses its mutations', async () => {
  const q = await emu.gql(BOARD, undefined, { token: 'tok-app-readboard' });
  assert.equal(q.json.errors, undefined);
  assert.equal(q.json.data.organization.projectV2.items.totalCount, 3);
  const m = await emu.gql(ADD, undefined, { token: 'tok-app-readboard' });
  assert.equal(m.json.errors[0].type, 'FORBIDDEN');
  assert.equal(m.json.errors[0].message, 'Resource not accessible by integration');
  assert.equal(await onBoard('acme/widgets#9'), false);
});

test('the token options survive a dump and reset; invalid ones are refused', async () => {
  const st = await emu.state();
  assert.equal(st.tokens['tok-actions-ro'].read_only, true);
  assert.equal(st.tokens['tok-app-noboard'].projects, false);
  assert.equal(st.tokens['tok-app-readboard'].projects, 'read');
  assert.equal(st.tokens['tok-alice'].read_only, false);
  assert.equal(st.tokens['tok-alice'].projects, true);
  const r = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: st });
  assert.equal(r.status, 200);
  assert.equal((await emu.post('/repos/acme/widgets/issues/12/comments', { body: 'x' }, { token: 'tok-actions-ro' })).status, 403);
  for (const opt of [{ read_only: 'yes' }, { projects: 'write' }, { projects: null }]) {
    const s = seed('seed-action.json');
    Object.assign(s.tokens['tok-actions'], opt);
    const bad = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: s });
    assert.equal(bad.status, 400, JSON.stringify(opt));
  }
});
