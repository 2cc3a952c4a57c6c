'use strict';
// repos/get: the repository with its default branch (seed key
// repositories_meta), visibility and the caller's permissions; and what a
// public repository lets everyone do.

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed, request } = require('./helpers');

let emu;
beforeEach(async () => { emu = await start(seed('seed-action.json')); });
afterEach(() => emu.close());

function fits(operationId, r) {
  const errors = emu.emu.api.validateResponse(operationId, r.status, r.json);
  assert.deepEqual(errors, [], `${operationId} ${r.status} answer does not fit GitHub's schema`);
}

async function reset(s) {
  const r = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: s });
  assert.equal(r.status, 200, r.text);
}

test('repos/get answers full_name, default_branch, private, owner and the caller\'s permissions', async () => {
  const r = await emu.get('/repos/acme/widgets');
  assert.equal(r.status, 200, r.text);
  fits('repos/get', r);
  assert.equal(r.json.full_name, 'acme/widgets');
  assert.equal(r.json.name, 'widgets');
  assert.equal(r.json.default_branch, 'main');
  assert.equal(r.json.private, true);
  assert.equal(r.json.visibility, 'private');
  assert.equal(r.json.fork, false);
  assert.equal(r.json.owner.login, 'acme');
  assert.equal(r.json.owner.type, 'Organization');
  assert.equal(r.json.organization.login, 'acme');
  assert.deepEqual(r.json.permissions, { admin: true, maintain: true, push: true, triage: true, pull: true });
  assert.equal(r.json.open_issues_count, 4, 'open issues and open pull requests, as GitHub counts them');
});

test('permissions follow the caller\'s role', async () => {
  const cases = [
    ['tok-bob', { admin: false, maintain: false, push: false, triage: false, pull: true }],
    ['tok-carol', { admin: false, maintain: false, push: true, triage: true, pull: true }],
    ['tok-actions', { admin: false, maintain: false, push: true, triage: true, pull: true }],
    ['tok-actions-ro', { admin: false, maintain: false, push: false, triage: false, pull: true }],
  ];
  for (const [token, want] of cases) {
    const r = await emu.get('/repos/acme/widgets', { token });
    assert.equal(r.status, 200, token);
    fits('repos/get', r);
    assert.deepEqual(r.json.permissions, want, token);
  }
  assert.equal((await emu.get('/repos/acme/widgets', { token: 'tok-dave' })).status, 404);
  assert.equal((await emu.get('/repos/acme/nothing')).status, 404);
});

test('default_branch comes from repositories_meta, else main', async () => {
  const gadgets = await emu.get('/repos/acme/gadgets');
  assert.equal(gadgets.json.default_branch, 'trunk');
  assert.equal(gadgets.json.private, true, 'private unless the meta says otherwise');
  const tools = await emu.get('/repos/octocat/tools');
  assert.equal(tools.json.default_branch, 'main');
  assert.equal(tools.json.owner.login, 'octocat');
  assert.equal(tools.json.owner.type, 'User');
  assert.equal('organization' in tools.json, false);
  fits('repos/get', tools);
});

test('a repository named only in repositories_meta exists, without issues', async () => {
  const s = seed('seed-action.json');
  s.repositories_meta['acme/docs'] = { default_branch: 'develop' };
  await reset(s);
  const r = await emu.get('/repos/acme/docs');
  assert.equal(r.status, 200);
  assert.equal(r.json.default_branch, 'develop');
  assert.deepEqual((await emu.get('/repos/acme/docs/issues')).json, []);
  const st = await emu.state();
  assert.deepEqual(st.repositories_meta['acme/docs'], { default_branch: 'develop', private: true });
  assert.equal(st.state.repositories.some((x) => x.repo === 'acme/docs'), false);
});

test('invalid repositories_meta is refused', async () => {
  for (const meta of [{ 'not-a-repo': {} }, { 'acme/widgets': { default_branch: '' } }, { 'acme/widgets': { default_branch: 'has space' } }, { 'acme/widgets': { fork: true } }]) {
    const s = seed('seed-action.json');
    s.repositories_meta = meta;
    const r = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: s });
    assert.equal(r.status, 400, JSON.stringify(meta));
  }
});

test('a public repository is readable and commentable by anyone, writable only by its writers', async () => {
  const s = seed('seed-action.json');
  s.repositories_meta['acme/widgets'].private = false;
  await reset(s);
  const repo = await emu.get('/repos/acme/widgets', { token: 'tok-dave' });
  assert.equal(repo.status, 200);
  assert.equal(repo.json.private, false);
  assert.equal(repo.json.visibility, 'public');
  assert.deepEqual(repo.json.permissions, { admin: false, maintain: false, push: false, triage: false, pull: true });
  const perm = await emu.get('/repos/acme/widgets/collaborators/dave/permission');
  assert.equal(perm.json.permission, 'read');
  const comment = await emu.post('/repos/acme/widgets/issues/12/comments', { body: 'drive-by' }, { token: 'tok-dave' });
  assert.equal(comment.status, 201);
  const label = await emu.post('/repos/acme/widgets/issues/12/labels', { labels: ['x'] }, { token: 'tok-dave' });
  assert.equal(label.status, 403);
  // A classic token without `repo` reads a public repository but needs
  // `public_repo` to write there.
  assert.equal((await emu.get('/repos/acme/widgets/issues/10', { token: 'tok-eve' })).status, 200);
  assert.equal((await emu.post('/repos/acme/widgets/issues/10/comments', { body: 'no scope' }, { token: 'tok-eve' })).status, 404);
});
