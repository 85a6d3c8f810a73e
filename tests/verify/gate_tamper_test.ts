// The tamper matrix: every single modification of log.jsonl, a sidecar or a card is caught,
// with the failure words of FORMATS.md §4 and the right line / entry / artefact.
import { deepStrictEqual, equal, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { toBase64Url } from "../../src/canonical/mod.ts";
import {
  decodePrivateKeyPem,
  detachedJwsHeaderB64,
  ed25519KeyPairFromSeed,
  ed25519Sign,
  encodePublicKeyPem,
} from "../../src/crypto/mod.ts";
import { signaturePath } from "../../src/lineage/mod.ts";
import { gateDir, kinds, writeValidTree } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

const enc = new TextEncoder();

function logPath(dir: string): string {
  return join(dir, ".sdd", "lineage", "log.jsonl");
}

async function readLines(dir: string): Promise<string[]> {
  const text = await Deno.readTextFile(logPath(dir));
  return text.split("\n").slice(0, -1);
}

async function writeLines(dir: string, lines: string[], trailing = "\n"): Promise<void> {
  await Deno.writeTextFile(logPath(dir), lines.join("\n") + trailing);
}

async function withTree(fn: (dir: string) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    await fn(dir);
  });
}

function entryOf(line: string): { [k: string]: unknown } {
  return JSON.parse(line);
}

function sidecarOf(dir: string, line: string, hash: string): string {
  return join(dir, ".sdd", "lineage", signaturePath(entryOf(line).artefact_path as string, hash));
}

async function hashOf(line: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(line)));
  return "sha256:" + [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("the untouched fixture tree passes the gate with HMACs checked", async () => {
  await withTree(async (dir) => {
    const result = await gateDir(dir);
    deepStrictEqual(result.issues, []);
    equal(result.ok, true);
    strictEqual(result.entries, 5);
    strictEqual(result.artefacts, 3);
    equal(result.hmac_checked, true);
  });
});

Deno.test("log: flipping one byte of a value breaks the signature binding and the HMAC", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    const before = await hashOf(lines[1]);
    lines[1] = lines[1].replace(
      /"content_hash":"sha256:(.)/,
      (_m, c) => `"content_hash":"sha256:${c === "0" ? "1" : "0"}`,
    );
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    const l2 = result.issues.filter((i) => i.line === 2).map((i) => i.kind);
    deepStrictEqual(l2, ["invalid signature", "HMAC mismatch"]);
    ok(result.issues.some((i) =>
      i.kind === "dangling parent_hash" && i.line === 3 &&
      i.message.includes(before)
    ));
    strictEqual(result.issues.find((i) => i.line === 2)?.artefact, "src/a.ts");
  });
});

Deno.test("log: a byte that is not UTF-8 is non-canonical line bytes", async () => {
  await withTree(async (dir) => {
    const bytes = await Deno.readFile(logPath(dir));
    bytes[20] = 0xff;
    await Deno.writeFile(logPath(dir), bytes);
    const result = await gateDir(dir);
    strictEqual(result.issues[0].kind, "non-canonical line bytes");
    strictEqual(result.issues[0].line, 1);
  });
});

Deno.test("log: reordered keys are non-canonical line bytes", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    const obj = entryOf(lines[2]);
    const reordered: { [k: string]: unknown } = { v: obj.v };
    for (const [k, v] of Object.entries(obj)) if (k !== "v") reordered[k] = v;
    // ts_ns is above 2^53: splice the exact digits back in.
    const ts = /"ts_ns":(\d+)/.exec(lines[2])?.[1] ?? "";
    lines[2] = JSON.stringify(reordered).replace(/"ts_ns":[0-9e+.]+/, `"ts_ns":${ts}`);
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    // The rewritten line is not the signed entry any more: that entry's sidecar is orphaned.
    deepStrictEqual(kinds(result), [
      "non-canonical line bytes",
      "dangling parent_hash",
      "orphaned signature",
    ]);
    strictEqual(result.issues[0].line, 3);
    ok(result.issues[0].message.startsWith("log.jsonl:3: non-canonical line bytes"));
  });
});

Deno.test("log: added whitespace is non-canonical line bytes", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    lines[0] = lines[0].replace('","agent_id":', '", "agent_id":');
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    strictEqual(result.issues[0].kind, "non-canonical line bytes");
    strictEqual(result.issues[0].line, 1);
  });
});

Deno.test("log: a stripped final newline is reported, and nothing else", async () => {
  await withTree(async (dir) => {
    await writeLines(dir, await readLines(dir), "");
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["missing trailing newline"]);
    strictEqual(result.issues[0].line, 5);
  });
});

Deno.test("log: a carriage return before the newline is non-canonical line bytes", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    lines[3] += "\r";
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    strictEqual(result.issues[0].kind, "non-canonical line bytes");
    strictEqual(result.issues[0].line, 4);
  });
});

Deno.test("log: swapping a parent and its child leaves a dangling parent_hash", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    [lines[0], lines[1]] = [lines[1], lines[0]];
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["dangling parent_hash"]);
    strictEqual(result.issues[0].line, 1);
    ok(result.issues[0].message.includes("appears only later, on line 2"));
  });
});

