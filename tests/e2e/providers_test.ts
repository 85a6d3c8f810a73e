// The provider layer through the whole binary (docs/PROVIDERS.md): `doctor --endpoint`
// certifies the project's own model servers (a capable one, one failing tool calls, one that is
// down) and writes signed receipts; `config validate` and `run` gate merge-critical roles on
// them (missing, tampered, stale, graded too low); `provider_availability` chains route around
// a 429 server and a dead one and fail over when an attempt hits a provider error; the model
// ladder escalates on evidence only; `doctor --failover-drill` reports each role's element.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, eventsOf, prepareRepo, step, summaryOf } from "./_run_helpers.ts";
import { startModelServer } from "./model_servers/mod.ts";

const PLAN = `cli: scripted
stages:
  - name: s
    steps:
${step("Write", ["@agent write a.txt a"], "        role: backend\n")}
`;

function endpointConfig(origin: string, extra: Record<string, unknown> = {}) {
  return {
    local_endpoints: {
      workhorse: { base_url: `${origin}/v1`, model: "fake-model", engine: "fake-engine" },
    },
    role_model_policy: {
      backend: { endpoint: "workhorse" },
      linter: { endpoint: "workhorse" },
    },
    ...extra,
  };
}

function deadOrigin(): Promise<string> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return Promise.resolve(`http://127.0.0.1:${port}`);
}

async function auditOf(dir: string): Promise<Record<string, unknown>[]> {
  const audit = join(dir, ".sdd", "audit");
  const out: Record<string, unknown>[] = [];
  const names = (await Array.fromAsync(Deno.readDir(audit))).map((e) => e.name)
    .filter((n) => n.endsWith(".jsonl")).sort();
  for (const n of names) {
    for (const line of (await Deno.readTextFile(join(audit, n))).split("\n")) {
      if (line.startsWith("{")) out.push(JSON.parse(line));
    }
  }
  return out;
}

Deno.test("doctor --endpoint certifies a capable server (expert, signed receipt) and unlocks the merge-critical role", async () => {
  const server = startModelServer({ conformance: { tools: "obey", contextTokens: 65536 } });
  try {
    await withTempDir(async (dir) => {
      await prepareRepo(dir, PLAN, endpointConfig(server.origin));
      // Before: the gated role is refused with the exact command; the low-stakes one is not.
      const before = await bern(dir, ["config", "validate"]);
      strictEqual(before.code, 1, before.stderr);
      ok(before.stderr.includes("error[config.endpoint_uncertified]"), before.stderr);
      ok(before.stderr.includes("role_model_policy.backend.endpoint"), before.stderr);
      ok(before.stderr.includes("run: bernstein doctor --endpoint workhorse"), before.stderr);
      ok(!before.stderr.includes("role_model_policy.linter"), before.stderr);
      const dry = await bern(dir, ["run", "plan.yaml", "--dry-run"]);
      strictEqual(dry.code, 2, dry.stderr);
      ok(dry.stderr.includes("config.endpoint_uncertified"), dry.stderr);

      const doctor = await bern(dir, ["doctor", "--endpoint", "workhorse", "--json"]);
      strictEqual(doctor.code, 0, doctor.stderr);
      const report = JSON.parse(doctor.stdout);
      deepStrictEqual(
        [report.grade, report.gated_roles, report.engine, report.model],
        ["expert", true, "fake-engine", "fake-model"],
      );
      strictEqual(report.receipt, join(dir, ".sdd", "endpoints", "workhorse.receipt.json"));
      const receipt = JSON.parse(await Deno.readTextFile(report.receipt));
      deepStrictEqual(Object.keys(receipt).sort(), [
        "api",
        "bernstein",
        "certified_at",
        "checks",
        "context_tokens",
        "endpoint",
        "engine",
        "grade",
        "latency_ms",
        "model",
        "name",
        "schema",
        "signature",
        "signer",
      ]);
      strictEqual(receipt.checks.length, 7);
      const after = await bern(dir, ["config", "validate"]);
      strictEqual(after.code, 0, after.stderr);

      // Tampered: the grade edited by hand.
      await Deno.writeTextFile(
        report.receipt,
        JSON.stringify({ ...receipt, grade: "expert", model: "other" }),
      );
      const tampered = await bern(dir, ["config", "validate"]);
      strictEqual(tampered.code, 1);
      ok(tampered.stderr.includes("receipt.bad_signature"), tampered.stderr);
      await Deno.writeTextFile(report.receipt, JSON.stringify(receipt));

      // Stale: older than the configured age.
      await Deno.writeTextFile(
        join(dir, "bernstein.yaml"),
        "tuning:\n  providers:\n    receipt_max_age_days: 0.000001\n",
      );
      const stale = await bern(dir, ["run", "plan.yaml", "--dry-run"]);
      strictEqual(stale.code, 2, stale.stderr);
      ok(stale.stderr.includes("receipt.stale"), stale.stderr);
      await Deno.remove(join(dir, "bernstein.yaml"));

      // Another engine behind the same URL makes the receipt stale too.
      await Deno.writeTextFile(
        join(dir, "bernstein.yaml"),
        "local_endpoints:\n  workhorse:\n    base_url: " + server.origin +
          "/v1\n    model: fake-model\n    engine: vllm\n",
      );
      const engine = await bern(dir, ["config", "validate"]);
      ok(engine.stderr.includes("receipt.engine_mismatch"), engine.stderr);
    });
  } finally {
    await server.close();
  }
});

