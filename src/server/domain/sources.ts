/**
 * Custom image sources: a JSON array in ConfigMap `corral-sources` (key `sources.json`) in Corral's namespace.
 * Every write is read-modify-write under a resourceVersion precondition (a merge patch carrying
 * `metadata.resourceVersion` is refused with 409 Conflict by the apiserver when the object changed meanwhile), and a
 * refused write is retried on a fresh read, so concurrent writers never lose each other's entries.
 */
import type { SourceInput, SourceKind } from '../schemas/images';
import { CorralError } from '../errors';
import type { ClusterPort, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { sleep } from './deps';
import { runAsTask } from './tasks';

export const SOURCES_CONFIGMAP = 'corral-sources';
export const SOURCES_KEY = 'sources.json';
/** Attempts of one read-modify-write before giving up (each conflict means another writer succeeded). */
const MAX_ATTEMPTS = 60;

export interface CustomSource {
  name: string;
  kind: SourceKind;
  uri: string;
  description?: string;
}

const KINDS: readonly string[] = ['containerDisk', 'url', 'iso'];

/** The entries of `sources.json`; malformed entries are skipped and broken JSON reads as none. */
export function parseSources(json: string | undefined): CustomSource[] {
  if (!json) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    // A hand-edited ConfigMap with broken JSON must not break the catalog: the curated part still answers.
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.filter(
    (s): s is CustomSource =>
      typeof s === 'object' &&
      s !== null &&
      typeof (s as CustomSource).name === 'string' &&
      KINDS.includes((s as CustomSource).kind) &&
      typeof (s as CustomSource).uri === 'string',
  );
}

function sourcesOf(cm: KObject | undefined): CustomSource[] {
  return parseSources(((cm?.data ?? {}) as Record<string, string>)[SOURCES_KEY]);
}

export async function readSources(cluster: ClusterPort, namespace: string): Promise<CustomSource[]> {
  return sourcesOf(await cluster.fetch('ConfigMap', namespace, SOURCES_CONFIGMAP));
}

function isConflict(err: unknown): boolean {
  return err instanceof CorralError && err.code === 'CONFLICT';
}

/** The tail of this process's queue of source writes, per cluster (see updateSources). */
const writeQueues = new WeakMap<ClusterPort, Promise<unknown>>();

/**
 * Applies `change` to the current list and writes it back under a precondition, retrying on conflict. `change`
 * may throw (e.g. NOT_FOUND) to abort; it returns the new list. Returns how many attempts it took.
 * This process's writes to a cluster go one at a time, as the pools' do: they would only conflict with each other,
 * and under the cluster rate limiter concurrent writers retrying against each other cost many requests each.
 * Other replicas' writes are still caught by the resourceVersion precondition.
 */
export function updateSources(
  cluster: ClusterPort,
  namespace: string,
  change: (current: CustomSource[]) => CustomSource[],
): Promise<number> {
  const run = (writeQueues.get(cluster) ?? Promise.resolve()).then(() => writeSources(cluster, namespace, change));
  writeQueues.set(
    cluster,
    run.catch(() => undefined),
  );
  return run;
}

async function writeSources(
  cluster: ClusterPort,
  namespace: string,
  change: (current: CustomSource[]) => CustomSource[],
): Promise<number> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const cm = await cluster.fetch('ConfigMap', namespace, SOURCES_CONFIGMAP);
    const next = JSON.stringify(change(sourcesOf(cm)), null, 2);
    try {
      if (!cm) {
        await cluster.create('ConfigMap', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: SOURCES_CONFIGMAP, namespace, labels: { 'app.kubernetes.io/managed-by': 'corral' } },
          data: { [SOURCES_KEY]: next },
        });
      } else {
        await cluster.patch('ConfigMap', namespace, SOURCES_CONFIGMAP, {
          metadata: { resourceVersion: cm.metadata.resourceVersion },
          data: { [SOURCES_KEY]: next },
        });
      }
      return attempt;
    } catch (err) {
      // 409: another writer created or changed the ConfigMap since our read. Back off a little, read again.
      if (!isConflict(err)) throw err;
      await sleep(Math.random() * Math.min(50, 5 * attempt));
    }
  }
  throw new CorralError(
    'CONFLICT',
    `ConfigMap ${namespace}/${SOURCES_CONFIGMAP} kept changing under ${MAX_ATTEMPTS} attempts to update it; try again`,
  );
}

function entryOf(input: SourceInput): CustomSource {
  return {
    name: input.name,
    kind: input.kind,
    uri: input.uri,
    ...(input.description ? { description: input.description } : {}),
  };
}

/** Adds or replaces (by name) a custom source; a name of the curated catalog is refused (it would be hidden). */
export async function saveSource(
  deps: DomainDeps,
  caller: Caller,
  input: SourceInput,
  curatedNames: ReadonlySet<string>,
): Promise<{ status: 'ok'; name: string }> {
  if (curatedNames.has(input.name)) {
    throw new CorralError('CONFLICT', `name: '${input.name}' is a curated catalog image; pick another name`);
  }
  const namespace = deps.config.defaultNamespace;
  return runAsTask(deps.journal, 'source-save', `source/${input.name}`, caller.identity.login, async (task) => {
    let replaced = false;
    const attempts = await updateSources(deps.cluster, namespace, (current) => {
      const entry = entryOf(input);
      const at = current.findIndex((s) => s.name === input.name);
      replaced = at >= 0;
      return at >= 0 ? current.map((s, i) => (i === at ? entry : s)) : [...current, entry];
    });
    task.done(
      `${replaced ? 'replaced' : 'added'} ${input.kind} source ${input.name} (${input.uri})` +
        (attempts > 1 ? ` after ${attempts - 1} concurrent update(s)` : ''),
    );
    return { status: 'ok' as const, name: input.name };
  });
}

export async function removeSource(deps: DomainDeps, caller: Caller, name: string): Promise<{ status: 'removed' }> {
  const namespace = deps.config.defaultNamespace;
  if (!(await readSources(deps.cluster, namespace)).some((s) => s.name === name)) {
    throw new CorralError('NOT_FOUND', `custom source ${name} not found (see GET /api/sources)`);
  }
  return runAsTask(deps.journal, 'source-remove', `source/${name}`, caller.identity.login, async (task) => {
    await updateSources(deps.cluster, namespace, (current) => {
      if (!current.some((s) => s.name === name)) {
        throw new CorralError('NOT_FOUND', `custom source ${name} not found (removed meanwhile)`);
      }
      return current.filter((s) => s.name !== name);
    });
    task.done(`removed source ${name}`);
    return { status: 'removed' as const };
  });
}
