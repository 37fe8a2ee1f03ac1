"""Keras 2's ``keras.wrappers.scikit_learn``: ``KerasClassifier(build_fn=make_model, epochs=..., batch_size=...)``
and ``KerasRegressor``, estimators that scikit-learn's ``cross_val_score``, ``GridSearchCV`` and
``Pipeline`` can use. ``build_fn`` returns a compiled model; its own arguments, ``fit``'s and
``predict``'s are taken from the constructor's keyword arguments (``sk_params``) by name, as Keras 2."""
from __future__ import annotations

import copy
import inspect
from typing import Any, Callable, Optional

from graphgrad.backend import np

__all__ = ["KerasClassifier", "KerasRegressor"]


def _accepts(fn: Callable) -> set:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


class BaseWrapper:
    def __init__(self, build_fn: Optional[Callable] = None, **sk_params) -> None:
        self.build_fn = build_fn
        self.sk_params = sk_params

    # scikit-learn's estimator protocol: the constructor's arguments are the parameters
    def get_params(self, deep: bool = True) -> dict:
        params = copy.deepcopy(self.sk_params) if deep else dict(self.sk_params)
        params["build_fn"] = self.build_fn
        return params

    def set_params(self, **params) -> "BaseWrapper":
        if "build_fn" in params:
            self.build_fn = params.pop("build_fn")
        self.sk_params.update(params)
        return self

    def _build_function(self) -> Callable:
        if self.build_fn is None:
            if not hasattr(self, "__call__"):
                raise ValueError(f"{type(self).__name__}: pass build_fn (a function returning a compiled model)")
            return self.__call__
        if not isinstance(self.build_fn, type) and callable(self.build_fn):
            return self.build_fn
        return self.build_fn.__call__

    def _filter(self, fn: Callable, overrides: Optional[dict] = None) -> dict:
        names = _accepts(fn)
        out = {k: v for k, v in self.sk_params.items() if k in names}
        out.update({k: v for k, v in (overrides or {}).items() if k in names})
        return out

    _estimator_type = "estimator"

    def __sklearn_tags__(self):
        """scikit-learn's tags (asked for by its model selection tools, which are then installed)."""
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        classifier = self._estimator_type == "classifier"
        return Tags(estimator_type=self._estimator_type, target_tags=TargetTags(required=True),
                    transformer_tags=None, classifier_tags=ClassifierTags() if classifier else None,
                    regressor_tags=None if classifier else RegressorTags(), input_tags=InputTags())

    def fit(self, x: Any, y: Any, **kwargs):
        self.n_features_in_ = int(np.shape(x)[-1]) if np.ndim(x) > 1 else 1
        build = self._build_function()
        self.model = build(**self._filter(build, kwargs))
        fit_args = self._filter(self.model.fit, kwargs)
        self._target_encoding(self.model)
        return self.model.fit(x, self._encode(y), **fit_args)

    def _target_encoding(self, model: Any) -> None:
        pass

    def _encode(self, y: Any) -> Any:
        return np.asarray(y)


class KerasClassifier(BaseWrapper):
    """A classifier: ``fit(x, y)`` with any labels (``classes_`` keeps them; a ``categorical_crossentropy``
    model gets them one-hot), ``predict`` returns labels, ``predict_proba`` probabilities (two columns
    for a single sigmoid unit), ``score`` the accuracy."""

    def fit(self, x: Any, y: Any, **kwargs):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] > 1:
            self.classes_ = np.arange(y.shape[1])
        else:
            self.classes_ = np.unique(y.reshape(-1))
        self.n_classes_ = len(self.classes_)
        return super().fit(x, y, **kwargs)

    def _target_encoding(self, model: Any) -> None:
        compiled = getattr(model, "_keras_compile", None)
        loss = compiled[1] if compiled else None
        name = loss if isinstance(loss, str) else getattr(loss, "__name__", type(loss).__name__)
        self._one_hot = "categorical_crossentropy" in str(name).lower() and "sparse" not in str(name).lower()

    def _encode(self, y: Any) -> Any:
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] > 1:
            return y
        index = np.searchsorted(self.classes_, y.reshape(-1))
        if self._one_hot:
            from graphgrad.compat.keras.utils import to_categorical

            return to_categorical(index, self.n_classes_)
        return index

    def predict_proba(self, x: Any, **kwargs) -> Any:
        probs = self.model.predict(x, **self._filter(self.model.predict, kwargs))
        if probs.shape[-1] == 1:
            probs = np.hstack([1 - probs, probs])
        return probs

    def predict(self, x: Any, **kwargs) -> Any:
        return self.classes_[self.predict_proba(x, **kwargs).argmax(axis=-1)]

    def score(self, x: Any, y: Any, **kwargs) -> float:
        return float(np.mean(self.predict(x, **kwargs) == np.asarray(y).reshape(-1)))


class KerasRegressor(BaseWrapper):
    """A regressor: ``predict`` returns the model's outputs (one column squeezed), ``score`` the negative
    loss (greater is better, as scikit-learn wants)."""

    _estimator_type = "regressor"

    def predict(self, x: Any, **kwargs) -> Any:
        out = np.asarray(self.model.predict(x, **self._filter(self.model.predict, kwargs)))
        return out.reshape(-1) if out.ndim == 2 and out.shape[1] == 1 else out

    def score(self, x: Any, y: Any, **kwargs) -> float:
        result = self.model.evaluate(x, np.asarray(y), **self._filter(self.model.evaluate, kwargs))
        return -float(result[0] if isinstance(result, (list, tuple)) else result)
