"""The training engine: config, program building, the step loop, checkpoints, processes.

``config`` (schema and loading), ``trainer`` (builds the programs and runs the loop),
``checkpoint``, ``pretrained`` (fine-tuning sources), ``lr``, ``distributed`` / ``barrier`` /
``errors`` (ranks, their meetings and their failures), ``runtime`` / ``device`` (process settings
decided from the running CPU), ``progress`` (the lines long operations print), ``runner``.
"""
