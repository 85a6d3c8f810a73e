// `network.allowed_ips`: exact addresses or CIDR ranges, IPv4 and IPv6. IPv4-mapped IPv6
// addresses (`::ffff:127.0.0.1`) match their IPv4 entries.
import { ServerStartError } from "./errors.ts";

interface Range {
  v6: boolean;
  base: bigint;
  prefix: number;
}

function parseV4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255 || (p.length > 1 && p.startsWith("0"))) {
      return undefined;
    }
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function parseV6(text: string): bigint | undefined {
  let t = text;
  let tailV4: bigint | undefined;
  const lastColon = t.lastIndexOf(":");
  if (t.includes(".") && lastColon >= 0) {
    tailV4 = parseV4(t.slice(lastColon + 1));
    if (tailV4 === undefined) return undefined;
    t = `${t.slice(0, lastColon + 1)}0:0`;
  }
  const halves = t.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] === "" ? [] : halves[0].split(":");
  const tail = halves.length === 2 ? (halves[1] === "" ? [] : halves[1].split(":")) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  if (tailV4 !== undefined) v = (v & ~0xffffffffn) | tailV4;
  return v;
}

/** Parses an address to `{v6, value}`, folding IPv4-mapped IPv6 to IPv4. */
function parseAddress(text: string): { v6: boolean; value: bigint } | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const v4 = parseV4(bare);
  if (v4 !== undefined) return { v6: false, value: v4 };
  const v6 = parseV6(bare.split("%")[0]);
  if (v6 === undefined) return undefined;
  if (v6 >> 32n === 0xffffn) return { v6: false, value: v6 & 0xffffffffn };
  return { v6: true, value: v6 };
}

/** Tells whether a client address may talk to the server. */
export interface IpAllowList {
  /** True when `address` matches an entry. */
  allows(address: string): boolean;
}

/**
 * Compiles `network.allowed_ips`. A bad entry is an error naming its index, so a typo never
 * silently opens or closes the server.
 */
export function compileAllowList(entries: readonly string[]): IpAllowList {
  const ranges: Range[] = entries.map((entry, i) => {
    const [addr, prefixText, extra] = entry.trim().split("/");
    const parsed = parseAddress(addr);
    const max = parsed?.v6 ? 128 : 32;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (
      parsed === undefined || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 ||
      prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))
    ) {
      throw new ServerStartError(
        "server.bad_allowed_ip",
        `'${entry}' is not an IP address or CIDR range`,
        { location: `network.allowed_ips[${i}]` },
      );
    }
    return { v6: parsed.v6, base: parsed.value, prefix };
  });
  return {
    allows(address) {
      const a = parseAddress(address);
      if (a === undefined) return false;
      return ranges.some((r) => {
        if (r.v6 !== a.v6) return false;
        const bits = BigInt((r.v6 ? 128 : 32) - r.prefix);
        return (r.base >> bits) === (a.value >> bits);
      });
    },
  };
}
