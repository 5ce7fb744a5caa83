#!/usr/bin/env bash
# The test command's compiled leg (scripts/test.sh runs it last): build the opt-in compiled
# runtime (scripts/build_compiled.py; cached in .cache/mypyc-KEY/ while the runtime's sources
# and mypy are the same, so a rerun only checks the key), then run against it the tests that
# say it is safe (docs/compiled.md): pure vs compiled agreement and fuzz, the corpus, depth
# 10^5, trace, the scan-meter and linear-work tests (of tests/test_bad_input.py: the linear,
# deep and hostile ones; the leg is held to ~8 minutes from a cold cache), and the compiled
# deltas' and whole-output route's own: the message build, assemble's guards, the route
# against the engine on the corpus. TOOLGRAMMAR_REQUIRE_COMPILED=1 makes a run
# without the build fail rather than skip.
set -euo pipefail
cd "$(dirname "$0")/.."
COMPILED_DIR="$(python scripts/build_compiled.py --no-install)"
env -u TOOLGRAMMAR_PURE_PYTHON TOOLGRAMMAR_COMPILED_DIR="$COMPILED_DIR" \
    TOOLGRAMMAR_REQUIRE_COMPILED=1 python -m pytest -q \
    tests/test_compiled.py tests/test_corpus.py tests/test_depth.py tests/test_trace.py \
    tests/runtime/test_scan_meter.py tests/runtime/test_linear_repeats.py \
    tests/test_bad_input.py \
    tests/runtime/test_message_build.py \
    tests/test_api_cli.py::test_assemble_refuses_what_is_not_a_delta_in_one_line \
    tests/test_whole_output.py::test_the_corpus_reads_the_same_with_the_route_off \
    tests/runtime/test_coerce.py::test_deep_text_falls_back_to_text \
    tests/runtime/test_coerce.py::test_deep_json_value_is_returned_unchanged \
    tests/runtime/test_schemas.py::test_deep_schema_is_no_schema \
    -k "not test_bad_input or linear or deep or hostile"
