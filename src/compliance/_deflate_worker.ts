// The pack builder's deflate worker: compresses the window's log and evidence CSV on the
// second core while the main thread reads sidecars and parses entries. It runs the same
// `MemberCompressor` as the main thread would (fixed 64 KiB pushes of fflate's deflater), so
// the members' bytes do not depend on where, or in what pieces, they were compressed. It only
// computes: no file, network or environment access.
import { workerScope } from "./_worker_scope.ts";
import { crc32 } from "node:zlib";
import { useNativeCrc32 } from "./zip_writer.ts";
import { WindowCompression } from "./_window_log.ts";
import type { DeflateReply, DeflateRequest } from "./_off_thread_deflate.ts";

const scope = workerScope("deflate worker");
// The log and CSV of a large window: worth node:zlib's native checksum (only this worker and
// a pack build load node:zlib).
useNativeCrc32(crc32);
let window = new WindowCompression();

scope.onmessage = (event: MessageEvent) => {
  const msg = event.data as DeflateRequest;
  try {
    if (msg.type === "write") {
      window.write(msg.name, msg.bytes);
      scope.postMessage({ type: "written" } satisfies DeflateReply);
      return;
    }
    const { members, facts } = window.finish(msg.names);
    window = new WindowCompression();
    // Handed over, not copied: the compressed log and CSV are tens of MB.
    const buffers = new Set<ArrayBuffer>();
    for (const m of members) {
      for (const d of m.data) if (d.buffer instanceof ArrayBuffer) buffers.add(d.buffer);
    }
    scope.postMessage({ type: "finished", members, facts } satisfies DeflateReply, [...buffers]);
  } catch (error) {
    scope.postMessage({ type: "failed", message: String(error) } satisfies DeflateReply);
  }
};
