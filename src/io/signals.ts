/**
 * Signal delivery set up at start-up, while file descriptors are free.
 *
 * Deno 2.9 creates what its signal handling needs (a socket pair and a thread, ext/signals) on
 * the first signal registration of the process: the first `Deno.addSignalListener`, or Deno's
 * own, which it makes by itself once the event loop has run for about half a second. When no
 * descriptor is free at that moment — a server flooded with connections, a run whose agents
 * opened too much — Deno panics (an unwrapped EMFILE) instead of throwing, and the process dies.
 * A process that may run out of descriptors calls {@link primeSignalDelivery} before it opens
 * anything: later registrations reuse what it set up and need no descriptor.
 *
 * @module
 */

/**
 * Registers and removes a no-op SIGTERM listener, which sets up Deno's signal delivery now.
 * Default signal behaviour is unchanged (no listener stays registered). Nothing to set up on
 * Windows, whose console handler needs no descriptor.
 *
 * @example
 * ```ts
 * import { primeSignalDelivery } from "./signals.ts";
 * primeSignalDelivery(); // first thing in a process that may exhaust its descriptors
 * ```
 */
export function primeSignalDelivery(): void {
  if (Deno.build.os === "windows") return;
  const noop = () => {};
  Deno.addSignalListener("SIGTERM", noop);
  Deno.removeSignalListener("SIGTERM", noop);
}
