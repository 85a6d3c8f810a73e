/**
 * How attachment bytes other than text (images) reach the CLI's model (ATTACHMENTS.md
 * "Delivery"): `content-block` — image blocks in a stream-json user message on stdin (claude);
 * `file-reference` — a copy in the worktree named with `@path` in the prompt, which the CLI reads
 * and sends as inline data (gemini, qwen); `file-argument` — a copy in the worktree named by a
 * command-line flag that attaches it to the first message (codex `--image`, opencode `--file`);
 * `prompt-text` — base64 inside the prompt text, the FORMATS.md §7 wire block itself (every
 * other adapter; only text reaches a non-multimodal one).
 */
export type AttachmentChannel =
  | "content-block"
  | "file-reference"
  | "file-argument"
  | "prompt-text";

/** What an adapter's CLI can do, as the orchestrator relies on it. */
export interface Capabilities {
  /** Can take image attachments (through `attachment_channel`); text attachments go to all. */
  multimodal: boolean;
  /** How image bytes reach its model. */
  attachment_channel: AttachmentChannel;
  /** Largest single image its model API accepts, in bytes (0 when not multimodal). */
  max_attachment_bytes: number;
  /** Image MIME types its model API accepts (empty when not multimodal). */
  image_types: readonly ImageMime[];
  /**
   * Document types (PDF) it takes through the same channel (a `document` content block, an
   * `@path` copy sent as inline data); empty when it has no document channel.
   */
  document_types: readonly DocumentMime[];
  /** Largest single document its model API accepts, in bytes (0 when none). */
  max_document_bytes: number;
  /** Can resume a previous session by id. */
  resume: boolean;
  /** Reports the cost of a run in its output. */
  cost_reporting: boolean;
  /** Reports token usage in its output. */
  token_reporting: boolean;
  /** Reports the number of turns in its output. */
  turn_reporting: boolean;
  /** Has a turn limit the orchestrator can set. */
  max_turns: boolean;
  /** Can be pointed at a `local_endpoints` profile. */
  endpoints: boolean;
}

/** The image types attachments can carry (what sniffing recognises). */
export type ImageMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** The document types attachments can carry (what sniffing recognises). */
export type DocumentMime = "application/pdf";

const MB = 1024 * 1024;
const NO_IMAGES = {
  multimodal: false,
  attachment_channel: "prompt-text",
  max_attachment_bytes: 0,
  image_types: [],
  document_types: [],
  max_document_bytes: 0,
} as const;

/**
 * THE capability inventory: one row per registered adapter. The attachment gate, the docs and
 * `bernstein adapters list` read this table; adapters take their row from it.
 */
