"""The registry: algorithms and readers collected from every plugin's hooks, by name.

Each plugin's hook is called on its own: a plugin whose hook raises or returns something
other than the declared objects is recorded as failed (with its distribution) and left
out, and the others are registered. A name (or file suffix) claimed by two third-party plugins is
given to neither: using it raises a :class:`PluginError` that names both plugins and how to choose.
A name claimed by graphops' own plugins (the distribution ``graphops``: the in-tree plugins and
:mod:`graphops.io.builtins`) and by a third-party one stays graphops': the third-party one is
recorded, naming both, and left out, so no plugin can take ``describe`` or ``.csv`` from everyone.

Every ``"module:function"`` target is resolved from its source as the registry is built (nothing
is imported; :mod:`graphops.host.targets`): a backend whose target cannot be found or whose
function breaks the backend contract (:mod:`graphops.host.contract`) is not offered, and an
algorithm left without backends, a reader, generator or command whose target cannot be found is
not registered. Each is recorded with the plugin, its distribution and the fix.
"""
from __future__ import annotations

import dataclasses
import weakref
from typing import Any

from graphops.host.algorithm import Algorithm, Command, Generator, Reader
from graphops.errors import InputError, PluginError, choices, did_you_mean
from graphops.host.contract import backend_problems
from graphops.host.manager import GraphopsPluginManager, get_plugin_manager, plugin_fault
from graphops.host.targets import Sources, TargetError, sentence

__all__ = ["Registry", "get_registry", "BUILTIN_COMMANDS"]

BUILTIN_COMMANDS = ("run", "validate", "plugins", "bench", "datasets")
_WORDS = {"reader": "reader format", "suffix": "file suffix"}  # a kind as messages name it


def _collect(pm: GraphopsPluginManager, hook: str, kind: type) -> list[Any]:
    """Call ``hook`` on each plugin separately (pluggy's ``subset_hook_caller``) so every item knows
    its plugin, and a plugin whose answer is bad is left out whole."""
    items = []
    impls = getattr(pm.hook, hook).get_hookimpls()
    answering = [i for i in impls if not (i.wrapper or i.hookwrapper)]  # a wrapper answers nothing of its own
    for impl in answering:
        name = impl.plugin_name
        dist = pm.distributions.get(name, "?")
        try:  # this plugin's implementation alone, through pluggy, inside every plugin's wrappers of the hook
            others = [i.plugin for i in answering if i.plugin is not impl.plugin]
            got = [x for answer in pm.subset_hook_caller(hook, others)() for x in (answer or ())]
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the plugin failed, the process goes on
            if not plugin_fault(exc):
                raise
            pm.fail(name, dist, f"was left out: its {hook}() raised {type(exc).__name__}: {exc}")
            pm.unregister(name=name)
            continue
        bad = [x for x in got if not isinstance(x, kind)]
        if bad:
            pm.fail(name, dist, f"was left out: its {hook}() returned {bad[0]!r}; expected "
                                f"graphops.{kind.__name__} objects")
            pm.unregister(name=name)
            continue
        known = {"distribution": dist} if kind in (Algorithm, Reader) and dist != "?" else {}
        items += [dataclasses.replace(x, plugin=name, **known) for x in got]
    return items


