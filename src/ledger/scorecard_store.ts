// The run scorecard: written from the verified ledger at the end of a run, found and verified
// again by `runs scorecard` and the report.

import { join } from "node:path";
import {
  canonicalBytes,
  compareCodePoints,
  JsonFloat,
  type JsonObject,
  type JsonValue,
  parseCanonicalLine,
} from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { writeFileIfAbsent } from "../io/mod.ts";
import { LedgerError } from "./errors.ts";
import { ledgerRelativePath, scorecardDir } from "./paths.ts";
import { deriveScorecard, divergingFields, scorecardEnvelope } from "./scorecard.ts";
import { readLedger } from "./store.ts";

/** A scorecard written to disk. */
export interface WrittenScorecard {
  /** `<sdd>/runs/<run-id>/scorecard/<sha256>.json`. */
  path: string;
  /** hex SHA-256 of the canon-ascii content. */
  sha256: string;
  /** The content. */
  content: JsonObject;
}

/**
 * Derives the scorecard of `runId` from its ledger (which must verify) and writes the
 * envelope under its content hash. Writing the same content twice is a no-op.
 */
export async function writeScorecard(sdd: string, runId: string): Promise<WrittenScorecard> {
  const ledger = await readLedger(sdd, runId);
  if (!ledger.ok) {
    throw new LedgerError(
      "ledger.chain_broken",
      `the ledger of run '${runId}' does not verify at line ${ledger.broken?.line}: ${ledger.broken?.reason}`,
      { location: ledger.path },
    );
  }
  const content = deriveScorecard(runId, ledger.rows);
  const envelope = scorecardEnvelope(content);
  const dir = scorecardDir(sdd, runId);
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${envelope.sha256}.json`);
  await writeFileIfAbsent(path, envelope.bytes);
  return { path, sha256: envelope.sha256, content };
}

/** A scorecard artefact as found on disk, checked for self-consistency. */
export interface StoredScorecard {
  /** The artefact file. */
  path: string;
  /** The `sha256` the envelope records (null when the envelope is unreadable). */
  recordedSha256: string | null;
  /** The content (null when the envelope is unreadable). */
  content: JsonObject | null;
  /** What is wrong with the artefact by itself (bytes, hash, name), if anything. */
  problem?: string;
}

const ARTEFACT_NAME = /^[0-9a-f]{64}\.json$/;

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    !(value instanceof JsonFloat);
}

/** Checks one artefact's bytes: canon-ascii envelope, recorded hash = content hash = name. */
export function checkScorecardArtefact(
  name: string,
  bytes: Uint8Array,
): Omit<StoredScorecard, "path"> {
  const parsed = parseCanonicalLine(bytes, "canon-ascii");
  if (!parsed.ok) {
    return {
      recordedSha256: null,
      content: null,
      problem: `artefact is not canon-ascii JSON (${parsed.reason})`,
    };
  }
  const env = parsed.value;
  if (!isObject(env) || Object.keys(env).sort().join(",") !== "content,sha256") {
    return {
      recordedSha256: null,
      content: null,
      problem: "artefact is not an envelope {content, sha256}",
    };
  }
  const recorded = typeof env.sha256 === "string" ? env.sha256 : null;
  const content = isObject(env.content) ? env.content : null;
  if (recorded === null || content === null) {
    return {
      recordedSha256: recorded,
      content,
      problem: "envelope sha256 must be a string and content an object",
    };
  }
  const actual = sha256Hex(canonicalBytes(content, "canon-ascii"));
  if (actual !== recorded) {
    return {
      recordedSha256: recorded,
      content,
      problem:
        `recorded sha256 ${recorded} is not the content's hash ${actual} (the content was edited)`,
    };
  }
  if (name !== `${recorded}.json`) {
    return {
      recordedSha256: recorded,
      content,
      problem: `file name ${name} does not match the recorded sha256`,
    };
  }
  return { recordedSha256: recorded, content };
}

function ledgerRows(stored: StoredScorecard): number {
  const ev = stored.content?.evidence;
  return isObject(ev) && typeof ev.ledger_rows === "number" ? ev.ledger_rows : -1;
}

/**
 * Finds the scorecard artefact of `runId`: when a resumed run left several, the one covering
 * the most ledger rows (ties: name order). Undefined when there is none.
 */
