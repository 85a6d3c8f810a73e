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
export type Answer =
  | { status: number; headers?: Record<string, string>; bodyBytes?: number }
  | "hang";

/** A running sink. */
export interface Sink {
  url: string;
  received: Received[];
  /** Bytes of lazy answer bodies handed to the connection so far. */
  bodyBytesSent(): number;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A body of `total` bytes made as it is read (64 KiB at a time); `onChunk` counts them. */
function lazyBody(total: number, onChunk: (n: number) => void): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  let left = total;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const n = Math.min(left, chunk.length);
      left -= n;
      onChunk(n);
      controller.enqueue(chunk.subarray(0, n));
    },
  });
}

/** Starts a sink on 127.0.0.1; answers come from `answers` in order, then 200. */
export function startSink(answers: Answer[] = []): Sink {
  const received: Received[] = [];
  const waiters: { count: number; resolve: (r: Received[]) => void }[] = [];
  const hung: (() => void)[] = [];
  const sent: number[] = [];
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
    if (answer.bodyBytes !== undefined) {
      return new Response(lazyBody(answer.bodyBytes, (n) => sent.push(n)), {
        status: answer.status,
        headers: answer.headers,
      });
    }
    return new Response(empty ? null : "ok", { status: answer.status, headers: answer.headers });
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}/hooks/T000/SECRETPATH`,
    received,
    bodyBytesSent: () => sent.reduce((a, b) => a + b, 0),
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
