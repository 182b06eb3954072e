"""Where a chat template comes from: the GGUF file's own (the default
``tokenizer.chat_template`` and named ones, ``tokenizer.chat_template.NAME``)
or a common one shipped with TokenPrism (``common_templates/*.jinja``) for files
that carry none."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from tokenprism.core import Model
from tokenprism.core.errors import TokenPrismError

DEFAULT = "default"
_KEY = "tokenizer.chat_template"


class TemplateNotFound(TokenPrismError):
    """No template by that name in the file nor among the common ones."""


@dataclass(frozen=True)
class ChatTemplate:
    name: str
    source: str
    #: "file" (from the GGUF), "builtin" (shipped with TokenPrism) or "path"
    origin: str


def file_templates(model: Model) -> dict[str, str]:
    """The file's templates by name, the default one as ``"default"``."""
    out: dict[str, str] = {}
    for key, value in model.gguf.metadata.items():
        if not isinstance(value.value, str):
            continue
        if key == _KEY:
            out[DEFAULT] = value.value
        elif key.startswith(_KEY + "."):
            out[key[len(_KEY) + 1:]] = value.value
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != DEFAULT, kv[0])))


def builtin_templates() -> dict[str, str]:
    """The common templates shipped with TokenPrism, by name (ChatML,
    Llama-3, Gemma, Mistral, Phi-3 and a Hermes-style tool-calling one)."""
    folder = resources.files(__package__).joinpath("common_templates")
    return {f.name[:-len(".jinja")]: f.read_text(encoding="utf-8")
            for f in sorted(folder.iterdir(), key=lambda f: f.name) if f.name.endswith(".jinja")}


def find_template(model: Model, name: str | None = None) -> ChatTemplate:
    """The file's template ``name`` (its default when None), else the
    shipped template of that name."""
    own = file_templates(model)
    wanted = name or DEFAULT
    if wanted in own:
        return ChatTemplate(wanted, own[wanted], "file")
    shipped = builtin_templates()
    if name is not None and name in shipped:
        return ChatTemplate(name, shipped[name], "builtin")
    have = ", ".join(own) or "none"
    common = ", ".join(shipped)
    if name is None:
        raise TemplateNotFound(f"{model.name} has no chat template; choose a common one with --template "
                               f"({common}) or give --template-file")
    raise TemplateNotFound(f"no template {name!r}: the file has {have}; common ones: {common}")
