// `bernstein demo` (`deno task demo`): the main job end to end on a throw-away repository with
// the scripted agent — plan, parallel agents in worktrees, a failed check and its recovery step,
// a refused gate, merges, then the record checked the way an auditor would, ending with the
// run's signed checkpoint.
import type { Git, RunReporter, RunSummary } from "../orchestrator/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";

/**
 * The demo plan: three parallel steps, a dependent stage, a check that fails and the recovery
 * step it routes to, and one step the run_config gate refuses.
 */
export const DEMO_PLAN = `# The bernstein demo plan (scripted agent: it follows the @agent lines).
name: greeting-service
description: Add a greeting module with docs and tests.
cli: scripted

stages:
  - name: build
    steps:
      - title: Add the greeting module
        role: backend
        scope: small
        files: [src/greet.ts]
        description: |
          Create src/greet.ts exporting greet(name).
          @agent write src/greet.ts export function greet(name: string): string { return \`Hello, \${name}!\`; }
          @agent summary added greet()
        completion_signals:
          - file_contains: { path: src/greet.ts, contains: "export function greet" }
      - title: Add the farewell module
        role: backend
        scope: small
        files: [src/farewell.ts]
        description: |
          Create src/farewell.ts exporting farewell(name).
          @agent write src/farewell.ts export function farewell(name: string): string { return \`Goodbye, \${name}.\`; }
          @agent summary added farewell()
        completion_signals:
          - path_exists: src/farewell.ts
      - title: Write the usage notes
        role: docs
        priority: 3
        scope: small
        files: [docs/usage.md]
        description: |
          Describe both modules in docs/usage.md.
          @agent write docs/usage.md <<END
          # Usage
          greet("Ada") returns "Hello, Ada!"; farewell("Ada") returns "Goodbye, Ada."
          END
        completion_signals:
          - file_contains: { path: docs/usage.md, regex: "^# Usage" }

  - name: verify
    depends_on: [build]
    steps:
      - title: Test the greeting module
        role: qa
        files: [tests/greet_test.ts]
        description: |
          @agent write tests/greet_test.ts import { greet } from "../src/greet.ts"; if (greet("Ada") !== "Hello, Ada!") throw new Error("greet");
          @agent summary added a test for greet()
        completion_signals:
          - glob_exists: "tests/*_test.ts"

  - name: check
    depends_on: [build]
    steps:
      - title: Check the farewell module is tested
        role: qa
        scope: small
        description: |
          Only checks: the completion signal needs a farewell test, which nobody wrote yet.
          @agent summary looked for a farewell test
        completion_signals:
          - path_exists: tests/farewell_test.ts

  # A recovery step: it runs only because the check stage failed, with its failure receipt.
  - name: fix
    depends_on:
      - stage: check
        condition: "status == 'failed'"
    steps:
      - title: Add the missing farewell test
        role: qa
        files: [tests/farewell_test.ts]
        description: |
          @agent write tests/farewell_test.ts import { farewell } from "../src/farewell.ts"; if (farewell("Ada") !== "Goodbye, Ada.") throw new Error("farewell");
          @agent summary added the farewell test the check asked for

  - name: tune
    steps:
      - title: Raise the agent limit
        role: ops
        files: [bernstein.yaml]
        description: |
          This agent tries to edit bernstein's own configuration: the run_config gate refuses it.
          @agent write bernstein.yaml max_agents: 64
`;

const DEMO_CONFIG =
  `# Demo tuning: short ticks, no retry backoff, no retries, so the demo takes seconds.
tuning:
  orchestrator:
    tick_interval_s: 0.5
  spawn:
    spawn_backoff_base_s: 0
  tasks:
    default_max_retries: 0
`;

/** What every demo step works with: the throw-away folder, its repository and environment. */
interface DemoPlace {
  ctx: CommandContext;
  /** The temporary folder (audit key, pack, repository). */
  dir: string;
  /** The repository inside it. */
  repo: string;
  /** Its `.sdd/`. */
  sdd: string;
  /** The operator's environment with the demo's own audit key. */
  env: { get(name: string): string | undefined };
  /** Prints a step heading. */
  say(text: string): void;
}

