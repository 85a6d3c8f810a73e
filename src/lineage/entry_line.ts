// The common lineage line read straight from its bytes: what `parseCanonicalLine` followed by
// `parseEntry` returns for it, for a fraction of the work and garbage (a gate reads 100,000 of
// them). It accepts only lines it can prove canonical and valid on the spot — the known fields
// in canonical key order, plain printable-ASCII strings (no escapes), canonical integers — and
// says nothing (undefined) about anything else, which then goes through the strict parser and
// the entry rules: those alone decide and word every problem.
import {
  ACTIVITY_SOURCES,
  ARTEFACT_KINDS,
  type ArtefactKind,
  ENTRY_OPTIONAL_FIELDS,
  ENTRY_REQUIRED_FIELDS,
  type LineageEntry,
  TRUST_CLASSES,
} from "./entry.ts";
import { artefactKeyProblem } from "./artefact_key.ts";

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const ZERO = 0x30;
const NINE = 0x39;
const BACKSLASH = 0x5c;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** How a field's value is read here; `other` (model_ref) is left to the strict path. */
type ValueForm = "string" | "list" | "integer" | "one" | "other";

const FORM: Readonly<Record<string, ValueForm>> = {
  v: "one",
  parent_hashes: "list",
  attachment_digests: "list",
  ts_ns: "integer",
  model_ref: "other",
};

// Every field name is ASCII, so byte order is code-point order: the canonical key order.
const FIELDS = [...ENTRY_REQUIRED_FIELDS, ...ENTRY_OPTIONAL_FIELDS].sort();
const encoder = new TextEncoder();
const FIELD_BYTES = FIELDS.map((f) => encoder.encode(f));
const FIELD_FORM: ValueForm[] = FIELDS.map((f) => FORM[f] ?? "string");
const index = (name: string): number => FIELDS.indexOf(name as typeof FIELDS[number]);
const REQUIRED_MASK = ENTRY_REQUIRED_FIELDS.reduce((m, f) => m | (1 << index(f)), 0);
const F = {
  artefact_path: index("artefact_path"),
  artefact_kind: index("artefact_kind"),
  content_hash: index("content_hash"),
  parent_hashes: index("parent_hashes"),
  agent_id: index("agent_id"),
  agent_card_kid: index("agent_card_kid"),
  tool_call_id: index("tool_call_id"),
  span_id: index("span_id"),
  ts_ns: index("ts_ns"),
  operator_hmac: index("operator_hmac"),
  trust_class: index("trust_class"),
  attachment_digests: index("attachment_digests"),
  activity_source: index("activity_source"),
};
const MAX_TS_NS = (1n << 63n) - 1n;
const MAX_TS_DIGITS = 19;

// Per field: where its value starts and ends (strings: inside the quotes; lists: their first
// and past-last element in `items`). Reused from line to line.
const starts = new Int32Array(FIELDS.length);
const ends = new Int32Array(FIELDS.length);
let items = new Int32Array(64);
let itemCount = 0;

const ascii = new TextDecoder("latin1");

/** Index of the closing quote of a plain string whose content starts at `at`, or -1. */
function plainStringEnd(bytes: Uint8Array, at: number): number {
  for (let i = at; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) return i;
    // Printable ASCII without a backslash prints as itself in every profile; anything else
    // (escapes, control characters, UTF-8, DEL) is the strict path's to judge.
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return -1;
  }
  return -1;
}

/** The field whose `"name":` starts at `at`, searching from `from` in key order; -1 if none. */
function fieldAt(bytes: Uint8Array, at: number, from: number): number {
  for (let f = from; f < FIELDS.length; f++) {
    const name = FIELD_BYTES[f];
    const end = at + 1 + name.length;
    if (bytes[end] !== QUOTE || bytes[end + 1] !== COLON) continue;
    let i = 0;
    while (i < name.length && bytes[at + 1 + i] === name[i]) i++;
    if (i === name.length) return f;
  }
  return -1;
}

/** Reads a list of plain strings at `at` into `items`; returns the position after it or -1. */
function listAt(bytes: Uint8Array, at: number, f: number): number {
  if (bytes[at] !== OPEN_LIST) return -1;
  let pos = at + 1;
  starts[f] = itemCount;
  if (bytes[pos] === CLOSE_LIST) {
    ends[f] = itemCount;
    return pos + 1;
  }
  for (;;) {
    if (bytes[pos] !== QUOTE) return -1;
    const end = plainStringEnd(bytes, pos + 1);
    if (end < 0) return -1;
    if (2 * itemCount + 2 > items.length) {
      const bigger = new Int32Array(items.length * 2);
      bigger.set(items);
      items = bigger;
    }
    items[2 * itemCount] = pos + 1;
    items[2 * itemCount + 1] = end;
    itemCount++;
    pos = end + 1;
    if (bytes[pos] === COMMA) {
      pos++;
      continue;
    }
    if (bytes[pos] !== CLOSE_LIST) return -1;
    ends[f] = itemCount;
    return pos + 1;
  }
}

/** Reads a canonical non-negative integer at `at`; returns the position after it or -1. */
function integerAt(bytes: Uint8Array, at: number): number {
  let pos = at;
  while (pos < bytes.length && bytes[pos] >= ZERO && bytes[pos] <= NINE) pos++;
  if (pos === at || pos - at > MAX_TS_DIGITS) return -1;
  // "0" alone, never a leading zero ("-…", "1.0", "1e9" stop at a non-digit and are refused
  // by the separator check after the value).
  if (bytes[at] === ZERO && pos - at > 1) return -1;
  return pos;
}

