from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import inspect
import io
import threading
from typing import Any

import pydantic
import pytest

from nb_tools.model import Part, ToolCall, ToolSpec
from nb_tools.tool import (
    ApprovalByArguments,
    Change,
    Executor,
    FunctionTool,
    MultiPreviewer,
    Previewer,
    Progress,
    Registry,
    Result,
    Schema,
    Tool,
    ValidationError,
    default_registry,
    needs_approval,
    preview_changes,
    progress,
    progress_sink,
    tool,
)
from nb_tools.tool._results import to_result

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def tc(name: str, arguments: str = "{}", id: str = "c1") -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments)


async def run(t: FunctionTool, arguments: str = "{}") -> Result:
    """Run a tool as the model would, through an executor; back to a Result."""
    r = await Executor(Registry(t)).execute(tc(t.info().name, arguments))
    return Result(
        content=r.content,
        parts=list(r.parts),
        is_error=r.is_error,
        metadata={k: v for k, v in r.metadata.items() if k != "duration"},
    )


# -- the decorated object ------------------------------------------------------------------


def test_a_sync_tool_is_still_the_function() -> None:
    reg = Registry()

    @tool(registry=reg)
    def get_weather(city: str, days: int = 1) -> str:
        """Get the forecast for a city."""
        return f"{city}: sunny for {days} days"

    assert isinstance(get_weather, FunctionTool) and isinstance(get_weather, Tool)
    assert get_weather("Oslo", days=2) == "Oslo: sunny for 2 days"
    assert get_weather.__name__ == "get_weather"
    assert get_weather.__doc__ == "Get the forecast for a city."
    assert str(inspect.signature(get_weather)) == "(city: 'str', days: 'int' = 1) -> 'str'"
    assert repr(get_weather) == "<FunctionTool get_weather>"
    assert reg.specs() == [
        ToolSpec(
            name="get_weather",
            description="Get the forecast for a city.",
            input_schema={
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "default": 1},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
        )
    ]


async def test_an_async_tool_returns_its_coroutine_when_called() -> None:
    @tool(register=False, read_only=True)
    async def lookup(key: str) -> str:
        await asyncio.sleep(0)
        return key.upper()

    coro = lookup("abc")
    assert inspect.iscoroutine(coro)
    assert await coro == "ABC"
    assert lookup.info().read_only
    assert (await run(lookup, '{"key": "x"}')).content == "X"


async def test_call_runs_from_raw_json_and_raises_on_invalid_arguments() -> None:
    @tool(register=False)
    def add(a: int, b: int = 2) -> int:
        return a + b

    assert await add.call('{"a": 1}') == Result(content="3", metadata={"value": 3})
    with pytest.raises(ValidationError) as info:
        await add.call('{"a": "one"}')
    assert info.value.problems == ["/a: expected integer, got string"]


def test_info_carries_the_options() -> None:
    @tool(
        register=False,
        name="renamed",
        description="Override.",
        concurrent=True,
        requires_approval=True,
        strict=True,
    )
    def f(x: str) -> str:
        """Docstring."""
        return x

    info = f.info()
    assert (info.name, info.description, info.read_only, info.concurrent) == (
        "renamed",
        "Override.",
        False,
        True,
    )
    assert info.requires_approval and info.strict and info.parameters is not None


def test_registration_replaces_a_tool_of_the_same_name() -> None:
    reg = Registry()

    @tool(registry=reg)
    def cell_tool() -> str:
        return "first"

    first = cell_tool

    @tool(registry=reg)
    def cell_tool() -> str:  # the cell runs again
        return "second"

    assert reg.names() == ["cell_tool"] and reg.get("cell_tool") is cell_tool is not first

    @tool(register=False)
    def loose() -> str:
        return ""

    assert "loose" not in reg and "loose" not in default_registry()


