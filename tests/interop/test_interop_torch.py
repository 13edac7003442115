"""paddle_pfc.interop: torch files read without torch (against values torch wrote), arcface_torch's
MobileFaceNet converted to the embeddings torch computed, the refusals (payloads, truncated files,
unsupported architectures, a wrong --backbone) and a DDP ``module.`` prefix.

Fixtures: tests/interop/fixtures, written by tests/interop/make_interop_fixtures.py (torch 2.13.0,
arcface_torch of insightface master); see its docstring."""
from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

from paddle_pfc.interop.common import ConversionError
from paddle_pfc.interop.convert import convert
from paddle_pfc.interop.torch_reader import LEGACY_MAGIC, read_torch_state
from paddle_pfc.utils.safe_pickle import MalformedPickleError, UnsafePickleError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MBF = FIXTURES / "mbf128_fp16.pt"


def _embed(converted, images: np.ndarray) -> np.ndarray:
    from paddle_pfc.deploy.export import EvalProgram

    x = ((images.astype(np.float32) - 127.5) / 128.0).transpose(0, 3, 1, 2).copy()
    prog = EvalProgram(converted.backbone, converted.embedding_size, converted.input_size, converted.state)
    return prog(x).astype(np.float64)


def _agreement(emb: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    ref = ref.astype(np.float64)
    cos = (emb * ref).sum(1) / (np.linalg.norm(emb, axis=1) * np.linalg.norm(ref, axis=1))
    return float(cos.min()), float(np.abs(emb - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("fmt", ["zip", "legacy"])
def test_tensors_read_back_as_torch_wrote_them(fmt):
    """dtypes (float16, bfloat16, float32/64, int64), strides, storage offsets, parameters."""
    state = read_torch_state(FIXTURES / f"tensors_{fmt}.pt")
    expected = np.load(FIXTURES / "tensors_expected.npz")
    assert sorted(state) == sorted(expected.files)
    for key in expected.files:
        assert state[key].dtype == expected[key].dtype, key
        np.testing.assert_array_equal(state[key], expected[key], err_msg=key)
    assert state["transposed"].shape == (10, 6) and state["offset_slice"].shape == (3, 4)


def test_arcface_mobilefacenet_embeds_as_torch():
    converted = convert(MBF)
    assert (converted.backbone, converted.embedding_size, converted.input_size) == ("mobilefacenet", 128, (112, 112))
    assert converted.source["normalization"]["std"] == 127.5
    assert all(k.endswith("num_batches_tracked") for k in converted.source["ignored"])
    cos, rel = _agreement(_embed(converted, np.load(FIXTURES / "mbf128_images.npy")),
                          np.load(FIXTURES / "mbf128_emb.npy"))
    assert cos >= 0.99999 and rel <= 1e-4, (cos, rel)


def _rezip(src: Path, dst: Path, rename=lambda n: n, data_pkl: bytes | None = None) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            content = zin.read(info.filename)
            if data_pkl is not None and info.filename.endswith("data.pkl"):
                content = data_pkl
            zout.writestr(rename(info.filename), content)


def _binunicode(text: str) -> bytes:
    """A str as pickle protocol 2 writes it: BINUNICODE, little-endian length, UTF-8."""
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def test_module_prefix_of_a_ddp_save_is_dropped(tmp_path):
    """The same tensors under ``module.``: the same state (the pickle's keys rewritten, not re-saved)."""
    with zipfile.ZipFile(MBF) as z:
        name = next(n for n in z.namelist() if n.endswith("data.pkl"))
        raw = z.read(name)
    # Rewrite only the dict keys: each key is a short unicode string in the pickle stream.
    state = read_torch_state(MBF)
    data = raw
    for key in sorted(state, key=len, reverse=True):
        old, new = _binunicode(key), _binunicode("module." + key)
        assert data.count(old) == 1, key
        data = data.replace(old, new)
    prefixed = tmp_path / "ddp.pt"
    _rezip(MBF, prefixed, data_pkl=data)
    assert all(k.startswith("module.") for k in read_torch_state(prefixed))
    converted = convert(prefixed)
    reference = convert(MBF)
    assert converted.source["ignored"]["module.*"].startswith("prefix 'module.'")
    for key, value in reference.state.items():
        np.testing.assert_array_equal(converted.state[key], value)


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_payload_in_a_zip_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    bad = tmp_path / "bad.pt"
    payload = pickle.dumps(OrderedDict(w=_Payload(str(marker))), protocol=2)
    _rezip(MBF, bad, data_pkl=payload)
    with pytest.raises(UnsafePickleError, match=r"bad\.pt.*(posix|os)\.system"):
        convert(bad)
    assert not marker.exists()


def test_payload_in_a_legacy_file_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    bad = tmp_path / "legacy.pth"
    stream = io.BytesIO()
    for obj in (LEGACY_MAGIC, 1001, {"protocol_version": 1001, "little_endian": True}):
        pickle.dump(obj, stream, protocol=2)
    pickle.dump(OrderedDict(w=_Payload(str(marker))), stream, protocol=2)
    bad.write_bytes(stream.getvalue())
    with pytest.raises(UnsafePickleError, match=r"legacy\.pth.*system"):
        convert(bad)
    assert not marker.exists()


@pytest.mark.parametrize("fmt", ["zip", "legacy"])
def test_truncated_file_is_named(tmp_path, fmt):
    src = MBF if fmt == "zip" else FIXTURES / "tensors_legacy.pt"
    cut = tmp_path / f"cut_{fmt}.pt"
    data = src.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(MalformedPickleError, match=rf"cut_{fmt}\.pt.*(truncated|cut off)"):
        read_torch_state(cut)


def test_unsupported_architecture_names_what_was_found(tmp_path):
    """A ViT state dict (written here through the same pickle path as torch's, with arrays)."""
    tensors = read_torch_state(FIXTURES / "tensors_zip.pt")
    vit = {"patch_embed.proj.weight": tensors["base"], "blocks.0.attn.qkv.weight": tensors["base"],
           "blocks.0.mlp.fc1.weight": tensors["base"]}
    with pytest.raises(ConversionError, match=r"vision transformer.*supported: iresnet18"):
        from paddle_pfc.interop.convert import _describe_unsupported

        raise ConversionError(_describe_unsupported(vit, "vit.pt"))
    # the real path: a torch file with other tensors
    with pytest.raises(ConversionError, match=r"tensors_zip\.pt: found .*supported: iresnet18"):
        convert(FIXTURES / "tensors_zip.pt")


def test_backbone_mismatch_names_both():
    with pytest.raises(ConversionError, match=r"holds a mobilefacenet backbone, but --backbone r50"):
        convert(MBF, backbone="r50")
    with pytest.raises(ConversionError, match=r"embedding size 128, but 512"):
        convert(MBF, embedding_size=512)
    assert convert(MBF, backbone="mbf").backbone == "mobilefacenet"


def test_unused_source_tensor_is_an_error(tmp_path):
    """A tensor the backbone has no place for is not dropped silently."""
    from paddle_pfc.interop.common import SourceTensors
    from paddle_pfc.interop.mapping import map_state
    from paddle_pfc.interop.mobilefacenet_map import FIRST_CONV

    tensors = read_torch_state(MBF)
    extra = dict(tensors, **{"conv_sep.extra.weight": np.ones(3, np.float32)})
    with pytest.raises(ConversionError, match=r"not used by mobilefacenet.*conv_sep\.extra\.weight"):
        map_state(SourceTensors("x.pt", "torch", "torch", extra), "mobilefacenet", 128, (112, 112), FIRST_CONV)
    classifier = dict(tensors, weight=np.ones((10, 128), np.float32))
    _, ignored = map_state(SourceTensors("x.pt", "torch", "torch", classifier), "mobilefacenet", 128,
                           (112, 112), FIRST_CONV)
    assert "classifier" in ignored["weight"]


def test_pretrained_reads_a_torch_file_and_refuses_others(tmp_path):
    """model.pretrained takes the .pt itself; unsupported or unsafe files are PretrainedErrors naming them."""
    from paddle_pfc.engine.pretrained import PretrainedError, read_pretrained

    pre = read_pretrained(MBF)
    assert (pre.kind == "converted torch"
            and (pre.backbone, pre.embedding_size, pre.input_size) == ("mobilefacenet", 128, 112))
    with pytest.raises(PretrainedError, match=r"tensors_zip\.pt: found .*supported"):
        read_pretrained(FIXTURES / "tensors_zip.pt")
    marker = tmp_path / "pwned"
    bad = tmp_path / "bad.pth"
    _rezip(MBF, bad, data_pkl=pickle.dumps(OrderedDict(w=_Payload(str(marker))), protocol=2))
    with pytest.raises(PretrainedError, match=r"bad\.pth: refused to load"):
        read_pretrained(bad)
    assert not marker.exists()
