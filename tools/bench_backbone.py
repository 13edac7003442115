#!/usr/bin/env python
"""Backbone training step, paddle_pfc against insightface's arcface_torch, on the same shapes.

    python tools/bench_backbone.py --backbone mobilefacenet --batch-size 32 \\
        [--insightface ~/src/insightface] [--threads 1] [--steps 5] [--rounds 3] [--native-off]
    python tools/bench_backbone.py --backbone iresnet50 --batch-size 16 --classes 100000 --sample-ratio 0.1 \\
        --insightface ~/src/insightface                                  # full step, with the head
    python tools/bench_backbone.py --backbone iresnet50 --batch-size 16 --classes 100000 --nproc 2 \
        --insightface ~/src/insightface                                  # the same on 2 ranks
    python tools/bench_backbone.py --convs --backbone iresnet50 --batch-size 8 [--threads 1]
    python tools/bench_backbone.py --backbone vit_t --batch-size 16 --insightface ~/src/insightface \
        --torch-python ~/torchvenv/bin/python --bf16 --floor [--drop-path-rate 0 --mask-ratio 0]
    python tools/bench_backbone.py --backbone vit_t --batch-size 16 --bf16-error

One *step* = forward, backward and a Momentum update (lr 0.1, momentum 0.9, weight decay 5e-4,
gradient clipping at norm 5, as arcface_torch trains) of the backbone alone on a batch of
112x112 images, loss = mean of ``embedding * fixed random weights``. With ``--classes N`` the step
is a whole training step on one rank instead: the backbone, the Partial FC head (ArcFace, N
classes, ``--sample-ratio``) and ``paddle_pfc.minimize``, against the peer's ``PartialFC_V2`` with
``CombinedMarginLoss`` and one SGD over backbone and centers (as its ``train_v2.py``; its
sampling's ``.cuda()`` calls are made no-ops for the CPU). ``--nproc N`` runs each side on N
ranks of this machine, ``--threads`` each, ``--batch-size`` per rank, classes sharded: paddle_pfc
launched by ``paddle.distributed.launch`` (the backbone's gradients all-reduced by
``paddle_pfc.minimize``), the peer as N processes in one gloo group with its backbone in
``DistributedDataParallel`` (as ``train_v2.py``); a step's time is the slowest rank's. paddle_pfc runs it as a
static program on CPU with its default process settings (``paddle_pfc.configure_process``,
native kernels per ``PADDLE_PFC_NATIVE``); arcface_torch's ``get_model`` (``r18``…``r200``,
``mbf``) is read from ``--insightface`` (a local checkout of deepinsight/insightface; nothing of
it is copied here) and trained in eager PyTorch. Each framework runs in its own process with
``--threads`` threads (OMP/MKL and the framework's own setting); rounds alternate paddle_pfc and
the peer, and the figure is the median step over each side's rounds. Without ``--insightface``
only paddle_pfc is measured. ``--native-off`` adds a third side: paddle_pfc with
``PADDLE_PFC_NATIVE=off`` (Paddle's own kernels), in the same alternation. Prints images/s per
side, the ratios and the CPU model and features.

A ViT (``vit_t`` ... ``vit_l``) trains with AdamW (lr 1e-3, decoupled weight decay 0.1, clipping
at 5; ``--optimizer`` overrides) as arcface_torch's ViT configs, both sides with ``--drop-path-rate``
and ``--mask-ratio`` (default: the row's, which are ``get_model``'s); the peer is arcface_torch's
``VisionTransformer`` built as ``get_model`` builds it, run in ``--torch-python`` (timm, which its
vit.py imports three names from, is stood in for when it does not import). ``--floor`` adds a side
timing bench/floor.py's square GEMM (the best float32 rate of Paddle's and oneDNN's) in the same
rounds, and reports each step over its matrix-product floor: the step's GEMM FLOPs
(:func:`paddle_pfc.bench.vit_floor.vit_step_gemm_flop`) at that round's rate. ``--bf16`` for a ViT
is its block Linears' bfloat16 products (``train.amp=bf16``); ``--bf16-error`` measures what they
change in one step's embeddings and gradients.

``--convs``: per-convolution micro-benchmark instead, in one process: for each distinct dense
convolution shape of the backbone (its groups-1 convolutions at the batch size), forward +
backward (d input and d weight) of paddle_pfc's oneDNN op against Paddle's ``conv2d``, each in
its own static program, alternating the two ``--rounds`` times; medians and their ratio per shape,
and the totals weighted by how often the backbone uses each shape.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from paddle_pfc.cli.entry import run

PEER_NAMES = {"iresnet18": "r18", "iresnet34": "r34", "iresnet50": "r50", "iresnet100": "r100",
              "iresnet200": "r200", "mobilefacenet": "mbf", "vit_t": "vit_t", "vit_s": "vit_s", "vit_b": "vit_b",
              "vit_l": "vit_l_dp005_mask_005"}
#: ViT name -> (embed_dim, depth, num_heads), as arcface_torch's get_model builds them (8 heads, patch 9)
PEER_VITS = {"vit_t": (256, 12, 8), "vit_s": (512, 12, 8), "vit_b": (512, 24, 8), "vit_l": (768, 24, 8)}


def is_vit(backbone: str) -> bool:
    return backbone in PEER_VITS


def optimizer_of(args_optimizer: str, backbone: str) -> str:
    """The step's optimizer: ``auto`` is AdamW for a ViT (arcface_torch's ViT configs), Momentum otherwise."""
    if args_optimizer != "auto":
        return args_optimizer
    return "adamw" if is_vit(backbone) else "momentum"


def _timed(step, steps: int, warmup: int) -> list[float]:
    """Seconds of each of ``steps`` calls of ``step`` after ``warmup`` untimed ones."""
    times = []
    for i in range(warmup + steps):
        start = time.perf_counter()
        step()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return times


def paddle_step(backbone: str, batch: int, classes: int, sample_ratio: float, bf16: bool = False,
                options: dict | None = None, optimizer_name: str = "momentum"):
    """(this process's rank, a function running one paddle_pfc training step): the static program
    of the module docstring's step, built and initialised (also for tools/profile_backbone.py);
    ``options``: the backbone's build options (a ViT's drop path and mask ratio)."""
    import numpy as np
    import paddle

    import paddle_pfc
    from paddle_pfc.backbones import build_backbone
    rank, world_size = paddle_pfc.init_distributed()  # the launcher's ranks; the process settings
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        images = paddle.static.data("images", [batch, 3, 112, 112], "float32")
        net = build_backbone(backbone, 512, 112, 0.0, **(options or {}))
        net.train()
        if bf16:
            use_bfloat16_products(net)
        optimizer = paddle_optimizer(optimizer_name)
        if classes:
            labels = paddle.static.data("labels", [batch], "int64")
            head = paddle_pfc.LargeScaleClassifier(net(images), labels, rank, world_size, classes,
                                                   margin1=1.0, margin2=0.5, margin3=0.0, scale=64.0,
                                                   sample_ratio=sample_ratio, embedding_size=512)
            loss = head.output_dict["loss"]
            paddle_pfc.minimize(optimizer, loss)
        else:
            weights = paddle.static.data("weights", [batch, 512], "float32")
            loss = paddle.mean(net(images) * weights)
            optimizer.minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    rng = np.random.default_rng(rank)
    feed = {"images": rng.uniform(-1, 1, (batch, 3, 112, 112)).astype(np.float32)}
    if classes:
        feed["labels"] = rng.integers(0, classes, batch).astype(np.int64)
    else:
        feed["weights"] = rng.standard_normal((batch, 512)).astype(np.float32)
    return rank, lambda: exe.run(main, feed=feed, fetch_list=[loss])


def use_bfloat16_products(net) -> None:
    """bfloat16 products in ``net``'s training program (``train.amp=bf16``'s on CPU)."""
    from paddle_pfc.backbones.native_layers import use_bfloat16_convolutions

    use_bfloat16_convolutions(net)


def paddle_optimizer(name: str):
    """The step's optimizer (gradients clipped at global norm 5): ``momentum`` (lr 0.1, momentum 0.9,
    weight decay 5e-4, as arcface_torch trains the CNNs) or ``adamw`` (lr 1e-3, decoupled decay 0.1,
    as its ViT configs)."""
    import paddle

    clip = paddle.nn.ClipGradByGlobalNorm(5.0)
    if name == "adamw":
        return paddle.optimizer.AdamW(1e-3, weight_decay=0.1, grad_clip=clip)
    return paddle.optimizer.Momentum(0.1, momentum=0.9, weight_decay=5e-4, grad_clip=clip)


def vit_options(args) -> dict:
    """The ViT's build options from ``--drop-path-rate`` / ``--mask-ratio`` (empty: the row's defaults)."""
    if not is_vit(args.backbone):
        return {}
    return {key: value for key, value in (("drop_path_rate", args.drop_path_rate), ("mask_ratio", args.mask_ratio))
            if value is not None}


def _paddle_steps(args, bf16: bool = False) -> tuple[int, list[float]]:
    """(this process's rank, its step times in seconds)."""
    rank, step = paddle_step(args.backbone, args.batch_size, args.classes, args.sample_ratio, bf16,
                             vit_options(args), optimizer_of(args.optimizer, args.backbone))
    return rank, _timed(step, args.steps, args.warmup)


def peer_problem(insightface: str, with_head: bool, torch_python: str = sys.executable) -> str | None:
    """Why the peer cannot run from the checkout ``insightface`` (None: it can), checked before any
    side runs: torch importable (when the peer runs in this interpreter), and the arcface_torch files
    the peer step reads present."""
    if torch_python == sys.executable and importlib.util.find_spec("torch") is None:
        return "--insightface: the peer runs on PyTorch, which is not installed here (pip install torch)"
    root = Path(insightface).expanduser() / "recognition" / "arcface_torch"
    needed = ["backbones/__init__.py"] + (["partial_fc_v2.py", "losses.py"] if with_head else [])
    missing = [name for name in needed if not (root / name).is_file()]
    if missing:
        return (f"--insightface {insightface}: no {', '.join(missing)} under {root} (expected a checkout of "
                "github.com/deepinsight/insightface)")
    return None


def torch_step(backbone: str, batch: int, insightface: str, threads: int, classes: int, sample_ratio: float,
               rank: int = 0, world_size: int = 1, port: int = 0, options: dict | None = None,
               optimizer_name: str = "momentum"):
    """A function running one arcface_torch training step (the module docstring's peer step)."""
    import torch

    torch.set_num_threads(threads)
    sys.path.insert(0, str(Path(insightface).expanduser() / "recognition" / "arcface_torch"))
    net = _peer_backbone(torch, backbone, options or {})
    net.train()
    gen = torch.Generator().manual_seed(rank)
    images = torch.rand((batch, 3, 112, 112), generator=gen) * 2 - 1
    if classes:  # train_v2.py's step: PartialFC_V2 with CombinedMarginLoss, one SGD over both
        from losses import CombinedMarginLoss
        from partial_fc_v2 import PartialFC_V2

        torch.Tensor.cuda = lambda self, *args, **kwargs: self  # its sampling calls .cuda(); CPU here
        torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port or _free_port()}",
                                             rank=rank, world_size=world_size)
        if world_size > 1:  # as train_v2.py (on CPU: no device ids)
            net = torch.nn.parallel.DistributedDataParallel(net, broadcast_buffers=False, bucket_cap_mb=16,
                                                            find_unused_parameters=True)
        pfc = PartialFC_V2(CombinedMarginLoss(64.0, 1.0, 0.5, 0.0), 512, classes, sample_ratio)
        pfc.train()
        labels = torch.randint(0, classes, (batch,), generator=gen)
        params = [{"params": net.parameters()}, {"params": pfc.parameters()}]
        compute_loss = lambda: pfc(net(images), labels.clone())  # noqa: E731 (it rewrites labels)
    else:
        weights = torch.randn((batch, 512), generator=gen)
        params = net.parameters()
        compute_loss = lambda: (net(images) * weights).mean()  # noqa: E731
    optimizer = (torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1) if optimizer_name == "adamw"
                 else torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=5e-4))

    def step() -> None:
        loss = compute_loss()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        optimizer.step()

    return step


