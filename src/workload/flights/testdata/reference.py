#!/usr/bin/env python3
"""Independent re-implementation of specs/flights.md (flights/v1), written from the spec text.

It produces the exact expected values pinned by the Rust unit tests of src/workload/rng.rs and
src/workload/flights/. It shares no code with the Rust implementation: only the data table files.
Fingerprint v2 (spec section 8) needs XXH3-128 from PyPI's `xxhash`, the binding of the xxHash
C library (its values are stable since xxHash 0.8.0; the pinned ones were made with xxhash 4.1.0,
which bundles xxHash 0.8.4). Run it from this directory:

    python3 -m venv /tmp/reference-env && /tmp/reference-env/bin/pip install xxhash
    /tmp/reference-env/bin/python reference.py

(about a minute; prints every value).
"""

import hashlib
import os
import struct

import xxhash

M64 = (1 << 64) - 1
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def read_table(name):
    with open(os.path.join(DATA, name), encoding="ascii") as f:
        return f.read().split("\n")[:-1]


FIRST = read_table("first.txt")
LAST = read_table("last.txt")
CITIES = read_table("cities.txt")
CARRIERS = "AA DL UA WN AS B6 NK F9 HA G4".split()
DOMAINS = "com biz info name net org io".split()
STATUSES = "scheduled boarding departed in_air landed delayed cancelled".split()
PLANES = [("Boeing 737-800", 162), ("Airbus A320", 150), ("Embraer E190", 100),
          ("Bombardier CRJ900", 76), ("Boeing 777-300ER", 396), ("Airbus A350-900", 325),
          ("Boeing 787-9", 290), ("Airbus A321neo", 194)]
AMENITIES = ["WiFi", "Seatback TV", "Power outlets", "Hot meals", "Priority boarding",
             "Extra legroom", "USB charging"]
T0 = 1767225600


# ---------------------------------------------------------------- randomness (spec section 1)
def mix64(x):
    x &= M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def key(s, tag, i):
    return mix64((mix64(s ^ mix64(tag)) + i) & M64)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Stream:
    def __init__(self, k):
        sm = k
        self.s = []
        for _ in range(4):
            sm = (sm + 0x9E3779B97F4A7C15) & M64
            self.s.append(mix64(sm))

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def u(self, lo, hi):
        return lo + ((self.next() * (hi - lo + 1)) >> 64)

    def choice(self, lst):
        return lst[self.u(0, len(lst) - 1)]

    def p(self, prob):
        # floor(p * 2^64) of the IEEE double p, computed exactly
        num, den = float(prob).as_integer_ratio()
        return self.next() < (num << 64) // den

    def partial_shuffle(self, lst, k):
        lst = list(lst)
        for i in range(k):
            j = self.u(i, len(lst) - 1)
            lst[i], lst[j] = lst[j], lst[i]
        return lst


# ---------------------------------------------------------------- minimal BSON
class I64(int):
    pass


class Date(int):
    pass


class Oid(bytes):
    pass


def cstring(s):
    return s.encode() + b"\x00"


def bson_value(v):
    if isinstance(v, bool):
        return 0x08, b"\x01" if v else b"\x00"
    if isinstance(v, Date):
        return 0x09, struct.pack("<q", int(v))
    if isinstance(v, I64):
        return 0x12, struct.pack("<q", int(v))
    if isinstance(v, int):
        assert -(1 << 31) <= v < (1 << 31), v
        return 0x10, struct.pack("<i", v)
    if isinstance(v, str):
        b = v.encode()
        return 0x02, struct.pack("<i", len(b) + 1) + b + b"\x00"
    if isinstance(v, Oid):
        assert len(v) == 12
        return 0x07, bytes(v)
    if isinstance(v, dict):
        return 0x03, bson_doc(v)
    if isinstance(v, list):
        return 0x04, bson_doc({str(i): x for i, x in enumerate(v)})
    raise TypeError(type(v))


def bson_doc(d):
    body = b""
    for k, v in d.items():
        t, b = bson_value(v)
        body += bytes([t]) + cstring(k) + b
    return struct.pack("<i", len(body) + 5) + body + b"\x00"


# ---------------------------------------------------------------- fingerprint v2 fields (spec section 8)
def i32(v):
    return struct.pack("<i", v)


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def v2_str(v):
    b = v.encode()
    return u32(len(b)) + b


# ---------------------------------------------------------------- ids (spec section 3)
def oid(seq):
    return Oid(struct.pack(">I", T0) + struct.pack(">Q", seq))


