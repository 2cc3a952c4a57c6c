'use strict';
// The REST operations pm-bot uses, against the state, with GitHub's limits.
// Every answer of a modelled operation is also checked against the
// response schema of GitHub's description.

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, issueOf } = require('./helpers');

let emu;
beforeEach(async () => { emu = await start(); });
afterEach(() => emu.close());

function fits(operationId, r) {
  const errors = emu.emu.api.validateResponse(operationId, r.status, r.json);
  assert.deepEqual(errors, [], `${operationId} ${r.status} answer does not fit GitHub's schema`);
}

async function newIssue(repo, title, extra) {
  const r = await emu.post(`/repos/${repo}/issues`, { title, ...extra });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

test('list issues: open only by default, all with state=all, newest first', async () => {
  const open = await emu.get('/repos/acme/widgets/issues');
  assert.equal(open.status, 200);
  fits('issues/list-for-repo', open);
  assert.deepEqual(open.json.map((i) => i.number), [10, 9]);
  const all = await emu.get('/repos/acme/widgets/issues?state=all&direction=asc');
  assert.deepEqual(all.json.map((i) => i.number), [2, 9, 10]);
  const closed = await emu.get('/repos/acme/widgets/issues?state=closed');
  assert.deepEqual(closed.json.map((i) => i.number), [2]);
});

test('list issues filters by labels (all must match) and creator', async () => {
  const r = await emu.get('/repos/acme/widgets/issues?state=all&labels=type:task,prio:P1');
  assert.deepEqual(r.json.map((i) => i.number), [10]);
  const c = await emu.get('/repos/acme/widgets/issues?state=all&creator=octocat');
  assert.deepEqual(c.json.map((i) => i.number), [2]);
});

test('list issues paginates with Link headers that reach every issue once', async () => {
  for (let i = 0; i < 7; i++) await newIssue('acme/gadgets', `g${i}`);
  const seen = [];
  let next = '/repos/acme/gadgets/issues?state=all&per_page=3';
  const rels = [];
  while (next) {
    const r = await emu.get(next);
    assert.equal(r.status, 200);
    seen.push(...r.json.map((i) => i.number));
    const link = r.headers.link || '';
    rels.push(link.match(/rel="(\w+)"/g).map((x) => x.slice(5, -1)).join(','));
    const m = /<([^>]+)>; rel="next"/.exec(link);
    next = m ? new URL(m[1]).pathname + new URL(m[1]).search : null;
    if (m) assert.equal(new URL(m[1]).origin, emu.base);
  }
  assert.deepEqual(seen, [8, 7, 6, 5, 4, 3, 2, 1]);
  assert.deepEqual(rels, ['next,last', 'prev,next,last,first', 'prev,first']);
});

test('a page past the end is an empty array with prev and first links', async () => {
  const r = await emu.get('/repos/acme/widgets/issues?state=all&per_page=2&page=5');
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, []);
  assert.match(r.headers.link, /rel="prev"/);
});

test('get issue answers the full issue; an empty body reads as null', async () => {
  const r = await emu.get('/repos/acme/widgets/issues/2');
  assert.equal(r.status, 200);
  fits('issues/get', r);
  assert.equal(r.json.id, 1000002);
  assert.equal(r.json.node_id, 'I_D0JC');
  assert.equal(r.json.body, null);
  assert.equal(r.json.state, 'closed');
  assert.equal(r.json.user.login, 'octocat');
  const ten = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal(ten.json.user.login, 'github-actions[bot]');
  assert.equal(ten.json.user.type, 'Bot');
  assert.equal(ten.json.parent_issue_url, `${emu.base}/repos/acme/widgets/issues/2`);
  assert.equal(ten.json.issue_dependencies_summary.total_blocked_by, 3);
  assert.equal((await emu.get('/repos/acme/widgets/issues/99')).status, 404);
});

