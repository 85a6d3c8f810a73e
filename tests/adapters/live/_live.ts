// The pinned real CLIs (scripts/install_agent_clis.ts), when installed: the flag contract via
// `bernstein adapters check`, drift detection against the real binaries, and real runs through
// the adapter against a local model server (text reply, long prompts, a file write with no
// approval prompt, the turn limit, a server error). A CLI that is not installed is reported as
// ignored with the reason, never passed.
import assert from "node:assert/strict";
import { checkFlags, getAdapter } from "../../../src/adapters/mod.ts";
import type { PinnedCli } from "../../../scripts/install_agent_clis.ts";
import { runBernstein } from "../../_helpers/cli.ts";
import { agentClisBin, pinnedStatus, type RealRun, runRealCli } from "../../_helpers/real_cli.ts";
import { type ModelServer, startModelServer } from "../../e2e/model_servers/mod.ts";

const REPLY = "All done: MARKER-42";
const CONTENT = "written by the agent";

/**
 * The model writes hello.txt through the CLI's own tool (inside the working directory the CLI
 * announced in its request), then answers REPLY.
 */
function writeServer(): ModelServer {
  return startModelServer({ script: [`@model write hello.txt ${CONTENT}`, `@model say ${REPLY}`] });
}

const PROMPT = "Reply with one short sentence. PROMPT-MARKER-7";

/** The shared run and what its tests read before its worktree and server went. */
interface SharedRun {
  run: RealRun;
  /** hello.txt as the CLI left it (the read's error text when it is not there). */
  written: string;
  /** The model server's problems. */
  problems: string[];
  /** The working directory the server found in the first request. */
  firstTurnCwd: string | undefined;
}

/**
 * A prompt that looks like an option to a CLI that reads it from argv, and is 120 KB long (past
 * any argv or pipe buffer limit), its marker at each end.
 */
const DASHED_LONG_PROMPT = "- first a list item, then PROMPT-MARKER-7 " + "x ".repeat(60_000) +
  "END-OF-LONG-PROMPT";
