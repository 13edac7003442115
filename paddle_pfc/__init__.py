"""paddle_pfc: Partial FC for PaddlePaddle 3 static (PIR) programs."""
__version__ = "0.1.0"