test('create issue: next number, database id from the counter, derived node id, caller as author', async () => {
  const r = await emu.post('/repos/acme/widgets/issues', { title: 'Task: new', body: 'b', labels: ['type:task', { name: 'area:ui' }] });
  assert.equal(r.status, 201);
  fits('issues/create', r);
  assert.equal(r.json.number, 11);
  assert.equal(r.json.id, 1000021);
  assert.equal(r.json.node_id, 'I_D0JV');
  assert.equal(r.json.user.login, 'alice');
  assert.equal(r.headers.location, `${emu.base}/repos/acme/widgets/issues/11`);
  assert.deepEqual(r.json.labels.map((l) => l.name), ['type:task', 'area:ui']);
  assert.equal(r.json.updated_at, '2026-11-03T00:00:00Z');
  const second = await newIssue('acme/widgets', 'another');
  assert.equal(second.id, 1000022);
  assert.equal(second.updated_at, '2026-11-03T00:00:01Z', 'stamps strictly increase');
  const st = await emu.state();
  const eleven = issueOf(st, 'acme/widgets', 11);
  assert.equal(eleven.author, 'alice');
  assert.equal(eleven.author_type, 'User');
  assert.equal(st.state.extra.next_database_id, 1000023);
});

test('an integration token creates issues as a bot', async () => {
  const r = await emu.post('/repos/acme/widgets/issues', { title: 'from actions' }, { token: 'tok-actions' });
  assert.equal(r.status, 201);
  assert.equal(r.json.user.login, 'github-actions[bot]');
  assert.equal(r.json.user.type, 'Bot');
  const st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 11).author_type, 'Bot');
});

test('title is limited to 256 characters and must not be empty', async () => {
  assert.equal((await emu.post('/repos/acme/widgets/issues', { title: 'é'.repeat(256) })).status, 201);
  const long = await emu.post('/repos/acme/widgets/issues', { title: 'x'.repeat(257) });
  assert.equal(long.status, 422);
  fits('issues/create', long);
  assert.equal(long.json.message, 'Validation Failed');
  assert.deepEqual(long.json.errors[0], { resource: 'Issue', code: 'custom', field: 'title', message: 'title is too long (maximum is 256 characters)' });
  const empty = await emu.post('/repos/acme/widgets/issues', { title: '' });
  assert.equal(empty.status, 422);
  assert.equal(empty.json.errors[0].code, 'missing_field');
});

test('body is limited to 65,536 characters, on create, update and comments', async () => {
  assert.equal((await emu.post('/repos/acme/widgets/issues', { title: 't', body: 'x'.repeat(65536) })).status, 201);
  const create = await emu.post('/repos/acme/widgets/issues', { title: 't', body: 'x'.repeat(65537) });
  assert.equal(create.status, 422);
  assert.equal(create.json.errors[0].field, 'body');
  const update = await emu.patch('/repos/acme/widgets/issues/9', { body: 'y'.repeat(65537) });
  assert.equal(update.status, 422);
  const comment = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'z'.repeat(65537) });
  assert.equal(comment.status, 422);
  assert.equal(comment.json.errors[0].resource, 'IssueComment');
  const st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 9).body, '');
});

test('label names are limited to 50 characters', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/labels', { labels: ['x'.repeat(51)] });
  assert.equal(r.status, 422);
  assert.equal(r.json.errors[0].resource, 'Label');
  assert.equal((await emu.post('/repos/acme/widgets/issues/9/labels', { labels: ['x'.repeat(50)] })).status, 200);
});

test('update issue changes title, body, state and labels, and stamps updated_at once', async () => {
  const r = await emu.patch('/repos/acme/widgets/issues/9', { title: 'Renamed', body: 'New body', state: 'closed', labels: ['b', 'a'] });
  assert.equal(r.status, 200);
  fits('issues/update', r);
  assert.equal(r.json.title, 'Renamed');
  assert.equal(r.json.state, 'closed');
  assert.equal(r.json.closed_at, '2026-11-03T00:00:00Z');
  const st = await emu.state();
  const nine = issueOf(st, 'acme/widgets', 9);
  assert.equal(nine.body, 'New body');
  assert.deepEqual(nine.labels, ['a', 'b']);
  assert.equal(nine.updated_at, '2026-11-03T00:00:00Z');
});

