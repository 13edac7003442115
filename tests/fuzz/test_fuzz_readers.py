"""Every file reader of paddle_pfc under fuzzed input: each outcome is a read or a refusal that names
the file (an error of the package's family, or a ValueError naming it), never a crash, a hang, an
allocation past the limit or another exception.

A cross-cutting folder rather than one test per package layer: one harness (worker processes
with an address-space limit and a timeout, :mod:`helpers.fuzz.harness`) and one case generator
serve readers of five layers (utils, data, evaluation, interop, engine), and the suite is
deselected as a whole with ``-m "not fuzz"``. Each test runs a few dozen cases from a fixed seed;
``tests/fuzz/fuzz_readers.py`` runs thousands (docs/reliability.md, "Fuzzing").
"""
from __future__ import annotations

import pytest

from helpers.fuzz.cases import make_cases
from helpers.fuzz.harness import run_reader

pytestmark = pytest.mark.fuzz

#: a read takes milliseconds; a worker's first one waits for its imports as well (helpers.fuzz.harness)
TIMEOUT = 5.0


READERS = [
    ("bin", 40),
    ("pdparams", 40),
    ("torch", 40),
    ("onnx", 15),
    ("rec", 30),
    ("labels", 30),
    ("npz", 30),
    ("checkpoint", 20),
    ("yaml", 30),
]


@pytest.mark.parametrize("reader, count", READERS)
def test_fuzzed_inputs_are_read_or_refused_by_name(reader, count, tmp_path):
    summary = run_reader(reader, make_cases(reader, tmp_path, count, seed=20261128), timeout=TIMEOUT, stop=True)
    assert not summary.findings, summary.line() + "".join(
        f"\n  {o.outcome}: {o.file}: {o.error}" for o in summary.findings)
    assert len(summary.outcomes) == count


def test_harness_tells_each_outcome_and_resumes_after_a_death(tmp_path):
    actions = ["read", "refuse", "raise", "allocate", "segfault", "read", "hang", "read"]
    files = []
    for index, action in enumerate(actions):
        files.append(tmp_path / f"{index}-{action}")
        files[-1].write_text(action)
    summary = run_reader("harness-check", files, timeout=2.0)
    assert [o.outcome for o in summary.outcomes] == ["read", "refused", "traceback", "oom", "crash", "read",
                                                     "hang", "read"]
    assert [o.file for o in summary.outcomes] == [str(f) for f in files]
    assert "KeyError" in summary.outcomes[2].error and "SIGSEGV" in summary.outcomes[4].error
