"""The read-only programs and, for each, the options it may be given: allow-lists, not
deny-lists. An option that is not listed makes the call not read-only, so a new release
that adds a writing option stays refused until someone lists it. Options that read a
list of file names from a file (``--files0-from``, ``file -f``) are left out: the names
inside could lead anywhere.

Each check returns ``None`` when the arguments are read-only, else the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nb_tools.sandbox import is_secret

__all__ = ["PROGRAMS", "Opts", "path_problem"]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Opts:
    """A program's option syntax (getopt_long style) and what its operands are."""

    flags: str = ""  # short options without a value
    values: str = ""  # short options with a value (attached or next word)
    long: frozenset[str] = frozenset()  # --name
    long_values: frozenset[str] = frozenset()  # --name=V or --name V
    long_optional: frozenset[str] = frozenset()  # --name or --name=V
    numeric: bool = False  # -5 (head, tail, grep)
    max_operands: int | None = None
    paths: bool = True  # operands and option values name files
    globs: bool = False  # every option harmless: a glob expanding to "-x" is fine
    pattern_first: bool = False  # first operand is a pattern unless -e/-f given


# Reading a secret of the protection table needs a click (the sandbox hides them as well);
# so does a repository's config by name (the sandbox shows it without its credentials).
_GIT_CONFIG = re.compile(r"(^|[/:=])\.git/config(/|$)")


def path_problem(value: str) -> str | None:
    """Why ``value`` may name something outside the workspace or a protected file."""
    if value in ("", "-", "/dev/null"):
        return None
    if value.startswith("/"):
        return f"{value!r} is an absolute path (outside the workspace)"
    if value.startswith("~"):
        return f"{value!r} is in the home folder"
    if ".." in value.split("/"):
        return f"{value!r} may leave the workspace through '..'"
    if is_secret(re.split(r"[/:=]", value.rstrip("/"))) or _GIT_CONFIG.search(value):
        return f"{value!r} is a protected file"
    return None


def parse(prog: str, o: Opts, args: Sequence[str]) -> tuple[str | None, list[str], list[str]]:
    """(problem, operands, option values), getopt_long style (options may follow operands)."""
    operands: list[str] = []
    values: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            operands += args[i + 1 :]
            break
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            if name in o.long_values:
                if not eq:
                    i += 1
                    if i >= len(args):
                        return f"{prog} --{name} needs a value", operands, values
                    val = args[i]
                values.append(val)
            elif name in o.long_optional:
                if eq:
                    values.append(val)
            elif not (name in o.long and not eq):
                return f"{prog}: option --{name} is not on its read-only list", operands, values
        elif a.startswith("-") and len(a) > 1:
            if o.numeric and a[1:].isdigit():
                i += 1
                continue
            j = 1
            while j < len(a):
                c = a[j]
                if c in o.values:
                    val = a[j + 1 :]
                    if not val:
                        i += 1
                        if i >= len(args):
                            return f"{prog} -{c} needs a value", operands, values
                        val = args[i]
                    values.append(val)
                    break
                if c not in o.flags and not (o.numeric and c.isdigit()):
                    return f"{prog}: option -{c} is not on its read-only list", operands, values
                j += 1
        else:
            operands.append(a)
        i += 1
    if o.max_operands is not None and len(operands) > o.max_operands:
        return (
            f"{prog} takes at most {o.max_operands} file operand(s) here "
            "(another would be written)",
            operands,
            values,
        )
    return None, operands, values


