"""Attack round 5 on the kernel tools, written as a prompt-injected model would use them:
``describe`` and ``list_variables`` (no click) on objects a notebook made, in a real
kernel. The model wins if a hook of the user's runs (the hooks append to a marker file:
the effect checked is that file) or if a secret string reaches the tool's text.

Got through on main, fixed here:
- a pandas axis whose ``name`` (or a MultiIndex level name) is an object of the user's:
  pandas formats it with ``str()`` and asks it for ``__next__``/``_typ``;
- ``pd.array`` of objects (a ``NumpyExtensionArray``, also ``s.array`` of an object
  Series), bare or inside a dict or list: its repr ran the elements' ``__repr__``;
- a ``DatetimeIndex`` whose ``freq`` is the user's ``DateOffset`` subclass (alone or as
  a Series' index): its repr read the offset's ``freqstr`` property;
- a NumPy 2 ``StringDType`` array whose ``na_object`` is the user's object: its
  dtype's repr (in both tools' text) ran the object's ``__repr__``;
- a sparse array (or Series) whose ``fill_value`` is the user's ``np.float64``
  subclass: the dtype's repr ran its ``__repr__``;
- a ``numpy.void`` (a structured scalar with an object field) in an object column:
  pandas formatted it, running the field's ``__repr__``;
- a record of a structured array with a ``password`` field (``rec[0]``, ``rec[0][1]``,
  or the record kept in a variable or a list): NumPy's repr showed the field's value,
  though ``rec`` itself hides it;
- a connection string (``...;Password=...;``), a URL with ``api_key=`` in its query, a
  libpq DSN, JSON with ``client_secret``: hidden when described alone, shown when they
  were values of a dict among others (the text-wide pass did not see them);
- **Fix with agent** (``%%agent --fix``): the failed cell's source and traceback went to
  the model unredacted (an ``@cell`` mention of the same cell hides its secrets), and
  choosing the cell's variables read ``type(value).__name__`` (a metaclass property).

Tried and held on main (kept as checks): a ``weakref.proxy``/``ref`` to a hooked
object, a ``defaultdict`` whose factory's metaclass has hooks, a ``slice``
of one, a ``mappingproxy`` of a dict subclass, a ``datetime`` and a ``Timestamp`` with a
user ``tzinfo``, an exception holding one, a masked object array, ``ChainMap``/``deque``,
an ``Enum`` with ``__repr__``; the environment's raw data (``os.environ._data``,
``posix.environ``) and IPython's input history (``In``/``_ih``).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nb_tools.testing import FakeMessagesServer, reply

pytest.importorskip("pandas")
pytest.importorskip("jupyter_client")

ROOT = Path(__file__).resolve().parents[2]

ENV_SECRETS = {
    "ACME_DB_PASSWORD": "r5-envpw-7781",
    "STRIPE_KEY": "r5-stripe-key-99",
    "DATABASE_URL": "postgres://bob:r5-dbpw-991@db.example/x",
}


def _jupyter_helpers() -> None:
    helpers = str(ROOT / "tests" / "jupyter")
    if helpers not in sys.path:
        sys.path.insert(0, helpers)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One real kernel (nb_tools loaded) whose environment holds ``ENV_SECRETS``; its
    ``out(code)`` runs a cell and returns its stdout."""
    _jupyter_helpers()
    from kernel_helpers import Kernel

    cwd = tmp_path_factory.mktemp("kernel5")
    saved = {k: os.environ.get(k) for k in ENV_SECRETS}
    os.environ.update(ENV_SECRETS)
    try:
        k = Kernel(server, cwd)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    k.out = lambda code: k.ok(code).stdout
    k.mark = cwd / "ran.txt"
    k.out(
        textwrap.dedent(
            f"""
            %load_ext nb_tools
            import json, os
            from nb_tools.jupyter._kernel_tools import DescribeTool, ListVariablesTool
            MARK = {str(k.mark)!r}
            def hit(what):
                with open(MARK, "a") as f:
                    f.write(what + "\\n")
            def tools_text(name):
                d = DescribeTool().call(json.dumps({{"name": name}})).content
                v = ListVariablesTool().call(json.dumps({{"pattern": name}})).content
                return d + "\\n" + v
            """
        )
    )
    try:
        yield k
    finally:
        k.close()


