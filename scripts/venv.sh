# Sourced by start.sh and tests/run.sh: make .venv and install a requirements file into it,
# skipping pip when the file has not changed since the last install; then build the index's
# C kernel when it is missing or stale (scripts/build_kernel.py).
# usage: ensure_venv REQUIREMENTS_FILE
ensure_venv() {
  local req="$1" here venv stamp want
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="${RL_BOARD_VENV:-$here/.venv}"
  if [ ! -x "$venv/bin/python" ]; then
    echo "creating virtualenv $venv" >&2
    python3 -m venv "$venv" || { echo "error: python3 -m venv failed" >&2; return 1; }
  fi
  stamp="$venv/.installed-$(basename "$req")"
  want="$(cat "$here/requirements.txt" "$here/$req" | sha256sum | cut -c1-16)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing $req into $venv" >&2
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/$req" >&2 \
      || { echo "error: pip install -r $req failed" >&2; return 1; }
    echo "$want" > "$stamp"
  fi
  VENV_PY="$venv/bin/python"
  export VENV_PY
  # the index build's C loops (loaders/index/kernel.c); without a compiler the board still
  # runs, its index about 1.3x slower, and this says so
  "$VENV_PY" "$here/scripts/build_kernel.py" --quiet >&2 || true
  # the board's bytecode, once: each index worker imports the parser, and where
  # PYTHONDONTWRITEBYTECODE is set it would compile it from source every time (~60 ms a start)
  "$VENV_PY" -m compileall -q "$here/loaders" "$here/pages" "$here/rl_logging_board.py" \
    >/dev/null 2>&1 || true
}
