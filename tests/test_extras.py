"""The install extras in pyproject.toml: [gpu] is one RAPIDS release series with the Dask GPU
packages in it, so `pip install 'graphops[gpu,dask]'` gets a multi-GPU set that works together;
the base install and [dask] hold no GPU package, so they install on a machine without CUDA."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (requires-python allows it): the same parser, as a package
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]

# RAPIDS packages released with the RAPIDS version (YY.MM) and ucxx's, released beside it (0.NN).
RAPIDS = ("cudf", "dask-cudf", "cugraph", "pylibcugraph", "pylibraft", "raft-dask", "dask-cuda",
          "rapids-dask-dependency", "cuml", "pylibcudf", "libcudf", "rmm", "kvikio")
UCXX = ("ucxx", "distributed-ucxx", "libucxx")
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$")


def _parse(requirement: str) -> tuple[str, str]:
    """``(name without the CUDA suffix, lower case; its version specifier)``."""
    name, spec = _REQ.match(requirement).groups()
    return re.sub(r"-cu\d+$", "", name.lower().replace("_", "-")), spec.replace(" ", "")


def is_gpu_package(requirement: str) -> bool:
    name = _REQ.match(requirement).group(1).lower().replace("_", "-")
    base, _ = _parse(requirement)
    return (bool(re.search(r"-cu\d+$|^cupy-cuda|^nvidia-|^cuda-", name)) or base in RAPIDS or base in UCXX
            or base.startswith(("rapids-", "dask-cu")))


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _series(spec: str) -> str | None:
    """``26.10`` of ``==26.10.*``; None when the specifier is not one series."""
    m = re.fullmatch(r"==(\d+\.\d+)\.\*", spec)
    return m and m.group(1)


def test_the_gpu_extra_is_one_rapids_series():
    gpu = dict(_parse(r) for r in _project()["optional-dependencies"]["gpu"])
    rapids = {n: s for n, s in gpu.items() if n in RAPIDS}
    ucxx = {n: s for n, s in gpu.items() if n in UCXX}
    assert {"cudf", "cugraph", "pylibraft", "dask-cudf", "dask-cuda", "rapids-dask-dependency"} <= set(rapids)
    assert "distributed-ucxx" in ucxx
    assert {n: _series(s) for n, s in rapids.items()} == dict.fromkeys(rapids, "26.10")
    assert {n: _series(s) for n, s in ucxx.items()} == dict.fromkeys(ucxx, "0.52")  # ucxx of RAPIDS 26.10


def test_the_gpu_extra_is_cuda_13_wheels():
    names = [_REQ.match(r).group(1) for r in _project()["optional-dependencies"]["gpu"]]
    suffixed = [n for n in names if _parse(n)[0] in RAPIDS + UCXX and _parse(n)[0] not in
                ("dask-cuda", "rapids-dask-dependency")]  # those two are pure Python, one wheel for all CUDAs
    assert suffixed and all(n.endswith("-cu13") for n in suffixed), names
    assert any(n.startswith("cupy-cuda13x") for n in names)


@pytest.mark.parametrize("where", ["dependencies", "dask"])
def test_no_gpu_package_outside_the_gpu_extra(where):
    project = _project()
    reqs = project["dependencies"] if where == "dependencies" else project["optional-dependencies"][where]
    assert reqs and not [r for r in reqs if is_gpu_package(r)]
    if where == "dask":
        assert [_parse(r)[0] for r in reqs] == ["distributed"]  # CPU clusters; GPU ones: [gpu,dask]


@pytest.mark.parametrize("requirement, gpu", [
    ("cudf-cu13==26.10.*", True), ("dask-cuda==26.10.*", True), ("distributed-ucxx-cu13==0.52.*", True),
    ("cupy-cuda13x>=14.0.1", True), ("rapids-dask-dependency==26.10.*", True), ("raft_dask_cu12", True),
    ("distributed>=2024.1", False), ("dask[dataframe]>=2024.1", False), ("numba>=0.59", False),
    ("pandas>=2.1; python_version>='3.10'", False),
])
def test_the_check_knows_a_gpu_package(requirement, gpu):
    assert is_gpu_package(requirement) is gpu


def test_the_series_check_catches_a_mixed_pin():
    assert _series("==26.10.*") == "26.10"
    assert _series(">=26.10") is None and _series("==26.10.2") is None and _series("==26.08.*") == "26.08"
