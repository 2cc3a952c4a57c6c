'use strict';
// POST /graphql: validation against GitHub's schema, the queries and
// mutations pm-bot needs, GitHub's pagination rules and scope errors.

const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { start, seed } = require('./helpers');

let emu;
beforeEach(async () => { emu = await start(); });
afterEach(() => emu.close());

const ISSUES = `query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    issues(first: 2, after: $after, states: [OPEN, CLOSED], orderBy: {field: CREATED_AT, direction: ASC}) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        id databaseId number title body state updatedAt
        author { login __typename }
        labels(first: 100) { nodes { name } }
        parent { number repository { nameWithOwner } }
        subIssues(first: 100) { totalCount nodes { number } }
        projectItems(first: 10) {
          nodes {
            id
            project { number }
            fieldValues(first: 20) {
              nodes {
                __typename
                ... on ProjectV2ItemFieldSingleSelectValue { name optionId field { ... on ProjectV2SingleSelectField { id name } } }
                ... on ProjectV2ItemFieldTextValue { text field { ... on ProjectV2Field { id name dataType } } }
                ... on ProjectV2ItemFieldNumberValue { number field { ... on ProjectV2Field { name } } }
                ... on ProjectV2ItemFieldDateValue { date field { ... on ProjectV2Field { name } } }
              }
            }
          }
        }
      }
    }
  }
}`;

const PROJECT = `query($org: String!, $n: Int!) {
  organization(login: $org) {
    projectV2(number: $n) {
      id
      fields(first: 100) {
        nodes {
          ... on ProjectV2Field { id name dataType }
          ... on ProjectV2SingleSelectField { id name dataType options { id name } }
        }
      }
      items(first: 100) { totalCount nodes { id content { ... on Issue { number repository { nameWithOwner } } } } }
    }
  }
}`;

async function ok(query, variables, opts) {
  const r = await emu.gql(query, variables, opts);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.errors, undefined, JSON.stringify(r.json.errors));
  return r.json.data;
}

test('issues page by page with cursors, with every field pm-bot reads', async () => {
  const p1 = await ok(ISSUES, { owner: 'acme', name: 'widgets' });
  const c1 = p1.repository.issues;
  assert.equal(c1.totalCount, 3);
  assert.equal(c1.pageInfo.hasNextPage, true);
  assert.deepEqual(c1.nodes.map((i) => i.number), [2, 9]);
  const two = c1.nodes[0];
  assert.equal(two.id, 'I_D0JC');
  assert.equal(two.databaseId, 1000002);
  assert.equal(two.state, 'CLOSED');
  assert.equal(two.body, '');
  assert.deepEqual(two.author, { login: 'octocat', __typename: 'User' });
  assert.deepEqual(two.subIssues, { totalCount: 1, nodes: [{ number: 10 }] });
  const p2 = await ok(ISSUES, { owner: 'acme', name: 'widgets', after: c1.pageInfo.endCursor });
  const c2 = p2.repository.issues;
  assert.equal(c2.pageInfo.hasNextPage, false);
  assert.deepEqual(c2.nodes.map((i) => i.number), [10]);
  const ten = c2.nodes[0];
  assert.deepEqual(ten.author, { login: 'github-actions', __typename: 'Bot' }, 'GraphQL drops the [bot] suffix');
  assert.deepEqual(ten.parent, { number: 2, repository: { nameWithOwner: 'acme/widgets' } });
  assert.deepEqual(ten.labels.nodes.map((l) => l.name), ['type:task', 'prio:P1', 'area:ui']);
  assert.equal(ten.updatedAt, '2026-11-02T10:00:03Z');
  const item = ten.projectItems.nodes[0];
  assert.equal(item.id, 'PVTI_ten');
  assert.equal(item.project.number, 1);
  const values = item.fieldValues.nodes;
  assert.deepEqual(values[0], { __typename: 'ProjectV2ItemFieldTextValue', text: 'Task: wire the gauge', field: { id: 'PVTF_title_1', name: 'Title', dataType: 'TITLE' } });
  assert.deepEqual(values.slice(1), [
    { __typename: 'ProjectV2ItemFieldSingleSelectValue', name: 'Todo', optionId: 'f75ad846', field: { id: 'PVTF_status', name: 'Status' } },
    { __typename: 'ProjectV2ItemFieldSingleSelectValue', name: 'P1', optionId: 'p1', field: { id: 'PVTF_prio', name: 'Priority' } },
    { __typename: 'ProjectV2ItemFieldNumberValue', number: 4, field: { name: 'Estimate (hrs)' } },
    { __typename: 'ProjectV2ItemFieldDateValue', date: '2026-12-01', field: { name: 'Due' } },
  ]);
});

