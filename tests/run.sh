#!/usr/bin/env bash
# bash tests/run.sh [pytest args]: lint, then every test. Browser tests run when a Chromium
# is found (RL_BOARD_CHROMIUM, /usr/bin/chromium, chromium on PATH); under CI they must run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
# shellcheck source=../scripts/venv.sh
source "$here/scripts/venv.sh"
ensure_venv requirements-dev.txt

"$VENV_PY" -m ruff check .

chromium="${RL_BOARD_CHROMIUM:-}"
[ -z "$chromium" ] && [ -x /usr/bin/chromium ] && chromium=/usr/bin/chromium
[ -z "$chromium" ] && chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -n "$chromium" ]; then
  export RL_BOARD_CHROMIUM="$chromium"
  echo "browser tests: using $chromium"
elif [ "${CI:-}" = "true" ]; then
  echo "error: CI=true but no Chromium found; .ci/run installs Debian's chromium" >&2
  exit 1
else
  echo "browser tests: SKIPPED (no Chromium found; apt-get install chromium to run them)"
fi
exec "$VENV_PY" -m pytest -q -n "${RL_BOARD_TEST_WORKERS:-auto}" "$@"
