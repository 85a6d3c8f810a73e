// The pack builder's sidecar reads on a worker: the same signature members and the same
// problems, in the same order, as the same reads on this thread, for good and hostile trees
// (missing, symlinked, oversized, non-regular sidecars, entries fed twice, hashes that are no
// digest); a reader that throws there throws the same error here, and the build stops on it.
import { deepStrictEqual, ok, rejects, strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  inThreadSidecars,
  offThreadSidecars,
  rebuiltError,
  type SidecarSignatures,
  type WindowSignatures,
} from "../../src/compliance/project/_off_thread_sidecars.ts";
import { SignatureMembers } from "../../src/compliance/window_members.ts";
import { MemorySink } from "../../src/compliance/mod.ts";
import { buildProjectPack, ensureOperatorSigningKey } from "../../src/compliance/project/mod.ts";
import { mapEnv, SeededRandom } from "../../src/io/mod.ts";
import { artefactDigest, signaturePath } from "../../src/lineage/mod.ts";
import { writeValidTree } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

/** The tree's window entries as (artefact, hash), in log order. */
async function logEntries(dir: string): Promise<[string, string][]> {
  const text = await Deno.readTextFile(join(dir, ".sdd", "lineage", "log.jsonl"));
  const out: [string, string][] = [];
  const { entryHashOfBytes } = await import("../../src/lineage/mod.ts");
  for (const line of text.split("\n").filter((l) => l !== "")) {
    out.push([JSON.parse(line).artefact_path, entryHashOfBytes(new TextEncoder().encode(line))]);
  }
  return out;
}

/** A tree with one sidecar of each kind the reader refuses, and the entries to feed. */
async function hostileTree(dir: string): Promise<[string, string][]> {
  const store = await writeValidTree(dir);
  const lineage = join(dir, ".sdd", "lineage");
  const [a1, a2, a3] = await store.chain("src/a.ts");
  const [b1] = await store.chain("src/b.ts");
  // a1: missing; a2: a symlink to a valid signature elsewhere; a3: a FIFO; b1: 64 KiB.
  await Deno.remove(join(lineage, signaturePath("src/a.ts", a1.hash)));
  const linked = join(lineage, signaturePath("src/a.ts", a2.hash));
  await Deno.rename(linked, join(dir, "elsewhere.jws"));
  await Deno.symlink(join(dir, "elsewhere.jws"), linked);
  const fifo = join(lineage, signaturePath("src/a.ts", a3.hash));
  await Deno.remove(fifo);
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  ok(made.success, "mkfifo");
  await Deno.writeFile(
    join(lineage, signaturePath("src/b.ts", b1.hash)),
    new Uint8Array(64 * 1024).fill(0x41),
  );
  const entries = await logEntries(dir);
  // Fed again (a second signature of an entry is ignored), and hashes that are no digest.
  return [
    ...entries,
    ...entries,
    ["src/a.ts", "sha256:" + "A".repeat(64)],
    ["src/a.ts", "not a hash"],
    ["src/none.ts", `sha256:${"0".repeat(64)}`],
  ];
}

async function collect(
  sidecars: SidecarSignatures,
  entries: [string, string][],
  times: number,
): Promise<WindowSignatures> {
  try {
    for (let t = 0; t < times; t++) {
      for (const [artefact, hash] of entries) {
        sidecars.add(artefact, hash);
        await sidecars.backlog();
      }
    }
    return await sidecars.finish();
  } finally {
    sidecars.close();
  }
}

function members(s: SignatureMembers): { name: string; bytes: number[]; sha256: string }[] {
  return [...s.inNameOrder()].map((m) => ({ ...m, bytes: [...m.bytes] }));
}

