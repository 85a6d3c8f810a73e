// Attachment figures (issue 7): one 20 MiB image through what a spawn does with it — read,
// sniff + SHA-256 (screening), store in CAS (hash again while streaming to disk, fsync), the
// `multimodal.attach` audit append, and encoding into the prompt (base64 block + the UTF-8 bytes
// the agent gets on stdin) — with the time of each phase and the process's peak memory.
// Each attach runs in a fresh child process, so the peak is that attach's own.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  attestAttachment,
  composePrompt,
  installIdSig,
  readSource,
  screenAttachment,
  worktreeIdOf,
} from "../../src/attachments/mod.ts";
import { AuditLog, ensureAuditKey } from "../../src/audit/mod.ts";
import { CasStore } from "../../src/cas/mod.ts";
import { systemRandom } from "../../src/io/mod.ts";
import { peakRssMiB, report } from "./_report.ts";

const SIZE = 20 * 1024 * 1024;
const RUNS = 3;
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

interface Phases {
  read_ms: number;
  screen_ms: number;
  attest_ms: number;
  encode_ms: number;
  total_ms: number;
  prompt_bytes: number;
  base_mib: number;
  peak_mib: number;
}

async function child(dir: string, image: string): Promise<void> {
  const key = await ensureAuditKey(join(dir, "audit.key"), systemRandom);
  const cas = new CasStore(join(dir, "cas"));
  const audit = new AuditLog(join(dir, "audit"), key);
  const base = peakRssMiB();
  const t0 = performance.now();
  const bytes = await readSource(image, "bench");
  const t1 = performance.now();
  const screened = screenAttachment(bytes, { path: "shot.png" }, {
    field: "bench",
    shownPath: "shot.png",
  });
  const t2 = performance.now();
  // The spawn-time attestation: CAS put (hashed again while written, fsynced) + audit event.
  const record = await attestAttachment(
    { mime: screened.mime, sha256: screened.sha256, bytes: screened.bytes },
    {
      cas,
      audit,
      installIdSig: installIdSig("0123456789abcdef"),
      workerId: "bench-a1",
      turnSeq: 0,
      worktreeId: worktreeIdOf(join(dir, "wt")),
    },
  );
  const t3 = performance.now();
  if (record.details.sha256 !== screened.sha256) throw new Error("attested the wrong digest");
  const prompt = composePrompt(
    [{ mime: screened.mime, sha256: screened.sha256, bytes: screened.bytes }],
    "Do the thing.\n",
  );
  const stdin = new TextEncoder().encode(prompt);
  const t4 = performance.now();
  await audit.close();
  const out: Phases = {
    read_ms: t1 - t0,
    screen_ms: t2 - t1,
    attest_ms: t3 - t2,
    encode_ms: t4 - t3,
    total_ms: t4 - t0,
    prompt_bytes: stdin.length,
    base_mib: base,
    peak_mib: peakRssMiB(),
  };
  console.log(JSON.stringify(out));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bernstein-bench-attach-" });
  try {
    const image = join(dir, "shot.png");
    const bytes = new Uint8Array(SIZE);
    for (let i = 0; i < SIZE; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
    bytes.set(PNG_MAGIC);
    await Deno.writeFile(image, bytes);
    const runs: Phases[] = [];
    for (let i = 0; i < RUNS; i++) {
      const work = join(dir, `run-${i}`);
      await Deno.mkdir(work);
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-q",
          "--frozen",
          "-P=dev",
          fileURLToPath(import.meta.url),
          "child",
          work,
          image,
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      if (out.code !== 0) throw new Error(`bench child failed with exit code ${out.code}`);
      runs.push(JSON.parse(new TextDecoder().decode(out.stdout).trim()) as Phases);
    }
    const m = (k: keyof Phases) => median(runs.map((r) => r[k]));
    const name = "attachments (20 MiB image)";
    report(name, "attach total (median of 3)", m("total_ms"), "ms");
    report(name, "  read", m("read_ms"), "ms");
    report(name, "  sniff + sha256", m("screen_ms"), "ms");
    report(name, "  CAS put + audit event", m("attest_ms"), "ms");
    report(name, "  encode prompt (base64+utf8)", m("encode_ms"), "ms");
    report(name, "prompt bytes", m("prompt_bytes") / (1024 * 1024), "MiB");
    report(name, "peak RSS before attach", m("base_mib"), "MiB");
    report(name, "peak RSS", m("peak_mib"), "MiB");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (Deno.args[0] === "child") {
  await child(Deno.args[1], Deno.args[2]);
} else {
  await main();
}
