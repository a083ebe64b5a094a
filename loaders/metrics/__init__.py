"""Scalar training metrics (loss, KL, entropy, timings, memory, ...) read from a run's logs.

Sources: verl's file logger and console lines, ROLL's `metrics_tag:` log lines, prime-rl's
metrics.jsonl, TensorBoard event files (when the optional `tensorboard` package is
installed) and any jsonl of flat dicts with a step key.
"""
from loaders.metrics.collect import MetricFrame, find_metric_files, load_metrics

__all__ = ["MetricFrame", "find_metric_files", "load_metrics"]
