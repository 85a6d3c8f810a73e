/**
 * A worker's HTTP client for the orchestrator's `/workers/` routes. Replies are checked with
 * the protocol's schemas. A network failure (link down, orchestrator restarting) is retried
 * with a capped backoff until the call's deadline or the worker's stop; an HTTP error answer
 * is final and thrown as `ServerRefusalError` with the server's code.
 */
import type { z } from "zod";
import { BernsteinError } from "../errors/mod.ts";
import type { Clock } from "../io/mod.ts";
import { refusalOfAnswer, ServerRefusalError, ServerUnreachableError } from "../server/mod.ts";

/** Where and as whom a worker calls. */
export interface WorkerClientOptions {
  /** Orchestrator base URL (`http://10.0.0.1:7433`). */
  server: string;
  /** The worker token. */
  token: string;
  /** Clock (backoff). */
  clock: Clock;
  /** Aborts every call (the worker gives up on the orchestrator). */
  signal: AbortSignal;
  /** Told about each retry (worker log). */
  onRetry?: (what: string, error: string, delayMs: number) => void;
}

/** How long one call may keep retrying a network failure (undefined: until stopped). */
export interface CallOptions {
  /** Give up retrying after this long. */
  retryForMs?: number;
  /** Per-attempt deadline (ms). */
  timeoutMs?: number;
  /** Aborts this call too (a poll that must end when the worker stops taking work). */
  signal?: AbortSignal;
  /** HTTP statuses that mean "not ready yet" and are retried like a network failure. */
  retryStatuses?: readonly number[];
}

/** Calls the orchestrator. */
export class WorkerClient {
  readonly #o: WorkerClientOptions;
  readonly base: string;

  constructor(options: WorkerClientOptions) {
    this.#o = options;
    this.base = options.server.replace(/\/+$/, "");
  }

  /** POSTs `body` to `path` and returns the reply checked by `schema`. */
  async post<S extends z.ZodTypeAny>(
    path: string,
    body: unknown,
    schema: S,
    options: CallOptions = {},
  ): Promise<z.output<S>> {
    const started = this.#o.clock.monotonicMs();
    const stop = options.signal === undefined
      ? this.#o.signal
      : AbortSignal.any([this.#o.signal, options.signal]);
    for (let attempt = 1;; attempt++) {
      let response: Response;
      try {
        response = await this.#send(path, body, options.timeoutMs ?? 30_000, stop);
        if (options.retryStatuses?.includes(response.status)) {
          await response.body?.cancel();
          throw new Error(`HTTP ${response.status} (the orchestrator is not ready)`);
        }
      } catch (error) {
        if (stop.aborted) throw new BernsteinError("workers.stopped", "the worker stops");
        const elapsed = this.#o.clock.monotonicMs() - started;
        const message = (error as Error).message;
        if (options.retryForMs !== undefined && elapsed >= options.retryForMs) {
          throw new ServerUnreachableError(
            "server.unreachable",
            `${this.base} did not answer ${path} for ${Math.round(elapsed / 1000)}s: ${message}`,
          );
        }
        const delay = Math.min(5000, 200 * 2 ** Math.min(attempt - 1, 5));
        this.#o.onRetry?.(path, message, delay);
        await this.#o.clock.sleep(delay, stop);
        continue;
      }
      return await this.#read(path, response, schema);
    }
  }

  async #send(
    path: string,
    body: unknown,
    timeoutMs: number,
    stop: AbortSignal,
  ): Promise<Response> {
    const signal = AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]);
    return await fetch(this.base + path, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.#o.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
      signal,
    });
  }

  async #read<S extends z.ZodTypeAny>(
    path: string,
    response: Response,
    schema: S,
  ): Promise<z.output<S>> {
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ServerRefusalError(
        response.status,
        "server.bad_response",
        `${path}: HTTP ${response.status} with a non-JSON body`,
      );
    }
    if (!response.ok) {
      throw refusalOfAnswer(response.status, parsed);
    }
    const checked = schema.safeParse(parsed);
    if (!checked.success) {
      throw new ServerRefusalError(
        response.status,
        "server.bad_response",
        `${path}: unexpected reply (${checked.error.issues[0]?.message ?? "invalid"})`,
      );
    }
    return checked.data;
  }
}
