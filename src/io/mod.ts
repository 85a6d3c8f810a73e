/**
 * The edges: processes, durable file writes and locks, secret files, checked paths, the `.sdd/`
 * layout, clock, randomness and environment, each behind a small interface so the core can be tested with fakes.
 *
 * @module
 */
export { type Clock, FakeClock, systemClock } from "./clock.ts";
export { type EnvReader, mapEnv, processEnv } from "./env.ts";
export { PathEscapeError, SpawnError } from "./errors.ts";
export {
  appendDurable,
  type AtomicFileWriter,
  openAtomicFile,
  pathExists,
  readFileIfExists,
  readUpTo,
  syncDirectory,
  withFileLock,
  writeAll,
  writeFileAtomic,
  writeFileIfAbsent,
  type WriteOptions,
} from "./files.ts";
export {
  buildChildEnv,
  outputText,
  type ProcessHandle,
  type ProcessOptions,
  type ProcessResult,
  runProcess,
  spawnProcess,
} from "./process.ts";
export { type Random, SeededRandom, systemRandom } from "./random.ts";
export {
  MAX_SCRUB_BYTES,
  MIN_SECRET_LENGTH,
  type RedactingStream,
  scrubSecrets,
  secretForms,
  SecretRedactor,
} from "./redact.ts";
export { checkRelativePath, resolveInside } from "./safe_path.ts";
export {
  checkRunId,
  checkSessionName,
  RUN_FILES,
  RUN_ID_PATTERN,
  runDir,
  runFile,
  runsRoot,
  runtimeDir,
  SDD_FOLDERS,
  sddFolder,
  type SessionLayout,
  sessionLayout,
} from "./sdd_layout.ts";
export {
  readSecretFile,
  type ReadSecretFileOptions,
  SecretFileError,
  type SecretFileErrorCode,
} from "./secret_file.ts";
