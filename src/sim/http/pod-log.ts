/**
 * `GET /api/v1/namespaces/{ns}/pods/{name}/log`: the kubelet's container log. Simulated pods carry their log text in
 * the `sim.corral.dev/log` annotation (controllers append lines to it); a pod without it has printed nothing.
 * Container choice, `tailLines` and `limitBytes` behave like the kubelet; `follow` returns what is there and ends.
 */
import type { ServerResponse } from 'node:http';
import { ApiError, badRequest } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import { sendText } from './wire.js';

export const POD_LOG_ANNOTATION = 'sim.corral.dev/log';

function nonNegativeInt(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`${name}: Invalid value: "${v}": must be a non-negative integer`);
  return Number(v);
}

export function podLogText(pod: KObject, query: URLSearchParams): string {
  const containers = ((pod.spec as { containers?: { name: string }[] } | undefined)?.containers ?? []).map(
    (c) => c.name,
  );
  const name = pod.metadata.name;
  const container = query.get('container');
  if (container !== null && container !== '' && !containers.includes(container)) {
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  }
  if ((container === null || container === '') && containers.length > 1) {
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
  }
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  const text = pod.metadata.annotations?.[POD_LOG_ANNOTATION];
  if (text === undefined && (phase === undefined || phase === 'Pending')) {
    throw new ApiError(
      400,
      'BadRequest',
      `container "${container || containers[0] || ''}" in pod "${name}" is waiting to start: ContainerCreating`,
    );
  }
  let out = text ?? '';
  const tail = nonNegativeInt(query, 'tailLines');
  if (tail !== undefined) {
    const lines = out.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    out = lines
      .slice(Math.max(0, lines.length - tail))
      .map((l) => `${l}\n`)
      .join('');
  }
  const limit = nonNegativeInt(query, 'limitBytes');
  if (limit !== undefined) out = Buffer.from(out).subarray(0, limit).toString('utf8');
  return out;
}

export function servePodLog(res: ServerResponse, pod: KObject, query: URLSearchParams): void {
  sendText(res, 200, podLogText(pod, query));
}
