// The Linux sandbox for real: an agent command wrapped by `sandboxCommand` runs under bwrap and
// a probe script inside reports what it can reach. The kernel enforces the plan: the project's
// .sdd (tokens, keys), the operator's HOME, key files and other worktrees are invisible, git
// metadata is read-only, /tmp is private, the worktree and HOME are writable, and the network
// is the egress proxy: allowlisted loopback targets work, everything else is refused and
// reported. Ignored (with the reason) where bwrap cannot run.
import assert from "node:assert/strict";
import { join } from "node:path";
import { processEnv } from "../../src/io/mod.ts";
import { selfCommand } from "../../src/orchestrator/mod.ts";
import {
  bwrapArgv,
  decideIsolation,
  EgressProxy,
  parseEgressTarget,
  probeSandbox,
  type RefusedConnection,
  sandboxCommand,
} from "../../src/sandbox/mod.ts";
import { runProcess, spawnProcess } from "../../src/io/mod.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

const probe = await probeSandbox();
const why = probe.available ? "" : ` [skipped: ${probe.reason}]`;

/** A plain-JS probe (no imports, nothing for deno to compile into its read-only cache). */
const PROBE = `
const out = {};
const tryRead = async (p) => { try { await Deno.readTextFile(p); return "read"; } catch (e) { return e.name; } };
const tryWrite = async (p) => { try { await Deno.writeTextFile(p, "x"); return "written"; } catch (e) { return e.name; } };
const args = JSON.parse(Deno.args[0]);
for (const p of args.read) out["read " + p] = await tryRead(p);
for (const p of args.write) out["write " + p] = await tryWrite(p);
const fetchText = async (url, init) => {
  try { const r = await fetch(url, init); return r.status + " " + (await r.text()).trim(); } catch (e) { return e.name; }
};
out.origin = await fetchText(args.origin);
out.external = await fetchText("http://example.com/");
try { const c = await Deno.connect({ hostname: "1.1.1.1", port: 80 }); c.close(); out.raw = "connected"; } catch (e) { out.raw = e.name; }
const git = new Deno.Command("git", { args: ["config", "core.fsmonitor", "/tmp/x.sh"], stderr: "piped" }).outputSync();
out.gitConfig = git.code === 0 ? "changed" : new TextDecoder().decode(git.stderr).trim().split("\\n").pop();
out.gitStatus = new Deno.Command("git", { args: ["status", "--porcelain"] }).outputSync().code;
console.log(JSON.stringify(out));
`;

