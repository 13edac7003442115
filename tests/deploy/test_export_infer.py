"""Export (Paddle Inference / ONNX / float16), FaceEmbedder, evaluation protocol, tools."""
from __future__ import annotations

import importlib.util
import json
import shutil
import warnings

import cv2
import numpy as np
import pytest

from helpers.tool_scripts import load_tool
from paddle_pfc.backbones.state import backbone_state_from_scope, load_state_file, random_state
from paddle_pfc.deploy.export import EvalProgram, export_backbone
from paddle_pfc.deploy.inference import FaceEmbedder
from paddle_pfc.deploy.model_format import read_export_meta
from paddle_pfc.deploy.onnx_export import check_onnx, export_onnx
from paddle_pfc.evaluation import validation as evaluation

SIZE, EMB = 32, 64


def _has(mod):
    return importlib.util.find_spec(mod) is not None


needs_onnx = pytest.mark.skipif(not (_has("paddle2onnx") and _has("onnxruntime")),
                                reason="paddle2onnx / onnxruntime not installed (pip install paddle2onnx onnxruntime)")


@pytest.fixture(scope="module")
def mbf(tmp_path_factory):
    """(EvalProgram, state, exported dir) of a random mobilefacenet, input 32, embedding 64."""
    state = random_state("mobilefacenet", EMB, SIZE, seed=3)
    prog = EvalProgram("mobilefacenet", EMB, SIZE, state)
    out = prog.save(tmp_path_factory.mktemp("mbf") / "model")
    return prog, state, out


@pytest.fixture(scope="module")
def embedder(mbf):
    return FaceEmbedder(mbf[2], batch_size=3)


@pytest.fixture(scope="module")
def images(tmp_path_factory, small_lfw):
    """Six 32x32 RGB uint8 face crops decoded from small_lfw.bin + their files."""
    d = tmp_path_factory.mktemp("imgs")
    imgs, _ = evaluation.load_pairs(small_lfw, SIZE)
    rgb = np.clip(np.round(imgs[:6].transpose(0, 2, 3, 1) * 128 + 127.5), 0, 255).astype(np.uint8)
    paths = []
    for i, im in enumerate(rgb):
        p = d / f"face{i}.png"  # lossless: file and array give identical pixels
        cv2.imwrite(str(p), cv2.cvtColor(im, cv2.COLOR_RGB2BGR))
        paths.append(str(p))
    return rgb, paths, d


def test_a_paddle_model_on_cpu_chooses_mkls_kernels(mbf):
    """Loading an exported Paddle model for the CPU sets MKL_DEBUG_CPU_TYPE for the running CPU, as
    configure_process would (a fresh interpreter without it; importing sets nothing)."""
    import os
    import subprocess
    import sys

    from paddle_pfc.runtime.process import mkl_kernels_for
    from paddle_pfc.utils.cpu import cpu_info

    code = ("import os\nfrom paddle_pfc.deploy.predictor import EmbeddingModel\n"
            "print(os.environ.get('MKL_DEBUG_CPU_TYPE', '-'))\n"
            f"EmbeddingModel({str(mbf[2])!r})\nprint(os.environ.get('MKL_DEBUG_CPU_TYPE', '-'))")
    env = {k: v for k, v in os.environ.items() if k != "MKL_DEBUG_CPU_TYPE"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[-2:] == ["-", mkl_kernels_for(cpu_info()) or "-"]


def _assert_close(actual, expected, rel=2e-5):
    """Equal up to float32 rounding relative to the largest magnitude: the export runs other kernels
    (batch norm folded, oneDNN) than the eval program."""
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rel * float(np.abs(expected).max()))


def _x(n=5, seed=1):
    return np.random.RandomState(seed).uniform(-1, 1, (n, 3, SIZE, SIZE)).astype(np.float32)


# ------------------------------------------------------------------ export / Paddle Inference
def test_paddle_inference_equals_eval_program(mbf, embedder):
    prog, _, out = mbf
    x = _x()
    ref = prog(x)
    assert ref.shape == (5, EMB) and np.abs(ref).max() > 1e-2
    _assert_close(embedder.forward(x), ref)
    _assert_close(embedder.forward(x[:1]), ref[:1])  # dynamic batch
    assert sorted(p.name for p in out.iterdir()) == ["backbone.npz", "export.json", "model.json", "model.pdiparams"]


