// The live dashboard during a real scripted run (bernstein as a subprocess, agents as real
// processes), in headless Chromium: the link the run prints signs in once, the agent table
// follows an agent's progress as it happens, a refused merge shows its reason, and the page
// ends with the run — with no console error and no request leaving the task server.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  browserTestName,
  CHROMIUM,
  externalRequests,
  saveScreenshot,
  withBrowser,
} from "../_helpers/browser.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { guard } from "../_helpers/wait.ts";
import { bern, prepareRepo, startBernstein } from "./_run_helpers.ts";

function plan(gate1: string, gate2: string): string {
  const wait = (file: string) => `@agent run sh -c "while [ ! -f ${file} ]; do sleep 0.05; done"`;
  return `name: dashboard-e2e
cli: scripted
stages:
  - name: build
    steps:
      - title: Write the parser
        files: [src/parser.ts]
        description: |
          @agent progress reading the grammar
          ${wait(gate1)}
          @agent progress wrote 3 of 5 rules
          ${wait(gate2)}
          @agent write src/parser.ts export const parse = (s: string) => s.split(" ");
          @agent summary added the parser
      - title: Raise the agent limit
        role: ops
        files: [bernstein.yaml]
        description: |
          @agent write bernstein.yaml max_agents: 64
`;
}

/** Reads the child's stdout line by line until `match` finds one; returns the match. */
async function readUntil(
  lines: AsyncIterator<string>,
  seen: string[],
  match: RegExp,
): Promise<RegExpExecArray> {
  for (;;) {
    const next = await guard(lines.next(), `the run to print ${match}`);
    if (next.done) throw new Error(`the run ended without printing ${match}:\n${seen.join("\n")}`);
    seen.push(next.value);
    const m = match.exec(next.value);
    if (m) return m;
  }
}

async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
    }
  }
  if (buffer !== "") yield buffer;
}

Deno.test({
  name: browserTestName("dashboard: a real run's dashboard follows its agents to the end"),
  ignore: CHROMIUM === undefined,
  async fn() {
    await withTempDir(async (dir) => {
      const repo = join(dir, "repo");
      await Deno.mkdir(repo);
      // The gates live in a folder the sandbox shows the agents (read-only).
      await Deno.mkdir(join(dir, "gates"));
      const gate1 = join(dir, "gates", "gate1");
      const gate2 = join(dir, "gates", "gate2");
      await prepareRepo(repo, plan(gate1, gate2), {
        sandbox: { read_only: [join(dir, "gates")] },
      });
      const child = startBernstein(repo, ["run", "plan.yaml"]);
      const seen: string[] = [];
      const lines = linesOf(child.stdout);
      const stderr = new Response(child.stderr).text();
      try {
        const link =
          (await readUntil(lines, seen, /dashboard: (http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+)/))[
            1
          ];
        const origin = new URL(link).origin;
        await withBrowser(async (browser) => {
          const page = await browser.newPage();
          await page.setViewport(1280, 800);
          assert.equal(await page.goto(link), undefined);
          await page.waitFor("document.getElementById('conn').classList.contains('live')");
          await page.waitFor(
            "document.getElementById('d-agents').innerText.includes('reading the grammar')",
          );
          await page.waitFor(
            "document.getElementById('d-refused').innerText.includes('protected run configuration')",
          );
          await saveScreenshot(page, "e2e-dashboard-running", false);
          // The agent moves on: the table follows without a reload.
          await Deno.writeTextFile(gate1, "");
          await page.waitFor(
            "document.getElementById('d-agents').innerText.includes('wrote 3 of 5 rules')",
          );
          // The printed link was spent by this browser.
          const again = await browser.newPage({ isolated: true });
          await again.goto(link);
          assert.match(await again.text(), /works once/);
          await again.goto(`${origin}/`);
          assert.match(await again.text(), /Sign-in needed/);
          // Let the run finish: the page shows its last state and stops listening.
          await Deno.writeTextFile(gate2, "");
          await page.waitFor("document.getElementById('conn').textContent.includes('ended')");
          assert.match(await page.text("#d-headline"), /finished/);
          assert.match(await page.text("#d-tasks"), /merged/);
          await saveScreenshot(page, "e2e-dashboard-ended");
          assert.deepEqual(page.errors, []);
          assert.deepEqual(externalRequests(page, [`${origin}/`]), []);
        });
        for (;;) {
          const next = await guard(lines.next(), "the run to end");
          if (next.done) break;
          seen.push(next.value);
        }
        const status = await child.status;
        assert.equal(status.code, 1, `${seen.join("\n")}\n${await stderr}`);
        assert.match(seen.join("\n"), /UNHEALTHY/);
      } finally {
        await Deno.writeTextFile(gate1, "").catch(() => {});
        await Deno.writeTextFile(gate2, "").catch(() => {});
        try {
          child.kill("SIGTERM");
        } catch {
          // Already ended.
        }
        await child.status;
        await stderr.catch(() => "");
      }
      // The run's report says the same afterwards.
      const report = await bern(repo, ["runs", "report", "--json"]);
      assert.equal(report.code, 0, report.stderr);
      const model = JSON.parse(report.stdout);
      assert.equal(model.run.state, "finished");
      assert.equal(model.attempts.length, 2);
      assert.equal(model.refused_merges.length, 1);
    });
  },
});
