// The changed paths between two git trees, computed from tree objects the run's object batch
// read, in the form, order and statuses `git diff --raw --no-renames` prints them: for
// Git.diffEntries, one git process (and its setsid) fewer per task. Only trees as git itself
// writes them are read here — known modes, names in git's order, no name twice, UTF-8 names —
// and no submodule may be among the changes (whether git shows one depends on configuration);
// anything else is undefined, and the caller asks git diff.

/** A changed path as `git diff --raw` prints it (see `DiffEntry` in git.ts). */
export interface TreeChange {
  /** Mode before (`000000` when added). */
  oldMode: string;
  /** Mode after (`000000` when deleted). */
  newMode: string;
  /** A (added), D (deleted), M (modified), T (type changed). */
  status: string;
  /** Path from the top of the tree. */
  path: string;
}

/** Reads tree `id` (its bytes hashed to the id), or undefined when it cannot. */
export type TreeReader = (id: string) => Promise<Uint8Array | undefined>;

/** One entry of a tree object. */
interface TreeEntry {
  /** Name bytes as Latin-1 (one char a byte), `/` appended for a folder: git's sort key. */
  key: string;
  /** The name as text. */
  name: string;
  /** Mode as git stores it (`40000` for a folder). */
  mode: string;
  /** Object id, lowercase hex. */
  id: string;
}

const FOLDER = "40000";
const SUBMODULE = "160000";
/** The modes git writes; anything else is left to git (it reads some others leniently). */
const MODES = new Set(["100644", "100755", "120000", SUBMODULE, FOLDER]);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Raised inside the walk when something is not as git writes it: the caller asks git. */
class NotPlain extends Error {}

/**
 * The entries of a tree object with ids of `idBytes` bytes, or undefined unless it is one git
 * itself would write (see the file comment).
 */
function parseTree(bytes: Uint8Array, idBytes: number): TreeEntry[] | undefined {
  const entries: TreeEntry[] = [];
  const names = new Set<string>();
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    const nul = space < 0 ? -1 : bytes.indexOf(0x00, space + 1);
    if (nul < 0 || nul + 1 + idBytes > bytes.length) return undefined;
    const mode = String.fromCharCode(...bytes.subarray(at, space));
    const raw = bytes.subarray(space + 1, nul);
    if (!MODES.has(mode) || raw.length === 0 || raw.includes(0x2f)) return undefined;
    let name: string;
    try {
      name = strictUtf8.decode(raw);
    } catch {
      return undefined;
    }
    if (name === "." || name === ".." || names.has(name)) return undefined;
    names.add(name);
    let id = "";
    for (const b of bytes.subarray(nul + 1, nul + 1 + idBytes)) {
      id += b.toString(16).padStart(2, "0");
    }
    let key = "";
    for (const b of raw) key += String.fromCharCode(b);
    if (mode === FOLDER) key += "/";
    const previous = entries.at(-1);
    if (previous !== undefined && !(previous.key < key)) return undefined;
    entries.push({ key, name, mode, id });
    at = nul + 1 + idBytes;
  }
  return entries;
}

/** S_IFMT of a leaf mode: regular file, symlink or submodule. */
function kind(mode: string): string {
  return mode === "100755" ? "100644" : mode;
}

/**
 * The changes from tree `before` to tree `after` (ids of `idLength` hex digits), as `git diff
 * --raw --no-renames` lists them, or undefined when a tree is not plain or a submodule changes.
 */
export async function diffTrees(
  read: TreeReader,
  before: string,
  after: string,
  idLength: number,
): Promise<TreeChange[] | undefined> {
  const out: TreeChange[] = [];
  try {
    await walk(read, before, after, "", idLength / 2, out);
  } catch (error) {
    if (error instanceof NotPlain) return undefined;
    throw error;
  }
  return out;
}

async function entriesOf(
  read: TreeReader,
  id: string | undefined,
  idBytes: number,
): Promise<TreeEntry[]> {
  if (id === undefined) return [];
  const bytes = await read(id);
  const entries = bytes === undefined ? undefined : parseTree(bytes, idBytes);
  if (entries === undefined) throw new NotPlain();
  return entries;
}

async function walk(
  read: TreeReader,
  before: string | undefined,
  after: string | undefined,
  prefix: string,
  idBytes: number,
  out: TreeChange[],
): Promise<void> {
  if (before === after) return;
  const a = await entriesOf(read, before, idBytes);
  const b = await entriesOf(read, after, idBytes);
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    const order = x === undefined
      ? 1
      : y === undefined
      ? -1
      : x.key < y.key
      ? -1
      : x.key > y.key
      ? 1
      : 0;
    const old = order <= 0 ? x : undefined;
    const now = order >= 0 ? y : undefined;
    if (old !== undefined) i++;
    if (now !== undefined) j++;
    const path = prefix + (old ?? now as TreeEntry).name;
    if ((old?.mode ?? now?.mode) === FOLDER) {
      await walk(read, old?.id, now?.id, `${path}/`, idBytes, out);
      continue;
    }
    if (old !== undefined && now !== undefined && old.id === now.id && old.mode === now.mode) {
      continue;
    }
    if (old?.mode === SUBMODULE || now?.mode === SUBMODULE) throw new NotPlain();
    const status = old === undefined
      ? "A"
      : now === undefined
      ? "D"
      : kind(old.mode) === kind(now.mode)
      ? "M"
      : "T";
    out.push({
      oldMode: old?.mode ?? "000000",
      newMode: now?.mode ?? "000000",
      status,
      path,
    });
  }
}
