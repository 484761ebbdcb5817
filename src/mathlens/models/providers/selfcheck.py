"""`python -m mathlens.models.providers.selfcheck`: prove the embedded model can generate.

The generation runs in a child process, so a llama.cpp build that crashes on this CPU (a segfault on
the first eval) is reported as a failed check instead of killing the caller.
"""

from __future__ import annotations

import subprocess
import sys

_CHILD = """
import sys
from mathlens.models.providers.llamacpp import embedded_model_path
from llama_cpp import Llama
llm = Llama(model_path=str(embedded_model_path()), n_ctx=256, n_threads=2, chat_format="gemma", verbose=False)
out = llm.create_chat_completion(messages=[{"role": "user", "content": "2+2="}], max_tokens=4, temperature=0)
sys.stdout.write("tokens=%d\\n" % out["usage"]["completion_tokens"])
"""


def check(timeout_s: float = 180.0) -> tuple[bool, str]:
    """Run one 4-token generation in a child process; (ok, message)."""
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False, f"no answer within {timeout_s:.0f} s"
    if proc.returncode != 0:
        signal_note = " (killed by a signal: the llama.cpp build does not suit this CPU)" if proc.returncode < 0 else ""
        return False, f"exit status {proc.returncode}{signal_note}: {proc.stderr.strip()[-500:]}"
    return True, proc.stdout.strip()


def main() -> int:
    ok, message = check()
    print(("embedded model ok: " if ok else "embedded model FAILED: ") + message)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
