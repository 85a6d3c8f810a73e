// The built-in `secrets` gate (`quality_gates.secrets`, on by default): a change that carries
// the operator token, the audit key, the lineage operator secret, a configured provider key or
// any private key block is refused, so an agent that read a secret cannot land it in the
// operator's branch. Values are searched as bytes in every added or modified file, as written
// and in base64/base64url/hex, so a binary file or a simple encoding does not slip through.
// Messages name the secret and the path, never the value.
import { MIN_SECRET_LENGTH, secretForms } from "../io/mod.ts";
import type { GateResult } from "./gates.ts";
import type { DiffEntry } from "./git.ts";
import type { BlobReader } from "./merge_safety.ts";

/** A secret to look for. */
export interface Secret {
  /** What it is, for messages (`the operator token`, `$ANTHROPIC_API_KEY`). */
  name: string;
  /** Its value. */
  value: string;
}

/** Secrets shorter than this are not searched (too many accidental matches). */
export { MIN_SECRET_LENGTH };

const PRIVATE_KEY_BLOCK = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/;

interface Needle {
  name: string;
  forms: Uint8Array[];
}

const encoder = new TextEncoder();

/** The byte patterns searched for each secret: as is, base64, base64url and hex. */
export function secretNeedles(secrets: readonly Secret[]): Needle[] {
  const out: Needle[] = [];
  for (const s of secrets) {
    if (s.value.length < MIN_SECRET_LENGTH) continue;
    out.push({ name: s.name, forms: secretForms(s.value).map((f) => encoder.encode(f)) });
  }
  return out;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  if (needle.length === 0 || needle.length > haystack.length) return -1;
  const first = needle[0];
  outer: for (
    let i = haystack.indexOf(first);
    i >= 0 && i <= haystack.length - needle.length;
    i = haystack.indexOf(first, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** The secrets found in `bytes` (names), plus `a private key block` when one is there. */
export function findSecrets(bytes: Uint8Array, needles: readonly Needle[]): string[] {
  const found: string[] = [];
  for (const n of needles) {
    if (n.forms.some((f) => indexOf(bytes, f) >= 0)) found.push(n.name);
  }
  // latin1 keeps every byte one character, so a key block inside a binary file is found too.
  const m = PRIVATE_KEY_BLOCK.exec(new TextDecoder("latin1").decode(bytes));
  if (m !== null) found.push(`a private key block (${m[0]})`);
  return found;
}

/** Options of {@linkcode secretsGate}. */
export interface SecretsGateInput {
  /** The change. */
  entries: readonly DiffEntry[];
  /** Reads blobs. */
  read: BlobReader;
  /** The secrets of this run. */
  secrets: readonly Secret[];
  /** The change's commits as git stores them (author, committer, message): merges keep them. */
  commits?: readonly { sha: string; bytes: Uint8Array }[];
}

/**
 * The `secrets` gate: refuses a change whose added or modified files, or whose commits'
 * authors and messages, carry a secret.
 */
export async function secretsGate(input: SecretsGateInput): Promise<GateResult> {
  const needles = secretNeedles(input.secrets);
  const hits: string[] = [];
  let scanned = 0;
  for (const e of input.entries) {
    if (e.status === "D" || e.newMode === "160000") continue;
    const bytes = await input.read(e.path, "new");
    if (bytes === undefined) continue;
    scanned++;
    for (const name of findSecrets(bytes, needles)) hits.push(`${e.path}: ${name}`);
  }
  for (const c of input.commits ?? []) {
    for (const name of findSecrets(c.bytes, needles)) {
      hits.push(`commit ${c.sha.slice(0, 12)} (author or message): ${name}`);
    }
  }
  if (hits.length === 0) {
    return {
      gate: "secrets",
      ok: true,
      reason: `${scanned} file(s) and ${
        input.commits?.length ?? 0
      } commit(s) scanned for ${needles.length} secret(s) and private key blocks`,
      durationMs: 0,
    };
  }
  return {
    gate: "secrets",
    ok: false,
    reason: `the change carries secrets: ${hits.join("; ")}`,
    durationMs: 0,
  };
}
