import assert from "node:assert/strict";
import { join } from "node:path";
import { mapEnv, systemClock } from "../../src/io/mod.ts";
import {
  discoverEndpoint,
  operatorTokenPath,
  ServerRefusalError,
  ServerUnreachableError,
  TaskClient,
  TokenMissingError,
} from "../../src/server/mod.ts";
import { fetchWasRefused } from "../../src/server/client.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { startTestServer } from "./_server.ts";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("client: discovery prefers env, then walks up to .sdd/runtime from a worktree", async () => {
  await withTempDir(async (state) =>
    await withTempDir(async (root) => {
      const env = mapEnv({
        BERNSTEIN_SERVER_URL: "http://127.0.0.1:4321/",
        BERNSTEIN_TASK_TOKEN: " bag_abc ",
      });
      const e = await discoverEndpoint({ env, cwd: root });
      assert.deepEqual(e, {
        url: "http://127.0.0.1:4321",
        token: "bag_abc",
        urlSource: "BERNSTEIN_SERVER_URL",
        tokenSource: "BERNSTEIN_TASK_TOKEN",
      });
      await assert.rejects(
        discoverEndpoint({ env: mapEnv({ BERNSTEIN_SERVER_URL: "ftp://x" }), cwd: root }),
        (err: unknown) => err instanceof ServerUnreachableError && err.code === "server.bad_url",
      );

      const runtime = join(root, ".sdd", "runtime");
      const worktree = join(root, ".sdd", "worktrees", "s1", "src");
      await Deno.mkdir(runtime, { recursive: true });
      await Deno.mkdir(worktree, { recursive: true });
      await assert.rejects(
        discoverEndpoint({ env: mapEnv({}), cwd: worktree }),
        (err: unknown) => err instanceof ServerUnreachableError && err.code === "server.not_found",
      );
      await Deno.writeTextFile(join(runtime, "server.port"), "5555\n");
      await assert.rejects(
        discoverEndpoint({ env: mapEnv({}), cwd: worktree }),
        (err: unknown) => err instanceof TokenMissingError && err.exitCode === 3,
      );
      // An operator token left inside the project (by an older version) is not used.
      await Deno.writeTextFile(join(runtime, "auth.token"), "bop_in_project", { mode: 0o600 });
      const keyEnv = mapEnv({ BERNSTEIN_AUDIT_KEY_PATH: join(state, "audit.key") });
      await assert.rejects(discoverEndpoint({ env: keyEnv, cwd: worktree }), TokenMissingError);
      // The operator token lives beside the audit key, outside the project.
      const operatorPath = operatorTokenPath(join(state, "audit.key"), root);
      await Deno.mkdir(join(operatorPath, ".."), { recursive: true });
      await Deno.writeTextFile(operatorPath, "bop_operator", { mode: 0o600 });
      const found = await discoverEndpoint({ env: keyEnv, cwd: worktree });
      assert.equal(found.url, "http://127.0.0.1:5555");
      assert.equal(found.token, "bop_operator");
      assert.equal(found.tokenSource, operatorPath);

      const tokenFile = join(root, "agent.token");
      await Deno.writeTextFile(tokenFile, "bag_from_file\n", { mode: 0o600 });
      const viaFile = await discoverEndpoint({
        env: mapEnv({ BERNSTEIN_TASK_TOKEN_FILE: tokenFile }),
        cwd: worktree,
      });
      assert.equal(viaFile.token, "bag_from_file");
      await Deno.chmod(tokenFile, 0o644);
      await assert.rejects(
        discoverEndpoint({ env: mapEnv({ BERNSTEIN_TASK_TOKEN_FILE: tokenFile }), cwd: worktree }),
        (err: unknown) => (err as { code?: string }).code === "secret.permissions",
      );
      await Deno.writeTextFile(join(runtime, "server.port"), "http\n");
      await assert.rejects(
        discoverEndpoint({ env: mapEnv({}), cwd: worktree }),
        (err: unknown) =>
          err instanceof ServerUnreachableError && err.code === "server.bad_port_file" &&
          err.location === join(runtime, "server.port"),
      );
    })
  );
});

Deno.test("client: retries while the connection is refused, then reaches the server", async () => {
  const port = freePort();
  let retries = 0;
  let started: Awaited<ReturnType<typeof startTestServer>> | undefined;
  let starter: Promise<void> | undefined;
  // The server comes up when the first attempt has been refused (an event, not a delay).
  const client = new TaskClient({ url: `http://127.0.0.1:${port}`, token: "unused" }, {
    attempts: 20,
    baseDelayMs: 50,
    clock: systemClock,
    onRetry: () => {
      retries++;
      starter ??= startTestServer({ server: { port } }).then((s) => void (started = s));
    },
  });
  try {
    const health = await client.health();
    assert.equal(health.ok, true);
    assert.ok(retries >= 1, "at least one connection was refused first");
  } finally {
    await starter;
    await started?.stop();
  }
});

