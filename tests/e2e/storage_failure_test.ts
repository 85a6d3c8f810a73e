// The disk fills up mid-run: the project's `.sdd` is a 4 MiB tmpfs (bwrap), and the agent fills
// it. The run stops as an infrastructure failure (error[run.storage_failed], exit 1, never
// error[internal]); the task it was working on keeps its state (not failed); once space is
// freed, `bernstein run` resumes and finishes the run; the audit chain verifies, nothing it
// acknowledged is missing, and events the failure kept out were written on the resume.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";
import { v8FlagsArg } from "../../scripts/runtime_flags.ts";
import { probeSandbox } from "../../src/sandbox/mod.ts";

const probe = await probeSandbox();
const why = probe.available ? "" : ` [skipped: needs bwrap for a small tmpfs: ${probe.reason}]`;

const quote = (s: string) => `'${s.replaceAll("'", `'"'"'`)}'`;

function lastTask(tasksJsonl: string, id: string): Record<string, unknown> | undefined {
  let last: Record<string, unknown> | undefined;
  for (const line of tasksJsonl.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      for (const t of JSON.parse(line).tasks ?? []) if (t.id === id) last = t;
    } catch {
      // A torn line: the store sets it aside on open.
    }
  }
  return last;
}

Deno.test({
  name: `disk full mid-run: run.storage_failed, tasks stay resumable, the resume finishes${why}`,
  ignore: !probe.available,
  async fn() {
    await withTempDir(async (dir) => {
      const root = join(dir, "repo");
      const out = join(dir, "out");
      await Deno.mkdir(root);
      await Deno.mkdir(out);
      await makeRepo(root);
      const marker = join(dir, "filled");
      await Deno.writeTextFile(
        join(root, "plan.yaml"),
        [
          "cli: scripted",
          "stages:",
          "  - name: s",
          "    steps:",
          "      - title: Fill the disk",
          "        description: |",
          `          @agent run sh -c "test -e ${marker} || { touch ${marker}; head -c 16000000 /dev/zero > filler; }; true"`,
          "          @agent write done.txt ok",
          "",
        ].join("\n"),
      );
      // Configuration in the tracked file: .sdd is the small tmpfs, empty when the run starts.
      await Deno.writeTextFile(
        join(root, "bernstein.yaml"),
        JSON.stringify({
          isolation: "none",
          policy: { enabled: false },
          tuning: {
            orchestrator: { tick_interval_s: 0.2 },
            spawn: { spawn_backoff_base_s: 0 },
            tasks: { default_max_retries: 0 },
          },
        }) + "\n",
      );
      await git(root, "add", "-A");
      await git(root, "commit", "-q", "-m", "plan");
      await Deno.mkdir(join(root, ".sdd"));
      const env: Record<string, string> = {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: dir,
        DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/deno`,
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
        BERNSTEIN_AUDIT_KEY_PATH: join(dir, "state", "audit.key"),
      };
      const bern = [
        Deno.execPath(),
        "run",
        "-q",
        "--frozen",
        `--config=${REPO_ROOT}deno.json`,
        "-P=bernstein",
        v8FlagsArg(),
        `${REPO_ROOT}main.ts`,
      ].map(quote).join(" ");
      const sdd = join(root, ".sdd");
      const script = [
        `cd ${quote(root)}`,
        `${bern} run plan.yaml --json > ${out}/run1.out 2> ${out}/run1.err; echo $? > ${out}/rc1`,
        `cp ${sdd}/runtime/tasks.jsonl ${out}/tasks1.jsonl 2>/dev/null`,
        // Space returns.
        `rm -f ${sdd}/worktrees/*/filler`,
        `${bern} run --json > ${out}/run2.out 2> ${out}/run2.err; echo $? > ${out}/rc2`,
        `${bern} audit verify --json > ${out}/verify.out 2>&1; echo $? > ${out}/rc3`,
        // Its own stderr: a tail torn by the full disk is sealed and `show` warns that it skipped it,
        // which is not part of the JSON.
        `${bern} audit show --json > ${out}/show.out 2> ${out}/show.err`,
      ].join("\n");
      const run = await new Deno.Command("bwrap", {
        args: [
          "--dev-bind",
          "/",
          "/",
          "--size",
          String(4 * 1024 * 1024),
          "--tmpfs",
          sdd,
          "--die-with-parent",
          "--",
          "sh",
          "-c",
          script,
        ],
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const read = (name: string) => Deno.readTextFile(join(out, name)).catch(() => "");
      const context = `bwrap exit ${run.code}: ${new TextDecoder().decode(run.stderr)}\n` +
        `run1: ${await read("rc1")} ${await read("run1.err")}\n${
          (await read("run1.out")).slice(-2000)
        }\n` +
        `run2: ${await read("rc2")} ${await read("run2.err")}\n${
          (await read("run2.out")).slice(-2000)
        }`;
      assert.ok(
        await Deno.stat(marker).then(() => true, () => false),
        `the disk was not filled\n${context}`,
      );
      assert.equal((await read("rc1")).trim(), "1", context);
      assert.match(await read("run1.err"), /^error\[run\.storage_failed\]: /m, context);
      assert.doesNotMatch(await read("run1.err"), /error\[internal\]/, context);
      // The task it was working on stays resumable: not failed, not closed. Which of the three
      // depends on when the disk filled (before the orchestrator wrote in_progress: claimed;
      // after the agent reported: done). Never open: the agent fills the disk only after its
      // task was claimed, and a full disk while the agent starts stops the run, it is not a
      // failed spawn (which would reopen the task and leave the agent running unwatched).
      const task = lastTask(await read("tasks1.jsonl"), "1.1-fill-the-disk");
      assert.ok(task !== undefined, context);
      assert.ok(
        ["claimed", "in_progress", "done"].includes(String(task.status)),
        `task ended ${task.status}\n${context}`,
      );
      const run1 = await read("run1.out");
      assert.doesNotMatch(run1, /spawn failed/, context);
      // Its agent is stopped once at most: by the halt, or when its start could not be recorded.
      assert.ok((run1.match(/stalled \(no output/g) ?? []).length <= 1, context);
      // Space came back: the resume finished the run.
      assert.equal((await read("rc2")).trim(), "0", context);
      const events = (await read("run2.out")).trim().split("\n").filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l));
      assert.equal(events[0]?.type, "run.resumed", context);
      const summary = events.at(-1)?.summary;
      assert.equal(summary?.health, "HEALTHY", context);
      // The record: every line verifies (a torn tail is sealed, never silently dropped).
      assert.equal((await read("rc3")).trim(), "0", await read("verify.out"));
      const showOut = await read("show.out");
      const showErr = await read("show.err");
      const shownJson = (() => {
        try {
          return JSON.parse(showOut);
        } catch (error) {
          throw new Error(`audit show --json printed no JSON (${error}):\n${showOut}\n${showErr}`);
        }
      })();
      // A warning, if any, is the sealed torn tail's; nothing else goes to stderr.
      for (const line of showErr.split("\n").filter((l) => l.trim() !== "")) {
        assert.match(line, /^warning\[audit\.unauthenticated_lines\]: /, showErr);
      }
      const shown = shownJson.records.map((
        r: { record: Record<string, unknown> },
      ) => r.record);
      const types = shown.map((r: Record<string, unknown>) => r.event_type);
      for (const t of ["run.started", "agent.spawned", "run.resumed", "run.finished"]) {
        assert.ok(types.includes(t), `${t} in the chain: ${types.join(", ")}`);
      }
      // Events the full disk kept out were written on the resume, marked as such.
      const spilled = shown.filter((r: { details: Record<string, unknown> }) => r.details.spilled);
      for (const r of spilled) {
        assert.match(String((r.details.spilled as { reason: string }).reason), /No space left/);
      }
      console.log(`disk full: ${spilled.length} audit event(s) written late from the spill file`);
    });
  },
});