def timm_stand_in(torch) -> None:
    """``timm.models.layers``' three names arcface_torch's vit.py imports, where timm does not import
    (it needs torchvision), written as timm has them."""
    import collections.abc
    import itertools
    import types

    try:
        import timm.models.layers  # noqa: F401
        return
    except ImportError:
        pass

    class DropPath(torch.nn.Module):
        def __init__(self, drop_prob=0.0, scale_by_keep=True):
            super().__init__()
            self.drop_prob, self.scale_by_keep = drop_prob, scale_by_keep

        def forward(self, x):
            if self.drop_prob == 0.0 or not self.training:
                return x
            keep_prob = 1 - self.drop_prob
            random_tensor = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep_prob)
            if keep_prob > 0.0 and self.scale_by_keep:
                random_tensor.div_(keep_prob)
            return x * random_tensor

    layers = types.ModuleType("timm.models.layers")
    layers.DropPath = DropPath
    layers.to_2tuple = lambda x: tuple(x) if isinstance(x, collections.abc.Iterable) else tuple(itertools.repeat(x, 2))
    layers.trunc_normal_ = torch.nn.init.trunc_normal_
    sys.modules.update({"timm": types.ModuleType("timm"), "timm.models": types.ModuleType("timm.models"),
                        "timm.models.layers": layers})


