"""A crafted YAML config (aliases of aliases, a value that holds itself, absurd nesting, a base that
is a device, bytes that are not UTF-8, a tag PyYAML cannot construct, a value that is not a config)
is a one-line config error naming the file (exit 2), never a hang, a memory bomb or a traceback."""
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
    ("lr: !!timestamp 'AAAA'\n", "invalid YAML: a value cannot be read"),
    ("mod\n", "<root>: expected a mapping of sections"),
], ids=["billion-laughs", "mapping-holds-itself", "list-holds-itself", "many-aliases", "deep-nesting",
        "unconstructible-tag", "not-a-mapping"])
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


@pytest.mark.parametrize("content, problem", [
    ("_base_: /dev/zero\n", "_base_: /dev/zero: not a regular file"),
    (b"_bas\xa5I\xb4\n", "not UTF-8 text (byte 4)"),
], ids=["base-is-a-device", "not-utf8"])
def test_a_config_that_is_no_text_file_is_named_before_it_is_read(tmp_path, content, problem):
    """``_base_: /dev/zero`` was read until memory ran out; bytes that are not UTF-8 raised a
    UnicodeDecodeError."""
    from paddle_pfc.engine.config import ConfigError, load_config

    path = tmp_path / "odd.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigError, match=f"{path}: .*" if "base" in problem else str(path)) as info:
        load_config(path)
    assert problem in str(info.value)


def test_an_overrides_problem_is_not_the_files(tmp_path):
    """A problem of the file's own keys names the file; one an override makes does not."""
    from paddle_pfc.engine.config import ConfigError, load_config

    path = tmp_path / "run.yaml"
    path.write_text("model:\n  embedding_size: 0\ndata:\n  num_classes: 10\n")
    with pytest.raises(ConfigError, match=rf"invalid config: {path}: model\.embedding_size: must be >= 1"):
        load_config(path)
    path.write_text("model:\n  embedding_size: 64\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, ["model.embedding_size=0"])
    assert "\n  model.embedding_size: must be >= 1" in str(info.value)  # the override's, not the file's
    assert f"\n  {path}: data.num_classes: required" in str(info.value)


def test_a_few_anchors_and_aliases_still_load(tmp_path):
    from paddle_pfc.engine.config import load_config

    path = tmp_path / "ok.yaml"
    path.write_text("data: {kind: synthetic, num_classes: &n 24}\nmodel: &m {backbone: mobilefacenet}\n"
                    "validation: {sets: [], every_steps: 0}\ntrain: {epochs: *n}\n")
    assert load_config(path).train.epochs == 24
