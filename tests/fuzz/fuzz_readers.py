#!/usr/bin/env python
"""Fuzz paddle_pfc's file readers for longer than CI does.

    python tests/fuzz/fuzz_readers.py --reader bin --cases 2000 --seed 1
    python tests/fuzz/fuzz_readers.py --reader all --cases 300 --findings /tmp/fuzz-findings

Prints, per reader: files tried, outcome counts, peak RSS, longest read, and every finding (an
outcome other than read / refused) with its file; ``--findings`` keeps a copy of each such input.
A development tool over the test suite's harness (tests/helpers/fuzz: its seeds come from the
test fixtures), so it lives beside that harness, not in tools/; the package never imports it.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS.parent)]

from helpers.fuzz.cases import make_cases  # noqa: E402
from helpers.fuzz.harness import TIMEOUT, run_reader  # noqa: E402
from helpers.fuzz.seeds import WRITERS  # noqa: E402

READERS = list(WRITERS)  # the readers with seeds (the worker also knows its own check reader)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reader", default="all", help=f"one of {', '.join(READERS)}, or all")
    parser.add_argument("--cases", type=int, default=300, help="cases per reader")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds one read may take")
    parser.add_argument("--findings", type=Path, default=None, help="copy each finding's input here")
    args = parser.parse_args(argv)
    readers = list(READERS) if args.reader == "all" else [args.reader]
    if not set(readers) <= set(READERS):
        parser.error(f"--reader {args.reader}: one of {', '.join(READERS)}, or all")
    found = 0
    for reader in readers:
        with tempfile.TemporaryDirectory(prefix=f"fuzz-{reader}-") as scratch:
            summary = run_reader(reader, make_cases(reader, Path(scratch), args.cases, args.seed), args.timeout)
            print(summary.line(), flush=True)
            for outcome in summary.findings:
                found += 1
                print(f"  {outcome.outcome}: {outcome.file}: {outcome.error}", flush=True)
                if args.findings is not None:
                    target = args.findings / reader / Path(outcome.file).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    copy = shutil.copytree if Path(outcome.file).is_dir() else shutil.copy
                    copy(outcome.file, target)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
