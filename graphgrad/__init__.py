"""graphgrad: a readable deep-learning framework on NumPy.

``import graphgrad as gg`` gives tensors (``gg.tensor``), the op library (``gg.exp``, ``gg.matmul``...),
autograd (``gg.grad``, ``gg.no_grad``), gradient checking (``gg.check_grad``) and the custom-op API
(``gg.Op``). This module only re-exports; nothing is defined here.
"""
from graphgrad import config
from graphgrad.dtypes import (bool_, double, float16, float32, float64, float_, half, int8, int16, int32, int64,
                              long, uint8, as_dtype, is_floating, promote_types)
from graphgrad.errors import (ArgumentError, DeviceError, DivisionByZeroError, IndexRangeError, DTypeError, FeedError, GradError, GraphError, GraphgradError, NonFiniteError,
                              ShapeError)
from graphgrad.core.tensor import Tensor, ValuesIndices, MinMax
from graphgrad.core.device import cuda, device, get_default_device, set_default_device
from graphgrad.core.spec import TensorSpec
from graphgrad.core.op import Op, needs_grad
from graphgrad.core.autograd import (backward, detect_anomaly, enable_grad, grad, is_grad_enabled, no_grad,
                                     set_grad_enabled)
from graphgrad.core.gradcheck import GradcheckError, check_grad
from graphgrad.core.profiler import Profile, profile, record_function
from graphgrad.core.random import Generator, default_generator, manual_seed
from graphgrad.core.creation import (arange, as_tensor, empty, eye, from_numpy, full, linspace, normal,
                                     multinomial, ones, rand, randint, randn, tensor, uniform, zeros)
from graphgrad.core.creation import is_tensor, numel, randperm
from graphgrad import ops
from graphgrad.ops import *  # noqa: F401,F403
from graphgrad.ops import linalg_namespace as linalg  # gg.linalg: torch.linalg's names
from graphgrad.config import get_default_dtype, set_default_dtype, set_printoptions
from graphgrad import graph
from graphgrad.graph import *  # noqa: F401,F403
from graphgrad.graph.serialize import save_graph, load_graph
from graphgrad.graph.trace import function
from graphgrad import nn, optim
from graphgrad import distributions  # gg.distributions: torch.distributions' Normal, Categorical...
from graphgrad import data, viz
from graphgrad.viz import explain
from graphgrad import train
from graphgrad.train import Model, Sequential
from graphgrad.io import save, load, save_checkpoint, load_checkpoint
from graphgrad.io import onnx  # gg.onnx.export / gg.onnx.load (the onnx package is imported on use)
from graphgrad import distributed  # gg.distributed (mpi4py is imported by init(), under a launcher only)

bool = bool_  # noqa: A001  (gg.bool, like torch.bool)
__version__ = "0.1.0"
