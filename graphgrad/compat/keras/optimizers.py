"""``keras.optimizers`` with Keras' arguments and defaults (``Adam(learning_rate=0.001, beta_1=0.9,
beta_2=0.999, epsilon=1e-7)``...), each making the ``gg.optim`` optimizer of the same rule when
``compile`` hands it the model's weights. ``learning_rate`` reads and sets the running rate (also
what ``LearningRateScheduler`` and ``ReduceLROnPlateau`` change); a ``keras.optimizers.schedules`` object as
``learning_rate`` sets the rate before each step from the number of steps taken, as Keras."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Nadam", "Adamax", "Adadelta", "get",
           "schedules"]


class Optimizer:
    """A Keras optimizer: its arguments until :meth:`bind` makes graphgrad's optimizer; then it steps,
    zeroes gradients and holds ``param_groups`` as that optimizer does."""

    keras_name = "optimizer"

    def __init__(self, learning_rate: float = 0.001, clipnorm: Optional[float] = None, **kwargs) -> None:
        self.schedule = None
        if isinstance(learning_rate, dict) and "class_name" in learning_rate:  # a saved schedule
            learning_rate = schedules.deserialize(learning_rate)
        if callable(learning_rate) and not isinstance(learning_rate, (int, float)):
            self.schedule = learning_rate  # a keras.optimizers.schedules object: lr = schedule(iterations)
            learning_rate = float(learning_rate(0))
        self.iterations = 0
        self._lr = float(learning_rate)
        self._config = {"learning_rate": self._lr, **kwargs}
        self.clipnorm = clipnorm
        self._optimizer = None

    def _graphgrad(self, params: list):
        raise NotImplementedError

    def bind(self, params) -> "Optimizer":
        """Make graphgrad's optimizer over ``params`` (called by ``compile``)."""
        object.__setattr__(self, "_optimizer", self._graphgrad(list(params)))
        return self

    def _bound(self):
        if self._optimizer is None:
            raise RuntimeError(f"{type(self).__name__}: not attached to a model yet (pass it to model.compile)")
        return self._optimizer

    def step(self, *args, **kwargs):
        if self.clipnorm is not None:
            gg.optim.clip_grad_norm_([p for g in self._bound().param_groups for p in g["params"]], self.clipnorm)
        if self.schedule is not None:  # Keras evaluates the schedule at the step count before the update
            for group in self._bound().param_groups:
                group["lr"] = float(self.schedule(self.iterations))
        self.iterations += 1
        return self._bound().step(*args, **kwargs)

    def zero_grad(self, *args, **kwargs):
        return self._bound().zero_grad(*args, **kwargs)

    def apply_gradients(self, grads_and_vars: Any, **kwargs) -> int:
        """Keras' ``apply_gradients(zip(grads, variables))`` (custom ``train_step``\ s, ``GradientTape``
        loops): one update of ``variables`` with ``grads`` (a ``None`` gradient leaves its variable as it
        is). An optimizer not yet attached to a model attaches to these variables (a GAN's two
        optimizers); variables it has not seen join it. Returns the number of updates made."""
        pairs = [(g, v) for g, v in grads_and_vars]
        variables = [v for _, v in pairs]
        if self._optimizer is None:
            self.bind(variables)
        else:
            known = {id(p) for group in self.param_groups for p in group["params"]}
            new = [v for v in variables if id(v) not in known]
            if new:
                self._bound().add_param_group({"params": new})
        given = {id(v) for v in variables}
        for group in self.param_groups:
            for p in group["params"]:
                if id(p) not in given:
                    p.grad = None  # only the variables given here change
        for g, v in pairs:
            if g is None:
                v.grad = None
            else:
                g = g.detach() if isinstance(g, gg.Tensor) else gg.tensor(g)
                v.grad = g.astype(v.dtype) if g.dtype != v.dtype else g
        self.step()
        for _, v in pairs:
            v.grad = None
        return self.iterations

    def apply(self, grads: Any, trainable_variables: Any = None) -> int:
        """Keras 3's ``apply(grads, trainable_variables)``."""
        if trainable_variables is None:
            trainable_variables = [p for group in self.param_groups for p in group["params"]]
        return self.apply_gradients(zip(grads, trainable_variables))

    def build(self, variables: Any) -> None:
        """Keras' ``optimizer.build(variables)``: attach to ``variables`` now."""
        if self._optimizer is None:
            self.bind(list(variables))

    @property
    def param_groups(self) -> list:
        return self._bound().param_groups

    @property
    def state(self):
        return self._bound().state

    def state_dict(self) -> dict:
        return self._bound().state_dict()

    def load_state_dict(self, state: dict) -> None:
        self._bound().load_state_dict(state)

    @property
    def learning_rate(self) -> float:
        return float(self.param_groups[0]["lr"]) if self._optimizer is not None else self._lr

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._lr = float(value)
        if self._optimizer is not None:
            for group in self.param_groups:
                group["lr"] = float(value)

    lr = learning_rate

    def get_config(self) -> dict:
        if isinstance(self.schedule, schedules.LearningRateSchedule):
            return {"name": self.keras_name, **self._config, "learning_rate": schedules.serialize(self.schedule)}
        return {"name": self.keras_name, **self._config, "learning_rate": self.learning_rate}

    def __repr__(self) -> str:
        return f"<keras.optimizers.{type(self).__name__} {self.get_config()}>"


