// Reads sidecars from a lineage folder's `signatures/` tree, read-only and without following
// symlinks: each artefact's folder is listed once (the listing says which names are regular
// files, so a symlink or FIFO is never opened), and a name missing from a listing triggers one
// re-listing, for sidecars written meanwhile. Used on the main thread and in gate workers.
import { artefactDigest } from "../lineage/mod.ts";
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

type Listing = Map<string, "file" | "symlink" | "other">;

function listDirectory(dir: string): Listing {
  const out: Listing = new Map();
  try {
    for (const e of Deno.readDirSync(dir)) {
      out.set(e.name, e.isSymlink ? "symlink" : e.isFile ? "file" : "other");
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
      throw error;
    }
  }
  return out;
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
  return (artefact, hash) => {
    let folder = folders.get(artefact);
    if (folder === undefined) {
      const h = artefactDigest(artefact);
      // Plain concatenation: node:path normalisation costs more than the read itself here.
      folder = { dir: `${root}${h.slice(0, 2)}/${h}` };
      if (folders.size > 100_000) folders.clear();
      folders.set(artefact, folder);
    }
    const name = `${hash.startsWith("sha256:") ? hash.slice(7) : hash}.jws`;
    if (folder.listing === undefined || !folder.listing.has(name)) {
      folder.listing = listDirectory(folder.dir);
    }
    const kind = folder.listing.get(name);
    if (kind === undefined) return undefined;
    if (kind === "symlink") return { problem: "is a symlink (refused)" };
    if (kind === "other") return { problem: "is not a regular file" };
    return readBounded(`${folder.dir}/${name}`, MAX_SIDECAR_BYTES);
  };
}
