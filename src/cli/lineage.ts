// `bernstein lineage …`: the gate for CI, read commands over the signed lineage log, merges by
// the steward identity, and reindexing of the projections.
import type { JsonObject } from "../canonical/mod.ts";
import type { LoggedEntry } from "../lineage/store/mod.ts";
import { CHECKPOINT_FLAG, EXPORT_FLAGS, OPERATOR_KEY_FLAG } from "./_checkpoint.ts";
import { TRUST_ISSUER_FLAG } from "./_attest.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, numberFlag, stringArg, stringFlag } from "./spec.ts";
import { sddFolder } from "../io/mod.ts";

async function projectStore(ctx: CommandContext) {
  const { findProject } = await import("../config/mod.ts");
  const { openLineageStore, resolveOperatorHmacKey } = await import("../lineage/store/mod.ts");
  const { systemRandom } = await import("../io/mod.ts");
  const project = await findProject(ctx.cwd);
  const store = openLineageStore({
    sdd: project.sdd,
    // Only commands that write (merge) ever resolve it; a writer may create the audit key.
    operatorKey: () => resolveOperatorHmacKey({ env: ctx.env, createWith: systemRandom }),
    warn: (w) => ctx.out.warn(w),
  });
  return { project, store };
}

/** The artefact argument, checked: a bad key is a usage error (exit 2). */
async function artefactArg(ctx: CommandContext): Promise<string> {
  const artefact = stringArg(ctx, "artefact") ?? "";
  const { artefactKeyProblem } = await import("../lineage/mod.ts");
  const problem = artefactKeyProblem(artefact);
  if (problem !== undefined) {
    const { UsageError } = await import("../errors/mod.ts");
    throw new UsageError(
      "lineage.artefact_invalid",
      `artefact ${JSON.stringify(artefact)} ${problem}`,
      { hint: "use a repo-relative path or a pr://, pkg://, deploy:// or doc:// URI" },
    );
  }
  return artefact;
}

/** One logged entry for `--json`: its line and hash, then the entry without v and HMAC. */
async function entriesJson(
  ctx: CommandContext,
  lineageDir: string,
  logged: readonly LoggedEntry[],
): Promise<JsonObject[]> {
  const { entryToJson } = await import("../lineage/mod.ts");
  const { attestationJson, attestationsOf } = await import("./_attest.ts");
  const attested = await attestationsOf(ctx, lineageDir, logged);
  return logged.map((e) => {
    const { v: _v, operator_hmac: _hmac, ...fields } = entryToJson(e.entry);
    return {
      line: e.line,
      entry_hash: e.hash,
      ...fields,
      attestations: (attested.get(e.hash) ?? []).map(attestationJson),
    };
  });
}

/** The merge policy used when `--policy` is not given (the lineage design's default). */
const DEFAULT_MERGE_POLICY = "human";

function short(hash: string): string {
  return hash.startsWith("sha256:") ? hash.slice(7, 19) : hash.slice(0, 12);
}

function isoOf(tsNs: bigint): string {
  return new Date(Number(tsNs / 1_000_000n)).toISOString();
}

async function printEntries(
  ctx: CommandContext,
  lineageDir: string,
  entries: LoggedEntry[],
): Promise<void> {
  const { alignColumns } = await import("./output.ts");
  const { attestationsOf } = await import("./_attest.ts");
  const attested = await attestationsOf(ctx, lineageDir, entries);
  const rows = entries.map((e) => [
    short(e.hash),
    isoOf(e.entry.ts_ns),
    e.entry.agent_id,
    e.entry.parent_hashes.length === 0
      ? "genesis"
      : e.entry.parent_hashes.length >= 2
      ? `merge of ${e.entry.parent_hashes.map(short).join(",")}`
      : `after ${short(e.entry.parent_hashes[0])}`,
    short(e.entry.content_hash),
    e.entry.artefact_path,
  ]);
  alignColumns(rows).forEach((row, i) => {
    ctx.out.line(row);
    for (const f of attested.get(entries[i].hash) ?? []) {
      ctx.out.line(
        `    attestation ${f.location}: ${f.verdict} (trust ${f.trust_class}): ${f.reason}`,
      );
    }
  });
}

