'use strict';
// The REST operations the emulator models, keyed by the operationId of
// GitHub's description. Requests reach a handler only after routing, auth
// and schema validation (lib/app.js); handlers check what schemas do not
// say, act on the World and shape answers like GitHub's.

const { World, WorldError } = require('./world');
const { fold } = require('./util');

class HttpError extends Error {
  constructor(status, message, extra) {
    super(message);
    this.status = status;
    this.extra = extra || {};
  }
}

// ---- JSON shapes ----------------------------------------------------------

function userJson(ctx, u) {
  const login = u.login;
  const api = `${ctx.base}/users/${encodeURIComponent(login)}`;
  return {
    login,
    id: u.id,
    node_id: u.node_id,
    avatar_url: `https://avatars.githubusercontent.com/u/${u.id}?v=4`,
    gravatar_id: '',
    url: api,
    html_url: u.type === 'Bot' ? `https://github.com/apps/${u.graphqlLogin}` : `https://github.com/${login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: u.type,
    user_view_type: 'public',
    site_admin: false,
  };
}

function labelJson(ctx, repo, name) {
  const l = ctx.world.catalogLabel(repo, name);
  return {
    id: l.id,
    node_id: l.node_id,
    url: `${ctx.base}/repos/${repo.name}/labels/${encodeURIComponent(name)}`,
    name,
    description: null,
    color: 'ededed',
    default: false,
  };
}

function association(ctx, repo, user) {
  if (fold(user.login) === fold(repo.owner)) return 'OWNER';
  const m = ctx.world.collaborators.get(repo.key);
  if (m && m.has(fold(user.login))) return 'COLLABORATOR';
  return 'NONE';
}

function rollup(url, reactions) {
  const r = { url, total_count: reactions.length };
  for (const k of ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes']) {
    r[k] = reactions.filter((x) => x.content === k).length;
  }
  return r;
}

function issueUrl(ctx, issue) {
  return `${ctx.base}/repos/${issue.repo.name}/issues/${issue.number}`;
}

function issueJson(ctx, issue) {
  const url = issueUrl(ctx, issue);
  const done = issue.children.filter((c) => c.state === 'closed').length;
  const total = issue.children.length;
  return {
    id: issue.database_id,
    node_id: issue.node_id,
    url,
    repository_url: `${ctx.base}/repos/${issue.repo.name}`,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: `https://github.com/${issue.repo.name}/issues/${issue.number}`,
    number: issue.number,
    state: issue.state,
    state_reason: issue.state_reason,
    title: issue.title,
    // GitHub answers null, not "", for an issue without a body.
    body: issue.body === '' ? null : issue.body,
    user: userJson(ctx, issue.author),
    labels: issue.labels.map((n) => labelJson(ctx, issue.repo, n)),
    assignee: null,
    assignees: [],
    milestone: null,
    locked: false,
    active_lock_reason: null,
    comments: issue.comments.length,
    closed_at: issue.closed_at,
    created_at: issue.created_at,
    updated_at: issue.updated_at,
    closed_by: null,
    author_association: association(ctx, issue.repo, issue.author),
    reactions: rollup(`${url}/reactions`, []),
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
    sub_issues_summary: {
      total, completed: done, percent_completed: total ? Math.floor((100 * done) / total) : 0,
    },
    parent_issue_url: issue.parent ? issueUrl(ctx, issue.parent) : null,
    issue_dependencies_summary: {
      blocked_by: issue.blockedBy.filter((b) => b.state === 'open').length,
      blocking: issue.blocking.filter((b) => b.state === 'open').length,
      total_blocked_by: issue.blockedBy.length,
      total_blocking: issue.blocking.length,
    },
  };
}

function commentJson(ctx, c) {
  const repo = c.issue.repo;
  const url = `${ctx.base}/repos/${repo.name}/issues/comments/${c.id}`;
  return {
    id: c.id,
    node_id: c.node_id,
    url,
    html_url: `https://github.com/${repo.name}/issues/${c.issue.number}#issuecomment-${c.id}`,
    body: c.body,
    user: userJson(ctx, c.user),
    created_at: c.created_at,
    updated_at: c.updated_at,
    issue_url: issueUrl(ctx, c.issue),
    author_association: association(ctx, repo, c.user),
    performed_via_github_app: null,
    reactions: rollup(`${url}/reactions`, c.reactions),
  };
}

function reactionJson(ctx, r) {
  return { id: r.id, node_id: r.node_id, user: userJson(ctx, r.user), content: r.content, created_at: r.created_at };
}

