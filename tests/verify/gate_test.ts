// The gate over in-memory inputs (as an archive reader would feed it): forks and merges, split
// heads, card conflicts, check order, streaming framing, foreign attestations, JSON shape.
import { deepStrictEqual, equal, ok, strictEqual } from "node:assert/strict";
import { ed25519KeyPairFromSeed, signDetachedJws } from "../../src/crypto/mod.ts";
import {
  entryBytes,
  entryHashOfBytes,
  type LineageEntry,
  makeAgentCard,
  renderAgentCard,
  sealEntry,
  signForeignAttestation,
} from "../../src/lineage/mod.ts";
import {
  type CardFile,
  type ForeignAttestationInput,
  GATE_ISSUE_KINDS,
  gateResultToJson,
  gateVerdict,
  runLineageGate,
} from "../../src/verify/mod.ts";

const enc = new TextEncoder();
const KEY = enc.encode("k");

interface Agent {
  id: string;
  kid: string;
  seed: Uint8Array;
  publicKey: Uint8Array;
}

function agent(id: string, n: number): Agent {
  const pair = ed25519KeyPairFromSeed(new Uint8Array(32).fill(n));
  return { id, kid: `kid-${n}`, seed: pair.seed, publicKey: pair.publicKey };
}

const alice = agent("alice", 1);
const bob = agent("bob", 2);

class Log {
  lines: Uint8Array[] = [];
  sigs = new Map<string, Uint8Array>();
  ts = 1_700_000_000_000_000_000n;

  add(by: Agent, path: string, content: string, parents: string[]): string {
    const entry: LineageEntry = sealEntry({
      artefact_path: path,
      artefact_kind: "file",
      content_hash: "sha256:" + "0".repeat(63) + (content.length % 10),
      parent_hashes: parents,
      agent_id: by.id,
      agent_card_kid: by.kid,
      tool_call_id: "tc",
      span_id: "sp",
      ts_ns: this.ts++,
    }, KEY);
    const line = entryBytes(entry);
    const hash = entryHashOfBytes(line);
    this.lines.push(line);
    this.sigs.set(hash, enc.encode(signDetachedJws(by.seed, line, { kid: by.kid })));
    return hash;
  }

  bytes(): Uint8Array {
    const parts = this.lines.flatMap((l) => [...l, 0x0a]);
    return new Uint8Array(parts);
  }
}

function cards(...agents: Agent[]): CardFile[] {
  return agents.map((a) => ({
    location: `${a.id}/card.json`,
    bytes: renderAgentCard(makeAgentCard(a.id, { kid: a.kid, publicKey: a.publicKey })),
  }));
}

function gate(log: Log, extra: Partial<Parameters<typeof runLineageGate>[0]> = {}) {
  return runLineageGate({
    log: log.bytes(),
    signatures: (h) => log.sigs.get(h),
    cards: cards(alice, bob),
    operatorKey: KEY,
    ...extra,
  });
}

Deno.test("a fork is an unresolved fork until a merge entry lists all its children", async () => {
  const log = new Log();
  const root = log.add(alice, "f", "x", []);
  const c1 = log.add(alice, "f", "xy", [root]);
  const c2 = log.add(bob, "f", "xyz", [root]);
  const before = await gate(log);
  deepStrictEqual(before.issues.map((i) => i.kind), ["unresolved fork"]);
  ok(before.issues[0].message.includes(c1) && before.issues[0].message.includes(c2));
  strictEqual(before.issues[0].artefact, "f");
  strictEqual(before.issues[0].entry_hash, root);

  const partial = new Log();
  partial.lines = [...log.lines];
  partial.sigs = new Map(log.sigs);
  const c3 = partial.add(bob, "f", "abcd", [root]);
  partial.add(alice, "f", "merged", [c1, c2]); // covers c1, c2 but not the later c3
  const stillOpen = await gate(partial);
  ok(stillOpen.issues.some((i) => i.kind === "unresolved fork" && i.message.includes(c3)));

  log.add(alice, "f", "merged", [c1, c2]);
  const after = await gate(log);
  deepStrictEqual(after.issues, []);
});

Deno.test("re-recording the same content under one parent is not a fork", async () => {
  const log = new Log();
  const root = log.add(alice, "f", "x", []);
  const a = log.add(alice, "f", "same", [root]);
  const b = log.add(bob, "f", "same", [root]);
  const result = await gate(log);
  // Not a fork, but still two heads: reported as such, naming both.
  deepStrictEqual(result.issues.map((i) => i.kind), ["unresolved fork"]);
  ok(result.issues[0].message.includes("2 open tips"));
  ok(result.issues[0].message.includes(a) && result.issues[0].message.includes(b));
});

