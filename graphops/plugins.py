"""The plugin manager: hook specs, entry points in group ``graphops``, and the env switches.

``GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD=1`` loads no entry points; ``GRAPHOPS_PLUGINS=a,b``
loads exactly those (entry point names, or importable module names for unpackaged
plugins). A plugin that fails to import is recorded as a :class:`PluginError`
naming the plugin and its distribution; the others keep working.
"""
from __future__ import annotations

import functools
import importlib
import logging
import os
from importlib import metadata
from typing import Any

import pluggy

from . import builtins, hookspecs
from .errors import PluginError, choices

log = logging.getLogger("graphops")

__all__ = ["GraphopsPluginManager", "get_plugin_manager", "make_plugin_manager", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "graphops"


class GraphopsPluginManager(pluggy.PluginManager):
    """A pluggy manager that also remembers plugins that failed to load."""

    def __init__(self) -> None:
        super().__init__("graphops")
        self.add_hookspecs(hookspecs)
        self.failures: dict[str, PluginError] = {}
        self.distributions: dict[str, str] = {}


def _dist_name(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else "unknown distribution"


def _selected(eps: list[metadata.EntryPoint], wanted: list[str] | None) -> list[Any]:
    if wanted is None:
        return list(eps)
    by_name = {ep.name: ep for ep in eps}
    return [by_name.get(name, name) for name in wanted]


def _load_one(pm: GraphopsPluginManager, item: Any) -> None:
    if isinstance(item, str):  # a module name given in GRAPHOPS_PLUGINS
        name, dist, load = item, "not an installed entry point", lambda: importlib.import_module(item)
    else:
        name, dist, load = item.name, _dist_name(item), item.load
    try:
        plugin = load()
    except Exception as exc:
        err = PluginError(
            f"plugin {name!r} (from {dist}) failed to import: {type(exc).__name__}: {exc}. "
            f"Other plugins still work; reinstall or fix it, or leave it out with "
            f"GRAPHOPS_PLUGINS=<names>",
            plugin=name, distribution=dist)
        pm.failures[name] = err
        log.warning("%s", err)
        return
    pm.register(plugin, name=name)
    pm.distributions[name] = dist


def load_entry_points(pm: GraphopsPluginManager, wanted: list[str] | None = None) -> None:
    """Register plugins from entry points in group ``graphops`` (all, or the named ones)."""
    eps = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
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
    pm.register(builtins, name="graphops.builtins")
    pm.distributions["graphops.builtins"] = "graphops (built in)"
    if plugins is None and os.environ.get("GRAPHOPS_PLUGINS"):
        plugins = [p.strip() for p in os.environ["GRAPHOPS_PLUGINS"].split(",") if p.strip()]
    if autoload is None:
        autoload = os.environ.get("GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD", "") not in ("1", "true", "yes")
    if autoload or plugins:
        load_entry_points(pm, plugins)
    pm.check_pending()
    return pm


@functools.lru_cache(maxsize=1)
def get_plugin_manager() -> GraphopsPluginManager:
    """The process-wide plugin manager, built on first use (never at import)."""
    return make_plugin_manager()
