// Member checks of the pack verifier's phase 3 that nothing before the window phase needs (the
// signature members' hashes against the manifest): they run in small steps while the gate
// checks the log, so this thread does them while a worker checks batches instead of before the
// worker has anything to do. Their failures go back exactly where phase 3 would have reported
// them (after the failures found before their member, in member order), so the report is the
// same as when they ran in place. Only work on bytes already in memory is deferred: a member
// read from the archive meanwhile would make the log's reads miss the file's read-ahead.
import type { VerifyIssue } from "./types.ts";

/** A check in steps: each `next()` does a little of it; it reports through `fail`. */
export type DeferredTask = AsyncIterator<void> | Iterator<void>;

interface Placed {
  /** Index of the member concerned (archive order). */
  member: number;
  /** How many failures phase 3 had reported when it reached that member. */
  at: number;
  issue: VerifyIssue;
}

/**
 * Deferred member checks and the failures they found, each placed where phase 3 would have
 * reported it.
 *
 * @example
 * ```ts ignore
 * const deferred = new DeferredChecks();
 * deferred.add(taskOver(deferred.failAt(i, errors.length)));
 * while (await deferred.step()) { ... }
 * errors = deferred.placeInto(errors);
 * ```
 */
export class DeferredChecks {
  #tasks: DeferredTask[] = [];
  #placed: Placed[] = [];

  /** Queues a task (tasks run one after the other, in the order added). */
  add(task: DeferredTask): void {
    this.#tasks.push(task);
  }

  /** A failure of member `member`, reported after the first `at` failures of phase 3. */
  fail(member: number, at: number, kind: string, message: string): void {
    this.#placed.push({ member, at, issue: { kind, message } });
  }

  /** Does one step of the current task; false once every task is done. */
  async step(): Promise<boolean> {
    while (this.#tasks.length > 0) {
      const done = (await this.#tasks[0].next()).done;
      if (!done) return true;
      this.#tasks.shift();
    }
    return false;
  }

  /** Runs whatever is left. */
  async finish(): Promise<void> {
    while (await this.step());
  }

  /**
   * `errors` (phase 3's failures, then the later phases') with the deferred failures put in
   * their places: after the failures phase 3 found before their member, in member order.
   */
  placeInto(errors: readonly VerifyIssue[]): VerifyIssue[] {
    if (this.#placed.length === 0) return [...errors];
    const placed = [...this.#placed].sort((a, b) => a.member - b.member || a.at - b.at);
    const out: VerifyIssue[] = [];
    let k = 0;
    for (let i = 0; i <= errors.length; i++) {
      while (k < placed.length && placed[k].at <= i) out.push(placed[k++].issue);
      if (i < errors.length) out.push(errors[i]);
    }
    return out;
  }
}
