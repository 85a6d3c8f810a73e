// Where a command's output goes (a sink, buffered in tests) and helpers to align columns.

import { canonicalize, type JsonShaped } from "../canonical/mod.ts";
import {
  type BernsteinError,
  formatErrorLine,
  formatWarningLine,
  type Warning,
} from "../errors/mod.ts";

/** A byte sink (stdout, stderr or a buffer in tests). */
export interface TextSink {
  /** Writes text synchronously. */
  write(text: string): void;
  /** True when the sink is an interactive terminal. */
  isTerminal: boolean;
}

const encoder = new TextEncoder();

function fileSink(file: typeof Deno.stdout | typeof Deno.stderr): TextSink {
  return {
    write(text) {
      const bytes = encoder.encode(text);
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    },
    isTerminal: file.isTerminal(),
  };
}

/** A sink that keeps everything written, for tests. */
export class BufferSink implements TextSink {
  /** Everything written so far. */
  text = "";
  isTerminal = false;

  write(text: string): void {
    this.text += text;
  }
}

type Style = "bold" | "dim" | "red" | "green" | "yellow" | "cyan";
const SGR: Record<Style, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
};

/**
 * Where commands write: human text and JSON on stdout, errors and warnings on stderr.
 * Colour only when stdout is a terminal and `NO_COLOR` is not set.
 */
export class Output {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  /** Colour is on. */
  readonly color: boolean;

  constructor(stdout: TextSink, stderr: TextSink, options: { noColor?: boolean } = {}) {
    this.stdout = stdout;
    this.stderr = stderr;
    this.color = stdout.isTerminal && !options.noColor;
  }

  /** The real terminal streams. */
  static system(): Output {
    return new Output(fileSink(Deno.stdout), fileSink(Deno.stderr), { noColor: Deno.noColor });
  }

  /** Wraps text in an ANSI style when colour is on. */
  style(style: Style, text: string): string {
    if (!this.color) return text;
    const [on, off] = SGR[style];
    return `\x1b[${on}m${text}\x1b[${off}m`;
  }

  /** Prints a line on stdout. */
  line(text = ""): void {
    this.stdout.write(text + "\n");
  }

  /** Prints one JSON document on stdout (sorted keys, exact big integers). */
  json<T>(value: T & JsonShaped<T>): void {
    this.stdout.write(canonicalize(value, "canon") + "\n");
  }

  /** Prints an error line on stderr. */
  error(error: BernsteinError): void {
    const text = formatErrorLine(error);
    this.stderr.write((this.color ? this.style("red", text) : text) + "\n");
  }

  /** Prints a warning line on stderr. */
  warn(warning: Warning): void {
    this.stderr.write(formatWarningLine(warning) + "\n");
  }

  /** Prints free text on stderr (progress, notes). */
  note(text: string): void {
    this.stderr.write(text + "\n");
  }
}

/** Pads cells so columns line up; the last column is not padded. */
export function alignColumns(rows: readonly (readonly string[])[], gap = 2): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  }
  return rows.map((row) =>
    row.map((cell, i) =>
      i === row.length - 1 ? cell : cell + " ".repeat(widths[i] - [...cell].length + gap)
    ).join("").trimEnd()
  );
}
