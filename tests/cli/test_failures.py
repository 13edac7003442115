"""A command's usage and input errors: one line on stderr and exit 2, the traceback with PADDLE_PFC_VERBOSE=1."""
from __future__ import annotations

import pytest

from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.utils.errors import InputDataError, RunDataError, UsageError


@pytest.mark.parametrize("error", [UsageError("--out: not a folder"), InputDataError("a.bin", "truncated", "record 2"),
                                   RunDataError("label 9 outside [0, 5)"), FileNotFoundError("x.npz: not found")])
def test_usage_failure_is_one_line_and_status_2(error, capsys, monkeypatch):
    monkeypatch.delenv("PADDLE_PFC_VERBOSE", raising=False)
    try:
        raise error
    except USER_ERRORS as exc:
        assert usage_failure(exc) == 2
    assert capsys.readouterr().err == f"error: {error}\n"


def test_usage_failure_raises_when_verbose(monkeypatch):
    monkeypatch.setenv("PADDLE_PFC_VERBOSE", "1")
    with pytest.raises(UsageError, match="bad option"):
        try:
            raise UsageError("bad option")
        except USER_ERRORS as exc:
            usage_failure(exc)