Deno.test("client: a refused connect is read from the fetch error itself, not from a later probe", async () => {
  // The real error Deno gives for a port nobody listens on.
  const port = freePort();
  const real = await fetch(`http://127.0.0.1:${port}/health`).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(real instanceof TypeError, `fetch to a closed port rejects: ${real}`);
  assert.equal(fetchWasRefused(real), true, `classified as refused: ${real}`);
  const wrap = (message: string) => new TypeError("fetch failed", { cause: new Error(message) });
  assert.equal(fetchWasRefused(wrap("tcp connect error: Connection refused (os error 111)")), true);
  assert.equal(fetchWasRefused(wrap("tcp connect error (os error 10061)")), true);
  // A connection that broke after connecting may have delivered the request: never a retry.
  assert.equal(fetchWasRefused(wrap("connection reset by peer (os error 104)")), false);
  assert.equal(fetchWasRefused(wrap("os error 1110")), false);
  assert.equal(fetchWasRefused(new TypeError("fetch failed")), false);
  const looped = new Error("loop");
  looped.cause = looped;
  assert.equal(fetchWasRefused(looped), false);
});

Deno.test("client: a refused fetch is retried even when the server is up by the time it is looked at", async () => {
  // The race CI hit: the server starts listening between the refused connect and the client's
  // look at the port. The first fetch fails the way Deno words a refused connect; the server
  // is already listening, so a probe of the port would succeed.
  const s = await startTestServer();
  const realFetch = globalThis.fetch;
  let calls = 0;
  globalThis.fetch = (input, init) => {
    calls++;
    if (calls === 1) {
      return Promise.reject(
        new TypeError("fetch failed", {
          cause: new Error("tcp connect error: Connection refused (os error 111)"),
        }),
      );
    }
    return realFetch(input, init);
  };
  try {
    const retried: number[] = [];
    const client = new TaskClient({ url: s.server.url, token: s.operator }, {
      attempts: 3,
      baseDelayMs: 1,
      clock: systemClock,
      onRetry: (attempt) => retried.push(attempt),
    });
    const health = await client.health();
    assert.equal(health.ok, true);
    assert.deepEqual(retried, [1]);
    assert.equal(calls, 2);
  } finally {
    globalThis.fetch = realFetch;
    await s.stop();
  }
});

Deno.test("client: gives up after the configured attempts with server.unreachable", async () => {
  const port = freePort();
  const delays: number[] = [];
  const client = new TaskClient({ url: `http://127.0.0.1:${port}`, token: "t" }, {
    attempts: 3,
    baseDelayMs: 10,
    clock: systemClock,
    onRetry: (_attempt, delay) => delays.push(delay),
  });
  await assert.rejects(
    client.complete("t1", "done"),
    (e: unknown) =>
      e instanceof ServerUnreachableError && e.code === "server.unreachable" &&
      /refused the connection 3 times/.test(e.message),
  );
  assert.deepEqual(delays, [10, 20]);
});

Deno.test("client: a refusal is final (no retry) and carries the server's code", async () => {
  const s = await startTestServer();
  try {
    let retries = 0;
    const client = new TaskClient({ url: s.server.url, token: s.operator }, {
      attempts: 5,
      baseDelayMs: 10,
      clock: systemClock,
      onRetry: () => retries++,
    });
    await assert.rejects(
      client.complete("missing", "done"),
      (e: unknown) =>
        e instanceof ServerRefusalError && e.code === "task.not_found" && e.status === 404,
    );
    const bad = new TaskClient({ url: s.server.url, token: "wrong" }, {
      attempts: 5,
      baseDelayMs: 10,
      clock: systemClock,
      onRetry: () => retries++,
    });
    await assert.rejects(
      bad.listTasks(),
      (e: unknown) => e instanceof ServerRefusalError && e.code === "auth.invalid_token",
    );
    assert.equal(retries, 0);
    const metrics = await s.call("GET", "/metrics", { token: s.operator });
    assert.ok(
      metrics.text.includes(
        'bernstein_http_requests_total{route="/tasks/{id}/complete",method="POST",code="404"} 1',
      ),
    );
    const made = await client.createTask({ title: "x", role: "dev" });
    assert.deepEqual((await client.listTasks({ status: ["open"] })).map((t) => t.id), [made.id]);
    assert.equal((await client.getTask(made.id)).title, "x");
    const hold = await client.addHold("wait", 60);
    assert.deepEqual((await client.listHolds()).map((h) => h.id), [hold.id]);
    await client.releaseHold(hold.id, "go");
    assert.deepEqual(await client.listHolds(), []);
    const beat = await client.heartbeat("w1", { note: "alive" });
    assert.equal(beat.heartbeats, 1);
  } finally {
    await s.stop();
  }
});
