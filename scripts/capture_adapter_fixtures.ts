// Records real outputs of the pinned agent CLIs into fixtures/adapters/<cli>/ (see the README
// there). Needs the CLIs from scripts/install_agent_clis.ts; talks only to a local text model
// model server on 127.0.0.1.
//
//   deno run -P=dev scripts/capture_adapter_fixtures.ts [claude codex …]
//
// Recorded per CLI: version.txt, help/<args>.txt for every help command of the flag contract,
// text_reply.{stdout.jsonl,meta.json} (the server answers one final text),
// tool_write.{stdout.jsonl,meta.json} (the server has the CLI write hello.txt, then answers),
// api_error.{stdout.jsonl,meta.json} (the server answers an HTTP error) and, for CLIs with a
// turn limit, max_turns.{stdout.jsonl,meta.json} (limit 1, the model keeps calling tools).
// The model server is tests/e2e/model_servers (the server scripts are recorded in the meta).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getAdapter } from "../src/adapters/mod.ts";
import { outputText, runProcess } from "../src/io/mod.ts";
import { pinnedStatus, runRealCli } from "../tests/_helpers/real_cli.ts";
import { startModelServer } from "../tests/e2e/model_servers/mod.ts";
import { PINNED_CLIS } from "./install_agent_clis.ts";

const root = fileURLToPath(new URL("../fixtures/adapters/", import.meta.url));

/** Prompt of every recorded run (the marker proves the prompt reached the server). */
export const CAPTURE_PROMPT = "Reply with one short sentence. PROMPT-MARKER-7";
/** Text the server answers. */
export const CAPTURE_REPLY = "All done: MARKER-42";
/** File the write mode makes the CLI create in its worktree. */
export const CAPTURE_FILE = "hello.txt";
/** Content of {@linkcode CAPTURE_FILE} (a script line's text plus a newline). */
export const CAPTURE_FILE_CONTENT = "written by the agent\n";

/**
 * Error each CLI is recorded with: a status it does not retry for long. With an endpoint the
 * adapters turn off the retries of claude, codex and gemini; qwen 0.15 retries a 500 for
 * ~77 s whatever its settings say, opencode retries any 5xx and answers a 400 with an error
 * event (exiting 1 a few seconds later).
 */
export const CAPTURE_ERRORS: Readonly<Record<string, { status: number; timeoutMs: number }>> = {
  claude: { status: 500, timeoutMs: 60_000 },
  codex: { status: 500, timeoutMs: 60_000 },
  gemini: { status: 500, timeoutMs: 60_000 },
  qwen: { status: 400, timeoutMs: 60_000 },
  opencode: { status: 400, timeoutMs: 60_000 },
};

function scrub(text: string, paths: string[]): string {
  let out = text;
  for (const p of paths) out = out.split(p).join("<tmp>");
  return out;
}

async function probeText(exe: string, args: readonly string[], home: string): Promise<string> {
  const r = await runProcess([exe, ...args], {
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      NO_COLOR: "1",
      TERM: "dumb",
      CODEX_HOME: join(home, ".codex"),
    },
    timeoutMs: 60_000,
  });
  return scrub(outputText(r.stdout) + outputText(r.stderr), [home]);
}

async function capture(name: string): Promise<string> {
  const pin = PINNED_CLIS.find((p) => p.name === name);
  if (pin === undefined) return `${name}: not a pinned CLI`;
  const exe = pinnedStatus(pin).exe;
  if (exe === undefined) {
    return `${name}: skipped (not installed; run scripts/install_agent_clis.ts)`;
  }
  const adapter = getAdapter(name);
  const dir = join(root, name);
  await Deno.mkdir(join(dir, "help"), { recursive: true });
  const home = await Deno.makeTempDir({ prefix: "bernstein-capture-" });
  try {
    await Deno.writeTextFile(
      join(dir, "version.txt"),
      await probeText(exe, adapter.version.args, home),
    );
    const helps = new Set<string>(["--help"]);
    for (const f of adapter.flags) if (!f.hidden) helps.add((f.help ?? ["--help"]).join(" "));
    for (const h of helps) {
      const file = join(dir, "help", `${h.replace(/^-+/, "").replace(/[ ]+/g, "_")}.txt`);
      await Deno.writeTextFile(file, await probeText(exe, h.split(" "), home));
    }
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
  const write = [
    `@model write ${CAPTURE_FILE} ${CAPTURE_FILE_CONTENT.trimEnd()}`,
    `@model say ${CAPTURE_REPLY}`,
  ];
  const runs: { file: string; script: string[]; timeoutMs: number; max_turns?: number }[] = [
    { file: "text_reply", script: [`@model say ${CAPTURE_REPLY}`], timeoutMs: 60_000 },
    { file: "tool_write", script: write, timeoutMs: 90_000 },
    {
      file: "api_error",
      script: [`@model fail ${CAPTURE_ERRORS[name].status}`],
      timeoutMs: CAPTURE_ERRORS[name].timeoutMs,
    },
  ];
  if (adapter.capabilities.max_turns) {
    // A turn limit of 1 with a model that calls a tool: the CLI's own max-turns ending.
    runs.push({ file: "max_turns", script: write, timeoutMs: 90_000, max_turns: 1 });
  }
  for (const run of runs) {
    const server = startModelServer({ script: run.script });
    const started = performance.now();
    try {
      await runRealCli(
        adapter,
        {
          executable: exe,
          server,
          prompt: CAPTURE_PROMPT,
          timeoutMs: run.timeoutMs,
          max_turns: run.max_turns ?? 3,
        },
        async (r) => {
          const written = await Deno.readTextFile(`${r.cwd}/${CAPTURE_FILE}`).catch(() => null);
          const paths = [r.cwd, r.home, server.origin, server.origin.replace("http://", "")];
          await Deno.writeTextFile(join(dir, `${run.file}.stdout.jsonl`), scrub(r.stdout, paths));
          const meta = {
            cli: name,
            version: pin.version,
            captured_with: "scripts/capture_adapter_fixtures.ts",
            server_script: run.script,
            argv: r.invocation.argv.slice(1).map((a) => scrub(a, paths)),
            prompt_channel: r.invocation.prompt_channel,
            file_written: written === CAPTURE_FILE_CONTENT,
            exit_code: r.code,
            timed_out: r.timedOut,
            deadline_ms: run.timeoutMs,
            max_turns: run.max_turns ?? 3,
            elapsed_ms: Math.round(performance.now() - started),
            requests: r.requests.map((q) => ({
              method: q.method,
              path: q.path,
              prompt_marker: q.body.includes("PROMPT-MARKER-7"),
            })),
            stderr_head: scrub(r.stderr, paths).split("\n").filter((l) => !/^\s+at /.test(l))
              .slice(0, 8),
          };
          await Deno.writeTextFile(
            join(dir, `${run.file}.meta.json`),
            JSON.stringify(meta, null, 2) + "\n",
          );
        },
      );
    } finally {
      await server.close();
    }
  }
  return `${name}: captured ${pin.package}@${pin.version}`;
}

if (import.meta.main) {
  const names = Deno.args.length > 0 ? Deno.args : PINNED_CLIS.map((p) => p.name);
  for (const name of names) console.log(await capture(name));
}
