// The EU manufacturer reference scenario: agents change the safety configuration of a
// robotic press cell (an AI safety component of machinery); the period is packed, then
// archived for cold storage with the pinned verifier (one self-contained JS file bundled
// from verify.ts, its SHA-256 recorded) and the operator key fingerprint; years later the
// archive is restored into an empty folder and verified with only what it holds.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { exampleOperatorFingerprint, exampleOperatorPublicPem } from "./_example_keys.ts";
import { expectExit, type Project } from "./_project.ts";
import { pack, runPlan, utcDay, verifyPack } from "./_steps.ts";
import type { Scenario } from "./_scenario.ts";

const NAME = "eu-manufacturer";
const ORG = "Example Pressen GmbH";
const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** File times inside the tar: 1980-01-01, as the pack's members (the bytes depend on content only). */
const TAR_MTIME = "315532800";

/** Ten years and a few days, in seconds: "years later" for the restore's clock. */
const TEN_YEARS_S = (10 * 365 + 3) * 86_400;

const PLAN = `# Safety configuration of press cell 4, changed by agents.
name: press-cell-safety
cli: scripted
max_agents: 3
stages:
  - name: safety
    steps:
      - title: Tighten the light-curtain stopping distance
        role: backend
        files: [config/robotics/safety_thresholds.yaml]
        description: |
          @agent write config/robotics/safety_thresholds.yaml <<END
          # Press cell 4: the vision model's person-detection confidence and stopping limits.
          person_detection_min_confidence: 0.90
          light_curtain_min_distance_mm: 850
          max_ram_speed_mm_s_with_person_near: 10
          END
          @agent summary stopping distance 850 mm
      - title: Interlock the ram on a detection timeout
        role: backend
        files: [plc/interlocks.yaml]
        description: |
          @agent write plc/interlocks.yaml <<END
          # A missing detection frame for more than 100 ms stops the ram (fail safe).
          detection_timeout_ms: 100
          on_timeout: stop_ram
          END
          @agent summary ram stops on a detection timeout
      - title: Update the technical file
        role: docs
        files: [docs/technical-file.md]
        description: |
          @agent write docs/technical-file.md <<END
          # Press cell 4 person detection: technical file (Annex IV, single set with the Machinery Regulation)
          Changes in this period: stopping distance 850 mm; ram stops on a detection timeout of 100 ms.
          END
          @agent summary technical file updated
`;

const CONFIG =
  `# EU manufacturer example: the safety configuration is the high-risk path of the pack.
compliance:
  risk_paths: ["config/robotics/**", "plc/**"]
  retention_days: 3653
tuning:
  orchestrator:
    tick_interval_s: 0.5
  spawn:
    spawn_backoff_base_s: 0
  tasks:
    default_max_retries: 0
`;

/** What ARCHIVE.json records (canonical key order, two-space JSON). */
function archiveManifest(fields: {
  pack: Uint8Array;
  verifier: Uint8Array;
  period: { since: string; until: string };
  archivedAt: string;
}): string {
  const doc = {
    schema: "bernstein-example-cold-storage/v1",
    note: "EXAMPLE archive of examples/lineage/eu-manufacturer; the operator key is an example key",
    archived_at: fields.archivedAt,
    org: ORG,
    period: fields.period,
    pack: { file: "pack.zip", sha256: sha256Hex(fields.pack), bytes: fields.pack.length },
    verifier: {
      file: "bernstein-verify.js",
      sha256: sha256Hex(fields.verifier),
      built_from: "verify.ts (deno bundle), imports node: built-ins only",
      run:
        "deno run --no-config --no-lock --cached-only --allow-read=. bernstein-verify.js pack pack.zip --operator-fingerprint <operator_fingerprint>",
    },
    operator_fingerprint: exampleOperatorFingerprint(NAME),
    operator_public_key: "operator.pub",
    retention: {
      logs_minimum: "at least six months (Art. 19(1) providers, Art. 26(6) deployers)",
      documentation:
        "ten years after placing on the market (Art. 18(1)); this archive is kept as long",
    },
  };
  return JSON.stringify(doc, null, 2) + "\n";
}

