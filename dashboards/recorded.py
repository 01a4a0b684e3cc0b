"""Series the shipped recording rules (deploy/prometheus/rules/recording.yml) record, for the
few panels that must show exactly what the alerts read. A test checks that each is recorded
there; every other query reads the worker's own metrics."""

from __future__ import annotations

#: The accuracy the Rogan–Gladen correction uses, per scorer: the benchmark's, or with
#: `uxmon rules render --correction live` the live figures where there are enough thumbs.
CORRECTION_SENSITIVITY = "uxmon:correction_sensitivity:task1"
CORRECTION_SPECIFICITY = "uxmon:correction_specificity:task1"
#: The last Task-1 validation's Bad-Acc and Good-Acc, per scorer.
BENCHMARK_SENSITIVITY = "uxmon:benchmark_sensitivity:task1"
BENCHMARK_SPECIFICITY = "uxmon:benchmark_specificity:task1"
#: Live Bad-Acc and Good-Acc against explicit thumbs over 7 days (>= 100 per class).
LIVE_SENSITIVITY = "uxmon:live_sensitivity:ratio7d"
LIVE_SPECIFICITY = "uxmon:live_specificity:ratio7d"
