// The terminal side of watching a run, on real terminals and pipes: `bernstein run` in tmux
// (send-keys / capture-pane) shows its live view — a spinner line per active agent with its
// progress and a progress bar — and clears it when the run ends; with NO_COLOR it prints plain
// lines; `bernstein logs -f` over a pipe follows several agents with their prefixes to the end.
import assert from "node:assert/strict";
import { join } from "node:path";
import { v8FlagsArg } from "../../scripts/runtime_flags.ts";
import { artifactsDir } from "../_helpers/browser.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { guard, until } from "../_helpers/wait.ts";
import { prepareRepo, runEnv, startBernstein } from "./_run_helpers.ts";

function which(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(join(dir, name)).isFile) return join(dir, name);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const TMUX = which("tmux");
const TMUX_IGNORED = TMUX === undefined
  ? " (ignored: no tmux; apt-get install tmux, .ci/setup-services installs it)"
  : "";

/** The gate file the agents wait for, in a folder of its own. */
async function gateIn(dir: string): Promise<string> {
  await Deno.mkdir(join(dir, "gates"));
  return join(dir, "gates", "gate");
}

/** The sandbox shows the agents that folder (read-only), so they see the gate open. */
function gateConfig(gate: string): Record<string, unknown> {
  return { sandbox: { read_only: [join(gate, "..")] } };
}

function plan(gate: string): string {
  const step = (title: string, file: string, text: string) =>
    `      - title: ${title}
        files: [${file}]
        description: |
          @agent progress ${text}
          @agent run sh -c "while [ ! -f ${gate} ]; do sleep 0.05; done"
          @agent write ${file} ${title}
`;
  return `name: terminal
cli: scripted
stages:
  - name: build
    steps:
${step("Alpha step", "alpha.txt", "alpha is waiting for the gate")}${
    step("Beta step", "beta.txt", "beta is waiting for the gate")
  }`;
}

/** tmux on a private socket. */
class Tmux {
  constructor(readonly socket: string) {}

