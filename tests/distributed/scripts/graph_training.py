"""Rank script: TF1-style data parallelism (DistributedOptimizer, broadcast_variables) against
single-process training on the whole batch, collectives in Session graphs, symbolic gradients through
collectives, and a gg.function step with an explicit gradient all-reduce. Run with 2 or 3 ranks; every
rank asserts; rank 0 prints "ok <n> ranks" when all got through."""
import zlib

import numpy as np

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad.distributed import comm
from graphgrad.distributed.ops import AllGather, AllReduce, Broadcast

dist.init()
r, n = dist.rank(), dist.world_size()
STEPS, ROWS = 4, 5                       # steps of training; rows of each rank's shard


def close(actual, expected, what):
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-10, err_msg=f"rank {r}: {what}")


def same_on_every_rank(text: str, what: str) -> None:
    """Assert that every rank computed the same ``text`` (compared through a checksum)."""
    sums = comm.all_gather(np.array([zlib.crc32(text.encode())], np.int64), name=f"checksum of {what}")
    assert len(set(sums.tolist())) == 1, f"rank {r}: {what} differs between ranks: {text}"


def collective_order(sess) -> str:
    """The collectives of the session's plans (in the order they were made), each in execution order."""
    return " | ".join(f"{type(s[3].op).__name__}:{s[3].op.label}" for plan in sess._plans.values()
                      for s in plan.steps if isinstance(s[3].op, (AllReduce, Broadcast, AllGather)))


data = np.random.default_rng(123)
ALL_X = data.standard_normal((8 * n, 3, 4, 4))        # images for the CNN, flattened for the MLP
ALL_Y = data.integers(0, 3, 8 * n)
X, Y = ALL_X[:ROWS * n], ALL_Y[:ROWS * n]            # the whole batch
mine = slice(r * ROWS, (r + 1) * ROWS)


# ---- models built in the default graph from (per rank different) random values ------------------------------
def mlp(x, seed):
    rng = np.random.default_rng(seed)
    w1 = gg.Variable(rng.standard_normal((48, 8)) * 0.3, name="w1")
    b1 = gg.Variable(rng.standard_normal(8) * 0.1, name="b1")
    w2 = gg.Variable(rng.standard_normal((8, 8)) * 0.3, name="w2")
    b2 = gg.Variable(rng.standard_normal(8) * 0.1, name="b2")      # b1 and b2: same shape, different tensors
    w3 = gg.Variable(rng.standard_normal((8, 3)) * 0.3, name="w3")
    h = gg.tanh(gg.reshape(x, (-1, 48)) @ w1 + b1)
    h = gg.tanh(h @ w2 + b2)
    return h @ w3


def cnn(x, seed):
    rng = np.random.default_rng(seed)
    k = gg.Variable(rng.standard_normal((4, 3, 3, 3)) * 0.3, name="conv/w")
    c = gg.Variable(rng.standard_normal(4) * 0.1, name="conv/b")
    w = gg.Variable(rng.standard_normal((4 * 2 * 2, 3)) * 0.3, name="fc/w")
    h = gg.relu(gg.conv2d(x, k, c, padding=1))
    h = gg.max_pool2d(h, 2)
    return gg.reshape(h, (-1, 16)) @ w


def train(model, make_opt, distributed: bool, xs, ys, bucket_mb=25.0, loss_scale=None, shape=None):
    """Variables after STEPS steps of graph-mode training on (xs, ys), and the session used.

    Distributed: each rank starts from its own random values, made equal by broadcast_global_variables.
    """
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, shape or (None, 3, 4, 4), name="x")
        y = gg.placeholder(gg.int64, (shape or (None,))[:1], name="y")
        logits = model(x, seed=r if distributed else 0)
        if loss_scale is None:
            loss = gg.cross_entropy(logits, y)
        else:  # a sum over this rank's rows, divided by the global batch size
            loss = gg.cross_entropy(logits, y, reduction="sum") / loss_scale
        step = gg.Variable(0, trainable=False, name="global_step", dtype=gg.int64)
        opt = make_opt()
        if distributed:
            opt = gg.train.DistributedOptimizer(opt, op="mean" if loss_scale is None else "sum", bucket_mb=bucket_mb)
        train_op = opt.minimize(loss, global_step=step)
        init = gg.global_variables_initializer()
        sync = gg.train.broadcast_global_variables(0) if distributed else None
        variables = gg.trainable_variables()
    sess = gg.Session(graph)
    sess.run(init)
    if sync is not None:
        sess.run(sync)
    for _ in range(STEPS):
        sess.run(train_op, {x: xs, y: ys})
    assert sess.run(step) == STEPS
    return [v.numpy().copy() for v in variables], sess, opt


