"""An ONNX model's external data is read only from regular files inside its folder, with the size its
tensor declares; dims that disagree with the data are named; a conversion that fails a check
writes nothing."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from helpers.interop_onnx_graphs import GraphWriter  # noqa: E402
from paddle_pfc.interop.common import ConversionError  # noqa: E402
from paddle_pfc.interop.convert import convert  # noqa: E402
from paddle_pfc.interop.torch_reader import read_torch_state  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def graph():
    return GraphWriter(read_torch_state(FIXTURES / "mbf128_fp16.pt")).mobilefacenet()


def save_external(graph, folder: Path) -> Path:
    """``graph`` saved as ``folder/m.onnx`` with every tensor in ``folder/w.bin``."""
    folder.mkdir(parents=True, exist_ok=True)
    model = onnx.ModelProto()
    model.CopyFrom(graph)
    onnx.save(model, folder / "m.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="w.bin", size_threshold=0)
    return folder / "m.onnx"


def first_external(path: Path):
    model = onnx.load(path, load_external_data=False)
    return model, next(t for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL)


def test_external_data_inside_the_folder_converts(graph, tmp_path):
    converted = convert(save_external(graph, tmp_path / "model"))
    assert converted.backbone == "mobilefacenet"
    np.testing.assert_array_equal(converted.state["layers.0.layers.1.weight"], 1.0)


def test_external_data_through_a_link_out_of_the_folder_is_refused_and_nothing_written(graph, tmp_path, capsys):
    """``w.bin -> ../outside/w.bin`` (a user's secret in a real attack): never read, no output."""
    from paddle_pfc.cli.convert import main

    path = save_external(graph, tmp_path / "model")
    (tmp_path / "outside").mkdir()
    (path.parent / "w.bin").rename(tmp_path / "outside" / "w.bin")
    (path.parent / "w.bin").symlink_to(tmp_path / "outside" / "w.bin")
    with pytest.raises(ConversionError, match=r"m\.onnx \(tensor '.*'\): external data 'w\.bin' is not a file "
                                              r"inside the model's folder"):
        convert(path)
    assert main([str(path), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a file inside the model's folder" in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("entry, value, problem", [
    ("length", "4", "holds 4 bytes, the tensor's dims"),
    ("offset", "999999999", "lie outside the file's"),
    ("location", "/etc/passwd", "is not a file inside the model's folder"),
])
def test_external_data_must_lie_in_the_file_with_the_declared_size(graph, tmp_path, entry, value, problem):
    path = save_external(graph, tmp_path / "model")
    model, tensor = first_external(path)
    found = [e for e in tensor.external_data if e.key == entry]
    if found:
        found[0].value = value
    else:
        tensor.external_data.add(key=entry, value=value)
    onnx.save(model, path)
    with pytest.raises(ConversionError, match=problem):
        convert(path)


def test_dims_that_disagree_with_the_data_are_named(tmp_path):
    w = numpy_helper.from_array(np.ones(4, np.float32), "w")
    del w.dims[:]
    w.dims.extend([1048576, 4])
    node = helper.make_node("Conv", ["data", "w"], ["out"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], initializer=[w])
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(ConversionError, match=r"bad\.onnx \(tensor 'w'\): dims \[1048576, 4\] do not match its data"):
        convert(path)


def test_output_folder_named_like_a_file_is_refused(tmp_path, capsys):
    from paddle_pfc.cli.convert import main

    with pytest.raises(SystemExit) as stop:
        main([str(FIXTURES / "mbf128_fp16.pt"), "--output", str(tmp_path / "model.onnx")])
    assert stop.value.code == 2 and "give a folder name not ending in .onnx" in capsys.readouterr().err
    assert not (tmp_path / "model.onnx").exists()


def test_a_failed_check_leaves_no_output_and_the_source_is_recorded_by_name(graph, tmp_path, monkeypatch):
    from paddle_pfc.cli.convert import main
    from paddle_pfc.deploy import parity

    path = tmp_path / "m.onnx"
    onnx.save(graph, path)
    monkeypatch.setattr(parity, "SOURCE_COSINE", 1.5)  # a bar no conversion can pass: the real check fails
    assert main([str(path), "--output", str(tmp_path / "failed")]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    monkeypatch.undo()
    assert main([str(path), "--output", str(tmp_path / "ok")]) == 0
    source = json.loads((tmp_path / "ok" / "export.json").read_text())["source"]
    assert source["file"] == "m.onnx" and len(source["sha256"]) == 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "ok"]
