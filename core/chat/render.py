"""Rendering a chat template the way Hugging Face ``transformers`` does.

``transformers``' ``apply_chat_template`` renders with Jinja2's
``ImmutableSandboxedEnvironment`` set up with ``trim_blocks``,
``lstrip_blocks`` and the loop-controls extension, a ``raise_exception``
and a ``strftime_now`` global, a ``tojson`` filter that is plain
``json.dumps`` (no HTML escaping, ``ensure_ascii`` off) and a
``namespace`` that refuses underscore names. :func:`render` sets up the
same, so its text equals ``transformers``' for the same template and
inputs (tests/core/test_chat_render.py checks this against fixtures that
``transformers`` made).

Templates come from files anyone can publish, so on top of the sandbox:

- a time bound: rendering runs on a worker thread that reads the clock
  as it loops and writes; if it has not stopped a moment past the deadline
  an exception is raised inside that thread (between two Python steps of
  the compiled template), and the caller gets :class:`ChatTemplateError`
  without waiting for it; either way the error names the line running;
- size bounds: the output is counted while it streams, and the operators
  and filters that can build a huge string in one C call (``*``, ``+``,
  ``~``, ``%``, ``**``, ``join``, ``center``, ``format``, ``replace``,
  ``indent``, and the ``str`` methods of the same kind) check the size of
  their result before making it;
- errors (syntax, sandbox, ``raise_exception``, bounds) name the
  template line.
"""

from __future__ import annotations

import ctypes
import json
import re
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable, Generator, Iterable, Iterator, Mapping, Sequence, cast

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace

from tokenprism.core.errors import TokenPrismError

#: seconds a rendering may take
DEFAULT_TIMEOUT = 2.0
#: characters a rendering may produce, on top of 8 per input character
BASE_OUTPUT_LIMIT = 1 << 20
#: the largest width, precision or exponent accepted in a format or power
_MAX_NUMBER = 1 << 20


class ChatTemplateError(TokenPrismError):
    """A template cannot be rendered: syntax error, ``raise_exception``,
    sandbox violation, time or size bound. ``line`` is the template line
    (1-based) when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"template line {line}: {message}" if line else message)
        self.detail = message
        self.line = line


class _Bound(Exception):
    """A size or time bound was crossed inside the template (raised in the
    rendering thread, turned into ChatTemplateError with the line)."""


class _TimeUp(BaseException):
    """Raised asynchronously in a rendering thread past its deadline (a
    BaseException so that no ``except Exception`` in Jinja swallows it)."""


_local = threading.local()


def _limit() -> int:
    return int(getattr(_local, "limit", BASE_OUTPUT_LIMIT))


def _check_deadline() -> None:
    deadline = getattr(_local, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise _TimeUp()


def _check_size(n: int, what: str) -> None:
    if n > _limit():
        raise _Bound(f"{what} would make {n:,} characters, more than the limit of {_limit():,}")


def _size(x: object) -> int:
    """A cheap upper estimate of the characters ``str(x)`` gives, for the
    values operators combine (strings, lists, numbers)."""
    if isinstance(x, str):
        return len(x)
    if isinstance(x, (list, tuple)):
        return len(x) + sum(_size(v) for v in x[:64]) * max(1, len(x) // 64 if len(x) > 64 else 1)
    return 32


# ---- the functions and filters a template can call --------------------------------------------

def _raise_exception(message: object) -> None:
    raise jinja2.exceptions.TemplateError(str(message))


def _tojson(x: object, ensure_ascii: bool = False, indent: int | str | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    # json.dumps as transformers' filter has it: Jinja's own escapes < > & '
    if isinstance(indent, int) and indent > 64:
        raise _Bound(f"tojson indent {indent} is too large")
    out = json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    _check_size(len(out), "tojson")
    return out


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class _TemplateDict:
    """``dict(...)`` and ``dict.fromkeys`` without handing the template the
    ``dict`` type itself (whose attributes lead out of the sandbox)."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, keys: Iterable[Any], value: Any = None) -> dict[Any, Any]:
        return dict.fromkeys(keys, value)


def _check_name(name: object) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(f"a namespace cannot hold the underscore name {name!r}")


