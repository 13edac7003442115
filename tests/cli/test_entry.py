"""paddle_pfc.cli.entry: a command's ops record the same call stacks, and its exit status is main's."""
from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import traceback
import weakref

import pytest

from paddle_pfc.cli.entry import quick_call_stacks, run


def op_call_stacks(quick: bool) -> list[list[str]]:
    """Every op's recorded call stack (Paddle's ``op_callstack`` attribute) of a small program."""
    import paddle

    with quick_call_stacks() if quick else contextlib.nullcontext():
        program = paddle.static.Program()
        with paddle.static.program_guard(program):
            x = paddle.static.data("x", [4, 3], "float32")
            y = paddle.nn.functional.relu(paddle.matmul(x, x, transpose_y=True))
            paddle.mean(y)
    return [op.attrs().get("op_callstack") for op in program.global_block().ops]


def test_ops_record_the_same_call_stacks(static_mode):
    expected, got = op_call_stacks(quick=False), op_call_stacks(quick=True)
    assert sum(stack is not None for stack in expected) >= 4
    assert any("paddle.nn.functional.relu" in line for stack in expected for line in stack or ())  # source lines
    assert got == expected
    assert traceback.extract_stack.__module__ == "traceback"  # restored


def newest_two() -> list[tuple[str, str]]:
    return [(frame.name, frame.line) for frame in traceback.extract_stack(limit=2)]


def test_extract_stack_with_a_limit_is_the_original():
    with quick_call_stacks():
        quick = newest_two()
    original = newest_two()
    assert len(quick) == 2 and quick[1] == original[1] == ("newest_two", "return [(frame.name, frame.line) "
                                                           "for frame in traceback.extract_stack(limit=2)]")
    assert quick[0][0] == original[0][0] == "test_extract_stack_with_a_limit_is_the_original"


@pytest.mark.parametrize("ranks", ["1", "2"])
@pytest.mark.parametrize("body, code, message", [
    ("return 3", 3, ""),
    ("return None", 0, ""),
    ("raise ValueError('named problem')", 1, "ValueError: named problem"),
    ("raise SystemExit('bad usage')", 1, "bad usage"),
    ("raise KeyboardInterrupt", -signal.SIGINT, "KeyboardInterrupt"),  # the interpreter dies by SIGINT
])
def test_run_exits_with_mains_status(body, code, message, ranks):
    """main's status, its error on stderr, and the ``atexit`` handlers run with its output
    flushed (stdout is a pipe: block-buffered), also in a rank of a multi-rank job
    (``PADDLE_TRAINERS_NUM`` 2), which leaves by ``os._exit``."""
    script = ("import atexit\nfrom paddle_pfc.cli.entry import run\n"
              "atexit.register(lambda: print('atexit handler'))\n"
              f"def main():\n    print('ran')\n    {body}\nrun(main)\n")
    env = {**os.environ, "PADDLE_TRAINERS_NUM": ranks}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == code and message in proc.stderr, proc.stderr
    assert proc.stdout == "ran\natexit handler\n"
    if "Error" in message or "Interrupt" in message:  # the traceback as the interpreter prints it
        assert "Traceback (most recent call last)" in proc.stderr and 'in main' in proc.stderr


def test_a_rank_leaves_with_a_thread_pool_still_open():
    """A pool left open (its worker threads are not daemons) is stopped as at a normal exit, not
    waited on forever."""
    script = ("from concurrent.futures import ThreadPoolExecutor\nfrom paddle_pfc.cli.entry import run\n"
              "pool = ThreadPoolExecutor(1)\n"
              "def main():\n    pool.submit(print, 'pool ran').result()\n    return 4\nrun(main)\n")
    env = {**os.environ, "PADDLE_TRAINERS_NUM": "2"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 4 and proc.stdout == "pool ran\n", proc.stderr


def test_run_collects_then_freezes():
    """In this process (``run`` ends in ``sys.exit``): garbage cycles are collected, not frozen."""
    class Cycle:
        pass

    refs = []

    def main() -> int:
        cycle = Cycle()
        cycle.me = cycle
        refs.append(weakref.ref(cycle))
        return 0

    gc.disable()  # no collection but run's own
    try:
        with pytest.raises(SystemExit) as exit_info:
            run(main)
        assert exit_info.value.code == 0 and gc.get_freeze_count() > 0
        assert refs[0]() is None
    finally:
        gc.unfreeze()
        gc.enable()


@pytest.mark.parametrize("verbose", [False, True])
def test_a_commands_warning_is_one_line(verbose):
    """A warning a command shows is ``warning: MESSAGE``, without Python's file, category and source
    line; ``PADDLE_PFC_VERBOSE=1`` shows Python's own form."""
    script = ("import warnings\nfrom paddle_pfc.cli.entry import run\n"
              "def main():\n    warnings.warn('model.onnx: named assumption')\nrun(main)\n")
    env = {**os.environ, "PADDLE_TRAINERS_NUM": "1", "PADDLE_PFC_VERBOSE": "1" if verbose else "0"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    if verbose:
        assert proc.stderr == "<string>:4: UserWarning: model.onnx: named assumption\n"
    else:
        assert proc.stderr == "warning: model.onnx: named assumption\n"
