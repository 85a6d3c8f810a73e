import { TokenFileError } from "./errors.ts";

/**
 * Reads a secret (token) file: a regular file, not readable by group or others, not empty.
 * Returns undefined when it does not exist.
 */
export async function readSecretFile(path: string): Promise<string | undefined> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  if (!info.isFile) throw new TokenFileError(`${path} is not a regular file`);
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    throw new TokenFileError(
      `${path} is readable by group or others (mode ${(info.mode & 0o777).toString(8)})`,
      { hint: `run: chmod 600 ${path}` },
    );
  }
  const text = new TextDecoder().decode(await Deno.readFile(path)).trim();
  if (text === "") throw new TokenFileError(`${path} is empty`);
  return text;
}
