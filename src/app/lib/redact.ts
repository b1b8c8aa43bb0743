// The YAML tab shows the VM object as the cluster holds it, minus anything that reads like a secret:
// cloud-init user data (may carry passwords), credentials, tokens, and a Secret's data.
import { stringify } from 'yaml';

export const REDACTED = '<redacted>';

const SECRET_KEYS =
  /^(userData|userDataBase64|networkData|networkDataBase64|password|passwd|token|privateKey|accessKey|secretKey|.*Password|.*Token)$/i;

function redactValue(value: unknown, parentIsSecret: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => redactValue(v, false));
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  const isSecret = obj.kind === 'Secret';
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(obj)) {
    if ((isSecret || parentIsSecret) && (key === 'data' || key === 'stringData') && v && typeof v === 'object') {
      out[key] = Object.fromEntries(Object.keys(v).map((k) => [k, REDACTED]));
    } else if (SECRET_KEYS.test(key) && (typeof v === 'string' || typeof v === 'number')) {
      out[key] = REDACTED;
    } else if (key === 'kubectl.kubernetes.io/last-applied-configuration') {
      // A copy of the whole object: it would repeat what was redacted above.
      out[key] = REDACTED;
    } else {
      out[key] = redactValue(v, false);
    }
  }
  return out;
}

export function redactSecrets<T>(object: T): T {
  return redactValue(object, false) as T;
}

export function toRedactedYaml(object: unknown): string {
  return stringify(redactSecrets(object), { lineWidth: 0 });
}
