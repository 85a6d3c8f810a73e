// The generated blocks of the docs (`deno task docs`): a block sits between a start and an end
// marker comment in a markdown file, and the generators replace what lies between them. Shared
// by the README, CONTRIBUTING, ADAPTERS and TASK_SERVER generators.

/** Start and end marker of one generated block. */
export interface BlockMarkers {
  /** The start marker line (an HTML comment). */
  start: string;
  /** The end marker line. */
  end: string;
}

/** `text` with the block between `markers` replaced by `body`; `file` names it in the error. */
export function withGeneratedBlock(
  text: string,
  markers: BlockMarkers,
  body: string,
  file: string,
): string {
  const start = text.indexOf(markers.start);
  const end = text.indexOf(markers.end);
  if (start < 0 || end < start) throw new Error(`${file} lacks the markers ${markers.start}`);
  return text.slice(0, start + markers.start.length) + "\n\n" + body + "\n" + text.slice(end);
}

/** The text with table padding removed, so `deno fmt`'s column alignment does not count. */
export function withoutTablePadding(text: string): string {
  return text.split("\n").map((line) =>
    line.startsWith("|") ? line.replace(/ {2,}/g, " ").replace(/-{3,}/g, "---") : line
  ).join("\n");
}

/**
 * Writes `after` to `path` when it differs from `before` beyond table padding, aligned the way
 * `deno fmt --check` wants it; true when it wrote.
 */
export async function writeIfChanged(path: URL, before: string, after: string): Promise<boolean> {
  if (withoutTablePadding(after) === withoutTablePadding(before)) return false;
  await Deno.writeTextFile(path, after);
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", path.pathname] }).output();
  return true;
}
