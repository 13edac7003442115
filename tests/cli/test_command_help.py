"""Every option of every command says what it does and, where it has one, its default."""
from __future__ import annotations

import argparse
from importlib import import_module

import pytest

from paddle_pfc.cli.entry import COMMANDS


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _parser(name: str, monkeypatch) -> argparse.ArgumentParser:
    """The parser a command's ``main`` builds (caught as it parses)."""
    def parse_args(self, args=None, namespace=None):
        raise _Parsed(self)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_args)
    with pytest.raises(_Parsed) as caught:
        import_module(f"paddle_pfc.cli.{name}").main([])
    return caught.value.parser


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_has_help_and_its_default(name, monkeypatch):
    parser = _parser(name, monkeypatch)
    text = parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        flag = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip(), f"{name} {flag}: no help text"
        if action.default not in (None, False, [], argparse.SUPPRESS):
            formatter = parser._get_formatter()
            assert "default" in formatter._get_help_string(action), f"{name} {flag}: default not shown"
    assert "(default:" in text or name in ("selfcheck",)


def test_plan_takes_a_training_config_and_says_what_it_covers(capsys):
    """The trap: paddle-pfc-plan had no -c, and did not say its figure is the head's alone."""
    from pathlib import Path

    from paddle_pfc.cli import plan

    config = Path(__file__).resolve().parents[2] / "configs" / "ms1mv3_r50.yaml"
    assert plan.main(["-c", str(config), "--world-size", "8"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("head memory per rank (the head only") and "not the backbone" in out
    assert "93431 classes" in out.replace(",", "") and "D=512, W=8" in out
    assert plan.main(["-c", str(config), "-o", "data.num_classes=1000", "--embedding-size", "128"]) == 0
    out = capsys.readouterr().out
    assert "1000 classes" in out.replace(",", "") and "D=128" in out
    assert plan.main(["-c", str(config), "-o", "train.bogus=1"]) == 2
    assert "train.bogus" in capsys.readouterr().err
