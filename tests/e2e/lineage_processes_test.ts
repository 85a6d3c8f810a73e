// Real processes: several writers appending at once never lose or fork an entry, and a writer
// killed with SIGKILL mid-append leaves a log that is intact or reports its torn tail.
import { deepStrictEqual, equal, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { gateDir } from "../_helpers/lineage_tree.ts";
import { LineWatcher } from "../_helpers/events.ts";
import { withTempDir } from "../_helpers/temp.ts";

const WRITER = join(REPO_ROOT, "tests/e2e/_lineage_writer.ts");

function writer(dir: string, agent: string, count: number, artefacts: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--frozen",
      `--config=${REPO_ROOT}deno.json`,
      "-P=dev",
      WRITER,
      dir,
      agent,
      String(count),
      ...artefacts,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function logHashes(dir: string): Promise<Set<string>> {
  const log = await Deno.readTextFile(join(dir, ".sdd/lineage/log.jsonl"));
  const hashes = new Set<string>();
  for (const line of log.split("\n").slice(0, -1)) {
    const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(line)));
    hashes.add("sha256:" + [...d].map((b) => b.toString(16).padStart(2, "0")).join(""));
  }
  return hashes;
}

/** Entry hashes the writer acknowledged (complete lines only: a kill may cut the last one). */
function acknowledged(stdout: Uint8Array | string): string[] {
  const text = typeof stdout === "string" ? stdout : new TextDecoder().decode(stdout);
  return text.split("\n").filter((l) => /^\d+ sha256:[0-9a-f]{64}$/.test(l)).map((l) =>
    l.split(" ")[1]
  );
}

Deno.test("four writer processes on shared and own artefacts: no lost entry, no fork", async () => {
  await withTempDir(async (dir) => {
    const per = 25;
    const procs = ["w1", "w2", "w3", "w4"].map((agent) =>
      writer(dir, agent, per, ["shared.ts", `own-${agent}.ts`])
    );
    const outputs = await Promise.all(procs.map((p) => p.output()));
    for (const o of outputs) strictEqual(o.code, 0, new TextDecoder().decode(o.stderr));
    const acked = outputs.flatMap((o) => acknowledged(o.stdout));
    strictEqual(acked.length, 4 * per);
    const result = await gateDir(dir);
    deepStrictEqual(result.issues, []);
    strictEqual(result.entries, 4 * per);
    // Every acknowledged entry is in the log exactly once.
    const log = await Deno.readTextFile(join(dir, ".sdd/lineage/log.jsonl"));
    const hashes = new Set<string>();
    for (const line of log.split("\n").slice(0, -1)) {
      const d = new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode(line)),
      );
      hashes.add("sha256:" + [...d].map((b) => b.toString(16).padStart(2, "0")).join(""));
    }
    for (const h of acked) ok(hashes.has(h), `acknowledged ${h} missing from the log`);
    // The shared artefact is one chain (each writer's even writes): one genesis, and no two
    // entries with the same parent.
    const shared = log.split("\n").slice(0, -1).map((l) => JSON.parse(l)).filter((e) =>
      e.artefact_path === "shared.ts"
    );
    strictEqual(shared.length, 4 * Math.ceil(per / 2));
    strictEqual(shared.filter((e) => e.parent_hashes.length === 0).length, 1);
    const parents = shared.flatMap((e) => e.parent_hashes);
    strictEqual(new Set(parents).size, parents.length);
  });
});

Deno.test("a writer SIGKILLed mid-append, again and again: intact log or a reported torn tail", async () => {
  await withTempDir(async (dir) => {
    const acked: string[] = [];
    for (let round = 0; round < 6; round++) {
      const p = writer(dir, `k${round % 2}`, 10_000, ["a.ts", "b.ts", "c.ts"]);
      const stdout = new LineWatcher(p.stdout);
      const stderr = new LineWatcher(p.stderr);
      // Once it has acknowledged a few entries (a different number each round; however long
      // its start-up takes), kill it somewhere in the appends that follow.
      await stdout.waitForCount(/^\d+ sha256:/, 1 + (round * 37) % 50, "the writer's entries");
      await new Promise((r) => setTimeout(r, round * 3));
      p.kill("SIGKILL");
      const status = await p.status;
      await stderr.done;
      equal(status.signal, "SIGKILL", stderr.text());
      acked.push(...acknowledged(await stdout.done));
      const result = await gateDir(dir);
      // The only tolerated problems are those of a torn last record, and the signature of the
      // interrupted append (written before its line; the next writer removes it).
      for (const issue of result.issues) {
        ok(
          issue.kind === "missing trailing newline" || issue.kind === "non-canonical line bytes" ||
            issue.kind === "orphaned signature",
          `round ${round}: unexpected ${issue.message}`,
        );
      }
    }
    ok(acked.length > 0, "no writer got to write anything before being killed");
    // After a final clean writer, everything acknowledged is still there and verifies.
    const last = await writer(dir, "final", 3, ["a.ts"]).output();
    strictEqual(last.code, 0, new TextDecoder().decode(last.stderr));
    const hashes = await logHashes(dir);
    for (const h of acked) ok(hashes.has(h), `acknowledged ${h} lost after a kill`);
    const result = await gateDir(dir);
    const torn = result.issues.filter((i) => i.kind !== "non-canonical line bytes");
    deepStrictEqual(torn, [], "only sealed torn records may remain");
    strictEqual(result.entries >= acked.length + 3, true);
  });
});
