// Jupyter notebooks as text: an agent gets the cells' sources in order, each under a one-line
// header naming its number and type (and the kernel language for code), instead of the JSON
// with its base64 outputs. The rendering is what is hashed, stored and attested.

function sourceText(source: unknown): string | undefined {
  if (typeof source === "string") return source;
  if (Array.isArray(source) && source.every((s) => typeof s === "string")) return source.join("");
  return undefined;
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

/**
 * The text rendering of a Jupyter notebook (nbformat 4: an object with `nbformat` and a `cells`
 * array whose cells have a `cell_type` and a string or string-array `source`), or undefined
 * when `text` is not one. Outputs are left out.
 *
 * @example
 * ```ts
 * import { renderNotebook } from "./notebook.ts";
 * const nb = JSON.stringify({ nbformat: 4, metadata: {}, cells: [
 *   { cell_type: "markdown", source: ["# Title"] },
 *   { cell_type: "code", source: "print(1)" },
 * ] });
 * renderNotebook(nb);
 * // "# notebook: 2 cells (python)\n\n# [1] markdown\n# Title\n\n# [2] code\nprint(1)\n"
 * ```
 */
export function renderNotebook(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const nb = objectOf(parsed);
  if (nb === undefined || typeof nb.nbformat !== "number" || !Array.isArray(nb.cells)) {
    return undefined;
  }
  const language = objectOf(objectOf(nb.metadata)?.language_info)?.name;
  const lang = typeof language === "string" ? language : "python";
  const parts: string[] = [];
  for (const [i, raw] of nb.cells.entries()) {
    const cell = objectOf(raw);
    const source = sourceText(cell?.source);
    if (cell === undefined || typeof cell.cell_type !== "string" || source === undefined) {
      return undefined;
    }
    const body = source === "" || source.endsWith("\n") ? source : `${source}\n`;
    parts.push(`# [${i + 1}] ${cell.cell_type}\n${body}`);
  }
  const header = `# notebook: ${nb.cells.length} cell${
    nb.cells.length === 1 ? "" : "s"
  } (${lang})\n`;
  return [header, ...parts].join("\n");
}