Deno.test({
  name:
    `bwrap sandbox: keys, .sdd, HOME and other worktrees unreachable; git read-only; egress filtered${why}`,
  ignore: !probe.available,
  async fn() {
    await withTempDir(async (dir) => {
      const root = join(dir, "repo");
      await Deno.mkdir(root);
      await makeRepo(root);
      const sdd = join(root, ".sdd");
      const worktree = join(sdd, "worktrees", "s1");
      const other = join(sdd, "worktrees", "s2");
      const home = join(sdd, "runtime", "homes", "s1");
      await Deno.mkdir(join(sdd, "worktrees"), { recursive: true });
      await git(root, "worktree", "add", "-q", "-b", "agent/s1", worktree);
      await git(root, "worktree", "add", "-q", "-b", "agent/s2", other);
      await Deno.mkdir(join(home, "tmp"), { recursive: true });
      await Deno.writeTextFile(join(sdd, "runtime", "auth.token"), "bop_secret");
      await Deno.mkdir(join(sdd, "keys"), { recursive: true });
      await Deno.writeTextFile(join(sdd, "keys", "operator.key"), "key");
      // The operator's HOME, and a key file inside a folder the agent is shown read-only.
      const operatorHome = join(dir, "operator-home");
      await Deno.mkdir(join(operatorHome, ".ssh"), { recursive: true });
      await Deno.writeTextFile(join(operatorHome, ".ssh", "id_ed25519"), "private");
      const tools = join(dir, "tools");
      await Deno.mkdir(tools);
      await Deno.writeTextFile(join(tools, "audit.key"), "a".repeat(64));
      await Deno.writeTextFile(join(tools, "tool.txt"), "tool");
      await Deno.writeTextFile(join(worktree, "probe.js"), PROBE);

      const origin = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        () => new Response("hello"),
      );
      const refused: RefusedConnection[] = [];
      const proxy = new EgressProxy({
        socketDir: join(dir, "sockets"),
        onRefused: (r) => refused.push(r),
      });
      const self = selfCommand(processEnv);
      const decision = decideIsolation("sandbox", probe);
      const args = {
        read: [
          join(sdd, "runtime", "auth.token"),
          join(sdd, "keys", "operator.key"),
          join(other, "README.md"),
          join(root, "README.md"),
          join(operatorHome, ".ssh", "id_ed25519"),
          join(tools, "audit.key"),
          join(tools, "tool.txt"),
          join(worktree, "README.md"),
        ],
        write: [
          join(worktree, "new.txt"),
          join(home, "state.json"),
          join(root, ".git", "config"),
          join(root, ".git", "hooks", "pre-commit"),
          join(dir, "outside.txt"),
          "/tmp/marker",
        ],
        origin: `http://127.0.0.1:${origin.addr.port}/`,
      };
      const wrapped = await sandboxCommand(
        {
          argv: [Deno.execPath(), "run", "-A", "--no-config", "probe.js", JSON.stringify(args)],
          env: { PATH: "/usr/bin:/bin", HOME: home, TMPDIR: join(home, "tmp"), ...self.env },
          cwd: worktree,
        },
        {
          session: "s1",
          worktree,
          home,
          allow: [parseEgressTarget(`127.0.0.1:${origin.addr.port}`)],
        },
        {
          decision,
          proxy,
          privateDir: join(dir, "private"),
          self: { argv: self.argv, env: self.env },
          selfReadOnly: self.readOnly,
          projectRoot: root,
          sdd,
          gitDir: join(root, ".git"),
          secretFiles: [join(tools, "audit.key")],
          operatorHome,
          extraReadOnly: [tools],
        },
      );
      // The run starts it through setsid(1): bwrap is the executable the probe ran.
      assert.equal(wrapped.group, "setsid");
      assert.equal(wrapped.argv[0], decision.executable);
      let result;
      try {
        result = await runProcess(wrapped.argv, {
          cwd: wrapped.cwd,
          env: wrapped.env,
          timeoutMs: 120_000,
          leaderLast: wrapped.leaderLast,
          group: wrapped.group,
        });
      } finally {
        await wrapped.channel.close();
        await proxy.close();
        await origin.shutdown();
      }
      const stdout = new TextDecoder().decode(result.stdout);
      const context = `exit ${result.code}\n${stdout}\n${new TextDecoder().decode(result.stderr)}`;
      assert.equal(result.code, 0, context);
      const out = JSON.parse(stdout.trim().split("\n").at(-1) as string);
      assert.equal(out[`read ${join(sdd, "runtime", "auth.token")}`], "NotFound");
      assert.equal(out[`read ${join(sdd, "keys", "operator.key")}`], "NotFound");
      assert.equal(out[`read ${join(other, "README.md")}`], "NotFound", "another worktree");
      assert.equal(out[`read ${join(root, "README.md")}`], "NotFound", "the main checkout");
      assert.equal(out[`read ${join(operatorHome, ".ssh", "id_ed25519")}`], "NotFound");
      // The key file inside a shown folder reads as empty /dev/null, never as the key.
      assert.notEqual(out[`read ${join(tools, "audit.key")}`], "NotFound");
      assert.equal(out[`read ${join(tools, "tool.txt")}`], "read");
      assert.equal(out[`read ${join(worktree, "README.md")}`], "read");
      assert.equal(out[`write ${join(worktree, "new.txt")}`], "written");
      assert.equal(out[`write ${join(home, "state.json")}`], "written");
      assert.notEqual(out[`write ${join(root, ".git", "config")}`], "written");
      assert.notEqual(out[`write ${join(root, ".git", "hooks", "pre-commit")}`], "written");
      assert.equal(out["write /tmp/marker"], "written", "a private /tmp");
      assert.equal(out.origin, "200 hello", "the allowlisted loopback target works");
      assert.match(out.external, /^403 /, "the proxy refused example.com");
      assert.notEqual(out.raw, "connected", "no route out of the namespace");
      assert.match(out.gitConfig, /Read-only file system|could not lock/);
      assert.equal(out.gitStatus, 0, "git reads work");
      assert.deepEqual(refused.map((r) => r.target), ["example.com:80"]);
      // On the host: nothing outside the worktree and HOME changed (a write elsewhere landed in
      // the sandbox's private tmpfs and vanished with it).
      assert.equal(await Deno.readTextFile(join(worktree, "new.txt")), "x");
      await assert.rejects(Deno.stat(join(dir, "outside.txt")), Deno.errors.NotFound);
      assert.doesNotMatch(await Deno.readTextFile(join(root, ".git", "config")), /fsmonitor/);
      assert.equal(await Deno.readTextFile(join(tools, "audit.key")), "a".repeat(64));
      assert.deepEqual(wrapped.record.egress, [`127.0.0.1:${origin.addr.port}`]);
      assert.equal(wrapped.record.backend, "bwrap");
      assert.deepEqual(wrapped.record.writable, [worktree, home]);
    });
  },
});

/** Every process of group `pgid`, zombies included, as "pid state command" (read from /proc). */
function groupProcesses(pgid: number): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    if (Number(fields[2]) === pgid) out.push(`${entry.name} ${fields[0]} ${comm}`);
  }
  return out;
}

Deno.test({
  name:
    `a bwrap sandbox that ends or is stopped leaves nothing in its process group, not even a zombie${why}`,
  ignore: !probe.available,
  async fn() {
    // It ends by itself; it is stopped and obeys SIGTERM; it ignores SIGTERM and is killed.
    const cases: [string, boolean][] = [
      ["echo ready; exit 3", false],
      ["echo ready; sleep 300", true],
      ["trap '' TERM; echo ready; sleep 300", true],
    ];
    // Started as a run starts an agent (through setsid: the executable is known) and detached.
    for (
      const [[script, stop], group] of cases.flatMap((c) => [[c, "setsid"], [c, "detach"]] as const)
    ) {
      let ready!: () => void;
      const started = new Promise<void>((resolve) => (ready = resolve));
      const argv = bwrapArgv([
        { kind: "ro-bind", src: "/", dest: "/" },
        { kind: "proc", dest: "/proc" },
        { kind: "dev", dest: "/dev" },
      ], {
        bwrap: probe.available ? probe.executable : "bwrap",
        cwd: "/",
        command: ["sh", "-c", script],
      });
      const handle = spawnProcess(argv, {
        env: { PATH: "/usr/bin:/bin" },
        leaderLast: true,
        group,
        onStdout: () => ready(),
      });
      await started;
      if (stop) {
        // bwrap and the shell (pid 1 inside) at least.
        assert.ok(groupProcesses(handle.pid).length >= 2, groupProcesses(handle.pid).join("\n"));
        await handle.terminate(50);
      }
      const result = await handle.done;
      assert.notEqual(result.code, 0);
      assert.deepEqual(groupProcesses(handle.pid), [], `${group}: ${script}`);
    }
  },
});
