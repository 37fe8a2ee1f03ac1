"""The breadth of graphgrad.compat.torch: the names PyTorch programs commonly use resolve, the legacy
constructors, typed tensor classes, and the torch.* functions that mean the Tensor method."""
import math

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch

#: torch.* functions commonly called by PyTorch programs (each must resolve in the facade).
TORCH_FUNCTIONS = """
abs absolute acos acosh add addcdiv addcmul addmm all allclose amax amin aminmax any arange argmax argmin argsort
argwhere as_tensor asin asinh atan atan2 atanh atleast_1d atleast_2d atleast_3d baddbmm bernoulli bincount
bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm broadcast_shapes
broadcast_tensors broadcast_to bucketize cat ceil chunk clamp clamp_max clamp_min clip clone column_stack concat
copysign cos cosh count_nonzero cummax cummin cumprod cumsum deg2rad diag diag_embed diagonal diagonal_scatter diff
digamma div divide dsplit dstack einsum empty empty_like eq equal erf erfc erfinv exp exp2 expm1 eye flatten flip
fliplr flipud float_power floor floor_divide fmax fmin fmod frac from_numpy full full_like gather gcd ge greater gt
heaviside histc hsplit hstack hypot index_add index_copy index_fill index_put index_select is_floating_point
is_nonzero is_tensor isclose isfinite isin isinf isnan isneginf isposinf isreal kthvalue lcm ldexp le lerp lgamma
linspace log log10 log1p log2 logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor logit
logspace logsumexp lt manual_seed masked_fill masked_scatter masked_select matmul max maximum mean median meshgrid
min minimum mm mode moveaxis movedim msort mul multinomial multiply mvlgamma nan_to_num nanmean nanmedian
nanquantile nansum narrow ne neg negative nextafter nonzero normal not_equal numel ones ones_like permute polygamma
pow prod quantile rad2deg rand rand_like randint randn randn_like randperm range ravel reciprocal remainder
repeat_interleave reshape roll rot90 round rsqrt rsub scatter scatter_add scatter_reduce searchsorted select
select_scatter sigmoid sign signbit sin sinc sinh slice_scatter softmax sort split sqrt square squeeze stack std
std_mean sub subtract sum swapaxes swapdims t take take_along_dim tan tanh tensor tensor_split tile topk transpose
tril triu true_divide trunc unbind unflatten unique unique_consecutive unsqueeze var var_mean vsplit vstack where
xlogy zeros zeros_like no_grad enable_grad set_grad_enabled is_grad_enabled inference_mode get_default_dtype
set_default_dtype save load
""".split()

#: Tensor methods commonly called by PyTorch programs.
TENSOR_METHODS = """
abs abs_ acos add add_ addcmul addcmul_ addcdiv addcdiv_ all allclose amax amin any argmax argmin argsort atan2
backward bernoulli_ bmm bool ceil chunk clamp clamp_ clamp_min clone contiguous copy_ cos cpu cuda cumsum
detach diag diagonal diff dim div div_ double eq equal exp exp_ expand expand_as fill_ flatten flip float floor
gather ge gt half index_add index_add_ index_copy index_fill index_fill_ index_put index_select int is_contiguous
is_floating_point isnan item kthvalue le log log_ log_softmax logical_not long lt masked_fill masked_fill_
masked_scatter matmul max mean median min mm mul mul_ narrow ne neg new_full new_ones new_tensor new_zeros
nonzero normal_ numel numpy permute pow prod reciprocal relu repeat repeat_interleave requires_grad_ reshape
round rsqrt scatter scatter_ scatter_add scatter_add_ select sigmoid sign sin size softmax sort split sqrt
square squeeze squeeze_ std sub sub_ sum t t_ tanh to tolist topk transpose transpose_ tril triu type
type_as unbind unique unsqueeze unsqueeze_ var view view_as where zero_ uniform_ exponential_ random_
""".split()


