"""The version of graphops (one place; imported by the package root and the pipeline loader)."""

__version__ = "0.1.0"
