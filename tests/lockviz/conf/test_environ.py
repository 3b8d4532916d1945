"""A number setting from the environment: its default when unset, a clear error when bad."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from lockviz.conf.environ import number


def test_unset_or_empty_is_the_default_and_a_number_keeps_the_default_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOCKVIZ_TEST_NUMBER", raising=False)
    assert number("LOCKVIZ_TEST_NUMBER", 24) == 24
    monkeypatch.setenv("LOCKVIZ_TEST_NUMBER", " ")
    assert number("LOCKVIZ_TEST_NUMBER", 24) == 24
    monkeypatch.setenv("LOCKVIZ_TEST_NUMBER", "7")
    assert number("LOCKVIZ_TEST_NUMBER", 24) == 7
    assert isinstance(number("LOCKVIZ_TEST_NUMBER", 12.0), float)


@pytest.mark.parametrize(("given", "default", "says"), [
    ("lots", 24, "LOCKVIZ_TEST_NUMBER='lots' is not a whole number"),
    ("1.5", 24, "LOCKVIZ_TEST_NUMBER='1.5' is not a whole number"),
    ("half", 12.0, "LOCKVIZ_TEST_NUMBER='half' is not a number"),
])  # fmt: skip
def test_a_value_that_is_not_a_number_is_named_with_its_variable(
    monkeypatch: pytest.MonkeyPatch, given: str, default: float, says: str
) -> None:
    monkeypatch.setenv("LOCKVIZ_TEST_NUMBER", given)
    with pytest.raises(ImproperlyConfigured) as refused:
        number("LOCKVIZ_TEST_NUMBER", default)
    assert str(refused.value) == says
