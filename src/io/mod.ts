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
  closeLockFile,
  openAtomicFile,
  pathExists,
  readFileIfExists,
  readUpTo,
  syncDirectory,
  withFileLock,
  writeAll,
  writeAllSync,
  writeFileAtomic,
  writeFileIfAbsent,
} from "./files.ts";
export {
  buildChildEnv,
  outputText,
  type ProcessHandle,
  type ProcessResult,
  runProcess,
  spawnProcess,
} from "./process.ts";
export { type ProcStat, procStat, readProcStat } from "./proc_stat.ts";
export { type Random, SeededRandom, systemRandom } from "./random.ts";
export {
  MIN_SECRET_LENGTH,
  type RedactingStream,
  scrubSecrets,
  secretForms,
  SecretRedactor,
} from "./redact.ts";
export { checkRelativePath, resolveInside } from "./safe_path.ts";
export {
  backlogFolder,
  checkRunId,
  checkSessionName,
  isSessionName,
  RUN_ID_PATTERN,
  runDir,
  runFile,
  runsRoot,
  RUNTIME_ENTRIES,
  runtimeDir,
  runtimePath,
  SDD_DIR,
  SDD_FOLDERS,
  sddFile,
  sddFolder,
  sddOf,
  sessionLayout,
} from "./sdd_layout.ts";
export { readSecretFile, SecretFileError } from "./secret_file.ts";
export { primeSignalDelivery } from "./signals.ts";
