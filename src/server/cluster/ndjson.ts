/**
 * A Kubernetes watch answers newline-delimited JSON, one event per line, with lines split across chunks anywhere.
 * Both watch readers (the cache's informers and the one-off watches of `KubeCluster.watch`) cut lines here.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder();
  private buffered = '';

  /** The non-empty lines that `chunk` completes (trimmed); a partial last line waits for the next chunk. */
  push(chunk: Uint8Array): string[] {
    const text = this.buffered + this.decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    // One pass over the chunk (a watch-list's initial events arrive as many lines per chunk): no re-slicing of
    // the rest after every line.
    let from = 0;
    let cut: number;
    while ((cut = text.indexOf('\n', from)) >= 0) {
      const line = text.slice(from, cut).trim();
      from = cut + 1;
      if (line) lines.push(line);
    }
    this.buffered = from === 0 ? text : text.slice(from);
    return lines;
  }
}