def test_iresnet18_export(tmp_path):
    state = random_state("iresnet18", EMB, SIZE, seed=1)
    prog = EvalProgram("iresnet18", EMB, SIZE, state)
    out = export_backbone("iresnet18", EMB, SIZE, state, tmp_path / "r18")
    x = _x(3)
    _assert_close(FaceEmbedder(out).forward(x), prog(x))
    for k, v in backbone_state_from_scope(prog.layer, prog.scope).items():
        np.testing.assert_array_equal(v, state[k])


def test_export_json(mbf):
    meta = read_export_meta(mbf[2])
    assert meta["backbone"] == "mobilefacenet" and meta["embedding_size"] == EMB
    assert meta["input_size"] == [SIZE, SIZE] and meta["dtype"] == "float32"
    assert meta["input"] == {"name": "images", "shape": [-1, 3, SIZE, SIZE], "dtype": "float32",
                             "layout": "NCHW", "color": "RGB"}
    assert meta["normalization"]["inside_model"] is False
    assert (meta["normalization"]["mean"], meta["normalization"]["std"]) == (127.5, 128.0)
    assert meta["files"]["model"] == "model.json" and meta["output"]["l2_normalized"] is False


def test_state_dict_errors_name_the_tensor(mbf):
    _, state, _ = mbf
    bad = dict(state)
    missing = next(iter(state))
    del bad[missing]
    shape_key = next(k for k in state if k.endswith("_mean"))
    bad[shape_key] = np.zeros(state[shape_key].shape[0] + 1, np.float32)
    bad["extra.weight"] = np.zeros(3, np.float32)
    with pytest.raises(ValueError) as e:
        EvalProgram("mobilefacenet", EMB, SIZE, bad)
    msg = str(e.value)
    assert missing in msg and shape_key in msg and "extra.weight" in msg and "missing" in msg


def test_float16_export_written(tmp_path, mbf):
    out = export_backbone("mobilefacenet", EMB, SIZE, mbf[1], tmp_path / "fp16", dtype="float16")
    meta = read_export_meta(out)
    assert meta["dtype"] == "float16" and meta["input"]["dtype"] == "float32"
    assert (out / meta["files"]["model"]).is_file()
    size16 = (out / "model.pdiparams").stat().st_size
    assert size16 < 0.7 * (mbf[2] / "model.pdiparams").stat().st_size  # weights stored as float16


# ------------------------------------------------------------------ ONNX
@needs_onnx
def test_onnx_equals_paddle(mbf, embedder, tmp_path):
    out = tmp_path / "m"
    shutil.copytree(mbf[2], out)
    onnx_path = export_onnx(out)
    assert onnx_path == out / "model.onnx" and read_export_meta(out)["files"]["onnx"] == "model.onnx"
    assert check_onnx(out) < 1e-4
    ox = FaceEmbedder(onnx_path)
    assert ox.backend == "onnxruntime" and ox.input_size == (SIZE, SIZE)
    x = _x(4, seed=7)
    _assert_close(ox.forward(x), embedder.forward(x), rel=1e-4)


