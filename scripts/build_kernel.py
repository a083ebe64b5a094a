"""Build loaders/index/_kernel (kernel.c) and _lines (lines.c) for this interpreter, each
when it is missing or was built from another source.  start.sh and tests/run.sh call it
after installing; a machine without a C compiler or Python's headers still runs the board
(the Python paths of kernel.py and lines.py), and this says so in one line."""
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
MODULES = {"_kernel": "kernel.c", "_lines": "lines.c"}  # module: its source beside it


def source_hash(name: str = "_kernel") -> str:
    """What the module must carry to be used: loaders/index/kernel.py (and lines.py) check
    the same."""
    return hashlib.sha256((HERE / MODULES[name]).read_bytes()).hexdigest()[:16]


def target(name: str = "_kernel") -> Path:
    return HERE / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"


def built_from(name: str) -> str | None:
    """The source hash of the module on disk, read in a fresh interpreter (an import here
    would hold the old module)."""
    if not target(name).exists():
        return None
    probe = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                            f"import {name}; print({name}.SOURCE)", str(HERE)],
                           capture_output=True, text=True, check=False)
    return probe.stdout.strip() or None


def build(name: str) -> str:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return "no C compiler (cc): the index runs its Python path, about 1.3x slower"
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        return f"no Python.h in {include}: the index runs its Python path, about 1.3x slower"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / target(name).name
        # no fused multiply-add: every float step one rounding, as numpy's (kernel.c's sums)
        cmd = [compiler, "-O3", "-shared", "-fPIC", "-std=c99", "-Wall", "-ffp-contract=off",
               f"-DKERNEL_SOURCE=\"{source_hash(name)}\"", f"-I{include}",
               str(HERE / MODULES[name]), "-o", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"{MODULES[name]} did not compile: {done.stderr.strip()[-400:]}"
        os.replace(out, target(name))  # by rename: a running board keeps the file it loaded
    return ""


def main() -> int:
    for name in MODULES:
        if built_from(name) == source_hash(name):
            continue
        failure = build(name)
        if failure:
            print(f"build_kernel: {failure}", file=sys.stderr)
        elif "--quiet" not in sys.argv:
            print(f"build_kernel: built {target(name).relative_to(HERE.parents[1])}",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
