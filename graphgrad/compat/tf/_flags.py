"""``tf.app.flags`` / ``tf.flags`` (absl-like ``DEFINE_integer``, ``DEFINE_float``, ``DEFINE_string``,
``DEFINE_boolean``, ``DEFINE_list`` and ``FLAGS``) and ``tf.app.run``.

``FLAGS`` parses ``sys.argv`` the first time a flag is read (``--name=value``, ``--name value``,
``--flag``/``--noflag`` for booleans); arguments it does not know are left for the program.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, Optional


class _FlagValues:
    """The defined flags and their values (``FLAGS.name``)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_defs", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_parsed", False)
        object.__setattr__(self, "_rest", [])

    def _define(self, name: str, default: Any, help: str, parse: Callable) -> None:
        self._defs[name] = (parse, help)
        self._values[name] = default

    def __call__(self, argv: list) -> list:
        """Parse ``argv`` (the program name first); return the arguments not consumed."""
        rest, args, i = [argv[0]] if argv else [], list(argv[1:]), 0
        while i < len(args):
            arg = args[i]
            i += 1
            if not arg.startswith("-") or arg in ("-", "--"):
                rest.append(arg)
                if arg == "--":
                    rest.extend(args[i:])
                    break
                continue
            key, eq, value = arg.lstrip("-").partition("=")
            if key not in self._defs and key.startswith("no") and self._defs.get(key[2:], (None,))[0] is _boolean:
                self._values[key[2:]] = False
                continue
            if key not in self._defs:
                rest.append(arg)
                continue
            parse = self._defs[key][0]
            if not eq:
                if parse is _boolean:
                    self._values[key] = True
                    continue
                if i >= len(args):
                    raise ValueError(f"flag --{key} needs a value")
                value, i = args[i], i + 1
            self._values[key] = parse(value)
        object.__setattr__(self, "_parsed", True)
        object.__setattr__(self, "_rest", rest)
        return rest

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"no flag --{name} is defined")
        if not object.__getattribute__(self, "_parsed"):
            self(sys.argv)
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[name] = value

    def __contains__(self, name: str) -> bool:
        return name in self._values

    def is_parsed(self) -> bool:
        return self._parsed

    def flag_values_dict(self) -> dict:
        return dict(self._values)


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("1", "true", "t", "yes", "y"):
        return True
    if text in ("0", "false", "f", "no", "n"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [v for v in str(value).split(",") if v]


FLAGS = _FlagValues()


def _definer(parse: Callable) -> Callable:
    def define(name: str, default: Any, help: Optional[str] = None, flag_values: Any = None, **kwargs) -> None:
        (flag_values or FLAGS)._define(name, None if default is None else parse(default), help or "", parse)

    return define


flags = types.SimpleNamespace(
    FLAGS=FLAGS, DEFINE_integer=_definer(int), DEFINE_float=_definer(float), DEFINE_string=_definer(str),
    DEFINE_boolean=_definer(_boolean), DEFINE_bool=_definer(_boolean), DEFINE_list=_definer(_list),
    FlagValues=_FlagValues)


def run(main: Optional[Callable] = None, argv: Optional[list] = None) -> None:
    """Parse the flags from ``argv`` (``sys.argv``), then ``sys.exit(main(remaining arguments))``."""
    rest = FLAGS(sys.argv if argv is None else argv)
    if main is None:
        main = sys.modules["__main__"].main
    sys.exit(main(rest))


app = types.SimpleNamespace(flags=flags, run=run)