def test_common_torch_functions_resolve():
    missing = [name for name in TORCH_FUNCTIONS if not callable(getattr(torch, name, None))]
    assert not missing, f"torch.* names without a mapping: {missing}"


def test_common_tensor_methods_resolve():
    x = gg.ones((2, 3))
    missing = [name for name in TENSOR_METHODS if not hasattr(x, name)]
    assert not missing, f"Tensor methods missing: {missing}"


def test_legacy_constructors_and_typed_tensor_classes():
    assert torch.Tensor(3, 4).shape == (3, 4) and torch.Tensor(3, 4).dtype == gg.float32
    assert torch.Tensor([1, 2]).dtype == gg.float32 and torch.LongTensor([1, 2]).dtype == gg.int64
    assert torch.FloatTensor(2).shape == (2,) and torch.BoolTensor([True]).dtype == gg.bool_
    x = gg.ones(2)
    assert isinstance(x, torch.Tensor) and isinstance(x, torch.FloatTensor) and not isinstance(x, torch.LongTensor)
    assert issubclass(gg.Tensor, torch.Tensor) and torch.Tensor.add is gg.Tensor.add
    assert x.type(torch.LongTensor).dtype == gg.int64 and x.type("torch.DoubleTensor").dtype == gg.float64
    assert torch.nn.Parameter(torch.Tensor(2, 3)).shape == (2, 3)
    assert torch.Size([2, 3]) == (2, 3) and torch.Size([2, 3]).numel() == 6
    assert x.is_cuda is False and x.is_cpu is True


def test_torch_functions_with_the_method_meaning():
    x = gg.tensor(np.arange(12.0).reshape(3, 4))
    assert torch.std(x).item() == pytest.approx(np.arange(12.0).std(ddof=1))
    assert torch.var(x, 1, unbiased=False).tolist() == pytest.approx(np.arange(12.0).reshape(3, 4).var(1).tolist())
    assert torch.transpose(x, 0, 1).shape == (4, 3) and [p.shape for p in torch.split(x, 3, 1)] == [(3, 3), (3, 1)]
    assert torch.equal(x, x.clone()) is True and torch.max(x, 1).indices.tolist() == [3, 3, 3]
    assert [r.tolist() for r in torch.where(x > 9)] == [[2, 2], [2, 3]]
    assert torch.range(0, 2).tolist() == [0.0, 1.0, 2.0] and torch.range(0, 2).dtype == gg.float32
    assert torch.special.expit(gg.zeros(1)).item() == 0.5


def test_integer_promotion_gives_the_default_float():
    i = torch.arange(4)
    assert (i / 2).dtype == torch.float32 and (i * 0.5).dtype == torch.float32 and i.float().mean().dtype == torch.float32
    assert torch.exp(i).dtype == torch.float32 and (i.sqrt()).dtype == torch.float32 and (i + 1).dtype == torch.int64


def test_float64_input_into_a_float32_layer_says_how_to_fix_it():
    layer = torch.nn.Linear(3, 2)
    with pytest.raises(gg.DTypeError, match="float64.*float32"):
        layer(torch.ones(1, 3, dtype=torch.float64))
    with pytest.raises(gg.DTypeError, match="float64.*float32"):
        torch.nn.Conv2d(1, 1, 3)(torch.ones(1, 1, 4, 4, dtype=torch.float64))
    assert layer.double()(torch.ones(1, 3, dtype=torch.float64)).dtype == torch.float64


