"""The page contract: what every page receives from the frame, and the display options."""
from __future__ import annotations

from dataclasses import dataclass

from loaders import Run
from loaders import schema as S


@dataclass(frozen=True)
class DisplayOptions:
    """How text and token metrics are shown; shared by every page."""
    pad_token: str = "<PAD>"
    system_marker: str = "<endofsystem>"
    kl_estimator: str = S.K3
    tokenizer_dir: str = ""  # local tokenizer to decode token ids (optional)




@dataclass(frozen=True)
class View:
    run: Run
    step: int
    options: DisplayOptions
    metrics_path: str | None = None  # a second place holding training metrics
