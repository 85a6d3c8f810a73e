// The install identity: an Ed25519 key that signs this install's connection documents (and the
// endpoint certification receipts of `doctor --endpoint`, src/providers), kept
// beside the operator key (`.sdd/keys/install.key`, PKCS#8 PEM, mode 0600; the public half at
// `.sdd/keys/install.pub`). A document copied to another install does not verify there.
import { join } from "node:path";
import {
  decodePrivateKeyPem,
  ed25519KeyPairFromSeed,
  encodePrivateKeyPem,
  encodePublicKeyPem,
} from "../crypto/mod.ts";
import { KeyMissingError } from "../errors/mod.ts";
import {
  type Random,
  readSecretFile,
  sddFolder,
  writeFileAtomic,
  writeFileIfAbsent,
} from "../io/mod.ts";
import { kidForPublicKey } from "../lineage/mod.ts";
import { operatorFingerprint } from "../pack_format/mod.ts";
import { FleetError } from "./errors.ts";

/** The install key, relative to `.sdd/`. */
export const INSTALL_KEY_FILE = "keys/install.key";
/** Its public half, relative to `.sdd/`. */
export const INSTALL_PUBLIC_KEY_FILE = "keys/install.pub";

/** A loaded install identity. */
export interface InstallIdentity {
  /** Ed25519 seed. */
  seed: Uint8Array;
  /** Public key. */
  publicKey: Uint8Array;
  /** Key id (first 16 hex of SHA-256 of the SPKI DER). */
  kid: string;
  /** Hex SHA-256 of the SPKI DER. */
  fingerprint: string;
  /** True when this call created it. */
  created: boolean;
}

/** Reads the install identity; missing is `fleet.identity_missing` (exit 3). */
export async function readInstallIdentity(sdd: string): Promise<InstallIdentity> {
  const path = join(sdd, INSTALL_KEY_FILE);
  const pem = await readSecretFile(path, { what: "install key" });
  if (pem === undefined) {
    throw new KeyMissingError("fleet.identity_missing", `no install identity at ${path}`, {
      hint: "'bernstein init' or 'bernstein conn create' creates it",
    });
  }
  let seed: Uint8Array;
  try {
    seed = decodePrivateKeyPem(new TextDecoder().decode(pem));
  } catch (cause) {
    throw new FleetError("fleet.identity_missing", `${path} is not an Ed25519 PKCS#8 PEM key`, {
      cause,
    });
  }
  const pair = ed25519KeyPairFromSeed(seed);
  return {
    seed: pair.seed,
    publicKey: pair.publicKey,
    kid: kidForPublicKey(pair.publicKey),
    fingerprint: operatorFingerprint(pair.publicKey),
    created: false,
  };
}

/** The install identity, created (exclusively, 0600) when missing. */
export async function ensureInstallIdentity(
  sdd: string,
  random: Random,
): Promise<InstallIdentity> {
  try {
    return await readInstallIdentity(sdd);
  } catch (error) {
    if (!(error instanceof KeyMissingError)) throw error;
  }
  await Deno.mkdir(sddFolder(sdd, "keys"), { recursive: true, mode: 0o700 });
  const pair = ed25519KeyPairFromSeed(random.bytes(32));
  const created = await writeFileIfAbsent(
    join(sdd, INSTALL_KEY_FILE),
    encodePrivateKeyPem(pair.seed),
    { mode: 0o600 },
  );
  const identity = await readInstallIdentity(sdd);
  await writeFileAtomic(
    join(sdd, INSTALL_PUBLIC_KEY_FILE),
    encodePublicKeyPem(identity.publicKey),
    { mode: 0o644 },
  );
  return { ...identity, created };
}
