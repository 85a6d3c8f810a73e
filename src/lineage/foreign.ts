// Foreign attestations (FORMATS.md §9): a statement another system issued about an artefact,
// kept beside the lineage record it names and never in the chain. The envelope is protocol
// neutral; a verdict of `verified_foreign` needs a verifier for its format and a key the
// verifier pinned for its issuer key id. Everything else is `unverifiable` (a valid shape
// nobody could check), `rejected` (checked, and false) or `malformed` (fails closed at the
// lowest trust class). No verdict ever changes whether the local chain verifies.
import { canonicalBytes, type JsonObject, type JsonValue } from "../canonical/mod.ts";
import {
  type ParsedDetachedJws,
  parseDetachedJws,
  signDetachedJws,
  verifyDetachedJws,
} from "../crypto/mod.ts";
import { TRUST_CLASSES, type TrustClass } from "./entry.ts";

/** Outcome of checking a foreign attestation. */
export type ForeignVerdict = "malformed" | "unverifiable" | "verified_foreign" | "rejected";

/** The verdict with the trust class to apply and why. */
export interface ForeignAttestationResult {
  /** `malformed` fails closed; `unverifiable` is a valid shape nobody could check. */
  verdict: ForeignVerdict;
  /** True only for `verified_foreign`. */
  verified: boolean;
  /**
   * The trust class to apply: the claimed one when verified or merely unverifiable, `public`
   * (the lowest) when malformed or rejected.
   */
  trust_class: TrustClass;
  /** Human text. */
  reason: string;
}

/** A foreign attestation whose outer shape is valid. */
export interface ForeignAttestation {
  /** Who issued it (free text: a CI system, a scanner, a person). */
  issuer: string;
  /** The issuer's key id: `--trust-issuer KID=PEM` pins a key under it. */
  issuer_key_id: string;
  /** `sha256:` of the artefact content it is about. */
  content_hash: string;
  /** The artefact it claims to be about. */
  claimed_subject: string;
  /** The trust class the issuer claims. */
  trust_class: TrustClass;
  /** The protocol-specific part: `format`, `payload_hash` and the format's own fields. */
  envelope: JsonObject;
}

/** Formats a verifier ships for: the statement signed as a detached JWS (Ed25519). */
export const FOREIGN_FORMATS = ["jws-detached"] as const;

/** Options for {@linkcode verifyForeignAttestation}. */
export interface ForeignAttestationOptions {
  /** Issuer keys the verifier pinned: issuer key id → raw 32-byte Ed25519 public key. */
  trustedIssuers?: ReadonlyMap<string, Uint8Array>;
  /** The local record the envelope sits beside: it must be what is attested. */
  record?: { content_hash: string; artefact_path: string };
}

const FIELDS = [
  "claimed_subject",
  "content_hash",
  "envelope",
  "issuer",
  "issuer_key_id",
  "trust_class",
];
const JWS_ENVELOPE_FIELDS = ["format", "payload_hash", "signature"];
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const LOWEST: TrustClass = "public";

function result(
  verdict: ForeignVerdict,
  trustClass: TrustClass,
  reason: string,
): ForeignAttestationResult {
  // What failed a check (or was never well formed) earns no trust beyond the lowest.
  const trust = verdict === "malformed" || verdict === "rejected" ? LOWEST : trustClass;
  return { verdict, verified: verdict === "verified_foreign", trust_class: trust, reason };
}

