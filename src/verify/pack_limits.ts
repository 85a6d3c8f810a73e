// The verifier's size limits for a pack (`bernstein-verify pack`): per kind of member, for the
// archive, the member count and the names, enforced from the central directory before anything
// is inflated. The verifier's policy, not the format's: the builder writes far below them.
import { type PackMemberKind, packMemberKind } from "../pack_format/mod.ts";
import type { ZipLimits } from "./zip_reader.ts";

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** The fixed size limits of `bernstein-verify pack` (bytes, uncompressed unless noted). */
export const PACK_LIMITS = {
  /** The archive file itself (ZIP64 is not accepted, so it is below 4 GiB anyway). */
  archive: 4 * GiB - 1,
  /** Members in the archive. */
  members: 2_000_000,
  /** One member name. */
  nameBytes: 512,
  /** All members together. */
  total: 4 * GiB - 1,
  /** Per kind of member. */
  member: {
    readme: 1 * MiB,
    instructions: 1 * MiB,
    csv: 2 * GiB - 1,
    log: 2 * GiB - 1,
    operatorKey: 4 * KiB,
    manifest: 256 * MiB,
    manifestSignature: 4 * KiB,
    signature: 4 * KiB,
    card: 64 * KiB,
    checkpoint: 1 * MiB,
    inclusion: 256 * MiB,
    attestation: 64 * KiB,
    // An attested file is read up to 64 MiB; the events and lineage of one run stay below.
    attachment: 256 * MiB,
    fleet: 256 * MiB,
  } satisfies Record<PackMemberKind, number>,
  /** Members of unknown kind are refused anyway; this bounds what is read to name them. */
  unknown: 64 * KiB,
} as const;

/**
 * {@linkcode PACK_LIMITS} as the ZIP reader takes them. `kinds`, when given, receives each
 * member's kind at its index as the reader sizes it, so the caller need not name a pack's
 * 100 000s of members a second time.
 */
export function packZipLimits(
  limits: typeof PACK_LIMITS = PACK_LIMITS,
  kinds?: (PackMemberKind | undefined)[],
): ZipLimits {
  return {
    maxArchiveBytes: limits.archive,
    maxMembers: limits.members,
    maxNameBytes: limits.nameBytes,
    maxTotalBytes: limits.total,
    maxMemberBytes: (name, index) => {
      const kind = packMemberKind(name);
      if (kinds !== undefined) kinds[index] = kind;
      return kind === undefined ? limits.unknown : limits.member[kind];
    },
  };
}
