"""`make bench`: speed and size figures for the site and the library (a report, not a test).

Everything runs on a temporary copy of the project (mkdocs.yml, docs/, snippets/, hooks/,
parallelsel/, overrides/), with that copy first on PYTHONPATH, so the real files are never touched
and concurrent edits in the working tree do not disturb a measurement. Prints a table and writes it
to build/bench.txt. Timings are wall-clock medians; on a shared machine they are noisy, and the
header says how many cores and what load the machine had.

Rows:
* cold strict build of the whole site (no cache, every block run in the build process, as in CI), and
  the same build with execution off
  (PARALLELSEL_SNIPPET_EXEC=0: each exec block renders its source tab and an empty result, the
  notebook is converted unexecuted): the floor that the theme and the rest of the build cost; their
  ratio (target <= 2.5x, issue 32). The two alternate, run by run, so a burst of load hits both;
* a full build in a fresh process with the snippet cache warm (what `make serve` pays at start-up;
  a rebuild inside the running server is cheaper: imports and in-memory memos are warm);
* save-to-served time of a prose-only edit under `make serve` (mkdocs serve --dirty with the cache on, HTTP
  polling until the new text is served), and for comparison under a full strict `serve` (no --dirty);
  the rebuild time after a library edit under `make serve` (every block runs again);
* each snippet's own cost (warm interpreter, median of 3), the slowest ten;
* `search` for Llama 3 405B on 16,384 H100s; `simulate` for interleaved p=64, m=512, chunks=2;
* the size of site/, of its largest page and of the search index (targets: 600 KiB each);
* every page's weight and the in-browser calculator's click-to-first-result time and bytes
  (benchmarks/calculator.py).

Usage: python benchmarks/run.py [--quick] [--out build/bench.txt]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COPY = ("mkdocs.yml", "docs", "snippets", "hooks", "parallelsel", "overrides", "README.md", "pyproject.toml")
PY = sys.executable
EDIT_PAGE = "mechanics/bubble.md"  # the page with the most executed blocks: a realistic edit target


# ----------------------------------------------------------------------------------------- helpers


def snapshot(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".cache")
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, dest / name)
    if (REPO / "node_modules").is_dir():  # Pyodide for the calculator page (npm, scripts/setup.sh): linked, not copied
        (dest / "node_modules").symlink_to(REPO / "node_modules", target_is_directory=True)
    return dest


def child_env(snap: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARALLELSEL_SNIPPET")}
    env.update(NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(snap), PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def fmt_s(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.0f} µs"


def fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def runs_text(xs: list[float]) -> str:
    return "[" + ", ".join(f"{x:.2f}" if x >= 0.01 else f"{x:.2g}" for x in xs) + "]"


def build(snap: Path, site: Path, *, strict: bool = True, **env: str) -> tuple[float, subprocess.CompletedProcess]:
    """Run one build; return (wall seconds, process). ``proc.cpu`` = CPU seconds of the build and its children."""
    cmd = [PY, "-m", "mkdocs", "build", "--strict" if strict else "--no-strict", "-f", str(snap / "mkdocs.yml"), "-d", str(site)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=snap, env=child_env(snap, **env), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return wall, proc


def cpu_note(cpus: list[float]) -> str:
    """CPU seconds are far less sensitive to other load on the machine than wall-clock time."""
    return f"CPU {median(cpus):.1f} s" if cpus else ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 5.0) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError):
        return None


# ------------------------------------------------------------------------------------------ builds


def _warnings(proc: subprocess.CompletedProcess, n: int = 3) -> str:
    lines = [ln.strip() for ln in proc.stderr.splitlines() if "WARNING" in ln or "Error" in ln]
    return " | ".join(lines[:n])[:600]


def bench_builds(snap: Path, work: Path, n: int, rows: list, notes: list) -> tuple[Path | None, bool]:
    """Cold and floor builds alternate, so a burst of load on the machine hits both sides of the ratio."""
    cold, floor, site_ok, strict, floor_strict = [], [], None, True, True
    cpu_cold, cpu_floor, cpu_warm = [], [], []
    for i in range(n):
        site = work / f"cold-{i}"
        t, proc = build(snap, site, strict=strict)
        if proc.returncode != 0 and strict:
            strict = False
            notes.append(f"the working tree does not build strict right now, so builds and serve are timed with --no-strict: {_warnings(proc)}")
            t, proc = build(snap, site, strict=False)
        if proc.returncode != 0:
            notes.append(f"cold build {i} FAILED (exit {proc.returncode}): {_warnings(proc)}")
        else:
            cold.append(t)
            cpu_cold.append(proc.cpu)
            if site_ok is None:
                site_ok = site
            else:
                shutil.rmtree(site, ignore_errors=True)
        t, proc = build(snap, work / "floor", strict=floor_strict, PARALLELSEL_SNIPPET_EXEC="0")
        if proc.returncode != 0 and floor_strict:
            floor_strict = False
            notes.append(f"floor build is not strict: with execution off, strict fails on e.g. {_warnings(proc)}")
            t, proc = build(snap, work / "floor", strict=False, PARALLELSEL_SNIPPET_EXEC="0")
        if proc.returncode == 0:
            floor.append(t)
            cpu_floor.append(proc.cpu)
        shutil.rmtree(work / "floor", ignore_errors=True)
    if cold:
        rows.append((f"cold {'strict ' if strict else '(--no-strict) '}build, whole site (no cache)", fmt_s(median(cold)), f"{runs_text(cold)} {cpu_note(cpu_cold)}"))
    if floor:
        rows.append((f"same, execution off (source shown, nothing run){'' if floor_strict else ' (--no-strict)'}", fmt_s(median(floor)), f"{runs_text(floor)} {cpu_note(cpu_floor)}"))
    if cold and floor:
        ratio = median(cold) / median(floor)
        cpu_ratio = median(cpu_cold) / median(cpu_floor)
        rows.append(("ratio cold / floor (target <= 2.5x)", f"{ratio:.2f}x", f"{'ok' if ratio <= 2.5 else 'OVER TARGET'}; CPU ratio {cpu_ratio:.2f}x"))

    # Warm cache: one build to fill, then timed builds that hit.
    _, proc = build(snap, work / "warm", strict=strict, PARALLELSEL_SNIPPET_CACHE="1")
    warm = []
    for _ in range(n):
        t, proc = build(snap, work / "warm", strict=strict, PARALLELSEL_SNIPPET_CACHE="1")
        if proc.returncode == 0:
            warm.append(t)
            cpu_warm.append(proc.cpu)
    stats = re.findall(r"exec blocks: (.*)", proc.stderr)
    if warm:
        rows.append(("full build in a fresh process, snippet cache warm (= serve start-up)", fmt_s(median(warm)), f"{runs_text(warm)} {cpu_note(cpu_warm)}" + (f"; {stats[-1]}" if stats else "")))
    shutil.rmtree(work / "warm", ignore_errors=True)
    return site_ok, strict


# ------------------------------------------------------------------------------------------- serve


class Server:
    def __init__(self, snap: Path, *, dirty: bool, strict: bool = True):
        self.snap, self.port = snap, free_port()
        cmd = [PY, "-m", "mkdocs", "serve", "-f", str(snap / "mkdocs.yml"), "-a", f"127.0.0.1:{self.port}"]
        cmd += [f"--watch={snap / d}" for d in ("parallelsel", "snippets", "hooks")]
        if dirty or not strict:
            cmd += ["--no-strict"]
        if dirty:
            cmd += ["--dirty"]
        self.log = open(snap / f"serve-{self.port}.log", "w+", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, cwd=snap, env=child_env(snap, PARALLELSEL_SNIPPET_CACHE="1"), stdout=self.log, stderr=subprocess.STDOUT)

    def url(self, page: str) -> str:
        path = page.removesuffix(".md").removesuffix("index")
        return f"http://127.0.0.1:{self.port}/{path}/" if path else f"http://127.0.0.1:{self.port}/"

    def wait_ready(self, timeout: float = 600) -> float:
        t = time.perf_counter()
        while time.perf_counter() - t < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mkdocs serve exited: {self.logtext()[-2000:]}")
            if http_get(self.url("index.md"), timeout=2):
                return time.perf_counter() - t
            time.sleep(0.2)
        raise RuntimeError("mkdocs serve did not come up")

    def logtext(self) -> str:
        self.log.flush()
        return (self.snap / f"serve-{self.port}.log").read_text(encoding="utf-8", errors="replace")

    def builds(self) -> int:
        text = self.logtext()
        return text.count("Documentation built in") + text.count("Aborted with")

    def cpu(self) -> float:
        """CPU seconds used so far by the server process (not its children)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def prose_edit(self, page: str, token: str, timeout: float = 300) -> tuple[float, float]:
        """Append ``token`` to ``page``; return (seconds until it is served, server CPU seconds meanwhile)."""
        path = self.snap / "docs" / page
        c0 = self.cpu()
        t0 = time.perf_counter()
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n\n{token}\n")
        while time.perf_counter() - t0 < timeout:
            html = http_get(self.url(page), timeout=5)
            if html and token in html:
                return time.perf_counter() - t0, self.cpu() - c0
            time.sleep(0.05)
        raise RuntimeError(f"edit {token} never served")

    def library_edit(self, timeout: float = 900) -> float:
        before = self.builds()
        path = self.snap / "parallelsel" / "core" / "pipeline.py"
        t0 = time.perf_counter()
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n# bench edit {time.time()}\n")
        while time.perf_counter() - t0 < timeout:
            if self.builds() > before:
                return time.perf_counter() - t0
            time.sleep(0.1)
        raise RuntimeError("library edit never rebuilt")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def bench_serve(snap: Path, n_edits: int, rows: list, notes: list, *, with_library: bool, with_dirty: bool, strict: bool) -> None:
    page = snap / "docs" / EDIT_PAGE
    original = page.read_bytes()
    warm = (snap / ".cache" / "exec").is_dir()
    srv = Server(snap, dirty=True)  # as `make serve` runs it: --dirty --no-strict, hooks/exec_blocks.py on_files
    try:
        startup = srv.wait_ready()
        notes.append(f"make serve: start-up build took {startup:.1f} s ({'snippet cache already warm' if warm else 'cold: fills the cache'})")
        time.sleep(1.5)  # let the watcher settle
        edits, cpus = [], []
        for i in range(n_edits):
            t, c = srv.prose_edit(EDIT_PAGE, f"bench-prose-edit-{i}-{time.time_ns()}")
            edits.append(t)
            cpus.append(c)
            time.sleep(1.0)
        rows.append((f"make serve: prose edit of {EDIT_PAGE} -> served (target < 1.5 s)", fmt_s(median(edits)), f"{runs_text(edits)} {cpu_note(cpus)}"))
        if with_library:
            t = srv.library_edit()
            rows.append(("make serve: library edit -> rebuilt (every page re-renders, every block re-runs)", fmt_s(t), "1 run"))
    finally:
        srv.stop()
        page.write_bytes(original)
    if with_dirty:
        srv = Server(snap, dirty=False, strict=strict)
        try:
            srv.wait_ready()
            time.sleep(1.5)
            edits, cpus = [], []
            for i in range(n_edits):
                t, c = srv.prose_edit(EDIT_PAGE, f"bench-dirty-edit-{i}-{time.time_ns()}")
                edits.append(t)
                cpus.append(c)
                time.sleep(1.0)
            rows.append(("  for comparison: serve without --dirty (a full strict rebuild per edit)", fmt_s(median(edits)), f"{runs_text(edits)} {cpu_note(cpus)}"))
        except RuntimeError as e:
            notes.append(f"full-rebuild serve comparison failed: {e}")
        finally:
            srv.stop()
            page.write_bytes(original)