/** What the demo run produced (step 2). */
interface DemoRun {
  /** The run summary. */
  summary: RunSummary;
  /** Merges refused (not recovered). */
  refused: { task_id: string; reason: string; branch: string }[];
  /** Tasks a recovery step recovered. */
  recovered: string[];
  /** The `task.routed` event of the recovery step (its receipt hash). */
  routed: { [key: string]: unknown } | undefined;
}

async function demo(ctx: CommandContext): Promise<number> {
  const { join } = await import("node:path");
  const { sddOf } = await import("../io/mod.ts");
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bernstein-demo-" }));
  const place: DemoPlace = {
    ctx,
    dir,
    repo: join(dir, "repo"),
    sdd: sddOf(join(dir, "repo")),
    // The demo never touches the operator's own audit key or state.
    env: {
      get: (name: string) =>
        name === "BERNSTEIN_AUDIT_KEY_PATH" ? join(dir, "audit.key") : ctx.env.get(name),
    },
    say: (text: string) => ctx.out.line(ctx.out.style("bold", text)),
  };
  const git = await makeRepository(place);
  const run = await runPlan(place, git);
  const audit = await checkAudit(place);
  const lineageOk = await checkLineage(place, audit.operatorPublicKey);
  const receiptOk = await checkReceipt(place, run, audit.key);
  const scorecardOk = await checkScorecard(place, run.summary);
  const pack = await buildAndVerifyPack(place);
  const reportOk = await writeReport(place, run.summary.run_id, ctx.flags.keep === true);
  const checkpointOk = await checkCheckpoint(place, pack.fingerprint);
  const ok = audit.ok && lineageOk && receiptOk && scorecardOk && pack.ok && reportOk &&
    checkpointOk && run.summary.merges.length === 5 && run.refused.length === 1 &&
    run.recovered.length === 1;
  ctx.out.line("");
  ctx.out.line(
    ok
      ? "demo complete: 5 steps merged (one a recovery step), 1 refused by its gate; the record, the receipt, the pack and the checkpoint verify."
      : "demo FAILED: see above",
  );
  if (ctx.flags.keep === true) {
    ctx.out.line(
      `the repository stays at ${place.repo} (explore: cd ${place.repo} && bernstein status)`,
    );
  } else await Deno.remove(dir, { recursive: true });
  return ok ? 0 : 1;
}

/** Step 1: the repository on a feature branch, with the plan and the demo tuning. */
async function makeRepository(place: DemoPlace): Promise<Git> {
  const { join } = await import("node:path");
  const orchestrator = await import("../orchestrator/mod.ts");
  const { repo, env } = place;
  await Deno.mkdir(repo);
  const git = new orchestrator.Git(repo, {
    env,
    identity: { name: "Demo Operator", email: "operator@demo.invalid" },
  });
  place.say(`1/8 a throw-away repository at ${repo}`);
  await git.run(["init", "--quiet", "-b", "main"]);
  await Deno.writeTextFile(join(repo, "README.md"), "# greeting-service\n");
  await Deno.writeTextFile(join(repo, "plan.yaml"), DEMO_PLAN);
  await git.commitAll(repo, "initial commit");
  await git.run(["checkout", "--quiet", "-b", "feature/greetings"]);
  const { sddFile } = await import("../io/mod.ts");
  await Deno.mkdir(place.sdd, { recursive: true });
  await Deno.writeTextFile(sddFile(place.sdd, "config"), DEMO_CONFIG);
  place.ctx.out.line(
    "    main + feature/greetings; plan.yaml: 7 steps in 5 stages, one a recovery step (scripted agent)",
  );
  return git;
}

