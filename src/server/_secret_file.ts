// Reads the task server's token files: one secret per file under the one secret-file policy of
// src/io (no symlink, owner-only mode), decoded and trimmed; an empty token file is refused.

import { readSecretFile } from "../io/mod.ts";
import { TokenFileError } from "./errors.ts";

/**
 * Reads a token file: its trimmed text, or undefined when it does not exist. Refused with a
 * `secret.*` error like every secret file (symlink, not a regular file, readable by group or
 * others); an empty one is `server.token_file`.
 */
export async function readTokenFile(path: string): Promise<string | undefined> {
  const bytes = await readSecretFile(path, { what: "token file" });
  if (bytes === undefined) return undefined;
  const text = new TextDecoder().decode(bytes).trim();
  if (text === "") throw new TokenFileError(`${path} is empty`);
  return text;
}
