// What `lineage` and `audit` share about checkpoints (FORMATS.md §8): the operator key a check
// uses, checkpoint documents given on the command line (a file, or a pack's checkpoint),
// writing and exporting a checkpoint, and the summary lines.
import type { JsonObject } from "../canonical/mod.ts";
import type { CheckpointDocument, CheckpointLog, SignedCheckpoint } from "../crypto/mod.ts";
import type { CheckpointWriteResult } from "../tlog/mod.ts";
import type { GateCheckpointReport } from "../verify/mod.ts";
import type { CommandContext, FlagSpec } from "./spec.ts";
import { stringFlag, stringsFlag } from "./spec.ts";

/** `--operator-key PEM`: pins the key checkpoint signatures are checked with. */
export const OPERATOR_KEY_FLAG: FlagSpec = {
  name: "operator-key",
  type: "string",
  valueName: "PEM",
  help:
    "Operator public key for checkpoint signatures (default: the project's operator key, else .sdd/keys/operator.pub).",
};

/** `--checkpoint FILE`: more checkpoints to check the log against. */
export const CHECKPOINT_FLAG: FlagSpec = {
  name: "checkpoint",
  type: "string",
  multiple: true,
  valueName: "FILE",
  help:
    "An older checkpoint kept elsewhere (a checkpoint document or a compliance pack); the log must still match it.",
};

/** The operator public key to check with, and where it came from. */
export interface VerificationKey {
  /** The key, when one was found. */
  publicKey?: Uint8Array;
  /** `--operator-key`, the project key, `.sdd/keys/operator.pub`, or none. */
  source: string;
}

/** A PEM file as a public key (the public half of a private key is taken too). */
async function publicKeyOfPem(path: string): Promise<Uint8Array> {
  const crypto = await import("../crypto/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new UsageError("cli.bad_flag", `--operator-key ${path}: ${(error as Error).message}`);
  }
  try {
    if (/PRIVATE KEY/.test(text)) {
      return crypto.ed25519KeyPairFromSeed(crypto.decodePrivateKeyPem(text)).publicKey;
    }
    return crypto.decodePublicKeyPem(text);
  } catch (error) {
    throw new UsageError("cli.bad_flag", `--operator-key ${path}: ${(error as Error).message}`);
  }
}

/**
 * The operator public key a check uses: `--operator-key`, else the project's operator key,
 * else its published `.sdd/keys/operator.pub`; none when there is neither. Never creates one.
 */
export async function verificationKey(ctx: CommandContext, sdd: string): Promise<VerificationKey> {
  const { resolve } = await import("node:path");
  const flag = stringFlag(ctx, "operator-key");
  if (flag !== undefined) {
    return { publicKey: await publicKeyOfPem(resolve(ctx.cwd, flag)), source: "--operator-key" };
  }
  const store = await import("../compliance/project/mod.ts");
  return await store.projectOperatorPublicKey(sdd);
}

/** The checkpoint document in a file: itself, or a compliance pack's `checkpoint.json`. */
async function documentOf(flag: string, path: string, bytes: Uint8Array): Promise<Uint8Array> {
  const verify = await import("../verify/mod.ts");
  const doc = verify.checkpointDocumentBytes(bytes);
  if (typeof doc === "string") {
    const { UsageError } = await import("../errors/mod.ts");
    throw new UsageError("cli.bad_flag", `--${flag} ${path}: ${doc}`);
  }
  return doc;
}

/** Reads the `--checkpoint` files: checkpoint documents, or packs (their checkpoint). */
export async function externalCheckpointFiles(
  ctx: CommandContext,
): Promise<{ name: string; bytes: Uint8Array }[]> {
  const { resolve } = await import("node:path");
  const { UsageError } = await import("../errors/mod.ts");
  const out: { name: string; bytes: Uint8Array }[] = [];
  for (const given of stringsFlag(ctx, "checkpoint")) {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(resolve(ctx.cwd, given));
    } catch (error) {
      throw new UsageError("cli.bad_flag", `--checkpoint ${given}: ${(error as Error).message}`);
    }
    out.push({ name: given, bytes: await documentOf("checkpoint", given, bytes) });
  }
  return out;
}