async function gate(ctx: CommandContext): Promise<number> {
  const { join, resolve } = await import("node:path");
  const { findProject } = await import("../config/mod.ts");
  const verify = await import("../verify/mod.ts");
  const project = await findProject(ctx.cwd);
  const logFlag = stringFlag(ctx, "log");
  const cardsFlag = stringFlag(ctx, "cards");
  const logPath = logFlag === undefined
    ? join(sddFolder(project.sdd, "lineage"), "log.jsonl")
    : resolve(ctx.cwd, logFlag);
  const cardsDir = cardsFlag === undefined
    ? sddFolder(project.sdd, "agents")
    : resolve(ctx.cwd, cardsFlag);
  const skipHmac = booleanFlag(ctx, "skip-hmac");
  const { UsageError } = await import("../errors/mod.ts");
  const workersFlag = numberFlag(ctx, "workers");
  if (workersFlag !== undefined && (!Number.isInteger(workersFlag) || workersFlag < 0)) {
    throw new UsageError("cli.bad_flag", "--workers expects a whole number ≥ 0");
  }
  const exists = await Deno.lstat(logPath).then(() => true, (e) => {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  });
  if (!exists) {
    if (ctx.json) {
      ctx.out.json({ ok: true, skipped: true, verdict: "SKIPPED", log: logPath, issues: [] });
    } else ctx.out.line(`SKIPPED: no lineage log at ${logPath}`);
    return 0;
  }
  let operatorKey: Uint8Array | undefined;
  if (!skipHmac) {
    const { resolveOperatorHmacKey } = await import("../lineage/store/mod.ts");
    // A verifier never creates keys: a missing audit key is exit 3.
    operatorKey = await resolveOperatorHmacKey({ env: ctx.env });
  }
  const checkpoints = await import("./_checkpoint.ts");
  const key = await checkpoints.verificationKey(ctx, project.sdd);
  const { trustedIssuers } = await import("./_attest.ts");
  const opened = await verify.openDirectoryGateInput({
    logPath,
    cardsDir,
    operatorKey,
    operatorPublicKey: key.publicKey,
    externalCheckpoints: await checkpoints.externalCheckpointFiles(ctx),
    trustedIssuers: await trustedIssuers(ctx),
  });
  if (opened === undefined) {
    ctx.out.line(`SKIPPED: no lineage log at ${logPath}`);
    return 0;
  }
  const workers = workersFlag ?? verify.defaultGateWorkers();
  let result;
  try {
    result = await verify.runLineageGate(opened.input, { workers });
  } finally {
    opened.close();
  }
  if (ctx.json) {
    ctx.out.json({
      ...verify.gateResultToJson(result),
      skipped: false,
      log: logPath,
      cards_dir: cardsDir,
      operator_key: key.source,
    });
  } else {
    for (const issue of result.issues) ctx.out.line(issue.message);
    ctx.out.line(
      `checked ${result.entries} entries (${result.lines} lines) across ${result.artefacts} artefacts with ${result.cards} cards; HMAC ${
        result.hmac_checked ? "checked" : "NOT checked (--skip-hmac)"
      }`,
    );
    if (result.checkpoint !== null) {
      ctx.out.line(checkpoints.checkpointSummary(result.checkpoint, key));
    }
    // Foreign attestations never change the verdict: they are listed for the reader.
    for (const f of result.foreign) ctx.out.line(verify.foreignLine(f));
    ctx.out.line(verify.gateVerdict(result));
  }
  return result.ok ? 0 : 1;
}

async function checkpoint(ctx: CommandContext): Promise<number> {
  const { project, store } = await projectStore(ctx);
  const { writeCheckpointCommand } = await import("./_checkpoint.ts");
  return await writeCheckpointCommand(ctx, {
    sdd: project.sdd,
    dir: store.paths.lineageDir,
    log: "lineage",
    logName: "log.jsonl",
    write: (signer) => store.checkpoint(signer),
  });
}

