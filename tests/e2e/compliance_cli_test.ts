// `bernstein init` and `bernstein compliance pack` as real subprocesses under the bernstein
// permission set, the pack then checked by `bernstein-verify` under its read-only set, and the
// auditor's manual path (unzip, sha256sum, openssl) run exactly as verify-instructions.md
// writes it.
import { deepStrictEqual, match, notDeepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { makeAgentCard, renderAgentCard } from "../../src/lineage/mod.ts";
import { runBernstein, runVerify } from "../_helpers/cli.ts";
import { writeValidTree } from "../_helpers/lineage_tree.ts";
import { git, withTempDir } from "../_helpers/temp.ts";

function env(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  // The audit key lives where no test can reach the real one.
  return { HOME: dir, BERNSTEIN_AUDIT_KEY_PATH: join(dir, "state", "audit.key"), ...extra };
}

async function project(dir: string): Promise<void> {
  await git(dir, "init", "-q", "-b", "main");
  await writeValidTree(dir);
}

const PACK = ["compliance", "pack", "--since", "2026-01-01", "--until", "2026-01-01"];

Deno.test("bernstein init creates the operator signing key once and prints its fingerprint", async () => {
  await withTempDir(async (dir) => {
    await git(dir, "init", "-q", "-b", "main");
    const first = await runBernstein(["init", "--json"], { cwd: dir, env: env(dir) });
    strictEqual(first.code, 0, first.stderr);
    const report = JSON.parse(first.stdout);
    ok(report.created.includes(".sdd/keys/operator.key"));
    ok(/^[0-9a-f]{64}$/.test(report.operator_key_fingerprint));
    const info = await Deno.stat(join(dir, ".sdd", "keys", "operator.key"));
    strictEqual((info.mode ?? 0) & 0o777, 0o600);
    const again = await runBernstein(["init"], { cwd: dir, env: env(dir) });
    strictEqual(again.code, 0, again.stderr);
    ok(
      again.stdout.includes(
        `operator key fingerprint (SHA-256): ${report.operator_key_fingerprint}`,
      ),
    );
  });
});

Deno.test("compliance pack builds a pack that bernstein-verify passes against the printed fingerprint", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    const out = join(dir, "q1.zip");
    const run = await runBernstein([...PACK, "--org", "Acme Bank", "--output", out, "--json"], {
      cwd: dir,
      env: env(dir),
    });
    strictEqual(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    strictEqual(report.entries, 5);
    strictEqual(report.agents, 2);
    // No --build-time and no SOURCE_DATE_EPOCH: the build's clock is recorded.
    match(report.built_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    strictEqual(report.operator.created, true);
    deepStrictEqual(report.self_check, { ok: true, errors: [] });
    ok(report.warnings.some((w: { code: string }) => w.code === "compliance.audit_not_linked"));
    const written = await Deno.readFile(out);
    strictEqual(report.bytes, written.length);
    strictEqual(report.sha256, sha256Hex(written), "the printed hash is the file's");
    const fp = report.operator.fingerprint;
    const verified = await runVerify(["pack", out, "--operator-fingerprint", fp]);
    strictEqual(verified.code, 0, verified.stdout);
    strictEqual(verified.stdout.split("\n")[0], "PASS pack: 5 entries, 2 agents");
    const other = await runVerify(["pack", out, "--operator-fingerprint", "0".repeat(64)]);
    strictEqual(other.code, 1);
    ok(other.stdout.includes("operator key mismatch"), other.stdout);
    const human = await runBernstein([...PACK, "--org", "Acme Bank", "--output", out], {
      cwd: dir,
      env: env(dir),
    });
    strictEqual(human.code, 0, human.stderr);
    ok(human.stdout.includes(`operator key fingerprint (SHA-256): ${fp}`), human.stdout);
    ok(human.stdout.includes("self-check: PASS"), human.stdout);
  });
});

Deno.test("the same inputs and build time give the same bytes in any time zone; SOURCE_DATE_EPOCH and --build-time are recorded", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    const build = async (name: string, extra: Record<string, string>, flags: string[] = []) => {
      const out = join(dir, name);
      const r = await runBernstein([...PACK, "--org", "Acme", "--output", out, ...flags], {
        cwd: dir,
        env: env(dir, extra),
      });
      strictEqual(r.code, 0, r.stderr);
      return await Deno.readFile(out);
    };
    const a = await build("a.zip", { TZ: "UTC", SOURCE_DATE_EPOCH: "1775088000" });
    const b = await build("b.zip", { TZ: "Asia/Kathmandu", SOURCE_DATE_EPOCH: "1775088000" });
    deepStrictEqual(a, b);
    const epoch = await build("c.zip", { SOURCE_DATE_EPOCH: "1775001600" });
    notDeepStrictEqual(epoch, a);
    const flag = await build("d.zip", { SOURCE_DATE_EPOCH: "0" }, [
      "--build-time",
      "2026-04-01T00:00:00Z",
    ]);
    deepStrictEqual(flag, epoch, "--build-time wins and equals the same instant from the epoch");
  });
});

