"""Make fixtures.json: Hugging Face transformers' renderings of chat templates.

For every template in the reference vocabularies (default and named ones)
and every common template TokenPrism ships (core/chat/common_templates/), each
conversation of conversations.json is rendered with and without the
generation prompt by transformers' own renderer
(``transformers.utils.chat_template_utils.render_jinja_template``, what
``apply_chat_template`` calls), with the special tokens' texts read from
the GGUF file by the ``gguf`` package (not by TokenPrism). The messages go
in as conversations.json has them (a ``"content": null`` stays None, as
transformers passes it). A template that raises records the error message
instead.

Run from the repository root, with transformers and jinja2 installed
(no torch needed):

    .venv/bin/python tests/data/chat/make_fixtures.py /work/shared/llama-vocab
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import transformers
from gguf import GGUFReader
from transformers.utils.chat_template_utils import render_jinja_template

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
VOCABS = ("command-r", "gemma-4", "phi-3", "qwen2", "qwen35")
TOKEN_KEYS = {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id",
              "sep": "seperator_token_id", "pad": "padding_token_id", "mask": "mask_token_id"}


def _string(reader: GGUFReader, key: str) -> str:
    f = reader.fields[key]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def gguf_templates(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    reader = GGUFReader(str(path))
    templates = {}
    for key in reader.fields:
        if key == "tokenizer.chat_template":
            templates["default"] = _string(reader, key)
        elif key.startswith("tokenizer.chat_template.") and key != "tokenizer.chat_templates":
            templates[key.split(".", 2)[2]] = _string(reader, key)
    tokens = reader.fields["tokenizer.ggml.tokens"]
    specials = {}
    for name, key in TOKEN_KEYS.items():
        f = reader.fields.get("tokenizer.ggml." + key)
        if f is not None:
            tid = int(f.parts[f.data[0]][0])
            if 0 <= tid < len(tokens.data):
                specials[name + "_token"] = bytes(tokens.parts[tokens.data[tid]]).decode("utf-8")
    return templates, specials


def main() -> None:
    vocab_dir = Path(sys.argv[1])
    conversations = json.loads((HERE / "conversations.json").read_text(encoding="utf-8"))
    sources: list[tuple[str, str, dict[str, str]]] = []
    for vocab in VOCABS:
        templates, specials = gguf_templates(vocab_dir / f"ggml-vocab-{vocab}.gguf")
        for name, source in sorted(templates.items()):
            sources.append((f"{vocab}:{name}", source, specials))
    # the shipped templates get Llama-style special tokens (they only read bos/eos)
    plain = {"bos_token": "<s>", "eos_token": "</s>"}
    for path in sorted((REPO / "core" / "chat" / "common_templates").glob("*.jinja")):
        sources.append((f"builtin:{path.stem}", path.read_text(encoding="utf-8"), plain))
    # a template that depends on the environment's settings (trim_blocks,
    # lstrip_blocks, loop controls, tojson without HTML escaping, namespace)
    sources.append(("test:environment", (HERE / "environment.jinja").read_text(encoding="utf-8"), plain))
    cases = []
    for label, source, specials in sources:
        for conv_name, conv in conversations.items():
            for gen in (False, True):
                case = {"template": label, "conversation": conv_name, "add_generation_prompt": gen,
                        "variables": specials}
                try:
                    rendered, _ = render_jinja_template(
                        conversations=[conv["messages"]], tools=conv.get("tools"),
                        documents=conv.get("documents"), chat_template=source,
                        add_generation_prompt=gen, **specials)
                    case["rendered"] = rendered[0]
                except Exception as e:  # the template refused this conversation
                    case["error"] = str(e)
                cases.append(case)
    out = {"made_with": f"transformers {transformers.__version__}", "cases": cases}
    (HERE / "fixtures.json").write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases, {sum('error' in c for c in cases)} errors")


if __name__ == "__main__":
    main()
