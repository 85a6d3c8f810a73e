// The egress proxy: the only way out of an agent's sandbox. bernstein starts it on the host;
// each agent session gets its own listener (a unix socket bound into its sandbox on Linux, a
// loopback port on macOS) with its own allowlist: its adapter's model endpoint(s), the task
// server, and `network.egress`. It speaks the two proxy forms (`CONNECT host:port` tunnels and
// absolute-form `GET http://host/…`); anything not on the allowlist gets 403 and is reported to
// `onRefused` (the run audits it). Requests the agent itself sent to its proxy go through the
// operator's upstream proxy when one was given to the agent (HTTP(S)_PROXY); connections the
// sandbox forwards from a loopback port go straight to their target.
import { join } from "node:path";
import {
  closeQuietly,
  type Conn,
  DIRECT_FORWARD_HEADER,
  parseRequestHead,
  pipeInto,
  readHead,
  splitHostPort,
  writeFully,
} from "./_wire.ts";

/** A destination an agent may reach: exact host (or `*.suffix`) and port. */
export interface EgressTarget {
  /** Lower-case host name or address (no brackets); `*.example.com` matches subdomains. */
  host: string;
  /** TCP port. */
  port: number;
}

const LOOPBACK_NAMES: Readonly<Record<string, string>> = {
  localhost: "127.0.0.1",
  "127.0.0.1": "127.0.0.1",
  "::1": "::1",
  "[::1]": "::1",
};

function canonicalHost(host: string): string {
  const lower = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return LOOPBACK_NAMES[lower] ?? lower;
}

/** True for 127.0.0.1, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = canonicalHost(host);
  return h === "127.0.0.1" || h === "::1";
}

/**
 * Parses an allowlist entry: `host`, `host:port`, `[v6]:port`, `*.suffix:port` or a URL
 * (`https://api.example.com/v1` → api.example.com:443). A bare host means port 443.
 */
export function parseEgressTarget(text: string): EgressTarget {
  const trimmed = text.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    let url: URL;
    try {
      url = new URL(trimmed);
    } catch {
      throw new Error(`'${text}' is not a URL`);
    }
    const port = url.port !== "" ? Number(url.port) : url.protocol === "http:" ? 80 : 443;
    return { host: canonicalHost(url.hostname), port };
  }
  const wildcard = trimmed.startsWith("*.");
  const parsed = splitHostPort(wildcard ? trimmed.slice(2) : trimmed, 443);
  if (parsed === undefined || parsed.host === "") {
    throw new Error(`'${text}' is not host[:port]`);
  }
  return { host: (wildcard ? "*." : "") + canonicalHost(parsed.host), port: parsed.port };
}

/** Whether the allowlist lets a connection to `host:port` through. */
export function egressAllows(allow: readonly EgressTarget[], host: string, port: number): boolean {
  const h = canonicalHost(host);
  return allow.some((t) => {
    if (t.port !== port) return false;
    if (t.host.startsWith("*.")) return h.endsWith(t.host.slice(1)) && h !== t.host.slice(2);
    return t.host === h;
  });
}

/** A refused attempt, as the proxy reports it. */
export interface RefusedConnection {
  /** The session whose listener received it. */
  session: string;
  /** `CONNECT` or the HTTP method. */
  method: string;
  /** `host:port`, or the request target when it could not be parsed. */
  target: string;
  /** Why (not on the allowlist, malformed request, upstream failed). */
  reason: string;
}

/** One session's grant. */
export interface EgressGrant {
  /** Session id (names the listener). */
  session: string;
  /** Where it may go. */
  allow: readonly EgressTarget[];
  /** The operator's proxy given to the agent, for requests the agent sent to its proxy. */
  upstream?: { host: string; port: number };
  /** Listen on a unix socket (Linux sandbox) or a loopback TCP port (macOS). */
  transport: "unix" | "tcp";
}

/** A session's open listener. */
export interface EgressChannel {
  /** Unix socket path (transport `unix`). */
  socketPath?: string;
  /** Loopback port (transport `tcp`). */
  port?: number;
  /** Stops listening and cuts the session's open connections. */
  close(): Promise<void>;
}

/** Options of {@linkcode EgressProxy}. */
export interface EgressProxyOptions {
  /** A private folder (mode 0700) for the unix sockets; short, since socket paths are limited. */
  socketDir: string;
  /** Called for every refused attempt. */
  onRefused: (refused: RefusedConnection) => void;
  /** Connects to a target (tests inject failures); default `Deno.connect`. */
  connect?: (host: string, port: number) => Promise<Conn>;
  /** Most simultaneous connections per session (default 256). */
  maxConnectionsPerSession?: number;
}

const encoder = new TextEncoder();

