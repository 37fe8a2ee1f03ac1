"""Write the PyTorch-agreement corpus for layers (run by hand, with PyTorch installed):

    python tests/oracle/generate_layers.py

For every case of ``CASES`` it builds the ``torch.nn`` layer of the same name (float64, weights
drawn by PyTorch from a fixed seed), runs it on a fixed input in training mode, back-propagates a
fixed upstream gradient, and stores into ``layers_corpus.npz``:

    <case>/state/<key>   the layer's state_dict before the call (what graphgrad loads)
    <case>/x             the input;  <case>/y  the output;  <case>/gy  the upstream gradient
    <case>/grad/x        the input gradient;  <case>/grad/<param>  each parameter's gradient
    <case>/after/<key>   the state_dict after the training call(s) (running statistics)
    <case>/eval_y        the output in eval mode after those calls (layers with ``eval``)

``tests/nn/test_layers_oracle.py`` replays the cases with graphgrad; it needs no PyTorch. graphgrad
is not imported here.
"""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "layers_corpus.npz")

#: name -> (layer class name in torch.nn and gg.nn, constructor kwargs, input shape, options).
#: options: ``calls`` (training-mode forward calls before the recorded one, default 0), ``eval``
#: (also record the eval-mode output).
CASES = {
    "linear": ("Linear", dict(in_features=5, out_features=3), (4, 5), {}),
    "linear_nobias_3d": ("Linear", dict(in_features=4, out_features=2, bias=False), (2, 3, 4), {}),
    "conv2d": ("Conv2d", dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1), (2, 3, 7, 7), {}),
    "conv2d_groups_dilation_same": ("Conv2d", dict(in_channels=4, out_channels=6, kernel_size=3, padding="same",
                                                   dilation=2, groups=2), (2, 4, 6, 6), {}),
    "conv2d_rect_nobias": ("Conv2d", dict(in_channels=2, out_channels=3, kernel_size=(2, 3), stride=(1, 2),
                                          padding=(1, 0), bias=False), (1, 2, 5, 6), {}),
    "conv2d_reflect": ("Conv2d", dict(in_channels=2, out_channels=3, kernel_size=3, padding=1,
                                      padding_mode="reflect"), (2, 2, 5, 5), {}),
    "conv2d_circular": ("Conv2d", dict(in_channels=2, out_channels=2, kernel_size=3, padding=(1, 2),
                                       padding_mode="circular"), (1, 2, 4, 5), {}),
    "conv1d_replicate": ("Conv1d", dict(in_channels=2, out_channels=3, kernel_size=3, padding=2, dilation=2,
                                        padding_mode="replicate"), (2, 2, 7), {}),
    "conv_transpose2d": ("ConvTranspose2d", dict(in_channels=4, out_channels=3, kernel_size=3, stride=2, padding=1,
                                                 output_padding=1), (2, 4, 4, 4), {}),
    "conv_transpose2d_groups_dilation": ("ConvTranspose2d", dict(in_channels=4, out_channels=6, kernel_size=2,
                                                                 groups=2, dilation=2, stride=(2, 1)),
                                         (1, 4, 3, 3), {}),
    "batch_norm2d": ("BatchNorm2d", dict(num_features=3), (4, 3, 3, 3), {"calls": 1, "eval": True}),
    "batch_norm2d_momentum": ("BatchNorm2d", dict(num_features=2, momentum=0.3, eps=1e-3), (3, 2, 2, 4),
                              {"calls": 2, "eval": True}),
    "batch_norm1d": ("BatchNorm1d", dict(num_features=4), (6, 4), {"calls": 1, "eval": True}),
    "batch_norm1d_3d_cumulative": ("BatchNorm1d", dict(num_features=3, momentum=None), (4, 3, 5),
                                   {"calls": 2, "eval": True}),
    "batch_norm1d_no_affine": ("BatchNorm1d", dict(num_features=3, affine=False), (5, 3), {"eval": True}),
    "batch_norm2d_no_running": ("BatchNorm2d", dict(num_features=2, track_running_stats=False), (3, 2, 2, 2),
                                {"eval": True}),
    "layer_norm": ("LayerNorm", dict(normalized_shape=5), (3, 4, 5), {}),
    "rms_norm": ("RMSNorm", dict(normalized_shape=5), (3, 4, 5), {}),
    "rms_norm_2d_eps": ("RMSNorm", dict(normalized_shape=(4, 5), eps=1e-3), (2, 3, 4, 5), {}),
    "prelu_channels": ("PReLU", dict(num_parameters=3, init=0.1), (2, 3, 4), {}),
    "softmax2d": ("Softmax2d", dict(), (2, 3, 2, 2), {}),
    "layer_norm_2d": ("LayerNorm", dict(normalized_shape=(4, 5), eps=1e-3), (2, 3, 4, 5), {}),
    "group_norm": ("GroupNorm", dict(num_groups=2, num_channels=4), (3, 4, 2, 3), {}),
    "conv3d": ("Conv3d", dict(in_channels=2, out_channels=3, kernel_size=(2, 3, 2), stride=(1, 2, 1), padding=1),
               (2, 2, 3, 5, 4), {}),
    "conv3d_replicate_groups": ("Conv3d", dict(in_channels=4, out_channels=2, kernel_size=3, padding=1, groups=2,
                                               padding_mode="replicate", bias=False), (1, 4, 3, 3, 4), {}),
    "conv_transpose3d": ("ConvTranspose3d", dict(in_channels=3, out_channels=2, kernel_size=2, stride=2, padding=1,
                                                 output_padding=1), (1, 3, 2, 3, 2), {}),
    "batch_norm3d": ("BatchNorm3d", dict(num_features=3), (2, 3, 2, 3, 2), {"calls": 1, "eval": True}),
    "instance_norm1d": ("InstanceNorm1d", dict(num_features=3), (2, 3, 6), {}),
    "instance_norm2d_affine_tracked": ("InstanceNorm2d", dict(num_features=3, affine=True, track_running_stats=True,
                                                              momentum=0.2), (2, 3, 3, 4), {"calls": 1, "eval": True}),
    "instance_norm3d_tracked": ("InstanceNorm3d", dict(num_features=2, track_running_stats=True), (2, 2, 2, 3, 2),
                                {"eval": True}),
    "local_response_norm": ("LocalResponseNorm", dict(size=3, alpha=0.1, beta=0.6, k=1.5), (2, 5, 3, 3), {}),
}


