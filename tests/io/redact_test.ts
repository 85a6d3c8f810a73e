import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { toBase64, toHex } from "../../src/canonical/mod.ts";
import { scrubSecrets, SecretRedactor } from "../../src/io/mod.ts";

const SECRET = "ghp_S3cretValue0123456789";
const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("text and json lose every registered value, as written and encoded", () => {
  const r = new SecretRedactor();
  strictEqual(r.text(`a ${SECRET}`), `a ${SECRET}`); // nothing registered yet
  r.add(SECRET, "connection gh");
  strictEqual(r.size, 1);
  const b64 = toBase64(enc.encode(SECRET)).replace(/=+$/, "");
  const hex = toHex(enc.encode(SECRET));
  const out = r.text(`x${SECRET}y ${b64} ${hex} ${SECRET}`);
  strictEqual(out.includes(SECRET) || out.includes(b64) || out.includes(hex), false, out);
  strictEqual(out.split("[REDACTED: connection gh]").length - 1, 4);
  const j = r.json({ [SECRET]: [1, null, { s: `pre${SECRET}` }], n: 2 });
  deepStrictEqual(j, {
    "[REDACTED: connection gh]": [1, null, { s: "pre[REDACTED: connection gh]" }],
    n: 2,
  });
  deepStrictEqual(r.secrets(), [{ name: "connection gh", value: SECRET }]);
});

Deno.test("a value split across chunks at every offset is redacted in the stream", () => {
  const r = new SecretRedactor();
  r.add(SECRET, "c");
  const text = `before ${SECRET} middle ${SECRET}after`;
  const bytes = enc.encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    for (const second of [cut, Math.min(bytes.length, cut + 3)]) {
      const s = r.stream();
      const parts = [
        s.push(bytes.subarray(0, cut)),
        s.push(bytes.subarray(cut, second)),
        s.push(bytes.subarray(second)),
        s.end(),
      ];
      strictEqual(
        parts.map((p) => dec.decode(p)).join(""),
        "before [REDACTED: c] middle [REDACTED: c]after",
        `cut at ${cut}/${second}`,
      );
    }
  }
});

Deno.test("with nothing registered the stream passes chunks through untouched", () => {
  const r = new SecretRedactor();
  const s = r.stream();
  const chunk = enc.encode("plain");
  strictEqual(s.push(chunk), chunk);
  strictEqual(s.end().length, 0);
  // Registered later: applies from then on.
  r.add(SECRET, "late");
  ok(dec.decode(s.push(enc.encode(`${SECRET}\n`))) + dec.decode(s.end()) === "[REDACTED: late]\n");
});

Deno.test("scrubSecrets rewrites the files of a folder that hold a value, keeping their mode", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bernstein-scrub-" });
  try {
    const r = new SecretRedactor();
    await Deno.mkdir(`${dir}/a/b`, { recursive: true });
    await Deno.writeTextFile(`${dir}/a/b/t.jsonl`, `{"out":"${SECRET}"}\n`, { mode: 0o600 });
    await Deno.writeTextFile(`${dir}/clean.txt`, "nothing here\n");
    await Deno.symlink(`${dir}/a/b/t.jsonl`, `${dir}/link`);
    deepStrictEqual(await scrubSecrets(dir, r), { rewritten: 0, tooLarge: 0 });
    r.add(SECRET, "c");
    deepStrictEqual(await scrubSecrets(dir, r), { rewritten: 1, tooLarge: 0 });
    strictEqual(await Deno.readTextFile(`${dir}/a/b/t.jsonl`), '{"out":"[REDACTED: c]"}\n');
    strictEqual(((await Deno.stat(`${dir}/a/b/t.jsonl`)).mode ?? 0) & 0o777, 0o600);
    strictEqual(await Deno.readTextFile(`${dir}/clean.txt`), "nothing here\n");
    ok((await Deno.lstat(`${dir}/link`)).isSymlink);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
