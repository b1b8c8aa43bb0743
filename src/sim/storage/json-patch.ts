/**
 * RFC 6902 JSON patch, just the operations KubeVirt's VirtualMachineRestore `spec.patches` use (add, replace,
 * remove, test). Each patch is a JSON string, as in the real API. Bad patches throw with a message naming them.
 */
type Json = unknown;

function decodePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function container(doc: Json, parts: string[], path: string): Record<string, Json> | Json[] {
  let node = doc;
  for (const part of parts) {
    if (Array.isArray(node)) node = node[Number(part)];
    else if (node !== null && typeof node === 'object') node = (node as Record<string, Json>)[part];
    else throw new Error(`path "${path}" does not exist`);
  }
  if (node === null || typeof node !== 'object') throw new Error(`path "${path}" does not exist`);
  return node as Record<string, Json> | Json[];
}

export function applyJsonPatchStrings(doc: Record<string, unknown>, patches: string[]): Record<string, unknown> {
  const out = structuredClone(doc);
  for (const text of patches) {
    let op: { op?: string; path?: string; value?: Json };
    try {
      op = JSON.parse(text) as typeof op;
    } catch {
      throw new Error(`patch ${text} is not valid JSON`);
    }
    const path = op.path ?? '';
    const parts = decodePointer(path);
    const last = parts.pop();
    if (last === undefined) throw new Error(`patch ${text} targets the document root`);
    const parent = container(out, parts, path);
    if (op.op === 'add' || op.op === 'replace') {
      if (Array.isArray(parent)) {
        const index = last === '-' ? parent.length : Number(last);
        if (op.op === 'add') parent.splice(index, 0, op.value);
        else parent[index] = op.value;
      } else {
        if (op.op === 'replace' && !(last in parent)) throw new Error(`patch ${text}: path "${path}" does not exist`);
        parent[last] = op.value;
      }
    } else if (op.op === 'remove') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else if (last in parent) delete parent[last];
      else throw new Error(`patch ${text}: path "${path}" does not exist`);
    } else if (op.op === 'test') {
      const current = Array.isArray(parent) ? parent[Number(last)] : parent[last];
      if (JSON.stringify(current) !== JSON.stringify(op.value)) throw new Error(`patch ${text}: test failed`);
    } else {
      throw new Error(`patch ${text}: unsupported op "${String(op.op)}"`);
    }
  }
  return out;
}
