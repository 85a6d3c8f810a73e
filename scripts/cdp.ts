// A small Chrome DevTools Protocol client over Deno's own WebSocket, driving the system's
// headless Chromium (never a downloaded one): launch, open a page, navigate, evaluate, wait for
// a condition inside the page, collect console errors and every request, take screenshots.
// Used by the browser tests and by `deno task docs` (README screenshots).
//
// Why our own client and not puppeteer-core: the tests need a dozen CDP methods, Deno has a
// WebSocket built in, and this way no npm package (with its own dependency tree and a habit
// of fetching browsers) enters the lock file; the protocol is stable and documented at
// https://chromedevtools.github.io/devtools-protocol/.
import { spawnProcess } from "../src/io/mod.ts";

/** Flags that keep Chromium quiet, local and reproducible here (no sandbox: CI runs as root). */
export const CHROMIUM_FLAGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-extensions",
  "--disable-default-apps",
  "--mute-audio",
  "--hide-scrollbars",
  "--force-color-profile=srgb",
  "--font-render-hinting=none",
];

/** Candidate browser paths, in order (BERNSTEIN_CHROMIUM wins). */
function candidates(): string[] {
  const given = Deno.env.get("BERNSTEIN_CHROMIUM");
  return [
    ...(given ? [given] : []),
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
  ];
}

