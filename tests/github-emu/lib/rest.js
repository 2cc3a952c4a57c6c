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
    description: l.description == null ? null : l.description,
    color: l.color || 'ededed',
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

function htmlUrl(issue) {
  return `https://github.com/${issue.repo.name}/${issue.kind === 'pull' ? 'pull' : 'issues'}/${issue.number}`;
}

function pullUrl(ctx, pull) {
  return `${ctx.base}/repos/${pull.repo.name}/pulls/${pull.number}`;
}

function issueJson(ctx, issue) {
  const url = issueUrl(ctx, issue);
  const done = issue.children.filter((c) => c.state === 'closed').length;
  const total = issue.children.length;
  const out = {
    id: issue.database_id,
    node_id: issue.node_id,
    url,
    repository_url: `${ctx.base}/repos/${issue.repo.name}`,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: htmlUrl(issue),
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
  if (issue.kind === 'pull') {
    // The issue side of a pull request, as GitHub shows it.
    const html = htmlUrl(issue);
    out.draft = issue.draft;
    out.pull_request = {
      url: pullUrl(ctx, issue), html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch`, merged_at: issue.merged ? issue.closed_at : null,
    };
  }
  return out;
}

// A repository as GitHub embeds it (schema `repository`); `full` adds what
// repos/get answers (schema `full-repository`), with the caller's
// permissions. Stamps are fixed: the emulator has no pushes to date them.
function repoJson(ctx, r, full) {
  const api = `${ctx.base}/repos/${r.name}`;
  const html = `https://github.com/${r.name}`;
  const owner = ctx.world.owner(r.owner) || ctx.world.ensureUser(r.owner);
  const open = r.kind === 'repo'
    ? [...r.issues.values(), ...r.pulls.values()].filter((i) => i.state === 'open').length : 0;
  const out = {
    id: r.id,
    node_id: r.node_id,
    name: r.short,
    full_name: r.name,
    owner: userJson(ctx, owner),
    private: r.private,
    html_url: html,
    description: null,
    fork: r.fork,
    url: api,
    archive_url: `${api}/{archive_format}{/ref}`,
    assignees_url: `${api}/assignees{/user}`,
    blobs_url: `${api}/git/blobs{/sha}`,
    branches_url: `${api}/branches{/branch}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    comments_url: `${api}/comments{/number}`,
    commits_url: `${api}/commits{/sha}`,
    compare_url: `${api}/compare/{base}...{head}`,
    contents_url: `${api}/contents/{+path}`,
    contributors_url: `${api}/contributors`,
    deployments_url: `${api}/deployments`,
    downloads_url: `${api}/downloads`,
    events_url: `${api}/events`,
    forks_url: `${api}/forks`,
    git_commits_url: `${api}/git/commits{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    git_url: `git://github.com/${r.name}.git`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    issue_events_url: `${api}/issues/events{/number}`,
    issues_url: `${api}/issues{/number}`,
    keys_url: `${api}/keys{/key_id}`,
    labels_url: `${api}/labels{/name}`,
    languages_url: `${api}/languages`,
    merges_url: `${api}/merges`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    pulls_url: `${api}/pulls{/number}`,
    releases_url: `${api}/releases{/id}`,
    ssh_url: `git@github.com:${r.name}.git`,
    stargazers_url: `${api}/stargazers`,
    statuses_url: `${api}/statuses/{sha}`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    tags_url: `${api}/tags`,
    teams_url: `${api}/teams`,
    trees_url: `${api}/git/trees{/sha}`,
    clone_url: `${html}.git`,
    mirror_url: null,
    hooks_url: `${api}/hooks`,
    svn_url: html,
    homepage: null,
    language: null,
    forks_count: 0,
    forks: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 0,
    default_branch: r.default_branch,
    open_issues_count: open,
    open_issues: open,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: true,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    archived: false,
    disabled: false,
    visibility: r.private ? 'private' : 'public',
    pushed_at: '2020-01-01T00:00:00Z',
    created_at: '2020-01-01T00:00:00Z',
    updated_at: '2020-01-01T00:00:00Z',
    license: null,
  };
  if (full) {
    const role = ctx.world.permission(ctx.user.login, r);
    // A read-only token (GITHUB_TOKEN on a fork's pull request) may only pull.
    const rank = (p) => (ctx.token.read_only ? p === 'read' : World.atLeast(role, p));
    out.permissions = {
      admin: rank('admin'), maintain: rank('maintain'), push: rank('write'), triage: rank('triage'), pull: rank('read'),
    };
    out.has_discussions = false;
    out.network_count = 0;
    out.subscribers_count = 0;
    out.allow_forking = true;
    out.web_commit_signoff_required = false;
    if (owner.type === 'Organization') out.organization = userJson(ctx, owner);
  }
  return out;
}

function pullJson(ctx, p) {
  const url = pullUrl(ctx, p);
  const html = htmlUrl(p);
  const issue = issueUrl(ctx, p);
  const base = p.repo;
  const baseOwner = ctx.world.owner(base.owner) || ctx.world.ensureUser(base.owner);
  const statuses = `${ctx.base}/repos/${base.name}/statuses/${p.head.sha}`;
  return {
    url,
    id: p.id,
    node_id: p.node_id,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issue,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${ctx.base}/repos/${base.name}/pulls/comments{/number}`,
    comments_url: `${issue}/comments`,
    statuses_url: statuses,
    number: p.number,
    state: p.state,
    locked: false,
    title: p.title,
    user: userJson(ctx, p.author),
    body: p.body === '' ? null : p.body,
    labels: p.labels.map((n) => labelJson(ctx, base, n)),
    milestone: null,
    active_lock_reason: null,
    created_at: p.created_at,
    updated_at: p.updated_at,
    closed_at: p.closed_at,
    merged_at: p.merged ? p.closed_at : null,
    merge_commit_sha: null,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: {
      label: `${p.head.repo.owner}:${p.head.ref}`,
      ref: p.head.ref,
      sha: p.head.sha,
      user: userJson(ctx, p.head.user),
      repo: repoJson(ctx, p.head.repo, false),
    },
    base: {
      label: `${base.owner}:${p.base.ref}`,
      ref: p.base.ref,
      sha: p.base.sha,
      user: userJson(ctx, baseOwner),
      repo: repoJson(ctx, base, false),
    },
    _links: {
      self: { href: url },
      html: { href: html },
      issue: { href: issue },
      comments: { href: `${issue}/comments` },
      review_comments: { href: `${url}/comments` },
      review_comment: { href: `${ctx.base}/repos/${base.name}/pulls/comments{/number}` },
      commits: { href: `${url}/commits` },
      statuses: { href: statuses },
    },
    author_association: association(ctx, base, p.author),
    auto_merge: null,
    draft: p.draft,
    merged: p.merged,
    // GitHub computes mergeability in the background and answers null
    // until it knows; the emulator never knows.
    mergeable: null,
    rebaseable: null,
    mergeable_state: 'unknown',
    merged_by: null,
    comments: p.comments.length,
    review_comments: 0,
    maintainer_can_modify: false,
    // Diffs are not modelled: GitHub's counts would need the commits.
    commits: 0,
    additions: 0,
    deletions: 0,
    changed_files: 0,
  };
}

function commentJson(ctx, c) {
  const repo = c.issue.repo;
  const url = `${ctx.base}/repos/${repo.name}/issues/comments/${c.id}`;
  return {
    id: c.id,
    node_id: c.node_id,
    url,
    html_url: `${htmlUrl(c.issue)}#issuecomment-${c.id}`,
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

// An issue or a pull request: the issue endpoints answer both, as GitHub's do.
function needIssue(ctx) {
  const issue = ctx.world.issueOrPull(ctx.repo, ctx.params.issue_number);
  if (!issue) throw new HttpError(404, 'Not Found');
  return issue;
}

// Sub-issues and dependencies of a pull request are not modelled.
function needPlainIssue(ctx) {
  const issue = needIssue(ctx);
  if (issue.kind === 'pull') unmodelled(ctx, 'sub-issues and dependencies of a pull request');
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
    let list = [...ctx.repo.issues.values(), ...ctx.repo.pulls.values()];
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

  // Repository labels. Creating one is atomic on GitHub (a name, compared
  // without regard to case, exists once): pm-bot's apply lock relies on it.
  'issues/create-label': (ctx) => {
    requirePermission(ctx, 'write');
    rejectKeys(ctx, ctx.body, ['name', 'color', 'description'], 'body field');
    const l = ctx.world.createLabel(ctx.repo, ctx.body);
    ctx.headers.location = `${ctx.base}/repos/${ctx.repo.name}/labels/${encodeURIComponent(l.name)}`;
    return ok(labelJson(ctx, ctx.repo, l.name), 201);
  },

  'issues/get-label': (ctx) => {
    const l = ctx.world.findLabel(ctx.repo, ctx.params.name);
    if (!l) throw new HttpError(404, 'Not Found');
    return ok(labelJson(ctx, ctx.repo, l.name));
  },

  'issues/delete-label': (ctx) => {
    requirePermission(ctx, 'write');
    if (!ctx.world.deleteLabel(ctx.repo, ctx.params.name)) throw new HttpError(404, 'Not Found');
    return { status: 204, body: null };
  },

  'issues/list-sub-issues': (ctx) => {
    const issue = needPlainIssue(ctx);
    return ok(paginate(ctx, issue.children).map((i) => issueJson(ctx, i)));
  },

  'issues/get-parent': (ctx) => {
    const issue = needPlainIssue(ctx);
    if (!issue.parent) throw new HttpError(404, 'Not Found');
    return ok(issueJson(ctx, issue.parent));
  },

  'issues/add-sub-issue': (ctx) => {
    const parent = needPlainIssue(ctx);
    requirePermission(ctx, 'write');
    rejectKeys(ctx, ctx.body, ['sub_issue_id', 'replace_parent'], 'field');
    ctx.world.addSubIssue(parent, ctx.body.sub_issue_id, ctx.body.replace_parent === true);
    return ok(issueJson(ctx, parent), 201);
  },

  'issues/remove-sub-issue': (ctx) => {
    const parent = needPlainIssue(ctx);
    requirePermission(ctx, 'write');
    ctx.world.removeSubIssue(parent, ctx.body.sub_issue_id);
    return ok(issueJson(ctx, parent));
  },

  'issues/list-dependencies-blocked-by': (ctx) => {
    const issue = needPlainIssue(ctx);
    return ok(paginate(ctx, issue.blockedBy).map((i) => issueJson(ctx, i)));
  },

  'issues/list-dependencies-blocking': (ctx) => {
    const issue = needPlainIssue(ctx);
    return ok(paginate(ctx, issue.blocking).map((i) => issueJson(ctx, i)));
  },

  'issues/add-blocked-by-dependency': (ctx) => {
    const issue = needPlainIssue(ctx);
    requirePermission(ctx, 'write');
    const blocker = ctx.world.addBlockedBy(issue, ctx.body.issue_id);
    return ok(issueJson(ctx, blocker), 201);
  },

  'issues/remove-dependency-blocked-by': (ctx) => {
    const issue = needPlainIssue(ctx);
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

  'pulls/get': (ctx) => {
    const p = ctx.world.pull(ctx.repo, ctx.params.pull_number);
    if (!p) throw new HttpError(404, 'Not Found');
    return ok(pullJson(ctx, p));
  },

  'repos/get': (ctx) => ok(repoJson(ctx, ctx.repo, true)),

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

// The routes a GitHub Enterprise Server without sub-issues or dependencies
// lacks (seed `ghes`): answered 404 like any unknown route.
const SUB_ISSUE_OPS = new Set([
  'issues/list-sub-issues', 'issues/get-parent', 'issues/add-sub-issue', 'issues/remove-sub-issue',
  'issues/reprioritize-sub-issue',
]);
const DEPENDENCY_OPS = new Set([
  'issues/list-dependencies-blocked-by', 'issues/list-dependencies-blocking',
  'issues/add-blocked-by-dependency', 'issues/remove-dependency-blocked-by',
]);

function errorFromWorld(e) {
  if (!(e instanceof WorldError)) return e;
  if (e.kind === 'not_found') return new HttpError(404, e.message || 'Not Found');
  if (e.kind === 'forbidden') return new HttpError(403, e.message);
  const detail = { ...(e.details || { resource: 'Issue', code: 'custom' }) };
  // GitHub's `already_exists` and `invalid` errors carry no message.
  if (e.message) detail.message = e.message;
  return new HttpError(422, 'Validation Failed', { errors: [detail] });
}

module.exports = {
  handlers, HttpError, errorFromWorld, FREE, SUB_ISSUE_OPS, DEPENDENCY_OPS, issueJson, userJson, pullJson,
};
