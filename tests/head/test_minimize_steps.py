"""The steps of paddle_pfc.minimize, each run alone (paddle_pfc.head.optimizer)."""
import numpy as np
import pytest


def _head_program(paddle, world_size=1):
    import paddle_pfc

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [4, 8], "float32")
        x.stop_gradient = False
        y = paddle.static.data("y", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(x, y, 0, world_size, 10, embedding_size=8, sample_ratio=0.5)
    return main, startup, head


def test_check_arguments_names_what_is_wrong(static_mode):
    import paddle

    from paddle_pfc.head.optimizer import check_arguments

    main, startup, head = _head_program(paddle)
    with paddle.static.program_guard(main, startup):
        optimizer = paddle.optimizer.Momentum(0.1, momentum=0.9)
        with pytest.raises(ValueError, match="holds no LargeScaleClassifier"):
            check_arguments(main, [], optimizer, head.output_dict["loss"])
        with pytest.raises(ValueError, match="loss must be a float32 scalar"):
            check_arguments(main, [head], optimizer, paddle.cast(head.output_dict["loss"], "float64"))
        rule = check_arguments(main, [head], optimizer, head.output_dict["loss"])
    assert (rule.momentum, rule.nesterov, rule.weight_decay, rule.rescale_grad) == (0.9, False, 0.0, 1.0)


def test_finite_check_alone_flags_a_nonfinite_loss(static_mode):
    """backward then finite_check, no update: the flags (loss, backbone, centers, statistics) of a
    finite batch are all 0; a NaN feature makes the loss and the center gradients non-finite."""
    import paddle

    from paddle_pfc.head.optimizer import backward, finite_check
    from paddle_pfc.head.registry import nonfinite_flags
    from paddle_pfc.kernels.collectives import CollectiveChain

    main, startup, head = _head_program(paddle)
    with paddle.static.program_guard(main, startup):
        loss = head.output_dict["loss"]
        grads = backward(loss, [head], [], None)
        found_inf = finite_check(main, CollectiveChain(1), loss, [head], grads, [], None)
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    rng = np.random.default_rng(0)
    labels = np.array([0, 3, 5, 9], np.int64)
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        x = rng.standard_normal((4, 8)).astype(np.float32)
        found, flags = exe.run(main, feed={"x": x, "y": labels}, fetch_list=[found_inf, nonfinite_flags(main)])
        assert not found[0] and flags.tolist() == [0.0, 0.0, 0.0, 0.0]
        x[1, 2] = np.nan
        found, flags = exe.run(main, feed={"x": x, "y": labels}, fetch_list=[found_inf, nonfinite_flags(main)])
        assert found[0] and flags[0] == 1.0 and flags[2] == 1.0 and flags[1] == 0.0


def test_startup_broadcast_is_one_all_reduce_of_the_chain(static_mode):
    """On 2 ranks every data-parallel parameter's start value is rank 0's: one all-reduce in the
    startup program, then one in-place write per parameter; nothing on 1 rank."""
    import paddle

    from paddle_pfc.head.optimizer import broadcast_at_startup

    for world_size, reduces in ((1, 0), (2, 1)):
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            params = [paddle.static.create_parameter([3, 2], "float32", name=f"p{k}_{world_size}") for k in range(3)]
        before = [op.name() for op in startup.global_block().ops]
        broadcast_at_startup(startup, params, world_size, rank=1)
        added = [op.name() for op in startup.global_block().ops][len(before):]
        assert sum("all_reduce" in name for name in added) == reduces
        assert sum(name == "pd_op.assign_out_" for name in added) == (3 if reduces else 0)
