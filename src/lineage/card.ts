// Agent cards (FORMATS.md §4): the public half of an agent identity. The body is authoritative;
// directory names are only where a card happens to be filed, so a card misfiled under another
// name still speaks only for the identity its body names.
import { canonicalBytes, type JsonValue, parseJsonBytes } from "../canonical/mod.ts";
import { decodePublicKeyPem, encodePublicKeyPem, sha256Hex, spkiDer } from "../crypto/mod.ts";
import { AgentCardError } from "./errors.ts";

/** The card protocol version bernstein writes and accepts. */
export const AGENT_CARD_PROTOCOL = "a2a/1.0";

/** The body of an agent card. */
export interface AgentCard {
  /** The agent identity this key speaks for. */
  agent_id: string;
  /** Key id: entries name it in `agent_card_kid`, JWS headers in `kid`. */
  kid: string;
  /** The Ed25519 public key as SPKI PEM. */
  public_key_pem: string;
  /** Always {@linkcode AGENT_CARD_PROTOCOL}. */
  protocol_version: string;
}

/** A card whose key decoded, with the raw 32-byte public key. */
export interface ParsedAgentCard {
  /** The card body. */
  card: AgentCard;
  /** The raw Ed25519 public key. */
  publicKey: Uint8Array;
}

/**
 * The folder name of an agent under `.sdd/agents/`: the agent id with every character outside
 * `[A-Za-z0-9._-]` replaced by `_`. Ids whose folder would be empty, `.` or `..` are refused.
 */
export function agentDirName(agentId: string): string {
  const name = agentId.replace(/[^A-Za-z0-9._-]/gu, "_");
  if (name === "" || name === "." || name === "..") {
    throw new AgentCardError(`agent id ${JSON.stringify(agentId)} has no usable folder name`);
  }
  return name;
}

/** The key id bernstein mints for a public key: the first 16 hex of SHA-256 of its SPKI DER. */
export function kidForPublicKey(publicKey: Uint8Array): string {
  return sha256Hex(spkiDer(publicKey)).slice(0, 16);
}

/** A new card for `agentId` and `publicKey`. */
export function makeAgentCard(
  agentId: string,
  key: { kid: string; publicKey: Uint8Array },
): AgentCard {
  const { kid, publicKey } = key;
  return {
    agent_id: agentId,
    kid,
    public_key_pem: encodePublicKeyPem(publicKey),
    protocol_version: AGENT_CARD_PROTOCOL,
  };
}

/** The bytes of a card file as bernstein writes it: `canon` JSON and a newline. */
export function renderAgentCard(card: AgentCard): Uint8Array {
  const body: JsonValue = { ...card };
  const bytes = canonicalBytes(body, "canon");
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = 0x0a;
  return out;
}

/**
 * Parses a card file strictly: JSON object with string `agent_id`, `kid`, `public_key_pem`
 * (an Ed25519 SPKI PEM) and `protocol_version` = `a2a/1.0`. Other fields (A2A cards carry
 * more) are ignored. Throws {@linkcode AgentCardError} naming the problem.
 */
export function parseAgentCard(bytes: Uint8Array, location?: string): ParsedAgentCard {
  let value: JsonValue;
  try {
    value = parseJsonBytes(bytes);
  } catch (cause) {
    throw new AgentCardError(`not valid JSON: ${(cause as Error).message}`, { location, cause });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AgentCardError("a card must be a JSON object", { location });
  }
  const body = value as { [key: string]: JsonValue | undefined };
  const field = (name: string): string => {
    const v = body[name];
    if (typeof v !== "string" || v === "") {
      throw new AgentCardError(`${name} must be a non-empty string`, { location });
    }
    return v;
  };
  const card: AgentCard = {
    agent_id: field("agent_id"),
    kid: field("kid"),
    public_key_pem: field("public_key_pem"),
    protocol_version: field("protocol_version"),
  };
  if (card.protocol_version !== AGENT_CARD_PROTOCOL) {
    throw new AgentCardError(
      `protocol_version is ${
        JSON.stringify(card.protocol_version)
      }, expected "${AGENT_CARD_PROTOCOL}"`,
      { location },
    );
  }
  let publicKey: Uint8Array;
  try {
    publicKey = decodePublicKeyPem(card.public_key_pem);
  } catch (cause) {
    throw new AgentCardError(`public_key_pem: ${(cause as Error).message}`, { location, cause });
  }
  return { card, publicKey };
}

