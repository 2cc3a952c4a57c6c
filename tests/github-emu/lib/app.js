'use strict';
// The HTTP side of the emulator: one node:http server answering REST (routed
// and validated through GitHub's OpenAPI description), POST /graphql, and
// the unauthenticated control endpoints under /_emu/. Also rate limits,
// ETags, fault injection and the request log.

const http = require('node:http');
const { parse: gqlParse, Kind } = require('graphql');
const { World, WorldError, SeedError } = require('./world');
const { OpenApi } = require('./openapi');
const { GraphQLApi, rateLimitValue } = require('./graphql');
const rest = require('./rest');
const { sha256 } = require('./util');

const API_VERSION = '2022-11-28';
const MAX_BODY = 32 * 1024 * 1024;
const REST_DOCS = 'https://docs.github.com/rest';
const EMPTY_SEED = { state: { schema_version: 'state/v1' } };
const SECONDARY_DOCS = 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';

// The description and the schema are large: load each once per process and
// share them between emulator instances.
let sharedOpenApi = null;
let sharedGraphQL = null;
function openapi() {
  if (!sharedOpenApi) sharedOpenApi = new OpenApi();
  return sharedOpenApi;
}
function graphqlApi() {
  if (!sharedGraphQL) sharedGraphQL = new GraphQLApi();
  return sharedGraphQL;
}

