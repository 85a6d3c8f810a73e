// Compliance pack figures on a 100 000-entry window: building the pack from a `.sdd/` tree
// (`buildProjectPack` plus the self-check, as `bernstein compliance pack` runs them) and
// `bernstein-verify pack` as an auditor runs it (verify.ts under the read-only permission set,
// as its own process), each with its wall time and peak memory; and, as the reference the pack
// verifier builds on, the lineage gate alone over the same entries in the `.sdd/` folder.
// Goals (issue 4): verify 100 000 entries in under 10 s and under 300 MB on the 2-core
// machines. Set BENCH_PACK_ENTRIES for another size.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  buildProjectPack,
  ensureOperatorSigningKey,
  verifyWrittenPack,
} from "../../src/compliance/store/mod.ts";
import { mapEnv, systemRandom } from "../../src/io/mod.ts";
import { signaturePath } from "../../src/lineage/mod.ts";
import {
  defaultGateWorkers,
  openDirectoryGateInput,
  runLineageGate,
} from "../../src/verify/mod.ts";
import { v8FlagsArg } from "../runtime_flags.ts";
import { sampleLog } from "../sample_pack.ts";
import { peakRssMiB, report, timeCommand } from "./_report.ts";

const ENTRIES = Number(Deno.env.get("BENCH_PACK_ENTRIES") ?? 100_000);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface ChildResult {
  ms: number;
  peakMiB: number;
  bytes?: number;
  fingerprint?: string;
  ok?: boolean;
}

async function writeFixture(dir: string, n: number): Promise<void> {
  // Spread over March 2026; 50 entries in February that the window builds on.
  const sample = sampleLog({ seed: 1, entries: n, before: 50, agents: 5, artefacts: 2000 });
  const sdd = join(dir, ".sdd");
  const lineage = join(sdd, "lineage");
  await Deno.mkdir(lineage, { recursive: true });
  const parts: Uint8Array[] = [];
  for (const e of sample.log) parts.push(e.line, new Uint8Array([0x0a]));
  await Deno.writeFile(join(lineage, "log.jsonl"), concat(parts));
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
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function child(mode: string, dir: string, n: number): Promise<void> {
  const start = performance.now();
  const result: ChildResult = { ms: 0, peakMiB: 0 };
  if (mode === "fixture") {
    await writeFixture(dir, n);
  } else if (mode === "build") {
    const sdd = join(dir, ".sdd");
    const key = await ensureOperatorSigningKey(sdd, systemRandom);
    const r = await buildProjectPack({
      sdd,
      org: "Bench Bank",
      since: "2026-03-01",
      until: "2026-03-31",
      builtAt: null,
      builder: "bernstein bench",
      compliance: {
        risk_paths: ["src/file_1*.ts"],
        remote_biometric_identification: false,
        retention_days: 183,
      },
      signer: key.signer,
      env: mapEnv({ BERNSTEIN_AUDIT_KEY_PATH: join(dir, "no-audit.key") }),
    });
    await Deno.writeFile(join(dir, "pack.zip"), r.zip);
    result.bytes = r.zip.length;
    result.fingerprint = key.fingerprint;
    const entries = r.facts.entry_count;
    // The self-check the CLI runs after writing (bernstein compliance pack does the same).
    const check = await verifyWrittenPack(join(dir, "pack.zip"), key.signer.publicKey);
    // The sample adds a fork and its merge: two entries more than asked.
    result.ok = check.ok && entries >= n;
    if (!result.ok) console.error(JSON.stringify(check.errors.slice(0, 5)), entries, n);
  } else if (mode === "gate") {
    // For comparison: the lineage gate alone over the same entries, from the .sdd/ folder.
    const opened = await openDirectoryGateInput({
      logPath: join(dir, ".sdd", "lineage", "log.jsonl"),
      cardsDir: join(dir, ".sdd", "agents"),
    });
    if (opened === undefined) throw new Error("no log");
    try {
      result.ok = (await runLineageGate(opened.input, { workers: defaultGateWorkers() })).ok;
    } finally {
      opened.close();
    }
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  result.ms = performance.now() - start;
  result.peakMiB = peakRssMiB();
  console.log(JSON.stringify(result));
}

async function run(mode: string, dir: string, n: number): Promise<ChildResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--frozen",
      "-P=dev",
      v8FlagsArg(),
      fileURLToPath(import.meta.url),
      `--child=${mode}`,
      dir,
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
  const [dir, n] = Deno.args.filter((a) => !a.startsWith("--child="));
  await child(childArg.slice("--child=".length), dir, Number(n));
} else {
  const dir = await Deno.makeTempDir({ prefix: "bernstein-bench-pack-" });
  try {
    const fixture = await run("fixture", dir, ENTRIES);
    report("compliance", `fixture: ${ENTRIES} signed entries on disk`, fixture.ms / 1000, "s");
    const gate = await run("gate", dir, ENTRIES);
    if (!gate.ok) throw new Error("the fixture does not pass the lineage gate");
    report(
      "compliance",
      `reference: lineage gate alone, ${ENTRIES} entries (.sdd/)`,
      gate.ms / 1000,
      "s",
    );
    report("compliance", "reference: lineage gate alone: peak memory", gate.peakMiB, "MiB");
    const build = await run("build", dir, ENTRIES);
    if (!build.ok) throw new Error("the built pack did not pass its self-check");
    report("compliance", `pack build, ${ENTRIES} entries (incl. self-check)`, build.ms / 1000, "s");
    report("compliance", "pack build: peak memory", build.peakMiB, "MiB");
    report("compliance", "pack size", (build.bytes ?? 0) / (1 << 20), "MiB");
    const verify = await timeCommand([
      Deno.execPath(),
      "run",
      "-q",
      "--frozen",
      `--config=${join(ROOT, "deno.json")}`,
      "-P=verify",
      v8FlagsArg(),
      join(ROOT, "verify.ts"),
      "pack",
      join(dir, "pack.zip"),
      "--operator-fingerprint",
      build.fingerprint ?? "",
    ]);
    if (verify.code !== 0) throw new Error(`bernstein-verify pack exited ${verify.code}`);
    report("compliance", `bernstein-verify pack, ${ENTRIES} entries`, verify.ms / 1000, "s");
    report("compliance", "bernstein-verify pack: peak memory", verify.peakMiB, "MiB");
    report(
      "compliance",
      "bernstein-verify pack throughput",
      ENTRIES / (verify.ms / 1000),
      "entries/s",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
