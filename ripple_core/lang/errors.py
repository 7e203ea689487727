"""The one error the language raises: a refused or malformed construct, located in the source.

Every message has the form ``file:line: construct: what is wrong; what to write instead`` so a
kernel author can fix the source without reading the compiler.
"""

__all__ = ["LangError"]


class LangError(ValueError):
    """A kernel the compiler refuses. ``where`` is ``file:line``; ``construct`` names the refused
    Python construct; the message ends with what to write instead when there is an alternative."""

    def __init__(self, where: str, construct: str, message: str, hint: str | None = None):
        self.where, self.construct, self.hint = where, construct, hint
        text = f"{where}: {construct}: {message}"
        if hint:
            text += f"; {hint}"
        super().__init__(text)
