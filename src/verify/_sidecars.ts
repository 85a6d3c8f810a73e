// Reads sidecars from a lineage folder's `signatures/` tree, read-only and without following
// symlinks: each artefact's folder is listed once (the listing says which names are regular
// files, so a symlink or FIFO is never opened), and a name missing from a listing triggers one
// re-listing, for sidecars written meanwhile. Used on the main thread and in gate workers.
// When the gate looks for orphaned sidecars it lists the whole tree first anyway: that one
// listing (a `SidecarIndex`, plain data) is handed to the workers and used for the orphans,
// so no folder is listed more than once per gate.
import { artefactDigest, digestInto, digestText, hexDigestInto } from "../lineage/mod.ts";
import type { SignatureFetch } from "./types.ts";

/** A sidecar is ~150 bytes; anything far larger is not read. */
export const MAX_SIDECAR_BYTES = 4096;

const readBuffer = new Uint8Array(MAX_SIDECAR_BYTES + 1);
const READ_ONLY: Deno.OpenOptions = { read: true };

/**
 * Reads a small regular file in one read into a shared buffer; a file filling the buffer is
 * over the limit. (A regular file returns short reads only at its end.)
 */
function readBounded(path: string, limit: number): SignatureFetch {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, READ_ONLY);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return { problem: `cannot read: ${(error as Error).message}` };
  }
  try {
    const buf = limit < readBuffer.length ? readBuffer.subarray(0, limit + 1) : readBuffer;
    const n = file.readSync(buf) ?? 0;
    if (n > limit) return { problem: `is more than ${limit} bytes` };
    return buf.slice(0, n);
  } catch (error) {
    return { problem: `cannot read: ${(error as Error).message}` };
  } finally {
    file.close();
  }
}

const DIGEST = 32;
const SIDECAR_NAME_LENGTH = 68; // 64 lowercase hex digits and ".jws"
const nameScratch = new Uint8Array(DIGEST);

/**
 * A folder's sidecar names: the regular files' entry digests, sorted, 32 bytes each, and the
 * names that are not regular files. A missing folder has none. A sidecar's name is 64
 * lowercase hex digits and `.jws` (what `hexDigestInto` accepts, checked by decoding it
 * rather than by a regular expression: the listing runs before any worker starts).
 */
