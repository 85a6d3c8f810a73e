// Git as an attacker leaves it: settings planted in the repository's .git/config, the global
// config and hooks never run inside bernstein's git calls; the merge-time gates refuse symlink
// escapes, .git paths, local submodules, hooks, tracked git config, new attribute drivers and
// secrets; the repository-state gate names and undoes what an agent changed in .git.
import assert from "node:assert/strict";
import { join } from "node:path";
import { mapEnv, processEnv } from "../../src/io/mod.ts";
import {
  type DiffEntry,
  findSecrets,
  Git,
  gitmodulesProblems,
  gitSafetyGate,
  gitStateGate,
  isDotGitSegment,
  isLocalUrl,
  parseRawDiff,
  secretNeedles,
  secretsGate,
  snapshotGitState,
  symlinkProblem,
} from "../../src/orchestrator/mod.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("planted git settings and hooks never run inside bernstein's git calls", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "repo");
    await Deno.mkdir(root);
    await makeRepo(root);
    const marker = join(dir, "fired");
    const program = join(dir, "x.sh");
    await Deno.writeTextFile(program, `#!/bin/sh\necho "$0 $*" >> ${marker}\nexit 0\n`);
    await Deno.chmod(program, 0o755);
    // What an unsandboxed agent can do from its worktree: the shared .git/config …
    for (
      const [key, value] of [
        ["core.fsmonitor", program],
        ["core.hooksPath", join(dir, "hooks")],
        ["core.pager", program],
        ["core.editor", program],
        ["core.sshCommand", program],
        ["diff.external", program],
        ["gpg.program", program],
        ["commit.gpgsign", "true"],
        ["credential.helper", `!${program}`],
      ]
    ) {
      await git(root, "config", key, value);
    }
    // … hooks in the default folder and the planted hooksPath …
    await Deno.mkdir(join(dir, "hooks"));
    for (
      const hook of [
        "pre-commit",
        "post-commit",
        "post-checkout",
        "post-merge",
        "reference-transaction",
      ]
    ) {
      for (const folder of [join(root, ".git", "hooks"), join(dir, "hooks")]) {
        await Deno.writeTextFile(join(folder, hook), `#!/bin/sh\necho ${hook} >> ${marker}\n`);
        await Deno.chmod(join(folder, hook), 0o755);
      }
    }
    // … the operator's global config (HOME) …
    const home = join(dir, "home");
    await Deno.mkdir(home);
    await Deno.writeTextFile(join(home, ".gitconfig"), `[core]\n\tfsmonitor = ${program}\n`);
    const g = new Git(root, {
      env: mapEnv({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home }),
    });
    const wt = join(root, ".sdd", "worktrees", "s1");
    await g.addWorktree(wt, "agent/s1", "HEAD");
    await Deno.writeTextFile(join(wt, "a.txt"), "a\n");
    await Deno.writeTextFile(join(wt, "README.md"), "changed\n");
    assert.ok(await g.isDirty(wt));
    const sha = await g.commitAll(wt, "agent work");
    assert.ok(sha);
    const entries = await g.diffEntries("feature", "agent/s1");
    assert.deepEqual(entries.map((e) => `${e.status} ${e.path}`), ["M README.md", "A a.txt"]);
    assert.equal(new TextDecoder().decode(await g.showFile("agent/s1", "a.txt")), "a\n");
    const merged = await g.merge("agent/s1", "merge s1");
    assert.ok(merged.ok);
    assert.equal(await g.isDirty(undefined, true), false);
    await g.removeWorktree(wt, true);
    await g.deleteBranch("agent/s1", true);
    assert.equal(await g.currentBranch(), "feature");
    assert.equal(await exists(marker), false, await Deno.readTextFile(marker).catch(() => ""));
    // The planted fsmonitor does fire for a plain git call: the test would notice if it could.
    await new Deno.Command("git", { args: ["status"], cwd: root, env: { HOME: home } }).output();
    assert.ok(await exists(marker), "plain git runs the planted fsmonitor");
  });
});

