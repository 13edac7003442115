"""The Partial FC head: the classifier builder and the pieces of its math.

``classifier`` (LargeScaleClassifier: sharded centers, what a program holds), ``margin_softmax``
(the loss over blocks of centers, forward and backward), ``sampling`` (class-center sampling),
``collectives`` (ordered all-gathers / all-reduces with their gradients), ``sparse_update``
(momentum on the sampled centers), ``loss_scaling`` and ``optimizer`` (``minimize``: the update
rule of backbone and centers, non-finite steps skipped), ``planner`` (memory per rank),
``host_dtypes`` (numpy views of the center dtypes). Kernels live in :mod:`paddle_pfc.kernels`.
"""
