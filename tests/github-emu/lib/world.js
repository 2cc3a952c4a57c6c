'use strict';
// The emulator's world: repositories, issues, relationships, comments,
// reactions, one Projects v2 board, users, tokens and permissions. It is
// seeded from (and dumps to) the seed format of docs/emulator.md, whose
// "state" member is a pm-bot State snapshot v1. Every operation checks the
// limits GitHub enforces beyond its schemas and throws WorldError on a
// refusal; a refused operation changes nothing.

const fs = require('node:fs');
const path = require('node:path');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');
const {
  nodeId, fold, byteCmp, charLength, parseRef, isoSeconds, canonicalize,
} = require('./util');

const LIMITS = Object.freeze({
  title: 256,
  body: 65536,
  label: 50,
  labelsPerIssue: 100,
  subIssues: 100,
  depth: 8,
  dependencies: 50,
});

const FIRST_DATABASE_ID = 1000001;
const FIRST_COMMENT_ID = 3000000001;
const FIRST_USER_ID = 1001;
const FIRST_REPO_ID = 100001;
const FIRST_LABEL_ID = 200001;
// Pull requests (their pull id and the id of their issue side) count in a
// range of their own, so adding a pull request to a seed does not move the
// database ids of issues created later.
const FIRST_PULL_ID = 2000000001;
const DEFAULT_BRANCH = 'main';
const REPO_NAME = '^[A-Za-z0-9_-]{1,39}/[A-Za-z0-9._-]{1,100}$';
const LOGIN = '^[A-Za-z0-9_-]{1,39}(\\[bot\\])?$';
const SHA = '^[0-9a-f]{40}$';
const DEFAULT_NOW = '2026-01-01T00:00:00Z';
const PERMISSIONS = ['none', 'read', 'triage', 'write', 'maintain', 'admin'];
const REACTIONS = ['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'];
const ISSUE_TYPE_COLORS = ['GRAY', 'BLUE', 'GREEN', 'YELLOW', 'ORANGE', 'RED', 'PINK', 'PURPLE'];
// What GitHub gives an organization that has not configured its issue types.
const DEFAULT_ISSUE_TYPES = Object.freeze([
  { name: 'Task', description: 'A specific piece of work', color: 'YELLOW', is_enabled: true },
  { name: 'Bug', description: 'An unexpected problem or behavior', color: 'RED', is_enabled: true },
  { name: 'Feature', description: 'A request, idea, or new functionality', color: 'BLUE', is_enabled: true },
]);
// GitHub's documented secondary limit on content-creating requests.
const DEFAULT_SECONDARY_WINDOWS = Object.freeze([{ count: 80, seconds: 60 }, { count: 500, seconds: 3600 }]);

// kind: not_found (404), unprocessable (422), forbidden (403).
// details: {resource, field, code} for GitHub's "errors" array.
class WorldError extends Error {
  constructor(kind, message, details) {
    super(message);
    this.kind = kind;
    this.details = details || null;
  }
}

class SeedError extends Error {
  constructor(messages) {
    super('invalid seed:\n' + messages.map((m) => '  ' + m).join('\n'));
    this.messages = messages;
  }
}

const STATE_SCHEMA_PATH = path.join(__dirname, '..', '..', '..', 'docs', 'schemas',
  'state.v1.schema.json');

const ENVELOPE_SCHEMA = {
  $id: 'https://pm-bot.invalid/schemas/emu-seed.schema.json',
  type: 'object',
  additionalProperties: false,
  required: ['state'],
  properties: {
    state: { $ref: 'https://pm-bot.invalid/schemas/state.v1.schema.json' },
    tokens: {
      type: 'object',
      propertyNames: { pattern: '^[\\x21-\\x7e]+$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['login'],
        properties: {
          login: { type: 'string', pattern: LOGIN },
          type: { enum: ['User', 'Bot'] },
          scopes: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
          read_only: { type: 'boolean' },
          projects: { enum: [true, false, 'read'] },
        },
      },
    },
    collaborators: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: { enum: PERMISSIONS.slice(1) },
      },
    },
    users: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          type: { enum: ['User', 'Bot', 'Organization'] },
          id: { type: 'integer', minimum: 1, maximum: 2147483647 },
        },
      },
    },
    comments: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['issue', 'user', 'body'],
        properties: {
          id: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
          issue: { type: 'string' },
          user: { type: 'string', minLength: 1 },
          body: { type: 'string' },
          created_at: { type: 'string', format: 'date-time' },
          updated_at: { type: 'string', format: 'date-time' },
          reactions: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['user', 'content'],
              properties: {
                id: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
                user: { type: 'string', minLength: 1 },
                content: { enum: REACTIONS },
              },
            },
          },
        },
      },
    },
    pulls: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['repo', 'number', 'title', 'user', 'state', 'head', 'base'],
        properties: {
          id: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
          issue_id: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
          repo: { type: 'string', pattern: REPO_NAME },
          number: { type: 'integer', minimum: 1, maximum: 2147483647 },
          title: { type: 'string', minLength: 1 },
          body: { type: ['string', 'null'] },
          user: { type: 'string', pattern: LOGIN },
          state: { enum: ['open', 'closed'] },
          merged: { type: 'boolean' },
          draft: { type: 'boolean' },
          labels: { type: 'array', items: { type: 'string', minLength: 1 } },
          created_at: { type: 'string', format: 'date-time' },
          updated_at: { type: 'string', format: 'date-time' },
          head: {
            type: 'object',
            additionalProperties: false,
            required: ['sha', 'ref'],
            properties: {
              sha: { type: 'string', pattern: SHA },
              ref: { type: 'string', minLength: 1 },
              repo: { type: 'string', pattern: REPO_NAME },
            },
          },
          base: {
            type: 'object',
            additionalProperties: false,
            required: ['sha', 'ref'],
            properties: {
              sha: { type: 'string', pattern: SHA },
              ref: { type: 'string', minLength: 1 },
            },
          },
        },
      },
    },
    repositories_meta: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          default_branch: { type: 'string', minLength: 1, pattern: '^[^\\s~^:?*\\[\\\\]+$' },
          private: { type: 'boolean' },
        },
      },
    },
    now: { type: 'string', format: 'date-time' },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      properties: {
        core: { $ref: '#/$defs/bucket' },
        graphql: { $ref: '#/$defs/bucket' },
      },
    },
    project_builtin_fields: { type: 'boolean' },
    issue_types: {
      type: 'object',
      propertyNames: { pattern: '^[A-Za-z0-9_-]{1,39}$' },
      additionalProperties: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 50 },
            description: { type: ['string', 'null'], maxLength: 255 },
            color: { enum: ISSUE_TYPE_COLORS },
            is_enabled: { type: 'boolean' },
          },
        },
      },
    },
    issue_type: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
    filter_misses: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    ghes: {
      type: 'object',
      additionalProperties: false,
      properties: { sub_issues: { type: 'boolean' }, dependencies: { type: 'boolean' }, issue_types: { type: 'boolean' } },
    },
    forbidden_fields: {
      type: 'object',
      additionalProperties: {
        type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, uniqueItems: true,
      },
    },
    secondary_limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        windows: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['count', 'seconds'],
            properties: {
              count: { type: 'integer', minimum: 1 },
              seconds: { type: 'integer', minimum: 1, maximum: 86400 },
            },
          },
        },
        status: { enum: [403, 429] },
      },
    },
  },
  $defs: {
    bucket: {
      type: 'object',
      additionalProperties: false,
      properties: {
        limit: { type: 'integer', minimum: 1 },
        remaining: { type: 'integer', minimum: 0 },
        reset_seconds: { type: 'integer', minimum: 1, maximum: 86400 },
      },
    },
  },
};

