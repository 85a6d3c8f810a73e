// The fintech reference scenario (SOC 2 framing): four agents harden a small payments module
// in parallel in a real run; a rogue agent on a second host edits the ledger from the version
// it last saw, and its signed entry reaches the shared log without a steward merge. The pack
// fails with the fork named, `bernstein lineage merge` resolves it, the re-pack passes.
import { join, relative } from "node:path";
import { openLineageStore, resolveOperatorHmacKey } from "../../src/lineage/store/mod.ts";
import { expectExit, type Project } from "./_project.ts";
import { pack, runPlan, utcDay, verifyPack } from "./_steps.ts";
import type { Scenario } from "./_scenario.ts";

const NAME = "fintech";
const ORG = "Acme Payments Ltd";

/** Files of the initial commit. */
const FILES: Record<string, string> = {
  "README.md": "# acme-payments\n\nCard payments: ledger, fees, refunds, currencies.\n",
  "plans/scaffold.yaml": `# Run 1: one agent writes the payments module.
name: payments-scaffold
cli: scripted
stages:
  - name: scaffold
    steps:
      - title: Write the payments module
        role: backend
        files: [src/payments/ledger.ts, src/payments/fees.ts, src/payments/refunds.ts, src/payments/currency.ts]
        description: |
          @agent write src/payments/ledger.ts export function post(entries: { account: string; minor: number }[]): void { if (entries.reduce((s, e) => s + e.minor, 0) !== 0) throw new Error("unbalanced"); }
          @agent write src/payments/fees.ts export function fee(minor: number): number { return Math.round(minor * 0.029) + 30; }
          @agent write src/payments/refunds.ts export function refundable(captured: number, refunded: number): number { return captured - refunded; }
          @agent write src/payments/currency.ts export const MINOR_UNITS: Record<string, number> = { EUR: 2, USD: 2 };
          @agent summary wrote the payments module
`,
  "plans/harden.yaml": `# Run 2: four agents harden the module in parallel, one file each.
name: payments-hardening
cli: scripted
max_agents: 4
stages:
  - name: harden
    steps:
      - title: Make ledger postings idempotent
        role: backend
        files: [src/payments/ledger.ts]
        description: |
          @agent write src/payments/ledger.ts <<END
          const seen = new Set<string>();
          export function post(key: string, entries: { account: string; minor: number }[]): boolean {
            if (entries.reduce((s, e) => s + e.minor, 0) !== 0) throw new Error("unbalanced");
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          }
          END
          @agent summary postings carry an idempotency key
      - title: Round fees half-even
        role: backend
        files: [src/payments/fees.ts]
        description: |
          @agent write src/payments/fees.ts export function fee(minor: number): number { const x = minor * 0.029; const f = Math.floor(x); const r = x - f === 0.5 ? (f % 2 === 0 ? f : f + 1) : Math.round(x); return r + 30; }
          @agent summary fees round half-even
      - title: Cap refunds at the captured amount
        role: backend
        files: [src/payments/refunds.ts]
        description: |
          @agent write src/payments/refunds.ts export function refundable(captured: number, refunded: number): number { return Math.max(0, captured - refunded); }
          @agent summary refunds never exceed the capture
      - title: Add ISO 4217 minor units
        role: backend
        files: [src/payments/currency.ts]
        description: |
          @agent write src/payments/currency.ts export const MINOR_UNITS: Record<string, number> = { EUR: 2, USD: 2, JPY: 0, KWD: 3 };
          @agent summary JPY and KWD minor units
`,
};

const CONFIG = `# Fintech example: payments code is the high-risk path of the pack.
compliance:
  risk_paths: ["src/payments/**"]
tuning:
  orchestrator:
    tick_interval_s: 0.5
  spawn:
    spawn_backoff_base_s: 0
  tasks:
    default_max_retries: 0
`;

/** What the rogue host writes to the ledger: a "hotfix" that skips the balance check. */
const ROGUE_LEDGER =
  "export function post(entries: { account: string; minor: number }[]): void { /* hotfix: skip the balance check */ void entries; }\n";

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory) await copyTree(a, b);
    else if (e.isFile) await Deno.copyFile(a, b);
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      if (e.isDirectory) await walk(join(d, e.name));
      else if (e.isFile) out.push(relative(dir, join(d, e.name)));
    }
  };
  await walk(dir).catch(() => {});
  return out.sort();
}

/**
 * The rogue host: a copy of the project's lineage and agent cards taken after run 1 (the host
 * synced then), where an agent writes the ledger through the real lineage store. Its entry's
 * parent is the run-1 version it saw. Then its new log line, signature and card are replayed
 * onto the shared `.sdd/` (what syncing two hosts' logs without a steward merge does).
 */
class RogueHost {
  readonly sdd: string;
  constructor(dir: string) {
    this.sdd = join(dir, "rogue-host", ".sdd");
  }

