"""Validation of generator parameters.

Every generator checks its parameters before it builds anything, so that a bad value is reported
as the user wrote it (which component, which parameter, what value, what is allowed) rather than
as an Amaranth or Yosys failure deep inside elaboration.
"""

from amaranth.hdl import Shape

__all__ = ["ParameterError", "check_int", "check_payload_shape", "check_choice"]


class ParameterError(ValueError):
    """A generator parameter is out of range. The message names the component, the parameter,
    the value given and what is allowed."""


def check_int(component: str, name: str, value, *, minimum: int, meaning: str) -> int:
    """Return ``value`` if it is an integer >= ``minimum``; raise :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(
            f"{component}: {name}={value!r} is not an integer; {name} ({meaning}) "
            f"must be an integer >= {minimum}")
    if value < minimum:
        raise ParameterError(
            f"{component}: {name}={value} is not allowed; {name} ({meaning}) "
            f"must be an integer >= {minimum}")
    return value


def check_payload_shape(component: str, shape):
    """Return ``shape`` if it casts to a shape of width >= 1; raise :class:`ParameterError`.

    Any Amaranth shape-castable is accepted (an int width, ``signed(n)``, a ``data`` layout),
    so the primitives stay generic over what their streams carry.
    """
    if isinstance(shape, bool):
        raise ParameterError(f"{component}: payload shape {shape!r} is not a shape")
    if isinstance(shape, int) and shape <= 0:
        raise ParameterError(
            f"{component}: width={shape} is not allowed; the payload width must be >= 1 bit")
    try:
        width = Shape.cast(shape).width
    except (TypeError, ValueError) as error:
        raise ParameterError(
            f"{component}: payload shape {shape!r} is not a shape ({error}); pass a width >= 1, "
            f"signed(n), unsigned(n) or a lib.data layout") from None
    if width <= 0:
        raise ParameterError(
            f"{component}: payload shape {shape!r} is {width} bits wide; "
            f"the payload width must be >= 1 bit")
    return shape


def check_choice(component: str, name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``; raise :class:`ParameterError`."""
    if value not in choices:
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ParameterError(f"{component}: {name}={value!r} is not allowed; choose one of {allowed}")
    return value