test('an update that changes nothing leaves updated_at alone', async () => {
  const r = await emu.patch('/repos/acme/widgets/issues/9', { title: 'Task: calibrate' });
  assert.equal(r.status, 200);
  assert.equal(r.json.updated_at, '2026-11-02T10:00:02.250Z');
});

test('add labels keeps existing ones once and reuses the repository spelling', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/labels', { labels: ['TYPE:TASK', 'prio:p1', 'new'] });
  assert.equal(r.status, 200);
  fits('issues/add-labels', r);
  assert.deepEqual(r.json.map((l) => l.name), ['type:task', 'prio:P1', 'new']);
  const objs = await emu.post('/repos/acme/widgets/issues/9/labels', { labels: [{ name: 'other' }] });
  assert.equal(objs.status, 200, 'label objects with a name are accepted too');
  assert.equal(objs.json.length, 4);
  const bare = await emu.post('/repos/acme/widgets/issues/9/labels', ['x']);
  assert.equal(bare.status, 422, 'the description only documents the object form');
  const none = await emu.post('/repos/acme/widgets/issues/9/labels', { labels: [] });
  assert.equal(none.status, 422, 'labels needs at least one item');
});

test('remove label: present -> remaining labels; absent -> 404 Label does not exist', async () => {
  const r = await emu.del('/repos/acme/widgets/issues/10/labels/prio%3AP1');
  assert.equal(r.status, 200);
  fits('issues/remove-label', r);
  assert.deepEqual(r.json.map((l) => l.name), ['type:task', 'area:ui']);
  const again = await emu.del('/repos/acme/widgets/issues/10/labels/prio%3AP1');
  assert.equal(again.status, 404);
  assert.equal(again.json.message, 'Label does not exist');
});

test('add sub-issue by database id answers 201 with the parent and sets the parent', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/2/sub_issues', { sub_issue_id: 1000009 });
  assert.equal(r.status, 201);
  fits('issues/add-sub-issue', r);
  assert.equal(r.json.number, 2);
  assert.equal(r.json.sub_issues_summary.total, 2);
  const list = await emu.get('/repos/acme/widgets/issues/2/sub_issues');
  fits('issues/list-sub-issues', list);
  assert.deepEqual(list.json.map((i) => i.number), [10, 9]);
  const parent = await emu.get('/repos/acme/widgets/issues/9/parent');
  assert.equal(parent.json.number, 2);
  const st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 9).parent, 'acme/widgets#2');
});

test('a second parent is refused with 422 unless replace_parent is set', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 1000010 });
  assert.equal(r.status, 422);
  fits('issues/add-sub-issue', r);
  assert.match(r.json.errors[0].message, /only have one parent/);
  let st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 10).parent, 'acme/widgets#2');
  const moved = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 1000010, replace_parent: true });
  assert.equal(moved.status, 201);
  st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 10).parent, 'acme/widgets#9');
  const old = await emu.get('/repos/acme/widgets/issues/2/sub_issues');
  assert.deepEqual(old.json, []);
});

test('adding the same sub-issue twice is refused', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/2/sub_issues', { sub_issue_id: 1000010 });
  assert.equal(r.status, 422);
});

test('sub-issues: a parent takes at most 100', async () => {
  const ids = [];
  for (let i = 0; i < 101; i++) ids.push((await newIssue('acme/gadgets', `child ${i}`)).id);
  for (let i = 0; i < 100; i++) {
    const r = await emu.post('/repos/acme/gadgets/issues/1/sub_issues', { sub_issue_id: ids[i] });
    assert.equal(r.status, 201);
  }
  const over = await emu.post('/repos/acme/gadgets/issues/1/sub_issues', { sub_issue_id: ids[100] });
  assert.equal(over.status, 422);
  assert.match(over.json.errors[0].message, /100 sub-issues/);
});

