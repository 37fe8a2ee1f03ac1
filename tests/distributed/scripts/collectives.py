"""Rank script: semantics of the collectives and their gradients, eagerly, in a Session graph and in
gg.function. Run with 2 or 3 ranks; every rank asserts; rank 0 prints "ok <n> ranks" when all got through."""
import numpy as np

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad.distributed.testing import check_grad_distributed

dist.init()
r, n = dist.rank(), dist.world_size()
close = np.testing.assert_allclose

# ---- values ------------------------------------------------------------------------------------------
local = np.arange(6.0).reshape(2, 3) * (r + 1) - r          # differs per rank
everyone = [np.arange(6.0).reshape(2, 3) * (q + 1) - q for q in range(n)]
x = gg.tensor(local, dtype=gg.float64)
close(dist.all_reduce(x, "sum").numpy(), sum(everyone))
close(dist.all_reduce(x, "mean").numpy(), sum(everyone) / n)
close(dist.all_reduce(x, "max").numpy(), np.max(everyone, axis=0))
close(dist.all_reduce(x, "min").numpy(), np.min(everyone, axis=0))
assert dist.all_reduce(gg.tensor(np.array([r, 1], np.int64))).tolist() == [n * (n - 1) // 2, n]
src = n - 1
close(dist.broadcast(x, src=src).numpy(), everyone[src])
parts = [np.full((q + 1, 2), float(q)) for q in range(n)]                # unequal lengths, rank order
close(dist.all_gather(gg.tensor(parts[r])).numpy(), np.concatenate(parts))
rows = np.arange(7 * 2, dtype=np.float64).reshape(7, 2)
blocks = np.array_split(rows * n, n)
close(dist.reduce_scatter(gg.tensor(rows)).numpy(), blocks[r])
close(dist.all_reduce(x, async_op=True).wait().numpy(), sum(everyone))
work = dist.all_gather(gg.tensor(parts[r]), async_op=True)
close(work.wait().numpy(), np.concatenate(parts))
assert work.is_completed()
f32 = dist.all_reduce(gg.tensor(local.astype(np.float32)), "mean")
assert f32.dtype == gg.float32
h16 = dist.all_reduce(gg.tensor(local.astype(np.float16)), "sum")
assert h16.dtype == gg.float16
close(h16.numpy().astype(np.float64), sum(everyone), rtol=1e-2)
dist.barrier()

# ---- gradients (the objective is the sum over ranks of what each rank differentiates) -----------------
w = gg.tensor(local, dtype=gg.float64, requires_grad=True)
(dist.all_reduce(w, "sum") * (r + 1)).sum().backward()
close(w.grad.numpy(), np.full((2, 3), n * (n + 1) / 2))
distinct = gg.tensor(np.random.default_rng(r).standard_normal((3, 4)))   # distinct values: max/min differentiable
for op in ("sum", "mean", "max", "min"):
    check_grad_distributed(lambda t, op=op: dist.all_reduce(t, op) * 1.5, distinct)
check_grad_distributed(lambda t: dist.broadcast(t.tanh(), src=src), gg.tensor(local))
check_grad_distributed(lambda t: dist.all_gather(t * t), gg.tensor(parts[r] + 0.5))
check_grad_distributed(lambda t: dist.reduce_scatter(t.sin()), gg.tensor(rows / 7))
check_grad_distributed(lambda t: dist.all_reduce(dist.all_gather(t).sum(axis=0)) ** 2, gg.tensor(parts[r] + 0.1))

# ---- static graph: Session.run executes the communication ----------------------------------------------
g = gg.Graph()
with g.as_default():
    p = gg.placeholder(gg.float64, (2, 3), name="p")
    total = dist.all_reduce(p, "sum")
    gathered = dist.all_gather(p)
    first = dist.broadcast(p, src=src)
    loss = (total * (r + 1)).sum()
    (dp,) = gg.gradients(loss, [p])
sess = gg.Session(graph=g)
t_v, g_v, b_v, dp_v = sess.run([total, gathered, first, dp], {p: local})
close(t_v, sum(everyone))
close(g_v, np.concatenate(everyone))
close(b_v, everyone[src])
close(dp_v, np.full((2, 3), n * (n + 1) / 2))

# symbolic gradients through all_gather of unequal parts and broadcast equal the eager ones
g = gg.Graph()
with g.as_default():
    p = gg.placeholder(gg.float64, (r + 2, 3), name="p")
    q = gg.placeholder(gg.float64, (2, 3), name="q")
    loss = (dist.all_gather(p.sin()) ** 2).sum() * (r + 1) + (dist.broadcast(q.sin(), src=src) * (r + 1)).sum()
    dp, dq = gg.gradients(loss, [p, q])
pv = np.random.default_rng(r).standard_normal((r + 2, 3))
dp_v, dq_v = gg.Session(graph=g).run([dp, dq], {p: pv, q: local})
pe, qe = gg.tensor(pv, requires_grad=True), gg.tensor(local, requires_grad=True)
((dist.all_gather(pe.sin()) ** 2).sum() * (r + 1) + (dist.broadcast(qe.sin(), src=src) * (r + 1)).sum()).backward()
close(dp_v, pe.grad.numpy(), rtol=1e-12)
close(dq_v, qe.grad.numpy(), rtol=1e-12)
close(dq_v, np.cos(local) * n * (n + 1) / 2 if r == src else np.zeros_like(local))
assert dist.all_reduce(gg.tensor(2.0)).shape == ()   # 0-d tensors keep their shape

# ---- gg.function: a compiled step containing collectives -------------------------------------------------
@gg.function
def step(a):
    return dist.all_reduce(a * 2.0, "mean"), dist.all_gather(a + 1.0)

for _ in range(2):
    mean, cat = step(gg.tensor(local))
    close(mean.numpy(), 2 * sum(everyone) / n)
    close(cat.numpy(), np.concatenate(everyone) + 1)
assert step.trace_count == 1

arrived = int(dist.all_reduce(gg.tensor([1])).item())  # every rank got here
if r == 0:
    print(f"ok {arrived} ranks", flush=True)
