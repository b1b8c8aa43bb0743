/**
 * Request generator for `/api`, driven by the OpenAPI document the running server publishes: every operation,
 * every parameter and body property gets wrong types, missing/extra fields, out-of-range numbers, huge and
 * unicode strings, traversal, malformed bodies and wrong content types. Every generated mutating request is
 * invalid by construction or aimed at a VM that does not exist, so the only acceptable answer is a 4xx; the
 * existing VM only ever receives requests that cannot act on it.
 */
import type { FuzzCase } from './http';
import { sample, type Rng } from './prng';
import { deep, enc, isValid, NASTY_NUMBERS, NASTY_STRINGS, RawJson, toJsonText, type JsonSchema } from './values';

interface OpenApiParam {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  parameters?: OpenApiParam[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  servers?: { url: string }[];
}

export interface Operation {
  method: string;
  template: string;
  pathParams: OpenApiParam[];
  queryParams: OpenApiParam[];
  body?: JsonSchema;
}

export interface ApiTarget {
  namespace: string;
  name: string;
}

type Draft = Omit<FuzzCase, 'id' | 'suite'>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operations(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [template, byMethod] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(byMethod)) {
      if (!METHODS.includes(method)) continue;
      const params = op.parameters ?? [];
      const body = op.requestBody?.content?.['application/json']?.schema;
      ops.push({
        method: method.toUpperCase(),
        template,
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        ...(body ? { body } : {}),
      });
    }
  }
  return ops;
}

/** A value the schema accepts, preferring realistic ones for the fields Corral knows. */
function validValue(key: string, s: JsonSchema, uniq: string): unknown {
  const hints: Record<string, unknown[]> = {
    name: [`fz-${uniq}`],
    namespace: ['tailvm'],
    image: ['fedora'],
    mem: ['4Gi', '4G'],
    disk: ['20Gi', '20G'],
    tag: ['fz'],
    on: [true],
    cpu: [2, 1],
    targetNode: [''],
    format: ['text'],
    limit: [10],
  };
  for (const v of hints[key] ?? []) if (isValid(s, v)) return v;
  if (s.enum?.length) return s.enum[0];
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('boolean')) return false;
  if (types.includes('integer') || types.includes('number')) {
    const lo = s.minimum ?? 1;
    return s.maximum !== undefined ? Math.min(Math.max(lo, 1), s.maximum) : Math.max(lo, 1);
  }
  if (types.includes('object')) return validObject(s, uniq, false);
  if (types.includes('array')) return [];
  for (const v of [
    'fz-a',
    'https://example.invalid/disk.qcow2',
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 fz@corral',
    'a',
    '4Gi',
  ])
    if (isValid(s, v)) return v;
  return 'fz';
}

/** Required properties, plus `image` (one source) when the object has it, so the base of a create is valid. */
function validObject(s: JsonSchema, uniq: string, withSource: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of s.required ?? []) out[k] = validValue(k, s.properties?.[k] ?? {}, uniq);
  if (withSource && s.properties?.image && !(s.required ?? []).includes('image'))
    out.image = validValue('image', s.properties.image, uniq);
  return out;
}

interface Probe {
  label: string;
  value: unknown;
  /** Refused only under issue 14's strict-input rules. */
  strict?: boolean;
}

function typeProbes(inner: unknown): Probe[] {
  return [
    { label: 'number', value: 42 },
    { label: 'zero', value: 0 },
    { label: 'negative', value: -1 },
    { label: 'float', value: 2.5 },
    { label: 'true', value: true },
    { label: 'false', value: false },
    { label: 'null', value: null },
    { label: 'string "false"', value: 'false' },
    { label: 'string "true"', value: 'true' },
    { label: 'string "0"', value: '0' },
    { label: 'string "1"', value: '1' },
    { label: 'string "2"', value: '2' },
    { label: 'string "NaN"', value: 'NaN' },
    { label: 'string "1e309"', value: '1e309' },
    { label: 'empty string', value: '' },
    { label: 'array of the valid value', value: [inner] },
    { label: 'empty array', value: [] },
    { label: 'object wrapping the valid value', value: { value: inner } },
    { label: 'empty object', value: {} },
    { label: 'nested 64 deep', value: deep(64) },
  ];
}