Deno.test("doctor --endpoint grades a server that fails tool calls basic: low-stakes roles only", async () => {
  const server = startModelServer({ conformance: { tools: "ignore", contextTokens: 65536 } });
  try {
    await withTempDir(async (dir) => {
      await prepareRepo(dir, PLAN, endpointConfig(server.origin));
      const doctor = await bern(dir, ["doctor", "--endpoint", "workhorse"]);
      strictEqual(doctor.code, 0, doctor.stderr);
      ok(/FAIL\s+tool_call\s+\d+ ms\s+no tool call/.test(doctor.stdout), doctor.stdout);
      ok(
        doctor.stdout.includes(
          "grade: basic — good for low-stakes roles only (merge-critical roles need advanced)",
        ),
        doctor.stdout,
      );
      const validate = await bern(dir, ["config", "validate"]);
      strictEqual(validate.code, 1);
      ok(validate.stderr.includes("error[config.endpoint_receipt_refused]"), validate.stderr);
      ok(validate.stderr.includes("graded basic; this role needs advanced"), validate.stderr);
      ok(validate.stderr.includes("run: bernstein doctor --endpoint workhorse"), validate.stderr);
    });
  } finally {
    await server.close();
  }
});

Deno.test("doctor --endpoint on a server that is down: grade none, exit 1, the receipt says why", async () => {
  await withTempDir(async (dir) => {
    const origin = await deadOrigin();
    await prepareRepo(dir, PLAN, endpointConfig(origin));
    // By URL: the profile with that base URL names the receipt.
    const doctor = await bern(dir, [
      "doctor",
      "--endpoint",
      `${origin}/v1`,
      "--model",
      "fake-model",
      "--json",
    ]);
    strictEqual(doctor.code, 1, doctor.stderr);
    const report = JSON.parse(doctor.stdout);
    deepStrictEqual([report.name, report.grade, report.ok], ["workhorse", "none", false]);
    ok(report.checks[0].detail.startsWith("unreachable"), report.checks[0].detail);
    // A URL no profile uses needs a name; a bad --api is a usage error.
    const unnamed = await bern(dir, [
      "doctor",
      "--endpoint",
      "http://127.0.0.1:9/v1",
      "--model",
      "m",
    ]);
    strictEqual(unnamed.code, 2);
    ok(unnamed.stderr.includes("--name"), unnamed.stderr);
    const api = await bern(dir, ["doctor", "--endpoint", "workhorse", "--api", "grpc"]);
    strictEqual(api.code, 2);
    ok(api.stderr.includes("--api grpc"), api.stderr);
    const stray = await bern(dir, ["doctor", "--model", "m"]);
    strictEqual(stray.code, 2);
  });
});

Deno.test("an api_key_env that is a literal key is refused at its key", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, PLAN, {
      local_endpoints: { w: { base_url: "http://127.0.0.1:1/v1", api_key_env: "sk-proj-abc123" } },
    });
    const validate = await bern(dir, ["config", "validate"]);
    strictEqual(validate.code, 1);
    ok(validate.stderr.includes("local_endpoints.w.api_key_env"), validate.stderr);
    ok(validate.stderr.includes("never the key itself"), validate.stderr);
  });
});