def test_small_torch_functions_and_module_aliases():
    y = gg.tensor([[0.0, 1.0, 4.0], [1.0, 1.0, 1.0]])
    assert torch.trapezoid(y).tolist() == [3.0, 2.0] and torch.trapz(y, dx=2.0).tolist() == [6.0, 4.0]
    assert torch.cumulative_trapezoid(y).tolist() == [[0.5, 3.0], [1.0, 2.0]]
    assert [c.tolist() for c in torch.unravel_index(gg.tensor([5, 7]), (3, 4))] == [[1, 1], [1, 3]]
    assert torch.sgn(gg.tensor([-2.0, 0.0])).tolist() == [-1.0, 0.0] and torch.real(y) is y
    state = torch.get_rng_state()
    first = torch.rand(3)
    torch.set_rng_state(state)
    assert torch.rand(3).tolist() == first.tolist()
    model = torch.nn.Linear(2, 2)
    assert torch.compile(model) is model and torch.poisson(torch.ones(4)).shape == (4,)
    x = gg.tensor(np.arange(10.0).reshape(2, 5))
    assert x.unfold(1, 2, 2).shape == (2, 2, 2) and x.stride() == (5, 1) and x.nbytes == 80

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = torch.nn.Buffer(torch.ones(2))
            self.scratch = torch.nn.Buffer(torch.zeros(1), persistent=False)
            self.fc = torch.nn.LazyLinear(3)

    m = Model()
    assert list(m.state_dict()) == ["kept"] and m.fc(torch.ones(2, 5)).shape == (2, 3)
    assert list(torch.nn.DataParallel(torch.nn.Linear(2, 2)).state_dict()) == ["module.weight", "module.bias"]
    assert torch.nn.SyncBatchNorm(3)(torch.ones(2, 3, 4, 4)).shape == (2, 3, 4, 4)
    assert torch.nn.NLLLoss2d is torch.nn.NLLLoss and torch.nn.RNNBase is not None


def test_mixed_precision_backends_and_runtime_switches_run_as_written(tmp_path):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.nn.Linear(2, 2)(torch.ones(1, 2))
    assert y.dtype == torch.float32
    with torch.amp.autocast(device_type="cuda", dtype=torch.float16, enabled=False):
        pass
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.numpy().copy()
    scaler.scale(model(torch.ones(3, 2)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert not np.allclose(before, model.weight.numpy())
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    assert torch.backends.cudnn.benchmark and not torch.backends.mps.is_available()
    torch.set_float32_matmul_precision("high")
    assert torch.get_float32_matmul_precision() == "high"
    torch.use_deterministic_algorithms(True)
    assert torch.are_deterministic_algorithms_enabled()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    assert torch.get_num_threads() == 1
    torch.set_num_threads(threads)
    assert torch.finfo(torch.float32).eps == np.finfo(np.float32).eps and torch.iinfo(torch.int64).max == 2 ** 63 - 1
    assert torch.einsum("ij,jk->ik", [torch.ones(2, 3), torch.ones(3, 2)]).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    picks = torch.multinomial(torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]), 2)
    assert picks.shape == (2, 2) and all(len(set(row)) == 2 for row in picks.tolist())
    assert torch.cuda.is_bf16_supported() is False and "bfloat16" in str(torch.bfloat16)


def test_save_and_load_a_whole_module(tmp_path):
    path = str(tmp_path / "model.pt")
    model = torch.nn.Linear(2, 3)
    torch.save(model, path)
    with pytest.raises(RuntimeError, match="weights_only=False"):
        torch.load(path)
    again = torch.load(path, weights_only=False)
    assert np.array_equal(again.weight.numpy(), model.weight.numpy())
    torch.save(model.state_dict(), path)
    assert list(torch.load(path, weights_only=True)) == ["weight", "bias"]


def test_save_and_load_through_an_open_file_or_a_buffer(tmp_path):
    import io

    model = torch.nn.Linear(2, 3)
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer)
    assert list(state) == ["weight", "bias"] and np.array_equal(state["weight"].numpy(), model.weight.numpy())
    path = tmp_path / "data.pt"
    with open(path, "wb") as f:                        # (the sine-wave example's torch.save(data, open(...)))
        torch.save({"x": np.arange(6.0).reshape(2, 3), "step": 4}, f)
    with open(path, "rb") as f:
        loaded = torch.load(f)
    assert loaded["step"] == 4 and loaded["x"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    buffer = io.BytesIO()
    torch.save(model, buffer)                          # a whole module: pickled, loads with weights_only=False
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="weights_only=False"):
        torch.load(buffer)
    buffer.seek(0)
    assert np.array_equal(torch.load(buffer, weights_only=False).bias.numpy(), model.bias.numpy())