/** The system Chromium, or undefined when none is installed. */
export function findChromium(): string | undefined {
  for (const path of candidates()) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

type Json = Record<string, unknown>;

/** How long a command may go unanswered before the browser is taken as stuck. */
const ANSWER_GUARD_MS = 120_000;
type Listener = (params: Json, sessionId: string | undefined) => void;

/** One CDP connection (the browser endpoint; pages are flat sessions on it). */
class Connection {
  readonly #socket: WebSocket;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve: (v: Json) => void; reject: (e: Error) => void }>();
  readonly #listeners = new Map<string, Set<Listener>>();
  #closed = false;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => this.#receive(String(event.data));
    socket.onclose = () => {
      this.#closed = true;
      for (const p of this.#pending.values()) p.reject(new Error("CDP connection closed"));
      this.#pending.clear();
    };
  }

  static open(url: string): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.onopen = () => resolve(new Connection(socket));
      socket.onerror = (event) => reject(new Error(`CDP connect failed: ${String(event)}`));
    });
  }

  #receive(text: string): void {
    const message = JSON.parse(text) as {
      id?: number;
      result?: Json;
      error?: { message: string; data?: string };
      method?: string;
      params?: Json;
      sessionId?: string;
    };
    if (message.id !== undefined) {
      const pending = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (message.error) {
        pending?.reject(
          new Error(
            `${message.error.message}${message.error.data ? `: ${message.error.data}` : ""}`,
          ),
        );
      } else pending?.resolve(message.result ?? {});
      return;
    }
    if (message.method) {
      for (const listener of this.#listeners.get(message.method) ?? []) {
        listener(message.params ?? {}, message.sessionId);
      }
    }
  }

  send(method: string, params: Json = {}, sessionId?: string): Promise<Json> {
    if (this.#closed) return Promise.reject(new Error(`CDP connection closed (${method})`));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // A guard against a browser that stopped answering, not a time limit on the page: an
      // evaluate may wait for the page (Page.waitFor) up to its own guard.
      const guardMs = method === "Runtime.evaluate" ? ANSWER_GUARD_MS * 2 : ANSWER_GUARD_MS;
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`CDP ${method} got no answer in ${guardMs / 1000} s`));
      }, guardMs);
      this.#pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.#socket.send(
        JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }),
      );
    });
  }

  on(method: string, listener: Listener): void {
    if (!this.#listeners.has(method)) this.#listeners.set(method, new Set());
    this.#listeners.get(method)?.add(listener);
  }

  close(): void {
    if (!this.#closed) this.#socket.close();
  }
}

/** A console message or page error the page produced. */
export interface ConsoleEntry {
  /** `error`, `warning`, `exception`, … */
  level: string;
  /** The text. */
  text: string;
  /** Where it came from (`console`, `network`, `security`, `javascript`). */
  source: string;
}

/** One page (tab). */
export class Page {
  readonly #conn: Connection;
  readonly #session: string;
  /** Console errors, failed loads, CSP violations and uncaught exceptions, in order. */
  readonly errors: ConsoleEntry[] = [];
  /** Every URL the page requested (documents, scripts, styles, images, XHR, EventSource). */
  readonly requests: string[] = [];
  #loaded: (() => void) | undefined;
  #viewport: { width: number; height: number; mobile: boolean } | undefined;

  constructor(conn: Connection, session: string) {
    this.#conn = conn;
    this.#session = session;
    conn.on("Runtime.consoleAPICalled", (p, s) => {
      if (s !== session || (p.type !== "error" && p.type !== "assert")) return;
      const args = (p.args as { value?: unknown; description?: string }[] | undefined) ?? [];
      this.errors.push({
        level: "error",
        source: "console",
        text: args.map((a) => String(a.value ?? a.description ?? "")).join(" "),
      });
    });
    conn.on("Runtime.exceptionThrown", (p, s) => {
      if (s !== session) return;
      const d = p.exceptionDetails as { text?: string; exception?: { description?: string } };
      this.errors.push({
        level: "exception",
        source: "javascript",
        text: `${d.text ?? ""} ${d.exception?.description ?? ""}`.trim(),
      });
    });
    conn.on("Log.entryAdded", (p, s) => {
      if (s !== session) return;
      const e = p.entry as { level: string; text: string; source: string; url?: string };
      if (e.level === "error") {
        this.errors.push({
          level: e.level,
          source: e.source,
          text: `${e.text} ${e.url ?? ""}`.trim(),
        });
      }
    });
    conn.on("Network.requestWillBeSent", (p, s) => {
      if (s !== session) return;
      this.requests.push((p.request as { url: string }).url);
    });
    conn.on("Page.loadEventFired", (_p, s) => {
      if (s !== session) return;
      const done = this.#loaded;
      this.#loaded = undefined;
      done?.();
    });
  }

  /** Sends a CDP command to this page. */
  send(method: string, params: Json = {}): Promise<Json> {
    return this.#conn.send(method, params, this.#session);
  }

  /** Subscribes to a CDP event of this page. */
  on(method: string, listener: (params: Json) => void): void {
    this.#conn.on(method, (p, s) => {
      if (s === this.#session) listener(p);
    });
  }

  /** Sets the viewport (CSS pixels); `mobile` emulates a phone. */
  async setViewport(width: number, height: number, mobile = false): Promise<void> {
    this.#viewport = { width, height, mobile };
    await this.send("Emulation.setDeviceMetricsOverride", {
      width,
      height,
      deviceScaleFactor: 1,
      mobile,
    });
  }

  /** Emulates `prefers-color-scheme`. */
  async setColorScheme(scheme: "light" | "dark"): Promise<void> {
    await this.send("Emulation.setEmulatedMedia", {
      features: [{ name: "prefers-color-scheme", value: scheme }],
    });
  }

  /** Turns JavaScript off (before navigating) to see the page as a static snapshot. */
  async setJavaScriptEnabled(enabled: boolean): Promise<void> {
    await this.send("Emulation.setScriptExecutionDisabled", { value: !enabled });
  }

  /** The page's visible text. */
  text(selector = "body"): Promise<string> {
    return this.evaluate<string>(
      `(document.querySelector(${JSON.stringify(selector)})?.innerText ?? "")`,
    );
  }

  /** Navigates and waits for the load event; returns the navigation's error text, if any. */
  async goto(url: string): Promise<string | undefined> {
    const loaded = new Promise<void>((resolve) => (this.#loaded = resolve));
    const result = await this.send("Page.navigate", { url });
    if (typeof result.errorText === "string" && result.errorText !== "") {
      this.#loaded = undefined;
      return result.errorText;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no load event for ${url}`), ANSWER_GUARD_MS);
    });
    const problem = await Promise.race([loaded.then(() => undefined), stuck]);
    clearTimeout(timer);
    return problem;
  }

  /** Evaluates an expression in the page (promises are awaited) and returns its JSON value. */
  async evaluate<T>(expression: string): Promise<T> {
    const result = await this.send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    const details = result.exceptionDetails as {
      text?: string;
      exception?: { description?: string };
    } | undefined;
    if (details) {
      throw new Error(`evaluate failed: ${details.exception?.description ?? details.text}`);
    }
    return (result.result as { value: T }).value;
  }

  /**
   * Waits until `condition` (a JS expression) is truthy in the page: checked at once and then
   * on every DOM change, so the wait follows the page, not a clock. `guardMs` only stops a
   * hang with a clear message.
   */
  async waitFor(condition: string, guardMs = 120_000): Promise<void> {
    const ok = await this.evaluate<boolean>(`new Promise((resolve) => {
      const check = () => { try { return Boolean(${condition}); } catch { return false; } };
      if (check()) return resolve(true);
      const observer = new MutationObserver(() => {
        if (check()) { observer.disconnect(); clearTimeout(guard); resolve(true); }
      });
      observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
      const guard = setTimeout(() => { observer.disconnect(); resolve(false); }, ${guardMs});
    })`);
    if (!ok) throw new Error(`the page never satisfied: ${condition}`);
  }

  /**
   * A PNG of the viewport, or of the whole page with `fullPage` (the viewport is stretched to
   * the page's height for the shot, so layout is the one a reader scrolling it would see).
   */
  async screenshot(options: { fullPage?: boolean } = {}): Promise<Uint8Array> {
    const view = this.#viewport;
    if (options.fullPage && view !== undefined) {
      const height = await this.evaluate<number>("document.documentElement.scrollHeight");
      await this.send("Emulation.setDeviceMetricsOverride", {
        width: view.width,
        height: Math.max(view.height, Math.ceil(height)),
        deviceScaleFactor: 1,
        mobile: view.mobile,
      });
    }
    try {
      const result = await this.send("Page.captureScreenshot", { format: "png" });
      const b64 = result.data as string;
      return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    } finally {
      if (options.fullPage && view !== undefined) {
        await this.setViewport(view.width, view.height, view.mobile);
      }
    }
  }
}

/** A running headless Chromium. */
export class Browser {
  readonly #conn: Connection;
  readonly #stop: () => Promise<void>;

  private constructor(conn: Connection, stop: () => Promise<void>) {
    this.#conn = conn;
    this.#stop = stop;
  }

  /**
   * Starts `executable` headless on a fresh profile under `profileDir` and connects to it.
   *
   * @example
   * ```ts ignore
   * const browser = await Browser.launch(findChromium()!, tmpDir);
   * const page = await browser.newPage();
   * await page.goto("http://127.0.0.1:8080/");
   * await browser.close();
   * ```
   */
  static async launch(executable: string, profileDir: string): Promise<Browser> {
    let stderr = "";
    let found: (url: string) => void = () => {};
    const endpoint = new Promise<string>((resolve) => (found = resolve));
    const handle = spawnProcess([
      executable,
      ...CHROMIUM_FLAGS,
      `--user-data-dir=${profileDir}`,
      "--remote-debugging-port=0",
      "about:blank",
    ], {
      // TMPDIR too: Chromium's own temp folders (org.chromium.Chromium.*) go with the profile.
      env: {
        HOME: profileDir,
        TMPDIR: profileDir,
        PATH: "/usr/bin:/bin",
        TZ: "UTC",
        LANG: "C.UTF-8",
      },
      killGraceMs: 2000,
      onStderr: (chunk) => {
        stderr += new TextDecoder().decode(chunk);
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
        if (m) found(m[1]);
      },
      maxCaptureBytes: 64 * 1024,
    });
    const exited = handle.done.then((r) => {
      throw new Error(`chromium exited (${r.code}) before it listened:\n${stderr.slice(-2000)}`);
    });
    const url = await Promise.race([endpoint, exited]);
    exited.catch(() => {});
    const conn = await Connection.open(url);
    return new Browser(conn, async () => {
      await conn.send("Browser.close").catch(() => {});
      conn.close();
      await handle.terminate(2000);
      await handle.done.catch(() => {});
    });
  }

  /**
   * Opens a new page with Page, Runtime, Network and Log events on; `isolated` gives it its own
   * browser context (no cookies shared with other pages).
   */
  async newPage(options: { isolated?: boolean } = {}): Promise<Page> {
    const context = options.isolated
      ? (await this.#conn.send("Target.createBrowserContext")).browserContextId
      : undefined;
    const { targetId } = await this.#conn.send("Target.createTarget", {
      url: "about:blank",
      ...(context ? { browserContextId: context } : {}),
    });
    const { sessionId } = await this.#conn.send("Target.attachToTarget", {
      targetId,
      flatten: true,
    });
    const page = new Page(this.#conn, sessionId as string);
    await Promise.all([
      page.send("Page.enable"),
      page.send("Runtime.enable"),
      page.send("Network.enable"),
      page.send("Log.enable"),
    ]);
    return page;
  }

  /** Closes the browser and waits for its processes to end. */
  close(): Promise<void> {
    return this.#stop();
  }
}
