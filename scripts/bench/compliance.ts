// Compliance figures on a 100 000-entry window, each beside its reference in the same run:
//
// - `bernstein lineage gate` (the real CLI, operator HMAC checked) over the project's `.sdd/`,
//   against the goal (3 s) and against the Python + OpenSSL reference doing the same per-entry
//   work (scripts/bench/reference/verify.py tree);
// - `bernstein compliance pack` (the real CLI, self-check included), against its goals
//   (10 s, 300 MiB);
// - `bernstein-verify pack` (verify.ts under the read-only permission set), against the
//   reference verifier on the same pack (verify.py pack): goals 1/3 of its time, at most its
//   peak memory.
//
// Commands run as their own processes with the binaries' V8 flags; wall time, CPU time (user +
// system, all threads) and peak RSS come from the kernel's accounting of each child. Each pair
// (bernstein, reference) runs back to back; BENCH_REPEAT=N repeats the pairs and prints the
// medians and the median of the per-pair ratios, which is what to quote on a busy machine. The
// load average is printed before each pair. BENCH_PACK_ENTRIES sets another window size;
// BENCH_PACK_DIR=DIR keeps the project and pack in DIR (and reuses a fixture found there), for
// profiling the commands by hand.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { signaturePath } from "../../src/lineage/mod.ts";
import { v8FlagsArg } from "../runtime_flags.ts";
import { SAMPLE_HMAC_KEY, sampleLog } from "../sample_pack.ts";
import { type CommandFigures, compare, loadAverage, report, timeCommand } from "./_report.ts";

const ENTRIES = Number(Deno.env.get("BENCH_PACK_ENTRIES") ?? 100_000);
const REPEAT = Math.max(1, Number(Deno.env.get("BENCH_REPEAT") ?? 1));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const REFERENCE = join(ROOT, "scripts/bench/reference/verify.py");
const SECRET = new TextDecoder().decode(SAMPLE_HMAC_KEY);

/** Writes the project: `.sdd/` with the log, the sidecars, the cards and a configuration. */
async function writeFixture(dir: string, n: number): Promise<void> {
  // Spread over March 2026; 50 entries in February that the window builds on.
  const sample = sampleLog({ seed: 1, entries: n, before: 50, agents: 5, artefacts: 2000 });
  const sdd = join(dir, ".sdd");
  const lineage = join(sdd, "lineage");
  await Deno.mkdir(lineage, { recursive: true });
  let size = 0;
  for (const e of sample.log) size += e.line.length + 1;
  const log = new Uint8Array(size);
  let at = 0;
  for (const e of sample.log) {
    log.set(e.line, at);
    log[at + e.line.length] = 0x0a;
    at += e.line.length + 1;
  }
  await Deno.writeFile(join(lineage, "log.jsonl"), log);
  const made = new Set<string>();
  for (const e of sample.log) {
    const path = join(lineage, signaturePath(e.entry.artefact_path, e.hash));
    const folder = join(path, "..");
    if (!made.has(folder)) {
      await Deno.mkdir(folder, { recursive: true });
      made.add(folder);
    }
    await Deno.writeFile(path, e.signature as Uint8Array);
  }
  for (const a of sample.agents) {
    await Deno.mkdir(join(sdd, "agents", a.agentId), { recursive: true });
    await Deno.writeFile(join(sdd, "agents", a.agentId, "card.json"), a.card);
  }
  await Deno.writeTextFile(
    join(sdd, "config.yaml"),
    "compliance:\n  risk_paths: ['src/file_1*.ts']\n  retention_days: 183\n",
  );
}

const env = (dir: string): Record<string, string> => ({
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: Deno.env.get("HOME") ?? "/tmp",
  NO_COLOR: "1",
  BERNSTEIN_OPERATOR_SECRET: SECRET,
  // No audit key: the pack says its tool calls were not linked (nothing to authenticate here).
  BERNSTEIN_AUDIT_KEY_PATH: join(dir, "no-audit.key"),
});

