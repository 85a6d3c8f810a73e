// The dashboard in headless Chromium, served by a real task server from a live journal: the
// one-time login, refusal without it, live updates over SSE when an agent progresses, the
// refused merge's reason, a static snapshot with JavaScript off, no console error and no
// request leaving the server; screenshots at 1280×800 and phone width, light and dark.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { SeededRandom, systemClock } from "../../src/io/mod.ts";
import { type LiveAgent, RunJournal } from "../../src/report/mod.ts";
import { startTaskServer, TokenRegistry } from "../../src/server/mod.ts";
import { createMemoryTaskStore, openHoldStore } from "../../src/tasks/mod.ts";
import {
  accessibilityProblems,
  browserTestName,
  CHROMIUM,
  externalRequests,
  pressKey,
  saveScreenshot,
  withBrowser,
} from "../_helpers/browser.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { created, ev } from "../report/_records.ts";

const HOSTILE = `<img src=http://example.invalid/p.png onerror=alert(1)>`;

/** A run in progress: one agent working, one refused merge, one task waiting on both. */
function liveRun(nowIso: string) {
  const t = (ms: number) => new Date(Date.parse(nowIso) - 60_000 + ms).toISOString();
  const at = (e: ReturnType<typeof ev>, ms: number) => ({ ...e, timestamp: t(ms) });
  const agents: LiveAgent[] = [{
    session: "1.1-parser-a1-3fa9c2",
    task_id: "1.1-parser",
    adapter: "claude",
    model: "sonnet",
    state: "running",
    started_at: t(2_000),
    last_output_at: t(50_000),
    last_line: "reading the grammar",
    turns: 3,
    tokens: 12_400,
    cost_usd: 0.0421,
  }];
  const journal = new RunJournal({
    run_id: "brave-otter-3fa9c2",
    branch: "feature/parser",
    goal: null,
    source: { kind: "plan", detail: "plan.yaml" },
    host: "ci",
    started_at: t(0),
    max_agents: 3,
    state: "running",
  }, {
    agents: () => agents.map((a) => ({ ...a })),
    logTails: () =>
      Promise.resolve({
        "1.1-parser-a1-3fa9c2": `{"type":"assistant","text":"reading the grammar"}\n${HOSTILE}\n`,
      }),
  });
  const events = [
    at(ev(0, "run.started", "run", "brave-otter-3fa9c2"), 0),
    at(created(0, "1.1-parser", "Write the parser"), 10),
    at(created(0, "1.2-config", "Raise the agent limit"), 11),
    at(created(0, "2.1-tests", "Test the parser", ["1.1-parser", "1.2-config"]), 12),
    at(
      ev(0, "scheduler.claim", "task", "1.1-parser", {
        session: "1.1-parser-a1-3fa9c2",
        attempt: 1,
        adapter: "claude",
      }),
      1_000,
    ),
    at(
      ev(0, "agent.spawned", "agent", "1.1-parser-a1-3fa9c2", {
        task_id: "1.1-parser",
        adapter: "claude",
        model: "sonnet",
      }),
      2_000,
    ),
    at(
      ev(0, "task.transition", "task", "1.1-parser", { from: "claimed", to: "in_progress" }),
      2_001,
    ),
    at(
      ev(0, "scheduler.claim", "task", "1.2-config", {
        session: "1.2-config-a1-3fa9c2",
        attempt: 1,
        adapter: "codex",
      }),
      1_100,
    ),
    at(
      ev(0, "agent.spawned", "agent", "1.2-config-a1-3fa9c2", {
        task_id: "1.2-config",
        adapter: "codex",
      }),
      2_200,
    ),
    at(
      ev(0, "agent.exited", "agent", "1.2-config-a1-3fa9c2", {
        ok: true,
        exit_code: 0,
        turns: 2,
        cost_usd: 0.013,
      }),
      20_000,
    ),
    at(
      ev(0, "gate.result", "task", "1.2-config", {
        gate: "run_config",
        ok: false,
        reason: "the diff touches protected run configuration: bernstein.yaml",
        session: "1.2-config-a1-3fa9c2",
      }),
      21_000,
    ),
    at(
      ev(0, "merge.refused", "task", "1.2-config", {
        session: "1.2-config-a1-3fa9c2",
        branch: "agent/1.2-config-a1-3fa9c2",
        reason: "gate-failed",
        detail: "gate run_config: the diff touches protected run configuration: bernstein.yaml",
      }),
      21_100,
    ),
    at(ev(0, "task.transition", "task", "1.2-config", { from: "done", to: "failed" }), 21_200),
  ];
  for (const e of events) journal.add(e);
  return { journal, agents, t };
}

