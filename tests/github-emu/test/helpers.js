'use strict';
// Shared by the emulator's tests: an in-process emulator on a free port and
// a raw HTTP client (node:http, so every header, including a missing
// User-Agent, is under the test's control).

const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { Emulator } = require('../lib/app');

const FIXTURES = path.join(__dirname, 'fixtures');

function seed(name) {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name || 'seed-full.json'), 'utf8'));
}

const DEFAULT_HEADERS = {
  'user-agent': 'pm-bot-emu-tests',
  accept: 'application/vnd.github+json',
  'x-github-api-version': '2022-11-28',
};

// opts: {token (default tok-alice; null = none), body (object, or a string
// sent as is), headers (merged; a value of null removes a default)}.
function request(port, method, p, opts = {}) {
  const headers = { ...DEFAULT_HEADERS };
  const token = opts.token === undefined ? 'tok-alice' : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  for (const [k, v] of Object.entries(opts.headers || {})) {
    if (v === null) delete headers[k.toLowerCase()];
    else headers[k.toLowerCase()] = v;
  }
  let payload = null;
  if (opts.body !== undefined) {
    payload = Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body), 'utf8');
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        if (text) {
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
        }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

async function start(s) {
  const emu = new Emulator(s === undefined ? seed() : s);
  const port = await emu.listen(0);
  const api = {
    emu,
    port,
    base: `http://127.0.0.1:${port}`,
    req: (method, p, opts) => request(port, method, p, opts),
    get: (p, opts) => request(port, 'GET', p, opts),
    post: (p, body, opts) => request(port, 'POST', p, { ...opts, body }),
    patch: (p, body, opts) => request(port, 'PATCH', p, { ...opts, body }),
    put: (p, body, opts) => request(port, 'PUT', p, { ...opts, body }),
    del: (p, body, opts) => request(port, 'DELETE', p, { ...opts, body }),
    gql: (query, variables, opts) => request(port, 'POST', '/graphql', { ...opts, body: variables ? { query, variables } : { query } }),
    state: async () => (await request(port, 'GET', '/_emu/state', { token: null })).json,
    log: async () => (await request(port, 'GET', '/_emu/requests', { token: null })).json,
    fault: async (f) => request(port, 'POST', '/_emu/faults', { token: null, body: f }),
    close: () => emu.close(),
  };
  return api;
}

function issueOf(state, repo, number) {
  const r = state.state.repositories.find((x) => x.repo === repo);
  return r && r.issues.find((i) => i.number === number);
}

module.exports = { start, seed, request, issueOf, FIXTURES };
