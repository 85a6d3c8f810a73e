// Images reach the model API as images, through each real CLI's own channel: claude gets an
// `image` content block of a stream-json user message, gemini and qwen read an `@path` copy in
// their worktree and send `inlineData` / an `image_url` data URL, codex and opencode attach that
// copy with their own flag (`--image`, `--file`) and send an `input_image` / `image_url`. A real `bernstein run` with a
// step per attachment, against the project's model server: the bytes the API received
// hash to the digest the run attested (audit event, CAS, lineage), the prompt text carries no
// base64, the copy never reaches the merge, and no agent reaches any host but 127.0.0.1.
// One file per CLI defines that CLI's tests from here, so they run in parallel; a CLI's cases
// (PNG, PDF, image held by value) are the parallel steps of one run, each checked by its own test.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { toBase64 } from "../../../src/canonical/mod.ts";
import { sha256Hex } from "../../../src/crypto/mod.ts";
import { probeSandbox } from "../../../src/sandbox/mod.ts";
import { makePdf } from "../../_helpers/pdf.ts";
import { makePng } from "../../_helpers/png.ts";
import { git, withTempDir } from "../../_helpers/temp.ts";
import type { CliRun } from "../../_helpers/cli.ts";
import {
  auditEvents,
  bernsteinIn,
  type RealCli,
  type RealRun,
  runReal,
  runTag,
  skipReason,
} from "../_real_run.ts";
import {
  type ForeignAttempt,
  type LoggedRequest,
  startEgressSentinel,
  startModelServer,
} from "../model_servers/mod.ts";

/** The API each multimodal CLI must deliver the image through. */
const CHANNELS: Readonly<Record<string, { via: string; delivery: string }>> = {
  claude: { via: "image", delivery: "content-block" },
  gemini: { via: "inlineData", delivery: "file-reference" },
  qwen: { via: "image_url", delivery: "file-reference" },
  codex: { via: "input_image", delivery: "file-argument" },
  opencode: { via: "image_url", delivery: "file-argument" },
};

/** The file a run attaches: where it lies in the project, its bytes and MIME type. */
interface Attached {
  /** Repo-relative path. */
  path: string;
  /** Bytes. */
  bytes: Uint8Array;
  /** MIME type the API must see. */
  mime: string;
  /** How the API must receive it (per CLI). */
  via: Readonly<Record<string, string>>;
  /** Handed over by value in the plan (`{name, image: {mime, base64}}`) instead of as a file. */
  held?: boolean;
}

/** One attachment case: a step of the CLI's shared run, and the test that checks it. */
interface ImageCase {
  /** Step title (its task id is `1.<n>-<slug of the title>`). */
  title: string;
  /** The file the model writes in the step's worktree. */
  out: string;
  /** The attachment. */
  file: Attached;
}

/** What one step of the run left, read before the run's folder is removed. */
interface StepFacts {
  /** Session id of the step's (only) attempt. */
  session: string;
  /** Model turns of the step's worktree. */
  turns: LoggedRequest[];
  /** The step's `multimodal.attach` audit events. */
  attach: Record<string, unknown>[];
  /** The step's `agent.spawned` audit events. */
  spawned: Record<string, unknown>[];
  /** SHA-256 of the CAS object at the attachment's digest. */
  casSha256: string;
  /** `bernstein lineage chain <out> --json`. */
  chain: CliRun;
}

/** What the CLI's shared run left (every step), read before its folder is removed. */
interface SharedFacts {
  /** The run. */
  run: RealRun;
  /** The run's output, for failure messages. */
  context: string;
  /** Hosts other than 127.0.0.1 an agent tried to reach. */
  foreign: readonly ForeignAttempt[];
  /** What the model server found wrong with the attachments it received. */
  problems: readonly string[];
  /** Every `multimodal.attach` audit event of the run. */
  attachCount: number;
  /** Per case title. */
  steps: Map<string, StepFacts>;
  /** `git ls-files` at the end. */
  tracked: string;
  /** `bernstein audit verify`'s exit code. */
  auditVerify: number;
  /** Whether agents run in a sandbox here. */
  sandboxed: boolean;
}

/** The task id of step `index` (0-based) titled `title`. */
function taskIdOf(index: number, title: string): string {
  return `1.${index + 1}-${title.toLowerCase().replaceAll(" ", "-")}`;
}

/**
 * One real `bernstein run` for all of a CLI's cases, a step each, in parallel (a run and a CLI
 * start cost seconds of CPU): everything the tests check is read here, so each test asserts on
 * its own step without the run's folder or servers outliving the test that started it.
 */