def test_the_default_registry_receives_plain_tools() -> None:
    @tool
    def nb_tools_test_default_registration() -> str:
        return "x"

    try:
        assert default_registry().get("nb_tools_test_default_registration") is (
            nb_tools_test_default_registration
        )
    finally:
        default_registry().remove("nb_tools_test_default_registration")


def test_names_are_checked_at_decoration_time() -> None:
    with pytest.raises(ValueError, match="invalid tool name 'bad name'"):

        @tool(name="bad name", register=False)
        def f() -> None: ...

    with pytest.raises(ValueError, match="reserved for tools from MCP servers"):

        @tool(name="mcp__srv__f", register=False)
        def g() -> None: ...

    with pytest.raises(TypeError, match="@tool needs a function, got int"):
        tool(3)  # type: ignore[call-overload]


# -- approval and previews ----------------------------------------------------------------


def test_an_approver_decides_from_the_arguments() -> None:
    seen: list[dict[str, Any]] = []

    def outside_tmp(args: dict[str, Any]) -> bool:
        seen.append(args)
        return not args["path"].startswith("/tmp/")

    @tool(register=False, approver=outside_tmp, requires_approval=True)
    def delete(path: str, force: bool = False) -> str:
        return path

    assert isinstance(delete, ApprovalByArguments)
    assert needs_approval(delete, '{"path": "/tmp/x"}') is False
    assert needs_approval(delete, '{"path": "/etc/passwd"}') is True
    assert needs_approval(delete, '{"path": 5}') is True  # unreadable: fail closed
    assert seen == [{"path": "/tmp/x", "force": False}, {"path": "/etc/passwd", "force": False}]

    @tool(register=False)
    def plain() -> None: ...

    assert not isinstance(plain, ApprovalByArguments)
    assert needs_approval(plain, "{}") is False


def test_a_preview_shows_the_change_before_the_call() -> None:
    def one(args: dict[str, Any]) -> Change:
        return Change(path=args["path"], before="old\n", after=args["text"])

    def two(args: dict[str, Any]) -> list[Change]:
        return [Change(path="a", before=None, after="x"), Change(path="b", before="y", after=None)]

    @tool(register=False, preview=one)
    def write(path: str, text: str) -> str:
        return "written"

    @tool(register=False, preview=two, approver=lambda a: True)
    def move() -> str:
        return "moved"

    assert isinstance(write, Previewer) and isinstance(write, MultiPreviewer)
    assert preview_changes(write, '{"path": "f.txt", "text": "new\\n"}') == [
        Change(path="f.txt", before="old\n", after="new\n")
    ]
    assert write.preview('{"path": "f.txt", "text": "new\\n"}').kind == "update"
    assert [c.kind for c in preview_changes(move, "{}") or []] == ["create", "delete"]
    assert isinstance(move, ApprovalByArguments)
    with pytest.raises(ValueError, match="the preview has 2 changes; use preview_files"):
        move.preview("{}")
    assert preview_changes(write, '{"path": 1}') is None

    @tool(register=False)
    def plain() -> None: ...

    assert not isinstance(plain, Previewer) and preview_changes(plain, "{}") is None


# -- arguments -------------------------------------------------------------------------------


@dataclasses.dataclass
class Location:
    city: str
    country: str = "NO"


async def test_dataclass_parameters_arrive_converted() -> None:
    got: list[Any] = []

    @tool(register=False)
    def forecast(where: Location, days: int = 1) -> str:
        got.append((where, days))
        return "ok"

    assert (await run(forecast, '{"where": {"city": "Oslo"}}')).content == "ok"
    assert got == [(Location(city="Oslo"), 1)]


async def test_strict_tools_treat_null_as_not_given() -> None:
    @tool(register=False, strict=True)
    def forecast(city: str, days: int = 3) -> str:
        return f"{city} {days}"

    assert (await run(forecast, '{"city": "Oslo", "days": null}')).content == "Oslo 3"
    assert (await run(forecast, '{"city": "Oslo", "days": 2}')).content == "Oslo 2"


