"""Make the gallery's pictures (run from the repository root; needs graphgrad[all]):

    python docs/gallery/generate.py

spiral_mlp.png comes from ``examples/spiral_mlp.py --png docs/gallery/spiral_mlp.png``; this script
draws digits_learning_curve.png: an MLP on the 8x8 digits trained with ``Model.fit``, its training
and validation accuracy per epoch."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.data import load_digits  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

gg.manual_seed(0)
(x, y), (x_test, y_test) = load_digits()
model = gg.Sequential([gg.nn.Flatten(), gg.nn.Linear(64, 64), gg.nn.ReLU(), gg.nn.Linear(64, 10)])
model.compile(optimizer=gg.optim.Adam(model.parameters(), lr=1e-3), loss="cross_entropy", metrics=["accuracy"])
history = model.fit(x, y, epochs=20, batch_size=64, validation_data=(x_test, y_test), verbose=0).history
figure, axis = plt.subplots(figsize=(5, 3.2))
axis.plot(history["accuracy"], label="training")
axis.plot(history["val_accuracy"], label="held out")
axis.set_xlabel("epoch")
axis.set_ylabel("accuracy")
axis.set_title("8x8 digits, MLP 64-64-10, Adam")
axis.legend()
figure.tight_layout()
figure.savefig(os.path.join(HERE, "digits_learning_curve.png"), dpi=110)
print("wrote", os.path.join(HERE, "digits_learning_curve.png"), "final val accuracy", history["val_accuracy"][-1])
