// The task server's HTTP/1.1 listener. Deno.serve keeps idle and half-open connections for
// ever and lets an accept error (EMFILE) escape; a run whose agents (or anything local) open
// thousands of connections must not lose its orchestrator to that. This listener owns the
// socket: a connection cap (503 past it), an idle timeout between requests, a deadline for a
// request's head and body, body-size and header-size limits, and an accept loop that backs off
// and carries on after any error. Requests are handed to a `(Request) => Response` handler;
// responses are written with chunked encoding (streaming responses such as server-sent events
// run as long as the handler streams, with no timeout), and each Request's signal aborts when
// its connection closes or the server shuts down.

import type { ErrorCode } from "../errors/mod.ts";

/** Limits of {@linkcode serveHttp1}. */
export interface Http1Limits {
  /**
   * Connections open at once. At the cap an idle connection is closed to make room; when every
   * connection is busy, a new one gets `503` and is closed.
   */
  maxConnections: number;
  /** Milliseconds a connection may sit idle between requests. */
  idleTimeoutMs: number;
  /** Milliseconds from a request's first byte until its head and body have arrived. */
  requestTimeoutMs: number;
  /** Largest request head (request line + headers). */
  maxHeadBytes: number;
  /** Largest request body; larger is answered 413 and the connection closed. */
  maxBodyBytes: number;
}

/** Options of {@linkcode serveHttp1}. */
export interface Http1Options extends Http1Limits {
  /** Address (default 127.0.0.1). */
  hostname?: string;
  /** Port (0 = any free port). */
  port: number;
  /** Answers one request. */
  handler: (req: Request, info: { remoteAddr: Deno.NetAddr }) => Promise<Response>;
  /** Canned answers for refusals the handler never sees (cap, too large, malformed). */
  refusal: (status: number, code: ErrorCode, message: string) => Response;
  /** Told about accept errors (once per streak) so the run can log them. */
  onAcceptError?: (error: Error) => void;
}

/** A running listener. */
export interface Http1Server {
  /** Where it listens. */
  addr: Deno.NetAddr;
  /** Connections open now. */
  connections(): number;
  /** Stops accepting, aborts streaming requests, closes idle connections, waits for the rest. */
  shutdown(): Promise<void>;
}

const encoder = new TextEncoder();
const CRLF = encoder.encode("\r\n");
const LAST_CHUNK = encoder.encode("0\r\n\r\n");

const REASONS: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  204: "No Content",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
};

class Closed extends Error {}
class Timeout extends Error {}

/** Buffered reads from one connection with a deadline per wait. */
class ConnReader {
  #buf: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  readonly #chunk = new Uint8Array(16 * 1024);

  constructor(readonly conn: Deno.Conn) {}

  get buffered(): number {
    return this.#buf.length;
  }

