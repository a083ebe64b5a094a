"""Optional packages: a missing one is a one-line message naming what to install."""
import builtins

from loaders.find.paths import resolve_dump_dir
from loaders.find.reach import RemoteReach
from loaders.serve.open_run import DumpError, open_run


def without(monkeypatch, *names: str) -> None:
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.split(".")[0] in names:
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)


def test_a_url_without_fsspec_says_what_to_install(monkeypatch):
    without(monkeypatch, "fsspec")
    operator = RemoteReach.of(["s3://bucket/run"], [])  # the dump dir the board started with
    path, error = resolve_dump_dir("s3://bucket/run", None, reach=operator)
    assert path is None and "optional fsspec and s3fs packages" in error
    try:
        open_run("gs://bucket/run")
    except DumpError as err:
        assert "pip install fsspec gcsfs" in str(err)
    else:
        raise AssertionError("opened a URL without fsspec")


def test_a_scheme_without_its_package_says_which():
    import importlib.util

    if importlib.util.find_spec("gcsfs") is not None:  # the tests do not install it
        return
    operator = RemoteReach.of(["gs://bucket/run"], [])
    path, error = resolve_dump_dir("gs://bucket/run", None, reach=operator)
    assert path is None and "optional gcsfs package" in error
