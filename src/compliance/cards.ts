// Which agent cards a pack embeds: one per (agent_id, kid) that signed a window entry, taken
// from the operator's cards folder. The card body is authoritative (FORMATS.md §4), so cards
// are matched by body, never by where they were filed.
import { type AgentCard, parseAgentCard } from "../lineage/mod.ts";
import type { CardFile } from "../verify/mod.ts";
import type { PackCard } from "./pack.ts";

/** What {@linkcode selectCards} found. */
export interface CardSelection {
  /** One card per signing key, sorted by agent id then kid. */
  cards: PackCard[];
  /** Signing keys with no card (the pack will fail kid binding for their entries). */
  missing: { agent_id: string; kid: string }[];
  /** Signing keys with two different cards (the pack cannot be built honestly). */
  conflicts: { agent_id: string; kid: string; locations: string[] }[];
  /** Card files that could not be parsed (reported, otherwise ignored). */
  unusable: { location: string; problem: string }[];
}

function sameKey(a: AgentCard, b: AgentCard): boolean {
  return a.public_key_pem.replace(/\r/g, "") === b.public_key_pem.replace(/\r/g, "") &&
    a.protocol_version === b.protocol_version;
}

/**
 * Picks the card of every `(agent_id, kid)` in `signers` from `files`.
 *
 * @example
 * ```ts ignore
 * const picked = selectCards(readCardDirectory(".sdd/agents"), [{ agent_id, kid }]);
 * ```
 */
export function selectCards(
  files: Iterable<CardFile>,
  signers: readonly { agent_id: string; kid: string }[],
): CardSelection {
  const wanted = new Set(signers.map((s) => `${s.agent_id}\u0000${s.kid}`));
  const found = new Map<string, { card: AgentCard; bytes: Uint8Array; locations: string[] }>();
  const conflicted = new Map<string, string[]>();
  const unusable: CardSelection["unusable"] = [];
  for (const file of files) {
    if ("problem" in file) {
      unusable.push({ location: file.location, problem: file.problem });
      continue;
    }
    let card: AgentCard;
    try {
      card = parseAgentCard(file.bytes, file.location).card;
    } catch (error) {
      unusable.push({ location: file.location, problem: (error as Error).message });
      continue;
    }
    const key = `${card.agent_id}\u0000${card.kid}`;
    if (!wanted.has(key)) continue;
    const had = found.get(key);
    if (had === undefined) {
      found.set(key, { card, bytes: file.bytes, locations: [file.location] });
    } else {
      had.locations.push(file.location);
      if (!sameKey(had.card, card)) conflicted.set(key, had.locations);
    }
  }
  const cards: PackCard[] = [];
  const missing: CardSelection["missing"] = [];
  const conflicts: CardSelection["conflicts"] = [];
  const sorted = [...wanted].sort();
  for (const key of sorted) {
    const [agent_id, kid] = key.split("\u0000");
    const locations = conflicted.get(key);
    if (locations !== undefined) {
      conflicts.push({ agent_id, kid, locations: [...locations].sort() });
      continue;
    }
    const hit = found.get(key);
    if (hit === undefined) missing.push({ agent_id, kid });
    else cards.push({ agent_id, kid, bytes: hit.bytes });
  }
  return { cards, missing, conflicts, unusable };
}
