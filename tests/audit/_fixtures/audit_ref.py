"""Reference implementation of the audit log of FORMATS.md section 2, written from the text
alone, for the differential test. Standard library only.

  audit_ref.py write DIR KEY_PATH COUNT EPOCH_SECONDS [legacy|surrogate]
  audit_ref.py verify DIR KEY_PATH        -> prints one JSON object, exit 0 clean / 1 errors
  audit_ref.py archive DIR KEEP           -> gzips all but the newest KEEP segments into
                                             DIR/archive/<name>.gz and removes them (the
                                             Python implementation's retention)
"""
import datetime
import gzip
import hashlib
import hmac
import json
import os
import re
import sys

GENESIS = "0" * 64
SEGMENT = re.compile(r"^\d{4}-\d{2}-\d{2}\.jsonl$")


def hkdf_sha256(ikm, info, length=32):
    prk = hmac.new(b"\x00" * 32, ikm, hashlib.sha256).digest()  # salt = none
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def keys(key_path):
    k = open(key_path, "rb").read()  # the hex text as ASCII bytes, not decoded
    return k, hkdf_sha256(k, b"audit")


def dumps(obj):
    return json.dumps(obj, sort_keys=True)  # py-default: ", " ": " ensure_ascii


def mac(record_without_hmac, k, k2):
    body = dumps(record_without_hmac).encode()
    prev = record_without_hmac["prev_hmac"].encode()
    if "scheme" in record_without_hmac:
        return hmac.new(k2, b"bernstein:audit:v2" + prev + body, hashlib.sha256).hexdigest()
    return hmac.new(k, prev + body, hashlib.sha256).hexdigest()


def segments(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(n for n in os.listdir(directory) if SEGMENT.match(n))


def chain_files(directory):
    """Archived segments (gzip, by name) then live ones: the chain order."""
    archive = os.path.join(directory, "archive")
    archived = []
    if os.path.isdir(archive):
        archived = [os.path.join("archive", n) for n in sorted(os.listdir(archive))
                    if n.endswith(".jsonl.gz")]
    return archived + segments(directory)


def read_segment(directory, name):
    path = os.path.join(directory, name)
    if name.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            return fh.read()
    return open(path, "rb").read()


def archive(directory, keep):
    names = segments(directory)
    os.makedirs(os.path.join(directory, "archive"), exist_ok=True)
    for name in names[:max(0, len(names) - keep)]:
        src = os.path.join(directory, name)
        with open(src, "rb") as f_in, gzip.open(os.path.join(directory, "archive", name + ".gz"), "wb") as f_out:
            f_out.write(f_in.read())
        os.unlink(src)


def tip(directory):
    for name in reversed(chain_files(directory)):
        lines = [l for l in read_segment(directory, name).split(b"\n") if l]
        if lines:
            return json.loads(lines[-1])["hmac"]
    return GENESIS


def write(directory, key_path, count, epoch, legacy, surrogate=False):
    k, k2 = keys(key_path)
    os.makedirs(directory, exist_ok=True)
    prev = tip(directory)
    for i in range(count):
        when = datetime.datetime.fromtimestamp(epoch + i * 3.5, datetime.timezone.utc)
        record = {
            "actor": "python-ref",
            "details": {
                "i": i,
                "text": "caf\u00e9 \u2603 \U0001f600 \"q\" \\ \t",
                "floats": [1.0, 0.1, 1e-07, 1e20, -0.0],
                "big": 17329000001234567891 + i,
                "nested": {"b": [True, False, None], "a": {}},
            },
            "event_type": "multimodal.attach" if i % 2 else "py.event",
            "resource_type": "task",
            "resource_id": "t%d" % i,
            "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if not legacy
            else when.isoformat(),
            "prev_hmac": prev,
        }
        if i % 2:
            record["details"]["prev_chain_digest"] = prev
        if surrogate:
            # A lone surrogate, as Python strings may hold (e.g. a file name decoded with
            # surrogateescape): json.dumps writes it as the escape \udc80.
            record["details"]["name"] = "bad\udc80byte"
        if not legacy:
            record["scheme"] = 2
        record["hmac"] = mac(record, k, k2)
        name = when.strftime("%Y-%m-%d") + ".jsonl"
        with open(os.path.join(directory, name), "ab") as fh:
            fh.write(dumps(record).encode() + b"\n")
        prev = record["hmac"]


def verify(directory, key_path):
    k, k2 = keys(key_path)
    prev, records, errors = GENESIS, 0, []
    for name in chain_files(directory):
        raw = read_segment(directory, name)
        if raw and not raw.endswith(b"\n"):
            errors.append("%s: missing trailing newline" % name)
        for n, line in enumerate(raw.split(b"\n")[:-1] if raw.endswith(b"\n") else raw.split(b"\n"), 1):
            where = "%s:%d" % (name, n)
            try:
                rec = json.loads(line.decode("utf-8", errors="strict"))
            except ValueError as exc:
                errors.append("%s: invalid JSON %s" % (where, exc))
                continue
            if dumps(rec).encode() != line:
                errors.append("%s: non-canonical line bytes" % where)
                continue
            stored = rec.pop("hmac")
            if rec.get("scheme", 2) != 2:
                errors.append("%s: unknown scheme" % where)
            if rec["prev_hmac"] != prev:
                errors.append("%s: prev_hmac mismatch" % where)
            if not hmac.compare_digest(mac(rec, k, k2), stored):
                errors.append("%s: HMAC mismatch" % where)
            claim = rec["details"].get("prev_chain_digest")
            if claim and claim != rec["prev_hmac"]:
                errors.append("%s: false predecessor claim" % where)
            prev = stored
            records += 1
    print(json.dumps({"ok": not errors, "records": records, "errors": errors, "tip": prev}))
    return 0 if not errors else 1


if __name__ == "__main__":
    if sys.argv[1] == "write":
        mode = sys.argv[6] if len(sys.argv) > 6 else ""
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]),
              mode == "legacy", mode == "surrogate")
    elif sys.argv[1] == "archive":
        archive(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(verify(sys.argv[2], sys.argv[3]))
