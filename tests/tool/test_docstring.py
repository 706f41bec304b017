"""parse_docstring: Google, NumPy and reST parameter sections."""

from __future__ import annotations

from nb_tools.tool._docstring import parse_docstring


def test_none_and_empty() -> None:
    assert parse_docstring(None) == ("", {})
    assert parse_docstring("") == ("", {})


def test_plain_docstring_is_cleaned() -> None:
    doc = """
        Get the weather.

        Uses the public API.
    """
    assert parse_docstring(doc) == ("Get the weather.\n\nUses the public API.", {})


def test_google() -> None:
    doc = """Get the weather for a city.

    Looks it up online.

    Args:
        city (str): The city name,
            for example Paris.
        unit: Temperature unit.
        *tags: Extra tags.
        **options: More options.

    Returns:
        str: A short report.

    Raises:
        ValueError: If the city is unknown.

    Example:
        >>> get_weather("Paris")
    """
    assert parse_docstring(doc) == (
        "Get the weather for a city.\n\nLooks it up online.\n\nExample:\n"
        '    >>> get_weather("Paris")',
        {
            "city": "The city name, for example Paris.",
            "unit": "Temperature unit.",
            "tags": "Extra tags.",
            "options": "More options.",
        },
    )


def test_google_nested_parentheses_and_description_on_the_next_line() -> None:
    doc = """Merge.

    Args:
        weights (dict(str, int)): Weights: by name.
        city:
            The city,
            in full.
    """
    assert parse_docstring(doc) == (
        "Merge.",
        {"weights": "Weights: by name.", "city": "The city, in full."},
    )


def test_google_section_aliases_and_yields() -> None:
    doc = """Stream rows.

    Arguments:
        path: Where.
    Keyword Args:
        limit (int, optional): How many.
    Yields:
        dict: a row
    """
    assert parse_docstring(doc) == ("Stream rows.", {"path": "Where.", "limit": "How many."})


def test_google_parameters_heading() -> None:
    doc = "Do it.\n\nParameters:\n    x: the x\n    y: the y\n"
    assert parse_docstring(doc) == ("Do it.", {"x": "the x", "y": "the y"})


def test_google_attributes_for_classes() -> None:
    doc = """A point.

    Attributes:
        x: Horizontal.
        y: Vertical.
    """
    assert parse_docstring(doc) == ("A point.", {"x": "Horizontal.", "y": "Vertical."})


def test_numpy() -> None:
    doc = """
    Compute a sum.

    Parameters
    ----------
    a : int
        The first
        number.
    b, c : float, optional
        Two more.
    flag
        A flag without a type.

    Returns
    -------
    int
        The sum.

    Notes
    -----
    Fast.
    """
    assert parse_docstring(doc) == (
        "Compute a sum.\n\nNotes\n-----\nFast.",
        {
            "a": "The first number.",
            "b": "Two more.",
            "c": "Two more.",
            "flag": "A flag without a type.",
        },
    )


def test_rest() -> None:
    doc = """Send a message.

    :param to: Recipient address,
        one only.
    :param str subject: The subject.
    :type to: str
    :keyword urgent: Mark urgent.
    :returns: The message id.
    :rtype: str
    :raises ValueError: On a bad address.
    """
    assert parse_docstring(doc) == (
        "Send a message.",
        {"to": "Recipient address, one only.", "subject": "The subject.", "urgent": "Mark urgent."},
    )


def test_unknown_heading_like_lines_stay_in_the_description() -> None:
    doc = "Note the following:\n\n    Step one: do this.\n"
    assert parse_docstring(doc) == ("Note the following:\n\nStep one: do this.", {})


def test_returns_only_docstring() -> None:
    assert parse_docstring("Ping.\n\nReturns:\n    str: pong\n") == ("Ping.", {})
