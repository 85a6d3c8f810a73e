// The two human documents of a pack: the README cover and the auditor's one-page guide. Both
// are part of the signed content, so they hold nothing that varies between builds of the same
// inputs (no output file name, no wall clock).
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import {
  isoOfNs,
  type LogFacts,
  PACK_CHECKPOINT_MEMBER,
  PACK_FLEET_MEMBER,
  PACK_INCLUSION_MEMBER,
  PACK_MEMBERS,
} from "../pack_format/mod.ts";

/** What the README cover shows. */
export interface CoverFacts {
  /** Organisation. */
  org: string;
  /** First UTC day. */
  since: string;
  /** Last UTC day. */
  until: string;
  /** `bernstein <version>`. */
  builder: string;
  /** Build time or null. */
  builtAt: string | null;
  /** Facts of the window. */
  facts: LogFacts;
  /** The `article12` block (for the summary lines). */
  article12: JsonObject;
  /** Operator key id. */
  operatorKid: string;
  /** Operator key fingerprint (hex SHA-256 of its SPKI DER). */
  operatorFingerprint: string;
  /** Signature members written. */
  signatureCount: number;
  /** Agent card members written. */
  cardCount: number;
  /** Runs whose attachment exports the pack carries (`--with-attachments`); absent: none. */
  attachmentRuns?: readonly string[];
  /** Lines of `fleet-events.jsonl`; absent or 0: the pack has no such member. */
  fleetEventCount?: number;
}

function field(block: JsonValue | undefined, name: string): JsonValue | undefined {
  return typeof block === "object" && block !== null && !Array.isArray(block)
    ? (block as JsonObject)[name]
    : undefined;
}

function text(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map(text).join(", ");
  return String(value);
}

/**
 * `; isolation: sandbox 3, none 1 (…)` from the 12(2)(c) `agent_isolation` block; nothing for
 * a manifest without one (the cover of such a pack keeps its bytes).
 */
function isolationLine(block: JsonValue | undefined): string {
  if (block === undefined) return "";
  if (field(block, "checked") !== true) {
    return `; isolation: not checked: ${text(field(block, "reason"))}`;
  }
  const counts = field(block, "counts");
  const parts = typeof counts === "object" && counts !== null && !Array.isArray(counts)
    ? Object.entries(counts).map(([k, n]) => `${k} ${text(n)}`)
    : [];
  return parts.length === 0
    ? "; isolation: no agents"
    : `; isolation: ${parts.join(", ")} (per agent in the manifest)`;
}

