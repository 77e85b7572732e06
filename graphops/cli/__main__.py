"""``python -m graphops.cli``: the ``graphops`` command."""
from graphops.cli.command import entry

entry()
