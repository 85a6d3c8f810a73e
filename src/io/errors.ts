// Errors of paths escaping their root and of processes that could not be started.

import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** A path from outside escapes its root (`..`, absolute, or a symlink pointing out). */
export class PathEscapeError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("path.escape", message, options);
  }
}

/** A process could not be started (binary missing, permission denied). */
export class SpawnError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("process.spawn_failed", message, options);
  }
}
