// `bernstein ctx` end to end: create/use/show/list, the context layer in `config list`,
// activation recorded on the chain, bad input with stable codes, and `runs diff` naming the
// keys and layers that changed between a run without a context and a run with one.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, summaryOf } from "./_run_helpers.ts";

async function json(dir: string, args: string[]) {
  const r = await bern(dir, [...args, "--json"]);
  strictEqual(r.code, 0, r.stdout + r.stderr);
  return JSON.parse(r.stdout);
}

Deno.test("a context is created, activated atomically, shown as a configuration layer, and deactivated", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const created = await json(dir, [
      "ctx",
      "create",
      "staging",
      "--server-url",
      "http://10.0.0.5:8052",
      "--store-dsn",
      "postgres://ops:s3cret@db:5432/bern",
      "--set",
      "max_agents=2",
    ]);
    match(created.settings_hash, /^sha256:[0-9a-f]{64}$/);
    strictEqual(created.settings.storage.database_url, "postgres://ops:***@db:5432/bern");
    strictEqual(created.active, false);
    strictEqual((await json(dir, ["ctx", "show"])).context, null);
    const used = await json(dir, ["ctx", "use", "staging"]);
    strictEqual(used.active.settings_hash, created.settings_hash);
    const active = JSON.parse(
      await Deno.readTextFile(join(dir, ".sdd/fleet/contexts/active.json")),
    );
    deepStrictEqual(active, { name: "staging", settings_hash: created.settings_hash });
    const got = await json(dir, ["config", "get", "max_agents"]);
    strictEqual(got.value, 2);
    strictEqual(got.sources.max_agents, "context:staging");
    const list = await bern(dir, ["config", "list"]);
    match(list.stdout, /workers\.url\s+http:\/\/10\.0\.0\.5:8052\s+\(context:staging\)/);
    ok(!list.stdout.includes("s3cret"), list.stdout);
    strictEqual((await json(dir, ["ctx", "show"])).context.name, "staging");
    deepStrictEqual(
      (await json(dir, ["ctx", "list"])).contexts.map((
        c: { name: string; active: boolean },
      ) => [c.name, c.active]),
      [["staging", true]],
    );
    strictEqual((await bern(dir, ["ctx", "use", "--none"])).code, 0);
    strictEqual((await json(dir, ["config", "get", "max_agents"])).sources.max_agents, "default");
    // Every activation is on the chain, and the fleet pillar checks them.
    const verify = await bern(dir, ["audit", "verify"]);
    strictEqual(verify.code, 0, verify.stderr);
    match(verify.stdout, /PASS fleet: 3 record\(s\)/);
    const records = (await bern(dir, ["audit", "show", "--json"])).stdout;
    ok(!records.includes("s3cret"), "no DSN password on the chain");
  });
});

Deno.test("ctx bad input gets stable codes and exit 2", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    strictEqual((await bern(dir, ["ctx", "create", "a"])).code, 0);
    const cases: [string[], string][] = [
      [["ctx", "use", "nope"], "fleet.unknown_context"],
      [["ctx", "show", "nope"], "fleet.unknown_context"],
      [["ctx", "create", "Bad"], "fleet.bad_name"],
      [["ctx", "create", "a"], "fleet.exists"],
      [["ctx", "create", "b", "--set", "max_agents"], "fleet.bad_setting"],
      [["ctx", "create", "b", "--set", "max_agents=-3"], "fleet.bad_setting"],
      [["ctx", "create", "b", "--set", "max_agnets=3"], "config.unknown_key"],
      [["ctx", "use"], "fleet.bad_name"],
      [["ctx", "use", "a", "--none"], "fleet.bad_name"],
    ];
    for (const [args, code] of cases) {
      const r = await bern(dir, args);
      strictEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      match(r.stderr, new RegExp(`^error\\[${code.replace(".", "\\.")}\\]`), r.stderr);
    }
    deepStrictEqual(
      (await json(dir, ["ctx", "list"])).contexts.map((c: { name: string }) => c.name),
      ["a"],
    );
    // A context edited after activation stops every configuration read until re-activated.
    strictEqual((await bern(dir, ["ctx", "use", "a"])).code, 0);
    await Deno.writeTextFile(
      join(dir, ".sdd/fleet/contexts/a.json"),
      '{"name":"a","schema":"bernstein-fleet-context/v1","settings":{"max_agents":9}}',
    );
    const tampered = await bern(dir, ["config", "get", "max_agents"]);
    strictEqual(tampered.code, 2);
    match(tampered.stderr, /^error\[fleet\.context_tampered\]/);
  });
});

const PLAN = `name: drift
cli: scripted
stages:
  - name: one
    steps:
      - title: Write
        description: |
          @agent write out.txt x
`;

Deno.test("runs diff names the keys, values and layers two runs differ in, and the context as the cause", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, PLAN);
    const first = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(first.code, 0, first.stderr);
    const runA = String(summaryOf(first).run_id);
    strictEqual(
      (await bern(dir, ["ctx", "create", "tight", "--set", "tuning.agent.max_turns=7"])).code,
      0,
    );
    strictEqual((await bern(dir, ["ctx", "use", "tight"])).code, 0);
    await Deno.writeTextFile(join(dir, "plan2.yaml"), PLAN.replace("out.txt", "out2.txt"));
    const second = await bern(dir, ["run", "plan2.yaml", "--json"]);
    strictEqual(second.code, 0, second.stderr);
    const runB = String(summaryOf(second).run_id);
    const same = await bern(dir, ["runs", "diff", runA, runA, "--json"]);
    strictEqual(same.code, 0);
    const r = await bern(dir, ["runs", "diff", runA, runB, "--json"]);
    strictEqual(r.code, 1, r.stderr);
    const d = JSON.parse(r.stdout);
    strictEqual(d.same, false);
    strictEqual(d.context_differs, true);
    strictEqual(d.a.context, null);
    strictEqual(d.b.context.name, "tight");
    strictEqual(d.differences.length, 1, r.stdout);
    const [x] = d.differences;
    strictEqual(x.key, "tuning.agent.max_turns");
    deepStrictEqual([x.a.source, x.b.source, x.b.value], ["default", "context:tight", 7]);
    ok(typeof x.a.value === "number" && x.a.value !== 7);
    const text = await bern(dir, ["runs", "diff", runA, runB]);
    match(text.stdout, /tuning\.agent\.max_turns: \d+ \(default\) → 7 \(context:tight\)/);
    match(text.stdout, /cause: the operating context differs \(no context → context tight sha256:/);
    // A changed record is refused: it no longer hashes to what the chain bound.
    const record = join(dir, ".sdd/runs", runB, "config-1.json");
    await Deno.writeTextFile(
      record,
      (await Deno.readTextFile(record)).replace(
        '"tuning.agent.max_turns":7',
        '"tuning.agent.max_turns":8',
      ),
    );
    const refused = await bern(dir, ["runs", "diff", runA, runB]);
    strictEqual(refused.code, 1);
    match(refused.stderr, /fleet\.chain_damaged/);
  });
});
