"""Convert a face model of arcface_torch (``model.pt``), insightface / torch2onnx (``.onnx``) or PLSC
(``.pdparams``) into a paddle_pfc exported model.

Usage (from the repo root)::

    python tools/convert.py SRC [--backbone NAME] --output DIR [--format onnx]

``DIR`` has the layout of ``paddle-pfc-export`` (``model.json``, ``model.pdiparams``,
``export.json``; with ``--format onnx`` also ``model.onnx``) and serves ``FaceEmbedder``,
``paddle-pfc-infer``, ``-validate``, ``-eval-ijb`` and ``--pretrained``. The backbone, embedding and
input size are read from the tensors (``--backbone`` etc. are checked against them). The model takes
paddle_pfc's input ``(x - 127.5) / 128``: the source's ``(x / 255 - 0.5) / 0.5`` is folded into the
first convolution, and ``export.json["source"]`` records the source, its normalization and what was
converted. Checks: Paddle Inference vs the static eval program; an ONNX source also against
onnxruntime running the source itself (same images, each with its own normalization); ``--format
onnx`` as ``paddle-pfc-export``. A paddle_pfc checkpoint or state dict is exported with
``paddle-pfc-export`` instead (a ``.pdparams`` given here is read as PLSC's).
Exit status: 0 converted and checked, 1 a check failed, 2 the source
cannot be read or converted (``error: ...``).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from paddle_pfc.cli._outputs import check_output_dir
from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter
from paddle_pfc.interop.architectures import SUPPORTED


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    p.add_argument("source", metavar="SRC", help="model.pt / .pth (torch), .onnx or .pdparams (PLSC)")
    p.add_argument("--backbone", help=f"expected backbone ({SUPPORTED}); read from the tensors when omitted")
    p.add_argument("--embedding-size", type=int, help="expected embedding size (checked)")
    p.add_argument("--input-size", type=int, help="expected input size (checked)")
    p.add_argument("--source-format", choices=("auto", "torch", "onnx", "plsc"), default="auto",
                   help="format of SRC (auto: from its extension and first bytes)")
    p.add_argument("--output", "--out", dest="output", required=True, help="output directory")
    p.add_argument("--format", choices=("paddle", "onnx"), default="paddle",
                   help="onnx: also write model.onnx with paddle2onnx and check it")
    p.add_argument("--opset", type=int, default=11, help="ONNX opset version")
    args = p.parse_args(argv)
    check_output_dir(p, "--output", args.output)
    if args.output.rstrip("/\\").lower().endswith(".onnx"):
        p.error(f"--output {args.output}: a folder (it receives model.json, model.pdiparams, export.json and, "
                "with --format onnx, model.onnx); give a folder name not ending in .onnx")
    return args


def _summarize_ignored(ignored: dict) -> list[str]:
    by_reason: dict[str, list[str]] = {}
    for key, reason in ignored.items():
        by_reason.setdefault(reason, []).append(key)
    return [f"  ignored {len(keys)} ({reason}): " + ", ".join(keys[:3]) + (" ..." if len(keys) > 3 else "")
            for reason, keys in by_reason.items()]


def compare_with_onnx_source(source_path: str, prog, seed: int = 1) -> tuple[float, float]:
    """(min cosine, max relative error) of the converted program vs onnxruntime running the ONNX
    source, on random images each fed with its own normalization (one image per run: exported
    graphs may fix the batch inside)."""
    import numpy as np
    import onnxruntime as ort

    from paddle_pfc.deploy.parity import agreement

    h, w = prog.input_size
    images = np.random.RandomState(seed).randint(0, 256, (3, h, w, 3)).astype(np.float32)
    session = ort.InferenceSession(source_path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    has_norm = any(n.op_type in ("Sub", "Mul", "Div") for n in _onnx_nodes(source_path)[:4])
    src_x = images if has_norm else (images / 255.0 - 0.5) / 0.5
    ref = np.concatenate([session.run(None, {name: src_x[i:i + 1].transpose(0, 3, 1, 2).astype(np.float32)})[0]
                          for i in range(len(images))]).astype(np.float64)
    emb = prog(((images - 127.5) / 128.0).transpose(0, 3, 1, 2).astype(np.float32))
    return agreement(emb, ref)


def _onnx_nodes(path: str) -> list:
    import onnx

    return list(onnx.load(path, load_external_data=False).graph.node)


def main(argv: list[str] | None = None) -> int:
    """See the module doc for the exit status."""
    args = parse_args(argv)
    from paddle_pfc.cli.export import check_export
    from paddle_pfc.deploy import export as pexport
    from paddle_pfc.deploy.model_format import read_export_meta, write_export_meta
    from paddle_pfc.deploy.parity import SOURCE_COSINE, SOURCE_RTOL
    from paddle_pfc.interop.convert import convert

    try:
        converted = convert(args.source, backbone=args.backbone, source_format=args.source_format,
                            embedding_size=args.embedding_size, input_size=args.input_size)
        prog = pexport.EvalProgram.from_spec(converted.spec, converted.state)
    except USER_ERRORS as e:
        return usage_failure(e)
    src = converted.source
    print(f"read {src['format']} {args.source}: {converted.backbone} (embedding {converted.embedding_size}, "
          f"input {converted.input_size[0]}x{converted.input_size[1]}), {src['tensors']} tensors converted")
    for line in _summarize_ignored(src["ignored"]):
        print(line)
    if "batch_norm" in src:
        print(f"  {src['batch_norm']}")
    print(f"  source normalization {src['normalization']['formula']}: folded into the first convolution; "
          "the model takes (x - 127.5) / 128")
    staging = _staging_folder(args.output)
    try:
        out = prog.save(str(staging))
        meta = read_export_meta(out)
        meta["source"] = src
        write_export_meta(out, meta)
        rc = check_export(out, prog, "float32", to_onnx=args.format == "onnx", opset=args.opset)
        if src["format"] == "onnx":
            cos, rel = compare_with_onnx_source(args.source, prog)
            ok = cos >= SOURCE_COSINE and rel <= SOURCE_RTOL
            print(f"converted vs onnxruntime on the source: min cosine {cos:.8f}, max relative error {rel:.3g} "
                  f"({'OK' if ok else 'FAILED'}, cosine >= {SOURCE_COSINE}, relative <= {SOURCE_RTOL:g})")
            rc |= 0 if ok else 1
        if rc == 0:
            _publish(staging, Path(args.output))
            print(f"wrote {args.output}")
        else:
            print(f"error: a check failed; nothing was written to {args.output}", file=sys.stderr)
        return rc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _staging_folder(output: str) -> Path:
    """An empty folder beside ``output`` that the conversion is written into and checked in."""
    target = Path(output).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))


def _publish(staging: Path, output: Path) -> None:
    """Move the checked files of ``staging`` into ``output`` (created, or an existing folder whose
    files of the same names are replaced)."""
    output.mkdir(parents=True, exist_ok=True)
    for item in staging.iterdir():
        os.replace(item, output / item.name)


if __name__ == "__main__":
    sys.exit(main())
