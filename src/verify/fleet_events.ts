// The fleet events a compliance pack carries (`fleet-events.jsonl`, FORMATS.md §5 and §12):
// the window's variable writes and reads, connection versions and resolutions and context
// activations, one canonical line each, as the audit chain recorded them. Offline, without the
// audit key (which authenticates the chain), the verifier checks what the lines themselves
// prove: their form, that they lie in the period in chain order, and the family's rules inside
// the window — write ordinals contiguous per variable with each old hash the previous new
// hash, reads matching the write they name, connection versions chained, resolutions and
// activations naming a version the window recorded (or one from before it).
import { type JsonObject, parseJsonBytes } from "../canonical/mod.ts";
import {
  PACK_FLEET_EVENT_TYPES,
  PACK_FLEET_MEMBER,
  type PackFleetEvent,
  packFleetLine,
} from "../pack_format/mod.ts";

interface Write {
  ordinal: number;
  newHash: string;
}

/** What the checks remember per name while walking the lines. */
class WindowState {
  writes = new Map<string, Write[]>();
  documents = new Map<string, { version: number; hash: string }[]>();
  contexts = new Map<string, string[]>();
}

const HEX64 = /^[0-9a-f]{64}$/;
const DAY = /^(\d{4}-\d{2}-\d{2})T/;

function str(d: JsonObject, key: string): string | undefined {
  const v = d[key];
  return typeof v === "string" ? v : undefined;
}

