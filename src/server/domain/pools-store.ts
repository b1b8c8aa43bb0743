/**
 * Where pools live: ConfigMap `corral-folders` (key `folders.json`) in Corral's namespace. Every write is a
 * read-modify-write under a resourceVersion precondition (the apiserver refuses a merge patch carrying a stale
 * `metadata.resourceVersion` with 409), retried on a fresh read, so concurrent writers — several requests, several
 * Corral replicas, a `kubectl edit` — never lose each other's changes. Reads are served from memory: the document
 * is kept current by a watch of that one ConfigMap and by the answers of our own writes, so `/metrics`, the Proxmox
 * rows and `GET /api/folders` never ask the apiserver per request.
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { sleep } from './deps';
import { comparePaths } from './pools-path';

export const FOLDERS_CONFIGMAP = 'corral-folders';
export const FOLDERS_KEY = 'folders.json';
/** Attempts of one read-modify-write before giving up (each conflict means another writer got in first). */
const MAX_ATTEMPTS = 80;

export interface Folder {
  /** Member refs `backend/context/namespace/name`, in the order they were added. */
  members: string[];
  /** Free text (what a Proxmox client sends as a pool's `comment`). */
  comment?: string;
}

/** The stored document: every pool by path (parents always present: the keys form a tree). */
export type FolderDoc = Record<string, Folder>;

/** Reads `folders.json`; broken JSON or malformed entries read as nothing rather than breaking every page. */
export function parseFolders(json: string | undefined): FolderDoc {
  if (!json) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return {};
  }
  const folders = (parsed as { folders?: unknown } | null)?.folders;
  if (!folders || typeof folders !== 'object' || Array.isArray(folders)) return {};
  const out: FolderDoc = {};
  for (const [path, value] of Object.entries(folders as Record<string, unknown>)) {
    const v = (value ?? {}) as { members?: unknown; comment?: unknown };
    const members = Array.isArray(v.members) ? v.members.filter((m): m is string => typeof m === 'string') : [];
    out[path] = { members, ...(typeof v.comment === 'string' && v.comment ? { comment: v.comment } : {}) };
  }
  return out;
}

export function serializeFolders(doc: FolderDoc): string {
  const sorted = Object.keys(doc).sort(comparePaths);
  return JSON.stringify({ version: 1, folders: Object.fromEntries(sorted.map((p) => [p, doc[p]])) }, null, 1);
}

const docOf = (cm: KObject | undefined): FolderDoc =>
  parseFolders(((cm?.data ?? {}) as Record<string, string>)[FOLDERS_KEY]);

/** resourceVersions are opaque strings; on every apiserver we talk to they are integers, compared as such. */
function newer(a: string | undefined, b: string | undefined): boolean {
  if (!a) return false;
  if (!b) return true;
  try {
    return BigInt(a) > BigInt(b);
  } catch {
    return a !== b;
  }
}

const isConflict = (err: unknown) => err instanceof CorralError && err.code === 'CONFLICT';

