#!/usr/bin/env python3
# Issue 29's benchmark (not a test): a fleet of pomeds on etcd behind HAProxy, on loopback.
# bench/fleet.sh builds the release preset and calls it; run it directly only with that
# build in place:
#
#   bench/fleet.py --bin build/release [--runs N] [--creates 300] [--clients 8]
#                  [--etcd-dir /var/tmp] [--tmpfs-too] [--watchers 0,30,97] [--fanout-runs 3]
#                  [--capacity 1000] [--synthetic 10000] [--idle-s 20] [--only a,b]
#                  [--out BENCHMARKS.md] [--notes FILE] [--json FILE]
#   (--notes: the raw numbers, in short; build/bench/fleet-notes.md by default)
#
# One etcd (a single member, its data directory on --etcd-dir: /var/tmp is this host's disk,
# and etcd fsyncs its WAL on every write, so that is what a user gets), then, interleaved
# over the runs (the order turns each run), every figure with fresh pomeds (release build,
# pool_size 2, bus none, a state directory of their own) and a fresh HAProxy:
#   local-direct  one pomed, local ledger, the client straight at it       (baseline)
#   local-front   the same pomed behind HAProxy                            (baseline)
#   fleet-1/2/3   1, 2, 3 pomeds with the etcd ledger (fleet:), behind HAProxy
#   fleet-1-tmpfs fleet-1 on a second etcd whose data is on /dev/shm (--tmpfs-too): the fsync
# Each figure: CLIENTS workers share CREATES one-twin (GitHub) creates; every create is
# followed by its discard (DELETE, then DELETE ?confirm_discard=<discard_token>) through the
# same door, so the fleet holds at most CLIENTS slots and the ledger pays a take and a
# release per create, as a CI fleet's steady churn does. Creates per second = CREATES over
# the wall time from the first create to the last discard. Around each figure: pomed's
# pome_ledger_txn_seconds (sum/count, every node) and etcd's own /metrics (requests by gRPC
# method, raft proposals, WAL fsyncs, MVCC puts/deletes/ranges, watch events) before and
# after; and each run, 200 guarded txns straight to etcd's /v3/kv/txn on one kept
# connection (the latency of one etcd transaction, as a libcurl handle that reuses its
# connection sees it).
#
# Then the watch fan-out (--watchers, empty to skip): fleet-1 again with W more watches of
# its prefix held open (as W more nodes hold theirs), --fanout-runs interleaved: etcd's CPU
# and watch messages per create as a fleet grows. Then once (--capacity N, 0 to skip): N one-twin sandboxes opened through the front on 3
# nodes and kept open: etcd's RSS and db size before/after, per slot; the requests each
# node sends etcd per second while idle (lease keep-alives, watch) with 0 and with N slots;
# the MVCC history the creates and discards left (what compaction reclaims); and --synthetic
# more slot keys of the same shape written straight to etcd (db and RSS per slot at scale).
#
# HAProxy: packaging/haproxy/pome.cfg through its node-list generator when it is in the
# tree and works; otherwise a minimal configuration of this file's own (said in the
# output): creates roundrobin over the nodes with a /healthz check, every path naming a
# node's sandbox (ses_<node>_…) to that node.
import argparse, base64, datetime, hashlib, http.client, json, os, platform, re, secrets
import shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__ in the tree
import ab  # noqa: E402  (find, pct)
import harness  # noqa: E402  (write_block, fmt, plain_shell, meminfo)

ERRORS = []  # (figure, what)
# every pomed's and HAProxy's directory lives under one of ours, /var/tmp/fleetbench.*: a run
# whose were /tmp/pome-fleet.* (the name tests/system/fleet-lib.sh uses too) lost them
# mid-run to something outside this bench, and every create was answered 507
WORK = [None]
FRONT_KIND = ["packaged"]  # or "own", when packaging/haproxy/ could not be used
NOTES = []  # things met that are not errors (a part skipped, and why)
FIGS = ("local-direct", "local-front", "fleet-1", "fleet-2", "fleet-3", "fleet-1-tmpfs")
KEY = "pome_fleetbench_" + secrets.token_hex(16)
KEY_SHA = hashlib.sha256(KEY.encode()).hexdigest()
QUOTA = 100000


def err(fig, what):
    ERRORS.append((fig, what))
    print(f"fleet: {fig}: ERROR {what}", file=sys.stderr)


def note(what):
    if what not in NOTES:
        NOTES.append(what)


