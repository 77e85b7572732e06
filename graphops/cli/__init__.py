"""Layer 8, cli: the ``graphops`` command (:mod:`~graphops.cli.command`) and ``graphops bench``
(:mod:`~graphops.cli.bench`). Imports every layer below."""
from graphops.cli.command import build_parser, main

__all__ = ["main", "build_parser"]
