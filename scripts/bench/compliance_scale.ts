// `deno task bench compliance_scale` (opt-in: minutes of CPU and ~1.5 GB of disk): does
// `bernstein-verify pack` stay linear and under 1 GiB from 100 000 to 1 000 000 entries? Two
// sample packs are written member by member (scripts/sample_pack.ts `writeSamplePack`, the
// same bytes as the in-memory sample pack), then verified as an auditor runs the verifier
// (verify.ts under the read-only permission set, with the binaries' V8 flags). Printed: wall,
// CPU and peak of each, the 1M/100k ratios beside 10 (linear), and the 1M peak beside 1 GiB.
// BENCH_SCALE_SIZES=a,b sets other sizes.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openAtomicFile } from "../../src/io/mod.ts";
import { operatorFingerprint } from "../../src/pack_format/mod.ts";
import { v8FlagsArg } from "../runtime_flags.ts";
import { writeSamplePack } from "../sample_pack.ts";
import { compare, loadAverage, report, timeCommand } from "./_report.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SIZES = (Deno.env.get("BENCH_SCALE_SIZES") ?? "100000,1000000").split(",").map(Number);

async function writeChild(path: string, entries: number): Promise<void> {
  const out = await openAtomicFile(path);
  try {
    const r = await writeSamplePack(
      { seed: 1, entries, before: 50, agents: 5, artefacts: 2000 },
      out,
    );
    await out.commit();
    console.log(JSON.stringify({
      bytes: r.bytes,
      entries: r.entries,
      fingerprint: operatorFingerprint(r.operator.publicKey),
    }));
  } catch (error) {
    await out.abort();
    throw error;
  }
}

if (Deno.args[0] === "--write") {
  await writeChild(Deno.args[1], Number(Deno.args[2]));
} else {
  const dir = await Deno.makeTempDir({ prefix: "bernstein-bench-scale-" });
  try {
    const runs: { entries: number; ms: number; cpuMs: number; peakMiB: number }[] = [];
    for (const n of SIZES) {
      const pack = join(dir, `pack-${n}.zip`);
      const t0 = performance.now();
      const w = await timeCommand([
        Deno.execPath(),
        "run",
        "-q",
        "--frozen",
        "-P=dev",
        fileURLToPath(import.meta.url),
        "--write",
        pack,
        String(n),
      ]);
      if (w.code !== 0) throw new Error(`writing the ${n}-entry pack failed\n${w.stderr}`);
      const made = JSON.parse(w.stdout.trim().split("\n").pop() ?? "{}");
      report("scale", `sample pack of ${n} entries written`, (performance.now() - t0) / 1000, "s");
      report("scale", `sample pack of ${n} entries: size`, made.bytes / (1 << 20), "MiB");
      report("scale", `load average before verifying ${n}`, loadAverage(), "");
      const v = await timeCommand([
        Deno.execPath(),
        "run",
        "-q",
        "--frozen",
        `--config=${join(ROOT, "deno.json")}`,
        "-P=verify",
        v8FlagsArg(),
        join(ROOT, "verify.ts"),
        "pack",
        pack,
        "--operator-fingerprint",
        made.fingerprint,
      ]);
      if (v.code !== 0) throw new Error(`bernstein-verify pack failed on ${n}\n${v.stdout}`);
      report("scale", `bernstein-verify pack, ${n} entries: wall`, v.ms / 1000, "s");
      report("scale", `bernstein-verify pack, ${n} entries: CPU (user+sys)`, v.cpuMs / 1000, "s");
      report("scale", `bernstein-verify pack, ${n} entries: peak memory`, v.peakMiB, "MiB");
      runs.push({ entries: made.entries, ms: v.ms, cpuMs: v.cpuMs, peakMiB: v.peakMiB });
      await Deno.remove(pack);
    }
    const [small, large] = [runs[0], runs[runs.length - 1]];
    if (runs.length >= 2) {
      const linear = large.entries / small.entries;
      const label = `${small.entries} → ${large.entries} entries`;
      compare("scale", `${label}: wall ratio`, large.ms / small.ms, "x", {
        value: linear,
        label: "linear growth",
        goal: "<= 1 (per entry no slower)",
      });
      compare("scale", `${label}: CPU ratio`, large.cpuMs / small.cpuMs, "x", {
        value: linear,
        label: "linear growth",
        goal: "<= 1",
      });
    }
    compare(
      "scale",
      `bernstein-verify pack, ${large.entries} entries: peak`,
      large.peakMiB,
      "MiB",
      {
        value: 1024,
        label: "goal: 1 GiB",
        goal: "< 1",
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