let seedValidator = null;
function validateEnvelope(seed) {
  if (!seedValidator) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    ajv.addSchema(JSON.parse(fs.readFileSync(STATE_SCHEMA_PATH, 'utf8')));
    seedValidator = ajv.compile(ENVELOPE_SCHEMA);
  }
  if (seedValidator(seed)) return [];
  return seedValidator.errors.map((e) => `${e.instancePath || '/'}: ${e.message}`);
}

function refCmp(a, b) {
  const r = byteCmp(fold(a.repo.name), fold(b.repo.name));
  return r !== 0 ? r : a.number - b.number;
}

function validDate(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}

class World {
  constructor(seed) {
    const problems = validateEnvelope(seed);
    if (problems.length) throw new SeedError(problems);
    this.problems = [];
    this.load(seed);
    if (this.problems.length) throw new SeedError(this.problems);
  }

  // ---- loading ------------------------------------------------------------

  load(seed) {
    const st = seed.state;
    this.extra = st.extra && typeof st.extra === 'object' ? { ...st.extra } : {};
    this.builtinFields = seed.project_builtin_fields !== false;
    this.rateLimit = {
      core: { limit: 5000, remaining: 5000, reset_seconds: 3600, ...(seed.rate_limit && seed.rate_limit.core) },
      graphql: { limit: 5000, remaining: 5000, reset_seconds: 3600, ...(seed.rate_limit && seed.rate_limit.graphql) },
    };
    // GitHub Enterprise Server up to 3.21: no sub-issues, no dependencies.
    this.features = {
      subIssues: !(seed.ghes && seed.ghes.sub_issues === false),
      dependencies: !(seed.ghes && seed.ghes.dependencies === false),
      issueTypes: !(seed.ghes && seed.ghes.issue_types === false),
    };
    this.secondary = seed.secondary_limits ? {
      windows: (seed.secondary_limits.windows || DEFAULT_SECONDARY_WINDOWS).map((w) => ({ ...w })),
      status: seed.secondary_limits.status || 403,
    } : null;
    this.repos = new Map(); // fold(name) -> repo
    this.byDbId = new Map(); // database id -> issue
    this.nodes = new Map(); // node id -> object
    this.users = new Map(); // fold(login) -> user
    this.tokens = new Map(); // token -> {login, type, scopes, user}
    this.collaborators = new Map(); // fold(repo) -> Map(fold(login) -> {login, permission})
    this.comments = new Map(); // id -> comment
    this.forks = new Map(); // fold(name) -> head repository of a fork pull request
    this.pullIds = new Set(); // pull ids and their issue ids: never issue database ids
    this.nextUserId = FIRST_USER_ID;
    this.nextLabelId = FIRST_LABEL_ID;
    this.seedUsers = seed.users || {};

    // Users named in the seed get ids first, in a fixed order, so ids do not
    // depend on the order of keys in the seed file.
    for (const login of Object.keys(this.seedUsers).sort(byteCmp)) {
      const u = this.seedUsers[login];
      this.ensureUser(login, u.type, u.id);
    }

    const repoNames = new Map();
    for (const r of st.repositories || []) {
      const key = fold(r.repo);
      if (repoNames.has(key)) this.problems.push(`state: repository ${r.repo} listed twice`);
      repoNames.set(key, { name: r.repo, inState: true });
    }
    for (const r of Object.keys(seed.collaborators || {})) {
      if (!/^[A-Za-z0-9_-]{1,39}\/[A-Za-z0-9._-]{1,100}$/.test(r)) {
        this.problems.push(`collaborators: ${r} is not OWNER/NAME`);
        continue;
      }
      if (!repoNames.has(fold(r))) repoNames.set(fold(r), { name: r, inState: false });
    }
    const meta = seed.repositories_meta || {};
    for (const r of Object.keys(meta)) {
      if (!new RegExp(REPO_NAME).test(r)) {
        this.problems.push(`repositories_meta: ${r} is not OWNER/NAME`);
        continue;
      }
      if (!repoNames.has(fold(r))) repoNames.set(fold(r), { name: r, inState: false });
    }
    const forkNames = new Map();
    for (const p of seed.pulls || []) {
      if (!repoNames.has(fold(p.repo))) repoNames.set(fold(p.repo), { name: p.repo, inState: false });
      if (p.head.repo && fold(p.head.repo) !== fold(p.repo)) forkNames.set(fold(p.head.repo), p);
    }
    const metaOf = new Map(Object.keys(meta).map((r) => [fold(r), meta[r]]));
    let repoId = FIRST_REPO_ID;
    for (const key of [...repoNames.keys()].sort(byteCmp)) {
      const { name, inState } = repoNames.get(key);
      const [owner, short] = name.split('/');
      const m = metaOf.get(key);
      const repo = {
        kind: 'repo', name, owner, short, key, inState, id: repoId, node_id: nodeId('R_', repoId),
        issues: new Map(), pulls: new Map(), maxNumber: 0, labels: new Map(),
        inMeta: Boolean(m), default_branch: (m && m.default_branch) || DEFAULT_BRANCH,
        private: !(m && m.private === false), fork: false,
      };
      repoId++;
      this.repos.set(key, repo);
      this.nodes.set(repo.node_id, repo);
    }
    // The head repository of a fork pull request is not part of the world
    // (no issues, no access): it only shows in the pull request's head.
    for (const key of [...forkNames.keys()].sort(byteCmp)) {
      const p = forkNames.get(key);
      if (this.repos.has(key)) {
        this.problems.push(`pulls: head repository ${p.head.repo} of ${p.repo}#${p.number} is a repository of the world, not a fork`);
        continue;
      }
      const base = this.repos.get(fold(p.repo));
      const [owner, short] = p.head.repo.split('/');
      this.forks.set(key, {
        kind: 'fork', name: p.head.repo, owner, short, key, id: repoId, node_id: nodeId('R_', repoId),
        default_branch: base.default_branch, private: base.private, fork: true,
      });
      repoId++;
    }

    // Issues, in pm-bot's order (repository ignoring case, then number).
    const raw = [];
    for (const r of st.repositories || []) {
      for (const i of r.issues) raw.push({ repo: this.repos.get(fold(r.repo)), src: i });
    }
    raw.sort((a, b) => refCmp({ repo: a.repo, number: a.src.number }, { repo: b.repo, number: b.src.number }));
    let maxId = 0;
    let latest = 0;
    for (const { repo, src } of raw) {
      if (repo.issues.has(src.number)) {
        this.problems.push(`state: ${repo.name}#${src.number} listed twice`);
        continue;
      }
      if (this.byDbId.has(src.database_id)) {
        this.problems.push(`state: database id ${src.database_id} used twice`);
        continue;
      }
      if (this.nodes.has(src.node_id)) {
        this.problems.push(`state: node id ${src.node_id} used twice`);
        continue;
      }
      const ms = Date.parse(src.updated_at);
      latest = Math.max(latest, ms);
      const issue = {
        kind: 'issue', repo, number: src.number, database_id: src.database_id,
        node_id: src.node_id, title: src.title, body: src.body == null ? '' : src.body,
        labels: [], state: src.state, state_reason: src.state === 'closed' ? 'completed' : null,
        author: this.ensureUser(src.author, src.author_type),
        created_at: src.updated_at, updated_at: src.updated_at,
        closed_at: src.state === 'closed' ? src.updated_at : null,
        parent: null, children: [], blockedBy: [], blocking: [], comments: [], issueType: null,
        _parentRef: src.parent || null, _blockedRefs: src.blocked_by || [],
      };
      for (const l of src.labels || []) {
        if (issue.labels.includes(l)) continue;
        this.catalogLabel(repo, l);
        issue.labels.push(l);
      }
      repo.issues.set(issue.number, issue);
      repo.maxNumber = Math.max(repo.maxNumber, issue.number);
      this.byDbId.set(issue.database_id, issue);
      this.nodes.set(issue.node_id, issue);
      maxId = Math.max(maxId, issue.database_id);
    }
    // Relationships: the emulator's world is closed, so every ref must
    // resolve (GitHub has no dangling edges).
    for (const { repo, src } of raw) {
      const issue = repo.issues.get(src.number);
      if (!issue || issue.database_id !== src.database_id) continue;
      if (issue._parentRef) {
        const p = this.resolveRef(issue._parentRef);
        if (!p) this.problems.push(`state: parent ${issue._parentRef} of ${this.ref(issue)} is not in the seed`);
        else if (p === issue) this.problems.push(`state: ${this.ref(issue)} is its own parent`);
        else {
          issue.parent = p;
          p.children.push(issue);
        }
      }
      for (const ref of issue._blockedRefs) {
        const b = this.resolveRef(ref);
        if (!b) this.problems.push(`state: blocker ${ref} of ${this.ref(issue)} is not in the seed`);
        else if (b === issue) this.problems.push(`state: ${this.ref(issue)} blocks itself`);
        else if (issue.blockedBy.includes(b)) this.problems.push(`state: ${this.ref(issue)} lists blocker ${ref} twice`);
        else {
          issue.blockedBy.push(b);
          b.blocking.push(issue);
        }
      }
      delete issue._parentRef;
      delete issue._blockedRefs;
    }
    for (const issue of this.byDbId.values()) {
      const seen = new Set();
      for (let p = issue; p; p = p.parent) {
        if (seen.has(p)) {
          this.problems.push(`state: the parent chain of ${this.ref(issue)} is a cycle`);
          break;
        }
        seen.add(p);
      }
    }

    this.loadProject(st.project || null);

    for (const [token, t] of Object.entries(seed.tokens || {})) {
      const type = t.type || (t.login.endsWith('[bot]') ? 'Bot' : 'User');
      this.tokens.set(token, {
        login: t.login, type, scopes: t.scopes || [], user: this.ensureUser(t.login, type),
        read_only: t.read_only === true, projects: t.projects === undefined ? true : t.projects,
      });
    }
    for (const repoName of Object.keys(seed.collaborators || {}).sort(byteCmp)) {
      const m = new Map();
      for (const login of Object.keys(seed.collaborators[repoName]).sort(byteCmp)) {
        m.set(fold(login), { login, permission: seed.collaborators[repoName][login] });
        this.ensureUser(login);
      }
      this.collaborators.set(fold(repoName), m);
    }

    latest = Math.max(latest, this.loadPulls(seed.pulls || []));
    // A pull request seeded without stamps was opened at the seed's now
    // (else at the latest stamp so far); later stamps come after it.
    const unstamped = [...this.allPulls()].filter((p) => p.created_at === null);
    if (unstamped.length) {
      const opened = seed.now ? Date.parse(seed.now) : (latest || Date.parse(DEFAULT_NOW));
      for (const p of unstamped) {
        p.created_at = isoSeconds(opened);
        p.updated_at = p.created_at;
        if (p.state === 'closed') p.closed_at = p.updated_at;
      }
      latest = Math.max(latest, opened);
    }

    let maxCommentId = 0;
    for (const c of seed.comments || []) {
      if (c.id) maxCommentId = Math.max(maxCommentId, c.id);
      for (const r of c.reactions || []) if (r.id) maxCommentId = Math.max(maxCommentId, r.id);
    }
    this.nextCommentId = Math.max(FIRST_COMMENT_ID, maxCommentId + 1);
    for (const c of seed.comments || []) {
      const issue = this.resolveRef(c.issue, true);
      if (!issue) {
        this.problems.push(`comments: issue ${c.issue} is not in the seed`);
        continue;
      }
      const id = c.id || this.nextCommentId++;
      if (this.comments.has(id)) {
        this.problems.push(`comments: id ${id} used twice`);
        continue;
      }
      const created = c.created_at || issue.updated_at;
      const comment = {
        kind: 'comment', id, node_id: nodeId('IC_', id), issue, body: c.body,
        user: this.ensureUser(c.user), created_at: created, updated_at: c.updated_at || created,
        reactions: [],
      };
      latest = Math.max(latest, Date.parse(comment.updated_at));
      for (const r of c.reactions || []) {
        const user = this.ensureUser(r.user);
        if (comment.reactions.some((x) => x.user === user && x.content === r.content)) continue;
        const rid = r.id || this.nextCommentId++;
        comment.reactions.push({ id: rid, node_id: nodeId('REA_', rid), user, content: r.content, created_at: created });
      }
      this.comments.set(id, comment);
      this.nodes.set(comment.node_id, comment);
      issue.comments.push(comment);
    }

    const extraNext = Number.isSafeInteger(this.extra.next_database_id) ? this.extra.next_database_id : 0;
    this.nextDbId = Math.max(FIRST_DATABASE_ID, maxId + 1, extraNext);
    this.latestMs = latest;
    this.nowMs = seed.now ? Date.parse(seed.now) : (latest || Date.parse(DEFAULT_NOW));
    this.seedNow = seed.now || null;
    this.loadIssueTypes(seed);
    // Issues a narrowing GraphQL issues filter never returns, as if GitHub
    // matched them differently: for tests that a client proves absence.
    this.filterMisses = new Set();
    for (const ref of seed.filter_misses || []) {
      const issue = this.resolveRef(ref);
      if (!issue) this.problems.push(`filter_misses: ${ref} is not an issue of the seed`);
      else this.filterMisses.add(issue);
    }
    this.forbidden = new Map(); // issue -> Set(field names GraphQL refuses to show)
    for (const ref of Object.keys(seed.forbidden_fields || {}).sort(byteCmp)) {
      const issue = this.resolveRef(ref);
      if (!issue) this.problems.push(`forbidden_fields: ${ref} is not an issue of the seed`);
      else this.forbidden.set(issue, new Set(seed.forbidden_fields[ref]));
    }
  }