export async function findScorecard(
  sdd: string,
  runId: string,
): Promise<StoredScorecard | undefined> {
  const dir = scorecardDir(sdd, runId);
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && ARTEFACT_NAME.test(entry.name)) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  names.sort(compareCodePoints);
  let best: StoredScorecard | undefined;
  for (const name of names) {
    const path = join(dir, name);
    const stored: StoredScorecard = {
      path,
      ...checkScorecardArtefact(name, await Deno.readFile(path)),
    };
    if (best === undefined || ledgerRows(stored) > ledgerRows(best)) best = stored;
  }
  return best;
}

/** Why a verification ended the way it did. */
export type VerificationStatus =
  | "match"
  | "mismatch"
  | "artefact_missing"
  | "artefact_invalid"
  | "ledger_missing"
  | "ledger_broken";

/** Result of {@linkcode verifyScorecard}; the five JSON fields of `runs scorecard --verify --json`. */
export interface ScorecardVerification {
  /** What was found, as a stable word. */
  status: VerificationStatus;
  /** True when the artefact is intact and equals the scorecard recomputed from the ledger. */
  ok: boolean;
  /** The artefact's recorded sha256 (null when there is no readable artefact). */
  artifact_sha256: string | null;
  /** sha256 of the content recomputed from the ledger (null when the ledger is unusable). */
  recomputed_sha256: string | null;
  /** What was found: a match, the diverging fields, or what is missing or broken. */
  description: string;
  /** The artefact file (null when there is none). */
  artifact_path: string | null;
  /** The diverging content fields (empty on a match or when nothing could be compared). */
  diverging: string[];
}

/**
 * Recomputes the scorecard of `runId` from its ledger and compares it with the stored
 * artefact. Never throws for a missing or broken artefact or ledger: `ok` is false and the
 * description says why.
 */
export async function verifyScorecard(sdd: string, runId: string): Promise<ScorecardVerification> {
  const stored = await findScorecard(sdd, runId);
  let recomputed: JsonObject | undefined;
  let recomputedSha: string | null = null;
  let ledgerProblem: string | undefined;
  let ledgerStatus: VerificationStatus = "ledger_broken";
  try {
    const ledger = await readLedger(sdd, runId);
    if (!ledger.ok) {
      ledgerProblem =
        `the ledger does not verify at line ${ledger.broken?.line}: ${ledger.broken?.reason}`;
    } else {
      recomputed = deriveScorecard(runId, ledger.rows);
      recomputedSha = scorecardEnvelope(recomputed).sha256;
    }
  } catch (error) {
    if (!(error instanceof LedgerError)) throw error;
    if (error.code === "ledger.missing") ledgerStatus = "ledger_missing";
    ledgerProblem = error.code === "ledger.missing"
      ? `run '${runId}' has no ledger (${ledgerRelativePath(runId)})`
      : error.message;
  }
  const base = {
    artifact_sha256: stored?.recordedSha256 ?? null,
    recomputed_sha256: recomputedSha,
    artifact_path: stored?.path ?? null,
  };
  if (stored === undefined) {
    return {
      ok: false,
      status: "artefact_missing",
      ...base,
      diverging: [],
      description: `run '${runId}' has no scorecard artefact (.sdd/runs/${runId}/scorecard/)` +
        (ledgerProblem ? `; ${ledgerProblem}` : ""),
    };
  }
  if (stored.problem !== undefined) {
    return {
      ok: false,
      status: "artefact_invalid",
      ...base,
      diverging: [],
      description: stored.problem,
    };
  }
  if (recomputed === undefined) {
    return {
      ok: false,
      status: ledgerStatus,
      ...base,
      diverging: [],
      description: ledgerProblem ?? "the ledger is unusable",
    };
  }
  const diverging = divergingFields(stored.content as JsonObject, recomputed);
  if (diverging.length === 0 && recomputedSha === stored.recordedSha256) {
    return {
      ok: true,
      status: "match",
      ...base,
      diverging,
      description: `the scorecard matches the ledger (${
        (recomputed.evidence as JsonObject).ledger_rows
      } rows)`,
    };
  }
  const shown = diverging.slice(0, 20).join(", ") +
    (diverging.length > 20 ? `, … (${diverging.length} in all)` : "");
  return {
    ok: false,
    status: "mismatch",
    ...base,
    diverging,
    description: `the scorecard differs from the ledger in: ${shown}`,
  };
}