/** Reads `--from` checkpoint documents (or packs) for a consistency proof. */
export async function fromDocuments(ctx: CommandContext): Promise<CheckpointDocument[]> {
  const { resolve } = await import("node:path");
  const crypto = await import("../crypto/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const out: CheckpointDocument[] = [];
  for (const given of stringsFlag(ctx, "from")) {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(resolve(ctx.cwd, given));
    } catch (error) {
      throw new UsageError("cli.bad_flag", `--from ${given}: ${(error as Error).message}`);
    }
    bytes = await documentOf("from", given, bytes);
    const parsed = crypto.parseCheckpointDocument(bytes);
    if (!parsed.ok) throw new UsageError("cli.bad_flag", `--from ${given}: ${parsed.problem}`);
    out.push(parsed.document);
  }
  return out;
}

/** `--out FILE` and `--from OLD` for the checkpoint commands. */
export const EXPORT_FLAGS: FlagSpec[] = [
  {
    name: "out",
    type: "string",
    valueName: "FILE",
    help: "Also write the checkpoint document (checkpoint, operator key, proofs) to FILE.",
  },
  {
    name: "from",
    type: "string",
    multiple: true,
    valueName: "OLD",
    help:
      "With --out: add a consistency proof that the checkpoint OLD (a document or a pack) is a prefix of this one.",
  },
];

function checkpointJson(c: SignedCheckpoint): JsonObject {
  return { log: c.log, root: c.root, size: c.size, ts: c.ts, signature: c.signature };
}

/**
 * Writes a checkpoint with the project's operator key (created when missing, as for packs),
 * exports the document when `--out` is given, and prints the result.
 */
export async function writeCheckpointCommand(
  ctx: CommandContext,
  options: {
    sdd: string;
    dir: string;
    log: CheckpointLog;
    logName: string;
    write: (signer: import("../crypto/mod.ts").CheckpointSigner) => Promise<CheckpointWriteResult>;
  },
): Promise<number> {
  const { resolve } = await import("node:path");
  const { systemRandom, writeFileAtomic } = await import("../io/mod.ts");
  const store = await import("../compliance/project/mod.ts");
  const tlog = await import("../tlog/mod.ts");
  const key = await store.ensureOperatorSigningKey(options.sdd, systemRandom);
  const signer = store.checkpointSignerOf(key);
  const from = await fromDocuments(ctx);
  const outFlag = stringFlag(ctx, "out");
  if (from.length > 0 && outFlag === undefined) {
    const { UsageError } = await import("../errors/mod.ts");
    throw new UsageError(
      "cli.bad_flag",
      "--from needs --out FILE (the proof goes in the document)",
    );
  }
  const result = await options.write(signer);
  let out: string | undefined;
  if (outFlag !== undefined) {
    out = resolve(ctx.cwd, outFlag);
    const doc = await tlog.exportCheckpoint({
      dir: options.dir,
      checkpoint: result.checkpoint,
      publicKey: signer.publicKey,
      from,
    });
    await writeFileAtomic(out, doc, { mode: 0o644 });
  }
  const c = result.checkpoint;
  if (ctx.json) {
    ctx.out.json({
      log: options.log,
      created: result.created,
      line: result.line,
      checkpoint: checkpointJson(c),
      operator_fingerprint: key.fingerprint,
      out: out ?? null,
      consistency_from: from.map((d) => d.checkpoint.size),
    });
    return 0;
  }
  ctx.out.line(
    `${
      result.created ? "wrote" : "unchanged:"
    } checkpoint #${result.line} of ${options.logName}: ${c.size} line${
      c.size === 1 ? "" : "s"
    }, root ${c.root.slice(0, 16)}…, ${c.ts}`,
  );
  ctx.out.line(`signed by the operator key ${key.fingerprint}`);
  if (out !== undefined) {
    ctx.out.line(
      `exported to ${out}${
        from.length > 0
          ? ` with a consistency proof from size ${from.map((d) => d.checkpoint.size).join(", ")}`
          : ""
      }`,
    );
  }
  return 0;
}

/** One line saying what the checkpoints cover, for the human summary of a check. */
export function checkpointSummary(report: GateCheckpointReport, key: VerificationKey): string {
  const external = report.external > 0 ? `; ${report.external} external checked` : "";
  if (report.latest === null) {
    return `checkpoints: none; ${report.not_checkpointed} line${
      report.not_checkpointed === 1 ? "" : "s"
    } not yet checkpointed${external}`;
  }
  const signatures = key.publicKey === undefined
    ? "signatures NOT checked (no operator key)"
    : `${report.verified_signatures} signature${
      report.verified_signatures === 1 ? "" : "s"
    } checked with the ${key.source}`;
  return `checkpoints: latest ${report.latest.where} covers ${report.latest.size} line${
    report.latest.size === 1 ? "" : "s"
  } (${report.latest.ts}); ${report.not_checkpointed} not yet checkpointed; ${signatures}${external}`;
}