Deno.test("log: deleting a line leaves its child with a dangling parent_hash", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    const deleted = await hashOf(lines[1]);
    lines.splice(1, 1);
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["dangling parent_hash", "orphaned signature"]);
    ok(result.issues[0].message.includes(`parent ${deleted} is not in the log`));
    strictEqual(result.issues[1].entry_hash, deleted);
    ok(
      result.issues[1].message.includes(
        `orphaned signature: no line of log.jsonl is entry ${deleted}`,
      ),
    );
  });
});

Deno.test("log: substituting the kid in an entry means no card binds it", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    lines[0] = lines[0].replace(
      /"agent_card_kid":"[0-9a-f]+"/,
      '"agent_card_kid":"0000000000000000"',
    );
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    const l1 = result.issues.filter((i) => i.line === 1).map((i) => i.kind);
    deepStrictEqual(l1, [
      "kid binding cannot be established",
      "invalid signature",
      "HMAC mismatch",
    ]);
  });
});

Deno.test("log: an entry moved to another agent's name is unbound and unsigned", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    lines[0] = lines[0].replace('"agent_id":"claude-1"', '"agent_id":"codex-2"');
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    ok(kinds(result).includes("kid binding cannot be established"));
    ok(kinds(result).includes("HMAC mismatch"));
  });
});

Deno.test("log: an entry breaking the field rules is an invalid entry", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    lines[4] = lines[4].replace('"artefact_kind":"external"', '"artefact_kind":"exfil"');
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["invalid entry", "orphaned signature"]);
    ok(result.issues[0].message.includes("artefact_kind"));
  });
});

Deno.test("log: an empty line is non-canonical line bytes", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    lines.splice(2, 0, "");
    await writeLines(dir, lines);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["non-canonical line bytes"]);
    ok(result.issues[0].message.includes("empty line"));
  });
});

Deno.test("log: a forged operator_hmac is an HMAC mismatch even with a re-signed entry", async () => {
  await withTree(async (dir) => {
    // An attacker holding an agent key (but not the operator key) rewrites and re-signs.
    const lines = await readLines(dir);
    const originalLine = lines[4];
    const forged = lines[4].replace(
      /"operator_hmac":"[0-9a-f]{64}"/,
      `"operator_hmac":"${"ab".repeat(32)}"`,
    );
    lines[4] = forged;
    await writeLines(dir, lines);
    const keyDir = join(dir, ".sdd", "keys", "agents", "claude-1");
    const kid = await Deno.readTextFile(join(keyDir, "active"));
    const seed = decodePrivateKeyPem(await Deno.readTextFile(join(keyDir, `${kid}.pem`)));
    const header = detachedJwsHeaderB64(kid);
    const sig = ed25519Sign(seed, enc.encode(`${header}.${forged}`));
    const path = sidecarOf(dir, forged, await hashOf(forged));
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, `${header}..${toBase64Url(sig)}`);
    // The original entry's sidecar is left behind, and that alone betrays the rewrite.
    const original = sidecarOf(dir, originalLine, await hashOf(originalLine));
    deepStrictEqual(kinds(await gateDir(dir)), ["HMAC mismatch", "orphaned signature"]);
    deepStrictEqual(kinds(await gateDir(dir, { operatorKey: null })), ["orphaned signature"]);
    // A careful attacker removes it too.
    await Deno.remove(original);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["HMAC mismatch"]);
    // Without the operator key the forgery is invisible: the result says HMAC was not checked.
    const unchecked = await gateDir(dir, { operatorKey: null });
    equal(unchecked.ok, true);
    equal(unchecked.hmac_checked, false);
  });
});

Deno.test("sidecars: one flipped byte, whitespace, a newline, CR or deletion are each caught", async () => {
  const mutations: [string, (s: string) => string | undefined][] = [
    ["flip a signature byte", (s) => s.slice(0, -3) + (s.at(-3) === "A" ? "B" : "A") + s.slice(-2)],
    ["trailing newline", (s) => s + "\n"],
    ["leading space", (s) => " " + s],
    ["carriage return", (s) => s + "\r"],
    ["deleted", () => undefined],
  ];
  for (const [name, mutate] of mutations) {
    await withTree(async (dir) => {
      const lines = await readLines(dir);
      const path = sidecarOf(dir, lines[2], await hashOf(lines[2]));
      const changed = mutate(await Deno.readTextFile(path));
      if (changed === undefined) await Deno.remove(path);
      else await Deno.writeTextFile(path, changed);
      const result = await gateDir(dir);
      deepStrictEqual(kinds(result), ["invalid signature"], name);
      strictEqual(result.issues[0].line, 3, name);
      strictEqual(result.issues[0].entry_hash, await hashOf(lines[2]), name);
    });
  }
});

Deno.test("sidecars: a signature moved from another entry does not verify", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    const from = sidecarOf(dir, lines[0], await hashOf(lines[0]));
    const to = sidecarOf(dir, lines[2], await hashOf(lines[2]));
    await Deno.copyFile(from, to);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["invalid signature"]);
    strictEqual(result.issues[0].line, 3);
  });
});

