// Writes a run's ledger rows durably and in order, and reads a run's ledger back with its chain
// checked.

import { join } from "node:path";
import type { Clock, SecretRedactor } from "../io/mod.ts";
import { appendDurable, readFileIfExists, withFileLock } from "../io/mod.ts";
import { type LedgerCheck, verifyLedgerBytes } from "./chain.ts";
import { LedgerError } from "./errors.ts";
import { ledgerDir, ledgerPath } from "./paths.ts";
import {
  buildRow,
  isTaskKind,
  LEDGER_KINDS,
  type LedgerEntryInput,
  type LedgerRow,
  rowBytes,
} from "./row.ts";

/** Options of {@linkcode LedgerWriter.open}. */
export interface LedgerWriterOptions {
  /** Source of every row's `ts`. */
  clock: Clock;
  /** Redacts each row's payload before it is chained (the run's minted connection secrets). */
  redactor?: SecretRedactor;
}

function brokenError(path: string, check: LedgerCheck): LedgerError {
  const b = check.broken;
  return new LedgerError(
    "ledger.chain_broken",
    `the ledger does not verify at line ${b?.line} (seq ${b?.seq}): ${b?.reason}; refusing to append`,
    { location: path, hint: "run 'bernstein runs list' to see the state of each run's ledger" },
  );
}

/**
 * Appends rows to one run's work ledger: under an exclusive lock, fsynced, each row chained
 * to the one before. Opening verifies the existing rows; a broken or torn ledger is never
 * appended to (nothing is truncated or rewritten).
 *
 * @example
 * ```ts ignore
 * const ledger = await LedgerWriter.open(".sdd", "brave-otter-3fa9c2", { clock: systemClock });
 * await ledger.append({ kind: "run.open", payload: { branch: "feature" } });
 * await ledger.append({ kind: "task.scheduled", task_id: "1.1-add-api" });
 * ```
 */
export class LedgerWriter {
  /** The ledger file. */
  readonly path: string;
  readonly #lockPath: string;
  readonly #clock: Clock;
  #redactor: SecretRedactor | undefined;
  #size = 0;
  #head: LedgerRow | undefined;

  private constructor(path: string, lockPath: string, clock: Clock) {
    this.path = path;
    this.#lockPath = lockPath;
    this.#clock = clock;
  }

  /** Opens (creating folders as needed) and verifies the ledger of `runId` under `sdd`. */
  static async open(
    sdd: string,
    runId: string,
    options: LedgerWriterOptions,
  ): Promise<LedgerWriter> {
    const dir = ledgerDir(sdd, runId);
    await Deno.mkdir(dir, { recursive: true });
    const writer = new LedgerWriter(ledgerPath(sdd, runId), join(dir, ".lock"), options.clock);
    writer.#redactor = options.redactor;
    await withFileLock(writer.#lockPath, () => writer.#reload());
    return writer;
  }

  /** The last row written (by anyone) as of the last append or open. */
  get head(): LedgerRow | undefined {
    return this.#head;
  }

  async #reload(): Promise<void> {
    const bytes = (await readFileIfExists(this.path)) ?? new Uint8Array();
    const check = verifyLedgerBytes(bytes);
    if (!check.ok) throw brokenError(this.path, check);
    this.#size = bytes.length;
    this.#head = check.rows.at(-1);
  }

  /** Appends one row and returns it. Another process may append too: the chain stays whole. */
  async append(entry: LedgerEntryInput): Promise<LedgerRow> {
    const input = this.#redactor === undefined || this.#redactor.size === 0
      ? entry
      : this.#redactor.json(entry);
    if (!(LEDGER_KINDS as readonly string[]).includes(input.kind)) {
      throw new LedgerError("ledger.bad_kind", `unknown ledger kind '${input.kind}'`);
    }
    const taskId = input.task_id ?? null;
    if (isTaskKind(input.kind) && (taskId === null || taskId === "")) {
      throw new LedgerError("ledger.bad_row", `${input.kind} needs a task_id`);
    }
    if (!isTaskKind(input.kind) && taskId !== null) {
      throw new LedgerError("ledger.bad_row", `${input.kind} is a run event and takes no task_id`);
    }
    return await withFileLock(this.#lockPath, async () => {
      let size = 0;
      try {
        size = (await Deno.stat(this.path)).size;
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      // Someone else appended since we last looked: re-read and re-verify before chaining.
      if (size !== this.#size) await this.#reload();
      const row = buildRow(this.#head, { ...input, tsMs: this.#clock.nowMs() });
      const bytes = rowBytes(row);
      await appendDurable(this.path, bytes, { mode: 0o600 });
      this.#size += bytes.length;
      this.#head = row;
      return row;
    });
  }
}

/** The verified ledger of a run, with where it lives. */
export interface LedgerRead extends LedgerCheck {
  /** The ledger file. */
  path: string;
}

/**
 * Reads and verifies the ledger of `runId`. A missing ledger is a {@linkcode LedgerError}
 * (`ledger.missing`); a broken one is returned with `ok: false` and the first bad row.
 */
export async function readLedger(sdd: string, runId: string): Promise<LedgerRead> {
  const path = ledgerPath(sdd, runId);
  const bytes = await readFileIfExists(path);
  if (bytes === undefined) {
    throw new LedgerError("ledger.missing", `run '${runId}' has no ledger`, { location: path });
  }
  return { path, ...verifyLedgerBytes(bytes) };
}
