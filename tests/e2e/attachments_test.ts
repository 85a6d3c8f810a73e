// Attachments over real runs: the whole `bernstein` binary under its permission set, real git
// worktrees, and the scripted agent (registered as multimodal through the test entry point),
// which records the exact prompt bytes it received (BERNSTEIN_SCRIPTED_RECORD).
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  AttachmentChainUnverified,
  AttachmentResolver,
  composePrompt,
  WorktreeAccessDenied,
} from "../../src/attachments/mod.ts";
import { readAuditKey } from "../../src/audit/mod.ts";
import { CasStore } from "../../src/cas/mod.ts";
import { fromHex, toBase64 } from "../../src/canonical/mod.ts";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { probeSandbox } from "../../src/sandbox/mod.ts";
import { buildPromptBody } from "../../src/orchestrator/mod.ts";
import { type CliRunOptions, REPO_ROOT, runBernstein, runVerify } from "../_helpers/cli.ts";
import { waitUntil } from "../_helpers/events.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** A real 1×1 PNG. */
const PNG = fromHex(
  "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c49444154789c63f8" +
    "cfc0000003010100c9fe92ef0000000049454e44ae426082",
);
const APP = "const a = 1;\nconst b = 2;\nconst c = 3;\nconst d = 4;\n";

function config(): string {
  return [
    "cli: scripted",
    "tuning:",
    "  orchestrator:",
    "    tick_interval_s: 0.2",
    "  spawn:",
    "    spawn_backoff_base_s: 0",
    "  tasks:",
    "    default_max_retries: 0",
    "",
  ].join("\n");
}

interface Fixture {
  dir: string;
  root: string;
  record: string;
  env: Record<string, string>;
  /** The scripted agent's image channel, when the test registers it as multimodal. */
  multimodal?: "prompt-text" | "file-reference";
}

/** A git repo on a feature branch with an image and a source file, and a fast config. */
async function fixture(
  dir: string,
  options: { multimodal?: false | "file-reference" } = {},
): Promise<Fixture> {
  const root = join(dir, "repo");
  await Deno.mkdir(join(root, "src"), { recursive: true });
  await makeRepo(root);
  await Deno.writeFile(join(root, "shot.png"), PNG);
  await Deno.writeTextFile(join(root, "src", "app.ts"), APP);
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "files");
  await Deno.mkdir(join(root, ".sdd"));
  // The scripted agent records its prompt outside the repo: the sandbox lets it write there.
  await Deno.writeTextFile(
    join(root, ".sdd", "config.yaml"),
    `${config()}sandbox:\n  writable: [${JSON.stringify(dir)}]\n`,
  );
  const record = join(dir, "prompt.bin");
  return {
    dir,
    root,
    record,
    env: { BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key"), BERNSTEIN_SCRIPTED_RECORD: record },
    ...(options.multimodal === false ? {} : { multimodal: options.multimodal ?? "prompt-text" }),
  };
}

/** How the fixture's bernstein runs: in the repo, with its env and the scripted agent's channel. */
function cliOf(fx: Fixture, env: Record<string, string> = {}): CliRunOptions {
  return { cwd: fx.root, env: { ...fx.env, ...env }, scriptedMultimodal: fx.multimodal };
}

function run(fx: Fixture, args: string[]) {
  return runBernstein(["run", ...args], cliOf(fx));
}

interface Row {
  task_id: string | null;
  field: string;
  path: string;
  kind: string | null;
  sha256: string | null;
  size: number | null;
  outcome: string;
  reason: string | null;
}

interface Summary {
  health: string;
  tasks: Record<string, number>;
  attachments: Row[];
  run_id: string;
}

function summaryOf(stdout: string): Summary {
  const line = stdout.trim().split("\n").filter((l) => l.includes('"run.summary"')).pop();
  ok(line, `no run.summary in:\n${stdout}`);
  return JSON.parse(line).summary as Summary;
}

interface AuditLine {
  event_type: string;
  resource_id: string;
  prev_hmac: string;
  hmac: string;
  details: Record<string, unknown>;
}

async function auditLines(root: string): Promise<AuditLine[]> {
  const dir = join(root, ".sdd", "audit");
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.name.endsWith(".jsonl")) names.push(e.name);
  const out: AuditLine[] = [];
  for (const name of names.sort()) {
    for (const line of (await Deno.readTextFile(join(dir, name))).split("\n")) {
      if (line !== "") out.push(JSON.parse(line));
    }
  }
  return out;
}

/** Session ids of a task, oldest first (ids carry the run tag, so tests never spell them out). */
async function sessionsOf(root: string, taskId: string): Promise<string[]> {
  const dir = join(root, ".sdd", "runtime", "sessions");
  const files: { session: string; task_id: string; started_at: string }[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.name.endsWith(".json")) {
      files.push(JSON.parse(await Deno.readTextFile(join(dir, e.name))));
    }
  }
  return files.filter((f) => f.task_id === taskId)
    .sort((a, b) => (a.started_at < b.started_at ? -1 : 1))
    .map((f) => f.session);
}

async function sessionFile(root: string, session: string): Promise<Record<string, unknown>> {
  return JSON.parse(
    await Deno.readTextFile(join(root, ".sdd", "runtime", "sessions", `${session}.json`)),
  );
}

async function lastTask(root: string, id: string): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  const log = await Deno.readTextFile(join(root, ".sdd", "runtime", "tasks.jsonl"));
  for (const line of log.split("\n")) {
    if (line === "") continue;
    for (const t of JSON.parse(line).tasks) if (t.id === id) found = t;
  }
  ok(found, `task ${id} not in the task log`);
  return found;
}

