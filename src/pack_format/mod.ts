/**
 * The compliance pack format (FORMATS.md §5), one owner for the builder (`src/compliance`) and
 * the verifier (`src/verify`), as sigstore-js shares its bundle package between signer and
 * verifier: the member names and kinds, the manifest's fields, output hash and strict parse,
 * the operator block and the kid its JWS header names, the evidence CSV, the period of UTC
 * days, the Article 12 figures a window's log supports, the fleet-events lines and the ZIP
 * records a pack is made of. Pure: no I/O, and part of the read-only verifier's module set.
 *
 * @example
 * ```ts
 * import { PACK_MEMBERS, packMemberKind, signatureMemberName } from "./mod.ts";
 * const name = signatureMemberName("sha256:" + "ab".repeat(32));
 * if (packMemberKind(name) !== "signature") throw new Error(name);
 * if (packMemberKind(PACK_MEMBERS.manifest) !== "manifest") throw new Error("manifest");
 * ```
 *
 * @module
 */
export { csvHeader, csvRow } from "./csv.ts";
export { PACK_FLEET_EVENT_TYPES, type PackFleetEvent, packFleetLine } from "./fleet_line.ts";
export { type InputHashes } from "./input_hashes.ts";
export {
  article12LogFigures,
  article12Mismatches,
  type FactFields,
  type LogFacts,
  LogFactsCollector,
} from "./log_facts.ts";
export {
  checkManifestBytes,
  MANIFEST_FIELDS,
  type ManifestBaseField,
  manifestOutputHash,
  PACK_FORMAT_VERSION,
  PACK_SCHEMA,
  type PackManifest,
  parsePackManifest,
} from "./manifest.ts";
export {
  attachmentMemberName,
  attachmentMemberParts,
  attestationMemberName,
  attestationMemberParts,
  cardMemberName,
  isManifestMember,
  memberSegment,
  PACK_CHECKPOINT_MEMBER,
  PACK_FLEET_MEMBER,
  PACK_INCLUSION_MEMBER,
  PACK_MEMBERS,
  type PackMemberKind,
  packMemberKind,
  signatureMemberDigestInto,
  signatureMemberHash,
  signatureMemberName,
} from "./members.ts";
export { normalizeFingerprint, operatorBlock, operatorFingerprint } from "./operator.ts";
export { isoOfNs, type PackWindow, packWindow, utcDay } from "./period.ts";
export {
  ZIP64_END_LEN,
  ZIP64_END_SIG,
  ZIP64_LOCATOR_LEN,
  ZIP64_LOCATOR_SIG,
  ZIP_CENTRAL_LEN,
  ZIP_CENTRAL_SIG,
  ZIP_END_LEN,
  ZIP_END_SIG,
  ZIP_FLAG_ENCRYPTED,
  ZIP_FLAG_STRONG_ENCRYPTION,
  ZIP_FLAG_UTF8,
  ZIP_LOCAL_LEN,
  ZIP_LOCAL_SIG,
  ZIP_METHOD_DEFLATE,
  ZIP_METHOD_STORED,
} from "./zip_layout.ts";
