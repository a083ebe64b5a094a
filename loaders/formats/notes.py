"""What a run's formats leave out or hold twice, said once per run (the sidebar, the CLI).

Formats that hold the same samples twice with no key to join them:

prime-rl writes each rollout twice: as a verifiers episode (rollouts/step_N/…/traces.jsonl,
src/prime_rl/monitors/file.py) and, with `enable_token_export`, as the trainer's token
export (token_exports/step_N/rank_R.jsonl, src/prime_rl/trainer/rl/token_export.py).  The
export's only id is its place in its file (`export_sequence_idx`), which no episode names,
so the two are shown apart, not joined by a guess.
"""
from __future__ import annotations

from collections.abc import Mapping

_APART = {
    frozenset({"verifiers", "prime_rl"}):
        "prime-rl's token exports (token_exports/) and its episodes (rollouts/) hold the same "
        "rollouts, and no key joins an export to its episode: both are shown, apart (each "
        "rollout counts twice in the run's totals; choose a sub-run to see one)",
}


# formats whose files hold no text at all: their samples' texts show empty for that reason
_TEXTLESS = {
    "tinker": "Tinker's rollout summaries hold no prompt or response text and no tokens "
              "(tinker_cookbook/rl/rollout_logging.py): texts show empty, lengths 0; the "
              "action tokens are the `action_tokens` column",
}


def run_notes(formats: Mapping[str, str]) -> list[str]:
    """What the run's formats hold twice, unjoined, or leave out."""
    found = set(formats.values())
    return ([note for pair, note in _APART.items() if pair <= found]
            + [note for name, note in _TEXTLESS.items() if name in found])
