"""Time the README's and the guides' ```python examples at full size (no HARMONIUM_EXAMPLE_SCALE).

Each block runs alone in a fresh interpreter in a temporary directory, as a newcomer would paste
it; blocks marked ``<!-- example: skip: ... -->`` are skipped. One JSON line per block goes to
benchmarks/examples/results/doc-examples.jsonl (file, line, wall and CPU seconds, exit status, cores, load,
scale). On a shared machine quote the CPU seconds: the wall time grows with the other load.

    python benchmarks/doc_examples.py                       # every block, full size
    python benchmarks/doc_examples.py --only README.md:115  # one block
    python benchmarks/doc_examples.py --scale 5000          # a cheaper partial run
    taskset -c 0,1 python benchmarks/doc_examples.py        # as the docs state it: 2 cores

The test suite runs the same blocks at HARMONIUM_EXAMPLE_SCALE=400
(tests/integration/test_doc_examples.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "examples" / "results" / "doc-examples.jsonl"
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
_SKIP = re.compile(r"<!--\s*example:\s*skip:\s*(.*?)\s*-->\s*$")


def blocks():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text()
        for m in _FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            yield f"{path.relative_to(ROOT)}:{line}", m.group(1), bool(_SKIP.search(before))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="file:line of a block (repeatable)")
    ap.add_argument("--scale", type=int, default=None, help="HARMONIUM_EXAMPLE_SCALE (default: full size)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per block")
    args = ap.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HARMONIUM_EXAMPLE_SCALE", None)
    if args.scale is not None:
        env["HARMONIUM_EXAMPLE_SCALE"] = str(args.scale)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for name, code, skip in blocks():
        if (args.only and name not in args.only) or skip:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                proc = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, timeout=args.timeout,
                                      capture_output=True, text=True)
                rc, tail = proc.returncode, proc.stderr[-500:]
            except subprocess.TimeoutExpired:
                rc, tail = None, "timeout"
            seconds = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        rec = {"block": name, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "returncode": rc,
               "cores": cores, "load_1min_after": load,
               "scale": args.scale or "full", "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
        print(json.dumps(rec), flush=True)
        if rc != 0:
            print(tail, file=sys.stderr)
        OUT.parent.mkdir(parents=True, exist_ok=True)
        with OUT.open("a") as f:
            f.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
