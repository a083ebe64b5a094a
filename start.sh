#!/usr/bin/env bash
# bash start.sh [DUMP_DIR] [--root DIR] [--metrics PATH] [--group-key KEY] [--allow-remote PREFIX] [extra streamlit args]
# Serves RL Logging Board on 127.0.0.1:8901 (override with --server.port N; share it on
# purpose with --server.address ADDR, and --root); opens samples/demo when no DUMP_DIR is given.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/venv.sh
source "$here/scripts/venv.sh"
ensure_venv requirements.txt

dump_dir=""
app_args=()
st_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --root) app_args+=(--root "$2"); shift 2 ;;
    --root=*) app_args+=(--root "${1#--root=}"); shift ;;
    --metrics) app_args+=(--metrics "$2"); shift 2 ;;
    --metrics=*) app_args+=(--metrics "${1#--metrics=}"); shift ;;
    --group-key) app_args+=(--group-key "$2"); shift 2 ;;
    --group-key=*) app_args+=(--group-key "${1#--group-key=}"); shift ;;
    --allow-remote) app_args+=(--allow-remote "$2"); shift 2 ;;
    --allow-remote=*) app_args+=(--allow-remote "${1#--allow-remote=}"); shift ;;
    --*.*=*) st_args+=("$1"); shift ;;
    # a Streamlit config flag (--server.port, --theme.base, …) always takes a value: the
    # space form passes the next word along with it
    --*.*) if [ $# -lt 2 ]; then echo "start.sh: $1 needs a value" >&2; exit 2; fi
           st_args+=("$1=$2"); shift 2 ;;
    --*) st_args+=("$1"); shift ;;
    *) if [ -z "$dump_dir" ]; then dump_dir="$1"; else st_args+=("$1"); fi; shift ;;
  esac
done
dump_dir="${dump_dir:-${RL_BOARD_DUMP_DIR:-$here/samples/demo}}"

cd "$here"
exec "$VENV_PY" scripts/serve.py run rl_logging_board.py --server.port 8901 \
  ${st_args[@]+"${st_args[@]}"} -- --dump-dir "$dump_dir" ${app_args[@]+"${app_args[@]}"}