Deno.test("replace refs planted by an agent do not change what bernstein reads", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    const blob = (await git(dir, "rev-parse", "HEAD:README.md")).trim();
    const hashing = new Deno.Command("git", {
      args: ["hash-object", "-w", "--stdin"],
      cwd: dir,
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const writer = hashing.stdin.getWriter();
    await writer.write(new TextEncoder().encode("forged\n"));
    await writer.close();
    const forged = new TextDecoder().decode((await hashing.output()).stdout).trim();
    await git(dir, "replace", blob, forged);
    assert.equal(await git(dir, "show", "HEAD:README.md"), "forged\n", "plain git follows it");
    assert.equal(new TextDecoder().decode(await g.showFile("HEAD", "README.md")), "# test repo\n");
  });
});

Deno.test("raw diff entries carry modes (symlinks are 120000)", () => {
  const out = ":000000 120000 0000000000000000000000000000000000000000 " +
    "1111111111111111111111111111111111111111 A\0up\0" +
    ":100644 100755 2222222222222222222222222222222222222222 " +
    "3333333333333333333333333333333333333333 M\0bin/run\0";
  assert.deepEqual(parseRawDiff(out), [
    { oldMode: "000000", newMode: "120000", status: "A", path: "up" },
    { oldMode: "100644", newMode: "100755", status: "M", path: "bin/run" },
  ]);
});

Deno.test("symlink targets: outside, absolute, into .git or .sdd are refused; inside is fine", () => {
  assert.equal(symlinkProblem("docs/link", "../README.md"), undefined);
  assert.equal(symlinkProblem("a/b/c", "../d"), undefined);
  assert.match(symlinkProblem("up", "../../../..") ?? "", /outside the repository/);
  assert.match(symlinkProblem("a/victim", "../../x") ?? "", /outside the repository/);
  assert.match(symlinkProblem("victim", "/tmp/secret") ?? "", /absolute/);
  assert.match(symlinkProblem("c", "C:\\Windows") ?? "", /absolute/);
  assert.match(symlinkProblem("cfg", ".git/config") ?? "", /inside \.git/);
  assert.match(symlinkProblem("d/cfg", "../.GIT/hooks") ?? "", /inside \.git/);
  assert.match(symlinkProblem("k", ".sdd/keys/operator.key") ?? "", /inside \.sdd/);
  assert.match(symlinkProblem("e", "") ?? "", /empty/);
});

Deno.test(".git in every spelling; local submodule URLs; command updates", () => {
  for (const s of [".git", ".GIT", ".git.", ".git ", "git~1", ".g\u200cit", "\ufeff.git"]) {
    assert.ok(isDotGitSegment(s), JSON.stringify(s));
  }
  for (const s of [".github", ".gitignore", "git", ".gitmodules"]) {
    assert.ok(!isDotGitSegment(s), s);
  }
  for (const u of ["/srv/repo", "./x", "../x", "~/x", "file:///x", "FILE:x", "relative/path"]) {
    assert.ok(isLocalUrl(u), u);
  }
  for (const u of ["https://github.com/a/b", "git@github.com:a/b.git", "ssh://h/x"]) {
    assert.ok(!isLocalUrl(u), u);
  }
  assert.deepEqual(
    gitmodulesProblems(
      '[submodule "a"]\n\tpath = a\n\turl = ../../../etc\n[submodule "b"]\n\tpath = b\n' +
        "\turl = https://example.com/b.git\n\tupdate = !sh -c evil\n",
    ),
    [
      "submodule url '../../../etc' is a local path",
      "submodule update '!sh -c evil' runs a command",
    ],
  );
});

function reader(files: Record<string, string>, old: Record<string, string> = {}) {
  return (path: string, side: "old" | "new") => {
    const v = (side === "new" ? files : old)[path];
    return Promise.resolve(v === undefined ? undefined : new TextEncoder().encode(v));
  };
}

