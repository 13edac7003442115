"""The training engine: config, program building, the step loop, checkpoints, processes.

``config/`` (schema dataclasses, loading, checks), ``builder`` (the train / eval programs as one
``TrainPrograms``), ``trainer`` (the loop: resume, steps, non-finite steps counted), ``callbacks``
(step logging, metrics, checkpointing), ``validator`` (validation on every rank, best model),
``checkpoint`` (the on-disk format), ``pretrained`` (fine-tuning sources), ``lr``,
``errors`` (a failed rank's one-line report), ``preemption`` (SIGTERM: an agreed step to stop at),
``output_lock`` (one job per output folder), ``protect`` (model sources the run must not delete),
``input`` (the dataset and loader of a config), ``memory`` (the head against the machine's memory).
Process settings, ranks and barriers live in :mod:`paddle_pfc.runtime`; ``run`` in
:mod:`paddle_pfc.head.runner`.
"""
