// A gate worker: checks batches of log lines (parse, entry rules, signatures, HMAC), reading
// sidecars itself from the lineage folder or taking them from the batch, and replies with the
// entries (or only what the in-order checks read of them), their hashes and the issues. It
// only reads.
import { keyedHmacSha256Pure } from "../crypto/mod.ts";
import { AgentCardSet } from "../lineage/mod.ts";
import {
  checkBatch,
  type LineBatch,
  linksOnly,
  type SignatureCheckContext,
} from "./_line_check.ts";
import { type SidecarIndex, sidecarReader } from "./_sidecars.ts";
import type { CardFile } from "./types.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
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
  /** Send whole entries back (the caller reads them); false: only their links. */
  entries: boolean;
}

const scope = globalThis as unknown as WorkerScope;
let ctx: SignatureCheckContext | undefined;
let wholeEntries = true;

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
    wholeEntries = msg.entries;
    return;
  }
  if (ctx === undefined) throw new Error("gate worker used before init");
  const result = checkBatch(msg.batch, ctx);
  scope.postMessage({ id: msg.id, ...(wholeEntries ? result : linksOnly(result)) });
};