# ------------------------------------------------------------------ evaluation protocol
def test_embed_pairs_flip_and_xnorm():
    w = np.random.RandomState(0).randn(3 * 4 * 6, 5).astype(np.float32)

    def fn(b):
        return b.reshape(b.shape[0], -1) @ w

    x = np.random.RandomState(1).randn(6, 3, 4, 6).astype(np.float32)
    summed, both = evaluation.embed_pairs(fn, x, batch_size=4)
    plain, flipped = fn(x), fn(x[:, :, :, ::-1].copy())
    np.testing.assert_allclose(summed, plain + flipped, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(both, np.concatenate([plain, flipped]), rtol=1e-5, atol=1e-5)
    r = evaluation.evaluate_arrays(fn, x, [True, False, True], batch_size=4, nrof_folds=3)
    assert r.xnorm == pytest.approx(np.linalg.norm(both, axis=1).mean(), rel=1e-5)


def test_evaluate_bin_embedder_equals_eval_program(mbf, embedder, small_lfw):
    ref = evaluation.evaluate_bin(mbf[0], small_lfw, SIZE, batch_size=8)
    got = evaluation.evaluate_bin(embedder.forward, small_lfw, SIZE, batch_size=8)
    assert got.num_pairs == ref.num_pairs == 10
    assert got.accuracy == ref.accuracy and got.threshold == ref.threshold
    assert got.xnorm == pytest.approx(ref.xnorm, rel=1e-5)


# ------------------------------------------------------------------ FaceEmbedder inputs
def test_embedder_accepts_paths_arrays_folder(embedder, images):
    rgb, paths, folder = images
    ref = embedder.embed(rgb)  # uint8 NHWC batch
    assert ref.shape == (6, EMB) and ref.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ref, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(embedder.embed(paths), ref, atol=1e-6)
    np.testing.assert_allclose(embedder.embed(str(folder)), ref, atol=1e-6)
    np.testing.assert_allclose(embedder.embed(list(rgb)), ref, atol=1e-6)
    np.testing.assert_allclose(embedder.embed([paths[0], rgb[1]]), ref[:2], atol=1e-6)
    x = (rgb.transpose(0, 3, 1, 2).astype(np.float32) - 127.5) / 128.0
    np.testing.assert_allclose(embedder.embed(x), ref, atol=1e-6)
    raw = embedder.embed(x, normalize=False)
    np.testing.assert_allclose(raw / np.linalg.norm(raw, axis=1, keepdims=True), ref, atol=1e-6)
    pixels = rgb.transpose(0, 3, 1, 2).astype(np.float32)  # not normalized: a wrong embedding, refused
    with pytest.raises(ValueError, match=r"float NCHW input ranges over \[\d+, 255\], but normalized input "
                                         r"lies in \[-0\.996, 0\.996\]: pass uint8 HWC images"):
        embedder.embed(pixels)
    with pytest.raises(ValueError, match="ranges over"):
        embedder.embed(np.where(x > 0, np.nan, x).astype(np.float32))


def test_grayscale_and_resize(embedder, images, tmp_path):
    rgb, _, _ = images
    gray = cv2.cvtColor(rgb[0], cv2.COLOR_RGB2GRAY)
    as_rgb = np.repeat(gray[:, :, None], 3, axis=2)
    cv2.imwrite(str(tmp_path / "gray.png"), gray)
    ref = embedder.embed([as_rgb])
    np.testing.assert_allclose(embedder.embed([gray]), ref, atol=1e-6)
    np.testing.assert_allclose(embedder.embed(str(tmp_path / "gray.png")), ref, atol=1e-6)
    big = cv2.resize(rgb[1], (64, 48))
    cv2.imwrite(str(tmp_path / "big.png"), cv2.cvtColor(big, cv2.COLOR_RGB2BGR))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said in the conversions' line, not as a Python warning
        got = embedder.embed(str(tmp_path / "big.png"))
    # data.non_square's default, stretch: 64x48 (WxH) resized to 32x32 as it is
    expected = embedder.embed([cv2.resize(big, (SIZE, SIZE), interpolation=cv2.INTER_AREA)])
    np.testing.assert_allclose(got, expected, atol=1e-6)
    line = embedder.conversions.line((SIZE, SIZE))
    assert "1 not square (first: " in line and "big.png 64x48" in line and " resized to 32x32 (first: " in line, line
    with pytest.raises(ValueError, match=r"\[n, 3, 32, 32\]"):
        embedder.embed(np.zeros((1, 3, 16, 16), np.float32))


def test_bad_images(embedder, tmp_path):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"not a jpeg at all")
    with pytest.raises(ValueError, match="broken.jpg"):
        embedder.embed([str(bad)])
    with pytest.raises(FileNotFoundError, match="missing.jpg"):
        embedder.embed([str(tmp_path / "missing.jpg")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no image files"):
        embedder.embed(str(tmp_path / "empty"))
    with pytest.raises(ValueError, match=r"images\[0\].*uint8"):
        embedder.embed([np.zeros((SIZE, SIZE, 3), np.float64)])


def test_bad_model_files(mbf, tmp_path):
    src = mbf[2]
    miss = tmp_path / "miss"
    shutil.copytree(src, miss)
    (miss / "model.pdiparams").unlink()
    with pytest.raises(FileNotFoundError, match="model.pdiparams"):
        FaceEmbedder(miss)
    trunc = tmp_path / "trunc"
    shutil.copytree(src, trunc)
    data = (trunc / "model.pdiparams").read_bytes()
    (trunc / "model.pdiparams").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="model.pdiparams"):
        FaceEmbedder(trunc)
    badjson = tmp_path / "badjson"
    shutil.copytree(src, badjson)
    (badjson / "model.json").write_text("{ truncated")
    with pytest.raises(ValueError, match="model.json"):
        FaceEmbedder(badjson)
    with pytest.raises(FileNotFoundError, match="nowhere"):
        FaceEmbedder(tmp_path / "nowhere")
    checkpoint = tmp_path / "step_000000008"
    checkpoint.mkdir()
    (checkpoint / "backbone.pdparams").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"step_000000008: a training checkpoint or run folder, not an "
                                                r"exported model: export it first \(python tools/export.py"):
        FaceEmbedder(checkpoint)