export class FolderStore {
  private doc: FolderDoc = {};
  private version: string | undefined;
  /** ref → path, rebuilt with the document. */
  private byRef = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private readonly abort = new AbortController();
  private loaded: Promise<void> | undefined;
  /** The tail of this process's queue of writes (update). */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: DomainDeps) {}

  private get namespace(): string {
    return this.deps.config.defaultNamespace;
  }

  /** Starts following the ConfigMap (idempotent); resolves once the first read answered (or failed). */
  start(): Promise<void> {
    this.loaded ??= this.follow();
    return this.loaded;
  }

  close(): void {
    this.abort.abort();
    this.listeners.clear();
  }

  /** Called after every change of the document (ours or another writer's). Returns an unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The current document (do not mutate). */
  current(): Readonly<FolderDoc> {
    return this.doc;
  }

  /** The pool a member ref is in, '' when none. */
  poolOf(ref: string): string {
    return this.byRef.get(ref) ?? '';
  }

  /** A fresh read from the apiserver (what a request that must see the latest state uses). */
  async refresh(): Promise<Readonly<FolderDoc>> {
    this.take(await this.deps.cluster.fetch('ConfigMap', this.namespace, FOLDERS_CONFIGMAP));
    return this.doc;
  }

  /**
   * Applies `change` to the current document and writes it back under a precondition, retrying on conflict.
   * `change` may throw (a CorralError for a refused request) to abort; it mutates the copy it is given.
   * This process's writes go one at a time: they would only conflict with each other, and under the cluster rate
   * limiter 50 concurrent writers retrying against each other cost thousands of requests. Writes of other replicas
   * are still caught by the resourceVersion precondition.
   */
  update<T>(change: (doc: FolderDoc) => T): Promise<T> {
    const run = this.writes.then(() => this.write(change));
    this.writes = run.catch(() => undefined);
    return run;
  }

  private async write<T>(change: (doc: FolderDoc) => T): Promise<T> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const cm = await this.deps.cluster.fetch('ConfigMap', this.namespace, FOLDERS_CONFIGMAP);
      this.take(cm);
      const doc = structuredClone(docOf(cm));
      const result = change(doc);
      const data = { [FOLDERS_KEY]: serializeFolders(doc) };
      try {
        const written = cm
          ? await this.deps.cluster.patch('ConfigMap', this.namespace, FOLDERS_CONFIGMAP, {
              metadata: { resourceVersion: cm.metadata.resourceVersion },
              data,
            })
          : await this.deps.cluster.create('ConfigMap', {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: {
                name: FOLDERS_CONFIGMAP,
                namespace: this.namespace,
                labels: { 'app.kubernetes.io/managed-by': 'corral' },
              },
              data,
            });
        this.take(written);
        return result;
      } catch (err) {
        // 409: another writer created or changed the ConfigMap since our read (a create racing a create gives
        // 409 AlreadyExists). Back off a little, read again.
        if (!isConflict(err)) throw err;
        await sleep(Math.random() * Math.min(40, 4 * attempt));
      }
    }
    throw new CorralError(
      'CONFLICT',
      `ConfigMap ${this.namespace}/${FOLDERS_CONFIGMAP} kept changing under ${MAX_ATTEMPTS} attempts to update it; try again`,
    );
  }

  /** Adopts a newer version of the ConfigMap (or its absence). */
  private take(cm: KObject | undefined, deleted = false): void {
    if (!cm || deleted) {
      // A deletion older than what we hold (our own create came after it) changes nothing.
      if (cm && this.version && newer(this.version, cm.metadata.resourceVersion)) return;
      if (this.version === undefined && Object.keys(this.doc).length === 0) return;
      this.doc = {};
      this.version = undefined;
    } else {
      if (this.version && !newer(cm.metadata.resourceVersion, this.version)) return;
      this.doc = docOf(cm);
      this.version = cm.metadata.resourceVersion;
    }
    this.byRef = new Map();
    for (const [path, folder] of Object.entries(this.doc)) for (const ref of folder.members) this.byRef.set(ref, path);
    for (const l of this.listeners) l();
  }

  /** List, then watch from the list's version; start over after an expired version or a failure (with back-off). */
  private async follow(): Promise<void> {
    let resolveFirst: (() => void) | undefined;
    const firstRead = new Promise<void>((r) => (resolveFirst = r));
    const answered = () => {
      resolveFirst?.();
      resolveFirst = undefined;
    };
    const signal = this.abort.signal;
    const loop = async () => {
      let backoffMs = 0;
      while (!signal.aborted) {
        let delivered = false;
        let watchedSince = Number.POSITIVE_INFINITY;
        try {
          const page = await this.deps.cluster.listPage('ConfigMap', {
            namespace: this.namespace,
            fieldSelector: `metadata.name=${FOLDERS_CONFIGMAP}`,
          });
          const cm = page.items[0];
          if (cm) this.take(cm);
          else if (this.version !== undefined) this.take(undefined, true);
          answered();
          // Ends when closed or expired: then list again (one small object). A stream that ended within a second
          // without delivering anything counts as a failure and backs off (a proxy closing every watch at once);
          // a quiet watch the server closed after a while is simply reopened. The back-off stays short (≤ 5 s, one
          // small list) so pools are current within seconds of the cluster coming back, like the watch cache.
          watchedSince = Date.now();
          await this.deps.cluster.watch(
            'ConfigMap',
            {
              namespace: this.namespace,
              fieldSelector: `metadata.name=${FOLDERS_CONFIGMAP}`,
              resourceVersion: page.resourceVersion,
            },
            (change) => {
              delivered = true;
              if (change.object.metadata.name !== FOLDERS_CONFIGMAP) return;
              if (change.type === 'DELETED') this.take(change.object, true);
              else this.take(change.object);
            },
            signal,
          );
        } catch {
          answered(); // unreachable or refused: readers see what we have (nothing yet); retried below
        }
        const failed = !delivered && Date.now() - watchedSince < 1000;
        backoffMs = failed ? Math.min(5_000, Math.max(1_000, backoffMs * 2)) : 0;
        if (!signal.aborted && backoffMs) await abortableSleep(backoffMs, signal);
      }
    };
    void loop();
    return firstRead;
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