function chainPlan(lines: string[], role = "test_writer"): string {
  return `cli: scripted
stages:
  - name: s
    steps:
${step("Write", lines, `        role: ${role}\n`)}
`;
}

function chainConfig(primary: string, backup: string, extra: Record<string, unknown> = {}) {
  return {
    local_endpoints: {
      primary: { base_url: `${primary}/v1`, model: "primary-model" },
      backup: { base_url: `${backup}/v1`, model: "backup-model" },
    },
    provider_availability: {
      probe_ttl_minutes: 5,
      roles: {
        test_writer: {
          conformance_floor: "basic",
          chain: [
            {
              adapter: "scripted",
              model: "primary-model",
              conformance: "advanced",
              endpoint: "primary",
            },
            {
              adapter: "scripted",
              model: "backup-model",
              conformance: "basic",
              endpoint: "backup",
            },
          ],
        },
      },
    },
    ...extra,
  };
}

Deno.test("a chain routes around a primary answering 429 and records the routing receipt", async () => {
  const limited = startModelServer({ failAll: 429 });
  const backup = startModelServer();
  try {
    await withTempDir(async (dir) => {
      await prepareRepo(
        dir,
        chainPlan(["@agent write a.txt a"]),
        chainConfig(limited.origin, backup.origin),
      );
      const run = await bern(dir, ["run", "plan.yaml", "--json"]);
      strictEqual(run.code, 0, run.stderr + run.stdout);
      const spawned = eventsOf(run).filter((e) => e.type === "task.spawned");
      deepStrictEqual(spawned.map((e) => [e.model, e.provider]), [
        ["backup-model", `endpoint backup (${backup.origin}/v1)`],
      ]);
      const receipts = (await auditOf(dir)).filter((e) => e.event_type === "routing.receipt");
      strictEqual(receipts.length, 1);
      const details = receipts[0].details as Record<string, unknown>;
      deepStrictEqual(
        [
          details.reason,
          details.chosen,
          (details.probes as { status: string }[]).map((p) => p.status),
        ],
        ["failover", 1, ["rate_limited", "healthy"]],
      );
      ok(String(details.decision_hash).startsWith("sha256:"));
      // Probes asked the model list only: no model call reached either server.
      deepStrictEqual(limited.requests.map((r) => r.path), ["/v1/models"]);
      deepStrictEqual(backup.requests.map((r) => r.path), ["/v1/models"]);
      // The ledger row of the attempt names provider and model; so does the summary.
      const runId = String(summaryOf(run).run_id);
      const rows = (await Deno.readTextFile(
        join(dir, ".sdd", "runtime", "ledger", runId, "000000.jsonl"),
      )).trim().split("\n").map((l) => JSON.parse(l));
      const started = rows.find((r) => r.kind === "task.started");
      deepStrictEqual([started?.payload?.model, started?.payload?.provider], [
        "backup-model",
        `endpoint backup (${backup.origin}/v1)`,
      ]);
      const costs = JSON.stringify(summaryOf(run));
      ok(costs.includes('"model":"backup-model"'), costs);
    });
  } finally {
    await limited.close();
    await backup.close();
  }
});

