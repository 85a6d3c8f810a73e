import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  ConfigError,
  DEFAULT_OVERLAY_NAME,
  findProject,
  initWorkspace,
  loadConfig,
  requireConfig,
  setWorkspaceValue,
} from "../../src/config/mod.ts";
import { mapEnv, SeededRandom } from "../../src/io/mod.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

Deno.test("the default overlay inside .git/ is applied and git never sees it", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 2\n");
    await Deno.writeTextFile(join(dir, ".git", DEFAULT_OVERLAY_NAME), "max_agents: 6\n");
    const loaded = await loadConfig({ cwd: dir, env: mapEnv({}) });
    strictEqual(loaded.config?.max_agents, 6);
    strictEqual(loaded.sources.get("max_agents"), "overlay");
    strictEqual((await git(dir, "status", "--porcelain")).includes("overlay"), false);
  });
});

Deno.test("BERNSTEIN_CONFIG_OVERLAY inside the work tree is refused; inside .git or outside is used", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    await makeRepo(repo);
    await Deno.writeTextFile(join(repo, "local.yaml"), "max_agents: 7\n");
    await rejects(
      loadConfig({ cwd: repo, env: mapEnv({ BERNSTEIN_CONFIG_OVERLAY: "local.yaml" }) }),
      (e: unknown) => e instanceof ConfigError && e.code === "config.overlay_in_worktree",
    );
    await Deno.writeTextFile(join(dir, "outside.yaml"), "max_agents: 7\n");
    const outside = await loadConfig({
      cwd: repo,
      env: mapEnv({ BERNSTEIN_CONFIG_OVERLAY: join(dir, "outside.yaml") }),
    });
    strictEqual(outside.config?.max_agents, 7);
    await Deno.writeTextFile(join(repo, ".git", "mine.yaml"), "max_agents: 5\n");
    const inGit = await loadConfig({
      cwd: repo,
      env: mapEnv({ BERNSTEIN_CONFIG_OVERLAY: ".git/mine.yaml" }),
    });
    strictEqual(inGit.config?.max_agents, 5);
  });
});

Deno.test("an explicit overlay that does not exist is an error, not silently skipped", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await rejects(
      loadConfig({
        cwd: dir,
        env: mapEnv({ BERNSTEIN_CONFIG_OVERLAY: "/nonexistent/overlay.yaml" }),
      }),
      (e: unknown) => e instanceof ConfigError && e.code === "config.overlay_missing",
    );
  });
});

Deno.test("inline BERNSTEIN_CONFIG_OVERRIDE wins over the overlay file; its errors name it", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(join(dir, ".git", DEFAULT_OVERLAY_NAME), "max_agents: 6\n");
    const loaded = await loadConfig({
      cwd: dir,
      env: mapEnv({ BERNSTEIN_CONFIG_OVERRIDE: "{max_agents: 8}" }),
    });
    strictEqual(loaded.config?.max_agents, 8);
    const bad = await loadConfig({
      cwd: dir,
      env: mapEnv({ BERNSTEIN_CONFIG_OVERRIDE: "{max_agents: [1}" }),
    });
    strictEqual(bad.problems[0].code, "config.yaml_syntax");
    ok(bad.problems[0].location?.startsWith("BERNSTEIN_CONFIG_OVERRIDE:1:"));
  });
});

Deno.test("a linked worktree finds its git dir through the .git file", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    await makeRepo(repo);
    await git(repo, "worktree", "add", "-q", join(dir, "wt"), "-b", "wt");
    const project = await findProject(join(dir, "wt"));
    strictEqual(project.root, join(dir, "wt"));
    ok(project.gitDir?.startsWith(join(repo, ".git", "worktrees")));
  });
});

Deno.test("requireConfig throws the first error with a count of the rest", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: x\ncli: 3\n");
    await rejects(requireConfig({ cwd: dir, env: mapEnv({}) }), (e: unknown) => {
      ok(e instanceof ConfigError);
      strictEqual(e.location, "bernstein.yaml:1:13");
      ok(e.message.includes("and 1 more"));
      return true;
    });
  });
});