  // Issue types belong to organizations: the seed's list, else GitHub's
  // three defaults. Ids are given in the order of the owners' logins.
  loadIssueTypes(seed) {
    this.issueTypes = new Map(); // fold(org) -> [type]
    this.seededIssueTypes = new Map(); // fold(org) -> login, the orgs the seed configures
    const seeded = seed.issue_types || {};
    const orgs = new Map();
    for (const r of this.repos.values()) orgs.set(fold(r.owner), r.owner);
    if (this.project) orgs.set(fold(this.project.owner), this.project.owner);
    for (const o of Object.keys(seeded)) {
      if (!orgs.has(fold(o))) orgs.set(fold(o), o);
      this.seededIssueTypes.set(fold(o), o);
    }
    let n = 1;
    for (const key of [...orgs.keys()].sort(byteCmp)) {
      const login = orgs.get(key);
      const u = this.user(login);
      if (u && u.type !== 'Organization') {
        if (this.seededIssueTypes.has(key)) this.problems.push(`issue_types: ${login} is not an organization`);
        continue;
      }
      const list = Object.keys(seeded).find((o) => fold(o) === key);
      const types = [];
      for (const t of list ? seeded[list] : DEFAULT_ISSUE_TYPES) {
        if (types.some((x) => fold(x.name) === fold(t.name))) {
          this.problems.push(`issue_types: ${login} lists ${t.name} twice`);
          continue;
        }
        const id = n++;
        const type = {
          kind: 'issueType', owner: login, id, node_id: nodeId('IT_', id), name: t.name,
          description: t.description == null ? null : t.description, color: t.color || 'GRAY',
          is_enabled: t.is_enabled !== false,
        };
        types.push(type);
        this.nodes.set(type.node_id, type);
      }
      this.issueTypes.set(key, types);
    }
    for (const ref of Object.keys(seed.issue_type || {}).sort(byteCmp)) {
      const issue = this.resolveRef(ref);
      if (!issue) {
        this.problems.push(`issue_type: ${ref} is not an issue of the seed`);
        continue;
      }
      const want = seed.issue_type[ref];
      const t = (this.issueTypes.get(fold(issue.repo.owner)) || []).find((x) => fold(x.name) === fold(want));
      if (!t) this.problems.push(`issue_type: ${want} is not an issue type of ${issue.repo.owner}`);
      else issue.issueType = t;
    }
  }

