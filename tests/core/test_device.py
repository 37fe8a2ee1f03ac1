"""Devices: gg.device, Tensor.device, device= on factories, Module.to(device), gg.cuda, and the
error a missing GPU gives."""
import pickle

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch


def test_device_is_a_string_with_type_and_index():
    cpu = gg.device("cpu")
    assert cpu == "cpu" and cpu.type == "cpu" and cpu.index is None and repr(cpu) == "device(type='cpu')"
    cuda = gg.device("cuda", 1)
    assert cuda == "cuda:1" and cuda.type == "cuda" and cuda.index == 1
    assert gg.device("cuda") == "cuda:0" and gg.device(gg.device("cpu")) == "cpu"
    assert pickle.loads(pickle.dumps(cuda)) == cuda and torch.device("cpu") == gg.device("cpu")
    with pytest.raises(ValueError, match="unknown device"):
        gg.device("tpu")


def test_tensor_device_and_factories_take_device():
    x = gg.zeros((2, 3), device="cpu")
    assert x.device == "cpu" and x.device.type == "cpu" and isinstance(x.device, gg.device)
    for make in (lambda: gg.ones(2, device=gg.device("cpu")), lambda: gg.arange(3, device="cpu"),
                 lambda: gg.zeros_like(x, device="cpu"), lambda: gg.ones_like(x, device="cpu"),
                 lambda: gg.full_like(x, 2.0, device="cpu"), lambda: gg.rand_like(x, device="cpu"),
                 lambda: gg.randn_like(x, device="cpu"), lambda: gg.randn(2, device="cpu"),
                 lambda: gg.tensor([1.0], device="cpu"), lambda: gg.logspace(0, 1, 3, device="cpu"),
                 lambda: gg.eye(2, device="cpu"), lambda: gg.randint(0, 3, (2,), device="cpu")):
        assert make().device == "cpu"
    assert x.to("cpu", gg.float64).dtype == np.float64 and x.cpu().device == "cpu"


@pytest.mark.skipif(gg.cuda.is_available(), reason="a GPU is present here")
def test_cuda_without_a_gpu_says_so():
    assert gg.cuda.is_available() is False and gg.cuda.device_count() == 0 and not torch.cuda.is_available()
    gg.cuda.synchronize()
    gg.cuda.empty_cache()
    for attempt in (lambda: gg.zeros(2, device="cuda"), lambda: gg.zeros(2).to("cuda"), lambda: gg.zeros(2).cuda(),
                    lambda: gg.ones_like(gg.zeros(2), device="cuda"), lambda: gg.nn.Linear(2, 2).to("cuda")):
        with pytest.raises(RuntimeError, match="not available"):
            attempt()


def test_module_to_device_keeps_cpu_modules_working():
    layer = gg.nn.Linear(3, 2).to(gg.device("cpu"))
    assert all(p.device == "cpu" for p in layer.parameters())
    assert layer(gg.ones((1, 3))).shape == (1, 2)
