"""Parameters of ``sp_kernel``: node and length kernels, normalization, computation path."""
from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphops.plugin import (BaseKernel, Constant, KroneckerDelta, Params, Product, SquareExponential, TensorProduct,
                             did_you_mean, from_spec)

# The YAML names of graphops' base kernels (graphops.kernels), taken as sp_kernel's kernels too.
_BASE_NAMES = ("kronecker_delta", "square_exponential", "constant", "product", "tensor_product")
_LABEL, _ATTRS = (None, "label"), (None, "attr", "attributes")


def _base(value: Any, where: str) -> BaseKernel | None:
    """A base-kernel object, or its YAML form (``{kronecker_delta: {h: 0}}``), as a kernel; else None."""
    if isinstance(value, BaseKernel):
        return value
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _BASE_NAMES:
        return from_spec(value, where)
    return None


def _parts(kernel: BaseKernel) -> list[BaseKernel]:
    if isinstance(kernel, TensorProduct):
        return list(kernel.parts)
    return [p for k in kernel.parts for p in _parts(k)] if isinstance(kernel, Product) else [kernel]


def _gamma(k: SquareExponential) -> float:
    """exp(-d²/(2ℓ²)) = exp(-gamma d²): gamma = 1/(2ℓ²)."""
    return 1.0 / (2.0 * k.value * k.value)


def _unfit(kernel: BaseKernel, role: str, allowed: str) -> ValueError:
    return ValueError(f"sp_kernel's {role} kernel is {allowed}; got {kernel!r}. Other base kernels run in "
                      f"mg_kernel")


def node_kernel_from_base(kernel: BaseKernel) -> dict[str, Any]:
    """sp_kernel's node kernel from base kernels: ``KroneckerDelta(0)`` on the labels (exact
    equality, the ``"delta"`` shorthand), ``SquareExponential(ℓ)`` on the node attributes
    (``{"gaussian": {"gamma": 1/(2ℓ²)}}``), their product, or ``Constant(1)`` (``"none"``)."""
    allowed = ("KroneckerDelta(0) on 'label', SquareExponential(length_scale) on the attributes, their product, "
               "or Constant(1)")
    out: dict[str, Any] = {}
    for k in _parts(kernel):
        if isinstance(k, KroneckerDelta) and k.value == 0 and k.on in _LABEL and "delta" not in out:
            out["delta"] = True
        elif isinstance(k, SquareExponential) and k.on in _ATTRS and "gaussian" not in out:
            out.update(gaussian={"gamma": _gamma(k)}, attributes=True)
        elif not (isinstance(k, Constant) and k.value == 1.0):
            raise _unfit(kernel, "node", allowed)
    return out


def length_kernel_from_base(kernel: BaseKernel) -> dict[str, Any]:
    """sp_kernel's length kernel from a base kernel: ``KroneckerDelta(0)`` (``"delta"``) or
    ``SquareExponential(ℓ)`` (``{"gaussian": {"gamma": 1/(2ℓ²)}}``), on the path length."""
    if isinstance(kernel, KroneckerDelta) and kernel.value == 0 and kernel.on in (None, "length"):
        return {}
    if isinstance(kernel, SquareExponential) and kernel.on in (None, "length"):
        return {"gaussian": {"gamma": _gamma(kernel)}}
    raise _unfit(kernel, "length", "KroneckerDelta(0) or SquareExponential(length_scale) on the path length")


class Gaussian(BaseModel):
    """``exp(-gamma * squared distance)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    gamma: float = Field(gt=0)


class NodeKernel(BaseModel):
    """Kernel on vertex pairs: label delta, Gaussian on node attributes, their product, or 1.

    Accepts the base kernels mg_kernel takes (:func:`node_kernel_from_base`):
    ``KroneckerDelta(0, on="label")``, ``SquareExponential(ℓ)`` on the attributes, their product
    (``*`` or ``{product: [...]}``), ``Constant(1)``, as objects or in their YAML form
    (``{kronecker_delta: {h: 0}}``); and the shorthands ``"delta"`` (= ``KroneckerDelta(0)``),
    ``"none"`` (= ``Constant(1)``), ``"gaussian"`` (gamma 1 on attributes), or a mapping such as
    ``{"gaussian": {"gamma": 0.5}, "attributes": True}`` or ``{"delta": True, "gaussian":
    {"gamma": 0.5}}`` (the product), with identical values.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    delta: bool = False
    gaussian: Gaussian | None = None
    attributes: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        base = _base(value, "node_kernel")
        if base is not None:
            return node_kernel_from_base(base)
        names = {"delta": {"delta": True}, "none": {}, "gaussian": {"gaussian": {"gamma": 1.0}}}
        if isinstance(value, str):
            if value not in names:
                raise ValueError(f"node kernel must be one of {', '.join(names)} or a mapping; got {value!r}."
                                 f"{did_you_mean(value, names)}")
            value = names[value]
        if isinstance(value, dict) and value.get("gaussian") is not None:
            value = {**value, "attributes": value.get("attributes", True)}
        return value

    @model_validator(mode="after")
    def _attributes_need_gaussian(self) -> "NodeKernel":
        if self.gaussian is not None and not self.attributes:
            raise ValueError("the Gaussian node kernel acts on continuous node attributes; "
                             "set attributes: true (or drop gaussian)")
        if self.attributes and self.gaussian is None:
            raise ValueError("attributes: true needs a Gaussian node kernel, e.g. {gaussian: {gamma: 0.5}}")
        return self

    @property
    def name(self) -> str:
        parts = (["delta"] if self.delta else []) + (["gaussian"] if self.gaussian else [])
        return "*".join(parts) or "none"


