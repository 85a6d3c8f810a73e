// The pack builder's sidecar worker: reads each window entry's signature sidecar and collects
// the pack's signature members on another core while the main thread picks the window's
// lines (see `_off_thread_sidecars.ts`). It reads with the verifier's reader under the
// builder's own permissions, and writes nothing.
import { workerScope } from "../_worker_scope.ts";
import {
  SidecarCollector,
  type SidecarReply,
  type SidecarRequest,
} from "./_off_thread_sidecars.ts";

const scope = workerScope("sidecar worker");
let collector: SidecarCollector | undefined;
let failed = false;

scope.onmessage = (event: MessageEvent) => {
  if (failed) return;
  const msg = event.data as SidecarRequest;
  try {
    if (msg.type === "open") {
      collector = new SidecarCollector(msg.lineageDir);
      return;
    }
    if (collector === undefined) throw new Error("sidecar worker: not opened");
    if (msg.type === "read") {
      for (let i = 0; i < msg.hashes.length; i++) collector.add(msg.artefacts[i], msg.hashes[i]);
      scope.postMessage({ type: "read" } satisfies SidecarReply);
      return;
    }
    const { signatures, problems } = collector.result();
    collector = undefined;
    const columns = signatures.columns();
    // Handed over, not copied: the members' bytes are tens of MB at 100 000 entries.
    const buffers = new Set<ArrayBuffer>();
    for (
      const c of [columns.entries, columns.shas, columns.offsets, columns.lengths, columns.bytes]
    ) {
      if (c.buffer instanceof ArrayBuffer) buffers.add(c.buffer);
    }
    scope.postMessage(
      { type: "finished", columns, problems } satisfies SidecarReply,
      [...buffers],
    );
  } catch (error) {
    // Nothing after a failure is read: the builder stops at the first one, as on its thread.
    failed = true;
    const e = error instanceof Error ? error : new Error(String(error));
    scope.postMessage({ type: "failed", name: e.name, message: e.message } satisfies SidecarReply);
  }
};
