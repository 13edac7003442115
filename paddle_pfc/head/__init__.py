"""The Partial FC head: the classifier builder and the pieces of its math.

``spec`` (HeadSpec: a head's facts, validated once; no Paddle), ``layout`` (``block_layout``: its
blocks, which the classifier builds and the planner plans; no Paddle), ``classifier``
(LargeScaleClassifier: sharded centers, what a program holds), ``geometry`` (class split, kept
centers a step, block rows: the rules ``layout`` applies; no Paddle),
``blocks`` (a block of kept centers), ``margin`` (the Margin protocol and the combined margin;
``adaface``: AdaFace), ``margin_softmax`` (the loss over blocks of centers, forward and backward;
``margin_softmax_fused`` on the fused backend),
``sampling`` (class-center sampling), ``checks`` (run-time checks of labels and batch sizes,
ordered before what they guard), ``sparse_update`` (momentum on the sampled centers),
``loss_scaling`` and ``optimizer`` (``minimize``: the update rule of backbone and centers,
non-finite steps skipped), ``registry`` (the classifiers and non-finite flags of a program),
``planner`` (memory per rank), ``host_memory`` (the centers against the machine's memory),
``startup_log`` (the start-up line of a large shard's initialisation),
``dtypes`` (the center dtypes and their numpy views). Kernels, and the ordered collectives they
share with the head, live in :mod:`paddle_pfc.kernels`.
"""
