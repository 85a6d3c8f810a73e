// Card selection for a pack: by body, one per signing key; conflicts and gaps are reported.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { selectCards } from "../../src/compliance/mod.ts";
import { ed25519KeyPairFromSeed } from "../../src/crypto/mod.ts";
import { kidForPublicKey, makeAgentCard, renderAgentCard } from "../../src/lineage/mod.ts";

function card(agent: string, seed: number, kid?: string) {
  const pk = ed25519KeyPairFromSeed(new Uint8Array(32).fill(seed)).publicKey;
  const k = kid ?? kidForPublicKey(pk);
  return { kid: k, bytes: renderAgentCard(makeAgentCard(agent, { kid: k, publicKey: pk })) };
}

Deno.test("one card per signer, found by body whatever folder it is filed in", () => {
  const a = card("a", 1);
  const b = card("b", 2);
  const r = selectCards([
    { location: "x/card.json", bytes: a.bytes },
    { location: `a/${a.kid}/card.json`, bytes: a.bytes },
    { location: "b/card.json", bytes: b.bytes },
    { location: "c/card.json", bytes: card("c", 3).bytes },
  ], [{ agent_id: "a", kid: a.kid }, { agent_id: "b", kid: b.kid }]);
  deepStrictEqual(r.cards.map((c) => c.agent_id), ["a", "b"]);
  deepStrictEqual([r.missing, r.conflicts, r.unusable], [[], [], []]);
});

Deno.test("two keys for one signer conflict; a signer without card is missing", () => {
  const a = card("a", 1);
  const rogue = card("a", 4, a.kid);
  const r = selectCards([
    { location: "a/card.json", bytes: a.bytes },
    { location: "evil/card.json", bytes: rogue.bytes },
    { location: "bad/card.json", bytes: new TextEncoder().encode("{") },
    { location: "link/card.json", problem: "is a symlink (refused)" },
  ], [{ agent_id: "a", kid: a.kid }, { agent_id: "z", kid: "k" }]);
  deepStrictEqual(r.cards, []);
  deepStrictEqual(r.conflicts, [{
    agent_id: "a",
    kid: a.kid,
    locations: ["a/card.json", "evil/card.json"],
  }]);
  deepStrictEqual(r.missing, [{ agent_id: "z", kid: "k" }]);
  strictEqual(r.unusable.length, 2);
});
