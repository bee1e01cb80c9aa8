"""llama-cpp-python as it comes, for the peers and floors the benchmarks measure against,
with the one load setting tooluse makes too: on a CPU that reports AMX, the model loads
without llama.cpp's extra buffer types, whose AMX kernels crash some virtualised CPUs
(SIGSEGV in ``ggml_backend_amx_mul_mat`` at the first decode; ``tooluse.llama.model``
does the same). Elsewhere nothing changes. The CPU check is written here again, not
imported from tooluse: the floors time their imports, which stay llama-cpp-python's alone.

    python bench/peers/plain_llama.py -m llama_cpp.server --model PATH ...   # a module, patched

and, in a process that imports it: ``import plain_llama; plain_llama.patch()`` before the
first ``llama_cpp.Llama``.
"""

from __future__ import annotations

import runpy
import sys
from typing import Any


def cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return "amx_int8" in line.split()
    except OSError:
        pass
    return False


def patch() -> None:
    """Load models without the extra buffer types where the CPU reports AMX."""
    if not cpu_has_amx():
        return
    import llama_cpp

    bindings: Any = llama_cpp.llama_cpp
    original = bindings.llama_model_default_params

    def params() -> Any:
        p = original()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = False
        return p

    bindings.llama_model_default_params = params


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "-m":
        raise SystemExit("usage: python bench/peers/plain_llama.py -m MODULE [ARGS...]")
    module = sys.argv[2]
    sys.argv = [module, *sys.argv[3:]]
    patch()
    runpy.run_module(module, run_name="__main__", alter_sys=True)
