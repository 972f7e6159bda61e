"""The synthetic data engine and training glue. Never imported by the runtime."""