Deno.test("init is idempotent and never overwrites an existing file", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 2\n");
    const project = await findProject(dir);
    const first = await initWorkspace(project, new SeededRandom(1));
    ok(first.created.includes(".sdd/config.yaml"));
    ok(first.kept.includes("bernstein.yaml"));
    strictEqual(await Deno.readTextFile(join(dir, "bernstein.yaml")), "max_agents: 2\n");
    const id = await Deno.readTextFile(join(dir, ".sdd", "install_id"));
    ok(/^[0-9a-f]{16}$/.test(id));
    const second = await initWorkspace(project, new SeededRandom(2));
    deepStrictEqual(second.created, []);
    strictEqual(await Deno.readTextFile(join(dir, ".sdd", "install_id")), id);
    strictEqual(((await Deno.stat(join(dir, ".sdd", "keys"))).mode ?? 0) & 0o777, 0o700);
    await Deno.writeTextFile(join(dir, ".sdd", "runtime", "server.port"), "1");
    await Deno.writeTextFile(join(dir, ".sdd", "keys", "operator.key"), "secret");
    await Deno.mkdir(join(dir, ".sdd", "worktrees", "s1"));
    await Deno.writeTextFile(join(dir, ".sdd", "worktrees", "s1", "f"), "x");
    const status = await git(dir, "status", "--porcelain", "--untracked-files=all");
    ok(status.includes(".sdd/config.yaml"), status);
    for (const hidden of [".sdd/runtime", ".sdd/keys", ".sdd/worktrees"]) {
      ok(!status.includes(hidden), status);
    }
    // The untouched template parses as an empty layer.
    const loaded = await loadConfig({ cwd: dir, env: mapEnv({}) });
    strictEqual(loaded.problems.length, 0);
  });
});

Deno.test("config set writes .sdd/config.yaml only, keeps comments, validates first", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const project = await findProject(dir);
    await initWorkspace(project, new SeededRandom(1));
    const before = await Deno.readTextFile(join(dir, "bernstein.yaml"));
    await setWorkspaceValue(project, "tuning.agent.max_turns", "50");
    const text = await Deno.readTextFile(join(dir, ".sdd", "config.yaml"));
    ok(text.startsWith("# Workspace runtime defaults"));
    ok(text.includes("max_turns: 50"));
    strictEqual(await Deno.readTextFile(join(dir, "bernstein.yaml")), before);
    await rejects(
      setWorkspaceValue(project, "tuning.agent.max_turns", "0"),
      (e: unknown) => (e as ConfigError).code === "config.invalid_value",
    );
    await rejects(setWorkspaceValue(project, "tuning.agent.max_turn", "5"), (e: unknown) => {
      strictEqual((e as ConfigError).code, "config.unknown_key");
      strictEqual((e as ConfigError).hint, "did you mean 'tuning.agent.max_turns'?");
      return true;
    });
    ok(
      (await Deno.readTextFile(join(dir, ".sdd", "config.yaml"))).includes("max_turns: 50"),
      "a refused set changes nothing",
    );
    await setWorkspaceValue(project, "role_model_policy.backend.model", "opus");
    const loaded = await loadConfig({ cwd: dir, env: mapEnv({}) });
    strictEqual(loaded.config?.role_model_policy?.backend.model, "opus");
  });
});

Deno.test("the project file is exactly one of bernstein.yaml, bernstein.yml, .bernstein/…; two is an error naming both", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.mkdir(join(dir, ".bernstein"));
    await Deno.writeTextFile(join(dir, ".bernstein", "bernstein.yaml"), "max_agents: 7\n");
    const hidden = await loadConfig({ cwd: dir, env: mapEnv({}) });
    strictEqual(hidden.config?.max_agents, 7);
    strictEqual(hidden.sources.get("max_agents"), ".bernstein/bernstein.yaml");
    await Deno.writeTextFile(join(dir, "bernstein.yml"), "max_agents: 5\n");
    await rejects(loadConfig({ cwd: dir, env: mapEnv({}) }), (e: unknown) => {
      strictEqual((e as ConfigError).code, "config.ambiguous_project_file");
      ok((e as ConfigError).message.startsWith("bernstein.yml and .bernstein/bernstein.yaml"));
      return true;
    });
    await Deno.remove(join(dir, ".bernstein"), { recursive: true });
    const yml = await loadConfig({ cwd: dir, env: mapEnv({}) });
    strictEqual(yml.config?.max_agents, 5);
    strictEqual(yml.sources.get("max_agents"), "bernstein.yml");
  });
});

Deno.test("init registers .claude/mcp.json with the runtime folders in info/exclude, once", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const project = await findProject(dir);
    await initWorkspace(project, new SeededRandom(1));
    await initWorkspace(project, new SeededRandom(2));
    const exclude = await Deno.readTextFile(join(dir, ".git", "info", "exclude"));
    strictEqual(exclude.split("\n").filter((l) => l === ".claude/mcp.json").length, 1);
    await Deno.mkdir(join(dir, ".claude"));
    await Deno.writeTextFile(join(dir, ".claude", "mcp.json"), "{}");
    strictEqual((await git(dir, "status", "--porcelain")).includes("mcp.json"), false);
  });
});