test('issues filter by state and order by updatedAt descending', async () => {
  const d = await ok(`{ repository(owner: "acme", name: "widgets") {
    issues(first: 10, states: [OPEN], orderBy: {field: UPDATED_AT, direction: DESC}) { nodes { number } } } }`);
  assert.deepEqual(d.repository.issues.nodes.map((i) => i.number), [10, 9]);
});

test('a cursor stays valid when issues are created meanwhile', async () => {
  const p1 = await ok(ISSUES, { owner: 'acme', name: 'widgets' });
  await emu.post('/repos/acme/widgets/issues', { title: 'late' });
  const p2 = await ok(ISSUES, { owner: 'acme', name: 'widgets', after: p1.repository.issues.pageInfo.endCursor });
  assert.deepEqual(p2.repository.issues.nodes.map((i) => i.number), [10, 11]);
});

test('a garbage cursor is an error, not a silent first page', async () => {
  const r = await emu.gql(ISSUES, { owner: 'acme', name: 'widgets', after: 'bm9wZQ==' });
  assert.equal(r.status, 200);
  assert.equal(r.json.errors[0].type, 'INVALID_CURSOR_ARGUMENTS');
});

test('the project: fields with options and data types, built-in Title first, items', async () => {
  const d = await ok(PROJECT, { org: 'acme', n: 1 });
  const p = d.organization.projectV2;
  assert.equal(p.id, 'PVT_kwDOAA');
  assert.deepEqual(p.fields.nodes.map((f) => [f.name, f.dataType]), [
    ['Title', 'TITLE'], ['Status', 'SINGLE_SELECT'], ['Priority', 'SINGLE_SELECT'],
    ['Estimate (hrs)', 'NUMBER'], ['Notes', 'TEXT'], ['Due', 'DATE'],
  ]);
  assert.deepEqual(p.fields.nodes[2].options, [{ id: 'p0', name: 'P0' }, { id: 'p1', name: 'P1' }, { id: 'p2', name: 'P2' }]);
  assert.equal(p.items.totalCount, 3);
  assert.deepEqual(p.items.nodes.map((i) => i.content.number), [10, 2, 1]);
});

test('project_builtin_fields: false leaves only the custom fields', async () => {
  await emu.close();
  const s = seed();
  s.project_builtin_fields = false;
  emu = await start(s);
  const d = await ok(PROJECT, { org: 'acme', n: 1 });
  assert.equal(d.organization.projectV2.fields.nodes[0].name, 'Status');
});

test('a board owned by a user is found through user(login:), not organization(login:)', async () => {
  await emu.close();
  const s = seed();
  s.users.acme = { type: 'User' };
  emu = await start(s);
  const d = await ok('{ user(login: "acme") { login projectV2(number: 1) { id number } } }');
  assert.deepEqual(d.user, { login: 'acme', projectV2: { id: 'PVT_kwDOAA', number: 1 } });
  const r = await emu.gql('{ organization(login: "acme") { projectV2(number: 1) { id } } }');
  assert.equal(r.json.errors[0].type, 'NOT_FOUND');
});

test('organization, user and project lookups that find nothing are NOT_FOUND errors with null data', async () => {
  const cases = [
    ['{ organization(login: "octocat") { id } }', 'organization'],
    ['{ user(login: "acme") { id } }', 'user'],
    ['{ organization(login: "acme") { projectV2(number: 2) { id } } }', 'organization'],
    ['{ repository(owner: "acme", name: "nothing") { id } }', 'repository'],
    ['{ repository(owner: "acme", name: "widgets") { issue(number: 99) { id } } }', 'repository'],
  ];
  for (const [q, root] of cases) {
    const r = await emu.gql(q);
    assert.equal(r.status, 200, q);
    assert.equal(r.json.errors[0].type, 'NOT_FOUND', q);
    assert.ok(r.json.data[root] === null || Object.values(r.json.data[root]).every((v) => v === null), q);
  }
});

