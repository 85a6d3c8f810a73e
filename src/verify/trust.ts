// `--trust-issuer KID=PEMFILE`: the issuer keys a verifier pins for foreign attestations
// (FORMATS.md §9), shared by `bernstein-verify` and `bernstein lineage …`.
import { decodeUtf8Strict } from "../canonical/mod.ts";
import { decodePublicKeyPem } from "../crypto/mod.ts";
import type { ForeignAttestationReport } from "./types.ts";

/** Reads `--trust-issuer` values into issuer key id → Ed25519 public key; throws with a reason. */
export function trustedIssuerKeys(
  specs: readonly string[],
  readFile: (path: string) => Uint8Array,
): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    const kid = eq < 0 ? "" : spec.slice(0, eq);
    const path = eq < 0 ? "" : spec.slice(eq + 1);
    if (kid === "" || path === "") {
      throw new Error(`--trust-issuer ${JSON.stringify(spec)}: expected KID=PEMFILE`);
    }
    if (out.has(kid)) throw new Error(`--trust-issuer: key id ${JSON.stringify(kid)} given twice`);
    let text: string;
    try {
      text = decodeUtf8Strict(readFile(path));
    } catch (error) {
      throw new Error(`--trust-issuer ${kid}=${path}: cannot read: ${(error as Error).message}`);
    }
    try {
      out.set(kid, decodePublicKeyPem(text));
    } catch (error) {
      throw new Error(`--trust-issuer ${kid}=${path}: ${(error as Error).message}`);
    }
  }
  return out;
}

/** One human line per foreign attestation verdict. */
export function foreignLine(f: ForeignAttestationReport): string {
  return `foreign attestation ${f.location}: ${f.verdict} (trust ${f.trust_class}): ${f.reason}`;
}
