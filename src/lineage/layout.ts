// Where each piece of `.sdd/lineage/` lives (FORMATS.md §4), as POSIX paths relative to the
// lineage folder. Pure string functions shared by the store (writer) and the verifier (reader).
import { sha256Hex } from "../crypto/mod.ts";

const encoder = new TextEncoder();

/** The append-only log, relative to the lineage folder. */
export const LOG_FILE = "log.jsonl";

/** Hex SHA-256 of the UTF-8 artefact key (`H` in FORMATS.md §4). */
export function artefactDigest(artefactPath: string): string {
  return sha256Hex(encoder.encode(artefactPath));
}

/** `by-artefact/<aa>/<H>.jsonl`: the log lines of one artefact. */
export function byArtefactPath(artefactPath: string): string {
  const h = artefactDigest(artefactPath);
  return `by-artefact/${h.slice(0, 2)}/${h}.jsonl`;
}

/** `tips/<H>.json`: the open and merged tips of one artefact. */
export function tipsPath(artefactPath: string): string {
  return `tips/${artefactDigest(artefactPath)}.json`;
}

/** `signatures/<aa>/<H>/<entry-hex>.jws`: the detached JWS of one entry. */
export function signaturePath(artefactPath: string, entryHash: string): string {
  const h = artefactDigest(artefactPath);
  const hex = entryHash.startsWith("sha256:") ? entryHash.slice(7) : entryHash;
  return `signatures/${h.slice(0, 2)}/${h}/${hex}.jws`;
}

/** The folder of foreign attestations, relative to the lineage folder. */
export const ATTESTATIONS_DIR = "attestations";

/**
 * `attestations/<aa>/<H>/<entry-hex>/<attestation-hex>.json`: a foreign attestation of one
 * entry, named by the SHA-256 of its `canon` bytes (so importing it twice stores it once).
 */
export function attestationPath(
  artefactPath: string,
  entryHash: string,
  attestationHex: string,
): string {
  const h = artefactDigest(artefactPath);
  const hex = entryHash.startsWith("sha256:") ? entryHash.slice(7) : entryHash;
  return `${ATTESTATIONS_DIR}/${h.slice(0, 2)}/${h}/${hex}/${attestationHex}.json`;
}
