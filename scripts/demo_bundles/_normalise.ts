// Makes a scenario's transcript comparable across regenerations: what a real run draws at
// random or reads from the clock (run ids, agent keys and the hashes of entries they sign,
// times, days, the temp folder) becomes a placeholder; everything else — commands, verdicts,
// counts, file names, content hashes, the example operator fingerprint — stays as printed.

/** What the transcript's run knew that placeholders replace. */
export interface NormaliseContext {
  /** The scenario's folder (temp or --out). */
  dir: string;
  /** Values that look random but are fixed by construction (the example key's fingerprint). */
  keep: readonly string[];
}

function replaceUnlessKept(
  text: string,
  pattern: RegExp,
  placeholder: string,
  keep: readonly string[],
): string {
  return text.replace(pattern, (m) => (keep.some((k) => k.startsWith(m)) ? m : placeholder));
}

/** The normalised transcript text (lines joined, trailing newline). */
export function normaliseTranscript(lines: readonly string[], ctx: NormaliseContext): string {
  let text = lines.join("\n") + "\n";
  text = text.split(ctx.dir).join("<dir>");
  // Run ids (adjective-noun-tag) and their 6-hex tags, as the runs printed them.
  const runs = [...text.matchAll(/\brun ([a-z]+-[a-z]+-([0-9a-f]{6}))\b/g)];
  for (const [, id, tag] of runs) {
    text = text.split(id).join("<run>");
    text = text.replace(new RegExp(`\\b${tag}\\b`, "g"), "<tag>");
  }
  text = text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, "<time>");
  text = text.replace(/\b\d{4}-\d{2}-\d{2}\b/g, "<day>");
  text = replaceUnlessKept(text, /\b[0-9a-f]{64}\b/g, "<hash>", ctx.keep);
  text = replaceUnlessKept(text, /\b[0-9a-f]{16,63}(?=…)/g, "<hash>", ctx.keep);
  text = replaceUnlessKept(text, /\b[0-9a-f]{16}\b/g, "<kid>", ctx.keep);
  text = text.replace(/\(\d+ bytes\)/g, "(<n> bytes)");
  return text;
}
