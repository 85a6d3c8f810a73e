// Waiting for what happened instead of for a while: a child's output read line by line with
// waits for the line that says something happened, and a poll of a condition that ends when
// the thing that could make it true is gone (a process exited). Tests use these instead of
// fixed sleeps or "within N s" deadlines, so they pass on a busy machine as on a quiet one.

/** A matcher for one line of output. */
export type LineTest = RegExp | ((line: string) => boolean);

interface Waiter {
  test: (line: string) => boolean;
  what: string;
  resolve: (line: string) => void;
  reject: (error: Error) => void;
}

function asPredicate(test: LineTest): (line: string) => boolean {
  return test instanceof RegExp ? (l) => test.test(l) : test;
}

/**
 * Reads a byte stream to its end, line by line, keeping every line; `waitFor` resolves with
 * the first line (seen before or after the call) that matches, and rejects when the stream
 * ends without one.
 *
 * @example
 * ```ts ignore
 * const err = new LineWatcher(child.stderr);
 * await err.waitFor(/retrying in/, "the first retry");
 * ```
 */
export class LineWatcher {
  #lines: string[] = [];
  #partial = "";
  #ended = false;
  #waiters: Waiter[] = [];
  /** Resolves with the whole text once the stream has ended. */
  readonly done: Promise<string>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = this.#read(stream);
  }

  async #read(stream: ReadableStream<Uint8Array>): Promise<string> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream) this.#push(decoder.decode(chunk, { stream: true }));
      this.#push(decoder.decode());
    } finally {
      if (this.#partial !== "") this.#line(this.#partial);
      this.#partial = "";
      this.#ended = true;
      for (const w of this.#waiters.splice(0)) {
        w.reject(new Error(`the output ended before ${w.what}:\n${this.text().slice(-4000)}`));
      }
    }
    return this.text();
  }

  #push(text: string): void {
    const parts = (this.#partial + text).split("\n");
    this.#partial = parts.pop() ?? "";
    for (const line of parts) this.#line(line);
  }

  #line(line: string): void {
    this.#lines.push(line);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.test(line)) return true;
      w.resolve(line);
      return false;
    });
  }

  /** The complete lines so far. */
  lines(): readonly string[] {
    return this.#lines;
  }

  /** The text so far (complete lines, each with its newline, then any partial line). */
  text(): string {
    return this.#lines.map((l) => `${l}\n`).join("") + this.#partial;
  }

  /** The first line matching `test`; rejects (naming `what`) if the output ends first. */
  waitFor(test: LineTest, what: string): Promise<string> {
    const predicate = asPredicate(test);
    const seen = this.#lines.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    if (this.#ended) {
      return Promise.reject(
        new Error(`the output ended before ${what}:\n${this.text().slice(-4000)}`),
      );
    }
    return new Promise((resolve, reject) => {
      this.#waiters.push({ test: predicate, what, resolve, reject });
    });
  }

  /** Resolves once `count` complete lines matching `test` have been seen. */
  async waitForCount(test: LineTest, count: number, what: string): Promise<void> {
    const predicate = asPredicate(test);
    let seen = 0;
    await this.waitFor((line) => predicate(line) && ++seen >= count, what);
  }
}

/** Options for {@linkcode waitUntil}. */
export interface WaitUntilOptions {
  /** What is awaited, for the failure message. */
  what: string;
  /**
   * Settles when the condition can no longer become true (the process that would make it
   * true has exited); the wait then fails unless the condition holds one last time. Required:
   * every wait names what ends it, so a broken test fails instead of hanging.
   */
  until: Promise<unknown>;
  /** Poll interval in ms (default 25). The interval only paces polling; it is never a limit. */
  everyMs?: number;
}

/**
 * Polls `condition` until it holds. Ends with an error when `until` settles first and the
 * condition still does not hold: no wall-clock limit, so a slow machine only waits longer.
 *
 * @example
 * ```ts ignore
 * await waitUntil(() => exists(marker), { what: "the agent started", until: child.status });
 * ```
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  options: WaitUntilOptions,
): Promise<void> {
  let over = false;
  options.until.then(() => (over = true), () => (over = true));
  const every = options.everyMs ?? 25;
  while (!(await condition())) {
    if (over) {
      if (await condition()) return;
      throw new Error(`gave up waiting for ${options.what}: it can no longer happen`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}
