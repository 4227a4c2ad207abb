"""A task's own options (``-T key=value``), apart from the run's options.

Each task declares a :class:`TaskOptions` model (``Task.options_model``) in its own module: every
field has a default and a docstring, which ``karma tasks show NAME`` prints. Values given on the
command line arrive as text and are coerced by the model (``need_images=false``); an option the task
does not take is refused with the list of those it does, never dropped.

The model is the only place an option is declared: it is the task's constructor argument
(:func:`bind_options`: ``WildScoreTask(WildScoreOptions(...))`` or ``WildScoreTask(need_images=False)``),
and the inspect_ai ``@task`` parameters are generated from it (``karma.tasks.inspect_bridge.
task_parameters``), so a new option is one field with its default and its docstring.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from karma.core.errors import InputError


class TaskOptions(BaseModel):
    """No options (the model of a task that takes none); tasks with options subclass it."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_attribute_docstrings=True, coerce_numbers_to_str=True
    )


def validate_options(task: str, model: type[TaskOptions], given: dict[str, Any]) -> TaskOptions:
    """``given`` (text from ``-T`` or typed values from Python) checked against ``model``.

    An unknown key or a bad value is an :class:`InputError` (exit 2) in one line naming the task and
    the option; an unknown key also lists the options the task takes.
    """
    fields = model.model_fields
    unknown = [key for key in given if key not in fields]
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        if not fields:
            raise InputError(f"task {task} takes no options (-T), got {names}")
        raise InputError(
            f"task {task} has no option {names}; it takes {', '.join(fields)} "
            f"(defaults: `karma tasks show {task}`)"
        )
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        value = given.get(key, "")
        # A validator's own ValueError already says what is wrong: pydantic's "Value error, " is noise.
        reason = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(
            f"task {task} option {key}={value!r}: {reason}{more} (see `karma tasks show {task}`)"
        ) from None


def bind_options(task: Any, options: TaskOptions | None, given: dict[str, Any]) -> TaskOptions:
    """A task constructor's one step: its options model instance, from ``options`` or from keywords.

    ``given`` (keywords, text from ``-T`` or typed values) is checked against the task's
    ``options_model`` (:func:`validate_options`: an unknown key or a bad value is an InputError naming
    it); each field then becomes an attribute of the same name, so the task reads ``self.need_images``.
    """
    cls = type(task)
    model: type[TaskOptions] = cls.options_model
    if options is not None and given:
        raise TypeError(f"{cls.__name__}: give an options model or keywords, not both")
    if options is None or not isinstance(options, model):
        raw = given if options is None else options.model_dump(exclude_unset=True)
        options = validate_options(cls.name, model, raw)
    task.options = options
    for name in model.model_fields:
        setattr(task, name, getattr(options, name))
    return options


def describe_options(model: type[TaskOptions]) -> list[dict[str, Any]]:
    """One ``{name, type, default, help}`` per option, in declaration order (``karma tasks show``)."""
    return [
        {
            "name": name,
            "type": type_name(field.annotation),
            "default": field.get_default(call_default_factory=True),
            "help": " ".join((field.description or "").split()),
        }
        for name, field in model.model_fields.items()
    ]


def type_name(annotation: Any) -> str:
    """``bool``, ``str or none``, ``image|video``, ``dict[str, str]``: a type as a user reads it."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return "|".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        named = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(named) + (" or none" if type(None) in args else "")
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(type_name(a) for a in args)}]"
    return getattr(annotation, "__name__", str(annotation))
