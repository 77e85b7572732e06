"""A plugin whose import calls sys.exit(3): it fails like any other, and the process goes on."""
import sys

sys.exit(3)
