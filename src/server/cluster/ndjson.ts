/**
 * A Kubernetes watch answers newline-delimited JSON, one event per line, with lines split across chunks anywhere.
 * Both watch readers (the cache's informers and the one-off watches of `KubeCluster.watch`) cut lines here.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder();
  private buffered = '';

  /** The non-empty lines that `chunk` completes (trimmed); a partial last line waits for the next chunk. */
  push(chunk: Uint8Array): string[] {
    this.buffered += this.decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    let cut: number;
    while ((cut = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, cut).trim();
      this.buffered = this.buffered.slice(cut + 1);
      if (line) lines.push(line);
    }
    return lines;
  }
}