class LengthKernel(BaseModel):
    """Kernel on path lengths: ``"delta"`` (exact equality, = ``KroneckerDelta(0)``) or
    ``{"gaussian": {"gamma": g}}`` (= ``SquareExponential(ℓ)`` with ``g = 1/(2ℓ²)``); the base-kernel
    objects and their YAML form are taken too (:func:`length_kernel_from_base`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    gaussian: Gaussian | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        base = _base(value, "length_kernel")
        if base is not None:
            return length_kernel_from_base(base)
        if isinstance(value, str):
            if value not in ("delta", "gaussian"):
                raise ValueError(f"length kernel must be 'delta', 'gaussian' or a mapping; got {value!r}."
                                 f"{did_you_mean(value, ('delta', 'gaussian'))}")
            return {} if value == "delta" else {"gaussian": {"gamma": 1.0}}
        if isinstance(value, dict) and value.get("delta") is True and len(value) == 1:
            return {}
        return value

    @property
    def delta(self) -> bool:
        return self.gaussian is None


class SPKernelParams(Params):
    """Shortest-path graph kernel (Borgwardt & Kriegel) with GraKeL's ordered-pair convention.

    ``K[a, b] = Σ k_node(i, m) · k_len(d_ij, d'_mn) · k_node(j, n)`` over ordered vertex pairs
    ``(i, j)``, ``i ≠ j``, of graph a and ``(m, n)`` of graph b, both with finite shortest-path
    length (hop counts for unweighted graphs, sums of weights otherwise).

    :param node_kernel: see :class:`NodeKernel`
    :param length_kernel: see :class:`LengthKernel`
    :param normalize: return ``K[a, b] / sqrt(K[a, a] K[b, b])`` (0 where a diagonal is 0)
    :param path: ``histogram`` (delta kernels: per-graph (label, label, length) counts and
        X·Xᵀ), ``fcsp`` (any kernels: walk over pairs of shortest-path lists), or ``auto``
    :param fcsp_form: ``fcsp`` path only: ``walk`` pairs the two graphs' shortest paths,
        ``matrix`` sums per length d over ``(V·M_d) ⊙ (A_d·V)`` (fewer operations on dense
        graphs with few distinct lengths), ``auto`` picks per graph pair by operation count
    :param tile: most rows of the Gram matrix per GPU tile (device memory holds two), and at most
        2**21 entries a tile (2**25 for the delta histograms' GEMM when the result stays on the
        GPU); tiles are otherwise sized to take about 0.2 s each, so Ctrl-C stops a long job
        within a second
    :param progress: show a progress bar (``None``: for jobs lasting over a second on a terminal)
    :param hybrid_threshold: ``hybrid`` backend only: graph pairs whose work (product of their
        shortest-path counts) is below this go to the CPU, the rest to the GPU; ``None``
        chooses it from a short calibration (and logs it)
    """

    node_kernel: NodeKernel = NodeKernel(delta=True)
    length_kernel: LengthKernel = LengthKernel()
    normalize: bool = False
    path: Literal["auto", "histogram", "fcsp"] = "auto"
    fcsp_form: Literal["auto", "walk", "matrix"] = "auto"
    tile: int = Field(8192, ge=1, le=2 ** 31)
    hybrid_threshold: int | None = Field(None, ge=0, le=2 ** 62)
    progress: bool | None = None

    @model_validator(mode="after")
    def _path_fits_kernels(self) -> "SPKernelParams":
        self.use_histogram  # noqa: B018 - raises when path 'histogram' is asked with Gaussian kernels
        return self

    @property
    def use_histogram(self) -> bool:
        exact = self.length_kernel.delta and self.node_kernel.gaussian is None
        if self.path == "histogram" and not exact:
            raise ValueError("path 'histogram' needs delta (or none) node and length kernels; "
                             "use path 'fcsp' or 'auto' for Gaussian kernels")
        return exact and self.path != "fcsp"

    def check_inputs(self, graphs: Any, other: Any = None) -> None:
        sets = {"graphs": graphs} if other is None else {"graphs": graphs, "other": other}
        for slot, gs in sets.items():
            _check_set(self, slot, gs)
        if other is not None and self.node_kernel.gaussian is not None:
            da, db = graphs.node_attrs.shape[1], other.node_attrs.shape[1]
            if da != db:
                raise ValueError(f"sp_kernel: node attributes have {da} dimensions in {graphs.name!r} "
                                 f"but {db} in {other.name!r}; both sets need the same attributes")
        _check_memory(len(graphs), len(other) if other is not None else len(graphs))
        _ = self.use_histogram  # raises early when path and kernels disagree


def _check_set(params: SPKernelParams, slot: str, gs: Any) -> None:
    if len(gs) == 0:
        raise ValueError(f"sp_kernel: input {slot!r} is an empty GraphSet; it needs at least one graph")
    if params.node_kernel.delta and gs.node_labels is None:
        raise ValueError(f"sp_kernel: node_kernel {params.node_kernel.name!r} needs node labels, but "
                         f"GraphSet {gs.name!r} has none. Load a dataset with node labels, or use "
                         f"node_kernel='none' (or a Gaussian on attributes)")
    if params.node_kernel.gaussian is not None and gs.node_attrs is None:
        raise ValueError(f"sp_kernel: the Gaussian node kernel needs continuous node attributes, but "
                         f"GraphSet {gs.name!r} has none (TU datasets keep them in DS_node_attributes.txt)")


def _check_memory(rows: int, cols: int) -> None:
    need = 8 * rows * cols
    try:
        avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return
    if need > avail:
        raise MemoryError(f"sp_kernel: a {rows} x {cols} float64 Gram matrix needs {need / 2**30:.1f} GiB, "
                          f"more than this machine's {avail / 2**30:.1f} GiB of memory; compute it in "
                          f"slices (gs[a:b] against the training set) instead")
