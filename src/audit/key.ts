// The audit key: where it lives (`BERNSTEIN_AUDIT_KEY_PATH`, else the XDG state folder, else
// `~/.local/state/bernstein/`), creating it once, reading it, and the keys derived from it.

import { join } from "node:path";
import { KeyMissingError } from "../errors/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { toHex } from "../canonical/mod.ts";
import { type EnvReader, type Random, readSecretFile, writeFileIfAbsent } from "../io/mod.ts";
import { hkdfSha256 } from "../crypto/mod.ts";

/** Where the audit key lives (FORMATS.md §2), and which rule chose it. */
export interface AuditKeyLocation {
  /** Absolute path of the key file. */
  path: string;
  /** `BERNSTEIN_AUDIT_KEY_PATH`, `XDG_STATE_HOME` or `HOME`. */
  source: "BERNSTEIN_AUDIT_KEY_PATH" | "XDG_STATE_HOME" | "HOME";
}

/**
 * Resolves the audit key path: `$BERNSTEIN_AUDIT_KEY_PATH`, else
 * `$XDG_STATE_HOME/bernstein/audit.key`, else `~/.local/state/bernstein/audit.key`.
 */
export function resolveAuditKeyPath(env: EnvReader): AuditKeyLocation {
  const explicit = env.get("BERNSTEIN_AUDIT_KEY_PATH");
  if (explicit) return { path: explicit, source: "BERNSTEIN_AUDIT_KEY_PATH" };
  const xdg = env.get("XDG_STATE_HOME");
  if (xdg) return { path: join(xdg, "bernstein", "audit.key"), source: "XDG_STATE_HOME" };
  const home = env.get("HOME") ?? env.get("USERPROFILE");
  if (!home) {
    throw new KeyMissingError("audit.key_missing", "cannot locate the audit key: HOME is not set", {
      hint: "set BERNSTEIN_AUDIT_KEY_PATH",
    });
  }
  return { path: join(home, ".local", "state", "bernstein", "audit.key"), source: "HOME" };
}

/** The audit key K: the key file's 64-char hex text as ASCII bytes (not hex-decoded). */
export interface AuditKey {
  /** K, used directly by legacy records and as HKDF input. */
  bytes: Uint8Array;
  /** Where it was read from. */
  path: string;
}

/**
 * Reads the audit key. A missing key is a {@linkcode KeyMissingError} (exit 3; verifiers never
 * create one); a symlink, a key readable by group or others (`secret.*`, src/io's secret-file
 * policy), or one that is not 64 hex characters (`audit.key_invalid`) is refused.
 */
export async function readAuditKey(path: string): Promise<AuditKey> {
  const bytes = await readSecretFile(path, { what: "audit key" });
  if (bytes === undefined) {
    throw new KeyMissingError("audit.key_missing", `audit key not found at ${path}`, {
      hint:
        "a writer ('bernstein init' or a run) creates it; for verification, point BERNSTEIN_AUDIT_KEY_PATH at the key",
    });
  }
  if (!/^[0-9a-f]{64}$/.test(new TextDecoder().decode(bytes))) {
    throw new BernsteinError(
      "audit.key_invalid",
      `audit key ${path} is not 64 lowercase hex characters`,
    );
  }
  return { bytes, path };
}

/**
 * Reads the audit key, creating it first when missing (writers only): 32 random bytes as 64
 * hex, mode 0600, no newline, created exclusively so two writers never mint different keys.
 */
export async function ensureAuditKey(
  path: string,
  random: Random,
): Promise<AuditKey & { created: boolean }> {
  try {
    return { ...(await readAuditKey(path)), created: false };
  } catch (error) {
    if (!(error instanceof KeyMissingError)) throw error;
  }
  await Deno.mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  // Published whole by link: a concurrent reader never sees an empty key, the first link wins.
  const created = await writeFileIfAbsent(path, toHex(random.bytes(32)), { mode: 0o600 });
  return { ...(await readAuditKey(path)), created };
}

/** K2 = HKDF-SHA256(ikm = K, no salt, info = "audit", 32 bytes): the scheme-2 chain key. */
export function deriveChainKey(key: AuditKey): Uint8Array {
  return hkdfSha256(key.bytes, { info: "audit", length: 32 });
}

/**
 * The lineage operator key (FORMATS.md §4): `BERNSTEIN_OPERATOR_SECRET` as UTF-8 when set,
 * else HKDF-SHA256(audit key bytes, info = "lineage-operator").
 */
export function deriveOperatorKey(
  options: { operatorSecret?: string; auditKey?: AuditKey },
): Uint8Array {
  if (options.operatorSecret !== undefined && options.operatorSecret !== "") {
    return new TextEncoder().encode(options.operatorSecret);
  }
  if (options.auditKey === undefined) {
    throw new KeyMissingError(
      "lineage.operator_key_missing",
      "no operator key: set BERNSTEIN_OPERATOR_SECRET or provide the audit key",
    );
  }
  return hkdfSha256(options.auditKey.bytes, { info: "lineage-operator", length: 32 });
}
