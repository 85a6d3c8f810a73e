"""An independent Python reading of the run spine format (FORMATS.md section 10), as the Python
Bernstein project writes it: json.dumps(sort_keys, compact, ensure_ascii=False) rows, entry hash
over the domain tag and the seven hashed fields, HMAC-SHA256 under HKDF-SHA256(audit key, info
"lineage"), and a spine.head pinning the last hash and the row count.

Usage:
  spine_ref.py write DIR KEYFILE N      writes N receipt-like entries to DIR/spine.jsonl + head
  spine_ref.py verify DIR KEYFILE       prints {"ok": bool, "count": n, "errors": [...]}
"""

import hashlib
import hmac
import json
import os
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

TAG = "bernstein:lineage:v2"
HASHED = ["prev_hash", "artifact_path", "content_hash", "actor", "step_id", "model", "timestamp"]


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def store_key(master):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"lineage").derive(master)


def entry_hash(fields):
    pre = TAG.encode("utf-8") + dumps({k: fields[k] for k in HASHED}).encode("utf-8")
    return "sha256:" + hashlib.sha256(pre).hexdigest()


def mac(key, body):
    return hmac.new(key, dumps(body).encode("utf-8"), hashlib.sha256).hexdigest()


def write(directory, master, n):
    key = store_key(master)
    os.makedirs(directory, exist_ok=True)
    prev = ""
    with open(os.path.join(directory, "spine.jsonl"), "ab") as fh:
        for i in range(n):
            content = ("receipt %d é" % i).encode("utf-8")
            fields = {
                "prev_hash": prev,
                "artifact_path": ".sdd/lineage/receipts/%s.json" % hashlib.sha256(content).hexdigest(),
                "content_hash": "sha256:" + hashlib.sha256(content).hexdigest(),
                "actor": "orchestrator",
                "step_id": "failure-receipt:3.%d-fix" % (i + 1),
                "model": "",
                "timestamp": 0,
            }
            body = {"v": 2, **fields, "entry_hash": entry_hash(fields)}
            row = {**body, "hmac": mac(key, body)}
            fh.write((dumps(row) + "\n").encode("utf-8"))
            prev = body["entry_hash"]
    head = {"head_hash": prev, "count": n}
    with open(os.path.join(directory, "spine.head"), "w", encoding="utf-8") as fh:
        fh.write(dumps({**head, "hmac": mac(key, head)}))


def verify(directory, master):
    key = store_key(master)
    errors = []
    prev = ""
    count = 0
    with open(os.path.join(directory, "spine.jsonl"), "rb") as fh:
        raw = fh.read().rstrip(b"\n")
    for n, line in enumerate(raw.split(b"\n") if raw else [], start=1):
        count += 1
        row = json.loads(line)
        if row["prev_hash"] != prev:
            errors.append("line %d: prev_hash" % n)
        if row["entry_hash"] != entry_hash(row):
            errors.append("line %d: entry_hash" % n)
        body = {k: v for k, v in row.items() if k != "hmac"}
        if not hmac.compare_digest(row["hmac"], mac(key, body)):
            errors.append("line %d: hmac" % n)
        prev = row["entry_hash"]
    with open(os.path.join(directory, "spine.head"), encoding="utf-8") as fh:
        head = json.loads(fh.read())
    if head["head_hash"] != prev or head["count"] != count:
        errors.append("head")
    if head["hmac"] != mac(key, {"head_hash": head["head_hash"], "count": head["count"]}):
        errors.append("head hmac")
    print(json.dumps({"ok": not errors, "count": count, "errors": errors}))


def main():
    cmd, directory, keyfile = sys.argv[1:4]
    with open(keyfile, "rb") as fh:
        master = fh.read().strip()
    if cmd == "write":
        write(directory, master, int(sys.argv[4]))
    else:
        verify(directory, master)


if __name__ == "__main__":
    main()