test('a repository the token cannot read does not resolve', async () => {
  const r = await emu.gql('{ repository(owner: "acme", name: "widgets") { id } }', null, { token: 'tok-dave' });
  assert.equal(r.json.errors[0].type, 'NOT_FOUND');
  assert.equal(r.json.data.repository, null);
});

test('viewer, rateLimit and node lookups', async () => {
  const d = await ok('{ viewer { login } rateLimit { cost limit remaining used resetAt nodeCount } node(id: "I_D0JK") { ... on Issue { number } } nodes(ids: ["PVTI_two", "nope"]) { id } }');
  assert.equal(d.viewer.login, 'alice');
  assert.equal(d.rateLimit.cost, 1);
  assert.equal(d.rateLimit.limit, 5000);
  assert.equal(d.rateLimit.remaining, 4999);
  assert.match(d.rateLimit.resetAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(d.node.number, 10);
  assert.deepEqual(d.nodes, [{ id: 'PVTI_two' }, null]);
  const c = await ok('{ node(id: "IC_stBeAQ") { __typename id } }');
  assert.deepEqual(c.node, { __typename: 'IssueComment', id: 'IC_stBeAQ' });
});

test('cost follows GitHub: connection requests over 100, at least 1', async () => {
  const q = `{ repository(owner: "acme", name: "widgets") { issues(first: 100) { nodes {
    labels(first: 100) { nodes { name } }
    projectItems(first: 100) { nodes { fieldValues(first: 20) { nodes { __typename } } } } } } } rateLimit { cost nodeCount } }`;
  const d = await ok(q);
  // Requests: issues 1 + labels 100 + projectItems 100 + fieldValues 100*100 = 10201 -> 102.
  assert.equal(d.rateLimit.cost, 102);
  assert.equal(d.rateLimit.nodeCount, 100 + 10000 + 10000 + 200000);
  const r = await emu.gql('{ rateLimit { remaining } }');
  assert.equal(r.json.data.rateLimit.remaining, 5000 - 102 - 1);
  assert.equal(r.headers['x-ratelimit-resource'], 'graphql');
});

test('more than 500,000 possible nodes is refused with MAX_NODE_LIMIT_EXCEEDED', async () => {
  const r = await emu.gql(`{ repository(owner: "acme", name: "widgets") { issues(first: 100) { nodes {
    projectItems(first: 100) { nodes { fieldValues(first: 100) { nodes { __typename } } } } } } } }`);
  assert.equal(r.status, 200);
  assert.equal(r.json.errors[0].type, 'MAX_NODE_LIMIT_EXCEEDED');
  assert.equal(r.json.data, undefined);
});

test('first: 101 is refused with EXCESSIVE_PAGINATION and nothing runs', async () => {
  const r = await emu.gql('{ repository(owner: "acme", name: "widgets") { issues(first: 101) { nodes { number } } } }');
  assert.equal(r.status, 200);
  assert.equal(r.json.data, undefined);
  assert.equal(r.json.errors[0].type, 'EXCESSIVE_PAGINATION');
  assert.deepEqual(r.json.errors[0].path, ['repository', 'issues']);
  assert.match(r.json.errors[0].message, /Requesting 101 records on the `issues` connection exceeds the `first` limit of 100 records/);
});

test('first: 101 through a variable is refused too', async () => {
  const r = await emu.gql('query($n: Int) { repository(owner: "acme", name: "widgets") { issues(first: 10) { nodes { labels(first: $n) { nodes { name } } } } } }', { n: 101 });
  assert.equal(r.json.errors[0].type, 'EXCESSIVE_PAGINATION');
});

test('a connection without first is refused with MISSING_PAGINATION_BOUNDARIES', async () => {
  const r = await emu.gql('{ repository(owner: "acme", name: "widgets") { issues { totalCount } } }');
  assert.equal(r.json.errors[0].type, 'MISSING_PAGINATION_BOUNDARIES');
});

test('a field the schema does not have is a validation error like GitHub\'s', async () => {
  const q = '{ repository(owner: "acme", name: "widgets") { issues(first: 1) { nodes { numbr } } } }';
  const r = await emu.gql(q);
  assert.equal(r.status, 200);
  assert.equal(r.json.data, undefined);
  assert.equal(r.json.errors[0].message, "Field 'numbr' doesn't exist on type 'Issue'");
  assert.equal(r.json.errors[0].extensions.code, 'undefinedField');
  assert.deepEqual(r.json.errors[0].locations, [{ line: 1, column: q.indexOf('numbr') + 1 }]);
});

test('unknown arguments, missing arguments, bad syntax and bad variables are refused', async () => {
  const unknown = await emu.gql('{ repository(owner: "acme", name: "widgets", colour: 1) { id } }');
  assert.equal(unknown.json.errors[0].extensions.code, 'argumentNotAccepted');
  const missing = await emu.gql('{ repository(owner: "acme") { id } }');
  assert.equal(missing.json.errors[0].extensions.code, 'missingRequiredArguments');
  const syntax = await emu.gql('{ repository(owner: "acme" { id } }');
  assert.equal(syntax.status, 200);
  assert.match(syntax.json.errors[0].message, /Syntax Error/);
  const vars = await emu.gql('query($n: Int!) { organization(login: "acme") { projectV2(number: $n) { id } } }', { n: 'one' });
  assert.equal(vars.json.errors[0].extensions.code, 'variableMismatch');
  const noQuery = await emu.req('POST', '/graphql', { body: { variables: {} } });
  assert.match(noQuery.json.errors[0].message, /query attribute/);
});

test('a valid field the emulator does not model answers 501, never a made-up value', async () => {
  const field = await emu.gql('{ repository(owner: "acme", name: "widgets") { issues(first: 1) { nodes { milestone { title } } } } }');
  assert.equal(field.status, 501);
  assert.match(field.json.message, /Issue\.milestone/);
  const arg = await emu.gql('{ repository(owner: "acme", name: "widgets") { issues(first: 1, filterBy: {assignee: "bob"}) { totalCount } } }');
  assert.equal(arg.status, 501);
  assert.match(arg.json.message, /IssueFilters\.assignee \(argument filterBy of Repository\.issues\)/);
  const input = await emu.gql('mutation { createIssue(input: {repositoryId: "R_AYag", title: "x", milestoneId: "M_1"}) { issue { id } } }');
  assert.equal(input.status, 501);
  assert.match(input.json.message, /CreateIssueInput\.milestoneId/);
  const mutation = await emu.gql('mutation { reprioritizeSubIssue(input: {issueId: "I_D0JC", subIssueId: "I_D0JJ"}) { issue { id } } }');
  assert.equal(mutation.status, 501);
  const st = await emu.state();
  assert.equal(st.state.repositories.find((r) => r.repo === 'acme/widgets').issues.find((i) => i.number === 9).parent, null);
});

test('GraphQL needs a token: 401 without one, 401 for a bad one', async () => {
  const none = await emu.gql('{ viewer { login } }', null, { token: null });
  assert.equal(none.status, 401);
  assert.equal(none.json.message, 'This endpoint requires you to be authenticated.');
  const bad = await emu.gql('{ viewer { login } }', null, { token: 'forged' });
  assert.equal(bad.status, 401);
  assert.equal(bad.json.message, 'Bad credentials');
});

const ADD = 'mutation($p: ID!, $c: ID!) { addProjectV2ItemById(input: {projectId: $p, contentId: $c}) { item { id } } }';
const SET = `mutation($p: ID!, $i: ID!, $f: ID!, $v: ProjectV2FieldValue!) {
  updateProjectV2ItemFieldValue(input: {projectId: $p, itemId: $i, fieldId: $f, value: $v}) { projectV2Item { id } } }`;

function itemOf(st, ref) {
  return st.state.project.items.find((i) => i.issue === ref);
}

test('addProjectV2ItemById adds an item; adding it again returns the same item', async () => {
  const a = await ok(ADD, { p: 'PVT_kwDOAA', c: 'I_D0JJ' });
  const id = a.addProjectV2ItemById.item.id;
  assert.equal(id, 'PVTI_D0JV', 'item ids come from the database id counter');
  const b = await ok(ADD, { p: 'PVT_kwDOAA', c: 'I_D0JJ' });
  assert.equal(b.addProjectV2ItemById.item.id, id);
  const st = await emu.state();
  assert.equal(st.state.project.items.filter((i) => i.issue === 'acme/widgets#9').length, 1);
  assert.deepEqual(itemOf(st, 'acme/widgets#9'), { id, issue: 'acme/widgets#9', values: {} });
  const existing = await ok(ADD, { p: 'PVT_kwDOAA', c: 'I_D0JK' });
  assert.equal(existing.addProjectV2ItemById.item.id, 'PVTI_ten');
});

test('addProjectV2ItemById with an unknown project or content is NOT_FOUND', async () => {
  const r = await emu.gql(ADD, { p: 'PVT_nope', c: 'I_D0JJ' });
  assert.equal(r.json.errors[0].type, 'NOT_FOUND');
  const c = await emu.gql(ADD, { p: 'PVT_kwDOAA', c: 'PVTI_ten' });
  assert.equal(c.json.errors[0].type, 'NOT_FOUND');
});

test('updateProjectV2ItemFieldValue sets one value kind per field type', async () => {
  await ok(SET, { p: 'PVT_kwDOAA', i: 'PVTI_two', f: 'PVTF_status', v: { singleSelectOptionId: '98236657' } });
  await ok(SET, { p: 'PVT_kwDOAA', i: 'PVTI_two', f: 'PVTF_est', v: { number: 8 } });
  await ok(SET, { p: 'PVT_kwDOAA', i: 'PVTI_two', f: 'PVTF_notes', v: { text: 'smaller' } });
  await ok(SET, { p: 'PVT_kwDOAA', i: 'PVTI_two', f: 'PVTF_due', v: { date: '2027-01-31' } });
  const st = await emu.state();
  assert.deepEqual(itemOf(st, 'acme/widgets#2').values, { Due: '2027-01-31', 'Estimate (hrs)': 8, Notes: 'smaller', Status: 'Done' });
});

test('updateProjectV2ItemFieldValue refuses an unknown option, a wrong kind, two kinds, a bad date and Title', async () => {
  const before = JSON.stringify(await emu.state());
  const cases = [
    ['PVTF_status', { singleSelectOptionId: 'no-such-option' }, /option/],
    ['PVTF_est', { text: '8' }, /NUMBER/],
    ['PVTF_notes', { text: 'a', number: 1 }, /Exactly one/],
    ['PVTF_due', { date: '2027-02-30' }, /not a valid date/],
    ['PVTF_title_1', { text: 'renamed' }, /Title/],
    ['PVTF_status', {}, /Exactly one/],
  ];
  for (const [f, v, re] of cases) {
    const r = await emu.gql(SET, { p: 'PVT_kwDOAA', i: 'PVTI_two', f, v });
    assert.equal(r.status, 200);
    assert.equal(r.json.data.updateProjectV2ItemFieldValue, null, f);
    assert.equal(r.json.errors[0].type, 'UNPROCESSABLE', f);
    assert.match(r.json.errors[0].message, re);
  }
  const missing = await emu.gql(SET, { p: 'PVT_kwDOAA', i: 'PVTI_nope', f: 'PVTF_est', v: { number: 1 } });
  assert.equal(missing.json.errors[0].type, 'NOT_FOUND');
  assert.equal(JSON.stringify(await emu.state()), before, 'nothing changed');
});

test('several field updates share one request through aliases; clear removes a value', async () => {
  const q = `mutation {
    a: updateProjectV2ItemFieldValue(input: {projectId: "PVT_kwDOAA", itemId: "PVTI_gadget", fieldId: "PVTF_prio", value: {singleSelectOptionId: "p0"}}) { projectV2Item { id } }
    b: updateProjectV2ItemFieldValue(input: {projectId: "PVT_kwDOAA", itemId: "PVTI_gadget", fieldId: "PVTF_est", value: {number: 1.5}}) { projectV2Item { id } }
    c: clearProjectV2ItemFieldValue(input: {projectId: "PVT_kwDOAA", itemId: "PVTI_ten", fieldId: "PVTF_due"}) { projectV2Item { id } }
  }`;
  const d = await ok(q);
  assert.equal(d.a.projectV2Item.id, 'PVTI_gadget');
  const st = await emu.state();
  assert.deepEqual(itemOf(st, 'acme/gadgets#1').values, { 'Estimate (hrs)': 1.5, Priority: 'P0' });
  assert.equal(itemOf(st, 'acme/widgets#10').values.Due, undefined);
  const log = await emu.log();
  const last = log.requests[log.requests.length - 1];
  assert.equal(last.operation, 'mutation updateProjectV2ItemFieldValue,updateProjectV2ItemFieldValue,clearProjectV2ItemFieldValue');
  assert.equal(last.content_creating, true);
});

test('project access needs the project scope: users get INSUFFICIENT_SCOPES, integrations FORBIDDEN', async () => {
  const bob = await emu.gql(PROJECT, { org: 'acme', n: 1 }, { token: 'tok-bob' });
  assert.equal(bob.json.errors[0].type, 'INSUFFICIENT_SCOPES');
  assert.equal(bob.json.data.organization.projectV2, null);
  const bot = await emu.gql(ADD, { p: 'PVT_kwDOAA', c: 'I_D0JJ' }, { token: 'tok-actions' });
  assert.equal(bot.json.errors[0].type, 'FORBIDDEN');
  assert.equal(bot.json.errors[0].message, 'Resource not accessible by integration');
  const carolRead = await emu.gql(PROJECT, { org: 'acme', n: 1 }, { token: 'tok-carol' });
  assert.equal(carolRead.json.errors, undefined, 'read:project reads');
  const carolWrite = await emu.gql(ADD, { p: 'PVT_kwDOAA', c: 'I_D0JJ' }, { token: 'tok-carol' });
  assert.equal(carolWrite.json.errors[0].type, 'INSUFFICIENT_SCOPES');
  const st = await emu.state();
  assert.equal(itemOf(st, 'acme/widgets#9'), undefined);
});

test('an exhausted GraphQL budget answers RATE_LIMITED inside HTTP 200', async () => {
  await emu.close();
  const s = seed();
  s.rate_limit = { graphql: { limit: 5000, remaining: 1 } };
  emu = await start(s);
  await ok('{ viewer { login } }');
  const r = await emu.gql('{ viewer { login } }');
  assert.equal(r.status, 200);
  assert.equal(r.json.errors[0].type, 'RATE_LIMITED');
  assert.equal(r.headers['x-ratelimit-remaining'], '0');
});

test('repository.labels lists the catalogue 100 a page with ids createIssue takes; a new label shows', async () => {
  const Q = `query($after: String) { repository(owner: "acme", name: "widgets") {
    id labels(first: 2, after: $after) { nodes { id name } pageInfo { hasNextPage endCursor } } } }`;
  const p1 = (await ok(Q, {})).repository;
  assert.equal(p1.labels.nodes.length, 2);
  assert.equal(p1.labels.pageInfo.hasNextPage, true);
  const all = [...p1.labels.nodes];
  for (let after = p1.labels.pageInfo.endCursor; after;) {
    const p = (await ok(Q, { after })).repository.labels;
    all.push(...p.nodes);
    after = p.pageInfo.hasNextPage ? p.pageInfo.endCursor : null;
  }
  assert.ok(all.every((l) => /^LA_/.test(l.id)), JSON.stringify(all));
  assert.ok(all.some((l) => l.name === 'type:task'));
  const made = await emu.post('/repos/acme/widgets/labels', { name: 'fresh', color: 'ededed' });
  assert.equal(made.status, 201, made.text);
  const after = [];
  for (let cur = null, more = true; more;) {
    const p = (await ok(Q, { after: cur })).repository.labels;
    after.push(...p.nodes);
    more = p.pageInfo.hasNextPage;
    cur = p.pageInfo.endCursor;
  }
  assert.deepEqual(after.find((l) => l.name === 'fresh'), { id: made.json.node_id, name: 'fresh' });
  const d = await ok(`mutation($in: CreateIssueInput!) { createIssue(input: $in) { issue { labels(first: 5) { nodes { name } } } } }`,
    { in: { repositoryId: p1.id, title: 'T', labelIds: [made.json.node_id] } });
  assert.deepEqual(d.createIssue.issue.labels.nodes, [{ name: 'fresh' }]);
});
