// Picking the tool call for a turn from the tools the CLI offered (never a hard-coded name
// alone: tool names and parameters change between CLI versions), and finding the agent's
// working directory in what the CLI sent.

/** A tool the request offered, with the names of its parameters. */
export interface OfferedTool {
  /** Tool name. */
  name: string;
  /** Parameter names from its JSON schema. */
  props: string[];
}

/** A tool call the server answers with. */
export interface ToolCall {
  /** Tool name (one of the offered ones). */
  name: string;
  /** Arguments. */
  args: Record<string, unknown>;
}

// Known file-writing tools (claude Write, gemini/qwen write_file, opencode write); any other
// offered tool named like a writer with a path and a content parameter also qualifies.
const WRITE_NAMES = ["Write", "write_file", "write", "create_file"];
const PATH_KEYS = ["file_path", "filePath", "path", "absolute_path"];
const CONTENT_KEYS = ["content", "text", "file_text", "contents"];
// Shell tools (codex exec_command offers no file-writing tool).
const SHELL_NAMES = ["Bash", "bash", "exec_command", "shell", "run_shell_command"];
const COMMAND_KEYS = ["command", "cmd"];

function writeTool(tools: readonly OfferedTool[]): OfferedTool | undefined {
  const hasKeys = (t: OfferedTool) =>
    PATH_KEYS.some((k) => t.props.includes(k)) && CONTENT_KEYS.some((k) => t.props.includes(k));
  return tools.find((t) => WRITE_NAMES.includes(t.name) && hasKeys(t)) ??
    tools.find((t) => /write|create/i.test(t.name) && !/todo/i.test(t.name) && hasKeys(t));
}

function shellTool(tools: readonly OfferedTool[]): OfferedTool | undefined {
  return tools.find((t) =>
    SHELL_NAMES.includes(t.name) && COMMAND_KEYS.some((k) => t.props.includes(k))
  );
}

/** Single-quotes a string for sh. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

/** A shell call for `command`, or undefined when no shell tool is offered. */
export function shellCall(tools: readonly OfferedTool[], command: string): ToolCall | undefined {
  const shell = shellTool(tools);
  if (shell === undefined) return undefined;
  const key = COMMAND_KEYS.find((k) => shell.props.includes(k)) as string;
  return { name: shell.name, args: { [key]: command } };
}

/**
 * The call that writes `content` to the absolute `path`: the CLI's file-writing tool when it
 * offers one, else its shell tool with `mkdir -p` + `printf`; undefined when it offers neither.
 */
export function writeCall(
  tools: readonly OfferedTool[],
  path: string,
  content: string,
): ToolCall | undefined {
  const write = writeTool(tools);
  if (write !== undefined) {
    const pathKey = PATH_KEYS.find((k) => write.props.includes(k)) as string;
    const contentKey = CONTENT_KEYS.find((k) => write.props.includes(k)) as string;
    return { name: write.name, args: { [pathKey]: path, [contentKey]: content } };
  }
  const dir = path.slice(0, path.lastIndexOf("/")) || "/";
  return shellCall(
    tools,
    `mkdir -p ${shellQuote(dir)} && printf '%s' ${shellQuote(content)} > ${shellQuote(path)}`,
  );
}

/**
 * The call of a scripted `call` action: the first of `names` the CLI offers, with `args` (JSON
 * text) after `{cwd}` is replaced by the JSON-escaped working directory; a reason when none of
 * the names is offered or the arguments are not a JSON object.
 */
export function namedCall(
  tools: readonly OfferedTool[],
  names: readonly string[],
  args: string,
  cwd: string,
): ToolCall | string {
  const tool = names.find((n) => tools.some((t) => t.name === n));
  if (tool === undefined) {
    return `none of ${names.join(", ")} among ${tools.map((t) => t.name).join(", ")}`;
  }
  const parsed: unknown = JSON.parse(args.replaceAll("{cwd}", JSON.stringify(cwd).slice(1, -1)));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return "the arguments are not a JSON object";
  }
  return { name: tool, args: parsed as Record<string, unknown> };
}

// Where each pinned CLI states its working directory (AGENT_CLIS.md). Gemini also names a
// temporary directory; only its "Workspace Directories" list counts.
const CWD_PATTERNS: readonly RegExp[] = [
  /Primary working directory: (\/[^\n]*)/, // claude
  /<cwd>(\/[^<\n]*)<\/cwd>/, // codex
  /Workspace Directories:\**\n\s*- (\/[^\n]*)/, // gemini
  /Working directory: (\/[^\n]*)/, // opencode
  /I'm currently working in the directory: (\/[^\n]*)/, // qwen
];

/** The working directory a CLI announced in its request texts, or undefined. */
export function findCwd(texts: readonly string[]): string | undefined {
  for (const pattern of CWD_PATTERNS) {
    for (const text of texts) {
      const m = pattern.exec(text);
      if (m !== null) return m[1].trim();
    }
  }
  return undefined;
}