async function chain(ctx: CommandContext): Promise<number> {
  const artefact = await artefactArg(ctx);
  const { store } = await projectStore(ctx);
  const entries = await store.chain(artefact);
  const dir = store.paths.lineageDir;
  if (ctx.json) {
    ctx.out.json({ artefact, entries: await entriesJson(ctx, dir, entries) });
    return 0;
  }
  if (entries.length === 0) {
    ctx.out.line(`no lineage entries for ${artefact}`);
    return 0;
  }
  await printEntries(ctx, dir, entries);
  return 0;
}

async function walk(ctx: CommandContext): Promise<number> {
  const artefact = await artefactArg(ctx);
  const { store } = await projectStore(ctx);
  const result = await store.walk(artefact);
  const dir = store.paths.lineageDir;
  if (ctx.json) {
    ctx.out.json({
      artefact,
      entries: await entriesJson(ctx, dir, result.entries),
      missing: result.missing,
    });
    return 0;
  }
  if (result.entries.length === 0) {
    ctx.out.line(`no lineage entries for ${artefact}`);
    return 0;
  }
  await printEntries(ctx, dir, result.entries);
  for (const m of result.missing) ctx.out.line(`missing parent ${m} (not in the log)`);
  return 0;
}

async function forks(ctx: CommandContext): Promise<number> {
  const artefact = stringArg(ctx, "artefact") === undefined ? undefined : await artefactArg(ctx);
  const { store } = await projectStore(ctx);
  const found = await store.forks(artefact);
  const unresolved = found.forks.length + found.splitHeads.length;
  if (ctx.json) {
    ctx.out.json({
      ok: unresolved === 0,
      forks: found.forks.map((f) => ({
        artefact_path: f.artefact_path,
        parent_hash: f.parent_hash,
        children: f.children,
      })),
      split_heads: found.splitHeads.map((s) => ({ artefact_path: s.artefact_path, open: s.open })),
    });
    return unresolved === 0 ? 0 : 1;
  }
  if (unresolved === 0) {
    ctx.out.line(
      artefact === undefined ? "no unresolved forks" : `no unresolved fork in ${artefact}`,
    );
    return 0;
  }
  for (const f of found.forks) {
    ctx.out.line(`${f.artefact_path}: fork detected at ${f.parent_hash}`);
    for (const c of f.children) ctx.out.line(`  child ${c}`);
  }
  for (const s of found.splitHeads) {
    ctx.out.line(`${s.artefact_path}: fork detected: ${s.open.length} open heads`);
    for (const h of s.open) ctx.out.line(`  head ${h}`);
  }
  ctx.out.line(`resolve with: bernstein lineage merge <artefact> --policy first-writer|agent:<id>`);
  return 1;
}

async function merge(ctx: CommandContext): Promise<number> {
  const artefact = await artefactArg(ctx);
  const { parseMergePolicy } = await import("../lineage/mod.ts");
  // The documented default is "human": it refuses and lists the heads, so no content wins
  // without someone choosing.
  const policyText = stringFlag(ctx, "policy") ?? DEFAULT_MERGE_POLICY;
  const policy = parseMergePolicy(policyText);
  const { store } = await projectStore(ctx);
  const result = await store.merge(artefact, { policy });
  if (ctx.json) {
    ctx.out.json({
      artefact,
      entry_hash: result.entryHash,
      winner: result.winner,
      parents: [...result.entry.parent_hashes],
      content_hash: result.entry.content_hash,
      agent_id: result.entry.agent_id,
      agent_card_kid: result.entry.agent_card_kid,
    });
    return 0;
  }
  ctx.out.line(`merged ${artefact}: ${result.entryHash}`);
  ctx.out.line(`  parents ${result.entry.parent_hashes.join(", ")}`);
  ctx.out.line(`  content of ${result.winner} (${result.entry.content_hash})`);
  ctx.out.line(`  signed by ${result.entry.agent_id} kid ${result.entry.agent_card_kid}`);
  return 0;
}

