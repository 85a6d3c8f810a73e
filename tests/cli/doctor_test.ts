import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { BufferSink, main, Output } from "../../src/cli/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

async function doctor(cwd: string, env: Record<string, string>) {
  const stdout = new BufferSink();
  const code = await main(["doctor", "--json"], {
    out: new Output(stdout, new BufferSink()),
    env: mapEnv({ PATH: Deno.env.get("PATH") ?? "", ...env }),
    cwd,
  });
  const doc = JSON.parse(stdout.text) as {
    ok: boolean;
    checks: { name: string; status: string; detail: string }[];
  };
  return {
    code,
    doc,
    status: (name: string) => doc.checks.filter((c) => c.name === name).map((c) => c.status),
  };
}

Deno.test("doctor passes on a prepared repo with a private audit key", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.mkdir(join(dir, ".sdd"));
    // A key inside the project is a FAIL: every agent worktree lies inside the project.
    const inside = join(dir, "audit.key");
    await Deno.writeTextFile(inside, "a".repeat(64), { mode: 0o600 });
    strictEqual(
      (await doctor(dir, { BERNSTEIN_AUDIT_KEY_PATH: inside, HOME: dir })).status("audit key")[0],
      "FAIL",
    );
    const key = `${dir}.audit.key`;
    await Deno.writeTextFile(key, "a".repeat(64), { mode: 0o600 });
    const r = await doctor(dir, { BERNSTEIN_AUDIT_KEY_PATH: key, HOME: dir }).finally(() =>
      Deno.remove(key)
    );
    strictEqual(r.code, 0, JSON.stringify(r.doc));
    strictEqual(r.doc.ok, true);
    for (const name of ["git", "repository", "audit key", "state", "task server"]) {
      strictEqual(r.status(name)[0], "OK", name);
    }
  });
});

Deno.test("doctor fails on a group-readable audit key and on a non-repository, warns on the default branch", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    await makeRepo(repo);
    const key = join(dir, "audit.key");
    await Deno.writeTextFile(key, "a".repeat(64));
    await Deno.chmod(key, 0o644);
    const r = await doctor(repo, { BERNSTEIN_AUDIT_KEY_PATH: key, HOME: dir });
    strictEqual(r.code, 1);
    strictEqual(r.status("audit key")[0], "FAIL");
    const plain = join(dir, "plain");
    await Deno.mkdir(plain);
    const n = await doctor(plain, {
      HOME: dir,
      BERNSTEIN_AUDIT_KEY_PATH: join(dir, "missing.key"),
    });
    strictEqual(n.code, 1);
    strictEqual(n.status("repository")[0], "FAIL");
    strictEqual(n.status("audit key")[0], "WARN", "a missing key is created by the first run");
  });
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const { git } = await import("../_helpers/temp.ts");
    await git(dir, "checkout", "-q", "main");
    const r = await doctor(dir, { HOME: dir, BERNSTEIN_AUDIT_KEY_PATH: join(dir, "k") });
    ok(
      r.doc.checks.some((c) =>
        c.name === "repository" && c.status === "WARN" && c.detail.includes("default branch")
      ),
    );
  });
});

Deno.test("doctor reports every configuration problem", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agnets: 2\nmax_agents: x\n");
    const r = await doctor(dir, { HOME: dir, BERNSTEIN_AUDIT_KEY_PATH: join(dir, "k") });
    strictEqual(r.code, 1);
    const config = r.doc.checks.filter((c) => c.name === "config");
    strictEqual(config.length, 2);
    ok(config.some((c) => c.status === "FAIL" && c.detail.startsWith("bernstein.yaml:2:13")));
  });
});

Deno.test("doctor fails a configured adapter that is not installed and a postgres backend without a URL", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(
      join(dir, "bernstein.yaml"),
      "cli: goose\nrole_model_policy:\n  qa: { cli: scripted }\nstorage: { backend: postgres }\n",
    );
    const r = await doctor(dir, {
      HOME: dir,
      BERNSTEIN_AUDIT_KEY_PATH: join(dir, "k"),
      PATH: "/usr/bin:/bin",
    });
    strictEqual(r.code, 1);
    const byName = (n: string) => r.doc.checks.find((c) => c.name === n);
    strictEqual(byName("adapter goose")?.status, "FAIL");
    ok(byName("adapter goose")?.detail.includes("not runnable"));
    strictEqual(
      byName("adapter scripted")?.status,
      "OK",
      JSON.stringify(byName("adapter scripted")),
    );
    strictEqual(byName("storage")?.status, "FAIL");
    ok(byName("storage")?.detail.includes("storage.database_url is not set"));
  });
});

Deno.test("doctor shows the isolation in force: sandbox, a loud WARN without one, FAIL when required", async () => {
  const { runDoctor } = await import("../../src/orchestrator/mod.ts");
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const env = mapEnv({ PATH: Deno.env.get("PATH") ?? "", HOME: dir });
    const missing = () =>
      Promise.resolve({
        available: false as const,
        backend: "bwrap" as const,
        reason: "bwrap is not installed",
      });
    const present = () =>
      Promise.resolve({
        available: true as const,
        backend: "bwrap" as const,
        executable: "/usr/bin/bwrap",
        version: "0.8.0",
      });
    const isolation = async (probe: typeof missing | typeof present) =>
      (await runDoctor({ cwd: dir, env, probeSandbox: probe })).find((c) => c.name === "isolation");
    const sandboxed = await isolation(present);
    strictEqual(sandboxed?.status, "OK");
    ok(sandboxed?.detail.includes("bwrap 0.8.0"));
    const warn = await isolation(missing);
    strictEqual(warn?.status, "WARN");
    ok(warn?.detail.includes("bwrap is not installed") && warn.detail.includes("the audit key"));
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "isolation: sandbox\n");
    const fail = await isolation(missing);
    strictEqual(fail?.status, "FAIL");
    ok(fail?.detail.includes("isolation: sandbox"));
  });
});