async function lineage(root: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(join(root, ".sdd", "lineage", "log.jsonl"));
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

const worktreeId = (path: string) => sha256Hex(enc(path)).slice(0, 16);

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

function plan(steps: string[], options: { secondStage?: string[] } = {}): string {
  const lines = ["name: attach", "stages:", "  - name: one", "    steps:", ...steps];
  if (options.secondStage) {
    lines.push("  - name: two", "    depends_on: [one]", "    steps:", ...options.secondStage);
  }
  return lines.join("\n") + "\n";
}

Deno.test("a run hands an image and a line range to the agent: exact prompt bytes, CAS, audit event, stamps and lineage", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    await Deno.writeTextFile(
      join(fx.root, "plan.yaml"),
      plan([
        "      - title: plain work",
        "        description: '@agent write b.txt plain'",
      ], {
        secondStage: [
          "      - title: look at the design",
          "        description: '@agent write a.txt seen'",
          "        attachments: [shot.png, 'src/app.ts:2-3']",
        ],
      }),
    );
    const r = await run(fx, ["plan.yaml", "--json"]);
    strictEqual(r.code, 0, r.stderr + r.stdout);
    const summary = summaryOf(r.stdout);
    strictEqual(summary.health, "HEALTHY");
    const taskA = "2.1-look-at-the-design";
    const taskB = "1.1-plain-work";
    const [sessionA] = await sessionsOf(fx.root, taskA);
    const range = enc("const b = 2;\nconst c = 3;\n");
    const png = sha256Hex(PNG);
    const txt = sha256Hex(range);

    // The exact bytes the agent received: §7 blocks in declaration order, then the task prompt.
    const body = buildPromptBody({
      taskId: taskA,
      title: "look at the design",
      description: "@agent write a.txt seen",
      role: "backend",
      ownedFiles: [],
      signals: [],
      attempt: 1,
      progress: {
        everyS: DEFAULT_TUNING.agent.heartbeat_interval_s,
        extensionS: DEFAULT_TUNING.orchestrator.deadline_extension_s,
        maxS: DEFAULT_TUNING.orchestrator.deadline_max_s,
      },
    });
    const blocks = composePrompt([
      { mime: "image/png", sha256: png, bytes: PNG },
      { mime: "text/plain", sha256: txt, bytes: range, path: "src/app.ts", firstLine: 2 },
    ], "");
    // Then what became of each declared attachment, then the task prompt.
    const expected = blocks +
      "<attachment-outcomes>\n- shot.png: attached\n- src/app.ts: attached\n" +
      "</attachment-outcomes>\n\n" + body;
    strictEqual(dec(await Deno.readFile(fx.record)), expected);
    ok(expected.startsWith(
      `<attachment mime="image/png" sha256="${png}">\n${btoa(String.fromCharCode(...PNG))}\n` +
        `</attachment>\n\n<attachment mime="text/plain" sha256="${txt}" path="src/app.ts" lines="2-3">\n` +
        "2 | const b = 2;\n3 | const c = 3;\n</attachment>\n\n",
    ));

    // CAS: the exact encoded bytes, once.
    deepStrictEqual(await Deno.readFile(join(fx.root, ".sdd", "cas", png.slice(0, 2), png)), PNG);
    deepStrictEqual(await Deno.readFile(join(fx.root, ".sdd", "cas", txt.slice(0, 2), txt)), range);

    // The audit events: one per block, bound to the worker, its worktree and the chain.
    const session = await sessionFile(fx.root, sessionA);
    const installId = await Deno.readTextFile(join(fx.root, ".sdd", "install_id"));
    const audit = await auditLines(fx.root);
    const attach = audit.filter((e) => e.event_type === "multimodal.attach");
    strictEqual(attach.length, 2, "the task without attachments has no attach event");
    const base = {
      operator_install_id_sig: sha256Hex(enc(installId)),
      worker_id: sessionA,
      turn_seq: 0,
      worktree_id: worktreeId(session.worktree as string),
    };
    deepStrictEqual(attach[0].details, {
      ...base,
      sha256: png,
      mime: "image/png",
      prev_chain_digest: attach[0].prev_hmac,
    });
    deepStrictEqual(attach[1].details, {
      ...base,
      sha256: txt,
      mime: "text/plain",
      path: "src/app.ts",
      first_line: 2,
      prev_chain_digest: attach[1].prev_hmac,
    });
    strictEqual(attach[0].resource_id, sessionA);

    // Stamped on the session and its task; the spawn event carries them too.
    deepStrictEqual(session.attachment_digests, [png, txt]);
    const task = await lastTask(fx.root, taskA);
    deepStrictEqual((task.metadata as Record<string, unknown>).attachment_digests, [png, txt]);
    const spawned = audit.find((e) =>
      e.event_type === "agent.spawned" && e.resource_id === sessionA
    );
    deepStrictEqual(spawned?.details.attachment_digests, [png, txt]);
    const [sessionB] = await sessionsOf(fx.root, taskB);
    deepStrictEqual((await sessionFile(fx.root, sessionB)).attachment_digests, []);

    // Lineage: the task's entries carry the digests; the other task's keep their old form.
    const entries = await lineage(fx.root);
    const a = entries.find((e) => e.artefact_path === "a.txt");
    const b = entries.find((e) => e.artefact_path === "b.txt");
    deepStrictEqual(a?.attachment_digests, [png, txt]);
    deepStrictEqual(Object.keys(b ?? {}).sort(), [
      "agent_card_kid",
      "agent_id",
      "artefact_kind",
      "artefact_path",
      "content_hash",
      "operator_hmac",
      "parent_hashes",
      "span_id",
      "tool_call_id",
      "ts_ns",
      "v",
    ]);

    // The run's JSON output lists each attachment.
    deepStrictEqual(summary.attachments, [
      {
        task_id: taskA,
        field: "stages[1].steps[0].attachments[0]",
        path: "shot.png",
        kind: "image",
        mime: "image/png",
        sha256: png,
        size: PNG.length,
        outcome: "attached",
        reason: null,
      },
      {
        task_id: taskA,
        field: "stages[1].steps[0].attachments[1]",
        path: "src/app.ts",
        kind: "text",
        mime: "text/plain",
        sha256: txt,
        size: range.length,
        outcome: "attached",
        reason: null,
      },
    ]);
    const verify = await runBernstein(["audit", "verify"], cliOf(fx));
    strictEqual(verify.code, 0, verify.stdout + verify.stderr);

    // For the auditor: the export, checked offline by bernstein-verify.
    const out = join(dir, "attachments-export");
    const exported = await runBernstein(
      ["attachments", "export", summary.run_id, "--out", out, "--json"],
      cliOf(fx),
    );
    strictEqual(exported.code, 0, exported.stderr);
    deepStrictEqual(JSON.parse(exported.stdout), {
      out,
      items: 2,
      events: 2,
      spawns: 1,
      lineage_entries: 1,
    });
    deepStrictEqual(await Deno.readFile(join(out, "bytes", png)), PNG);
    const offline = await runVerify(["attachments", out]);
    strictEqual(offline.code, 0, offline.stdout + offline.stderr);
    ok(offline.stdout.startsWith(`PASS attachments ${out}: run ${summary.run_id}, 2 byte`));
    await Deno.writeFile(join(out, "bytes", png), PNG.slice(1));
    const tampered = await runVerify(["attachments", out]);
    strictEqual(tampered.code, 1);
    ok(tampered.stdout.includes(`bytes/${png}: the bytes hash to`), tampered.stdout);

    // The compliance pack can carry the export (signed with the rest); the verifier checks it.
    const day = (offset: number) =>
      new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const zip = join(dir, "pack.zip");
    const packed = await runBernstein([
      "compliance",
      "pack",
      "--since",
      day(-1),
      "--until",
      day(1),
      "--org",
      "Acme",
      "--output",
      zip,
      "--with-attachments",
      "--json",
    ], cliOf(fx));
    strictEqual(packed.code, 0, packed.stderr + packed.stdout);
    deepStrictEqual(JSON.parse(packed.stdout).attachment_runs, [summary.run_id]);
    const checked = await runVerify(["pack", zip]);
    strictEqual(checked.code, 0, checked.stdout + checked.stderr);
    ok(checked.stdout.includes("attachments: 1 run export(s) checked"), checked.stdout);
  });
});

