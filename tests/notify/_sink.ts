// A loopback HTTP sink for notification tests: records every request (headers and exact body
// bytes) and answers each from a script of responses; `waitFor(n)` resolves once n requests
// have arrived, so tests wait on events instead of time.

/** One request the sink received. */
export interface Received {
  method: string;
  path: string;
  headers: Headers;
  body: Uint8Array;
  json: unknown;
}

/** How the sink answers one request: a status (with headers), or never (until the test ends). */
export type Answer = { status: number; headers?: Record<string, string> } | "hang";

/** A running sink. */
export interface Sink {
  url: string;
  received: Received[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a sink on 127.0.0.1; answers come from `answers` in order, then 200. */
export function startSink(answers: Answer[] = []): Sink {
  const received: Received[] = [];
  const waiters: { count: number; resolve: (r: Received[]) => void }[] = [];
  const hung: (() => void)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = new Uint8Array(await req.arrayBuffer());
    let json: unknown = undefined;
    try {
      json = JSON.parse(new TextDecoder().decode(body));
    } catch {
      json = undefined;
    }
    received.push({
      method: req.method,
      path: new URL(req.url).pathname,
      headers: req.headers,
      body,
      json,
    });
    for (const w of waiters.filter((w) => received.length >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve([...received]);
    }
    const answer = answers.shift() ?? { status: 200 };
    if (answer === "hang") {
      await new Promise<void>((resolve) => {
        hung.push(resolve);
        req.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return new Response("late", { status: 200 });
    }
    const empty = answer.status === 204 || answer.status === 304;
    return new Response(empty ? null : "ok", { status: answer.status, headers: answer.headers });
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}/hooks/T000/SECRETPATH`,
    received,
    waitFor(count) {
      if (received.length >= count) return Promise.resolve([...received]);
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      for (const wake of hung.splice(0)) wake();
      await server.shutdown();
    },
  };
}
