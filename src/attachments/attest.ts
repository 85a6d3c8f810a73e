// Provenance of one attachment of one worker: the exact encoded bytes stored once in CAS, and a
// `multimodal.attach` audit event (FORMATS.md §2) binding them to the worker and its worktree.
import type { AuditRecord, AuditSink } from "../audit/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import type { CasStore } from "../cas/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import type { WireAttachment } from "./wire.ts";
import { sddFile } from "../io/mod.ts";

/** Event type of an attachment attestation. */
export const ATTACH_EVENT = "multimodal.attach";

const encoder = new TextEncoder();

/** `worktree_id`: the first 16 hex of SHA-256 of the resolved (real, absolute) worktree path. */
export function worktreeIdOf(resolvedPath: string): string {
  return sha256Hex(encoder.encode(resolvedPath)).slice(0, 16);
}

/** `operator_install_id_sig`: hex SHA-256 of the 16-hex install id (its ASCII bytes). */
export function installIdSig(installId: string): string {
  if (!/^[0-9a-f]{16}$/.test(installId)) {
    throw new BernsteinError(
      "attach.install_id",
      `.sdd/install_id must hold 16 lowercase hex characters, found ${
        JSON.stringify(installId.slice(0, 40))
      }`,
      {
        hint: "'bernstein init' writes it; restore it from backup or re-run init in a new project",
      },
    );
  }
  return sha256Hex(encoder.encode(installId));
}

/** Reads `.sdd/install_id` (written by `bernstein init`) and returns its signature. */
export async function readInstallIdSig(sdd: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(sddFile(sdd, "installId"));
  } catch (error) {
    throw new BernsteinError(
      "attach.install_id",
      `cannot read .sdd/install_id: ${(error as Error).message}`,
      {
        hint: "run 'bernstein init'",
      },
    );
  }
  return installIdSig(text);
}

/** Who receives the attachment. */
export interface AttestTarget {
  /** CAS of the project. */
  cas: CasStore;
  /** Audit chain. */
  audit: AuditSink;
  /** `operator_install_id_sig`. */
  installIdSig: string;
  /** The worker (agent session id). */
  workerId: string;
  /** Turn the attachment belongs to (0 for the spawn-time turn). */
  turnSeq: number;
  /** `worktree_id` of the worker's worktree. */
  worktreeId: string;
}

/**
 * How the bytes reach the CLI when not as prompt text (ATTACHMENTS.md "Delivery"): a content
 * block of the user message, or a worktree copy at `path` that the prompt names with `@path`
 * (`file-reference`) or a command-line flag attaches (`file-argument`).
 */
export interface Delivery {
  /** The CLI's channel. */
  channel: "content-block" | "file-reference" | "file-argument";
  /** Worktree-relative path of the copy (`file-reference`, `file-argument`). */
  path?: string;
}

/** The `details` of a `multimodal.attach` event (before `prev_chain_digest` is bound). */
export function attachEventDetails(
  item: WireAttachment,
  target: AttestTarget,
  delivery?: Delivery,
): JsonObject {
  const details: JsonObject = {
    sha256: item.sha256,
    mime: item.mime,
    operator_install_id_sig: target.installIdSig,
    worker_id: target.workerId,
    turn_seq: target.turnSeq,
    worktree_id: target.worktreeId,
  };
  // How a text block is labelled in the prompt, so a resumed spawn renders the same bytes.
  if (item.path !== undefined) details.path = item.path;
  if (item.firstLine !== undefined) details.first_line = item.firstLine;
  // Bytes that travel beside the prompt text say how (absent: inside it, FORMATS.md §7).
  if (delivery !== undefined) {
    details.delivery = delivery.channel;
    if (delivery.path !== undefined) details.delivery_path = delivery.path;
  }
  return details;
}

/**
 * Stores the exact bytes once in CAS (first writer wins) and appends the `multimodal.attach`
 * event with `prev_chain_digest` bound under the audit lock. Returns the audit record.
 */
export async function attestAttachment(
  item: WireAttachment,
  target: AttestTarget,
  delivery?: Delivery,
): Promise<AuditRecord> {
  const put = await target.cas.put(item.bytes, { contentType: item.mime });
  if (put.digest !== item.sha256) {
    throw new BernsteinError(
      "attach.integrity",
      `attachment bytes hash to ${put.digest}, not the ${item.sha256} they were screened with`,
    );
  }
  return await target.audit.append({
    actor: "orchestrator",
    event_type: ATTACH_EVENT,
    resource_type: "agent",
    resource_id: target.workerId,
    details: attachEventDetails(item, target, delivery),
  }, { bindPrevChainDigest: true });
}
