// Foreign attestations: an envelope another system issued about an artefact, kept beside a
// lineage record. Its verdict is information about the foreign claim only; it never changes
// whether the local chain verifies.
import { fromBase64, type JsonValue } from "../canonical/mod.ts";
import { decodePublicKeyPem, ed25519Verify } from "../crypto/mod.ts";
import { TRUST_CLASSES, type TrustClass } from "./entry.ts";

/** Outcome of checking a foreign attestation. */
export type ForeignVerdict = "malformed" | "unverifiable" | "verified_foreign" | "rejected";

/** The verdict with the trust class to apply and why. */
export interface ForeignAttestationResult {
  /** `malformed` fails closed; `unverifiable` is a valid shape nobody could check. */
  verdict: ForeignVerdict;
  /** True only for `verified_foreign`. */
  verified: boolean;
  /** The attestation's trust class, or `public` (the lowest) when it could not be read. */
  trust_class: TrustClass;
  /** Human text. */
  reason: string;
}

/** Options for {@linkcode verifyForeignAttestation}. */
export interface ForeignAttestationOptions {
  /** The issuer's Ed25519 public key (raw 32 bytes or SPKI PEM); enables signature checks. */
  issuerPublicKey?: Uint8Array | string;
  /** The local record the envelope sits beside; its content must be what is attested. */
  record?: { content_hash: string };
}

const FIELDS = [
  "claimed_subject",
  "content_hash",
  "envelope",
  "issuer",
  "issuer_key_id",
  "trust_class",
];
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const LOWEST: TrustClass = "public";

function result(
  verdict: ForeignVerdict,
  trustClass: TrustClass,
  reason: string,
): ForeignAttestationResult {
  return { verdict, verified: verdict === "verified_foreign", trust_class: trustClass, reason };
}

function nonEmpty(v: JsonValue | undefined): v is string {
  return typeof v === "string" && v !== "";
}

/**
 * Classifies a foreign attestation envelope (`issuer`, `issuer_key_id`, `content_hash`,
 * `claimed_subject`, `trust_class`, `envelope` {`format`, `payload_hash`, …}).
 * Bad shape → `malformed` (lowest trust). Valid shape and no issuer key → `unverifiable`.
 * With an issuer Ed25519 key: `envelope.signature` (standard base64 of an Ed25519 signature
 * over the ASCII `payload_hash`) decides `verified_foreign` or `rejected`. An envelope about
 * other content than the record it sits beside is `rejected`.
 *
 * @example
 * ```ts
 * verifyForeignAttestation(envelope).verdict; // "unverifiable"
 * verifyForeignAttestation(envelope, { issuerPublicKey: pem }).verdict; // "verified_foreign"
 * ```
 */
export function verifyForeignAttestation(
  value: JsonValue,
  options: ForeignAttestationOptions = {},
): ForeignAttestationResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return result("malformed", LOWEST, "a foreign attestation must be a JSON object");
  }
  const obj = value as { [key: string]: JsonValue | undefined };
  const keys = Object.keys(obj).sort();
  if (keys.join(",") !== FIELDS.join(",")) {
    return result(
      "malformed",
      LOWEST,
      `fields are [${keys.join(", ")}], expected exactly [${FIELDS.join(", ")}]`,
    );
  }
  for (const name of ["issuer", "issuer_key_id", "claimed_subject"]) {
    if (!nonEmpty(obj[name])) {
      return result("malformed", LOWEST, `${name} must be a non-empty string`);
    }
  }
  const contentHash = obj.content_hash;
  if (typeof contentHash !== "string" || !DIGEST.test(contentHash)) {
    return result("malformed", LOWEST, "content_hash must be sha256: + 64 lowercase hex");
  }
  const tc = obj.trust_class;
  if (typeof tc !== "string" || !(TRUST_CLASSES as readonly string[]).includes(tc)) {
    return result("malformed", LOWEST, "trust_class is not a known trust class");
  }
  const trustClass = tc as TrustClass;
  const envelope = obj.envelope;
  if (typeof envelope !== "object" || envelope === null || Array.isArray(envelope)) {
    return result("malformed", trustClass, "envelope must be an object");
  }
  const env = envelope as { [key: string]: JsonValue | undefined };
  if (!nonEmpty(env.format)) return result("malformed", trustClass, "envelope.format is missing");
  const payloadHash = env.payload_hash;
  if (typeof payloadHash !== "string" || !DIGEST.test(payloadHash)) {
    return result("malformed", trustClass, "envelope.payload_hash must be sha256: + 64 hex");
  }
  if (options.record !== undefined && options.record.content_hash !== contentHash) {
    return result(
      "rejected",
      trustClass,
      `attests ${contentHash}, but the record's content is ${options.record.content_hash}`,
    );
  }
  if (options.issuerPublicKey === undefined) {
    return result(
      "unverifiable",
      trustClass,
      `no issuer key supplied for ${JSON.stringify(obj.issuer)} (format ${
        JSON.stringify(env.format)
      })`,
    );
  }
  let publicKey: Uint8Array;
  try {
    publicKey = typeof options.issuerPublicKey === "string"
      ? decodePublicKeyPem(options.issuerPublicKey)
      : options.issuerPublicKey;
  } catch (error) {
    return result("unverifiable", trustClass, `issuer key unusable: ${(error as Error).message}`);
  }
  if (publicKey.length !== 32) {
    return result("unverifiable", trustClass, "issuer key is not a 32-byte Ed25519 key");
  }
  const sigText = env.signature;
  if (typeof sigText !== "string") {
    return result("rejected", trustClass, "envelope.signature is missing");
  }
  let signature: Uint8Array;
  try {
    signature = fromBase64(sigText);
  } catch {
    return result("rejected", trustClass, "envelope.signature is not base64");
  }
  const ok = ed25519Verify(publicKey, new TextEncoder().encode(payloadHash), signature);
  return ok
    ? result("verified_foreign", trustClass, "issuer signature verified")
    : result("rejected", trustClass, "issuer signature does not verify");
}