async function run(p: Project): Promise<void> {
  const since = utcDay();
  p.say("1. The period's work: three agents change the press cell's safety configuration");
  const r = await runPlan(p, "plans/safety.yaml");
  if (r.health !== "HEALTHY" || r.merged.length !== 3) {
    throw new Error(`the safety run: ${r.health}, ${r.merged.length} merged (expected 3)`);
  }
  const until = utcDay();

  p.say("2. Pack the period and check it");
  await pack(p, "pack.zip", ORG, since, until, 0);
  await verifyPack(p, NAME, "pack.zip", 0);

  p.say("3. Archive: the pack, the pinned verifier, the operator's public key, their hashes");
  const archive = join(p.dir, "archive");
  await Deno.mkdir(archive);
  expectExit(
    await p.program(
      "deno bundle -o archive/bernstein-verify.js verify.ts   # in the bernstein checkout",
      [
        Deno.execPath(),
        "bundle",
        "--frozen",
        "-q",
        "-o",
        join(archive, "bernstein-verify.js"),
        "verify.ts",
      ],
      "stdout",
      REPO_ROOT,
    ),
    0,
    "deno bundle verify.ts",
  );
  // The public half bernstein published when the key signed (the private key never goes in).
  const copy = ["cp", "pack.zip", "repo/.sdd/keys/operator.pub", "archive/"];
  expectExit(await p.program(copy.join(" "), copy, "stdout"), 0, "cp");
  const publicPem = await Deno.readTextFile(join(archive, "operator.pub"));
  if (publicPem !== exampleOperatorPublicPem(NAME)) {
    throw new Error("operator.pub is not the example key's");
  }
  const manifest = archiveManifest({
    pack: await Deno.readFile(join(archive, "pack.zip")),
    verifier: await Deno.readFile(join(archive, "bernstein-verify.js")),
    period: { since, until },
    archivedAt: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  });
  await Deno.writeTextFile(join(archive, "ARCHIVE.json"), manifest);
  p.note("archive/ARCHIVE.json records the period, both SHA-256s and the operator fingerprint.");
  expectExit(
    await p.program(
      "(cd archive && sha256sum ARCHIVE.json bernstein-verify.js operator.pub pack.zip > SHA256SUMS)",
      ["sh", "-c", "sha256sum ARCHIVE.json bernstein-verify.js operator.pub pack.zip > SHA256SUMS"],
      "stdout",
      archive,
    ),
    0,
    "sha256sum",
  );
  const tar = [
    "tar",
    "--sort=name",
    `--mtime=@${TAR_MTIME}`,
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--format=gnu",
    "-cf",
    "eu-mfg-archive.tar",
    "archive",
  ];
  expectExit(await p.program(tar.join(" "), tar, "stdout"), 0, "tar");
  expectExit(
    await p.program(
      "sha256sum eu-mfg-archive.tar > eu-mfg-archive.tar.sha256",
      ["sh", "-c", "sha256sum eu-mfg-archive.tar > eu-mfg-archive.tar.sha256"],
      "stdout",
    ),
    0,
    "sha256sum tar",
  );
  p.note(
    "Kept in cold storage: eu-mfg-archive.tar and eu-mfg-archive.tar.sha256 (and the\n" +
      "fingerprint in ARCHIVE.json, also handed to the notified body by another channel).",
  );

  p.say("4. Ten years later: restore into an empty folder and verify with only the archive");
  const later = join(p.dir, "restored-2036");
  await Deno.mkdir(join(later, "empty-deno-cache"), { recursive: true });
  await Deno.copyFile(join(p.dir, "eu-mfg-archive.tar"), join(later, "eu-mfg-archive.tar"));
  await Deno.copyFile(
    join(p.dir, "eu-mfg-archive.tar.sha256"),
    join(later, "eu-mfg-archive.tar.sha256"),
  );
  const laterEnv = {
    // bernstein-verify reads no clock and no environment; this only dates the simulation.
    SOURCE_DATE_EPOCH: String(Math.floor(Date.now() / 1000) + TEN_YEARS_S),
    DENO_DIR: join(later, "empty-deno-cache"),
    HOME: later,
  };
  expectExit(
    await p.program(
      "sha256sum -c eu-mfg-archive.tar.sha256",
      [
        "sha256sum",
        "-c",
        "eu-mfg-archive.tar.sha256",
      ],
      "stdout",
      later,
      laterEnv,
    ),
    0,
    "sha256sum -c (tar)",
  );
  expectExit(
    await p.program(
      "tar -xf eu-mfg-archive.tar",
      ["tar", "-xf", "eu-mfg-archive.tar"],
      "stdout",
      later,
      laterEnv,
    ),
    0,
    "tar -xf",
  );
  const restored = join(later, "archive");
  expectExit(
    await p.program(
      "cd archive && sha256sum -c SHA256SUMS",
      ["sha256sum", "-c", "SHA256SUMS"],
      "stdout",
      restored,
      laterEnv,
    ),
    0,
    "sha256sum -c SHA256SUMS",
  );
  const verify = [
    Deno.execPath(),
    "run",
    "--no-config",
    "--no-lock",
    "--cached-only",
    "--allow-read=.",
    "bernstein-verify.js",
    "pack",
    "pack.zip",
    "--operator-fingerprint",
    exampleOperatorFingerprint(NAME),
  ];
  expectExit(
    await p.program(
      `deno run --no-config --no-lock --cached-only --allow-read=. bernstein-verify.js pack pack.zip --operator-fingerprint ${
        exampleOperatorFingerprint(NAME)
      }`,
      verify,
      "stdout",
      restored,
      laterEnv,
    ),
    0,
    "the archived verifier",
  );
}

/** The EU manufacturer scenario. */
export const EU_MANUFACTURER: Scenario = {
  name: NAME,
  folder: "eu-manufacturer",
  files: {
    "README.md": "# press-cell-4\n\nSafety configuration of press cell 4's person detection.\n",
    "plans/safety.yaml": PLAN,
  },
  config: CONFIG,
  packs: ["pack.zip"],
  extras: ["archive/ARCHIVE.json", "archive/SHA256SUMS"],
  run,
};
