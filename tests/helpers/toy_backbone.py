"""A backbone built only by the table tests: one Linear over the flattened image, whose row declares
options (``scale``: a float multiplying the embedding, ``bias``: a bool), so the tests see a row's
options reach the layer."""
from __future__ import annotations

import math

import paddle
from paddle import nn


class ToyBackbone(nn.Layer):
    def __init__(self, embedding_size: int, input_size: tuple[int, int], dropout: float, scale: float,
                 bias: bool) -> None:
        super().__init__()
        self.scale, self.dropout_rate = scale, dropout
        self.fc = nn.Linear(3 * math.prod(input_size), embedding_size, bias_attr=None if bias else False)

    def forward(self, x):
        return self.fc(paddle.flatten(x, 1)) * self.scale


def toy(embedding_size: int, input_size: tuple[int, int], dropout: float, scale: float = 1.0,
        bias: bool = True) -> ToyBackbone:
    return ToyBackbone(embedding_size, input_size, dropout, scale, bias)
