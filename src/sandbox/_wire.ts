// Bytes on a connection, shared by the egress proxy (host side) and the sandbox's network
// init (inside): reading an HTTP request or response head with a size limit, writing fully,
// and piping two connections until either side ends.

/** Header the sandbox's network init sets on tunnels it opens for a loopback port. */
export const DIRECT_FORWARD_HEADER = "x-bernstein-forward";

/** Largest request or response head accepted (the request line plus headers). */
export const HEAD_LIMIT = 16 * 1024;

/** A connection both ends use (TCP or unix socket). */
export type Conn = Deno.Conn;

function headEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i - 3] === 13 && bytes[i - 2] === 10 && bytes[i - 1] === 13 && bytes[i] === 10) {
      return i + 1;
    }
  }
  return -1;
}

/**
 * Reads until the blank line that ends an HTTP head. Returns the head and whatever bytes came
 * after it, or undefined when the peer closed first or the head passed {@linkcode HEAD_LIMIT}.
 */
export async function readHead(
  conn: Conn,
): Promise<{ head: Uint8Array; rest: Uint8Array } | undefined> {
  let buf = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  for (;;) {
    const end = headEnd(buf);
    if (end >= 0) return { head: buf.subarray(0, end), rest: buf.subarray(end) };
    if (buf.length > HEAD_LIMIT) return undefined;
    const n = await conn.read(chunk);
    if (n === null) return undefined;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
  }
}

/** A parsed request head: the request line and headers (names lower-cased). */
export interface RequestHead {
  /** `CONNECT`, `GET`, … */
  method: string;
  /** `host:port` (CONNECT) or an absolute URL (proxy form) or a path. */
  target: string;
  /** Header values by lower-case name (the last one wins). */
  headers: Map<string, string>;
}

/** Parses a request head; undefined when it is not `METHOD TARGET HTTP/1.x`. */
export function parseRequestHead(head: Uint8Array): RequestHead | undefined {
  const text = new TextDecoder().decode(head);
  const lines = text.split("\r\n");
  const m = /^([A-Z]{1,16}) (\S{1,8192}) HTTP\/1\.[01]$/.exec(lines[0] ?? "");
  if (m === null) return undefined;
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) return undefined;
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { method: m[1], target: m[2], headers };
}

/** The status code of a response head, or undefined. */
export function responseStatus(head: Uint8Array): number | undefined {
  const line = new TextDecoder().decode(head.subarray(0, Math.min(head.length, 64)));
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(line);
  return m ? Number(m[1]) : undefined;
}

/** Writes every byte. */
export async function writeFully(conn: Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

/** Copies `from` into `to` until `from` ends, then half-closes `to`. */
export async function pipeInto(from: Conn, to: Conn): Promise<void> {
  const buf = new Uint8Array(32 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      await writeFully(to, buf.subarray(0, n));
    }
  } catch {
    // One side went away; the caller closes both.
  }
  // closeWrite is async: a rejection (already closed) must not go unhandled.
  await Promise.resolve().then(() => to.closeWrite()).catch(() => {});
}

/** Closes a connection, ignoring one already closed. */
export function closeQuietly(conn: Conn | undefined): void {
  if (conn === undefined) return;
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** Splits `host:port` (`[v6]:port` too); the port defaults to `defaultPort`. */
export function splitHostPort(
  target: string,
  defaultPort: number,
): { host: string; port: number } | undefined {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:\[\]\s]+)(?::(\d{1,5}))?$/.exec(target);
  if (m === null) return undefined;
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: m[1].replace(/^\[|\]$/g, "").toLowerCase(), port };
}
