"""The command-line tools: one module per command, each with ``main(argv=None) -> int`` (the exit
status). Installed as console scripts (``setup.py``) and run by the thin ``tools/<name>.py``
wrappers (``python tools/train.py`` and ``python -m paddle.distributed.launch ... tools/train.py``
keep working):

=====================  ==========================  ==================================================
command                module                      what
=====================  ==========================  ==================================================
paddle-pfc-train       :mod:`.train`               train (one rank, or each rank under the launcher)
paddle-pfc-export      :mod:`.export`              export a backbone (Paddle Inference, ONNX)
paddle-pfc-infer       :mod:`.infer`               embed and compare images with an exported model
paddle-pfc-validate    :mod:`.validate`            accuracy on insightface ``.bin`` sets
paddle-pfc-eval-ijb    :mod:`.eval_ijb`            IJB-B / IJB-C 1:1 verification
paddle-pfc-im2rec      :mod:`.im2rec`              image folder -> ``train.rec`` / ``train.idx``
paddle-pfc-plan        :mod:`.plan`                memory per rank of a head (no Paddle needed)
paddle-pfc-selfcheck   :mod:`.selfcheck`           every backend of the head against float64
=====================  ==========================  ==================================================

Importing a module here imports nothing heavy (no Paddle or OpenCV; NumPy only in ``selfcheck``,
whose reference math is module-level): arguments are parsed and the work is imported inside
``main``. ``plan`` never imports Paddle.
"""
