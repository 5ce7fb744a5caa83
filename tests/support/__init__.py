"""What the tests share and import (`from support.corpus_format import …`): the corpus reader,
the render samples, the response templates, the export helpers, the template fetcher. No
tests here; tests/ is on the path of every test run (its conftest), and scripts that reuse
these put it there themselves (bench/agreement.py)."""
