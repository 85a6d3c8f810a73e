import { deepStrictEqual, match, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { AuditLog, ensureAuditKey } from "../../src/audit/mod.ts";
import {
  checkPlanConnections,
  ConnectionStore,
  ensureInstallIdentity,
  FleetError,
  RunConnections,
  verifyFleet,
} from "../../src/fleet/mod.ts";
import { mapEnv, SecretRedactor, SeededRandom } from "../../src/io/mod.ts";
import { SPINE_FILE, spineKey, verifySpine } from "../../src/lineage/mod.ts";
import { lineagePaths, spineDir } from "../../src/lineage/store/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const SECRET = "ghp_UNITsecret0123456789abc";

async function setup(dir: string, env: Record<string, string>) {
  const sdd = join(dir, ".sdd");
  await Deno.mkdir(join(sdd, "audit"), { recursive: true });
  const auditKey = await ensureAuditKey(join(dir, "audit.key"), new SeededRandom(3));
  const identity = await ensureInstallIdentity(sdd, new SeededRandom(4));
  const store = new ConnectionStore({ sdd, auditKey, random: new SeededRandom(5) });
  await store.create(identity, {
    name: "gh",
    secret: { kind: "env", name: "GH_SECRET" },
    scope: "repo:read",
    defaults: {},
  });
  const audit = new AuditLog(join(sdd, "audit"), auditKey);
  const redactor = new SecretRedactor();
  const conns = new RunConnections({
    sdd,
    runId: "run-1",
    auditKey,
    audit,
    env: mapEnv(env),
    random: new SeededRandom(6),
    redactor,
  });
  return { sdd, auditKey, identity, store, audit, redactor, conns };
}

const task = (metadata: Record<string, unknown>, parent: string | null = null) => ({
  id: "1.1-use",
  parent_task_id: parent,
  metadata,
});

Deno.test("a plan task's connection is minted into its variable, registered for redaction, pinned and recorded", async () => {
  await withTempDir(async (dir) => {
    const s = await setup(dir, { GH_SECRET: SECRET });
    deepStrictEqual(await s.conns.mint(task({}), "sess-1"), {});
    const env = await s.conns.mint(
      task({ connections: [{ name: "gh", env: "GITHUB_TOKEN" }] }),
      "sess-1",
    );
    deepStrictEqual(env, { GITHUB_TOKEN: SECRET });
    strictEqual(s.redactor.text(`x ${SECRET}`), "x [REDACTED: connection gh]");
    await s.audit.close();
    const history = await s.store.audit("gh");
    strictEqual(history.resolutions.length, 1);
    const rows = await Deno.readFile(
      join(spineDir(lineagePaths(s.sdd), "run-1"), SPINE_FILE),
    );
    const report = verifySpine(rows, undefined, {
      spine: spineKey(s.auditKey.bytes),
      audit: s.auditKey.bytes,
    });
    strictEqual(report.ok, true);
    match(report.entries.at(-1)?.step_id ?? "", /^fleet-conn:1\.1-use:gh@1$/);
    deepStrictEqual((await verifyFleet(s.sdd, s.auditKey)).violations, []);
  });
});

Deno.test("a task an agent created is never granted a connection; nothing is resolved", async () => {
  await withTempDir(async (dir) => {
    const s = await setup(dir, { GH_SECRET: SECRET });
    await rejects(
      () => s.conns.mint(task({ connections: ["gh"] }, "0.0-manager"), "sess-2"),
      (e: unknown) => e instanceof FleetError && e.code === "fleet.conn_not_granted",
    );
    await s.audit.close();
    strictEqual((await s.store.audit("gh")).resolutions.length, 0);
    strictEqual(s.redactor.size, 0);
  });
});

Deno.test("a short or unreadable secret and a malformed request are refused; refusals are audited", async () => {
  await withTempDir(async (dir) => {
    const s = await setup(dir, { GH_SECRET: "short" });
    await rejects(
      () => s.conns.mint(task({ connections: ["gh"] }), "sess-3"),
      (e: unknown) => e instanceof FleetError && e.code === "fleet.secret_too_short",
    );
    await rejects(
      () => s.conns.mint(task({ connections: [{ name: "gh", env: "PATH" }] }), "sess-3"),
      (e: unknown) =>
        e instanceof FleetError && e.code === "fleet.bad_reference" && /reserved/.test(e.message),
    );
    await rejects(
      () => s.conns.mint(task({ connections: "gh" }), "sess-3"),
      (e: unknown) => e instanceof FleetError && e.code === "fleet.bad_reference",
    );
    await s.audit.close();
    const h = await s.store.audit("gh");
    strictEqual(h.refusals.length, 1);
    strictEqual(h.resolutions.length, 0);
    strictEqual(s.redactor.size, 0);
  });
});

Deno.test("the next mint after a rotation reads the new secret, with no change to the task", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "secret-v2");
    await Deno.writeTextFile(file, `${SECRET}-v2\n`);
    const s = await setup(dir, { GH_SECRET: SECRET });
    const t = task({ connections: ["gh"] });
    deepStrictEqual(await s.conns.mint(t, "a1"), { BERNSTEIN_CONN_GH: SECRET });
    await s.store.rotate(s.identity, "gh", { secret: { kind: "file", path: file } });
    deepStrictEqual(await s.conns.mint(t, "a2"), { BERNSTEIN_CONN_GH: `${SECRET}-v2` });
    await s.audit.close();
    deepStrictEqual((await s.store.audit("gh")).resolutions.map((r) => r.version), [1, 2]);
    deepStrictEqual(s.redactor.secrets().map((x) => x.value), [SECRET, `${SECRET}-v2`]);
  });
});

Deno.test("a plan asking for a connection that does not exist is refused at run start", async () => {
  await withTempDir(async (dir) => {
    const s = await setup(dir, { GH_SECRET: SECRET });
    await s.audit.close();
    const env = mapEnv({ BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key") });
    const ok = await checkPlanConnections(s.sdd, [{
      title: "a",
      metadata: { connections: ["gh"] },
    }], env);
    deepStrictEqual(ok.map((r) => r.name), ["gh"]);
    await rejects(
      () => checkPlanConnections(s.sdd, [{ title: "b", metadata: { connections: ["nope"] } }], env),
      (e: unknown) =>
        e instanceof FleetError && e.code === "fleet.unknown_name" &&
        /step 'b'.*'nope'/.test(e.message) &&
        /known: gh/.test(e.hint ?? ""),
    );
  });
});