/** Where a card file sits under the cards folder, by the two layouts of FORMATS.md §4. */
export type CardLayout = "single" | "per-kid";

/**
 * The layout of a card file from its path relative to the cards folder: `<dir>/card.json`
 * (single) or `<dir>/<kid>/card.json` (per-kid); undefined for any other path.
 */
export function cardLayoutOf(relativePath: string): CardLayout | undefined {
  const parts = relativePath.split("/");
  if (parts[parts.length - 1] !== "card.json") return undefined;
  if (parts.some((p) => p === "" || p === "." || p === "..")) return undefined;
  if (parts.length === 2) return "single";
  if (parts.length === 3) return "per-kid";
  return undefined;
}

/** A problem found while collecting cards. */
export interface CardSetIssue {
  /** `conflicting agent cards` or `invalid agent card`. */
  kind: "conflicting agent cards" | "invalid agent card";
  /** Where (card file locations). */
  location: string;
  /** Human text. */
  message: string;
  /** The identity concerned, when known. */
  agent_id?: string;
  /** The key id concerned, when known. */
  kid?: string;
}

/** What a (agent_id, kid) lookup found. */
export type CardLookup =
  | { status: "found"; publicKey: Uint8Array; location: string }
  | { status: "missing" }
  | { status: "conflict"; locations: string[] };

interface Slot {
  publicKey: Uint8Array;
  protocol: string;
  locations: string[];
  conflict: boolean;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * The set of agent cards a verification uses, keyed by the body's (agent_id, kid). The same
 * card filed twice (both layouts) is fine; two different cards for one key are a conflict and
 * the key resolves to nothing, so the outcome never depends on the order files were read.
 */
export class AgentCardSet {
  #slots = new Map<string, Slot>();
  #issues: CardSetIssue[] = [];
  #count = 0;

  /** Adds one card file; a bad card is recorded as an issue, never thrown. */
  add(location: string, bytes: Uint8Array): void {
    let parsed: ParsedAgentCard;
    try {
      parsed = parseAgentCard(bytes, location);
    } catch (error) {
      this.#issues.push({
        kind: "invalid agent card",
        location,
        message: `${location}: ${(error as Error).message}`,
      });
      return;
    }
    this.addParsed(location, parsed);
  }

  /** Records a card file that could not be read (symlink, not a regular file, too large). */
  addProblem(location: string, problem: string): void {
    this.#issues.push({ kind: "invalid agent card", location, message: `${location}: ${problem}` });
  }

  /** Adds a card that is already parsed. */
  addParsed(location: string, parsed: ParsedAgentCard): void {
    this.#count++;
    const { card, publicKey } = parsed;
    const key = `${card.agent_id}\u0000${card.kid}`;
    const slot = this.#slots.get(key);
    if (slot === undefined) {
      this.#slots.set(key, {
        publicKey,
        protocol: card.protocol_version,
        locations: [location],
        conflict: false,
      });
      return;
    }
    slot.locations.push(location);
    if (
      !slot.conflict &&
      (!sameBytes(slot.publicKey, publicKey) || slot.protocol !== card.protocol_version)
    ) {
      slot.conflict = true;
    }
  }

  /** The public key for (agentId, kid), or why there is none. */
  lookup(agentId: string, kid: string): CardLookup {
    const slot = this.#slots.get(`${agentId}\u0000${kid}`);
    if (slot === undefined) return { status: "missing" };
    if (slot.conflict) return { status: "conflict", locations: [...slot.locations] };
    return { status: "found", publicKey: slot.publicKey, location: slot.locations[0] };
  }

  /** Every problem: unusable card files, then conflicts, in a stable order. */
  issues(): CardSetIssue[] {
    const conflicts: CardSetIssue[] = [];
    for (const [key, slot] of this.#slots) {
      if (!slot.conflict) continue;
      const [agentId, kid] = key.split("\u0000");
      const where = [...slot.locations].sort();
      conflicts.push({
        kind: "conflicting agent cards",
        location: where.join(", "),
        agent_id: agentId,
        kid,
        message: `conflicting agent cards for agent ${JSON.stringify(agentId)} kid ${
          JSON.stringify(kid)
        }: ${where.join(" and ")} hold different keys`,
      });
    }
    conflicts.sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0));
    return [...this.#issues, ...conflicts];
  }

  /** Number of usable card files added. */
  get size(): number {
    return this.#count;
  }
}
