// Lenient reading of CLI output: one JSON object per line, typed accessors, clipped text.

/** Parses one JSON line into an object, or undefined for anything else. */
export function jsonObject(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

/** A property as an object. */
export function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

/** A property as a string. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A property as a finite number. */
export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A property as an array. */
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

const CLIP = 2000;

/** Clips long text for progress events. */
export function clip(text: string): string {
  return text.length > CLIP ? `${text.slice(0, CLIP)}…` : text;
}

/** Canonical-enough JSON text for generated config files (stable key order as written). */
export function jsonFile(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}
