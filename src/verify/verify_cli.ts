// The `bernstein-verify` command line: argument parsing (no env, no permissions beyond reading
// the files named), dispatch, and the output contract: a human summary on stdout and exactly
// one JSON object `{ok, kind, stats, errors}` on stderr; exit 0 only when every check passed.
import { decodeUtf8Strict } from "../canonical/mod.ts";
import { decodePublicKeyPem } from "../crypto/mod.ts";
import { closestMatch } from "../errors/mod.ts";
import { VERIFY_BINARY, VERSION } from "../meta/mod.ts";
import { type AttachmentsDirResult, verifyAttachmentsDir } from "./attachments_dir.ts";
import { FileReadError, openFileBytes } from "./file_bytes.ts";
import {
  checkpointDocumentBytes,
  type ConsistencyResult,
  verifyCheckpointConsistency,
} from "./consistency.ts";
import { type LineageDirResult, verifyChain, verifyForks } from "./lineage_dir.ts";
import { type PackVerifyResult, type VerifyIssue, verifyPack } from "./pack.ts";
import { normalizeFingerprint } from "../pack_format/mod.ts";
import { foreignLine, trustedIssuerKeys } from "./trust.ts";

/** Where the verifier writes: stdout lines and the one stderr JSON document. */
export interface VerifyCliIo {
  /** One line of human output. */
  stdout(line: string): void;
  /** The JSON document (written once). */
  stderr(text: string): void;
}

/** The verifier's help text. */
export const VERIFY_HELP =
  `${VERIFY_BINARY} ${VERSION}: offline verifier for bernstein compliance packs and lineage logs.
Read-only: it never writes, extracts, opens the network, reads the environment or runs anything.

Usage:
  ${VERIFY_BINARY} pack <pack.zip> [--operator-key PEM | --operator-fingerprint HEX]
                        [--trust-issuer KID=PEM …]
  ${VERIFY_BINARY} chain <artefact> --lineage-dir DIR [--cards DIR] [--checkpoint FILE]
                         [--operator-key PEM | --operator-fingerprint HEX] [--trust-issuer KID=PEM …]
  ${VERIFY_BINARY} forks <artefact> --lineage-dir DIR
  ${VERIFY_BINARY} consistency <OLD> <NEW> [--operator-key PEM | --operator-fingerprint HEX]
  ${VERIFY_BINARY} attachments <DIR>
  ${VERIFY_BINARY} --version | --help

pack    Checks a compliance pack without extracting it: archive structure (zip-slip names,
        duplicate or encrypted members, size limits), the manifest's canonical bytes, output
        hash, every input hash and the operator's signature; the lineage window (byte binding
        of every line, entry rules, dangling parents, unresolved forks, every agent signature
        and kid binding, conflicting cards); period, entry count, CSV and Article 12 figures.
        --operator-key PEM          the operator's public key (operator.pub) obtained out of band
        --operator-fingerprint HEX  SHA-256 of that key's DER, as the operator handed it over
        A pack of format 3 also carries the operator's signed checkpoint of the whole log and a
        batch inclusion proof that places every entry of the window in it.
chain   Verifies one artefact's entries in DIR/log.jsonl (signatures, kid binding, parents,
        forks); cards default to DIR/../agents. Then the log's signed checkpoints
        (DIR/checkpoints.jsonl): a deleted, inserted, reordered or truncated line fails,
        naming the checkpoint and the first differing leaf; lines after the latest checkpoint
        are counted; sidecars no line has are reported (orphaned signatures). The operator
        key defaults to DIR/../keys/operator.pub (unpinned).
        --checkpoint FILE  an older checkpoint kept elsewhere (document or pack): must match too
forks   Lists unresolved forks of one artefact (structural; signatures are not checked).
Foreign attestations (envelopes other systems issued about an entry, stored beside it or
carried in the pack) are reported one by one and never change the verdict: verified_foreign
only for format "jws-detached" signed by a key pinned with --trust-issuer KID=PEMFILE
(repeatable), otherwise unverifiable, rejected or malformed.
consistency  Checks that the checkpoint NEW extends OLD (each a checkpoint document or a
        pack): both signed by the operator key, same log, and NEW's RFC 9162 consistency
        proof from OLD's size bridges the roots. A rewritten, re-signed history fails as a
        "fork of history".
attachments  Checks an export of a run's attachments (bernstein attachments export): every
        byte string hashes to its digest, every attach event names exported bytes of the same
        MIME type, every spawn's blocks were attested to that spawn, and every lineage entry's
        attachment digests are exported and attested. Audit HMACs are not checked offline.

Output: "PASS <kind>: …" or "FAIL <kind>: N errors" and one line per error on stdout
(then foreign attestation verdicts and notes); one JSON object {ok, kind, stats, errors:
[{kind, message}]} on stderr, stats.foreign listing the foreign verdicts.
Exit: 0 every check passed, 1 anything failed or could not be read.`;

