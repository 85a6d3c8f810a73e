// A gate worker: checks batches of log lines (parse, entry rules, signatures, HMAC), reading
// sidecars itself from the lineage folder or taking them from the batch, and replies with what
// the caller reads of the entries (their links, whole entries or the pack window's rows, see
// _shaped_batch.ts), their hashes and the issues. It only reads.
import { keyedHmacSha256Pure } from "../crypto/mod.ts";
import { AgentCardSet } from "../lineage/mod.ts";
import type { LineBatch, SignatureCheckContext } from "./_line_check.ts";
import { checkShaped, type ResultShape, transferables } from "./_shaped_batch.ts";
import { type SidecarIndex, sidecarReader } from "./_sidecars.ts";
import type { CardFile } from "./types.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: unknown, transfer: Transferable[]): void;
}

/** The first message a gate worker gets. */
export interface GateWorkerInit {
  type: "init";
  logName: string;
  /** The lineage folder whose sidecars to read; absent: every batch brings its sidecars. */
  lineageDir?: string;
  /** The lineage folder's sidecars, listed once by the main thread (when it did). */
  sidecarIndex?: SidecarIndex;
  cards: CardFile[];
  operatorKey?: Uint8Array;
  /** How sidecars are named in messages. */
  sidecarNames?: "lineage" | "pack";
  /** What to send back of each entry: its links, the whole entry, or the window's rows. */
  shape: ResultShape;
}

const scope = globalThis as unknown as WorkerScope;
let ctx: SignatureCheckContext | undefined;
let shape: ResultShape = "entries";

scope.onmessage = (event: MessageEvent) => {
  const msg = event.data as GateWorkerInit | { type: "batch"; id: number; batch: LineBatch };
  if (msg.type === "init") {
    const cards = new AgentCardSet();
    for (const f of msg.cards) {
      if ("problem" in f) cards.addProblem(f.location, f.problem);
      else cards.add(f.location, f.bytes);
    }
    ctx = {
      logName: msg.logName,
      cards,
      signatures: msg.lineageDir === undefined
        ? undefined
        : sidecarReader(msg.lineageDir, msg.sidecarIndex),
      hmacKey: msg.operatorKey === undefined ? undefined : keyedHmacSha256Pure(msg.operatorKey),
      sidecarNames: msg.sidecarNames,
    };
    shape = msg.shape;
    return;
  }
  if (ctx === undefined) throw new Error("gate worker used before init");
  const result = checkShaped(msg.batch, ctx, shape, true);
  scope.postMessage({ id: msg.id, ...result }, transferables(result));
};
