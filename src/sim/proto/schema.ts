/**
 * Our descriptors of the Kubernetes protobuf messages the embedded cluster decodes, parsed from the compact notation
 * in `descriptors/*.ts`: one message per line (continuation lines are indented),
 * `Name: <no> <jsonName>[?] <type>, …` where `<type>` is a scalar (`string`, `bool`, `int32`, `int64`, `bytes`),
 * a well-known apimachinery type (`Time`, `MicroTime`, `Quantity`, `IntOrString`, `FieldsV1`) or another message,
 * prefixed `[]` for repeated fields and `{}` for `map<string, …>`. A `...` before the name marks a Go embedded
 * struct (`json:",inline"`): its fields sit in the parent's JSON object. `?` marks a Go pointer field: its zero value is
 * meaningful (`replicas: 0`, `automountServiceAccountToken: false`, `storageClassName: ""`) and kept, while zero
 * values of other scalars are dropped as the JSON encoder's `omitempty` drops them.
 */
import { APPS_BATCH } from './descriptors/apps-batch.js';
import { AUTHORIZATION } from './descriptors/authorization.js';
import { COORDINATION } from './descriptors/coordination.js';
import { CORE } from './descriptors/core.js';
import { CORE_POD } from './descriptors/core-pod.js';
import { CORE_VOLUMES } from './descriptors/core-volumes.js';
import { META } from './descriptors/meta.js';
import { POLICY_NETWORKING } from './descriptors/policy-networking.js';
import { RBAC_STORAGE } from './descriptors/rbac-storage.js';

export const SCALARS = ['string', 'bool', 'int32', 'int64', 'bytes'] as const;
export const WELL_KNOWN = ['Time', 'MicroTime', 'Quantity', 'IntOrString', 'FieldsV1'] as const;
export type Scalar = (typeof SCALARS)[number];
export type WellKnown = (typeof WELL_KNOWN)[number];

export interface FieldDesc {
  no: number;
  name: string;
  /** A scalar, a well-known type, or the name of another message. */
  type: string;
  repeated: boolean;
  map: boolean;
  pointer: boolean;
  /** An embedded struct whose fields are inlined into the parent's JSON object. */
  inline: boolean;
}

export interface MessageDesc {
  name: string;
  fields: Map<number, FieldDesc>;
}

const isScalar = (t: string): t is Scalar => (SCALARS as readonly string[]).includes(t);
const isWellKnown = (t: string): t is WellKnown => (WELL_KNOWN as readonly string[]).includes(t);
export const scalarType = (f: FieldDesc): Scalar | undefined => (isScalar(f.type) ? f.type : undefined);
export const wellKnownType = (f: FieldDesc): WellKnown | undefined => (isWellKnown(f.type) ? f.type : undefined);

const FIELD = /^(\d+) (\.\.\.)?([A-Za-z][A-Za-z0-9]*)(\?)? (\[\]|\{\})?([A-Za-z][A-Za-z0-9]*)$/;

/** Parse the notation; throws on a malformed entry, a duplicate, or a reference to an undescribed message. */
export function parseDescriptors(sources: string[]): Map<string, MessageDesc> {
  const messages = new Map<string, MessageDesc>();
  const entries: string[] = [];
  for (const source of sources) {
    for (const line of source.split('\n')) {
      if (!line.trim()) continue;
      if (/^\s/.test(line)) {
        if (!entries.length) throw new Error(`descriptor continuation line without a message: ${line}`);
        entries[entries.length - 1] += ` ${line.trim()}`;
      } else entries.push(line.trim());
    }
  }
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    const name = entry.slice(0, colon);
    if (colon < 1 || messages.has(name)) throw new Error(`bad or duplicate message descriptor: ${entry}`);
    const fields = new Map<number, FieldDesc>();
    const body = entry.slice(colon + 1).trim();
    for (const part of body ? body.split(',') : []) {
      const m = FIELD.exec(part.trim());
      if (!m) throw new Error(`bad field descriptor in ${name}: "${part.trim()}"`);
      const field: FieldDesc = {
        no: Number(m[1]),
        name: m[3]!,
        inline: m[2] === '...',
        pointer: m[4] === '?',
        repeated: m[5] === '[]',
        map: m[5] === '{}',
        type: m[6]!,
      };
      if (fields.has(field.no)) throw new Error(`duplicate field number ${field.no} in ${name}`);
      fields.set(field.no, field);
    }
    messages.set(name, { name, fields });
  }
  for (const message of messages.values()) {
    for (const f of message.fields.values()) {
      if (!isScalar(f.type) && !isWellKnown(f.type) && !messages.has(f.type))
        throw new Error(`${message.name}.${f.name} refers to undescribed message ${f.type}`);
      if (f.inline && (f.repeated || f.map || !messages.has(f.type)))
        throw new Error(`${message.name}.${f.name}: only a single message field can be inlined`);
    }
  }
  return messages;
}

/** The built-in kinds whose bodies are accepted in protobuf, by API group (the message has the kind's name). */
export const PROTOBUF_KINDS: Readonly<Record<string, readonly string[]>> = {
  '': [
    'Namespace',
    'Node',
    'Pod',
    'Service',
    'ConfigMap',
    'Secret',
    'PersistentVolumeClaim',
    'PersistentVolume',
    'Event',
    'ServiceAccount',
  ],
  apps: ['Deployment'],
  batch: ['Job', 'CronJob'],
  'coordination.k8s.io': ['Lease'],
  'networking.k8s.io': ['NetworkPolicy', 'Ingress'],
  policy: ['PodDisruptionBudget'],
  'rbac.authorization.k8s.io': ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
  'storage.k8s.io': ['StorageClass'],
};

/** Every `<Kind>List` of those kinds is {1 metadata ListMeta, 2 items []<Kind>}. */
const LISTS = Object.values(PROTOBUF_KINDS)
  .flat()
  .map((kind) => `${kind}List: 1 metadata ListMeta, 2 items []${kind}`)
  .join('\n');

export const MESSAGES = parseDescriptors([
  META,
  CORE,
  CORE_POD,
  CORE_VOLUMES,
  APPS_BATCH,
  RBAC_STORAGE,
  COORDINATION,
  POLICY_NETWORKING,
  AUTHORIZATION,
  LISTS,
]);

export function protobufMessageFor(group: string, kind: string): MessageDesc | undefined {
  return PROTOBUF_KINDS[group]?.includes(kind) ? MESSAGES.get(kind) : undefined;
}

export function protobufListMessageFor(group: string, kind: string): MessageDesc | undefined {
  return PROTOBUF_KINDS[group]?.includes(kind) ? MESSAGES.get(`${kind}List`) : undefined;
}