  async snapshot(project: string): Promise<void> {
    await copyTree(join(project, ".sdd", "lineage"), join(this.sdd, "lineage"));
    await copyTree(join(project, ".sdd", "agents"), join(this.sdd, "agents"));
  }

  async write(auditKeyPath: string): Promise<string> {
    const store = openLineageStore({
      sdd: this.sdd,
      strict: true,
      operatorKey: () =>
        resolveOperatorHmacKey({
          env: { get: (n) => (n === "BERNSTEIN_AUDIT_KEY_PATH" ? auditKeyPath : undefined) },
        }),
    });
    const r = await store.recordWrite(
      "src/payments/ledger.ts",
      new TextEncoder().encode(ROGUE_LEDGER),
      { agent: "rogue-hotfix-bot", toolCallId: "hotfix-4711", spanId: "rogue-host" },
    );
    if (r.status !== "recorded") throw new Error("the rogue write was not recorded");
    return r.entryHash;
  }

  /** Appends the rogue's new log lines and copies its new signatures and cards. */
  async replayOnto(project: string, snapshotLogBytes: number): Promise<void> {
    const rogueLog = await Deno.readFile(join(this.sdd, "lineage", "log.jsonl"));
    const added = rogueLog.slice(snapshotLogBytes);
    const main = join(project, ".sdd");
    for (const sub of ["lineage/signatures", "agents"]) {
      const have = new Set(await filesUnder(join(main, sub)));
      for (const f of await filesUnder(join(this.sdd, sub))) {
        if (have.has(f)) continue;
        await Deno.mkdir(join(main, sub, f, ".."), { recursive: true });
        await Deno.copyFile(join(this.sdd, sub, f), join(main, sub, f));
      }
    }
    const log = await Deno.open(join(main, "lineage", "log.jsonl"), { append: true });
    try {
      await log.write(added);
    } finally {
      log.close();
    }
  }
}

async function run(p: Project): Promise<void> {
  const since = utcDay();
  p.say("1. Run 1: one agent writes the payments module");
  const first = await runPlan(p, "plans/scaffold.yaml");
  if (first.health !== "HEALTHY") throw new Error("run 1 did not end HEALTHY");

  // The second host syncs the lineage now, then works on its own.
  const rogue = new RogueHost(p.dir);
  await rogue.snapshot(p.repo);
  const snapshotLogBytes = (await Deno.stat(join(p.repo, ".sdd", "lineage", "log.jsonl"))).size;

  p.say("2. Run 2: four agents harden the module in parallel");
  const second = await runPlan(p, "plans/harden.yaml");
  if (second.health !== "HEALTHY" || second.merged.length !== 4) {
    throw new Error(`run 2: ${second.health}, ${second.merged.length} merged (expected 4)`);
  }

  p.say("3. A rogue agent on a second host edits the ledger from run 1's version");
  p.note(
    "rogue-hotfix-bot writes src/payments/ledger.ts through the real lineage store on a\n" +
      "host whose copy of .sdd/lineage was synced after run 1. Its signed entry is replayed\n" +
      "onto the shared log (line, signature, card), then the projections are rebuilt:",
  );
  await rogue.write(join(p.dir, "audit.key"));
  await rogue.replayOnto(p.repo, snapshotLogBytes);
  expectExit(await p.bernstein(["lineage", "reindex"]), 0, "lineage reindex");
  expectExit(await p.bernstein(["lineage", "forks"]), 1, "lineage forks (a fork)");
  p.note(
    "The operator's own gate (with the audit key): every signature and HMAC holds (the rogue\n" +
      "host had the team's operator key), and still the structure fails:",
  );
  expectExit(await p.bernstein(["lineage", "gate"]), 1, "lineage gate (a fork)");

  const until = utcDay();
  p.say("4. The pack: its self-check fails, and so does the auditor's verifier");
  await pack(p, "pack-with-fork.zip", ORG, since, until, 1);
  await verifyPack(p, NAME, "pack-with-fork.zip", 1);

  p.say("5. The steward merge resolves the fork; the re-pack passes");
  p.note("first-writer keeps the version run 2 merged into the repository (the earlier write).");
  expectExit(
    await p.bernstein(["lineage", "merge", "src/payments/ledger.ts", "--policy", "first-writer"]),
    0,
    "lineage merge",
  );
  expectExit(await p.bernstein(["lineage", "forks"]), 0, "lineage forks (resolved)");
  expectExit(await p.bernstein(["lineage", "gate"]), 0, "lineage gate (resolved)");
  await pack(p, "pack.zip", ORG, since, utcDay(), 0);
  await verifyPack(p, NAME, "pack.zip", 0);
}

/** The fintech scenario. */
export const FINTECH: Scenario = {
  name: NAME,
  folder: "fintech",
  files: FILES,
  config: CONFIG,
  packs: ["pack-with-fork.zip", "pack.zip"],
  run,
};
