"""Run llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) for the
end-to-end tests of the prompt-based OpenAI backend, with one fix for this machine.

llama.cpp's AMX matrix kernels crash (general protection fault in libggml-cpu) on some
virtualised CPUs that report AMX; :mod:`tooluse.llama.model` therefore loads
models without the "extra buffer types" on such CPUs. The stock server has no option for
that, so this launcher applies the same setting before handing over to the server's own
``main()`` (same command-line arguments as ``python -m llama_cpp.server``).
"""

from __future__ import annotations

import os


def main() -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp.llama as llama_module
    from llama_cpp.server.__main__ import main as server_main

    from tooluse.llama.model import _cpu_has_amx

    if _cpu_has_amx():
        original = llama_module.llama_cpp.llama_model_default_params

        def params():  # type: ignore[no-untyped-def]
            p = original()
            if hasattr(p, "use_extra_bufts"):
                p.use_extra_bufts = False
            return p

        llama_module.llama_cpp.llama_model_default_params = params
    server_main()


if __name__ == "__main__":
    main()
