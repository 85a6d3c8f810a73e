// Fleet files read back from .sdd/ are checked field by field, not cast: a run configuration
// record or a connection file of the wrong shape is refused with its code, naming the file and
// the field.
import { equal, match, rejects } from "node:assert/strict";
import { join } from "node:path";
import { AuditLog, ensureAuditKey } from "../../src/audit/mod.ts";
import {
  ConnectionStore,
  ensureInstallIdentity,
  FleetError,
  readRunConfig,
  recordRunConfig,
  runConfigRecord,
} from "../../src/fleet/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function project(dir: string) {
  const sdd = join(dir, ".sdd");
  await Deno.mkdir(join(sdd, "audit"), { recursive: true });
  const auditKey = await ensureAuditKey(join(dir, "audit.key"), new SeededRandom(3));
  return { sdd, auditKey, audit: new AuditLog(join(sdd, "audit"), auditKey) };
}

Deno.test("a run configuration record reads back; one of another shape is fleet.record_invalid naming the field", async () => {
  await withTempDir(async (dir) => {
    const { sdd, auditKey, audit } = await project(dir);
    const good = runConfigRecord({
      runId: "run-1",
      attempt: 1,
      config: { max_agents: 2 },
      sources: new Map([["max_agents", "bernstein.yaml"]]),
      context: null,
    });
    await recordRunConfig(sdd, good, audit);
    equal((await readRunConfig(sdd, auditKey, "run-1")).values.max_agents, 2);
    // Bound to the chain like any record (so not "tampered"), but shaped by another version.
    const other = JSON.parse(JSON.stringify({ ...good, run_id: "run-2", sources: { a: 1 } }));
    await recordRunConfig(sdd, other, audit);
    await rejects(readRunConfig(sdd, auditKey, "run-2"), (e: unknown) => {
      equal((e as FleetError).code, "fleet.record_invalid");
      match((e as Error).message, /field 'sources' is missing or malformed/);
      match((e as FleetError).location ?? "", /config-1\.json$/);
      return true;
    });
  });
});

Deno.test("a connection file that is JSON but not a signed document is fleet.document_tampered naming the field", async () => {
  await withTempDir(async (dir) => {
    const { sdd, auditKey } = await project(dir);
    const identity = await ensureInstallIdentity(sdd, new SeededRandom(4));
    const store = new ConnectionStore({ sdd, auditKey, random: new SeededRandom(5) });
    await store.create(identity, {
      name: "gh",
      secret: { kind: "env", name: "GH_SECRET" },
      scope: "repo:read",
      defaults: {},
    });
    equal((await store.show("gh")).scope, "repo:read");
    const file = join(store.paths.connectionsDir, "gh", "1.json");
    const signed = JSON.parse(await Deno.readTextFile(file));
    for (
      const [bad, field] of [
        [{ ...signed, kid: 7 }, "kid"],
        [{ ...signed, document: { ...signed.document, secret_ref: { kind: "url" } } }, "document"],
        [[], undefined],
      ] as const
    ) {
      await Deno.writeTextFile(file, JSON.stringify(bad));
      await rejects(store.show("gh"), (e: unknown) => {
        equal((e as FleetError).code, "fleet.document_tampered");
        match(
          (e as Error).message,
          field === undefined ? /not a JSON object/ : new RegExp(`field '${field}'`),
        );
        equal((e as FleetError).location, file);
        return true;
      });
    }
  });
});
