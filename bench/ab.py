#!/usr/bin/env python3
# Quick A/B numbers (not the benchmark harness, not a test): starts a pomed from each
# binary directory given, runs the chosen figures against each in turn, interleaved
# (A, B, A, B…), and prints the median of every figure per build.
#
#   bench/ab.py [--runs N] [--figures create,cold,churn,get,latency,fds,events] \
#               NAME=BINDIR [NAME=BINDIR…]
#
# BINDIR holds pomed, pome-pod (and, for the events figure, nothing else): a release
# build's supervisor/ and pods/ copied side by side, or a build tree (its supervisor/
# and pods/ subdirectories are looked into). Needs root, wrk and the sources' images.
import argparse, http.client, json, os, re, shutil, signal, statistics, subprocess
import sys, tempfile, threading, time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find(bindir, name):
    for sub in ("", "supervisor", "pods", "pods/pod", "cli"):
        p = os.path.join(bindir, sub, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    sys.exit(f"ab: no {name} in {bindir}")


class Pomed:
    def __init__(self, bindir, extra=(), preexec_fn=None):
        self.tmp = tempfile.mkdtemp(prefix="pome-perf.")
        os.chmod(self.tmp, 0o755)
        conf = os.path.join(self.tmp, "pomed.conf")
        with open(conf, "w") as f:
            f.write(f"control_listen: 127.0.0.1:0\ngateway_listen: 127.0.0.1:0\n"
                    f"state_dir: {self.tmp}/state\nbus: none\n"
                    f"pod_exec: {find(bindir, 'pome-pod')}\n"
                    f"images_dir: {SRC}/sandbox-images\npolicies_dir: {SRC}/policies\n"
                    f"limits:\n  max_tape: 4G\n"
                    f"teams:\n  - id: local\n    sessions_quota: 5000\n")
            for line in extra:
                f.write(line + "\n")
        self.log = open(os.path.join(self.tmp, "pomed.log"), "w")
        self.proc = subprocess.Popen([find(bindir, "pomed"), "--config", conf],
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=preexec_fn)
        info = os.path.join(self.tmp, "state", "pomed.json")
        for _ in range(400):
            if os.path.exists(info):
                break
            if self.proc.poll() is not None:
                sys.exit(f"ab: pomed exited: see {self.log.name}")
            time.sleep(0.025)
        j = json.load(open(info))
        self.control = j["control_url"].split("//")[1]
        self.gateway = j["gateway_url"].split("//")[1]
        self.key = open(os.path.join(self.tmp, "state", "api-key")).readline().strip()
        self.pid = self.proc.pid

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class Client:
    def __init__(self, p):
        self.p = p
        self.c = http.client.HTTPConnection(p.control, timeout=30)

    def req(self, method, path, body=None):
        h = {"Authorization": "Bearer " + self.p.key}
        if body is not None:
            h["Content-Type"] = "application/json"
            body = json.dumps(body)
        for attempt in (0, 1):
            try:
                self.c.request(method, path, body=body, headers=h)
                r = self.c.getresponse()
                data = r.read()
                return r.status, data
            except (ConnectionError, http.client.HTTPException):
                self.c.close()
                self.c = http.client.HTTPConnection(self.p.control, timeout=30)
                if attempt:
                    raise

    def create(self, twins):
        t0 = time.perf_counter()
        st, data = self.req("POST", "/v1/sandboxes", {"twins": twins, "idle_timeout_seconds": 0})
        ms = (time.perf_counter() - t0) * 1000
        return st, ms, json.loads(data) if data else {}

    def discard(self, sid):
        st, data = self.req("DELETE", f"/v1/sandboxes/{sid}")
        tok = json.loads(data)["error"]["details"]["discard_token"]
        st, _ = self.req("DELETE", f"/v1/sandboxes/{sid}?confirm_discard={tok}")
        return st


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


TWINS = {1: ["github"], 2: ["github", "slack"], 3: ["github", "slack", "stripe"]}


def fig_create(p, n_twins, n=40, idle=0.0):
    c = Client(p)
    lat, errs = [], 0
    for _ in range(n):
        if idle:
            time.sleep(idle)
        st, ms, j = c.create(TWINS[n_twins])
        if st != 201:
            errs += 1
            continue
        lat.append(ms)
        c.discard(j["session_id"])
    return {"p50": statistics.median(lat), "p99": pct(lat, 0.99), "errors": errs}


def fig_churn(p, clients=4, seconds=5.0, n_twins=2):
    done, errs = [0], [0]
    lock = threading.Lock()
    end = time.perf_counter() + seconds

    def run():
        c = Client(p)
        while time.perf_counter() < end:
            st, _, j = c.create(TWINS[n_twins])
            ok = st == 201 and c.discard(j["session_id"]) == 204
            with lock:
                if ok:
                    done[0] += 1
                else:
                    errs[0] += 1

    t0 = time.perf_counter()
    ts = [threading.Thread(target=run) for _ in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return {"per_s": done[0] / (time.perf_counter() - t0), "errors": errs[0]}


def wrk(url, token, conns, seconds=3, threads=None, script=None):
    args = ["wrk", f"-t{threads or min(conns, 2)}", f"-c{conns}", f"-d{seconds}s", "--latency",
            "-H", f"Authorization: Bearer {token}"]
    if script:
        args += ["-s", script]
    out = subprocess.run(args + [url], capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"\s50%\s+([\d.]+)(us|ms|s)", out)
    p50 = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)]
    mx = re.search(r"Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)", out)
    mxv = float(mx.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[mx.group(2)] if mx else 0
    m99 = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m99.group(2)] if m99 else 0
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": rps, "p50_ms": p50, "p99_ms": p99, "max_ms": mxv,
            "non2xx": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": errors.group(1) if errors else ""}