HOOKED = """
import collections, datetime, enum, functools, types, weakref
import numpy as np, pandas as pd

class Hooked:
    def __repr__(self): hit("repr"); return "H"
    def __str__(self): hit("str"); return "H"
    def __format__(self, spec): hit("format"); return "H"
    def __eq__(self, other): hit("eq"); return False
    def __hash__(self): hit("hash"); return 1
    def __len__(self): hit("len"); return 1
    def __getattr__(self, name): hit("getattr " + name); raise AttributeError(name)

class Meta(type):
    def __repr__(cls): hit("metaclass repr"); return "M"
    def __getattr__(cls, name): hit("metaclass getattr " + name); raise AttributeError(name)

class Factory(metaclass=Meta):
    pass

class TZ(datetime.tzinfo):
    def utcoffset(self, d): hit("utcoffset"); return datetime.timedelta(0)
    def tzname(self, d): hit("tzname"); return "X"
    def dst(self, d): hit("dst"); return datetime.timedelta(0)
    def __repr__(self): hit("tz repr"); return "TZ"

class Loud(enum.Enum):
    A = 1
    def __repr__(self): hit("enum repr"); return "L"

class Every(pd.DateOffset):
    @property
    def freqstr(self): hit("freqstr"); return "E"

class UD(dict):
    def __repr__(self): hit("dict repr"); return "UD"

h = Hooked()
named_index = pd.DataFrame({"a": [1, 2]}); named_index.index.name = h
named_columns = pd.DataFrame({"a": [1, 2]}); named_columns.columns.name = h
named_levels = pd.DataFrame(
    {"a": [1]}, index=pd.MultiIndex.from_tuples([(1, 2)], names=[h, "b"])
)
bare_index = pd.Index([1, 2], name=h)
objects_ea = pd.array(np.array([h, 1], dtype=object))
object_series = pd.Series([h, 2], dtype=object)
ea_in_dict = {"k": objects_ea}
ea_in_list = [objects_ea]
void = np.array([(h,)], dtype=[("f", "O")])[0]
void_series = pd.Series([void, void], dtype=object)
void_frame = pd.DataFrame({"c": void_series})
freq_index = pd.date_range("2020-01-01", periods=3, freq=Every(days=1))
freq_series = pd.Series([1, 2, 3], index=freq_index)
class Half(np.float64):
    def __repr__(self): hit("float64 subclass repr"); return "F"
    def __str__(self): hit("float64 subclass str"); return "F"

sparse = pd.arrays.SparseArray([1.0, 2.0], dtype=pd.SparseDtype(np.float64, Half(0.5)))
sparse_series = pd.Series(sparse)
string_na = np.array(["a", "b"], dtype=np.dtypes.StringDType(na_object=h))
proxy = weakref.proxy(h)
ref = weakref.ref(h)
factory_dict = collections.defaultdict(Factory)
sliced = slice(h, 2)
proxied_mapping = types.MappingProxyType(UD(a=1))
aware = datetime.datetime(2020, 1, 1, tzinfo=TZ())
aware_ts = pd.Timestamp(aware)
error = ValueError(h)
masked = np.ma.array(np.array([h, 1], dtype=object))
chained = collections.ChainMap({"a": h})
queue = collections.deque([h])
loud = Loud.A
"""

DESCRIBED = [
    "named_index",
    "named_index.index",
    "named_columns",
    "named_levels",
    "bare_index",
    "objects_ea",
    "object_series.array",
    "ea_in_dict",
    "ea_in_list",
    "void_series",
    "void_frame",
    "freq_index",
    "freq_series",
    "string_na",
    "sparse",
    "sparse_series",
    "string_na.dtype",
    "proxy",
    "ref",
    "factory_dict",
    "Factory",
    "sliced",
    "proxied_mapping",
    "aware",
    "aware_ts",
    "error",
    "masked",
    "chained",
    "queue",
    "loud",
]


def test_describe_and_list_variables_run_no_hook_of_the_users(kernel: Any) -> None:
    kernel.out(HOOKED)
    mark: Path = kernel.mark
    mark.unlink(missing_ok=True)  # what building the objects ran is not the tools'
    ran: dict[str, str] = {}
    texts: dict[str, str] = {}
    for name in DESCRIBED:
        texts[name] = kernel.out(f"print(tools_text({name!r}))")
        if mark.exists():
            ran[name] = mark.read_text()
            mark.unlink()
    assert ran == {}
    # still useful: the shape and what is known without the values
    assert "DataFrame 2x1" in texts["named_index"]
    assert "not a builtin value" in texts["named_index"]
    assert "2 values" in texts["object_series.array"] or "object" in texts["object_series.array"]


