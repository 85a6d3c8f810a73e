import { createMemoryTaskStore } from "../../src/tasks/mod.ts";
import { runTaskStoreConformance } from "./conformance.ts";

runTaskStoreConformance({
  name: "memory",
  open: (ctx) =>
    Promise.resolve({
      store: createMemoryTaskStore({ clock: ctx.clock, random: ctx.random, sink: ctx.sink }),
      cleanup: () => Promise.resolve(),
    }),
});