Deno.test("--attach goes to every agent; a path declared twice is attested once; refused files are reported", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    await Deno.writeTextFile(join(fx.root, "notes.txt"), "remember the milk\n");
    await Deno.writeTextFile(join(fx.root, ".env"), "TOKEN=secret-value\n");
    await Deno.writeTextFile(join(dir, "outside.txt"), "outside text\n");
    await Deno.symlink(join(dir, "outside.txt"), join(fx.root, "escape.txt"));
    // 5 000 lines of 30 characters render to far more than 100 000 characters.
    await Deno.writeTextFile(
      join(fx.root, "big.log"),
      Array.from({ length: 5000 }, (_, i) => `log line ${String(i).padStart(20, "0")}\n`).join(""),
    );
    await Deno.writeTextFile(
      join(fx.root, "plan.yaml"),
      plan([
        "      - title: first",
        "        description: '@agent write f.txt 1'",
        "        attachments: [notes.txt]",
      ], {
        secondStage: ["      - title: second", "        description: '@agent write s.txt 2'"],
      }),
    );
    const r = await run(fx, [
      "plan.yaml",
      "--json",
      "--attach",
      "notes.txt",
      "--attach",
      "../outside.txt",
      "--attach",
      "escape.txt",
      "--attach",
      ".env",
      "--attach",
      "big.log",
    ]);
    strictEqual(r.code, 0, r.stderr + r.stdout);
    ok(
      r.stderr.includes(
        "warning[attach.not_attached]: run.attach[1]: ../outside.txt is not attached: outside the project",
      ),
    );
    ok(
      r.stderr.includes(
        "run.attach[2]: escape.txt is not attached: it leaves the project through a symlink",
      ),
    );
    ok(
      r.stderr.includes(
        "run.attach[3]: .env is not attached: denied by config (attachments.deny: '**/.env')",
      ),
    );
    const summary = summaryOf(r.stdout);
    const notes = sha256Hex(enc("remember the milk\n"));
    const rows = (task: string) => summary.attachments.filter((x) => x.task_id === task);
    const first = rows("1.1-first");
    deepStrictEqual(first.map((x) => [x.field, x.outcome]), [
      ["run.attach[0]", "attached"],
      ["run.attach[1]", "not_attached"],
      ["run.attach[2]", "not_attached"],
      ["run.attach[3]", "not_attached"],
      ["run.attach[4]", "partial"],
      ["stages[0].steps[0].attachments[0]", "attached"],
    ]);
    strictEqual(first[5].reason, "also declared as run.attach[0]; attached once");
    strictEqual(first[5].sha256, notes);
    deepStrictEqual([first[1].sha256, first[1].size, first[1].kind], [null, null, null]);
    ok(
      /^rendered text is over 100000 characters; attached lines 1-\d+ of 1-5000$/.test(
        first[4].reason ?? "",
      ),
    );
    strictEqual(rows("2.1-second").length, 5, "the second agent gets the run-wide attachments too");

    // One attestation per block and worker: notes.txt once for the first agent despite two declarations.
    const attach = (await auditLines(fx.root)).filter((e) => e.event_type === "multimodal.attach");
    const of = (worker: string) =>
      attach.filter((e) => e.details.worker_id === worker).map((e) => e.details.sha256);
    deepStrictEqual(of((await sessionsOf(fx.root, "1.1-first"))[0]), [notes, first[4].sha256]);
    deepStrictEqual(of((await sessionsOf(fx.root, "2.1-second"))[0]), [notes, first[4].sha256]);

    // The second agent's prompt: no secret, nothing from outside, the log cut at whole lines.
    const prompt = dec(await Deno.readFile(fx.record));
    ok(!prompt.includes("secret-value") && !prompt.includes("outside text"));
    const m =
      /<attachment mime="text\/plain" sha256="[0-9a-f]{64}" path="big\.log" lines="1-(\d+)">\n([^]*?)\n<\/attachment>/
        .exec(prompt);
    ok(m, "the log block is in the prompt");
    ok([...m[2]].length <= 100_000, "the rendered excerpt is within the limit");
    strictEqual(m[2].split("\n").length, Number(m[1]));
    // ...and it is told what it was not given, and why (the agent-core per-attachment outcome).
    const list = /<attachment-outcomes>\n([^]*?)\n<\/attachment-outcomes>\n/.exec(prompt);
    ok(list, "the outcome list is in the prompt");
    deepStrictEqual(list[1].split("\n"), [
      "- notes.txt: attached",
      "- ../outside.txt: not_attached (outside the project)",
      "- escape.txt: not_attached (it leaves the project through a symlink)",
      "- .env: not_attached (denied by config (attachments.deny: '**/.env'))",
      `- big.log: partial (${first[4].reason})`,
    ]);
  });
});

Deno.test("an image for an adapter that cannot take it refuses the run before any worktree or process", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir, { multimodal: false });
    await Deno.writeTextFile(
      join(fx.root, "plan.yaml"),
      plan([
        "      - title: look",
        "        description: '@agent write a.txt x'",
        "        attachments: [shot.png]",
      ]),
    );
    for (
      const [args, field] of [
        [["plan.yaml"], "stages[0].steps[0].attachments[0]"],
        [["plan.yaml", "--attach", "shot.png"], "run.attach[0]"],
      ] as const
    ) {
      const r = await run(fx, [...args]);
      strictEqual(r.code, 2, r.stderr);
      strictEqual(
        r.stderr.trim().split("\n").at(-1),
        `error[attach.adapter_not_multimodal]: ${field}: shot.png is an image (image/png) but task ` +
          "1.1-look runs on 'scripted', which cannot take images; adapters that can: " +
          "claude (png, jpeg, gif, webp up to 5 MB), codex (png, jpeg, gif, webp up to 20 MB), " +
          "gemini (png, jpeg, webp up to 14 MB), qwen (png, jpeg, gif, webp up to 9.9 MB), " +
          "opencode (png, jpeg, gif, webp up to 20 MB) " +
          "(give the task a multimodal adapter (cli: …) or drop the image)",
      );
    }
    ok(!(await exists(fx.record)), "no agent process ran");
    ok(!(await exists(join(fx.root, ".sdd", "worktrees"))), "no worktree folder was made");
    ok(!(await exists(join(fx.root, ".sdd", "runtime", "session.json"))), "no run started");
    ok(!(await exists(join(fx.root, ".sdd", "audit"))), "nothing was recorded");
    strictEqual((await git(fx.root, "branch", "--list", "agent/*")).trim(), "");
  });
});

