// The run's private sandbox folder: named after its run, and the folders of dead runs swept,
// never a live run's, a folder whose owner cannot be told, or what a symlink points at.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { basename, join } from "node:path";
import { makeSandboxDir } from "../../src/sandbox/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

function startTime(pid: number): string {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test({
  name: "a new run's sandbox folder sweeps dead runs' folders and nothing else",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withTempDir(async (tmp) => {
      const ended = new Deno.Command("true").spawn();
      await ended.status;
      const live = new Deno.Command("sleep", { args: ["600"] }).spawn();
      try {
        const liveStart = startTime(live.pid);
        const target = join(tmp, "elsewhere");
        await Deno.mkdir(target);
        await Deno.writeTextFile(join(target, "keep.txt"), "keep");
        const made = {
          dead: `bernstein-sbx-${ended.pid}-1-aaaa`,
          recycled: `bernstein-sbx-${live.pid}-${Number(liveStart) - 1}-bbbb`,
          alive: `bernstein-sbx-${live.pid}-${liveStart}-cccc`,
          unnamed: "bernstein-sbx-dddd",
        };
        for (const name of Object.values(made)) {
          await Deno.mkdir(join(tmp, name));
          await Deno.writeTextFile(join(tmp, name, "x.gitconfig"), "[user]\n");
        }
        const link = `bernstein-sbx-${ended.pid}-1-link`;
        await Deno.symlink(target, join(tmp, link));
        const file = `bernstein-sbx-${ended.pid}-1-file`;
        await Deno.writeTextFile(join(tmp, file), "not a folder");

        const mine = await makeSandboxDir(tmp);
        strictEqual(
          basename(mine).startsWith(`bernstein-sbx-${Deno.pid}-${startTime(Deno.pid)}-`),
          true,
          basename(mine),
        );
        deepStrictEqual(
          await names(tmp),
          [made.alive, made.unnamed, basename(mine), file, link, "elsewhere"].sort(),
        );
        strictEqual(await Deno.readTextFile(join(target, "keep.txt")), "keep");
        ok((await Deno.stat(mine)).isDirectory);
        strictEqual(((await Deno.stat(mine)).mode ?? 0) & 0o777, 0o700);
      } finally {
        live.kill("SIGKILL");
        await live.status;
      }
    });
  },
});
