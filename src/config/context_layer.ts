// The operating-context layer (docs/FLEET.md): when `bernstein ctx use NAME` made a context
// active, its settings are one configuration layer between `.sdd/config.yaml` and the project
// file. This file owns the context document's bytes and hash (the fleet plane writes them, the
// loader reads them) so both sides agree byte for byte.
import { join } from "node:path";
import { canonicalBytes, type JsonObject, parseJsonBytes, toHex } from "../canonical/mod.ts";
import { sha256 } from "../crypto/mod.ts";
import { readFileIfExists } from "../io/mod.ts";
import { ConfigError } from "./errors.ts";
import { isPlainObject } from "./merge.ts";
import { objectLayer, type YamlLayer } from "./yaml_layer.ts";

/** Where contexts live, relative to `.sdd/`. */
export const CONTEXTS_DIR = "fleet/contexts";
/** The active context's pointer, relative to `.sdd/`. */
export const ACTIVE_CONTEXT_FILE = "fleet/contexts/active.json";
/** The context document's schema tag. */
export const CONTEXT_SCHEMA = "bernstein-fleet-context/v1";

/** The canonical document of a context: what is stored, hashed and compared across installs. */
export function contextDocumentBytes(name: string, settings: JsonObject): Uint8Array {
  return canonicalBytes({ name, schema: CONTEXT_SCHEMA, settings }, "canon");
}

/** `sha256:` + hex SHA-256 of a context document's bytes: its settings hash. */
export function contextSettingsHash(bytes: Uint8Array): string {
  return `sha256:${toHex(sha256(bytes))}`;
}

/** The path of context `name`'s document under `sdd`. */
export function contextDocumentPath(sdd: string, name: string): string {
  return join(sdd, CONTEXTS_DIR, `${name}.json`);
}

/** The active context as the pointer file names it (name null: none). */
export interface ActiveContext {
  /** The context's name, or null after `ctx use --none`. */
  name: string | null;
  /** The document hash it was activated with ("" for none). */
  settings_hash: string;
}

function tampered(path: string, message: string): ConfigError {
  return new ConfigError("fleet.context_tampered", message, {
    location: path,
    hint: "'bernstein ctx use NAME' (or --none) activates a context again",
  });
}

/** A fleet file's bytes and JSON (undefined when missing); not JSON is `fleet.context_tampered`. */
async function readJsonFile(
  path: string,
): Promise<{ bytes: Uint8Array; value: unknown } | undefined> {
  const bytes = await readFileIfExists(path);
  if (bytes === undefined) return undefined;
  try {
    return { bytes, value: parseJsonBytes(bytes) };
  } catch (error) {
    throw tampered(path, `not JSON: ${(error as Error).message}`);
  }
}

/** Reads `active.json` (undefined when there is none). Malformed is `fleet.context_tampered`. */
export async function readActiveContext(sdd: string): Promise<ActiveContext | undefined> {
  const path = join(sdd, ACTIVE_CONTEXT_FILE);
  const read = await readJsonFile(path);
  if (read === undefined) return undefined;
  const v = read.value;
  if (
    !isPlainObject(v) || !(v.name === null || typeof v.name === "string") ||
    typeof v.settings_hash !== "string"
  ) {
    throw tampered(path, "expected {name, settings_hash}");
  }
  return { name: v.name as string | null, settings_hash: v.settings_hash };
}

/** A context document read and checked against its name. */
export interface ContextDocument {
  /** The name. */
  name: string;
  /** Its settings (a configuration layer). */
  settings: JsonObject;
  /** Its canonical bytes. */
  bytes: Uint8Array;
  /** Its settings hash. */
  settings_hash: string;
}

/** Reads context `name` (undefined when missing); a malformed file is `fleet.context_tampered`. */
export async function readContextDocument(
  sdd: string,
  name: string,
): Promise<ContextDocument | undefined> {
  const path = contextDocumentPath(sdd, name);
  const read = await readJsonFile(path);
  if (read === undefined) return undefined;
  const { bytes, value: v } = read;
  if (!isPlainObject(v) || v.name !== name || !isPlainObject(v.settings)) {
    throw tampered(path, `expected a context document named '${name}'`);
  }
  const settings = v.settings as JsonObject;
  const canonical = contextDocumentBytes(name, settings);
  if (canonical.length !== bytes.length || canonical.some((b, i) => b !== bytes[i])) {
    throw tampered(path, "not in canonical form (the file was edited by hand)");
  }
  return { name, settings, bytes, settings_hash: contextSettingsHash(bytes) };
}

/**
 * The active context's configuration layer (label `context:<name>`), or undefined with none
 * active. The document must still hash to what it was activated with.
 */
export async function activeContextLayer(
  sdd: string,
): Promise<{ layer: YamlLayer; context: ContextDocument } | undefined> {
  const active = await readActiveContext(sdd);
  if (active === undefined || active.name === null) return undefined;
  const doc = await readContextDocument(sdd, active.name);
  const path = contextDocumentPath(sdd, active.name);
  if (doc === undefined) {
    throw tampered(path, `the active context '${active.name}' has no document`);
  }
  if (doc.settings_hash !== active.settings_hash) {
    throw tampered(
      path,
      `context '${active.name}' hashes to ${doc.settings_hash}, but was activated as ${active.settings_hash}`,
    );
  }
  const label = `context:${active.name}`;
  return {
    layer: { ...objectLayer(label, doc.settings as Record<string, unknown>), locate: () => path },
    context: doc,
  };
}