Deno.test("attachment errors are refused at the door with the field path first", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    await Deno.writeFile(join(fx.root, "blob.bin"), new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1]));
    await new Deno.Command("mkfifo", { args: [join(fx.root, "pipe")] }).output();
    const step = (attachments: string) =>
      plan(["      - title: a", "        description: x", `        attachments: ${attachments}`]);
    const many = `[${Array.from({ length: 21 }, () => "shot.png").join(", ")}]`;
    const cases: [string[], string, string | undefined][] = [
      [
        ["--attach", "missing.png"],
        "error[attach.invalid]: run.attach[0]: missing.png: no such file",
        undefined,
      ],
      [
        ["--attach", "pipe"],
        "error[attach.invalid]: run.attach[0]: pipe: not a regular file or folder",
        undefined,
      ],
      [
        Array.from({ length: 21 }, () => ["--attach", "shot.png"]).flat(),
        "error[attach.invalid]: run.attach[20]: 21 --attach values; at most 20 attachments per task",
        undefined,
      ],
      [
        ["--attach", "shot.png:1-2"],
        "error[attach.invalid]: run.attach[0]: shot.png is an image (image/png); a line range applies to text only",
        undefined,
      ],
      [
        ["--attach", "blob.bin"],
        "error[attach.invalid]: run.attach[0]: blob.bin is neither an image (PNG, JPEG, GIF, WebP), a PDF nor UTF-8 text",
        undefined,
      ],
      [
        ["--attach", "src/app.ts:9-10"],
        "error[attach.invalid]: run.attach[0]: src/app.ts has 4 line(s); the range 9-10 starts past its end",
        undefined,
      ],
      [
        [],
        "error[attach.invalid]: plan.yaml:7:22: stages[0].steps[0].attachments: attachments of step 'a' must be a list of file paths, got a string (write 'attachments: [shot.png]')",
        "shot.png",
      ],
      [[], "error[attach.invalid]: plan.yaml:7:23: stages[0].steps[0].attachments[0]: ", "[7]"],
      [
        [],
        "error[attach.invalid]: plan.yaml:7:22: stages[0].steps[0].attachments: step 'a' has 21 attachments; at most 20 per task",
        many,
      ],
      [
        [],
        "error[attach.invalid]: stages[0].steps[0].attachments[0]: blob.bin is neither an image (PNG, JPEG, GIF, WebP), a PDF nor UTF-8 text",
        "[blob.bin]",
      ],
    ];
    for (const [flags, line, attachments] of cases) {
      await Deno.writeTextFile(join(fx.root, "plan.yaml"), step(attachments ?? "[]"));
      const r = await run(fx, ["plan.yaml", ...flags]);
      strictEqual(r.code, 2, `${flags.join(" ")} ${attachments}: ${r.stderr}`);
      const first = r.stderr.trim().split("\n")[0];
      ok(first.startsWith(line), `expected ${line}\n     got ${first}`);
    }
    // A dry run checks the same and lists what each task would get, starting nothing.
    await Deno.writeTextFile(join(fx.root, "plan.yaml"), step("[shot.png]"));
    const dry = await run(fx, ["plan.yaml", "--dry-run", "--json", "--attach", "src/app.ts:1-2"]);
    strictEqual(dry.code, 0, dry.stderr);
    const listed = JSON.parse(dry.stdout).attachments as Row[];
    deepStrictEqual(listed.map((x) => [x.task_id, x.field, x.kind, x.outcome, x.sha256]), [
      [
        "1.1-a",
        "run.attach[0]",
        "text",
        "attached",
        sha256Hex(enc("const a = 1;\nconst b = 2;\n")),
      ],
      ["1.1-a", "stages[0].steps[0].attachments[0]", "image", "attached", sha256Hex(PNG)],
    ]);
    ok(!(await exists(fx.record)), "no agent ran");
    ok(!(await exists(join(fx.root, ".sdd", "worktrees"))));
  });
});

Deno.test("a plan attachment gone by the time its agent spawns aborts that spawn, naming every offending path", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    await Deno.writeTextFile(join(fx.root, "gone.txt"), "soon gone\n");
    await Deno.mkdir(join(fx.root, "missing"));
    await Deno.writeFile(join(fx.root, "missing", "shot.png"), PNG);
    await git(fx.root, "add", "-A");
    await git(fx.root, "commit", "-q", "-m", "files to delete");
    // The files exist when the run starts (the gate passes); stage one deletes them.
    await Deno.writeTextFile(
      join(fx.root, "plan.yaml"),
      plan([
        "      - title: clean up",
        "        files: [gone.txt, missing/shot.png]",
        "        description: |",
        "          @agent delete gone.txt",
        "          @agent delete missing/shot.png",
      ], {
        secondStage: [
          "      - title: needs files",
          "        description: '@agent write a.txt x'",
          "        attachments: [gone.txt, src/app.ts, missing/shot.png]",
        ],
      }),
    );
    const r = await run(fx, ["plan.yaml", "--json"]);
    strictEqual(r.code, 1, r.stderr + r.stdout);
    const failed = r.stdout.split("\n").filter((l) => l.includes('"task.failed"')).map((l) =>
      JSON.parse(l)
    );
    strictEqual(failed.length, 1);
    strictEqual(
      failed[0].reason,
      "spawn failed: task 2.1-needs-files: 2 attachment(s) cannot be read, so the agent is not " +
        "started without them: stages[1].steps[0].attachments[0]: gone.txt (no such file); " +
        "stages[1].steps[0].attachments[2]: missing/shot.png (no such file)",
    );
    // The last prompt any agent recorded is stage one's: this agent never started.
    ok(dec(await Deno.readFile(fx.record)).includes("@agent delete gone.txt"));
    const worktrees = await Array.fromAsync(Deno.readDir(join(fx.root, ".sdd", "worktrees"))).catch(
      () => [],
    );
    ok(!worktrees.some((e) => e.name.startsWith("2.1-needs-files-")), "no worktree was made");
    const audit = await auditLines(fx.root);
    strictEqual(audit.filter((e) => e.event_type === "multimodal.attach").length, 0);
    strictEqual(audit.filter((e) => e.event_type === "agent.spawn_failed").length, 1);
  });
});