class _TemplateNamespace(Namespace):
    """Jinja's ``namespace`` refusing underscore names, as transformers'."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # same signature trick as Namespace
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _check_name(name)
        Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _check_name(name)
        Namespace.__setitem__(self, name, value)


class _ClockedRange:
    """``range`` as the sandbox offers it (at most 100,000 items), that also
    looks at the clock while it is iterated, so that nested loops with
    empty bodies stop at the deadline; otherwise it behaves as the range
    (length, indexing, printing)."""

    def __init__(self, rng: range) -> None:
        self._range = rng

    def __iter__(self) -> Iterator[int]:
        for i in self._range:
            if not i & 255:
                _check_deadline()
            yield i

    def __reversed__(self) -> Iterator[int]:
        return reversed(self._range)

    def __len__(self) -> int:
        return len(self._range)

    def __getitem__(self, index: Any) -> Any:
        item = self._range[index]
        return _ClockedRange(item) if isinstance(item, range) else item

    def __contains__(self, value: object) -> bool:
        return value in self._range

    def __eq__(self, other: object) -> bool:
        return self._range == (other._range if isinstance(other, _ClockedRange) else other)

    def __hash__(self) -> int:
        return hash(self._range)

    def __repr__(self) -> str:
        return repr(self._range)


def _bounded_range(*args: int) -> _ClockedRange:
    rng = range(*args)
    if len(rng) > 100_000:
        raise jinja2.exceptions.SecurityError(f"range of {len(rng):,} items is too large (at most 100,000)")
    return _ClockedRange(rng)


_FORMAT_NUMBER = re.compile(r"\d{7,}")


def _check_format_string(fmt: object) -> None:
    # a width or precision of 7+ digits ("%0999999999d", "{:>999999999}")
    # makes a huge string in one C call
    if isinstance(fmt, str) and _FORMAT_NUMBER.search(fmt):
        raise _Bound("a format width or precision with 7 or more digits")


def _wrap_filter(name: str, original: Callable[..., Any], env: jinja2.Environment) -> Callable[..., Any]:
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        args_for_size = [a for a in args if not isinstance(a, (jinja2.runtime.Context, jinja2.nodes.EvalContext))]
        if name == "format" and args_for_size:
            _check_format_string(args_for_size[0])
        if name == "center" and len(args_for_size) > 1 and isinstance(args_for_size[1], int):
            _check_size(args_for_size[1], "center")
        if name == "indent" and len(args_for_size) > 1 and isinstance(args_for_size[1], int):
            _check_size(args_for_size[1] * max(1, _size(args_for_size[0]) // 8), "indent")
        if name == "replace" and len(args_for_size) > 2:
            value, old, new = args_for_size[0], args_for_size[1], args_for_size[2]
            count = len(str(value)) + 1 if old == "" else str(value).count(str(old))
            _check_size(_size(value) + count * _size(new), "replace")
        out = original(*args, **kwargs)
        if isinstance(out, str):
            _check_size(len(out), name)
        return out

    # Jinja passes the context/environment to filters marked for it
    for attr in ("jinja_pass_arg",):
        if hasattr(original, attr):
            setattr(bounded, attr, getattr(original, attr))
    return bounded


def _bounded_join(original: Callable[..., Any]) -> Callable[..., Any]:
    @jinja2.pass_eval_context
    def join(eval_ctx: jinja2.nodes.EvalContext, value: Iterable[Any], d: str = "", attribute: Any = None) -> Any:
        _check_deadline()
        items = list(value)
        _check_size(sum(_size(v) for v in items) + len(d) * len(items), "join")
        return original(eval_ctx, items, d, attribute)

    return join


# str methods that build a result much larger than their inputs
_GROWING_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "format",
                    "format_map"}


class _BoundedBuffer(list[Any]):
    """Where a macro, a ``set`` block or a filter block collects its output
    before returning it as one string: counted as it grows, so that a macro
    writing gigabytes is stopped before it returns them."""

    size = 0

    def append(self, item: Any) -> None:
        self.size += len(item) if isinstance(item, str) else 32
        if self.size > _limit():
            raise _Bound(f"a macro or block passed the limit of {_limit():,} characters")
        if not len(self) & 63:
            _check_deadline()
        super().append(item)

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.append(item)


class _BoundedCodeGenerator(CodeGenerator):
    """Compiles ``a ~ b`` into a size-checked join (Jinja compiles it into a
    plain ``str`` join no environment hook sees), and gives macros and
    blocks a buffer that counts what they write."""

    def buffer(self, frame: Frame) -> None:
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.bounded_buffer()")

    def visit_Concat(self, node: jinja2.nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class ChatEnvironment(ImmutableSandboxedEnvironment):
    """transformers' chat template environment, with size and time bounds."""

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "+", "%", "**"})

    def bounded_buffer(self) -> _BoundedBuffer:
        return _BoundedBuffer()

    def bounded_concat(self, parts: Sequence[Any]) -> str:
        strs = [str(p) for p in parts]
        _check_size(sum(map(len, strs)), "~")
        return "".join(strs)

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        _check_deadline()
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
                    _check_size(_size(seq) * max(n, 0), "*")
            return left * right
        if operator == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                _check_size(_size(left) + _size(right), "+")
            return left + right
        if operator == "%":
            if isinstance(left, str):
                _check_format_string(left)
            return left % right
        if operator == "**":
            if isinstance(right, (int, float)) and abs(right) > 1024 and isinstance(left, (int, float)) \
                    and abs(left) > 1:
                raise _Bound(f"the power {left!r} ** {right!r} is too large")
            return left**right
        return super().call_binop(context, operator, left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:  # checked when the template reads ``s.format``
            _check_format_string(value.__self__)
        return wrapped

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        name = getattr(__obj, "__name__", "")
        if isinstance(getattr(__obj, "__self__", None), str) and name in _GROWING_METHODS:
            base = __obj.__self__
            if name in ("format", "format_map"):
                _check_format_string(base)
            elif name in ("center", "ljust", "rjust", "zfill") and args and isinstance(args[0], int):
                _check_size(args[0], name)
            elif name == "expandtabs":
                size = args[0] if args and isinstance(args[0], int) else 8
                _check_size(len(base) * max(size, 1), name)
            elif name == "replace" and len(args) >= 2:
                count = len(base) + 1 if args[0] == "" else base.count(str(args[0]))
                _check_size(len(base) + count * _size(args[1]), name)
            elif name == "join" and args:
                items = list(args[0])
                _check_size(sum(_size(v) for v in items) + len(base) * len(items), name)
                args = (items, *args[1:])
        return super().call(__context, __obj, *args, **kwargs)


def _make_env() -> ChatEnvironment:
    env = ChatEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    for name in ("format", "center", "indent", "replace"):
        env.filters[name] = _wrap_filter(name, env.filters[name], env)
    env.filters["join"] = _bounded_join(env.filters["join"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    env.globals["range"] = _bounded_range
    return env


_ENV = _make_env()
_COMPILE_LOCK = threading.Lock()


@lru_cache(maxsize=32)
def _compile(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def compile_template(source: str) -> jinja2.Template:
    """The compiled template (cached); a syntax error becomes
    :class:`ChatTemplateError` with its line."""
    try:
        with _COMPILE_LOCK:
            return _compile(source)
    except jinja2.exceptions.TemplateSyntaxError as e:
        raise ChatTemplateError(f"syntax error: {e.message}", e.lineno) from None
    except RecursionError:
        raise ChatTemplateError("the template nests too deeply to compile") from None


def _template_line(tb: Any) -> int | None:
    """The last template line in a traceback (Jinja rewrites its frames so
    that they carry the template's line numbers, file ``<template>``)."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


@dataclass
class _Outcome:
    text: str | None = None
    error: BaseException | None = None
    line: int | None = None
    #: the rendering ended (text or error known): no interrupt is sent any more
    finished: bool = False


#: how long past the deadline the caller waits for the rendering to stop on
#: its own clock before it interrupts the thread (an interrupt is raised at
#: any Python step, also in the code that reports the rendering's end)
_GRACE = 0.25


def _run(template: jinja2.Template, variables: Mapping[str, Any], limit: int, deadline: float,
         out: _Outcome) -> None:
    try:
        _render_into(template, variables, limit, deadline, out)
    except _TimeUp as e:
        # the caller's interrupt arrived while the end was being reported:
        # the first outcome stands
        if out.error is None and out.text is None:
            out.error, out.line = e, _frame_line(template, e.__traceback__)
    finally:
        out.finished = True


def _frame_line(template: jinja2.Template, tb: Any) -> int | None:
    """The template line of the innermost compiled-template frame in ``tb``."""
    line = _template_line(tb)
    return template.get_corresponding_lineno(line) if line is not None else None


def _render_into(template: jinja2.Template, variables: Mapping[str, Any], limit: int, deadline: float,
                 out: _Outcome) -> None:
    _local.limit = limit
    _local.deadline = deadline
    parts: list[str] = []
    total = 0
    # a generator (closed early when the output passes the limit)
    stream = cast(Generator[str, None, None], template.generate(**variables))
    try:
        for chunk in stream:
            total += len(chunk)
            if total > limit:
                line = _suspended_line(template, stream)
                out.error, out.line = _Bound(f"the rendering passed the limit of {limit:,} characters"), line
                stream.close()
                return
            parts.append(chunk)
            if len(parts) & 63 == 0 and time.monotonic() > deadline:
                # checked here, between two chunks, the clock is outside the
                # template's frames: the line is where the paused rendering is
                line = _suspended_line(template, stream)
                out.error, out.line = _TimeUp(), line
                stream.close()
                return
        out.text = "".join(parts)
    except BaseException as e:  # reported to the caller's thread, which raises it
        # Jinja maps the compiled code's lines back to the template's only
        # for an Exception; _TimeUp is mapped here
        line = _template_line(e.__traceback__) if isinstance(e, Exception) else _frame_line(template, e.__traceback__)
        out.error, out.line = e, line


def _suspended_line(template: jinja2.Template, stream: Any) -> int | None:
    """The template line where the paused rendering ``stream`` last wrote
    (the innermost template generator it delegates to)."""
    line = None
    gen = stream
    while gen is not None:
        frame = getattr(gen, "gi_frame", None)
        if frame is not None and frame.f_code.co_filename == "<template>":
            line = template.get_corresponding_lineno(frame.f_lineno)
        gen = getattr(gen, "gi_yieldfrom", None)
    return line


def _running_line(template: jinja2.Template, thread: threading.Thread) -> int | None:
    """The template line ``thread`` is executing now: the innermost frame
    of the compiled template on its stack (Jinja's debug map turns the
    compiled code's line into the template's)."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_filename == "<template>":
            return template.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return None


def _interrupt(thread: threading.Thread) -> None:
    """Raise _TimeUp inside ``thread`` at its next Python step."""
    ident = thread.ident
    if ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(_TimeUp))


def render(source: str, variables: Mapping[str, Any], timeout: float = DEFAULT_TIMEOUT,
           max_chars: int | None = None) -> str:
    """Render the template ``source`` with ``variables`` (``messages``,
    ``tools``, ``add_generation_prompt``, ``bos_token``...), bounded in
    time (``timeout`` seconds) and output size (``max_chars``, by default
    1 Mi characters plus 8 per character of input). Every failure is a
    :class:`ChatTemplateError`."""
    template = compile_template(source)
    if max_chars is None:
        max_chars = BASE_OUTPUT_LIMIT + 8 * len(json.dumps(variables, default=str, ensure_ascii=False))
    out = _Outcome()
    deadline = time.monotonic() + timeout
    worker = threading.Thread(target=_run, args=(template, variables, max_chars, deadline, out),
                              name="chat-template", daemon=True)
    worker.start()
    worker.join(timeout + _GRACE)
    if worker.is_alive() and not out.finished:
        _interrupt(worker)
        worker.join(0.5)
        if worker.is_alive():  # stuck inside one C call: left to finish on its own
            raise ChatTemplateError(f"rendering took longer than {timeout:g} s", _running_line(template, worker))
    e = out.error
    if e is None:
        assert out.text is not None
        return out.text
    if isinstance(e, _TimeUp):
        raise ChatTemplateError(f"rendering took longer than {timeout:g} s", out.line)
    if isinstance(e, _Bound):
        raise ChatTemplateError(str(e), out.line)
    if isinstance(e, jinja2.exceptions.SecurityError):
        raise ChatTemplateError(f"sandbox: {e}", out.line)
    if isinstance(e, jinja2.exceptions.TemplateSyntaxError):
        raise ChatTemplateError(f"syntax error: {e.message}", e.lineno)
    if isinstance(e, jinja2.exceptions.TemplateError):
        raise ChatTemplateError(str(e), out.line)
    if isinstance(e, RecursionError):
        raise ChatTemplateError("the template recursed too deeply", out.line)
    if isinstance(e, MemoryError):
        raise ChatTemplateError("the template ran out of memory", out.line)
    if isinstance(e, Exception):
        raise ChatTemplateError(f"{type(e).__name__}: {e}", out.line)
    raise e
