// Several clusters in the UI's addresses (docs/multi-cluster.md "The UI"): the page of a VM, CT or node of a cluster
// other than the default carries `?context=<name>`, so every URL of the default cluster stays what it was; and every
// call about a row names the row's own cluster, because the same namespace/name often exists in several.

/** A row that may belong to any served cluster (rows carry their kube context). */
export interface ClusterRow {
  namespace: string;
  name: string;
  context?: string;
}

/** `{namespace, name, context}` as every procedure addressed to one VM or CT takes it. */
export function vmRef(row: ClusterRow): { namespace: string; name: string; context?: string } {
  return row.context
    ? { namespace: row.namespace, name: row.name, context: row.context }
    : { namespace: row.namespace, name: row.name };
}

/** `{context}` of a row, to spread into a procedure's input (nothing for a row without one). */
export function inContext(context: string | undefined): { context?: string } {
  return context ? { context } : {};
}

/** `href` with `context=` added when `context` is another cluster than the default one. */
export function withContext(href: string, context: string | undefined, defaultContext: string): string {
  if (!context || !defaultContext || context === defaultContext) return href;
  return `${href}${href.includes('?') ? '&' : '?'}context=${encodeURIComponent(context)}`;
}

export function vmPageHref(row: ClusterRow, defaultContext: string, tab?: string): string {
  const path = `/vms/${encodeURIComponent(row.namespace)}/${encodeURIComponent(row.name)}${tab ? `?tab=${tab}` : ''}`;
  return withContext(path, row.context, defaultContext);
}

export function ctPageHref(row: ClusterRow, defaultContext: string, tab?: string): string {
  const path = `/cts/${encodeURIComponent(row.namespace)}/${encodeURIComponent(row.name)}${tab ? `?tab=${tab}` : ''}`;
  return withContext(path, row.context, defaultContext);
}

export function nodePageHref(node: { name: string; context?: string }, defaultContext: string): string {
  return withContext(`/nodes/${encodeURIComponent(node.name)}`, node.context, defaultContext);
}

/** The cluster a page's URL names (`?context=`), or undefined for the default one. */
export function contextOfSearch(search: { get(key: string): string | null }): string | undefined {
  return search.get('context') || undefined;
}
