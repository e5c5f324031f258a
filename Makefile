.PHONY: demo test lint bench docs
demo:
	investigate --metric revenue --window 7d
test:
	pytest
lint:
	ruff check investigator sandbox tests benchmarks docs/examples && ruff format --check investigator sandbox && mypy
bench:
	python benchmarks/scenarios.py
	python benchmarks/rca_public.py --data ../shared/rca-benchmarks
	python benchmarks/localize_speed.py
	python benchmarks/speed.py
docs:
	mkdocs build --strict -d "$$(mktemp -d)"
	python docs/examples/generate.py --check
