"""`python -m mathlens.models.providers.selfcheck [NAME]`: prove an embedded model can generate.

The generation runs in a child process, so a llama.cpp build that crashes on this CPU (a segfault on
the first eval) is reported as a failed check instead of killing the caller. The first check of a
model also assembles and verifies its weights (see `mathlens.models.embedded`).
"""

from __future__ import annotations

import subprocess
import sys

from mathlens.models.embedded import DEFAULT_EMBEDDED

_CHILD = """
import sys
from mathlens.errors import UserError
from mathlens.models.embedded import get_embedded, weights_path
from llama_cpp import Llama
try:
    model = get_embedded(sys.argv[1])
    path = weights_path(model.name)
except UserError as exc:
    sys.stderr.write(str(exc))
    sys.exit(3)
llm = Llama(model_path=str(path), n_ctx=256, n_threads=2, chat_format=model.chat_format, verbose=False)
out = llm.create_chat_completion(messages=[{"role": "user", "content": "2+2="}], max_tokens=4, temperature=0)
sys.stdout.write("%s: tokens=%d\\n" % (model.name, out["usage"]["completion_tokens"]))
"""


def check(name: str = DEFAULT_EMBEDDED, timeout_s: float = 180.0) -> tuple[bool, str]:
    """Run one 4-token generation of embedded model `name` in a child process; (ok, message)."""
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, name], capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False, f"no answer within {timeout_s:.0f} s"
    if proc.returncode != 0:
        signal_note = " (killed by a signal: the llama.cpp build does not suit this CPU)" if proc.returncode < 0 else ""
        return False, f"exit status {proc.returncode}{signal_note}: {proc.stderr.strip()[-500:]}"
    return True, proc.stdout.strip()


def main() -> int:
    """Exit 0 when the model generates, 3 when its weights are missing or damaged, 1 otherwise."""
    ok, message = check(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_EMBEDDED)
    print(("embedded model ok: " if ok else "embedded model FAILED: ") + message)
    if ok:
        return 0
    return 3 if message.startswith("exit status 3:") else 1


if __name__ == "__main__":
    raise SystemExit(main())
