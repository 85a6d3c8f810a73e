// The content-addressed blob store of FORMATS.md §3: `.sdd/cas/<hex[0:2]>/<hex>` plus a
// `<hex>.meta.json` sidecar. Writes are tmp + fsync + link (first writer wins); reads refuse
// symlinks and non-regular files and re-hash every byte.
import { basename, join } from "node:path";
import { z } from "zod";
import { canonicalBytes, type JsonObject, parseJsonBytes, toHex } from "../canonical/mod.ts";
import { sha256Hex, sha256Stream } from "../crypto/mod.ts";
import {
  type Clock,
  type Random,
  readUpTo,
  syncDirectory,
  systemClock,
  systemRandom,
  writeAll,
} from "../io/mod.ts";
import { CasError } from "./errors.ts";

const KEY = /^[0-9a-f]{64}$/;

/** The sidecar `<hex>.meta.json`. */
export interface CasMeta {
  /** Hex SHA-256 of the blob (its key). */
  digest: string;
  /** Blob size. */
  size_bytes: number;
  /** MIME type given by the first writer (`application/octet-stream` when none). */
  content_type: string;
  /** When the first writer stored it (ISO 8601, UTC). */
  created_at: string;
  /** Free-form facts from the first writer. */
  metadata: JsonObject;
}

const MetaSchema = z.object({
  digest: z.string().regex(KEY),
  size_bytes: z.number().int().nonnegative(),
  content_type: z.string(),
  created_at: z.string(),
  metadata: z.record(z.unknown()),
}).strict();

/** Options of a put. */
export interface CasPutOptions {
  /** MIME type for the sidecar. Default `application/octet-stream`. */
  contentType?: string;
  /** Free-form facts for the sidecar. Default `{}`. */
  metadata?: JsonObject;
  /** Refuse inputs larger than this many bytes (streamed puts stop as soon as it is passed). */
  maxBytes?: number;
}

/** What a put stored. */
export interface CasPutResult {
  /** Hex SHA-256 (the key). */
  digest: string;
  /** Size in bytes. */
  size_bytes: number;
  /** Absolute path of the blob. */
  path: string;
  /** False when the blob was already there (first writer wins). */
  created: boolean;
  /** The sidecar as stored (the first writer's, when the blob existed). */
  meta: CasMeta;
}

/** Options of {@linkcode CasStore}. */
export interface CasStoreOptions {
  /** Source of `created_at`. Default: system clock. */
  clock?: Clock;
  /** Source of temp file names. Default: system randomness. */
  random?: Random;
}

/** Checks a CAS key (`^[0-9a-f]{64}$`) and returns it; throws {@linkcode CasError} otherwise. */
export function checkCasKey(key: string): string {
  if (typeof key !== "string" || !KEY.test(key)) {
    const shown = typeof key === "string" ? JSON.stringify(key.slice(0, 80)) : typeof key;
    throw new CasError("cas.invalid_key", `CAS key ${shown} is not 64 lowercase hex characters`);
  }
  return key;
}

/**
 * A content-addressed store rooted at `.sdd/cas`.
 *
 * @example
 * ```ts ignore
 * const cas = new CasStore(".sdd/cas");
 * const { digest } = await cas.put(bytes, { contentType: "image/png" });
 * const same = await cas.read(digest); // re-hashed; a changed blob is a CasError
 * ```
 */
export class CasStore {
  /** The store's root folder. */
  readonly root: string;
  readonly #clock: Clock;
  readonly #random: Random;

  constructor(root: string, options: CasStoreOptions = {}) {
    this.root = root;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? systemRandom;
  }

  /** Path of the blob for `digest` (the key is checked). */
  blobPath(digest: string): string {
    checkCasKey(digest);
    return join(this.root, digest.slice(0, 2), digest);
  }

  /** Path of the sidecar for `digest` (the key is checked). */
  metaPath(digest: string): string {
    return this.blobPath(digest) + ".meta.json";
  }

  /** Stores bytes; returns their digest. An existing blob is kept (first writer wins). */
  put(bytes: Uint8Array, options: CasPutOptions = {}): Promise<CasPutResult> {
    return this.putStream([bytes], options);
  }

  /** Stores a file's bytes, streamed (the caller has checked the path). */
  async putFile(path: string, options: CasPutOptions = {}): Promise<CasPutResult> {
    const file = await Deno.open(path, { read: true });
    return await this.putStream(file.readable, options);
  }