_GREP = Opts(
    flags="EFGPiywxczLlnhHoqsvabrRUITZV",
    values="efmABCdD",
    long=_set(
        "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
        "word-regexp line-regexp null-data no-messages invert-match version help "
        "byte-offset line-number line-buffered with-filename no-filename only-matching "
        "quiet silent recursive dereference-recursive files-without-match "
        "files-with-matches count initial-tab null text"
    ),
    long_values=_set(
        "regexp file max-count label binary-files devices directories exclude "
        "exclude-from exclude-dir include after-context before-context context"
    ),
    long_optional=_set("color colour"),
    numeric=True,
    globs=True,
    pattern_first=True,
)
_RG = Opts(
    flags="iSswxvnNlcoFUHIqLabp0.uj",
    values="egtTABCmdMErfj",
    long=_set(
        "ignore-case smart-case case-sensitive word-regexp line-regexp invert-match "
        "line-number no-line-number files-with-matches files-without-match count "
        "count-matches only-matching fixed-strings multiline multiline-dotall "
        "with-filename no-filename quiet follow text binary pretty null null-data "
        "hidden unrestricted no-ignore no-ignore-vcs no-ignore-dot no-ignore-parent "
        "no-ignore-global no-ignore-exclude no-ignore-files no-messages heading "
        "no-heading vimgrep column byte-offset json stats files type-list trim "
        "passthru crlf glob-case-insensitive one-file-system no-unicode sort-files "
        "line-buffered block-buffered invert-match no-config auto-hybrid-regex "
        "no-require-git include-zero no-follow no-pcre2-unicode pcre2 debug trace"
    ),
    long_values=_set(
        "regexp glob iglob type type-not after-context before-context context "
        "max-count max-depth max-columns encoding replace file max-filesize sort sortr "
        "color colors context-separator field-match-separator field-context-separator "
        "path-separator threads engine type-add type-clear ignore-file dfa-size-limit "
        "regex-size-limit max-columns-preview"
    ),
    pattern_first=True,
)  # no --pre, --pre-glob, --hostname-bin (run programs), -z/--search-zip (runs gzip...)
_SORT = Opts(
    flags="bdfgiMhnRrVcCsuzm",
    values="ktS",
    long=_set(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort "
        "reverse version-sort merge stable unique zero-terminated debug"
    ),
    long_values=_set("key field-separator buffer-size sort random-source parallel batch-size"),
    long_optional=_set("check"),
)  # no -o/--output, -T/--temporary-directory, --compress-program
_FIND_FLAGS = _set(
    "-print -print0 -ls -prune -depth -empty -true -false -not ! -a -and -o -or ( ) , "
    "-follow -xdev -mount -daystart -readable -writable -executable -noleaf -nouser "
    "-nogroup -quit -ignore_readdir_race -noignore_readdir_race -warn -nowarn -H -L -P"
)
_FIND_VALUES = _set(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size "
    "-mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -user -group -uid -gid "
    "-perm -links -inum -samefile -maxdepth -mindepth -printf -regextype -lname -ilname "
    "-used -fstype"
)  # no -exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls -files0-from


def find_check(args: Sequence[str]) -> tuple[str | None, list[str]]:
    """find: start paths, then primaries from the allow-list; returns the paths to check."""
    paths: list[str] = []
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P"):
        i += 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("!", "(", ")"):
        paths.append(args[i])
        i += 1
    while i < len(args):
        a = args[i]
        if a in _FIND_VALUES or re.fullmatch(r"-newer[aBcm][aBcmt]", a):
            if i + 1 >= len(args):
                return f"find {a} needs a value", paths
            names_file = a in ("-anewer", "-cnewer", "-samefile") or a.startswith("-newer")
            if names_file and not a.endswith("t"):
                paths.append(args[i + 1])
            i += 2
            continue
        if a not in _FIND_FLAGS:
            return f"find: {a} is not on its read-only list", paths
        i += 1
    return None, paths


_GIT_READ = _set(
    "status log diff show rev-parse ls-files ls-tree blame shortlog describe show-ref "
    "merge-base name-rev rev-list count-objects cat-file whatchanged"
)
# Options that run a program, write a file or leave the repository, in any subcommand
# (refused as written, with a value or abbreviated).
_GIT_REFUSED_LONG = [
    "--output", "--ext-diff", "--textconv", "--open-files-in-pager", "--exec",
    "--upload-pack", "--receive-pack", "--show-signature", "--filters", "--paginate",
    "--contents", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
    "--config-env", "--exec-path", "--output-directory", "--output-indicator-new",
]  # fmt: skip


def git_check(args: Sequence[str]) -> str | None:
    """git: only listing subcommands, no global options but --no-pager, and no option
    that runs a program (--ext-diff, --textconv, -O, --show-signature) or writes."""
    i = 0
    while i < len(args) and args[i] in ("--no-pager", "--no-optional-locks", "-P"):
        i += 1
    if i < len(args) and args[i].startswith("-"):
        return f"git: global option {args[i]} is not read-only (-c, -C, --git-dir...)"
    if i >= len(args):
        return None
    sub, rest = args[i], list(args[i + 1 :])
    for a in rest:
        if a == "--":
            break
        name = a.split("=", 1)[0]
        if (
            a.startswith(("-O", *_GIT_REFUSED_LONG))
            or (len(name) > 3 and any(r.startswith(name) for r in _GIT_REFUSED_LONG))
            or "%G" in a
        ):
            return f"git {sub}: option {a} is not read-only (abbreviations count)"
    if sub == "branch":
        ok = _set("-a -r -v -vv -l --all --remotes --list --verbose --show-current --no-color")
        bad = [a for a in rest if a not in ok]
        return f"git branch {bad[0]} changes branches" if bad else None
    if sub in ("remote", "tag", "stash"):
        allowed = {"remote": ([], ["-v"]), "tag": ([], ["-l"], ["--list"]), "stash": (["list"],)}
        return None if rest in allowed[sub] else f"git {sub} {' '.join(rest)} may write"
    if sub not in _GIT_READ:
        return f"git {sub} is not a read-only git command"
    return _git_options(sub, rest)