  // The issue types of an organization (null: a user's repository has none).
  typesOf(ownerLogin) {
    return this.issueTypes.get(fold(ownerLogin)) || null;
  }

  // A field of an issue the seed makes unreadable in GraphQL.
  isForbidden(issue, field) {
    const f = this.forbidden.get(issue);
    return Boolean(f && f.has(field));
  }

  // Pull requests share the number space of their repository's issues and
  // answer the issue endpoints (comments, reactions, labels) like issues do,
  // but they are not issues of pm-bot's State: they stay out of the state
  // document, GraphQL's repository.issues and the issue database ids.
  // Returns the latest stamp seen, in ms.
  loadPulls(list) {
    let latest = 0;
    const explicit = new Set();
    for (const p of list) {
      for (const id of [p.id, p.issue_id]) {
        if (id === undefined) continue;
        if (explicit.has(id) || this.byDbId.has(id)) this.problems.push(`pulls: id ${id} of ${p.repo}#${p.number} is already used`);
        explicit.add(id);
      }
    }
    let next = Math.max(FIRST_PULL_ID, ...[...explicit].map((id) => id + 1));
    const alloc = () => {
      while (explicit.has(next) || this.byDbId.has(next)) next++;
      return next++;
    };
    const sorted = list.slice().sort((a, b) => byteCmp(fold(a.repo), fold(b.repo)) || a.number - b.number);
    for (const p of sorted) {
      const repo = this.repos.get(fold(p.repo));
      const ref = `${repo.name}#${p.number}`;
      if (repo.issues.has(p.number)) {
        this.problems.push(`pulls: ${ref} is also an issue; pull requests and issues share numbers`);
        continue;
      }
      if (repo.pulls.has(p.number)) {
        this.problems.push(`pulls: ${ref} listed twice`);
        continue;
      }
      if (charLength(p.title) > LIMITS.title) this.problems.push(`pulls: title of ${ref} is longer than ${LIMITS.title} characters`);
      if (p.merged && p.state !== 'closed') this.problems.push(`pulls: ${ref} is merged but not closed; a merged pull request is closed`);
      const body = p.body == null ? '' : p.body;
      if (charLength(body) > LIMITS.body) this.problems.push(`pulls: body of ${ref} is longer than ${LIMITS.body} characters`);
      const issueId = p.issue_id || alloc();
      const id = p.id || alloc();
      const headName = p.head.repo || repo.name;
      const headRepo = fold(headName) === repo.key ? repo : this.forks.get(fold(headName));
      if (!headRepo) continue; // reported with the forks
      const created = p.created_at || p.updated_at || null;
      const updated = p.updated_at || created;
      for (const s of [created, updated]) if (s) latest = Math.max(latest, Date.parse(s));
      const pull = {
        kind: 'pull', repo, number: p.number, database_id: issueId, id, node_id: nodeId('PR_', id),
        title: p.title, body, labels: [], state: p.state, state_reason: null, draft: p.draft === true,
        merged: p.merged === true,
        author: this.ensureUser(p.user), created_at: created, updated_at: updated,
        closed_at: p.state === 'closed' ? updated : null,
        parent: null, children: [], blockedBy: [], blocking: [], comments: [],
        head: { sha: p.head.sha, ref: p.head.ref, repo: headRepo, user: this.owner(headRepo.owner) || this.ensureUser(headRepo.owner) },
        base: { sha: p.base.sha, ref: p.base.ref },
      };
      for (const l of p.labels || []) {
        if (pull.labels.includes(l)) continue;
        this.catalogLabel(repo, l);
        pull.labels.push(l);
      }
      this.pullIds.add(issueId);
      this.pullIds.add(id);
      repo.pulls.set(pull.number, pull);
      repo.maxNumber = Math.max(repo.maxNumber, pull.number);
      this.nodes.set(pull.node_id, pull);
    }
    return latest;
  }

  * allPulls() {
    const repos = [...this.repos.values()].sort((a, b) => byteCmp(a.key, b.key));
    for (const r of repos) yield* [...r.pulls.values()].sort((a, b) => a.number - b.number);
  }