function nonEmpty(v: JsonValue | undefined): v is string {
  return typeof v === "string" && v !== "";
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The outer shape of an attestation checked, or why it is malformed. */
export function parseForeignAttestation(
  value: JsonValue,
): { ok: true; attestation: ForeignAttestation } | { ok: false; problem: string } {
  if (!isObject(value)) {
    return { ok: false, problem: "a foreign attestation must be a JSON object" };
  }
  const keys = Object.keys(value).sort();
  if (keys.join(",") !== FIELDS.join(",")) {
    return {
      ok: false,
      problem: `fields are [${keys.join(", ")}], expected exactly [${FIELDS.join(", ")}]`,
    };
  }
  for (const name of ["issuer", "issuer_key_id", "claimed_subject"]) {
    if (!nonEmpty(value[name])) return { ok: false, problem: `${name} must be a non-empty string` };
  }
  const contentHash = value.content_hash;
  if (typeof contentHash !== "string" || !DIGEST.test(contentHash)) {
    return { ok: false, problem: "content_hash must be sha256: + 64 lowercase hex" };
  }
  const tc = value.trust_class;
  if (typeof tc !== "string" || !(TRUST_CLASSES as readonly string[]).includes(tc)) {
    return { ok: false, problem: "trust_class is not a known trust class" };
  }
  const envelope = value.envelope;
  if (!isObject(envelope)) return { ok: false, problem: "envelope must be an object" };
  if (!nonEmpty(envelope.format)) return { ok: false, problem: "envelope.format is missing" };
  const payloadHash = envelope.payload_hash;
  if (typeof payloadHash !== "string" || !DIGEST.test(payloadHash)) {
    return { ok: false, problem: "envelope.payload_hash must be sha256: + 64 hex" };
  }
  return {
    ok: true,
    attestation: {
      issuer: value.issuer as string,
      issuer_key_id: value.issuer_key_id as string,
      content_hash: contentHash,
      claimed_subject: value.claimed_subject as string,
      trust_class: tc as TrustClass,
      envelope,
    },
  };
}

/**
 * The bytes a `jws-detached` envelope signs: `canon` of the statement
 * `{claimed_subject, content_hash, issuer, issuer_key_id, payload_hash, trust_class}`, so the
 * signature binds the issuer's claim to this content, subject and trust class.
 */
export function foreignStatementBytes(
  attestation: Omit<ForeignAttestation, "envelope">,
  payloadHash: string,
): Uint8Array {
  return canonicalBytes({
    claimed_subject: attestation.claimed_subject,
    content_hash: attestation.content_hash,
    issuer: attestation.issuer,
    issuer_key_id: attestation.issuer_key_id,
    payload_hash: payloadHash,
    trust_class: attestation.trust_class,
  }, "canon");
}

/**
 * A `jws-detached` attestation signed with an issuer's Ed25519 seed (what an issuer, or a
 * test, produces).
 */
export function signForeignAttestation(
  statement: Omit<ForeignAttestation, "envelope">,
  payloadHash: string,
  seed: Uint8Array,
): ForeignAttestation {
  const signature = signDetachedJws(seed, foreignStatementBytes(statement, payloadHash), {
    kid: statement.issuer_key_id,
  });
  return {
    ...statement,
    envelope: { format: "jws-detached", payload_hash: payloadHash, signature },
  };
}

/** The `jws-detached` verifier. */
function verifyJwsDetached(
  a: ForeignAttestation,
  options: ForeignAttestationOptions,
): ForeignAttestationResult {
  const env = a.envelope;
  const keys = Object.keys(env).sort();
  if (keys.join(",") !== JWS_ENVELOPE_FIELDS.join(",") || typeof env.signature !== "string") {
    return result(
      "malformed",
      a.trust_class,
      `a jws-detached envelope holds exactly [${JWS_ENVELOPE_FIELDS.join(", ")}]`,
    );
  }
  let jws: ParsedDetachedJws;
  try {
    jws = parseDetachedJws(env.signature);
  } catch (error) {
    return result("malformed", a.trust_class, `envelope.signature: ${(error as Error).message}`);
  }
  if (jws.header.kid !== a.issuer_key_id) {
    return result(
      "rejected",
      a.trust_class,
      `the JWS is by kid ${JSON.stringify(jws.header.kid)}, the envelope names ${
        JSON.stringify(a.issuer_key_id)
      }`,
    );
  }
  const key = options.trustedIssuers?.get(a.issuer_key_id);
  if (key === undefined) {
    return result(
      "unverifiable",
      a.trust_class,
      `no trusted key for issuer key id ${
        JSON.stringify(a.issuer_key_id)
      } (pin one with --trust-issuer ${a.issuer_key_id}=PEM)`,
    );
  }
  const payload = foreignStatementBytes(a, env.payload_hash as string);
  return verifyDetachedJws(jws, { payload, publicKey: key })
    ? result("verified_foreign", a.trust_class, `signed by the pinned key of ${a.issuer_key_id}`)
    : result("rejected", a.trust_class, `the signature does not verify with the pinned key`);
}

/**
 * Classifies a foreign attestation. Bad outer or inner shape → `malformed` at `public`. An
 * envelope about other content or another subject than its record → `rejected`. A format
 * without a shipped verifier → `unverifiable`, whatever keys are pinned. `jws-detached`:
 * `verified_foreign` only with a pinned key for its issuer key id and a valid signature.
 *
 * @example
 * ```ts ignore
 * verifyForeignAttestation(envelope).verdict; // "unverifiable"
 * verifyForeignAttestation(envelope, { trustedIssuers: new Map([["ci-1", key]]) }).verdict;
 * ```
 */
export function verifyForeignAttestation(
  value: JsonValue,
  options: ForeignAttestationOptions = {},
): ForeignAttestationResult {
  const parsed = parseForeignAttestation(value);
  if (!parsed.ok) return result("malformed", LOWEST, parsed.problem);
  const a = parsed.attestation;
  const record = options.record;
  if (record !== undefined && record.content_hash !== a.content_hash) {
    return result(
      "rejected",
      a.trust_class,
      `attests ${a.content_hash}, but the record's content is ${record.content_hash}`,
    );
  }
  if (record !== undefined && record.artefact_path !== a.claimed_subject) {
    return result(
      "rejected",
      a.trust_class,
      `claims to be about ${JSON.stringify(a.claimed_subject)}, the record is of ${
        JSON.stringify(record.artefact_path)
      }`,
    );
  }
  const format = a.envelope.format as string;
  if (format === "jws-detached") return verifyJwsDetached(a, options);
  return result(
    "unverifiable",
    a.trust_class,
    `no verifier for format ${JSON.stringify(format)} (this verifier checks: ${
      FOREIGN_FORMATS.join(", ")
    })`,
  );
}
