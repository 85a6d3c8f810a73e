// The variable store (I/O shell over the pure projection): `set`/`unset` append a chained
// write under one lock (ordinals stay contiguous across processes), values live as
// content-addressed blobs, the name index is a projection rewritten after each write, and
// every read resolves from the chain — the index is only cross-checked.
import type { ErrorCode } from "../errors/mod.ts";
import { type AuditKey, AuditLog, type AuditSink } from "../audit/mod.ts";
import { CasError, CasStore } from "../cas/mod.ts";
import {
  canonicalBytes,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  parseJsonBytes,
} from "../canonical/mod.ts";
import {
  type Clock,
  type Random,
  readFileIfExists,
  sddFolder,
  systemClock,
  systemRandom,
  withFileLock,
  writeFileAtomic,
} from "../io/mod.ts";
import { type FleetChain, readFleetChain } from "./chain.ts";
import { FleetError } from "./errors.ts";
import { varWriteEvent } from "./events.ts";
import { checkFleetName } from "./names.ts";
import { type FleetPaths, fleetPaths } from "./paths.ts";
import {
  type FleetProjection,
  headWrite,
  projectFleet,
  type VariableHistory,
  type VariableWrite,
} from "./projection.ts";
import { decodeValue, hexOfValueHash, valueBytes, valueHashOf } from "./value.ts";

/** The name index's schema tag. */
export const INDEX_SCHEMA = "bernstein-fleet-variables/v1";

/** What the store works with. */
export interface VariableStoreOptions {
  /** The project's `.sdd/`. */
  sdd: string;
  /** The audit key (the chain is read and written with it). */
  auditKey: AuditKey;
  /** Where writes are recorded (default: the project's audit log, one append each). */
  audit?: AuditSink;
  /** Clock (blob sidecars). */
  clock?: Clock;
  /** Randomness (temp names). */
  random?: Random;
}

/** A value as resolved: the write it came from, its bytes and its JSON. */
export interface ResolvedVariable {
  /** The name. */
  name: string;
  /** The value. */
  value: JsonValue;
  /** Its canonical bytes (what a reference renders from, byte for byte). */
  bytes: Uint8Array;
  /** `sha256:<hex>` of the bytes. */
  value_hash: string;
  /** The write it came from. */
  write: VariableWrite;
}

/** One row of `var list`. */
export interface VariableSummary {
  /** The name. */
  name: string;
  /** The current value's hash. */
  value_hash: string;
  /** The current write ordinal. */
  chain_position: number;
  /** Writes so far (sets and unsets). */
  writes: number;
}

/** A problem the store noticed without failing (an index out of step with the chain …). */
export interface StoreWarning {
  /** Stable code. */
  code: ErrorCode;
  /** What is wrong. */
  message: string;
}

/** The content-addressed, audit-chained variables of one project. */
export class VariableStore {
  /** Paths of the fleet plane. */
  readonly paths: FleetPaths;
  readonly #auditDir: string;
  readonly #key: AuditKey;
  readonly #audit: AuditSink | undefined;
  readonly #cas: CasStore;
  /** Problems noticed along the way (shown as warnings by the CLI). */
  readonly warnings: StoreWarning[] = [];

