// What the server tells the run loop, as it happens (no polling): heartbeats, task changes
// made over HTTP, holds.
import type { Hold, Task } from "../tasks/mod.ts";

/** An agent's heartbeat as last seen. */
export interface AgentLiveness {
  /** Agent id from the URL. */
  agent_id: string;
  /** Session of the token that sent it (null for the operator). */
  session: string | null;
  /** Task the agent said it works on, if any. */
  task_id: string | null;
  /** ISO time of the last heartbeat. */
  last_heartbeat_at: string;
  /** Heartbeats received. */
  heartbeats: number;
}

/** One server event. `actor` is `operator` or `agent:<id>`. */
export type ServerEvent =
  | { type: "heartbeat"; agent: AgentLiveness; note: string | null }
  | { type: "task.created"; task: Task; actor: string }
  | { type: "task.claimed"; task: Task; actor: string }
  | { type: "task.completed"; task: Task; actor: string }
  | { type: "task.failed"; task: Task; actor: string }
  | { type: "task.blocked"; task: Task; actor: string }
  | { type: "task.progress"; task: Task; actor: string; message: string; percent: number | null }
  | { type: "hold.added"; hold: Hold; actor: string }
  | { type: "hold.released"; hold: Hold; actor: string };

/** A listener; it runs synchronously inside the request, so it must be quick. */
export type Listener<E> = (event: E) => void;

/**
 * A tiny synchronous event hub. Listener errors are caught and counted (a broken listener
 * never fails the agent's request); `next` waits for the next matching event.
 */
export class EventHub<E> {
  readonly #listeners = new Set<Listener<E>>();
  /** Errors thrown by listeners, most recent last (at most 20 kept). */
  readonly listenerErrors: unknown[] = [];

  /** Subscribes; returns the unsubscribe function. */
  on(listener: Listener<E>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Delivers `event` to every listener. */
  emit(event: E): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.listenerErrors.push(error);
        if (this.listenerErrors.length > 20) this.listenerErrors.shift();
      }
    }
  }

  /** Resolves with the next event that satisfies `match` (rejects if `signal` aborts). */
  next(match: (event: E) => boolean = () => true, signal?: AbortSignal): Promise<E> {
    return new Promise<E>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const off = this.on((event) => {
        if (!match(event)) return;
        off();
        signal?.removeEventListener("abort", onAbort);
        resolve(event);
      });
      const onAbort = () => {
        off();
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
