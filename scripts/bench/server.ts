// Task server latency under 50 and 200 concurrent clients: GET /tasks/{id} (read) and
// POST /tasks/{id}/progress (an fsynced write), against a server in its own process, while
// 1,000 idle connections are held open against it (the server closes idle ones to make room
// for working clients at its connection cap; none of the working clients may fail).
import { fileURLToPath } from "node:url";
import { report } from "./_report.ts";

const IDLE = 1000;
const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-q",
    "--frozen",
    "-P=dev",
    fileURLToPath(new URL("./_server_child.ts", import.meta.url)),
    await Deno.makeTempDir({ prefix: "bernstein-bench-srv-" }),
  ],
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let buffer = "";
while (!buffer.includes("\n")) {
  const { value, done } = await reader.read();
  if (done) throw new Error("server child exited before it was ready");
  buffer += value;
}
const setup = JSON.parse(buffer.slice(0, buffer.indexOf("\n"))) as {
  url: string;
  token: string;
  read: string[];
  write: string[];
};
const headers = { authorization: `Bearer ${setup.token}`, "content-type": "application/json" };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Idle connections: opened, never used; counts the ones the server closed. */
async function holdIdle(n: number): Promise<{ closed: () => number; release: () => void }> {
  const port = Number(new URL(setup.url).port);
  const conns: Deno.Conn[] = [];
  let closed = 0;
  for (let i = 0; i < n; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conns.push(conn);
    conn.read(new Uint8Array(1)).then(() => closed++, () => closed++);
  }
  return {
    closed: () => closed,
    release: () => {
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // Closed by the server.
        }
      }
    },
  };
}

async function load(
  name: string,
  clients: number,
  perClient: number,
  request: (client: number, i: number) => Promise<Response>,
): Promise<void> {
  const CLIENTS = clients;
  // Warm-up: connections, JIT.
  await Promise.all(
    Array.from({ length: CLIENTS }, (_, c) => request(c, 0).then((r) => r.body?.cancel())),
  );
  const latencies: number[] = [];
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = 0; i < perClient; i++) {
      const start = performance.now();
      const res = await request(c, i);
      await res.arrayBuffer();
      latencies.push(performance.now() - start);
      if (!res.ok) failures++;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  if (failures > 0) throw new Error(`${name}: ${failures} requests failed`);
  latencies.sort((a, b) => a - b);
  report("server", `${name} p50 (${CLIENTS} clients)`, percentile(latencies, 50), "ms");
  report("server", `${name} p99 (${CLIENTS} clients)`, percentile(latencies, 99), "ms");
  report("server", `${name} throughput (${CLIENTS} clients)`, latencies.length / seconds, "req/s");
}

const idle = await holdIdle(IDLE);
try {
  for (const clients of [50, 200]) {
    await load(
      "GET /tasks/{id}",
      clients,
      10_000 / clients,
      (c, i) =>
        fetch(`${setup.url}/tasks/${setup.read[(c * 200 + i) % setup.read.length]}`, { headers }),
    );
  }
  await load(
    "POST /tasks/{id}/progress",
    50,
    60,
    (c, i) =>
      fetch(`${setup.url}/tasks/${setup.write[(c + i) % setup.write.length]}/progress`, {
        method: "POST",
        headers,
        body: JSON.stringify({ message: `step ${i}`, percent: 50 }),
      }),
  );
  // Time inside the handler (server-side histogram), to tell HTTP stack cost from our own.
  const metrics = await (await fetch(`${setup.url}/metrics`, { headers })).text();
  for (const route of ["/tasks/{id}", "/tasks/{id}/progress"]) {
    const method = route === "/tasks/{id}" ? "GET" : "POST";
    const pick = (suffix: string) =>
      Number(
        metrics.split("\n").find((l) =>
          l.startsWith(
            `bernstein_http_request_duration_seconds_${suffix}{route="${route}",method="${method}"}`,
          )
        )?.split(" ")[1],
      );
    report(
      "server",
      `${method} ${route} mean handler time`,
      (pick("sum") / pick("count")) * 1000,
      "ms",
    );
  }
  report("server", `idle connections held (of ${IDLE})`, IDLE - idle.closed(), "conns");
} finally {
  idle.release();
  await child.stdin.close();
  await child.status;
}