def _peer_backbone(torch, backbone: str, options: dict):
    """arcface_torch's backbone (from the checkout on ``sys.path``): ``get_model``'s, or for a ViT its
    ``VisionTransformer`` as ``get_model`` builds it with ``options``' drop path and mask ratio (its
    defaults where missing: drop path 0.1, 0.05 for vit_l; a mask ratio above 0 masks 10 %)."""
    if not is_vit(backbone):
        from backbones import get_model  # the peer's own code, from the user's checkout

        return get_model(PEER_NAMES[backbone], dropout=0.0, fp16=False, num_features=512)
    timm_stand_in(torch)
    import warnings

    warnings.filterwarnings("ignore", message=".*autocast.*")  # its torch.cuda.amp.autocast on a CPU
    from backbones.vit import VisionTransformer

    dim, depth, heads = PEER_VITS[backbone]
    return VisionTransformer(img_size=112, patch_size=9, num_classes=512, embed_dim=dim, depth=depth,
                             num_heads=heads, norm_layer="ln",
                             drop_path_rate=options.get("drop_path_rate", 0.05 if backbone == "vit_l" else 0.1),
                             mask_ratio=options.get("mask_ratio", 0.1))


def _torch_steps(args) -> list[float]:
    step = torch_step(args.backbone, args.batch_size, args.insightface, args.threads, args.classes,
                      args.sample_ratio, args.rank, args.nproc, args.port, vit_options(args),
                      optimizer_of(args.optimizer, args.backbone))
    return _timed(step, args.steps, args.warmup)


