// `bernstein demo` (`deno task demo`): the main job end to end on a throw-away repository with
// the scripted agent — plan, parallel agents in worktrees, a refused gate, merges, then the
// record checked the way an auditor would.
import type { CommandContext, CommandSpec } from "./spec.ts";

/** The demo plan: three parallel steps, a dependent stage, and one step the run_config gate refuses. */
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

  say(`1/6 a throw-away repository at ${repo}`);
  await git.run(["init", "--quiet", "-b", "main"]);
  await Deno.writeTextFile(join(repo, "README.md"), "# greeting-service\n");
  await Deno.writeTextFile(join(repo, "plan.yaml"), DEMO_PLAN);
  await git.commitAll(repo, "initial commit");
  await git.run(["checkout", "--quiet", "-b", "feature/greetings"]);
  await Deno.mkdir(join(repo, ".sdd"), { recursive: true });
  await Deno.writeTextFile(join(repo, ".sdd", "config.yaml"), DEMO_CONFIG);
  ctx.out.line("    main + feature/greetings; plan.yaml: 5 steps in 3 stages (scripted agent)");

  say("2/6 bernstein run plan.yaml");
  const reporter = ctx.out.color
    ? new orchestrator.LiveReporter((text) => ctx.out.stdout.write(text), {
      width: terminalColumns(),
    })
    : new orchestrator.LineReporter((line) => ctx.out.line(`    ${line}`));
  const report = await orchestrator.executeRun({ planPath: "plan.yaml" }, {
    cwd: repo,
    env,
    clock: io.systemClock,
    random: io.systemRandom,
    reporter,
    warn: (w) => ctx.out.warn(w),
  });
  if (report.kind !== "run") throw new Error("the demo run did not run");
  const s = report.summary;
  const refused = s.kept_branches as { task_id: string; reason: string; branch: string }[];
  ctx.out.line(
    `    run ${s.run_id}: ${s.health} — ${
      (s.merges as unknown[]).length
    } merged, ${refused.length} refused`,
  );
  for (const k of refused) {
    ctx.out.line(`    refused ${k.task_id}: ${k.reason.split("\n")[0]} (work kept on ${k.branch})`);
  }
  const log = await git.text(["log", "--oneline", "--first-parent", "feature/greetings"]);
  for (const line of log.split("\n").slice(0, 6)) ctx.out.line(`    ${line}`);

  say("3/6 the audit chain (HMAC) verifies");
  const audit = await import("../audit/mod.ts");
  const key = await audit.readAuditKey(join(dir, "audit.key"));
  const chain = await audit.verifyAuditLog(join(repo, ".sdd", "audit"), key);
  ctx.out.line(
    `    ${
      chain.ok ? "PASS" : "FAIL"
    }: ${chain.records} records in ${chain.segments.length} segment(s)`,
  );

  say("4/6 the signed lineage log passes the gate");
  const verify = await import("../verify/mod.ts");
  const lineage = await import("../lineage/store/mod.ts");
  const operatorKey = await lineage.resolveOperatorKey({ env });
  // The run checkpoints its logs: their signatures are checked with the project's operator key.
  const { projectOperatorPublicKey } = await import("../compliance/store/mod.ts");
  const opened = await verify.openDirectoryGateInput({
    logPath: join(repo, ".sdd", "lineage", "log.jsonl"),
    cardsDir: join(repo, ".sdd", "agents"),
    operatorKey,
    operatorPublicKey: (await projectOperatorPublicKey(join(repo, ".sdd"))).publicKey,
  });
  if (opened === undefined) throw new Error("the demo run recorded no lineage");
  const gate = await verify.runLineageGate(opened.input).finally(() => opened.close());
  ctx.out.line(
    `    ${
      verify.gateVerdict(gate)
    }: ${gate.entries} entries on ${gate.artefacts} files, ${gate.cards} agent cards, HMAC checked`,
  );

  say("5/6 the run's scorecard matches its work ledger");
  const ledger = await import("../ledger/mod.ts");
  const check = await ledger.verifyScorecard(join(repo, ".sdd"), s.run_id);
  ctx.out.line(
    `    ${check.ok ? "PASS" : "FAIL"}: outcome ${
      (s.scorecard as { outcome: string }).outcome
    }, ${check.description}`,
  );

  say("6/6 a compliance pack, verified offline by bernstein-verify (read-only)");
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
  const reportPath = join(repo, ".sdd", "runs", s.run_id, "report.html");
  await io.writeFileAtomic(reportPath, view.renderReportHtml(model));
  const v = model.verification;
  const reportOk = model.attempts.length === 5 && model.refused_merges.length === 1 &&
    [v.audit, v.lineage, v.scorecard].every((c) => c.status === "pass");
  ctx.out.line(
    `    the run's report: ${model.attempts.length} attempts on ${model.lanes} agent slot(s), ` +
      `audit ${v.audit.status}, lineage ${v.lineage.status}, scorecard ${v.scorecard.status}` +
      (keep ? ` — ${reportPath}` : " (--keep keeps it)"),
  );

  const ok = chain.ok && gate.ok && check.ok && packOk && reportOk &&
    (s.merges as unknown[]).length === 4 && refused.length === 1;
  ctx.out.line("");
  ctx.out.line(
    ok
      ? "demo complete: 4 steps merged, 1 refused by its gate, the record and the pack verify."
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
      "with the scripted agent (one step fails the run_config gate and is reported, the rest\n" +
      "merge), then verifies the audit chain, the lineage gate and the scorecard, and has\n" +
      "bernstein-verify check a compliance pack offline, and writes the run's report. Needs a\n" +
      "source\n" +
      "checkout (the scripted agent runs with deno). Exit 0 when every stage behaves as described.",
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