// ---- helpers --------------------------------------------------------------

// GitHub caps per_page at 100 without complaint and pages from 1.
function paginate(ctx, list) {
  const per = Math.min(100, Math.max(1, ctx.query.per_page || 30));
  const page = Math.max(1, ctx.query.page || 1);
  const last = Math.max(1, Math.ceil(list.length / per));
  const links = [];
  const link = (p, rel) => {
    const u = new URL(ctx.url.pathname + ctx.url.search, ctx.base);
    u.searchParams.set('page', String(p));
    if (!u.searchParams.has('per_page') && per !== 30) u.searchParams.set('per_page', String(per));
    links.push(`<${u.toString()}>; rel="${rel}"`);
  };
  if (page > 1) link(page - 1, 'prev');
  if (page < last) link(page + 1, 'next');
  if (page < last) link(last, 'last');
  if (page > 1) link(1, 'first');
  ctx.headers.link = links.length ? links.join(', ') : undefined;
  return list.slice((page - 1) * per, page * per);
}

function unmodelled(ctx, what) {
  throw new HttpError(501, `Not implemented by the pm-bot GitHub emulator: ${what} ` +
    `(${ctx.op.operationId}, ${ctx.op.method} ${ctx.op.template})`);
}

function rejectKeys(ctx, obj, allowed, where) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return;
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) unmodelled(ctx, `${where} "${k}"`);
  }
}

function rejectQuery(ctx, allowed) {
  for (const k of ctx.url.searchParams.keys()) {
    if (ctx.paramNames.includes(k) && !allowed.includes(k)) unmodelled(ctx, `query parameter "${k}"`);
  }
}

function needIssue(ctx) {
  const issue = ctx.world.issue(ctx.repo, ctx.params.issue_number);
  if (!issue) throw new HttpError(404, 'Not Found');
  return issue;
}

function needComment(ctx) {
  const c = ctx.world.comments.get(ctx.params.comment_id);
  if (!c || c.issue.repo !== ctx.repo) throw new HttpError(404, 'Not Found');
  return c;
}

function titleString(t) {
  return typeof t === 'number' ? String(t) : t;
}

// The labels body of POST/PUT …/labels comes in five shapes.
function labelList(body) {
  if (typeof body === 'string') return [body];
  const arr = Array.isArray(body) ? body : body && body.labels;
  return (arr || []).map((l) => (typeof l === 'string' ? l : l.name));
}

function requirePermission(ctx, need, msgIfNot) {
  if (!World.atLeast(ctx.permission, need)) {
    throw new HttpError(403, msgIfNot || ctx.forbiddenMessage);
  }
}

function ok(body, status) {
  return { status: status || 200, body };
}

// ---- handlers -------------------------------------------------------------

