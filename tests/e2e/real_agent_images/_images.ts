// Images reach the model API as images, through each real CLI's own channel: claude gets an
// `image` content block of a stream-json user message, gemini and qwen read an `@path` copy in
// their worktree and send `inlineData` / an `image_url` data URL, codex and opencode attach that
// copy with their own flag (`--image`, `--file`) and send an `input_image` / `image_url`. A real `bernstein run` with a
// one-step plan attaching a PNG, against the project's model server: the bytes the API received
// hash to the digest the run attested (audit event, CAS, lineage), the prompt text carries no
// base64, the copy never reaches the merge, and no agent reaches any host but 127.0.0.1.
// One file per CLI defines that CLI's tests from here, so they run in parallel.
import assert from "node:assert/strict";
import { join } from "node:path";
import { toBase64 } from "../../../src/canonical/mod.ts";
import { sha256Hex } from "../../../src/crypto/mod.ts";
import { probeSandbox } from "../../../src/sandbox/mod.ts";
import { makePdf } from "../../_helpers/pdf.ts";
import { makePng } from "../../_helpers/png.ts";
import { git, withTempDir } from "../../_helpers/temp.ts";
import {
  auditEvents,
  bernsteinIn,
  type RealCli,
  runReal,
  runTag,
  skipReason,
} from "../_real_run.ts";
import { startEgressSentinel, startModelServer } from "../model_servers/mod.ts";

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

async function imageRun(cli: RealCli, file: Attached): Promise<void> {
  const png = file.bytes;
  const digest = sha256Hex(png);
  await withTempDir(async (dir) => {
    const server = startModelServer();
    const sentinel = startEgressSentinel();
    try {
      const run = await runReal(dir, {
        steps: [{
          title: "Describe the screenshot",
          cli: cli.name,
          role: "backend",
          files: ["seen.txt"],
          expect: ["seen.txt"],
          attachments: [
            file.held
              ? {
                name: file.path.slice(file.path.lastIndexOf("/") + 1),
                image: { mime: file.mime, base64: toBase64(png) },
              }
              : file.path,
          ],
          description: [
            "Look at the attached screenshot and write what you see to seen.txt.",
            "@model write seen.txt a gradient",
            "@model say described it",
          ].join("\n"),
        }],
        server,
        sentinel,
        prepare: async (root) => {
          if (file.held) return;
          await Deno.mkdir(join(root, "shots"));
          await Deno.writeFile(join(root, file.path), png);
        },
      });
      console.log(`real ${cli.name} ${cli.pin.version} image run: ${run.seconds}s`);
      const context = `exit ${run.cli.code}\n${run.cli.stderr}\n${run.cli.stdout.slice(-3000)}`;
      assert.equal(run.cli.code, 0, context);
      assert.equal(run.summary?.health, "HEALTHY", context);
      assert.deepEqual(sentinel.foreign, [], "no agent tried to reach another host");
      // The model server checked every marked attachment arrived as media, same bytes and type.
      assert.deepEqual(server.problems, []);
      const session = `1.1-describe-the-screenshot-a1-${runTag(run)}`;
      const turns = server.turns(join(run.root, ".sdd", "worktrees", session));
      assert.ok(turns.length >= 2, `${turns.length} turn(s)`);
      const expected = CHANNELS[cli.name];
      for (const turn of turns) {
        // Every turn of the conversation carries the image as an image, byte for byte.
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
      const attach = (await auditEvents(run)).filter((e) => e.event_type === "multimodal.attach");
      assert.equal(attach.length, 1);
      const details = attach[0].details as Record<string, unknown>;
      assert.equal(details.sha256, digest);
      assert.equal(details.mime, file.mime);
      assert.equal(details.worker_id, session);
      assert.equal(details.delivery, expected.delivery);
      if (expected.delivery !== "content-block") {
        const ext = file.path.slice(file.path.lastIndexOf(".") + 1);
        assert.equal(details.delivery_path, `.sdd/runtime/attachments/${digest}.${ext}`);
      }
      // The agent ran in the sandbox wherever it works here: the copy in its worktree reached
      // the sandboxed CLI (the model server saw the bytes above).
      const spawned = (await auditEvents(run)).filter((e) => e.event_type === "agent.spawned");
      const isolation = (spawned[0].details as { isolation: Record<string, unknown> }).isolation;
      assert.equal(
        isolation.isolation,
        (await probeSandbox()).available ? "sandbox" : "none",
        JSON.stringify(isolation),
      );
      const cas = await Deno.readFile(join(run.root, ".sdd", "cas", digest.slice(0, 2), digest));
      assert.equal(sha256Hex(cas), digest);
      // Lineage of the merged file carries the digest; the copy was never merged.
      const chain = await bernsteinIn(run, ["lineage", "chain", "seen.txt", "--json"]);
      assert.equal(chain.code, 0, chain.stderr);
      assert.deepEqual(JSON.parse(chain.stdout).entries[0].attachment_digests, [digest]);
      const tracked = await git(run.root, "ls-files");
      assert.ok(!tracked.includes(".sdd/runtime/attachments"), tracked);
      assert.equal((await bernsteinIn(run, ["audit", "verify"])).code, 0);
    } finally {
      await sentinel.close();
      await server.close();
    }
  });
}

/** How each CLI with a document channel must deliver a PDF. */
const PDF_VIA: Readonly<Record<string, string>> = { claude: "document", gemini: "inlineData" };

/** Defines the attachment tests of one CLI (ignored with the reason when it is not installed). */
export function defineImageTests(cli: RealCli): void {
  if (cli.name in CHANNELS) {
    Deno.test({
      name: `real ${cli.name} ${cli.pin.version}: an attached PNG reaches the API as an image ` +
        `(${CHANNELS[cli.name].via}), its bytes hash to the attested digest${skipReason(cli)}`,
      ignore: cli.exe === undefined,
      fn: async () =>
        imageRun(cli, {
          path: "shots/screen.png",
          bytes: await makePng(96, 64, cli.name.length),
          mime: "image/png",
          via: Object.fromEntries(Object.entries(CHANNELS).map(([n, c]) => [n, c.via])),
        }),
    });
  }
  if (cli.name in PDF_VIA) {
    Deno.test({
      name: `real ${cli.name} ${cli.pin.version}: an attached PDF reaches the API as a document ` +
        `(${PDF_VIA[cli.name]}), its bytes hash to the attested digest${skipReason(cli)}`,
      ignore: cli.exe === undefined,
      fn: () =>
        imageRun(cli, {
          path: "shots/spec.pdf",
          bytes: makePdf(`The ${cli.name} spec: totals are rounded half to even.`),
          mime: "application/pdf",
          via: PDF_VIA,
        }),
    });
  }
  // Images held by value in the plan travel the same channel as files (one per channel kind).
  if (cli.name === "claude" || cli.name === "gemini") {
    Deno.test({
      name: `real ${cli.name} ${cli.pin.version}: an image held by value in the plan reaches the ` +
        `API as an image (${CHANNELS[cli.name].via}), its bytes hash to the attested digest${
          skipReason(cli)
        }`,
      ignore: cli.exe === undefined,
      fn: async () =>
        imageRun(cli, {
          path: "held/screen.png",
          bytes: await makePng(80, 48, cli.name.length + 7),
          mime: "image/png",
          via: Object.fromEntries(Object.entries(CHANNELS).map(([n, c]) => [n, c.via])),
          held: true,
        }),
    });
  }
}