interface Parsed {
  command: string;
  positionals: string[];
  flags: Map<string, string>;
  /** Values of the repeatable `--trust-issuer`. */
  trusted: string[];
  help: boolean;
}

const REPEATABLE = new Set(["trust-issuer"]);

const COMMANDS: Record<string, { flags: string[]; positionals: string[] }> = {
  pack: {
    flags: ["operator-key", "operator-fingerprint", "trust-issuer"],
    positionals: ["pack.zip"],
  },
  chain: {
    flags: [
      "lineage-dir",
      "cards",
      "checkpoint",
      "operator-key",
      "operator-fingerprint",
      "trust-issuer",
    ],
    positionals: ["artefact"],
  },
  forks: { flags: ["lineage-dir"], positionals: ["artefact"] },
  consistency: { flags: ["operator-key", "operator-fingerprint"], positionals: ["OLD", "NEW"] },
  attachments: { flags: [], positionals: ["DIR"] },
};

/** A command line the verifier cannot run. */
class VerifyUsageError extends Error {}

function parse(argv: readonly string[]): Parsed {
  const [command, ...rest] = argv;
  const spec = COMMANDS[command];
  if (spec === undefined) {
    const near = closestMatch(command, Object.keys(COMMANDS));
    throw new VerifyUsageError(
      `unknown command ${JSON.stringify(command)}${
        near ? ` (did you mean '${near}'?)` : ""
      }; commands: pack, chain, forks, consistency, attachments`,
    );
  }
  const positionals: string[] = [];
  const flags = new Map<string, string>();
  const trusted: string[] = [];
  let help = false;
  let onlyPositionals = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (onlyPositionals || !arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    if (arg === "--") {
      onlyPositionals = true;
      continue;
    }
    if (arg === "--help" || arg === "-h") {
      help = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") ? arg.slice(2, eq < 0 ? undefined : eq) : "";
    if (!spec.flags.includes(name)) {
      const near = closestMatch(name, spec.flags);
      throw new VerifyUsageError(
        `${command}: unknown flag ${JSON.stringify(arg)}${
          near ? ` (did you mean --${near}?)` : ""
        }`,
      );
    }
    if (flags.has(name) && !REPEATABLE.has(name)) {
      throw new VerifyUsageError(`${command}: --${name} given twice`);
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else value = rest[++i];
    if (value === undefined || value === "") {
      throw new VerifyUsageError(`${command}: --${name} needs a value`);
    }
    if (REPEATABLE.has(name)) trusted.push(value);
    else flags.set(name, value);
  }
  if (!help) {
    if (positionals.length !== spec.positionals.length) {
      throw new VerifyUsageError(
        `${command}: expected ${
          spec.positionals.map((p) => `<${p}>`).join(" ")
        }, got ${positionals.length} argument(s)`,
      );
    }
  }
  return { command, positionals, flags, trusted, help };
}

function readOperatorKey(path: string): Uint8Array {
  let text: string;
  try {
    text = decodeUtf8Strict(Deno.readFileSync(path));
  } catch (error) {
    throw new VerifyUsageError(`--operator-key ${path}: cannot read: ${(error as Error).message}`);
  }
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new VerifyUsageError(
      `--operator-key ${path}: is a private key; pass the operator's public key (operator.pub)`,
    );
  }
  try {
    return decodePublicKeyPem(text);
  } catch (error) {
    throw new VerifyUsageError(`--operator-key ${path}: ${(error as Error).message}`);
  }
}

/** `--operator-key` / `--operator-fingerprint`: at most one, checked. */
function operatorPin(
  parsed: Parsed,
): { operatorPublicKey?: Uint8Array; operatorFingerprint?: string } {
  const keyPath = parsed.flags.get("operator-key");
  const fpText = parsed.flags.get("operator-fingerprint");
  if (keyPath !== undefined && fpText !== undefined) {
    throw new VerifyUsageError(
      `${parsed.command}: pass --operator-key or --operator-fingerprint, not both`,
    );
  }
  const operatorPublicKey = keyPath === undefined ? undefined : readOperatorKey(keyPath);
  let operatorFingerprint: string | undefined;
  if (fpText !== undefined) {
    operatorFingerprint = normalizeFingerprint(fpText);
    if (operatorFingerprint === undefined) {
      throw new VerifyUsageError(
        `--operator-fingerprint: ${JSON.stringify(fpText)} is not 64 hex characters`,
      );
    }
  }
  return { operatorPublicKey, operatorFingerprint };
}

// A checkpoint document is a few KiB; a pack is read whole only to take its checkpoint.
const MAX_INPUT_BYTES = 4 * 1024 * 1024 * 1024 - 1;

/** Reads a checkpoint document or pack given on the command line. */
function readInput(path: string): Uint8Array {
  const file = openFileBytes(path);
  try {
    if (file.size > MAX_INPUT_BYTES) throw new FileReadError(`${path}: too large`);
    return file.read(0, file.size).slice();
  } finally {
    file.close();
  }
}

/** The checkpoint document of `--checkpoint FILE` (a pack gives its `checkpoint.json`). */
function externalDocument(path: string): Uint8Array {
  const doc = checkpointDocumentBytes(readInput(path));
  if (typeof doc === "string") throw new VerifyUsageError(`--checkpoint ${path}: ${doc}`);
  return doc;
}

type Outcome =
  | { kind: "pack"; result: PackVerifyResult; subject: string }
  | { kind: "chain" | "forks"; result: LineageDirResult; subject: string }
  | { kind: "consistency"; result: ConsistencyResult; subject: string }
  | { kind: "attachments"; result: AttachmentsDirResult; subject: string };

const MAX_ERROR_LINES = 1000;

function report(io: VerifyCliIo, outcome: Outcome): number {
  const { result } = outcome;
  const errors = result.errors;
  if (result.ok) {
    if (outcome.kind === "pack") {
      const s = outcome.result.stats;
      io.stdout(`PASS pack: ${s.entries} entries, ${s.agents} agents`);
    } else if (outcome.kind === "chain") {
      const s = outcome.result.stats;
      const cp = s.checkpoint?.latest;
      io.stdout(
        `PASS chain ${outcome.subject}: ${s.entries} entries, ${s.agents} agents${
          cp
            ? `; log matches ${s.checkpoint?.matched} checkpoint(s), latest covers ${cp.size} lines`
            : ""
        }`,
      );
    } else if (outcome.kind === "attachments") {
      const s = outcome.result.stats;
      io.stdout(
        `PASS attachments ${outcome.subject}: run ${s.run_id}, ${s.items} byte string(s) match ` +
          `their digests, ${s.events} attach event(s), ${s.spawns} spawn(s), ${s.lineage} ` +
          "lineage entr" + (s.lineage === 1 ? "y" : "ies") + " backed",
      );
    } else if (outcome.kind === "consistency") {
      const s = outcome.result.stats;
      io.stdout(
        `PASS consistency: the ${s.log} log of ${outcome.subject} (size ${s.new?.size}, ${s.new?.ts}) extends the one of size ${s.old?.size} (${s.old?.ts}): it only grew`,
      );
    } else {
      const s = outcome.result.stats;
      io.stdout(
        `PASS forks ${outcome.subject}: no unresolved fork (${s.entries} entries, ${s.open_tips.length} open tip${
          s.open_tips.length === 1 ? "" : "s"
        })`,
      );
    }
  } else {
    const where = outcome.kind === "pack" || outcome.kind === "consistency"
      ? outcome.kind
      : `${outcome.kind} ${outcome.subject}`;
    io.stdout(`FAIL ${where}: ${errors.length} error${errors.length === 1 ? "" : "s"}`);
    for (const e of errors.slice(0, MAX_ERROR_LINES)) io.stdout(e.message);
    if (errors.length > MAX_ERROR_LINES) {
      io.stdout(
        `… and ${
          errors.length - MAX_ERROR_LINES
        } more errors (all of them are in the JSON on stderr)`,
      );
    }
  }
  // Foreign attestations are information about other systems' claims, never a verdict here.
  const foreign = "foreign" in result ? result.foreign : [];
  for (const f of foreign) io.stdout(foreignLine(f));
  for (const note of result.notes) io.stdout(`note: ${note}`);
  io.stderr(
    JSON.stringify({
      ok: result.ok,
      kind: outcome.kind,
      stats: {
        ...result.stats,
        notes: result.notes,
        ...("foreign" in result
          ? {
            foreign: foreign.map((f) => ({
              location: f.location,
              entry_hash: f.entry_hash,
              verdict: f.verdict,
              verified: f.verified,
              trust_class: f.trust_class,
              reason: f.reason,
            })),
          }
          : {}),
      },
      errors: errors.map((e: VerifyIssue) => ({ kind: e.kind, message: e.message })),
    }),
  );
  return result.ok ? 0 : 1;
}

function failure(io: VerifyCliIo, kind: string, error: VerifyIssue): number {
  io.stdout(`FAIL ${kind}: ${error.message}`);
  if (kind === "usage") io.stdout(`run '${VERIFY_BINARY} --help' for usage`);
  io.stderr(JSON.stringify({ ok: false, kind, stats: {}, errors: [error] }));
  return 1;
}

/**
 * Runs `bernstein-verify` with `argv` and returns the exit code (0 pass, 1 anything else).
 *
 * @example
 * ```ts
 * const code = await runVerifyCli(Deno.args, { stdout: console.log, stderr: console.error });
 * ```
 */
export async function runVerifyCli(argv: readonly string[], io: VerifyCliIo): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    io.stdout(`${VERIFY_BINARY} ${VERSION}`);
    return 0;
  }
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.stdout(VERIFY_HELP);
    return argv.length === 0 ? 1 : 0;
  }
  let parsed: Parsed;
  try {
    parsed = parse(argv);
  } catch (error) {
    if (!(error instanceof VerifyUsageError)) throw error;
    return failure(io, "usage", { kind: "usage", message: error.message });
  }
  if (parsed.help) {
    io.stdout(VERIFY_HELP);
    return 0;
  }
  const [subject] = parsed.positionals;
  try {
    const pin = operatorPin(parsed);
    let trustedIssuers: Map<string, Uint8Array>;
    try {
      trustedIssuers = trustedIssuerKeys(parsed.trusted, (p) => Deno.readFileSync(p));
    } catch (error) {
      throw new VerifyUsageError((error as Error).message);
    }
    if (parsed.command === "pack") {
      const file = openFileBytes(subject);
      try {
        const result = await verifyPack(file, { ...pin, trustedIssuers });
        return report(io, { kind: "pack", result, subject });
      } finally {
        file.close();
      }
    }
    if (parsed.command === "attachments") {
      return report(io, { kind: "attachments", result: verifyAttachmentsDir(subject), subject });
    }
    if (parsed.command === "consistency") {
      const [older, newer] = parsed.positionals;
      const result = verifyCheckpointConsistency(
        { name: older, bytes: readInput(older) },
        { name: newer, bytes: readInput(newer) },
        pin,
      );
      return report(io, { kind: "consistency", result, subject: newer });
    }
    const lineageDir = parsed.flags.get("lineage-dir");
    if (lineageDir === undefined) {
      throw new VerifyUsageError(`${parsed.command}: --lineage-dir DIR is required`);
    }
    const checkpointFile = parsed.flags.get("checkpoint");
    const result = parsed.command === "chain"
      ? await verifyChain(subject, {
        lineageDir,
        cardsDir: parsed.flags.get("cards"),
        ...pin,
        trustedIssuers,
        externalCheckpoints: checkpointFile === undefined
          ? undefined
          : [{ name: checkpointFile, bytes: externalDocument(checkpointFile) }],
      })
      : await verifyForks(subject, { lineageDir });
    return report(io, { kind: parsed.command as "chain" | "forks", result, subject });
  } catch (error) {
    if (error instanceof VerifyUsageError) {
      return failure(io, "usage", { kind: "usage", message: error.message });
    }
    if (error instanceof FileReadError) {
      return failure(io, parsed.command, { kind: "unreadable archive", message: error.message });
    }
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      return failure(io, parsed.command, {
        kind: "unreadable",
        message: `cannot read: ${(error as Error).message.split("\n")[0]}`,
      });
    }
    throw error;
  }
}