Deno.test("sidecars: a substituted header kid is a kid binding mismatch", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    const path = sidecarOf(dir, lines[0], await hashOf(lines[0]));
    const keyDir = join(dir, ".sdd", "keys", "agents", "claude-1");
    const kid = await Deno.readTextFile(join(keyDir, "active"));
    const seed = decodePrivateKeyPem(await Deno.readTextFile(join(keyDir, `${kid}.pem`)));
    // Correctly signed by the right key, but under a header naming another kid.
    const header = detachedJwsHeaderB64("someone-elses-kid");
    const sig = ed25519Sign(seed, enc.encode(`${header}.${lines[0]}`));
    await Deno.writeTextFile(path, `${header}..${toBase64Url(sig)}`);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["kid binding mismatch"]);
    ok(result.issues[0].message.includes('JWS header kid "someone-elses-kid"'));
  });
});

Deno.test("sidecars: a symlinked sidecar is refused", async () => {
  await withTree(async (dir) => {
    const lines = await readLines(dir);
    const path = sidecarOf(dir, lines[1], await hashOf(lines[1]));
    const copy = join(dir, "elsewhere.jws");
    await Deno.rename(path, copy);
    await Deno.symlink(copy, path);
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["invalid signature"]);
    ok(result.issues[0].message.includes("symlink"));
  });
});

function cardPaths(dir: string, agent: string): { single: string; perKid: string } {
  const base = join(dir, ".sdd", "agents", agent);
  const kid = [...Deno.readDirSync(base)].find((e) => e.isDirectory)?.name ?? "";
  return { single: join(base, "card.json"), perKid: join(base, kid, "card.json") };
}

Deno.test("cards: replacing one of two copies of a card is a conflict that binds nothing", async () => {
  await withTree(async (dir) => {
    const { perKid } = cardPaths(dir, "codex-2");
    const card = JSON.parse(await Deno.readTextFile(perKid));
    card.public_key_pem = encodePublicKeyPem(ed25519KeyPairFromSeed(new Uint8Array(32)).publicKey);
    await Deno.writeTextFile(perKid, JSON.stringify(card));
    const result = await gateDir(dir);
    const k = kinds(result);
    strictEqual(k.at(-1), "conflicting agent cards");
    // Both codex-2 entries (lines 2 and 4) lose their kid binding.
    deepStrictEqual(
      result.issues.filter((i) => i.kind === "kid binding cannot be established").map((i) =>
        i.line
      ),
      [2, 4],
    );
  });
});

Deno.test("cards: replacing the only card with another key fails every signature it bound", async () => {
  await withTree(async (dir) => {
    const { single, perKid } = cardPaths(dir, "codex-2");
    await Deno.remove(single);
    const card = JSON.parse(await Deno.readTextFile(perKid));
    card.public_key_pem = encodePublicKeyPem(ed25519KeyPairFromSeed(new Uint8Array(32)).publicKey);
    await Deno.writeTextFile(perKid, JSON.stringify(card));
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), ["invalid signature", "invalid signature"]);
    deepStrictEqual(result.issues.map((i) => i.line), [2, 4]);
  });
});

Deno.test("cards: a substituted kid in the card body unbinds the agent's entries", async () => {
  await withTree(async (dir) => {
    const { single, perKid } = cardPaths(dir, "codex-2");
    for (const p of [single, perKid]) {
      const card = JSON.parse(await Deno.readTextFile(p));
      card.kid = "ffffffffffffffff";
      await Deno.writeTextFile(p, JSON.stringify(card));
    }
    const result = await gateDir(dir);
    deepStrictEqual(kinds(result), [
      "kid binding cannot be established",
      "kid binding cannot be established",
    ]);
  });
});

Deno.test("cards: a flipped byte makes the card unusable and is reported", async () => {
  await withTree(async (dir) => {
    const { single, perKid } = cardPaths(dir, "claude-1");
    await Deno.remove(single);
    const bytes = await Deno.readFile(perKid);
    bytes[bytes.indexOf(0x3a)] = 0x3b; // the first ':' becomes ';'
    await Deno.writeFile(perKid, bytes);
    const result = await gateDir(dir);
    ok(kinds(result).includes("invalid agent card"));
    strictEqual(
      result.issues.filter((i) => i.kind === "kid binding cannot be established").length,
      3,
    );
  });
});

Deno.test("cards: the body is authoritative, so re-filing or reformatting a card changes nothing", async () => {
  await withTree(async (dir) => {
    const { single, perKid } = cardPaths(dir, "claude-1");
    const card = JSON.parse(await Deno.readTextFile(perKid));
    await Deno.remove(single);
    await Deno.remove(join(perKid, ".."), { recursive: true });
    await Deno.mkdir(join(dir, ".sdd", "agents", "misfiled", "x"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, ".sdd", "agents", "misfiled", "x", "card.json"),
      JSON.stringify(card, null, 2) + "\n",
    );
    const result = await gateDir(dir);
    deepStrictEqual(result.issues, []);
  });
});