function listFolder(dir: string): { regular: Uint8Array; odd: Map<string, "symlink" | "other"> } {
  const names: string[] = [];
  const odd = new Map<string, "symlink" | "other">();
  try {
    for (const e of Deno.readDirSync(dir)) {
      const name = e.name;
      if (name.length !== SIDECAR_NAME_LENGTH || !name.endsWith(".jws")) continue;
      // Regular files' digits are checked as they are decoded below.
      if (e.isFile && !e.isSymlink) names.push(name);
      else if (hexDigestInto(name, 0, nameScratch)) {
        odd.set(name, e.isSymlink ? "symlink" : "other");
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
      throw error;
    }
  }
  names.sort();
  let count = 0;
  const regular = new Uint8Array(names.length * DIGEST);
  for (const name of names) if (hexDigestInto(name, 0, regular, count * DIGEST)) count++;
  return { regular: count === names.length ? regular : regular.slice(0, count * DIGEST), odd };
}

/**
 * One folder's sidecar names, compactly: the regular files' entry digests sorted in one
 * buffer (32 bytes a name instead of a ~100-byte string in a map: 100 000 sidecars stay
 * ~3 MB), and the few names that are not regular files. Other names are never looked up.
 */
class Listing {
  readonly #regular: Uint8Array;
  readonly #count: number;
  readonly #odd: Map<string, "symlink" | "other">;

  constructor(regular: Uint8Array, odd: Map<string, "symlink" | "other">) {
    this.#regular = regular;
    this.#count = regular.length / DIGEST;
    this.#odd = odd;
  }

  /** Lists `dir` now. */
  static read(dir: string): Listing {
    const { regular, odd } = listFolder(dir);
    return new Listing(regular, odd);
  }

  /**
   * What the sidecar of `digest` (`hex`, its 64 lowercase hex digits) is, or undefined when
   * absent; its name is built only when the folder has names that are not regular files.
   */
  kind(digest: Uint8Array, hex: string): "file" | "symlink" | "other" | undefined {
    if (this.#odd.size > 0) {
      const odd = this.#odd.get(`${hex}.jws`);
      if (odd !== undefined) return odd;
    }
    let lo = 0;
    let hi = this.#count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = mid * DIGEST;
      let order = 0;
      for (let b = 0; b < DIGEST && order === 0; b++) order = this.#regular[at + b] - digest[b];
      if (order === 0) return "file";
      if (order < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}

/**
 * Looks sidecars up under `<lineageDir>/signatures/`. Each artefact's folder is listed once
 * (the listing says which names are regular files, so symlinks and FIFOs are never opened);
 * a name missing from a listing triggers one re-listing, for sidecars written meanwhile.
 */
export function sidecarReader(
  lineageDir: string,
  index?: SidecarIndex,
): (artefact: string, hash: string) => SignatureFetch {
  const root = `${lineageDir.replace(/\/+$/, "")}/signatures/`;
  // Per artefact: its sidecar folder and that folder's listing.
  const folders = new Map<string, { dir: string; listing?: Listing }>();
  const listed = index === undefined ? undefined : indexedListings(index);
  const digest = new Uint8Array(DIGEST);
  return (artefact, hash) => {
    let folder = folders.get(artefact);
    if (folder === undefined) {
      const h = artefactDigest(artefact);
      // Plain concatenation: node:path normalisation costs more than the read itself here.
      folder = { dir: `${root}${h.slice(0, 2)}/${h}`, listing: listed?.get(h) };
      if (folders.size > 100_000) folders.clear();
      folders.set(artefact, folder);
    }
    // Entry hashes are always digests (`sha256:` and 64 lowercase hex, which digestInto checks);
    // anything else has no sidecar to find.
    const prefixed = hash.startsWith("sha256:");
    if (!digestInto(prefixed ? hash : `sha256:${hash}`, digest)) return undefined;
    const hex = prefixed ? hash.slice(7) : hash;
    let kind = folder.listing?.kind(digest, hex);
    if (kind === undefined) {
      folder.listing = Listing.read(folder.dir);
      kind = folder.listing.kind(digest, hex);
    }
    if (kind === undefined) return undefined;
    if (kind === "symlink") return { problem: "is a symlink (refused)" };
    if (kind === "other") return { problem: "is not a regular file" };
    return readBounded(`${folder.dir}/${hex}.jws`, MAX_SIDECAR_BYTES);
  };
}

const TWO_HEX = /^[0-9a-f]{2}$/;
const ARTEFACT_DIR = /^[0-9a-f]{64}$/;

function listDir(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return [];
    }
    throw error;
  }
}

/**
 * Every sidecar under `<lineageDir>/signatures/<aa>/<H>/` (symlinked folders are not
 * followed), listed once, as plain data a worker can be sent: per artefact folder (in path
 * order) its regular files' entry digests, sorted, and the names that are not regular files.
 */
export interface SidecarIndex {
  /** Each folder's artefact digest (`<H>`, 64 hex), in path order. */
  folders: string[];
  /** Folder `i`'s regular files are digests `starts[i]` .. `starts[i + 1] - 1`. */
  starts: Int32Array;
  /** 32 bytes per regular file, sorted within each folder. */
  digests: Uint8Array;
  /** Sidecar names that are not regular files (symlinks, FIFOs, folders). */
  odd: { folder: number; name: string; kind: "symlink" | "other" }[];
}

/** Lists the whole `signatures/` tree of a lineage folder once (see {@linkcode SidecarIndex}). */
export function indexSidecars(lineageDir: string): SidecarIndex {
  const root = `${lineageDir.replace(/\/+$/, "")}/signatures`;
  const folders: string[] = [];
  const starts: number[] = [0];
  const parts: Uint8Array[] = [];
  const odd: SidecarIndex["odd"] = [];
  let total = 0;
  const tops = listDir(root).filter((t) => t.isDirectory && TWO_HEX.test(t.name));
  for (const top of tops.map((t) => t.name).sort()) {
    const arts = listDir(`${root}/${top}`)
      .filter((a) => a.isDirectory && ARTEFACT_DIR.test(a.name) && a.name.startsWith(top))
      .map((a) => a.name)
      .sort();
    for (const art of arts) {
      const listing = listFolder(`${root}/${top}/${art}`);
      for (const [name, kind] of listing.odd) odd.push({ folder: folders.length, name, kind });
      folders.push(art);
      parts.push(listing.regular);
      total += listing.regular.length / DIGEST;
      starts.push(total);
    }
  }
  const digests = new Uint8Array(total * DIGEST);
  let at = 0;
  for (const p of parts) {
    digests.set(p, at);
    at += p.length;
  }
  return { folders, starts: Int32Array.from(starts), digests, odd };
}

/** The index's folders as listings, by artefact digest (views, no copies). */
function indexedListings(index: SidecarIndex): Map<string, Listing> {
  const odd = new Map<number, Map<string, "symlink" | "other">>();
  for (const o of index.odd) {
    const m = odd.get(o.folder) ?? new Map<string, "symlink" | "other">();
    m.set(o.name, o.kind);
    odd.set(o.folder, m);
  }
  const out = new Map<string, Listing>();
  index.folders.forEach((h, i) => {
    const regular = index.digests.subarray(index.starts[i] * DIGEST, index.starts[i + 1] * DIGEST);
    out.set(h, new Listing(regular, odd.get(i) ?? new Map()));
  });
  return out;
}

/**
 * The index's sidecars whose entry is not in the log (`inLog` says, by the 32 digest bytes at
 * `at`), with their path relative to the lineage folder, sorted by path.
 */
export function orphanedSidecars(
  index: SidecarIndex,
  inLog: (digests: Uint8Array, at: number) => boolean,
): { path: string; hash: string }[] {
  const out: { path: string; hash: string }[] = [];
  const folderOf = (i: number) => `signatures/${index.folders[i].slice(0, 2)}/${index.folders[i]}`;
  for (let f = 0; f < index.folders.length; f++) {
    for (let d = index.starts[f]; d < index.starts[f + 1]; d++) {
      if (inLog(index.digests, d * DIGEST)) continue;
      const hash = digestText(index.digests, d * DIGEST);
      out.push({ path: `${folderOf(f)}/${hash.slice(7)}.jws`, hash });
    }
  }
  const scratch = new Uint8Array(DIGEST);
  for (const o of index.odd) {
    const hash = `sha256:${o.name.slice(0, 64)}`;
    if (digestInto(hash, scratch) && inLog(scratch, 0)) continue;
    out.push({ path: `${folderOf(o.folder)}/${o.name}`, hash });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