def _conv_shapes(backbone: str, batch: int) -> list[tuple[tuple, int]]:
    """((N, C, H, W, O, kh, kw, stride, pad), count) of the backbone's groups-1 convolutions at
    112x112, from its layers' shapes (a forward of a [batch, 3, 112, 112] input in dygraph)."""
    import collections

    import paddle

    from paddle_pfc.backbones import build_backbone

    paddle.disable_static()
    net = build_backbone(backbone, 512, 112, 0.0)
    found: collections.Counter = collections.Counter()

    def hook(layer, inputs, output):
        if layer._groups == 1:
            x = inputs[0]
            found[(batch, *[int(d) for d in x.shape[1:]], int(layer.weight.shape[0]),
                   *[int(d) for d in layer.weight.shape[2:]], int(layer._stride[0]),
                   int(layer._padding[0]) if isinstance(layer._padding, (list, tuple)) else int(layer._padding))] += 1

    for layer in net.sublayers():
        if isinstance(layer, paddle.nn.Conv2D):
            layer.register_forward_post_hook(hook)
    net.eval()
    with paddle.no_grad():
        net(paddle.zeros([1, 3, 112, 112]))
    paddle.enable_static()
    return sorted(found.items(), key=lambda item: -item[0][2])


def _conv_bench(args) -> None:
    import numpy as np
    import paddle
    from paddle.autograd.ir_backward import grad as pir_grad

    import paddle_pfc
    from paddle_pfc.backbones.native_layers import Conv2D
    from paddle_pfc.kernels import onednn_ops
    from paddle_pfc.utils.cpu import cpu_summary

    paddle_pfc.configure_process()
    if onednn_ops.kernels() is None:
        raise SystemExit("oneDNN convolutions unavailable (PADDLE_PFC_NATIVE=off or the build failed)")
    shapes = _conv_shapes(args.backbone, args.batch_size)
    exe = paddle.static.Executor(paddle.CPUPlace())
    print(f"CPU: {cpu_summary()}; {args.backbone} convolutions, batch {args.batch_size}, "
          f"{args.threads} thread(s), forward + backward, median of {args.rounds} alternating rounds "
          f"of {args.steps} runs each")
    totals = {"onednn": 0.0, "paddle": 0.0}
    rng = np.random.default_rng(0)
    for (n, c, h, w, o, kh, kw, stride, pad), count in shapes:
        runs = {}
        for side in ("onednn", "paddle"):
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data("x", [n, c, h, w], "float32")
                x.stop_gradient = False
                layer = Conv2D(c, o, (kh, kw), stride, pad)
                layer.train() if side == "onednn" else layer.eval()
                out = layer(x)
                grads = pir_grad(paddle.sum(out), [x, layer.weight])
            scope = paddle.static.Scope()
            with paddle.static.scope_guard(scope):
                exe.run(startup)
            feed = {"x": rng.standard_normal([n, c, h, w]).astype(np.float32)}
            runs[side] = (main, scope, feed, [grads[1]])
        times = {side: [] for side in runs}
        for round_ in range(args.rounds + 1):
            for side, (main, scope, feed, fetch) in runs.items():
                with paddle.static.scope_guard(scope):
                    start = time.perf_counter()
                    for _ in range(args.steps):
                        exe.run(main, feed=feed, fetch_list=fetch)
                    if round_:  # the first round warms up
                        times[side].append((time.perf_counter() - start) / args.steps)
        med = {side: statistics.median(values) for side, values in times.items()}
        for side in totals:
            totals[side] += count * med[side]
        print(f"  x[{n},{c},{h},{w}] w[{o},{c},{kh},{kw}] s{stride} p{pad} x{count:2d}: oneDNN "
              f"{med['onednn'] * 1e3:8.2f} ms  paddle {med['paddle'] * 1e3:8.2f} ms  "
              f"paddle/oneDNN {med['paddle'] / med['onednn']:5.2f}")
    print(f"  all convolutions (weighted by use): oneDNN {totals['onednn']:.3f} s  paddle {totals['paddle']:.3f} s  "
          f"paddle/oneDNN {totals['paddle'] / totals['onednn']:.2f}")


