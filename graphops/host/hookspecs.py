"""Hook specifications: the whole plugin interface of graphops. These docstrings are its reference.

A plugin is a module (or object) with functions marked ``@graphops.hookimpl`` whose
names match the specs below. Implementations may accept any subset of the arguments;
graphops always calls hooks with keyword arguments.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from graphops.host.algorithm import Algorithm, Command, Generator, Reader

hookspec = pluggy.HookspecMarker("graphops")
hookimpl = pluggy.HookimplMarker("graphops")


@hookspec
def graphops_register_algorithms() -> "list[Algorithm]":
    """Return the algorithms this plugin offers.

    Called once when the registry is built. Names must be unique across all plugins: a name
    two third-party plugins register is given to neither (the other algorithms load as usual),
    ``graphops plugins`` lists the conflict naming both plugins, and using the name raises a
    :class:`~graphops.errors.PluginError` saying so (uninstall one, or choose plugins with
    ``GRAPHOPS_PLUGINS``). A name graphops' own plugins register (``describe``, ``jaccard``, ...)
    stays theirs: a third-party plugin's is left out and listed, naming both. The same holds for
    readers, generators and commands. Each declaration is checked as it is made; a hook that
    raises (``SystemExit`` too) leaves its plugin out, reported with the error.

    :returns: a list of :class:`graphops.Algorithm`

    Example::

        @hookimpl
        def graphops_register_algorithms():
            return [Algorithm(name="degree", params=DegreeParams, inputs=("graph",),
                              backends={"cpu": "graphops_degree.cpu:run"},
                              outputs=("vertex", "degree"), vertex_columns=("vertex",))]
    """


@hookspec
def graphops_register_readers() -> "list[Reader]":
    """Return extra graph file formats this plugin can read.

    A reader's function takes ``(path, device, options)``: the file's :class:`pathlib.Path`, the
    :class:`graphops.Device` the frame is wanted on, and a :class:`graphops.ReadOptions`
    (``columns``, and for the formats that list them in ``Reader.options``, ``header`` and
    ``ids``); it returns an edge frame (pandas, or cuDF on a GPU device), whose columns are then
    picked by name or position. A reader's ``nodes`` function has the same signature. The
    signature is checked when the registry is built: a reader that does not follow it is not
    used, and ``graphops plugins`` says why. Format names and suffixes must be unique (a name or
    suffix two third-party plugins register is given to neither; graphops' own, such as ``csv`` and
    ``.csv``, stay graphops').

    :returns: a list of :class:`graphops.Reader`

    Example::

        @hookimpl
        def graphops_register_readers():
            return [Reader(name="graphml", suffixes=(".graphml",),
                           target="graphops_graphml.io:read_graphml")]

        def read_graphml(path, device, options):
            frame = ...  # src, dst and attribute columns, read from path
            return graphops.plugin.to_family(frame, device)
    """


@hookspec
def graphops_register_generators() -> "list[Generator]":
    """Return the graph generators this plugin offers.

    A generator is a pipeline graph source, ``{generate: {kind: <name>, ...}}``, validated by its
    parameter model when the file is loaded, and a function published as
    ``graphops.generate.<function>``. Names must be unique: a name two third-party plugins
    register is given to neither, and using it says so; graphops' own names stay graphops'.
    graphops registers ``rmat``, ``gnm``, ``grid2d`` and ``gnp_set`` itself.

    :returns: a list of :class:`graphops.Generator`

    Example::

        @hookimpl
        def graphops_register_generators():
            return [Generator(name="random_cycles", params="graphops_euler.params:RandomCycles",
                              target="graphops_euler.io:random_cycles", gpu=("cupy",),
                              summary="a union of connected random closed walks (Eulerian)")]
    """


@hookspec
def graphops_register_commands() -> "list[Command]":
    """Return subcommands this plugin adds to the ``graphops`` command line.

    Called once when the command line starts. A name taken by a built-in command (run,
    validate, plugins, bench) or claimed by two plugins is refused and reported by
    ``graphops plugins``; the command's module is imported only when it runs. Errors it
    raises are reported like graphops' own: one line for a :class:`graphops.GraphopsError`,
    a traceback for anything else.

    :returns: a list of :class:`graphops.Command`

    Example::

        def _arguments(parser):
            parser.add_argument("file")
            parser.add_argument("-k", type=bounded("-k", int, ge=1, le=10_000), default=10)

        @hookimpl
        def graphops_register_commands():
            return [Command(name="degree-top", summary="the k vertices of highest degree",
                            target="graphops_degree.cli:top", arguments=_arguments)]
    """


@hookspec(firstresult=True)
def graphops_choose_backend(algorithm: "Algorithm", inputs: dict, params: Any,
                            offered: tuple) -> "str | None":
    """Choose a backend when the caller asked for ``auto``.

    Stops at first non-None result. The answer must be one of ``offered`` (the
    algorithm's own backends that can run here); otherwise graphops logs it and uses
    its default rule (``gpu`` if offered and usable, else ``cpu``).

    :param algorithm: the :class:`graphops.Algorithm` being dispatched
    :param inputs: slot name -> :class:`Graph` or :class:`GraphSet`
    :param params: the validated :class:`graphops.Params` instance
    :param offered: backend names that are offered and runnable on this machine
    :returns: a backend name, or ``None`` to defer

    Example::

        @hookimpl
        def graphops_choose_backend(inputs, offered):
            small = all(getattr(g, "n_edges", 0) < 10_000 for g in inputs.values())
            return "cpu" if small and "cpu" in offered else None
    """


@hookspec
def graphops_step_start(pipeline: Any, step: Any, backend: str) -> None:
    """Observe a pipeline step about to run.

    :param pipeline: the validated pipeline model (``graphops.pipeline.schema.Pipeline``)
    :param step: the step model about to run
    :param backend: the backend chosen for it
    :returns: nothing; return values are ignored

    Example::

        @hookimpl
        def graphops_step_start(step, backend):
            print(f"starting {step.id} on {backend}")
    """


@hookspec
def graphops_step_end(pipeline: Any, step: Any, backend: str, result: Any, seconds: float) -> None:
    """Observe a pipeline step that has finished (before its output is written).

    :param pipeline: the validated pipeline model
    :param step: the step model that ran
    :param backend: the backend that ran it
    :param result: the step's result (frame or array, in the input's family)
    :param seconds: wall time of the step's computation
    :returns: nothing; return values are ignored

    Example::

        @hookimpl
        def graphops_step_end(step, seconds):
            metrics.observe(step.id, seconds)
    """
