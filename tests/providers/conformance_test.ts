// The conformance subset of `doctor --endpoint` against the project's own model servers, in
// each of the four wire formats: a capable model grades expert; one that answers a forced tool
// with text grades basic; a server that is down, one that answers 429 to everything, and one
// that accepts the connection and never answers grade none (the last within the timeout).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  type ConformanceTarget,
  fetchHttp,
  probeEndpoint,
  runConformance,
  type WireApi,
} from "../../src/providers/mod.ts";
import { startModelServer } from "../e2e/model_servers/mod.ts";

const OPTIONS = { latencyRequests: 3, contextMaxTokens: 32768 };

function target(origin: string, api: WireApi, timeoutMs = 30_000): ConformanceTarget {
  const v1 = api === "openai-chat" || api === "openai-responses";
  return { base_url: v1 ? `${origin}/v1` : origin, api, model: "fake-model", key: "k", timeoutMs };
}

const APIS: WireApi[] = ["openai-chat", "openai-responses", "anthropic", "gemini"];

for (const api of APIS) {
  Deno.test(`conformance (${api}): a capable model passes every check and grades expert`, async () => {
    const server = startModelServer({ conformance: { tools: "obey", contextTokens: 65536 } });
    try {
      const report = await runConformance(fetchHttp, target(server.origin, api), OPTIONS);
      deepStrictEqual(
        report.checks.map((c) => [c.name, c.ok]),
        [
          ["completion", true],
          ["streaming", true],
          ["tool_call", true],
          ["tool_round_trip", true],
          ["json_only", true],
          ["context_length", true],
          ["latency", true],
        ],
        JSON.stringify(report.checks),
      );
      strictEqual(report.grade, "expert");
      deepStrictEqual(report.context_tokens, { claimed: 65536, sent: 32512, ok: true });
      strictEqual(report.latency_ms.n, 3);
      ok(
        report.latency_ms.p50 <= report.latency_ms.p95 &&
          report.latency_ms.p95 <= report.latency_ms.max,
      );
      deepStrictEqual(server.problems, []);
      // The forced tool and the key reached the server as the API writes them.
      const forced = server.requests.find((r) => r.answer === "call add_numbers (forced)");
      ok(forced, server.requests.map((r) => r.answer).join(", "));
    } finally {
      await server.close();
    }
  });
}

Deno.test("conformance: a model that answers a forced tool with text is graded down to basic", async () => {
  const server = startModelServer({ conformance: { tools: "ignore", contextTokens: 65536 } });
  try {
    const report = await runConformance(fetchHttp, target(server.origin, "openai-chat"), OPTIONS);
    const toolCall = report.checks.find((c) => c.name === "tool_call");
    deepStrictEqual([toolCall?.ok, toolCall?.detail], [false, "no tool call (answered text)"]);
    strictEqual(report.grade, "basic");
  } finally {
    await server.close();
  }
});

Deno.test("conformance: a small claimed context caps the grade at advanced; no claim sends the documented default", async () => {
  const small = startModelServer({ conformance: { tools: "obey", contextTokens: 4096 } });
  const unclaimed = startModelServer({ conformance: { tools: "obey" } });
  try {
    const a = await runConformance(fetchHttp, target(small.origin, "anthropic"), OPTIONS);
    deepStrictEqual([a.grade, a.context_tokens], ["advanced", {
      claimed: 4096,
      sent: 3840,
      ok: true,
    }]);
    const b = await runConformance(fetchHttp, target(unclaimed.origin, "openai-chat"), OPTIONS);
    deepStrictEqual([b.grade, b.context_tokens], ["advanced", {
      claimed: null,
      sent: 7936,
      ok: true,
    }]);
  } finally {
    await small.close();
    await unclaimed.close();
  }
});

