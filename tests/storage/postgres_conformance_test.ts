// The TaskStore conformance suite, unchanged, against PostgreSQL (a throw-away server).
import { POSTGRES_MISSING, startPostgres } from "../_helpers/services.ts";
import { runTaskStoreConformance } from "../tasks/conformance.ts";
import { crashWriterFactory, freshNamespace, openTestStore } from "./_shared_store.ts";

if (POSTGRES_MISSING !== undefined) {
  Deno.test({
    name: `[postgres] task store conformance (ignored: ${POSTGRES_MISSING})`,
    ignore: true,
    fn() {},
  });
} else {
  const pg = await startPostgres();
  runTaskStoreConformance({
    name: "postgres",
    async open(ctx) {
      const namespace = freshNamespace();
      const open = () =>
        openTestStore({
          databaseUrl: pg.url,
          namespace,
          clock: ctx.clock,
          random: ctx.random,
          sink: ctx.sink,
        });
      const harness = {
        store: await open(),
        async reopen() {
          await harness.store.close();
          harness.store = await open();
          return harness.store;
        },
        cleanup: () => Promise.resolve(),
      };
      return harness;
    },
    crashWriter: crashWriterFactory(pg.url),
  });
}
