"""``keras.wrappers``: Keras 2's scikit-learn wrappers (``keras.wrappers.scikit_learn``)."""
from graphgrad.compat.keras.wrappers import scikit_learn
from graphgrad.compat.keras.wrappers.scikit_learn import KerasClassifier, KerasRegressor

__all__ = ["scikit_learn", "KerasClassifier", "KerasRegressor"]
