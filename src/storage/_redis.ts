// The Redis side of `backend: redis` (npm `@redis/client`): a connection that fails fast while
// Redis is down (no offline queue, so a claim never hangs), claim locks taken with
// `SET key token NX PX ttl` and released by a compare-and-delete Lua script (a lock that
// expired and was taken by someone else is never deleted), and pub/sub wake-ups. The package is
// loaded when a connection is made: evaluating it costs ~170 ms of CPU, which every bernstein
// command paid at start-up while only `backend: redis` uses it.
import type { createClient } from "@redis/client";
import { TaskStoreUnavailableError } from "../tasks/mod.ts";
import type { ClaimLocks, WakeChannel } from "./_coordination.ts";
import { type Endpoint, scrubSecrets } from "./endpoint.ts";
import { StorageAuthError } from "./errors.ts";
import { unreachable } from "./reach.ts";

/** A connected Redis client. */
export type RedisConnection = ReturnType<typeof createClient>;

async function newClient(options: Parameters<typeof createClient>[0]): Promise<RedisConnection> {
  const { createClient } = await import("@redis/client");
  return createClient(options);
}

/** Deletes KEYS[1] only while it still holds ARGV[1] (the taker's token). */
export const RELEASE_LOCK_SCRIPT = `if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`;

function describe(error: unknown, endpoint: Endpoint): string {
  const message = error instanceof Error ? error.message : String(error);
  return scrubSecrets(message, endpoint).split("\n")[0].slice(0, 300);
}

/** A Redis failure as a bernstein error (auth → `storage.auth_failed`, else unavailable). */
export function redisError(error: unknown, endpoint: Endpoint): Error {
  const message = describe(error, endpoint);
  if (/WRONGPASS|NOAUTH|NOPERM|invalid password|invalid username/i.test(message)) {
    return new StorageAuthError(
      `${endpoint.source.key} (set by ${endpoint.source.layer}): Redis at ${endpoint.address} refused: ${message}`,
      {},
    );
  }
  return new TaskStoreUnavailableError(`Redis at ${endpoint.address}: ${message}`);
}

/**
 * Connects to `endpoint` within `connectTimeoutMs`. Until the first connection succeeds a
 * failure is final (`storage.unreachable`); afterwards the client reconnects with backoff and
 * commands fail at once while it is down.
 */
export async function connectRedis(
  endpoint: Endpoint,
  connectTimeoutMs: number,
): Promise<RedisConnection> {
  let connected = false;
  let lastError: unknown;
  const client = await newClient({
    socket: {
      host: endpoint.host,
      port: endpoint.port,
      connectTimeout: connectTimeoutMs,
      ...(endpoint.tls === "disable" ? {} : { tls: true as const, servername: endpoint.host }),
      reconnectStrategy: (retries: number, cause: Error) =>
        connected ? Math.min(50 * 2 ** retries, 2000) : cause,
    },
    username: endpoint.user,
    password: endpoint.password,
    database: Number(endpoint.database),
    disableOfflineQueue: true,
    name: "bernstein",
  });
  // An unhandled 'error' event would end the process; the next command reports the outage.
  client.on("error", (error: unknown) => {
    lastError = error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.destroy();
    const cause = error ?? lastError;
    const mapped = redisError(cause, endpoint);
    if (mapped instanceof StorageAuthError) throw mapped;
    throw unreachable(endpoint, describe(cause, endpoint));
  }
  connected = true;
  return client;
}

/** Claim locks on one connection. */
export function redisClaimLocks(client: RedisConnection, endpoint: Endpoint): ClaimLocks {
  return {
    async acquire(key, token, ttlMs) {
      try {
        const reply = await client.set(key, token, {
          condition: "NX",
          expiration: { type: "PX", value: Math.max(1, Math.round(ttlMs)) },
        });
        return reply === "OK";
      } catch (error) {
        throw redisError(error, endpoint);
      }
    },
    async release(key, token) {
      try {
        await client.eval(RELEASE_LOCK_SCRIPT, { keys: [key], arguments: [token] });
      } catch (error) {
        throw redisError(error, endpoint);
      }
    },
  };
}

/**
 * Wake-ups over Redis pub/sub: `publisher` publishes; a second connection (subscribed
 * connections cannot run other commands) is opened on the first subscription.
 */
export function redisWakeChannel(
  publisher: RedisConnection,
  endpoint: Endpoint,
  channel: string,
): WakeChannel {
  return {
    async publish() {
      try {
        await publisher.publish(channel, "work");
      } catch (error) {
        throw redisError(error, endpoint);
      }
    },
    async subscribe(listener) {
      const subscriber = publisher.duplicate();
      subscriber.on("error", () => {});
      await subscriber.connect();
      await subscriber.subscribe(channel, () => listener());
      return async () => {
        await subscriber.unsubscribe(channel).catch(() => {});
        await subscriber.close().catch(() => subscriber.destroy());
      };
    },
  };
}
