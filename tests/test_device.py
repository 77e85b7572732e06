"""Device detection never raises and imports nothing heavy until asked."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from graphops.base.device import Device, device_of, gpu_available, gpu_status, require
from graphops.errors import MissingDependencyError


def test_gpu_checks_never_raise():
    assert isinstance(gpu_available(), bool)
    ok, why = gpu_status()
    assert isinstance(why, str) and why


def test_device_of_host_objects():
    import pandas as pd

    assert device_of(np.zeros(2)) is Device.CPU
    assert device_of(pd.DataFrame()) is Device.CPU


def test_device_parse():
    assert Device.parse("GPU") is Device.GPU
    with pytest.raises(ValueError, match="device must be 'cpu' or 'gpu'; got 'tpu'"):
        Device.parse("tpu")


def test_missing_module_names_the_extra():
    with pytest.raises(MissingDependencyError, match="pip install 'graphops\\[gpu\\]'"):
        require("cudf.nonexistent_module", "GPU frames")


def test_import_graphops_is_light():
    code = ("import sys, graphops, graphops.cli\n"
            "from graphops.host.registry import get_registry\n"
            "reg = get_registry(); assert 'describe' in reg.algorithms\n"
            "heavy = [m for m in ('cupy', 'cudf', 'cugraph', 'numba', 'networkx', 'scipy') if m in sys.modules]\n"
            "kernels = [m for m in sys.modules if m.startswith('graphops_') and m.count('.')]\n"
            "print(heavy, [k for k in kernels if not k.endswith(('.params', '.common'))])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] []"


@pytest.mark.gpu
def test_device_of_gpu_objects(xp):
    assert device_of(xp.zeros(2)) is Device.GPU


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gram_tile_casts_and_normalizes_like_normalize_bit_for_bit(xp, dtype):
    """The one-pass tile kernel against graphops.engine.gram.normalize (NumPy) on integer counts,
    random values, zero and NaN diagonals, a strided destination and in place."""
    from graphops.base.cuda import gram_tile
    from graphops.engine.gram import normalize

    rng = np.random.default_rng(3)
    rows, cols = 37, 300
    for values in (rng.integers(0, 2048, (rows, cols)), rng.random((rows, cols)) * 1e3):
        src = values.astype(dtype)
        drow, dcol = rng.random(rows) * 1e6, rng.random(cols) * 1e6
        drow[[0, 5]], dcol[[1, 7]] = 0.0, np.nan
        want = normalize(np, src.astype(np.float64), drow, dcol)
        big = xp.full((rows + 3, cols + 20), -1.0)
        out = big[2:2 + rows, 5:5 + cols]  # rows of a larger matrix
        gram_tile(xp.asarray(src), out, xp.asarray(drow), xp.asarray(dcol))
        assert np.array_equal(out.get(), want, equal_nan=True)
        assert float(big[:2].max()) == -1.0 and float(big[:, :5].max()) == -1.0  # nothing outside
        plain = xp.empty((rows, cols))
        gram_tile(xp.asarray(src), plain)
        assert np.array_equal(plain.get(), src.astype(np.float64))
        if dtype == "float64":
            inplace = xp.asarray(src)
            gram_tile(inplace, inplace, xp.asarray(drow), xp.asarray(dcol))
            assert np.array_equal(inplace.get(), want)


def test_gpu_detection_runs_once_per_process(monkeypatch):
    """Every backend choice asks gpu_status(); it looks for CuPy and counts devices once, not per call."""
    from graphops.base import device

    device.gpu_status.cache_clear()
    calls = []
    real = device.importlib.util.find_spec
    monkeypatch.setattr(device.importlib.util, "find_spec", lambda name, *a: calls.append(name) or real(name, *a))
    first = device.gpu_status()
    assert device.gpu_status() == first and calls.count("cupy") <= 1
    device.gpu_status.cache_clear()
