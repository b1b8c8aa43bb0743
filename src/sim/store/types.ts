/**
 * Shapes shared by the embedded cluster's store, HTTP layer and controllers.
 * Objects are plain JSON as they travel on the wire; the store never hands out a value a caller may mutate.
 */

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  creationTimestamp: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A Kubernetes object as stored: TypeMeta always present, spec/status/data/... free-form. */
export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** What a writer hands to `create`: the server fills uid, resourceVersion, timestamps. */
export interface NewObject {
  apiVersion: string;
  kind: string;
  metadata: Partial<ObjectMeta> & { name?: string; generateName?: string };
  [key: string]: unknown;
}

/** Identifies a resource type independent of version: `"<group>/<plural>"`, group "" for core. */
export type ResourceKey = string;

export interface ResourceType {
  group: string;
  version: string;
  /** Extra versions served as aliases of `version` (e.g. kubevirt.io/v1alpha3). */
  aliasVersions?: string[];
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs: string[];
  /** Has a `/status` subresource: main-resource writes keep the stored status. */
  hasStatus: boolean;
  /** Built-in (core) kinds accept strategic merge patch and omit TypeMeta in list items. */
  builtin: boolean;
  /** Finalizers the store adds on create (e.g. kubevirt.io/virtualMachineControllerFinalize). */
  defaultFinalizers?: string[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  key: ResourceKey;
  object: KObject;
  /** The global resourceVersion of this write. */
  rv: number;
  /** The stored state this write replaced (MODIFIED/DELETED), so watches can tell objects leaving a selection. */
  previous?: KObject;
}

export function resourceKey(group: string, plural: string): ResourceKey {
  return `${group}/${plural}`;
}
