'use strict';
// Pull requests as `pm-bot action` meets them: pulls/get, the issue side of
// a pull request (issues/get, comments, reactions, labels), the number space
// they share with issues, pushes through the control endpoint, and their
// place in the state dump.

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed, request, issueOf } = require('./helpers');

const HEAD12 = '1111111111111111111111111111111111111111';
const BASE = '2222222222222222222222222222222222222222';
const HEAD13 = '3333333333333333333333333333333333333333';
const PUSHED = 'abcdef0123456789abcdef0123456789abcdef01';

let emu;
beforeEach(async () => { emu = await start(seed('seed-action.json')); });
afterEach(() => emu.close());

function fits(operationId, r) {
  const errors = emu.emu.api.validateResponse(operationId, r.status, r.json);
  assert.deepEqual(errors, [], `${operationId} ${r.status} answer does not fit GitHub's schema`);
}

async function reset(s) {
  return request(emu.port, 'POST', '/_emu/reset', { token: null, body: s });
}

function pushHead(p, body) {
  return request(emu.port, 'POST', `/_emu/pulls/${p}/head`, { token: null, body });
}

test('pulls/get answers a same-repository pull request with head and base', async () => {
  const r = await emu.get('/repos/acme/widgets/pulls/12');
  assert.equal(r.status, 200, r.text);
  fits('pulls/get', r);
  const p = r.json;
  assert.equal(p.number, 12);
  assert.equal(p.state, 'open');
  assert.equal(p.title, 'Plan: gauges report');
  assert.equal(p.body, 'Adds docs/reports/gauges.md');
  assert.equal(p.user.login, 'alice');
  assert.equal(p.html_url, 'https://github.com/acme/widgets/pull/12');
  assert.equal(p.url, `${emu.base}/repos/acme/widgets/pulls/12`);
  assert.equal(p.issue_url, `${emu.base}/repos/acme/widgets/issues/12`);
  assert.equal(p.head.sha, HEAD12);
  assert.equal(p.head.ref, 'feature');
  assert.equal(p.head.label, 'acme:feature');
  assert.equal(p.head.repo.full_name, 'acme/widgets');
  assert.equal(p.head.repo.fork, false);
  assert.equal(p.base.ref, 'main');
  assert.equal(p.base.sha, BASE);
  assert.equal(p.base.repo.full_name, 'acme/widgets');
  assert.equal(p.base.repo.default_branch, 'main');
  assert.equal(p.merged, false);
  assert.equal(p.comments, 2, 'the seeded plan comment and the command');
  assert.match(p.node_id, /^PR_/);
});

test('a fork pull request names the fork as head repository and the base repository apart', async () => {
  const r = await emu.get('/repos/acme/widgets/pulls/13');
  assert.equal(r.status, 200);
  fits('pulls/get', r);
  const p = r.json;
  assert.equal(p.head.repo.full_name, 'eve/widgets');
  assert.equal(p.head.repo.fork, true);
  assert.equal(p.head.repo.owner.login, 'eve');
  assert.equal(p.head.user.login, 'eve');
  assert.equal(p.head.label, 'eve:patch-1');
  assert.equal(p.head.sha, HEAD13);
  assert.equal(p.base.repo.full_name, 'acme/widgets');
  assert.equal(p.base.repo.fork, false);
  assert.equal(p.base.user.login, 'acme');
  assert.equal(p.base.user.type, 'Organization');
  assert.notEqual(p.head.repo.id, p.base.repo.id);
  assert.equal(p.body, null, 'a pull request without a body reads as null');
  const fork = await emu.get('/repos/eve/widgets/pulls/13');
  assert.equal(fork.status, 404, 'the fork is not a repository of the world');
});

test('pulls/get on an issue number, or a number nobody has, answers 404', async () => {
  const issue = await emu.get('/repos/acme/widgets/pulls/10');
  assert.equal(issue.status, 404);
  fits('pulls/get', issue);
  assert.equal((await emu.get('/repos/acme/widgets/pulls/99')).status, 404);
  assert.equal((await emu.get('/repos/acme/widgets/pulls/12', { token: 'tok-dave' })).status, 404, 'no permission, no pull request');
});

test('a pull request and its issue side have different database ids and one node id', async () => {
  const pull = (await emu.get('/repos/acme/widgets/pulls/12')).json;
  const issue = (await emu.get('/repos/acme/widgets/issues/12')).json;
  assert.notEqual(pull.id, issue.id);
  assert.equal(pull.node_id, issue.node_id);
  const st = await emu.state();
  const dumped = st.pulls.find((p) => p.number === 12);
  assert.equal(dumped.id, pull.id);
  assert.equal(dumped.issue_id, issue.id);
});

