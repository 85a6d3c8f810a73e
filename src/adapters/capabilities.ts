/** What an adapter's CLI can do, as the orchestrator relies on it. */
export interface Capabilities {
  /** Accepts attachments inlined in the prompt (FORMATS.md §7) and can look at images. */
  multimodal: boolean;
  /** Largest single attachment it accepts in bytes (0 when not multimodal). */
  max_attachment_bytes: number;
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

const MB = 1024 * 1024;

/**
 * THE capability inventory: one row per registered adapter. The attachment gate, the docs and
 * `bernstein adapters list` read this table; adapters take their row from it.
 */
export const CAPABILITY_TABLE: Readonly<Record<string, Capabilities>> = {
  claude: {
    multimodal: true,
    max_attachment_bytes: 20 * MB,
    resume: true,
    cost_reporting: true,
    token_reporting: true,
    turn_reporting: true,
    max_turns: true,
    endpoints: true,
  },
  codex: {
    multimodal: true,
    max_attachment_bytes: 20 * MB,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: false,
    max_turns: false,
    endpoints: true,
  },
  gemini: {
    multimodal: true,
    max_attachment_bytes: 20 * MB,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: false,
    max_turns: true,
    endpoints: true,
  },
  qwen: {
    multimodal: false,
    max_attachment_bytes: 0,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: true,
    max_turns: true,
    endpoints: true,
  },
  opencode: {
    multimodal: true,
    max_attachment_bytes: 20 * MB,
    resume: true,
    cost_reporting: true,
    token_reporting: true,
    turn_reporting: true,
    max_turns: false,
    endpoints: true,
  },
  aider: {
    multimodal: false,
    max_attachment_bytes: 0,
    resume: false,
    cost_reporting: true,
    token_reporting: true,
    turn_reporting: false,
    max_turns: false,
    endpoints: true,
  },
  ollama: {
    multimodal: false,
    max_attachment_bytes: 0,
    resume: false,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: true,
    max_turns: false,
    endpoints: true,
  },
  cursor: {
    multimodal: false,
    max_attachment_bytes: 0,
    resume: true,
    cost_reporting: false,
    token_reporting: false,
    turn_reporting: false,
    max_turns: false,
    endpoints: false,
  },
  amp: {
    multimodal: false,
    max_attachment_bytes: 0,
    resume: true,
    cost_reporting: false,
    token_reporting: true,
    turn_reporting: true,
    max_turns: false,
    endpoints: false,
  },
  goose: {
    multimodal: false,
    max_attachment_bytes: 0,
    resume: true,
    cost_reporting: false,
    token_reporting: false,
    turn_reporting: false,
    max_turns: true,
    endpoints: true,
  },
  generic: {
    multimodal: false,
    max_attachment_bytes: 0,
    resume: false,
    cost_reporting: false,
    token_reporting: false,
    turn_reporting: false,
    max_turns: true,
    endpoints: true,
  },
  // The scripted agent records the prompt bytes it got, so attachment tests use it.
  scripted: {
    multimodal: true,
    max_attachment_bytes: 20 * MB,
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
