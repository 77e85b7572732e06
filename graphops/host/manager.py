"""The plugin manager: hook specs, entry points in group ``graphops``, and the env switches.

``GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD=1`` loads no entry points; ``GRAPHOPS_PLUGINS=a,b``
loads exactly those (entry point names, or importable module names for unpackaged
plugins). Each plugin is registered and checked on its own: one that fails to import,
implements a hook graphops does not have (a misspelt name), or implements one with
arguments the spec lacks is unregistered and recorded as a :class:`PluginError` naming the
plugin, its distribution, the reason and the hook it may have meant; a warning is logged
and every other plugin keeps working.

Hooks are called through pluggy itself (``pm.hook.graphops_step_start(...)``): its order, its
``firstresult``, and plugins' wrappers (``@hookimpl(wrapper=True)`` and the older
``hookwrapper=True``) run around the other implementations as anyone who knows pluggy expects.
Each plugin is isolated at call time by a host wrapper put around each of its plain
implementations when it is registered (:func:`isolated`): one that raises is logged as a warning
naming the plugin and the hook, counts as having answered ``None``, and the others still run. The
``graphops_register_*`` hooks are collected plugin by plugin through pluggy's own
``subset_hook_caller`` (:mod:`graphops.host.registry`), so each item knows its plugin and a plugin
whose registration fails is left out whole.

A plugin that raises ``SystemExit`` (or any ``BaseException`` but ``KeyboardInterrupt``) while it
is imported or its hooks are called has failed like one raising an ``Exception``: it is reported
and left out, and the process goes on (:data:`PLUGIN_FAULTS`, :func:`plugin_fault`).

The plugins of graphops' own distribution (the in-tree plugins and the built-in formats and
generators, the entry point ``builtins``: :mod:`graphops.io.builtins`, always loaded)
are listed in :attr:`GraphopsPluginManager.own`: a name they register is not taken from them by a
third-party plugin (:mod:`graphops.host.registry`).
"""
from __future__ import annotations

import functools
import importlib
import logging
import os
import weakref
from importlib import metadata
from typing import Any

import pluggy

from graphops.host import hookspecs
from graphops.errors import PluginError, choices, did_you_mean

log = logging.getLogger("graphops")

__all__ = ["GraphopsPluginManager", "get_plugin_manager", "make_plugin_manager", "ENTRY_POINT_GROUP",
           "register_plugin", "plugin_fault", "isolated", "OWN_DISTRIBUTION"]

ENTRY_POINT_GROUP = "graphops"
OWN_DISTRIBUTION = "graphops"  # the distribution whose plugins are graphops' own


