// The dashboard's routes on the task server: the page at `/` (a complete snapshot that needs
// no script), its two files, the Server-Sent Events that keep it current (at most one update a
// second, however often the run changes), a JSON view, and the login.
//
// Login: the operator token never goes into a URL. The run prints a one-time link
// (`/login?code=…`, 32 random bytes); opening it swaps the code for an HttpOnly, SameSite=Strict
// session cookie and redirects to `/`, so the code is spent and leaves the address bar at once.
// `bernstein dashboard` asks for a fresh link with the operator token in a header
// (`POST /dashboard/login-links`). Codes and sessions live in memory and die with the server.
// Every dashboard request must name this server as its Host (no DNS rebinding).
import { toBase64Url } from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import type { Clock, Random } from "../io/mod.ts";
import {
  DASHBOARD_ASSETS,
  DASHBOARD_EVENTS_PATH,
  type DashboardSource,
  renderDashboardPage,
  renderDashboardSections,
} from "../report/mod.ts";
import { HttpError } from "./errors.ts";
import { errorResponse, jsonResponse } from "./http.ts";

/** Path of the one-time login link. */
export const DASHBOARD_LOGIN_PATH = "/login";

/** Path that mints a login link for the operator token. */
export const DASHBOARD_LINKS_PATH = "/dashboard/login-links";

/** Path of the JSON view. */
export const DASHBOARD_STATE_PATH = "/dashboard/state.json";

/** The dashboard's routes as docs/TASK_SERVER.md lists them (loopback listener only). */
export const DASHBOARD_ROUTE_DOCS: readonly {
  method: "GET" | "POST";
  path: string;
  who: string;
  answer: string;
}[] = [
  {
    method: "GET",
    path: "/",
    who: "dashboard session or operator",
    answer: "the live dashboard (HTML, a complete snapshot)",
  },
  {
    method: "GET",
    path: `${DASHBOARD_LOGIN_PATH}?code=…`,
    who: "anyone with a one-time code",
    answer: "`303` to `/` with the session cookie, once",
  },
  {
    method: "GET",
    path: DASHBOARD_EVENTS_PATH,
    who: "dashboard session or operator",
    answer: "Server-Sent Events: `sections`, at most one a second",
  },
  {
    method: "GET",
    path: DASHBOARD_STATE_PATH,
    who: "dashboard session or operator",
    answer: "`{model, agents, logTails}` (the `runs report` model)",
  },
  {
    method: "POST",
    path: DASHBOARD_LINKS_PATH,
    who: "operator",
    answer: "`201 {url}`: a fresh one-time login link",
  },
  {
    method: "GET",
    path: "/dashboard/assets/*",
    who: "anyone",
    answer: "the dashboard's CSS and script",
  },
];

/** Options of {@linkcode DashboardRoutes}. */
export interface DashboardRouteOptions {
  /** What the dashboard shows. */
  source: DashboardSource;
  /** Login codes and session ids. */
  random: Random;
  /** "As of" times and the update pacing. */
  clock: Clock;
  /** The server's port (cookie name, Host check, links). */
  port: number;
  /** True when the request carries the operator's bearer token. */
  isOperator: (req: Request) => boolean;
  /** Least time between two updates of one stream (default 1000 ms: nothing faster). */
  minIntervalMs?: number;
  /** Comment lines that keep idle streams open (default 15 000 ms). */
  keepaliveMs?: number;
  /** Streams at once (default 16). */
  maxStreams?: number;
}

const SECURITY_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cross-origin-resource-policy": "same-origin",
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
};

const MAX_CODES = 32;
const MAX_SESSIONS = 256;
const encoder = new TextEncoder();

function html(status: number, body: string, extra: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS, ...extra },
  });
}

