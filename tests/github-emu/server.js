#!/usr/bin/env node
'use strict';
// The loopback GitHub emulator (docs/emulator.md).
//
//   node server.js [--seed FILE] [--port-file FILE] [--port N]
//
// Binds 127.0.0.1 (port 0 = a free one), writes the chosen port to
// --port-file once it accepts connections, and runs until SIGTERM/SIGINT.

const fs = require('node:fs');
const path = require('node:path');
const { Emulator, SeedError } = require('./lib/app');

function usage(msg) {
  process.stderr.write(`github-emu: ${msg}\nusage: node server.js [--seed FILE] [--port-file FILE] [--port N]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const out = { seed: null, portFile: null, port: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--seed') out.seed = val();
    else if (a === '--port-file') out.portFile = val();
    else if (a === '--port') {
      out.port = Number(val());
      if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) usage('--port must be 0..65535');
    } else if (a === '--help' || a === '-h') usage('help');
    else usage(`unknown argument ${a}`);
  }
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let seed;
  if (args.seed) {
    try {
      seed = JSON.parse(fs.readFileSync(args.seed, 'utf8'));
    } catch (e) {
      usage(`cannot read seed ${args.seed}: ${e.message}`);
    }
  }
  let emu;
  try {
    emu = new Emulator(seed);
  } catch (e) {
    if (e instanceof SeedError) usage(`${args.seed}: ${e.message}`);
    throw e;
  }
  const port = await emu.listen(args.port, '127.0.0.1');
  if (args.portFile) {
    // Written whole and renamed into place, so a waiting script never reads
    // half a number.
    const tmp = path.join(path.dirname(args.portFile), `.${path.basename(args.portFile)}.${process.pid}`);
    fs.writeFileSync(tmp, `${port}\n`);
    fs.renameSync(tmp, args.portFile);
  }
  process.stderr.write(`github-emu: listening on http://127.0.0.1:${port}\n`);
  const stop = () => {
    emu.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  process.stderr.write(`github-emu: ${e.stack || e}\n`);
  process.exit(1);
});
