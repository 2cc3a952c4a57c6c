'use strict';
// Repository labels (create, get, delete) as pm-bot's apply lock uses them,
// and merged pull requests: GitHub's answers, checked against its schemas.

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed } = require('./helpers');

let emu;
beforeEach(async () => { emu = await start(seed('seed-action.json')); });
afterEach(() => emu.close());

function fits(operationId, r) {
  const errors = emu.emu.api.validateResponse(operationId, r.status, r.json);
  assert.deepEqual(errors, [], `${operationId} ${r.status} answer does not fit GitHub's schema`);
}

const LOCK = { name: 'pm-bot:lock:pr-12', color: 'ededed', description: 'run 1001 since 2026-11-22T12:00:00Z' };

test('creating a label answers 201 with its name, description and color', async () => {
  const r = await emu.post('/repos/acme/widgets/labels', LOCK, { token: 'tok-actions' });
  assert.equal(r.status, 201, r.text);
  fits('issues/create-label', r);
  assert.equal(r.json.name, LOCK.name);
  assert.equal(r.json.description, LOCK.description);
  assert.equal(r.json.color, 'ededed');
  assert.match(r.headers.location, /\/repos\/acme\/widgets\/labels\/pm-bot%3Alock%3Apr-12$/);
  const g = await emu.get('/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-12', { token: 'tok-actions' });
  assert.equal(g.status, 200, g.text);
  fits('issues/get-label', g);
  assert.equal(g.json.description, LOCK.description);
});

test('a second create of the same name, in any case, is 422 already_exists and changes nothing', async () => {
  assert.equal((await emu.post('/repos/acme/widgets/labels', LOCK, { token: 'tok-actions' })).status, 201);
  const r = await emu.post('/repos/acme/widgets/labels',
    { ...LOCK, name: LOCK.name.toUpperCase(), description: 'run 2002' }, { token: 'tok-actions' });
  assert.equal(r.status, 422, r.text);
  fits('issues/create-label', r);
  assert.equal(r.json.message, 'Validation Failed');
  assert.deepEqual(r.json.errors, [{ resource: 'Label', code: 'already_exists', field: 'name' }]);
  const g = await emu.get('/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-12', { token: 'tok-actions' });
  assert.equal(g.json.description, LOCK.description);
});

test('deleting a label answers 204, then the label and a second delete are 404', async () => {
  assert.equal((await emu.post('/repos/acme/widgets/labels', LOCK, { token: 'tok-actions' })).status, 201);
  const d = await emu.del('/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-12', undefined, { token: 'tok-actions' });
  assert.equal(d.status, 204, d.text);
  assert.equal((await emu.get('/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-12', { token: 'tok-actions' })).status, 404);
  assert.equal((await emu.del('/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-12', undefined, { token: 'tok-actions' })).status, 404);
  assert.equal((await emu.post('/repos/acme/widgets/labels', LOCK, { token: 'tok-actions' })).status, 201, 'free again');
});

test('labels need write to create or delete, and a read-only token is refused', async () => {
  assert.equal((await emu.post('/repos/acme/widgets/labels', LOCK, { token: 'tok-bob' })).status, 403);
  assert.equal((await emu.post('/repos/acme/widgets/labels', LOCK, { token: 'tok-actions-ro' })).status, 403);
  assert.equal((await emu.post('/repos/acme/widgets/labels', { ...LOCK, description: 'x'.repeat(101) }, { token: 'tok-actions' })).status, 422);
  assert.equal((await emu.post('/repos/acme/widgets/labels', { ...LOCK, name: 'x'.repeat(51) }, { token: 'tok-actions' })).status, 422);
});

test('a merged pull request answers merged and merged_at, is closed, and cannot be reopened', async () => {
  const s = seed('seed-action.json');
  s.pulls[0].state = 'closed';
  s.pulls[0].merged = true;
  await emu.post('/_emu/reset', s, { token: null });
  const r = await emu.get('/repos/acme/widgets/pulls/12');
  assert.equal(r.status, 200, r.text);
  fits('pulls/get', r);
  assert.equal(r.json.state, 'closed');
  assert.equal(r.json.merged, true);
  assert.ok(r.json.merged_at);
  const u = await emu.patch('/repos/acme/widgets/issues/12', { state: 'open' });
  assert.equal(u.status, 422, u.text);
  const st = await emu.state();
  assert.equal(st.pulls.find((p) => p.number === 12).merged, true);
  const bad = { ...s, pulls: [{ ...s.pulls[0], state: 'open', merged: true }, s.pulls[1]] };
  assert.equal((await emu.post('/_emu/reset', bad, { token: null })).status, 400);
});

test('closing a pull request through the issue endpoint closes it, unmerged', async () => {
  const u = await emu.patch('/repos/acme/widgets/issues/12', { state: 'closed' });
  assert.equal(u.status, 200, u.text);
  const r = await emu.get('/repos/acme/widgets/pulls/12');
  assert.equal(r.json.state, 'closed');
  assert.equal(r.json.merged, false);
  assert.equal(r.json.merged_at, null);
});
