// Child process of the concurrent-claimers test: claims tasks from a shared store until none is
// left and prints `claimed <id> <agent>` for each.
import { systemClock, systemRandom } from "../../src/io/mod.ts";
import { openTestStore } from "./_shared_store.ts";

const [databaseUrl, namespace, agent, redisUrl] = Deno.args;
const store = await openTestStore({
  databaseUrl,
  redisUrl: redisUrl === "" ? undefined : redisUrl,
  namespace,
  clock: systemClock,
  random: systemRandom,
});
const encoder = new TextEncoder();
Deno.stdout.writeSync(encoder.encode("ready\n"));
// Start together with the others: the parent closes stdin when every claimer is ready.
await new Response(Deno.stdin.readable).arrayBuffer();
for (;;) {
  const task = await store.claimNext("dev", { agent });
  if (task === undefined) break;
  Deno.stdout.writeSync(encoder.encode(`claimed ${task.id} ${task.assigned_agent}\n`));
}
await store.close();