optimizers = {"GradientDescent": lambda: gg.train.GradientDescentOptimizer(0.3),
              "Momentum": lambda: gg.train.MomentumOptimizer(0.2, 0.9, use_nesterov=True),
              "Adam": lambda: gg.train.AdamOptimizer(0.05),
              "RMSProp": lambda: gg.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True)}
# the gradients of 5 variables: one bucket (default cap), one per gradient (0), or 4 (a 300-byte cap)
buckets = {"GradientDescent": 0.0, "Momentum": 300 / 2**20, "Adam": 25.0, "RMSProp": 25.0}
for model in (mlp, cnn):
    for name, make_opt in optimizers.items():
        if model is cnn and name == "RMSProp":
            continue
        expected, _, _ = train(model, make_opt, False, X, Y)
        got, sess, opt = train(model, make_opt, True, X[mine], Y[mine], bucket_mb=buckets[name])
        for v_got, v_expected in zip(got, expected):
            close(v_got, v_expected, f"{model.__name__} with {name}")
        assert opt.get_name() == name                       # the wrapped optimizer's
        order = collective_order(sess)
        same_on_every_rank(order, f"collective order of {model.__name__}/{name}")
        collectives = order.count("AllReduce")
        if model is mlp:
            assert collectives == {"GradientDescent": 5, "Momentum": 4, "Adam": 1, "RMSProp": 1}[name], order

# uneven shards with static shapes (5 + r rows): the compiler's memory-aware schedule looks at shapes, so it may
# order a rank's nodes differently, but never the gradient all-reduces; op="sum" of a loss divided by the global
# batch size gives the whole-batch gradient
counts = [5 + q for q in range(n)]
start = sum(counts[:r])
rows = slice(start, start + counts[r])
expected, _, _ = train(mlp, optimizers["Momentum"], False, ALL_X[:sum(counts)], ALL_Y[:sum(counts)])
got, sess, _ = train(mlp, optimizers["Momentum"], True, ALL_X[rows], ALL_Y[rows], bucket_mb=0.0,
                     loss_scale=sum(counts), shape=(counts[r], 3, 4, 4))
for v_got, v_expected in zip(got, expected):
    close(v_got, v_expected, "uneven shards")
same_on_every_rank(collective_order(sess), "collective order with uneven shards")

# ---- broadcast_variables: random values of several dtypes become rank (n-1)'s ----------------------------------
g = gg.Graph()
with g.as_default():
    rng = np.random.default_rng(r)
    a = gg.Variable(rng.standard_normal((3, 2)), name="a")
    b = gg.Variable(rng.integers(0, 100, 4), name="b", dtype=gg.int64)
    c = gg.Variable(rng.standard_normal(5).astype(np.float32), name="c")
    s = gg.Variable(float(r), name="s", dtype=gg.float64)
    untouched = gg.Variable(float(r), name="untouched", dtype=gg.float64)
    sync = gg.train.broadcast_variables([a, b, c, s], root_rank=n - 1)
sess = gg.Session(g)
before = [v.numpy().copy() for v in (a, b, c, s)]
sess.run(sync)
for v, old in zip((a, b, c, s), before):
    everyone = comm.all_gather(old[None], name=f"initial {v.base_name}")
    assert v.dtype == old.dtype
    np.testing.assert_array_equal(v.numpy(), everyone[n - 1])
assert untouched.numpy() == r

# ---- a Session graph with collectives of placeholders (several of each, one order on every rank) ------------------
local = np.arange(6.0).reshape(2, 3) * (r + 1) - r
everyone = [np.arange(6.0).reshape(2, 3) * (q + 1) - q for q in range(n)]
g = gg.Graph()
with g.as_default():
    p = gg.placeholder(gg.float64, (2, 3), name="p")
    q = gg.placeholder(gg.float64, (2, 3), name="q")
    fetches = {"sum": dist.all_reduce(p, "sum", name="sum p"), "max": dist.all_reduce(q * 2.0, "max", name="max 2q"),
               "mean": dist.all_reduce(p + q, "mean", name="mean p+q"), "gather": dist.all_gather(p, name="gather p"),
               "bcast": dist.broadcast(q, src=n - 1, name="bcast q"),
               "grouped": dist.grouped_all_reduce([p, q[0], q.sum()], "sum")}
