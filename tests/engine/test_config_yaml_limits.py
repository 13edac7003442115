"""A crafted YAML config (aliases of aliases, a value that holds itself, absurd nesting) is a
one-line config error naming the file (exit 2), never a hang, a memory bomb or a traceback."""
from __future__ import annotations

import subprocess
import sys

import pytest

from launcher import REPO

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))


@pytest.mark.parametrize("text, problem", [
    (f"model:\n  backbone: r50\n{LAUGHS}", "expands to more than 100,000 values"),   # 10**9 values
    ("model: &m {backbone: r50, more: *m}\n", "a value that contains itself"),
    ("train: &t [1, *t]\n", "a value that contains itself"),
    ("x: &x [" + ", ".join(["*x"] * 101) + "]\n", "more than 100 aliases"),
    ("x: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
], ids=["billion-laughs", "mapping-holds-itself", "list-holds-itself", "many-aliases", "deep-nesting"])
def test_crafted_yaml_is_a_one_line_config_error(tmp_path, text, problem):
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    try:
        proc = subprocess.run([sys.executable, "-m", "paddle_pfc.cli.train", "-c", str(path)], cwd=REPO,
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the config hung the command")
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("config error: "), proc.stderr[-2000:]
    assert f"{path}: {problem}" in lines[0]


def test_a_few_anchors_and_aliases_still_load(tmp_path):
    from paddle_pfc.engine.config import load_config

    path = tmp_path / "ok.yaml"
    path.write_text("data: {kind: synthetic, num_classes: &n 24}\nmodel: &m {backbone: mobilefacenet}\n"
                    "validation: {sets: [], every_steps: 0}\ntrain: {epochs: *n}\n")
    assert load_config(path).train.epochs == 24