/** Values the issue's strict-input rules refuse although today's published schema may accept them. */
function strictProbes(key: string, s: JsonSchema): Probe[] {
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const out: Probe[] = [];
  if (key === 'name' || key === 'namespace' || key === 'pvc')
    out.push(
      { label: 'DNS-1123: trailing "-"', value: 'fz-bad-' },
      { label: 'DNS-1123: 64 chars', value: 'a'.repeat(64) },
    );
  if (key === 'mem')
    for (const v of ['0Gi', '0', '63Mi', '1Ki', '5Ti', '0.01Gi', '99999999999999999999P', '0G'])
      out.push({ label: `memory out of 64Mi–4Ti: ${v}`, value: v });
  if (key === 'disk')
    for (const v of ['0Gi', '512Mi', '0.5Gi', '65Ti', '99999999999999999999P', '0G'])
      out.push({ label: `disk out of 1Gi–64Ti: ${v}`, value: v });
  if (key === 'cpu') for (const v of [0, 513, 100000]) out.push({ label: `cpu out of 1–512: ${v}`, value: v });
  if (types.includes('boolean'))
    for (const v of ['false', 'true', '0', '1', 'no', 'off'])
      out.push({ label: `boolean as string "${v}" (no coercion)`, value: v });
  if (types.includes('integer') || types.includes('number'))
    for (const v of ['2', ' 2', '0x2', '2e0']) out.push({ label: `number as string "${v}" (no coercion)`, value: v });
  return out.map((p) => ({ ...p, strict: true }));
}

/** Every value the property's schema refuses, from the generic lists. */
function invalidProbes(key: string, s: JsonSchema, uniq: string): Probe[] {
  const inner = validValue(key, s, uniq);
  const probes: Probe[] = [...typeProbes(inner)];
  for (const n of NASTY_NUMBERS)
    probes.push({ label: `number ${n instanceof RawJson ? n.text : String(n)}`, value: n });
  for (const str of NASTY_STRINGS) probes.push({ label: `string ${JSON.stringify(str)}`, value: str });
  if (s.maxLength !== undefined)
    probes.push({ label: `maxLength+1 (${s.maxLength + 1})`, value: 'a'.repeat(s.maxLength + 1) });
  probes.push({ label: 'huge string (200k)', value: 'x'.repeat(200_000) });
  probes.push({ label: 'huge unicode (40k emoji)', value: '😀'.repeat(40_000) });
  const out = probes.filter((p) => !isValid(s, p.value));
  for (const p of strictProbes(key, s)) if (!out.some((o) => o.value === p.value)) out.push(p);
  return out;
}

/** Schema-valid but hostile values for unconstrained fields: they ride along with an invalidating change. */
function noiseValues(s: JsonSchema): unknown[] {
  const max = s.maxLength ?? 100_000;
  return NASTY_STRINGS.filter((v) => v.length * 2 <= max && isValid(s, v));
}

const UNKNOWN_FIELDS: { key: string; nameable: boolean }[] = [
  { key: 'fuzzExtra', nameable: true },
  { key: 'constructor', nameable: true },
  { key: 'toString', nameable: true },
  { key: 'Name', nameable: true },
  { key: '__proto__', nameable: false },
  { key: 'name ', nameable: false },
  { key: 'ñame', nameable: false },
  { key: '', nameable: false },
];

const PATH_PROBES: readonly string[] = [
  '..',
  '%2e%2e',
  '%2E%2E',
  '.',
  '%2F',
  'a%2Fb',
  '..%2F..%2Fetc%2Fpasswd',
  '%252e%252e',
  '%00',
  'a%00b',
  '%',
  '%zz',
  '%C0%AE%C0%AE',
  enc('ñandú'),
  enc('😀'),
  enc('\u202Eevil'),
  'UPPER',
  'trailing-',
  '-leading',
  '%20',
  'a'.repeat(300),
  'a'.repeat(6000),
  enc('<script>'),
  '~root',
  '',
];

const JSON_HEADERS = { 'content-type': 'application/json' };

export interface ApiGenOptions {
  /** Path prefix of the REST API (`/api`). */
  prefix: string;
  /** A stopped VM that exists; it only receives requests that cannot act on it. */
  existing: ApiTarget;
  /** How many requests to generate in total. */
  count: number;
}

/** Routes where an invalid request may safely name the existing (stopped) VM. */
function safeOnExisting(op: Operation): boolean {
  if (op.method === 'GET') return true;
  return op.method === 'POST' && (op.template.endsWith('/tags') || op.template.endsWith('/migrate'));
}

function fillPath(op: Operation, values: Record<string, string>): string {
  return op.template.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? 'x');
}