Deno.test("sidecars read on a worker are the members and problems read here, in order", async () => {
  await withTempDir(async (dir) => {
    const entries = await hostileTree(dir);
    const lineage = join(dir, ".sdd", "lineage");
    // 400 rounds: past the worker's batches of 512 and its queue of 16 of them.
    const here = await collect(inThreadSidecars(lineage), entries, 400);
    const there = await collect(offThreadSidecars(lineage), entries, 400);
    deepStrictEqual(there.problems, here.problems);
    deepStrictEqual(members(there.signatures), members(here.signatures));
    strictEqual(there.signatures.count, 1, "only the PR entry's sidecar is usable");
    const round = here.problems.slice(0, here.problems.length / 400);
    deepStrictEqual(round.map((p) => p.problem), [
      undefined,
      "is a symlink (refused)",
      "is not a regular file",
      "is more than 4096 bytes",
      undefined,
      "is a symlink (refused)",
      "is not a regular file",
      "is more than 4096 bytes",
      undefined,
      undefined,
      undefined,
    ]);
  });
});

Deno.test("signature members sent as columns are the same members, and take more after", () => {
  const m = new SignatureMembers();
  const hash = (i: number) => `sha256:${i.toString(16).padStart(64, "0")}`;
  for (let i = 0; i < 1500; i++) m.add(hash((i * 7919) % 1000), new Uint8Array([i & 255, 7]));
  const copy = SignatureMembers.fromColumns(structuredClone(m.columns()));
  deepStrictEqual(members(copy), members(m));
  strictEqual(copy.count, 1000, "a second signature of an entry is ignored");
  m.add("sha256:" + "A".repeat(64), new Uint8Array([1]));
  m.add("not a hash", new Uint8Array([1]));
  strictEqual(m.count, 1000, "a hash that is no digest is not a member");
  // A copy's index is made again before it takes more: a known entry is still ignored.
  copy.add(hash(5), new Uint8Array([9]));
  copy.add(hash(1000), new Uint8Array([9]));
  m.add(hash(5), new Uint8Array([9]));
  m.add(hash(1000), new Uint8Array([9]));
  deepStrictEqual(members(copy), members(m));
  throws(
    () => SignatureMembers.fromColumns({ ...m.columns(), count: m.count + 1_000_000 }),
    /inconsistent columns/,
  );
});

/** A tree whose first artefact's sidecar folder is a symlink loop: listing it throws. */
async function loopTree(dir: string): Promise<string> {
  await writeValidTree(dir);
  const h = artefactDigest("src/a.ts");
  const folder = join(dir, ".sdd", "lineage", "signatures", h.slice(0, 2), h);
  await Deno.remove(folder, { recursive: true });
  await Deno.symlink(folder, folder);
  return folder;
}

Deno.test("a reader that throws on the worker throws the same error, class and message", async () => {
  await withTempDir(async (dir) => {
    await loopTree(dir);
    const entries = await logEntries(dir);
    const lineage = join(dir, ".sdd", "lineage");
    let thrown: unknown;
    try {
      await collect(inThreadSidecars(lineage), entries, 1);
    } catch (error) {
      thrown = error;
    }
    ok(thrown instanceof Deno.errors.FilesystemLoop, String(thrown));
    await rejects(collect(offThreadSidecars(lineage), entries, 1), (e: unknown) => {
      ok(e instanceof Deno.errors.FilesystemLoop, String(e));
      strictEqual(e.message, (thrown as Error).message);
      return true;
    });
    // An error the runtime does not define keeps its name and message.
    const other = rebuiltError("RangeError", "no such range");
    strictEqual(other.name, "RangeError");
    strictEqual(other.message, "no such range");
    strictEqual(rebuiltError("prototype", "x").name, "prototype");
  });
});

Deno.test("a pack build stops with the sidecar reader's error and writes nothing", async () => {
  await withTempDir(async (dir) => {
    const folder = await loopTree(dir);
    const sdd = join(dir, ".sdd");
    const key = await ensureOperatorSigningKey(sdd, new SeededRandom(4));
    const sink = new MemorySink();
    await rejects(
      buildProjectPack({
        sdd,
        org: "Acme Bank",
        since: "2026-01-01",
        until: "2026-01-01",
        builtAt: null,
        builder: "bernstein test",
        compliance: { risk_paths: [], remote_biometric_identification: false, retention_days: 365 },
        signer: key.signer,
        env: mapEnv({}),
        sink,
      }),
      (e: unknown) => {
        ok(e instanceof Deno.errors.FilesystemLoop, String(e));
        ok(e.message.includes(folder), e.message);
        return true;
      },
    );
    strictEqual(sink.bytes().length, 0);
  });
});
