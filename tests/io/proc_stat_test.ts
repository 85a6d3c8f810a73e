// /proc as bernstein's binary sees it: Deno refuses every read under /proc to a process without
// --allow-all, so these tests run the reader in a child with bernstein's own permission set and
// compare what it learns (through cat and the shell) with the kernel's files read directly.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { parseStatLine } from "../../src/io/proc_stat.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const onLinux = Deno.build.os === "linux";

Deno.test("a stat line's fields are counted from the command name's last parenthesis", () => {
  const tail = "S 1 4242 4242 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 8190854 1000 10";
  deepStrictEqual(parseStatLine(`77 (a) R 9 9 ) ${tail}\n`), {
    state: "S",
    pgrp: 4242,
    startTime: "8190854",
  });
  deepStrictEqual(parseStatLine(`77 (plain) ${tail}`)?.pgrp, 4242);
  // Cut at a newline inside the command name (the shell's read stops there): nothing usable.
  strictEqual(parseStatLine("77 (a"), null);
  strictEqual(parseStatLine("77 (a) S 1 4242"), null, "too short to hold a start time");
  strictEqual(parseStatLine(`77 (a) ${tail.replace("8190854", "81x")}`), null);
});

/** A program whose file name (and so its command name) is `name`: a copy of sleep(1). */
async function sleeperNamed(dir: string, name: string): Promise<Deno.ChildProcess> {
  const path = join(dir, name);
  await Deno.copyFile("/bin/sleep", path);
  await Deno.chmod(path, 0o755);
  return new Deno.Command(path, { args: ["600"], stdout: "null", stderr: "null" }).spawn();
}

/** Runs the reader under `-P=bernstein` and returns what it printed. */
async function readUnderBernsteinPermissions(
  dir: string,
  pids: number[],
): Promise<{
  direct: string;
  stats: Record<string, unknown>;
  later: Record<string, unknown>;
  table: [number, { state: string; pgrp: number; startTime: string }][];
}> {
  const script = join(dir, "reader.ts");
  await Deno.writeTextFile(
    script,
    `import { procStat, procStatTable, readProcStat } from ${
      JSON.stringify(new URL("src/io/proc_stat.ts", `file://${REPO_ROOT}`).href)
    };
let direct = "read";
try { Deno.readTextFileSync("/proc/" + Deno.pid + "/stat"); } catch (e) { direct = (e as Error).name; }
const stats: Record<string, unknown> = {};
const later: Record<string, unknown> = {};
for (const pid of ${JSON.stringify(pids)}) {
  stats[pid] = procStat(pid) ?? String(procStat(pid));
  const read = await readProcStat(pid);
  later[pid] = read ?? String(read);
}
console.log(JSON.stringify({ direct, stats, later, table: [...((await procStatTable()) ?? [])] }));
`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--frozen", `--config=${REPO_ROOT}deno.json`, "-P=bernstein", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

function kernelStat(pid: number) {
  return parseStatLine(Deno.readTextFileSync(`/proc/${pid}/stat`));
}

Deno.test({
  name: "without --allow-all, start times, groups and states still come from /proc (through cat)",
  ignore: !onLinux,
  fn: async () => {
    await withTempDir(async (dir) => {
      const gone = new Deno.Command("true").spawn();
      await gone.status;
      const live = await sleeperNamed(dir, "plain-sleeper");
      try {
        const seen = await readUnderBernsteinPermissions(dir, [live.pid, gone.pid]);
        strictEqual(seen.direct, "NotCapable", "the direct read is refused, so cat was used");
        deepStrictEqual(seen.stats[live.pid], kernelStat(live.pid));
        deepStrictEqual(seen.later[live.pid], kernelStat(live.pid), "read without blocking");
        strictEqual(seen.stats[gone.pid], "null", "an exited process is not there");
        strictEqual(seen.later[gone.pid], "null");
        const row = seen.table.find(([pid]) => pid === live.pid);
        deepStrictEqual(row?.[1], kernelStat(live.pid));
      } finally {
        live.kill("SIGKILL");
        await live.status;
      }
    });
  },
});

Deno.test({
  name: "a command name with parentheses or a newline cannot forge another process's row",
  ignore: !onLinux,
  fn: async () => {
    await withTempDir(async (dir) => {
      // Each name tries to make the table say that pid 1 (or this process) is in group 4242.
      const hostile = [
        await sleeperNamed(dir, "a) S 1 4242 42"),
        await sleeperNamed(dir, `b\n1\t1 (c) S`),
        await sleeperNamed(dir, `\n${Deno.pid}\tx) S`),
      ];
      try {
        const seen = await readUnderBernsteinPermissions(dir, []);
        ok(seen.table.length > hostile.length, "the table lists the machine's processes");
        for (const [pid, stat] of seen.table) {
          strictEqual(stat.pgrp === 4242, false, `pid ${pid} claimed group 4242`);
          const kernel = (() => {
            try {
              return kernelStat(pid);
            } catch {
              return undefined; // exited since
            }
          })();
          if (kernel) strictEqual(stat.startTime, kernel.startTime, `pid ${pid}'s start time`);
        }
        // The first name holds no newline: its row is read whole, with its true group.
        const first = seen.table.find(([pid]) => pid === hostile[0].pid);
        strictEqual(first?.[1].pgrp, kernelStat(hostile[0].pid)?.pgrp);
      } finally {
        for (const p of hostile) {
          p.kill("SIGKILL");
          await p.status;
        }
      }
    });
  },
});
