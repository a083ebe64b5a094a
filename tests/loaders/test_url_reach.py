"""Which URLs a link may name (loaders.find.reach): normalised first, then the operator's
own URLs, an object-store scheme and a prefix the board was started with.  Pure text: none
of these cases connects anywhere (tests/loaders/test_network_reach.py proves that of the board)."""
import pytest

from loaders.find.paths import resolve_dump_dir
from loaders.find.reach import NO_REACH, RemoteError, RemoteReach, checked_url, refusal

TEAM = "s3://bucket/team"


@pytest.mark.parametrize("typed, normal", [
    ("S3://bucket/team/", TEAM), ("s3://bucket//team//run/", f"{TEAM}/run"),
    ("s3://bucket/team/a%20b", f"{TEAM}/a b"), ("s3://bucket/team/%72un", f"{TEAM}/run")])
def test_a_url_is_normalised_before_any_test(typed, normal):
    assert checked_url(typed) == normal


@pytest.mark.parametrize("typed", [
    f"{TEAM}/%2e%2e/x", f"{TEAM}/%2E%2E/x", f"{TEAM}/./run", f"{TEAM}/run?versionId=1",
    f"{TEAM}/run#x", f"{TEAM}/run?versionId=1#x", f"{TEAM}/%3Fa", f"{TEAM}/%252e%252e/x",
    f"{TEAM}/a%5C..", f"{TEAM}/a%0Ab", "s3://KEY:SECRET@bucket/team", "s3:///team"])
def test_what_a_store_could_read_otherwise_is_refused(typed):
    with pytest.raises(RemoteError):
        checked_url(typed)
    path, message = resolve_dump_dir(typed, TEAM)
    assert path is None and message and "\n" not in message


@pytest.mark.parametrize("scheme", ["http", "https", "file", "zip", "tar", "ftp", "sftp",
                                    "webhdfs", "github", "memory", "smb", "simplecache"])
def test_other_schemes_are_refused_from_the_page_in_every_case(scheme):
    url = f"{scheme}://host/team/run"
    reach = RemoteReach.of([f"{scheme}://host/team"], [f"{scheme}://host/team"])
    for root in (None, f"{scheme}://host/team", "/tmp"):
        message = refusal(url, reach, root)
        assert message.startswith(f"Refused: {scheme}:// URLs are never opened"), message


def test_the_operators_own_url_opens_whatever_its_scheme():
    reach = RemoteReach.of(["HTTP://host/run/", "/a/local/dir"], [])
    assert reach.operator_urls == {"http://host/run"}
    assert refusal("http://host/run", reach) is None
    assert refusal("http://host/run/sub", reach) is not None  # a sub-path is the page's


def test_an_object_store_url_opens_under_a_prefix_only():
    reach = RemoteReach.of([], [TEAM, "gs://other/runs"])
    assert refusal(f"{TEAM}/a", reach) is None and refusal("gs://other/runs/b", reach) is None
    assert refusal(TEAM, reach) is None
    for outside in ("s3://bucket/team2/a", "s3://bucket/other", "s3://bucket", "gs://other"):
        assert "outside a URL the board was started with" in refusal(outside, reach)
    assert "outside the allowed root" in refusal("s3://bucket/x", reach, TEAM)
    for url in ("s3://bucket/team", "s3://bucket/run"):
        assert refusal(url, NO_REACH) is not None  # without --root or --allow-remote: none


def test_a_local_root_refuses_urls_but_allow_remote_adds_them():
    assert "outside the allowed root" in resolve_dump_dir(f"{TEAM}/a", "/tmp")[1]
    reach = RemoteReach.of([], ["s3://bucket/elsewhere"])
    assert "outside the allowed root" in resolve_dump_dir(f"{TEAM}/a", "/tmp", reach=reach)[1]
    assert refusal(f"{TEAM}/a", RemoteReach.of([], [TEAM]), "/tmp") is None
