"""``python -m graphops.cli``: the ``graphops`` command."""
import sys

from graphops.cli.command import main

sys.exit(main())