test('sub-issues nest at most 8 levels deep, counting the root as level 1', async () => {
  const chain = [];
  for (let i = 0; i < 9; i++) chain.push(await newIssue('acme/gadgets', `level ${i + 1}`));
  for (let i = 1; i < 8; i++) {
    const r = await emu.post(`/repos/acme/gadgets/issues/${chain[i - 1].number}/sub_issues`, { sub_issue_id: chain[i].id });
    assert.equal(r.status, 201, `level ${i + 1}`);
  }
  const ninth = await emu.post(`/repos/acme/gadgets/issues/${chain[7].number}/sub_issues`, { sub_issue_id: chain[8].id });
  assert.equal(ninth.status, 422);
  assert.match(ninth.json.errors[0].message, /8 levels/);
  // A subtree moved under a deep node counts its own height too.
  const a = await newIssue('acme/gadgets', 'subtree root');
  const b = await newIssue('acme/gadgets', 'subtree child');
  assert.equal((await emu.post(`/repos/acme/gadgets/issues/${a.number}/sub_issues`, { sub_issue_id: b.id })).status, 201);
  const deep = await emu.post(`/repos/acme/gadgets/issues/${chain[6].number}/sub_issues`, { sub_issue_id: a.id });
  assert.equal(deep.status, 422);
});

test('sub-issues refuse cycles, self links and other owners', async () => {
  const cycle = await emu.post('/repos/acme/widgets/issues/10/sub_issues', { sub_issue_id: 1000002 });
  assert.equal(cycle.status, 422);
  const self = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 1000009 });
  assert.equal(self.status, 422);
  const other = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 1000020 });
  assert.equal(other.status, 422);
  assert.match(other.json.errors[0].message, /same repository owner/);
  const cross = await emu.post('/repos/acme/widgets/issues/9/sub_issues', { sub_issue_id: 1000001 });
  assert.equal(cross.status, 201, 'another repository of the same owner is fine');
});

test('remove sub-issue clears the parent; removing a non-child answers 404', async () => {
  const r = await emu.del('/repos/acme/widgets/issues/2/sub_issue', { sub_issue_id: 1000010 });
  assert.equal(r.status, 200);
  fits('issues/remove-sub-issue', r);
  const st = await emu.state();
  assert.equal(issueOf(st, 'acme/widgets', 10).parent, null);
  const again = await emu.del('/repos/acme/widgets/issues/2/sub_issue', { sub_issue_id: 1000010 });
  assert.equal(again.status, 404);
  assert.equal((await emu.get('/repos/acme/widgets/issues/10/parent')).status, 404);
});

test('dependencies: add by database id, list both ways, remove', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/dependencies/blocked_by', { issue_id: 1000001 });
  assert.equal(r.status, 201);
  fits('issues/add-blocked-by-dependency', r);
  assert.equal(r.json.id, 1000001, 'answers the blocking issue');
  const list = await emu.get('/repos/acme/widgets/issues/9/dependencies/blocked_by');
  fits('issues/list-dependencies-blocked-by', list);
  assert.deepEqual(list.json.map((i) => i.id), [1000001]);
  const blocking = await emu.get('/repos/acme/gadgets/issues/1/dependencies/blocking');
  fits('issues/list-dependencies-blocking', blocking);
  assert.deepEqual(blocking.json.map((i) => i.number).sort(), [10, 9]);
  const dup = await emu.post('/repos/acme/widgets/issues/9/dependencies/blocked_by', { issue_id: 1000001 });
  assert.equal(dup.status, 422);
  const del = await emu.del('/repos/acme/widgets/issues/9/dependencies/blocked_by/1000001');
  assert.equal(del.status, 200);
  fits('issues/remove-dependency-blocked-by', del);
  const gone = await emu.del('/repos/acme/widgets/issues/9/dependencies/blocked_by/1000001');
  assert.equal(gone.status, 404);
  const st = await emu.state();
  assert.deepEqual(issueOf(st, 'acme/widgets', 9).blocked_by, []);
  assert.deepEqual(issueOf(st, 'acme/widgets', 10).blocked_by, ['acme/gadgets#1', 'acme/widgets#2', 'acme/widgets#9']);
});