Deno.test("an attempt that fails on a provider error is retried on the next element, never escalated", async () => {
  const primary = startModelServer();
  const backup = startModelServer();
  try {
    await withTempDir(async (dir) => {
      await prepareRepo(
        dir,
        chainPlan([
          "@agent fail-on-model primary-model API Error: 503 Service Unavailable (overloaded)",
          "@agent write a.txt a",
        ]),
        chainConfig(primary.origin, backup.origin, {
          tuning: { tasks: { default_max_retries: 1 } },
          role_model_policy: { test_writer: { ladder: [{ model: "bigger-model" }] } },
        }),
      );
      const run = await bern(dir, ["run", "plan.yaml", "--json"]);
      strictEqual(run.code, 0, run.stderr + run.stdout);
      const events = eventsOf(run);
      deepStrictEqual(events.filter((e) => e.type === "task.spawned").map((e) => e.model), [
        "primary-model",
        "backup-model",
      ]);
      strictEqual(events.filter((e) => e.type === "model.escalated").length, 0);
      const receipts = (await auditOf(dir)).filter((e) => e.event_type === "routing.receipt")
        .map((e) => e.details as Record<string, unknown>);
      deepStrictEqual(receipts.map((d) => [d.reason, d.chosen, d.excluded]), [
        ["primary_healthy", 0, []],
        ["failover", 1, [0]],
      ]);
      deepStrictEqual(
        (receipts[1].probes as { status: string }[]).map((p) => p.status),
        ["failed_attempt", "healthy"],
      );
      // The summary names each attempt's provider and model, in order; so does the closing text.
      const attempts = summaryOf(run).attempts as Record<string, unknown>[];
      deepStrictEqual(attempts.map((a) => [a.adapter, a.model, a.provider, a.ok]), [
        ["scripted", "primary-model", `endpoint primary (${primary.origin}/v1)`, false],
        ["scripted", "backup-model", `endpoint backup (${backup.origin}/v1)`, true],
      ]);
    });
  } finally {
    await primary.close();
    await backup.close();
  }
});

Deno.test("no healthy element (one server down, one 429): the task is refused loudly, not dispatched", async () => {
  const limited = startModelServer({ failAll: 429 });
  try {
    await withTempDir(async (dir) => {
      await prepareRepo(
        dir,
        chainPlan(["@agent write a.txt a"]),
        chainConfig(await deadOrigin(), limited.origin),
      );
      const run = await bern(dir, ["run", "plan.yaml", "--json"]);
      strictEqual(run.code, 1, run.stderr + run.stdout);
      const failed = eventsOf(run).filter((e) => e.type === "task.failed");
      strictEqual(failed.length, 1);
      ok(
        String(failed[0].reason).startsWith("no healthy provider for role test_writer"),
        String(failed[0].reason),
      );
      ok(
        String(failed[0].reason).includes("unreachable") &&
          String(failed[0].reason).includes("rate_limited"),
      );
      strictEqual(eventsOf(run).filter((e) => e.type === "task.spawned").length, 0);
      strictEqual(summaryOf(run).health, "UNHEALTHY");
    });
  } finally {
    await limited.close();
  }
});

Deno.test("doctor --failover-drill walks every chain: which element each role gets, exit 1 without one", async () => {
  const limited = startModelServer({ failAll: 429 });
  const good = startModelServer();
  try {
    await withTempDir(async (dir) => {
      const dead = await deadOrigin();
      await prepareRepo(dir, PLAN, {
        local_endpoints: {
          dead: { base_url: `${dead}/v1` },
          limited: { base_url: `${limited.origin}/v1` },
          good: { base_url: `${good.origin}/v1` },
        },
        provider_availability: {
          probes_enabled: false,
          roles: {
            test_writer: {
              conformance_floor: "basic",
              chain: [
                { adapter: "scripted", model: "a", conformance: "basic", endpoint: "dead" },
                { adapter: "scripted", model: "b", conformance: "basic", endpoint: "good" },
              ],
            },
          },
        },
      });
      const drill = await bern(dir, ["doctor", "--failover-drill", "--json"]);
      strictEqual(drill.code, 0, drill.stderr);
      const out = JSON.parse(drill.stdout);
      deepStrictEqual(
        out.roles.map((r: Record<string, unknown>) => [r.role, r.chosen, r.on_primary_failure]),
        [["test_writer", 1, 1]],
      );
      deepStrictEqual(out.roles[0].probes.map((p: { status: string }) => p.status), [
        "unreachable",
        "healthy",
      ]);

      await Deno.writeTextFile(
        join(dir, "bernstein.yaml"),
        "provider_availability:\n  roles:\n    linter:\n      conformance_floor: basic\n      chain:\n" +
          "        - {adapter: scripted, conformance: basic, endpoint: limited}\n" +
          "        - {adapter: scripted, conformance: basic, endpoint: dead}\n",
      );
      const red = await bern(dir, ["doctor", "--failover-drill"]);
      strictEqual(red.code, 1, red.stdout + red.stderr);
      ok(red.stdout.includes("gets: NONE"), red.stdout);
      ok(red.stdout.includes("rate_limited"), red.stdout);
    });
  } finally {
    await limited.close();
    await good.close();
  }
});