sess = gg.Session(g)
for _ in range(2):
    got = sess.run(fetches, {p: local, q: local + 1.0})
    close(got["sum"], sum(everyone), "Session all_reduce(sum)")
    close(got["max"], 2 * (np.max(everyone, axis=0) + 1), "Session all_reduce(max)")
    close(got["mean"], sum(e + e + 1 for e in everyone) / n, "Session all_reduce(mean)")
    close(got["gather"], np.concatenate(everyone), "Session all_gather")
    close(got["bcast"], everyone[n - 1] + 1, "Session broadcast")
    close(got["grouped"][0], sum(everyone), "grouped all_reduce, 1st")
    close(got["grouped"][1], sum(e[0] + 1 for e in everyone), "grouped all_reduce, 2nd")
    close(got["grouped"][2], sum((e + 1).sum() for e in everyone), "grouped all_reduce, 3rd")
same_on_every_rank(collective_order(sess), "collective order of a Session graph")


# ---- symbolic gradients through collectives equal eager ones -------------------------------------------------
def objective(x, w):
    h = gg.tanh(x @ w)
    m = dist.all_reduce(h, "mean")
    top = dist.all_reduce(h * (r + 1.0), "max")
    total = dist.grouped_all_reduce([h.sin(), x], "sum")
    return (m ** 2).sum() + top.sum() * 0.5 + (total[0] * h).sum() + (total[1] * x * (r + 1.0)).sum()


xv = np.random.default_rng(10 + r).standard_normal((3, 4))
wv = np.random.default_rng(20 + r).standard_normal((4, 2))
xe, we = gg.tensor(xv, requires_grad=True), gg.tensor(wv, requires_grad=True)
objective(xe, we).backward()
g = gg.Graph()
with g.as_default():
    xs, ws = gg.placeholder(gg.float64, (3, 4)), gg.placeholder(gg.float64, (4, 2))
    dx, dw = gg.gradients(objective(xs, ws), [xs, ws])
dx_v, dw_v = gg.Session(g).run([dx, dw], {xs: xv, ws: wv})
close(dx_v, xe.grad.numpy(), "symbolic gradient (x) through collectives")
close(dw_v, we.grad.numpy(), "symbolic gradient (w) through collectives")


# ---- a gg.function training step with an explicit gradient all-reduce equals the same step run eagerly ------------
def make_model():
    gg.manual_seed(7)
    return gg.nn.Sequential(gg.nn.Linear(48, 8), gg.nn.Tanh(), gg.nn.Linear(8, 3)).to(gg.float64)


def make_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = gg.cross_entropy(model(gg.reshape(x, (-1, 48))), y)
        loss.backward()
        params = list(model.parameters())
        for p, g in zip(params, dist.grouped_all_reduce([p.grad for p in params], "mean", bucket_mb=0.001)):
            p.grad = g
        opt.step()
        return dist.all_reduce(loss, "mean")
    return step


results = []
for compiled in (False, True):
    model = make_model()
    opt = gg.optim.Adam(model.parameters(), lr=0.05)
    step = make_step(model, opt)
    if compiled:
        step = gg.function(step)
    losses = [float(step(gg.tensor(X[mine]), gg.tensor(Y[mine]))) for _ in range(STEPS)]
    results.append((losses, [p.numpy().copy() for p in model.parameters()]))
close(results[1][0], results[0][0], "gg.function losses")
for compiled_p, eager_p in zip(results[1][1], results[0][1]):
    close(compiled_p, eager_p, "gg.function parameters")
# and both equal one process on the whole batch
model = make_model()
opt = gg.optim.Adam(model.parameters(), lr=0.05)
for _ in range(STEPS):
    opt.zero_grad()
    gg.cross_entropy(model(gg.tensor(X.reshape(-1, 48))), gg.tensor(Y)).backward()
    opt.step()
for single_p, eager_p in zip(model.parameters(), results[0][1]):
    close(single_p.numpy(), eager_p, "data-parallel Adam vs one process")

arrived = int(dist.all_reduce(gg.tensor([1])).item())  # every rank got here
if r == 0:
    print(f"ok {arrived} ranks", flush=True)