class Registry:
    """Algorithms and readers by name, plus the plugins that failed and the names in conflict."""

    def __init__(self, pm: GraphopsPluginManager):
        self._build(pm)
        pm.follow(self)  # a plugin registered (or unregistered) later: refresh() rebuilds this registry

    def refresh(self) -> None:
        """Rebuild from the manager's plugins as they are now, in place (whoever holds this registry
        sees a plugin registered after it was built: the manager calls this after each change)."""
        fresh = Registry.__new__(Registry)
        fresh._build(self.pm)
        self.__dict__.update(fresh.__dict__)

    def _build(self, pm: GraphopsPluginManager) -> None:
        self.pm = pm
        # (kind, name) -> why that name of that kind is not used: kinds algorithm, backend, reader,
        # suffix, command, generator; looked up with the same key
        self.conflicts: dict[tuple[str, str], PluginError] = {}
        self.estimator_classes: dict[str, type] = {}  # graphops.kernels' classes, made on first use
        sources = Sources()  # each module's source read once while this registry is built
        self.algorithms: dict[str, Algorithm] = self._index(
            self._usable_backends(_collect(pm, "graphops_register_algorithms", Algorithm), sources), "algorithm",
            lambda a: (a.name,))
        self.readers: dict[str, Reader] = self._index(
            self._keeping_contract(_collect(pm, "graphops_register_readers", Reader), sources), "reader",
            lambda r: (r.name,))
        self._by_suffix = self._index(list(self.readers.values()), "suffix",
                                      lambda r: tuple(s.lower() for s in r.suffixes))
        self.commands: dict[str, Command] = self._commands(self._resolved(
            _collect(pm, "graphops_register_commands", Command), sources, "command", lambda c: (c.target,)))
        self.generators: dict[str, Generator] = self._index(self._resolved(
            _collect(pm, "graphops_register_generators", Generator), sources, "generator",
            lambda g: (g.target, *([g.params] if isinstance(g.params, str) else []))), "generator", lambda g: (g.name,))

    def _who(self, plugin: str) -> str:
        return f"plugin {plugin!r} ({self.pm.distributions.get(plugin, '?')})"

    def _plugin_error(self, plugin: str, text: str) -> PluginError:
        """``text`` after the plugin and its distribution, as a :class:`PluginError` carrying both."""
        return PluginError(f"{self._who(plugin)}: {text}", plugin=plugin,
                           distribution=self.pm.distributions.get(plugin))

    def _usable_backends(self, algorithms: list[Algorithm], sources: Sources) -> list[Algorithm]:
        """The algorithms with the backends that keep the contract; the others are recorded (an
        algorithm left with none is not registered)."""
        kept = []
        for algo in algorithms:
            problems = backend_problems(algo, sources)
            if not problems:
                kept.append(algo)
                continue
            good = {name: spec for name, spec in algo.backends.items() if name not in problems}
            try:
                kept.append(dataclasses.replace(algo, backends=good, unusable=problems))
            except ValueError:  # none left, or only backends that need a Dask cluster
                left = "no backend of it can be used" if not good else "the backends left all need a Dask cluster"
                why = " ".join(f"Backend {n!r}: {p}." for n, p in problems.items())
                self.conflicts[("algorithm", algo.name)] = self._plugin_error(
                    algo.plugin, f"algorithm {algo.name!r} is not registered, as {left}. {why}")
                continue
            self.conflicts.update({("backend", f"{algo.name}.{name}"): self._plugin_error(
                algo.plugin, f"algorithm {algo.name!r}: backend {name!r} is not offered: {problem}")
                for name, problem in problems.items()})
        return kept

    def _resolved(self, items: list[Any], sources: Sources, what: str, targets: Any) -> list[Any]:
        """The items whose targets their modules define; the others are recorded, not used."""
        kept = []
        for item in items:
            try:
                for target in targets(item):
                    try:
                        sources.check_defined(target)
                    except TargetError as exc:
                        raise TargetError(f"{target}: {exc}") from None
            except TargetError as exc:
                self.conflicts[(what, item.name)] = self._plugin_error(
                    item.plugin, f"{what} {item.name!r} is not used: {sentence(exc)} Fix the target in the plugin's "
                                 f"graphops.{type(item).__name__}(...)")
                continue
            kept.append(item)
        return kept

    def _commands(self, items: list[Command]) -> dict[str, Command]:
        out = self._index(items, "command", lambda c: (c.name,))
        for name in [n for n in out if n in BUILTIN_COMMANDS]:
            cmd = out.pop(name)
            self.conflicts[("command", name)] = PluginError(
                f"plugin {cmd.plugin!r} ({self.pm.distributions.get(cmd.plugin, '?')}) adds a command "
                f"{name!r}, which is graphops' own; it is not used. Rename it in the plugin", plugin=cmd.plugin)
        return out

    def _keeping_contract(self, readers: list[Reader], sources: Sources) -> list[Reader]:
        """The readers whose functions exist and take ``(path, device, options)``; the others are
        recorded."""
        kept = []
        for r in readers:
            try:
                r.check_contract(sources)
            except ValueError as exc:
                self.conflicts[("reader", r.name)] = self._plugin_error(
                    r.plugin, f"{exc}; it is not used. Fix the target or the function's signature in the plugin")
                continue
            kept.append(r)
        return kept

    def _index(self, items: list[Any], kind: str, keys: Any) -> dict[str, Any]:
        """Items by each of their keys. A key claimed by graphops' own plugin and third-party ones stays
        graphops'; a key claimed only by third-party plugins, or twice by graphops, goes to neither.
        Each loser is recorded under ``(kind, key)`` (a third-party loser to graphops' own under
        ``(kind, "key of plugin")``), naming both sides."""
        what = _WORDS.get(kind, kind)
        owners: dict[str, list[Any]] = {}
        for item in items:
            for key in keys(item):
                owners.setdefault(key, []).append(item)
        out = {}
        for key, claimed in owners.items():
            own = [c for c in claimed if c.plugin in self.pm.own]
            if len(claimed) == 1 or len(own) == 1:
                out[key] = own[0] if own else claimed[0]
                for other in (c for c in claimed if c is not out[key]):
                    self.conflicts[(kind, f"{key} of {other.plugin}")] = self._plugin_error(
                        other.plugin, f"{what} {key!r} is not used: it is graphops' own, registered by "
                                      f"{self._who(own[0].plugin)}, which keeps it. Rename it in the plugin")
                continue
            who = " and ".join(self._who(c.plugin) for c in claimed)
            self.conflicts[(kind, key)] = PluginError(
                f"{what} {key!r} is registered by {who}, so neither is used. Uninstall one, or "
                f"choose plugins with GRAPHOPS_PLUGINS=<names>", plugin=claimed[-1].plugin)
        return out

    @property
    def failures(self) -> dict[str, PluginError]:
        """Plugins that failed to load or register (by plugin name), and the names left out (by
        ``"kind name"``: ``algorithm twice``, ``reader old``, ``suffix .xx``)."""
        return {**self.pm.failures, **{f"{kind} {name}": err for (kind, name), err in self.conflicts.items()}}

    def algorithm(self, name: str) -> Algorithm:
        """The algorithm called ``name``; a clear error naming the installed ones otherwise."""
        if name in self.algorithms:
            return self.algorithms[name]
        if ("algorithm", name) in self.conflicts:
            raise self.conflicts[("algorithm", name)]
        if name in self.pm.failures:
            raise self.pm.failures[name]
        raise InputError(self.unknown_algorithm(name))

    def unknown_algorithm(self, name: Any) -> str:
        return (f"Unknown algorithm {name!r}. Installed: {choices(self.algorithms)}."
                f"{did_you_mean(name, self.algorithms)}")

    def taking(self, kind: str) -> str:
        """The algorithms with an input of ``kind`` (e.g. ``daskgraph``), for messages."""
        names = sorted(a.name for a in self.algorithms.values() if any(kind in s.kinds for s in a.inputs))
        return ", ".join(names) or "none installed"

    def _refusal(self, kind: str, name: str) -> PluginError | None:
        """Why a ``kind`` called ``name`` was left out (claimed twice, or its target or contract broken)."""
        return self.conflicts.get((kind, name))

    def reader(self, name: str) -> Reader:
        if name in self.readers:
            return self.readers[name]
        refused = self._refusal("reader", name)
        if refused is not None:
            raise refused
        raise InputError(f"Unknown graph format {name!r}. Known formats: {choices(self.readers)}."
                         f"{did_you_mean(name, self.readers)}")

    def generator(self, name: str) -> Generator:
        """The generator called ``name``; an error naming the installed ones otherwise."""
        if name in self.generators:
            return self.generators[name]
        refused = self._refusal("generator", name)
        if refused is not None:
            raise refused
        raise InputError(f"Unknown generator kind {name!r}. Installed: {choices(self.generators)}."
                         f"{did_you_mean(name, self.generators)}")

    def reader_for_suffix(self, suffix: str) -> Reader | None:
        return self._by_suffix.get(suffix.lower())

    def suffixes(self) -> list[str]:
        return sorted(self._by_suffix)


_REGISTRIES: "weakref.WeakKeyDictionary[GraphopsPluginManager, Registry]" = weakref.WeakKeyDictionary()


def get_registry(pm: GraphopsPluginManager | None = None) -> Registry:
    """The registry of ``pm`` (default: the process-wide manager), built once per manager."""
    pm = pm or get_plugin_manager()
    if pm not in _REGISTRIES:
        _REGISTRIES[pm] = Registry(pm)
    return _REGISTRIES[pm]