async def test_an_explicit_schema_gets_validated_json_unconverted() -> None:
    schema = Schema.object({"when": Schema.string("ISO date")}, "when")
    got: list[Any] = []

    @tool(register=False, schema=schema, description="Book.")
    def book(**kwargs: Any) -> str:
        got.append(kwargs)
        return "booked"

    assert book.info().parameters is schema and book.info().description == "Book."
    assert (await run(book, '{"when": "2026-01-01"}')).content == "booked"
    assert got == [{"when": "2026-01-01"}]
    assert (await run(book, '{"when": 1}')).content == (
        "invalid arguments for book:\n/when: expected string, got integer"
    )
    with pytest.raises(TypeError, match="schema= must be an object schema"):
        tool(schema=Schema.string(), register=False)(lambda: None)


async def test_sync_tools_run_off_the_loop_and_report_progress() -> None:
    @tool(register=False)
    def slow() -> str:
        progress("working", fraction=0.5)
        return threading.current_thread().name

    got: list[tuple[str, Progress]] = []
    with progress_sink(lambda call_id, p: got.append((call_id, p))):
        result = await Executor(Registry(slow)).execute(tc("slow", id="call-7"))
    assert result.content.startswith("nb_tools-tool")
    assert got == [("call-7", Progress(text="working", fraction=0.5))]


async def test_a_raising_function_is_reported_with_its_traceback() -> None:
    @tool(register=False)
    def explode(n: int) -> str:
        raise KeyError(f"no item {n}")

    result = await run(explode, '{"n": 3}')
    assert (result.content, result.is_error) == ("explode raised KeyError: 'no item 3'", True)
    assert "in explode" in result.metadata["traceback"]


# -- return values ---------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Reading:
    when: datetime.datetime
    tags: set[str]
    color: Color
    pair: tuple[int, int]


class Model(pydantic.BaseModel):
    day: datetime.date
    values: list[float]


class PngThing:
    def _repr_png_(self) -> bytes:
        return PNG


class Markdown:
    def _repr_markdown_(self) -> str:
        return "# Title"


class Html:
    def _repr_html_(self) -> str:
        return "<b>bold</b>"


class Opaque:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<Opaque>"


def test_plain_values() -> None:
    assert to_result("text") == Result(content="text")
    assert to_result(None) == Result()
    r = Result(content="as is", is_error=True)
    assert to_result(r) is r
    assert to_result({"a": [1, 2.5, None, True]}) == Result(
        content='{"a": [1, 2.5, null, true]}', metadata={"value": {"a": [1, 2.5, None, True]}}
    )
    assert to_result("ü").content == "ü"


def test_json_of_dataclasses_enums_sets_tuples_datetimes_and_pydantic() -> None:
    reading = Reading(
        when=datetime.datetime(2026, 11, 29, 12, 0),
        tags={"b", "a"},
        color=Color.RED,
        pair=(1, 2),
    )
    assert to_result(reading).content == (
        '{"when": "2026-11-29T12:00:00", "tags": ["a", "b"], "color": "red", "pair": [1, 2]}'
    )
    model = Model(day=datetime.date(2026, 1, 2), values=[1.5])
    assert to_result(model).content == '{"day": "2026-01-02", "values": [1.5]}'
    assert to_result(model).metadata["value"] is model


def test_what_json_cannot_encode_is_shown_with_repr() -> None:
    result = to_result(Opaque())
    assert result.content == "<Opaque>" and not result.is_error
    assert result.metadata["note"].startswith("shown with repr(): not JSON")


def test_bytes() -> None:
    assert to_result(PNG).parts == [Part(kind="image", media_type="image/png", data=PNG)]
    pdf = b"%PDF-1.7 ..."
    assert to_result(pdf).parts == [Part(kind="document", media_type="application/pdf", data=pdf)]
    assert to_result("héllo".encode()).content == "héllo"
    assert to_result(b"\xff\xfe\x00").content == "<3 bytes of binary data, not shown>"


