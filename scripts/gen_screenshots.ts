// `deno task docs` (last step): the README's pictures of a run — docs/dashboard.png (the live
// dashboard at 1280×800 while agents work) and docs/report.png (the run report of the same run,
// finished) — from a real scripted run in a throw-away repository, taken with the system
// Chromium. Without Chromium it says so and keeps the pictures there are.
import { join } from "node:path";
import { Browser, findChromium } from "./cdp.ts";
import { v8FlagsArg } from "./runtime_flags.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const DOCS = join(ROOT, "docs");

/** The showcase: parallel work, a retry on a stronger model, a refused merge, a dependent stage. */
function showcasePlan(gate: string, mark: string): string {
  const wait = `@agent run sh -c "while [ ! -f ${gate} ]; do sleep 0.05; done"`;
  return `name: greeting-service
description: Add a greeting module with docs and tests.
cli: scripted
stages:
  - name: build
    steps:
      - title: Add the greeting module
        files: [src/greet.ts]
        description: |
          @agent progress reading the style guide
          @agent sleep 900
          @agent progress writing greet() and its types
          @agent sleep 700
          @agent write src/greet.ts export function greet(name: string): string { return \`Hello, \${name}!\`; }
          @agent summary added greet()
      - title: Add the farewell module
        files: [src/farewell.ts]
        description: |
          @agent progress sketching farewell() next to greet()
          @agent sleep 600
          @agent progress waiting for the review of the wording
          ${wait}
          @agent write src/farewell.ts export function farewell(name: string): string { return \`Goodbye, \${name}.\`; }
      - title: Write the usage notes
        role: docs
        files: [docs/usage.md]
        description: |
          @agent progress drafting docs/usage.md
          @agent sleep 400
          @agent write docs/usage.md # Usage
  - name: verify
    depends_on: [build]
    steps:
      - title: Test the greeting module
        role: qa
        files: [tests/greet_test.ts]
        description: |
          @agent progress writing the tests
          @agent sleep 500
          @agent write tests/greet_test.ts import { greet } from "../src/greet.ts"; if (greet("Ada") !== "Hello, Ada!") throw new Error("greet");
  - name: tune
    steps:
      - title: Wire the command line
        files: [src/cli.ts]
        description: |
          @agent progress trying the argument parser
          @agent sleep 500
          @agent run sh -c "test -f ${mark} || { touch ${mark}; echo 'flag --name is not parsed' >&2; exit 1; }"
          @agent progress parsing --name and --lang
          ${wait}
          @agent write src/cli.ts import { greet } from "./greet.ts"; console.log(greet(Deno.args[0] ?? "world"));
      - title: Raise the agent limit
        role: ops
        files: [bernstein.yaml]
        description: |
          @agent progress raising max_agents
          @agent write bernstein.yaml max_agents: 64
`;
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    env: {
      GIT_AUTHOR_NAME: "Docs",
      GIT_AUTHOR_EMAIL: "docs@example.invalid",
      GIT_COMMITTER_NAME: "Docs",
      GIT_COMMITTER_EMAIL: "docs@example.invalid",
      GIT_CONFIG_NOSYSTEM: "1",
      HOME: cwd,
    },
    stderr: "piped",
  }).output();
  if (out.code !== 0) throw new Error(`git ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
}

function bernstein(repo: string, args: string[], keyPath: string): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--frozen",
      `--config=${ROOT}deno.json`,
      "-P=bernstein",
      v8FlagsArg(),
      `${ROOT}main.ts`,
      ...args,
    ],
    cwd: repo,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? repo,
      NO_COLOR: "1",
      BERNSTEIN_AUDIT_KEY_PATH: keyPath,
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR") as string } : {}),
    },
    stdout: "piped",
    stderr: "piped",
  });
}

async function makeRepo(dir: string, plan: string, signals: string): Promise<string> {
  const repo = join(dir, "greeting-service");
  await Deno.mkdir(join(repo, ".sdd"), { recursive: true });
  await git(repo, "init", "-q", "-b", "main");
  await Deno.writeTextFile(join(repo, "README.md"), "# greeting-service\n");
  await Deno.writeTextFile(join(repo, "plan.yaml"), plan);
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "initial commit");
  await git(repo, "checkout", "-q", "-b", "feature/greetings");
  await Deno.writeTextFile(
    join(repo, ".sdd", "config.yaml"),
    JSON.stringify({
      max_agents: 4,
      tuning: {
        orchestrator: { tick_interval_s: 0.5 },
        spawn: { spawn_backoff_base_s: 0 },
        tasks: { default_max_retries: 1 },
      },
      role_model_policy: { backend: { ladder: [{ model: "opus" }] } },
      // The agents wait on and mark files outside their worktree: the sandbox shows them that folder.
      sandbox: { writable: [signals] },
    }) + "\n",
  );
  return repo;
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      yield buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
    }
  }
}

async function main(): Promise<number> {
  const chromium = findChromium();
  if (chromium === undefined) {
    console.log("docs screenshots: skipped (no chromium; apt-get install chromium)");
    return 0;
  }
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bernstein-docs-" }));
  const browser = await Browser.launch(chromium, join(dir, "profile"));
  try {
    const signals = join(dir, "signals");
    await Deno.mkdir(signals);
    const gate = join(signals, "review-done");
    const repo = await makeRepo(dir, showcasePlan(gate, join(signals, "cli-tried")), signals);
    const keyPath = join(dir, "audit.key");
    const run = bernstein(repo, ["run", "plan.yaml"], keyPath).spawn();
    const stderr = new Response(run.stderr).text();
    const out = lines(run.stdout);
    let link: string | undefined;
    const printed: string[] = [];
    while (link === undefined) {
      const next = await out.next();
      if (next.done) {
        throw new Error(`the run ended early:\n${printed.join("\n")}\n${await stderr}`);
      }
      printed.push(next.value);
      link = /dashboard: (\S+)/.exec(next.value)?.[1];
    }
    const page = await browser.newPage();
    await page.setViewport(1280, 800);
    await page.setColorScheme("light");
    await page.goto(link);
    // The moment worth a picture: two agents waiting, merges and a refusal behind them.
    await page.waitFor(
      "document.querySelectorAll('#d-agents tbody tr').length === 2 && " +
        "document.getElementById('d-headline').innerText.includes('merged') && " +
        "document.querySelectorAll('#d-refused li').length >= 1 && " +
        "[...document.querySelectorAll('#d-agents tbody tr')].every((tr) => tr.innerText.includes('wait') || tr.innerText.includes('parsing'))",
    );
    await Deno.writeFile(join(DOCS, "dashboard.png"), await page.screenshot());
    await Deno.writeTextFile(gate, "");
    for await (const line of { [Symbol.asyncIterator]: () => out }) printed.push(line);
    await run.status;
    await stderr;
    const reportPath = join(dir, "report.html");
    const report = await bernstein(repo, ["runs", "report", "--html", reportPath], keyPath)
      .output();
    if (report.code !== 0) throw new Error(new TextDecoder().decode(report.stderr));
    await page.goto(`file://${reportPath}`);
    await page.setViewport(1280, 1400);
    await Deno.writeFile(join(DOCS, "report.png"), await page.screenshot());
    console.log("docs screenshots: docs/dashboard.png and docs/report.png regenerated");
    return 0;
  } finally {
    await browser.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await main());
