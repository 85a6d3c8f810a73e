// Foreign attestations in `bernstein lineage …` (FORMATS.md §9): `attest import`, the issuer
// keys pinned with `--trust-issuer`, and the attestations `chain` and `walk` show beside each
// entry with their verdicts. Verdicts are information only: no command's exit code uses them.
import type { JsonObject } from "../canonical/mod.ts";
import type { LoggedEntry } from "../lineage/store/mod.ts";
import type { ForeignAttestationReport } from "../verify/mod.ts";
import type { CommandContext, FlagSpec } from "./spec.ts";
import { stringArg, stringFlag, stringsFlag } from "./spec.ts";

/** `--trust-issuer KID=PEMFILE` (repeatable). */
export const TRUST_ISSUER_FLAG: FlagSpec = {
  name: "trust-issuer",
  type: "string",
  multiple: true,
  valueName: "KID=PEM",
  help:
    "Pin a foreign issuer's Ed25519 public key under its key id: its jws-detached attestations can then verify.",
};

/** The pinned issuer keys of `--trust-issuer` (a bad value is a usage error). */
export async function trustedIssuers(ctx: CommandContext): Promise<Map<string, Uint8Array>> {
  const { resolve } = await import("node:path");
  const verify = await import("../verify/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  try {
    return verify.trustedIssuerKeys(
      stringsFlag(ctx, "trust-issuer"),
      (p) => Deno.readFileSync(resolve(ctx.cwd, p)),
    );
  } catch (error) {
    throw new UsageError("cli.bad_flag", (error as Error).message);
  }
}

/** The attestations stored beside `entries`, with their verdicts, by entry hash. */
export async function attestationsOf(
  ctx: CommandContext,
  lineageDir: string,
  entries: readonly LoggedEntry[],
): Promise<Map<string, ForeignAttestationReport[]>> {
  const verify = await import("../verify/mod.ts");
  const lineage = await import("../lineage/mod.ts");
  const trusted = await trustedIssuers(ctx);
  const byHash = new Map(entries.map((e) => [e.hash, e]));
  const out = new Map<string, ForeignAttestationReport[]>();
  for (const a of verify.readAttestationDirectory(lineageDir)) {
    const e = byHash.get(a.entry_hash);
    if (e === undefined) continue;
    const verdict = a.problem !== undefined || a.attestation === undefined
      ? {
        verdict: "malformed" as const,
        verified: false,
        trust_class: "public" as const,
        reason: a.problem ?? "unreadable",
      }
      : lineage.verifyForeignAttestation(a.attestation, {
        trustedIssuers: trusted,
        record: { content_hash: e.entry.content_hash, artefact_path: e.entry.artefact_path },
      });
    const list = out.get(a.entry_hash) ?? [];
    list.push({ ...verdict, entry_hash: a.entry_hash, location: a.location });
    out.set(a.entry_hash, list);
  }
  return out;
}

/** An attestation verdict as JSON. */
export function attestationJson(f: ForeignAttestationReport): JsonObject {
  return {
    location: f.location,
    verdict: f.verdict,
    verified: f.verified,
    trust_class: f.trust_class,
    reason: f.reason,
  };
}

/** `bernstein lineage attest import FILE [--entry HASH]`. */
export async function attestImport(ctx: CommandContext): Promise<number> {
  const { join, resolve } = await import("node:path");
  const { SDD_DIR, SDD_FOLDERS } = await import("../io/mod.ts");
  const { findProject } = await import("../config/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const store = await import("../lineage/store/mod.ts");
  const file = stringArg(ctx, "file") ?? "";
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(resolve(ctx.cwd, file));
  } catch (error) {
    throw new UsageError("cli.bad_argument", `${file}: ${(error as Error).message}`);
  }
  const project = await findProject(ctx.cwd);
  const lineage = store.openLineageStore({
    sdd: project.sdd,
    operatorKey: () => Promise.reject(new Error("importing an attestation signs nothing")),
  });
  const imported = await store.importAttestation(lineage, bytes, {
    entry: stringFlag(ctx, "entry"),
    source: file,
  });
  const where = join(SDD_DIR, SDD_FOLDERS.lineage, imported.path);
  if (ctx.json) {
    ctx.out.json({
      entry_hash: imported.entryHash,
      artefact: imported.artefact,
      path: where,
      created: imported.created,
      issuer: imported.issuer,
      format: imported.format,
    });
    return 0;
  }
  ctx.out.line(
    `${imported.created ? "stored" : "already stored"} ${imported.format} attestation by ${
      JSON.stringify(imported.issuer)
    } beside ${imported.artefact} entry ${imported.entryHash}`,
  );
  ctx.out.line(`  ${where} (outside the log: it never changes the chain)`);
  return 0;
}
