"""The engine's data checks read the data-format table: data.skip_bad only where a row reads it,
data.num_classes: null only where a row has a count of its own."""
from __future__ import annotations

import subprocess
import sys

import pytest

from launcher import REPO
from paddle_pfc.engine.builder import check_supported
from paddle_pfc.engine.config import ConfigError, load_config


@pytest.mark.parametrize("kind, reason", [
    ("rec", "a corrupt .rec record is an error naming its index and offset"),
    ("synthetic", "synthetic images are generated, none is corrupt"),
])
def test_skip_bad_is_refused_where_no_row_reads_it(kind, reason):
    cfg = load_config(None, [f"data.kind={kind}", "data.root=/d", "data.num_classes=4", "data.skip_bad=true"])
    with pytest.raises(ConfigError, match=f"data.skip_bad: only supported for data.kind=folder \\({reason}\\)"):
        check_supported(cfg, gpu=False)
    check_supported(load_config(None, ["data.kind=folder", "data.root=/d", "data.num_classes=4",
                                       "data.skip_bad=true"]), gpu=False)


def test_a_null_class_count_of_generated_data_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, "tools/train.py", "-c", "tests/train_tiny.yaml",
                           "-o", "data.num_classes=null", "-o", f"train.output_dir={tmp_path / 'run'}"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert ("data.num_classes: null reads the count from the data, but synthetic data has none: give it "
            "(e.g. -o data.num_classes=300)") in proc.stderr