def say(*a):
    print("fleet:", *a, file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def b64(s):
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def unb64(s):
    return base64.b64decode(s).decode(errors="replace")


def prefix_end(p):
    b = bytearray(p.encode())
    b[-1] += 1
    return b64(bytes(b))


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def parse_prom(text):
    """Prometheus text → {'name{labels}': value} (labels as written)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^(\S+?(?:\{.*\})?)\s+(\S+)(?:\s+\d+)?$", line)
        if m:
            try:
                out[m.group(1)] = float(m.group(2))
            except ValueError:
                pass
    return out


def psum(d, name, **labels):
    """Sum of metric name over the series whose labels include labels."""
    t = 0.0
    for k, v in d.items():
        n, _, rest = k.partition("{")
        if n != name:
            continue
        if all(f'{lk}="{lv}"' in rest for lk, lv in labels.items()):
            t += v
    return t


# ---------------------------------------------------------------- etcd

class Etcd:
    def __init__(self, parent):
        self.dir = tempfile.mkdtemp(prefix="fleetbench-etcd.", dir=parent)
        self.port, peer = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(self.dir + ".log", "w")
        self.proc = subprocess.Popen(
            ["etcd", "--name", "bench", "--data-dir", os.path.join(self.dir, "data"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-cluster", f"bench=http://127.0.0.1:{peer}"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.c = None
        for _ in range(200):
            try:
                st, body = self.get("/health")
                if st == 200 and b"true" in body:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None:
                sys.exit(f"fleet: etcd exited: see {self.log.name}")
            time.sleep(0.05)
        else:
            sys.exit(f"fleet: etcd did not become healthy: see {self.log.name}")
        fs, _, dev = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "--target",
                                     self.dir], capture_output=True,
                                    text=True).stdout.strip().split("\n")[0].partition(" ")
        self.fs = fs
        self.where = f"{parent} ({fs}{' on ' + dev.strip() if dev.strip() else ''})"

    def _conn(self):
        if self.c is None:
            self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        return self.c

    def get(self, path):
        c = self._conn()
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read()
        except (OSError, http.client.HTTPException):
            self.c = None
            raise

    def post(self, path, body):
        c = self._conn()
        try:
            c.request("POST", path, body=json.dumps(body),
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            self.c = None
            raise
        if r.status != 200:
            raise RuntimeError(f"etcd {path}: {r.status} {data[:200]!r}")
        return json.loads(data)

    def put(self, key, value, lease=None):
        b = {"key": b64(key), "value": b64(value)}
        if lease:
            b["lease"] = str(lease)
        return self.post("/v3/kv/put", b)

    def count(self, prefix):
        j = self.post("/v3/kv/range", {"key": b64(prefix), "range_end": prefix_end(prefix),
                                       "count_only": True})
        return int(j.get("count", 0))

    def range(self, prefix, limit=0):
        j = self.post("/v3/kv/range", {"key": b64(prefix), "range_end": prefix_end(prefix),
                                       "limit": limit})
        return j.get("kvs", [])

    def metrics(self):
        st, body = self.get("/metrics")
        return parse_prom(body.decode())

    def revision(self):
        j = self.post("/v3/kv/range", {"key": b64("/"), "count_only": True})
        return int(j["header"]["revision"])

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


def direct_txns(etcd, prefix, n=200):
    """n guarded transactions straight to /v3/kv/txn, one kept connection, each the shape of
    an admission (compare the team's counter key's value against the quota, then write the
    counter and a slot key bound to a lease); ms per txn. Leaves nothing behind."""
    lease = etcd.post("/v3/lease/grant", {"TTL": "10"})["ID"]
    team = f"{prefix}/bench-direct"
    lat = []
    cpu0 = ab.cpu_ticks(etcd.proc.pid)
    for i in range(n):
        body = {"compare": [{"key": b64(team + "/count"), "target": "VALUE", "result": "LESS",
                             "value": b64(f"{QUOTA:012d}")}],
                "success": [{"requestPut": {"key": b64(team + "/count"),
                                            "value": b64(f"{i + 1:012d}")}},
                            {"requestPut": {"key": b64(f"{team}/slots/ses_{i:06d}"),
                                            "value": b64('{"node":"n1"}'), "lease": lease}}]}
        t0 = time.perf_counter()
        etcd.post("/v3/kv/txn", body)
        lat.append((time.perf_counter() - t0) * 1000)
    cpu_ms = (ab.cpu_ticks(etcd.proc.pid) - cpu0) / os.sysconf("SC_CLK_TCK") * 1000 / n
    etcd.post("/v3/lease/revoke", {"ID": lease})
    etcd.post("/v3/kv/deleterange", {"key": b64(team), "range_end": prefix_end(team)})
    return lat, cpu_ms


# ---------------------------------------------------------------- pomed and the front

class Node:
    """One pomed, fixed control port (the front must know it before the start)."""

    def __init__(self, bindir, name=None, etcd=None, prefix=None):
        self.tmp = tempfile.mkdtemp(prefix="node.", dir=WORK[0])
        os.chmod(self.tmp, 0o755)
        self.name, self.port, self.gport = name, free_port(), free_port()
        conf = os.path.join(self.tmp, "pomed.conf")
        with open(conf, "w") as f:
            f.write(f"control_listen: 127.0.0.1:{self.port}\n"
                    f"gateway_listen: 127.0.0.1:{self.gport}\n"
                    f"state_dir: {self.tmp}/state\nbus: none\n"
                    f"pod_exec: {ab.find(bindir, 'pome-pod')}\n"
                    f"images_dir: {SRC}/sandbox-images\npolicies_dir: {SRC}/policies\n"
                    f"limits:\n  max_tape: 4G\n"
                    f"teams:\n  - id: local\n    sessions_quota: {QUOTA}\n"
                    f"    api_keys_sha256: [{KEY_SHA}]\n")
            if etcd:
                f.write(f"fleet:\n  node: {name}\n"
                        f"  advertise_url: http://127.0.0.1:{self.port}\n"
                        f"  lease_ttl: 10s\n  timeout: 2s\n"
                        f"  etcd:\n    endpoints: [{etcd.url}]\n    prefix: {prefix}\n")
        self.log = open(os.path.join(self.tmp, "pomed.log"), "w")
        self.proc = subprocess.Popen([ab.find(bindir, "pomed"), "--config", conf],
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=harness.plain_shell)
        self.pid = self.proc.pid

    def wait(self):
        """None when up, else pomed's last log lines."""
        info = os.path.join(self.tmp, "state", "pomed.json")
        for _ in range(400):
            if os.path.exists(info):
                return None
            if self.proc.poll() is not None:
                break
            time.sleep(0.025)
        self.log.flush()
        tail = open(self.log.name).read().strip().splitlines()[-3:]
        return " / ".join(tail) or f"exit {self.proc.poll()}"

    def metrics(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("GET", "/metrics", headers={"Authorization": "Bearer " + KEY})
        r = c.getresponse()
        body = r.read().decode()
        c.close()
        return parse_prom(body) if r.status == 200 else {}

    def stop(self, keep_log=False):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if keep_log:
            return open(self.log.name).read()
        shutil.rmtree(self.tmp, ignore_errors=True)


def packaged_front_cfg(nodes, port, tmp):
    """packaging/haproxy/pome.cfg with the node list its own generator writes (every node by
    its fleet.node name; the local ledger's pomed as n1, whose ids name no node, so all its
    requests go to the pool), its two `bind` lines moved to this run's ports on 127.0.0.1,
    and a `global` section of ours (the admin socket this bench reads the servers' state
    from; Debian's haproxy.cfg brings one in a real install). (text, None) or (None, why)."""
    gen = os.path.join(SRC, "packaging/haproxy/pome-haproxy-nodes")
    cfg = os.path.join(SRC, "packaging/haproxy/pome.cfg")
    tracked = subprocess.run(["git", "-C", SRC, "ls-files", "--error-unmatch", cfg, gen],
                             capture_output=True).returncode == 0
    if not tracked:
        return None, "packaging/haproxy/ (pome.cfg and pome-haproxy-nodes) is not committed yet"
    out = subprocess.run([gen, cfg] + [f"{n.name or f'n{i + 1}'}=127.0.0.1:{n.port}:{n.gport}"
                                       for i, n in enumerate(nodes)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, f"pome-haproxy-nodes failed: {out.stderr.strip()[-200:]}"
    text, k1 = re.subn(r"(?m)^(\s*bind) :7070\b", rf"\1 127.0.0.1:{port}", out.stdout)
    text, k2 = re.subn(r"(?m)^(\s*bind) :7071\b", rf"\1 127.0.0.1:{free_port()}", text)
    if k1 != 1 or k2 != 1:
        return None, "packaging/haproxy/pome.cfg's bind lines are not `bind :7070` / `:7071`"
    glob = f"global\n        stats socket {tmp}/admin.sock mode 600 level admin\n\n"
    return glob + text, None


def own_front_cfg(nodes, port, tmp):
    """A minimal front of this bench's own: creates (and anything else without a node's
    sandbox id in its path) roundrobin over the nodes that pass GET /healthz; a path that
    names ses_<node>_… to that node."""
    L = ["global",
         f"  stats socket {tmp}/admin.sock mode 600 level admin",
         "  maxconn 4096",
         "defaults",
         "  mode http",
         "  timeout connect 2s",
         "  timeout client 60s",
         "  timeout server 60s",
         "frontend control",
         f"  bind 127.0.0.1:{port}"]
    for n in nodes:
        if n.name:
            L.append(f"  use_backend node_{n.name} if {{ path_beg /v1/sandboxes/ses_{n.name}_ }}")
    L += ["  default_backend creates",
          "backend creates",
          "  balance roundrobin",
          "  option httpchk GET /healthz",
          "  http-check expect status 200"]
    for i, n in enumerate(nodes):
        L.append(f"  server {n.name or f'local{i}'} 127.0.0.1:{n.port} check inter 1s")
    for n in nodes:
        if n.name:
            L += [f"backend node_{n.name}", f"  server {n.name} 127.0.0.1:{n.port}"]
    return "\n".join(L) + "\n"


class Front:
    def __init__(self, nodes):
        self.tmp = tempfile.mkdtemp(prefix="front.", dir=WORK[0])
        self.port = free_port()
        text, why = packaged_front_cfg(nodes, self.port, self.tmp)
        self.kind, self.why = "packaging/haproxy/pome.cfg", None
        if text is None:
            text, self.kind, self.why = own_front_cfg(nodes, self.port, self.tmp), "own", why
            FRONT_KIND[0] = "own"
        self.cfg = os.path.join(self.tmp, "haproxy.cfg")
        open(self.cfg, "w").write(text)
        self.log = open(os.path.join(self.tmp, "haproxy.log"), "w")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", self.cfg], stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.addr = f"127.0.0.1:{self.port}"
        # up when every server of the creates backend passed its check
        for _ in range(100):
            if self.proc.poll() is not None:
                sys.exit(f"fleet: haproxy exited: see {self.log.name}")
            st = self.admin("show stat")
            rows = [r.split(",") for r in st.splitlines()
                    if r.startswith(("creates,", "pome_control_pool,"))]
            srv = [r for r in rows if r[1] not in ("FRONTEND", "BACKEND")
                   and not r[1].endswith("_last")]
            if srv and all(r[17].startswith("UP") for r in srv):
                break
            time.sleep(0.1)
        else:
            err("front", f"HAProxy's servers not all UP after 10 s: {st[:300]}")

    def admin(self, cmd):
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(os.path.join(self.tmp, "admin.sock"))
            s.sendall((cmd + "\n").encode())
            out = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                out += b
            return out.decode()
        except OSError:
            return ""
        finally:
            s.close()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---------------------------------------------------------------- the client

class Client:
    def __init__(self, addr):
        self.addr = addr
        self.c = http.client.HTTPConnection(addr, timeout=60)

    def req(self, method, path, body=None):
        h = {"Authorization": "Bearer " + KEY}
        if body is not None:
            h["Content-Type"] = "application/json"
            body = json.dumps(body)
        for attempt in (0, 1):
            try:
                self.c.request(method, path, body=body, headers=h)
                r = self.c.getresponse()
                data = r.read()
                try:
                    return r.status, json.loads(data) if data else {}
                except ValueError:
                    return r.status, {"raw": data[:200].decode(errors="replace")}
            except (ConnectionError, http.client.HTTPException):
                self.c.close()
                self.c = http.client.HTTPConnection(self.addr, timeout=60)
                if attempt:
                    raise

    def create(self):
        t0 = time.perf_counter()
        st, j = self.req("POST", "/v1/sandboxes", {"twins": ["github"],
                                                   "idle_timeout_seconds": 0})
        return st, (time.perf_counter() - t0) * 1000, j

    def discard(self, sid):
        st, j = self.req("DELETE", f"/v1/sandboxes/{sid}")
        if st == 409:
            tok = (j.get("error") or {}).get("details", {}).get("discard_token")
            st, j = self.req("DELETE", f"/v1/sandboxes/{sid}?confirm_discard={tok}")
        return st, j


def churn(addr, n, clients, fig, keep=False):
    """n creates shared by `clients` workers, each create followed by its discard (unless
    keep: then the ids are returned open). Returns (seconds, create ms list, ids kept)."""
    left, failed = [n], [0]
    lock = threading.Lock()
    lat, kept = [], []

    def work():
        c = Client(addr)
        while True:
            with lock:
                if left[0] <= 0 or failed[0] >= 20:
                    return
                left[0] -= 1
            st, ms, j = c.create()
            if st != 201:
                with lock:
                    failed[0] += 1
                    if failed[0] == 20:
                        err(fig, "20 creates failed: the rest of this figure not sent")
                err(fig, f"create → {st} {json.dumps(j)[:200]}")
                continue
            sid = j["session_id"]
            with lock:
                lat.append(ms)
            if keep:
                with lock:
                    kept.append(sid)
                continue
            st, j = c.discard(sid)
            if st != 204:
                err(fig, f"discard {sid} → {st} {json.dumps(j)[:200]}")

    t0 = time.perf_counter()
    ts = [threading.Thread(target=work) for _ in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, lat, kept


def discard_all(addr, ids, clients, fig):
    q = list(ids)
    lock = threading.Lock()

    def work():
        c = Client(addr)
        while True:
            with lock:
                if not q:
                    return
                sid = q.pop()
            st, j = c.discard(sid)
            if st != 204:
                err(fig, f"discard {sid} → {st} {json.dumps(j)[:200]}")
    ts = [threading.Thread(target=work) for _ in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


# ---------------------------------------------------------------- one figure

ETCD_REQS = ("Range", "Txn", "Put", "DeleteRange", "LeaseGrant", "LeaseRevoke", "Compact")


def etcd_snapshot(etcd):
    m = etcd.metrics()
    s = {f"unary.{k}": psum(m, "grpc_server_handled_total", grpc_method=k) for k in ETCD_REQS}
    for k, svc in (("LeaseKeepAlive", "etcdserverpb.Lease"), ("Watch", "etcdserverpb.Watch")):
        s[f"recv.{k}"] = psum(m, "grpc_server_msg_received_total", grpc_method=k,
                              grpc_service=svc)
        s[f"sent.{k}"] = psum(m, "grpc_server_msg_sent_total", grpc_method=k, grpc_service=svc)
    s["proposals"] = psum(m, "etcd_server_proposals_committed_total")
    s["fsyncs"] = psum(m, "etcd_disk_wal_fsync_duration_seconds_count")
    s["fsync_s"] = psum(m, "etcd_disk_wal_fsync_duration_seconds_sum")
    s["puts"] = psum(m, "etcd_debugging_mvcc_put_total")
    s["deletes"] = psum(m, "etcd_debugging_mvcc_delete_total")
    s["ranges"] = psum(m, "etcd_debugging_mvcc_range_total")
    s["events"] = psum(m, "etcd_debugging_mvcc_events_total")
    s["db_in_use"] = psum(m, "etcd_mvcc_db_total_size_in_use_in_bytes")
    s["db"] = psum(m, "etcd_mvcc_db_total_size_in_bytes")
    s["keys"] = psum(m, "etcd_debugging_mvcc_keys_total")
    s["rss"] = psum(m, "process_resident_memory_bytes")
    s["t"] = time.perf_counter()
    return s


def delta(a, b):
    return {k: b[k] - a[k] for k in a}


def node_ledger(nodes):
    s = c = r = 0.0
    for n in nodes:
        m = n.metrics()
        s += psum(m, "pome_ledger_txn_seconds_sum")
        c += psum(m, "pome_ledger_txn_seconds_count")
        r += psum(m, "pome_ledger_txn_retries_total")
    return s, c, r


def node_quantiles(nodes):
    """pome_ledger_txn_seconds' p50 and p99 (its last 1024 admissions) of every node, ms."""
    out = []
    for n in nodes:
        m = n.metrics()
        out.append((psum(m, "pome_ledger_txn_seconds", quantile="0.5") * 1000,
                    psum(m, "pome_ledger_txn_seconds", quantile="0.99") * 1000))
    return out


def run_figure(a, fig, etcd, run, watchers=0):
    """One run of one figure (with `watchers` more watches of its prefix, as that many more
    nodes would hold). Returns its numbers, or None when it could not run."""
    fleet = fig.startswith("fleet-")
    k = int(fig.split("-")[1]) if fleet else 1
    prefix = f"/pome-bench-r{run}-{fig}"
    if fleet:
        etcd.put(f"{prefix}/teams/local",
                 json.dumps({"sessions_quota": QUOTA, "api_keys_sha256": [KEY_SHA]}))
    nodes = [Node(a.bin, f"n{i + 1}" if fleet else None, etcd if fleet else None, prefix)
             for i in range(k)]
    front = wt = None
    try:
        for n in nodes:
            why = n.wait()
            if why:
                if fleet and ("not built in" in why or "EOPNOTSUPP" in why):
                    note("fleet figures not run: this build's pomed says \"the etcd ledger is "
                         "not built in\"")
                    return None
                err(fig, f"pomed did not start: {why[-300:]}")
                return None
        if fig != "local-direct":
            front = Front(nodes)
            addr = front.addr
            if front.kind == "own":
                note(f"the front is this bench's own minimal HAProxy configuration "
                             f"(bench/fleet.py own_front_cfg), because {front.why}")
        else:
            addr = f"127.0.0.1:{nodes[0].port}"
        if watchers:
            wt = Watchers(etcd, prefix, watchers)
        churn(addr, a.warmup, a.clients, fig)  # pools, connections, the etcd client's
        time.sleep(0.3)
        e0 = etcd_snapshot(etcd) if fleet else None
        l0 = node_ledger(nodes) if fleet else None
        who = {"pomed": [n.pid for n in nodes], "etcd": [etcd.proc.pid],
               "haproxy": [front.proc.pid] if front else []}
        cpu0 = {k: sum(ab.cpu_ticks(x) for x in v) for k, v in who.items()}
        me0 = os.times()
        (wall, lat, _), busy = harness.host_busy(lambda: churn(addr, a.creates, a.clients, fig))
        me1 = os.times()
        cpu1 = {k: sum(ab.cpu_ticks(x) for x in v) for k, v in who.items()}
        n = max(1, len(lat))
        hz = os.sysconf("SC_CLK_TCK")
        out = {"per_s": len(lat) / wall, "create_p50": statistics.median(lat) if lat else None,
               "create_p99": ab.pct(lat, 0.99) if lat else None, "n": len(lat),
               "host_busy": busy,
               "cpu_ms": {k: (cpu1[k] - cpu0[k]) / hz * 1000 / n for k in who}}
        out["cpu_ms"]["client"] = (me1.user + me1.system - me0.user - me0.system) * 1000 / n
        # what the host's two cores spent per create, all of it (pods and kernel included)
        out["cpu_ms"]["host"] = busy * os.cpu_count() * wall * 1000 / n
        out["pomed_cpu_ms_per_create"] = out["cpu_ms"]["pomed"]
        if fleet:
            time.sleep(0.5)  # releases run on the ledger's thread
            e1 = etcd_snapshot(etcd)
            l1 = node_ledger(nodes)
            d = delta(e0, e1)
            out["etcd_per_create"] = {k2: v / n for k2, v in d.items()
                                      if k2 not in ("t", "db", "keys", "rss")}
            out["etcd_window_s"] = d["t"]
            ls, lc, lr = (y - x for x, y in zip(l0, l1))
            out["ledger_txn_ms"] = ls / lc * 1000 if lc else None
            out["ledger_txns_per_create"] = lc / n
            out["ledger_retries_per_create"] = lr / n
            q = node_quantiles(nodes)  # warm-up included: 16 of every node's ~216
            out["ledger_p50_ms"] = statistics.median(x for x, _ in q)
            out["ledger_p99_ms"] = max(y for _, y in q)
            if not lc:
                note(f"{fig}: pomed's /metrics has no pome_ledger_txn_seconds")
            left = etcd.count(f"{prefix}/slots/")
            if left:
                time.sleep(2)
                left = etcd.count(f"{prefix}/slots/")
                if left:
                    err(fig, f"{left} slot keys left in etcd after every sandbox was discarded")
        return out
    finally:
        if wt:
            wt.close()
        if front:
            front.stop()
        for n in nodes:
            n.stop()
        if fleet:
            try:
                # the team and guard keys stay; the slots and the node keys go with the leases
                left = etcd.count(f"{prefix}/slots/") + etcd.count(f"{prefix}/nodes/")
                if left:
                    err(fig, f"{left} slot or node keys under {prefix}/ after every pomed "
                        f"stopped (SIGTERM: its lease should be revoked)")
                etcd.post("/v3/kv/deleterange", {"key": b64(prefix + "/"),
                                                 "range_end": prefix_end(prefix + "/")})
            except Exception as e:  # noqa: BLE001
                err(fig, f"etcd after the figure: {e}")


# ---------------------------------------------------------------- capacity

def idle_rates(etcd, nodes, seconds):
    a = etcd_snapshot(etcd)
    time.sleep(seconds)
    b = etcd_snapshot(etcd)
    d = delta(a, b)
    per = lambda v: v / d["t"] / max(1, len(nodes))  # noqa: E731
    reqs = sum(d[f"unary.{k}"] for k in ETCD_REQS) + d["recv.LeaseKeepAlive"] + d["recv.Watch"]
    return {"keepalive": per(d["recv.LeaseKeepAlive"]), "watch_sent": per(d["sent.Watch"]),
            "watch_recv": per(d["recv.Watch"]), "requests": per(reqs),
            "unary": {k: per(d[f"unary.{k}"]) for k in ETCD_REQS if d[f"unary.{k}"]},
            "proposals": per(d["proposals"]), "fsyncs": per(d["fsyncs"]), "seconds": d["t"]}


class Watchers:
    """n watches of prefix/ held open on etcd's HTTP gateway, as n more fleet nodes would
    hold theirs (ledger-etcd.c watches P/ whole); what they are sent is read and dropped."""

    def __init__(self, etcd, prefix, n):
        body = json.dumps({"create_request": {"key": b64(prefix + "/"),
                                              "range_end": prefix_end(prefix + "/")}})
        req = (f"POST /v3/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
               f"\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode()
        self.socks, self.bytes, self.stop = [], [0], False
        for _ in range(n):
            c = socket.create_connection(("127.0.0.1", etcd.port))
            c.sendall(req)
            self.socks.append(c)
        self.threads = [threading.Thread(target=self.drain, args=(c,), daemon=True)
                        for c in self.socks]
        for t in self.threads:
            t.start()
        time.sleep(0.5)

    def drain(self, c):
        while not self.stop:
            try:
                b = c.recv(65536)
            except OSError:
                return
            if not b:
                return
            self.bytes[0] += len(b)

    def close(self):
        self.stop = True
        for c in self.socks:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


def fanout(a, etcd):
    """fleet-1 with W more watches of its prefix (W in --watchers), interleaved over
    --fanout-runs: what each watcher costs etcd per create."""
    ws = [int(x) for x in a.watchers.split(",") if x != ""]
    res = {w: [] for w in ws}
    for r in range(a.fanout_runs):
        for w in (ws if r % 2 == 0 else ws[::-1]):
            fig = f"fan-out {w}"
            say(f"fan-out run {r + 1}/{a.fanout_runs}: fleet-1 and {w} more watchers")
            out = run_figure(a, "fleet-1", etcd, f"{r}-fan{w}", watchers=w)
            if out:
                res[w].append(out)
                say(f"  {out['per_s']:.1f} creates/s, etcd CPU "
                    f"{out['cpu_ms']['etcd']:.2f} ms a create")
            else:
                err(fig, "did not run")
    return res


def capacity(a, etcd):
    fig = "capacity"
    prefix = "/pome-bench-capacity"
    etcd.put(f"{prefix}/teams/local",
             json.dumps({"sessions_quota": QUOTA, "api_keys_sha256": [KEY_SHA]}))
    nodes = [Node(a.bin, f"n{i + 1}", etcd, prefix) for i in range(3)]
    front = None
    res = {}
    try:
        for n in nodes:
            why = n.wait()
            if why:
                if "not built in" in why:
                    note("capacity: not run (the etcd ledger is not built in)")
                else:
                    err(fig, f"pomed did not start: {why[-300:]}")
                return None
        front = Front(nodes)
        say(f"capacity: idle, 3 nodes, no slot ({a.idle_s:.0f} s)")
        res["idle_empty"] = idle_rates(etcd, nodes, a.idle_s)
        s0 = etcd_snapshot(etcd)
        rev0 = etcd.revision()
        say(f"capacity: {a.capacity} sandboxes opened through the front and kept")
        wall, lat, kept = churn(front.addr, a.capacity, a.clients, fig, keep=True)
        res["opened"], res["open_seconds"] = len(kept), wall
        time.sleep(3)
        s1 = etcd_snapshot(etcd)
        res["slots_in_etcd"] = etcd.count(f"{prefix}/slots/")
        sample = etcd.range(f"{prefix}/slots/", limit=1)
        if sample:
            kv = sample[0]
            res["slot_key"] = unb64(kv["key"])
            res["slot_value"] = unb64(kv.get("value", ""))
            res["slot_lease"] = kv.get("lease")
        res["keys_all"] = [unb64(kv["key"]) for kv in etcd.range(f"{prefix}/", 0)
                           if "/slots/" not in unb64(kv["key"])]
        res["before"], res["after_open"] = s0, s1
        n = max(1, len(kept))
        res["db_in_use_per_slot"] = (s1["db_in_use"] - s0["db_in_use"]) / n
        res["db_per_slot"] = (s1["db"] - s0["db"]) / n
        res["rss_per_slot"] = (s1["rss"] - s0["rss"]) / n
        res["etcd_per_open"] = {k: v / n for k, v in delta(s0, s1).items()
                                if k not in ("t", "db", "keys", "rss", "db_in_use")}
        say(f"capacity: idle, 3 nodes, {len(kept)} slots ({a.idle_s:.0f} s)")
        res["idle_full"] = idle_rates(etcd, nodes, a.idle_s)
        say("capacity: discarding them")
        discard_all(front.addr, kept, a.clients, fig)
        time.sleep(1)
        s2 = etcd_snapshot(etcd)
        rev1 = etcd.revision()
        res["after_discard"] = s2
        res["revisions"] = rev1 - rev0
        res["slots_left"] = etcd.count(f"{prefix}/slots/")
        if res["slots_left"]:
            err(fig, f"{res['slots_left']} slot keys left after every discard")
        # what the history costs: compact to now and defragment
        etcd.post("/v3/kv/compaction", {"revision": str(rev1), "physical": True})
        etcd.post("/v3/maintenance/defragment", {})
        res["after_compact"] = etcd_snapshot(etcd)
        # bigger than one host's pods can hold: the same keys written straight to etcd
        if a.synthetic and "slot_key" in res:
            say(f"capacity: {a.synthetic} more slot keys of the same shape, written straight "
                f"to etcd")
            lease = etcd.post("/v3/lease/grant", {"TTL": "600"})["ID"]
            s3 = etcd_snapshot(etcd)
            base = res["slot_key"].rsplit("/", 1)[0]
            for i in range(a.synthetic):
                etcd.put(f"{base}/ses_n9_{secrets.token_hex(8)}", res["slot_value"], lease)
            time.sleep(1)
            s4 = etcd_snapshot(etcd)
            res["synthetic"] = {"n": a.synthetic, "db_in_use_per_slot":
                                (s4["db_in_use"] - s3["db_in_use"]) / a.synthetic,
                                "rss_per_slot": (s4["rss"] - s3["rss"]) / a.synthetic,
                                "rss_after": s4["rss"], "db_after": s4["db"]}
            etcd.post("/v3/lease/revoke", {"ID": lease})
        return res
    finally:
        if front:
            front.stop()
        for n in nodes:
            n.stop()
        try:
            etcd.post("/v3/kv/deleterange", {"key": b64(prefix + "/"),
                                             "range_end": prefix_end(prefix + "/")})
        except Exception:  # noqa: BLE001
            pass


# ---------------------------------------------------------------- main and the report

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(SRC, "build/release"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--creates", type=int, default=300)
    p.add_argument("--warmup", type=int, default=16)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--etcd-dir", default="/var/tmp")
    p.add_argument("--capacity", type=int, default=1000)
    p.add_argument("--synthetic", type=int, default=10000)
    p.add_argument("--idle-s", type=float, default=20)
    p.add_argument("--only", default=",".join(FIGS[:5]))
    p.add_argument("--watchers", default="0,30,97",
                   help="fan-out: fleet-1 again with each number of more watches of its "
                   "prefix (97: a fleet of 100 nodes' watches); empty to skip")
    p.add_argument("--fanout-runs", type=int, default=3)
    p.add_argument("--tmpfs-too", action="store_true",
                   help="also fleet-1 on a second etcd whose data directory is on /dev/shm "
                   "(no fsync cost), interleaved with the rest, and its direct txns")
    p.add_argument("--out", default=os.path.join(SRC, "BENCHMARKS.md"))
    p.add_argument("--notes", default=os.path.join(SRC, "build/bench/fleet-notes.md"))
    p.add_argument("--json")
    a = p.parse_args()
    figs = [f for f in FIGS if f in a.only.split(",") or (a.tmpfs_too and f == "fleet-1-tmpfs")]
    WORK[0] = tempfile.mkdtemp(prefix="fleetbench.", dir="/var/tmp")
    os.chmod(WORK[0], 0o755)
    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = open("/proc/loadavg").read().split()[:3]
    etcd = Etcd(a.etcd_dir)
    say(f"etcd {etcd.url}, data directory on {etcd.where}")
    shm = Etcd("/dev/shm") if "fleet-1-tmpfs" in figs else None
    if shm:
        say(f"second etcd {shm.url}, data directory on {shm.where}")
    res = {f: [] for f in figs}
    txn, txn_cpu, txn_shm, txn_shm_cpu = [], [], [], []
    try:
        for r in range(a.runs):
            order = figs[r % len(figs):] + figs[:r % len(figs)] if figs else []
            for fig in order:
                say(f"run {r + 1}/{a.runs}: {fig}")
                out = run_figure(a, fig, shm if fig.endswith("-tmpfs") else etcd, r)
                if out:
                    out["run"] = r
                    res[fig].append(out)
                    say(f"  {out['per_s']:.1f} creates/s, create p50 {out['create_p50']:.2f} ms"
                        + (f", ledger txn {out['ledger_txn_ms']:.3f} ms"
                           if out.get("ledger_txn_ms") else ""))
            lat, cpu_ms = direct_txns(etcd, f"/pome-bench-direct-r{r}")
            txn.append(lat)
            txn_cpu.append(cpu_ms)
            say(f"  direct etcd txn p50 {statistics.median(lat):.3f} ms")
            if shm:
                lat, cpu_ms = direct_txns(shm, f"/pome-bench-direct-r{r}")
                txn_shm.append(lat)
                txn_shm_cpu.append(cpu_ms)
                say(f"  direct etcd txn, tmpfs, p50 {statistics.median(lat):.3f} ms")
        fan = fanout(a, etcd) if a.watchers else None
        cap = capacity(a, etcd) if a.capacity else None
        etcd_version = subprocess.run(["etcd", "--version"], capture_output=True,
                                      text=True).stdout.split("\n")[0]
    finally:
        etcd.stop()
        if shm:
            shm.stop()
        shutil.rmtree(WORK[0], ignore_errors=True)
    finished = datetime.datetime.now(datetime.timezone.utc)
    load1 = open("/proc/loadavg").read().split()[:3]
    report = {"started": started.isoformat(), "finished": finished.isoformat(),
              "load": [load0, load1], "etcd_dir": etcd.where, "etcd_fs": etcd.fs,
              "figures": res, "direct_txn_ms": txn, "direct_txn_etcd_cpu_ms": txn_cpu,
              "direct_txn_tmpfs_ms": txn_shm, "direct_txn_tmpfs_etcd_cpu_ms": txn_shm_cpu,
              "tmpfs_dir": shm.where if shm else None, "fanout": fan, "capacity": cap, "errors": ERRORS,
              "notes": NOTES, "etcd_version": etcd_version, "front": FRONT_KIND[0],
              "haproxy_version": subprocess.run(["haproxy", "-v"], capture_output=True,
                                                text=True).stdout.split("\n")[0]}
    if a.json:
        json.dump(report, open(a.json, "w"), indent=1, default=str)
    write_md(a, report, figs)
    write_notes(a, report)
    for f, what in ERRORS:
        print(f"fleet: error: {f}: {what}", file=sys.stderr)
    for n in NOTES:
        print(f"fleet: note: {n}", file=sys.stderr)
    sys.exit(1 if ERRORS else 0)


def summary(report):
    """The medians the table and the notes share."""
    S = {}
    for fig, runs in report["figures"].items():
        if not runs:
            continue
        s = {"runs": len(runs), "per_s": med([r["per_s"] for r in runs]),
             "per_s_min": min(r["per_s"] for r in runs),
             "per_s_max": max(r["per_s"] for r in runs),
             "create_p50": med([r["create_p50"] for r in runs]),
             "create_p99": med([r["create_p99"] for r in runs]),
             "cpu": med([r["pomed_cpu_ms_per_create"] for r in runs]),
             "busy": med([r["host_busy"] for r in runs]),
             "cpu_ms": {k: med([r["cpu_ms"][k] for r in runs]) for k in runs[0]["cpu_ms"]}}
        for b in ("local-direct", "local-front"):
            by_run = {x["run"]: x["per_s"] for x in report["figures"].get(b, [])}
            s[f"ratio.{b}"] = med([r["per_s"] / by_run[r["run"]] for r in runs
                                   if by_run.get(r["run"])])
        if "etcd_per_create" in runs[0]:
            s["ledger_txn_ms"] = med([r.get("ledger_txn_ms") for r in runs])
            s["ledger_txns"] = med([r.get("ledger_txns_per_create") for r in runs])
            s["retries"] = med([r.get("ledger_retries_per_create") for r in runs])
            s["ledger_p50"] = med([r.get("ledger_p50_ms") for r in runs])
            s["ledger_p99"] = med([r.get("ledger_p99_ms") for r in runs])
            s["etcd"] = {k: med([r["etcd_per_create"][k] for r in runs])
                         for k in runs[0]["etcd_per_create"]}
        S[fig] = s
    for k, key in (("txn", "direct_txn"), ("txn-tmpfs", "direct_txn_tmpfs")):
        runs = report.get(key + "_ms") or []
        if runs:
            S[k] = {"p50": med([statistics.median(r) for r in runs]),
                    "p99": med([ab.pct(r, 0.99) for r in runs]),
                    "cpu": med(report.get(key + "_etcd_cpu_ms", [])),
                    "n": sum(len(r) for r in runs)}
    return S


def invocation(a):
    """bench/fleet.sh RUNS and the options given beyond what fleet.sh itself passes."""
    skip, out, it = {"--bin", "--runs", "--etcd-dir", "--json"}, [], iter(sys.argv[1:])
    for x in it:
        if x in skip:
            next(it, None)
        elif x.split("=")[0] not in skip:
            out.append(x)
    return " ".join([f"bench/fleet.sh {a.runs}"] + out)


def write_md(a, report, figs):
    F = harness.fmt
    S = summary(report)
    commit = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = [ln[3:] for ln in subprocess.run(
        ["git", "-C", SRC, "status", "--porcelain", "--untracked-files=no", "supervisor", "pods",
         "common"], capture_output=True, text=True).stdout.splitlines()]
    st = datetime.datetime.fromisoformat(report["started"])
    fi = datetime.datetime.fromisoformat(report["finished"])
    L = ["<!-- bench-fleet:begin (written by bench/fleet.sh; edit outside these markers) -->"]
    w = L.append
    w(f"Machine: {platform.node()}, {os.cpu_count()} cores, "
      f"{harness.meminfo('MemTotal') // 1024} MiB, kernel {platform.release()}. Commit "
      f"{commit}{' with uncommitted changes to ' + ', '.join(dirty) if dirty else ''}"
      f", {st:%Y-%m-%d %H:%M}–{fi:%H:%M} UTC, `{invocation(a)}` ({a.runs} runs, the "
      f"figures interleaved, their order turned each run; {a.creates} one-twin creates a "
      f"figure, {a.clients} clients, each create followed by its discard through the same door; "
      f"load average {' '.join(report['load'][0])} before, {' '.join(report['load'][1])} "
      f"after). {report['etcd_version']}, one member, data directory on "
      f"{report['etcd_dir']}"
      + (f" (fleet-1-tmpfs's second etcd: {report['tmpfs_dir']})" if report.get("tmpfs_dir")
         else "")
      + f"; {report['haproxy_version'].split(' - ')[0]}, "
      + ("`packaging/haproxy/pome.cfg` through `pome-haproxy-nodes` (its binds moved to free "
         "ports on 127.0.0.1, a `global` with an admin socket added)"
         if report["front"] == "packaged" else "**this bench's own minimal configuration** "
         "(bench/fleet.py `own_front_cfg`), not the package's")
      + ". Every pomed: release build, `pool_size` 2 (the default), `bus: none`.")
    w("")
    w(f"Errors met: **{len(report['errors'])}**" + ("." if not report["errors"] else ":"))
    for f, what in report["errors"][:20]:
        w(f"- {f}: {what}")
    if len(report["errors"]) > 20:
        w(f"- … and {len(report['errors']) - 20} more")
    for n in report["notes"]:
        w(f"- note: {n}")
    w("")
    w("CPU ms a create: what each process spent over the timed part divided by the creates "
      "(pomed: every node's own process, not its pods; client: this bench's Python workers); "
      "host: the share of both cores not idle over the same time, as ms a create (pods, "
      "kernel and other engineers' work included).")
    w("")
    w("| figure | creates/s (median; min–max) | create ms p50 / p99 | CPU ms a create: pomed / "
      "etcd / HAProxy / client / host (host busy) | ratio to local, direct (median of the "
      "runs' ratios) | ratio to local, through HAProxy |")
    w("| --- | --- | --- | --- | --- | --- |")
    base = S.get("local-direct", {}).get("per_s")
    base2 = S.get("local-front", {}).get("per_s")
    label = {"local-direct": "1 pomed, local ledger, direct (baseline)",
             "local-front": "1 pomed, local ledger, through HAProxy (baseline)",
             "fleet-1": "fleet, 1 node (etcd ledger), through HAProxy",
             "fleet-2": "fleet, 2 nodes, through HAProxy",
             "fleet-3": "fleet, 3 nodes, through HAProxy",
             "fleet-1-tmpfs": "fleet, 1 node, its etcd's data on tmpfs (no fsync: for "
                              "comparison only)"}
    for fig in figs:
        s = S.get(fig)
        if not s:
            w(f"| {label[fig]} | not run | — | — | — | — |")
            continue
        c = s["cpu_ms"]
        w(f"| {label[fig]} | {F(s['per_s'])} ({F(s['per_s_min'])}–{F(s['per_s_max'])}) | "
          f"{F(s['create_p50'])} / {F(s['create_p99'])} | {F(c['pomed'])} / "
          f"{F(c['etcd']) if fig.startswith('fleet') else '—'} / "
          f"{F(c['haproxy']) if fig != 'local-direct' else '—'} / {F(c['client'])} / "
          f"{F(c['host'])} ({s['busy'] * 100:.0f}%) | "
          f"{F(s['ratio.local-direct']) + '×' if base else '—'} | "
          f"{F(s['ratio.local-front']) + '×' if base2 else '—'} |")
    w("")
    fleets = [f for f in figs if f.startswith("fleet-") and f in S]
    if fleets or "txn" in S:
        w("etcd per create (each create and its discard; medians of the runs; from etcd's own "
          "/metrics and pomed's `pome_ledger_txn_seconds`):")
        w("")
        w("| figure | admission (`ledger_take`) ms: mean, p50 / p99 | commits lost to another "
          "node (retries) | requests to etcd | of them Txn / Range / DeleteRange / Put | "
          "keep-alives | raft proposals | WAL fsyncs | watch messages sent (events) | db bytes "
          "in use (history kept until a compaction) |")
        w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for fig in fleets:
            e = S[fig]["etcd"]
            reqs = sum(e[f"unary.{k}"] for k in ETCD_REQS) + e["recv.LeaseKeepAlive"] + \
                e["recv.Watch"]
            w(f"| {label[fig]} | {F(S[fig].get('ledger_txn_ms'))}, "
              f"{F(S[fig].get('ledger_p50'))} / {F(S[fig].get('ledger_p99'))} | "
              f"{F(S[fig].get('retries'))} | {F(reqs)} | "
              f"{F(e['unary.Txn'])} / {F(e['unary.Range'])} / {F(e['unary.DeleteRange'])} / "
              f"{F(e['unary.Put'])} | {F(e['recv.LeaseKeepAlive'])} | {F(e['proposals'])} | "
              f"{F(e['fsyncs'])} | {F(e['sent.Watch'])} ({F(e['events'])}) | "
              f"{F(e['db_in_use'])} |")
        for k, where in (("txn", ""), ("txn-tmpfs", ", etcd on tmpfs")):
            if k not in S:
                continue
            t = S[k]
            w(f"| one guarded txn straight to etcd{where} (`/v3/kv/txn`, a kept connection, "
              f"{t['n']} over the runs; etcd's CPU {F(t['cpu'])} ms a txn) | p50 {F(t['p50'])} / "
              f"p99 {F(t['p99'])} | — | 1 | 1 / 0 / 0 / 0 | — | 1 | 1 | — | — |")
        w("")
    fan = report.get("fanout")
    if fan:
        w("Watch fan-out (fleet-1 again, with W more watches of its prefix held open on etcd's "
          "HTTP gateway and read by this bench, as W more nodes would hold theirs; "
          f"{a.fanout_runs} runs interleaved, medians):")
        w("")
        w("| more watchers | creates/s | admission ms mean | etcd CPU ms a create | watch "
          "messages (events) sent a create | host busy |")
        w("| --- | --- | --- | --- | --- | --- |")
        for k in sorted(fan, key=int):
            runs = fan[k]
            if not runs:
                w(f"| {k} | not run | — | — | — | — |")
                continue
            w(f"| {k} | {F(med([r['per_s'] for r in runs]))} | "
              f"{F(med([r.get('ledger_txn_ms') for r in runs]))} | "
              f"{F(med([r['cpu_ms']['etcd'] for r in runs]))} | "
              f"{F(med([r['etcd_per_create']['sent.Watch'] for r in runs]))} "
              f"({F(med([r['etcd_per_create']['events'] for r in runs]))}) | "
              f"{med([r['host_busy'] for r in runs]) * 100:.0f}% |")
        w("")
    cap = report.get("capacity")
    if cap:
        ie, i_f = cap["idle_empty"], cap["idle_full"]
        w(f"Capacity (once, 3 nodes, lease_ttl 10 s): {cap['opened']} one-twin sandboxes "
          f"opened through the front and kept ({F(cap['open_seconds'])} s), "
          f"{cap['slots_in_etcd']} slot keys in etcd.")
        w("")
        w("| figure | value |")
        w("| --- | --- |")
        w(f"| etcd db in use, per slot (bytes) | {F(cap['db_in_use_per_slot'])} |")
        w(f"| etcd db file growth, per slot (bytes) | {F(cap['db_per_slot'])} |")
        w(f"| etcd RSS growth, per slot (bytes) | {F(cap['rss_per_slot'])} (RSS "
          f"{F(cap['before']['rss'] / 2**20)} → {F(cap['after_open']['rss'] / 2**20)} MiB) |")
        if cap.get("synthetic"):
            sy = cap["synthetic"]
            w(f"| the same with {sy['n']} more slot keys written straight to etcd: db in use / "
              f"RSS per slot (bytes) | {F(sy['db_in_use_per_slot'])} / {F(sy['rss_per_slot'])} "
              f"|")
        w(f"| requests a node sends etcd per second, idle, no slot (of which keep-alives; "
          f"watch messages sent to it) | {F(ie['requests'])} ({F(ie['keepalive'])}; "
          f"{F(ie['watch_sent'])}) |")
        w(f"| the same with {cap['opened']} slots open | {F(i_f['requests'])} "
          f"({F(i_f['keepalive'])}; {F(i_f['watch_sent'])}) |")
        w(f"| etcd revisions for {cap['opened']} creates and their discards | "
          f"{cap['revisions']} |")
        w(f"| db in use after the discards → after compaction and defragment (MiB) | "
          f"{F(cap['after_discard']['db_in_use'] / 2**20)} → "
          f"{F(cap['after_compact']['db_in_use'] / 2**20)} |")
        w("")
    w("<!-- bench-fleet:end -->")
    harness.write_block(a.out, "bench-fleet", L)


def write_notes(a, report):
    S = summary(report)
    F = harness.fmt
    L = [f"# Fleet bench numbers ({report['started'][:16]} UTC, bench/fleet.sh {a.runs})", "",
         f"etcd: {report['etcd_version']}, 1 member, data dir on {report['etcd_dir']}.", ""]
    for fig, s in S.items():
        if fig.startswith("txn"):
            L.append(f"- direct etcd txn{' (tmpfs)' if fig != 'txn' else ''} (guarded, 2 puts, "
                     f"kept HTTP connection): p50 "
                     f"{F(s['p50'])} ms, p99 {F(s['p99'])} ms ({s['n']} txns); etcd CPU "
                     f"{F(s['cpu'])} ms a txn")
            continue
        line = (f"- {fig}: {F(s['per_s'])} creates/s (with discard), create p50 "
                f"{F(s['create_p50'])} ms p99 {F(s['create_p99'])} ms")
        if "etcd" in s:
            e = s["etcd"]
            line += (f"; ledger_take {F(s.get('ledger_txn_ms'))} ms mean; per create: "
                     + ", ".join(f"{k} {F(v)}" for k, v in e.items() if v))
        L.append(line)
    cap = report.get("capacity")
    if cap:
        L += ["", "Capacity:", "```", json.dumps({k: v for k, v in cap.items()
                                                   if k not in ("before", "after_open",
                                                                "after_discard",
                                                                "after_compact")},
                                                  indent=1, default=str), "```"]
    L += ["", "Errors: " + (f"{len(report['errors'])}" if report["errors"] else "none")]
    L += [f"- {f}: {w}" for f, w in report["errors"][:20]]
    L += [f"- note: {n}" for n in report["notes"]]
    os.makedirs(os.path.dirname(os.path.abspath(a.notes)), exist_ok=True)
    open(a.notes, "w").write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
