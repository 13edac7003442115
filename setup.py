"""paddle_pfc: Partial FC for PaddlePaddle 3 static (PIR) programs."""
from setuptools import find_packages, setup

setup(
    name="paddle_pfc",
    version="0.1.0",
    description="Partial FC (sampled, model-parallel margin softmax) for PaddlePaddle 3 static programs",
    long_description=open("README.md", encoding="utf-8").read() if __import__("os").path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["paddle_pfc", "paddle_pfc.*"]),
    # C++ sources of the native ops, built on first use (paddle_pfc.kernels.native_ops / onednn_ops), and the
    # oneDNN headers of the release Paddle's wheel loads (the wheel ships only stubs of them).
    package_data={"paddle_pfc.kernels": ["csrc/*.cc", "csrc/*.h", "csrc/third_party/onednn/LICENSE",
                                         "csrc/third_party/onednn/oneapi/dnnl/*.h*"]},
    entry_points={
        # Each runs paddle_pfc.cli.<module>:main (through paddle_pfc.cli.entry), as tools/<module>.py does.
        "console_scripts": [
            f"paddle-pfc-{name.replace('_', '-')}=paddle_pfc.cli.entry:{name}"
            for name in ("train", "export", "infer", "validate", "eval_ijb", "im2rec", "plan", "selfcheck",
                         "convert", "align", "launch", "pairs")
        ],
    },
    install_requires=[
        "numpy>=1.23",
        "PyYAML>=6.0",
        "opencv-python-headless>=4.8",
        "visualdl>=2.5",
        "pandas>=1.5",  # IJB meta files (paddle_pfc.evaluation.ijb)
        "matplotlib>=3.6",  # ROC plots (paddle_pfc.evaluation.roc)
    ],
    extras_require={
        # Paddle is the user's choice of build: CPU (what CI tests) or GPU.
        "cpu": ["paddlepaddle==3.3.1"],
        "gpu": ["paddlepaddle-gpu>=3.0"],
        # paddle2onnx's polygraphy step (which pip-installs at run time) is not used: nothing more is needed
        "test": ["pytest>=7", "ruff==0.17.6", "hypothesis>=6", "paddle2onnx>=2.0", "onnx>=1.14", "onnxruntime>=1.16"],
        # ONNX export (paddle2onnx), running ONNX models, and reading them (paddle-pfc-convert)
        "onnx": ["paddle2onnx>=2.0", "onnx>=1.14", "onnxruntime>=1.16"],
    },
)
