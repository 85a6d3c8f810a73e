// The run report of a real scripted run, opened in headless Chromium: no console error, no
// request outside the file, one timeline bar per attempt, the refused merge with its reason,
// a hostile agent's markup shown as text; screenshots at desktop and phone width, light and dark.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  accessibilityProblems,
  browserTestName,
  CHROMIUM,
  externalRequests,
  saveScreenshot,
  withBrowser,
} from "../_helpers/browser.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
import { bern, prepareRepo, runEnv } from "../e2e/_run_helpers.ts";

const NOTES = "# Notes\nKeep greetings short.\n";
const HOSTILE = `<img src=http://example.invalid/x.png onerror=alert(1)><script>alert(2)</script>`;

function plan(mark: string): string {
  return `name: report-test
cli: scripted
stages:
  - name: build
    steps:
      - title: Flaky step
        files: [src/flaky.ts]
        description: |
          @agent run sh -c "test -f ${mark} || { touch ${mark}; exit 1; }"
          @agent write src/flaky.ts export const flaky = 1;
      - title: Chatty step
        files: [src/chatty.ts]
        description: |
          @agent progress ${HOSTILE}
          @agent write src/chatty.ts export const chatty = 1;
  - name: tune
    steps:
      - title: Raise the agent limit
        role: ops
        files: [bernstein.yaml]
        description: |
          @agent write bernstein.yaml max_agents: 64
`;
}

/** A finished run with a retry (escalated by the ladder) and a refused merge. */
export async function finishedRun(dir: string): Promise<{ repo: string; runId: string }> {
  const repo = join(dir, "repo");
  await Deno.mkdir(repo);
  await prepareRepo(repo, plan(join(dir, "flaky.mark")), {
    tuning: { tasks: { default_max_retries: 1 } },
    role_model_policy: { backend: { ladder: [{ model: "big" }] } },
  });
  // A text attachment every agent gets: the report lists it with its digest.
  await Deno.writeTextFile(join(repo, "notes.md"), NOTES);
  const run = await bern(repo, ["run", "plan.yaml", "--json", "--attach", "notes.md"]);
  assert.equal(run.code, 1, run.stderr);
  const last = JSON.parse(run.stdout.trim().split("\n").at(-1) as string);
  return { repo, runId: last.summary.run_id };
}

Deno.test({
  name: browserTestName("report: a finished run's report loads clean and shows every attempt"),
  ignore: CHROMIUM === undefined,
  async fn() {
    await withTempDir(async (dir) => {
      const { repo, runId } = await finishedRun(dir);
      const htmlPath = join(dir, "report.html");
      const out = await bern(repo, ["runs", "report", runId, "--html", htmlPath, "--json"]);
      assert.equal(out.code, 0, out.stderr);
      const model = JSON.parse(out.stdout);
      const claims = model.attempts.length;
      // flaky: fails once then merges (2), chatty (1), tune: refused twice (2).
      assert.equal(claims, 5);
      assert.deepEqual(
        model.attempts.filter((a: { escalated: boolean }) => a.escalated).map((
          a: { task_id: string },
        ) => a.task_id),
        ["1.1-flaky-step"],
      );
      const digest = await sha256Hex(NOTES);
      assert.ok(model.attachments.length >= claims, "one attachment per spawn");
      assert.ok(
        model.attachments.every((a: { sha256: string }) => a.sha256 === digest),
        JSON.stringify(model.attachments),
      );
      assert.equal(model.verification.audit.status, "pass");
      assert.equal(model.verification.lineage.status, "pass");
      assert.equal(model.verification.scorecard.status, "pass");
      const html = await Deno.readTextFile(htmlPath);
      assert.ok(!html.includes(HOSTILE), "agent markup reached the page unescaped");

      await withBrowser(async (browser) => {
        const page = await browser.newPage();
        await page.setViewport(1280, 800);
        const url = `file://${htmlPath}`;
        assert.equal(await page.goto(url), undefined);
        assert.equal(
          await page.evaluate("document.querySelectorAll('svg.timeline g.attempt').length"),
          claims,
        );
        const refused = await page.evaluate<string>(
          "[...document.querySelectorAll('li.refused')].map((li) => li.textContent).join('\\n')",
        );
        assert.match(refused, /2\.1-raise-the-agent-limit/);
        assert.match(await page.text("#attachments"), new RegExp(digest));
        assert.match(refused, /protected run configuration: bernstein\.yaml/);
        // The hostile progress text is text, not an element, and never ran.
        assert.equal(
          await page.evaluate("document.querySelectorAll('main img, main script').length"),
          0,
        );
        const shown = await page.evaluate<string>(
          "[...document.querySelectorAll('#attempts td')].map((td) => td.textContent).join(' ')",
        );
        assert.ok(shown.includes(HOSTILE), "the agent's progress is shown as text");
        assert.deepEqual(await accessibilityProblems(page), []);
        await saveScreenshot(page, "report-1280-light");
        await page.setColorScheme("dark");
        await saveScreenshot(page, "report-1280-dark");
        await page.setViewport(390, 844, true);
        await page.setColorScheme("light");
        await saveScreenshot(page, "report-390-light");
        // The report's script works: a bar shows its attempt's row.
        await page.evaluate(
          "document.querySelector('g.attempt').dispatchEvent(new MouseEvent('click', { bubbles: true }))",
        );
        await page.waitFor("document.querySelector('tr.flash') !== null");
        assert.deepEqual(page.errors, []);
        assert.deepEqual(externalRequests(page, [url]), []);
      });
    });
  },
});

Deno.test("report: runs report on an unknown run is a clear error", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    await prepareRepo(repo, plan(join(dir, "m")));
    const out = await bern(repo, ["runs", "report", "quiet-fox-abcdef"]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /error\[runs\.not_found\]: .*no record of run 'quiet-fox-abcdef'/);
    const bad = await bern(repo, ["runs", "report", "../etc"]);
    assert.equal(bad.code, 2, bad.stderr);
    void runEnv;
  });
});
