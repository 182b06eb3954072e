"""``check``: does a GGUF tokenize like the tokenizer it was converted
from? Runs both on varied texts, shrinks every divergence to a minimal
string and names the stage at fault; without a source, flags metadata
that is likely stale or wrong.

>>> ref = load_reference("tokenizer.json")              # doctest: +SKIP
>>> result = check_texts(open_model("m.gguf"), ref, BUILTIN_TEXTS)  # doctest: +SKIP
"""

from .lane import SourceTokens
from .reference import INSTALL_HINT, AddedToken, CheckError, Reference, load_reference
from .run import STAGES, CheckResult, Divergence, MetadataWarning, ReferenceFailure, check_texts, shared_fraction
from .shrink import shrink
from .texts import BUILTIN_TEXTS, random_texts, read_texts

__all__ = ["AddedToken", "BUILTIN_TEXTS", "CheckError", "CheckResult", "Divergence", "INSTALL_HINT",
           "MetadataWarning", "Reference", "ReferenceFailure", "STAGES", "check_texts", "load_reference",
           "SourceTokens", "random_texts", "read_texts", "shared_fraction", "shrink"]
