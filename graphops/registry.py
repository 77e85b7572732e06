"""The registry: algorithms and readers collected from every plugin's hooks, by name."""
from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Iterable

from .algorithm import Algorithm, Reader
from .errors import PluginError, choices, did_you_mean
from .plugins import GraphopsPluginManager, get_plugin_manager

__all__ = ["Registry", "get_registry"]


def _collect(pm: GraphopsPluginManager, hook: str, kind: type) -> list[Any]:
    """Call ``hook`` on each plugin separately so every item knows its plugin."""
    items = []
    for impl in getattr(pm.hook, hook).get_hookimpls():
        for item in impl.function() or ():
            if not isinstance(item, kind):
                raise PluginError(f"plugin {impl.plugin_name!r}: {hook}() returned {item!r}; "
                                  f"expected graphops.{kind.__name__} objects", plugin=impl.plugin_name)
            items.append(dataclasses.replace(item, plugin=impl.plugin_name))
    return items


def _index(items: Iterable[Any], what: str, pm: GraphopsPluginManager) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if item.name in out:
            first = out[item.name].plugin
            raise PluginError(
                f"{what} {item.name!r} is registered twice: by plugin {first!r} "
                f"({pm.distributions.get(first, '?')}) and by plugin {item.plugin!r} "
                f"({pm.distributions.get(item.plugin, '?')}). Uninstall one, or choose plugins "
                f"with GRAPHOPS_PLUGINS=<names>", plugin=item.plugin)
        out[item.name] = item
    return out


class Registry:
    """Algorithms and readers by name, plus the plugins that failed to load."""

    def __init__(self, pm: GraphopsPluginManager):
        self.pm = pm
        self.algorithms: dict[str, Algorithm] = _index(
            _collect(pm, "graphops_register_algorithms", Algorithm), "algorithm", pm)
        self.readers: dict[str, Reader] = _index(
            _collect(pm, "graphops_register_readers", Reader), "reader format", pm)
        self._by_suffix = self._suffixes()

    def _suffixes(self) -> dict[str, Reader]:
        out: dict[str, Reader] = {}
        for reader in self.readers.values():
            for suffix in reader.suffixes:
                if suffix in out:
                    raise PluginError(f"file suffix {suffix!r} is claimed by formats "
                                      f"{out[suffix].name!r} and {reader.name!r}", plugin=reader.plugin)
                out[suffix.lower()] = reader
        return out

    @property
    def failures(self) -> dict[str, PluginError]:
        return self.pm.failures

    def algorithm(self, name: str) -> Algorithm:
        """The algorithm called ``name``; a clear error naming the installed ones otherwise."""
        if name in self.algorithms:
            return self.algorithms[name]
        if name in self.failures:
            raise self.failures[name]
        raise ValueError(self.unknown_algorithm(name))

    def unknown_algorithm(self, name: Any) -> str:
        return (f"Unknown algorithm {name!r}. Installed: {choices(self.algorithms)}."
                f"{did_you_mean(name, self.algorithms)}")

    def reader(self, name: str) -> Reader:
        if name in self.readers:
            return self.readers[name]
        raise ValueError(f"Unknown graph format {name!r}. Known formats: {choices(self.readers)}."
                         f"{did_you_mean(name, self.readers)}")

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
