// Where each agent CLI talks to its model when no endpoint profile points it elsewhere: the
// provider hosts the sandbox's egress proxy lets it reach by default. With an endpoint profile
// only that endpoint is allowed (plus the task server and `network.egress`), and base-URL
// variables the agent was given (ANTHROPIC_BASE_URL, …) name their hosts too.

/** Provider API hosts (`host:port`) of each adapter, used when it has no endpoint profile. */
export const PROVIDER_HOSTS: Readonly<Record<string, readonly string[]>> = {
  claude: ["api.anthropic.com:443"],
  codex: ["api.openai.com:443", "chatgpt.com:443"],
  gemini: [
    "generativelanguage.googleapis.com:443",
    "cloudcode-pa.googleapis.com:443",
    "oauth2.googleapis.com:443",
  ],
  qwen: ["dashscope.aliyuncs.com:443", "dashscope-intl.aliyuncs.com:443", "chat.qwen.ai:443"],
  opencode: ["api.anthropic.com:443", "api.openai.com:443", "openrouter.ai:443"],
  aider: ["api.anthropic.com:443", "api.openai.com:443", "openrouter.ai:443"],
  goose: ["api.anthropic.com:443", "api.openai.com:443", "openrouter.ai:443"],
  amp: ["ampcode.com:443"],
  cursor: ["api2.cursor.sh:443"],
  ollama: ["127.0.0.1:11434"],
  generic: [],
  scripted: [],
};

const URL_VARIABLE = /(_BASE_URL|_API_BASE|_API_URL|_ENDPOINT|_HOST)$/;

function hostPortOf(text: string): string | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  try {
    const url = new URL(withScheme);
    if (url.hostname === "") return undefined;
    const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
    const host = url.hostname.includes(":")
      ? `[${url.hostname.replace(/^\[|\]$/g, "")}]`
      : url.hostname;
    return `${host}:${port}`;
  } catch {
    return undefined;
  }
}

/** What an agent's egress allowlist is built from. */
export interface EgressInput {
  /** Adapter name. */
  adapter: string;
  /** The endpoint profile's base URL, when the role has one. */
  endpointUrl?: string;
  /** The agent's environment (base-URL variables name their hosts). */
  env: Readonly<Record<string, string>>;
  /** The task server's URL. */
  serverUrl?: string;
  /** `network.egress` entries. */
  extra?: readonly string[];
}

/**
 * The destinations (`host:port`, or `network.egress` entries as written) an agent may reach:
 * the task server, its endpoint (or, without one, its provider's hosts), the hosts of the
 * base-URL variables it was given, and `network.egress`. Sorted, without duplicates.
 *
 * @example
 * ```ts
 * agentEgress({ adapter: "claude", env: {}, serverUrl: "http://127.0.0.1:4000" });
 * // ["127.0.0.1:4000", "api.anthropic.com:443"]
 * ```
 */
export function agentEgress(input: EgressInput): string[] {
  const out = new Set<string>();
  const add = (text: string | undefined) => {
    const hp = text === undefined ? undefined : hostPortOf(text);
    if (hp !== undefined) out.add(hp);
  };
  add(input.serverUrl);
  if (input.endpointUrl !== undefined) add(input.endpointUrl);
  else for (const h of PROVIDER_HOSTS[input.adapter] ?? []) out.add(h);
  for (const [name, value] of Object.entries(input.env)) {
    if (URL_VARIABLE.test(name) && !/PROXY/.test(name)) add(value);
  }
  for (const e of input.extra ?? []) out.add(e);
  return [...out].sort();
}