def test_the_accelerator_api_of_recent_examples():
    # pytorch/examples pick their device this way since 2025
    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    assert use_accel == torch.cuda.is_available()
    if not use_accel:
        assert device == torch.device("cpu") and torch.accelerator.current_accelerator() is None
        assert torch.accelerator.device_count() == 0 and torch.accelerator.current_device_index() == -1
        torch.accelerator.synchronize()
        with torch.accelerator.device_index(None):
            pass
    model = torch.nn.Linear(2, 1).to(device)
    assert model(torch.ones(3, 2, device=device)).shape == (3, 1)


class _Net(torch.nn.Module):  # (module level: pickled by name)
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.rnn = torch.nn.LSTM(4, 4)
        self.act = torch.nn.functional.relu
        self.head = torch.nn.Linear(4, 3)

    def forward(self, t):
        return self.head(self.act(self.rnn(self.embed(t))[0]))


def test_a_whole_model_loads_weights_only_with_its_classes_allowed(tmp_path):
    # the word-language-model example: torch.save(model, f), then torch.load(f) inside
    # torch.serialization.safe_globals([...its classes, by torch.nn.modules.<file>.<Class> paths...])
    path = tmp_path / "model.pt"
    model = _Net()
    with open(path, "wb") as f:
        torch.save(model, f)
    with pytest.raises(RuntimeError, match="_Net.*weights_only=False"):
        torch.load(path)
    allowed = [_Net, torch.nn.modules.sparse.Embedding, torch.nn.modules.rnn.LSTM, torch.nn.functional.relu,
               torch.nn.modules.linear.Linear]
    with torch.serialization.safe_globals(allowed):
        assert torch.serialization.get_safe_globals() == allowed
        with open(path, "rb") as f:
            again = torch.load(f)
    assert torch.serialization.get_safe_globals() == []
    again.rnn.flatten_parameters()  # (PyTorch's cuDNN packing: nothing to do)
    t = torch.tensor([[1, 2, 3]])
    np.testing.assert_array_equal(again(t).numpy(), model(t).numpy())
    with pytest.raises(RuntimeError, match="Linear"):  # one class short: refused, named
        with torch.serialization.safe_globals(allowed[:-1]):
            torch.load(path)
    torch.serialization.add_safe_globals(allowed)
    try:
        assert isinstance(torch.load(path), _Net)
    finally:
        torch.serialization.clear_safe_globals()
    assert torch.nn.modules.dropout.Dropout is torch.nn.Dropout and torch.nn.modules.loss._Loss is torch.nn._Loss
    assert torch.nn.modules.linear.NonDynamicallyQuantizableLinear is torch.nn.Linear


def test_data_is_a_detached_tensor_sharing_the_storage():
    # PyTorch programs' .data idioms (the regression and word-language-model examples, DCGAN's
    # weights_init, old MNIST code): a tensor cut out of autograd, writing through to the parameter
    layer = torch.nn.Linear(4, 3)
    weight = layer.weight
    assert isinstance(weight.data, torch.Tensor) and not weight.data.requires_grad
    assert np.shares_memory(weight.data.numpy(), weight.numpy())
    weight.data.normal_(0.0, 0.02)
    layer.bias.data.fill_(0)
    assert layer.bias.tolist() == [0.0, 0.0, 0.0] and abs(float(weight.std())) < 0.1
    x = torch.randn(5, 4)
    loss = layer(x).pow(2).sum()
    loss.backward()
    before = weight.detach().clone()
    weight.data.add_(-0.1 * weight.grad)                       # the manual SGD step
    np.testing.assert_allclose(weight.numpy(), (before - 0.1 * weight.grad).numpy(), rtol=1e-6)
    layer.bias.data = layer.bias.data + 1                      # rebinding the storage
    assert layer.bias.tolist() == [1.0, 1.0, 1.0] and layer.bias.requires_grad
    out = layer(x)
    pred = out.data.max(1, keepdim=True)[1]                    # (indices, as torch's max(dim) gives)
    assert pred.shape == (5, 1) and pred.tolist() == out.argmax(1, keepdim=True).tolist()
    assert isinstance(loss.data.item(), float) and out.data.numpy().shape == (5, 3)
    assert f"{loss.data:.3f}" == f"{loss.item():.3f}" and f"{torch.tensor(2.5):+.1f}" == "+2.5"