export function generateApiCases(doc: OpenApiDocument, rng: Rng, options: ApiGenOptions): Draft[] {
  const ops = operations(doc);
  const drafts: Draft[] = [];
  let uniq = 0;
  const nextUniq = () => `${(uniq++).toString(36)}`;

  const pathValues = (op: Operation, target: 'existing' | 'ghost'): Record<string, string> => {
    const v: Record<string, string> = {};
    for (const p of op.pathParams) {
      if (p.name === 'namespace') v[p.name] = options.existing.namespace;
      else if (p.name === 'name') v[p.name] = target === 'existing' ? options.existing.name : `fz-ghost-${nextUniq()}`;
      else if (p.schema?.enum?.length) v[p.name] = String(p.schema.enum[0]);
      else v[p.name] = `fz-ghost-${nextUniq()}`;
    }
    return v;
  };
  const route = (op: Operation) => `${op.method} ${op.template}`;
  const hasVmTarget = (op: Operation) => op.pathParams.some((p) => p.name === 'name');
  const targetFor = (op: Operation): 'existing' | 'ghost' =>
    hasVmTarget(op) && safeOnExisting(op) ? 'existing' : 'ghost';
  const url = (op: Operation, pv: Record<string, string>, query = '') =>
    `${options.prefix}${fillPath(op, pv)}${query ? `?${query}` : ''}`;

  const bodyCase = (op: Operation, body: string, label: string, extra: Partial<Draft> = {}): Draft => ({
    method: op.method,
    path: url(op, pathValues(op, targetFor(op))),
    headers: { ...JSON_HEADERS },
    body,
    route: route(op),
    label,
    mustRefuse: true,
    ...extra,
  });

  // 1. Body properties: every invalid value of every property, each alone on an otherwise valid body.
  for (const op of ops) {
    const s = op.body;
    if (!s?.properties) continue;
    for (const [key, ps] of Object.entries(s.properties)) {
      const all = invalidProbes(key, ps, 'x');
      const keep = (p: Probe) => p.strict || p.label.startsWith('maxLength') || p.label.startsWith('huge');
      for (const p of [
        ...all.filter(keep),
        ...sample(
          rng,
          all.filter((x) => !keep(x)),
          14,
        ),
      ]) {
        const body = { ...validObject(s, nextUniq(), true), [key]: p.value };
        drafts.push(bodyCase(op, toJsonText(body), `body.${key} = ${p.label}`, p.strict ? { strictRule: true } : {}));
      }
    }
    // Missing required properties.
    for (const key of s.required ?? []) {
      const body = validObject(s, nextUniq(), true);
      delete body[key];
      drafts.push(bodyCase(op, toJsonText(body), `body.${key} missing (required)`));
    }
    // Unknown properties: refused with a 400 that names them.
    for (const u of UNKNOWN_FIELDS) {
      const body: Record<string, unknown> = { ...validObject(s, nextUniq(), true) };
      Object.defineProperty(body, u.key, { value: 1, enumerable: true, configurable: true, writable: true });
      const useGhost = !safeOnExisting(op) || op.template.endsWith('/migrate');
      const c = bodyCase(op, toJsonText(body), `unknown field ${JSON.stringify(u.key)}`, {
        strictRule: true,
        ...(u.nameable ? { mustName: u.key } : {}),
      });
      if (useGhost && hasVmTarget(op)) c.path = url(op, pathValues(op, 'ghost'));
      drafts.push(c);
    }
    // Two sources at once (create).
    if (s.properties.image && s.properties.containerDisk) {
      const body = { ...validObject(s, nextUniq(), true), containerDisk: 'quay.io/containerdisks/fedora:42' };
      drafts.push(bodyCase(op, toJsonText(body), 'two sources (image + containerDisk)'));
    }
  }

  // 2. Whole bodies: malformed JSON, JSON that is not an object, empty, oversized, wrong content type, cross-site.
  const malformed: [string, string][] = [
    ['{', 'truncated object'],
    ['{"name":', 'truncated value'],
    ['[', 'truncated array'],
    ['nul', 'bad literal'],
    ['{"a":1}}', 'trailing brace'],
    ["{'name':'x'}", 'single quotes'],
    ['{"name":"x",}', 'trailing comma'],
    ['NaN', 'NaN literal'],
    ['\u0000', 'NUL byte'],
    ['\uFEFF{}', 'BOM before {}'],
    ['{"a":"\\u"}', 'bad escape'],
    ['['.repeat(100_000), '100k unclosed ['],
    [`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`, '5000-deep object'],
    ['[]', 'array'],
    ['"str"', 'string'],
    ['42', 'number'],
    ['null', 'null'],
    ['true', 'true'],
    ['[{"name":"fz-arr"}]', 'array of objects'],
  ];
  for (const op of ops) {
    if (op.method === 'GET') continue;
    const isPost = op.method === 'POST';
    for (const [text, what] of malformed) {
      if (!isPost && text === '') continue;
      drafts.push({ ...bodyCase(op, text, `malformed body: ${what}`), path: url(op, pathValues(op, 'ghost')) });
    }
    if (isPost && op.body?.required?.length) drafts.push(bodyCase(op, '', 'empty body (required fields missing)'));
    if (isPost) {
      const s = op.body ?? { type: 'object' };
      const valid = toJsonText(validObject(s, nextUniq(), true));
      const form = new URLSearchParams(
        Object.entries(validObject(s, nextUniq(), true)).map(([k, v]) => [k, String(v)]),
      );
      const types: [string | undefined, string][] = [
        ['text/plain', valid],
        ['application/x-www-form-urlencoded', form.toString()],
        [
          'multipart/form-data; boundary=fz',
          `--fz\r\nContent-Disposition: form-data; name="name"\r\n\r\nfz\r\n--fz--\r\n`,
        ],
        ['application/xml', '<vm><name>fz</name></vm>'],
        [undefined, valid],
        ['application/jsonx', valid],
      ];
      for (const [ct, body] of types) {
        const c = bodyCase(op, body, `content-type ${ct ?? '(none)'}`);
        if (ct === undefined) delete c.headers['content-type'];
        else c.headers['content-type'] = ct;
        drafts.push(c);
      }
      drafts.push({
        ...bodyCase(op, valid, 'cross-site Origin'),
        headers: { ...JSON_HEADERS, origin: 'http://evil.example' },
      });
      drafts.push({
        ...bodyCase(op, valid, 'Sec-Fetch-Site: cross-site'),
        headers: { ...JSON_HEADERS, 'sec-fetch-site': 'cross-site' },
      });
      drafts.push(
        bodyCase(op, `{"cloudInit":"${'a'.repeat(1_200_000)}"}`, 'body over 1 MiB', { freshConnection: true }),
      );
    }
  }

  // 3. Path parameters: traversal, encodings, NUL, unicode, huge, empty — and valid names of VMs that do not exist.
  for (const op of ops) {
    for (const p of op.pathParams) {
      for (const probe of sample(rng, PATH_PROBES, 9)) {
        if (p.schema?.enum?.includes(probe)) continue;
        // A GET whose dot segments (or empty segment) resolve to another readable route may answer it.
        const resolvesElsewhere = op.method === 'GET' && ['..', '%2e%2e', '%2E%2E', '.', ''].includes(probe);
        const pv = { ...pathValues(op, targetFor(op)), [p.name]: probe };
        drafts.push({
          method: op.method,
          path: url(op, pv),
          headers: op.method === 'GET' ? {} : { ...JSON_HEADERS },
          ...(op.method === 'POST' ? { body: toJsonText(validObject(op.body ?? {}, nextUniq(), true)) } : {}),
          route: route(op),
          label: `path {${p.name}} = ${JSON.stringify(probe.slice(0, 40))}`,
          mustRefuse: !resolvesElsewhere,
        });
      }
    }
    if (hasVmTarget(op)) {
      // Valid shape, no such VM: 404.
      for (const ns of ['tailvm', 'fz-no-such-namespace']) {
        const pv = { ...pathValues(op, 'ghost'), namespace: ns };
        drafts.push({
          method: op.method,
          path: url(op, pv),
          headers: op.method === 'GET' ? {} : { ...JSON_HEADERS },
          ...(op.method === 'POST' ? { body: toJsonText(validObject(op.body ?? {}, nextUniq(), true)) } : {}),
          route: route(op),
          label: `valid request for a VM that does not exist (${ns})`,
          mustRefuse: true,
        });
      }
    }
  }

  // 4. Query parameters.
  for (const op of ops) {
    for (const p of op.queryParams) {
      const s = p.schema ?? {};
      const isNum = s.type === 'integer' || s.type === 'number';
      const candidates = isNum
        ? [
            'abc',
            '1.5',
            '-1',
            '0',
            '1001',
            '9007199254740993',
            'NaN',
            'Infinity',
            'true',
            '0x10',
            '99999999999999999999',
          ]
        : [...sample(rng, NASTY_STRINGS, 12), 'a'.repeat(5000)];
      for (const v of candidates) {
        const parsed = isNum ? (/^-?\d+$/.test(v) ? Number(v) : Number.NaN) : v;
        const invalid = !isValid(s, parsed);
        drafts.push({
          method: op.method,
          path: url(op, pathValues(op, targetFor(op)), `${enc(p.name)}=${enc(v)}`),
          headers: {},
          route: route(op),
          label: `query ${p.name}=${JSON.stringify(v.slice(0, 40))}${invalid ? ' (invalid)' : ''}`,
          mustRefuse: invalid,
        });
      }
      drafts.push({
        method: op.method,
        path: url(op, pathValues(op, targetFor(op)), `${p.name}=1&${p.name}=2&${p.name}[]=x&${p.name}[a]=b`),
        headers: {},
        route: route(op),
        label: `query ${p.name} repeated / array / object syntax`,
        mustRefuse: false,
      });
    }
    if (op.method === 'GET')
      drafts.push({
        method: op.method,
        path: url(op, pathValues(op, targetFor(op)), 'fuzzExtra=1&__proto__[x]=1&constructor[prototype][x]=1'),
        headers: {},
        route: route(op),
        label: 'unknown query parameters (prototype pollution shapes)',
        mustRefuse: false,
      });
  }

  // 5. Methods no route has, and paths no route has.
  const templates = [...new Set(ops.map((o) => o.template))];
  for (const t of templates) {
    const have = new Set(ops.filter((o) => o.template === t).map((o) => o.method));
    const op = ops.find((o) => o.template === t) as Operation;
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      if (have.has(m)) continue;
      // POST …/{x} shadows: a GET-only path may still match the generic action route for POST; aim at a ghost VM.
      drafts.push({
        method: m,
        path: url(op, pathValues(op, 'ghost')),
        headers: m === 'GET' || m === 'DELETE' ? {} : { ...JSON_HEADERS },
        ...(m === 'GET' || m === 'DELETE' ? {} : { body: '{}' }),
        route: `${m} ${t}`,
        label: `method ${m} not defined for the path`,
        mustRefuse: true,
      });
    }
  }
  const strayPaths = [
    '/doesnotexist',
    '/vms/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    `/vms/${options.existing.namespace}/${options.existing.name}/../../../healthz`,
    '//vms',
    '/vms/tailvm',
    '/vms/tailvm/fz-ghost/row/extra',
    '/vms%00',
    `/${'a'.repeat(8000)}`,
    '/tasks/',
    '/nodes/',
  ];
  for (const p of strayPaths)
    for (const m of ['GET', 'POST', 'DELETE'])
      drafts.push({
        method: m,
        path: `${options.prefix}${p}`,
        headers: m === 'POST' ? { ...JSON_HEADERS } : {},
        ...(m === 'POST' ? { body: '{}' } : {}),
        route: `${m} (no route)`,
        label: `unrouted path ${p.slice(0, 60)}`,
        mustRefuse: m !== 'GET',
      });

  // 6. Random combinations up to the requested count: 1–3 invalid properties plus hostile-but-valid noise.
  const withBody = ops.filter((o) => o.body?.properties);
  while (drafts.length < options.count && withBody.length) {
    const op = rng.pick(withBody);
    const s = op.body as JsonSchema;
    const props = Object.entries(s.properties ?? {});
    const body: Record<string, unknown> = validObject(s, nextUniq(), true);
    const labels: string[] = [];
    let strict = false;
    const k = rng.int(1, 3);
    for (let i = 0; i < k; i++) {
      const [key, ps] = rng.pick(props);
      const probe = rng.pick(invalidProbes(key, ps, 'x'));
      body[key] = probe.value;
      labels.push(`${key} = ${probe.label}`);
      if (probe.strict) strict = true;
    }
    for (const [key, ps] of props) {
      if (key in body || key === 'name' || key === 'start' || !rng.chance(0.3)) continue;
      const noise = noiseValues(ps);
      if (noise.length) {
        body[key] = rng.pick(noise);
        labels.push(`${key} = noise ${JSON.stringify(String(body[key]).slice(0, 30))}`);
      }
    }
    // Strict-only probes on actions go to a ghost VM: today's code would act on the existing one.
    const c = bodyCase(op, toJsonText(body), `combo: ${labels.join('; ')}`, strict ? { strictRule: true } : {});
    if (strict && hasVmTarget(op) && op.template.endsWith('/migrate')) c.path = url(op, pathValues(op, 'ghost'));
    drafts.push(c);
  }
  return drafts;
}
