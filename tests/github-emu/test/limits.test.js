'use strict';
// Secondary limits on content-creating requests (seed secondary_limits) and
// the hourly request cap (seed rate_limit), answered as GitHub answers them.

const { test, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed } = require('./helpers');

let emu;
afterEach(() => emu && emu.close());

const SECONDARY = /^You have exceeded a secondary rate limit\. Please wait a few minutes before you try again\. If you reach out to GitHub Support for help, please include the request ID EMU0:[0-9A-F]{6}\.$/;
const DOCS = 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';

test('secondary limits are off unless the seed enables them', async () => {
  emu = await start();
  for (let n = 0; n < 90; n++) {
    const r = await emu.post('/repos/acme/widgets/issues/9/comments', { body: `c${n}` });
    assert.equal(r.status, 201);
  }
});

test("secondary_limits {} is GitHub's 80 a minute and 500 an hour; the dump keeps it", async () => {
  emu = await start({ ...seed(), secondary_limits: {} });
  const st = await emu.state();
  assert.deepEqual(st.secondary_limits, { windows: [{ count: 80, seconds: 60 }, { count: 500, seconds: 3600 }], status: 403 });
  for (let n = 0; n < 80; n++) {
    assert.equal((await emu.post('/repos/acme/widgets/issues/9/comments', { body: `c${n}` })).status, 201);
  }
  const r = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'one too many' });
  assert.equal(r.status, 403);
  const wait = Number(r.headers['retry-after']);
  assert.ok(wait >= 59 && wait <= 60, r.headers['retry-after']);
  // Reads go on.
  assert.equal((await emu.get('/repos/acme/widgets/issues/9')).status, 200);
});

test('a content-creating request over a window: 403 with retry-after and GitHub\'s message; the slot frees', async () => {
  emu = await start({ ...seed(), secondary_limits: { windows: [{ count: 2, seconds: 2 }, { count: 3, seconds: 3600 }] } });
  assert.equal((await emu.post('/repos/acme/widgets/issues', { title: 'a' })).status, 201);
  // A GraphQL mutation is content-creating too; a query is not.
  const m = await emu.gql('mutation { addBlockedBy(input: {issueId: "I_D0JJ", blockingIssueId: "I_D0JC"}) { issue { number } } }');
  assert.equal(m.status, 200);
  assert.equal(m.json.errors, undefined);
  assert.equal((await emu.gql('{ viewer { login } }')).status, 200);
  const r = await emu.post('/repos/acme/widgets/issues', { title: 'b' });
  assert.equal(r.status, 403);
  assert.match(r.json.message, SECONDARY);
  assert.equal(r.json.documentation_url, DOCS);
  assert.equal(r.json.status, '403');
  assert.ok(['1', '2'].includes(r.headers['retry-after']), r.headers['retry-after']);
  assert.equal(r.headers['x-ratelimit-resource'], 'core');
  assert.notEqual(r.headers['x-ratelimit-remaining'], '0', 'a secondary limit is not the primary one');
  const g = await emu.gql('mutation { removeBlockedBy(input: {issueId: "I_D0JJ", blockingIssueId: "I_D0JC"}) { issue { number } } }');
  assert.equal(g.status, 403);
  assert.match(g.json.message, SECONDARY);
  assert.ok(g.headers['retry-after']);
  // Nothing was performed, and the log says why.
  const st = await emu.state();
  assert.equal(st.state.repositories.find((x) => x.repo === 'acme/widgets').issues.length, 4);
  const log = await emu.log();
  assert.deepEqual(log.requests.map((e) => [e.status, e.content_creating, e.secondary_limited]), [
    [201, true, false], [200, true, false], [200, false, false], [403, true, true], [403, true, true],
  ]);
  // Another login has its own windows.
  assert.equal((await emu.post('/repos/acme/widgets/issues', { title: 'c' }, { token: 'tok-carol' })).status, 201);
  // After the short window the third request passes; the hourly window of 3 then refuses.
  await new Promise((res) => setTimeout(res, 1000 * Number(r.headers['retry-after']) + 100));
  assert.equal((await emu.post('/repos/acme/widgets/issues', { title: 'd' })).status, 201);
  const hour = await emu.post('/repos/acme/widgets/issues', { title: 'e' });
  assert.equal(hour.status, 403);
  const w = Number(hour.headers['retry-after']);
  assert.ok(w >= 3590 && w <= 3600, hour.headers['retry-after']);
});

test('secondary_limits status 429', async () => {
  emu = await start({ ...seed(), secondary_limits: { windows: [{ count: 1, seconds: 60 }], status: 429 } });
  assert.equal((await emu.patch('/repos/acme/widgets/issues/9', { title: 'x' })).status, 200);
  const r = await emu.del('/repos/acme/widgets/issues/9/labels/type:task');
  assert.equal(r.status, 429);
  assert.equal(r.json.status, '429');
  assert.ok(Number(r.headers['retry-after']) >= 59);
  const bad = await emu.post('/_emu/reset', { ...seed(), secondary_limits: { windows: [{ count: 0, seconds: 60 }] } }, { token: null });
  assert.equal(bad.status, 400);
});

test('the hourly request cap: 403 with x-ratelimit-remaining 0 and the reset; reset_seconds shrinks the hour', async () => {
  emu = await start({ ...seed(), rate_limit: { core: { limit: 3, remaining: 3, reset_seconds: 2 }, graphql: { limit: 2, reset_seconds: 2 } } });
  const t0 = Math.floor(Date.now() / 1000);
  for (let n = 0; n < 3; n++) assert.equal((await emu.get('/repos/acme/widgets/issues/9')).status, 200);
  const r = await emu.get('/repos/acme/widgets/issues/9');
  assert.equal(r.status, 403);
  assert.equal(r.json.message, 'API rate limit exceeded for user ID 1004.');
  assert.equal(r.headers['x-ratelimit-limit'], '3');
  assert.equal(r.headers['x-ratelimit-remaining'], '0');
  assert.equal(r.headers['x-ratelimit-used'], '3');
  const reset = Number(r.headers['x-ratelimit-reset']);
  assert.ok(reset >= t0 + 1 && reset <= t0 + 3, `${reset} vs ${t0}`);
  assert.equal(r.headers['retry-after'], undefined);
  // GraphQL: its own budget, RATE_LIMITED in HTTP 200.
  assert.equal((await emu.gql('{ viewer { login } }')).status, 200);
  assert.equal((await emu.gql('{ viewer { login } }')).status, 200);
  const g = await emu.gql('{ viewer { login } }');
  assert.equal(g.status, 200);
  assert.equal(g.json.errors[0].type, 'RATE_LIMITED');
  assert.equal(g.headers['x-ratelimit-remaining'], '0');
  // The window ends at the reset and the budget is whole again.
  await new Promise((res) => setTimeout(res, Math.max(0, reset * 1000 - Date.now()) + 100));
  const after = await emu.get('/repos/acme/widgets/issues/9');
  assert.equal(after.status, 200);
  assert.equal(after.headers['x-ratelimit-remaining'], '2');
  assert.deepEqual((await emu.state()).rate_limit.core, { limit: 3, remaining: 3, reset_seconds: 2 });
});
