// The operator signing key: Ed25519, PKCS#8 PEM at `.sdd/keys/operator.key` (mode 0600),
// created by `bernstein init` or the first pack. It signs pack manifests and log checkpoints;
// its public half is published at `.sdd/keys/operator.pub` and travels in every pack as
// `operator.pub`, and its fingerprint goes to auditors out of band.
import { join } from "node:path";
import {
  type CheckpointSigner,
  decodePrivateKeyPem,
  decodePublicKeyPem,
  ed25519KeyPairFromSeed,
  encodePrivateKeyPem,
  encodePublicKeyPem,
} from "../../crypto/mod.ts";
import { BernsteinError, KeyMissingError } from "../../errors/mod.ts";
import {
  type Random,
  readFileIfExists,
  readSecretFile,
  sddFolder,
  writeFileAtomic,
  writeFileIfAbsent,
} from "../../io/mod.ts";
import { kidForPublicKey } from "../../lineage/mod.ts";
import { operatorFingerprint } from "../../pack_format/mod.ts";
import type { OperatorSigner } from "../mod.ts";

/** Where the operator signing key lives, relative to `.sdd/`. */
export const OPERATOR_KEY_FILE = "keys/operator.key";

/** Where its public half is published (SPKI PEM), relative to `.sdd/`. */
export const OPERATOR_PUBLIC_KEY_FILE = "keys/operator.pub";

/** An operator signing key that exists but cannot be used. */
export class OperatorKeyError extends BernsteinError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super("compliance.operator_key_invalid", message, options);
  }
}

/** A loaded operator signing key. */
export interface LoadedOperatorKey {
  /** The key pair. */
  signer: OperatorSigner;
  /** The file it came from. */
  path: string;
  /** True when this call created it. */
  created: boolean;
  /** Hex SHA-256 of the public key's SPKI DER (what auditors pin). */
  fingerprint: string;
}

/**
 * Reads an Ed25519 PKCS#8 PEM private key under src/io's secret-file policy (`secret.*`: not a
 * symlink, a regular file, not readable by group or others). A missing file is a
 * {@linkcode KeyMissingError} (exit 3).
 */
export async function readOperatorSigningKey(path: string): Promise<LoadedOperatorKey> {
  const pem = await readSecretFile(path, { what: "operator key" });
  if (pem === undefined) {
    throw new KeyMissingError("compliance.operator_key_missing", `no operator key at ${path}`, {
      hint: "'bernstein init' creates .sdd/keys/operator.key; or pass --operator-key PEM",
    });
  }
  let seed: Uint8Array;
  try {
    seed = decodePrivateKeyPem(new TextDecoder().decode(pem));
  } catch (cause) {
    throw new OperatorKeyError(`${path} is not an Ed25519 PKCS#8 PEM private key`, { cause });
  }
  const pair = ed25519KeyPairFromSeed(seed);
  return {
    signer: { seed: pair.seed, publicKey: pair.publicKey },
    path,
    created: false,
    fingerprint: operatorFingerprint(pair.publicKey),
  };
}

/**
 * The project's operator signing key, created (exclusively, mode 0600, in a 0700 folder) when
 * missing. Two processes racing both end up with the one key that won.
 */
export async function ensureOperatorSigningKey(
  sdd: string,
  random: Random,
): Promise<LoadedOperatorKey> {
  const path = join(sdd, OPERATOR_KEY_FILE);
  try {
    const loaded = await readOperatorSigningKey(path);
    await publishOperatorPublicKey(sdd, loaded.signer.publicKey);
    return loaded;
  } catch (error) {
    if (!(error instanceof KeyMissingError)) throw error;
  }
  await Deno.mkdir(sddFolder(sdd, "keys"), { recursive: true, mode: 0o700 });
  const pair = ed25519KeyPairFromSeed(random.bytes(32));
  const created = await writeFileIfAbsent(path, encodePrivateKeyPem(pair.seed), { mode: 0o600 });
  const loaded = await readOperatorSigningKey(path);
  await publishOperatorPublicKey(sdd, loaded.signer.publicKey);
  return { ...loaded, created };
}

/**
 * Writes `.sdd/keys/operator.pub` (mode 0644) when it is missing or is not this key: it is
 * derived from the signing key, which stays authoritative. Verifiers of a copied `.sdd/` use
 * it when no key is pinned (and say so).
 */
export async function publishOperatorPublicKey(sdd: string, publicKey: Uint8Array): Promise<void> {
  const path = join(sdd, OPERATOR_PUBLIC_KEY_FILE);
  const pem = new TextEncoder().encode(encodePublicKeyPem(publicKey));
  const existing = await readFileIfExists(path);
  if (
    existing !== undefined && existing.length === pem.length &&
    existing.every((b, i) => b === pem[i])
  ) {
    return;
  }
  await writeFileAtomic(path, pem, { mode: 0o644 });
}

/** The operator public key a project's checks use, and where it came from. */
export interface ProjectOperatorPublicKey {
  /** The key, when one was found. */
  publicKey?: Uint8Array;
  /** `project operator key`, the published `.sdd/keys/operator.pub`, or `none`. */
  source: string;
}

/**
 * The operator public key checkpoint signatures of a project are checked with: the project's
 * operator key, else its published `.sdd/keys/operator.pub`; none when there is neither.
 * Never creates a key.
 */
export async function projectOperatorPublicKey(sdd: string): Promise<ProjectOperatorPublicKey> {
  try {
    const key = await readOperatorSigningKey(join(sdd, OPERATOR_KEY_FILE));
    return { publicKey: key.signer.publicKey, source: "project operator key" };
  } catch (error) {
    if (!(error instanceof KeyMissingError)) throw error;
  }
  const published = join(sdd, OPERATOR_PUBLIC_KEY_FILE);
  const pem = await readFileIfExists(published);
  if (pem === undefined) return { source: "none" };
  try {
    return { publicKey: decodePublicKeyPem(new TextDecoder().decode(pem)), source: published };
  } catch (cause) {
    throw new OperatorKeyError(`${published} is not an Ed25519 SPKI PEM public key`, { cause });
  }
}

/** The operator key as a checkpoint signer (with its kid). */
export function checkpointSignerOf(key: LoadedOperatorKey): CheckpointSigner {
  return {
    seed: key.signer.seed,
    publicKey: key.signer.publicKey,
    kid: kidForPublicKey(key.signer.publicKey),
  };
}
