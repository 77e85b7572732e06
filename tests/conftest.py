"""Shared fixtures: GPU/RAPIDS markers, --require-gpu, backends, frame families, data paths."""
from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
import rich.style  # noqa: F401 - rich draws a random id when first imported: not inside a hypothesis draw

from graphops.base.device import gpu_available, gpu_status, rapids_available

# Tests never use the network: a data set that is neither bundled nor in GRAPHOPS_DATA is an
# error, not a download (tests of the download path serve files from a local HTTP server).
os.environ.setdefault("GRAPHOPS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("GRAPHOPS_DATA", REPO.parent / "shared" / "data"))


def pytest_addoption(parser):
    parser.addoption("--require-gpu", action="store_true",
                     help="fail instead of skipping gpu/rapids tests when no GPU (or RAPIDS) is usable")


def _required(config) -> bool:
    return config.getoption("--require-gpu") or os.environ.get("GRAPHOPS_REQUIRE_GPU") == "1"


def pytest_collection_modifyitems(config, items):
    gpu_ok, rapids_ok = gpu_available(), rapids_available()
    wants_rapids = any("rapids" in item.keywords for item in items)
    if _required(config) and (not gpu_ok or (wants_rapids and not rapids_ok)):
        raise pytest.UsageError(f"--require-gpu: GPU check failed ({gpu_status()[1]}; "
                                f"cudf importable: {rapids_ok})")
    skip_gpu = pytest.mark.skip(reason=f"needs a usable GPU ({gpu_status()[1]})")
    skip_rapids = pytest.mark.skip(reason="needs cuDF on a usable GPU (pip install 'graphops[gpu]')")
    for item in items:
        if "gpu" in item.keywords and not gpu_ok:
            item.add_marker(skip_gpu)
        elif "rapids" in item.keywords and not rapids_ok:
            item.add_marker(skip_rapids)


@pytest.fixture(autouse=True)
def _own_run_cache(tmp_path_factory, monkeypatch):
    """Each test its own, empty run cache (a pipeline's steps are computed, not read from another
    test's run); tests of the cache itself run pipelines twice within one test."""
    monkeypatch.setenv("GRAPHOPS_RUN_CACHE", str(tmp_path_factory.mktemp("runcache")))


@pytest.fixture(autouse=True)
def _small_jaccard_parts(monkeypatch):
    """jaccard's cluster parts hold about 32 M pairs each (graphops_jaccard.dist.PART_PAIRS): the
    tests' graphs would be one part a worker. At 256 pairs a part, the calls on test clusters are
    cut into several parts a worker, as large graphs are (merges, placement, faults mid-run)."""
    try:
        import graphops_jaccard.dist as dist
    except ImportError:
        return
    monkeypatch.setattr(dist, "PART_PAIRS", 256)


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def backend(request):
    """Each own backend of graphops: cpu always, gpu where a GPU is usable."""
    return request.param


@pytest.fixture(params=["pandas", pytest.param("cudf", marks=pytest.mark.rapids)])
def frame_lib(request):
    """The frame module of each family: pandas always, cuDF on a RAPIDS host."""
    return importlib.import_module(request.param)


@pytest.fixture
def xp():
    """CuPy, for tests already marked gpu."""
    return importlib.import_module("cupy")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data folder beside the repository; tests using it skip cleanly without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder not found ({SHARED_DATA}); set GRAPHOPS_DATA to use it")
    return SHARED_DATA


@pytest.fixture
def fresh_pm(monkeypatch):
    """A plugin manager of its own, loading the installed entry points; never the global one."""
    from graphops.host.manager import make_plugin_manager

    monkeypatch.delenv("GRAPHOPS_PLUGINS", raising=False)
    monkeypatch.delenv("GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    return make_plugin_manager()


@pytest.fixture(scope="module")
def client():
    """Two CPU worker processes, no GPU visible to them (also on a GPU host): a Dask client for the
    tests of cluster calls, one cluster per test module."""
    from tests.clusters import cpu_client

    yield from cpu_client(2)
