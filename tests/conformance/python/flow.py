"""The steps of a client flow (pygithub_flow.py, stripe_python_flow.py): each step is a name and
a call; it prints "ok   NAME VALUE" or "FAIL NAME ERROR", and finish() prints "passed N" and
exits 1 when a step failed."""
import sys

_ok = 0
_failed = 0


def step(name, f):
    global _ok, _failed
    try:
        v = f()
        print("ok  ", name, (repr(v)[:80] if v is not None else ""))
        _ok += 1
    except Exception as e:  # a client's own error is the step's failure, said and counted
        _failed += 1
        print("FAIL", name, type(e).__name__, str(e)[:200])


def finish():
    print("passed", _ok)
    sys.exit(1 if _failed else 0)