def _gemm_seconds(args) -> list[float]:
    """Seconds of ``--steps`` runs (after ``--warmup``) of bench/floor.py's square float32 GEMM, each
    the faster of Paddle's and oneDNN's."""
    import paddle

    import paddle_pfc
    from paddle_pfc.bench.floor import TimedProgram, build_gemm_program, gemm_libraries

    paddle_pfc.configure_process()
    paddle.enable_static()
    gemms = [TimedProgram(*build_gemm_program(library)) for library in gemm_libraries()]
    times = [min(gemm() for gemm in gemms) for _ in range(args.warmup + args.steps)]
    return times[args.warmup:]


def vit_floor_flop(args) -> float:
    """FLOPs of the products of one rank's ViT step (tools/bench_backbone.py's batch and options)."""
    from paddle_pfc.bench.vit_floor import VitShape, vit_step_gemm_flop

    dim, depth, heads = PEER_VITS[args.backbone]
    mask = vit_options(args).get("mask_ratio", 0.1)
    patches = (112 // 9) ** 2
    shape = VitShape(dim, depth, heads, patches, int(patches * (1 - mask)) if mask > 0 else patches)
    return vit_step_gemm_flop(shape, args.batch_size)


def bf16_error(args) -> dict:
    """What bfloat16 products change in one step's values: the backbone built twice from one seed
    (drop path and masking off, so both see the same network), its training program with float32
    and with bfloat16 products on one batch; the relative L2 difference of the embeddings, their
    smallest cosine, and that of all parameter gradients (and the median over parameters)."""
    import numpy as np
    import paddle

    import paddle_pfc
    from paddle_pfc.backbones import build_backbone

    paddle_pfc.configure_process()
    paddle.enable_static()
    rng = np.random.default_rng(0)
    feed = {"images": rng.uniform(-1, 1, (args.batch_size, 3, 112, 112)).astype(np.float32),
            "weights": rng.standard_normal((args.batch_size, 512)).astype(np.float32)}
    options = {"drop_path_rate": 0.0, "mask_ratio": 0.0} if is_vit(args.backbone) else {}
    fetched = []
    for bf16 in (False, True):
        paddle.seed(0)
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            images = paddle.static.data("images", feed["images"].shape, "float32")
            net = build_backbone(args.backbone, 512, 112, 0.0, **options)
            net.train()
            if bf16:
                use_bfloat16_products(net)
            embedding = net(images)
            loss = paddle.mean(embedding * paddle.static.data("weights", feed["weights"].shape, "float32"))
            params = [p for p in net.parameters() if not p.stop_gradient]
            grads = [g for g in paddle.static.gradients([loss], params) if g is not None]
        with paddle.static.scope_guard(paddle.static.Scope()):
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            fetched.append(exe.run(main, feed=feed, fetch_list=[embedding, *grads]))
    (e32, *g32), (e16, *g16) = fetched

    def relative(a, b) -> float:
        return float(np.linalg.norm(a - b) / np.linalg.norm(a))

    cosines = (e32 * e16).sum(1) / np.linalg.norm(e32, axis=1) / np.linalg.norm(e16, axis=1)
    flat32, flat16 = (np.concatenate([g.ravel() for g in grads]) for grads in (g32, g16))
    return {"embedding_relative": relative(e32, e16), "embedding_min_cosine": float(cosines.min()),
            "gradients_relative": relative(flat32, flat16),
            "gradients_median_relative": float(np.median([relative(a, b) for a, b in zip(g32, g16)]))}


def _free_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


def _worker(args) -> None:
    if args.worker in ("paddle", "paddle_off", "paddle_bf16"):
        rank, times = _paddle_steps(args, bf16=args.worker == "paddle_bf16")
    elif args.worker == "gemm":
        rank, times = 0, _gemm_seconds(args)
    else:
        rank = args.rank
        times = _torch_steps(args)
    Path(args.result_dir, f"rank{rank}.json").write_text(json.dumps(times))


def _run_side(side: str, args) -> float:
    """The median over steps of the slowest rank's step time, in seconds."""
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    if side == "paddle_off":
        env["PADDLE_PFC_NATIVE"] = "off"
    ranks = 1 if side == "gemm" else args.nproc
    with tempfile.TemporaryDirectory() as result_dir:
        worker = [__file__, "--worker", side, "--backbone", args.backbone, "--batch-size",
                  str(args.batch_size), "--steps", str(args.steps), "--warmup", str(args.warmup), "--threads",
                  str(args.threads), "--classes", str(args.classes), "--sample-ratio", str(args.sample_ratio),
                  "--nproc", str(args.nproc), "--result-dir", result_dir, "--optimizer", args.optimizer] + \
            (["--insightface", args.insightface] if args.insightface else []) + \
            [f"--{key.replace('_', '-')}={value}" for key, value in vit_options(args).items()]
        if side != "torch":
            launch = ["-m", "paddle.distributed.launch", "--nproc_per_node", str(ranks), "--log_dir",
                      str(Path(result_dir, "log"))] if ranks > 1 else []
            procs = [subprocess.Popen([sys.executable, *launch, *worker], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)]
        else:
            port = str(_free_port())
            procs = [subprocess.Popen([args.torch_python, *worker, "--rank", str(rank), "--port", port], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for rank in range(ranks)]
        outputs = [proc.communicate() for proc in procs]
        files = [Path(result_dir, f"rank{rank}.json") for rank in range(ranks)]
        if any(proc.returncode for proc in procs) or not all(f.exists() for f in files):
            logs = "\n".join(err[-3000:] for _, err in outputs)
            for log in sorted(Path(result_dir, "log").glob("workerlog.*")):
                logs += f"\n--- {log.name}\n" + log.read_text()[-3000:]
            raise SystemExit(f"{side} worker failed ({[proc.returncode for proc in procs]}):\n{logs}")
        per_rank = [json.loads(f.read_text()) for f in files]
    return statistics.median(max(step) for step in zip(*per_rank))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backbone", default="mobilefacenet", choices=sorted(PEER_NAMES))
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--insightface", default=None, help="local checkout of deepinsight/insightface")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("--native-off", action="store_true",
                   help="also measure paddle_pfc with PADDLE_PFC_NATIVE=off (Paddle's own kernels)")
    p.add_argument("--classes", type=int, default=0,
                   help="full step: add the Partial FC head with this many classes (ArcFace, sharded over --nproc; "
                        "the peer: PartialFC_V2 + CombinedMarginLoss as train_v2.py); 0 = backbone only")
    p.add_argument("--sample-ratio", type=float, default=0.1, help="with --classes: the sampling ratio")
    p.add_argument("--bf16", action="store_true",
                   help="also measure paddle_pfc with bfloat16 convolutions (train.amp=bf16 on CPU)")
    p.add_argument("--bf16-error", action="store_true",
                   help="instead of timing: how far one step's embeddings and gradients with bfloat16 products "
                        "are from float32's (one process, --batch-size, drop path and masking off)")
    p.add_argument("--convs", action="store_true",
                   help="per-convolution micro-benchmark: oneDNN op against Paddle's conv2d")
    p.add_argument("--nproc", type=int, default=1,
                   help="ranks per side (with --classes; --batch-size and --threads are per rank)")
    p.add_argument("--optimizer", choices=("auto", "momentum", "adamw"), default="auto",
                   help="the step's update: Momentum (lr 0.1, decay 5e-4) or AdamW (lr 1e-3, decay 0.1), both "
                        "clipped at norm 5; auto: AdamW for a ViT, Momentum otherwise (arcface_torch's configs)")
    p.add_argument("--drop-path-rate", type=float, default=None,
                   help="a ViT's drop path rate, both sides (default: the row's, arcface_torch's get_model's)")
    p.add_argument("--mask-ratio", type=float, default=None,
                   help="a ViT's mask ratio, both sides (default 0.1; arcface_torch masks 10 %% whenever it is > 0)")
    p.add_argument("--floor", action="store_true",
                   help="ViT, backbone only: also time the square GEMM of bench/floor.py in the same rounds and "
                        "report the step against its matrix-product floor (its GEMMs' FLOPs at that rate)")
    p.add_argument("--torch-python", default=sys.executable,
                   help="the interpreter the peer runs in (one with torch; paddle_pfc is put on its path)")
    p.add_argument("--worker", choices=("paddle", "paddle_off", "paddle_bf16", "torch", "gemm"),
                   help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--result-dir", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.nproc < 1 or (args.nproc > 1 and not args.classes):
        p.error("--nproc N takes N >= 1, and N > 1 needs --classes (a full step with the sharded head)")
    if not is_vit(args.backbone) and (args.drop_path_rate is not None or args.mask_ratio is not None):
        p.error("--drop-path-rate and --mask-ratio are a ViT's options")
    if args.floor and (not is_vit(args.backbone) or args.classes):
        p.error("--floor counts the products of a ViT's step: a vit_* --backbone without --classes")
    if args.insightface and not args.worker:
        problem = peer_problem(args.insightface, args.classes > 0, args.torch_python)
        if problem:
            p.error(problem)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        _worker(args)
        return 0
    if args.bf16_error:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)
        print(json.dumps(bf16_error(args), indent=1))
        return 0
    if args.convs:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)
        _conv_bench(args)
        return 0
    from paddle_pfc.utils.cpu import cpu_summary

    sides = (["paddle"] + (["paddle_bf16"] if args.bf16 else []) + (["paddle_off"] if args.native_off else [])
             + (["torch"] if args.insightface else []) + (["gemm"] if args.floor else []))
    steps: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side in sides:
            steps[side].append(_run_side(side, args))
    report = {"cpu": cpu_summary(), "backbone": args.backbone, "batch_size": args.batch_size,
              "classes": args.classes, "sample_ratio": args.sample_ratio, "ranks": args.nproc,
              "threads": args.threads, "rounds": args.rounds, "step_s": steps,
              "optimizer": optimizer_of(args.optimizer, args.backbone), "options": vit_options(args)}
    what = f"full step, {args.classes} classes at ratio {args.sample_ratio}" if args.classes else "backbone only"
    what += f", {report['optimizer']}" + "".join(f", {key} {value}" for key, value in report["options"].items())
    print(f"CPU: {report['cpu']}; {args.backbone}, {what}, {args.nproc} rank(s), batch {args.batch_size} and "
          f"{args.threads} thread(s) per rank, median of {args.steps} steps per round, "
          f"{args.rounds} alternating rounds")
    _report_sides(args, steps, report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


def _report_sides(args: argparse.Namespace, steps: dict[str, list[float]], report: dict) -> None:
    """Print each side's median step and images/s, and their ratios (also added to ``report``)."""
    medians = {side: statistics.median(values) for side, values in steps.items() if side != "gemm"}
    for side, value in medians.items():
        label = {"paddle": "paddle_pfc", "paddle_bf16": "paddle_pfc/bf16", "paddle_off": "paddle_pfc/off",
                 "torch": "arcface_torch"}[side]
        print(f"  {label:14s} {value:7.3f} s/step  {args.nproc * args.batch_size / value:7.2f} images/s  "
              f"rounds {steps[side]}")
    if "torch" in medians:
        report["paddle_over_torch_images_per_s"] = medians["torch"] / medians["paddle"]
        print(f"  paddle_pfc / arcface_torch images/s = {report['paddle_over_torch_images_per_s']:.3f}")
    if "paddle_bf16" in medians:
        report["bf16_over_fp32_images_per_s"] = medians["paddle"] / medians["paddle_bf16"]
        print(f"  paddle_pfc bf16 / fp32 images/s = {report['bf16_over_fp32_images_per_s']:.3f}")
        if "torch" in medians:
            report["paddle_bf16_over_torch_images_per_s"] = medians["torch"] / medians["paddle_bf16"]
            print(f"  paddle_pfc bf16 / arcface_torch images/s = {report['paddle_bf16_over_torch_images_per_s']:.3f}")
    _report_paired(steps, report)
    if "gemm" in steps:
        _report_floor(args, steps, report)
    if "paddle_off" in medians:
        report["native_over_off_images_per_s"] = medians["paddle_off"] / medians["paddle"]
        print(f"  paddle_pfc native / PADDLE_PFC_NATIVE=off images/s = {report['native_over_off_images_per_s']:.3f}")

def _report_paired(steps: dict[str, list[float]], report: dict) -> None:
    """Each ratio of the sides' step times taken within a round, then the median over rounds (robust
    to a machine whose load changes between rounds)."""
    pairs = [("torch", "paddle", "paddle_over_torch"), ("paddle", "paddle_bf16", "bf16_over_fp32"),
             ("torch", "paddle_bf16", "paddle_bf16_over_torch"), ("paddle_off", "paddle", "native_over_off")]
    for slower, faster, key in pairs:
        if slower in steps and faster in steps:
            ratios = [a / b for a, b in zip(steps[slower], steps[faster])]
            report[f"paired_{key}"] = statistics.median(ratios)
            print(f"  paired by round: {key} images/s = {report[f'paired_{key}']:.3f} "
                  f"(rounds {[round(r, 3) for r in ratios]})")


def _report_floor(args: argparse.Namespace, steps: dict[str, list[float]], report: dict) -> None:
    """The ViT step against its products at the round's GEMM rate: step / floor per round, medians."""
    from paddle_pfc.bench.floor import GEMM_SIZE
    from paddle_pfc.bench.vit_floor import floor_seconds

    flop = vit_floor_flop(args)
    rates = [2.0 * GEMM_SIZE ** 3 / seconds / 1e9 for seconds in steps["gemm"]]
    report["floor_gflop"] = flop / 1e9
    report["gemm_gflops"] = statistics.median(rates)
    for side in ("paddle", "paddle_bf16", "torch"):
        if side in steps:
            ratios = [step / floor_seconds(flop, rate) for step, rate in zip(steps[side], rates)]
            report[f"{side}_over_floor"] = statistics.median(ratios)
            print(f"  {side} step / fp32 matrix-product floor = {report[f'{side}_over_floor']:.3f}  "
                  f"(rounds {[round(r, 3) for r in ratios]})")
    print(f"  floor: {flop / 1e9:.1f} GFLOP a step at {report['gemm_gflops']:.1f} GFLOP/s "
          f"({floor_seconds(flop, report['gemm_gflops']):.3f} s)")


if __name__ == "__main__":
    run(main)
