// The lineage operator HMAC key (FORMATS.md §4): `BERNSTEIN_OPERATOR_SECRET` when set, else
// derived from the audit key; only a writer may create a missing audit key.

import {
  type AuditKey,
  deriveOperatorKey,
  ensureAuditKey,
  readAuditKey,
  resolveAuditKeyPath,
} from "../../audit/mod.ts";
import type { EnvReader, Random } from "../../io/mod.ts";

/** Options for {@linkcode resolveOperatorHmacKey}. */
export interface ResolveOperatorHmacKeyOptions {
  /** Environment (`BERNSTEIN_OPERATOR_SECRET`, audit key location). */
  env: EnvReader;
  /** Writers pass randomness: a missing audit key is then created. Readers omit it. */
  createWith?: Random;
}

/**
 * The lineage operator key (FORMATS.md §4): `BERNSTEIN_OPERATOR_SECRET` when set, else the
 * HKDF of the audit key. Only a writer (`createWith`) may create a missing audit key; a
 * reader gets a `KeyMissingError` (exit 3).
 */
export async function resolveOperatorHmacKey(
  options: ResolveOperatorHmacKeyOptions,
): Promise<Uint8Array> {
  const secret = options.env.get("BERNSTEIN_OPERATOR_SECRET");
  if (secret !== undefined && secret !== "") return deriveOperatorKey({ operatorSecret: secret });
  const { path } = resolveAuditKeyPath(options.env);
  const auditKey: AuditKey = options.createWith === undefined
    ? await readAuditKey(path)
    : await ensureAuditKey(path, options.createWith);
  return deriveOperatorKey({ auditKey });
}