const entry = (path: string, status = "A", newMode = "100644"): DiffEntry => ({
  path,
  status,
  oldMode: status === "A" ? "000000" : "100644",
  newMode,
});

Deno.test("git_safety gate names every unsafe path and passes an ordinary change", async () => {
  const files = {
    victim: "/tmp/x",
    up: "../../../..",
    ok: "docs/readme.md",
    ".gitmodules": '[submodule "s"]\n\tpath = s\n\turl = /srv/local\n',
    ".gitattributes": "*.png binary\n*.md diff=markdown\n*.txt filter=evil\n",
    "sub/.gitconfig": "[core]\n\tfsmonitor = x\n",
  };
  const result = await gitSafetyGate({
    entries: [
      entry("victim", "A", "120000"),
      entry("up", "A", "120000"),
      entry("ok", "A", "120000"),
      entry(".GIT/config"),
      entry("a/git~1/hooks/post-checkout"),
      entry(".gitmodules"),
      entry(".githooks/pre-commit"),
      entry("tools/hooks/pre-push"),
      entry(".gitattributes", "M"),
      entry("sub/.gitconfig"),
      entry("config/git.inc"),
      entry("vendor/lib", "A", "160000"),
      entry("src/app.ts"),
      entry(".git/removed", "D"),
    ],
    read: reader(
      { ...files, "config/git.inc": "x" },
      { ".gitattributes": "*.png binary\n" },
    ),
    hooksPath: "tools/hooks",
    includedConfig: ["config/git.inc"],
  });
  assert.equal(result.ok, false);
  assert.equal(result.gate, "git_safety");
  const expected = [
    "victim: a symlink with an absolute target (/tmp/x)",
    "up: a symlink with a target outside the repository (../../../..)",
    ".GIT/config: a file under .git",
    "a/git~1/hooks/post-checkout: a file under .git",
    ".gitmodules: submodule url '/srv/local' is a local path",
    ".githooks/pre-commit: a git hook file",
    "tools/hooks/pre-push: a git hook file",
    ".gitattributes: adds attribute driver(s) filter=evil (a program git runs)",
    "sub/.gitconfig: a tracked git config",
    "config/git.inc: a tracked git config",
    "vendor/lib: a submodule (gitlink) added by the change",
  ];
  for (const e of expected) assert.ok(result.reason.includes(e), `${e}\nin: ${result.reason}`);
  assert.ok(!result.reason.includes("src/app.ts") && !result.reason.includes("ok:"));
  assert.ok(!result.reason.includes(".git/removed"), "deletions are not refused");
  const fine = await gitSafetyGate({
    entries: [entry("src/app.ts"), entry("ok", "A", "120000"), entry(".gitattributes", "M")],
    read: reader(
      { ok: "src/app.ts", ".gitattributes": "*.md diff=markdown\n*.txt filter=lfs\n" },
      { ".gitattributes": "*.txt filter=lfs\n" },
    ),
  });
  assert.equal(fine.ok, true, fine.reason);
});

