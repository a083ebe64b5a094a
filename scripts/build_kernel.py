"""Build loaders/index/_kernel (kernel.c) for this interpreter, when it is missing or was
built from another source.  start.sh and tests/run.sh call it after installing; a machine
without a C compiler or Python's headers still runs the board (kernel.py's Python path),
and this says so in one line.

    python scripts/build_kernel.py [--quiet]
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "loaders" / "index"
SOURCE = HERE / "kernel.c"


def source_hash() -> str:
    """What the module must carry to be used: loaders/index/kernel.py checks the same."""
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]


def target() -> Path:
    return HERE / f"_kernel{sysconfig.get_config_var('EXT_SUFFIX')}"


def built_from() -> str | None:
    """The source hash of the module on disk, read in a fresh interpreter (an import here
    would hold the old module)."""
    if not target().exists():
        return None
    probe = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                            "import _kernel; print(_kernel.SOURCE)", str(HERE)],
                           capture_output=True, text=True, check=False)
    return probe.stdout.strip() or None


def build() -> str:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return "no C compiler (cc): the index runs its Python path, about 1.3x slower"
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        return f"no Python.h in {include}: the index runs its Python path, about 1.3x slower"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / target().name
        cmd = [compiler, "-O3", "-shared", "-fPIC", "-std=c99", "-Wall",
               f"-DKERNEL_SOURCE=\"{source_hash()}\"", f"-I{include}", str(SOURCE),
               "-o", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"the kernel did not compile: {done.stderr.strip()[-400:]}"
        os.replace(out, target())  # by rename: a running board keeps the file it loaded
    return ""


def main() -> int:
    if built_from() == source_hash():
        return 0
    failure = build()
    if failure:
        print(f"build_kernel: {failure}", file=sys.stderr)
    elif "--quiet" not in sys.argv:
        print(f"build_kernel: built {target().relative_to(HERE.parents[1])}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