function entry(file: string, permissions: string, args: string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "-q",
    "--frozen",
    `--config=${join(ROOT, "deno.json")}`,
    `-P=${permissions}`,
    v8FlagsArg(),
    join(ROOT, file),
    ...args,
  ];
}

/** The Python that runs the reference, and what it is; or why there is none. */
interface ReferencePython {
  /** The interpreter, when one with `cryptography` was found. */
  python?: string;
  /** `python3 3.11.2 + cryptography 38.0.4 (OpenSSL 3.0.19)`, or why it is missing. */
  label: string;
}

/**
 * Debian's python3 with python3-cryptography first (what .ci/setup-services installs), then
 * whatever `python3` is on PATH.
 */
async function referencePython(): Promise<ReferencePython> {
  const probe = "import sys, cryptography\n" +
    "from cryptography.hazmat.backends.openssl import backend\n" +
    "print(sys.version.split()[0], cryptography.__version__, backend.openssl_version_text().split()[1])";
  for (const python of ["/usr/bin/python3", "python3"]) {
    try {
      const out = await new Deno.Command(python, {
        args: ["-c", probe],
        stdout: "piped",
        stderr: "null",
      }).output();
      if (out.code !== 0) continue;
      const [version, crypto, openssl] = new TextDecoder().decode(out.stdout).trim().split(" ");
      return {
        python,
        label: `python ${version} + cryptography ${crypto} (OpenSSL ${openssl}) reference`,
      };
    } catch {
      // Not installed here: try the next.
    }
  }
  return {
    label:
      "no reference: python3-cryptography is missing (apt-get install python3-cryptography, see .ci/setup-services)",
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

async function run(argv: string[], dir: string, what: string): Promise<CommandFigures> {
  const r = await timeCommand(argv, { cwd: dir, env: env(dir), clearEnv: true });
  if (r.code !== 0) {
    throw new Error(`${what} exited ${r.code}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  }
  return r;
}

/** Pairs of (bernstein, reference) runs; the reference is skipped when it cannot run. */
async function pairs(
  label: string,
  ours: () => Promise<CommandFigures>,
  reference: (() => Promise<CommandFigures>) | undefined,
): Promise<{ ours: CommandFigures[]; ref: CommandFigures[] }> {
  const out = { ours: [] as CommandFigures[], ref: [] as CommandFigures[] };
  for (let i = 0; i < REPEAT; i++) {
    report("compliance", `load average before ${label} (pair ${i + 1})`, loadAverage(), "");
    out.ours.push(await ours());
    if (reference !== undefined) out.ref.push(await reference());
  }
  return out;
}

/** Medians of wall, CPU and peak, and of the per-pair ratios. */
function printPairs(
  name: string,
  runs: { ours: CommandFigures[]; ref: CommandFigures[] },
  refLabel: string,
  goals: { wall?: string; cpu?: string; peak?: string },
): void {
  const pick = (f: CommandFigures[], k: "ms" | "cpuMs" | "peakMiB") => median(f.map((r) => r[k]));
  const ratio = (k: "ms" | "cpuMs" | "peakMiB") =>
    runs.ref.length === 0 ? undefined : median(runs.ours.map((r, i) => r[k] / runs.ref[i][k]));
  const rows: [string, "ms" | "cpuMs" | "peakMiB", number, string, string | undefined][] = [
    ["wall", "ms", 1000, "s", goals.wall],
    ["CPU (user+sys)", "cpuMs", 1000, "s", goals.cpu],
    ["peak memory", "peakMiB", 1, "MiB", goals.peak],
  ];
  for (const [what, k, div, unit, goal] of rows) {
    const value = pick(runs.ours, k) / div;
    const r = ratio(k);
    compare("compliance", `${name}: ${what}`, value, unit, {
      // The reference's own median, and the ratio as the median of the pairs' ratios.
      value: r === undefined ? undefined : value / r,
      label: runs.ref.length === 0 ? refLabel : `${refLabel}, median of ${runs.ref.length}`,
      goal,
    });
  }
}

const keep = Deno.env.get("BENCH_PACK_DIR");
const dir = keep ?? await Deno.makeTempDir({ prefix: "bernstein-bench-pack-" });
try {
  const reference = await referencePython();
  const refLabel = reference.label;
  const python = reference.python;
  report("compliance", "load average at start", loadAverage(), "");
  const fixtureStart = performance.now();
  const reuse = keep !== undefined &&
    await Deno.stat(join(dir, ".sdd/config.yaml")).then(() => true, () => false);
  if (!reuse) await writeFixture(dir, ENTRIES);
  report(
    "compliance",
    `fixture: ${ENTRIES} signed entries on disk`,
    (performance.now() - fixtureStart) / 1000,
    "s",
  );
  const logBytes = (await Deno.stat(join(dir, ".sdd/lineage/log.jsonl"))).size;
  report("compliance", "fixture: log size", logBytes / (1 << 20), "MiB");

  // 1. The lineage gate over the project.
  const gate = await pairs(
    "the gate",
    () => run(entry("main.ts", "bernstein", ["lineage", "gate"]), dir, "bernstein lineage gate"),
    python !== undefined
      ? () => run([python, REFERENCE, "tree", dir, SECRET], dir, "reference gate")
      : undefined,
  );
  const gateWall = median(gate.ours.map((r) => r.ms)) / 1000;
  compare("compliance", `bernstein lineage gate, ${ENTRIES} entries: wall`, gateWall, "s", {
    value: 3,
    label: "goal",
    goal: "<= 1",
  });
  printPairs(`bernstein lineage gate, ${ENTRIES} entries`, gate, refLabel, {});

  // 2. The pack build, self-check included.
  const pack = join(dir, "pack.zip");
  const build = await pairs(
    "the pack build",
    () =>
      run(
        entry("main.ts", "bernstein", [
          "compliance",
          "pack",
          "--since",
          "2026-03-01",
          "--until",
          "2026-03-31",
          "--org",
          "Bench Bank",
          "--output",
          pack,
          "--json",
        ]),
        dir,
        "bernstein compliance pack",
      ),
    undefined,
  );
  const built = JSON.parse(build.ours[build.ours.length - 1].stdout);
  if (built.self_check?.ok !== true) throw new Error("the pack's self-check failed");
  const buildWall = median(build.ours.map((r) => r.ms)) / 1000;
  const buildPeak = median(build.ours.map((r) => r.peakMiB));
  compare("compliance", `bernstein compliance pack, ${ENTRIES} entries: wall`, buildWall, "s", {
    value: 10,
    label: "goal",
    goal: "<= 1",
  });
  compare("compliance", `bernstein compliance pack: peak memory`, buildPeak, "MiB", {
    value: 300,
    label: "goal",
    goal: "<= 1",
  });
  report(
    "compliance",
    "bernstein compliance pack: CPU (user+sys)",
    median(build.ours.map((r) => r.cpuMs)) / 1000,
    "s",
  );
  report("compliance", "pack size", built.bytes / (1 << 20), "MiB");

  // 3. The pack verifier, as an auditor runs it.
  const fingerprint = String(built.operator.fingerprint);
  const verify = await pairs(
    "the pack verifier",
    () =>
      run(
        entry("verify.ts", "verify", ["pack", pack, "--operator-fingerprint", fingerprint]),
        dir,
        "bernstein-verify pack",
      ),
    python !== undefined
      ? () =>
        run(
          [python, REFERENCE, "pack", pack, "--operator-fingerprint", fingerprint],
          dir,
          "reference pack verifier",
        )
      : undefined,
  );
  printPairs(`bernstein-verify pack, ${ENTRIES} entries`, verify, refLabel, {
    wall: "<= 0.33",
    peak: "<= 1",
  });
  report(
    "compliance",
    "bernstein-verify pack throughput",
    ENTRIES / (median(verify.ours.map((r) => r.ms)) / 1000),
    "entries/s",
  );
} finally {
  if (keep === undefined) await Deno.remove(dir, { recursive: true });
}
