"""bfloat16 serving exports: built with the PReLU Paddle Inference serves correctly in bfloat16, recorded
in export.json, run with oneDNN's bfloat16 products where the CPU has them (cosine to the float32 eval
program at least BFLOAT16_COSINE) and in float32 elsewhere (one warning, float32 results)."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from launcher import REPO
from paddle_pfc.backbones.state import random_state
from paddle_pfc.deploy.export import EvalProgram
from paddle_pfc.deploy.model_format import read_export_meta
from paddle_pfc.deploy.parity import BFLOAT16_COSINE, PADDLE_RTOL, agreement, relative_difference
from paddle_pfc.deploy.predictor import EmbeddingModel
from paddle_pfc.kernels.onednn_ops import bfloat16_isa_missing

SIZE, EMB = 32, 64
#: oneDNN capped below AVX512_BF16 (read at its first use: a fresh process), as on a CPU without it
WITHOUT_BF16 = {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"}


@pytest.fixture(scope="module")
def mbf(tmp_path_factory):
    """(float32 eval program, bfloat16-serving eval program, bfloat16 export dir): a random
    mobilefacenet (PReLU after most convolutions), input 32, embedding 64."""
    state = random_state("mobilefacenet", EMB, SIZE, seed=5)
    fp32 = EvalProgram("mobilefacenet", EMB, SIZE, state)
    bf16 = EvalProgram("mobilefacenet", EMB, SIZE, state, precision="bfloat16")
    out = bf16.save(tmp_path_factory.mktemp("bf16") / "model")
    return fp32, bf16, out


def _x(n=6, seed=2):
    return np.random.RandomState(seed).uniform(-1, 1, (n, 3, SIZE, SIZE)).astype(np.float32)


def _op_names(prog: EvalProgram) -> list[str]:
    return [op.name() for op in prog.main.global_block().ops]


def test_serving_program_computes_prelu_without_the_prelu_op(mbf):
    """The bfloat16-serving program has no ``prelu`` op (a * x + (1 - a) * relu(x) instead) and gives
    the float32 program's embeddings up to float32 rounding when run in float32."""
    fp32, bf16, _ = mbf
    assert "pd_op.prelu" in _op_names(fp32) and "pd_op.prelu" not in _op_names(bf16)
    x = _x()
    expected = fp32(x)
    assert np.abs(expected).max() > 1e-2
    np.testing.assert_allclose(bf16(x), expected, rtol=0, atol=2e-5 * float(np.abs(expected).max()))


def test_export_json_records_the_precision(mbf):
    meta = read_export_meta(mbf[2])
    assert meta["precision"] == "bfloat16" and meta["dtype"] == "float32" and meta["batch_norm"] == "folded"
    assert "AVX512_BF16" in meta["serving"]


def test_bad_precisions_are_refused(mbf, tmp_path):
    state = random_state("mobilefacenet", EMB, SIZE, seed=5)
    with pytest.raises(ValueError, match="precision must be one of"):
        EvalProgram("mobilefacenet", EMB, SIZE, state, precision="int8")
    with pytest.raises(ValueError, match="for a float32 program built with native=False"):
        EvalProgram("mobilefacenet", EMB, SIZE, state, precision="bfloat16", dtype="float16")
    with pytest.raises(ValueError, match="needs its batch norms folded"):
        mbf[1].save(tmp_path / "kept", fold_batch_norm=False)
    with pytest.raises(ValueError, match="precision must be one of"):
        EmbeddingModel(mbf[2], precision="half")


def test_served_in_bfloat16_where_the_cpu_multiplies_it(mbf):
    """With native bfloat16: the products run in bfloat16 (the embeddings differ from float32's by
    more than float32 rounding) and stay within BFLOAT16_COSINE of them; precision="float32" serves
    the same export in float32."""
    missing = bfloat16_isa_missing()
    if missing is not None:
        pytest.skip(missing)
    fp32, _, out = mbf
    x = _x()
    expected = fp32(x)
    model = EmbeddingModel(out)
    assert model.precision == "bfloat16"
    cosine, diff = agreement(model.forward(x), expected)
    assert cosine >= BFLOAT16_COSINE and diff > 10 * PADDLE_RTOL, (cosine, diff)
    as_float32 = EmbeddingModel(out, precision="float32")
    assert as_float32.precision == "float32"
    assert relative_difference(as_float32.forward(x), expected) <= PADDLE_RTOL


_FALLBACK = """
import sys, warnings
import numpy as np
from paddle_pfc.deploy.predictor import EmbeddingModel
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = EmbeddingModel(sys.argv[1])
said = [str(w.message) for w in caught if "bfloat16 export" in str(w.message)]
x = np.random.RandomState(2).uniform(-1, 1, (6, 3, {size}, {size})).astype(np.float32)
np.save(sys.argv[2], model.forward(x))
print(model.precision, len(said), said[0] if said else "")
"""


def test_served_in_float32_with_one_warning_where_the_cpu_cannot(mbf, tmp_path):
    """oneDNN without native bfloat16: the export runs in float32 (the eval program's embeddings up to
    float32 rounding) after one warning that names the reason."""
    fp32, _, out = mbf
    proc = subprocess.run([sys.executable, "-c", _FALLBACK.format(size=SIZE), str(out), str(tmp_path / "e.npy")],
                          env=dict(os.environ, **WITHOUT_BF16), capture_output=True, text=True, cwd=REPO,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    precision, warned, message = proc.stdout.strip().splitlines()[-1].split(" ", 2)
    assert (precision, warned) == ("float32", "1") and "AVX512_BF16" in message, proc.stdout
    assert relative_difference(np.load(tmp_path / "e.npy"), fp32(_x())) <= PADDLE_RTOL


def _export(out, *flags, env=None):
    return subprocess.run([sys.executable, "tools/export.py", "--random-init", "--backbone", "mobilefacenet",
                           "--embedding-size", str(EMB), "--input-size", str(SIZE), "--out", str(out), *flags],
                          env=dict(os.environ, **(env or {})), capture_output=True, text=True, cwd=REPO, timeout=600)


def test_export_cli_refuses_bf16_in_one_line_where_the_cpu_cannot(tmp_path):
    proc = _export(tmp_path / "m", "--precision", "bf16", env=WITHOUT_BF16)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1].startswith("export.py: error: --precision bf16 is exported and "
                                                           "checked on a CPU that serves it so: oneDNN has no "
                                                           "native bfloat16 products"), proc.stderr
    assert not (tmp_path / "m").exists()
    proc = _export(tmp_path / "m", "--precision", "bf16", "--dtype", "float16")
    assert proc.returncode == 2 and "not with --dtype float16 or --keep-batch-norm" in proc.stderr


def test_export_cli_writes_and_checks_a_bf16_export(tmp_path):
    missing = bfloat16_isa_missing()
    if missing is not None:
        pytest.skip(missing)
    proc = _export(tmp_path / "m", "--precision", "bf16")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = next(s for s in proc.stdout.splitlines() if s.startswith("Paddle Inference (bfloat16 products)"))
    assert line.endswith(f"(OK, cosine at least {BFLOAT16_COSINE:g})"), line
    cosine = float(line.split("smallest cosine ")[1].split(",")[0])
    assert BFLOAT16_COSINE <= cosine < 1.0
    assert read_export_meta(tmp_path / "m")["precision"] == "bfloat16"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # served as recorded, no fallback warning
        assert EmbeddingModel(tmp_path / "m").precision == "bfloat16"
