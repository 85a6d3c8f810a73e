// Entry point of the `bernstein-verify` binary (read-only: no write, net, env or run). Thin:
// everything lives in src/verify; this only connects it to the process.
import { runVerifyCli } from "./src/verify/mod.ts";

const encoder = new TextEncoder();

function write(fd: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  let at = 0;
  while (at < bytes.length) at += fd.writeSync(bytes.subarray(at));
}

let code: number;
try {
  code = await runVerifyCli(Deno.args, {
    stdout: (line) => write(Deno.stdout, line + "\n"),
    stderr: (text) => write(Deno.stderr, text + "\n"),
  });
} catch (error) {
  // A bug, not a verdict: still one summary line, one JSON object, and exit 1.
  const message = `internal error: ${(error as Error)?.message ?? String(error)}`;
  write(Deno.stdout, `FAIL: ${message}\n`);
  write(
    Deno.stderr,
    JSON.stringify({
      ok: false,
      kind: "internal",
      stats: {},
      errors: [{ kind: "internal", message }],
    }) +
      "\n",
  );
  code = 1;
}
Deno.exit(code);
