"""The training engine: config, program building, the step loop, checkpoints, processes.

``config/`` (schema dataclasses, loading, checks), ``builder`` (the train / eval programs as one
``TrainPrograms``), ``trainer`` (the loop: resume, steps, non-finite steps counted), ``callbacks``
(step logging, metrics, checkpointing), ``validator`` (validation on every rank, best model),
``checkpoint`` (the on-disk format), ``pretrained`` (fine-tuning sources), ``lr``,
``distributed`` / ``barrier`` / ``errors`` (ranks, their meetings and their failures),
``runtime`` / ``device`` (process settings decided from the running CPU), ``progress`` (the lines
long operations print), ``runner`` (``run``: a step with the labels checked).
"""