def plugin_fault(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a plugin's code, is that plugin's failure (to report, and go on):
    every exception but ``KeyboardInterrupt`` (the user's Ctrl-C), ``SystemExit`` included — a
    plugin calling ``sys.exit()`` while it loads must not end the process without a word."""
    return not isinstance(exc, KeyboardInterrupt)
_SPECS = tuple(n for n in dir(hookspecs) if n.startswith("graphops_"))


class GraphopsPluginManager(pluggy.PluginManager):
    """A pluggy manager that also remembers plugins that failed to load or validate."""

    def __init__(self) -> None:
        super().__init__("graphops")
        self.add_hookspecs(hookspecs)
        self.failures: dict[str, PluginError] = {}
        self.distributions: dict[str, str] = {}
        self.own: set[str] = set()  # plugins shipped by graphops itself: they keep their names in a conflict
        self._followers: weakref.WeakSet[Any] = weakref.WeakSet()  # registries built from this manager
        self._changing = False

    def follow(self, registry: Any) -> None:
        """Have ``registry.refresh()`` called after every later register or unregister, so that a
        registry built before a plugin came (or went) sees it, as pluggy's historic calls let a late
        plugin see earlier events."""
        self._followers.add(registry)

    def _changed(self) -> None:
        if self._changing:  # a registry's rebuild unregistering a plugin that failed: rebuilt already
            return
        self._changing = True
        try:
            for registry in list(self._followers):
                registry.refresh()
        finally:
            self._changing = False

    def unregister(self, plugin: Any = None, name: str | None = None) -> Any:
        """pluggy's ``unregister``; the registries built from this manager follow."""
        gone = super().unregister(plugin, name)
        self._changed()
        return gone

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """pluggy's ``register``; a plugin implementing a hook graphops does not have (a misspelt name)
        is refused (``pluggy.PluginValidationError``, naming the hook it may have meant); then each
        implementation of a hook other than the ``graphops_register_*`` ones is put in its
        :func:`isolated` wrapper (a plugin's failure is its own)."""
        registered = super().register(plugin, name)
        unknown = _unknown_hooks(self, plugin)
        if unknown:  # a misspelt hook is refused here, however the plugin is registered
            self.unregister(plugin)
            hints = "".join(did_you_mean(h, _SPECS) for h in unknown)
            raise pluggy.PluginValidationError(plugin, f"it implements {', '.join(map(repr, unknown))}, which is not "
                                                       f"a graphops hook.{hints} Hooks: {choices(_SPECS)}")
        for caller in self.get_hookcallers(plugin) or ():
            if caller.name.startswith("graphops_register_"):
                continue
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and not impl.hookwrapper:
                    wrap = isolated_wrapper if impl.wrapper else isolated
                    impl.function = wrap(impl.function, impl.plugin_name, caller.name)
        self._changed()
        return registered

    def fail(self, name: str, dist: str, reason: str) -> PluginError:
        """Record (and log) that plugin ``name`` is not usable, and why."""
        err = PluginError(f"plugin {name!r} (from {dist}) {reason}. Other plugins still work; fix or "
                          f"uninstall it, or leave it out with GRAPHOPS_PLUGINS=<names>",
                          plugin=name, distribution=dist)
        self.failures[name] = err
        log.warning("%s", err)
        return err


def _dist_name(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else "unknown distribution"


def _is_own(ep: metadata.EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and str(dist.metadata["Name"]).lower() == OWN_DISTRIBUTION


def _selected(eps: list[metadata.EntryPoint], wanted: list[str] | None) -> list[Any]:
    if wanted is None:
        return list(eps)
    by_name = {ep.name: ep for ep in eps}
    return [by_name.get(name, name) for name in wanted]


def _unknown_hooks(pm: GraphopsPluginManager, plugin: Any) -> list[str]:
    return [caller.name for caller in pm.get_hookcallers(plugin) or ()
            if not caller.has_spec() and any(i.plugin is plugin and not i.optionalhook
                                              for i in caller.get_hookimpls())]


def register_plugin(pm: GraphopsPluginManager, plugin: Any, name: str, dist: str, own: bool = False) -> bool:
    """Register one plugin and check its hooks against the specs; on a problem, unregister it,
    record the failure and return False (the manager is left as it was). ``own``: the plugin is
    graphops' own (its names win a conflict with a third-party plugin)."""
    pm.distributions[name] = dist  # known before registering: a registry following pm rebuilds with them
    if own:
        pm.own.add(name)
    try:
        pm.register(plugin, name=name)
    except BaseException as exc:  # noqa: BLE001 - a plugin module's __getattr__ may raise anything
        pm.distributions.pop(name, None)
        pm.own.discard(name)
        if not plugin_fault(exc):
            raise
        if pm.get_plugin(name) is plugin:  # older pluggy registers part of a plugin first
            pm.unregister(plugin)
        reason = str(exc).replace("\n", "; ")
        if not isinstance(exc, (pluggy.PluginValidationError, ValueError)):
            reason = f"{type(exc).__name__}: {reason}"
        pm.fail(name, dist, f"was not loaded: {reason}")
        return False
    return True


def _ignored(plugin: str, hook: str, exc: BaseException) -> None:
    if not plugin_fault(exc):
        raise exc
    log.warning("plugin %r: its %s hook raised %s: %s; ignored", plugin, hook, type(exc).__name__, exc)


def isolated_wrapper(function: Any, plugin: str, hook: str) -> Any:
    """A plugin's ``wrapper=True`` implementation, its own failures its own (as :func:`isolated`):
    one raised before its ``yield`` (or a wrapper that never yields) leaves the inner
    implementations to run without it; one raised after it leaves the inner result as the
    answer. The inner implementations' own error still reaches the wrapper, as pluggy passes it."""
    @functools.wraps(function)
    def call(*args: Any) -> Any:
        gen = function(*args)
        try:
            next(gen)
        except BaseException as exc:  # noqa: BLE001 - SystemExit too (plugin_fault); StopIteration: never yielded
            _ignored(plugin, hook, exc if not isinstance(exc, StopIteration) else
                     RuntimeError("the wrapper returned without yielding"))
            return (yield)
        try:
            result = yield
        except BaseException as inner:  # the inner implementations' error: the wrapper sees it
            try:
                gen.throw(inner)
            except StopIteration as stop:
                return stop.value
            raise RuntimeError(f"plugin {plugin!r}: its {hook} wrapper yielded twice") from inner
        try:
            gen.send(result)
        except StopIteration as stop:
            return stop.value
        except BaseException as exc:  # noqa: BLE001
            _ignored(plugin, hook, exc)
            return result
        _ignored(plugin, hook, RuntimeError("the wrapper yielded twice"))
        return result

    return call


def isolated(function: Any, plugin: str, hook: str) -> Any:
    """A plugin's implementation of ``hook`` as pluggy calls it, its failure its own: an
    exception (any but Ctrl-C, :func:`plugin_fault`) is logged as a warning naming the plugin and
    the hook and counts as the answer ``None``, so the other implementations still run."""
    @functools.wraps(function)
    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except BaseException as exc:  # noqa: BLE001 - SystemExit too (plugin_fault)
            _ignored(plugin, hook, exc)
            return None

    return call


def _load_one(pm: GraphopsPluginManager, item: Any) -> None:
    if isinstance(item, str):  # a module name given in GRAPHOPS_PLUGINS
        name, dist, load, own = item, "not an installed entry point", lambda: importlib.import_module(item), False
    else:
        name, dist, load, own = item.name, _dist_name(item), item.load, _is_own(item)
    try:
        plugin = load()
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the plugin failed, the process goes on
        if not plugin_fault(exc):
            raise
        pm.fail(name, dist, f"failed to import: {type(exc).__name__}: {exc}")
        return
    register_plugin(pm, plugin, name, dist, own)


BUILTINS = "builtins"  # graphops' own entry point of its file formats and generators (in the io layer)


def _is_builtins(ep: metadata.EntryPoint) -> bool:
    return ep.name == BUILTINS and _is_own(ep)


def _load_builtins(pm: GraphopsPluginManager) -> None:
    """graphops' built-in formats and generators: the ``builtins`` entry point of its own
    distribution, registered whatever the plugin switches say."""
    ep = next((ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if _is_builtins(ep)), None)
    if ep is None:
        pm.fail(BUILTINS, "graphops (built in)", "was not found: graphops' own entry points are missing, so it is "
                "not installed; install it (pip install -e .) to read files by suffix")
        return
    register_plugin(pm, ep.load(), ep.value, "graphops (built in)", own=True)  # named by its module


def load_entry_points(pm: GraphopsPluginManager, wanted: list[str] | None = None) -> None:
    """Register plugins from entry points in group ``graphops`` (all, or the named ones)."""
    eps = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if not _is_builtins(ep)]
    for item in _selected(eps, wanted):
        if isinstance(item, str) and "." not in item and importlib.util.find_spec(item) is None:
            raise PluginError(
                f"GRAPHOPS_PLUGINS names {item!r}, which is neither an installed graphops plugin "
                f"nor an importable module. Installed: {choices(ep.name for ep in eps)}",
                plugin=item)
        _load_one(pm, item)


def make_plugin_manager(autoload: bool | None = None, plugins: list[str] | None = None) -> GraphopsPluginManager:
    """A fresh plugin manager; ``None`` arguments follow the environment switches."""
    pm = GraphopsPluginManager()
    _load_builtins(pm)
    if plugins is None and os.environ.get("GRAPHOPS_PLUGINS"):
        plugins = [p.strip() for p in os.environ["GRAPHOPS_PLUGINS"].split(",") if p.strip()]
    if autoload is None:
        autoload = os.environ.get("GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD", "") not in ("1", "true", "yes")
    if autoload or plugins:
        load_entry_points(pm, plugins)
    return pm


@functools.lru_cache(maxsize=1)
def get_plugin_manager() -> GraphopsPluginManager:
    """The process-wide plugin manager, built on first use (never at import)."""
    return make_plugin_manager()
