"""Rank script: the collectives and DistributedDataParallel with tensors on the emulated device
(graphgrad/backend/emulated.py): every result stays on the device and equals the CPU's. Run with 2
ranks; rank 0 prints "ok <n> ranks" when every rank got through."""
import numpy as np

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad import nn

gg.set_default_dtype(gg.float64)
dist.init()
r, n = dist.rank(), dist.world_size()


def on_device(t, what):
    assert t.device == "emulated", f"rank {r}: {what} came back on {t.device}"
    return t.numpy()


x = gg.tensor(np.arange(6.0).reshape(2, 3) * (r + 1), device="emulated", requires_grad=True)
total = dist.all_reduce(x)
np.testing.assert_array_equal(on_device(total, "all_reduce"), np.arange(6.0).reshape(2, 3) * sum(range(1, n + 1)))
(total * total).sum().backward()
on_device(x.grad, "the gradient of all_reduce")
np.testing.assert_array_equal(on_device(dist.broadcast(x, 0), "broadcast"), np.arange(6.0).reshape(2, 3))
gathered = dist.all_gather(x)
gathered = gathered if isinstance(gathered, gg.Tensor) else gg.concatenate(list(gathered))
assert on_device(gathered, "all_gather").shape[0] == 2 * n

# DDP on the device against one process on the CPU training on the whole batch
data = np.random.default_rng(7)
X = data.standard_normal((4 * n, 5))
Y = data.integers(0, 3, 4 * n)
mine = slice(r * 4, (r + 1) * 4)


def make():
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))


gg.manual_seed(100 + r)
model = dist.DistributedDataParallel(make().to("emulated"), bucket_mb=0.0005)
reference = make()
reference.load_state_dict({k: v.numpy() for k, v in model.module.state_dict().items()})
for net, xb, yb, dev in ((model, X[mine], Y[mine], "emulated"), (reference, X, Y, "cpu")):
    opt = gg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        loss = gg.nn.functional.cross_entropy(net(gg.tensor(xb, device=dev)), gg.tensor(yb, device=dev))
        loss.backward()
        opt.step()
for p, q in zip(model.module.parameters(), reference.parameters()):
    np.testing.assert_allclose(on_device(p, "a DDP parameter"), q.numpy(), rtol=1e-10, atol=1e-12)
dist.barrier()
if r == 0:
    print(f"ok {n} ranks")
