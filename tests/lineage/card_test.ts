// Agent cards: folder names, strict parsing, both layouts, conflicts never resolved by order.
import { deepStrictEqual, equal, ok, strictEqual, throws } from "node:assert/strict";
import { ed25519KeyPairFromSeed, encodePublicKeyPem } from "../../src/crypto/mod.ts";
import {
  AgentCardError,
  AgentCardSet,
  agentDirName,
  cardLayoutOf,
  kidForPublicKey,
  makeAgentCard,
  parseAgentCard,
  renderAgentCard,
} from "../../src/lineage/mod.ts";

const enc = new TextEncoder();
const key = (n: number) => ed25519KeyPairFromSeed(new Uint8Array(32).fill(n)).publicKey;

Deno.test("folder names keep [A-Za-z0-9._-] and replace everything else by _", () => {
  strictEqual(agentDirName("claude-1"), "claude-1");
  strictEqual(agentDirName("agent:codex/2"), "agent_codex_2");
  strictEqual(agentDirName("é😀 x"), "___x");
  for (const bad of ["", ".", ".."]) throws(() => agentDirName(bad), AgentCardError);
});

Deno.test("a card round-trips and its kid is derived from the key", () => {
  const card = makeAgentCard("a/b", { kid: kidForPublicKey(key(1)), publicKey: key(1) });
  const parsed = parseAgentCard(renderAgentCard(card));
  deepStrictEqual(parsed.card, card);
  deepStrictEqual(parsed.publicKey, key(1));
  strictEqual(card.kid.length, 16);
  equal(kidForPublicKey(key(2)) === card.kid, false);
});

Deno.test("card parsing refuses missing fields, other protocols and non-Ed25519 keys", () => {
  const card = makeAgentCard("a", { kid: "k", publicKey: key(1) });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...card, agent_id: undefined }, /agent_id/],
    [{ ...card, kid: "" }, /kid/],
    [{ ...card, protocol_version: "a2a/2.0" }, /protocol_version/],
    [
      { ...card, public_key_pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n" },
      /public_key_pem/,
    ],
  ];
  for (const [body, why] of cases) {
    throws(
      () => parseAgentCard(enc.encode(JSON.stringify(body)), "x/card.json"),
      (e: Error) => e instanceof AgentCardError && why.test(e.message),
    );
  }
  throws(() => parseAgentCard(enc.encode("{"), "x"), AgentCardError);
  throws(() => parseAgentCard(enc.encode("[]"), "x"), AgentCardError);
  // Extra A2A fields are allowed; the four lineage fields are what counts.
  const extra = parseAgentCard(enc.encode(JSON.stringify({ ...card, name: "Claude", url: "x" })));
  deepStrictEqual(extra.card, card);
});

Deno.test("layouts: <dir>/card.json and <dir>/<kid>/card.json, nothing else", () => {
  strictEqual(cardLayoutOf("claude-1/card.json"), "single");
  strictEqual(cardLayoutOf("claude-1/0123/card.json"), "per-kid");
  for (
    const p of ["card.json", "a/b/c/card.json", "a/other.json", "../a/card.json", "a//card.json"]
  ) {
    strictEqual(cardLayoutOf(p), undefined, p);
  }
});

Deno.test("the same card filed twice is fine; two different keys for one (agent, kid) conflict", () => {
  const a = renderAgentCard(makeAgentCard("a", { kid: "k1", publicKey: key(1) }));
  const set = new AgentCardSet();
  set.add("a/card.json", a);
  set.add("a/k1/card.json", a);
  deepStrictEqual(set.issues(), []);
  strictEqual(set.lookup("a", "k1").status, "found");
  strictEqual(set.lookup("a", "k2").status, "missing");
  strictEqual(set.lookup("b", "k1").status, "missing");
  // The conflicting card, read in either order, makes the key resolve to nothing.
  for (const order of [[0, 1], [1, 0]]) {
    const s = new AgentCardSet();
    const files: [string, Uint8Array][] = [
      ["a/card.json", a],
      ["a/k1/card.json", renderAgentCard(makeAgentCard("a", { kid: "k1", publicKey: key(2) }))],
    ];
    for (const i of order) s.add(files[i][0], files[i][1]);
    const look = s.lookup("a", "k1");
    strictEqual(look.status, "conflict");
    const issues = s.issues();
    deepStrictEqual(issues.map((i) => i.kind), ["conflicting agent cards"]);
    strictEqual(issues[0].location, "a/card.json, a/k1/card.json");
  }
});

Deno.test("a misfiled card speaks only for the identity in its body", () => {
  const set = new AgentCardSet();
  set.add(
    "mallory/card.json",
    renderAgentCard(makeAgentCard("alice", { kid: "k", publicKey: key(3) })),
  );
  strictEqual(set.lookup("mallory", "k").status, "missing");
  strictEqual(set.lookup("alice", "k").status, "found");
  const pem = encodePublicKeyPem(key(3));
  ok(pem.startsWith("-----BEGIN PUBLIC KEY-----\n"));
});
