"""Unchanged pandas code calling graphops, run under ``python -m cudf.pandas`` by
tests/test_cudf_pandas.py. Each check asserts; the last line printed is a JSON summary."""
import json

import numpy as np
import pandas as pd  # the proxy module under cudf.pandas

import cudf.pandas
import graphops as go
from graphops.base.device import Device, device_of, host_pandas

assert "ModuleAccelerator" in repr(pd), f"not run under python -m cudf.pandas: {pd!r}"
real = host_pandas()
assert real is not pd and not cudf.pandas.is_proxy_object(real.DataFrame())
seen = {}

U, V = [0, 0, 1, 1, 2, 3, 3, 4, 2], [1, 2, 2, 3, 3, 4, 5, 5, 5]


def same(got, want, keys=("first", "second")):
    """Equal rows and values (GPU and CPU agree to 1e-12), after bringing the proxy to the host."""
    got = real.DataFrame({c: np.asarray(got[c].tolist()) for c in want.columns})
    got, want = (f.sort_values(list(keys)).reset_index(drop=True) for f in (got, want))
    real.testing.assert_frame_equal(got, want, check_dtype=False, rtol=1e-12)


# 1. a frame made by pandas code under cudf.pandas wraps a cuDF frame: the graph is a GPU graph,
#    auto picks the GPU backend, and the result is a proxy around a cuDF frame (still on the GPU)
edges = pd.DataFrame({"u": U, "v": V})
assert cudf.pandas.is_proxy_object(edges)
g = go.Graph.from_edgelist(edges, src="u", dst="v")
seen["graph"] = g.device.value
res = go.run("jaccard", g)
assert cudf.pandas.is_proxy_object(res) and isinstance(res, pd.DataFrame), type(res)
seen["result"] = device_of(res).value
ref = go.run("jaccard", go.Graph.from_edgelist(real.DataFrame({"u": U, "v": V}), src="u", dst="v"),
             backend="cpu")
assert type(ref) is real.DataFrame
same(res, ref)
top = res.sort_values("jaccard_coeff", ascending=False).head(3)  # pandas code goes on with it
assert len(top) == 3 and cudf.pandas.is_proxy_object(top)

# 2. a proxy that holds a pandas frame stays on the host: a CPU graph, a proxy around pandas out
slow = cudf.pandas.as_proxy_object(real.DataFrame({"u": U, "v": V}))
g2 = go.Graph.from_edgelist(slow, src="u", dst="v")
seen["slow_graph"] = g2.device.value
res2 = go.run("jaccard", g2, backend="cpu")
assert cudf.pandas.is_proxy_object(res2)
seen["slow_result"] = device_of(res2).value
same(res2, ref)

# 3. string vertex ids, a proxy pairs frame, weights
names = pd.DataFrame({"a": ["ann", "bob", "bob", "cy", "ann"], "b": ["bob", "cy", "dee", "dee", "dee"],
                      "w": [1.0, 2.0, 0.5, 1.5, 3.0]})
g3 = go.Graph.from_edgelist(names, src="a", dst="b", weight="w")
pairs = pd.DataFrame({"first": ["ann", "cy"], "second": ["cy", "bob"]})
res3 = go.run("jaccard", g3, pairs=pairs)
assert cudf.pandas.is_proxy_object(res3)
host_names = real.DataFrame({c: names[c].tolist() for c in names.columns})
ref3 = go.run("jaccard", go.Graph.from_edgelist(host_names, src="a", dst="b", weight="w"),
              pairs=real.DataFrame({"first": ["ann", "cy"], "second": ["cy", "bob"]}), backend="cpu")
same(res3, ref3)
seen["string_ids"] = res3["first"].tolist()

# 4. other plugins' frame results: an Euler circuit and describe
cyc = pd.DataFrame({"s": [0, 1, 2, 0, 3, 4], "t": [1, 2, 0, 3, 4, 0]})  # two triangles at 0
eg = go.Graph.from_edgelist(cyc, src="s", dst="t")
walk = go.run("euler", eg)
assert cudf.pandas.is_proxy_object(walk), type(walk)
seen["euler_rows"] = int(len(walk))
seen["euler_device"] = device_of(walk).value

# 5. graphops' own host frames are real pandas, never proxies (they would wander to the GPU)
seen["host_frame"] = type(Device.CPU.xdf.DataFrame({"a": [1]})).__module__.split(".")[0]
print(json.dumps(seen))