function refusalPage(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css"></head>
<body><main><h1>${title}</h1><p>${text}</p>
<p>Run <code>bernstein dashboard</code> in the project for a new one-time login link.</p></main></body></html>`;
}

/** One open SSE stream. */
interface Stream {
  controller: ReadableStreamDefaultController<Uint8Array>;
  lastSentMs: number;
  waiting: AbortController | undefined;
  busy: boolean;
  dirty: boolean;
  closed: boolean;
}

/** The dashboard's routes (see the file comment for the login). */
export class DashboardRoutes {
  readonly #o: Required<DashboardRouteOptions>;
  readonly #codes = new Set<string>();
  readonly #sessions = new Set<string>();
  readonly #streams = new Set<Stream>();
  readonly #cookie: string;
  readonly #hosts: Set<string>;
  readonly #unsubscribe: () => void;
  #keepalive: ReturnType<typeof setInterval> | undefined;
  #updates = 0;

  constructor(options: DashboardRouteOptions) {
    this.#o = { minIntervalMs: 1000, keepaliveMs: 15_000, maxStreams: 16, ...options };
    this.#cookie = `bernstein_dash_${options.port}`;
    this.#hosts = new Set(
      ["127.0.0.1", "localhost", "[::1]"].map((h) => `${h}:${options.port}`),
    );
    this.#unsubscribe = options.source.onChange(() => {
      for (const s of this.#streams) this.#schedule(s);
    });
  }

  /** True for the paths this module answers. */
  owns(pathname: string): boolean {
    return pathname === "/" || pathname === DASHBOARD_LOGIN_PATH ||
      pathname.startsWith("/dashboard/");
  }

  /** The metrics label of a path: one of the known routes, else `/dashboard/*`. */
  routeLabel(pathname: string): string {
    const known = [
      "/",
      DASHBOARD_LOGIN_PATH,
      DASHBOARD_LINKS_PATH,
      DASHBOARD_STATE_PATH,
      DASHBOARD_EVENTS_PATH,
      ...Object.keys(DASHBOARD_ASSETS),
    ];
    return known.includes(pathname) ? pathname : "/dashboard/*";
  }

  /** A fresh one-time login link (`http://127.0.0.1:<port>/login?code=…`). */
  mintLoginLink(): string {
    const code = toBase64Url(this.#o.random.bytes(32));
    this.#codes.add(sha256Hex(encoder.encode(code)));
    while (this.#codes.size > MAX_CODES) {
      this.#codes.delete(this.#codes.values().next().value as string);
    }
    return `http://127.0.0.1:${this.#o.port}${DASHBOARD_LOGIN_PATH}?code=${code}`;
  }

  /** Answers a request for one of the dashboard's paths. */
  async handle(req: Request, url: URL): Promise<Response> {
    try {
      const host = req.headers.get("host") ?? "";
      if (!this.#hosts.has(host.toLowerCase())) {
        throw new HttpError(403, "auth.forbidden", `Host '${host}' is not this dashboard`);
      }
      const asset = DASHBOARD_ASSETS[url.pathname];
      if (asset !== undefined) return this.#asset(req, asset);
      if (url.pathname === DASHBOARD_LOGIN_PATH) return this.#login(req, url);
      if (url.pathname === DASHBOARD_LINKS_PATH) return this.#links(req);
      if (
        url.pathname !== "/" && url.pathname !== DASHBOARD_EVENTS_PATH &&
        url.pathname !== DASHBOARD_STATE_PATH
      ) {
        throw new HttpError(404, "server.not_found", `no route ${req.method} ${url.pathname}`);
      }
      this.#method(req, "GET");
      if (!this.#signedIn(req)) {
        if (url.pathname === "/") {
          return html(
            401,
            refusalPage(
              "Sign-in needed",
              "This dashboard opens only from its one-time login link.",
            ),
          );
        }
        throw new HttpError(401, "auth.missing_token", "sign in with the one-time login link");
      }
      if (url.pathname === DASHBOARD_EVENTS_PATH) return this.#events();
      const nowMs = this.#o.clock.nowMs();
      const view = await this.#o.source.view(nowMs);
      if (url.pathname === DASHBOARD_STATE_PATH) {
        return jsonResponse(200, view, SECURITY_HEADERS);
      }
      return html(200, renderDashboardPage(view, { nowMs, live: !this.#o.source.ended() }));
    } catch (error) {
      const response = errorResponse(error);
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) response.headers.set(k, v);
      return response;
    }
  }

  /** Ends every stream (the run is over or the server stops), each with the final state. */
  async close(): Promise<void> {
    this.#unsubscribe();
    clearInterval(this.#keepalive);
    this.#keepalive = undefined;
    await Promise.all([...this.#streams].map(async (s) => {
      s.waiting?.abort();
      s.waiting = undefined;
      try {
        const nowMs = this.#o.clock.nowMs();
        this.#write(s, this.#message(await this.#o.source.view(nowMs), nowMs));
      } catch {
        // No final state to give (the source is gone): the stream ends all the same.
      }
      this.#write(s, "event: ended\ndata: {}\n\n");
      this.#end(s, true);
    }));
  }

  #message(view: Awaited<ReturnType<DashboardSource["view"]>>, nowMs: number): string {
    const data = JSON.stringify({
      generated_at: view.model.generated_at,
      sections: renderDashboardSections(view, nowMs),
    });
    return `event: sections\ndata: ${data}\n\n`;
  }

  #method(req: Request, method: string): void {
    if (req.method !== method) {
      throw new HttpError(405, "server.method_not_allowed", `${req.method} is not allowed here`);
    }
  }

  #asset(req: Request, asset: { contentType: string; body: string }): Response {
    this.#method(req, "GET");
    return new Response(asset.body, {
      headers: { "content-type": asset.contentType, ...SECURITY_HEADERS },
    });
  }

  #login(req: Request, url: URL): Response {
    this.#method(req, "GET");
    const code = url.searchParams.get("code") ?? "";
    const hash = sha256Hex(encoder.encode(code));
    if (code === "" || !this.#codes.delete(hash)) {
      return html(
        401,
        refusalPage(
          "This login link does not work",
          "A login link works once; this one was used already, or it belongs to another run.",
        ),
      );
    }
    const session = toBase64Url(this.#o.random.bytes(32));
    this.#sessions.add(sha256Hex(encoder.encode(session)));
    while (this.#sessions.size > MAX_SESSIONS) {
      this.#sessions.delete(this.#sessions.values().next().value as string);
    }
    return new Response(null, {
      status: 303,
      headers: {
        location: "/",
        "set-cookie": `${this.#cookie}=${session}; Path=/; HttpOnly; SameSite=Strict`,
        ...SECURITY_HEADERS,
      },
    });
  }

  #links(req: Request): Response {
    this.#method(req, "POST");
    if (!this.#o.isOperator(req)) {
      throw new HttpError(401, "auth.invalid_token", "a login link needs the operator token");
    }
    return jsonResponse(201, { url: this.mintLoginLink() }, SECURITY_HEADERS);
  }

  #signedIn(req: Request): boolean {
    if (this.#o.isOperator(req)) return true;
    for (const part of (req.headers.get("cookie") ?? "").split(";")) {
      const [name, ...value] = part.trim().split("=");
      if (name === this.#cookie && this.#sessions.has(sha256Hex(encoder.encode(value.join("="))))) {
        return true;
      }
    }
    return false;
  }

  #events(): Response {
    if (this.#streams.size >= this.#o.maxStreams) {
      throw new HttpError(503, "server.busy", `at most ${this.#o.maxStreams} dashboards at once`);
    }
    let stream: Stream | undefined;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        stream = {
          controller,
          lastSentMs: -Infinity,
          waiting: undefined,
          busy: false,
          dirty: false,
          closed: false,
        };
        this.#streams.add(stream);
        controller.enqueue(encoder.encode("retry: 3000\n\n"));
        this.#keepalive ??= setInterval(() => {
          for (const s of this.#streams) this.#write(s, ": keepalive\n\n");
        }, this.#o.keepaliveMs);
        this.#schedule(stream);
      },
      cancel: () => {
        if (stream) this.#end(stream, false);
      },
    });
    return new Response(body, {
      headers: {
        ...SECURITY_HEADERS,
        "content-type": "text/event-stream; charset=utf-8",
        "x-accel-buffering": "no",
      },
    });
  }

  /**
   * Sends an update now, or once `minIntervalMs` has passed since the last one (waiting on the
   * injected clock, so tests drive the pacing with a fake one).
   */
  #schedule(s: Stream): void {
    if (s.closed) return;
    s.dirty = true;
    if (s.busy || s.waiting !== undefined) return;
    const wait = s.lastSentMs + this.#o.minIntervalMs - this.#o.clock.monotonicMs();
    if (wait <= 0) {
      this.#send(s);
      return;
    }
    const waiting = new AbortController();
    s.waiting = waiting;
    this.#o.clock.sleep(wait, waiting.signal).then(() => {
      if (s.waiting !== waiting) return;
      s.waiting = undefined;
      this.#send(s);
    });
  }

  /** Sends counted so far, over all streams (tests). */
  get updatesSent(): number {
    return this.#updates;
  }

  async #send(s: Stream): Promise<void> {
    if (s.closed || !s.dirty) return;
    s.busy = true;
    s.dirty = false;
    s.lastSentMs = this.#o.clock.monotonicMs();
    try {
      const nowMs = this.#o.clock.nowMs();
      this.#write(s, this.#message(await this.#o.source.view(nowMs), nowMs));
      this.#updates++;
      if (this.#o.source.ended()) {
        this.#write(s, "event: ended\ndata: {}\n\n");
        this.#end(s, true);
        return;
      }
    } catch {
      // The view could not be built this time (a store mid-close): the next change retries.
    } finally {
      s.busy = false;
    }
    if (s.dirty) this.#schedule(s);
  }

  #write(s: Stream, text: string): void {
    if (s.closed) return;
    try {
      s.controller.enqueue(encoder.encode(text));
    } catch {
      this.#end(s, false);
    }
  }

  #end(s: Stream, closeBody: boolean): void {
    if (s.closed) return;
    s.closed = true;
    const waiting = s.waiting;
    s.waiting = undefined;
    waiting?.abort();
    this.#streams.delete(s);
    if (closeBody) {
      try {
        s.controller.close();
      } catch {
        // Already closed by the client.
      }
    }
    if (this.#streams.size === 0) {
      clearInterval(this.#keepalive);
      this.#keepalive = undefined;
    }
  }
}
