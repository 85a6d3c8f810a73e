// Audit log figures: append throughput with fsync (one awaited append at a time, and group
// commit with many appends in flight), full-chain verify and scan of 100 000 records, and the
// peak memory of each. Every measurement runs in its own process so its peak is its own.
// Goals (issue 3): append above 2 000 records/s with fsync; verify streams (bounded memory).
// One awaited append at a time cannot beat the disk's fsync latency, so the raw write+fsync
// rate is printed first as the floor; group commit shares one fsync among concurrent appends,
// each still acknowledged only after the fsync that covers it.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AuditLog,
  ensureAuditKey,
  readAuditKey,
  scanAuditLog,
  verifyAuditLog,
} from "../../src/audit/mod.ts";
import { systemRandom } from "../../src/io/mod.ts";
import { peakRssMiB, report } from "./_report.ts";

const SEQUENTIAL = 3_000;
const GROUPED = 20_000;
const IN_FLIGHT = 64;
const CHAIN = 100_000;

function event(i: number) {
  return {
    actor: "orchestrator",
    event_type: "task.transition",
    resource_type: "task",
    resource_id: `task-${i}`,
    details: { from: "claimed", to: "done", attempt: 1, worker: "w-3", seq: i },
  };
}

interface ChildResult {
  ms: number;
  count: number;
  peakMiB: number;
  ok?: boolean;
}

async function child(mode: string, dir: string, keyPath: string, n: number): Promise<void> {
  const key = await readAuditKey(keyPath);
  const start = performance.now();
  let ok: boolean | undefined;
  let count = n;
  if (mode === "raw-fsync") {
    // The floor of any fsync-per-record design on this disk: write one line, fsync, repeat.
    await Deno.mkdir(dir, { recursive: true });
    const file = await Deno.open(join(dir, "raw.jsonl"), { append: true, create: true });
    const line = new TextEncoder().encode("x".repeat(300) + "\n");
    for (let i = 0; i < n; i++) {
      file.writeSync(line);
      await file.sync();
    }
    file.close();
  } else if (mode === "append-sequential") {
    const log = new AuditLog(dir, key);
    for (let i = 0; i < n; i++) await log.append(event(i));
    await log.close();
  } else if (mode === "append-grouped" || mode === "fill") {
    const log = new AuditLog(dir, key);
    const window = mode === "fill" ? 512 : IN_FLIGHT;
    // `window` producers each awaiting its own appends: concurrent callers, as in a run.
    let next = 0;
    await Promise.all(Array.from({ length: window }, async () => {
      while (next < n) await log.append(event(next++));
    }));
    await log.close();
  } else if (mode === "verify") {
    const r = await verifyAuditLog(dir, key);
    ok = r.ok;
    count = r.records;
  } else if (mode === "scan") {
    const r = await scanAuditLog(dir, key);
    count = r.records.length;
    ok = r.skipped_count === 0;
  } else if (mode === "scan-streaming") {
    let seen = 0;
    const r = await scanAuditLog(dir, key, { onRecord: () => seen++ });
    count = seen;
    ok = r.skipped_count === 0;
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  const result: ChildResult = { ms: performance.now() - start, count, peakMiB: peakRssMiB(), ok };
  console.log(JSON.stringify(result));
}

async function run(
  mode: string,
  dir: string,
  keyPath: string,
  n: number,
  v8Flags: string[] = [],
): Promise<ChildResult> {
  const self = fileURLToPath(import.meta.url);
  const flags = v8Flags.length > 0 ? [`--v8-flags=${v8Flags.join(",")}`] : [];
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--frozen",
      "-P=dev",
      ...flags,
      self,
      `--child=${mode}`,
      dir,
      keyPath,
      String(n),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (out.code !== 0) throw new Error(`${mode} exited ${out.code}`);
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  return JSON.parse(lines[lines.length - 1]) as ChildResult;
}

const childArg = Deno.args.find((a) => a.startsWith("--child="));
if (childArg !== undefined) {
  const [dir, keyPath, n] = Deno.args.filter((a) => !a.startsWith("--child="));
  await child(childArg.slice("--child=".length), dir, keyPath, Number(n));
} else {
  const root = await Deno.makeTempDir({ prefix: "bernstein-bench-audit-" });
  try {
    const keyPath = join(root, "audit.key");
    await ensureAuditKey(keyPath, systemRandom);

    const raw = await run("raw-fsync", join(root, "raw"), keyPath, SEQUENTIAL);
    report("audit", "baseline: raw write+fsync of a line", raw.count / (raw.ms / 1000), "lines/s");
    const seq = await run("append-sequential", join(root, "seq"), keyPath, SEQUENTIAL);
    report("audit", "append, fsync each (awaited)", seq.count / (seq.ms / 1000), "records/s");
    report("audit", "append, fsync each: peak memory", seq.peakMiB, "MiB");

    const grouped = await run("append-grouped", join(root, "grp"), keyPath, GROUPED);
    report(
      "audit",
      `append, group commit (${IN_FLIGHT} in flight)`,
      grouped.count / (grouped.ms / 1000),
      "records/s",
    );
    report("audit", "append, group commit: peak memory", grouped.peakMiB, "MiB");

    const chain = join(root, "chain");
    await run("fill", chain, keyPath, CHAIN);
    let bytes = 0;
    for await (const e of Deno.readDir(chain)) {
      if (e.name.endsWith(".jsonl")) bytes += (await Deno.stat(join(chain, e.name))).size;
    }
    report("audit", "chain size (100 000 records)", bytes / (1 << 20), "MiB");

    const verify = await run("verify", chain, keyPath, CHAIN);
    if (!verify.ok || verify.count !== CHAIN) throw new Error("verify did not pass the chain");
    report("audit", "verify 100 000 records", verify.ms / 1000, "s");
    report("audit", "verify throughput", verify.count / (verify.ms / 1000), "records/s");
    report("audit", "verify: peak memory", verify.peakMiB, "MiB");

    // Streaming proof: the same verify with the V8 heap capped far below the chain's size.
    const capped = await run("verify", chain, keyPath, CHAIN, ["--max-old-space-size=24"]);
    if (!capped.ok || capped.count !== CHAIN) throw new Error("capped verify failed");
    report("audit", "verify with V8 old space capped at 24 MiB", capped.ms / 1000, "s");
    report("audit", "verify, capped heap: peak memory", capped.peakMiB, "MiB");

    const streamed = await run("scan-streaming", chain, keyPath, CHAIN, [
      "--max-old-space-size=24",
    ]);
    if (!streamed.ok || streamed.count !== CHAIN) throw new Error("streaming scan failed");
    report("audit", "full scan via onRecord (24 MiB heap cap)", streamed.ms / 1000, "s");
    report("audit", "full scan via onRecord: peak memory", streamed.peakMiB, "MiB");

    const scan = await run("scan", chain, keyPath, CHAIN);
    if (!scan.ok || scan.count !== CHAIN) throw new Error("scan did not return the chain");
    report("audit", "full scan 100 000 records", scan.ms / 1000, "s");
    report("audit", "full scan: peak memory (holds all records)", scan.peakMiB, "MiB");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
