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