def seeded_flight_id(seq):
    return 100000 + ((seq % 900000) * 387403 + 510617) % 900000


def inserted_flight_id(seq, insert_base):
    return 1000000 + ((seq - insert_base) % 10**9)


# ---------------------------------------------------------------- documents (spec section 2)
def seat_map(total):
    return [f"{row}{letter}" for row in range(1, total // 6 + 2) for letter in "ABCDEF"][:total]


def flight(dataset_seed, seq, flight_id):
    """Returns (document dict, extras) for document number seq."""
    r = Stream(key(dataset_seed, 1, seq))
    d = {}
    d["_id"] = oid(seq)
    d["flight_id"] = flight_id
    airline = r.choice(CARRIERS)
    d["airline"] = airline
    first = r.choice(FIRST)
    last = r.choice(LAST)
    d["agent_first_name"] = first
    d["agent_last_name"] = last
    d["agent_email"] = first.lower() + last.lower() + "@" + last.lower() + "." + r.choice(DOMAINS)
    h = r.u(0, 8759)
    m = r.u(0, 59)
    d["flight_date"] = Date((T0 - h * 3600 + m * 60) * 1000)
    o = r.u(0, len(CITIES) - 1)
    d["origin"] = CITIES[o]
    j = r.u(0, len(CITIES) - 2)
    if j >= o:
        j += 1
    d["destination"] = CITIES[j]
    d["flight_code"] = airline + str(r.u(100, 999))
    d["status"] = r.choice(STATUSES)
    d["duration_minutes"] = r.u(30, 900)
    letter = r.choice(list("ABCDEF"))
    d["gate"] = letter + str(r.u(1, 50))
    plane, total = r.choice(PLANES)
    k = r.u(2, 5)
    amen = r.partial_shuffle(AMENITIES, k)[:k]
    d["equipment"] = {"plane_type": plane, "total_seats": total, "amenities": amen}
    avail = r.u(0, total)
    d["seats_available"] = avail
    n = min(max(1, total - avail), 25)
    seats = r.partial_shuffle(seat_map(total), n)
    spare = seats[n]
    pax = []
    for i in range(1, n + 1):
        name = r.choice(FIRST) + " " + r.choice(LAST)
        ticket = "TCK-%08d" % r.u(1, 99999999)
        pax.append({"passenger_id": i, "name": name, "ticket_number": ticket,
                    "seat_number": seats[i - 1]})
    d["passengers"] = pax
    return d, {"spare": spare, "n": n}


def seeded(dataset_seed, seq):
    return flight(dataset_seed, seq, seeded_flight_id(seq))


# ---------------------------------------------------------------- operations (spec sections 5, 6, 8)
DEFAULTS = dict(mix=(60, 20, 10, 10, 0, 0), find_split=(100, 0, 0), update_split=(80, 10, 10),
                delete_split=(80, 10, 10), agg_split=(50, 50), hit_rate=0.9, find_limit=5,
                agg_window=100, insert_batch=10)
F1_PROJECTION = {"flight_id": 1, "flight_code": 1, "origin": 1, "destination": 1, "gate": 1,
                 "status": 1, "_id": 0}


def pick(v, split):
    acc = 0
    for idx, share in enumerate(split):
        acc += share
        if v < acc:
            return idx
    raise AssertionError("split does not sum to 100")


class Worker:
    def __init__(self, seed, w, workers, dataset_seed, n0, insert_base, phase=1, **knobs):
        self.k = dict(DEFAULTS, **knobs)
        self.r = Stream(key(seed, 2 if phase == 1 else 3, w))
        self.w, self.workers, self.phase = w, workers, phase
        self.dataset_seed, self.n0, self.insert_base = dataset_seed, n0, insert_base
        self.next_k = 0
        # Inserted documents are built only for v1 records (v2 records only their seqs).
        self.build_documents = True

    def target(self, miss_kind):
        """Returns ("hit", t) or ("miss", value) per section 3."""
        r = self.r
        if r.p(self.k["hit_rate"]):
            return "hit", r.u(0, self.n0 - 1)
        if miss_kind == "flight_id":
            return "miss", r.u(1, 99999)
        if miss_kind == "id":
            return "miss", (1 << 63) + r.u(0, (1 << 32) - 1)
        if miss_kind == "route":
            c = r.choice(CITIES)
            return "miss", (c, c)
        if miss_kind == "status":
            return "miss", "unknown"
        raise AssertionError(miss_kind)

    def fid_filter(self):
        kind, v = self.target("flight_id")
        return {"flight_id": seeded_flight_id(v) if kind == "hit" else v}, kind

    def id_filter(self):
        """Returns the filter, hit or miss, and the seq of the _id (t, or the planned miss)."""
        kind, v = self.target("id")
        return {"_id": oid(v)}, kind, v

    def set_update(self):
        """Returns the update document and its v2 fields (d, S)."""
        d = -1 if self.r.u(0, 1) == 0 else 1
        s = self.r.choice(STATUSES)
        return {"$inc": {"seats_available": d}, "$set": {"status": s}}, i32(d) + v2_str(s)

    def next(self):
        """Returns (kind byte, v1 record body dict, variant name, hit-or-miss, v2 record)."""
        r, k = self.r, self.k
        t = pick(r.u(0, 99), k["mix"])
        if t == 0:  # find
            v = pick(r.u(0, 99), k["find_split"])
            if v == 0:
                f, hm = self.fid_filter()
                return "F", {"filter": f, "projection": F1_PROJECTION, "limit": k["find_limit"]}, "F1", hm, \
                    b"F1" + i32(f["flight_id"]) + i32(k["find_limit"])
            if v == 1:
                hm, x = self.target("route")
                if hm == "hit":
                    doc, _ = seeded(self.dataset_seed, x)
                    x = (doc["origin"], doc["destination"])
                return "F", {"filter": {"origin": x[0], "destination": x[1]},
                             "sort": {"flight_date": -1}, "limit": 20}, "F2", hm, \
                    b"F2" + v2_str(x[0]) + v2_str(x[1])
            hm, x = self.target("status")
            if hm == "hit":
                x = seeded(self.dataset_seed, x)[0]["status"]
            return "F", {"filter": {"status": x}, "limit": 20}, "F3", hm, b"F3" + v2_str(x)
        if t == 1:  # update
            v = pick(r.u(0, 99), k["update_split"])
            if v == 0:
                f, hm = self.fid_filter()
                u, fields = self.set_update()
                return "u", {"q": f, "u": u}, "U1", hm, b"U1" + i32(f["flight_id"]) + fields
            if v == 1:
                f, hm, seq = self.id_filter()
                u, fields = self.set_update()
                return "u", {"q": f, "u": u}, "U2", hm, b"U2" + u64(seq) + fields
            f, hm = self.fid_filter()
            if r.u(0, 1) == 0:
                sign = -1 if r.u(0, 1) == 0 else 1
                amount = sign * r.u(1, 5)
                u = {"$inc": {"seats_available": amount}}
                fields = b"\x00" + i32(amount)
            else:
                minutes = r.u(30, 900)
                u = {"$set": {"duration_minutes": minutes}}
                fields = b"\x01" + i32(minutes)
            return "U", {"q": f, "u": u}, "U3", hm, b"U3" + i32(f["flight_id"]) + fields
        if t == 2:  # delete
            v = pick(r.u(0, 99), k["delete_split"])
            if v == 0:
                f, hm = self.fid_filter()
                return "d", {"q": f}, "D1", hm, b"D1" + i32(f["flight_id"])
            if v == 1:
                f, hm, seq = self.id_filter()
                return "d", {"q": f}, "D2", hm, b"D2" + u64(seq)
            f, hm = self.fid_filter()
            return "D", {"q": f}, "D3", hm, b"D3" + i32(f["flight_id"])
        if t == 3:  # insert: no draw from the worker stream
            seqs = []
            for _ in range(k["insert_batch"]):
                seqs.append(self.insert_base + self.phase * (1 << 40) + self.next_k * self.workers + self.w)
                self.next_k += 1
            record = b"I" + u32(len(seqs)) + b"".join(u64(seq) for seq in seqs)
            if not self.build_documents:
                return "I", None, "I", None, record
            docs = [flight(self.dataset_seed, seq, inserted_flight_id(seq, self.insert_base))[0]
                    for seq in seqs]
            return "I", {"documents": docs}, "I", None, record
        if t == 4:  # aggregate
            v = pick(r.u(0, 99), k["agg_split"])
            tgt = r.u(0, self.n0 - 1)
            if v == 0:
                f = seeded_flight_id(tgt)
                pipeline = [
                    {"$match": {"flight_id": {"$gte": f, "$lt": f + k["agg_window"]}}},
                    {"$group": {"_id": "$equipment.plane_type", "flights": {"$sum": 1},
                                "avg_duration": {"$avg": "$duration_minutes"},
                                "avg_seats_available": {"$avg": "$seats_available"}}},
                    {"$sort": {"flights": -1}}]
                return "A", {"pipeline": pipeline}, "A1", "hit", b"A1" + i32(f) + i32(k["agg_window"])
            doc, _ = seeded(self.dataset_seed, tgt)
            pipeline = [
                {"$match": {"origin": doc["origin"], "destination": doc["destination"]}},
                {"$group": {"_id": "$airline", "flights": {"$sum": 1},
                            "avg_duration": {"$avg": "$duration_minutes"}}},
                {"$sort": {"flights": -1}},
                {"$limit": 10}]
            return "A", {"pipeline": pipeline}, "A2", "hit", \
                b"A2" + v2_str(doc["origin"]) + v2_str(doc["destination"])
        # transaction
        a = r.u(0, self.n0 - 1)
        b = r.u(0, self.n0 - 2)
        if b >= a:
            b += 1
        doc_a, ex_a = seeded(self.dataset_seed, a)
        _, ex_b = seeded(self.dataset_seed, b)
        p = r.u(1, ex_a["n"])
        pa = doc_a["passengers"][p - 1]
        e = {"passenger_id": 100 + p, "name": pa["name"], "ticket_number": pa["ticket_number"],
             "seat_number": ex_b["spare"]}
        stmts = [
            {"kind": "F", "body": {"filter": {"_id": oid(b)},
                                   "projection": {"seats_available": 1, "equipment.total_seats": 1},
                                   "limit": 1}},
            {"kind": "u", "body": {"q": {"_id": oid(a)},
                                   "u": {"$pull": {"passengers": {"passenger_id": p}},
                                         "$inc": {"seats_available": 1}}}},
            {"kind": "u", "body": {"q": {"_id": oid(b)},
                                   "u": {"$push": {"passengers": {"$each": [e], "$position": 0,
                                                                  "$slice": 25}},
                                         "$inc": {"seats_available": -1}}}},
        ]
        return "T", {"stmts": stmts}, "T", None, b"T" + u64(a) + u64(b) + i32(p)


def worker_digest(seed, w, workers, count, **kw):
    wk = Worker(seed, w, workers, **kw)
    h = hashlib.sha256()
    for _ in range(count):
        kind, body, _, _, _ = wk.next()
        h.update(kind.encode() + bson_doc(body))
    return h.digest()


def run_fingerprint(seed, counts, **kw):
    h = hashlib.sha256()
    h.update(b"flights/v1")
    h.update(struct.pack(">I", len(counts)))
    for w, c in enumerate(counts):
        h.update(struct.pack(">Q", c))
        h.update(worker_digest(seed, w, len(counts), c, **kw))
    return h.hexdigest()


def worker_digest_v2(seed, w, workers, count, **kw):
    wk = Worker(seed, w, workers, **kw)
    wk.build_documents = False
    h = xxhash.xxh3_128()
    h.update(u64(wk.dataset_seed) + u64(wk.n0) + u64(wk.insert_base))
    for _ in range(count):
        h.update(wk.next()[4])
    return h.digest()


def run_fingerprint_v2(seed, counts, **kw):
    h = xxhash.xxh3_128()
    h.update(b"flights/v1" + u32(len(counts)))
    for w, c in enumerate(counts):
        h.update(u64(c) + worker_digest_v2(seed, w, len(counts), c, **kw))
    return "v2:" + h.hexdigest()


def per_worker(total, workers):
    return [total // workers + (1 if w < total % workers else 0) for w in range(workers)]


def table_hash():
    canon = ""
    for name, table in (("first", FIRST), ("last", LAST), ("cities", CITIES)):
        canon += f"{name} {len(table)}\n" + "".join(e + "\n" for e in table)
    return hashlib.sha256(canon.encode()).digest()


def dataset_id(dataset_seed, n0):
    return hashlib.sha256(b"flights/v1" + table_hash() + struct.pack(">QQ", dataset_seed, n0)).hexdigest()


# ---------------------------------------------------------------- print the pinned values
def main():
    print("mix64(0) =", hex(mix64(0)))
    print("mix64(1) =", hex(mix64(1)))
    print("mix64(0x0123456789abcdef) =", hex(mix64(0x0123456789ABCDEF)))
    print("key(1,1,0) =", hex(key(1, 1, 0)))
    print("key(1,2,0) =", hex(key(1, 2, 0)))
    print("key(42,3,7) =", hex(key(42, 3, 7)))
    s = Stream(0)
    print("stream(0) first 4 =", [hex(s.next()) for _ in range(4)])
    s = Stream(key(1, 2, 0))
    print("stream(key(1,2,0)) first 4 =", [hex(s.next()) for _ in range(4)])
    s = Stream(12345)
    print("stream(12345) U[0,99] x8 =", [s.u(0, 99) for _ in range(8)])
    s = Stream(12345)
    print("stream(12345) P(0.9) x8 =", [s.p(0.9) for _ in range(8)])
    s = Stream(7)
    print("stream(7) partial shuffle 3 of 0..9 =", s.partial_shuffle(list(range(10)), 3)[:3])

    print("table hash =", table_hash().hex())
    print("datasetId(1, 1000000) =", dataset_id(1, 1000000))

    for seq in (0, 1, 123456):
        d, ex = seeded(1, seq)
        b = bson_doc(d)
        print(f"doc(1,{seq}) len={len(b)} n={ex['n']} spare={ex['spare']} sha256={hashlib.sha256(b).hexdigest()}")
        with open(os.path.join(HERE, f"doc_seed1_seq{seq}.hex"), "w") as f:
            f.write(b.hex() + "\n")
    d, _ = flight(1, 1 << 48, inserted_flight_id(1 << 48, 1 << 48))
    print("inserted doc(1, 2^48) len=", len(bson_doc(d)), "flight_id", d["flight_id"])

    kw = dict(dataset_seed=1, n0=1000000, insert_base=1 << 48)
    wk = Worker(1, 0, 16, **kw)
    print("first 12 ops seed 1 w 0 =", [wk.next()[2] for _ in range(12)])

    # mix over 100000 operations of seed 1 worker 0 (inserts skip document building here)
    wk = Worker(1, 0, 16, insert_batch=0, **kw)
    counts = {}
    hits = {"hit": 0, "miss": 0}
    for _ in range(100000):
        kind, body, var, hm, _ = wk.next()
        counts[var] = counts.get(var, 0) + 1
        if var == "F1":
            hits[hm] += 1
    print("100000 ops variants =", dict(sorted(counts.items())), "F1 hits", hits)

    print("per_worker(100, 16) =", per_worker(100, 16))
    print("fingerprint default seed1 W2 [5,4] n0=1000 =",
          run_fingerprint(1, [5, 4], dataset_seed=1, n0=1000, insert_base=1 << 48))
    all_kw = dict(dataset_seed=1, n0=1000, insert_base=1 << 48, mix=(20, 20, 20, 10, 15, 15),
                  find_split=(34, 33, 33), update_split=(34, 33, 33), delete_split=(34, 33, 33),
                  agg_split=(50, 50), insert_batch=2)
    print("fingerprint all-shapes seed7 W3 [40,40,39] n0=1000 =",
          run_fingerprint(7, [40, 40, 39], **all_kw))
    wk = Worker(7, 0, 3, **all_kw)
    print("all-shapes first 40 ops seed7 w0 =", [wk.next()[2] for _ in range(40)])

    print("xxh3_128(b'flights/v1') =", xxhash.xxh3_128(b"flights/v1").hexdigest())
    print("fingerprint v2 default seed1 W2 [5,4] n0=1000 =",
          run_fingerprint_v2(1, [5, 4], dataset_seed=1, n0=1000, insert_base=1 << 48))
    print("fingerprint v2 all-shapes seed7 W3 [40,40,39] n0=1000 =",
          run_fingerprint_v2(7, [40, 40, 39], **all_kw))
    print("fingerprint v2 all-shapes seed7 W3 [40,40,39] n0=1000 datasetSeed 2 =",
          run_fingerprint_v2(7, [40, 40, 39], **dict(all_kw, dataset_seed=2)))
    wk = Worker(7, 0, 3, **all_kw)
    wk.build_documents = False
    first = {}
    for _ in range(200):
        _, _, var, _, record = wk.next()
        first.setdefault(var, record.hex())
    print("v2 record of each variant's first operation, all-shapes seed7 w0:")
    for var in sorted(first):
        print(f"  {var} {first[var]}")

    total = 0
    for seq in range(100000):
        total += len(bson_doc(seeded(1, seq)[0]))
    print("avgDocBytes over 0..99999 of datasetSeed 1 =", total / 100000, "total", total)


if __name__ == "__main__":
    main()