# The options of the listing subcommands that only change what is shown (an allow-list:
# not --output, --ext-diff, --textconv, -O, --no-index, --show-signature, --contents...).
_GIT_LONG = _set(
    "oneline pretty format abbrev-commit no-abbrev-commit abbrev stat shortstat numstat "
    "name-only name-status patch no-patch graph decorate no-decorate decorate-refs "
    "all branches tags remotes reverse max-count skip since after until before author "
    "committer grep all-match invert-grep regexp-ignore-case basic-regexp extended-regexp "
    "fixed-strings perl-regexp merges no-merges first-parent follow date relative-date "
    "topo-order date-order author-date-order left-right cherry-pick cherry-mark boundary "
    "summary raw color no-color word-diff word-diff-regex color-words color-moved unified "
    "cached staged minimal patience histogram diff-algorithm ignore-space-change "
    "ignore-all-space ignore-blank-lines ignore-space-at-eol ignore-cr-at-eol no-renames "
    "find-renames find-copies find-copies-harder check dirstat compact-summary full-index "
    "binary src-prefix dst-prefix no-prefix default-prefix relative no-relative text "
    "exit-code quiet merge-base diff-filter pickaxe-all pickaxe-regex function-context "
    "no-notes notes show-notes encoding expand-tabs no-expand-tabs log-size full-diff "
    "simplify-by-decoration ancestry-path walk-reflogs children parents mailmap "
    "use-mailmap no-mailmap source no-walk do-walk count no-ext-diff no-textconv "
    "ignore-submodules dirstat-by-file patch-with-stat patch-with-raw cc "
    "combined-all-paths diff-merges no-diff-merges stat-width stat-name-width "
    "stat-graph-width stat-count name-rev line-prefix irreversible-delete "
    "short long branch porcelain untracked-files ignored column no-column "
    "ahead-behind no-ahead-behind renames show-stash verbose null z "
    "abbrev-ref verify show-toplevel git-dir git-common-dir absolute-git-dir "
    "is-inside-work-tree is-inside-git-dir is-bare-repository show-prefix show-cdup "
    "symbolic symbolic-full-name show-superproject-working-tree local-env-vars "
    "deleted modified others stage unmerged killed exclude-standard directory "
    "no-empty-directory full-name error-unmatch eol deduplicate sparse recurse-submodules "
    "porcelain line-porcelain incremental show-name show-number show-email root "
    "ignore-rev score-debug name-only full-tree only-trees long tags contains "
    "exact-match always dirty broken candidates match exclude first-parent "
    "heads hash dereference sort objects objects-only batch-check batch "
    "human-readable s e t p ignore-missing committed"
)
_GIT_SHORT = "psuzmcrtwbRDEFPiIvqlkdoaeNfgh0123456789"  # -p -s -u -z ... clustered flags
_GIT_SHORT_VALUE = "nLSGUlX"  # -n5, -L1,5:file, -S text, -G regex, -U3


def _git_options(sub: str, rest: Sequence[str]) -> str | None:
    operands: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "--":
            operands += rest[i + 1 :]
            break
        if a.startswith("--"):
            name, _, value = a[2:].partition("=")
            if name not in _GIT_LONG:
                return f"git {sub}: option --{name} is not on its read-only list"
            if value:
                operands.append(value)
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                if c in _GIT_SHORT_VALUE:
                    if j + 1 == len(a):
                        i += 1
                    break
                if c in "MCB" and re.fullmatch(r"\d*%?", a[j + 1 :]):
                    break
                if c not in _GIT_SHORT:
                    return f"git {sub}: option -{c} is not on its read-only list"
                j += 1
        else:
            operands.append(a)
        i += 1
    for op in operands:
        problem = path_problem(op)
        if problem:
            return f"git {sub}: {problem}"
    return None


