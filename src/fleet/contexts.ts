// Operating contexts (docs/FLEET.md): a named configuration layer — server URL, store DSN and
// any other keys — stored as one canonical document, activated atomically (`active.json`
// written by rename) and recorded on the chain with its settings hash, so two installs with
// the same content have the same hash and a run's configuration identity can be recomputed.
import type { AuditKey } from "../audit/mod.ts";
import { AuditLog } from "../audit/mod.ts";
import { canonicalBytes, type JsonObject } from "../canonical/mod.ts";
import {
  type ActiveContext,
  type ContextDocument,
  contextDocumentBytes,
  contextDocumentPath,
  contextSettingsHash,
  objectLayer,
  parseConfigKey,
  parseConfigValue,
  readActiveContext,
  readContextDocument,
  redactUrlPassword,
  setPath,
  validateLayer,
} from "../config/mod.ts";
import { sddFolder, withFileLock, writeFileAtomic } from "../io/mod.ts";
import { FleetError } from "./errors.ts";
import { CONTEXT_ACTIVATE, CONTEXT_CREATE } from "./events.ts";
import { checkFleetName } from "./names.ts";
import { type FleetPaths, fleetPaths } from "./paths.ts";

/** What `ctx create` takes. */
export interface ContextInput {
  /** `--server-url`: the orchestrator URL workers connect to (`workers.url`). */
  serverUrl?: string;
  /** `--store-dsn`: the shared task store (`storage.database_url`). */
  storeDsn?: string;
  /** `--set key=value`: any configuration key (value parsed as YAML, like `config set`). */
  set?: readonly string[];
}

/**
 * The settings object of a context: the flags as configuration keys, checked against the
 * configuration schema (an unknown key or a bad value is `fleet.bad_setting`, exit 2).
 */
export async function contextSettings(input: ContextInput): Promise<JsonObject> {
  let settings: Record<string, unknown> = {};
  const put = (dotted: string, value: unknown) => {
    settings = setPath(settings, parseConfigKey(dotted), value);
  };
  if (input.serverUrl !== undefined) put("workers.url", input.serverUrl);
  if (input.storeDsn !== undefined) put("storage.database_url", input.storeDsn);
  for (const pair of input.set ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      throw new FleetError("fleet.bad_setting", `--set '${pair}' is not key=value`, {
        hint: "--set tuning.agent.max_turns=40",
      });
    }
    put(pair.slice(0, eq), await parseConfigValue(pair.slice(eq + 1)));
  }
  const checked = validateLayer(objectLayer("context", settings));
  const error = checked.problems.find((p) => p.severity === "error");
  if (error !== undefined) {
    throw new FleetError("fleet.bad_setting", `${error.location ?? "context"}: ${error.message}`);
  }
  // Through canonical JSON once: what is hashed is exactly what is stored.
  canonicalBytes(settings as JsonObject, "canon");
  return settings as JsonObject;
}

/** A context as `ctx show` / `ctx list` report it (store DSN passwords redacted). */
export interface ContextView {
  /** The name. */
  name: string;
  /** Its settings hash. */
  settings_hash: string;
  /** Its settings, with URL passwords replaced by `***`. */
  settings: JsonObject;
  /** True when it is the active context. */
  active: boolean;
}

function redacted(settings: JsonObject): JsonObject {
  const copy = structuredClone(settings) as Record<string, unknown>;
  const storage = copy.storage as Record<string, unknown> | undefined;
  for (const key of ["database_url", "redis_url"]) {
    if (storage !== undefined && typeof storage[key] === "string") {
      storage[key] = redactUrlPassword(storage[key] as string);
    }
  }
  return copy as JsonObject;
}

/** The contexts of one project. */
export class ContextStore {
  /** Paths of the fleet plane. */
  readonly paths: FleetPaths;
  readonly #sdd: string;
  readonly #key: AuditKey;

  constructor(options: { sdd: string; auditKey: AuditKey }) {
    this.#sdd = options.sdd;
    this.paths = fleetPaths(options.sdd);
    this.#key = options.auditKey;
  }