def _randomize_affine(torch, layer) -> None:
    """Norm layers start at weight 1, bias 0: draw them so the test sees them used."""
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if type(layer).__name__.startswith(("BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm")):
                p.copy_(torch.rand_like(p) + 0.5 if name == "weight" else torch.randn_like(p))


def run_case(torch, name: str) -> dict:
    cls_name, kwargs, shape, options = CASES[name]
    torch.manual_seed(sum(map(ord, name)))
    layer = getattr(torch.nn, cls_name)(**kwargs).double()
    _randomize_affine(torch, layer)
    rng = np.random.default_rng(sum(map(ord, name)))
    arrays = {f"state/{k}": v.detach().numpy().copy() for k, v in layer.state_dict().items()}
    for i in range(options.get("calls", 0)):
        arrays[f"warmup{i}"] = rng.standard_normal(shape)
        layer(torch.tensor(arrays[f"warmup{i}"]))
    x = rng.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    y = layer(tx)
    gy = rng.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(gy))
    arrays.update(x=x, y=y.detach().numpy().copy(), gy=gy)
    arrays["grad/x"] = tx.grad.numpy().copy()
    for k, p in layer.named_parameters():
        arrays[f"grad/{k}"] = p.grad.numpy().copy()
    arrays.update({f"after/{k}": v.detach().numpy().copy() for k, v in layer.state_dict().items()})
    if options.get("eval"):
        layer.eval()
        with torch.no_grad():
            arrays["eval_y"] = layer(torch.tensor(x)).numpy().copy()
    return arrays


def main() -> None:
    import torch

    out = {"torch_version": np.array(torch.__version__)}
    for name in CASES:
        for key, value in run_case(torch, name).items():
            out[f"{name}/{key}"] = np.asarray(value)
    np.savez_compressed(CORPUS, **out)
    print(f"wrote {len(CASES)} cases ({len(out)} arrays, {os.path.getsize(CORPUS)} bytes) to {CORPUS}")


if __name__ == "__main__":
    main()
