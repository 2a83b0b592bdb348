#!/usr/bin/env python3
# The benchmark harness (not a test): every figure of BENCHMARKS.md, each beside a
# baseline measured in the same run, interleaved (figure, baseline, figure, baseline…),
# with its ratio, its target and the errors it met. bench/run.sh builds what it needs and
# calls it; run it directly only with those binaries built:
#
#   bench/harness.py --bin build/release --tools build/bench [--runs N] [--only a,b]
#                    [--out BENCHMARKS.md] [--json results.json] [--no-profile]
#
# Baselines: bench/floor (the same isolation as a pod — cgroup leaves, namespaces,
# credentials, seccomp — around a tiny static server), `bwrap --unshare-all`, a minimal
# libmicrohttpd responder returning the same bytes (bench/responder.c), and the same twin
# engine in-process (`pome twin start`). Every pomed is a fresh one, started as from a
# plain shell (soft RLIMIT_NOFILE 1024), with a state directory of its own.
import argparse, datetime, json, os, platform, re, resource, shutil, statistics
import subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ab  # noqa: E402  (Pomed, Client, wrk, fig_events: the figures' building blocks)

SRC = os.path.dirname(HERE)
ERRORS = []  # (figure, what): every failure any figure met, printed and written


def err(fig, what):
    ERRORS.append((fig, what))
    print(f"bench: {fig}: ERROR {what}", file=sys.stderr)


def plain_shell():
    # what `pomed` gets from a login shell: soft nofile 1024, whatever the hard limit
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))


class Pomed(ab.Pomed):
    """ab.Pomed started as from a plain shell, with extra config lines."""

    def __init__(self, bindir, extra=()):
        super().__init__(bindir, extra, preexec_fn=plain_shell)


def pct(xs, q):
    return ab.pct(xs, q) if xs else float("nan")


def run_json(args, timeout=600):
    out = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout)


# ---------------------------------------------------------------- start, teardown, churn

def pomed_starts(p, n_twins, n, idle_s, fig):
    """n creates of an n_twins sandbox (each discarded before the next), the create's and
    the discard's latency in ms."""
    c = ab.Client(p)
    starts, downs = [], []
    for _ in range(n):
        if idle_s:
            time.sleep(idle_s)
        st, ms, j = c.create(ab.TWINS[n_twins])
        if st != 201:
            err(fig, f"create → {st} {str(j)[:200]}")
            continue
        starts.append(ms)
        t0 = time.perf_counter()
        st = c.discard(j["session_id"])
        if st != 204:
            err(fig, f"discard → {st}")
            continue
        downs.append((time.perf_counter() - t0) * 1000)
    return starts, downs


def floor_starts(tools, n_twins, n, idle_s, fig):
    j = run_json([os.path.join(tools, "floor"), "--servers", str(n_twins), "--iterations",
                  str(n), "--idle-ms", str(int(idle_s * 1000)), "--server",
                  os.path.join(tools, "floor-server")])
    for _ in range(j.get("errors", 0)):
        err(fig + " (floor)", "a floor start failed (see stderr above)")
    return j["start_ms"], j["teardown_ms"]


def bwrap_starts(n, idle_s, fig):
    """`bwrap --unshare-all --ro-bind / / /bin/true`, spawn to exit, in ms (posix_spawn from
    this process: a few tens of µs of Python around it)."""
    exe = shutil.which("bwrap")
    if not exe:
        err(fig, "bwrap is not installed (apt-get install bubblewrap)")
        return []
    args = [exe, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "/bin/true"]
    out = []
    for _ in range(n):
        if idle_s:
            time.sleep(idle_s)
        t0 = time.perf_counter()
        pid = os.posix_spawn(exe, args, os.environ)
        _, status = os.waitpid(pid, 0)
        ms = (time.perf_counter() - t0) * 1000
        if status != 0:
            err(fig, f"bwrap exited with status {status}")
            continue
        out.append(ms)
    return out


def pomed_churn(p, clients, seconds, fig):
    out = ab.fig_churn(p, clients=clients, seconds=seconds)
    for _ in range(out["errors"]):
        err(fig, "a create or discard failed during churn")
    return out["per_s"]


def floor_churn(tools, clients, seconds, fig):
    j = run_json([os.path.join(tools, "floor"), "--servers", "2", "--clients", str(clients),
                  "--seconds", str(seconds), "--server", os.path.join(tools, "floor-server")])
    for _ in range(j.get("errors", 0)):
        err(fig + " (floor)", "a floor start or teardown failed")
    return j["per_s"]


# ---------------------------------------------------------------- gateway

POST_BODY = '{"body":"a comment"}'


def wrk_checked(fig, url, token, conns, seconds, threads=None, script=None):
    try:
        out = ab.wrk(url, token, conns, seconds, threads=threads, script=script)
    except Exception as e:  # wrk printed nothing we could read
        err(fig, f"wrk failed: {e}")
        return None
    if out["non2xx"]:
        err(fig, f"{out['non2xx']} non-2xx answers")
    if out["socket_errors"]:
        err(fig, f"socket errors: {out['socket_errors']}")
    return out


