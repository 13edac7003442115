#!/usr/bin/env python
"""Time and peak memory of reading IJB meta files of IJB-C's size.

Usage (from the repo root)::

    python tools/bench_ijb_meta.py                      # IJB-C size, files in a temporary folder
    python tools/bench_ijb_meta.py --dir /tmp/ijbc_meta # keep (and reuse) the generated files
    python tools/bench_ijb_meta.py --faces 20000 --pairs 500000 --templates 1000

Writes ``ijbc_face_tid_mid.txt``, ``ijbc_name_5pts_score.txt`` and
``ijbc_template_pair_label.txt`` in the release's format (insightface's IJB release: space
separated, no header; ``<n>.jpg`` names, 5 landmark points with 3 decimals, a detector score; the
landmark file in another order than the face file) under ``DIR/meta``, then reads them with
:func:`paddle_pfc.evaluation.ijb.read_protocol` in a fresh Python process and prints its wall time
and peak resident memory (``resource.getrusage``: the whole process, imports included; the RSS
after the imports is printed too). Defaults: IJB-C's 469,375 faces, 23,124 templates and
15,658,489 template pairs (19,557 genuine).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IJBC_FACES, IJBC_TEMPLATES, IJBC_PAIRS, IJBC_GENUINE = 469_375, 23_124, 15_658_489, 19_557


def generate(root: Path, faces: int, templates: int, pairs: int, genuine: int, seed: int = 0) -> None:
    """The three meta files of a synthetic IJB-C-format set under ``root/meta`` (no images)."""
    import numpy as np  # imports are not part of the read
    import pandas as pd

    rng = np.random.default_rng(seed)
    meta = root / "meta"
    meta.mkdir(parents=True, exist_ok=True)
    template_ids = np.sort(rng.choice(np.arange(1, 8 * templates), templates, replace=False))
    template_of_face = np.sort(rng.integers(0, templates, faces))
    template_of_face[:templates] = np.arange(templates)  # every template has a face
    template_of_face.sort()
    medias = template_of_face * 8 + rng.integers(0, 4, faces) + 100_000
    names = pd.Series(np.arange(1, faces + 1)).astype(str) + ".jpg"
    pd.DataFrame({"n": names, "t": template_ids[template_of_face], "m": medias}).to_csv(
        meta / "ijbc_face_tid_mid.txt", sep=" ", header=False, index=False)
    points = rng.uniform(30, 200, (faces, 10))
    marks = pd.DataFrame(points)
    marks.insert(0, "n", names)
    marks["s"] = np.round(rng.uniform(0.5, 1.0, faces), 4)
    marks.iloc[rng.permutation(faces)].to_csv(meta / "ijbc_name_5pts_score.txt", sep=" ", header=False,
                                              index=False, float_format="%.3f")
    labels = np.zeros(pairs, np.int8)
    labels[rng.choice(pairs, genuine, replace=False)] = 1
    first = np.sort(rng.integers(0, templates, pairs))  # the release lists pairs by first template
    with open(meta / "ijbc_template_pair_label.txt", "w", encoding="utf-8") as f:
        chunk = 2_000_000
        for start in range(0, pairs, chunk):
            stop = min(pairs, start + chunk)
            second = rng.integers(0, templates, stop - start)
            pd.DataFrame({"a": template_ids[first[start:stop]], "b": template_ids[second],
                          "l": labels[start:stop]}).to_csv(f, sep=" ", header=False, index=False)


def measure(root: Path) -> dict:
    """Read ``root`` with read_protocol in this process: wall seconds and peak RSS."""
    import resource

    import numpy as np  # imports are not part of the read
    import pandas  # noqa: F401

    from paddle_pfc.evaluation import ijb

    def rss_mib() -> float:
        with open("/proc/self/status") as f:
            line = next(line for line in f if line.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    before = rss_mib()
    t0 = time.perf_counter()
    protocol = ijb.read_protocol(root)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"read_seconds": round(seconds, 2), "peak_rss_mib": round(peak, 1),
            "rss_after_imports_mib": round(before, 1), "faces": len(protocol.images), "pairs": len(protocol.pairs),
            "genuine": int(np.count_nonzero(protocol.labels)), "reader": ijb.__file__}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", help="folder for the generated files (kept and reused); default a temporary one")
    p.add_argument("--faces", type=int, default=IJBC_FACES)
    p.add_argument("--templates", type=int, default=IJBC_TEMPLATES)
    p.add_argument("--pairs", type=int, default=IJBC_PAIRS)
    p.add_argument("--genuine", type=int, default=IJBC_GENUINE)
    p.add_argument("--read", metavar="ROOT", help=argparse.SUPPRESS)  # the measuring child process
    args = p.parse_args(argv)
    if args.read:
        print(json.dumps(measure(Path(args.read))))
        return 0
    if not 0 < args.templates <= args.faces or not 2 <= args.pairs or not 1 <= args.genuine < args.pairs:
        p.error("need 0 < templates <= faces and 1 <= genuine < pairs")
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="ijb_meta_"))
    stamp = root / "meta" / "generated.json"
    shape = {"faces": args.faces, "templates": args.templates, "pairs": args.pairs, "genuine": args.genuine}
    try:
        if not (stamp.is_file() and json.loads(stamp.read_text()) == shape):
            t0 = time.perf_counter()
            generate(root, **shape)
            stamp.write_text(json.dumps(shape))
            print(f"generated {root}/meta in {time.perf_counter() - t0:.1f} s")
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--read", str(root)], text=True,
                              capture_output=True)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        sizes = {f.name: f.stat().st_size for f in sorted((root / "meta").glob("ijbc_*.txt"))}
        print(json.dumps({**result, "file_mib": {k: round(v / 2**20, 1) for k, v in sizes.items()}}, indent=2))
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
