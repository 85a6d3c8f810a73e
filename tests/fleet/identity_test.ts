import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { ensureInstallIdentity, readInstallIdentity } from "../../src/fleet/mod.ts";
import { systemRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { until } from "../_helpers/wait.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("concurrent creators of the install key all get the one key that was published", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const got = await Promise.all(
      Array.from({ length: 12 }, () => ensureInstallIdentity(sdd, systemRandom)),
    );
    deepStrictEqual(new Set(got.map((g) => g.fingerprint)).size, 1);
    strictEqual(got.filter((g) => g.created).length, 1);
    strictEqual((await readInstallIdentity(sdd)).fingerprint, got[0].fingerprint);
    const names: string[] = [];
    for await (const e of Deno.readDir(join(sdd, "keys"))) names.push(e.name);
    deepStrictEqual(names.sort(), ["install.key", "install.pub"]);
    strictEqual(((await Deno.stat(join(sdd, "keys/install.key"))).mode ?? 0) & 0o777, 0o600);
  });
});

Deno.test("two processes creating the install key at once agree on it", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const script = join(dir, "make.ts");
    const mod = new URL("../../src/fleet/mod.ts", import.meta.url).href;
    const io = new URL("../../src/io/mod.ts", import.meta.url).href;
    const go = join(dir, "go");
    await Deno.writeTextFile(
      script,
      `import { ensureInstallIdentity } from "${mod}";
import { systemRandom } from "${io}";
await Deno.writeTextFile(${JSON.stringify(join(dir, "ready-"))} + Deno.pid, "");
while (true) { try { await Deno.lstat(${
        JSON.stringify(go)
      }); break; } catch { await new Promise((r) => setTimeout(r, 1)); } }
const id = await ensureInstallIdentity(${JSON.stringify(sdd)}, systemRandom);
console.log(id.fingerprint + " " + id.created);
`,
    );
    const procs = [1, 2, 3, 4, 5, 6].map(() =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-q", "-A", "--config", CONFIG, script],
        stdout: "piped",
        stderr: "piped",
      }).output()
    );
    // Released together once every process is up and polling (each says so with a ready file).
    await until(async () => {
      let ready = 0;
      for await (const e of Deno.readDir(dir)) if (e.name.startsWith("ready-")) ready++;
      return ready === procs.length ? true : undefined;
    }, "all six processes ready");
    await Deno.writeTextFile(go, "");
    const outs = await Promise.all(procs);
    for (const o of outs) strictEqual(o.code, 0, new TextDecoder().decode(o.stderr));
    const lines = outs.map((o) => new TextDecoder().decode(o.stdout).trim().split(" "));
    strictEqual(new Set(lines.map((l) => l[0])).size, 1);
    ok(lines.filter((l) => l[1] === "true").length <= 1);
    strictEqual((await readInstallIdentity(sdd)).fingerprint, lines[0][0]);
  });
});
