'use strict';
// Issue comments as pm-bot's plan comment uses them: the 65,536-character
// limit, pagination with Link headers, the REST shape of a bot author and
// of reactions.

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

const TOO_LONG = {
  resource: 'IssueComment', code: 'unprocessable', field: 'data',
  message: 'Body is too long (maximum is 65536 characters)',
};

test('a comment of 65,536 code points is accepted, one more answers 422 like GitHub', async () => {
  // Astral characters: 65,536 code points are 131,072 UTF-16 units.
  const max = '😀'.repeat(65536);
  const ok = await emu.post('/repos/acme/widgets/issues/12/comments', { body: max }, { token: 'tok-actions' });
  assert.equal(ok.status, 201);
  assert.equal(ok.json.body, max);
  const over = await emu.post('/repos/acme/widgets/issues/12/comments', { body: `${max}x` }, { token: 'tok-actions' });
  assert.equal(over.status, 422);
  fits('issues/create-comment', over);
  assert.equal(over.json.message, 'Validation Failed');
  assert.deepEqual(over.json.errors, [TOO_LONG]);
  assert.equal(over.json.documentation_url, 'https://docs.github.com/rest/issues/comments#create-an-issue-comment');
  const st = await emu.state();
  assert.equal(st.comments.filter((c) => c.issue === 'acme/widgets#12').length, 3, 'only the accepted one was added');
});

test('editing a comment to over 65,536 characters answers 422 and keeps the old body', async () => {
  const c = await emu.post('/repos/acme/widgets/issues/12/comments', { body: 'short' }, { token: 'tok-actions' });
  const r = await emu.patch(`/repos/acme/widgets/issues/comments/${c.json.id}`, { body: 'x'.repeat(65537) }, { token: 'tok-actions' });
  assert.equal(r.status, 422);
  fits('issues/update-comment', r);
  assert.deepEqual(r.json.errors, [TOO_LONG]);
  assert.equal((await emu.get(`/repos/acme/widgets/issues/comments/${c.json.id}`)).json.body, 'short');
  const exact = await emu.patch(`/repos/acme/widgets/issues/comments/${c.json.id}`, { body: 'y'.repeat(65536) }, { token: 'tok-actions' });
  assert.equal(exact.status, 200);
});

test('comments list in creation order, paged by per_page and page with Link headers', async () => {
  for (let i = 0; i < 6; i++) {
    assert.equal((await emu.post('/repos/acme/widgets/issues/12/comments', { body: `c${i}` })).status, 201);
  }
  const bodies = [];
  const rels = [];
  let next = '/repos/acme/widgets/issues/12/comments?per_page=3';
  while (next) {
    const r = await emu.get(next);
    assert.equal(r.status, 200);
    fits('issues/list-comments', r);
    bodies.push(...r.json.map((c) => c.body));
    rels.push((r.headers.link || '').match(/rel="(\w+)"/g).map((x) => x.slice(5, -1)).join(','));
    const m = /<([^>]+)>; rel="next"/.exec(r.headers.link || '');
    next = m ? new URL(m[1]).pathname + new URL(m[1]).search : null;
  }
  assert.equal(bodies.length, 8);
  assert.deepEqual(bodies.slice(2), ['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
  assert.equal(bodies[1], '/pm-bot plan');
  assert.deepEqual(rels, ['next,last', 'prev,next,last,first', 'prev,first']);
  const page2 = await emu.get('/repos/acme/widgets/issues/12/comments?per_page=3&page=2');
  assert.deepEqual(page2.json.map((c) => c.body), ['c1', 'c2', 'c3']);
  assert.match(page2.headers.link, /<[^>]*[?&]page=3[^>]*>; rel="last"/);
  const past = await emu.get('/repos/acme/widgets/issues/12/comments?per_page=3&page=9');
  assert.deepEqual(past.json, []);
  const one = await emu.get('/repos/acme/widgets/issues/10/comments');
  assert.equal(one.headers.link, undefined, 'a single page has no Link header');
});

test('a bot token\'s comment is authored by the bot, with the REST shape of bots', async () => {
  const c = await emu.post('/repos/acme/widgets/issues/12/comments', { body: '<!-- pm-bot:plan {} -->\nplan' }, { token: 'tok-actions' });
  assert.equal(c.status, 201);
  for (const u of [c.json.user, (await emu.get('/repos/acme/widgets/issues/12/comments')).json.at(-1).user]) {
    assert.equal(u.login, 'github-actions[bot]');
    assert.equal(u.type, 'Bot');
    assert.equal(u.id, 41898282);
    assert.equal(u.html_url, 'https://github.com/apps/github-actions');
    assert.match(u.node_id, /^BOT_/);
  }
  const list = await emu.get('/repos/acme/widgets/issues/12/comments');
  assert.deepEqual(list.json.map((x) => [x.user.login, x.user.type]), [
    ['github-actions[bot]', 'Bot'], ['alice', 'User'], ['github-actions[bot]', 'Bot'],
  ]);
  // pm-bot finds its own comments by comparing authors with the viewer.
  const viewer = await emu.gql('{ viewer { login } }', undefined, { token: 'tok-actions' });
  assert.equal(viewer.json.data.viewer.login, c.json.user.login, 'the viewer is named as REST names the author');
});

test('a user token\'s comment is authored by the user', async () => {
  const c = await emu.post('/repos/acme/widgets/issues/12/comments', { body: '/pm-bot apply' }, { token: 'tok-carol' });
  assert.equal(c.json.user.login, 'carol');
  assert.equal(c.json.user.type, 'User');
  assert.equal(c.json.user.html_url, 'https://github.com/carol');
  assert.equal(c.json.author_association, 'COLLABORATOR');
});

test('reactions list each reaction\'s user login and content', async () => {
  const cmd = (await emu.get('/repos/acme/widgets/issues/12/comments')).json[1];
  assert.equal(cmd.reactions.eyes, 1);
  await emu.post(`/repos/acme/widgets/issues/comments/${cmd.id}/reactions`, { content: '+1' }, { token: 'tok-actions' });
  await emu.post(`/repos/acme/widgets/issues/comments/${cmd.id}/reactions`, { content: 'confused' }, { token: 'tok-bob' });
  const r = await emu.get(`/repos/acme/widgets/issues/comments/${cmd.id}/reactions`);
  fits('reactions/list-for-issue-comment', r);
  assert.deepEqual(r.json.map((x) => [x.user.login, x.user.type, x.content]), [
    ['github-actions[bot]', 'Bot', 'eyes'], ['github-actions[bot]', 'Bot', '+1'], ['bob', 'User', 'confused'],
  ]);
  const plusOne = await emu.get(`/repos/acme/widgets/issues/comments/${cmd.id}/reactions?content=%2B1`);
  assert.deepEqual(plusOne.json.map((x) => x.user.login), ['github-actions[bot]']);
  const after = await emu.get(`/repos/acme/widgets/issues/comments/${cmd.id}`);
  assert.equal(after.json.reactions.total_count, 3);
  assert.equal(after.json.reactions['+1'], 1);
});