Deno.test("conformance: a server whose context claim is a lie fails the context check", async () => {
  // Claims 65536 in the model list, refuses past ~4096: the check sends what it claims.
  const server = startModelServer({ conformance: { tools: "obey", contextTokens: 4096 } });
  const lying = {
    ...target(server.origin, "openai-chat"),
  };
  try {
    const http: typeof fetchHttp = async (req) => {
      const res = await fetchHttp(req);
      return req.method === "GET" ? { ...res, body: res.body.replace("4096", "65536") } : res;
    };
    const report = await runConformance(http, lying, OPTIONS);
    const check = report.checks.find((c) => c.name === "context_length");
    strictEqual(check?.ok, false);
    ok(check?.detail.includes("HTTP 400"), check?.detail);
    strictEqual(report.grade, "advanced");
  } finally {
    await server.close();
  }
});

function deadOrigin(): Promise<string> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return Promise.resolve(`http://127.0.0.1:${port}`);
}

Deno.test("conformance: a server that is down grades none, every other check skipped with the reason", async () => {
  const report = await runConformance(
    fetchHttp,
    target(await deadOrigin(), "openai-chat"),
    OPTIONS,
  );
  strictEqual(report.grade, "none");
  ok(report.checks[0].detail.startsWith("unreachable"), report.checks[0].detail);
  ok(report.checks.slice(1).every((c) => !c.ok && c.detail.startsWith("skipped: unreachable")));
});

Deno.test("conformance: a server answering 429 to everything grades none and says so", async () => {
  const server = startModelServer({ failAll: 429 });
  try {
    const report = await runConformance(fetchHttp, target(server.origin, "openai-chat"), OPTIONS);
    strictEqual(report.grade, "none");
    ok(report.checks.every((c) => !c.ok));
    ok(report.checks[0].detail.startsWith("HTTP 429"), report.checks[0].detail);
  } finally {
    await server.close();
  }
});

/** A server that accepts connections and never answers (a hung model server). */
function silentServer(): { origin: string; accepted: Promise<void>; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  let signal!: () => void;
  const accepted = new Promise<void>((r) => (signal = r));
  (async () => {
    try {
      for await (const conn of listener) {
        conns.push(conn);
        signal();
      }
    } catch {
      // closed
    }
  })();
  return {
    origin: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    accepted,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
    },
  };
}

Deno.test("conformance and probes: a server that never answers fails within the timeout, as a timeout", async () => {
  const silent = silentServer();
  try {
    const report = await runConformance(
      fetchHttp,
      target(silent.origin, "openai-chat", 300),
      OPTIONS,
    );
    strictEqual(report.grade, "none");
    strictEqual(report.checks[0].detail, "no complete answer within 0.3s");
    const probe = await probeEndpoint(fetchHttp, {
      api: "openai-chat",
      base_url: `${silent.origin}/v1`,
      model: "m",
      key: "k",
      timeoutMs: 300,
    });
    deepStrictEqual([probe.status, probe.healthy], ["timeout", false]);
  } finally {
    silent.close();
  }
});

Deno.test("probes: healthy, rate limited, server error, unreachable — one GET, no model call", async () => {
  const good = startModelServer();
  const limited = startModelServer({ failAll: 429 });
  const broken = startModelServer({ failAll: 503 });
  try {
    const probe = (origin: string, api: WireApi = "openai-chat") =>
      probeEndpoint(fetchHttp, { ...target(origin, api), timeoutMs: 5000 });
    deepStrictEqual((await probe(good.origin)).status, "healthy");
    deepStrictEqual((await probe(good.origin, "gemini")).status, "healthy");
    deepStrictEqual((await probe(limited.origin)).status, "rate_limited");
    deepStrictEqual((await probe(broken.origin)).status, "server_error");
    deepStrictEqual((await probe(await deadOrigin())).status, "unreachable");
    deepStrictEqual(good.requests.map((r) => [r.method, r.path]), [
      ["GET", "/v1/models"],
      ["GET", "/v1beta/models/fake-model"],
    ]);
    strictEqual(good.requests[0].headers.authorization, "Bearer k");
  } finally {
    await good.close();
    await limited.close();
    await broken.close();
  }
});
