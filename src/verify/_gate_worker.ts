// A gate worker: runs the per-line checks on batches of raw lines, reading sidecars itself
// from the lineage folder. It only reads (the same folder the main thread reads).
import { keyedHmacSha256Pure } from "../crypto/mod.ts";
import { AgentCardSet } from "../lineage/mod.ts";
import { checkLines, type LineCheckContext, type RawBatch } from "./_line_check.ts";
import { sidecarReader } from "./_sidecars.ts";
import type { CardFile } from "./types.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
}

/** The first message a gate worker gets. */
export interface GateWorkerInit {
  type: "init";
  logName: string;
  lineageDir: string;
  cards: CardFile[];
  operatorKey?: Uint8Array;
}

const scope = globalThis as unknown as WorkerScope;
let ctx: LineCheckContext | undefined;

scope.onmessage = async (event: MessageEvent) => {
  const msg = event.data as GateWorkerInit | { type: "batch"; id: number; batch: RawBatch };
  if (msg.type === "init") {
    const cards = new AgentCardSet();
    for (const f of msg.cards) {
      if ("problem" in f) cards.addProblem(f.location, f.problem);
      else cards.add(f.location, f.bytes);
    }
    ctx = {
      logName: msg.logName,
      cards,
      signatures: sidecarReader(msg.lineageDir),
      hmacKey: msg.operatorKey === undefined ? undefined : keyedHmacSha256Pure(msg.operatorKey),
    };
    return;
  }
  if (ctx === undefined) throw new Error("gate worker used before init");
  scope.postMessage({ id: msg.id, summaries: await checkLines(msg.batch, ctx) });
};