def post_script(tmp):
    path = os.path.join(tmp, "post.lua")
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\n'
                f"wrk.body = '{POST_BODY}'\n"
                'wrk.headers["Content-Type"] = "application/json"\n')
    return path


def gateway_with_cpu(p, fig, url, tok, conns, threads, script):
    """wrk through pomed, with the CPU pomed and its pods spent per request."""
    box = {}

    def run():
        box["out"] = wrk_checked(fig, url, tok, conns, 3, threads, script) or {"rps": 0}
        return box["out"]
    try:
        return ab.with_cpu(p, run)
    except ZeroDivisionError:  # no request served: wrk_checked said why
        return None
    except FileNotFoundError:  # /proc/PID of a pod that died during the run
        err(fig, "a pod exited during the run (see pomed's log)")
        return None


def host_busy(run):
    """run() and the share of the host's CPU time (every core) that was not idle meanwhile."""
    def stat():
        v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        return sum(v), v[3] + v[4]  # all, idle + iowait
    t0, i0 = stat()
    out = run()
    t1, i1 = stat()
    return out, 1 - (i1 - i0) / max(1, t1 - t0)


def shard_ceiling(B, fig, r):
    """GET through two sandboxes at once, 32 connections each (one wrk per sandbox): served by
    one pomed, then by two pomeds with one sandbox each. Two processes that share nothing are
    what sharding the gateway across threads by sandbox could be at best (no lock, no
    hand-off), so their sum over one pomed's bounds that design's gain on this host.
    Returns {"one": (req/s, host busy), "two": (…)} for the figures that ran clean."""
    out = {}
    order = ("one", "two") if r % 2 == 0 else ("two", "one")
    for who in order:
        ps = [Pomed(B)]
        try:
            if who == "two":
                ps.append(Pomed(B))
            boxes = [ab.sandbox_for_gateway(ps[0]), ab.sandbox_for_gateway(ps[-1])]

            def both(seconds):
                got = [None, None]
                ths = [threading.Thread(target=lambda i=i: got.__setitem__(
                    i, wrk_checked(f"{fig} ({who} pomed)", boxes[i][0], boxes[i][1], 32,
                                   seconds, 1))) for i in range(2)]
                for t in ths:
                    t.start()
                for t in ths:
                    t.join()
                return None if None in got else sum(g["rps"] for g in got)
            both(1)
            rps, busy = host_busy(lambda: both(3))
            if rps is not None:
                out[who] = (rps, busy)
        finally:
            for p in ps:
                p.stop()
    return out


