"""Rank script: DistributedDataParallel against one process training on the whole batch (float64,
1e-10): an MLP with a tied and an unused parameter, a CNN, eager and compiled by gg.function,
SGD with momentum, Adam with a scheduler, gradient accumulation with no_sync(). Run with 2 or 3
ranks; rank 0 prints "ok <n> ranks" when every rank got through."""
import numpy as np

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad import nn

gg.set_default_dtype(gg.float64)
dist.init()
r, n = dist.rank(), dist.world_size()
ROWS, STEPS = 4, 3
data = np.random.default_rng(7)
X_IMG = data.standard_normal((ROWS * n, 2, 6, 6))
X_VEC = X_IMG.reshape(ROWS * n, -1)[:, :10]
Y = data.integers(0, 3, ROWS * n)
mine = slice(r * ROWS, (r + 1) * ROWS)


class TiedMLP(nn.Module):
    """The hidden layer is applied twice (a tied parameter); ``spare`` is never used."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(10, 8)
        self.hidden = nn.Linear(8, 8)
        self.spare = nn.Linear(8, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        h = self.inp(x).tanh()
        h = self.hidden(self.hidden(h).tanh()).tanh()
        return self.out(h)


def cnn():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 3))


def close(actual, expected, what):
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-10, err_msg=f"rank {r}: {what}")


def run(make_model, x_all, make_opt, compiled=False, accumulate=False, scheduler=None):
    gg.manual_seed(100 + r)                    # every rank starts from different values...
    model = dist.DistributedDataParallel(make_model(), bucket_mb=0.0005)   # ...rank 0's are broadcast
    reference = make_model()
    reference.load_state_dict(model.module.state_dict())
    pairs = []
    for net, x, y in ((model, x_all[mine], Y[mine]), (reference, x_all, Y)):
        opt = make_opt(net.parameters())
        sched = scheduler(opt) if scheduler else None

        def step(xb, yb, net=net, opt=opt, ddp=net is model):
            opt.zero_grad()
            if accumulate:                     # two micro-batches: the first without communication
                half = len(xb) // 2
                context = net.no_sync() if ddp else None
                if context:
                    with context:
                        (gg.cross_entropy(net(xb[:half]), yb[:half]) * 0.5).backward()
                else:
                    (gg.cross_entropy(net(xb[:half]), yb[:half]) * 0.5).backward()
                loss = gg.cross_entropy(net(xb[half:]), yb[half:]) * 0.5
            else:
                loss = gg.cross_entropy(net(xb), yb)
            loss.backward()
            opt.step()
            return loss

        run_step = gg.function(step) if compiled else step
        pairs.append((net, opt, sched, run_step, gg.tensor(x), gg.tensor(y)))
    for _ in range(STEPS):
        for net, opt, sched, run_step, x, y in pairs:
            if accumulate and net is reference:   # one process: the same micro-batches, every rank's
                opt.zero_grad()
                for part in range(n):
                    xs, ys = x[part * ROWS:(part + 1) * ROWS], y[part * ROWS:(part + 1) * ROWS]
                    half = ROWS // 2
                    (gg.cross_entropy(net(xs[:half]), ys[:half]) * (0.5 / n)).backward()
                    (gg.cross_entropy(net(xs[half:]), ys[half:]) * (0.5 / n)).backward()
                opt.step()
            else:
                run_step(x, y)
            if sched:
                sched.step()
    for (name, p), (_, q) in zip(model.module.named_parameters(), reference.named_parameters()):
        close(p.numpy(), q.numpy(), f"{name} after {STEPS} steps")
        if p.grad is None or q.grad is None:
            assert p.grad is None and q.grad is None, f"rank {r}: {name} has a gradient on one side only"
    return model


sgd = lambda params: gg.optim.SGD(params, lr=0.1, momentum=0.9)
adam = lambda params: gg.optim.Adam(params, lr=0.01)
step_lr = lambda opt: gg.optim.StepLR(opt, step_size=1, gamma=0.5)

model = run(TiedMLP, X_VEC, sgd)
assert model.module.spare.weight.grad is None            # unused everywhere: no gradient, as in one process
run(TiedMLP, X_VEC, adam, scheduler=step_lr)
run(TiedMLP, X_VEC, sgd, compiled=True)
run(TiedMLP, X_VEC, sgd, accumulate=True)
model = run(cnn, X_IMG, adam)
stats = model.last_stats   # buckets started while backward still ran (communication overlapped)
assert stats["buckets"] > 1 and stats["started_during_backward"] >= 1, stats
run(cnn, X_IMG, sgd, compiled=True)

# a model whose shape differs on one rank: the broadcast at construction names the parameter
try:
    dist.DistributedDataParallel(nn.Linear(4, 3 + (r == 1)))
except dist.DistributedError as error:
    assert "parameter weight" in str(error) and "(3, 4)" in str(error) and "(4, 4)" in str(error), error
else:
    raise AssertionError("no error for parameters of different shapes")

arrived = int(dist.all_reduce(gg.tensor([1])).item())
if r == 0:
    print(f"ok {arrived} ranks", flush=True)
