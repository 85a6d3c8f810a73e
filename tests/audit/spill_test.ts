// The audit log on a full disk: appends that cannot be written are rejected (nothing half-
// acknowledged) and kept in the spill file outside the folder; once space returns,
// `replaySpill` writes them into the chain, each marked `details.spilled`, and the chain
// verifies. The full disk is real: a 256 KiB tmpfs (bwrap), filled up.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { probeSandbox } from "../../src/sandbox/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const probe = await probeSandbox();
const why = probe.available ? "" : ` [skipped: needs bwrap for a small tmpfs: ${probe.reason}]`;

const SCRIPT = `
import { AuditLog, verifyAuditLog } from "${
  fileURLToPath(new URL("../../src/audit/mod.ts", import.meta.url))
}";
const [dir, spill] = Deno.args;
const key = { bytes: new TextEncoder().encode("a".repeat(64)), path: "k" };
const log = new AuditLog(dir, key, { spillPath: spill });
await log.append({ actor: "t", event_type: "before", resource_type: "r", resource_id: "0" });
// Fill the file system.
const filler = await Deno.open(dir + "/filler", { write: true, create: true });
try { for (;;) filler.writeSync(new Uint8Array(4096)); } catch (e) { if (e.code !== "ENOSPC") throw e; }
filler.close();
const results = await Promise.allSettled(["a", "b", "c"].map((id) =>
  log.append({ actor: "t", event_type: "lost", resource_type: "r", resource_id: id, details: { n: id, pad: "x".repeat(20000) } })
));
await log.close();
const spilled = (await Deno.readTextFile(spill)).trim().split("\\n").length;
await Deno.remove(dir + "/filler");
const again = new AuditLog(dir, key, { spillPath: spill });
const replayed = await again.replaySpill();
await again.close();
const report = await verifyAuditLog(dir, key);
const gone = await Deno.stat(spill).then(() => false, () => true);
console.log(JSON.stringify({
  rejected: results.filter((r) => r.status === "rejected").map((r) => r.reason.code ?? r.reason.name),
  spilled, replayed, ok: report.ok, records: report.records, tears: report.tears.length, gone,
}));
`;

Deno.test({
  name:
    `audit on a full disk: unwritten events are spilled, replayed later, and the chain verifies${why}`,
  ignore: !probe.available,
  async fn() {
    await withTempDir(async (dir) => {
      const audit = join(dir, "audit");
      await Deno.mkdir(audit);
      await Deno.writeTextFile(join(dir, "spill.ts"), SCRIPT);
      const out = await new Deno.Command("bwrap", {
        args: [
          "--dev-bind",
          "/",
          "/",
          "--size",
          String(256 * 1024),
          "--tmpfs",
          audit,
          "--die-with-parent",
          "--",
          Deno.execPath(),
          "run",
          "-A",
          "--quiet",
          "--frozen",
          `--config=${fileURLToPath(new URL("../../deno.json", import.meta.url))}`,
          join(dir, "spill.ts"),
          audit,
          join(dir, "spill.jsonl"),
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr) + stdout);
      const r = JSON.parse(stdout.trim().split("\n").at(-1) as string);
      assert.equal(r.rejected.length, 3, stdout);
      assert.equal(r.spilled, 3);
      assert.equal(r.replayed, 3);
      assert.equal(r.ok, true, "the chain verifies after the replay");
      // The one written before, the three written late, and the seal of the partial write
      // the full disk left behind (when it left one).
      assert.equal(r.records, 4 + r.tears, stdout);
      assert.equal(r.gone, true, "the spill file is removed once replayed");
    });
  },
});
