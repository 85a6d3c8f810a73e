import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { systemClock, systemRandom } from "../../src/io/mod.ts";
import { openJsonlTaskStore, type TaskStore } from "../../src/tasks/mod.ts";
import { type HarnessContext, runTaskStoreConformance } from "./conformance.ts";

const WRITER = fileURLToPath(new URL("./_crash_writer.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

function open(path: string, ctx: HarnessContext): Promise<TaskStore> {
  return openJsonlTaskStore(path, {
    clock: ctx.clock,
    random: ctx.random,
    sink: ctx.sink,
    defaults: { priority: 2, max_retries: 2 },
    compactMinRecords: 10_000,
  });
}

runTaskStoreConformance({
  name: "jsonl",
  async open(ctx) {
    const dir = await Deno.makeTempDir({ prefix: "bernstein-tasks-" });
    const path = join(dir, "runtime", "tasks.jsonl");
    const harness = {
      store: await open(path, ctx),
      async reopen() {
        await harness.store.close();
        harness.store = await open(path, ctx);
        return harness.store;
      },
      cleanup: () => Deno.remove(dir, { recursive: true }),
    };
    return harness;
  },
  async crashWriter() {
    const dir = await Deno.makeTempDir({ prefix: "bernstein-crash-" });
    const path = join(dir, "tasks.jsonl");
    return {
      argv: [
        Deno.execPath(),
        "run",
        "-q",
        "--frozen",
        `--config=${CONFIG}`,
        "-P=dev",
        WRITER,
        path,
      ],
      reopen: () =>
        openJsonlTaskStore(path, {
          clock: systemClock,
          random: systemRandom,
          defaults: { priority: 2, max_retries: 2 },
          compactMinRecords: 10_000,
        }),
      cleanup: () => Deno.remove(dir, { recursive: true }),
    };
  },
});