Deno.test("bad flags are usage errors (exit 2); a missing --operator-key file is exit 3", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    const out = join(dir, "x.zip");
    const noOrg = await runBernstein([...PACK, "--output", out], { cwd: dir, env: env(dir) });
    strictEqual(noOrg.code, 2);
    ok(noOrg.stderr.includes("--org is required"), noOrg.stderr);
    const badDay = await runBernstein(
      [
        "compliance",
        "pack",
        "--since",
        "2026-02-30",
        "--until",
        "2026-03-01",
        "--org",
        "A",
        "--output",
        out,
      ],
      { cwd: dir, env: env(dir) },
    );
    strictEqual(badDay.code, 2);
    ok(badDay.stderr.includes("error[compliance.bad_period]"), badDay.stderr);
    const badTime = await runBernstein(
      [...PACK, "--org", "A", "--output", out, "--build-time", "soon"],
      { cwd: dir, env: env(dir) },
    );
    strictEqual(badTime.code, 2);
    const noKey = await runBernstein(
      [...PACK, "--org", "A", "--output", out, "--operator-key", join(dir, "missing.pem")],
      { cwd: dir, env: env(dir) },
    );
    strictEqual(noKey.code, 3, noKey.stderr);
    ok(noKey.stderr.includes("error[compliance.operator_key_missing]"), noKey.stderr);
    await Deno.stat(out).then(() => ok(false, "no pack is written on a usage error"), () => {});
  });
});

async function have(tool: string): Promise<boolean> {
  try {
    const r = await new Deno.Command(tool, { args: ["--help"], stdout: "null", stderr: "null" })
      .output();
    return r.code === 0 || r.code === 1 || r.code === 10;
  } catch {
    return false;
  }
}

Deno.test("the manual path of verify-instructions.md works on a built pack with unzip, sha256sum and openssl", async () => {
  if (!(await have("openssl")) || !(await have("unzip"))) {
    console.warn("skipped: openssl or unzip is not installed");
    return;
  }
  await withTempDir(async (dir) => {
    await project(dir);
    const out = join(dir, "pack.zip");
    const run = await runBernstein([...PACK, "--org", "Acme", "--output", out, "--json"], {
      cwd: dir,
      env: env(dir),
    });
    strictEqual(run.code, 0, run.stderr);
    const fp = JSON.parse(run.stdout).operator.fingerprint;
    const unzip = await new Deno.Command("unzip", {
      args: ["-p", out, "verify-instructions.md"],
      stdout: "piped",
    }).output();
    const guide = new TextDecoder().decode(unzip.stdout);
    const manual = guide.slice(guide.indexOf("## By hand"));
    const script = /```sh\n([\s\S]*?)```/.exec(manual)?.[1];
    ok(script !== undefined, "the guide has a manual shell block");
    const sh = await new Deno.Command("bash", {
      args: ["-euo", "pipefail", "-c", script],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(sh.stdout);
    strictEqual(sh.code, 0, `${stdout}\n${new TextDecoder().decode(sh.stderr)}`);
    deepStrictEqual(stdout.trim().split("\n"), [
      fp,
      "Signature Verified Successfully",
      "output hash OK",
      "all member hashes match",
      "exactly the listed members",
      "Signature Verified Successfully",
    ]);
    // The same path catches a changed member.
    await Deno.writeTextFile(join(dir, "pack", "lineage-log.jsonl"), "tampered\n");
    const again = await new Deno.Command("bash", {
      args: ["-c", "cd pack && sha256sum -c --quiet expected.sha256"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    strictEqual(again.code, 1);
  });
});

Deno.test("a pack that would fail the auditor's check is still written, and the command exits 1", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    // Remove one signature sidecar: the entry can no longer be verified.
    const sigs = join(dir, ".sdd", "lineage", "signatures");
    const [aa] = [...Deno.readDirSync(sigs)].map((e) => e.name);
    const [h] = [...Deno.readDirSync(join(sigs, aa))].map((e) => e.name);
    const [jws] = [...Deno.readDirSync(join(sigs, aa, h))].map((e) => e.name);
    await Deno.remove(join(sigs, aa, h, jws));
    const out = join(dir, "broken.zip");
    const run = await runBernstein([...PACK, "--org", "Acme", "--output", out], {
      cwd: dir,
      env: env(dir),
    });
    strictEqual(run.code, 1, run.stdout + run.stderr);
    ok(run.stderr.includes("warning[compliance.signature_missing]"), run.stderr);
    ok(run.stdout.includes("self-check: FAIL (1 error)"), run.stdout);
    // The auditor's words name the pack member, not a .sdd path.
    ok(run.stdout.includes("invalid signature: no signature member signatures/"), run.stdout);
    const verified = await runVerify(["pack", out]);
    strictEqual(verified.code, 1);
  });
});

Deno.test("a pack that cannot be built leaves the previous --output as it was and no temp file", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    const out = join(dir, "q1.zip");
    const first = await runBernstein([...PACK, "--org", "Acme Bank", "--output", out], {
      cwd: dir,
      env: env(dir),
    });
    strictEqual(first.code, 0, first.stderr);
    const before = await Deno.readFile(out);
    // A second card for a signer with another key: the build refuses to pick one.
    const log = await Deno.readTextFile(join(dir, ".sdd", "lineage", "log.jsonl"));
    const entry = JSON.parse(log.split("\n")[0]);
    await Deno.mkdir(join(dir, ".sdd", "agents", "rogue"), { recursive: true });
    await Deno.writeFile(
      join(dir, ".sdd", "agents", "rogue", "card.json"),
      renderAgentCard(
        makeAgentCard(entry.agent_id, {
          kid: entry.agent_card_kid,
          publicKey: new Uint8Array(32).fill(9),
        }),
      ),
    );
    const second = await runBernstein([...PACK, "--org", "Acme Bank", "--output", out], {
      cwd: dir,
      env: env(dir),
    });
    strictEqual(second.code, 1, second.stdout + second.stderr);
    ok(second.stderr.includes("compliance.conflicting_cards"), second.stderr);
    deepStrictEqual(await Deno.readFile(out), before, "the old pack is untouched");
    const left: string[] = [];
    for await (const e of Deno.readDir(dir)) if (e.name.endsWith(".tmp")) left.push(e.name);
    deepStrictEqual(left, [], "no temp file left behind");
  });
});
