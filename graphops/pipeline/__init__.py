"""YAML pipelines: ``load_pipeline`` validates (structure, then meaning), ``run_pipeline`` executes."""
from __future__ import annotations

from graphops.pipeline.load import LoadedPipeline, load_pipeline
from graphops.pipeline.run import RunSummary, run_pipeline

__all__ = ["LoadedPipeline", "RunSummary", "load_pipeline", "run_pipeline"]
