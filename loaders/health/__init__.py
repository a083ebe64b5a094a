"""Run health: per-step signals from metrics and dump, robust baselines, and alert rules."""
