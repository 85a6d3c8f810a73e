import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import {
  IndexedTaskStore,
  type JsonlTaskStore,
  openJsonlTaskStore,
  readTaskLog,
  TaskLogCorruptError,
  TaskStoreLockedError,
  TaskStoreUnavailableError,
} from "../../src/tasks/mod.ts";
import { CAN_SHARE_DESCRIPTORS, shareDescriptor } from "../_helpers/shared_descriptor.ts";
import { withTempDir } from "../_helpers/temp.ts";

const OP = { actor: "test", reason: "test" };

function open(path: string, compactMinRecords = 10_000): Promise<JsonlTaskStore> {
  return openJsonlTaskStore(path, {
    clock: new FakeClock(),
    random: new SeededRandom(1),
    defaults: { priority: 2, max_retries: 2 },
    compactMinRecords,
  });
}

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

Deno.test("jsonl: each commit is one fsynced line; createMany is a single (atomic) line", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "tasks.jsonl");
    const store = await open(path);
    await store.createMany([
      { id: "a", title: "a", role: "r" },
      { id: "b", title: "b", role: "r", depends_on: ["a"] },
    ], OP);
    await store.transition("a", "cancelled", OP);
    await store.close();
    const recs = lines(await Deno.readTextFile(path)).map((l) => JSON.parse(l));
    assert.equal(recs.length, 2);
    assert.deepEqual(recs[0].tasks.map((t: { id: string }) => t.id), ["a", "b"]);
    assert.equal(recs[1].tasks[0].status, "cancelled");
    assert.equal(((await Deno.stat(path)).mode ?? 0) & 0o777, 0o600);
  });
});

Deno.test("jsonl: a torn last line is set aside, cut off and reported; the rest is kept", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "tasks.jsonl");
    const store = await open(path);
    await store.create({ id: "a", title: "a", role: "r" }, OP);
    await store.create({ id: "b", title: "b", role: "r" }, OP);
    await store.close();
    const good = await Deno.readFile(path);
    const fragment = new TextEncoder().encode('{"v":1,"tasks":[{"id":"c","tit');
    await Deno.writeFile(path, fragment, { append: true });

    const readOnly = await readTaskLog(path);
    assert.deepEqual(readOnly.recovery.torn, {
      offset: good.length,
      bytes: fragment.length,
      savedTo: null,
    });
    assert.equal((await Deno.readFile(path)).length, good.length + fragment.length);

    const again = await open(path);
    assert.equal(again.recovery.records, 2);
    assert.equal(again.recovery.torn?.offset, good.length);
    assert.equal(again.recovery.torn?.bytes, fragment.length);
    assert.equal(again.recovery.torn?.savedTo, `${path}.torn-${good.length}`);
    assert.deepEqual(await Deno.readFile(`${path}.torn-${good.length}`), fragment);
    assert.deepEqual(await Deno.readFile(path), good);
    assert.deepEqual((await again.list()).map((t) => t.id), ["a", "b"]);
    await again.create({ id: "c", title: "c", role: "r" }, OP);
    await again.close();
    const third = await open(path);
    assert.equal(third.recovery.torn, null);
    assert.deepEqual((await third.list()).map((t) => t.id), ["a", "b", "c"]);
    await third.close();
  });
});

Deno.test("jsonl: a damaged line in the middle is an error naming file and line; nothing is changed", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "tasks.jsonl");
    const store = await open(path);
    await store.create({ id: "a", title: "a", role: "r" }, OP);
    await store.create({ id: "b", title: "b", role: "r" }, OP);
    await store.close();
    const text = await Deno.readTextFile(path);
    const [first, second] = lines(text);
    const broken = `${first}\n${second.slice(0, 20)}X${second.slice(21)}\n${first}\n`;
    await Deno.writeTextFile(path, broken);
    await assert.rejects(open(path), (e: unknown) => {
      assert.ok(e instanceof TaskLogCorruptError);
      assert.equal(e.code, "task.log_corrupt");
      assert.equal(e.location, `${path}:2`);
      return true;
    });
    assert.equal(await Deno.readTextFile(path), broken);

    const badField = second.replace('"status":"open"', '"status":"finished"');
    await Deno.writeTextFile(path, `${first}\n${badField}\n`);
    await assert.rejects(open(path), (e: unknown) => {
      assert.ok(e instanceof TaskLogCorruptError);
      assert.equal(e.location, `${path}:2`);
      assert.match(e.message, /^tasks\[0\]\.status: 'finished' is not one of planned/);
      return true;
    });
  });
});

