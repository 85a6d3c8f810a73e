// What one task's attachments may be: how many, how much text, and which images and documents
// an adapter takes (from the one capability table). Pure checks that throw the field path first.
import { ADAPTER_NAMES, type Capabilities, capabilitiesFor } from "../adapters/mod.ts";
import {
  HOST_IMAGE_TYPES,
  MAX_ATTACHMENTS_PER_TASK,
  MAX_HOST_BYTES_PER_TASK,
  MAX_HOST_NAME_CHARS,
  MAX_HOST_TEXT_BYTES,
} from "../plan/mod.ts";
import { AttachmentCapabilityError, AttachmentError } from "./errors.ts";

/** Most attachments one task carries (run-wide and its own together, after de-duplication). */
export const MAX_ATTACHMENTS = MAX_ATTACHMENTS_PER_TASK;

/** Most rendered characters (code points of the line-numbered text) of one text attachment. */
export const MAX_TEXT_CHARS = 100_000;

/**
 * Largest file read to make an attachment. Images are bounded lower by the adapters; a text
 * file past this is refused rather than read whole for a 100 000-character excerpt.
 */
export const MAX_SOURCE_BYTES = 64 * 1024 * 1024;

/** `31.2 MB` (MiB, one decimal), for messages. */
export function formatSize(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  if (Number.isInteger(mb)) return `${mb} MB`;
  if (mb >= 1) return `${mb.toFixed(mb >= 10 ? 0 : 1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

function imageTerms(caps: Capabilities): string {
  const types = caps.image_types.map((t) => t.slice("image/".length)).join(", ");
  return `${types} up to ${formatSize(caps.max_attachment_bytes)}`;
}

/** One image: its MIME type and size. */
export interface ImageFacts {
  /** Sniffed MIME type. */
  mime: string;
  /** Size in bytes. */
  size: number;
}

/** Adapters that take this image (type and size), with their terms, for messages. */
export function adaptersTakingImage(image: ImageFacts): string {
  const takers = ADAPTER_NAMES.map((name) => ({ name, caps: capabilitiesFor(name) }))
    .filter(({ caps }) =>
      caps.multimodal && (caps.image_types as readonly string[]).includes(image.mime) &&
      image.size <= caps.max_attachment_bytes
    );
  if (takers.length === 0) return "none (no adapter takes this image)";
  return takers.map(({ name, caps }) => `${name} (${imageTerms(caps)})`).join(", ");
}

/** Where an image goes: the field it was declared in, the task and its adapter. */
export interface ImageDestination {
  /** Field path of the declaration (`run.attach[0]`). */
  field: string;
  /** Path as declared. */
  path: string;
  /** Task that would receive it. */
  taskId: string;
  /** Adapter of that task. */
  adapter: string;
}

/**
 * Refuses an image its adapter cannot take: not multimodal → {@linkcode AttachmentCapabilityError}
 * naming the adapters that can; a type or size the adapter's API refuses → `attach.invalid`.
 */
export function checkAdapterTakesImage(image: ImageFacts, to: ImageDestination): void {
  const caps = capabilitiesFor(to.adapter);
  const takers = adaptersTakingImage(image);
  if (!caps.multimodal) {
    throw new AttachmentCapabilityError(
      `${to.path} is an image (${image.mime}) but task ${to.taskId} runs on '${to.adapter}', ` +
        `which cannot take images; adapters that can: ${takers}`,
      { location: to.field, hint: "give the task a multimodal adapter (cli: …) or drop the image" },
    );
  }
  if (!(caps.image_types as readonly string[]).includes(image.mime)) {
    throw new AttachmentError(
      `${to.path} is ${image.mime}, which ${to.adapter} does not accept (it takes ${
        imageTerms(caps)
      }); adapters that take it: ${takers}`,
      { location: to.field },
    );
  }
  if (image.size > caps.max_attachment_bytes) {
    throw new AttachmentError(
      `file is ${formatSize(image.size)}, the limit for ${to.adapter} is ${
        formatSize(caps.max_attachment_bytes)
      } (${to.path}, task ${to.taskId})`,
      { location: to.field },
    );
  }
}

function documentTerms(caps: Capabilities): string {
  const types = caps.document_types.map((t) => t.slice(t.indexOf("/") + 1)).join(", ");
  return `${types} up to ${formatSize(caps.max_document_bytes)}`;
}

/** Adapters that take this document (type and size), with their terms, for messages. */
export function adaptersTakingDocument(document: ImageFacts): string {
  const takers = ADAPTER_NAMES.map((name) => ({ name, caps: capabilitiesFor(name) }))
    .filter(({ caps }) =>
      (caps.document_types as readonly string[]).includes(document.mime) &&
      document.size <= caps.max_document_bytes
    );
  if (takers.length === 0) return "none (no adapter takes this document)";
  return takers.map(({ name, caps }) => `${name} (${documentTerms(caps)})`).join(", ");
}

/**
 * Refuses a document (PDF) its adapter has no channel for — {@linkcode AttachmentCapabilityError}
 * naming the adapters that take it — or one over the adapter's size limit (`attach.invalid`).
 */
export function checkAdapterTakesDocument(document: ImageFacts, to: ImageDestination): void {
  const caps = capabilitiesFor(to.adapter);
  if (!(caps.document_types as readonly string[]).includes(document.mime)) {
    throw new AttachmentCapabilityError(
      `${to.path} is a document (${document.mime}) but task ${to.taskId} runs on ` +
        `'${to.adapter}', which cannot take documents; adapters that can: ${
          adaptersTakingDocument(document)
        }`,
      { location: to.field, hint: "give the task an adapter that takes PDFs (cli: …) or drop it" },
    );
  }
  if (document.size > caps.max_document_bytes) {
    throw new AttachmentError(
      `file is ${formatSize(document.size)}, the limit for a document on ${to.adapter} is ${
        formatSize(caps.max_document_bytes)
      } (${to.path}, task ${to.taskId})`,
      { location: to.field },
    );
  }
}

/** Checks an image or a document (by its MIME type) against the task's adapter. */
export function checkAdapterTakesMedia(media: ImageFacts, to: ImageDestination): void {
  if (media.mime.startsWith("image/")) checkAdapterTakesImage(media, to);
  else checkAdapterTakesDocument(media, to);
}

/** Refuses more than {@linkcode MAX_ATTACHMENTS} attachments for one task. */
export function checkAttachmentCount(count: number, field: string, taskId: string): void {
  if (count > MAX_ATTACHMENTS) {
    throw new AttachmentError(
      `task ${taskId} would carry ${count} attachments; at most ${MAX_ATTACHMENTS} per task ` +
        "(run-wide --attach and the step's own together)",
      { location: field },
    );
  }
}

/**
 * What an adapter can be handed (ATTACHMENTS.md "Kinds and limits"): every adapter takes text
 * (files and line ranges), folder listings, notebooks as their cells' text and texts held by
 * value; images (files or held by value) only through an image channel, documents (PDF) only
 * through a document channel.
 */
export type SeatKind =
  | "text"
  | "folder"
  | "notebook"
  | "held_text"
  | "image"
  | "held_image"
  | "document";

/** The kinds one adapter takes, from its capabilities. */
export function attachmentKinds(caps: Capabilities): SeatKind[] {
  const kinds: SeatKind[] = ["text", "folder", "notebook", "held_text"];
  if (caps.multimodal) kinds.push("image", "held_image");
  if (caps.document_types.length > 0) kinds.push("document");
  return kinds;
}

/** The seat's limits for every adapter (`adapters list --json` `attachments`). */
export function seatDescriptor(): {
  kinds: SeatKind[];
  max_per_task: number;
  max_text_chars: number;
  max_read_bytes: number;
  held: {
    image_types: string[];
    max_name_chars: number;
    max_text_bytes: number;
    max_bytes_per_task: number;
  };
} {
  return {
    kinds: ["text", "folder", "notebook", "held_text", "image", "held_image", "document"],
    max_per_task: MAX_ATTACHMENTS,
    max_text_chars: MAX_TEXT_CHARS,
    max_read_bytes: MAX_SOURCE_BYTES,
    held: {
      image_types: [...HOST_IMAGE_TYPES],
      max_name_chars: MAX_HOST_NAME_CHARS,
      max_text_bytes: MAX_HOST_TEXT_BYTES,
      max_bytes_per_task: MAX_HOST_BYTES_PER_TASK,
    },
  };
}