def sandbox_for_gateway(p):
    c = Client(p)
    st, _, j = c.create(["github"])
    assert st == 201, j
    return j["per_twin"]["github"]["rest_url"] + "/repos/acme/api/issues/1", j["session_token"]


def cpu_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime + stime, clock ticks


def pods_of(pid):
    out = subprocess.run(["pgrep", "-P", str(pid), "-x", "pome-pod"], capture_output=True,
                         text=True).stdout.split()
    return [int(x) for x in out]


def with_cpu(p, run):
    """run() (a wrk figure) plus the CPU pomed and its pods spent per request, in µs: on a
    busy shared host a steadier figure than requests per second."""
    hz = os.sysconf("SC_CLK_TCK")
    pods = pods_of(p.pid)
    a, pa = cpu_ticks(p.pid), sum(cpu_ticks(x) for x in pods)
    out = run()
    b, pb = cpu_ticks(p.pid), sum(cpu_ticks(x) for x in pods)
    n = out["rps"] * out.get("seconds", 3)
    out["pomed_us_per_req"] = (b - a) / hz * 1e6 / n
    out["pod_us_per_req"] = (pb - pa) / hz * 1e6 / n
    return out


def fig_get(p, conns=64):
    url, tok = sandbox_for_gateway(p)
    wrk(url, tok, conns, 1)
    return with_cpu(p, lambda: wrk(url, tok, conns, 3))


POST_LUA = os.path.join(tempfile.gettempdir(), "pome-perf-post.lua")


def fig_post(p, conns=64, patch=False):
    """POST a comment (the world grows with every call), or PATCH the issue's title (a
    write whose world stays the same size)."""
    url, tok = sandbox_for_gateway(p)
    if not patch:
        url = url + "/comments"
    with open(POST_LUA, "w") as f:
        f.write(f'wrk.method = "{"PATCH" if patch else "POST"}"\n'
                + ('wrk.body = \'{"title":"a new title"}\'\n' if patch
                   else 'wrk.body = \'{"body":"a comment"}\'\n')
                + 'wrk.headers["Content-Type"] = "application/json"\n')
    wrk(url, tok, conns, 1, script=POST_LUA)
    return with_cpu(p, lambda: wrk(url, tok, conns, 3, script=POST_LUA))