test('issues/get on a pull request number answers the issue side with a pull_request object', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/12');
  assert.equal(r.status, 200);
  fits('issues/get', r);
  assert.equal(r.json.number, 12);
  assert.equal(r.json.html_url, 'https://github.com/acme/widgets/pull/12');
  assert.deepEqual(r.json.pull_request, {
    url: `${emu.base}/repos/acme/widgets/pulls/12`,
    html_url: 'https://github.com/acme/widgets/pull/12',
    diff_url: 'https://github.com/acme/widgets/pull/12.diff',
    patch_url: 'https://github.com/acme/widgets/pull/12.patch',
    merged_at: null,
  });
  const plain = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal('pull_request' in plain.json, false, 'an issue has no pull_request');
});

test('issues/list-for-repo lists pull requests with pull_request, newest first', async () => {
  const r = await emu.get('/repos/acme/widgets/issues');
  assert.equal(r.status, 200);
  fits('issues/list-for-repo', r);
  assert.deepEqual(r.json.map((i) => [i.number, 'pull_request' in i]), [[13, true], [12, true], [10, false], [9, false]]);
  const byEve = await emu.get('/repos/acme/widgets/issues?creator=eve');
  assert.deepEqual(byEve.json.map((i) => i.number), [13]);
});

test('GraphQL repository.issues does not list pull requests, and issue(number) does not find one', async () => {
  const r = await emu.gql(`{ repository(owner: "acme", name: "widgets") {
    issues(first: 100, states: [OPEN, CLOSED]) { totalCount nodes { number } } } }`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.data.repository.issues.nodes.map((i) => i.number), [2, 9, 10]);
  assert.equal(r.json.data.repository.issues.totalCount, 3);
  const one = await emu.gql('{ repository(owner: "acme", name: "widgets") { issue(number: 12) { title } } }');
  assert.equal(one.json.errors[0].type, 'NOT_FOUND');
  assert.equal(one.json.errors[0].message, 'Could not resolve to an Issue with the number of 12.');
});

test('a pull request\'s node id resolves to a PullRequest; its fields are not modelled', async () => {
  const id = (await emu.get('/repos/acme/widgets/pulls/12')).json.node_id;
  const r = await emu.gql('query($id: ID!) { node(id: $id) { __typename id } }', { id });
  assert.deepEqual(r.json.data.node, { __typename: 'PullRequest', id });
  const title = await emu.gql('query($id: ID!) { node(id: $id) { ... on PullRequest { title } } }', { id });
  assert.equal(title.status, 501);
  assert.match(title.json.errors[0].message, /PullRequest\.title/);
});

test('adding a pull request to the board answers 501 and changes nothing', async () => {
  const id = (await emu.get('/repos/acme/widgets/pulls/12')).json.node_id;
  const r = await emu.gql('mutation($c: ID!) { addProjectV2ItemById(input: {projectId: "PVT_kwDOAA", contentId: $c}) { item { id } } }', { c: id });
  assert.equal(r.status, 501);
  assert.equal(r.json.errors[0].type, 'NOT_IMPLEMENTED');
  const st = await emu.state();
  assert.equal(st.state.project.items.length, 3);
});

test('comments on a pull request: create, list, edit; reactions on them', async () => {
  const c = await emu.post('/repos/acme/widgets/issues/12/comments', { body: '/pm-bot apply ' + 'a'.repeat(64) });
  assert.equal(c.status, 201);
  fits('issues/create-comment', c);
  assert.equal(c.json.html_url, `https://github.com/acme/widgets/pull/12#issuecomment-${c.json.id}`);
  assert.equal(c.json.issue_url, `${emu.base}/repos/acme/widgets/issues/12`);
  const list = await emu.get('/repos/acme/widgets/issues/12/comments');
  fits('issues/list-comments', list);
  assert.deepEqual(list.json.map((x) => x.user.login), ['github-actions[bot]', 'alice', 'alice']);
  const edit = await emu.patch(`/repos/acme/widgets/issues/comments/${c.json.id}`, { body: 'edited' });
  assert.equal(edit.status, 200);
  const eyes = await emu.post(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions`, { content: 'eyes' }, { token: 'tok-actions' });
  assert.equal(eyes.status, 201);
  fits('reactions/create-for-issue-comment', eyes);
  const reactions = await emu.get(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions`);
  assert.deepEqual(reactions.json.map((x) => [x.user.login, x.content]), [['github-actions[bot]', 'eyes']]);
  const st = await emu.state();
  assert.deepEqual(st.comments.filter((x) => x.issue === 'acme/widgets#12').map((x) => x.body).slice(-1), ['edited']);
});