/** Scans the structure; returns the fields seen as a mask, or -1 when not the plain form. */
function scan(bytes: Uint8Array): number {
  if (bytes[0] !== OPEN_OBJECT) return -1;
  itemCount = 0;
  let pos = 1;
  let next = 0;
  let seen = 0;
  for (;;) {
    if (bytes[pos] !== QUOTE) return -1;
    const f = fieldAt(bytes, pos, next);
    if (f < 0) return -1;
    pos += FIELD_BYTES[f].length + 3;
    switch (FIELD_FORM[f]) {
      case "string": {
        if (bytes[pos] !== QUOTE) return -1;
        const end = plainStringEnd(bytes, pos + 1);
        if (end < 0) return -1;
        starts[f] = pos + 1;
        ends[f] = end;
        pos = end + 1;
        break;
      }
      case "list":
        pos = listAt(bytes, pos, f);
        break;
      case "integer":
        starts[f] = pos;
        pos = integerAt(bytes, pos);
        ends[f] = pos;
        break;
      case "one":
        pos = bytes[pos] === ZERO + 1 ? pos + 1 : -1;
        break;
      default:
        return -1;
    }
    if (pos < 0) return -1;
    seen |= 1 << f;
    next = f + 1;
    if (bytes[pos] === COMMA) {
      pos++;
      continue;
    }
    return bytes[pos] === CLOSE_OBJECT && pos + 1 === bytes.length ? seen : -1;
  }
}

const HEX_DIGIT = new Uint8Array(128);
for (const c of "0123456789abcdef") HEX_DIGIT[c.charCodeAt(0)] = 1;
const SHA256_PREFIX = encoder.encode("sha256:");

/** True when bytes[from, to) are 64 lowercase hex digits after `prefix` bytes of `sha256:`. */
function isHexDigest(bytes: Uint8Array, from: number, to: number, prefixed: boolean): boolean {
  let at = from;
  if (prefixed) {
    if (to - from !== 71) return false;
    for (let i = 0; i < 7; i++) if (bytes[at + i] !== SHA256_PREFIX[i]) return false;
    at += 7;
  } else if (to - from !== 64) {
    return false;
  }
  for (; at < to; at++) if (HEX_DIGIT[bytes[at]] !== 1) return false;
  return true;
}

function hexList(bytes: Uint8Array, f: number, prefixed: boolean, text: string): string[] | null {
  const out: string[] = [];
  for (let k = starts[f]; k < ends[f]; k++) {
    const from = items[2 * k];
    const to = items[2 * k + 1];
    if (!isHexDigest(bytes, from, to, prefixed)) return null;
    out.push(text.slice(from, to));
  }
  return out;
}

function field(text: string, f: number): string {
  return text.slice(starts[f], ends[f]);
}

function oneOf<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

/**
 * The entry on a lineage line, read straight from its bytes, when the line is in the plain
 * canonical form every writer produces and passes every entry rule: exactly what
 * `parseEntry(parseCanonicalLine(bytes, "canon").value)` returns for it. Undefined for any
 * other line (including every line those refuse): read it that way to learn why.
 *
 * @example
 * ```ts ignore
 * const entry = plainEntryOfLine(bytes) ?? parseEntry(strictValueOf(bytes));
 * ```
 */
export function plainEntryOfLine(bytes: Uint8Array): LineageEntry | undefined {
  const seen = scan(bytes);
  if (seen < 0 || (seen & REQUIRED_MASK) !== REQUIRED_MASK) return undefined;
  if (!isHexDigest(bytes, starts[F.content_hash], ends[F.content_hash], true)) return undefined;
  if (ends[F.agent_id] === starts[F.agent_id]) return undefined;
  if (ends[F.agent_card_kid] === starts[F.agent_card_kid]) return undefined;
  // Every byte scanned is printable ASCII: one decode, then each field is a slice.
  const text = ascii.decode(bytes);
  const artefactPath = field(text, F.artefact_path);
  if (artefactKeyProblem(artefactPath) !== undefined) return undefined;
  const kind = field(text, F.artefact_kind);
  if (!oneOf<ArtefactKind>(ARTEFACT_KINDS, kind)) return undefined;
  const parents = hexList(bytes, F.parent_hashes, true, text);
  if (parents === null) return undefined;
  const tsNs = BigInt(field(text, F.ts_ns));
  if (tsNs > MAX_TS_NS) return undefined;
  // Same fields, in the same order, as parseEntry builds them (the same object shape).
  const entry: LineageEntry = {
    v: 1,
    artefact_path: artefactPath,
    artefact_kind: kind,
    content_hash: field(text, F.content_hash),
    parent_hashes: parents,
    agent_id: field(text, F.agent_id),
    agent_card_kid: field(text, F.agent_card_kid),
    tool_call_id: field(text, F.tool_call_id),
    span_id: field(text, F.span_id),
    ts_ns: tsNs,
    operator_hmac: field(text, F.operator_hmac),
  };
  if ((seen & (1 << F.trust_class)) !== 0) {
    const trust = field(text, F.trust_class);
    if (!oneOf(TRUST_CLASSES, trust)) return undefined;
    entry.trust_class = trust;
  }
  if ((seen & (1 << F.attachment_digests)) !== 0) {
    const digests = hexList(bytes, F.attachment_digests, false, text);
    if (digests === null || digests.length === 0) return undefined;
    entry.attachment_digests = digests;
  }
  if ((seen & (1 << F.activity_source)) !== 0) {
    const source = field(text, F.activity_source);
    if (!oneOf(ACTIVITY_SOURCES, source)) return undefined;
    entry.activity_source = source;
  }
  return entry;
}
