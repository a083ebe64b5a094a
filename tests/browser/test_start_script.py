"""start.sh takes Streamlit's flags in both forms, `--server.port 8919` and `--server.port=8919`."""
import subprocess
import urllib.request
from pathlib import Path

from browser import ROOT, served


def test_the_space_form_serves_the_given_dir():
    # served() starts `bash start.sh DIR --server.port N --server.address 127.0.0.1`
    with served(ROOT / "samples" / "demo") as url, \
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as reply:
        assert reply.status == 200


def test_a_config_flag_without_its_value_is_refused_plainly():
    done = subprocess.run(["bash", str(ROOT / "start.sh"), "--server.port"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "--server.port needs a value" in done.stderr


def test_the_usage_line_documents_the_space_form():
    usage = Path(ROOT / "start.sh").read_text().splitlines()[1]
    assert "--group-key KEY" in usage and "[extra streamlit args]" in usage
