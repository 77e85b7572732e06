"""The run cache: an unchanged pipeline computes nothing the second time and writes the same files;
an edited step is computed again with the steps downstream of it only; a damaged entry is never
returned; runs sharing the cache at once do not damage it; list and clear."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import graphops as go
from graphops.pipeline import cache

FLOW = """\
version: 1
name: p
graphs:
  karate: {dataset: karate}
  rmat: {generate: {kind: rmat, scale: 8, edge_factor: 4, seed: 3}}
  strong: {from_step: sim, src: first, dst: second, weight: jaccard_coeff, where: {jaccard_coeff: {ge: 0.3}}}
steps:
  - {id: sim, algorithm: jaccard, inputs: {graph: karate}, backend: cpu, output: sim.parquet}
  - {id: parts, algorithm: describe, inputs: {graph: strong}, backend: cpu, output: strong.csv}
  - {id: other, algorithm: describe, inputs: {graph: rmat}, backend: cpu, output: other.csv}
"""


def write(folder, text=FLOW):
    path = folder / "p.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def statuses(summary):
    return {s.id: s.status for s in summary.steps}


def test_a_second_run_computes_nothing_and_writes_the_same_files(tmp_path, monkeypatch):
    path = write(tmp_path)
    first = go.run_pipeline(path, out=tmp_path / "a")
    assert statuses(first) == {"sim": "ok", "parts": "ok", "other": "ok"}
    assert all(s.cache_key and s.details["cache"] == "written" for s in first.steps)
    import graphops.engine.dispatch as dispatch

    monkeypatch.setattr(dispatch, "execute", lambda *a, **k: pytest.fail("a cached step was computed"))
    import graphops.pipeline.run as run

    monkeypatch.setattr(run, "execute", lambda *a, **k: pytest.fail("a cached step was computed"))
    second = go.run_pipeline(path, out=tmp_path / "b")
    assert statuses(second) == {"sim": "cached", "parts": "cached", "other": "cached"}
    assert [s.cache_key for s in second.steps] == [s.cache_key for s in first.steps]
    assert second.steps[0].backend == "cpu" and second.steps[0].reason.startswith("cached: computed")
    for name in ("sim.parquet", "strong.csv", "other.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    summary = json.loads((tmp_path / "b" / "p.summary.json").read_text())
    assert [s["status"] for s in summary["steps"]] == ["cached"] * 3 and summary["steps"][0]["cache_key"]


def test_an_edited_step_is_computed_again_with_what_reads_it_only(tmp_path):
    path = write(tmp_path)
    go.run_pipeline(path, out=tmp_path / "a")
    edited = write(tmp_path, FLOW.replace("backend: cpu, output: sim.parquet",
                                          "backend: cpu, params: {top_k: 30}, output: sim.parquet"))
    again = go.run_pipeline(edited, out=tmp_path / "b")
    assert statuses(again) == {"sim": "ok", "parts": "ok", "other": "cached"}
    where = write(tmp_path, FLOW.replace("{ge: 0.3}", "{ge: 0.4}"))  # the graph made from sim changes: parts only
    assert statuses(go.run_pipeline(where, out=tmp_path / "c")) == {"sim": "cached", "parts": "ok", "other": "cached"}
    data = tmp_path / "karate.csv"
    data.write_text("a,b\n1,2\n2,3\n")
    text = FLOW.replace("{dataset: karate}", "{path: karate.csv}")
    assert statuses(go.run_pipeline(write(tmp_path, text), out=tmp_path / "d")) == {"sim": "ok", "parts": "ok",
                                                                                     "other": "cached"}
    data.write_text("a,b\n1,2\n2,4\n")  # the file's content changed, not its name
    assert statuses(go.run_pipeline(write(tmp_path, text), out=tmp_path / "e")) == {"sim": "ok", "parts": "ok",
                                                                                     "other": "cached"}
    assert statuses(go.run_pipeline(write(tmp_path, text), out=tmp_path / "f", cache=False)) == {
        "sim": "ok", "parts": "ok", "other": "ok"}


@pytest.mark.parametrize("damage", ["payload", "entry", "missing", "truncated"])
def test_a_damaged_entry_is_computed_again_and_replaced(tmp_path, damage, caplog):
    path = write(tmp_path)
    first = go.run_pipeline(path, out=tmp_path / "a")
    key = first.steps[0].cache_key
    folder = cache.cache_root() / key[:2] / key
    payload = next(p for p in folder.iterdir() if p.name.startswith("result"))
    if damage == "payload":
        payload.write_bytes(payload.read_bytes()[:-3] + b"xyz")
    elif damage == "entry":
        (folder / "entry.json").write_text("{not json")
    elif damage == "missing":
        payload.unlink()
    else:
        payload.write_bytes(payload.read_bytes()[: len(payload.read_bytes()) // 2])
    again = go.run_pipeline(path, out=tmp_path / "b")
    assert statuses(again)["sim"] == "ok" and statuses(again)["other"] == "cached"
    assert "is damaged" in caplog.text and "computed again" in caplog.text
    assert (tmp_path / "a" / "sim.parquet").read_bytes() == (tmp_path / "b" / "sim.parquet").read_bytes()
    assert statuses(go.run_pipeline(path, out=tmp_path / "c"))["sim"] == "cached"  # replaced by a whole one


def test_runs_sharing_the_cache_at_once_leave_it_whole(tmp_path):
    """Four processes run the same pipeline against one cache at the same moment: each succeeds, and
    every entry left is whole and read back by a fifth run."""
    path = write(tmp_path)
    env = {**os.environ, "GRAPHOPS_RUN_CACHE": os.environ["GRAPHOPS_RUN_CACHE"]}
    code = ("import sys, graphops as go; s = go.run_pipeline(sys.argv[1], out=sys.argv[2]); "
            "print(','.join(r.status for r in s.steps))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(tmp_path / f"o{i}")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [(p.returncode, o[1][-500:]) for p, o in zip(procs, outs)]
    assert {len(cache.entries())} == {3}
    assert statuses(go.run_pipeline(path, out=tmp_path / "last")) == {"sim": "cached", "parts": "cached",
                                                                      "other": "cached"}
    assert not list(Path(cache.cache_root()).glob("*/.tmp-*"))
    for i in range(4):
        assert (tmp_path / f"o{i}" / "strong.csv").read_bytes() == (tmp_path / "last" / "strong.csv").read_bytes()


def test_list_clear_and_what_is_not_cached(tmp_path, capsys, monkeypatch):
    from graphops.cli import main

    (tmp_path / "keep.txt").write_text("not the cache's")  # a folder shared with other files: only entries go
    monkeypatch.setenv("GRAPHOPS_RUN_CACHE", str(tmp_path))
    (tmp_path / "x").mkdir()
    path = write(tmp_path / "x")
    go.run_pipeline(path, out=tmp_path / "a")
    assert main(["cache", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(e["algorithm"] for e in listed["entries"]) == ["describe", "describe", "jaccard"]
    assert main(["cache", "clear"]) == 0
    assert "removed 3 cached result(s)" in capsys.readouterr().out
    assert cache.entries() == [] and (tmp_path / "keep.txt").read_text() == "not the cache's"
    assert main(["run", str(path), "--out", str(tmp_path / "b"), "--no-cache"]) == 0
    assert cache.entries() == []
    key = cache.step_key(go.host.registry.get_registry().algorithm("describe"), {"f": object()}, "cpu", {})
    assert isinstance(key, str) and "not plain data" in key
    assert cache.store(cache.StepKey("ab" * 20, {}), object(), {}).startswith("its result (a object)")


def test_every_result_kind_comes_back_as_it_went_in():
    import pandas as pd

    for i, result in enumerate([pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), np.arange(6.0).reshape(2, 3),
                                {"gram": np.eye(2), "diag": np.ones(2)}]):
        key = cache.StepKey(f"{i:02d}" * 20, {"n": i})
        assert cache.store(key, result, {"backend": "cpu"}) is None
        back, entry = cache.load(key.key)
        assert entry["parts"] == {"n": i} and entry["backend"] == "cpu"
        if isinstance(result, dict):
            assert set(back) == set(result) and all(np.array_equal(back[k], result[k]) for k in result)
        elif isinstance(result, np.ndarray):
            assert np.array_equal(back, result)
        else:
            pd.testing.assert_frame_equal(back, result)


def test_the_summary_and_parquet_outputs_say_what_made_them(tmp_path):
    import pyarrow.parquet as pq

    summary = go.run_pipeline(write(tmp_path), out=tmp_path / "a")
    about = json.loads((tmp_path / "a" / "p.summary.json").read_text())["provenance"]
    assert about["graphops"] == go.__version__ and about["python"] and about["command"]
    assert {"numpy", "pandas", "numba"} <= set(about["packages"])
    assert set(about["plugins"]) == {"jaccard", "describe"}
    assert set(about["inputs"]) == {"karate", "rmat", "strong"} and all(len(d) == 32 for d in about["inputs"].values())
    kept = json.loads(pq.read_metadata(tmp_path / "a" / "sim.parquet").metadata[b"graphops"])
    assert kept["step"] == "sim" and kept["cache_key"] == summary.steps[0].cache_key
    assert kept["packages"]["pandas"] == about["packages"]["pandas"] and kept["inputs"] == {
        "karate": about["inputs"]["karate"]}
    again = go.run_pipeline(write(tmp_path), out=tmp_path / "b")  # the same inputs: the same digests
    assert again.provenance["inputs"] == summary.provenance["inputs"]


def _keys(tmp_path, monkeypatch) -> set[str]:
    """The run's step keys (they change with graphops' code), from a cache of their own."""
    monkeypatch.setenv("GRAPHOPS_RUN_CACHE", str(tmp_path / "probe"))
    return {s.cache_key for s in go.run_pipeline(write(tmp_path), out=tmp_path / "probe-out").steps}


def test_clear_never_follows_a_link_nor_takes_what_is_not_an_entry(tmp_path, monkeypatch):
    root, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    root.mkdir()
    (elsewhere / ("a" * 40)).mkdir(parents=True)
    (elsewhere / ("a" * 40) / "f").write_text("keep")
    taken = {k[:2] for k in _keys(tmp_path, monkeypatch)} | {"00", "ff"}
    shard = next(f"{i:02x}" for i in range(256) if f"{i:02x}" not in taken)
    (root / shard).symlink_to(elsewhere)  # a shard that is a link, not one of the run's: never entered
    (root / "00" / ".tmp-important").mkdir(parents=True)
    (root / "00" / ".tmp-important" / "thesis.tex").write_text("keep")
    (root / "ff" / ("0" * 40)).mkdir(parents=True)
    (root / "ff" / ("0" * 40) / "data.txt").write_text("keep")  # a key-shaped folder of something else
    monkeypatch.setenv("GRAPHOPS_RUN_CACHE", str(root))
    go.run_pipeline(write(tmp_path), out=tmp_path / "a")
    assert cache.clear() == 3 and cache.entries() == []
    for kept in (elsewhere / ("a" * 40) / "f", root / "00" / ".tmp-important" / "thesis.tex",
                 root / "ff" / ("0" * 40) / "data.txt"):
        assert kept.read_text() == "keep"


def test_an_entry_is_never_written_through_a_shard_that_is_a_link(tmp_path, monkeypatch):
    """A shard folder that is a link (to anywhere) is not written through: the step runs, is not
    kept, and nothing appears where the link points."""
    keys = _keys(tmp_path, monkeypatch)
    root, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    for k in keys:
        if not (root / k[:2]).exists():
            (root / k[:2]).symlink_to(elsewhere)
    monkeypatch.setenv("GRAPHOPS_RUN_CACHE", str(root))
    done = go.run_pipeline(write(tmp_path), out=tmp_path / "a")
    assert statuses(done) == {"sim": "ok", "parts": "ok", "other": "ok"}
    assert list(elsewhere.iterdir()) == [] and cache.entries() == []
    assert all(s.details["cache"] != "written" for s in done.steps), [s.details["cache"] for s in done.steps]


def test_an_entry_whose_result_is_a_fifo_or_tampered_is_not_read(tmp_path):
    path = write(tmp_path)
    first = go.run_pipeline(path, out=tmp_path / "a")
    key = first.steps[0].cache_key
    folder = cache.cache_root() / key[:2] / key
    payload = folder / "result.parquet"
    payload.unlink()
    os.mkfifo(payload)  # reading it would wait forever
    again = go.run_pipeline(path, out=tmp_path / "b")
    assert statuses(again)["sim"] == "ok"
    other = first.steps[2].cache_key  # describe's: replaced by a frame without its columns, SHA-256 updated
    folder = cache.cache_root() / other[:2] / other
    import hashlib
    import io

    import pandas as pd

    buf = io.BytesIO()
    pd.DataFrame({"x": [1]}).to_parquet(buf, index=False)
    (folder / "result.parquet").write_bytes(buf.getvalue())
    entry = json.loads((folder / "entry.json").read_text())
    entry.update(sha256=hashlib.sha256(buf.getvalue()).hexdigest(), bytes=len(buf.getvalue()))
    (folder / "entry.json").write_text(json.dumps(entry))
    third = go.run_pipeline(path, out=tmp_path / "c")
    assert statuses(third)["other"] == "ok"
    assert (tmp_path / "a" / "other.csv").read_bytes() == (tmp_path / "c" / "other.csv").read_bytes()


def test_what_cannot_be_digested_is_said_not_raised():
    import pandas as pd

    from graphops.engine.digest import Undigestible, digest

    with pytest.raises(Undigestible, match="a column of list values"):
        digest(pd.DataFrame({"a": [[1], [2]]}))
    assert digest(pd.DataFrame({"a": ["x", None]})) == digest(pd.DataFrame({"a": ["x", None]}))


def test_a_key_holds_the_code_of_graphops_and_of_the_plugin(monkeypatch):
    """An edit to graphops' engine within one version, or to the plugin's code, gives another key
    (the old result is not served for the new code)."""
    from graphops.pipeline import cache

    algo = go.host.registry.get_registry().algorithm("describe")
    before = cache.step_key(algo, {}, "cpu", {})
    digests = {"graphops": "core-edited"}
    real = cache._code_digest
    monkeypatch.setattr(cache, "_code_digest", lambda m: digests.get(m.split(".")[0]) or real(m))
    core_edited = cache.step_key(algo, {}, "cpu", {})
    digests[algo.backends["cpu"].target.split(":")[0].split(".")[0]] = "plugin-edited"
    plugin_edited = cache.step_key(algo, {}, "cpu", {})
    assert len({before.key, core_edited.key, plugin_edited.key}) == 3
    assert before.parts["core"] and core_edited.parts["core"] == "core-edited"