function int(d: JsonObject, key: string): number | undefined {
  const v = d[key];
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/**
 * The problems of a pack's fleet member (`fleet-events.jsonl:<line>: …`), none when it holds.
 *
 * @example
 * ```ts
 * checkPackFleetEvents(new Uint8Array(), { since: "2026-01-01", until: "2026-01-31" }); // []
 * ```
 */
export function checkPackFleetEvents(
  bytes: Uint8Array,
  period: { since: string; until: string } | undefined,
): string[] {
  const problems: string[] = [];
  const text = new TextDecoder().decode(bytes);
  if (text !== "" && !text.endsWith("\n")) {
    problems.push(`${PACK_FLEET_MEMBER}: the last line has no newline`);
  }
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  const state = new WindowState();
  let lastTime = "";
  const seen = new Set<string>();
  lines.forEach((line, i) => {
    const at = `${PACK_FLEET_MEMBER}:${i + 1}`;
    const event = parseLine(line, at, problems);
    if (event === undefined) return;
    const day = DAY.exec(event.timestamp)?.[1];
    if (period !== undefined && (day === undefined || day < period.since || day > period.until)) {
      problems.push(`${at}: ${event.timestamp} is outside the period`);
    }
    if (event.timestamp < lastTime) problems.push(`${at}: out of chain order (${event.timestamp})`);
    lastTime = event.timestamp > lastTime ? event.timestamp : lastTime;
    if (seen.has(event.hmac)) problems.push(`${at}: record ${event.hmac} appears twice`);
    seen.add(event.hmac);
    for (const p of checkSemantics(event, state)) problems.push(`${at} (${event.where}): ${p}`);
  });
  return problems;
}

function parseLine(line: string, at: string, problems: string[]): PackFleetEvent | undefined {
  let value: unknown;
  try {
    value = parseJsonBytes(new TextEncoder().encode(line));
  } catch (error) {
    problems.push(`${at}: not JSON: ${(error as Error).message}`);
    return undefined;
  }
  const o = value as Partial<PackFleetEvent> | null;
  if (
    o === null || typeof o !== "object" || Array.isArray(o) || typeof o.actor !== "string" ||
    typeof o.event_type !== "string" || typeof o.hmac !== "string" ||
    typeof o.timestamp !== "string" || typeof o.where !== "string" ||
    o.details === null || typeof o.details !== "object" || Array.isArray(o.details) ||
    Object.keys(o).length !== 6
  ) {
    problems.push(`${at}: not {actor, details, event_type, hmac, timestamp, where}`);
    return undefined;
  }
  const event = o as PackFleetEvent;
  if (!PACK_FLEET_EVENT_TYPES.includes(event.event_type)) {
    problems.push(`${at}: '${event.event_type}' is not a fleet event`);
    return undefined;
  }
  if (!HEX64.test(event.hmac)) problems.push(`${at}: hmac is not 64 lowercase hex`);
  const canon = new TextDecoder().decode(packFleetLine(event));
  if (canon !== line) problems.push(`${at}: not canonical JSON`);
  return event;
}

/** The family's rules for one event, given what the window recorded before it. */
function checkSemantics(e: PackFleetEvent, s: WindowState): string[] {
  const d = e.details;
  const name = str(d, "name");
  if (name === undefined && e.event_type !== "fleet.run_config") return ["details.name missing"];
  switch (e.event_type) {
    case "fleet.var_set":
    case "fleet.var_unset":
      return varWrite(name as string, d, s);
    case "fleet.var_read":
      return varRead(name as string, d, s);
    case "fleet.conn_create":
    case "fleet.conn_rotate":
      return connVersion(name as string, e.event_type, d, s);
    case "fleet.conn_resolve":
    case "fleet.conn_refuse":
      return connUse(name as string, d, s);
    case "fleet.context_create": {
      const hash = str(d, "settings_hash");
      if (hash === undefined) return ["details.settings_hash missing"];
      s.contexts.set(name as string, [...s.contexts.get(name as string) ?? [], hash]);
      return [];
    }
    case "fleet.context_activate": {
      const created = s.contexts.get(name as string);
      const hash = str(d, "settings_hash");
      return created !== undefined && hash !== undefined && !created.includes(hash)
        ? [`context '${name}' activation names ${hash}, which no create in the window recorded`]
        : [];
    }
    default:
      return [];
  }
}

function varWrite(name: string, d: JsonObject, s: WindowState): string[] {
  const ordinal = int(d, "chain_position");
  const oldHash = str(d, "old_value_hash");
  const newHash = str(d, "new_value_hash");
  if (ordinal === undefined || oldHash === undefined || newHash === undefined) {
    return [`variable '${name}': write without chain_position, old_value_hash or new_value_hash`];
  }
  const list = s.writes.get(name) ?? [];
  const prev = list.at(-1);
  const out: string[] = [];
  if (prev !== undefined && ordinal !== prev.ordinal + 1) {
    out.push(
      `variable '${name}' write ${ordinal} follows write ${prev.ordinal} (ordinals skip or repeat)`,
    );
  }
  if (prev !== undefined && oldHash !== prev.newHash) {
    out.push(
      `variable '${name}' write ${ordinal}: old hash ${oldHash} is not write ${prev.ordinal}'s new hash`,
    );
  }
  list.push({ ordinal, newHash });
  s.writes.set(name, list);
  return out;
}

function varRead(name: string, d: JsonObject, s: WindowState): string[] {
  const ordinal = int(d, "chain_position");
  const hash = str(d, "value_hash");
  if (ordinal === undefined || hash === undefined) {
    return [`variable '${name}': read without chain_position or value_hash`];
  }
  const list = s.writes.get(name);
  if (list === undefined || ordinal < list[0].ordinal) return []; // a write before the window
  const write = list.find((w) => w.ordinal === ordinal);
  if (write === undefined) {
    return [`variable '${name}' read names write ${ordinal}, not yet recorded`];
  }
  return write.newHash === hash ? [] : [
    `variable '${name}' read of write ${ordinal} names ${hash}, but that write stored ${write.newHash}`,
  ];
}

function connVersion(name: string, type: string, d: JsonObject, s: WindowState): string[] {
  const version = int(d, "version");
  const hash = type === "fleet.conn_create" ? str(d, "document_hash") : str(d, "new_document_hash");
  if (version === undefined || hash === undefined) {
    return [`connection '${name}': version record without version or document hash`];
  }
  const list = s.documents.get(name) ?? [];
  const prev = list.at(-1);
  const out: string[] = [];
  if (type === "fleet.conn_create" && version !== 1) {
    out.push(`connection '${name}' created at version ${version}`);
  }
  if (prev !== undefined && version !== prev.version + 1) {
    out.push(`connection '${name}' version ${version} follows version ${prev.version}`);
  }
  if (
    type === "fleet.conn_rotate" && prev !== undefined && str(d, "old_document_hash") !== prev.hash
  ) {
    out.push(
      `connection '${name}' rotation to version ${version} does not start from version ${prev.version}`,
    );
  }
  list.push({ version, hash });
  s.documents.set(name, list);
  return out;
}

function connUse(name: string, d: JsonObject, s: WindowState): string[] {
  const hash = str(d, "document_hash");
  const list = s.documents.get(name);
  if (list === undefined || hash === undefined || hash === "") return [];
  if (list.some((v) => v.hash === hash)) return [];
  const version = int(d, "version");
  // A resolution of a version from before the window is fine; of a later one, not.
  if (version !== undefined && version < list[0].version) return [];
  return [
    `connection '${name}' use names document ${hash}, which no version in the window recorded`,
  ];
}