# ---------------------------------------------------------------------------------------- in-process


SNIPPET_TIMER = r"""
import contextlib, io, json, os, runpy, sys, time
import matplotlib
matplotlib.use("Agg")
t = time.perf_counter()
import parallelsel, parallelsel.render, parallelsel.core.search  # the imports every snippet shares, paid once per build
import importlib, pkgutil
for m in pkgutil.iter_modules(parallelsel.render.__path__):
    importlib.import_module("parallelsel.render." + m.name)
imports = time.perf_counter() - t
paths = sorted(p for p in json.loads(sys.argv[1]))
times = {p: [] for p in paths}
for _ in range(int(sys.argv[2])):
    for p in paths:
        src = open(p, encoding="utf-8").read()
        code = compile(src, p, "exec")
        memo = getattr(getattr(parallelsel.core, "search", None), "_memo", None)
        if memo is not None:
            memo.cache_clear()  # each snippet's own searches, not the memo of an earlier run of the same
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, {"__name__": "__snippet__"})
        times[p].append(time.perf_counter() - t)
print(json.dumps({"imports": imports, "times": times}))
"""


def bench_snippets(snap: Path, repeats: int, rows: list, notes: list) -> None:
    paths = sorted(str(p) for p in (snap / "snippets").rglob("*.py"))
    proc = subprocess.run(
        [PY, "-c", SNIPPET_TIMER, json.dumps(paths), str(repeats)], cwd=snap, env=child_env(snap), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        notes.append(f"snippet timing failed: {proc.stderr[-1500:]}")
        return
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    med = {p: median(ts) for p, ts in data["times"].items()}
    total = sum(med.values())
    rows.append((f"snippets: {len(med)} files, sum of medians (warm interpreter, x{repeats})", fmt_s(total), f"+ shared imports {fmt_s(data['imports'])} once"))
    for p, t in sorted(med.items(), key=lambda kv: -kv[1])[:10]:
        rows.append((f"  {Path(p).relative_to(snap).as_posix()}", fmt_s(t), f"{100 * t / total:.0f}% of snippets"))


def timed(fn, *, min_runs: int = 3, max_runs: int = 15, budget: float = 3.0) -> list[float]:
    out: list[float] = []
    start = time.perf_counter()
    while len(out) < min_runs or (len(out) < max_runs and time.perf_counter() - start < budget):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def bench_library(snap: Path, rows: list, notes: list) -> None:
    sys.path.insert(0, str(snap))
    import parallelsel as ps  # noqa: PLC0415  (the snapshot's copy)

    try:
        from parallelsel.core.search import search  # noqa: PLC0415  (search.py may still be in progress)
    except Exception as e:  # noqa: BLE001
        search = None
        notes.append(f"search: import failed: {type(e).__name__}: {e}")
    if callable(search):
        try:
            workload = ps.Workload(ps.MODELS["llama3-405b"], global_batch=2048)  # 2048 x 8192 = 16M tokens (Llama 3 paper)
            cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2048, gpus_per_node=8, intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
            result = None

            from parallelsel.core import search as search_module  # noqa: PLC0415

            def run():
                nonlocal result
                # The search memoises a repeated call in one process; time the search, not the memo.
                getattr(getattr(search_module, "_memo", None), "cache_clear", lambda: None)()
                result = search(workload, cluster, top=10)

            ts = timed(run, budget=10.0)
            extra = ""
            if result is not None:
                considered = getattr(result, "considered", None)
                extra = f"{considered} plans considered" if considered is not None else ""
            rows.append(("search: llama3-405b, global batch 2048, 2048x8 H100 (top 10)", fmt_s(median(ts)), f"first (cold) {fmt_s(ts[0])}; {runs_text(ts)} {extra}".strip()))
        except Exception as e:  # noqa: BLE001  (a report, not a test: say what failed and go on)
            rows.append(("search: llama3-405b on 16,384 H100", "not available", f"{type(e).__name__}: {e}"[:120]))
    else:
        rows.append(("search: llama3-405b on 16,384 H100", "not available", "parallelsel.core.search.search missing"))

    try:  # one estimate, the unit a search repeats tens of thousands of times (was a timed test in test_estimate.py)
        workload = ps.Workload(ps.MODELS["llama3-405b"], global_batch=2048)
        cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2048, intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
        plan = ps.Plan(dp=128, tp=8, pp=16, zero=1, sp=True, schedule="interleaved", chunks=2, recompute="selective")
        ts = timed(lambda: [ps.estimate(workload, plan, cluster) for _ in range(100)])
        rows.append(("estimate: llama3-405b dp128 tp8 pp16, per call", fmt_s(median(ts) / 100), f"{runs_text(ts)} (x100 calls)"))
    except Exception as e:  # noqa: BLE001
        rows.append(("estimate: llama3-405b, per call", "not available", f"{type(e).__name__}: {e}"[:120]))

    try:
        from parallelsel import pipeline  # noqa: PLC0415

        sched = pipeline.schedule("interleaved", 64, 512, chunks=2)
        ts_sched = timed(lambda: pipeline.schedule("interleaved", 64, 512, chunks=2))
        timeline = None

        def sim():
            nonlocal timeline
            timeline = pipeline.simulate(sched)

        ts = timed(sim)
        rows.append(("simulate: interleaved p=64 m=512 chunks=2", fmt_s(median(ts)), f"{runs_text(ts)} bubble_fraction={timeline.bubble_fraction:.4f}"))
        rows.append(("  schedule() for the same", fmt_s(median(ts_sched)), runs_text(ts_sched)))
    except Exception as e:  # noqa: BLE001
        rows.append(("simulate: interleaved p=64 m=512 chunks=2", "not available", f"{type(e).__name__}: {e}"[:120]))


# -------------------------------------------------------------------------------------------- size


PAGE_BUDGET = 600 * 1024
"""Issue 33's target for the largest page's HTML and for the search index, in bytes (600 KiB)."""

_ASSET = re.compile(r'(?:<script[^>]*\ssrc|<link[^>]*rel="stylesheet"[^>]*\shref|<img[^>]*\ssrc)="([^"#?]+)', re.I)


def bench_size(site: Path | None, rows: list) -> None:
    if site is None or not site.is_dir():
        rows.append(("site/ size", "-", "no successful build"))
        return
    files = [p for p in site.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    no_search = sum(p.stat().st_size for p in files if "search" not in p.parts)
    rows.append(("site/ total", fmt_bytes(total), f"{len(files)} files; {fmt_bytes(no_search)} without search/"))
    pages = sorted((p for p in files if p.suffix == ".html"), key=lambda p: -p.stat().st_size)
    big = pages[0]
    html = big.read_text(encoding="utf-8", errors="replace")
    assets = set()
    for ref in _ASSET.findall(html):
        if "://" in ref or ref.startswith("//") or ref.startswith("data:"):
            continue
        target = (big.parent / ref).resolve()
        if target.is_file():
            assets.add(target)
    with_assets = big.stat().st_size + sum(a.stat().st_size for a in assets)
    over = "ok" if big.stat().st_size <= PAGE_BUDGET else "OVER TARGET"
    rows.append((f"largest page: {big.relative_to(site).as_posix()}", fmt_bytes(big.stat().st_size), f"{over} (target <= {fmt_bytes(PAGE_BUDGET)} of HTML); {fmt_bytes(with_assets)} with the {len(assets)} css/js/img files it loads (uncompressed)"))
    index = site / "search" / "search_index.json"
    if index.is_file():
        size = index.stat().st_size
        rows.append(("search index (every page fetches it)", fmt_bytes(size),
                     f"{'ok' if size <= PAGE_BUDGET else 'OVER TARGET'} (target <= {fmt_bytes(PAGE_BUDGET)})"))
    for p in pages[1:3]:
        rows.append((f"  next: {p.relative_to(site).as_posix()}", fmt_bytes(p.stat().st_size), ""))


# ------------------------------------------------------------------------------------------- table


def render(rows: list, notes: list, header: list[str]) -> str:
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    out = header + ["", f"{'measure':<{w0}}  {'median':>{w1}}  runs / notes", f"{'-' * w0}  {'-' * w1}  {'-' * 30}"]
    out += [f"{a:<{w0}}  {b:>{w1}}  {c}" for a, b, c in rows]
    if notes:
        out += ["", "notes:"] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one run per build and 3 serve edits; skip the library edit and the full-rebuild serve comparison")
    ap.add_argument("--out", default=str(REPO / "build" / "bench.txt"))
    ap.add_argument("--only", default="builds,serve,snippets,library,size,calculator", help="comma-separated sections")
    args = ap.parse_args()
    only = set(args.only.split(","))
    n_builds = 1 if args.quick else 3

    load0 = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    rows: list = []
    notes: list = []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parallelsel-bench-") as tmp:
        work = Path(tmp)
        snap = snapshot(work / "repo")
        site, strict = None, True
        if "builds" in only:
            site, strict = bench_builds(snap, work, n_builds, rows, notes)
        if "serve" in only:
            try:
                bench_serve(snap, 3 if args.quick else 5, rows, notes, with_library=not args.quick, with_dirty=not args.quick, strict=strict)
            except RuntimeError as e:
                notes.append(f"serve benchmark failed: {e}")
        if "snippets" in only:
            bench_snippets(snap, 3, rows, notes)
        if "library" in only:
            bench_library(snap, rows, notes)
        if "size" in only:
            if site is None:
                _, proc = build(snap, work / "size-site", strict=False)
                site = work / "size-site" if proc.returncode == 0 else None
            bench_size(site, rows)
        if "calculator" in only:
            from calculator import bench_calculator

            if site is None:
                _, proc = build(snap, work / "size-site", strict=False)
                site = work / "size-site" if proc.returncode == 0 else None
            try:
                bench_calculator(site, rows, notes)
            except Exception as e:  # a report, not a test: say what failed and keep the other figures
                notes.append(f"calculator benchmark failed: {type(e).__name__}: {e}")
    load1 = os.getloadavg()
    header = [
        f"parallelsel benchmarks  {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC  commit {commit} (+ working tree)",
        f"machine: {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'}), "
        f"load average {load0[0]:.1f} at start / {load1[0]:.1f} at end; Python {platform.python_version()}",
        f"wall-clock medians (CPU seconds beside them are less load-sensitive); builds x{n_builds}; the machine is shared, "
        f"so treat wall-clock differences under ~20% as noise; "
        f"benchmark took {time.perf_counter() - t_start:.0f} s",
    ]
    table = render(rows, notes, header)
    print(table, end="")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table, encoding="utf-8")
    print(f"(written to {out.relative_to(REPO) if out.is_relative_to(REPO) else out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
