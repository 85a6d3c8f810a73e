// Agent identities: one Ed25519 key per agent identity, minted on first use. The private half
// is PKCS#8 PEM (0600) under `.sdd/keys/agents/`, the public half an agent card under
// `.sdd/agents/` in both layouts. Rotation mints a new kid and a new per-kid card; old cards
// stay, so entries signed with old keys keep verifying.
import { join } from "node:path";
import { BernsteinError } from "../../errors/mod.ts";
import {
  decodePrivateKeyPem,
  ed25519KeyPairFromSeed,
  encodePrivateKeyPem,
  sha256Hex,
} from "../../crypto/mod.ts";
import {
  type Random,
  readFileIfExists,
  readSecretFile,
  withFileLock,
  writeFileAtomic,
  writeFileIfAbsent,
} from "../../io/mod.ts";
import {
  type AgentCard,
  agentDirName,
  kidForPublicKey,
  makeAgentCard,
  parseAgentCard,
  type ParsedAgentCard,
  renderAgentCard,
} from "../mod.ts";
import type { LineagePaths } from "./paths.ts";

/** The agent id merge entries are signed by. */
export const STEWARD_AGENT_ID = "bernstein-steward";

/** A usable signing identity. */
export interface AgentSigner {
  /** The agent identity. */
  agentId: string;
  /** The key id in use. */
  kid: string;
  /** The 32-byte private seed. */
  seed: Uint8Array;
  /** The 32-byte public key. */
  publicKey: Uint8Array;
  /** The card published for this key. */
  card: AgentCard;
}

/** A private key that cannot be used (wrong permissions, not PKCS#8 Ed25519, wrong kid). */
export class AgentKeyError extends BernsteinError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super("lineage.agent_key_invalid", message, options);
  }
}

const decoder = new TextDecoder();

/**
 * The folder of an agent's private keys: the card folder name, plus a short hash of the id
 * when sanitising changed it, so `a/b` and `a_b` can never share (and overwrite) keys.
 */
export function agentKeyDirName(agentId: string): string {
  const name = agentDirName(agentId);
  return name === agentId
    ? name
    : `${name}~${sha256Hex(new TextEncoder().encode(agentId)).slice(0, 8)}`;
}

async function ensureDir(path: string, mode: number): Promise<void> {
  await Deno.mkdir(path, { recursive: true, mode });
}

async function readPrivateKey(path: string): Promise<Uint8Array> {
  const pem = await readSecretFile(path, { what: "agent key" });
  if (pem === undefined) throw new AgentKeyError(`agent key ${path} does not exist`);
  try {
    return decodePrivateKeyPem(decoder.decode(pem));
  } catch (cause) {
    throw new AgentKeyError(`${path} is not a PKCS#8 Ed25519 private key`, { cause });
  }
}

/**
 * Writes the agent's cards where missing: per-kid always, the single layout for the first key.
 * A card already there is never overwritten; one that names another key for this identity is
 * refused (it is what the gate would report as a conflict or a bad signature).
 */
async function publishCard(paths: LineagePaths, card: AgentCard, publicKey: Uint8Array) {
  const dir = join(paths.cardsDir, agentDirName(card.agent_id));
  await ensureDir(join(dir, card.kid), 0o755);
  const bytes = renderAgentCard(card);
  for (const path of [join(dir, card.kid, "card.json"), join(dir, "card.json")]) {
    if (await writeFileIfAbsent(path, bytes, { mode: 0o644 })) continue;
    let existing: ParsedAgentCard;
    try {
      existing = parseAgentCard(await Deno.readFile(path), path);
    } catch (cause) {
      throw new AgentKeyError(`agent card ${path} is unreadable`, { cause });
    }
    const sameIdentity = existing.card.agent_id === card.agent_id &&
      existing.card.kid === card.kid;
    const sameKey = existing.publicKey.length === publicKey.length &&
      existing.publicKey.every((b, i) => b === publicKey[i]);
    // The single-layout card may be an older key of this agent, or another agent's whose id
    // sanitises to the same folder: both fine. The same (agent, kid) with another key is not.
    if (sameIdentity && !sameKey) {
      throw new AgentKeyError(
        `agent card ${path} holds a different key for agent ${
          JSON.stringify(card.agent_id)
        } kid ${card.kid}`,
        { hint: "the card was replaced; restore it from the agent's key or investigate" },
      );
    }
  }
}