async function sharedImageRun(cli: RealCli, cases: readonly ImageCase[]): Promise<SharedFacts> {
  return await withTempDir(async (dir) => {
    const server = startModelServer();
    const sentinel = startEgressSentinel();
    try {
      const run = await runReal(dir, {
        steps: cases.map((c) => ({
          title: c.title,
          cli: cli.name,
          role: "backend",
          files: [c.out],
          expect: [c.out],
          attachments: [
            c.file.held
              ? {
                name: c.file.path.slice(c.file.path.lastIndexOf("/") + 1),
                image: { mime: c.file.mime, base64: toBase64(c.file.bytes) },
              }
              : c.file.path,
          ],
          description: [
            `Look at the attached file and write what you see to ${c.out}.`,
            `@model write ${c.out} a gradient`,
            "@model say described it",
          ].join("\n"),
        })),
        server,
        sentinel,
        prepare: async (root) => {
          for (const c of cases) {
            if (c.file.held) continue;
            await Deno.mkdir(join(root, dirname(c.file.path)), { recursive: true });
            await Deno.writeFile(join(root, c.file.path), c.file.bytes);
          }
        },
      });
      console.log(`real ${cli.name} ${cli.pin.version} image run: ${run.seconds}s`);
      const context = `exit ${run.cli.code}\n${run.cli.stderr}\n${run.cli.stdout.slice(-3000)}`;
      const events = run.summary === undefined ? [] : await auditEvents(run);
      const steps = new Map<string, StepFacts>();
      for (const [index, c] of cases.entries()) {
        if (run.summary === undefined) break;
        const taskId = taskIdOf(index, c.title);
        const session = `${taskId}-a1-${runTag(run)}`;
        const digest = sha256Hex(c.file.bytes);
        const cas = await Deno.readFile(join(run.root, ".sdd", "cas", digest.slice(0, 2), digest))
          .then(sha256Hex, (e: Error) => `unreadable: ${e.message}`);
        steps.set(c.title, {
          session,
          turns: server.turns(join(run.root, ".sdd", "worktrees", session)),
          attach: events.filter((e) =>
            e.event_type === "multimodal.attach" &&
            (e.details as Record<string, unknown>).worker_id === session
          ),
          spawned: events.filter((e) =>
            e.event_type === "agent.spawned" &&
            (e.details as Record<string, unknown>).task_id === taskId
          ),
          casSha256: cas,
          chain: await bernsteinIn(run, ["lineage", "chain", c.out, "--json"]),
        });
      }
      return {
        run,
        context,
        foreign: [...sentinel.foreign],
        problems: [...server.problems],
        attachCount: events.filter((e) => e.event_type === "multimodal.attach").length,
        steps,
        tracked: run.summary === undefined ? "" : await git(run.root, "ls-files"),
        auditVerify: run.summary === undefined
          ? -1
          : (await bernsteinIn(run, ["audit", "verify"])).code,
        sandboxed: (await probeSandbox()).available,
      };
    } finally {
      await sentinel.close();
      await server.close();
    }
  });
}

