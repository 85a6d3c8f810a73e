// The egress sentinel: an HTTP proxy on 127.0.0.1 that the agent CLIs get as HTTP(S)_PROXY.
// Requests for loopback addresses (the model servers; some CLIs send even those through a
// proxy) are forwarded; a request for any other host is recorded and refused with 403, so a
// test fails when a CLI tries to reach the internet (telemetry, update checks, a provider).
// Both proxy forms are understood: `CONNECT host:port` tunnels and absolute-form requests
// (`GET http://host/path`).

/** One refused attempt to reach another host. */
export interface ForeignAttempt {
  /** `CONNECT` or the HTTP method. */
  method: string;
  /** `host:port` (CONNECT) or the absolute URL. */
  target: string;
}

/** A running sentinel. */
export interface EgressSentinel {
  /** `http://127.0.0.1:<port>`: the value for HTTP_PROXY / HTTPS_PROXY. */
  url: string;
  /** Refused attempts, in order. */
  foreign: ForeignAttempt[];
  /** Loopback targets forwarded (`host:port`). */
  forwarded: string[];
  /**
   * Proxy environment for an agent: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY
   * (upper case only: `adapters.<name>.env` takes upper-case names, and every pinned CLI
   * reads these).
   */
  env(): Record<string, string>;
  /** Stops listening and closes open tunnels. */
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
const HEAD_LIMIT = 64 * 1024;
const encoder = new TextEncoder();

function splitHostPort(target: string, defaultPort: number): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(target);
  if (m === null) return { host: target, port: defaultPort };
  return { host: m[1], port: m[2] ? Number(m[2]) : defaultPort };
}

function indexOfHeadEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i - 3] === 13 && bytes[i - 2] === 10 && bytes[i - 1] === 13 && bytes[i] === 10) {
      return i + 1;
    }
  }
  return -1;
}

async function readHead(conn: Deno.Conn): Promise<Uint8Array | undefined> {
  let buf = new Uint8Array(0);
  const chunk = new Uint8Array(16 * 1024);
  while (indexOfHeadEnd(buf) < 0 && buf.length < HEAD_LIMIT) {
    const n = await conn.read(chunk);
    if (n === null) return undefined;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
  }
  return buf;
}

async function writeAllTo(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

async function reply(conn: Deno.Conn, status: string): Promise<void> {
  await writeAllTo(
    conn,
    encoder.encode(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`),
  ).catch(() => {});
}

/** Copies `from` into `to` until either side goes, then half-closes `to` (never throws). */
export async function pipe(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(32 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      await writeAllTo(to, buf.subarray(0, n));
    }
  } catch {
    // One side went away; the other is closed below.
  }
  try {
    // closeWrite returns a promise: a side the other pipe's `finally` already closed rejects it
    // (BadResource), which a synchronous try/catch let escape as an uncaught error.
    await to.closeWrite();
  } catch {
    // Already closed.
  }
}

/** Starts the sentinel proxy on 127.0.0.1 (random port). */
export function startEgressSentinel(): EgressSentinel {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const foreign: ForeignAttempt[] = [];
  const forwarded: string[] = [];
  const open = new Set<Deno.Conn>();
  const handlers = new Set<Promise<void>>();

  async function handle(client: Deno.Conn): Promise<void> {
    open.add(client);
    let upstream: Deno.Conn | undefined;
    try {
      const head = await readHead(client);
      if (head === undefined) return;
      const end = indexOfHeadEnd(head);
      const firstLine = new TextDecoder().decode(head.subarray(0, head.indexOf(13)));
      const [method, target] = firstLine.split(" ");
      if (end < 0 || method === undefined || target === undefined) {
        await reply(client, "400 Bad Request");
        return;
      }
      let host: string;
      let hostPort: number;
      if (method === "CONNECT") {
        ({ host, port: hostPort } = splitHostPort(target, 443));
      } else {
        let url: URL;
        try {
          url = new URL(target);
        } catch {
          await reply(client, "400 Bad Request");
          return;
        }
        host = url.hostname;
        hostPort = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
      }
      if (!LOOPBACK_HOSTS.has(host)) {
        foreign.push({ method, target });
        await reply(client, "403 Forbidden");
        return;
      }
      try {
        const bare = host.replace(/^\[|\]$/g, "");
        upstream = await Deno.connect({
          hostname: bare === "localhost" ? "127.0.0.1" : bare,
          port: hostPort,
        });
      } catch {
        await reply(client, "502 Bad Gateway");
        return;
      }
      open.add(upstream);
      forwarded.push(`${host}:${hostPort}`);
      if (method === "CONNECT") {
        await writeAllTo(client, encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
        if (end < head.length) await writeAllTo(upstream, head.subarray(end));
      } else {
        await writeAllTo(upstream, head);
      }
      await Promise.all([pipe(client, upstream), pipe(upstream, client)]);
    } catch {
      // A client that disconnects mid-request is not a test failure.
    } finally {
      for (const c of [client, upstream]) {
        if (c === undefined) continue;
        open.delete(c);
        try {
          c.close();
        } catch {
          // Already closed.
        }
      }
    }
  }

  const accepting = (async () => {
    for await (const conn of listener) {
      const p = handle(conn);
      handlers.add(p);
      p.finally(() => handlers.delete(p));
    }
  })().catch(() => {});

  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    foreign,
    forwarded,
    env: () => ({
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      ALL_PROXY: url,
      NO_PROXY: "127.0.0.1,localhost,::1",
    }),
    async close() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch {
          // Already closed.
        }
      }
      await accepting;
      await Promise.allSettled([...handlers]);
    },
  };
}
