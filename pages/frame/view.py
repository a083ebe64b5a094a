"""The page contract: what every page receives from the frame, and the display options."""
from __future__ import annotations

from dataclasses import dataclass

from loaders import Run
from loaders import schema as S
from loaders.groups.advantage import GRPO
from loaders.groups.table import DEFAULT_PASS
from loaders.serve.groups import GroupOptions, Groups


@dataclass(frozen=True)
class DisplayOptions:
    """How text and token metrics are shown; shared by every page."""
    pad_token: str = "<PAD>"
    system_marker: str = "<endofsystem>"
    kl_estimator: str = S.K3
    tokenizer_dir: str = ""  # local tokenizer to decode token ids (optional)
    advantage: str = GRPO  # how advantages are derived when the dump has none
    pass_threshold: float = DEFAULT_PASS  # a reward at or above it passes
    show_left_out: bool = False  # filtered / failed samples in the tables (never the stats)
    group_key: str = ""  # a key to group samples by instead of the indexed group id




@dataclass(frozen=True)
class View:
    run: Run
    step: int
    options: DisplayOptions
    metrics_path: str | None = None  # a second place holding training metrics

    @property
    def groups(self) -> Groups:
        return self.run.groups(self.options.group_key or None)

    @property
    def group_options(self) -> GroupOptions:
        return GroupOptions(self.options.advantage, self.options.pass_threshold,
                            self.options.kl_estimator, self.options.show_left_out)
