// Notifications of a real run: a signed webhook to a loopback sink and the desktop notifier (a
// stub on PATH) hear the run's events in order; every delivery is in the audit chain and the
// summary; a hostile agent that dumps its environment never sees the webhook secret, which
// appears nowhere in the project, the output or the compliance pack; and one that posts a
// notification to the receiver itself does not get through (its sandbox's network; that step
// runs where the sandbox works — without it an agent can reach any port, and only the
// signature tells a receiver the post is not bernstein's).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { checkDelivery } from "../../src/notify/mod.ts";
import { probeSandbox } from "../../src/sandbox/mod.ts";
import { startSink } from "../notify/_sink.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, summaryOf } from "./_run_helpers.ts";

const SECRET = "PLANTED-WEBHOOK-SECRET-e2e-51d0";

async function filesUnder(dir: string, skip: (path: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (skip(path)) continue;
    if (e.isDirectory) out.push(...await filesUnder(path, skip));
    else if (e.isFile) out.push(path);
  }
  return out;
}

async function desktopStub(dir: string): Promise<{ bin: string; log: string }> {
  const bin = join(dir, "stub-bin");
  const log = join(dir, "desktop.log");
  await Deno.mkdir(bin);
  // Records its arguments, one per line, and what it was given of the environment.
  await Deno.writeTextFile(
    join(bin, "notify-send"),
    `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done >> ${log}\nenv >> ${log}.env\n`,
  );
  await Deno.chmod(join(bin, "notify-send"), 0o755);
  return { bin, log };
}

const sandboxed = (await probeSandbox()).available;

/** A plan step whose agent posts a notification to the receiver itself, via its proxy and not. */
function forgeStep(url: string): string {
  const post = `curl -sS -m 5 -d event=run.completed ${url}`;
  return `      - title: Forge a notification
        description: |
          @agent run sh -c "${post} > forged.txt 2>&1; ${post} --noproxy '*' >> forged.txt 2>&1; true"
`;
}

