"""Images in prompts (vision-language RL): decoded in the server, never fetched or linked;
a hostile one is a placeholder and a reason, never a crash."""
import base64
import io

import pandas as pd
import pytest
import torch
import torch_dumps as T
from apptest import board, errors
from dump_files import make_sample, write_dump
from image_files import bomb, png
from PIL import Image

from loaders import open_run
from loaders import schema as S
from loaders.serve.images import decoded, sample_images

SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


@pytest.fixture(scope="module")
def vlm_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("vlm")
    (root / "img").mkdir()
    (root / "img" / "cat.png").write_bytes(png())
    (root / "img" / "bomb.png").write_bytes(bomb())
    (root / "img" / "cut.png").write_bytes(png((64, 64))[:60])  # truncated
    (root / "img" / "evil.svg").write_bytes(SVG)
    (root.parent / "outside.png").write_bytes(png())
    data_url = "data:image/png;base64," + base64.b64encode(png((5, 5), (0, 0, 255))).decode()
    images = [["img/cat.png"], [data_url], ["img/bomb.png", "img/cut.png"], ["img/evil.svg"],
              ["../outside.png", "https://example.com/x.png"], []]
    write_dump(root / "rollout_data_rank_0.jsonl",
               [make_sample(1, seed=i, images=imgs) for i, imgs in enumerate(images)])
    return root


def _key(i: int) -> str:
    return f"rollout_data_rank_0.jsonl:{i + 1}"


def test_each_image_decodes_or_says_why_not(vlm_run):
    run = open_run(vlm_run, use_cache=False)
    assert run.samples.sort_values(S.LINE)[S.IMAGES].tolist() == [1, 1, 2, 1, 2, 0]
    shown = {i: sample_images(run.root, run.sample(_key(i))) for i in range(6)}
    assert (shown[0][0].width, shown[0][0].height) == (8, 6) and shown[0][0].png
    assert Image.open(io.BytesIO(shown[1][0].png)).getpixel((0, 0))[:3] == (0, 0, 255)
    assert "decompression bomb" in shown[2][0].problem and shown[2][0].png is None
    assert "does not decode" in shown[2][1].problem
    assert "not an image" in shown[3][0].problem  # an SVG is never decoded, let alone run
    assert "no such image inside the dump dir" in shown[4][0].problem  # ../ is outside
    assert shown[4][1].problem == "a remote image is never fetched"
    assert shown[4][1].text == "https://example.com/x.png" and shown[5] == []


def test_the_sample_page_shows_images_and_placeholders(vlm_run):
    at = board(vlm_run, page="sample", step="1", sample=_key(2))
    assert not errors(at)
    warnings = [w.value for w in at.warning]
    assert any("decompression bomb" in w for w in warnings)
    assert any("does not decode" in w for w in warnings)
    good = board(vlm_run, page="sample", step="1", sample=_key(0))
    assert not errors(good) and len(good.get("image")) == 1


def test_responses_show_a_thumbnail_a_row(vlm_run):
    at = board(vlm_run, page="responses", step="1", sort="(any column)", col="line",
               desc="false")
    table = at.dataframe[0].value
    thumbs = dict(zip(table["key"], table["image"]))
    assert thumbs[_key(0)].startswith("data:image/png;base64,")
    assert thumbs[_key(1)].startswith("data:image/png;base64,")
    assert pd.isna(thumbs[_key(2)]) and pd.isna(thumbs[_key(5)])  # a bomb; no image


def test_a_slime_vlm_rollout_shows_its_pickled_pil_image(tmp_path):
    """multimodal_inputs holds PIL images, pickled by torch.save: read by the allow-list
    (mode, size, raw pixels), never by PIL's own unpickling."""
    root = T.slime_run(tmp_path / "slime")
    path = root / "rollout_data" / "3.pt"
    payload = torch.load(path, weights_only=False)
    payload["samples"][0]["multimodal_inputs"] = {"image": [Image.new("RGB", (4, 3), "red")]}
    torch.save(payload, path)
    run = open_run(root, use_cache=False)
    assert run.problems == [] and run.samples[S.IMAGES].tolist()[0] == 1
    image = sample_images(run.root, run.sample("rollout_data/3.pt:1"))[0]
    assert (image.width, image.height) == (4, 3)
    assert Image.open(io.BytesIO(image.png)).getpixel((0, 0))[:3] == (255, 0, 0)


def test_a_decoded_thumbnail_is_bounded():
    from loaders.parse.images import ImageRef

    big = decoded(ImageRef("bytes", png((2000, 500))), None, None, side=96)
    assert (big.width, big.height) == (96, 24)


def test_a_groups_answers_show_the_prompts_image(tmp_path):
    from loaders.serve.groups import GroupOptions

    (tmp_path / "cat.png").write_bytes(png())
    write_dump(tmp_path / "rollout_data_rank_0.jsonl",
               [make_sample(1, seed=0, images=["cat.png"], response=f"answer {i}")
                for i in range(2)])  # one prompt, two answers: one group
    run = open_run(tmp_path)
    group = run.trained().groups().step(1, GroupOptions()).table.index[0]
    at = board(tmp_path, page="groups", step="1")
    at = at.text_input(key="gid").set_value(str(group)).run()
    assert not errors(at)
    answers = at.dataframe(key="t_answers").value
    assert answers["image"].map(lambda u: u.startswith("data:image/png;base64,")).all()