const handlers = {
  'issues/list-for-repo': (ctx) => {
    rejectQuery(ctx, ['state', 'labels', 'sort', 'direction', 'since', 'creator', 'per_page', 'page']);
    const q = ctx.query;
    let list = [...ctx.repo.issues.values()];
    if (q.state !== 'all') list = list.filter((i) => i.state === q.state);
    if (q.labels) {
      const want = q.labels.split(',').map((s) => fold(s.trim())).filter(Boolean);
      list = list.filter((i) => want.every((w) => i.labels.some((l) => fold(l) === w)));
    }
    if (q.creator) list = list.filter((i) => fold(i.author.login) === fold(q.creator));
    if (q.since) {
      const since = Date.parse(q.since);
      list = list.filter((i) => Date.parse(i.updated_at) >= since);
    }
    const key = {
      created: (i) => i.number,
      updated: (i) => Date.parse(i.updated_at),
      comments: (i) => i.comments.length,
    }[q.sort];
    const dir = q.direction === 'asc' ? 1 : -1;
    list.sort((a, b) => (key(a) - key(b)) * dir || (a.number - b.number) * dir);
    return ok(paginate(ctx, list).map((i) => issueJson(ctx, i)));
  },

  'issues/get': (ctx) => ok(issueJson(ctx, needIssue(ctx))),

  'issues/create': (ctx) => {
    rejectKeys(ctx, ctx.body, ['title', 'body', 'labels'], 'field');
    requirePermission(ctx, 'read');
    const b = ctx.body;
    const issue = ctx.world.createIssue(ctx.repo, {
      title: titleString(b.title), body: b.body, labels: b.labels ? labelList(b.labels) : [],
    }, ctx.user);
    ctx.headers.location = issueUrl(ctx, issue);
    return ok(issueJson(ctx, issue), 201);
  },

  'issues/update': (ctx) => {
    const issue = needIssue(ctx);
    rejectKeys(ctx, ctx.body, ['title', 'body', 'state', 'state_reason', 'labels'], 'field');
    const b = ctx.body || {};
    // Authors may edit their own issue's text and state; triage may set
    // labels and state; anything else needs write.
    const keys = Object.keys(b);
    let need = 'write';
    if (issue.author === ctx.user && keys.every((k) => k !== 'labels')) need = 'read';
    else if (keys.every((k) => ['labels', 'state', 'state_reason'].includes(k))) need = 'triage';
    requirePermission(ctx, need);
    const patch = {};
    if ('title' in b && b.title !== null) patch.title = titleString(b.title);
    if ('body' in b) patch.body = b.body;
    if ('state' in b) patch.state = b.state;
    if ('state_reason' in b) patch.state_reason = b.state_reason;
    if ('labels' in b && b.labels !== null) patch.labels = labelList(b.labels);
    ctx.world.updateIssue(issue, patch);
    return ok(issueJson(ctx, issue));
  },

  'issues/list-labels-on-issue': (ctx) => {
    const issue = needIssue(ctx);
    return ok(paginate(ctx, issue.labels).map((n) => labelJson(ctx, ctx.repo, n)));
  },

  'issues/add-labels': (ctx) => {
    const issue = needIssue(ctx);
    requirePermission(ctx, 'triage');
    const labels = ctx.world.addLabels(issue, labelList(ctx.body));
    return ok(labels.map((n) => labelJson(ctx, ctx.repo, n)));
  },

  'issues/set-labels': (ctx) => {
    const issue = needIssue(ctx);
    requirePermission(ctx, 'triage');
    const labels = ctx.world.setLabels(issue, labelList(ctx.body));
    return ok(labels.map((n) => labelJson(ctx, ctx.repo, n)));
  },

  'issues/remove-label': (ctx) => {
    const issue = needIssue(ctx);
    requirePermission(ctx, 'triage');
    const labels = ctx.world.removeLabel(issue, ctx.params.name);
    return ok(labels.map((n) => labelJson(ctx, ctx.repo, n)));
  },

  'issues/remove-all-labels': (ctx) => {
    const issue = needIssue(ctx);
    requirePermission(ctx, 'triage');
    ctx.world.removeAllLabels(issue);
    return { status: 204, body: null };
  },

  'issues/list-sub-issues': (ctx) => {
    const issue = needIssue(ctx);
    return ok(paginate(ctx, issue.children).map((i) => issueJson(ctx, i)));
  },

  'issues/get-parent': (ctx) => {
    const issue = needIssue(ctx);
    if (!issue.parent) throw new HttpError(404, 'Not Found');
    return ok(issueJson(ctx, issue.parent));
  },

  'issues/add-sub-issue': (ctx) => {
    const parent = needIssue(ctx);
    requirePermission(ctx, 'write');
    rejectKeys(ctx, ctx.body, ['sub_issue_id', 'replace_parent'], 'field');
    ctx.world.addSubIssue(parent, ctx.body.sub_issue_id, ctx.body.replace_parent === true);
    return ok(issueJson(ctx, parent), 201);
  },

  'issues/remove-sub-issue': (ctx) => {
    const parent = needIssue(ctx);
    requirePermission(ctx, 'write');
    ctx.world.removeSubIssue(parent, ctx.body.sub_issue_id);
    return ok(issueJson(ctx, parent));
  },

  'issues/list-dependencies-blocked-by': (ctx) => {
    const issue = needIssue(ctx);
    return ok(paginate(ctx, issue.blockedBy).map((i) => issueJson(ctx, i)));
  },

  'issues/list-dependencies-blocking': (ctx) => {
    const issue = needIssue(ctx);
    return ok(paginate(ctx, issue.blocking).map((i) => issueJson(ctx, i)));
  },

  'issues/add-blocked-by-dependency': (ctx) => {
    const issue = needIssue(ctx);
    requirePermission(ctx, 'write');
    const blocker = ctx.world.addBlockedBy(issue, ctx.body.issue_id);
    return ok(issueJson(ctx, blocker), 201);
  },

  'issues/remove-dependency-blocked-by': (ctx) => {
    const issue = needIssue(ctx);
    requirePermission(ctx, 'write');
    const blocker = ctx.world.removeBlockedBy(issue, ctx.params.issue_id);
    return ok(issueJson(ctx, blocker));
  },

  'issues/list-comments': (ctx) => {
    const issue = needIssue(ctx);
    let list = issue.comments.slice();
    if (ctx.query.since) {
      const since = Date.parse(ctx.query.since);
      list = list.filter((c) => Date.parse(c.updated_at) >= since);
    }
    return ok(paginate(ctx, list).map((c) => commentJson(ctx, c)));
  },

  'issues/create-comment': (ctx) => {
    const issue = needIssue(ctx);
    requirePermission(ctx, 'read');
    const c = ctx.world.createComment(issue, ctx.body.body, ctx.user);
    ctx.headers.location = commentJson(ctx, c).url;
    return ok(commentJson(ctx, c), 201);
  },

  'issues/get-comment': (ctx) => ok(commentJson(ctx, needComment(ctx))),

  'issues/update-comment': (ctx) => {
    const c = needComment(ctx);
    requirePermission(ctx, c.user === ctx.user ? 'read' : 'write');
    ctx.world.updateComment(c, ctx.body.body);
    return ok(commentJson(ctx, c));
  },

  'issues/delete-comment': (ctx) => {
    const c = needComment(ctx);
    requirePermission(ctx, c.user === ctx.user ? 'read' : 'write');
    c.issue.comments = c.issue.comments.filter((x) => x !== c);
    ctx.world.comments.delete(c.id);
    ctx.world.nodes.delete(c.node_id);
    return { status: 204, body: null };
  },

  'reactions/list-for-issue-comment': (ctx) => {
    const c = needComment(ctx);
    const list = ctx.query.content ? c.reactions.filter((r) => r.content === ctx.query.content) : c.reactions;
    return ok(paginate(ctx, list).map((r) => reactionJson(ctx, r)));
  },

  'reactions/create-for-issue-comment': (ctx) => {
    const c = needComment(ctx);
    requirePermission(ctx, 'read');
    const { reaction, created } = ctx.world.addReaction(c, ctx.body.content, ctx.user);
    return ok(reactionJson(ctx, reaction), created ? 201 : 200);
  },

  'reactions/delete-for-issue-comment': (ctx) => {
    const c = needComment(ctx);
    const r = c.reactions.find((x) => x.id === ctx.params.reaction_id);
    if (r && r.user !== ctx.user) requirePermission(ctx, 'write');
    ctx.world.removeReaction(c, ctx.params.reaction_id);
    return { status: 204, body: null };
  },

  'repos/get-collaborator-permission-level': (ctx) => {
    const u = ctx.world.user(ctx.params.username);
    if (!u || u.type === 'Organization') throw new HttpError(404, 'Not Found');
    const role = ctx.world.permission(u.login, ctx.repo);
    // `permission` is the legacy name: maintain reads as write, triage as read.
    const legacy = { admin: 'admin', maintain: 'write', write: 'write', triage: 'read', read: 'read', none: 'none' }[role];
    const rank = (p) => World.atLeast(role, p);
    return ok({
      permission: legacy,
      role_name: role,
      user: {
        ...userJson(ctx, u),
        permissions: { admin: rank('admin'), maintain: rank('maintain'), push: rank('write'), triage: rank('triage'), pull: rank('read') },
        role_name: role,
      },
    });
  },

  'users/get-authenticated': (ctx) => {
    if (ctx.token.type === 'Bot') throw new HttpError(403, 'Resource not accessible by integration');
    return ok({
      ...userJson(ctx, ctx.user),
      name: null, company: null, blog: '', location: null, email: null, hireable: null, bio: null,
      twitter_username: null, public_repos: 0, public_gists: 0, followers: 0, following: 0,
      created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z',
    });
  },

  'rate-limit/get': (ctx) => {
    const core = ctx.rateSnapshot('core');
    const graphql = ctx.rateSnapshot('graphql');
    return ok({ resources: { core, graphql, search: { limit: 30, used: 0, remaining: 30, reset: core.reset } }, rate: core });
  },
};

// Reads that do not count against the primary rate limit, as on GitHub.
const FREE = new Set(['rate-limit/get']);

function errorFromWorld(e) {
  if (!(e instanceof WorldError)) return e;
  if (e.kind === 'not_found') return new HttpError(404, e.message || 'Not Found');
  if (e.kind === 'forbidden') return new HttpError(403, e.message);
  const detail = { ...(e.details || { resource: 'Issue', code: 'custom' }), message: e.message };
  return new HttpError(422, 'Validation Failed', { errors: [detail] });
}

module.exports = {
  handlers, HttpError, errorFromWorld, FREE, issueJson, userJson,
};