Deno.test("two genesis entries of one artefact are two unmerged heads", async () => {
  const log = new Log();
  const a = log.add(alice, "g", "1", []);
  const b = log.add(bob, "g", "22", []);
  deepStrictEqual((await gate(log)).issues.map((i) => i.kind), ["unresolved fork"]);
  log.add(alice, "g", "333", [a, b]);
  deepStrictEqual((await gate(log)).issues, []);
});

Deno.test("parents in other artefacts keep both heads intact", async () => {
  const log = new Log();
  const a = log.add(alice, "a", "1", []);
  log.add(bob, "b", "22", [a]);
  log.add(alice, "a", "333", [a]);
  deepStrictEqual((await gate(log)).issues, []);
});

Deno.test("issues come in check order: framing, per line in line order, forks, cards", async () => {
  const log = new Log();
  const root = log.add(alice, "f", "x", []);
  log.add(alice, "f", "xy", [root]);
  log.add(bob, "f", "xyz", [root]);
  const bytes = log.bytes();
  const torn = bytes.subarray(0, bytes.length - 1); // strip the final newline
  const conflicting: CardFile[] = [
    ...cards(alice, bob),
    {
      location: "bob/kid-2/card.json",
      bytes: renderAgentCard(
        makeAgentCard("bob", { kid: "kid-2", publicKey: agent("x", 9).publicKey }),
      ),
    },
  ];
  const result = await runLineageGate({
    log: torn,
    signatures: (h) => log.sigs.get(h),
    cards: conflicting,
    operatorKey: enc.encode("wrong key"),
  });
  deepStrictEqual(result.issues.map((i) => `${i.line ?? "-"} ${i.kind}`), [
    "3 missing trailing newline",
    "1 HMAC mismatch",
    "2 HMAC mismatch",
    "3 kid binding cannot be established",
    "3 HMAC mismatch",
    "- unresolved fork",
    "- conflicting agent cards",
  ]);
  for (const issue of result.issues) ok(GATE_ISSUE_KINDS.includes(issue.kind));
  strictEqual(gateVerdict(result), "FAIL (7 issues)");
});

Deno.test("a wrong or hostile expectedEntries hint changes no issue", async () => {
  const log = new Log();
  const root = log.add(alice, "f", "x", []);
  log.add(alice, "f", "xy", [root]);
  log.add(bob, "f", "xyz", [root]); // a fork
  const other = new Log();
  const missing = other.add(alice, "g", "1", []);
  log.add(bob, "g", "22", [missing]); // a dangling parent
  const want = (await gate(log)).issues;
  deepStrictEqual(want.map((i) => i.kind), ["dangling parent_hash", "unresolved fork"]);
  for (const hint of [0, 1, 3, 4, 2_000_000, 1e15, -1, Number.NaN, Infinity]) {
    const got = await gate(log, { expectedEntries: hint });
    deepStrictEqual(got.issues, want, String(hint));
    strictEqual(got.entries, 4);
  }
});

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

Deno.test("the log may arrive in chunks of any size, split anywhere", async () => {
  const log = new Log();
  let prev = log.add(alice, "f", "x", []);
  for (let i = 0; i < 30; i++) prev = log.add(i % 2 ? alice : bob, "f", "x".repeat(i + 2), [prev]);
  const bytes = log.bytes();
  for (const size of [1, 7, 64, 333, 4096]) {
    const result = await runLineageGate({
      log: chunked(bytes, size),
      signatures: (h) => Promise.resolve(log.sigs.get(h)),
      cards: cards(alice, bob),
      operatorKey: KEY,
    });
    deepStrictEqual(result.issues, [], `chunk size ${size}`);
    strictEqual(result.entries, 31);
  }
});

Deno.test("an overlong line is reported without buffering it and the rest still checks", async () => {
  const log = new Log();
  log.add(alice, "f", "x", []);
  const junk = new Uint8Array(5000).fill(0x61);
  const bytes = new Uint8Array([...junk, 0x0a, ...log.bytes()]);
  const result = await runLineageGate({
    log: bytes,
    signatures: (h) => log.sigs.get(h),
    cards: cards(alice),
    operatorKey: KEY,
    maxLineBytes: 1000,
  });
  deepStrictEqual(result.issues.map((i) => `${i.line} ${i.kind}`), ["1 non-canonical line bytes"]);
  strictEqual(result.entries, 1);
});

