'use strict';
// GitHub's official REST description (npm @octokit/openapi): routing by
// method + path template, and request/response validation with ajv. The
// description is read once; validators are compiled lazily, per operation,
// and only the component schemas an operation reaches are registered.

const fs = require('node:fs');
const Ajv = require('ajv');
const addFormats = require('ajv-formats');

const SPEC_PATH = require.resolve('@octokit/openapi/generated/api.github.com.json');
const SCHEMA_ID = 'https://emu.invalid/components/schemas/';
// Keys whose values are data, not schemas: copied as they are.
const DATA_KEYS = new Set(['enum', 'const', 'default', 'example', 'examples', 'required']);
const DROP_KEYS = new Set(['example', 'examples', 'description', 'discriminator', 'externalDocs']);

function refName(ref) {
  const m = /^#\/components\/schemas\/(.+)$/.exec(ref);
  if (!m) throw new Error(`unsupported $ref ${ref}`);
  return m[1].replace(/~1/g, '/').replace(/~0/g, '~');
}

function makeAjv(extra) {
  const ajv = new Ajv({ strict: false, logger: false, validateSchema: false, ...extra });
  addFormats(ajv);
  for (const f of ['uri-template', 'repo.nwo', 'timestamp']) ajv.addFormat(f, true);
  return ajv;
}

// Ruby's inspect, which GitHub's messages use for values.
function inspect(v) {
  if (v === null || v === undefined) return 'nil';
  return JSON.stringify(v);
}

function schemaPath(instancePath) {
  if (!instancePath) return 'links/0/schema';
  return instancePath.split('/').slice(1)
    .map((s) => (/^\d+$/.test(s) ? 'items' : `properties/${s.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('/');
}

function valueAt(data, instancePath) {
  let v = data;
  for (const s of instancePath.split('/').slice(1)) {
    if (v == null) return undefined;
    v = v[s.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

const ARTICLE = { object: 'an object', array: 'an array', integer: 'an integer' };

// ajv errors -> the lines of GitHub's "Invalid request." message. Errors
// inside the branches of a failed oneOf/anyOf are folded into that one.
function describeErrors(errors, data) {
  const lines = [];
  const failedUnions = errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf');
  for (const e of errors) {
    if (/\/(oneOf|anyOf)\/\d+/.test(e.schemaPath)
      && failedUnions.some((u) => e.schemaPath.startsWith(u.schemaPath.replace(/\/(oneOf|anyOf)$/, '')))) {
      continue;
    }
    const where = schemaPath(e.instancePath);
    const value = inspect(valueAt(data, e.instancePath));
    let line;
    switch (e.keyword) {
      case 'required':
        line = `"${e.params.missingProperty}" wasn't supplied.`;
        break;
      case 'type': {
        const t = String(e.params.type).split(',')[0];
        line = `For '${where}', ${value} is not ${ARTICLE[t] || 'a ' + t}.`;
        break;
      }
      case 'enum':
        line = `For '${where}', ${value} is not a member of ${JSON.stringify(e.params.allowedValues)}.`;
        break;
      case 'oneOf':
      case 'anyOf':
        line = `For '${where}', ${value} is not a possible value.`;
        break;
      default:
        line = `For '${where}', ${value} ${e.message}.`;
    }
    if (!lines.includes(line)) lines.push(line);
  }
  return lines;
}

// Prose and examples are two thirds of the parsed description and never
// needed: dropping them keeps the heap small. Keys of a `properties` map are
// names, not keywords, and stay.
function strip(o, inProperties) {
  if (Array.isArray(o)) {
    for (const x of o) strip(x, false);
    return;
  }
  if (!o || typeof o !== 'object') return;
  for (const k of Object.keys(o)) {
    if (!inProperties && (k === 'description' || k === 'example' || k === 'examples' || k === 'summary')) {
      delete o[k];
      continue;
    }
    strip(o[k], k === 'properties' && !inProperties);
  }
}