Deno.test({
  name: browserTestName(
    "dashboard: login once, live agent updates, refused merge, snapshot without JS, clean console",
  ),
  ignore: CHROMIUM === undefined,
  async fn() {
    await withTempDir(async (dir) => {
      const runtimeDir = join(dir, ".sdd", "runtime");
      const { journal, agents, t } = liveRun(new Date().toISOString());
      const store = createMemoryTaskStore({ clock: systemClock, random: new SeededRandom(1) });
      const holds = await openHoldStore(join(runtimeDir, "holds.json"), {
        clock: systemClock,
        random: new SeededRandom(2),
      });
      const tokens = await TokenRegistry.open(runtimeDir, {
        random: new SeededRandom(3),
        operatorTokenPath: join(runtimeDir, "..", "..", "state", "auth.token"),
      });
      const server = await startTaskServer({
        store,
        holds,
        tokens,
        runtimeDir,
        clock: systemClock,
        config: { network: { allowed_ips: ["127.0.0.1", "::1"] }, tuning: DEFAULT_TUNING },
        dashboard: { source: journal, random: new SeededRandom(4) },
      });
      try {
        await withBrowser(async (browser) => {
          const link = server.loginLink?.() as string;
          const page = await browser.newPage();
          await page.setViewport(1280, 800);
          assert.equal(await page.goto(link), undefined);
          assert.equal(await page.evaluate("location.href"), `${server.url}/`, "code left the URL");
          await page.waitFor("document.getElementById('conn').classList.contains('live')");
          const agentsText = await page.text("#d-agents");
          assert.match(agentsText, /1\.1-parser/);
          assert.match(agentsText, /reading the grammar/);
          assert.match(
            await page.text("#d-refused"),
            /protected run configuration: bernstein\.yaml/,
          );
          // Cost so far: the finished attempt plus what the running agent reported.
          assert.match(await page.text("#d-headline"), /\$0\.0551/);
          assert.match(await page.text("#d-logs"), /onerror=alert/, "agent output shown as text");
          assert.equal(await page.evaluate("document.querySelectorAll('main img').length"), 0);
          await saveScreenshot(page, "dashboard-1280-light", false);
          // Keyboard and screen readers: names everywhere, and Tab, Enter skip to the content.
          assert.deepEqual(await accessibilityProblems(page), []);
          await pressKey(page, "Tab");
          assert.equal(await page.evaluate("document.activeElement.className"), "skip");
          await pressKey(page, "Enter");
          assert.equal(await page.evaluate("location.hash"), "#main");

          // The agent progresses: the table follows without a reload.
          agents[0].last_line = "wrote 3 of 5 grammar rules";
          agents[0].turns = 5;
          journal.add({
            ...ev(0, "task.progress", "task", "1.1-parser", {
              message: "wrote 3 of 5 grammar rules",
            }),
            timestamp: t(59_000),
            actor: "agent:1.1-parser-a1-3fa9c2",
          });
          await page.waitFor(
            "document.getElementById('d-agents').innerText.includes('wrote 3 of 5 grammar rules')",
          );
          await page.setColorScheme("dark");
          await saveScreenshot(page, "dashboard-1280-dark", false);
          await page.setViewport(390, 844, true);
          await page.setColorScheme("light");
          await saveScreenshot(page, "dashboard-390-light");
          assert.deepEqual(page.errors, []);
          assert.deepEqual(externalRequests(page, [`${server.url}/`]), []);

          // The same link a second time, from another browser: refused.
          const other = await browser.newPage({ isolated: true });
          await other.goto(link);
          assert.match(await other.text(), /works once/);
          // No login at all: refused.
          await other.goto(`${server.url}/`);
          assert.match(await other.text(), /Sign-in needed/);
          assert.doesNotMatch(await other.text(), /1\.1-parser/);

          // JavaScript off: a complete snapshot.
          const still = await browser.newPage({ isolated: true });
          await still.setJavaScriptEnabled(false);
          await still.setViewport(1280, 800);
          await still.goto(server.loginLink?.() as string);
          assert.match(await still.text("#d-agents"), /wrote 3 of 5 grammar rules/);
          assert.match(await still.text("#d-refused"), /gate-failed/);
          assert.match(await still.text("main"), /JavaScript is off/);
          assert.deepEqual(still.errors, []);

          // The accessibility check itself sees what is missing on a page that lacks it.
          const bare = await browser.newPage({ isolated: true });
          await bare.goto(
            "data:text/html,<table><thead><tr><th>x</th></tr></thead></table><svg></svg>",
          );
          assert.deepEqual(await accessibilityProblems(bare), [
            "html has no lang",
            "unnamed svg",
            "th without scope",
            "no skip link to main",
          ]);

          // The run ends: the live page says so and stops listening.
          journal.end();
          await page.waitFor("document.getElementById('conn').textContent.includes('ended')");
        });
      } finally {
        await server.close();
        await store.close();
      }
    });
  },
});