Deno.test("run and --dry-run check plan attachments as a spawn would and list every problem (exit 2)", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir, { multimodal: false });
    // A FIFO: neither a file nor a folder (a folder is attached as its listing).
    await new Deno.Command("mkfifo", { args: [join(fx.root, "docs")] }).output();
    await Deno.writeFile(join(fx.root, "blob.bin"), new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0]));
    await Deno.writeTextFile(join(fx.root, ".env"), "TOKEN=secret\n");
    await Deno.writeTextFile(
      join(fx.root, "plan.yaml"),
      plan([
        "      - title: one",
        "        description: x",
        "        attachments: [gone.txt, docs, 'src/app.ts:9-', blob.bin, .env]",
        "      - title: two",
        "        description: x",
        "        attachments: [shot.png, 'src/app.ts:3-']",
      ]),
    );
    for (const flags of [["--dry-run"], []]) {
      const r = await run(fx, ["plan.yaml", ...flags]);
      strictEqual(r.code, 2, r.stderr + r.stdout);
      const lines = r.stderr.trim().split("\n");
      const start = lines.findIndex((l) => l.startsWith("error["));
      deepStrictEqual(lines.slice(start), [
        "error[attach.invalid]: 5 attachment problems; nothing was started:",
        "  [attach.invalid] stages[0].steps[0].attachments[0]: gone.txt: no such file",
        "  [attach.invalid] stages[0].steps[0].attachments[1]: docs: not a regular file or folder",
        "  [attach.invalid] stages[0].steps[0].attachments[2]: src/app.ts has 4 line(s); " +
        "the range 9- starts past its end",
        "  [attach.invalid] stages[0].steps[0].attachments[3]: blob.bin is neither an image " +
        "(PNG, JPEG, GIF, WebP), a PDF nor UTF-8 text",
        "  [attach.adapter_not_multimodal] stages[0].steps[1].attachments[0]: shot.png is an " +
        "image (image/png) but task 1.2-two runs on 'scripted', which cannot take images; " +
        "adapters that can: claude (png, jpeg, gif, webp up to 5 MB), codex (png, jpeg, gif, " +
        "webp up to 20 MB), gemini (png, jpeg, webp up to 14 MB), qwen (png, jpeg, gif, webp up " +
        "to 9.9 MB), opencode (png, jpeg, gif, webp up to 20 MB)",
      ]);
      // The withheld .env is reported to the operator, not refused.
      ok(
        lines.some((l) =>
          l.startsWith("warning[attach.not_attached]: stages[0].steps[0].attachments[4]: .env")
        ),
        r.stderr,
      );
      ok(!(await exists(join(fx.root, ".sdd", "worktrees"))), "no worktree folder was made");
      ok(!(await exists(join(fx.root, ".sdd", "audit"))), "nothing was recorded");
      ok(!(await exists(fx.record)), "no agent ran");
    }
  });
});

Deno.test("the resolver over a real run: another worktree is denied, a tampered chain is unverified", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    await Deno.writeTextFile(
      join(fx.root, "plan.yaml"),
      plan([
        "      - title: with image",
        "        description: '@agent write a.txt x'",
        "        attachments: [shot.png]",
        "      - title: without",
        "        description: '@agent write b.txt y'",
      ]),
    );
    const r = await run(fx, ["plan.yaml", "--json"]);
    strictEqual(r.code, 0, r.stderr + r.stdout);
    const sdd = join(fx.root, ".sdd");
    const key = await readAuditKey(fx.env.BERNSTEIN_AUDIT_KEY_PATH);
    const cas = new CasStore(join(sdd, "cas"));
    const resolver = () =>
      new AttachmentResolver({ auditDir: join(sdd, "audit"), auditKey: key, cas });
    const mine = (await sessionFile(fx.root, (await sessionsOf(fx.root, "1.1-with-image"))[0]))
      .worktree as string;
    const other = (await sessionFile(fx.root, (await sessionsOf(fx.root, "1.2-without"))[0]))
      .worktree as string;
    const digest = sha256Hex(PNG);
    deepStrictEqual((await resolver().resolve(digest, { worktreePath: mine })).bytes, PNG);
    await rejects(resolver().resolve(digest, { worktreePath: other }), (e: unknown) => {
      ok(e instanceof WorktreeAccessDenied);
      return (e as Error).message.includes(`not to ${other}`);
    });
    // Flip the worktree an attestation names: its HMAC no longer verifies.
    const segment = join(
      sdd,
      "audit",
      (await Array.fromAsync(Deno.readDir(join(sdd, "audit"))))
        .map((e) => e.name).filter((n) => n.endsWith(".jsonl")).sort()[0],
    );
    const text = await Deno.readTextFile(segment);
    await Deno.writeTextFile(segment, text.replace(worktreeId(mine), worktreeId(other)));
    await rejects(resolver().resolve(digest, { worktreePath: other }), AttachmentChainUnverified);
    await rejects(resolver().resolve(digest, { worktreePath: mine }), AttachmentChainUnverified);
    const verify = await runBernstein(["audit", "verify"], cliOf(fx));
    strictEqual(verify.code, 1);
    ok(verify.stdout.includes("HMAC mismatch") || verify.stderr.includes("HMAC mismatch"));
  });
});

