"""pages.figures.ranges: the Responses page's range sliders' bounds, and a clicked bar's
range kept inside them (what a jump then puts in the URL)."""
import math

import numpy as np
import pandas as pd
import pytest

from pages.figures import ranges


def test_the_reward_bounds_widen_to_the_slider_step_and_leave_out_non_finite_rewards():
    reward = pd.Series([0.123, math.nan, 1.871, -math.inf, 0.5])
    assert ranges.reward_bounds(reward) == (0.12, 1.88)
    assert ranges.reward_bounds(pd.Series([-0.505, 2.0])) == (-0.51, 2.0)


@pytest.mark.parametrize("reward", [[1.0, 1.0, math.nan], [math.nan, math.inf], []])
def test_no_reward_bounds_where_the_finite_rewards_do_not_differ(reward):
    assert ranges.reward_bounds(pd.Series(reward, dtype=float)) is None


def test_a_column_bounds_are_its_values_without_nan():
    assert ranges.column_bounds(pd.Series([3, 1, 2])) == (1.0, 3.0)
    assert ranges.column_bounds(pd.Series([0.5, np.nan, 1.0])) == (0.5, 1.0)
    assert ranges.column_bounds(pd.Series([2.0, np.nan])) is None


@pytest.mark.parametrize(("asked", "kept"), [
    ((0.9, 1.2), (0.9, 1.2)),  # inside: as asked
    ((-0.05, 0.3), (0.0, 0.3)),  # the first bar's left edge passes the lowest value
    ((1.9, 2.07), (1.9, 2.0)),  # the last bar's right edge
    ((-3.0, -2.0), (0.0, 0.0)),  # wholly below: the lowest end
    ((5.0, 6.0), (2.0, 2.0)),  # wholly above: the highest end
])
def test_a_range_is_kept_inside_the_bounds(asked, kept):
    assert ranges.clamped(asked, (0.0, 2.0)) == kept


@pytest.mark.parametrize("chosen, filtered", [
    ((0.12, 1.88), None),  # the whole slider: no filter (inf and missing rewards stay)
    ((0.5, 1.88), (0.5, math.inf)),  # its top end kept: a reward of inf stays in
    ((0.12, 0.5), (-math.inf, 0.5)),
    ((0.3, 0.6), (0.3, 0.6)),
])
def test_a_chosen_range_filters_only_when_narrowed_and_its_ends_at_the_bounds_are_open(
        chosen, filtered):
    assert ranges.opened(chosen, (0.12, 1.88)) == filtered


def test_an_untouched_range_follows_the_next_steps_bounds_and_a_narrowed_end_stays():
    assert ranges.followed((0.47, 1.0), (0.47, 1.0), (0.0, 1.0)) == (0.0, 1.0)
    assert ranges.followed((0.6, 1.0), (0.47, 1.0), (0.0, 2.0)) == (0.6, 2.0)
    assert ranges.followed((0.0, 0.5), (0.0, 1.0), (0.2, 0.9)) == (0.2, 0.5)
    assert ranges.followed((0.3, 0.4), (0.0, 1.0), (0.5, 0.9)) == (0.5, 0.5)  # kept inside
