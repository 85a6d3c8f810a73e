// Task server latency under 50 and 200 concurrent clients: GET /tasks/{id} (read) and
// POST /tasks/{id}/progress (an fsynced write), against a server in its own process, while
// 1,000 idle connections are held open against it. Each read figure stands beside the same
// reads with no idle connection (measured first, same server) and the ratio. Two servers:
// the default connection cap (512: it closes idle connections to make room for working
// clients, and none of those may fail) and a cap raised to 2,048, where all 1,000 stay open
// while the clients work (what idle connections cost a server that keeps them).
import { fileURLToPath } from "node:url";
import { compare, report } from "./_report.ts";

const IDLE = 1000;
const READS = 10_000;

interface Setup {
  url: string;
  token: string;
  read: string[];
  write: string[];
}

interface ServerChild {
  setup: Setup;
  headers: Record<string, string>;
  stop: () => Promise<void>;
}

async function startServer(maxConnections?: number): Promise<ServerChild> {
  const args = [
    "run",
    "-q",
    "--frozen",
    "-P=dev",
    fileURLToPath(new URL("./_server_child.ts", import.meta.url)),
    await Deno.makeTempDir({ prefix: "bernstein-bench-srv-" }),
    ...(maxConnections === undefined ? [] : [String(maxConnections)]),
  ];
  const child = new Deno.Command(Deno.execPath(), {
    args,
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
  reader.releaseLock();
  const setup = JSON.parse(buffer.slice(0, buffer.indexOf("\n"))) as Setup;
  return {
    setup,
    headers: { authorization: `Bearer ${setup.token}`, "content-type": "application/json" },
    stop: async () => {
      await child.stdin.close();
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Idle connections: opened, never used; counts the ones the server closed. */
async function holdIdle(
  url: string,
  n: number,
): Promise<{ closed: () => number; release: () => void }> {
  const port = Number(new URL(url).port);
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

interface Latency {
  p50: number;
  p99: number;
  throughput: number;
}

async function load(
  name: string,
  clients: number,
  perClient: number,
  request: (client: number, i: number) => Promise<Response>,
): Promise<Latency> {
  // Warm-up: connections, JIT.
  await Promise.all(
    Array.from({ length: clients }, (_, c) => request(c, 0).then((r) => r.body?.cancel())),
  );
  const latencies: number[] = [];
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
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
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    throughput: latencies.length / seconds,
  };
}

function reads(server: ServerChild, clients: number): Promise<Latency> {
  const { setup, headers } = server;
  return load(
    "GET /tasks/{id}",
    clients,
    READS / clients,
    (c, i) =>
      fetch(`${setup.url}/tasks/${setup.read[(c * 200 + i) % setup.read.length]}`, { headers }),
  );
}

function reportReads(label: string, clients: number, got: Latency, base: Latency): void {
  const ref = (value: number) => ({ value, label: "same reads, no idle connection" });
  compare(
    "server",
    `GET /tasks/{id} p50 (${clients} clients, ${label})`,
    got.p50,
    "ms",
    ref(base.p50),
  );
  compare(
    "server",
    `GET /tasks/{id} p99 (${clients} clients, ${label})`,
    got.p99,
    "ms",
    ref(base.p99),
  );
  compare(
    "server",
    `GET /tasks/{id} throughput (${clients} clients, ${label})`,
    got.throughput,
    "req/s",
    ref(base.throughput),
  );
}

/** Time inside the handler (server-side histogram), to tell HTTP stack cost from our own. */
async function handlerTimes(server: ServerChild): Promise<void> {
  const { setup, headers } = server;
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
}

async function phase(label: string, maxConnections?: number): Promise<void> {
  const server = await startServer(maxConnections);
  try {
    const base = new Map<number, Latency>();
    for (const clients of [50, 200]) base.set(clients, await reads(server, clients));
    const idle = await holdIdle(server.setup.url, IDLE);
    try {
      for (const clients of [50, 200]) {
        reportReads(label, clients, await reads(server, clients), base.get(clients) as Latency);
      }
      if (maxConnections === undefined) {
        const { setup, headers } = server;
        const writes = await load(
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
        report("server", `POST /tasks/{id}/progress p50 (50 clients, ${label})`, writes.p50, "ms");
        report("server", `POST /tasks/{id}/progress p99 (50 clients, ${label})`, writes.p99, "ms");
        await handlerTimes(server);
      }
      report(
        "server",
        `idle connections still open (of ${IDLE}, ${label})`,
        IDLE - idle.closed(),
        "conns",
      );
    } finally {
      idle.release();
    }
  } finally {
    await server.stop();
  }
}

await phase("cap 512: idle closed to make room");
await phase("cap 2048: all 1,000 idle held", 2048);