  /**
   * Stores a stream of bytes without holding it in memory: hashed while written to a temp
   * file, fsynced, then linked into place unless the blob already exists.
   */
  async putStream(
    source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    options: CasPutOptions = {},
  ): Promise<CasPutResult> {
    await Deno.mkdir(this.root, { recursive: true });
    const tmp = join(this.root, `.tmp-${Deno.pid}-${toHex(this.#random.bytes(8))}`);
    const hash = sha256Stream();
    let size = 0;
    const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o644 });
    try {
      try {
        for await (const chunk of source) {
          size += chunk.length;
          if (options.maxBytes !== undefined && size > options.maxBytes) {
            throw new CasError(
              "cas.too_large",
              `input is larger than the limit of ${options.maxBytes} bytes`,
            );
          }
          hash.update(chunk);
          await writeAll(file, chunk);
        }
        await file.sync();
      } finally {
        file.close();
      }
      const digest = hash.hexDigest();
      const path = this.blobPath(digest);
      const shard = join(this.root, digest.slice(0, 2));
      await Deno.mkdir(shard, { recursive: true });
      await this.#refuseSymlink(shard);
      const created = await this.#linkIfAbsent(tmp, path);
      if (created) {
        await syncDirectory(shard);
      } else {
        const info = await this.#regular(path);
        if (info.size !== size) {
          throw new CasError(
            "cas.integrity",
            `existing blob ${path} has ${info.size} bytes, but its digest names ${size}`,
            {
              hint:
                "the store is damaged: 'bernstein cas verify' lists what, 'bernstein cas repair' mends it",
            },
          );
        }
      }
      const meta = await this.#ensureMeta(digest, size, options);
      return { digest, size_bytes: size, path, created, meta };
    } finally {
      await Deno.remove(tmp).catch(() => {});
    }
  }

  /** True when a blob for `digest` exists (not verified). */
  async has(digest: string): Promise<boolean> {
    try {
      await this.#regular(this.blobPath(digest));
      return true;
    } catch (error) {
      if (error instanceof CasError && error.code === "cas.not_found") return false;
      throw error;
    }
  }

  /** Reads a blob, refusing symlinks and non-regular files, and re-hashes it. */
  async read(digest: string): Promise<Uint8Array> {
    const file = await this.#openRegular(digest);
    try {
      const info = await file.stat();
      const bytes = await readUpTo(file, info.size);
      const extra = await file.read(new Uint8Array(1));
      if (extra !== null || sha256Hex(bytes) !== digest) this.#integrity(digest);
      return bytes;
    } finally {
      file.close();
    }
  }

  /** Re-hashes a blob in a streaming way; throws {@linkcode CasError} on any problem. */
  async verify(digest: string): Promise<void> {
    const file = await this.#openRegular(digest);
    const hash = sha256Stream();
    try {
      const buf = new Uint8Array(1 << 20);
      for (;;) {
        const n = await file.read(buf);
        if (n === null) break;
        hash.update(buf.subarray(0, n));
      }
    } finally {
      file.close();
    }
    if (hash.hexDigest() !== digest) this.#integrity(digest);
  }

  /** Reads and checks the sidecar of `digest`. */
  async readMeta(digest: string): Promise<CasMeta> {
    const path = this.metaPath(digest);
    await this.#regular(path);
    let parsed: unknown;
    try {
      parsed = parseJsonBytes(await Deno.readFile(path));
    } catch (error) {
      throw new CasError("cas.meta_invalid", `${path}: ${(error as Error).message}`);
    }
    const result = MetaSchema.safeParse(parsed);
    if (!result.success) {
      const first = result.error.issues[0];
      throw new CasError(
        "cas.meta_invalid",
        `${path}: ${first.path.join(".") || "(root)"}: ${first.message}`,
      );
    }
    if (result.data.digest !== digest) {
      throw new CasError("cas.meta_invalid", `${path}: digest names ${result.data.digest}`);
    }
    return result.data as CasMeta;
  }

  /**
   * Puts known-good bytes back under `digest` (`bernstein cas repair`): they must hash to the
   * key. A damaged blob or sidecar found there is moved aside to `.damaged/` (kept for a look,
   * never read again), then the bytes are written tmp + fsync + rename, and a sidecar that is
   * missing or does not match is written anew.
   */
  async restore(
    digest: string,
    bytes: Uint8Array,
    options: CasPutOptions = {},
  ): Promise<{ path: string; moved_aside: string[] }> {
    checkCasKey(digest);
    if (sha256Hex(bytes) !== digest) {
      throw new CasError("cas.integrity", `the bytes offered for ${digest} hash to something else`);
    }
    const path = this.blobPath(digest);
    const shard = join(this.root, digest.slice(0, 2));
    await Deno.mkdir(shard, { recursive: true });
    await this.#refuseSymlink(shard);
    const movedAside: string[] = [];
    const blobOk = await this.verify(digest).then(() => true, () => false);
    if (!blobOk) {
      const aside = await this.#moveAside(path);
      if (aside !== undefined) movedAside.push(aside);
      const tmp = join(this.root, `.tmp-${Deno.pid}-${toHex(this.#random.bytes(8))}`);
      try {
        const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o644 });
        try {
          await writeAll(file, bytes);
          await file.sync();
        } finally {
          file.close();
        }
        await Deno.rename(tmp, path);
      } finally {
        await Deno.remove(tmp).catch(() => {});
      }
    }
    const meta = await this.readMeta(digest).catch(() => undefined);
    if (meta === undefined || meta.size_bytes !== bytes.length) {
      const aside = await this.#moveAside(this.metaPath(digest));
      if (aside !== undefined) movedAside.push(aside);
      await this.#ensureMeta(digest, bytes.length, options);
    }
    await syncDirectory(shard);
    return { path, moved_aside: movedAside };
  }

  /** Moves a damaged file to `.damaged/<name>.<random>`; undefined when nothing was there. */
  async #moveAside(path: string): Promise<string | undefined> {
    try {
      await Deno.lstat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
    const dir = join(this.root, ".damaged");
    await Deno.mkdir(dir, { recursive: true });
    const target = join(dir, `${basename(path)}.${toHex(this.#random.bytes(4))}`);
    await Deno.rename(path, target);
    return target;
  }

  #integrity(digest: string): never {
    throw new CasError(
      "cas.integrity",
      `blob ${digest} does not hash to its key: the stored bytes changed`,
      {
        location: this.blobPath(digest),
        hint: "'bernstein cas repair' restores it from its source if the source is unchanged",
      },
    );
  }

  async #refuseSymlink(path: string): Promise<void> {
    const info = await Deno.lstat(path);
    if (info.isSymlink) {
      throw new CasError("cas.not_regular", `${path} is a symlink; refusing to use it`);
    }
  }

  async #regular(path: string): Promise<Deno.FileInfo> {
    let info: Deno.FileInfo;
    try {
      await this.#refuseSymlink(join(path, ".."));
      info = await Deno.lstat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new CasError("cas.not_found", `no CAS entry at ${path}`);
      }
      throw error;
    }
    if (info.isSymlink) {
      throw new CasError("cas.not_regular", `${path} is a symlink; refusing to read it`);
    }
    if (!info.isFile) {
      throw new CasError("cas.not_regular", `${path} is not a regular file; refusing to read it`);
    }
    return info;
  }

  /** Opens a blob only if it is the regular file that was checked (no swap in between). */
  async #openRegular(digest: string): Promise<Deno.FsFile> {
    const path = this.blobPath(digest);
    const before = await this.#regular(path);
    const file = await Deno.open(path, { read: true });
    try {
      const after = await file.stat();
      if (!after.isFile || after.ino !== before.ino || after.dev !== before.dev) {
        throw new CasError("cas.not_regular", `${path} was replaced while being opened`);
      }
      return file;
    } catch (error) {
      file.close();
      throw error;
    }
  }

  /**
   * Puts `tmp` in place at `path` unless `path` exists; true when this call created it. A hard
   * link never replaces an existing file, so the first writer wins even in a race (a rename
   * would silently overwrite). File systems without hard links fall back to check + rename:
   * the blob bytes are identical by construction, only a racing sidecar could be replaced.
   */
  async #linkIfAbsent(tmp: string, path: string): Promise<boolean> {
    try {
      await Deno.link(tmp, path);
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) return false;
      if (
        !(error instanceof Deno.errors.NotSupported ||
          error instanceof Deno.errors.PermissionDenied)
      ) {
        throw error;
      }
    }
    try {
      await Deno.lstat(path);
      return false;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    await Deno.rename(tmp, path);
    return true;
  }

  async #ensureMeta(digest: string, size: number, options: CasPutOptions): Promise<CasMeta> {
    const path = this.metaPath(digest);
    const meta: CasMeta = {
      digest,
      size_bytes: size,
      content_type: options.contentType ?? "application/octet-stream",
      created_at: new Date(this.#clock.nowMs()).toISOString(),
      metadata: options.metadata ?? {},
    };
    let bytes: Uint8Array;
    try {
      bytes = canonicalBytes(meta, "canon");
    } catch (error) {
      throw new CasError(
        "cas.meta_invalid",
        `metadata has no canonical JSON form: ${(error as Error).message}`,
      );
    }
    const tmp = join(this.root, `.tmp-${Deno.pid}-${toHex(this.#random.bytes(8))}`);
    const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o644 });
    try {
      try {
        await writeAll(file, bytes);
        await writeAll(file, new Uint8Array([0x0a]));
        await file.sync();
      } finally {
        file.close();
      }
      if (await this.#linkIfAbsent(tmp, path)) {
        await syncDirectory(join(path, ".."));
        return meta;
      }
    } finally {
      await Deno.remove(tmp).catch(() => {});
    }
    const existing = await this.readMeta(digest);
    if (existing.size_bytes !== size) {
      throw new CasError(
        "cas.meta_invalid",
        `${path}: size_bytes is ${existing.size_bytes}, but the blob has ${size} bytes`,
      );
    }
    return existing;
  }
}
