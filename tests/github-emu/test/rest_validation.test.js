'use strict';
// The emulator refuses what GitHub refuses: unknown paths, bad credentials,
// requests that break the OpenAPI description, and ids where numbers go.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { start } = require('./helpers');

let emu;
before(async () => { emu = await start(); });
after(() => emu.close());

test('unknown path answers 404 with GitHub error shape', async () => {
  const r = await emu.get('/repos/acme/widgets/not-a-thing');
  assert.equal(r.status, 404);
  assert.equal(r.json.message, 'Not Found');
  assert.equal(r.json.status, '404');
  assert.match(r.json.documentation_url, /^https:\/\/docs\.github\.com\//);
});

test('a method the path does not document answers 404', async () => {
  const r = await emu.req('PATCH', '/repos/acme/widgets/issues/10/labels', { body: { labels: ['x'] } });
  assert.equal(r.status, 404);
});

test('a non-integer issue number in the path answers 404', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/ten');
  assert.equal(r.status, 404);
});

test('no Authorization header answers 401 Requires authentication', async () => {
  const r = await emu.get('/repos/acme/widgets/issues', { token: null });
  assert.equal(r.status, 401);
  assert.equal(r.json.message, 'Requires authentication');
});

test('an unknown token answers 401 Bad credentials, with either scheme', async () => {
  for (const h of ['Bearer nope', 'token nope', 'Basic Zm9vOmJhcg==']) {
    const r = await emu.get('/repos/acme/widgets/issues', { token: null, headers: { authorization: h } });
    assert.equal(r.status, 401, h);
    assert.equal(r.json.message, 'Bad credentials');
  }
});

test('the "token" scheme is accepted like Bearer', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/10', { token: null, headers: { authorization: 'token tok-alice' } });
  assert.equal(r.status, 200);
  assert.equal(r.json.number, 10);
});

test('a request without User-Agent is refused with 403', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/10', { headers: { 'user-agent': null } });
  assert.equal(r.status, 403);
  assert.match(r.json.message, /User-Agent/);
});

test('an unsupported X-GitHub-Api-Version answers 400; a missing one is accepted', async () => {
  const bad = await emu.get('/repos/acme/widgets/issues/10', { headers: { 'x-github-api-version': '2021-01-01' } });
  assert.equal(bad.status, 400);
  assert.match(bad.json.message, /X-GitHub-Api-Version/);
  const missing = await emu.get('/repos/acme/widgets/issues/10', { headers: { 'x-github-api-version': null } });
  assert.equal(missing.status, 200);
  assert.equal(missing.headers['x-github-api-version-selected'], '2022-11-28');
});

test('a body that is not JSON answers 400 Problems parsing JSON', async () => {
  const r = await emu.post('/repos/acme/widgets/issues', '{"title": ');
  assert.equal(r.status, 400);
  assert.equal(r.json.message, 'Problems parsing JSON');
});

test('create issue without title answers 422 naming the missing field', async () => {
  const r = await emu.post('/repos/acme/widgets/issues', { body: 'no title' });
  assert.equal(r.status, 422);
  assert.match(r.json.message, /^Invalid request\.\n\n"title" wasn't supplied\./);
  assert.equal(r.json.documentation_url, 'https://docs.github.com/rest/issues/issues#create-an-issue');
});

test('create issue without any body answers 422', async () => {
  const r = await emu.req('POST', '/repos/acme/widgets/issues');
  assert.equal(r.status, 422);
  assert.match(r.json.message, /nil is not an object/);
});

test('create issue with a body of the wrong type answers 422', async () => {
  const cases = [
    [{ title: ['a list'] }, /properties\/title/],
    [{ title: 'ok', body: 42 }, /For 'properties\/body', 42 is not a string/],
    [{ title: 'ok', labels: 'bug' }, /properties\/labels/],
    [['title'], /links\/0\/schema/],
  ];
  for (const [body, re] of cases) {
    const r = await emu.post('/repos/acme/widgets/issues', body);
    assert.equal(r.status, 422, JSON.stringify(body));
    assert.match(r.json.message, re);
  }
  const st = await emu.state();
  assert.equal(st.state.repositories.find((x) => x.repo === 'acme/widgets').issues.length, 3, 'nothing was created');
});

test('an integer title is accepted, as the description allows', async () => {
  const r = await emu.post('/repos/acme/gadgets/issues', { title: 1234 });
  assert.equal(r.status, 201);
  assert.equal(r.json.title, '1234');
});

test('sub_issue_id as a string answers 422 before anything happens', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: '1000002' });
  assert.equal(r.status, 422);
  assert.match(r.json.message, /sub_issue_id/);
});

test('sub_issue_id missing answers 422', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { replace_parent: true });
  assert.equal(r.status, 422);
  assert.match(r.json.message, /"sub_issue_id" wasn't supplied/);
});

test('an issue number passed as sub_issue_id answers 404, not a link to another issue', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 2 });
  assert.equal(r.status, 404);
  assert.equal(r.json.documentation_url, 'https://docs.github.com/rest/issues/sub-issues#add-sub-issue');
  const st = await emu.state();
  const nine = st.state.repositories.find((x) => x.repo === 'acme/widgets').issues.find((i) => i.number === 9);
  assert.equal(nine.parent, null);
});

test('an issue number passed as a dependency issue_id answers 404', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/dependencies/blocked_by', { issue_id: 2 });
  assert.equal(r.status, 404);
});

test('an invalid enum in the query answers 422; unknown query parameters are ignored', async () => {
  const bad = await emu.get('/repos/acme/widgets/issues?state=bogus');
  assert.equal(bad.status, 422);
  assert.match(bad.json.message, /state/);
  const unknown = await emu.get('/repos/acme/widgets/issues?frobnicate=1');
  assert.equal(unknown.status, 200);
});