def test_graphgrad_code_keeps_data_as_the_array():
    import graphgrad as gg

    saved = gg.Tensor._data_as_torch
    gg.Tensor._data_as_torch = False   # (as in a program that never imports graphgrad.compat.torch)
    try:
        t = gg.tensor([1.0, 2.0])
        assert isinstance(t.data, np.ndarray) and t.data is t.numpy()
    finally:
        gg.Tensor._data_as_torch = saved


@pytest.mark.parametrize("layer, args", [("LSTM", (4, 4)), ("GRU", (4, 4)), ("RNN", (4, 4)), ("LSTMCell", (4, 4)),
                                         ("GRUCell", (4, 4)), ("RNNCell", (4, 4)), ("MultiheadAttention", (4, 2)),
                                         ("TransformerEncoderLayer", (4, 2)), ("TransformerDecoderLayer", (4, 2))])
def test_layers_take_pytorchs_factory_arguments(layer, args):
    # minGPT's torch.nn.MultiheadAttention(..., device=device, dtype=dtype)
    made = getattr(torch.nn, layer)(*args, device="cpu", dtype=torch.float64)
    assert {p.dtype for p in made.parameters()} == {np.dtype(np.float64)}
    assert {p.dtype for p in getattr(torch.nn, layer)(*args, device=torch.device("cpu")).parameters()} == \
        {np.dtype(np.float32)}


def test_torch_data_submodules_are_attributes():
    sampler = torch.utils.data.distributed.DistributedSampler(list(range(10)), num_replicas=3, rank=1, shuffle=False)
    assert list(sampler) == [1, 4, 7, 0]  # padded to 12 by wrapping around, as PyTorch
    assert torch.utils.data.dataloader.default_collate is torch.utils.data.default_collate


def test_more_torch_functions_as_pytorch():
    """Values from PyTorch 2.13."""
    assert isinstance(torch.float32, torch.dtype) and not isinstance(1.0, torch.dtype)
    assert torch.result_type(torch.tensor([1]), 1.0) == torch.float32
    assert torch.result_type(torch.ones(2), torch.ones(2, dtype=torch.float64)) == torch.float64
    assert not torch.can_cast(torch.float32, torch.int32) and torch.can_cast(torch.int64, torch.float16)
    np.testing.assert_allclose(torch.hann_window(4).numpy(), [0.0, 0.5, 1.0, 0.5], atol=1e-7)
    np.testing.assert_allclose(torch.hann_window(4, periodic=False).numpy(), [0.0, 0.75, 0.75, 0.0], atol=1e-7)
    np.testing.assert_allclose(torch.hamming_window(3).numpy(), [0.08, 0.77, 0.77], atol=1e-6)
    assert torch.gradient(torch.tensor([1.0, 4.0, 9.0, 16.0]))[0].tolist() == [3.0, 4.0, 6.0, 7.0]
    assert torch.put(torch.zeros(2, 2), torch.tensor([0, -1]), torch.tensor([1.0, 2.0])).tolist() == [[1, 0], [0, 2]]
    np.testing.assert_allclose(torch.i0(torch.tensor([0.5])).numpy(), [1.0634834], rtol=1e-6)
    assert torch.fix(torch.tensor([-1.5, 1.5])).tolist() == [-1.0, 1.0]
    assert tuple(torch.vmap(lambda x: x * 2)(torch.ones(3, 2)).shape) == (3, 2)
    assert torch.scalar_tensor(3).dtype == torch.float32 and torch.asarray([1, 2]).dtype == torch.int64
    assert [t.shape[0] for t in torch.split_with_sizes(torch.ones(5), [2, 3])] == [2, 3]