  async #record(event_type: string, name: string | null, settingsHash: string, actor: string) {
    const log = new AuditLog(sddFolder(this.#sdd, "audit"), this.#key);
    try {
      await log.append({
        actor,
        event_type,
        resource_type: "fleet_context",
        resource_id: name ?? "",
        details: { name, settings_hash: settingsHash },
      });
    } finally {
      await log.close();
    }
  }

  /** Writes context `name` (refused when it exists, unless `replace`); records it. */
  async create(
    name: string,
    settings: JsonObject,
    options: { replace?: boolean; actor?: string } = {},
  ): Promise<ContextView> {
    checkFleetName(name, "context");
    const bytes = contextDocumentBytes(name, settings);
    const hash = contextSettingsHash(bytes);
    await Deno.mkdir(this.paths.contextsDir, { recursive: true, mode: 0o755 });
    return await withFileLock(this.paths.lock, async () => {
      const existing = await readContextDocument(this.#sdd, name).catch(() => undefined);
      const exists = await Deno.lstat(contextDocumentPath(this.#sdd, name)).then(
        () => true,
        () => false,
      );
      if (exists && !options.replace) {
        throw new FleetError("fleet.exists", `context '${name}' exists`, {
          hint: "--replace writes it again (and re-activates it when it is active)",
        });
      }
      await writeFileAtomic(contextDocumentPath(this.#sdd, name), bytes, { mode: 0o600 });
      const actor = options.actor ?? "operator";
      await this.#record(CONTEXT_CREATE, name, hash, actor);
      const active = await readActiveContext(this.#sdd).catch(() => undefined);
      const isActive = active?.name === name;
      if (isActive && existing?.settings_hash !== hash) await this.#activate(name, hash, actor);
      return { name, settings_hash: hash, settings: redacted(settings), active: isActive };
    });
  }

  async #activate(name: string | null, hash: string, actor: string): Promise<void> {
    const pointer: ActiveContext = { name, settings_hash: hash };
    // Rename over the old pointer: a reader sees the old context or the new one, never half.
    await writeFileAtomic(
      this.paths.activeContext,
      canonicalBytes(pointer, "canon"),
      { mode: 0o644 },
    );
    await this.#record(CONTEXT_ACTIVATE, name, hash, actor);
  }

  /** Makes `name` active (null: none); an unknown name is `fleet.unknown_context`. */
  async use(name: string | null, actor = "operator"): Promise<ContextView | null> {
    if (name !== null) checkFleetName(name, "context");
    await Deno.mkdir(this.paths.contextsDir, { recursive: true, mode: 0o755 });
    return await withFileLock(this.paths.lock, async () => {
      if (name === null) {
        await this.#activate(null, "", actor);
        return null;
      }
      const doc = await readContextDocument(this.#sdd, name);
      if (doc === undefined) throw await this.#unknown(name);
      await this.#activate(name, doc.settings_hash, actor);
      return this.#view(doc, true);
    });
  }

  async #unknown(name: string): Promise<FleetError> {
    const known = (await this.names()).join(", ");
    return new FleetError("fleet.unknown_context", `no context '${name}'`, {
      hint: known === "" ? "'bernstein ctx create NAME …' creates one" : `known: ${known}`,
    });
  }

  #view(doc: ContextDocument, active: boolean): ContextView {
    return {
      name: doc.name,
      settings_hash: doc.settings_hash,
      settings: redacted(doc.settings),
      active,
    };
  }

  /** Names of the stored contexts, sorted. */
  async names(): Promise<string[]> {
    const out: string[] = [];
    try {
      for await (const e of Deno.readDir(this.paths.contextsDir)) {
        if (e.isFile && e.name.endsWith(".json") && e.name !== "active.json") {
          out.push(e.name.slice(0, -5));
        }
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return out.sort();
  }

  /** The active context (undefined: none). Its document must still match its activation. */
  async active(): Promise<ContextView | undefined> {
    const active = await readActiveContext(this.#sdd);
    if (active === undefined || active.name === null) return undefined;
    const doc = await readContextDocument(this.#sdd, active.name);
    if (doc === undefined || doc.settings_hash !== active.settings_hash) {
      throw new FleetError(
        "fleet.context_tampered",
        doc === undefined
          ? `the active context '${active.name}' has no document`
          : `context '${active.name}' hashes to ${doc.settings_hash}, but was activated as ${active.settings_hash}`,
        { location: contextDocumentPath(this.#sdd, active.name) },
      );
    }
    return this.#view(doc, true);
  }

  /** One context by name. */
  async show(name: string): Promise<ContextView> {
    checkFleetName(name, "context");
    const doc = await readContextDocument(this.#sdd, name);
    if (doc === undefined) throw await this.#unknown(name);
    const active = await readActiveContext(this.#sdd).catch(() => undefined);
    return this.#view(doc, active?.name === name);
  }

  /** Every context. */
  async list(): Promise<ContextView[]> {
    const active = await readActiveContext(this.#sdd).catch(() => undefined);
    const out: ContextView[] = [];
    for (const name of await this.names()) {
      const doc = await readContextDocument(this.#sdd, name);
      if (doc !== undefined) out.push(this.#view(doc, active?.name === name));
    }
    return out;
  }
}