/** The checks of one case on the shared run's facts. */
function checkImageCase(cli: RealCli, shared: SharedFacts, c: ImageCase, cases: number): void {
  const { run, context } = shared;
  const file = c.file;
  const png = file.bytes;
  const digest = sha256Hex(png);
  assert.equal(run.cli.code, 0, context);
  assert.equal(run.summary?.health, "HEALTHY", context);
  assert.deepEqual(shared.foreign, [], "no agent tried to reach another host");
  // The model server checked every marked attachment arrived as media, same bytes and type.
  assert.deepEqual(shared.problems, []);
  const step = shared.steps.get(c.title);
  assert.ok(step !== undefined, context);
  const turns = step.turns;
  assert.ok(turns.length >= 2, `${turns.length} turn(s)`);
  const expected = CHANNELS[cli.name];
  for (const turn of turns) {
    // Every turn of the conversation carries the image as an image, byte for byte (and only
    // this step's: the other steps' attachments never reach this agent).
    assert.deepEqual(
      (turn.media ?? []).map((m) => [m.via, m.mime, m.sha256, m.size]),
      [[file.via[cli.name], file.mime, digest, png.length]],
      `turn ${turn.turn}`,
    );
  }
  // The prompt text names the image (a marker), never inlines it as base64 text.
  const first = turns[0];
  assert.ok(
    first.body.includes(`delivery=\\"${expected.delivery}\\"`),
    "the prompt marks how the image travels",
  );
  const base64 = btoa(String.fromCharCode(...png));
  const textOnly = first.body.split(base64).length - 1;
  assert.equal(textOnly, 1, "the base64 appears once: as the media part, not in the text");
  // The attestation: the audit event and CAS hold exactly the bytes the API received.
  assert.equal(shared.attachCount, cases, "one attach event per step");
  assert.equal(step.attach.length, 1);
  const details = step.attach[0].details as Record<string, unknown>;
  assert.equal(details.sha256, digest);
  assert.equal(details.mime, file.mime);
  assert.equal(details.worker_id, step.session);
  assert.equal(details.delivery, expected.delivery);
  if (expected.delivery !== "content-block") {
    const ext = file.path.slice(file.path.lastIndexOf(".") + 1);
    assert.equal(details.delivery_path, `.sdd/runtime/attachments/${digest}.${ext}`);
  }
  // The agent ran in the sandbox wherever it works here: the copy in its worktree reached
  // the sandboxed CLI (the model server saw the bytes above).
  assert.equal(step.spawned.length, 1);
  const isolation = (step.spawned[0].details as { isolation: Record<string, unknown> }).isolation;
  assert.equal(
    isolation.isolation,
    shared.sandboxed ? "sandbox" : "none",
    JSON.stringify(isolation),
  );
  assert.equal(step.casSha256, digest);
  // Lineage of the merged file carries the digest; the copy was never merged.
  assert.equal(step.chain.code, 0, step.chain.stderr);
  assert.deepEqual(JSON.parse(step.chain.stdout).entries[0].attachment_digests, [digest]);
  assert.ok(!shared.tracked.includes(".sdd/runtime/attachments"), shared.tracked);
  assert.equal(shared.auditVerify, 0);
}

/** How each CLI with a document channel must deliver a PDF. */
const PDF_VIA: Readonly<Record<string, string>> = { claude: "document", gemini: "inlineData" };

/** Defines the attachment tests of one CLI (ignored with the reason when it is not installed). */
export function defineImageTests(cli: RealCli): void {
  const cases: { name: string; make: () => Promise<ImageCase> }[] = [];
  if (cli.name in CHANNELS) {
    cases.push({
      name: `real ${cli.name} ${cli.pin.version}: an attached PNG reaches the API as an image ` +
        `(${CHANNELS[cli.name].via}), its bytes hash to the attested digest${skipReason(cli)}`,
      make: async () => ({
        title: "Describe the screenshot",
        out: "seen.txt",
        file: {
          path: "shots/screen.png",
          bytes: await makePng(96, 64, cli.name.length),
          mime: "image/png",
          via: Object.fromEntries(Object.entries(CHANNELS).map(([n, c]) => [n, c.via])),
        },
      }),
    });
  }
  if (cli.name in PDF_VIA) {
    cases.push({
      name: `real ${cli.name} ${cli.pin.version}: an attached PDF reaches the API as a document ` +
        `(${PDF_VIA[cli.name]}), its bytes hash to the attested digest${skipReason(cli)}`,
      make: () =>
        Promise.resolve({
          title: "Describe the spec",
          out: "spec-seen.txt",
          file: {
            path: "shots/spec.pdf",
            bytes: makePdf(`The ${cli.name} spec: totals are rounded half to even.`),
            mime: "application/pdf",
            via: PDF_VIA,
          },
        }),
    });
  }
  // Images held by value in the plan travel the same channel as files (one per channel kind).
  if (cli.name === "claude" || cli.name === "gemini") {
    cases.push({
      name: `real ${cli.name} ${cli.pin.version}: an image held by value in the plan reaches the ` +
        `API as an image (${CHANNELS[cli.name].via}), its bytes hash to the attested digest${
          skipReason(cli)
        }`,
      make: async () => ({
        title: "Describe the held screenshot",
        out: "held-seen.txt",
        file: {
          path: "held/screen.png",
          bytes: await makePng(80, 48, cli.name.length + 7),
          mime: "image/png",
          via: Object.fromEntries(Object.entries(CHANNELS).map(([n, c]) => [n, c.via])),
          held: true,
        },
      }),
    });
  }
  // One run serves every case (a step each); the first test to ask starts it.
  let built: Promise<ImageCase[]> | undefined;
  const all = () => built ??= Promise.all(cases.map((c) => c.make()));
  let shared: Promise<SharedFacts> | undefined;
  const facts = () => shared ??= all().then((made) => sharedImageRun(cli, made));
  for (const [index, c] of cases.entries()) {
    Deno.test({
      name: c.name,
      ignore: cli.exe === undefined,
      fn: async () => checkImageCase(cli, await facts(), (await all())[index], cases.length),
    });
  }
}