def fig_latency(p):
    url, tok = sandbox_for_gateway(p)
    wrk(url, tok, 1, 1, threads=1)
    return wrk(url, tok, 1, 3, threads=1)


def nfds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def fig_fds(p, n=50, n_twins=2):
    c = Client(p)
    before = nfds(p.pid)
    ids = []
    for _ in range(n):
        st, _, j = c.create(TWINS[n_twins])
        assert st == 201, j
        ids.append(j["session_id"])
    after = nfds(p.pid)
    for sid in ids:
        c.discard(sid)
    return {"fds_per_sandbox": (after - before) / n}


def fig_events(p, rows=100000, probes=20):
    """Pages of /_pome/events on a tape of `rows` rows, and a GET of another sandbox
    measured while they are served."""
    url, tok = sandbox_for_gateway(p)
    base = url.split("/repos/")[0]
    # fill the tape fast: wrk for as long as it takes
    host = base.split("//")[1].split("/")[0]
    path0 = "/" + base.split("//")[1].split("/", 1)[1]
    t0 = time.time()
    while True:
        conn = http.client.HTTPConnection(host, timeout=30)
        conn.request("GET", path0 + "/_pome/events?limit=1",
                     headers={"Authorization": "Bearer " + tok})
        r = conn.getresponse()
        r.read()
        total = int(r.getheader("X-Pome-Total-Events"))
        conn.close()
        if total >= rows:
            break
        if time.time() - t0 > 600:
            return {"error": "tape not filled"}
        wrk(url, tok, 32, max(1, min(10, (rows - total) // 15000 + 1)))
    # page latency: the first page, a middle one (after=), the last one
    conn = http.client.HTTPConnection(host, timeout=30)

    def get(q):
        t = time.perf_counter()
        conn.request("GET", path0 + "/_pome/events" + q, headers={"Authorization": "Bearer " + tok})
        r = conn.getresponse()
        r.read()
        return (time.perf_counter() - t) * 1000, r

    _, r = get("?limit=1000")
    nxt = r.getheader("X-Pome-Next-After")
    lat_first = [get("?limit=1000")[0] for _ in range(probes)]
    lat_after = [get(f"?after={nxt}&limit=1000")[0] for _ in range(probes)]
    # the last page: the newest rows, what a reader following along asks for
    lat_last = []
    for _ in range(probes):
        ms, r = get("?limit=1")
        lat_last.append(ms)
    # the whole tape in one answer, and another sandbox's GET latency meanwhile
    url2, tok2 = sandbox_for_gateway(p)
    res = {}
    def other():
        res.update(wrk(url2, tok2, 1, 2, threads=1))
    t = threading.Thread(target=other)
    t.start()
    time.sleep(0.2)
    whole, _ = get("")
    t.join()
    # the same tape once its run has ended, over the control API: opened (indexed) per call
    sid = base.split("/s/")[1]
    cc = Client(p)
    st, data = cc.req("POST", f"/v1/sandboxes/{sid}/finalize")
    ended = []
    for _ in range(5):
        t0 = time.perf_counter()
        st, _ = cc.req("GET", f"/v1/sandboxes/{sid}/events?twin=github&limit=1000")
        ended.append((time.perf_counter() - t0) * 1000)
    return {"rows": total, "ended_page_ms": statistics.median(ended),
            "first_page_ms": statistics.median(lat_first),
            "after_page_ms": statistics.median(lat_after),
            "whole_tape_ms": whole, "other_p99_ms_meanwhile": res.get("p99_ms", 0),
            "other_max_ms_meanwhile": res.get("max_ms", 0)}


def responder(fig):
    """The same figure against bench/responder.c answering the issue's bytes: the HTTP
    library's own speed on this host, measured in the same run."""
    def run(p):
        url, tok = sandbox_for_gateway(p)
        c = http.client.HTTPConnection(url.split("//")[1].split("/")[0])
        c.request("GET", "/" + url.split("//")[1].split("/", 1)[1],
                  headers={"Authorization": "Bearer " + tok})
        body = c.getresponse().read()
        exe = os.path.join(tempfile.gettempdir(), "pome-perf-responder")
        if not os.path.exists(exe):
            subprocess.run(["cc", "-O2", "-o", exe, os.path.join(SRC, "bench", "responder.c"),
                            "-lmicrohttpd"], check=True)
        bf = os.path.join(p.tmp, "body")
        open(bf, "wb").write(body)
        port = 18000 + os.getpid() % 1000
        r = subprocess.Popen([exe, str(port), bf])
        time.sleep(0.3)
        try:
            u = f"http://127.0.0.1:{port}/x"
            conns, threads = (1, 1) if fig == "latency" else (64, 2)
            wrk(u, tok, conns, 1, threads=threads)
            return wrk(u, tok, conns, 3, threads=threads)
        finally:
            r.terminate()
            r.wait()
    return run


def fig_gw_during_churn(p):
    """One connection's GET latency on a sandbox while 4 clients create and discard 2-twin
    sandboxes beside it: how much the creates hold the loop."""
    url, tok = sandbox_for_gateway(p)
    wrk(url, tok, 1, 1, threads=1)
    res = {}
    t = threading.Thread(target=lambda: res.update(fig_churn(p, seconds=4.0)))
    t.start()
    time.sleep(0.3)
    out = wrk(url, tok, 1, 3, threads=1)
    t.join()
    out["churn_per_s"] = res.get("per_s", 0)
    return out


FIGURES = {
    "gwchurn": fig_gw_during_churn,
    "responder_get": responder("get"),
    "responder_latency": responder("latency"),
    "create1": lambda p: fig_create(p, 1),
    "create2": lambda p: fig_create(p, 2),
    "create3": lambda p: fig_create(p, 3),
    "cold2": lambda p: fig_create(p, 2, n=20, idle=0.06),
    "cold3": lambda p: fig_create(p, 3, n=20, idle=0.06),
    "churn": fig_churn,
    "get": fig_get,
    "post": fig_post,
    "patch": lambda p: fig_post(p, patch=True),
    "latency": fig_latency,
    "fds": fig_fds,
    "events": fig_events,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--figures", default="create1,create2,create3,cold3,churn,get,latency,fds")
    ap.add_argument("--conf", action="append", default=[], help="NAME:YAML line for one build")
    ap.add_argument("builds", nargs="+")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.builds]
    extra = {}
    for c in a.conf:
        n, line = c.split(":", 1)
        extra.setdefault(n, []).append(line)
    res = {n: {} for n, _ in builds}
    print("load:", open("/proc/loadavg").read().strip(), file=sys.stderr)
    for run in range(a.runs):
        for fig in a.figures.split(","):
            for name, bindir in (builds if run % 2 == 0 else builds[::-1]):
                p = Pomed(bindir, extra.get(name, []))
                try:
                    out = FIGURES[fig](p)
                finally:
                    p.stop()
                res[name].setdefault(fig, []).append(out)
                print(f"run {run} {fig} {name}: {out}", file=sys.stderr)
    print("load:", open("/proc/loadavg").read().strip(), file=sys.stderr)
    for name in res:
        for fig, outs in res[name].items():
            keys = [k for k, v in outs[0].items() if isinstance(v, (int, float))]
            med = {k: round(statistics.median(o[k] for o in outs), 3) for k in keys}
            print(f"{fig:10s} {name:8s} {med}")


if __name__ == "__main__":
    main()
