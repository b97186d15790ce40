"""The decision path runs without numpy and matplotlib (issue 21: the calculator page runs it in Pyodide).

A child interpreter installs a meta-path finder that refuses ``numpy`` and ``matplotlib`` (as a Python
without them would), runs the public decision API and the table renderers, and prints what it got as
JSON; this process, which has numpy, computes the same things and the two must be equal. The pipeline
simulator's pure-Python path is also checked against the published closed forms inside the child.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

BLOCKER = textwrap.dedent(
    """
    import importlib.abc, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("numpy", "matplotlib"):
                raise ImportError(f"blocked for this test: {name}")
            return None

    sys.meta_path.insert(0, Block())
    """
)

# Workloads that exercise every branch of the decision path: fits on one GPU, needs sharding or
# model parallelism across nodes, and fits nowhere (closest miss).
CASES = [
    ("llama2-7b", "a100-80gb", 1, 8, 64),
    ("llama3-70b", "a100-80gb", 8, 8, 512),
    ("gpt3-175b", "a100-40gb", 1, 2, 8),
]

PIPELINES = [("gpipe", 4, 8, 1), ("1f1b", 4, 8, 1), ("1f1b", 3, 5, 1), ("interleaved", 4, 8, 2), ("zb-h1", 4, 8, 1),
             ("zb-h1", 4, 3, 1), ("looped-bfs", 4, 6, 2), ("interleaved-zb", 4, 8, 2), ("zbv", 4, 5, 2), ("dualpipev", 4, 9, 2)]

RUN = textwrap.dedent(
    """
    import json, sys
    import parallelsel as ps
    from parallelsel import pipeline as pl
    from parallelsel.render.matrix_tables import excluded_table, funnel_table, matrix_table, top_table

    def decision(cases, pipelines):
        out = {"search": [], "matrix": [], "pipeline": [], "misc": {}}
        for model, device, nodes, gpn, batch in cases:
            w = ps.Workload(ps.MODELS[model], global_batch=batch)
            c = ps.Cluster(ps.DEVICES[device], nodes=nodes, gpus_per_node=gpn)
            r = ps.search(w, c, top=5)
            out["search"].append({
                "labels": [x.plan.label() for x in r.results],
                "steps": [x.estimate.step.total for x in r.results],
                "memory": [x.estimate.memory.total for x in r.results],
                "why": [[str(y) for y in x.why] for x in r.results],
                "excluded": {str(k): v for k, v in dict(r.excluded).items()},
                "considered": r.considered,
                "tables": [funnel_table(r), excluded_table(r)] + ([top_table(r)] if r.results else []),
            })
            rows = ps.selection_matrix(w, c)
            out["matrix"].append({
                "verdicts": [(row.strategy, row.verdict.value) for row in rows],
                "reasons": [[str(x) for x in row.reasons] for row in rows],
                "table": matrix_table(rows),
            })
        for kind, p, m, v in pipelines:
            tl = pl.simulate(pl.schedule(kind, p, m, chunks=v), forward=1.0, backward=2.0, p2p=0.25)
            out["pipeline"].append({
                "end": [float(x) for x in tl.end], "start": [float(x) for x in tl.start],
                "kind": [str(x) for x in tl.kind], "peak": [int(x) for x in tl.peak_inflight],
                "busy": [float(x) for x in tl.busy], "makespan": tl.makespan,
                "fraction": tl.bubble_fraction, "overhead": tl.bubble_overhead,
            })
        states = ps.memory.model_states(7e9, dp=8, zero=3)
        out["misc"] = {
            "states": [states.params, states.grads, states.optimizer, states.total],
            "act": ps.memory.activations_per_layer(ps.MODELS["llama2-7b"], 2, tp=2, sp=True, recompute="selective"),
            "comm": ps.comm.collective_time("all-reduce", 2**30, 8, ps.LINKS["nvlink3"]),
            "closed": pl.bubble_fraction(4, 8, 2),
        }
        return out
    """
)


def _child(script: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def without_numpy() -> dict:
    script = BLOCKER + RUN + textwrap.dedent(
        f"""
        out = decision({CASES!r}, {PIPELINES!r})
        # The simulator's pure-Python path against the closed forms (Narayanan et al. 2021 §2.2):
        # uniform 1F1B/GPipe idle (p-1)(t_f+t_b) per stage, bubble fraction (p-1)/(m+p-1).
        for kind in ("gpipe", "1f1b"):
            for p, m in ((1, 1), (2, 3), (4, 8), (8, 13)):
                tl = pl.simulate(pl.schedule(kind, p, m), forward=1.0, backward=2.0)
                assert isinstance(tl.end, tuple), type(tl.end)
                assert all(abs(x - (p - 1) * 3.0) < 1e-9 for x in tl.idle), (kind, p, m, tl.idle)
                assert abs(tl.bubble_fraction - pl.bubble_fraction(p, m)) < 1e-12
        tl = pl.simulate(pl.schedule("zb-h1", 4, 8), forward=1.0, backward=1.0, weight=1.0)
        assert all(abs(x - pl.zb_h1_bubble_time(4, 1.0, 1.0, 1.0)) < 1e-9 for x in tl.idle), tl.idle
        out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "matplotlib"))
        print(json.dumps(out))
        """
    )
    return _child(script)


@pytest.fixture(scope="module")
def with_numpy() -> dict:
    namespace: dict = {}
    exec(RUN, namespace)  # noqa: S102 - the same code the child runs, here with numpy importable
    return json.loads(json.dumps(namespace["decision"](CASES, PIPELINES)))


def test_nothing_of_numpy_or_matplotlib_was_loaded(without_numpy):
    assert without_numpy["loaded"] == []


def test_search_equals_the_numpy_run(without_numpy, with_numpy):
    assert without_numpy["search"] == with_numpy["search"]
    labels = [s["labels"] for s in with_numpy["search"]]
    assert labels[0] and labels[1] and labels[2] == []  # the third case fits nowhere


def test_selection_matrix_equals_the_numpy_run(without_numpy, with_numpy):
    assert without_numpy["matrix"] == with_numpy["matrix"]


def test_pipeline_without_numpy_equals_the_numpy_run(without_numpy, with_numpy):
    # Bit-for-bit: one code path (pipeline._links and the longest-path loop); numpy only holds the arrays handed out.
    assert without_numpy["pipeline"] == with_numpy["pipeline"]
    assert without_numpy["misc"] == with_numpy["misc"]


def test_import_does_not_load_numpy_or_matplotlib():
    """numpy is imported only for the arrays a Timeline hands out, not by the decision path."""
    script = textwrap.dedent(
        """
        import json, sys
        import parallelsel as ps
        from parallelsel.render import matrix_tables, tables
        w = ps.Workload(ps.MODELS["llama2-7b"], global_batch=64)
        c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1, gpus_per_node=8)
        ps.search(w, c, top=3); ps.selection_matrix(w, c); ps.pipeline.schedule("1f1b", 4, 8)
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "matplotlib"))))
        """
    )
    assert _child(script) == []