def test_parts_and_rich_objects() -> None:
    part = Part(kind="image", media_type="image/png", data=PNG)
    assert to_result(part).parts == [part]
    assert to_result([part, part]).parts == [part, part]
    thing = PngThing()
    result = to_result(thing)
    assert (result.content, result.parts) == ("", [part])
    assert result.metadata["value"] is thing
    assert to_result(Markdown()).content == "# Title"
    assert to_result(Html()).content == "<b>bold</b>"


async def test_a_matplotlib_figure_becomes_a_png() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    @tool(register=False)
    def plot() -> Any:
        fig = Figure(figsize=(2, 2))
        fig.add_subplot().plot([1, 2, 3])
        return fig

    result = await run(plot)
    assert (result.content, result.is_error, len(result.parts)) == ("", False, 1)
    assert result.parts[0].media_type == "image/png"
    assert result.parts[0].data.startswith(b"\x89PNG\r\n\x1a\n")
    assert isinstance(result.metadata["value"], Figure)
    axes = Figure().add_subplot()
    from_axes = to_result(axes)
    assert from_axes.parts[0].data.startswith(b"\x89PNG") and from_axes.metadata["value"] is axes


def test_a_pil_image_becomes_a_png() -> None:
    from PIL import Image

    for mode in ("RGB", "CMYK"):
        image = Image.new(mode, (3, 2))
        result = to_result(image)
        assert result.parts[0].media_type == "image/png"
        assert Image.open(io.BytesIO(result.parts[0].data)).size == (3, 2)


def test_a_dataframe_becomes_a_text_table() -> None:
    import pandas as pd

    df = pd.DataFrame({"city": ["Oslo", "Rome"], "temp": [3, 18]})
    assert to_result(df).content == ("   city  temp\n0  Oslo     3\n1  Rome    18\n[DataFrame 2x2]")
    big = pd.Series(range(1000), name="n")
    text = to_result(big).content
    assert text.endswith("[Series 1000]") and text.count("\n") < 80


def test_json_of_decimals_uuids_paths_and_timedeltas() -> None:
    import decimal
    import pathlib
    import uuid

    value = {
        "price": decimal.Decimal("1.10"),
        "id": uuid.UUID(int=1),
        "path": pathlib.PurePosixPath("/tmp/x"),
        "took": datetime.timedelta(seconds=1.5),
    }
    assert to_result(value).content == (
        '{"price": "1.10", "id": "00000000-0000-0000-0000-000000000001", '
        '"path": "/tmp/x", "took": 1.5}'
    )


async def test_async_tools_report_invalid_arguments_and_exceptions() -> None:
    @tool(register=False)
    async def fetch(url: str, retries: int = 1) -> str:
        raise ConnectionError(f"cannot reach {url}")

    bad = await run(fetch, '{"url": 1}')
    assert (bad.content, bad.is_error) == (
        "invalid arguments for fetch:\n/url: expected string, got integer",
        True,
    )
    failed = await run(fetch, '{"url": "http://x"}')
    assert (failed.content, failed.is_error) == (
        "fetch raised ConnectionError: cannot reach http://x",
        True,
    )
    assert "in fetch" in failed.metadata["traceback"]
    returned = await run(tool(register=False)(_returns_figure_like), "{}")
    assert returned.parts == [Part(kind="image", media_type="image/png", data=PNG)]


async def _returns_figure_like() -> Any:
    return PngThing()


def test_tool_options_are_the_function_tool_parameters() -> None:
    from nb_tools.tool._decorator import ToolOptions

    params = inspect.signature(FunctionTool.__init__).parameters
    keyword_only = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
    assert list(ToolOptions.__annotations__) == keyword_only


def test_unknown_tool_option_is_named() -> None:
    with pytest.raises(TypeError, match=r"@tool: unknown option\(s\) nmae; the options are"):
        tool(nmae="x")  # type: ignore[call-overload]