def jq_problem(program: str) -> str | None:
    if re.search(r"\benv\b|\$ENV|\$__prog|\binput_filename\b|\bimport\b|\binclude\b|"
                 r"\bmodulemeta\b|\bget_search_list\b", program):  # fmt: skip
        return "jq: the filter reads the environment or loads modules"
    return None


_XXD_FLAGS = _set("-a -b -C -d -E -e -i -p -ps -u -v -h -autoskip -bits -capitalize -uppercase")
_XXD_VALUES = _set("-c -g -l -o -s -n -cols -groupsize -len -seek -name")


def xxd_check(args: Sequence[str]) -> tuple[str | None, list[str]]:
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _XXD_VALUES:
            i += 2
            continue
        if a in _XXD_FLAGS or re.fullmatch(r"-[cglos][+-]?(0x)?[0-9a-fA-F]+", a):
            i += 1
            continue
        if a.startswith("-") and a != "-":
            return f"xxd: option {a} is not on its read-only list (-r writes)", operands
        operands.append(a)
        i += 1
    if len(operands) > 1:
        return "xxd with two operands writes the second", operands
    return None, operands


PROGRAMS: dict[str, Opts] = {
    "cat": Opts(flags="AbeEnstTuv", long=_set(
        "show-all number-nonblank show-ends number squeeze-blank show-tabs "
        "show-nonprinting help version"), globs=True),
    "ls": Opts(
        flags="aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        values="ITw",
        long=_set(
            "all almost-all author escape ignore-backups directory dired file-type "
            "full-time group-directories-first no-group human-readable si "
            "dereference-command-line dereference-command-line-symlink-to-dir inode "
            "kibibytes dereference numeric-uid-gid literal hide-control-chars "
            "show-control-chars quote-name reverse recursive size context zero help version"
        ),
        long_values=_set(
            "block-size format hide indicator-style ignore quoting-style sort time "
            "time-style tabsize width"
        ),
        long_optional=_set("color classify hyperlink"),
        globs=True,
    ),
    "head": Opts(flags="qvz", values="nc", long=_set("quiet silent verbose zero-terminated"),
                 long_values=_set("bytes lines"), numeric=True, globs=True),
    "tail": Opts(flags="fFqvz", values="ncs", long=_set(
        "quiet silent verbose zero-terminated retry"), long_values=_set(
        "bytes lines pid sleep-interval max-unchanged-stats"), long_optional=_set("follow"),
        numeric=True, globs=True),
    "wc": Opts(flags="clmwL", long=_set("bytes chars lines words max-line-length"),
               long_values=_set("total"), globs=True),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _RG,
    "sort": _SORT,
    "uniq": Opts(flags="cdDiuz", values="fsw", long=_set(
        "count repeated ignore-case unique zero-terminated"), long_values=_set(
        "skip-fields skip-chars check-chars"), long_optional=_set("all-repeated group"),
        max_operands=1),
    "file": Opts(flags="bcEhiklLNnrsS0", values="eFP", long=_set(
        "brief mime mime-type mime-encoding dereference no-dereference keep-going raw "
        "print0 extension apple no-pad no-buffer special-files"),
        long_values=_set("exclude exclude-quiet separator parameter")),
    "stat": Opts(flags="Lft", values="c", long=_set("dereference file-system terse"),
                 long_values=_set("format printf cached"), globs=True),
    "du": Opts(flags="0abchHklLmsSxD", values="dBtX", long=_set(
        "null all apparent-size bytes total human-readable si summarize separate-dirs "
        "one-file-system inodes count-links dereference dereference-args no-dereference"),
        long_values=_set("max-depth block-size threshold exclude exclude-from time-style"),
        long_optional=_set("time")),
    "df": Opts(flags="ahHiklPTv", values="Btx", long=_set(
        "all human-readable si inodes local portability print-type total no-sync"),
        long_values=_set("block-size type exclude-type"), long_optional=_set("output")),
    "tree": Opts(flags="adlfxiqNQpugshDFvtcUrCnJA", values="LPI", long=_set(
        "prune noreport du si dirsfirst gitignore matchdirs ignore-case"),
        long_values=_set("filelimit charset sort")),
    "realpath": Opts(flags="emLPqsz", long=_set(
        "canonicalize-existing canonicalize-missing logical physical quiet strip "
        "no-symlinks zero"), long_values=_set("relative-to relative-base")),
    "readlink": Opts(flags="femnqsvz", long=_set(
        "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
        "verbose zero")),
    "diff": Opts(
        flags="iEZbwBatTsqcuenyNpdr",
        values="CUFIxXSWD",
        long=_set(
            "normal brief report-identical-files ed rcs side-by-side left-column "
            "suppress-common-lines show-c-function expand-tabs initial-tab "
            "suppress-blank-empty new-file unidirectional-new-file ignore-case "
            "ignore-tab-expansion ignore-trailing-space ignore-space-change "
            "ignore-all-space ignore-blank-lines text strip-trailing-cr recursive "
            "no-dereference ignore-file-name-case no-ignore-file-name-case "
            "speed-large-files minimal"
        ),
        long_values=_set(
            "width show-function-line label tabsize ignore-matching-lines exclude "
            "exclude-from starting-file from-file to-file horizon-lines line-format "
            "old-line-format new-line-format unchanged-line-format ifdef palette"
        ),
        long_optional=_set("context unified color"),
    ),  # no -l/--paginate (runs pr)
    "cut": Opts(flags="snz", values="bcfd", long=_set(
        "complement only-delimited zero-terminated"), long_values=_set(
        "bytes characters fields delimiter output-delimiter"), globs=True),
    "tr": Opts(flags="cCdst", long=_set("complement delete squeeze-repeats truncate-set1"),
               paths=False),
    "nl": Opts(flags="p", values="bdfhilnsvw", long=_set("no-renumber"), long_values=_set(
        "body-numbering section-delimiter footer-numbering header-numbering "
        "line-increment join-blank-lines number-format starting-line-number "
        "number-width number-separator")),
    "od": Opts(flags="bcdfilosxv", values="AjNSwt", long=_set("traditional output-duplicates"),
               long_values=_set("address-radix skip-bytes read-bytes format strings width "
                                "endian")),
    "tac": Opts(flags="br", values="s", long=_set("before regex"),
                long_values=_set("separator")),
    "comm": Opts(flags="123iz", long=_set("check-order nocheck-order total zero-terminated"),
                 long_values=_set("output-delimiter")),
    "cmp": Opts(flags="blsi", values="in", long=_set("print-bytes verbose quiet silent"),
                long_values=_set("ignore-initial bytes")),
    "md5sum": Opts(flags="btz", long=_set("binary text tag zero")),
    "sha1sum": Opts(flags="btz", long=_set("binary text tag zero")),
    "sha256sum": Opts(flags="btz", long=_set("binary text tag zero")),
    "sha512sum": Opts(flags="btz", long=_set("binary text tag zero")),
    "cksum": Opts(flags="", long=_set("tag untagged raw")),
    "column": Opts(flags="tnxeJ", values="csoNR", long=_set("table json fillrows"),
                   long_values=_set("separator output-separator table-columns")),
    "rev": Opts(),
    "jq": Opts(
        flags="nrjasCMSecRe",
        long=_set(
            "null-input raw-output join-output raw-output0 ascii-output slurp "
            "compact-output color-output monochrome-output sort-keys exit-status "
            "raw-input tab seq stream stream-errors unbuffered args jsonargs"
        ),
        long_values=_set("indent"),
    ),  # --arg/--argjson take two values: handled by the jq check
    # no file operands at all
    "echo": Opts(paths=False),
    "printf": Opts(paths=False),
    "pwd": Opts(flags="LP", max_operands=0),
    "true": Opts(paths=False),
    "false": Opts(paths=False),
    "which": Opts(flags="as", paths=False),
    "basename": Opts(flags="az", values="s", long=_set("multiple zero"),
                     long_values=_set("suffix"), paths=False),
    "dirname": Opts(flags="z", long=_set("zero"), paths=False),
    "seq": Opts(flags="w", values="fs", long=_set("equal-width"),
                long_values=_set("format separator"), paths=False),
    "sleep": Opts(paths=False),
    "whoami": Opts(max_operands=0),
    "id": Opts(flags="gGnruz", long=_set("group groups name real user zero"), paths=False),
    "uname": Opts(flags="asnrvmpio", long=_set(
        "all kernel-name nodename kernel-release kernel-version machine processor "
        "hardware-platform operating-system"), max_operands=0),
    "nproc": Opts(long=_set("all"), long_values=_set("ignore"), max_operands=0),
    "arch": Opts(max_operands=0),
    "date": Opts(flags="uRI", values="dr", long=_set("utc universal rfc-email"),
                 long_values=_set("date reference"), long_optional=_set(
                 "iso-8601 rfc-3339"), paths=True),  # no -s/--set, -f/--file
    "type": Opts(flags="aftpP", paths=False),
    "test": Opts(paths=True),
    "[": Opts(paths=True),
    "cd": Opts(max_operands=1),
}  # fmt: skip
