"""Make llama_ids.json: llama.cpp's token ids of every rendering in
fixtures.json that comes from a reference vocabulary's own template, with
special tokens parsed, without and with BOS/EOS added (``llama_tokenize``'s
add_special), asked of llama-cpp-python through tests/llama_oracle.py.

    TOKENPRISM_ORACLE_PY=/path/to/python-with-llama-cpp \\
        .venv/bin/python tests/data/chat/make_llama_ids.py /work/shared/llama-vocab
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORACLE = HERE.parents[1] / "llama_oracle.py"


def main() -> None:
    vocab_dir = Path(sys.argv[1])
    python = os.environ["TOKENPRISM_ORACLE_PY"]
    cases = json.loads((HERE / "fixtures.json").read_text(encoding="utf-8"))["cases"]
    by_vocab: dict[str, list[str]] = {}
    for c in cases:
        vocab = c["template"].split(":")[0]
        # "builtin" and "test" templates are not a reference vocabulary's own
        if (vocab_dir / f"ggml-vocab-{vocab}.gguf").is_file() and "rendered" in c:
            texts = by_vocab.setdefault(vocab, [])
            if c["rendered"] not in texts:
                texts.append(c["rendered"])
    out: dict[str, list[dict[str, object]]] = {}
    for vocab, texts in sorted(by_vocab.items()):
        path = str(vocab_dir / f"ggml-vocab-{vocab}.gguf")
        rows: list[dict[str, object]] = [{"text": t} for t in texts]
        for add_special in (False, True):
            flags = ["--parse-special"] + (["--add-special"] if add_special else [])
            p = subprocess.run([python, str(ORACLE), path, *flags], input=json.dumps(texts), capture_output=True,
                               text=True, check=True)
            for row, ids in zip(rows, json.loads(p.stdout)):
                row["add_special" if add_special else "plain"] = ids
        out[vocab] = rows
    (HERE / "llama_ids.json").write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
    print({v: len(r) for v, r in out.items()})


if __name__ == "__main__":
    main()
