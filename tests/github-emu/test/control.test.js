'use strict';
// Control endpoints (/_emu/): state dump and reset, fault injection and the
// request log.

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { start, seed, request, issueOf } = require('./helpers');

let emu;
beforeEach(async () => { emu = await start(); });
afterEach(() => emu.close());

function widgetCount(st) {
  return st.state.repositories.find((r) => r.repo === 'acme/widgets').issues.length;
}

test('the state dump of pm-bot\'s full fixture is byte for byte its canonical form', async () => {
  const root = path.join(__dirname, '..', '..', 'fixtures', 'states');
  const state = JSON.parse(fs.readFileSync(path.join(root, 'full.json'), 'utf8'));
  const canonical = fs.readFileSync(path.join(root, 'full.canonical.json'), 'utf8').trim();
  const r = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: { state } });
  assert.equal(r.status, 200);
  const st = await emu.state();
  assert.equal(JSON.stringify(st.state), canonical);
});

test('a dump fed back through reset gives the same dump', async () => {
  await emu.post('/repos/acme/widgets/issues', { title: 'n', labels: ['z', 'a'] });
  await emu.post('/repos/acme/widgets/issues/11/comments', { body: 'c' });
  await emu.post('/repos/acme/widgets/issues/2/sub_issues', { sub_issue_id: 1000021 });
  const first = await emu.state();
  const r = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: first });
  assert.equal(r.status, 200);
  const second = await emu.state();
  assert.deepEqual(second, first);
  // And the clock goes on after the last stamp, not back to the seed's now.
  const next = await emu.post('/repos/acme/widgets/issues', { title: 'after reset' });
  assert.ok(next.json.updated_at > issueOf(first, 'acme/widgets', 11).updated_at);
  assert.equal(next.json.id, first.state.extra.next_database_id);
});

test('reset refuses an invalid seed with its problems and keeps the old world', async () => {
  const bad = [
    [{ state: { schema_version: 'state/v2' } }, /schema_version/],
    [{ state: { schema_version: 'state/v1' }, extra_key: 1 }, /additional/],
    [{ state: { schema_version: 'state/v1', repositories: [{ repo: 'a/b', issues: [{ number: 1, database_id: 5, node_id: 'I_x', title: 't', state: 'open', author: 'x', author_type: 'User', updated_at: '2026-01-01T00:00:00Z', parent: 'a/b#7' }] }] } }, /parent a\/b#7/],
    [{ state: { schema_version: 'state/v1' }, tokens: { 'has space': { login: 'x' } } }, /tokens/],
  ];
  for (const [s, re] of bad) {
    const r = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: s });
    assert.equal(r.status, 400);
    assert.match(r.json.problems.join('\n'), re);
  }
  assert.equal(widgetCount(await emu.state()), 3);
});

test('reset to a new seed replaces the world, the faults and the log', async () => {
  await emu.fault({ count: 5, status: 502 });
  await emu.get('/repos/acme/widgets/issues');
  const s = seed();
  s.state.repositories = s.state.repositories.filter((r) => r.repo !== 'acme/widgets');
  delete s.state.project;
  s.collaborators = {};
  s.comments = [];
  const r = await request(emu.port, 'POST', '/_emu/reset', { token: null, body: s });
  assert.equal(r.status, 200);
  assert.equal((await emu.get('/repos/acme/widgets/issues')).status, 404);
  assert.equal((await emu.get('/repos/acme/gadgets/issues')).status, 200);
  const log = await emu.log();
  assert.equal(log.total, 2);
});

test('a 502 fault answers the next N matching requests without performing them', async () => {
  const f = await emu.fault({ count: 2, match: { method: 'POST', path: '/repos/acme/widgets/issues' }, status: 502 });
  assert.equal(f.status, 201);
  assert.equal((await emu.get('/repos/acme/widgets/issues/10')).status, 200, 'a GET does not match');
  for (let i = 0; i < 2; i++) {
    const r = await emu.post('/repos/acme/widgets/issues', { title: `try ${i}` });
    assert.equal(r.status, 502);
    assert.equal(r.json.message, 'Server Error');
  }
  assert.equal(widgetCount(await emu.state()), 3);
  const third = await emu.post('/repos/acme/widgets/issues', { title: 'third' });
  assert.equal(third.status, 201);
  const log = await emu.log();
  assert.deepEqual(log.requests.filter((e) => e.method === 'POST').map((e) => [e.status, e.fault]), [[502, 1], [502, 1], [201, null]]);
});

test('execute: true performs the request, then answers the fault: a lost response', async () => {
  await emu.fault({ count: 1, match: { method: 'POST' }, status: 503, execute: true });
  const r = await emu.post('/repos/acme/widgets/issues', { title: 'landed anyway' });
  assert.equal(r.status, 503);
  const st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 11).title, 'landed anyway');
});

test('a 403 secondary-limit fault carries retry-after and GitHub\'s message', async () => {
  await emu.fault({ count: 1, status: 403, retry_after: 1 });
  const r = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal(r.status, 403);
  assert.equal(r.headers['retry-after'], '1');
  assert.match(r.json.message, /secondary rate limit/);
  assert.equal((await emu.get('/repos/acme/widgets/issues/10')).status, 200);
});

