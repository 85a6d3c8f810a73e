// A separate process that appends to an audit log, for the multi-process and crash tests.
// Usage: append_worker.ts DIR KEY_PATH TAG COUNT [WRITE_CHUNK_BYTES] [BATCH]
// COUNT 0 appends until killed. BATCH > 1 issues that many appends without awaiting each.
import { AuditLog, readAuditKey } from "../../../src/audit/mod.ts";

const [dir, keyPath, tag, countText, chunkText, batchText] = Deno.args;
const count = Number(countText);
const batch = Number(batchText ?? "1");
const key = await readAuditKey(keyPath);
const log = new AuditLog(dir, key, {
  writeChunkBytes: chunkText ? Number(chunkText) : undefined,
});
let seq = 0;
let announced = false;
while (count === 0 || seq < count) {
  const n = count === 0 ? batch : Math.min(batch, count - seq);
  const pending = [];
  for (let i = 0; i < n; i++) {
    pending.push(log.append({
      actor: tag,
      event_type: "worker.append",
      resource_type: "worker",
      resource_id: tag,
      details: { seq: seq++, pad: "x".repeat(200) },
    }));
  }
  await Promise.all(pending);
  if (!announced) {
    announced = true;
    console.log("started");
  }
}
await log.close();
