// Reads sidecars from a lineage folder's `signatures/` tree, read-only and without following
// symlinks: each artefact's folder is listed once (the listing says which names are regular
// files, so a symlink or FIFO is never opened), and a name missing from a listing triggers one
// re-listing, for sidecars written meanwhile. Used on the main thread and in gate workers.
import { artefactDigest, digestInto } from "../lineage/mod.ts";
import type { SignatureFetch } from "./types.ts";

/** A sidecar is ~150 bytes; anything far larger is not read. */
export const MAX_SIDECAR_BYTES = 4096;

const readBuffer = new Uint8Array(MAX_SIDECAR_BYTES + 1);

/**
 * Reads a small regular file in one read into a shared buffer; a file filling the buffer is
 * over the limit. (A regular file returns short reads only at its end.)
 */
function readBounded(path: string, limit: number): SignatureFetch {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
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
const SIDECAR_NAME = /^[0-9a-f]{64}\.jws$/;

/**
 * One folder's sidecar names, compactly: the regular files' entry digests sorted in one
 * buffer (32 bytes a name instead of a ~100-byte string in a map: 100 000 sidecars stay
 * ~3 MB), and the few names that are not regular files. Other names are never looked up.
 */
class Listing {
  readonly #regular: Uint8Array;
  readonly #count: number;
  readonly #odd = new Map<string, "symlink" | "other">();

  constructor(dir: string) {
    const regular: string[] = [];
    try {
      for (const e of Deno.readDirSync(dir)) {
        if (!SIDECAR_NAME.test(e.name)) continue;
        if (e.isFile && !e.isSymlink) regular.push(e.name);
        else this.#odd.set(e.name, e.isSymlink ? "symlink" : "other");
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
        throw error;
      }
    }
    regular.sort();
    this.#count = regular.length;
    this.#regular = new Uint8Array(regular.length * DIGEST);
    for (let i = 0; i < regular.length; i++) {
      digestInto(`sha256:${regular[i].slice(0, 64)}`, this.#regular, i * DIGEST);
    }
  }

  /** What `name` is (`<64 hex>.jws`, its digest in `digest`), or undefined when absent. */
  kind(name: string, digest: Uint8Array): "file" | "symlink" | "other" | undefined {
    const odd = this.#odd.get(name);
    if (odd !== undefined) return odd;
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
): (artefact: string, hash: string) => SignatureFetch {
  const root = `${lineageDir.replace(/\/+$/, "")}/signatures/`;
  // Per artefact: its sidecar folder and that folder's listing.
  const folders = new Map<string, { dir: string; listing?: Listing }>();
  const digest = new Uint8Array(DIGEST);
  return (artefact, hash) => {
    let folder = folders.get(artefact);
    if (folder === undefined) {
      const h = artefactDigest(artefact);
      // Plain concatenation: node:path normalisation costs more than the read itself here.
      folder = { dir: `${root}${h.slice(0, 2)}/${h}` };
      if (folders.size > 100_000) folders.clear();
      folders.set(artefact, folder);
    }
    const hex = hash.startsWith("sha256:") ? hash.slice(7) : hash;
    const name = `${hex}.jws`;
    // Entry hashes are always digests; anything else has no sidecar to find.
    if (!SIDECAR_NAME.test(name) || !digestInto(`sha256:${hex}`, digest)) return undefined;
    let kind = folder.listing?.kind(name, digest);
    if (kind === undefined) {
      folder.listing = new Listing(folder.dir);
      kind = folder.listing.kind(name, digest);
    }
    if (kind === undefined) return undefined;
    if (kind === "symlink") return { problem: "is a symlink (refused)" };
    if (kind === "other") return { problem: "is not a regular file" };
    return readBounded(`${folder.dir}/${name}`, MAX_SIDECAR_BYTES);
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
 * Every sidecar name under `<lineageDir>/signatures/<aa>/<H>/` (symlinked folders are not
 * followed), with its entry digest and path relative to the lineage folder, sorted by path.
 */
export function listSidecars(lineageDir: string): { path: string; hash: string }[] {
  const root = `${lineageDir.replace(/\/+$/, "")}/signatures`;
  const out: { path: string; hash: string }[] = [];
  for (const top of listDir(root)) {
    if (!top.isDirectory || !TWO_HEX.test(top.name)) continue;
    for (const art of listDir(`${root}/${top.name}`)) {
      if (!art.isDirectory || !ARTEFACT_DIR.test(art.name) || !art.name.startsWith(top.name)) {
        continue;
      }
      for (const f of listDir(`${root}/${top.name}/${art.name}`)) {
        if (!SIDECAR_NAME.test(f.name)) continue;
        out.push({
          path: `signatures/${top.name}/${art.name}/${f.name}`,
          hash: `sha256:${f.name.slice(0, 64)}`,
        });
      }
    }
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