function nowS() {
  return Math.floor(Date.now() / 1000);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(Object.assign(new Error('body too large'), { tooLarge: true }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function gqlOpType(payload) {
  try {
    const doc = gqlParse(payload.query);
    const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    const op = payload.operationName ? ops.find((o) => o.name && o.name.value === payload.operationName) : ops[0];
    return op ? op.operation : 'query';
  } catch {
    return 'query';
  }
}

function validFault(f) {
  if (!f || typeof f !== 'object' || Array.isArray(f)) return 'a fault is an object';
  if (!Number.isInteger(f.count) || f.count < 1) return 'count must be an integer >= 1';
  if (f.status !== undefined && !(Number.isInteger(f.status) && f.status >= 400 && f.status <= 599)) return 'status must be 400..599';
  if (f.retry_after !== undefined && !(Number.isInteger(f.retry_after) && f.retry_after >= 0)) return 'retry_after must be an integer >= 0';
  if (f.reset_in !== undefined && !(Number.isInteger(f.reset_in) && f.reset_in >= 0)) return 'reset_in must be an integer >= 0';
  if (f.delay_ms !== undefined && !(Number.isInteger(f.delay_ms) && f.delay_ms >= 0 && f.delay_ms <= 60000)) return 'delay_ms must be 0..60000';
  for (const k of ['cut_body', 'graphql_rate_limit', 'execute', 'primary']) {
    if (f[k] !== undefined && typeof f[k] !== 'boolean') return `${k} must be a boolean`;
  }
  const m = f.match;
  if (m !== undefined && m !== 'graphql' && (typeof m !== 'object' || m === null || Array.isArray(m))) {
    return 'match is "graphql" or an object';
  }
  if (m && typeof m === 'object') {
    for (const k of Object.keys(m)) {
      if (!['method', 'path', 'graphql'].includes(k)) return `unknown match key ${k}`;
    }
    if (m.graphql !== undefined && ![true, 'query', 'mutation'].includes(m.graphql)) return 'match.graphql is true, "query" or "mutation"';
  }
  for (const k of Object.keys(f)) {
    if (!['count', 'match', 'status', 'retry_after', 'reset_in', 'primary', 'graphql_rate_limit', 'delay_ms', 'cut_body', 'execute'].includes(k)) {
      return `unknown fault key ${k}`;
    }
  }
  if (f.status === undefined && !f.graphql_rate_limit && !f.cut_body && !f.delay_ms) {
    return 'a fault needs status, graphql_rate_limit, cut_body or delay_ms';
  }
  if (f.status !== undefined && f.graphql_rate_limit) return 'status and graphql_rate_limit exclude each other';
  return null;
}

class Emulator {
  constructor(seed) {
    this.api = openapi();
    this.gql = graphqlApi();
    this.reset(seed || EMPTY_SEED);
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        if (!res.headersSent) {
          this.send(res, { status: 500, headers: {}, body: { message: `emulator failure: ${e.stack || e}` } });
        } else res.destroy();
      });
    });
    this.server.keepAliveTimeout = 5000;
  }

  reset(seed) {
    this.world = new World(seed);
    this.faults = [];
    this.nextFaultId = 1;
    this.log = [];
    this.seq = 0;
    this.buckets = new Map();
    this.contentTimes = new Map(); // login -> times (ms) of its content-creating requests
  }

  listen(port, host) {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port || 0, host || '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve(this.server.address().port);
      });
    });
  }

  close() {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ---- rate limits ----------------------------------------------------------

  bucket(login, resource) {
    let b = this.buckets.get(login);
    if (!b) {
      b = {};
      for (const r of ['core', 'graphql']) {
        const cfg = this.world.rateLimit[r];
        b[r] = {
          limit: cfg.limit, used: cfg.limit - Math.min(cfg.limit, cfg.remaining),
          window: cfg.reset_seconds, reset: nowS() + cfg.reset_seconds,
        };
      }
      this.buckets.set(login, b);
    }
    const x = b[resource];
    if (nowS() >= x.reset) {
      x.used = 0;
      x.reset = nowS() + x.window;
    }
    return x;
  }

  // GitHub's secondary limit on content-creating requests (seed
  // `secondary_limits`): each window allows `count` of them per login in any
  // `seconds`. Returns null when this one may go ahead (and counts it), else
  // the seconds until the fullest window frees a slot: the `retry-after`.
  secondaryWait(login) {
    const cfg = this.world.secondary;
    if (!cfg) return null;
    const now = Date.now();
    let times = this.contentTimes.get(login);
    if (!times) {
      times = [];
      this.contentTimes.set(login, times);
    }
    const longest = Math.max(...cfg.windows.map((w) => w.seconds)) * 1000;
    while (times.length && times[0] <= now - longest) times.shift();
    let wait = 0;
    for (const w of cfg.windows) {
      const inside = times.filter((t) => t > now - w.seconds * 1000);
      if (inside.length >= w.count) {
        const frees = inside[inside.length - w.count] + w.seconds * 1000;
        wait = Math.max(wait, Math.max(1, Math.ceil((frees - now) / 1000)));
      }
    }
    if (wait) return wait;
    times.push(now);
    return null;
  }

  secondaryResponse(wait, requestId, docs) {
    const status = this.world.secondary.status;
    return {
      status,
      headers: { 'retry-after': String(wait) },
      body: {
        message: `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
        documentation_url: docs,
        status: String(status),
      },
    };
  }

  rateHeaders(b, resource) {
    return {
      'x-ratelimit-limit': String(b.limit),
      'x-ratelimit-remaining': String(Math.max(0, b.limit - b.used)),
      'x-ratelimit-reset': String(b.reset),
      'x-ratelimit-used': String(b.used),
      'x-ratelimit-resource': resource,
    };
  }

  // ---- faults -----------------------------------------------------------------

  takeFault(method, pathname, isGraphql, payloadFn) {
    for (const f of this.faults) {
      if (f.remaining <= 0) continue;
      const m = f.match;
      if (m === 'graphql' || (m && m.graphql)) {
        if (!isGraphql) continue;
        const want = m === 'graphql' ? true : m.graphql;
        if (want !== true && gqlOpType(payloadFn()) !== want) continue;
      }
      if (m && typeof m === 'object') {
        if (m.method && m.method.toUpperCase() !== method) continue;
        if (m.path && !pathname.startsWith(m.path)) continue;
      }
      f.remaining--;
      f.used++;
      return f;
    }
    return null;
  }

  faultResponse(f, login, requestId) {
    const headers = {};
    if (f.retry_after !== undefined) headers['retry-after'] = String(f.retry_after);
    if (f.graphql_rate_limit) {
      const b = this.bucket(login || '-', 'graphql');
      return {
        status: 200,
        headers: {
          ...this.rateHeaders(b, 'graphql'), 'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(nowS() + (f.reset_in ?? 1)), ...headers,
        },
        body: { data: null, errors: [{ type: 'RATE_LIMITED', code: 'graphql_rate_limit', message: 'API rate limit already exceeded for user ID 1.' }] },
      };
    }
    const s = f.status;
    if ((s === 403 || s === 429) && f.primary) {
      headers['x-ratelimit-remaining'] = '0';
      headers['x-ratelimit-reset'] = String(nowS() + (f.reset_in ?? 1));
      return { status: s, headers, body: { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: String(s) } };
    }
    if (s === 403 || s === 429) {
      return {
        status: s,
        headers,
        body: {
          message: `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
          documentation_url: 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
          status: String(s),
        },
      };
    }
    const text = { 500: 'Server Error', 502: 'Server Error', 503: 'Service Unavailable', 504: 'We couldn\'t respond to your request in time. Sorry about that. Please try resubmitting your request and contact us if the problem persists.' }[s];
    return { status: s, headers, body: { message: text || `Emulated failure ${s}`, documentation_url: REST_DOCS, status: String(s) } };
  }

  // ---- dispatch ---------------------------------------------------------------

  async handle(req, res) {
    const url = new URL(req.url, `http://${req.headers.host || '127.0.0.1'}`);
    let raw;
    try {
      raw = await readBody(req);
    } catch (e) {
      if (e.tooLarge) return this.send(res, { status: 413, headers: {}, body: { message: 'Payload too large', documentation_url: REST_DOCS, status: '413' } });
      throw e;
    }
    if (url.pathname.startsWith('/_emu/') || url.pathname === '/_emu') return this.control(req, res, url, raw);

    const method = req.method.toUpperCase();
    const isGraphql = url.pathname === '/graphql';
    this.seq++;
    const requestId = `EMU0:${this.seq.toString(16).toUpperCase().padStart(6, '0')}`;
    const entry = {
      seq: this.seq, method, path: url.pathname, query: url.search.slice(1), kind: isGraphql ? 'graphql' : 'rest',
      operation: null, status: null, content_creating: false, secondary_limited: false, not_modified: false, fault: null,
      api_version: req.headers['x-github-api-version'] || null,
      user_agent: req.headers['user-agent'] || null,
      accept: req.headers.accept || null,
      authenticated: Boolean(req.headers.authorization),
    };
    this.log.push(entry);
    let payloadCache;
    const payload = () => {
      if (payloadCache === undefined) {
        try {
          payloadCache = JSON.parse(raw.toString('utf8'));
        } catch {
          payloadCache = null;
        }
      }
      return payloadCache || {};
    };
    const fault = this.takeFault(method, url.pathname, isGraphql, payload);
    const ctxBase = { url, base: `http://${req.headers.host || '127.0.0.1'}`, requestId, entry };
    if (fault) {
      entry.fault = fault.id;
      if (fault.delay_ms) await new Promise((r) => setTimeout(r, fault.delay_ms));
      if ((fault.status || fault.graphql_rate_limit) && !fault.execute) {
        const r = this.faultResponse(fault, null, requestId);
        return this.finish(res, entry, r, fault, requestId);
      }
    }
    let r = isGraphql ? this.graphql(req, raw, ctxBase) : this.rest(req, raw, ctxBase, method);
    if (fault && fault.execute && (fault.status || fault.graphql_rate_limit)) {
      r = this.faultResponse(fault, null, requestId);
    }
    return this.finish(res, entry, r, fault, requestId);
  }

  finish(res, entry, r, fault, requestId) {
    entry.status = r.status;
    r.headers['x-github-request-id'] = requestId;
    if (fault && fault.cut_body) return this.send(res, r, true);
    return this.send(res, r);
  }

  send(res, r, cut) {
    const headers = { ...r.headers };
    for (const k of Object.keys(headers)) if (headers[k] === undefined) delete headers[k];
    let buf = Buffer.alloc(0);
    if (r.body !== null && r.body !== undefined && r.status !== 204 && r.status !== 304) {
      buf = Buffer.from(JSON.stringify(r.body), 'utf8');
      headers['content-type'] = 'application/json; charset=utf-8';
    }
    if (cut) {
      // The whole length is announced, half is sent, then the connection
      // drops: the client sees a response cut off mid-body.
      headers['content-length'] = String(Math.max(1, buf.length));
      res.writeHead(r.status, headers);
      res.write(buf.subarray(0, Math.floor(buf.length / 2)), () => res.socket && res.socket.destroy());
      return undefined;
    }
    headers['content-length'] = String(buf.length);
    res.writeHead(r.status, headers);
    res.end(buf);
    return undefined;
  }

  // ---- authentication ---------------------------------------------------------

  // -> {token} or {response}
  authenticate(req, graphql) {
    const h = req.headers.authorization;
    const docs = graphql
      ? 'https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql'
      : REST_DOCS;
    if (!h) {
      const message = graphql ? 'This endpoint requires you to be authenticated.' : 'Requires authentication';
      return { response: { status: 401, headers: {}, body: { message, documentation_url: docs, status: '401' } } };
    }
    const m = /^(bearer|token)\s+(\S+)\s*$/i.exec(h);
    const token = m && this.world.token(m[2]);
    if (!token) return { response: { status: 401, headers: {}, body: { message: 'Bad credentials', documentation_url: docs, status: '401' } } };
    return { token };
  }

  commonChecks(req, graphql) {
    if (!req.headers['user-agent']) {
      return {
        status: 403,
        headers: {},
        body: { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.' },
      };
    }
    const v = req.headers['x-github-api-version'];
    if (v !== undefined && v !== API_VERSION) {
      return {
        status: 400,
        headers: {},
        body: { message: `Unsupported 'X-GitHub-Api-Version' header value. Supported versions: ${API_VERSION}`, documentation_url: graphql ? 'https://docs.github.com/graphql' : REST_DOCS, status: '400' },
      };
    }
    return null;
  }

  // ---- REST ---------------------------------------------------------------------

  rest(req, raw, base, method) {
    const m = this.api.match(method, base.url.pathname);
    const notFound = (doc) => ({ status: 404, headers: {}, body: { message: 'Not Found', documentation_url: doc || REST_DOCS, status: '404' } });
    if (!m) return notFound();
    const op = m.op;
    base.entry.operation = op.operationId;
    // GitHub Enterprise Server without the feature has no such route.
    if ((!this.world.features.subIssues && rest.SUB_ISSUE_OPS.has(op.operationId))
      || (!this.world.features.dependencies && rest.DEPENDENCY_OPS.has(op.operationId))) return notFound();
    const early = this.commonChecks(req, false);
    if (early) return early;
    const auth = this.authenticate(req, false);
    if (auth.response) return auth.response;
    const token = auth.token;
    const headers = { 'x-github-api-version-selected': API_VERSION, 'x-github-media-type': 'github.v3; format=json' };
    if (token.type === 'User') {
      headers['x-oauth-scopes'] = token.scopes.join(', ');
      headers['x-accepted-oauth-scopes'] = op.template.startsWith('/repos/') ? 'repo' : '';
    }
    const free = rest.FREE.has(op.operationId);
    const bucket = this.bucket(token.login, 'core');
    const withRate = (r) => {
      Object.assign(r.headers, headers, this.rateHeaders(bucket, 'core'));
      return r;
    };
    if (!free && bucket.used >= bucket.limit) {
      return withRate({
        status: 403,
        headers: {},
        body: { message: `API rate limit exceeded for user ID ${token.user.id}.`, documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: '403' },
      });
    }
    const charge = (r) => {
      if (!free && r.status !== 304) bucket.used++;
      return withRate(r);
    };
    const isWrite = method !== 'GET' && method !== 'HEAD';
    base.entry.content_creating = isWrite;
    if (isWrite) {
      const wait = this.secondaryWait(token.login);
      if (wait !== null) {
        base.entry.secondary_limited = true;
        return withRate(this.secondaryResponse(wait, base.requestId, SECONDARY_DOCS));
      }
    }
    const ctx = {
      ...base, world: this.world, op, token, user: token.user, headers: {}, repo: null, permission: 'admin',
      forbiddenMessage: token.type === 'Bot' ? 'Resource not accessible by integration' : 'Resource not accessible by personal access token',
      rateSnapshot: (res) => {
        const b = this.bucket(token.login, res);
        return { limit: b.limit, used: b.used, remaining: Math.max(0, b.limit - b.used), reset: b.reset };
      },
    };
    if (op.template.startsWith('/repos/{owner}/{repo}')) {
      const repo = this.world.repo(`${m.params.owner}/${m.params.repo}`);
      const perm = repo ? this.world.permission(token.login, repo) : 'none';
      // A classic token needs `repo` for private repositories; a public one
      // is readable without it and writable with `public_repo`.
      const scoped = token.type === 'Bot' || token.scopes.includes('repo')
        || (repo && !repo.private && (!isWrite || token.scopes.includes('public_repo')));
      if (!repo || perm === 'none' || !scoped) return charge(notFound(op.docUrl));
      ctx.repo = repo;
      ctx.permission = perm;
    }
    if (isWrite && token.read_only) {
      // GITHUB_TOKEN on a fork's pull request: read permissions only.
      return charge({ status: 403, headers: {}, body: { message: ctx.forbiddenMessage, documentation_url: op.docUrl, status: '403' } });
    }
    const accept = req.headers.accept || '';
    if (/application\/vnd\.github(\.v3)?\.(raw|text|html|full|diff|patch|sha)(\+json)?/.test(accept)) {
      return charge({ status: 501, headers: {}, body: { message: `Not implemented by the pm-bot GitHub emulator: media type ${accept}` } });
    }
    let body;
    const hasBody = raw.length > 0 && isWrite;
    if (hasBody) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return charge({ status: 400, headers: {}, body: { message: 'Problems parsing JSON', documentation_url: op.docUrl, status: '400' } });
      }
    }
    const v = this.api.validateRequest(op, m.params, base.url.searchParams, body, hasBody);
    if (!v.ok) {
      if (v.where === 'path') return charge(notFound(op.docUrl));
      return charge({ status: 422, headers: {}, body: { message: 'Invalid request.\n\n' + v.lines.join('\n'), documentation_url: op.docUrl, status: '422' } });
    }
    const handler = rest.handlers[op.operationId];
    if (!handler) {
      return charge({ status: 501, headers: {}, body: { message: `Not implemented by the pm-bot GitHub emulator: ${op.operationId} (${op.method} ${op.template})`, documentation_url: op.docUrl } });
    }
    ctx.params = v.path;
    ctx.query = v.query;
    ctx.paramNames = op.params.filter((p) => p.in === 'query').map((p) => p.name);
    ctx.body = body;
    let r;
    try {
      r = handler(ctx);
    } catch (e0) {
      const e = rest.errorFromWorld(e0);
      if (!(e instanceof rest.HttpError)) throw e;
      r = { status: e.status, body: { message: e.message, ...e.extra, documentation_url: op.docUrl, status: String(e.status) } };
      if (e.status === 501) delete r.body.status;
    }
    const out = { status: r.status, headers: { ...ctx.headers }, body: r.body };
    if (method === 'GET' && r.status === 200) {
      // Weak ETag over the body and the viewer, as GitHub's vary on Authorization.
      const etag = `W/"${sha256(token.login + '\n' + JSON.stringify(r.body))}"`;
      out.headers.etag = etag;
      out.headers['cache-control'] = 'private, max-age=60, s-maxage=60';
      out.headers.vary = 'Accept, Authorization, Cookie, X-GitHub-OTP';
      const inm = req.headers['if-none-match'];
      if (inm && inm.split(',').map((s) => s.trim().replace(/^W\//, '')).some((t) => t === '*' || t === etag.replace(/^W\//, ''))) {
        base.entry.not_modified = true;
        return charge({ status: 304, headers: { etag, 'cache-control': out.headers['cache-control'], vary: out.headers.vary, link: out.headers.link }, body: null });
      }
    }
    return charge(out);
  }

  // ---- GraphQL ------------------------------------------------------------------

  graphql(req, raw, base) {
    base.entry.operation = 'graphql';
    if (req.method !== 'POST') {
      return { status: 404, headers: {}, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/graphql', status: '404' } };
    }
    const early = this.commonChecks(req, true);
    if (early) return early;
    const auth = this.authenticate(req, true);
    if (auth.response) return auth.response;
    const token = auth.token;
    const bucket = this.bucket(token.login, 'graphql');
    const headers = () => ({ 'x-github-media-type': 'github.v4; format=json', ...this.rateHeaders(bucket, 'graphql') });
    let payload;
    try {
      payload = JSON.parse(raw.toString('utf8'));
    } catch {
      return { status: 400, headers: headers(), body: { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/graphql', status: '400' } };
    }
    const prep = this.gql.prepare(payload, this.world.features);
    if (prep.response) {
      if (prep.response.status === 200) bucket.used = Math.min(bucket.limit, bucket.used + 1);
      return { ...prep.response, headers: headers() };
    }
    const plan = prep.plan;
    base.entry.operation = `${plan.opType} ${plan.rootFields.join(',')}`;
    base.entry.content_creating = plan.opType === 'mutation';
    if (bucket.limit - bucket.used < plan.cost) {
      return {
        status: 200,
        headers: headers(),
        body: { data: null, errors: [{ type: 'RATE_LIMITED', code: 'graphql_rate_limit', message: `API rate limit already exceeded for user ID ${token.user.id}.` }] },
      };
    }
    if (plan.opType === 'mutation') {
      const wait = this.secondaryWait(token.login);
      if (wait !== null) {
        base.entry.secondary_limited = true;
        const r = this.secondaryResponse(wait, base.requestId, SECONDARY_DOCS);
        return { ...r, headers: { ...headers(), ...r.headers } };
      }
    }
    bucket.used += plan.cost;
    const ctx = {
      ...base, world: this.world, token, user: token.user,
      rate: rateLimitValue(bucket, plan.cost, plan.nodeCount),
    };
    const r = this.gql.run(plan, ctx);
    return { ...r, headers: headers() };
  }

  // ---- control ------------------------------------------------------------------

  // POST /_emu/pulls/{owner}/{repo}/{n}/head {"sha"}: a push to the head
  // branch. -> [status, body]
  pushHead(repoName, number, body) {
    const repo = this.world.repo(repoName);
    const pull = repo && this.world.pull(repo, number);
    if (!pull) return [404, { message: `no pull request ${repoName}#${number}` }];
    if (!body || typeof body !== 'object' || Array.isArray(body) || typeof body.sha !== 'string'
      || !/^[0-9a-f]{40}$/.test(body.sha) || Object.keys(body).some((k) => k !== 'sha')) {
      return [400, { message: 'the body is {"sha": "<40 lowercase hex digits>"}' }];
    }
    const moved = this.world.movePullHead(pull, body.sha);
    return [200, { moved, number: pull.number, head: { sha: pull.head.sha, ref: pull.head.ref }, updated_at: pull.updated_at }];
  }

  control(req, res, url, raw) {
    const method = req.method.toUpperCase();
    const reply = (status, body) => this.send(res, { status, headers: {}, body });
    let body = null;
    if (raw.length) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (e) {
        return reply(400, { message: `body is not JSON: ${e.message}` });
      }
    }
    const route = `${method} ${url.pathname}`;
    const head = /^POST \/_emu\/pulls\/([^/]+)\/([^/]+)\/([1-9][0-9]{0,9})\/head$/.exec(route);
    if (head) {
      let name;
      try {
        name = decodeURIComponent(`${head[1]}/${head[2]}`);
      } catch {
        return reply(404, { message: `no pull request ${head[1]}/${head[2]}#${head[3]}` });
      }
      return reply(...this.pushHead(name, Number(head[3]), body));
    }
    switch (route) {
      case 'GET /_emu/health':
        return reply(200, { ok: true });
      case 'GET /_emu/state':
        return reply(200, this.world.dump());
      case 'POST /_emu/reset':
        try {
          this.reset(body || EMPTY_SEED);
        } catch (e) {
          if (e instanceof SeedError) return reply(400, { message: 'invalid seed', problems: e.messages });
          throw e;
        }
        return reply(200, { ok: true });
      case 'POST /_emu/faults': {
        const list = Array.isArray(body) ? body : [body];
        for (const f of list) {
          const why = validFault(f);
          if (why) return reply(400, { message: `invalid fault: ${why}` });
        }
        const ids = list.map((f) => {
          const id = this.nextFaultId++;
          this.faults.push({ ...f, id, remaining: f.count, used: 0, match: f.match === undefined ? {} : f.match });
          return id;
        });
        return reply(201, { ids });
      }
      case 'GET /_emu/faults':
        return reply(200, { faults: this.faults.map((f) => ({ ...f })) });
      case 'DELETE /_emu/faults':
        this.faults = [];
        return reply(200, { ok: true });
      case 'GET /_emu/requests':
        return reply(200, {
          total: this.log.length,
          content_creating: this.log.filter((e) => e.content_creating).length,
          requests: this.log,
        });
      case 'DELETE /_emu/requests':
        this.log = [];
        return reply(200, { ok: true });
      default:
        return reply(404, { message: `no control endpoint ${route}` });
    }
  }
}

module.exports = { Emulator, World, WorldError, SeedError, API_VERSION };