# ------------------------------------------------------------------ tools
def test_tools_validate_and_infer(mbf, images, small_lfw, tmp_path, capsys):
    out_json = tmp_path / "val.json"
    assert load_tool("validate").main(["--model", str(mbf[2]), "--bin", str(small_lfw), "--json", str(out_json),
                                   "--batch-size", "8"]) == 0
    table = capsys.readouterr().out
    assert "small_lfw" in table and "xnorm" in table
    res = json.loads(out_json.read_text())["sets"]["small_lfw"]
    ref = evaluation.evaluate_bin(mbf[0], small_lfw, SIZE, batch_size=8)
    assert res["accuracy"] == ref.accuracy and res["num_pairs"] == 10
    infer = load_tool("infer")
    _, paths, _ = images
    assert infer.main(["--model", str(mbf[2]), "--images", *paths[:3]]) == 0
    assert "cosine similarity" in capsys.readouterr().out
    assert infer.main(["--model", str(mbf[2]), "--compare", paths[0], paths[0], "--threshold", "0.5"]) == 0
    assert capsys.readouterr().out.startswith("SAME")


def test_tool_export_weights_file(mbf, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **mbf[1])
    assert set(load_state_file(tmp_path / "w.npz")) == set(mbf[1])
    rc = load_tool("export").main(["--weights", str(tmp_path / "w.npz"), "--backbone", "mobilefacenet",
                               "--embedding-size", str(EMB), "--input-size", str(SIZE),
                               "--out", str(tmp_path / "exp")])
    assert rc == 0 and "OK" in capsys.readouterr().out
    x = _x(2)
    _assert_close(FaceEmbedder(tmp_path / "exp").forward(x), mbf[0](x))


def test_native_eval_program_embeds_as_the_export_and_refuses_to_save(mbf, embedder, tmp_path):
    """EvalProgram(native=True) (tools/validate.py's) runs the native forward kernels on CPU and
    gives the exported model's embeddings up to float32 rounding; it cannot be exported."""
    prog, state, _ = mbf
    native = EvalProgram("mobilefacenet", EMB, SIZE, state, native=True)
    assert any(op.name().startswith("custom_op.pfc_") for op in native.main.global_block().ops)
    x = _x(7, seed=4)
    expected = embedder.forward(x)
    np.testing.assert_allclose(native(x), expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    with pytest.raises(ValueError, match="native=True\\) runs custom ops and cannot be exported"):
        native.save(tmp_path / "out")
    with pytest.raises(ValueError, match="native=True builds a float32 program"):
        EvalProgram("mobilefacenet", EMB, SIZE, state, dtype="float16", native=True)