function statusBytes(status: string, message = ""): Uint8Array {
  return encoder.encode(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${message.length}\r\n` +
      `connection: close\r\n\r\n${message}`,
  );
}

/**
 * The host side of the agents' network: one listener per session, one allowlist each.
 *
 * @example
 * ```ts ignore
 * const proxy = new EgressProxy({ socketDir, onRefused: (r) => audit(r) });
 * const channel = await proxy.open({
 *   session: "s1", transport: "unix",
 *   allow: [parseEgressTarget("127.0.0.1:8080"), parseEgressTarget("api.anthropic.com")],
 * });
 * // bind channel.socketPath into the sandbox; later:
 * await channel.close();
 * ```
 */
export class EgressProxy {
  readonly #options: EgressProxyOptions;
  readonly #channels = new Set<EgressChannel>();
  #counter = 0;

  constructor(options: EgressProxyOptions) {
    this.#options = options;
  }

  /** Opens the listener of one session. */
  async open(grant: EgressGrant): Promise<EgressChannel> {
    let listener: Deno.Listener;
    let socketPath: string | undefined;
    if (grant.transport === "unix") {
      await Deno.mkdir(this.#options.socketDir, { recursive: true, mode: 0o700 });
      socketPath = join(this.#options.socketDir, `e${++this.#counter}-${Deno.pid}.sock`);
      await Deno.remove(socketPath).catch(() => {});
      listener = Deno.listen({ transport: "unix", path: socketPath });
      await Deno.chmod(socketPath, 0o600);
    } else {
      listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    }
    const open = new Set<Conn>();
    const handlers = new Set<Promise<void>>();
    const cap = this.#options.maxConnectionsPerSession ?? 256;
    const accepting = (async () => {
      for (;;) {
        let conn: Conn;
        try {
          conn = await listener.accept();
        } catch (error) {
          if (
            error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted
          ) {
            return;
          }
          // Out of descriptors or a transient failure: keep the run alive, try again shortly.
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        if (open.size >= cap) {
          await writeFully(conn, statusBytes("503 Service Unavailable", "too many connections"))
            .catch(() => {});
          closeQuietly(conn);
          continue;
        }
        open.add(conn);
        const p = this.#serve(conn, grant, open).finally(() => {
          open.delete(conn);
          closeQuietly(conn);
          handlers.delete(p);
        });
        handlers.add(p);
      }
    })();
    let closed: Promise<void> | undefined;
    const channel: EgressChannel = {
      ...(socketPath !== undefined ? { socketPath } : {}),
      ...(grant.transport === "tcp" ? { port: (listener.addr as Deno.NetAddr).port } : {}),
      close: () => {
        closed ??= (async () => {
          this.#channels.delete(channel);
          try {
            listener.close();
          } catch {
            // Already closed.
          }
          for (const c of open) closeQuietly(c);
          await accepting;
          await Promise.allSettled([...handlers]);
          if (socketPath !== undefined) await Deno.remove(socketPath).catch(() => {});
        })();
        return closed;
      },
    };
    this.#channels.add(channel);
    return channel;
  }

  /** Closes every session's listener. */
  async close(): Promise<void> {
    await Promise.all([...this.#channels].map((c) => c.close()));
  }

  #refuse(grant: EgressGrant, method: string, target: string, reason: string): void {
    try {
      this.#options.onRefused({ session: grant.session, method, target, reason });
    } catch {
      // Reporting must never break the proxy.
    }
  }

  async #serve(client: Conn, grant: EgressGrant, open: Set<Conn>): Promise<void> {
    let upstream: Conn | undefined;
    try {
      const read = await readHead(client);
      if (read === undefined) return;
      const head = parseRequestHead(read.head);
      if (head === undefined) {
        this.#refuse(grant, "?", "?", "not an HTTP proxy request");
        await writeFully(client, statusBytes("400 Bad Request")).catch(() => {});
        return;
      }
      const dest = destinationOf(head.method, head.target);
      if (dest === undefined) {
        this.#refuse(grant, head.method, head.target, "no host:port in the request");
        await writeFully(client, statusBytes("400 Bad Request")).catch(() => {});
        return;
      }
      const shown = `${dest.host.includes(":") ? `[${dest.host}]` : dest.host}:${dest.port}`;
      if (!egressAllows(grant.allow, dest.host, dest.port)) {
        this.#refuse(grant, head.method, shown, "not on the agent's egress allowlist");
        await writeFully(
          client,
          statusBytes(
            "403 Forbidden",
            `bernstein sandbox: ${shown} is not on this agent's allowlist\n`,
          ),
        ).catch(() => {});
        return;
      }
      const direct = head.headers.get(DIRECT_FORWARD_HEADER) === "direct";
      const via = direct ? undefined : grant.upstream;
      const connect = this.#options.connect ??
        ((host: string, port: number) => Deno.connect({ hostname: host, port }));
      try {
        upstream = via !== undefined
          ? await connect(via.host, via.port)
          : await connect(canonicalHost(dest.host), dest.port);
      } catch (error) {
        this.#refuse(grant, head.method, shown, `cannot connect: ${(error as Error).message}`);
        await writeFully(client, statusBytes("502 Bad Gateway")).catch(() => {});
        return;
      }
      open.add(upstream);
      if (via !== undefined || head.method !== "CONNECT") {
        // The upstream proxy (or the origin, for an absolute-form request) gets the head as sent.
        await writeFully(upstream, read.head);
      } else {
        await writeFully(client, encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
      }
      if (read.rest.length > 0) await writeFully(upstream, read.rest);
      await Promise.all([pipeInto(client, upstream), pipeInto(upstream, client)]);
    } catch {
      // A peer that goes away mid-request is not an error of the run.
    } finally {
      if (upstream !== undefined) {
        open.delete(upstream);
        closeQuietly(upstream);
      }
    }
  }
}

function destinationOf(method: string, target: string): { host: string; port: number } | undefined {
  if (method === "CONNECT") return splitHostPort(target, 443);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { host: url.hostname.replace(/^\[|\]$/g, "").toLowerCase(), port };
}
