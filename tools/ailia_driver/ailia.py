"""What ailia-models' scripts ask of the `ailia` SDK when they run on ONNX Runtime (`--onnx`).

segment_anything_3_1.py imports `ailia` unconditionally and util/arg_utils.py asks it for the
environments behind its --env_id default; with `--onnx` no ailia network is ever made. This
module answers those questions with one CPU environment and refuses `ailia.Net`, so the driver
runs only on ONNX Runtime (this folder's `onnxruntime`, over sam3's ONNX Runtime).
"""

ENVIRONMENT_AUTO = -1


class Environment:
    def __init__(self):
        self.id = 0
        self.type = "CPU"
        self.name = "CPU (no ailia SDK here: ONNX Runtime only, run with --onnx)"
        self.backend = "CPU"
        self.props = "LOWPOWER"

    def __str__(self):
        return self.name


def get_environment_count():
    return 1


def get_environment(env_id):
    return Environment()


def get_gpu_environment_id():
    return 0  # the driver's `0 < get_gpu_environment_id()` then picks CPUExecutionProvider


def get_memory_mode(**_flags):
    return 11  # arg_utils' own default without ailia


def set_temporary_cache_path(_path):
    pass


class Net:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("the ailia SDK is not installed here; run ailia-models' scripts with --onnx")
