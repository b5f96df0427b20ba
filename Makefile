# One command for the benchmark suite: builds the release binaries it times, then runs it.
#   make bench                      full scale, results in Benchmarks/results/latest.json
#   make bench SCALE=small          about a minute
#   make bench NAMES="read fold"    only some figures
SCALE ?= full
NAMES ?=

.PHONY: bench test
bench:
	scripts/bench-deps.sh || echo "bench-deps: Tantivy not installed; the search benchmark will skip it" >&2
	swift build -c release --product notes
	swift build -c release --product notes-bench
	swift run -c release --skip-build notes-bench $(NAMES) --scale $(SCALE) --json Benchmarks/results/latest.json
	python3 scripts/bench-table.py Benchmarks/results/latest.json

test:
	scripts/test.sh