/** Step 2: `bernstein run plan.yaml`, then what merged, what was refused and recovered. */
async function runPlan(place: DemoPlace, git: Git): Promise<DemoRun> {
  const io = await import("../io/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const { ctx } = place;
  place.say("2/8 bernstein run plan.yaml");
  const reporter: RunReporter = ctx.out.color
    ? new orchestrator.LiveReporter((text) => ctx.out.stdout.write(text), {
      width: terminalColumns(),
    })
    : new orchestrator.LineReporter((line) => ctx.out.line(`    ${line}`));
  // The routed recovery step's receipt hash, as the run announces it.
  let routed: { [key: string]: unknown } | undefined;
  const report = await orchestrator.executeRun({ planPath: "plan.yaml" }, {
    cwd: place.repo,
    env: place.env,
    clock: io.systemClock,
    random: io.systemRandom,
    reporter: {
      event: (e) => {
        if (e.type === "task.routed") routed = e;
        reporter.event(e);
      },
      agents: (rows, progress) => reporter.agents?.(rows, progress),
      close: () => reporter.close?.(),
    },
    warn: (w) => ctx.out.warn(w),
  });
  if (report.kind !== "run") throw new Error("the demo run did not run");
  const s = report.summary;
  const recovered = s.recovered;
  const refused = (s.kept_branches as DemoRun["refused"])
    .filter((k) => !recovered.includes(k.task_id));
  ctx.out.line(
    `    run ${s.run_id}: ${s.health} — ${
      (s.merges as unknown[]).length
    } merged, ${refused.length} refused, ${recovered.length} recovered`,
  );
  for (const k of refused) {
    ctx.out.line(`    refused ${k.task_id}: ${k.reason.split("\n")[0]} (work kept on ${k.branch})`);
  }
  for (const id of recovered) {
    ctx.out.line(`    recovered ${id}: its recovery step ran with a failure receipt and merged`);
  }
  const signed = s.checkpoints as { log: string; size: number; root: string }[];
  for (const c of signed) {
    ctx.out.line(
      `    signed a checkpoint of the ${c.log} log: ${c.size} lines, root ${c.root.slice(0, 16)}…`,
    );
  }
  const log = await git.text(["log", "--oneline", "--first-parent", "feature/greetings"]);
  for (const line of log.split("\n").slice(0, 6)) ctx.out.line(`    ${line}`);
  return { summary: s, refused, recovered, routed };
}

/** Step 3: the audit chain verifies with its key and matches its signed checkpoint. */
async function checkAudit(place: DemoPlace) {
  const { join } = await import("node:path");
  const audit = await import("../audit/mod.ts");
  const compliance = await import("../compliance/project/mod.ts");
  place.say("3/8 the audit chain (HMAC) verifies, and matches its signed checkpoint");
  const key = await audit.readAuditKey(join(place.dir, "audit.key"));
  const operator = await compliance.readOperatorSigningKey(
    join(place.sdd, compliance.OPERATOR_KEY_FILE),
  );
  const auditDir = (await import("../io/mod.ts")).sddFolder(place.sdd, "audit");
  const chain = await audit.verifyAuditLog(auditDir, key, {
    checkpoints: await audit.readAuditCheckpoints(auditDir, operator.signer.publicKey),
  });
  place.ctx.out.line(
    `    ${
      chain.ok ? "PASS" : "FAIL"
    }: ${chain.records} records in ${chain.segments.length} segment(s); ` +
      `latest checkpoint covers ${chain.checkpoint?.latest?.size ?? 0} of them`,
  );
  return { ok: chain.ok, key, operatorPublicKey: operator.signer.publicKey };
}

/** Step 4: the signed lineage log passes the gate, its checkpoint checked. */
async function checkLineage(place: DemoPlace, operatorPublicKey: Uint8Array): Promise<boolean> {
  const verify = await import("../verify/mod.ts");
  const lineage = await import("../lineage/store/mod.ts");
  place.say("4/8 the signed lineage log passes the gate");
  const operatorKey = await lineage.resolveOperatorHmacKey({ env: place.env });
  // The run checkpoints its logs: their signatures are checked with the project's operator key.
  const opened = await verify.openDirectoryGateInput({
    logPath: lineage.lineagePaths(place.sdd).logPath,
    cardsDir: lineage.lineagePaths(place.sdd).cardsDir,
    operatorKey,
    operatorPublicKey,
  });
  if (opened === undefined) throw new Error("the demo run recorded no lineage");
  const gate = await verify.runLineageGate(opened.input).finally(() => opened.close());
  place.ctx.out.line(
    `    ${
      verify.gateVerdict(gate)
    }: ${gate.entries} entries on ${gate.artefacts} files, ${gate.cards} agent cards, HMAC checked; ` +
      `the run's checkpoint matches (${
        gate.checkpoint?.not_checkpointed ?? "?"
      } not yet checkpointed)`,
  );
  for (const issue of gate.issues) place.ctx.out.line(`    ${issue.kind}: ${issue.message}`);
  return gate.ok;
}

/** Step 5: the recovery step's failure receipt resolves on the run's spine. */
async function checkReceipt(
  place: DemoPlace,
  run: DemoRun,
  key: { bytes: Uint8Array },
): Promise<boolean> {
  const lineage = await import("../lineage/store/mod.ts");
  const { out } = place.ctx;
  const runId = run.summary.run_id;
  place.say("5/8 the recovery step's failure receipt resolves on the run's spine");
  const receiptHash = String(run.routed?.receipt_hash ?? "");
  const receipt = await lineage.verifyRecoveryReceipt({
    paths: lineage.lineagePaths(place.sdd),
    runId,
    receiptHash,
    auditKey: key.bytes,
  });
  out.line(`    $ bernstein lineage verify ${runId} --receipt-hash ${receiptHash.slice(0, 23)}…`);
  out.line(
    `    ${receipt.ok ? "PASS" : "FAIL"}: ${receipt.receipt?.recovery_task ?? "?"} recovers ${
      receipt.receipt?.source_task ?? "?"
    } (${receipt.receipt?.source_status ?? "?"}; ${receipt.receipt?.condition ?? "?"}), ` +
      `entry ${receipt.entry?.line ?? "?"} of ${receipt.count} on an intact spine`,
  );
  for (const p of receipt.problems) out.line(`    ${p.where}: ${p.message}`);
  return receipt.ok;
}

/** Step 6: the run's scorecard matches its work ledger. */
async function checkScorecard(place: DemoPlace, s: RunSummary): Promise<boolean> {
  const ledger = await import("../ledger/mod.ts");
  place.say("6/8 the run's scorecard matches its work ledger");
  const check = await ledger.verifyScorecard(place.sdd, s.run_id);
  place.ctx.out.line(
    `    ${check.ok ? "PASS" : "FAIL"}: outcome ${
      (s.scorecard as { outcome: string }).outcome
    }, ${check.description}`,
  );
  return check.ok;
}

/** Step 7: `bernstein compliance pack` of today, checked offline by bernstein-verify. */
async function buildAndVerifyPack(place: DemoPlace): Promise<{ ok: boolean; fingerprint: string }> {
  const { join } = await import("node:path");
  const io = await import("../io/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const { out } = place.ctx;
  place.say("7/8 a compliance pack, verified offline by bernstein-verify (read-only)");
  const day = new Date(io.systemClock.nowMs()).toISOString().slice(0, 10);
  const packPath = join(place.dir, "compliance-pack.zip");
  const self = orchestrator.selfCommand(place.env);
  const built = await io.runProcess(
    [
      ...self.argv,
      ...["compliance", "pack", "--since", day, "--until", day, "--org", "Demo Org"],
      ...["--output", packPath, "--json"],
    ],
    {
      cwd: place.repo,
      env: {
        ...await demoChildEnv(place),
        ...self.env,
        BERNSTEIN_AUDIT_KEY_PATH: join(place.dir, "audit.key"),
      },
      timeoutMs: 120_000,
    },
  );
  if (built.code !== 0) {
    out.line(`    pack build failed: ${io.outputText(built.stderr).trim()}`);
    return { ok: false, fingerprint: "" };
  }
  const packInfo = JSON.parse(io.outputText(built.stdout));
  const fingerprint = String(packInfo.operator.fingerprint);
  out.line(`    ${packPath}: ${packInfo.entries} entries, operator key fingerprint ${fingerprint}`);
  const verified = await runVerifier(place, [
    ...["pack", packPath, "--operator-fingerprint", fingerprint],
  ]);
  out.line(
    `    $ bernstein-verify pack compliance-pack.zip --operator-fingerprint ${
      fingerprint.slice(0, 16)
    }…`,
  );
  for (const line of verified.stdout.trim().split("\n")) out.line(`    ${line}`);
  return { ok: verified.code === 0, fingerprint };
}

/** The run's report, as `bernstein runs report` writes it (verification done now). */
async function writeReport(place: DemoPlace, runId: string, keep: boolean): Promise<boolean> {
  const io = await import("../io/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const view = await import("../report/mod.ts");
  const sdd = place.sdd;
  const records = await orchestrator.loadRunRecords(sdd, runId, { env: place.env, verify: true });
  const model = view.buildRunModel(records, { nowMs: io.systemClock.nowMs() });
  const reportPath = io.runFile(sdd, runId, "report");
  await io.writeFileAtomic(reportPath, view.renderReportHtml(model));
  const v = model.verification;
  place.ctx.out.line(
    `    the run's report: ${model.attempts.length} attempts on ${model.lanes} agent slot(s), ` +
      `audit ${v.audit.status}, lineage ${v.lineage.status}, scorecard ${v.scorecard.status}` +
      (keep ? ` — ${reportPath}` : " (--keep keeps it)"),
  );
  return model.attempts.length === 7 && model.refused_merges.length === 1 &&
    [v.audit, v.lineage, v.scorecard].every((c) => c.status === "pass");
}

/** Step 8: the run's signed checkpoint covers the lineage log, checked offline. */
async function checkCheckpoint(place: DemoPlace, fingerprint: string): Promise<boolean> {
  const { out } = place.ctx;
  const lineage = await import("../lineage/store/mod.ts");
  place.say("8/8 the run's signed checkpoint covers the lineage log, checked offline");
  const chained = await runVerifier(place, [
    ...["chain", "src/greet.ts", "--lineage-dir", lineage.lineagePaths(place.sdd).lineageDir],
    ...["--operator-fingerprint", fingerprint],
  ]);
  out.line(
    `    $ bernstein-verify chain src/greet.ts --lineage-dir .sdd/lineage --operator-fingerprint ${
      fingerprint.slice(0, 16)
    }…`,
  );
  for (const line of chained.stdout.trim().split("\n")) out.line(`    ${line}`);
  return chained.code === 0 && /log matches \d+ checkpoint\(s\)/.test(chained.stdout);
}

/** Runs bernstein-verify with `args` in the demo folder: its exit code and stdout. */
async function runVerifier(
  place: DemoPlace,
  args: string[],
): Promise<{ code: number; stdout: string }> {
  const io = await import("../io/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const verifier = orchestrator.verifyCommand(place.env);
  const result = await io.runProcess([...verifier.argv, ...args], {
    cwd: place.dir,
    env: { ...await demoChildEnv(place), ...verifier.env },
    timeoutMs: 120_000,
  });
  return { code: result.code, stdout: io.outputText(result.stdout) };
}

/** The environment of the demo's own child commands: PATH, HOME and little else. */
async function demoChildEnv(place: DemoPlace): Promise<Record<string, string>> {
  const io = await import("../io/mod.ts");
  return io.buildChildEnv(DEMO_CHILD_ENV, place.env, {
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  });
}

/** PATH and HOME for the demo's own child commands (nothing else from the operator). */
const DEMO_CHILD_ENV = ["PATH", "HOME", "DENO_DIR", "TMPDIR"];

/** `bernstein demo`. */
export const DEMO_COMMANDS: CommandSpec[] = [
  {
    path: ["demo"],
    summary: "Run the main job end to end on a throw-away repository (scripted agent).",
    description:
      "Creates a temporary git repository on a feature branch, runs a plan of parallel steps\n" +
      "with the scripted agent (a check fails and routes its recovery step, one step fails the\n" +
      "run_config gate and is reported, the rest merge), then verifies the audit chain, the\n" +
      "lineage gate, the recovery receipt and the scorecard, has bernstein-verify check a\n" +
      "compliance pack offline, writes the run's report, and ends with the run's signed\n" +
      "checkpoint checked against the lineage log. Needs a source checkout (the scripted agent\n" +
      "runs with deno). Exit 0 when every stage behaves as described.",
    flags: [{
      name: "keep",
      type: "boolean",
      help: "Keep the demo repository to explore it afterwards.",
    }],
    run: demo,
  },
];

/** Columns of the terminal on stdout (100 when it cannot be asked). */
function terminalColumns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 100;
  }
}