/** `README.md`: the cover of the pack. */
export function renderReadme(c: CoverFacts): string {
  const f = c.facts;
  const kids = f.agents.reduce((n, a) => n + a.kids.length, 0);
  const a = c.article12;
  const risk = field(a, "12(2)(a)");
  const links = field(field(a, "12(2)(b)"), "audit_cross_links");
  const rbi = field(a, "12(3)");
  const retention = field(a, "retention");
  const linkLine = field(links, "checked") === true
    ? `${text(field(links, "linked_tool_call_ids"))} of ${
      text(field(links, "tool_call_ids"))
    } tool calls linked to ${text(field(links, "linked_audit_events"))} authenticated audit events`
    : `not checked: ${text(field(links, "reason"))}`;
  return `# EU AI Act Article 12 compliance pack

| | |
| --- | --- |
| Organisation | ${c.org.replaceAll("|", "\\|")} |
| Period | ${c.since} to ${c.until} (UTC days, both included) |
| Lineage entries | ${f.entry_count}${
    f.first_ts_ns === null
      ? ""
      : ` (first ${isoOfNs(f.first_ts_ns)}, last ${isoOfNs(f.last_ts_ns ?? f.first_ts_ns)})`
  } |
| Artefacts | ${f.artefact_count} |
| Agents | ${f.agents.length} identities, ${kids} keys, ${c.cardCount} cards |
| Merges / forks | ${f.merge_count} / ${f.fork_count} |
| Built by | ${c.builder} |
| Built at | ${c.builtAt ?? "not recorded (no --build-time or SOURCE_DATE_EPOCH was given)"} |
| Operator key | kid \`${c.operatorKid}\` |

## How to verify

\`\`\`sh
bernstein-verify pack <this-pack>.zip --operator-fingerprint <fingerprint>
\`\`\`

Take the fingerprint from the operator through a channel other than this pack (an attacker
who can change the pack can change this page too). It is the SHA-256 of the operator's public
key, \`${PACK_MEMBERS.operatorKey}\`. \`PASS pack: N entries, M agents\` means every check
passed; anything else is explained in \`${PACK_MEMBERS.instructions}\`, which also shows how to
check the pack by hand with unzip, sha256sum and openssl.

## Article 12 at a glance

- 12(1) automatic recording: ${f.entry_count} signed, hash-linked entries in the period.
- 12(2)(a) risk and substantial modification: ${
    text(field(risk, "risk_entry_count"))
  } entries on risk paths (${
    text(field(risk, "risk_paths"))
  }); ${f.merge_count} merges, ${f.fork_count} forks.
- 12(2)(b) post-market monitoring: ${linkLine}.
- 12(2)(c) operation monitoring: ${f.agents.length} agent identities; reviewers (merge signers): ${
    text(f.merge_signers)
  }${isolationLine(field(field(a, "12(2)(c)"), "agent_isolation"))}.
- 12(3) remote biometric identification: ${
    field(rbi, "applicable") === true ? "applicable; see the manifest" : "not applicable"
  }.
- Retention (Art. 19(1), 26(6), at least ${
    text(field(retention, "minimum_days"))
  } days): configured ${
    text(field(retention, "configured_retention_days"))
  } days; the period covers ${
    text(field(retention, "period_days"))
  } days; the retained log reaches back ${
    text(field(retention, "retained_log_days"))
  } days from the end of the period.

## Members

| member | what it is |
| --- | --- |
| \`${PACK_MEMBERS.readme}\` | this cover |
| \`${PACK_MEMBERS.instructions}\` | how to verify, what each failure means, the manual path |
| \`${PACK_MEMBERS.csv}\` | one row per lineage entry, for spreadsheets |
| \`${PACK_MEMBERS.log}\` | the period's lineage entries, exactly as recorded (${f.entry_count} lines) |
| \`signatures/<entry-hex>.jws\` | each entry's Ed25519 signature by its agent (${c.signatureCount}) |
| \`agent-cards/<agent>/<kid>.json\` | the agents' public keys (${c.cardCount}) |
| \`${PACK_MEMBERS.operatorKey}\` | the operator's public key (SPKI PEM) |
| \`${PACK_CHECKPOINT_MEMBER}\` | the operator's signed checkpoint of the whole lineage log (RFC 9162 root) |
| \`${PACK_INCLUSION_MEMBER}\` | the proof that places every entry of the period in that checkpoint |
| \`${PACK_MEMBERS.manifest}\` | counts, Article 12 facts and the SHA-256 of every other member |
| \`${PACK_MEMBERS.manifestSignature}\` | the operator's signature over the manifest |
${attachmentRow(c.attachmentRuns)}${fleetRow(c.fleetEventCount)}`;
}

/** The members row of the fleet events, only when the pack carries some. */
function fleetRow(count: number | undefined): string {
  if (count === undefined || count === 0) return "";
  return `| \`${PACK_FLEET_MEMBER}\` | the period's fleet configuration events (variable writes and reads, connection versions and resolutions, context activations: ${count}), as the audit chain recorded them; checked by \`bernstein-verify pack\` |
`;
}

/** The members row of the attachment exports, only when the pack carries some. */
function attachmentRow(runs: readonly string[] | undefined): string {
  if (runs === undefined || runs.length === 0) return "";
  return `| \`attachments/<run>/\` | what each agent was shown, per run (${
    runs.join(", ")
  }): attested bytes, attach events, spawns, lineage entries; checked by \`bernstein-verify pack\` |
`;
}