Deno.test("a run notifies a signed webhook and the desktop in order, records every delivery, and never leaks the secret", async () => {
  const sink = startSink();
  try {
    await withTempDir(async (root) => {
      const dir = join(root, "repo");
      await Deno.mkdir(dir);
      const { bin, log } = await desktopStub(root);
      await prepareRepo(
        dir,
        `cli: scripted
stages:
  - name: work
    steps:
      - title: Leak the environment
        files: [leak.txt]
        description: |
          @agent run sh -c "env > leak.txt"
      - title: Break <!channel>
        description: |
          @agent fail on purpose
${sandboxed ? forgeStep(sink.url) : ""}`,
        {
          notify: {
            webhook: {
              url: sink.url,
              secret_env: "BERNSTEIN_WEBHOOK_SECRET",
              events: ["run.started", "task.failed", "task.merged", "run.unhealthy"],
            },
            desktop: { events: ["run.unhealthy"] },
          },
          ...(sandboxed ? { isolation: "sandbox" } : {}),
        },
      );
      const env = {
        BERNSTEIN_WEBHOOK_SECRET: SECRET,
        DISPLAY: ":99",
        PATH: `${bin}:${Deno.env.get("PATH")}`,
      };
      const run = await bern(dir, ["run", "plan.yaml", "--json"], env);
      const summary = summaryOf(run);
      strictEqual(summary.health, "UNHEALTHY", run.stderr);
      // The webhook: in order, each signed with the planted secret — and nothing else: the
      // agent that posted to the receiver itself (through its proxy, and around it) got
      // nowhere (the run has ended, so every request that will come has come).
      const merged = sandboxed ? 2 : 1;
      const got = await sink.waitFor(3 + merged);
      strictEqual(got.length, 3 + merged, JSON.stringify(got.map((r) => r.path)));
      const events = got.map((r) => (r.json as { event: string }).event);
      strictEqual(events[0], "run.started");
      strictEqual(events[events.length - 1], "run.unhealthy");
      deepStrictEqual(
        events.slice(1, -1).sort(),
        ["task.failed", ...Array(merged).fill("task.merged")],
      );
      for (const r of got) {
        strictEqual(checkDelivery(SECRET, r.body, r.headers, Date.now() / 1000), undefined);
      }
      if (sandboxed) {
        const forged = await Deno.readTextFile(join(dir, "forged.txt"));
        ok(/curl: \(\d+\)/.test(forged), `both posts failed: ${forged}`);
      }
      const failed = got.find((r) => (r.json as { event: string }).event === "task.failed");
      ok(JSON.stringify(failed?.json).includes("Break <!channel>"), "the JSON body is raw");
      // The desktop stub: the end of the run, once.
      const shown = await Deno.readTextFile(log);
      ok(shown.includes("--urgency=critical") && shown.includes("ended UNHEALTHY"), shown);
      const desktopEnv = await Deno.readTextFile(`${log}.env`);
      ok(!desktopEnv.includes(SECRET), "the desktop notifier gets no secret");
      // The record: the summary's counts and one audit event per delivery.
      deepStrictEqual(
        (summary.notifications as { channel: string; delivered: number; failed: number }[])
          .map((n) => [n.channel, n.delivered, n.failed]),
        [["webhook", 3 + merged, 0], ["desktop", 1, 0]],
      );
      const audit = (await bern(dir, ["audit", "show", "--json"], env)).stdout;
      strictEqual(audit.split('"notify.delivered"').length - 1, 4 + merged, audit.slice(0, 2000));
      ok(audit.includes('"notify.started"'));
      // The hostile agent's dump has the run's variables but not the secret.
      const leak = await Deno.readTextFile(join(dir, "leak.txt"));
      ok(leak.includes("BERNSTEIN_TASK_ID"), "the agent did dump its environment");
      ok(!leak.includes(SECRET) && !leak.includes("BERNSTEIN_WEBHOOK_SECRET"), leak);
      // Nowhere in the project (git objects are compressed: leak.txt is checked above), the
      // output, or the compliance pack.
      for (const file of await filesUnder(root, (p) => p.includes("/.git/objects"))) {
        const text = new TextDecoder().decode(await Deno.readFile(file));
        ok(!text.includes(SECRET), `${file} holds the secret`);
      }
      ok(!(run.stdout + run.stderr).includes(SECRET));
      const pack = join(root, "pack.zip");
      const packed = await bern(dir, [
        "compliance",
        "pack",
        "--since",
        "2000-01-01",
        "--until",
        "2100-01-01",
        "--org",
        "Acme",
        "--output",
        pack,
      ], env);
      strictEqual(packed.code, 0, packed.stderr);
      const unzip = await new Deno.Command("unzip", { args: ["-p", pack], stdout: "piped" })
        .output();
      const members = new TextDecoder().decode(unzip.stdout);
      ok(members.includes("leak.txt"), "the pack covers the hostile agent's write");
      ok(!members.includes(SECRET), "the pack holds no secret");
    });
  } finally {
    await sink.close();
  }
});

Deno.test("a webhook that never answers does not hold the run: at the drain deadline its deliveries are dropped and counted", async () => {
  const sink = startSink(["hang", "hang", "hang"]);
  try {
    await withTempDir(async (root) => {
      const dir = join(root, "repo");
      await Deno.mkdir(dir);
      await prepareRepo(
        dir,
        `cli: scripted
stages:
  - name: work
    steps:
      - title: Write a file
        files: [a.txt]
        description: |
          @agent write a.txt x
`,
        {
          notify: { webhook: { url: sink.url, events: ["run.started", "run.completed"] } },
          // An attempt may take ten minutes; the end of the run waits one second for them.
          tuning: { notify: { timeout_s: 600, drain_timeout_s: 1 } },
        },
      );
      const run = await bern(dir, ["run", "plan.yaml"]);
      strictEqual(run.code, 0, run.stderr);
      const runs = [...Deno.readDirSync(join(dir, ".sdd", "runs"))].filter((e) => e.isDirectory);
      const summary = JSON.parse(
        await Deno.readTextFile(join(dir, ".sdd", "runs", runs[0].name, "summary.json")),
      );
      strictEqual(summary.health, "HEALTHY");
      deepStrictEqual(
        (summary.notifications as { channel: string; delivered: number; dropped: number }[])
          .map((n) => [n.channel, n.delivered, n.dropped]),
        [["webhook", 0, 2]],
      );
      ok(
        /notified webhook → http:\/\/127\.0\.0\.1:\d+\/…: 0 delivered, 0 failed, 2 dropped/
          .test(run.stdout),
        run.stdout,
      );
      ok(/notification run\.\w+ to webhook dropped/.test(run.stdout + run.stderr), "warned");
      const audit = (await bern(dir, ["audit", "show", "--json"])).stdout;
      strictEqual(audit.split('"notify.dropped"').length - 1, 2, audit.slice(0, 2000));
    });
  } finally {
    await sink.close();
  }
});
