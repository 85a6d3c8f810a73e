// Importing foreign attestations (FORMATS.md §9): an envelope another system issued is stored
// beside the lineage record it names, content-addressed, and never touches the log. The record
// is the one the envelope is about: `--entry`, or the latest entry of its claimed subject with
// its content hash.
import { join } from "node:path";
import { canonicalBytes, type JsonValue, parseJsonBytes } from "../../canonical/mod.ts";
import { sha256Hex } from "../../crypto/mod.ts";
import { BernsteinError, type BernsteinErrorOptions } from "../../errors/mod.ts";
import { writeFileIfAbsent } from "../../io/mod.ts";
import { attestationPath, isEntryHash, parseForeignAttestation } from "../mod.ts";
import type { LineageStore, LoggedEntry } from "./store.ts";

/** What {@linkcode importAttestation} stored. */
export interface ImportedAttestation {
  /** The entry it sits beside. */
  entryHash: string;
  /** Its artefact. */
  artefact: string;
  /** Where it was stored, relative to the lineage folder. */
  path: string;
  /** False when the same attestation was already stored. */
  created: boolean;
  /** Its issuer, for messages. */
  issuer: string;
  /** Its envelope format. */
  format: string;
}

/** An attestation that cannot be imported. */
export class AttestationImportError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("lineage.attestation_invalid", message, options);
  }
}

/**
 * Stores the attestation `bytes` (JSON) beside the record it names: the entry `entry` when
 * given (it must be of the claimed subject), else the latest entry of `claimed_subject` whose
 * content is the attested `content_hash`. The file holds the attestation's `canon` bytes and is
 * named by their SHA-256.
 */
export async function importAttestation(
  store: LineageStore,
  bytes: Uint8Array,
  options: { entry?: string; source?: string } = {},
): Promise<ImportedAttestation> {
  const source = options.source ?? "attestation";
  let value: JsonValue;
  try {
    value = parseJsonBytes(bytes);
  } catch (error) {
    throw new AttestationImportError(`${source}: not JSON: ${(error as Error).message}`);
  }
  const parsed = parseForeignAttestation(value);
  if (!parsed.ok) {
    throw new AttestationImportError(`${source}: malformed attestation: ${parsed.problem}`);
  }
  const a = parsed.attestation;
  if (options.entry !== undefined && !isEntryHash(options.entry)) {
    throw new AttestationImportError(`--entry ${options.entry} is not sha256: + 64 hex`, {
      exitCode: 2,
    });
  }
  let record: LoggedEntry | undefined;
  for await (const e of store.entries()) {
    if (options.entry !== undefined) {
      if (e.hash === options.entry) record = e;
    } else if (
      e.entry.artefact_path === a.claimed_subject && e.entry.content_hash === a.content_hash
    ) {
      record = e;
    }
  }
  if (record === undefined) {
    throw new AttestationImportError(
      options.entry !== undefined
        ? `no lineage entry ${options.entry}`
        : `no lineage entry of ${JSON.stringify(a.claimed_subject)} has content ${a.content_hash}`,
      { hint: "'bernstein lineage chain <artefact>' lists the entries; name one with --entry" },
    );
  }
  if (record.entry.artefact_path !== a.claimed_subject) {
    throw new AttestationImportError(
      `${source} is about ${JSON.stringify(a.claimed_subject)}, entry ${record.hash} is of ${
        JSON.stringify(record.entry.artefact_path)
      }`,
    );
  }
  const canon = canonicalBytes(value, "canon");
  const path = attestationPath(record.entry.artefact_path, record.hash, sha256Hex(canon));
  const full = join(store.paths.lineageDir, path);
  await Deno.mkdir(join(full, ".."), { recursive: true, mode: 0o755 });
  const created = await writeFileIfAbsent(full, canon, { mode: 0o644 });
  return {
    entryHash: record.hash,
    artefact: record.entry.artefact_path,
    path,
    created,
    issuer: a.issuer,
    format: a.envelope.format as string,
  };
}