test('labels and state of a pull request change through the issue endpoints', async () => {
  const l = await emu.post('/repos/acme/widgets/issues/12/labels', { labels: ['pm-bot'] });
  assert.equal(l.status, 200);
  const closed = await emu.patch('/repos/acme/widgets/issues/12', { state: 'closed' });
  assert.equal(closed.status, 200);
  fits('issues/update', closed);
  assert.equal(closed.json.state_reason, null, 'a pull request has no state reason');
  const p = await emu.get('/repos/acme/widgets/pulls/12');
  assert.equal(p.json.state, 'closed');
  assert.equal(p.json.closed_at, closed.json.closed_at);
  assert.deepEqual(p.json.labels.map((x) => x.name), ['pm-bot']);
  fits('pulls/get', p);
});

test('sub-issues and dependencies of a pull request are not modelled: 501', async () => {
  const cases = [
    ['GET', '/repos/acme/widgets/issues/12/sub_issues', undefined],
    ['POST', '/repos/acme/widgets/issues/12/sub_issues', { sub_issue_id: 1000009 }],
    ['GET', '/repos/acme/widgets/issues/12/parent', undefined],
    ['GET', '/repos/acme/widgets/issues/12/dependencies/blocked_by', undefined],
    ['POST', '/repos/acme/widgets/issues/12/dependencies/blocked_by', { issue_id: 1000009 }],
  ];
  for (const [method, p, body] of cases) {
    const r = await emu.req(method, p, { body });
    assert.equal(r.status, 501, `${method} ${p}`);
  }
  const st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 9).parent, null);
});

test('the issue id of a pull request is no sub-issue id', async () => {
  const issueId = (await emu.get('/repos/acme/widgets/issues/12')).json.id;
  const r = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: issueId });
  assert.equal(r.status, 404);
});

test('issues created later are numbered after issues and pull requests alike', async () => {
  const r = await emu.post('/repos/acme/widgets/issues', { title: 'after the pulls' });
  assert.equal(r.status, 201);
  assert.equal(r.json.number, 14);
  assert.equal(r.json.id, 1000021, 'issue database ids do not count pull requests');
});

test('the numbers of a repository with pull requests only start after them', async () => {
  const s = seed('seed-action.json');
  s.pulls.push({ repo: 'acme/new', number: 5, title: 'first', user: 'alice', state: 'open', head: { sha: HEAD12, ref: 'x' }, base: { sha: BASE, ref: 'main' } });
  assert.equal((await reset(s)).status, 200);
  const r = await emu.post('/repos/acme/new/issues', { title: 'one' });
  assert.equal(r.status, 201);
  assert.equal(r.json.number, 6);
  const p = await emu.get('/repos/acme/new/pulls/5');
  assert.equal(p.json.head.repo.full_name, 'acme/new', 'head.repo defaults to the base repository');
});

