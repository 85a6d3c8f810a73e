// Can this process reach an endpoint at all? First the permission grant (the `bernstein`
// binary may connect to loopback only unless built with more hosts), then a plain TCP connect
// with a deadline. Both fail with one line naming the key, the layer and `host:port`.
import { type Endpoint, formatAddress } from "./endpoint.ts";
import { StorageNetDeniedError, StorageUnreachableError } from "./errors.ts";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

function where(endpoint: Endpoint): string {
  return `${endpoint.source.key} (set by ${endpoint.source.layer})`;
}

/**
 * Refuses an endpoint outside this process's network grant, before any connection is tried
 * (so no permission prompt can appear and the reason is plain).
 */
export function checkNetGrant(endpoint: Endpoint): void {
  const host = formatAddress(endpoint.host, endpoint.port);
  const state = Deno.permissions.querySync({ name: "net", host }).state;
  if (state === "granted") return;
  const loopback = LOOPBACK.has(endpoint.host);
  throw new StorageNetDeniedError(
    `${where(endpoint)} names ${endpoint.address}, which this bernstein may not connect to ` +
      `(outside its network grant; the default grant is loopback only)`,
    {
      hint: loopback
        ? "run bernstein with its own permission set (deno run -P=bernstein …)"
        : `reach it through a loopback tunnel (ssh -N -L ${endpoint.port}:${endpoint.address} …) ` +
          `and use 127.0.0.1, or build bernstein with 'deno task compile --net-host ${endpoint.address}'`,
    },
  );
}

/** Why a TCP connect failed, in a few words. */
function reasonOf(error: unknown): string {
  if (error instanceof Deno.errors.ConnectionRefused) return "connection refused";
  if (error instanceof Deno.errors.TimedOut) return "timed out";
  if (error instanceof Deno.errors.NotFound) return "host name not found";
  const message = error instanceof Error ? error.message : String(error);
  if (/failed to lookup|name or service not known|no address/i.test(message)) {
    return "host name not found";
  }
  if (/unreachable/i.test(message)) return "network unreachable";
  return message.split("\n")[0].slice(0, 200);
}

/**
 * Opens and closes one TCP connection to the endpoint within `timeoutMs`. Throws
 * {@linkcode StorageUnreachableError} (exit 2) naming the key, the layer and `host:port`.
 */
export async function checkReachable(endpoint: Endpoint, timeoutMs: number): Promise<void> {
  checkNetGrant(endpoint);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const attempt = Deno.connect({ hostname: endpoint.host, port: endpoint.port });
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const outcome = await Promise.race([attempt, deadline]);
    if (outcome === "timeout") {
      // Close the connection if it opens after all.
      attempt.then((c) => c.close(), () => {});
      throw unreachable(endpoint, `no answer within ${timeoutMs} ms`);
    }
    outcome.close();
  } catch (error) {
    if (error instanceof StorageUnreachableError) throw error;
    throw unreachable(endpoint, reasonOf(error));
  } finally {
    clearTimeout(timer);
  }
}

/** The one-line "cannot reach" error of an endpoint. */
export function unreachable(endpoint: Endpoint, reason: string): StorageUnreachableError {
  return new StorageUnreachableError(
    `${where(endpoint)}: cannot reach ${
      endpoint.engine === "postgres" ? "PostgreSQL" : "Redis"
    } at ${endpoint.address}: ${reason}`,
    {},
  );
}
