/**
 * The routing table for `/api2/json/…`: a segment trie so a lookup costs one map probe per path segment.
 * Segments are percent-decoded one by one AFTER splitting, because bpg escapes `/` inside volume ids as `%2F`
 * and `!` inside UPIDs as `%21` — decoding the whole path first would split a volume id in two.
 */
import { ProxmoxError } from './wire';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface TrieNode<H> {
  literal: Map<string, TrieNode<H>>;
  param?: { name: string; node: TrieNode<H> };
  handlers: Map<HttpMethod, H>;
}

export interface RouteMatch<H> {
  handler: H;
  params: Record<string, string>;
  /** The pattern that matched, e.g. `/nodes/{node}/qemu/{vmid}/config` (for logs and permission paths). */
  pattern: string;
}

function emptyNode<H>(): TrieNode<H> {
  return { literal: new Map(), handlers: new Map() };
}

/** Split a raw path (no query) into decoded segments; a malformed escape is a client error, not a crash. */
export function splitPath(rawPath: string): string[] {
  return rawPath
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        throw new ProxmoxError(400, `malformed path segment '${s}'`);
      }
    });
}

export class RouteTable<H> {
  private readonly root: TrieNode<H> = emptyNode();
  private readonly patterns = new Map<H, string>();

  add(method: HttpMethod, pattern: string, handler: H): this {
    let node = this.root;
    for (const seg of pattern.split('/').filter(Boolean)) {
      const param = /^\{(\w+)\}$/.exec(seg);
      if (param) {
        const name = param[1] as string;
        if (node.param && node.param.name !== name)
          throw new Error(`route ${pattern}: parameter {${name}} conflicts with {${node.param.name}}`);
        node.param ??= { name, node: emptyNode() };
        node = node.param.node;
      } else {
        let next = node.literal.get(seg);
        if (!next) {
          next = emptyNode();
          node.literal.set(seg, next);
        }
        node = next;
      }
    }
    if (node.handlers.has(method)) throw new Error(`route ${method} ${pattern} registered twice`);
    node.handlers.set(method, handler);
    this.patterns.set(handler, pattern);
    return this;
  }

  /** Literal segments win over parameters (`/nodes/{node}/tasks` vs a VM named `tasks` never collide in PVE). */
  match(method: string, segments: string[]): RouteMatch<H> | undefined {
    const params: Record<string, string> = {};
    const found = this.walk(this.root, segments, 0, params);
    const handler = found?.handlers.get(method as HttpMethod);
    if (!handler) return undefined;
    return { handler, params, pattern: this.patterns.get(handler) ?? '' };
  }

  private walk(
    node: TrieNode<H>,
    segments: string[],
    i: number,
    params: Record<string, string>,
  ): TrieNode<H> | undefined {
    if (i === segments.length) return node;
    const seg = segments[i] as string;
    const lit = node.literal.get(seg);
    if (lit) {
      const found = this.walk(lit, segments, i + 1, params);
      if (found && found.handlers.size > 0) return found;
    }
    if (node.param) {
      const found = this.walk(node.param.node, segments, i + 1, params);
      if (found && found.handlers.size > 0) {
        params[node.param.name] = seg;
        return found;
      }
    }
    return undefined;
  }
}