/** `verify-instructions.md`: the auditor's one-page guide. */
export function renderVerifyInstructions(): string {
  return `# Verifying this pack

## The one command

\`\`\`sh
bernstein-verify pack pack.zip --operator-fingerprint <fingerprint from the operator>
\`\`\`

\`bernstein-verify\` is a separate, read-only program: it cannot write files, open the network,
read the environment or start programs, and it never extracts the pack. Exit code 0 and
\`PASS pack: N entries, M agents\` mean **every** check passed: the archive is well formed; the
manifest is signed by the operator key you pinned; every member is byte-for-byte what the
operator signed; every lineage line is canonical, correctly chained and signed by the agent
key its card publishes; no fork is left unresolved; the CSV and the Article 12 figures
match the log; and every entry is, at its place, in the log the operator's signed checkpoint
commits to. Exit code 1 and \`FAIL pack: N errors\` list one line per problem. Without
\`--operator-fingerprint\` (or \`--operator-key operator.pub\` received out of band) the pack is
only checked against the key inside it, which proves nothing about who built it.

## What each failure means

| failure | meaning |
| --- | --- |
| unreadable archive, unsupported zip feature, corrupt member | not a well-formed pack (damaged, or made by another tool) |
| zip-slip member name, duplicate member, encrypted member, oversized member, archive too large | a hostile or tampered archive; nothing in it was used |
| unexpected member, missing member, member not in manifest | members were added or removed after the operator signed |
| manifest invalid, output hash mismatch | the manifest was edited |
| input hash mismatch | a member differs from what the operator signed |
| manifest signature invalid | the manifest is not signed by \`operator.pub\` |
| operator key mismatch | signed by another key than the one you pinned |
| non-canonical line bytes, missing trailing newline, invalid entry | a log line was edited, re-formatted (spaces, key order) or cut |
| invalid signature, kid binding mismatch, kid binding cannot be established | an entry is not signed by its agent's published key (edited entry, forged or swapped signature, substituted key id, missing card) |
| conflicting agent cards, invalid agent card | two keys claim one agent identity and key id, or a card is broken |
| dangling parent_hash | an entry's parent is neither in the pack nor declared as preceding the period: an entry was removed |
| unresolved fork | concurrent writes to one artefact were never merged |
| entry outside period, entry count mismatch, CSV mismatch, article12 facts mismatch, external parent invalid, orphan signature | the manifest or the CSV states something the log does not support |
| invalid checkpoint, checkpoint signature invalid, inclusion proof invalid | the period's entries are not shown to be in the log the operator committed to |

Operator HMACs inside the entries are not checked here: they need the operator's secret.

## Later: did the log only grow?

Keep \`${PACK_CHECKPOINT_MEMBER}\`. When the operator later hands you a newer checkpoint (\`bernstein
lineage checkpoint --out new.json --from ${PACK_CHECKPOINT_MEMBER}\`), run

\`\`\`sh
bernstein-verify consistency pack.zip new.json --operator-fingerprint <fingerprint>
\`\`\`

\`PASS consistency\` proves (RFC 9162 consistency proof) that the newer log extends the one this
pack was cut from: nothing in it was removed or rewritten since. \`fork of history\` means the log
was rewritten and re-signed.

## By hand, trusting no binary

Needs unzip, sha256sum, openssl 3 and a POSIX shell. Work in an empty folder next to
\`pack.zip\`; each step prints what it proved or stops.

\`\`\`sh
mkdir pack && cd pack && unzip -q ../pack.zip
# 1. The operator key: compare with the fingerprint the operator gave you.
openssl pkey -pubin -in operator.pub -outform DER | sha256sum | cut -c1-64
# 2. The manifest signature (detached JWS, RFC 7797: header "." manifest bytes).
{ cut -d. -f1 pack-manifest.json.sig | tr -d '\\n'; printf .; cat pack-manifest.json; } > signed-input
printf '%s==' "$(cut -d. -f3 pack-manifest.json.sig | tr '_-' '/+')" | openssl base64 -d -A > manifest.sig
openssl pkeyutl -verify -pubin -inkey operator.pub -rawin -in signed-input -sigfile manifest.sig
# 3. The output hash: SHA-256 of the manifest without its output_hash field.
test "$(sed 's/"output_hash":"sha256:[0-9a-f]\\{64\\}",//' pack-manifest.json | sha256sum | cut -c1-64)" = \\
  "$(grep -o '"output_hash":"sha256:[0-9a-f]\\{64\\}"' pack-manifest.json | cut -c23-86)" && echo "output hash OK"
# 4. Every member's hash, and no member more or less than the manifest lists.
grep -o '"[^"]*":"sha256:[0-9a-f]\\{64\\}"' pack-manifest.json | grep -v '^"output_hash"' |
  sed 's/^"\\(.*\\)":"sha256:\\(.*\\)"$/\\2  \\1/' > expected.sha256
sha256sum -c --quiet expected.sha256 && echo "all member hashes match"
unzip -Z1 ../pack.zip | grep -v '^pack-manifest\\.json' | sort > in-zip.txt
cut -c67- expected.sha256 | sort | diff in-zip.txt - && echo "exactly the listed members"
# 5. Spot-check one entry (here line 1): its signature by the agent key of its card.
sed -n 1p lineage-log.jsonl | tr -d '\\n' > entry.json
ENTRY=$(sha256sum entry.json | cut -c1-64)
KID=$(grep -o '"agent_card_kid":"[^"]*"' entry.json | cut -d'"' -f4)
grep -o '"public_key_pem":"[^"]*"' agent-cards/*/"$KID".json | cut -d'"' -f4 | sed 's/\\\\n/\\n/g' > agent.pub
{ cut -d. -f1 "signatures/$ENTRY.jws" | tr -d '\\n'; printf .; cat entry.json; } > entry-input
printf '%s==' "$(cut -d. -f3 "signatures/$ENTRY.jws" | tr '_-' '/+')" | openssl base64 -d -A > entry.sig
openssl pkeyutl -verify -pubin -inkey agent.pub -rawin -in entry-input -sigfile entry.sig
\`\`\`

Steps 2 and 5 print \`Signature Verified Successfully\`. Also check that the card's
\`agent_id\` is the entry's, and that each entry's \`parent_hashes\` name earlier lines
(\`sha256sum\` of a line without its newline is its entry hash) or the manifest's
\`external_parents\`.
`;
}