  loadProject(p) {
    this.project = null;
    if (!p) return;
    const proj = {
      kind: 'project', owner: p.owner, number: p.number, node_id: p.node_id,
      fields: [], fieldById: new Map(), items: [], itemById: new Map(), itemByIssue: new Map(),
    };
    if (this.nodes.has(p.node_id)) this.problems.push(`project: node id ${p.node_id} used twice`);
    const names = new Set();
    for (const f of p.fields || []) {
      if (names.has(fold(f.name)) || proj.fieldById.has(f.id)) {
        this.problems.push(`project: field ${f.name} (${f.id}) listed twice`);
        continue;
      }
      names.add(fold(f.name));
      const field = { kind: 'field', id: f.id, name: f.name, type: f.type, options: null, project: proj };
      if (f.type === 'single_select') {
        field.options = [];
        for (const o of f.options) {
          if (field.options.some((x) => x.id === o.id || x.name === o.name)) {
            this.problems.push(`project: option ${o.name} (${o.id}) of field ${f.name} listed twice`);
            continue;
          }
          field.options.push({ id: o.id, name: o.name });
        }
      }
      proj.fields.push(field);
      proj.fieldById.set(field.id, field);
      this.nodes.set(field.id, field);
    }
    if (this.builtinFields) {
      // GitHub lists a board's built-in Title field among its fields and
      // every item's values; a client must tell it from custom fields.
      let id = 'PVTF_title_' + p.number;
      while (proj.fieldById.has(id) || this.nodes.has(id)) id += '_';
      proj.titleField = { kind: 'field', id, name: 'Title', type: 'title', options: null, project: proj, builtin: true };
      proj.fieldById.set(id, proj.titleField);
      this.nodes.set(id, proj.titleField);
    }
    for (const it of p.items || []) {
      const issue = this.resolveRef(it.issue);
      if (!issue) {
        this.problems.push(`project: item ${it.id} names ${it.issue}, which is not in the seed`);
        continue;
      }
      if (proj.itemById.has(it.id) || this.nodes.has(it.id)) {
        this.problems.push(`project: item id ${it.id} used twice`);
        continue;
      }
      if (proj.itemByIssue.has(issue)) {
        this.problems.push(`project: ${it.issue} has two items`);
        continue;
      }
      const item = { kind: 'item', id: it.id, issue, project: proj, values: new Map() };
      for (const [name, value] of Object.entries(it.values || {})) {
        const field = proj.fields.find((f) => f.name === name);
        if (!field) {
          this.problems.push(`project: item ${it.id} has a value for ${name}, which is no field`);
          continue;
        }
        const why = this.valueProblem(field, value);
        if (why) this.problems.push(`project: item ${it.id}: ${why}`);
        else item.values.set(field, value);
      }
      proj.items.push(item);
      proj.itemById.set(item.id, item);
      proj.itemByIssue.set(issue, item);
      this.nodes.set(item.id, item);
    }
    this.nodes.set(proj.node_id, proj);
    this.project = proj;
  }

  valueProblem(field, value) {
    switch (field.type) {
      case 'number':
        return typeof value === 'number' ? null : `${field.name} takes a number`;
      case 'text':
        return typeof value === 'string' ? null : `${field.name} takes a string`;
      case 'date':
        return typeof value === 'string' && validDate(value) ? null : `${field.name} takes a date YYYY-MM-DD`;
      case 'single_select':
        return field.options.some((o) => o.name === value) ? null
          : `${field.name} takes one of ${field.options.map((o) => o.name).join(', ')}`;
      default:
        return `${field.name} cannot be set`;
    }
  }

  // ---- lookups ------------------------------------------------------------

  ensureUser(login, type, id) {
    const key = fold(login);
    let u = this.users.get(key);
    if (u) return u;
    const t = type || (this.seedUsers[login] && this.seedUsers[login].type)
      || (login.endsWith('[bot]') ? 'Bot' : 'User');
    const uid = id || this.allocUserId();
    u = {
      kind: 'user', login, type: t, id: uid,
      node_id: nodeId(t === 'Bot' ? 'BOT_' : t === 'Organization' ? 'O_' : 'U_', uid),
      // GraphQL names a bot without the "[bot]" suffix REST shows.
      graphqlLogin: login.replace(/\[bot\]$/, ''),
    };
    this.users.set(key, u);
    this.nodes.set(u.node_id, u);
    return u;
  }

  allocUserId() {
    const used = new Set([...this.users.values()].map((u) => u.id));
    while (used.has(this.nextUserId)) this.nextUserId++;
    return this.nextUserId++;
  }

  user(login) {
    return this.users.get(fold(login)) || null;
  }

  // The owner of a repository or board: an Organization unless the seed's
  // users say otherwise.
  owner(login) {
    const u = this.user(login);
    if (u) return u;
    const known = [...this.repos.values()].some((r) => fold(r.owner) === fold(login))
      || (this.project && fold(this.project.owner) === fold(login));
    return known ? this.ensureUser(login, 'Organization') : null;
  }

  catalogLabel(repo, name) {
    const key = fold(name);
    let l = repo.labels.get(key);
    if (!l) {
      const id = this.nextLabelId++;
      l = { id, node_id: nodeId('LA_', id), name };
      repo.labels.set(key, l);
    }
    return l;
  }

  findLabel(repo, name) {
    return repo.labels.get(fold(name)) || null;
  }

