// Lineage figures: append throughput of the real writer (sign + HMAC + sidecar + fsync'd
// append + projections, each in its own process so peak memory is per phase), and the gate
// (`bernstein lineage gate`, the real CLI) over a generated 100 000-entry tree.
// Goals: gate verification of 100 000 entries under 3 s on two cores (issue 22) and under
// 200 MB (issue 3).
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { checkpointTree, generateTree } from "../../tests/_helpers/lineage_tree.ts";
import { defaultGateWorkers } from "../../src/verify/mod.ts";
import { v8FlagsArg } from "../runtime_flags.ts";
import { compare, report, timeCommand } from "./_report.ts";

const root = fromFileUrl(new URL("../../", import.meta.url));
const ENTRIES = Number(Deno.env.get("LINEAGE_BENCH_ENTRIES") ?? 100_000);
const APPENDS = Number(Deno.env.get("LINEAGE_BENCH_APPENDS") ?? 400);
const SECRET = "bench-operator-secret";

/**
 * Runs a command and samples its peak RSS (VmHWM) and CPU time (utime+stime of all threads)
 * from /proc while it runs; wall time alone says little on a shared 2-core machine.
 */
async function measure(
  argv: string[],
  options: { cwd?: string; env?: Record<string, string> },
): Promise<{ ms: number; cpuMs: number; peakMiB: number; code: number }> {
  const start = performance.now();
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let peak = 0;
  let ticks = 0;
  const poll = setInterval(() => {
    try {
      const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      const m = /VmHWM:\s+(\d+) kB/.exec(status);
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
      const stat = Deno.readTextFileSync(`/proc/${child.pid}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks = Math.max(ticks, Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process exited between polls.
    }
  }, 20);
  const out = await child.output();
  clearInterval(poll);
  // Linux reports CPU in clock ticks of 10 ms (CLK_TCK = 100).
  return { ms: performance.now() - start, cpuMs: ticks * 10, peakMiB: peak, code: out.code };
}

const deno = Deno.execPath();
const env = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: Deno.env.get("HOME") ?? "/tmp",
  BERNSTEIN_OPERATOR_SECRET: SECRET,
  NO_COLOR: "1",
};
const tmp = await Deno.makeTempDir({ prefix: "bernstein-bench-lineage-" });
try {
  // 1. Append throughput through the real store (each write: sign, HMAC, sidecar fsync,
  //    log append fsync, projections, state fsync), in its own process.
  const appendDir = join(tmp, "append");
  await Deno.mkdir(appendDir);
  const appended = await timeCommand([
    deno,
    "run",
    "-q",
    "--frozen",
    `--config=${root}deno.json`,
    "-P=dev",
    join(root, "scripts/bench/_lineage_append.ts"),
    appendDir,
    String(APPENDS),
  ], { env });
  if (appended.code !== 0) throw new Error(`append bench exited ${appended.code}`);
  const rate = JSON.parse(await Deno.readTextFile(join(appendDir, "rate.json"))) as {
    writes: number;
    ms: number;
  };
  report("lineage", "append (sign+HMAC+fsync)", (rate.writes / rate.ms) * 1000, "entries/s");
  report("lineage", "append peak RSS", appended.peakMiB, "MiB");

  // 2. Gate over a generated 100 000-entry tree with the real CLI, with the binaries' V8 flags:
  //    the default (one worker per spare core) and everything on one thread.
  const gateDir = join(tmp, "gate");
  await Deno.mkdir(gateDir);
  const t0 = performance.now();
  generateTree(gateDir, { entries: ENTRIES, operatorSecret: SECRET });
  report("lineage", `generate ${ENTRIES} entries`, performance.now() - t0, "ms");
  const logBytes = (await Deno.stat(join(gateDir, ".sdd/lineage/log.jsonl"))).size;
  report("lineage", "log size", logBytes / 1024 / 1024, "MiB");
  // The gate once without a checkpoint, then (after the tree is checkpointed, as every run
  // ends) with the default workers and on one thread: the difference is the checkpoint check.
  for (const workers of ["default:no checkpoint", "checkpoint", "default", "0"]) {
    if (workers === "checkpoint") {
      const t1 = performance.now();
      const r = await checkpointTree(gateDir);
      report(
        "lineage",
        `checkpoint ${r.checkpoint.size} entries (writer)`,
        performance.now() - t1,
        "ms",
      );
      continue;
    }
    const load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
    report("lineage", `load average before gate (workers=${workers})`, Number(load), "");
    const gated = await measure([
      deno,
      "run",
      "-q",
      "--frozen",
      `--config=${root}deno.json`,
      "-P=bernstein",
      v8FlagsArg(),
      join(root, "main.ts"),
      "lineage",
      "gate",
      ...(workers.startsWith("default") ? [] : [`--workers=${workers}`]),
    ], { cwd: gateDir, env });
    if (gated.code !== 0) throw new Error(`gate exited ${gated.code} on a valid tree`);
    const label = `gate ${ENTRIES} entries workers=${
      workers.startsWith("default") ? `${defaultGateWorkers()} (default)` : workers
    }${workers.includes("no checkpoint") ? " no checkpoint" : " + checkpoint"}`;
    compare("lineage", `${label} wall`, gated.ms / 1000, "s", {
      value: 3,
      label: "goal (issue 22; the compliance bench runs it beside a reference too)",
      goal: "<= 1",
    });
    report("lineage", `${label} CPU`, gated.cpuMs, "ms (user+sys, all threads)");
    report("lineage", `${label} throughput`, (ENTRIES / gated.ms) * 1000, "entries/s");
    report("lineage", `${label} peak RSS`, gated.peakMiB, "MiB (goal < 200)");
  }
} finally {
  await Deno.remove(tmp, { recursive: true });
}