test('a 429 fault and a primary-limit fault', async () => {
  await emu.fault([{ count: 1, status: 429, retry_after: 2 }, { count: 1, status: 403, primary: true, reset_in: 3 }]);
  const a = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal(a.status, 429);
  assert.equal(a.headers['retry-after'], '2');
  const b = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal(b.status, 403);
  assert.equal(b.headers['x-ratelimit-remaining'], '0');
  const wait = Number(b.headers['x-ratelimit-reset']) - Math.floor(Date.now() / 1000);
  assert.ok(wait >= 2 && wait <= 3, `reset in ${wait}s`);
  assert.match(b.json.message, /API rate limit exceeded/);
});

test('a GraphQL rate-limit fault answers RATE_LIMITED in HTTP 200 and leaves REST alone', async () => {
  await emu.fault({ count: 1, match: 'graphql', graphql_rate_limit: true });
  assert.equal((await emu.get('/repos/acme/widgets/issues/10')).status, 200);
  const r = await emu.gql('{ viewer { login } }');
  assert.equal(r.status, 200);
  assert.equal(r.json.errors[0].type, 'RATE_LIMITED');
  assert.equal(r.headers['x-ratelimit-remaining'], '0');
  const again = await emu.gql('{ viewer { login } }');
  assert.equal(again.json.data.viewer.login, 'alice');
});

test('a fault can match GraphQL mutations only', async () => {
  await emu.fault({ count: 1, match: { graphql: 'mutation' }, status: 502 });
  const q = await emu.gql('{ viewer { login } }');
  assert.equal(q.status, 200);
  const m = await emu.gql('mutation { addProjectV2ItemById(input: {projectId: "PVT_kwDOAA", contentId: "I_D0JJ"}) { item { id } } }');
  assert.equal(m.status, 502);
  const st = await emu.state();
  assert.equal(st.state.project.items.some((i) => i.issue === 'acme/widgets#9'), false);
});

test('cut_body performs the request and drops the connection mid-body', async () => {
  await emu.fault({ count: 1, match: { method: 'POST' }, cut_body: true });
  await assert.rejects(emu.post('/repos/acme/widgets/issues', { title: 'cut' }));
  const st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 11).title, 'cut', 'the write landed though the answer was lost');
  const log = await emu.log();
  assert.equal(log.requests.find((e) => e.method === 'POST').status, 201);
});

test('delay_ms delays a request that then succeeds', async () => {
  await emu.fault({ count: 1, delay_ms: 50 });
  const r = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal(r.status, 200);
  const log = await emu.log();
  assert.equal(log.requests[0].fault, 1);
});

test('invalid fault specifications are refused', async () => {
  for (const f of [{ status: 502 }, { count: 1 }, { count: 1, status: 200 }, { count: 1, status: 502, bogus: 1 }, { count: 1, match: { verb: 'GET' }, status: 502 }]) {
    const r = await emu.fault(f);
    assert.equal(r.status, 400, JSON.stringify(f));
  }
  const list = await request(emu.port, 'GET', '/_emu/faults', { token: null });
  assert.deepEqual(list.json.faults, []);
});

test('DELETE /_emu/faults drops pending faults', async () => {
  await emu.fault({ count: 3, status: 502 });
  await request(emu.port, 'DELETE', '/_emu/faults', { token: null });
  assert.equal((await emu.get('/repos/acme/widgets/issues/10')).status, 200);
});

test('the request log records method, path, query, status and content-creating requests, never a token', async () => {
  await emu.get('/repos/acme/widgets/issues?state=all&per_page=2');
  await emu.post('/repos/acme/widgets/issues', { title: 'x' });
  await emu.patch('/repos/acme/widgets/issues/11', { title: 'y' });
  await emu.gql('{ viewer { login } }');
  await emu.gql('mutation { addProjectV2ItemById(input: {projectId: "PVT_kwDOAA", contentId: "I_D0JJ"}) { item { id } } }');
  await emu.get('/repos/acme/widgets/issues/10', { token: 'tok-secret-never-logged' });
  const log = await emu.log();
  assert.equal(log.total, 6);
  assert.equal(log.content_creating, 3);
  assert.deepEqual(log.requests.map((e) => [e.method, e.path, e.status, e.content_creating]), [
    ['GET', '/repos/acme/widgets/issues', 200, false],
    ['POST', '/repos/acme/widgets/issues', 201, true],
    ['PATCH', '/repos/acme/widgets/issues/11', 200, true],
    ['POST', '/graphql', 200, false],
    ['POST', '/graphql', 200, true],
    ['GET', '/repos/acme/widgets/issues/10', 401, false],
  ]);
  assert.equal(log.requests[0].query, 'state=all&per_page=2');
  assert.equal(log.requests[0].operation, 'issues/list-for-repo');
  assert.equal(log.requests[0].api_version, '2022-11-28');
  assert.equal(log.requests[0].user_agent, 'pm-bot-emu-tests');
  assert.doesNotMatch(JSON.stringify(log), /tok-/);
  await request(emu.port, 'DELETE', '/_emu/requests', { token: null });
  assert.equal((await emu.log()).total, 0);
});

test('an unknown control endpoint answers 404', async () => {
  const r = await request(emu.port, 'GET', '/_emu/nothing', { token: null });
  assert.equal(r.status, 404);
});
