/**
 * Extensions (plugins): the catalog Corral ships (extensions-catalog.ts) merged with what is installed here.
 *
 * Installed state lives in the cluster, in Corral's ConfigMap `corral-extensions` (key `installed.json`: name →
 * version, when, by whom), so every Corral replica and restart agrees. Install applies the extension's objects with
 * server-side apply (field manager `corral`), each labelled `corral.dev/extension=<name>`; installing again applies
 * them again (idempotent, and it repairs hand edits). Uninstall deletes exactly the objects of the extension's kinds
 * that still carry the label, and reports any object of the extension's that is still there without it (edited by
 * hand): those are left alone. Every install and uninstall is a task whose log lists each object applied or removed.
 */
import { CorralError } from '../errors';
import type { Kind, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { EXTENSION_CATALOG, EXTENSION_LABEL, type ExtensionSpec } from './extensions-catalog';

export const EXTENSIONS_CONFIGMAP = 'corral-extensions';
const STATE_KEY = 'installed.json';

export interface InstalledRecord {
  version: string;
  installedAt: string;
  by: string;
}

export interface ExtensionRow {
  name: string;
  description: string;
  version: string;
  installed: boolean;
  inStore: boolean;
  installedVersion?: string;
  installedAt?: string;
  installs: string[];
  needs: string[];
}

export interface InstallResult {
  installed: string;
  applied: string[];
  task: string;
}

export interface UninstallResult {
  status: 'removed';
  removed: string[];
  left: string[];
  task: string;
}

function spell(kind: Kind, o: KObject): string {
  return `${kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;
}

function parseState(cm: KObject | undefined): Record<string, InstalledRecord> {
  const raw = (cm?.data as Record<string, string> | undefined)?.[STATE_KEY];
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, InstalledRecord>;
  } catch {
    // A corrupt state is read as "nothing recorded"; the next install or uninstall rewrites it.
  }
  return {};
}

export class Extensions {
  constructor(
    private readonly deps: DomainDeps,
    private readonly catalog: readonly ExtensionSpec[] = EXTENSION_CATALOG,
    private readonly onChange: () => void = () => {},
  ) {}

  private get namespace(): string {
    return this.deps.config.defaultNamespace;
  }

  private spec(name: string): ExtensionSpec {
    const spec = this.catalog.find((s) => s.name === name);
    if (!spec) {
      const known = this.catalog.map((s) => s.name).join(', ');
      throw new CorralError('NOT_FOUND', `no extension named ${name} (the catalog has: ${known})`);
    }
    return spec;
  }

  private async state(): Promise<{ cm: KObject | undefined; installed: Record<string, InstalledRecord> }> {
    const cm = await this.deps.cluster.fetch('ConfigMap', this.namespace, EXTENSIONS_CONFIGMAP);
    return { cm, installed: parseState(cm) };
  }

  private async record(name: string, entry: InstalledRecord | undefined): Promise<void> {
    const { cm, installed } = await this.state();
    if (entry) installed[name] = entry;
    else delete installed[name];
    const data = { [STATE_KEY]: JSON.stringify(installed, null, 2) };
    if (!cm) {
      await this.deps.cluster.create('ConfigMap', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: EXTENSIONS_CONFIGMAP,
          namespace: this.namespace,
          labels: { 'app.kubernetes.io/managed-by': 'corral' },
        },
        data,
      });
      return;
    }
    // The resourceVersion makes the write conditional: a concurrent change is a 409, never a lost update.
    await this.deps.cluster.patch('ConfigMap', this.namespace, EXTENSIONS_CONFIGMAP, {
      metadata: { resourceVersion: cm.metadata.resourceVersion },
      data,
    });
  }

  /** Whether the extension is recorded as installed here. */
  async isInstalled(name: string): Promise<boolean> {
    const { installed } = await this.state();
    return installed[name] !== undefined;
  }

  /** The catalog merged with installed state (an installed extension Corral no longer ships has inStore false). */
  async list(): Promise<ExtensionRow[]> {
    const { installed } = await this.state();
    const rows: ExtensionRow[] = this.catalog.map((s) => {
      const rec = installed[s.name];
      return {
        name: s.name,
        description: s.description,
        version: s.version,
        installed: rec !== undefined,
        inStore: true,
        ...(rec ? { installedVersion: rec.version, installedAt: rec.installedAt } : {}),
        installs: s.installs,
        needs: s.needs,
      };
    });
    for (const [name, rec] of Object.entries(installed)) {
      if (rows.some((r) => r.name === name)) continue;
      rows.push({
        name,
        description: 'installed here but no longer in the catalog this Corral ships',
        version: rec.version,
        installed: true,
        inStore: false,
        installedVersion: rec.version,
        installedAt: rec.installedAt,
        installs: [],
        needs: [],
      });
    }
    return rows;
  }

  async install(caller: Caller, name: string): Promise<InstallResult> {
    const spec = this.spec(name);
    const task = this.deps.journal.start('extension-install', `extension/${name}`, caller.identity.login);
    const applied: string[] = [];
    try {
      for (const { kind, object } of spec.objects(this.namespace)) {
        const labelled: KObject = {
          ...object,
          metadata: { ...object.metadata, labels: { ...object.metadata.labels, [EXTENSION_LABEL]: name } },
        };
        await this.deps.cluster.apply(kind, labelled);
        const line = `applied ${spell(kind, labelled)}`;
        applied.push(line);
        task.log(line);
      }
      await this.record(name, {
        version: spec.version,
        installedAt: new Date().toISOString(),
        by: caller.identity.login,
      });
      task.done(`installed ${name} ${spec.version} (${applied.length} objects)`);
    } catch (err) {
      task.fail(err);
      throw err;
    } finally {
      this.onChange();
    }
    return { installed: name, applied, task: task.id };
  }

  async uninstall(caller: Caller, name: string): Promise<UninstallResult> {
    const spec = this.spec(name);
    const { installed } = await this.state();
    const expected = spec.objects(this.namespace);
    const kinds = [...new Set([...expected.map((e) => e.kind), ...(spec.owns ?? [])])];
    const selector = `${EXTENSION_LABEL}=${name}`;
    const labelled = (
      await Promise.all(
        kinds.map(async (kind) =>
          (await this.deps.cluster.fetchList(kind, { labelSelector: selector })).map((object) => ({ kind, object })),
        ),
      )
    ).flat();
    if (installed[name] === undefined && labelled.length === 0) {
      throw new CorralError('CONFLICT', `extension ${name} is not installed`);
    }
    const task = this.deps.journal.start('extension-uninstall', `extension/${name}`, caller.identity.login);
    const removed: string[] = [];
    const left: string[] = [];
    try {
      for (const { kind, object } of labelled) {
        if (await this.deps.cluster.remove(kind, object.metadata.namespace, object.metadata.name ?? '')) {
          const line = `removed ${spell(kind, object)}`;
          removed.push(line);
          task.log(line);
        }
      }
      for (const { kind, object } of expected) {
        const live = await this.deps.cluster.fetch(kind, object.metadata.namespace, object.metadata.name ?? '');
        if (!live) continue;
        const line = `left ${spell(kind, live)}: it no longer carries ${selector} (edited by hand), so it was not touched`;
        left.push(line);
        task.log(line);
      }
      await this.record(name, undefined);
      task.done(`removed ${name} (${removed.length} objects${left.length ? `, ${left.length} left` : ''})`);
    } catch (err) {
      task.fail(err);
      throw err;
    } finally {
      this.onChange();
    }
    return { status: 'removed', removed, left, task: task.id };
  }
}