Deno.test("jsonl: a second open of the same log is refused while the first holds it", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "tasks.jsonl");
    const store = await open(path);
    await assert.rejects(open(path), (e: unknown) => {
      assert.ok(e instanceof TaskStoreLockedError);
      assert.equal(e.code, "task.store_locked");
      return true;
    });
    await store.close();
    const again = await open(path);
    await again.close();
  });
});

Deno.test({
  name: "jsonl: close releases the lock while a child being started still shares its descriptor",
  ignore: !CAN_SHARE_DESCRIPTORS,
  // A child started by any thread of the test process holds a copy of the lock's descriptor
  // until it execs; the lock used to outlive close() then, and the reopen was refused (seen
  // once in the full suite: the torn-line test's reopen got TaskStoreLockedError).
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "tasks.jsonl");
      const store = await open(path);
      await store.create({ id: "a", title: "a", role: "r" }, OP);
      const closeCopy = shareDescriptor(`${path}.lock`);
      try {
        await store.close();
        const again = await open(path);
        assert.deepEqual((await again.list()).map((t) => t.id), ["a"]);
        await again.close();
      } finally {
        closeCopy();
      }
    });
  },
});

Deno.test("jsonl: an oversized log is compacted to one line per task with the same state", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "tasks.jsonl");
    const store = await open(path, 1_000_000);
    await store.createMany(
      Array.from({ length: 5 }, (_, i) => ({ id: `t${i}`, title: `${i}`, role: "r" })),
      OP,
    );
    let t = await store.claim("t0", { agent: "a", expectedVersion: 1 });
    for (let i = 0; i < 40; i++) {
      t = await store.progress(t.id, { actor: "a", message: `step ${i}` });
    }
    const before = await store.list();
    await store.close();
    assert.equal(lines(await Deno.readTextFile(path)).length, 42);

    const compacted = await open(path, 20);
    assert.equal(compacted.recovery.compacted, true);
    assert.deepEqual(await compacted.list(), before);
    assert.equal(lines(await Deno.readTextFile(path)).length, 5);
    // Writing past the threshold compacts again while running.
    for (let i = 0; i < 30; i++) {
      t = await compacted.progress(t.id, { actor: "a", message: `more ${i}` });
    }
    const after = await compacted.list();
    await compacted.close();
    assert.ok(lines(await Deno.readTextFile(path)).length < 20);
    const reopened = await open(path);
    assert.deepEqual(await reopened.list(), after);
    assert.equal((await reopened.get("t0"))?.version, 72);
    await reopened.close();
  });
});

Deno.test("a failed journal write makes the store refuse every later call", async () => {
  let fail = false;
  const store = new IndexedTaskStore({
    backend: "test",
    journal: {
      commit: () => fail ? Promise.reject(new Error("No space left on device")) : Promise.resolve(),
      close: () => Promise.resolve(),
    },
    clock: new FakeClock(),
    random: new SeededRandom(3),
    defaults: { priority: 2, max_retries: 2 },
  });
  const t = await store.create({ title: "x", role: "r" }, OP);
  fail = true;
  await assert.rejects(
    store.transition(t.id, "cancelled", OP),
    (e: unknown) =>
      e instanceof TaskStoreUnavailableError && /No space left on device/.test(e.message),
  );
  fail = false;
  await assert.rejects(store.get(t.id), TaskStoreUnavailableError);
  await assert.rejects(store.create({ title: "y", role: "r" }, OP), TaskStoreUnavailableError);
});