test('a seed where a pull request and an issue share a number is refused', async () => {
  const s = seed('seed-action.json');
  s.pulls[0].number = 10;
  const r = await reset(s);
  assert.equal(r.status, 400);
  assert.match(r.json.problems.join('\n'), /acme\/widgets#10 is also an issue/);
  assert.equal((await emu.get('/repos/acme/widgets/pulls/12')).status, 200, 'the old world stays');
});

test('invalid pull request seeds are refused with their problems', async () => {
  const bad = [
    [(s) => { s.pulls[1].number = 12; }, /acme\/widgets#12 listed twice/],
    [(s) => { s.pulls[0].head.sha = 'abc'; }, /pulls\/0\/head\/sha/],
    [(s) => { s.pulls[0].head.sha = HEAD12.toUpperCase().replace(/1/g, 'A'); }, /pulls\/0\/head\/sha/],
    [(s) => { delete s.pulls[0].base; }, /base/],
    [(s) => { s.pulls[0].state = 'merged'; }, /pulls\/0\/state/],
    [(s) => { s.pulls[0].head.repo = 'acme/gadgets'; }, /acme\/gadgets .* not a fork/],
    [(s) => { s.pulls[0].id = 1000009; }, /id 1000009/],
    [(s) => { s.pulls[0].title = 'x'.repeat(257); }, /title of acme\/widgets#12/],
    [(s) => { s.comments.push({ issue: 'acme/widgets#11', user: 'alice', body: 'x' }); }, /acme\/widgets#11 is not in the seed/],
  ];
  for (const [edit, re] of bad) {
    const s = seed('seed-action.json');
    edit(s);
    const r = await reset(s);
    assert.equal(r.status, 400, String(re));
    assert.match(r.json.problems.join('\n'), re);
  }
});

test('POST /_emu/pulls/.../head moves the head like a push and stamps the pull request', async () => {
  const before = (await emu.get('/repos/acme/widgets/pulls/12')).json;
  const r = await pushHead('acme/widgets/12', { sha: PUSHED });
  assert.equal(r.status, 200);
  assert.equal(r.json.moved, true);
  const after = (await emu.get('/repos/acme/widgets/pulls/12')).json;
  assert.equal(after.head.sha, PUSHED);
  assert.equal(after.head.ref, 'feature');
  assert.ok(after.updated_at > before.updated_at, `${after.updated_at} > ${before.updated_at}`);
  const again = await pushHead('acme/widgets/12', { sha: PUSHED });
  assert.equal(again.json.moved, false);
  assert.equal(again.json.updated_at, after.updated_at, 'the same sha changes nothing');
  const st = await emu.state();
  assert.equal(st.pulls.find((p) => p.number === 12).head.sha, PUSHED);
});

test('the head control endpoint refuses unknown pull requests and bad shas', async () => {
  assert.equal((await pushHead('acme/widgets/10', { sha: PUSHED })).status, 404, 'an issue is no pull request');
  assert.equal((await pushHead('acme/widgets/99', { sha: PUSHED })).status, 404);
  assert.equal((await pushHead('nobody/nothing/1', { sha: PUSHED })).status, 404);
  assert.equal((await pushHead('acme/%E0%A4%A/1', { sha: PUSHED })).status, 404, 'a bad escape is no repository');
  for (const body of [{}, { sha: 'abc' }, { sha: PUSHED.toUpperCase() }, { sha: PUSHED, ref: 'x' }, [PUSHED]]) {
    const r = await pushHead('acme/widgets/12', body);
    assert.equal(r.status, 400, JSON.stringify(body));
  }
  assert.equal((await emu.get('/repos/acme/widgets/pulls/12')).json.head.sha, HEAD12);
  const log = await emu.log();
  assert.equal(log.total, 1, 'control requests are not logged');
});

test('the dump keeps pull requests; a reset to it reproduces them exactly', async () => {
  await emu.post('/repos/acme/widgets/issues/13/comments', { body: 'from the fork' }, { token: 'tok-bob' });
  await pushHead('acme/widgets/13', { sha: PUSHED });
  const first = await emu.state();
  assert.deepEqual(first.pulls.map((p) => [p.repo, p.number, p.head.repo]), [['acme/widgets', 12, 'acme/widgets'], ['acme/widgets', 13, 'eve/widgets']]);
  assert.equal(first.state.repositories.find((r) => r.repo === 'acme/widgets').issues.some((i) => i.number >= 12), false,
    'pull requests are not issues of the State');
  const before = (await emu.get('/repos/acme/widgets/pulls/13')).json;
  assert.equal((await reset(first)).status, 200);
  assert.deepEqual(await emu.state(), first);
  assert.deepEqual((await emu.get('/repos/acme/widgets/pulls/13')).json, before);
});

test('same seed and requests give the same pull request bytes', async () => {
  await pushHead('acme/widgets/12', { sha: PUSHED });
  const a = (await emu.get('/repos/acme/widgets/pulls/12')).text;
  const other = await start(seed('seed-action.json'));
  try {
    await request(other.port, 'POST', '/_emu/pulls/acme/widgets/12/head', { token: null, body: { sha: PUSHED } });
    const b = (await other.get('/repos/acme/widgets/pulls/12')).text;
    assert.equal(a.replaceAll(emu.base, 'BASE'), b.replaceAll(other.base, 'BASE'));
  } finally {
    await other.close();
  }
});

test('diff and patch media types of a pull request answer 501', async () => {
  for (const accept of ['application/vnd.github.diff', 'application/vnd.github.v3.patch']) {
    const r = await emu.get('/repos/acme/widgets/pulls/12', { headers: { accept } });
    assert.equal(r.status, 501, accept);
  }
});
