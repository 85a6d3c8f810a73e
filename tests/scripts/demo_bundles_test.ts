// The reference-scenario generator's own edges, without a run: its command line refuses what
// it cannot do in one line (exit 2, nothing written), the drift check notices a changed
// transcript or summary, and the transcript normaliser keeps the example fingerprint while
// hiding what a run draws at random.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  bundleDir,
  driftedFiles,
  type Generated,
  normaliseTranscript,
  parseDemoArgs,
  SCENARIOS,
  SUMMARY,
  TRANSCRIPT,
} from "../../scripts/demo_bundles/mod.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("demo bundles: the command line takes scenarios, all, --out and --update, and refuses the rest", () => {
  deepStrictEqual(parseDemoArgs(["fintech", "fintech", "--update"]), {
    ok: true,
    names: ["fintech"],
    out: undefined,
    update: true,
  });
  deepStrictEqual(parseDemoArgs(["all", "--out", "/tmp/x"]), {
    ok: true,
    names: ["fintech", "healthcare", "eu-mfg"],
    out: "/tmp/x",
    update: false,
  });
  for (const bad of [[], ["nope"], ["constructor"], ["fintech", "--out"], ["--update"]]) {
    strictEqual(parseDemoArgs(bad).ok, false, JSON.stringify(bad));
  }
});

Deno.test("demo bundles: a non-empty --out is refused in one line before anything runs", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "keep.txt"), "mine\n");
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-q",
        "--frozen",
        "-P=dev",
        "scripts/demo_bundles/mod.ts",
        "healthcare",
        "--out",
        dir,
      ],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(r.stderr);
    strictEqual(r.code, 2, stderr);
    ok(stderr.startsWith(`error: --out ${dir}: not empty\n`), stderr);
    deepStrictEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["keep.txt"]);
  });
});

Deno.test("demo bundles: the drift check names a changed transcript or summary, and nothing else", async () => {
  const scenario = SCENARIOS.healthcare;
  const dir = bundleDir(scenario);
  const bundle = new Map<string, Uint8Array>();
  for (const name of [TRANSCRIPT, SUMMARY]) bundle.set(name, await Deno.readFile(join(dir, name)));
  const same: Generated = { dir, bundle };
  deepStrictEqual(await driftedFiles(scenario, same), []);
  const changed = new Map(bundle);
  changed.set(
    TRANSCRIPT,
    new TextEncoder().encode(
      new TextDecoder().decode(bundle.get(TRANSCRIPT)).replace("PASS pack", "FAIL pack"),
    ),
  );
  deepStrictEqual(await driftedFiles(scenario, { dir, bundle: changed }), [TRANSCRIPT]);
  changed.set(SUMMARY, new Uint8Array([...bundle.get(SUMMARY) as Uint8Array, 10]));
  deepStrictEqual(await driftedFiles(scenario, { dir, bundle: changed }), [TRANSCRIPT, SUMMARY]);
});

Deno.test("demo bundles: the transcript hides run ids, hashes, kids, times and the folder, not the example fingerprint", () => {
  const fp = "f091707d9d86fceb73932d3148f593e3c1de450088003b8e35c4ce97ccfc6d15";
  const text = normaliseTranscript([
    "run daring-reef-ec735c: HEALTHY",
    "session 1.1-x-a1-ec735c at 2026-12-01T18:38:05.443Z on 2026-12-01 in /tmp/s1/repo",
    `fingerprint ${fp}, entry sha256:${"ab".repeat(32)}, kid 0123456789abcdef, short ${
      "cd".repeat(8)
    }…`,
    "wrote /tmp/s1/pack.zip (11620 bytes)",
  ], { dir: "/tmp/s1", keep: [fp] });
  strictEqual(
    text,
    "run <run>: HEALTHY\n" +
      "session 1.1-x-a1-<tag> at <time> on <day> in <dir>/repo\n" +
      `fingerprint ${fp}, entry sha256:<hash>, kid <kid>, short <hash>…\n` +
      "wrote <dir>/pack.zip (<n> bytes)\n",
  );
});
