"""The display options as a URL names them, and what a link of them needs: the session keeps
them while their widgets are not drawn (pages.frame.display_options)."""
from __future__ import annotations

import math

from pages.frame.display_options import DEFAULTS, from_params, missing_params
from pages.frame.view import DisplayOptions


def test_defaults_are_the_display_options_defaults():
    base = DisplayOptions()
    assert from_params({}) == DEFAULTS
    assert (DEFAULTS["pad"], DEFAULTS["marker"], DEFAULTS["kl"], DEFAULTS["adv"],
            DEFAULTS["pass"]) == (base.pad_token, base.system_marker, base.kl_estimator,
                                  base.advantage, base.pass_threshold)


def test_a_link_names_each_option_as_text():
    chosen = from_params({"pad": "", "marker": "<|im_end|>", "kl": "k1", "adv": "rloo",
                          "tokenizer": "tok", "pass": "0.25", "step": "3"})
    assert chosen == {"pad": "", "marker": "<|im_end|>", "kl": "k1", "adv": "rloo",
                      "tokenizer": "tok", "pass": 0.25}


def test_a_wrong_value_keeps_the_default():
    for params in ({"kl": "k9"}, {"adv": "<b>x</b>"}, {"pass": "nan"}, {"pass": "inf"},
                   {"pass": "half"}):
        assert from_params(params) == DEFAULTS, params
    assert from_params({"pass": "1e400"})["pass"] == DEFAULTS["pass"]
    assert math.isfinite(DEFAULTS["pass"])


def test_a_link_needs_every_option_off_its_default():
    chosen = {**DEFAULTS, "kl": "k2", "pass": 0.25, "pad": ""}
    assert missing_params(chosen, {}) == {"kl": "k2", "pass": "0.25", "pad": ""}
    assert missing_params(chosen, {"kl": "k2", "pass": "0.25", "pad": "", "step": "1"}) == {}
    assert missing_params(chosen, {"kl": "k1", "pass": "0.25", "pad": ""}) == {"kl": "k2"}
    assert missing_params(DEFAULTS, {}) == {}
    assert missing_params({**DEFAULTS, "pass": 0.1 + 0.2}, {}) == {"pass": "0.30000000000000004"}
    for params in ({"kl": "k9"}, {"pad": "<x>", "pass": "0.75", "adv": "rloo"},
                   {"pass": "0.30000000000000004"}):
        assert missing_params(from_params(params), params) == {}  # the link round-trips
