// The members of a compliance pack (FORMATS.md §5): the fixed names, what kind each name is,
// and how the per-entry, per-card, per-attestation and per-attachment names are made and read
// back. Shared by the builder (src/compliance), which names members, and the verifier, which
// refuses any name no pack holds. Pure.
import { hexDigestInto } from "../lineage/mod.ts";

/** `fleet-events.jsonl`: the window's fleet events (FORMATS.md §5 and §12), when it has any. */
export const PACK_FLEET_MEMBER = "fleet-events.jsonl";

/** The fixed members of a pack (signatures and agent cards come on top). */
export const PACK_MEMBERS = {
  readme: "README.md",
  instructions: "verify-instructions.md",
  csv: "article12-evidence.csv",
  log: "lineage-log.jsonl",
  operatorKey: "operator.pub",
  manifest: "pack-manifest.json",
  manifestSignature: "pack-manifest.json.sig",
} as const;

/** The checkpoint document a pack carries (pack format 3, FORMATS.md §8). */
export const PACK_CHECKPOINT_MEMBER = "checkpoint.json";

/** The batch inclusion proof of the window's entries in that checkpoint (pack format 3). */
export const PACK_INCLUSION_MEMBER = "inclusion-proof.json";

/**
 * True for the manifest and its signature: the two members the manifest's `input_hashes`
 * never lists (the manifest cannot hash itself, and its signature is made after it).
 */
export function isManifestMember(name: string): boolean {
  return name === PACK_MEMBERS.manifest || name === PACK_MEMBERS.manifestSignature;
}

/** What a member of a pack is, by its name. */
export type PackMemberKind =
  | keyof typeof PACK_MEMBERS
  | "signature"
  | "card"
  | "checkpoint"
  | "inclusion"
  | "attestation"
  | "attachment"
  | "fleet";

const FIXED = new Map<string, PackMemberKind>([
  ...Object.entries(PACK_MEMBERS).map(([kind, name]) => [name, kind as PackMemberKind] as const),
  [PACK_CHECKPOINT_MEMBER, "checkpoint"],
  [PACK_INCLUSION_MEMBER, "inclusion"],
  [PACK_FLEET_MEMBER, "fleet"],
]);
const ATTESTATION_MEMBER = /^attestations\/([0-9a-f]{64})\/([0-9a-f]{64})\.json$/;
const ATTACHMENT_MEMBER =
  /^attachments\/([A-Za-z0-9._-]+)\/(manifest\.json|events\.jsonl|lineage\.jsonl|bytes\/[0-9a-f]{64})$/;

/** Folder of a run's attachment export inside a pack (`--with-attachments`, FORMATS.md §7.1). */
export function attachmentMemberName(runId: string, file: string): string {
  return `attachments/${memberSegment(runId)}/${file}`;
}

/** The run folder and the file inside it of an attachment member name. */
export function attachmentMemberParts(name: string): { run: string; file: string } | undefined {
  const m = ATTACHMENT_MEMBER.exec(name);
  if (m === null || m[1] === "." || m[1] === "..") return undefined;
  return { run: m[1], file: m[2] };
}
const SAFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

function safeSegment(s: string): boolean {
  return SAFE_SEGMENT.test(s) && s !== "." && s !== "..";
}

/** `signatures/<64 lowercase hex>.jws`, checked without a regex run. */
function isSignatureMember(name: string): boolean {
  if (name.length !== 79 || !name.startsWith("signatures/") || !name.endsWith(".jws")) {
    return false;
  }
  for (let i = 11; i < 75; i++) {
    const c = name.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** The kind of a member name, or undefined when no pack holds such a member. */
export function packMemberKind(name: string): PackMemberKind | undefined {
  // A pack has one signature member per entry: this test runs 100 000s of times, and first,
  // so such a name is never hashed for the map below (no fixed name has their form).
  if (isSignatureMember(name)) return "signature";
  const fixed = FIXED.get(name);
  if (fixed !== undefined) return fixed;
  if (ATTESTATION_MEMBER.test(name)) return "attestation";
  if (attachmentMemberParts(name) !== undefined) return "attachment";
  const parts = name.split("/");
  if (
    parts.length === 3 && parts[0] === "agent-cards" && safeSegment(parts[1]) &&
    parts[2].endsWith(".json") && safeSegment(parts[2].slice(0, -5))
  ) {
    return "card";
  }
  return undefined;
}

/**
 * `attestations/<entry-hex>/<attestation-hex>.json`: a foreign attestation of one entry inside
 * a pack (FORMATS.md §9), named by the SHA-256 of its bytes.
 */
export function attestationMemberName(entryHash: string, attestationHex: string): string {
  return `attestations/${
    entryHash.startsWith("sha256:") ? entryHash.slice(7) : entryHash
  }/${attestationHex}.json`;
}

/** The entry hash and attestation hex of an attestation member name. */
export function attestationMemberParts(
  name: string,
): { entryHash: string; hex: string } | undefined {
  const m = ATTESTATION_MEMBER.exec(name);
  return m === null ? undefined : { entryHash: `sha256:${m[1]}`, hex: m[2] };
}

/** `signatures/<entry-hex>.jws`: the detached JWS of one entry inside a pack. */
export function signatureMemberName(entryHash: string): string {
  return `signatures/${entryHash.startsWith("sha256:") ? entryHash.slice(7) : entryHash}.jws`;
}

/** The entry hash (`sha256:` hex) a signature member name is for, or undefined when it is none. */
export function signatureMemberHash(name: string): string | undefined {
  return isSignatureMember(name) ? `sha256:${name.slice(11, 75)}` : undefined;
}

/**
 * Writes the entry digest a signature member name is for (its 32 bytes) into `out` at `at`;
 * false, leaving `out` undefined, when the name is no signature member. The same names as
 * {@linkcode signatureMemberHash}, with no string made: a pack has a member per entry.
 */
export function signatureMemberDigestInto(name: string, out: Uint8Array, at = 0): boolean {
  return name.length === 79 && name.startsWith("signatures/") && name.endsWith(".jws") &&
    hexDigestInto(name, 11, out, at);
}

/** A name segment safe in a member name: every character outside `[A-Za-z0-9._-]` → `_`. */
export function memberSegment(text: string): string {
  const s = text.replace(/[^A-Za-z0-9._-]/gu, "_");
  return s === "" || s === "." || s === ".." ? `_${s}` : s;
}

/** `agent-cards/<dir>/<kid>.json` (both parts sanitised like card folders). */
export function cardMemberName(agentId: string, kid: string): string {
  return `agent-cards/${memberSegment(agentId)}/${memberSegment(kid)}.json`;
}