class Responder:
    """bench/responder.c answering body (bytes) on a port of its own."""

    def __init__(self, tools, tmp, body):
        bf = os.path.join(tmp, "responder-body")
        open(bf, "wb").write(body)
        self.proc = subprocess.Popen([os.path.join(tools, "responder"), "0", bf],
                                     stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}/x"

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class InProcessTwin:
    """`pome twin start github`: the twin engine answering in pomed's stead, no pod."""

    def __init__(self, bindir):
        self.proc = subprocess.Popen([os.path.join(bindir, "cli", "pome"), "twin", "start",
                                      "github", "--port", "0"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        got = {}
        while "token" not in got:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("pome twin start exited")
            w = line.split()
            if len(w) == 2:
                got[w[0]] = w[1]
        self.base, self.token = got["rest_url"], got["token"]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def http_body(url, token, method="GET", body=None):
    import http.client
    hostport, path = url.split("//")[1].split("/", 1)
    c = http.client.HTTPConnection(hostport, timeout=30)
    h = {"Authorization": "Bearer " + token}
    if body:
        h["Content-Type"] = "application/json"
    c.request(method, "/" + path, body=body, headers=h)
    r = c.getresponse()
    return r.status, r.read()


# ---------------------------------------------------------------- density

def meminfo(key):
    for line in open("/proc/meminfo"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def pss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def settle_memory(limit_s=120):
    """Waits until the host's MemAvailable stops rising (less than 1 MiB over 3 s), at most
    limit_s; returns the seconds waited, or None if it never settled. The kernel frees a
    torn-down run's network namespaces and memory cgroups for up to a minute after it (~7
    MB/s here): a baseline read meanwhile charges that rise to the next figure, whose drop
    then reads a third to a tenth of what it is."""
    subprocess.run(["sync"])
    t0, last = time.time(), meminfo("MemAvailable")
    while time.time() - t0 < limit_s:
        time.sleep(3)
        now = meminfo("MemAvailable")
        if now - last < 1024:
            return time.time() - t0
        last = now
    return None


PACK_AFTER_S = 2.0  # pomed's default pod.pack_after
WAKE_SAMPLES = 50


def density(p, n, fig):
    """n open 3-twin sandboxes: host memory (MemAvailable drop), pomed's fds, PSS per pod."""
    c = ab.Client(p)
    settled_s = settle_memory()
    avail0, fds0 = meminfo("MemAvailable"), ab.nfds(p.pid)
    rss0 = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{p.pid}/status").read()).group(1))
    ids, made, t0 = [], [], time.perf_counter()
    for i in range(n):
        st, _, j = c.create(ab.TWINS[3])
        if st != 201:
            err(fig, f"create #{i + 1} → {st} {str(j)[:200]}")
            if len(ERRORS) > 20:
                break
            continue
        ids.append(j["session_id"])
        made.append(j)
    open_s = time.perf_counter() - t0
    # idle pods: the pool refilled, and every pod past pod.pack_after (2 s by default) with
    # no call, as an agent's pods are while it thinks
    time.sleep(PACK_AFTER_S + 1.0)
    pods = ab.pods_of(p.pid)
    pss = [pss_kib(x) for x in pods]
    out = {"open": len(ids), "open_s": open_s, "pods": len(pods), "settled_s": settled_s,
           "pss_kib_per_pod": statistics.median(pss) if pss else 0,
           "pss_kib_per_pod_mean": sum(pss) / len(pss) if pss else 0,
           "host_kib_per_sandbox": (avail0 - meminfo("MemAvailable")) / max(1, len(ids)),
           "pomed_rss_kib_per_sandbox":
               (int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{p.pid}/status").read()).group(1))
                - rss0) / max(1, len(ids)),
           "fds_per_sandbox": (ab.nfds(p.pid) - fds0) / max(1, len(ids))}
    # every one of them still answers
    st, data = c.req("GET", "/v1/usage")
    if st != 200:
        err(fig, f"GET /v1/usage with {len(ids)} open → {st}")
    # the first call to an idle (packed) pod unpacks its world: its cost, beside the call
    # after it, on a sample of the GitHub pods (each right, or an error). A call to the
    # sandbox's Stripe pod (a world too small to pack) comes first: a sandbox's first call
    # also records it as running.
    first, then = [], []
    for j in made[:: max(1, len(made) // WAKE_SAMPLES)][:WAKE_SAMPLES]:
        st, body = http_body(j["per_twin"]["stripe"]["rest_url"] + "/v1/balance",
                             j["session_token"])
        if st != 200:
            err(fig, f"GET /v1/balance of {j['session_id']} → {st} {body[:200]!r}")
        url = j["per_twin"]["github"]["rest_url"] + "/repos/acme/api/issues/1"
        for lat in (first, then):
            t1 = time.perf_counter()
            st, body = http_body(url, j["session_token"])
            lat.append((time.perf_counter() - t1) * 1000)
            if st != 200 or json.loads(body).get("number") != 1:
                err(fig, f"GET issue 1 of {j['session_id']} → {st} {body[:200]!r}")
    out["idle_call_p50_ms"] = statistics.median(first) if first else 0
    out["idle_call_p99_ms"] = pct(first, 0.99) if first else 0
    out["next_call_p50_ms"] = statistics.median(then) if then else 0
    out["next_call_p99_ms"] = pct(then, 0.99) if then else 0
    for sid in ids:
        if c.discard(sid) != 204:
            err(fig, f"discard {sid} failed")
    return out


def floor_hold(tools, n):
    """n sets of 3 floor servers held at once: their PSS and host memory (read from a
    settled host, as density's)."""
    try:
        settled_s = settle_memory()
        out = run_json([os.path.join(tools, "floor"), "--servers", "3", "--hold", str(n),
                        "--server", os.path.join(tools, "floor-server")])
        out["settled_s"] = settled_s
        return out
    except Exception as e:
        err("density (floor)", str(e))
        return {"error": str(e)}


# ---------------------------------------------------------------- profiles

def perf_top(pid, seconds, tmp, name):
    """The top symbols of pid over seconds (perf record -g), as 'pct symbol' lines."""
    if not shutil.which("perf"):
        return ["(perf is not installed)"]
    data = os.path.join(tmp, f"{name}.perf")
    rec = subprocess.run(["perf", "record", "-F", "999", "-g", "-o", data, "-p", str(pid), "--",
                          "sleep", str(seconds)], capture_output=True, text=True)
    if rec.returncode != 0:
        return [f"(perf record failed: {rec.stderr.strip()[-200:]})"]
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "-g", "none",
                          "--sort", "dso,symbol", "--percent-limit", "2"],
                         capture_output=True, text=True).stdout
    lines = []
    for line in rep.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[\.\]\s+(.*)", line) or \
            re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[k\]\s+(.*)", line)
        if m:
            sym = re.sub(r"(\s+-)+\s*$", "", m.group(3)).strip()
            lines.append(f"{m.group(1)}% {sym} ({m.group(2)})")
    return lines[:10] or ["(no samples)"]


# ---------------------------------------------------------------- the table

def fmt(x):
    if x is None or (isinstance(x, float) and x != x):
        return "—"
    if isinstance(x, str):
        return x
    if abs(x) >= 1000:
        return f"{x:,.0f}".replace(",", " ")
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser(description="Every benchmark figure beside its same-run "
                                 "baseline; rewrites BENCHMARKS.md (see bench/run.sh).")
    ap.add_argument("--bin", required=True, help="a release build tree")
    ap.add_argument("--tools", required=True, help="where floor, floor-server, responder are")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated areas: start,churn,gateway,"
                    "density,tape,agentpod")
    ap.add_argument("--out", default=os.path.join(SRC, "BENCHMARKS.md"))
    ap.add_argument("--json", default="")
    ap.add_argument("--density", type=int, default=1000, help="open 3-twin sandboxes")
    ap.add_argument("--tape-rows", type=int, default=100000)
    ap.add_argument("--no-profile", action="store_true")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else {"start", "churn", "gateway", "density",
                                                   "tape", "agentpod"}
    B, T, R = a.bin, a.tools, a.runs
    tmp = tempfile.mkdtemp(prefix="pome-bench.")
    os.chmod(tmp, 0o755)
    load0 = open("/proc/loadavg").read().split()[:3]
    started = datetime.datetime.now(datetime.timezone.utc)
    res = {}
    profiles = {}

    def note(fig, **kw):
        res.setdefault(fig, {}).update(kw)
        print(f"bench: {fig}: {kw}", file=sys.stderr)

    # ---- start (hot, cold), teardown
    if "start" in only:
        N_HOT, N_COLD, IDLE = 40, 15, 0.06
        for twins, idle, label in ((1, 0, "hot"), (2, 0, "hot"), (3, 0, "hot"), (2, IDLE, "cold"),
                                   (3, IDLE, "cold")):
            fig = f"start-{twins}-{label}"
            n = N_HOT if not idle else N_COLD
            main_s, main_d, pool0_s, floor_s, floor_d = [], [], [], [], []
            for r in range(R):
                order = ("pomed", "pool0", "floor") if r % 2 == 0 else ("floor", "pool0", "pomed")
                for who in order:
                    if who == "floor":
                        s, d = floor_starts(T, twins, n, idle, fig)
                        floor_s += s
                        floor_d += d
                        continue
                    p = Pomed(B, [] if who == "pomed" else ["pool_size: 0"])
                    try:
                        s, d = pomed_starts(p, twins, n, idle, fig + ("" if who == "pomed"
                                                                        else " pool 0"))
                    finally:
                        p.stop()
                    if who == "pomed":
                        main_s += s
                        main_d += d
                    else:
                        pool0_s += s
            note(fig, pomed_p50=pct(main_s, .5), pomed_p99=pct(main_s, .99),
                 pool0_p50=pct(pool0_s, .5), pool0_p99=pct(pool0_s, .99),
                 floor_p50=pct(floor_s, .5), floor_p99=pct(floor_s, .99),
                 teardown_p50=pct(main_d, .5), teardown_p99=pct(main_d, .99),
                 floor_teardown_p50=pct(floor_d, .5), floor_teardown_p99=pct(floor_d, .99),
                 n=len(main_s))
        bw_hot, bw_cold = [], []
        for r in range(R):
            bw_hot += bwrap_starts(N_HOT, 0, "bwrap-hot")
            bw_cold += bwrap_starts(N_COLD, IDLE, "bwrap-cold")
        note("bwrap", hot_p50=pct(bw_hot, .5), hot_p99=pct(bw_hot, .99),
             cold_p50=pct(bw_cold, .5), cold_p99=pct(bw_cold, .99))

    # ---- churn
    if "churn" in only:
        for clients in (1, 4):
            fig = f"churn-{clients}"
            m, f = [], []
            for r in range(R):
                for who in (("pomed", "floor") if r % 2 == 0 else ("floor", "pomed")):
                    if who == "floor":
                        f.append(floor_churn(T, clients, 4, fig))
                        continue
                    p = Pomed(B)
                    try:
                        m.append(pomed_churn(p, clients, 4.0, fig))
                    finally:
                        p.stop()
            note(fig, pomed_per_s=statistics.median(m), floor_per_s=statistics.median(f))

    # ---- gateway
    if "gateway" in only:
        script = post_script(tmp)
        for fig, conns, threads, post in (("get", 64, 2, False), ("post", 64, 2, True),
                                          ("latency", 1, 1, False)):
            gw, rsp, twn = [], [], []
            cpu = []
            for r in range(R):
                # a POST run adds ~100 000 comments to one issue (~1 KiB each in the pod):
                # a pod memory limit that holds them, so the figure measures the gateway
                p = Pomed(B, extra=("pod:", "  memory_max: 1G"))
                twin = InProcessTwin(B)
                try:
                    url, tok = ab.sandbox_for_gateway(p)
                    turl = twin.base + "/repos/acme/api/issues/1"
                    if post:
                        url, turl = url + "/comments", turl + "/comments"
                    st, body = http_body(url, tok, "POST" if post else "GET",
                                         POST_BODY if post else None)
                    if st >= 300:
                        err(fig, f"probe → {st}")
                    resp = Responder(T, tmp, body)
                    sc = script if post else None
                    try:
                        runs = [("gw", lambda: gateway_with_cpu(p, fig, url, tok, conns,
                                                                threads, sc)),
                                ("rsp", lambda: wrk_checked(fig + " responder", resp.url, tok,
                                                            conns, 3, threads, sc)),
                                ("twin", lambda: wrk_checked(fig + " in-process", turl,
                                                             twin.token, conns, 3, threads, sc))]
                        if r % 2:
                            runs.reverse()
                        for who, fn in runs:
                            wrk_checked(fig + " warm-up", resp.url if who == "rsp" else
                                        turl if who == "twin" else url,
                                        twin.token if who == "twin" else tok, conns, 1,
                                        threads, sc)
                            out = fn()
                            if not out:
                                continue
                            {"gw": gw, "rsp": rsp, "twin": twn}[who].append(out)
                        if r == 0 and fig in ("get", "post") and not a.no_profile:
                            th = threading.Thread(target=lambda: wrk_checked(
                                fig + " profile", url, tok, conns, 4, threads, sc))
                            th.start()
                            time.sleep(0.5)
                            profiles[f"gateway {fig.upper()} — pomed"] = perf_top(
                                p.pid, 2, tmp, f"{fig}-pomed")
                            th.join()
                            pods = ab.pods_of(p.pid)
                            if pods and fig == "get":
                                th = threading.Thread(target=lambda: wrk_checked(
                                    fig + " profile", url, tok, conns, 4, threads, sc))
                                th.start()
                                time.sleep(0.5)
                                # the busy pod: the one serving the sandbox just created
                                busiest = max(pods, key=ab.cpu_ticks)
                                profiles[f"gateway {fig.upper()} — the pod"] = perf_top(
                                    busiest, 2, tmp, f"{fig}-pod")
                                th.join()
                    finally:
                        resp.stop()
                finally:
                    twin.stop()
                    p.stop()
            med = lambda xs, k: statistics.median(x[k] for x in xs) if xs else float("nan")
            note(fig, rps=med(gw, "rps"), p50_ms=med(gw, "p50_ms"), p99_ms=med(gw, "p99_ms"),
                 pomed_us_per_req=med(gw, "pomed_us_per_req"),
                 pod_us_per_req=med(gw, "pod_us_per_req"),
                 responder_rps=med(rsp, "rps"), responder_p50_ms=med(rsp, "p50_ms"),
                 responder_p99_ms=med(rsp, "p99_ms"), twin_rps=med(twn, "rps"),
                 twin_p50_ms=med(twn, "p50_ms"), twin_p99_ms=med(twn, "p99_ms"))

        one, two = [], []
        for r in range(R):
            got = shard_ceiling(B, "shard", r)
            if "one" in got and "two" in got:
                one.append(got["one"])
                two.append(got["two"])
        med = lambda xs, i: statistics.median(x[i] for x in xs) if xs else float("nan")
        note("shard", one_rps=med(one, 0), one_busy=med(one, 1), two_rps=med(two, 0),
             two_busy=med(two, 1),
             gain=statistics.median(b[0] / a[0] for a, b in zip(one, two)) if one
             else float("nan"))

    # ---- create profile (hot creates, 3 twins), once
    if "start" in only and not a.no_profile:
        p = Pomed(B)
        try:
            stop = threading.Event()

            def loop():
                c = ab.Client(p)
                while not stop.is_set():
                    st, _, j = c.create(ab.TWINS[3])
                    if st == 201:
                        c.discard(j["session_id"])
            th = threading.Thread(target=loop)
            th.start()
            time.sleep(0.5)
            profiles["create + discard, 3 twins, back to back — pomed and the pods it spawns"] = perf_top(
                p.pid, 3, tmp, "create")
            stop.set()
            th.join()
        finally:
            p.stop()

    # ---- density
    if "density" in only:
        p = Pomed(B)
        try:
            d = density(p, a.density, "density")
        finally:
            p.stop()
        note("density", **d)
        note("density-floor", **floor_hold(T, 300))

    # ---- tape pages
    if "tape" in only:
        p = Pomed(B)
        try:
            e = ab.fig_events(p, rows=a.tape_rows)
        finally:
            p.stop()
        if "error" in e:
            err("tape", e["error"])
        note("tape", **e)

    # ---- the sealed agent's start (issue 24)
    if "agentpod" in only:
        prog = os.path.join(B, "bench", "bench-agentpod-start")
        plain, pod, setup = [], [], []
        mode = "?"
        for _ in range(R):
            try:
                j = run_json([prog, "--iterations", "40"])
            except Exception as e:  # noqa: BLE001 (said as the figure's error)
                err("agentpod", f"bench-agentpod-start: {e}")
                continue
            for _ in range(j.get("errors", 0)):
                err("agentpod", "an agent pod start failed (see stderr above)")
            mode = f"{j['mode']}, limits {'in a cgroup' if j['cgroup'] else 'as rlimits'}"
            plain.append(statistics.median(j["plain_ms"]))
            pod.append(statistics.median(j["pod_ms"]))
            setup.append(statistics.median(j["setup_ms"]))
        if pod:
            note("agentpod", mode=mode, runs=len(pod), plain_p50=statistics.median(plain),
                 pod_p50=statistics.median(pod), setup_p50=statistics.median(setup),
                 overhead_p50=statistics.median([b - a for a, b in zip(plain, pod)]))

    load1 = open("/proc/loadavg").read().split()[:3]
    finished = datetime.datetime.now(datetime.timezone.utc)
    shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        json.dump({"results": res, "errors": ERRORS, "profiles": profiles}, open(a.json, "w"),
                  indent=1)
    write_md(a, res, profiles, load0, load1, started, finished)
    if ERRORS:
        print(f"bench: {len(ERRORS)} errors (listed in {a.out})", file=sys.stderr)
        sys.exit(1)


def ratio(a, b):
    try:
        return a / b
    except (TypeError, ZeroDivisionError):
        return float("nan")


def write_block(path, name, lines):
    """Replaces the text between <!-- NAME:begin … --> and <!-- NAME:end --> of path with
    lines (the markers included), or appends them."""
    block = "\n".join(lines)
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n\n"
    m = re.search(r"<!-- " + name + r":begin.*?<!-- " + name + r":end -->", text, re.S)
    text = text[:m.start()] + block + text[m.end():] if m else text.rstrip() + "\n\n" + block + "\n"
    open(path, "w").write(text)


def write_agentpod(a, res, started):
    """The sealed agent's start (its own block: `--only agentpod` rewrites it alone)."""
    r = res["agentpod"]
    commit = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    over = r["overhead_p50"]
    L = ["<!-- bench-agentpod:begin (written by bench/run.sh; edit outside these markers) -->",
         f"Machine: {platform.node()}, {os.cpu_count()} cores, kernel {platform.release()}. "
         f"Commit {commit}, {started:%Y-%m-%d %H:%M} UTC, {r['runs']} runs of 40 iterations, "
         f"each pod start interleaved with a plain fork+exec of the same `/bin/true`; as "
         f"{r['mode']}. ms, median of the runs' medians.",
         "",
         "| figure | ms |",
         "| --- | --- |",
         f"| plain fork + exec + wait of `/bin/true` (the baseline) | {fmt(r['plain_p50'])} |",
         f"| agent pod: cgroup leaf, `agent_pod_start` (namespaces, mounts, masks, two "
         f"listeners, credentials, `agent.policy`), wait, leaf removed | "
         f"{fmt(r['pod_p50'])} |",
         f"| of which `agent_pod_start` returning (the agent is running) | "
         f"{fmt(r['setup_p50'])} |",
         f"| **overhead over the baseline** (ratio {fmt(ratio(r['pod_p50'], r['plain_p50']))}×)"
         f" | **{fmt(over)}** — target ≤ 10 ms: {'met' if over <= 10 else '**not met**'} |",
         "<!-- bench-agentpod:end -->"]
    write_block(a.out, "bench-agentpod", L)


def write_md(a, res, profiles, load0, load1, started, finished):
    if "agentpod" in res:
        write_agentpod(a, res, started)
    if not set(res) - {"agentpod"}:
        return
    g = lambda fig, k: res.get(fig, {}).get(k, float("nan"))
    L = []
    w = L.append
    commit = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    cg = "cgroup v2" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else \
        "cgroup v1 hybrid" if os.path.isdir("/sys/fs/cgroup/memory") else "cgroup ?"
    w("<!-- bench:begin (written by bench/run.sh; edit outside these markers) -->")
    w(f"Machine: {platform.node()}, {os.cpu_count()} cores, "
      f"{meminfo('MemTotal') // 1024} MiB, kernel {platform.release()}, {cg}. "
      f"Commit {commit}, {started:%Y-%m-%d %H:%M}–{finished:%H:%M} UTC, "
      f"`bench/run.sh {a.runs}` (every figure: {a.runs} runs interleaved with its baseline; "
      f"load average {' '.join(load0)} before, {' '.join(load1)} after).")
    w("")
    w(f"Errors met: **{len(ERRORS)}**" + ("." if not ERRORS else ":"))
    for f, what in ERRORS[:30]:
        w(f"- {f}: {what}")
    if len(ERRORS) > 30:
        w(f"- … and {len(ERRORS) - 30} more")
    w("")
    mark = lambda ok: "—" if ok is None else ("met" if ok else "**not met**")
    if "start-1-hot" in res:
        w("### Start and teardown (POST /v1/sandboxes → 201 with every pod READY; DELETE "
          "?confirm_discard → 204)")
        w("")
        w("Floor: `bench/floor`, the same isolation steps as a pod around a static server "
          "that only says READY, N servers one after the other. Pool 0: the same pomed with "
          "`pool_size: 0` (every pod spawned on the create). Cold: 60 ms idle before each "
          "create. ms, p50 / p99 over all runs' samples.")
        w("")
        w("| figure | pomed (pool 2) | pool 0 | floor | ratio p50 (pool 2 / floor) | target | |")
        w("| --- | --- | --- | --- | --- | --- | --- |")
        for twins, label in ((1, "hot"), (2, "hot"), (3, "hot"), (2, "cold"), (3, "cold")):
            fig = f"start-{twins}-{label}"
            if fig not in res:
                continue
            r = ratio(g(fig, "pomed_p50"), g(fig, "floor_p50"))
            tgt, ok = "—", None
            if twins == 3:
                tgt = "≤ 1.5× floor"
                ok = r <= 1.5
                if label == "cold":
                    tgt += ", ≤ 5 ms, < bwrap"
                    ok = ok and g(fig, "pomed_p50") <= 5 and \
                        g(fig, "pomed_p50") < g("bwrap", "cold_p50")
            w(f"| {twins}-twin create, {label} | {fmt(g(fig, 'pomed_p50'))} / "
              f"{fmt(g(fig, 'pomed_p99'))} | {fmt(g(fig, 'pool0_p50'))} / "
              f"{fmt(g(fig, 'pool0_p99'))} | {fmt(g(fig, 'floor_p50'))} / "
              f"{fmt(g(fig, 'floor_p99'))} | {fmt(r)}× | {tgt} | {mark(ok)} |")
        for twins, label in ((2, "hot"), (3, "hot")):
            fig = f"start-{twins}-{label}"
            if fig in res:
                w(f"| {twins}-twin discard (teardown), {label} | {fmt(g(fig, 'teardown_p50'))} / "
                  f"{fmt(g(fig, 'teardown_p99'))} | — | {fmt(g(fig, 'floor_teardown_p50'))} / "
                  f"{fmt(g(fig, 'floor_teardown_p99'))} | "
                  f"{fmt(ratio(g(fig, 'teardown_p50'), g(fig, 'floor_teardown_p50')))}× | — | — |")
        if "bwrap" in res:
            w(f"| `bwrap --unshare-all /bin/true`, spawn → exit | hot "
              f"{fmt(g('bwrap', 'hot_p50'))} / {fmt(g('bwrap', 'hot_p99'))}, cold "
              f"{fmt(g('bwrap', 'cold_p50'))} / {fmt(g('bwrap', 'cold_p99'))} | — | — | — | — | — |")
        w("")
    if "churn-1" in res:
        w("### Churn (2-twin sandboxes created and discarded per second, 4 s per run)")
        w("")
        w("| clients | pomed | floor | ratio | target | |")
        w("| --- | --- | --- | --- | --- | --- |")
        for c in (1, 4):
            fig = f"churn-{c}"
            if fig in res:
                v = g(fig, "pomed_per_s")
                ok = v >= 300 if c == 4 else None
                w(f"| {c} | {fmt(v)} | {fmt(g(fig, 'floor_per_s'))} | "
                  f"{fmt(ratio(v, g(fig, 'floor_per_s')))} | {'≥ 300/s' if c == 4 else '—'} | "
                  f"{mark(ok)} |")
        w("")
    if "get" in res:
        w("### Gateway (wrk through pomed to a GitHub pod; GET and POST of "
          "/repos/acme/api/issues/1[/comments])")
        w("")
        w("Responder: `bench/responder.c`, a minimal libmicrohttpd server answering the "
          "same bytes. In-process: the same twin engine behind `pome twin start` (no pod, no "
          "isolation hop). Median of the runs; CPU per request from /proc (pomed, the pods).")
        w("")
        w("| figure | pomed | responder | ratio | in-process twin | target | |")
        w("| --- | --- | --- | --- | --- | --- | --- |")
        for fig, label, tgt in (("get", "GET, 64 conns, req/s", 0.5),
                                ("post", "POST comment, 64 conns, req/s", 0.4)):
            if fig in res:
                r = ratio(g(fig, "rps"), g(fig, "responder_rps"))
                w(f"| {label} | {fmt(g(fig, 'rps'))} (p99 {fmt(g(fig, 'p99_ms'))} ms; "
                  f"pomed {fmt(g(fig, 'pomed_us_per_req'))} µs + pod "
                  f"{fmt(g(fig, 'pod_us_per_req'))} µs CPU/req) | "
                  f"{fmt(g(fig, 'responder_rps'))} | {fmt(r)} | {fmt(g(fig, 'twin_rps'))} | "
                  f"≥ {tgt}× | {mark(r >= tgt)} |")
        if "latency" in res:
            r = ratio(g("latency", "p50_ms"), g("latency", "responder_p50_ms"))
            w(f"| GET, 1 conn, keep-alive, p50 / p99 ms | {fmt(g('latency', 'p50_ms'))} / "
              f"{fmt(g('latency', 'p99_ms'))} | {fmt(g('latency', 'responder_p50_ms'))} / "
              f"{fmt(g('latency', 'responder_p99_ms'))} | {fmt(r)}× | "
              f"{fmt(g('latency', 'twin_p50_ms'))} / {fmt(g('latency', 'twin_p99_ms'))} | "
              f"p50 ≤ 3× | {mark(r <= 3)} |")
        if "shard" in res:
            w("")
            w("Sharding ceiling: GET through two sandboxes at once (32 connections each, one "
              "wrk each), served by one pomed and by two pomeds with a sandbox each — two "
              "event loops that share nothing, the best that sharding the gateway across "
              "threads by sandbox could do on this host. Median of the runs; host busy = the "
              "share of all cores' time not idle.")
            w("")
            w("| figure | one pomed | two pomeds | gain (median of the runs' ratios) |")
            w("| --- | --- | --- | --- |")
            w(f"| GET, 2 sandboxes × 32 conns, req/s (host busy) | {fmt(g('shard', 'one_rps'))} "
              f"({g('shard', 'one_busy'):.0%}) | {fmt(g('shard', 'two_rps'))} "
              f"({g('shard', 'two_busy'):.0%}) | {fmt(g('shard', 'gain'))}× |")
        w("")
    if "density" in res:
        d = res["density"]
        fl = res.get("density-floor", {})
        w(f"### Density ({d['open']} open 3-twin sandboxes, pomed started with soft "
          "`ulimit -n` 1024, default pool; measured 3 s after the last create: idle pods, "
          "packed after `pod.pack_after`, 2 s)")
        w("")
        w("| figure | pomed | baseline | target | |")
        w("| --- | --- | --- | --- | --- |")
        w(f"| sandboxes opened without error | {d['open']} of {a.density} in "
          f"{fmt(d['open_s'])} s | — | 1 000 | {mark(d['open'] >= 1000)} |")
        pf = fl.get("pss_kib_per_server")
        w(f"| PSS per pod, KiB (median; mean {fmt(d['pss_kib_per_pod_mean'])}; "
          f"{d['pods']} pods) | {fmt(d['pss_kib_per_pod'])} | floor server: "
          f"{fmt(pf) if pf is not None else '—'} | ≤ 100 | "
          f"{mark(d['pss_kib_per_pod'] <= 100)} |")
        hf = fl.get("host_kib_per_set")
        unsettled = " (the host had not settled)" if None in (
            d.get("settled_s", 0), fl.get("settled_s", 0)) else ""
        w(f"| host memory per sandbox (MemAvailable drop from a settled host{unsettled}), "
          f"KiB | {fmt(d['host_kib_per_sandbox'])} (pomed RSS "
          f"{fmt(d['pomed_rss_kib_per_sandbox'])}) | floor, 3 servers ({fl.get('held', 0)} "
          f"sets held): {fmt(hf) if hf is not None else '—'} | ≤ 1 024 | "
          f"{mark(d['host_kib_per_sandbox'] <= 1024)} |")
        w(f"| pomed fds per sandbox | {fmt(d['fds_per_sandbox'])} | — | — | — |")
        w(f"| GET an issue, first call to an idle (packed) pod, ms p50 / p99 | "
          f"{fmt(d['idle_call_p50_ms'])} / {fmt(d['idle_call_p99_ms'])} | the call after it: "
          f"{fmt(d['next_call_p50_ms'])} / {fmt(d['next_call_p99_ms'])} | — | — |")
        w("")
    if "tape" in res:
        t = res["tape"]
        w(f"### Tape pages (`/_pome/events`, {t.get('rows', 0)} rows, 1 000 per page; ms, "
          "median of 20)")
        w("")
        w("| page | ms | target | |")
        w("| --- | --- | --- | --- |")
        for k, label in (("first_page_ms", "first page"), ("after_page_ms", "a middle page "
                                                                            "(after=)"),
                         ("ended_page_ms", "a page of the ended run (control API)")):
            if k in t:
                w(f"| {label} | {fmt(t[k])} | ≤ 10 | {mark(t[k] <= 10)} |")
        if "whole_tape_ms" in t:
            w(f"| the whole tape in one answer | {fmt(t['whole_tape_ms'])} | — | — |")
            w(f"| another sandbox's GET meanwhile, p99 / max | "
              f"{fmt(t['other_p99_ms_meanwhile'])} / {fmt(t['other_max_ms_meanwhile'])} | "
              f"not slowed | — |")
        w("")
    if profiles:
        w("### Profiles of this run (perf record -g, self time, symbols ≥ 2 %)")
        w("")
        for k, lines in profiles.items():
            w(f"- **{k}**: " + "; ".join(lines))
        w("")
    w("<!-- bench:end -->")
    write_block(a.out, "bench", L)


if __name__ == "__main__":
    main()
