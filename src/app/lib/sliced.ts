// Long work on the main thread in slices, so the browser can paint and handle input between them. One keystroke's
// filter over 50,000 rows is tens of milliseconds of script in one piece on a slow core: enough to hold the frame
// that shows the key. Run as steps of a generator (filter-index.ts), a slice takes steps until its budget is spent,
// then the next slice waits behind whatever the browser has queued (a frame, the next keystroke).

/** Queues `run` as a task of its own. A MessageChannel message, like React's scheduler: no 4 ms timer clamp. */
export type Post = (run: () => void) => void;

let channel: { port: MessagePort; queue: (() => void)[] } | null = null;

/** The browser's (and Node's) MessageChannel: one channel, its messages in order. */
export const postTask: Post = (run) => {
  if (!channel) {
    const mc = new MessageChannel();
    const queue: (() => void)[] = [];
    mc.port1.onmessage = () => queue.shift()?.();
    channel = { port: mc.port2, queue };
  }
  channel.queue.push(run);
  channel.port.postMessage(null);
};

export interface SliceOptions {
  /** Milliseconds of steps per slice (at least one step runs in each). */
  budgetMs?: number;
  post?: Post;
  now?: () => number;
}

/**
 * Runs `steps` to its end in slices, each a task of its own (the first one too: nothing runs before this
 * returns), and hands the answer to `done`. Returns a cancel function: after it, no further step and no `done`.
 */
export function runSliced<R>(
  steps: Iterator<void, R, void>,
  done: (answer: R) => void,
  { budgetMs = 4, post = postTask, now = () => performance.now() }: SliceOptions = {},
): () => void {
  let cancelled = false;
  const slice = () => {
    if (cancelled) return;
    const until = now() + budgetMs;
    for (;;) {
      const r = steps.next();
      if (r.done) {
        done(r.value);
        return;
      }
      if (now() >= until) break;
    }
    post(slice);
  };
  post(slice);
  return () => {
    cancelled = true;
  };
}
