"""The dashboard's reads: providers.py (providers, classes, traits, aggregates, usage) and
consumers.py (consumers, projects), composing the apps' models and selectors."""