async function rotateKey(ctx: CommandContext): Promise<number> {
  const { join, relative } = await import("node:path");
  const agent = stringArg(ctx, "agent") ?? "";
  const lineage = await import("../lineage/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  try {
    lineage.agentDirName(agent);
  } catch (error) {
    throw new UsageError("lineage.agent_invalid", (error as Error).message);
  }
  const { project, store } = await projectStore(ctx);
  const { agentKeyDirName, rotateAgentKey } = await import("../lineage/store/mod.ts");
  const { readFileIfExists, systemRandom } = await import("../io/mod.ts");
  const active = await readFileIfExists(
    join(store.paths.keysDir, agentKeyDirName(agent), "active"),
  );
  const previous = active === undefined ? null : new TextDecoder().decode(active);
  const signer = await rotateAgentKey(store.paths, agent, { random: systemRandom });
  const card = join(store.paths.cardsDir, lineage.agentDirName(agent), signer.kid, "card.json");
  const where = relative(project.root, card);
  if (ctx.json) {
    ctx.out.json({ agent_id: agent, kid: signer.kid, previous_kid: previous, card: where });
    return 0;
  }
  ctx.out.line(
    `${agent}: new key ${signer.kid}${previous === null ? " (first key)" : ` (was ${previous})`}`,
  );
  ctx.out.line(`  card ${where}; earlier cards are kept, so entries signed before still verify`);
  return 0;
}

async function reindex(ctx: CommandContext): Promise<number> {
  const { store } = await projectStore(ctx);
  const report = await store.reindex();
  if (ctx.json) {
    ctx.out.json({ applied: report.applied, skipped: report.skipped });
  } else {
    ctx.out.line(
      `rebuilt by-artefact/ and tips/ from ${report.applied} entries` +
        (report.skipped > 0 ? ` (${report.skipped} invalid lines left out)` : ""),
    );
  }
  return 0;
}

