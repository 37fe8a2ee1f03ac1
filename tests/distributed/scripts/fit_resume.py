"""Rank script (3 ranks): resume the 2-rank run of fit_parallel.py from its checkpoint. Argument: its directory.

Every rank loads resume.ckpt (model and Adam state) into a model that starts from other weights,
trains EPOCHS..EPOCHS+2 on 3 ranks and writes resumed.safetensors; test_fit.py compares it with one
process that trained on batches of 2 x BATCH, then 3 x BATCH. Rank 0 prints "ok 3 ranks".
"""
import os
import sys

import numpy as np

import graphgrad as gg
import graphgrad.distributed as dist
from fit_common import BATCH, EPOCHS, SEED, blobs, make_model, weights

out = sys.argv[1]
dist.init()
x, y, _, _ = blobs()
model = make_model(init_seed=10 + dist.rank())
info = gg.load_checkpoint(os.path.join(out, "resume.ckpt"), model, model.optimizer)
assert info["epoch"] == EPOCHS, info
model.fit(x, y, batch_size=BATCH, epochs=EPOCHS + 2, initial_epoch=EPOCHS, seed=SEED, verbose=0)
if dist.rank() == 0:
    gg.save(weights(model), os.path.join(out, "resumed.safetensors"))
arrived = int(dist.all_reduce(gg.tensor(np.array([1]))).item())
if dist.rank() == 0:
    print(f"ok {arrived} ranks")
