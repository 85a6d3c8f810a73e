// Checking a whole CAS store: every blob re-hashed against its key, every sidecar read and
// compared with its blob, symlinks and stray files named, and digests that records still
// reference but the store no longer holds listed as missing. `bernstein cas verify`, `cas
// repair` and `doctor` read this report; nothing here writes.
import { join } from "node:path";
import { CasError } from "./errors.ts";
import type { CasStore } from "./store.ts";

const KEY = /^[0-9a-f]{64}$/;
const SHARD = /^[0-9a-f]{2}$/;

/** What is wrong with one CAS entry. */
export type CasProblemCode =
  | "cas.integrity"
  | "cas.not_regular"
  | "cas.meta_invalid"
  | "cas.meta_missing"
  | "cas.missing"
  | "cas.stray";

/** One bad entry. */
export interface CasProblem {
  /** The blob's key (null for a stray file whose name is not a key). */
  digest: string | null;
  /** Path of the offending file. */
  path: string;
  /** Stable code. */
  code: CasProblemCode;
  /** One line saying what was found. */
  message: string;
}

/** Result of {@linkcode checkCasStore}. */
export interface CasCheckReport {
  /** The store's root. */
  root: string;
  /** Blobs found (good and bad). */
  blobs: number;
  /** Their total size. */
  bytes: number;
  /** Blobs whose bytes hash to their key and whose sidecar agrees. */
  good: number;
  /** Every problem, blobs in key order. */
  problems: CasProblem[];
}

/** Options of {@linkcode checkCasStore}. */
export interface CasCheckOptions {
  /** Digests something still needs (run records): absent ones are reported `cas.missing`. */
  referenced?: Iterable<string>;
}

async function listDir(path: string): Promise<Deno.DirEntry[]> {
  const out: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(path)) out.push(entry);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function checkBlob(store: CasStore, digest: string): Promise<CasProblem[]> {
  const path = store.blobPath(digest);
  const problems: CasProblem[] = [];
  let size: number | undefined;
  try {
    await store.verify(digest);
    size = (await Deno.lstat(path)).size;
  } catch (error) {
    if (!(error instanceof CasError)) throw error;
    const code = error.code === "cas.integrity" ? "cas.integrity" : "cas.not_regular";
    problems.push({ digest, path, code, message: error.message });
  }
  try {
    const meta = await store.readMeta(digest);
    if (size !== undefined && meta.size_bytes !== size) {
      problems.push({
        digest,
        path: store.metaPath(digest),
        code: "cas.meta_invalid",
        message: `sidecar says ${meta.size_bytes} bytes, the blob has ${size}`,
      });
    }
  } catch (error) {
    if (!(error instanceof CasError)) throw error;
    problems.push({
      digest,
      path: store.metaPath(digest),
      code: error.code === "cas.not_found" ? "cas.meta_missing" : "cas.meta_invalid",
      message: error.code === "cas.not_found" ? "the blob has no sidecar" : error.message,
    });
  }
  return problems;
}

function stray(path: string, why: string): CasProblem {
  return { digest: null, path, code: "cas.stray", message: why };
}

/**
 * Re-hashes every blob of `store` (streamed), checks its sidecar, and names what does not
 * belong (symlinked shards, files that are neither a key nor a key's sidecar). Temp files of
 * a writer (`.tmp-*`) are left alone: a put may be under way.
 *
 * @example
 * ```ts ignore
 * const report = await checkCasStore(new CasStore(".sdd/cas"), { referenced: ["ab…"] });
 * for (const p of report.problems) console.log(p.code, p.digest, p.message);
 * ```
 */
export async function checkCasStore(
  store: CasStore,
  options: CasCheckOptions = {},
): Promise<CasCheckReport> {
  const report: CasCheckReport = { root: store.root, blobs: 0, bytes: 0, good: 0, problems: [] };
  const present = new Set<string>();
  for (const shard of await listDir(store.root)) {
    const shardPath = join(store.root, shard.name);
    if (shard.name.startsWith(".")) continue;
    if (!SHARD.test(shard.name)) {
      report.problems.push(stray(shardPath, "not a CAS shard folder"));
      continue;
    }
    if (!shard.isDirectory) {
      report.problems.push(
        stray(
          shardPath,
          shard.isSymlink ? "a symlink where a shard folder belongs" : "not a folder",
        ),
      );
      continue;
    }
    const names = new Set((await listDir(shardPath)).map((e) => e.name));
    for (const name of names) {
      const path = join(shardPath, name);
      if (name.startsWith(".tmp-")) continue;
      const key = name.endsWith(".meta.json") ? name.slice(0, -".meta.json".length) : name;
      if (!KEY.test(key) || key.slice(0, 2) !== shard.name) {
        report.problems.push(stray(path, "neither a blob nor a sidecar of this shard"));
        continue;
      }
      if (key !== name) {
        if (!names.has(key)) {
          report.problems.push(stray(path, "a sidecar without its blob"));
        }
        continue;
      }
      present.add(key);
      report.blobs++;
      const info = await Deno.lstat(path);
      report.bytes += info.size;
      const problems = await checkBlob(store, key);
      if (problems.length === 0) report.good++;
      report.problems.push(...problems);
    }
  }
  const missing = [...new Set(options.referenced ?? [])].filter((d) => !present.has(d)).sort();
  for (const digest of missing) {
    report.problems.push({
      digest,
      path: store.blobPath(digest),
      code: "cas.missing",
      message: "referenced by a run record, but the store has no such blob",
    });
  }
  return report;
}

/** The digests of blobs that are bad or missing (repairable by their bytes), in key order. */
export function badDigests(report: CasCheckReport): string[] {
  const out = new Set<string>();
  for (const p of report.problems) {
    if (p.digest !== null && p.code !== "cas.stray") out.add(p.digest);
  }
  return [...out].sort();
}
