// How much of a checked batch goes back to the in-order checks, by what the gate's caller
// reads: only the links (the gate alone), whole entries (an `onEntry` caller), or the pack
// window's rows (`GateInput.window`). Shaped where the batch is checked, so a worker clones
// back no more than is read, and the window's CSV bytes travel as a transferred buffer.
import {
  type BatchResult,
  checkBatch,
  type LineBatch,
  linksOnly,
  type SignatureCheckContext,
} from "./_line_check.ts";
import { type WindowRows, windowRows } from "./_window_rows.ts";

/** What a checked batch carries back besides hashes and issues. */
export type ResultShape = "links" | "entries" | "window";

/** A checked batch as the in-order checks receive it. */
export interface CheckedBatch extends BatchResult {
  /** The window rows, when the shape is `window` (its entries are also `links`). */
  window?: WindowRows;
}

/**
 * Checks a batch and shapes its result. `remote`: the result is sent to another thread, so
 * a `links` result drops the rest of each entry (on this thread it would cost a copy).
 */
export function checkShaped(
  batch: LineBatch,
  ctx: SignatureCheckContext,
  shape: ResultShape,
  remote: boolean,
): CheckedBatch {
  const result = checkBatch(batch, ctx);
  if (shape === "window") {
    const window = windowRows(result.entries);
    return { links: window.entries, hashes: result.hashes, issues: result.issues, window };
  }
  if (shape === "links" && remote) return linksOnly(result);
  return result;
}

/** The buffers a result can hand over instead of copying (the window's CSV bytes). */
export function transferables(result: CheckedBatch): ArrayBuffer[] {
  const csv = result.window?.csv.buffer;
  return csv instanceof ArrayBuffer ? [csv] : [];
}
