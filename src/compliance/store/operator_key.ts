// The operator signing key: Ed25519, PKCS#8 PEM at `.sdd/keys/operator.key` (mode 0600),
// created by `bernstein init` or the first pack. It signs pack manifests; its public half
// travels in every pack as `operator.pub`, and its fingerprint goes to auditors out of band.
import { join } from "node:path";
import {
  decodePrivateKeyPem,
  ed25519KeyPairFromSeed,
  encodePrivateKeyPem,
} from "../../crypto/mod.ts";
import { BernsteinError, KeyMissingError } from "../../errors/mod.ts";
import { type Random, writeFileIfAbsent } from "../../io/mod.ts";
import { operatorFingerprint } from "../../verify/mod.ts";
import type { OperatorSigner } from "../mod.ts";

/** Where the operator signing key lives, relative to `.sdd/`. */
export const OPERATOR_KEY_FILE = "keys/operator.key";

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
 * Reads an Ed25519 PKCS#8 PEM private key: a regular file (not a symlink), not readable by
 * group or others. A missing file is a {@linkcode KeyMissingError} (exit 3).
 */
export async function readOperatorSigningKey(path: string): Promise<LoadedOperatorKey> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new KeyMissingError("compliance.operator_key_missing", `no operator key at ${path}`, {
        hint: "'bernstein init' creates .sdd/keys/operator.key; or pass --operator-key PEM",
      });
    }
    throw error;
  }
  if (info.isSymlink) throw new OperatorKeyError(`operator key ${path} is a symlink (refused)`);
  if (!info.isFile) throw new OperatorKeyError(`operator key ${path} is not a regular file`);
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    throw new OperatorKeyError(
      `operator key ${path} is readable by group or others (mode ${
        (info.mode & 0o777).toString(8)
      }); refusing to use it`,
      { hint: `chmod 600 ${path}` },
    );
  }
  let seed: Uint8Array;
  try {
    seed = decodePrivateKeyPem(new TextDecoder().decode(await Deno.readFile(path)));
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
    return await readOperatorSigningKey(path);
  } catch (error) {
    if (!(error instanceof KeyMissingError)) throw error;
  }
  await Deno.mkdir(join(sdd, "keys"), { recursive: true, mode: 0o700 });
  const pair = ed25519KeyPairFromSeed(random.bytes(32));
  const created = await writeFileIfAbsent(path, encodePrivateKeyPem(pair.seed), { mode: 0o600 });
  const loaded = await readOperatorSigningKey(path);
  return { ...loaded, created };
}