def test_describe_hides_secrets_of_values_in_a_container(kernel: Any) -> None:
    """Each value as it is hidden when described alone, also among a dict's other
    values; the environment's raw data and the input history hide theirs too."""
    secrets = {
        "ado": ("Server=x;Database=y;User Id=u;Password=r5-ado-pw;", "r5-ado-pw"),
        "jdbc": ("jdbc:postgresql://h/db?user=u&password=r5-jdbc-pw", "r5-jdbc-pw"),
        "query": ("https://api.example.com/v1?api_key=r5qskey123&x=1", "r5qskey123"),
        "dsn": ("host=h user=u password=r5-dsn-pw dbname=d", "r5-dsn-pw"),
        "json": ('{"client_secret": "r5-json-sec"}', "r5-json-sec"),
        "call": ('login(user="u", passwd="r5-passwd")', "r5-passwd"),
    }
    values = {k: v for k, (v, _) in secrets.items()}
    kernel.out(
        f"settings = {values!r}\n"
        f"as_list = list(settings.values())\n"
        f"nested = {{'outer': settings}}\n"
        "import posix\n"
        "import numpy as np\n"
        "rec = np.array([('u', 'r5-rec-pw')], dtype=[('user', 'U5'), ('password', 'U12')])\n"
        "row = rec[0]\n"
        "rows = [rec[0]]\n"
        'typed = \'conn = connect(host="h", password="r5-typed-pw")\'\n'
    )
    texts = {
        name: kernel.out(f"print(tools_text({name!r}))")
        for name in (
            "settings",
            "as_list",
            "nested",
            "os.environ._data",
            "posix.environ",
            'os.environ._data[b"STRIPE_KEY"]',
            'posix.environ[b"DATABASE_URL"]',
            "In",
            "_ih",
            "rec[0]",
            "rec[0][1]",
            "rec.T[0]",
            "row",
            "rows",
        )
    }
    shown = {
        name: [s for s in [*(s for _, s in secrets.values()), *ENV_SECRETS.values()] if s in text]
        for name, text in texts.items()
    }
    shown["history"] = [s for s in ("r5-typed-pw",) if s in texts["In"] + texts["_ih"]]
    shown["records"] = [
        n for n in ("rec[0]", "rec[0][1]", "row", "rows") if "r5-rec-pw" in texts[n]
    ]
    assert {k: v for k, v in shown.items() if v} == {}
    assert "r5-dbpw-991" not in "".join(texts.values())


def test_describe_hides_secrets_of_common_file_and_command_shapes(kernel: Any) -> None:
    kernel.out(
        "shapes = {\n"
        "  'netrc': 'machine h login u password r5-netrc-pw',\n"
        "  'xml': '<password>r5-xml-pw</password>',\n"
        "  'mysql': 'mysql -uroot -pr5-mysql-pw db',\n"
        "  'curl': 'curl -u admin:r5-curl-pw https://h',\n"
        "  'pgpass': 'localhost:5432:db:user:r5-pgpass-pw',\n"
        "}\n"
    )
    text = kernel.out("print(tools_text('shapes'))")
    assert [s for s in text.split() if "r5-" in s] == []


def test_fix_this_error_sends_no_secret_and_runs_no_hook(kernel: Any, server: Any) -> None:
    """``%%agent --fix`` (the Fix with agent button) on a cell that failed: the request
    to the model carries the cell's source and traceback as an ``@cell`` mention would,
    secrets hidden (on main both went out as they were), and picking the cell's
    variables reads no attribute of theirs (on main ``type(value).__name__`` ran a
    metaclass's property)."""
    kernel.out(
        "class NamedMeta(type):\n"
        "    @property\n"
        "    def __name__(cls):\n"
        "        hit('metaclass __name__')\n"
        "        return 'N'\n"
        "class Odd(metaclass=NamedMeta):\n"
        "    pass\n"
        "odd = Odd()\n"
    )
    mark: Path = kernel.mark
    mark.unlink(missing_ok=True)
    failed = kernel.run(
        'db_args = dict(host="db", password="r5-fix-src-pw")\n'
        "print(odd)\n"
        'raise ConnectionError("cannot reach https://bob:r5-fix-tb-pw@db.example/x")'
    )
    assert failed.errors and failed.errors[0]["ename"] == "ConnectionError"
    server.push(reply("```python\nprint(odd)\n```"))
    n = len(server.requests)
    kernel.ok("%%agent --fix --new --approval deny\nplease")
    sent = json.dumps(server.requests[n].body["messages"])
    assert "r5-fix-src-pw" not in sent and "r5-fix-tb-pw" not in sent
    assert "ConnectionError" in sent and "db_args = dict(" in sent  # the rest still goes
    assert not mark.exists(), mark.read_text()
