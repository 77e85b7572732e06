"""YAML pipelines: ``load_pipeline`` validates (structure, then meaning), ``run_pipeline`` executes."""
from __future__ import annotations

from .load import LoadedPipeline, load_pipeline
from .run import RunSummary, run_pipeline

__all__ = ["LoadedPipeline", "RunSummary", "load_pipeline", "run_pipeline"]
