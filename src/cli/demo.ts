// `bernstein demo` (`deno task demo`): the main job end to end on a throw-away repository with
// the scripted agent — plan, parallel agents in worktrees, a failed check and its recovery step,
// a refused gate, merges, then the record checked the way an auditor would, ending with the
// run's signed checkpoint.
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

async function demo(ctx: CommandContext): Promise<number> {
  const { join } = await import("node:path");
  const io = await import("../io/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const keep = ctx.flags.keep === true;
  const say = (text: string) => ctx.out.line(ctx.out.style("bold", text));
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bernstein-demo-" }));
  const repo = join(dir, "repo");
  await Deno.mkdir(repo);
  // The demo never touches the operator's own audit key or state.
  const env = {
    get: (name: string) =>
      name === "BERNSTEIN_AUDIT_KEY_PATH" ? join(dir, "audit.key") : ctx.env.get(name),
  };
  const git = new orchestrator.Git(repo, {
    env,
    identity: { name: "Demo Operator", email: "operator@demo.invalid" },
  });

  say(`1/8 a throw-away repository at ${repo}`);
  await git.run(["init", "--quiet", "-b", "main"]);
  await Deno.writeTextFile(join(repo, "README.md"), "# greeting-service\n");
  await Deno.writeTextFile(join(repo, "plan.yaml"), DEMO_PLAN);
  await git.commitAll(repo, "initial commit");
  await git.run(["checkout", "--quiet", "-b", "feature/greetings"]);
  await Deno.mkdir(join(repo, ".sdd"), { recursive: true });
  await Deno.writeTextFile(join(repo, ".sdd", "config.yaml"), DEMO_CONFIG);
  ctx.out.line(
    "    main + feature/greetings; plan.yaml: 7 steps in 5 stages, one a recovery step (scripted agent)",
  );

  say("2/8 bernstein run plan.yaml");
  const reporter: import("../orchestrator/mod.ts").RunReporter = ctx.out.color
    ? new orchestrator.LiveReporter((text) => ctx.out.stdout.write(text), {
      width: terminalColumns(),
    })
    : new orchestrator.LineReporter((line) => ctx.out.line(`    ${line}`));
  // The routed recovery step's receipt hash, as the run announces it.
  let routed: { [key: string]: unknown } | undefined;
  const report = await orchestrator.executeRun({ planPath: "plan.yaml" }, {
    cwd: repo,
    env,
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
  const refused = (s.kept_branches as { task_id: string; reason: string; branch: string }[])
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

  say("3/8 the audit chain (HMAC) verifies, and matches its signed checkpoint");
  const audit = await import("../audit/mod.ts");
  const key = await audit.readAuditKey(join(dir, "audit.key"));
  const compliance = await import("../compliance/project/mod.ts");
  const operator = await compliance.readOperatorSigningKey(
    join(repo, ".sdd", compliance.OPERATOR_KEY_FILE),
  );
  const auditDir = join(repo, ".sdd", "audit");
  const chain = await audit.verifyAuditLog(auditDir, key, {
    checkpoints: await audit.readAuditCheckpoints(auditDir, operator.signer.publicKey),
  });
  ctx.out.line(
    `    ${
      chain.ok ? "PASS" : "FAIL"
    }: ${chain.records} records in ${chain.segments.length} segment(s); ` +
      `latest checkpoint covers ${chain.checkpoint?.latest?.size ?? 0} of them`,
  );

  say("4/8 the signed lineage log passes the gate");
  const verify = await import("../verify/mod.ts");
  const lineage = await import("../lineage/store/mod.ts");
  const operatorKey = await lineage.resolveOperatorHmacKey({ env });
  // The run checkpoints its logs: their signatures are checked with the project's operator key.
  const opened = await verify.openDirectoryGateInput({
    logPath: join(repo, ".sdd", "lineage", "log.jsonl"),
    cardsDir: join(repo, ".sdd", "agents"),
    operatorKey,
    operatorPublicKey: operator.signer.publicKey,
  });
  if (opened === undefined) throw new Error("the demo run recorded no lineage");
  const gate = await verify.runLineageGate(opened.input).finally(() => opened.close());
  ctx.out.line(
    `    ${
      verify.gateVerdict(gate)
    }: ${gate.entries} entries on ${gate.artefacts} files, ${gate.cards} agent cards, HMAC checked; ` +
      `the run's checkpoint matches (${
        gate.checkpoint?.not_checkpointed ?? "?"
      } not yet checkpointed)`,
  );
  for (const issue of gate.issues) ctx.out.line(`    ${issue.kind}: ${issue.message}`);

  say("5/8 the recovery step's failure receipt resolves on the run's spine");
  const receiptHash = String(routed?.receipt_hash ?? "");
  const receipt = await lineage.verifyRecoveryReceipt({
    paths: lineage.lineagePaths(join(repo, ".sdd")),
    runId: s.run_id,
    receiptHash,
    auditKey: key.bytes,
  });
  ctx.out.line(
    `    $ bernstein lineage verify ${s.run_id} --receipt-hash ${receiptHash.slice(0, 23)}…`,
  );
  ctx.out.line(
    `    ${receipt.ok ? "PASS" : "FAIL"}: ${receipt.receipt?.recovery_task ?? "?"} recovers ${
      receipt.receipt?.source_task ?? "?"
    } (${receipt.receipt?.source_status ?? "?"}; ${receipt.receipt?.condition ?? "?"}), ` +
      `entry ${receipt.entry?.line ?? "?"} of ${receipt.count} on an intact spine`,
  );
  for (const p of receipt.problems) ctx.out.line(`    ${p.where}: ${p.message}`);

  say("6/8 the run's scorecard matches its work ledger");
  const ledger = await import("../ledger/mod.ts");
  const check = await ledger.verifyScorecard(join(repo, ".sdd"), s.run_id);
  ctx.out.line(
    `    ${check.ok ? "PASS" : "FAIL"}: outcome ${
      (s.scorecard as { outcome: string }).outcome
    }, ${check.description}`,
  );

  say("7/8 a compliance pack, verified offline by bernstein-verify (read-only)");
  const day = new Date(io.systemClock.nowMs()).toISOString().slice(0, 10);
  const packPath = join(dir, "compliance-pack.zip");
  const self = orchestrator.selfCommand(env);
  const childEnv = {
    ...io.buildChildEnv(DEMO_CHILD_ENV, env, { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }),
    ...self.env,
    BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key"),
  };
  const built = await io.runProcess(
    [
      ...self.argv,
      "compliance",
      "pack",
      "--since",
      day,
      "--until",
      day,
      "--org",
      "Demo Org",
      "--output",
      packPath,
      "--json",
    ],
    { cwd: repo, env: childEnv, timeoutMs: 120_000 },
  );
  const packInfo = built.code === 0 ? JSON.parse(io.outputText(built.stdout)) : undefined;
  if (packInfo === undefined) {
    ctx.out.line(`    pack build failed: ${io.outputText(built.stderr).trim()}`);
  } else {ctx.out.line(
      `    ${packPath}: ${packInfo.entries} entries, operator key fingerprint ${packInfo.operator.fingerprint}`,
    );}
  const verifier = orchestrator.verifyCommand(env);
  const verified = packInfo === undefined ? undefined : await io.runProcess(
    [...verifier.argv, "pack", packPath, "--operator-fingerprint", packInfo.operator.fingerprint],
    {
      cwd: dir,
      env: {
        ...io.buildChildEnv(DEMO_CHILD_ENV, env, { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }),
        ...verifier.env,
      },
      timeoutMs: 120_000,
    },
  );
  if (verified !== undefined) {
    ctx.out.line(
      `    $ bernstein-verify pack compliance-pack.zip --operator-fingerprint ${
        String(packInfo.operator.fingerprint).slice(0, 16)
      }…`,
    );
    for (const line of io.outputText(verified.stdout).trim().split("\n")) {
      ctx.out.line(`    ${line}`);
    }
  }
  const packOk = verified?.code === 0;

  // The run's report, as `bernstein runs report` writes it (verification done now).
  const view = await import("../report/mod.ts");
  const records = await orchestrator.loadRunRecords(join(repo, ".sdd"), s.run_id, {
    env,
    verify: true,
  });
  const model = view.buildRunModel(records, { nowMs: io.systemClock.nowMs() });
  const reportPath = io.runFile(join(repo, ".sdd"), s.run_id, "report");
  await io.writeFileAtomic(reportPath, view.renderReportHtml(model));
  const v = model.verification;
  const reportOk = model.attempts.length === 7 && model.refused_merges.length === 1 &&
    [v.audit, v.lineage, v.scorecard].every((c) => c.status === "pass");
  ctx.out.line(
    `    the run's report: ${model.attempts.length} attempts on ${model.lanes} agent slot(s), ` +
      `audit ${v.audit.status}, lineage ${v.lineage.status}, scorecard ${v.scorecard.status}` +
      (keep ? ` — ${reportPath}` : " (--keep keeps it)"),
  );

  say("8/8 the run's signed checkpoint covers the lineage log, checked offline");
  const fingerprint = String(packInfo?.operator.fingerprint ?? "");
  const chained = await io.runProcess(
    [
      ...verifier.argv,
      "chain",
      "src/greet.ts",
      "--lineage-dir",
      join(repo, ".sdd", "lineage"),
      "--operator-fingerprint",
      fingerprint,
    ],
    {
      cwd: dir,
      env: {
        ...io.buildChildEnv(DEMO_CHILD_ENV, env, { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }),
        ...verifier.env,
      },
      timeoutMs: 120_000,
    },
  );
  ctx.out.line(
    `    $ bernstein-verify chain src/greet.ts --lineage-dir .sdd/lineage --operator-fingerprint ${
      fingerprint.slice(0, 16)
    }…`,
  );
  for (const line of io.outputText(chained.stdout).trim().split("\n")) {
    ctx.out.line(`    ${line}`);
  }
  const checkpointOk = chained.code === 0 &&
    /log matches \d+ checkpoint\(s\)/.test(io.outputText(chained.stdout));

  const ok = chain.ok && gate.ok && receipt.ok && check.ok && packOk && reportOk && checkpointOk &&
    (s.merges as unknown[]).length === 5 && refused.length === 1 && recovered.length === 1;
  ctx.out.line("");
  ctx.out.line(
    ok
      ? "demo complete: 5 steps merged (one a recovery step), 1 refused by its gate; the record, the receipt, the pack and the checkpoint verify."
      : "demo FAILED: see above",
  );
  if (keep) {
    ctx.out.line(`the repository stays at ${repo} (explore: cd ${repo} && bernstein status)`);
  } else await Deno.remove(dir, { recursive: true });
  return ok ? 0 : 1;
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
