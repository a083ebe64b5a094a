"""What every page receives from the frame."""
from __future__ import annotations

from dataclasses import dataclass

from loaders import Run
from pages.build.text import DisplayOptions


@dataclass(frozen=True)
class View:
    run: Run
    step: int
    options: DisplayOptions
    sample_key: str | None  # "file:line" from the URL, when one is chosen
    metrics_path: str | None = None  # a second place holding training metrics