  async #fill(deadline: number): Promise<void> {
    const wait = deadline - Date.now();
    if (wait <= 0) throw new Timeout();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      this.conn.read(this.#chunk),
      new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), wait))),
    ]).finally(() => clearTimeout(timer));
    if (n === "timeout") throw new Timeout();
    if (n === null) throw new Closed();
    const next = new Uint8Array(this.#buf.length + n);
    next.set(this.#buf);
    next.set(this.#chunk.subarray(0, n), this.#buf.length);
    this.#buf = next;
  }

  /** Waits for the first byte of the next request (idle deadline). */
  async waitForData(deadline: number): Promise<void> {
    while (this.#buf.length === 0) await this.#fill(deadline);
  }

  /** Reads up to and including `\r\n\r\n`; undefined when the head passes `limit`. */
  async readHead(limit: number, deadline: number): Promise<Uint8Array | undefined> {
    for (;;) {
      const end = findHeadEnd(this.#buf);
      if (end >= 0) return this.take(end);
      if (this.#buf.length > limit) return undefined;
      await this.#fill(deadline);
    }
  }

  /** Reads exactly `n` bytes. */
  async readExact(n: number, deadline: number): Promise<Uint8Array<ArrayBuffer>> {
    while (this.#buf.length < n) await this.#fill(deadline);
    return this.take(n);
  }

  /** Reads one CRLF-terminated line (chunked encoding), without the CRLF. */
  async readLine(limit: number, deadline: number): Promise<string> {
    for (;;) {
      const at = indexOfCrlf(this.#buf);
      if (at >= 0) {
        const line = new TextDecoder().decode(this.take(at + 2).subarray(0, at));
        return line;
      }
      if (this.#buf.length > limit) throw new Closed();
      await this.#fill(deadline);
    }
  }

  take(n: number): Uint8Array<ArrayBuffer> {
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }
}

function findHeadEnd(b: Uint8Array): number {
  for (let i = 3; i < b.length; i++) {
    if (b[i] === 10 && b[i - 1] === 13 && b[i - 2] === 10 && b[i - 3] === 13) return i + 1;
  }
  return -1;
}

function indexOfCrlf(b: Uint8Array): number {
  for (let i = 1; i < b.length; i++) if (b[i] === 10 && b[i - 1] === 13) return i - 1;
  return -1;
}

interface ParsedHead {
  method: string;
  target: string;
  version: "1.0" | "1.1";
  headers: [string, string][];
}

function parseHead(bytes: Uint8Array): ParsedHead | undefined {
  const text = new TextDecoder("latin1").decode(bytes.subarray(0, bytes.length - 4));
  const lines = text.split("\r\n");
  const m = /^([A-Z]{1,20}) (\S{1,8192}) HTTP\/1\.([01])$/.exec(lines[0]);
  if (m === null) return undefined;
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0 || /\s/.test(line.slice(0, colon))) return undefined;
    headers.push([line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { method: m[1], target: m[2], version: m[3] === "0" ? "1.0" : "1.1", headers };
}

function headerOf(head: ParsedHead, name: string): string | undefined {
  let value: string | undefined;
  for (const [k, v] of head.headers) if (k === name) value = v;
  return value;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

function statusLine(status: number): string {
  return `HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}\r\n`;
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Writes a response: status, headers, then the body in chunked encoding (no body for HEAD,
 * 204 and 304). Returns false when the peer went away while writing.
 */
async function writeResponse(
  conn: Deno.Conn,
  res: Response,
  options: { head: boolean; close: boolean },
): Promise<boolean> {
  let head = statusLine(res.status);
  for (const [k, v] of res.headers) {
    if (k === "content-length" || k === "transfer-encoding" || k === "connection") continue;
    head += `${k}: ${v}\r\n`;
  }
  const bodyless = options.head || res.status === 204 || res.status === 304;
  head += bodyless
    ? (res.status === 204 || res.status === 304 ? "" : "content-length: 0\r\n")
    : "transfer-encoding: chunked\r\n";
  head += `connection: ${options.close ? "close" : "keep-alive"}\r\n\r\n`;
  const headBytes = encoder.encode(head);
  try {
    if (bodyless || res.body === null) {
      await res.body?.cancel().catch(() => {});
      await writeAll(conn, bodyless ? headBytes : concat([headBytes, LAST_CHUNK]));
      return true;
    }
    const reader = res.body.getReader();
    let pending: Uint8Array[] = [headBytes];
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.length === 0) continue;
        pending.push(encoder.encode(value.length.toString(16) + "\r\n"), value, CRLF);
        await writeAll(conn, concat(pending));
        pending = [];
      }
    } catch (error) {
      await reader.cancel(error).catch(() => {});
      throw error;
    }
    pending.push(LAST_CHUNK);
    await writeAll(conn, concat(pending));
    return true;
  } catch {
    return false;
  }
}

async function readChunkedBody(
  r: ConnReader,
  limit: number,
  deadline: number,
): Promise<Uint8Array<ArrayBuffer> | "too-large"> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const line = await r.readLine(1024, deadline);
    const size = parseInt(line.split(";")[0].trim(), 16);
    if (!Number.isFinite(size) || size < 0) throw new Closed();
    if (size === 0) {
      // Trailers, up to the blank line.
      while ((await r.readLine(8192, deadline)) !== "");
      return concat(parts);
    }
    total += size;
    if (total > limit) return "too-large";
    parts.push(await r.readExact(size, deadline));
    await r.readExact(2, deadline);
  }
}

/** A request the listener answers itself, closing the connection after (the handler never sees it). */
class Refusal extends Error {
  constructor(readonly status: number, readonly code: ErrorCode, message: string) {
    super(message);
  }
}

/** A connection's state: idle between requests, how many it served, its requests' signal. */
interface ConnState {
  idle: boolean;
  served: number;
  abort: AbortController;
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** Reads a request's body as its head declares it (chunked or content-length), within `limit`. */
async function readBody(
  r: ConnReader,
  head: ParsedHead,
  limit: number,
  deadline: number,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const tooLarge = () =>
    new Refusal(413, "server.body_too_large", `request body is larger than ${limit} bytes`);
  if (/\bchunked\b/i.test(headerOf(head, "transfer-encoding") ?? "")) {
    const read = await readChunkedBody(r, limit, deadline);
    if (read === "too-large") throw tooLarge();
    return read;
  }
  const lengthText = headerOf(head, "content-length");
  if (lengthText === undefined) return undefined;
  if (!/^\d{1,15}$/.test(lengthText)) {
    throw new Refusal(400, "server.bad_request", "invalid content-length");
  }
  const length = Number(lengthText);
  if (length > limit) throw tooLarge();
  return await r.readExact(length, deadline);
}

/** The Request of a parsed head and body (400 when the URL or method does not make one). */
function toRequest(
  head: ParsedHead,
  body: Uint8Array<ArrayBuffer> | undefined,
  port: number,
  signal: AbortSignal,
): Request {
  try {
    const url = head.target.startsWith("/")
      ? `http://${headerOf(head, "host") ?? `127.0.0.1:${port}`}${head.target}`
      : head.target;
    return new Request(new URL(url, `http://127.0.0.1:${port}`), {
      method: head.method,
      headers: head.headers,
      body: body !== undefined && head.method !== "GET" && head.method !== "HEAD"
        ? body
        : undefined,
      signal,
    });
  } catch (error) {
    throw new Refusal(400, "server.bad_request", `bad request: ${(error as Error).message}`);
  }
}

/**
 * Serves HTTP/1.1 on a TCP socket with the given limits. Never throws after it started: accept
 * errors back off (10 ms doubling to 1 s) and the loop carries on.
 */
export function serveHttp1(options: Http1Options): Http1Server {
  const listener = Deno.listen({ hostname: options.hostname ?? "127.0.0.1", port: options.port });
  const service = new Http1Service(options, listener);
  const accepting = service.acceptLoop();
  let shut: Promise<void> | undefined;
  return {
    addr: service.addr,
    connections: () => service.connections,
    shutdown() {
      shut ??= service.shutdown(accepting);
      return shut;
    },
  };
}

/** The accept loop and the connections of one listener. */
class Http1Service {
  readonly addr: Deno.NetAddr;
  readonly #options: Http1Options;
  readonly #listener: Deno.Listener;
  readonly #open = new Map<Deno.Conn, ConnState>();
  readonly #tasks = new Set<Promise<void>>();
  #closing = false;

  constructor(options: Http1Options, listener: Deno.Listener) {
    this.#options = options;
    this.#listener = listener;
    this.addr = listener.addr as Deno.NetAddr;
  }

  get connections(): number {
    return this.#open.size;
  }

  /** Accepts until shutdown; an accept error (EMFILE …) backs off and never ends the loop. */
  async acceptLoop(): Promise<void> {
    let backoff = 0;
    while (!this.#closing) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
        backoff = 0;
      } catch (error) {
        if (this.#closing || error instanceof Deno.errors.BadResource) return;
        // EMFILE/ENFILE and friends: never end the orchestrator; wait and try again.
        if (backoff === 0) this.#options.onAcceptError?.(error as Error);
        backoff = Math.min(1000, backoff === 0 ? 10 : backoff * 2);
        await new Promise((r) => setTimeout(r, backoff));
        continue;
      }
      this.#admit(conn);
    }
  }

  /** Serves a new connection, or refuses it with 503 when every one at the cap is busy. */
  #admit(conn: Deno.Conn): void {
    const max = this.#options.maxConnections;
    if (this.#open.size >= max) this.#evictIdle();
    if (this.#open.size >= max) {
      const message = `more than ${max} connections are open`;
      this.#track(
        this.#refuse(conn, new Refusal(503, "server.too_many_connections", message))
          .finally(() => closeQuietly(conn)),
      );
      return;
    }
    try {
      // Responses go out as a head+chunk write and a final write: no Nagle delay between.
      (conn as Deno.TcpConn).setNoDelay(true);
    } catch {
      // Not a TCP socket.
    }
    this.#track(this.#serveConn(conn));
  }

  #track(p: Promise<void>): void {
    this.#tasks.add(p);
    p.finally(() => this.#tasks.delete(p));
  }

  /**
   * At the cap, an idle connection makes room for a new one: first the oldest that never sent a
   * request, else the oldest waiting between requests. Only busy connections fill the cap.
   */
  #evictIdle(): void {
    let victim: Deno.Conn | undefined;
    for (const [conn, state] of this.#open) {
      if (!state.idle) continue;
      if (state.served === 0) {
        victim = conn;
        break;
      }
      victim ??= conn;
    }
    if (victim === undefined) return;
    this.#open.delete(victim);
    closeQuietly(victim);
  }

  async #refuse(conn: Deno.Conn, refusal: Refusal): Promise<void> {
    const res = this.#options.refusal(refusal.status, refusal.code, refusal.message);
    await writeResponse(conn, res, { head: false, close: true });
  }

  /** Serves requests on one connection until it closes, idles out or the server stops. */
  async #serveConn(conn: Deno.Conn): Promise<void> {
    const state: ConnState = { idle: true, served: 0, abort: new AbortController() };
    this.#open.set(conn, state);
    const r = new ConnReader(conn);
    try {
      while (!this.#closing && await this.#serveRequest(conn, r, state));
    } catch {
      // Idle or request deadline passed, the peer closed, or a read failed: drop the connection.
    } finally {
      state.abort.abort();
      this.#open.delete(conn);
      closeQuietly(conn);
    }
  }

  /** Reads, answers and writes one request; false when the connection is to close. */
  async #serveRequest(conn: Deno.Conn, r: ConnReader, state: ConnState): Promise<boolean> {
    const options = this.#options;
    state.idle = true;
    await r.waitForData(Date.now() + options.idleTimeoutMs);
    state.idle = false;
    const deadline = Date.now() + options.requestTimeoutMs;
    let req: Request;
    let head: ParsedHead;
    try {
      head = await readRequestHead(r, options.maxHeadBytes, deadline);
      const body = await readBody(r, head, options.maxBodyBytes, deadline);
      req = toRequest(head, body, this.addr.port, state.abort.signal);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      await this.#refuse(conn, error);
      return false;
    }
    const connection = (headerOf(head, "connection") ?? "").toLowerCase();
    const close = this.#closing || connection.includes("close") ||
      (head.version === "1.0" && !connection.includes("keep-alive"));
    let res: Response;
    try {
      res = await options.handler(req, { remoteAddr: conn.remoteAddr as Deno.NetAddr });
    } catch {
      res = options.refusal(500, "internal", "internal server error");
    }
    const written = await writeResponse(conn, res, { head: head.method === "HEAD", close });
    state.served++;
    return written && !close;
  }

  /** Stops accepting, closes idle connections, aborts streaming ones, waits for the rest. */
  async shutdown(accepting: Promise<void>): Promise<void> {
    this.#closing = true;
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
    await accepting;
    for (const [conn, state] of this.#open) {
      // Idle connections close now; streaming responses are told to stop.
      state.abort.abort();
      if (state.idle) closeQuietly(conn);
    }
    await Promise.allSettled([...this.#tasks]);
  }
}

/** A request's head, parsed (431 past `limit`, 400 when malformed). */
async function readRequestHead(
  r: ConnReader,
  limit: number,
  deadline: number,
): Promise<ParsedHead> {
  const raw = await r.readHead(limit, deadline);
  if (raw === undefined) {
    throw new Refusal(431, "server.head_too_large", `request head is larger than ${limit} bytes`);
  }
  const head = parseHead(raw);
  if (head === undefined) {
    throw new Refusal(400, "server.bad_request", "malformed HTTP/1.1 request head");
  }
  return head;
}