export const CAPABILITY_TABLE: Readonly<Record<string, Capabilities>> = {
  // Anthropic Messages API: 5 MB per image (larger is a 400), PNG, JPEG, GIF and WebP; the
  // image goes as an `image` content block of a `--input-format stream-json` user message.
  claude: {
    multimodal: true,
    attachment_channel: "content-block",
    max_attachment_bytes: 5 * MB,
    image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
    // A PDF goes as a `document` block: 32 MB per request, base64 4/3 larger.
    document_types: ["application/pdf"],
    max_document_bytes: 24 * MB,
    resume: true,
    cost_reporting: true,
    token_reporting: true,
    turn_reporting: true,
    max_turns: true,
    endpoints: true,
  },
  // OpenAI Responses API: 20 MB per image (50 MB per request), PNG, JPEG, GIF and WebP. The
  // CLI reads the copy `--image` names and sends it as an `input_image` data URL; it keeps the
  // bytes of an image that fits 2048×768 and resizes larger ones (ATTACHMENTS.md "Delivery").
  codex: {
    multimodal: true,
    attachment_channel: "file-argument",
    max_attachment_bytes: 20 * MB,
    image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
    document_types: [],
    max_document_bytes: 0,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: false,
    max_turns: false,
    endpoints: true,
  },
  // Gemini API: inline data shares a 20 MB request limit and travels as base64 (4/3 larger),
  // so 14 MiB leaves room for the prompt; PNG, JPEG and WebP (no GIF). The CLI reads an
  // `@path` copy in the worktree and sends it as `inlineData`.
  gemini: {
    multimodal: true,
    attachment_channel: "file-reference",
    max_attachment_bytes: 14 * MB,
    image_types: ["image/png", "image/jpeg", "image/webp"],
    // The CLI sends an `@path` PDF as `inlineData` too, under the same request limit.
    document_types: ["application/pdf"],
    max_document_bytes: 14 * MB,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: false,
    max_turns: true,
    endpoints: true,
  },
  // Qwen Code reads an `@path` copy in the worktree and sends it as an OpenAI `image_url` data
  // URL once its settings declare the image modality (qwenSettings); its file reader refuses
  // files of 9.9 MiB and more. Whether the endpoint's model sees images is the endpoint's.
  qwen: {
    multimodal: true,
    attachment_channel: "file-reference",
    max_attachment_bytes: Math.floor(9.9 * MB),
    image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
    document_types: [],
    max_document_bytes: 0,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: true,
    max_turns: true,
    endpoints: true,
  },
  // opencode attaches the copy `--file` names to its first message as a file part, sent to an
  // OpenAI-compatible endpoint as an `image_url` data URL once the model's configuration declares
  // image input (opencodeConfig); 20 MB per image as the OpenAI API.
  opencode: {
    multimodal: true,
    attachment_channel: "file-argument",
    max_attachment_bytes: 20 * MB,
    image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
    document_types: [],
    max_document_bytes: 0,
    resume: true,
    cost_reporting: true,
    token_reporting: true,
    turn_reporting: true,
    max_turns: false,
    endpoints: true,
  },
  aider: {
    ...NO_IMAGES,
    resume: false,
    cost_reporting: true,
    token_reporting: true,
    turn_reporting: false,
    max_turns: false,
    endpoints: true,
  },
  ollama: {
    ...NO_IMAGES,
    resume: false,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: true,
    max_turns: false,
    endpoints: true,
  },
  cursor: {
    ...NO_IMAGES,
    resume: true,
    cost_reporting: false,
    token_reporting: false,
    turn_reporting: false,
    max_turns: false,
    endpoints: false,
  },
  amp: {
    ...NO_IMAGES,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: true,
    max_turns: false,
    endpoints: false,
  },
  goose: {
    ...NO_IMAGES,
    resume: true,
    cost_reporting: false,
    token_reporting: false,
    turn_reporting: false,
    max_turns: true,
    endpoints: true,
  },
  generic: {
    ...NO_IMAGES,
    resume: false,
    cost_reporting: false,
    token_reporting: false,
    turn_reporting: false,
    max_turns: true,
    endpoints: true,
  },
  // The test agent takes no images; a test may register it as multimodal
  // (registerScriptedAsMultimodal, see capabilitiesFor).
  scripted: {
    ...NO_IMAGES,
    resume: false,
    cost_reporting: true,
    token_reporting: true,
    turn_reporting: true,
    max_turns: true,
    endpoints: true,
  },
};

/** The capability row of a registered adapter (throws for names outside the table). */
export function capabilitiesOf(name: string): Capabilities {
  const row = CAPABILITY_TABLE[name];
  if (row === undefined) throw new Error(`no capability row for adapter '${name}'`);
  return row;
}

/**
 * What the scripted test agent can do once a test registers it as multimodal: every image type
 * and PDFs, 20 MiB, on the channel the test picked.
 */
const SCRIPTED_TEST_MULTIMODAL: Capabilities = {
  ...CAPABILITY_TABLE.scripted,
  multimodal: true,
  attachment_channel: "prompt-text",
  max_attachment_bytes: 20 * MB,
  image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
  document_types: ["application/pdf"],
  max_document_bytes: 20 * MB,
};

/** The channels a test can register the scripted agent's images on. */
export type ScriptedTestChannel = "prompt-text" | "file-reference";

// Test seam: the scripted agent's row while a test has it registered as multimodal. Only test
// code calls the setter (tests/_helpers/scripted_multimodal.ts, and the test entry point the e2e
// tests run bernstein through); no configuration key, flag or environment variable reaches it,
// and the scripted agent never runs from a compiled binary.
let scriptedTestRow: Capabilities | undefined;

/**
 * Registers the scripted test agent as multimodal in this process, its images delivered on
 * `channel` (inline in the prompt text, or as worktree copies named with `@path` the way gemini
 * and qwen get them), or undoes that (`undefined`). For tests only.
 */
export function registerScriptedAsMultimodal(channel: ScriptedTestChannel | undefined): void {
  scriptedTestRow = channel === undefined
    ? undefined
    : { ...SCRIPTED_TEST_MULTIMODAL, attachment_channel: channel };
}

/**
 * The capabilities an adapter runs with: its table row, except for the scripted test agent
 * while a test has registered it as multimodal ({@linkcode registerScriptedAsMultimodal}). No
 * adapter can be made multimodal by configuration.
 */
export function capabilitiesFor(name: string): Capabilities {
  if (name === "scripted" && scriptedTestRow !== undefined) return scriptedTestRow;
  return capabilitiesOf(name);
}