/** Starts `bernstein run ARGS` and returns the child (so a test can kill it like a crash). */
function startRun(fx: Fixture, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--frozen",
      `--config=${REPO_ROOT}deno.json`,
      "-P=bernstein",
      ...(fx.multimodal === undefined
        ? [`${REPO_ROOT}main.ts`]
        : [`${REPO_ROOT}tests/_helpers/multimodal_main.ts`, fx.multimodal]),
      "run",
      ...args,
    ],
    cwd: fx.root,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/deno`,
      NO_COLOR: "1",
      ...fx.env,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/**
 * A run whose one agent waits for a release file after recording its prompt; the orchestrator
 * is killed (kill -9) while the agent waits. The image is an untracked file of the operator.
 */
async function crashedRun(fx: Fixture): Promise<{ release: string; first: Uint8Array }> {
  const release = join(fx.dir, "release");
  await Deno.writeTextFile(
    join(fx.root, "wait.sh"),
    `while [ ! -f '${release}' ]; do sleep 0.05; done\n`,
  );
  await Deno.writeTextFile(join(fx.root, ".gitignore"), "design.png\n");
  await git(fx.root, "add", "wait.sh", ".gitignore");
  await git(fx.root, "commit", "-q", "-m", "wait");
  await Deno.writeFile(join(fx.root, "design.png"), PNG);
  await Deno.writeTextFile(
    join(fx.root, "plan.yaml"),
    plan([
      "      - title: slow",
      "        description: |",
      "          @agent run sh wait.sh",
      "          @agent write out.txt done",
      "        attachments: [design.png, 'src/app.ts:1-2']",
    ]),
  );
  const child = startRun(fx, ["plan.yaml"]);
  const started = async () =>
    await exists(join(fx.root, ".sdd", "runtime", "sessions")) &&
    (await sessionsOf(fx.root, "1.1-slow")).length > 0;
  // The agent waits for the release file, so the run cannot end before it started.
  await waitUntil(async () => await started() && await exists(fx.record), {
    what: "the agent to start and record its prompt",
    until: child.status,
  });
  child.kill("SIGKILL");
  await child.status;
  const first = await Deno.readFile(fx.record);
  await Deno.remove(fx.record);
  return { release, first };
}

Deno.test("crash resume rebuilds the attachments from CAS: edited and deleted source, byte-identical prompt", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    const { release, first } = await crashedRun(fx);
    try {
      ok(dec(first).startsWith(`<attachment mime="image/png" sha256="${sha256Hex(PNG)}">`));
      // The operator edits, then deletes, the source image (and edits the text file).
      await Deno.writeTextFile(join(fx.root, "design.png"), "not the image any more");
      await Deno.remove(join(fx.root, "design.png"));
      // New --attach values cannot change a resuming run: refused (exit 2), nothing touched.
      const session = await Deno.readTextFile(join(fx.root, ".sdd", "runtime", "session.json"));
      const refused = await run(fx, ["--attach", "src/app.ts", "--json"]);
      strictEqual(refused.code, 2, refused.stderr + refused.stdout);
      ok(
        /^error\[attach\.on_resume\]: run\.attach\[0\]: run \S+ was interrupted and resumes with the attachments it started with; --attach \(1 value\(s\)\) cannot change them \(drop --attach to resume it, or add --fresh/m
          .test(refused.stderr),
        refused.stderr,
      );
      strictEqual(
        await Deno.readTextFile(join(fx.root, ".sdd", "runtime", "session.json")),
        session,
        "the interrupted run is still there to resume",
      );
      await Deno.writeTextFile(release, "");
      const r = await run(fx, ["--json"]);
      strictEqual(r.code, 0, r.stderr + r.stdout);
      // The resumed prompt: byte-identical blocks and body; the outcome list says `unchanged`.
      const outcomes = (text: string) => {
        const m = /<attachment-outcomes>\n[^]*?<\/attachment-outcomes>\n/.exec(text);
        ok(m, text.slice(0, 400));
        return { list: m[0], rest: text.replace(m[0], "") };
      };
      const before = outcomes(dec(first));
      const after = outcomes(dec(await Deno.readFile(fx.record)));
      strictEqual(after.rest, before.rest, "blocks and body are byte-identical");
      strictEqual(
        before.list,
        "<attachment-outcomes>\n- design.png: attached\n- src/app.ts: attached\n" +
          "</attachment-outcomes>\n",
      );
      const attach = (await auditLines(fx.root)).filter((e) =>
        e.event_type === "multimodal.attach"
      );
      const [firstSession, resumedSession] = await sessionsOf(fx.root, "1.1-slow");
      ok(/^1\.1-slow-a1-[0-9a-f]+$/.test(firstSession), firstSession);
      strictEqual(
        resumedSession,
        `${firstSession}r2`,
        "the resumed session is the same attempt, resumed",
      );
      deepStrictEqual(attach.map((e) => e.details.worker_id), [
        firstSession,
        firstSession,
        resumedSession,
        resumedSession,
      ]);
      strictEqual(
        after.list,
        `<attachment-outcomes>\n- design.png: unchanged (same bytes as spawn ${firstSession})\n` +
          `- src/app.ts: unchanged (same bytes as spawn ${firstSession})\n</attachment-outcomes>\n`,
      );
      const summary = summaryOf(r.stdout);
      deepStrictEqual(summary.attachments.map((a) => [a.path, a.outcome]), [
        ["design.png", "unchanged"],
        ["src/app.ts", "unchanged"],
      ]);
      const resumed = await sessionFile(fx.root, resumedSession);
      strictEqual(attach[2].details.worktree_id, worktreeId(resumed.worktree as string));
      const entries = await lineage(fx.root);
      deepStrictEqual(
        entries.find((e) => e.artefact_path === "out.txt")?.attachment_digests,
        [sha256Hex(PNG), sha256Hex(enc("const a = 1;\nconst b = 2;\n"))],
      );
    } finally {
      await Deno.writeTextFile(release, "");
    }
  });
});

Deno.test("a resume refuses attachments whose chain does not verify or whose worktree is not theirs", async () => {
  for (const tamper of ["chain", "worktree"] as const) {
    await withTempDir(async (dir) => {
      const fx = await fixture(dir);
      const { release } = await crashedRun(fx);
      try {
        const sdd = join(fx.root, ".sdd");
        if (tamper === "chain") {
          const name = (await Array.fromAsync(Deno.readDir(join(sdd, "audit")))).map((e) => e.name)
            .filter((n) => n.endsWith(".jsonl")).sort()[0];
          const segment = join(sdd, "audit", name);
          const text = await Deno.readTextFile(segment);
          await Deno.writeTextFile(segment, text.replace('"turn_seq": 0', '"turn_seq": 1'));
        } else {
          // The run record is not authenticated: point the spawn at another worktree.
          const runs = (await Array.fromAsync(Deno.readDir(join(sdd, "runs")))).map((e) => e.name);
          const path = join(sdd, "runs", runs[0], "attachments.json");
          const record = JSON.parse(await Deno.readTextFile(path));
          record.spawns[0].worktree = join(sdd, "worktrees", "someone-else");
          await Deno.writeTextFile(path, JSON.stringify(record));
        }
        await Deno.writeTextFile(release, "");
        const r = await run(fx, ["--json"]);
        strictEqual(r.code, 1, r.stderr + r.stdout);
        const failed = r.stdout.split("\n").filter((l) => l.includes('"task.failed"')).map((l) =>
          JSON.parse(l).reason as string
        );
        strictEqual(failed.length, 1, r.stdout);
        ok(
          tamper === "chain"
            ? /^spawn failed: the audit chain does not verify \(.*HMAC mismatch/.test(failed[0])
            : /^spawn failed: worker 1\.1-slow-a1-[0-9a-f]+'s attachment .* not to .*someone-else/
              .test(
                failed[0],
              ),
          failed[0],
        );
        ok(!(await exists(fx.record)), "the resumed agent never started");
      } finally {
        await Deno.writeTextFile(release, "");
      }
    });
  }
});

Deno.test("a corrupted CAS blob: the resume stops as a storage failure naming the repair, cas verify and doctor list it, cas repair restores it from its unchanged source (or says the run cannot resume byte-identically)", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    const { release, first } = await crashedRun(fx);
    try {
      const sdd = join(fx.root, ".sdd");
      const png = sha256Hex(PNG);
      const blob = join(sdd, "cas", png.slice(0, 2), png);
      const runId = (await Array.fromAsync(Deno.readDir(join(sdd, "runs")))).map((e) => e.name)
        .find((n) => n !== "unknown") ?? "";
      ok(runId !== "", "the run has a record folder");
      await Deno.writeFile(blob, enc("flipped bytes"));
      const cas = (args: string[]) => runBernstein(["cas", ...args], cliOf(fx));
      const verify = await cas(["verify", "--json"]);
      strictEqual(verify.code, 1, verify.stderr);
      const report = JSON.parse(verify.stdout);
      strictEqual(report.ok, false);
      deepStrictEqual(
        report.problems.map((p: { code: string; digest: string }) => [p.code, p.digest]),
        [
          ["cas.integrity", png],
        ],
      );
      deepStrictEqual(report.needed_by, { [png]: [runId] });
      const text = await cas(["verify"]);
      ok(
        text.stderr.includes(
          `error[cas.integrity]: .sdd/cas/${png.slice(0, 2)}/${png}: blob ${png}`,
        ) &&
          text.stderr.includes(`needed by run ${runId}`),
        text.stderr,
      );
      ok(
        /^FAIL \(1 problem\) \.sdd\/cas: \d+ of \d+ blob\(s\) good$/m.test(text.stdout),
        text.stdout,
      );
      const doctor = await runBernstein(["doctor", "--json"], cliOf(fx));
      const casLine = JSON.parse(doctor.stdout).checks.find((c: { name: string }) =>
        c.name === "cas"
      );
      strictEqual(casLine.status, "FAIL", doctor.stdout);
      ok(casLine.detail.includes("cas.integrity"), casLine.detail);
      // The resume stops on the damage (the store's fault, not the task's): the task keeps its
      // state for the resume after the repair, and the error says how to repair.
      const halted = await run(fx, ["--json"]);
      strictEqual(halted.code, 1, halted.stderr + halted.stdout);
      ok(
        /error\[run\.storage_failed\]: the run stopped: a stored input is damaged: blob [0-9a-f]{64} does not hash to its key/
          .test(halted.stderr) && halted.stderr.includes("bernstein cas repair"),
        halted.stderr,
      );
      ok(!halted.stdout.includes('"task.failed"'), halted.stdout);
      ok(!(await exists(fx.record)), "no agent started on damaged bytes");
      // The source changed since the run read it: nothing hashes to the key.
      await Deno.writeTextFile(join(fx.root, "design.png"), "edited by the operator");
      const lost = await cas(["repair"]);
      strictEqual(lost.code, 1, lost.stderr + lost.stdout);
      ok(lost.stdout.includes(`unrecoverable ${png}: needed by run ${runId}`), lost.stdout);
      ok(lost.stderr.includes("design.png: changed since the run read it"), lost.stderr);
      ok(
        lost.stderr.includes(
          `warning[cas.unrecoverable]: run ${runId} cannot resume byte-identically`,
        ) && lost.stderr.includes("bernstein run --fresh"),
        lost.stderr,
      );
      deepStrictEqual(await Deno.readFile(blob), enc("flipped bytes"), "nothing was replaced");
      // The source is back as the run read it: restored, the damaged bytes kept aside.
      await Deno.writeFile(join(fx.root, "design.png"), PNG);
      const fixed = await cas(["repair", "--json"]);
      strictEqual(fixed.code, 0, fixed.stderr + fixed.stdout);
      const repaired = JSON.parse(fixed.stdout);
      strictEqual(repaired.blobs.length, 1);
      strictEqual(repaired.blobs[0].status, "restored");
      strictEqual(repaired.blobs[0].from, join(fx.root, "design.png"));
      deepStrictEqual(await Deno.readFile(blob), PNG);
      deepStrictEqual(await Deno.readFile(repaired.blobs[0].moved_aside[0]), enc("flipped bytes"));
      strictEqual((await cas(["verify"])).code, 0);
      // The resume now finishes with the byte-identical prompt.
      await Deno.writeTextFile(release, "");
      const r = await run(fx, ["--json"]);
      strictEqual(r.code, 0, r.stderr + r.stdout);
      const blocks = (t: string) =>
        t.replace(/<attachment-outcomes>\n[^]*?<\/attachment-outcomes>\n/, "");
      strictEqual(blocks(dec(await Deno.readFile(fx.record))), blocks(dec(first)));
    } finally {
      await Deno.writeTextFile(release, "");
    }
  });
});

for (const isolation of ["auto", "none"]) {
  Deno.test(`a worktree copy reaches the agent byte for byte; an agent that commits it is stopped (isolation ${isolation})`, async () => {
    await withTempDir(async (dir) => {
      const fx = await fixture(dir, { multimodal: "file-reference" });
      const png = sha256Hex(PNG);
      const copy = `.sdd/runtime/attachments/${png}.png`;
      // The honest agent finds the copy its prompt names and checks it is the attached file;
      // the hostile one forces it into a commit of its own.
      await Deno.writeTextFile(
        join(fx.root, "plan.yaml"),
        plan([
          "      - title: honest",
          "        attachments: [shot.png]",
          "        files: [seen.txt]",
          "        description: |",
          `          @agent run cmp ${copy} shot.png`,
          "          @agent write seen.txt same bytes",
          "      - title: hostile",
          "        attachments: [shot.png]",
          "        files: [other.txt]",
          "        description: |",
          "          @agent write other.txt x",
          `          @agent run git add -f ${copy}`,
          "          @agent run git -c user.name=a -c user.email=a@b commit -q -m smuggle",
        ]),
      );
      const r = await runBernstein(
        ["run", "plan.yaml", "--json"],
        cliOf(fx, { BERNSTEIN_ISOLATION: isolation }),
      );
      const summary = summaryOf(r.stdout);
      const prompt = dec(await Deno.readFile(fx.record));
      ok(prompt.includes(`delivery="file-reference" file="${copy}">\n@${copy}\n`), prompt);
      ok(!prompt.includes(btoa(String.fromCharCode(...PNG))), "no base64 in the prompt");
      // The honest task merged (cmp exited 0: same bytes); the hostile one did not.
      strictEqual(await Deno.readTextFile(join(fx.root, "seen.txt")), "same bytes\n");
      strictEqual(await Deno.stat(join(fx.root, "other.txt")).then(() => true, () => false), false);
      strictEqual(summary.tasks.failed, 1, r.stdout);
      const tracked = await git(fx.root, "ls-files");
      ok(!tracked.includes(".sdd/runtime"), tracked);
      const events = (await auditLines(fx.root)).map((e) => JSON.stringify(e));
      // In the sandbox the repository's git dir is read-only: the commit cannot even be made.
      // Without it, the run_config gate refuses the diff, naming the copy.
      const stop = (await probeSandbox()).available && isolation === "auto"
        ? `command failed (exit 128): git add -f ${copy}`
        : `the diff touches protected run configuration: ${copy}`;
      ok(events.some((e) => e.includes(stop)), `no audit event says: ${stop}`);
    });
  });
}

Deno.test("plan attachments held by value reach the agent labelled by name; a hostile plan is refused whole (exit 2)", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    const spec = "# Spec\ntotals round half to even\n";
    await Deno.writeTextFile(
      join(fx.root, "plan.yaml"),
      plan([
        "      - title: held",
        "        description: '@agent write h.txt held'",
        "        attachments:",
        "          - name: spec.md",
        "            text: |",
        "              # Spec",
        "              totals round half to even",
        "          - name: screen.png",
        "            image:",
        "              mime: image/png",
        `              base64: ${toBase64(PNG)}`,
      ]),
    );
    const r = await run(fx, ["plan.yaml", "--json"]);
    strictEqual(r.code, 0, r.stderr + r.stdout);
    const prompt = dec(await Deno.readFile(fx.record));
    ok(
      prompt.startsWith(
        `<attachment mime="text/plain" sha256="${sha256Hex(enc(spec))}" path="spec.md">\n` +
          "1 | # Spec\n2 | totals round half to even\n</attachment>\n\n" +
          `<attachment mime="image/png" sha256="${sha256Hex(PNG)}">\n${toBase64(PNG)}\n` +
          "</attachment>\n\n<attachment-outcomes>\n- spec.md: attached\n- screen.png: attached\n" +
          "</attachment-outcomes>\n",
      ),
      prompt.slice(0, 800),
    );
    const summary = summaryOf(r.stdout);
    deepStrictEqual(summary.attachments.map((a) => [a.field, a.path, a.kind, a.outcome]), [
      ["stages[0].steps[0].attachments[0]", "spec.md", "text", "attached"],
      ["stages[0].steps[0].attachments[1]", "screen.png", "image", "attached"],
    ]);
    const attested = (await auditLines(fx.root)).filter((e) => e.event_type === "multimodal.attach")
      .map((e) => e.details.sha256);
    deepStrictEqual(attested, [sha256Hex(enc(spec)), sha256Hex(PNG)]);
    deepStrictEqual(
      await Deno.readFile(join(fx.root, ".sdd", "cas", sha256Hex(PNG).slice(0, 2), sha256Hex(PNG))),
      PNG,
    );

    // A plan written by someone else: a path for a name, an SVG, bytes that are not the declared type.
    await Deno.writeTextFile(
      join(fx.root, "hostile.yaml"),
      plan([
        "      - title: hostile",
        "        description: x",
        "        attachments:",
        "          - {name: ../../.ssh/id_rsa, text: x}",
        "          - {name: a.svg, image: {mime: image/svg+xml, base64: PHN2Zy8+}}",
        `          - {name: b.png, image: {mime: image/png, base64: ${
          toBase64(enc("#!/bin/sh\n"))
        }}}`,
      ]),
    );
    await Deno.remove(fx.record);
    const refused = await run(fx, ["hostile.yaml", "--dry-run"]);
    strictEqual(refused.code, 2, refused.stderr + refused.stdout);
    for (
      const line of [
        "stages[0].steps[0].attachments[0].name: is a name, not a path: no '/' or '\\'",
        "stages[0].steps[0].attachments[1].image.mime: 'image/svg+xml' is not one of image/png, " +
        "image/jpeg, image/gif, image/webp",
        "stages[0].steps[0].attachments[2].image.mime: declared image/png, but the bytes are not " +
        "a PNG, JPEG, GIF or WebP image",
      ]
    ) {
      ok(refused.stderr.includes(line), refused.stderr);
    }
    ok(refused.stderr.includes("error[attach.invalid]: hostile.yaml:"), refused.stderr);
    ok(!(await exists(fx.record)), "no agent ran");
  });
});

Deno.test("--attach with --fresh starts a new run over an interrupted one, with the new attachments", async () => {
  await withTempDir(async (dir) => {
    const fx = await fixture(dir);
    const { release } = await crashedRun(fx);
    await Deno.writeTextFile(release, "");
    await Deno.writeTextFile(join(fx.root, "notes.txt"), "new notes\n");
    const interrupted = JSON.parse(
      await Deno.readTextFile(join(fx.root, ".sdd", "runtime", "session.json")),
    ).run_id;
    ok(typeof interrupted === "string" && interrupted !== "", "the interrupted run has an id");
    const r = await run(fx, ["plan.yaml", "--fresh", "--attach", "notes.txt", "--json"]);
    strictEqual(r.code, 0, r.stderr + r.stdout);
    const summary = summaryOf(r.stdout);
    ok(summary.run_id !== interrupted, "a new run, not the resumed one");
    deepStrictEqual(summary.attachments.map((a) => [a.field, a.path, a.outcome]), [
      ["run.attach[0]", "notes.txt", "attached"],
      ["stages[0].steps[0].attachments[0]", "design.png", "attached"],
      ["stages[0].steps[0].attachments[1]", "src/app.ts", "attached"],
    ]);
    ok(dec(await Deno.readFile(fx.record)).includes('path="notes.txt">\n1 | new notes\n'));
  });
});
