import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import {
  buildChildEnv,
  mapEnv,
  outputText,
  runProcess,
  SpawnError,
  spawnProcess,
} from "../../src/io/mod.ts";
import { waitUntil } from "../_helpers/events.ts";

Deno.test("the child sees only the environment it is given", async () => {
  const r = await runProcess(["sh", "-c", "env"], { env: { ONLY: "1", PATH: "/usr/bin:/bin" } });
  strictEqual(r.code, 0);
  const names = outputText(r.stdout).trim().split("\n").map((l) => l.split("=")[0]).filter((n) =>
    n !== "PWD" && n !== "SHLVL" && n !== "_"
  );
  deepStrictEqual(names.sort(), ["ONLY", "PATH"]);
});

Deno.test("buildChildEnv passes exact names only, plus extras", () => {
  const env = mapEnv({ ANTHROPIC_API_KEY: "k", AWS_SECRET_ACCESS_KEY: "s", HOME: "/h" });
  deepStrictEqual(buildChildEnv(["ANTHROPIC_API_KEY", "HOME", "MISSING"], env, { X: "1" }), {
    ANTHROPIC_API_KEY: "k",
    HOME: "/h",
    X: "1",
  });
});

Deno.test("stdin bytes reach the child and stdout is captured exactly", async () => {
  const bytes = new TextEncoder().encode("héllo\n\0end");
  const r = await runProcess(["cat"], { stdin: bytes, env: { PATH: "/usr/bin:/bin" } });
  deepStrictEqual(r.stdout, bytes);
});

/** The state letter of a process from /proc ("" when it is gone). */
async function processState(pid: number): Promise<string> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

Deno.test("a deadline kills the whole process group, grandchildren included", async () => {
  await deadlineKillsTheGroup("detach");
});

Deno.test({
  name: "spawned through setsid: a deadline kills the whole process group, grandchildren included",
  ignore: Deno.build.os !== "linux",
  fn: () => deadlineKillsTheGroup("setsid"),
});

Deno.test({
  name:
    "spawned through setsid: the child itself (same pid) leads a session and process group of its own",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const handle = spawnProcess(["sh", "-c", "cat /proc/$$/stat"], {
      env: { PATH: "/usr/bin:/bin" },
      group: "setsid",
    });
    const r = await handle.done;
    strictEqual(r.code, 0, outputText(r.stderr));
    const stat = outputText(r.stdout);
    const [pid] = stat.split(" ");
    const [, , pgrp, session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    deepStrictEqual([Number(pid), Number(pgrp), Number(session)], [
      handle.pid,
      handle.pid,
      handle.pid,
    ]);
  },
});

async function deadlineKillsTheGroup(group: "detach" | "setsid"): Promise<void> {
  const marker = await Deno.makeTempFile();
  // Both sleeps would run 600 s: gone well before that means the group was killed.
  const r = await runProcess(["sh", "-c", `sleep 600 & echo $! > ${marker}; sleep 600`], {
    env: { PATH: "/usr/bin:/bin" },
    timeoutMs: 300,
    killGraceMs: 200,
    group,
  });
  strictEqual(r.timedOut, true);
  ok(r.signal === "SIGTERM" || r.signal === "SIGKILL", String(r.signal));
  const grandchild = Number((await Deno.readTextFile(marker)).trim());
  // The signal is sent; on a busy machine the grandchild may take a moment to be scheduled and
  // die. A killed orphan may linger as a zombie until init reaps it: a zombie counts as gone.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ownEnd = new Promise((res) => (timer = setTimeout(res, 600_000)));
  try {
    await waitUntil(async () => ["", "Z"].includes(await processState(grandchild)), {
      what: "the background grandchild to be gone",
      until: ownEnd,
    });
  } finally {
    clearTimeout(timer);
  }
  await Deno.remove(marker);
}

Deno.test("a child that ignores SIGTERM is SIGKILLed after the grace period", async () => {
  let ready: () => void = () => {};
  const trapped = new Promise<void>((res) => (ready = res));
  const handle = spawnProcess(["sh", "-c", "trap '' TERM; echo trapped; sleep 30"], {
    env: { PATH: "/usr/bin:/bin" },
    onStdout: () => ready(),
  });
  // SIGTERM only once the shell says it ignores it (however long it took to start).
  await trapped;
  await handle.terminate(200);
  const r = await handle.done;
  strictEqual(r.signal, "SIGKILL");
});

Deno.test("an abort signal kills the process and is reported", async () => {
  const controller = new AbortController();
  const done = runProcess(["sleep", "30"], {
    env: { PATH: "/usr/bin:/bin" },
    signal: controller.signal,
    killGraceMs: 100,
  });
  setTimeout(() => controller.abort(), 100);
  const r = await done;
  strictEqual(r.aborted, true);
  strictEqual(r.timedOut, false);
});

Deno.test("a missing binary is a SpawnError naming it", async () => {
  await rejects(
    async () =>
      await runProcess(["definitely-not-a-binary-xyz"], { env: { PATH: "/usr/bin:/bin" } }),
    (e: unknown) => e instanceof SpawnError && e.message.includes("definitely-not-a-binary-xyz"),
  );
});

Deno.test("output beyond the capture limit is truncated but still streamed", async () => {
  let streamed = 0;
  const r = await runProcess(["sh", "-c", "head -c 100000 /dev/zero"], {
    env: { PATH: "/usr/bin:/bin" },
    maxCaptureBytes: 1000,
    onStdout: (c) => (streamed += c.length),
  });
  strictEqual(r.stdout.length, 1000);
  strictEqual(streamed, 100000);
});
