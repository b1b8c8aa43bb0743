/**
 * What a download "would" do. The embedded cluster has no network, so importers never fetch anything; instead a
 * fixed, documented rule decides whether a source is reachable and how big it is (docs/sim-storage.md):
 *
 * - unreachable host: a reserved name that never resolves (RFC 2606/6761: `*.invalid`, `*.test`, `*.example`,
 *   `*.localhost`), or `localhost`/`127.x.x.x` (the importer pod's own loopback, where nothing listens);
 * - missing object: a path segment / image name or tag that is `404`, `notfound`, `not-found`, `missing` or
 *   contains `does-not-exist`;
 * - anything else succeeds. Sizes are derived from a hash of the URL, so the same URL always imports alike.
 */
import { createHash } from 'node:crypto';

export type SourceProbe =
  | { ok: true; virtualBytes: number; content: string }
  /** `fatal`: the request itself is malformed (CDI's webhook would refuse it); otherwise the importer retries. */
  | { ok: false; fatal: boolean; message: string };

const RESERVED_SUFFIXES = ['.invalid', '.test', '.example', '.localhost'];
const MISSING = /^(404|notfound|not-found|missing)$|does-not-exist/i;
const GiB = 2 ** 30;
const MiB = 2 ** 20;

/** A stable number in [0, 1) for a string — sizes and rates stay the same across runs. */
export function stableFraction(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 2 ** 32;
}

function unreachableHost(host: string): string | undefined {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '[::1]') return 'connect: connection refused';
  if (RESERVED_SUFFIXES.some((s) => h.endsWith(s)) || ['invalid', 'test', 'example'].includes(h)) {
    return `lookup ${h}: no such host`;
  }
  return undefined;
}

/** CDI `http` source (`https://…/disk.qcow2`). */
export function probeHttpSource(raw: string): SourceProbe {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, fatal: true, message: `spec.source.http.url: Invalid value: "${raw}": not a valid URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      ok: false,
      fatal: true,
      message: `spec.source.http.url: Invalid value: "${raw}": unsupported scheme "${url.protocol.slice(0, -1)}"`,
    };
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const unreachable = unreachableHost(url.hostname);
  if (unreachable) {
    const dial = unreachable.startsWith('connect')
      ? `dial tcp ${url.hostname}:${port}: ${unreachable}`
      : `dial tcp: ${unreachable}`;
    return { ok: false, fatal: false, message: `Unable to connect to http data source: Get "${raw}": ${dial}` };
  }
  if (url.pathname.split('/').some((segment) => MISSING.test(segment))) {
    return {
      ok: false,
      fatal: false,
      message: 'Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found',
    };
  }
  const iso = /\.iso$/i.test(url.pathname);
  // Cloud images 0.5–1 GiB virtual; installer ISOs 2–5 GiB (spec §13.5).
  const [min, max] = iso ? [2 * GiB, 5 * GiB] : [512 * MiB, GiB];
  return { ok: true, virtualBytes: Math.round(min + stableFraction(raw) * (max - min)), content: `http:${raw}` };
}

const REFERENCE =
  /^(?:(?<host>[a-z0-9.-]+(?::\d+)?)\/)?(?<path>[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::(?<tag>[\w][\w.-]{0,127}))?(?:@(?<digest>sha256:[a-f0-9]{64}))?$/;

/** A container image reference (`quay.io/containerdisks/fedora:42`) as a registry client resolves it. */
export function probeImageReference(ref: string): SourceProbe {
  const match = REFERENCE.exec(ref);
  if (!match?.groups) return { ok: false, fatal: true, message: `invalid reference format: "${ref}"` };
  const { host, path, tag } = match.groups;
  // A first component without a dot or port is a Docker Hub namespace, not a host.
  const registry = host && (host.includes('.') || host.includes(':') || host === 'localhost') ? host : 'docker.io';
  const unreachable = unreachableHost(registry.replace(/:\d+$/, ''));
  if (unreachable) {
    return {
      ok: false,
      fatal: false,
      message: `pinging container registry ${registry}: Get "https://${registry}/v2/": dial tcp: ${unreachable}`,
    };
  }
  const parts = [...(path ?? '').split('/'), tag ?? ''];
  if (parts.some((p) => MISSING.test(p))) {
    return {
      ok: false,
      fatal: false,
      message: `reading manifest ${tag ?? 'latest'} in ${registry}/${path ?? ''}: manifest unknown`,
    };
  }
  return { ok: true, virtualBytes: Math.round((5 + stableFraction(ref) * 5) * GiB), content: `image:${ref}` };
}

/** CDI `registry` source (`docker://quay.io/containerdisks/fedora:42`). */
export function probeRegistrySource(raw: string): SourceProbe {
  const match = /^(docker|oci-archive):\/\/(.+)$/.exec(raw);
  if (!match) {
    return {
      ok: false,
      fatal: true,
      message: `spec.source.registry.url: Invalid value: "${raw}": must start with docker:// or oci-archive://`,
    };
  }
  const probe = probeImageReference(match[2]!);
  if (!probe.ok) return probe.fatal ? probe : { ...probe, message: `Unable to process data: ${probe.message}` };
  // Container disks are small: 0.3–2 GiB virtual.
  return { ok: true, virtualBytes: Math.round((0.3 + stableFraction(raw) * 1.7) * GiB), content: `registry:${raw}` };
}