  constructor(options: VariableStoreOptions) {
    this.paths = fleetPaths(options.sdd);
    this.#auditDir = sddFolder(options.sdd, "audit");
    this.#key = options.auditKey;
    this.#audit = options.audit;
    this.#cas = new CasStore(this.paths.blobsDir, {
      clock: options.clock ?? systemClock,
      random: options.random ?? systemRandom,
    });
  }

  /** The fleet records of the chain and their projection. */
  async project(): Promise<{ chain: FleetChain; projection: FleetProjection }> {
    const chain = await readFleetChain(this.#auditDir, this.#key);
    if (chain.unauthenticated > 0) {
      this.#warn(
        "fleet.chain_damaged",
        `${chain.unauthenticated} audit line(s) do not authenticate (first: ${chain.firstProblem}); ` +
          "fleet state is read from the records that do ('bernstein audit verify' names them)",
      );
    }
    return { chain, projection: projectFleet(chain.events) };
  }

  /** Sets `name` to `value`: blob first, then the chained write, then the index. */
  async set(name: string, value: JsonValue, actor = "operator"): Promise<VariableWrite> {
    checkFleetName(name, "variable");
    const bytes = valueBytes(value);
    const hash = valueHashOf(bytes);
    return await this.#write(name, actor, async () => {
      await this.#cas.put(bytes, { contentType: "application/json" });
      return { hash, size: bytes.length };
    });
  }

  /** Removes `name` (a chained write with no new value); unknown names are refused. */
  async unset(name: string, actor = "operator"): Promise<VariableWrite> {
    checkFleetName(name, "variable");
    return await this.#write(name, actor, () => Promise.resolve({ hash: "", size: 0 }));
  }

  async #write(
    name: string,
    actor: string,
    store: () => Promise<{ hash: string; size: number }>,
  ): Promise<VariableWrite> {
    await Deno.mkdir(this.paths.variablesDir, { recursive: true, mode: 0o755 });
    return await withFileLock(this.paths.writeLock, async () => {
      const { projection } = await this.project();
      const history = projection.variables.get(name);
      this.#refuseBroken(projection, name);
      const head = headWrite(history);
      const { hash, size } = await store();
      if (hash === "" && head === undefined) throw unknownVariable(name, projection);
      const record = await this.#append(varWriteEvent(actor, {
        name,
        oldValueHash: history?.writes.at(-1)?.new_value_hash ?? "",
        newValueHash: hash,
        ordinal: (history?.writes.at(-1)?.ordinal ?? -1) + 1,
        sizeBytes: size,
      }));
      const after = projectFleet([...(await this.project()).chain.events]);
      await this.#writeIndex(after);
      const write = after.variables.get(name)?.writes.find((w) => w.hmac === record.hmac);
      if (write === undefined) {
        throw new FleetError("fleet.chain_damaged", `the write of '${name}' is not on the chain`);
      }
      return write;
    });
  }

  async #append(event: Parameters<AuditSink["append"]>[0]) {
    if (this.#audit !== undefined) return await this.#audit.append(event);
    const log = new AuditLog(this.#auditDir, this.#key);
    try {
      return await log.append(event);
    } finally {
      await log.close();
    }
  }

  #refuseBroken(projection: FleetProjection, name: string): void {
    const names = projection.variables.get(name);
    if (names === undefined) return;
    const wheres = new Set([
      ...names.writes.map((w) => w.where),
      ...names.reads.map((r) => r.where),
    ]);
    const v = projection.violations.find((v) => wheres.has(v.where));
    if (v !== undefined) {
      throw new FleetError(
        "fleet.chain_damaged",
        `variable '${name}': ${v.message} (${v.where}); nothing is written over a broken history`,
        { hint: "'bernstein audit verify' reports the chain's fleet records" },
      );
    }
  }

  /** The current value of `name`, from the chain head and its re-hashed blob. */
  async get(name: string): Promise<ResolvedVariable> {
    checkFleetName(name, "variable");
    const { projection } = await this.project();
    const head = headWrite(projection.variables.get(name));
    if (head === undefined) throw unknownVariable(name, projection);
    await this.#checkIndex(projection);
    const { value, bytes } = await this.resolve(head.new_value_hash);
    return { name, value, bytes, value_hash: head.new_value_hash, write: head };
  }

  /** The value stored under a hash (the replay path: never the live value). */
  async resolve(valueHash: string): Promise<{ value: JsonValue; bytes: Uint8Array }> {
    const hex = hexOfValueHash(valueHash);
    if (hex === undefined) {
      throw new FleetError("fleet.blob_tampered", `'${valueHash}' is not sha256:<64 hex>`);
    }
    let bytes: Uint8Array;
    try {
      bytes = await this.#cas.read(hex);
    } catch (error) {
      if (error instanceof CasError && error.code === "cas.not_found") {
        throw new FleetError("fleet.blob_missing", `no stored value for ${valueHash}`, {
          location: this.#cas.blobPath(hex),
          cause: error,
        });
      }
      throw new FleetError(
        "fleet.blob_tampered",
        `the stored value for ${valueHash} does not hash to it: ${(error as Error).message}`,
        { location: this.#cas.blobPath(hex), cause: error },
      );
    }
    return { value: decodeValue(bytes), bytes };
  }

  /** Every variable that has a value now, by name. */
  async list(): Promise<VariableSummary[]> {
    const { projection } = await this.project();
    await this.#checkIndex(projection);
    return [...projection.variables.values()]
      .flatMap((h) => {
        const head = headWrite(h);
        return head === undefined ? [] : [{
          name: h.name,
          value_hash: head.new_value_hash,
          chain_position: head.ordinal,
          writes: h.writes.length,
        }];
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Every write and read of `name`, from the chain. */
  async history(name: string): Promise<VariableHistory> {
    checkFleetName(name, "variable");
    const { projection } = await this.project();
    const h = projection.variables.get(name);
    if (h === undefined) throw unknownVariable(name, projection);
    return h;
  }

  /** The index as the chain says it should be: `canon` bytes. */
  indexBytes(projection: FleetProjection): Uint8Array {
    const variables: JsonObject = {};
    for (const name of [...projection.variables.keys()].sort()) {
      const head = headWrite(projection.variables.get(name));
      if (head === undefined) continue;
      variables[name] = { chain_position: head.ordinal, value_hash: head.new_value_hash };
    }
    return canonicalBytes({ schema: INDEX_SCHEMA, variables }, "canon");
  }

  async #writeIndex(projection: FleetProjection): Promise<void> {
    await writeFileAtomic(this.paths.indexPath, this.indexBytes(projection), { mode: 0o644 });
  }

  /**
   * Compares the index with the chain. The chain is authoritative, so a difference changes no
   * answer; it is a warning here and a failure of `bernstein audit verify`.
   */
  async indexProblem(projection: FleetProjection): Promise<string | undefined> {
    const onDisk = await readFileIfExists(this.paths.indexPath);
    const expected = this.indexBytes(projection);
    if (onDisk === undefined) {
      return projection.variables.size === 0 ? undefined : "the name index is missing";
    }
    if (onDisk.length === expected.length && onDisk.every((b, i) => b === expected[i])) {
      return undefined;
    }
    let detail = "";
    try {
      const parsed = parseJsonBytes(onDisk);
      const listed = isJsonObject(parsed) ? parsed.variables : undefined;
      const names = isJsonObject(listed) ? Object.keys(listed) : [];
      detail = ` (it lists ${names.length} variable(s))`;
    } catch {
      detail = " (it is not JSON)";
    }
    return `the name index does not match the chain${detail}`;
  }

  async #checkIndex(projection: FleetProjection): Promise<void> {
    const problem = await this.indexProblem(projection);
    if (problem !== undefined) {
      this.#warn(
        "fleet.index_tampered",
        `${problem}; answers come from the chain (${this.paths.indexPath})`,
      );
    }
  }

  #warn(code: ErrorCode, message: string): void {
    if (!this.warnings.some((w) => w.code === code)) this.warnings.push({ code, message });
  }
}

function unknownVariable(name: string, projection: FleetProjection): FleetError {
  const known = [...projection.variables.values()].filter((h) => headWrite(h)).map((h) => h.name);
  return new FleetError("fleet.unknown_name", `no variable '${name}'`, {
    hint: known.length === 0
      ? "'bernstein var set NAME VALUE' creates one"
      : `known: ${known.sort().slice(0, 10).join(", ")}`,
  });
}
