"""Dagster config classes whose fields are the engine's: one definition of each dial and each
endpoint setting (``wiki_assets.engine.config``), shown by the launchpad with its description and
default and validated by the engine's own rules."""

import copy
import types
import typing
from collections.abc import Callable, Collection
from typing import Any, TypeVar

import dagster as dg
from pydantic import create_model
from pydantic.fields import FieldInfo

ConfigClass = TypeVar("ConfigClass", bound=dg.Config)


def _dagster_type(annotation: Any) -> Any:
    """The annotation as Dagster's config can express it. A tuple becomes a list, and a union of
    several types (``int | Literal['auto']``) becomes Any: the field's validators, which are the
    engine's and kept, still decide what is valid."""
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return list[typing.get_args(annotation)[0]]  # type: ignore[misc]
    if origin in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(members) > 1:
            return Any
    return annotation


def _dagster_field(info: FieldInfo) -> tuple[Any, FieldInfo]:
    annotation = _dagster_type(info.annotation)
    field = copy.copy(info)
    field.annotation = annotation
    if isinstance(field.default, tuple):
        field.default = list(field.default)
    return annotation, field


def fields_from(
    engine_class: type, exclude: Collection[str] = ()
) -> Callable[[type[ConfigClass]], type[ConfigClass]]:
    """A class decorator: the ``dg.Config`` class it decorates (its docstring and methods) gets
    every field of the engine's pydantic dataclass ``engine_class`` but those in ``exclude``, in
    their order, with their defaults, descriptions and validators."""
    engine_fields: dict[str, FieldInfo] = engine_class.__pydantic_fields__  # type: ignore[attr-defined]
    unknown = set(exclude) - set(engine_fields)
    if unknown:
        raise TypeError(f"{engine_class.__name__} has no field(s) {', '.join(sorted(unknown))}")

    def derive(cls: type[ConfigClass]) -> type[ConfigClass]:
        fields = {
            name: _dagster_field(info)
            for name, info in engine_fields.items()
            if name not in exclude
        }
        return create_model(  # type: ignore[call-overload]
            cls.__name__,
            __base__=cls,
            __module__=cls.__module__,
            __doc__=cls.__doc__,
            **fields,
        )

    return derive