test('dependencies: an issue cannot block itself', async () => {
  const r = await emu.post('/repos/acme/widgets/issues/9/dependencies/blocked_by', { issue_id: 1000009 });
  assert.equal(r.status, 422);
});

test('dependencies: at most 50 blockers per issue and 50 blocked per blocker', async () => {
  const made = [];
  for (let i = 0; i < 52; i++) made.push(await newIssue('acme/gadgets', `dep ${i}`));
  for (let i = 0; i < 50; i++) {
    const r = await emu.post(`/repos/acme/gadgets/issues/${made[0].number}/dependencies/blocked_by`, { issue_id: made[i + 1].id });
    assert.equal(r.status, 201);
  }
  const over = await emu.post(`/repos/acme/gadgets/issues/${made[0].number}/dependencies/blocked_by`, { issue_id: made[51].id });
  assert.equal(over.status, 422);
  assert.match(over.json.errors[0].message, /50/);
  // made[51] blocks 49 others plus one already blocked issue = 50, then no more.
  for (let i = 1; i <= 50; i++) {
    const r = await emu.post(`/repos/acme/gadgets/issues/${made[i].number}/dependencies/blocked_by`, { issue_id: made[51].id });
    assert.equal(r.status, 201, `blocked ${i}`);
  }
  const blockerOver = await emu.post('/repos/acme/gadgets/issues/1/dependencies/blocked_by', { issue_id: made[51].id });
  assert.equal(blockerOver.status, 422);
});

