"""Rank script (2 ranks): Model.fit, evaluate, predict and checkpoints, data-parallel. Argument: a directory.

The script never calls init(): fit joins the world itself. Each rank starts from other weights, so
the run also shows that fit gives every rank rank 0's. It writes (rank 0 alone):

* result.safetensors: the weights and history of the main fit (arrays, shuffled, validation data,
  callbacks), evaluate and predict on the validation data, and the weights of a fit without
  shuffling that EarlyStopping ends; test_fit.py compares them with one process training on
  batches twice as large;
* ckpt-<epoch>.safetensors (ModelCheckpoint), log.csv (CSVLogger), resume.ckpt (save_checkpoint,
  resumed on 3 ranks by fit_resume.py).

Rank 0 prints "files written per rank: [...]", "csv rows per rank: [...]" and "ok 2 ranks".
"""
import os
import sys

import numpy as np

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad.data import DataLoader, TensorDataset
from graphgrad.io import checkpoint
from graphgrad.train.callbacks import CSVLogger, EarlyStopping, LambdaCallback, ModelCheckpoint
from fit_common import BATCH, EPOCHS, SEED, blobs, make_model, weights

out = sys.argv[1]
launched_rank = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))

files_written = [0]
atomic_write = checkpoint._atomic_write


def counting_write(path, write):
    files_written[0] += 1
    atomic_write(path, write)


checkpoint._atomic_write = counting_write


class CountingCSVLogger(CSVLogger):
    rows = 0

    def on_epoch_end(self, epoch, logs=None):
        CountingCSVLogger.rows += 1
        super().on_epoch_end(epoch, logs)


x, y, x_val, y_val = blobs()

# ---- the main fit: shuffled arrays, validation data, callbacks, progress ------------------------------
model = make_model(init_seed=launched_rank)
csv_logger = CountingCSVLogger(os.path.join(out, "log.csv"), append=True)  # two writers would repeat rows
saver = ModelCheckpoint(os.path.join(out, "ckpt-{epoch}.safetensors"), save_best_only=False)
history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=2, seed=SEED, validation_data=(x_val, y_val),
                    callbacks=[csv_logger, saver, EarlyStopping(monitor="val_loss", patience=100)])
r, n = dist.rank(), dist.world_size()
assert dist.is_initialized() and n == 2

# every rank loads the checkpoint rank 0 has just written
saved = gg.load(os.path.join(out, f"ckpt-{EPOCHS}.safetensors"))
for name, value in weights(model).items():
    np.testing.assert_array_equal(saved[name].numpy(), value)
assert saver.last_saved == os.path.join(out, f"ckpt-{EPOCHS}.safetensors")

# every rank saw the same logs (averaged over the ranks)
keys = sorted(history.history)
mine = np.array([history.history[k] for k in keys])
everyone = dist.all_gather(gg.tensor(mine[None])).numpy()
np.testing.assert_array_equal(everyone[0], everyone[1])

evaluated = model.evaluate(x_val, y_val)
predicted = model.predict(x_val)
assert predicted.shape == (len(x_val), 3)
np.testing.assert_array_equal(dist.broadcast(gg.tensor(predicted), src=0).numpy(), predicted)
val_set = TensorDataset(gg.tensor(x_val), gg.tensor(y_val))   # a sequential loader is split the same way
np.testing.assert_allclose(model.predict(DataLoader(val_set, batch_size=BATCH)), predicted, rtol=0, atol=1e-14)
for key, value in model.evaluate(DataLoader(val_set, batch_size=BATCH)).items():
    assert abs(value - evaluated[key]) < 1e-12, (key, value, evaluated[key])

# ---- a DataLoader that shuffles is split the same way as arrays (the loader's order comes from fit's seed)
from_loader = make_model(init_seed=launched_rank)
loader = DataLoader(TensorDataset(gg.tensor(x), gg.tensor(y)), batch_size=BATCH, shuffle=True)
from_loader.fit(loader, epochs=EPOCHS, seed=SEED, verbose=0)
for name, value in weights(from_loader).items():
    np.testing.assert_allclose(value, weights(model)[name], rtol=0, atol=1e-13)

# ---- no shuffling; EarlyStopping ends every rank at the same epoch --------------------------------------
in_order = make_model(init_seed=launched_rank)
stopper = EarlyStopping(monitor="loss", min_delta=1e9, patience=1)  # the second epoch cannot improve enough
in_order.fit(x, y, batch_size=BATCH, epochs=5, shuffle=False, verbose=0, callbacks=[stopper])
assert stopper.stopped_epoch == 1, stopper.stopped_epoch

# ---- a callback that stops one rank mid-epoch stops them all after the same batch -------------------
batches_run = []


def stop_on_rank_one(batch, logs):
    batches_run.append(batch)
    if r == 1 and batch == 2:
        stopping.model.stop_training = True


stopping = LambdaCallback(on_train_batch_end=stop_on_rank_one)
make_model().fit(x, y, batch_size=BATCH, epochs=2, verbose=0, callbacks=[stopping])
assert batches_run == [0, 1, 2], batches_run

# ---- buffers stay equal on every rank (rank 0's, broadcast at each training forward); a Model subclass
bn = gg.Sequential([gg.nn.Linear(4, 8), gg.nn.BatchNorm1d(8), gg.nn.ReLU(), gg.nn.Linear(8, 3)])
bn.compile(optimizer="sgd", loss="cross_entropy")
bn.fit(x.astype(np.float32), y, batch_size=BATCH, epochs=1, verbose=0)
for name, buffer in bn.named_buffers():
    np.testing.assert_array_equal(dist.broadcast(buffer, src=0).numpy(), buffer.numpy(), err_msg=name)


class Subclassed(gg.train.Model):
    def __init__(self):
        super().__init__()
        self.fc = gg.nn.Linear(4, 3)

    def forward(self, inputs):
        return self.fc(inputs)


sub = Subclassed()
sub.compile(optimizer="sgd", loss="cross_entropy")
sub.fit(x.astype(np.float32), y, batch_size=BATCH, epochs=1, verbose=0)
np.testing.assert_array_equal(dist.broadcast(sub.fc.weight, src=0).numpy(), sub.fc.weight.numpy())

# ---- results for the test, and a checkpoint to resume from on 3 ranks --------------------------------
if r == 0:  # gg.save writes wherever it is called: the PyTorch habit
    gg.save({"weights": weights(model), "history": {k: np.array(v) for k, v in history.history.items()},
             "evaluate": evaluated, "predict": predicted, "in_order": weights(in_order)},
            os.path.join(out, "result.safetensors"))
gg.save_checkpoint(os.path.join(out, "resume.ckpt"), model, model.optimizer, epoch=EPOCHS)  # rank 0 writes
dist.barrier()
assert os.path.exists(os.path.join(out, "resume.ckpt"))

written = dist.all_gather(gg.tensor(np.array([files_written[0]]))).numpy().tolist()
rows = dist.all_gather(gg.tensor(np.array([CountingCSVLogger.rows]))).numpy().tolist()
if r == 0:
    print(f"files written per rank: {written}")
    print(f"csv rows per rank: {rows}")
    print(f"ok {n} ranks")
