// The egress proxy with real sockets: allowlisted targets pass (tunnel and absolute form),
// everything else is refused with 403 and reported, the agent's own proxy requests go through
// the operator's upstream proxy, forwarded tunnels go direct, and the connection cap holds.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  DIRECT_FORWARD_HEADER,
  egressAllows,
  EgressProxy,
  parseEgressTarget,
  type RefusedConnection,
} from "../../src/sandbox/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function exchange(conn: Deno.Conn, request: string): Promise<string> {
  await conn.write(new TextEncoder().encode(request));
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(4096);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
  }
  conn.close();
  return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}

function origin(): { port: number; seen: string[]; close: () => Promise<void> } {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname}`);
    return new Response("origin says hi\n", { headers: { connection: "close" } });
  });
  return { port: server.addr.port, seen, close: () => server.shutdown() };
}

Deno.test("allowlist entries: host, host:port, URL, wildcard, loopback names", () => {
  assert.deepEqual(parseEgressTarget("api.anthropic.com"), {
    host: "api.anthropic.com",
    port: 443,
  });
  assert.deepEqual(parseEgressTarget("http://127.0.0.1:8080/v1"), {
    host: "127.0.0.1",
    port: 8080,
  });
  assert.deepEqual(parseEgressTarget("https://Api.Example.com/v1"), {
    host: "api.example.com",
    port: 443,
  });
  assert.deepEqual(parseEgressTarget("localhost:9"), { host: "127.0.0.1", port: 9 });
  assert.deepEqual(parseEgressTarget("[::1]:9"), { host: "::1", port: 9 });
  assert.deepEqual(parseEgressTarget("*.googleapis.com"), { host: "*.googleapis.com", port: 443 });
  assert.throws(() => parseEgressTarget("a b"), /not host\[:port\]/);
  assert.throws(() => parseEgressTarget("host:99999"), /not host\[:port\]/);
  const allow = [parseEgressTarget("127.0.0.1:8080"), parseEgressTarget("*.googleapis.com")];
  assert.ok(egressAllows(allow, "localhost", 8080));
  assert.ok(!egressAllows(allow, "127.0.0.1", 8081));
  assert.ok(egressAllows(allow, "generativelanguage.googleapis.com", 443));
  assert.ok(!egressAllows(allow, "googleapis.com", 443), "a wildcard needs a subdomain");
  assert.ok(!egressAllows(allow, "evilgoogleapis.com", 443));
});

Deno.test("egress proxy: allowed targets pass, others get 403 and are reported", async () => {
  await withTempDir(async (dir) => {
    const target = origin();
    const refused: RefusedConnection[] = [];
    const proxy = new EgressProxy({ socketDir: join(dir, "s"), onRefused: (r) => refused.push(r) });
    const channel = await proxy.open({
      session: "s1",
      allow: [parseEgressTarget(`127.0.0.1:${target.port}`)],
      transport: "unix",
    });
    try {
      const path = channel.socketPath as string;
      assert.equal(((await Deno.stat(path)).mode ?? 0) & 0o777, 0o600);
      const absolute = await exchange(
        await Deno.connect({ transport: "unix", path }),
        `GET http://127.0.0.1:${target.port}/a HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
      );
      assert.match(absolute, /^HTTP\/1\.1 200/);
      assert.match(absolute, /origin says hi/);
      const tunnel = await exchange(
        await Deno.connect({ transport: "unix", path }),
        `CONNECT localhost:${target.port} HTTP/1.1\r\n\r\n` +
          `GET /b HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
      );
      assert.match(tunnel, /^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200/);
      const denied = await exchange(
        await Deno.connect({ transport: "unix", path }),
        "CONNECT exfil.example.com:443 HTTP/1.1\r\n\r\n",
      );
      assert.match(denied, /^HTTP\/1\.1 403 Forbidden/);
      assert.match(denied, /exfil\.example\.com:443 is not on this agent's allowlist/);
      const otherPort = await exchange(
        await Deno.connect({ transport: "unix", path }),
        `GET http://127.0.0.1:${target.port + 1}/ HTTP/1.1\r\n\r\n`,
      );
      assert.match(otherPort, /^HTTP\/1\.1 403/);
      const garbage = await exchange(
        await Deno.connect({ transport: "unix", path }),
        "hello\r\n\r\n",
      );
      assert.match(garbage, /^HTTP\/1\.1 400/);
      assert.deepEqual(target.seen, ["GET /a", "GET /b"]);
      assert.deepEqual(refused, [
        {
          session: "s1",
          method: "CONNECT",
          target: "exfil.example.com:443",
          reason: "not on the agent's egress allowlist",
        },
        {
          session: "s1",
          method: "GET",
          target: `127.0.0.1:${target.port + 1}`,
          reason: "not on the agent's egress allowlist",
        },
        { session: "s1", method: "?", target: "?", reason: "not an HTTP proxy request" },
      ]);
    } finally {
      await channel.close();
      await proxy.close();
      await target.close();
    }
    await assert.rejects(Deno.stat(channel.socketPath as string), Deno.errors.NotFound);
  });
});