test('per_page above 100 is capped at 100, as GitHub does', async () => {
  const r = await emu.get('/repos/acme/widgets/issues?state=all&per_page=500');
  assert.equal(r.status, 200);
  assert.equal(r.json.length, 3);
  assert.equal(r.headers.link, undefined);
});

test('a repository the token cannot see answers 404', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/10', { token: 'tok-dave' });
  assert.equal(r.status, 404);
  const g = await emu.get('/repos/nobody/nothing/issues', { token: 'tok-alice' });
  assert.equal(g.status, 404);
});

test('a user token without the repo scope cannot see a repository', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/10', { token: 'tok-eve' });
  assert.equal(r.status, 404);
  assert.equal(r.headers['x-accepted-oauth-scopes'], 'repo');
  assert.equal(r.headers['x-oauth-scopes'], 'read:user');
});

test('a token with read access is refused writes with 403', async () => {
  const cases = [
    ['POST', '/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 1000002 }],
    ['POST', '/repos/acme/widgets/issues/9/labels', { labels: ['x'] }],
    ['PATCH', '/repos/acme/widgets/issues/9', { title: 'hijacked' }],
    ['POST', '/repos/acme/widgets/issues/9/dependencies/blocked_by', { issue_id: 1000002 }],
  ];
  for (const [method, p, body] of cases) {
    const r = await emu.req(method, p, { token: 'tok-bob', body });
    assert.equal(r.status, 403, `${method} ${p}`);
    assert.equal(r.json.message, 'Resource not accessible by personal access token');
  }
  const st = await emu.state();
  const nine = st.state.repositories.find((x) => x.repo === 'acme/widgets').issues.find((i) => i.number === 9);
  assert.equal(nine.title, 'Task: calibrate');
  assert.deepEqual(nine.labels, ['type:task']);
});

test('a read-only token may still open issues and comment, as on GitHub', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'me too' }, { token: 'tok-bob' });
  assert.equal(r.status, 201);
  assert.equal(r.json.user.login, 'bob');
});

test('GET /user with an integration token answers 403', async () => {
  const r = await emu.get('/user', { token: 'tok-actions' });
  assert.equal(r.status, 403);
  assert.equal(r.json.message, 'Resource not accessible by integration');
});

test('a valid request the emulator does not model answers 501 with a JSON message', async () => {
  const lock = await emu.put('/repos/acme/widgets/issues/9/lock', { lock_reason: 'spam' });
  assert.equal(lock.status, 501);
  assert.match(lock.json.message, /issues\/lock/);
  const branches = await emu.get('/repos/acme/widgets/branches');
  assert.equal(branches.status, 501);
  assert.match(branches.json.message, /repos\/list-branches/);
  const pulls = await emu.get('/repos/acme/widgets/pulls');
  assert.equal(pulls.status, 501, 'listing pull requests is not modelled, only getting one');
  const param = await emu.get('/repos/acme/widgets/issues?milestone=none');
  assert.equal(param.status, 501);
  assert.match(param.json.message, /milestone/);
  const field = await emu.post('/repos/acme/widgets/issues', { title: 't', assignees: ['alice'] });
  assert.equal(field.status, 501);
  assert.match(field.json.message, /assignees/);
});

test('an invalid request to an unmodelled operation still answers 422, not 501', async () => {
  const r = await emu.put('/repos/acme/widgets/issues/9/lock', { lock_reason: 'because' });
  assert.equal(r.status, 422);
});

test('a media type whose body format is not modelled answers 501', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/10', { headers: { accept: 'application/vnd.github.raw+json' } });
  assert.equal(r.status, 501);
  const plain = await emu.get('/repos/acme/widgets/issues/10', { headers: { accept: 'application/json' } });
  assert.equal(plain.status, 200);
});

test('odd requests get 4xx answers, never a 500', async () => {
  const cases = [
    ['GET', '/', undefined],
    ['GET', '/repos/%E0%A4%A/x/issues', undefined],
    ['GET', '/repos/acme/widgets/issues/%00', undefined],
    ['GET', '/repos/acme/widgets/issues?per_page=-5&page=0', undefined],
    ['GET', '/repos/acme/widgets/issues?since=yesterday', undefined],
    ['POST', '/repos/acme/widgets/issues', 'null'],
    ['POST', '/repos/acme/widgets/issues', '"a string"'],
    ['POST', '/repos/acme/widgets/issues', { title: 't', labels: [{}] }],
    ['POST', '/repos/acme/widgets/issues/9/labels', { labels: [''] }],
    ['PATCH', '/repos/acme/widgets/issues/9', { title: null, labels: null }],
    ['DELETE', '/repos/acme/widgets/issues/9/sub_issue', { sub_issue_id: 99999999999999 }],
    ['POST', '/graphql', '[]'],
    ['POST', '/graphql', { query: 42 }],
    ['POST', '/graphql', { query: '{ viewer { login } }', variables: [1] }],
    ['POST', '/graphql', { query: 'query A { viewer { login } } query B { viewer { id } }' }],
    ['POST', '/graphql', { query: 'subscription { x }' }],
    ['GET', '/graphql', undefined],
  ];
  for (const [method, p, body] of cases) {
    const r = await emu.req(method, p, { body });
    assert.ok(r.status < 500 || r.status === 501, `${method} ${p} ${JSON.stringify(body)} -> ${r.status} ${r.text}`);
  }
  assert.equal((await emu.get('/repos/acme/widgets/issues/10')).status, 200);
});