function ladderPlan(reason: string): string {
  return `cli: scripted
stages:
  - name: s
    steps:
${
    step(
      "Refactor",
      [`@agent fail-on-model small-model ${reason}`, "@agent write a.txt a"],
      "        role: backend\n",
    )
  }
`;
}

Deno.test("the model ladder escalates on evidence (the agent's own failure), audited with it", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, ladderPlan("I could not finish the refactor"), {
      tuning: { tasks: { default_max_retries: 2 } },
      role_model_policy: { backend: { model: "small-model", ladder: [{ model: "big-model" }] } },
    });
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    const events = eventsOf(run);
    deepStrictEqual(events.filter((e) => e.type === "task.spawned").map((e) => e.model), [
      "small-model",
      "big-model",
    ]);
    const escalated = (await auditOf(dir)).filter((e) => e.event_type === "model.escalated");
    strictEqual(escalated.length, 1);
    const d = escalated[0].details as Record<string, unknown>;
    deepStrictEqual([d.from_step, d.to_step, d.evidence], [0, 1, "agent-failed"]);
    ok(String(d.detail).includes("could not finish the refactor"));
  });
});

Deno.test("infrastructure and provider failures retry on the same rung: a rate limit never escalates", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, ladderPlan("429 Too Many Requests: rate limit reached"), {
      tuning: { tasks: { default_max_retries: 1 }, spawn: { rate_limit_cooldown_s: 0 } },
      role_model_policy: { backend: { model: "small-model", ladder: [{ model: "big-model" }] } },
    });
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1, run.stderr + run.stdout);
    const events = eventsOf(run);
    deepStrictEqual(events.filter((e) => e.type === "task.spawned").map((e) => e.model), [
      "small-model",
      "small-model",
    ]);
    strictEqual((await auditOf(dir)).filter((e) => e.event_type === "model.escalated").length, 0);
  });
});

Deno.test("an endpoint's timeout is enforced by the watchdog: a silent agent is stopped, a provider failure", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, chainPlan(["@agent hang"], "linter"), {
      local_endpoints: { slow: { base_url: "http://127.0.0.1:9/v1", model: "m", timeout: 2 } },
      role_model_policy: { linter: { endpoint: "slow", ladder: [{ model: "bigger" }] } },
      tuning: { tasks: { default_max_retries: 1 } },
    });
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1, run.stderr + run.stdout);
    const events = eventsOf(run);
    const failed = events.filter((e) => e.type === "task.failed").map((e) => String(e.reason));
    deepStrictEqual(failed, [
      "endpoint timeout: no answer from the model for 2s (local_endpoints timeout); request timed out",
      "endpoint timeout: no answer from the model for 2s (local_endpoints timeout); request timed out",
    ]);
    // A timeout is not evidence: both attempts on the same rung.
    deepStrictEqual(events.filter((e) => e.type === "task.spawned").map((e) => e.model), [
      "m",
      "m",
    ]);
  });
});

Deno.test("a hostile agent cannot certify an endpoint: a receipt it writes never reaches .sdd/endpoints/", async () => {
  await withTempDir(async (dir) => {
    const forged = JSON.stringify({
      schema: "bernstein.endpoint-receipt/1",
      name: "workhorse",
      grade: "expert",
    });
    await prepareRepo(
      dir,
      chainPlan([
        `@agent write .sdd/endpoints/workhorse.receipt.json ${forged}`,
        "@agent write a.txt a",
      ], "linter"),
      {
        local_endpoints: { workhorse: { base_url: "http://127.0.0.1:9/v1", model: "m" } },
        role_model_policy: { linter: { endpoint: "workhorse" } },
      },
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1, run.stderr + run.stdout);
    const receipt = join(dir, ".sdd", "endpoints", "workhorse.receipt.json");
    strictEqual(await Deno.stat(receipt).then(() => true, () => false), false);
    await Deno.writeTextFile(
      join(dir, "bernstein.yaml"),
      "role_model_policy:\n  backend: {endpoint: workhorse}\n",
    );
    const validate = await bern(dir, ["config", "validate"]);
    strictEqual(validate.code, 1);
    ok(validate.stderr.includes("[receipt.missing]"), validate.stderr);
  });
});