const PATH = `${agentClisBin()}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;

// Error statuses the CLIs give up on quickly. With an endpoint the adapters turn the CLIs' own
// retries off where a setting exists (claude, codex, gemini `general.maxAttempts`); qwen 0.15
// still retries a 500 seven times with backoff (~77 s, no setting) and opencode retries a 500
// five times (60 s), so they get a 400.
const FAST_ERROR: Readonly<Record<string, number>> = {
  claude: 500,
  codex: 500,
  gemini: 500,
  opencode: 400,
  qwen: 400,
};

// CLIs whose own retries outlast a short deadline, with the status they retry: the deadline
// must end them. It counts from the CLI's second attempt (it is retrying by then), so a slow
// start on a busy machine changes nothing.
const RETRIED_ERROR: Readonly<Record<string, number>> = { opencode: 500 };

/** Defines the live tests of one pinned CLI (ignored with the reason when not installed). */
export function defineLiveTests(pin: PinnedCli): void {
  // The reason is part of every ignored test's name, so the runner's own output shows it.
  const { exe, why } = pinnedStatus(pin);
  const ignore = exe === undefined;

  Deno.test({
    name: `live ${pin.name}: 'bernstein adapters check ${pin.name}' passes on ${pin.version}${why}`,
    ignore,
    async fn() {
      const run = await runBernstein(["adapters", "check", pin.name, "--json"], {
        env: { PATH },
      });
      const body = JSON.parse(run.stdout);
      assert.deepEqual(body.missing, [], run.stdout);
      assert.equal(body.version, pin.version, "the installed CLI is the pinned version");
      assert.equal(body.ok, true);
      assert.equal(run.code, 0, run.stderr);
    },
  });

  Deno.test({
    name: `live ${pin.name}: a flag the real CLI does not have is reported missing${why}`,
    ignore,
    async fn() {
      const adapter = getAdapter(pin.name);
      const bogus = {
        ...adapter,
        flags: [
          { flag: "--flag-that-never-existed", help: adapter.flags[0].help },
          ...(pin.name === "claude"
            ? [{
              flag: "--max-turnz",
              hidden: { probe: ["-p", "--max-turnz", "1"], unknown_option: /unknown option/i },
            }]
            : []),
        ],
      };
      const home = await Deno.makeTempDir();
      try {
        const checks = await checkFlags(bogus, {
          executable: exe ?? "",
          env: { PATH, HOME: home, CODEX_HOME: `${home}/.codex`, NO_COLOR: "1" },
          timeoutMs: 60_000,
        });
        assert.ok(checks.length > 0);
        for (const c of checks) assert.equal(c.present, false, `${c.flag}: ${c.detail}`);
      } finally {
        await Deno.remove(home, { recursive: true });
      }
    },
  });

  // One real run serves three tests (a CLI start costs seconds of CPU): its prompt starts with
  // '-' and is 120 KB long, which the prompt test checks arrived whole, and its model writes
  // hello.txt through the CLI's own tool before it answers, which the write test checks (read
  // here, before the worktree goes). The first test to ask starts it.
  let sharedRun: Promise<SharedRun> | undefined;
  const shared = () =>
    sharedRun ??= (async () => {
      const server = writeServer();
      try {
        return await runRealCli(
          getAdapter(pin.name),
          {
            executable: exe ?? "",
            server,
            prompt: DASHED_LONG_PROMPT,
            timeoutMs: 90_000,
            max_turns: 5,
            // codex refuses unknown config.toml keys with --strict-config: proves ours are known.
            settings: pin.name === "codex" ? { extra_args: ["--strict-config"] } : undefined,
          },
          async (run) => ({
            run,
            written: await Deno.readTextFile(`${run.cwd}/hello.txt`).catch((e) => `${e}`),
            problems: [...server.problems],
            firstTurnCwd: server.turns()[0]?.cwd,
          }),
        );
      } finally {
        await server.close();
      }
    })();

  Deno.test({
    name: `live ${pin.name}: a real run through the adapter reaches the server and parses${why}`,
    ignore,
    async fn() {
      const { run } = await shared();
      assert.equal(run.timedOut, false, run.stderr);
      assert.ok(run.requests.length > 0, "the CLI called the local server");
      assert.ok(
        run.requests.some((r) => r.body.includes("PROMPT-MARKER-7")),
        `the prompt arrived through ${run.invocation.prompt_channel}`,
      );
      assert.equal(run.result.ok, true, `${run.result.error}\n${run.stderr}`);
      assert.equal(run.result.summary, REPLY);
      assert.ok(run.result.tokens !== null && run.result.tokens.output > 0);
      if (getAdapter(pin.name).capabilities.cost_reporting) {
        assert.ok(run.result.cost_usd !== null);
      } else {
        assert.equal(run.result.cost_usd, null);
      }
    },
  });

  Deno.test({
    name: `live ${pin.name}: a 120 KB prompt and one starting with '-' arrive whole${why}`,
    ignore,
    async fn() {
      // One prompt is both: it starts with '-' and its last marker comes 120 KB later.
      const { run } = await shared();
      assert.equal(run.result.ok, true, `${run.result.error}\n${run.stderr}`);
      assert.ok(
        run.requests.some((r) =>
          r.body.includes("PROMPT-MARKER-7") && r.body.includes("END-OF-LONG-PROMPT") &&
          r.body.length > 120_000
        ),
        `the prompt reached the model whole through ${run.invocation.prompt_channel}`,
      );
      assert.equal(
        run.invocation.prompt_channel,
        getAdapter(pin.name).prompt === "argv" ? "stdin" : getAdapter(pin.name).prompt,
      );
    },
  });

  Deno.test({
    name: `live ${pin.name}: the CLI writes a file in its worktree without asking${why}`,
    ignore,
    async fn() {
      const { run, written, problems, firstTurnCwd } = await shared();
      assert.equal(run.result.ok, true, `${run.result.error}\n${run.stderr}`);
      assert.deepEqual(problems, []);
      assert.equal(firstTurnCwd, run.cwd, "the server found the CLI's cwd");
      assert.equal(
        written,
        `${CONTENT}\n`,
        "the approval flags let the CLI edit headless (as root too)",
      );
      assert.equal(run.events.filter((e) => e.kind === "tool_use").length, 1);
      assert.equal(run.result.summary, REPLY);
    },
  });

  // Only CLIs with a turn limit (codex and opencode have none; their deadline applies).
  if (getAdapter(pin.name).capabilities.max_turns) {
    Deno.test({
      name: `live ${pin.name}: the turn limit ends a run that keeps calling tools${why}`,
      ignore,
      async fn() {
        const server = writeServer();
        try {
          await runRealCli(
            getAdapter(pin.name),
            {
              executable: exe ?? "",
              server,
              prompt: PROMPT,
              timeoutMs: 90_000,
              max_turns: 1,
            },
            (run) => {
              assert.equal(run.timedOut, false);
              assert.equal(run.result.ok, false);
              assert.equal(run.result.subtype, "error_max_turns", run.stdout + run.stderr);
            },
          );
        } finally {
          await server.close();
        }
      },
    });
  }

  const status = FAST_ERROR[pin.name];
  Deno.test({
    name: `live ${pin.name}: a model server error (${status}) ends the run as not ok with the ` +
      `reason${why}`,
    ignore,
    async fn() {
      const server = startModelServer({ script: [`@model fail ${status}`] });
      try {
        await runRealCli(
          getAdapter(pin.name),
          { executable: exe ?? "", server, prompt: PROMPT, timeoutMs: 90_000 },
          (run) => {
            assert.equal(run.result.ok, false);
            assert.ok(run.requests.length > 0);
            assert.equal(run.timedOut, false, "fails fast, before the deadline");
            // The CLI's own words (codex rewords a 500 as "high demand"), never the deadline's.
            assert.ok(run.result.error !== null && run.result.error !== "", run.stdout);
            assert.notEqual(run.result.error, "killed at the deadline");
          },
        );
      } finally {
        await server.close();
      }
    },
  });

  // opencode retries a broken stream like a 5xx (until its deadline); the others stop at once.
  if (pin.name !== "opencode") {
    Deno.test({
      name: `live ${pin.name}: a malformed model stream ends the run as not ok with a reason${why}`,
      ignore,
      async fn() {
        const server = startModelServer({ script: ["@model malformed"] });
        try {
          await runRealCli(
            getAdapter(pin.name),
            { executable: exe ?? "", server, prompt: PROMPT, timeoutMs: 90_000 },
            (run) => {
              assert.ok(run.requests.some((r) => r.answer === "malformed"));
              assert.equal(run.timedOut, false);
              assert.equal(run.result.ok, false);
              assert.ok(run.result.error !== null && run.result.error !== "", run.stdout);
            },
          );
        } finally {
          await server.close();
        }
      },
    });
  }

  const retried = RETRIED_ERROR[pin.name];
  if (retried !== undefined) {
    Deno.test({
      name: `live ${pin.name}: a CLI stuck retrying ${retried}s is ended by the deadline${why}`,
      ignore,
      async fn() {
        const server = startModelServer({ script: [`@model fail ${retried}`] });
        const failedTwice = server.answered((r) => r.answer === `fail ${retried}`, 2);
        try {
          await runRealCli(
            getAdapter(pin.name),
            {
              executable: exe ?? "",
              server,
              prompt: PROMPT,
              timeoutMs: 3000,
              deadlineFrom: failedTwice,
            },
            (run) => {
              assert.equal(run.result.ok, false);
              assert.ok(
                run.requests.filter((r) => r.answer === `fail ${retried}`).length >= 2,
                "it retried the failed request itself",
              );
              assert.equal(run.timedOut, true);
              assert.equal(run.result.error, "killed at the deadline");
            },
          );
        } finally {
          await server.close();
        }
      },
    });
  }
}
