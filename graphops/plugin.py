"""The plugin API: every name a graphops plugin may import, and nothing else.

graphops' own plugins (``plugins/graphops_*``) import from here only, as third-party ones do
(a test fails on any other import of a graphops module from ``plugins/`` or ``examples/``;
``import graphops`` for the user-facing calls ``run``/``read_graph`` stays allowed). The names
are looked up on first use, so ``from graphops.plugin import Algorithm, hookimpl`` in a
plugin's ``__init__`` imports no Numba, CuPy or cuDF: registering stays cheap.

* **Registering** (the hooks in :mod:`graphops.host.hookspecs`): ``hookimpl``, ``Algorithm``,
  ``Backend``, ``Input``, ``Reader``, ``ReadOptions``, ``Command``, ``Generator``, ``Gram``,
  ``Params``, ``GeneratorParams``, ``Seed`` (the type of every ``seed`` parameter), ``Result``.
* **Errors**: ``GraphopsError``, ``InputError``, ``InputTypeError``, ``BackendUnavailableError``,
  ``PluginError``, and the message helpers ``choices``, ``did_you_mean``.
* **Graphs**: ``Graph``, ``GraphSet``, ``DaskGraph``, ``CSR`` (what a backend receives),
  ``IdMap``, ``distinct``, ``Pairs``, ``PairIndex``, ``check_known``; frames: ``new_frame``,
  ``column_array``, ``plain_values``, ``to_family``.
* **Devices**: ``Device``, ``device_of``, ``to_device``, ``host_pandas``, ``gpu_status``,
  ``gpu_attribute``, ``spare_one_core``.
* **Compiling and running kernels**: ``njit``, ``prange`` (Numba, cached per user);
  ``load_module``, ``grid``, ``THREADS``, ``interleave``, ``wait_idle`` (CUDA through CuPy);
  ``chunks``, ``even_ranges`` (chunked, interruptible work with progress); ``timed``; ``phase`` (a
  block's seconds among a cluster part's phases); ``cache_dir``;
  ``gini``, ``gini_from_sums``.
* **Gram matrices and kernels**: ``gram_rows``, ``normalize``, ``gram_picture``; the base-kernel
  algebra ``BaseKernel``, ``KroneckerDelta``, ``SquareExponential``, ``Constant``,
  ``TensorProduct``, ``Additive``, ``Product``, ``Sum``, ``Normalized``, ``Normalize``, ``Power``,
  ``RationalQuadratic``, ``Convolution``, ``DotProduct``, ``from_spec``, ``ordered_bounds`` (a
  hyperparameter's ``(low, high)`` or ``'fixed'``, checked); start probabilities
  ``StartProbability``, ``start_values``, ``start_from_spec``; ``GraphKernelEstimator``.
* **Pictures**: ``histogram``, ``gram_picture``, ``pyplot``.
* **Dask**: ``Split``, ``Part``, ``Distributed``, ``Here`` (a split's "run it here: the cluster would
  not pay"), ``rows_by_cost``, ``stoppable``,
  ``PARTS_PER_WORKER``, ``run_part`` (a part on a worker), ``run_kernel`` (a plugin's own function
  on what its split sent, run as a backend is), ``Shipped`` (the base of a split's objects that
  travel field by field), the column slices of Dask edge frames
  ``column_slices``, ``whole_adjacency`` (the slices put together on each slice's worker, when
  that fits), ``balanced_edges`` (the slices' edges dealt again by a cost per edge), ``add_up``, ``frame_on``, ``in_input_order``,
  ``near`` (``submit``'s arguments for the worker holding a future), ``SOON`` (the priority of
  tasks that send values on while the next piece computes); ``when_closing`` (tidy up before a
  client graphops opened closes); ``cuda_protocol`` (ucx where installed, else tcp);
  ``Kept`` (what is kept with an object while it lives, found by identity: e.g. a sent object's copy
  on a worker's device); ``peak_device_memory`` (each worker's peak device memory during a
  block).
* **Calls, files and tests**: ``run``, ``execute_call``, ``Sources`` (a pipeline file's graphs),
  ``check_algorithm``, ``check_signatures``, ``tiny_graphs``.
* **Commands**: ``bounded`` (an argparse ``type=`` for a numeric option, its range checked:
  ``type=bounded("--repeat", int, ge=1, le=100)``).
"""
from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "graphops.host.hookspecs": ("hookimpl",),
    "graphops.host.algorithm": ("Algorithm", "Backend", "Input", "Reader", "ReadOptions", "Command", "Generator",
                                "Gram", "Params", "Result"),
    "graphops.host.numbers": ("Seed",),
    "graphops.io.generators": ("GeneratorParams",),
    "graphops.errors": ("GraphopsError", "InputError", "InputTypeError", "BackendUnavailableError", "PluginError",
                        "choices", "did_you_mean"),
    "graphops.model.graph": ("Graph",),
    "graphops.model.graphset": ("GraphSet",),
    "graphops.model.daskgraph": ("DaskGraph",),
    "graphops.model.csr": ("CSR",),
    "graphops.model.ids": ("IdMap", "distinct"),
    "graphops.model.pairs": ("Pairs", "PairIndex", "check_known"),
    "graphops.model.frames": ("new_frame", "column_array", "plain_values", "to_family"),
    "graphops.base.device": ("Device", "device_of", "to_device", "host_pandas", "gpu_status", "gpu_attribute",
                             "spare_one_core"),
    "graphops.base.jit": ("njit", "prange"),
    "graphops.base.cuda": ("load_module", "grid", "THREADS", "interleave", "wait_idle"),
    "graphops.base.work": ("chunks", "even_ranges"),
    "graphops.base.timing": ("timed", "phase"),
    "graphops.base.dirs": ("cache_dir",),
    "graphops.base.stats": ("gini", "gini_from_sums"),
    "graphops.engine.gram": ("gram_rows", "normalize"),
    "graphops.kernels.basekernels": ("BaseKernel", "KroneckerDelta", "SquareExponential", "Constant", "TensorProduct",
                                     "Additive", "Product", "Sum", "Normalized", "RationalQuadratic", "Power",
                                     "Normalize", "ordered_bounds"),
    "graphops.kernels.sequence": ("Convolution", "DotProduct"),
    "graphops.kernels.spec": ("from_spec",),
    "graphops.kernels.probability": ("StartProbability", "start_values", "start_from_spec"),
    "graphops.kernels.estimators": ("GraphKernelEstimator",),
    "graphops.io.plots": ("histogram", "gram_picture", "pyplot"),
    "graphops.engine.parts": ("Split", "Part", "Distributed", "Here", "Shipped", "rows_by_cost", "stoppable",
                              "PARTS_PER_WORKER"),
    "graphops.engine.local": ("run_part", "run_kernel"),
    "graphops.engine.cluster": ("when_closing", "cuda_protocol"),
    "graphops.engine.devmem": ("peak_device_memory",),
    "graphops.engine.placing": ("Kept",),
    "graphops.engine.slices": ("column_slices", "whole_adjacency", "balanced_edges", "add_up", "frame_on", "in_input_order",
                               "near", "SOON"),
    "graphops.engine.dispatch": ("run", "execute_call"),
    "graphops.pipeline.sources": ("Sources",),
    "graphops.engine.testing": ("check_algorithm", "check_signatures", "tiny_graphs"),
    "graphops.cli.options": ("bounded",),
}
_MODULE = {name: module for module, names in _WHERE.items() for name in names}

__all__ = sorted(_MODULE)


def __getattr__(name: str) -> Any:
    module = _MODULE.get(name)
    if module is None:
        raise AttributeError(f"graphops.plugin has no {name!r}: a plugin may import {', '.join(__all__)}. A name "
                             f"a plugin needs and this API lacks belongs in graphops' core, under a public name")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return __all__