  async run(...args: string[]): Promise<string> {
    const out = await new Deno.Command(TMUX as string, {
      args: ["-S", this.socket, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (out.code !== 0) {
      throw new Error(`tmux ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return new TextDecoder().decode(out.stdout);
  }

  /** The pane's text (with its history, and escapes when `escapes`). */
  capture(escapes = false): Promise<string> {
    return this.run("capture-pane", "-p", "-J", "-S", "-", "-t", "t", ...(escapes ? ["-e"] : []));
  }

  /** Waits until the pane shows what `done` looks for (checked as the pane changes). */
  async waitFor(done: (text: string) => boolean, what: string): Promise<string> {
    let text = "";
    try {
      return await until(
        async () => {
          text = await this.capture();
          return done(text) ? text : undefined;
        },
        what,
        100,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; the pane shows:\n${text}`);
    }
  }

  async dead(): Promise<boolean> {
    return (await this.run("display-message", "-p", "-t", "t", "#{pane_dead}")).trim() === "1";
  }
}

/** Starts `bernstein run plan.yaml` in a detached tmux session of 120×40. */
async function runInTmux(dir: string, repo: string, extraEnv: Record<string, string>) {
  const tmux = new Tmux(join(dir, "tmux.sock"));
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? dir,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/deno`,
    TERM: "screen-256color",
    ...runEnv(repo),
    ...extraEnv,
  };
  const script = join(dir, "run.sh");
  const quote = (s: string) => `'${s.replaceAll("'", `'"'"'`)}'`;
  await Deno.writeTextFile(
    script,
    `${Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`).join("\n")}\n` +
      `cd ${quote(repo)}\nexec ${
        [
          Deno.execPath(),
          "run",
          "-q",
          "--frozen",
          `--config=${REPO_ROOT}deno.json`,
          "-P=bernstein",
          v8FlagsArg(),
          `${REPO_ROOT}main.ts`,
          "run",
          "plan.yaml",
        ].map(quote).join(" ")
      }\n`,
  );
  await tmux.run(
    "-f",
    "/dev/null",
    "new-session",
    "-d",
    "-s",
    "t",
    "-x",
    "120",
    "-y",
    "40",
    `sh ${script}`,
  );
  await tmux.run("set-option", "-t", "t", "remain-on-exit", "on");
  return tmux;
}

Deno.test({
  name:
    `terminal: on a TTY, run shows a live view that follows the agents and clears at the end${TMUX_IGNORED}`,
  ignore: TMUX === undefined,
  async fn() {
    await withTempDir(async (dir) => {
      const repo = join(dir, "repo");
      await Deno.mkdir(repo);
      const gate = await gateIn(dir);
      await prepareRepo(repo, plan(gate), gateConfig(gate));
      const tmux = await runInTmux(dir, repo, {});
      try {
        const live = await tmux.waitFor(
          (t) => /alpha is waiting/.test(t) && /beta is waiting/.test(t) && /0\/2 tasks/.test(t),
          "both agents in the live view",
        );
        const spinner =
          /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] 1\.1-alpha-step\s+scripted\s+running\s+\d+s {2}alpha is waiting/m;
        await Deno.writeTextFile(join(await artifactsDir(), "terminal-live.txt"), live);
        assert.match(live, spinner);
        assert.match(live, /^\[-+\] 0\/2 tasks$/m);
        assert.match(live, /dashboard: http:\/\/127\.0\.0\.1:\d+\/login\?code=/);
        await Deno.writeTextFile(gate, "");
        const end = await tmux.waitFor((t) => /HEALTHY/.test(t), "the summary");
        await until(async () => (await tmux.dead()) || undefined, "the run in tmux to end");
        const final = await tmux.capture();
        await Deno.writeTextFile(join(await artifactsDir(), "terminal-final.txt"), final);
        assert.match(final, /run \S+: HEALTHY/);
        assert.match(final, /merged\s+1\.1-alpha-step/);
        // The live block was erased before the summary: no spinner line is left on screen.
        assert.doesNotMatch(final, /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /m, final);
        assert.doesNotMatch(final, /\d\/2 tasks/);
        void end;
      } finally {
        await Deno.writeTextFile(gate, "").catch(() => {});
        await tmux.run("kill-server").catch(() => "");
      }
    });
  },
});

Deno.test({
  name:
    `terminal: with NO_COLOR the run prints plain lines, no live view and no escapes${TMUX_IGNORED}`,
  ignore: TMUX === undefined,
  async fn() {
    await withTempDir(async (dir) => {
      const repo = join(dir, "repo");
      await Deno.mkdir(repo);
      const gate = await gateIn(dir);
      await prepareRepo(repo, plan(gate), gateConfig(gate));
      await Deno.writeTextFile(gate, "");
      const tmux = await runInTmux(dir, repo, { NO_COLOR: "1" });
      try {
        await tmux.waitFor((t) => /HEALTHY/.test(t), "the summary");
        await until(async () => (await tmux.dead()) || undefined, "the run in tmux to end");
        const withEscapes = await tmux.capture(true);
        assert.match(withEscapes, /▶ 1\.1-alpha-step\s+scripted/);
        assert.match(withEscapes, /⇢ 1\.2-beta-step merged/);
        assert.ok(!withEscapes.includes("\x1b["), "no colour or cursor escapes");
        assert.doesNotMatch(withEscapes, /tasks$/m);
      } finally {
        await tmux.run("kill-server").catch(() => "");
      }
    });
  },
});

Deno.test("terminal: logs -f follows several agents with their prefixes until the run ends", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    const gate = await gateIn(dir);
    await prepareRepo(repo, plan(gate), gateConfig(gate));
    const run = startBernstein(repo, ["run", "plan.yaml"]);
    const runOut = new Response(run.stdout).text();
    const runErr = new Response(run.stderr).text();
    let logs: Deno.ChildProcess | undefined;
    try {
      // Both agents are waiting on the gate once two sessions are recorded and logging.
      const sessions = join(repo, ".sdd", "runtime", "sessions");
      await until(async () => {
        const names = (await Array.fromAsync(Deno.readDir(sessions)).catch(() => []))
          .filter((e) => /^[^.].*\.json$/.test(e.name));
        return names.length >= 2 ? true : undefined;
      }, "two agent sessions");
      logs = startBernstein(repo, ["logs", "-f"]);
      const reader = logs.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!(/alpha is waiting/.test(text) && /beta is waiting/.test(text))) {
        const { value, done } = await guard(reader.read(), "both agents' progress in logs -f");
        if (done) throw new Error(`logs ended early:\n${text}`);
        text += value;
      }
      await Deno.writeTextFile(gate, "");
      for (;;) {
        const { value, done } = await guard(reader.read(), "logs -f to end with the run");
        if (done) break;
        text += value;
      }
      const status = await logs.status;
      assert.equal(status.code, 0, text);
      const lines = text.trimEnd().split("\n");
      assert.ok(lines.every((l) => /^1\.[12]-(alpha|beta)-step {1,2}│ /.test(l)), text);
      assert.ok(
        lines.some((l) => l.startsWith("1.1-alpha-step │ ") && l.includes("alpha is waiting")),
      );
      assert.ok(
        lines.some((l) => l.startsWith("1.2-beta-step  │ ") && l.includes("beta is waiting")),
      );
      // Each agent's log reaches its result line: -f ended only after both were drained.
      assert.equal(lines.filter((l) => l.includes('"type":"result"')).length, 2, text);
      assert.equal((await run.status).code, 0, `${await runOut}\n${await runErr}`);
    } finally {
      await Deno.writeTextFile(gate, "").catch(() => {});
      for (const child of [run, logs]) {
        try {
          child?.kill("SIGTERM");
        } catch {
          // Already ended.
        }
      }
      await run.status;
      await logs?.status;
      await runOut.catch(() => "");
      await runErr.catch(() => "");
    }
  });
});