/**
 * Publishes the card of a key held elsewhere (an agent that ran on a worker host), so the gate
 * here can verify its signatures. Refused like a local card: the same (agent, kid) with another
 * key is an error.
 */
export async function publishAgentCard(paths: LineagePaths, card: AgentCard): Promise<void> {
  const parsed = parseAgentCard(renderAgentCard(card), `card of ${card.agent_id}`);
  await publishCard(paths, parsed.card, parsed.publicKey);
}

async function mint(paths: LineagePaths, agentId: string, random: Random): Promise<AgentSigner> {
  const keyDir = join(paths.keysDir, agentKeyDirName(agentId));
  await ensureDir(keyDir, 0o700);
  const pair = ed25519KeyPairFromSeed(random.bytes(32));
  const kid = kidForPublicKey(pair.publicKey);
  await writeFileIfAbsent(join(keyDir, `${kid}.pem`), encodePrivateKeyPem(pair.seed), {
    mode: 0o600,
  });
  const card = makeAgentCard(agentId, { kid, publicKey: pair.publicKey });
  await publishCard(paths, card, pair.publicKey);
  await writeFileAtomic(join(keyDir, "active"), kid, { mode: 0o600 });
  return { agentId, kid, seed: pair.seed, publicKey: pair.publicKey, card };
}

async function loadActive(paths: LineagePaths, agentId: string): Promise<AgentSigner | undefined> {
  const keyDir = join(paths.keysDir, agentKeyDirName(agentId));
  const active = await readFileIfExists(join(keyDir, "active"));
  if (active === undefined) return undefined;
  const kid = decoder.decode(active);
  if (!/^[0-9a-f]{16}$/.test(kid)) {
    throw new AgentKeyError(`${join(keyDir, "active")} does not name a key id`);
  }
  const seed = await readPrivateKey(join(keyDir, `${kid}.pem`));
  const pair = ed25519KeyPairFromSeed(seed);
  if (kidForPublicKey(pair.publicKey) !== kid) {
    throw new AgentKeyError(`${join(keyDir, `${kid}.pem`)} does not hold the key of kid ${kid}`);
  }
  const card = makeAgentCard(agentId, { kid, publicKey: pair.publicKey });
  // Cards are public and derived from the key: re-publish any that went missing.
  await publishCard(paths, card, pair.publicKey);
  return { agentId, kid, seed, publicKey: pair.publicKey, card };
}

/**
 * The signing identity of `agentId`, minting its key and cards on first use. Minting runs under
 * a lock so two processes never create two keys for one agent at once.
 */
export async function ensureAgentSigner(
  paths: LineagePaths,
  agentId: string,
  options: { random: Random },
): Promise<AgentSigner> {
  const { random } = options;
  agentDirName(agentId); // refuses ids with no usable folder name
  const found = await loadActive(paths, agentId);
  if (found !== undefined) return found;
  await ensureDir(paths.keysDir, 0o700);
  return await withFileLock(join(paths.keysDir, ".lock"), async () => {
    return (await loadActive(paths, agentId)) ?? (await mint(paths, agentId, random));
  });
}

/**
 * Rotates `agentId` to a fresh key: a new kid, a new per-kid card and the new key made active.
 * Old keys and cards are kept, so everything signed before still verifies.
 */
export async function rotateAgentKey(
  paths: LineagePaths,
  agentId: string,
  options: { random: Random },
): Promise<AgentSigner> {
  const { random } = options;
  agentDirName(agentId);
  await ensureDir(paths.keysDir, 0o700);
  return await withFileLock(join(paths.keysDir, ".lock"), () => mint(paths, agentId, random));
}
