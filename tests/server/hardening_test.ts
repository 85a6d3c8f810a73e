// The task server under abuse: idle and half-open connections are closed by their deadlines,
// the connection cap makes room by closing idle connections and answers 503 when every slot is
// busy, deep or huge JSON is refused before parsing, a streaming response outlives every
// timeout, and running out of file descriptors does not end the server. Every wait is for an
// event (a closed socket, a received byte), never a fixed sleep.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { jsonDepthExceeds, serveHttp1 } from "../../src/server/mod.ts";
import { startTestServer } from "./_server.ts";

const encoder = new TextEncoder();

/** Resolves when the peer closes the connection (read returns end of stream or fails). */
async function closedByPeer(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return text;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
}

function connect(url: string): Promise<Deno.TcpConn> {
  return Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(url).port) });
}

Deno.test("an idle connection and a half-sent request are closed by their deadlines", async () => {
  const t = await startTestServer({ server: { idle_timeout_s: 0.2, request_timeout_s: 0.2 } });
  try {
    const idle = await connect(t.server.url);
    assert.equal(await closedByPeer(idle), "", "closed without an answer");
    idle.close();
    const slow = await connect(t.server.url);
    await slow.write(encoder.encode("GET /health HTTP/1.1\r\nhost: x\r\n"));
    assert.equal(await closedByPeer(slow), "");
    slow.close();
    // Both were closed: the server still answers.
    assert.equal((await t.call("GET", "/health")).status, 200);
  } finally {
    await t.stop();
  }
});

Deno.test("at the connection cap an idle connection makes room for a working client", async () => {
  const t = await startTestServer({ server: { max_connections: 2 } });
  try {
    const idleA = await connect(t.server.url);
    const idleB = await connect(t.server.url);
    // Connections are accepted in order: both idle ones count before the client below.
    assert.equal((await t.call("GET", "/health")).status, 200);
    assert.equal(await closedByPeer(idleA), "", "the oldest idle connection was closed");
    idleA.close();
    idleB.close();
  } finally {
    await t.stop();
  }
});

Deno.test("when every connection is busy a new one gets 503 JSON and the server carries on", async () => {
  let entered = 0;
  let wake: () => void = () => {};
  const twoBusy = new Promise<void>((r) => (wake = r));
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const server = serveHttp1({
    port: 0,
    maxConnections: 2,
    idleTimeoutMs: 60_000,
    requestTimeoutMs: 60_000,
    maxHeadBytes: 4096,
    maxBodyBytes: 1024,
    refusal: (status, code) => Response.json({ error: { code } }, { status }),
    handler: async () => {
      if (++entered === 2) wake();
      await released;
      return new Response("done");
    },
  });
  const url = `http://127.0.0.1:${server.addr.port}/`;
  try {
    const slow = [fetch(url), fetch(url)];
    await twoBusy;
    const refused = await fetch(url);
    assert.equal(refused.status, 503);
    assert.deepEqual(await refused.json(), { error: { code: "server.too_many_connections" } });
    release();
    for (const r of await Promise.all(slow)) assert.equal(await r.text(), "done");
    assert.equal(await (await fetch(url)).text(), "done", "served again once slots free up");
  } finally {
    release();
    await server.shutdown();
  }
});

Deno.test("deep or huge JSON is refused before parsing (400/413), malformed heads with 400", async () => {
  const t = await startTestServer({ server: { max_body_bytes: 64 * 1024 } });
  try {
    const deep = "[".repeat(2000) + "]".repeat(2000);
    const r = await t.call("POST", "/tasks", { token: t.operator, raw: deep });
    assert.equal(r.status, 400);
    assert.equal((r.json.error as Record<string, unknown>).code, "server.json_too_deep");
    const nestedObject = '{"a":'.repeat(100) + "1" + "}".repeat(100);
    const r2 = await t.call("POST", "/orchestrator/holds", {
      token: t.operator,
      raw: nestedObject,
    });
    assert.equal(r2.status, 400);
    assert.equal((r2.json.error as Record<string, unknown>).code, "server.json_too_deep");
    const big = await t.call("POST", "/tasks", { token: t.operator, raw: "x".repeat(70 * 1024) });
    assert.equal(big.status, 413);
    const conn = await connect(t.server.url);
    await conn.write(encoder.encode("NOT HTTP\r\n\r\n"));
    assert.match(await closedByPeer(conn), /^HTTP\/1\.1 400/);
    conn.close();
    assert.equal((await t.call("GET", "/health")).status, 200);
  } finally {
    await t.stop();
  }
  // Brackets inside strings do not count; escapes are skipped.
  assert.equal(jsonDepthExceeds(encoder.encode('{"a":"[[[[[[","b":"\\"[["}'), 1), false);
  assert.equal(jsonDepthExceeds(encoder.encode("[[1]]"), 1), true);
});

Deno.test("a streaming response outlives the idle and request timeouts; shutdown ends it", async () => {
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const server = serveHttp1({
    port: 0,
    maxConnections: 8,
    idleTimeoutMs: 100,
    requestTimeoutMs: 100,
    maxHeadBytes: 4096,
    maxBodyBytes: 1024,
    refusal: (status) => new Response(null, { status }),
    handler: (req) => {
      if (new URL(req.url).pathname === "/forever") {
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(encoder.encode("data: first\n\n"));
            req.signal.addEventListener("abort", () => c.close());
          },
        });
        return Promise.resolve(
          new Response(body, { headers: { "content-type": "text/event-stream" } }),
        );
      }
      const body = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(encoder.encode("data: a\n\n"));
          await released;
          c.enqueue(encoder.encode("data: b\n\n"));
          c.close();
        },
      });
      return Promise.resolve(
        new Response(body, { headers: { "content-type": "text/event-stream" } }),
      );
    },
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}/events`;
    const res = await fetch(url);
    assert.ok(res.body !== null);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = (await reader.read()).value ?? "";
    assert.match(text, /data: a/);
    // Meanwhile an idle connection is closed by its (short) deadline: the timeouts are running.
    const idle = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    await closedByPeer(idle);
    idle.close();
    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    assert.equal(text, "data: a\n\ndata: b\n\n");
    // A stream that never ends is stopped by shutdown (its request's signal aborts).
    const forever = await fetch(`http://127.0.0.1:${server.addr.port}/forever`);
    assert.ok(forever.body !== null);
    const r2 = forever.body.getReader();
    await r2.read();
    await server.shutdown();
    while (!(await r2.read()).done);
  } finally {
    await server.shutdown();
  }
});

Deno.test("out of file descriptors: the server refuses nothing fatally and answers again after", async () => {
  // A server child limited to 64 descriptors, with more connections than that held open.
  const script = fileURLToPath(new URL("../../scripts/bench/_server_child.ts", import.meta.url));
  const dir = await Deno.makeTempDir({ prefix: "bernstein-fd-" });
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      `ulimit -n 64 && exec "$0" run -q --frozen -P=dev "$1" "$2"`,
      Deno.execPath(),
      script,
      dir,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  while (!first.includes("\n")) first += (await lines.read()).value ?? "";
  const setup = JSON.parse(first.slice(0, first.indexOf("\n"))) as { url: string; token: string };
  const held: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 100; i++) held.push(await connect(setup.url));
    // The server ran out of descriptors while those were accepted; it is still alive.
    for (const c of held) c.close();
    held.length = 0;
    const res = await fetch(`${setup.url}/health`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
  } finally {
    for (const c of held) c.close();
    await child.stdin.close();
    const status = await child.status;
    const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    assert.equal(status.code, 0, stderr);
  }
});