/** The `lineage` group. */
export const LINEAGE_COMMANDS: CommandSpec[] = [
  {
    path: ["lineage", "gate"],
    summary: "Verify the lineage log, signatures and agent cards (CI gate).",
    description:
      "Checks, in order: trailing newline, canonical line bytes, entry rules, kid binding,\n" +
      "signatures, operator HMAC, dangling parents, unresolved forks, conflicting cards, then\n" +
      "the signed checkpoints (checkpoints.jsonl next to the log): every one must match the\n" +
      "log's lines (a deleted, inserted, reordered or truncated line fails, naming the\n" +
      "checkpoint and the first differing leaf), and sidecars no line of the log has\n" +
      "(orphaned signatures). Lines after the latest checkpoint are counted as not yet\n" +
      "checkpointed. Prints one line per issue, then PASS or FAIL (n issues). Exit 0 pass\n" +
      "(or no log: skipped), 1 fail, 3 no operator key (set BERNSTEIN_OPERATOR_SECRET or the\n" +
      "audit key, or pass --skip-hmac).\n" +
      "JSON: {ok, verdict, skipped, lines, entries, artefacts, cards, hmac_checked, log,\n" +
      "cards_dir, operator_key, issues: [{kind, message, line, entry_hash, artefact,\n" +
      "location}], foreign, checkpoint: {file, checkpoints, verified_signatures, matched,\n" +
      "external, latest: {where, size, root, ts} | null, not_checkpointed}}.",
    flags: [
      {
        name: "log",
        type: "string",
        valueName: "FILE",
        help: "Lineage log (default .sdd/lineage/log.jsonl).",
      },
      {
        name: "cards",
        type: "string",
        valueName: "DIR",
        help: "Agent cards folder (default .sdd/agents).",
      },
      {
        name: "skip-hmac",
        type: "boolean",
        help: "Do not check operator HMACs (no operator key available).",
      },
      {
        name: "workers",
        type: "number",
        valueName: "N",
        help:
          "Threads for the signature checks besides this one (default: one per spare core, max 3).",
      },
      OPERATOR_KEY_FLAG,
      CHECKPOINT_FLAG,
      TRUST_ISSUER_FLAG,
    ],
    json: true,
    examples: [
      "bernstein lineage gate",
      "bernstein lineage gate --json --skip-hmac",
      "bernstein lineage gate --checkpoint auditor-copy.json",
    ],
    run: gate,
  },
  {
    path: ["lineage", "checkpoint"],
    summary: "Sign a checkpoint of the lineage log (RFC 9162 root of every line).",
    description:
      "Appends {log, root, size, ts}, signed by the operator key (.sdd/keys/operator.key,\n" +
      "created when missing), to .sdd/lineage/checkpoints.jsonl and the covered line digests\n" +
      "to checkpoint-leaves.bin. Nothing is written when the log has not grown. Refuses when\n" +
      "the log no longer holds what the last checkpoint committed to. --out writes the\n" +
      "checkpoint document an auditor keeps; --from OLD adds the RFC 9162 consistency proof\n" +
      "that OLD is a prefix of it ('bernstein-verify consistency OLD NEW' checks it).\n" +
      "JSON: {log, created, line, checkpoint: {log, root, size, ts, signature},\n" +
      "operator_fingerprint, out, consistency_from: [size]}.",
    flags: EXPORT_FLAGS,
    json: true,
    examples: [
      "bernstein lineage checkpoint",
      "bernstein lineage checkpoint --out now.json --from auditor-copy.json",
    ],
    run: checkpoint,
  },
  {
    path: ["lineage", "chain"],
    summary: "Show every lineage entry of one artefact, oldest first.",
    description:
      "Each entry is followed by the foreign attestations stored beside it and their verdicts\n" +
      "(verified_foreign only with a key pinned by --trust-issuer).\n" +
      "JSON: {artefact, entries: [{line, entry_hash, artefact_path, artefact_kind,\n" +
      "content_hash, parent_hashes, agent_id, agent_card_kid, tool_call_id, span_id, ts_ns,\n" +
      "trust_class?, attachment_digests?, activity_source?, model_ref?, attestations:\n" +
      "[{location, verdict, verified, trust_class, reason}]}]}.",
    args: [{ name: "artefact", required: true, help: "Repo-relative path or artefact URI." }],
    flags: [TRUST_ISSUER_FLAG],
    json: true,
    run: chain,
  },
  {
    path: ["lineage", "walk"],
    summary: "Show the ancestry of an artefact across artefacts, following parents.",
    description: "JSON: {artefact, entries: [entry as in 'lineage chain'], missing: [entry hash]}.",
    args: [{ name: "artefact", required: true, help: "Repo-relative path or artefact URI." }],
    flags: [TRUST_ISSUER_FLAG],
    json: true,
    run: walk,
  },
  {
    path: ["lineage", "forks"],
    summary: "List unresolved forks (none on a clean tree).",
    description:
      "Each unresolved fork is printed as 'fork detected'. Exit 0 when there is none, 1 when\n" +
      "there is (like 'bernstein-verify forks').\n" +
      "JSON: {ok, forks: [{artefact_path, parent_hash, children: [entry hash]}],\n" +
      "split_heads: [{artefact_path, open: [entry hash]}]}.",
    args: [{ name: "artefact", help: "Only this artefact." }],
    json: true,
    run: forks,
  },
  {
    path: ["lineage", "merge"],
    summary: "Resolve an artefact's fork with a merge entry signed by the steward.",
    description:
      "The merge entry lists every child of the fork and every open head as parents; its\n" +
      "content is the winner's: first-writer (earliest ts_ns) or agent:<id> (that agent's\n" +
      "latest head). 'human' (the default) refuses and lists the heads: a person must pick\n" +
      "(exit 1, lineage.conflict).\n" +
      "JSON: {artefact, entry_hash, winner, parents, content_hash, agent_id, agent_card_kid}.",
    args: [{ name: "artefact", required: true, help: "Repo-relative path or artefact URI." }],
    flags: [
      {
        name: "policy",
        type: "string",
        valueName: "POLICY",
        default: DEFAULT_MERGE_POLICY,
        help: "first-writer | agent:<id> | human",
      },
    ],
    json: true,
    examples: ["bernstein lineage merge src/app.ts --policy first-writer"],
    run: merge,
  },
  {
    path: ["lineage", "attest", "import"],
    summary: "Store a foreign attestation beside the lineage record it names.",
    description: "FILE is a protocol-neutral envelope {issuer, issuer_key_id, content_hash,\n" +
      "claimed_subject, trust_class, envelope: {format, payload_hash, …}}. It is stored,\n" +
      "content-addressed, under .sdd/lineage/attestations/ beside the entry it is about:\n" +
      "--entry, or the latest entry of claimed_subject with that content_hash. It never\n" +
      "enters the log; chain, walk, the gate and packs show it with a verdict.\n" +
      "JSON: {entry_hash, artefact, path, created, issuer, format}.",
    args: [{ name: "file", required: true, help: "The attestation (JSON)." }],
    flags: [
      {
        name: "entry",
        type: "string",
        valueName: "HASH",
        help: "The entry it sits beside (sha256:…); default: found by subject and content.",
      },
    ],
    json: true,
    examples: ["bernstein lineage attest import ci-attestation.json"],
    run: async (ctx) => (await import("./_attest.ts")).attestImport(ctx),
  },
  {
    path: ["lineage", "verify"],
    summary: "Check that a recovery step's failure receipt resolves on its run's spine.",
    description:
      "Reads .sdd/lineage/<run>/spine.jsonl and spine.head: every row must chain (prev_hash),\n" +
      "hash (entry_hash) and authenticate (HMAC under a key derived from the audit key), and\n" +
      "the head must pin the last row and the count. The entry with --receipt-hash (the\n" +
      "task's metadata.recovery_receipt_hash) must exist, and the receipt file (--receipt-file,\n" +
      "else .sdd/lineage/receipts/<hex>.json) must be a well-formed receipt whose SHA-256 is the\n" +
      "entry's content_hash. Reads the audit key (--key-path, else BERNSTEIN_AUDIT_KEY_PATH or\n" +
      "the default location) and never creates one. Exit 0 resolves, 2 does not, 3 no audit key.\n" +
      "JSON: {ok, run_id, receipt_hash, spine, entries, line, content_hash, receipt_file,\n" +
      "receipt, problems: [{where, message}]}.",
    args: [{ name: "run", required: true, help: "The run id (bernstein runs list)." }],
    flags: [
      {
        name: "receipt-hash",
        type: "string",
        valueName: "sha256:HEX",
        help: "The spine entry hash stamped on the recovery task (required).",
      },
      {
        name: "receipt-file",
        type: "string",
        valueName: "PATH",
        help: "The receipt to check (default: the one the entry names).",
      },
      {
        name: "key-path",
        type: "string",
        valueName: "PATH",
        help: "The audit key (read only).",
      },
    ],
    json: true,
    examples: ["bernstein lineage verify calm-heron-1a2b3c --receipt-hash sha256:9f2c…"],
    run: async (ctx) => (await import("./_receipt.ts")).verifyReceiptCommand(ctx),
  },
  {
    path: ["lineage", "rotate-key"],
    summary: "Give an agent identity a fresh signing key (a new kid and per-kid card).",
    description:
      "Mints a new Ed25519 key for AGENT under .sdd/keys/agents/ (0600), publishes its card at\n" +
      ".sdd/agents/<agent>/<kid>/card.json and makes it the key new entries are signed with.\n" +
      "Earlier keys and cards stay, so everything signed before keeps verifying.\n" +
      "JSON: {agent_id, kid, previous_kid, card}.",
    args: [{ name: "agent", required: true, help: "The agent identity (e.g. claude-1)." }],
    json: true,
    examples: ["bernstein lineage rotate-key claude-1"],
    run: rotateKey,
  },
  {
    path: ["lineage", "reindex"],
    summary: "Rebuild by-artefact/ and tips/ from log.jsonl.",
    description: "JSON: {applied, skipped}.",
    json: true,
    run: reindex,
  },
];