test('comments: create, get, update, list with since; reactions once per user and content', async () => {
  const c = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'plan: 3 changes' });
  assert.equal(c.status, 201);
  fits('issues/create-comment', c);
  assert.equal(c.json.id, 3000000003);
  assert.equal(c.json.node_id, 'IC_stBeAw');
  const u = await emu.patch(`/repos/acme/widgets/issues/comments/${c.json.id}`, { body: 'plan: 4 changes' });
  assert.equal(u.status, 200);
  fits('issues/update-comment', u);
  assert.equal(u.json.body, 'plan: 4 changes');
  const g = await emu.get(`/repos/acme/widgets/issues/comments/${c.json.id}`);
  fits('issues/get-comment', g);
  assert.equal(g.json.body, 'plan: 4 changes');
  const list = await emu.get('/repos/acme/widgets/issues/10/comments');
  fits('issues/list-comments', list);
  assert.deepEqual(list.json.map((x) => x.body), ['/approve']);
  assert.equal(list.json[0].reactions['+1'], 1);
  const since = await emu.get('/repos/acme/widgets/issues/9/comments?since=2026-11-03T00:00:01Z');
  assert.deepEqual(since.json.map((x) => x.id), [c.json.id]);
  const r1 = await emu.post(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions`, { content: 'rocket' });
  assert.equal(r1.status, 201);
  fits('reactions/create-for-issue-comment', r1);
  const r2 = await emu.post(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions`, { content: 'rocket' });
  assert.equal(r2.status, 200);
  assert.equal(r2.json.id, r1.json.id);
  const bad = await emu.post(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions`, { content: 'thumbsup' });
  assert.equal(bad.status, 422);
  const rl = await emu.get(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions?content=rocket`);
  fits('reactions/list-for-issue-comment', rl);
  assert.equal(rl.json.length, 1);
  const del = await emu.del(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions/${r1.json.id}`);
  assert.equal(del.status, 204);
  assert.equal((await emu.get(`/repos/acme/widgets/issues/comments/${c.json.id}/reactions`)).json.length, 0);
});

test('a comment is only edited by its author or a writer', async () => {
  const c = await emu.post('/repos/acme/widgets/issues/9/comments', { body: 'mine' });
  const r = await emu.patch(`/repos/acme/widgets/issues/comments/${c.json.id}`, { body: 'yours' }, { token: 'tok-bob' });
  assert.equal(r.status, 403);
  const other = await emu.get(`/repos/acme/gadgets/issues/comments/${c.json.id}`);
  assert.equal(other.status, 404, 'a comment is found only under its own repository');
});

test('collaborator permission: role, legacy permission, unknown user 404', async () => {
  const cases = [['alice', 'admin', 'admin'], ['bob', 'read', 'read'], ['mallory', 'write', 'maintain'], ['dave', 'none', 'none'], ['acme', null, null]];
  for (const [login, permission, role] of cases) {
    const r = await emu.get(`/repos/acme/widgets/collaborators/${login}/permission`);
    if (permission === null) {
      assert.equal(r.status, 404, login);
      continue;
    }
    assert.equal(r.status, 200, login);
    fits('repos/get-collaborator-permission-level', r);
    assert.equal(r.json.permission, permission, login);
    assert.equal(r.json.role_name, role, login);
  }
  assert.equal((await emu.get('/repos/acme/widgets/collaborators/nobody-at-all/permission')).status, 404);
});

test('GET /user answers the token owner', async () => {
  const r = await emu.get('/user', { token: 'tok-carol' });
  assert.equal(r.status, 200);
  fits('users/get-authenticated', r);
  assert.equal(r.json.login, 'carol');
});

test('rate-limit headers count requests; /rate_limit is free', async () => {
  const a = await emu.get('/repos/acme/widgets/issues/10');
  const b = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal(Number(a.headers['x-ratelimit-remaining']) - 1, Number(b.headers['x-ratelimit-remaining']));
  assert.equal(b.headers['x-ratelimit-resource'], 'core');
  assert.equal(b.headers['x-ratelimit-limit'], '5000');
  assert.match(b.headers['x-ratelimit-reset'], /^\d{10}$/);
  const rl = await emu.get('/rate_limit');
  fits('rate-limit/get', rl);
  assert.equal(rl.json.resources.core.remaining, Number(b.headers['x-ratelimit-remaining']));
  const rl2 = await emu.get('/rate_limit');
  assert.equal(rl2.json.resources.core.remaining, rl.json.resources.core.remaining);
});

test('ETag: an unchanged GET with If-None-Match answers 304 without a body or a rate-limit charge', async () => {
  const first = await emu.get('/repos/acme/widgets/issues?state=all');
  const etag = first.headers.etag;
  assert.match(etag, /^W\/"[0-9a-f]{64}"$/);
  const again = await emu.get('/repos/acme/widgets/issues?state=all', { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
  assert.equal(again.text, '');
  assert.equal(again.headers.etag, etag);
  assert.equal(again.headers['x-ratelimit-remaining'], first.headers['x-ratelimit-remaining']);
  await emu.patch('/repos/acme/widgets/issues/9', { title: 'changed' });
  const changed = await emu.get('/repos/acme/widgets/issues?state=all', { headers: { 'if-none-match': etag } });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers.etag, etag);
  const log = await emu.log();
  assert.deepEqual(log.requests.filter((e) => e.not_modified).map((e) => e.status), [304]);
});

test('ETags differ between viewers of the same resource', async () => {
  const a = await emu.get('/repos/acme/widgets/issues/10', { token: 'tok-alice' });
  const c = await emu.get('/repos/acme/widgets/issues/10', { token: 'tok-carol', headers: { 'if-none-match': a.headers.etag } });
  assert.equal(c.status, 200);
});

test('an exhausted primary rate limit answers 403 with remaining 0', async () => {
  await emu.close();
  const s = require('./helpers').seed();
  s.rate_limit = { core: { limit: 5000, remaining: 1 } };
  emu = await start(s);
  assert.equal((await emu.get('/repos/acme/widgets/issues/10')).status, 200);
  const r = await emu.get('/repos/acme/widgets/issues/10');
  assert.equal(r.status, 403);
  assert.match(r.json.message, /API rate limit exceeded/);
  assert.equal(r.headers['x-ratelimit-remaining'], '0');
});
