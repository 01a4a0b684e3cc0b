"""Model provisioning: locate bundled weights, assemble/convert them once into a cache."""
