'use strict';
// Small pure helpers shared by the emulator modules.

const crypto = require('node:crypto');

// Node ids follow docs/state.md: PREFIX + base64url of the id's big-endian
// bytes with leading zero bytes dropped, so the emulator and the file
// backend name the same database id the same way.
function nodeId(prefix, id) {
  let n = BigInt(id);
  const bytes = [];
  while (n > 0n) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  if (bytes.length === 0) bytes.push(0);
  return prefix + Buffer.from(bytes).toString('base64url');
}

function b64url(s) {
  return Buffer.from(s, 'utf8').toString('base64url');
}

function unb64url(s) {
  if (typeof s !== 'string' || !/^[A-Za-z0-9_-]*$/.test(s)) return null;
  return Buffer.from(s, 'base64url').toString('utf8');
}

// ASCII-only case folding: GitHub compares owner/repo names this way.
function fold(s) {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function byteCmp(a, b) {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return Buffer.compare(x, y);
}

// Characters as GitHub counts them for its length limits: code points.
function charLength(s) {
  let n = 0;
  for (const _ of s) n++; // eslint-disable-line no-unused-vars
  return n;
}

// "OWNER/NAME#N" -> {repo, number} or null.
function parseRef(ref) {
  if (typeof ref !== 'string') return null;
  const m = /^([^/#\s]+\/[^/#\s]+)#([1-9][0-9]*)$/.exec(ref);
  if (!m) return null;
  const number = Number(m[2]);
  if (!Number.isSafeInteger(number) || number > 2147483647) return null;
  return { repo: m[1], number };
}

function isoSeconds(ms) {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// Keys sorted at every level, as pm-bot's canonical JSON does, so a dump
// compares byte for byte with pm-bot's own output.
function canonicalize(v) {
  if (Array.isArray(v)) return v.map(canonicalize);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort(byteCmp)) out[k] = canonicalize(v[k]);
    return out;
  }
  return v;
}

function sha256(s) {
  return crypto.createHash('sha256').update(s).digest('hex');
}

module.exports = {
  nodeId, b64url, unb64url, fold, byteCmp, charLength, parseRef, isoSeconds,
  canonicalize, sha256,
};