Deno.test("egress proxy: the agent's proxy requests go through the upstream, forwarded tunnels go direct", async () => {
  await withTempDir(async (dir) => {
    const target = origin();
    // A stand-in upstream proxy: records the first line it gets and answers for the target.
    const upstreamSeen: string[] = [];
    const upstream = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const upstreamLoop = (async () => {
      for await (const conn of upstream) {
        const buf = new Uint8Array(4096);
        const n = await conn.read(buf);
        upstreamSeen.push(new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0]);
        await conn.write(
          new TextEncoder().encode(
            "HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nupstream",
          ),
        );
        conn.close();
      }
    })().catch(() => {});
    const proxy = new EgressProxy({ socketDir: join(dir, "s"), onRefused: () => {} });
    const channel = await proxy.open({
      session: "s1",
      allow: [parseEgressTarget(`127.0.0.1:${target.port}`)],
      upstream: { host: "127.0.0.1", port: (upstream.addr as Deno.NetAddr).port },
      transport: "tcp",
    });
    try {
      const port = channel.port as number;
      const viaProxy = await exchange(
        await Deno.connect({ hostname: "127.0.0.1", port }),
        `GET http://127.0.0.1:${target.port}/c HTTP/1.1\r\nconnection: close\r\n\r\n`,
      );
      assert.match(viaProxy, /upstream$/);
      assert.deepEqual(upstreamSeen, [`GET http://127.0.0.1:${target.port}/c HTTP/1.1`]);
      const forwarded = await exchange(
        await Deno.connect({ hostname: "127.0.0.1", port }),
        `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\n${DIRECT_FORWARD_HEADER}: direct\r\n\r\n` +
          "GET /d HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
      );
      assert.match(forwarded, /origin says hi/);
      assert.deepEqual(target.seen, ["GET /d"]);
    } finally {
      await channel.close();
      await proxy.close();
      upstream.close();
      await upstreamLoop;
      await target.close();
    }
  });
});

Deno.test("egress proxy: past the per-session connection cap new connections get 503", async () => {
  await withTempDir(async (dir) => {
    const proxy = new EgressProxy({
      socketDir: join(dir, "s"),
      onRefused: () => {},
      maxConnectionsPerSession: 2,
    });
    const channel = await proxy.open({ session: "s1", allow: [], transport: "unix" });
    const path = channel.socketPath as string;
    const idle = [
      await Deno.connect({ transport: "unix", path }),
      await Deno.connect({ transport: "unix", path }),
    ];
    try {
      // The two idle connections are held (no head yet); the third is turned away at once
      // (connections are accepted in order, so the first two count before it).
      const answer = await exchange(await Deno.connect({ transport: "unix", path }), "");
      assert.match(answer, /^HTTP\/1\.1 503/);
    } finally {
      for (const c of idle) c.close();
      await channel.close();
      await proxy.close();
    }
  });
});
