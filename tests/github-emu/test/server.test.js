'use strict';
// The emulator as a process: server.js and scripts/emu.sh, and determinism
// (same seed and requests -> same bytes).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync, spawnSync } = require('node:child_process');
const { start, request, FIXTURES } = require('./helpers');

const ROOT = path.join(__dirname, '..', '..', '..');
const SERVER = path.join(__dirname, '..', 'server.js');
const EMU_SH = path.join(ROOT, 'scripts', 'emu.sh');
const SEED = path.join(FIXTURES, 'seed-full.json');

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'github-emu-test-'));
}

function waitForFile(file, child) {
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`${file} did not appear`));
    }, 30000);
    const poll = setInterval(() => {
      if (child.exitCode !== null) {
        clearInterval(poll);
        clearTimeout(deadline);
        reject(new Error(`server exited with ${child.exitCode}`));
      } else if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== '') {
        clearInterval(poll);
        clearTimeout(deadline);
        resolve(fs.readFileSync(file, 'utf8').trim());
      }
    }, 20);
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('server.js writes its port to --port-file, serves the seed and stops on SIGTERM', async () => {
  const dir = tmpdir();
  const portFile = path.join(dir, 'port');
  const child = spawn(process.execPath, [SERVER, '--seed', SEED, '--port-file', portFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const port = Number(await waitForFile(portFile, child));
    assert.ok(port > 0 && port < 65536);
    const r = await request(port, 'GET', '/repos/acme/widgets/issues/10');
    assert.equal(r.status, 200);
    assert.equal(r.json.title, 'Task: wire the gauge');
  } finally {
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('server.js refuses an invalid seed and exits 2 with the problems', () => {
  const dir = tmpdir();
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, JSON.stringify({ state: { schema_version: 'state/v1', repositories: [{ repo: 'nope' }] } }));
  const r = spawnSync(process.execPath, [SERVER, '--seed', bad, '--port-file', path.join(dir, 'port')], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /invalid seed/);
  assert.equal(fs.existsSync(path.join(dir, 'port')), false);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('scripts/emu.sh start prints the base URL and stop ends the process', async () => {
  const dir = tmpdir();
  try {
    const url = execFileSync('bash', [EMU_SH, 'start', SEED, dir], { encoding: 'utf8' }).trim();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const pid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
    const port = Number(new URL(url).port);
    const health = await request(port, 'GET', '/_emu/health', { token: null });
    assert.deepEqual(health.json, { ok: true });
    const again = spawnSync('bash', [EMU_SH, 'start', SEED, dir], { encoding: 'utf8' });
    assert.notEqual(again.status, 0, 'a second start in the same directory is refused');
    execFileSync('bash', [EMU_SH, 'stop', dir]);
    assert.equal(alive(pid), false);
    assert.equal(fs.existsSync(path.join(dir, 'pid')), false);
  } finally {
    spawnSync('bash', [EMU_SH, 'stop', dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('scripts/emu.sh start fails when the emulator cannot start', () => {
  const dir = tmpdir();
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{"state": {"schema_version": "state/v9"}}');
  const r = spawnSync('bash', [EMU_SH, 'start', bad, dir], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /exited before listening/);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function story(emu) {
  const out = [];
  const keep = (r) => out.push(r.status, JSON.stringify(r.json).replaceAll(emu.base, 'BASE'));
  keep(await emu.post('/repos/acme/widgets/issues', { title: 'A', body: 'a', labels: ['type:task'] }));
  keep(await emu.post('/repos/acme/widgets/issues', { title: 'B' }, { token: 'tok-actions' }));
  keep(await emu.post('/repos/acme/widgets/issues/2/sub_issues', { sub_issue_id: 1000021 }));
  keep(await emu.post('/repos/acme/widgets/issues/11/dependencies/blocked_by', { issue_id: 1000022 }));
  keep(await emu.post('/repos/acme/widgets/issues/11/comments', { body: 'plan' }));
  keep(await emu.gql('mutation { addProjectV2ItemById(input: {projectId: "PVT_kwDOAA", contentId: "I_D0JV"}) { item { id } } }'));
  keep(await emu.gql('{ repository(owner: "acme", name: "widgets") { issues(first: 100) { nodes { id number updatedAt labels(first: 10) { nodes { name } } } } } }'));
  return { answers: out, dump: JSON.stringify(await emu.state()) };
}

test('the same seed and the same requests give the same bytes', async () => {
  const a = await start();
  const b = await start();
  try {
    const x = await story(a);
    const y = await story(b);
    assert.deepEqual(x.answers, y.answers);
    assert.equal(x.dump, y.dump);
  } finally {
    await a.close();
    await b.close();
  }
});
