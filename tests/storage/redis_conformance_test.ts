// The TaskStore conformance suite, unchanged, against `backend: redis` (PostgreSQL holds the
// tasks, Redis the claim locks and wake-ups), on throw-away servers.
import {
  POSTGRES_MISSING,
  REDIS_MISSING,
  startPostgres,
  startRedis,
} from "../_helpers/services.ts";
import { runTaskStoreConformance } from "../tasks/conformance.ts";
import { crashWriterFactory, freshNamespace, openTestStore } from "./_shared_store.ts";

const missing = POSTGRES_MISSING ?? REDIS_MISSING;
if (missing !== undefined) {
  Deno.test({
    name: `[redis] task store conformance (ignored: ${missing})`,
    ignore: true,
    fn() {},
  });
} else {
  const pg = await startPostgres();
  const redis = await startRedis();
  runTaskStoreConformance({
    name: "redis",
    async open(ctx) {
      const namespace = freshNamespace();
      const open = () =>
        openTestStore({
          databaseUrl: pg.url,
          redisUrl: redis.url,
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
    crashWriter: crashWriterFactory(pg.url, redis.url),
  });
}