class SGD(Optimizer):
    keras_name = "SGD"

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.0, nesterov: bool = False,
                 weight_decay: Optional[float] = None, **kwargs) -> None:
        super().__init__(learning_rate, momentum=float(momentum), nesterov=bool(nesterov), weight_decay=weight_decay,
                         **kwargs)

    def _graphgrad(self, params):
        c = self._config
        return gg.optim.SGD(params, lr=self._lr, momentum=c["momentum"], nesterov=c["nesterov"],
                            weight_decay=c["weight_decay"] or 0.0)


class Adam(Optimizer):
    keras_name = "Adam"

    def __init__(self, learning_rate: float = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, weight_decay: Optional[float] = None, **kwargs) -> None:
        super().__init__(learning_rate, beta_1=float(beta_1), beta_2=float(beta_2), epsilon=float(epsilon),
                         amsgrad=bool(amsgrad), weight_decay=weight_decay, **kwargs)

    def _graphgrad(self, params):
        c = self._config
        cls = gg.optim.AdamW if c["weight_decay"] else gg.optim.Adam
        # Keras adds epsilon to sqrt(v) before the bias correction (TF1's Adam): epsilon_hat
        return cls(params, lr=self._lr, betas=(c["beta_1"], c["beta_2"]), eps=c["epsilon"], amsgrad=c["amsgrad"],
                   weight_decay=c["weight_decay"] or 0.0, epsilon_hat=True)


class AdamW(Adam):
    keras_name = "AdamW"

    def __init__(self, learning_rate: float = 0.001, weight_decay: float = 0.004, beta_1: float = 0.9,
                 beta_2: float = 0.999, epsilon: float = 1e-7, amsgrad: bool = False, **kwargs) -> None:
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay, **kwargs)


class RMSprop(Optimizer):
    keras_name = "RMSprop"

    def __init__(self, learning_rate: float = 0.001, rho: float = 0.9, momentum: float = 0.0, epsilon: float = 1e-7,
                 centered: bool = False, **kwargs) -> None:
        super().__init__(learning_rate, rho=float(rho), momentum=float(momentum), epsilon=float(epsilon),
                         centered=bool(centered), **kwargs)

    def _graphgrad(self, params):
        c = self._config
        return gg.optim.RMSprop(params, lr=self._lr, alpha=c["rho"], eps=c["epsilon"], momentum=c["momentum"],
                                centered=c["centered"])


class Adagrad(Optimizer):
    keras_name = "Adagrad"

    def __init__(self, learning_rate: float = 0.001, initial_accumulator_value: float = 0.1, epsilon: float = 1e-7,
                 **kwargs) -> None:
        super().__init__(learning_rate, initial_accumulator_value=float(initial_accumulator_value),
                         epsilon=float(epsilon), **kwargs)

    def _graphgrad(self, params):
        c = self._config
        return gg.optim.Adagrad(params, lr=self._lr, initial_accumulator_value=c["initial_accumulator_value"],
                                eps=c["epsilon"])


class Nadam(Optimizer):
    """``Nadam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)``: ``gg.optim.NAdam`` with Keras 3's
    momentum schedule ``beta_1 * (1 - 0.5 * 0.96 ** t)`` (``momentum_decay=1``)."""

    keras_name = "Nadam"

    def __init__(self, learning_rate: float = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, **kwargs) -> None:
        super().__init__(learning_rate, beta_1=float(beta_1), beta_2=float(beta_2), epsilon=float(epsilon), **kwargs)

    def _graphgrad(self, params):
        c = self._config
        return gg.optim.NAdam(params, lr=self._lr, betas=(c["beta_1"], c["beta_2"]), eps=c["epsilon"],
                              momentum_decay=1.0)


class Adamax(Optimizer):
    """``Adamax(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)``: ``gg.optim.Adamax``."""

    keras_name = "Adamax"

    def __init__(self, learning_rate: float = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, **kwargs) -> None:
        super().__init__(learning_rate, beta_1=float(beta_1), beta_2=float(beta_2), epsilon=float(epsilon), **kwargs)

    def _graphgrad(self, params):
        c = self._config
        return gg.optim.Adamax(params, lr=self._lr, betas=(c["beta_1"], c["beta_2"]), eps=c["epsilon"])


class Adadelta(Optimizer):
    """``Adadelta(learning_rate=0.001, rho=0.95, epsilon=1e-7)``: ``gg.optim.Adadelta``."""

    keras_name = "Adadelta"

    def __init__(self, learning_rate: float = 0.001, rho: float = 0.95, epsilon: float = 1e-7, **kwargs) -> None:
        super().__init__(learning_rate, rho=float(rho), epsilon=float(epsilon), **kwargs)

    def _graphgrad(self, params):
        c = self._config
        return gg.optim.Adadelta(params, lr=self._lr, rho=c["rho"], eps=c["epsilon"])


_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad, "nadam": Nadam,
            "adamax": Adamax, "adadelta": Adadelta}


def get(identifier: Any) -> Optimizer:
    """A fresh optimizer from a name (``"adam"``: Keras' defaults) or the optimizer object itself."""
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in _BY_NAME:
            raise ValueError(f"keras.optimizers: unknown optimizer {identifier!r}; known: {sorted(_BY_NAME)}")
        return _BY_NAME[key]()
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()
    if isinstance(identifier, dict) and "name" in identifier:  # a saved config
        config = {k: v for k, v in identifier.items() if k != "name"}
        return _BY_NAME[identifier["name"].lower()](**config)
    raise TypeError(f"keras.optimizers: expected a name or a keras optimizer, got {type(identifier).__name__}")


from graphgrad.compat.keras import schedules  # noqa: E402  (keras.optimizers.schedules)
