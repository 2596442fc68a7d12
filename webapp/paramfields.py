"""Form fields generated from an algorithm's declared parameters (``registry.Param``)."""

from __future__ import annotations

from typing import Any

from django import forms

from scheduling import registry


class FlagInput(forms.CheckboxInput):
    """A checkbox whose posted value is kept as sent; absent: ``absent`` (False, unticked, for the
    page's form; None, the parameter's default, for the JSON API)."""

    def __init__(self, absent: Any = False) -> None:
        super().__init__()
        self.absent = absent

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        return data.get(name, self.absent)


class FlagField(forms.BooleanField):
    """A boolean parameter's checkbox. The value stays as posted ("on" from a browser; "true", "no",
    ... from the API) for ``Param.parse`` to judge, which refuses what it does not recognise as an
    "Also run" line does: Django's BooleanField and CheckboxInput take any value but "false" and "0",
    "maybe" included, as true."""

    widget = FlagInput

    def to_python(self, value: Any) -> Any:
        return value


def param_field(param: registry.Param, absent_flag: Any = False) -> forms.Field:
    """A form field for one declared parameter; values are checked by ``Param.parse`` in ``clean``.
    ``absent_flag``: a boolean parameter's value when it is not posted (see FlagInput)."""
    common: dict[str, Any] = {"required": False, "label": param.name, "help_text": param.help, "initial": param.default}
    if param.type is bool:
        return FlagField(widget=FlagInput(absent_flag), **common)
    if param.choices:
        return forms.ChoiceField(choices=[(c, c) for c in param.choices], **common)
    if param.type in (int, float):
        attrs = {"step": "1" if param.type is int else "any"}
        if param.min is not None:
            attrs["min"] = f"{param.min:g}"
        if param.max is not None:
            attrs["max"] = f"{param.max:g}"
        return forms.CharField(widget=forms.NumberInput(attrs=attrs), **common)
    return forms.CharField(**common)


def choices(field: forms.Field) -> forms.ChoiceField:
    """A choice field of the form (``Form.fields`` holds them as plain fields)."""
    assert isinstance(field, forms.ChoiceField)
    return field