def test_torch_dynamo_switches_are_accepted():
    """Libraries (einops) register functions with torch._dynamo; programs set its config switches."""
    torch._dynamo.config.verbose = True
    assert torch._dynamo.config.verbose is True
    f = torch._dynamo.allow_in_graph(abs)
    assert f is abs and torch._dynamo.disable(abs) is abs and not torch._dynamo.is_compiling()
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: x * 2, dynamic=True, fullgraph=True)
    assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]


def test_pytree_attention_backends_and_constants():
    from graphgrad.compat.torch.nn.attention import SDPBackend, sdpa_kernel
    from graphgrad.compat.torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        out = torch.nn.functional.scaled_dot_product_attention(torch.ones(1, 2, 4), torch.ones(1, 2, 4), torch.ones(1, 2, 4))
    assert tuple(out.shape) == (1, 2, 4)
    tree = {"a": [torch.ones(1), (torch.zeros(2), 3)], "b": None}
    leaves, spec = tree_flatten(tree)
    assert len(leaves) == 3 and spec.num_leaves == 3  # None is a node without leaves, as PyTorch's
    doubled = tree_map(lambda x: x * 2, tree)
    assert doubled["a"][0].tolist() == [2.0] and doubled["a"][1][1] == 6 and doubled["b"] is None
    assert tree_unflatten(leaves, spec)["a"][1][1] == 3
    assert torch.pi == math.pi and torch.inf == math.inf and math.isnan(torch.nan)


def test_tensors_shapes_and_grad_fns_print_as_in_pytorch():
    """What the PyTorch quickstart prints: shapes as torch.Size, PyTorch's grad_fn names and
    dtype=torch.float64 in a tensor's repr (values checked against PyTorch 2.13's output)."""
    x = torch.ones(3, 4)
    assert str(x.shape) == "torch.Size([3, 4])" and x.shape == (3, 4) and str(x.shape[1:]) == "torch.Size([4])"
    w = torch.tensor([[0.5, -0.25], [1.5, 2.0]], requires_grad=True)
    assert repr(w @ w.t()) == ("tensor([[0.3125, 0.2500],\n"
                               "        [0.2500, 6.2500]], grad_fn=<MmBackward0>)")
    assert repr((w * 2).sum()) == "tensor(7.5000, grad_fn=<SumBackward0>)"
    assert repr(torch.tensor([1.5], dtype=torch.float64)) == "tensor([1.5000], dtype=torch.float64)"
    assert repr(torch.ones(2, dtype=torch.int32)) == "tensor([1, 1], dtype=torch.int32)"


def test_norm_layers_take_bias_and_print_as_in_pytorch():
    """PyTorch 2's keyword-only bias= of BatchNorm and GroupNorm, and their reprs (PyTorch 2.13's text)."""
    assert repr(torch.nn.BatchNorm2d(3, bias=False)) == \
        "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    assert repr(torch.nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert repr(torch.nn.LayerNorm(4, bias=False)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)"
    x = torch.randn(2, 4, 3, 3)
    for layer in (torch.nn.GroupNorm(2, 4, bias=False), torch.nn.BatchNorm2d(4, bias=False)):
        assert layer.bias is None and layer(x).shape == (2, 4, 3, 3)
        assert [name for name, _ in layer.named_parameters()] == ["weight"]
