"""Independent reference implementation of the work ledger and scorecard envelope of
FORMATS.md section 6, written from the spec in plain Python for differential tests.

  python3 ledger_ref.py write   < events.json   > ledger.jsonl
  python3 ledger_ref.py verify  LEDGER_FILE      -> {"ok": bool, "rows": n, "line": n|null, "reason": str|null}
  python3 ledger_ref.py envelope SCORECARD_FILE  -> {"ok": bool, "sha256": str|null, "reason": str|null}

events.json: [{"kind": ..., "task_id": str|null, "payload": {...}, "ts_ms": int}, ...]
"""
import hashlib
import json
import os
import sys

KINDS = {
    "run.open", "run.resumed", "run.closed", "task.scheduled", "task.started",
    "task.completed", "task.failed", "task.abandoned",
}
GENESIS = "0" * 64
ROW_KEYS = sorted([
    "seq", "prev_hash", "kind", "task_id", "payload", "entry_hash", "ts", "redactions",
    "schema_version",
])


def canon_ascii(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def entry_hash(kind, payload, prev_hash, task_id):
    body = {"kind": kind, "payload": payload, "prev_hash": prev_hash, "task_id": task_id}
    return hashlib.sha256(canon_ascii(body).encode("ascii")).hexdigest()


def write(events):
    prev = GENESIS
    out = []
    for seq, ev in enumerate(events):
        row = {
            "seq": seq,
            "prev_hash": prev,
            "kind": ev["kind"],
            "task_id": ev.get("task_id"),
            "payload": ev.get("payload", {}),
            "ts": ev["ts_ms"] / 1000,
            "redactions": [],
            "schema_version": 1,
        }
        row["entry_hash"] = entry_hash(row["kind"], row["payload"], prev, row["task_id"])
        prev = row["entry_hash"]
        out.append(canon_ascii(row) + "\n")
    sys.stdout.write("".join(out))


def verify(path):
    data = open(path, "rb").read()
    if data and not data.endswith(b"\n"):
        lines = data.split(b"\n")
    else:
        lines = data.split(b"\n")[:-1] if data else []
    prev = GENESIS
    for i, raw in enumerate(lines):
        def fail(reason):
            return {"ok": False, "rows": i, "line": i + 1, "reason": reason}
        if i == len(lines) - 1 and not data.endswith(b"\n"):
            return fail("missing trailing newline")
        try:
            row = json.loads(raw.decode("utf-8"))
        except ValueError as e:
            return fail("invalid JSON: %s" % e)
        if canon_ascii(row).encode("ascii") != raw:
            return fail("non-canonical line bytes")
        if sorted(row) != ROW_KEYS:
            return fail("wrong fields")
        if row["schema_version"] != 1 or row["seq"] != i or row["kind"] not in KINDS:
            return fail("bad schema_version, seq or kind")
        if not isinstance(row["ts"], float):
            return fail("ts is not a float")
        if row["prev_hash"] != prev:
            return fail("prev_hash mismatch")
        if row["entry_hash"] != entry_hash(row["kind"], row["payload"], row["prev_hash"], row["task_id"]):
            return fail("entry_hash mismatch")
        prev = row["entry_hash"]
    return {"ok": True, "rows": len(lines), "line": None, "reason": None}


def envelope(path):
    raw = open(path, "rb").read()
    env = json.loads(raw.decode("ascii"))
    if canon_ascii(env).encode("ascii") != raw:
        return {"ok": False, "sha256": None, "reason": "non-canonical envelope"}
    if sorted(env) != ["content", "sha256"]:
        return {"ok": False, "sha256": None, "reason": "wrong envelope fields"}
    sha = hashlib.sha256(canon_ascii(env["content"]).encode("ascii")).hexdigest()
    if sha != env["sha256"] or os.path.basename(path) != sha + ".json":
        return {"ok": False, "sha256": sha, "reason": "sha256 mismatch"}
    return {"ok": True, "sha256": sha, "reason": None}


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "write":
        write(json.load(sys.stdin))
    elif cmd == "verify":
        print(json.dumps(verify(sys.argv[2])))
    elif cmd == "envelope":
        print(json.dumps(envelope(sys.argv[2])))
    else:
        raise SystemExit("unknown command " + cmd)