Deno.test("secrets gate: the value, base64, hex and private key blocks are found; values never shown", async () => {
  const token = "bop_QWERTYUIOPasdfghjkl1234567890";
  const key = "a3".repeat(32);
  const secrets = [
    { name: "the operator token", value: token },
    { name: "the audit key", value: key },
    { name: "$SHORT", value: "abc" },
  ];
  const b64 = btoa(token);
  const hex = [...new TextEncoder().encode(token)].map((b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
  const binary = new Uint8Array([
    0,
    1,
    2,
    ...new TextEncoder().encode("-----BEGIN OPENSSH PRIVATE KEY-----"),
    255,
  ]);
  const result = await secretsGate({
    entries: [
      entry("plain.txt"),
      entry("b64.txt"),
      entry("hex.txt"),
      entry("key.hex", "M"),
      entry("blob.bin"),
      entry("short.txt"),
      entry("gone.txt", "D"),
      entry("clean.txt"),
    ],
    read: (path) =>
      Promise.resolve(
        ({
          "plain.txt": new TextEncoder().encode(`token=${token}\n`),
          "b64.txt": new TextEncoder().encode(b64),
          "hex.txt": new TextEncoder().encode(hex),
          "key.hex": new TextEncoder().encode(key),
          "blob.bin": binary,
          "short.txt": new TextEncoder().encode("abc abc"),
          "gone.txt": new TextEncoder().encode(token),
          "clean.txt": new TextEncoder().encode("nothing here\n"),
        } as Record<string, Uint8Array>)[path],
      ),
    secrets,
  });
  assert.equal(result.ok, false);
  assert.equal(
    result.reason,
    "the change carries secrets: plain.txt: the operator token; b64.txt: the operator token; " +
      "hex.txt: the operator token; key.hex: the audit key; " +
      "blob.bin: a private key block (-----BEGIN OPENSSH PRIVATE KEY-----)",
  );
  assert.ok(!result.reason.includes(token) && !result.reason.includes(key));
  assert.equal(secretNeedles(secrets).length, 2, "secrets shorter than the minimum are skipped");
  assert.deepEqual(findSecrets(new TextEncoder().encode("-----BEGIN PRIVATE KEY-----"), []), [
    "a private key block (-----BEGIN PRIVATE KEY-----)",
  ]);
  const clean = await secretsGate({
    entries: [entry("clean.txt")],
    read: () => Promise.resolve(new TextEncoder().encode("nothing")),
    secrets,
  });
  assert.equal(clean.ok, true);
});

Deno.test("git_state gate: an agent's git config and hook are named, refused and undone", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const gitDir = join(dir, ".git");
    const snapshot = await snapshotGitState(gitDir);
    const configBefore = await Deno.readFile(join(gitDir, "config"));
    assert.equal((await gitStateGate(snapshot)).ok, true);
    await git(dir, "config", "core.fsmonitor", "/tmp/x.sh");
    await Deno.writeTextFile(join(gitDir, "hooks", "post-checkout"), "#!/bin/sh\nevil\n");
    await Deno.symlink("/etc/passwd", join(gitDir, "info", "attributes"));
    const refused = await gitStateGate(snapshot);
    assert.equal(refused.ok, false);
    assert.equal(
      refused.reason,
      "the repository's git state changed while the agent ran (restored): .git/config changed, " +
        ".git/hooks/post-checkout added, .git/info/attributes added",
    );
    assert.deepEqual(await Deno.readFile(join(gitDir, "config")), configBefore);
    assert.equal(await exists(join(gitDir, "hooks", "post-checkout")), false);
    assert.equal(await exists(join(gitDir, "info", "attributes")), false);
    assert.equal(await exists("/etc/passwd"), true, "the symlink was removed, not followed");
    assert.equal((await gitStateGate(snapshot)).ok, true);
  });
});

Deno.test("git_state gate: a one-byte change of the same length and a mode change are each caught", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const gitDir = join(dir, ".git");
    const hook = join(gitDir, "hooks", "pre-commit");
    await Deno.writeTextFile(hook, "#!/bin/sh\nexit 0\n");
    await Deno.chmod(hook, 0o644);
    const snapshot = await snapshotGitState(gitDir);
    await Deno.writeTextFile(hook, "#!/bin/sh\nexit 1\n");
    assert.match((await gitStateGate(snapshot)).reason, /\.git\/hooks\/pre-commit changed$/);
    assert.equal(await Deno.readTextFile(hook), "#!/bin/sh\nexit 0\n", "put back");
    await Deno.chmod(hook, 0o755);
    assert.match((await gitStateGate(snapshot)).reason, /\.git\/hooks\/pre-commit changed$/);
    assert.equal(((await Deno.stat(hook)).mode ?? 0) & 0o777, 0o644, "mode put back");
    assert.equal((await gitStateGate(snapshot)).ok, true);
  });
});
