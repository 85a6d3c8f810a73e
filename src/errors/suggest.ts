/** Edit distance (Damerau–Levenshtein, optimal string alignment) between two strings. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, () => new Array<number>(cols).fill(0));
  for (let i = 0; i < rows; i++) d[i][0] = i;
  for (let j = 0; j < cols; j++) d[0][j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** Options for {@linkcode closestMatch}. */
export interface ClosestMatchOptions {
  /** Known synonyms: an input equal to a key suggests its value (`tasks` → `cells`). */
  aliases?: Readonly<Record<string, string>>;
}

/**
 * The known name closest to `input`, or undefined when nothing is close enough to be a
 * plausible typo (distance above a third of the longer name, at least 1, at most 3).
 */
export function closestMatch(
  input: string,
  known: readonly string[],
  options: ClosestMatchOptions = {},
): string | undefined {
  const alias = options.aliases?.[input];
  if (alias !== undefined && known.includes(alias)) return alias;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(input.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.min(3, Math.max(1, Math.floor(Math.max(input.length, best.length) / 3)));
  if (bestDistance <= limit) return best;
  if (best.startsWith(input) || input.startsWith(best)) return best;
  return undefined;
}