class OpenApi {
  constructor(specPath) {
    this.spec = JSON.parse(fs.readFileSync(specPath || SPEC_PATH, 'utf8'));
    delete this.spec['x-webhooks'];
    delete this.spec.components.examples;
    strip(this.spec, false);
    this.schemas = this.spec.components.schemas;
    this.bodyAjv = makeAjv({ allErrors: true });
    this.paramAjv = makeAjv({ allErrors: true, coerceTypes: 'array', useDefaults: true });
    this.registered = new Set();
    this.ops = new Map(); // operationId -> op
    this.root = { lit: new Map(), pattern: [], param: null, ops: null };
    for (const [template, item] of Object.entries(this.spec.paths)) {
      for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']) {
        const o = item[method];
        if (!o) continue;
        const params = (item.parameters || []).concat(o.parameters || []).map((p) => this.param(p));
        const op = {
          operationId: o.operationId, method: method.toUpperCase(), template, raw: o, params,
          docUrl: (o.externalDocs && o.externalDocs.url) || 'https://docs.github.com/rest',
          compiled: null,
        };
        this.ops.set(op.operationId, op);
        this.insert(template, op);
      }
    }
  }

  param(p) {
    if (!p.$ref) return p;
    const name = /^#\/components\/parameters\/(.+)$/.exec(p.$ref)[1];
    return this.spec.components.parameters[name];
  }

  insert(template, op) {
    let node = this.root;
    for (const seg of template.split('/').slice(1)) {
      const whole = /^\{([^}]+)\}$/.exec(seg);
      if (whole) {
        if (!node.param) node.param = { name: whole[1], node: { lit: new Map(), pattern: [], param: null, ops: null } };
        node = node.param.node;
      } else if (seg.includes('{')) {
        const names = [];
        const re = new RegExp('^' + seg.split(/(\{[^}]+\})/).map((part) => {
          const m = /^\{([^}]+)\}$/.exec(part);
          if (m) {
            names.push(m[1]);
            return '(.+?)';
          }
          return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        }).join('') + '$');
        let entry = node.pattern.find((x) => x.source === seg);
        if (!entry) {
          entry = { source: seg, re, names, node: { lit: new Map(), pattern: [], param: null, ops: null } };
          node.pattern.push(entry);
        }
        node = entry.node;
      } else {
        if (!node.lit.has(seg)) node.lit.set(seg, { lit: new Map(), pattern: [], param: null, ops: null });
        node = node.lit.get(seg);
      }
    }
    if (!node.ops) node.ops = new Map();
    node.ops.set(op.method, op);
  }

  // -> {op, params} or null. Literal segments win over parameters, as the
  // more specific template does on GitHub (issues/comments vs issues/{n}).
  match(method, pathname) {
    let segs;
    try {
      segs = pathname.split('/').slice(1).map((s) => decodeURIComponent(s));
    } catch {
      return null;
    }
    const walk = (node, i, params) => {
      if (i === segs.length) {
        const op = node.ops && (node.ops.get(method) || (method === 'HEAD' && node.ops.get('GET')));
        return op ? { op, params } : null;
      }
      const s = segs[i];
      if (s === '') return null;
      const lit = node.lit.get(s);
      let r = lit && walk(lit, i + 1, params);
      if (r) return r;
      for (const p of node.pattern) {
        const m = p.re.exec(s);
        if (!m) continue;
        const next = { ...params };
        p.names.forEach((n, j) => { next[n] = m[j + 1]; });
        r = walk(p.node, i + 1, next);
        if (r) return r;
      }
      if (node.param) return walk(node.param.node, i + 1, { ...params, [node.param.name]: s });
      return null;
    };
    return walk(this.root, 0, {});
  }

  ensure(name) {
    if (this.registered.has(name)) return;
    this.registered.add(name);
    const s = this.schemas[name];
    if (!s) throw new Error(`unknown component schema ${name}`);
    const converted = this.convert(s);
    this.bodyAjv.addSchema({ ...converted, $id: SCHEMA_ID + name });
    this.paramAjv.addSchema({ ...converted, $id: SCHEMA_ID + name });
  }

  // OpenAPI 3.0 -> JSON Schema: `nullable`, component $refs.
  convert(schema) {
    if (Array.isArray(schema)) return schema.map((s) => this.convert(s));
    if (!schema || typeof schema !== 'object') return schema;
    if (typeof schema.$ref === 'string') {
      const name = refName(schema.$ref);
      this.ensure(name);
      return { $ref: SCHEMA_ID + name };
    }
    const out = {};
    for (const [k, v] of Object.entries(schema)) {
      if (DROP_KEYS.has(k) || k.startsWith('x-') || k === 'nullable') continue;
      if (DATA_KEYS.has(k)) out[k] = v;
      else if (k === 'properties' || k === 'patternProperties') {
        out[k] = {};
        for (const [pk, pv] of Object.entries(v)) out[k][pk] = this.convert(pv);
      } else out[k] = this.convert(v);
    }
    if (schema.nullable === true) {
      if (out.type) {
        out.type = [].concat(out.type, 'null');
        if (out.enum && !out.enum.includes(null)) out.enum = out.enum.concat([null]);
      } else if (Object.keys(out).length > 0) {
        return { anyOf: [out, { type: 'null' }] };
      }
    }
    return out;
  }

  compiled(op) {
    if (op.compiled) return op.compiled;
    const group = (where) => {
      const ps = op.params.filter((p) => p.in === where);
      const schema = { type: 'object', properties: {}, required: [] };
      for (const p of ps) {
        schema.properties[p.name] = this.convert(p.schema || {});
        if (p.required) schema.required.push(p.name);
      }
      return { names: ps.map((p) => p.name), arrays: ps.filter((p) => p.schema && p.schema.type === 'array').map((p) => p.name), validate: this.paramAjv.compile(schema) };
    };
    const rb = op.raw.requestBody;
    const media = rb && rb.content && (rb.content['application/json'] || Object.values(rb.content)[0]);
    op.compiled = {
      path: group('path'),
      query: group('query'),
      body: media && media.schema ? this.bodyAjv.compile(this.convert(media.schema)) : null,
      bodyRequired: Boolean(rb && rb.required),
    };
    return op.compiled;
  }

  // -> {ok:true, path, query} or {ok:false, where:'path'|'query'|'body', lines}
  validateRequest(op, rawPathParams, searchParams, body, hasBody) {
    const c = this.compiled(op);
    const path = { ...rawPathParams };
    if (!c.path.validate(path)) return { ok: false, where: 'path', lines: describeErrors(c.path.validate.errors, path) };
    const query = {};
    for (const name of c.query.names) {
      if (!searchParams.has(name)) continue;
      query[name] = c.query.arrays.includes(name) ? searchParams.getAll(name) : searchParams.get(name);
    }
    if (!c.query.validate(query)) return { ok: false, where: 'query', lines: describeErrors(c.query.validate.errors, query) };
    if (c.body) {
      if (!hasBody) {
        if (c.bodyRequired) return { ok: false, where: 'body', lines: ["For 'links/0/schema', nil is not an object."] };
      } else if (!c.body(body)) {
        return { ok: false, where: 'body', lines: describeErrors(c.body.errors, body) };
      }
    }
    return { ok: true, path, query };
  }

  // For tests: does `body` fit the documented response? -> [] or messages.
  validateResponse(operationId, status, body) {
    const op = this.ops.get(operationId);
    if (!op) return [`no operation ${operationId}`];
    let r = op.raw.responses[String(status)] || op.raw.responses.default;
    if (r && r.$ref) r = this.spec.components.responses[/[^/]+$/.exec(r.$ref)[0]];
    if (!r) return [`${operationId} documents no ${status} response`];
    const media = r.content && r.content['application/json'];
    if (!media || !media.schema) return body === null || body === undefined || body === '' ? [] : ['no body documented'];
    const key = `resp:${status}`;
    op[key] = op[key] || this.bodyAjv.compile(this.convert(media.schema));
    return op[key](body) ? [] : op[key].errors.map((e) => `${e.instancePath} ${e.message}`);
  }
}

module.exports = { OpenApi, SPEC_PATH };