  // POST /labels: a name (compared without regard to case) exists once.
  createLabel(repo, { name, color, description }) {
    if (charLength(name) > LIMITS.label) {
      throw new WorldError('unprocessable', `name is too long (maximum is ${LIMITS.label} characters)`,
        { resource: 'Label', code: 'invalid', field: 'name' });
    }
    if (description != null && charLength(description) > 100) {
      throw new WorldError('unprocessable', 'description is too long (maximum is 100 characters)',
        { resource: 'Label', code: 'invalid', field: 'description' });
    }
    if (color != null && !/^#?[0-9a-fA-F]{6}$/.test(color)) {
      throw new WorldError('unprocessable', undefined, { resource: 'Label', code: 'invalid', field: 'color' });
    }
    if (repo.labels.has(fold(name))) {
      throw new WorldError('unprocessable', undefined, { resource: 'Label', code: 'already_exists', field: 'name' });
    }
    const l = this.catalogLabel(repo, name);
    l.description = description == null ? null : description;
    l.color = color ? color.replace(/^#/, '').toLowerCase() : 'ededed';
    return l;
  }

  // DELETE /labels/{name}: also off every issue and pull request carrying it.
  deleteLabel(repo, name) {
    const key = fold(name);
    if (!repo.labels.has(key)) return false;
    repo.labels.delete(key);
    for (const i of [...repo.issues.values(), ...repo.pulls.values()]) {
      const kept = i.labels.filter((n) => fold(n) !== key);
      if (kept.length !== i.labels.length) i.labels = kept;
    }
    return true;
  }

  repo(name) {
    return this.repos.get(fold(name)) || null;
  }

  issue(repo, number) {
    return repo.issues.get(number) || null;
  }

  // What the REST issue endpoints find under a number: GitHub answers them
  // for pull requests too.
  issueOrPull(repo, number) {
    return repo.issues.get(number) || repo.pulls.get(number) || null;
  }

  pull(repo, number) {
    return repo.pulls.get(number) || null;
  }

  resolveRef(ref, withPulls) {
    const r = parseRef(ref);
    if (!r) return null;
    const repo = this.repo(r.repo);
    if (!repo) return null;
    return withPulls ? this.issueOrPull(repo, r.number) : this.issue(repo, r.number);
  }

  ref(issue) {
    return `${issue.repo.name}#${issue.number}`;
  }

  token(tok) {
    return this.tokens.get(tok) || null;
  }

  // A repository without a collaborators entry is open: every token is
  // admin there. With an entry, the owner login is admin, listed logins have
  // their permission and everyone else none.
  permission(login, repo) {
    const m = this.collaborators.get(repo.key);
    if (!m) return 'admin';
    const c = m.get(fold(login));
    if (c) return c.permission;
    if (fold(login) === fold(repo.owner)) return 'admin';
    // Everyone may read a public repository (and open issues, comment
    // and react there), as on GitHub.
    return repo.private ? 'none' : 'read';
  }

  static atLeast(have, need) {
    return PERMISSIONS.indexOf(have) >= PERMISSIONS.indexOf(need);
  }

  // ---- clock and ids ------------------------------------------------------

  // Stamps are strictly increasing whole seconds, never before the seed's
  // "now": the same seed and requests give the same bytes.
  stamp() {
    const next = Math.floor(this.latestMs / 1000) * 1000 + 1000;
    const ms = Math.max(this.nowMs, next);
    this.latestMs = ms;
    return isoSeconds(ms);
  }

  allocDbId(prefix) {
    for (;;) {
      const id = this.nextDbId++;
      const nid = nodeId(prefix, id);
      if (!this.byDbId.has(id) && !this.pullIds.has(id) && !this.nodes.has(nid)) return { id, node_id: nid };
    }
  }

  allocCommentId(prefix) {
    for (;;) {
      const id = this.nextCommentId++;
      const nid = nodeId(prefix, id);
      if (!this.comments.has(id) && !this.nodes.has(nid)) return { id, node_id: nid };
    }
  }

  // ---- checks -------------------------------------------------------------

  checkTitle(title) {
    if (typeof title !== 'string' || title.trim() === '') {
      throw new WorldError('unprocessable', 'title is missing',
        { resource: 'Issue', code: 'missing_field', field: 'title' });
    }
    if (charLength(title) > LIMITS.title) {
      throw new WorldError('unprocessable', `title is too long (maximum is ${LIMITS.title} characters)`,
        { resource: 'Issue', code: 'custom', field: 'title' });
    }
  }

  checkBody(body) {
    if (charLength(body) > LIMITS.body) {
      throw new WorldError('unprocessable', `body is too long (maximum is ${LIMITS.body} characters)`,
        { resource: 'Issue', code: 'custom', field: 'body' });
    }
  }

  // GitHub words the comment limit differently from the issue body's.
  checkCommentBody(body) {
    if (charLength(body) > LIMITS.body) {
      throw new WorldError('unprocessable', `Body is too long (maximum is ${LIMITS.body} characters)`,
        { resource: 'IssueComment', code: 'unprocessable', field: 'data' });
    }
  }

  // Label names as the issue will hold them: an existing label of the
  // repository keeps its own spelling, as on GitHub.
  labelNames(repo, names) {
    const out = [];
    for (const n of names) {
      if (typeof n !== 'string' || n.trim() === '') {
        throw new WorldError('unprocessable', 'label name is missing',
          { resource: 'Label', code: 'missing_field', field: 'name' });
      }
      if (charLength(n) > LIMITS.label) {
        throw new WorldError('unprocessable', `name is too long (maximum is ${LIMITS.label} characters)`,
          { resource: 'Label', code: 'custom', field: 'name' });
      }
      const existing = repo.labels.get(fold(n));
      const name = existing ? existing.name : n;
      if (!out.includes(name)) out.push(name);
    }
    return out;
  }

  checkLabelCount(labels) {
    if (labels.length > LIMITS.labelsPerIssue) {
      throw new WorldError('unprocessable', `an issue has at most ${LIMITS.labelsPerIssue} labels`,
        { resource: 'Issue', code: 'custom', field: 'labels' });
    }
  }

  commitLabels(repo, labels) {
    for (const l of labels) this.catalogLabel(repo, l);
  }

  // ---- issue operations ---------------------------------------------------

  // parent (an issue) and issueType (a type of the repository's owner) are
  // GraphQL's createIssue options; every check runs before anything changes.
  createIssue(repo, { title, body, labels, parent, issueType }, user) {
    this.checkTitle(title);
    const b = body == null ? '' : body;
    this.checkBody(b);
    const names = this.labelNames(repo, labels || []);
    this.checkLabelCount(names);
    if (parent) {
      const fail = (message) => {
        throw new WorldError('unprocessable', message, { resource: 'Issue', code: 'custom', field: 'parent' });
      };
      if (fold(parent.repo.owner) !== fold(repo.owner)) {
        fail('The sub-issue must belong to the same repository owner as the parent issue');
      }
      if (parent.children.length >= LIMITS.subIssues) fail(`Parent cannot have more than ${LIMITS.subIssues} sub-issues`);
      if (this.level(parent) + 1 > LIMITS.depth) fail(`Sub-issues cannot be nested more than ${LIMITS.depth} levels deep`);
    }
    if (issueType && (fold(issueType.owner) !== fold(repo.owner) || !issueType.is_enabled)) {
      throw new WorldError('unprocessable', `Issue type ${issueType.name} is not available in ${repo.name}`);
    }
    this.commitLabels(repo, names);
    const { id, node_id } = this.allocDbId('I_');
    const now = this.stamp();
    const issue = {
      kind: 'issue', repo, number: repo.maxNumber + 1, database_id: id, node_id, title, body: b,
      labels: names, state: 'open', state_reason: null, author: user, created_at: now,
      updated_at: now, closed_at: null, parent: parent || null, children: [], blockedBy: [], blocking: [],
      comments: [], issueType: issueType || null,
    };
    if (parent) parent.children.push(issue);
    repo.maxNumber = issue.number;
    repo.issues.set(issue.number, issue);
    this.byDbId.set(id, issue);
    this.nodes.set(node_id, issue);
    return issue;
  }

  // patch: any of title, body (null = ""), state, state_reason, labels.
  updateIssue(issue, patch) {
    const next = {};
    if ('title' in patch) {
      this.checkTitle(patch.title);
      next.title = patch.title;
    }
    if ('body' in patch) {
      next.body = patch.body == null ? '' : patch.body;
      this.checkBody(next.body);
    }
    if ('labels' in patch) {
      next.labels = this.labelNames(issue.repo, patch.labels);
      this.checkLabelCount(next.labels);
    }
    if ('state' in patch && patch.state != null) next.state = patch.state;
    if (issue.kind === 'pull' && issue.merged && next.state === 'open') {
      // GitHub keeps a merged pull request closed for good.
      throw new WorldError('unprocessable', 'state cannot be changed. The pull request cannot be reopened.',
        { resource: 'PullRequest', code: 'custom', field: 'state' });
    }
    let changed = false;
    for (const k of ['title', 'body', 'state']) {
      if (k in next && next[k] !== issue[k]) changed = true;
    }
    if (next.labels && next.labels.join('\0') !== issue.labels.join('\0')) changed = true;
    const reason = 'state_reason' in patch ? patch.state_reason : undefined;
    if (!changed && (reason === undefined || reason === issue.state_reason)) return false;
    if (next.labels) this.commitLabels(issue.repo, next.labels);
    const now = this.stamp();
    if (next.state && next.state !== issue.state) {
      issue.closed_at = next.state === 'closed' ? now : null;
      issue.state_reason = next.state === 'closed' ? 'completed' : 'reopened';
    }
    if (reason !== undefined && reason !== null) issue.state_reason = reason;
    if (issue.kind === 'pull') issue.state_reason = null;
    Object.assign(issue, next);
    issue.updated_at = now;
    return true;
  }

  // A push to the pull request's head branch.
  movePullHead(pull, sha) {
    if (pull.head.sha === sha) return false;
    pull.head.sha = sha;
    pull.updated_at = this.stamp();
    return true;
  }

  addLabels(issue, names) {
    const add = this.labelNames(issue.repo, names);
    const labels = issue.labels.slice();
    for (const l of add) if (!labels.includes(l)) labels.push(l);
    this.checkLabelCount(labels);
    if (labels.length !== issue.labels.length) {
      this.commitLabels(issue.repo, labels);
      issue.labels = labels;
      issue.updated_at = this.stamp();
    }
    return issue.labels;
  }

  setLabels(issue, names) {
    this.updateIssue(issue, { labels: names });
    return issue.labels;
  }

  removeLabel(issue, name) {
    let i = issue.labels.indexOf(name);
    if (i < 0) i = issue.labels.findIndex((l) => fold(l) === fold(name));
    if (i < 0) throw new WorldError('not_found', 'Label does not exist');
    issue.labels = issue.labels.filter((_, j) => j !== i);
    issue.updated_at = this.stamp();
    return issue.labels;
  }

  removeAllLabels(issue) {
    if (issue.labels.length === 0) return;
    issue.labels = [];
    issue.updated_at = this.stamp();
  }

  // type: an issue type of the repository's owner, or null to clear.
  setIssueType(issue, type) {
    if (type && (fold(type.owner) !== fold(issue.repo.owner) || !type.is_enabled)) {
      throw new WorldError('unprocessable', `Issue type ${type.name} is not available in ${issue.repo.name}`);
    }
    if (issue.issueType === (type || null)) return false;
    issue.issueType = type || null;
    issue.updated_at = this.stamp();
    return true;
  }

  // ---- sub-issues ---------------------------------------------------------

  level(issue) {
    let n = 1;
    for (let p = issue.parent; p; p = p.parent) n++;
    return n;
  }

  height(issue) {
    let h = 1;
    for (const c of issue.children) h = Math.max(h, 1 + this.height(c));
    return h;
  }

  // subIssueId is a database id; a number (or anything else that names no
  // issue) is a 404, as on GitHub.
  addSubIssue(parent, subIssueId, replaceParent) {
    const child = this.byDbId.get(subIssueId);
    if (!child) throw new WorldError('not_found', 'Not Found');
    const fail = (message) => {
      throw new WorldError('unprocessable', message, { resource: 'Issue', code: 'custom', field: 'sub_issue_id' });
    };
    if (child === parent) fail('An issue cannot be a sub-issue of itself');
    if (fold(child.repo.owner) !== fold(parent.repo.owner)) {
      fail('The sub-issue must belong to the same repository owner as the parent issue');
    }
    if (child.parent === parent) fail('Issue may not contain duplicate sub-issues');
    if (child.parent && !replaceParent) fail('Sub-issue may only have one parent');
    for (let p = parent; p; p = p.parent) {
      if (p === child) fail('Sub-issue cannot be an ancestor of its parent');
    }
    if (parent.children.length >= LIMITS.subIssues) {
      fail(`Parent cannot have more than ${LIMITS.subIssues} sub-issues`);
    }
    if (this.level(parent) + this.height(child) > LIMITS.depth) {
      fail(`Sub-issues cannot be nested more than ${LIMITS.depth} levels deep`);
    }
    if (child.parent) child.parent.children = child.parent.children.filter((c) => c !== child);
    child.parent = parent;
    parent.children.push(child);
    child.updated_at = this.stamp();
    return child;
  }

  removeSubIssue(parent, subIssueId) {
    const child = this.byDbId.get(subIssueId);
    if (!child || child.parent !== parent) throw new WorldError('not_found', 'Not Found');
    parent.children = parent.children.filter((c) => c !== child);
    child.parent = null;
    child.updated_at = this.stamp();
    return child;
  }

  // ---- dependencies -------------------------------------------------------

  addBlockedBy(issue, blockerId) {
    const blocker = this.byDbId.get(blockerId);
    if (!blocker) throw new WorldError('not_found', 'Not Found');
    const fail = (message) => {
      throw new WorldError('unprocessable', message, { resource: 'IssueDependency', code: 'custom', field: 'issue_id' });
    };
    if (blocker === issue) fail('An issue cannot be blocked by itself');
    if (issue.blockedBy.includes(blocker)) fail('This dependency already exists');
    if (issue.blockedBy.length >= LIMITS.dependencies) {
      fail(`An issue can be blocked by at most ${LIMITS.dependencies} issues`);
    }
    if (blocker.blocking.length >= LIMITS.dependencies) {
      fail(`An issue can block at most ${LIMITS.dependencies} issues`);
    }
    issue.blockedBy.push(blocker);
    blocker.blocking.push(issue);
    issue.updated_at = this.stamp();
    return blocker;
  }

  removeBlockedBy(issue, blockerId) {
    const blocker = this.byDbId.get(blockerId);
    if (!blocker || !issue.blockedBy.includes(blocker)) throw new WorldError('not_found', 'Not Found');
    issue.blockedBy = issue.blockedBy.filter((b) => b !== blocker);
    blocker.blocking = blocker.blocking.filter((b) => b !== issue);
    issue.updated_at = this.stamp();
    return blocker;
  }

  // ---- comments and reactions ---------------------------------------------

  createComment(issue, body, user) {
    this.checkCommentBody(body);
    const { id, node_id } = this.allocCommentId('IC_');
    const now = this.stamp();
    const c = { kind: 'comment', id, node_id, issue, body, user, created_at: now, updated_at: now, reactions: [] };
    this.comments.set(id, c);
    this.nodes.set(node_id, c);
    issue.comments.push(c);
    return c;
  }

  updateComment(comment, body) {
    this.checkCommentBody(body);
    if (comment.body !== body) {
      comment.body = body;
      comment.updated_at = this.stamp();
    }
    return comment;
  }

  // Returns {reaction, created}: one reaction per user and content.
  addReaction(comment, content, user) {
    const old = comment.reactions.find((r) => r.user === user && r.content === content);
    if (old) return { reaction: old, created: false };
    const { id, node_id } = this.allocCommentId('REA_');
    const r = { id, node_id, user, content, created_at: this.stamp() };
    comment.reactions.push(r);
    this.nodes.set(node_id, r);
    return { reaction: r, created: true };
  }

  removeReaction(comment, reactionId) {
    const r = comment.reactions.find((x) => x.id === reactionId);
    if (!r) throw new WorldError('not_found', 'Not Found');
    comment.reactions = comment.reactions.filter((x) => x !== r);
    this.nodes.delete(r.node_id);
  }

  // ---- project ------------------------------------------------------------

  // Returns {item, created}; an issue already on the board keeps its item.
  addProjectItem(project, issue) {
    const old = project.itemByIssue.get(issue);
    if (old) return { item: old, created: false };
    const { node_id } = this.allocDbId('PVTI_');
    const item = { kind: 'item', id: node_id, issue, project, values: new Map() };
    project.items.push(item);
    project.itemById.set(item.id, item);
    project.itemByIssue.set(issue, item);
    this.nodes.set(item.id, item);
    return { item, created: true };
  }

  // value: {text}|{number}|{date}|{singleSelectOptionId}|null (clear).
  setFieldValue(item, field, value) {
    const fail = (message) => { throw new WorldError('unprocessable', message); };
    if (field.builtin) fail(`The field ${field.name} cannot be updated with this mutation`);
    if (value === null) {
      item.values.delete(field);
      return;
    }
    const kinds = Object.keys(value).filter((k) => value[k] !== undefined && value[k] !== null);
    if (kinds.length !== 1) fail('Exactly one value kind (text, number, date, singleSelectOptionId, iterationId) must be given');
    const kind = kinds[0];
    const want = { text: 'text', number: 'number', date: 'date', single_select: 'singleSelectOptionId' }[field.type];
    if (kind !== want) {
      fail(`The field ${field.name} is of type ${field.type.toUpperCase()} and takes a ${want} value, not ${kind}`);
    }
    let stored = value[kind];
    if (field.type === 'date' && !validDate(stored)) fail(`${stored} is not a valid date`);
    if (field.type === 'single_select') {
      const opt = field.options.find((o) => o.id === stored);
      if (!opt) fail(`The single select option Id ${stored} does not belong to the field ${field.name}`);
      stored = opt.name;
    }
    if (field.type === 'number' && !Number.isFinite(stored)) fail('number must be finite');
    item.values.set(field, stored);
  }

  // ---- dump ---------------------------------------------------------------

  stateDocument() {
    const repos = [...this.repos.values()]
      .filter((r) => r.inState || r.issues.size > 0)
      .sort((a, b) => byteCmp(fold(a.name), fold(b.name)));
    const doc = {
      schema_version: 'state/v1',
      repositories: repos.map((r) => ({
        repo: r.name,
        issues: [...r.issues.values()].sort((a, b) => a.number - b.number).map((i) => ({
          number: i.number,
          database_id: i.database_id,
          node_id: i.node_id,
          title: i.title,
          body: i.body,
          labels: i.labels.slice().sort(byteCmp),
          state: i.state,
          author: i.author.login,
          author_type: i.author.type === 'Bot' ? 'Bot' : 'User',
          updated_at: i.updated_at,
          parent: i.parent ? this.ref(i.parent) : null,
          blocked_by: i.blockedBy.slice().sort(refCmp).map((b) => this.ref(b)),
        })),
      })),
      project: null,
      extra: { ...this.extra, next_database_id: this.nextDbId },
    };
    const p = this.project;
    if (p) {
      doc.project = {
        owner: p.owner,
        number: p.number,
        node_id: p.node_id,
        fields: p.fields.map((f) => (f.type === 'single_select'
          ? { id: f.id, name: f.name, type: f.type, options: f.options.map((o) => ({ ...o })) }
          : { id: f.id, name: f.name, type: f.type })),
        items: p.items.slice().sort((a, b) => refCmp(a.issue, b.issue)).map((it) => {
          const values = {};
          for (const [f, v] of it.values) values[f.name] = v;
          return { id: it.id, issue: this.ref(it.issue), values };
        }),
      };
    }
    return canonicalize(doc);
  }

  dump() {
    const tokens = {};
    for (const [t, v] of this.tokens) {
      tokens[t] = { login: v.login, type: v.type, scopes: v.scopes.slice(), read_only: v.read_only, projects: v.projects };
    }
    const collaborators = {};
    for (const [key, m] of this.collaborators) {
      const entry = {};
      for (const c of m.values()) entry[c.login] = c.permission;
      collaborators[this.repos.get(key).name] = entry;
    }
    const users = {};
    for (const u of this.users.values()) users[u.login] = { type: u.type, id: u.id };
    const comments = [...this.comments.values()].sort((a, b) => a.id - b.id).map((c) => ({
      id: c.id, issue: this.ref(c.issue), user: c.user.login, body: c.body,
      created_at: c.created_at, updated_at: c.updated_at,
      reactions: c.reactions.map((r) => ({ id: r.id, user: r.user.login, content: r.content })),
    }));
    const pulls = [...this.allPulls()].map((p) => ({
      id: p.id, issue_id: p.database_id, repo: p.repo.name, number: p.number, title: p.title, body: p.body,
      user: p.author.login, state: p.state, merged: p.merged, draft: p.draft, labels: p.labels.slice(),
      created_at: p.created_at, updated_at: p.updated_at,
      head: { sha: p.head.sha, ref: p.head.ref, repo: p.head.repo.name },
      base: { sha: p.base.sha, ref: p.base.ref },
    }));
    const meta = {};
    for (const r of this.repos.values()) {
      if (r.inMeta) meta[r.name] = { default_branch: r.default_branch, private: r.private };
    }
    const out = {
      state: this.stateDocument(), tokens, collaborators, users, comments, pulls, repositories_meta: meta,
      rate_limit: {
        core: { limit: this.rateLimit.core.limit, remaining: this.rateLimit.core.remaining, reset_seconds: this.rateLimit.core.reset_seconds },
        graphql: { limit: this.rateLimit.graphql.limit, remaining: this.rateLimit.graphql.remaining, reset_seconds: this.rateLimit.graphql.reset_seconds },
      },
      project_builtin_fields: this.builtinFields,
    };
    const seededTypes = {};
    for (const [key, login] of this.seededIssueTypes) {
      const list = this.issueTypes.get(key);
      if (!list) continue;
      seededTypes[login] = list.map((t) => ({
        name: t.name, description: t.description, color: t.color, is_enabled: t.is_enabled,
      }));
    }
    if (Object.keys(seededTypes).length) out.issue_types = seededTypes;
    const typed = {};
    for (const i of this.byDbId.values()) if (i.issueType) typed[this.ref(i)] = i.issueType.name;
    if (Object.keys(typed).length) out.issue_type = typed;
    const forbidden = {};
    for (const [i, set] of this.forbidden) forbidden[this.ref(i)] = [...set].sort(byteCmp);
    if (Object.keys(forbidden).length) out.forbidden_fields = forbidden;
    if (this.filterMisses.size) out.filter_misses = [...this.filterMisses].sort(refCmp).map((i) => this.ref(i));
    if (!this.features.subIssues || !this.features.dependencies || !this.features.issueTypes) {
      out.ghes = { sub_issues: this.features.subIssues, dependencies: this.features.dependencies };
      if (!this.features.issueTypes) out.ghes.issue_types = false;
    }
    if (this.secondary) out.secondary_limits = { windows: this.secondary.windows.map((w) => ({ ...w })), status: this.secondary.status };
    // The clock as it stands: a reset to this dump stamps on from here.
    out.now = isoSeconds(Math.max(this.nowMs, Math.floor(this.latestMs / 1000) * 1000));
    return canonicalize(out);
  }
}

module.exports = {
  World, WorldError, SeedError, LIMITS, PERMISSIONS, REACTIONS, DEFAULT_ISSUE_TYPES, DEFAULT_SECONDARY_WINDOWS,
};