Deno.test("an empty log passes; a log of only a newline does not", async () => {
  const empty = await runLineageGate({
    log: new Uint8Array(0),
    signatures: () => undefined,
    cards: [],
  });
  equal(empty.ok, true);
  const nl = await runLineageGate({
    log: new Uint8Array([0x0a]),
    signatures: () => undefined,
    cards: [],
  });
  deepStrictEqual(nl.issues.map((i) => i.kind), ["non-canonical line bytes"]);
});

Deno.test("unreadable sidecars and cards are reported as problems, not thrown", async () => {
  const log = new Log();
  log.add(alice, "f", "x", []);
  const result = await runLineageGate({
    log: log.bytes(),
    signatures: () => ({ problem: "is a symlink (refused)" }),
    cards: [...cards(alice), { location: "evil", problem: "card folder is a symlink (refused)" }],
    operatorKey: KEY,
  });
  deepStrictEqual(result.issues.map((i) => i.kind), ["invalid signature", "invalid agent card"]);
});

function attestation(content: string, format = "in-toto") {
  return {
    issuer: "ci.example",
    issuer_key_id: "ci-1",
    content_hash: content,
    claimed_subject: "f",
    trust_class: "third_party" as const,
    envelope: { format, payload_hash: "sha256:" + "e".repeat(64) },
  };
}

function signed(content: string, by: Agent) {
  const { envelope: _, ...statement } = attestation(content);
  return signForeignAttestation(statement, "sha256:" + "e".repeat(64), by.seed);
}

Deno.test("foreign attestation verdicts never change the local chain's verdict", async () => {
  const log = new Log();
  const h = log.add(alice, "f", "x", []);
  const content = "sha256:" + "0".repeat(63) + "1";
  const issuer = agent("issuer", 7);
  const trustedIssuers = new Map([["ci-1", issuer.publicKey]]);
  const badInner = signed(content, issuer);
  (badInner.envelope as { signature: string }).signature = "not a jws";
  const inputs = [
    { entry_hash: h, location: "a1", attestation: attestation(content) },
    // An issuer key for an unknown format verifies nothing.
    { entry_hash: h, location: "a2", attestation: attestation(content) },
    { entry_hash: h, location: "a3", attestation: signed(content, issuer) },
    { entry_hash: h, location: "a4", attestation: signed(content, bob) },
    { entry_hash: h, location: "a5", attestation: { issuer: "x" } },
    { entry_hash: h, location: "a6", attestation: badInner },
    { entry_hash: h, location: "a7", attestation: signed("sha256:" + "1".repeat(64), issuer) },
    {
      entry_hash: "sha256:" + "9".repeat(64),
      location: "a8",
      attestation: signed(content, issuer),
    },
    { entry_hash: h, location: "a9", problem: "not JSON" },
  ] as ForeignAttestationInput[];
  const good = await gate(log, { foreignAttestations: inputs, trustedIssuers });
  equal(good.ok, true);
  deepStrictEqual(good.foreign.map((f) => [f.location, f.verdict, f.trust_class]), [
    ["a1", "unverifiable", "third_party"],
    ["a2", "unverifiable", "third_party"],
    ["a3", "verified_foreign", "third_party"],
    ["a4", "rejected", "public"],
    ["a5", "malformed", "public"],
    ["a6", "malformed", "public"],
    ["a7", "rejected", "public"],
    ["a8", "rejected", "public"],
    ["a9", "malformed", "public"],
  ]);
  ok(good.foreign[1].reason.includes('no verifier for format "in-toto"'));
  // Without the pinned key the signed one is unverifiable, not verified.
  const unpinned = await gate(log, { foreignAttestations: inputs });
  strictEqual(unpinned.foreign[2].verdict, "unverifiable");
  // A failing chain stays failing, whatever the attestations say.
  const bad = await gate(log, {
    foreignAttestations: inputs,
    trustedIssuers,
    operatorKey: enc.encode("other"),
  });
  equal(bad.ok, false);
  deepStrictEqual(bad.foreign.map((f) => f.verdict), good.foreign.map((f) => f.verdict));
});

Deno.test("the JSON report has a stable shape with nulls for absent fields", async () => {
  const log = new Log();
  log.add(alice, "f", "x", []);
  const result = await gate(log, { cards: [] });
  const json = gateResultToJson(result);
  strictEqual(json.verdict, "FAIL (1 issue)");
  deepStrictEqual(Object.keys(json).sort(), [
    "artefacts",
    "cards",
    "checkpoint",
    "entries",
    "foreign",
    "hmac_checked",
    "issues",
    "lines",
    "ok",
    "verdict",
  ]);
  deepStrictEqual(json.issues, [{
    kind: "kid binding cannot be established",
    message: result.issues[0].message,
    line: 1,
    entry_hash: result.issues[0].entry_hash ?? null,
    artefact: "f",
    location: null,
  }]);
});
