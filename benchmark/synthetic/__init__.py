"""Synthetic data in UXBench's schema and uxmon's event schema, with our own content.

UXBench's data and prompts never enter this repository (licence: no redistribution, no
derivatives); this package writes look-alike records from hand-written topic banks so
that loaders, metrics, the UX-Judge classifier and the stream can be built and tested.
Run `python -m benchmark.synthetic --help`.
"""

from benchmark.synthetic.corpus import Corpus, Layout, build, write

__all__ = ["Corpus", "Layout", "build", "write"]
