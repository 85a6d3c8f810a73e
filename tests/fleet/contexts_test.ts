import { deepStrictEqual, notStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { BernsteinError } from "../../src/errors/mod.ts";
import { join } from "node:path";
import { appendAuditEvent, ensureAuditKey } from "../../src/audit/mod.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { mapEnv, SeededRandom } from "../../src/io/mod.ts";
import { contextSettings, ContextStore, FleetError, verifyFleet } from "../../src/fleet/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function setup(dir: string, seed = 3) {
  const sdd = join(dir, ".sdd");
  await Deno.mkdir(join(sdd, "audit"), { recursive: true });
  const auditKey = await ensureAuditKey(join(dir, "audit.key"), new SeededRandom(seed));
  return { sdd, auditKey, contexts: new ContextStore({ sdd, auditKey }) };
}

const env = mapEnv({});

Deno.test("settings come from the flags as configuration keys; bad keys and values are refused", async () => {
  deepStrictEqual(
    await contextSettings({
      serverUrl: "http://h:1",
      storeDsn: "postgres://db/x",
      set: ["max_agents=2"],
    }),
    { workers: { url: "http://h:1" }, storage: { database_url: "postgres://db/x" }, max_agents: 2 },
  );
  await rejects(
    () => contextSettings({ set: ["max_agents"] }),
    (e: FleetError) => e.code === "fleet.bad_setting",
  );
  await rejects(
    () => contextSettings({ set: ["max_agents=-1"] }),
    (e: FleetError) => e.code === "fleet.bad_setting",
  );
  await rejects(
    () => contextSettings({ set: ["max_agnets=1"] }),
    (e: BernsteinError) =>
      e.code === "config.unknown_key" && e.hint === "did you mean 'max_agents'?",
  );
});

Deno.test("an active context is one layer between .sdd/config.yaml and bernstein.yaml; --none removes it", async () => {
  await withTempDir(async (dir) => {
    const { sdd, contexts } = await setup(dir);
    await Deno.writeTextFile(join(sdd, "config.yaml"), "max_agents: 3\ncli: scripted\n");
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "cli: claude\n");
    await contexts.create("staging", await contextSettings({ set: ["max_agents=2", "cli=codex"] }));
    const before = await loadConfig({ cwd: dir, env });
    strictEqual(before.config?.max_agents, 3);
    strictEqual(before.context, null);
    await contexts.use("staging");
    const during = await loadConfig({ cwd: dir, env });
    strictEqual(during.config?.max_agents, 2);
    strictEqual(during.sources.get("max_agents"), "context:staging");
    // The project file still wins over the context.
    strictEqual(during.config?.cli, "claude");
    strictEqual(during.context?.name, "staging");
    deepStrictEqual(
      during.sourceFiles.map((s) => s.label).slice(0, 2),
      [".sdd/config.yaml", "context:staging"],
    );
    await contexts.use(null);
    strictEqual((await loadConfig({ cwd: dir, env })).config?.max_agents, 3);
    await rejects(
      () => contexts.use("nope"),
      (e: FleetError) => e.code === "fleet.unknown_context",
    );
  });
});

Deno.test("two installs with identical context content write identical documents and hashes", async () => {
  await withTempDir(async (a) => {
    await withTempDir(async (b) => {
      const one = await setup(a, 1);
      const two = await setup(b, 2);
      const v1 = await one.contexts.create(
        "prod",
        await contextSettings({ set: ["max_agents=8", "cli=claude"] }),
      );
      const v2 = await two.contexts.create(
        "prod",
        await contextSettings({ set: ["cli=claude", "max_agents=8"] }),
      );
      strictEqual(v1.settings_hash, v2.settings_hash);
      deepStrictEqual(
        await Deno.readFile(join(a, ".sdd/fleet/contexts/prod.json")),
        await Deno.readFile(join(b, ".sdd/fleet/contexts/prod.json")),
      );
      const v3 = await two.contexts.create(
        "prod",
        await contextSettings({ set: ["max_agents=9"] }),
        {
          replace: true,
        },
      );
      notStrictEqual(v3.settings_hash, v1.settings_hash);
    });
  });
});

Deno.test("a context edited after activation refuses to load; replacing the active one re-activates it", async () => {
  await withTempDir(async (dir) => {
    const { contexts } = await setup(dir);
    await contexts.create("c", await contextSettings({ set: ["max_agents=2"] }));
    await contexts.use("c");
    await rejects(() => contexts.create("c", {}), (e: FleetError) => e.code === "fleet.exists");
    const replaced = await contexts.create("c", await contextSettings({ set: ["max_agents=5"] }), {
      replace: true,
    });
    strictEqual(replaced.active, true);
    strictEqual((await loadConfig({ cwd: dir, env })).config?.max_agents, 5);
    const path = join(dir, ".sdd/fleet/contexts/c.json");
    await Deno.writeTextFile(path, (await Deno.readTextFile(path)).replace("5", "6"));
    await rejects(() => loadConfig({ cwd: dir, env }), /context 'c' hashes to sha256:/);
  });
});

Deno.test("an activation of a context version the chain never created is a fleet violation", async () => {
  await withTempDir(async (dir) => {
    const { sdd, auditKey, contexts } = await setup(dir);
    await contexts.create("c", await contextSettings({ set: ["max_agents=2"] }));
    await contexts.use("c");
    await contexts.use(null);
    deepStrictEqual((await verifyFleet(sdd, auditKey)).violations, []);
    await appendAuditEvent(join(sdd, "audit"), auditKey, {
      actor: "operator",
      event_type: "fleet.context_activate",
      resource_type: "fleet_context",
      resource_id: "c",
      details: { name: "c", settings_hash: `sha256:${"0".repeat(64)}` },
    });
    const report = await verifyFleet(sdd, auditKey);
    deepStrictEqual(report.violations.map((v) => v.code), ["fleet.context_unknown"]);
  });
});
